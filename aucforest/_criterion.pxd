# Split criteria: the node statistics (AUC, Gini, entropy) and their incremental update,
# shared by every splitter. The hot-loop functions are inline here, so that a splitter
# compiles them into its scan (no call, no virtual lookup).
from libc.math cimport fabs, log, sqrt

ctypedef float X_t          # feature values (X is converted to float32, as scikit-learn does)
ctypedef Py_ssize_t idx_t   # sample, feature, class and node indices

cdef enum:
    CRITERION_AUC = 0
    CRITERION_GINI = 1
    CRITERION_ENTROPY = 2
    CRITERION_AUC_ECP = 3      # the AUC statistic with Gini's end-cut preference (see .pyx)


cdef struct Criterion:
    int kind                       # CRITERION_AUC, _GINI, _ENTROPY or _AUC_ECP
    idx_t n_classes
    # node state (criterion_init)
    double* node_counts            # (n_classes,) weighted class counts of the node
    double node_weight             # their sum
    idx_t n_present                # classes with positive weight in the node
    idx_t* compact                 # (n_classes,) class -> index among present classes, -1 if absent
    idx_t* present_classes         # (n_classes,) the n_present classes present, ascending
    double* inv_class_total        # (n_classes,) 1 / node_counts[k] (0 for absent classes)
    # scan state (criterion_reset, criterion_move_left)
    double* count_left             # (n_classes,) weighted class counts left of the scan position
    double* count_right            # (n_classes,) weighted class counts right of the scan position
    double* share_right            # (n_classes,) r_k = share of present class k sent right (AUC)
    double weight_left
    double weight_right
    double abs_diff_sum            # AUC: S = sum_{i<j} |r_i - r_j| over present classes
    double* sorted_shares          # (n_classes,) work space of criterion_recompute_auc
    idx_t* share_order             # (n_classes,) the present classes (compact) in the order
                                   #   sorted_shares had at the last recompute of the scan
    idx_t bulk_min_moves           # from this many classes moved at once, recompute S (AUC;
                                   #   above n_classes for Gini and entropy: never)
    double sq_left                 # Gini: sum_k count_left[k]^2
    double sq_right
    double xlogx_left              # entropy: sum_k count_left[k] log count_left[k]
    double xlogx_right


cdef int criterion_alloc(Criterion* c, idx_t n_classes, int kind) noexcept nogil
cdef void criterion_free(Criterion* c) noexcept nogil
cdef idx_t criterion_init(Criterion* c) noexcept nogil
cdef idx_t criterion_init_cases(Criterion* c, const idx_t* y, const double* w,
                                const idx_t* samples, idx_t n) noexcept nogil
cdef double criterion_node_impurity(Criterion* c) noexcept nogil
cdef double criterion_impurity_decrease(Criterion* c, const double* left, const double* right,
                                        int kind) noexcept nogil
cdef double criterion_improvement(Criterion* c, const double* left,
                                  const double* right) noexcept nogil
cdef double auc_statistic(const double* left, const double* right, idx_t n_classes,
                          double* shares) noexcept nogil
cdef double node_impurity(const double* counts, idx_t n_classes, int criterion) noexcept nogil
cdef double sorted_abs_diff_sum(double* values, idx_t n) noexcept nogil


cdef inline double _xlogx(double x) noexcept nogil:
    return x * log(x) if x > 0.0 else 0.0


cdef inline void criterion_reset(Criterion* c) noexcept nogil:
    """Start a scan: every case of the node on the right (only the sums the
    criterion uses are computed). Only the present classes are written: the
    others are zero on both sides since the node's `criterion_init`."""
    cdef idx_t k
    c.weight_left = 0.0
    c.weight_right = c.node_weight
    c.sq_right = 0.0
    c.xlogx_right = 0.0
    cdef const idx_t* present = c.present_classes
    for k in range(c.n_present):  # every other class has no weight on either side
        c.count_left[present[k]] = 0.0
        c.count_right[present[k]] = c.node_counts[present[k]]
    if c.kind == CRITERION_GINI:
        for k in range(c.n_present):
            c.sq_right += c.node_counts[present[k]] * c.node_counts[present[k]]
    elif c.kind == CRITERION_ENTROPY:
        for k in range(c.n_present):
            c.xlogx_right += _xlogx(c.node_counts[present[k]])
    for k in range(c.n_present):
        c.share_right[k] = 1.0
        c.share_order[k] = k  # all shares equal: sorted in any order
    c.abs_diff_sum = 0.0
    c.sq_left = 0.0
    c.xlogx_left = 0.0


cdef inline void _auc_move_left(Criterion* c, idx_t cls, double new_right) noexcept nogil:
    """Only r_cls changes: S += sum_t |r_new - r_t| - |r_old - r_t| (t != cls), O(K).

    Four partial sums, so that the additions do not wait on each other (one
    running sum spent its time in the latency of each add; the order of the
    additions moves S by a few ulps, far inside `is_better`'s tolerance)."""
    cdef double* r = c.share_right
    cdef idx_t t = 0, n = c.n_present, j = c.compact[cls]
    cdef double r_old = r[j]
    cdef double r_new = new_right * c.inv_class_total[cls]
    cdef double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0
    while t + 4 <= n:
        d0 += fabs(r_new - r[t]) - fabs(r_old - r[t])
        d1 += fabs(r_new - r[t + 1]) - fabs(r_old - r[t + 1])
        d2 += fabs(r_new - r[t + 2]) - fabs(r_old - r[t + 2])
        d3 += fabs(r_new - r[t + 3]) - fabs(r_old - r[t + 3])
        t += 4
    while t < n:
        d0 += fabs(r_new - r[t]) - fabs(r_old - r[t])
        t += 1
    c.abs_diff_sum += ((d0 + d1) + (d2 + d3)) - fabs(r_new - r_old)
    r[j] = r_new


