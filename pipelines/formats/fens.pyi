"""Type stub for the compiled pipelines/formats/fens.pyx."""
import numpy as np
import pyarrow as pa

PAWNS_ON_BACKRANK: int
OPPOSITE_CHECK: int
NO_FEN: int
REASONS: tuple[str, ...]

def fen_keys(
    fens: pa.Array | pa.ChunkedArray,
) -> tuple[np.ndarray, pa.StringArray, np.ndarray, np.ndarray]: ...
