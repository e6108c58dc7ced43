"""Scale-free metrics give the same value whatever the scale of weights, scores or coef
(issue 13 item 9: 1e200 overflowed to NaN or 0.5), checked against the unscaled value and an
independent reference."""
import math
import statistics

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sklearn_roc_curve

from aucforest.metrics import (
    auc,
    bayesian_auc,
    binormal_auc,
    binormal_roc,
    multiclass_auc,
    optimal_threshold,
    roc_curve,
)

SCALES = [1e-200, 1e200, 1e300]


def binary_data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    scores = rng.normal(size=n) + 1.5 * y
    weights = rng.uniform(0.1, 3.0, size=n)
    return y, scores, weights


@pytest.mark.parametrize("scale", SCALES)
def test_weighted_auc_does_not_depend_on_the_weight_scale(scale):
    y, scores, weights = binary_data()
    expected = roc_auc_score(y, scores, sample_weight=weights)
    assert auc(y, scores, sample_weight=weights) == pytest.approx(expected, abs=1e-12)
    assert auc(y, scores, sample_weight=weights * scale) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("scale", [*SCALES, 1e307])
def test_weighted_roc_curve_does_not_depend_on_the_weight_scale(scale):
    y, scores, weights = binary_data(1)
    fpr, tpr, _ = sklearn_roc_curve(y, scores, sample_weight=weights, drop_intermediate=False)
    curve = roc_curve(y, scores, sample_weight=weights * scale)
    np.testing.assert_allclose(curve.fpr, fpr, atol=1e-12)
    np.testing.assert_allclose(curve.tpr, tpr, atol=1e-12)


def test_weighted_multiclass_auc_does_not_depend_on_the_weight_scale():
    rng = np.random.default_rng(2)
    y = np.arange(60) % 3
    proba = rng.dirichlet(np.ones(3), size=60) + 0.4 * np.eye(3)[y]
    weights = rng.integers(1, 4, size=60)
    expected = multiclass_auc(np.repeat(y, weights), np.repeat(proba, weights, axis=0))
    for scale in [1.0, *SCALES]:
        assert multiclass_auc(y, proba, sample_weight=weights * scale) == pytest.approx(
            expected, abs=1e-12)


def gaussian_sample(seed=3, n=(15, 12), p=3):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (n[0], p)), rng.normal(0.8, 1, (n[1], p))])
    return X, np.repeat([0, 1], n)


def cbauc_reference(X, y, w):
    """Closed-form Bayesian AUC (CBAUC; Hassan, Huttunen, Niemi & Tohka, Pattern
    Recognition Letters 2019, eq. 4 and 14) with the paper's defaults (m = 0,
    S = I, nu = 1/2, kappa = P + 2), written out with python floats per class."""
    from scipy.special import betainc

    n_features = X.shape[1]
    nu, kappa = 0.5, n_features + 2.0
    scale_post = np.eye(n_features)
    means = []
    for c in (0, 1):
        group = X[y == c]
        n = group.shape[0]
        xbar = group.mean(axis=0)
        scale_post = scale_post + (n - 1) * np.cov(group, rowvar=False) \
            + n * nu / (n + nu) * np.outer(xbar, xbar)
        means.append((n * xbar / (n + nu), nu + n))
    (m1, nu1), (m2, nu2) = means
    a = w @ (m2 - m1) * math.sqrt(nu1 * nu2) / math.sqrt(nu1 + nu2 + 2 * nu1 * nu2)
    ratio = a * a / (a * a + w @ scale_post @ w)
    return 0.5 + 0.5 * np.sign(a) * betainc(0.5, (kappa + len(y) - n_features + 1) / 2, ratio)


