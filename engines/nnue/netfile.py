"""The ``chesslab NNUE v1`` file: a numpy ``.npz`` of quantised arrays plus a JSON ``meta``.

Sizes 41024 -> 256x2 -> 32 -> 32 -> 1 (Stockfish 12's HalfKP net). Float weights W are stored
as round(W * 127) in the feature transformer, round(W * 64) in the dense layers, and the dense
biases as round(b * 127 * 64); the output times 600 / (127 * 64) is centipawns for the side to
move. :func:`load_arrays` checks everything an engine relies on before it touches the arrays.

The perspective net (``features`` ``psq768``, issue 38) is 768 -> N x2 -> 1: its feature
transformer W (768, N) is stored as round(W * 255) (int16), the output weights as
round(w * 64) (int16 within +-127), the output bias as round(b * 255 * 64) (int32). With
``activation`` ``crelu`` the output is sum(clip(acc, 0, 255) * w) + b; with ``screlu``
floor(sum(clip(acc, 0, 255)^2 * w) / 255) + b; centipawns floor(out * 600 / (255 * 64)).
:func:`load_network_file` reads either kind.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

META = {"format": "chesslab-nnue", "version": 1, "features": "halfkp",
        "sizes": [41024, 256, 32, 32, 1], "ft_scale": 127, "weight_scale": 64,
        "output_cp": 600}

#: Array name -> (dtype, shape) of a v1 file.
ARRAYS: dict[str, tuple[np.dtype, tuple[int, ...]]] = {
    "ft_weight": (np.dtype(np.int16), (41024, 256)),
    "ft_bias": (np.dtype(np.int16), (256,)),
    "l1_weight": (np.dtype(np.int8), (32, 512)),
    "l1_bias": (np.dtype(np.int32), (32,)),
    "l2_weight": (np.dtype(np.int8), (32, 32)),
    "l2_bias": (np.dtype(np.int32), (32,)),
    "out_weight": (np.dtype(np.int16), (1, 32)),
    "out_bias": (np.dtype(np.int32), (1,)),
}

NetArrays = dict[str, np.ndarray]

PSQ_FEATURES = 768
PSQ_SCALE = 255              # the feature transformer's (and the activations') scale, QA
PSQ_ACTIVATIONS = ("crelu", "screlu")
PSQ_MAX_ACTIVE = 32
PSQ_META = {"format": "chesslab-nnue", "version": 1, "features": "psq768", "ft_scale": PSQ_SCALE,
            "weight_scale": 64, "output_cp": 600}


def psq_meta(hidden: int, activation: str) -> dict[str, object]:
    """The ``meta`` of a 768 -> hidden x2 -> 1 net."""
    return {**PSQ_META, "sizes": [PSQ_FEATURES, hidden, 1], "activation": activation}


def psq_arrays_spec(hidden: int) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    return {"ft_weight": (np.dtype(np.int16), (PSQ_FEATURES, hidden)),
            "ft_bias": (np.dtype(np.int16), (hidden,)),
            "out_weight": (np.dtype(np.int16), (1, 2 * hidden)),
            "out_bias": (np.dtype(np.int32), (1,))}


def psq_overflow(arrays: NetArrays) -> int:
    """The largest accumulator any 32 active features could reach (int16 must hold it)."""
    weights = np.sort(np.abs(arrays["ft_weight"].astype(np.int64)), axis=0)[-PSQ_MAX_ACTIVE:]
    return int((np.abs(arrays["ft_bias"].astype(np.int64)) + weights.sum(axis=0)).max())


class NnueFileError(ValueError):
    """A network file that is not a valid ``chesslab NNUE v1`` file; names file and field."""


def check_meta(path: Path, meta: np.ndarray) -> None:
    """The ``meta`` array must be a 0-d string holding the v1 JSON (extra keys allowed)."""
    fields = read_meta(path, meta)
    for key, expected in META.items():
        if fields.get(key) != expected:
            raise NnueFileError(f"{path}: meta field {key!r} must be {expected!r}, "
                                f"got {fields.get(key)!r}")


def check_array(path: Path, name: str, array: np.ndarray) -> None:
    dtype, shape = ARRAYS[name]
    if array.dtype != dtype:
        raise NnueFileError(f"{path}: field {name!r} must be {dtype}, got {array.dtype}")
    if array.shape != shape:
        raise NnueFileError(f"{path}: field {name!r} must have shape {shape}, got {array.shape}")


def load_arrays(path: str | Path) -> NetArrays:
    """The checked arrays of a v1 network file; NnueFileError names the file and bad field."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise NnueFileError(f"{path}: not a readable .npz network file ({exc})") from None
    for name in ("meta", *ARRAYS):
        if name not in arrays:
            raise NnueFileError(f"{path}: field {name!r} is missing")
    check_meta(path, arrays.pop("meta"))
    for name in ARRAYS:
        check_array(path, name, arrays[name])
    return {name: arrays[name] for name in ARRAYS}


def save_arrays(path: str | Path, arrays: NetArrays) -> None:
    """Write a v1 file (arrays as :data:`ARRAYS` describes) with its ``meta``."""
    np.savez(path, meta=np.array(json.dumps(META)), **arrays)  # type: ignore[arg-type]


