"""CBAUC against a Monte Carlo average of the AUC over its posterior."""
import numpy as np
import pytest
from scipy.stats import invwishart, norm

from aucforest.metrics import bayesian_auc


def posterior(X, y, prior_mean, prior_scale, nu, kappa):
    """Normal-inverse-Wishart posterior of the CBAUC paper, eq. 4."""
    parts = []
    for c in (0, 1):
        group = X[y == c]
        n = group.shape[0]
        xbar = group.mean(axis=0)
        cov = np.cov(group, rowvar=False) if n > 1 else np.zeros((X.shape[1],) * 2)
        parts.append(dict(
            n=n, nu_post=nu[c] + n,
            m_post=(n * xbar + nu[c] * prior_mean[c]) / (n + nu[c]),
            scatter=(n - 1) * cov
            + n * nu[c] / (n + nu[c]) * np.outer(xbar - prior_mean[c], xbar - prior_mean[c]),
        ))
    scale_post = prior_scale + parts[0]["scatter"] + parts[1]["scatter"]
    return parts, scale_post, kappa + X.shape[0]


def monte_carlo_auc(X, y, w, prior_mean, prior_scale, nu, kappa, draws, seed):
    """Mean and standard error of Phi(w'(mu2 - mu1) / sqrt(2 w' Sigma w))."""
    rng = np.random.default_rng(seed)
    parts, scale_post, kappa_post = posterior(X, y, prior_mean, prior_scale, nu, kappa)
    sigmas = invwishart(df=kappa_post, scale=scale_post).rvs(size=draws, random_state=rng)
    chol = np.linalg.cholesky(sigmas)
    means = [
        p["m_post"] + np.einsum("dij,dj->di", chol, rng.standard_normal((draws, X.shape[1])))
        / np.sqrt(p["nu_post"])
        for p in parts
    ]
    spread = np.einsum("i,dij,j->d", w, sigmas, w)
    values = norm.cdf((means[1] - means[0]) @ w / np.sqrt(2 * spread))
    return values.mean(), values.std(ddof=1) / np.sqrt(draws)


def gaussian_sample(seed, n=(8, 10), p=3, shift=0.7):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (n[0], p)), rng.normal(shift, 1, (n[1], p))])
    return X, np.repeat([0, 1], n)


CASES = {
    "paper defaults": dict(),
    "own priors": dict(prior_mean=[[0.1, -0.2, 0.0], [0.5, 0.5, 0.5]],
                       prior_scale=np.diag([0.5, 2.0, 1.0]) + 0.2, nu=[2.0, 0.3],
                       kappa=9.0),
    "scalar scale": dict(prior_mean=0.3, prior_scale=3.0, nu=1.0, kappa=4.0),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("coef", [[1.0, 0.5, -0.2], [-0.3, 0.1, 0.2]])
def test_cbauc_equals_monte_carlo_posterior_mean(case, coef):
    X, y = gaussian_sample(11)
    p = X.shape[1]
    kwargs = CASES[case]
    prior_mean = np.broadcast_to(np.asarray(kwargs.get("prior_mean", 0.0), float), (2, p))
    scale = kwargs.get("prior_scale", np.eye(p))
    scale = scale * np.eye(p) if np.ndim(scale) == 0 else np.asarray(scale)
    nu = np.broadcast_to(np.asarray(kwargs.get("nu", 0.5), float), (2,))
    kappa = kwargs.get("kappa", p + 2)
    w = np.array(coef)
    mc_mean, mc_se = monte_carlo_auc(X, y, w, prior_mean, scale, nu, kappa,
                                     draws=100_000, seed=5)
    closed_form = bayesian_auc(X, y, coef, **kwargs)
    assert abs(closed_form - mc_mean) < 4 * mc_se + 1e-4


def test_cbauc_approaches_true_auc_with_much_data():
    rng = np.random.default_rng(3)
    n, p = 4000, 4
    X = np.vstack([rng.normal(0, 1, (n, p)), rng.normal(1, 1, (n, p))])
    y = np.repeat([0, 1], n)
    w = np.array([1.0, 0.5, 0.2, -0.1])
    true_auc = norm.cdf(w.sum() / np.sqrt(2 * w @ w))
    assert bayesian_auc(X, y, w) == pytest.approx(true_auc, abs=0.01)


def test_cbauc_uses_second_sorted_label_as_positive():
    X, y = gaussian_sample(4)
    labels = np.where(y == 1, "sick", "healthy")
    w = [1.0, 1.0, 1.0]
    assert bayesian_auc(X, labels, w) == pytest.approx(bayesian_auc(X, y, w))
    flipped = bayesian_auc(X, 1 - y, w)
    assert flipped < 0.5 < bayesian_auc(X, y, w)


def test_cbauc_is_scale_invariant_in_coef_and_accepts_coef_rows():
    X, y = gaussian_sample(6)
    w = np.array([0.4, -0.1, 0.9])
    assert bayesian_auc(X, y, 7.5 * w) == pytest.approx(bayesian_auc(X, y, w))
    assert bayesian_auc(X, y, w[None, :]) == pytest.approx(bayesian_auc(X, y, w))


@pytest.mark.parametrize("kwargs, message", [
    (dict(coef=[1.0, 2.0]), "coef has 2 weights"),
    (dict(coef=[0.0, 0.0, 0.0]), "all zero"),
    (dict(coef=[1.0, np.nan, 0.0]), "NaN"),
    (dict(coef=[1.0, 1.0, 1.0], nu=0.0), "nu must be positive"),
    (dict(coef=[1.0, 1.0, 1.0], kappa=2.0), "kappa must exceed"),
    (dict(coef=[1.0, 1.0, 1.0], prior_scale=-1.0), "positive definite"),
    (dict(coef=[1.0, 1.0, 1.0], prior_scale=np.ones((2, 2))), "prior_scale"),
    (dict(coef=[1.0, 1.0, 1.0], prior_mean=[1.0, 2.0]), "prior_mean"),
])
def test_cbauc_rejects_bad_arguments(kwargs, message):
    X, y = gaussian_sample(7)
    with pytest.raises(ValueError, match=message):
        bayesian_auc(X, y, **kwargs)


def test_cbauc_rejects_bad_data():
    X, y = gaussian_sample(8)
    with pytest.raises(ValueError, match="exactly two classes"):
        bayesian_auc(X, np.zeros_like(y), [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="rows but y has"):
        bayesian_auc(X[:-1], y, [1.0, 1.0, 1.0])
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        bayesian_auc(X, y, [1.0, 1.0, 1.0])
