"""The exported volatility net (``volatility.npz``) evaluated with numpy: what the engines
load. Two architectures, paper 003 chapter 3:

- ``dense``: 774 -> Dense(w, ReLU) -> Dense(w, ReLU) -> 1 (sigmoid); the paper's w = 50;
- ``conv``: the 12x8x8 planes through 2 x [3x3 conv(w) + batch norm (folded into the conv at
  export) + ReLU], flattened to Dense(w); the 6 side inputs through 2 x Dense(w); both
  concatenated -> Dense(w, ReLU) -> 1 (sigmoid); the paper's w = 100.

The network multiplies ``delta_value`` (and ``value``, in the 775-input set that adds V6) by
``meta["delta_scale"]`` (centipawns to pawns) itself, so the inputs stay the paper's raw ones;
``meta["inputs"]`` says which set the net reads. A net is loaded from its file: engines take
files, never model names (``chesslab`` resolves ``volatility@N``, ``@latest`` and ``@best``
through the registry to the version's file, :mod:`pipelines.models.deploy`).
"""
from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import numpy as np

from engines.volatility.features import BOARD_INPUTS, INPUTS, VALUE_AT, centipawn_columns, features

ARTIFACT = "volatility.npz"
FORMAT = "chesslab-volatility"
ARCHS = ("dense", "conv")


class VolatilityModelError(ValueError):
    """A model that cannot be found or loaded; the message names the model or file."""


def artifact_path(path: str | os.PathLike[str], model: str | None = None) -> Path:
    """The net's file, when it exists; VolatilityModelError naming it (and the model it
    deploys, ``model``) otherwise."""
    if not Path(path).is_file():
        named = f"volatility model {model!r}: " if model else ""
        raise VolatilityModelError(f"{named}no volatility net file {str(path)!r}")
    return Path(path)


@dataclass(frozen=True)
class VolatilityModel:
    """A loaded net: ``predict(x)`` is the probability that each position is stable."""

    meta: dict[str, object]
    arrays: dict[str, np.ndarray]

    @property
    def arch(self) -> str:
        return str(self.meta["arch"])

    @property
    def threshold(self) -> float:
        """The threshold chosen at training (Table 4.1's row at the target FPR)."""
        return float(self.meta["threshold"])  # type: ignore[arg-type]

    @property
    def inputs(self) -> int:
        """774 (the paper's inputs) or 775 (and V6)."""
        return int(self.meta.get("inputs", INPUTS))  # type: ignore[call-overload]

    def predict(self, x: np.ndarray) -> np.ndarray:
        """(n, 774 or 775) inputs -> (n,) probabilities of "stable"."""
        x = np.asarray(x, dtype=np.float64).copy()
        if x.ndim != 2 or x.shape[1] != self.inputs:
            raise VolatilityModelError(f"volatility net reads {self.inputs} inputs, got an "
                                       f"array of shape {x.shape}")
        scale = float(self.meta["delta_scale"])  # type: ignore[arg-type]
        x[:, centipawn_columns(self.inputs)] *= scale
        logits = _dense_logits(self.arrays, x) if self.arch == "dense" \
            else _conv_logits(self.arrays, x)
        return 1.0 / (1.0 + np.exp(-logits))

    def stability(self, board: chess.Board, delta_value: int, pv_changed: bool,
                  value: int) -> float:
        """The :data:`engines.timeman.StabilityPredictor` of this net."""
        return float(self.predict_positions([board.fen()], [delta_value], [pv_changed],
                                            [value])[0])

    def predict_positions(self, fens: Sequence[str], delta_values: Sequence[float],
                          pv_changed: Sequence[bool],
                          values: Sequence[float] | None = None) -> np.ndarray:
        """Probabilities from the raw inputs; ``values`` (V6) is read only by a net of the
        ``value`` input set, which needs it."""
        if self.inputs > VALUE_AT and values is None:
            raise VolatilityModelError("this volatility net reads V6 too: pass values")
        return self.predict(features(fens, delta_values, pv_changed,
                                     values if self.inputs > VALUE_AT else None))


def load_model(path: str | os.PathLike[str], model: str | None = None) -> VolatilityModel:
    """The net of the file ``path`` (the version ``model``, when it deploys one), checked by
    one prediction (a damaged file fails here, naming the model, not in the middle of a
    search)."""
    model = model or str(path)
    path = artifact_path(path, model)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
        meta = json.loads(str(arrays.pop("meta")))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise VolatilityModelError(f"volatility model {model!r} ({path}): cannot load: "
                                   f"{exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT \
            or meta.get("arch") not in ARCHS:
        raise VolatilityModelError(f"volatility model {model!r} ({path}): not a "
                                   f"{FORMAT} file (meta {meta!r})")
    loaded = VolatilityModel(meta, arrays)
    try:
        probe = loaded.predict(np.zeros((1, loaded.inputs)))
        loaded.threshold  # noqa: B018 (read: a net without one cannot stop a search)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise VolatilityModelError(f"volatility model {model!r} ({path}): damaged: "
                                   f"{type(exc).__name__}: {exc}") from None
    if probe.shape != (1,) or not np.isfinite(probe).all():
        raise VolatilityModelError(f"volatility model {model!r} ({path}): damaged: its "
                                   f"prediction is {probe!r}")
    return loaded


def _affine(arrays: dict[str, np.ndarray], name: str, x: np.ndarray) -> np.ndarray:
    return x @ arrays[f"{name}.weight"].T + arrays[f"{name}.bias"]


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _dense_logits(arrays: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    hidden = _relu(_affine(arrays, "hidden1", _relu(_affine(arrays, "hidden0", x))))
    return _affine(arrays, "out", hidden)[:, 0]


def _conv(arrays: dict[str, np.ndarray], name: str, planes: np.ndarray) -> np.ndarray:
    """3x3 convolution, padding 1, (n, c, 8, 8) -> (n, f, 8, 8)."""
    padded = np.pad(planes, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    out = np.einsum("ncijkl,fckl->nfij", windows, arrays[f"{name}.weight"], optimize=True)
    return out + arrays[f"{name}.bias"][None, :, None, None]


def _conv_logits(arrays: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    planes = x[:, :BOARD_INPUTS].reshape(len(x), 12, 8, 8)
    board = _relu(_conv(arrays, "conv1", _relu(_conv(arrays, "conv0", planes))))
    board = _relu(_affine(arrays, "board_fc", board.reshape(len(x), -1)))
    side = _relu(_affine(arrays, "side1", _relu(_affine(arrays, "side0", x[:, BOARD_INPUTS:]))))
    joined = _relu(_affine(arrays, "head", np.concatenate([board, side], axis=1)))
    return _affine(arrays, "out", joined)[:, 0]
