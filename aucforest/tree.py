"""AUCTreeClassifier: one tree of the compiled engine, scikit-learn compatible."""
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._base import (MAX_SEED, TREE_PARAMETER_CONSTRAINTS, check_categorical_codes,
                    check_counts_are_not_booleans, fit_atomically, grow_tree,
                    resolve_categorical_features, training_matrix, tree_params,
                    validate_training_data)
from ._compat import fit_context, validate_data
from ._sparse import SparseRows, is_sparse


def fitted_tree(tree_, classes, n_features_in, random_state, params):
    """An AUCTreeClassifier wrapping an already grown `Tree` (forests, model files)."""
    tree = AUCTreeClassifier(random_state=random_state, **params)
    tree.tree_ = tree_
    tree.classes_, tree.n_classes_, tree.n_features_in_ = classes, classes.shape[0], n_features_in
    return tree


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
        Deepest level the tree grows to (the root is level 0); None grows it
        until its leaves are pure or cannot be split.
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
    categorical_features : array-like of int or of bool, or None, default=None
        The categorical features, by index or as a boolean mask (None: none).
        Their values must be level codes 0, 1, ..., at most
        ``MAX_CATEGORIES`` (255) levels, NaN for missing (ValueError
        otherwise, at fit and predict). A split sends a set of levels left:
        in each node the levels are ordered by their class composition (two
        classes: the share of one; more: the first principal component of
        their class proportions) and cut as an ordered feature. Missing
        values and levels absent from the node at fit go where the node
        sends missing values (``tree_.left_levels``).

    Attributes
    ----------
    tree_ : Tree
        Node arrays in scikit-learn's layout (``children_left``,
        ``children_right``, ``feature``, ``threshold``, ``value`` of shape
        (node_count, 1, n_classes), ``n_node_samples``,
        ``weighted_n_node_samples``, ``impurity``, ``missing_go_to_left``), so
        that ``sklearn.tree.export_text``, ``plot_tree`` and
        ``export_graphviz`` read it. Under the AUC criteria ``impurity`` holds
        theta of each node's split (1/2 at leaves).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_classes_ : int
        Number of classes.
    n_features_in_ : int
        Number of features seen during fit.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Weighted decrease of the split statistic per feature, normalised.
    is_categorical_ : ndarray of shape (n_features_in_,), bool
        The categorical features.

    See Also
    --------
    AUCForestClassifier : A forest of these trees.

    Notes
    -----
    NaN in X marks a missing value. Each candidate split is scanned with the
    node's missing cases sent left and sent right, and the better side is kept
    (``tree_.missing_go_to_left``); a node that saw no missing value at fit
    time sends them to the child with more training weight.

    X may be a scipy sparse matrix or array: fit reads its columns (CSC, the
    zeros not stored), prediction its rows (CSR), each converted once, as in
    scikit-learn; the tree is the one grown on ``X.toarray()``, and NaN stored
    in the matrix is a missing value.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from aucforest import AUCTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = AUCTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> tree.get_depth()
    2
    """

    _parameter_constraints = dict(TREE_PARAMETER_CONSTRAINTS)

    def __init__(self, criterion="auc", max_features=None, max_depth=None,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_bins=None,
                 nsplit=None, random_state=None, categorical_features=None):
        self.criterion = criterion
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_bins = max_bins
        self.nsplit = nsplit
        self.random_state = random_state
        self.categorical_features = categorical_features

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the tree on (X, y), optionally weighting the cases.

        A fit that fails or is interrupted leaves the previous tree intact.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; NaN marks a missing value.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative case weights (None: all one).

        Returns
        -------
        self : AUCTreeClassifier
            The fitted tree.
        """
        return fit_atomically(self, lambda staging: staging._fit(X, y, sample_weight))

    def _fit(self, X, y, sample_weight):
        check_counts_are_not_booleans(self)
        X, _, self.classes_, y_encoded, weights = validate_training_data(
            self, X, y, sample_weight)
        if weights is None:
            weights = np.ones(X.shape[0])
        self.n_classes_ = self.classes_.shape[0]
        self.is_categorical_ = resolve_categorical_features(self.categorical_features,
                                                            X.shape[1])
        check_categorical_codes(X, self.is_categorical_, getattr(self, "feature_names_in_", None))
        random_state = check_random_state(self.random_state)
        seed = random_state.randint(MAX_SEED)
        self.tree_ = grow_tree(training_matrix(X, self.max_bins, random_state,
                                               self.is_categorical_),
                               y_encoded, weights, self.n_classes_, seed=seed,
                               is_categorical=self.is_categorical_, **tree_params(self))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float32, order="C", reset=False,
                          accept_sparse="csr", ensure_all_finite="allow-nan")
        if is_sparse(X):
            return SparseRows(X)  # converted once for every tree
        check_categorical_codes(X, getattr(self, "is_categorical_", None),
                                getattr(self, "feature_names_in_", None))
        return X

    def apply(self, X):
        """Index of the leaf each row of X falls in.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        leaves : ndarray of shape (n_samples,)
            Node index of each row's leaf in ``tree_``.
        """
        X = self._validate_X_predict(X)
        return self.tree_.apply(X)

    def predict_proba(self, X):
        """Weighted class proportions of the leaf of each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        X = self._validate_X_predict(X)
        return self.tree_.predict_proba(X)

    def predict_log_proba(self, X):
        """Natural logarithm of `predict_proba` (-inf where a proportion is 0).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def decision_path(self, X):
        """Return the nodes each row passes through, from the root to its leaf.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, node_count)
            1 where row i passes through node j.
        """
        X = self._validate_X_predict(X)
        return self.tree_.decision_path(X)

    def predict(self, X):
        """Most frequent class (by weight) of the leaf of each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted class labels.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    @property
    def feature_importances_(self):
        """Weighted decrease of the split statistic per feature, normalised."""
        check_is_fitted(self)
        return self.tree_.compute_feature_importances()

    def get_depth(self):
        """Depth of the tree (the root alone has depth 0).

        Returns
        -------
        depth : int
            Longest path from the root to a leaf, in splits.
        """
        check_is_fitted(self)
        return self.tree_.max_depth

    def get_n_leaves(self):
        """Number of leaves of the tree.

        Returns
        -------
        n_leaves : int
            Number of nodes without children.
        """
        check_is_fitted(self)
        return self.tree_.n_leaves


# scikit-learn's export_text and plot_tree take DecisionTreeClassifier instances only.
# An AUCTreeClassifier has what they read (``tree_`` with scikit-learn's node arrays,
# ``classes_``, ``criterion``), so it is registered as a virtual subclass (abc): it
# passes their isinstance checks and inherits nothing.
DecisionTreeClassifier.register(AUCTreeClassifier)
