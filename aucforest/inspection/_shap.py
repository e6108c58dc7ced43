"""SHAP values of a fitted forest.

This module owns the explanation of a forest's class probabilities by exact
path-dependent TreeSHAP (Lundberg, Erion, Chen et al., Nature Machine
Intelligence 2020, Algorithm 2): `shap_values` reads each tree once through
its public node arrays, packs all trees into flat arrays and runs the compiled
kernel (`aucforest.inspection._treeshap`) on blocks of rows in threads;
`to_shap` gives the same trees in the ``shap`` package's custom tree format,
for its plots and its own ``TreeExplainer``.

What is explained is ``predict_proba``: the class proportions of the leaf
each row reaches, averaged over the trees of ``estimators_`` (which the forest
has collapsed to ``predict_min_samples_``).
"""
import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils.validation import check_is_fitted

from .._forest import AUCForestClassifier
from ..tree import AUCTreeClassifier
from ._treeshap import add_shap_values, root_expectations, tree_depth


def shap_values(forest, X, *, n_jobs=None):
    """Compute exact SHAP values of the class probabilities, per row, feature and class.

    Path-dependent TreeSHAP (Lundberg et al. 2020, Algorithm 2): the value of
    a set S of known features is each tree's conditional expectation given
    x_S, taking both children of a split on an unknown feature in proportion
    to their training weight (``weighted_n_node_samples``). A missing value
    (NaN) follows the node's missing direction, as in prediction. Cost
    O(leaves x depth^2) per row and tree; all classes in one pass.

    Parameters
    ----------
    forest : fitted AUCForestClassifier or AUCTreeClassifier
        The model whose ``predict_proba`` is explained.
    X : array-like or pandas DataFrame of shape (n_samples, n_features)
        Rows to explain; NaN marks a missing value. Checked and mapped as
        ``predict`` does, against the same snapshot of the model whose trees
        are explained: ``category`` columns by value, a level not seen at fit
        as missing (with a warning), feature names checked.
    n_jobs : int or None, default=None
        Threads, one block of rows each; None: the forest's ``n_jobs``.

    Returns
    -------
    values : ndarray of shape (n_samples, n_features, n_classes)
        SHAP value of each feature for each class's probability.
    base_values : ndarray of shape (n_classes,)
        The expected probabilities with no feature known: mean over trees
        of the sum over leaves of cover share x class proportions.
        ``base_values + values.sum(axis=1)`` is ``forest.predict_proba(X)``.

    References
    ----------
    S. M. Lundberg, G. Erion, H. Chen et al., "From local explanations to
    global understanding with explainable AI for trees", Nature Machine
    Intelligence 2 (2020), 56-67, Algorithm 2.
    """
    explained, X, default_jobs = _explained_model(forest, X)
    packed = _Packed(explained)
    values = np.zeros((X.shape[0], X.shape[1], packed.value.shape[1]))
    n_blocks = max(1, min(effective_n_jobs(default_jobs if n_jobs is None else n_jobs),
                          X.shape[0]))
    bounds = np.linspace(0, X.shape[0], n_blocks + 1).astype(int)
    stop = np.zeros(1, dtype=np.uint8)
    try:
        Parallel(n_jobs=n_blocks, prefer="threads")(
            delayed(packed.add)(X[lo:hi], values[lo:hi], stop)
            for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo)
    except BaseException:
        stop[0] = 1  # the worker threads return at their next tree
        raise
    values /= packed.n_trees
    return values, packed.base_values()


def to_shap(forest):
    """Convert the fitted model to a ``shap`` custom tree ensemble (a dict).

    ``shap.TreeExplainer(to_shap(forest))`` explains ``predict_proba`` (one
    output per class) with the same trees as `shap_values`. Each tree is
    given by ``children_left``, ``children_right``, ``children_default`` (the
    child a missing value goes to), ``features``, ``thresholds``, ``values``
    (class proportions divided by the number of trees, so that the sum over
    trees is the forest's mean) and ``node_sample_weight``
    (``weighted_n_node_samples``). shap sends ``x <= threshold`` left, as the
    trees do; ``input_dtype`` float32 makes shap round X to float32 as the
    forest does, so the thresholds are exact.

    Parameters
    ----------
    forest : fitted AUCForestClassifier or AUCTreeClassifier
        The model to convert.

    Returns
    -------
    dict
        ``{"trees": [...], "input_dtype": numpy.float32, "internal_dtype":
        numpy.float64, "tree_output": "probability"}``.

    Raises
    ------
    ValueError
        If the model has categorical splits (sets of levels), which shap's
        custom tree format, made of thresholds, cannot express; `shap_values`
        explains such a model.
    """
    explained, _, _ = _explained_model(forest, None)
    if any(tree["categorical"].any() for tree in explained):
        raise ValueError("to_shap cannot export a model with categorical splits: the shap "
                         "package's custom trees hold thresholds only, not sets of levels; "
                         "use aucforest.inspection.shap_values instead")
    scale = 1.0 / len(explained)
    trees = []
    for tree in explained:
        split = tree["feature"] >= 0
        index = np.arange(split.shape[0])
        left = np.where(split, index + 1, -1)
        right = np.where(split, tree["right"], -1)
        trees.append({
            "children_left": left.astype(np.int32),
            "children_right": right.astype(np.int32),
            "children_default": np.where(tree["missing_left"] == 1, left, right).astype(np.int32),
            "features": np.where(split, tree["feature"], -1).astype(np.int32),
            "thresholds": np.where(split, tree["threshold"], 0.0),
            "values": tree["value"] * scale,
            "node_sample_weight": tree["cover"].copy(),
        })
    return {"trees": trees, "input_dtype": np.float32, "internal_dtype": np.float64,
            "tree_output": "probability"}


