"""``aucforest evaluate MODEL DATA --target COL``: imbalance report, AUC with
its DeLong interval, ROC curves with the operating point of the model's
decision rule; the expected cost of a cost-matrix decision beside RFQ's and
argmax's, the calibration of a calibrated model, the coverage of conformal
sets (`aucforest.cli._decision_report`)."""
import json

import numpy as np

from .._atomic import save_figure
from ._comparison import matplotlib_figure
from .._table import shown
from ..metrics import auc, auc_ci, imbalance_report, multiclass_auc, plot_reliability, plot_roc
from ..metrics._plot import plot_coverage
from ._data import _by_name, _model_features, model_and_labelled_data
from ._decision_report import (ALPHA_GRID, CALIBRATION_BINS, calibration_scores, calibration_text,
                               class_codes, cost_text, decision_costs, set_report, set_text)
from ._from_oob import calibrated_model, conformal_predictor
from ._options import (OUTPUT_FILES, _add_classification_option, _add_costs_option,
                       _add_data_options, _alpha, read_cost_matrix)
from ._output import _decision_text, _plain, check_plot


def add_evaluate_command(commands, common):
    """Add the ``evaluate`` subcommand to ``commands`` (argparse subparsers)."""
    evaluate = commands.add_parser(
        "evaluate", parents=[common], epilog=OUTPUT_FILES,
        help="imbalance report, AUC with DeLong interval, costs, calibration, sets, plots",
        description="Evaluate a model on labelled data: per-class recall, precision, G-mean, "
                    "balanced accuracy, AUC with its DeLong interval, optionally ROC curves "
                    "with the operating point of the model's decision rule. A model whose "
                    "decision is a cost matrix (or any model, with --costs) gets the expected "
                    "cost per case of its labels, overall and per true class, beside the cost "
                    "of the labels RFQ and argmax give on the same probabilities. A model "
                    "fitted with --calibrate is evaluated on its calibrated probabilities, with "
                    "its decision rule applied to them (as 'predict' gives them), and gets "
                    "their Brier score, log loss and expected calibration error beside the "
                    "forest's before calibration.")
    evaluate.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit'")
    evaluate.add_argument("data", metavar="DATA", help="labelled CSV (or Parquet) file")
    evaluate.add_argument("--target", required=True, metavar="COLUMN",
                          help="column of true class labels")
    _add_classification_option(evaluate)
    _add_costs_option(evaluate, "report the expected cost under this cost matrix (default: "
                                "the model's own, when its decision is a cost matrix)")
    evaluate.add_argument("--sets", type=_alpha, metavar="ALPHA",
                          help="report the Mondrian conformal prediction sets at level ALPHA "
                               "(those of 'predict --sets'): each class's coverage (the share "
                               "of its cases whose set holds their label) and the mean set "
                               "size, per class and overall")
    evaluate.add_argument("--plot", metavar="FILE",
                          help="save ROC curves (e.g. roc.png; the format follows the "
                               "extension, PNG without one); beside them, for a model fitted "
                               "with --calibrate its reliability diagram (before and after "
                               "calibration), and with --sets the coverage of each class "
                               "against alpha (0.01 to 0.5) with the line 1 - alpha")
    _add_data_options(evaluate, model_default=True)
    evaluate.add_argument("--json", action="store_true", help="print the results as JSON")
    evaluate.set_defaults(run=run_evaluate)


def run_evaluate(args):
    """``aucforest evaluate``: imbalance report, AUC with DeLong interval, expected
    cost, calibration, conformal sets, plots."""
    if args.plot:
        check_plot(args.plot, inputs=[args.model, args.data])
    model, table, y = model_and_labelled_data(args)
    forest = model.forest
    classes = forest.classes_
    if np.unique(y).size < 2:
        raise ValueError(f"target column {args.target!r} of {table.path} has only one class "
                         f"({shown(y[:1].tolist()[0])}); evaluation needs at least two")
    costs = _cost_matrix(args, forest)
    conformal = conformal_predictor(forest, args.model) if args.sets is not None else None
    X = _model_features(model, table, [args.target], args.na_values)
    method = model.extra.get("calibrate")
    scored = _predictions(forest, X, method, args.model, model.extra.get("calibration"))
    proba, y_pred = scored["proba"], scored["y_pred"]
    rule = forest.decision_rule_
    report = imbalance_report(y, proba, classes,
                              **_decision_arguments(forest, y_pred, scored["priors"]))
    report = report._replace(decision=rule.parameter)  # not "given" for the model's own labels
    truth = class_codes(y, classes)
    found = {"report": report, "auc_intervals": _auc_intervals(y, proba, classes),
             "expected_cost": None, "calibration": None, "sets": None}
    if costs is not None:
        found["expected_cost"] = {"costs_from": args.costs or "model", **decision_costs(
            truth, proba, costs, class_codes(y_pred, classes), classes, scored["priors"],
            scored["draw_weights"])}
    if method:
        found["calibration"] = {"method": method, "n_bins": CALIBRATION_BINS,
                                "calibrated": calibration_scores(y, proba, classes),
                                "uncalibrated": calibration_scores(y, scored["raw_proba"],
                                                                   classes)}
    if conformal is not None:
        p_values = _by_name(conformal.p_values, X, forest)
        found["sets"] = set_report(truth, p_values, args.sets, classes)
    if args.plot:
        _save_plot(args.plot, y, proba, y_pred, forest,
                   scored["raw_proba"] if method else None, method, found["sets"])
    if args.json:
        print(json.dumps({"model": args.model, "data": args.data, "n_cases": len(y),
                          "decision": _plain(forest.decision), "calibrate": method,
                          "report": _plain_report(report),
                          **{key: _plain(value) for key, value in found.items()
                             if key != "report"},
                          "plot": args.plot}, indent=2))
    else:
        _print_evaluation(args, forest, method, len(y), found)


