"""Pure Python/numpy references of the NNUE contract, the yardsticks of the compiled code.

``halfkp_reference`` computes HalfKP features with python-chess (the baseline of the feature
benchmark); ``evaluate_quantised`` is the exact integer forward pass of a ``chesslab NNUE v1``
network, as the engine must compute it.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import chess
import numpy as np

HALFKP_FEATURES = 41024
FT_SCALE = 127
WEIGHT_SCALE = 64
OUTPUT_CP = 600


def orient(perspective: chess.Color, square: chess.Square) -> chess.Square:
    """Stockfish 12 HalfKP: White sees squares as they are, Black rotated by 180 degrees."""
    return square if perspective == chess.WHITE else square ^ 63


def perspective_features(board: chess.Board, perspective: chess.Color) -> list[int]:
    """Sorted active HalfKP indices of one perspective."""
    king = board.king(perspective)
    if king is None:
        raise ValueError(f"no {chess.COLOR_NAMES[perspective]} king: {board.fen()!r}")
    base = orient(perspective, king) * 641 + 1
    return sorted(
        base + (2 * (piece.piece_type - 1) + (piece.color != perspective)) * 64
        + orient(perspective, square)
        for square, piece in board.piece_map().items() if piece.piece_type != chess.KING)


def halfkp_reference(board: chess.Board) -> tuple[list[int], list[int]]:
    """(side to move's, other side's) sorted active HalfKP indices, computed with python-chess.

    >>> halfkp_reference(chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"))
    ([2577], [2039])
    """
    return (perspective_features(board, board.turn),
            perspective_features(board, not board.turn))


def evaluate_quantised(net: Mapping[str, np.ndarray], stm_idx: Sequence[int],
                       other_idx: Sequence[int]) -> int:
    """Centipawns for the side to move of a quantised network (arrays of a v1 ``.npz``),
    given both perspectives' active indices (zeros, the padding, are ignored)."""
    weights = net["ft_weight"].astype(np.int64)
    bias = net["ft_bias"].astype(np.int64)
    accs = [bias + weights[[i for i in idx if i]].sum(axis=0) for idx in (stm_idx, other_idx)]
    q = np.clip(np.concatenate(accs), 0, FT_SCALE)
    for layer in ("l1", "l2"):
        h = (net[f"{layer}_weight"].astype(np.int64) @ q + net[f"{layer}_bias"]) // WEIGHT_SCALE
        q = np.clip(h, 0, FT_SCALE)
    out = int((net["out_weight"].astype(np.int64) @ q + net["out_bias"].astype(np.int64))[0])
    return out * OUTPUT_CP // (FT_SCALE * WEIGHT_SCALE)
