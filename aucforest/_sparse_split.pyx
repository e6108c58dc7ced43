# cython: language_level=3
"""The splitters on a sparse X (CSC: each column's stored entries, zeros implicit).

They grow the same trees as the dense splitters on ``X.toarray()`` (same
splits, same node order): only how a node's values of a feature are found
changes, as in scikit-learn's sparse splitter.

A node's stored entries of a column are looked up one of two ways, whichever
costs less for the ratio of the column's stored entries to the node's cases:
a binary search of each case's row among the column's rows (n log nnz), or a
pass over the column's stored entries, each placed by its row (nnz).

`SparseExactSplitter` gathers the node's values (zeros where nothing is
stored) and, in a large node, sorts them as one block of zeros between the
sorted negative and positive values, so that only stored values are sorted;
the result is the order `sort_by_value` gives (a stable sort: ties keep their
order), so the drawn thresholds and the partitions are those of the dense
splitter. `SparseBinnedSplitter` adds the node's stored entries to the bin
histogram and the zeros at once to the bin of 0.0: their cases are the node's
minus the stored ones, class by class, and their weights likewise. NaN stored
in the matrix is a missing value, as NaN in a dense X.
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

from ._binned cimport MISSING_CODE
from ._sort cimport RADIX_MIN_SIZE, sort_by_value
from ._split cimport SplitRecord, _midpoint

from libc.math cimport INFINITY

import numpy as np


cdef inline bint _search_is_cheaper(idx_t n_cases, idx_t n_stored) noexcept nogil:
    """Whether binary searches of n_cases rows among n_stored sorted rows
    (n_cases log2 n_stored steps) cost less than a pass over the n_stored."""
    cdef idx_t steps = 1
    while (<idx_t> 1 << steps) < n_stored:
        steps += 1
    return n_cases * steps < n_stored


cdef inline idx_t _lower_bound(const idx_t* rows, idx_t lo, idx_t hi, idx_t row) noexcept nogil:
    """First index in [lo, hi) of the ascending rows whose row is >= row (hi if none)."""
    cdef idx_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if rows[mid] < row:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef int _init_node_features(NodeFeatures* nf, const idx_t[::1] row_indptr,
                             const idx_t[::1] row_indices, idx_t n_features) except -1:
    """Point nf at X's rows; no node listed yet."""
    cdef idx_t j
    nf.row_indptr = &row_indptr[0]
    nf.row_indices = &row_indices[0] if row_indices.shape[0] > 0 else NULL
    nf.stamp = <idx_t*> malloc(max(n_features, 1) * sizeof(idx_t))
    if nf.stamp == NULL:
        raise MemoryError("cannot allocate the sparse splitter's feature stamps")
    for j in range(n_features):
        nf.stamp[j] = -1
    nf.node = -1
    nf.start = nf.end = -1
    return 0


cdef inline bint _stored_in_node(NodeFeatures* nf, const idx_t* samples, idx_t start,
                                 idx_t end, idx_t feature) noexcept nogil:
    """Whether some case of samples[start:end] stores a value of the feature.

    The first question about a node lists its features (a pass over its rows'
    stored entries); a feature stored in none of its cases is 0 throughout, so
    constant, found without looking at its column: in a deep node of sparse
    data most drawn features are.
    """
    cdef idx_t i, k, row
    if start != nf.start or end != nf.end:
        nf.node += 1
        nf.start, nf.end = start, end
        for i in range(start, end):
            row = samples[i]
            for k in range(nf.row_indptr[row], nf.row_indptr[row + 1]):
                nf.stamp[nf.row_indices[k]] = nf.node
    return nf.stamp[feature] == nf.node


