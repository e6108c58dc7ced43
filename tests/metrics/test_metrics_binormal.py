"""Binormal AUC, curve and thresholds against numerical references."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize
from scipy.stats import norm

from aucforest.metrics import binormal_auc, binormal_roc, optimal_threshold


def sample_moments(y, scores):
    neg, pos = scores[y == 0], scores[y == 1]
    return neg.mean(), neg.std(ddof=1), pos.mean(), pos.std(ddof=1)


def binormal_cost(h, moments, cost_fn, cost_fp):
    mu0, s0, mu1, s1 = moments
    missed = norm.cdf((h - mu1) / s1)
    false_alarm = norm.sf((h - mu0) / s0)
    return cost_fn * missed + cost_fp * false_alarm


def numerical_minimum(moments, cost_fn, cost_fp):
    """Global minimum of the binormal cost: dense grid, then Brent's method."""
    mu0, s0, mu1, s1 = moments
    low, high = min(mu0, mu1) - 12 * max(s0, s1), max(mu0, mu1) + 12 * max(s0, s1)
    grid = np.linspace(low, high, 20001)
    costs = binormal_cost(grid, moments, cost_fn, cost_fp)
    best = int(np.argmin(costs))
    bracket = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    result = optimize.minimize_scalar(
        binormal_cost, bounds=bracket, args=(moments, cost_fn, cost_fp),
        method="bounded", options={"xatol": 1e-10},
    )
    return result.x, result.fun


def simulated(seed, n0=30, n1=25, mu1=1.2, s0=1.0, s1=1.6):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], [n0, n1])
    scores = np.concatenate([rng.normal(0.0, s0, n0), rng.normal(mu1, s1, n1)])
    return y, scores


def test_binormal_auc_is_probability_positive_beats_negative():
    y, scores = simulated(0)
    mu0, s0, mu1, s1 = sample_moments(y, scores)
    # P(X1 > X0) for independent normals, by numerical integration
    expected, _ = integrate.quad(
        lambda x: norm.pdf(x, mu1, s1) * norm.cdf(x, mu0, s0), -np.inf, np.inf
    )
    assert binormal_auc(y, scores) == pytest.approx(expected, abs=1e-8)


def test_binormal_roc_area_equals_binormal_auc():
    y, scores = simulated(1)
    curve = binormal_roc(y, scores)
    area, _ = integrate.quad(
        lambda p: binormal_roc(y, scores, fpr=[p]).tpr[0], 0, 1, limit=200
    )
    assert area == pytest.approx(curve.auc, abs=1e-7)
    assert curve.auc == pytest.approx(binormal_auc(y, scores))
    assert curve.fpr[0] == curve.tpr[0] == 0 and curve.fpr[-1] == curve.tpr[-1] == 1


def test_binormal_roc_points_are_operating_points_of_a_threshold():
    y, scores = simulated(2)
    mu0, s0, mu1, s1 = sample_moments(y, scores)
    thresholds = np.linspace(mu0 - 2, mu1 + 2, 9)
    fpr = norm.sf((thresholds - mu0) / s0)
    tpr = norm.sf((thresholds - mu1) / s1)
    np.testing.assert_allclose(binormal_roc(y, scores, fpr=fpr).tpr, tpr, atol=1e-12)


@pytest.mark.parametrize("cost_fn, cost_fp", [(1, 1), (5, 1), (1, 3), (20, 1)])
@pytest.mark.parametrize("seed", [3, 4])
def test_binormal_threshold_equals_numerical_minimum(seed, cost_fn, cost_fp):
    y, scores = simulated(seed)
    moments = sample_moments(y, scores)
    h, cost = numerical_minimum(moments, cost_fn, cost_fp)
    result = optimal_threshold(y, scores, cost_fn, cost_fp, method="binormal")
    mu0, s0, mu1, s1 = moments
    if cost < min(cost_fn, cost_fp) - 1e-9:  # an interior minimum exists
        assert result.threshold == pytest.approx(h, abs=1e-6)
        assert result.cost == pytest.approx(cost, abs=1e-10)
        assert result.sensitivity == pytest.approx(norm.sf((h - mu1) / s1), abs=1e-6)
        assert result.specificity == pytest.approx(norm.cdf((h - mu0) / s0), abs=1e-6)
    else:  # calling every case positive is cheapest (wider positive class)
        assert result.threshold == -np.inf
        assert (result.sensitivity, result.specificity) == (1.0, 0.0)
        assert result.cost == cost_fp


def test_binormal_threshold_falls_back_to_calling_all_positive():
    y, scores = simulated(3)
    result = optimal_threshold(y, scores, cost_fn=20, cost_fp=1, method="binormal")
    moments = sample_moments(y, scores)
    far_left = binormal_cost(np.linspace(-60, 0, 601), moments, 20, 1)
    assert far_left.min() >= 1.0  # no finite threshold beats cost_fp = 1
    assert result.threshold == -np.inf and result.cost == 1.0


