# cython: language_level=3
"""Tree storage (flat node arrays), the depth-first builder and nogil prediction.

Nodes are numbered in depth-first preorder, so every child index is larger
than its parent's; `Tree` checks this (and every other invariant) when it is
constructed, which makes a tree loaded from a file safe to traverse.

A categorical split keeps its set of left levels as a 256-bit row of the
tree's ``left_levels`` (4 uint64 words), in node order; the packed node
record marks it and holds its row in place of the threshold. `goes_left`
(in the .pxd, used through `_child_of` by every traversal here, and by the
OOB permutation kernel) is the one place that decides left or right;
TreeSHAP's packed arrays use its set test, `level_in_set`.
"""
import numpy as np
from scipy.sparse import csr_matrix

cimport numpy as cnp
from libc.math cimport INFINITY, NAN, nextafterf
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset
from cpython.exc cimport PyErr_CheckSignals
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_New

from ._bits cimport lowest_bit
from ._prefetch cimport prefetch
from ._random cimport splitmix64
from libc.float cimport DBL_EPSILON, FLT_MAX

from ._criterion cimport (CRITERION_AUC, CRITERION_AUC_ECP, CRITERION_GINI, Criterion, X_t,
                          criterion_impurity_decrease, criterion_init,
                          criterion_node_impurity, idx_t)
from ._split cimport SPARSE_NODE_FACTOR, SplitRecord, Splitter

from ._sparse import SparseRows, is_sparse

cnp.import_array()

TREE_LEAF = -1          # children_left / children_right of a leaf
TREE_UNDEFINED = -2     # feature / threshold of a leaf

cdef idx_t _LEAF = -1

cdef enum:
    # above this many classes a tree being grown keeps each node's classes
    # present and their proportions (a node of m cases has at most m classes),
    # not a row of K, and the out-of-bag sums add only those
    SPARSE_CLASSES = 8
cdef idx_t _UNDEFINED = -2

GROWN_SPARSE_ABOVE_CLASSES = SPARSE_CLASSES  # for Python callers


cdef struct StackRecord:
    idx_t start
    idx_t end
    idx_t depth
    idx_t parent
    bint is_left
    uint64_t key                # the node's random stream (`_child_key`)


cdef inline uint64_t _child_key(uint64_t key, bint is_left) noexcept nogil:
    """The random stream of a node's left or right child, from the node's own.

    Each node draws its feature order and thresholds from a stream of its
    own, set by its path from the root (the root's is the splitter's seed),
    so that its split does not depend on the order a builder visits the
    nodes: the best-first builder grows the depth-first tree when
    max_leaf_nodes is not reached (scikit-learn's test_importances)."""
    cdef uint64_t state = key ^ (0x9FB21C651E98DF25ULL if is_left else 0xC2B2AE3D27D4EB4FULL)
    splitmix64(&state)
    return splitmix64(&state)


cdef inline int _resize(void** array, size_t nbytes) noexcept nogil:
    """realloc *array to nbytes in place; -1 (array untouched) when memory runs out."""
    cdef void* grown = realloc(array[0], nbytes)
    if grown == NULL:
        return -1
    array[0] = grown
    return 0


cdef class _NodeBuffer:
    """Growable C arrays holding the nodes while a tree is built."""
    cdef idx_t n_classes, capacity, count, n_sets, sets_capacity
    # above SPARSE_CLASSES classes a node keeps only its classes present: node i's
    # are share_class / share_value[share_start[i]:share_start[i + 1]] (ascending)
    cdef bint sparse
    cdef idx_t n_shares, shares_capacity
    cdef idx_t* share_start
    cdef int32_t* share_class
    cdef double* share_value
    cdef unsigned char* categorical
    cdef uint64_t* level_sets   # (n_sets, 4): the left levels of the categorical splits
    cdef idx_t* left
    cdef idx_t* right
    cdef idx_t* feature
    cdef idx_t* n_samples
    cdef unsigned char* missing_left
    cdef double* threshold
    cdef double* weighted_n_samples
    cdef double* impurity
    cdef double* improvement
    cdef double* value

    def __cinit__(self, idx_t n_classes):
        self.n_classes = n_classes
        self.capacity = 0
        self.count = 0
        self.sparse = n_classes > SPARSE_CLASSES

    def __dealloc__(self):
        free(self.left)
        free(self.right)
        free(self.feature)
        free(self.n_samples)
        free(self.missing_left)
        free(self.threshold)
        free(self.weighted_n_samples)
        free(self.impurity)
        free(self.improvement)
        free(self.value)
        free(self.categorical)
        free(self.level_sets)
        free(self.share_start)
        free(self.share_class)
        free(self.share_value)

    cdef int _grow(self) noexcept nogil:
        """Grow every node array by half (a factor 1.5 leaves at most a third
        unused; realloc copies a block it cannot grow in place); -1 when
        memory runs out."""
        cdef idx_t cap = self.capacity + self.capacity // 2 if self.capacity > 0 else 64
        if self.sparse and _resize(<void**> &self.share_start, (cap + 1) * sizeof(idx_t)):
            return -1
        if (_resize(<void**> &self.left, cap * sizeof(idx_t))
                or _resize(<void**> &self.right, cap * sizeof(idx_t))
                or _resize(<void**> &self.feature, cap * sizeof(idx_t))
                or _resize(<void**> &self.n_samples, cap * sizeof(idx_t))
                or _resize(<void**> &self.missing_left, cap * sizeof(unsigned char))
                or _resize(<void**> &self.categorical, cap * sizeof(unsigned char))
                or _resize(<void**> &self.threshold, cap * sizeof(double))
                or _resize(<void**> &self.weighted_n_samples, cap * sizeof(double))
                or _resize(<void**> &self.impurity, cap * sizeof(double))
                or _resize(<void**> &self.improvement, cap * sizeof(double))
                or (not self.sparse and _resize(<void**> &self.value,
                                                cap * self.n_classes * sizeof(double)))):
            return -1
        self.capacity = cap
        return 0

    cdef idx_t add_node(self, idx_t parent, bint is_left, SplitRecord* split,
                        const Criterion* crit, idx_t n_samples,
                        double impurity) noexcept nogil:
        """Append a node (a leaf when split.feature < 0) with the class
        proportions of crit's node; returns its index or -1 when memory runs out."""
        cdef idx_t node = self.count, k, j, cap
        cdef double* value
        if node >= self.capacity and self._grow() != 0:
            return -1
        if parent >= 0:
            if is_left:
                self.left[parent] = node
            else:
                self.right[parent] = node
        self.left[node] = _LEAF
        self.right[node] = _LEAF
        self.categorical[node] = 0
        if split.feature >= 0:
            self.feature[node] = split.feature
            self.threshold[node] = split.threshold
            self.missing_left[node] = split.missing_left
            self.improvement[node] = split.improvement
            if split.categorical:
                if self.n_sets >= self.sets_capacity:
                    cap = 2 * self.sets_capacity if self.sets_capacity > 0 else 16
                    if _resize(<void**> &self.level_sets, cap * 4 * sizeof(uint64_t)):
                        return -1
                    self.sets_capacity = cap
                memcpy(self.level_sets + 4 * self.n_sets, split.left_levels,
                       4 * sizeof(uint64_t))
                self.n_sets += 1
                self.categorical[node] = 1
                self.threshold[node] = NAN
        else:
            self.feature[node] = _UNDEFINED
            self.threshold[node] = _UNDEFINED
            self.missing_left[node] = 0
            self.improvement[node] = 0.0
        self.n_samples[node] = n_samples
        self.weighted_n_samples[node] = crit.node_weight
        self.impurity[node] = impurity
        if self.sparse:
            if self._add_shares(node, crit) != 0:
                return -1
        else:
            value = self.value + node * self.n_classes
            memset(value, 0, self.n_classes * sizeof(double))  # 0 / weight: absent classes
            for j in range(crit.n_present):
                k = crit.present_classes[j]
                value[k] = crit.node_counts[k] / crit.node_weight
        self.count += 1
        return node

    cdef int _add_shares(self, idx_t node, const Criterion* crit) noexcept nogil:
        """Append the proportions of crit's classes present (ascending) as
        node's; -1 when memory runs out."""
        cdef idx_t j, k, e = self.n_shares, cap
        if e + crit.n_present > self.shares_capacity:
            cap = 2 * self.shares_capacity + crit.n_present + 64
            if (_resize(<void**> &self.share_class, cap * sizeof(int32_t))
                    or _resize(<void**> &self.share_value, cap * sizeof(double))):
                return -1
            self.shares_capacity = cap
        self.share_start[node] = e
        for j in range(crit.n_present):
            k = crit.present_classes[j]
            self.share_class[e] = <int32_t> k
            self.share_value[e] = crit.node_counts[k] / crit.node_weight
            e += 1
        self.n_shares = e
        self.share_start[node + 1] = e
        return 0

    def to_arrays(self):
        """Move the nodes into numpy arrays (a dict keyed by Tree's field names).

        Each array is freed as soon as it is copied, so that the copy never
        holds the whole tree twice; the buffer is empty afterwards.
        """
        cdef idx_t n = self.count, K = self.n_classes
        arrays = {
            "children_left": _moved(<void**> &self.left, n, np.intp),
            "children_right": _moved(<void**> &self.right, n, np.intp),
            "feature": _moved(<void**> &self.feature, n, np.intp),
            "threshold": _moved(<void**> &self.threshold, n, np.float64),
            "missing_go_to_left": _moved(<void**> &self.missing_left, n, np.uint8),
            "n_node_samples": _moved(<void**> &self.n_samples, n, np.intp),
            "weighted_n_node_samples": _moved(<void**> &self.weighted_n_samples, n, np.float64),
            "impurity": _moved(<void**> &self.impurity, n, np.float64),
            "improvement": _moved(<void**> &self.improvement, n, np.float64),
        }
        if self.sparse:  # node i's classes present and their proportions
            arrays["value_shares"] = (
                _moved(<void**> &self.share_start, n + 1, np.intp),
                _moved(<void**> &self.share_class, self.n_shares, np.int32),
                _moved(<void**> &self.share_value, self.n_shares, np.float64))
        else:
            arrays["value"] = _moved(<void**> &self.value, n * K, np.float64).reshape(n, K)
        categorical = _moved(<void**> &self.categorical, n, np.uint8)
        if self.n_sets > 0:
            arrays["categorical_split"] = categorical
            arrays["left_levels"] = _moved(<void**> &self.level_sets, 4 * self.n_sets,
                                           np.uint64).reshape(self.n_sets, 4)
        self.count = self.capacity = self.n_sets = self.sets_capacity = 0
        self.n_shares = self.shares_capacity = 0
        return arrays


cdef void _free_buffer(object capsule) noexcept:
    free(PyCapsule_GetPointer(capsule, NULL))


cdef _moved(void** source, idx_t n, dtype):
    """A numpy array of the first n items of *source that takes the buffer
    over, without a copy: the buffer is shrunk to n items (realloc) and freed
    with the array; *source is set to NULL. (A copy would fault in and zero a
    second buffer of the tree's size: 2 KiB per node at 256 classes.)"""
    cdef cnp.npy_intp length = n
    cdef void* shrunk
    dtype = np.dtype(dtype)
    if n == 0:
        free(source[0])
        source[0] = NULL
        return np.empty(0, dtype=dtype)
    shrunk = realloc(source[0], n * dtype.itemsize)
    if shrunk != NULL:  # else the larger buffer is kept whole
        source[0] = shrunk
    owner = PyCapsule_New(source[0], NULL, _free_buffer)
    source[0] = NULL
    array = cnp.PyArray_SimpleNewFromData(1, &length, dtype.num, PyCapsule_GetPointer(owner, NULL))
    cnp.set_array_base(array, owner)
    return array


