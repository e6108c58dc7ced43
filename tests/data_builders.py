"""Data builders shared by the test modules: `make_classification` data with
missing values, and the data set of the Dask modules.

Each builder returns exactly what the module-local builder it replaced
returned (same seeds, draws and order of operations), so the tests that use
them see the same numbers as before.
"""
import numpy as np
from sklearn.datasets import make_classification


def classification(n_samples, n_features, seed=0, *, missing=0.0, missing_draws="legacy",
                   dtype=None, **options):
    """``make_classification(n_samples, n_features, random_state=seed, **options)``;
    then each cell of X is NaN with probability ``missing``, drawn in one pass
    over X's cells by ``np.random.RandomState(seed).rand`` (``missing_draws=
    "legacy"``) or ``np.random.default_rng(seed).random`` (``"generator"``),
    independently of make_classification's draws; then X is cast to ``dtype``
    (None: float64 kept)."""
    X, y = make_classification(n_samples, n_features, random_state=seed, **options)
    if missing:
        if missing_draws == "legacy":
            draws = np.random.RandomState(seed).rand(*X.shape)
        elif missing_draws == "generator":
            draws = np.random.default_rng(seed).random(X.shape)
        else:
            raise ValueError(f"missing_draws: 'legacy' or 'generator', not {missing_draws!r}")
        X[draws < missing] = np.nan
    if dtype is not None:
        X = X.astype(dtype)
    return X, y


def dask_data(n=1500, n_features=6, n_classes=3, seed=0, missing=0.05):
    """The Dask modules' data set: float32, 4 informative features and 1
    redundant, classes in proportions 0.6, 0.3, 0.1 when there are three
    (balanced otherwise), 5% of the cells NaN (``missing``)."""
    weights = [0.6, 0.3, 0.1] if n_classes == 3 else None
    return classification(n, n_features, seed, missing=missing, dtype=np.float32,
                          n_informative=4, n_redundant=1, n_classes=n_classes,
                          weights=weights)
