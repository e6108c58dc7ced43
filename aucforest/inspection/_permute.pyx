"""Out-of-bag rows of one tree sent down with one feature permuted (compiled kernel).

Traversal follows `aucforest._tree._node_of` exactly: ``x <= threshold`` (or
NaN where ``missing_go_to_left``) goes to the left child, node + 1 in
preorder, otherwise to ``children_right``; it stops at the leaf, or before a
child holding fewer than ``min_samples`` training cases.
"""
import numpy as np
from libc.stdint cimport uint64_t

from .._random cimport splitmix64

ctypedef Py_ssize_t idx_t


cdef inline uint64_t _below(uint64_t* state, uint64_t bound) noexcept nogil:
    """Uniform integer in [0, bound): reject the 2^64 mod bound lowest outputs."""
    cdef uint64_t floor = (0 - bound) % bound, r
    while True:
        r = splitmix64(state)
        if r >= floor:
            return r % bound


cdef void _shuffle(idx_t* permutation, idx_t n, uint64_t seed) noexcept nogil:
    """A uniform random permutation of 0..n-1 (Fisher-Yates) from ``seed``."""
    cdef uint64_t state = seed
    cdef idx_t i, j, held
    for i in range(n):
        permutation[i] = i
    for i in range(n - 1, 0, -1):
        j = <idx_t> _below(&state, <uint64_t> (i + 1))
        held = permutation[i]
        permutation[i] = permutation[j]
        permutation[j] = held


def random_permutation(idx_t n, uint64_t seed):
    """The permutation of range(n) that `add_permuted_oob` draws from ``seed``."""
    permutation = np.empty(n, dtype=np.intp)
    cdef idx_t[::1] view = permutation
    if n > 0:
        _shuffle(&view[0], n, seed)
    return permutation


cdef inline void _inherit(idx_t[::1] first_split, idx_t parent, idx_t child,
                          const idx_t[::1] node_feature, idx_t feature) noexcept nogil:
    if first_split[parent] >= 0:
        first_split[child] = first_split[parent]
    else:
        first_split[child] = child if node_feature[child] == feature else -1


def add_permuted_oob(const float[:, ::1] X, const idx_t[::1] rows, const idx_t[::1] leaves,
                     uint64_t seed, idx_t feature,
                     const idx_t[::1] children_right, const idx_t[::1] node_feature,
                     const double[::1] threshold, const unsigned char[::1] missing_left,
                     const idx_t[::1] n_node_samples, const double[:, ::1] value,
                     idx_t min_samples, double[:, ::1] out):
    """Add to ``out[rows[i]]`` the class proportions of the leaf that OOB row i
    reaches when its value of ``feature`` is ``X[rows[permutation[i]], feature]``,
    with ``permutation = random_permutation(rows.size, seed)``.

    Parameters
    ----------
    X : float32 (n_samples, n_features), C order
    rows : the tree's OOB rows; leaves : the leaf each reaches unpermuted
    seed : seed of the permutation of the OOB rows
    feature : the permuted feature
    children_right, node_feature, threshold, missing_left, n_node_samples, value :
        the tree's node arrays
    min_samples : predict from the deepest node on the path with at least this
        many training cases (1: the leaf)
    out : float64 (n_samples, n_classes), added to

    A row whose path (down to and including its node) has no split on
    ``feature`` keeps its node; the others are sent down again from the
    topmost node of their path that splits on ``feature`` (the nodes above it
    read other features only).
    """
    cdef idx_t n_nodes = node_feature.shape[0], n_classes = value.shape[1]
    cdef idx_t[::1] first_split = np.empty(n_nodes, dtype=np.intp)
    cdef idx_t[::1] permutation = np.empty(max(rows.shape[0], 1), dtype=np.intp)
    cdef idx_t i, k, node, child, leaf, row, split, next_node
    cdef float v
    with nogil:
        _shuffle(&permutation[0], rows.shape[0], seed)
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
                        next_node = node + 1
                    else:
                        next_node = children_right[node]
                    if n_node_samples[next_node] < min_samples:
                        break
                    node = next_node
                leaf = node
            for k in range(n_classes):
                out[row, k] += value[leaf, k]
