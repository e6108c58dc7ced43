# cython: language_level=3
"""Split criteria: the multiclass AUC statistic, Gini and entropy.

The AUC statistic of a split (Ishwaran, Lu & Kogalur, *AUC splitting for
multiclass problems*, the multiclass rule theta(L, R) of the vignette) is

    theta = 2/(K(K-1)) sum_{k1<k2} max(U_{k1,k2}, U_{k2,k1})
          = 1/2 + S / (K(K-1)),    S = sum_{k1<k2} |r_k1 - r_k2|,

with r_k = n_kR / n_k the share of class k sent right and K the number of
classes present in the node (absent classes are left out; DESIGN section 2).

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

from ._sort cimport sort_doubles


# "log_loss": scikit-learn's name of the entropy criterion (since 1.1)
CRITERIA = {"auc": CRITERION_AUC, "gini": CRITERION_GINI, "entropy": CRITERION_ENTROPY,
            "log_loss": CRITERION_ENTROPY, "auc_ecp": CRITERION_AUC_ECP}


# ---------------------------------------------------------------------------
# Node and scan state
# ---------------------------------------------------------------------------

cdef int criterion_alloc(Criterion* c, idx_t n_classes, int kind) noexcept nogil:
    """Allocate the per-class buffers; -1 when memory runs out (free with criterion_free)."""
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
    c.present_classes = <idx_t*> malloc(n_classes * sizeof(idx_t))
    if (c.node_counts == NULL or c.count_left == NULL or c.count_right == NULL
            or c.inv_class_total == NULL or c.share_right == NULL or c.compact == NULL
            or c.sorted_shares == NULL or c.present_classes == NULL):
        return -1
    return 0


cdef void criterion_free(Criterion* c) noexcept nogil:
    free(c.node_counts)
    free(c.count_left)
    free(c.count_right)
    free(c.inv_class_total)
    free(c.share_right)
    free(c.compact)
    free(c.sorted_shares)
    free(c.present_classes)
    c.node_counts = c.count_left = c.count_right = c.inv_class_total = c.share_right = NULL
    c.sorted_shares = NULL
    c.present_classes = NULL
    c.compact = NULL


cdef idx_t criterion_init(Criterion* c) noexcept nogil:
    """Node state from c.node_counts (filled by the splitter); returns the
    number of classes present (positive weight)."""
    cdef idx_t k
    c.node_weight = 0.0
    c.n_present = 0
    for k in range(c.n_classes):
        c.node_weight += c.node_counts[k]
        if c.node_counts[k] > 0.0:
            c.compact[k] = c.n_present
            c.present_classes[c.n_present] = k
            c.inv_class_total[k] = 1.0 / c.node_counts[k]
            c.n_present += 1
        else:
            c.compact[k] = -1
            c.inv_class_total[k] = 0.0
    # m single moves cost about m K steps, a recomputation about 4 K log2 K
    # (the sort dominates); never for Gini and entropy (O(1) moves)
    if c.kind == CRITERION_AUC or c.kind == CRITERION_AUC_ECP:
        c.bulk_min_moves = 4 * (<idx_t> log2(c.n_present + 1.0) + 1)
    else:
        c.bulk_min_moves = c.n_classes + 1
    return c.n_present


cdef double criterion_improvement(Criterion* c, const double* left,
                                  const double* right) noexcept nogil:
    """Exact value of a split from its K x 2 table: theta - 1/2 under "auc",
    (theta - 1/2) / (2 sqrt(q (1 - q))) under "auc_ecp", the weighted impurity
    decrease under "gini" and "entropy". Uses c.share_right as work space."""
    cdef idx_t k
    cdef double weight_left = 0.0, weight_right = 0.0, q
    if c.kind == CRITERION_AUC:
        return auc_statistic(left, right, c.n_classes, c.share_right) - 0.5
    for k in range(c.n_classes):
        weight_left += left[k]
        weight_right += right[k]
    if c.kind == CRITERION_AUC_ECP:
        q = weight_right / (weight_left + weight_right)
        return ((auc_statistic(left, right, c.n_classes, c.share_right) - 0.5)
                / (2.0 * sqrt(q * (1.0 - q))))
    return (node_impurity(c.node_counts, c.n_classes, c.kind)
            - (weight_left * node_impurity(left, c.n_classes, c.kind)
               + weight_right * node_impurity(right, c.n_classes, c.kind))
            / (weight_left + weight_right))


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
    cdef double total, s = 0.0
    for k in range(n_classes):
        total = left[k] + right[k]
        if total > 0.0:
            shares[n_present] = right[k] / total
            n_present += 1
    if n_present < 2:
        return 0.5
    return 0.5 + sorted_abs_diff_sum(shares, n_present) / (<double> n_present * (n_present - 1.0))


cdef double sorted_abs_diff_sum(double* values, idx_t n) noexcept nogil:
    """S = sum_{i<j} |v_i - v_j| = sum_i (2i - n - 1) v_(i) over the values
    sorted ascending (i = 1..n); sorts `values` in place, O(n log n)."""
    cdef idx_t k
    cdef double s = 0.0
    if n < 2:
        return 0.0
    sort_doubles(values, n)
    for k in range(n):
        s += (2.0 * (k + 1) - n - 1.0) * values[k]
    return s


cdef double node_impurity(const double* counts, idx_t n_classes, int criterion) noexcept nogil:
    """Gini impurity 1 - sum p_k^2, or entropy -sum p_k log2 p_k (in bits).

    Under the AUC criteria `aucforest._tree.build_tree` stores the split's
    theta in the tree's ``impurity`` instead.
    """
    cdef idx_t k
    cdef double total = 0.0, p, acc = 0.0
    for k in range(n_classes):
        total += counts[k]
    if total <= 0.0:
        return 0.0
    if criterion == CRITERION_ENTROPY:
        for k in range(n_classes):
            if counts[k] > 0.0:
                p = counts[k] / total
                acc -= p * log2(p)
        return acc
    for k in range(n_classes):
        p = counts[k] / total
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
