# The splitters on a sparse X: columns as stored entries (CSC), zeros implicit.
from libc.stdint cimport uint8_t

from ._binned cimport BinnedSplitter
from ._criterion cimport X_t, idx_t
from ._split cimport ExactSplitter


cdef struct NodeFeatures:
    # which features have a stored entry in the node whose features were last listed
    const idx_t* row_indptr     # (n_rows + 1,) X's rows (CSR): row i's columns at
    const idx_t* row_indices    #   row_indices[row_indptr[i]:row_indptr[i + 1]]
    idx_t* stamp                # (n_features,) number of the last node the feature is stored in
    idx_t node                  # number of the node listed last (stamps equal to it: present)
    idx_t start, end            # its range in samples


cdef class SparseExactSplitter(ExactSplitter):
    cdef const X_t[::1] data            # (nnz,) stored values, column after column
    cdef const idx_t[::1] indices       # (nnz,) their rows, ascending within a column
    cdef const idx_t[::1] indptr        # (n_features + 1,) column j at [indptr[j], indptr[j + 1])
    cdef X_t* row_value                 # (n_rows,) all 0 between gathers: a column's
                                        #   stored values scattered by row during one
    cdef idx_t* block_samples           # (n_active,) samples while sorting by blocks
    cdef X_t* block_values              # (n_active,) their values
    cdef idx_t* block_order             # (n_active,) a block's permutation into sorted order
    cdef const idx_t[::1] row_indptr    # X's rows (CSR structure), for node_features
    cdef const idx_t[::1] row_indices
    cdef NodeFeatures node_features

    cdef void _sort_block(self, idx_t lo, idx_t hi) noexcept nogil


cdef class SparseBinnedSplitter(BinnedSplitter):
    cdef const uint8_t[::1] entry_codes  # (nnz,) bin codes of the stored values, CSC order
    cdef const idx_t[::1] indices        # (nnz,) their rows, ascending within a column
    cdef const idx_t[::1] indptr         # (n_features + 1,)
    cdef const uint8_t[::1] zero_codes   # (n_features,) the code of 0.0 in each feature
    cdef idx_t* position                 # (n_rows,) index in samples of each row, -1 if inactive
    cdef idx_t* found_position           # (n_active,) node's stored entries: their index in
    cdef uint8_t* found_code             #   samples, and their codes (ascending index)
    cdef uint8_t* node_codes             # (n_active,) codes of the node's cases (partition)
    cdef idx_t* node_cases               # (n_classes,) cases of each class in the node
    cdef idx_t* stored_cases             # (n_classes,) of them with a stored entry
    cdef double* stored_weight           # (n_classes,) and their weight
    cdef const idx_t[::1] row_indptr     # X's rows (CSR structure), for node_features
    cdef const idx_t[::1] row_indices
    cdef NodeFeatures node_features

    cdef idx_t _find_entries(self, idx_t feature, idx_t start, idx_t end) noexcept nogil
