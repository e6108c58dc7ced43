"""The ``aucforest`` command line: fit, predict, evaluate, compare.

Examples
--------
::

    aucforest fit train.csv --target outcome --output model.npz
    aucforest predict model.npz new.csv --proba --output proba.csv
    aucforest evaluate model.npz test.csv --target outcome --plot roc.png
    aucforest compare                          # bundled data sets, about a minute
    aucforest compare data.csv --target outcome --repeats 10 --plot compare.png

Long work draws a progress bar on stderr (``--quiet`` silences it). Every
error prints one line, ``aucforest: error: ...``, and exits with status 1
(2 for a bad command line); ``--traceback`` shows the full traceback instead,
for bug reports.
"""
import argparse
import csv
import os
import sys
import warnings

import numpy as np

from . import __version__, io
from ._compare import (Dataset, check_fold_sizes, compare, default_datasets, format_table,
                       matplotlib_figure, plot_comparison)
from ._encoding import FeatureEncoding, parse_labels
from ._forest import AUCForestClassifier
from ._progress import progress
from ._table import read_table
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
    message = " ".join(str(error).split())
    if isinstance(error, (ValueError, OSError, ImportError)):
        return message
    return (f"unexpected {type(error).__name__}: {message} "
            "(rerun with --traceback and report it as a bug)")


def _print_warning(message, category, filename, lineno, file=None, line=None):
    print(f"aucforest: warning: {' '.join(str(message).split())}", file=sys.stderr)


# ------------------------------------------------------------------ parser

