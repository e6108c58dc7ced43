"""Decision rules chosen on out-of-bag predictions, and their cost.

`tune_decision` chooses, on a forest's out-of-bag probabilities (no refit), a
threshold on the probability of the second class (two classes) or a cost
matrix on the RFQ scale (K classes) that maximises the G-mean, the balanced
accuracy or F1, or minimises the expected cost under a given cost matrix, and
gives a bootstrap interval on the metric. Its ``decision`` is a value for
``AUCForestClassifier(decision=...)``. `expected_cost` is the mean cost of
predictions under a cost matrix ``C[j, k]`` (the cost of predicting k when the
truth is j), the quantity whose expectation the cost-matrix rule
``argmin_k sum_j p_j(x) C[j, k]`` minimises (Elkan 2001, "The foundations of
cost-sensitive learning", IJCAI, eq. (1)).
"""
import itertools
import numbers
from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_array
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._compat import in_memory
from ._decision_rule import DecisionRule
from ._oob_source import training_oob_proba
from .metrics._validation import check_class_labels

__all__ = ["DecisionTuning", "expected_cost", "tune_decision"]

METRICS = ("gmean", "balanced_accuracy", "f1", "expected_cost")

# Class weights t_k tried for K classes: 2**-3 .. 2**3 in steps of sqrt(2),
# t of the first class fixed at 1 (only ratios matter).
CLASS_WEIGHT_GRID = 2.0 ** np.arange(-3.0, 3.25, 0.5)

# Most thresholds tried for two classes (evenly spaced among the distinct
# out-of-bag probabilities); and most candidates searched exhaustively for K
# classes (above: a coordinate search).
MAX_THRESHOLDS = 255
MAX_GRID_CANDIDATES = 2500

# Bootstrap replicates x candidates x K**2 confusion counts held at once.
_CHUNK_CELLS = 4_000_000


class DecisionTuning(NamedTuple):
    """What `tune_decision` found.

    Attributes
    ----------
    decision : float or ndarray of shape (n_classes, n_classes)
        The chosen rule, a value for ``set_params(decision=...)``: a
        threshold on the probability of ``classes_[1]`` (two classes), or a
        cost matrix (K classes).
    score : float
        Its metric on the out-of-bag cases that chose it (optimistic: the
        best of ``len(candidates)``).
    confidence_interval : tuple of float
        (low, high): percentile bootstrap interval of the metric the tuning
        reaches on cases it did not see (see `tune_decision`).
    scores : ndarray of shape (n_candidates,)
        The metric of every candidate on the out-of-bag cases.
    candidates : ndarray
        The rules tried, in order: thresholds of shape (n_candidates,), or
        cost matrices of shape (n_candidates, n_classes, n_classes).
    metric : str
    confidence_level : float
    """

    decision: object
    score: float
    confidence_interval: tuple
    scores: np.ndarray
    candidates: np.ndarray
    metric: str
    confidence_level: float


def expected_cost(y_true, y_pred, cost_matrix, *, labels):
    """Mean cost of predictions: ``mean_i C[y_i, yhat_i]``.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels, each one of ``labels``.
    cost_matrix : array-like of shape (n_classes, n_classes)
        ``C[j, k]``: the cost of predicting ``labels[k]`` when the truth is
        ``labels[j]``; finite and >= 0.
    labels : array-like of shape (n_classes,)
        The classes in the order of the matrix' rows and columns (a forest's
        ``classes_``).

    Returns
    -------
    float
        The mean over the cases of the cost of each prediction.

    Examples
    --------
    >>> expected_cost([0, 0, 1, 1], [0, 1, 0, 1], [[0, 1], [5, 0]], labels=[0, 1])
    1.5
    """
    labels = check_class_labels(labels, None)
    costs = DecisionRule.parse_costs(cost_matrix, labels.shape[0]).costs
    truth, predicted = _codes(labels, y_true, "y_true"), _codes(labels, y_pred, "y_pred")
    if truth.shape != predicted.shape:
        raise ValueError(f"y_true has {truth.shape[0]} labels, y_pred {predicted.shape[0]}")
    return float(costs[truth, predicted].mean())


