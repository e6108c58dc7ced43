"""A converter for skl2onnx, so that ``skl2onnx.to_onnx(forest, X[:1])`` and
pipelines holding a forest convert (`register_skl2onnx`).

The forest's operator gives two outputs, the label and the probabilities as a
double tensor (no ZipMap: its maps hold float32), built by
`aucforest.export._graph.ForestGraph`, the graph `aucforest.to_onnx` holds,
from the forest as every export reads it (`aucforest.export._exportable`).
"""
from ._exportable import ExportableForest
from ._graph import ML_DOMAIN, ML_OPSET, MIN_OPSET, ForestGraph, label_values

ALIASES = {"AUCForestClassifier": "AucforestAUCForestClassifier",
           "AUCTreeClassifier": "AucforestAUCTreeClassifier"}


def register_skl2onnx():
    """Register the forest and the tree with skl2onnx (idempotent).

    After it, ``skl2onnx.to_onnx(forest, X[:1].astype(np.float64))`` converts a
    fitted `AUCForestClassifier` or `AUCTreeClassifier`, alone or as the last
    step of a scikit-learn ``Pipeline``; the converted model has the outputs
    of `aucforest.to_onnx` (a label and double probabilities, no ZipMap).
    Pass X as float64 so that the steps before the forest compute in double,
    as scikit-learn does (float32 input is exact for the forest itself, which
    computes in float32). The ai.onnx.ml opset is 5 whatever skl2onnx would
    choose by default.

    Raises
    ------
    ImportError
        If skl2onnx is not installed.
    """
    try:
        from skl2onnx import update_registered_converter
    except ImportError as error:
        raise ImportError('registering with skl2onnx needs it installed: pip install '
                          '"aucforest[onnx]" (or: pip install skl2onnx)') from error
    from .._forest import AUCForestClassifier
    from ..tree import AUCTreeClassifier

    for estimator in (AUCForestClassifier, AUCTreeClassifier):
        update_registered_converter(estimator, ALIASES[estimator.__name__], _shape_calculator,
                                    _converter, parser=_parser)
    _allow_ml_opset_5()


def _allow_ml_opset_5():
    """Let skl2onnx write models that use ai.onnx.ml opset 5.

    skl2onnx (1.20) refuses, when it assembles a model, any ai.onnx.ml opset
    above 3, the highest its own converters use (its function
    ``get_default_opset_for_domain``; sklearn-onnx issue 1160 asks for opset 5's
    TreeEnsemble). The forest's TreeEnsemble needs opset 5 (double leaves and
    thresholds, set membership), so that limit is raised to 5 for the domain;
    converters that pin their ai.onnx.ml version are unaffected.
    """
    from skl2onnx.common import _topology

    default = _topology.get_default_opset_for_domain
    if getattr(default, "allows_ml_opset_5", False):
        return

    def get_default_opset_for_domain(domain):
        version = default(domain)
        return max(version, ML_OPSET) if domain == ML_DOMAIN and version is not None else version

    get_default_opset_for_domain.allows_ml_opset_5 = True
    _topology.get_default_opset_for_domain = get_default_opset_for_domain


def _parser(scope, model, inputs, custom_parsers=None):
    """Declare the forest's operator with its two outputs, label and probabilities."""
    from skl2onnx.common.data_types import DoubleTensorType

    operator = scope.declare_local_operator(ALIASES[type(model).__name__], model)
    operator.inputs = inputs
    operator.outputs.append(scope.declare_local_variable("label", _label_tensor_type(model)()))
    operator.outputs.append(scope.declare_local_variable("probabilities", DoubleTensorType()))
    return operator.outputs


def _shape_calculator(operator):
    from skl2onnx.common.data_types import DoubleTensorType

    model = operator.raw_operator
    n_rows = operator.inputs[0].get_first_dimension()
    operator.outputs[0].type = _label_tensor_type(model)([n_rows])
    operator.outputs[1].type = DoubleTensorType([n_rows, len(model.classes_)])


def _label_tensor_type(model):
    """skl2onnx's tensor type of the label output (`label_values`: int64,
    double or str); the ValueError of ``aucforest.save`` for labels no export
    holds."""
    from skl2onnx.common.data_types import (DoubleTensorType, Int64TensorType,
                                            StringTensorType)

    kind = label_values(ExportableForest(model, "the skl2onnx converter")).dtype.kind
    return {"i": Int64TensorType, "f": DoubleTensorType}.get(kind, StringTensorType)


def _converter(scope, operator, container):
    """Add the forest's graph (`ForestGraph`) to skl2onnx's container."""
    from onnx import helper

    opset = container.target_opset_any_domain("")
    ml_opset = container.target_opset_any_domain(ML_DOMAIN)
    if opset < MIN_OPSET or ml_opset < ML_OPSET:
        raise ValueError(
            f"the aucforest converter needs opset {MIN_OPSET} or more and ai.onnx.ml opset "
            f"{ML_OPSET} or more (TreeEnsemble: double thresholds and leaves, set-membership "
            f"splits); target_opset gives {opset} and {ml_opset}")
    graph = ForestGraph(ExportableForest(operator.raw_operator, "the skl2onnx converter"),
                        opset, unique=scope.get_unique_variable_name)
    graph.build(operator.inputs[0].full_name, operator.outputs[0].full_name,
                operator.outputs[1].full_name)
    for node in graph.nodes:
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        container.add_node(node.op_type, list(node.input), list(node.output),
                           op_domain=node.domain, name=node.name,
                           op_version=ML_OPSET if node.domain == ML_DOMAIN else None,
                           **attributes)

