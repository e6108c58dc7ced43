# cython: language_level=3
"""Split criteria: the multiclass AUC statistic, Gini and entropy.

The AUC statistic of a split (Ishwaran, Lu & Kogalur, *AUC splitting for
multiclass problems*, the multiclass rule theta(L, R) of the vignette) is

    theta = 2/(K(K-1)) sum_{k1<k2} max(U_{k1,k2}, U_{k2,k1})
          = 1/2 + S / (K(K-1)),    S = sum_{k1<k2} |r_k1 - r_k2|,

with r_k = n_kR / n_k the share of class k sent right and K the number of
classes present in the node. A class absent from the node (n_k = 0) is left
out of the pairs: a rule of this package, since the vignette leaves 0/0 open
and randomForestSRC's C code divides by it (docs/user_guide.md, section 1).

A splitter scans candidate thresholds in ascending order and moves cases
from the right child to the left one (`criterion_move_left`, in the .pxd so
that it is inlined): moving weight of class c changes r_c only, so S is
updated in O(K); a bucket of the binned scan that moves m classes at once
(m of order log K or more) instead recomputes S from the sorted shares in
O(K log K) (`criterion_recompute_auc`). Gini and entropy keep sums of
squares and of n log n, updated in O(1). `criterion_proxy` ranks candidates. The exact statistic of
the chosen split is recomputed from its class-count table
(`criterion_improvement`), so the incremental sums never drift into the
stored result.

"auc_ecp" is the same statistic divided by the end-cut factor of the split,

    theta_ecp - 1/2 = (theta - 1/2) / (2 sqrt(q (1 - q))),   q = N_R / N,

equal to theta - 1/2 for an even split and larger towards the ends. For two
classes theta - 1/2 = |r_1 - r_0| / 2 and the Gini decrease is
2 (n_0 n_1 / N^2)^2 (r_1 - r_0)^2 / (q (1 - q)), so theta_ecp ranks binary
splits exactly as Gini does: Gini is the AUC statistic with this end-cut
preference (Ishwaran, The effect of splitting on random forests, Machine
Learning 99, 2015). For K > 2 it keeps the AUC statistic's per-class shares
(a rare class weighs as much as a common one) and adds that preference.

Adding a split rule means adding its move/proxy/improvement here; every
splitter (exact, binned) then has it.
"""
import numpy as np

from libc.math cimport log2, sqrt
from libc.stdlib cimport free, malloc

from libc.string cimport memset

from ._sort cimport sort_doubles, sort_indices


# "log_loss": scikit-learn's name of the entropy criterion (since 1.1)
CRITERIA = {"auc": CRITERION_AUC, "gini": CRITERION_GINI, "entropy": CRITERION_ENTROPY,
            "log_loss": CRITERION_ENTROPY, "auc_ecp": CRITERION_AUC_ECP}


# ---------------------------------------------------------------------------
# Node and scan state
# ---------------------------------------------------------------------------

cdef int criterion_alloc(Criterion* c, idx_t n_classes, int kind) noexcept nogil:
    """Allocate the per-class buffers; -1 when memory runs out (free with criterion_free)."""
    cdef idx_t k
    c.kind = kind
    c.n_classes = n_classes
    c.n_present = 0
    c.node_weight = 0.0
    c.node_counts = <double*> malloc(n_classes * sizeof(double))
    c.count_left = <double*> malloc(n_classes * sizeof(double))
    c.count_right = <double*> malloc(n_classes * sizeof(double))
    c.inv_class_total = <double*> malloc(n_classes * sizeof(double))
    c.share_right = <double*> malloc(n_classes * sizeof(double))
    c.compact = <idx_t*> malloc(n_classes * sizeof(idx_t))
    c.sorted_shares = <double*> malloc(n_classes * sizeof(double))
    c.share_order = <idx_t*> malloc(n_classes * sizeof(idx_t))
    c.present_classes = <idx_t*> malloc(n_classes * sizeof(idx_t))
    if (c.node_counts == NULL or c.count_left == NULL or c.count_right == NULL
            or c.inv_class_total == NULL or c.share_right == NULL or c.compact == NULL
            or c.sorted_shares == NULL or c.share_order == NULL
            or c.present_classes == NULL):
        return -1
    # every class starts absent: zero counts, no compact index (the invariant
    # `criterion_init_cases` keeps: only the present classes hold anything)
    memset(c.node_counts, 0, n_classes * sizeof(double))
    memset(c.count_left, 0, n_classes * sizeof(double))
    memset(c.count_right, 0, n_classes * sizeof(double))
    memset(c.inv_class_total, 0, n_classes * sizeof(double))
    for k in range(n_classes):
        c.compact[k] = -1
    return 0


