# cython: language_level=3
"""The binned splitter: histograms of pre-binned features instead of sorting.

Features are binned once per fit (`aucforest._binning`): each value becomes
a uint8 code, `code <= b` exactly when `x <= edges[f, b]` for float32 x, and
NaN gets its own code. For each drawn feature a node then costs one pass over
its cases, adding weighted class counts per bin (a bins x K histogram), and a
scan over the bin boundaries (`Splitter._scan_buckets`, shared with the exact
splitter's drawn thresholds) that moves each bin's class counts through the
same criterion (`_criterion`) as the exact splitter: O(K) per moved class for
AUC, O(1) for Gini and entropy. Only occupied bins are scanned and cleared,
so a node costs O(cases + occupied bins x K), small nodes included.

With ``nsplit`` > 0 only the edges of nsplit of the node's occupied bins,
drawn uniformly without replacement (the last one excepted), are candidate
thresholds, as the exact splitter draws among the node's distinct values
(randomForestSRC's ``nsplit``): a pass over the cases finds the occupied
bins, and the histogram pass then adds each case to the bucket between the
drawn edges that holds its bin.

Candidates, tie rule, missing values (scanned right, then left) and leaf
bounds (min_samples_leaf counts distinct cases) are those of the exact
splitter; the thresholds are bin edges, so a tree grown on the codes
predicts from real-valued X unchanged. Samples are partitioned stably, so
each node's samples stay in ascending order and the per-feature gathers
walk memory forwards. Under weights other than 1 (bootstrap multiplicities)
a node's classes and weights are copied once, in its sample order, so that
each feature's pass gathers only the codes.
"""
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

import numpy as np

from ._bits cimport bit_count as _bit_count
from ._bits cimport lowest_bit as _lowest_bit
from ._criterion cimport X_t
from ._split cimport level_goes_left
from ._buckets cimport bucket_threshold, draw_buckets

# From this many classes on (and up to 64), a pass over the node records which
# classes each bin holds, so that the scan moves only those instead of looking
# at all K per bin (at K = 3 such records cost more than they save).
cdef enum:
    CLASS_MASK_MIN_CLASSES = 8
    CLASS_MASK_MAX_CLASSES = 64

# The pass that finds a node's occupied bins stops once every value bin of
# the feature is occupied (no further case can add one), checked after each
# this many cases: in the large nodes near the root that happens within a
# few thousand cases.
cdef enum:
    OCCUPANCY_CHECK_CASES = 256


cdef inline idx_t _value_bins_occupied(const uint64_t* occupied) noexcept nogil:
    """Value bins set in a 256-bit mask of occupied codes (the missing code not counted)."""
    return (_bit_count(occupied[0]) + _bit_count(occupied[1]) + _bit_count(occupied[2])
            + _bit_count(occupied[3] & ~((<uint64_t> 1) << (MISSING_CODE & 63))))


