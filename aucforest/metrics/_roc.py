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

from ._validation import check_binary_labels, check_scores, check_weights


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


