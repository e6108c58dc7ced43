"""``aucforest compare [DATA --target COL]``: AUC vs Gini splitting, each with
the RFQ and argmax decisions, by repeated cross-validation (the runs and the
statistics are :mod:`aucforest.cli._comparison`)."""
import argparse
import json
import os

import numpy as np

from ._comparison import (Dataset, check_fold_sizes, compare, comparison_json, default_datasets,
                        fold_records, format_paired_tests, format_table, paired_tests,
                        plot_comparison)
from .._encoding import ColumnEncoding
from .._forest import AUCForestClassifier
from .._progress import progress
from .._table import read_table
from ._data import (_case_weights, _class_weight_for, _feature_columns, _markers, _training_labels,
                    accepts_missing)
from ._options import (OUTPUT_FILES, _add_classification_option, _add_column_options,
                       _add_data_options, _add_forest_options, _add_parallel_options, _at_least_two,
                       _forest_options, _positive_int)
from ._output import _check_output, _plain, _same_file, _write_csv, check_plot


def add_compare_command(commands, common):
    """Add the ``compare`` subcommand to ``commands`` (argparse subparsers)."""
    compare = commands.add_parser(
        "compare", parents=[common], epilog=OUTPUT_FILES,
        help="AUC vs Gini splitting by cross-validation",
        description="Compare AUC splitting with Gini splitting, each with RFQ and argmax "
                    "decisions, by repeated stratified cross-validation, with paired "
                    "corrected resampled t-tests (Nadeau & Bengio 2003). Without DATA it "
                    "runs on scikit-learn's breast cancer and wine data, made imbalanced.")
    _add_compare_arguments(compare)
    compare.set_defaults(run=run_compare)


def _add_compare_arguments(compare):
    """Arguments of ``aucforest compare`` (besides --quiet and --traceback)."""
    compare.add_argument("data", nargs="?", metavar="DATA",
                         help="CSV (or Parquet) file; default: the bundled data sets")
    compare.add_argument("--target", metavar="COLUMN", help="column of class labels (with DATA)")
    _add_classification_option(compare)
    compare.add_argument("--folds", type=_at_least_two, default=5, metavar="K",
                         help="folds per repeat (default: 5)")
    compare.add_argument("--repeats", type=_positive_int, default=5, metavar="R",
                         help="repeats of the K folds (default: 5)")
    compare.add_argument("--n-estimators", type=_positive_int, default=200, metavar="N",
                         help="trees per forest (default: 200)")
    _add_forest_options(compare)
    compare.add_argument("--weight", metavar="COLUMN",
                         help="column of case weights (non-negative numbers; not a feature), "
                              "passed to every fit and weighing each test fold's AUC; the "
                              "G-mean and balanced accuracy stay unweighted")
    _add_column_options(compare, id_help="column of case identifiers, never a feature")
    _add_data_options(compare)
    compare.add_argument("--plot", metavar="FILE", help="save box plots of the scores")
    compare.add_argument("--folds-csv", metavar="FILE",
                         help="write every fold's scores to a CSV file")
    compare.add_argument("--json", action="store_true", help="print the results as JSON")
    _add_parallel_options(compare)


def run_compare(args):
    """``aucforest compare``: AUC vs Gini forests, RFQ vs argmax, by repeated CV."""
    if args.target and not args.data:
        raise ValueError("--target names a column of DATA; give DATA too")
    if args.weight and not args.data:
        raise ValueError("--weight names a column of DATA; give DATA too")
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
    forest_params = _forest_options(args)
    if args.data:  # its text columns are categorical features
        forest_params["categorical_features"] = args.categorical_mask
    for dataset in datasets:
        with progress(total=args.folds * args.repeats, enabled=not args.quiet,
                      description=f"{dataset.name}: folds") as bar:
            rows += compare(dataset, n_estimators=args.n_estimators, n_splits=args.folds,
                            n_repeats=args.repeats, seed=args.seed, n_jobs=args.n_jobs, bar=bar,
                            forest_params=forest_params)
    tests = paired_tests(rows)
    if args.folds_csv:
        _write_csv(*fold_records(rows, args.folds), args.folds_csv)
    if args.plot:
        plot_comparison(rows, args.plot)
    if args.json:
        print(json.dumps({"folds": args.folds, "repeats": args.repeats,
                          "n_estimators": args.n_estimators, "seed": args.seed,
                          "weight": args.weight,
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


def _user_dataset(args):
    if not args.target:
        raise ValueError("compare DATA needs --target COLUMN")
    table = read_table(args.data, sep=args.sep)
    na_values = _markers(args.na_values)
    y = _training_labels(table, args.target, na_values, args.classification)
    if isinstance(args.class_weight, dict):
        args.class_weight = _class_weight_for(args.class_weight, y)
    weights = _case_weights(table, args.weight) if args.weight else None
    allow_missing = accepts_missing(AUCForestClassifier())
    encoding = ColumnEncoding.from_table(table, _feature_columns(table, args), args.max_one_hot,
                                         allow_missing=allow_missing, na_values=na_values)
    args.categorical_mask = encoding.categorical_mask
    counts = ", ".join(f"{c} {n}" for c, n in zip(*np.unique(y, return_counts=True)))
    name = os.path.basename(args.data)
    weighted = (f"; case weights from column {args.weight!r} (fits and AUC; G-mean and "
                "balanced accuracy unweighted)" if args.weight else "")
    return Dataset(name, encoding.transform(table, allow_missing=allow_missing), y,
                   f"{name}: {len(y)} cases ({counts}); {encoding.summary()}{weighted}",
                   weights)


def _uses_defaults(args):
    """Whether compare runs on the bundled data with every default option."""
    parser = argparse.ArgumentParser(add_help=False)
    _add_compare_arguments(parser)
    defaults = parser.parse_args([])
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