@pytest.mark.parametrize("cost_fn, cost_fp", [(1, 1), (4, 1), (1, 2.5)])
def test_binormal_threshold_with_equal_variances(cost_fn, cost_fp):
    y = np.repeat([0, 1], 5)
    scores = np.array([0, 1, 2, 3, 4, 2, 3, 4, 5, 6], dtype=float)
    moments = sample_moments(y, scores)
    assert moments[1] == moments[3]  # B = s0^2 - s1^2 is exactly zero
    h, cost = numerical_minimum(moments, cost_fn, cost_fp)
    result = optimal_threshold(y, scores, cost_fn, cost_fp, method="binormal")
    assert result.threshold == pytest.approx(h, abs=1e-6)
    assert result.cost == pytest.approx(cost, abs=1e-10)
    if cost_fn == cost_fp:
        assert result.threshold == pytest.approx(3.0)  # midpoint of the means


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-5, 5), min_size=3, max_size=12),
    st.lists(st.floats(-5, 5), min_size=3, max_size=12),
    st.floats(0.2, 20), st.floats(0.2, 20),
)
def test_binormal_threshold_is_a_global_minimum(neg, pos, cost_fn, cost_fp):
    neg, pos = np.array(neg), np.array(pos)
    if neg.std() < 0.05 or pos.std() < 0.05:
        return
    y = np.repeat([0, 1], [neg.size, pos.size])
    scores = np.concatenate([neg, pos])
    moments = sample_moments(y, scores)
    result = optimal_threshold(y, scores, cost_fn, cost_fp, method="binormal")
    _, grid_cost = numerical_minimum(moments, cost_fn, cost_fp)
    limits = min(cost_fn, cost_fp)  # calling all negative or all positive
    assert result.cost <= min(grid_cost, limits) + 1e-9
    if np.isfinite(result.threshold):
        assert result.cost == pytest.approx(
            binormal_cost(result.threshold, moments, cost_fn, cost_fp), abs=1e-12)


def brute_force_threshold(y, scores, cost_fn, cost_fp):
    """Largest threshold t minimising the cost of calling score >= t positive."""
    pos, neg = scores[y == 1], scores[y == 0]
    candidates = np.concatenate([[np.inf], np.sort(np.unique(scores))[::-1]])
    costs = np.array([
        cost_fn * np.mean(pos < t) + cost_fp * np.mean(neg >= t) for t in candidates
    ])
    best = np.flatnonzero(np.isclose(costs, costs.min(), rtol=0, atol=1e-12))[0]
    return candidates[best], costs[best]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(0, 1), min_size=2, max_size=40),
    st.lists(st.integers(0, 8), min_size=40, max_size=40),
    st.floats(0.1, 10), st.floats(0.1, 10),
)
def test_empirical_threshold_equals_brute_force(labels, values, cost_fn, cost_fp):
    y = np.array(labels)
    y[:2] = [0, 1]
    scores = np.array(values[: y.size], dtype=float)
    threshold, cost = brute_force_threshold(y, scores, cost_fn, cost_fp)
    result = optimal_threshold(y, scores, cost_fn, cost_fp)
    assert result.cost == pytest.approx(cost, abs=1e-10)
    assert result.threshold == threshold
    called = scores >= result.threshold
    assert result.sensitivity == pytest.approx(np.mean(called[y == 1]))
    assert result.specificity == pytest.approx(np.mean(~called[y == 0]))


def test_empirical_threshold_moves_down_when_misses_cost_more():
    y, scores = simulated(5)
    cheap_miss = optimal_threshold(y, scores, cost_fn=1, cost_fp=5)
    dear_miss = optimal_threshold(y, scores, cost_fn=5, cost_fp=1)
    assert dear_miss.threshold < cheap_miss.threshold
    assert dear_miss.sensitivity > cheap_miss.sensitivity


@pytest.mark.parametrize("call, message", [
    (lambda: binormal_auc([0, 1, 1], [0.1, 0.2, 0.3]), "at least 2 cases"),
    (lambda: binormal_roc([0, 0, 1, 1], [1, 2, 3, 4], fpr=[1.5]), "fpr"),
    (lambda: optimal_threshold([0, 0, 1, 1], [1, 2, 3, 4], method="roc"), "method"),
    (lambda: optimal_threshold([0, 0, 1, 1], [1, 2, 3, 4], cost_fn=0), "cost_fn"),
    (lambda: optimal_threshold([0, 0, 1, 1], [1, 1, 3, 4], method="binormal"),
     "vary within each class"),
    (lambda: binormal_auc([0, 1, 2, 1], [1, 2, 3, 4]), "exactly two classes"),
])
def test_binormal_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
