"""The tops of the trees, grown level by level on the client: their nodes,
the histograms each round asks for, the splits found in the summed
histograms, and the tables routing the rows of split nodes to their
children (`TopGrower`)."""
from dataclasses import dataclass, field

import numpy as np

from .._categories import levels_going_left
from .._leaf_budget import split_priority
from ._draws import hash_key
from ._histogram_splitter import feature_order


class Node:
    """A node of a tree being grown (on the client)."""
    __slots__ = ("id", "tree", "key", "depth", "counts", "n_cases", "constant", "order",
                 "hists", "kind", "split", "children", "subtree", "weight", "dcounts",
                 "above", "leaves", "min_decrease")
    # above: m of the parent (`aucforest._leaf_budget`), inf at a root; leaves: the leaf
    # bound its subtree is grown to (max_leaf_nodes); min_decrease: the weighted impurity
    # decrease (p(t) i(t) - ... times the tree's weight) below which it makes no split


@dataclass(eq=False)
class Batch:
    """Trees grown together: what the client keeps of them from their first
    round until they are complete, while the next batch grows."""
    indices: range  # the trees' places in the forest
    budgets: dict = None  # max_leaf_nodes: tree -> `LeafBudget` of its expansions
    nodes: list = field(default_factory=list)  # every node made, by id
    roots: list = field(default_factory=list)
    tree_weight: dict = field(default_factory=dict)  # tree -> its root's weight
    groups: list = field(default_factory=list)  # tree -> [(finishing, OOB sums) futures]
    oob_at: dict = field(default_factory=dict)  # node id -> the node-size choice's OOB rows
    states: list = None  # max_leaf_nodes: the node state after the last round, until cut
    taken: set = field(default_factory=set)  # ids of the nodes whose rows were taken out


