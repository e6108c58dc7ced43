# Splitters: draw features, find the best split of a node, partition its samples.
from libc.math cimport INFINITY, fabs
from libc.stdint cimport uint8_t, uint64_t

from ._criterion cimport Criterion, X_t, idx_t

cdef struct SplitRecord:
    idx_t feature            # feature index of the split, -1 when the node has no valid split
    idx_t pos                # samples[start:pos] go left, samples[pos:end] go right
    double threshold         # x <= threshold goes left
    idx_t bin                # binned splitter: codes <= bin go left
    bint missing_left        # NaN goes left (else right)
    idx_t n_missing          # cases with NaN in the split feature (in the node)
    double proxy             # cheap criterion value used while scanning (larger is better)
    double improvement       # exact: theta - 1/2 (auc), impurity decrease (gini, entropy)
    bint categorical         # a split of a categorical feature: the levels in left_levels go left
    uint64_t left_levels[4]  # categorical: bit c set when level c goes left (256 bits)
    uint64_t node_levels[4]  # categorical: bit c set when level c occurs in the node


cdef enum:
    N_LEVELS = 256           # level codes 0..254 (MAX_CATEGORIES = 255); 255 is never a level
    MISSING_LEVEL = 255      # NaN and codes outside 0..254 count as missing when splitting
    MAX_RANKED_CLASSES = 5   # AUC with 3..5 classes: one level order per class ranking (K!/2)
    SPARSE_NODE_FACTOR = 4   # a node of at most K / 4 cases touches only its own classes
                             #   (`criterion_init_cases`) instead of all K


cdef inline void reset_split(SplitRecord* best, idx_t pos) noexcept nogil:
    """No split found yet: feature -1, every case at ``pos``, the worst proxy."""
    best.feature = -1
    best.pos = pos
    best.threshold = 0.0
    best.bin = -1
    best.proxy = -INFINITY
    best.improvement = 0.0
    best.missing_left = False
    best.n_missing = 0
    best.categorical = False


cdef inline bint level_goes_left(const uint64_t* bits, idx_t level) noexcept nogil:
    """Whether bit ``level`` (0..255) of the 256-bit set is on."""
    return (bits[level >> 6] >> (level & 63)) & 1


