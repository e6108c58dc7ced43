# cython: language_level=3
"""Exact path-dependent TreeSHAP over packed trees (compiled kernel).

Lundberg, Erion, Chen et al., "From local explanations to global understanding
with explainable AI for trees", Nature Machine Intelligence 2 (2020),
Algorithm 2. For one row x and one tree, one recursive pass from the root
keeps the *path* of the distinct features split on so far, each with

* ``zero`` (z): the fraction of the cover that flows down this path when the
  feature is unknown (product of the cover ratios child / parent at the
  splits on it),
* ``one`` (o): 1 when x goes this way at every split on the feature, else 0,

and one permutation ``weight`` per subset size: w[i] is the sum over the
subsets S of size i of the path's features of prod_{d in S} o_d
prod_{d not in S} z_d, times i! (L - i)! / (L + 1)!, L + 1 the path's length
with the leading dummy element (z = o = 1). EXTEND adds a feature, UNWIND
removes one (undoing its EXTEND). At a leaf with class proportions v, the
Shapley value of each path feature d gains sum(UNWIND(path, d).w) (o_d - z_d) v:
one pass serves all K classes. Cost O(leaves x depth^2) per row and tree.

Traversal follows `aucforest._tree`: ``x <= threshold``, or NaN where the node's
missing direction is left, goes to the left child (node + 1 in preorder), the
rest to the right child. The child x goes to is the "hot" one (its z is its
cover ratio, o unchanged); the other is "cold" (o = 0).

Trees arrive packed (see ``aucforest.inspection._shap``): per node, relative
to its tree's first node, ``right`` (the right child, -1 at leaves),
``feature`` (-1 at leaves), ``threshold``, ``missing_left``, ``ratio`` (the
node's cover / its parent's, 1 at the root) and ``value`` (K class
proportions); ``offsets[t]`` is the first node of tree t.
"""
import numpy as np

from libc.stdint cimport int32_t
from libc.stdlib cimport free, malloc
from cpython.exc cimport PyErr_CheckSignals

ctypedef Py_ssize_t idx_t


cdef struct PathElement:
    double zero       # z: cover fraction down this path when the feature is unknown
    double one        # o: 1 when x follows the path at every split on the feature, else 0
    double weight     # w of the subset size equal to this element's index
    int32_t feature   # -1 for the leading dummy element


cdef struct PackedTree:
    # one tree's node arrays (node 0 its root)
    const int32_t* right
    const int32_t* feature
    const double* threshold
    const unsigned char* missing_left
    const double* ratio
    const double* value        # (n_nodes, n_classes)


cdef struct RowState:
    # what the recursion reads and writes for one row
    const float* x             # the row
    double* phi                # (n_features, n_classes), added to
    idx_t n_classes
    double* scale              # leaf scratch: l / (j + 1)
    double* shrink             # leaf scratch: (l - 1 - j) / (j + 1)


cdef inline void _extend(PathElement* path, idx_t l, double zero, double one,
                         int32_t feature) noexcept nogil:
    """EXTEND: append ``feature`` with fractions (zero, one) to the path of
    length l, updating the weights of every subset size."""
    cdef idx_t i
    cdef double inv = 1.0 / (l + 1)
    path[l].feature = feature
    path[l].zero = zero
    path[l].one = one
    path[l].weight = 1.0 if l == 0 else 0.0
    for i in range(l - 1, -1, -1):
        path[i + 1].weight += one * path[i].weight * (i + 1) * inv
        path[i].weight = zero * path[i].weight * (l - i) * inv


cdef inline void _unwind(PathElement* path, idx_t l, idx_t k) noexcept nogil:
    """UNWIND: remove element k from the path of length l (undo its EXTEND);
    the path then has length l - 1."""
    cdef double one = path[k].one, zero = path[k].zero
    cdef double n = path[l - 1].weight, held
    cdef idx_t j
    if one != 0:
        for j in range(l - 2, -1, -1):
            held = path[j].weight
            path[j].weight = n * l / ((j + 1) * one)
            n = held - path[j].weight * zero * (l - 1 - j) / l
    else:
        for j in range(l - 2, -1, -1):
            path[j].weight = path[j].weight * l / (zero * (l - 1 - j))
    for j in range(k, l - 1):
        path[j].feature = path[j + 1].feature
        path[j].zero = path[j + 1].zero
        path[j].one = path[j + 1].one