cdef void criterion_free(Criterion* c) noexcept nogil:
    free(c.node_counts)
    free(c.count_left)
    free(c.count_right)
    free(c.inv_class_total)
    free(c.share_right)
    free(c.compact)
    free(c.sorted_shares)
    free(c.share_order)
    free(c.present_classes)
    c.node_counts = c.count_left = c.count_right = c.inv_class_total = c.share_right = NULL
    c.sorted_shares = NULL
    c.share_order = NULL
    c.present_classes = NULL
    c.compact = NULL


cdef idx_t criterion_init(Criterion* c) noexcept nogil:
    """Node state from c.node_counts (filled by the caller for every class);
    returns the number of classes present (positive weight). O(K)."""
    cdef idx_t k
    c.node_weight = 0.0
    c.n_present = 0
    memset(c.count_left, 0, c.n_classes * sizeof(double))
    memset(c.count_right, 0, c.n_classes * sizeof(double))
    for k in range(c.n_classes):
        _enter_class(c, k)
    _set_bulk_min_moves(c)
    return c.n_present


cdef idx_t criterion_init_cases(Criterion* c, const idx_t* y, const double* w,
                                const idx_t* samples, idx_t n) noexcept nogil:
    """Node state of the cases samples[0:n], as filling c.node_counts and
    `criterion_init` would give it (the same sums in the same order), for a
    node with few cases among many classes: only the classes of these cases
    and of the previous node are touched, O(n + m log m) for m classes
    present instead of O(K). Returns m."""
    cdef idx_t i, j, k, s, n_seen = 0
    cdef idx_t* seen = c.present_classes
    # the previous node's classes become absent: every other class already is
    for j in range(c.n_present):
        k = c.present_classes[j]
        c.node_counts[k] = 0.0
        c.count_left[k] = 0.0
        c.count_right[k] = 0.0
        c.inv_class_total[k] = 0.0
        c.compact[k] = -1
    for i in range(n):
        s = samples[i]
        k = y[s]
        if c.compact[k] == -1:  # first case of class k: mark it seen
            c.compact[k] = -2
            seen[n_seen] = k
            n_seen += 1
        c.node_counts[k] += w[s]
    sort_indices(seen, n_seen)  # ascending, as criterion_init lists them
    c.node_weight = 0.0
    c.n_present = 0
    for j in range(n_seen):  # in place: the n_present written never pass j
        _enter_class(c, seen[j])
    _set_bulk_min_moves(c)
    return c.n_present


cdef inline void _enter_class(Criterion* c, idx_t k) noexcept nogil:
    """Add class k's count to the node's weight and, when positive, k to the
    present classes (classes must come in ascending order)."""
    c.node_weight += c.node_counts[k]
    if c.node_counts[k] > 0.0:
        c.compact[k] = c.n_present
        c.present_classes[c.n_present] = k
        c.inv_class_total[k] = 1.0 / c.node_counts[k]
        c.n_present += 1
    else:
        c.compact[k] = -1
        c.inv_class_total[k] = 0.0


