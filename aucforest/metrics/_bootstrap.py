"""Bootstrap estimators of a classifier's AUC: leave-one-out, .632, .632+.

References
----------
.. [1] W. A. Yousef, R. F. Wagner, M. H. Loew, "Comparison of non-parametric
   methods for assessing classifier performance in terms of ROC parameters",
   eq. 16-19.
.. [2] B. Efron, R. Tibshirani, "Improvements on cross-validation: the .632+
   bootstrap method", JASA 92 (1997) 548-560.
"""
import numbers
import warnings
from collections import Counter
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.utils import check_consistent_length, check_random_state
from sklearn.utils import _safe_indexing

from ._auc import mann_whitney_auc, multiclass_auc
from ._validation import check_labels, plain

NO_INFORMATION_AUC = 0.5
"""gamma_AUC of eq. 19: the AUC of a rule that ignores the features."""


class BootstrapAUCResult(NamedTuple):
    """Bootstrap estimates of a classifier's AUC.

    Attributes
    ----------
    apparent : float
        AUC of the classifier fitted on all data, scored on the same data.
    loo_bootstrap : float
        Leave-one-out bootstrap AUC^(*) (eq. 16): the mean over replicates of
        the AUC on the cases left out of the replicate.
    b632 : float
        ``.368 * apparent + .632 * loo_bootstrap`` (eq. 17).
    b632_plus : float
        The .632+ estimate (eq. 18).
    overfitting_rate : float
        The relative overfitting rate R' of eq. 19 used by .632+, in [0, 1]
        (0: no overfitting, .632+ = .632; 1: out-of-bag AUC at chance level,
        .632+ = 0.5).
    replicate_aucs : ndarray of shape (n_bootstraps,)
        Out-of-bag AUC of each replicate; NaN for discarded replicates
        (``error_score`` for failed ones).
    n_used : int
        Number of replicates that entered ``loo_bootstrap``.
    n_failed : int
        Number of replicates whose fit or scoring raised an exception.
    """

    apparent: float
    loo_bootstrap: float
    b632: float
    b632_plus: float
    overfitting_rate: float
    replicate_aucs: np.ndarray
    n_used: int
    n_failed: int