cdef struct GrowthLimits:
    # the stopping rules both builders apply to a node (scikit-learn's meanings)
    idx_t max_depth             # a node at this depth is a leaf (the root has depth 0)
    idx_t min_samples_split     # a node with fewer cases is a leaf
    idx_t min_samples_leaf      # each child keeps at least this many cases
    double min_weight_leaf      # ... and this much weight
    double min_impurity_decrease  # a split decreasing the impurity less is not made
    double root_weight          # the root's weight: impurity decreases are weighted by
                                #   the node's share of it, as scikit-learn's
    bint uses_decrease          # the decrease is needed: min_impurity_decrease > 0, or
                                #   best-first growth (its priority)


cdef double _impurity_decrease(Splitter splitter) noexcept nogil:
    """Impurity decrease i(t) - N_tL / N_t i(t_L) - N_tR / N_t i(t_R) of the
    split just made (its children's class counts in crit.count_left /
    count_right; Breiman et al. 1984, section 2.4.1); times N_t / N it is
    scikit-learn's ``min_impurity_decrease`` quantity. The impurity is the
    criterion's (Gini or entropy); under the AUC criteria it is Gini's, since
    theta scores a split and has no node impurity."""
    cdef Criterion* c = &splitter.crit
    cdef int kind = CRITERION_GINI if (c.kind == CRITERION_AUC or c.kind == CRITERION_AUC_ECP) \
        else c.kind
    return criterion_impurity_decrease(c, c.count_left, c.count_right, kind)


cdef double _split_or_leaf(Splitter splitter, idx_t start, idx_t end, idx_t depth,
                           uint64_t key, const GrowthLimits* limits,
                           SplitRecord* split) noexcept nogil:
    """Class counts of samples[start:end] (crit.node_counts) and its best split
    (samples partitioned at split.pos, its random draws from the node's stream
    ``key``), or split.feature = -1 when the node is
    a leaf: fewer than two classes present, at max_depth, fewer than
    min_samples_split cases, too few cases or too little weight for two
    children, no valid split, or a split whose weighted impurity decrease
    (`_impurity_decrease`) is below min_impurity_decrease. Returns that
    decrease (0 for a leaf): best-first growth expands the largest first."""
    cdef idx_t n_present = splitter.node_reset(start, end)
    cdef double decrease
    split.feature = -1
    if (n_present < 2
            or depth >= limits.max_depth
            or end - start < limits.min_samples_split
            or end - start < 2 * limits.min_samples_leaf
            or splitter.crit.node_weight < 2.0 * limits.min_weight_leaf):
        return 0.0
    splitter.rng_state = key
    splitter.node_split(start, end, split)
    if split.feature < 0 or not limits.uses_decrease:
        return 0.0
    decrease = _impurity_decrease(splitter) * splitter.crit.node_weight / limits.root_weight
    if decrease + DBL_EPSILON < limits.min_impurity_decrease:
        split.feature = -1
        return 0.0
    return decrease


cdef GrowthLimits _growth_limits(Splitter splitter, idx_t max_depth, idx_t min_samples_split,
                                 double min_impurity_decrease, bint best_first):
    cdef GrowthLimits limits
    limits.uses_decrease = best_first or min_impurity_decrease > 0.0
    limits.max_depth = max_depth
    limits.min_samples_split = min_samples_split
    limits.min_samples_leaf = splitter.min_samples_leaf
    limits.min_weight_leaf = splitter.min_weight_leaf
    limits.min_impurity_decrease = min_impurity_decrease
    splitter.node_reset(0, splitter.n_active)
    limits.root_weight = splitter.crit.node_weight
    return limits


def build_tree(Splitter splitter, idx_t max_depth, idx_t min_samples_split=2,
               double min_impurity_decrease=0.0):
    """Grow one tree depth first, without the GIL.

    A node becomes a leaf when it has fewer than two classes present, has
    reached max_depth, has fewer than min_samples_split cases, cannot give two
    children of min_samples_leaf cases and min_weight_leaf weight, has no
    valid split among its features, or its best split decreases the weighted
    impurity by less than min_impurity_decrease (`_impurity_decrease`).

    Parameters
    ----------
    splitter : Splitter
        An `ExactSplitter` or a `BinnedSplitter` holding the data, the
        criterion and the leaf-size bounds of the tree.
    max_depth : int, non-negative
    min_samples_split : int, default=2
    min_impurity_decrease : float, default=0.0

    Returns
    -------
    Tree
    """
    cdef idx_t n_classes = splitter.n_classes
    cdef int criterion = splitter.crit.kind
    cdef _NodeBuffer nodes = _NodeBuffer(n_classes)
    cdef idx_t stack_capacity = 64, stack_size = 0, node, tree_depth = 0
    cdef StackRecord* stack = <StackRecord*> malloc(stack_capacity * sizeof(StackRecord))
    cdef StackRecord rec
    cdef SplitRecord split
    cdef StackRecord* grown
    cdef bint failed = False
    cdef double impurity
    cdef GrowthLimits limits
    cdef uint64_t root_key = splitter.rng_state
    if stack == NULL:
        raise MemoryError("cannot allocate the tree builder's stack")
    if splitter.n_active == 0:
        free(stack)
        raise ValueError("no sample has a positive weight")
    limits = _growth_limits(splitter, max_depth, min_samples_split, min_impurity_decrease,
                            False)

    with nogil:
        stack[0].start = 0
        stack[0].end = splitter.n_active
        stack[0].depth = 0
        stack[0].parent = -1
        stack[0].is_left = False
        stack[0].key = root_key
        stack_size = 1
        while stack_size > 0:
            stack_size -= 1
            rec = stack[stack_size]
            _split_or_leaf(splitter, rec.start, rec.end, rec.depth, rec.key, &limits, &split)
            impurity = _stored_impurity(splitter)
            node = nodes.add_node(rec.parent, rec.is_left, &split, &splitter.crit,
                                  rec.end - rec.start, impurity)
            if node < 0:
                failed = True
                break
            if rec.depth > tree_depth:
                tree_depth = rec.depth
            if split.feature < 0:
                continue
            if stack_size + 2 > stack_capacity:
                stack_capacity *= 2
                grown = <StackRecord*> realloc(stack, stack_capacity * sizeof(StackRecord))
                if grown == NULL:
                    failed = True
                    break
                stack = grown
            # right first, so that the left child is popped (and numbered) next
            stack[stack_size].start = split.pos
            stack[stack_size].end = rec.end
            stack[stack_size].depth = rec.depth + 1
            stack[stack_size].parent = node
            stack[stack_size].is_left = False
            stack[stack_size].key = _child_key(rec.key, False)
            stack[stack_size + 1].start = rec.start
            stack[stack_size + 1].end = split.pos
            stack[stack_size + 1].depth = rec.depth + 1
            stack[stack_size + 1].parent = node
            stack[stack_size + 1].is_left = True
            stack[stack_size + 1].key = _child_key(rec.key, True)
            stack_size += 2
    free(stack)
    if failed:
        raise MemoryError("out of memory while growing the tree")
    return _finished_tree(splitter, nodes, tree_depth)


cdef inline double _stored_impurity(Splitter splitter) noexcept nogil:
    """The impurity a builder stores for the node whose counts the splitter
    holds: the criterion's (Gini, entropy); 0 under the AUC criteria, whose
    ``impurity`` `_finished_tree` fills with theta afterwards."""
    cdef int kind = splitter.crit.kind
    if kind == CRITERION_AUC or kind == CRITERION_AUC_ECP:
        return 0.0
    return criterion_node_impurity(&splitter.crit)


cdef _finished_tree(Splitter splitter, _NodeBuffer nodes, idx_t tree_depth):
    """The Tree of a builder's nodes (well formed by construction, tests check
    it: not validated again like a loaded tree)."""
    cdef int criterion = splitter.crit.kind
    arrays = nodes.to_arrays()
    if criterion == CRITERION_AUC or criterion == CRITERION_AUC_ECP:
        arrays["impurity"] = _split_statistics(arrays, criterion == CRITERION_AUC_ECP)
    cdef Tree tree = Tree.__new__(Tree)
    _fill_tree(tree, splitter.n_features, splitter.n_classes, tree_depth, arrays)
    return tree


cdef struct FrontierRecord:
    # a node of best-first growth: its cases, its split once found, its children
    idx_t start
    idx_t end
    idx_t depth
    idx_t left                  # record of the left child, -1 until the node is expanded
    idx_t right
    double decrease             # weighted impurity decrease of its split (the priority)
    uint64_t key                # the node's random stream (`_child_key`)
    SplitRecord split           # feature -1: a leaf


cdef inline bint _before(const FrontierRecord* records, idx_t a, idx_t b) noexcept nogil:
    """Heap order: the larger decrease first, the earlier record of equal ones."""
    return (records[a].decrease > records[b].decrease
            or (records[a].decrease == records[b].decrease and a < b))


cdef void _heap_push(idx_t* heap, idx_t* size, const FrontierRecord* records,
                     idx_t record) noexcept nogil:
    cdef idx_t i = size[0], parent
    heap[i] = record
    size[0] += 1
    while i > 0:
        parent = (i - 1) // 2
        if not _before(records, heap[i], heap[parent]):
            break
        heap[i], heap[parent] = heap[parent], heap[i]
        i = parent


cdef idx_t _heap_pop(idx_t* heap, idx_t* size, const FrontierRecord* records) noexcept nogil:
    cdef idx_t top = heap[0], i = 0, child, n
    size[0] -= 1
    n = size[0]
    heap[0] = heap[n]
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and _before(records, heap[child + 1], heap[child]):
            child += 1
        if not _before(records, heap[child], heap[i]):
            break
        heap[i], heap[child] = heap[child], heap[i]
        i = child
    return top