cdef inline void _set_bulk_min_moves(Criterion* c) noexcept nogil:
    # m single moves cost about m K steps, a recomputation about 4 K log2 K
    # (the sort dominates); never for Gini and entropy (O(1) moves)
    if c.kind == CRITERION_AUC or c.kind == CRITERION_AUC_ECP:
        c.bulk_min_moves = 4 * (<idx_t> log2(c.n_present + 1.0) + 1)
    else:
        c.bulk_min_moves = c.n_classes + 1


cdef double criterion_improvement(Criterion* c, const double* left,
                                  const double* right) noexcept nogil:
    """Exact value of a split from its K x 2 table: theta - 1/2 under "auc",
    (theta - 1/2) / (2 sqrt(q (1 - q))) under "auc_ecp", the weighted impurity
    decrease under "gini" and "entropy". Only the node's present classes are
    read (the others have no weight on either side). Uses c.share_right as
    work space."""
    cdef idx_t j, k
    cdef const idx_t* present = c.present_classes
    cdef double weight_left, weight_right, total, q
    cdef idx_t n_shares = 0
    if c.kind == CRITERION_GINI or c.kind == CRITERION_ENTROPY:
        return criterion_impurity_decrease(c, left, right, c.kind)
    for j in range(c.n_present):  # auc_statistic's shares, class order
        k = present[j]
        total = left[k] + right[k]
        if total > 0.0:
            c.share_right[n_shares] = right[k] / total
            n_shares += 1
    if c.kind == CRITERION_AUC:
        return _theta_of_shares(c.share_right, n_shares) - 0.5
    _side_weights(c, left, right, &weight_left, &weight_right)
    q = weight_right / (weight_left + weight_right)
    return (_theta_of_shares(c.share_right, n_shares) - 0.5) / (2.0 * sqrt(q * (1.0 - q)))


cdef double criterion_impurity_decrease(Criterion* c, const double* left, const double* right,
                                        int kind) noexcept nogil:
    """Weighted impurity decrease i(t) - (N_L i(t_L) + N_R i(t_R)) / N of a
    split of the node from its K x 2 table (Breiman et al. 1984, section
    2.4.1), with the Gini impurity or the entropy (`kind`). Only the node's
    present classes are read (the others have no weight on either side)."""
    cdef double weight_left, weight_right
    _side_weights(c, left, right, &weight_left, &weight_right)
    return (_impurity_of(c.node_counts, c.present_classes, c.n_present, kind)
            - (weight_left * _impurity_of(left, c.present_classes, c.n_present, kind)
               + weight_right * _impurity_of(right, c.present_classes, c.n_present, kind))
            / (weight_left + weight_right))


cdef inline void _side_weights(Criterion* c, const double* left, const double* right,
                               double* weight_left, double* weight_right) noexcept nogil:
    """The weights of both sides of a split's table, summed over the node's
    present classes in class order."""
    cdef idx_t j
    weight_left[0] = 0.0
    weight_right[0] = 0.0
    for j in range(c.n_present):
        weight_left[0] += left[c.present_classes[j]]
        weight_right[0] += right[c.present_classes[j]]


cdef double criterion_node_impurity(Criterion* c) noexcept nogil:
    """`node_impurity` of the node's counts (Gini or entropy), from its present classes."""
    return _impurity_of(c.node_counts, c.present_classes, c.n_present, c.kind)


# ---------------------------------------------------------------------------
# Exact statistics of a class-count table
# ---------------------------------------------------------------------------

cdef double auc_statistic(const double* left, const double* right, idx_t n_classes,
                          double* shares) noexcept nogil:
    """Exact multiclass AUC split statistic theta of a K x 2 table.

    Uses the sorted form S = sum_i (2i - K - 1) r_(i) of the vignette's
    average of max(U_{k1,k2}, U_{k2,k1}) over present class pairs. Returns
    1/2 when fewer than two classes are present. `shares` is a work buffer
    of n_classes doubles.
    """
    cdef idx_t k, n_present = 0
    cdef double total
    for k in range(n_classes):
        total = left[k] + right[k]
        if total > 0.0:
            shares[n_present] = right[k] / total
            n_present += 1
    return _theta_of_shares(shares, n_present)


