"""The ONNX graph of an exportable forest (`ForestGraph`), which `to_onnx`
wraps in a model and the skl2onnx converter adds to skl2onnx's container.

From one double (or float, or integer) tensor ``X`` [N, n_features] to
``probabilities`` (double [N, K], the forest's ``predict_proba``) and
``label`` [N] (its ``predict``, under its decision rule):

1. ``X`` is cast to float32 and back: the forest compares float32 values with
   its (double) thresholds, so the graph sees the same values and sends every
   row to the same leaf. The negated columns ``-X`` follow when a numeric
   split sends NaN left (`_tree_layout`).
2. ``TreeEnsemble`` nodes (ai.onnx.ml opset 5), in which every split sends
   NaN to its false child (no node tracks missing values): a numeric split is
   ``BRANCH_LEQ`` on the double threshold, or on the negated column when NaN
   goes left; a categorical split is ``BRANCH_MEMBER`` on the set of levels
   that go away from the missing side (`FlatTree.away_levels`), so that NaN,
   unseen levels and codes outside 0..254 go where the forest sends them (the
   missing side). A leaf of this opset holds one value. Two classes: each
   tree appears once per class it predicts (its leaves' class proportions, a
   target per class, `tree_ensemble_attributes`), but for the first class,
   which is the number of trees minus the others' sums (`sum_plan`). Three
   classes or more: each tree is walked once, to the row of its leaf's
   proportions in a table of them (`leaf_row_attributes`), and the rows are
   gathered and added (`ForestGraph.leaf_row_sums`). The sums are divided by
   the number of trees: the mean of the trees' proportions, as
   ``predict_proba``.
3. The decision rule on those probabilities, with the forest's ties
   (`DecisionRule.apply`): RFQ (O'Brien & Ishwaran 2019), argmax, a
   threshold on the second class, or the least expected cost (Elkan 2001)
   after the prior-shift correction (Saerens, Latinne & Decaestecker 2002,
   eq. 2.4).
"""
from typing import NamedTuple

import numpy as np

from .._decision_rule import TIE_TOLERANCE

ML_DOMAIN = "ai.onnx.ml"
ML_OPSET = 5           # TreeEnsemble: double thresholds and leaves, BRANCH_MEMBER
MIN_OPSET = 13         # ReduceSum takes its axes as an input from 13 on

# TreeEnsemble's nodes_modes
BRANCH_LEQ, BRANCH_LT, BRANCH_MEMBER = 0, 1, 6

# Nodes (splits and leaves) of one TreeEnsemble: onnxruntime walks every tree
# over 128 rows at a time, and its double-precision node records (32 bytes) of
# this many nodes stay in a core's 1 MB level-2 cache (docs/evidence/speed.md)
MAX_ENSEMBLE_NODES = 16_384

# Trees x classes whose leaf proportions are gathered per row at a time (three
# classes or more): N x this many doubles (20 MB for N = 10,000 rows)
GATHERED_PER_ROW = 256


def label_values(forest):
    """The class labels as the graph's ``label`` gives them (ndarray): int64
    for integer and boolean labels, double for other numbers, str for text.

    ``forest`` is an `ExportableForest`; its labels are read through the
    label codec, so this raises the ValueError of ``aucforest.save`` for
    labels no model file or export holds."""
    labels = forest.labels
    if labels.dtype.kind in "bi":
        return labels.astype(np.int64)
    if labels.dtype.kind == "f":
        return labels
    return labels.astype(str)


