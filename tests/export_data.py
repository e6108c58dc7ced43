"""Rows the export tests share: numeric features whose class depends on the
first ones, NaN where it tells the class and where the fit saw none."""
import numpy as np


def make_data(n, n_classes=2, seed=0, missing=0.2):
    """Numeric rows whose class depends on the first features; NaN in column 1 (a
    predictive column, so that splits on it learn where NaN goes) and none in column 2."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    score = X[:, 0] + 0.8 * X[:, 1] + 0.5 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    X[rng.random(n) < missing, 1] = np.nan
    X[(y == n_classes - 1) & (rng.random(n) < missing), 3] = np.nan  # NaN tells the class
    return X, y


def held_out(n, seed=1):
    """Rows to predict: NaN in columns 1 and 3, and in column 2, which had none at fit."""
    X, _ = make_data(n, seed=seed, missing=0.25)
    X[np.random.default_rng(seed).random(n) < 0.2, 2] = np.nan
    return X
