"""One set of argument names across aucforest.metrics (issue 12 items 11-12): pos_label for
every binary function, sample_weight for multiclass_auc, plain values in error messages."""
import itertools

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sklearn_roc_curve

from aucforest.metrics import (
    auc,
    auc_ci,
    auc_test,
    bayesian_auc,
    binormal_auc,
    binormal_roc,
    bootstrap_auc,
    multiclass_auc,
    optimal_threshold,
    roc_curve,
)


def labelled_sample(seed=0, n=40):
    rng = np.random.default_rng(seed)
    positive = np.arange(n) % 3 == 0  # "yes" is the minority
    scores = np.round(rng.normal(size=n) + 1.2 * positive, 1)
    return np.where(positive, "yes", "no"), scores, positive


# "no" < "yes": the default positive is "yes"; pos_label="no" must equal relabelling "no" as
# the second sorted label
BINARY_FUNCTIONS = {
    "auc": lambda y, s, **k: auc(y, s, **k),
    "roc_curve": lambda y, s, **k: np.concatenate(roc_curve(y, s, **k)).tolist(),
    "auc_ci": lambda y, s, **k: auc_ci(y, s, **k),
    "auc_test": lambda y, s, **k: auc_test(y, s, s[::-1], **k),
    "binormal_auc": lambda y, s, **k: binormal_auc(y, s, **k),
    "binormal_roc": lambda y, s, **k: binormal_roc(y, s, fpr=[0.1, 0.5], **k).tpr.tolist(),
    "optimal_threshold": lambda y, s, **k: optimal_threshold(y, s, **k),
    "optimal_threshold_binormal": lambda y, s, **k: optimal_threshold(y, s, method="binormal",
                                                                      **k),
    "bayesian_auc": lambda y, s, **k: bayesian_auc(np.column_stack([s, s ** 2]), y, [1.0, 0.2],
                                                   **k),
}


@pytest.mark.parametrize("name", sorted(BINARY_FUNCTIONS))
def test_pos_label_chooses_the_positive_class(name):
    function = BINARY_FUNCTIONS[name]
    y, scores, positive = labelled_sample()
    relabelled = np.where(positive, "a", "b")  # now "no" cases carry the second label
    assert function(y, scores, pos_label="no") == pytest.approx(function(relabelled, scores))
    assert function(y, scores, pos_label="yes") == pytest.approx(function(y, scores))
    with pytest.raises(ValueError, match=r"pos_label='maybe' is not one of the labels of y"):
        function(y, scores, pos_label="maybe")


def test_pos_label_against_scikit_learn():
    y, scores, _ = labelled_sample(1)
    assert auc(y, -scores, pos_label="no") == pytest.approx(roc_auc_score(y == "no", -scores))
    fpr, tpr, _ = sklearn_roc_curve(y, scores, pos_label="no", drop_intermediate=False)
    curve = roc_curve(y, scores, pos_label="no")
    np.testing.assert_allclose(curve.fpr, fpr)
    np.testing.assert_allclose(curve.tpr, tpr)


def brute_force_weighted_hand_till(y, proba, weights):
    """1/(C(C-1)) sum_{i != j} A(i, j), each A(i, j) over all pairs, a pair weighing w_a w_b."""
    classes = np.unique(y)
    total = 0.0
    for i, j in itertools.permutations(range(classes.size), 2):
        num = den = 0.0
        for a in np.flatnonzero(y == classes[i]):
            for b in np.flatnonzero(y == classes[j]):
                pair = weights[a] * weights[b]
                num += pair * ((proba[a, i] > proba[b, i]) + 0.5 * (proba[a, i] == proba[b, i]))
                den += pair
        total += num / den
    return total / (classes.size * (classes.size - 1))


@pytest.mark.parametrize("seed", range(3))
def test_weighted_multiclass_auc_equals_the_brute_force_formula(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, size=36)
    proba = np.round(rng.dirichlet(np.ones(4), size=36), 1)  # ties
    weights = rng.uniform(0.0, 2.0, size=36)
    expected = brute_force_weighted_hand_till(y, proba, weights)
    assert multiclass_auc(y, proba, sample_weight=weights) == pytest.approx(expected, abs=1e-12)
    assert multiclass_auc(y, proba, sample_weight=np.ones(36)) == pytest.approx(
        brute_force_weighted_hand_till(y, proba, np.ones(36)), abs=1e-12)
    unrounded = proba + 1e-9 * rng.random(proba.shape)
    unrounded /= unrounded.sum(axis=1, keepdims=True)
    assert multiclass_auc(y, unrounded, sample_weight=np.ones(36)) == pytest.approx(
        roc_auc_score(y, unrounded, multi_class="ovo"), abs=1e-12)


def test_weighted_multiclass_auc_checks_the_weights():
    y = np.arange(12) % 3
    proba = np.eye(3)[y]
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        multiclass_auc(y, proba, sample_weight=np.ones(5))
    with pytest.raises(ValueError, match="[Nn]egative"):
        multiclass_auc(y, proba, sample_weight=-np.ones(12))


@pytest.mark.parametrize("call, shown", [
    (lambda: auc_ci([0, 0, 1, 1], [1, 2, 3, 4], confidence=np.float64(1.0)), "got 1.0."),
    (lambda: optimal_threshold([0, 0, 1, 1], [1, 2, 3, 4], cost_fn=np.float64(-1.0)),
     "got -1.0 and 1.0."),
    (lambda: bootstrap_auc(LogisticRegression(), np.ones((4, 1)), [0, 0, 1, 1],
                           n_bootstraps=np.int64(0)),
     "got 0."),
    (lambda: auc([0, 0, 1, 1], [1, 2, 3, 4], pos_label=np.int64(7)), "pos_label=7 is"),
])
def test_error_messages_show_plain_values(call, shown):
    with pytest.raises(ValueError) as error:
        call()
    assert shown in str(error.value) and "np." not in str(error.value)
