"""AUCTreeClassifier: one tree of the compiled engine, scikit-learn compatible."""
import copy
import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._binned import BinnedSplitter
from ._binning import MAX_BINS, BinnedData, bin_features
from ._split import CRITERIA, ExactSplitter
from ._tree import build_tree

MAX_SEED = np.iinfo(np.int32).max

# max_depth=None: no bound (build_tree takes an index-sized int)
LARGEST_INDEX = np.iinfo(np.intp).max

TREE_PARAMETER_CONSTRAINTS = {
    "criterion": [StrOptions(set(CRITERIA))],
    "max_features": [
        Interval(Integral, 1, None, closed="left"),
        Interval(Real, 0.0, 1.0, closed="right"),
        StrOptions({"sqrt", "ceil_sqrt", "log2"}),
        None,
    ],
    # unbounded: grow_tree clips both to what the kernel's index type holds (a larger
    # bound means no bound), so that 2**63 or 2**200 is accepted and means "none"
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
    "min_weight_fraction_leaf": [Interval(Real, 0.0, 0.5, closed="both")],
    "max_bins": [Interval(Integral, 2, MAX_BINS, closed="both"), None],
    # int32, as the kernel's node sizes: the splitters allocate (nsplit + 2) x
    # n_classes doubles, a size a larger nsplit could overflow (and more draws than
    # a node has distinct values change nothing)
    "nsplit": [Interval(Integral, 1, int(np.iinfo(np.int32).max), closed="both"), None],
    "random_state": ["random_state"],
}


COUNT_PARAMETERS = ("n_estimators", "max_features", "max_depth", "min_samples_leaf",
                    "max_samples", "nsplit")


def check_counts_are_not_booleans(estimator):
    """Raise InvalidParameterError for True/False given as a count.

    scikit-learn's constraints take bool as an Integral, so ``n_estimators=True``
    would otherwise reach numpy as a size and fail with an unrelated TypeError
    (and ``predict_min_samples=True`` or ``n_jobs=True`` would silently mean 1).
    """
    for name in (*COUNT_PARAMETERS, "predict_min_samples", "n_jobs"):
        value = getattr(estimator, name, None)
        if isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(estimator).__name__} must be a number, "
                f"got the boolean {bool(value)}.")


TREE_PARAMS = ("criterion", "max_features", "max_depth", "min_samples_leaf",
               "min_weight_fraction_leaf", "max_bins", "nsplit")


def tree_params(estimator):
    """The tree-growing parameters of a tree or forest estimator, as a dict."""
    return {name: getattr(estimator, name) for name in TREE_PARAMS}


def fitted_tree(tree_, classes, n_features_in, random_state, params):
    """An AUCTreeClassifier wrapping an already grown `Tree` (forests, model files)."""
    tree = AUCTreeClassifier(random_state=random_state, **params)
    tree.tree_ = tree_
    tree.classes_, tree.n_classes_, tree.n_features_in_ = classes, classes.shape[0], n_features_in
    return tree


def fit_atomically(estimator, fit_into):
    """Fit a staging copy of `estimator` and publish its state in one assignment.

    ``fit_into(staging)`` sets the fitted attributes on a shallow copy that
    holds the parameters but none of the fitted attributes (names ending in
    "_", scikit-learn's convention). Only when it returns is the copy's
    ``__dict__`` made the estimator's, so a fit that raises or is interrupted
    leaves the previous model as it was, and a thread reading the estimator
    sees either the old model or the new one, never a mix.

    Returns
    -------
    estimator
    """
    staging = copy.copy(estimator)
    staging.__dict__ = {name: value for name, value in vars(estimator).items()
                        if not (name.endswith("_") and not name.startswith("__"))}
    fit_into(staging)
    estimator.__dict__ = staging.__dict__
    return estimator


def resolve_max_features(max_features, n_features):
    """Number of features drawn per node: "sqrt" (floor, scikit-learn's),
    "ceil_sqrt" (randomForestSRC's mtry), "log2", an int, a fraction of
    n_features, or None (all)."""
    if max_features is None:
        count = n_features
    elif max_features == "sqrt":
        count = math.isqrt(n_features)
    elif max_features == "ceil_sqrt":
        count = math.isqrt(n_features - 1) + 1 if n_features > 0 else 0  # ceil(sqrt(p))
    elif max_features == "log2":
        count = int(np.log2(n_features))
    elif isinstance(max_features, Integral):
        count = int(max_features)
    else:
        count = int(max_features * n_features)
    return max(1, min(count, n_features))