def build_tree_best_first(Splitter splitter, idx_t max_depth, idx_t max_leaf_nodes,
                          idx_t min_samples_split=2, double min_impurity_decrease=0.0):
    """Grow one tree best first to at most max_leaf_nodes leaves, without the GIL.

    scikit-learn's BestFirstTreeBuilder: the split of each node is found when
    the node is made; of the nodes not yet expanded, the one whose split
    decreases the weighted impurity most (`_impurity_decrease`; ties to the
    node made first) is expanded next, until max_leaf_nodes leaves. The leaf
    rules are `build_tree`'s. The nodes are then numbered in depth-first
    preorder, as `build_tree` numbers them.

    Parameters
    ----------
    splitter : Splitter
    max_depth : int, non-negative
    max_leaf_nodes : int, at least 2
    min_samples_split : int, default=2
    min_impurity_decrease : float, default=0.0

    Returns
    -------
    Tree
    """
    if max_leaf_nodes < 2:
        raise ValueError(f"max_leaf_nodes must be at least 2; got {max_leaf_nodes}")
    if splitter.n_active == 0:
        raise ValueError("no sample has a positive weight")
    cdef GrowthLimits limits = _growth_limits(splitter, max_depth, min_samples_split,
                                              min_impurity_decrease, True)
    # a tree of L leaves has 2 L - 1 nodes: every buffer is allocated once
    cdef idx_t capacity = 2 * min(max_leaf_nodes, splitter.n_active) - 1
    cdef FrontierRecord* records = <FrontierRecord*> malloc(capacity * sizeof(FrontierRecord))
    cdef idx_t* heap = <idx_t*> malloc(capacity * sizeof(idx_t))
    cdef idx_t* stack = <idx_t*> malloc(capacity * sizeof(idx_t))
    cdef idx_t* parents = <idx_t*> malloc(capacity * sizeof(idx_t))
    # each made node's class counts, so that numbering the nodes need not sum them again
    # (up to SPARSE_CLASSES classes, K doubles a node: no more than its record; above,
    # nodes keep only their classes present and are summed again)
    cdef idx_t K = splitter.n_classes
    cdef bint keep_counts = K <= SPARSE_CLASSES
    cdef double* made_counts = <double*> malloc((capacity * K if keep_counts else 1)
                                                * sizeof(double))
    cdef idx_t n_records = 1, heap_size = 0, n_leaves = 1, r, child, side, stack_size
    cdef idx_t node, tree_depth = 0
    cdef idx_t start, end
    cdef _NodeBuffer nodes = _NodeBuffer(splitter.n_classes)
    cdef bint failed = False
    cdef SplitRecord leaf
    cdef FrontierRecord* rec
    if (records == NULL or heap == NULL or stack == NULL or parents == NULL
            or made_counts == NULL):
        free(records)
        free(heap)
        free(stack)
        free(parents)
        free(made_counts)
        raise MemoryError("cannot allocate the best-first builder's buffers")
    leaf.feature = -1
    with nogil:
        records[0].start = 0
        records[0].end = splitter.n_active
        records[0].depth = 0
        records[0].left = records[0].right = -1
        records[0].key = splitter.rng_state
        records[0].decrease = _split_or_leaf(splitter, 0, splitter.n_active, 0,
                                             records[0].key, &limits, &records[0].split)
        if keep_counts:
            memcpy(made_counts, splitter.crit.node_counts, K * sizeof(double))
        if records[0].split.feature >= 0:
            _heap_push(heap, &heap_size, records, 0)
        while heap_size > 0 and n_leaves < max_leaf_nodes:
            r = _heap_pop(heap, &heap_size, records)
            n_leaves += 1  # the node becomes two leaves
            for side in range(2):  # left, then right: scikit-learn's order of the splits
                child = n_records
                n_records += 1
                rec = &records[r]
                start = rec.start if side == 0 else rec.split.pos
                end = rec.split.pos if side == 0 else rec.end
                if side == 0:
                    rec.left = child
                else:
                    rec.right = child
                records[child].start = start
                records[child].end = end
                records[child].depth = records[r].depth + 1
                records[child].left = records[child].right = -1
                records[child].key = _child_key(records[r].key, side == 0)
                records[child].decrease = _split_or_leaf(
                    splitter, start, end, records[r].depth + 1, records[child].key, &limits,
                    &records[child].split)
                if keep_counts:
                    memcpy(made_counts + child * K, splitter.crit.node_counts,
                           K * sizeof(double))
                if records[child].split.feature >= 0:
                    _heap_push(heap, &heap_size, records, child)
        # depth-first preorder, left child first, as build_tree numbers the nodes
        stack[0] = 0
        parents[0] = -1
        stack_size = 1
        while stack_size > 0:
            stack_size -= 1
            r = stack[stack_size]
            rec = &records[r]
            if not keep_counts or (rec.end - rec.start) * SPARSE_NODE_FACTOR <= K:
                # many classes, or few cases among them: summed again in O(cases)
                splitter.node_reset(rec.start, rec.end)
            else:  # the counts as the node was made, the node state in O(K)
                memcpy(splitter.crit.node_counts, made_counts + r * K, K * sizeof(double))
                criterion_init(&splitter.crit)
            node = nodes.add_node(
                -1 if parents[stack_size] < 0 else parents[stack_size] >> 1,
                (parents[stack_size] & 1) == 1 if parents[stack_size] >= 0 else False,
                &rec.split if rec.left >= 0 else &leaf, &splitter.crit,
                rec.end - rec.start, _stored_impurity(splitter))
            if node < 0:
                failed = True
                break
            if rec.depth > tree_depth:
                tree_depth = rec.depth
            if rec.left >= 0:  # parents[] packs (parent node, is_left)
                stack[stack_size] = rec.right
                parents[stack_size] = node << 1
                stack[stack_size + 1] = rec.left
                parents[stack_size + 1] = (node << 1) | 1
                stack_size += 2
    free(records)
    free(heap)
    free(stack)
    free(parents)
    free(made_counts)
    if failed:
        raise MemoryError("out of memory while growing the tree")
    return _finished_tree(splitter, nodes, tree_depth)


def _split_statistics(arrays, end_cut):
    """theta, the AUC statistic of each node's split (1/2 at leaves): what
    ``impurity`` holds under the AUC criteria, so that scikit-learn's tree
    plots, which label it with the criterion's name, show theta.

    ``improvement`` is theta - 1/2, divided under "auc_ecp" by
    2 sqrt(q (1 - q)), q the share of the node's weight sent right.
    """
    split = arrays["feature"] >= 0
    theta = np.full(split.shape[0], 0.5)
    gain = arrays["improvement"][split]
    if end_cut:
        weight = arrays["weighted_n_node_samples"]
        q = weight[arrays["children_right"][split]] / weight[split]
        gain = gain * 2.0 * np.sqrt(q * (1.0 - q))
    theta[split] += gain
    return theta


# ---------------------------------------------------------------------------
# Tree: validated node arrays and prediction
# ---------------------------------------------------------------------------

NODE_ARRAYS = {
    "children_left": np.intp,
    "children_right": np.intp,
    "feature": np.intp,
    "threshold": np.float64,
    "missing_go_to_left": np.uint8,
    "value": np.float64,
    "n_node_samples": np.intp,
    "weighted_n_node_samples": np.float64,
    "impurity": np.float64,
    "improvement": np.float64,
}


NODE_DTYPE = np.dtype([("threshold", np.float64), ("right", np.int32), ("feature", np.int32),
                       ("n_samples", np.int32), ("missing_left", np.uint8),
                       ("categorical", np.uint8)], align=True)
# Node arrays of trees with categorical splits (absent: none): ``categorical_split``
# (uint8 per node, 1 where the node splits a categorical feature by a set of levels)
# and ``left_levels`` (uint64, one row of 4 words per categorical split in node order:
# bit c of a row is set when level c goes left).
CATEGORICAL_ARRAYS = {"categorical_split": np.uint8, "left_levels": np.uint64}
MAX_CATEGORIES = 255  # level codes 0..254 (bit 255 of a set is never a level)
INT32_MAX = np.iinfo(np.int32).max
assert NODE_DTYPE.itemsize == sizeof(Node), "numpy and C disagree on the node record layout"


cdef struct WalkNode:
    # the 16-byte record of `_walk_numeric_rows` (trees without categorical splits)
    float threshold        # the largest float32 <= the split's threshold; NaN at leaves
    int32_t feature        # 0 at leaves
    int32_t right          # right child; the node itself at leaves, where a row then stays
    int32_t missing_left   # NaN goes left; 0 at leaves


