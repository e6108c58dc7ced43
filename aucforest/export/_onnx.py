"""A fitted forest (or tree) as an ONNX graph that predicts what it predicts.

The graph (``to_onnx``) takes one double tensor ``X`` of shape [N, n_features]
and gives ``probabilities`` (double [N, K], the forest's ``predict_proba``)
and ``label`` [N] (its ``predict``, under its decision rule):

1. ``X`` is cast to float32 and back: the forest compares float32 values with
   its (double) thresholds, so the graph sees the same values and sends every
   row to the same leaf.
2. One ``TreeEnsemble`` node (ai.onnx.ml opset 5): a numeric split is
   ``BRANCH_LEQ`` on the double threshold, NaN following the node's missing
   flag (``nodes_missing_value_tracks_true``); a categorical split is
   ``BRANCH_MEMBER`` on the set of levels that go away from the missing
   side, so that NaN, unseen levels and codes outside 0..254 go where the
   forest sends them (the missing side). A leaf of this opset holds one
   value, so each tree appears once per class it predicts (its leaves' class
   proportions, a target per class), summed (aggregate SUM) and divided by the
   number of trees: the mean of the trees' proportions, as ``predict_proba``.
3. The decision rule on those probabilities, with the forest's ties: RFQ
   (O'Brien & Ishwaran 2019; two classes ``p_min >= pi_min``, more classes
   the first largest ``p_k / pi_k`` in the order of increasing prior),
   argmax (first largest), a threshold on the second class, or the least
   expected cost ``argmin_k sum_j p_j C[j, k]`` (Elkan 2001) after the
   prior-shift correction (Saerens, Latinne & Decaestecker 2002, eq. 2.4).

The graph is built as a list of nodes (`ForestGraph`), which `to_onnx` wraps
in a model and the skl2onnx converter (`aucforest.export._skl2onnx`) adds to
skl2onnx's container.
"""
import json

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._categories import levels_going_left
from .._decision import TIE_TOLERANCE, cost_matrix, validate_decision
from .._version import __version__
from ..tree import frozen

ML_DOMAIN = "ai.onnx.ml"
ML_OPSET = 5           # TreeEnsemble: double thresholds and leaves, BRANCH_MEMBER
DEFAULT_OPSET = 18     # the main domain's opset when none is asked for
MIN_OPSET = 13         # ReduceSum takes its axes as an input from 13 on
INSTALL_HINT = 'pip install "aucforest[onnx]" (or: pip install onnx)'

# TreeEnsemble's nodes_modes
BRANCH_LEQ, BRANCH_LT, BRANCH_MEMBER = 0, 1, 6
N_LEVEL_BITS = 255     # level codes 0..254 (aucforest._tree.MAX_CATEGORIES)


def to_onnx(forest, *, target_opset=None):
    """The fitted forest as an ONNX model predicting what it predicts.

    Parameters
    ----------
    forest : fitted AUCForestClassifier or AUCTreeClassifier
        The trees are taken as ``predict`` uses them (collapsed to the
        forest's ``predict_min_samples_``), with the decision rule
        ``forest.decision`` has now (a tree: argmax).
    target_opset : int, dict or None, default=None
        The opset of the main ONNX domain (at least 13; None: 18), or a dict
        ``{"": opset, "ai.onnx.ml": 5}``. The ``ai.onnx.ml`` opset must be 5
        or more: ``TreeEnsemble`` of opset 5 is the only tree operator with
        double thresholds and leaf values and with set-membership splits
        (onnxruntime runs it from version 1.20).

    Returns
    -------
    onnx.ModelProto
        Input ``X``: double tensor [N, n_features], the feature columns in the
        order of fit; NaN marks a missing value. A categorical feature takes
        its level codes, as an array given to ``predict`` holds them (the
        position of the level in ``categories_[j]`` for a feature fitted from
        a ``category`` column); the graph does not check them: a code the
        forest refuses (negative, not an integer, 255 or more) goes where
        missing values go. The graph computes in float32 as the forest does
        (X is rounded to float32 first). Outputs ``label`` [N] (int64,
        double or string, as ``classes_``) and ``probabilities`` double
        [N, K] in ``classes_`` order. The model's ``metadata_props`` hold the
        feature names, the categories (JSON) and the decision rule.

    Raises
    ------
    ImportError
        If the ``onnx`` package is not installed.
    TypeError
        If ``forest`` is not an aucforest forest or tree, or its class labels
        are neither numbers nor strings.
    ValueError
        If ``target_opset`` asks for an ai.onnx.ml opset below 5 or a main
        opset below 13.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from aucforest import AUCForestClassifier, to_onnx
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = AUCForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> model = to_onnx(forest)
    >>> [output.name for output in model.graph.output]
    ['label', 'probabilities']
    """
    onnx = _import_onnx()
    from onnx import TensorProto, helper

    opset, ml_opset = _opsets(target_opset)
    model = _fitted_model(forest)
    graph = ForestGraph(model, opset)
    n_features = model.n_features_in_
    graph.build("X", "label", "probabilities")
    label_type = {np.dtype(np.int64): TensorProto.INT64,
                  np.dtype(np.float64): TensorProto.DOUBLE}.get(graph.labels.dtype,
                                                                TensorProto.STRING)
    onnx_graph = helper.make_graph(
        graph.nodes, f"aucforest_{type(model).__name__}",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, n_features])],
        [helper.make_tensor_value_info("label", label_type, [None]),
         helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE,
                                       [None, graph.n_classes])],
        doc_string=_input_description(model))
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid(ML_DOMAIN, ml_opset)]
    exported = helper.make_model(onnx_graph, opset_imports=opsets,
                                 producer_name="aucforest", producer_version=__version__)
    exported.ir_version = helper.find_min_ir_version_for(opsets)
    helper.set_model_props(exported, model_properties(model))
    onnx.checker.check_model(exported)
    return exported