cdef inline void _leaf(const PathElement* path, idx_t l, const double* value,
                       RowState* row) noexcept nogil:
    """Add each path feature's share of the leaf's value (all classes).

    sum(UNWIND(path, i).w) without unwinding: with o_i = 0 it is
    S0 / z_i, S0 = sum_j w_j l / (l - 1 - j), the same S0 for every such
    element; with o_i = 1 the UNWIND recurrence, summed as it goes."""
    cdef idx_t i, j, k, K = row.n_classes
    cdef double s0 = 0.0, total, n, zero, share
    cdef double* scale = row.scale
    cdef double* shrink = row.shrink
    cdef double* phi
    for j in range(l - 1):
        s0 += path[j].weight * l / (l - 1 - j)
        scale[j] = (<double> l) / (j + 1)
        shrink[j] = (<double> (l - 1 - j)) / (j + 1)
    for i in range(1, l):
        zero = path[i].zero
        if path[i].one != 0:  # o_i = 1: the recurrence of _unwind with one = 1
            n = path[l - 1].weight
            total = 0.0
            for j in range(l - 2, -1, -1):
                total += n * scale[j]
                n = path[j].weight - n * zero * shrink[j]
            share = total * (1.0 - zero)
        else:
            share = -s0  # s0 / z_i times (0 - z_i)
        phi = row.phi + path[i].feature * K
        for k in range(K):
            phi[k] += share * value[k]


cdef void _recurse(const PackedTree* tree, idx_t node, PathElement* path, idx_t l,
                   double zero, double one, int32_t feature, RowState* row) noexcept nogil:
    """RECURSE of Algorithm 2: ``path`` holds the parent's path (length l),
    which is extended here by (zero, one, feature); the children's paths
    are copied after it."""
    cdef idx_t k, hot, cold
    cdef int32_t split
    cdef double incoming_zero = 1.0, incoming_one = 1.0
    cdef float v
    cdef PathElement* child_path
    _extend(path, l, zero, one, feature)
    l += 1
    split = tree.feature[node]
    if split < 0:
        _leaf(path, l, tree.value + node * row.n_classes, row)
        return
    v = row.x[split]
    if (v <= tree.threshold[node]) | ((v != v) & tree.missing_left[node]):
        hot, cold = node + 1, tree.right[node]
    else:
        hot, cold = tree.right[node], node + 1
    # a feature split on again above: its fractions carry over, its old element goes
    for k in range(1, l):
        if path[k].feature == split:
            incoming_zero = path[k].zero
            incoming_one = path[k].one
            _unwind(path, l, k)
            l -= 1
            break
    child_path = path + l + 1
    _copy_path(path, child_path, l)
    _recurse(tree, hot, child_path, l, incoming_zero * tree.ratio[hot], incoming_one,
             split, row)
    _copy_path(path, child_path, l)
    _recurse(tree, cold, child_path, l, incoming_zero * tree.ratio[cold], 0.0, split, row)


cdef inline void _copy_path(const PathElement* source, PathElement* target,
                            idx_t l) noexcept nogil:
    cdef idx_t i
    for i in range(l):
        target[i] = source[i]