def tune_decision(forest, metric="gmean", *, y=None, cost_matrix=None, n_bootstrap=1000,
                  confidence_level=0.95, random_state=None, X=None, sample_weight=None):
    """Choose a decision rule on a forest's out-of-bag predictions.

    Two classes: a threshold t on the out-of-bag probability of
    ``classes_[1]`` (predict it when ``p_1 >= t``), among the distinct
    out-of-bag probabilities in (0, 1) (at most ``MAX_THRESHOLDS``, evenly
    spaced among them). K classes: weights t_k on the RFQ scale, predict
    ``argmax_k p_k / (pi_k t_k)`` (t all 1 is the forest's RFQ), each t_k of
    ``CLASS_WEIGHT_GRID`` (1/8 to 8) with t_0 = 1, every combination when
    there are at most ``MAX_GRID_CANDIDATES`` of them (up to 4 classes), a
    coordinate search from all ones otherwise. Here p are the probabilities
    under the training priors (``draw_class_weights_``) and
    ``pi_k = class_prior_k / w'_k``, so the rule is the cost matrix
    ``C[j, k] = 1 / (pi_j t_j)`` off the diagonal (0 on it), which is what
    ``decision`` holds and what the scores are computed with: the forest
    set to it predicts exactly the labels scored. Ties between candidates go
    to the first (the lowest threshold; the first combination in grid order).

    The metrics: "gmean" (`aucforest.metrics.gmean_score`),
    "balanced_accuracy" (the mean of the per-class recalls, scikit-learn's),
    "f1" (of ``classes_[1]`` for two classes, the macro average over the
    classes present in the labels or predictions for more, scikit-learn's
    ``f1_score`` with ``zero_division=0``), all maximised; "expected_cost"
    (`expected_cost` under ``cost_matrix``), minimised.

    The interval: each of ``n_bootstrap`` replicates draws the out-of-bag
    cases with replacement, chooses the rule again on the draw, and scores
    that rule on the cases the draw left out (about 36.8% of them); the
    interval holds the central ``confidence_level`` of those scores
    (percentile). Re-doing the choice makes it honest about the selection
    (``score`` is optimistic, and may lie above the interval). It describes
    the chosen rule's score on a held-out set about a third the size of the
    training set, from out-of-bag probabilities (about 37% of the trees). It
    can hold the metric of a held-out set less often than
    ``confidence_level`` says, most misses on the favourable side, since a
    rule tuned on out-of-bag probabilities applies to ``predict_proba`` of
    all trees, whose probabilities are a little less spread (the coverage
    measured on real imbalanced sets: docs/evidence/decisions.md,
    "Decisions under a cost matrix"). Replicates
    whose left-out cases give no score (NaN) are left out.

    Parameters
    ----------
    forest : AUCForestClassifier
        Fitted with ``oob_score=True`` (it keeps ``oob_decision_function_``).
    metric : {"gmean", "balanced_accuracy", "f1", "expected_cost"}, default="gmean"
        The metric the rule is chosen for (see above).
    y : array-like of shape (n_samples,), default=None
        The training labels; default the forest's own (``oob_labels_``),
        which a forest loaded from an older file or fitted on dask
        collections may not have.
    cost_matrix : array-like of shape (n_classes, n_classes), default=None
        For ``metric="expected_cost"`` only: ``C[j, k]`` the cost of
        predicting ``classes_[k]`` when the truth is ``classes_[j]``.
    n_bootstrap : int, default=1000
        Bootstrap replicates of the interval.
    confidence_level : float in (0, 1), default=0.95
        Coverage the interval aims at.
    random_state : int, RandomState instance or None, default=None
        Seeds the bootstrap draws.
    X : dask array or dask DataFrame of shape (n_samples, n_features), default=None
        For a forest fitted on dask collections only, which keeps no
        ``oob_decision_function_``: its training rows, in the order of the
        fit; with ``y`` (required then) and ``sample_weight`` they give the
        out-of-bag probabilities, ``forest.oob_decision_function(X, y,
        sample_weight)``, computed into memory (n x K floats).
    sample_weight : dask array or Series of shape (n_samples,), default=None
        With ``X``: the training sample weights (they decide which rows the
        balanced bootstrap drew). The metrics count every case once.

    Returns
    -------
    DecisionTuning
        The chosen ``decision``, its ``score``, the ``confidence_interval``
        and every candidate's score.

    Raises
    ------
    ValueError
        On a forest without out-of-bag predictions (one fitted on dask
        collections without ``X`` and ``y``, or ``X`` for one fitted in
        memory), an unknown metric, a
        missing or malformed ``cost_matrix``, labels that do not match the
        forest, or a bad ``n_bootstrap`` or ``confidence_level``.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from aucforest import AUCForestClassifier
    >>> X, y = make_classification(300, weights=[0.9], random_state=0)
    >>> forest = AUCForestClassifier(50, oob_score=True, random_state=0).fit(X, y)
    >>> tuned = tune_decision(forest, "gmean", n_bootstrap=200, random_state=0)
    >>> low, high = tuned.confidence_interval
    >>> bool(0 < tuned.decision < 1 and low <= high)
    True
    >>> _ = forest.set_params(decision=tuned.decision)
    >>> bool(abs(forest.oob_gmean_ - tuned.score) < 1e-12)
    True
    """
    check_is_fitted(forest)
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(map(repr, METRICS))}; got "
                         f"{metric!r}")
    classes = forest.classes_
    n_classes = classes.shape[0]
    costs = None
    if metric == "expected_cost":
        if cost_matrix is None:
            raise ValueError("metric='expected_cost' needs cost_matrix= (C[j, k]: the cost of "
                             "predicting classes_[k] when the truth is classes_[j]).")
        costs = DecisionRule.parse_costs(cost_matrix, n_classes).costs
    elif cost_matrix is not None:
        raise ValueError(f"cost_matrix is used by metric='expected_cost' only; got "
                         f"metric={metric!r}.")
    if (isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, numbers.Integral)
            or n_bootstrap < 1):
        raise ValueError(f"n_bootstrap must be a positive int; got {n_bootstrap!r}")
    if (isinstance(confidence_level, bool) or not isinstance(confidence_level, numbers.Real)
            or not 0 < confidence_level < 1):
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level!r}")

    proba = training_oob_proba(forest, "tune_decision", X, y, sample_weight)
    proba = np.asarray(proba, dtype=np.float64)
    codes = _training_codes(forest, in_memory(y), proba.shape[0])
    has_oob = ~np.isnan(proba).any(axis=1)
    proba, codes = proba[has_oob], codes[has_oob]
    if np.count_nonzero(np.bincount(codes, minlength=n_classes)) < 2:
        raise ValueError("the out-of-bag cases hold fewer than two classes: nothing to tune.")
    draw_weights = getattr(forest, "draw_class_weights_", None)

    def score(predictions):
        return _metric(metric, _confusion(codes, predictions, n_classes, np.ones((1, codes.size))),
                       costs)[0]

    if n_classes == 2:
        candidates = _thresholds(proba[:, 1])
        # each threshold as the forest set to it applies it (`DecisionRule.cut`)
        cuts = np.array([DecisionRule.parse(float(t), 2).cut(None)[1] for t in candidates])
        predictions = (proba[:, 1][None, :] >= cuts[:, None]).astype(np.intp)
    else:
        scale = _rfq_scale(forest.class_prior_, draw_weights)
        sign = -1.0 if metric == "expected_cost" else 1.0  # the search maximises
        weights = _class_weight_candidates(n_classes, lambda t: sign * float(score(
            _least_cost(proba, _rfq_costs(scale, t), draw_weights)[None, :])[0]))
        candidates = np.array([_rfq_costs(scale, t) for t in weights])
        predictions = np.array([_least_cost(proba, c, draw_weights) for c in candidates])
    scores = score(predictions)
    best = _best(scores, metric)
    if best is None:
        raise ValueError(f"no candidate rule has a {metric} on the out-of-bag cases.")
    interval = _bootstrap_interval(codes, predictions, n_classes, metric, costs, n_bootstrap,
                                   confidence_level, check_random_state(random_state))
    decision = float(candidates[best]) if n_classes == 2 else candidates[best]
    return DecisionTuning(decision, float(scores[best]), interval, scores, candidates, metric,
                          float(confidence_level))


