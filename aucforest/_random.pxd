# Random numbers for the compiled kernels: SplitMix64 (Steele, Lea & Flood 2014), one
# 64-bit state per stream. Inline only: cimporting it needs no compiled module.
from libc.stdint cimport uint64_t


cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    """Advance `state` and return the next 64-bit output."""
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline Py_ssize_t random_below(uint64_t* state, Py_ssize_t n) noexcept nogil:
    """A draw from 0..n-1 (n >= 1); the modulo bias is below n / 2**64."""
    return <Py_ssize_t> (splitmix64(state) % <uint64_t> n)
