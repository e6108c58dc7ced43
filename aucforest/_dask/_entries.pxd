# The entry lists of the Dask fit's passes (`aucforest._dask._entries`): which (tree,
# row) entries a pass reads (`LiveEntries`), the rows of nodes finished in memory
# (`WaitingRows`), and where a pass lists the entries it leaves (`EntryLists`,
# `_Listing`), shared with the worker kernels (`_worker_kernels`). The per-entry
# helpers are inline, so the kernels' loops inline them as before.
from libc.stdint cimport int32_t, int64_t, uint8_t

from aucforest._criterion cimport idx_t


cdef struct LiveEntries:
    # the (tree, row) entries a pass reads: starts NULL: every row of every tree;
    # else tree t's rows rows[starts[t]] .. rows[starts[t + 1] - 1], ascending
    const int32_t* rows
    const int64_t* starts


cdef LiveEntries _live_entries(live, idx_t T, idx_t n) except *


cdef inline idx_t _first(const LiveEntries* live, idx_t t) noexcept nogil:
    """Where tree t's entries start (`LiveEntries`)."""
    return 0 if live.starts == NULL else live.starts[t]


cdef inline idx_t _end(const LiveEntries* live, idx_t t, idx_t n) noexcept nogil:
    """Where tree t's entries end (n rows)."""
    return n if live.starts == NULL else live.starts[t + 1]


cdef inline idx_t _row(const LiveEntries* live, idx_t j) noexcept nogil:
    """The row of entry j."""
    return j if live.starts == NULL else live.rows[j]


cdef struct WaitingRows:
    # the rows of nodes finished in memory, per node id (`sort_entries`):
    # node d's rows rows[node_start[d]] .. rows[node_start[d + 1] - 1], of
    # tree node_tree[d]; n_nodes 0: none
    const int32_t* rows
    const int64_t* node_start
    const int32_t* node_tree
    idx_t n_nodes


cdef WaitingRows _waiting_rows(waiting, idx_t T, idx_t n) except *


cdef int _check_waiting_node(const WaitingRows* lists, idx_t d, idx_t n) except -1


cdef inline idx_t _waiting_count(const WaitingRows* lists, idx_t d) noexcept nogil:
    """How many rows node d has waiting (0 beyond the lists)."""
    if d >= lists.n_nodes:
        return 0
    return lists.node_start[d + 1] - lists.node_start[d]


cdef struct EntryLists:
    # where a pass over the entries lists those it leaves (`sort_entries`):
    # open rows per tree in open_rows (starts[t + 1]: the count after tree t),
    # the rows of nodes first listed waiting in new_rows / new_nodes, counted
    # per node at node_start[d + 1], of tree node_tree[d]
    const uint8_t* keep
    idx_t n_keep
    const WaitingRows* before
    int32_t* open_rows
    int64_t* starts
    int32_t* new_rows
    int32_t* new_nodes
    int64_t* node_start
    int32_t* node_tree
    idx_t n_open
    idx_t n_new


cdef inline void _list_entry(EntryLists* lists, idx_t t, idx_t i, int32_t node) noexcept nogil:
    """List entry (t, i) in node ``node`` after the pass (`sort_entries`)."""
    if node < 0:
        return
    if node >= lists.n_keep or lists.keep[node] == 1:
        lists.open_rows[lists.n_open] = <int32_t> i
        lists.n_open += 1
    elif lists.keep[node] == 2 and _waiting_count(lists.before, node) == 0:
        lists.new_rows[lists.n_new] = <int32_t> i
        lists.new_nodes[lists.n_new] = node
        lists.n_new += 1
        lists.node_start[node + 1] += 1
        lists.node_tree[node] = <int32_t> t


cdef class _Listing:
    cdef EntryLists lists
    cdef WaitingRows before
    cdef object keep, waiting, open_array, starts_array, new_rows_array, new_nodes_array
    cdef object node_start_array, node_tree_array
    cdef idx_t T, n
    cdef double max_share

    cdef EntryLists* pointer(self)


cdef _Listing _listing(keep, waiting, const LiveEntries* live, idx_t T, idx_t n,
                      double max_share)