def model_properties(model):
    """The ``metadata_props`` of an exported model: what its input columns are
    and which rule its label follows (plain text and JSON)."""
    names = getattr(model, "feature_names_in_", None)
    categories = getattr(model, "categories_", None) or [None] * model.n_features_in_
    is_categorical = getattr(model, "is_categorical_", None)
    decision = getattr(model, "decision", "argmax")
    return {
        "aucforest_version": __version__,
        "feature_names": json.dumps(None if names is None else [str(n) for n in names]),
        "categorical_features": json.dumps(
            [] if is_categorical is None else np.flatnonzero(is_categorical).tolist()),
        "categories": json.dumps([None if levels is None else [_plain(v) for v in levels]
                                  for levels in categories]),
        "classes": json.dumps([_plain(c) for c in model.classes_]),
        "decision": json.dumps(decision if isinstance(decision, str) else
                               _plain(decision) if np.ndim(decision) == 0 else
                               np.asarray(decision, dtype=float).tolist()),
    }


class ForestGraph:
    """The nodes of the graph of a fitted forest (or tree), built by `build`.

    Parameters
    ----------
    model : AUCForestClassifier or AUCTreeClassifier
        A fitted estimator (a frozen copy: it is read, never changed).
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
        The class labels as the graph's ``label`` gives them.
    n_classes : int
    """

    def __init__(self, model, opset, unique=None):
        self.model = model
        self.opset = opset
        self.nodes = []
        self.labels = label_values(model.classes_)
        self.n_classes = len(model.classes_)
        self._unique = unique or self._counter
        self._used = {}

    def build(self, x, label, probabilities):
        """Add the nodes from input ``x`` (a float, double or integer tensor
        [N, n_features]) to outputs ``label`` and ``probabilities`` (names)."""
        from onnx import TensorProto

        rounded = self.op("Cast", [x], to=TensorProto.FLOAT)
        as_double = self.op("Cast", [rounded], to=TensorProto.DOUBLE)
        sums = self.op("TreeEnsemble", [as_double], domain=ML_DOMAIN,
                       **tree_ensemble_attributes(self.model.estimators_
                                                  if hasattr(self.model, "estimators_")
                                                  else [self.model], self.n_classes))
        n_trees = len(self.model.estimators_) if hasattr(self.model, "estimators_") else 1
        self.op("Div", [sums, self.constant("n_trees", np.array(n_trees, dtype=np.float64))],
                output=probabilities)
        index = self.decision_index(probabilities)
        self.op("Gather", [self.constant("classes", self.labels), index], output=label, axis=0)

    # ------------------------------------------------------------ decisions
    def decision_index(self, proba):
        """Name of the int64 [N] class index the decision rule picks from
        ``proba`` (`aucforest._decision.decide`, the same ties)."""
        model = self.model
        decision = getattr(model, "decision", "argmax")  # a tree: argmax
        validate_decision(decision, self.n_classes)
        costs = cost_matrix(decision)
        if costs is not None:
            return self._least_cost(proba, costs, getattr(model, "draw_class_weights_", None))
        if decision == "argmax":
            return self.op("ArgMax", [proba], axis=1, keepdims=0)
        if decision == "rfq":
            return self._rfq(proba, np.asarray(model.class_prior_, dtype=np.float64))
        from onnx import TensorProto

        positive = self.op("GreaterOrEqual", [self._column(proba, 1),
                                              self.constant("threshold", np.float64(decision))])
        return self.op("Cast", [positive], to=TensorProto.INT64)

    def _rfq(self, proba, prior):
        if self.n_classes == 2:
            minority = int(np.argmin(prior))  # equal priors: class 0
            if prior[minority] <= 0:  # a class the trees never saw is never predicted
                chosen = (1 - minority, 1 - minority)
            else:
                chosen = (minority, 1 - minority)
            at_least = self.op("GreaterOrEqual", [self._column(proba, minority),
                                                  self.constant("pi_min", prior[minority])])
            return self.op("Where", [at_least,
                                     self.constant("minority", np.int64(chosen[0])),
                                     self.constant("majority", np.int64(chosen[1]))])
        # argmax_k p_k / pi_k over the classes in order of increasing prior (stable), the
        # first largest winning; a class of prior 0 is never predicted
        order = np.argsort(prior, kind="stable")
        order = order[prior[order] > 0].astype(np.int64)
        columns = self.op("Gather", [proba, self.constant("rfq_order", order)], axis=1)
        scores = self.op("Div", [columns, self.constant("rfq_prior", prior[order])])
        best = self.op("ArgMax", [scores], axis=1, keepdims=0)
        return self.op("Gather", [self.constant("rfq_order", order), best], axis=0)

    def _least_cost(self, proba, costs, draw_weights):
        """`aucforest._decision.least_cost_classes`: expected costs under the
        training priors, ties (within TIE_TOLERANCE) to the lowest index."""
        from onnx import TensorProto

        if draw_weights is not None:
            proba = self._training_priors(proba, np.asarray(draw_weights, dtype=np.float64))
        expected = self.op("MatMul", [proba, self.constant("costs", costs)])
        least = self._reduce("ReduceMin", expected)
        slack = self.op("Mul", [self.op("Abs", [least]),
                                self.constant("tie_tolerance", np.float64(TIE_TOLERANCE))])
        ties = self.op("LessOrEqual", [expected, self.op("Add", [least, slack])])
        return self.op("ArgMax", [self.op("Cast", [ties], to=TensorProto.DOUBLE)],
                       axis=1, keepdims=0)

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
    trees : list of AUCTreeClassifier
        Fitted trees (their ``tree_``), as the forest predicts with them.
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
    for estimator in trees:
        layout = _tree_layout(estimator.tree_)
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
    """One tree's split nodes and leaves in TreeEnsemble's layout (ids within
    the tree; a leaf at the root as one split whose two branches are it).

    A categorical split tests membership of the levels that go to the child
    away from the missing side, so that NaN, unseen levels and codes out of
    range (never members) go to the missing side, as ``level_in_set`` sends
    them; its missing flag is then 0 (NaN is never a member).
    """
    feature = tree.feature
    is_split = feature >= 0
    proba = np.asarray(tree.proba, dtype=np.float64)[~is_split]
    if not is_split.any():
        return dict(modes=np.array([BRANCH_LEQ]), features=np.zeros(1, np.int64),
                    splits=np.zeros(1), true=np.zeros(1, np.int64), false=np.zeros(1, np.int64),
                    true_leaf=np.ones(1, np.int64), false_leaf=np.ones(1, np.int64),
                    missing=np.zeros(1, np.int64), proba=proba, members=[])
    position = np.where(is_split, np.cumsum(is_split) - 1, np.cumsum(~is_split) - 1)
    splits = np.flatnonzero(is_split)
    left, right = splits + 1, tree.children_right[splits]
    missing_left = tree.missing_go_to_left[splits].astype(bool)
    categorical = tree.categorical_split[splits].astype(bool)
    modes = np.where(categorical, BRANCH_MEMBER, BRANCH_LEQ)
    thresholds = np.where(categorical, 0.0, tree.threshold[splits])
    swap = categorical & missing_left  # members go right, the rest (missing side) left
    true, false = np.where(swap, right, left), np.where(swap, left, right)
    members = []
    if categorical.any():
        goes_left = left_level_sets(tree)
        for row, (node, away_side) in enumerate(zip(np.flatnonzero(categorical),
                                                    ~missing_left[categorical])):
            levels = np.flatnonzero(goes_left[row] == away_side).astype(np.float64)
            if levels.size:
                members.append(levels)
            else:  # no level leaves the missing side: x < -inf is never true
                modes[node], thresholds[node] = BRANCH_LT, -np.inf
    return dict(modes=modes, features=feature[splits], splits=thresholds,
                true=position[true], false=position[false],
                true_leaf=(~is_split[true]).astype(np.int64),
                false_leaf=(~is_split[false]).astype(np.int64),
                missing=np.where(categorical, False, missing_left).astype(np.int64),
                proba=proba, members=members)


