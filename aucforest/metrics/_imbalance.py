"""Metrics for imbalanced classes: G-mean and a per-class report.

The report gives, for K classes, what randomForestSRC's
``get.imbalanced.performance`` gives for two: recall, precision, G-mean,
balanced accuracy, AUC, PR-AUC and the Brier score.

References
----------
.. [1] R. O'Brien, H. Ishwaran, "A random forests quantile classifier for
   class imbalanced data", Pattern Recognition 90 (2019) 232-249 (the RFQ
   rule and the G-mean).
.. [2] D. J. Hand, R. J. Till, Machine Learning 45 (2001) 171-186
   (papers/multiclass-roc-auc-method.txt).
"""
import warnings
from typing import NamedTuple

import numpy as np
from scipy.stats import gmean
from sklearn.metrics import (
    average_precision_score,
    balanced_accuracy_score,
    brier_score_loss,
    precision_score,
    recall_score,
)
from sklearn.utils import check_consistent_length

from ._auc import mann_whitney_auc, multiclass_auc
from ._validation import (
    check_known_labels,
    check_labels,
    check_score_matrix,
)

_TABLE_COLUMNS = ("support", "recall", "precision", "specificity", "gmean",
                  "balanced_accuracy", "auc", "pr_auc", "brier")


class ImbalanceReport(NamedTuple):
    """Per-class and overall performance of a probabilistic classifier.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
        The class labels, in the column order of the probabilities.
    per_class : dict of str to ndarray
        One array of length ``n_classes`` per column: ``support`` (cases in
        ``y_true``), ``recall``, ``precision``, ``specificity``, ``gmean``
        (``sqrt(recall * specificity)``), ``balanced_accuracy``
        (``(recall + specificity)/2``), ``auc`` and ``pr_auc`` (average
        precision) of the class's probability column against the rest, and
        ``brier`` (of that column against the class indicator). Classes
        absent from ``y_true`` get NaN. ``pandas.DataFrame(report.per_class,
        index=report.classes)`` makes it a table.
    recall : float
        Macro-averaged recall over the classes present (which is also the
        balanced accuracy).
    precision : float
        Macro-averaged precision over the classes present (0 for a class
        never predicted).
    gmean : float
        Geometric mean of the per-class recalls (:func:`gmean_score`).
    balanced_accuracy : float
        Mean of the per-class recalls.
    auc : float
        Binary AUC for two classes, Hand & Till's multiclass AUC otherwise.
    pr_auc : float
        For two classes, the average precision of the minority class (the
        smaller support; the second label on a tie); NaN for more classes.
    brier : float
        Brier score: mean squared error of the positive-class probability
        for two classes, ``mean(sum_k (p_k - 1[y = k])^2)`` for more.
    decision : str
        The rule that turned probabilities into labels ("rfq", "argmax" or
        "given" when ``y_pred`` was passed).
    """

    classes: np.ndarray
    per_class: dict
    recall: float
    precision: float
    gmean: float
    balanced_accuracy: float
    auc: float
    pr_auc: float
    brier: float
    decision: str

    def __str__(self):
        widths = [max(len(name), 7) + 2 for name in _TABLE_COLUMNS]
        label_width = max(7, *(len(str(c)) for c in self.classes)) + 2
        header = "class".rjust(label_width) + "".join(
            name.rjust(width) for name, width in zip(_TABLE_COLUMNS, widths))
        rows = [
            str(label).rjust(label_width) + "".join(
                _cell(self.per_class[name][k], name).rjust(width)
                for name, width in zip(_TABLE_COLUMNS, widths))
            for k, label in enumerate(self.classes)
        ]
        pr_auc = "" if self.pr_auc != self.pr_auc else f", PR-AUC {self.pr_auc:.4f}"  # NaN: K > 2
        overall = (
            f"overall ({self.decision}): recall {self.recall:.4f}, precision "
            f"{self.precision:.4f}, G-mean {self.gmean:.4f}, balanced accuracy "
            f"{self.balanced_accuracy:.4f}, AUC {self.auc:.4f}{pr_auc}, Brier {self.brier:.4f}"
        )
        return "\n".join([header, *rows, overall])


