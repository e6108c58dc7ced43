"""A fitted forest (or tree) as every export reads it (`ExportableForest`).

The writers, `aucforest.export._onnx` (with the ONNX graph of
`aucforest.export._graph`, which the skl2onnx converter shares) and
`aucforest.export._treelite`, read the model only through this module:

* the trees as ``predict`` uses them (collapsed to the forest's
  ``predict_min_samples_``), each as flat node arrays (`FlatTree`): a
  categorical split with the levels that go *away* from its missing side,
  so that NaN, unseen levels and codes outside 0..254 (never among them) go
  where the forest sends them, the missing side;
* the class labels, through the label codec (`aucforest._labels`): what
  ``aucforest.save`` stores, an export carries, refusing the same labels;
* the input columns as ``predict`` encodes them (`ColumnEncoding`), and the
  plain description of the model that an exported file carries (`description`);
* the decision rule (`aucforest._decision_rule.rule_of`) and the class priors it
  reads.
"""
from functools import cached_property
from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._categories import levels_going_left
from .._decision_rule import rule_of
from .._encoding import ColumnEncoding
from .._labels import plain_labels, storable_labels
from ..tree import frozen

N_LEVEL_BITS = 255  # level codes 0..254 (aucforest._tree.MAX_CATEGORIES)