class TopGrower:
    """The client's side of the level-wise growth: nodes made, histograms
    asked for, splits searched.

    Parameters
    ----------
    forest : AUCForestClassifier
        Its tree parameters.
    prepared : Prepared
        Features, classes, bin codes and the weights' scale.
    splitter : HistogramSplitter
        The split search on summed histograms.
    max_features, min_samples_leaf : int
        The features a search examines and the least rows of a leaf.
    local_rows : int
        A node of at most this many rows is finished in memory.
    tuning : Tuning
        ``WHOLE_TREE_ROWS`` and ``MAX_ROUND_BYTES``.
    stats : FitStats
        The counters of nodes and bytes sent.
    """

    def __init__(self, forest, prepared, splitter, max_features, min_samples_leaf, local_rows,
                 tuning, stats):
        self.forest, self.splitter, self.stats = forest, splitter, stats
        self.p, self.K, self.n_codes = prepared.p, prepared.n_classes, prepared.n_codes
        self.weight_scale = prepared.ctx.weight_scale
        self.max_features, self.min_samples_leaf = max_features, min_samples_leaf
        self.local_rows = local_rows
        self.bounded = forest.max_leaf_nodes is not None
        self.whole_tree_rows = tuning.WHOLE_TREE_ROWS
        self.max_round_bytes = tuning.MAX_ROUND_BYTES

    def new_node(self, batch, tree, key, depth, counts, n_cases, constant, above=np.inf):
        """A node of the batch's tree ``tree``: a leaf, open (grown by rounds)
        or local (finished in memory)."""
        node = Node()
        node.id = len(batch.nodes)
        batch.nodes.append(node)
        node.tree, node.key, node.depth, node.above = tree, int(key), depth, above
        node.counts = np.asarray(counts, dtype=np.int64)
        node.dcounts, node.weight = self.weighted(node.counts)
        node.n_cases, node.constant = n_cases, constant
        node.order, node.hists, node.split, node.children, node.subtree = None, {}, None, (), None
        node.leaves, node.min_decrease = None, 0.0
        forest = self.forest
        n_present = np.count_nonzero(node.dcounts > 0)
        min_weight_leaf = self.min_weight_leaf(batch, node) if depth > 0 else 0.0
        if (n_present < 2 or (forest.max_depth is not None and depth >= forest.max_depth)
                or n_cases < 2 * self.min_samples_leaf or node.weight < 2.0 * min_weight_leaf):
            node.kind = "leaf"
        elif n_cases <= self.local_rows or (depth == 0 and self.bounded
                                            and n_cases <= self.whole_tree_rows):
            node.kind = "local"
            self.stats.whole_trees += depth == 0
            self.stats.finished_nodes += 1
            self.stats.finished_rows += n_cases
        else:
            node.kind = "open"
            node.order = feature_order(node.key, self.p)
            self.stats.open_nodes += 1
        return node

    def weighted(self, counts):
        """Class weights of integer counts, and their sum in class order (as
        criterion_init sums)."""
        dcounts = np.asarray(counts, dtype=np.int64) * self.weight_scale
        weight = 0.0
        for c in dcounts:
            weight += c
        return dcounts, weight

    def bottleneck(self, batch, node, left, right):
        """m of a node split into children of class counts left and right: the
        smallest weighted impurity decrease of the splits on its path, this one
        included (`aucforest._leaf_budget`), computed from the class proportions
        and weights the tree will hold; inf without max_leaf_nodes."""
        if batch.budgets is None:
            return np.inf
        rows = [self.weighted(c) for c in (node.counts, left, right)]
        proba = np.array([dcounts / weight for dcounts, weight in rows])
        weight = np.array([weight for _, weight in rows])
        decrease = split_priority(proba, weight, batch.tree_weight[node.tree],
                                  self.forest.criterion)
        return min(node.above, decrease)

    @staticmethod
    def may_expand(batch, node):
        """Whether a node not yet split can be among its tree's max_leaf_nodes - 1
        expansions, given the nodes split so far (a root always can)."""
        return node.depth == 0 or batch.budgets[node.tree].may_expand_below(node.above)

    def drop(self, node):
        """Make an open or local node a leaf (max_leaf_nodes rules it out)."""
        if node.kind == "open":
            self.stats.open_nodes -= 1
        elif node.kind == "local":
            self.stats.finished_nodes -= 1
            self.stats.finished_rows -= node.n_cases
        node.kind, node.hists, node.order = "leaf", {}, None

    def min_weight_leaf(self, batch, node):
        """The least weight of a leaf below ``node`` (`min_weight_leaf`)."""
        return min_weight_leaf(self.forest.min_weight_fraction_leaf, batch, node)

    def wanted(self, node):
        """Features whose histograms the node's search needs next."""
        result = node.split  # the last search's outcome (None: not searched yet)
        start = 0 if result is None else result["need"]
        n = self.max_features - (0 if result is None else result["n_examined"])
        wanted = []
        for f in node.order[start:]:
            if len(wanted) >= n:
                break
            if not node.constant[f] and f not in node.hists:
                wanted.append(int(f))
        return wanted

    def request(self, batch, pending):
        """The histogram slots of this round: the next features of the pending
        nodes, in order, up to MAX_ROUND_BYTES (the rest wait a round).
        Returns ((first_slot, slot_feature), {node: [(feature, slot)]})."""
        if not pending:
            return None, {}
        budget = max(1, self.max_round_bytes // (self.n_codes * (self.K + 1) * 8))
        chosen, total = [], 0
        for node in pending:
            wanted = self.wanted(node)
            if chosen and total + len(wanted) > budget:
                break
            chosen.append((node, wanted))
            total += len(wanted)
        lengths = np.zeros(len(batch.nodes), dtype=np.int64)
        for node, wanted in chosen:
            lengths[node.id] = len(wanted)
        first_slot = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        slot_feature = np.zeros(total, dtype=np.int32)
        asked = {}
        for node, wanted in chosen:
            s0 = int(first_slot[node.id])
            slot_feature[s0:s0 + len(wanted)] = wanted
            asked[node] = [(f, s0 + j) for j, f in enumerate(wanted)]
        self.stats.sent_bytes += first_slot.nbytes + slot_feature.nbytes
        return (first_slot, slot_feature), asked

    def receive(self, hist, asked):
        """Hand each asked node its summed histograms ``hist`` (slots, codes,
        classes [+ cases])."""
        K = self.K
        self.stats.histogram_slots += hist.shape[0]
        for node, slots in asked.items():
            for f, s in slots:
                # without a case column every weight is 1: the cases are their sum
                node.hists[f] = (hist[s, :, :K], hist[s, :, K] if hist.shape[2] > K
                                 else hist[s].sum(axis=1))

    def split(self, batch, node):
        """Search the node's split with the histograms at hand: "need" (more
        features), "split" (children made) or "leaf"."""
        available = sorted(node.hists)
        slot = np.full(self.p, -1, dtype=np.int64)
        slot[available] = np.arange(len(available))
        hist = np.zeros((len(available), self.n_codes, self.K))
        cases = np.zeros((len(available), self.n_codes), dtype=np.int64)
        for s, f in enumerate(available):
            hist[s] = node.hists[f][0] * self.weight_scale
            cases[s] = node.hists[f][1]
        result = self.splitter.find_split(hist, cases, slot, node.dcounts, node.n_cases,
                                          self.min_weight_leaf(batch, node), node.order,
                                          node.constant, np.uint64(node.key))
        for f in result["constant"]:
            node.constant[f] = 1
        node.split = result
        if result["need"] >= 0:
            if not self.wanted(node):  # cannot happen: the search stops at a missing one
                raise RuntimeError("histogram search made no progress")
            return "need"
        if result["feature"] < 0:
            node.kind, node.hists = "leaf", {}
            return "leaf"
        f, b = result["feature"], result["bin"]
        h, c = node.hists[f]
        node.hists = {}
        if result["categorical"]:  # the levels of the set, as the splitter summed them
            goes_left = levels_going_left(result["left_levels"])[:self.n_codes - 1]
            left = h[:-1][goes_left].sum(axis=0)
            left_cases = int(c[:-1][goes_left].sum())
        else:
            left = h[:b + 1].sum(axis=0)
            left_cases = int(c[:b + 1].sum())
        if result["missing_left"]:
            left = left + h[-1]
            left_cases += int(c[-1])
        right = node.counts - left
        m = self.bottleneck(batch, node, left, right)
        if batch.budgets is not None and not batch.budgets[node.tree].may_expand(m):
            node.kind = "leaf"  # cannot be among its tree's max_leaf_nodes - 1 expansions
            return "leaf"
        constant = node.constant.copy()
        node.kind = "split"
        node.children = (
            self.new_node(batch, node.tree, hash_key(node.key, 1), node.depth + 1, left,
                          left_cases, constant, m),
            self.new_node(batch, node.tree, hash_key(node.key, 2), node.depth + 1, right,
                          node.n_cases - left_cases, constant.copy(), m))
        return "split"

    def routes(self, batch, split_nodes):
        """Tables (indexed by node id) moving the rows of the split nodes to their
        children: a leaf child drops them (-1); a categorical split's row of
        left levels (`route`'s level_set and left_levels)."""
        size = len(batch.nodes)
        feature = np.full(size, -1, dtype=np.int32)
        threshold_bin = np.zeros(size, dtype=np.int32)
        missing_left = np.zeros(size, dtype=np.uint8)
        left = np.full(size, -1, dtype=np.int32)
        right = np.full(size, -1, dtype=np.int32)
        level_set = np.full(size, -1, dtype=np.int32)
        level_sets = []
        for node in split_nodes:
            if node.kind == "leaf":  # no valid split: its rows leave the batch's work
                feature[node.id] = -2
                continue
            r = node.split
            feature[node.id] = r["feature"]
            threshold_bin[node.id] = r["bin"]
            missing_left[node.id] = r["missing_left"]
            if r["categorical"]:
                level_set[node.id] = len(level_sets)
                level_sets.append(r["left_levels"])
            lc, rc = node.children
            left[node.id] = lc.id if lc.kind != "leaf" else -1
            right[node.id] = rc.id if rc.kind != "leaf" else -1
        if not level_sets:
            self.stats.sent_bytes += 17 * size
            return feature, threshold_bin, missing_left, left, right
        left_levels = np.array(level_sets, dtype=np.uint64).reshape(-1, 4)
        self.stats.sent_bytes += 21 * size + left_levels.nbytes
        return feature, threshold_bin, missing_left, left, right, level_set, left_levels


def min_weight_leaf(fraction, batch, node):
    """The least weight of a leaf below ``node`` of ``batch``: ``fraction``
    (min_weight_fraction_leaf) of its tree's weight."""
    return fraction * batch.tree_weight[node.tree] if fraction else 0.0


def release_top(root):
    """Drop what a grown tree's top (on the client) no longer needs: the
    search state of its nodes (feature orders, histograms, constant flags)."""
    stack = [root]
    while stack:
        node = stack.pop()
        node.order, node.hists, node.constant = None, {}, None
        stack.extend(node.children)
