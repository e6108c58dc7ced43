"""A fitted forest (or tree), calibrated model or conformal predictor as an ONNX
model that predicts what it predicts (`to_onnx`).

The model reads the forest through `aucforest.export._exportable` and what a
wrapper adds through `aucforest.export._exportable_decisions`, and holds the
graph of `aucforest.export._graph` (float32 rounding of X, ``TreeEnsemble``
nodes of ai.onnx.ml opset 5, the decision rule) with that of
`aucforest.export._decision_graph` on its probabilities (prior correction,
calibration maps, the rule on calibrated probabilities, conformal p-values
and sets), and the model's description in its ``metadata_props``.
"""
import json

import numpy as np

from .._version import __version__
from ._decision_graph import DecisionGraph
from ._exportable_decisions import ExportableDecisions
from ._graph import ML_DOMAIN, ML_OPSET, MIN_OPSET

DEFAULT_OPSET = 18     # the main domain's opset when none is asked for
INSTALL_HINT = 'pip install "aucforest[onnx]" (or: pip install onnx)'


def to_onnx(model, *, target_opset=None, encoding=None, sets=None, alpha=None):
    """A fitted forest, calibrated model or conformal predictor as an ONNX model.

    The model predicts what the estimator predicts (see Returns).

    Parameters
    ----------
    model : fitted AUCForestClassifier, AUCTreeClassifier, OOBCalibratedClassifier \
or MondrianConformalClassifier
        A forest or tree: its trees as ``predict`` uses them (collapsed to
        the forest's ``predict_min_samples_``), with the decision rule
        ``forest.decision`` has now (a tree: argmax). An
        `aucforest.calibration.OOBCalibratedClassifier` (around an
        `AUCForestClassifier`): its calibrated ``predict_proba`` and
        ``predict``, the forest's probabilities brought back to the training
        priors, each class's map, and the forest's decision rule on the
        calibrated probabilities with ``class_prior_``. An
        `aucforest.conformal.MondrianConformalClassifier` (around an
        `AUCForestClassifier`, ``smoothing=False``): the forest's
        predictions and the prediction sets at level ``alpha``.
    target_opset : int, dict or None, default=None
        The opset of the main ONNX domain (at least 13; None: 18), or a dict
        ``{"": opset, "ai.onnx.ml": 5}``. The ``ai.onnx.ml`` opset must be 5
        or more: ``TreeEnsemble`` of opset 5 is the only tree operator with
        double thresholds and leaf values and with set-membership splits
        (onnxruntime runs it from version 1.20).
    encoding : ColumnEncoding or None, default=None
        The encoding that made the forest's columns from a table (that of a
        model fitted by the command line, `ColumnEncoding.from_model_file`),
        described in the metadata. None: `ColumnEncoding.from_forest`, the
        columns as ``predict`` encodes them.
    sets : fitted MondrianConformalClassifier or None, default=None
        Prediction sets to add to a forest or an `OOBCalibratedClassifier`:
        a conformal predictor around the same fitted forest (the same
        object, or one with the same trees), e.g. both built with their
        ``calibrate`` method on one forest, as ``aucforest export --sets``
        does. Its p-values are those of the forest's own probabilities.
    alpha : float in (0, 1) or None, default=None
        The level of the sets: label k is in a row's set when its p-value
        exceeds alpha. Required with a MondrianConformalClassifier (as
        ``model`` or ``sets``), refused without one.

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
        double or string, as ``classes_``): ``model.predict``;
        ``probabilities`` double [N, K] in ``classes_`` order:
        ``model.predict_proba`` (calibrated for a calibrated model); with
        sets, ``p_values`` double [N, K] (the unsmoothed Mondrian p-values
        ``(#{i in k: a_i >= a} + 1) / (n_k + 1)``, ``a = 1 - p_k`` from the
        forest's own probabilities, as ``p_values`` of the conformal
        predictor with ``smoothing=False``) and ``set`` bool [N, K]
        (``p_values > alpha``, its ``predict_set``). The model's
        ``metadata_props`` hold, as JSON, the feature names, the categories,
        the classes, the decision rule, ``encoding`` (each input column as
        ``predict`` encodes it, `ColumnEncoding.to_dict`), ``outputs`` (what
        each output is) and, as they apply, ``calibration`` (the method and
        the class of each map, the priors) and ``conformal`` (alpha, the
        guarantee, the number of calibration scores of each class).

    Raises
    ------
    ImportError
        If the ``onnx`` package is not installed.
    TypeError
        If ``model`` is none of the four estimators, a wrapper is around
        another forest than an aucforest one, or ``sets`` is not a
        MondrianConformalClassifier.
    ValueError
        If ``target_opset`` asks for an ai.onnx.ml opset below 5 or a main
        opset below 13, ``encoding`` does not give the forest's number of
        columns, or the class labels are ones ``aucforest.save`` refuses
        (the same message): labels of mixed types or of other types than
        int, float, str and bool, integers above 2**63 - 1, text ending in a
        NUL character. For sets: ``alpha`` missing, outside (0, 1) or given
        without sets, a conformal predictor with ``smoothing=True`` (its
        sets depend on random draws: ``set_params(smoothing=False)`` gives
        the deterministic ones) or around another forest.

    Notes
    -----
    The calibrated probabilities, p-values and sets are those of Python
    operation for operation (the prior correction and the row sums in
    numpy's order; a map's places found by a search tree of ``TreeEnsemble``
    nodes), on the forest's probabilities summed as ``predict_proba`` sums
    them (each tree a target of its own, added in the trees' order, on any
    number of onnxruntime threads): they agree to the last bit, but for the
    sigmoid's ``exp``, which may differ from the C library's in the last bit. The per-class guarantee of the sets (miss
    rate at most alpha under exchangeability) is that of
    `aucforest.conformal.MondrianConformalClassifier`, with its caveat:
    the calibration scores are out-of-bag scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from aucforest import AUCForestClassifier, to_onnx
    >>> from aucforest.calibration import OOBCalibratedClassifier
    >>> from aucforest.conformal import MondrianConformalClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = AUCForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> model = to_onnx(forest)
    >>> [output.name for output in model.graph.output]
    ['label', 'probabilities']
    >>> forest = AUCForestClassifier(n_estimators=30, oob_score=True, random_state=0).fit(X, y)
    >>> calibrated = OOBCalibratedClassifier(forest, method="isotonic").calibrate(y)
    >>> sets = MondrianConformalClassifier(forest, smoothing=False).calibrate(y)
    >>> model = to_onnx(calibrated, sets=sets, alpha=0.1)
    >>> [output.name for output in model.graph.output]
    ['label', 'probabilities', 'p_values', 'set']
    """
    onnx = _import_onnx()
    from onnx import TensorProto, helper

    opset, ml_opset = _opsets(target_opset)
    decisions = ExportableDecisions(model, "to_onnx", sets=sets, alpha=alpha)
    properties = {"aucforest_version": __version__,
                  **{key: json.dumps(value)
                     for key, value in decisions.description(encoding).items()}}
    graph = DecisionGraph(decisions, opset)
    graph.build("X", {name: name for name in decisions.outputs})
    label_type = {"i": TensorProto.INT64, "f": TensorProto.DOUBLE}.get(graph.labels.dtype.kind,
                                                                     TensorProto.STRING)
    types = {"label": (label_type, [None]),
             "probabilities": (TensorProto.DOUBLE, [None, graph.n_classes]),
             "p_values": (TensorProto.DOUBLE, [None, graph.n_classes]),
             "set": (TensorProto.BOOL, [None, graph.n_classes])}
    n_features = decisions.forest.n_features
    onnx_graph = helper.make_graph(
        graph.nodes, f"aucforest_{type(model).__name__}",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, n_features])],
        [helper.make_tensor_value_info(name, *types[name]) for name in decisions.outputs],
        doc_string=_input_description(decisions, type(model).__name__))
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid(ML_DOMAIN, ml_opset)]
    exported = helper.make_model(onnx_graph, opset_imports=opsets,
                                 producer_name="aucforest", producer_version=__version__)
    exported.ir_version = helper.find_min_ir_version_for(opsets)
    helper.set_model_props(exported, properties)
    onnx.checker.check_model(exported)
    return exported


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


def _input_description(decisions, name):
    names = decisions.forest.feature_names
    n_features = decisions.forest.n_features
    columns = ", ".join(names) if names is not None else f"{n_features} feature columns"
    return (f"aucforest {name}. Input X: double [N, {n_features}] ({columns}); NaN is a "
            "missing value; a categorical feature holds its level codes (see the metadata "
            f"'encoding' and 'categories'). Outputs: {', '.join(decisions.outputs)} (see the "
            "metadata 'outputs').")
