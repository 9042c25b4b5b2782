"""Hand-crafted evaluation tables as plain data, plus slow reference evaluators.

Two published evaluations, for the compiled core to load into C arrays, and Python evaluators
that compute exactly what the compiled ``hce-simple`` and ``hce`` compute (the cross-check of
``tests/engines/test_eval_reference.py``, and later of NNUE):

1. **Simplified Evaluation Function** (Tomasz Michniewski), as used by paper 002 (Tjack,
   section 2.3, "Hand-crafted evaluation function"). What the paper says, exactly:

   - piece values in centipawns (its Table 1): pawn 100, knight 320, bishop 330, rook 500,
     queen 900, king 20000; "the piece value for a player is calculated as the sum of the
     piece values for the pieces he has in play";
   - one 8x8 positional matrix per piece type; it prints only the pawn's (its Table 2) and
     refers to chessprogramming.org's "Simplified Evaluation Function" page for the rest;
   - "The position values were then scaled to reflect the fact that material differences are
     more important than positional differences when less material is on board":
     ``v_pos_scaled = v_piece / V_piece_max * v_pos``, "so as the piece values is decreased,
     the relative size of the positional value is decreased";
   - a player's score is the sum of his piece values and scaled positional values; the
     heuristic is the difference between the side to move's score and the opponent's.

   What the paper leaves open, and what we chose (see :func:`sef_side_score`):
   ``v_piece`` is the player's own piece value without the king; ``V_piece_max`` is the
   starting value of one side WITHOUT the king, 8*100 + 2*320 + 2*330 + 2*500 + 900 = 4000
   (with the 20000-point king inside, the factor could never drop below 0.83 and the scaling
   would do nothing); the factor is not clamped (promotions can push it past 1), and the
   scaled sum is the integer ``positional * material / 4000`` truncated toward zero, as C
   divides. The kings' 20000 points cancel (each side has one) and are left out. The king's
   end-game table and the rule for using it come from the same chessprogramming.org page
   (the paper does not mention them); :data:`SEF_PST` holds the middle-game king.

2. **PeSTO** (Ronald Friederich's "Piece-Square Tables Only" evaluation, published on the
   chessprogramming wiki): middle-game and end-game piece values and tables, tapered by a
   game phase of 24 (knight and bishop 1, rook 2, queen 4), clamped at 24 after early
   promotions: ``(mg * phase + eg * (24 - phase)) / 24`` truncated toward zero. The compiled
   ``hce`` adds two terms of its own to both phases before tapering, a bishop pair
   (:data:`BISHOP_PAIR_MG`, :data:`BISHOP_PAIR_EG` for a side with two bishops or more), and
   after tapering a :data:`TEMPO` bonus for the side to move.

Format of every table: a tuple of 64 ints indexed by square, ``a1 = 0, b1 = 1, ..., h8 = 63``
(python-chess numbering), seen from White. For a black piece on ``square`` read
``table[square ^ 56]`` (mirror the rank). Dicts are keyed by python-chess piece type
(``chess.PAWN = 1 ... chess.KING = 6``). The PeSTO tables hold only the positional part; add
``PESTO_MG_VALUES``/``PESTO_EG_VALUES`` for the material.

>>> SEF_PST[chess.PAWN][chess.E2], SEF_PST[chess.PAWN][chess.E4], SEF_PST[chess.KNIGHT][chess.A1]
(-20, 20, -50)
>>> pesto_evaluation(chess.Board())  # the compiled hce's tempo bonus
10
"""
from __future__ import annotations

import chess

PieceType = int
Square = int
Table = tuple[int, ...]


def _from_rank8_rows(rows: str) -> Table:
    """A table typed as on paper (rank 8 first, files a..h) -> a tuple indexed a1 = 0."""
    values = [int(v) for v in rows.replace(",", " ").split()]
    if len(values) != 64:
        raise ValueError(f"a piece-square table needs 64 values, got {len(values)}: {rows!r}")
    return tuple(values[square ^ 56] for square in range(64))


# --------------------------------------------------------------------------------------------
# 1. Simplified Evaluation Function (paper 002, section 2.3)
# --------------------------------------------------------------------------------------------

SEF_PIECE_VALUES: dict[PieceType, int] = {
    chess.PAWN: 100, chess.KNIGHT: 320, chess.BISHOP: 330,
    chess.ROOK: 500, chess.QUEEN: 900, chess.KING: 20000,
}

