"""Independent reference implementations used by the tests (naive formulas,
brute force), written from the papers and never calling the package."""
import itertools

import numpy as np


def naive_auc_statistic(table):
    """theta(L, R) of the AUC splitting vignette, computed pair by pair.

    For each pair k1 < k2 of classes present: alpha = n_k1R / n_k1,
    beta = n_k2R / n_k2, U_{k1,k2} = (1 - alpha + beta)/2,
    U_{k2,k1} = (1 - beta + alpha)/2; theta = 2/(K(K-1)) sum max(U, U').
    """
    table = np.asarray(table, dtype=float)
    present = [k for k in range(table.shape[0]) if table[k].sum() > 0]
    K = len(present)
    total = 0.0
    for k1, k2 in itertools.combinations(present, 2):
        alpha = table[k1, 1] / table[k1].sum()
        beta = table[k2, 1] / table[k2].sum()
        total += max((1 - alpha + beta) / 2, (1 - beta + alpha) / 2)
    return 2.0 / (K * (K - 1)) * total


def gini(counts):
    counts = np.asarray(counts, dtype=float)
    p = counts / counts.sum()
    return 1.0 - np.sum(p ** 2)


def entropy(counts):
    counts = np.asarray(counts, dtype=float)
    p = counts[counts > 0] / counts.sum()
    return -np.sum(p * np.log2(p))


def split_table(x, y, w, threshold, n_classes):
    """(K, 2) weighted class counts of the split x <= threshold."""
    left = x <= threshold
    return np.column_stack([np.bincount(y[left], weights=w[left], minlength=n_classes),
                            np.bincount(y[~left], weights=w[~left], minlength=n_classes)])


def split_value(table, criterion):
    """theta for "auc"; 1/2 + (theta - 1/2) / (2 sqrt(q (1 - q))) for "auc_ecp"
    (q the share of the weight sent right); weighted impurity decrease for
    "gini"/"entropy"."""
    if criterion == "auc":
        return naive_auc_statistic(table)
    if criterion == "auc_ecp":
        q = table[:, 1].sum() / table.sum()
        return 0.5 + (naive_auc_statistic(table) - 0.5) / (2 * np.sqrt(q * (1 - q)))
    impurity = gini if criterion == "gini" else entropy
    n_left, n_right = table[:, 0].sum(), table[:, 1].sum()
    return impurity(table.sum(axis=1)) - (
        n_left * impurity(table[:, 0]) + n_right * impurity(table[:, 1])) / (n_left + n_right)


def brute_force_best(X, y, w, criterion, min_samples_leaf=1):
    """Best split value over every feature and every midpoint between distinct values."""
    n_classes = y.max() + 1
    best = -np.inf
    for f in range(X.shape[1]):
        values = np.unique(X[:, f])
        for a, b in zip(values[:-1], values[1:]):
            threshold = a / 2 + b / 2
            left = X[:, f] <= threshold
            if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
                continue
            best = max(best, split_value(split_table(X[:, f], y, w, threshold, n_classes), criterion))
    return best


def table_of(goes_left, y, w, n_classes):
    """(K, 2) weighted class counts of the cases going left and right."""
    return np.column_stack([np.bincount(y[goes_left], weights=w[goes_left], minlength=n_classes),
                            np.bincount(y[~goes_left], weights=w[~goes_left], minlength=n_classes)])


def midpoints(x):
    """Midpoints between consecutive distinct observed (non-NaN) values of x."""
    values = np.unique(x[~np.isnan(x)])
    return values[:-1] / 2 + values[1:] / 2


def best_split_with_missing(X, y, w, criterion, min_samples_leaf, thresholds):
    """Best split value over x <= t, for every feature f and t in thresholds(f)
    that leaves observed values on both sides, with the missing (NaN) cases
    sent left and right, plus "observed left, missing right"."""
    n_classes = y.max() + 1
    best = -np.inf
    for f in range(X.shape[1]):
        x = X[:, f]
        missing = np.isnan(x)
        partitions = []
        for t in thresholds(f):
            below = ~missing & (x <= t)
            if below.any() and (~missing & ~below).any():
                partitions += [below, below | missing]
        if missing.any() and (~missing).any():
            partitions.append(~missing)
        for left in partitions:
            if min(left.sum(), (~left).sum()) < min_samples_leaf:
                continue
            best = max(best, split_value(table_of(left, y, w, n_classes), criterion))
    return best