class ForestGraph:
    """The nodes of the graph of an exportable forest, built by `build`.

    Parameters
    ----------
    forest : ExportableForest
        The fitted forest (or tree), as every export reads it.
    opset : int
        The main domain's opset.
    unique : callable, default=None
        ``unique(prefix)`` gives a name not used elsewhere in the graph
        (skl2onnx's scope); None: ``prefix`` with a counter.
    exact_sums : bool, default=False
        True: ``probabilities`` are ``predict_proba``'s to the last bit on any
        number of onnxruntime threads: each tree's proportions are added in
        the trees' order by one ``CumSum`` (slower, and N x n_trees x K
        doubles of memory, unless the leaf values are `exactly_summable`);
        False: within a few units in the last place (`sum_plan`).

    Attributes
    ----------
    nodes : list of onnx.NodeProto
        After `build`: the nodes in execution order (constants are
        ``Constant`` nodes, so a graph takes them as they are).
    labels : ndarray
        The class labels as the graph's ``label`` gives them (`label_values`).
    n_classes : int
    """

    def __init__(self, forest, opset, unique=None, exact_sums=False):
        self.forest = forest
        self.opset = opset
        self.exact_sums = exact_sums
        self.nodes = []
        self.labels = label_values(forest)
        self.n_classes = forest.n_classes
        self._unique = unique or self._counter
        self._used = {}

    def build(self, x, label, probabilities):
        """Add the nodes from input ``x`` (a float, double or integer tensor
        [N, n_features]) to outputs ``label`` and ``probabilities`` (names)."""
        from onnx import TensorProto

        trees = self.forest.trees
        rounded = self.op("Cast", [x], to=TensorProto.FLOAT)
        columns = self.op("Cast", [rounded], to=TensorProto.DOUBLE)
        if uses_negated_columns(trees):
            columns = self.op("Concat", [columns, self.op("Neg", [columns])], axis=1)
        plan = sum_plan(trees, self.n_classes, self.exact_sums)
        if plan.leaf_rows:
            total = self.leaf_row_sums(columns, trees, plan.per_tree)
        else:
            sums = [self.op("TreeEnsemble", [columns], domain=ML_DOMAIN, **attributes)
                    for attributes in tree_ensemble_attributes(trees, plan.classes,
                                                               self.forest.n_features,
                                                               plan.max_nodes, plan.per_tree)]
            total = sums[0] if len(sums) == 1 else self.op("Sum", sums)
            if plan.per_tree:  # [N, trees x K] -> [N, trees, K], added in the trees' order
                shape = self.constant("per_tree_shape",
                                      np.array([0, len(trees), self.n_classes]))
                total = self._sum_in_order(self.op("Reshape", [total, shape]))
        n_trees = self.constant("n_trees", np.float64(self.forest.n_trees))
        if plan.remainder:
            others = total if plan.classes.shape[0] == 1 else self._reduce("ReduceSum", total)
            total = self.op("Concat", [self.op("Sub", [n_trees, others]), total], axis=1)
        self.op("Div", [total, n_trees], output=probabilities)
        index = self.decision_index(probabilities)
        self.op("Gather", [self.constant("classes", self.labels), index], output=label, axis=0)

    def leaf_row_sums(self, columns, trees, in_order=False):
        """Name of the [N, K] sums over ``trees`` of their leaves' class
        proportions, each tree walked once: a ``TreeEnsemble`` per tree gives
        the row of its leaf in the table of distinct leaf proportions
        (`leaf_table`, `leaf_row_attributes`); the rows of `GATHERED_PER_ROW`
        // K trees at a time are gathered ([N, trees, K]) and added by a
        ``MatMul`` with K x K identities stacked (exact products, sums in any
        order). ``in_order``: all the trees gathered at once and added in
        their order (``CumSum``), ``predict_proba``'s sums to the last bit."""
        from onnx import TensorProto

        table, rows = leaf_table(trees, self.n_classes)
        table = self.constant("leaf_proportions", table)
        walks = [self.op("TreeEnsemble", [columns], domain=ML_DOMAIN, **attributes)
                 for attributes in leaf_row_attributes(trees, rows, self.forest.n_features)]
        chunk = len(walks) if in_order else max(1, GATHERED_PER_ROW // self.n_classes)
        sums = []
        for start in range(0, len(walks), chunk):
            part = walks[start:start + chunk]
            leaf_rows = part[0] if len(part) == 1 else self.op("Concat", part, axis=1)
            proportions = self.op("Gather", [table, self.op("Cast", [leaf_rows],
                                                             to=TensorProto.INT64)], axis=0)
            if in_order:
                return self._sum_in_order(proportions)
            flat = self.op("Reshape", [proportions, self.constant(
                "gathered_shape", np.array([0, len(part) * self.n_classes]))])
            sums.append(self.op("MatMul", [flat, self.constant(
                "stacked_identities", np.tile(np.eye(self.n_classes), (len(part), 1)))]))
        return sums[0] if len(sums) == 1 else self.op("Sum", sums)

    def _sum_in_order(self, per_tree):
        """[N, trees, K] -> [N, K]: running sums over the trees in their order
        (``CumSum``), the last one."""
        running = self.op("CumSum", [per_tree, self.constant("tree_axis", np.int64(1))])
        return self.op("Squeeze", [self.op("Slice", [
            running, self.constant("last_tree", np.array([-1])),
            self.constant("end", np.array([np.iinfo(np.int64).max])),
            self.constant("tree_axes", np.array([1]))]), self.constant("squeezed", np.array([1]))])

    # ------------------------------------------------------------ decisions
    def decision_index(self, proba):
        """Name of the int64 [N] class index the model's `DecisionRule` picks
        from ``proba``: the same scores, tolerance and order of preference as
        `DecisionRule.apply`, so the labels agree whatever order the trees
        were summed in."""
        return self.rule_index(proba, self.forest.rule, self.forest.class_prior,
                               self.forest.draw_class_weights)

    def rule_index(self, proba, rule, prior, draw_weights=None):
        """Name of the int64 [N] class index ``rule.apply(proba, prior,
        draw_weights)`` gives, for any probability tensor ``proba`` [N, K] (a
        calibrated model decides on its calibrated probabilities with its own
        priors and no draw weights)."""
        from onnx import TensorProto

        cut = rule.cut(prior)
        if cut is not None:  # a threshold, or RFQ with two classes
            chosen, at_least = cut
            passes = self.op("GreaterOrEqual", [self._column(proba, chosen),
                                                self.constant("at_least", np.float64(at_least))])
            return self.op("Where", [passes, self.constant("chosen", np.int64(chosen)),
                                     self.constant("other", np.int64(1 - chosen))])
        if rule.kind == "cost":
            if draw_weights is not None:
                proba = self._training_priors(proba, draw_weights)
            scores = self.op("Neg", [self.op("MatMul", [proba, self.constant("costs",
                                                                              rule.costs)])])
        elif rule.kind == "rfq":
            scores = self.op("Div", [proba, self.constant(
                "rfq_prior", np.where(prior > 0, prior, 1.0))])  # prior 0: not in the order
        else:
            scores = proba
        order = rule.preference(prior).astype(np.int64)
        ordered = self.op("Gather", [scores, self.constant("preference", order)], axis=1)
        best = self._reduce("ReduceMax", ordered)
        floor = self.op("Sub", [best, self.op("Mul", [
            self.constant("tie_tolerance", np.float64(TIE_TOLERANCE)),
            self.op("Abs", [best])])])
        tied = self.op("GreaterOrEqual", [ordered, floor])
        first = self.op("ArgMax", [self.op("Cast", [tied], to=TensorProto.DOUBLE)],
                        axis=1, keepdims=0)
        return self.op("Gather", [self.constant("preference", order), first], axis=0)

    def _training_priors(self, proba, draw_weights):
        """`aucforest._prior_shift.to_training_priors` on ``proba``."""
        weighed = draw_weights > 0
        divisor = np.where(weighed, draw_weights, 1.0)
        scaled = self.op("Mul", [self.op("Div", [proba, self.constant("draw_weights", divisor)]),
                                 self.constant("weighed", weighed.astype(np.float64))])
        total = self._reduce("ReduceSum", scaled)
        empty = self.op("Equal", [total, self.constant("zero", np.float64(0.0))])
        divisor = self.op("Where", [empty, self.constant("one", np.float64(1.0)), total])
        return self.op("Where", [empty, proba, self.op("Div", [scaled, divisor])])

    def _reduce(self, op_type, values):
        """``op_type`` over axis 1, kept ([N, 1]); axes an input where the opset says so."""
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, [values, self.constant("axis", np.array([1], np.int64))],
                           keepdims=1)
        return self.op(op_type, [values], axes=[1], keepdims=1)

    def _column(self, proba, k):
        return self.op("Gather", [proba, self.constant(f"class_{k}", np.int64(k))], axis=1)

    # ------------------------------------------------------------ nodes
    def constant(self, prefix, value):
        """A ``Constant`` node holding ``value``; returns its output's name."""
        from onnx import numpy_helper

        name = self._unique(prefix)
        value = np.asarray(value)
        if value.dtype.kind in "OU":
            value = value.astype(object)
        return self.op("Constant", [], output=name, value=numpy_helper.from_array(value, name))

    def op(self, op_type, inputs, output=None, domain="", **attributes):
        """Add a node; returns its (single) output's name."""
        from onnx import helper

        output = output or self._unique(op_type)
        self.nodes.append(helper.make_node(op_type, list(inputs), [output],
                                           name=self._unique(f"{op_type}_node"),
                                           domain=domain, **attributes))
        return output

    def _counter(self, prefix):
        self._used[prefix] = self._used.get(prefix, -1) + 1
        return f"{prefix}_{self._used[prefix]}" if self._used[prefix] else prefix


