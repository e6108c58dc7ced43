"""The ``aucforest`` command line: fit, predict, evaluate, compare.

Examples
--------
::

    aucforest fit train.csv --target outcome --id patient --output model.npz
    aucforest predict model.npz new.csv --proba --output proba.csv
    aucforest evaluate model.npz test.csv --target outcome --plot roc.png
    aucforest compare                          # bundled data sets, about a minute
    aucforest compare data.csv --target outcome --repeats 10 --folds-csv folds.csv

Long work draws a progress bar on stderr (``--quiet`` silences it). Every
error prints one line, ``aucforest: error: ...``, and exits with status 1
(2 for a bad command line); ``--traceback`` shows the full traceback instead,
for bug reports.

Output files (models, predictions, per-fold scores, plots) are written whole
or not at all (:mod:`aucforest._atomic`): to a temporary file beside the
destination, renamed over it once complete, so a failed or interrupted
command leaves the previous file intact. A symbolic link is written through
to its target (the link is kept); a folder, FIFO or device is refused before
any work. ``predict --output -`` writes to stdout, as without ``--output``.
"""
import argparse
import csv
import json
import os
import re
import sys
import warnings

import numpy as np

from . import _cli_importance, io
from ._atomic import atomic_output, figure_format, output_target, save_figure
from ._compare import (Dataset, check_fold_sizes, compare, comparison_json, default_datasets,
                       fold_records, format_paired_tests, format_table, matplotlib_figure,
                       paired_tests, plot_comparison)
