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

cimport cython
cimport numpy as cnp
from libc.math cimport isfinite
from libc.stdlib cimport free, malloc

cnp.import_array()

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


cdef double _index_class(const double* value, const double* weight, idx_t lo, idx_t hi,
                         double* at_or_above, double* above, idx_t* first,
                         Buckets* buckets) noexcept nogil:
    """A class's sorted scores value[lo:hi] (weights alongside) made ready for
    `_credit`: at_or_above[p] is the weight of the segment from p's run of
    tied values on, above[p] that of the runs after it, and the buckets;
    returns the credit of a score of 0."""
    cdef double s = 0.0, before
    cdef idx_t p = hi, q, j
    while p > lo:  # runs of tied values, from the top
        q = p - 1
        while q > lo and value[q - 1] == value[p - 1]:
            q -= 1
        before = s
        for j in range(q, p):
            s += weight[j]
        for j in range(q, p):
            above[j] = before
            at_or_above[j] = s
        p = q
    if hi > lo:
        _index_buckets(value, lo, hi, first, buckets)
    return _credit(value, at_or_above, above, lo, hi, 0.0, buckets)


cdef void _check_codes(const idx_t[::1] codes, idx_t n_classes) except *:
    cdef idx_t b
    for b in range(codes.shape[0]):
        if codes[b] < 0 or codes[b] >= n_classes:
            raise ValueError("codes must lie in [0, n_classes)")


