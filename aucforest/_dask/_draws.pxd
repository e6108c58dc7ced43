# The counter-based hash of the Dask fit's draws (`aucforest._dask._draws`): inline
# functions, so that the modules drawing from a key (`_histogram_splitter`'s feature
# order and bin draws) cimport the same hash. Inline only: cimporting them needs no
# compiled module.
from libc.stdint cimport uint64_t


cdef inline uint64_t _mix(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t _hash(uint64_t key, uint64_t counter) noexcept nogil:
    return _mix(key + (counter + 1) * 0x9E3779B97F4A7C15ULL)


cdef inline double _uniform(uint64_t h) noexcept nogil:
    return (h >> 11) * (1.0 / 9007199254740992.0)   # [0, 1), 53 bits
