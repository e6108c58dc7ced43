# The binned splitter: per-node class-count histograms of pre-binned features.
from libc.stdint cimport uint8_t, uint64_t

from ._criterion cimport X_t, idx_t
from ._split cimport SplitRecord, Splitter

cdef enum:
    MISSING_CODE = 255        # bin code of a missing value (NaN); value bins are 0..n_bins-1 <= 254
    N_CODES = 256

cdef class BinnedSplitter(Splitter):
    cdef const uint8_t[::1, :] codes   # (n_samples, n_features) bin codes, Fortran order
    cdef const double[:, ::1] edges    # (n_features, >= max n_bins): x <= edges[f, b] <=> code <= b
    cdef const idx_t[::1] n_bins       # (n_features,) value bins of each feature
    cdef double* hist_weight           # (N_CODES * n_classes,) weighted class counts per bin
    cdef idx_t* hist_count             # (N_CODES,) distinct cases per bin
    cdef uint64_t* hist_classes        # (N_CODES,) bit k set when the bin holds class k (8 <= K <= 64)
    cdef idx_t* occupied_bins          # (N_CODES,) non-empty value bins of the feature, ascending
    cdef idx_t* partition_scratch      # (n_active,) right-going samples during a stable partition
    cdef idx_t nsplit                  # 0: every occupied bin's edge; else nsplit drawn edges
    cdef idx_t* drawn_positions        # (N_CODES,) draw of positions in occupied_bins
    cdef idx_t* drawn_bins             # (N_CODES,) bins whose edges were drawn, ascending, + the last
    cdef unsigned char* drawn_flags    # (N_CODES,) 1 at the drawn positions during a draw, else 0
    cdef uint8_t* bin_target           # (N_CODES,) bin whose histogram entry takes a code's cases:
                                       #   the code itself, or its bucket's bin during a draw
    cdef uint8_t* node_class           # (n_active,) class of samples[i] (K <= 256), and
    cdef double* node_weight           #   (n_active,) its weight, for samples[node_start:node_end]
    cdef idx_t node_start, node_end    #   as node_reset read them (empty range: not valid)
    cdef idx_t node_reset(self, idx_t start, idx_t end) noexcept nogil
    cdef void _init_binned(self, idx_t n_rows, idx_t n_features, const double[:, ::1] edges,
                           const idx_t[::1] n_bins, const idx_t[::1] y, const double[::1] w,
                           idx_t n_classes, int criterion, idx_t max_features,
                           idx_t min_samples_leaf, double min_weight_leaf, uint64_t seed,
                           idx_t nsplit, is_categorical, bint order_once,
                           bint rank_classes) except *
    cdef int _scan_histogram(self, idx_t feature, idx_t start, idx_t end, idx_t n_occupied,
                             idx_t* buckets, idx_t n_buckets, bint drawn,
                             SplitRecord* best) noexcept nogil
    cdef idx_t _list_occupied_bins(self, uint64_t* occupied) noexcept nogil
    cdef idx_t _draw_bins(self, idx_t n_occupied) noexcept nogil
