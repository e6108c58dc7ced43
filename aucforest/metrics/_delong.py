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
    check_weights,
    plain,
    scored_rows,
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


def auc_ci(y_true, y_score, confidence=0.95, *, sample_weight=None,
           pos_label=None):
    """Compute DeLong's confidence interval for the AUC.

    ``auc +/- z_{(1+confidence)/2} * sqrt(V)``, clipped to [0, 1], where ``V``
    is DeLong's variance estimate ``S10/m + S01/n`` [1]_ computed with the
    O(n log n) midrank algorithm of Sun & Xu [2]_ (their eq. for
    ``V10 = (Tz - Tx)/n`` and ``V01 = 1 - (Tz - Ty)/m``).

    Cases whose score is NaN (e.g. a forest's ``oob_decision_function_[:,
    1]`` for cases that every tree drew) are left out, with one warning.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two class labels.
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive"; NaN for a case without a
        score.
    confidence : float, default=0.95
        Coverage of the interval, in (0, 1).
    sample_weight : array-like of shape (n_samples,), default=None
        Case counts (frequency weights): non-negative integers. The
        interval is DeLong's on the data in which case ``i`` appears
        ``w_i`` times: structural components ``V10_i`` (the weighted share
        of negatives below positive ``i``, ties one half) and ``V01_j``,
        ``S10 = sum_i w_i (V10_i - AUC)^2 / (m - 1)`` with ``m = sum`` of the
        positives' counts, ``S01`` alike, ``V = S10/m + S01/n``. Non-integer
        (importance) weights raise ``ValueError``: DeLong's variance has no
        published form for them, and it would depend on the weights' scale.
    pos_label : label, default=None
        The positive class; default the second of the sorted labels.

    Returns
    -------
    AUCInterval
        Named fields ``auc``, ``low``, ``high``.

    Raises
    ------
    ValueError
        If a class has fewer than two cases (counting weights; DeLong's
        variance is then undefined), on non-integer weights, or on invalid
        labels, scores or ``confidence``.

    Warns
    -----
    UserWarning
        When cases without a score (NaN) are left out.

    References
    ----------
    .. [1] E. R. DeLong, D. M. DeLong, D. L. Clarke-Pearson, "Comparing the
       areas under two or more correlated receiver operating characteristic
       curves: a nonparametric approach", Biometrics 44 (1988) 837-845.
    .. [2] X. Sun, W. Xu, "Fast implementation of DeLong's algorithm for
       comparing the areas under correlated receiver operating characteristic
       curves", IEEE Signal Processing Letters 21 (2014) 1389-1393.

    Examples
    --------
    >>> result = auc_ci([0, 0, 0, 1, 1, 1], [0.1, 0.3, 0.6, 0.4, 0.8, 0.9])
    >>> round(result.auc, 4), round(result.low, 4), round(result.high, 4)
    (0.8889, 0.5809, 1.0)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {plain(confidence)}.")
    positive, _ = check_binary_labels(y_true, pos_label=pos_label)
    y_score = check_scores(y_score, positive.size, allow_nan=True)
    weight = None if sample_weight is None else _check_counts(sample_weight, positive)
    scored = scored_rows(y_score)
    positive, y_score = positive[scored], y_score[scored]
    if weight is None:
        check_min_class_size(positive, 2, "DeLong's variance")
        aucs, covariance = delong_covariance(positive, y_score[:, None])
        value, variance = aucs[0], covariance[0, 0]
    else:
        value, variance = weighted_delong(positive, y_score, weight[scored])
    half_width = norm.ppf(0.5 + confidence / 2.0) * np.sqrt(variance)
    return AUCInterval(
        auc=float(value),
        low=float(max(value - half_width, 0.0)),
        high=float(min(value + half_width, 1.0)),
    )


def weighted_delong(positive, score, count):
    """AUC and DeLong's variance with case counts (frequency weights).

    Equal to :func:`delong_covariance` on the data with case ``i``
    repeated ``count[i]`` times, in O(n log n) without repeating.

    Parameters
    ----------
    positive : ndarray of bool, shape (n_samples,)
    score : ndarray of float, shape (n_samples,)
    count : ndarray of float, shape (n_samples,)
        Non-negative integer counts.

    Returns
    -------
    auc, variance : float

    Raises
    ------
    ValueError
        If a class has a total count below two.
    """
    count_pos = np.where(positive, count, 0.0)
    count_neg = count - count_pos
    m, n = count_pos.sum(), count_neg.sum()
    if min(m, n) < 2:
        which = "positive" if m < n else "negative"
        raise ValueError(
            f"DeLong's variance needs a total count of at least 2 in each class; "
            f"the {which} class has {min(m, n):g}."
        )
    distinct, slot = np.unique(score, return_inverse=True)
    neg_at = np.bincount(slot, weights=count_neg, minlength=distinct.size)
    pos_at = np.bincount(slot, weights=count_pos, minlength=distinct.size)
    v10 = ((np.cumsum(neg_at) - neg_at) + 0.5 * neg_at)[slot] / n
    v01 = ((m - np.cumsum(pos_at)) + 0.5 * pos_at)[slot] / m
    value = np.dot(count_pos, v10) / m
    s10 = np.dot(count_pos, (v10 - value) ** 2) / (m - 1)
    s01 = np.dot(count_neg, (v01 - value) ** 2) / (n - 1)
    return float(value), float(s10 / m + s01 / n)


def _check_counts(sample_weight, y_true):
    weight = check_weights(sample_weight, y_true)
    if not np.all(weight == np.round(weight)):
        raise ValueError(
            "auc_ci takes sample_weight as case counts (non-negative integers): "
            "DeLong's variance with non-integer weights is not a published "
            "estimator. auc() gives the AUC with such weights."
        )
    return weight


def auc_test(y_true, score_a, score_b, alternative="two-sided", *, pos_label=None):
    """Test whether two correlated AUCs measured on the same cases differ (DeLong).

    ``z = (A_a - A_b) / sqrt(V_aa + V_bb - 2 V_ab)`` with DeLong's covariance
    matrix ``V = S10/m + S01/n`` of the two AUCs [1]_, computed with the
    midrank algorithm of Sun & Xu [2]_.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two class labels; the positive class is ``pos_label``.
    score_a, score_b : array-like of shape (n_samples,)
        Scores of the two classifiers on the same cases.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        "greater" tests ``auc_a > auc_b``.
    pos_label : label, default=None
        The positive class; default the second of the sorted labels.

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

    References
    ----------
    .. [1] E. R. DeLong, D. M. DeLong, D. L. Clarke-Pearson, "Comparing the
       areas under two or more correlated receiver operating characteristic
       curves: a nonparametric approach", Biometrics 44 (1988) 837-845.
    .. [2] X. Sun, W. Xu, "Fast implementation of DeLong's algorithm for
       comparing the areas under correlated receiver operating characteristic
       curves", IEEE Signal Processing Letters 21 (2014) 1389-1393.

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
            f"{plain(alternative)}."
        )
    positive, _ = check_binary_labels(y_true, pos_label=pos_label)
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
