/* The NNUE trainer's sparse kernels (issue 47), included by pipelines/kinds/nnue/_sparse.pyx.

   A position sets about 30 of the feature transformer's inputs (768 for psq768, 41,024 and the
   factoriser's for HalfKP), so its accumulator is the sum of ~30 rows of the weight table, and
   the table's gradient is those rows plus the accumulator's gradient: a gather-sum forward and
   a scatter-add backward, nnue-pytorch's feature transformer on a CPU. A dense first layer
   multiplies all the table's rows.

   - ft_forward / ft_backward: one table, any number of active rows per position (padding
     skipped): what the HalfKP net's embedding tables are.
   - psq_forward / psq_backward: the whole perspective net 768 -> H x2 -> 1 (or one output of
     several buckets) fused, so each position's accumulators are read once each way: accumulate,
     clip (and square: screlu), dot with the output weights; backward the same in reverse.

   Parallel with OpenMP: forward over positions; backward over columns of the table (a column
   of every row belongs to one thread, so the scatter-add has no conflicts and no reduction).
   Columns go in blocks of 16 floats (one AVX-512 register); the loops are plain C that gcc
   vectorises, compiled once per instruction set (target_clones: AVX-512, AVX2, the baseline)
   and chosen at load time by the CPU. */
#ifndef CHESSLAB_NNUE_SPARSE_H
#define CHESSLAB_NNUE_SPARSE_H

#include <stdint.h>
#include <omp.h>

#define BLOCK 16

/* 16 floats (one AVX-512 register, two AVX2 ones): gcc's vector extension, so every build of
   a function below does the block's arithmetic in whole registers; vload/vstore are unaligned. */
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
typedef float vf_unaligned __attribute__((vector_size(64), aligned(4)));

#define vload(p) (*(const vf_unaligned*)(p))
#define vstore(p, v) (*(vf_unaligned*)(p) = (v))
/* where(mask, a, b): a where the comparison mask is set, else b (lane by lane). */
#define where(mask, a, b) ((vf)(((vi)(a) & (mask)) | ((vi)(b) & ~(mask))))
/* clip(v, 0, 1) */
#define clip01(v, zero, one) where((v) > (one), (one), where((v) < (zero), (zero), (v)))

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPARSE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SPARSE_CLONES
#endif

/* out[m, :] = sum of w[f, :] over the row's active features f (pad skipped), 64 columns at a
   time (four registers of sums), then 16. */
#define FT_GATHER(VECTORS)                                                                \
    {                                                                                     \
        vf acc[VECTORS];                                                                  \
        for (int j = 0; j < VECTORS; j++) acc[j] = (vf){0};                               \
        for (int i = 0; i < k; i++) {                                                     \
            if (row[i] == pad) continue;                                                  \
            const float* wr = w + (int64_t)row[i] * h + c;                                \
            for (int j = 0; j < VECTORS; j++) acc[j] += vload(wr + j * BLOCK);            \
        }                                                                                 \
        for (int j = 0; j < VECTORS; j++) vstore(o + c + j * BLOCK, acc[j]);              \
    }

SPARSE_CLONES
static void ft_rows(const int32_t* idx, int64_t m0, int64_t m1, int k, const float* w, int64_t h,
                    int32_t pad, float* out) {
    for (int64_t m = m0; m < m1; m++) {
        const int32_t* row = idx + m * k;
        float* o = out + m * h;
        int64_t c = 0;
        for (; c + 4 * BLOCK <= h; c += 4 * BLOCK) FT_GATHER(4)
        for (; c < h; c += BLOCK) FT_GATHER(1)
    }
}

/* gw[f, c0:c1] += g[m, c0:c1] for every active feature f of every row, a chunk of VECTORS
   blocks at a time. */
