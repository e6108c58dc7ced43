"""Binary and multiclass AUC (Mann-Whitney; Hand & Till).

References
----------
.. [1] W. A. Yousef, R. F. Wagner, M. H. Loew, "Comparison of non-parametric
   methods for assessing classifier performance in terms of ROC parameters",
   eq. 10.
.. [2] Dataiku, "Method for computing multiclass ROC AUC", section "General
   Formula"; D. J. Hand, R. J. Till, "A simple generalisation of the area
   under the ROC curve for multiple class classification problems", Machine
   Learning 45 (2001) 171-186.
"""
import warnings

import numpy as np
from scipy.sparse import csc_array, issparse

from ._rank_sums import pair_wins, pair_wins_sparse
from ._validation import (
    check_binary_labels,
    check_class_labels,
    check_known_labels,
    check_labels,
    check_score_matrix,
    check_scores,
    check_weights,
)


# the error of an AUC with a class of no (positive) weight, whichever path computes it
_EMPTY_CLASS_MESSAGE = "Each class needs a positive total sample weight for the AUC."


def auc(y_true, y_score, sample_weight=None, *, pos_label=None):
    """Area under the ROC curve as the Mann-Whitney statistic.

    .. math::

        \\widehat{AUC} = \\frac{\\sum_{i \\in +} \\sum_{j \\in -} w_i w_j\\,
        \\psi(s_i, s_j)}{\\sum_{i \\in +} w_i \\sum_{j \\in -} w_j},\\qquad
        \\psi(a, b) = 1,\\ 1/2,\\ 0 \\text{ for } a > b,\\ a = b,\\ a < b

    (eq. 10 of the bootstrap paper [1]_, with case weights). A tie between a
    positive and a negative case counts one half. Computed in
    O(n log n) by sorting the distinct scores once.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two class labels; the positive class is ``pos_label``.
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive".
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative case weights; a pair weighs ``w_i * w_j``. Only their
        ratios matter (any scale, e.g. 1e-200 or 1e200, gives the same AUC).
    pos_label : label, default=None
        The positive class; default the second of the sorted labels.

    Returns
    -------
    float
        The AUC, in [0, 1].

    Raises
    ------
    ValueError
        If ``y_true`` does not hold exactly two classes, ``y_score`` is not a
        finite 1-d array of the same length, or a class has zero total weight.

    References
    ----------
    .. [1] W. A. Yousef, R. F. Wagner, M. H. Loew, "Comparison of
       non-parametric methods for assessing classifier performance in terms
       of ROC parameters", eq. 10.

    Examples
    --------
    >>> auc([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    0.875
    """
    positive, _ = check_binary_labels(y_true, pos_label=pos_label)
    y_score = check_scores(y_score, positive.size)
    weight = check_weights(sample_weight, positive)
    return mann_whitney_auc(positive, y_score, weight)


def mann_whitney_auc(positive, score, weight=None):
    """Weighted Mann-Whitney AUC on validated arrays (no checks).

    Parameters
    ----------
    positive : ndarray of bool
        Class membership, True for the positive class.
    score : ndarray of float
        Scores of the same length.
    weight : ndarray of float or None
        Non-negative case weights; None means one. They are divided by their
        maximum first, so that the sums of products neither overflow nor
        underflow whatever their scale.

    Returns
    -------
    float
    """
    if weight is None:
        return _unit_mann_whitney_auc(positive, score)
    weight = _unit_scale(weight, score.shape[0])
    distinct, slot = np.unique(score, return_inverse=True)
    positive_weight = np.where(positive, weight, 0.0)
    negative_weight = weight - positive_weight
    negative_at = np.bincount(slot, weights=negative_weight,
                              minlength=distinct.size)
    negative_below = np.cumsum(negative_at) - negative_at
    wins = negative_below[slot] + 0.5 * negative_at[slot]
    total_pairs = positive_weight.sum() * negative_weight.sum()
    if total_pairs <= 0:
        raise ValueError(_EMPTY_CLASS_MESSAGE)
    # an elementwise sum, not np.dot: BLAS's threaded dot leaves its threads
    # spinning after the call, which costs a second core in loops of AUCs
    return float(np.sum(positive_weight * wins) / total_pairs)


def _unit_mann_whitney_auc(positive, score):
    """`mann_whitney_auc` with unit weights: each positive's count of
    negatives scored below it plus half of those tied with it (Yousef et al.,
    eq. 10), found in the sorted negative scores for the positives in sorted
    order. The counts are whole numbers, so below 2^53 pairs every sum is
    exact and the AUC is the weighted formula's with unit weights, to the bit.
    """
    negative = np.sort(score[~positive])
    found = np.sort(score[positive])
    if found.size == 0 or negative.size == 0:
        raise ValueError(_EMPTY_CLASS_MESSAGE)
    below = np.searchsorted(negative, found, side="left")
    tied = np.searchsorted(negative, found, side="right") - below
    return float((np.sum(below) + 0.5 * np.sum(tied)) / (float(found.size) * negative.size))


