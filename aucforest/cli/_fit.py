"""``aucforest fit DATA --target COL --output MODEL``: encode, fit with
out-of-bag estimates, save the model with its encoding, summarise (with a cost
matrix as decision, the out-of-bag expected cost of its labels beside RFQ's
and argmax's)."""
import json

import numpy as np

from .._decision_rule import DEFAULT_DECISION, DecisionRule
from .._encoding import ColumnEncoding
from .._forest import AUCForestClassifier
from .._table import read_table
from ..io import save
from ._decision_report import cost_text, decision_costs
from ._data import (_case_weights, _class_weight_for, _feature_columns, _markers, _training_labels,
                    accepts_missing, name_features)
from ._from_oob import (CALIBRATION_METHODS, calibration_choices, fitted_calibration,
                         stored_calibration)
from ._options import (OUTPUT_FILES, _add_classification_option, _add_column_options,
                       _add_data_options, _add_forest_options, _add_parallel_options, _decision,
                       _forest_options, _positive_int, CostMatrixFile, read_cost_matrix)
from ._output import _check_output, _decision_text, _plain


def add_fit_command(commands, common):
    """Add the ``fit`` subcommand to ``commands`` (argparse subparsers)."""
    fit = commands.add_parser(
        "fit", parents=[common], epilog=OUTPUT_FILES,
        help="fit a forest on a CSV/Parquet file and save it",
        description="Fit a forest on DATA and save it to a model file. Every column except "
                    "the target, --id, --weight and --drop columns is a feature, except that a "
                    "column that looks like an identifier is left out with a warning (see "
                    "--keep). Text columns are categorical features: the trees split their "
                    "levels natively (grouped by class composition, not alphabetical order); "
                    "the levels are saved with the model, and 'predict' maps them by value "
                    "(a level not seen here is a missing value, with a warning). Prints the "
                    "out-of-bag AUC and G-mean, and with a cost matrix as --decision the "
                    "out-of-bag expected cost per case of its labels, overall and per true "
                    "class, beside the cost of RFQ's and argmax's labels.")
    fit.add_argument("data", metavar="DATA", help="CSV file with a header row (or Parquet)")
    fit.add_argument("--target", required=True, metavar="COLUMN", help="column of class labels")
    _add_classification_option(fit)
    fit.add_argument("--output", required=True, metavar="MODEL",
                     help="model file to write (.npz); replaced only once complete, a "
                          "symbolic link written through to its target")
    fit.add_argument("--criterion", choices=("auc", "auc_ecp", "gini", "entropy"), default="auc",
                     help="split statistic (default: auc)")
    fit.add_argument("--decision", type=_decision, default=DEFAULT_DECISION, metavar="RULE",
                     help="decision rule of predict: rfq, argmax, a threshold T in (0, 1) "
                          "on the probability of the second class (two classes), or a CSV "
                          "file of costs: a header 'true' then the class labels, one row per "
                          "true class (its label, then the cost of predicting each header "
                          "class); predict takes the class of least expected cost "
                          "(default: rfq)")
    fit.add_argument("--calibrate", choices=CALIBRATION_METHODS, metavar="METHOD",
                     help="calibrate the probabilities on the out-of-bag predictions (no "
                          f"refit): {calibration_choices()}; 'predict' then "
                          "writes calibrated probabilities and applies the decision rule to "
                          "them, as aucforest.calibration.OOBCalibratedClassifier does. The "
                          "model file stores the fitted map (fitted with the --weight case "
                          "weights, if any), which 'predict' and 'evaluate' apply as it is")
    fit.add_argument("--n-estimators", type=_positive_int, default=300, metavar="N",
                     help="number of trees (default: 300)")
    _add_forest_options(fit)
    fit.add_argument("--weight", metavar="COLUMN",
                     help="column of case weights (non-negative numbers; not a feature)")
    _add_column_options(fit, id_help="column of case identifiers, never a feature; "
                                     "'predict' copies it to its output")
    _add_data_options(fit)
    fit.add_argument("--json", action="store_true", help="print the summary as JSON")
    _add_parallel_options(fit)
    fit.set_defaults(run=run_fit)


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
    y = _training_labels(table, args.target, na_values, args.classification)
    n_classes = np.unique(y).size
    if isinstance(args.decision, CostMatrixFile):
        forest.set_params(decision=read_cost_matrix(args.decision, np.unique(y)))
    else:  # the CLI's message for a threshold with more than two classes
        try:
            DecisionRule.parse(args.decision, n_classes)
        except ValueError:
            raise ValueError(f"--decision {args.decision:g} is a threshold on the probability "
                             "of the second class and needs two classes; the target has "
                             f"{n_classes}") from None
    if isinstance(args.class_weight, dict):
        forest.set_params(class_weight=_class_weight_for(args.class_weight, y))
    weights = _case_weights(table, args.weight) if args.weight else None
    allow_missing = accepts_missing(forest)
    encoding = ColumnEncoding.from_table(table, _feature_columns(table, args), args.max_one_hot,
                                         allow_missing=allow_missing, na_values=na_values)
    forest.set_params(categorical_features=encoding.categorical_mask)
    forest.fit(encoding.transform(table, allow_missing=allow_missing), y, sample_weight=weights)
    name_features(forest, encoding)
    extra = {"target": args.target, "encoding": encoding.to_dict()}
    extra.update({key: getattr(args, key) for key in ("id", "weight", "calibrate")
                  if getattr(args, key)})
    if args.calibrate:  # fails here, before the file is written, if it cannot be fitted
        extra["calibration"] = stored_calibration(fitted_calibration(forest, args.calibrate,
                                                                     y, weights))
    save(forest, args.output, extra=extra)
    summary = _fit_summary(forest, y, encoding, args)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_fit_summary(summary)


