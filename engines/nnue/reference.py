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


def quantised_layers(net: Mapping[str, np.ndarray], stm_idx: Sequence[int],
                     other_idx: Sequence[int]) -> list[np.ndarray]:
    """Each layer's value before its clipped ReLU (accumulators, h1, h2), then the output,
    in exact integers (int64), given both perspectives' active indices (0 is padding)."""
    accs = [net["ft_bias"].astype(np.int64)
            + net["ft_weight"][[i for i in idx if i]].astype(np.int64).sum(axis=0)
            for idx in (stm_idx, other_idx)]
    layers = [np.concatenate(accs)]
    for layer in ("l1", "l2"):
        q = np.clip(layers[-1], 0, FT_SCALE)
        weights = net[f"{layer}_weight"].astype(np.int64)
        layers.append((weights @ q + net[f"{layer}_bias"]) // WEIGHT_SCALE)
    q = np.clip(layers[-1], 0, FT_SCALE)
    layers.append(net["out_weight"].astype(np.int64) @ q + net["out_bias"].astype(np.int64))
    return layers


def evaluate_quantised(net: Mapping[str, np.ndarray], stm_idx: Sequence[int],
                       other_idx: Sequence[int]) -> int:
    """Centipawns for the side to move of a quantised network (arrays of a v1 ``.npz``):
    floor(out * 600 / (127 * 64))."""
    out = int(quantised_layers(net, stm_idx, other_idx)[-1][0])
    return out * OUTPUT_CP // (FT_SCALE * WEIGHT_SCALE)


# --- the perspective (psq768) net of issue 38 --------------------------------------------

PSQ_SCALE = 255


def psq_features(board: chess.Board, perspective: chess.Color) -> list[int]:
    """Sorted active 768-feature indices of one perspective, with python-chess: own pieces
    0..383, the opponent's 384..767, piece type (pawn..king) * 64, the square as White sees
    it, flipped top to bottom (``s ^ 56``) for Black.

    >>> psq_features(chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"), chess.BLACK)
    [324, 436, 764]
    """
    flip = 0 if perspective == chess.WHITE else 56
    return sorted((piece.color != perspective) * 384 + (piece.piece_type - 1) * 64
                  + (square ^ flip) for square, piece in board.piece_map().items())


def evaluate_psq_quantised(net: Mapping[str, np.ndarray], activation: str,
                           stm_idx: Sequence[int], other_idx: Sequence[int]) -> int:
    """Centipawns for the side to move of a quantised psq768 net, in exact integers:
    ``v = clip(acc, 0, 255)``; crelu ``out = v . w + b``, screlu ``floor(v^2 . w / 255) + b``;
    ``floor(out * 600 / (255 * 64))``."""
    n = net["ft_bias"].shape[0]
    weights = net["out_weight"].astype(np.int64)[0]
    total = 0
    for half, idx in enumerate((stm_idx, other_idx)):
        acc = net["ft_bias"].astype(np.int64) + net["ft_weight"][list(idx)].astype(np.int64).sum(
            axis=0)
        v = np.clip(acc, 0, PSQ_SCALE)
        total += int(((v * v if activation == "screlu" else v)
                      * weights[half * n:(half + 1) * n]).sum())
    if activation == "screlu":
        total //= PSQ_SCALE
    return (total + int(net["out_bias"][0])) * OUTPUT_CP // (PSQ_SCALE * WEIGHT_SCALE)
