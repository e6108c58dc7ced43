"""``aucforest tune MODEL --output TUNED``: choose the decision rule on the
model file's out-of-bag predictions with `aucforest.decisions.tune_decision`
(no refit, no data file), print it with its bootstrap interval, and write the
same model with that rule (whole or not at all, MODEL itself only when
``--output`` names it)."""
import json

import numpy as np
from sklearn.metrics import balanced_accuracy_score, f1_score

from .._oob_source import fitted_on_dask
from ..decisions import METRICS, expected_cost, tune_decision
from ..io import save
from ..metrics import gmean_score
from ._data import _load_model
from ._options import (DEFAULT_SEED, OUTPUT_FILES, _add_costs_option, _confidence_level,
                       _positive_int, _seed, read_cost_matrix)
from ._output import _check_output, _plain

#: How the texts name each metric of `tune_decision`.
METRIC_NAMES = {"gmean": "G-mean", "balanced_accuracy": "balanced accuracy", "f1": "F1",
                "expected_cost": "expected cost"}


def add_tune_command(commands, common):
    """Add the ``tune`` subcommand to ``commands`` (argparse subparsers)."""
    tune = commands.add_parser(
        "tune", parents=[common], epilog=OUTPUT_FILES,
        help="choose the decision rule on the out-of-bag predictions",
        description="Choose the decision rule of a model on the out-of-bag predictions its "
                    "file holds, without a refit and without data (as "
                    "aucforest.decisions.tune_decision does in Python): for two classes a "
                    "threshold on the probability of the second class, for more a cost "
                    "matrix on the RFQ scale (class weights). Prints the chosen rule, its "
                    "out-of-bag score (optimistic: the best of many candidates) beside the "
                    "model's current rule, and a bootstrap interval of the score the tuning "
                    "reaches on cases it did not see; writes the same model with the chosen "
                    "rule to --output.")
    tune.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit'")
    tune.add_argument("--output", required=True, metavar="TUNED",
                      help="model file to write (.npz), replaced only once complete; may be "
                           "MODEL itself, replaced then in one step")
    tune.add_argument("--metric", choices=METRICS, default="gmean",
                      help="what the rule is chosen for: gmean, balanced_accuracy or f1 "
                           "(maximised), or expected_cost under a cost matrix (minimised; "
                           "--costs, or the model's own when its decision is a cost matrix) "
                           "(default: gmean)")
    _add_costs_option(tune, "the cost matrix of --metric expected_cost")
    tune.add_argument("--n-bootstrap", type=_positive_int, default=1000, metavar="N",
                      help="bootstrap replicates of the interval (default: 1000)")
    tune.add_argument("--confidence-level", type=_confidence_level, default=0.95,
                      metavar="LEVEL", help="coverage the interval aims at (default: 0.95)")
    tune.add_argument("--seed", type=_seed, default=DEFAULT_SEED, metavar="S",
                      help=f"seed of the bootstrap draws (default: {DEFAULT_SEED}, fixed so that "
                           "the same command gives the same interval)")
    tune.add_argument("--json", action="store_true", help="print the result as JSON")
    tune.set_defaults(run=run_tune)


def run_tune(args):
    """``aucforest tune``: tune the rule on the OOB predictions, report, save."""
    _check_output(args.output, "--output", inputs=[args.costs] if args.costs else [])
    model = _load_model(args.model)
    forest = model.forest
    _check_tunable(model, args.model)
    costs = _tuning_costs(args, forest)
    previous = forest.decision_rule_
    tuned = tune_decision(forest, args.metric, cost_matrix=costs, n_bootstrap=args.n_bootstrap,
                          confidence_level=args.confidence_level, random_state=args.seed)
    previous_score = _score_of_rule(forest, previous, args.metric, costs)
    low, high = tuned.confidence_interval
    result = {"model": args.model, "output": args.output, "metric": args.metric,
              "decision": _plain(tuned.decision), "score": tuned.score,
              "confidence_interval": [low, high], "confidence_level": args.confidence_level,
              "n_bootstrap": args.n_bootstrap, "seed": args.seed,
              "n_candidates": len(tuned.candidates), "n_cases": _n_oob_cases(forest),
              "costs": None if costs is None else np.asarray(costs).tolist(),
              "previous": {"decision": previous.to_plain(), "score": previous_score}}
    forest.set_params(decision=tuned.decision)
    result["decision_text"] = forest.decision_rule_.describe(forest.classes_)
    save(forest, args.output, extra={**model.extra, "tuned": _plain(
        {key: result[key] for key in ("metric", "score", "confidence_interval",
                                      "confidence_level", "n_bootstrap", "seed", "costs",
                                      "previous")})})
    if args.json:
        print(json.dumps(_plain(result), indent=2))
    else:
        _print_tuning(result, forest.decision_rule_, previous, forest.classes_)


