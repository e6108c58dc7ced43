"""A fitted forest (or tree) as an ONNX model that predicts what it predicts
(`to_onnx`).

The model reads the forest through `aucforest.export._exportable` and holds
the graph of `aucforest.export._graph` (float32 rounding of X, one
``TreeEnsemble`` of ai.onnx.ml opset 5, the decision rule), with the model's
description in its ``metadata_props``.
"""
import json

import numpy as np

from .._version import __version__
from ._exportable import ExportableForest
from ._graph import ML_DOMAIN, ML_OPSET, MIN_OPSET, ForestGraph

DEFAULT_OPSET = 18     # the main domain's opset when none is asked for
INSTALL_HINT = 'pip install "aucforest[onnx]" (or: pip install onnx)'


def to_onnx(forest, *, target_opset=None, encoding=None):
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
    encoding : ColumnEncoding or None, default=None
        The encoding that made the forest's columns from a table (that of a
        model fitted by the command line, `ColumnEncoding.from_model_file`),
        described in the metadata. None: `ColumnEncoding.from_forest`, the
        columns as ``predict`` encodes them.

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
        feature names, the categories, the classes and the decision rule
        (JSON), and ``encoding``: each input column as ``predict`` encodes it
        (`ColumnEncoding.to_dict`).

    Raises
    ------
    ImportError
        If the ``onnx`` package is not installed.
    TypeError
        If ``forest`` is not an aucforest forest or tree.
    ValueError
        If ``target_opset`` asks for an ai.onnx.ml opset below 5 or a main
        opset below 13, ``encoding`` does not give the forest's number of
        columns, or the class labels are ones ``aucforest.save`` refuses
        (the same message): labels of mixed types or of other types than
        int, float, str and bool, integers above 2**63 - 1, text ending in a
        NUL character.

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
    exportable = ExportableForest(forest, "to_onnx")
    properties = {"aucforest_version": __version__,
                  **{key: json.dumps(value)
                     for key, value in exportable.description(encoding).items()}}
    graph = ForestGraph(exportable, opset)
    graph.build("X", "label", "probabilities")
    label_type = {"i": TensorProto.INT64, "f": TensorProto.DOUBLE}.get(graph.labels.dtype.kind,
                                                                     TensorProto.STRING)
    onnx_graph = helper.make_graph(
        graph.nodes, f"aucforest_{type(exportable.model).__name__}",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, exportable.n_features])],
        [helper.make_tensor_value_info("label", label_type, [None]),
         helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE,
                                       [None, graph.n_classes])],
        doc_string=_input_description(exportable))
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


def _input_description(exportable):
    names = exportable.feature_names
    n_features = exportable.n_features
    columns = ", ".join(names) if names is not None else f"{n_features} feature columns"
    return (f"aucforest {type(exportable.model).__name__}. Input X: double [N, {n_features}] "
            f"({columns}); NaN is a missing value; a categorical feature holds its level codes "
            "(see the metadata 'encoding' and 'categories'). Outputs: label, probabilities "
            "(predict_proba).")
