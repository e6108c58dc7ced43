"""Compiled pass of Hand & Till's multiclass AUC: the weighted wins of every
class's scores against every other class, from one sort of the rows by class
and own-class score.

Class i's own scores (column i on its rows) are sorted once with the weight at
or above each; a row b of class j finds its column-i score among them and adds
``w_b * (above + at / 2)`` to ``wins[i, j]`` (``at``: class-i weight tied with
b). Then A(i, j) = wins[i, j] / (W_i W_j) (papers/multiclass-roc-auc-method.txt,
"General Formula"; ties count one half as in eq. 10 of
papers/bootstrap-auc-estimators-632plus.txt).
"""
import numpy as np
from libc.stdlib cimport free, malloc

ctypedef Py_ssize_t idx_t

cdef enum:
    SCORE_BLOCK_VALUES = 65536  # scores of a block of rows (512 KiB: in L2)


cdef struct Buckets:
    # an index over a class's sorted scores value[lo:hi]: score v falls in
    # bucket min(last, (v - low) * scale) (monotone in v, rounding included),
    # first[u] is the first position whose bucket is at least u
    double low
    double scale
    idx_t last
    const idx_t* first


cdef inline idx_t _bucket(const Buckets* b, double v) noexcept nogil:
    """The bucket of a score v >= b.low."""
    cdef double u = (v - b.low) * b.scale  # NaN (inf * 0) and inf: the last bucket
    return <idx_t> u if u < b.last else b.last


cdef inline double _credit(const double* value, const double* at_or_above,
                           const double* above, idx_t lo, idx_t hi, double s,
                           const Buckets* buckets) noexcept nogil:
    """Weight of the sorted segment value[lo:hi] above s plus half of that tied
    with s. The lower bound of s lies between the first positions of s's
    bucket and of the next (every value in an earlier bucket is below s,
    every value in a later one above it), so a search of that stretch finds it."""
    cdef idx_t length, half, u
    if lo == hi or s > value[hi - 1]:
        return 0.0
    if s > value[lo]:
        u = _bucket(buckets, s)
        lo = buckets.first[u]
        hi = buckets.first[u + 1]
        length = hi - lo
        while length > 1:  # branch-free lower bound: lo stays at or below it
            half = length >> 1
            lo = lo + half if value[lo + half - 1] < s else lo
            length -= half
        lo += length > 0 and value[lo] < s
    if value[lo] == s:
        return 0.5 * (at_or_above[lo] + above[lo])
    return at_or_above[lo]


cdef void _index_buckets(const double* value, idx_t lo, idx_t hi, idx_t* first,
                         Buckets* buckets) noexcept nogil:
    """Buckets for value[lo:hi] (sorted, finite, not empty): as many as
    values, over [value[lo], value[hi - 1]]; first has hi - lo + 1 entries."""
    cdef double span = value[hi - 1] - value[lo]
    cdef idx_t p, u = 0
    buckets.low = value[lo]
    buckets.last = hi - lo - 1
    buckets.scale = buckets.last / span if span > 0.0 else 0.0  # inf: span subnormal
    buckets.first = first
    for p in range(lo, hi):
        while u <= _bucket(buckets, value[p]):
            first[u] = p
            u += 1
    while u <= buckets.last + 1:
        first[u] = hi
        u += 1