def _cell(value, column):
    return f"{value:.0f}" if column == "support" else f"{value:.4f}"


def gmean_score(y_true, y_pred, *, labels=None):
    """Geometric mean of the per-class recalls (G-mean).

    ``G = (prod_k recall_k)^(1/K)`` over the ``K`` classes; for two classes
    ``sqrt(sensitivity * specificity)``, the measure RFQ [1]_ targets. It is
    0 as soon as one class is never recognised.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like, default=None
        Classes to include; default the classes of ``y_true``. Classes in
        ``labels`` that do not occur in ``y_true`` (whose recall is
        undefined) are left out with a warning.

    Returns
    -------
    float

    Examples
    --------
    >>> round(gmean_score([0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 0]), 4)  # sqrt(3/4 * 1/2)
    0.6124
    """
    y_true = check_labels(y_true)
    y_pred = check_labels(y_pred, name="y_pred")
    check_consistent_length(y_true, y_pred)
    labels = _present_labels(y_true, labels)
    recalls = recall_score(y_true, y_pred, labels=labels, average=None,
                           zero_division=0.0)
    return _geometric_mean(recalls)


def imbalance_report(y_true, proba, classes, *, y_pred=None, decision="rfq",
                     priors=None):
    """Per-class and overall performance for imbalanced classes.

    Labels are predicted from ``proba`` by the ``decision`` rule unless
    ``y_pred`` is given:

    * ``"rfq"``: ``argmax_k proba_k / pi_k`` (the quantile rule of RFQ [1]_,
      extended to K classes; for two classes ``p_min >= pi_min``), a tie going
      to the class with the smaller ``pi_k``;
    * ``"argmax"``: ``argmax_k proba_k``.

    ``pi_k`` are ``priors``, by default the class frequencies of ``y_true``
    (as randomForestSRC does for out-of-bag predictions). When you evaluate
    on a test set, pass the training frequencies.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels, each one of ``classes``.
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities, column ``k`` for ``classes[k]``.
    classes : array-like of shape (n_classes,)
        The labels of the columns (e.g. a fitted ``classes_``).
    y_pred : array-like of shape (n_samples,), default=None
        Predicted labels; overrides ``decision``.
    decision : {"rfq", "argmax"}, default="rfq"
    priors : array-like of shape (n_classes,), default=None
        ``pi_k`` for the RFQ rule; positive.

    Returns
    -------
    ImbalanceReport
        Fields ``classes``, ``per_class``, ``recall``, ``precision``,
        ``gmean``, ``balanced_accuracy``, ``auc``, ``pr_auc``, ``brier``,
        ``decision``; ``print(report)`` shows a table.

    Raises
    ------
    ValueError
        If ``proba`` does not have one row per label and one column per
        class, ``y_true`` or ``y_pred`` holds a label outside ``classes``,
        fewer than two classes occur in ``y_true``, or on a bad ``decision``
        or ``priors``.

    Examples
    --------
    >>> y = [0, 0, 0, 0, 0, 0, 1, 1]
    >>> p1 = [0.1, 0.2, 0.3, 0.1, 0.4, 0.2, 0.35, 0.6]
    >>> report = imbalance_report(y, [[1 - q, q] for q in p1], [0, 1])
    >>> round(report.gmean, 4), round(report.auc, 4)  # RFQ calls p1 > 0.25 positive
    (0.8165, 0.9167)
    """
    classes = np.asarray(classes)
    y_true = check_labels(y_true)
    check_known_labels(y_true, classes, "y_true")
    proba = check_score_matrix(proba, y_true.size, classes.size, name="proba")
    if np.unique(y_true).size < 2:
        raise ValueError("y_true must hold at least two classes.")
    y_pred, decision = _predicted_labels(y_true, proba, classes, y_pred,
                                         decision, priors)
    present = np.isin(classes, y_true)
    per_class = _per_class_table(y_true, y_pred, proba, classes, present)
    overall_recall = recall_score(y_true, y_pred, labels=classes[present],
                                  average=None, zero_division=0.0)
    return ImbalanceReport(
        classes=classes,
        per_class=per_class,
        recall=float(np.mean(overall_recall)),
        precision=float(np.nanmean(per_class["precision"])),
        gmean=_geometric_mean(overall_recall),
        balanced_accuracy=float(balanced_accuracy_score(y_true, y_pred)),
        auc=_overall_auc(y_true, proba, classes, present),
        pr_auc=_overall_pr_auc(y_true, proba, classes, per_class),
        brier=float(brier_score_loss(y_true, proba, labels=classes)),
        decision=decision,
    )


