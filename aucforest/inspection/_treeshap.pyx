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

The same values, with less work than the paper's pseudocode:

* o is 0 or 1, so only the first m = 1 + (features with o = 1) weights are
  nonzero; EXTEND, UNWIND and the leaf sums run over those m only.
* For a feature with o = 0, sum(UNWIND(path, d).w) = S0 / z_d with one S0 per
  leaf, so its share is -S0 v whatever z_d. A feature's o, once 0, stays 0
  in the whole subtree below, so that share is summed over the subtree and
  subtracted once, where the feature turns cold, instead of at every leaf.
* The coefficients (ratios of small integers) come from tables made once
  per call: no division in the loops.

Traversal follows `aucforest._tree` (`goes_left`): ``x <= threshold``, or NaN
where the node's missing direction is left, goes to the left child (node + 1
in preorder), the rest to the right child; at a categorical split, a level in
the node's set goes left (the path-dependent cover is unchanged: the cold
child is the one the row's level does not go to). The child x goes to is the "hot" one (its z is its
cover ratio, o unchanged); the other is "cold" (o = 0).

Trees arrive packed (see ``aucforest.inspection._shap``): per node, relative
to its tree's first node, ``right`` (the right child, -1 at leaves),
``feature`` (-1 at leaves), ``threshold``, ``missing_left``, ``ratio`` (the
node's cover / its parent's, 1 at the root) and ``value`` (K class
proportions); ``offsets[t]`` is the first node of tree t. A categorical split
has ``categorical`` 1 and its ``threshold`` is its row of ``left_levels``
(rows of all trees end to end, 4 words each).
"""
import numpy as np

from libc.stdint cimport int32_t, uint64_t
from cpython.exc cimport PyErr_CheckSignals

from .._tree cimport level_in_set

ctypedef Py_ssize_t idx_t


cdef struct PathElement:
    double zero       # z: cover fraction down this path when the feature is unknown
    double one        # o: 1 when x follows the path at every split on the feature, else 0
    double weight     # w of the subset size equal to this element's index
    int32_t feature   # -1 for the leading dummy element


PATH_DTYPE = np.dtype([("zero", np.float64), ("one", np.float64), ("weight", np.float64),
                       ("feature", np.int32)], align=True)
assert PATH_DTYPE.itemsize == sizeof(PathElement), "numpy and C disagree on the path layout"

cdef struct PackedTree:
    # one tree's node arrays (node 0 its root)
    const int32_t* right
    const int32_t* feature
    const double* threshold
    const unsigned char* missing_left
    const unsigned char* categorical
    const uint64_t* left_levels    # all trees' rows (a categorical threshold is a row)
    const double* ratio
    const double* value        # (n_nodes, n_classes)


cdef struct RowState:
    # what the recursion reads and writes for one row, and its scratch space
    const float* x             # the row
    double* phi                # (n_features, n_classes), added to
    idx_t n_classes
    idx_t stride               # row length of the tables below
    # tables, row l: path length (l = 1, 2, ...), column i or j: element or subset size
    const double* grow_down    # EXTEND to l + 1 elements: (l - i) / (l + 1)
    const double* grow_up      # EXTEND to l + 1 elements: i / (l + 1)
    const double* scale        # UNWIND of l elements: l / (j + 1)
    const double* shrink       # UNWIND of l elements: (l - 1 - j) / (j + 1)
    const double* cold         # UNWIND of l elements with o = 0: l / (l - 1 - j)
    double* hot_zero           # leaf scratch: z of the elements with o = 1
    double* hot_total          # leaf scratch: sum(UNWIND(path, i).w) of each
    int32_t* hot_feature       # leaf scratch: their features


cdef inline idx_t _extend(PathElement* path, idx_t l, idx_t m, double zero, double one,
                          int32_t feature, const RowState* row) noexcept nogil:
    """EXTEND: append ``feature`` with fractions (zero, one) to the path of
    length l whose first m weights may be nonzero, updating the weights of
    every subset size, w'[i] = z w[i] (l - i) / (l + 1) + o w[i - 1] i / (l + 1);
    returns the new m.

    A weight sums over subsets of features with o = 1 (o is 0 or 1), so
    only the first m = 1 + (features with o = 1) weights are nonzero: a
    feature with o = 1 adds one, the others scale them."""
    cdef idx_t i
    cdef const double* down = row.grow_down + l * row.stride
    cdef const double* up = row.grow_up + l * row.stride
    cdef double below = 0.0, held
    path[l].feature = feature
    path[l].zero = zero
    path[l].one = one
    path[l].weight = 0.0
    if l == 0:
        path[0].weight = 1.0
        return 1
    if one == 0:
        for i in range(m):
            path[i].weight *= zero * down[i]
        return m
    for i in range(m):  # the old weights carried in a register: no chain through memory
        held = path[i].weight
        path[i].weight = zero * held * down[i] + below * up[i]
        below = held
    path[m].weight = below * up[m]
    return m + 1


cdef inline idx_t _unwind(PathElement* path, idx_t l, idx_t m, idx_t k,
                          const RowState* row) noexcept nogil:
    """UNWIND: remove element k from the path of length l whose first m
    weights may be nonzero (undo its EXTEND); the path then has length
    l - 1. Returns the new m."""
    cdef double one = path[k].one, zero = path[k].zero
    cdef double n, held, inverse
    cdef const double* scale = row.scale + l * row.stride
    cdef const double* shrink = row.shrink + l * row.stride
    cdef const double* cold = row.cold + l * row.stride
    cdef idx_t j
    if one != 0:  # o = 1: the weights above m - 1 are 0
        n = path[m - 1].weight
        for j in range(m - 2, -1, -1):
            held = path[j].weight
            path[j].weight = n * scale[j]
            n = held - n * zero * shrink[j]
        path[m - 1].weight = 0.0
        m -= 1
    else:
        inverse = 1.0 / zero
        for j in range(m):  # m <= l - 1: this element has o = 0
            path[j].weight = path[j].weight * cold[j] * inverse
    for j in range(k, l - 1):
        path[j].feature = path[j + 1].feature
        path[j].zero = path[j + 1].zero
        path[j].one = path[j + 1].one
    return m


cdef inline void _unwound_sums4(const PathElement* path, idx_t m, const double* scale,
                                const double* shrink, const double* zero,
                                double* total) noexcept nogil:
    """sum(UNWIND(path, i).w) for four elements with o = 1 and zero fractions
    zero[0:4], the first m weights of the path being the nonzero ones: the
    recurrence of `_unwind` summed as it goes, four independent chains side
    by side."""
    cdef double z0 = zero[0], z1 = zero[1], z2 = zero[2], z3 = zero[3]
    cdef double n0, n1, n2, n3, t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0, w, a, c
    cdef idx_t j
    n0 = n1 = n2 = n3 = path[m - 1].weight
    for j in range(m - 2, -1, -1):
        w, a, c = path[j].weight, scale[j], shrink[j]
        t0 += n0 * a
        t1 += n1 * a
        t2 += n2 * a
        t3 += n3 * a
        n0 = w - n0 * (z0 * c)
        n1 = w - n1 * (z1 * c)
        n2 = w - n2 * (z2 * c)
        n3 = w - n3 * (z3 * c)
    total[0], total[1], total[2], total[3] = t0, t1, t2, t3


cdef inline void _leaf(const PathElement* path, idx_t l, idx_t m, const double* value,
                       RowState* row, double* cold_sum) noexcept nogil:
    """Add the leaf's value times each hot path feature's share to phi, and
    set ``cold_sum`` to S0 x the leaf's value (all classes).

    The share of element i is sum(UNWIND(path, i).w) (o_i - z_i). With o_i = 0
    it is -S0, S0 = sum_j w_j l / (l - 1 - j), the same for every cold element:
    the caller subtracts the sum of S0 x value over a cold subtree once per
    feature (see `_recurse`). With o_i = 1 (the m - 1 hot elements) it is
    the UNWIND recurrence, summed as it goes, for all such elements side by
    side (independent chains); O(m^2) per leaf."""
    cdef idx_t i, j, e, k, K = row.n_classes, n_hot = 0
    cdef double s0 = 0.0, share
    cdef const double* scale = row.scale + l * row.stride
    cdef const double* shrink = row.shrink + l * row.stride
    cdef const double* cold = row.cold + l * row.stride
    cdef double* hot_zero = row.hot_zero
    cdef double* hot_total = row.hot_total
    cdef double* phi
    for j in range(min(m, l - 1)):
        s0 += path[j].weight * cold[j]
    for k in range(K):
        cold_sum[k] = s0 * value[k]
    if m == 1:
        return
    for i in range(1, l):
        if path[i].one != 0:
            hot_zero[n_hot] = path[i].zero
            row.hot_feature[n_hot] = path[i].feature
            n_hot += 1
    for e in range(0, n_hot, 4):  # four chains at a time (the scratch is padded)
        _unwound_sums4(path, m, scale, shrink, hot_zero + e, hot_total + e)
    for e in range(n_hot):
        share = hot_total[e] * (1.0 - hot_zero[e])
        phi = row.phi + row.hot_feature[e] * K
        for k in range(K):
            phi[k] += share * value[k]


cdef void _recurse(const PackedTree* tree, idx_t node, PathElement* path, idx_t l, idx_t m,
                   double zero, double one, int32_t feature, RowState* row,
                   double* cold_sum) noexcept nogil:
    """RECURSE of Algorithm 2: ``path`` holds the parent's path (length l,
    its first m weights the nonzero ones), which is extended here by (zero,
    one, feature); the children's paths go after it. Sets ``cold_sum``
    (n_classes) to the sum over the leaves below of S0 x value (see `_leaf`).

    A feature whose o turns 0 at this split (the cold child) stays cold in
    every leaf below (o is a product): its share there, -S0 x value per
    leaf, is subtracted here once, from the cold child's ``cold_sum``."""
    cdef idx_t k, hot, cold, K = row.n_classes
    cdef int32_t split
    cdef double incoming_zero = 1.0, incoming_one = 1.0
    cdef float v
    cdef PathElement* child_path
    cdef double* child_sum = cold_sum + K
    cdef double* phi
    m = _extend(path, l, m, zero, one, feature, row)
    l += 1
    split = tree.feature[node]
    if split < 0:
        _leaf(path, l, m, tree.value + node * K, row, cold_sum)
        return
    v = row.x[split]
    if (level_in_set(tree.left_levels + 4 * <idx_t> tree.threshold[node], v,
                     tree.missing_left[node]) if tree.categorical[node]
            else (v <= tree.threshold[node]) | ((v != v) & tree.missing_left[node])):
        hot, cold = node + 1, tree.right[node]
    else:
        hot, cold = tree.right[node], node + 1
    # a feature split on again above: its fractions carry over, its old element goes
    for k in range(1, l):
        if path[k].feature == split:
            incoming_zero = path[k].zero
            incoming_one = path[k].one
            m = _unwind(path, l, m, k, row)
            l -= 1
            break
    # the hot child works on a copy after this path; the cold child, last to
    # need it, on this path itself
    child_path = path + l + 1
    for k in range(l):
        child_path[k] = path[k]
    _recurse(tree, hot, child_path, l, m, incoming_zero * tree.ratio[hot], incoming_one,
             split, row, child_sum)
    for k in range(K):
        cold_sum[k] = child_sum[k]
    _recurse(tree, cold, path, l, m, incoming_zero * tree.ratio[cold], 0.0, split, row,
             child_sum)
    phi = row.phi + split * K
    for k in range(K):
        cold_sum[k] += child_sum[k]
        if incoming_one != 0:  # the split's feature turns cold here
            phi[k] -= child_sum[k]