def pair_wins(const double[:, ::1] scores, const idx_t[::1] codes, const double[::1] weight,
              idx_t n_classes):
    """Weighted wins of every class's scores over every other class, from one
    sort of the rows by (class, own-class score).

    Each class i's own scores (column i on its rows) are sorted once, with
    the weight at or above each; every row b of another class j then finds
    its column-i score among them and adds ``w_b * (above + at / 2)`` to
    ``wins[i, j]``: an index of as many equal-width buckets as scores over
    their range narrows the search to one bucket (`_credit`), and rows go in
    blocks so that each class's sorted scores are searched by a block's rows
    in turn. A row's score of exactly 0 (most entries of a forest's class
    proportions at many classes) reads a credit computed once per class.
    O(n C log(n / C)) at worst for C classes instead of C sorts of all n
    rows, each wins[i, j] summed in row order; the wins are the rank sums of Hand & Till's
    A(i, j) (papers/multiclass-roc-auc-method.txt, "General Formula" and
    "A(i, j) computation"; ties count one half as in eq. 10 of
    papers/bootstrap-auc-estimators-632plus.txt).

    Parameters
    ----------
    scores : float64 (n, n_classes), C order
        Column i holds the score of class i; finite.
    codes : intp (n,)
        Class of each row, 0..n_classes-1.
    weight : float64 (n,)
        Non-negative case weights.
    n_classes : int

    Returns
    -------
    wins : ndarray (n_classes, n_classes)
        ``wins[i, j]`` = sum over rows b of class j of w_b times (the weight
        of class-i rows whose column-i score is above b's + half of those
        tied with it); the diagonal is 0.
    """
    cdef idx_t n = scores.shape[0], b, i, j, p, lo, hi, q
    cdef double s, wb
    if codes.shape[0] != n or weight.shape[0] != n or scores.shape[1] != n_classes:
        raise ValueError("scores must be (n, n_classes) with codes and weight of length n")
    for b in range(n):
        if codes[b] < 0 or codes[b] >= n_classes:
            raise ValueError("codes must lie in [0, n_classes)")
    wins_array = np.zeros((n_classes, n_classes))
    if n == 0:
        return wins_array
    codes_array = np.asarray(codes)
    own_array = np.asarray(scores)[np.arange(n), codes_array]
    order = np.argsort(own_array)
    order = order[np.argsort(codes_array[order], kind="stable")]  # by class, then own score
    start_array = np.zeros(n_classes + 1, dtype=np.intp)
    np.cumsum(np.bincount(codes_array, minlength=n_classes), out=start_array[1:])
    value_array = np.ascontiguousarray(own_array[order])
    weight_sorted = np.ascontiguousarray(np.asarray(weight)[order])
    at_or_above_array = np.empty(n + 1)
    above_array = np.empty(n + 1)
    credit_zero_array = np.empty(n_classes)
    bucket_first_array = np.empty(n + n_classes, dtype=np.intp)
    cdef const idx_t[::1] start = start_array
    cdef const double[::1] value = value_array, w_sorted = weight_sorted
    cdef double[::1] at_or_above = at_or_above_array, above = above_array
    cdef double[::1] credit_zero = credit_zero_array
    cdef idx_t[::1] bucket_first = bucket_first_array
    cdef double[:, ::1] wins = wins_array
    cdef idx_t first, last, block = max(16, SCORE_BLOCK_VALUES // n_classes)
    cdef Buckets* buckets = <Buckets*> malloc(n_classes * sizeof(Buckets))
    if buckets == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n_classes):
                lo = start[i]
                hi = start[i + 1]
                # runs of tied values from the top: at_or_above[p] is the weight of
                # the segment from p's run on, above[p] that of the runs after it
                s = 0.0
                p = hi
                while p > lo:
                    q = p - 1
                    while q > lo and value[q - 1] == value[p - 1]:
                        q -= 1
                    wb = s
                    for j in range(q, p):
                        s += w_sorted[j]
                    for j in range(q, p):
                        above[j] = wb
                        at_or_above[j] = s
                    p = q
                if hi > lo:
                    _index_buckets(&value[0], lo, hi, &bucket_first[lo + i], &buckets[i])
                credit_zero[i] = _credit(&value[0], &at_or_above[0], &above[0], lo, hi, 0.0,
                                         &buckets[i])
            # blocks of rows whose scores stay in cache while each class's
            # sorted scores are searched in turn (and its row of wins, in L1,
            # gathers their credits): every wins[i, j] adds its rows in row order
            first = 0
            while first < n:
                last = min(n, first + block)
                for i in range(n_classes):
                    for b in range(first, last):
                        wb = weight[b]
                        j = codes[b]
                        if wb == 0.0 or i == j:
                            continue
                        s = scores[b, i]
                        if s == 0.0:
                            wins[i, j] += wb * credit_zero[i]
                        else:
                            wins[i, j] += wb * _credit(&value[0], &at_or_above[0], &above[0],
                                                         start[i], start[i + 1], s, &buckets[i])
                first = last
    finally:
        free(buckets)
    return wins_array
