"""Sparse training data: the CSC arrays the sparse splitters read, their bins
and their tables of distinct values, each computed once per fit from the
stored entries, the zeros counted rather than stored.

Everything here gives what its dense counterpart in `aucforest._binning` and
`aucforest._base` gives on ``X.toarray()``, so that a fit on a sparse matrix
grows the same trees (`aucforest._sparse_split`).
"""
import numpy as np
from scipy import sparse

from ._binning import LAST_EDGE, MISSING_CODE, QUANTILE_SAMPLE, bin_edges, edges_of_sorted
from ._binned import encode_column


def check_structure(X):
    """Raise ValueError unless the index arrays of scipy sparse X describe a
    matrix of its shape (scipy checks them when the matrix is built, not when
    its arrays are changed afterwards; an index outside the shape would be
    read or written out of bounds by every conversion and tree walk).

    CSR, CSC and BSR: ``indptr`` has one entry per row (column) plus one,
    starts at 0, never decreases and ends at the number of stored entries;
    ``indices`` lie in 0..n_columns - 1 (rows). COO: every coordinate lies
    within the shape. O(nnz); other formats have no index arrays to break.
    """
    kind = X.format.upper()
    if X.format in ("csr", "csc", "bsr"):
        n_major, n_minor = X.shape if X.format != "csc" else X.shape[::-1]
        if X.format == "bsr":  # indices count blocks
            n_major, n_minor = n_major // X.blocksize[0], n_minor // X.blocksize[1]
        major, minor = ("row", "column") if X.format != "csc" else ("column", "row")
        indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
        problem = None
        if indptr.ndim != 1 or indptr.shape[0] != n_major + 1:
            problem = (f"indptr has {indptr.size} entries, expected {n_major + 1} (one per "
                       f"{major} plus one)")
        elif indptr[0] != 0:
            problem = f"indptr starts at {indptr[0]}, not 0"
        elif np.any(np.diff(indptr) < 0):
            at = int(np.flatnonzero(np.diff(indptr) < 0)[0])
            problem = f"indptr decreases from {indptr[at]} to {indptr[at + 1]} at {major} {at}"
        elif indices.ndim != 1 or indices.shape[0] != X.data.shape[0]:
            problem = (f"indices hold {indices.size} entries and data {X.data.shape[0]}; "
                       "they must be equal")
        elif indptr[-1] != indices.shape[0]:
            problem = (f"indptr ends at {indptr[-1]}, but indices and data hold "
                       f"{indices.shape[0]} entries")
        elif indices.size and (indices.min() < 0 or indices.max() >= n_minor):
            bad = indices[(indices < 0) | (indices >= n_minor)][0]
            problem = (f"indices hold {minor} index {bad}, outside 0..{n_minor - 1} (X has "
                       f"{n_minor} {minor}s)")
        if problem is not None:
            raise ValueError(f"sparse X ({kind}, shape {X.shape}) is malformed: {problem}")
    elif X.format == "coo":
        for axis, name in enumerate(("row", "column")):
            coords = np.asarray(X.coords[axis])
            outside = (coords < 0) | (coords >= X.shape[axis])
            if coords.shape[0] != X.data.shape[0] or outside.any():
                bad = f"{name} {coords[outside][0]}" if outside.any() else "coordinates"
                raise ValueError(f"sparse X (COO, shape {X.shape}) is malformed: its {name} "
                                 f"index holds {bad}, outside the shape")


def canonical(X, format):
    """X (a scipy sparse matrix or array) in ``format`` ("csc" or "csr") with
    sorted indices and no duplicate entries (duplicates are summed, as
    ``toarray`` does); the caller's matrix is never modified.

    Raises ValueError when summed duplicates leave the range of X's dtype, as
    dense validation refuses the infinite value ``X.toarray()`` would hold.
    """
    X = X.asformat(format)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
        if np.isinf(X.data).any():
            raise ValueError(f"Input X contains infinity or a value too large for "
                             f"{X.dtype!r}: entries stored twice in one cell sum to it")
    return X


class SparseColumns:
    """A canonical CSC matrix as the arrays `SparseExactSplitter` reads.

    Attributes
    ----------
    data : float32 (nnz,), stored values (NaN: missing)
    indices : intp (nnz,), their rows, ascending within a column
    indptr : intp (n_features + 1,), column j at ``indptr[j]:indptr[j + 1]``
    shape : (n_samples, n_features)
    row_structure : (row_indices, row_indptr), intp: the CSR structure of X
        (no values), from which the splitters list the features stored in a
        node's cases
    """

    def __init__(self, X):
        X = canonical(X, "csc")
        self.data = np.ascontiguousarray(X.data, dtype=np.float32)
        self.indices = np.ascontiguousarray(X.indices, dtype=np.intp)
        self.indptr = np.ascontiguousarray(X.indptr, dtype=np.intp)
        self.shape = X.shape
        rows = X.tocsr()  # the columns stored in each row, without the values
        self.row_structure = (np.ascontiguousarray(rows.indices, dtype=np.intp),
                              np.ascontiguousarray(rows.indptr, dtype=np.intp))

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
    indices, indptr, row_structure : the CSC and CSR structures, as `SparseColumns`
    zero_codes : uint8 (n_features,), the code of 0.0 in each feature
    edges, n_bins : as `aucforest._binning.BinnedData`
    shape : (n_samples, n_features)
    """

    def __init__(self, entry_codes, indices, indptr, row_structure, zero_codes, edges, n_bins,
                 shape):
        self.entry_codes, self.indices, self.indptr = entry_codes, indices, indptr
        self.row_structure = row_structure
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


def column_distinct(columns):
    """The sorted distinct observed values of every column of `SparseColumns`
    (0.0 included when the column has rows that store nothing), computed for
    all columns at once.

    Returns
    -------
    values : float32, the distinct values, column after column
    offsets : intp (n_features + 1,), column j's at ``values[offsets[j]:offsets[j + 1]]``
    entry_rank : intp (nnz,), each stored value's index among its column's
        distinct values (-1 for NaN)
    n_observed : intp (n_features,), the column's observed values, zeros included
    """
    n_samples, n_features = columns.shape
    stored = np.diff(columns.indptr)
    column_of = np.repeat(np.arange(n_features), stored)
    observed = ~np.isnan(columns.data)
    with_zeros = np.flatnonzero(stored < n_samples)  # one 0.0 stands for their zeros
    values = np.concatenate([columns.data[observed], np.zeros(with_zeros.size, np.float32)])
    owners = np.concatenate([column_of[observed], with_zeros])
    order = np.lexsort((values, owners))
    values, owners = values[order], owners[order]
    first = np.ones(values.size, dtype=bool)
    first[1:] = (owners[1:] != owners[:-1]) | (values[1:] != values[:-1])
    offsets = np.zeros(n_features + 1, dtype=np.intp)
    np.cumsum(np.bincount(owners[first], minlength=n_features), out=offsets[1:])
    rank = np.empty(values.size, dtype=np.intp)
    rank[order] = np.cumsum(first) - 1 - offsets[owners]
    entry_rank = np.full(columns.data.shape[0], -1, dtype=np.intp)
    entry_rank[observed] = rank[:np.count_nonzero(observed)]
    n_observed = np.bincount(column_of[observed], minlength=n_features) + n_samples - stored
    return values[first], offsets, entry_rank, n_observed


def bin_sparse_features(X, max_bins, random_state):
    """`aucforest._binning.bin_features` of a sparse X, from its stored entries.

    The quantiles are computed on the same rows (drawn from random_state when
    X has more than QUANTILE_SAMPLE rows), so the edges are those of the dense
    X. A column with at most max_bins distinct values, most columns of sparse
    data, gets one bin per value: edges and codes of all of them are computed
    at once from their distinct values.
    """
    columns = SparseColumns(X)
    n_samples, n_features = columns.shape
    entry_codes = np.empty(columns.data.shape[0], dtype=np.uint8)
    zero_codes = np.zeros(n_features, dtype=np.uint8)
    edges = np.full((n_features, max_bins), np.inf)
    n_bins = np.ones(n_features, dtype=np.intp)
    sample, by_value = columns, np.zeros(n_features, dtype=bool)
    if n_samples > QUANTILE_SAMPLE:
        rows = np.sort(random_state.choice(n_samples, QUANTILE_SAMPLE, replace=False))
        sample = SparseColumns(canonical(X, "csr")[rows])
    else:  # one bin per distinct value where there are few
        distinct, offsets, entry_rank, _ = column_distinct(columns)
        n_distinct = np.diff(offsets)
        by_value = n_distinct <= max_bins
        owners = np.repeat(np.arange(n_features), n_distinct)
        pair = (owners[1:] == owners[:-1]) & by_value[owners[1:]]  # consecutive values
        lower = distinct[:-1][pair].astype(np.float64)
        upper = distinct[1:][pair].astype(np.float64)
        midpoints = (lower / 2 + upper / 2).astype(np.float32)
        midpoints = np.where(midpoints < distinct[1:][pair], midpoints, distinct[:-1][pair])
        pair_owner = owners[1:][pair]
        edges[pair_owner, np.flatnonzero(pair) - offsets[pair_owner]] = midpoints
        n_bins[by_value] = np.maximum(n_distinct[by_value], 1)
        edges[by_value, n_bins[by_value] - 1] = LAST_EDGE
        zero_codes[:] = np.bincount(pair_owner[midpoints < 0], minlength=n_features)
        entry_codes[:] = np.where(entry_rank < 0, MISSING_CODE, entry_rank)
    for f in np.flatnonzero(~by_value):  # quantile edges (or edges of sampled rows)
        values = sample.column(f)
        observed = values[~np.isnan(values)]
        feature_edges = sparse_bin_edges(observed, sample.shape[0] - values.size, max_bins)
        n_bins[f] = feature_edges.size + 1
        edges[f, :feature_edges.size] = feature_edges
        edges[f, feature_edges.size] = LAST_EDGE
        lo, hi = columns.indptr[f], columns.indptr[f + 1]
        if hi > lo:
            encode_column(columns.data[lo:hi], feature_edges, entry_codes[lo:hi])
        zero_codes[f] = np.count_nonzero(feature_edges < 0)  # edges below 0.0
    return SparseBinnedData(entry_codes, columns.indices, columns.indptr,
                            columns.row_structure, zero_codes, edges, n_bins, columns.shape)


def sparse_distinct_value_tables(X, tied_share):
    """`aucforest._base.distinct_value_tables` of a sparse X (`SparseColumns`):
    the sorted distinct values, zero included when a row stores nothing, of
    each column whose observed values repeat another more than tied_share of
    the time."""
    distinct, offsets, _, n_observed = column_distinct(X)
    n_distinct = np.diff(offsets)
    tabled = n_observed - n_distinct > tied_share * n_observed
    kept = np.repeat(tabled, n_distinct)
    table_offsets = np.zeros(X.shape[1] + 1, dtype=np.intp)
    np.cumsum(np.where(tabled, n_distinct, 0), out=table_offsets[1:])
    return distinct[kept].astype(np.float32), table_offsets


def is_sparse(X):
    """Whether X is a scipy sparse matrix or array."""
    return sparse.issparse(X)
