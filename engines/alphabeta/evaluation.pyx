# cython: language_level=3
"""Static evaluations in C, in centipawns for the side to move.

``hce-simple`` is the Simplified Evaluation Function (Tomasz Michniewski) as the Tjack report
(paper 002, section 2.3) uses it: piece values P 100, N 320, B 330, R 500, Q 900 plus
piece-square values, where each side's piece-square sum is scaled by its own material,
v_pos_scaled = v_piece / V_piece_max * v_pos. We read v_piece as the side's non-king material
and V_piece_max as the full starting set (8 P, 2 N, 2 B, 2 R, Q = 4000), so positional terms
fade as material comes off. The king uses the middle-game table until the endgame of the
CPW description (no queens, or each side with a queen has at most one minor piece besides).

``hce`` is PeSTO (Ronald Friederich's published tables): middle-game and endgame piece values
and piece-square tables blended by a 24-point game phase, plus a bishop pair and a tempo bonus.

Tables are written from White's side with rank 8 first, as published; white pieces read
them at ``square ^ 56``, black pieces at ``square``.
"""
from engines.core.position cimport (BISHOP, BLACK, KING, KNIGHT, PAWN, QUEEN, ROOK, WHITE,
                                    Position, lsb, popcount, u64)

SIMPLE_VALUE = [100, 320, 330, 500, 900, 0]
cdef enum:
    SIMPLE_MAX_MATERIAL = 8 * 100 + 2 * 320 + 2 * 330 + 2 * 500 + 900
    BISHOP_PAIR_MG = 30
    BISHOP_PAIR_EG = 50
    TEMPO = 10

SIMPLE_PST = [
    [0, 0, 0, 0, 0, 0, 0, 0,
     50, 50, 50, 50, 50, 50, 50, 50,
     10, 10, 20, 30, 30, 20, 10, 10,
     5, 5, 10, 25, 25, 10, 5, 5,
     0, 0, 0, 20, 20, 0, 0, 0,
     5, -5, -10, 0, 0, -10, -5, 5,
     5, 10, 10, -20, -20, 10, 10, 5,
     0, 0, 0, 0, 0, 0, 0, 0],
    [-50, -40, -30, -30, -30, -30, -40, -50,
     -40, -20, 0, 0, 0, 0, -20, -40,
     -30, 0, 10, 15, 15, 10, 0, -30,
     -30, 5, 15, 20, 20, 15, 5, -30,
     -30, 0, 15, 20, 20, 15, 0, -30,
     -30, 5, 10, 15, 15, 10, 5, -30,
     -40, -20, 0, 5, 5, 0, -20, -40,
     -50, -40, -30, -30, -30, -30, -40, -50],
    [-20, -10, -10, -10, -10, -10, -10, -20,
     -10, 0, 0, 0, 0, 0, 0, -10,
     -10, 0, 5, 10, 10, 5, 0, -10,
     -10, 5, 5, 10, 10, 5, 5, -10,
     -10, 0, 10, 10, 10, 10, 0, -10,
     -10, 10, 10, 10, 10, 10, 10, -10,
     -10, 5, 0, 0, 0, 0, 5, -10,
     -20, -10, -10, -10, -10, -10, -10, -20],
    [0, 0, 0, 0, 0, 0, 0, 0,
     5, 10, 10, 10, 10, 10, 10, 5,
     -5, 0, 0, 0, 0, 0, 0, -5,
     -5, 0, 0, 0, 0, 0, 0, -5,
     -5, 0, 0, 0, 0, 0, 0, -5,
     -5, 0, 0, 0, 0, 0, 0, -5,
     -5, 0, 0, 0, 0, 0, 0, -5,
     0, 0, 0, 5, 5, 0, 0, 0],
    [-20, -10, -10, -5, -5, -10, -10, -20,
     -10, 0, 0, 0, 0, 0, 0, -10,
     -10, 0, 5, 5, 5, 5, 0, -10,
     -5, 0, 5, 5, 5, 5, 0, -5,
     0, 0, 5, 5, 5, 5, 0, -5,
     -10, 5, 5, 5, 5, 5, 0, -10,
     -10, 0, 5, 0, 0, 0, 0, -10,
     -20, -10, -10, -5, -5, -10, -10, -20],
    [-30, -40, -40, -50, -50, -40, -40, -30,
     -30, -40, -40, -50, -50, -40, -40, -30,
     -30, -40, -40, -50, -50, -40, -40, -30,
     -30, -40, -40, -50, -50, -40, -40, -30,
     -20, -30, -30, -40, -40, -30, -30, -20,
     -10, -20, -20, -20, -20, -20, -20, -10,
     20, 20, 0, 0, 0, 0, 20, 20,
     20, 30, 10, 0, 0, 10, 30, 20],
]
SIMPLE_KING_END = [
    -50, -40, -30, -20, -20, -30, -40, -50,
    -30, -20, -10, 0, 0, -10, -20, -30,
    -30, -10, 20, 30, 30, 20, -10, -30,
    -30, -10, 30, 40, 40, 30, -10, -30,
    -30, -10, 30, 40, 40, 30, -10, -30,
    -30, -10, 20, 30, 30, 20, -10, -30,
    -30, -30, 0, 0, 0, 0, -30, -30,
    -50, -30, -30, -30, -30, -30, -30, -50,
]

