"""Type stub for the compiled pipelines/formats/fens.pyx."""
import numpy as np
import pyarrow as pa

PAWNS_ON_BACKRANK: int
OPPOSITE_CHECK: int
NO_FEN: int
UNREAD: int
REASONS: tuple[str, ...]

def fen_keys(
    fens: pa.Array | pa.ChunkedArray,
) -> tuple[np.ndarray, pa.StringArray, np.ndarray, np.ndarray]: ...
def board_flags(
    fens: pa.Array | pa.ChunkedArray,
    moves: pa.Array | pa.ChunkedArray | None = None,
) -> tuple[np.ndarray, np.ndarray]: ...