def _check_tunable(model, path):
    """Refuse a model whose rule applies to calibrated probabilities, or that
    keeps no out-of-bag predictions and training labels."""
    method = model.extra.get("calibrate")
    if method:
        raise ValueError(f"{path} was fitted with --calibrate {method}: its decision rule "
                         "applies to the calibrated probabilities, while tune chooses a rule on "
                         "the forest's out-of-bag probabilities before calibration. Tune a "
                         "model fitted without --calibrate")
    forest = model.forest
    if fitted_on_dask(forest):
        raise ValueError(f"tune needs the out-of-bag predictions of every training row; {path} "
                         "holds a forest fitted on dask collections, which keeps none (and a "
                         "model file keeps no draws to compute them again): in Python, call "
                         "aucforest.decisions.tune_decision(forest, X=..., y=...) on the dask "
                         "collections")
    if getattr(forest, "oob_decision_function_", None) is None \
            or getattr(forest, "oob_labels_", None) is None:
        raise ValueError(f"tune needs the out-of-bag predictions and training labels of the "
                         f"model; {path} has none (saved from Python without oob_score=True, or "
                         "by an older version): refit it with 'aucforest fit'")


def _tuning_costs(args, forest):
    """The cost matrix of ``--metric expected_cost``: ``--costs`` or the model's own."""
    if args.metric != "expected_cost":
        if args.costs:
            raise ValueError(f"--costs is the cost matrix of --metric expected_cost; with "
                             f"--metric {args.metric} it would not be used")
        return None
    if args.costs:
        return np.asarray(read_cost_matrix(args.costs, forest.classes_, "--costs"))
    rule = forest.decision_rule_
    if rule.kind != "cost":
        raise ValueError(f"--metric expected_cost needs a cost matrix: give --costs FILE (the "
                         f"model's decision is {rule.short}, not a cost matrix)")
    return rule.costs


def _oob_rows(forest):
    """(out-of-bag probabilities, class indices) of the cases that have one."""
    proba = np.asarray(forest.oob_decision_function_, dtype=np.float64)
    has_oob = ~np.isnan(proba).any(axis=1)
    return proba[has_oob], np.asarray(forest.oob_labels_, dtype=np.intp)[has_oob]


def _n_oob_cases(forest):
    return int(_oob_rows(forest)[1].size)


def _score_of_rule(forest, rule, metric, costs):
    """``metric`` of the labels ``rule`` gives on the out-of-bag cases, as
    `tune_decision` scores its candidates (NaN when it has no value)."""
    proba, truth = _oob_rows(forest)
    predicted = rule.apply(proba, forest.class_prior_,
                           getattr(forest, "draw_class_weights_", None))
    if metric == "gmean":
        return gmean_score(truth, predicted)
    if metric == "balanced_accuracy":
        return float(balanced_accuracy_score(truth, predicted))
    if metric == "f1":
        if len(forest.classes_) == 2:
            return float(f1_score(truth, predicted, pos_label=1, zero_division=0))
        return float(f1_score(truth, predicted, average="macro", zero_division=0))
    return expected_cost(truth, predicted, costs, labels=np.arange(len(forest.classes_)))


def _print_tuning(result, rule, previous, classes):
    name = METRIC_NAMES[result["metric"]]
    best = "lowest" if result["metric"] == "expected_cost" else "best"
    print(f"tuned the decision of {result['model']} for the {name} on its out-of-bag "
          f"predictions ({result['n_cases']} cases)")
    print(f"chosen rule: {rule.describe(classes)}")
    if rule.kind == "cost":
        print(_matrix_text(rule.costs, classes))
    print(f"out-of-bag {name} {result['score']:.4f} (the {best} of {result['n_candidates']} "
          f"candidates on the cases that chose it: optimistic); the model's rule "
          f"({previous.short}) has {result['previous']['score']:.4f} on the same cases")
    low, high = result["confidence_interval"]
    level = f"{100 * result['confidence_level']:g}%"
    print(f"{level} bootstrap interval of the {name} the tuning reaches on cases it did not "
          f"see: [{low:.4f}, {high:.4f}] ({result['n_bootstrap']} replicates, seed "
          f"{result['seed']})")
    print(f"tuned model saved to {result['output']}")


def _matrix_text(costs, classes):
    """The cost matrix as a table, rows the true class, columns the predicted."""
    labels = [str(label) for label in classes]
    width = max(9, *(len(label) for label in labels)) + 2
    lines = ["true \\ predicted".rjust(width + 8) + "".join(label.rjust(width)
                                                            for label in labels)]
    for label, row in zip(labels, costs):
        lines.append(label.rjust(width + 8) + "".join(f"{value:.4g}".rjust(width)
                                                      for value in row))
    return "\n".join(lines)
