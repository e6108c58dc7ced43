"""Standard errors and confidence intervals of VIMP by subsampling (Ishwaran & Lu 2019)."""
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.stats import norm
from sklearn.base import clone
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.validation import column_or_1d

from .._base import MAX_SEED
from ._case_draws import snapshot
from ._permutation import oob_importance


@dataclass(frozen=True)
class ImportanceIntervals:
    """Result of `importance_intervals`, one entry per feature.

    Attributes
    ----------
    importance : ndarray
        theta_hat, the full-data OOB permutation importance.
    se : ndarray
        Delete-d jackknife standard error.
    lower, upper : ndarray
        Normal interval ``importance -+ z_{1-alpha/2} se``.
    pvalue : ndarray
        One-sided p-value for VIMP > 0: ``P(N(0, se^2) >= importance)``.
    subsample_importances : ndarray of shape (n_subsamples, n_features)
        theta*_b, the importance on each subsample.
    subratio : float
        Subsample size as a fraction of n.
    confidence_level : float
        ``1 - alpha``.
    """

    importance: np.ndarray
    se: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    pvalue: np.ndarray
    subsample_importances: np.ndarray
    subratio: float
    confidence_level: float


def default_subratio(n_samples):
    """randomForestSRC's ``get.subsample.subratio``: e^-1 for n < 1000, else
    e^-1 sqrt(1000 / n)."""
    base = np.exp(-1.0)
    return base if n_samples < 1000 else base * np.sqrt(1000.0 / n_samples)


def importance_intervals(forest, X, y, *, n_subsamples=100, subratio=None, alpha=0.05,
                         scoring="auc", n_repeats=1, random_state=None, groups=None):
    """Confidence intervals for the OOB permutation importance, by subsampling.

    Ishwaran & Lu (Statistics in Medicine 38, 2019), as randomForestSRC's
    ``subsample()`` and ``extract.subsample()`` compute them: draw
    ``n_subsamples`` subsamples without replacement of size
    m = subratio * n (stratified by class: that fraction of each class, at
    least one case), refit the forest's parameters on each and take its VIMP
    theta*_b (`oob_importance`). With theta_hat the VIMP of ``forest`` on the
    full data, the delete-d jackknife standard error is

        se = sqrt((m / n) * mean_b (theta*_b - theta_hat)^2),

    the interval theta_hat -+ z_{1-alpha/2} se, and the one-sided p-value for
    VIMP > 0 is ``1 - Phi(theta_hat / se)``. Subsamples whose VIMP is
    undefined (an OOB set with one class) are left out of the mean.

    Parameters
    ----------
    forest : fitted AUCForestClassifier
        Fitted on (X, y) with ``bootstrap=True``; its parameters are refitted
        on each subsample (``sklearn.base.clone``).
    X, y : array-like
        The training data, rows in the order of the fit.
    n_subsamples : int, default=100
        B, the number of subsamples (forest fits).
    subratio : float in (0, 1) or None, default=None
        None: randomForestSRC's rule, e^-1 for n < 1000, else
        e^-1 sqrt(1000 / n).
    alpha : float in (0, 1), default=0.05
        The intervals cover with probability ``1 - alpha``.
    scoring : str or callable, default="auc"
        As in `oob_importance`.
    n_repeats : int, default=1
        Permutations per feature in each VIMP (`oob_importance`).
    random_state : int, RandomState instance or None, default=None
        Draws the permutations, then the subsamples and the refits' seeds.
        ``importance`` equals ``oob_importance(forest, X, y, scoring=scoring,
        n_repeats=n_repeats, random_state=random_state).importances_mean``
        for an int ``random_state``.
    groups : dict of str to list of int, default=None
        Intervals of groups of columns permuted together, as in
        `oob_importance`; entries follow the order of ``groups``.

    Returns
    -------
    ImportanceIntervals
        Named fields ``importance``, ``se``, ``lower``, ``upper``,
        ``pvalue`` (and ``subsample_importances``, ``subratio``,
        ``confidence_level``).
    """
    if not isinstance(n_subsamples, Integral) or n_subsamples < 1:
        raise ValueError(f"n_subsamples must be a positive integer, got {n_subsamples!r}")
    if not isinstance(alpha, Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    y_array = column_or_1d(y, warn=True)
    n_samples = y_array.shape[0]
    if subratio is None:
        subratio = default_subratio(n_samples)
    elif not isinstance(subratio, Real) or not 0 < subratio < 1:
        raise ValueError(f"subratio must be in (0, 1) or None, got {subratio!r}")
    forest = snapshot(forest)  # the importance and the refits: one model's parameters
    rng = check_random_state(random_state)
    importance = oob_importance(forest, X, y_array, scoring=scoring, n_repeats=n_repeats,
                                random_state=rng, groups=groups).importances_mean
    subsample_importances = np.empty((n_subsamples, importance.shape[0]))
    for b in range(n_subsamples):
        rows = stratified_subsample(y_array, subratio, rng)
        X_b, y_b = _safe_indexing(X, rows), y_array[rows]
        refit = clone(forest).set_params(random_state=rng.randint(MAX_SEED), oob_score=False,
                                         verbose=0).fit(X_b, y_b)
        subsample_importances[b] = oob_importance(
            refit, X_b, y_b, scoring=scoring, n_repeats=n_repeats,
            random_state=rng.randint(MAX_SEED), groups=groups).importances_mean
    m = rows.size
    se = np.sqrt(m / n_samples * np.nanmean((subsample_importances - importance) ** 2, axis=0))
    z = norm.ppf(1 - alpha / 2)
    return ImportanceIntervals(
        importance=importance, se=se, lower=importance - z * se, upper=importance + z * se,
        pvalue=_one_sided_pvalue(importance, se), subsample_importances=subsample_importances,
        subratio=float(subratio), confidence_level=1 - alpha)


def stratified_subsample(y, subratio, rng):
    """Rows of a subsample without replacement holding ``floor(subratio * n_k)``
    cases (at least one) of each class k, as randomForestSRC's ``make.strat.sample``."""
    rows = []
    for label in np.unique(y):
        members = np.flatnonzero(y == label)
        size = max(1, int(subratio * members.size))
        rows.append(rng.choice(members, size=size, replace=False))
    return np.sort(np.concatenate(rows))


def _one_sided_pvalue(importance, se):
    """P(N(0, se^2) >= importance); with se = 0, 0 for a positive VIMP and 1 otherwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        pvalue = norm.sf(importance / se)
    return np.where(se > 0, pvalue, np.where(importance > 0, 0.0, 1.0))