cdef class Tree:
    """A fitted tree as flat node arrays (names as in scikit-learn's `tree_`).

    Nodes are stored in depth-first preorder: the left child of node i is
    i + 1. Traversal reads one packed 24-byte record per node; the arrays
    below are derived from it or stored beside it. Without categorical
    splits, `apply` and the forest's prediction of many rows walk 16-byte
    float32 records made for the call (`_walk_numeric_rows`).

    The attributes scikit-learn's tree tools read (``sklearn.tree.export_text``,
    ``plot_tree``, ``export_graphviz``) are those of scikit-learn's ``Tree``
    with one output.

    Attributes
    ----------
    node_count, n_features, max_depth : int
    max_n_classes : int
        Number of classes.
    n_classes : intp array of shape (1,)
        ``[max_n_classes]``, as in scikit-learn (one entry per output).
    n_outputs : int
        1.
    children_left, children_right : intp arrays, -1 at leaves
    feature : intp array, -2 at leaves
    threshold : float64 array, x <= threshold goes left; -2 at leaves. Exact
        splitter: the midpoint between the node's largest value sent left and
        smallest sent right (randomForestSRC splits at the former); binned: a bin
        edge; NaN at a categorical split (see ``left_levels``)
    missing_go_to_left : uint8 array, 1 where NaN goes left (learnt when the node
        saw missing values, else the child with more training weight)
    categorical_split : uint8 array, 1 where the node splits a categorical
        feature by a set of levels
    left_levels : uint64 array (categorical splits, 4)
        One 256-bit set per categorical split, in node order: bit c of row r
        (word c // 64, bit c % 64) is set when level c goes left at the r-th
        categorical split. Levels absent from the node at training, unseen
        levels, NaN and codes outside 0..255 go where missing values go (the
        absent levels' bits say so).
    proba : float64 array (node_count, max_n_classes)
        The class proportions the tree predicts at each node: the node's
        weighted class proportions; for a leaf that `collapsed` made from a node
        below its node size, those of its parent.
    value : float64 array (node_count, 1, max_n_classes)
        ``proba`` in scikit-learn's layout (a read-only view).
    n_node_samples : intp array, distinct training cases in the node
    weighted_n_node_samples : float64 array, their total weight
    impurity : float64 array, Gini impurity under "gini", entropy in bits under
        "entropy"; under "auc" and "auc_ecp" the AUC statistic theta of the
        node's split (1/2 at leaves)
    improvement : float64 array, theta - 1/2 of the split under "auc",
        impurity decrease under "gini"/"entropy"; 0 at leaves
    """
    # attributes declared in _tree.pxd: node_count, n_features, max_n_classes, max_depth,
    # proba, n_node_samples, weighted_n_node_samples, impurity, improvement (read only)
    # and _nodes (NODE_DTYPE records, one per node)

    def __init__(self, n_features, n_classes, *, max_depth, children_left, children_right,
                 feature, threshold, missing_go_to_left, value, n_node_samples,
                 weighted_n_node_samples, impurity, improvement, categorical_split=None,
                 left_levels=None):
        value = np.asarray(value)
        if value.ndim == 3 and value.shape[1] == 1:  # scikit-learn's layout
            value = value[:, 0, :]
        arrays = dict(children_left=children_left, children_right=children_right,
                      feature=feature, threshold=threshold,
                      missing_go_to_left=missing_go_to_left, value=value,
                      n_node_samples=n_node_samples,
                      weighted_n_node_samples=weighted_n_node_samples,
                      impurity=impurity, improvement=improvement)
        if categorical_split is not None or left_levels is not None:
            arrays.update(categorical_split=categorical_split, left_levels=left_levels)
        _fill_tree(self, n_features, n_classes, max_depth,
                   _validated_node_arrays(int(n_features), int(n_classes), arrays))

    @property
    def n_classes(self):
        return np.array([self.max_n_classes], dtype=np.intp)

    @property
    def n_node_samples(self):
        if self._n_node_samples is None:  # not held: made on first read (`_fill_tree`)
            self._n_node_samples = _read_only(self._nodes["n_samples"].astype(np.intp))
        return self._n_node_samples

    @property
    def weighted_n_node_samples(self):
        if self._weighted is None:
            self._weighted = _read_only(self._node_weights())
        return self._weighted

    def _node_weights(self):
        """``weighted_n_node_samples``, made (and not held) when not held."""
        return (self._nodes["n_samples"].astype(np.float64) if self._weighted is None
                else self._weighted)

    @property
    def impurity(self):
        if self._impurity is None:
            self._impurity = _read_only(_split_statistics(
                _theta_inputs(self._nodes, self.improvement, self._node_weights()),
                self._theta_kind == 2))
        return self._impurity

    @property
    def n_outputs(self):
        return 1

    @property
    def proba(self):
        if self._proba is None:  # a grown tree of many classes: made on first read
            self._proba = _dense_rows(self._shares, np.arange(self.node_count),
                                      self.max_n_classes)
            self._proba.flags.writeable = False
        return self._proba

    @property
    def value(self):
        return self.proba[:, np.newaxis, :]

    @property
    def children_left(self):
        return np.where(self.feature >= 0, np.arange(1, self.node_count + 1), _LEAF)

    @property
    def children_right(self):
        return self._nodes["right"].astype(np.intp)

    @property
    def feature(self):
        return self._nodes["feature"].astype(np.intp)

    @property
    def threshold(self):
        threshold = self._nodes["threshold"].copy()
        threshold[self._nodes["categorical"] == 1] = np.nan
        return threshold

    @property
    def categorical_split(self):
        return self._nodes["categorical"].copy()

    @property
    def left_levels(self):
        return self._left_levels.copy()

    @property
    def missing_go_to_left(self):
        return self._nodes["missing_left"].copy()

    def node_arrays(self):
        """The node arrays as a dict (what `__init__` takes, with max_depth);
        ``value`` is `proba`, one row per node."""
        arrays = {name: self.proba if name == "value" else getattr(self, name)
                  for name in NODE_ARRAYS}
        if self._left_levels.shape[0] > 0:  # only trees with categorical splits
            arrays.update(categorical_split=self.categorical_split,
                          left_levels=self.left_levels)
        return arrays

    def __reduce__(self):
        return (_tree_from_state, (self.n_features, self.max_n_classes, self.max_depth,
                                   self.node_arrays()))

    @property
    def nbytes(self):
        """Memory held by the tree's arrays, in bytes: 24 + 8 + 8 K per node
        and 32 per categorical split, 8 more for each of ``n_node_samples``
        (above 2**31 - 1 cases), ``weighted_n_node_samples`` (unless equal to
        it) and ``impurity`` (unless theta of the splits) that is held; a
        statistic the others give is made on its first read and held from
        then on. A grown tree of many classes holds 8 per node and 12 per
        class present in it in place of the 8 K until `proba` is read."""
        held = [self._nodes, self._left_levels, self.improvement, self._proba,
                self._n_node_samples, self._weighted, self._impurity]
        held += [] if self._shares is None else list(self._shares)
        return int(sum(array.nbytes for array in held if array is not None))

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self._nodes["feature"] < 0))

    def apply(self, X):
        """Index of the leaf each row of X (float32, C order, n_features columns;
        or a sparse matrix) falls in."""
        if is_sparse(X) or isinstance(X, SparseRows):
            return _sparse_apply(self, _check_predict_input(X, self.n_features))
        cdef const X_t[:, ::1] Xv = _check_predict_input(X, self.n_features)
        cdef idx_t[::1] out = np.empty(Xv.shape[0], dtype=np.intp)
        cdef const Node* nodes = <const Node*> cnp.PyArray_DATA(self._nodes)
        cdef const uint64_t* sets = _level_sets(self)
        cdef WalkNode[::1] walk = _walk_buffer(self.node_count) \
            if _walk_pays(self, Xv.shape[0]) else None
        if Xv.shape[0] > 0:
            with nogil:
                _apply_rows(Xv, nodes, self.node_count, sets,
                            &walk[0] if walk is not None else NULL, &out[0])
        return np.asarray(out)

    def predict_proba(self, X):
        """Class proportions the tree predicts for each row: `proba` at its leaf."""
        return self.proba[self.apply(X)]

    def decision_path(self, X):
        """The nodes each row of X passes through, root to leaf.

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, node_count)
            ``indicator[i, j]`` is 1 where row i passes through node j, as in
            scikit-learn's ``decision_path``.
        """
        if is_sparse(X) or isinstance(X, SparseRows):
            return _sparse_decision_path(self, _check_predict_input(X, self.n_features))
        cdef const X_t[:, ::1] Xv = _check_predict_input(X, self.n_features)
        cdef const Node* nodes = <const Node*> cnp.PyArray_DATA(self._nodes)
        cdef const uint64_t* sets = _level_sets(self)
        cdef idx_t i, node, position
        indptr_array = np.zeros(Xv.shape[0] + 1, dtype=np.intp)
        if Xv.shape[0] > 0:  # a path's length is its leaf's depth + 1
            np.cumsum(self.node_depths()[self.apply(Xv)] + 1, out=indptr_array[1:])
        cdef idx_t[::1] indptr = indptr_array
        cdef idx_t[::1] indices = np.empty(max(indptr_array[-1], 1), dtype=np.intp)
        with nogil:
            for i in range(Xv.shape[0]):
                node = 0
                position = indptr[i]
                indices[position] = 0
                while nodes[node].feature >= 0:
                    node = _child_of(nodes, sets, node, &Xv[i, 0], 1)
                    position += 1
                    indices[position] = node
        n_paths = int(indptr_array[-1])
        return csr_matrix((np.ones(n_paths, dtype=np.intp), np.asarray(indices)[:n_paths],
                           indptr_array), shape=(Xv.shape[0], self.node_count))

    def node_depths(self):
        """Depth of every node (the root's is 0), intp array of shape (node_count,)."""
        cdef const Node* nodes = <const Node*> cnp.PyArray_DATA(self._nodes)
        cdef idx_t[::1] depth = np.zeros(self.node_count, dtype=np.intp)
        cdef idx_t node
        with nogil:
            for node in range(self.node_count):  # preorder: parents first
                if nodes[node].feature >= 0:
                    depth[node + 1] = depth[node] + 1
                    depth[nodes[node].right] = depth[node] + 1
        return np.asarray(depth)

    def collapsed(self, min_samples, split_impurity=False):
        """The tree that predicts from the deepest node on each row's path
        holding at least ``min_samples`` training cases (``n_node_samples``).

        Node sizes shrink along a path. A child below ``min_samples`` becomes a
        leaf predicting its parent's `proba` (its subtree is dropped); a node
        both of whose children are below it becomes a leaf. Leaves keep their
        own ``n_node_samples``, ``weighted_n_node_samples`` and ``impurity``
        (with ``split_impurity``, a leaf made from a split node gets 1/2).
        ``collapsed(m).predict_proba(X)`` therefore gives each row the class
        proportions of the deepest node on its path in this tree with at least
        m cases (the root at least). Collapsing again at the same size changes
        nothing.

        Parameters
        ----------
        min_samples : int >= 1
        split_impurity : bool, default=False
            Whether ``impurity`` holds theta of each node's split (trees grown
            under "auc" or "auc_ecp"), which is 1/2 at a leaf.

        Returns
        -------
        Tree
            This tree itself when no node is below ``min_samples``.
        """
        smallest = _check_min_samples(min_samples)
        if not np.any(self._nodes["n_samples"] < smallest):  # clipped as the node records are
            return self
        kept, source, leaf_code, children_left, children_right, max_depth = _collapse_plan(
            self, min(smallest, INT32_MAX + 1))
        leaf = leaf_code.view(bool)
        arrays = {
            "children_left": children_left,
            "children_right": children_right,
            "feature": np.where(leaf, _UNDEFINED, self._nodes["feature"][kept].astype(np.intp)),
            "threshold": np.where(leaf, _UNDEFINED, self.threshold[kept]),
            "missing_go_to_left": np.where(leaf, 0, self._nodes["missing_left"][kept])
                                  .astype(np.uint8),
            # the node whose proportions each kept node predicts (one gather of the kept
            # rows: at many classes the proportions are most of a tree)
            "value": (np.take(self._proba, source, axis=0) if self._proba is not None
                      else _dense_rows(self._shares, source, self.max_n_classes)),
            "improvement": np.where(leaf, 0.0, self.improvement[kept]),
            "n_node_samples": self.n_node_samples[kept],
            "weighted_n_node_samples": self.weighted_n_node_samples[kept],
            "impurity": (np.where(leaf, 0.5, self.impurity[kept]) if split_impurity
                         else self.impurity[kept]),
        }
        categorical = self._nodes["categorical"] == 1
        if categorical.any():  # the sets of the categorical splits that stay splits
            row = np.cumsum(categorical) - 1
            stays = categorical[kept] & ~leaf
            arrays["categorical_split"] = stays.astype(np.uint8)
            arrays["left_levels"] = np.ascontiguousarray(self._left_levels[row[kept][stays]])
        cdef Tree tree = Tree.__new__(Tree)
        _fill_tree(tree, self.n_features, self.max_n_classes, max_depth, arrays)
        return tree

    def packed(self):
        """This tree in fewer bytes (`PackedTree`), for holding it until the
        forest has chosen the node size to collapse it to; `PackedTree.unpacked`
        gives it back with every array equal to the bit."""
        return PackedTree(self)

    def compute_feature_importances(self):
        """Weighted decrease of the node statistic per feature, normalised to
        sum to one (all zeros for a tree without splits)."""
        feature = self.feature
        internal = feature >= 0
        importances = np.bincount(
            feature[internal],
            weights=self._node_weights()[internal] * self.improvement[internal],
            minlength=self.n_features).astype(np.float64)
        total = importances.sum()
        return importances / total if total > 0 else importances


# the bits of 1.0, for finding the rows of class proportions that are one class alone
ONE_BITS = np.array(1.0).view(np.uint64)


cdef class PackedTree:
    """A grown `Tree` held in fewer bytes while the forest chooses the node
    size its trees predict from (`Tree.packed`): at K = 3 about 41 bytes per
    node of a fully grown tree under the AUC criteria, where the tree holds
    56 (`nbytes`).

    It keeps the node records and level sets, and the node statistics the
    tree holds (`Tree.nbytes`), and packs two arrays, checked to the bit when
    the tree is packed (an array that fails its check is kept whole):

    * class proportions: a node holding one class alone (1.0 there, 0.0
      elsewhere: every leaf of a fully grown tree) keeps that class (int8),
      the other nodes their rows; a grown tree of many classes keeps its
      ``(start, class, proportion)`` shares;
    * ``improvement``: the split nodes' only (0.0 at leaves); a held
      ``impurity`` (Gini, entropy): that of the nodes not of one class alone
      (0.0 there).
    """
    cdef readonly idx_t node_count, n_features, max_n_classes, max_depth
    cdef object _nodes, _left_levels, _shares
    cdef object _one_class        # int8 per node: its class when it holds one class alone,
                                  #   else -1; None: every row is in _mixed_rows
    cdef object _mixed_rows       # float64 (nodes not of one class alone, K), node order
    cdef object _improvement      # float64: of the split nodes (_split_only), or every node's
    cdef bint _split_only
    cdef object _impurity         # float64 as the tree holds it (None: not held), of the
                                  #   nodes not of one class alone when _mixed_impurity
    cdef bint _mixed_impurity, _samples_derived, _weight_derived
    cdef int _theta_kind
    cdef object _weighted, _n_node_samples  # as the tree holds them (None: not held)

    def __init__(self, Tree tree):
        self.node_count, self.n_features = tree.node_count, tree.n_features
        self.max_n_classes, self.max_depth = tree.max_n_classes, tree.max_depth
        self._nodes, self._left_levels = tree._nodes, tree._left_levels
        self._samples_derived, self._weight_derived = tree._samples_derived, tree._weight_derived
        self._theta_kind = tree._theta_kind
        self._n_node_samples = None if tree._samples_derived else tree._n_node_samples
        self._weighted = None if tree._weight_derived else tree._weighted
        self._impurity = None if tree._theta_kind else tree._impurity
        split = tree._nodes["feature"] >= 0
        improvement = tree.improvement
        self._split_only = not np.any(improvement[~split].view(np.uint64))
        self._improvement = np.ascontiguousarray(improvement[split]) if self._split_only \
            else improvement
        self._shares = tree._shares
        self._one_class = self._mixed_rows = None
        if tree._shares is None:  # dense rows: those of one class alone keep their class
            bits = tree._proba.view(np.uint64)
            ones = bits == ONE_BITS
            alone = (np.count_nonzero(ones, axis=1) == 1) & np.all(ones | (bits == 0), axis=1)
            if self.max_n_classes <= 127 and alone.any():
                self._one_class = np.where(alone, np.argmax(ones, axis=1), -1).astype(np.int8)
                self._mixed_rows = np.ascontiguousarray(tree._proba[~alone])
                if self._impurity is not None and not np.any(
                        self._impurity[alone].view(np.uint64)):
                    self._impurity, self._mixed_impurity = self._impurity[~alone], True
            else:
                self._mixed_rows = tree._proba

    @property
    def nbytes(self):
        """Memory held by the arrays, in bytes (the node records and level sets
        it shares with the tree it was packed from included)."""
        held = [self._nodes, self._left_levels, self._one_class, self._mixed_rows,
                self._improvement, self._impurity, self._weighted, self._n_node_samples]
        held += list(self._shares) if self._shares is not None else []
        return int(sum(array.nbytes for array in held if array is not None))

    def unpacked(self):
        """The `Tree` this was packed from: every array equal to the bit."""
        cdef Tree tree = Tree.__new__(Tree)
        tree.n_features, tree.max_n_classes = self.n_features, self.max_n_classes
        tree.max_depth, tree.node_count = self.max_depth, self.node_count
        tree._nodes, tree._left_levels, tree._shares = self._nodes, self._left_levels, self._shares
        tree._proba = None
        if self._one_class is not None:
            proba = np.zeros((self.node_count, self.max_n_classes))
            alone = self._one_class >= 0
            proba[np.flatnonzero(alone), self._one_class[alone]] = 1.0
            proba[~alone] = self._mixed_rows
            tree._proba = _read_only(proba)
        elif self._mixed_rows is not None:
            tree._proba = self._mixed_rows
        improvement = self._improvement
        if self._split_only:
            improvement = np.zeros(self.node_count)
            improvement[self._nodes["feature"] >= 0] = self._improvement
        tree.improvement = _read_only(improvement)
        tree._samples_derived, tree._weight_derived = self._samples_derived, self._weight_derived
        tree._theta_kind = self._theta_kind
        tree._n_node_samples, tree._weighted = self._n_node_samples, self._weighted
        tree._impurity = self._impurity
        if self._mixed_impurity:
            impurity = np.zeros(self.node_count)
            impurity[self._one_class < 0] = self._impurity
            tree._impurity = _read_only(impurity)
        return tree

    def collapsed(self, min_samples, split_impurity=False):
        """`Tree.collapsed` of the unpacked tree."""
        return self.unpacked().collapsed(min_samples, split_impurity)


