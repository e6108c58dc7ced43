"""Reliability curves: observed class frequency against mean predicted
probability in bins of the prediction, one class against the rest; and the
scores of calibration read from them or from the probabilities: the Brier
score, the log loss and the expected calibration error.

References
----------
.. [1] M. H. DeGroot, S. E. Fienberg, "The comparison and evaluation of
   forecasters", The Statistician 32 (1983) 12-22 (the reliability diagram).
.. [2] A. Niculescu-Mizil, R. Caruana, "Predicting good probabilities with
   supervised learning", ICML (2005) 625-632.
.. [3] G. W. Brier, "Verification of forecasts expressed in terms of
   probability", Monthly Weather Review 78 (1950) 1-3 (the Brier score).
.. [4] C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger, "On calibration of modern
   neural networks", ICML (2017) 1321-1330 (the expected calibration error).
.. [5] M. Kull, M. Perello-Nieto, M. Kaengsepp, T. Silva Filho, H. Song,
   P. Flach, "Beyond temperature scaling: obtaining well-calibrated
   multi-class probabilities with Dirichlet calibration", NeurIPS (2019)
   (the classwise expected calibration error).
"""
from typing import NamedTuple

import numpy as np

from ._validation import check_known_labels, check_labels, check_score_matrix, check_scores

STRATEGIES = ("uniform", "quantile")


class ReliabilityCurve(NamedTuple):
    """Binned calibration of probabilities, one class against the rest.

    Each field but ``classes`` is a list with one array per class in
    ``classes``; only bins holding cases appear, in increasing order.

    Attributes
    ----------
    classes : ndarray
        The classes with a curve: ``labels[1]`` for two classes, every class
        present in ``y_true`` for more.
    mean_predicted : list of ndarray
        Mean predicted probability of the class in each bin.
    observed : list of ndarray
        Share of the bin's cases that belong to the class.
    counts : list of ndarray
        Cases in each bin (int).
    bin_edges : list of ndarray
        The ``n_bins + 1`` edges of each class's bins (all bins, empty ones
        included); a case falls in bin ``i`` when
        ``edges[i] < p <= edges[i + 1]``, the first bin also taking ``p``
        equal to its lower edge.
    """

    classes: np.ndarray
    mean_predicted: list
    observed: list
    counts: list
    bin_edges: list


