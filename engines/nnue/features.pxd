# HalfKP features (Stockfish 12, 41,024 per perspective) of the compiled board.
from engines.core.position cimport Position

cdef enum:
    HALFKP_FEATURES = 41024      # 64 king squares * (1 + 10 piece kinds * 64 squares)
    HALFKP_KING_STRIDE = 641
    MAX_ACTIVE = 30              # non-king pieces of a legal position

cdef inline int orient(int perspective, int sq) noexcept nogil:
    # White sees the board as it is, Black rotated by 180 degrees (Stockfish 12 HalfKP).
    return sq if perspective == 0 else sq ^ 63

cdef inline int feature_index(int perspective, int king_sq, int colour, int piece_type,
                              int sq) noexcept nogil:
    # piece_type 0..4 (pawn..queen) as in the compiled core; king_sq already oriented.
    cdef int kind = 2 * piece_type + (0 if colour == perspective else 1)
    return king_sq * HALFKP_KING_STRIDE + 1 + kind * 64 + orient(perspective, sq)

cdef int active_features(const Position* p, int perspective, int* out, int limit) noexcept nogil

# The perspective (768) net's features: own/their piece (pawn..king) on a square, each side's
# view (Black's board flipped top to bottom, files kept), 768 padding (a zero row).
cdef enum:
    PSQ_FEATURES = 768
    PSQ_PAD = 768
    PSQ_MAX_ACTIVE = 32

cdef inline int psq_index(int perspective, int colour, int piece_type, int sq) noexcept nogil:
    # piece_type 0..5 (pawn..king) as in the compiled core.
    return ((0 if colour == perspective else 384) + piece_type * 64
            + (sq if perspective == 0 else sq ^ 56))

cdef int psq_active(const Position* p, int perspective, int* out) noexcept nogil