cdef tuple _collapse_plan(Tree tree, idx_t smallest):
    """The nodes `Tree.collapsed` keeps, in one preorder pass: a node is kept
    when its parent is kept as a split, and a kept split stays a split unless
    both children hold fewer than ``smallest`` cases (node sizes shrink along
    a path, so a kept split is not itself below it and its children are kept).

    Returns the kept nodes (ascending), the node whose proportions each
    predicts (its parent's when it is below ``smallest``, else its own),
    whether each is a leaf (uint8), their children in the new numbering
    (_LEAF at leaves) and the largest depth among them.
    """
    cdef const Node* nodes = <const Node*> cnp.PyArray_DATA(tree._nodes)
    cdef idx_t n = tree.node_count, i, j, r, m = 0, max_depth = 0
    cdef bint is_split, leaf
    kept_array = np.empty(n, dtype=np.intp)
    source_array = np.empty(n, dtype=np.intp)
    leaf_array = np.empty(n, dtype=np.uint8)
    left_array = np.empty(n, dtype=np.intp)
    right_array = np.empty(n, dtype=np.intp)
    work = np.zeros((4, n), dtype=np.intp)  # kept flag, parent, depth, new index
    cdef idx_t[::1] kept = kept_array, source = source_array
    cdef idx_t[::1] left = left_array, right = right_array
    cdef unsigned char[::1] leaf_out = leaf_array
    cdef idx_t[::1] is_kept = work[0], parent = work[1], depth = work[2], new_index = work[3]
    with nogil:
        if n > 0:
            is_kept[0] = 1
            parent[0] = -1
        for i in range(n):  # preorder: a parent before its children
            if not is_kept[i]:
                continue
            is_split = nodes[i].feature >= 0
            r = nodes[i].right
            leaf = (not is_split or (nodes[i + 1].n_samples < smallest
                                     and nodes[r].n_samples < smallest))
            new_index[i] = m
            kept[m] = i
            source[m] = parent[i] if i > 0 and nodes[i].n_samples < smallest else i
            leaf_out[m] = leaf
            left[m] = _LEAF if leaf else m + 1
            right[m] = _LEAF
            if depth[i] > max_depth:
                max_depth = depth[i]
            if not leaf:  # its children are kept
                is_kept[i + 1] = is_kept[r] = 1
                parent[i + 1] = parent[r] = i
                depth[i + 1] = depth[r] = depth[i] + 1
            m += 1
        for j in range(m):  # a right child is numbered after its sibling's subtree
            if not leaf_out[j]:
                right[j] = new_index[nodes[kept[j]].right]
    return (kept_array[:m], source_array[:m], leaf_array[:m], left_array[:m],
            right_array[:m], max_depth)


cdef _fill_tree(Tree tree, n_features, n_classes, max_depth, dict arrays):
    """Set a tree's fields from well-formed node arrays of the right dtypes."""
    tree.n_features = n_features
    tree.max_n_classes = n_classes
    tree.max_depth = max_depth
    tree.node_count = arrays["children_left"].shape[0]
    tree._nodes = np.empty(tree.node_count, dtype=NODE_DTYPE)
    tree._nodes["threshold"] = arrays["threshold"]
    tree._nodes["right"] = arrays["children_right"]
    tree._nodes["feature"] = arrays["feature"]
    tree._nodes["missing_left"] = arrays["missing_go_to_left"]
    tree._nodes["n_samples"] = np.minimum(arrays["n_node_samples"], INT32_MAX)
    categorical = arrays.get("categorical_split")
    if categorical is None:
        tree._nodes["categorical"] = 0
        tree._left_levels = np.zeros((0, 4), dtype=np.uint64)
    else:  # the packed threshold of a categorical split: its row of left_levels
        tree._nodes["categorical"] = categorical
        split = categorical == 1
        tree._nodes["threshold"][split] = np.arange(np.count_nonzero(split))
        tree._left_levels = np.ascontiguousarray(arrays["left_levels"], dtype=np.uint64)
    tree._left_levels.flags.writeable = False
    tree._proba = arrays.get("value")  # or node by node (a grown tree of many classes)
    tree._shares = arrays.get("value_shares")
    tree.improvement = arrays["improvement"]
    _hold_statistics(tree, arrays["n_node_samples"], arrays["weighted_n_node_samples"],
                     arrays["impurity"])
    held = [tree._proba] if tree._proba is not None else list(tree._shares)
    for array in held + [tree.improvement]:
        array.flags.writeable = False


cdef _hold_statistics(Tree tree, n_node_samples, weighted, impurity):
    """Set the node statistics of a tree whose node records and improvement
    are set, holding only those the others do not give to the bit (checked
    here): ``n_node_samples`` unless the records' n_samples are it,
    ``weighted_n_node_samples`` unless equal to it (cases of weight one),
    ``impurity`` unless it is theta of each node's split (`_split_statistics`)."""
    n_samples = tree._nodes["n_samples"]
    tree._samples_derived = np.array_equal(n_node_samples, n_samples)
    tree._n_node_samples = None if tree._samples_derived else _read_only(n_node_samples)
    tree._weight_derived = _same_bits(weighted, n_samples.astype(np.float64))
    tree._weighted = None if tree._weight_derived else _read_only(weighted)
    tree._theta_kind = 0
    tree._impurity = _read_only(impurity)
    if impurity.shape[0] > 0 and impurity[0] >= 0.5:  # theta >= 1/2; Gini, entropy of a root
        for kind in (1, 2):                         # of one class: 0
            if _same_bits(impurity, _split_statistics(
                    _theta_inputs(tree._nodes, tree.improvement, weighted), kind == 2)):
                tree._theta_kind, tree._impurity = kind, None
                break


def _theta_inputs(nodes, improvement, weighted):
    """What `_split_statistics` reads, from a tree's node records."""
    return {"feature": nodes["feature"], "improvement": improvement,
            "weighted_n_node_samples": weighted, "children_right": nodes["right"]}


cdef _read_only(array):
    array.flags.writeable = False
    return array


def _same_bits(a, b):
    """Whether two float64 arrays hold the same bits (NaN, -0.0 included)."""
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def _dense_rows(shares, const idx_t[::1] nodes, idx_t n_classes):
    """The proportions of the given nodes as rows of n_classes (0 for the
    classes absent), from a grown tree's ``(start, class, proportion)``:
    what the dense builder writes, to the bit."""
    cdef const idx_t[::1] start = shares[0]
    cdef const int32_t[::1] klass = shares[1]
    cdef const double[::1] share = shares[2]
    out_array = np.zeros((nodes.shape[0], n_classes))
    cdef double[:, ::1] out = out_array
    cdef idx_t i, e
    with nogil:
        for i in range(nodes.shape[0]):
            for e in range(start[nodes[i]], start[nodes[i] + 1]):
                out[i, klass[e]] = share[e]
    return out_array


def _tree_from_state(n_features, n_classes, max_depth, arrays):
    return Tree(n_features, n_classes, max_depth=max_depth, **arrays)


def _validated_node_arrays(idx_t n_features, idx_t n_classes, dict arrays):
    """Check the node arrays describe a well-formed preorder tree; raise
    ValueError naming the first problem found."""
    checked = {}
    for name, dtype in NODE_ARRAYS.items():
        array = np.asarray(arrays[name])
        if array.dtype.kind not in "iuf" or (np.dtype(dtype).kind == "i" and array.dtype.kind == "f"):
            raise ValueError(f"tree array {name!r} has dtype {array.dtype}, expected {np.dtype(dtype)}")
        checked[name] = np.ascontiguousarray(array, dtype=dtype)
    n_nodes = checked["children_left"].shape[0]
    if n_features < 1 or n_classes < 1:
        raise ValueError("a tree needs n_features >= 1 and n_classes >= 1")
    if n_nodes < 1:
        raise ValueError("a tree needs at least one node")
    if n_nodes >= 2 ** 31 or n_features >= 2 ** 31:
        raise ValueError("a tree holds fewer than 2**31 nodes and features")
    for name, array in checked.items():
        expected = (n_nodes, n_classes) if name == "value" else (n_nodes,)
        if array.shape != expected:
            raise ValueError(f"tree array {name!r} has shape {array.shape}, expected {expected}")
    left, right, feature = checked["children_left"], checked["children_right"], checked["feature"]
    index = np.arange(n_nodes)
    leaf = left == _LEAF
    internal = ~leaf
    if np.any(right[leaf] != _LEAF):
        raise ValueError("tree is malformed: a node has a right child but no left child")
    bad = internal & (left != index + 1)
    if bad.any():
        raise ValueError(f"tree is malformed: children_left of node {int(np.flatnonzero(bad)[0])} "
                         "is out of range: it must be the next node (depth-first preorder)")
    bad = internal & ((right <= index + 1) | (right >= n_nodes))
    if bad.any():
        raise ValueError(f"tree is malformed: children_right of node {int(np.flatnonzero(bad)[0])} "
                         "is out of range (children must follow their parent)")
    if internal.any():
        targets = np.concatenate([left[internal], right[internal]])
        # targets > 0 here (left = index + 1, right > index + 1): a count per node
        if np.bincount(targets).max() > 1:
            raise ValueError("tree is malformed: a node is the child of two parents")
        if targets.size != n_nodes - 1:
            raise ValueError("tree is malformed: some nodes are unreachable from the root")
    elif n_nodes != 1:
        raise ValueError("tree is malformed: some nodes are unreachable from the root")
    if np.any((feature[internal] < 0) | (feature[internal] >= n_features)):
        raise ValueError("tree is malformed: a split feature index is out of range")
    if np.any(feature[leaf] >= 0):
        raise ValueError("tree is malformed: a leaf has a split feature (leaves have -2)")
    if np.any(checked["missing_go_to_left"] > 1):
        raise ValueError("tree is malformed: missing_go_to_left must be 0 or 1")
    categorical = np.zeros(n_nodes, dtype=bool)
    if arrays.get("categorical_split") is not None or arrays.get("left_levels") is not None:
        if arrays.get("categorical_split") is None or arrays.get("left_levels") is None:
            raise ValueError("tree is malformed: categorical_split and left_levels come together")
        for name, dtype in CATEGORICAL_ARRAYS.items():
            array = np.asarray(arrays[name])
            if array.dtype.kind not in "iu":
                raise ValueError(f"tree array {name!r} has dtype {array.dtype}, "
                                 f"expected {np.dtype(dtype)}")
            if array.size and (array.min() < 0 or (name == "categorical_split"
                                                   and array.max() > 1)):
                raise ValueError(f"tree is malformed: {name} holds values out of range")
            checked[name] = np.ascontiguousarray(array, dtype=dtype)
        if checked["categorical_split"].shape != (n_nodes,):
            raise ValueError(f"tree array 'categorical_split' has shape "
                             f"{checked['categorical_split'].shape}, expected ({n_nodes},)")
        categorical = checked["categorical_split"] == 1
        if np.any(categorical & leaf):
            raise ValueError("tree is malformed: a leaf is marked as a categorical split")
        expected = (int(np.count_nonzero(categorical)), 4)
        if checked["left_levels"].shape != expected:
            raise ValueError(f"tree array 'left_levels' has shape {checked['left_levels'].shape}, "
                             f"expected {expected} (one row per categorical split)")
    if not np.all(np.isfinite(checked["threshold"][~categorical])):
        raise ValueError("tree is malformed: thresholds must be finite")
    value = checked["value"]
    if not np.all(np.isfinite(value)):
        raise ValueError("tree is malformed: leaf values must be finite")
    # every node holds class proportions: in [0, 1] and summing to 1, within rounding
    tolerance = 1e-6
    bad = np.any((value < 0) | (value > 1 + tolerance), axis=1)
    bad |= np.abs(value.sum(axis=1) - 1) > tolerance
    if bad.any():
        node = int(np.flatnonzero(bad)[0])
        raise ValueError(f"tree is malformed: the class proportions of node {node} "
                         f"({value[node].tolist()}) must lie in [0, 1] and sum to 1")
    return checked


