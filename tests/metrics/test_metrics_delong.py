"""DeLong intervals and tests against the direct O(n0 n1) placement formulas."""
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from aucforest.metrics import auc_ci, auc_test
from aucforest.metrics._delong import delong_covariance


def placement_covariance(y, scores_a, scores_b):
    """DeLong et al. (1988) directly: psi over all positive-negative pairs."""
    def components(scores):
        pos, neg = scores[y == 1], scores[y == 0]
        psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
        return psi.mean(axis=1), psi.mean(axis=0), psi.mean()

    v10_a, v01_a, auc_a = components(scores_a)
    v10_b, v01_b, auc_b = components(scores_b)
    m, n = v10_a.size, v01_a.size
    cov = np.cov(v10_a, v10_b)[0, 1] / m + np.cov(v01_a, v01_b)[0, 1] / n
    var_a = np.var(v10_a, ddof=1) / m + np.var(v01_a, ddof=1) / n
    var_b = np.var(v10_b, ddof=1) / m + np.var(v01_b, ddof=1) / n
    return auc_a, auc_b, var_a, var_b, cov


@st.composite
def two_scorers(draw):
    n = draw(st.integers(4, 40))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    y[:4] = [0, 0, 1, 1]
    a = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    b = draw(st.lists(st.floats(-2, 2, allow_nan=False), min_size=n, max_size=n))
    return np.array(y), np.array(a, float), np.array(b, float)


@settings(max_examples=80, deadline=None)
@given(two_scorers())
def test_fast_delong_covariance_equals_placement_formula(data):
    y, a, b = data
    auc_a, auc_b, var_a, var_b, cov = placement_covariance(y, a, b)
    aucs, covariance = delong_covariance(y == 1, np.column_stack([a, b]))
    np.testing.assert_allclose(aucs, [auc_a, auc_b], atol=1e-12)
    np.testing.assert_allclose(
        covariance, [[var_a, cov], [cov, var_b]], atol=1e-12
    )