#: ``V_piece_max`` of paper 002's scaling: one side's starting material without the king.
SEF_MATERIAL_MAX = 4000

SEF_PST: dict[PieceType, Table] = {
    chess.PAWN: _from_rank8_rows("""
          0,  0,  0,  0,  0,  0,  0,  0,
         50, 50, 50, 50, 50, 50, 50, 50,
         10, 10, 20, 30, 30, 20, 10, 10,
          5,  5, 10, 25, 25, 10,  5,  5,
          0,  0,  0, 20, 20,  0,  0,  0,
          5, -5,-10,  0,  0,-10, -5,  5,
          5, 10, 10,-20,-20, 10, 10,  5,
          0,  0,  0,  0,  0,  0,  0,  0"""),
    chess.KNIGHT: _from_rank8_rows("""
        -50,-40,-30,-30,-30,-30,-40,-50,
        -40,-20,  0,  0,  0,  0,-20,-40,
        -30,  0, 10, 15, 15, 10,  0,-30,
        -30,  5, 15, 20, 20, 15,  5,-30,
        -30,  0, 15, 20, 20, 15,  0,-30,
        -30,  5, 10, 15, 15, 10,  5,-30,
        -40,-20,  0,  5,  5,  0,-20,-40,
        -50,-40,-30,-30,-30,-30,-40,-50"""),
    chess.BISHOP: _from_rank8_rows("""
        -20,-10,-10,-10,-10,-10,-10,-20,
        -10,  0,  0,  0,  0,  0,  0,-10,
        -10,  0,  5, 10, 10,  5,  0,-10,
        -10,  5,  5, 10, 10,  5,  5,-10,
        -10,  0, 10, 10, 10, 10,  0,-10,
        -10, 10, 10, 10, 10, 10, 10,-10,
        -10,  5,  0,  0,  0,  0,  5,-10,
        -20,-10,-10,-10,-10,-10,-10,-20"""),
    chess.ROOK: _from_rank8_rows("""
          0,  0,  0,  0,  0,  0,  0,  0,
          5, 10, 10, 10, 10, 10, 10,  5,
         -5,  0,  0,  0,  0,  0,  0, -5,
         -5,  0,  0,  0,  0,  0,  0, -5,
         -5,  0,  0,  0,  0,  0,  0, -5,
         -5,  0,  0,  0,  0,  0,  0, -5,
         -5,  0,  0,  0,  0,  0,  0, -5,
          0,  0,  0,  5,  5,  0,  0,  0"""),
    chess.QUEEN: _from_rank8_rows("""
        -20,-10,-10, -5, -5,-10,-10,-20,
        -10,  0,  0,  0,  0,  0,  0,-10,
        -10,  0,  5,  5,  5,  5,  0,-10,
         -5,  0,  5,  5,  5,  5,  0, -5,
          0,  0,  5,  5,  5,  5,  0, -5,
        -10,  5,  5,  5,  5,  5,  0,-10,
        -10,  0,  5,  0,  0,  0,  0,-10,
        -20,-10,-10, -5, -5,-10,-10,-20"""),
    chess.KING: _from_rank8_rows("""
        -30,-40,-40,-50,-50,-40,-40,-30,
        -30,-40,-40,-50,-50,-40,-40,-30,
        -30,-40,-40,-50,-50,-40,-40,-30,
        -30,-40,-40,-50,-50,-40,-40,-30,
        -20,-30,-30,-40,-40,-30,-30,-20,
        -10,-20,-20,-20,-20,-20,-20,-10,
         20, 20,  0,  0,  0,  0, 20, 20,
         20, 30, 10,  0,  0, 10, 30, 20"""),
}

SEF_KING_ENDGAME: Table = _from_rank8_rows("""
    -50,-40,-30,-20,-20,-30,-40,-50,
    -30,-20,-10,  0,  0,-10,-20,-30,
    -30,-10, 20, 30, 30, 20,-10,-30,
    -30,-10, 30, 40, 40, 30,-10,-30,
    -30,-10, 30, 40, 40, 30,-10,-30,
    -30,-10, 20, 30, 30, 20,-10,-30,
    -30,-30,  0,  0,  0,  0,-30,-30,
    -50,-30,-30,-30,-30,-30,-30,-50""")