cdef inline const uint64_t* _level_sets(Tree tree):
    """The tree's left_levels rows (4 words each), for `goes_left`."""
    return <const uint64_t*> cnp.PyArray_DATA(tree._left_levels)


cdef inline float _float32_at_most(double threshold) noexcept nogil:
    """The largest float32 not above a finite threshold (`Tree` checks that):
    a float32 x satisfies x <= threshold exactly when x <= it."""
    cdef float rounded
    if threshold >= <double> FLT_MAX:  # beyond float32 (its rounding would be +-inf)
        return FLT_MAX
    if threshold < -<double> FLT_MAX:
        return -INFINITY
    rounded = <float> threshold  # to nearest: one step down when above
    return nextafterf(rounded, -INFINITY) if rounded > threshold else rounded


cdef void _fill_walk(const Node* nodes, idx_t node_count, WalkNode* walk) noexcept nogil:
    """The `WalkNode` records of a tree without categorical splits."""
    cdef idx_t node
    for node in range(node_count):
        if nodes[node].feature < 0:
            walk[node].threshold = NAN
            walk[node].feature = 0
            walk[node].right = <int32_t> node
            walk[node].missing_left = 0
        else:
            walk[node].threshold = _float32_at_most(nodes[node].threshold)
            walk[node].feature = nodes[node].feature
            walk[node].right = nodes[node].right
            walk[node].missing_left = nodes[node].missing_left


def _walk_buffer(idx_t node_count):
    """Room for node_count `WalkNode` records (16 bytes each)."""
    return np.empty(node_count, dtype=[("threshold", np.float32), ("feature", np.int32),
                                       ("right", np.int32), ("missing_left", np.int32)])


cdef inline bint _walk_pays(Tree tree, idx_t n_rows) noexcept:
    """Whether to walk `WalkNode` records made for this call: no categorical
    split, and rows enough to repay the records (a few ns a node)."""
    return tree._left_levels.shape[0] == 0 and n_rows * WALK_ROWS_PER_NODE >= tree.node_count


cdef inline idx_t _child_of(const Node* nodes, const uint64_t* sets, idx_t node,
                            const X_t* row, idx_t col_stride) noexcept nogil:
    """The child of split node ``node`` the row goes to (`goes_left`: node + 1,
    else ``right``), selected by arithmetic rather than a branch; ``sets``: the
    tree's left_levels (categorical splits)."""
    cdef const Node* current = nodes + node
    return node + 1 + ((1 - goes_left(current, row[current.feature * col_stride], sets))
                       * (current.right - node - 1))


cdef enum:
    LANES = 32  # rows on their way down a tree at once in _walk_rows
    GROUP = 8  # rows that go down a tree together in _walk_numeric_rows
    WALK_ROWS_PER_NODE = 4  # _walk_numeric_rows from n_rows >= node_count / this
    PREFETCH_VALUES = 512  # of a row's first values, fetched when it takes a lane


cdef inline const X_t* _take_lane(const X_t* base, const idx_t* rows, idx_t i,
                                  idx_t row_stride, idx_t n_contiguous) noexcept nogil:
    """Start of row i (rows[i] when an index is given); asks for the first
    n_contiguous values' cache lines ahead of the walk, which reads them at
    random offsets that the hardware prefetchers do not foresee."""
    cdef const X_t* row = base + (rows[i] if rows != NULL else i) * row_stride
    cdef idx_t offset = 0, end = min(n_contiguous, PREFETCH_VALUES)
    while offset < end:
        prefetch(row + offset)
        offset += 64 // sizeof(X_t)  # one cache line
    return row


cdef void _walk_rows(const X_t* base, const idx_t* rows, idx_t n, idx_t row_stride,
                     idx_t col_stride, idx_t n_contiguous, const Node* nodes,
                     const uint64_t* sets, idx_t* out) noexcept nogil:
    """For rows i < n, the leaf where row i's path ends.

    Row i starts at base + (rows[i] if rows else i) * row_stride, its value j
    at j * col_stride from there (C order: row_stride = p, col_stride = 1 and
    n_contiguous = p; Fortran order: 1, n_rows and 0, no prefetch).

    A path is a chain of dependent loads. LANES rows go down side by side,
    one level per step, so that their memory latencies overlap; a row that
    has arrived hands its lane to the next row (the one branch per row that
    is hard to predict).
    """
    cdef idx_t lane_row[LANES]   # row of the lane, -1 when free
    cdef idx_t lane_node[LANES]
    cdef const X_t* lane_start[LANES]
    cdef idx_t lane, i, node, child, next_row = 0, finished = 0
    for lane in range(LANES):
        lane_row[lane] = -1
    while finished < n:
        for lane in range(LANES):
            i = lane_row[lane]
            if i < 0:  # a free lane takes the next row; its walk starts next round,
                if next_row < n:  # when the prefetched values have had time to come
                    lane_row[lane] = next_row
                    lane_node[lane] = 0
                    lane_start[lane] = _take_lane(base, rows, next_row, row_stride,
                                                  n_contiguous)
                    next_row += 1
                continue
            node = lane_node[lane]
            # branch predicted "go on": the next step need not wait for it
            if nodes[node].feature >= 0:
                lane_node[lane] = _child_of(nodes, sets, node, lane_start[lane], col_stride)
                continue
            out[i] = node
            lane_row[lane] = -1
            finished += 1


cdef void _walk_numeric_rows(const X_t* base, idx_t n, idx_t n_features,
                             const WalkNode* nodes, idx_t* out) noexcept nogil:
    """For the rows of a C-ordered X (n x n_features from base), the leaf where
    each row's path ends, along `WalkNode` records.

    GROUP rows go down together, one level per step, until none moves: a leaf
    sends a row to itself, so each step is the same few instructions for
    every row, without a branch that depends on the data."""
    cdef idx_t node[GROUP]
    cdef const X_t* row[GROUP]
    cdef const WalkNode* record
    cdef X_t x
    cdef idx_t left
    cdef bint moved
    cdef idx_t start = 0, g, size, current, child
    while start < n:
        size = min(<idx_t> GROUP, n - start)
        for g in range(GROUP):  # a short last group repeats its first row
            node[g] = 0
            row[g] = base + (start + (g if g < size else 0)) * n_features
        moved = True
        while moved:
            moved = False
            for g in range(GROUP):
                current = node[g]
                record = nodes + current
                x = row[g][record.feature]
                left = (x <= record.threshold) | ((x != x) & record.missing_left)
                child = record.right  # node + 1 when left, by arithmetic: no branch
                child += (current + 1 - child) & -left
                moved |= child != current
                node[g] = child
        for g in range(size):
            out[start + g] = node[g]
        start += GROUP


cdef void _apply_rows(const X_t[:, ::1] X, const Node* nodes, idx_t node_count,
                      const uint64_t* sets, WalkNode* walk, idx_t* out) noexcept nogil:
    """The leaf of each row of a C-ordered X: `_walk_numeric_rows` over
    records made in ``walk`` (node_count of them) when it is not NULL (see
    `_walk_pays`), else `_walk_rows`."""
    if X.shape[0] == 0:
        return
    if walk != NULL:
        _fill_walk(nodes, node_count, walk)
        _walk_numeric_rows(&X[0, 0], X.shape[0], X.shape[1], walk, out)
    else:
        _walk_rows(&X[0, 0], NULL, X.shape[0], X.shape[1], 1, X.shape[1], nodes, sets, out)


def _node_sizes(min_samples):
    """Candidate node sizes as an int32 array: taken as it is when it is one,
    else each checked by `_check_min_samples`."""
    if isinstance(min_samples, np.ndarray) and min_samples.dtype == np.int32:
        return np.ascontiguousarray(min_samples)
    return np.array([_check_min_samples(m) for m in min_samples], dtype=np.int32)


def _check_min_samples(min_samples):
    """min_samples as a node-size bound: an int >= 1, clipped to what a node can hold."""
    if isinstance(min_samples, (bool, np.bool_)) or int(min_samples) != min_samples \
            or min_samples < 1:
        raise ValueError(f"min_samples must be an integer >= 1; got {min_samples}")
    return min(int(min_samples), INT32_MAX)


def _check_predict_input(X, n_features):
    """X as float32 C order (a sparse X as `SparseRows`); ValueError unless 2-d
    with n_features columns (None: any)."""
    if is_sparse(X) or isinstance(X, SparseRows):
        X = X if isinstance(X, SparseRows) else SparseRows(X)
        if n_features is not None and X.shape[1] != n_features:
            raise ValueError(f"X must have shape (n_samples, {n_features}); got {X.shape}")
        return X
    X = np.ascontiguousarray(X, dtype=np.float32)
    if X.ndim != 2 or (n_features is not None and X.shape[1] != n_features):
        raise ValueError(f"X must have shape (n_samples, {n_features}); got {X.shape}")
    return X


def accumulate_proba(X, trees, double[:, ::1] out, const unsigned char[::1] stop=None):
    """Add the leaf class proportions of every tree to `out` (rows of X).

    Parameters
    ----------
    X : float32 array (n_samples, n_features), C order, or `SparseRows`
    trees : sequence of Tree
        Each must have n_features features and out.shape[1] classes
        (ValueError otherwise, checked before any row is read).
    out : float64 array (n_samples, n_classes), C order
    stop : uint8 array of shape (1,), optional
        Checked between trees: set it to 1 from another thread to make the
        call return early. In the main thread a pending signal (Ctrl-C) is
        raised between trees.

    Runs without the GIL per tree, so row blocks can be predicted in threads.
    """
    X = _check_predict_input(X, _common_n_features(trees))
    cdef const X_t[:, ::1] Xv
    cdef SparseWalk rows_of = None
    if isinstance(X, SparseRows):
        rows_of = SparseWalk(X)
    else:
        Xv = X
    cdef Tree tree
    cdef const Node* nodes
    cdef const uint64_t* sets
    cdef WalkNode* walk
    cdef WalkNode[::1] walk_buffer = None  # records of the trees walked by `_walk_numeric_rows`
    cdef const double[:, ::1] value
    cdef idx_t i, k, leaf, n = X.shape[0], n_classes = out.shape[1]
    cdef idx_t[::1] leaves = np.empty(max(n, 1), dtype=np.intp)
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} rows, X has {n}")
    for tree in trees:
        if tree.max_n_classes != n_classes:
            raise ValueError(f"a tree has {tree.max_n_classes} classes, out has {n_classes} "
                             "columns")
    if n == 0:
        return
    for tree in trees:
        if stop is not None and stop[0]:
            return
        nodes = <const Node*> cnp.PyArray_DATA(tree._nodes)
        sets = _level_sets(tree)
        walk = NULL
        if rows_of is None and _walk_pays(tree, n):
            if walk_buffer is None or walk_buffer.shape[0] < tree.node_count:
                walk_buffer = _walk_buffer(tree.node_count)
            walk = &walk_buffer[0]
        value = tree.proba
        with nogil:
            if rows_of is None:
                _apply_rows(Xv, nodes, tree.node_count, sets, walk, &leaves[0])
            else:
                _walk_sparse_rows(rows_of, NULL, n, nodes, sets, &leaves[0])
            for i in range(n):
                leaf = leaves[i]
                for k in range(n_classes):
                    out[i, k] += value[leaf, k]
        PyErr_CheckSignals()