def bootstrap_auc(estimator, X, y, n_bootstraps=100, *, stratify=False,
                  error_score=np.nan, n_jobs=None, random_state=None):
    """Apparent, leave-one-out bootstrap, .632 and .632+ AUC of a classifier.

    A clone of ``estimator`` is fitted on all data (apparent AUC) and on each
    of ``n_bootstraps`` bootstrap replicates, and scored on the cases the
    replicate left out. With ``A`` the apparent AUC and ``A*`` the mean
    out-of-bag AUC (eq. 16 of [1]_),

    * ``.632 = .368 A + .632 A*`` (eq. 17),
    * ``.632+ = .632 + (A* - A) .368 .632 R' / (1 - .368 R')`` (eq. 18), with
      ``R' = (A* - A) / (gamma - A)`` if ``A > A* > gamma`` (eq. 19),
      ``gamma = 0.5`` the no-information AUC. When ``A*`` falls to ``gamma``
      or below, ``R' = 1`` and .632+ is ``gamma`` (Efron & Tibshirani's rule,
      see :func:`combine_632_plus`; eq. 19 as printed would set ``R' = 0``).

    With ``K > 2`` classes every AUC is Hand & Till's :func:`multiclass_auc`.
    Scores come from ``predict_proba`` when the estimator has it, else from
    ``decision_function``.

    Replicates that cannot be scored are discarded and do not enter ``A*``:
    those whose training sample misses a class (the clone could not predict
    it), and those whose left-out cases hold fewer than two classes. For
    ``K > 2``, a left-out sample that misses some classes is scored over the
    classes it has, as :func:`multiclass_auc` does. ``n_used`` counts the
    replicates kept; ``stratify=True`` resamples each class separately, which
    keeps every class in every training sample (use it when a class is small).

    A replicate whose fit (or scoring) raises an exception follows
    scikit-learn's ``error_score`` convention: by default it is discarded
    like the replicates above and counted in ``n_failed``, with one
    ``FitFailedWarning`` giving the count and the errors; with
    ``error_score="raise"`` the exception propagates. The fit on all data
    (the apparent AUC) always raises.

    Parameters
    ----------
    estimator : classifier
        Any scikit-learn classifier with ``predict_proba`` or
        ``decision_function``; it is cloned, never modified.
    X : array-like of shape (n_samples, n_features)
        Features, in any form the estimator accepts (indexed by rows).
    y : array-like of shape (n_samples,)
        Class labels (two or more classes).
    n_bootstraps : int, default=100
        Number of bootstrap replicates B.
    stratify : bool, default=False
        Resample within each class, keeping the class sizes.
    error_score : "raise" or float, default=np.nan
        AUC given to a replicate whose fit or scoring raises: NaN discards
        it, a number enters ``loo_bootstrap`` as that replicate's AUC,
        "raise" re-raises the error (as in scikit-learn's
        ``cross_validate``).
    n_jobs : int, default=None
        Replicates fitted in parallel by joblib (None means 1).
    random_state : int, RandomState or None, default=None
        Seeds the replicate draws; results do not depend on ``n_jobs``.
        The estimator's own ``random_state`` is left as given.

    Returns
    -------
    BootstrapAUCResult
        Named fields ``apparent``, ``loo_bootstrap``, ``b632``,
        ``b632_plus``, ``overfitting_rate``, ``replicate_aucs``, ``n_used``,
        ``n_failed``.

    Raises
    ------
    ValueError
        If the estimator has neither ``predict_proba`` nor
        ``decision_function``, ``y`` holds fewer than two classes,
        ``n_bootstraps < 1``, ``error_score`` is neither "raise" nor a
        number, or no replicate could be scored.

    Warns
    -----
    FitFailedWarning
        Once, when some replicates failed and ``error_score`` is not
        "raise".

    References
    ----------
    .. [1] W. A. Yousef, R. F. Wagner, M. H. Loew, "Comparison of
       non-parametric methods for assessing classifier performance in terms of
       ROC parameters", eq. 16-19.
    .. [2] B. Efron, R. Tibshirani, "Improvements on cross-validation: the .632+
       bootstrap method", JASA 92 (1997) 548-560.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> result = bootstrap_auc(LogisticRegression(), X, y, n_bootstraps=10,
    ...                        random_state=0)
    >>> result.loo_bootstrap <= result.b632_plus <= result.b632 <= result.apparent
    True
    """
    if not hasattr(estimator, "predict_proba") and not hasattr(
        estimator, "decision_function"
    ):
        raise ValueError(
            f"{type(estimator).__name__} has neither predict_proba nor "
            "decision_function, so it cannot be scored by AUC."
        )
    if int(n_bootstraps) != n_bootstraps or n_bootstraps < 1:
        raise ValueError(f"n_bootstraps must be a positive integer, got {plain(n_bootstraps)}.")
    if not _is_error_score(error_score):
        raise ValueError(
            f"error_score must be 'raise' or a number, got {plain(error_score)}."
        )
    y = check_labels(y, name="y")
    check_consistent_length(X, y)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError("y must hold at least two classes.")
    apparent = _fit_and_score(estimator, X, y, np.arange(y.size),
                              np.arange(y.size), classes)
    draws = _draw_replicates(y, int(n_bootstraps), stratify,
                             check_random_state(random_state))
    outcomes = Parallel(n_jobs=n_jobs)(
        delayed(_replicate)(estimator, X, y, train, oob, classes, error_score)
        for train, oob in draws
    )
    replicate_aucs = np.array([value for value, _ in outcomes], dtype=float)
    errors = [error for _, error in outcomes if error is not None]
    if errors:
        _warn_failed(errors, len(draws), error_score)
    used = np.isfinite(replicate_aucs)
    if not used.any():
        raise ValueError(
            "No bootstrap replicate could be scored: every replicate missed a "
            "class in its training or left-out sample, or failed. Try "
            "stratify=True or more data."
        )
    loo = float(replicate_aucs[used].mean())
    b632_plus, rate = combine_632_plus(apparent, loo)
    return BootstrapAUCResult(
        apparent=apparent,
        loo_bootstrap=loo,
        b632=combine_632(apparent, loo),
        b632_plus=b632_plus,
        overfitting_rate=rate,
        replicate_aucs=replicate_aucs,
        n_used=int(used.sum()),
        n_failed=len(errors),
    )


def combine_632(apparent, loo_bootstrap):
    """The .632 estimator, eq. 17: ``.368 * apparent + .632 * loo_bootstrap``."""
    return 0.368 * apparent + 0.632 * loo_bootstrap