def _least_cost(proba, costs, draw_weights):
    """Classes of the cost-matrix rule ``costs`` (what the forest set to it predicts)."""
    return DecisionRule.parse_costs(costs, proba.shape[1]).apply(proba, None, draw_weights)


def _codes(labels, y, name):
    """Index of each label of y in labels; ValueError naming ``name`` for others."""
    y = np.asarray(y)
    order = np.argsort(labels, kind="stable")
    found = np.clip(np.searchsorted(labels[order], y), 0, labels.shape[0] - 1)
    codes = order[found]
    if y.ndim != 1 or not np.all(labels[codes] == y):
        raise ValueError(f"{name} must be a 1-d array of labels among {list(labels)}")
    return codes


def _training_codes(forest, y, n_samples):
    """The encoded training labels: ``y`` given, or the forest's ``oob_labels_``."""
    if y is None:
        codes = getattr(forest, "oob_labels_", None)
        if codes is None:
            raise ValueError("this forest does not keep its training labels (oob_labels_): "
                             "pass them as y=.")
        codes = np.asarray(codes, dtype=np.intp)
    else:
        codes = _codes(forest.classes_, y, "y")
    if codes.shape[0] != n_samples:
        raise ValueError(f"y has {codes.shape[0]} labels but the forest has {n_samples} "
                         "out-of-bag rows: pass the labels it was fitted on.")
    return codes


