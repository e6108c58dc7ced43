"""Quantile binning of the training features for the binned splitter.

Each feature gets at most `max_bins` value bins with float32 upper edges
e_0 < e_1 < ...; a value's code is the number of edges below it, so that
``code <= b`` exactly when ``x <= e_b`` for every float32 x, and the tree can
store e_b as an ordinary threshold. NaN gets the reserved code 255. A feature
with at most `max_bins` distinct values gets one bin per value (edges between
consecutive values); otherwise the edges are quantiles of the values, as in
scikit-learn's HistGradientBoosting and LightGBM.

A categorical feature (level codes 0..254, checked by the caller) gets one
bin per level whatever `max_bins`: its code is the level itself (levels
absent from the data leave empty bins), missing values the missing code. Its
splits are level sets, so its edges are not used (+inf).
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._binned import (PADDED_EDGES, encode_column, encode_features, gather_columns,
                      padded_edges)

MISSING_CODE = 255
MAX_BINS = 255
QUANTILE_SAMPLE = 200_000     # rows used for the quantiles when n is larger
LAST_EDGE = float(np.finfo(np.float32).max)   # upper edge of the last bin


class BinnedData:
    """Training features as uint8 bin codes, with the edges that define them.

    Attributes
    ----------
    codes : uint8 array (n_samples, n_features), Fortran order; 255 = missing
    edges : float64 array (n_features, max_bins): edges[f, b] is the threshold
        ``x <= edges[f, b]`` equivalent to ``code <= b``; the last bin's entry
        is the largest float32, unused entries are +inf
    n_bins : intp array (n_features,), value bins per feature (a categorical
        feature: its largest level + 1)
    is_categorical : bool array (n_features,) or None
        The categorical features (their code is the level).
    """

    def __init__(self, codes, edges, n_bins, is_categorical=None):
        self.codes, self.edges, self.n_bins = codes, edges, n_bins
        self.is_categorical = is_categorical
        self.shape = codes.shape

    def transform(self, X):
        """Codes of new float32 rows X under these edges (for tests and checks)."""
        X = np.asarray(X, dtype=np.float32)
        codes = np.empty(X.shape, dtype=np.uint8, order="F")
        for f in range(X.shape[1]):
            if self.is_categorical is not None and self.is_categorical[f]:
                codes[:, f] = _level_codes(X[:, f])
            else:
                codes[:, f] = _codes(X[:, f], self.edges[f, :self.n_bins[f] - 1])
        return codes


def bin_edges(values, max_bins):
    """float32 upper edges (at most max_bins - 1) of one feature's observed values."""
    return bin_edges_of_sorted(np.sort(values), max_bins)


def bin_edges_of_sorted(values, max_bins):
    """`bin_edges` of sorted values (no NaN)."""
    distinct = values[np.concatenate(([True], values[1:] != values[:-1]))] if values.size else values
    return edges_of_sorted(values.__getitem__, values.size, distinct, max_bins)


def edges_of_sorted(value_at, n_values, distinct, max_bins):
    """`bin_edges` of n_values sorted values, given by ``value_at(indices)``
    (so that they need not be stored: the zeros of a sparse column), whose
    distinct values are ``distinct`` (sorted)."""
    if distinct.size <= 1:
        return np.empty(0, dtype=np.float32)
    if distinct.size <= max_bins:
        lower = distinct[:-1].astype(np.float64)
        upper = distinct[1:].astype(np.float64)
        edges = (lower / 2 + upper / 2).astype(np.float32)
        # a midpoint that rounds up to the upper value (adjacent float32s) falls back to the lower
        edges = np.where(edges < distinct[1:], edges, distinct[:-1])
        return edges
    # quantiles of the sorted values, numpy's "midpoint" method
    position = np.linspace(0, 1, max_bins + 1)[1:-1] * (n_values - 1)
    below = value_at(np.floor(position).astype(np.intp)).astype(np.float64)
    above = value_at(np.ceil(position).astype(np.intp)).astype(np.float64)
    edges = np.unique((below / 2 + above / 2).astype(np.float32))
    return edges[edges < distinct[-1]]   # no empty bin above the largest value


def _codes(column, edges):
    codes = np.empty(column.shape[0], dtype=np.uint8)
    encode_column(np.ascontiguousarray(column, dtype=np.float32), edges, codes)
    return codes


