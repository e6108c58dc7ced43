# The fitted tree's packed node record and the Tree class, for kernels that traverse trees
# (aucforest.inspection._permute) without copying the node arrays.
from libc.stdint cimport int32_t, uint64_t

from ._criterion cimport X_t, idx_t


cdef struct Node:
    # what traversal reads, packed into one 24-byte record (the left child is node + 1)
    double threshold           # x <= threshold goes left; a categorical split: its row of
                               #   the tree's left_levels (the public threshold is NaN there)
    int32_t right              # right child, -1 at leaves
    int32_t feature            # split feature, -2 at leaves
    int32_t n_samples          # distinct training cases in the node (at most 2**31 - 1)
    unsigned char missing_left  # NaN goes left
    unsigned char categorical  # 1: a categorical split (levels in a 256-bit set go left)


cdef inline bint level_in_set(const uint64_t* level_set, X_t v, bint missing_left) noexcept nogil:
    """Whether level code v goes left at a categorical split whose left levels
    are the 256-bit ``level_set``: its bit, or the missing direction for NaN and
    codes outside 0..255 (levels absent from the node at training are in the
    set exactly when missing values go left)."""
    cdef unsigned int level
    if not (v >= 0 and v < 256):
        return missing_left
    level = <unsigned int> v
    return (level_set[level >> 6] >> (level & 63)) & 1


cdef inline bint goes_left(const Node* node, X_t v, const uint64_t* left_levels) noexcept nogil:
    """The traversal rule of a split node: x <= threshold, or NaN where
    missing_left, goes to the left child (node + 1), the rest to ``right``; at
    a categorical split, a level in its set (row ``threshold`` of the tree's
    ``left_levels``, 4 words per row) goes left (`level_in_set`)."""
    if node.categorical:
        return level_in_set(left_levels + 4 * <idx_t> node.threshold, v, node.missing_left)
    return (v <= node.threshold) | ((v != v) & node.missing_left)  # no branch


cdef class Tree:
    cdef readonly idx_t node_count, n_features, max_n_classes, max_depth
    cdef object _proba           # (node_count, max_n_classes): what each node predicts
                                 # (None until first read when _shares holds it)
    cdef object _shares          # grown above 8 classes: (start, class, proportion)
                                 # of each node's classes present, else None
    cdef readonly object improvement
    # node statistics that other arrays give are not held (None) until first read:
    cdef object _n_node_samples  # intp; given by the node records' n_samples (_samples_derived)
    cdef object _weighted        # float64; equal to n_node_samples (_weight_derived)
    cdef object _impurity        # float64; theta of each node's split under the AUC
                                 #   criteria (_theta_kind 1, or 2 with the end-cut factor)
    cdef bint _samples_derived, _weight_derived
    cdef int _theta_kind         # 0: the impurity is held
    cdef object _nodes           # NODE_DTYPE records, one per node
    cdef object _left_levels     # uint64 (categorical splits, 4): their level sets, node order