class SumPlan(NamedTuple):
    """Which class sums the graph's ``TreeEnsemble`` nodes compute (`sum_plan`).

    Attributes
    ----------
    classes : ndarray of int64
        The classes summed over the trees, target j being ``classes[j]``: all
        of them, or all but the first when it is the remainder.
    remainder : bool
        Whether the first class's sum is the number of trees minus the others'.
    max_nodes : int or None
        The most nodes one ``TreeEnsemble`` holds (more trees: several nodes,
        their sums added); None: one node.
    per_tree : bool
        Whether each tree's proportions are summed afterwards in the trees'
        order (its copies targets of their own, ``tree * K + class``, or its
        gathered leaf rows).
    leaf_rows : bool
        Whether each tree is walked once, to its leaf's row of a table of
        proportions (`ForestGraph.leaf_row_sums`), instead of once per class.
    """

    classes: np.ndarray
    remainder: bool
    max_nodes: object
    per_tree: bool = False
    leaf_rows: bool = False


def sum_plan(trees, n_classes, exact_sums=False):
    """How the graph sums the trees' leaf proportions (a `SumPlan`).

    Every tree's leaves give the first class 1 minus the others (to rounding):
    the first class is the remainder, so each tree is walked K - 1 times, not
    K. The trees go into `MAX_ENSEMBLE_NODES`-node ``TreeEnsemble`` nodes whose
    sums are added. Both change the order of the additions: the sums stay
    within a few units in the last place of ``predict_proba``'s. With
    ``exact_sums`` they are ``predict_proba``'s to the last bit: each tree's
    copies get targets of their own, so that whatever order onnxruntime's
    threads add the trees in, a target receives one value exactly, and the
    graph adds them in the trees' order (``CumSum``), as ``predict_proba``
    does; unless the leaf values are `exactly_summable` (every sum is then
    exact in any order) and their rows add up to exactly 1.

    Three classes or more: each tree is walked once, to its leaf's row in a
    table of leaf proportions, whose rows are gathered and added
    (``leaf_rows``): K - 1 walks of every tree cost more than one walk and a
    gather (benchmarks/results/onnx_speed.md); in the trees' order with
    ``exact_sums``, unless the leaf values are `exactly_summable`.
    """
    leaves = np.concatenate([tree.proba[~tree.is_split] for tree in trees])
    row_sums = leaves.sum(axis=1)
    in_order = exact_sums and not exactly_summable(leaves, len(trees))
    if n_classes >= 3:
        return SumPlan(np.arange(n_classes), False, None, per_tree=in_order, leaf_rows=True)
    if in_order:
        return SumPlan(np.arange(n_classes), False, None, per_tree=True)
    if exact_sums:
        remainder = bool(np.all(row_sums == 1.0))
    else:
        remainder = bool(np.all(np.abs(row_sums - 1.0) <= n_classes * np.finfo(np.float64).eps))
    remainder = remainder and n_classes > 1
    return SumPlan(np.arange(int(remainder), n_classes), remainder, MAX_ENSEMBLE_NODES)


