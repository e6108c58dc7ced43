"""Input checks shared by the metric functions.

Every public metric validates its arguments here, with scikit-learn's
utilities, so that bad input fails with one clear ``ValueError`` that names
the argument and the problem.
"""
import functools
import warnings

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


def check_binary_labels(y_true, name="y_true", pos_label=None):
    """Return ``(positive, classes)`` for a target with exactly two classes.

    The positive class is ``pos_label``, by default the second of the sorted
    labels (``classes[1]``), as in scikit-learn.

    Returns
    -------
    positive : ndarray of bool, shape (n_samples,)
        True where ``y_true`` is the positive class.
    classes : ndarray of shape (2,)
        The sorted labels.

    Raises
    ------
    ValueError
        If ``y_true`` holds one class only, or more than two classes, or
        ``pos_label`` is not one of them.
    """
    y_true = check_labels(y_true, name)
    classes = np.unique(y_true)
    if classes.size != 2:
        raise ValueError(
            f"{name} must hold exactly two classes, got {classes.size} "
            f"({_preview(classes)}); the AUC needs both a positive and a "
            "negative class."
        )
    if pos_label is None:
        pos_label = classes[1]
    elif not np.any(classes == pos_label):
        raise ValueError(
            f"pos_label={plain(pos_label)} is not one of the labels of {name}, "
            f"{_preview(classes)}."
        )
    return y_true == pos_label, classes


def check_scores(y_score, n_samples, name="y_score", allow_nan=False):
    """Return ``y_score`` as a finite 1-d float array of ``n_samples`` values.

    With ``allow_nan=True`` NaN (a case without a score) is let through, for
    :func:`scored_rows` to drop.

    Raises
    ------
    ValueError
        On a 2-d score array, NaN or infinity, or a length other than
        ``n_samples``.
    """
    y_score = check_array(
        y_score, ensure_2d=False, dtype="numeric", input_name=name,
        ensure_all_finite="allow-nan" if allow_nan else True,
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


def check_score_matrix(y_score, n_samples, n_columns, name="y_proba",
                       allow_nan=False):
    """Return ``y_score`` as a finite float array of shape (n_samples, n_columns).

    With ``allow_nan=True`` NaN is let through, for :func:`scored_rows`.

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
    y_score = check_array(y_score, dtype="numeric", input_name=name,
                          ensure_all_finite="allow-nan" if allow_nan else True)
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


def scored_rows(y_score, name="y_score", stacklevel=3):
    """Mask of the rows that have a score; warn once about the others.

    A row whose scores are all NaN has no score, as the rows of a forest's
    ``oob_decision_function_`` for cases that every tree drew. Those rows
    are dropped with one ``UserWarning``; a row with NaN in some columns
    only is an error.

    Parameters
    ----------
    y_score : ndarray of shape (n_samples,) or (n_samples, n_columns)
        Validated scores that may hold NaN.
    name : str
        The argument's name, for messages.
    stacklevel : int
        Of the warning: 3 points at the caller of the function calling this.

    Returns
    -------
    ndarray of bool, shape (n_samples,)
        True for the rows to keep.

    Raises
    ------
    ValueError
        If a row is partly NaN, or no row has a score.
    """
    missing = np.isnan(y_score).reshape(y_score.shape[0], -1)
    unscored = missing.all(axis=1)
    partial = np.flatnonzero(missing.any(axis=1) & ~unscored)
    if partial.size:
        raise ValueError(
            f"{name} has NaN in some but not all columns of {partial.size} "
            f"rows (first: row {partial[0]}); only whole rows may be missing."
        )
    n_missing = int(unscored.sum())
    if n_missing == unscored.size:
        raise ValueError(f"Every row of {name} is NaN: no case has a score.")
    if n_missing:
        warnings.warn(
            f"{n_missing} of {unscored.size} cases have no score in {name} "
            "(NaN; in a forest's oob_decision_function_, the cases that every "
            "tree drew) and are left out.",
            UserWarning,
            stacklevel=stacklevel,
        )
    return ~unscored


def check_weights(sample_weight, y_true):
    """Return non-negative float weights, ones when ``sample_weight`` is None."""
    if sample_weight is not None:
        check_consistent_length(y_true, sample_weight)
    return _check_sample_weight(
        sample_weight, y_true, ensure_non_negative=True
    )


def check_class_labels(labels, y_true):
    """The classes in the order of a score matrix's columns or a cost matrix's
    rows: ``labels`` as a 1-d array (None: the sorted classes of ``y_true``).

    Raises ``ValueError`` if ``labels`` is not 1-d or repeats a class (a
    class twice would make two columns, or two rows of costs, one class).
    """
    labels = np.unique(y_true) if labels is None else np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be a 1-d list of classes; got shape {labels.shape}.")
    if np.unique(labels).size != labels.size:
        values, counts = np.unique(labels, return_counts=True)
        raise ValueError(f"labels must not repeat a class; {_preview(values[counts > 1])} "
                         "appear more than once.")
    return labels


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


def renamed_keywords(renamed_in, removed_in, **new_names):
    """Decorator: accept the old keyword names of renamed arguments, with a
    ``FutureWarning`` (scikit-learn's deprecation style).

    ``@renamed_keywords("0.2", "0.3", proba="y_proba")`` lets callers still
    write ``proba=...`` until version 0.3.
    """
    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            for old, new in new_names.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{function.__name__}() got both {old!r} and its new "
                        f"name {new!r}; pass {new!r} only."
                    )
                warnings.warn(
                    f"{old!r} was renamed to {new!r} in aucforest {renamed_in} "
                    f"and will be removed in {removed_in}.",
                    FutureWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)
        return wrapper
    return decorate


def plain(value):
    """``repr`` of ``value`` with numpy scalars as Python ones, for messages
    (``0.0`` rather than ``np.float64(0.0)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _preview(values, limit=6):
    shown = ", ".join(plain(v) for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"