class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, like every other error."""

    def error(self, message):
        sys.stderr.write(f"aucforest: error: {message} (see '{self.prog} --help')\n")
        sys.exit(EXIT_USAGE)


def build_parser():
    """The argument parser of the ``aucforest`` command."""
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
    _add_fit(commands, common)
    _add_predict(commands, common)
    _add_evaluate(commands, common)
    _add_compare(commands, common)
    return parser


def _add_fit(commands, common):
    fit = commands.add_parser(
        "fit", parents=[common], help="fit a forest on a CSV/Parquet file and save it",
        description="Fit a forest on DATA and save it to a model file. Text columns are "
                    "one-hot encoded (ordinal beyond --max-one-hot levels); the encoding is "
                    "saved with the model. Prints the out-of-bag AUC and G-mean.")
    fit.add_argument("data", metavar="DATA", help="CSV file with a header row (or Parquet)")
    fit.add_argument("--target", required=True, metavar="COLUMN", help="column of class labels")
    fit.add_argument("--output", required=True, metavar="MODEL", help="model file to write (.npz)")
    fit.add_argument("--criterion", choices=("auc", "gini", "entropy"), default="auc",
                     help="split statistic (default: auc)")
    fit.add_argument("--decision", choices=("rfq", "argmax"), default="rfq",
                     help="decision rule of predict (default: rfq)")
    fit.add_argument("--n-estimators", type=_positive_int, default=500, metavar="N",
                     help="number of trees (default: 500)")
    fit.add_argument("--balanced-bootstrap", action="store_true",
                     help="draw the same number of cases from every class for each tree")
    fit.add_argument("--max-one-hot", type=_positive_int, default=10, metavar="LEVELS",
                     help="text columns with more levels are ordinal encoded (default: 10)")
    _add_parallel_options(fit)
    fit.set_defaults(run=run_fit)


def _add_predict(commands, common):
    predict = commands.add_parser(
        "predict", parents=[common], help="predict labels or class probabilities",
        description="Predict the class (or, with --proba, the class probabilities) of each "
                    "row of DATA; writes CSV to stdout or to --output.")
    predict.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit'")
    predict.add_argument("data", metavar="DATA", help="CSV (or Parquet) file to predict")
    predict.add_argument("--proba", action="store_true",
                         help="write class probabilities, one column per class")
    predict.add_argument("--output", metavar="FILE", help="CSV file to write (default: stdout)")
    predict.set_defaults(run=run_predict)


def _add_evaluate(commands, common):
    evaluate = commands.add_parser(
        "evaluate", parents=[common], help="imbalance report, AUC with DeLong interval, ROC plot",
        description="Evaluate a model on labelled data: per-class recall, precision, G-mean, "
                    "balanced accuracy, AUC with its DeLong interval, optionally ROC curves.")
    evaluate.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit'")
    evaluate.add_argument("data", metavar="DATA", help="labelled CSV (or Parquet) file")
    evaluate.add_argument("--target", required=True, metavar="COLUMN",
                          help="column of true class labels")
    evaluate.add_argument("--plot", metavar="FILE", help="save ROC curves (e.g. roc.png)")
    evaluate.set_defaults(run=run_evaluate)


def _add_compare(commands, common):
    compare = commands.add_parser(
        "compare", parents=[common], help="AUC vs Gini splitting by cross-validation",
        description="Compare AUC splitting with Gini splitting, each with RFQ and argmax "
                    "decisions, by repeated stratified cross-validation. Without DATA it "
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
    compare.add_argument("--max-one-hot", type=_positive_int, default=10, metavar="LEVELS",
                         help="text columns with more levels are ordinal encoded (default: 10)")
    compare.add_argument("--plot", metavar="FILE", help="save box plots of the scores")
    _add_parallel_options(compare, default_seed=0)
    compare.set_defaults(run=run_compare)


def _add_parallel_options(parser, default_seed=None):
    parser.add_argument("--n-jobs", type=int, default=-1, metavar="N",
                        help="threads (default: -1, all cores)")
    parser.add_argument("--seed", type=int, default=default_seed, metavar="S",
                        help=f"random seed (default: {default_seed})")


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _at_least_two(text):
    value = int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be at least 2, got {text}")
    return value


# ---------------------------------------------------------------- commands

def run_fit(args):
    """``aucforest fit``: encode, fit with OOB estimates, save, summarise."""
    _check_output_folder(args.output)
    forest = AUCForestClassifier(
        n_estimators=args.n_estimators, criterion=args.criterion, decision=args.decision,
        balanced_bootstrap=args.balanced_bootstrap, oob_score=True, n_jobs=args.n_jobs,
        random_state=args.seed, verbose=0 if args.quiet else 1)
    table = read_table(args.data)
    y = _training_labels(table, args.target)
    allow_missing = accepts_missing(forest)
    encoding = FeatureEncoding.fit(table, _feature_columns(table, args.target), args.max_one_hot,
                                   allow_missing=allow_missing)
    forest.fit(encoding.transform(table, allow_missing=allow_missing), y)
    forest.set_params(verbose=0)
    io.save(forest, args.output, extra={"target": args.target, "encoding": encoding.to_dict()})
    _print_fit_summary(forest, y, encoding, args.output)


def run_predict(args):
    """``aucforest predict``: labels or probabilities as CSV."""
    forest, encoding, target = _load_model(args.model)
    X = _model_features(forest, encoding, read_table(args.data), target)
    if args.proba:
        header, rows = [str(c) for c in forest.classes_], forest.predict_proba(X).tolist()
    else:
        header, rows = [target or "prediction"], [[label] for label in forest.predict(X)]
    _write_csv(header, rows, args.output)


def run_evaluate(args):
    """``aucforest evaluate``: imbalance report, AUC with DeLong interval, ROC plot."""
    if args.plot:
        _check_output_folder(args.plot)
        matplotlib_figure()
    forest, encoding, target = _load_model(args.model)
    table = read_table(args.data)
    y = parse_labels(table.column(args.target), args.target, table.path, like=forest.classes_)
    _check_known_labels(y, forest.classes_, args.target)
    if np.unique(y).size < 2:
        raise ValueError(f"target column {args.target!r} of {table.path} has only one class "
                         f"({y[0].item()!r}); evaluation needs at least two")
    X = _model_features(forest, encoding, table, args.target)
    proba = forest.predict_proba(X)
    report = imbalance_report(y, proba, forest.classes_, **_decision_arguments(forest, X))
    print(f"{args.model} on {args.data}: {len(y)} cases; decision {report.decision}"
          + (" with the training class priors" if report.decision == "rfq" else ""))
    print(report)
    print(_auc_intervals(y, proba, forest.classes_))
    if args.plot:
        _save_roc_plot(y, proba, forest.classes_, args.plot)
        print(f"ROC curves saved to {args.plot}")


def run_compare(args):
    """``aucforest compare``: AUC vs Gini forests, RFQ vs argmax, by repeated CV."""
    if args.target and not args.data:
        raise ValueError("--target names a column of DATA; give DATA too")
    if args.plot:
        _check_output_folder(args.plot)
        matplotlib_figure()
    datasets = [_user_dataset(args)] if args.data else default_datasets()
    for dataset in datasets:
        check_fold_sizes(dataset.y, args.folds)
    _print_compare_header(args, datasets)
    rows = []
    for dataset in datasets:
        with progress(total=args.folds * args.repeats, enabled=not args.quiet,
                      description=f"{dataset.name}: folds") as bar:
            rows += compare(dataset, n_estimators=args.n_estimators, n_splits=args.folds,
                            n_repeats=args.repeats, seed=args.seed, n_jobs=args.n_jobs, bar=bar)
    print(format_table(rows))
    if args.plot:
        plot_comparison(rows, args.plot)
        print(f"plot saved to {args.plot}")


# ----------------------------------------------------------------- helpers

def _training_labels(table, target):
    y = parse_labels(table.column(target), target, table.path)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"target column {target!r} of {table.path} has only one class "
                         f"({classes[0].item()!r}); a classifier needs at least two")
    return y


def _feature_columns(table, target):
    names = [name for name in table.columns if name != target]
    if not names:
        raise ValueError(f"{table.path} has no feature columns besides the target {target!r}")
    return names


def _load_model(path):
    """The forest, its feature encoding and its target name from a model file."""
    forest, extra = io.read_model(path)
    if "encoding" in extra:
        encoding = FeatureEncoding.from_dict(extra["encoding"])
        if len(encoding.feature_names) != forest.n_features_in_:
            raise ValueError(f"{path}: its feature encoding gives {len(encoding.feature_names)} "
                             f"columns but the forest has {forest.n_features_in_} features")
        return forest, encoding, extra.get("target")
    return forest, _python_model_encoding(forest), None


def _python_model_encoding(forest):
    """For a model saved from Python: its named (or else all) columns, as numbers."""
    names = getattr(forest, "feature_names_in_", None)
    if names is None:
        return None
    return FeatureEncoding([{"name": str(name), "kind": "numeric"} for name in names])


def accepts_missing(forest):
    """Whether ``forest`` takes NaN in X (its scikit-learn ``allow_nan`` tag)."""
    return bool(forest.__sklearn_tags__().input_tags.allow_nan)


def _model_features(forest, encoding, table, target):
    """The encoded matrix of ``table`` for a model (all non-target columns if the
    model does not name its columns)."""
    if encoding is None:
        names = [name for name in table.columns if name != target]
        if len(names) != forest.n_features_in_:
            raise ValueError(
                f"the model was saved from Python without column names and takes "
                f"{forest.n_features_in_} feature columns; {table.path} has {len(names)} "
                "(besides the target). Give the feature columns only, in training order")
        encoding = FeatureEncoding([{"name": name, "kind": "numeric"} for name in names])
    missing = [name for name in encoding.input_names if name not in table.columns]
    if missing:
        raise ValueError(f"column {missing[0]!r}, which the model uses, is not in {table.path}")
    return encoding.transform(table, allow_missing=accepts_missing(forest))


def _check_known_labels(y, classes, target):
    unknown = np.setdiff1d(y, classes)
    if unknown.size:
        raise ValueError(f"target column {target!r} holds labels the model never saw: "
                         f"{', '.join(repr(v) for v in unknown[:5].tolist())} (model classes: "
                         f"{', '.join(repr(v) for v in np.asarray(classes).tolist()[:10])})")


def _decision_arguments(forest, X):
    """How imbalance_report should label the rows: by the forest's own rule."""
    if forest.decision in ("rfq", "argmax"):
        return {"decision": forest.decision, "priors": forest.class_prior_}
    return {"y_pred": forest.predict(X)}  # a threshold set from Python