def exactly_summable(values, n_terms):
    """Whether any sum of at most ``n_terms`` of ``values`` (and ``n_terms``
    minus such a sum) is exact in double precision, whatever the order: every
    value is in [0, 1] and a multiple of 2**-m, m = 53 - ceil(log2(n_terms)),
    so every partial sum is an integer multiple of 2**-m below 2**53 of them.
    Proportions of 0 and 1 (pure leaves), halves, quarters are; thirds are
    not."""
    values = np.asarray(values, dtype=np.float64)
    if not np.all((values >= 0.0) & (values <= 1.0)):  # NaN too
        return False
    scaled = np.ldexp(values, 53 - int(np.ceil(np.log2(max(n_terms, 1)))))
    return bool(np.all(scaled == np.round(scaled)))


def uses_negated_columns(trees):
    """Whether a numeric split of ``trees`` sends NaN left: it then reads the
    negated column (`_tree_layout`), which the graph appends to its input."""
    return any(np.any(tree.is_split & ~tree.categorical & tree.missing_left) for tree in trees)


def tree_ensemble_attributes(trees, classes, n_features, max_nodes=None, per_tree=False):
    """The attributes of the ai.onnx.ml opset-5 ``TreeEnsemble`` nodes whose
    target j, added over the nodes, is the sum over ``trees`` of the
    ``classes[j]`` proportion of each row's leaf.

    A leaf of this operator holds one value, so each tree appears once per
    class (a copy), in the trees' order. A copy leaves out the subtrees whose
    leaves all give its class the same proportion (one leaf instead), and a
    copy that gives 0 everywhere is left out. A node takes whole trees until
    it would hold more than ``max_nodes`` nodes (splits and leaves; None: one
    node for all).

    Parameters
    ----------
    trees : list of FlatTree
        The trees as the forest predicts with them.
    classes : array-like of int
        The class of each target.
    n_features : int
        The input's columns; column ``n_features + j`` is ``-x_j`` (read by
        splits that send NaN left, `_tree_layout`).
    max_nodes : int or None, default=None
    per_tree : bool, default=False
        True: tree t's copy of ``classes[j]`` is target ``t * len(classes) + j``
        (each target then receives one value per row).

    Returns
    -------
    list of dict
        Keyword attributes for ``onnx.helper.make_node``, one dict per node.
    """
    classes = np.asarray(classes, dtype=np.int64)
    groups, group, group_nodes = [], [], 0
    first_target = 0
    for tree in trees:
        copies = [(first_target + target, copy)
                  for target, copy in enumerate(_class_copies(tree, classes, n_features))
                  if np.any(copy["weights"] != 0)]
        first_target += len(classes) if per_tree else 0
        size = sum(copy["features"].shape[0] + copy["weights"].shape[0] for _, copy in copies)
        if group and max_nodes is not None and group_nodes + size > max_nodes:
            groups.append(group)
            group, group_nodes = [], 0
        group.extend(copies)
        group_nodes += size
    if not groups and not group:  # every copy left out: one that adds 0
        group = [(0, _single_leaf(0.0))]
    if group:
        groups.append(group)
    n_targets = len(classes) * (len(trees) if per_tree else 1)
    return [_ensemble_attributes(group, n_targets) for group in groups]


