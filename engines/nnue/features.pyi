"""Type stub for the compiled HalfKP extraction (engines/nnue/features.pyx), for mypy."""
from collections.abc import Sequence

import chess
import numpy as np

def halfkp_batch(fens: Sequence[str]) -> np.ndarray: ...
def halfkp_indices(board: chess.Board) -> tuple[list[int], list[int]]: ...
