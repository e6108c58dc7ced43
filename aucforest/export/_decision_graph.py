"""The ONNX graph of a calibrated or set-valued model (`DecisionGraph`), built on
the forest's graph (`aucforest.export._graph.ForestGraph`) and its
``probabilities``; `to_onnx` wraps it in a model and the skl2onnx converters
add it to skl2onnx's container.

Every step computes what Python computes, operation for operation, so that the
outputs are Python's to the last bit wherever the forest's probabilities are
(a model whose outputs compare them with calibration scores asks the forest's
graph for ``exact_sums``: ``predict_proba`` to the bit on any number of
onnxruntime threads):

1. The prior correction ``p_k = (q_k / w'_k) / sum_j (q_j / w'_j)`` (Saerens,
   Latinne & Decaestecker 2002, eq. 2.4; `aucforest._prior_shift`), the row
   sum added in numpy's pairwise order (`DecisionGraph.row_sum`).
2. The maps, each a function of one class's corrected probability s:

   * a step function (Venn-Abers: p1 / (1 - p0 + p1) of the place of s, Vovk
     & Petej 2014) or a piecewise-linear one (isotonic regression, Zadrozny &
     Elkan 2002, interpolated as ``np.interp``: ``slope_j (s - x_j) + y_j``
     between points, ``y_j`` on one) is a lookup: one ``TreeEnsemble`` node
     (ai.onnx.ml opset 5, double thresholds) holds a balanced search tree per
     map over its distinct scores, ``BRANCH_LT`` and ``BRANCH_LEQ`` nodes
     counting ``#{x_i <= s} + #{x_i < s}``, the place of s (gap below,
     between or above the scores, or a tie with one), as `StepLookup`
     describes; the leaves hold the value of each place, or the place whose
     slope and point are gathered from constant tables;
   * Platt's sigmoid ``1 / (1 + exp(a s + b))`` (Platt 1999).

   Then clipping to [0, 1]; two classes: the first gets 1 minus the second;
   more: the values divided by their row sum, a row of zeros getting 1/K.
3. The forest's decision rule on the calibrated probabilities with the
   calibrated model's priors (`ForestGraph.rule_index`).
4. Conformal p-values (Vovk, Gammerman & Shafer 2005, ch. 4, Mondrian by
   class): ``(n_k - #{a_i < a} + 1) / (n_k + 1)``, ``a = 1 - p_k`` from the
   forest's own probabilities, the count again a lookup over each class's
   calibration scores; the set is ``p > alpha``.
"""
from typing import NamedTuple

import numpy as np

from ._graph import BRANCH_LEQ, BRANCH_LT, ML_DOMAIN, ForestGraph

PAIRWISE_BLOCK = 128   # numpy's pairwise summation: blocks of at most 128, 8 accumulators
UNROLL = 8


class StepLookup(NamedTuple):
    """A step function of column ``column`` of a tensor, as one search tree.

    The conditions are ordered so that those holding for a value s are always
    the first c of them (``thresholds`` non-decreasing; at equal thresholds
    ``t <= s`` before ``t < s``); s gets ``values[c]``.

    Attributes
    ----------
    column : int
        The input column the tree reads.
    thresholds : ndarray of float64 (n_conditions,)
    strict : ndarray of bool (n_conditions,)
        True: the condition is ``t < s``; False: ``t <= s``.
    values : ndarray of float64 (n_conditions + 1,)
    """

    column: int
    thresholds: np.ndarray
    strict: np.ndarray
    values: np.ndarray

    @classmethod
    def places(cls, column, scores, values):
        """The lookup of the place of s among the increasing ``scores`` (n):
        ``#{x <= s} + #{x < s}``, 0..2n: gap g (between ``scores[g - 1]`` and
        ``scores[g]``) is place 2g, a tie with ``scores[t]`` place 2t + 1."""
        scores = np.asarray(scores, dtype=np.float64)
        return cls(column, np.repeat(scores, 2), np.tile([False, True], scores.shape[0]),
                   np.asarray(values, dtype=np.float64))

    @classmethod
    def count_below(cls, column, scores, values):
        """The lookup of ``values[#{a_i < s}]`` for sorted ``scores`` a_i
        (repeats allowed): one condition per distinct score."""
        scores = np.asarray(scores, dtype=np.float64)
        distinct, first = np.unique(scores, return_index=True)
        values = np.asarray(values, dtype=np.float64)
        # c distinct scores below s: the first of the next value starts at first[c]
        return cls(column, distinct, np.ones(distinct.shape[0], dtype=bool),
                   values[np.append(first, scores.shape[0])])


