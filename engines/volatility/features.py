"""Paper 003's 774 inputs of the volatility classifier, computed from FENs with numpy.

Layout (the paper fixes the content, not the order; this is chesslab's order):

- 0..767: 12 piece planes x 64 squares, one-hot, seen from the side to move: planes 0-5 are
  the mover's pawn, knight, bishop, rook, queen, king, planes 6-11 the opponent's; square
  ``a1 = 0 .. h8 = 63``. With Black to move the board is mirrored rank-wise (square ^ 56) and
  the colours swapped, the paper's "as if the board is rotated and the colours switched"
  (a rank mirror keeps king side and queen side);
- 768..771: castling rights, the mover's king side, queen side, the opponent's king side,
  queen side;
- 772: ``pv_changed``, 1 when the best move changed from depth 5 to depth 6;
- 773: ``delta_value``, V6 - V5 in centipawns from the side to move's view, clipped to
  +-``DELTA_CLIP`` (mate scores would otherwise dominate).

chesslab's extension (input set ``value``, 775 inputs): 774: ``value``, V6 itself, clipped the
same way. How much the next iteration moves depends on how big the score is (a won position's
score swings by more than a level one's). Held out by game, it took the ROC AUC from 0.692 to
0.777 (conv) on the bundled sample and from 0.640 to 0.701 (dense) on 150,000 self-play
positions.

>>> x = features(["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"], [12], [True])
>>> x.shape, int(x[0, :768].sum()), x[0, 768:].tolist()
((1, 774), 32, [1.0, 1.0, 1.0, 1.0, 1.0, 12.0])
>>> int(x[0, 0 * 64 + 8 + 3])  # Black to move: its d7 pawn is the mover's pawn on d2
1
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

INPUTS = 774
BOARD_INPUTS = 768
CASTLING_AT, PV_CHANGED_AT, DELTA_AT, VALUE_AT = 768, 772, 773, 774
#: The input sets: the paper's 774, and those plus V6 (``value``).
INPUT_SETS = {"paper": INPUTS, "value": INPUTS + 1}
DELTA_CLIP = 2000
PIECES = "PNBRQK"


class FeatureError(ValueError):
    """A FEN the features cannot be computed from; the message quotes it."""


def _plane_table() -> dict[tuple[str, bool], int]:
    """(FEN piece letter, white to move) -> plane index."""
    table = {}
    for white_to_move in (True, False):
        for index, letter in enumerate(PIECES):
            own, other = (letter, letter.lower()) if white_to_move else (letter.lower(), letter)
            table[own, white_to_move] = index
            table[other, white_to_move] = index + 6
    return table


PLANES = _plane_table()


def board_indices(fen: str) -> tuple[list[int], list[int]]:
    """The active one-hot indices (0..767) and castling bits (0..3) of ``fen``."""
    fields = fen.split()
    if len(fields) < 3 or fields[1] not in ("w", "b"):
        raise FeatureError(f"bad FEN {fen!r}: needs board, side to move and castling")
    white = fields[1] == "w"
    flip = 0 if white else 56
    active: list[int] = []
    rank = 7
    file = 0
    for char in fields[0]:
        if char == "/":
            rank, file = rank - 1, 0
        elif char.isdigit():
            file += int(char)
        else:
            plane = PLANES.get((char, white))
            if plane is None or not (0 <= rank < 8 and 0 <= file < 8):
                raise FeatureError(f"bad FEN {fen!r}: unexpected {char!r}")
            active.append(plane * 64 + ((rank * 8 + file) ^ flip))
            file += 1
    rights = fields[2]
    order = "KQkq" if white else "kqKQ"
    return active, [i for i, right in enumerate(order) if right in rights]


def centipawn_columns(width: int) -> list[int]:
    """The columns in centipawns among ``width`` inputs (delta_value, and value when the net
    reads it): the nets scale them to pawns.

    >>> centipawn_columns(774), centipawn_columns(775)
    ([773], [773, 774])
    """
    return [DELTA_AT, VALUE_AT] if width > VALUE_AT else [DELTA_AT]


def features(fens: Sequence[str], delta_values: Sequence[float],
             pv_changed: Sequence[bool],
             values: Sequence[float] | None = None) -> np.ndarray:
    """The (n, 774) float32 inputs of ``n`` positions; (n, 775) with ``values`` (V6, the
    ``value`` input set)."""
    if not len(fens) == len(delta_values) == len(pv_changed):
        raise FeatureError(f"{len(fens)} FENs, {len(delta_values)} deltas and "
                           f"{len(pv_changed)} pv flags: one of each per position")
    if values is not None and len(values) != len(fens):
        raise FeatureError(f"{len(fens)} FENs and {len(values)} values: one of each per "
                           "position")
    out = np.zeros((len(fens), INPUTS if values is None else INPUTS + 1), dtype=np.float32)
    rows: list[int] = []
    columns: list[int] = []
    for row, fen in enumerate(fens):
        active, castling = board_indices(fen)
        rows += [row] * (len(active) + len(castling))
        columns += active + [CASTLING_AT + c for c in castling]
    out[rows, columns] = 1.0
    out[:, PV_CHANGED_AT] = np.asarray(pv_changed, dtype=np.float32)
    out[:, DELTA_AT] = np.clip(np.asarray(delta_values, dtype=np.float32), -DELTA_CLIP,
                               DELTA_CLIP)
    if values is not None:
        out[:, VALUE_AT] = np.clip(np.asarray(values, dtype=np.float32), -DELTA_CLIP,
                                   DELTA_CLIP)
    return out