def _level_codes(column):
    """A categorical column's codes: the level (0..254), MISSING_CODE for NaN
    (and for codes outside 0..254, which the estimators refuse beforehand; the
    exact splitter and prediction treat them as missing too)."""
    missing = ~((column >= 0) & (column < MISSING_CODE))  # NaN compares False
    return np.where(missing, MISSING_CODE, np.where(missing, 0, column)).astype(np.uint8)


def set_feature_edges(f, values, max_bins, edges, n_bins):
    """Feature f's row of ``edges`` and its ``n_bins`` (value bins) from its
    sampled values (float32, NaN for missing; sorted in place, numpy sorting
    without the GIL): `bin_edges` of the observed ones, then LAST_EDGE, the
    +inf padding left as it is. Returns the feature's edges. Shared by
    `bin_features` and the fit on dask collections (`aucforest._dask`)."""
    values.sort()  # NaN last
    feature_edges = bin_edges_of_sorted(values[:np.searchsorted(np.isnan(values), True)],
                                        max_bins)
    n_bins[f] = feature_edges.size + 1
    edges[f, :feature_edges.size] = feature_edges
    edges[f, feature_edges.size] = LAST_EDGE
    return feature_edges


# bin_features gathers the sampled values of this many features x rows at a
# time (a range of features), so that a wide X is never copied whole
_SAMPLE_GATHER_VALUES = 1 << 23


def bin_features(X, max_bins, random_state, is_categorical=None, n_threads=1):
    """Bin float32 X (n_samples, n_features) into at most max_bins bins per feature.

    Edges come from the quantiles of each feature's non-missing values, computed
    on at most QUANTILE_SAMPLE rows drawn without replacement from random_state
    (a numpy RandomState) when there are more rows. The features marked in
    ``is_categorical`` (bool array or None) get one bin per level. X may be in
    either memory order: the sampled rows are gathered once for a range of
    features, each feature's values contiguous, and the codes are computed
    over blocks of rows, all features at once. ``n_threads`` threads sort the
    features' samples and encode ranges of rows; the result does not depend
    on their number.
    """
    X = np.asarray(X, dtype=np.float32)  # the kernels read float32 (no copy when it is)
    n_samples, n_features = X.shape
    sampled = np.arange(n_samples)
    if n_samples > QUANTILE_SAMPLE:
        sampled = np.sort(random_state.choice(n_samples, QUANTILE_SAMPLE, replace=False))
    codes = np.empty((n_samples, n_features), dtype=np.uint8, order="F")
    edges = np.full((n_features, max_bins), np.inf)
    n_bins = np.empty(n_features, dtype=np.intp)
    categorical = np.zeros(n_features, dtype=bool) if is_categorical is None \
        else np.asarray(is_categorical, dtype=bool)
    for f in np.flatnonzero(categorical):
        codes[:, f] = _level_codes(X[:, f])
        observed = codes[:, f][codes[:, f] != MISSING_CODE]
        n_bins[f] = int(observed.max()) + 1 if observed.size else 1
    ordinal = np.flatnonzero(~categorical)
    padded = np.full((n_features, PADDED_EDGES), np.inf, dtype=np.float32)  # categorical: unused

    def find_edges(f, values):  # values: f's sampled values, sorted in place
        padded[f] = padded_edges(set_feature_edges(f, values, max_bins, edges, n_bins))

    def encode(bounds):
        encode_features(X, padded, ordinal, codes, *bounds)

    per_gather = max(1, _SAMPLE_GATHER_VALUES // max(sampled.size, 1))
    cuts = np.linspace(0, n_samples, max(1, n_threads) + 1).astype(np.intp)
    if ordinal.size:
        with ThreadPoolExecutor(max(1, n_threads)) as threads:
            for first in range(0, n_features, per_gather):
                last = min(first + per_gather, n_features)
                values = gather_columns(X, sampled, first, last)
                wanted = ordinal[(ordinal >= first) & (ordinal < last)]
                list(threads.map(find_edges, wanted, (values[f - first] for f in wanted)))
            list(threads.map(encode, zip(cuts[:-1], cuts[1:])))
    return BinnedData(codes, edges, n_bins,
                      None if is_categorical is None else categorical)