PESTO_MG_VALUE = [82, 337, 365, 477, 1025, 0]
PESTO_EG_VALUE = [94, 281, 297, 512, 936, 0]
PESTO_PHASE = [0, 1, 1, 2, 4, 0]

PESTO_MG = [
    [0, 0, 0, 0, 0, 0, 0, 0,
     98, 134, 61, 95, 68, 126, 34, -11,
     -6, 7, 26, 31, 65, 56, 25, -20,
     -14, 13, 6, 21, 23, 12, 17, -23,
     -27, -2, -5, 12, 17, 6, 10, -25,
     -26, -4, -4, -10, 3, 3, 33, -12,
     -35, -1, -20, -23, -15, 24, 38, -22,
     0, 0, 0, 0, 0, 0, 0, 0],
    [-167, -89, -34, -49, 61, -97, -15, -107,
     -73, -41, 72, 36, 23, 62, 7, -17,
     -47, 60, 37, 65, 84, 129, 73, 44,
     -9, 17, 19, 53, 37, 69, 18, 22,
     -13, 4, 16, 13, 28, 19, 21, -8,
     -23, -9, 12, 10, 19, 17, 25, -16,
     -29, -53, -12, -3, -1, 18, -14, -19,
     -105, -21, -58, -33, -17, -28, -19, -23],
    [-29, 4, -82, -37, -25, -42, 7, -8,
     -26, 16, -18, -13, 30, 59, 18, -47,
     -16, 37, 43, 40, 35, 50, 37, -2,
     -4, 5, 19, 50, 37, 37, 7, -2,
     -6, 13, 13, 26, 34, 12, 10, 4,
     0, 15, 15, 15, 14, 27, 18, 10,
     4, 15, 16, 0, 7, 21, 33, 1,
     -33, -3, -14, -21, -13, -12, -39, -21],
    [32, 42, 32, 51, 63, 9, 31, 43,
     27, 32, 58, 62, 80, 67, 26, 44,
     -5, 19, 26, 36, 17, 45, 61, 16,
     -24, -11, 7, 26, 24, 35, -8, -20,
     -36, -26, -12, -1, 9, -7, 6, -23,
     -45, -25, -16, -17, 3, 0, -5, -33,
     -44, -16, -20, -9, -1, 11, -6, -71,
     -19, -13, 1, 17, 16, 7, -37, -26],
    [-28, 0, 29, 12, 59, 44, 43, 45,
     -24, -39, -5, 1, -16, 57, 28, 54,
     -13, -17, 7, 8, 29, 56, 47, 57,
     -27, -27, -16, -16, -1, 17, -2, 1,
     -9, -26, -9, -10, -2, -4, 3, -3,
     -14, 2, -11, -2, -5, 2, 14, 5,
     -35, -8, 11, 2, 8, 15, -3, 1,
     -1, -18, -9, 10, -15, -25, -31, -50],
    [-65, 23, 16, -15, -56, -34, 2, 13,
     29, -1, -20, -7, -8, -4, -38, -29,
     -9, 24, 2, -16, -20, 6, 22, -22,
     -17, -20, -12, -27, -30, -25, -14, -36,
     -49, -1, -27, -39, -46, -44, -33, -51,
     -14, -14, -22, -46, -44, -30, -15, -27,
     1, 7, -8, -64, -43, -16, 9, 8,
     -15, 36, 12, -54, 8, -28, 24, 14],
]
PESTO_EG = [
    [0, 0, 0, 0, 0, 0, 0, 0,
     178, 173, 158, 134, 147, 132, 165, 187,
     94, 100, 85, 67, 56, 53, 82, 84,
     32, 24, 13, 5, -2, 4, 17, 17,
     13, 9, -3, -7, -7, -8, 3, -1,
     4, 7, -6, 1, 0, -5, -1, -8,
     13, 8, 8, 10, 13, 0, 2, -7,
     0, 0, 0, 0, 0, 0, 0, 0],
    [-58, -38, -13, -28, -31, -27, -63, -99,
     -25, -8, -25, -2, -9, -25, -24, -52,
     -24, -20, 10, 9, -1, -9, -19, -41,
     -17, 3, 22, 22, 22, 11, 8, -18,
     -18, -6, 16, 25, 16, 17, 4, -18,
     -23, -3, -1, 15, 10, -3, -20, -22,
     -42, -20, -10, -5, -2, -20, -23, -44,
     -29, -51, -23, -15, -22, -18, -50, -64],
    [-14, -21, -11, -8, -7, -9, -17, -24,
     -8, -4, 7, -12, -3, -13, -4, -14,
     2, -8, 0, -1, -2, 6, 0, 4,
     -3, 9, 12, 9, 14, 10, 3, 2,
     -6, 3, 13, 19, 7, 10, -3, -9,
     -12, -3, 8, 10, 13, 3, -7, -15,
     -14, -18, -7, -1, 4, -9, -15, -27,
     -23, -9, -23, -5, -9, -16, -5, -17],
    [13, 10, 18, 15, 12, 12, 8, 5,
     11, 13, 13, 11, -3, 3, 8, 3,
     7, 7, 7, 5, 4, -3, -5, -3,
     4, 3, 13, 1, 2, 1, -1, 2,
     3, 5, 8, 4, -5, -6, -8, -11,
     -4, 0, -5, -1, -7, -12, -8, -16,
     -6, -6, 0, 2, -9, -9, -11, -3,
     -9, 2, 3, -1, -5, -13, 4, -20],
    [-9, 22, 22, 27, 27, 19, 10, 20,
     -17, 20, 32, 41, 58, 25, 30, 0,
     -20, 6, 9, 49, 47, 35, 19, 9,
     3, 22, 24, 45, 57, 40, 57, 36,
     -18, 28, 19, 47, 31, 34, 39, 23,
     -16, -27, 15, 6, 9, 17, 10, 5,
     -22, -23, -30, -16, -16, -23, -36, -32,
     -33, -28, -22, -43, -5, -32, -20, -41],
    [-74, -35, -18, -18, -11, 15, 4, -17,
     -12, 17, 14, 17, 17, 38, 23, 11,
     10, 17, 23, 15, 20, 45, 44, 13,
     -8, 22, 24, 27, 26, 33, 26, 3,
     -18, -4, 21, 24, 27, 23, 9, -11,
     -19, -3, 11, 21, 23, 16, 7, -9,
     -27, -11, 4, 13, 14, 4, -5, -17,
     -53, -34, -21, -11, -28, -14, -24, -43],
]

