# The fitted tree's packed node record and the Tree class, for kernels that traverse trees
# (aucforest.inspection._permute) without copying the node arrays.
from libc.stdint cimport int32_t

from ._criterion cimport X_t, idx_t


cdef struct Node:
    # what traversal reads, packed into one 24-byte record (the left child is node + 1)
    double threshold           # x <= threshold goes left
    int32_t right              # right child, -1 at leaves
    int32_t feature            # split feature, -2 at leaves
    int32_t n_samples          # distinct training cases in the node (at most 2**31 - 1)
    unsigned char missing_left  # NaN goes left


cdef inline bint goes_left(const Node* node, X_t v) noexcept nogil:
    """The traversal rule of a split node: x <= threshold, or NaN where
    missing_left, goes to the left child (node + 1), the rest to ``right``."""
    return (v <= node.threshold) | ((v != v) & node.missing_left)  # no branch


cdef class Tree:
    cdef readonly idx_t node_count, n_features, max_n_classes, max_depth
    cdef readonly object proba   # (node_count, max_n_classes): what each node predicts
    cdef readonly object n_node_samples, weighted_n_node_samples, impurity, improvement
    cdef object _nodes           # NODE_DTYPE records, one per node