def _auc_intervals(y, proba, classes):
    """Text: the AUC with its 95% DeLong interval (per class against the rest
    for more than two classes)."""
    if len(classes) == 2:
        return "AUC " + _interval_text(y == classes[1], proba[:, 1])
    lines = [f"multiclass AUC (Hand & Till) {multiclass_auc(y, proba, labels=classes):.4f}; "
             "each class against the rest, with 95% DeLong intervals:"]
    width = max(len(str(c)) for c in classes)
    for k, label in enumerate(classes):
        positive = y == label
        if positive.any():
            lines.append(f"  {str(label):<{width}}  " + _interval_text(positive, proba[:, k]))
    return "\n".join(lines)


def _interval_text(positive, score):
    if min(positive.sum(), (~positive).sum()) < 2:
        return f"{auc(positive, score):.4f} (no interval: a class has one case)"
    result = auc_ci(positive, score)
    return f"{result.auc:.4f}, 95% DeLong interval [{result.low:.4f}, {result.high:.4f}]"


def _save_roc_plot(y, proba, classes, path):
    figure = matplotlib_figure()(figsize=(5.5, 5), layout="constrained")
    plot_roc(y, proba, labels=classes, ax=figure.add_subplot())
    figure.savefig(path)


def _user_dataset(args):
    if not args.target:
        raise ValueError("compare DATA needs --target COLUMN")
    table = read_table(args.data)
    y = _training_labels(table, args.target)
    allow_missing = accepts_missing(AUCForestClassifier())
    encoding = FeatureEncoding.fit(table, _feature_columns(table, args.target), args.max_one_hot,
                                   allow_missing=allow_missing)
    counts = ", ".join(f"{c} {n}" for c, n in zip(*np.unique(y, return_counts=True)))
    name = os.path.basename(args.data)
    return Dataset(name, encoding.transform(table, allow_missing=allow_missing), y,
                   f"{name}: {len(y)} cases ({counts}); {encoding.summary()}")


