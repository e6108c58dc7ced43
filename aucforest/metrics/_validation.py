"""Input checks shared by the metric functions.

Every public metric validates its arguments here, with scikit-learn's
utilities, so that bad input fails with one clear ``ValueError`` that names
the argument and the problem.
"""
import numpy as np
from sklearn.utils import check_array, check_consistent_length, column_or_1d
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _check_sample_weight


def check_labels(y_true, name="y_true"):
    """Return ``y_true`` as a 1-d array of class labels.

    Raises
    ------
    ValueError
        If ``y_true`` is not 1-d, holds NaN or is a continuous target.
    """
    shape = np.shape(y_true)
    if len(shape) != 1 and not (len(shape) == 2 and shape[1] == 1):
        raise ValueError(
            f"{name} must be a 1-d array of class labels, got shape {shape}."
        )
    y_true = column_or_1d(y_true, warn=True)
    if y_true.dtype.kind == "f" and not np.all(np.isfinite(y_true)):
        raise ValueError(f"{name} contains NaN or infinity.")
    target_type = type_of_target(y_true, input_name=name)
    if target_type not in ("binary", "multiclass"):
        raise ValueError(
            f"{name} must hold class labels, got a {target_type!r} target."
        )
    return y_true


def check_binary_labels(y_true, name="y_true"):
    """Return ``(positive, classes)`` for a target with exactly two classes.

    The positive class is the second of the sorted labels (``classes[1]``),
    as in scikit-learn.

    Returns
    -------
    positive : ndarray of bool, shape (n_samples,)
        True where ``y_true`` is the positive class.
    classes : ndarray of shape (2,)
        The sorted labels.

    Raises
    ------
    ValueError
        If ``y_true`` holds one class only, or more than two classes.
    """
    y_true = check_labels(y_true, name)
    classes = np.unique(y_true)
    if classes.size != 2:
        raise ValueError(
            f"{name} must hold exactly two classes, got {classes.size} "
            f"({_preview(classes)}); the AUC needs both a positive and a "
            "negative class."
        )
    return y_true == classes[1], classes


def check_scores(y_score, n_samples, name="y_score"):
    """Return ``y_score`` as a finite 1-d float array of ``n_samples`` values.

    Raises
    ------
    ValueError
        On a 2-d score array, NaN or infinity, or a length other than
        ``n_samples``.
    """
    y_score = check_array(
        y_score, ensure_2d=False, dtype="numeric", input_name=name
    )
    if y_score.ndim != 1:
        raise ValueError(
            f"{name} must be 1-d (one score per case), got shape "
            f"{y_score.shape}; for class-probability matrices use "
            "multiclass_auc."
        )
    if y_score.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {y_score.shape[0]} values but y_true has "
            f"{n_samples} labels."
        )
    return y_score.astype(np.float64, copy=False)


def check_score_matrix(y_score, n_samples, n_columns, name="y_proba"):
    """Return ``y_score`` as a finite float array of shape (n_samples, n_columns).

    Raises
    ------
    ValueError
        On NaN or infinity, a row count other than ``n_samples`` or a column
        count other than ``n_columns``.
    """
    if np.ndim(y_score) != 2:
        raise ValueError(
            f"{name} must be 2-d, one column per class ({n_columns} classes), "
            f"got shape {np.shape(y_score)}."
        )
    y_score = check_array(y_score, dtype="numeric", input_name=name)
    if y_score.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {y_score.shape[0]} rows but y_true has {n_samples} "
            "labels."
        )
    if y_score.shape[1] != n_columns:
        raise ValueError(
            f"{name} has {y_score.shape[1]} columns but there are "
            f"{n_columns} class labels; column k must hold the score of the "
            "k-th label."
        )
    return y_score.astype(np.float64, copy=False)


def check_weights(sample_weight, y_true):
    """Return non-negative float weights, ones when ``sample_weight`` is None."""
    if sample_weight is not None:
        check_consistent_length(y_true, sample_weight)
    return _check_sample_weight(
        sample_weight, y_true, ensure_non_negative=True
    )


def check_known_labels(y, classes, name):
    """Raise ``ValueError`` if ``y`` holds a label that is not in ``classes``."""
    unknown = np.setdiff1d(np.unique(y), classes)
    if unknown.size:
        raise ValueError(
            f"{name} holds labels {_preview(unknown)} that are not among the "
            f"classes {_preview(classes)}."
        )


def check_min_class_size(positive, minimum, why):
    """Raise ``ValueError`` if a class has fewer than ``minimum`` cases."""
    n_positive = int(np.count_nonzero(positive))
    n_negative = positive.size - n_positive
    smallest = min(n_positive, n_negative)
    if smallest < minimum:
        which = "positive" if n_positive < n_negative else "negative"
        raise ValueError(
            f"{why} needs at least {minimum} cases in each class; the "
            f"{which} class has {smallest}."
        )


def _preview(values, limit=6):
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v)
                      for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"
