# Sorting one feature's values in a node together with their sample indices.
from libc.stdint cimport uint64_t

from ._criterion cimport X_t, idx_t

cdef enum:
    RADIX_BITS = 11                       # digit width of the radix passes
    RADIX_BUCKETS = 2048                  # 2 ** RADIX_BITS
    RADIX_MIN_SIZE = 1024                 # radix sort from this many values on

cdef void sort_by_value(X_t* values, idx_t* samples, idx_t n, uint64_t* keys,
                        uint64_t* scratch, idx_t* histogram) noexcept nogil

cdef void sort_doubles(double* values, idx_t n) noexcept nogil

cdef void sort_indices(idx_t* values, idx_t n) noexcept nogil