def leaf_table(trees, n_classes):
    """(table, rows): the distinct rows of class proportions of the leaves of
    ``trees`` (double [n_rows, n_classes]) and, for each tree, the table row of
    each of its leaves (double over its nodes, NaN at splits; row numbers are
    exact in double up to 2**53)."""
    leaves = [tree.proba[~tree.is_split, :n_classes] for tree in trees]
    table, inverse = np.unique(np.concatenate(leaves), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.float64)
    rows, start = [], 0
    for tree, values in zip(trees, leaves):
        row = np.full(tree.is_split.shape[0], np.nan)
        row[~tree.is_split] = inverse[start:start + values.shape[0]]
        rows.append(row)
        start += values.shape[0]
    return table, rows


def leaf_row_attributes(trees, rows, n_features):
    """The attributes of one ``TreeEnsemble`` per tree of ``trees`` (one
    target), its leaves holding their ``rows`` (`leaf_table`): its output is
    each row's leaf row. A subtree whose leaves all hold one row is one leaf.
    A node per tree walks faster in onnxruntime than trees sharing a node as
    targets of their own (docs/evidence/speed.md).

    Returns
    -------
    list of dict
        Keyword attributes for ``onnx.helper.make_node``, one dict per tree.
    """
    return [_ensemble_attributes([(0, _value_copies(tree, row[:, np.newaxis], n_features)[0])],
                                 1) for tree, row in zip(trees, rows)]