def combine_632_plus(apparent, loo_bootstrap, gamma=NO_INFORMATION_AUC):
    """The .632+ estimator (eq. 18) and the relative overfitting rate (eq. 19).

    With ``A`` the apparent AUC, ``A*' = max(A*, gamma)`` (eq. 19) and

    * ``R' = (A*' - A) / (gamma - A)`` if ``A > A*'`` (which includes eq. 19's
      case ``A > A* > gamma``), else ``R' = 0``,

    the estimate is ``.368 A + .632 A*' + (A*' - A) .368 .632 R' / (1 - .368
    R')`` (eq. 18), i.e. ``A + (A*' - A) .632 / (1 - .368 R')``.

    Returns
    -------
    estimate : float
    overfitting_rate : float
        ``R'``, in [0, 1].

    Notes
    -----
    Where ``A > A* > gamma`` this is eq. 18-19 exactly. For ``A* <= gamma <
    A`` eq. 19 as printed sets ``R' = 0``, which would make .632+ jump from
    ``gamma`` to the .632 value as ``A*`` crosses ``gamma``; the paper's
    ``A*'`` comes from Efron & Tibshirani (1997, eq. 32), whose rule gives
    ``R' = 1`` there, so that .632+ is continuous in ``A*`` and equals the
    no-information AUC for a classifier no better than chance out of bag.
    This function follows Efron & Tibshirani.
    """
    loo_prime = max(loo_bootstrap, gamma)
    rate = (loo_prime - apparent) / (gamma - apparent) if apparent > loo_prime else 0.0
    correction = (loo_prime - apparent) * 0.368 * 0.632 * rate / (1.0 - 0.368 * rate)
    return combine_632(apparent, loo_prime) + correction, rate


def _draw_replicates(y, n_bootstraps, stratify, rng):
    """``n_bootstraps`` pairs (training indices, left-out indices)."""
    n = y.size
    groups = [np.flatnonzero(y == c) for c in np.unique(y)] if stratify else [np.arange(n)]
    draws = []
    for _ in range(n_bootstraps):
        train = np.concatenate([rng.choice(g, size=g.size, replace=True) for g in groups])
        in_bag = np.zeros(n, dtype=bool)
        in_bag[train] = True
        draws.append((train, np.flatnonzero(~in_bag)))
    return draws


def _replicate(estimator, X, y, train, test, classes, error_score):
    """``(auc, error)`` of one replicate: ``error`` is the text of the
    exception its fit or scoring raised (then ``auc`` is ``error_score``),
    None when it ran."""
    try:
        return _fit_and_score(estimator, X, y, train, test, classes), None
    except Exception as error:
        if isinstance(error_score, str):  # "raise"
            raise
        return float(error_score), f"{type(error).__name__}: {error}"


def _is_error_score(value):
    if isinstance(value, str):
        return value == "raise"
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _warn_failed(errors, n_bootstraps, error_score):
    """One FitFailedWarning with the number of failed replicates and their errors."""
    counts = Counter(errors).most_common(3)
    listed = "; ".join(f"{n} x {message}" for n, message in counts)
    more = "; ..." if len(Counter(errors)) > 3 else ""
    fate = "were left out of" if np.isnan(error_score) else \
        f"entered with AUC {plain(float(error_score))} into"
    warnings.warn(
        f"{len(errors)} of {n_bootstraps} bootstrap replicates failed to fit or "
        f"score and {fate} the estimate ({listed}{more}). Set "
        "error_score='raise' to see the traceback.",
        FitFailedWarning,
        stacklevel=3,
    )


def _fit_and_score(estimator, X, y, train, test, classes):
    """AUC on ``test`` of a clone fitted on ``train``; NaN if it cannot be scored."""
    y_train, y_test = y[train], y[test]
    if np.unique(y_train).size < classes.size or np.unique(y_test).size < 2:
        return np.nan
    fitted = clone(estimator).fit(_safe_indexing(X, train), y_train)
    scores = _scores(fitted, _safe_indexing(X, test))
    if classes.size == 2:
        if scores.ndim == 2:
            scores = scores[:, 1]
        return mann_whitney_auc(y_test == classes[1], scores)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Classes .* do not occur")
        return multiclass_auc(y_test, scores, labels=fitted.classes_)


def _scores(fitted, X):
    if hasattr(fitted, "predict_proba"):
        return np.asarray(fitted.predict_proba(X), dtype=float)
    return np.asarray(fitted.decision_function(X), dtype=float)