def _fit_summary(forest, y, encoding, args):
    classes, counts = np.unique(y, return_counts=True)
    return {"model": args.output, "data": args.data, "target": args.target,
            "n_cases": int(len(y)), "classes": {str(c): int(n) for c, n in zip(classes, counts)},
            "n_estimators": forest.n_estimators, "criterion": forest.criterion,
            "decision": _plain(forest.decision), "decision_text": _decision_text(forest),
            "params": _plain(forest.get_params()), "features": encoding.summary(),
            "feature_names": encoding.feature_names, "id": args.id, "weight": args.weight,
            "dropped": args.drop, "left_out": args.left_out, "seed": args.seed,
            "calibrate": args.calibrate, "oob_auc": float(forest.oob_score_),
            "oob_gmean": float(forest.oob_gmean_), "oob_expected_cost": _oob_costs(forest)}


def _oob_costs(forest):
    """`decision_costs` of a cost-matrix rule on the out-of-bag predictions of the
    forest just fitted (the cases that have one), as ``oob_gmean_`` decides
    them; None for another rule."""
    rule = forest.decision_rule_
    if rule.kind != "cost":
        return None
    proba = forest.oob_decision_function_
    has_oob = ~np.isnan(proba).any(axis=1)
    proba, truth = proba[has_oob], np.asarray(forest.oob_labels_, dtype=np.intp)[has_oob]
    prior, draw_weights = forest.class_prior_, forest.draw_class_weights_
    return decision_costs(truth, proba, rule.costs, rule.apply(proba, prior, draw_weights),
                          forest.classes_, prior, draw_weights)


def _print_fit_summary(summary):
    rule = DecisionRule.from_plain(summary["decision"], len(summary["classes"]))
    print(f"fitted {summary['n_estimators']} trees (criterion {summary['criterion']}, decision "
          f"{rule.short}) on {summary['n_cases']} cases, classes "
          + ", ".join(f"{label} ({count})" for label, count in summary["classes"].items()))
    print(f"features: {summary['features']} -> {len(summary['feature_names'])} encoded columns")
    if summary["weight"]:
        print(f"case weights from column {summary['weight']!r}")
    print(f"seed {summary['seed']} (--seed): the same command on the same data gives the same "
          "model")
    print(f"out-of-bag AUC {summary['oob_auc']:.4f}, G-mean {summary['oob_gmean']:.4f}")
    if summary["oob_expected_cost"]:
        where = "out of bag" + (" (before calibration)" if summary["calibrate"] else "")
        print(cost_text(summary["oob_expected_cost"], rule, where))
    if summary["calibrate"]:
        print(f"probabilities calibrated ({summary['calibrate']}) on the out-of-bag "
              "predictions; 'predict' applies the map")
    print(f"model saved to {summary['model']}")
