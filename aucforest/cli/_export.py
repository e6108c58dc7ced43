"""``aucforest export MODEL OUT.onnx [--sets ALPHA]``: the model as an ONNX file
(`aucforest.to_onnx`).

Registered in :mod:`aucforest.cli` (``SUBCOMMANDS``). The ONNX model takes the
encoded feature columns (a categorical column as the position of its level
among the model's levels); the file's metadata hold each column's encoding
(`aucforest.to_onnx`: the encoding saved by ``aucforest fit``, or for a model
saved from Python its columns as ``predict`` encodes them), so that a program
using it can encode its rows as ``aucforest predict`` does. A model fitted
with ``--calibrate`` is exported calibrated (its stored maps,
`aucforest.cli._from_oob.calibrated_model`), and ``--sets ALPHA`` adds the
conformal sets of ``predict --sets`` (`aucforest.cli._from_oob.conformal_predictor`):
the file gives what ``predict --proba --sets`` writes. Like every output, OUT is
written whole or not at all and replaces an existing file.
"""
from .._atomic import atomic_output
from ..export import to_onnx
from ._data import _load_model
from ._from_oob import calibrated_model, conformal_predictor
from ._options import OUTPUT_FILES, _alpha
from ._output import _check_output, _decision_text

HELP = "write a model as an ONNX file (for onnxruntime in any language)"
DESCRIPTION = (
    "Write MODEL as an ONNX model (ai.onnx.ml opset 5, run by onnxruntime 1.20 or later) that "
    "predicts what 'aucforest predict' predicts: input X, a double tensor of the encoded "
    "feature columns (a categorical column holds the position of its level among the model's "
    "levels; NaN is a missing value), outputs 'label' (the model's decision rule) and "
    "'probabilities'. A model fitted with --calibrate gives its calibrated probabilities and "
    "applies its decision rule to them, as predict does. With --sets ALPHA two more outputs, "
    "'p_values' (double, one column per class) and 'set' (bool, one column per class: the "
    "class is in the row's set), give the Mondrian conformal sets of 'predict --sets ALPHA' "
    "(from the model's out-of-bag predictions, not smoothed). How each column is encoded, the "
    "calibration maps and the level of the sets are stored in the file's metadata (JSON: "
    "'encoding' with the levels of a categorical column in the order of their codes, "
    "'outputs', 'calibration', 'conformal').")


def add_export_command(commands, common):
    """Add the ``export`` subcommand to ``commands`` (argparse subparsers)."""
    parser = commands.add_parser("export", parents=[common], help=HELP,
                                 description=DESCRIPTION, epilog=OUTPUT_FILES)
    parser.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit' "
                                                       "or aucforest.save")
    parser.add_argument("output", metavar="OUT", help="ONNX file to write (e.g. model.onnx)")
    parser.add_argument("--sets", type=_alpha, metavar="ALPHA",
                        help="add the outputs 'p_values' and 'set': the Mondrian "
                             "(class-conditional) conformal prediction sets at level ALPHA of "
                             "'predict --sets ALPHA', from the model's stored out-of-bag "
                             "predictions, not smoothed (within each class the set misses the "
                             "true label with probability at most ALPHA if the cases are "
                             "exchangeable, which out-of-bag scores meet only approximately)")
    parser.set_defaults(run=run_export)


def run_export(args):
    """``aucforest export``: read the model, convert it, write OUT atomically, summarise."""
    _check_output(args.output, "OUT", inputs=[args.model])
    model = _load_model(args.model)
    forest = model.forest
    exported_model = forest
    method = model.extra.get("calibrate")
    if method:
        exported_model = calibrated_model(forest, method, args.model,
                                          model.extra.get("calibration"))
    sets = conformal_predictor(forest, args.model) if args.sets is not None else None
    # the encoding aucforest fit saved; a model saved from Python has none: to_onnx
    # describes its columns as predict encodes them
    encoding = model.encoding if "encoding" in model.extra else None
    exported = to_onnx(exported_model, encoding=encoding, sets=sets, alpha=args.sets)
    names = getattr(forest, "feature_names_in_", None)
    names = (encoding.feature_names if encoding is not None else
             [] if names is None else [str(name) for name in names])
    with atomic_output(args.output, "wb", what="ONNX file") as stream:
        stream.write(exported.SerializeToString())
    n_trees = len(getattr(forest, "estimators_", [forest]))
    columns = ", ".join(names) if names else f"{forest.n_features_in_} columns"
    classes = ", ".join(map(str, forest.classes_.tolist()))
    outputs = [(f"label ({_decision_text(forest)}"
                f"{', on the calibrated probabilities' if method else ''})"),
               f"probabilities ({f'calibrated, {method}; ' if method else ''}{classes})"]
    if sets is not None:
        outputs += ["p_values (Mondrian conformal, one column per class)",
                    (f"set (bool, p_values > {args.sets:g}: per-class miss rate at most "
                     f"{args.sets:g})")]
    print(f"wrote {args.output}: {n_trees} trees; input X double [N, {forest.n_features_in_}] "
          f"({columns}); outputs {', '.join(outputs[:-1])} and {outputs[-1]}")
