"""Out-of-bag rows of one tree sent down with one feature permuted (compiled kernel).

Traversal follows `aucforest._tree._leaf_of` exactly: ``x <= threshold`` (or
NaN where ``missing_go_to_left``) goes to the left child, node + 1 in
preorder; otherwise to ``children_right``.
"""
import numpy as np

ctypedef Py_ssize_t idx_t


cdef inline void _inherit(idx_t[::1] first_split, idx_t parent, idx_t child,
                          const idx_t[::1] node_feature, idx_t feature) noexcept nogil:
    if first_split[parent] >= 0:
        first_split[child] = first_split[parent]
    else:
        first_split[child] = child if node_feature[child] == feature else -1


def add_permuted_oob(const float[:, ::1] X, const idx_t[::1] rows, const idx_t[::1] leaves,
                     const idx_t[::1] permutation, idx_t feature,
                     const idx_t[::1] children_right, const idx_t[::1] node_feature,
                     const double[::1] threshold, const unsigned char[::1] missing_left,
                     const double[:, ::1] value, double[:, ::1] out):
    """Add to ``out[rows[i]]`` the class proportions of the leaf that OOB row i
    reaches when its value of ``feature`` is ``X[rows[permutation[i]], feature]``.

    Parameters
    ----------
    X : float32 (n_samples, n_features), C order
    rows : the tree's OOB rows; leaves : the leaf each reaches unpermuted
    permutation : a permutation of range(rows.size)
    feature : the permuted feature
    children_right, node_feature, threshold, missing_left, value : the tree's node arrays
    out : float64 (n_samples, n_classes), added to

    A row whose path has no split on ``feature`` keeps its leaf; the others
    are sent down again from the topmost node of their path that splits on
    ``feature`` (the nodes above it read other features only).
    """
    cdef idx_t n_nodes = node_feature.shape[0], n_classes = value.shape[1]
    cdef idx_t[::1] first_split = np.empty(n_nodes, dtype=np.intp)
    cdef idx_t i, k, node, child, leaf, row, split
    cdef float v
    with nogil:
        # topmost node splitting on `feature` on the path to each node, -1 if none
        # (preorder: a parent is seen before its children)
        first_split[0] = 0 if node_feature[0] == feature else -1
        for node in range(n_nodes):
            if node_feature[node] < 0:
                continue
            _inherit(first_split, node, node + 1, node_feature, feature)
            _inherit(first_split, node, children_right[node], node_feature, feature)
        for i in range(rows.shape[0]):
            row = rows[i]
            leaf = leaves[i]
            split = first_split[leaf]
            if split >= 0:
                node = split
                while node_feature[node] >= 0:
                    if node_feature[node] == feature:
                        v = X[rows[permutation[i]], feature]
                    else:
                        v = X[row, node_feature[node]]
                    if v <= threshold[node] or (v != v and missing_left[node]):
                        node = node + 1
                    else:
                        node = children_right[node]
                leaf = node
            for k in range(n_classes):
                out[row, k] += value[leaf, k]
