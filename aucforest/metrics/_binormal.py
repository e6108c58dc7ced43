"""The binormal ROC model: AUC, curve and cost-optimal threshold.

The scores of the negative class are modelled as N(mu0, s0^2) and those of the
positive class as N(mu1, s1^2), with the class means and (n - 1)-variances
of the sample. The scores are first divided by a power of two near their
largest magnitude (exact, and the AUC, curve and threshold do not depend on
the scale), so that squares of scores as large as 1e200 do not overflow.

References
----------
.. [1] Week 6 lecture notes, "AUC, binormal ROC curve, and LDA", sections
   "Binormal ROC curve" and "Optimal threshold".
"""
from typing import NamedTuple

import numpy as np
from scipy.stats import norm

from ._roc import ThresholdResult
from ._validation import (
    check_binary_labels,
    check_min_class_size,
    check_scores,
)


class BinormalFit(NamedTuple):
    """Fitted class-conditional normal distributions of the scores.

    Attributes
    ----------
    mean_negative, std_negative : float
        ``mu0`` and ``s0`` of the negative class.
    mean_positive, std_positive : float
        ``mu1`` and ``s1`` of the positive class.
    scale : float
        The means and deviations are those of ``score / scale``.
    """

    mean_negative: float
    std_negative: float
    mean_positive: float
    std_positive: float
    scale: float


