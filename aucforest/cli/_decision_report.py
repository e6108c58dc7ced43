"""What ``evaluate`` and ``fit`` report about a model's decisions, as plain data
and text: the expected cost of its labels under a cost matrix beside the cost
of RFQ's and argmax's labels on the same probabilities, the calibration
scores of its probabilities, and the coverage and size of its conformal
prediction sets."""
import numpy as np

from .._decision_rule import DecisionRule
from ..metrics._reliability import brier_score, expected_calibration_error, log_loss

#: The rules whose labels every cost report shows beside the model's.
COMPARED_RULES = ("rfq", "argmax")
#: Bins of the expected calibration error (of equal width, as the reliability diagram).
CALIBRATION_BINS = 10
#: The levels of the coverage curve of ``evaluate --sets --plot``.
ALPHA_GRID = np.round(np.arange(1, 51) / 100, 2)


def class_codes(labels, classes):
    """Index of each label in the sorted ``classes`` (a forest's ``classes_``)."""
    return np.searchsorted(classes, labels).astype(np.intp)


def expected_costs(truth, predicted, costs, classes):
    """Mean cost per case of the ``predicted`` class indices when the truth is
    ``truth``, ``mean_i C[y_i, yhat_i]``, overall and per true class present
    (``C[j, k]`` the cost of predicting k when the truth is j; Elkan 2001,
    "The foundations of cost-sensitive learning", IJCAI, eq. (1))."""
    cost = np.asarray(costs, dtype=np.float64)[truth, predicted]
    return {"overall": float(cost.mean()),
            "per_class": {str(classes[j]): float(cost[truth == j].mean())
                          for j in range(len(classes)) if np.any(truth == j)}}


def decision_costs(truth, proba, costs, predicted, classes, prior, draw_weights=None):
    """Plain data: the expected cost (`expected_costs`) of the model's labels
    ``predicted`` and of the labels RFQ and argmax give on the same ``proba``
    (with the ``prior`` and ``draw_weights`` the model decides with), and the
    number of cases of each class."""
    figures = {"costs": np.asarray(costs, dtype=np.float64).tolist(),
               "cases": {str(classes[j]): int(np.sum(truth == j))
                         for j in range(len(classes)) if np.any(truth == j)},
               "model": expected_costs(truth, predicted, costs, classes)}
    for name in COMPARED_RULES:
        labels = DecisionRule.parse(name, len(classes)).apply(proba, prior, draw_weights)
        figures[name] = expected_costs(truth, labels, costs, classes)
    return figures


def cost_text(figures, rule, where, matrix="the cost matrix"):
    """A table of `decision_costs`: one row per true class and one overall, one
    column per rule (the model's first); ``where`` and ``matrix`` say on which
    cases and under which matrix."""
    columns = ["model", *COMPARED_RULES]
    labels = list(figures["cases"])
    width = max(10, *(len(label) for label in labels)) + 2
    lines = [(f"expected cost per case {where} under {matrix} (C[j, k]: the cost of "
              "predicting k when the truth is j), by true class: the model's labels "
              f"({rule.short}) beside RFQ's and argmax's on the same probabilities"),
             "true class".rjust(width) + "cases".rjust(8)
             + "".join(name.rjust(10) for name in columns)]
    for label in labels:
        lines.append(label.rjust(width) + str(figures["cases"][label]).rjust(8) + "".join(
            f"{figures[name]['per_class'][label]:.4f}".rjust(10) for name in columns))
    lines.append("overall".rjust(width) + str(sum(figures["cases"].values())).rjust(8)
                 + "".join(f"{figures[name]['overall']:.4f}".rjust(10) for name in columns))
    return "\n".join(lines)


def calibration_scores(y, proba, classes):
    """Plain data: Brier score, log loss and expected calibration error (per
    class and their mean) of the probabilities ``proba`` of labels ``y``."""
    error = expected_calibration_error(y, proba, labels=classes, n_bins=CALIBRATION_BINS)
    return {"brier": brier_score(y, proba, labels=classes),
            "log_loss": log_loss(y, proba, labels=classes),
            "ece": error.ece,
            "ece_per_class": {str(label): float(value)
                              for label, value in zip(error.classes, error.per_class)}}


def calibration_text(calibration):
    """Two lines: the calibrated probabilities' scores and the raw forest's."""
    def scores(figures):
        return (f"Brier {figures['brier']:.4f}, log loss {figures['log_loss']:.4f}, "
                f"ECE {figures['ece']:.4f}")

    calibrated = f"calibrated ({calibration['method']})"
    width = max(len(calibrated), len("forest before calibration")) + 3
    return "\n".join([
        (f"calibration on these cases (ECE: expected calibration error over "
         f"{calibration['n_bins']} bins of equal width, each class against the rest):"),
        f"  {calibrated + ':':<{width}}{scores(calibration['calibrated'])}",
        f"  {'forest before calibration:':<{width}}{scores(calibration['uncalibrated'])}"])


def set_report(truth, p_values, alpha, classes):
    """Plain data: for the sets ``p_values > alpha`` (one column per class),
    each class's coverage (the share of its cases whose set holds their
    label) and mean set size, the same overall, and the coverage of each
    class at every level of `ALPHA_GRID` (NaN for a class without cases)."""
    sets = p_values > alpha
    rows = np.arange(truth.size)
    covered, size = sets[rows, truth], sets.sum(axis=1)
    true_p = p_values[rows, truth]
    present = [j for j in range(len(classes)) if np.any(truth == j)]
    return {
        "alpha": float(alpha),
        "per_class": {str(classes[j]): {"cases": int(np.sum(truth == j)),
                                        "coverage": float(covered[truth == j].mean()),
                                        "mean_size": float(size[truth == j].mean())}
                      for j in present},
        "coverage": float(covered.mean()), "mean_size": float(size.mean()),
        "curve": {"alpha": ALPHA_GRID.tolist(),
                  "coverage": {str(classes[j]): [float(np.mean(true_p[truth == j] > a))
                                                 for a in ALPHA_GRID] for j in present}}}


def set_text(report):
    """A table of `set_report`: coverage and mean set size per class and overall."""
    labels = list(report["per_class"])
    width = max(8, *(len(label) for label in labels)) + 2
    lines = [(f"prediction sets at alpha {report['alpha']:g} (Mondrian conformal, from the "
              "model's out-of-bag predictions; each class promised a coverage of at least "
              f"{1 - report['alpha']:g}):"),
             "class".rjust(width) + "cases".rjust(8) + "coverage".rjust(10)
             + "mean set size".rjust(15)]
    for label, row in report["per_class"].items():
        lines.append(label.rjust(width) + str(row["cases"]).rjust(8)
                     + f"{row['coverage']:.4f}".rjust(10) + f"{row['mean_size']:.3f}".rjust(15))
    n_cases = sum(row["cases"] for row in report["per_class"].values())
    lines.append("overall".rjust(width) + str(n_cases).rjust(8)
                 + f"{report['coverage']:.4f}".rjust(10)
                 + f"{report['mean_size']:.3f}".rjust(15))
    return "\n".join(lines)
