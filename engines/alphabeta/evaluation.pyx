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

Tables come from ``engines/eval_tables.py`` (a1 = 0, White's side); white pieces read them at
``square``, black pieces at ``square ^ 56``.
"""
import chess

from engines import eval_tables as tables

from engines.core.position cimport (BISHOP, BLACK, KING, KNIGHT, PAWN, QUEEN, ROOK, WHITE,
                                    Position, lsb, popcount, u64)

# The tables themselves live once, as documented data, in engines/eval_tables.py (indexed
# a1 = 0 from White's side, by python-chess piece type); this module copies them into C.
PIECE_TYPES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)

cdef enum:
    SIMPLE_MAX_MATERIAL = 4000   # eval_tables.SEF_MATERIAL_MAX, checked at import below
    BISHOP_PAIR_MG = 30
    BISHOP_PAIR_EG = 50
    TEMPO = 10

# C copies, indexed [colour][type][square] so evaluation never flips squares at run time.
cdef int S_VALUE[6]
cdef int S_PST[2][6][64]
cdef int S_KING_END[2][64]
cdef int MG[2][6][64]        # PeSTO value + table
cdef int EG[2][6][64]
cdef int PHASE[6]


cdef void init_tables():
    cdef int c, t, sq, idx
    if tables.SEF_MATERIAL_MAX != SIMPLE_MAX_MATERIAL:
        raise ValueError(f"SEF_MATERIAL_MAX changed: {tables.SEF_MATERIAL_MAX}")
    for t, piece_type in enumerate(PIECE_TYPES):
        S_VALUE[t] = tables.SEF_PIECE_VALUES[piece_type] if piece_type != chess.KING else 0
        PHASE[t] = tables.PESTO_PHASE_INC[piece_type]
        for sq in range(64):
            for c in range(2):
                idx = sq if c == WHITE else sq ^ 56
                S_PST[c][t][sq] = tables.SEF_PST[piece_type][idx]
                MG[c][t][sq] = tables.PESTO_MG_VALUES[piece_type] + tables.PESTO_MG_PST[piece_type][idx]
                EG[c][t][sq] = tables.PESTO_EG_VALUES[piece_type] + tables.PESTO_EG_PST[piece_type][idx]
                if t == KING:
                    S_KING_END[c][sq] = tables.SEF_KING_ENDGAME[idx]


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
