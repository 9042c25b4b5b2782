from engines.core.position cimport Position

cdef enum:
    EVAL_SIMPLE = 0     # "hce-simple": Simplified Evaluation Function, material-scaled PSTs
    EVAL_PESTO = 1      # "hce": tapered PeSTO-style evaluation
    EVAL_NNUE = 2       # "nnue": engines.nnue, incremental accumulators kept by the search

cdef int evaluate(const Position* p, int kind) noexcept nogil
cdef int non_pawn_material(const Position* p, int colour) noexcept nogil