def left_level_sets(tree):
    """The levels that go left at each categorical split of ``tree``, in node
    order: a boolean array (n categorical splits, 255), from the 256-bit rows
    of ``tree.left_levels``."""
    return levels_going_left(tree.left_levels)[:, :N_LEVEL_BITS]


def label_values(classes):
    """The class labels as the graph's ``label`` gives them: int64 for integer
    (and boolean) labels, double for other numbers, strings for text."""
    classes = np.asarray(classes)
    if classes.dtype.kind in "iub":
        return classes.astype(np.int64)
    if classes.dtype.kind == "f":
        return classes.astype(np.float64)
    if classes.dtype.kind in "OUS" and all(isinstance(c, (str, np.str_)) for c in classes):
        return classes.astype(str)
    raise TypeError(f"ONNX labels are integers, numbers or strings; this forest's classes_ "
                    f"have dtype {classes.dtype} ({classes[:3].tolist()!r}...)")


def _fitted_model(forest):
    """A frozen copy of a fitted aucforest estimator; TypeError for anything else."""
    from .._forest import AUCForestClassifier
    from ..tree import AUCTreeClassifier

    if not isinstance(forest, (AUCForestClassifier, AUCTreeClassifier)):
        raise TypeError(f"to_onnx exports an AUCForestClassifier or AUCTreeClassifier, "
                        f"not {type(forest).__name__}")
    check_is_fitted(forest)
    return frozen(forest)


