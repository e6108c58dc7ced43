"""Converters for skl2onnx, so that ``skl2onnx.to_onnx(forest, X[:1])`` and
pipelines holding a forest, a calibrated model or a conformal predictor
convert (`register_skl2onnx`).

Each operator gives the outputs of `aucforest.to_onnx` for its model: the
label and the probabilities as a double tensor (no ZipMap: its maps hold
float32), and for a `MondrianConformalClassifier` the p-values and the sets at
the level given as the converter's option ``alpha``. The graph is that of
`aucforest.to_onnx` (`aucforest.export._decision_graph.DecisionGraph` on
`aucforest.export._graph.ForestGraph`), from the model as every export reads
it (`aucforest.export._exportable_decisions`).
"""
from ._decision_graph import DecisionGraph
from ._exportable_decisions import OUTPUTS, ExportableDecisions
from ._graph import ML_DOMAIN, ML_OPSET, MIN_OPSET, label_values

WRITER = "the skl2onnx converter"
ALIASES = {"AUCForestClassifier": "AucforestAUCForestClassifier",
           "AUCTreeClassifier": "AucforestAUCTreeClassifier",
           "OOBCalibratedClassifier": "AucforestOOBCalibratedClassifier",
           "MondrianConformalClassifier": "AucforestMondrianConformalClassifier"}
#: converter options (name -> allowed values, None: any) of each model
OPTIONS = {"MondrianConformalClassifier": {"alpha": None}}


def register_skl2onnx():
    """Register the forest, the tree and the calibrated and conformal wrappers
    with skl2onnx (idempotent).

    After it, ``skl2onnx.to_onnx(model, X[:1].astype(np.float64))`` converts a
    fitted `AUCForestClassifier`, `AUCTreeClassifier`,
    `aucforest.calibration.OOBCalibratedClassifier` or
    `aucforest.conformal.MondrianConformalClassifier`, alone or as the last
    step of a scikit-learn ``Pipeline``; the converted model has the outputs
    of `aucforest.to_onnx` (a label and double probabilities, no ZipMap; for
    the conformal predictor also ``p_values`` and ``set``). The conformal
    predictor needs the level of its sets as the option ``alpha``, as
    skl2onnx passes options to a converter: ``skl2onnx.to_onnx(model, X[:1],
    options={id(model): {"alpha": 0.1}})`` (or keyed by the class
    ``MondrianConformalClassifier``); without it the conversion is refused.
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
    from ..calibration import OOBCalibratedClassifier
    from ..conformal import MondrianConformalClassifier
    from ..tree import AUCTreeClassifier

    for estimator in (AUCForestClassifier, AUCTreeClassifier, OOBCalibratedClassifier,
                      MondrianConformalClassifier):
        name = estimator.__name__
        update_registered_converter(estimator, ALIASES[name], _shape_calculator, _converter,
                                    parser=_parser, options=OPTIONS.get(name))
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
    """Declare the model's operator with its outputs: label and probabilities,
    and for a conformal predictor p_values and set."""
    from skl2onnx.common.data_types import BooleanTensorType, DoubleTensorType

    decisions = _decisions(model, scope)
    operator = scope.declare_local_operator(ALIASES[type(model).__name__], model)
    operator.inputs = inputs
    types = {"label": _label_tensor_type(decisions), "probabilities": DoubleTensorType,
             "p_values": DoubleTensorType, "set": BooleanTensorType}
    for name in decisions.outputs:
        operator.outputs.append(scope.declare_local_variable(name, types[name]()))
    return operator.outputs


def _decisions(model, scope_or_container):
    """The model as the export reads it (`ExportableDecisions`), with the
    ``alpha`` option of a conformal predictor."""
    options = {}
    if type(model).__name__ in OPTIONS:
        options = scope_or_container.get_options(model, {"alpha": None})
        if options.get("alpha") is None:
            raise ValueError(
                f"{WRITER}: a {type(model).__name__} needs the level of its sets: pass "
                "options={id(model): {'alpha': 0.1}} to skl2onnx.to_onnx (or convert_sklearn), "
                "or use aucforest.to_onnx(model, alpha=0.1)")
    return ExportableDecisions(model, WRITER, alpha=options.get("alpha"))


def _shape_calculator(operator):
    from skl2onnx.common.data_types import BooleanTensorType, DoubleTensorType

    n_rows = operator.inputs[0].get_first_dimension()
    n_classes = len(operator.raw_operator.classes_)
    for name, output in zip(OUTPUTS, operator.outputs):  # the parser's order
        if name == "label":
            output.type = type(output.type)([n_rows])
        else:
            tensor = BooleanTensorType if name == "set" else DoubleTensorType
            output.type = tensor([n_rows, n_classes])


def _label_tensor_type(decisions):
    """skl2onnx's tensor type of the label output (`label_values`: int64,
    double or str); the ValueError of ``aucforest.save`` for labels no export
    holds."""
    from skl2onnx.common.data_types import (DoubleTensorType, Int64TensorType,
                                            StringTensorType)

    kind = label_values(decisions.forest).dtype.kind
    return {"i": Int64TensorType, "f": DoubleTensorType}.get(kind, StringTensorType)


def _converter(scope, operator, container):
    """Add the model's graph (`DecisionGraph`) to skl2onnx's container."""
    from onnx import helper

    opset = container.target_opset_any_domain("")
    ml_opset = container.target_opset_any_domain(ML_DOMAIN)
    if opset < MIN_OPSET or ml_opset < ML_OPSET:
        raise ValueError(
            f"the aucforest converter needs opset {MIN_OPSET} or more and ai.onnx.ml opset "
            f"{ML_OPSET} or more (TreeEnsemble: double thresholds and leaves, set-membership "
            f"splits); target_opset gives {opset} and {ml_opset}")
    decisions = _decisions(operator.raw_operator, container)
    graph = DecisionGraph(decisions, opset, unique=scope.get_unique_variable_name)
    graph.build(operator.inputs[0].full_name,
                {name: output.full_name for name, output in zip(decisions.outputs,
                                                                operator.outputs)})
    for node in graph.nodes:
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        container.add_node(node.op_type, list(node.input), list(node.output),
                           op_domain=node.domain, name=node.name,
                           op_version=ML_OPSET if node.domain == ML_DOMAIN else None,
                           **attributes)