def _thresholds(positive_proba):
    """Distinct probabilities in (0, 1), at most MAX_THRESHOLDS evenly spaced among them."""
    values = np.unique(positive_proba[(positive_proba > 0) & (positive_proba < 1)])
    if values.size == 0:
        return np.array([0.5])
    if values.size > MAX_THRESHOLDS:
        values = values[np.unique(np.linspace(0, values.size - 1, MAX_THRESHOLDS).round()
                                  .astype(np.intp))]
    return values


def _rfq_scale(class_prior, draw_weights):
    """pi_k of the RFQ scale for probabilities under the training priors:
    class_prior_k / w'_k, normalised (t all 1 is then the forest's RFQ)."""
    prior = np.asarray(class_prior, dtype=np.float64)
    if draw_weights is not None:
        w = np.asarray(draw_weights, dtype=np.float64)
        prior = np.divide(prior, w, out=np.zeros_like(prior), where=w > 0)
    return prior / prior.sum()


def _rfq_costs(scale, t):
    """C[j, k] = 1 / (pi_j t_j) off the diagonal, 0 on it (0 for a class of pi 0)."""
    with np.errstate(divide="ignore"):
        row = np.where(scale > 0, 1.0 / (scale * np.asarray(t)), 0.0)
    costs = np.repeat(row[:, None], scale.shape[0], axis=1)
    np.fill_diagonal(costs, 0.0)
    return costs


def _class_weight_candidates(n_classes, score):
    """Weight vectors t (t_0 = 1) of the grid: all combinations when few
    enough, else those a coordinate search visits (``score`` of a t, larger
    better, guides it)."""
    n_free = n_classes - 1
    if CLASS_WEIGHT_GRID.size ** n_free <= MAX_GRID_CANDIDATES:
        return [np.array((1.0,) + combo)
                for combo in itertools.product(CLASS_WEIGHT_GRID, repeat=n_free)]
    current = np.ones(n_classes)
    visited = {tuple(current): None}
    best = score(current)
    for _ in range(3):  # sweeps over the classes
        improved = False
        for k in range(1, n_classes):
            for value in CLASS_WEIGHT_GRID:
                trial = current.copy()
                trial[k] = value
                if tuple(trial) in visited:
                    continue
                visited[tuple(trial)] = None
                found = score(trial)
                if found > best:
                    best, current, improved = found, trial, True
        if not improved:
            break
    return [np.array(t) for t in visited]