def lookup_attributes(lookups):
    """The attributes of an ai.onnx.ml opset-5 ``TreeEnsemble`` whose target m
    is ``lookups[m]``'s value (one balanced search tree per lookup, depth
    ``ceil(log2(n_conditions + 1))``).

    Parameters
    ----------
    lookups : list of StepLookup

    Returns
    -------
    dict
        Keyword attributes for ``onnx.helper.make_node``.
    """
    from onnx import numpy_helper

    trees = [search_tree(lookup) for lookup in lookups]
    node_starts = np.cumsum([0] + [tree["modes"].shape[0] for tree in trees])
    leaf_starts = np.cumsum([0] + [lookup.values.shape[0] for lookup in lookups])
    for tree, node_start, leaf_start in zip(trees, node_starts, leaf_starts):
        for side in ("true", "false"):  # ids within the tree -> within the ensemble
            tree[side] = tree[side] + np.where(tree[f"{side}_leaf"], leaf_start, node_start)
    joined = {name: np.concatenate([tree[name] for tree in trees]) for name in trees[0]}
    return dict(
        nodes_featureids=joined["features"].tolist(), nodes_truenodeids=joined["true"].tolist(),
        nodes_trueleafs=joined["true_leaf"].tolist(),
        nodes_falsenodeids=joined["false"].tolist(),
        nodes_falseleafs=joined["false_leaf"].tolist(),
        leaf_targetids=np.concatenate([np.full(lookup.values.shape[0], target)
                                       for target, lookup in enumerate(lookups)]).tolist(),
        tree_roots=node_starts[:-1].tolist(), n_targets=len(lookups),
        aggregate_function=1, post_transform=0,
        nodes_modes=numpy_helper.from_array(joined["modes"].astype(np.uint8)),
        nodes_splits=numpy_helper.from_array(joined["splits"].astype(np.float64)),
        leaf_weights=numpy_helper.from_array(np.concatenate(
            [lookup.values for lookup in lookups]).astype(np.float64)))


def search_tree(lookup):
    """The balanced search tree of a `StepLookup` as TreeEnsemble node arrays
    (ids within the tree, ``*_leaf`` saying whether an id is a leaf's).

    The node over leaves lo..hi tests condition m = (lo + hi) // 2; when it
    fails (``s <= t`` for ``t < s``: BRANCH_LEQ; ``s < t`` for ``t <= s``:
    BRANCH_LT) s goes to leaves lo..m, else to m + 1..hi. Built a level at a
    time: each condition is one node. No condition: one split whose two
    branches are the single leaf.
    """
    n_conditions = lookup.thresholds.shape[0]
    size = max(n_conditions, 1)
    tree = {"modes": np.full(size, BRANCH_LEQ), "features": np.full(size, lookup.column),
            "splits": np.zeros(size), "true": np.zeros(size, np.int64),
            "true_leaf": np.ones(size, np.int64), "false": np.zeros(size, np.int64),
            "false_leaf": np.ones(size, np.int64)}
    ids, lo, hi = np.zeros(1, np.int64), np.zeros(1, np.int64), np.full(1, n_conditions)
    next_id = 1
    while n_conditions and ids.size:
        middle = (lo + hi) // 2
        tree["modes"][ids] = np.where(lookup.strict[middle], BRANCH_LEQ, BRANCH_LT)
        tree["splits"][ids] = lookup.thresholds[middle]
        pending = []
        for side, first, last in (("true", lo, middle), ("false", middle + 1, hi)):
            leaf = first == last
            children = np.where(leaf, first, 0)
            children[~leaf] = next_id + np.arange(np.count_nonzero(~leaf))
            next_id += np.count_nonzero(~leaf)
            tree[side][ids], tree[f"{side}_leaf"][ids] = children, leaf
            pending.append((children[~leaf], first[~leaf], last[~leaf]))
        ids, lo, hi = (np.concatenate(parts) for parts in zip(*pending))
    return tree


