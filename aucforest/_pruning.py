"""Minimal cost-complexity pruning of a grown tree (Breiman, Friedman, Olshen &
Stone 1984, Classification and Regression Trees, chapter 3), as scikit-learn's
``ccp_alpha`` and ``cost_complexity_pruning_path``.

The cost of a subtree T is R_alpha(T) = R(T) + alpha |leaves(T)|, with R(T) the
sum of the node risks R(t) = p(t) i(t) of its leaves (p(t) the node's share of
the training weight, i(t) its impurity). Weakest-link pruning (section 3.3)
turns, one at a time, the internal node t of smallest
g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1) into a leaf, as long as g(t) <= alpha.

The impurity is the criterion's (Gini or entropy, in bits). Under the AUC
criteria it is the Gini impurity of the node's class proportions: theta scores
a split and gives no node risk whose sum over the leaves is a tree's cost, and
the Gini index is the risk Breiman et al. prune with (and scikit-learn's default).
"""
import numpy as np

from ._tree import Tree


def node_risks(tree_, criterion):
    """R(t) = p(t) i(t) of every node: its share of the root's weight times its
    impurity (Gini, or entropy in bits under "entropy" / "log_loss")."""
    proba = tree_.proba
    if criterion in ("entropy", "log_loss"):
        with np.errstate(divide="ignore", invalid="ignore"):
            impurity = -np.sum(np.where(proba > 0, proba * np.log2(proba), 0.0), axis=1)
    else:
        impurity = 1.0 - np.sum(proba * proba, axis=1)
    weight = tree_.weighted_n_node_samples
    return weight / weight[0] * impurity


def _weakest_links(tree_, criterion, ccp_alpha):
    """Prune weakest links while g(t) <= ccp_alpha (every one when ccp_alpha is
    inf). Returns (kept-subtree mask, alphas, tree risks): the path starts at
    (0, R(T_max)) and has one entry per pruned node."""
    risk = node_risks(tree_, criterion)
    right = tree_.children_right
    n = tree_.node_count
    left = np.where(right >= 0, np.arange(1, n + 1), -1)
    parent = np.full(n, -1)
    internal = np.flatnonzero(right >= 0)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    # leaves and leaf risk of each node's subtree, children before parents (preorder reversed)
    n_leaves = np.ones(n)
    branch_risk = risk.copy()
    for node in internal[::-1]:
        n_leaves[node] = n_leaves[left[node]] + n_leaves[right[node]]
        branch_risk[node] = branch_risk[left[node]] + branch_risk[right[node]]
    in_tree = np.ones(n, dtype=bool)
    is_leaf = right < 0
    alphas, risks = [0.0], [branch_risk[0]]
    while not is_leaf[0]:
        candidates = np.flatnonzero(in_tree & ~is_leaf)
        g = (risk[candidates] - branch_risk[candidates]) / (n_leaves[candidates] - 1)
        weakest = int(np.argmin(g))  # the first in preorder of equal ones
        alpha = max(float(g[weakest]), 0.0)  # rounding can make it -1e-17
        if alpha > ccp_alpha:
            break
        node = candidates[weakest]
        # the subtree below node leaves the tree; node becomes a leaf
        in_tree[node + 1:_subtree_end(right, node)] = False
        is_leaf[node] = True
        removed_leaves, removed_risk = n_leaves[node] - 1, branch_risk[node] - risk[node]
        ancestor = node
        while ancestor >= 0:
            n_leaves[ancestor] -= removed_leaves
            branch_risk[ancestor] -= removed_risk
            ancestor = parent[ancestor]
        alphas.append(alpha)
        risks.append(branch_risk[0])
    return in_tree, is_leaf, np.array(alphas), np.array(risks)


def _subtree_end(right, node):
    """One past the last node of ``node``'s subtree in preorder: past its
    rightmost descendant, which is a leaf."""
    while right[node] >= 0:
        node = right[node]
    return node + 1


def cost_complexity_path(tree_, criterion):
    """(ccp_alphas, impurities): the effective alphas of weakest-link pruning from
    the full tree down to its root, and the total leaf risk sum R(t) after each
    step, as scikit-learn's ``cost_complexity_pruning_path``."""
    _, _, alphas, risks = _weakest_links(tree_, criterion, np.inf)
    return alphas, risks


def pruned(tree_, ccp_alpha, criterion):
    """The smallest minimizing subtree of R_alpha at alpha = ccp_alpha (a new Tree;
    ``tree_`` itself when nothing is pruned)."""
    in_tree, is_leaf, alphas, _ = _weakest_links(tree_, criterion, ccp_alpha)
    if len(alphas) == 1:
        return tree_
    return cut(tree_, in_tree, is_leaf, criterion)


def cut(tree_, in_tree, is_leaf, criterion):
    """The subtree of the nodes ``in_tree`` (a mask closed under parents), the
    nodes ``is_leaf`` among them made leaves: a new Tree in preorder."""
    arrays = tree_.node_arrays()
    left_levels = arrays.pop("left_levels", None)  # one row per categorical split, not node
    new_index = np.cumsum(in_tree) - 1
    kept = {name: np.array(values[in_tree]) for name, values in arrays.items()}
    leaf = is_leaf[in_tree]
    if left_levels is not None:  # the level sets of the categorical splits that stay splits
        categorical = arrays["categorical_split"] == 1
        stays = categorical[in_tree] & ~leaf
        kept["categorical_split"] = stays.astype(np.uint8)
        kept["left_levels"] = np.ascontiguousarray(
            left_levels[(np.cumsum(categorical) - 1)[in_tree][stays]])
    right = kept["children_right"]
    kept["children_right"] = np.where(leaf, -1, new_index[np.maximum(right, 0)])
    kept["children_left"] = np.where(leaf, -1, np.arange(1, leaf.size + 1))
    kept["feature"] = np.where(leaf, -2, kept["feature"])
    kept["threshold"] = np.where(leaf, -2.0, kept["threshold"])
    kept["missing_go_to_left"] = np.where(leaf, 0, kept["missing_go_to_left"])
    kept["improvement"] = np.where(leaf, 0.0, kept["improvement"])
    if criterion in ("auc", "auc_ecp"):  # impurity holds theta of the split: 1/2 at leaves
        kept["impurity"] = np.where(leaf, 0.5, kept["impurity"])
    depth = int(tree_.node_depths()[in_tree].max())
    return Tree(tree_.n_features, tree_.max_n_classes, max_depth=depth, **kept)
