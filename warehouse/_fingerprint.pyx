"""64-bit fingerprints of strings for the key index's checked column (positions' FENs).

Each string is read 8 bytes at a time (little-endian words; the last, short word padded with
zeros), each word mixed into the state (murmur3's 64-bit finaliser of the word, then a rotate
and multiply of the state), and the state mixed with the string's length at the end. The
values are fixed by this code (not by a library's version): ``keyindex.CHECK_PRINT`` names
them, and a run with other fingerprints is rebuilt.
"""
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcpy

import numpy as np


cdef inline uint64_t fmix(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    h *= 0xc4ceb9fe1a85ec53ULL
    h ^= h >> 33
    return h


cdef inline uint64_t rotl(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint64_t one(const uint8_t* text, int64_t size) noexcept nogil:
    cdef uint64_t h = 0x9e3779b97f4a7c15ULL
    cdef uint64_t word
    cdef int64_t at = 0
    while at + 8 <= size:
        memcpy(&word, text + at, 8)
        h = rotl(h ^ fmix(word), 29) * 0x9e3779b97f4a7c15ULL + 0x52dce729ULL
        at += 8
    if at < size:
        word = 0
        memcpy(&word, text + at, size - at)
        h = rotl(h ^ fmix(word), 29) * 0x9e3779b97f4a7c15ULL + 0x52dce729ULL
    return fmix(h ^ <uint64_t>size)


def string_prints(const int64_t[::1] offsets, const uint8_t[::1] data) -> np.ndarray:
    """The fingerprint (uint64) of each string ``i`` of ``data[offsets[i]:offsets[i + 1]]``."""
    cdef Py_ssize_t count = offsets.shape[0] - 1 if offsets.shape[0] else 0
    out = np.empty(count, dtype=np.uint64)
    cdef uint64_t[::1] prints = out
    cdef Py_ssize_t i
    cdef const uint8_t* base = &data[0] if data.shape[0] else NULL
    with nogil:
        for i in range(count):
            prints[i] = one(base + offsets[i], offsets[i + 1] - offsets[i])
    return out