class FlatTree(NamedTuple):
    """One tree as flat node arrays, node ids as in the tree (depth first).

    Attributes
    ----------
    feature : ndarray of int64 (n_nodes,)
        The split's feature; negative at a leaf.
    threshold : ndarray of float64 (n_nodes,)
        A numeric split sends ``float32(x) <= threshold`` left; NaN at a
        categorical split.
    left, right : ndarray of int64 (n_nodes,)
        The children of a split (negative at a leaf).
    missing_left : ndarray of bool (n_nodes,)
        Whether NaN goes left.
    categorical : ndarray of bool (n_nodes,)
        Whether the node is a split on a set of levels.
    away_levels : dict of int to ndarray of int64
        For each categorical split node, the level codes (0..254, sorted)
        that go to the child away from its missing side; every other code,
        NaN and a code out of range go to the missing side.
    proba : ndarray of float64 (n_nodes, n_classes)
        The class proportions the tree predicts at each node.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing_left: np.ndarray
    categorical: np.ndarray
    away_levels: dict
    proba: np.ndarray

    @property
    def is_split(self):
        """Boolean (n_nodes,): which nodes are splits."""
        return self.feature >= 0


def flat_tree(tree):
    """A fitted `aucforest._tree.Tree` as a `FlatTree`."""
    feature = np.asarray(tree.feature, dtype=np.int64)
    is_split = feature >= 0
    missing_left = np.asarray(tree.missing_go_to_left).astype(bool)
    categorical = np.asarray(tree.categorical_split).astype(bool) & is_split
    away_levels = {}
    if categorical.any():  # the rows of left_levels: the categorical splits in node order
        goes_left = levels_going_left(tree.left_levels)[:, :N_LEVEL_BITS]
        for row, node in enumerate(np.flatnonzero(categorical)):
            away_levels[int(node)] = np.flatnonzero(goes_left[row] != missing_left[node])
    return FlatTree(feature=feature, threshold=np.asarray(tree.threshold, dtype=np.float64),
                    left=np.asarray(tree.children_left, dtype=np.int64),
                    right=np.asarray(tree.children_right, dtype=np.int64),
                    missing_left=missing_left, categorical=categorical,
                    away_levels=away_levels, proba=np.asarray(tree.proba, dtype=np.float64))


class ExportableForest:
    """A fitted aucforest forest or tree as the exports read it.

    Parameters
    ----------
    estimator : fitted AUCForestClassifier or AUCTreeClassifier
        Read once (a frozen copy): a refit or ``set_params`` meanwhile does
        not reach the export.
    writer : str
        The exporting function's name, for the TypeError that refuses
        anything else (e.g. "to_onnx").

    Attributes
    ----------
    model : AUCForestClassifier or AUCTreeClassifier
        The frozen copy.
    n_features, n_classes : int
    trees : list of FlatTree
        The trees as ``predict`` uses them (one for a tree).
    labels : ndarray
        The class labels as `aucforest._labels.storable_labels` gives them
        (int64, float64, bool or unicode); reading it raises the ValueError
        of ``aucforest.save`` for labels no model file or export holds.
    rule : aucforest._decision_rule.DecisionRule
        The rule ``predict`` follows (a tree: argmax).
    class_prior, draw_class_weights : ndarray of float64 or None
        What the rule reads (None for a model without them).
    """

    def __init__(self, estimator, writer):
        from .._forest import AUCForestClassifier
        from ..tree import AUCTreeClassifier

        if not isinstance(estimator, (AUCForestClassifier, AUCTreeClassifier)):
            raise TypeError(f"{writer} exports an AUCForestClassifier or AUCTreeClassifier, "
                            f"not {type(estimator).__name__}")
        check_is_fitted(estimator)
        self.model = frozen(estimator)
        self.n_features = int(self.model.n_features_in_)
        self.n_classes = len(self.model.classes_)

    @cached_property
    def trees(self):
        """The trees as flat node arrays (list of `FlatTree`)."""
        return [flat_tree(estimator.tree_) for estimator in self._estimators]

    @property
    def n_trees(self):
        """Number of trees (1 for a tree)."""
        return len(self._estimators)

    @cached_property
    def labels(self):
        """The class labels in the codec's plain form (ndarray)."""
        return storable_labels(self.model.classes_)[0]

    @cached_property
    def rule(self):
        """The decision rule ``predict`` follows (`DecisionRule`)."""
        return rule_of(self.model)

    @property
    def class_prior(self):
        """``class_prior_`` as float64, or None."""
        prior = getattr(self.model, "class_prior_", None)
        return None if prior is None else np.asarray(prior, dtype=np.float64)

    @property
    def draw_class_weights(self):
        """``draw_class_weights_`` as float64, or None."""
        weights = getattr(self.model, "draw_class_weights_", None)
        return None if weights is None else np.asarray(weights, dtype=np.float64)

    @property
    def feature_names(self):
        """``feature_names_in_`` as a list of str, or None."""
        names = getattr(self.model, "feature_names_in_", None)
        return None if names is None else [str(name) for name in names]

    def columns(self, encoding=None):
        """The input columns as ``predict`` encodes them (a `ColumnEncoding`).

        ``encoding``, when given, is the one the forest's columns were made
        with (a model fitted by the command line stores it); it must give
        ``n_features`` columns. None: `ColumnEncoding.from_forest`.
        """
        if encoding is None:
            return ColumnEncoding.from_forest(self.model)
        if not isinstance(encoding, ColumnEncoding):
            raise TypeError(f"encoding must be a ColumnEncoding, not {type(encoding).__name__}")
        if len(encoding.feature_names) != self.n_features:
            raise ValueError(f"the encoding gives {len(encoding.feature_names)} columns but the "
                             f"forest has {self.n_features} features")
        return encoding

    def description(self, encoding=None):
        """What an exported model says about its input and output, as plain
        JSON-ready data.

        Keys ``feature_names`` (the input columns' names, or None for a
        forest fitted without names), ``categorical_features`` (indices),
        ``categories`` (per input column its levels in code order, or None),
        ``classes`` (the labels' JSON form, `aucforest._labels`),
        ``decision`` (`DecisionRule.to_plain`) and ``encoding``
        (`ColumnEncoding.to_dict` of `columns`: how a table's columns become
        the input).
        """
        columns = self.columns(encoding)
        is_categorical = getattr(self.model, "is_categorical_", None)
        return {
            "feature_names": self.feature_names if encoding is None else columns.feature_names,
            "categorical_features": ([] if is_categorical is None
                                     else np.flatnonzero(is_categorical).tolist()),
            "categories": columns.categories,
            "classes": plain_labels(self.model.classes_),
            "decision": self.rule.to_plain(),
            "encoding": columns.to_dict(),
        }

    @property
    def _estimators(self):
        model = self.model
        return model.estimators_ if hasattr(model, "estimators_") else [model]
