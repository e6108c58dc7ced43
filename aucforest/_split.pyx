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

Categorical features (level codes 0..254, NaN missing) are split by a set
of levels, in both splitters: the subclass counts class weights per level
(`_examine_levels`), `Splitter._scan_levels` orders the node's levels by
class composition (`_order_levels`) and scans them as the bins of an
ordered feature with the shared `_scan_buckets` (same criterion, leaf
bounds, missing values right then left, tie rule); nsplit draws cut
positions among the ordered levels. The chosen split carries its 256-bit
set of left levels; after the partition, the levels absent from the node
join the side missing values go to, so that unseen levels follow the
missing direction at prediction.
"""
from libc.math cimport INFINITY, fabs, sqrt
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

from ._criterion cimport (CRITERION_AUC, CRITERION_AUC_ECP, Criterion,
                          criterion_alloc, criterion_free, criterion_improvement,
                          criterion_init, criterion_init_cases, criterion_move_left,
                          criterion_move_left_deferred,
                          criterion_proxy, criterion_proxy_scale, criterion_recompute_auc,
                          criterion_reset, insertion_sort_by_key)
from ._sort cimport RADIX_BUCKETS, sort_by_value
from ._bits cimport bit_count as _bit_count
from ._bits cimport lowest_bit as _lowest_bit
from ._random cimport random_below as _random_below
from ._random cimport splitmix64


import numpy as np

from ._criterion import CRITERIA, auc_split_statistic  # noqa: F401  (public re-exports)


cdef inline double _random_unit(uint64_t* state) noexcept nogil:
    """A draw from [0, 1) with 53 random bits."""
    return (splitmix64(state) >> 11) * (1.0 / 9007199254740992.0)

ctypedef fused X_or_idx_t:  # what _insert_sorted holds: drawn values or their ranks
    X_t
    idx_t


cdef inline void _move_bucket_left(Criterion* crit, const double* weights) noexcept nogil:
    """Move a bucket's class weights (every class with positive weight) left.
    Only the node's present classes are looked at: a bucket holds the node's
    cases, so the weights of the other classes are zero. When the bucket
    moves many classes (`Criterion.bulk_min_moves`, AUC only), S is
    recomputed once after all of them."""
    cdef idx_t j, k, n_moves = 0
    cdef const idx_t* present = crit.present_classes
    if crit.n_present >= crit.bulk_min_moves:
        for j in range(crit.n_present):
            n_moves += weights[present[j]] > 0.0
        if n_moves >= crit.bulk_min_moves:
            for j in range(crit.n_present):
                k = present[j]
                if weights[k] > 0.0:
                    criterion_move_left_deferred(crit, k, weights[k])
            criterion_recompute_auc(crit)
            return
    for j in range(crit.n_present):
        k = present[j]
        if weights[k] > 0.0:
            criterion_move_left(crit, k, weights[k])


cdef inline void _move_present_left(Criterion* crit, const double* weights,
                                    uint64_t present) noexcept nogil:
    """Move the weights of the classes whose bits are set in `present` left,
    in ascending class order (at most 64 classes)."""
    cdef idx_t k
    if _bit_count(present) >= crit.bulk_min_moves:
        while present:
            k = _lowest_bit(present)
            present &= present - 1
            criterion_move_left_deferred(crit, k, weights[k])
        criterion_recompute_auc(crit)
        return
    while present:
        k = _lowest_bit(present)
        present &= present - 1
        criterion_move_left(crit, k, weights[k])


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

cdef inline void _unshuffle(idx_t* order, idx_t n_drawn) noexcept nogil:
    """Put back the identity 0, 1, ... into ``order`` after a Fisher-Yates
    shuffle of its first n_drawn positions (from the identity). Every position
    the shuffle moved lies on a cycle through one of those positions (a
    position p >= n_drawn holds p or a value below n_drawn), so following the
    cycles from them restores all: O(n_drawn) swaps."""
    cdef idx_t p, q
    for p in range(n_drawn):
        while order[p] != p:
            q = order[p]
            order[p] = order[q]
            order[q] = q


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
        self.unit_weights = True
        for i in range(n_rows):
            if w[i] > 0.0:
                self.samples[n] = i
                self.unit_weights &= w[i] == 1.0
                n += 1
        if n_classes <= 256:
            self.y_byte = <uint8_t*> malloc(max(n_rows, 1))
            if self.y_byte == NULL:
                raise MemoryError("cannot allocate the splitter's work buffers")
            for i in range(n_rows):
                self.y_byte[i] = <uint8_t> y[i]
        for i in range(n_features):
            self.features[i] = i
            self.constant_start[i] = 0
            self.constant_end[i] = -1

    def __dealloc__(self):
        criterion_free(&self.crit)
        free(self.samples)
        free(self.y_byte)
        free(self.xf)
        free(self.features)
        free(self.constant_start)
        free(self.constant_end)
        free(self.sort_keys)
        free(self.sort_scratch)
        free(self.sort_histogram)
        free(self.categorical)
        free(self.root_key)
        free(self.level_weights)
        free(self.level_cases)
        free(self.missing_weights)
        free(self.level_list)
        free(self.level_key)
        free(self.bucket_weights)
        free(self.bucket_n)
        free(self.bucket_last)
        free(self.cut_positions)
        free(self.cut_drawn)
        free(self.pca_work)

    cdef void _set_categorical(self, is_categorical, idx_t nsplit, bint order_once,
                               bint rank_classes=True) except *:
        """Mark the categorical features (a boolean mask of n_features, or None:
        none) and allocate the buffers of their scan; ``nsplit`` > 0 draws that
        many cut positions among a node's ordered levels; ``order_once`` orders
        each feature's levels once, on the root's sample, instead of per node;
        ``rank_classes`` False: one order also under AUC with 3 to 5 classes
        (for experiments)."""
        cdef idx_t f, K = self.n_classes
        if is_categorical is None:
            return
        mask = np.asarray(is_categorical, dtype=bool)
        if mask.shape != (self.n_features,):
            raise ValueError(f"is_categorical must have one entry per feature "
                             f"({self.n_features}); got shape {mask.shape}")
        if not mask.any():
            return
        self.level_nsplit = nsplit
        self.order_once = order_once
        self.rank_classes = rank_classes
        self.categorical = <unsigned char*> calloc(self.n_features, sizeof(unsigned char))
        self.level_weights = <double*> calloc(N_LEVELS * K, sizeof(double))
        self.level_cases = <idx_t*> calloc(N_LEVELS, sizeof(idx_t))
        self.missing_weights = <double*> calloc(K, sizeof(double))
        self.level_list = <idx_t*> malloc(N_LEVELS * sizeof(idx_t))
        self.level_key = <double*> malloc(N_LEVELS * sizeof(double))
        self.bucket_weights = <double*> malloc(N_LEVELS * K * sizeof(double))
        self.bucket_n = <idx_t*> malloc(N_LEVELS * sizeof(idx_t))
        self.bucket_last = <idx_t*> malloc(N_LEVELS * sizeof(idx_t))
        self.cut_positions = <idx_t*> malloc(N_LEVELS * sizeof(idx_t))
        self.cut_drawn = <unsigned char*> calloc(N_LEVELS, sizeof(unsigned char))
        self.pca_work = <double*> malloc(K * (K + 3) * sizeof(double))
        if order_once:
            self.root_key = <double*> calloc(self.n_features * N_LEVELS, sizeof(double))
        if (self.categorical == NULL or self.level_weights == NULL or self.level_cases == NULL
                or self.missing_weights == NULL or self.level_list == NULL
                or self.level_key == NULL or self.bucket_weights == NULL
                or self.bucket_n == NULL or self.bucket_last == NULL
                or self.cut_positions == NULL or self.cut_drawn == NULL
                or self.pca_work == NULL or (order_once and self.root_key == NULL)):
            raise MemoryError("cannot allocate the categorical splits' buffers")
        for f in range(self.n_features):
            self.categorical[f] = mask[f]

    @property
    def n_active_samples(self):
        return self.n_active

    def read_weights_as_given(self):
        """Make the passes over a node's cases read each case's class and
        weight as given even when every weight is 1 (for tests: the reference
        that the unit-weight passes, which add 1 for the class byte, must equal)."""
        self.unit_weights = False

    cdef idx_t node_reset(self, idx_t start, idx_t end) noexcept nogil:
        """Weighted class counts of samples[start:end] (crit.node_counts); returns
        the number of classes present (positive weight)."""
        cdef idx_t i, s
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        if (end - start) * SPARSE_NODE_FACTOR <= self.n_classes:  # few cases, many classes
            return criterion_init_cases(&self.crit, y, w, self.samples + start, end - start)
        memset(self.crit.node_counts, 0, self.n_classes * sizeof(double))
        if self.unit_weights and self.y_byte != NULL:  # the same sums, fewer cache lines
            for i in range(start, end):
                self.crit.node_counts[self.y_byte[self.samples[i]]] += 1.0
            return criterion_init(&self.crit)
        if self.y_byte != NULL:  # the same sums; y read from a byte per sample
            for i in range(start, end):
                s = self.samples[i]
                self.crit.node_counts[self.y_byte[s]] += w[s]
            return criterion_init(&self.crit)
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

        The features are drawn from rng_state, which the builder sets to the
        node's own stream, by a Fisher-Yates shuffle of 0..n_features-1 that
        is undone on return: a node's draws do not depend on the nodes split
        before it.
        """
        cdef idx_t fi, j, f, k, n_examined = 0, n_drawn = 0
        cdef int found
        if self.order_once and not self.root_ordered:
            self._record_root_order()
        reset_split(best, end)
        for fi in range(self.n_features):
            if n_examined >= self.max_features:
                break
            n_drawn = fi + 1
            j = fi + _random_below(&self.rng_state, self.n_features - fi)
            self.features[fi], self.features[j] = self.features[j], self.features[fi]
            f = self.features[fi]
            if self.constant_start[f] <= start and end <= self.constant_end[f]:
                continue  # constant in an ancestor
            if self.categorical != NULL and self.categorical[f]:
                found = self._examine_levels(f, start, end, best)
            else:
                found = self._examine_feature(f, start, end, best)
                if best.feature == f:  # a numeric split beat an earlier categorical one
                    best.categorical = False
            if found:
                n_examined += 1
            else:  # constant in this node: does not count as examined
                self.constant_start[f] = start
                self.constant_end[f] = end
        _unshuffle(self.features, n_drawn)
        if best.feature >= 0:
            self._partition(start, end, best)
            self._split_statistic(start, end, best)
            if best.categorical and best.missing_left:
                # levels absent from the node go where missing values go
                for k in range(4):
                    best.left_levels[k] |= ~best.node_levels[k]
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
        cdef idx_t K = self.n_classes, i, b, n_left = 0
        cdef idx_t n_candidates = n_buckets if (n_missing > 0 and not missing_left) else n_buckets - 1
        cdef double scale = criterion_proxy_scale(&self.crit)
        criterion_reset(&self.crit)
        if missing_left:
            _move_bucket_left(&self.crit, missing_weights)
            n_left = n_missing
        if classes == NULL:
            for i in range(n_candidates):
                b = order[i] if order != NULL else i
                _move_bucket_left(&self.crit, &weights[b * K])
                n_left += cases[b]
                if _bucket_ends_scan(self, b, n_left, n_cases, scale, feature, missing_left,
                                     n_missing, best):
                    break
        else:  # the same moves, in the same (ascending) class order
            for i in range(n_candidates):
                b = order[i] if order != NULL else i
                _move_present_left(&self.crit, &weights[b * K], classes[b])
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
        cdef idx_t i, s, j
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef const idx_t* present = self.crit.present_classes
        cdef double* left = self.crit.count_left
        cdef double* right = self.crit.count_right
        cdef double weight_left = 0.0, weight_right = 0.0
        for j in range(self.crit.n_present):  # the other classes are zero on both sides
            left[present[j]] = 0.0
            right[present[j]] = 0.0
        if self.unit_weights and self.y_byte != NULL:  # the same sums, fewer cache lines
            for i in range(start, best.pos):
                left[self.y_byte[self.samples[i]]] += 1.0
            for i in range(best.pos, end):
                right[self.y_byte[self.samples[i]]] += 1.0
        elif self.y_byte != NULL:
            for i in range(start, best.pos):
                s = self.samples[i]
                left[self.y_byte[s]] += w[s]
            for i in range(best.pos, end):
                s = self.samples[i]
                right[self.y_byte[s]] += w[s]
        else:
            for i in range(start, best.pos):
                s = self.samples[i]
                left[y[s]] += w[s]
            for i in range(best.pos, end):
                s = self.samples[i]
                right[y[s]] += w[s]
        for j in range(self.crit.n_present):
            weight_left += left[present[j]]
            weight_right += right[present[j]]
        if best.n_missing == 0:
            # missing values never seen here go, at predict time, to the heavier child
            best.missing_left = weight_left >= weight_right
        best.improvement = criterion_improvement(&self.crit, left, right)


    # -- categorical features ------------------------------------------------

    cdef int _examine_levels(self, idx_t feature, idx_t start, idx_t end,
                             SplitRecord* best) noexcept nogil:
        """Per-level class weights of a categorical feature in the node, then
        `_scan_levels`; 0 when constant (one level and no missing value, or all
        missing). Supplied by the subclass, which knows where the codes are."""
        return 0

    cdef void _record_root_order(self) noexcept nogil:
        """order_once: record every categorical feature's level keys on the
        tree's whole (in-bag) sample, the root's."""
        cdef SplitRecord unused
        cdef idx_t f
        self.recording_order = True
        for f in range(self.n_features):
            if self.categorical[f]:
                reset_split(&unused, self.n_active)
                self._examine_levels(f, 0, self.n_active, &unused)
        self.recording_order = False
        self.root_ordered = True

    cdef void _order_levels(self, idx_t feature, const double* weights,
                            idx_t n_levels) noexcept nogil:
        """Sort level_list[0:n_levels] (ascending on entry) by their class
        composition, ties kept in level order.

        Two classes present: by the share of the first present class, which
        puts the best of all 2^(L-1) - 1 partitions among the L - 1 cuts of
        this order for a concave criterion of the 2 x 2 table (Breiman et al.
        1984, Theorem 4.5; Fisher 1958), and for the AUC statistic
        1/2 + |r_1 - r_0|/2 (a convex function of the left child's class
        weights, maximised at a vertex of the same ordered cuts). More
        classes: by the level's score on the first principal component of
        the levels' class-proportion matrix, each level weighted by its
        weight (Coppersmith, Hong & Hosking 1999, section 3). With
        ``order_once`` the keys recorded at the root are used.
        """
        cdef idx_t K = self.n_classes, i, j, k, l, first = -1, it, best_k = 0
        cdef double total, key, norm, change, top
        cdef double* mean = self.pca_work                 # (K,)
        cdef double* vec = self.pca_work + K              # (K,)
        cdef double* nxt = self.pca_work + 2 * K          # (K,)
        cdef double* cov = self.pca_work + 3 * K          # (K, K)
        cdef idx_t* levels = self.level_list
        cdef double* keys = self.level_key
        if self.order_once and not self.recording_order:
            for i in range(n_levels):
                keys[i] = self.root_key[feature * N_LEVELS + levels[i]]
        elif self.crit.n_present <= 2:
            for k in range(K):
                if self.crit.compact[k] >= 0:
                    first = k
                    break
            for i in range(n_levels):
                l = levels[i]
                total = 0.0
                for k in range(K):
                    total += weights[l * K + k]
                keys[i] = weights[l * K + first] / total if total > 0.0 else 0.0
        else:
            # weighted covariance of the levels' class proportions p_l (weights n_l):
            # C = sum_l n_l (p_l - m)(p_l - m)^T, m = sum_l n_l p_l / sum_l n_l
            memset(mean, 0, K * sizeof(double))
            memset(cov, 0, K * K * sizeof(double))
            total = 0.0
            for i in range(n_levels):
                l = levels[i]
                for k in range(K):
                    mean[k] += weights[l * K + k]
                    total += weights[l * K + k]
            for k in range(K):
                mean[k] /= total
            for i in range(n_levels):
                l = levels[i]
                norm = 0.0
                for k in range(K):
                    norm += weights[l * K + k]
                if norm <= 0.0:
                    continue
                for k in range(K):
                    nxt[k] = weights[l * K + k] / norm - mean[k]
                for j in range(K):
                    for k in range(K):
                        cov[j * K + k] += norm * nxt[j] * nxt[k]
            # first eigenvector by power iteration (C is positive semi-definite),
            # started from C's column of largest variance
            top = -1.0
            for k in range(K):
                if cov[k * K + k] > top:
                    top = cov[k * K + k]
                    best_k = k
            norm = 0.0
            for k in range(K):
                vec[k] = cov[k * K + best_k]
                norm += vec[k] * vec[k]
            if norm > 0.0:
                norm = sqrt(norm)
                for k in range(K):
                    vec[k] /= norm
                for it in range(1000):
                    norm = 0.0
                    for j in range(K):
                        key = 0.0
                        for k in range(K):
                            key += cov[j * K + k] * vec[k]
                        nxt[j] = key
                        norm += key * key
                    if norm <= 0.0:
                        break
                    norm = sqrt(norm)
                    change = 0.0
                    for k in range(K):
                        nxt[k] /= norm
                        change += fabs(nxt[k] - vec[k])
                        vec[k] = nxt[k]
                    if change < 1e-13:
                        break
            else:
                memset(vec, 0, K * sizeof(double))
            for i in range(n_levels):
                l = levels[i]
                total = 0.0
                key = 0.0
                for k in range(K):
                    total += weights[l * K + k]
                    key += weights[l * K + k] * vec[k]
                keys[i] = key / total if total > 0.0 else 0.0
        if self.recording_order:
            for i in range(n_levels):
                self.root_key[feature * N_LEVELS + levels[i]] = keys[i]
            return
        self._sort_levels(n_levels)

    cdef void _sort_levels(self, idx_t n_levels) noexcept nogil:
        """Sort level_list[0:n_levels] by level_key (insertion sort: at most 255
        levels; stable, so equal keys keep their order)."""
        insertion_sort_by_key(self.level_key, self.level_list, n_levels)

    cdef int _scan_levels(self, idx_t feature, const double* weights, const idx_t* cases,
                          const idx_t* levels, idx_t n_levels, const double* missing_weights,
                          idx_t n_missing, idx_t n_cases, SplitRecord* best) noexcept nogil:
        """Split a categorical feature: order the node's levels, then scan them
        as the bins of an ordered feature (`_scan_order`).

        The order is by class composition (`_order_levels`), except under the
        AUC criteria with 3 to MAX_RANKED_CLASSES classes in the node (and no
        drawn cuts), where one order per ranking of the classes is scanned
        (`_ranking_keys`, P!/2 orders): under "auc" the best of their cuts is
        then the best of all 2^(L-1) - 1 partitions (missing values as one
        more level) when the leaf bounds allow it, which no single order
        reaches for K > 2; under "auc_ecp" they are more candidates. With ``nsplit``, only nsplit cut
        positions drawn uniformly without replacement among the L - 1 of the
        order are candidates (as the binned splitter draws among occupied
        bins). An improving split records its level set in best.left_levels.

        ``levels[0:n_levels]``: the node's levels, ascending; level l has
        ``cases[l]`` cases of class weights ``weights[l * K:(l + 1) * K]``
        (``levels`` may be the cut_positions buffer: it is copied first).
        Returns 0 when the feature is constant in the node.
        """
        cdef idx_t i, j, n_choices, swap, P = self.crit.n_present, tail
        cdef idx_t ranking[MAX_RANKED_CLASSES]
        cdef bint draw
        for i in range(n_levels):  # level_list: the levels, for the caller to clear after
            self.level_list[i] = levels[i]
        if n_levels == 0 or (n_levels == 1 and n_missing == 0):
            return 0
        if self.recording_order:
            self._order_levels(feature, weights, n_levels)
            return 1
        draw = 0 < self.level_nsplit < n_levels - 1
        if (self.rank_classes and not draw and not self.order_once
                and 2 < P <= MAX_RANKED_CLASSES
                and (self.crit.kind == CRITERION_AUC or self.crit.kind == CRITERION_AUC_ECP)):
            for i in range(P):
                ranking[i] = i
            while True:  # the rankings in lexicographic order, one of each reversed pair
                if ranking[0] < ranking[P - 1]:
                    self._ranking_keys(weights, n_levels, ranking)
                    self._scan_order(feature, weights, cases, n_levels, missing_weights,
                                     n_missing, n_cases, False, best)
                # next permutation (Narayana Pandita)
                i = P - 2
                while i >= 0 and ranking[i] > ranking[i + 1]:
                    i -= 1
                if i < 0:
                    break
                j = P - 1
                while ranking[j] < ranking[i]:
                    j -= 1
                ranking[i], ranking[j] = ranking[j], ranking[i]
                tail = P - 1
                i += 1
                while i < tail:
                    ranking[i], ranking[tail] = ranking[tail], ranking[i]
                    i += 1
                    tail -= 1
            return 1
        self._order_levels(feature, weights, n_levels)
        if draw:
            n_choices = n_levels - 1
            for i in range(n_choices):
                self.cut_positions[i] = i
            for i in range(self.level_nsplit):  # partial Fisher-Yates
                j = i + _random_below(&self.rng_state, n_choices - i)
                swap = self.cut_positions[i]
                self.cut_positions[i] = self.cut_positions[j]
                self.cut_positions[j] = swap
                self.cut_drawn[self.cut_positions[i]] = 1
        self._scan_order(feature, weights, cases, n_levels, missing_weights, n_missing,
                         n_cases, draw, best)
        if draw:
            for i in range(self.level_nsplit):
                self.cut_drawn[self.cut_positions[i]] = 0
        return 1

    cdef void _ranking_keys(self, const double* weights, idx_t n_levels,
                            const idx_t* ranking) noexcept nogil:
        """Sort level_list by the level's key under one ranking of the P
        present classes (``ranking[i]``: the compact index of the class ranked
        i, by the share r sent right).

        With the classes in that order, S = sum_{i<j} |r_i - r_j| is at least
        sum_i (2i - P + 1) r_(i), with equality when the shares follow the
        ranking; so the largest S over all partitions is the largest, over
        rankings, of this linear function of the partition. Sending level l
        left changes it by -sum_k c_k n_lk, c_k = (2 rank_k - P + 1) / n_k:
        the best partition for a ranking sends left exactly the levels (and
        the missing cases) of positive sum, a cut of the order by the key
        sum_k c_k p_lk (p_l the level's class proportions) which the scan
        visits."""
        cdef idx_t K = self.n_classes, P = self.crit.n_present, i, k, l, j
        cdef double* coefficient = self.pca_work       # (K,)
        cdef double total, key
        for k in range(K):
            coefficient[k] = 0.0
        for i in range(P):
            for k in range(K):
                if self.crit.compact[k] == ranking[i]:
                    coefficient[k] = (2.0 * i - P + 1) * self.crit.inv_class_total[k]
        for j in range(n_levels):
            l = self.level_list[j]
            total = 0.0
            key = 0.0
            for k in range(K):
                total += weights[l * K + k]
                key += weights[l * K + k] * coefficient[k]
            self.level_key[j] = -key / total if total > 0.0 else 0.0
        self._sort_levels(n_levels)

    cdef void _scan_order(self, idx_t feature, const double* weights, const idx_t* cases,
                          idx_t n_levels, const double* missing_weights, idx_t n_missing,
                          idx_t n_cases, bint draw, SplitRecord* best) noexcept nogil:
        """Scan the cuts of the order level_list[0:n_levels] (the levels merged
        between the drawn cuts of cut_drawn when ``draw``) with `_scan_buckets`,
        missing cases right, then left; when a cut of it becomes the best
        split, record its level sets in best."""
        cdef idx_t K = self.n_classes, i, k, l, q, n_buckets = 0, feature_before = best.feature
        cdef double proxy_before = best.proxy
        cdef int missing_left
        for k in range(K):
            self.bucket_weights[k] = 0.0
        self.bucket_n[0] = 0
        for q in range(n_levels):
            l = self.level_list[q]
            for k in range(K):
                self.bucket_weights[n_buckets * K + k] += weights[l * K + k]
            self.bucket_n[n_buckets] += cases[l]
            if q == n_levels - 1 or not draw or self.cut_drawn[q]:
                self.bucket_last[n_buckets] = q
                n_buckets += 1
                if q < n_levels - 1:
                    for k in range(K):
                        self.bucket_weights[n_buckets * K + k] = 0.0
                    self.bucket_n[n_buckets] = 0
        for missing_left in range(2 if n_missing > 0 else 1):
            self._scan_buckets(feature, self.bucket_weights, self.bucket_n, NULL, NULL,
                               n_buckets, missing_weights, n_missing, n_cases, missing_left,
                               best)
        if best.feature == feature and (feature_before != feature
                                        or best.proxy != proxy_before):
            best.categorical = True  # a cut of this order is the best split so far
            for k in range(4):
                best.left_levels[k] = 0
                best.node_levels[k] = 0
            q = self.bucket_last[best.bin]
            for i in range(n_levels):
                l = self.level_list[i]
                best.node_levels[l >> 6] |= (<uint64_t> 1) << (l & 63)
                if i <= q:
                    best.left_levels[l >> 6] |= (<uint64_t> 1) << (l & 63)
            best.threshold = q + 1  # levels sent left (the tree stores NaN)


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
                 idx_t nsplit=0, tables=None, is_categorical=None, bint order_once=False,
                 bint rank_classes=True, bint random_threshold=False):
        self.X = X
        self._init_exact(X.shape[0], X.shape[1], y, w, n_classes, criterion, max_features,
                         min_samples_leaf, min_weight_leaf, seed, nsplit, tables,
                         is_categorical, order_once, rank_classes)
        if random_threshold and nsplit > 0:
            raise ValueError("random_threshold draws one threshold per feature; nsplit must be 0")
        self.random_threshold = random_threshold

    cdef void _init_exact(self, idx_t n_rows, idx_t n_features, const idx_t[::1] y,
                          const double[::1] w, idx_t n_classes, int criterion,
                          idx_t max_features, idx_t min_samples_leaf, double min_weight_leaf,
                          uint64_t seed, idx_t nsplit, tables, is_categorical,
                          bint order_once, bint rank_classes) except *:
        """What every exact splitter sets up, whatever holds X (the dense
        matrix here, its stored entries in `aucforest._sparse_split`)."""
        self._init_common(n_rows, n_features, y, w, n_classes, criterion, max_features,
                          min_samples_leaf, min_weight_leaf, seed)
        if nsplit < 0:
            raise ValueError(f"nsplit must be >= 0; got {nsplit}")
        self._set_categorical(is_categorical, nsplit, order_once, rank_classes)
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
        self.bucket_counts = <double*> malloc((max(nsplit, 1) + 2) * n_classes * sizeof(double))
        self.bucket_cases = <idx_t*> malloc((max(nsplit, 1) + 2) * sizeof(idx_t))
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
        if self.random_threshold:
            # scikit-learn's random splitter: one threshold drawn uniformly in
            # [min, max) of the node's observed values (max drawn: min instead)
            if n_missing > 0:
                self._move_missing_last(start, end)
            self.node_max = hi
            self.drawn[0] = <X_t> (lo + _random_unit(&self.rng_state) * (<double> hi - lo))
            if self.drawn[0] >= hi:
                self.drawn[0] = lo
            self.n_drawn = 1
            self._scan_drawn_thresholds(start, end, n_missing, feature, best)
            return 1
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

    cdef int _examine_levels(self, idx_t feature, idx_t start, idx_t end,
                             SplitRecord* best) noexcept nogil:
        """Class weights per level of a categorical feature in the node (its
        float32 codes read as integers), then `Splitter._scan_levels`."""
        cdef const X_t* column = &self.X[0, 0] + feature * self.n_rows
        cdef const idx_t* y = &self.y[0]
        cdef const double* w = &self.w[0]
        cdef idx_t K = self.n_classes, i, s, l, k, word, n_levels = 0, n_missing = 0
        cdef double* weights = self.level_weights
        cdef idx_t* cases = self.level_cases
        cdef uint64_t occupied[4]
        cdef uint64_t bits
        cdef int found
        cdef X_t v
        occupied[0] = occupied[1] = occupied[2] = occupied[3] = 0
        for i in range(start, end):
            s = self.samples[i]
            v = column[s]
            if not (v >= 0 and v < MISSING_LEVEL):  # NaN (and, unchecked, a code out of
                self.missing_weights[y[s]] += w[s]   # range) is missing, as in prediction
                n_missing += 1
            else:
                l = <idx_t> v
                occupied[l >> 6] |= (<uint64_t> 1) << (l & 63)
                cases[l] += 1
                weights[l * K + y[s]] += w[s]
        for word in range(4):
            bits = occupied[word]
            while bits:
                self.cut_positions[n_levels] = word * 64 + _lowest_bit(bits)
                n_levels += 1
                bits &= bits - 1
        found = self._scan_levels(feature, weights, cases, self.cut_positions, n_levels,
                                  self.missing_weights, n_missing, end - start, best)
        for i in range(n_levels):  # leave the histogram all zero
            l = self.level_list[i]
            cases[l] = 0
            for k in range(K):
                weights[l * K + k] = 0.0
        for k in range(K):
            self.missing_weights[k] = 0.0
        return found

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
        if best.categorical:
            while lo < hi:
                v = column[self.samples[lo]]
                if (level_goes_left(best.left_levels, <idx_t> v)
                        if v >= 0 and v < MISSING_LEVEL else best.missing_left):
                    lo += 1
                else:
                    hi -= 1
                    self.samples[lo], self.samples[hi] = self.samples[hi], self.samples[lo]
            best.pos = lo
            return
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
        if best.bin >= 0 and lowest_right < INFINITY and not self.random_threshold:
            best.threshold = _midpoint(best.threshold, lowest_right)
