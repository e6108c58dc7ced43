"""The ONNX graph of an exportable forest (`ForestGraph`), which `to_onnx`
wraps in a model and the skl2onnx converter adds to skl2onnx's container.

From one double (or float, or integer) tensor ``X`` [N, n_features] to
``probabilities`` (double [N, K], the forest's ``predict_proba``) and
``label`` [N] (its ``predict``, under its decision rule):

1. ``X`` is cast to float32 and back: the forest compares float32 values with
   its (double) thresholds, so the graph sees the same values and sends every
   row to the same leaf.
2. One ``TreeEnsemble`` node (ai.onnx.ml opset 5): a numeric split is
   ``BRANCH_LEQ`` on the double threshold, NaN following the node's missing
   flag (``nodes_missing_value_tracks_true``); a categorical split is
   ``BRANCH_MEMBER`` on the set of levels that go away from the missing
   side (`FlatTree.away_levels`), so that NaN, unseen levels and codes
   outside 0..254 go where the forest sends them (the missing side). A leaf
   of this opset holds one value, so each tree appears once per class it
   predicts (its leaves' class proportions, a target per class), summed
   (aggregate SUM) and divided by the number of trees: the mean of the
   trees' proportions, as ``predict_proba``.
3. The decision rule on those probabilities, with the forest's ties
   (`DecisionRule.apply`): RFQ (O'Brien & Ishwaran 2019), argmax, a
   threshold on the second class, or the least expected cost (Elkan 2001)
   after the prior-shift correction (Saerens, Latinne & Decaestecker 2002,
   eq. 2.4).
"""
import numpy as np

from .._decision_rule import TIE_TOLERANCE

ML_DOMAIN = "ai.onnx.ml"
ML_OPSET = 5           # TreeEnsemble: double thresholds and leaves, BRANCH_MEMBER
MIN_OPSET = 13         # ReduceSum takes its axes as an input from 13 on

