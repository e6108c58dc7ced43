"""AUCTreeClassifier: one tree of the compiled engine, scikit-learn compatible."""
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_is_fitted

from ._base import (TREE_PARAMETER_CONSTRAINTS, check_categorical_codes,
                    check_counts_are_not_booleans, fit_atomically, grow_tree,
                    resolve_max_features, training_layout, training_matrix, tree_params,
                    validate_training_data)
from ._categories import fit_categories, predict_codes, resolve_fitted
from ._compat import StrOptions, fit_context, in_memory, validate_data
from ._decision_rule import rule_of
from ._export_drawings import export_graphviz, plot_tree  # noqa: F401 (splits as sets)
from ._export_text import export_text  # noqa: F401 (categorical splits as sets)
from ._pruning import cost_complexity_path
from ._sampling import check_class_weight_dict, tree_growth_seed
from ._sparse import SparseRows, is_sparse


# A forest's fitted attributes that describe its features: each of its trees
# takes them, so that a tree reads X (column names, category columns) as the
# forest does and per-tree predictions of a DataFrame agree with the forest's.
FEATURE_ATTRIBUTES = ("feature_names_in_", "is_categorical_", "categories_")


def feature_attributes(estimator):
    """The FEATURE_ATTRIBUTES a fitted estimator has, by name."""
    return {name: vars(estimator)[name] for name in FEATURE_ATTRIBUTES if name in vars(estimator)}


def frozen(estimator):
    """A shallow copy of ``estimator`` whose attribute dict is a copy of its own,
    taken at once: one snapshot of its parameters and fitted model.

    A refit publishes a new dict whole (`fit_atomically`) and ``set_params``
    changes the live one; neither reaches the copy, so a method that reads the
    copy only checks X against the model it predicts with.
    """
    copy = object.__new__(type(estimator))
    copy.__dict__ = dict(vars(estimator))  # one read of the live dict
    return copy


def fitted_tree(tree_, classes, n_features_in, random_state, params, features=None):
    """An AUCTreeClassifier wrapping an already grown `Tree` (forests, model
    files), with the forest's `feature_attributes` ``features``."""
    tree = AUCTreeClassifier(random_state=random_state, **params)
    tree.tree_ = tree_
    tree.classes_, tree.n_classes_, tree.n_features_in_ = classes, classes.shape[0], n_features_in
    tree.max_features_ = resolve_max_features(tree.max_features, n_features_in)
    vars(tree).update(features or {})
    return tree


