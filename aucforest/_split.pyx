# cython: language_level=3
"""Split kernel: node statistics and the best-split scan of one node.

The AUC statistic of a split (Ishwaran, Lu & Kogalur, *AUC splitting for
multiclass problems*, the multiclass rule theta(L, R) of the vignette) is

    theta = 2/(K(K-1)) sum_{k1<k2} max(U_{k1,k2}, U_{k2,k1})
          = 1/2 + S / (K(K-1)),    S = sum_{k1<k2} |r_k1 - r_k2|,

with r_k = n_kR / n_k the share of class k sent right and K the number of
classes present in the node (absent classes are left out; DESIGN section 2).

While scanning the sorted values of a feature, moving a case of class c to
the left changes r_c only, so S is updated in O(K) per moved case (runs of
cases of one class are moved at once). Gini and entropy keep sums of squares
and of n log n, updated in O(1). The exact statistic of the chosen split is
recomputed from its class-count table, so the incremental sums never drift
into the stored result.
"""
import numpy as np

from libc.math cimport INFINITY, fabs, log, log2
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memset

from ._sort cimport RADIX_BUCKETS, sort_by_value


# Two candidate proxies closer than this (relative to their scale) are a tie,
# and ties go to the first candidate in scan order (features in drawn order,
# thresholds ascending). The incremental sums drift by about n * eps.
cdef double TIE_TOLERANCE = 1e-10

CRITERIA = {"auc": CRITERION_AUC, "gini": CRITERION_GINI, "entropy": CRITERION_ENTROPY}


# ---------------------------------------------------------------------------
# Exact statistics of a class-count table
# ---------------------------------------------------------------------------

cdef int _compare_doubles(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*> a)[0]
    cdef double y = (<const double*> b)[0]
    return (x > y) - (x < y)


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
    qsort(shares, n_present, sizeof(double), _compare_doubles)
    for k in range(n_present):
        s += (2.0 * (k + 1) - n_present - 1.0) * shares[k]
    return 0.5 + s / (<double> n_present * (n_present - 1.0))


