"""Metrics for imbalanced classes: G-mean and a per-class report.

The report gives, for K classes, what randomForestSRC's
``get.imbalanced.performance`` gives for two: recall, precision, G-mean,
balanced accuracy, AUC, PR-AUC and the Brier score; ``oob_imbalance_report``
gives it from a fitted forest's out-of-bag predictions, as that function
does.

References
----------
.. [1] R. O'Brien, H. Ishwaran, "A random forests quantile classifier for
   class imbalanced data", Pattern Recognition 90 (2019) 232-249 (the RFQ
   rule and the G-mean).
.. [2] D. J. Hand, R. J. Till, Machine Learning 45 (2001) 171-186
   ("A simple generalisation of the area under the ROC curve for multiple
   class classification problems").
"""
import warnings
from typing import NamedTuple

import numpy as np
from sklearn.metrics import (
    average_precision_score,
    balanced_accuracy_score,
    brier_score_loss,
    precision_score,
    recall_score,
)
from sklearn.utils import check_consistent_length
from sklearn.utils.validation import check_is_fitted

from .._decision_rule import DEFAULT_DECISION, DecisionRule, rule_of
from ._auc import mann_whitney_auc, multiclass_auc
from ._validation import (
    check_class_labels,
    check_known_labels,
    check_labels,
    check_score_matrix,
    renamed_keywords,
    scored_rows,
)

_TABLE_COLUMNS = ("support", "recall", "precision", "specificity", "ovr_gmean",
                  "balanced_accuracy", "auc", "pr_auc", "brier")


class PerClassTable(dict):
    """The per-class columns of an :class:`ImbalanceReport` (a dict).

    ``table["gmean"]``, the column's name before aucforest 0.2, still reads
    ``table["ovr_gmean"]`` with a ``FutureWarning`` until 0.3.
    """

    def __missing__(self, key):
        if key == "gmean":
            warnings.warn(
                "The per-class column 'gmean' was renamed to 'ovr_gmean' "
                "(sqrt(recall * specificity), the class against the rest) in "
                "aucforest 0.2 and will be removed in 0.3; the report's overall "
                "G-mean is report.gmean.",
                FutureWarning,
                stacklevel=2,
            )
            return self["ovr_gmean"]
        raise KeyError(key)


