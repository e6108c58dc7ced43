# cython: language_level=3
"""Splitters: the best split of one node.

`Splitter` holds what every splitter shares: the node's samples, the random
feature draws (features found constant in an ancestor are skipped without
looking at them again), the criterion (`_criterion`), the scan over sorted
values and the exact statistic of the chosen split. A subclass supplies how
one feature is examined (`_examine_feature`) and how samples are partitioned.

`ExactSplitter` sorts the node's values of each drawn feature and evaluates
every threshold between distinct consecutive values (midpoints); with
``nsplit`` > 0 it evaluates only thresholds at values drawn uniformly among
the node's distinct values (randomForestSRC's ``nsplit``): a feature with
many tied values in the training data finds them in its table of distinct
values, any other draws distinct cases; neither sorts. The binned splitter
lives in `_binned`.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from ._criterion cimport (criterion_alloc, criterion_free, criterion_improvement,
                          criterion_init, criterion_move_left, criterion_proxy,
                          criterion_proxy_scale, criterion_reset)
from ._sort cimport RADIX_BUCKETS, sort_by_value
from ._bits cimport lowest_bit as _lowest_bit
from ._random cimport random_below as _random_below

import numpy as np

from ._criterion import CRITERIA, auc_split_statistic  # noqa: F401  (public re-exports)

ctypedef fused X_or_idx_t:  # what _insert_sorted holds: drawn values or their ranks
    X_t
    idx_t


cdef inline bint _take_if_better(Criterion* crit, double min_weight_leaf, double scale,
                                 idx_t feature, bint missing_left, idx_t n_missing,
                                 SplitRecord* best) noexcept nogil:
    """Record the scan's current split in best when both children carry
    min_weight_leaf and it beats best (`is_better`); the caller then sets where
    it splits (threshold, and pos or bin). Returns whether it was recorded."""
    cdef double proxy
    if crit.weight_left < min_weight_leaf or crit.weight_right < min_weight_leaf:
        return False
    proxy = criterion_proxy(crit)
    if not is_better(proxy, best, scale):
        return False
    best.feature = feature
    best.missing_left = missing_left
    best.n_missing = n_missing
    best.proxy = proxy
    return True


cdef inline bint _bucket_ends_scan(Splitter splitter, idx_t bucket, idx_t n_left,
                                   idx_t n_cases, double scale, idx_t feature,
                                   bint missing_left, idx_t n_missing,
                                   SplitRecord* best) noexcept nogil:
    """After `_scan_buckets` moved a bucket left: record the split there if it
    is allowed and better; True when the right side fell below the leaf bound
    (no later split is allowed)."""
    if n_left < splitter.min_samples_leaf:
        return False
    if n_cases - n_left < splitter.min_samples_leaf:
        return True
    if _take_if_better(&splitter.crit, splitter.min_weight_leaf, scale, feature, missing_left,
                       n_missing, best):
        best.bin = bucket
        best.threshold = splitter._bucket_threshold(feature, bucket)
    return False


# ---------------------------------------------------------------------------
# The shared splitter
# ---------------------------------------------------------------------------

cdef class Splitter:
    """Base of the splitters (not used directly).

    Subclasses call `_init_common` from their constructor and implement
    `_examine_feature` and `_partition`.
    """

    cdef void _init_common(self, idx_t n_rows, idx_t n_features, const idx_t[::1] y,
                           const double[::1] w, idx_t n_classes, int criterion,
                           idx_t max_features, idx_t min_samples_leaf, double min_weight_leaf,
                           uint64_t seed) except *:
        """Parameters
        ----------
        n_rows, n_features : shape of the training matrix
        y : intp (n_rows,), classes encoded 0..n_classes-1
        w : float64 (n_rows,), sample weight x bootstrap count; samples of
            weight 0 are left out of the tree.
        n_classes, criterion, max_features, min_samples_leaf, min_weight_leaf, seed
        """
        cdef idx_t i, n
        if n_rows >= 2 ** 32:
            raise ValueError("aucforest fits at most 2**32 - 1 samples")
        self.y = y
        self.w = w
        self.n_rows = n_rows
        self.n_classes = n_classes
        self.n_features = n_features
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_leaf = min_weight_leaf
        self.rng_state = seed

        self.n_active = 0
        for i in range(n_rows):
            if w[i] > 0.0:
                self.n_active += 1
        self.samples = <idx_t*> malloc(max(self.n_active, 1) * sizeof(idx_t))
        self.features = <idx_t*> malloc(max(n_features, 1) * sizeof(idx_t))
        self.constant_start = <idx_t*> malloc(max(n_features, 1) * sizeof(idx_t))
        self.constant_end = <idx_t*> malloc(max(n_features, 1) * sizeof(idx_t))
        if (criterion_alloc(&self.crit, n_classes, criterion) != 0
                or self.samples == NULL or self.features == NULL
                or self.constant_start == NULL or self.constant_end == NULL):
            raise MemoryError("cannot allocate the splitter's work buffers")
        n = 0
        for i in range(n_rows):
            if w[i] > 0.0:
                self.samples[n] = i
                n += 1
        for i in range(n_features):
            self.features[i] = i
            self.constant_start[i] = 0
            self.constant_end[i] = -1

    def __dealloc__(self):
        criterion_free(&self.crit)
        free(self.samples)
        free(self.xf)
        free(self.features)
        free(self.constant_start)
        free(self.constant_end)
        free(self.sort_keys)
        free(self.sort_scratch)
        free(self.sort_histogram)

    @property
    def n_active_samples(self):
        return self.n_active

    cdef idx_t node_reset(self, idx_t start, idx_t end) noexcept nogil:
        """Weighted class counts of samples[start:end] (crit.node_counts); returns
        the number of classes present (positive weight)."""
        cdef idx_t i, s
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        memset(self.crit.node_counts, 0, self.n_classes * sizeof(double))
        for i in range(start, end):
            s = self.samples[i]
            self.crit.node_counts[y[s]] += w[s]
        return criterion_init(&self.crit)

    cdef int node_split(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil:
        """Best split of samples[start:end] over up to max_features non-constant
        features drawn without replacement; node_reset must have been called.

        A feature found constant in a node is constant in all its descendants:
        it is remembered (by the node's sample range) and skipped there without
        reading its values, as scikit-learn does. The draws themselves are
        unchanged, so max_features still counts non-constant features and the
        trees are the same as without the shortcut.

        On return best.feature is -1 when no split satisfies the leaf-size
        bounds; otherwise samples[start:end] are partitioned at best.pos and
        best.improvement holds the exact statistic of the split.
        """
        cdef idx_t fi, j, f, n_examined = 0
        reset_split(best, end)
        for fi in range(self.n_features):
            if n_examined >= self.max_features:
                break
            j = fi + _random_below(&self.rng_state, self.n_features - fi)
            self.features[fi], self.features[j] = self.features[j], self.features[fi]
            f = self.features[fi]
            if self.constant_start[f] <= start and end <= self.constant_end[f]:
                continue  # constant in an ancestor
            if self._examine_feature(f, start, end, best):
                n_examined += 1
            else:  # constant in this node: does not count as examined
                self.constant_start[f] = start
                self.constant_end[f] = end
        if best.feature >= 0:
            self._partition(start, end, best)
            self._split_statistic(start, end, best)
        return 0

    cdef int _examine_feature(self, idx_t feature, idx_t start, idx_t end,
                              SplitRecord* best) noexcept nogil:
        """Scan one feature, updating best; returns 0 when the feature is constant
        in the node (all missing, or one value and no missing), else 1."""
        return 0

    cdef void _scan_sorted(self, idx_t start, idx_t end, idx_t n_missing, bint missing_left,
                           idx_t feature, SplitRecord* best) noexcept nogil:
        """Scan sorted values xf[start:end] (the n_missing NaNs last, samples
        permuted alike), evaluating every threshold between distinct consecutive
        values that respects the leaf bounds, with the missing cases sent left or
        right. With missing cases sent right, the split "all observed values left"
        is evaluated too.
        """
        cdef idx_t i, s, cls, pending = -1, n_left, n_moved_first = 0
        cdef idx_t observed_end = end - n_missing
        cdef idx_t scan_end = observed_end if (n_missing > 0 and not missing_left) else observed_end - 1
        cdef idx_t msl = self.min_samples_leaf
        cdef double pending_weight = 0.0
        cdef double scale = criterion_proxy_scale(&self.crit)
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef const X_t* xf = self.xf
        cdef const idx_t* samples = self.samples

        criterion_reset(&self.crit)
        if missing_left:
            for i in range(observed_end, end):
                s = samples[i]
                criterion_move_left(&self.crit, y[s], w[s])
            n_moved_first = n_missing

        for i in range(start, scan_end):
            s = samples[i]
            cls = y[s]
            if cls == pending:
                pending_weight += w[s]
            else:
                if pending >= 0:
                    criterion_move_left(&self.crit, pending, pending_weight)
                pending = cls
                pending_weight = w[s]
            if i + 1 < observed_end and xf[i + 1] <= xf[i]:
                continue
            n_left = n_moved_first + i + 1 - start
            if n_left < msl:
                continue
            if end - start - n_left < msl:
                break
            criterion_move_left(&self.crit, pending, pending_weight)
            pending = -1
            if _take_if_better(&self.crit, self.min_weight_leaf, scale, feature, missing_left,
                               n_missing, best):
                best.pos = i + 1
                best.bin = -1
                # past the last observed value: observed left, missing right
                best.threshold = _midpoint(xf[i], xf[i + 1]) if i + 1 < observed_end else xf[i]

    cdef void _scan_buckets(self, idx_t feature, const double* weights, const idx_t* cases,
                            const uint64_t* classes, const idx_t* order, idx_t n_buckets,
                            const double* missing_weights,
                            idx_t n_missing, idx_t n_cases, bint missing_left,
                            SplitRecord* best) noexcept nogil:
        """Evaluate the split after each bucket of cases (bins of the binned
        splitter, the spans between drawn thresholds of the exact one), as
        `_scan_sorted` does after each distinct value.

        Bucket b (taken in the order ``order[0..n_buckets-1]``, or 0, 1, ...
        when order is NULL) holds ``cases[b]`` cases of class weights
        ``weights[b * K:(b + 1) * K]``; bit k of ``classes[b]`` is set when
        class k has cases in it (NULL: every class is looked at). The missing
        cases (``missing_weights``) are moved left first when missing_left;
        with them right, the split after the last bucket ("all observed left")
        is evaluated too. An improving split records its bucket in best.bin and
        `_bucket_threshold` gives its threshold.
        """
        cdef idx_t K = self.n_classes, i, b, k, n_left = 0
        cdef idx_t n_candidates = n_buckets if (n_missing > 0 and not missing_left) else n_buckets - 1
        cdef double scale = criterion_proxy_scale(&self.crit), weight
        cdef uint64_t present
        criterion_reset(&self.crit)
        if missing_left:
            for k in range(K):
                weight = missing_weights[k]
                if weight > 0.0:
                    criterion_move_left(&self.crit, k, weight)
            n_left = n_missing
        if classes == NULL:
            for i in range(n_candidates):
                b = order[i] if order != NULL else i
                for k in range(K):
                    weight = weights[b * K + k]
                    if weight > 0.0:
                        criterion_move_left(&self.crit, k, weight)
                n_left += cases[b]
                if _bucket_ends_scan(self, b, n_left, n_cases, scale, feature, missing_left,
                                     n_missing, best):
                    break
        else:  # the same moves, in the same (ascending) class order
            for i in range(n_candidates):
                b = order[i] if order != NULL else i
                present = classes[b]
                while present:
                    k = _lowest_bit(present)
                    present &= present - 1
                    criterion_move_left(&self.crit, k, weights[b * K + k])
                n_left += cases[b]
                if _bucket_ends_scan(self, b, n_left, n_cases, scale, feature, missing_left,
                                     n_missing, best):
                    break

    cdef double _bucket_threshold(self, idx_t feature, idx_t bucket) noexcept nogil:
        """Threshold of the split after `bucket` of `_scan_buckets` (x <= it goes left)."""
        return 0.0

    cdef void _partition(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil:
        """Move the samples that go left in front; set best.pos."""
        pass

    cdef void _split_statistic(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil:
        """Class counts of both children of the partitioned node and the exact
        statistic of the split (best.improvement)."""
        cdef idx_t i, s, k
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef double* left = self.crit.count_left
        cdef double* right = self.crit.count_right
        cdef double weight_left = 0.0, weight_right = 0.0
        memset(left, 0, self.n_classes * sizeof(double))
        memset(right, 0, self.n_classes * sizeof(double))
        for i in range(start, best.pos):
            s = self.samples[i]
            left[y[s]] += w[s]
        for i in range(best.pos, end):
            s = self.samples[i]
            right[y[s]] += w[s]
        for k in range(self.n_classes):
            weight_left += left[k]
            weight_right += right[k]
        if best.n_missing == 0:
            # missing values never seen here go, at predict time, to the heavier child
            best.missing_left = weight_left >= weight_right
        best.improvement = criterion_improvement(&self.crit, left, right)


# ---------------------------------------------------------------------------
# The exact splitter
# ---------------------------------------------------------------------------

cdef inline bint _insert_sorted(X_or_idx_t* values, X_or_idx_t t, idx_t m) noexcept nogil:
    """Insert t into the ascending values[0:m] (room for one more); False,
    with nothing inserted, when t is already there."""
    cdef idx_t i = m
    while i > 0 and values[i - 1] > t:
        i -= 1
    if i > 0 and values[i - 1] == t:
        return False
    _shift_up(values, i, m)
    values[i] = t
    return True


cdef inline void _shift_up(X_or_idx_t* values, idx_t i, idx_t m) noexcept nogil:
    """values[i + 1:m + 1] = values[i:m] (a few elements: a plain loop)."""
    cdef idx_t j = m
    while j > i:
        values[j] = values[j - 1]
        j -= 1


cdef class ExactSplitter(Splitter):
    """Finds the best split of a node: draws features, sorts, scans every
    threshold between distinct values; or, with nsplit > 0, evaluates nsplit
    thresholds drawn at random among the node's distinct values of each feature.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, Fortran order
    y : ndarray of shape (n_samples,), intp, classes encoded 0..n_classes-1
    w : ndarray of shape (n_samples,), float64, sample weight x bootstrap count;
        samples of weight 0 are left out of the tree.
    n_classes, criterion, max_features, min_samples_leaf, min_weight_leaf, seed
    nsplit : int, default 0
        0: every threshold. k > 0: per node and feature, k of the node's
        distinct observed values, drawn uniformly without replacement, give
        the candidate values t (x <= t goes left; the node's largest value is
        not a candidate), and the split is the best of them; a node with at
        most k + 1 distinct values is scanned exhaustively. This is
        randomForestSRC's nsplit (its splitUtil.c draws among the sorted
        distinct values): a value shared by many cases is no likelier than a
        rare one, so end cuts stay as likely as in the exhaustive scan.
    tables : (values, offsets) or None
        `tree.distinct_value_tables` of X: feature j's sorted distinct values
        ``values[offsets[j]:offsets[j + 1]]``, given for the features with
        many tied values. Such a feature marks which of them occur in the
        node (a binary search per case; a sort instead when the table is
        much longer than the node); a feature without a table takes the
        values of distinct cases drawn uniformly (the same draw when the
        node has no ties). None: every feature sorts the node.
    """

    def __init__(self, const X_t[::1, :] X, const idx_t[::1] y, const double[::1] w,
                 idx_t n_classes, int criterion, idx_t max_features,
                 idx_t min_samples_leaf, double min_weight_leaf, uint64_t seed,
                 idx_t nsplit=0, tables=None):
        self.X = X
        self._init_exact(X.shape[0], X.shape[1], y, w, n_classes, criterion, max_features,
                         min_samples_leaf, min_weight_leaf, seed, nsplit, tables)

    cdef void _init_exact(self, idx_t n_rows, idx_t n_features, const idx_t[::1] y,
                          const double[::1] w, idx_t n_classes, int criterion,
                          idx_t max_features, idx_t min_samples_leaf, double min_weight_leaf,
                          uint64_t seed, idx_t nsplit, tables) except *:
        """What every exact splitter sets up, whatever holds X (the dense
        matrix here, its stored entries in `aucforest._sparse_split`)."""
        self._init_common(n_rows, n_features, y, w, n_classes, criterion, max_features,
                          min_samples_leaf, min_weight_leaf, seed)
        if nsplit < 0:
            raise ValueError(f"nsplit must be >= 0; got {nsplit}")
        self.nsplit = nsplit
        self.sort_always = tables is None
        values, offsets = (np.zeros(0, np.float32), np.zeros(n_features + 1, np.intp)) \
            if tables is None else tables
        self.table_values = values
        self.table_offsets = offsets
        if offsets.shape[0] != n_features + 1 or offsets[-1] != values.shape[0]:
            raise ValueError("tables must hold one table per feature")
        cdef idx_t j, longest = 1
        for j in range(n_features):
            longest = max(longest, self.table_offsets[j + 1] - self.table_offsets[j])
        self.present = <unsigned char*> malloc(longest)
        self.xf = <X_t*> malloc(max(self.n_active, 1) * sizeof(X_t))
        self.sort_keys = <uint64_t*> malloc(max(self.n_active, 1) * sizeof(uint64_t))
        self.sort_scratch = <uint64_t*> malloc(max(self.n_active, 1) * sizeof(uint64_t))
        self.sort_histogram = <idx_t*> malloc(3 * RADIX_BUCKETS * sizeof(idx_t))
        self.drawn = <X_t*> malloc(max(nsplit, 1) * sizeof(X_t))
        self.bucket_counts = <double*> malloc((nsplit + 2) * n_classes * sizeof(double))
        self.bucket_cases = <idx_t*> malloc((nsplit + 2) * sizeof(idx_t))
        if (self.xf == NULL or self.sort_keys == NULL or self.sort_scratch == NULL
                or self.sort_histogram == NULL or self.drawn == NULL
                or self.bucket_counts == NULL or self.bucket_cases == NULL
                or self.present == NULL):
            raise MemoryError("cannot allocate the exact splitter's sort buffers")

    def __dealloc__(self):
        free(self.present)
        free(self.drawn)
        free(self.bucket_counts)
        free(self.bucket_cases)

    cdef int _examine_feature(self, idx_t feature, idx_t start, idx_t end,
                              SplitRecord* best) noexcept nogil:
        """Gather the node's values of the feature; then, with nsplit > 0 and
        more than nsplit + 1 distinct observed values, evaluate thresholds
        drawn among them (missing cases moved last), else sort and scan every
        threshold; missing cases sent right and then left. 0 when constant."""
        cdef idx_t n_missing, observed_end, n_table
        cdef X_t lo, hi
        n_missing = self._gather(feature, start, end, &lo, &hi)
        if n_missing == end - start or (hi <= lo and n_missing == 0):
            return 0
        if self.nsplit > 0 and end - start - n_missing > self.nsplit + 1:
            self.node_max = hi
            n_table = self.table_offsets[feature + 1] - self.table_offsets[feature]
            if self.sort_always or n_table > 4 * (end - start):
                self._sort_node(start, end)
                if self._draw_distinct_sorted(start, end - n_missing):
                    self._scan_drawn_thresholds(start, end, n_missing, feature, best)
                    return 1
                # at most nsplit + 1 distinct values: every threshold, below
            else:
                if n_missing > 0:  # missing cases last, as after the sort
                    self._move_missing_last(start, end)
                if n_table > 0:
                    self._draw_distinct_from_table(feature, start, end - n_missing)
                else:
                    self._draw_distinct_cases(start, end - n_missing)
                self._scan_drawn_thresholds(start, end, n_missing, feature, best)
                return 1
        else:
            self._sort_node(start, end)
        self._scan_sorted(start, end, n_missing, False, feature, best)
        if n_missing > 0:
            self._scan_sorted(start, end, n_missing, True, feature, best)
        return 1

    cdef idx_t _gather(self, idx_t feature, idx_t start, idx_t end, X_t* lo,
                       X_t* hi) noexcept nogil:
        """xf[start:end] = the feature's values of samples[start:end]; lo and
        hi get the smallest and largest observed value; returns the number of
        missing (NaN) values."""
        cdef const X_t* column = &self.X[0, 0] + feature * self.n_rows
        cdef idx_t i, n_missing = 0
        cdef X_t v, smallest = INFINITY, largest = -INFINITY
        for i in range(start, end):
            v = column[self.samples[i]]
            self.xf[i] = v
            if v != v:
                n_missing += 1
            else:
                smallest = min(smallest, v)
                largest = max(largest, v)
        lo[0] = smallest
        hi[0] = largest
        return n_missing

    cdef void _sort_node(self, idx_t start, idx_t end) noexcept nogil:
        """Sort xf[start:end] ascending (NaN last), samples alike (`sort_by_value`)."""
        sort_by_value(self.xf + start, self.samples + start, end - start,
                      self.sort_keys, self.sort_scratch, self.sort_histogram)

    cdef void _move_missing_last(self, idx_t start, idx_t end) noexcept nogil:
        """Move the cases whose value is NaN to the end of xf[start:end] (samples alike)."""
        cdef idx_t i = start, observed_end = end
        while i < observed_end:
            if self.xf[i] != self.xf[i]:
                observed_end -= 1
                self.xf[i], self.xf[observed_end] = self.xf[observed_end], self.xf[i]
                self.samples[i], self.samples[observed_end] = \
                    self.samples[observed_end], self.samples[i]
            else:
                i += 1

    cdef void _draw_distinct_cases(self, idx_t start, idx_t observed_end) noexcept nogil:
        """drawn[0:n_drawn]: up to nsplit distinct values of cases drawn
        uniformly among xf[start:observed_end], below the node's largest
        value (a value drawn twice is drawn again), for a feature with few
        ties. The draws stop after 64 nsplit attempts, which only a node
        with many ties could need."""
        cdef idx_t m = 0, attempts = 0
        cdef X_t t
        while m < self.nsplit and attempts < 64 * self.nsplit:
            attempts += 1
            t = self.xf[start + _random_below(&self.rng_state, observed_end - start)]
            if t < self.node_max and _insert_sorted(self.drawn, t, m):
                m += 1
        self.n_drawn = m

    cdef void _draw_ranks(self, idx_t n_distinct) noexcept nogil:
        """bucket_cases[0:nsplit] (free until the bucket pass): nsplit of the
        ranks 0..n_distinct - 2 (all distinct values but the largest), drawn
        uniformly without replacement, ascending; needs n_distinct > nsplit + 1."""
        cdef idx_t j = 0
        while j < self.nsplit:  # a repeat is drawn again
            j += _insert_sorted(self.bucket_cases,
                                _random_below(&self.rng_state, n_distinct - 1), j)

    cdef bint _draw_distinct_sorted(self, idx_t start, idx_t observed_end) noexcept nogil:
        """drawn[0:nsplit]: nsplit of the D distinct values of the sorted
        xf[start:observed_end], drawn uniformly without replacement among all
        but the largest; False (nothing drawn) when D <= nsplit + 1."""
        cdef idx_t i, j = 0, rank = 0, n_distinct = 1, m = self.nsplit
        cdef const idx_t* ranks = self.bucket_cases
        for i in range(start + 1, observed_end):
            n_distinct += self.xf[i] > self.xf[i - 1]
        if n_distinct <= m + 1:
            return False
        self._draw_ranks(n_distinct)
        for i in range(start, observed_end):
            if i > start and self.xf[i] > self.xf[i - 1]:
                rank += 1
            if rank == ranks[j]:
                self.drawn[j] = self.xf[i]
                j += 1
                if j == m:
                    break
        self.n_drawn = m
        return True

    cdef void _draw_distinct_from_table(self, idx_t feature, idx_t start,
                                        idx_t observed_end) noexcept nogil:
        """drawn[0:n_drawn]: the node's distinct values found in the feature's
        table (a binary search per case marks which occur): nsplit of them
        drawn uniformly without replacement among all but the largest, or,
        with at most nsplit + 1 of them, every one but the largest (then the
        buckets hold one distinct value each: the exhaustive scan)."""
        cdef idx_t first = self.table_offsets[feature]
        cdef idx_t n_table = self.table_offsets[feature + 1] - first
        cdef const X_t* table = &self.table_values[first]
        cdef unsigned char* present = self.present
        cdef const idx_t* ranks = self.bucket_cases
        cdef idx_t i, c, lo, width, half, j = 0, rank = -1, n_distinct = 0, m = self.nsplit
        cdef X_t v
        memset(present, 0, n_table)
        for i in range(start, observed_end):  # v's index in the table, without branches
            v = self.xf[i]
            lo = 0
            width = n_table
            while width > 1:
                half = width >> 1
                lo += half * (table[lo + half - 1] < v)
                width -= half
            present[lo] = 1
        for c in range(n_table):
            n_distinct += present[c]
        if n_distinct <= m + 1:
            for c in range(n_table):
                if present[c] and j < n_distinct - 1:
                    self.drawn[j] = table[c]
                    j += 1
            self.n_drawn = n_distinct - 1
            return
        self._draw_ranks(n_distinct)
        for c in range(n_table):
            if present[c]:
                rank += 1
                if rank == ranks[j]:
                    self.drawn[j] = table[c]
                    j += 1
                    if j == m:
                        break
        self.n_drawn = m

    cdef void _scan_drawn_thresholds(self, idx_t start, idx_t end, idx_t n_missing,
                                     idx_t feature, SplitRecord* best) noexcept nogil:
        """Evaluate the thresholds drawn[0:n_drawn] on xf[start:end] (the
        node's observed values, then its n_missing missing ones), with the
        missing cases sent right and then left (`_scan_buckets`).

        Each case falls in the bucket of the smallest drawn value t >= x (one
        more bucket above the largest); splitting after bucket b puts x <= t_b
        left (`_partition` then moves the threshold up to the midpoint between
        t_b and the smallest value above it).
        """
        cdef idx_t n_classes = self.n_classes, m = self.n_drawn, observed_end = end - n_missing
        cdef idx_t i, b, s, lo_b, hi_b
        cdef int missing_left
        cdef X_t v
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef const X_t* xf = self.xf
        cdef const X_t* drawn = self.drawn
        cdef const idx_t* samples = self.samples
        cdef double* counts = self.bucket_counts
        cdef idx_t* cases = self.bucket_cases
        if m == 0 and n_missing == 0:
            return
        # buckets 0..m hold the observed values, bucket m + 1 the missing ones
        memset(counts, 0, (m + 2) * n_classes * sizeof(double))
        memset(cases, 0, (m + 2) * sizeof(idx_t))
        for i in range(start, observed_end):
            v = xf[i]
            if m <= 16:  # counting the drawn values below v, without branches,
                lo_b = 0   # beats a binary search here
                for b in range(m):
                    lo_b += drawn[b] < v
            else:
                lo_b = 0
                hi_b = m
                while lo_b < hi_b:
                    b = (lo_b + hi_b) // 2
                    if drawn[b] < v:
                        lo_b = b + 1
                    else:
                        hi_b = b
            s = samples[i]
            counts[lo_b * n_classes + y[s]] += w[s]
            cases[lo_b] += 1
        for i in range(observed_end, end):
            s = samples[i]
            counts[(m + 1) * n_classes + y[s]] += w[s]
        cases[m + 1] = n_missing
        for missing_left in range(2 if n_missing > 0 else 1):
            self._scan_buckets(feature, self.bucket_counts, self.bucket_cases, NULL, NULL, m + 1,
                               self.bucket_counts + (m + 1) * n_classes, n_missing,
                               end - start, missing_left, best)

    cdef double _bucket_threshold(self, idx_t feature, idx_t bucket) noexcept nogil:
        """Drawn value t_b (x <= t_b goes left; `_partition` sets the midpoint);
        the node's largest value after the last bucket (observed left, missing right)."""
        if bucket < self.n_drawn:
            return self.drawn[bucket]
        return self.node_max

    cdef void _partition(self, idx_t start, idx_t end, SplitRecord* best) noexcept nogil:
        """Move samples with x <= threshold (or NaN, when missing go left) in front.

        After a scan of drawn thresholds (best.bin >= 0) the threshold is a
        drawn value t: it becomes the midpoint between t and the smallest
        observed value sent right, found here rather than tracked per bucket
        in every scan. Either threshold sends the same cases left.
        """
        cdef idx_t lo = start, hi = end
        cdef const X_t* column = &self.X[0, 0] + best.feature * self.n_rows
        cdef X_t v, lowest_right = INFINITY
        while lo < hi:
            v = column[self.samples[lo]]
            if v <= best.threshold or (v != v and best.missing_left):
                lo += 1
            else:
                if v < lowest_right:  # NaN never is
                    lowest_right = v
                hi -= 1
                self.samples[lo], self.samples[hi] = self.samples[hi], self.samples[lo]
        best.pos = lo
        if best.bin >= 0 and lowest_right < INFINITY:
            best.threshold = _midpoint(best.threshold, lowest_right)
