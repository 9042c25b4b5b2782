"""Type stub for the compiled quantised network (engines/nnue/network.pyx), for mypy."""
import os
from typing import Any

import chess
import numpy as np

def use_simd(avx2: bool, vnni: bool = ...) -> int: ...

class Network:
    king_independent: bool
    def __init__(self, arrays: dict[str, Any], name: str = ...) -> None: ...
    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Network: ...
    def evaluate(self, board: chess.Board) -> int: ...
    def accumulators(self, board: chess.Board) -> np.ndarray: ...

class PerspectiveNetwork(Network):
    hidden: int
    squared: bool
    def __init__(self, arrays: dict[str, Any], activation: str = ...,
                 name: str = ...) -> None: ...

class AccumulatorStack:
    def __init__(self, net: Network) -> None: ...
