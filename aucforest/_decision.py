"""Decision rules turning forest probabilities into class predictions.

RFQ (O'Brien & Ishwaran 2019, the random forests quantile classifier):
predict argmax_k p_k(x) / pi_k; for two classes, p_min(x) >= pi_min
(DESIGN section 3). "argmax" is the Bayes rule; a float t is a fixed
threshold on the probability of the second class.
"""
from numbers import Real

import numpy as np
from scipy.sparse import csr_array, issparse

from ._rfq import rfq_classes, rfq_classes_sparse

RULES = ("rfq", "argmax")


def validate_decision(decision, n_classes):
    """Raise ValueError unless ``decision`` is "rfq", "argmax" or a threshold in
    (0, 1), and a threshold is used with two classes.

    Called wherever a decision is applied, since ``set_params`` after fit
    skips the fit's parameter validation.
    """
    is_threshold = isinstance(decision, Real) and not isinstance(decision, (bool, np.bool_))
    if not (decision in RULES if isinstance(decision, str)
            else is_threshold and 0.0 < decision < 1.0):
        raise ValueError(f"The 'decision' parameter must be 'rfq', 'argmax' or a float "
                         f"threshold in (0, 1), got {decision!r}.")
    if not isinstance(decision, str) and n_classes != 2:
        raise ValueError(
            f"decision={decision!r} is a threshold on the positive class and needs exactly "
            f"two classes; y has {n_classes}. Use decision='rfq' or 'argmax'.")


def decide(proba, prior, decision):
    """Index of the predicted class for each row of proba.

    Parameters
    ----------
    proba : ndarray or scipy sparse matrix of shape (n_samples, n_classes)
        A sparse one holds non-negative proportions (a forest's, at many
        classes) and is decided from its stored values (`rfq_classes_sparse`).
    prior : ndarray of shape (n_classes,)
        Class frequencies pi_k the probabilities were trained under.
    decision : {"rfq", "argmax"} or float in (0, 1)

    Returns
    -------
    ndarray of shape (n_samples,), intp
    """
    if issparse(proba):  # non-negative proportions, most of them 0
        if proba.shape[1] > 2 and decision in ("rfq", "argmax"):
            rows = csr_array(proba)
            if not rows.has_canonical_format:  # sorted in a copy, not in the caller's
                rows = rows.copy()
                rows.sum_duplicates()  # columns ascending, none stored twice
            return rfq_classes_sparse(rows.indptr.astype(np.intp, copy=False),
                                      rows.indices.astype(np.int32, copy=False),
                                      rows.data.astype(np.float64, copy=False),
                                      np.asarray(prior, dtype=np.float64),
                                      divide=decision == "rfq")
        proba = proba.toarray()
    proba = np.asarray(proba, dtype=np.float64)
    if decision == "argmax":
        return np.argmax(proba, axis=1)
    if decision == "rfq":
        return _rfq(proba, np.asarray(prior, dtype=np.float64))
    return (proba[:, 1] >= decision).astype(np.intp)


def _rfq(proba, prior):
    n_classes = prior.shape[0]
    if n_classes == 2:
        minority = int(np.argmin(prior))  # equal priors: class 0, as argmax would
        if prior[minority] <= 0:  # a class the trees never saw is never predicted
            return np.full(proba.shape[0], 1 - minority, dtype=np.intp)
        return np.where(proba[:, minority] >= prior[minority], minority, 1 - minority)
    # argmax of p_k / pi_k, ties to the smaller prior: one compiled pass
    return rfq_classes(np.ascontiguousarray(proba), prior)