def add_shap_values(const float[:, ::1] X, const Py_ssize_t[::1] offsets,
                    const int32_t[::1] right, const int32_t[::1] feature,
                    const double[::1] threshold, const unsigned char[::1] missing_left,
                    const double[::1] ratio, const double[:, ::1] value, idx_t max_depth,
                    double[:, :, ::1] out, const unsigned char[::1] stop=None):
    """Add each tree's SHAP values of the rows of X to ``out``.

    Parameters
    ----------
    X : float32 (n_samples, n_features), C order
    offsets : intp (n_trees + 1,), the first node of each tree, then the node count
    right, feature, threshold, missing_left, ratio : per node (see the module docstring)
    value : float64 (n_nodes, n_classes), the class proportions of the leaves
    max_depth : int, the largest depth of a leaf (the root at depth 0)
    out : float64 (n_samples, n_features, n_classes), added to
    stop : uint8 array of shape (1,), optional
        Checked between trees: set it to 1 from another thread to make the
        call return early. In the main thread a pending signal (Ctrl-C) is
        raised between trees.

    One call without the GIL per tree, rows inside (the tree stays in cache),
    so blocks of rows can run in threads. The arrays are trusted to describe
    preorder trees whose feature indices are below X.shape[1] and whose
    ratios are positive (`aucforest.inspection._shap` builds them so).
    """
    cdef idx_t n_rows = X.shape[0], n_classes = value.shape[1], t, i
    cdef idx_t n_nodes = right.shape[0]
    cdef idx_t capacity = (max_depth + 2) * (max_depth + 3) // 2
    cdef PackedTree tree
    cdef RowState row
    cdef PathElement* path
    cdef idx_t first
    if (out.shape[0] != n_rows or out.shape[1] != X.shape[1] or out.shape[2] != n_classes
            or feature.shape[0] != n_nodes or threshold.shape[0] != n_nodes
            or missing_left.shape[0] != n_nodes or ratio.shape[0] != n_nodes
            or value.shape[0] != n_nodes or offsets.shape[0] < 1
            or offsets[offsets.shape[0] - 1] != n_nodes or max_depth < 0):
        raise ValueError("the packed trees, X and out do not match")
    if n_rows == 0 or n_nodes == 0:
        return
    path = <PathElement*> malloc(capacity * sizeof(PathElement))
    row.scale = <double*> malloc((max_depth + 2) * sizeof(double))
    row.shrink = <double*> malloc((max_depth + 2) * sizeof(double))
    row.n_classes = n_classes
    try:
        if path == NULL or row.scale == NULL or row.shrink == NULL:
            raise MemoryError("cannot allocate the TreeSHAP path")
        for t in range(offsets.shape[0] - 1):
            if stop is not None and stop[0]:
                return
            first = offsets[t]
            if offsets[t + 1] <= first:
                continue
            tree.right = &right[first]
            tree.feature = &feature[first]
            tree.threshold = &threshold[first]
            tree.missing_left = &missing_left[first]
            tree.ratio = &ratio[first]
            tree.value = &value[first, 0]
            with nogil:
                for i in range(n_rows):
                    row.x = &X[i, 0]
                    row.phi = &out[i, 0, 0]
                    _recurse(&tree, 0, path, 0, 1.0, 1.0, -1, &row)
            PyErr_CheckSignals()
    finally:
        free(path)
        free(row.scale)
        free(row.shrink)


def root_expectations(const Py_ssize_t[::1] offsets, const int32_t[::1] right,
                      const int32_t[::1] feature, const double[::1] ratio,
                      const double[:, ::1] value):
    """Each tree's expected value when no feature is known, per class.

    E(leaf) = its value; E(node) = ratio(left) E(left) + ratio(right) E(right),
    the recursion the cold paths of TreeSHAP follow, so that a row's SHAP
    values sum to its prediction minus this exactly (Algorithm 1 of
    Lundberg et al. 2020 with no feature known). Equal to the sum over leaves
    of cover share x value.

    Returns
    -------
    float64 array (n_trees, n_classes)
    """
    cdef idx_t n_trees = offsets.shape[0] - 1, n_classes = value.shape[1]
    cdef idx_t t, node, k, first, last
    cdef double[:, ::1] expected = np.array(value, dtype=np.float64, copy=True)
    cdef double[:, ::1] result = np.zeros((max(n_trees, 0), n_classes))
    with nogil:
        for t in range(n_trees):
            first, last = offsets[t], offsets[t + 1]
            for node in range(last - 1, first - 1, -1):  # children before parents
                if feature[node] >= 0:
                    for k in range(n_classes):
                        expected[node, k] = (
                            ratio[node + 1] * expected[node + 1, k]
                            + ratio[first + right[node]] * expected[first + right[node], k])
            if last > first:
                for k in range(n_classes):
                    result[t, k] = expected[first, k]
    return np.asarray(result)


def tree_depth(const int32_t[::1] right, const int32_t[::1] feature):
    """Largest depth of a node of one preorder tree (the root at depth 0)."""
    cdef idx_t n = right.shape[0], node, deepest = 0
    cdef Py_ssize_t[::1] depth = np.zeros(max(n, 1), dtype=np.intp)
    with nogil:
        for node in range(n):  # parents before children
            if feature[node] >= 0:
                depth[node + 1] = depth[node] + 1
                depth[right[node]] = depth[node] + 1
            if depth[node] > deepest:
                deepest = depth[node]
    return deepest
