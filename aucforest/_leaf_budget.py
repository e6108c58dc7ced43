"""``max_leaf_nodes`` for trees grown level by level (the fit on dask collections).

The in-memory builder (`aucforest._tree.build_tree_best_first`, scikit-learn's
BestFirstTreeBuilder) expands, of the nodes not yet expanded, the one whose
split decreases the weighted impurity most,

    d(t) = p(t) i(t) - p(t_L) i(t_L) - p(t_R) i(t_R)

(Breiman, Friedman, Olshen & Stone 1984, section 2.4.1; p(t) the node's share
of the root's weight, i the Gini impurity, or the entropy under "entropy" and
"log_loss"; Gini under the AUC criteria), ties to the node made first, until
the tree has max_leaf_nodes leaves. Each node's split depends on the node
only, so the tree it grows is the first L - 1 expansions of this rule on the
fully grown tree: `expansions` selects them from a grown tree's children and d.

A tree grown level by level need not be grown fully for that. Let m(t) be the
smallest d on the path from the root to t (t included). The rule expands nodes
in non-increasing m: when it expands t, every node u not yet expanded lies
below a waiting node w, so m(u) <= d(w) <= d(t), and m(u) <= m(parent of t)
by the same argument when the parent was expanded. So a node t is among the
L - 1 expansions only if fewer than L - 1 nodes u have m(u) > m(t), and its
children only if fewer than L - 2 do, t itself coming before them.
`LeafBudget` counts the nodes of known m of a tree as it grows and says which
nodes can still be expanded; the others become leaves at once (their rows
leave the rounds), so a bounded tree costs the rounds of its depth and the
histograms of the nodes that can still be kept. The nodes kept are a superset
of the L - 1 expansions, which `expansions` picks from the grown tree.

Nor need a subtree be grown fully: grown best first to a few leaves, every
node it did not expand has m at most that of its last expansion. If that m is
below the tree's (L - 1)-th largest m among the nodes known, none of them can
be expanded, and `expansions` on the tree's skeleton (children and d of the
nodes known) expands what it would expand on the fully grown tree: a node
never popped does not change the order of the others, and the tie rule counts
the nodes made, known or not.
"""
import bisect
import heapq

import numpy as np

from ._pruning import cut


def risks(proba, weight, root_weight, criterion):
    """p(t) i(t) of nodes (rows of ``proba``, their weights ``weight``).

    Elementwise operations only, classes added in class order, so that a node's
    value does not depend on the other rows: the client's value of a node
    while it grows equals the value computed on the whole tree (`_Fit._skeleton`).
    """
    proba = np.asarray(proba, dtype=np.float64)
    entropy = criterion in ("entropy", "log_loss")
    total = np.zeros(proba.shape[0])
    for k in range(proba.shape[1]):
        p = proba[:, k]
        if entropy:
            with np.errstate(divide="ignore", invalid="ignore"):
                total -= np.where(p > 0, p * np.log2(p), 0.0)
        else:
            total += p * p
    impurity = total if entropy else 1.0 - total
    return np.asarray(weight, dtype=np.float64) / root_weight * impurity


def split_priority(proba, weight, root_weight, criterion):
    """d(t) of a split from the rows (node, left child, right child)."""
    r = risks(proba, weight, root_weight, criterion)
    return float(r[0] - r[1] - r[2])


class LeafBudget:
    """The nodes of one tree that can still be among its ``max_leaf_nodes - 1``
    expansions (module docstring): m of every node whose split is known."""

    def __init__(self, max_leaf_nodes):
        self.expansions = max_leaf_nodes - 1
        self.bottlenecks = []  # sorted m(t) of the nodes with a split

    def _greater(self, m):
        return len(self.bottlenecks) - bisect.bisect_right(self.bottlenecks, m)

    def may_expand(self, m):
        """Whether a node of this m can be expanded; if so, it is counted."""
        if self._greater(m) >= self.expansions:
            return False
        bisect.insort(self.bottlenecks, m)
        return True

    def may_expand_below(self, m_parent):
        """Whether a child of an expanded node of this m can be expanded."""
        return self._greater(m_parent) + 1 < self.expansions


def split_priorities(risk, children_left, children_right):
    """d(t) = r(t) - r(t_L) - r(t_R) of every split node (0 at leaves), from
    the nodes' risks r (`risks`) and the children arrays (-1 at leaves)."""
    priority = np.zeros(risk.shape[0])
    split = np.flatnonzero(children_right >= 0)
    priority[split] = risk[split] - risk[children_left[split]] - risk[children_right[split]]
    return priority


def expansions(children_left, children_right, priority, max_leaf_nodes):
    """The nodes the best-first rule expands, largest d first (ties to the node
    made first), until ``max_leaf_nodes`` leaves: a boolean mask. A node is
    made when its parent is expanded, left child first; nodes not split
    (children -1) are never expanded."""
    internal = children_right >= 0
    expanded = np.zeros(internal.shape[0], dtype=bool)
    heap = [(-priority[0], 0, 0)] if internal.shape[0] and internal[0] else []
    made, leaves = 1, 1  # nodes made (the tie rule's order), leaves
    while heap and leaves < max_leaf_nodes:
        _, _, node = heapq.heappop(heap)
        expanded[node] = True
        leaves += 1
        for child in (children_left[node], children_right[node]):
            if internal[child]:
                heapq.heappush(heap, (-priority[child], made, child))
            made += 1
    return expanded


def bottlenecks(priority, children_left, children_right):
    """m(t), the smallest d on the path from the root to t (t included), of
    every split node of a tree in preorder (parents before children); inf at
    leaves."""
    m = np.full(priority.shape[0], np.inf)
    cap = np.full(priority.shape[0], np.inf)
    for node in np.flatnonzero(children_right >= 0):
        m[node] = min(cap[node], priority[node])
        cap[children_left[node]] = cap[children_right[node]] = m[node]
    return m


def kept_nodes(children_left, children_right, expanded):
    """The nodes a tree keeps once cut to its ``expanded`` nodes: the root and
    the children of each expanded node (a boolean mask)."""
    in_tree = np.zeros(expanded.shape[0], dtype=bool)
    in_tree[0] = True
    in_tree[children_left[expanded]] = True
    in_tree[children_right[expanded]] = True
    return in_tree


def cut_to_expansions(tree_, expanded, criterion):
    """``tree_`` cut to its ``expanded`` nodes (`expansions`): the others it
    keeps become leaves (`aucforest._pruning.cut`)."""
    in_tree = kept_nodes(tree_.children_left, tree_.children_right, expanded)
    return cut(tree_, in_tree, ~expanded, criterion)