def _common_n_features(trees):
    """The number of features every tree was grown on (ValueError if they differ)."""
    cdef Tree tree
    counts = {tree.n_features for tree in trees}
    if len(counts) > 1:
        raise ValueError(f"the trees were grown on different numbers of features: {sorted(counts)}")
    return counts.pop() if counts else None


def accumulate_oob_proba(Tree tree, X, const idx_t[::1] counts,
                         min_samples, double[:, :, ::1] out, double[::1] n_trees):
    """For the tree's out-of-bag rows of X (``counts == 0``), add the class
    proportions the tree gives each row to ``out[c, row]`` for each candidate
    node size m_c, and 1 to ``n_trees[row]``; one traversal per row, and one
    call without the GIL per tree.

    The node for m_c is the one whose `proba` ``Tree.collapsed(m_c)`` predicts:
    the deepest on the row's path holding at least m_c training cases. Node
    sizes shrink along a path, so it is the deepest such ancestor of the row's leaf: each
    row is sent to its leaf, and a table of those ancestors, made in one pass
    over the nodes, gives every candidate's node.

    Parameters
    ----------
    tree : Tree
    X : float32 (n_samples, n_features), any memory order (the fit's training
        matrix or its choosing rows), or `SparseRows`
    counts : intp (n_samples,), the tree's multiplicity of each row (0: out of bag)
    min_samples : increasing positive ints, the candidate node sizes (an
        int32 array is taken as it is: the forest calls this once per tree)
    out : float64 (n_candidates, n_samples, n_classes), added to
    n_trees : float64 (n_samples,), added to
    """
    cdef const int32_t[::1] sizes = _node_sizes(min_samples)
    cdef idx_t n_candidates = sizes.shape[0], n_classes = tree.max_n_classes
    cdef idx_t n_rows = X.shape[0], n_oob
    cdef const double[:, ::1] value
    cdef const idx_t[::1] rows, leaves
    cdef idx_t[:, ::1] node_for
    cdef idx_t i, c, k, row, node, leaf
    if (X.shape[1] != tree.n_features or out.shape[0] != n_candidates
            or out.shape[1] != n_rows or out.shape[2] != n_classes):
        raise ValueError("X and out do not match the tree and the candidates")
    if counts.shape[0] != n_rows or n_trees.shape[0] != n_rows:
        raise ValueError("counts and n_trees must have one entry per row of X")
    if n_candidates == 0:
        raise ValueError("min_samples must be increasing positive ints and not empty")
    for c in range(n_candidates):
        if sizes[c] < 1 or (c > 0 and sizes[c] <= sizes[c - 1]):
            raise ValueError("min_samples must be increasing positive ints and not empty")
    rows, leaves = oob_leaves(tree, X, counts)
    n_oob = rows.shape[0]
    if n_oob == 0:
        return
    node_for = _node_for_table(tree, sizes)
    if n_classes > SPARSE_CLASSES:
        _add_sparse(tree, node_for, rows, leaves, out, n_trees)
        return
    value = tree.proba
    with nogil:
        for i in range(n_oob):
            n_trees[rows[i]] += 1
        for c in range(n_candidates):  # one candidate's sums at a time, rows ascending
            for i in range(n_oob):
                row = rows[i]
                node = node_for[leaves[i], c]
                for k in range(n_classes):
                    out[c, row, k] += value[node, k]


def oob_leaves(Tree tree, X, const idx_t[::1] counts):
    """The out-of-bag rows of X (``counts == 0``), ascending, and the leaf of
    the tree each one reaches; one traversal per row, without the GIL.

    Parameters
    ----------
    tree : Tree
    X : float32 (n_samples, n_features), any memory order, or `SparseRows`
    counts : intp (n_samples,), the tree's multiplicity of each row

    Returns
    -------
    rows, leaves : intp arrays of shape (n_oob,)
    """
    cdef idx_t n_rows = X.shape[0], n_oob = 0, i
    cdef const Node* nodes = <const Node*> cnp.PyArray_DATA(tree._nodes)
    cdef const uint64_t* sets = _level_sets(tree)
    cdef idx_t[::1] rows, leaves
    cdef const X_t[:, :] dense
    cdef idx_t row_stride = 0, col_stride = 0
    cdef SparseWalk rows_of = None
    if isinstance(X, SparseRows):
        rows_of = SparseWalk(X)
    else:
        dense = X
        row_stride = dense.strides[0] // <idx_t> sizeof(X_t)
        col_stride = dense.strides[1] // <idx_t> sizeof(X_t)
    if X.shape[1] != tree.n_features:
        raise ValueError(f"X has {X.shape[1]} features, the tree {tree.n_features}")
    if counts.shape[0] != n_rows:
        raise ValueError("counts must have one entry per row of X")
    rows = np.empty(max(n_rows, 1), dtype=np.intp)
    leaves = np.empty(max(n_rows, 1), dtype=np.intp)
    with nogil:
        for i in range(n_rows):  # the out-of-bag rows, ascending, without a branch
            rows[n_oob] = i
            n_oob += counts[i] == 0
        if n_oob > 0:
            if rows_of is None:
                _walk_rows(&dense[0, 0], &rows[0], n_oob, row_stride, col_stride,
                           tree.n_features if col_stride == 1 else 0, nodes, sets, &leaves[0])
            else:
                _walk_sparse_rows(rows_of, &rows[0], n_oob, nodes, sets, &leaves[0])
    return np.asarray(rows)[:n_oob], np.asarray(leaves)[:n_oob]


def oob_used_nodes(Tree tree, X, const idx_t[::1] counts, min_samples):
    """For the tree's out-of-bag rows of X (``counts == 0``), the node each
    candidate node size m_c predicts from (as `accumulate_oob_proba`), as an
    index among the nodes in use, and the nonzero class proportions of those
    nodes, gathered while the tree is in cache.

    Returns
    -------
    rows : intp (n_oob,), ascending
    used : int32 (n_oob, n_candidates), index among the nodes in use (in node order)
    start : intp (n_used + 1,), node u's proportions are ``start[u]:start[u + 1]``
    klass : int32, share : float64, the classes (ascending) and their proportions
    """
    cdef const int32_t[::1] sizes = _node_sizes(min_samples)
    cdef idx_t n_candidates = sizes.shape[0], n_classes = tree.max_n_classes
    cdef idx_t n_nodes = tree.node_count, i, c, k, e, node, n_oob, n_used = 0
    cdef const idx_t[::1] rows, leaves
    cdef const idx_t[:, ::1] node_for
    rows, leaves = oob_leaves(tree, X, counts)
    n_oob = rows.shape[0]
    node_for = _node_for_table(tree, sizes)
    cdef int32_t[:, ::1] used = np.empty((n_oob, n_candidates), dtype=np.int32)
    cdef const idx_t[::1] index
    index, n_used = _nodes_in_use(node_for, leaves, n_nodes)
    with nogil:
        for i in range(n_oob):
            for c in range(n_candidates):
                used[i, c] = <int32_t> index[node_for[leaves[i], c]]
    start_array, klass_array, share_array = _nonzero_proportions(tree, index, n_used)
    return np.asarray(rows), np.asarray(used), start_array, klass_array, share_array


cdef tuple _nodes_in_use(const idx_t[:, ::1] node_for, const idx_t[::1] leaves,
                         idx_t n_nodes):
    """(index, n_used): the nodes some candidate predicts the leaves from,
    numbered in node order (index[node], -1 for the others), and their number."""
    cdef idx_t n_candidates = node_for.shape[1], i, c, node, n_used = 0
    index_array = np.full(max(n_nodes, 1), -1, dtype=np.intp)
    cdef idx_t[::1] index = index_array
    with nogil:
        for i in range(leaves.shape[0]):
            for c in range(n_candidates):
                index[node_for[leaves[i], c]] = 0
        for node in range(n_nodes):
            if index[node] == 0:
                index[node] = n_used
                n_used += 1
    return index_array, n_used


cdef tuple _nonzero_proportions(Tree tree, const idx_t[::1] index, idx_t n_used):
    """The nonzero class proportions of the tree's nodes in use (``index[node]``
    their number, -1 for the others): ``start`` (n_used + 1), and ``klass``
    (int32, ascending within a node) and ``share`` from ``start[u]`` on
    (adding 0.0 changes no sum, so sums of these are the dense sums).

    A grown tree of many classes has them node by node already
    (`_nonzero_shares`); a tree held dense is read twice, to count them
    and to gather them."""
    if tree._shares is not None:
        return _nonzero_shares(tree._shares, index, n_used)
    cdef const double[:, ::1] value = tree.proba
    cdef idx_t n_nodes = value.shape[0], n_classes = value.shape[1], node, k, e, u
    start_array = np.zeros(n_used + 1, dtype=np.intp)
    cdef idx_t[::1] start = start_array
    with nogil:
        for node in range(n_nodes):  # each used node's count of nonzero classes
            if index[node] >= 0:
                e = 0
                for k in range(n_classes):
                    e += value[node, k] != 0.0
                start[index[node] + 1] = e
        for u in range(n_used):
            start[u + 1] += start[u]
    klass_array = np.empty(start[n_used], dtype=np.int32)
    share_array = np.empty(start[n_used])
    cdef int32_t[::1] klass = klass_array
    cdef double[::1] share = share_array
    with nogil:
        for node in range(n_nodes):
            if index[node] >= 0:
                e = start[index[node]]
                for k in range(n_classes):
                    if value[node, k] != 0.0:
                        klass[e] = <int32_t> k
                        share[e] = value[node, k]
                        e += 1
    return start_array, klass_array, share_array


cdef tuple _nonzero_shares(shares, const idx_t[::1] index, idx_t n_used):
    """`_nonzero_proportions` from a grown tree's classes present and their
    proportions (node order, classes ascending), leaving out any 0."""
    cdef const idx_t[::1] node_start = shares[0]
    cdef const int32_t[::1] node_class = shares[1]
    cdef const double[::1] node_share = shares[2]
    cdef idx_t n_nodes = node_start.shape[0] - 1, node, u, f, e = 0
    start_array = np.empty(n_used + 1, dtype=np.intp)
    klass_array = np.empty(node_class.shape[0], dtype=np.int32)  # room for every node's
    share_array = np.empty(node_class.shape[0])
    cdef idx_t[::1] start = start_array
    cdef int32_t[::1] klass = klass_array
    cdef double[::1] share = share_array
    with nogil:
        for node in range(n_nodes):  # in node order, so u = 0, 1, 2, ...
            u = index[node]
            if u < 0:
                continue
            start[u] = e
            for f in range(node_start[node], node_start[node + 1]):
                klass[e] = node_class[f]
                share[e] = node_share[f]
                e += node_share[f] != 0.0
        start[n_used] = e
    return start_array, klass_array[:e].copy(), share_array[:e].copy()  # kept per tree


