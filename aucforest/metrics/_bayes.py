"""Closed-form Bayesian AUC (CBAUC) of a linear classifier.

References
----------
.. [1] S. S. Hassan, H. Huttunen, J. Niemi, J. Tohka, "Bayesian receiver
   operating characteristic metric for linear classifiers", Pattern
   Recognition Letters 128 (2019) 52-59, eq. 2-4 and 14.
"""
import numpy as np
from scipy.special import betainc
from sklearn.utils import check_array, column_or_1d

from ._validation import check_binary_labels


def bayesian_auc(X, y, coef, *, prior_mean=0.0, prior_scale=None, nu=0.5,
                 kappa=None, pos_label=None):
    """Closed-form Bayesian AUC (CBAUC) of the linear score ``X @ coef``.

    The posterior expectation of the AUC ``Phi(w'(mu2 - mu1) / sqrt(2 w'
    Sigma w))`` (eq. 2-3 of [1]_) of two Gaussian classes with common
    covariance, under a normal-inverse-Wishart prior. With the posterior
    hyperparameters of eq. 4,

    * ``nu_c* = nu_c + n_c``,  ``kappa* = kappa + n``,
    * ``m_c* = (n_c xbar_c + nu_c m_c) / (n_c + nu_c)``,
    * ``S* = (n_1 - 1) Cov_1 + (n_2 - 1) Cov_2 + S
      + sum_c n_c nu_c / (n_c + nu_c) (xbar_c - m_c)(xbar_c - m_c)'``,

    and ``A* = w'(m2* - m1*) sqrt(nu1* nu2*) / sqrt(nu1* + nu2* + 2 nu1*
    nu2*)``, eq. 14 gives

    .. math::

        \\mathrm{CBAUC} = \\frac12 + \\frac{\\mathrm{sgn}(A^*)}{2}
        I\\left(\\frac{A^{*2}}{A^{*2} + w^T S^* w};\\ \\frac12,\\
        \\frac{\\kappa^* - P + 1}{2}\\right)

    with ``I`` the regularized incomplete beta function. The bias of a
    fitted intercept does not enter: the AUC depends on ``w`` only, and only
    on its direction (``w`` is divided by its largest magnitude first, so
    weights of any scale, 1e-200 or 1e200, give the same CBAUC).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training features (the data the classifier was fitted on).
    y : array-like of shape (n_samples,)
        Two class labels; the positive class ("class 2" of the paper,
        expected to score higher) is ``pos_label``.
    coef : array-like of shape (n_features,) or (1, n_features)
        Weights ``w`` of the linear classifier, e.g. ``LogisticRegression
        .coef_``.
    prior_mean : float or array-like of shape (n_features,) or (2, n_features)
        ``m_c``, the prior centre of the class means; one row per class
        (negative first) or shared. The paper uses 0.
    prior_scale : None, float or array-like of shape (n_features, n_features)
        ``S``, the inverse-Wishart scale matrix; None means the identity
        (the paper's choice), a float ``s`` means ``s * I``.
    nu : float or array-like of shape (2,), default=0.5
        ``nu_c``, the prior weight of the class means (negative first).
    kappa : float, default=None
        Degrees of freedom of the inverse-Wishart prior; None means
        ``n_features + 2`` (the paper's choice). Must exceed
        ``n_features - 1``.
    pos_label : label, default=None
        The positive class; default the second of the sorted labels.

    Returns
    -------
    float
        The CBAUC, in [0, 1].

    Raises
    ------
    ValueError
        On non-finite or mis-shaped input, a ``y`` without exactly two
        classes, an all-zero ``coef``, ``nu <= 0``, ``kappa <= n_features -
        1`` or a ``prior_scale`` that is not symmetric positive definite.

    References
    ----------
    .. [1] S. S. Hassan, H. Huttunen, J. Niemi, J. Tohka, "Bayesian receiver
       operating characteristic metric for linear classifiers", Pattern
       Recognition Letters 128 (2019) 52-59.

    Examples
    --------
    >>> X = [[0.0, 0.1], [0.2, -0.3], [-0.1, 0.4], [1.1, 0.9], [0.8, 1.2], [1.3, 1.0]]
    >>> round(bayesian_auc(X, [0, 0, 0, 1, 1, 1], [1.0, 1.0]), 4)
    0.9276
    """
    X = check_array(X, dtype=np.float64, input_name="X")
    positive, _ = check_binary_labels(y, name="y", pos_label=pos_label)
    if positive.size != X.shape[0]:
        raise ValueError(
            f"X has {X.shape[0]} rows but y has {positive.size} labels."
        )
    n_features = X.shape[1]
    w = _check_coef(coef, n_features)
    means = _per_class(prior_mean, n_features, "prior_mean")
    nus = _check_nu(nu)
    scale = _check_prior_scale(prior_scale, n_features)
    kappa = n_features + 2.0 if kappa is None else float(kappa)
    if not kappa > n_features - 1:
        raise ValueError(
            f"kappa must exceed n_features - 1 = {n_features - 1}, got {kappa}."
        )
    groups = (X[~positive], X[positive])
    posterior = [_posterior_mean(g, m, v) for g, m, v in zip(groups, means, nus)]
    scale_post = scale + sum(_scatter(g, m, v) for g, m, v in zip(groups, means, nus))
    kappa_post = kappa + X.shape[0]
    (m1, nu1), (m2, nu2) = posterior
    a_star = (w @ (m2 - m1)) * np.sqrt(nu1 * nu2) / np.sqrt(nu1 + nu2 + 2 * nu1 * nu2)
    spread = float(w @ scale_post @ w)
    ratio = a_star**2 / (a_star**2 + spread)
    return float(0.5 + 0.5 * np.sign(a_star)
                 * betainc(0.5, (kappa_post - n_features + 1) / 2.0, ratio))


