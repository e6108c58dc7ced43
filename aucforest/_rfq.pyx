# cython: language_level=3
"""The RFQ decision for more than two classes in one pass over the rows.

RFQ (O'Brien & Ishwaran 2019, the random forests quantile classifier,
eq. (4) with the class frequencies as quantiles): predict argmax_k
p_k(x) / pi_k, a tie going to the class with the smaller prior (equal priors:
the smaller index), a class of prior 0 never predicted.
"""
import numpy as np

from libc.math cimport INFINITY

ctypedef Py_ssize_t idx_t


def rfq_classes(const double[:, ::1] proba, const double[::1] prior):
    """Index of the class argmax_k proba[i, k] / prior[k] for each row i.

    Ties go to the smaller prior (a stable order of the priors), as do
    equal scores; a class of prior 0 scores -inf; a row with a NaN score
    takes the first NaN in that order (numpy's argmax). The same classes as
    argmax over ``proba[:, order] / prior[order]`` (the quotients are the
    same divisions), without its n x K temporaries.

    Parameters
    ----------
    proba : float64 array (n_samples, n_classes), C order
    prior : float64 array (n_classes,)

    Returns
    -------
    intp array (n_samples,)
    """
    cdef idx_t n = proba.shape[0], K = proba.shape[1], i, j, c, best_class
    cdef double score, best
    if prior.shape[0] != K or K == 0:
        raise ValueError(f"prior has {prior.shape[0]} classes, proba {K} columns")
    cdef const idx_t[::1] order = np.argsort(np.asarray(prior), kind="stable").astype(np.intp)
    classes = np.empty(n, dtype=np.intp)
    cdef idx_t[::1] out = classes
    with nogil:
        for i in range(n):
            best_class = -1
            best = -INFINITY
            for j in range(K):
                c = order[j]
                score = proba[i, c] / prior[c] if prior[c] > 0 else -INFINITY
                if score != score:  # NaN: numpy's argmax takes the first one
                    best_class = c
                    break
                if score > best or best_class < 0:
                    best, best_class = score, c
            out[i] = best_class
    return classes