def _ensemble_attributes(copies, n_targets):
    """One ``TreeEnsemble``'s attributes from (target, copy) pairs."""
    from onnx import numpy_helper

    parts = {name: [] for name in ("modes", "features", "splits", "true", "true_leaf", "false",
                                   "false_leaf", "targets", "weights", "roots")}
    members = []
    n_nodes = n_leaves = 0
    for target, copy in copies:
        parts["roots"].append(np.array([n_nodes]))
        for name in ("modes", "features", "splits", "true_leaf", "false_leaf", "weights"):
            parts[name].append(copy[name])
        for side in ("true", "false"):
            parts[side].append(copy[side] + np.where(copy[f"{side}_leaf"] == 1, n_leaves, n_nodes))
        parts["targets"].append(np.full(copy["weights"].shape[0], target, dtype=np.int64))
        members.extend(copy["members"])
        n_nodes += copy["modes"].shape[0]
        n_leaves += copy["weights"].shape[0]
    joined = {name: np.concatenate(arrays) for name, arrays in parts.items()}
    ints = {name: joined[key].astype(np.int64).tolist() for name, key in (
        ("nodes_featureids", "features"), ("nodes_truenodeids", "true"),
        ("nodes_trueleafs", "true_leaf"), ("nodes_falsenodeids", "false"),
        ("nodes_falseleafs", "false_leaf"), ("leaf_targetids", "targets"),
        ("tree_roots", "roots"))}
    attributes = dict(
        ints, n_targets=int(n_targets), aggregate_function=1, post_transform=0,
        nodes_modes=numpy_helper.from_array(joined["modes"].astype(np.uint8)),
        nodes_splits=numpy_helper.from_array(joined["splits"].astype(np.float64)),
        leaf_weights=numpy_helper.from_array(joined["weights"].astype(np.float64)))
    if members:  # each set followed by NaN, in the order of the BRANCH_MEMBER nodes
        values = np.concatenate([np.append(levels, np.nan) for levels in members])
        attributes["membership_values"] = numpy_helper.from_array(values.astype(np.float64))
    return attributes


def _class_copies(tree, classes, n_features):
    """One copy of ``tree`` per class of ``classes`` in TreeEnsemble's layout
    (node and leaf ids within the copy, in the tree's depth-first order): a
    subtree whose leaves all give the class the same proportion is one leaf."""
    return _value_copies(tree, tree.proba[:, classes], n_features)


def _value_copies(tree, values, n_features):
    """One copy of ``tree`` per column of ``values`` (n_nodes, n_columns), its
    leaves holding that column's entries (`_class_copies`)."""
    layout = _tree_layout(tree, n_features)
    is_split = tree.is_split
    values = np.where(is_split[:, np.newaxis], np.nan, values)
    constant, value = _constant_subtrees(tree, values)
    parent = np.full(is_split.shape[0], -1, dtype=np.int64)
    splits = np.flatnonzero(is_split)
    parent[tree.left[splits]] = parent[tree.right[splits]] = splits
    copies = []
    for j in range(values.shape[1]):
        if constant[0, j]:
            copies.append(_single_leaf(value[0, j]))
            continue
        kept = np.ones(is_split.shape[0], dtype=bool)
        kept[1:] = ~constant[parent[1:], j]  # the children of the copy's splits
        split_nodes = kept & ~constant[:, j]
        leaf_nodes = kept & constant[:, j]
        position = np.where(split_nodes, np.cumsum(split_nodes) - 1, np.cumsum(leaf_nodes) - 1)
        nodes = np.flatnonzero(split_nodes)
        true, false = layout["true"][nodes], layout["false"][nodes]
        copies.append({
            "modes": layout["modes"][nodes], "features": layout["features"][nodes],
            "splits": layout["splits"][nodes], "true": position[true], "false": position[false],
            "true_leaf": leaf_nodes[true].astype(np.int64),
            "false_leaf": leaf_nodes[false].astype(np.int64),
            "weights": value[leaf_nodes, j],
            "members": [layout["members"][node] for node in nodes if node in layout["members"]]})
    return copies