def _tables(idx_t size):
    """The EXTEND and UNWIND coefficient tables of `RowState` for path lengths
    below ``size``, as (size, size) float64 arrays (0 where undefined)."""
    l = np.arange(size, dtype=np.float64)[:, None]
    i = np.arange(size, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        tables = {"grow_down": (l - i) / (l + 1), "grow_up": i / (l + 1),
                  "scale": l / (i + 1), "shrink": (l - 1 - i) / (i + 1),
                  "cold": l / (l - 1 - i)}
    return {name: np.ascontiguousarray(np.where(np.isfinite(t), t, 0.0))
            for name, t in tables.items()}


def add_shap_values(const float[:, ::1] X, const Py_ssize_t[::1] offsets,
                    const int32_t[::1] right, const int32_t[::1] feature,
                    const double[::1] threshold, const unsigned char[::1] missing_left,
                    const double[::1] ratio, const double[:, ::1] value, idx_t max_depth,
                    double[:, :, ::1] out, const unsigned char[::1] stop=None,
                    const unsigned char[::1] categorical=None,
                    const uint64_t[:, ::1] left_levels=None):
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
    categorical : uint8 (n_nodes,), optional
        1 at categorical splits, whose threshold is a row of left_levels.
    left_levels : uint64 (rows, 4), optional
        The level sets of the categorical splits of all trees.

    One call without the GIL per tree, rows inside (the tree stays in cache),
    so blocks of rows can run in threads. The arrays are trusted to describe
    preorder trees whose feature indices are below X.shape[1] and whose
    ratios are positive (`aucforest.inspection._shap` builds them so).
    """
    cdef idx_t n_rows = X.shape[0], n_classes = value.shape[1], t, i, first
    cdef idx_t n_nodes = right.shape[0], size = max_depth + 3
    cdef PackedTree tree
    cdef RowState row
    if categorical is None:
        categorical = np.zeros(n_nodes, dtype=np.uint8)
    if left_levels is None or left_levels.shape[0] == 0:
        left_levels = np.zeros((1, 4), dtype=np.uint64)
    if categorical.shape[0] != n_nodes or left_levels.shape[1] != 4:
        raise ValueError("the packed trees' categorical splits do not match")
    if (out.shape[0] != n_rows or out.shape[1] != X.shape[1] or out.shape[2] != n_classes
            or feature.shape[0] != n_nodes or threshold.shape[0] != n_nodes
            or missing_left.shape[0] != n_nodes or ratio.shape[0] != n_nodes
            or value.shape[0] != n_nodes or offsets.shape[0] < 1
            or offsets[offsets.shape[0] - 1] != n_nodes or max_depth < 0):
        raise ValueError("the packed trees, X and out do not match")
    if n_rows == 0 or n_nodes == 0:
        return
    # a call at depth d has a path of at most d + 1 elements (with the dummy),
    # starting at most d (d + 3) / 2 elements in: each hot child's path starts
    # after its parent's, a cold child's where its parent's does
    cdef PathElement[::1] path = np.empty(size * size // 2 + size, dtype=PATH_DTYPE)
    tables = _tables(size)
    cdef const double[:, ::1] grow_down = tables["grow_down"], grow_up = tables["grow_up"]
    cdef const double[:, ::1] scale = tables["scale"], shrink = tables["shrink"]
    cdef const double[:, ::1] cold = tables["cold"]
    cdef double[:, ::1] scratch = np.zeros((2, size + 4))
    cdef int32_t[::1] hot_feature = np.empty(size, dtype=np.int32)
    cdef double[:, ::1] cold_sums = np.empty((size, n_classes))  # one per depth
    row.n_classes, row.stride = n_classes, size
    row.grow_down, row.grow_up = &grow_down[0, 0], &grow_up[0, 0]
    row.scale, row.shrink, row.cold = &scale[0, 0], &shrink[0, 0], &cold[0, 0]
    row.hot_zero, row.hot_total = &scratch[0, 0], &scratch[1, 0]
    row.hot_feature = &hot_feature[0]
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
        tree.categorical = &categorical[first]
        tree.left_levels = &left_levels[0, 0]
        tree.ratio = &ratio[first]
        tree.value = &value[first, 0]
        with nogil:
            for i in range(n_rows):
                row.x = &X[i, 0]
                row.phi = &out[i, 0, 0]
                _recurse(&tree, 0, &path[0], 0, 0, 1.0, 1.0, -1, &row, &cold_sums[0, 0])
        PyErr_CheckSignals()


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