def _confusion(codes, predictions, n_classes, weights):
    """Weighted confusion counts, shape (n_weightings, n_candidates, K, K)
    (rows: true class), from predictions (n_candidates, n) and weights (r, n)."""
    n_candidates, n = predictions.shape
    cells = n_classes * n_classes
    columns = (np.arange(n_candidates)[:, None] * cells + codes[None, :] * n_classes
               + predictions).ravel()
    rows = np.tile(np.arange(n), n_candidates)
    one_hot = csr_array((np.ones(columns.size), (rows, columns)),
                        shape=(n, n_candidates * cells))
    counts = np.asarray((one_hot.T @ np.asarray(weights, dtype=np.float64).T).T)
    return counts.reshape(weights.shape[0], n_candidates, n_classes, n_classes)


def _metric(metric, counts, costs):
    """The metric of confusion counts (..., K, K), over the leading axes."""
    with np.errstate(divide="ignore", invalid="ignore"):
        truth = counts.sum(axis=-1)
        hits = np.diagonal(counts, axis1=-2, axis2=-1)
        present = truth > 0
        n_present = present.sum(axis=-1)
        recall = np.where(present, hits / np.where(present, truth, 1), 1.0)
        if metric == "gmean":
            logs = np.where(present, np.log(np.where(recall > 0, recall, 1.0)), 0.0)
            value = np.exp(logs.sum(axis=-1) / n_present)
            value = np.where(np.any(present & (recall == 0), axis=-1), 0.0, value)
        elif metric == "balanced_accuracy":
            value = np.where(present, recall, 0.0).sum(axis=-1) / n_present
        elif metric == "f1":
            both = truth + counts.sum(axis=-2)
            f1 = np.where(both > 0, 2 * hits / np.where(both > 0, both, 1), 0.0)
            if counts.shape[-1] == 2:
                value = f1[..., 1]
            else:
                value = f1.sum(axis=-1) / (both > 0).sum(axis=-1)
        else:
            value = (counts * costs).sum(axis=(-2, -1)) / counts.sum(axis=(-2, -1))
        return np.where(n_present > 0, value, np.nan)


def _best(scores, metric):
    """Index of the best candidate (first of equal ones), None when all are NaN."""
    if np.all(np.isnan(scores)):
        return None
    return int(np.nanargmin(scores) if metric == "expected_cost" else np.nanargmax(scores))


def _bootstrap_interval(codes, predictions, n_classes, metric, costs, n_bootstrap,
                        confidence_level, random_state):
    """Percentile interval of the left-out score of the rule chosen on each replicate."""
    n = codes.shape[0]
    chunk = max(1, _CHUNK_CELLS // (predictions.shape[0] * n_classes * n_classes))
    found = []
    for start in range(0, n_bootstrap, chunk):
        size = min(chunk, n_bootstrap - start)
        drawn = random_state.multinomial(n, np.full(n, 1.0 / n), size=size).astype(np.float64)
        chosen_on = _metric(metric, _confusion(codes, predictions, n_classes, drawn), costs)
        left_out = _metric(metric, _confusion(codes, predictions, n_classes,
                                              (drawn == 0).astype(np.float64)), costs)
        for replicate in range(size):
            best = _best(chosen_on[replicate], metric)
            found.append(np.nan if best is None else left_out[replicate, best])
    found = np.asarray(found)
    found = found[~np.isnan(found)]
    if found.size == 0:
        return (np.nan, np.nan)
    tail = 100 * (1 - confidence_level) / 2
    low, high = np.percentile(found, [tail, 100 - tail])
    return (float(low), float(high))
