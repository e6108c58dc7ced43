"""A tree of a fit on dask collections put together on the client: its top
(grown by rounds) and the subtrees finished in memory grafted in
(`assemble`), or only its shape and risks (`skeleton`, for max_leaf_nodes)."""
import numpy as np

from .._base import SPLIT_STATISTIC_CRITERIA
from .._leaf_budget import risks
from .._split import CRITERIA
from .._tree import Tree
from ._histogram_splitter import node_impurity


def assemble(root, subtrees, n_features, n_classes, criterion):
    """The grown tree as a `Tree` in depth-first preorder, subtrees grafted."""
    columns = {name: [] for name in ("children_left", "children_right", "feature",
                                     "threshold", "missing_go_to_left", "value",
                                     "n_node_samples", "weighted_n_node_samples",
                                     "impurity", "improvement", "categorical_split")}
    level_sets = []  # the left levels of the categorical splits, in node order
    max_depth = 0
    stack = [(root, -1, True)]
    count = 0
    right_of = {}
    while stack:
        node, parent, is_left = stack.pop()
        index = count
        if parent >= 0 and not is_left:
            right_of[parent] = index
        if node.kind == "local":
            arrays, depth = subtrees[node.id]
            n_sub = arrays["children_left"].shape[0]
            if "left_levels" in arrays:
                level_sets.append(np.asarray(arrays["left_levels"], dtype=np.uint64))
            else:
                arrays = dict(arrays, categorical_split=np.zeros(n_sub, dtype=np.uint8))
            for name in columns:
                a = np.asarray(arrays[name])
                if name in ("children_left", "children_right"):
                    a = np.where(a >= 0, a + index, a)
                columns[name].append(a)
            max_depth = max(max_depth, node.depth + depth)
            count += n_sub
            continue
        max_depth = max(max_depth, node.depth)
        split = node.kind == "split"
        value = node.dcounts / node.weight
        if split:
            r = node.split
            gain = r["improvement"]
            if criterion == "auc":
                impurity = 0.5 + gain
            elif criterion == "auc_ecp":
                q = node.children[1].weight / node.weight
                impurity = 0.5 + gain * 2.0 * np.sqrt(q * (1.0 - q))
            else:
                impurity = node_impurity(node.dcounts, CRITERIA[criterion])
        else:
            gain = 0.0
            impurity = 0.5 if criterion in SPLIT_STATISTIC_CRITERIA else node_impurity(
                node.dcounts, CRITERIA[criterion])
        columns["children_left"].append([index + 1 if split else -1])
        columns["children_right"].append([-1])  # set below for split nodes
        columns["feature"].append([node.split["feature"] if split else -2])
        columns["threshold"].append([node.split["threshold"] if split else -2.0])
        columns["missing_go_to_left"].append([int(node.split["missing_left"]) if split
                                              else 0])
        columns["value"].append(value[None, :])
        columns["n_node_samples"].append([node.n_cases])
        columns["weighted_n_node_samples"].append([node.weight])
        columns["impurity"].append([impurity])
        columns["improvement"].append([gain])
        categorical = split and node.split["categorical"]
        columns["categorical_split"].append(np.array([categorical], dtype=np.uint8))
        if categorical:
            level_sets.append(node.split["left_levels"].reshape(1, 4))
        count += 1
        if split:
            stack.append((node.children[1], index, False))
            stack.append((node.children[0], index, True))
    arrays = {name: np.concatenate(parts) for name, parts in columns.items()}
    for parent, index in right_of.items():
        arrays["children_right"][parent] = index
    if level_sets:
        arrays["left_levels"] = np.concatenate(level_sets).astype(np.uint64)
    else:  # no categorical split: the arrays of a tree of ordered splits
        del arrays["categorical_split"]
    return Tree(n_features, n_classes, max_depth=max_depth, **arrays)


def skeleton(root, skeletons, criterion):
    """A tree's skeleton in depth-first preorder (the `Tree` `assemble`
    makes of it): children arrays and risks (`risks`) of its top's nodes
    and of its subtrees' (``skeletons``), [(index, node)] of the top's
    nodes and of the nodes finished in memory."""
    lefts, rights, risk, top, local = [], [], [], [], []
    stack, count, right_of = [(root, -1)], 0, []
    while stack:
        node, parent = stack.pop()  # parent: the node it is the right child of
        if parent >= 0:
            right_of.append((parent, count))
        if node.kind == "local":
            left, right, r, _ = skeletons[node.id]
            lefts.append(np.where(left >= 0, left + count, -1))
            rights.append(np.where(right >= 0, right + count, -1))
            risk.append(r)
            local.append((count, node))
            count += left.shape[0]
            continue
        split = node.kind == "split"
        lefts.append([count + 1 if split else -1])
        rights.append([-1])
        risk.append([0.0])
        top.append((count, node))
        count += 1
        if split:
            stack.append((node.children[1], count - 1))
            stack.append((node.children[0], -1))
    left, right, risk = (np.concatenate(parts) for parts in (lefts, rights, risk))
    left, right = left.astype(np.intp), right.astype(np.intp)
    for parent, index in right_of:
        right[parent] = index
    if top:  # the proportions and weights `assemble` writes, against the root's weight
        at = np.array([s for s, _ in top])
        proba = np.array([node.dcounts / node.weight for _, node in top])
        weight = np.array([node.weight for _, node in top])
        risk[at] = risks(proba, weight, root.weight, criterion)
    return left, right, risk, top, local