cdef inline void _gini_move_left(Criterion* c, double weight, double old_left, double new_left,
                                 double old_right, double new_right) noexcept nogil:
    """sum of squares: (a + w)^2 - a^2 = w (a + (a + w)), O(1)."""
    c.sq_left += weight * (old_left + new_left)
    c.sq_right -= weight * (old_right + new_right)


cdef inline void _entropy_move_left(Criterion* c, double old_left, double new_left,
                                    double old_right, double new_right) noexcept nogil:
    """sum of n log n, O(1)."""
    c.xlogx_left += _xlogx(new_left) - _xlogx(old_left)
    c.xlogx_right += _xlogx(new_right) - _xlogx(old_right)


cdef inline void criterion_move_left(Criterion* c, idx_t cls, double weight) noexcept nogil:
    """Move `weight` of class `cls` from the right child to the left one.

    The branch is on a value fixed for the whole fit (perfectly predicted) and
    everything is inlined into the caller's scan.
    """
    cdef double old_left = c.count_left[cls]
    cdef double old_right = c.count_right[cls]
    cdef double new_left = old_left + weight
    cdef double new_right = old_right - weight
    c.count_left[cls] = new_left
    c.count_right[cls] = new_right
    c.weight_left += weight
    c.weight_right -= weight
    if c.kind == CRITERION_AUC or c.kind == CRITERION_AUC_ECP:
        _auc_move_left(c, cls, new_right)
    elif c.kind == CRITERION_GINI:
        _gini_move_left(c, weight, old_left, new_left, old_right, new_right)
    else:
        _entropy_move_left(c, old_left, new_left, old_right, new_right)


cdef inline void criterion_move_left_deferred(Criterion* c, idx_t cls,
                                             double weight) noexcept nogil:
    """As `criterion_move_left` under the AUC criteria, but S is left stale until
    `criterion_recompute_auc`: for a bucket that moves many classes at once."""
    cdef double new_right = c.count_right[cls] - weight
    c.count_left[cls] += weight
    c.count_right[cls] = new_right
    c.weight_left += weight
    c.weight_right -= weight
    c.share_right[c.compact[cls]] = new_right * c.inv_class_total[cls]


cdef inline double abs_diff_sum_of_sorted(const double* values, idx_t n) noexcept nogil:
    """S = sum_{i<j} |v_i - v_j| = sum_i (2i - n - 1) v_(i) of values sorted
    ascending (i = 1..n); 0 for fewer than two."""
    cdef idx_t k
    cdef double s = 0.0
    if n < 2:
        return 0.0
    for k in range(n):
        s += (2.0 * (k + 1) - n - 1.0) * values[k]
    return s


cdef inline void insertion_sort_by_key(double* keys, idx_t* items, idx_t n) noexcept nogil:
    """Sort keys[0:n] ascending by insertion, moving items[0:n] alongside;
    stable (equal keys keep their order), about O(n) when nearly sorted."""
    cdef idx_t i, j, item
    cdef double key
    for i in range(1, n):
        key = keys[i]
        if keys[i - 1] <= key:
            continue
        item = items[i]
        j = i
        while j > 0 and keys[j - 1] > key:
            keys[j] = keys[j - 1]
            items[j] = items[j - 1]
            j -= 1
        keys[j] = key
        items[j] = item


cdef inline void criterion_recompute_auc(Criterion* c) noexcept nogil:
    """S = sum_i (2i - n - 1) r_(i) over the current shares sorted ascending
    (`abs_diff_sum_of_sorted`), after `criterion_move_left_deferred`; m single
    moves would cost O(m K).

    The shares are sorted by insertion from the order they had at the last
    recompute of the scan: a bucket moves a few classes' shares, so the order
    is nearly right and the sort about O(K). The sorted values do not depend
    on the order ties are met in, so S is the same to the bit as after a
    sort from scratch."""
    cdef idx_t i
    for i in range(c.n_present):
        c.sorted_shares[i] = c.share_right[c.share_order[i]]
    insertion_sort_by_key(c.sorted_shares, c.share_order, c.n_present)
    c.abs_diff_sum = abs_diff_sum_of_sorted(c.sorted_shares, c.n_present)


cdef inline double criterion_proxy(Criterion* c) noexcept nogil:
    """Criterion value of the current scan position, larger is better.

    auc: S (theta = 1/2 + S/(K(K-1)) with K fixed within the node);
    auc_ecp: S / sqrt(NL NR) (S / sqrt(q (1 - q)) up to the node's constant);
    gini: sum_k nL_k^2/NL + sum_k nR_k^2/NR (minus the weighted child Gini
    impurities up to a constant); entropy: minus the weighted child entropies
    (natural log) up to a constant.
    """
    if c.kind == CRITERION_AUC:
        return c.abs_diff_sum
    if c.kind == CRITERION_AUC_ECP:
        return c.abs_diff_sum / sqrt(c.weight_left * c.weight_right)
    if c.kind == CRITERION_GINI:
        return c.sq_left / c.weight_left + c.sq_right / c.weight_right
    return (c.xlogx_left + c.xlogx_right
            - _xlogx(c.weight_left) - _xlogx(c.weight_right))


cdef inline double criterion_proxy_scale(Criterion* c) noexcept nogil:
    """Scale of the proxy, for the relative tie tolerance."""
    if c.kind == CRITERION_AUC:
        return 1.0
    if c.kind == CRITERION_AUC_ECP:
        return 1.0 / c.node_weight
    return c.node_weight