def _opsets(target_opset):
    """(main opset, ai.onnx.ml opset) from ``target_opset``; ValueError below the
    opsets the graph needs."""
    if target_opset is None:
        opset, ml_opset = DEFAULT_OPSET, ML_OPSET
    elif isinstance(target_opset, dict):
        unknown = set(target_opset) - {"", ML_DOMAIN}
        if unknown:
            raise ValueError(f"target_opset names domains {sorted(unknown)}; only '' and "
                             f"'{ML_DOMAIN}' are used")
        opset = target_opset.get("", DEFAULT_OPSET)
        ml_opset = target_opset.get(ML_DOMAIN, ML_OPSET)
    elif isinstance(target_opset, (int, np.integer)) and not isinstance(target_opset, bool):
        opset, ml_opset = int(target_opset), ML_OPSET
    else:
        raise ValueError(f"target_opset must be None, an int or a dict, got {target_opset!r}")
    if ml_opset is None or ml_opset < ML_OPSET:
        raise ValueError(
            f"target_opset asks for ai.onnx.ml opset {ml_opset}; the export needs 5 or more "
            "(TreeEnsemble: double thresholds and leaves, set-membership splits; below it the "
            "probabilities would be float32 and differ from predict_proba)")
    if opset is None or opset < MIN_OPSET:
        raise ValueError(f"target_opset asks for opset {opset}; the export needs {MIN_OPSET} "
                         "or more")
    return int(opset), int(ml_opset)


def _import_onnx():
    try:
        import onnx
    except ImportError as error:
        raise ImportError(f"exporting to ONNX needs the onnx package: {INSTALL_HINT}") from error
    return onnx


def _plain(value):
    """A JSON-ready label or level."""
    return value.item() if isinstance(value, np.generic) else value


def _input_description(model):
    names = getattr(model, "feature_names_in_", None)
    columns = ", ".join(map(str, names)) if names is not None else \
        f"{model.n_features_in_} feature columns"
    return (f"aucforest {type(model).__name__}. Input X: double [N, {model.n_features_in_}] "
            f"({columns}); NaN is a missing value; a categorical feature holds its level codes "
            "(see the metadata 'categories'). Outputs: label, probabilities (predict_proba).")