class ImbalanceReport(NamedTuple):
    """Per-class and overall performance of a probabilistic classifier.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
        The class labels, in the column order of the probabilities.
    per_class : dict of str to ndarray
        One array of length ``n_classes`` per column: ``support`` (cases in
        ``y_true``), ``recall``, ``precision``, ``specificity``,
        ``ovr_gmean`` (``sqrt(recall * specificity)``, the G-mean of the
        class against the rest; called ``gmean`` before 0.2), ``balanced_accuracy``
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
    decision : str, float or ndarray of shape (n_classes, n_classes)
        The rule that turned probabilities into labels ("rfq", "argmax", a
        threshold, a cost matrix, or "given" when ``y_pred`` was passed).
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
    decision: object

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
        rule = "cost matrix" if isinstance(self.decision, np.ndarray) else self.decision
        overall = (
            f"overall ({rule}): recall {self.recall:.4f}, precision "
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
        The G-mean, in [0, 1].

    References
    ----------
    .. [1] R. O'Brien, H. Ishwaran, "A random forests quantile classifier for
       class imbalanced data", Pattern Recognition 90 (2019) 232-249.

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


@renamed_keywords("0.2", "0.3", proba="y_proba", classes="labels")
def imbalance_report(y_true, y_proba, labels=None, *, y_pred=None,
                     decision=DEFAULT_DECISION, priors=None):
    """Per-class and overall performance for imbalanced classes.

    Labels are predicted from ``y_proba`` by the ``decision`` rule, the same
    rules as ``AUCForestClassifier(decision=...)``, unless ``y_pred`` is
    given:

    * ``"rfq"``: ``argmax_k p_k / pi_k`` (the quantile rule of RFQ [1]_,
      extended to K classes; for two classes ``p_min >= pi_min``), a tie
      going to the class with the smaller ``pi_k``;
    * ``"argmax"``: ``argmax_k p_k``;
    * a float ``t`` in (0, 1), two classes only: ``labels[1]`` where
      ``p_1 >= t``;
    * a K x K cost matrix ``C``, ``C[j, k]`` the cost of predicting
      ``labels[k]`` when the truth is ``labels[j]``: the class of least
      expected cost, ``argmin_k sum_j p_j C[j, k]`` (Elkan 2001), a tie
      going to the first such class. ``y_proba`` is taken as given: pass
      probabilities under the training priors (a forest grown on balanced
      draws decides from its probabilities brought back to them, see
      :func:`oob_imbalance_report`).

    ``pi_k`` are ``priors``, by default the class frequencies of ``y_true``
    (all its rows; as randomForestSRC does for out-of-bag predictions). When
    you evaluate on a test set, pass the training frequencies (a fitted
    forest's ``class_prior_``).

    Rows of ``y_proba`` that are all NaN (cases without a prediction, as in
    a forest's ``oob_decision_function_``) are left out with one warning;
    :func:`oob_imbalance_report` does this for a fitted forest.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels, each one of ``labels``.
    y_proba : array-like of shape (n_samples, n_classes)
        Class probabilities, column ``k`` for ``labels[k]``; a row of NaN
        for a case without a prediction.
    labels : array-like of shape (n_classes,), default=None
        The labels of the columns (e.g. a fitted ``classes_``); default the
        sorted labels of ``y_true``.
    y_pred : array-like of shape (n_samples,), default=None
        Predicted labels; overrides ``decision``.
    decision : {"rfq", "argmax"}, float in (0, 1) or array-like of shape (n_classes, n_classes), \
default="rfq"
        Rule turning probabilities into labels, as listed above.
    priors : array-like of shape (n_classes,), default=None
        ``pi_k`` for the RFQ rule: non-negative, not all zero; normalised to
        sum to one.

    Returns
    -------
    ImbalanceReport
        Fields ``classes``, ``per_class``, ``recall``, ``precision``,
        ``gmean``, ``balanced_accuracy``, ``auc``, ``pr_auc``, ``brier``,
        ``decision``; ``print(report)`` shows a table.

    Raises
    ------
    ValueError
        If ``y_proba`` does not have one row per label and one column per
        class, has NaN in part of a row, ``y_true`` or ``y_pred`` holds a
        label outside ``labels``, fewer than two classes occur in the rows
        kept, or on a bad ``decision`` or ``priors``.

    Warns
    -----
    UserWarning
        When rows without a prediction (NaN) are left out.

    References
    ----------
    .. [1] R. O'Brien, H. Ishwaran, "A random forests quantile classifier for
       class imbalanced data", Pattern Recognition 90 (2019) 232-249.

    Examples
    --------
    >>> y = [0, 0, 0, 0, 0, 0, 1, 1]
    >>> p1 = [0.1, 0.2, 0.3, 0.1, 0.4, 0.2, 0.35, 0.6]
    >>> report = imbalance_report(y, [[1 - q, q] for q in p1])
    >>> round(report.gmean, 4), round(report.auc, 4)  # RFQ calls p1 >= 0.25 positive
    (0.8165, 0.9167)
    """
    return _report(y_true, y_proba, labels, y_pred, decision, priors)


def oob_imbalance_report(forest, y=None, *, decision=None, X=None, sample_weight=None):
    """Out-of-bag imbalance report of a fitted forest.

    What randomForestSRC's ``get.imbalanced.performance`` gives for a forest:
    :func:`imbalance_report` of the training labels ``y`` against the
    forest's ``oob_decision_function_``, with the forest's own ``decision``
    rule and class priors (``class_prior_``, the ``pi_k`` the trees were
    trained under). A cost-matrix rule decides, as the forest does, from the
    probabilities brought back to the training priors by the forest's
    ``draw_class_weights_`` (Bayes' rule for a shift of priors, Saerens,
    Latinne & Decaestecker 2002), so the report's G-mean is the forest's
    ``oob_gmean_``; the AUC and Brier columns read the stored probabilities
    unchanged. Cases that every tree drew have no out-of-bag
    prediction; they are left out with one warning.

    Parameters
    ----------
    forest : fitted classifier with ``oob_decision_function_``
        An ``AUCForestClassifier`` fitted with ``oob_score=True``. Another
        forest with ``oob_decision_function_`` and ``classes_`` works too;
        without ``class_prior_`` the priors are the frequencies of ``y``,
        without ``decision_rule_`` the rule is "argmax" (what its
        ``predict`` gives).
    y : array-like of shape (n_samples,), default=None
        The labels the forest was fitted on. None takes them from the
        forest, when it keeps them (``oob_labels_``, the indices into
        ``classes_`` of the training labels).
    decision : {"rfq", "argmax"}, float, array-like of shape (n_classes, n_classes) or None, \
default=None
        Rule turning probabilities into labels; None means the forest's.
    X : dask array or dask DataFrame of shape (n_samples, n_features), default=None
        For a forest fitted on dask collections only, which keeps no
        ``oob_decision_function_``: its training rows, in the order of the
        fit; with ``y`` (required then) and ``sample_weight`` they give the
        out-of-bag probabilities, ``forest.oob_decision_function(X, y,
        sample_weight)``, computed into memory (n x K floats).
    sample_weight : dask array or Series of shape (n_samples,), default=None
        With ``X``: the training sample weights (they decide which rows the
        balanced bootstrap drew). The report counts every case once.

    Returns
    -------
    ImbalanceReport
        The report of the cases with an out-of-bag prediction, as
        :func:`imbalance_report` gives it.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the forest is not fitted.
    ValueError
        If the forest has no out-of-bag predictions (fit it with
        ``oob_score=True``; fitted on dask collections, pass ``X`` and
        ``y``), ``X`` is given for a forest fitted in memory, ``y`` does
        not have one label per training case, or ``y`` is None and the
        forest does not keep its labels.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from aucforest import AUCForestClassifier
    >>> X, y = make_classification(200, weights=[0.9], random_state=0)
    >>> forest = AUCForestClassifier(50, oob_score=True, random_state=0).fit(X, y)
    >>> report = oob_imbalance_report(forest, y)
    >>> report.decision, bool(abs(report.auc - forest.oob_score_) < 1e-12)
    ('rfq', True)
    """
    check_is_fitted(forest)
    from .._compat import in_memory
    from .._oob_source import training_oob_proba
    proba = training_oob_proba(forest, "oob_imbalance_report", X, y, sample_weight)
    y = in_memory(y)
    if y is None:
        y = _training_labels(forest)
    if np.shape(y)[:1] != np.shape(proba)[:1]:
        raise ValueError(
            f"y has {np.shape(y)[0] if np.ndim(y) else 0} labels but the forest "
            f"has out-of-bag predictions for {np.shape(proba)[0]} training cases; "
            "pass the labels the forest was fitted on."
        )
    if decision is None:
        decision = rule_of(forest)
    return _report(y, proba, forest.classes_, None, decision,
                   getattr(forest, "class_prior_", None), stacklevel=4,
                   draw_weights=getattr(forest, "draw_class_weights_", None))


def _training_labels(forest):
    """The labels a forest was fitted on, from its ``oob_labels_``."""
    encoded = getattr(forest, "oob_labels_", None)
    if encoded is None:
        raise ValueError(
            f"This {type(forest).__name__} does not keep its training labels "
            "(oob_labels_): pass them as y."
        )
    return np.asarray(forest.classes_)[np.asarray(encoded)]


def _report(y_true, y_proba, labels, y_pred, decision, priors, stacklevel=5,
            draw_weights=None):
    """imbalance_report's work (``stacklevel`` points the NaN-row warning at the
    user's call; a cost matrix decides from ``y_proba`` brought back to the
    training priors by ``draw_weights``, when given)."""
    y_true = check_labels(y_true)
    labels = check_class_labels(labels, y_true)
    check_known_labels(y_true, labels, "y_true")
    y_proba = check_score_matrix(y_proba, y_true.size, labels.size,
                                 name="y_proba", allow_nan=True)
    if y_pred is not None:
        y_pred = check_labels(y_pred, name="y_pred")
        check_consistent_length(y_true, y_pred)
        check_known_labels(y_pred, labels, "y_pred")
    rule = DecisionRule.parse(decision, labels.size)
    priors = _check_priors(priors, y_true, labels)
    scored = scored_rows(y_proba, "y_proba", stacklevel=stacklevel)
    y_true, y_proba = y_true[scored], y_proba[scored]
    if np.unique(y_true).size < 2:
        raise ValueError("y_true must hold at least two classes (in the rows "
                         "with probabilities).")
    if y_pred is None:
        y_pred, decision = labels[rule.apply(y_proba, priors, draw_weights)], rule.parameter
    else:
        y_pred, decision = y_pred[scored], "given"
    present = np.isin(labels, y_true)
    per_class = _per_class_table(y_true, y_pred, y_proba, labels, present)
    overall_recall = recall_score(y_true, y_pred, labels=labels[present],
                                  average=None, zero_division=0.0)
    return ImbalanceReport(
        classes=labels,
        per_class=per_class,
        recall=float(np.mean(overall_recall)),
        precision=float(np.nanmean(per_class["precision"])),
        gmean=_geometric_mean(overall_recall),
        balanced_accuracy=float(balanced_accuracy_score(y_true, y_pred)),
        auc=_overall_auc(y_true, y_proba, labels, present),
        pr_auc=_overall_pr_auc(y_true, y_proba, labels, per_class),
        brier=float(brier_score_loss(y_true, y_proba, labels=labels)),
        decision=decision,
    )


def _check_priors(priors, y_true, classes):
    """Priors summing to one; a class with prior 0 is never predicted by RFQ."""
    if priors is None:
        return np.array([np.mean(y_true == c) for c in classes])
    priors = np.asarray(priors, dtype=float)
    if (priors.shape != classes.shape or not np.all(np.isfinite(priors))
            or np.any(priors < 0) or not priors.sum() > 0):
        raise ValueError(
            f"priors must hold {classes.size} non-negative finite values, one "
            "per class, not all zero."
        )
    return priors / priors.sum()


def _per_class_table(y_true, y_pred, proba, classes, present):
    table = PerClassTable({name: np.full(classes.size, np.nan) for name in _TABLE_COLUMNS})
    table["support"] = np.array([np.sum(y_true == c) for c in classes], dtype=float)
    table["precision"] = np.where(present, precision_score(
        y_true, y_pred, labels=classes, average=None, zero_division=0.0), np.nan)
    for k in np.flatnonzero(present):
        is_k, called_k = y_true == classes[k], y_pred == classes[k]
        recall = np.mean(called_k[is_k])
        specificity = np.mean(~called_k[~is_k])
        table["recall"][k] = recall
        table["specificity"][k] = specificity
        table["ovr_gmean"][k] = np.sqrt(recall * specificity)
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
    """exp(mean(log v)), as scipy.stats.gmean computes it, without its
    per-call argument handling (about 1 ms, most of the cost of the forest's
    node-size choice on small data); 0 when any value is 0."""
    values = np.asarray(values, dtype=float)
    return 0.0 if np.any(values == 0) else float(np.exp(np.mean(np.log(values))))