# C copies, indexed [colour][type][square] so evaluation never flips squares at run time.
cdef int S_VALUE[6]
cdef int S_PST[2][6][64]
cdef int S_KING_END[2][64]
cdef int MG[2][6][64]        # PeSTO value + table
cdef int EG[2][6][64]
cdef int PHASE[6]


cdef void init_tables():
    cdef int c, t, sq, idx
    for t in range(6):
        S_VALUE[t] = SIMPLE_VALUE[t]
        PHASE[t] = PESTO_PHASE[t]
        for sq in range(64):
            for c in range(2):
                idx = sq ^ 56 if c == WHITE else sq
                S_PST[c][t][sq] = SIMPLE_PST[t][idx]
                MG[c][t][sq] = PESTO_MG_VALUE[t] + PESTO_MG[t][idx]
                EG[c][t][sq] = PESTO_EG_VALUE[t] + PESTO_EG[t][idx]
                if t == KING:
                    S_KING_END[c][sq] = SIMPLE_KING_END[idx]


init_tables()


cdef int non_pawn_material(const Position* p, int colour) noexcept nogil:
    return (320 * popcount(p.bb[colour][KNIGHT]) + 330 * popcount(p.bb[colour][BISHOP])
            + 500 * popcount(p.bb[colour][ROOK]) + 900 * popcount(p.bb[colour][QUEEN]))


