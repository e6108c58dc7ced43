"""``aucforest evaluate MODEL DATA --target COL``: imbalance report, AUC with
its DeLong interval, ROC curves with the operating point of the model's
decision rule."""
import json

import numpy as np

from .._atomic import save_figure
from ._comparison import matplotlib_figure
from .._table import shown
from ..metrics import auc, auc_ci, imbalance_report, multiclass_auc, plot_roc
from ._data import _by_name, _model_features, model_and_labelled_data
from ._from_oob import calibrated_model
from ._options import OUTPUT_FILES, _add_classification_option, _add_data_options
from ._output import _decision_text, _plain, check_plot


def add_evaluate_command(commands, common):
    """Add the ``evaluate`` subcommand to ``commands`` (argparse subparsers)."""
    evaluate = commands.add_parser(
        "evaluate", parents=[common], epilog=OUTPUT_FILES,
        help="imbalance report, AUC with DeLong interval, ROC plot",
        description="Evaluate a model on labelled data: per-class recall, precision, G-mean, "
                    "balanced accuracy, AUC with its DeLong interval, optionally ROC curves "
                    "with the operating point of the model's decision rule. A model fitted "
                    "with --calibrate is evaluated on its calibrated probabilities, with its "
                    "decision rule applied to them (as 'predict' gives them).")
    evaluate.add_argument("model", metavar="MODEL", help="model file written by 'aucforest fit'")
    evaluate.add_argument("data", metavar="DATA", help="labelled CSV (or Parquet) file")
    evaluate.add_argument("--target", required=True, metavar="COLUMN",
                          help="column of true class labels")
    _add_classification_option(evaluate)
    evaluate.add_argument("--plot", metavar="FILE",
                          help="save ROC curves (e.g. roc.png; the format follows the "
                               "extension, PNG without one)")
    _add_data_options(evaluate, model_default=True)
    evaluate.add_argument("--json", action="store_true", help="print the results as JSON")
    evaluate.set_defaults(run=run_evaluate)


def run_evaluate(args):
    """``aucforest evaluate``: imbalance report, AUC with DeLong interval, ROC plot."""
    if args.plot:
        check_plot(args.plot, inputs=[args.model, args.data])
    model, table, y = model_and_labelled_data(args)
    forest = model.forest
    if np.unique(y).size < 2:
        raise ValueError(f"target column {args.target!r} of {table.path} has only one class "
                         f"({shown(y[:1].tolist()[0])}); evaluation needs at least two")
    X = _model_features(model, table, [args.target], args.na_values)
    method = model.extra.get("calibrate")
    if method:
        calibrated = calibrated_model(forest, method, args.model,
                                      model.extra.get("calibration"))
        proba = _by_name(calibrated.predict_proba, X, forest)
        y_pred = _by_name(calibrated.predict, X, forest)
        priors = calibrated.class_prior_  # RFQ on calibrated p compares with these
    else:
        proba = _by_name(forest.predict_proba, X)
        y_pred = _by_name(forest.predict, X)
        priors = forest.class_prior_
    report = imbalance_report(y, proba, forest.classes_,
                              **_decision_arguments(forest, y_pred, priors))
    intervals = _auc_intervals(y, proba, forest.classes_)
    if args.plot:
        _save_roc_plot(y, proba, y_pred, forest, args.plot)
    if args.json:
        print(json.dumps({"model": args.model, "data": args.data, "n_cases": len(y),
                          "decision": _plain(forest.decision), "calibrate": method,
                          "report": _plain_report(report),
                          "auc_intervals": intervals, "plot": args.plot}, indent=2))
        return
    print(f"{args.model} on {args.data}: {len(y)} cases; decision {_decision_text(forest)}"
          + (f"; probabilities calibrated ({method})" if method else ""))
    print(report)
    print(_intervals_text(intervals, forest.classes_))
    if args.plot:
        print(f"ROC curves saved to {args.plot}")


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
                label=f"decision {forest.decision_rule_.short}"
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