# --------------------------------------------------------------------------------------------
# 2. PeSTO (Ronald Friederich), tapered middle game / end game
# --------------------------------------------------------------------------------------------

PESTO_MG_VALUES: dict[PieceType, int] = {
    chess.PAWN: 82, chess.KNIGHT: 337, chess.BISHOP: 365,
    chess.ROOK: 477, chess.QUEEN: 1025, chess.KING: 0,
}
PESTO_EG_VALUES: dict[PieceType, int] = {
    chess.PAWN: 94, chess.KNIGHT: 281, chess.BISHOP: 297,
    chess.ROOK: 512, chess.QUEEN: 936, chess.KING: 0,
}
#: Game-phase weight of one piece; the start position sums to :data:`PESTO_PHASE_MAX`.
PESTO_PHASE_INC: dict[PieceType, int] = {
    chess.PAWN: 0, chess.KNIGHT: 1, chess.BISHOP: 1, chess.ROOK: 2, chess.QUEEN: 4, chess.KING: 0,
}
PESTO_PHASE_MAX = 24
#: The compiled ``hce``'s own terms on top of PeSTO (engines/alphabeta/evaluation.pyx).
BISHOP_PAIR_MG = 30
BISHOP_PAIR_EG = 50
TEMPO = 10

PESTO_MG_PST: dict[PieceType, Table] = {
    chess.PAWN: _from_rank8_rows("""
          0,   0,   0,   0,   0,   0,  0,   0,
         98, 134,  61,  95,  68, 126, 34, -11,
         -6,   7,  26,  31,  65,  56, 25, -20,
        -14,  13,   6,  21,  23,  12, 17, -23,
        -27,  -2,  -5,  12,  17,   6, 10, -25,
        -26,  -4,  -4, -10,   3,   3, 33, -12,
        -35,  -1, -20, -23, -15,  24, 38, -22,
          0,   0,   0,   0,   0,   0,  0,   0"""),
    chess.KNIGHT: _from_rank8_rows("""
        -167, -89, -34, -49,  61, -97, -15, -107,
         -73, -41,  72,  36,  23,  62,   7,  -17,
         -47,  60,  37,  65,  84, 129,  73,   44,
          -9,  17,  19,  53,  37,  69,  18,   22,
         -13,   4,  16,  13,  28,  19,  21,   -8,
         -23,  -9,  12,  10,  19,  17,  25,  -16,
         -29, -53, -12,  -3,  -1,  18, -14,  -19,
        -105, -21, -58, -33, -17, -28, -19,  -23"""),
    chess.BISHOP: _from_rank8_rows("""
        -29,   4, -82, -37, -25, -42,   7,  -8,
        -26,  16, -18, -13,  30,  59,  18, -47,
        -16,  37,  43,  40,  35,  50,  37,  -2,
         -4,   5,  19,  50,  37,  37,   7,  -2,
         -6,  13,  13,  26,  34,  12,  10,   4,
          0,  15,  15,  15,  14,  27,  18,  10,
          4,  15,  16,   0,   7,  21,  33,   1,
        -33,  -3, -14, -21, -13, -12, -39, -21"""),
    chess.ROOK: _from_rank8_rows("""
         32,  42,  32,  51, 63,  9,  31,  43,
         27,  32,  58,  62, 80, 67,  26,  44,
         -5,  19,  26,  36, 17, 45,  61,  16,
        -24, -11,   7,  26, 24, 35,  -8, -20,
        -36, -26, -12,  -1,  9, -7,   6, -23,
        -45, -25, -16, -17,  3,  0,  -5, -33,
        -44, -16, -20,  -9, -1, 11,  -6, -71,
        -19, -13,   1,  17, 16,  7, -37, -26"""),
    chess.QUEEN: _from_rank8_rows("""
        -28,   0,  29,  12,  59,  44,  43,  45,
        -24, -39,  -5,   1, -16,  57,  28,  54,
        -13, -17,   7,   8,  29,  56,  47,  57,
        -27, -27, -16, -16,  -1,  17,  -2,   1,
         -9, -26,  -9, -10,  -2,  -4,   3,  -3,
        -14,   2, -11,  -2,  -5,   2,  14,   5,
        -35,  -8,  11,   2,   8,  15,  -3,   1,
         -1, -18,  -9,  10, -15, -25, -31, -50"""),
    chess.KING: _from_rank8_rows("""
        -65,  23,  16, -15, -56, -34,   2,  13,
         29,  -1, -20,  -7,  -8,  -4, -38, -29,
         -9,  24,   2, -16, -20,   6,  22, -22,
        -17, -20, -12, -27, -30, -25, -14, -36,
        -49,  -1, -27, -39, -46, -44, -33, -51,
        -14, -14, -22, -46, -44, -30, -15, -27,
          1,   7,  -8, -64, -43, -16,   9,   8,
        -15,  36,  12, -54,   8, -28,  24,  14"""),
}

