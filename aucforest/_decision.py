"""Decision rules turning forest probabilities into class predictions.

RFQ (O'Brien & Ishwaran 2019, the random forests quantile classifier):
predict argmax_k p_k(x) / pi_k; for two classes, p_min(x) >= pi_min
(DESIGN section 3). "argmax" is the Bayes rule; a float t is a fixed
threshold on the probability of the second class. A K x K cost matrix C
(C[j, k]: the cost of predicting class k when the truth is j) predicts the
class of least expected cost, argmin_k sum_j p_j(x) C[j, k] (Elkan 2001,
"The foundations of cost-sensitive learning", IJCAI), from probabilities
under the training priors (DESIGN section 12).
"""
from numbers import Real

import numpy as np
from scipy.sparse import csr_array, issparse

from ._prior_shift import to_training_priors
from ._rfq import rfq_classes, rfq_classes_sparse

RULES = ("rfq", "argmax")
# expected costs within this relative distance of the least are a tie (rounding)
TIE_TOLERANCE = 1e-12
_RULES = "'rfq', 'argmax', a float threshold in (0, 1) or a K x K cost matrix"


def cost_matrix(decision):
    """The decision as a float64 cost matrix, or None for a named rule or a
    threshold (not validated: see `validate_decision`)."""
    if isinstance(decision, (str, Real)):
        return None
    return np.asarray(decision, dtype=np.float64)


def validate_decision(decision, n_classes):
    """Raise ValueError unless ``decision`` is "rfq", "argmax", a threshold in
    (0, 1) with two classes, or a K x K cost matrix of finite costs >= 0.

    Called wherever a decision is applied, since ``set_params`` after fit
    skips the fit's parameter validation.
    """
    if isinstance(decision, str):
        if decision not in RULES:
            raise ValueError(f"The 'decision' parameter must be {_RULES}, got {decision!r}.")
        return
    if isinstance(decision, (bool, np.bool_)) or decision is None:
        raise ValueError(f"The 'decision' parameter must be {_RULES}, got {decision!r}.")
    if isinstance(decision, Real):
        if not 0.0 < decision < 1.0:
            raise ValueError(f"The 'decision' parameter must be {_RULES}, got {decision!r}.")
        if n_classes != 2:
            raise ValueError(
                f"decision={decision!r} is a threshold on the positive class and needs exactly "
                f"two classes; y has {n_classes}. Use decision='rfq' or 'argmax'.")
        return
    try:
        costs = np.asarray(decision, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"The 'decision' parameter must be {_RULES}; got {decision!r}, which "
                         "is none of them.") from None
    if costs.shape != (n_classes, n_classes):
        raise ValueError(
            f"The 'decision' parameter must be {_RULES}; got an array of shape "
            f"{costs.shape}, and with {n_classes} classes a cost matrix must be {n_classes} x "
            f"{n_classes} (C[j, k]: the cost of predicting class k when "
            "the truth is class j, rows and columns in classes_ order).")
    if np.isnan(costs).any():
        j, k = np.argwhere(np.isnan(costs))[0]
        raise ValueError(f"decision cost matrix holds NaN (first at row {j}, column {k}); "
                         "every cost must be a finite number >= 0.")
    if not np.isfinite(costs).all():
        j, k = np.argwhere(~np.isfinite(costs))[0]
        raise ValueError(f"decision cost matrix holds an infinite cost (first at row {j}, "
                         f"column {k}); every cost must be a finite number >= 0.")
    if (costs < 0).any():
        j, k = np.argwhere(costs < 0)[0]
        raise ValueError(f"decision cost matrix holds a negative cost ({costs[j, k]:g} at row "
                         f"{j}, column {k}); every cost must be a finite number >= 0.")


def decide(proba, prior, decision, draw_weights=None):
    """Index of the predicted class for each row of proba.

    Parameters
    ----------
    proba : ndarray or scipy sparse matrix of shape (n_samples, n_classes)
        A sparse one holds non-negative proportions (a forest's, at many
        classes) and is decided from its stored values (`rfq_classes_sparse`).
    prior : ndarray of shape (n_classes,)
        Class frequencies pi_k the probabilities were trained under.
    decision : {"rfq", "argmax"}, float in (0, 1) or ndarray of shape (n_classes, n_classes)
        A cost matrix predicts the class of least expected cost, ties to the
        lowest class index.
    draw_weights : ndarray of shape (n_classes,), default=None
        The forest's ``draw_class_weights_``: a cost matrix decides from
        ``to_training_priors(proba, draw_weights)``; None: proba as given.

    Returns
    -------
    ndarray of shape (n_samples,), intp
    """
    costs = cost_matrix(decision)
    if costs is not None:
        return least_cost_classes(proba, costs, draw_weights)
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


def least_cost_classes(proba, costs, draw_weights=None):
    """argmin_k sum_j p_j C[j, k] for each row, ties to the lowest index k (costs
    within a relative ``TIE_TOLERANCE`` of the least are ties).

    Parameters
    ----------
    proba : ndarray or scipy sparse matrix of shape (n_samples, n_classes)
    costs : ndarray of shape (n_classes, n_classes)
        C[j, k], the cost of predicting k when the truth is j.
    draw_weights : ndarray of shape (n_classes,), default=None
        Effective class weights of the trees' draws; the probabilities are
        first brought back to the training priors (`to_training_priors`).

    Returns
    -------
    ndarray of shape (n_samples,), intp
    """
    if issparse(proba):
        proba = proba.toarray()
    proba = np.asarray(proba, dtype=np.float64)
    if draw_weights is not None:
        proba = to_training_priors(proba, draw_weights)
    expected = proba @ np.asarray(costs, dtype=np.float64)
    least = expected.min(axis=1, keepdims=True)
    # costs equal to within rounding (sums in another order differ in the last bits) tie,
    # and a tie goes to the lowest class index
    return np.argmax(expected <= least + TIE_TOLERANCE * np.abs(least), axis=1)


def _rfq(proba, prior):
    n_classes = prior.shape[0]
    if n_classes == 2:
        minority = int(np.argmin(prior))  # equal priors: class 0, as argmax would
        if prior[minority] <= 0:  # a class the trees never saw is never predicted
            return np.full(proba.shape[0], 1 - minority, dtype=np.intp)
        return np.where(proba[:, minority] >= prior[minority], minority, 1 - minority)
    # argmax of p_k / pi_k, ties to the smaller prior: one compiled pass
    return rfq_classes(np.ascontiguousarray(proba), prior)