@pytest.mark.parametrize("scale", SCALES)
def test_bayesian_auc_does_not_depend_on_the_coef_scale(scale):
    X, y = gaussian_sample()
    coef = np.array([0.9, 0.4, -0.3])
    expected = cbauc_reference(X, y, coef)
    assert bayesian_auc(X, y, coef) == pytest.approx(expected, abs=1e-12)
    assert bayesian_auc(X, y, coef * scale) == pytest.approx(expected, abs=1e-12)


def binormal_reference(y, scores):
    """Phi((mu1 - mu0) / sqrt(s1^2 + s0^2)) with the statistics module (exact sums)."""
    negatives = [float(s) for s, c in zip(scores, y) if c == 0]
    positives = [float(s) for s, c in zip(scores, y) if c == 1]
    shift = statistics.fmean(positives) - statistics.fmean(negatives)
    return norm.cdf(shift / math.hypot(statistics.stdev(positives), statistics.stdev(negatives)))


@pytest.mark.parametrize("scale", SCALES)
def test_binormal_auc_and_curve_do_not_depend_on_the_score_scale(scale):
    y, scores, _ = binary_data(4)
    expected = binormal_reference(y, scores)
    assert expected > 0.8  # a case the overflow turned into 0.5
    assert binormal_auc(y, scores) == pytest.approx(expected, abs=1e-12)
    assert binormal_auc(y, scores * scale) == pytest.approx(expected, abs=1e-12)
    plain, scaled = binormal_roc(y, scores), binormal_roc(y, scores * scale)
    np.testing.assert_allclose(scaled.tpr, plain.tpr, atol=1e-12)
    assert (scaled.a, scaled.b, scaled.auc) == pytest.approx((plain.a, plain.b, plain.auc),
                                                             rel=1e-12)
    threshold = optimal_threshold(y, scores, method="binormal").threshold
    assert optimal_threshold(y, scores * scale, method="binormal").threshold == pytest.approx(
        threshold * scale, rel=1e-12)


def test_binormal_roc_with_constant_positive_scores_is_the_limiting_step():
    y = np.array([0] * 6 + [1] * 4)
    negatives = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.5])
    scores = np.concatenate([negatives, np.full(4, 1.2)])
    fpr = np.linspace(0, 1, 101)
    curve = binormal_roc(y, scores, fpr=fpr)
    # the positives sit at mu1 = 1.2: called positive once the threshold passes below 1.2,
    # which happens at FPR = P(negative score > 1.2) under N(mu0, s0^2)
    step = norm.sf((1.2 - negatives.mean()) / negatives.std(ddof=1))
    np.testing.assert_array_equal(curve.tpr[1:-1], (fpr[1:-1] >= step).astype(float))
    assert curve.a == np.inf and curve.b == np.inf
    assert curve.auc == pytest.approx(binormal_auc(y, scores))
    # the limit of positives with a vanishing spread
    jitter = np.concatenate([negatives, 1.2 + 1e-9 * np.array([-1.0, 1.0, -1.0, 1.0])])
    nearly = binormal_roc(y, jitter, fpr=fpr[np.abs(fpr - step) > 1e-3])
    np.testing.assert_allclose(nearly.tpr, curve.tpr[np.abs(fpr - step) > 1e-3], atol=1e-6)


def test_binormal_roc_with_constant_negative_scores_is_flat():
    y = np.array([0] * 4 + [1] * 5)
    positives = np.array([0.0, 1.0, 1.5, 2.0, 4.0])
    scores = np.concatenate([np.full(4, 1.0), positives])
    curve = binormal_roc(y, scores, fpr=[0.0, 0.3, 0.7, 1.0])
    level = norm.cdf((positives.mean() - 1.0) / positives.std(ddof=1))
    np.testing.assert_allclose(curve.tpr, [0.0, level, level, 1.0])
    assert curve.b == 0.0


def test_binormal_roc_with_both_classes_constant_says_so():
    with pytest.raises(ValueError, match="vary within at least one class"):
        binormal_roc([0, 0, 1, 1], [1.0, 1.0, 2.0, 2.0])