cdef inline double _theta_of_shares(double* shares, idx_t n_present) noexcept nogil:
    """theta = 1/2 + S / (K (K - 1)) of the present classes' shares sent right
    (sorted in place); 1/2 for fewer than two."""
    if n_present < 2:
        return 0.5
    return 0.5 + sorted_abs_diff_sum(shares, n_present) / (<double> n_present * (n_present - 1.0))


cdef double sorted_abs_diff_sum(double* values, idx_t n) noexcept nogil:
    """S = sum_{i<j} |v_i - v_j| = sum_i (2i - n - 1) v_(i) over the values
    sorted ascending (i = 1..n); sorts `values` in place, O(n log n)."""
    if n < 2:
        return 0.0
    sort_doubles(values, n)
    return abs_diff_sum_of_sorted(values, n)


cdef double node_impurity(const double* counts, idx_t n_classes, int criterion) noexcept nogil:
    """Gini impurity 1 - sum p_k^2, or entropy -sum p_k log2 p_k (in bits).

    Under the AUC criteria `aucforest._tree.build_tree` stores the split's
    theta in the tree's ``impurity`` instead.
    """
    return _impurity_of(counts, NULL, n_classes, criterion)


cdef double _impurity_of(const double* counts, const idx_t* classes, idx_t n,
                         int criterion) noexcept nogil:
    """`node_impurity` of counts[classes[0..n-1]] (counts[0..n-1] when classes
    is NULL), summed in that order: over the classes with any count, in class
    order, the same sums to the bit as over all of them."""
    cdef idx_t j, k
    cdef double total = 0.0, p, acc = 0.0
    for j in range(n):
        total += counts[classes[j] if classes != NULL else j]
    if total <= 0.0:
        return 0.0
    if criterion == CRITERION_ENTROPY:
        for j in range(n):
            k = classes[j] if classes != NULL else j
            if counts[k] > 0.0:
                p = counts[k] / total
                acc -= p * log2(p)
        return acc
    for j in range(n):
        p = counts[classes[j] if classes != NULL else j] / total
        acc += p * p
    return 1.0 - acc


def auc_split_statistic(table):
    """Multiclass AUC split statistic of a (K, 2) table of class counts.

    theta = 2/(K(K-1)) sum_{k1<k2} max(U_{k1,k2}, U_{k2,k1}) with
    U_{k1,k2} = (1 - r_k1 + r_k2)/2 and r_k = n_kR / n_k (Ishwaran, Lu &
    Kogalur, AUC splitting vignette, multiclass split statistic theta(L, R)).
    Classes with no cases in the table are left out of K and of the pairs.

    Parameters
    ----------
    table : array-like of shape (K, 2)
        Column 0: (weighted) counts of each class sent left; column 1: sent right.

    Returns
    -------
    float
        theta in [1/2, 1].
    """
    from sklearn.utils import check_array

    counts = check_array(table, dtype=np.float64, ensure_min_features=2,
                         input_name="table")
    if counts.shape[1] != 2:
        raise ValueError(f"table must have shape (K, 2) (left, right counts); got {counts.shape}.")
    if (counts < 0).any():
        raise ValueError("table counts must be non-negative.")
    if counts.max() > 0:
        counts = counts / counts.max()  # theta is scale-free; 1e308 + 1e308 must not overflow
    if np.count_nonzero(counts.sum(axis=1) > 0) < 2:
        raise ValueError("table needs at least two classes with positive counts.")
    cdef double[::1] left = np.ascontiguousarray(counts[:, 0])
    cdef double[::1] right = np.ascontiguousarray(counts[:, 1])
    cdef double[::1] work = np.empty(left.shape[0])
    return auc_statistic(&left[0], &right[0], left.shape[0], &work[0])