# TreeEnsemble's nodes_modes
BRANCH_LEQ, BRANCH_LT, BRANCH_MEMBER = 0, 1, 6


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

    Attributes
    ----------
    nodes : list of onnx.NodeProto
        After `build`: the nodes in execution order (constants are
        ``Constant`` nodes, so a graph takes them as they are).
    labels : ndarray
        The class labels as the graph's ``label`` gives them (`label_values`).
    n_classes : int
    """

    def __init__(self, forest, opset, unique=None):
        self.forest = forest
        self.opset = opset
        self.nodes = []
        self.labels = label_values(forest)
        self.n_classes = forest.n_classes
        self._unique = unique or self._counter
        self._used = {}

    def build(self, x, label, probabilities):
        """Add the nodes from input ``x`` (a float, double or integer tensor
        [N, n_features]) to outputs ``label`` and ``probabilities`` (names)."""
        from onnx import TensorProto

        rounded = self.op("Cast", [x], to=TensorProto.FLOAT)
        as_double = self.op("Cast", [rounded], to=TensorProto.DOUBLE)
        sums = self.op("TreeEnsemble", [as_double], domain=ML_DOMAIN,
                       **tree_ensemble_attributes(self.forest.trees, self.n_classes))
        self.op("Div", [sums, self.constant("n_trees", np.array(self.forest.n_trees,
                                                                dtype=np.float64))],
                output=probabilities)
        index = self.decision_index(probabilities)
        self.op("Gather", [self.constant("classes", self.labels), index], output=label, axis=0)

    # ------------------------------------------------------------ decisions
    def decision_index(self, proba):
        """Name of the int64 [N] class index the model's `DecisionRule` picks
        from ``proba``: the same scores, tolerance and order of preference as
        `DecisionRule.apply`, so the labels agree whatever order the trees
        were summed in."""
        from onnx import TensorProto

        rule, prior = self.forest.rule, self.forest.class_prior
        cut = rule.cut(prior)
        if cut is not None:  # a threshold, or RFQ with two classes
            chosen, at_least = cut
            passes = self.op("GreaterOrEqual", [self._column(proba, chosen),
                                                self.constant("at_least", np.float64(at_least))])
            return self.op("Where", [passes, self.constant("chosen", np.int64(chosen)),
                                     self.constant("other", np.int64(1 - chosen))])
        if rule.kind == "cost":
            draw_weights = self.forest.draw_class_weights
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


def tree_ensemble_attributes(trees, n_classes):
    """The attributes of an ai.onnx.ml opset-5 ``TreeEnsemble`` whose target k
    is the sum over ``trees`` of the class-k proportion of each row's leaf.

    A leaf of this operator holds one value, so each tree appears once per
    class it gives a positive proportion somewhere (a tree whose leaves all
    give class k nothing adds 0 to it and is left out for k).

    Parameters
    ----------
    trees : list of FlatTree
        The trees as the forest predicts with them.
    n_classes : int

    Returns
    -------
    dict
        Keyword attributes for ``onnx.helper.make_node``.
    """
    from onnx import numpy_helper

    parts = {name: [] for name in ("modes", "features", "splits", "true", "true_leaf", "false",
                                   "false_leaf", "missing", "targets", "weights", "roots")}
    members = []
    n_nodes = n_leaves = 0
    for tree in trees:
        layout = _tree_layout(tree)
        for k in np.flatnonzero(layout["proba"].any(axis=0)):
            parts["roots"].append(np.array([n_nodes]))
            for name in ("modes", "features", "splits", "true_leaf", "false_leaf", "missing"):
                parts[name].append(layout[name])
            for side in ("true", "false"):
                parts[side].append(layout[side] + np.where(layout[f"{side}_leaf"] == 1,
                                                           n_leaves, n_nodes))
            parts["targets"].append(np.full(layout["proba"].shape[0], k, dtype=np.int64))
            parts["weights"].append(layout["proba"][:, k])
            members.extend(layout["members"])
            n_nodes += layout["modes"].shape[0]
            n_leaves += layout["proba"].shape[0]
    joined = {name: np.concatenate(arrays) for name, arrays in parts.items()}
    ints = {name: joined[key].astype(np.int64).tolist() for name, key in (
        ("nodes_featureids", "features"), ("nodes_truenodeids", "true"),
        ("nodes_trueleafs", "true_leaf"), ("nodes_falsenodeids", "false"),
        ("nodes_falseleafs", "false_leaf"), ("nodes_missing_value_tracks_true", "missing"),
        ("leaf_targetids", "targets"), ("tree_roots", "roots"))}
    attributes = dict(
        ints, n_targets=int(n_classes), aggregate_function=1, post_transform=0,
        nodes_modes=numpy_helper.from_array(joined["modes"].astype(np.uint8)),
        nodes_splits=numpy_helper.from_array(joined["splits"].astype(np.float64)),
        leaf_weights=numpy_helper.from_array(joined["weights"].astype(np.float64)))
    if members:  # each set followed by NaN, in the order of the BRANCH_MEMBER nodes
        values = np.concatenate([np.append(levels, np.nan) for levels in members])
        attributes["membership_values"] = numpy_helper.from_array(values.astype(np.float64))
    return attributes


def _tree_layout(tree):
    """One `FlatTree`'s split nodes and leaves in TreeEnsemble's layout (ids
    within the tree; a leaf at the root as one split whose two branches are it).

    A categorical split tests membership of its ``away_levels``, the levels
    that go to the child away from the missing side, so that NaN, unseen
    levels and codes out of range (never members) go to the missing side; its
    missing flag is then 0 (NaN is never a member).
    """
    is_split = tree.is_split
    proba = tree.proba[~is_split]
    if not is_split.any():
        return dict(modes=np.array([BRANCH_LEQ]), features=np.zeros(1, np.int64),
                    splits=np.zeros(1), true=np.zeros(1, np.int64), false=np.zeros(1, np.int64),
                    true_leaf=np.ones(1, np.int64), false_leaf=np.ones(1, np.int64),
                    missing=np.zeros(1, np.int64), proba=proba, members=[])
    position = np.where(is_split, np.cumsum(is_split) - 1, np.cumsum(~is_split) - 1)
    splits = np.flatnonzero(is_split)
    left, right = tree.left[splits], tree.right[splits]
    missing_left = tree.missing_left[splits]
    categorical = tree.categorical[splits]
    modes = np.where(categorical, BRANCH_MEMBER, BRANCH_LEQ)
    thresholds = np.where(categorical, 0.0, tree.threshold[splits])
    swap = categorical & missing_left  # members go right, the rest (missing side) left
    true, false = np.where(swap, right, left), np.where(swap, left, right)
    members = []
    for index in np.flatnonzero(categorical):
        levels = tree.away_levels[int(splits[index])].astype(np.float64)
        if levels.size:
            members.append(levels)
        else:  # no level leaves the missing side: x < -inf is never true
            modes[index], thresholds[index] = BRANCH_LT, -np.inf
    return dict(modes=modes, features=tree.feature[splits], splits=thresholds,
                true=position[true], false=position[false],
                true_leaf=(~is_split[true]).astype(np.int64),
                false_leaf=(~is_split[false]).astype(np.int64),
                missing=np.where(categorical, False, missing_left).astype(np.int64),
                proba=proba, members=members)
