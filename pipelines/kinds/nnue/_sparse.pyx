"""The NNUE trainer's compiled sparse kernels (sparse.h): the feature transformer on the active
features only, forward and backward, and the whole perspective net fused. Called by
:mod:`pipelines.kinds.nnue.sparse`'s autograd functions on the CPU tensors' numpy views;
every array is C-contiguous float32, indices int32, and the GIL is released."""
from libc.stdint cimport int32_t, int64_t

cdef extern from "sparse.h" nogil:
    void ft_forward(const int32_t* idx, int64_t n, int k, const float* w, int64_t h,
                    int32_t pad, float* out, int threads)
    void ft_backward(const int32_t* idx, int64_t n, int k, const float* g, int64_t h,
                     int32_t pad, float* gw, int threads)
    void psq_forward(const int32_t* idx, int64_t n, int k, const float* w, const float* b,
                     const float* w_out, const int64_t* bucket, int64_t h, int32_t pad,
                     int screlu, float* acc, float* y, int threads)
    void psq_backward(const int32_t* idx, int64_t n, int k, const float* acc, const float* dy,
                      const float* w_out, const int64_t* bucket, int64_t h, int32_t pad,
                      int screlu, float* gw, float* gb, float* gw_out, int threads)

BLOCK = 16


def feature_sums(const int32_t[:, ::1] idx, const float[:, ::1] w, int pad,
                 float[:, ::1] out, int threads):
    """out[m] = the sum of w's rows idx[m] (pad skipped)."""
    if idx.shape[0] == 0:
        return
    with nogil:
        ft_forward(&idx[0, 0], idx.shape[0], idx.shape[1], &w[0, 0], w.shape[1], pad,
                   &out[0, 0], threads)


def feature_sums_backward(const int32_t[:, ::1] idx, const float[:, ::1] g, int pad,
                          float[:, ::1] gw, int threads):
    """gw[idx[m]] += g[m] for every row m (pad skipped); w's columns a multiple of 16."""
    if idx.shape[0] == 0:
        return
    with nogil:
        ft_backward(&idx[0, 0], idx.shape[0], idx.shape[1], &g[0, 0], g.shape[1], pad,
                    &gw[0, 0], threads)


def perspective_forward(const int32_t[:, :, ::1] idx, const float[:, ::1] w,
                        const float[::1] b, const float[:, ::1] w_out,
                        const int64_t[::1] bucket, int pad, bint screlu,
                        float[:, :, ::1] acc, float[::1] y, int threads):
    """The perspective net's accumulators (n, 2, h) and outputs y (n,) without the output
    bias; ``bucket`` picks each row's output weights (an empty array: the only row)."""
    if idx.shape[0] == 0:
        return
    cdef const int64_t* buckets = &bucket[0] if bucket.shape[0] else NULL
    with nogil:
        psq_forward(&idx[0, 0, 0], idx.shape[0], idx.shape[2], &w[0, 0], &b[0], &w_out[0, 0],
                    buckets, w.shape[1], pad, screlu, &acc[0, 0, 0], &y[0], threads)


def perspective_backward(const int32_t[:, :, ::1] idx, const float[:, :, ::1] acc,
                         const float[::1] dy, const float[:, ::1] w_out,
                         const int64_t[::1] bucket, int pad, bint screlu, float[:, ::1] gw,
                         float[::1] gb, float[:, ::1] gw_out, int threads):
    """The gradients of w, b and w_out (added to ``gw``, ``gb``, ``gw_out``) from dy."""
    if idx.shape[0] == 0:
        return
    cdef const int64_t* buckets = &bucket[0] if bucket.shape[0] else NULL
    with nogil:
        psq_backward(&idx[0, 0, 0], idx.shape[0], idx.shape[2], &acc[0, 0, 0], &dy[0],
                     &w_out[0, 0], buckets, gw.shape[1], pad, screlu, &gw[0, 0], &gb[0],
                     &gw_out[0, 0], threads)
