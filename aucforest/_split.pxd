# Split kernel: the node statistics (AUC, Gini, entropy) and the best-split scan.
from libc.stdint cimport uint64_t

ctypedef float X_t          # feature values (X is converted to float32, as scikit-learn does)
ctypedef Py_ssize_t idx_t   # sample, feature, class and node indices

cdef enum:
    CRITERION_AUC = 0
    CRITERION_GINI = 1
    CRITERION_ENTROPY = 2

cdef struct SplitRecord:
    idx_t feature            # feature index of the split, -1 when the node has no valid split
    idx_t pos                # samples[start:pos] go left, samples[pos:end] go right
    double threshold         # x <= threshold goes left
    bint missing_left        # NaN goes left (else right)
    idx_t n_missing          # cases with NaN in the split feature (in the node)
    double proxy             # cheap criterion value used while scanning (larger is better)
    double improvement       # exact: theta - 1/2 (auc), impurity decrease (gini, entropy)

cdef double auc_statistic(const double* left, const double* right, idx_t n_classes,
                          double* shares) noexcept nogil
cdef double node_impurity(const double* counts, idx_t n_classes, int criterion) noexcept nogil

cdef class Splitter:
    # inputs (read only, shared by all trees of a forest)
    cdef const X_t[::1, :] X          # (n_samples, n_features), Fortran order: columns contiguous
    cdef const idx_t[::1] y           # encoded class of each sample, 0..n_classes-1
    cdef const double[::1] w          # sample weight x bootstrap multiplicity (0 = not in the tree)

    # parameters
    cdef int criterion
    cdef idx_t n_classes
    cdef idx_t n_features
    cdef idx_t max_features           # non-constant features examined per node
    cdef idx_t min_samples_leaf
    cdef double min_weight_leaf
    cdef uint64_t rng_state

    # work buffers, owned
    cdef idx_t n_active               # samples with positive weight
    cdef idx_t* samples               # (n_active,) sample indices, permuted so nodes are contiguous
    cdef X_t* xf                      # (n_active,) values of the feature being scanned
    cdef idx_t* features              # (n_features,) feature order, shuffled per node
    cdef double* node_counts          # (n_classes,) weighted class counts of the current node
    cdef double* count_left           # (n_classes,) weighted class counts left of the scan position
    cdef double* count_right          # (n_classes,) weighted class counts right of the scan position
    cdef double* inv_class_total      # (n_classes,) 1 / node_counts[k] (0 for absent classes)
    cdef idx_t* compact               # (n_classes,) class -> index among present classes, -1 if absent
    cdef double* share_right          # (n_present,) r_k = share of class k sent right (AUC)
    cdef uint64_t* sort_keys          # (n_active,) packed (value, sample) keys being sorted
    cdef uint64_t* sort_scratch       # (n_active,) radix sort's second buffer
    cdef idx_t* sort_histogram        # (3 * RADIX_BUCKETS,) radix digit counts

    # node state
    cdef double node_weight
    cdef idx_t n_present              # classes with positive weight in the node

    # scan state
    cdef double weight_left
    cdef double weight_right
    cdef double abs_diff_sum          # AUC: S = sum_{i<j} |r_i - r_j| over present classes
    cdef double sq_left               # Gini: sum_k count_left[k]^2
    cdef double sq_right
    cdef double xlogx_left            # entropy: sum_k count_left[k] log count_left[k]
    cdef double xlogx_right

    cdef idx_t node_reset(self, idx_t start, idx_t end) noexcept nogil
    cdef int node_split(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil
    cdef void _scan_feature(self, idx_t start, idx_t end, idx_t n_missing, bint missing_left,
                            idx_t feature, SplitRecord* best) noexcept nogil
    cdef void _move_left(self, idx_t cls, double weight) noexcept nogil
    cdef double _proxy(self) noexcept nogil
    cdef void _partition(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil
