"""Sparse training data: the CSC arrays the sparse splitters read, their bins
and their tables of distinct values, each computed once per fit from the
stored entries, the zeros counted rather than stored.

Everything here gives what its dense counterpart in `aucforest._binning` and
`aucforest._base` gives on ``X.toarray()``, so that a fit on a sparse matrix
grows the same trees (`aucforest._sparse_split`).
"""
import numpy as np
from scipy import sparse

from ._binning import LAST_EDGE, QUANTILE_SAMPLE, bin_edges, edges_of_sorted
from ._binned import encode_column


def canonical(X, format):
    """X (a scipy sparse matrix or array) in ``format`` ("csc" or "csr") with
    sorted indices and no duplicate entries (duplicates are summed, as
    ``toarray`` does); the caller's matrix is never modified."""
    X = X.asformat(format)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


class SparseColumns:
    """A canonical CSC matrix as the arrays `SparseExactSplitter` reads.

    Attributes
    ----------
    data : float32 (nnz,), stored values (NaN: missing)
    indices : intp (nnz,), their rows, ascending within a column
    indptr : intp (n_features + 1,), column j at ``indptr[j]:indptr[j + 1]``
    shape : (n_samples, n_features)
    """

    def __init__(self, X):
        X = canonical(X, "csc")
        self.data = np.ascontiguousarray(X.data, dtype=np.float32)
        self.indices = np.ascontiguousarray(X.indices, dtype=np.intp)
        self.indptr = np.ascontiguousarray(X.indptr, dtype=np.intp)
        self.shape = X.shape

    def column(self, j):
        """Stored values of column j."""
        return self.data[self.indptr[j]:self.indptr[j + 1]]


class SparseRows:
    """A canonical CSR matrix as the arrays tree traversal reads (`aucforest._tree`).

    Attributes
    ----------
    data : float32 (nnz,), stored values (NaN: missing)
    indices : intp (nnz,), their columns, ascending within a row
    indptr : intp (n_samples + 1,), row i at ``indptr[i]:indptr[i + 1]``
    shape : (n_samples, n_features)
    """

    def __init__(self, X):
        X = canonical(X, "csr")
        self.data = np.ascontiguousarray(X.data, dtype=np.float32)
        self.indices = np.ascontiguousarray(X.indices, dtype=np.intp)
        self.indptr = np.ascontiguousarray(X.indptr, dtype=np.intp)
        self.shape = X.shape

    def __getitem__(self, rows):
        """Rows ``lo:hi`` (a slice with step 1), sharing data and indices."""
        lo, hi, step = rows.indices(self.shape[0])
        if step != 1:
            raise ValueError("SparseRows takes slices of consecutive rows only")
        part = object.__new__(SparseRows)
        part.data, part.indices = self.data, self.indices
        part.indptr = self.indptr[lo:max(hi, lo) + 1]
        part.shape = (max(hi - lo, 0), self.shape[1])
        return part


class SparseBinnedData:
    """Bin codes of a sparse X's stored entries, with the edges that define them.

    Attributes
    ----------
    entry_codes : uint8 (nnz,), the stored values' codes (255: missing)
    indices, indptr : the CSC structure, as `SparseColumns`
    zero_codes : uint8 (n_features,), the code of 0.0 in each feature
    edges, n_bins : as `aucforest._binning.BinnedData`
    shape : (n_samples, n_features)
    """

    def __init__(self, entry_codes, indices, indptr, zero_codes, edges, n_bins, shape):
        self.entry_codes, self.indices, self.indptr = entry_codes, indices, indptr
        self.zero_codes, self.edges, self.n_bins, self.shape = zero_codes, edges, n_bins, shape


def sparse_bin_edges(stored, n_zeros, max_bins):
    """`bin_edges` of a column holding the non-missing ``stored`` values and
    ``n_zeros`` zeros that are not stored."""
    if n_zeros == 0:
        return bin_edges(stored, max_bins)
    stored = np.sort(stored)
    at = np.searchsorted(stored, 0.0, side="left")  # where the zeros sit in sorted order
    distinct = np.unique(np.concatenate([stored, np.zeros(1, dtype=np.float32)]))

    def value_at(index):  # the index-th smallest value of the whole column
        after = np.clip(index - n_zeros, 0, max(stored.size - 1, 0))
        before = np.clip(index, 0, max(stored.size - 1, 0))
        if stored.size == 0:
            return np.zeros(index.shape, dtype=np.float32)
        return np.where(index < at, stored[before],
                        np.where(index < at + n_zeros, np.float32(0.0), stored[after]))

    return edges_of_sorted(value_at, stored.size + n_zeros, distinct, max_bins)


def bin_sparse_features(X, max_bins, random_state):
    """`aucforest._binning.bin_features` of a sparse X, from its stored entries.

    The quantiles are computed on the same rows (drawn from random_state when
    X has more than QUANTILE_SAMPLE rows), so the edges are those of the dense X.
    """
    columns = SparseColumns(X)
    n_samples, n_features = columns.shape
    sample = columns
    if n_samples > QUANTILE_SAMPLE:
        rows = np.sort(random_state.choice(n_samples, QUANTILE_SAMPLE, replace=False))
        sample = SparseColumns(canonical(X, "csr")[rows])
    n_sample_rows = sample.shape[0]
    entry_codes = np.empty(columns.data.shape[0], dtype=np.uint8)
    zero_codes = np.empty(n_features, dtype=np.uint8)
    edges = np.full((n_features, max_bins), np.inf)
    n_bins = np.empty(n_features, dtype=np.intp)
    for f in range(n_features):
        values = sample.column(f)
        observed = values[~np.isnan(values)]
        feature_edges = sparse_bin_edges(observed, n_sample_rows - values.size, max_bins)
        n_bins[f] = feature_edges.size + 1
        edges[f, :feature_edges.size] = feature_edges
        edges[f, feature_edges.size] = LAST_EDGE
        lo, hi = columns.indptr[f], columns.indptr[f + 1]
        if hi > lo:
            encode_column(columns.data[lo:hi], feature_edges, entry_codes[lo:hi])
        zero_codes[f] = np.count_nonzero(feature_edges < 0)  # edges below 0.0
    return SparseBinnedData(entry_codes, columns.indices, columns.indptr, zero_codes, edges,
                            n_bins, columns.shape)


def sparse_distinct_value_tables(X, tied_share):
    """`aucforest._base.distinct_value_tables` of a sparse X (`SparseColumns`):
    the sorted distinct values, zero included when a row stores nothing, of
    each column whose observed values repeat another more than tied_share of
    the time."""
    n_samples, n_features = X.shape
    tables = []
    for j in range(n_features):
        values = X.column(j)
        observed = values[~np.isnan(values)]
        n_zeros = n_samples - values.size
        distinct = np.unique(observed if n_zeros == 0 else
                             np.concatenate([observed, np.zeros(1, dtype=np.float32)]))
        n_observed = observed.size + n_zeros
        tables.append(distinct if n_observed - distinct.size > tied_share * n_observed
                      else distinct[:0])
    offsets = np.concatenate([[0], np.cumsum([t.size for t in tables])]).astype(np.intp)
    return np.concatenate(tables).astype(np.float32), offsets


def is_sparse(X):
    """Whether X is a scipy sparse matrix or array."""
    return sparse.issparse(X)
