"""AlphaZero's input planes and 8x8x73 move encoding, from the side to move's view.

Input: ``PLANES`` = 21 planes of 8x8 (SigmaZero's 21, paper 002; history H = 1), the board
flipped vertically when Black is to move so the mover always plays "up" (AlphaZero's
convention; ChessBreaker kept a fixed orientation and negated Black's logits, which forces
both colours through one head: the flip is the standard fix). Row = rank (0 = the mover's
first rank), column = file.

==========  ========================================================================
planes      meaning
==========  ========================================================================
0-5         the mover's pawns, knights, bishops, rooks, queens, king
6-11        the opponent's pieces, same order
12, 13      the position has occurred once / twice before (repetitions)
14          colour: all ones when White is to move
15          total move count / 200 (all squares the same value)
16, 17      the mover may castle king side / queen side
18, 19      the opponent may castle king side / queen side
20          no-progress (halfmove clock) count / 100
==========  ========================================================================

Policy: ``MOVES`` = 4672 = 64 from-squares x 73 move planes, index ``from * 73 + plane``
(from-square in the mover's orientation). Planes 0-55: queen-like moves, direction
(N, NE, E, SE, S, SW, W, NW) x 7 + distance - 1 (queen promotions, king moves and castling,
which python-chess writes as the king's two-square move, are queen-like moves); 56-63: the 8
knight moves; 64-72: under-promotions, (capture towards the a-file, push, capture towards the
h-file) x 3 + (knight, bishop, rook).

>>> import chess
>>> move_index(chess.Move.from_uci("e2e4"), chess.WHITE)
877
>>> move_index(chess.Move.from_uci("e7e5"), chess.BLACK)   # the same move seen by Black
877
>>> index_move(877, chess.Board())
Move.from_uci('e2e4')
"""
from __future__ import annotations

from collections.abc import Sequence

import chess
import numpy as np

PLANES = 21
MOVE_PLANES = 73
MOVES = 64 * MOVE_PLANES
#: Queen-like directions (file step, rank step), in plane order.
DIRECTIONS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
KNIGHT_STEPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
UNDER_PROMOTIONS = (chess.KNIGHT, chess.BISHOP, chess.ROOK)
PIECE_TYPES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)


class EncodingError(ValueError):
    """A move or index with no place in the 8x8x73 encoding: quotes it."""


def _plane_table() -> np.ndarray:
    """PLANE[from, to]: the move plane of a (non under-promotion) move, -1 when none."""
    table = np.full((64, 64), -1, dtype=np.int16)
    for square in range(64):
        file, rank = chess.square_file(square), chess.square_rank(square)
        for d, (df, dr) in enumerate(DIRECTIONS):
            for distance in range(1, 8):
                f, r = file + df * distance, rank + dr * distance
                if 0 <= f < 8 and 0 <= r < 8:
                    table[square, chess.square(f, r)] = d * 7 + distance - 1
        for k, (df, dr) in enumerate(KNIGHT_STEPS):
            f, r = file + df, rank + dr
            if 0 <= f < 8 and 0 <= r < 8:
                table[square, chess.square(f, r)] = 56 + k
    return table


PLANE = _plane_table()
#: TARGET[from, plane]: the to-square of a plane's move (-1 off the board); under-promotions
#: give the square of the pawn's step.
TARGET = np.full((64, MOVE_PLANES), -1, dtype=np.int16)
for _from, _to in zip(*np.nonzero(PLANE >= 0), strict=True):
    TARGET[_from, PLANE[_from, _to]] = _to
for _from in range(64):
    for _d, _df in enumerate((-1, 0, 1)):
        _f, _r = chess.square_file(_from) + _df, chess.square_rank(_from) + 1
        if 0 <= _f < 8 and _r < 8:
            TARGET[_from, 64 + _d * 3:64 + _d * 3 + 3] = chess.square(_f, _r)


def oriented(square: chess.Square, turn: chess.Color) -> chess.Square:
    """The square as the mover sees it (ranks mirrored for Black)."""
    return square if turn == chess.WHITE else square ^ 56