def _explained_model(model, X):
    """The trees of one snapshot of the model (its `_frozen` copy) as it predicts
    with them (`_explained_tree` dicts), X checked and mapped against that same
    snapshot exactly as its ``predict`` does (category columns by value, feature
    names; None: not validated), and the model's ``n_jobs``."""
    if not isinstance(model, (AUCForestClassifier, AUCTreeClassifier)):
        raise TypeError("expected a fitted AUCForestClassifier or AUCTreeClassifier, got "
                        f"{type(model).__name__}")
    model = model._frozen()  # a refit or set_params elsewhere cannot reach this copy
    check_is_fitted(model)
    if isinstance(model, AUCForestClassifier):
        trees, n_jobs = [estimator.tree_ for estimator in model.estimators_], model.n_jobs
    else:
        trees, n_jobs = [model.tree_], 1
    if X is not None:
        # the kernel reads dense rows; a sparse X gets scikit-learn's TypeError (toarray)
        X = model._validate_X_predict(X, accept_sparse=False)
    return ([_explained_tree(tree_, model.n_classes_, model.n_features_in_) for tree_ in trees],
            X, n_jobs)


def _explained_tree(tree_, n_classes, n_features):
    """One tree's node arrays, read once through its public attributes; checked
    against the model's classes and features (the compiled kernel trusts the
    feature indices: they index X and the values).

    Returns
    -------
    dict of arrays: ``right`` (intp, -1 at leaves), ``feature`` (intp, -1 at
    leaves), ``threshold`` (float64), ``missing_left`` (uint8), ``cover``
    (float64, the node's training weight), ``value`` (float64,
    (n_nodes, n_classes)), ``categorical`` (uint8, 1 at categorical splits) and
    ``left_levels`` (uint64 (categorical splits, 4), their level sets).
    """
    n_nodes = int(tree_.node_count)
    right = np.asarray(tree_.children_right, dtype=np.intp)
    feature = np.asarray(tree_.feature, dtype=np.intp)
    threshold = np.asarray(tree_.threshold, dtype=np.float64)
    missing_left = np.asarray(tree_.missing_go_to_left, dtype=np.uint8)
    cover = np.asarray(tree_.weighted_n_node_samples, dtype=np.float64)
    value = np.asarray(tree_.value, dtype=np.float64).reshape(n_nodes, -1)
    if value.shape[1] != n_classes:
        raise ValueError(f"a tree has {value.shape[1]} class proportions per node, the model "
                         f"{n_classes} classes")
    if tree_.n_features != n_features:
        raise ValueError(f"a tree reads {tree_.n_features} features, the model "
                         f"{n_features} features")
    if not np.all(cover > 0):
        raise ValueError("TreeSHAP needs a positive training weight in every node")
    split = feature >= 0
    return {"right": np.where(split, right, -1), "feature": np.where(split, feature, -1),
            "threshold": np.where(split, threshold, 0.0), "missing_left": missing_left,
            "cover": cover, "value": value,
            "categorical": np.asarray(getattr(tree_, "categorical_split", np.zeros(n_nodes)),
                                      dtype=np.uint8),
            "left_levels": np.asarray(getattr(tree_, "left_levels", np.zeros((0, 4))),
                                      dtype=np.uint64).reshape(-1, 4)}


class _Packed:
    """All trees' node arrays end to end, in the kernel's types (read once per call)."""

    def __init__(self, trees):
        sizes = [tree["right"].shape[0] for tree in trees]
        self.n_trees = len(trees)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        self.right = np.concatenate([tree["right"] for tree in trees]).astype(np.int32)
        self.feature = np.concatenate([tree["feature"] for tree in trees]).astype(np.int32)
        self.threshold = np.concatenate([tree["threshold"] for tree in trees])
        self.categorical = np.concatenate([tree["categorical"] for tree in trees])
        # a categorical split's threshold: its row of all trees' level sets
        rows = np.cumsum(self.categorical.astype(np.intp)) - 1
        self.threshold[self.categorical == 1] = rows[self.categorical == 1]
        self.left_levels = np.ascontiguousarray(
            np.concatenate([tree["left_levels"] for tree in trees]), dtype=np.uint64)
        self.missing_left = np.concatenate([tree["missing_left"] for tree in trees])
        self.value = np.ascontiguousarray(np.concatenate([tree["value"] for tree in trees]))
        ratios = []
        for tree in trees:  # each node's cover over its parent's (1 at the root)
            cover, split = tree["cover"], tree["feature"] >= 0
            ratio = np.ones_like(cover)
            parents = np.flatnonzero(split)
            ratio[parents + 1] = cover[parents + 1] / cover[parents]
            ratio[tree["right"][parents]] = cover[tree["right"][parents]] / cover[parents]
            ratios.append(ratio)
        self.ratio = np.concatenate(ratios)
        self.max_depth = max(tree_depth(self.right[lo:hi], self.feature[lo:hi])
                             for lo, hi in zip(self.offsets[:-1], self.offsets[1:]))

    def add(self, X, out, stop):
        """Add the sum over trees of the SHAP values of the rows of X to out."""
        add_shap_values(X, self.offsets, self.right, self.feature, self.threshold,
                        self.missing_left, self.ratio, self.value, self.max_depth, out, stop,
                        self.categorical, self.left_levels)

    def base_values(self):
        """Mean over trees of the root expectation, per class."""
        return root_expectations(self.offsets, self.right, self.feature, self.ratio,
                                 self.value).mean(axis=0)