from ._encoding import DEFAULT_NA_VALUES, ColumnEncoding, numeric_values, parse_labels
from ._forest import AUCForestClassifier
from ._oob import MIN_CLASS_CASES_TO_CHOOSE
from ._progress import progress
from ._table import quote, read_table
from ._version import __version__
from .metrics import auc, auc_ci, imbalance_report, multiclass_auc, plot_roc

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def main(argv=None):
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments after the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 on an error, 2 on a bad command line, 130 when
        interrupted.
    """
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = _print_warning
        try:
            return args.run(args) or 0
        except KeyboardInterrupt:
            print("\naucforest: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:  # e.g. `aucforest predict ... | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_ERROR
        except Exception as error:
            if args.traceback:
                raise
            print(f"aucforest: error: {_one_line(error)}", file=sys.stderr)
            return EXIT_ERROR


def _one_line(error):
    if isinstance(error, OSError) and error.strerror and error.filename:
        return f"{error.strerror}: {error.filename}"
    message = _short_quotes(" ".join(str(error).split()))
    if isinstance(error, (ValueError, OSError, ImportError)):
        return message
    return (f"unexpected {type(error).__name__}: {message} "
            "(rerun with --traceback and report it as a bug)")


def _print_warning(message, category, filename, lineno, file=None, line=None):
    print(f"aucforest: warning: {_short_quotes(' '.join(str(message).split()))}",
          file=sys.stderr)


# a quoted text (as repr writes it) of more than 40 characters: opened after a space
# or an opening bracket, closed before a space, a bracket or punctuation
_LONG_QUOTED = re.compile(r"""(?<![^\s\[({,:=])(?:'([^'\n]{41,}?)'|"([^"\n]{41,}?)")"""
                          r"""(?=$|[\s\])},;:.])""")


def _short_quotes(message):
    """``message`` with every quoted text longer than 40 characters cut to its
    first 40 (:func:`aucforest._table.quote`): a cell or label quoted by any
    layer (scikit-learn, the metrics) stays short on the command line."""
    return _LONG_QUOTED.sub(lambda match: quote(match.group(1) or match.group(2)), message)



# ------------------------------------------------------------------ parser

class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, like every other error."""

    def error(self, message):
        sys.stderr.write(f"aucforest: error: {message} (see '{self.prog} --help')\n")
        sys.exit(EXIT_USAGE)


def build_parser():
    """The argument parser of the ``aucforest`` command (one entry of
    :data:`SUBCOMMANDS` per subcommand)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress bar")
    common.add_argument("--traceback", action="store_true",
                        help="on an error, show the full traceback (for bug reports)")
    parser = _Parser(prog="aucforest", description=(
        "Random forests that split on the multiclass AUC statistic, with RFQ decisions "
        "for imbalanced classes."))
    parser.add_argument("--version", action="version", version=f"aucforest {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True,
                                     parser_class=_Parser)
    for add_command in SUBCOMMANDS:
        add_command(commands, common)
    return parser


#: How every output file is written (the epilog of the commands that write files).
OUTPUT_FILES = ("Output files are replaced only once complete: a failed or interrupted command "
                "leaves the previous file as it was. A symbolic link is written through to its "
                "target (the link is kept); a folder, FIFO or device is refused before any work.")


def _add_fit(commands, common):
    fit = commands.add_parser(
        "fit", parents=[common], epilog=OUTPUT_FILES,
        help="fit a forest on a CSV/Parquet file and save it",
        description="Fit a forest on DATA and save it to a model file. Every column except "
                    "the target, --id, --weight and --drop columns is a feature. Text columns "
                    "are one-hot encoded (ordinal beyond --max-one-hot levels); the encoding "
                    "is saved with the model. Prints the out-of-bag AUC and G-mean.")
    fit.add_argument("data", metavar="DATA", help="CSV file with a header row (or Parquet)")
    fit.add_argument("--target", required=True, metavar="COLUMN", help="column of class labels")
    fit.add_argument("--output", required=True, metavar="MODEL",
                     help="model file to write (.npz); replaced only once complete, a "
                          "symbolic link written through to its target")
    fit.add_argument("--criterion", choices=("auc", "auc_ecp", "gini", "entropy"), default="auc",
                     help="split statistic (default: auc)")
    fit.add_argument("--decision", type=_decision, default="rfq", metavar="RULE",
                     help="decision rule of predict: rfq, argmax, or a threshold T in (0, 1) "
                          "on the probability of the second class (two classes; default: rfq)")
    fit.add_argument("--n-estimators", type=_positive_int, default=500, metavar="N",
                     help="number of trees (default: 500)")
    _add_forest_options(fit)
    fit.add_argument("--weight", metavar="COLUMN",
                     help="column of case weights (non-negative numbers; not a feature)")
    _add_column_options(fit, id_help="column of case identifiers, never a feature; "
                                     "'predict' copies it to its output")
    _add_data_options(fit)
    fit.add_argument("--json", action="store_true", help="print the summary as JSON")
    _add_parallel_options(fit)
    fit.set_defaults(run=run_fit)


def _add_predict(commands, common):
    predict = commands.add_parser(
        "predict", parents=[common], epilog=OUTPUT_FILES,
        help="predict labels or class probabilities",
        description="Predict the class (or, with --proba, the class probabilities) of each "
                    "row of DATA; writes CSV to stdout or to --output.")
    predict.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit'")
    predict.add_argument("data", metavar="DATA", help="CSV (or Parquet) file to predict")
    predict.add_argument("--proba", action="store_true",
                         help="write class probabilities, one column per class")
    predict.add_argument("--output", metavar="FILE",
                         help="CSV file to write, replaced only once complete (a symbolic link "
                              "is written through to its target; FIFOs and devices are "
                              "refused); '-' or none: stdout")
    predict.add_argument("--id", metavar="COLUMN",
                         help="column copied to the output as its first column (default: the "
                              "--id column given to 'fit', when DATA has it)")
    _add_data_options(predict, model_default=True)
    predict.set_defaults(run=run_predict)


def _add_evaluate(commands, common):
    evaluate = commands.add_parser(
        "evaluate", parents=[common], epilog=OUTPUT_FILES,
        help="imbalance report, AUC with DeLong interval, ROC plot",
        description="Evaluate a model on labelled data: per-class recall, precision, G-mean, "
                    "balanced accuracy, AUC with its DeLong interval, optionally ROC curves "
                    "with the operating point of the model's decision rule.")
    evaluate.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit'")
    evaluate.add_argument("data", metavar="DATA", help="labelled CSV (or Parquet) file")
    evaluate.add_argument("--target", required=True, metavar="COLUMN",
                          help="column of true class labels")
    evaluate.add_argument("--plot", metavar="FILE",
                          help="save ROC curves (e.g. roc.png; the format follows the "
                               "extension, PNG without one)")
    _add_data_options(evaluate, model_default=True)
    evaluate.add_argument("--json", action="store_true", help="print the results as JSON")
    evaluate.set_defaults(run=run_evaluate)


def _add_compare(commands, common):
    compare = commands.add_parser(
        "compare", parents=[common], epilog=OUTPUT_FILES,
        help="AUC vs Gini splitting by cross-validation",
        description="Compare AUC splitting with Gini splitting, each with RFQ and argmax "
                    "decisions, by repeated stratified cross-validation, with paired "
                    "corrected resampled t-tests (Nadeau & Bengio 2003). Without DATA it "
                    "runs on scikit-learn's breast cancer and wine data, made imbalanced.")
    compare.add_argument("data", nargs="?", metavar="DATA",
                         help="CSV (or Parquet) file; default: the bundled data sets")
    compare.add_argument("--target", metavar="COLUMN", help="column of class labels (with DATA)")
    compare.add_argument("--folds", type=_at_least_two, default=5, metavar="K",
                         help="folds per repeat (default: 5)")
    compare.add_argument("--repeats", type=_positive_int, default=5, metavar="R",
                         help="repeats of the K folds (default: 5)")
    compare.add_argument("--n-estimators", type=_positive_int, default=200, metavar="N",
                         help="trees per forest (default: 200)")
    _add_forest_options(compare)
    _add_column_options(compare, id_help="column of case identifiers, never a feature")
    _add_data_options(compare)
    compare.add_argument("--plot", metavar="FILE", help="save box plots of the scores")
    compare.add_argument("--folds-csv", metavar="FILE",
                         help="write every fold's scores to a CSV file")
    compare.add_argument("--json", action="store_true", help="print the results as JSON")
    _add_parallel_options(compare, default_seed=0)
    compare.set_defaults(run=run_compare)


#: One function per subcommand, each adding its parser to ``commands``.
SUBCOMMANDS = [_add_fit, _add_predict, _add_evaluate, _add_compare,
               _cli_importance.add_importance_command]


def _add_forest_options(parser):
    parser.add_argument("--max-features", type=_max_features, default="ceil_sqrt", metavar="M",
                        help="features examined per node: ceil_sqrt, sqrt (floor), log2, all, "
                             "an integer, or a fraction in (0, 1] (default: ceil_sqrt)")
    parser.add_argument("--max-depth", type=_positive_int, default=None, metavar="D",
                        help="maximum tree depth (default: none)")
    parser.add_argument("--min-samples-leaf", type=_positive_int, default=1, metavar="N",
                        help="minimum cases in each leaf (default: 1)")
    parser.add_argument("--class-weight", type=_class_weight, default=None, metavar="W",
                        help="balanced, balanced_subsample, or LABEL=WEIGHT,... "
                             "(default: none)")
    parser.add_argument("--balanced-bootstrap", action="store_true",
                        help="draw the same number of cases from every class for each tree")
    sampling = parser.add_mutually_exclusive_group()
    default_replacement = AUCForestClassifier().replacement
    sampling.add_argument("--without-replacement", dest="replacement", action="store_false",
                          default=default_replacement,
                          help="each tree draws 0.632 n cases without replacement (subsampling)"
                               + ("" if default_replacement else "; the default"))
    sampling.add_argument("--with-replacement", dest="replacement", action="store_true",
                          help="each tree draws a bootstrap sample of n cases"
                               + ("; the default" if default_replacement else ""))
    default_nsplit = AUCForestClassifier().nsplit
    parser.add_argument("--nsplit", type=_nsplit, default=default_nsplit, metavar="K",
                        help="evaluate K thresholds drawn at random among each node's distinct "
                             "values of a feature; 'all' evaluates every threshold (default: "
                             f"{'all' if default_nsplit is None else default_nsplit})")
    default_node_size = AUCForestClassifier().predict_min_samples
    parser.add_argument("--predict-min-samples", type=_node_size, default=default_node_size,
                        metavar="N",
                        help="trees predict from the deepest node with at least N training "
                             "cases; 'oob' chooses N out of bag (the leaf when a class has "
                             f"fewer than {MIN_CLASS_CASES_TO_CHOOSE} cases; default: "
                             f"{default_node_size})")
    parser.add_argument("--max-one-hot", type=_positive_int, default=10, metavar="LEVELS",
                        help="text columns with more levels are ordinal encoded (default: 10)")


def _add_column_options(parser, id_help):
    parser.add_argument("--id", metavar="COLUMN", help=id_help)
    parser.add_argument("--drop", action="append", default=[], metavar="COLUMN",
                        help="column not to use as a feature (repeat for several)")


def _add_data_options(parser, model_default=False):
    markers = "the model's" if model_default else ", ".join(
        repr(v) for v in DEFAULT_NA_VALUES)
    parser.add_argument("--sep", metavar="CHAR",
                        help="field separator of a text file, e.g. ';' or '\\t' (default: tab "
                             "for .tsv/.tab, else comma)")
    parser.add_argument("--na-values", type=_na_values, metavar="LIST",
                        help=f"comma-separated cell texts that mark missing values, replacing "
                             f"the default list ({markers}; any case; an empty cell is "
                             "always missing)")


def _add_parallel_options(parser, default_seed=None):
    parser.add_argument("--n-jobs", type=_n_jobs, default=-1, metavar="N",
                        help="threads (default: -1, all cores)")
    parser.add_argument("--seed", type=_seed, default=default_seed, metavar="S",
                        help=f"random seed, 0 to {MAX_SEED} (default: {default_seed})")


MAX_SEED = 2**32 - 1  # numpy.random.RandomState's range


def _node_size(text):
    """--predict-min-samples: 'oob' or a positive integer."""
    return "oob" if text.strip().lower() == "oob" else _positive_int(text)


def _nsplit(text):
    """--nsplit: 'all' (every threshold) or a positive integer."""
    return None if text.strip().lower() == "all" else _positive_int(text)


def _integer(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def _positive_int(text):
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _at_least_two(text):
    value = _integer(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be at least 2, got {text}")
    return value


def _seed(text):
    value = _integer(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to {MAX_SEED}, got {text}")
    return value


def _n_jobs(text):
    value = _integer(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be a positive number of threads, or -1 for all "
                                         "cores (-2 for all but one, ...), got 0")
    return value


def _decision(text):
    if text in ("rfq", "argmax"):
        return text
    try:
        threshold = float(text)
    except ValueError:
        threshold = None
    if threshold is None or not 0 < threshold < 1:
        raise argparse.ArgumentTypeError(f"must be rfq, argmax or a threshold strictly between "
                                         f"0 and 1, got {text!r}")
    return threshold


def _max_features(text):
    if text in ("ceil_sqrt", "sqrt", "log2"):
        return text
    if text.lower() in ("all", "none"):
        return None
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        pass
    try:
        fraction = float(text)
    except ValueError:
        fraction = None
    if fraction is None or not 0 < fraction <= 1:
        raise argparse.ArgumentTypeError(f"must be ceil_sqrt, sqrt, log2, all, a positive "
                                         f"integer or a fraction in (0, 1], got {text!r}")
    return fraction


def _class_weight(text):
    """"balanced", "balanced_subsample", or {label text: weight} (labels are
    matched to the target's labels once these are read)."""
    if text in ("balanced", "balanced_subsample"):
        return text
    weights = {}
    for item in text.split(","):
        label, equals, weight = item.rpartition("=")
        try:
            value = float(weight)
        except ValueError:
            value = None
        if not equals or not label.strip() or value is None or not np.isfinite(value) \
                or value < 0:
            raise argparse.ArgumentTypeError(
                f"must be balanced, balanced_subsample or LABEL=WEIGHT pairs separated by "
                f"commas with non-negative weights, e.g. 'yes=5,no=1'; got {text!r}")
        weights[label.strip()] = value
    return weights


def _na_values(text):
    return tuple(value.strip() for value in text.split(","))


# ---------------------------------------------------------------- commands

def run_fit(args):
    """``aucforest fit``: encode, fit with OOB estimates, save, summarise."""
    _check_output(args.output, "--output", inputs=[args.data])
    forest = AUCForestClassifier(
        n_estimators=args.n_estimators, criterion=args.criterion, decision=args.decision,
        oob_score=True, n_jobs=args.n_jobs, random_state=args.seed,
        verbose=0 if args.quiet else 1, **_forest_options(args))
    forest._validate_params()  # a bad option fails before the data is read
    table = read_table(args.data, sep=args.sep)
    na_values = _markers(args.na_values)
    y = _training_labels(table, args.target, na_values)
    n_classes = np.unique(y).size
    if not isinstance(args.decision, str) and n_classes != 2:
        raise ValueError(f"--decision {args.decision:g} is a threshold on the probability of "
                         f"the second class and needs two classes; the target has {n_classes}")
    if isinstance(args.class_weight, dict):
        forest.set_params(class_weight=_class_weight_for(args.class_weight, y))
    weights = _case_weights(table, args.weight) if args.weight else None
    allow_missing = accepts_missing(forest)
    encoding = ColumnEncoding.fit(table, _feature_columns(table, args), args.max_one_hot,
                                  allow_missing=allow_missing, na_values=na_values)
    forest.fit(encoding.transform(table, allow_missing=allow_missing), y, sample_weight=weights)
    forest.set_params(verbose=0)
    forest.feature_names_in_ = np.asarray(encoding.feature_names, dtype=object)
    extra = {"target": args.target, "encoding": encoding.to_dict()}
    extra.update({key: getattr(args, key) for key in ("id", "weight") if getattr(args, key)})
    io.save(forest, args.output, extra=extra)
    summary = _fit_summary(forest, y, encoding, args)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_fit_summary(summary)


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
    X = _model_features(model, table, [model.target, id_column], args.na_values)
    if args.proba:
        header = [str(c) for c in model.forest.classes_]
        rows = _by_name(model.forest.predict_proba, X).tolist()
    else:
        header = [model.target or "prediction"]
        rows = [[label] for label in _by_name(model.forest.predict, X).tolist()]
    if id_column:
        ids = [_cell_text(value) for value in table.column(id_column)]
        header, rows = [id_column, *header], [[i, *row] for i, row in zip(ids, rows)]
    _write_csv(header, rows, args.output)


def model_and_labelled_data(args):
    """The model of ``args.model`` and the table of ``args.data`` with its ``args.target``
    labels, read as the model's encoding reads them and checked against its classes
    (evaluate, importance)."""
    model = _load_model(args.model)
    table = read_table(args.data, sep=args.sep)
    na_values = args.na_values or (model.encoding.na_values if model.encoding
                                   else DEFAULT_NA_VALUES)
    y = parse_labels(table.column(args.target), args.target, table.path,
                     like=model.forest.classes_, na_values=na_values)
    _check_known_labels(y, model.forest.classes_, args.target)
    return model, table, y


def run_evaluate(args):
    """``aucforest evaluate``: imbalance report, AUC with DeLong interval, ROC plot."""
    if args.plot:
        check_plot(args.plot, inputs=[args.model, args.data])
    model, table, y = model_and_labelled_data(args)
    forest = model.forest
    if np.unique(y).size < 2:
        raise ValueError(f"target column {args.target!r} of {table.path} has only one class "
                         f"({_shown(y[:1].tolist()[0])}); evaluation needs at least two")
    X = _model_features(model, table, [args.target], args.na_values)
    proba = _by_name(forest.predict_proba, X)
    y_pred = _by_name(forest.predict, X)
    report = imbalance_report(y, proba, forest.classes_, **_decision_arguments(forest, y_pred))
    intervals = _auc_intervals(y, proba, forest.classes_)
    if args.plot:
        _save_roc_plot(y, proba, y_pred, forest, args.plot)
    if args.json:
        print(json.dumps({"model": args.model, "data": args.data, "n_cases": len(y),
                          "decision": _plain(forest.decision), "report": _plain_report(report),
                          "auc_intervals": intervals, "plot": args.plot}, indent=2))
        return
    print(f"{args.model} on {args.data}: {len(y)} cases; decision {_decision_text(forest)}")
    print(report)
    print(_intervals_text(intervals, forest.classes_))
    if args.plot:
        print(f"ROC curves saved to {args.plot}")


def run_compare(args):
    """``aucforest compare``: AUC vs Gini forests, RFQ vs argmax, by repeated CV."""
    if args.target and not args.data:
        raise ValueError("--target names a column of DATA; give DATA too")
    inputs = [args.data] if args.data else []
    for option, path in (("--plot", args.plot), ("--folds-csv", args.folds_csv)):
        if path:
            _check_output(path, option, inputs=inputs)
    if args.plot and args.folds_csv and _same_file(args.plot, args.folds_csv):
        raise ValueError("--plot and --folds-csv name the same file")
    if args.plot:
        check_plot(args.plot, inputs=inputs)
    AUCForestClassifier(n_estimators=args.n_estimators, n_jobs=args.n_jobs,
                        **_forest_options(args))._validate_params()  # before any work
    datasets = [_user_dataset(args)] if args.data else default_datasets()
    for dataset in datasets:
        check_fold_sizes(dataset.y, args.folds)
    if not args.json:
        _print_compare_header(args, datasets)
    rows = []
    for dataset in datasets:
        with progress(total=args.folds * args.repeats, enabled=not args.quiet,
                      description=f"{dataset.name}: folds") as bar:
            rows += compare(dataset, n_estimators=args.n_estimators, n_splits=args.folds,
                            n_repeats=args.repeats, seed=args.seed, n_jobs=args.n_jobs, bar=bar,
                            forest_params=_forest_options(args))
    tests = paired_tests(rows)
    if args.folds_csv:
        _write_csv(*fold_records(rows, args.folds), args.folds_csv)
    if args.plot:
        plot_comparison(rows, args.plot)
    if args.json:
        print(json.dumps({"folds": args.folds, "repeats": args.repeats,
                          "n_estimators": args.n_estimators, "seed": args.seed,
                          "forest_params": _plain(_forest_options(args)),
                          "datasets": [{"name": d.name, "description": d.description}
                                       for d in datasets],
                          **comparison_json(rows, tests)}, indent=2))
        return
    print(format_table(rows))
    print()
    print(format_paired_tests(tests))
    for option, path in (("plot", args.plot), ("per-fold scores", args.folds_csv)):
        if path:
            print(f"{option} saved to {path}")


# ----------------------------------------------------------------- helpers

class _Model:
    """A loaded model file: the forest, its column encoding (None for a model
    saved from Python without feature names), its target name and extra data."""

    def __init__(self, forest, encoding, extra):
        self.forest, self.encoding, self.extra = forest, encoding, extra
        self.target = extra.get("target")


def _forest_options(args):
    """The tree and sampling options shared by fit and compare."""
    return {"max_features": args.max_features, "max_depth": args.max_depth,
            "min_samples_leaf": args.min_samples_leaf, "class_weight": args.class_weight,
            "balanced_bootstrap": args.balanced_bootstrap,
            "replacement": args.replacement, "nsplit": args.nsplit,
            "predict_min_samples": args.predict_min_samples}


def _markers(na_values):
    return DEFAULT_NA_VALUES if na_values is None else na_values


def _training_labels(table, target, na_values=DEFAULT_NA_VALUES):
    y = parse_labels(table.column(target), target, table.path, na_values=na_values)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"target column {target!r} of {table.path} has only one class "
                         f"({_shown(classes[:1].tolist()[0])}); a classifier needs at least "
                         "two")
    return y


def _class_weight_for(weights, y):
    """--class-weight LABEL=WEIGHT pairs with the labels in the type of ``y``."""
    classes = {str(label): label for label in np.unique(y).tolist()}
    unknown = [label for label in weights if label not in classes]
    if unknown:
        raise ValueError(f"--class-weight names class {unknown[0]!r}, which the target does not "
                         f"have (its classes: {', '.join(map(repr, classes))})")
    return {classes[label]: weight for label, weight in weights.items()}


def _case_weights(table, column):
    weights = numeric_values(table.column(column), column, table.path, allow_missing=False)
    if weights is None:
        raise ValueError(f"--weight column {column!r} of {table.path} must hold numbers")
    if (weights < 0).any():
        raise ValueError(f"--weight column {column!r} of {table.path} has negative weights "
                         f"(first in data row {int(np.flatnonzero(weights < 0)[0]) + 1})")
    return weights


def _feature_columns(table, args):
    """Every column except the target, --id, --weight and --drop columns."""
    weight = getattr(args, "weight", None)  # compare has no --weight
    excluded = {"--target": [args.target], "--id": [args.id] if args.id else [],
                "--weight": [weight] if weight else [], "--drop": args.drop}
    seen = {}
    for option, names in excluded.items():
        for name in names:
            table.column(name)  # ValueError naming the columns if absent
            if name in seen:
                raise ValueError(f"column {name!r} is given to both {seen[name]} and {option}")
            seen[name] = option
    names = [name for name in table.columns if name not in seen]
    if not names:
        raise ValueError(f"{table.path} has no feature columns besides "
                         + ", ".join(f"{option} {name!r}" for name, option in seen.items()))
    return names


def _load_model(path):
    """The model file at ``path`` as a :class:`_Model`."""
    forest, extra = io.read_model(path)
    if "encoding" in extra:
        encoding = ColumnEncoding.from_dict(extra["encoding"])
        if len(encoding.feature_names) != forest.n_features_in_:
            raise ValueError(f"{path}: its feature encoding gives {len(encoding.feature_names)} "
                             f"columns but the forest has {forest.n_features_in_} features")
        return _Model(forest, encoding, extra)
    return _Model(forest, _python_model_encoding(forest), extra)


def _python_model_encoding(forest):
    """For a model saved from Python: its named (or else all) columns, as numbers."""
    names = getattr(forest, "feature_names_in_", None)
    if names is None:
        return None
    return ColumnEncoding([{"name": str(name), "kind": "numeric"} for name in names])


def accepts_missing(forest):
    """Whether ``forest`` takes NaN in X (its scikit-learn ``allow_nan`` tag)."""
    return bool(forest.__sklearn_tags__().input_tags.allow_nan)


def _model_features(model, table, not_features, na_values=None):
    """The encoded matrix of ``table`` for a model (all columns except
    ``not_features``, the target and id, if the model does not name its columns)."""
    encoding = model.encoding
    if encoding is None:
        names = [name for name in table.columns if name not in not_features]
        if len(names) != model.forest.n_features_in_:
            besides = "the target and the id column" if any(not_features[1:]) else "the target"
            raise ValueError(
                f"the model was saved from Python without column names and takes "
                f"{model.forest.n_features_in_} feature columns; {table.path} has {len(names)} "
                f"(besides {besides}). Give the feature columns only, in training order")
        encoding = ColumnEncoding([{"name": name, "kind": "numeric"} for name in names])
    if na_values is not None:
        encoding = ColumnEncoding(encoding.columns, na_values)
    return encoding.transform(table, allow_missing=accepts_missing(model.forest))


def _by_name(method, X):
    """Call a forest's ``method`` on X with the columns named as the forest's
    ``feature_names_in_`` (a pandas DataFrame when pandas is installed), so
    scikit-learn checks the names instead of warning that X has none."""
    names = getattr(method.__self__, "feature_names_in_", None)
    if names is None:
        return method(X)
    try:
        import pandas
    except ImportError:  # the columns were matched by name when X was encoded
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            return method(X)
    return method(pandas.DataFrame(X, columns=list(names), copy=False))


def _check_known_labels(y, classes, target):
    unknown = np.setdiff1d(y, classes)
    if unknown.size:
        raise ValueError(f"target column {target!r} holds labels the model never saw: "
                         f"{', '.join(map(_shown, unknown[:5].tolist()))} (model classes: "
                         f"{', '.join(map(_shown, np.asarray(classes).tolist()[:10]))})")


def _shown(label):
    """A label for a message: text quoted (at most 40 characters), numbers as they are."""
    return quote(label) if isinstance(label, str) else repr(label)


def _decision_arguments(forest, y_pred):
    """How imbalance_report should label the rows: by the forest's own rule."""
    if forest.decision in ("rfq", "argmax"):
        return {"decision": forest.decision, "priors": forest.class_prior_}
    return {"y_pred": y_pred}  # a threshold


def _decision_text(forest):
    if forest.decision == "rfq":
        return "rfq with the training class priors"
    if forest.decision == "argmax":
        return "argmax"
    return (f"threshold: {forest.classes_[1]!r} when its probability is at least "
            f"{forest.decision:g}")


def _auc_intervals(y, proba, classes):
    """Plain data: the AUC with its 95% DeLong interval (per class against the
    rest for more than two classes)."""
    if len(classes) == 2:
        return {"positive_class": _plain(classes[1]),
                **_interval(y == classes[1], proba[:, 1])}
    per_class = {str(label): _interval(y == label, proba[:, k])
                 for k, label in enumerate(classes) if (y == label).any()}
    return {"multiclass_auc": float(multiclass_auc(y, proba, labels=classes)),
            "per_class": per_class}


def _interval(positive, score):
    if min(positive.sum(), (~positive).sum()) < 2:
        return {"auc": float(auc(positive, score)), "low": None, "high": None}
    result = auc_ci(positive, score)
    return {"auc": float(result.auc), "low": float(result.low), "high": float(result.high)}


def _intervals_text(intervals, classes):
    if "per_class" not in intervals:
        return f"AUC ({intervals['positive_class']!r} positive) " + _interval_text(intervals)
    lines = [f"multiclass AUC (Hand & Till) {intervals['multiclass_auc']:.4f}; each class "
             "against the rest, with 95% DeLong intervals:"]
    width = max(len(str(c)) for c in classes)
    for label, interval in intervals["per_class"].items():
        lines.append(f"  {label:<{width}}  " + _interval_text(interval))
    return "\n".join(lines)


def _interval_text(interval):
    if interval["low"] is None:
        return f"{interval['auc']:.4f} (no interval: a class has one case)"
    return (f"{interval['auc']:.4f}, 95% DeLong interval "
            f"[{interval['low']:.4f}, {interval['high']:.4f}]")


def _plain(value):
    """JSON-ready: numpy arrays and scalars to lists and Python numbers."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _plain_report(report):
    return {name: _plain(getattr(report, name)) for name in report._fields}


def _save_roc_plot(y, proba, y_pred, forest, path):
    """ROC curves, each with the point where the forest's decision rule operates."""
    classes = forest.classes_
    figure = matplotlib_figure()(figsize=(5.5, 5), layout="constrained")
    ax = plot_roc(y, proba, labels=classes, ax=figure.add_subplot())
    curves = ax.get_lines()  # one per class drawn (present classes), then the diagonal
    shown = [classes[1]] if len(classes) == 2 else [c for c in classes if (y == c).any()]
    for label, line in zip(shown, curves):
        tpr, fpr = operating_point(y, y_pred, label)
        ax.plot([fpr], [tpr], marker="o", linestyle="none", color=line.get_color(),
                markeredgecolor="black",
                label=f"decision {_short_decision(forest.decision)}"
                      + (f" ({label})" if len(classes) > 2 else "")
                      + f": TPR {tpr:.2f}, FPR {fpr:.2f}")
    title = ax.get_legend().get_title().get_text() or None  # names the positive class
    ax.legend(loc="lower right", fontsize="small", title=title, title_fontsize="small")
    save_figure(figure, path)


def operating_point(y, y_pred, positive):
    """(true positive rate, false positive rate) of ``y_pred`` for the class
    ``positive`` against the rest."""
    actual, predicted = y == positive, y_pred == positive
    return float(predicted[actual].mean()), float(predicted[~actual].mean())


def _short_decision(decision):
    return decision if isinstance(decision, str) else f"threshold {decision:g}"


def _user_dataset(args):
    if not args.target:
        raise ValueError("compare DATA needs --target COLUMN")
    table = read_table(args.data, sep=args.sep)
    na_values = _markers(args.na_values)
    y = _training_labels(table, args.target, na_values)
    if isinstance(args.class_weight, dict):
        args.class_weight = _class_weight_for(args.class_weight, y)
    allow_missing = accepts_missing(AUCForestClassifier())
    encoding = ColumnEncoding.fit(table, _feature_columns(table, args), args.max_one_hot,
                                  allow_missing=allow_missing, na_values=na_values)
    counts = ", ".join(f"{c} {n}" for c, n in zip(*np.unique(y, return_counts=True)))
    name = os.path.basename(args.data)
    return Dataset(name, encoding.transform(table, allow_missing=allow_missing), y,
                   f"{name}: {len(y)} cases ({counts}); {encoding.summary()}")


def _check_output(path, option, inputs=()):
    """Refuse, before any work, an output path that is a folder, a FIFO, a
    device, lies in a missing or unwritable folder, or is one of the input
    files (also through links). A symbolic link is checked as its target, which
    the write replaces (:func:`aucforest._atomic.output_target`)."""
    if os.path.isdir(path):
        raise ValueError(f"{option} {path} is a folder; give a file name")
    target = output_target(path, f"{option} file")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(2, "No such folder for the output file", path)
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(target)
                                                    and not os.access(target, os.W_OK)):
        raise PermissionError(13, "Permission denied: cannot write the output file", path)
    for source in inputs:
        if _same_file(path, source):
            raise ValueError(f"{option} {path} is the input file {source}; writing it would "
                             "destroy the input. Choose another output file")


def check_plot(path, inputs=()):
    """Refuse, before any work, a --plot path that cannot be written (as
    `_check_output`), matplotlib missing, or an image format it cannot write."""
    _check_output(path, "--plot", inputs=inputs)
    matplotlib_figure()
    figure_format(path)


def _same_file(first, second):
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)  # hard links
    except OSError:  # one of them does not exist
        return False


def _cell_text(value):
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else (str(int(value)) if float(value).is_integer()
                                           else repr(float(value)))
    return str(value)


def _write_csv(header, rows, path):
    """CSV to ``path`` (whole or not at all, :func:`aucforest._atomic.atomic_output`),
    or to stdout when ``path`` is None."""
    if path is None:
        _write_rows(sys.stdout, header, rows)
        return
    with atomic_output(path, "w", what="CSV file", newline="", encoding="utf-8") as stream:
        _write_rows(stream, header, rows)


def _write_rows(stream, header, rows):
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)


