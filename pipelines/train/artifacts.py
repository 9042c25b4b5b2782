"""Writing and reading a trained model's artifact arrays (``.npz``), for every kind: written
under a temporary name and renamed, so an artifact on disk is whole or absent."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def save_npz(arrays: dict[str, np.ndarray], path: Path) -> Path:
    """Write the arrays under a temporary name and rename: never a half-written net."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as handle:
        np.savez(handle, **arrays)  # type: ignore[arg-type]
    tmp.replace(path)
    return path


def load_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}
