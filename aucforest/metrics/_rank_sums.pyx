"""Compiled pass of Hand & Till's multiclass AUC: the weighted wins of one
class's score column against every class, from one sort of the column.

With ``order`` sorting ``score`` ascending, the pass walks the distinct scores
from the top, keeping the weight of positive-class rows above the current
score; each row b of class j adds ``w_b * (above + at / 2)`` to ``wins[j]``
(``at``: positive weight tied with b). Then A(i, j) = wins[j] / (W_i W_j)
(papers/multiclass-roc-auc-method.txt, "General Formula"; ties count one half
as in eq. 10 of papers/bootstrap-auc-estimators-632plus.txt).
"""
import numpy as np

ctypedef Py_ssize_t idx_t


def class_wins(const double[::1] score, const idx_t[::1] order, const idx_t[::1] codes,
               const double[::1] weight, idx_t positive, idx_t n_classes):
    """Weighted wins of class ``positive``'s scores over each class.

    Parameters
    ----------
    score : float64 (n,)
        The score column of class ``positive``.
    order : intp (n,)
        ``np.argsort(score)``.
    codes : intp (n,)
        Class of each row, 0..n_classes-1.
    weight : float64 (n,)
        Case weights.
    positive, n_classes : int

    Returns
    -------
    wins : ndarray (n_classes,)
        ``wins[j]`` = sum over rows b of class j of w_b times (the weight of
        class-``positive`` rows scoring above b + half of those tied with b).
    """
    cdef idx_t n = score.shape[0], hi = n, lo, k, row
    cdef double above = 0.0, at, credit, top
    if order.shape[0] != n or codes.shape[0] != n or weight.shape[0] != n:
        raise ValueError("score, order, codes and weight must have the same length")
    wins_array = np.zeros(n_classes)
    cdef double[::1] wins = wins_array
    for k in range(n):
        if codes[k] < 0 or codes[k] >= n_classes or order[k] < 0 or order[k] >= n:
            raise ValueError("codes must lie in [0, n_classes) and order in [0, n)")
    with nogil:
        while hi > 0:
            top = score[order[hi - 1]]
            lo = hi - 1
            while lo > 0 and score[order[lo - 1]] == top:
                lo -= 1
            at = 0.0
            for k in range(lo, hi):
                row = order[k]
                if codes[row] == positive:
                    at += weight[row]
            credit = above + 0.5 * at
            for k in range(lo, hi):
                row = order[k]
                wins[codes[row]] += weight[row] * credit
            above += at
            hi = lo
    return wins_array