def _fit_summary(forest, y, encoding, args):
    classes, counts = np.unique(y, return_counts=True)
    return {"model": args.output, "data": args.data, "target": args.target,
            "n_cases": int(len(y)), "classes": {str(c): int(n) for c, n in zip(classes, counts)},
            "n_estimators": forest.n_estimators, "criterion": forest.criterion,
            "decision": _plain(forest.decision), "decision_text": _decision_text(forest),
            "params": _plain(forest.get_params()), "features": encoding.summary(),
            "feature_names": encoding.feature_names, "id": args.id, "weight": args.weight,
            "dropped": args.drop, "oob_auc": float(forest.oob_score_),
            "oob_gmean": float(forest.oob_gmean_)}


def _print_fit_summary(summary):
    print(f"fitted {summary['n_estimators']} trees (criterion {summary['criterion']}, decision "
          f"{_short_decision(summary['decision'])}) on {summary['n_cases']} cases, classes "
          + ", ".join(f"{label} ({count})" for label, count in summary["classes"].items()))
    print(f"features: {summary['features']} -> {len(summary['feature_names'])} encoded columns")
    if summary["weight"]:
        print(f"case weights from column {summary['weight']!r}")
    print(f"out-of-bag AUC {summary['oob_auc']:.4f}, G-mean {summary['oob_gmean']:.4f}")
    print(f"model saved to {summary['model']}")