@cython.final
cdef class _ClassScores:
    """Every class's own scores (column i on the rows of class i), sorted
    once, with what `_credit` needs to place another row's score among them
    (`_index_class`). The pointers are into the arrays kept here."""
    cdef object _arrays
    cdef const idx_t* start        # class i's scores are value[start[i]:start[i + 1]]
    cdef const double* value
    cdef double* at_or_above
    cdef double* above
    cdef double* credit_zero       # the credit of a score of 0, per class
    cdef Buckets* buckets

    def __cinit__(self, own, const idx_t[::1] codes, weight, idx_t n_classes):
        cdef idx_t n = codes.shape[0], i
        codes_array = np.asarray(codes)
        order = np.argsort(own)
        order = order[np.argsort(codes_array[order], kind="stable")]  # by class, then score
        start_array = np.zeros(n_classes + 1, dtype=np.intp)
        np.cumsum(np.bincount(codes_array, minlength=n_classes), out=start_array[1:])
        value_array = np.ascontiguousarray(np.asarray(own, dtype=float)[order])
        weight_sorted = np.ascontiguousarray(np.asarray(weight, dtype=float)[order])
        at_or_above_array = np.empty(n + 1)
        above_array = np.empty(n + 1)
        credit_zero_array = np.empty(n_classes)
        bucket_first_array = np.empty(n + n_classes, dtype=np.intp)
        self._arrays = (start_array, value_array, weight_sorted, at_or_above_array,
                        above_array, credit_zero_array, bucket_first_array)
        cdef const double* w_sorted = <const double*> cnp.PyArray_DATA(weight_sorted)
        cdef idx_t* first = <idx_t*> cnp.PyArray_DATA(bucket_first_array)
        self.start = <const idx_t*> cnp.PyArray_DATA(start_array)
        self.value = <const double*> cnp.PyArray_DATA(value_array)
        self.at_or_above = <double*> cnp.PyArray_DATA(at_or_above_array)
        self.above = <double*> cnp.PyArray_DATA(above_array)
        self.credit_zero = <double*> cnp.PyArray_DATA(credit_zero_array)
        self.buckets = <Buckets*> malloc(max(n_classes, 1) * sizeof(Buckets))
        if self.buckets == NULL:
            raise MemoryError()
        with nogil:
            for i in range(n_classes):
                self.credit_zero[i] = _index_class(
                    self.value, w_sorted, self.start[i], self.start[i + 1], self.at_or_above,
                    self.above, &first[self.start[i] + i], &self.buckets[i])

    def __dealloc__(self):
        free(self.buckets)


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
    cdef idx_t n = scores.shape[0], b, i, j
    cdef double s, wb
    if codes.shape[0] != n or weight.shape[0] != n or scores.shape[1] != n_classes:
        raise ValueError("scores must be (n, n_classes) with codes and weight of length n")
    _check_codes(codes, n_classes)
    wins_array = np.zeros((n_classes, n_classes))
    if n == 0:
        return wins_array
    own = np.asarray(scores)[np.arange(n), np.asarray(codes)]
    cdef _ClassScores classes = _ClassScores(own, codes, weight, n_classes)
    cdef double[:, ::1] wins = wins_array
    cdef idx_t first = 0, last, block = max(16, SCORE_BLOCK_VALUES // n_classes)
    with nogil:
        # blocks of rows whose scores stay in cache while each class's sorted
        # scores are searched in turn (and its row of wins, in L1, gathers
        # their credits): every wins[i, j] adds its rows in row order
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
                        wins[i, j] += wb * classes.credit_zero[i]
                    else:
                        wins[i, j] += wb * _credit(classes.value, classes.at_or_above,
                                                     classes.above, classes.start[i],
                                                     classes.start[i + 1], s,
                                                     &classes.buckets[i])
            first = last
    return wins_array


def pair_wins_sparse(const idx_t[::1] col_start, const idx_t[::1] col_rows,
                     const double[::1] col_values, const idx_t[::1] codes, idx_t n_classes):
    """`pair_wins` with unit weights, from scores held column by column with
    only the nonzero ones stored (CSC; no (row, column) stored twice).

    Column i's stored scores are searched among class i's sorted scores
    (`_credit`); the other rows of each class j score 0 on column i and
    together add their count times the credit of 0. The work is the stored
    scores', not n C. With unit weights every credit is a multiple of 1/2
    below 2^53, so every sum is exact and the wins are `pair_wins`' to the bit.

    Parameters
    ----------
    col_start : intp (n_classes + 1,)
        Column i's scores are ``col_values[col_start[i]:col_start[i + 1]]``,
        of the rows ``col_rows`` alongside.
    col_rows : intp, col_values : float64 (finite)
    codes : intp (n,)
        Class of each row, 0..n_classes-1.
    n_classes : int

    Returns
    -------
    wins : ndarray (n_classes, n_classes), as `pair_wins`'
    """
    cdef idx_t n = codes.shape[0], nnz = col_rows.shape[0], i, j, p, r
    if (col_start.shape[0] != n_classes + 1 or col_values.shape[0] != nnz
            or col_start[0] != 0 or col_start[n_classes] != nnz):
        raise ValueError("col_start, col_rows and col_values do not describe n_classes columns")
    for i in range(n_classes):
        if col_start[i + 1] < col_start[i]:
            raise ValueError("col_start must not decrease")
    for p in range(nnz):
        if col_rows[p] < 0 or col_rows[p] >= n:
            raise ValueError("col_rows must lie in [0, len(codes))")
        if not isfinite(col_values[p]):
            raise ValueError("the scores must be finite")
    _check_codes(codes, n_classes)
    wins_array = np.zeros((n_classes, n_classes))
    if n == 0:
        return wins_array
    own_array = np.zeros(n)
    cdef double[::1] own = own_array
    for i in range(n_classes):  # each row's score on its own class's column
        for p in range(col_start[i], col_start[i + 1]):
            if codes[col_rows[p]] == i:
                own[col_rows[p]] = col_values[p]
    cdef _ClassScores classes = _ClassScores(own_array, codes, np.ones(n), n_classes)
    count_array = np.bincount(np.asarray(codes), minlength=n_classes).astype(np.intp)
    stored_array = np.zeros(n_classes, dtype=np.intp)
    cdef const idx_t[::1] count = count_array
    cdef idx_t[::1] stored = stored_array  # per class j: its rows stored in column i
    cdef double[:, ::1] wins = wins_array
    with nogil:
        for i in range(n_classes):
            for p in range(col_start[i], col_start[i + 1]):
                j = codes[col_rows[p]]
                if j == i:
                    continue
                wins[i, j] += _credit(classes.value, classes.at_or_above, classes.above,
                                      classes.start[i], classes.start[i + 1], col_values[p],
                                      &classes.buckets[i])
                stored[j] += 1
            for j in range(n_classes):
                if j != i:
                    wins[i, j] += classes.credit_zero[i] * (count[j] - stored[j])
                stored[j] = 0
    return wins_array
