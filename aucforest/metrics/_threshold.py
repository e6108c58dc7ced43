"""Cost-optimal thresholds: empirical (from the ROC curve) or binormal."""
import numpy as np

from ._binormal import binormal_threshold
from ._roc import ThresholdResult, roc_curve
from ._validation import plain


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