PESTO_EG_PST: dict[PieceType, Table] = {
    chess.PAWN: _from_rank8_rows("""
          0,   0,   0,   0,   0,   0,   0,   0,
        178, 173, 158, 134, 147, 132, 165, 187,
         94, 100,  85,  67,  56,  53,  82,  84,
         32,  24,  13,   5,  -2,   4,  17,  17,
         13,   9,  -3,  -7,  -7,  -8,   3,  -1,
          4,   7,  -6,   1,   0,  -5,  -1,  -8,
         13,   8,   8,  10,  13,   0,   2,  -7,
          0,   0,   0,   0,   0,   0,   0,   0"""),
    chess.KNIGHT: _from_rank8_rows("""
        -58, -38, -13, -28, -31, -27, -63, -99,
        -25,  -8, -25,  -2,  -9, -25, -24, -52,
        -24, -20,  10,   9,  -1,  -9, -19, -41,
        -17,   3,  22,  22,  22,  11,   8, -18,
        -18,  -6,  16,  25,  16,  17,   4, -18,
        -23,  -3,  -1,  15,  10,  -3, -20, -22,
        -42, -20, -10,  -5,  -2, -20, -23, -44,
        -29, -51, -23, -15, -22, -18, -50, -64"""),
    chess.BISHOP: _from_rank8_rows("""
        -14, -21, -11,  -8, -7,  -9, -17, -24,
         -8,  -4,   7, -12, -3, -13,  -4, -14,
          2,  -8,   0,  -1, -2,   6,   0,   4,
         -3,   9,  12,   9, 14,  10,   3,   2,
         -6,   3,  13,  19,  7,  10,  -3,  -9,
        -12,  -3,   8,  10, 13,   3,  -7, -15,
        -14, -18,  -7,  -1,  4,  -9, -15, -27,
        -23,  -9, -23,  -5, -9, -16,  -5, -17"""),
    chess.ROOK: _from_rank8_rows("""
         13, 10, 18, 15, 12,  12,   8,   5,
         11, 13, 13, 11, -3,   3,   8,   3,
          7,  7,  7,  5,  4,  -3,  -5,  -3,
          4,  3, 13,  1,  2,   1,  -1,   2,
          3,  5,  8,  4, -5,  -6,  -8, -11,
         -4,  0, -5, -1, -7, -12,  -8, -16,
         -6, -6,  0,  2, -9,  -9, -11,  -3,
         -9,  2,  3, -1, -5, -13,   4, -20"""),
    chess.QUEEN: _from_rank8_rows("""
         -9,  22,  22,  27,  27,  19,  10,  20,
        -17,  20,  32,  41,  58,  25,  30,   0,
        -20,   6,   9,  49,  47,  35,  19,   9,
          3,  22,  24,  45,  57,  40,  57,  36,
        -18,  28,  19,  47,  31,  34,  39,  23,
        -16, -27,  15,   6,   9,  17,  10,   5,
        -22, -23, -30, -16, -16, -23, -36, -32,
        -33, -28, -22, -43,  -5, -32, -20, -41"""),
    chess.KING: _from_rank8_rows("""
        -74, -35, -18, -18, -11,  15,   4, -17,
        -12,  17,  14,  17,  17,  38,  23,  11,
         10,  17,  23,  15,  20,  45,  44,  13,
         -8,  22,  24,  27,  26,  33,  26,   3,
        -18,  -4,  21,  24,  27,  23,   9, -11,
        -19,  -3,  11,  21,  23,  16,   7,  -9,
        -27, -11,   4,  13,  14,   4,  -5, -17,
        -53, -34, -21, -11, -28, -14, -24, -43"""),
}