def _single_leaf(value):
    """A copy that is one leaf: one split whose two branches are it."""
    return {"modes": np.array([BRANCH_LEQ]), "features": np.zeros(1, np.int64), "splits": np.zeros(1),
                "true": np.zeros(1, np.int64), "false": np.zeros(1, np.int64),
                "true_leaf": np.ones(1, np.int64), "false_leaf": np.ones(1, np.int64),
                "weights": np.array([value], dtype=np.float64), "members": []}


def _constant_subtrees(tree, values):
    """(constant, value), each (n_nodes, n_columns): whether every leaf below
    a node holds the same ``values`` entry (exactly), and that entry."""
    is_split = tree.is_split
    constant = ~is_split[:, np.newaxis] & np.ones(values.shape, dtype=bool)
    value = values.copy()
    done = ~is_split
    pending = np.flatnonzero(is_split)
    while pending.size:  # deepest splits first: one level a pass
        left, right = tree.left[pending], tree.right[pending]
        ready = done[left] & done[right]
        nodes, left, right = pending[ready], left[ready], right[ready]
        same = constant[left] & constant[right] & (value[left] == value[right])
        constant[nodes] = same
        value[nodes] = np.where(same, value[left], np.nan)
        done[nodes] = True
        pending = pending[~ready]
    return constant, value


def _tree_layout(tree, n_features):
    """One `FlatTree`'s splits as TreeEnsemble nodes, indexed by the tree's
    node ids (entries of leaves unused): modes, features, splits, true and
    false child (node ids), and the membership set of each categorical split.

    Every split sends NaN to its false child, so no node tracks missing values
    (onnxruntime then takes its faster loop): a numeric split sending NaN
    right is ``x <= t`` (true: left); one sending NaN left is ``-x <= -u`` on
    the negated column ``n_features + j`` (true: right), u the least float32
    above t, which for the float32 values the graph compares is ``x > t``. A
    categorical split tests membership of its ``away_levels``, the levels that
    go away from the missing side (true), so that NaN, unseen levels and
    codes out of range (never members) go to the missing side; with no such
    level it is ``x < -inf``, never true.
    """
    is_split = tree.is_split
    categorical = tree.categorical & is_split
    negated = is_split & ~categorical & tree.missing_left
    nan_left = is_split & tree.missing_left
    splits = np.where(negated, -_float32_above(np.where(negated, tree.threshold, 0.0)),
                      np.where(categorical, 0.0, tree.threshold))
    modes = np.where(categorical, BRANCH_MEMBER, BRANCH_LEQ)
    members = {}
    for node in np.flatnonzero(categorical):
        levels = tree.away_levels[int(node)].astype(np.float64)
        if levels.size:
            members[int(node)] = levels
        else:
            modes[node], splits[node] = BRANCH_LT, -np.inf
    return {"modes": modes, "features": np.where(negated, tree.feature + n_features, tree.feature),
                "splits": splits, "true": np.where(nan_left, tree.right, tree.left),
                "false": np.where(nan_left, tree.left, tree.right), "members": members}


def _float32_above(thresholds):
    """The least float32 greater than each double (float64 array): for a
    float32 x, ``x > t`` exactly when ``x >= _float32_above(t)``."""
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, then +-max
        rounded = thresholds.astype(np.float32)
        above = np.where(rounded.astype(np.float64) > thresholds, rounded,
                         np.nextafter(rounded, np.float32(np.inf)))
    return above.astype(np.float64)