cdef double node_impurity(const double* counts, idx_t n_classes, int criterion) noexcept nogil:
    """Gini impurity 1 - sum p_k^2, or entropy -sum p_k log2 p_k (in bits).

    Under the AUC criterion the Gini impurity is reported, as a purity measure
    comparable across criteria.
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


# ---------------------------------------------------------------------------
# Random numbers (splitmix64), one stream per tree
# ---------------------------------------------------------------------------

cdef inline uint64_t _next_random(uint64_t* state) noexcept nogil:
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline idx_t _random_below(uint64_t* state, idx_t n) noexcept nogil:
    return <idx_t> (_next_random(state) % <uint64_t> n)


cdef inline double _xlogx(double x) noexcept nogil:
    return x * log(x) if x > 0.0 else 0.0


cdef inline double _midpoint(double a, double b) noexcept nogil:
    """Threshold between distinct values a < b such that a <= t < b.

    a/2 + b/2 avoids overflow; when it rounds up to b (adjacent doubles) the
    lower value is used, so that the split still separates a from b.
    """
    cdef double t = a / 2.0 + b / 2.0
    if not (t >= a and t < b):
        t = a
    return t


# ---------------------------------------------------------------------------
# The splitter
# ---------------------------------------------------------------------------

cdef class Splitter:
    """Finds the best split of a node: draws features, sorts, scans.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, Fortran order
    y : ndarray of shape (n_samples,), intp, classes encoded 0..n_classes-1
    w : ndarray of shape (n_samples,), float64, sample weight x bootstrap count;
        samples of weight 0 are left out of the tree.
    n_classes, criterion, max_features, min_samples_leaf, min_weight_leaf, seed
    """

    def __cinit__(self, const X_t[::1, :] X, const idx_t[::1] y, const double[::1] w,
                  idx_t n_classes, int criterion, idx_t max_features,
                  idx_t min_samples_leaf, double min_weight_leaf, uint64_t seed):
        cdef idx_t i, n = X.shape[0]
        if n >= 2 ** 32:
            raise ValueError("aucforest fits at most 2**32 - 1 samples")
        self.X = X
        self.y = y
        self.w = w
        self.criterion = criterion
        self.n_classes = n_classes
        self.n_features = X.shape[1]
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_leaf = min_weight_leaf
        self.rng_state = seed

        self.n_active = 0
        for i in range(n):
            if w[i] > 0.0:
                self.n_active += 1
        self.samples = <idx_t*> malloc(max(self.n_active, 1) * sizeof(idx_t))
        self.xf = <X_t*> malloc(max(self.n_active, 1) * sizeof(X_t))
        self.features = <idx_t*> malloc(max(self.n_features, 1) * sizeof(idx_t))
        self.node_counts = <double*> malloc(n_classes * sizeof(double))
        self.count_left = <double*> malloc(n_classes * sizeof(double))
        self.count_right = <double*> malloc(n_classes * sizeof(double))
        self.inv_class_total = <double*> malloc(n_classes * sizeof(double))
        self.compact = <idx_t*> malloc(n_classes * sizeof(idx_t))
        self.share_right = <double*> malloc(n_classes * sizeof(double))
        self.sort_keys = <uint64_t*> malloc(max(self.n_active, 1) * sizeof(uint64_t))
        self.sort_scratch = <uint64_t*> malloc(max(self.n_active, 1) * sizeof(uint64_t))
        self.sort_histogram = <idx_t*> malloc(3 * RADIX_BUCKETS * sizeof(idx_t))
        if (self.samples == NULL or self.xf == NULL or self.features == NULL
                or self.node_counts == NULL or self.count_left == NULL
                or self.count_right == NULL or self.inv_class_total == NULL
                or self.compact == NULL or self.share_right == NULL
                or self.sort_keys == NULL or self.sort_scratch == NULL
                or self.sort_histogram == NULL):
            raise MemoryError("cannot allocate the splitter's work buffers")
        n = 0
        for i in range(X.shape[0]):
            if w[i] > 0.0:
                self.samples[n] = i
                n += 1
        for i in range(self.n_features):
            self.features[i] = i

    def __dealloc__(self):
        free(self.samples)
        free(self.xf)
        free(self.features)
        free(self.node_counts)
        free(self.count_left)
        free(self.count_right)
        free(self.inv_class_total)
        free(self.compact)
        free(self.share_right)
        free(self.sort_keys)
        free(self.sort_scratch)
        free(self.sort_histogram)

    cdef idx_t node_reset(self, idx_t start, idx_t end) noexcept nogil:
        """Weighted class counts of samples[start:end]; returns the number of
        classes present (positive weight)."""
        cdef idx_t i, k, s
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        memset(self.node_counts, 0, self.n_classes * sizeof(double))
        for i in range(start, end):
            s = self.samples[i]
            self.node_counts[y[s]] += w[s]
        self.node_weight = 0.0
        self.n_present = 0
        for k in range(self.n_classes):
            self.node_weight += self.node_counts[k]
            if self.node_counts[k] > 0.0:
                self.compact[k] = self.n_present
                self.inv_class_total[k] = 1.0 / self.node_counts[k]
                self.n_present += 1
            else:
                self.compact[k] = -1
                self.inv_class_total[k] = 0.0
        return self.n_present

    cdef int node_split(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil:
        """Best split of samples[start:end] over up to max_features non-constant
        features drawn without replacement; node_reset must have been called.

        On return best.feature is -1 when no split satisfies the leaf-size
        bounds; otherwise samples[start:end] are partitioned at best.pos and
        best.improvement holds the exact statistic of the split.
        """
        cdef idx_t fi, j, f, i, n_missing, n_examined = 0
        cdef idx_t n_rows = self.X.shape[0]
        cdef const X_t* column
        cdef X_t v, lo, hi
        best.feature = -1
        best.pos = end
        best.threshold = 0.0
        best.proxy = -INFINITY
        best.improvement = 0.0
        best.missing_left = False
        best.n_missing = 0
        for fi in range(self.n_features):
            if n_examined >= self.max_features:
                break
            j = fi + _random_below(&self.rng_state, self.n_features - fi)
            self.features[fi], self.features[j] = self.features[j], self.features[fi]
            f = self.features[fi]
            column = &self.X[0, 0] + f * n_rows
            lo = INFINITY
            hi = -INFINITY
            n_missing = 0
            for i in range(start, end):
                v = column[self.samples[i]]
                self.xf[i] = v
                if v != v:
                    n_missing += 1
                else:
                    lo = min(lo, v)
                    hi = max(hi, v)
            if n_missing == end - start or (hi <= lo and n_missing == 0):
                continue  # constant in this node: does not count as examined
            n_examined += 1
            sort_by_value(self.xf + start, self.samples + start, end - start,
                          self.sort_keys, self.sort_scratch, self.sort_histogram)
            self._scan_feature(start, end, n_missing, False, f, best)
            if n_missing > 0:
                self._scan_feature(start, end, n_missing, True, f, best)
        if best.feature >= 0:
            self._partition(start, end, best)
        return 0

    cdef void _scan_feature(self, idx_t start, idx_t end, idx_t n_missing, bint missing_left,
                            idx_t feature, SplitRecord* best) noexcept nogil:
        """Scan sorted values xf[start:end] (the n_missing NaNs last), evaluating
        every threshold between distinct consecutive values that respects the
        leaf bounds, with the missing cases sent left or right. With missing
        cases sent right, the split "all observed values left" is evaluated too.
        """
        cdef idx_t i, k, s, cls, pending = -1, n_left, n_moved_first = 0
        cdef idx_t observed_end = end - n_missing
        cdef idx_t scan_end = observed_end if (n_missing > 0 and not missing_left) else observed_end - 1
        cdef idx_t msl = self.min_samples_leaf
        cdef double pending_weight = 0.0, proxy
        cdef double scale = 1.0 if self.criterion == CRITERION_AUC else self.node_weight
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef const X_t* xf = self.xf

        self.weight_left = 0.0
        self.weight_right = self.node_weight
        self.sq_right = 0.0
        self.xlogx_right = 0.0
        for k in range(self.n_classes):
            self.count_left[k] = 0.0
            self.count_right[k] = self.node_counts[k]
            self.sq_right += self.node_counts[k] * self.node_counts[k]
            self.xlogx_right += _xlogx(self.node_counts[k])
        for k in range(self.n_present):
            self.share_right[k] = 1.0
        self.abs_diff_sum = 0.0
        self.sq_left = 0.0
        self.xlogx_left = 0.0
        if missing_left:
            for i in range(observed_end, end):
                s = self.samples[i]
                self._move_left(y[s], w[s])
            n_moved_first = n_missing

        for i in range(start, scan_end):
            s = self.samples[i]
            cls = y[s]
            if cls == pending:
                pending_weight += w[s]
            else:
                if pending >= 0:
                    self._move_left(pending, pending_weight)
                pending = cls
                pending_weight = w[s]
            if i + 1 < observed_end and xf[i + 1] <= xf[i]:
                continue
            n_left = n_moved_first + i + 1 - start
            if n_left < msl:
                continue
            if end - start - n_left < msl:
                break
            self._move_left(pending, pending_weight)
            pending = -1
            if self.weight_left < self.min_weight_leaf or self.weight_right < self.min_weight_leaf:
                continue
            proxy = self._proxy()
            if best.feature < 0 or proxy > best.proxy + TIE_TOLERANCE * (fabs(best.proxy) + scale):
                best.feature = feature
                best.pos = i + 1
                # past the last observed value: observed left, missing right
                best.threshold = _midpoint(xf[i], xf[i + 1]) if i + 1 < observed_end else xf[i]
                best.missing_left = missing_left
                best.n_missing = n_missing
                best.proxy = proxy

    cdef void _move_left(self, idx_t cls, double weight) noexcept nogil:
        """Move `weight` of class `cls` from the right child to the left one."""
        cdef double old_left = self.count_left[cls]
        cdef double old_right = self.count_right[cls]
        cdef double new_left = old_left + weight
        cdef double new_right = old_right - weight
        cdef double r_old, r_new, delta = 0.0
        cdef idx_t t, j
        cdef double* r = self.share_right
        self.count_left[cls] = new_left
        self.count_right[cls] = new_right
        self.weight_left += weight
        self.weight_right -= weight
        if self.criterion == CRITERION_AUC:
            # only r_cls changes: S += sum_t |r_new - r_t| - |r_old - r_t| (t != cls)
            j = self.compact[cls]
            r_old = r[j]
            r_new = new_right * self.inv_class_total[cls]
            for t in range(self.n_present):
                delta += fabs(r_new - r[t]) - fabs(r_old - r[t])
            self.abs_diff_sum += delta - fabs(r_new - r_old)
            r[j] = r_new
        elif self.criterion == CRITERION_GINI:
            self.sq_left += weight * (old_left + new_left)
            self.sq_right -= weight * (old_right + new_right)
        else:
            self.xlogx_left += _xlogx(new_left) - _xlogx(old_left)
            self.xlogx_right += _xlogx(new_right) - _xlogx(old_right)

    cdef double _proxy(self) noexcept nogil:
        """Criterion value of the current scan position, larger is better.

        auc: S (theta = 1/2 + S/(K(K-1)) with K fixed within the node);
        gini: sum_k nL_k^2/NL + sum_k nR_k^2/NR (minus the weighted child Gini
        impurities up to a constant); entropy: minus the weighted child entropies
        (natural log) up to a constant.
        """
        if self.criterion == CRITERION_AUC:
            return self.abs_diff_sum
        if self.criterion == CRITERION_GINI:
            return self.sq_left / self.weight_left + self.sq_right / self.weight_right
        return (self.xlogx_left + self.xlogx_right
                - _xlogx(self.weight_left) - _xlogx(self.weight_right))

    cdef void _partition(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil:
        """Move samples with x <= threshold in front, then recompute the exact
        statistic of the split from its class-count table."""
        cdef idx_t lo = start, hi = end, s, k
        cdef idx_t n_rows = self.X.shape[0]
        cdef const X_t* column = &self.X[0, 0] + best.feature * n_rows
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef double weight_left = 0.0, weight_right = 0.0
        cdef X_t v
        while lo < hi:
            v = column[self.samples[lo]]
            if v <= best.threshold or (v != v and best.missing_left):
                lo += 1
            else:
                hi -= 1
                self.samples[lo], self.samples[hi] = self.samples[hi], self.samples[lo]
        best.pos = lo
        memset(self.count_left, 0, self.n_classes * sizeof(double))
        memset(self.count_right, 0, self.n_classes * sizeof(double))
        for k in range(start, lo):
            s = self.samples[k]
            self.count_left[y[s]] += w[s]
        for k in range(lo, end):
            s = self.samples[k]
            self.count_right[y[s]] += w[s]
        for k in range(self.n_classes):
            weight_left += self.count_left[k]
            weight_right += self.count_right[k]
        if best.n_missing == 0:
            # missing values never seen here go, at predict time, to the heavier child
            best.missing_left = weight_left >= weight_right
        if self.criterion == CRITERION_AUC:
            best.improvement = auc_statistic(self.count_left, self.count_right, self.n_classes,
                                             self.share_right) - 0.5
            return
        best.improvement = (
            node_impurity(self.node_counts, self.n_classes, self.criterion)
            - (weight_left * node_impurity(self.count_left, self.n_classes, self.criterion)
               + weight_right * node_impurity(self.count_right, self.n_classes, self.criterion))
            / (weight_left + weight_right))