# --------------------------------------------------------------------------------------------
# Reference evaluators (slow, python-chess): the compiled evaluation must agree with these.
# --------------------------------------------------------------------------------------------

def relative_square(color: chess.Color, square: Square) -> Square:
    """The index to read a White-view table at for a piece of ``color`` on ``square``.

    >>> relative_square(chess.BLACK, chess.E7) == chess.E2
    True
    """
    return square if color == chess.WHITE else square ^ 56


def sef_is_endgame(board: chess.Board) -> bool:
    """chessprogramming.org's rule for the king's end-game table: no queens, or every side
    that has a queen has at most one minor piece besides it (and no rook)."""
    for color in chess.COLORS:
        if not board.pieces(chess.QUEEN, color):
            continue
        minors = len(board.pieces(chess.KNIGHT, color)) + len(board.pieces(chess.BISHOP, color))
        if board.pieces(chess.ROOK, color) or minors > 1:
            return False
    return True


def c_div(numerator: int, denominator: int) -> int:
    """Integer division truncated toward zero, as C (and the compiled core) divides.

    >>> c_div(-7, 2), -7 // 2
    (-3, -4)
    """
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def sef_side_score(board: chess.Board, color: chess.Color) -> int:
    """One side's non-king material plus its positional sum scaled by ``material / 4000``
    (not clamped), truncated toward zero."""
    endgame = sef_is_endgame(board)
    material = positional = 0
    for square, piece in board.piece_map().items():
        if piece.color != color:
            continue
        table = SEF_KING_ENDGAME if piece.piece_type == chess.KING and endgame \
            else SEF_PST[piece.piece_type]
        positional += table[relative_square(color, square)]
        if piece.piece_type != chess.KING:
            material += SEF_PIECE_VALUES[piece.piece_type]
    return material + c_div(positional * material, SEF_MATERIAL_MAX)


def simplified_evaluation(board: chess.Board) -> int:
    """Paper 002's hand-crafted evaluation (the compiled ``hce-simple``), in centipawns from
    the side to move's view.

    >>> simplified_evaluation(chess.Board())
    0
    >>> # pawn 100, its e2 and the king's e1 (-20 - 30) scaled by 100/4000, bare black king 0
    >>> simplified_evaluation(chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"))
    99
    """
    us = board.turn
    return sef_side_score(board, us) - sef_side_score(board, not us)


def pesto_phase(board: chess.Board) -> int:
    """PeSTO's game phase: 24 with all pieces on, 0 with pawns and kings only (clamped)."""
    phase = sum(PESTO_PHASE_INC[piece.piece_type] for piece in board.piece_map().values())
    return min(phase, PESTO_PHASE_MAX)


def pesto_side(board: chess.Board, color: chess.Color) -> tuple[int, int]:
    """One side's middle-game and end-game sums: values, tables and the bishop pair."""
    mg = eg = 0
    for square in chess.SquareSet(board.occupied_co[color]):
        piece_type = board.piece_type_at(square)
        assert piece_type is not None  # the square is occupied
        index = relative_square(color, square)
        mg += PESTO_MG_VALUES[piece_type] + PESTO_MG_PST[piece_type][index]
        eg += PESTO_EG_VALUES[piece_type] + PESTO_EG_PST[piece_type][index]
    if len(board.pieces(chess.BISHOP, color)) >= 2:
        mg, eg = mg + BISHOP_PAIR_MG, eg + BISHOP_PAIR_EG
    return mg, eg


def pesto_evaluation(board: chess.Board) -> int:
    """The compiled ``hce``: PeSTO's tapered evaluation with a bishop pair, truncated toward
    zero, plus the tempo bonus; centipawns from the side to move's view.

    >>> pesto_evaluation(chess.Board()) == TEMPO
    True
    """
    (mg_us, eg_us), (mg_them, eg_them) = pesto_side(board, board.turn), \
        pesto_side(board, not board.turn)
    phase = pesto_phase(board)
    total = (mg_us - mg_them) * phase + (eg_us - eg_them) * (PESTO_PHASE_MAX - phase)
    return c_div(total, PESTO_PHASE_MAX) + TEMPO


#: Python reference of each compiled evaluation, by its ``SearchConfig.eval`` name.
REFERENCE_EVALUATIONS = {"hce": pesto_evaluation, "hce-simple": simplified_evaluation}
