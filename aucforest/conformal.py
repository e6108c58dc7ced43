"""Mondrian (class-conditional) conformal prediction from out-of-bag scores.

`MondrianConformalClassifier` fits a forest once, with ``oob_score=True``, and
keeps the nonconformity score ``a_i = 1 - p_{y_i}(x_i)`` of every training case
from its out-of-bag class probabilities, one sorted list per class. A new case
gets one p-value per candidate label from the scores of that label's class only
(the Mondrian taxonomy of Vovk, Gammerman & Shafer 2005, ch. 4, with the class
as the category), and the prediction set at level ``alpha`` is the labels whose
p-value exceeds ``alpha``. No calibration set is held out and no forest is
refitted.
"""
import warnings
from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._compat import fit_context
from ._oob_wrapper import OOBForestWrapper

__all__ = ["MondrianConformalClassifier"]


class MondrianConformalClassifier(ClassifierMixin, OOBForestWrapper):
    """Class-conditional conformal prediction sets from a forest's out-of-bag scores.

    ``fit`` clones ``estimator``, fits it once with ``oob_score=True`` and keeps,
    for each class k, the nonconformity scores ``a_i = 1 - p_k(x_i)`` of the
    training cases of class k, computed from their out-of-bag probabilities
    (``oob_decision_function_``). For a new case x and a candidate label k,
    ``a(x, k) = 1 - p_k(x)`` from the whole forest, and with ``n_k`` the
    calibration cases of class k the p-value is

    * smoothed: ``(#{i in k: a_i > a(x, k)} + U (#{i in k: a_i = a(x, k)} + 1)) / (n_k + 1)``
      with U uniform on [0, 1] (drawn from ``random_state``);
    * not smoothed: ``(#{i in k: a_i >= a(x, k)} + 1) / (n_k + 1)``.

    The prediction set at level alpha is ``{k : p_k(x) > alpha}``.

    Parameters
    ----------
    estimator : classifier or None, default=None
        The forest: an estimator with a ``bootstrap`` and an ``oob_score``
        parameter that sets ``oob_decision_function_`` when fitted with
        ``oob_score=True`` (AUCForestClassifier, scikit-learn's
        RandomForestClassifier). None: ``AUCForestClassifier()``. It is cloned;
        ``oob_score`` is set to True unless it is already set.
    smoothing : bool, default=True
        Smoothed p-values (a uniform draw breaks the ties), whose miss rate is
        exactly alpha in each class, or the deterministic p-values, whose miss
        rate is at most alpha. The smoothed sets depend on the draw: pass an int
        ``random_state`` to get the same sets on every call.
    random_state : int, RandomState instance or None, default=None
        Draws the uniforms U of the smoothed p-values, one per row and label:
        ``check_random_state(random_state).uniform(size=(n_samples, n_classes))``
        at each call (not the forest's seed: set ``estimator``'s own
        ``random_state`` for that). An int gives the same p-values on every
        call for the same X.

    Attributes
    ----------
    estimator_ : classifier
        The fitted forest; ``predict`` and ``predict_proba`` are its own.
    classes_ : ndarray of shape (n_classes,)
        Class labels; the columns of `p_values` and `predict_set` follow them.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of X, when X had string column names.
    calibration_scores_ : list of ndarray
        For each class (in ``classes_`` order) the sorted out-of-bag
        nonconformity scores of its training cases (cases without an OOB
        prediction or with sample weight 0 left out).
    n_calibration_ : ndarray of shape (n_classes,)
        Number of calibration scores of each class, ``n_k``.

    See Also
    --------
    AUCForestClassifier : The default forest.

    Notes
    -----
    **The guarantee** (Vovk, Gammerman & Shafer 2005, ch. 4, Mondrian conformal
    predictors; the class of a case as its category). If the test case and the
    calibration cases of class k are exchangeable given their class (i.i.d.
    cases are) and the scores are computed the same way for all of them, then
    for every class k and every alpha in (0, 1)

        P(k not in set(x) | y = k) <= alpha  (not smoothed),
        P(k not in set(x) | y = k) =  alpha  (smoothed),

    the probability taken over the calibration cases, the test case and U. It
    holds for each class separately, the minority class included (an overall
    coverage of 1 - alpha can hide a much lower one on a rare class; this one
    cannot). It is marginal over the training sample, not conditional on it,
    and says nothing about the size of the sets: a set may hold several labels
    or none. Without smoothing, a class with ``n_k + 1 <= 1 / alpha``
    calibration cases has p-values of at least ``1 / (n_k + 1) > alpha`` and
    is in every set.

    **The caveat of out-of-bag scores.** A calibration score comes from the
    trees that did not draw the case (about 37% of them with the bootstrap),
    the test score from all trees: the two are not exactly exchangeable, so
    the guarantee above is not a theorem for this predictor (crepes says the
    same of its ``oob=True``). Johansson, Boström, Löfström & Linusson (2014)
    found out-of-bag calibrated conformal forests valid in practice;
    Boström et al. (2017) show that out-of-bag scores can be distributed
    differently from test scores. Averages of fewer trees are noisier, which
    tends to make OOB scores larger and the sets conservative, but it is not
    guaranteed: measure the per-class coverage on held-out data
    (benchmarks/conformal_oob.py does). With ``predict_min_samples="oob"``
    the forest's node size is itself chosen on out-of-bag predictions, a
    further (small) dependence.

    Cases of sample weight 0 are left out of the calibration; the others count
    once each whatever their weight (weighted conformal prediction is another
    method). On dask collections the forest is fitted on the dask client and
    the out-of-bag probabilities of its training rows are computed from them
    (``oob_decision_function(X, y, sample_weight)``): the n calibration
    scores are kept in memory.

    ``calibrate(y, sample_weight)`` keeps the scores of ``estimator`` fitted
    elsewhere with ``oob_score=True`` on labels y (the command line's
    ``predict --sets`` calibrates the forest of a model file this way): the
    forest is neither cloned nor fitted again, and becomes ``estimator_``.

    References
    ----------
    .. [1] V. Vovk, A. Gammerman and G. Shafer, "Algorithmic Learning in a
           Random World", Springer, 2005, ch. 4.
    .. [2] U. Johansson, H. Boström, T. Löfström and H. Linusson, "Regression
           conformal prediction with random forests", Machine Learning 97,
           155-176, 2014.
    .. [3] H. Boström, H. Linusson, T. Löfström and U. Johansson,
           "Accelerating difficulty estimation for conformal regression
           forests", Annals of Mathematics and Artificial Intelligence 81,
           125-144, 2017.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from aucforest import AUCForestClassifier
    >>> from aucforest.conformal import MondrianConformalClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> conformal = MondrianConformalClassifier(
    ...     AUCForestClassifier(100, random_state=0), random_state=0).fit(X, y)
    >>> sets = conformal.predict_set(X[:5], alpha=0.1)
    >>> sets.shape, sets.dtype
    ((5, 3), dtype('bool'))
    """

    _parameter_constraints = {
        "estimator": "no_validation",  # checked in fit: a bagged forest with OOB
        "smoothing": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, smoothing=True, random_state=None):
        self.estimator = estimator
        self.smoothing = smoothing
        self.random_state = random_state

    @fit_context(prefer_skip_nested_validation=False)  # the forest validates its own
    def fit(self, X, y, sample_weight=None):
        """Fit the forest once and keep the out-of-bag scores of each class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, passed to the forest as it is (DataFrames with
            ``category`` columns and sparse matrices included; a dask array or
            DataFrame, with y and sample_weight of its rows, is fitted on the
            dask client, see the Notes).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the forest's ``fit``; cases of weight 0 are not
            calibration cases.

        Returns
        -------
        self : MondrianConformalClassifier
            The fitted predictor.
        """
        return self._fit_forest_and_oob(X, y, sample_weight)

    def _check_forest(self, forest):
        params = forest.get_params(deep=False)
        if "oob_score" not in params or "bootstrap" not in params:
            raise ValueError(f"estimator {type(forest).__name__} has no oob_score and "
                             "bootstrap parameters: the conformal scores come from "
                             "out-of-bag predictions of a bagged forest, such as "
                             "AUCForestClassifier or RandomForestClassifier")
        if not params["bootstrap"]:
            raise ValueError("estimator has bootstrap=False: without bootstrap samples no "
                             "case is out of bag, and the conformal scores are out-of-bag "
                             "scores; set bootstrap=True")

    def _oob_state(self, forest, y, oob, sample_weight):
        labels, y_encoded = np.unique(y, return_inverse=True)
        if not np.array_equal(labels, forest.classes_):  # a forest that relabels y
            raise ValueError(f"the forest's classes_ {forest.classes_!r} are not the "
                             f"labels of y {labels!r}")
        # the score of each case for its own class
        scores = _nonconformity(oob)[np.arange(y_encoded.shape[0]), y_encoded]
        has_oob = ~np.isnan(oob).any(axis=1)
        if not has_oob.all():
            warnings.warn(f"{int((~has_oob).sum())} of {has_oob.size} training cases have "
                          "no out-of-bag prediction (they were in every tree's sample) and "
                          "are left out of the conformal calibration; use more trees.",
                          UserWarning)
        keep = has_oob if sample_weight is None else has_oob & (sample_weight != 0)
        calibration = [np.sort(scores[keep & (y_encoded == k)])
                       for k in range(forest.classes_.shape[0])]
        return {"calibration_scores_": calibration,
                "n_calibration_": np.array([s.shape[0] for s in calibration])}

    def p_values(self, X):
        """Conformal p-value of each candidate label for each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows, as the forest's ``predict_proba`` takes them.

        Returns
        -------
        p_values : ndarray of shape (n_samples, n_classes)
            Column k is the p-value of label ``classes_[k]``, from the
            calibration scores of class k only (see the class docstring for
            the formula and the guarantee), in (0, 1].
        """
        check_is_fitted(self)
        calibration = self.calibration_scores_  # read once
        test_scores = _nonconformity(self.estimator_.predict_proba(X))
        uniforms = None
        if self.smoothing:
            uniforms = check_random_state(self.random_state).uniform(size=test_scores.shape)
        return mondrian_p_values(calibration, test_scores, uniforms)

    def predict_set(self, X, alpha):
        """Prediction set of each row: the labels whose p-value exceeds alpha.

        Within each class k the set misses the true label with probability at
        most alpha (exactly alpha when smoothed), under the exchangeability
        stated in the class docstring, which out-of-bag scores meet only
        approximately. A set may be empty or hold several labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows, as the forest's ``predict_proba`` takes them.
        alpha : float
            The miss rate allowed in each class, in (0, 1): 0.1 for sets that
            hold the true label 90% of the time, not 0.9. An alpha above 0.5
            warns (such sets are mostly empty).

        Returns
        -------
        sets : ndarray of shape (n_samples, n_classes), dtype bool
            True where label ``classes_[k]`` is in the row's set.

        Warns
        -----
        UserWarning
            If alpha > 0.5, which reads like a confidence level.
        """
        alpha = _check_alpha(alpha)
        if alpha > 0.5:
            warnings.warn(f"alpha={alpha:g} is the miss rate allowed in each class, not the "
                          f"confidence: only labels with a p-value above {alpha:g} are kept, "
                          f"so most sets will be empty; did you mean alpha={1 - alpha:.3g}?",
                          UserWarning, stacklevel=2)
        return self.p_values(X) > alpha

    def predict_proba(self, X):
        """Class probabilities of the fitted forest.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        check_is_fitted(self)
        return self.estimator_.predict_proba(X)

    def predict(self, X):
        """Class of each row under the fitted forest's own decision rule.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted class labels.
        """
        check_is_fitted(self)
        return self.estimator_.predict(X)


def _nonconformity(proba):
    """The nonconformity score ``a = 1 - p_k`` of each row with each label k.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities (out-of-bag ones for the calibration cases, the
        whole forest's for new cases).

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
        ``1 - proba``, as float64.
    """
    return 1.0 - np.asarray(proba, dtype=np.float64)


def mondrian_p_values(calibration_scores, test_scores, uniforms=None):
    """Mondrian conformal p-values of test scores against each class's calibration scores.

    Parameters
    ----------
    calibration_scores : list of ndarray
        Element k: the sorted nonconformity scores of the calibration cases of
        class k.
    test_scores : ndarray of shape (n_samples, n_classes)
        Column k: the nonconformity score of each test row with label k.
    uniforms : ndarray of shape (n_samples, n_classes) or None, default=None
        The U of the smoothed p-values; None: not smoothed.

    Returns
    -------
    p_values : ndarray of shape (n_samples, n_classes)
        Smoothed ``(#{a_i > a} + U (#{a_i = a} + 1)) / (n_k + 1)`` or
        ``(#{a_i >= a} + 1) / (n_k + 1)``, with the a_i of class k.
    """
    p_values = np.empty(test_scores.shape, dtype=np.float64)
    for k, scores in enumerate(calibration_scores):
        at_most = np.searchsorted(scores, test_scores[:, k], side="right")
        below = np.searchsorted(scores, test_scores[:, k], side="left")
        n_k = scores.shape[0]
        if uniforms is None:
            p_values[:, k] = n_k - below + 1
        else:
            p_values[:, k] = (n_k - at_most) + uniforms[:, k] * (at_most - below + 1)
        p_values[:, k] /= n_k + 1
    return p_values


def _check_alpha(alpha):
    """alpha as a float in the open interval (0, 1), or ValueError naming it."""
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, Real) \
            or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in the open interval (0, 1), the miss "
                         f"rate allowed in each class; got {alpha!r}")
    return float(alpha)
