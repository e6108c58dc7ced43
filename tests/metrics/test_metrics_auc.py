"""auc, multiclass_auc and roc_curve against scikit-learn, on data with many ties."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import trapezoid
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sklearn_roc_curve

from aucforest.metrics import auc, multiclass_auc, roc_curve

FAST = settings(max_examples=60, deadline=None)


@st.composite
def tied_binary_data(draw, weighted=False):
    """Labels with both classes and integer scores from a tiny range (ties)."""
    n = draw(st.integers(2, 60))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    y[0], y[1] = 0, 1
    scores = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    weights = None
    if weighted:
        weights = draw(st.lists(st.floats(0.1, 10.0), min_size=n, max_size=n))
    return np.array(y), np.array(scores, dtype=float), weights


@FAST
@given(tied_binary_data())
def test_auc_equals_sklearn_with_ties(data):
    y, scores, _ = data
    assert auc(y, scores) == pytest.approx(roc_auc_score(y, scores), abs=1e-12)


@FAST
@given(tied_binary_data(weighted=True))
def test_weighted_auc_equals_sklearn(data):
    y, scores, weights = data
    expected = roc_auc_score(y, scores, sample_weight=weights)
    assert auc(y, scores, sample_weight=weights) == pytest.approx(expected, abs=1e-10)


def test_integer_weights_equal_repeated_cases():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 30)
    scores = rng.integers(0, 5, y.size).astype(float)
    counts = rng.integers(1, 4, y.size)
    repeated = auc(np.repeat(y, counts), np.repeat(scores, counts))
    assert auc(y, scores, sample_weight=counts) == pytest.approx(repeated, abs=1e-12)


def test_auc_counts_a_tie_as_one_half():
    assert auc([0, 1], [0.3, 0.3]) == 0.5
    assert auc([0, 0, 1], [0.1, 0.5, 0.5]) == 0.75


def test_auc_positive_class_is_second_sorted_label():
    y = np.array(["healthy", "sick", "sick", "healthy"])
    scores = np.array([0.2, 0.9, 0.4, 0.5])
    assert auc(y, scores) == roc_auc_score(y == "sick", scores)


def test_auc_is_fast_enough_for_large_samples():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 500_000)
    scores = rng.integers(0, 1000, y.size) + y
    assert auc(y, scores) == pytest.approx(roc_auc_score(y, scores), abs=1e-12)


@st.composite
def tied_multiclass_data(draw):
    """All K classes present; probabilities from small integer counts (ties)."""
    k = draw(st.integers(3, 5))
    n = draw(st.integers(k, 50))
    y = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    y[:k] = range(k)
    counts = np.array(draw(st.lists(
        st.lists(st.integers(1, 4), min_size=k, max_size=k), min_size=n, max_size=n
    )), dtype=float)
    return np.array(y), counts / counts.sum(axis=1, keepdims=True)


@FAST
@given(tied_multiclass_data())
def test_multiclass_auc_equals_sklearn_ovo(data):
    y, proba = data
    expected = roc_auc_score(y, proba, multi_class="ovo")
    assert multiclass_auc(y, proba) == pytest.approx(expected, abs=1e-12)


def brute_force_multiclass_auc(y, proba, weight):
    """Hand & Till's M by its definition: every pair of cases, a tie one half."""
    k = proba.shape[1]
    pair_aucs = []
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            a, b = np.flatnonzero(y == i), np.flatnonzero(y == j)
            s_a, s_b = proba[a, i][:, None], proba[b, i][None, :]
            psi = (s_a > s_b) + 0.5 * (s_a == s_b)
            pairs = weight[a][:, None] * weight[b][None, :]
            pair_aucs.append((pairs * psi).sum() / pairs.sum())
    return np.mean(pair_aucs)


@FAST
@given(tied_multiclass_data(), st.integers(0, 2 ** 32 - 1))
def test_weighted_multiclass_auc_equals_brute_force_over_pairs(data, seed):
    y, proba = data
    weight = np.random.default_rng(seed).uniform(0.01, 3.0, y.size)
    expected = brute_force_multiclass_auc(y, proba, weight)
    assert multiclass_auc(y, proba, sample_weight=weight) == pytest.approx(expected, abs=1e-12)


def test_multiclass_auc_with_string_labels_follows_label_order():
    rng = np.random.default_rng(2)
    y = rng.choice(["cat", "dog", "emu"], 90)
    proba = rng.dirichlet(np.ones(3), 90)
    labels = ["emu", "cat", "dog"]
    sorted_columns = proba[:, [1, 2, 0]]  # scikit-learn wants sorted labels
    expected = roc_auc_score(y, sorted_columns, multi_class="ovo")
    assert multiclass_auc(y, proba, labels=labels) == pytest.approx(expected)


def test_multiclass_auc_leaves_out_absent_class_with_warning():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 80)
    proba = rng.dirichlet(np.ones(4), 80)
    pairs = [(i, j) for i in range(3) for j in range(3) if i != j]
    expected = np.mean([
        roc_auc_score(y[np.isin(y, [i, j])] == i, proba[np.isin(y, [i, j]), i])
        for i, j in pairs
    ])
    with pytest.warns(UserWarning, match=r"Classes \[3\] do not occur"):
        assert multiclass_auc(y, proba, labels=[0, 1, 2, 3]) == pytest.approx(expected)


