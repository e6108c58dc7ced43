"""AUCForestClassifier: bootstrap, threads, out-of-bag estimates, RFQ decision."""
import warnings
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_is_fitted, validate_data

from ._decision import decide, validate_decision
from ._progress import progress
from ._tree import accumulate_proba
from .metrics import auc, gmean_score, multiclass_auc
from .tree import (MAX_SEED, TREE_PARAMETER_CONSTRAINTS, fitted_tree, grow_tree, tree_params,
                   training_matrix, validate_training_data)


class AUCForestClassifier(ClassifierMixin, BaseEstimator):
    """Random forest splitting on the multiclass AUC statistic, for imbalanced data.

    Every tree maximises the AUC split statistic of Ishwaran, Lu & Kogalur
    (theta(L, R), the multiclass rule of the AUC splitting vignette) on a
    bootstrap sample; predictions follow the random forests quantile
    classifier (RFQ, O'Brien & Ishwaran 2019): ``argmax_k p_k(x) / pi_k``.

    Parameters
    ----------
    n_estimators : int, default=500
    criterion : {"auc", "gini", "entropy"}, default="auc"
        Split statistic. Class weights cancel inside the AUC statistic (r_k is
        a ratio within one class): under "auc", ``class_weight`` changes leaf
        probabilities and leaf-size bounds only, not which split wins.
        Bootstrap multiplicities do change the statistic.
    max_features : {"sqrt", "log2"}, int, float or None, default="sqrt"
        Non-constant features examined per node.
    max_depth : int or None, default=None
    min_samples_leaf : int, default=1
        Minimum number of distinct training cases in each child. The default
        is 1 for every criterion: on the 12 imbalanced data sets of
        benchmarks/imbalance.py it gave the best mean AUC and G-mean for both
        AUC and Gini splitting; on large data with a rare class (Caravan,
        yeast6) leaves of about 20 cases gave +0.04 AUC, so tune it there.
    min_weight_fraction_leaf : float, default=0.0
        Minimum fraction of a tree's total weight in each child.
    max_bins : int in [2, 255] or None, default=None
        None: the exact splitter. An int: X is binned once per fit into at
        most max_bins quantile bins per feature and every tree splits on
        per-bin class counts (much faster on large data); see AUCTreeClassifier.
    bootstrap : bool, default=True
        Draw each tree's sample with replacement; the draw is passed to the
        tree as weights (multiplicities), X is never copied.
    max_samples : int, float or None, default=None
        Cases drawn per tree: None, n; int, that many; float, that fraction of
        n. With ``balanced_bootstrap`` it sets the per-class draw: None, the
        minority class size; int, that many per class; float, that fraction
        of the minority class size.
    balanced_bootstrap : bool, default=False
        Each tree draws, with replacement, the same number of cases from
        every class (balanced random forest).
    class_weight : {"balanced", "balanced_subsample"}, dict or None, default=None
        As in scikit-learn.
    decision : {"rfq", "argmax"} or float in (0, 1), default="rfq"
        "rfq": predict ``classes_[argmax_k p_k(x) / pi_k]`` with ``pi_k`` the
        class prior the trees were trained under (``class_prior_``), a tie
        going to the class with the smaller prior; for two classes exactly
        RFQ's ``p_min(x) >= pi_min``. "argmax": the Bayes rule. A float t (two
        classes only): predict ``classes_[1]`` when ``p_1(x) >= t``.
    oob_score : bool, default=False
        Compute out-of-bag class probabilities, the OOB AUC (Hand & Till for
        more than two classes) and the OOB G-mean.
    n_jobs : int or None, default=None
        Threads used to fit and predict (joblib, ``prefer="threads"``). The
        fitted forest does not depend on it.
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
        1 or more: a progress bar over trees on stderr while fitting.

    Notes
    -----
    NaN in X marks a missing value, handled natively by the trees (see
    `AUCTreeClassifier`); infinite values raise ValueError.

    Attributes
    ----------
    estimators_ : list of AUCTreeClassifier
    classes_ : ndarray of shape (n_classes,)
    class_prior_ : ndarray of shape (n_classes,)
        ``pi_k`` used by the RFQ rule: class frequencies weighted by
        sample_weight x class_weight (uniform under ``balanced_bootstrap`` or
        class_weight "balanced"/"balanced_subsample").
    n_features_in_, feature_names_in_, feature_importances_
    oob_decision_function_ : ndarray of shape (n_samples, n_classes)
        NaN for rows that were in every tree's sample.
    oob_score_ : float
        OOB AUC over the rows with OOB predictions.
    oob_gmean_ : float
        OOB G-mean of the predictions under ``decision``.
    """

    _parameter_constraints = {
        **TREE_PARAMETER_CONSTRAINTS,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "max_samples": [
            None,
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0.0, 1.0, closed="right"),
        ],
        "balanced_bootstrap": ["boolean"],
        "class_weight": [StrOptions({"balanced", "balanced_subsample"}), dict, None],
        "decision": [StrOptions({"rfq", "argmax"}), Interval(Real, 0.0, 1.0, closed="neither")],
        "oob_score": ["boolean"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(self, n_estimators=500, *, criterion="auc", max_features="sqrt",
                 max_depth=None, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_bins=None, bootstrap=True, max_samples=None, balanced_bootstrap=False,
                 class_weight=None, decision="rfq", oob_score=False, n_jobs=None,
                 random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_bins = max_bins
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.balanced_bootstrap = balanced_bootstrap
        self.class_weight = class_weight
        self.decision = decision
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the forest on (X, y), optionally weighting the cases."""
        self._check_sampling_params()
        X, y, self.classes_, y_encoded, sample_weight = validate_training_data(
            self, X, y, sample_weight)
        self.n_classes_ = n_classes = self.classes_.shape[0]
        validate_decision(self.decision, n_classes)
        weights = sample_weight * self._class_weights(y)
        self.class_prior_ = self._class_prior(y_encoded, weights)

        random_state = check_random_state(self.random_state)
        seeds = random_state.randint(MAX_SEED, size=self.n_estimators)
        sampler = _TreeSampler(self, y, y_encoded, sample_weight, weights)
        params = tree_params(self)
        fit_X = training_matrix(X, self.max_bins, random_state)  # bin codes when max_bins is set
        fitted = Parallel(n_jobs=self.n_jobs, prefer="threads", return_as="generator")(
            delayed(_fit_tree)(sampler, fit_X, y_encoded, n_classes, params, seed,
                               return_counts=self.oob_score)
            for seed in seeds)
        oob = _OutOfBag(X, n_classes) if self.oob_score else None
        self.estimators_ = []
        with progress(total=self.n_estimators, enabled=self.verbose > 0,
                      description="trees") as bar:
            for seed, (tree_, counts) in zip(seeds, fitted):  # as they arrive: counts not kept
                tree = fitted_tree(tree_, self.classes_, X.shape[1], seed, params)
                self.estimators_.append(bar.step(tree))
                if oob is not None:
                    oob.add(tree, counts)
        if oob is not None:
            self._set_oob_estimates(y, oob)
        return self

    def _check_sampling_params(self):
        if not self.bootstrap and self.max_samples is not None:
            raise ValueError("max_samples applies to bootstrap draws; set bootstrap=True "
                             "or max_samples=None.")
        if not self.bootstrap and self.balanced_bootstrap:
            raise ValueError("balanced_bootstrap=True needs bootstrap=True.")
        if self.oob_score and not self.bootstrap:
            raise ValueError("Out-of-bag estimates are only available with bootstrap=True.")

    def _class_weights(self, y):
        """Class weight of each case over the whole training set ("balanced_subsample"
        is "balanced" here; per tree it is recomputed on the tree's sample)."""
        if self.class_weight is None:
            return np.ones(y.shape[0])
        if self.class_weight == "balanced_subsample":
            return compute_sample_weight("balanced", y)
        return compute_sample_weight(self.class_weight, y)

    def _class_prior(self, y_encoded, weights):
        if self.balanced_bootstrap:
            return np.full(self.n_classes_, 1.0 / self.n_classes_)
        totals = np.bincount(y_encoded, weights=weights, minlength=self.n_classes_)
        return totals / totals.sum()

    def _set_oob_estimates(self, y, oob):
        self.oob_decision_function_ = oob.decision_function()
        has_oob = ~np.isnan(self.oob_decision_function_[:, 0])
        proba, y_oob = self.oob_decision_function_[has_oob], y[has_oob]
        if np.unique(y_oob).size < 2:
            self.oob_score_ = self.oob_gmean_ = np.nan
            return
        if self.n_classes_ == 2:
            self.oob_score_ = auc(y_oob == self.classes_[1], proba[:, 1])
        else:
            self.oob_score_ = multiclass_auc(y_oob, proba, labels=self.classes_)
        self.oob_gmean_ = gmean_score(y_oob, self._decide(proba))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # -------------------------------------------------------------- predict

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float32, order="C", reset=False,
                             ensure_all_finite="allow-nan")

    def predict_proba(self, X):
        """Mean over trees of the leaf class proportions (columns follow classes_)."""
        X = self._validate_X_predict(X)
        n_blocks = max(1, min(effective_n_jobs(self.n_jobs), X.shape[0]))
        bounds = np.linspace(0, X.shape[0], n_blocks + 1).astype(int)
        trees = [estimator.tree_ for estimator in self.estimators_]
        blocks = Parallel(n_jobs=n_blocks, prefer="threads")(
            delayed(_predict_block)(X[lo:hi], trees, self.n_classes_)
            for lo, hi in zip(bounds[:-1], bounds[1:]))
        return np.concatenate(blocks) / len(trees)

    def predict(self, X):
        """Class of each row under the fitted decision rule (see ``decision``)."""
        return self._decide(self.predict_proba(X))

    def _decide(self, proba):
        return self.classes_[decide(proba, self.class_prior_, self.decision)]

    def save(self, path):
        """Write the fitted forest to a safe, versioned .npz model file (see `aucforest.io.save`)."""
        from .io import save
        save(self, path)

    def apply(self, X):
        """Leaf index of each row in each tree, shape (n_samples, n_estimators)."""
        X = self._validate_X_predict(X)
        return np.column_stack([tree.tree_.apply(X) for tree in self.estimators_])

    @property
    def feature_importances_(self):
        """Mean over trees of the normalised weighted decrease of the split statistic."""
        check_is_fitted(self)
        importances = np.mean([tree.tree_.compute_feature_importances()
                               for tree in self.estimators_], axis=0)
        total = importances.sum()
        return importances / total if total > 0 else importances


class _TreeSampler:
    """Draws each tree's sample (as multiplicities) and its weights.

    Holds what every draw needs, computed once per fit: the sampling
    parameters and, for the balanced bootstrap, the cases of each class.
    """

    def __init__(self, forest, y, y_encoded, sample_weight, weights):
        self.bootstrap, self.max_samples = forest.bootstrap, forest.max_samples
        self.balanced, self.class_weight = forest.balanced_bootstrap, forest.class_weight
        self.y, self.sample_weight, self.weights = y, sample_weight, weights
        self.n_samples = y.shape[0]
        if self.balanced:
            members = [np.flatnonzero((y_encoded == k) & (sample_weight > 0))
                       for k in range(forest.n_classes_)]
            self.class_members = [m for m in members if m.size]

    def draw(self, rng):
        """Multiplicity of each case in one tree's sample."""
        if not self.bootstrap:
            return np.ones(self.n_samples, dtype=np.intp)
        if self.balanced:
            per_class = _n_draws(min(m.size for m in self.class_members), self.max_samples)
            indices = np.concatenate([m[rng.randint(0, m.size, per_class)]
                                      for m in self.class_members])
        else:
            indices = rng.randint(0, self.n_samples, _n_draws(self.n_samples, self.max_samples))
        return np.bincount(indices, minlength=self.n_samples)

    def tree_weights(self, counts):
        """sample_weight x class_weight x multiplicity (per-sample class weights
        under "balanced_subsample")."""
        weights = self.weights
        if self.class_weight == "balanced_subsample":
            indices = np.repeat(np.arange(self.n_samples), counts)
            weights = self.sample_weight * compute_sample_weight("balanced", self.y,
                                                                 indices=indices)
        tree_weights = weights * counts
        if not np.any(tree_weights > 0):
            # every drawn case has zero weight: fall back to the full weights
            tree_weights = weights.copy()
        return tree_weights


def _fit_tree(sampler, X, y_encoded, n_classes, params, seed, return_counts=False):
    """Draw one tree's sample from its seed and grow the tree on it.

    Module level, with the data as arguments, so that joblib's Dask backend
    can ship X to the workers once (scatter) and the result is the same
    whatever backend or number of workers runs it.
    """
    rng = np.random.RandomState(seed)
    counts = sampler.draw(rng)
    tree_ = grow_tree(X, y_encoded, sampler.tree_weights(counts), n_classes,
                      seed=rng.randint(MAX_SEED), **params)
    return tree_, (counts if return_counts else None)


class _OutOfBag:
    """Running sums of out-of-bag class proportions, one tree at a time."""

    def __init__(self, X, n_classes):
        self.X = X  # rows are gathered per tree: no C-ordered copy of all of X
        self.proba_sum = np.zeros((X.shape[0], n_classes))
        self.n_trees = np.zeros(X.shape[0])

    def add(self, tree, counts):
        out_of_bag = np.flatnonzero(counts == 0)
        if out_of_bag.size:
            self.proba_sum[out_of_bag] += tree.tree_.predict_proba(self.X[out_of_bag])
            self.n_trees[out_of_bag] += 1

    def decision_function(self):
        """Mean OOB proportions; NaN rows (with one warning) where no tree left the case out."""
        missing = self.n_trees == 0
        if missing.any():
            warnings.warn(
                f"{int(missing.sum())} of {missing.size} cases were in every tree's sample "
                "and have no out-of-bag prediction (NaN); use more trees.", UserWarning)
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.proba_sum / self.n_trees[:, None]


def _predict_block(X, trees, n_classes):
    """Sum over trees of the leaf class proportions for the rows of X."""
    proba = np.zeros((X.shape[0], n_classes))
    accumulate_proba(X, trees, proba)
    return proba


def _n_draws(n_available, max_samples):
    """Cases to draw: all by default, an int as given, a float as a fraction."""
    if max_samples is None:
        return n_available
    if isinstance(max_samples, Integral):
        return int(max_samples)
    return max(1, int(round(n_available * max_samples)))
