"""Where needles go in a sorted run of keys: ``numpy.searchsorted(haystack, needles)`` (side
"left": the first place whose key is not below the needle), compiled for the key index
(warehouse/keyindex.py).

numpy's binary search starts each needle from the whole array: in a run of 100M keys
(800 MB, memory-mapped) a needle costs about 27 probes spread over the array, most of them
cache and TLB misses, one after another. Zobrist keys (and the hashes of string keys) are
uniform, so a run's *directory* (the first place of each of 2^bits buckets of the key range,
by the keys' top bits) puts a needle within a bucket of a few dozen keys at once
(``bucketed_positions``: the bucket of a needle further on is fetched from memory while the
current one is searched, without branches); the directory itself is made by galloping
(``sorted_positions``: for ascending needles, each place searched for from the previous one
on, 1, 2, 4, ... keys, then a binary search in the last step). docs/experiments/scale.md,
"The key index's search", has the figures.
"""
from libc.stdint cimport int64_t, uint64_t

import numpy as np

cdef extern from *:
    void __builtin_prefetch(const void* address) nogil

# bucketed_positions asks the memory for the bucket of the needle this many needles ahead
# while it searches the current one, so the cache misses of several needles overlap (4 to
# 32 measured alike; 64 slower)
DEF AHEAD = 16


cdef inline uint64_t bucket_of(int64_t key, int shift) noexcept nogil:
    """The key's top ``64 - shift`` bits, the sign bit flipped: buckets in signed order."""
    return ((<uint64_t>key) ^ (1ULL << 63)) >> shift


def sorted_positions(const int64_t[::1] haystack, const int64_t[::1] needles):
    """For each needle (in ascending order), the first index of ``haystack`` (ascending,
    repeats allowed) whose key is at least the needle; ``len(haystack)`` past the last."""
    cdef Py_ssize_t n = haystack.shape[0], m = needles.shape[0]
    out = np.empty(m, dtype=np.int64)
    cdef int64_t[::1] at = out
    cdef Py_ssize_t i, lo = 0, hi, step, mid
    cdef int64_t x
    with nogil:
        for i in range(m):
            x = needles[i]
            # every key before lo is below the previous needle, so below x
            if lo < n and haystack[lo] < x:
                step = 1
                hi = lo + 1
                while hi < n and haystack[hi] < x:
                    lo = hi
                    step *= 2
                    hi = lo + step
                if hi > n:
                    hi = n
                # haystack[lo] < x, and hi == n or haystack[hi] >= x: the place is in (lo, hi]
                lo += 1
                while lo < hi:
                    mid = lo + (hi - lo) // 2
                    if haystack[mid] < x:
                        lo = mid + 1
                    else:
                        hi = mid
            at[i] = lo
    return out


def bucketed_positions(const int64_t[::1] haystack, const int64_t[::1] needles,
                       const int64_t[::1] starts, int shift):
    """For each needle (any order), the first index of ``haystack`` (ascending, repeats
    allowed) whose key is at least the needle. ``starts``: the haystack's directory, the first
    index of each bucket and the haystack's length after the last; a key's bucket is its top
    ``64 - shift`` bits, the sign bit flipped (so buckets follow the signed order); 1 <=
    ``shift`` <= 63."""
    cdef Py_ssize_t n = haystack.shape[0], m = needles.shape[0]
    out = np.empty(m, dtype=np.int64)
    cdef int64_t[::1] at = out
    cdef Py_ssize_t i, lo, size, half, ahead
    cdef int64_t x
    cdef uint64_t bucket
    if not 1 <= shift <= 63 or starts.shape[0] != (1 << (64 - shift)) + 1:
        raise ValueError(f"a directory of {starts.shape[0]} starts for shift {shift}")
    with nogil:
        for i in range(m):
            if i + AHEAD < m:
                ahead = starts[bucket_of(needles[i + AHEAD], shift)]
                if ahead < n:
                    __builtin_prefetch(&haystack[ahead])
            x = needles[i]
            bucket = bucket_of(x, shift)
            lo = starts[bucket]
            size = starts[bucket + 1] - lo
            if size > 0:
                # branchless: the comparison picks the half (a conditional move, no jump to
                # mispredict); the place is in [lo, lo + size]
                while size > 1:
                    half = size >> 1
                    lo = lo + half if haystack[lo + half] < x else lo
                    size -= half
                lo += haystack[lo] < x
            at[i] = lo
    return out
