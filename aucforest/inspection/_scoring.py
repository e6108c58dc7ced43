"""Scores of an out-of-bag ensemble, larger meaning better.

A scorer is ``score(y_true, proba)`` with ``proba`` columns following the
forest's ``classes_``. Losses (Brier) are negated so that a drop in score
always means a loss of accuracy and VIMP = score(OOB) - score(permuted OOB)
is larger for more important features.
"""
import numpy as np
from sklearn.metrics import balanced_accuracy_score

from ..metrics import gmean_score, multiclass_auc
from ..metrics._auc import mann_whitney_auc

SCORINGS = ("auc", "gmean", "brier", "balanced_accuracy")


def make_scorer(scoring, forest):
    """``score(y_true, proba)`` for a scoring name or a callable.

    Parameters
    ----------
    scoring : {"auc", "gmean", "brier", "balanced_accuracy"} or callable
        "auc": binary AUC of ``classes_[1]`` for two classes, Hand & Till's
        multiclass AUC otherwise (classes absent from y_true left out, as
        ``oob_score_`` does). "gmean" and "balanced_accuracy": of the labels
        the forest's decision rule (``decision``) gives. "brier": minus the
        multiclass Brier score ``mean_i sum_k (p_ik - [y_i = k])^2``. A
        callable ``(y_true, proba) -> float``, larger meaning better.
    forest : fitted AUCForestClassifier
    """
    classes = forest.classes_
    if callable(scoring):
        return scoring
    if scoring == "auc":
        return lambda y, proba: _auc(y, proba, classes)
    if scoring == "gmean":
        return lambda y, proba: gmean_score(y, forest._decide(proba))
    if scoring == "balanced_accuracy":
        return lambda y, proba: balanced_accuracy_score(y, forest._decide(proba))
    if scoring == "brier":
        return lambda y, proba: -_brier(y, proba, classes)
    raise ValueError(f"scoring must be one of {', '.join(map(repr, SCORINGS))} or a callable "
                     f"(y_true, proba) -> float; got {scoring!r}")


def _auc(y, proba, classes):
    if classes.shape[0] == 2:
        return mann_whitney_auc(y == classes[1], proba[:, 1])  # OOB proportions: finite
    present = np.flatnonzero(np.isin(classes, y))  # absent classes left out without a warning
    return multiclass_auc(y, proba[:, present], labels=classes[present])


def _brier(y, proba, classes):
    """Multiclass Brier score (Brier 1950): mean squared distance to the one-hot truth."""
    truth = y[:, None] == classes[None, :]
    return float(np.mean(np.sum((proba - truth) ** 2, axis=1)))


def per_class_auc(y, proba, classes):
    """One-vs-rest AUC of each class's column (NaN for a class absent from y or alone in y)."""
    scores = np.full(classes.shape[0], np.nan)
    for k, label in enumerate(classes):
        positive = y == label
        if positive.any() and not positive.all():
            scores[k] = mann_whitney_auc(positive, proba[:, k])
    return scores


def score_or_nan(scorer, y, proba):
    """The score, or NaN when fewer than two classes have OOB rows."""
    if np.unique(y).size < 2:
        return np.nan
    return float(scorer(y, proba))