class BinormalROC(NamedTuple):
    """A binormal ROC curve ``TPR = Phi(a + b * Phi^{-1}(FPR))``.

    Attributes
    ----------
    fpr, tpr : ndarray
        Points of the curve.
    a : float
        Intercept ``(mu1 - mu0) / s1`` on normal-deviate axes.
    b : float
        Slope ``s0 / s1`` on normal-deviate axes.
    auc : float
        ``Phi(a / sqrt(1 + b^2))``, the area under the curve.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    a: float
    b: float
    auc: float


def binormal_auc(y_true, y_score, *, pos_label=None):
    """AUC of the binormal model fitted to the scores.

    .. math::

        AUC = \\Phi\\left(\\frac{\\mu_1 - \\mu_0}{\\sqrt{s_1^2 + s_0^2}}\\right)

    (lecture [1]_, "Area under the binormal ROC curve in closed form"), with
    the sample means and variances of each class.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two class labels; the positive class is ``pos_label``.
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive".
    pos_label : label, default=None
        The positive class; default the second of the sorted labels.

    Returns
    -------
    float
        The binormal AUC, in [0, 1].

    Raises
    ------
    ValueError
        If a class has fewer than two cases, or on invalid input.

    References
    ----------
    .. [1] Week 6 lecture notes, "AUC, binormal ROC curve, and LDA".

    Examples
    --------
    >>> round(binormal_auc([0, 0, 0, 1, 1, 1], [1, 2, 3, 2, 3, 4]), 4)
    0.7602
    """
    fit = fit_binormal(y_true, y_score, pos_label)
    return _binormal_area(fit)


def binormal_roc(y_true, y_score, fpr=None, *, pos_label=None):
    """Binormal ROC curve fitted to the scores.

    .. math::

        TPR(p) = \\Phi\\left(\\frac{\\mu_1 - \\mu_0 + s_0 \\Phi^{-1}(p)}{s_1}
        \\right),\\qquad 0 < p < 1

    (lecture [1]_, "Binormal ROC curve", with the positive class the one of
    larger scores).

    When the positive class's scores are constant (``s1 = 0``) the curve is
    the limit of the formula as ``s1 -> 0``: a step from TPR 0 to 1 at
    ``FPR = Phi((mu0 - mu1) / s0)`` (``a = +-inf`` or 0 with the sign of
    ``mu1 - mu0``, ``b = inf``). Constant negative scores (``s0 = 0``) give
    ``b = 0``, a flat curve at ``TPR = Phi(a)``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two class labels; the positive class is ``pos_label``.
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive".
    fpr : array-like, default=None
        False positive rates at which to evaluate the curve; default 201
        points evenly spaced on [0, 1].
    pos_label : label, default=None
        The positive class; default the second of the sorted labels.

    Returns
    -------
    BinormalROC
        Named fields ``fpr``, ``tpr``, ``a``, ``b``, ``auc``.

    Raises
    ------
    ValueError
        If a class has fewer than two cases, the scores are constant within
        both classes (no binormal curve), or on invalid input.

    References
    ----------
    .. [1] Week 6 lecture notes, "AUC, binormal ROC curve, and LDA".

    Examples
    --------
    >>> curve = binormal_roc([0, 0, 0, 1, 1, 1], [1, 2, 3, 2, 3, 4], fpr=[0.5])
    >>> curve.a, curve.b, round(float(curve.tpr[0]), 4)
    (1.0, 1.0, 0.8413)
    """
    fit = fit_binormal(y_true, y_score, pos_label)
    fpr = np.linspace(0.0, 1.0, 201) if fpr is None else np.asarray(fpr, float)
    if fpr.ndim != 1 or np.any((fpr < 0) | (fpr > 1)) or np.any(np.isnan(fpr)):
        raise ValueError("fpr must be a 1-d array of rates in [0, 1].")
    shift = fit.mean_positive - fit.mean_negative
    s0, s1 = fit.std_negative, fit.std_positive
    if s1 == 0.0 and s0 == 0.0:
        raise ValueError(
            "binormal_roc needs scores that vary within at least one class; "
            "both classes' scores are constant."
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        deviate = norm.ppf(fpr)
        if s1 > 0.0:
            a, b = shift / s1, s0 / s1
            tpr = norm.cdf(a + b * deviate)
        else:  # the limit s1 -> 0: a step where the negatives pass mu1
            a, b = np.sign(shift) * np.inf if shift else 0.0, np.inf
            tpr = (shift + s0 * deviate >= 0).astype(float)
    tpr = np.where(fpr == 0.0, 0.0, np.where(fpr == 1.0, 1.0, tpr))
    return BinormalROC(fpr, tpr, float(a), float(b), _binormal_area(fit))


def binormal_threshold(y_true, y_score, cost_fn=1.0, cost_fp=1.0, *, pos_label=None):
    """Cost-optimal threshold under the fitted binormal model.

    Minimises ``g(h) = cost_fn * Phi((h - mu1)/s1) + cost_fp * (1 - Phi((h -
    mu0)/s0))``. Setting ``g'(h) = 0`` gives ``B h^2 - 2 A h + C = 0`` with
    (lecture [1]_, "Optimal threshold", extended to unequal costs)

    * ``A = mu1 s0^2 - mu0 s1^2``,
    * ``B = s0^2 - s1^2``,
    * ``C = s0^2 mu1^2 - s1^2 mu0^2 + s0^2 s1^2 ln(s1^2/s0^2)
      + 2 s0^2 s1^2 ln(cost_fp/cost_fn)``,

    whose root ``(A - sqrt(A^2 - BC)) / B`` is evaluated in the equivalent
    form ``C / (A + sqrt(A^2 - BC))`` that stays exact when the variances are
    equal (``B = 0``: ``h = C / 2A``, the midpoint of the means for unit
    costs). Both stationary points and the limits ``h -> -inf`` (cost
    ``cost_fp``) and ``h -> +inf`` (cost ``cost_fn``) are compared, so the
    global minimum is returned, ``+-inf`` when no finite threshold beats
    calling everyone negative or everyone positive.

    Parameters
    ----------
    y_true, y_score : array-like of shape (n_samples,)
        As in :func:`binormal_auc`.
    cost_fn, cost_fp : float, default=1.0
        Costs of a false negative and a false positive.

    Returns
    -------
    ThresholdResult
        The threshold with the model's sensitivity, specificity and cost.
    """
    fit = fit_binormal(y_true, y_score, pos_label)
    candidates = np.concatenate(
        [_stationary_points(fit, cost_fn, cost_fp), [-np.inf, np.inf]]
    )
    costs = [_binormal_cost(fit, h, cost_fn, cost_fp) for h in candidates]
    best = float(candidates[int(np.argmin(costs))])
    sensitivity, specificity = _binormal_rates(fit, best)
    return ThresholdResult(best * fit.scale, sensitivity, specificity,
                           float(np.min(costs)))


def fit_binormal(y_true, y_score, pos_label=None):
    """Class means and standard deviations (ddof=1) of the scaled scores.

    The scores are divided by ``scale``, the power of two at or above their
    largest magnitude (exact in floating point), so that the squares in the
    variances cannot overflow; every binormal quantity but the threshold is
    scale-free, and the threshold is multiplied back.

    Raises
    ------
    ValueError
        If a class has fewer than two cases.
    """
    positive, _ = check_binary_labels(y_true, pos_label=pos_label)
    y_score = check_scores(y_score, positive.size)
    check_min_class_size(positive, 2, "The binormal model")
    largest = np.max(np.abs(y_score))
    scale = float(np.ldexp(1.0, np.frexp(largest)[1])) if largest > 0 else 1.0
    y_score = y_score / scale
    negatives, positives = y_score[~positive], y_score[positive]
    return BinormalFit(
        mean_negative=float(negatives.mean()),
        std_negative=float(negatives.std(ddof=1)),
        mean_positive=float(positives.mean()),
        std_positive=float(positives.std(ddof=1)),
        scale=scale,
    )


def _binormal_area(fit):
    spread = np.hypot(fit.std_positive, fit.std_negative)
    shift = fit.mean_positive - fit.mean_negative
    if spread == 0.0:
        return float(0.5 + 0.5 * np.sign(shift))
    return float(norm.cdf(shift / spread))


def _stationary_points(fit, cost_fn, cost_fp):
    """Finite real roots of ``B h^2 - 2 A h + C = 0`` (see binormal_threshold)."""
    mu0, mu1 = fit.mean_negative, fit.mean_positive
    var0, var1 = fit.std_negative**2, fit.std_positive**2
    if var0 == 0.0 or var1 == 0.0:
        raise ValueError(
            "The binormal threshold needs scores that vary within each class."
        )
    a = mu1 * var0 - mu0 * var1
    b = var0 - var1
    c = (var0 * mu1**2 - var1 * mu0**2 + var0 * var1 * np.log(var1 / var0)
         + 2.0 * var0 * var1 * np.log(cost_fp / cost_fn))
    discriminant = a * a - b * c
    if discriminant < 0:
        return np.empty(0)
    q = a + np.copysign(np.sqrt(discriminant), a)
    with np.errstate(divide="ignore", invalid="ignore"):
        roots = np.array([c / q, q / b if b != 0.0 else np.nan])
    return roots[np.isfinite(roots)]


def _binormal_rates(fit, threshold):
    sensitivity = norm.sf((threshold - fit.mean_positive) / fit.std_positive)
    specificity = norm.cdf((threshold - fit.mean_negative) / fit.std_negative)
    return float(sensitivity), float(specificity)


def _binormal_cost(fit, threshold, cost_fn, cost_fp):
    sensitivity, specificity = _binormal_rates(fit, threshold)
    return cost_fn * (1.0 - sensitivity) + cost_fp * (1.0 - specificity)
