"""``aucforest export MODEL OUT.onnx``: the model as an ONNX file (`aucforest.to_onnx`).

Registered in :mod:`aucforest.cli` (``SUBCOMMANDS``). The ONNX model takes the
encoded feature columns (a categorical column as the position of its level
among the model's levels); the file's metadata hold each column's encoding
(`aucforest.to_onnx`: the encoding saved by ``aucforest fit``, or for a model
saved from Python its columns as ``predict`` encodes them), so that a program
using it can encode its rows as ``aucforest predict`` does. Like every
output, OUT is written whole or not at all and replaces an existing file.
"""
from .._atomic import atomic_output
from ..export import to_onnx
from ._data import _load_model
from ._options import OUTPUT_FILES
from ._output import _check_output, _decision_text

HELP = "write a model as an ONNX file (for onnxruntime in any language)"
DESCRIPTION = (
    "Write MODEL as an ONNX model (ai.onnx.ml opset 5, run by onnxruntime 1.20 or later) that "
    "predicts what the model predicts: input X, a double tensor of the encoded feature "
    "columns (a categorical column holds the position of its level among the model's "
    "levels; NaN is a missing value), outputs 'label' (the model's decision rule) and "
    "'probabilities'. How each column is encoded is stored in the file's metadata "
    "('encoding', JSON: the levels of a categorical column in the order of their codes). "
    "A model fitted with --calibrate is refused: its calibration map is not exported.")


def add_export_command(commands, common):
    """Add the ``export`` subcommand to ``commands`` (argparse subparsers)."""
    parser = commands.add_parser("export", parents=[common], help=HELP,
                                 description=DESCRIPTION, epilog=OUTPUT_FILES)
    parser.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit' "
                                                       "or aucforest.save")
    parser.add_argument("output", metavar="OUT", help="ONNX file to write (e.g. model.onnx)")
    parser.set_defaults(run=run_export)


def run_export(args):
    """``aucforest export``: read the model, convert it, write OUT atomically, summarise."""
    _check_output(args.output, "OUT", inputs=[args.model])
    model = _load_model(args.model)
    if model.extra.get("calibrate"):
        raise ValueError(
            f"{args.model} was fitted with --calibrate {model.extra['calibrate']}; the ONNX "
            "export gives the forest's own probabilities and decisions, not calibrated ones. "
            "Fit the model again without --calibrate to export it")
    # the encoding aucforest fit saved; a model saved from Python has none: to_onnx
    # describes its columns as predict encodes them
    encoding = model.encoding if "encoding" in model.extra else None
    exported = to_onnx(model.forest, encoding=encoding)
    names = getattr(model.forest, "feature_names_in_", None)
    names = (encoding.feature_names if encoding is not None else
             [] if names is None else [str(name) for name in names])
    with atomic_output(args.output, "wb", what="ONNX file") as stream:
        stream.write(exported.SerializeToString())
    forest = model.forest
    n_trees = len(getattr(forest, "estimators_", [forest]))
    columns = ", ".join(names) if names else f"{forest.n_features_in_} columns"
    print(f"wrote {args.output}: {n_trees} trees; input X double [N, {forest.n_features_in_}] "
          f"({columns}); outputs label ({_decision_text(forest)}) and probabilities "
          f"({', '.join(map(str, forest.classes_.tolist()))})")
