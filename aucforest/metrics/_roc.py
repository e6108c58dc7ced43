"""Empirical ROC curve and cost-optimal thresholds.

References
----------
.. [1] Week 6 lecture notes, "AUC, binormal ROC curve, and LDA": the
   empirical ROC curve, and the threshold minimising
   ``w_S (1 - Sensitivity(h)) + w_FP FP(h)``.
"""
from typing import NamedTuple

import numpy as np
from sklearn.metrics import roc_curve as _sklearn_roc_curve

from ._validation import check_binary_labels, check_scores, check_weights, plain


class ROCCurve(NamedTuple):
    """Points of an empirical ROC curve.

    Attributes
    ----------
    fpr : ndarray
        False positive rate at each threshold, increasing from 0 to 1.
    tpr : ndarray
        True positive rate (sensitivity) at each threshold.
    thresholds : ndarray
        Cases with ``score >= threshold`` are called positive; the first
        threshold is ``inf`` (nobody positive).
    """

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray


class ThresholdResult(NamedTuple):
    """A decision threshold and its operating point.

    Attributes
    ----------
    threshold : float
        Cases with ``score >= threshold`` are called positive.
    sensitivity : float
        True positive rate at the threshold.
    specificity : float
        True negative rate at the threshold (1 - false positive rate).
    cost : float
        ``cost_fn * (1 - sensitivity) + cost_fp * (1 - specificity)``.
    """

    threshold: float
    sensitivity: float
    specificity: float
    cost: float


def roc_curve(y_true, y_score, sample_weight=None, *, pos_label=None):
    """Empirical ROC curve, one point per distinct score.

    The curve starts at (0, 0) and ends at (1, 1). Tied scores of positive and
    negative cases make one diagonal step, so the trapezoid area under the
    curve equals :func:`auc` exactly (ties counting one half), as property 5
    of the lecture notes "AUC, binormal ROC curve, and LDA" states.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two class labels; the positive class is ``pos_label``.
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive".
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative case weights (of any scale: only their ratios matter).
    pos_label : label, default=None
        The positive class; default the second of the sorted labels.

    Returns
    -------
    ROCCurve
        Named fields ``fpr``, ``tpr``, ``thresholds``.

    Examples
    --------
    >>> curve = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> curve.fpr.tolist(), curve.tpr.tolist()
    ([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0])
    """
    positive, _ = check_binary_labels(y_true, pos_label=pos_label)
    y_score = check_scores(y_score, positive.size)
    weight = check_weights(sample_weight, positive)
    if weight.max() > 0:
        weight = weight / weight.max()  # cumulative sums of 1e300 overflow
    fpr, tpr, thresholds = _sklearn_roc_curve(
        positive, y_score, sample_weight=weight, drop_intermediate=False
    )
    return ROCCurve(fpr, tpr, thresholds)


def optimal_threshold(y_true, y_score, cost_fn=1.0, cost_fp=1.0,
                      method="empirical", *, pos_label=None):
    """Threshold minimising the misclassification cost.

    Minimises ``cost_fn * (1 - sensitivity) + cost_fp * FPR`` over the
    threshold (the lecture's weighted total error, section "Choosing an
    optimal threshold when the consequences of the two errors are not the
    same"). With unit costs this maximises Youden's index.

    * ``method="empirical"``: over the thresholds of :func:`roc_curve`; among
      equally cheap thresholds the largest (most specific) one is returned.
    * ``method="binormal"``: under the fitted binormal model, the closed form
      ``(A - sqrt(A^2 - BC)) / B`` of the lecture, including equal variances
      (``B = 0``); see :func:`aucforest.metrics.binormal_roc`. Sensitivity and
      specificity are then those of the fitted model.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two class labels; the positive class is ``pos_label``.
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive"; ``score >= threshold`` is
        called positive.
    cost_fn : float, default=1.0
        Cost of a false negative (a missed positive).
    cost_fp : float, default=1.0
        Cost of a false positive.
    method : {"empirical", "binormal"}, default="empirical"
    pos_label : label, default=None
        The positive class; default the second of the sorted labels.

    Returns
    -------
    ThresholdResult
        Named fields ``threshold``, ``sensitivity``, ``specificity``, ``cost``.

    Raises
    ------
    ValueError
        On a bad ``method``, non-positive or non-finite costs, or invalid
        labels and scores.

    Examples
    --------
    >>> result = optimal_threshold([0, 0, 0, 1, 1, 1], [1, 2, 4, 3, 5, 6])
    >>> result.threshold, result.sensitivity, result.specificity
    (5.0, 0.6666666666666666, 1.0)
    """
    cost_fn, cost_fp = _check_costs(cost_fn, cost_fp)
    if method == "empirical":
        return _empirical_threshold(y_true, y_score, cost_fn, cost_fp, pos_label)
    if method == "binormal":
        from ._binormal import binormal_threshold

        return binormal_threshold(y_true, y_score, cost_fn, cost_fp,
                                  pos_label=pos_label)
    raise ValueError(
        f"method must be 'empirical' or 'binormal', got {plain(method)}."
    )


def _empirical_threshold(y_true, y_score, cost_fn, cost_fp, pos_label):
    curve = roc_curve(y_true, y_score, pos_label=pos_label)
    costs = cost_fn * (1.0 - curve.tpr) + cost_fp * curve.fpr
    best = _first_minimum(costs)
    return ThresholdResult(
        threshold=float(curve.thresholds[best]),
        sensitivity=float(curve.tpr[best]),
        specificity=float(1.0 - curve.fpr[best]),
        cost=float(costs[best]),
    )


def _first_minimum(costs):
    """Index of the first cost within rounding error of the minimum."""
    lowest = costs.min()
    return int(np.flatnonzero(costs <= lowest + 1e-12 * max(1.0, abs(lowest)))[0])


def _check_costs(cost_fn, cost_fp):
    costs = np.array([cost_fn, cost_fp], dtype=float)
    if not np.all(np.isfinite(costs)) or np.any(costs <= 0):
        raise ValueError(
            f"cost_fn and cost_fp must be positive and finite, got "
            f"{plain(cost_fn)} and {plain(cost_fp)}."
        )
    return float(costs[0]), float(costs[1])
