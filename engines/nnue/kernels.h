/* The NNUE's SIMD kernels, included by engines/nnue/network.pyx (cdef extern from "kernels.h").

   The first dense layer is 16,384 multiply-adds per evaluation, most of the NNUE's cost. It
   multiplies the clipped inputs (uint8, 0..127) by int8 weights with pmaddubsw, exact here
   because a pair sums to at most 2 * 127 * 128 = 32,512 < 32,767 (Stockfish does the same),
   four rows at a time. x86-64-v2 (the build's baseline) has SSSE3 and SSE4.1; AVX2 is used
   when the CPU has it, and AVX-512 VNNI's vpdpbusd (the three steps in one) where it has that
   too (checked once); other machines get plain C loops. On the development machine (2 cores)
   VNNI gives 1.12 times AVX2's nodes/s and AVX2 1.8 times SSE's (benchmarks/nnue.py
   --kernels).

   What network.pyx calls: nnue_dense, nnue_apply, nnue_clip and nnue_set_simd (declared
   there); everything else here is static to the one translation unit that includes it. */
#ifndef CHESSLAB_NNUE_KERNELS_H
#define CHESSLAB_NNUE_KERNELS_H

#include <stdint.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NNUE_X86 1
static int nnue_avx2 = -1;   /* unknown until first used */
static int nnue_vnni = -1;
static int nnue_avx512 = -1;  /* the psq768 dot product's AVX-512 BW path */

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

/* Plain loops that gcc vectorises, cloned for AVX-512 (BW: 32 int16 lanes), AVX2 and the
   baseline (picked at load). */
#if defined(__x86_64__) && defined(__GNUC__)
#define NNUE_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
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
    nnue_avx512 = nnue_avx2 && vnni && __builtin_cpu_supports("avx512bw");
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

/* --- The perspective (768 -> N x2 -> 1) net: int16 accumulators of width n (a multiple of
   16), its weight rows n wide, row 768 all zeros (the padding feature). */

/* dst = src + a0 + a1 - s0 - s1 (rows; a move changes at most two columns each way: a
   missing one is the zero row). */
NNUE_CLONES
static void psq_apply(const int16_t* src, int16_t* dst, const int16_t* a0,
                      const int16_t* a1, const int16_t* s0, const int16_t* s1, int n) {
    for (int i = 0; i < n; i++)
        dst[i] = (int16_t)(src[i] + a0[i] + a1[i] - s0[i] - s1[i]);
}

/* dst += row (the rebuild of an accumulator). */
NNUE_CLONES
static void psq_add(int16_t* dst, const int16_t* row, int n) {
    for (int i = 0; i < n; i++) dst[i] = (int16_t)(dst[i] + row[i]);
}

#ifdef NNUE_X86
/* sum_i clip(x[i], 0, qa) * w[i] (squared: clip(x[i])^2 * w[i]) with pmaddwd; exact for
   |w| <= 127, qa <= 255, n <= 1024: a lane's squared sum stays under 2^31 (64 pair sums of at most
   2 * 255 * 32,385), and mullo's v * w fits int16 (255 * 127). */
__attribute__((target("avx2")))
static int64_t psq_dot_avx2(const int16_t* x, const int16_t* w, int n, int qa, int squared) {
    const __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi16((int16_t)qa);
    __m256i sum = _mm256_setzero_si256();
    for (int i = 0; i < n; i += 16) {
        __m256i v = _mm256_min_epi16(_mm256_max_epi16(
            _mm256_loadu_si256((const __m256i*)(x + i)), zero), top);
        __m256i wk = _mm256_loadu_si256((const __m256i*)(w + i));
        sum = _mm256_add_epi32(sum, squared
            ? _mm256_madd_epi16(_mm256_mullo_epi16(v, wk), v) : _mm256_madd_epi16(v, wk));
    }
    int32_t lanes[8];   /* each under 2^30, their total not: summed in 64 bits */
    _mm256_storeu_si256((__m256i*)lanes, sum);
    int64_t total = 0;
    for (int k = 0; k < 8; k++) total += lanes[k];
    return total;
}

/* psq_dot_avx2 with 32 int16 lanes (AVX-512 BW); the same sums, so the same exact total (a
   lane adds at most n / 32 pair sums of 2 * 255 * 32,385: under 2^31 for n <= 1024). */
__attribute__((target("avx512bw")))
static int64_t psq_dot_avx512(const int16_t* x, const int16_t* w, int n, int qa, int squared) {
    const __m512i zero = _mm512_setzero_si512(), top = _mm512_set1_epi16((int16_t)qa);
    __m512i sum = _mm512_setzero_si512();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512i v = _mm512_min_epi16(_mm512_max_epi16(_mm512_loadu_si512(x + i), zero), top);
        __m512i wk = _mm512_loadu_si512(w + i);
        sum = _mm512_add_epi32(sum, squared
            ? _mm512_madd_epi16(_mm512_mullo_epi16(v, wk), v) : _mm512_madd_epi16(v, wk));
    }
    int32_t lanes[16];
    _mm512_storeu_si512(lanes, sum);
    int64_t total = 0;
    for (int k = 0; k < 16; k++) total += lanes[k];
    if (i < n) total += psq_dot_avx2(x + i, w + i, n - i, qa, squared);   /* n % 32 == 16 */
    return total;
}

static inline int nnue_use_avx512(void) {
    if (nnue_avx512 < 0) nnue_avx512 = nnue_use_avx2() && __builtin_cpu_supports("avx512bw");
    return nnue_avx512;
}
#endif

static int64_t psq_dot(const int16_t* x, const int16_t* w, int n, int qa, int squared) {
#ifdef NNUE_X86
    if (nnue_use_avx512()) return psq_dot_avx512(x, w, n, qa, squared);
    if (nnue_use_avx2()) return psq_dot_avx2(x, w, n, qa, squared);
#endif
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        int64_t v = x[i] < 0 ? 0 : (x[i] > qa ? qa : x[i]);
        total += (squared ? v * v : v) * w[i];
    }
    return total;
}

#endif  /* CHESSLAB_NNUE_KERNELS_H */