def _posterior_mean(group, prior_mean, nu):
    """``(m_c*, nu_c*)`` of eq. 4."""
    n = group.shape[0]
    return (n * group.mean(axis=0) + nu * prior_mean) / (n + nu), nu + n


def _scatter(group, prior_mean, nu):
    """Class ``c``'s share of ``S*`` in eq. 4: its scatter plus the mean shrinkage."""
    n = group.shape[0]
    centred = group - group.mean(axis=0)
    offset = group.mean(axis=0) - prior_mean
    return centred.T @ centred + n * nu / (n + nu) * np.outer(offset, offset)


def _check_coef(coef, n_features):
    coef = np.asarray(coef, dtype=np.float64)
    if coef.ndim == 2 and coef.shape[0] == 1:
        coef = coef[0]
    coef = column_or_1d(coef)
    if coef.size != n_features:
        raise ValueError(
            f"coef has {coef.size} weights but X has {n_features} features."
        )
    if not np.all(np.isfinite(coef)):
        raise ValueError("coef contains NaN or infinity.")
    if not np.any(coef):
        raise ValueError("coef is all zero: the classifier ranks nothing.")
    return coef / np.max(np.abs(coef))  # CBAUC depends on the direction only


def _per_class(value, n_features, name):
    value = np.asarray(value, dtype=np.float64)
    if value.ndim == 0 or value.shape == (n_features,):
        value = np.broadcast_to(value, (2, n_features))
    if value.shape != (2, n_features) or not np.all(np.isfinite(value)):
        raise ValueError(
            f"{name} must be finite: a scalar, shape ({n_features},) or shape "
            f"(2, {n_features}); got shape {value.shape}."
        )
    return value


def _check_nu(nu):
    nu = np.broadcast_to(np.asarray(nu, dtype=np.float64), (2,))
    if not np.all(nu > 0) or not np.all(np.isfinite(nu)):
        raise ValueError(f"nu must be positive and finite, got {nu.tolist()}.")
    return nu


def _check_prior_scale(prior_scale, n_features):
    if prior_scale is None:
        return np.eye(n_features)
    scale = np.asarray(prior_scale, dtype=np.float64)
    if scale.ndim == 0:
        scale = float(scale) * np.eye(n_features)
    if scale.shape != (n_features, n_features) or not np.allclose(scale, scale.T):
        raise ValueError(
            f"prior_scale must be a symmetric ({n_features}, {n_features}) "
            "matrix or a positive scalar."
        )
    if not np.all(np.isfinite(scale)) or np.linalg.eigvalsh(scale).min() <= 0:
        raise ValueError("prior_scale must be finite and positive definite.")
    return scale