#define FT_SCATTER(VECTORS)                                                               \
    {                                                                                     \
        vf gv[VECTORS];                                                                   \
        for (int j = 0; j < VECTORS; j++) gv[j] = vload(gr + c + j * BLOCK);              \
        for (int i = 0; i < k; i++) {                                                     \
            if (row[i] == pad) continue;                                                  \
            float* wr = gw + (int64_t)row[i] * h + c;                                     \
            for (int j = 0; j < VECTORS; j++)                                             \
                vstore(wr + j * BLOCK, vload(wr + j * BLOCK) + gv[j]);                    \
        }                                                                                 \
    }

SPARSE_CLONES
static void ft_columns(const int32_t* idx, int64_t n, int k, const float* g, int64_t h,
                       int32_t pad, float* gw, int64_t c0, int64_t c1) {
    for (int64_t m = 0; m < n; m++) {
        const int32_t* row = idx + m * k;
        const float* gr = g + m * h;
        int64_t c = c0;
        for (; c + 4 * BLOCK <= c1; c += 4 * BLOCK) FT_SCATTER(4)
        for (; c < c1; c += BLOCK) FT_SCATTER(1)
    }
}

/* The column blocks [c0, c1) of thread t of nt over h columns (h a multiple of BLOCK). */
static inline void column_share(int64_t h, int t, int nt, int64_t* c0, int64_t* c1) {
    int64_t blocks = h / BLOCK;
    *c0 = blocks * t / nt * BLOCK;
    *c1 = blocks * (t + 1) / nt * BLOCK;
}

static void ft_forward(const int32_t* idx, int64_t n, int k, const float* w, int64_t h,
                       int32_t pad, float* out, int threads) {
    #pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        ft_rows(idx, n * t / nt, n * (t + 1) / nt, k, w, h, pad, out);
    }
}

static void ft_backward(const int32_t* idx, int64_t n, int k, const float* g, int64_t h,
                        int32_t pad, float* gw, int threads) {
    #pragma omp parallel num_threads(threads)
    {
        int64_t c0, c1;
        column_share(h, omp_get_thread_num(), omp_get_num_threads(), &c0, &c1);
        if (c1 > c0) ft_columns(idx, n, k, g, h, pad, gw, c0, c1);
    }
}

/* Rows m0..m1 of the perspective net: acc[m, p, :] = b + sum of w[f] over perspective p's
   features; y[m] = sum over p, c of act(acc[m, p, c]) * w_out[bucket[m], p * h + c], act the
   clipped ReLU clip(x, 0, 1) or its square. */
/* One chunk of VECTORS blocks (c.. c + VECTORS * BLOCK) of a perspective's accumulator: the
   bias plus the active rows (each row's chunk is contiguous: a few cache lines), stored, then
   clipped (squared) and multiplied into dot. */
#define PSQ_CHUNK(VECTORS)                                                                \
    {                                                                                     \
        vf v[VECTORS];                                                                    \
        for (int j = 0; j < VECTORS; j++) v[j] = vload(b + c + j * BLOCK);                \
        for (int i = 0; i < k; i++) {                                                     \
            if (row[i] == pad) continue;                                                  \
            const float* wr = w + (int64_t)row[i] * h + c;                                \
            for (int j = 0; j < VECTORS; j++) v[j] += vload(wr + j * BLOCK);              \
        }                                                                                 \
        for (int j = 0; j < VECTORS; j++) {                                               \
            vstore(a + c + j * BLOCK, v[j]);                                              \
            vf x = clip01(v[j], zero, one);                                               \
            dot += (screlu ? x * x : x) * vload(wo + p * h + c + j * BLOCK);              \
        }                                                                                 \
    }

