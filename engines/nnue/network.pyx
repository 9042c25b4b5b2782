# cython: language_level=3
"""The quantised HalfKP network in C, and the search's incremental accumulators.

The forward pass is the exact integer arithmetic of ``engines.nnue.reference.
evaluate_quantised``: accumulators in int32, clipped ReLU to 0..127, dense layers with int8
weights divided by 64 (floor), centipawns = floor(out * 600 / (127 * 64)) for the side to move.

:class:`AccumulatorStack` keeps both perspectives' accumulators per ply, as Stockfish does.
The search is copy-make, so "unmake" is returning to the parent's entry, untouched below the
child. A child entry is filled lazily, when its position is first evaluated: the parent's
accumulator plus the moved, promoted and castling-rook pieces' columns, minus the vacated and
captured ones (en passant included); the perspective whose king moved is rebuilt from
scratch (Stockfish's refinement of paper 002, which rebuilt both), unless the net has the
same columns under the king's old and new squares (always in a piece-square net, inside a
bucket in a king-bucket net): then a king move only removes what it captures and moves the
castling rook. A null move copies the
parent: the accumulators are kept by colour, and evaluation reads them from the side to move.

:class:`PerspectiveNetwork` (issue 38) is the 768 -> N x2 -> 1 net of ``netfile``: int16
accumulators in the same stack entries, updated on every move (king moves included: its
features do not depend on the king's square) by at most two added and two removed rows.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy

import chess

from engines.core.position cimport (EMPTY, FLAG_CASTLE, FLAG_EP, KING, NO_MOVE, PAWN, ROOK,
                                    WHITE, Move, Position, king_square, move_from, move_promo,
                                    move_to, set_from_board)
from engines.nnue.features cimport (HALFKP_FEATURES, HALFKP_KING_STRIDE, PSQ_FEATURES,
                                    PSQ_MAX_ACTIVE, active_features, feature_index, orient,
                                    psq_active, psq_index)

# numpy and engines.nnue.netfile are imported where used: the alpha-beta search cimports this
# module, and an engine playing "hce" should not pay for loading numpy.

cdef enum:
    MAX_DELTA = 3          # columns added or removed by one move for one perspective
    CLIP = 127
    WEIGHT_SHIFT = 6       # divide by 64, rounding down (arithmetic shift)
    OUT_CP = 600
    OUT_DIV = 127 * 64
    BIAS_LIMIT = 1 << 25


cdef inline int64_t floor_div(int64_t a, int64_t b) noexcept nogil:
    # C division truncates; the contract floors (Python semantics).
    cdef int64_t q = a // b
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q -= 1
    return q


cdef inline int32_t clamp_bias(int64_t b) noexcept nogil:
    # A dense layer's sum of products is under 2^24 in size (512 * 127 * 128), so a bias
    # beyond +-2^25 clips the same way as the bias at +-2^25: clamped, the layer stays in
    # int32 and gives the contract's values.
    return <int32_t>(BIAS_LIMIT if b > BIAS_LIMIT else (-BIAS_LIMIT if b < -BIAS_LIMIT else b))


# The SIMD kernels of the dense layers, the accumulator updates and the clipped ReLU (SSSE3/
# SSE4.1, AVX2, AVX-512 VNNI, plain C elsewhere) are C in kernels.h, next to this file.
cdef extern from "kernels.h":
    void nnue_dense(const int8_t* w, const uint8_t* x, int32_t* out, int rows,
                    int cols) noexcept nogil
    void nnue_apply(const int32_t* src, int32_t* dst, const int16_t* w, const int* added,
                    int n_add, const int* removed, int n_sub) noexcept nogil
    void nnue_clip(const int32_t* acc, uint8_t* out, int n) noexcept nogil
    int nnue_set_simd(int avx2, int vnni) noexcept nogil
    void psq_apply(const int16_t* src, int16_t* dst, const int16_t* a0, const int16_t* a1,
                   const int16_t* s0, const int16_t* s1, int n) noexcept nogil
    void psq_add(int16_t* dst, const int16_t* row, int n) noexcept nogil
    int64_t psq_dot(const int16_t* x, const int16_t* w, int n, int qa,
                    int squared) noexcept nogil


def use_simd(bint avx2, bint vnni=True) -> int:
    """Choose the kernels, for tests and benchmarks: AVX2, and AVX-512 (VNNI's vpdpbusd in the
    dense layers, BW's 32 lanes in the psq768 output) where the CPU has them (the default),
    or the SSE (x86-64-v2) path; returns 0 (SSE or plain C), 1 (AVX2) or 2 (AVX2 with
    VNNI)."""
    return nnue_set_simd(avx2, vnni)


cdef class Network:
    """A ``chesslab NNUE v1`` network, copied into C arrays.

    >>> from engines.nnue.netfile import random_arrays
    >>> Network(random_arrays(1)).evaluate(chess.Board())
    473
    """

    def __cinit__(self):
        self.ft_weight = NULL

    def __init__(self, arrays: dict, str name="<arrays>"):
        import numpy as np

        cdef int16_t[:, ::1] ft = np.ascontiguousarray(arrays["ft_weight"], dtype=np.int16)
        cdef int i, j
        self.name = name
        self.acc_bytes = FT_OUT * sizeof(int32_t)
        self.ft_weight = <int16_t*> malloc(HALFKP_FEATURES * FT_OUT * sizeof(int16_t))
        if self.ft_weight == NULL:
            raise MemoryError(f"cannot allocate the feature transformer of {name}")
        memcpy(self.ft_weight, &ft[0, 0], HALFKP_FEATURES * FT_OUT * sizeof(int16_t))
        for j in range(FT_OUT):
            self.ft_bias[j] = arrays["ft_bias"][j]
        for i in range(L1_OUT):
            self.l1_bias[i] = clamp_bias(arrays["l1_bias"][i])
            self.l2_bias[i] = clamp_bias(arrays["l2_bias"][i])
            self.out_weight[i] = arrays["out_weight"][0, i]
            for j in range(2 * FT_OUT):
                self.l1_weight[i][j] = arrays["l1_weight"][i, j]
            for j in range(L1_OUT):
                self.l2_weight[i][j] = arrays["l2_weight"][i, j]
        self.out_bias = arrays["out_bias"][0]
        # A piece-square net (trained without king features) has the same columns under
        # every king square, a king-bucket net under every square of a bucket: each king
        # square reads the columns of the first square with the same ones, and a king move
        # inside its class changes no column (the accumulator is updated, not rebuilt).
        columns = np.asarray(arrays["ft_weight"]).reshape(64, HALFKP_KING_STRIDE * FT_OUT)
        first: dict[bytes, int] = {}
        for i in range(64):
            self.king_class[i] = first.setdefault(columns[i].tobytes(), i)
        self.king_classes = len(first)

    def __dealloc__(self):
        free(self.ft_weight)

    @property
    def king_independent(self) -> bool:
        """The same columns under every king square (a piece-square net)."""
        return self.king_classes == 1

    @classmethod
    def load(cls, path) -> Network:
        """Load and check a v1 ``.npz``, HalfKP or psq768 (a :class:`PerspectiveNetwork`);
        NnueFileError (a ValueError) names file and field."""
        from engines.nnue.netfile import load_network_file

        meta, arrays = load_network_file(path)
        if meta["features"] == "psq768":
            return PerspectiveNetwork(arrays, meta["activation"], str(path))
        return Network(arrays, str(path))

    def evaluate(self, board: chess.Board) -> int:
        """Centipawns for the side to move, from scratch."""
        cdef Position pos
        set_from_board(&pos, board)
        return self.evaluate_position(&pos)

    def accumulators(self, board: chess.Board) -> "numpy.ndarray":
        """Both perspectives' accumulators (side to move first), int32 (2, 256)."""
        import numpy as np

        cdef Position pos
        cdef int32_t[:, ::1] view
        out = np.empty((2, FT_OUT), dtype=np.int32)
        view = out
        set_from_board(&pos, board)
        self.refresh(&pos, pos.side, &view[0, 0])
        self.refresh(&pos, pos.side ^ 1, &view[1, 0])
        return out

    cdef void refresh(self, const Position* p, int perspective, int32_t* acc) noexcept nogil:
        cdef int features[64]
        cdef int n = 0, i
        if p.bb[perspective][KING]:     # no king only after a king capture (illegal roots)
            n = active_features(p, perspective, features, 64)
        for i in range(n):              # the king's class's columns, as in update()
            features[i] = (self.king_class[features[i] // HALFKP_KING_STRIDE] * HALFKP_KING_STRIDE
                           + features[i] % HALFKP_KING_STRIDE)
        nnue_apply(self.ft_bias, acc, self.ft_weight, features, n, NULL, 0)

    cdef void update(self, const Accumulator* before, Accumulator* after) noexcept nogil:
        cdef const Position* parent = after.parent
        cdef Move m = after.move
        cdef int c, king, n_add, n_sub, us, them, mover, frm, to, victim
        cdef int added[MAX_DELTA]
        cdef int removed[MAX_DELTA]
        if m == NO_MOVE:
            memcpy(after.v[0], before.v[0], FT_OUT * sizeof(int32_t))
            memcpy(after.v[1], before.v[1], FT_OUT * sizeof(int32_t))
            return
        us = parent.side
        them = us ^ 1
        frm = move_from(m)
        to = move_to(m)
        mover = parent.board[frm] - 6 * us
        victim = parent.board[to] - 6 * them if parent.board[to] != EMPTY else -1
        if (mover < 0 or mover > KING or victim == KING or not parent.bb[us][KING]
                or not parent.bb[them][KING]):
            # Only below an illegal root (a king can be taken): rebuild, never index garbage.
            self.refresh(after.pos, 0, after.v[0])
            self.refresh(after.pos, 1, after.v[1])
            return
        for c in range(2):
            # A piece-square net's columns are the same under every king square: those of
            # square 0 keep the updates in 328 KB of the 21 MB table (it stays in cache); a
            # king-bucket net's, one 328 KB block per bucket.
            king = self.king_class[orient(c, king_square(parent, c))]
            if (mover == KING and c == us
                    and self.king_class[orient(c, king_square(after.pos, c))] != king):
                self.refresh(after.pos, c, after.v[c])
                continue
            n_add = 0
            n_sub = 0
            if mover != KING:
                removed[n_sub] = feature_index(c, king, us, mover, frm)
                added[n_add] = feature_index(
                    c, king, us, move_promo(m) if move_promo(m) else mover, to)
                n_sub += 1
                n_add += 1
            if m & FLAG_EP:
                removed[n_sub] = feature_index(c, king, them, PAWN,
                                               to - 8 if us == WHITE else to + 8)
                n_sub += 1
            elif victim >= 0:
                removed[n_sub] = feature_index(c, king, them, victim, to)
                n_sub += 1
            if m & FLAG_CASTLE:
                # The king's own side rebuilt above (unless its king stayed in its class);
                # the other side sees the rook move.
                removed[n_sub] = feature_index(c, king, us, ROOK, to + 1 if to & 7 == 6 else to - 2)
                added[n_add] = feature_index(c, king, us, ROOK, to - 1 if to & 7 == 6 else to + 1)
                n_sub += 1
                n_add += 1
            nnue_apply(before.v[c], after.v[c], self.ft_weight, added, n_add, removed, n_sub)

    cdef int propagate(self, const int32_t* stm, const int32_t* other) noexcept nogil:
        cdef uint8_t q0[2 * FT_OUT]
        cdef uint8_t q1[L1_OUT]
        cdef uint8_t q2[L2_OUT]
        cdef int32_t h1[L1_OUT]
        cdef int32_t h2[L2_OUT]
        cdef int i
        cdef int32_t total = 0
        nnue_clip(stm, q0, FT_OUT)
        nnue_clip(other, q0 + FT_OUT, FT_OUT)
        nnue_dense(&self.l1_weight[0][0], q0, h1, L1_OUT, 2 * FT_OUT)
        for i in range(L1_OUT):
            h1[i] = (h1[i] + self.l1_bias[i]) >> WEIGHT_SHIFT
        nnue_clip(h1, q1, L1_OUT)
        nnue_dense(&self.l2_weight[0][0], q1, h2, L2_OUT, L1_OUT)
        for i in range(L2_OUT):
            h2[i] = (h2[i] + self.l2_bias[i]) >> WEIGHT_SHIFT
        nnue_clip(h2, q2, L2_OUT)
        for i in range(L2_OUT):        # under 2^25 in size: 32 * 127 * 32,768
            total += self.out_weight[i] * q2[i]
        return <int>floor_div((self.out_bias + total) * OUT_CP, OUT_DIV)

    cdef int evaluate_position(self, const Position* p) noexcept nogil:
        cdef int32_t acc[2][FT_OUT]
        self.refresh(p, p.side, acc[0])
        self.refresh(p, p.side ^ 1, acc[1])
        return self.propagate(acc[0], acc[1])


cdef enum:
    PSQ_QA = 255
    PSQ_QB = 64


cdef inline const int16_t* row(const int16_t* weight, int hidden, int feature) noexcept nogil:
    return weight + feature * hidden


cdef class PerspectiveNetwork(Network):
    """A psq768 network (768 -> hidden x2 -> 1, crelu or screlu), copied into C arrays;
    evaluated by the same :class:`AccumulatorStack` (its accumulators are int16).

    >>> from engines.nnue.netfile import random_psq_arrays
    >>> PerspectiveNetwork(random_psq_arrays(1), "screlu").evaluate(chess.Board())
    84
    """

    def __cinit__(self):
        self.weight = NULL
        self.bias = NULL
        self.out = NULL

    def __init__(self, arrays: dict, str activation="screlu", str name="<arrays>"):
        import numpy as np

        cdef int n = int(arrays["ft_weight"].shape[1])
        rows = np.zeros((PSQ_FEATURES + 1, n), dtype=np.int16)
        rows[:PSQ_FEATURES] = arrays["ft_weight"]
        cdef int16_t[:, ::1] w = rows
        cdef int16_t[::1] b = np.ascontiguousarray(arrays["ft_bias"], dtype=np.int16)
        cdef int16_t[::1] o = np.ascontiguousarray(arrays["out_weight"][0], dtype=np.int16)
        if n % 16 or not 16 <= n <= 2 * ACC_WORDS or b.shape[0] != n or o.shape[0] != 2 * n:
            raise ValueError(f"{name}: a psq768 net needs hidden a multiple of 16 in 16..1024 "
                             f"and matching arrays, got {n}")
        if activation not in ("crelu", "screlu"):
            raise ValueError(f"{name}: activation must be crelu or screlu, got {activation!r}")
        self.name = name
        self.hidden = n
        self.squared = activation == "screlu"
        self.acc_bytes = n * sizeof(int16_t)
        self.king_classes = 1
        self.weight = <int16_t*> malloc((PSQ_FEATURES + 1) * n * sizeof(int16_t))
        self.bias = <int16_t*> malloc(n * sizeof(int16_t))
        self.out = <int16_t*> malloc(2 * n * sizeof(int16_t))
        if self.weight == NULL or self.bias == NULL or self.out == NULL:
            raise MemoryError(f"cannot allocate the network {name}")
        memcpy(self.weight, &w[0, 0], (PSQ_FEATURES + 1) * n * sizeof(int16_t))
        memcpy(self.bias, &b[0], n * sizeof(int16_t))
        memcpy(self.out, &o[0], 2 * n * sizeof(int16_t))
        self.bias_out = int(arrays["out_bias"][0])

    def __dealloc__(self):
        free(self.weight)
        free(self.bias)
        free(self.out)

    def accumulators(self, board: chess.Board) -> "numpy.ndarray":
        """Both perspectives' accumulators (side to move first), int16 (2, hidden)."""
        import numpy as np

        cdef Position pos
        cdef int32_t acc[2][ACC_WORDS]
        set_from_board(&pos, board)
        self.refresh(&pos, pos.side, acc[0])
        self.refresh(&pos, pos.side ^ 1, acc[1])
        return np.array([[(<int16_t*> acc[c])[i] for i in range(self.hidden)]
                         for c in range(2)], dtype=np.int16)

    cdef void refresh(self, const Position* p, int perspective, int32_t* acc) noexcept nogil:
        cdef int features[PSQ_MAX_ACTIVE]
        cdef int16_t* a = <int16_t*> acc
        cdef int n = psq_active(p, perspective, features), i
        memcpy(a, self.bias, self.hidden * sizeof(int16_t))
        for i in range(n):             # n < 0 only below an illegal root (33 pieces)
            psq_add(a, row(self.weight, self.hidden, features[i]), self.hidden)

    cdef void update(self, const Accumulator* before, Accumulator* after) noexcept nogil:
        cdef const Position* parent = after.parent
        cdef Move m = after.move
        cdef int c, us, them, mover, frm, to, victim, promo
        cdef const int16_t* zero = row(self.weight, self.hidden, PSQ_FEATURES)
        cdef const int16_t* a1
        cdef const int16_t* s1
        if m == NO_MOVE:
            memcpy(after.v[0], before.v[0], self.acc_bytes)
            memcpy(after.v[1], before.v[1], self.acc_bytes)
            return
        us = parent.side
        them = us ^ 1
        frm = move_from(m)
        to = move_to(m)
        mover = parent.board[frm] - 6 * us
        if mover < 0 or mover > KING:
            # Only below an illegal root: rebuild, never index garbage.
            self.refresh(after.pos, 0, after.v[0])
            self.refresh(after.pos, 1, after.v[1])
            return
        victim = parent.board[to] - 6 * them if parent.board[to] != EMPTY else -1
        promo = move_promo(m) if move_promo(m) else mover
        for c in range(2):
            a1 = zero
            s1 = zero
            if m & FLAG_EP:
                s1 = row(self.weight, self.hidden, psq_index(c, them, PAWN, to - 8 if us == WHITE else to + 8))
            elif victim >= 0:
                s1 = row(self.weight, self.hidden, psq_index(c, them, victim, to))
            if m & FLAG_CASTLE:
                s1 = row(self.weight, self.hidden, psq_index(c, us, ROOK, to + 1 if to & 7 == 6 else to - 2))
                a1 = row(self.weight, self.hidden, psq_index(c, us, ROOK, to - 1 if to & 7 == 6 else to + 1))
            psq_apply(<const int16_t*> before.v[c], <int16_t*> after.v[c],
                      row(self.weight, self.hidden, psq_index(c, us, promo, to)), a1,
                      row(self.weight, self.hidden, psq_index(c, us, mover, frm)), s1, self.hidden)

    cdef int propagate(self, const int32_t* stm, const int32_t* other) noexcept nogil:
        cdef int64_t total = (
            psq_dot(<const int16_t*> stm, self.out, self.hidden, PSQ_QA, self.squared)
            + psq_dot(<const int16_t*> other, self.out + self.hidden, self.hidden, PSQ_QA,
                      self.squared))
        if self.squared:
            total = floor_div(total, PSQ_QA)
        return <int>floor_div((total + self.bias_out) * OUT_CP, PSQ_QA * PSQ_QB)

    cdef int evaluate_position(self, const Position* p) noexcept nogil:
        cdef int32_t acc[2][ACC_WORDS]
        self.refresh(p, p.side, acc[0])
        self.refresh(p, p.side ^ 1, acc[1])
        return self.propagate(acc[0], acc[1])


cdef class AccumulatorStack:
    """Per-ply accumulators of one search (see the module docstring)."""

    def __cinit__(self, Network net not None):
        self.net = net
        self.entries = <Accumulator*> malloc(STACK_PLIES * sizeof(Accumulator))
        if self.entries == NULL:
            raise MemoryError("cannot allocate the NNUE accumulator stack")
        self.entries[0].computed = False

    def __dealloc__(self):
        free(self.entries)

    cdef void set_root(self, const Position* p) noexcept nogil:
        cdef Accumulator* root = &self.entries[0]
        root.pos = p
        root.parent = NULL
        root.move = NO_MOVE
        self.net.refresh(p, 0, root.v[0])
        self.net.refresh(p, 1, root.v[1])
        root.computed = True

    cdef void push(self, int ply, const Position* parent, Move m,
                   const Position* child) noexcept nogil:
        cdef Accumulator* entry = &self.entries[ply]
        entry.pos = child
        entry.parent = parent
        entry.move = m
        entry.computed = False

    cdef int evaluate(self, const Position* p, int ply) noexcept nogil:
        cdef int first = ply, k
        cdef Accumulator* entry = &self.entries[ply]
        while first > 0 and not self.entries[first].computed:
            first -= 1
        for k in range(first + 1, ply + 1):
            self.net.update(&self.entries[k - 1], &self.entries[k])
            self.entries[k].computed = True
        if self.verify:
            self.check(p, entry)
        return self.net.propagate(entry.v[p.side], entry.v[p.side ^ 1])

    cdef void check(self, const Position* p, const Accumulator* entry) noexcept nogil:
        cdef int32_t fresh[ACC_WORDS]
        cdef int c
        self.checked += 1
        for c in range(2):
            self.net.refresh(p, c, fresh)
            if memcmp(fresh, entry.v[c], self.net.acc_bytes) != 0:
                self.mismatches += 1
                return
