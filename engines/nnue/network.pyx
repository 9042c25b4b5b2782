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
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy

import chess

from engines.core.position cimport (EMPTY, FLAG_CASTLE, FLAG_EP, KING, NO_MOVE, PAWN, ROOK,
                                    WHITE, Move, Position, king_square, move_from, move_promo,
                                    move_to, set_from_board)
from engines.nnue.features cimport (HALFKP_FEATURES, HALFKP_KING_STRIDE, active_features,
                                    feature_index,
                                    orient)

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


# The first dense layer is 16,384 multiply-adds per evaluation, most of the NNUE's cost. It
# multiplies the clipped inputs (uint8, 0..127) by int8 weights with pmaddubsw, exact here
# because a pair sums to at most 2 * 127 * 128 = 32,512 < 32,767 (Stockfish does the same),
# four rows at a time. x86-64-v2 (the build's baseline) has SSSE3 and SSE4.1; AVX2 is used
# when the CPU has it, and AVX-512 VNNI's vpdpbusd (the three steps in one) where it has that
# too (checked once); other machines get plain C loops. On the development machine (2 cores)
# VNNI gives 1.12 times AVX2's nodes/s and AVX2 1.8 times SSE's (benchmarks/nnue.py
# --kernels).
cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__x86_64__) && defined(__GNUC__)
    #include <immintrin.h>
    #define NNUE_X86 1
    static int nnue_avx2 = -1;   /* unknown until first used */
    static int nnue_vnni = -1;

    static inline int nnue_use_avx2(void) {
        if (nnue_avx2 < 0) nnue_avx2 = __builtin_cpu_supports("avx2");
        return nnue_avx2;
    }

    static inline int nnue_cpu_vnni(void) {
        return __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    }

    static inline int nnue_use_vnni(void) {
        if (nnue_vnni < 0) nnue_vnni = nnue_use_avx2() && nnue_cpu_vnni();
        return nnue_vnni;
    }

    /* The four row sums of acc[0..3] (eight lanes each) into out[0..3]. */
    __attribute__((target("avx2")))
    static inline void nnue_hsum4(const __m256i* acc, int32_t* out) {
        __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]),
                                      _mm256_hadd_epi32(acc[2], acc[3]));
        _mm_storeu_si128((__m128i*)out, _mm_add_epi32(_mm256_castsi256_si128(s),
                                                       _mm256_extracti128_si256(s, 1)));
    }

    __attribute__((target("avx2")))
    static void nnue_dense_avx2(const int8_t* w, const uint8_t* x, int32_t* out,
                                int rows, int cols) {
        const __m256i ones = _mm256_set1_epi16(1);
        for (int r = 0; r < rows; r += 4) {
            __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                              _mm256_setzero_si256(), _mm256_setzero_si256()};
            for (int c = 0; c < cols; c += 32) {
                __m256i in = _mm256_loadu_si256((const __m256i*)(x + c));
                for (int k = 0; k < 4; k++) {
                    __m256i wk = _mm256_loadu_si256((const __m256i*)(w + (r + k) * cols + c));
                    acc[k] = _mm256_add_epi32(acc[k], _mm256_madd_epi16(
                        _mm256_maddubs_epi16(in, wk), ones));
                }
            }
            nnue_hsum4(acc, out + r);
        }
    }

    /* The same with AVX-512 VNNI on 256-bit registers: vpdpbusd is pmaddubsw, pmaddwd and
       paddd in one instruction, and exact where they are (no pair reaches 32,767); eight
       rows at a time. */
    __attribute__((target("avx2,avx512f,avx512vl,avx512vnni")))
    static void nnue_dense_vnni(const int8_t* w, const uint8_t* x, int32_t* out,
                                int rows, int cols) {
        for (int r = 0; r < rows; r += 8) {
            __m256i acc[8];
            for (int k = 0; k < 8; k++) acc[k] = _mm256_setzero_si256();
            for (int c = 0; c < cols; c += 32) {
                __m256i in = _mm256_loadu_si256((const __m256i*)(x + c));
                for (int k = 0; k < 8; k++)
                    acc[k] = _mm256_dpbusd_epi32(acc[k], in, _mm256_loadu_si256(
                        (const __m256i*)(w + (r + k) * cols + c)));
            }
            nnue_hsum4(acc, out + r);
            nnue_hsum4(acc + 4, out + r + 4);
        }
    }

    /* The clipped ReLU of n int32 (a multiple of 32) into uint8: saturating packs to int8
       (127 above), max with 0, and the lane order put back. */
    __attribute__((target("avx2")))
    static void nnue_clip_avx2(const int32_t* acc, uint8_t* out, int n) {
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        for (int i = 0; i < n; i += 32) {
            __m256i ab = _mm256_packs_epi32(_mm256_loadu_si256((const __m256i*)(acc + i)),
                                            _mm256_loadu_si256((const __m256i*)(acc + i + 8)));
            __m256i cd = _mm256_packs_epi32(_mm256_loadu_si256((const __m256i*)(acc + i + 16)),
                                            _mm256_loadu_si256((const __m256i*)(acc + i + 24)));
            __m256i v = _mm256_max_epi8(_mm256_packs_epi16(ab, cd), _mm256_setzero_si256());
            _mm256_storeu_si256((__m256i*)(out + i), _mm256_permutevar8x32_epi32(v, order));
        }
    }

    __attribute__((target("ssse3")))
    static void nnue_dense_ssse3(const int8_t* w, const uint8_t* x, int32_t* out,
                                 int rows, int cols) {
        const __m128i ones = _mm_set1_epi16(1);
        for (int r = 0; r < rows; r += 4) {
            __m128i acc[4] = {_mm_setzero_si128(), _mm_setzero_si128(),
                              _mm_setzero_si128(), _mm_setzero_si128()};
            for (int c = 0; c < cols; c += 16) {
                __m128i in = _mm_loadu_si128((const __m128i*)(x + c));
                for (int k = 0; k < 4; k++) {
                    __m128i wk = _mm_loadu_si128((const __m128i*)(w + (r + k) * cols + c));
                    acc[k] = _mm_add_epi32(acc[k], _mm_madd_epi16(_mm_maddubs_epi16(in, wk), ones));
                }
            }
            for (int k = 0; k < 4; k++) {
                __m128i s = _mm_add_epi32(acc[k], _mm_shuffle_epi32(acc[k], 0x4E));
                s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
                out[r + k] = _mm_cvtsi128_si32(s);
            }
        }
    }
    #endif

    /* Plain loops that gcc vectorises, cloned for AVX2 and the baseline (picked at load). */
    #if defined(__x86_64__) && defined(__GNUC__)
    #define NNUE_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define NNUE_CLONES
    #endif
    #define NNUE_BLOCK 64

    #ifdef NNUE_X86
    /* The AVX2 nnue_apply: a block of 64 accumulators lives in eight registers. */
    __attribute__((target("avx2")))
    static void nnue_apply_avx2(const int32_t* src, int32_t* dst, const int16_t* w,
                                const int* added, int n_add, const int* removed, int n_sub) {
        for (int j = 0; j < 256; j += NNUE_BLOCK) {
            __m256i block[8];
            for (int k = 0; k < 8; k++)
                block[k] = _mm256_loadu_si256((const __m256i*)(src + j + 8 * k));
            for (int a = 0; a < n_add; a++) {
                const int16_t* column = w + (size_t)added[a] * 256 + j;
                for (int k = 0; k < 8; k++)
                    block[k] = _mm256_add_epi32(block[k], _mm256_cvtepi16_epi32(
                        _mm_loadu_si128((const __m128i*)(column + 8 * k))));
            }
            for (int a = 0; a < n_sub; a++) {
                const int16_t* column = w + (size_t)removed[a] * 256 + j;
                for (int k = 0; k < 8; k++)
                    block[k] = _mm256_sub_epi32(block[k], _mm256_cvtepi16_epi32(
                        _mm_loadu_si128((const __m128i*)(column + 8 * k))));
            }
            for (int k = 0; k < 8; k++)
                _mm256_storeu_si256((__m256i*)(dst + j + 8 * k), block[k]);
        }
    }

    /* The same with SSE4.1 (in the x86-64-v2 baseline): sixteen registers of four. */
    __attribute__((target("sse4.1")))
    static void nnue_apply_sse41(const int32_t* src, int32_t* dst, const int16_t* w,
                                 const int* added, int n_add, const int* removed, int n_sub) {
        for (int j = 0; j < 256; j += NNUE_BLOCK) {
            __m128i block[16];
            for (int k = 0; k < 16; k++)
                block[k] = _mm_loadu_si128((const __m128i*)(src + j + 4 * k));
            for (int a = 0; a < n_add; a++) {
                const int16_t* column = w + (size_t)added[a] * 256 + j;
                for (int k = 0; k < 16; k++)
                    block[k] = _mm_add_epi32(block[k], _mm_cvtepi16_epi32(
                        _mm_loadl_epi64((const __m128i*)(column + 4 * k))));
            }
            for (int a = 0; a < n_sub; a++) {
                const int16_t* column = w + (size_t)removed[a] * 256 + j;
                for (int k = 0; k < 16; k++)
                    block[k] = _mm_sub_epi32(block[k], _mm_cvtepi16_epi32(
                        _mm_loadl_epi64((const __m128i*)(column + 4 * k))));
            }
            for (int k = 0; k < 16; k++)
                _mm_storeu_si128((__m128i*)(dst + j + 4 * k), block[k]);
        }
    }
    #endif

    /* dst = src + sum of the added columns - sum of the removed ones (width 256). */
    static void nnue_apply(const int32_t* src, int32_t* dst, const int16_t* w,
                           const int* added, int n_add, const int* removed, int n_sub) {
    #ifdef NNUE_X86
        if (nnue_use_avx2()) nnue_apply_avx2(src, dst, w, added, n_add, removed, n_sub);
        else nnue_apply_sse41(src, dst, w, added, n_add, removed, n_sub);
    #else
        for (int j = 0; j < 256; j += NNUE_BLOCK) {
            int32_t block[NNUE_BLOCK];
            for (int i = 0; i < NNUE_BLOCK; i++) block[i] = src[j + i];
            for (int a = 0; a < n_add; a++) {
                const int16_t* column = w + (size_t)added[a] * 256 + j;
                for (int i = 0; i < NNUE_BLOCK; i++) block[i] += column[i];
            }
            for (int a = 0; a < n_sub; a++) {
                const int16_t* column = w + (size_t)removed[a] * 256 + j;
                for (int i = 0; i < NNUE_BLOCK; i++) block[i] -= column[i];
            }
            for (int i = 0; i < NNUE_BLOCK; i++) dst[j + i] = block[i];
        }
    #endif
    }

    /* The clipped ReLU: out[i] = min(max(acc[i], 0), 127); n a multiple of 32. */
    NNUE_CLONES
    static void nnue_clip_plain(const int32_t* acc, uint8_t* out, int n) {
        for (int i = 0; i < n; i++) {
            int32_t v = acc[i] < 0 ? 0 : acc[i];
            out[i] = (uint8_t)(v > 127 ? 127 : v);
        }
    }

    static void nnue_clip(const int32_t* acc, uint8_t* out, int n) {
    #ifdef NNUE_X86
        if (nnue_use_avx2()) { nnue_clip_avx2(acc, out, n); return; }
    #endif
        nnue_clip_plain(acc, out, n);
    }

    /* Use AVX2 (and VNNI where the CPU has it) when asked, else the x86-64-v2 kernels (tests
       run every path); returns the choice: 0 baseline, 1 AVX2, 2 AVX2 with VNNI. */
    static int nnue_set_simd(int avx2, int vnni) {
    #ifdef NNUE_X86
        nnue_avx2 = avx2 && __builtin_cpu_supports("avx2");
        nnue_vnni = nnue_avx2 && vnni && nnue_cpu_vnni();
        return nnue_avx2 + nnue_vnni;
    #else
        return 0;
    #endif
    }

    /* out[r] = sum_c w[r * cols + c] * x[c]; rows a multiple of 8, cols of 32. */
    static void nnue_dense(const int8_t* w, const uint8_t* x, int32_t* out, int rows, int cols) {
    #ifdef NNUE_X86
        if (nnue_use_vnni()) { nnue_dense_vnni(w, x, out, rows, cols); return; }
        if (nnue_use_avx2()) { nnue_dense_avx2(w, x, out, rows, cols); return; }
        nnue_dense_ssse3(w, x, out, rows, cols);
    #else
        for (int r = 0; r < rows; r++) {
            int32_t s = 0;
            for (int c = 0; c < cols; c++) s += (int32_t)w[r * cols + c] * x[c];
            out[r] = s;
        }
    #endif
    }
    """
    void nnue_dense(const int8_t* w, const uint8_t* x, int32_t* out, int rows,
                    int cols) noexcept nogil
    void nnue_apply(const int32_t* src, int32_t* dst, const int16_t* w, const int* added,
                    int n_add, const int* removed, int n_sub) noexcept nogil
    void nnue_clip(const int32_t* acc, uint8_t* out, int n) noexcept nogil
    int nnue_set_simd(int avx2, int vnni) noexcept nogil


def use_simd(bint avx2, bint vnni=True) -> int:
    """Choose the kernels, for tests and benchmarks: AVX2, and AVX-512 VNNI's vpdpbusd in the
    dense layers, where the CPU has them (the default), or the SSE (x86-64-v2) path; returns
    0 (SSE or plain C), 1 (AVX2) or 2 (AVX2 with VNNI)."""
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
        """Load and check a v1 ``.npz``; NnueFileError (a ValueError) names file and field."""
        from engines.nnue.netfile import load_arrays

        return cls(load_arrays(path), str(path))

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
            memcpy(after.v, before.v, sizeof(after.v))
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
        cdef int32_t fresh[FT_OUT]
        cdef int c
        self.checked += 1
        for c in range(2):
            self.net.refresh(p, c, fresh)
            if memcmp(fresh, entry.v[c], sizeof(fresh)) != 0:
                self.mismatches += 1
                return