def move_index(move: chess.Move, turn: chess.Color) -> int:
    """The policy index of ``move`` played by ``turn``; EncodingError when it has none."""
    source, target = oriented(move.from_square, turn), oriented(move.to_square, turn)
    if move.promotion in UNDER_PROMOTIONS:
        step = chess.square_file(target) - chess.square_file(source)
        if abs(step) > 1 or chess.square_rank(target) != 7:
            raise EncodingError(f"not a promotion move: {move.uci()!r}")
        return source * MOVE_PLANES + 64 + (step + 1) * 3 + UNDER_PROMOTIONS.index(move.promotion)
    plane = int(PLANE[source, target])
    if plane < 0:
        raise EncodingError(f"no move plane for {move.uci()!r}")
    return source * MOVE_PLANES + plane


def legal_indices(board: chess.Board,
                  moves: Sequence[chess.Move] | None = None) -> tuple[list[chess.Move], np.ndarray]:
    """The legal moves (or ``moves``) and their policy indices, in the same order."""
    moves = list(board.legal_moves) if moves is None else list(moves)
    return moves, np.fromiter((move_index(m, board.turn) for m in moves), dtype=np.int64,
                              count=len(moves))


def index_move(index: int, board: chess.Board) -> chess.Move:
    """The move of policy index ``index`` in ``board`` (a pawn reaching the last rank by a
    queen-like plane promotes to a queen). The move need not be legal."""
    if not 0 <= index < MOVES:
        raise EncodingError(f"policy index out of range: {index!r}")
    source, plane = divmod(index, MOVE_PLANES)
    target = int(TARGET[source, plane])
    if target < 0:
        raise EncodingError(f"policy index {index} leaves the board")
    turn = board.turn
    move = chess.Move(oriented(source, turn), oriented(target, turn))
    if plane >= 64:
        return chess.Move(move.from_square, move.to_square, UNDER_PROMOTIONS[(plane - 64) % 3])
    if board.piece_type_at(move.from_square) == chess.PAWN and chess.square_rank(target) == 7:
        return chess.Move(move.from_square, move.to_square, chess.QUEEN)
    return move


def _bits(masks: Sequence[int]) -> np.ndarray:
    """64-bit masks -> (n, 8, 8) float32 of their bits (row = rank, column = file)."""
    raw = np.array(masks, dtype=np.uint64).view(np.uint8)
    return np.unpackbits(raw, bitorder="little").reshape(len(masks), 8, 8).astype(np.float32)


def planes(board: chess.Board) -> np.ndarray:
    """The (21, 8, 8) float32 input of ``board`` (see the module docstring)."""
    us, them = board.turn, not board.turn
    masks = [board.pieces_mask(p, c) for c in (us, them) for p in PIECE_TYPES]
    if us == chess.BLACK:
        masks = [chess.flip_vertical(m) for m in masks]
    out = np.zeros((PLANES, 8, 8), dtype=np.float32)
    out[:12] = _bits(masks)
    out[12] = float(board.is_repetition(2))
    out[13] = float(board.is_repetition(3))
    out[14] = float(us == chess.WHITE)
    out[15] = board.fullmove_number / 200.0
    out[16] = float(board.has_kingside_castling_rights(us))
    out[17] = float(board.has_queenside_castling_rights(us))
    out[18] = float(board.has_kingside_castling_rights(them))
    out[19] = float(board.has_queenside_castling_rights(them))
    out[20] = board.halfmove_clock / 100.0
    return out


def planes_of_fens(fens: Sequence[str]) -> np.ndarray:
    """(n, 21, 8, 8) planes of FENs (no history: repetition planes are zero)."""
    out = np.zeros((len(fens), PLANES, 8, 8), dtype=np.float32)
    for i, fen in enumerate(fens):
        out[i] = planes(chess.Board(fen))
    return out


__all__ = ["MOVES", "PLANES", "EncodingError", "index_move", "legal_indices", "move_index",
           "planes", "planes_of_fens"]
