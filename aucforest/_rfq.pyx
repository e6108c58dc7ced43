# cython: language_level=3
"""The RFQ decision for more than two classes in one pass over the rows.

RFQ (O'Brien & Ishwaran 2019, the random forests quantile classifier,
eq. (4) with the class frequencies as quantiles): predict argmax_k
p_k(x) / pi_k, a tie going to the class with the smaller prior (equal priors:
the smaller index), a class of prior 0 never predicted.
"""
import numpy as np

from libc.math cimport INFINITY, fabs
from libc.stdint cimport int32_t

ctypedef Py_ssize_t idx_t


def rfq_classes(const double[:, ::1] proba, const double[::1] prior, double tolerance=0.0,
                bint divide=True):
    """Index of the class argmax_k proba[i, k] / prior[k] for each row i.

    Scores within a relative ``tolerance`` of the row's best are tied, and a
    tie goes to the smaller prior (a stable order of the priors: equal priors,
    the smaller index); a class of prior 0 scores -inf; a row with a NaN
    score takes the first NaN in that order (numpy's argmax). The same
    classes as `aucforest._decision_rule.first_best` over ``proba / prior``,
    without its n x K temporaries. ``divide=False`` is argmax of proba
    itself, ties to the smaller index.

    Parameters
    ----------
    proba : float64 array (n_samples, n_classes), C order
    prior : float64 array (n_classes,)
    tolerance : float
        Relative distance to the best score within which scores tie.
    divide : bool

    Returns
    -------
    intp array (n_samples,)
    """
    cdef idx_t n = proba.shape[0], K = proba.shape[1], i, j, c, best_class
    cdef double score, best, floor
    if prior.shape[0] != K or K == 0:
        raise ValueError(f"prior has {prior.shape[0]} classes, proba {K} columns")
    cdef const idx_t[::1] order = (np.argsort(np.asarray(prior), kind="stable") if divide
                                   else np.arange(K)).astype(np.intp)
    cdef const double[::1] weight = np.asarray(prior) if divide else np.ones(K)
    classes = np.empty(n, dtype=np.intp)
    cdef idx_t[::1] out = classes
    cdef double[::1] scores = np.empty(K)  # one row's scores, in the order of preference
    cdef bint nan
    with nogil:
        for i in range(n):
            best_class = -1
            best = -INFINITY
            nan = False
            for j in range(K):
                c = order[j]
                if not divide:
                    score = proba[i, c]
                elif weight[c] > 0:
                    score = proba[i, c] / weight[c]
                else:
                    score = -INFINITY
                scores[j] = score
                if score != score:  # NaN: numpy's argmax takes the first one
                    best_class = c
                    nan = True
                    break
                if score > best or best_class < 0:
                    best, best_class = score, c
            if not nan and best > -INFINITY:  # the first score within the tolerance
                floor = best - tolerance * fabs(best)
                for j in range(K):
                    if scores[j] >= floor:
                        best_class = order[j]
                        break
            out[i] = best_class
    return classes


def rfq_classes_sparse(const idx_t[::1] indptr, const int32_t[::1] indices,
                       const double[::1] data, const double[::1] prior, double tolerance=0.0,
                       bint divide=True):
    """`rfq_classes` of a CSR matrix of non-negative proportions (columns
    ascending within a row, none stored twice), from its stored values.

    A stored positive proportion of a class of positive prior scores above
    every 0, so the best stored one is the row's class (the same ties); a
    row where no stored value beats 0 is decided over its dense row, as
    `rfq_classes` would (the same tolerance). ``divide=False`` is argmax (the
    first largest proportion within the tolerance) instead.
    """
    cdef idx_t n = indptr.shape[0] - 1, K = prior.shape[0], i, j, c, p, best_class
    cdef double score, best, floor
    if n < 0 or K == 0 or indptr[0] != 0 or indptr[n] != indices.shape[0] \
            or data.shape[0] != indices.shape[0]:
        raise ValueError("indptr, indices and data do not describe a CSR matrix")
    for i in range(n):
        if indptr[i + 1] < indptr[i]:
            raise ValueError("indptr must not decrease")
        if indptr[i + 1] - indptr[i] > K:  # a column stored twice in a row
            raise ValueError("a row stores more values than there are classes")
    for p in range(indices.shape[0]):
        if indices[p] < 0 or indices[p] >= K or not data[p] >= 0.0:
            raise ValueError("indices must lie in [0, n_classes) and data be non-negative")
    order_array = (np.argsort(np.asarray(prior), kind="stable") if divide
                   else np.arange(K)).astype(np.intp)
    rank_array = np.empty(K, dtype=np.intp)
    rank_array[order_array] = np.arange(K)
    cdef const idx_t[::1] rank = rank_array
    cdef const double[::1] weight = np.asarray(prior) if divide else np.ones(K)
    cdef double[::1] scores = np.empty(K)  # a row's stored scores, for the tie pass
    row_array = np.zeros((1, K))
    cdef double[:, ::1] row = row_array
    classes = np.empty(n, dtype=np.intp)
    cdef idx_t[::1] out = classes
    with nogil:
        for i in range(n):
            best_class = -1
            best = -INFINITY
            for p in range(indptr[i], indptr[i + 1]):
                c = indices[p]
                score = data[p] / weight[c] if weight[c] > 0 else -INFINITY
                scores[p - indptr[i]] = score
                if best_class < 0 or score > best:
                    best, best_class = score, c
            if best > 0.0:  # of the stored scores within the tolerance, the first in order
                floor = best - tolerance * best
                for p in range(indptr[i], indptr[i + 1]):
                    c = indices[p]
                    if scores[p - indptr[i]] >= floor and rank[c] < rank[best_class]:
                        best_class = c
            out[i] = best_class if best > 0.0 else -1
    for i in np.flatnonzero(classes < 0):  # no stored value beats 0: the dense row
        row_array[0, np.asarray(indices[indptr[i]:indptr[i + 1]])] = data[indptr[i]:indptr[i + 1]]
        out[i] = rfq_classes(row, prior, tolerance, divide)[0]
        row_array[0] = 0.0
    return classes
