"""Folds: every system of a study sees the same splits.

``cv_splits`` is the repeated stratified k-fold of the imbalance suite
(3 folds x 5 repeats, seed 0); fold f's estimators use random_state
``fold_seed(f)`` (SEED + f, plus a seed offset in the forest-seed study).
The splits depend on y and the seed only, never on the system.
"""
import numpy as np
from sklearn.model_selection import RepeatedStratifiedKFold

from .data import SEED


def cv_splits(y, n_splits=3, n_repeats=5, seed=SEED):
    """List of (train, test) index arrays of repeated stratified k-fold CV."""
    cv = RepeatedStratifiedKFold(n_splits=n_splits, n_repeats=n_repeats, random_state=seed)
    return list(cv.split(np.zeros((len(y), 1)), y))


def fold_seed(fold, offset=0):
    """random_state of the estimators of a fold."""
    return SEED + fold + offset


def membership(splits, n):
    """n x folds 0/1 matrix: 1 where the row trains in that fold (the R peers read it)."""
    out = np.zeros((n, len(splits)), dtype=int)
    for f, (train, _) in enumerate(splits):
        out[train, f] = 1
    return out


def stratified_splits(y, n_splits=5, seed=SEED):
    """List of (train, test) index arrays of one shuffled stratified k-fold
    (scikit-learn's StratifiedKFold, random_state=seed): the folds of the
    issue-41 studies, the same for every method and every study."""
    from sklearn.model_selection import StratifiedKFold
    cv = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    return list(cv.split(np.zeros((len(y), 1)), y))
