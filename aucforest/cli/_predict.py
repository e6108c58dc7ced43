"""``aucforest predict MODEL DATA``: labels or class probabilities as CSV."""
from .._table import read_table
from ._data import _by_name, _load_model, _model_features
from ._from_oob import calibrated_model, conformal_predictor, set_cells
from ._options import OUTPUT_FILES, _add_data_options, _alpha
from ._output import _cell_text, _check_output, _write_csv


def add_predict_command(commands, common):
    """Add the ``predict`` subcommand to ``commands`` (argparse subparsers)."""
    predict = commands.add_parser(
        "predict", parents=[common], epilog=OUTPUT_FILES,
        help="predict labels or class probabilities",
        description="Predict the class (or, with --proba, the class probabilities) of each "
                    "row of DATA; writes CSV to stdout or to --output. A model fitted with "
                    "--calibrate gives calibrated probabilities, and its decision rule is "
                    "applied to them.")
    predict.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit'")
    predict.add_argument("data", metavar="DATA", help="CSV (or Parquet) file to predict")
    predict.add_argument("--proba", action="store_true",
                         help="write class probabilities, one column per class")
    predict.add_argument("--sets", type=_alpha, metavar="ALPHA",
                         help="add a column 'set': the Mondrian (class-conditional) conformal "
                              "prediction set of each row at level ALPHA, its labels joined by "
                              "'|' in class order (an empty cell: no label). Computed from the "
                              "model's out-of-bag predictions, not smoothed: within each class "
                              "the set misses the true label with probability at most ALPHA if "
                              "the cases are exchangeable, which out-of-bag scores meet only "
                              "approximately (see aucforest.conformal). Every training case with "
                              "an out-of-bag prediction is a calibration case, once, whatever "
                              "its weight")
    predict.add_argument("--output", metavar="FILE",
                         help="CSV file to write, replaced only once complete (a symbolic link "
                              "is written through to its target; FIFOs and devices are "
                              "refused); '-' or none: stdout")
    predict.add_argument("--id", metavar="COLUMN",
                         help="column copied to the output as its first column (default: the "
                              "--id column given to 'fit', when DATA has it)")
    _add_data_options(predict, model_default=True)
    predict.set_defaults(run=run_predict)


def run_predict(args):
    """``aucforest predict``: labels or probabilities as CSV, after the id column if any."""
    if args.output == "-":
        args.output = None  # stdout
    if args.output:
        _check_output(args.output, "--output", inputs=[args.model, args.data])
    model = _load_model(args.model)
    table = read_table(args.data, sep=args.sep)
    id_column = args.id or model.extra.get("id")
    if id_column and not args.id and id_column not in table.columns:
        id_column = None  # the id column given to fit is optional in new data
    forest = model.forest
    predictor = forest
    if model.extra.get("calibrate"):
        predictor = calibrated_model(forest, model.extra["calibrate"], args.model,
                                     model.extra.get("calibration"))
    X = _model_features(model, table, [model.target, id_column], args.na_values)
    if args.proba:
        header = [str(c) for c in forest.classes_]
        rows = _by_name(predictor.predict_proba, X, forest).tolist()
    else:
        header = [model.target or "prediction"]
        rows = [[label] for label in _by_name(predictor.predict, X, forest).tolist()]
    if args.sets is not None:
        conformal = conformal_predictor(forest, args.model)
        sets = _by_name(lambda rows: conformal.predict_set(rows, args.sets), X, forest)
        cells = set_cells(sets, forest.classes_)
        header, rows = [*header, "set"], [[*row, cell] for row, cell in zip(rows, cells)]
    if id_column:
        ids = [_cell_text(value) for value in table.column(id_column)]
        header, rows = [id_column, *header], [[i, *row] for i, row in zip(ids, rows)]
    _write_csv(header, rows, args.output)