cdef idx_t[:, ::1] _node_for_table(Tree tree, const int32_t[::1] sizes):
    """node_for[leaf, c]: the deepest node on the leaf's path with at least
    sizes[c] cases (the root at least), each split node filling its children."""
    cdef idx_t n_candidates = sizes.shape[0], n_nodes = tree.node_count, c, node, side, child
    cdef const Node* nodes = <const Node*> cnp.PyArray_DATA(tree._nodes)
    cdef idx_t[:, ::1] node_for = np.empty((max(n_nodes, 1), n_candidates), dtype=np.intp)
    with nogil:
        for c in range(n_candidates):
            node_for[0, c] = 0
        for node in range(n_nodes):  # preorder: a node is filled before its children
            if nodes[node].feature < 0:
                continue
            for side in range(2):
                child = node + 1 if side == 0 else nodes[node].right
                for c in range(n_candidates):
                    node_for[child, c] = (child if nodes[child].n_samples >= sizes[c]
                                          else node_for[node, c])
    return node_for


cdef void _check_entries(const idx_t[::1] row_start, const idx_t[::1] entry_first,
                         const int32_t[:, ::1] entry_used, idx_t candidate,
                         const idx_t[::1] start, const int32_t[::1] klass, idx_t n_rows,
                         idx_t n_classes) except *:
    """Raise ValueError unless the entries of n_rows rows (`oob_proba_sums_by_row`)
    name nodes in use and classes below n_classes."""
    cdef idx_t j, e, u, n_used = start.shape[0] - 1
    if (row_start.shape[0] != n_rows + 1 or row_start[n_rows] != entry_used.shape[0]
            or entry_first.shape[0] != entry_used.shape[0]
            or not 0 <= candidate < entry_used.shape[1]):
        raise ValueError("row_start, the entries and the rows do not match")
    for j in range(entry_used.shape[0]):
        u = entry_first[j] + entry_used[j, candidate]
        if u < 0 or u >= n_used:
            raise ValueError("an entry names a node that is not in use")
    for e in range(klass.shape[0]):
        if klass[e] < 0 or klass[e] >= n_classes:
            raise ValueError("a class index is outside [0, n_classes)")


def oob_proba_sums_by_row(const idx_t[::1] row_start, const idx_t[::1] entry_first,
                          const int32_t[:, ::1] entry_used, idx_t candidate,
                          const idx_t[::1] start, const int32_t[::1] klass,
                          const double[::1] share, double[:, ::1] out,
                          bint accumulate=False):
    """One candidate node size's sums of out-of-bag class proportions,
    written row by row: `accumulate_oob_proba`'s sums for that candidate
    (``accumulate``: added to the sums already in ``out``).

    Row r's entries ``row_start[r]:row_start[r + 1]`` are its out-of-bag
    trees in tree order; entry j predicts from node ``entry_first[j] +
    entry_used[j, candidate]`` of the nodes in use of all trees (numbered one
    tree after the other, `oob_used_nodes`), whose proportions are
    ``start[u]:start[u + 1]`` of klass and share. Each row of ``out`` is
    summed while in cache, adding the trees' proportions in tree order: the
    same additions in the same order as one tree at a time, so the sums are
    equal to the bit.
    """
    cdef idx_t n_rows = out.shape[0], n_classes = out.shape[1], r, j, e, u
    cdef double* row_sums
    _check_entries(row_start, entry_first, entry_used, candidate, start, klass, n_rows,
                   n_classes)
    with nogil:
        for r in range(n_rows):
            row_sums = &out[r, 0]
            if not accumulate:
                memset(row_sums, 0, n_classes * sizeof(double))
            for j in range(row_start[r], row_start[r + 1]):
                u = entry_first[j] + entry_used[j, candidate]
                for e in range(start[u], start[u + 1]):
                    row_sums[klass[e]] += share[e]

def oob_proba_means_sparse(const idx_t[::1] row_start, const idx_t[::1] entry_first,
                           const int32_t[:, ::1] entry_used, idx_t candidate,
                           const idx_t[::1] start, const int32_t[::1] klass,
                           const double[::1] share, const double[::1] n_trees,
                           idx_t n_classes):
    """One candidate node size's mean out-of-bag class proportions, row by
    row, as a CSR matrix's arrays: only the classes some out-of-bag tree of
    the row gives a nonzero proportion (ascending), so a row without any
    out-of-bag tree is empty.

    The entries and nodes are `oob_proba_sums_by_row`'s. Each stored sum adds
    the same proportions in the same (tree) order as there, and is divided
    by the row's trees as `OutOfBag._mean` divides, so every stored value is
    its dense mean to the bit and every other one is 0.

    Returns
    -------
    indptr : intp (n_rows + 1,)
    indices : int32, data : float64
    """
    cdef idx_t n_rows = n_trees.shape[0]
    cdef idx_t n_words = (n_classes + 63) // 64, r, j, e, u, k, w, length, nnz = 0
    cdef uint64_t bits
    _check_entries(row_start, entry_first, entry_used, candidate, start, klass, n_rows,
                   n_classes)
    indptr_array = np.empty(n_rows + 1, dtype=np.intp)
    cdef idx_t[::1] indptr = indptr_array
    with nogil:  # room: a row stores at most n_classes and at most its proportions
        for r in range(n_rows):
            length = 0
            for j in range(row_start[r], row_start[r + 1]):
                u = entry_first[j] + entry_used[j, candidate]
                length += start[u + 1] - start[u]
            nnz += min(length, n_classes)
    indices_array = np.empty(nnz, dtype=np.int32)
    data_array = np.empty(nnz)
    sums_array = np.zeros(n_classes)
    seen_array = np.zeros(n_words, dtype=np.uint64)
    cdef int32_t[::1] indices = indices_array
    cdef double[::1] data = data_array
    cdef double* sums = <double*> cnp.PyArray_DATA(sums_array)
    cdef uint64_t* seen = <uint64_t*> cnp.PyArray_DATA(seen_array)
    cdef const int32_t* klass_at = <const int32_t*> cnp.PyArray_DATA(np.asarray(klass))
    cdef const double* share_at = <const double*> cnp.PyArray_DATA(np.asarray(share))
    nnz = 0
    with nogil:
        for r in range(n_rows):
            indptr[r] = nnz
            if r + 1 < n_rows:  # the next row's nodes lie anywhere among all trees'
                for j in range(row_start[r + 1], row_start[r + 2]):
                    u = entry_first[j] + entry_used[j, candidate]
                    prefetch(klass_at + start[u])
                    prefetch(share_at + start[u])
            for j in range(row_start[r], row_start[r + 1]):
                u = entry_first[j] + entry_used[j, candidate]
                for e in range(start[u], start[u + 1]):
                    k = klass[e]
                    sums[k] += share[e]
                    seen[k >> 6] |= (<uint64_t> 1) << (k & 63)
            for w in range(n_words):  # the classes seen, ascending, and clear them
                bits = seen[w]
                seen[w] = 0
                while bits:
                    k = 64 * w + lowest_bit(bits)
                    bits &= bits - 1
                    indices[nnz] = <int32_t> k
                    data[nnz] = sums[k] / n_trees[r]
                    sums[k] = 0.0
                    nnz += 1
        indptr[n_rows] = nnz
    return indptr_array, indices_array[:nnz], data_array[:nnz]


cdef _add_sparse(Tree tree, const idx_t[:, ::1] node_for,
                 const idx_t[::1] rows, const idx_t[::1] leaves, double[:, :, ::1] out,
                 double[::1] n_trees):
    """`accumulate_oob_proba`'s sums from the nonzero proportions of the nodes
    the rows reach, gathered once per tree (adding 0.0 changes no sum, so the
    result is the same to the bit)."""
    cdef idx_t n_nodes = tree.node_count, n_candidates = node_for.shape[1]
    cdef idx_t n_oob = rows.shape[0], i, c, e, u, node, row, leaf, n_used = 0
    cdef const idx_t[::1] index
    index, n_used = _nodes_in_use(node_for, leaves, n_nodes)
    start_array, klass_array, share_array = _nonzero_proportions(tree, index, n_used)
    cdef const idx_t[::1] start = start_array
    cdef const int32_t[::1] klass = klass_array
    cdef const double[::1] share = share_array
    with nogil:
        for i in range(n_oob):
            n_trees[rows[i]] += 1
        for c in range(n_candidates):  # one candidate's sums at a time, rows ascending
            for i in range(n_oob):
                row = rows[i]
                u = index[node_for[leaves[i], c]]
                for e in range(start[u], start[u + 1]):
                    out[c, row, klass[e]] += share[e]


# ---------------------------------------------------------------------------
# Traversal of sparse rows (CSR)
# ---------------------------------------------------------------------------

cdef class SparseWalk:
    """Typed views of `SparseRows`' arrays, for the nogil traversal."""
    cdef const X_t[::1] data
    cdef const idx_t[::1] indices
    cdef const idx_t[::1] indptr

    def __init__(self, rows):
        self.data = rows.data
        self.indices = rows.indices
        self.indptr = rows.indptr


cdef inline X_t _sparse_value(SparseWalk X, idx_t row, idx_t feature) noexcept nogil:
    """X[row, feature]: the stored value (a binary search among the row's
    ascending columns), or 0."""
    cdef idx_t lo = X.indptr[row], hi = X.indptr[row + 1], mid
    cdef idx_t end = hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if X.indices[mid] < feature:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and X.indices[lo] == feature:
        return X.data[lo]
    return 0.0


cdef inline idx_t _sparse_child(const Node* nodes, const uint64_t* sets, idx_t node,
                                SparseWalk X, idx_t row) noexcept nogil:
    """`_child_of` for a row of a sparse X (its one value the node reads)."""
    cdef X_t value = _sparse_value(X, row, nodes[node].feature)
    return _child_of(nodes, sets, node, &value, 0)


cdef void _walk_sparse_rows(SparseWalk X, const idx_t* rows, idx_t n, const Node* nodes,
                            const uint64_t* sets, idx_t* out) noexcept nogil:
    """For i < n, the leaf where the path of row rows[i] (i when rows is NULL) ends."""
    cdef idx_t i, row, node
    for i in range(n):
        row = rows[i] if rows != NULL else i
        node = 0
        while nodes[node].feature >= 0:
            node = _sparse_child(nodes, sets, node, X, row)
        out[i] = node


def _sparse_apply(Tree tree, rows):
    """`Tree.apply` of `SparseRows`."""
    cdef SparseWalk X = SparseWalk(rows)
    cdef idx_t n = rows.shape[0]
    cdef idx_t[::1] out = np.empty(max(n, 1), dtype=np.intp)
    cdef const Node* nodes = <const Node*> cnp.PyArray_DATA(tree._nodes)
    cdef const uint64_t* sets = _level_sets(tree)
    with nogil:
        _walk_sparse_rows(X, NULL, n, nodes, sets, &out[0])
    return np.asarray(out)[:n]


def _sparse_decision_path(Tree tree, rows):
    """`Tree.decision_path` of `SparseRows`."""
    cdef SparseWalk X = SparseWalk(rows)
    cdef const uint64_t* sets = _level_sets(tree)
    cdef idx_t n = rows.shape[0], i, node, position
    cdef const Node* nodes = <const Node*> cnp.PyArray_DATA(tree._nodes)
    indptr_array = np.zeros(n + 1, dtype=np.intp)
    if n > 0:  # a path's length is its leaf's depth + 1
        np.cumsum(tree.node_depths()[_sparse_apply(tree, rows)] + 1, out=indptr_array[1:])
    cdef idx_t[::1] indptr = indptr_array
    cdef idx_t[::1] indices = np.empty(max(indptr_array[-1], 1), dtype=np.intp)
    with nogil:
        for i in range(n):
            node = 0
            position = indptr[i]
            indices[position] = 0
            while nodes[node].feature >= 0:
                node = _sparse_child(nodes, sets, node, X, i)
                position += 1
                indices[position] = node
    n_paths = int(indptr_array[-1])
    return csr_matrix((np.ones(n_paths, dtype=np.intp), np.asarray(indices)[:n_paths],
                       indptr_array), shape=(n, tree.node_count))

