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

ctypedef Py_ssize_t idx_t


cdef inline double _credit(const double* value, const double* at_or_above,
                           const double* above, idx_t lo, idx_t hi, double s) noexcept nogil:
    """Weight of the sorted segment value[lo:hi] above s plus half of that tied
    with s, from a lower-bound search."""
    cdef idx_t length = hi - lo, half
    if length == 0:
        return 0.0
    while length > 1:  # branch-free lower bound: lo stays at or below it
        half = length >> 1
        lo = lo + half if value[lo + half - 1] < s else lo
        length -= half
    lo += value[lo] < s
    if lo == hi:
        return 0.0
    if value[lo] == s:
        return 0.5 * (at_or_above[lo] + above[lo])
    return at_or_above[lo]


def pair_wins(const double[:, ::1] scores, const idx_t[::1] codes, const double[::1] weight,
              idx_t n_classes):
    """Weighted wins of every class's scores over every other class, from one
    sort of the rows by (class, own-class score).

    Each class i's own scores (column i on its rows) are sorted once, with
    the weight at or above each; every row b of another class j then finds
    its column-i score among them by binary search and adds
    ``w_b * (above + at / 2)`` to ``wins[i, j]``. A row's score of exactly 0
    (most entries of a forest's class proportions at many classes) reads a
    credit computed once per class. O(n C log(n / C)) for C classes instead
    of C sorts of all n rows; the wins are the rank sums of Hand & Till's
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
    wins_t_array = np.zeros((n_classes, n_classes))  # [j, i]: row b adds along i
    if n == 0:
        return wins_t_array
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
    cdef const idx_t[::1] start = start_array
    cdef const double[::1] value = value_array, w_sorted = weight_sorted
    cdef double[::1] at_or_above = at_or_above_array, above = above_array
    cdef double[::1] credit_zero = credit_zero_array
    cdef double[:, ::1] wins_t = wins_t_array
    cdef const double* row
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
            credit_zero[i] = _credit(&value[0], &at_or_above[0], &above[0], lo, hi, 0.0)
        for b in range(n):
            wb = weight[b]
            if wb == 0.0:
                continue
            j = codes[b]
            row = &scores[b, 0]
            for i in range(n_classes):
                if i == j:
                    continue
                s = row[i]
                if s == 0.0:
                    wins_t[j, i] += wb * credit_zero[i]
                else:
                    wins_t[j, i] += wb * _credit(&value[0], &at_or_above[0], &above[0],
                                                 start[i], start[i + 1], s)
    return wins_t_array.T.copy()