def _uses_defaults(args):
    """Whether compare runs on the bundled data with every default option."""
    defaults = build_parser().parse_args(["compare"])
    options = ("folds", "repeats", "n_estimators", "max_features", "max_depth",
               "min_samples_leaf", "class_weight", "balanced_bootstrap", "replacement",
               "nsplit", "predict_min_samples")
    return not args.data and all(getattr(args, name) == getattr(defaults, name)
                                 for name in options)


def _print_compare_header(args, datasets):
    print("AUC splitting vs Gini splitting, each with the RFQ and argmax decisions")
    print(f"{args.folds}-fold stratified cross-validation repeated {args.repeats} times, "
          f"{args.n_estimators} trees per forest, seed {args.seed}; mean ± sd over the "
          f"{args.folds * args.repeats} folds")
    changed = {k: v for k, v in _forest_options(args).items()
               if v != AUCForestClassifier().get_params()[k]}
    if changed:
        print("forest options: " + ", ".join(f"{k}={v!r}" for k, v in changed.items()))
    if _uses_defaults(args):
        print("(defaults sized to finish in about a minute on 2 cores; raise --repeats and "
              "--n-estimators for tighter estimates)")
    if not args.data:
        print("bundled data, imbalance induced by subsampling one class (seed 0):")
    for dataset in datasets:
        print(f"  {dataset.description}")
    print()
