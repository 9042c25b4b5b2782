# The quantised HalfKP network and the search's stack of incremental accumulators.
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t

from engines.core.position cimport Move, Position

cdef enum:
    FT_OUT = 256          # accumulator width per perspective
    L1_OUT = 32
    L2_OUT = 32
    STACK_PLIES = 128     # accumulator stack depth (the alpha-beta search stops at ply 120)
    ACC_WORDS = 512       # int32 words per perspective: HalfKP's 256, or the 768 net's N int16

cdef struct Accumulator:
    int32_t v[2][ACC_WORDS]    # by colour: White's perspective, then Black's
    const Position* pos        # the position this entry belongs to
    const Position* parent     # and the one it was reached from (lazy update)
    Move move                  # the move from parent, NO_MOVE for a null move
    bint computed

cdef class Network:
    cdef int16_t* ft_weight                    # [41024][FT_OUT]
    cdef int32_t ft_bias[FT_OUT]
    cdef int8_t l1_weight[L1_OUT][2 * FT_OUT]
    cdef int32_t l1_bias[L1_OUT]               # clamped to +-2^25 (see Network.__init__)
    cdef int8_t l2_weight[L2_OUT][L1_OUT]
    cdef int32_t l2_bias[L2_OUT]
    cdef int32_t out_weight[L2_OUT]
    cdef int64_t out_bias
    cdef readonly str name
    cdef int king_class[64]                    # first oriented king square with the same columns
    cdef readonly int king_classes             # distinct column blocks (1: a piece-square net)
    cdef readonly int acc_bytes                # bytes of one perspective's accumulator
    cdef void refresh(self, const Position* p, int perspective, int32_t* acc) noexcept nogil
    cdef void update(self, const Accumulator* before, Accumulator* after) noexcept nogil
    cdef int propagate(self, const int32_t* stm, const int32_t* other) noexcept nogil
    cdef int evaluate_position(self, const Position* p) noexcept nogil

cdef class PerspectiveNetwork(Network):
    cdef int16_t* weight                       # [769][hidden], row 768 zeros (padding)
    cdef int16_t* bias                         # [hidden]
    cdef int16_t* out                          # [2 * hidden]: side to move's, then other's
    cdef int64_t bias_out
    cdef readonly int hidden
    cdef readonly bint squared                 # screlu (else crelu)
    cdef void refresh(self, const Position* p, int perspective, int32_t* acc) noexcept nogil
    cdef void update(self, const Accumulator* before, Accumulator* after) noexcept nogil
    cdef int propagate(self, const int32_t* stm, const int32_t* other) noexcept nogil
    cdef int evaluate_position(self, const Position* p) noexcept nogil

cdef class AccumulatorStack:
    cdef readonly Network net
    cdef Accumulator* entries
    cdef public bint verify            # compare every evaluation with a rebuild (tests)
    cdef readonly long checked
    cdef readonly long mismatches
    cdef void set_root(self, const Position* p) noexcept nogil
    cdef void push(self, int ply, const Position* parent, Move m,
                   const Position* child) noexcept nogil
    cdef int evaluate(self, const Position* p, int ply) noexcept nogil
    cdef void check(self, const Position* p, const Accumulator* entry) noexcept nogil