SPARSE_CLONES
static void psq_rows(const int32_t* idx, int64_t m0, int64_t m1, int k, const float* w,
                     const float* b, const float* w_out, const int64_t* bucket, int64_t h,
                     int32_t pad, int screlu, float* acc, float* y) {
    const vf zero = {0}, one = zero + 1.0f;
    for (int64_t m = m0; m < m1; m++) {
        const float* wo = w_out + (bucket ? bucket[m] : 0) * 2 * h;
        vf dot = zero;
        for (int p = 0; p < 2; p++) {
            const int32_t* row = idx + (m * 2 + p) * k;
            float* a = acc + (m * 2 + p) * h;
            int64_t c = 0;
            for (; c + 4 * BLOCK <= h; c += 4 * BLOCK) PSQ_CHUNK(4)
            for (; c < h; c += BLOCK) PSQ_CHUNK(1)
        }
        float total = 0.0f;
        for (int j = 0; j < BLOCK; j++) total += dot[j];
        y[m] = total;
    }
}

/* One chunk of the backward pass: d acc of VECTORS blocks, then added to every active row's
   chunk, the bias's and (times the activation) the output weights'. */
#define PSQ_GRAD_CHUNK(VECTORS)                                                           \
    {                                                                                     \
        vf d[VECTORS];                                                                    \
        for (int j = 0; j < VECTORS; j++) {                                               \
            int64_t cj = c + j * BLOCK;                                                   \
            vf v = vload(a + cj);                                                         \
            vf x = clip01(v, zero, one);                                                  \
            vf slope = where((v > zero) & (v < one), screlu ? x + x : one, zero);         \
            d[j] = g * vload(w_out + o + p * h + cj) * slope;                             \
            vstore(gw_out + o + p * h + cj,                                               \
                   vload(gw_out + o + p * h + cj) + g * (screlu ? x * x : x));            \
            vstore(gb + cj, vload(gb + cj) + d[j]);                                       \
        }                                                                                 \
        for (int i = 0; i < k; i++) {                                                     \
            if (row[i] == pad) continue;                                                  \
            float* wr = gw + (int64_t)row[i] * h + c;                                     \
            for (int j = 0; j < VECTORS; j++)                                             \
                vstore(wr + j * BLOCK, vload(wr + j * BLOCK) + d[j]);                     \
        }                                                                                 \
    }

SPARSE_CLONES
static void psq_columns(const int32_t* idx, int64_t n, int k, const float* acc, const float* dy,
                        const float* w_out, const int64_t* bucket, int64_t h, int32_t pad,
                        int screlu, float* gw, float* gb, float* gw_out, int64_t c0,
                        int64_t c1) {
    const vf zero = {0}, one = zero + 1.0f;
    for (int64_t m = 0; m < n; m++) {
        int64_t o = (bucket ? bucket[m] : 0) * 2 * h;
        vf g = zero + dy[m];
        for (int p = 0; p < 2; p++) {
            const int32_t* row = idx + (m * 2 + p) * k;
            const float* a = acc + (m * 2 + p) * h;
            int64_t c = c0;
            for (; c + 4 * BLOCK <= c1; c += 4 * BLOCK) PSQ_GRAD_CHUNK(4)
            for (; c < c1; c += BLOCK) PSQ_GRAD_CHUNK(1)
        }
    }
}

static void psq_forward(const int32_t* idx, int64_t n, int k, const float* w, const float* b,
                        const float* w_out, const int64_t* bucket, int64_t h, int32_t pad,
                        int screlu, float* acc, float* y, int threads) {
    #pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        psq_rows(idx, n * t / nt, n * (t + 1) / nt, k, w, b, w_out, bucket, h, pad, screlu,
                 acc, y);
    }
}

static void psq_backward(const int32_t* idx, int64_t n, int k, const float* acc,
                         const float* dy, const float* w_out, const int64_t* bucket, int64_t h,
                         int32_t pad, int screlu, float* gw, float* gb, float* gw_out,
                         int threads) {
    #pragma omp parallel num_threads(threads)
    {
        int64_t c0, c1;
        column_share(h, omp_get_thread_num(), omp_get_num_threads(), &c0, &c1);
        if (c1 > c0) psq_columns(idx, n, k, acc, dy, w_out, bucket, h, pad, screlu, gw, gb,
                                 gw_out, c0, c1);
    }
}

#endif