cdef class SparseExactSplitter(ExactSplitter):
    """`ExactSplitter` on the columns of a CSC matrix.

    Parameters
    ----------
    data : float32 (nnz,), indices : intp (nnz,), indptr : intp (n_features + 1,)
        The CSC arrays of X in canonical form (rows ascending within a
        column, no duplicates); stored NaN marks a missing value.
    n_rows : int
        Rows of X.
    y, w, n_classes, criterion, max_features, min_samples_leaf,
    min_weight_leaf, seed, nsplit, tables
        as for `ExactSplitter` (tables of the dense X, zeros included).
    """

    def __init__(self, const X_t[::1] data, const idx_t[::1] indices, const idx_t[::1] indptr,
                 const idx_t[::1] row_indices, const idx_t[::1] row_indptr,
                 idx_t n_rows, const idx_t[::1] y, const double[::1] w, idx_t n_classes,
                 int criterion, idx_t max_features, idx_t min_samples_leaf,
                 double min_weight_leaf, uint64_t seed, idx_t nsplit=0, tables=None,
                 bint random_threshold=False):
        if data.shape[0] != indices.shape[0] or indptr.shape[0] < 1 \
                or indptr[indptr.shape[0] - 1] != data.shape[0]:
            raise ValueError("data, indices and indptr do not describe one CSC matrix")
        if row_indptr.shape[0] != n_rows + 1 or row_indices.shape[0] != indices.shape[0]:
            raise ValueError("row_indices and row_indptr must be the CSR structure of X")
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.row_indices = row_indices
        self.row_indptr = row_indptr
        self._init_exact(n_rows, indptr.shape[0] - 1, y, w, n_classes, criterion,
                         max_features, min_samples_leaf, min_weight_leaf, seed, nsplit, tables,
                         None, False, True)  # no categorical feature
        if random_threshold and nsplit > 0:
            raise ValueError("random_threshold draws one threshold per feature; nsplit must be 0")
        self.random_threshold = random_threshold  # drawn between _gather's lo and hi
        self.row_value = <X_t*> calloc(max(n_rows, 1), sizeof(X_t))
        self.block_samples = <idx_t*> malloc(max(self.n_active, 1) * sizeof(idx_t))
        self.block_values = <X_t*> malloc(max(self.n_active, 1) * sizeof(X_t))
        self.block_order = <idx_t*> malloc(max(self.n_active, 1) * sizeof(idx_t))
        if (self.row_value == NULL or self.block_samples == NULL or self.block_values == NULL
                or self.block_order == NULL):
            raise MemoryError("cannot allocate the sparse splitter's buffers")
        _init_node_features(&self.node_features, row_indptr, row_indices, self.n_features)

    def __dealloc__(self):
        free(self.node_features.stamp)
        free(self.row_value)
        free(self.block_samples)
        free(self.block_values)
        free(self.block_order)

    cdef int _examine_feature(self, idx_t feature, idx_t start, idx_t end,
                              SplitRecord* best) noexcept nogil:
        """`ExactSplitter._examine_feature`; 0 at once for a feature that no
        case of the node stores (all zero)."""
        if not _stored_in_node(&self.node_features, self.samples, start, end, feature):
            return 0
        return ExactSplitter._examine_feature(self, feature, start, end, best)

    cdef idx_t _gather(self, idx_t feature, idx_t start, idx_t end, X_t* lo,
                       X_t* hi) noexcept nogil:
        """xf[start:end] = the feature's values of samples[start:end] (0 where
        nothing is stored), by binary search or through row_value."""
        cdef idx_t first = self.indptr[feature], stop = self.indptr[feature + 1], i, k
        cdef const idx_t* rows = &self.indices[0] if stop > first else NULL
        cdef const X_t* data = &self.data[0] if stop > first else NULL
        cdef idx_t n_missing = 0
        cdef X_t v, smallest = INFINITY, largest = -INFINITY
        if stop == first:
            memset(self.xf + start, 0, (end - start) * sizeof(X_t))
        elif _search_is_cheaper(end - start, stop - first):
            for i in range(start, end):
                k = _lower_bound(rows, first, stop, self.samples[i])
                self.xf[i] = data[k] if k < stop and rows[k] == self.samples[i] else 0.0
        else:
            for k in range(first, stop):
                self.row_value[rows[k]] = data[k]
            for i in range(start, end):
                self.xf[i] = self.row_value[self.samples[i]]
            for k in range(first, stop):
                self.row_value[rows[k]] = 0.0
        for i in range(start, end):
            v = self.xf[i]
            if v != v:
                n_missing += 1
            else:
                smallest = min(smallest, v)
                largest = max(largest, v)
        lo[0] = smallest
        hi[0] = largest
        return n_missing

    cdef void _sort_node(self, idx_t start, idx_t end) noexcept nogil:
        """`sort_by_value`'s order of xf[start:end] (samples alike). A node of
        RADIX_MIN_SIZE cases or more is sorted stably there (ties keep their
        order), which here takes one stable pass that groups the negative
        values, the zeros, the positive values and the NaNs, and a stable
        sort of the negative and of the positive block: the zeros, most of a
        sparse column, are never sorted."""
        cdef idx_t n = end - start, i, n_negative = 0, n_zero = 0, n_positive = 0
        cdef idx_t at_negative, at_zero, at_positive, at_missing, target
        cdef X_t v
        if n < RADIX_MIN_SIZE:  # sorted by (value, sample): the dense splitter's sort
            ExactSplitter._sort_node(self, start, end)
            return
        for i in range(start, end):
            v = self.xf[i]
            n_negative += v < 0.0
            n_zero += v == 0.0
            n_positive += v > 0.0
        at_negative = 0
        at_zero = n_negative
        at_positive = n_negative + n_zero
        at_missing = at_positive + n_positive
        for i in range(start, end):
            v = self.xf[i]
            if v < 0.0:
                target = at_negative
                at_negative += 1
            elif v == 0.0:
                target = at_zero
                at_zero += 1
                v = 0.0  # -0.0 sorts (and comes out of sort_by_value) as +0.0
            elif v > 0.0:
                target = at_positive
                at_positive += 1
            else:
                target = at_missing
                at_missing += 1
            self.block_samples[target] = self.samples[i]
            self.block_values[target] = v
        memcpy(self.samples + start, self.block_samples, n * sizeof(idx_t))
        memcpy(self.xf + start, self.block_values, n * sizeof(X_t))
        self._sort_block(start, start + n_negative)
        self._sort_block(start + n_negative + n_zero, start + n_negative + n_zero + n_positive)

    cdef void _sort_block(self, idx_t lo, idx_t hi) noexcept nogil:
        """Stable sort of xf[lo:hi] (samples alike): sort_by_value on (value,
        position) keys, which are unique, then the samples permuted alike."""
        cdef idx_t m = hi - lo, j
        if m < 2:
            return
        for j in range(m):
            self.block_order[j] = j
        sort_by_value(self.xf + lo, self.block_order, m, self.sort_keys, self.sort_scratch,
                      self.sort_histogram)
        for j in range(m):
            self.block_samples[j] = self.samples[lo + self.block_order[j]]
        memcpy(self.samples + lo, self.block_samples, m * sizeof(idx_t))

    cdef void _partition(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil:
        """`ExactSplitter._partition` on the gathered values of the split feature."""
        cdef idx_t lo = start, hi = end
        cdef X_t v, smallest, largest, lowest_right = INFINITY
        self._gather(best.feature, start, end, &smallest, &largest)
        while lo < hi:
            v = self.xf[lo]
            if v <= best.threshold or (v != v and best.missing_left):
                lo += 1
            else:
                if v < lowest_right:  # NaN never is
                    lowest_right = v
                hi -= 1
                self.samples[lo], self.samples[hi] = self.samples[hi], self.samples[lo]
                self.xf[lo], self.xf[hi] = self.xf[hi], self.xf[lo]
        best.pos = lo
        if best.bin >= 0 and lowest_right < INFINITY and not self.random_threshold:
            best.threshold = _midpoint(best.threshold, lowest_right)


cdef class SparseBinnedSplitter(BinnedSplitter):
    """`BinnedSplitter` on the bin codes of a CSC matrix's stored entries.

    Parameters
    ----------
    entry_codes : uint8 (nnz,), the stored values' codes (MISSING_CODE for NaN)
    indices : intp (nnz,), indptr : intp (n_features + 1,)
        The CSC structure (rows ascending within a column, no duplicates).
    zero_codes : uint8 (n_features,), the code of 0.0 in each feature
    edges, n_bins : as for `BinnedSplitter`
    n_rows : int
    y, w, n_classes, criterion, max_features, min_samples_leaf,
    min_weight_leaf, seed, nsplit
        as for `BinnedSplitter`.
    """

    def __init__(self, const uint8_t[::1] entry_codes, const idx_t[::1] indices,
                 const idx_t[::1] indptr, const idx_t[::1] row_indices,
                 const idx_t[::1] row_indptr, const uint8_t[::1] zero_codes,
                 const double[:, ::1] edges, const idx_t[::1] n_bins, idx_t n_rows,
                 const idx_t[::1] y, const double[::1] w, idx_t n_classes, int criterion,
                 idx_t max_features, idx_t min_samples_leaf, double min_weight_leaf,
                 uint64_t seed, *, idx_t nsplit=0):
        cdef idx_t i, n_features = indptr.shape[0] - 1
        if entry_codes.shape[0] != indices.shape[0] or n_features < 0 \
                or indptr[n_features] != indices.shape[0] or zero_codes.shape[0] != n_features:
            raise ValueError("entry_codes, indices, indptr and zero_codes do not describe "
                             "one CSC matrix")
        if row_indptr.shape[0] != n_rows + 1 or row_indices.shape[0] != indices.shape[0]:
            raise ValueError("row_indices and row_indptr must be the CSR structure of X")
        self.entry_codes = entry_codes
        self.indices = indices
        self.indptr = indptr
        self.row_indices = row_indices
        self.row_indptr = row_indptr
        self.zero_codes = zero_codes
        self._init_binned(n_rows, n_features, edges, n_bins, y, w, n_classes, criterion,
                          max_features, min_samples_leaf, min_weight_leaf, seed, nsplit,
                          None, False, True)  # no categorical feature
        self.position = <idx_t*> malloc(max(n_rows, 1) * sizeof(idx_t))
        self.found_position = <idx_t*> malloc(max(self.n_active, 1) * sizeof(idx_t))
        self.found_code = <uint8_t*> malloc(max(self.n_active, 1) * sizeof(uint8_t))
        self.node_codes = <uint8_t*> malloc(max(self.n_active, 1) * sizeof(uint8_t))
        self.node_cases = <idx_t*> calloc(n_classes, sizeof(idx_t))
        self.stored_cases = <idx_t*> calloc(n_classes, sizeof(idx_t))
        self.stored_weight = <double*> calloc(n_classes, sizeof(double))
        if (self.position == NULL or self.found_position == NULL or self.found_code == NULL
                or self.node_codes == NULL or self.node_cases == NULL
                or self.stored_cases == NULL or self.stored_weight == NULL):
            raise MemoryError("cannot allocate the sparse binned splitter's buffers")
        _init_node_features(&self.node_features, row_indptr, row_indices, n_features)
        for i in range(n_rows):
            self.position[i] = -1
        for i in range(self.n_active):
            self.position[self.samples[i]] = i

    def __dealloc__(self):
        free(self.node_features.stamp)
        free(self.position)
        free(self.found_position)
        free(self.found_code)
        free(self.node_codes)
        free(self.node_cases)
        free(self.stored_cases)
        free(self.stored_weight)

    cdef idx_t node_reset(self, idx_t start, idx_t end) noexcept nogil:
        """`Splitter.node_reset`, and the node's cases per class (node_cases),
        from which each feature's zeros are counted."""
        cdef idx_t i
        memset(self.node_cases, 0, self.n_classes * sizeof(idx_t))
        for i in range(start, end):
            self.node_cases[self.y[self.samples[i]]] += 1
        return BinnedSplitter.node_reset(self, start, end)

    cdef idx_t _find_entries(self, idx_t feature, idx_t start, idx_t end) noexcept nogil:
        """The node's stored entries of the feature, by index in samples
        (ascending: a node's samples stay in row order, the partition being
        stable) into found_position and found_code; returns their number."""
        cdef idx_t first = self.indptr[feature], stop = self.indptr[feature + 1]
        cdef idx_t i, k, p, n_found = 0
        cdef const idx_t* rows
        if stop == first:
            return 0
        rows = &self.indices[0]
        if _search_is_cheaper(end - start, stop - first):
            for i in range(start, end):  # rows ascending: each search starts at the last
                first = _lower_bound(rows, first, stop, self.samples[i])
                if first == stop:
                    break
                if rows[first] == self.samples[i]:
                    self.found_position[n_found] = i
                    self.found_code[n_found] = self.entry_codes[first]
                    n_found += 1
        else:
            for k in range(first, stop):
                p = self.position[rows[k]]
                if start <= p < end:
                    self.found_position[n_found] = p
                    self.found_code[n_found] = self.entry_codes[k]
                    n_found += 1
        return n_found

    cdef int _examine_feature(self, idx_t feature, idx_t start, idx_t end,
                              SplitRecord* best) noexcept nogil:
        """`BinnedSplitter._examine_feature` from the node's stored entries:
        each is added to its bin, and the node's other cases (zeros) to the
        bin of 0.0 at once, their class counts and weights being the node's
        minus the stored entries'."""
        cdef idx_t K = self.n_classes, j, k, s, n_found, n_zero, n_occupied, n_buckets
        cdef idx_t* buckets = self.occupied_bins
        cdef uint8_t zero_code = self.zero_codes[feature], code
        cdef uint8_t* bin_target = self.bin_target
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef uint64_t occupied[4]
        cdef bint drawn = False
        if not _stored_in_node(&self.node_features, self.samples, start, end, feature):
            return 0  # all zero: one occupied bin
        n_found = self._find_entries(feature, start, end)
        n_zero = end - start - n_found
        occupied[0] = occupied[1] = occupied[2] = occupied[3] = 0
        for j in range(n_found):
            code = self.found_code[j]
            occupied[code >> 6] |= (<uint64_t> 1) << (code & 63)
        if n_zero > 0:
            occupied[zero_code >> 6] |= (<uint64_t> 1) << (zero_code & 63)
        n_occupied = self._list_occupied_bins(occupied)
        if 0 < self.nsplit < end - start - 1 and self.nsplit < n_occupied - 1:
            n_buckets = self._draw_bins(n_occupied)
            buckets, drawn = self.drawn_bins, True
        else:
            n_buckets = n_occupied
        memset(self.stored_cases, 0, K * sizeof(idx_t))
        memset(self.stored_weight, 0, K * sizeof(double))
        for j in range(n_found):
            s = self.samples[self.found_position[j]]
            code = bin_target[self.found_code[j]]
            self.hist_count[code] += 1
            self.hist_weight[code * K + y[s]] += w[s]
            self.stored_cases[y[s]] += 1
            self.stored_weight[y[s]] += w[s]
        if n_zero > 0:
            code = bin_target[zero_code]
            self.hist_count[code] += n_zero
            for k in range(K):
                if self.node_cases[k] > self.stored_cases[k]:
                    self.hist_weight[code * K + k] += (self.crit.node_counts[k]
                                                       - self.stored_weight[k])
        if 8 <= K <= 64:  # BinnedSplitter's class masks
            for j in range(n_found):
                s = self.samples[self.found_position[j]]
                self.hist_classes[bin_target[self.found_code[j]]] |= (<uint64_t> 1) << y[s]
            if n_zero > 0:
                for k in range(K):
                    if self.node_cases[k] > self.stored_cases[k]:
                        self.hist_classes[bin_target[zero_code]] |= (<uint64_t> 1) << k
        return self._scan_histogram(feature, start, end, n_occupied, buckets, n_buckets,
                                    drawn, best)

    cdef void _partition(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil:
        """`BinnedSplitter._partition` on the node's codes (0.0's where nothing
        is stored), then each moved row's new index in samples."""
        cdef idx_t i, j, s, lo = start, n_right = 0, n_found
        cdef idx_t threshold_bin = best.bin
        cdef bint missing_left = best.missing_left
        cdef uint8_t code
        memset(self.node_codes, self.zero_codes[best.feature], end - start)
        n_found = self._find_entries(best.feature, start, end)
        for j in range(n_found):
            self.node_codes[self.found_position[j] - start] = self.found_code[j]
        for i in range(start, end):
            s = self.samples[i]
            code = self.node_codes[i - start]
            if code <= threshold_bin or (code == MISSING_CODE and missing_left):
                self.samples[lo] = s
                lo += 1
            else:
                self.partition_scratch[n_right] = s
                n_right += 1
        memcpy(self.samples + lo, self.partition_scratch, n_right * sizeof(idx_t))
        for i in range(start, end):
            self.position[self.samples[i]] = i
        best.pos = lo


def sort_node_for_tests(values, samples):
    """`SparseExactSplitter._sort_node` of float32 ``values`` carried with the
    distinct sample indices ``samples`` (a permutation of 0..n-1); returns
    (values, samples), to compare with `aucforest._sort.sort_for_tests`."""
    cdef idx_t i, n = len(values)
    cdef SparseExactSplitter splitter = SparseExactSplitter(
        np.zeros(0, np.float32), np.zeros(0, np.intp), np.zeros(2, np.intp),
        np.zeros(0, np.intp), np.zeros(n + 1, np.intp), n,
        np.zeros(n, np.intp), np.ones(n), 2, 1, 1, 1, 0.0, 0)
    for i in range(n):
        splitter.xf[i] = values[i]
        splitter.samples[i] = samples[i]
    splitter._sort_node(0, n)
    return (np.array([splitter.xf[i] for i in range(n)], dtype=np.float32),
            np.array([splitter.samples[i] for i in range(n)], dtype=np.intp))
