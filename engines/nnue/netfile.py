"""The ``chesslab NNUE v1`` file: a numpy ``.npz`` of quantised arrays plus a JSON ``meta``.

Sizes 41024 -> 256x2 -> 32 -> 32 -> 1 (Stockfish 12's HalfKP net). Float weights W are stored
as round(W * 127) in the feature transformer, round(W * 64) in the dense layers, and the dense
biases as round(b * 127 * 64); the output times 600 / (127 * 64) is centipawns for the side to
move. :func:`load_arrays` checks everything an engine relies on before it touches the arrays.
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


class NnueFileError(ValueError):
    """A network file that is not a valid ``chesslab NNUE v1`` file; names file and field."""


def check_meta(path: Path, meta: np.ndarray) -> None:
    """The ``meta`` array must be a 0-d string holding the v1 JSON (extra keys allowed)."""
    if meta.shape != () or meta.dtype.kind != "U":
        raise NnueFileError(f"{path}: field 'meta' must be a 0-d string, got {meta.dtype} "
                            f"{meta.shape}")
    try:
        fields = json.loads(str(meta))
    except json.JSONDecodeError as exc:
        raise NnueFileError(f"{path}: field 'meta' is not JSON: {exc}") from None
    if not isinstance(fields, dict):
        raise NnueFileError(f"{path}: field 'meta' must be a JSON object, got {fields!r}")
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
