# cython: language_level=3
"""The client's histogram splitter of the Dask fit (`aucforest._dask`).

`HistogramSplitter`: on the client, the split of a node from the summed
histograms with the binned splitter's scan (`Splitter._scan_buckets`, the
same criteria, tie rule, missing-value scan, nsplit draw and leaf bounds);
a categorical feature's histogram (one bin per level) with its level-set
scan (`Splitter._scan_levels`). `feature_order`: a node's feature
permutation from its key; `node_impurity`: as the trees store it.
"""
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

import numpy as np

from aucforest._criterion cimport (criterion_improvement, criterion_init, idx_t,
                          node_impurity as _node_impurity)
from aucforest._split cimport SplitRecord, Splitter, level_goes_left, reset_split
from aucforest._buckets cimport bucket_threshold, draw_buckets
from aucforest._random cimport random_below as _random_below
from aucforest._dask._draws cimport _hash

cdef enum:
    MISSING_CODE = 255
    N_CODES = 256


def node_impurity(const double[::1] counts, int criterion):
    """Gini impurity or entropy (bits) of weighted class counts, as the trees store it."""
    return _node_impurity(&counts[0], counts.shape[0], criterion)


cdef class HistogramSplitter(Splitter):
    """The best split of a node from its summed bin histograms (on the client).

    The scan is the binned splitter's (`aucforest._binned`): per examined
    feature the occupied value bins (``nsplit`` of them drawn uniformly
    without replacement, the last excepted, when the node has more than
    nsplit + 1 cases and bins), missing values scanned right and then left,
    min_samples_leaf counted in distinct cases, ties to the first candidate
    in scan order. What differs is where the random numbers come from: the
    feature order is a permutation drawn from the node's key, and each
    feature's bin draw from (node key, feature), so that no draw depends on
    the order in which nodes are reached or on which histograms were asked
    for first (PLANET, Panda et al. VLDB 2009; Spark MLlib's
    RandomForest.findBestSplits choose splits on the driver alike).

    Parameters
    ----------
    edges : float64 (n_features, >= max n_bins), as `BinnedData.edges`
    n_features, n_classes, criterion, max_features, min_samples_leaf, nsplit
        As for `BinnedSplitter` (min_weight_leaf is given per node).
    is_categorical : bool (n_features,) or None
        Categorical features: their histogram has one bin per level code and
        is split by a set of levels (`Splitter._scan_levels`, as
        `BinnedSplitter._examine_levels`; nsplit draws cut positions among the
        node's ordered levels). None: none.
    """
    cdef const double[:, ::1] edges
    cdef idx_t nsplit
    cdef double* hist_weight          # (N_CODES * n_classes,) class weights per code
    cdef idx_t* hist_count            # (N_CODES,) distinct cases per code
    cdef idx_t* occupied_bins         # (N_CODES,) occupied value bins, ascending
    cdef idx_t* drawn_positions       # (N_CODES,)
    cdef idx_t* drawn_bins            # (N_CODES,)
    cdef unsigned char* drawn_flags   # (N_CODES,)
    cdef uint8_t* bin_target          # (N_CODES,) bucket bin of each code during a draw
    cdef double* left_counts          # (n_classes,)
    cdef double* right_counts         # (n_classes,)

    def __init__(self, const double[:, ::1] edges, idx_t n_features, idx_t n_classes,
                 int criterion, idx_t max_features, idx_t min_samples_leaf, idx_t nsplit,
                 is_categorical=None):
        cdef idx_t[::1] no_y = np.zeros(1, dtype=np.intp)
        cdef double[::1] no_w = np.zeros(1)
        self.edges = edges
        self.nsplit = nsplit
        self._init_common(0, n_features, no_y[:0], no_w[:0], n_classes, criterion,
                          max_features, min_samples_leaf, 0.0, 0)
        self._set_categorical(is_categorical, nsplit, False)
        self.hist_weight = <double*> calloc(N_CODES * n_classes, sizeof(double))
        self.hist_count = <idx_t*> calloc(N_CODES, sizeof(idx_t))
        self.occupied_bins = <idx_t*> malloc(N_CODES * sizeof(idx_t))
        self.drawn_positions = <idx_t*> malloc(N_CODES * sizeof(idx_t))
        self.drawn_bins = <idx_t*> malloc(N_CODES * sizeof(idx_t))
        self.drawn_flags = <unsigned char*> calloc(N_CODES, sizeof(unsigned char))
        self.bin_target = <uint8_t*> malloc(N_CODES * sizeof(uint8_t))
        self.left_counts = <double*> malloc(n_classes * sizeof(double))
        self.right_counts = <double*> malloc(n_classes * sizeof(double))
        if (self.hist_weight == NULL or self.hist_count == NULL or self.occupied_bins == NULL
                or self.drawn_positions == NULL or self.drawn_bins == NULL
                or self.drawn_flags == NULL or self.bin_target == NULL
                or self.left_counts == NULL or self.right_counts == NULL):
            raise MemoryError("cannot allocate the histogram splitter's buffers")
        cdef int code
        for code in range(N_CODES):
            self.bin_target[code] = <uint8_t> code

    def __dealloc__(self):
        free(self.hist_weight)
        free(self.hist_count)
        free(self.occupied_bins)
        free(self.drawn_positions)
        free(self.drawn_bins)
        free(self.drawn_flags)
        free(self.bin_target)
        free(self.left_counts)
        free(self.right_counts)

    def find_split(self, const double[:, :, ::1] hist, const int64_t[:, ::1] cases,
                   const int64_t[::1] slot, const double[::1] node_counts, idx_t n_cases,
                   double min_weight_leaf, const int64_t[::1] order,
                   const uint8_t[::1] known_constant, uint64_t node_key):
        """Examine the node's features in ``order`` as the binned splitter does.

        Parameters
        ----------
        hist : (n_available, n_codes, K) class weights; cases : (n_available, n_codes)
            Histograms of the features at hand (missing code last).
        slot : (n_features,) row of each feature in hist, -1 when not at hand
        node_counts : (K,) class weights of the node; n_cases : its distinct cases
        min_weight_leaf : weight bound of each child
        order : (n_features,) the node's feature permutation
        known_constant : (n_features,) 1 for features constant in an ancestor
        node_key : the node's key (seeds each feature's bin draw)

        Returns
        -------
        dict
            ``need``: position in order of the first feature whose histogram is
            needed (-1 when none: the search is complete), ``constant``: the
            features found constant, and when a split was found ``feature``,
            ``bin``, ``threshold``, ``missing_left``, ``improvement``,
            ``left`` (K class weights), ``left_cases``, ``categorical`` and
            for a categorical split ``left_levels`` (uint64 (4,): bit c set
            when level c goes left; levels absent from the node go where
            missing values go, as `Splitter.node_split` sets them).
        """
        cdef SplitRecord best
        cdef idx_t K = self.n_classes, pos, f, n_examined = 0, k, b, n_codes = hist.shape[1]
        cdef idx_t left_cases = 0
        cdef int64_t s
        cdef bint goes_left
        cdef int found
        cdef double weight_left = 0.0, weight_right = 0.0
        constant = []
        if node_counts.shape[0] != K or order.shape[0] != self.n_features:
            raise ValueError("node_counts and order do not match the splitter")
        self.min_weight_leaf = min_weight_leaf
        for k in range(K):
            self.crit.node_counts[k] = node_counts[k]
        criterion_init(&self.crit)
        reset_split(&best, 0)
        need = -1
        for pos in range(self.n_features):
            if n_examined >= self.max_features:
                break
            f = order[pos]
            if known_constant[f]:
                continue
            s = slot[f]
            if s < 0:
                need = pos
                break
            self.rng_state = _hash(node_key, <uint64_t> (2 + f))
            if self.categorical != NULL and self.categorical[f]:
                found = self._examine_level_histogram(f, hist, cases, s, n_cases, &best)
            else:
                found = self._examine_histogram(f, hist, cases, s, n_cases, &best)
                if best.feature == f:  # a numeric split beat an earlier categorical one
                    best.categorical = False
            if found:
                n_examined += 1
            else:
                constant.append(int(f))
        result = {"need": need, "constant": constant, "n_examined": n_examined,
                  "feature": -1}
        if need >= 0 or best.feature < 0:
            return result
        s = slot[best.feature]
        for k in range(K):
            self.left_counts[k] = 0.0
        for b in range(n_codes - 1):
            goes_left = (level_goes_left(best.left_levels, b) if best.categorical
                         else b <= best.bin)
            if goes_left:
                left_cases += cases[s, b]
                for k in range(K):
                    self.left_counts[k] += hist[s, b, k]
        n_missing_cases = cases[s, n_codes - 1]
        if best.missing_left:
            left_cases += cases[s, n_codes - 1]
            for k in range(K):
                self.left_counts[k] += hist[s, n_codes - 1, k]
        for k in range(K):
            self.right_counts[k] = node_counts[k] - self.left_counts[k]
            weight_left += self.left_counts[k]
            weight_right += self.right_counts[k]
        if best.n_missing == 0:
            # missing values never seen here go, at predict time, to the heavier child
            best.missing_left = weight_left >= weight_right
        best.improvement = criterion_improvement(&self.crit, self.left_counts, self.right_counts)
        result.update(feature=int(best.feature), bin=int(best.bin),
                      threshold=float(best.threshold), missing_left=bool(best.missing_left),
                      improvement=float(best.improvement), left_cases=int(left_cases),
                      left=np.array([self.left_counts[k] for k in range(K)]),
                      categorical=bool(best.categorical))
        if best.categorical:
            if best.missing_left:  # levels absent from the node go where missing values go
                for k in range(4):
                    best.left_levels[k] |= ~best.node_levels[k]
            result.update(left_levels=np.array([best.left_levels[k] for k in range(4)],
                                               dtype=np.uint64), threshold=float("nan"))
        return result

    cdef int _examine_level_histogram(self, idx_t feature, const double[:, :, ::1] hist,
                                      const int64_t[:, ::1] cases, int64_t s, idx_t n_cases,
                                      SplitRecord* best):
        """`BinnedSplitter._examine_levels` on a node's histogram of one
        categorical feature (bin b: level b): the occupied levels ascending,
        then `Splitter._scan_levels`; 0 when constant."""
        cdef idx_t K = self.n_classes, n_codes = hist.shape[1], b, k, i
        cdef idx_t n_occupied = 0, n_missing = cases[s, n_codes - 1]
        cdef int found
        for b in range(n_codes - 1):
            if cases[s, b] > 0:
                self.occupied_bins[n_occupied] = b
                n_occupied += 1
                self.hist_count[b] = cases[s, b]
                for k in range(K):
                    self.hist_weight[b * K + k] = hist[s, b, k]
        for k in range(K):
            self.hist_weight[MISSING_CODE * K + k] = hist[s, n_codes - 1, k]
        found = self._scan_levels(feature, self.hist_weight, self.hist_count,
                                  self.occupied_bins, n_occupied,
                                  self.hist_weight + MISSING_CODE * K, n_missing, n_cases, best)
        for i in range(n_occupied):
            b = self.occupied_bins[i]
            self.hist_count[b] = 0
            for k in range(K):
                self.hist_weight[b * K + k] = 0.0
        for k in range(K):
            self.hist_weight[MISSING_CODE * K + k] = 0.0
        return found

    cdef int _examine_histogram(self, idx_t feature, const double[:, :, ::1] hist,
                                const int64_t[:, ::1] cases, int64_t s, idx_t n_cases,
                                SplitRecord* best):
        """`BinnedSplitter._examine_feature` on a node's histogram of one feature."""
        cdef idx_t K = self.n_classes, n_codes = hist.shape[1], b, k, code, i
        cdef idx_t n_occupied = 0, n_buckets, n_missing
        cdef idx_t* buckets = self.occupied_bins
        cdef bint drawn = False
        cdef int missing_left
        for b in range(n_codes - 1):
            if cases[s, b] > 0:
                self.occupied_bins[n_occupied] = b
                n_occupied += 1
        if 0 < self.nsplit < n_cases - 1 and self.nsplit < n_occupied - 1:
            n_buckets = self._draw_bins(n_occupied)
            buckets, drawn = self.drawn_bins, True
        else:
            n_buckets = n_occupied
        for i in range(n_occupied):
            b = self.occupied_bins[i]
            code = self.bin_target[b] if drawn else b
            self.hist_count[code] += cases[s, b]
            for k in range(K):
                self.hist_weight[code * K + k] += hist[s, b, k]
        n_missing = cases[s, n_codes - 1]
        self.hist_count[MISSING_CODE] = n_missing
        for k in range(K):
            self.hist_weight[MISSING_CODE * K + k] = hist[s, n_codes - 1, k]
        if n_occupied > 1 or (n_occupied == 1 and n_missing > 0):
            for missing_left in range(2 if n_missing > 0 else 1):
                self._scan_buckets(feature, self.hist_weight, self.hist_count, NULL, buckets,
                                   n_buckets, self.hist_weight + MISSING_CODE * K, n_missing,
                                   n_cases, missing_left, best)
        for i in range(n_occupied):
            b = self.occupied_bins[i]
            self.hist_count[b] = 0
            for k in range(K):
                self.hist_weight[b * K + k] = 0.0
            self.bin_target[b] = <uint8_t> b
        self.hist_count[MISSING_CODE] = 0
        for k in range(K):
            self.hist_weight[MISSING_CODE * K + k] = 0.0
        return n_occupied > 1 or (n_occupied == 1 and n_missing > 0)

    cdef idx_t _draw_bins(self, idx_t n_occupied) noexcept nogil:
        """`BinnedSplitter._draw_bins`: nsplit of the first n_occupied - 1
        occupied bins drawn uniformly without replacement; bin_target points
        every occupied bin at its bucket; returns nsplit + 1."""
        return draw_buckets(&self.rng_state, self.nsplit, n_occupied, self.occupied_bins,
                            self.drawn_positions, self.drawn_flags, self.bin_target,
                            self.drawn_bins)

    cdef double _bucket_threshold(self, idx_t feature, idx_t bucket) noexcept nogil:
        """The upper edge of bin `bucket` (`bucket_threshold`)."""
        return bucket_threshold(self.categorical, self.edges, feature, bucket)


def feature_order(uint64_t node_key, idx_t n_features):
    """The node's feature permutation (Fisher-Yates from the node's key)."""
    out = np.arange(n_features, dtype=np.int64)
    cdef int64_t[::1] order = out
    cdef uint64_t state = _hash(node_key, 1)
    cdef idx_t i, j
    cdef int64_t swap
    for i in range(n_features - 1):
        j = i + _random_below(&state, n_features - i)
        swap = order[i]
        order[i] = order[j]
        order[j] = swap
    return out