def rfq_predict(proba, classes, priors):
    """Labels by the quantile rule ``argmax_k proba_k / priors_k``.

    Ties go to the class with the smaller prior (then the earlier column).
    """
    order = np.argsort(priors, kind="stable")
    ratios = proba[:, order] / priors[order]
    return classes[order[np.argmax(ratios, axis=1)]]


def _predicted_labels(y_true, proba, classes, y_pred, decision, priors):
    if y_pred is not None:
        y_pred = check_labels(y_pred, name="y_pred")
        check_consistent_length(y_true, y_pred)
        check_known_labels(y_pred, classes, "y_pred")
        return y_pred, "given"
    if decision == "argmax":
        return classes[np.argmax(proba, axis=1)], decision
    if decision == "rfq":
        return rfq_predict(proba, classes, _check_priors(priors, y_true, classes)), decision
    raise ValueError(f"decision must be 'rfq' or 'argmax', got {decision!r}.")


def _check_priors(priors, y_true, classes):
    if priors is None:
        priors = np.array([np.mean(y_true == c) for c in classes])
        priors[priors == 0] = np.inf  # a class absent from y_true is never favoured
        return priors
    priors = np.asarray(priors, dtype=float)
    if priors.shape != classes.shape or not np.all(priors > 0) or not np.all(np.isfinite(priors)):
        raise ValueError(
            f"priors must hold {classes.size} positive finite values, one per class."
        )
    return priors


def _per_class_table(y_true, y_pred, proba, classes, present):
    table = {name: np.full(classes.size, np.nan) for name in _TABLE_COLUMNS}
    table["support"] = np.array([np.sum(y_true == c) for c in classes], dtype=float)
    table["precision"] = np.where(present, precision_score(
        y_true, y_pred, labels=classes, average=None, zero_division=0.0), np.nan)
    for k in np.flatnonzero(present):
        is_k, called_k = y_true == classes[k], y_pred == classes[k]
        recall = np.mean(called_k[is_k])
        specificity = np.mean(~called_k[~is_k])
        table["recall"][k] = recall
        table["specificity"][k] = specificity
        table["gmean"][k] = np.sqrt(recall * specificity)
        table["balanced_accuracy"][k] = (recall + specificity) / 2.0
        table["auc"][k] = mann_whitney_auc(is_k, proba[:, k])
        table["pr_auc"][k] = average_precision_score(is_k, proba[:, k])
        table["brier"][k] = brier_score_loss(is_k, proba[:, k])
    return table


def _overall_auc(y_true, proba, classes, present):
    if classes.size == 2:
        return mann_whitney_auc(y_true == classes[1], proba[:, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return multiclass_auc(y_true, proba, labels=classes)


def _overall_pr_auc(y_true, proba, classes, per_class):
    if classes.size != 2:
        return float("nan")
    minority = 0 if per_class["support"][0] < per_class["support"][1] else 1
    return float(per_class["pr_auc"][minority])


def _present_labels(y_true, labels):
    if labels is None:
        return np.unique(y_true)
    labels = np.asarray(labels)
    present = labels[np.isin(labels, y_true)]
    if present.size < labels.size:
        warnings.warn(
            f"Classes {labels[~np.isin(labels, y_true)].tolist()} do not occur "
            "in y_true and are left out of the G-mean.",
            UserWarning,
            stacklevel=3,
        )
    if present.size == 0:
        raise ValueError("None of the labels occurs in y_true.")
    return present


def _geometric_mean(values):
    values = np.asarray(values, dtype=float)
    return 0.0 if np.any(values == 0) else float(gmean(values))
