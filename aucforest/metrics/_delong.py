"""DeLong's confidence interval and test for AUCs, fast midrank algorithm.

References
----------
.. [1] E. R. DeLong, D. M. DeLong, D. L. Clarke-Pearson, "Comparing the areas
   under two or more correlated receiver operating characteristic curves: a
   nonparametric approach", Biometrics 44 (1988) 837-845.
.. [2] X. Sun, W. Xu, "Fast implementation of DeLong's algorithm for comparing
   the areas under correlated receiver operating characteristic curves",
   IEEE Signal Processing Letters 21 (2014) 1389-1393.
"""
from typing import NamedTuple

import numpy as np
from scipy.stats import norm, rankdata

from ._validation import (
    check_binary_labels,
    check_min_class_size,
    check_scores,
)


class AUCInterval(NamedTuple):
    """An AUC and its confidence interval.

    Attributes
    ----------
    auc : float
        The Mann-Whitney AUC.
    low, high : float
        Interval bounds, clipped to [0, 1].
    """

    auc: float
    low: float
    high: float


class DeLongTest(NamedTuple):
    """DeLong's test that two correlated AUCs are equal.

    Attributes
    ----------
    statistic : float
        ``z = (auc_a - auc_b) / std_error``.
    pvalue : float
        P-value of ``z`` under the standard normal, for the chosen
        alternative.
    auc_a, auc_b : float
        The two AUCs.
    std_error : float
        DeLong's standard error of ``auc_a - auc_b``.
    """

    statistic: float
    pvalue: float
    auc_a: float
    auc_b: float
    std_error: float


def auc_ci(y_true, y_score, confidence=0.95):
    """DeLong's confidence interval for the AUC.

    ``auc +/- z_{(1+confidence)/2} * sqrt(V)``, clipped to [0, 1], where ``V``
    is DeLong's variance estimate ``S10/m + S01/n`` [1]_ computed with the
    O(n log n) midrank algorithm of Sun & Xu [2]_ (their eq. for
    ``V10 = (Tz - Tx)/n`` and ``V01 = 1 - (Tz - Ty)/m``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two class labels; the second of the sorted labels is positive.
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive".
    confidence : float, default=0.95
        Coverage of the interval, in (0, 1).

    Returns
    -------
    AUCInterval
        Named fields ``auc``, ``low``, ``high``.

    Raises
    ------
    ValueError
        If a class has fewer than two cases (DeLong's variance is then
        undefined), or on invalid labels, scores or ``confidence``.

    Examples
    --------
    >>> result = auc_ci([0, 0, 0, 1, 1, 1], [0.1, 0.3, 0.6, 0.4, 0.8, 0.9])
    >>> round(result.auc, 4), round(result.low, 4), round(result.high, 4)
    (0.8889, 0.5809, 1.0)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}.")
    positive, _ = check_binary_labels(y_true)
    y_score = check_scores(y_score, positive.size)
    check_min_class_size(positive, 2, "DeLong's variance")
    aucs, covariance = delong_covariance(positive, y_score[:, None])
    half_width = norm.ppf(0.5 + confidence / 2.0) * np.sqrt(covariance[0, 0])
    return AUCInterval(
        auc=float(aucs[0]),
        low=float(max(aucs[0] - half_width, 0.0)),
        high=float(min(aucs[0] + half_width, 1.0)),
    )


def auc_test(y_true, score_a, score_b, alternative="two-sided"):
    """DeLong's test for two correlated AUCs measured on the same cases.

    ``z = (A_a - A_b) / sqrt(V_aa + V_bb - 2 V_ab)`` with DeLong's covariance
    matrix ``V = S10/m + S01/n`` of the two AUCs [1]_, computed with the
    midrank algorithm of Sun & Xu [2]_.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two class labels; the second of the sorted labels is positive.
    score_a, score_b : array-like of shape (n_samples,)
        Scores of the two classifiers on the same cases.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        "greater" tests ``auc_a > auc_b``.

    Returns
    -------
    DeLongTest
        Named fields ``statistic``, ``pvalue``, ``auc_a``, ``auc_b``,
        ``std_error``. Identical AUCs with zero standard error (e.g. the same
        scores twice) give ``statistic = 0`` and ``pvalue = 1`` (two-sided).

    Raises
    ------
    ValueError
        If a class has fewer than two cases, or on invalid input.

    Examples
    --------
    >>> y = [0, 0, 0, 0, 1, 1, 1, 1]
    >>> test = auc_test(y, [1, 2, 3, 4, 5, 6, 7, 8], [1, 5, 3, 7, 2, 6, 4, 8])
    >>> round(test.auc_a, 4), round(test.auc_b, 4), round(test.pvalue, 4)
    (1.0, 0.625, 0.1003)
    """
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(
            "alternative must be 'two-sided', 'greater' or 'less', got "
            f"{alternative!r}."
        )
    positive, _ = check_binary_labels(y_true)
    score_a = check_scores(score_a, positive.size, name="score_a")
    score_b = check_scores(score_b, positive.size, name="score_b")
    check_min_class_size(positive, 2, "DeLong's test")
    aucs, cov = delong_covariance(positive, np.column_stack([score_a, score_b]))
    std_error = float(np.sqrt(max(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1], 0.0)))
    statistic = _z_statistic(aucs[0] - aucs[1], std_error)
    return DeLongTest(
        statistic=statistic,
        pvalue=_normal_pvalue(statistic, alternative),
        auc_a=float(aucs[0]),
        auc_b=float(aucs[1]),
        std_error=std_error,
    )


def delong_covariance(positive, scores):
    """AUCs and DeLong's covariance matrix of ``k`` score columns.

    Sun & Xu's algorithm [2]_: with ``Tx``, ``Ty``, ``Tz`` the midranks of
    each column within the positives (m), the negatives (n) and all cases,
    the structural components are ``V10 = (Tz_x - Tx)/n`` (for each
    positive) and ``V01 = 1 - (Tz_y - Ty)/m`` (for each negative),
    ``AUC = mean(V10)`` and ``Cov = S10/m + S01/n`` where ``S10`` and ``S01``
    are the sample covariance matrices of the components. O(k n log n).

    Parameters
    ----------
    positive : ndarray of bool, shape (n_samples,)
        Class membership; each class needs at least two cases.
    scores : ndarray of shape (n_samples, k)
        One column per classifier.

    Returns
    -------
    aucs : ndarray of shape (k,)
    covariance : ndarray of shape (k, k)
    """
    positives, negatives = scores[positive], scores[~positive]
    m, n = positives.shape[0], negatives.shape[0]
    rank_x = rankdata(positives, axis=0)
    rank_y = rankdata(negatives, axis=0)
    rank_z = rankdata(np.concatenate([positives, negatives]), axis=0)
    v10 = (rank_z[:m] - rank_x) / n
    v01 = 1.0 - (rank_z[m:] - rank_y) / m
    aucs = v10.mean(axis=0)
    s10 = np.atleast_2d(np.cov(v10, rowvar=False))
    s01 = np.atleast_2d(np.cov(v01, rowvar=False))
    return aucs, s10 / m + s01 / n


def _z_statistic(difference, std_error):
    if std_error == 0.0:
        return 0.0 if difference == 0.0 else float(np.copysign(np.inf, difference))
    return float(difference / std_error)


def _normal_pvalue(statistic, alternative):
    if alternative == "greater":
        return float(norm.sf(statistic))
    if alternative == "less":
        return float(norm.cdf(statistic))
    return float(min(1.0, 2.0 * norm.sf(abs(statistic))))