def multiclass_auc(y_true, y_proba, labels=None, *, sample_weight=None):
    """Hand & Till's multiclass AUC (the M measure).

    .. math::

        M = \\frac{1}{C(C-1)} \\sum_{i \\ne j} A(i, j)

    where ``A(i, j)`` is the binary AUC of column ``i`` of ``y_proba`` on the
    rows whose true class is ``i`` or ``j``, class ``i`` positive
    (Hand & Till 2001; Dataiku's "Method for computing multiclass ROC AUC",
    section "General Formula"). This equals
    scikit-learn's ``roc_auc_score(multi_class="ovo")``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels.
    y_proba : array-like of shape (n_samples, n_classes) or (n_samples,)
        Column ``k`` holds the score (probability or decision value) of
        ``labels[k]``. With two classes a 1-d array is read as the score of
        the second label, and the result is the binary AUC.
    labels : array-like of shape (n_classes,), default=None
        The classes the columns stand for, in column order. Default: the
        sorted labels of ``y_true``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative case weights: in each ``A(i, j)`` a pair of cases weighs
        ``w_a * w_b``, as in :func:`auc`; scikit-learn's one-vs-one AUC
        does not take weights.

    Returns
    -------
    float
        The multiclass AUC, in [0, 1].

    Raises
    ------
    ValueError
        If fewer than two classes occur in ``y_true``, ``y_true`` holds a label
        not in ``labels``, or ``y_proba`` does not have one row per label of
        ``y_true`` and one column per class.

    Warns
    -----
    UserWarning
        When classes in ``labels`` do not occur in ``y_true``: they are left
        out (C counts the classes present), where scikit-learn would raise.

    Examples
    --------
    >>> y = [0, 1, 2, 2]
    >>> p = [[0.8, 0.1, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7], [0.3, 0.3, 0.4]]
    >>> multiclass_auc(y, p)
    1.0
    """
    y_true = check_labels(y_true)
    labels = check_class_labels(labels, y_true)
    check_known_labels(y_true, labels, "y_true")
    if np.ndim(y_proba) == 1 and labels.size == 2:
        y_proba = np.column_stack([-np.asarray(y_proba, dtype=float), y_proba])
    y_proba = check_score_matrix(y_proba, y_true.size, labels.size)
    weight = check_weights(sample_weight, y_true)
    present = _present_columns(y_true, labels)
    order = np.argsort(labels[present])
    codes = order[np.searchsorted(labels[present], y_true, sorter=order)]  # index in present
    return hand_till_auc(codes, y_proba[:, present], weight)


def hand_till_auc(codes, scores, weight=None):
    """Hand & Till's multiclass AUC on validated arrays (no checks).

    M = 1 / (C (C - 1)) sum_{i != j} A(i, j) (Hand & Till 2001; Dataiku's
    "Method for computing multiclass ROC AUC", "General Formula"). One sort of
    the rows by class and own-class score gives every A(i, j)
    (`_rank_sums.pair_wins`: each row finds its column-i score among class
    i's sorted scores), so M costs O(n C log(n / C)) instead of C^2 separate
    AUCs or C sorts of all n rows.

    Scores held sparse (a scipy sparse matrix, unit weights) are searched
    only where stored (`_rank_sums.pair_wins_sparse`): the same M to the bit,
    for a forest's class proportions at many classes, which are mostly 0.

    Parameters
    ----------
    codes : ndarray of intp, shape (n_samples,)
        Class of each row, 0..C-1; every class occurs.
    scores : ndarray of float or scipy sparse matrix, shape (n_samples, C)
        Column ``i`` holds the score of class ``i``.
    weight : ndarray of float or None
        Non-negative case weights; None means one (see `_unit_scale`); None
        with sparse scores.

    Returns
    -------
    float
    """
    weight = np.ascontiguousarray(_unit_scale(weight, codes.shape[0]), dtype=float)
    codes = np.ascontiguousarray(codes, dtype=np.intp)
    n_classes = scores.shape[1]
    class_weight = np.bincount(codes, weights=weight, minlength=n_classes)
    if np.any(class_weight <= 0):
        raise ValueError(_EMPTY_CLASS_MESSAGE)
    if issparse(scores):
        if np.any(weight != 1.0):
            raise ValueError("Sparse scores take unit weights only.")
        columns = csc_array(scores)
        if not columns.has_canonical_format:  # sorted in a copy, not in the caller's
            columns = columns.copy()
            columns.sum_duplicates()  # no (row, column) stored twice
        wins = pair_wins_sparse(columns.indptr.astype(np.intp, copy=False),
                                columns.indices.astype(np.intp, copy=False),
                                columns.data.astype(float, copy=False), codes, n_classes)
    else:
        wins = pair_wins(np.ascontiguousarray(scores, dtype=float), codes, weight, n_classes)
    pairs = ~np.eye(n_classes, dtype=bool)
    return float(np.mean((wins / np.outer(class_weight, class_weight))[pairs]))


def _unit_scale(weight, n):
    """Weights divided by their maximum (ones when None), so that sums of
    products neither overflow nor underflow whatever their scale."""
    if weight is None:
        return np.ones(n)
    if weight.size and weight.max() > 0:
        return weight / weight.max()
    return weight


def _present_columns(y_true, labels):
    """Indices of the labels that occur in ``y_true`` (warn about the rest)."""
    present = np.flatnonzero(np.isin(labels, y_true))
    if present.size < labels.size:
        missing = labels[np.setdiff1d(np.arange(labels.size), present)]
        warnings.warn(
            f"Classes {missing.tolist()} do not occur in y_true and are left "
            "out of the multiclass AUC.",
            UserWarning,
            stacklevel=3,
        )
    if present.size < 2:
        raise ValueError(
            "The multiclass AUC needs at least two classes in y_true, got "
            f"{present.size}."
        )
    return present