def _predictions(forest, X, method, path, stored_calibration):
    """What the model predicts for X (``proba``, ``y_pred``: as 'predict' gives
    them), the forest's probabilities before any calibration (``raw_proba``),
    and the ``priors`` and ``draw_weights`` its rule decides with."""
    raw_proba = _by_name(forest.predict_proba, X)
    if not method:
        return {"proba": raw_proba, "raw_proba": raw_proba, "y_pred": _by_name(forest.predict, X),
                "priors": forest.class_prior_,
                "draw_weights": getattr(forest, "draw_class_weights_", None)}
    calibrated = calibrated_model(forest, method, path, stored_calibration)
    # calibrated probabilities are under the training priors: RFQ compares them with these
    return {"proba": _by_name(calibrated.predict_proba, X, forest), "raw_proba": raw_proba,
            "y_pred": _by_name(calibrated.predict, X, forest),
            "priors": calibrated.class_prior_, "draw_weights": None}


def _print_evaluation(args, forest, method, n_cases, found):
    rule = forest.decision_rule_
    print(f"{args.model} on {args.data}: {n_cases} cases; decision {_decision_text(forest)}"
          + (f"; probabilities calibrated ({method})" if method else ""))
    print(found["report"]._replace(decision=rule.short))
    print(_intervals_text(found["auc_intervals"], forest.classes_))
    if found["expected_cost"] is not None:
        matrix = f"the cost matrix of {args.costs}" if args.costs else "the cost matrix"
        print(cost_text(found["expected_cost"], rule, "on these cases", matrix))
    if found["calibration"] is not None:
        print(calibration_text(found["calibration"]))
    if found["sets"] is not None:
        print(set_text(found["sets"]))
    if args.plot:
        print(f"{_plot_contents(method, found['sets'])} saved to {args.plot}")


def _cost_matrix(args, forest):
    """The matrix of ``--costs``, else the model's own if its rule is a cost
    matrix, else None."""
    if args.costs:
        return np.asarray(read_cost_matrix(args.costs, forest.classes_, "--costs"))
    rule = forest.decision_rule_
    return rule.costs if rule.kind == "cost" else None


def _decision_arguments(forest, y_pred, priors):
    """How imbalance_report should label the rows: by the forest's own rule."""
    rule = forest.decision_rule_
    if rule.kind in ("rfq", "argmax"):
        return {"decision": rule, "priors": priors}
    return {"y_pred": y_pred}  # a threshold or a cost matrix: the model's own labels


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


def _plain_report(report):
    return {name: _plain(getattr(report, name)) for name in report._fields}


def _plot_contents(method, sets):
    parts = ["ROC curves"] + (["reliability diagram"] if method else []) \
        + (["coverage against alpha"] if sets else [])
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def _save_plot(path, y, proba, y_pred, forest, raw_proba, method, sets):
    """One figure: the ROC curves; the reliability diagram of a calibrated model
    (``raw_proba``: the forest's before calibration); the coverage curves of
    the sets."""
    n_panels = 1 + (raw_proba is not None) + (sets is not None)
    figure = matplotlib_figure()(figsize=(5.5 * n_panels, 5), layout="constrained")
    axes = figure.subplots(1, n_panels, squeeze=False)[0]
    _draw_roc(axes[0], y, proba, y_pred, forest)
    if raw_proba is not None:
        plot_reliability(y, raw_proba, labels=forest.classes_, name="forest before calibration",
                         ax=axes[1])
        plot_reliability(y, proba, labels=forest.classes_, name=f"calibrated ({method})",
                         ax=axes[1])
    if sets is not None:
        labels = list(sets["curve"]["coverage"])
        coverage = np.array([sets["curve"]["coverage"][label] for label in labels]).T
        ax = plot_coverage(ALPHA_GRID, coverage, labels=labels, ax=axes[-1])
        ax.axvline(sets["alpha"], linestyle="--", color="black", linewidth=0.8)
    save_figure(figure, path)


def _draw_roc(ax, y, proba, y_pred, forest):
    """ROC curves, each with the point where the forest's decision rule operates."""
    classes = forest.classes_
    ax = plot_roc(y, proba, labels=classes, ax=ax)
    curves = ax.get_lines()  # one per class drawn (present classes), then the diagonal
    shown = [classes[1]] if len(classes) == 2 else [c for c in classes if (y == c).any()]
    for label, line in zip(shown, curves):
        tpr, fpr = operating_point(y, y_pred, label)
        ax.plot([fpr], [tpr], marker="o", linestyle="none", color=line.get_color(),
                markeredgecolor="black",
                label=f"decision {forest.decision_rule_.short}"
                      + (f" ({label})" if len(classes) > 2 else "")
                      + f": TPR {tpr:.2f}, FPR {fpr:.2f}")
    title = ax.get_legend().get_title().get_text() or None  # names the positive class
    ax.legend(loc="lower right", fontsize="small", title=title, title_fontsize="small")


def operating_point(y, y_pred, positive):
    """(true positive rate, false positive rate) of ``y_pred`` for the class
    ``positive`` against the rest."""
    actual, predicted = y == positive, y_pred == positive
    return float(predicted[actual].mean()), float(predicted[~actual].mean())