def reliability_curve(y_true, y_proba, *, labels=None, n_bins=10, strategy="uniform"):
    """Observed frequency against mean predicted probability, in bins.

    For each class ``k`` drawn, the cases are binned by their predicted
    probability ``p_k`` and each non-empty bin gives the mean ``p_k`` and the
    share of its cases of class ``k``: a calibrated model has
    ``observed ~= mean_predicted`` (the diagonal of a reliability diagram
    [1]_ [2]_). The bins are those of scikit-learn's
    ``sklearn.calibration.calibration_curve``: ``"uniform"`` splits [0, 1]
    into ``n_bins`` bins of equal width, ``"quantile"`` puts the edges at
    quantiles of ``p_k`` (about equal counts, fewer bins when quantiles
    tie); unlike it, this returns the count of each bin, which says how far
    to trust a point (few cases of a rare class reach the upper bins).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Probabilities in [0, 1], column ``k`` for ``labels[k]``; 1-d: the
        probability of ``labels[1]``, two classes only.
    labels : array-like, default=None
        Column labels; default the sorted labels of ``y_true``.
    n_bins : int, default=10
        Number of bins, at least 1.
    strategy : {"uniform", "quantile"}, default="uniform"
        Bins of equal width or of equal counts.

    Returns
    -------
    ReliabilityCurve
        Fields ``classes``, ``mean_predicted``, ``observed``, ``counts``,
        ``bin_edges``: one array per class drawn.

    Raises
    ------
    ValueError
        On a probability outside [0, 1] or NaN, mismatched shapes, a label
        outside ``labels``, fewer than two labels, a bad ``n_bins`` or
        ``strategy``.

    References
    ----------
    .. [1] M. H. DeGroot, S. E. Fienberg, "The comparison and evaluation of
       forecasters", The Statistician 32 (1983) 12-22.
    .. [2] A. Niculescu-Mizil, R. Caruana, "Predicting good probabilities
       with supervised learning", ICML (2005) 625-632.

    Examples
    --------
    >>> curve = reliability_curve([0, 0, 1, 1], [0.1, 0.3, 0.35, 0.9], n_bins=2)
    >>> curve.mean_predicted[0], curve.observed[0], curve.counts[0]
    (array([0.25, 0.9 ]), array([0.33333333, 1.        ]), array([3, 1]))
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1, got {n_bins!r}.")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}.")
    y_true = check_labels(y_true)
    labels = np.unique(y_true) if labels is None else np.asarray(labels)
    if labels.size < 2:
        raise ValueError(f"a reliability curve needs at least two labels, got {labels.size}.")
    check_known_labels(y_true, labels, "y_true")
    if np.ndim(y_proba) == 1:
        if labels.size != 2:
            raise ValueError(f"1-d y_proba is the probability of labels[1] and needs two "
                             f"labels; there are {labels.size}: pass one column per label.")
        columns = {1: check_scores(y_proba, y_true.size, name="y_proba")}
    else:
        y_proba = check_score_matrix(y_proba, y_true.size, labels.size, name="y_proba")
        drawn = [1] if labels.size == 2 else np.flatnonzero(np.isin(labels, y_true))
        columns = {k: y_proba[:, k] for k in drawn}
    for k, proba in columns.items():
        if np.any((proba < 0) | (proba > 1)):
            raise ValueError(f"y_proba of class {labels[k]!r} holds values outside [0, 1]; "
                             "a reliability curve reads probabilities.")
    curves = [_binned(y_true == labels[k], proba, n_bins, strategy)
              for k, proba in columns.items()]
    return ReliabilityCurve(labels[list(columns)], *map(list, zip(*curves)))


def _binned(is_class, proba, n_bins, strategy):
    """(mean predicted, observed share, count, edges) of the non-empty bins."""
    if strategy == "quantile":
        edges = np.percentile(proba, np.linspace(0, 100, n_bins + 1))
    else:
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.searchsorted(edges[1:-1], proba)  # (edge_i, edge_i+1], the first closed
    counts = np.bincount(bins, minlength=n_bins)
    filled = counts > 0
    predicted = np.bincount(bins, weights=proba, minlength=n_bins)[filled] / counts[filled]
    observed = np.bincount(bins, weights=is_class, minlength=n_bins)[filled] / counts[filled]
    return predicted, observed, counts[filled], edges


class CalibrationError(NamedTuple):
    """Expected calibration error, one class against the rest.

    Attributes
    ----------
    ece : float
        The mean of ``per_class``.
    classes : ndarray
        The classes scored: ``labels[1]`` for two classes, every class
        present in ``y_true`` for more (those of `reliability_curve`).
    per_class : ndarray of shape (len(classes),)
        Each class's error over the bins of its reliability curve.
    """

    ece: float
    classes: np.ndarray
    per_class: np.ndarray


def brier_score(y_true, y_proba, *, labels=None):
    """Brier score: mean squared distance of the probabilities to the truth.

    ``(1 / n) sum_i sum_k (p_ik - 1[y_i = k])^2`` (Brier 1950, eq. (1)
    [3]_), halved for two classes so that it is the mean squared error of
    ``p_1``, as scikit-learn's ``brier_score_loss`` and the Brier column of
    `aucforest.metrics.imbalance_report` give it. 0 is perfect.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels, each one of ``labels``.
    y_proba : array-like of shape (n_samples, n_classes)
        Probabilities in [0, 1], column ``k`` for ``labels[k]``.
    labels : array-like of shape (n_classes,), default=None
        Column labels; default the sorted labels of ``y_true``.

    Returns
    -------
    float
        The Brier score, in [0, 1] for two classes, [0, 2] for more.

    Raises
    ------
    ValueError
        As `reliability_curve` (a probability outside [0, 1], mismatched
        shapes, an unknown label, fewer than two labels).

    Examples
    --------
    >>> round(brier_score([0, 1, 1], [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]]), 4)
    0.1367
    """
    y_true, y_proba, labels = _checked_probabilities(y_true, y_proba, labels)
    truth = y_true[:, None] == labels[None, :]
    squares = ((y_proba - truth) ** 2).sum(axis=1)
    return float(squares.mean() / (2.0 if labels.size == 2 else 1.0))


def log_loss(y_true, y_proba, *, labels=None):
    """Log loss: mean negative log probability of the true class.

    ``-(1 / n) sum_i log p_{i, y_i}`` (natural logarithm), each probability
    first clipped to ``[eps, 1 - eps]`` with ``eps`` the float64 machine
    epsilon, as scikit-learn's ``log_loss`` does, so that a true class given
    probability 0 (an isotonic map can give it) costs ``-log(eps)``, about
    36, rather than infinity. 0 is perfect.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels, each one of ``labels``.
    y_proba : array-like of shape (n_samples, n_classes)
        Probabilities in [0, 1], column ``k`` for ``labels[k]``.
    labels : array-like of shape (n_classes,), default=None
        Column labels; default the sorted labels of ``y_true``.

    Returns
    -------
    float
        The log loss, in [0, -log(eps)].

    Raises
    ------
    ValueError
        As `brier_score`.

    Examples
    --------
    >>> round(log_loss([0, 1], [[0.5, 0.5], [0.0, 1.0]]), 6)  # (log 2 + 0) / 2
    0.346574
    """
    y_true, y_proba, labels = _checked_probabilities(y_true, y_proba, labels)
    eps = np.finfo(np.float64).eps
    order = np.argsort(labels, kind="stable")
    columns = order[np.searchsorted(labels[order], y_true)]  # each case's class column
    given = np.clip(y_proba[np.arange(y_true.size), columns], eps, 1 - eps)
    return float(-np.log(given).mean())


def expected_calibration_error(y_true, y_proba, *, labels=None, n_bins=10,
                               strategy="uniform"):
    """Expected calibration error of each class against the rest, and its mean.

    For class ``k``, over the non-empty bins ``b`` of its reliability curve
    (`reliability_curve`, the same ``n_bins`` and ``strategy``):
    ``ECE_k = sum_b (n_b / n) |observed_b - mean_predicted_b|``, the
    expected calibration error of Guo et al. (2017, eq. (3)) [4]_ with the
    class's probability in place of the confidence; the mean over the
    classes scored is the classwise ECE of Kull et al. (2019, section 2)
    [5]_. Two classes score ``labels[1]`` only (the other column mirrors
    it). 0 is perfect; a score of 10 bins is biased upwards on few cases.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels, each one of ``labels``.
    y_proba : array-like of shape (n_samples, n_classes)
        Probabilities in [0, 1], column ``k`` for ``labels[k]``.
    labels : array-like of shape (n_classes,), default=None
        Column labels; default the sorted labels of ``y_true``.
    n_bins : int, default=10
        Number of bins, at least 1.
    strategy : {"uniform", "quantile"}, default="uniform"
        Bins of equal width or of equal counts.

    Returns
    -------
    CalibrationError
        Fields ``ece``, ``classes`` and ``per_class``.

    Raises
    ------
    ValueError
        As `reliability_curve`.

    Examples
    --------
    >>> error = expected_calibration_error([0, 0, 1, 1], [[0.9, 0.1], [0.7, 0.3],
    ...                                                   [0.65, 0.35], [0.1, 0.9]], n_bins=2)
    >>> round(error.ece, 4)  # (3/4) |1/3 - 0.25| + (1/4) |1 - 0.9|
    0.0875
    """
    y_true, y_proba, labels = _checked_probabilities(y_true, y_proba, labels)
    curve = reliability_curve(y_true, y_proba, labels=labels, n_bins=n_bins,
                              strategy=strategy)
    per_class = np.array([
        float(np.sum(counts * np.abs(observed - predicted)) / y_true.size)
        for predicted, observed, counts in zip(curve.mean_predicted, curve.observed,
                                               curve.counts)])
    return CalibrationError(float(per_class.mean()), curve.classes, per_class)


def _checked_probabilities(y_true, y_proba, labels):
    """(labels of y_true, (n, K) probabilities in [0, 1], the K column labels)."""
    y_true = check_labels(y_true)
    labels = np.unique(y_true) if labels is None else np.asarray(labels)
    if labels.ndim != 1 or labels.size < 2:
        raise ValueError(f"the probabilities need at least two labels, got {labels.size}.")
    check_known_labels(y_true, labels, "y_true")
    y_proba = check_score_matrix(y_proba, y_true.size, labels.size, name="y_proba")
    if np.any((y_proba < 0) | (y_proba > 1)):
        raise ValueError("y_proba holds values outside [0, 1]; it must hold probabilities.")
    return y_true, y_proba, labels
