# cython: language_level=3
"""Counter-based draws of the Dask fit (`aucforest._dask`).

A row's multiplicity in a tree is a function of (key of the tree, global row
index) only (SplitMix64's output function of ``key + (row + 1) * golden``,
Steele, Lea & Flood 2014), so it does not depend on how the rows are
partitioned. The hash (`_mix`, `_hash`, `_uniform`) is inline in `_draws.pxd`.
"""
from libc.math cimport exp
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

import numpy as np

from aucforest._criterion cimport idx_t

cdef enum:
    MAX_COUNT = 255           # a drawn multiplicity is at most this (uint8)

GOLDEN = 0x9E3779B97F4A7C15
MAX_MULTIPLICITY = MAX_COUNT  # for callers sizing sums of multiplicities (`histograms`)


def hash_key(uint64_t key, uint64_t counter):
    """The counter-based hash of (key, counter): a new 64-bit key."""
    return _hash(key, counter)


def row_uniforms(uint64_t key, int64_t start, idx_t n):
    """Uniforms in [0, 1) of the global rows start..start + n - 1 under key."""
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] u = out
    cdef idx_t i
    with nogil:
        for i in range(n):
            u[i] = _uniform(_hash(key, <uint64_t> (start + i)))
    return out


def draw_counts(const uint64_t[::1] tree_keys, const int64_t[::1] rows, const int32_t[::1] y,
                const double[:, ::1] rates, bint poisson):
    """Multiplicity of the global rows ``rows`` in each tree (uint8, trees x rows).

    Row i of class y[i] is drawn Bernoulli(rates[t, y[i]]) times (subsampling
    without replacement) or Poisson(rates[t, y[i]]) times (with replacement,
    by inversion of the row's uniform, at most MAX_COUNT); y[i] < 0: never.
    """
    cdef idx_t T = tree_keys.shape[0], n = y.shape[0], t, i, k
    if rows.shape[0] != n:
        raise ValueError("rows and y must have the same length")
    out = np.zeros((T, n), dtype=np.uint8)
    cdef uint8_t[:, ::1] counts = out
    cdef double u, lam, p, cdf
    with nogil:
        for t in range(T):
            for i in range(n):
                if y[i] < 0:
                    continue
                lam = rates[t, y[i]]
                u = _uniform(_hash(tree_keys[t], <uint64_t> rows[i]))
                if not poisson:
                    counts[t, i] = u < lam
                    continue
                k = 0
                p = exp(-lam)
                cdf = p
                while u >= cdf and k < MAX_COUNT:
                    k += 1
                    p *= lam / k
                    cdf += p
                counts[t, i] = <uint8_t> k
    return out