class AUCTreeClassifier(ClassifierMixin, BaseEstimator):
    """A classification tree that splits on the multiclass AUC statistic.

    Each split maximises theta(L, R) = 2/(K(K-1)) sum_{k1<k2} max(U_{k1,k2},
    U_{k2,k1}) over the classes present in the node (Ishwaran, Lu & Kogalur,
    AUC splitting vignette); Gini and entropy are available in the same engine.

    Parameters
    ----------
    criterion : {"auc", "auc_ecp", "gini", "entropy", "log_loss"}, default="auc"
        "auc_ecp": theta - 1/2 divided by the end-cut factor 2 sqrt(q (1 - q))
        (see `AUCForestClassifier`); "log_loss" is "entropy" (scikit-learn's name).
    max_features : {"sqrt", "ceil_sqrt", "log2"}, int, float or None, default=None
        Non-constant features examined per node (None: all; "sqrt" floor and
        "ceil_sqrt" ceiling of sqrt(p)).
    max_depth : int or None, default=None
        Deepest level the tree grows to (the root is level 0); None grows it
        until its leaves are pure or cannot be split.
    min_samples_leaf : int or float, default=1
        Minimum number of distinct training cases in each child; a float is
        that fraction of the training cases, rounded up.
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
    categorical_features : "from_dtype", array-like of int, str or bool, or None, \
default="from_dtype"
        The categorical features, as scikit-learn's
        HistGradientBoostingClassifier reads them: "from_dtype", the pandas
        ``category`` columns of a DataFrame (none for an array, so numeric
        data fits as without categorical features); feature indices, column
        names (X a DataFrame) or a boolean mask; None: none. A ``category``
        column's categories are stored (``categories_``) and a DataFrame at
        predict is mapped to them by value, not by its own codes; a value not
        seen at fit counts as missing (with a warning). Text (object or
        string) columns are refused: convert them to ``category``. Given as
        numbers (an array), the values must be level codes 0, 1, ..., at most
        ``MAX_CATEGORIES`` (255) levels, NaN for missing (ValueError
        otherwise, at fit and predict). A split sends a set of levels left:
        in each node the levels are ordered by their class composition (two
        classes: the share of one; more: the first principal component of
        their class proportions) and cut as an ordered feature. Missing
        values and levels absent from the node at fit go where the node
        sends missing values (``tree_.left_levels``).
    splitter : {"best", "random"}, default="best"
        "random": as scikit-learn's, each examined feature gets one threshold
        drawn uniformly between the node's smallest and largest value, and
        the best of these splits is taken (needs ``max_bins=None`` and
        ``nsplit=None``).
    min_samples_split : int or float, default=2
        A node with fewer distinct training cases is a leaf; a float is that
        fraction of the training cases, rounded up (at least 2).
    max_leaf_nodes : int or None, default=None
        Grow the tree best first (scikit-learn's best-first builder): the node
        whose split decreases the weighted impurity most is split next, until
        this many leaves (at most 2**30). Each node draws its features from a
        random stream of its own, so a bound the tree does not reach gives the
        depth-first tree. None: depth first, no bound.
    min_impurity_decrease : float, default=0.0
        A split is made only if it decreases the weighted impurity by at
        least this: ``N_t / N * (i(t) - N_tR / N_t * i(t_R) - N_tL / N_t *
        i(t_L))``, N the total weight and N_t, N_tL, N_tR the weights of the
        node and its children (scikit-learn's definition). i is the Gini
        impurity or the entropy under those criteria, and the Gini impurity
        under "auc" and "auc_ecp": theta scores a split, it is not the
        impurity of a node, and the Gini index is the impurity of Breiman et
        al. (1984) and scikit-learn's default, so a threshold means the same
        as for a Gini tree.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into the sample weights (as
        scikit-learn's). Under the AUC criteria they cancel inside theta
        (r_k is a ratio within one class): they change the leaf proportions
        and the leaf-size bounds, not which split wins.
    ccp_alpha : float, default=0.0
        Minimal cost-complexity pruning (Breiman et al. 1984, chapter 3): the
        grown tree is pruned to the smallest subtree minimizing
        ``R(T) + alpha * n_leaves(T)``, R(T) the sum over leaves of the node's weight share times
        its impurity (the impurity of ``min_impurity_decrease``: Gini under
        the AUC criteria, since theta gives no node risk to add up). 0: no
        pruning. See `cost_complexity_pruning_path`.

    Attributes
    ----------
    tree_ : Tree
        Node arrays in scikit-learn's layout (``children_left``,
        ``children_right``, ``feature``, ``threshold``, ``value`` of shape
        (node_count, 1, n_classes), ``n_node_samples``,
        ``weighted_n_node_samples``, ``impurity``, ``missing_go_to_left``), so
        that ``sklearn.tree.export_text``, ``plot_tree`` and
        ``export_graphviz`` read it (they show a categorical split, which has
        no threshold, as ``<= nan``; `aucforest.tree.export_text`,
        `aucforest.tree.plot_tree` and `aucforest.tree.export_graphviz` show it
        as sets of levels). Under the AUC criteria ``impurity`` holds
        theta of each node's split (1/2 at leaves).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_classes_ : int
        Number of classes.
    n_features_in_ : int
        Number of features seen during fit.
    max_features_ : int
        Number of features examined per node (``max_features`` resolved).
    feature_importances_ : ndarray of shape (n_features_in_,)
        Weighted decrease of the split statistic per feature, normalised.
    is_categorical_ : ndarray of shape (n_features_in_,), bool
        The categorical features.
    categories_ : list of length n_features_in_
        The categories of each ``category`` column, in their order at fit
        (the level codes 0, 1, ... the trees split); None for the other
        features, also for a categorical feature given as codes.

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

    _parameter_constraints = {
        **TREE_PARAMETER_CONSTRAINTS,
        "splitter": [StrOptions({"best", "random"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(self, criterion="auc", max_features=None, max_depth=None,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_bins=None,
                 nsplit=None, random_state=None, categorical_features="from_dtype", *,
                 splitter="best", min_samples_split=2, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, class_weight=None, ccp_alpha=0.0):
        self.criterion = criterion
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_bins = max_bins
        self.nsplit = nsplit
        self.random_state = random_state
        self.categorical_features = categorical_features
        self.splitter = splitter
        self.min_samples_split = min_samples_split
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.class_weight = class_weight
        self.ccp_alpha = ccp_alpha

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
        X, is_categorical, categories = fit_categories(X, self.categorical_features)
        X, y, self.classes_, y_encoded, weights = validate_training_data(
            self, X, y, sample_weight, order=training_layout(self.max_bins, X))
        if weights is None:
            weights = np.ones(X.shape[0])
        if self.class_weight is not None:
            if isinstance(self.class_weight, dict):
                check_class_weight_dict(self.class_weight)
            weights = weights * compute_sample_weight(self.class_weight, y)
            if not np.any(weights > 0):
                raise ValueError("class_weight x sample_weight is zero for every sample; at "
                                 "least one must be positive.")
        self.n_classes_ = self.classes_.shape[0]
        self.max_features_ = resolve_max_features(self.max_features, X.shape[1])
        self.is_categorical_, self.categories_ = resolve_fitted(
            self.categorical_features, X.shape[1], is_categorical, categories)
        check_categorical_codes(X, self.is_categorical_, getattr(self, "feature_names_in_", None))
        random_state = check_random_state(self.random_state)
        seed = tree_growth_seed(random_state)
        self.tree_ = grow_tree(training_matrix(X, self.max_bins, random_state,
                                               self.is_categorical_),
                               y_encoded, weights, self.n_classes_, seed=seed,
                               is_categorical=self.is_categorical_, splitter=self.splitter,
                               **tree_params(self))

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """Effective alphas of minimal cost-complexity pruning, as scikit-learn's.

        Grows the tree on (X, y) with ``ccp_alpha=0`` and prunes its weakest
        link again and again down to the root (Breiman et al. 1984, section
        3.3); the node risk is the one of ``ccp_alpha`` (Gini under the AUC
        criteria).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; NaN marks a missing value.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative case weights (None: all one).

        Returns
        -------
        ccp_path : Bunch
            ``ccp_alphas``: the effective alpha of each pruning step (the first
            is 0, the full tree), increasing; ``impurities``: the sum of the
            leaves' weighted impurities after each step.
        """
        grown = self.__class__(**dict(self.get_params(), ccp_alpha=0.0))
        tree_ = grown.fit(X, y, sample_weight).tree_
        alphas, impurities = cost_complexity_path(tree_, self.criterion)
        return Bunch(ccp_alphas=alphas, impurities=impurities)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _frozen(self):
        """This tree as it is now (`frozen`): every public method reads only it."""
        return frozen(self)

    def _validate_X_predict(self, X, accept_sparse=True):
        """X as the tree reads it, checked against this estimator's fitted state:
        call it on a `_frozen` copy and predict with that copy's ``tree_``."""
        check_is_fitted(self)
        X = predict_codes(self, in_memory(X))  # a DataFrame's categories mapped by value
        X = validate_data(self, X, dtype=np.float32, order="C", reset=False,
                          accept_sparse="csr" if accept_sparse else False,
                          ensure_all_finite="allow-nan")
        check_categorical_codes(X, getattr(self, "is_categorical_", None),
                                getattr(self, "feature_names_in_", None), sparse="read")
        return SparseRows(X) if is_sparse(X) else X  # converted once for every tree

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
        model = self._frozen()
        X = model._validate_X_predict(X)
        return model.tree_.apply(X)

    def predict_proba(self, X):
        """Weighted class proportions of the leaf of each row.

        Reads the fitted tree once, so a concurrent refit cannot mix two models.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        model = self._frozen()
        X = model._validate_X_predict(X)
        return model.tree_.predict_proba(X)

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
        model = self._frozen()
        X = model._validate_X_predict(X)
        return model.tree_.decision_path(X)

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
        model = self._frozen()
        X = model._validate_X_predict(X)
        proba = model.tree_.predict_proba(X)
        return model.classes_[rule_of(model).apply(proba, None)]  # argmax, the package's ties

    @property
    def feature_importances_(self):
        """Weighted decrease of the split statistic per feature, normalised."""
        model = self._frozen()
        check_is_fitted(model)
        return model.tree_.compute_feature_importances()

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