def _check_output_folder(path):
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(2, "No such folder for the output file", path)


def _write_csv(header, rows, path):
    if path is None:
        _write_rows(sys.stdout, header, rows)
        return
    _check_output_folder(path)
    with open(path, "w", newline="", encoding="utf-8") as stream:
        _write_rows(stream, header, rows)


def _write_rows(stream, header, rows):
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)


def _print_fit_summary(forest, y, encoding, output):
    classes, counts = np.unique(y, return_counts=True)
    print(f"fitted {forest.n_estimators} trees (criterion {forest.criterion}, decision "
          f"{forest.decision}) on {len(y)} cases, classes "
          + ", ".join(f"{label} ({count})" for label, count in zip(classes, counts)))
    print(f"features: {encoding.summary()} -> {forest.n_features_in_} encoded columns")
    print(f"out-of-bag AUC {forest.oob_score_:.4f}, G-mean {forest.oob_gmean_:.4f}")
    print(f"model saved to {output}")


def _print_compare_header(args, datasets):
    print("AUC splitting vs Gini splitting, each with the RFQ and argmax decisions")
    print(f"{args.folds}-fold stratified cross-validation repeated {args.repeats} times, "
          f"{args.n_estimators} trees per forest, seed {args.seed}; mean ± sd over the "
          f"{args.folds * args.repeats} folds")
    if not args.data:
        print("(defaults sized to finish in about a minute on 2 cores; raise --repeats and "
              "--n-estimators for tighter estimates)")
        print("bundled data, imbalance induced by subsampling one class (seed 0):")
    for dataset in datasets:
        print(f"  {dataset.description}")
    print()