class DecisionGraph:
    """The nodes of the graph of an `ExportableDecisions`, built by `build`.

    Parameters
    ----------
    decisions : ExportableDecisions
        The model as the export reads it.
    opset : int
        The main domain's opset.
    unique : callable, default=None
        ``unique(prefix)`` gives a name not used elsewhere in the graph
        (skl2onnx's scope); None: ``prefix`` with a counter.

    Attributes
    ----------
    nodes : list of onnx.NodeProto
        After `build`: the nodes in execution order, those no output needs
        left out.
    labels : ndarray
        The class labels as the ``label`` output gives them.
    n_classes : int
    """

    def __init__(self, decisions, opset, unique=None):
        self.decisions = decisions
        self._unique = unique or _counter()
        # steps and p-values compare the probabilities with calibration scores
        # exactly: then the forest's probabilities are summed as predict_proba sums them
        self.graph = ForestGraph(decisions.forest, opset, unique=self._unique,
                                 exact_sums=decisions.needs_exact_probabilities)
        self.labels = self.graph.labels
        self.n_classes = self.graph.n_classes
        self.nodes = []

    def build(self, x, outputs):
        """Add the nodes from input ``x`` [N, n_features] to ``outputs``, a
        dict from each name of ``decisions.outputs`` to its tensor's name."""
        calibration, conformal = self.decisions.calibration, self.decisions.conformal
        graph = self.graph
        if calibration is None:
            forest_label, forest_proba = outputs["label"], outputs["probabilities"]
        else:
            forest_label, forest_proba = self._unique("forest_label"), self._unique("forest_proba")
        graph.build(x, forest_label, forest_proba)
        if calibration is not None:
            corrected = self._training_priors(forest_proba, calibration.draw_class_weights)
            self._calibrated(corrected, calibration, outputs["probabilities"])
            index = graph.rule_index(outputs["probabilities"], calibration.rule,
                                     calibration.class_prior)
            graph.op("Gather", [graph.constant("classes", self.labels), index],
                     output=outputs["label"], axis=0)
        if conformal is not None:
            self._conformal(forest_proba, conformal, outputs["p_values"], outputs["set"])
        self.nodes = needed_nodes(graph.nodes, [outputs[name] for name in
                                                self.decisions.outputs])

    # ------------------------------------------------------------ calibration
    def _training_priors(self, proba, draw_weights):
        """``to_training_priors(proba, draw_weights)``, operation for operation."""
        graph = self.graph
        weighed = draw_weights > 0
        scaled = proba
        if not np.all(draw_weights == 1.0):  # q / 1 * 1 is q
            scaled = graph.op("Mul", [
                graph.op("Div", [proba, graph.constant("draw_weights",
                                                       np.where(weighed, draw_weights, 1.0))]),
                graph.constant("weighed", weighed.astype(np.float64))])
        total = self.row_sum(scaled, self.n_classes)
        empty = graph.op("Equal", [total, graph.constant("zero", np.float64(0.0))])
        divisor = graph.op("Where", [empty, graph.constant("one", np.float64(1.0)), total])
        return graph.op("Where", [empty, proba, graph.op("Div", [scaled, divisor])])

    def _calibrated(self, corrected, calibration, output):
        """The calibrated probabilities, as ``OOBCalibratedClassifier.predict_proba``."""
        graph = self.graph
        mapped = self._mapped(corrected, calibration)
        clipped = graph.op("Clip", [mapped, graph.constant("zero", np.float64(0.0)),
                                    graph.constant("one", np.float64(1.0))])
        if self.n_classes == 2:  # [1 - p, p]
            graph.op("Concat", [graph.op("Sub", [graph.constant("one", np.float64(1.0)),
                                                 clipped]), clipped],
                     output=output, axis=1)
            return
        total = self.row_sum(clipped, self.n_classes)
        empty = graph.op("Equal", [total, graph.constant("zero", np.float64(0.0))])
        divisor = graph.op("Where", [empty, graph.constant("one", np.float64(1.0)), total])
        graph.op("Where", [empty, graph.constant("uniform", np.float64(1.0 / self.n_classes)),
                           graph.op("Div", [clipped, divisor])], output=output)

    def _mapped(self, corrected, calibration):
        """[N, n_maps]: each map on its class's corrected probability."""
        from .._calibration_maps import IsotonicMap, SigmoidMap

        graph = self.graph
        maps, columns = calibration.maps, calibration.columns
        if isinstance(maps[0], SigmoidMap):  # 1 / (1 + exp(a s + b))
            scores = graph.op("Gather", [corrected, graph.constant(
                "map_columns", np.array(columns, dtype=np.int64))], axis=1)
            slopes = np.array([m.a_ for m in maps], dtype=np.float64)
            intercepts = np.array([m.b_ for m in maps], dtype=np.float64)
            linear = graph.op("Add", [graph.op("Mul", [graph.constant("sigmoid_a", slopes),
                                                       scores]),
                                      graph.constant("sigmoid_b", intercepts)])
            one = graph.constant("one", np.float64(1.0))
            return graph.op("Div", [one, graph.op("Add", [one, graph.op("Exp", [linear])])])
        if isinstance(maps[0], IsotonicMap):
            tables = [isotonic_places(m) for m in maps]
            places = self.lookup(corrected, [StepLookup.places(column, table[0], np.arange(
                2 * table[0].shape[0] + 1)) for column, table in zip(columns, tables)])
            return self._interpolated(corrected, columns, places, [t[1:] for t in tables])
        # Venn-Abers: a step function of the place, its value the map's own prediction
        return self.lookup(corrected, [StepLookup.places(column, m.scores_, venn_abers_places(m))
                                       for column, m in zip(columns, maps)])

    def _interpolated(self, corrected, columns, places, tables):
        """``slope (s - x) + y`` with (slope, x, y) of each row's place (np.interp)."""
        from onnx import TensorProto

        graph = self.graph
        sizes = [table[0].shape[0] for table in tables]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        index = graph.op("Add", [graph.op("Cast", [places], to=TensorProto.INT64),
                                 graph.constant("place_offsets", offsets)])
        slope, x, y = (graph.op("Gather", [graph.constant(name, np.concatenate(
            [table[i] for table in tables])), index], axis=0)
            for i, name in enumerate(("slopes", "points_x", "points_y")))
        scores = graph.op("Gather", [corrected, graph.constant(
            "map_columns", np.array(columns, dtype=np.int64))], axis=1)
        return graph.op("Add", [graph.op("Mul", [slope, graph.op("Sub", [scores, x])]), y])

    # ------------------------------------------------------------ conformal sets
    def _conformal(self, proba, conformal, p_values, sets):
        """Unsmoothed Mondrian p-values of ``a = 1 - proba`` and the sets at alpha."""
        graph = self.graph
        nonconformity = graph.op("Sub", [graph.constant("one", np.float64(1.0)), proba])
        lookups = []
        for k, scores in enumerate(conformal.scores):
            n_k = scores.shape[0]
            # #{a_i < a} = c gives n_k - c + 1
            lookups.append(StepLookup.count_below(k, scores, n_k - np.arange(n_k + 1) + 1.0))
        numerators = self.lookup(nonconformity, lookups)
        sizes = np.array([s.shape[0] + 1 for s in conformal.scores], dtype=np.float64)
        graph.op("Div", [numerators, graph.constant("n_calibration_plus_one", sizes)],
                 output=p_values)
        graph.op("Greater", [p_values, graph.constant("alpha", np.float64(conformal.alpha))],
                 output=sets)

    # ------------------------------------------------------------ shared steps
    def lookup(self, source, lookups):
        """[N, len(lookups)]: each `StepLookup` on its column of ``source``."""
        return self.graph.op("TreeEnsemble", [source], domain=ML_DOMAIN,
                             **lookup_attributes(lookups))

    def row_sum(self, values, n_columns):
        """[N, 1]: each row of ``values`` summed as numpy's ``sum(axis=1)`` sums it."""
        graph = self.graph

        def columns(lo, hi):
            return graph.op("Gather", [values, graph.constant(
                "columns", np.arange(lo, hi, dtype=np.int64))], axis=1)

        def added(first, second):
            return graph.op("Add", [first, second])

        def pairwise(lo, n):
            if n < UNROLL:
                total = columns(lo, lo + 1)
                for j in range(lo + 1, lo + n):
                    total = added(total, columns(j, j + 1))
                return total
            if n <= PAIRWISE_BLOCK:
                accumulators = columns(lo, lo + UNROLL)
                end = lo + n - n % UNROLL
                for start in range(lo + UNROLL, end, UNROLL):
                    accumulators = added(accumulators, columns(start, start + UNROLL))
                r = [graph.op("Gather", [accumulators, graph.constant(
                    "columns", np.array([j], dtype=np.int64))], axis=1) for j in range(UNROLL)]
                total = added(added(added(r[0], r[1]), added(r[2], r[3])),
                              added(added(r[4], r[5]), added(r[6], r[7])))
                for j in range(end, lo + n):
                    total = added(total, columns(j, j + 1))
                return total
            half = n // 2
            half -= half % UNROLL
            return added(pairwise(lo, half), pairwise(lo + half, n - half))

        return pairwise(0, n_columns)