@settings(max_examples=40, deadline=None)
@given(two_scorers(), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_interval_is_auc_plus_minus_z_placement_se_clipped(data, confidence):
    y, a, _ = data
    auc_a, _, var_a, _, _ = placement_covariance(y, a, a)
    half = norm.ppf((1 + confidence) / 2) * np.sqrt(var_a)
    result = auc_ci(y, a, confidence=confidence)
    assert result.auc == pytest.approx(auc_a, abs=1e-12)
    assert result.low == pytest.approx(max(auc_a - half, 0.0), abs=1e-10)
    assert result.high == pytest.approx(min(auc_a + half, 1.0), abs=1e-10)
    assert 0.0 <= result.low <= result.auc <= result.high <= 1.0


@settings(max_examples=40, deadline=None)
@given(two_scorers())
@example((np.array([0, 0, 1, 1, 0]), np.array([0.0, 2, 1, 1, 2]),
          np.array([-1.0, 1, 0, 0, 1])))  # same ranking: the variance of the difference is 0
def test_auc_test_statistic_equals_placement_formula(data):
    y, a, b = data
    auc_a, auc_b, var_a, var_b, cov = placement_covariance(y, a, b)
    variance = max(var_a + var_b - 2 * cov, 0.0)
    se = np.sqrt(variance)
    result = auc_test(y, a, b)
    # compare variances: a square root turns rounding noise of 1e-17 near zero into 1e-9
    assert result.std_error ** 2 == pytest.approx(variance, abs=1e-12)
    if se > 1e-6:
        z = (auc_a - auc_b) / se
        assert result.statistic == pytest.approx(z, rel=1e-7, abs=1e-9)
        assert result.pvalue == pytest.approx(2 * norm.sf(abs(z)), abs=1e-9)
        greater = auc_test(y, a, b, alternative="greater")
        assert greater.pvalue == pytest.approx(norm.sf(z), abs=1e-9)
        less = auc_test(y, a, b, alternative="less")
        assert less.pvalue == pytest.approx(norm.cdf(z), abs=1e-9)


def test_interval_covers_true_binormal_auc_about_95_percent():
    rng = np.random.default_rng(20240601)
    n, reps, shift, sd_pos = 60, 800, 1.0, 1.5
    true_auc = norm.cdf(shift / np.sqrt(1 + sd_pos**2))
    y = np.repeat([0, 1], n)
    covered = 0
    for _ in range(reps):
        scores = np.concatenate([rng.normal(0, 1, n), rng.normal(shift, sd_pos, n)])
        result = auc_ci(y, scores)
        covered += result.low <= true_auc <= result.high
    coverage = covered / reps  # about 0.947 expected; binomial s.e. 0.008
    assert 0.92 <= coverage <= 0.975


def test_auc_test_keeps_its_size_under_the_null():
    rng = np.random.default_rng(7)
    n, reps = 50, 400
    y = np.repeat([0, 1], n)
    rejections = 0
    for _ in range(reps):
        shared = rng.normal(0, 1, 2 * n) + 0.8 * y
        a = shared + rng.normal(0, 1, 2 * n)
        b = shared + rng.normal(0, 1, 2 * n)  # same distribution: equal AUCs
        rejections += auc_test(y, a, b).pvalue < 0.05
    assert 0.02 <= rejections / reps <= 0.09


def test_auc_test_detects_a_better_scorer():
    rng = np.random.default_rng(8)
    y = np.repeat([0, 1], 100)
    good = rng.normal(0, 1, 200) + 1.5 * y
    poor = good + rng.normal(0, 3, 200)
    result = auc_test(y, good, poor, alternative="greater")
    assert result.auc_a > result.auc_b and result.pvalue < 0.01


def test_identical_scores_give_zero_statistic():
    y = [0, 0, 1, 1, 0, 1]
    s = [0.1, 0.4, 0.35, 0.8, 0.2, 0.9]
    result = auc_test(y, s, s)
    assert result.statistic == 0.0 and result.pvalue == 1.0 and result.std_error == 0.0


def test_interval_is_clipped_at_one_for_perfect_separation():
    result = auc_ci([0, 0, 0, 1, 1, 1], [1, 2, 3, 4, 5, 6])
    assert result == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("call", [
    lambda: auc_ci([0, 0, 0, 1], [0.1, 0.2, 0.3, 0.4]),
    lambda: auc_ci([0, 1, 1, 1], [0.1, 0.2, 0.3, 0.4]),
    lambda: auc_test([0, 0, 0, 1], [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]),
])
def test_single_case_in_a_class_is_a_clear_error(call):
    with pytest.raises(ValueError, match="at least 2 cases in each class"):
        call()


@pytest.mark.parametrize("kwargs, message", [
    ({"confidence": 1.0}, "confidence"),
    ({"confidence": 0.0}, "confidence"),
])
def test_auc_ci_rejects_bad_confidence(kwargs, message):
    with pytest.raises(ValueError, match=message):
        auc_ci([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4], **kwargs)


def test_auc_test_rejects_bad_input():
    y = [0, 0, 1, 1]
    with pytest.raises(ValueError, match="score_b has 3 values"):
        auc_test(y, [0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="alternative"):
        auc_test(y, [0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], alternative="bigger")
    with pytest.raises(ValueError, match="exactly two classes"):
        auc_test([0, 1, 2, 2], [0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4])


# ------------------------------------------------- cases without a score, case counts

def scored_sample(seed=0, n=50):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    scores = np.round(rng.normal(size=n) + y, 1)  # ties
    return y, scores


def test_auc_ci_leaves_out_cases_without_a_score_with_one_warning():
    y, scores = scored_sample(1)
    scores[[3, 10, 11]] = np.nan
    with pytest.warns(UserWarning, match="3 of 50 cases have no score") as caught:
        result = auc_ci(y, scores)
    assert len(caught) == 1
    keep = ~np.isnan(scores)
    assert result == auc_ci(y[keep], scores[keep])


def test_auc_ci_of_a_forest_oob_decision_function():
    from sklearn.datasets import make_classification

    from aucforest import AUCForestClassifier

    X, y = make_classification(100, random_state=0)
    with pytest.warns(UserWarning):
        forest = AUCForestClassifier(6, oob_score=True, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match="cases have no score"):
        result = auc_ci(y, forest.oob_decision_function_[:, 1])
    assert result.auc == pytest.approx(forest.oob_score_, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_auc_ci_with_case_counts_equals_delong_on_repeated_cases(seed):
    y, scores = scored_sample(seed, n=30)
    counts = np.random.default_rng(seed).integers(0, 4, size=y.size)
    counts[:4] = [2, 2, 1, 1]  # two cases of each class at least
    repeated_y, repeated_scores = np.repeat(y, counts), np.repeat(scores, counts)
    a, _, var, _, _ = placement_covariance(repeated_y, repeated_scores, repeated_scores)
    z = norm.ppf(0.975)
    result = auc_ci(y, scores, sample_weight=counts)
    assert result.auc == pytest.approx(a, abs=1e-12)
    assert result.low == pytest.approx(max(a - z * np.sqrt(var), 0), abs=1e-10)
    assert result.high == pytest.approx(min(a + z * np.sqrt(var), 1), abs=1e-10)


def test_auc_ci_with_unit_counts_is_the_unweighted_interval():
    y, scores = scored_sample(2)
    expected = auc_ci(y, scores)
    assert auc_ci(y, scores, sample_weight=np.ones(y.size)) == pytest.approx(expected, abs=1e-12)


def test_auc_ci_refuses_non_integer_weights_and_says_why():
    y, scores = scored_sample(3)
    with pytest.raises(ValueError, match="case counts .* not a published estimator"):
        auc_ci(y, scores, sample_weight=np.full(y.size, 0.5))
    counts = np.zeros(y.size)
    counts[np.flatnonzero(y == 1)[0]] = 1
    counts[y == 0] = 1
    with pytest.raises(ValueError, match="total count of at least 2"):
        auc_ci(y, scores, sample_weight=counts)