cdef class BinnedSplitter(Splitter):
    """Finds the best split of a node from per-bin class counts.

    Parameters
    ----------
    codes : uint8 array (n_samples, n_features), Fortran order, MISSING_CODE for NaN
    edges : float64 array (n_features, n_edge_columns): edges[f, b] is the
        largest float32 value with code b (the last bin's entry is FLT_MAX)
    n_bins : intp array (n_features,), value bins of each feature (<= 255)
    y, w, n_classes, criterion, max_features, min_samples_leaf, min_weight_leaf, seed
        as for `ExactSplitter`
    nsplit : int, default 0
        0: the edge of every occupied bin is a candidate threshold. k > 0: in
        each node, for each examined feature, the edges of k of its occupied
        bins drawn uniformly without replacement (the last excepted); a node
        with at most k + 1 occupied bins is scanned in full.
    is_categorical : bool array (n_features,) or None
        Categorical features, whose code is the level itself (one bin per
        level, `aucforest._binning`), split by a set of levels
        (`Splitter._scan_levels`; nsplit draws cut positions among the node's
        ordered levels). None: no categorical feature.
    order_once, rank_classes : bool, default False, True
        As for `ExactSplitter`.
    """

    def __init__(self, const uint8_t[::1, :] codes, const double[:, ::1] edges,
                 const idx_t[::1] n_bins, const idx_t[::1] y, const double[::1] w,
                 idx_t n_classes, int criterion, idx_t max_features,
                 idx_t min_samples_leaf, double min_weight_leaf, uint64_t seed, *,
                 idx_t nsplit=0, is_categorical=None, bint order_once=False,
                 bint rank_classes=True):
        self.codes = codes
        self._init_binned(codes.shape[0], codes.shape[1], edges, n_bins, y, w, n_classes,
                          criterion, max_features, min_samples_leaf, min_weight_leaf, seed,
                          nsplit, is_categorical, order_once, rank_classes)

    cdef void _init_binned(self, idx_t n_rows, idx_t n_features, const double[:, ::1] edges,
                           const idx_t[::1] n_bins, const idx_t[::1] y, const double[::1] w,
                           idx_t n_classes, int criterion, idx_t max_features,
                           idx_t min_samples_leaf, double min_weight_leaf, uint64_t seed,
                           idx_t nsplit, is_categorical, bint order_once,
                           bint rank_classes) except *:
        """What every binned splitter sets up, whatever holds the codes (the
        dense code matrix here, the stored entries' codes in
        `aucforest._sparse_split`): the bins and the histograms."""
        if edges.shape[0] != n_features or n_bins.shape[0] != n_features:
            raise ValueError("edges and n_bins must have one row per feature")
        cdef int code
        if nsplit < 0:
            raise ValueError(f"nsplit must be >= 0; got {nsplit}")
        self.nsplit = nsplit
        self.edges = edges
        self.n_bins = n_bins
        self._init_common(n_rows, n_features, y, w, n_classes, criterion,
                          max_features, min_samples_leaf, min_weight_leaf, seed)
        self._set_categorical(is_categorical, nsplit, order_once, rank_classes)
        self.hist_weight = <double*> calloc(N_CODES * n_classes, sizeof(double))
        self.hist_count = <idx_t*> calloc(N_CODES, sizeof(idx_t))
        self.hist_classes = <uint64_t*> calloc(N_CODES, sizeof(uint64_t))
        self.occupied_bins = <idx_t*> malloc(N_CODES * sizeof(idx_t))
        self.partition_scratch = <idx_t*> malloc(max(self.n_active, 1) * sizeof(idx_t))
        self.drawn_positions = <idx_t*> malloc(N_CODES * sizeof(idx_t))
        self.drawn_bins = <idx_t*> malloc(N_CODES * sizeof(idx_t))
        self.drawn_flags = <unsigned char*> calloc(N_CODES, sizeof(unsigned char))
        self.bin_target = <uint8_t*> malloc(N_CODES * sizeof(uint8_t))
        self.node_start = self.node_end = 0
        if self.y_byte != NULL and not self.unit_weights:  # unit weights: y_byte is enough
            self.node_class = <uint8_t*> malloc(max(self.n_active, 1) * sizeof(uint8_t))
            self.node_weight = <double*> malloc(max(self.n_active, 1) * sizeof(double))
            if self.node_class == NULL or self.node_weight == NULL:
                raise MemoryError("cannot allocate the binned splitter's node buffers")
        if (self.hist_weight == NULL or self.hist_count == NULL or self.hist_classes == NULL
                or self.occupied_bins == NULL or self.partition_scratch == NULL
                or self.drawn_positions == NULL or self.drawn_bins == NULL
                or self.drawn_flags == NULL or self.bin_target == NULL):
            raise MemoryError("cannot allocate the binned splitter's histograms")
        for code in range(N_CODES):
            self.bin_target[code] = <uint8_t> code

    def __dealloc__(self):
        free(self.hist_weight)
        free(self.hist_count)
        free(self.hist_classes)
        free(self.occupied_bins)
        free(self.partition_scratch)
        free(self.drawn_positions)
        free(self.drawn_bins)
        free(self.drawn_flags)
        free(self.bin_target)
        free(self.node_class)
        free(self.node_weight)

    def read_weights_as_given(self):
        """`Splitter.read_weights_as_given`, and gather each case's class and
        weight in every feature's pass instead of reading the node's copies
        (for tests: the reference that the copies must equal)."""
        Splitter.read_weights_as_given(self)
        free(self.node_class)
        free(self.node_weight)
        self.node_class = NULL
        self.node_weight = NULL

    cdef idx_t node_reset(self, idx_t start, idx_t end) noexcept nogil:
        """`Splitter.node_reset`, and each case's class and weight in the
        node's sample order (node_class, node_weight): the histogram passes
        over the node's features then read them in sequence instead of
        gathering both per feature (the same values, added in the same order)."""
        cdef idx_t i, s
        cdef const double* w = &self.w[0]
        if self.node_class != NULL:
            for i in range(start, end):
                s = self.samples[i]
                self.node_class[i] = self.y_byte[s]
                self.node_weight[i] = w[s]
            self.node_start, self.node_end = start, end
        return Splitter.node_reset(self, start, end)

    cdef int _examine_feature(self, idx_t feature, idx_t start, idx_t end,
                              SplitRecord* best) noexcept nogil:
        """Histogram of the node's cases over the feature's bins, then the scan of
        the bin boundaries with missing cases right, then left; 0 when constant.

        A 256-bit mask records which bins are occupied, so that the scan and the
        clearing of the histogram (left all zero for the next feature) cost the
        number of occupied bins, not the number of bins: small nodes stay cheap.
        When nsplit thresholds may be drawn, a first pass finds the occupied
        bins, the draw assigns each to the bucket that takes it (`_draw_bins`),
        and the histogram pass adds each case straight into its bucket.
        """
        cdef idx_t K = self.n_classes, i, s, n_occupied, first, last
        cdef const uint8_t* column = &self.codes[0, 0] + feature * self.n_rows
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef const uint8_t* y_byte = self.y_byte
        cdef const idx_t* samples = self.samples
        cdef double* hist_weight = self.hist_weight
        cdef idx_t* hist_count = self.hist_count
        cdef uint64_t* hist_classes = self.hist_classes
        cdef bint track_classes = CLASS_MASK_MIN_CLASSES <= K <= CLASS_MASK_MAX_CLASSES
        cdef uint8_t* bin_target = self.bin_target
        # the node's classes and weights in sample order (node_reset), when they are this node's
        cdef bint in_order = (self.node_class != NULL and self.node_start == start
                              and self.node_end == end)
        cdef const uint8_t* node_class = self.node_class
        cdef const double* node_weight = self.node_weight
        cdef uint64_t occupied[4]
        cdef uint8_t code
        cdef idx_t* buckets = self.occupied_bins
        cdef idx_t n_buckets
        cdef bint drawn = False
        occupied[0] = occupied[1] = occupied[2] = occupied[3] = 0
        if 0 < self.nsplit < end - start - 1:  # enough cases for a draw: find the bins first
            first = start
            while first < end:
                last = min(end, first + OCCUPANCY_CHECK_CASES)
                for i in range(first, last):
                    code = column[samples[i]]
                    occupied[code >> 6] |= (<uint64_t> 1) << (code & 63)
                if _value_bins_occupied(occupied) == self.n_bins[feature]:
                    break  # every bin is occupied: the rest cannot add one
                first = last
            n_occupied = self._list_occupied_bins(occupied)
            if self.nsplit < n_occupied - 1:
                n_buckets = self._draw_bins(n_occupied)
                buckets, drawn = self.drawn_bins, True
            if in_order:  # the same sums, read in sequence
                for i in range(start, end):
                    code = bin_target[column[samples[i]]]
                    hist_count[code] += 1
                    hist_weight[code * K + node_class[i]] += node_weight[i]
            elif self.unit_weights and y_byte != NULL:  # the same sums, fewer cache lines
                for i in range(start, end):
                    s = samples[i]
                    code = bin_target[column[s]]
                    hist_count[code] += 1
                    hist_weight[code * K + y_byte[s]] += 1.0
            else:
                for i in range(start, end):
                    s = samples[i]
                    code = bin_target[column[s]]
                    hist_count[code] += 1
                    hist_weight[code * K + y[s]] += w[s]
        elif in_order:  # the same sums, read in sequence
            for i in range(start, end):
                code = column[samples[i]]
                occupied[code >> 6] |= (<uint64_t> 1) << (code & 63)
                hist_count[code] += 1
                hist_weight[code * K + node_class[i]] += node_weight[i]
            n_occupied = self._list_occupied_bins(occupied)
        elif self.unit_weights and y_byte != NULL:
            for i in range(start, end):
                s = samples[i]
                code = column[s]
                occupied[code >> 6] |= (<uint64_t> 1) << (code & 63)
                hist_count[code] += 1
                hist_weight[code * K + y_byte[s]] += 1.0
            n_occupied = self._list_occupied_bins(occupied)
        else:
            for i in range(start, end):
                s = samples[i]
                code = column[s]
                occupied[code >> 6] |= (<uint64_t> 1) << (code & 63)
                hist_count[code] += 1
                hist_weight[code * K + y[s]] += w[s]
            n_occupied = self._list_occupied_bins(occupied)
        if not drawn:
            n_buckets = n_occupied
        if track_classes:  # a pass of its own: no test per case in the histogram pass
            for i in range(start, end):
                s = samples[i]
                hist_classes[bin_target[column[s]]] |= (<uint64_t> 1) << y_byte[s]
        return self._scan_histogram(feature, start, end, n_occupied, buckets, n_buckets,
                                    drawn, best)

    cdef int _scan_histogram(self, idx_t feature, idx_t start, idx_t end, idx_t n_occupied,
                             idx_t* buckets, idx_t n_buckets, bint drawn,
                             SplitRecord* best) noexcept nogil:
        """Scan the histogram of the node's cases filled by `_examine_feature`
        (n_occupied value bins, taken as the n_buckets ``buckets``, drawn ones
        when ``drawn``), then clear it; 0 when the feature is constant."""
        cdef idx_t K = self.n_classes, i, j, b, n_missing
        cdef const idx_t* present = self.crit.present_classes
        cdef int missing_left
        cdef double* hist_weight = self.hist_weight
        cdef idx_t* hist_count = self.hist_count
        cdef uint64_t* hist_classes = self.hist_classes
        cdef bint track_classes = CLASS_MASK_MIN_CLASSES <= K <= CLASS_MASK_MAX_CLASSES
        cdef uint8_t* bin_target = self.bin_target
        n_missing = hist_count[MISSING_CODE]
        if n_occupied > 1 or (n_occupied == 1 and n_missing > 0):
            # split after each bucket (codes <= b left), as the exact scan does
            # after each distinct value, or after each drawn one
            for missing_left in range(2 if n_missing > 0 else 1):
                self._scan_buckets(feature, hist_weight, hist_count,
                                   hist_classes if track_classes else NULL, buckets, n_buckets,
                                   hist_weight + MISSING_CODE * K, n_missing,
                                   end - start, missing_left, best)
        # only the node's classes have weight in its histogram (when few of many
        # classes are present, clearing the others would dominate a small node)
        for i in range(n_buckets):
            b = buckets[i]
            hist_count[b] = 0
            hist_classes[b] = 0
            for j in range(self.crit.n_present):
                hist_weight[b * K + present[j]] = 0.0
        if drawn:
            for i in range(n_occupied):
                b = self.occupied_bins[i]
                bin_target[b] = <uint8_t> b
        hist_count[MISSING_CODE] = 0
        hist_classes[MISSING_CODE] = 0
        for j in range(self.crit.n_present):
            hist_weight[MISSING_CODE * K + present[j]] = 0.0
        return n_occupied > 1 or (n_occupied == 1 and n_missing > 0)

    cdef int _examine_levels(self, idx_t feature, idx_t start, idx_t end,
                             SplitRecord* best) noexcept nogil:
        """Histogram of the node's cases over a categorical feature's levels
        (its codes), then `Splitter._scan_levels`; 0 when constant."""
        cdef idx_t K = self.n_classes, i, s, b, k, n_occupied, n_missing
        cdef const uint8_t* column = &self.codes[0, 0] + feature * self.n_rows
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef const idx_t* samples = self.samples
        cdef double* hist_weight = self.hist_weight
        cdef idx_t* hist_count = self.hist_count
        cdef uint64_t occupied[4]
        cdef uint8_t code
        cdef int found
        occupied[0] = occupied[1] = occupied[2] = occupied[3] = 0
        for i in range(start, end):
            s = samples[i]
            code = column[s]
            occupied[code >> 6] |= (<uint64_t> 1) << (code & 63)
            hist_count[code] += 1
            hist_weight[code * K + y[s]] += w[s]
        n_occupied = self._list_occupied_bins(occupied)
        n_missing = hist_count[MISSING_CODE]
        found = self._scan_levels(feature, hist_weight, hist_count, self.occupied_bins,
                                  n_occupied, hist_weight + MISSING_CODE * K, n_missing,
                                  end - start, best)
        for i in range(n_occupied):
            b = self.occupied_bins[i]
            hist_count[b] = 0
            for k in range(K):
                hist_weight[b * K + k] = 0.0
        hist_count[MISSING_CODE] = 0
        for k in range(K):
            hist_weight[MISSING_CODE * K + k] = 0.0
        return found

    cdef idx_t _list_occupied_bins(self, uint64_t* occupied) noexcept nogil:
        """Fill occupied_bins with the value bins set in the 256-bit mask,
        ascending (the missing code left out); returns their number."""
        cdef idx_t word, n_occupied = 0
        cdef uint64_t bits
        occupied[MISSING_CODE >> 6] &= ~((<uint64_t> 1) << (MISSING_CODE & 63))
        for word in range(4):
            bits = occupied[word]
            while bits:
                self.occupied_bins[n_occupied] = word * 64 + _lowest_bit(bits)
                n_occupied += 1
                bits &= bits - 1
        return n_occupied

    cdef idx_t _draw_bins(self, idx_t n_occupied) noexcept nogil:
        """Draw nsplit of the first n_occupied - 1 occupied bins (uniformly,
        without replacement) and point every occupied bin at its bucket: the
        first drawn bin at or above it, or the last occupied bin above the last
        drawn one (bin_target, restored by the caller). Fills drawn_bins
        (ascending, the last occupied bin at the end) and returns their number,
        nsplit + 1.
        """
        return draw_buckets(&self.rng_state, self.nsplit, n_occupied, self.occupied_bins,
                            self.drawn_positions, self.drawn_flags, self.bin_target,
                            self.drawn_bins)

    cdef double _bucket_threshold(self, idx_t feature, idx_t bucket) noexcept nogil:
        """The upper edge of bin `bucket` (`bucket_threshold`)."""
        return bucket_threshold(self.categorical, self.edges, feature, bucket)

    cdef void _partition(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil:
        """Stable partition: cases with code <= best.bin, or with a level in
        best.left_levels (categorical), and missing ones when they go left, in
        front, each side keeping its order."""
        cdef const uint8_t* column = &self.codes[0, 0] + best.feature * self.n_rows
        cdef idx_t i, s, lo = start, n_right = 0
        cdef idx_t threshold_bin = best.bin
        cdef bint missing_left = best.missing_left, categorical = best.categorical, goes_left
        cdef uint8_t code
        self.node_start = self.node_end = 0  # the samples move: node_class and node_weight stale
        for i in range(start, end):
            s = self.samples[i]
            code = column[s]
            if code == MISSING_CODE:
                goes_left = missing_left
            elif categorical:
                goes_left = level_goes_left(best.left_levels, code)
            else:
                goes_left = code <= threshold_bin
            if goes_left:
                self.samples[lo] = s
                lo += 1
            else:
                self.partition_scratch[n_right] = s
                n_right += 1
        memcpy(self.samples + lo, self.partition_scratch, n_right * sizeof(idx_t))
        best.pos = lo


cdef enum:
    # rows whose bin codes are searched side by side: their searches are
    # independent, so the processor overlaps the loads of one with the others'
    ENCODE_LANES = 16
    # a feature's edges padded with +inf to this many entries, so that every
    # search takes the same eight halving steps (codes 0..254)
    N_PADDED = 256
    SEARCH_STEPS = 8          # log2(N_PADDED)

PADDED_EDGES = N_PADDED  # for Python callers


cdef inline void _encode_lanes(X_t* values, idx_t n, const X_t* padded,
                               uint8_t* codes, idx_t stride) noexcept nogil:
    """codes[j * stride] = number of entries of ``padded`` below values[j] (j
    < n <= ENCODE_LANES), MISSING_CODE for NaN: eight branch-free halving
    steps, the lanes side by side (a fixed count, so that the compiler
    unrolls them; the lanes from n on search a dummy 0)."""
    cdef idx_t position[ENCODE_LANES]
    cdef idx_t j, halving, step
    for j in range(n, ENCODE_LANES):
        values[j] = 0
    for j in range(ENCODE_LANES):
        position[j] = 0
    for halving in range(SEARCH_STEPS):
        step = (N_PADDED // 2) >> halving
        for j in range(ENCODE_LANES):  # independent searches, one step each
            position[j] += step * (padded[position[j] + step - 1] < values[j])
    for j in range(n):
        codes[j * stride] = MISSING_CODE if values[j] != values[j] else <uint8_t> position[j]


def padded_edges(edges):
    """float32 (PADDED_EDGES,) copy of ascending ``edges`` (fewer than 255) with
    +inf after them: the table `encode_column` and `encode_features` search."""
    edges = np.asarray(edges, dtype=np.float32)
    if edges.ndim != 1 or edges.shape[0] >= MISSING_CODE:
        raise ValueError("there must be fewer than 255 edges")
    padded = np.full(PADDED_EDGES, np.inf, dtype=np.float32)
    padded[:edges.shape[0]] = edges
    return padded


def encode_column(const X_t[::1] column, edges, uint8_t[::1] codes):
    """codes[i] = number of edges below column[i] (so code <= b <=> x <= edges[b]),
    MISSING_CODE for NaN; edges ascending, at most 254 of them. Branch-free
    binary search over the edges padded with +inf, nogil."""
    cdef const X_t[::1] padded = padded_edges(edges)
    cdef idx_t i = 0, j, m, n = column.shape[0]
    cdef X_t values[ENCODE_LANES]
    if codes.shape[0] != n:
        raise ValueError("codes must match column")
    with nogil:
        while i < n:
            m = min(<idx_t> ENCODE_LANES, n - i)
            for j in range(m):
                values[j] = column[i + j]
            _encode_lanes(values, m, &padded[0], &codes[i], 1)
            i += ENCODE_LANES


def encode_features(const X_t[:, :] X, const X_t[:, ::1] padded, const idx_t[::1] features,
                    uint8_t[:, :] codes, idx_t start, idx_t end):
    """codes[i, f] for rows start <= i < end and each f in ``features``: the
    number of entries of padded[f] (`padded_edges`) below X[i, f], MISSING_CODE
    for NaN. X and codes in any memory order: a block of rows is read once
    for all features. nogil, so that threads can encode disjoint row ranges."""
    cdef idx_t i = start, j, m, f, t, n_features = features.shape[0]
    cdef idx_t row_stride = codes.strides[0]
    cdef X_t values[ENCODE_LANES]
    if codes.shape[0] != X.shape[0] or codes.shape[1] != X.shape[1] \
            or padded.shape[0] != X.shape[1] or padded.shape[1] != N_PADDED \
            or not 0 <= start <= end <= X.shape[0]:
        raise ValueError("X, padded edges, codes and the row range do not match")
    for t in range(n_features):
        if not 0 <= features[t] < X.shape[1]:
            raise ValueError("feature index out of range")
    with nogil:
        while i < end:
            m = min(<idx_t> ENCODE_LANES, end - i)
            for t in range(n_features):
                f = features[t]
                for j in range(m):
                    values[j] = X[i + j, f]
                _encode_lanes(values, m, &padded[f, 0], &codes[i, f], row_stride)
            i += ENCODE_LANES


def gather_columns(const X_t[:, :] X, const idx_t[::1] rows, idx_t first, idx_t last):
    """float32 array (last - first, len(rows)): column f of X[rows] in row
    f - first, the features first..last - 1; X in any memory order, each row
    read once (a feature's values, contiguous, for sorting)."""
    cdef idx_t i, f, row, n = rows.shape[0]
    if not 0 <= first <= last <= X.shape[1]:
        raise ValueError("features out of range")
    for i in range(n):
        if not 0 <= rows[i] < X.shape[0]:
            raise ValueError("row index out of range")
    columns = np.empty((last - first, n), dtype=np.float32)
    cdef X_t[:, ::1] out = columns
    with nogil:
        for i in range(n):
            row = rows[i]
            for f in range(first, last):
                out[f - first, i] = X[row, f]
    return columns