cdef class Splitter:
    """What every splitter shares: samples, feature draws, the criterion, the
    scan of sorted values and the exact statistic of the chosen split."""
    # inputs (read only, shared by all trees of a forest)
    cdef const idx_t[::1] y           # encoded class of each sample, 0..n_classes-1
    cdef const double[::1] w          # sample weight x bootstrap multiplicity (0 = not in the tree)

    # parameters
    cdef idx_t n_rows                 # rows of the training matrix
    cdef idx_t n_classes
    cdef idx_t n_features
    cdef idx_t max_features           # non-constant features examined per node
    cdef idx_t min_samples_leaf
    cdef double min_weight_leaf
    cdef uint64_t rng_state

    # statistics of the node and of the scan position
    cdef Criterion crit

    # work buffers, owned
    cdef idx_t n_active               # samples with positive weight
    cdef idx_t* samples               # (n_active,) sample indices, permuted so nodes are contiguous
    cdef uint8_t* y_byte              # (n_rows,) y in one byte (NULL above 256 classes): an
                                      #   eighth of y's cache lines in the histogram passes
    cdef bint unit_weights            # every sample in the tree weighs exactly 1
    cdef X_t* xf                      # (n_active,) values of the feature being scanned (exact)
    cdef idx_t* features              # (n_features,) feature order, shuffled per node
    cdef idx_t* constant_start        # (n_features,) the feature is constant in every node whose
    cdef idx_t* constant_end          #   samples lie in samples[constant_start:constant_end]
    cdef uint64_t* sort_keys          # (n_active,) packed (value, sample) keys being sorted (exact)
    cdef uint64_t* sort_scratch       # (n_active,) radix sort's second buffer
    cdef idx_t* sort_histogram        # (3 * RADIX_BUCKETS,) radix digit counts

    # categorical features (all NULL / 0 when there is none)
    cdef unsigned char* categorical   # (n_features,) 1 for a categorical feature (level codes)
    cdef idx_t level_nsplit           # nsplit: cut positions drawn among the ordered levels
    cdef bint order_once              # order each feature's levels once, at the root (experiment)
    cdef bint rank_classes            # AUC, 3..MAX_RANKED_CLASSES classes: an order per ranking
    cdef bint recording_order         # the root pass of order_once: keys recorded, no scan
    cdef bint root_ordered            # order_once: the root's keys are recorded
    cdef double* root_key             # (n_features * N_LEVELS,) order_once: each level's key
    cdef double* level_weights        # (N_LEVELS * n_classes,) class weights per level (exact)
    cdef idx_t* level_cases           # (N_LEVELS,) cases per level (exact)
    cdef double* missing_weights      # (n_classes,) class weights of the missing cases (exact)
    cdef idx_t* level_list            # (N_LEVELS,) the node's levels, then in scan order
    cdef double* level_key            # (N_LEVELS,) sort key of each level
    cdef double* bucket_weights       # (N_LEVELS * n_classes,) ordered (merged) levels' weights
    cdef idx_t* bucket_n              # (N_LEVELS,) and cases
    cdef idx_t* bucket_last           # (N_LEVELS,) position of a bucket's last level in the order
    cdef idx_t* cut_positions         # (N_LEVELS,) nsplit draw work space
    cdef unsigned char* cut_drawn     # (N_LEVELS,) 1 at drawn cut positions during a draw
    cdef double* pca_work             # (n_classes * (n_classes + 3),) PCA of class proportions

    cdef void _init_common(self, idx_t n_rows, idx_t n_features, const idx_t[::1] y,
                           const double[::1] w, idx_t n_classes, int criterion,
                           idx_t max_features, idx_t min_samples_leaf, double min_weight_leaf,
                           uint64_t seed) except *
    cdef idx_t node_reset(self, idx_t start, idx_t end) noexcept nogil
    cdef int node_split(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil
    cdef int _examine_feature(self, idx_t feature, idx_t start, idx_t end,
                              SplitRecord* best) noexcept nogil
    cdef void _scan_sorted(self, idx_t start, idx_t end, idx_t n_missing, bint missing_left,
                           idx_t feature, SplitRecord* best) noexcept nogil
    cdef void _scan_buckets(self, idx_t feature, const double* weights, const idx_t* cases,
                            const uint64_t* classes, const idx_t* order, idx_t n_buckets,
                            const double* missing_weights,
                            idx_t n_missing, idx_t n_cases, bint missing_left,
                            SplitRecord* best) noexcept nogil
    cdef double _bucket_threshold(self, idx_t feature, idx_t bucket) noexcept nogil
    cdef void _partition(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil
    cdef void _split_statistic(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil
    cdef void _set_categorical(self, is_categorical, idx_t nsplit, bint order_once,
                               bint rank_classes=*) except *
    cdef int _examine_levels(self, idx_t feature, idx_t start, idx_t end,
                             SplitRecord* best) noexcept nogil
    cdef void _record_root_order(self) noexcept nogil
    cdef int _scan_levels(self, idx_t feature, const double* weights, const idx_t* cases,
                          const idx_t* levels, idx_t n_levels, const double* missing_weights,
                          idx_t n_missing, idx_t n_cases, SplitRecord* best) noexcept nogil
    cdef void _order_levels(self, idx_t feature, const double* weights,
                            idx_t n_levels) noexcept nogil
    cdef void _sort_levels(self, idx_t n_levels) noexcept nogil
    cdef void _ranking_keys(self, const double* weights, idx_t n_levels,
                            const idx_t* ranking) noexcept nogil
    cdef void _scan_order(self, idx_t feature, const double* weights, const idx_t* cases,
                          idx_t n_levels, const double* missing_weights, idx_t n_missing,
                          idx_t n_cases, bint draw, SplitRecord* best) noexcept nogil


cdef class ExactSplitter(Splitter):
    """Sorts the node's values of each drawn feature and scans every threshold,
    or (nsplit > 0) evaluates nsplit thresholds drawn among the node's distinct values."""
    cdef const X_t[::1, :] X          # (n_samples, n_features), Fortran order: columns contiguous
    cdef idx_t nsplit                 # 0: every threshold; else thresholds drawn per feature
    cdef bint random_threshold        # splitter="random": one threshold drawn uniformly per feature
    cdef bint sort_always             # no tables: every drawn-threshold node sorts
    cdef const X_t[::1] table_values  # sorted distinct values of the features with many ties,
    cdef const idx_t[::1] table_offsets  # feature j's at [offsets[j], offsets[j + 1])
    cdef unsigned char* present       # (longest table,) which table values occur in the node
    cdef X_t* drawn                   # (nsplit,) drawn thresholds, sorted
    cdef idx_t n_drawn                # distinct drawn thresholds of the feature being scanned
    cdef X_t node_max                 # its largest value in the node
    cdef double* bucket_counts        # (nsplit + 2, n_classes) class weights between thresholds,
    cdef idx_t* bucket_cases          # (nsplit + 2,) and cases; the last bucket: missing values

    cdef void _init_exact(self, idx_t n_rows, idx_t n_features, const idx_t[::1] y,
                          const double[::1] w, idx_t n_classes, int criterion,
                          idx_t max_features, idx_t min_samples_leaf, double min_weight_leaf,
                          uint64_t seed, idx_t nsplit, tables, is_categorical,
                          bint order_once, bint rank_classes) except *
    cdef idx_t _gather(self, idx_t feature, idx_t start, idx_t end, X_t* lo,
                       X_t* hi) noexcept nogil
    cdef void _sort_node(self, idx_t start, idx_t end) noexcept nogil
    cdef void _move_missing_last(self, idx_t start, idx_t end) noexcept nogil
    cdef void _draw_distinct_cases(self, idx_t start, idx_t observed_end) noexcept nogil
    cdef void _draw_ranks(self, idx_t n_distinct) noexcept nogil
    cdef bint _draw_distinct_sorted(self, idx_t start, idx_t observed_end) noexcept nogil
    cdef void _draw_distinct_from_table(self, idx_t feature, idx_t start,
                                        idx_t observed_end) noexcept nogil
    cdef void _scan_drawn_thresholds(self, idx_t start, idx_t end, idx_t n_missing,
                                     idx_t feature, SplitRecord* best) noexcept nogil


cdef inline double _midpoint(double a, double b) noexcept nogil:
    """Threshold between distinct values a < b such that a <= t < b.

    a/2 + b/2 avoids overflow; when it rounds up to b (adjacent doubles) the
    lower value is used, so that the split still separates a from b.
    """
    cdef double t = a / 2.0 + b / 2.0
    if not (t >= a and t < b):
        t = a
    return t


# Two candidate proxies closer than this (relative to their scale) are a tie,
# and ties go to the first candidate in scan order (features in drawn order,
# thresholds ascending, missing values right before left). The incremental
# sums drift by about n * eps.
cdef inline bint is_better(double proxy, SplitRecord* best, double scale) noexcept nogil:
    return best.feature < 0 or proxy > best.proxy + 1e-10 * (fabs(best.proxy) + scale)