def validate_training_data(estimator, X, y, sample_weight):
    """Validate fit inputs with scikit-learn's utilities.

    Returns X as float32 in Fortran order (columns contiguous, what the
    splitter scans), y, the encoded classes, and the sample weights rescaled
    to a maximum of 1 (None when none were given: all one, and no n-sized
    vector of ones). NaN in X marks a missing value; raises ValueError for
    infinite X, fewer than two classes, and negative, non-finite or all-zero
    weights.
    """
    X, y = validate_data(estimator, X, y, dtype=np.float32, order="F",
                         ensure_all_finite="allow-nan", multi_output=False)
    check_classification_targets(y)
    classes, y_encoded = np.unique(y, return_inverse=True)
    if classes.shape[0] < 2:
        raise ValueError(
            f"y has only one class ({classes.tolist()[0]!r}); a classifier needs at least two classes.")
    y_encoded = y_encoded.astype(np.intp, copy=False)
    if sample_weight is None:
        return X, y, classes, y_encoded, None
    weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not np.any(weights > 0):
        raise ValueError("sample_weight is zero for every sample; at least one must be positive.")
    # Fits depend on weights only up to scale: rescale to a maximum of 1 before
    # any sum, so that weights such as 1e307 cannot overflow.
    top = weights.max()  # not in place: weights may be the caller's array
    return X, y, classes, y_encoded, (weights if top == 1.0 else weights / top)


def training_matrix(X, max_bins, random_state):
    """What the trees of one fit grow on: X itself (exact splitter, max_bins=None)
    or its bin codes (binned splitter), computed once per fit.

    random_state (a numpy RandomState) draws the rows used for the quantiles
    when X has many rows; it is not used when max_bins is None.
    """
    if max_bins is None:
        return X
    return bin_features(X, max_bins, random_state)


# a feature looks up its node's distinct values in a table when more than this
# share of its observed values repeat another (see distinct_value_tables)
TIED_SHARE = 0.01


def distinct_value_tables(X):
    """The sorted distinct values of each column of float32 X with many ties
    (more than TIED_SHARE of its observed values repeat another; missing
    values aside), for the exact splitter's ``nsplit`` draws.

    Returns ``(values, offsets)``: column j's table is
    ``values[offsets[j]:offsets[j + 1]]``, empty for the other columns (in
    which nearly every case has a value of its own, so that a case drawn
    uniformly gives a distinct value drawn uniformly, exactly so without
    ties). Computed once per fit.
    """
    tables = []
    for j in range(X.shape[1]):
        column = np.sort(X[:, j])  # NaN last
        observed = column[:np.count_nonzero(~np.isnan(column))]
        first = np.concatenate([[True], observed[1:] != observed[:-1]])  # of each value
        repeats = observed.size - np.count_nonzero(first)
        tables.append(observed[first] if repeats > TIED_SHARE * observed.size
                      else observed[:0])
    offsets = np.concatenate([[0], np.cumsum([t.size for t in tables])]).astype(np.intp)
    return np.concatenate(tables).astype(np.float32), offsets


def grow_tree(X, y_encoded, weights, n_classes, *, criterion, max_features, max_depth,
              min_samples_leaf, min_weight_fraction_leaf, max_bins, nsplit, seed,
              tables=None):
    """Grow one compiled tree on float32 Fortran-ordered X (exact splitter) or
    on `BinnedData` from `training_matrix` (binned splitter). ``tables``: the
    `distinct_value_tables` of X when nsplit is set (computed here if None).

    Weights are rescaled to a maximum of 1 (splits and leaf proportions do not
    change under rescaling), so that weights such as 1e300 or 1e-300 neither
    overflow nor underflow in the sums of squares.
    """
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    top = weights.max()
    if top != 1.0:  # a forest's tree weights come rescaled: no second copy
        weights = weights / top
    min_weight_leaf = min_weight_fraction_leaf * weights.sum() if min_weight_fraction_leaf else 0.0
    # a leaf bound of n cases already forbids every split: larger bounds (such as
    # 2**63) mean the same and must not overflow 2 * bound in C; likewise max_depth
    settings = (n_classes, CRITERIA[criterion], resolve_max_features(max_features, X.shape[1]),
                min(min_samples_leaf, weights.shape[0]), min_weight_leaf, seed)
    if isinstance(X, BinnedData):
        splitter = BinnedSplitter(X.codes, X.edges, X.n_bins, y_encoded, weights, *settings,
                                  nsplit=nsplit or 0)
    else:
        if nsplit and tables is None:
            tables = distinct_value_tables(X)
        splitter = ExactSplitter(X, y_encoded, weights, *settings, nsplit=nsplit or 0,
                                 tables=tables)
    return build_tree(splitter, LARGEST_INDEX if max_depth is None
                      else min(max_depth, LARGEST_INDEX))