def random_arrays(seed: int) -> NetArrays:
    """A random quantised network for tests and benchmarks, scaled so that every layer's
    clipped ReLU sees values below 0, inside 0..127 and above 127."""
    rng = np.random.default_rng(seed)

    def ints(name: str, low: int, high: int) -> np.ndarray:
        dtype, shape = ARRAYS[name]
        return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)

    return {"ft_weight": ints("ft_weight", -40, 40), "ft_bias": ints("ft_bias", 0, 100),
            "l1_weight": ints("l1_weight", -6, 6), "l1_bias": ints("l1_bias", 0, 64 * 80),
            "l2_weight": ints("l2_weight", -30, 30), "l2_bias": ints("l2_bias", 0, 64 * 80),
            "out_weight": ints("out_weight", -20, 20), "out_bias": ints("out_bias", -800, 800)}


def read_meta(path: Path, meta: np.ndarray) -> dict[str, object]:
    """The ``meta`` array as its JSON object: a 0-d string, else one line naming the field."""
    if meta.shape != () or meta.dtype.kind != "U":
        raise NnueFileError(f"{path}: field 'meta' must be a 0-d string, got {meta.dtype} "
                            f"{meta.shape}")
    try:
        fields = json.loads(str(meta))
    except json.JSONDecodeError as exc:
        raise NnueFileError(f"{path}: field 'meta' is not JSON: {exc}") from None
    if not isinstance(fields, dict):
        raise NnueFileError(f"{path}: field 'meta' must be a JSON object, got {fields!r}")
    return fields


def check_psq(path: Path, fields: dict[str, object], arrays: NetArrays) -> NetArrays:
    """The checked arrays of a psq768 file (meta, dtypes, shapes, value ranges)."""
    for key, expected in PSQ_META.items():
        if fields.get(key) != expected:
            raise NnueFileError(f"{path}: meta field {key!r} must be {expected!r}, "
                                f"got {fields.get(key)!r}")
    sizes = fields.get("sizes")
    if (not isinstance(sizes, list) or len(sizes) != 3 or sizes[0] != PSQ_FEATURES
            or sizes[2] != 1 or not isinstance(sizes[1], int) or not 16 <= sizes[1] <= 1024
            or sizes[1] % 16):
        raise NnueFileError(f"{path}: meta field 'sizes' must be [768, N, 1] with N a multiple "
                            f"of 16 in 16..1024, got {sizes!r}")
    if fields.get("activation") not in PSQ_ACTIVATIONS:
        raise NnueFileError(f"{path}: meta field 'activation' must be one of "
                            f"{', '.join(PSQ_ACTIVATIONS)}, got {fields.get('activation')!r}")
    for name, (dtype, shape) in psq_arrays_spec(sizes[1]).items():
        if name not in arrays:
            raise NnueFileError(f"{path}: field {name!r} is missing")
        if arrays[name].dtype != dtype or arrays[name].shape != shape:
            raise NnueFileError(f"{path}: field {name!r} must be {dtype} {shape}, got "
                                f"{arrays[name].dtype} {arrays[name].shape}")
    if np.abs(arrays["out_weight"].astype(np.int64)).max() > 127:
        raise NnueFileError(f"{path}: field 'out_weight' must lie within -127..127, got "
                            f"{np.abs(arrays['out_weight'].astype(np.int64)).max()}")
    if psq_overflow(arrays) > 32767:
        raise NnueFileError(f"{path}: field 'ft_weight' can take an accumulator to "
                            f"{psq_overflow(arrays)}, beyond int16")
    return {name: arrays[name] for name in psq_arrays_spec(sizes[1])}


def load_network_file(path: str | Path) -> tuple[dict[str, object], NetArrays]:
    """(meta, checked arrays) of a HalfKP or psq768 network file; NnueFileError names the
    file and the bad field."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise NnueFileError(f"{path}: not a readable .npz network file ({exc})") from None
    if "meta" not in arrays:
        raise NnueFileError(f"{path}: field 'meta' is missing")
    fields = read_meta(path, arrays["meta"])
    if fields.get("features") == "psq768":
        return fields, check_psq(path, fields, arrays)
    return fields, load_arrays(path)


def save_psq(path: str | Path, arrays: NetArrays, activation: str) -> None:
    """Write a psq768 file (the arrays of :func:`psq_arrays_spec`) with its ``meta``."""
    meta = psq_meta(arrays["ft_bias"].shape[0], activation)
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)  # type: ignore[arg-type]


def random_psq_arrays(seed: int, hidden: int = 64) -> NetArrays:
    """A random quantised perspective net whose accumulators fall below 0, inside 0..255 and
    above 255, for tests and benchmarks."""
    rng = np.random.default_rng(seed)
    return {"ft_weight": rng.integers(-60, 60, (PSQ_FEATURES, hidden), endpoint=True
                                      ).astype(np.int16),
            "ft_bias": rng.integers(0, 200, hidden, endpoint=True).astype(np.int16),
            "out_weight": rng.integers(-127, 127, (1, 2 * hidden), endpoint=True
                                       ).astype(np.int16),
            "out_bias": rng.integers(-20000, 20000, 1, endpoint=True).astype(np.int32)}
