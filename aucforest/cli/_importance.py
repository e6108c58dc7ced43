"""``aucforest importance MODEL DATA --target COL``: out-of-bag permutation importance.

Out-of-bag quantities are defined on the training data, so DATA must be the
file the model was fitted on (same rows, same order). Registered in
:mod:`aucforest.cli` (``SUBCOMMANDS``); the model and data readers are the
ones ``evaluate`` uses (:mod:`aucforest.cli._data`).
"""
import numpy as np

from .._atomic import save_figure
from ..inspection import importance_intervals, oob_importance, plot_importance
from .._sampling import CaseDraws
from ._data import _case_weights, _model_features, model_and_labelled_data, named
from ._options import (DEFAULT_SEED, OUTPUT_FILES, _add_classification_option, _add_data_options,
                       _positive_int)
from ._output import check_plot

HELP = "out-of-bag permutation importance of each feature (needs the training data)"
DESCRIPTION = (
    "Permutation variable importance on the out-of-bag cases (randomForestSRC's VIMP): "
    "the drop of the forest's OOB score when a feature is permuted among each tree's "
    "out-of-bag cases. DATA must be the file the model was fitted on. One row per column "
    "of DATA: the encoded columns of a column (one per level when one-hot) are permuted "
    "together. With --intervals B, "
    "standard errors, 95% intervals and p-values for VIMP > 0 by B subsamples "
    "(Ishwaran & Lu 2019; refits the forest B times).")
SCORINGS = ("auc", "gmean", "brier", "balanced_accuracy")


def add_importance_command(commands, common):
    """Add the ``importance`` subcommand to ``commands`` (argparse subparsers)."""
    parser = commands.add_parser("importance", parents=[common], help=HELP,
                                 description=DESCRIPTION, epilog=OUTPUT_FILES)
    add_importance_arguments(parser)
    _add_data_options(parser, model_default=True)
    parser.set_defaults(run=run_importance)


def add_importance_arguments(parser):
    """Arguments of ``aucforest importance`` (besides --sep and --na-values)."""
    parser.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit'")
    parser.add_argument("data", metavar="DATA", help="the training CSV (or Parquet) file")
    parser.add_argument("--target", required=True, metavar="COLUMN",
                        help="column of class labels")
    _add_classification_option(parser)
    parser.add_argument("--scoring", choices=SCORINGS, default="auc",
                        help="score whose drop measures importance (default: auc)")
    parser.add_argument("--repeats", type=_positive_int, default=5, metavar="R",
                        help="permutations per feature (default: 5)")
    parser.add_argument("--intervals", type=_positive_int, default=None, metavar="B",
                        help="add subsampling standard errors and 95%% intervals from B refits")
    parser.add_argument("--plot", metavar="FILE", help="save a bar plot (e.g. vimp.png)")
    parser.add_argument("--n-jobs", type=int, default=-1, metavar="N",
                        help="threads (default: -1, all cores)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="S",
                        help=f"random seed of the permutations and subsamples (default: "
                             f"{DEFAULT_SEED}, fixed so that the same command gives the same "
                             "importances)")


def run_importance(args):
    """``aucforest importance``: print the VIMP table (and save a plot)."""
    if args.plot:
        check_plot(args.plot, inputs=[args.model, args.data])
    model, table, y = model_and_labelled_data(args)
    if args.intervals and model.extra.get("weight"):
        raise ValueError(f"--intervals refits the forest on subsamples without case weights; "
                         f"the model was fitted with --weight {model.extra['weight']!r}, so its "
                         "intervals would describe another forest: leave out --intervals")
    forest = model.forest
    X = named(forest, _model_features(model, table, [args.target], args.na_values))
    forest.set_params(n_jobs=args.n_jobs)
    _restore_case_draws(forest, model, table, y)
    groups = _column_groups(model.encoding, table, args.target)
    names = list(groups)
    result = oob_importance(forest, X, y, scoring=args.scoring, n_repeats=args.repeats,
                            random_state=args.seed, n_jobs=args.n_jobs, groups=groups)
    intervals = None
    if args.intervals:
        intervals = importance_intervals(forest, X, y, n_subsamples=args.intervals,
                                         scoring=args.scoring, n_repeats=args.repeats,
                                         random_state=args.seed,
                                         groups=groups)  # same importances as above
    print(f"{args.model} on {args.data}: {len(y)} cases, {len(forest.estimators_)} trees; "
          f"OOB {args.scoring} {result.score:.4f}; importance = drop of the OOB "
          f"{args.scoring} when the feature is permuted ({args.repeats} permutations"
          + (f", {args.intervals} subsamples" if intervals else "") + ")")
    print(format_table(names, result, intervals, forest.classes_))
    if args.plot:
        ax = plot_importance(intervals if intervals else result, names, max_features=30)
        save_figure(ax.figure, args.plot)  # whole or not at all
        print(f"plot saved to {args.plot}")


def _restore_case_draws(forest, model, table, y):
    """Give a forest read from a model file the case draws of its fit.

    A model file keeps no draws: `aucforest.inspection` rebuilds them from y,
    as if every case weight were positive. Under the balanced bootstrap a
    case of zero weight is never drawn, so a model fitted with ``--weight``
    gets its draws rebuilt here from the weight column of DATA (the fit's
    ``_case_draws``), and the out-of-bag rows are the fit's.
    """
    column = model.extra.get("weight")
    if column is None:
        return
    if column not in table.columns:
        raise ValueError(f"the model was fitted with --weight {column!r}, which {table.path} "
                         "lacks; out-of-bag importance needs the training data with its case "
                         "weights")
    weights = _case_weights(table, column)
    forest._set_fit_provenance(
        case_draws=CaseDraws(forest, np.searchsorted(forest.classes_, y), weights))


def format_table(names, result, intervals, classes):
    """One row per column, most important first."""
    columns = ["importance", "sd"]
    values = [result.importances_mean, result.importances_std]
    if intervals is not None:
        columns += ["se", "lower 95%", "upper 95%", "p-value"]
        values += [intervals.se, intervals.lower, intervals.upper, intervals.pvalue]
    if len(classes) > 2:  # with two classes both one-vs-rest AUCs equal the AUC
        columns += [f"AUC drop {label}" for label in classes]
        values += list(result.per_class.T)
    width = max(12, max(len(name) for name in names))
    lines = [f"{'feature':<{width}}" + "".join(f"{c:>{max(11, len(c) + 2)}}" for c in columns)]
    for j in np.argsort(-result.importances_mean, kind="stable"):
        lines.append(f"{names[j]:<{width}}" + "".join(
            f"{v[j]:>{max(11, len(c) + 2)}.4f}" for c, v in zip(columns, values)))
    return "\n".join(lines)


def _column_groups(encoding, table, target):
    """``{column of DATA: its encoded columns}``, the groups permuted together."""
    if encoding is not None:
        return encoding.feature_groups
    names = [name for name in table.columns if name != target]
    return {name: [j] for j, name in enumerate(names)}