def test_multiclass_auc_binary_matches_binary_auc():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 50)
    p1 = rng.random(50).round(1)
    proba = np.column_stack([1 - p1, p1])
    assert multiclass_auc(y, proba) == pytest.approx(roc_auc_score(y, p1))
    assert multiclass_auc(y, p1) == pytest.approx(roc_auc_score(y, p1))


@FAST
@given(tied_binary_data(weighted=True))
def test_roc_curve_trapezoid_area_equals_auc(data):
    y, scores, weights = data
    curve = roc_curve(y, scores, sample_weight=weights)
    area = trapezoid(curve.tpr, curve.fpr)
    assert area == pytest.approx(auc(y, scores, sample_weight=weights), abs=1e-10)


def test_roc_curve_matches_sklearn_points():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 40)
    scores = rng.integers(0, 6, 40)
    fpr, tpr, thresholds = sklearn_roc_curve(y, scores, drop_intermediate=False)
    curve = roc_curve(y, scores)
    np.testing.assert_allclose(curve.fpr, fpr)
    np.testing.assert_allclose(curve.tpr, tpr)
    np.testing.assert_array_equal(curve.thresholds, thresholds)
    assert curve.fpr[0] == curve.tpr[0] == 0 and curve.fpr[-1] == curve.tpr[-1] == 1


@pytest.mark.parametrize(
    "y, scores, message",
    [
        ([1, 1, 1], [0.1, 0.2, 0.3], "exactly two classes"),
        ([0, 1, 2], [0.1, 0.2, 0.3], "exactly two classes"),
        ([0.5, 1.5, 2.7], [0.1, 0.2, 0.3], "class labels"),
        ([0, 1, 1], [0.1, np.nan, 0.3], "NaN"),
        ([0, 1, 1], [0.1, np.inf, 0.3], "infinity"),
        ([0, 1, 1], [0.1, 0.2], "2 values but y_true has 3"),
        ([0, 1, 1], [[0.1, 0.9], [0.2, 0.8], [0.3, 0.7]], "must be 1-d"),
        ([0, np.nan, 1], [0.1, 0.2, 0.3], "NaN"),
        ([[0, 1], [1, 0]], [0.1, 0.2], "y_true must be a 1-d array"),
    ],
)
def test_auc_rejects_bad_input(y, scores, message):
    with pytest.raises(ValueError, match=message):
        auc(y, scores)


def test_auc_rejects_bad_weights():
    with pytest.raises(ValueError, match="(?i)negative"):
        auc([0, 1], [0.1, 0.2], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="positive total sample weight"):
        auc([0, 1, 1], [0.1, 0.2, 0.3], sample_weight=[0.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        auc([0, 1, 1], [0.1, 0.2, 0.3], sample_weight=[1.0, 1.0])


@pytest.mark.parametrize(
    "y, proba, labels, message",
    [
        ([0, 1, 2], np.full((3, 2), 0.5), None, "2 columns but there are 3"),
        ([0, 1, 2], np.full((2, 3), 1 / 3), None, "2 rows but y_true has 3"),
        ([0, 1, 5], np.full((3, 3), 1 / 3), [0, 1, 2], r"labels \[5\]"),
        ([0, 0, 0], np.full((3, 3), 1 / 3), [0, 1, 2], "at least two classes"),
        ([0, 1, 2], [[np.nan, 0.5, 0.5]] * 3, None, "NaN"),
        ([0, 1, 2], np.full((3, 3), 1 / 3), [0, 1, 1], "repeat"),
        ([0, 1, 2], [0.2, 0.3, 0.5], None, "must be 2-d, one column per class"),
    ],
)
def test_multiclass_auc_rejects_bad_input(y, proba, labels, message):
    with pytest.raises(ValueError, match=message):
        with pytest.warns(UserWarning) if message == "at least two classes" else _no_op():
            multiclass_auc(y, proba, labels=labels)


class _no_op:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@FAST
@given(tied_binary_data(), st.sampled_from([0.0, 0.5]))
def test_unit_weight_mann_whitney_equals_the_weighted_formula_to_the_bit(data, shift):
    # the package's own AUCs (out-of-bag choice, permutation importance) pass
    # no weights and take the counting path; it must equal the weighted
    # formula with unit weights exactly, and scikit-learn's AUC
    from aucforest.metrics._auc import mann_whitney_auc
    y, scores, _ = data
    scores = scores / 7 + shift  # ties
    scores[(scores == 0) & (np.arange(y.size) % 2 == 0)] = -0.0  # tied with 0.0
    positive = y == 1
    unit = mann_whitney_auc(positive, scores)
    assert unit == mann_whitney_auc(positive, scores, np.ones(y.size))
    assert unit == pytest.approx(roc_auc_score(y, scores), abs=1e-12)
    with pytest.raises(ValueError, match="positive total sample weight"):
        mann_whitney_auc(np.zeros(y.size, dtype=bool), scores)
