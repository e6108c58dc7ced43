"""A tree drawn by scikit-learn's ``plot_tree`` and ``export_graphviz``, with its
categorical splits as sets of levels.

scikit-learn draws every split as ``feature <= threshold``; a categorical split
has no threshold (NaN) and would read ``state <= nan``. `plot_tree` and
`export_graphviz` call scikit-learn's functions unchanged and then rewrite the
split line of each categorical node to the condition of its left ("True")
child, as `aucforest.tree.export_text` writes it: ``state in {CA, NY}``, with
``or missing`` when missing values (and levels not seen at fit) go left.
"""
import re

import numpy as np
from sklearn import tree as sklearn_tree
from sklearn.utils.validation import check_is_fitted

from ._export_text import _Conditions, tree_feature_names

__all__ = ["plot_tree", "export_graphviz"]

#: What scikit-learn writes for the threshold of a split without one.
_NO_THRESHOLD = "nan"


def plot_tree(decision_tree, *, feature_names=None, **options):
    """Plot a fitted tree with ``sklearn.tree.plot_tree``, categorical splits as level sets.

    Parameters
    ----------
    decision_tree : AUCTreeClassifier
        A fitted tree, e.g. ``forest.estimators_[0]``.
    feature_names : array-like of str, default=None
        One name per feature; None: the tree's ``feature_names_in_`` when it
        was fitted on a DataFrame, else scikit-learn's ``x[j]``.
    **options
        The other options of ``sklearn.tree.plot_tree`` (``max_depth``,
        ``class_names``, ``filled``, ``ax``, ...).

    Returns
    -------
    annotations : list of matplotlib.text.Annotation
        As ``sklearn.tree.plot_tree``: the node boxes, a categorical split's
        first line reading e.g. ``state in {CA, NY}`` (the left, "True",
        child's levels; ``or missing`` when missing values go left).
    """
    names, conditions = _names_and_conditions(decision_tree, feature_names)
    annotations = sklearn_tree.plot_tree(decision_tree, feature_names=names, **options)
    boxes = [a for a in annotations if a.get_text().strip() not in ("True", "False", "(...)")]
    shown = _preorder(decision_tree.tree_, options.get("max_depth"))
    if len(boxes) != len(shown):  # scikit-learn changed how it draws: refuse, never mislabel
        raise RuntimeError(f"scikit-learn's plot_tree drew {len(boxes)} node boxes for "
                           f"{len(shown)} nodes: cannot place the categorical splits")
    for box, node in zip(boxes, shown):
        if conditions.is_categorical[node]:
            box.set_text(_rewritten(box.get_text(), "\n", "<=",
                                    conditions.of(node)[0]))
    return annotations


def export_graphviz(decision_tree, out_file=None, *, feature_names=None,
                    special_characters=False, **options):
    """A fitted tree in DOT format (``sklearn.tree.export_graphviz``), categorical splits as
    level sets.

    Parameters
    ----------
    decision_tree : AUCTreeClassifier
        A fitted tree, e.g. ``forest.estimators_[0]``.
    out_file : str or file object, default=None
        Where to write the DOT text; None: it is returned.
    feature_names : array-like of str, default=None
        One name per feature; None: the tree's ``feature_names_in_`` when it
        was fitted on a DataFrame, else scikit-learn's ``x[j]``.
    special_characters : bool, default=False
        As in scikit-learn: HTML labels (the level sets are escaped for them).
    **options
        The other options of ``sklearn.tree.export_graphviz``.

    Returns
    -------
    dot_data : str or None
        The DOT text when ``out_file`` is None, as scikit-learn returns it.
    """
    names, conditions = _names_and_conditions(decision_tree, feature_names)
    dot = sklearn_tree.export_graphviz(decision_tree, None, feature_names=names,
                                       special_characters=special_characters, **options)
    separator, less_equal = ("<br/>", "&le;") if special_characters else ("\\n", "<=")
    escape = _html_escape if special_characters else _dot_escape

    def rewrite(match):
        node = int(match.group(1))
        if not conditions.is_categorical[node]:
            return match.group(0)
        text = escape(conditions.of(node)[0])
        return match.group(1) + " [label=" + _rewritten(match.group(2), separator, less_equal,
                                                        text)

    dot = re.sub(r"^(\d+) \[label=(.*)$", rewrite, dot, flags=re.MULTILINE)
    if out_file is None:
        return dot
    if isinstance(out_file, str):
        with open(out_file, "w", encoding="utf-8") as stream:
            stream.write(dot)
    else:
        out_file.write(dot)
    return None


def _names_and_conditions(decision_tree, feature_names):
    """The feature names handed to scikit-learn and the conditions of the splits."""
    check_is_fitted(decision_tree)
    feature_names = [str(name) for name in
                     tree_feature_names(decision_tree, feature_names, "x[{}]")]
    return feature_names, _Conditions(decision_tree.tree_, feature_names, 2,
                                      getattr(decision_tree, "categories_", None))


def _rewritten(label, separator, less_equal, condition):
    """``label`` with its line ``<feature> <less_equal> nan`` replaced by ``condition``."""
    lines = label.split(separator)
    ending = f" {less_equal} {_NO_THRESHOLD}"
    for i, line in enumerate(lines):
        if line.endswith(ending):
            # the first line of a DOT label opens with its quote (" or <)
            start = len(line) - len(line.lstrip('"<')) if i == 0 else 0
            lines[i] = line[:start] + condition
            return separator.join(lines)
    raise RuntimeError(f"no split line ending in {ending!r} in the label {label!r}")


def _preorder(tree_, max_depth):
    """Node ids in the order scikit-learn's plot_tree draws their boxes (depth first, left
    child first), nodes below ``max_depth`` left out."""
    order, stack = [], [(0, 0)]
    while stack:
        node, depth = stack.pop()
        if max_depth is not None and depth > max_depth:
            continue
        order.append(node)
        if tree_.children_left[node] >= 0:
            stack.extend([(tree_.children_right[node], depth + 1),
                          (tree_.children_left[node], depth + 1)])
    return np.asarray(order, dtype=np.intp)


def _dot_escape(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _html_escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
