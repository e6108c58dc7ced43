# The nsplit draw and the thresholds of the binned splitters (the in-memory
# BinnedSplitter and the Dask fit's HistogramSplitter): inline functions, so both draw
# the same buckets from the same random stream and write the same thresholds. Inline
# only: cimporting them needs no compiled module.
from libc.stdint cimport uint8_t, uint64_t

from ._random cimport random_below


cdef inline Py_ssize_t draw_buckets(uint64_t* rng_state, Py_ssize_t nsplit,
                                    Py_ssize_t n_occupied, const Py_ssize_t* occupied_bins,
                                    Py_ssize_t* positions, unsigned char* drawn,
                                    uint8_t* bin_target, Py_ssize_t* drawn_bins) noexcept nogil:
    """Draw nsplit of the first n_occupied - 1 occupied bins (uniformly, without
    replacement) and point every occupied bin at its bucket: the first drawn bin
    at or above it, or the last occupied bin above the last drawn one
    (bin_target, restored by the caller). Fills drawn_bins (ascending, the last
    occupied bin at the end) and returns their number, nsplit + 1.

    positions and drawn are work space of n_occupied entries; drawn is all 0 on
    entry and on return.
    """
    cdef Py_ssize_t m = nsplit, n_choices = n_occupied - 1
    cdef Py_ssize_t i, j, q, r, target, swap, n_buckets = 0, first = 0
    for i in range(n_choices):
        positions[i] = i
    for i in range(m):  # partial Fisher-Yates: positions[0:m] is the draw
        j = i + random_below(rng_state, n_choices - i)
        swap = positions[i]
        positions[i] = positions[j]
        positions[j] = swap
        drawn[positions[i]] = 1
    for q in range(n_occupied):  # ascending, so the drawn bins need no sort
        if q < n_choices and not drawn[q]:
            continue
        target = occupied_bins[q]
        for r in range(first, q + 1):
            bin_target[occupied_bins[r]] = <uint8_t> target
        drawn_bins[n_buckets] = target
        n_buckets += 1
        first = q + 1
    for i in range(m):
        drawn[positions[i]] = 0
    return n_buckets


cdef inline double bucket_threshold(const unsigned char* categorical,
                                    const double[:, ::1] edges, Py_ssize_t feature,
                                    Py_ssize_t bucket) noexcept nogil:
    """The upper edge of bin `bucket` of `feature` (codes <= bucket go left); 0
    for a categorical feature (categorical[feature] set; categorical NULL:
    none), whose splits are level sets."""
    if categorical != NULL and categorical[feature]:
        return 0.0
    return edges[feature, bucket]