class AUCTreeClassifier(ClassifierMixin, BaseEstimator):
    """A classification tree that splits on the multiclass AUC statistic.

    Each split maximises theta(L, R) = 2/(K(K-1)) sum_{k1<k2} max(U_{k1,k2},
    U_{k2,k1}) over the classes present in the node (Ishwaran, Lu & Kogalur,
    AUC splitting vignette); Gini and entropy are available in the same engine.

    Parameters
    ----------
    criterion : {"auc", "auc_ecp", "gini", "entropy"}, default="auc"
        "auc_ecp": theta - 1/2 divided by the end-cut factor 2 sqrt(q (1 - q))
        (see `AUCForestClassifier`).
    max_features : {"sqrt", "ceil_sqrt", "log2"}, int, float or None, default=None
        Non-constant features examined per node (None: all; "sqrt" floor and
        "ceil_sqrt" ceiling of sqrt(p)).
    max_depth : int or None, default=None
    min_samples_leaf : int, default=1
        Minimum number of distinct training cases in each child.
    min_weight_fraction_leaf : float, default=0.0
        Minimum fraction of the total sample weight in each child.
    max_bins : int in [2, 255] or None, default=None
        None: the exact splitter (every threshold between distinct values).
        An int: features are first binned into at most max_bins quantile bins
        (plus one for missing values) and each node is split from per-bin class
        counts, without sorting; thresholds are bin edges. Much faster on large
        data; identical to the exact splitter when no feature has more than
        max_bins distinct values (thresholds aside).
    nsplit : int or None, default=None
        None: every threshold between distinct values. An int k: in each node,
        for each examined feature, k of its distinct observed values drawn
        uniformly without replacement (the largest excepted) give the
        candidate thresholds, and the best of them is taken (randomForestSRC's
        ``nsplit``; nodes with at most k + 1 distinct values are scanned in
        full). Faster (no sort), and more random trees.
        The binned splitter (``max_bins`` set) draws k of the node's occupied
        bins alike and splits at their upper edges.
    random_state : int, RandomState instance or None, default=None
        Controls the order in which features are drawn (and the drawn
        thresholds).

    Notes
    -----
    NaN in X marks a missing value. Each candidate split is scanned with the
    node's missing cases sent left and sent right, and the better side is kept
    (``tree_.missing_go_to_left``); a node that saw no missing value at fit
    time sends them to the child with more training weight.

    Attributes
    ----------
    tree_ : Tree
        Node arrays (children_left, children_right, feature, threshold, value,
        n_node_samples, ...), as in scikit-learn.
    classes_, n_classes_, n_features_in_, feature_importances_
    """

    _parameter_constraints = dict(TREE_PARAMETER_CONSTRAINTS)

    def __init__(self, criterion="auc", max_features=None, max_depth=None,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_bins=None,
                 nsplit=None, random_state=None):
        self.criterion = criterion
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_bins = max_bins
        self.nsplit = nsplit
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the tree on (X, y), optionally weighting the cases.

        A fit that fails or is interrupted leaves the previous tree intact
        (see `fit_atomically`).
        """
        return fit_atomically(self, lambda staging: staging._fit(X, y, sample_weight))

    def _fit(self, X, y, sample_weight):
        check_counts_are_not_booleans(self)
        X, _, self.classes_, y_encoded, weights = validate_training_data(
            self, X, y, sample_weight)
        if weights is None:
            weights = np.ones(X.shape[0])
        self.n_classes_ = self.classes_.shape[0]
        random_state = check_random_state(self.random_state)
        seed = random_state.randint(MAX_SEED)
        self.tree_ = grow_tree(training_matrix(X, self.max_bins, random_state), y_encoded,
                               weights, self.n_classes_, seed=seed, **tree_params(self))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float32, order="C", reset=False,
                             ensure_all_finite="allow-nan")

    def apply(self, X):
        """Index of the leaf each row of X falls in."""
        X = self._validate_X_predict(X)
        return self.tree_.apply(X)

    def predict_proba(self, X):
        """Weighted class proportions of the leaf of each row (columns follow classes_)."""
        X = self._validate_X_predict(X)
        return self.tree_.predict_proba(X)

    def predict_log_proba(self, X):
        """Natural logarithm of `predict_proba` (-inf where a proportion is 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def decision_path(self, X):
        """The nodes each row passes through, a scipy.sparse CSR matrix of shape
        (n_samples, node_count) with 1 where row i passes through node j."""
        X = self._validate_X_predict(X)
        return self.tree_.decision_path(X)

    def predict(self, X):
        """Most frequent class of the leaf of each row."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    @property
    def feature_importances_(self):
        """Weighted decrease of the split statistic per feature, normalised."""
        check_is_fitted(self)
        return self.tree_.compute_feature_importances()

    def get_depth(self):
        check_is_fitted(self)
        return self.tree_.max_depth

    def get_n_leaves(self):
        check_is_fitted(self)
        return self.tree_.n_leaves


# scikit-learn's export_text and plot_tree take DecisionTreeClassifier instances only.
# An AUCTreeClassifier has what they read (``tree_`` with scikit-learn's node arrays,
# ``classes_``, ``criterion``), so it is registered as a virtual subclass (abc): it
# passes their isinstance checks and inherits nothing.
DecisionTreeClassifier.register(AUCTreeClassifier)
