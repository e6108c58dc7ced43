"""Out-of-bag rows of one tree sent down with one feature permuted (compiled kernel).

Traversal follows `aucforest._tree._apply_rows` exactly: ``x <= threshold`` (or
NaN where ``missing_go_to_left``; at a categorical split, a level in the node's
set of ``left_levels``) goes to the left child, node + 1 in preorder,
otherwise to ``children_right``, down to the leaf (`aucforest._tree.goes_left`).
"""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport int32_t, uint32_t, uint64_t

from .._random cimport splitmix64
from .._tree cimport Node, Tree, goes_left

cnp.import_array()

ctypedef Py_ssize_t idx_t


cdef inline uint64_t _below(uint64_t* state, uint64_t bound) noexcept nogil:
    """Uniform integer in [0, bound).

    Below 2**32, Lemire's multiply-and-shift on the top 32 random bits
    (rejecting the (2**32 - bound) mod bound lowest products: a division only
    in that rare case); otherwise modulo, rejecting the 2**64 mod bound lowest
    outputs."""
    cdef uint64_t product, floor, r
    cdef uint32_t low, small_floor
    if bound <= <uint64_t> 0xFFFFFFFFU:
        product = (splitmix64(state) >> 32) * bound
        low = <uint32_t> product
        if low < bound:
            small_floor = (<uint32_t> (0 - <uint32_t> bound)) % <uint32_t> bound
            while low < small_floor:
                product = (splitmix64(state) >> 32) * bound
                low = <uint32_t> product
        return product >> 32
    floor = (0 - bound) % bound
    while True:
        r = splitmix64(state)
        if r >= floor:
            return r % bound


ctypedef fused shuffled_t:
    idx_t
    float


cdef void _shuffle(shuffled_t* items, idx_t n, uint64_t seed) noexcept nogil:
    """Shuffle ``items[:n]`` in place (Fisher-Yates) with the swaps drawn from
    ``seed``: shuffling 0..n-1 gives the permutation, and shuffling any array
    the same as indexing it by that permutation."""
    cdef uint64_t state = seed
    cdef idx_t i, j
    cdef shuffled_t held
    for i in range(n - 1, 0, -1):
        j = <idx_t> _below(&state, <uint64_t> (i + 1))
        held = items[i]
        items[i] = items[j]
        items[j] = held


def random_permutation(idx_t n, uint64_t seed):
    """The permutation of range(n) that `add_permuted_oob` draws from ``seed``."""
    permutation = np.empty(n, dtype=np.intp)
    cdef idx_t[::1] view = permutation
    cdef idx_t i
    for i in range(n):
        view[i] = i
    if n > 0:
        _shuffle(&view[0], n, seed)
    return permutation


def add_permuted_oob(const float[:, ::1] X, const idx_t[::1] rows, const idx_t[::1] leaves,
                     uint64_t seed, idx_t feature, Tree tree, double[:, ::1] out):
    """Add to ``out[rows[i]]`` the class proportions of the node that OOB row i
    reaches in ``tree`` when its value of ``feature`` is
    ``X[rows[permutation[i]], feature]``, with ``permutation =
    random_permutation(rows.size, seed)``.

    Parameters
    ----------
    X : float32 (n_samples, n_features), C order
    rows : the tree's OOB rows; leaves : the leaf each reaches unpermuted
        (``tree.apply(X[rows])``)
    seed : seed of the permutation of the OOB rows
    feature : the permuted feature
    tree : `aucforest._tree.Tree`, read through its packed node records
    out : float64 (n_samples, n_classes), added to

    Only the splits on ``feature`` along a row's path can send it elsewhere:
    they are visited bottom-up through ``nearest`` (the nearest ancestor
    splitting on ``feature``). A row whose permuted value goes the way of its
    path at all of them keeps its node; the others are sent down again from
    the topmost split where it goes the other way (the nodes above it send
    the row the same way as before).
    """
    cdef idx_t n_nodes = tree.node_count, n_classes = tree.max_n_classes
    cdef const double[:, ::1] value = tree.proba
    cdef const Node* nodes = <const Node*> cnp.PyArray_DATA(tree._nodes)
    cdef const uint64_t* sets = <const uint64_t*> cnp.PyArray_DATA(tree._left_levels)
    cdef const Node* current
    cdef idx_t[::1] nearest = np.empty(max(n_nodes, 1), dtype=np.intp)
    cdef float[::1] permuted_values = np.empty(max(rows.shape[0], 1), dtype=np.float32)
    cdef idx_t i, k, node, leaf, row, split, diverges, via
    cdef float v, permuted
    if X.shape[1] != tree.n_features or out.shape[1] != n_classes \
            or rows.shape[0] != leaves.shape[0] or not 0 <= feature < X.shape[1]:
        raise ValueError("X, out, rows and leaves do not match the tree")
    with nogil:
        # the OOB rows' values of `feature`, gathered in row order and shuffled:
        # permuted_values[i] = X[rows[permutation[i]], feature]
        for i in range(rows.shape[0]):
            permuted_values[i] = X[rows[i], feature]
        _shuffle(&permuted_values[0], rows.shape[0], seed)
        # nearest strict ancestor of each node that splits on `feature`, -1 if none
        # (preorder: a parent is seen before its children)
        nearest[0] = -1
        for node in range(n_nodes):
            if nodes[node].feature < 0:
                continue
            via = node if nodes[node].feature == feature else nearest[node]
            nearest[node + 1] = via
            nearest[nodes[node].right] = via
        for i in range(rows.shape[0]):
            row = rows[i]
            leaf = leaves[i]
            split = nearest[leaf]
            diverges = -1
            permuted = permuted_values[i]
            while split >= 0:
                # `leaf` lies in the left subtree of `split` iff leaf < right child
                if goes_left(nodes + split, permuted, sets) != (leaf < nodes[split].right):
                    diverges = split
                split = nearest[split]
            if diverges >= 0:
                node = diverges
                current = nodes + node
                while current.feature >= 0:
                    v = permuted if current.feature == feature else X[row, current.feature]
                    node = node + 1 if goes_left(current, v, sets) else current.right
                    current = nodes + node
                leaf = node
            for k in range(n_classes):
                out[row, k] += value[leaf, k]
