"""Calibrated probabilities from a forest's out-of-bag predictions, without a refit.

Every training case has out-of-bag (OOB) class probabilities, from the trees
that did not draw it: held-out predictions for the whole training set. An
`OOBCalibratedClassifier` fits the forest once, corrects its OOB probabilities
for the class priors of its draws (`aucforest._prior_shift`: Saerens,
Latinne & Decaestecker 2002), and fits one calibration map per class on them:
isotonic regression, Platt's sigmoid or the inductive Venn-Abers predictor.
"""
import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.isotonic import IsotonicRegression
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ._compat import (SigmoidCalibration, StrOptions, check_sample_weight, fit_context,
                      in_memory)
from ._decision import decide
from ._forest import AUCForestClassifier
from ._oob_source import fitted_on_dask, training_oob_proba
from ._prior_shift import draw_class_weights, to_training_priors, training_class_prior

__all__ = ["OOBCalibratedClassifier", "VennAbersCalibration"]


class OOBCalibratedClassifier(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Forest whose probabilities are calibrated on its own out-of-bag predictions.

    ``fit`` clones the forest and fits it once with ``oob_score=True`` (no
    refit, no cross-validation). Its ``oob_decision_function_`` is first
    brought back to the training class priors: a forest grown on a balanced
    bootstrap or with class weights estimates q_k(x) proportional to
    w'_k pi_k f_k(x), and Bayes' rule for a shift of priors gives
    p_k(x) = (q_k(x) / w'_k) / sum_j (q_j(x) / w'_j), w'_k the weight of
    class k in the trees' draws relative to its training share pi_k
    (Saerens, Latinne & Decaestecker 2002; Elkan 2001). Cases without an
    out-of-bag prediction (in every tree's sample: few trees) are left out.
    A map is then fitted from these scores to the labels: for two classes
    one map on the second class of ``classes_`` (the first gets one minus
    it); for K classes one map per class, one-vs-rest, and the K calibrated
    values of a row are divided by their sum (a row that maps to 0 for every
    class gets 1/K each, as in scikit-learn's ``CalibratedClassifierCV``).

    Parameters
    ----------
    estimator : estimator, default=None
        The forest to calibrate: a classifier with an ``oob_score`` parameter
        and ``oob_decision_function_`` after fit (`AUCForestClassifier`, or a
        scikit-learn forest). None: ``AUCForestClassifier()``.
    method : {"isotonic", "sigmoid", "venn_abers"}, default="isotonic"
        "isotonic": isotonic regression, pool adjacent violators (Zadrozny &
        Elkan 2002), scikit-learn's ``IsotonicRegression``. "sigmoid":
        Platt's logistic map ``1 / (1 + exp(A s + B))`` fitted on Platt's
        smoothed targets (Platt 1999), scikit-learn's sigmoid calibration.
        "venn_abers": the inductive Venn-Abers predictor (Vovk & Petej 2014):
        for each score two isotonic fits, with the case added as label 0 and
        as label 1, give an interval [p0, p1] (see `VennAbersCalibration`),
        reported as p1 / (1 - p0 + p1).

    Attributes
    ----------
    estimator_ : estimator
        The fitted forest (``oob_score=True``).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    calibrators_ : list
        The fitted maps: one (the second class) for two classes, else one per
        class in ``classes_`` order.
    class_prior_ : ndarray of shape (n_classes,)
        Training class frequencies pi_k weighted by sample_weight: the priors
        the calibrated probabilities are under and the ``pi_k`` the RFQ rule
        of `predict` compares them with.
    draw_class_weights_ : ndarray of shape (n_classes,)
        w'_k of the prior correction (all ones for a forest that neither
        balances nor weights its classes).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of X, when X had string column names.

    Notes
    -----
    **Out-of-bag against test probabilities.** A case's OOB probabilities
    average the about 37% of the trees that did not draw it (e^-1 of them
    under the bootstrap; 1 - 0.632 under the default subsample), while
    `predict_proba` averages all the trees. An average over fewer trees is
    noisier and spread further from the forest's limit, so the maps are
    fitted on slightly more dispersed scores than they are applied to: they
    tend to pull test probabilities a little too far towards the middle.
    With hundreds of trees both averages are close to the limit and the
    difference is small; with few trees it is not (and some cases have no
    OOB prediction at all). Johansson, Boström, Löfström & Linusson (2014)
    discuss the same mismatch for out-of-bag conformal prediction.

    **The decision rule.** `predict` keeps the forest's ``decision``:
    "rfq" predicts ``argmax_k p_k(x) / pi_k`` on the calibrated p_k with pi_k
    the training class frequencies (``class_prior_``), for two classes
    ``p_min(x) >= pi_min``; "argmax" the largest calibrated probability; a
    threshold t the second class when its calibrated probability is >= t.
    The balanced forest's own RFQ compares its q_k with the uniform prior
    1/K of its balanced draws: q_k / (1/K) is proportional to w'_k pi_k f_k(x)
    with w'_k proportional to 1 / pi_k, that is to f_k(x), the same ranking
    as p_k(x) / pi_k. After the correction the probabilities are under the
    training priors, so the uniform prior no longer applies and pi_k does.
    Class weights on a forest without the balanced bootstrap acted on its
    RFQ rule as costs (its pi_k carries no class weight); the correction
    removes them with the rest of the prior shift, so here RFQ is on the
    calibrated probabilities alone.

    References
    ----------
    J. Platt, "Probabilistic outputs for support vector machines and
    comparisons to regularized likelihood methods", Advances in Large Margin
    Classifiers (1999) 61-74.

    B. Zadrozny and C. Elkan, "Transforming classifier scores into accurate
    multiclass probability estimates", KDD (2002) 694-699.

    V. Vovk and I. Petej, "Venn-Abers predictors", UAI (2014) 829-838.

    M. Saerens, P. Latinne and C. Decaestecker, "Adjusting the outputs of a
    classifier to new a priori probabilities: a simple procedure", Neural
    Computation 14 (2002) 21-41.

    C. Elkan, "The foundations of cost-sensitive learning", IJCAI (2001).

    U. Johansson, H. Boström, T. Löfström and H. Linusson, "Regression
    conformal prediction with random forests", Machine Learning 97 (2014)
    155-176.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from aucforest import AUCForestClassifier
    >>> from aucforest.calibration import OOBCalibratedClassifier
    >>> X, y = make_classification(300, weights=[0.9], random_state=0)
    >>> forest = AUCForestClassifier(100, balanced_bootstrap=True, random_state=0)
    >>> model = OOBCalibratedClassifier(forest, method="isotonic").fit(X, y)
    >>> model.predict_proba(X[:2]).shape
    (2, 2)
    """

    _parameter_constraints = {
        "estimator": "no_validation",
        "method": [StrOptions({"isotonic", "sigmoid", "venn_abers"})],
    }

    def __init__(self, estimator=None, *, method="isotonic"):
        self.estimator = estimator
        self.method = method

    def _forest(self):
        return AUCForestClassifier() if self.estimator is None else self.estimator

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit the forest once and the calibration maps on its OOB probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, as the forest takes it (NaN, sparse matrices and
            pandas categories pass through to it unchanged). A dask array or
            DataFrame (with y and sample_weight dask collections of its rows)
            fits the forest on the dask client; its out-of-bag probabilities
            are then computed from them (``oob_decision_function(X, y,
            sample_weight)``) and gathered, n x K floats, to fit the maps.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Case weights, passed to the forest and to the maps.

        Returns
        -------
        self : OOBCalibratedClassifier
            The fitted estimator.
        """
        forest = clone(self._forest())
        if "oob_score" not in forest.get_params():
            raise TypeError(f"estimator must be a forest with out-of-bag predictions (an "
                            f"oob_score parameter); got {type(forest).__name__}")
        forest.set_params(oob_score=True)
        if sample_weight is None:
            forest.fit(X, y)
        else:
            forest.fit(X, y, sample_weight=sample_weight)
        # a fit on dask collections keeps no n-row oob_decision_function_: computed
        # from the training collections (n x K floats; the maps are fitted in memory)
        oob = (training_oob_proba(forest, "OOBCalibratedClassifier", X, y, sample_weight)
               if fitted_on_dask(forest) else forest.oob_decision_function_)
        y = column_or_1d(in_memory(y))  # the forest checked (and warned about) its shape
        if sample_weight is not None:
            sample_weight = check_sample_weight(in_memory(sample_weight), y)
        return self._calibrate(forest, y, oob, sample_weight)

    def _calibrate(self, forest, y, oob, sample_weight=None):
        """Fit the maps of the fitted ``forest`` on its out-of-bag probabilities
        ``oob`` of the training labels ``y`` (the second half of `fit`; the
        command line calls it on a forest read from a model file)."""
        self.estimator_ = forest
        self.classes_ = forest.classes_
        self.n_features_in_ = forest.n_features_in_
        if hasattr(forest, "feature_names_in_"):
            self.feature_names_in_ = forest.feature_names_in_
        self.class_prior_ = training_class_prior(self.classes_, y, sample_weight)
        self.draw_class_weights_ = draw_class_weights(forest, y, sample_weight)
        scores = to_training_priors(oob, self.draw_class_weights_)
        has_oob = ~np.isnan(scores).any(axis=1)
        if not has_oob.any():
            raise ValueError(f"no training case has an out-of-bag prediction (each was in "
                             f"every tree's sample) to calibrate on; use more trees than "
                             f"n_estimators={getattr(forest, 'n_estimators', '?')}")
        codes = np.searchsorted(self.classes_, y[has_oob])
        weights = None if sample_weight is None else sample_weight[has_oob]
        columns = [1] if len(self.classes_) == 2 else range(len(self.classes_))
        self.calibrators_ = [self._fit_map(scores[has_oob, k], codes == k, weights)
                             for k in columns]
        return self

    def _fit_map(self, scores, is_class, sample_weight):
        labels = is_class.astype(np.float64)
        if self.method == "isotonic":
            calibrator = IsotonicRegression(out_of_bounds="clip")
        elif self.method == "sigmoid":
            calibrator = SigmoidCalibration() if SigmoidCalibration else PlattScaling()
        else:
            calibrator = VennAbersCalibration()
        return calibrator.fit(scores, labels, sample_weight)

    def corrected_proba(self, X):
        """Forest probabilities under the training priors, before calibration.

        The forest's ``predict_proba`` with the prior correction
        ``p_k = (q_k / w'_k) / sum_j (q_j / w'_j)`` (``draw_class_weights_``):
        the scores the calibration maps read.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows, as the forest takes them.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        check_is_fitted(self)
        return to_training_priors(self.estimator_.predict_proba(X), self.draw_class_weights_)

    def predict_proba(self, X):
        """Calibrated class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows, as the forest takes them.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to 1.
        """
        scores = self.corrected_proba(X)
        if len(self.classes_) == 2:
            positive = np.clip(self.calibrators_[0].predict(scores[:, 1]), 0.0, 1.0)
            return np.column_stack([1.0 - positive, positive])
        proba = np.column_stack([np.clip(calibrator.predict(scores[:, k]), 0.0, 1.0)
                                 for k, calibrator in enumerate(self.calibrators_)])
        total = proba.sum(axis=1, keepdims=True)
        empty = (total == 0).ravel()
        proba[empty] = 1.0 / len(self.classes_)
        total[empty] = 1.0
        return proba / total

    def predict_log_proba(self, X):
        """Natural logarithm of `predict_proba` (-inf where a probability is 0).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows, as the forest takes them.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """Predict classes by the forest's decision rule on calibrated probabilities.

        "rfq" compares them with the training class frequencies
        (``class_prior_``), see the Notes of the class; a forest without a
        ``decision`` parameter predicts the most probable class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows, as the forest takes them.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted class labels.
        """
        proba = self.predict_proba(X)
        decision = getattr(self.estimator_, "decision", "argmax")
        return self.classes_[decide(proba, self.class_prior_, decision)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        forest_tags = get_tags(self._forest())
        tags.input_tags.allow_nan = forest_tags.input_tags.allow_nan
        tags.input_tags.sparse = forest_tags.input_tags.sparse
        return tags


class VennAbersCalibration:
    """Inductive Venn-Abers predictor for one class (Vovk & Petej 2014).

    Fitted on calibration scores s_i and 0/1 labels. For a new score s, two
    isotonic regressions are fitted on the calibration cases plus (s, 0) and
    plus (s, 1); their values at s are p0 <= p1, the Venn-Abers interval, and
    the single probability reported is p1 / (1 - p0 + p1), the minimiser of
    the worst log loss over the two (Vovk & Petej 2014, section 4). Ties are
    pooled as scikit-learn's ``IsotonicRegression`` pools them (a score equal
    to calibration scores joins their block).

    The two values are computed at fit for every place a new score can take
    (between or on the distinct calibration scores): the isotonic fit of a
    prefix of the sorted scores is a coarsening-stable stack of pooled blocks
    (pool adjacent violators), as is that of a suffix, so the fit with the
    new case added pools only the new case's block with the top blocks of
    the prefix stack and the bottom blocks of the suffix stack. The stacks
    are kept as linked lists shared between positions.

    Attributes
    ----------
    scores_ : ndarray of shape (n_distinct,)
        Distinct calibration scores, ascending.
    gap_bounds_ : ndarray of shape (n_distinct + 1, 2)
        (p0, p1) for a score below the first, between two consecutive or
        above the last distinct score.
    tie_bounds_ : ndarray of shape (n_distinct, 2)
        (p0, p1) for a score equal to a calibration score.
    """

    def fit(self, scores, labels, sample_weight=None):
        """Fit on calibration scores and 0/1 labels.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Calibration scores (here the corrected OOB probability of the class).
        labels : array-like of shape (n_samples,)
            1 for the class, 0 otherwise.
        sample_weight : array-like of shape (n_samples,), default=None
            Case weights, rescaled to a mean of 1 (the new case weighs 1).

        Returns
        -------
        self : VennAbersCalibration
            The fitted predictor.
        """
        scores = np.asarray(scores, dtype=np.float64)
        labels = np.asarray(labels, dtype=np.float64)
        weight = (np.ones_like(scores) if sample_weight is None
                  else np.asarray(sample_weight, dtype=np.float64))
        weight = weight / weight.mean()
        self.scores_, block = np.unique(scores, return_inverse=True)
        block_weight = np.bincount(block, weights=weight, minlength=self.scores_.size)
        block_sum = np.bincount(block, weights=weight * labels, minlength=self.scores_.size)
        n = self.scores_.size
        stacks = _PooledStacks(block_weight, block_sum)
        self.gap_bounds_ = np.array([[stacks.value_with(g, g, 1.0, float(label))
                                      for label in (0, 1)] for g in range(n + 1)]).reshape(-1, 2)
        self.tie_bounds_ = np.array([[stacks.value_with(m, m + 1, 1.0 + block_weight[m],
                                                        block_sum[m] + label)
                                      for label in (0, 1)] for m in range(n)]).reshape(-1, 2)
        return self

    def predict_interval(self, scores):
        """The Venn-Abers interval [p0, p1] of each score.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores of new cases.

        Returns
        -------
        bounds : ndarray of shape (n_samples, 2)
            The lower bound p0 and the upper bound p1.
        """
        scores = np.asarray(scores, dtype=np.float64).ravel()
        place = np.searchsorted(self.scores_, scores)
        tied = place < self.scores_.size
        tied[tied] = self.scores_[place[tied]] == scores[tied]
        bounds = self.gap_bounds_[place]
        bounds[tied] = self.tie_bounds_[place[tied]]
        return bounds

    def predict(self, scores):
        """Probability of the class: p1 / (1 - p0 + p1).

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores of new cases.

        Returns
        -------
        proba : ndarray of shape (n_samples,)
            The merged Venn-Abers probability.
        """
        p0, p1 = self.predict_interval(scores).T
        return p1 / (1.0 - p0 + p1)


class _PooledStacks:
    """Pool-adjacent-violators stacks of every prefix and suffix of the
    blocks 1..n (as 0..n-1), as linked lists sharing their nodes."""

    def __init__(self, block_weight, block_sum):
        self.weight, self.sum, self.link = [], [], []
        n = len(block_weight)
        # prefix_top[j]: top node of the stack of blocks 0..j-1 (-1: empty)
        self.prefix_top = [-1] * (n + 1)
        top = -1
        for m in range(n):
            top = self._push(top, block_weight[m], block_sum[m], lambda own, other: other > own)
            self.prefix_top[m + 1] = top
        # suffix_top[j]: first node of the stack of blocks j..n-1 (-1: empty)
        self.suffix_top = [-1] * (n + 2)
        top = -1
        for m in range(n - 1, -1, -1):
            top = self._push(top, block_weight[m], block_sum[m], lambda own, other: other < own)
            self.suffix_top[m] = top

    def _push(self, top, weight, total, violates):
        """Node of a block pushed onto the stack at `top`, pooled with the
        nodes it violates against (`violates(own mean, their mean)`)."""
        while top >= 0 and violates(total / weight, self.sum[top] / self.weight[top]):
            weight, total = weight + self.weight[top], total + self.sum[top]
            top = self.link[top]
        self.weight.append(weight)
        self.sum.append(total)
        self.link.append(top)
        return len(self.weight) - 1

    def value_with(self, left_end, right_start, weight, total):
        """Isotonic value of a block of (weight, total) placed between the
        blocks before `left_end` and those from `right_start` on."""
        left, right = self.prefix_top[left_end], self.suffix_top[right_start]
        while True:
            mean = total / weight
            if left >= 0 and self.sum[left] / self.weight[left] > mean:
                weight, total = weight + self.weight[left], total + self.sum[left]
                left = self.link[left]
            elif right >= 0 and self.sum[right] / self.weight[right] < mean:
                weight, total = weight + self.weight[right], total + self.sum[right]
                right = self.link[right]
            else:
                return mean


class PlattScaling:
    """Platt's sigmoid fitted with scipy, where scikit-learn's private
    ``_SigmoidCalibration`` cannot be imported: ``1 / (1 + exp(a s + b))``
    minimising the log loss against Platt's targets (n+ + 1) / (n+ + 2) and
    1 / (n- + 2) (Platt 1999, section 2.2).

    Attributes
    ----------
    a_ : float
        The slope.
    b_ : float
        The intercept.
    """

    def fit(self, scores, labels, sample_weight=None):
        """Fit the slope and intercept.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Calibration scores.
        labels : array-like of shape (n_samples,)
            1 for the class, 0 otherwise.
        sample_weight : array-like of shape (n_samples,), default=None
            Case weights.

        Returns
        -------
        self : PlattScaling
            The fitted map.
        """
        scores = np.asarray(scores, dtype=np.float64)
        positive = np.asarray(labels) > 0
        weight = (np.ones_like(scores) if sample_weight is None
                  else np.asarray(sample_weight, dtype=np.float64))
        n_positive, n_negative = weight[positive].sum(), weight[~positive].sum()
        target = np.where(positive, (n_positive + 1) / (n_positive + 2), 1 / (n_negative + 2))

        def loss_and_gradient(ab):
            raw = -(ab[0] * scores + ab[1])  # log-odds of the class
            proba = expit(raw)
            loss = np.sum(weight * (np.logaddexp(0, raw) - target * raw))
            gradient = weight * (proba - target)  # d loss / d raw
            return loss, np.array([-gradient @ scores, -gradient.sum()])

        start = np.array([0.0, np.log((n_negative + 1) / (n_positive + 1))])
        result = minimize(loss_and_gradient, start, jac=True, method="L-BFGS-B",
                          options={"gtol": 1e-10, "ftol": 64 * np.finfo(float).eps})
        self.a_, self.b_ = result.x
        return self

    def predict(self, scores):
        """Calibrated probability of each score.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores of new cases.

        Returns
        -------
        proba : ndarray of shape (n_samples,)
            ``1 / (1 + exp(a s + b))``.
        """
        return expit(-(self.a_ * np.asarray(scores, dtype=np.float64) + self.b_))