cdef bint simple_endgame(const Position* p) noexcept nogil:
    # CPW: no queens, or every side with a queen has at most one minor piece besides it.
    cdef int c
    for c in range(2):
        if p.bb[c][QUEEN] and (p.bb[c][ROOK] or popcount(p.bb[c][KNIGHT] | p.bb[c][BISHOP]) > 1):
            return False
    return True


cdef int simple_eval(const Position* p) noexcept nogil:
    cdef int score[2]
    cdef int c, t, sq, material, positional
    cdef u64 b
    cdef bint endgame = simple_endgame(p)
    for c in range(2):
        material = 0
        positional = 0
        for t in range(6):
            b = p.bb[c][t]
            material += S_VALUE[t] * popcount(b)
            while b:
                sq = lsb(b)
                b &= b - 1
                positional += S_KING_END[c][sq] if (t == KING and endgame) else S_PST[c][t][sq]
        score[c] = material + positional * material // SIMPLE_MAX_MATERIAL
    return score[p.side] - score[p.side ^ 1]


cdef int pesto_eval(const Position* p) noexcept nogil:
    cdef int mg[2]
    cdef int eg[2]
    cdef int c, t, sq, phase = 0, mg_score, eg_score
    cdef u64 b
    for c in range(2):
        mg[c] = 0
        eg[c] = 0
        for t in range(6):
            b = p.bb[c][t]
            phase += PHASE[t] * popcount(b)
            while b:
                sq = lsb(b)
                b &= b - 1
                mg[c] += MG[c][t][sq]
                eg[c] += EG[c][t][sq]
        if popcount(p.bb[c][BISHOP]) >= 2:
            mg[c] += BISHOP_PAIR_MG
            eg[c] += BISHOP_PAIR_EG
    mg_score = mg[p.side] - mg[p.side ^ 1]
    eg_score = eg[p.side] - eg[p.side ^ 1]
    if phase > 24:
        phase = 24        # early promotions
    return (mg_score * phase + eg_score * (24 - phase)) // 24 + TEMPO


cdef int evaluate(const Position* p, int kind) noexcept nogil:
    """Centipawns for the side to move."""
    if kind == EVAL_SIMPLE:
        return simple_eval(p)
    return pesto_eval(p)
