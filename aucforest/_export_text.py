"""A tree as text, with its categorical splits as sets of levels.

scikit-learn's ``export_text`` (and ``plot_tree``) read a split as
``feature <= threshold``; a categorical split has no threshold (NaN) and
would print as ``state <= nan``. `export_text` prints the same report, line
for line scikit-learn's for the other splits, and a categorical split as the
levels each child receives.
"""
from io import StringIO

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._categories import levels_going_left

__all__ = ["export_text"]


def export_text(decision_tree, *, feature_names=None, class_names=None, max_depth=10,
                spacing=3, decimals=2, show_weights=False):
    """The rules of a fitted `AUCTreeClassifier` as text.

    As ``sklearn.tree.export_text`` (same options, same lines for leaves and
    ordered splits), except that a categorical split reads as the levels each
    child receives, the side of missing values marked::

        |--- state in {CA, NY}
        |   |--- class: 1
        |--- state in {TX, WA} or missing
        |   |--- class: 0

    "missing" is a missing value, a level not seen at fit, and a level that
    did not reach the node at fit: they all go where the node sends missing
    values. A categorical feature given as codes (no ``categories_``) prints
    its codes, the missing side as ``not in`` the other side's codes.

    Parameters
    ----------
    decision_tree : AUCTreeClassifier
        A fitted tree, e.g. ``forest.estimators_[0]``.
    feature_names : array-like of str, default=None
        One name per feature; None: the tree's ``feature_names_in_`` when it
        was fitted on a DataFrame, else ``feature_0``, ``feature_1``, ...
    class_names : array-like of str, default=None
        One name per class, in the order of ``classes_``; None: ``classes_``.
    max_depth, spacing, decimals, show_weights
        As in ``sklearn.tree.export_text``.

    Returns
    -------
    str
    """
    check_is_fitted(decision_tree)
    tree_ = decision_tree.tree_
    feature_names = tree_feature_names(decision_tree, feature_names, "feature_{}")
    if class_names is None:
        class_names = decision_tree.classes_
    elif len(class_names) != len(decision_tree.classes_):
        raise ValueError(f"class_names must contain {len(decision_tree.classes_)} elements "
                         f"(one per class), got {len(class_names)}")
    conditions = _Conditions(tree_, feature_names, decimals,
                             getattr(decision_tree, "categories_", None))
    report = StringIO()

    def leaf(node, indent):
        value = tree_.value[node][0]
        text = ""
        if show_weights:
            weights = value * tree_.weighted_n_node_samples[node]
            text = " weights: [" + ", ".join(f"{w:.{decimals}f}" for w in weights) + "]"
        report.write(f"{indent}{text} class: {class_names[np.argmax(value)]}\n")

    def recurse(node, depth):
        indent = ("|" + " " * spacing) * depth
        indent = indent[:-spacing] + "-" * spacing
        if depth > max_depth + 1:
            below = _depth(tree_, node)
            if below == 1:
                leaf(node, indent)
            else:
                report.write(f"{indent} truncated branch of depth {below}\n")
        elif tree_.feature[node] < 0:
            leaf(node, indent)
        else:
            left, right = conditions.of(node)
            report.write(f"{indent} {left}\n")
            recurse(tree_.children_left[node], depth + 1)
            report.write(f"{indent} {right}\n")
            recurse(tree_.children_right[node], depth + 1)

    recurse(0, 1)
    return report.getvalue()


def tree_feature_names(decision_tree, feature_names, unnamed):
    """The names of a fitted tree's features: ``feature_names`` (checked to
    give one per feature), else its ``feature_names_in_``, else
    ``unnamed.format(j)`` for feature j."""
    n_features = decision_tree.tree_.n_features
    if feature_names is None:
        feature_names = getattr(decision_tree, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [unnamed.format(j) for j in range(n_features)]
    if len(feature_names) != n_features:
        raise ValueError(f"feature_names must contain {n_features} elements, got "
                         f"{len(feature_names)}")
    return feature_names


class _Conditions:
    """The conditions of a node's two children, as text."""

    def __init__(self, tree_, feature_names, decimals, categories):
        self.tree_, self.names, self.decimals = tree_, feature_names, decimals
        self.categories = categories
        split = tree_.categorical_split if tree_.node_count else np.zeros(0, np.uint8)
        # a categorical split's row of left_levels: the splits are in node order
        self.row = np.cumsum(split) - 1
        self.is_categorical = split == 1
        self.left_levels = tree_.left_levels

    def of(self, node):
        name = self.names[self.tree_.feature[node]]
        if not self.is_categorical[node]:
            threshold = f"{self.tree_.threshold[node]:.{self.decimals}f}"
            return f"{name} <= {threshold}", f"{name} >  {threshold}"
        goes_left = levels_going_left(self.left_levels[self.row[node]])
        missing_left = bool(self.tree_.missing_go_to_left[node])
        levels = None if self.categories is None else self.categories[self.tree_.feature[node]]
        if levels is None:  # codes as given: the missing side is every other code
            kept = _set(np.flatnonzero(goes_left != missing_left))
            inside, outside = f"{name} in {kept}", f"{name} not in {kept}"
            return (outside, inside) if missing_left else (inside, outside)
        left = _set(levels[c] for c in range(len(levels)) if goes_left[c])
        right = _set(levels[c] for c in range(len(levels)) if not goes_left[c])
        return (f"{name} in {left}" + (" or missing" if missing_left else ""),
                f"{name} in {right}" + ("" if missing_left else " or missing"))


def _set(values):
    return "{" + ", ".join(str(v) for v in values) + "}"


def _depth(tree_, node):
    """Levels of the subtree at ``node`` (1: a leaf)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if tree_.feature[node] >= 0:
            stack.extend([(tree_.children_left[node], depth + 1),
                          (tree_.children_right[node], depth + 1)])
    return deepest