def isotonic_places(isotonic):
    """(x, slope, x_base, y_base) of an isotonic map: its points x (n) and, for
    each of the 2n + 1 places of a score among them, ``np.interp``'s value
    ``slope (s - x_base) + y_base``: between points j and j + 1 the slope
    ``(y_{j+1} - y_j) / (x_{j+1} - x_j)`` from point j; on a point (and beyond
    the ends, where the map is clipped) slope 0 from that point."""
    x = np.asarray(isotonic.X_thresholds_, dtype=np.float64)
    y = np.asarray(isotonic.y_thresholds_, dtype=np.float64)
    n = x.shape[0]
    slope, x_base, y_base = np.zeros(2 * n + 1), np.empty(2 * n + 1), np.empty(2 * n + 1)
    x_base[1::2], y_base[1::2] = x, y
    x_base[0], y_base[0], x_base[-1], y_base[-1] = x[0], y[0], x[-1], y[-1]
    if n > 1:
        slope[2:-1:2] = (y[1:] - y[:-1]) / (x[1:] - x[:-1])
        x_base[2:-1:2], y_base[2:-1:2] = x[:-1], y[:-1]
    return x, slope, x_base, y_base


def venn_abers_places(venn_abers):
    """The map's own prediction at each of the 2n + 1 places of a score among
    its distinct scores (n): on each score, and just above or below it
    (``np.nextafter``) for the gaps; a gap with no double inside it (two
    adjacent doubles) is never reached."""
    scores = np.asarray(venn_abers.scores_, dtype=np.float64)
    inside = np.empty(2 * scores.shape[0] + 1)
    inside[1::2] = scores
    inside[0] = np.nextafter(scores[0], -np.inf)
    inside[2::2] = np.nextafter(scores, np.inf)
    return np.asarray(venn_abers.predict(inside), dtype=np.float64)


def needed_nodes(nodes, outputs):
    """The nodes in ``nodes`` (in order) that the tensors ``outputs`` depend on."""
    needed = set(outputs)
    kept = []
    for node in reversed(nodes):
        if needed.intersection(node.output):
            kept.append(node)
            needed.update(node.input)
    return kept[::-1]


def _counter():
    """``unique(prefix)``: prefix, prefix_1, prefix_2, ..."""
    used = {}

    def unique(prefix):
        used[prefix] = used.get(prefix, -1) + 1
        return f"{prefix}_{used[prefix]}" if used[prefix] else prefix

    return unique
