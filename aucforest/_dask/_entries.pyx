# cython: language_level=3
"""Entry lists of the Dask fit (`aucforest._dask`).

`start_trees` puts a partition's rows in the roots of a batch of trees;
`sort_entries` lists the (tree, row) entries still in a batch's work after a
round: the open ones per tree (the next rounds read only those) and those of
nodes finished in memory per node (taken out reading their rows only). The
structs and inline helpers are declared in `_entries.pxd`, shared with the
worker kernels (`_worker_kernels`), which list the entries in their own pass.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy

import numpy as np

from aucforest._criterion cimport idx_t


def start_trees(const uint8_t[:, ::1] counts, const int64_t[::1] weights,
                const int32_t[::1] y, idx_t n_classes):
    """Node ids of a partition's rows at the start of a batch of trees, and the
    roots' sums, in one pass.

    Row i is in tree t's root (id t) when counts[t, i] > 0 and its weight
    (weights[i], all 1 when weights is None) is positive, else -1.

    Returns
    -------
    ids : int32 (trees, rows)
    sums : int64 (trees, n_classes + 1)
        Class weights (weights[i] x counts[t, i]) of each root, then its distinct cases.
    """
    cdef idx_t T = counts.shape[0], n = counts.shape[1], t, i
    cdef bint weighted = weights is not None
    cdef int64_t w
    if y.shape[0] != n or (weighted and weights.shape[0] != n):
        raise ValueError("counts, weights and y must have one entry per row")
    ids_array = np.full((T, n), -1, dtype=np.int32)
    sums_array = np.zeros((T, n_classes + 1), dtype=np.int64)
    cdef int32_t[:, ::1] ids = ids_array
    cdef int64_t[:, ::1] sums = sums_array
    with nogil:
        for t in range(T):
            for i in range(n):
                if counts[t, i] == 0:
                    continue
                w = counts[t, i] * weights[i] if weighted else counts[t, i]
                if w <= 0:
                    continue
                ids[t, i] = <int32_t> t
                sums[t, y[i]] += w
                sums[t, n_classes] += 1
    return ids_array, sums_array


cdef LiveEntries _live_entries(live, idx_t T, idx_t n) except *:
    """The entries of ``live`` ((rows, starts) from `sort_entries`, or None: every
    entry), checked against T trees of n rows."""
    cdef LiveEntries entries
    cdef const int32_t[::1] rows
    cdef const int64_t[::1] starts
    cdef idx_t t, j
    entries.rows = NULL
    entries.starts = NULL
    if live is None:
        return entries
    rows, starts = live
    if starts.shape[0] != T + 1 or starts[0] != 0 or starts[T] != rows.shape[0]:
        raise ValueError("live must list each tree's rows: T + 1 starts from 0 to the "
                         "number of rows listed")
    for t in range(T):
        if starts[t + 1] < starts[t]:
            raise ValueError("live's starts must not decrease")
        for j in range(starts[t], starts[t + 1]):
            if rows[j] < 0 or rows[j] >= n or (j > starts[t] and rows[j] <= rows[j - 1]):
                raise ValueError("live's rows must be row indices, ascending within a tree")
    entries.starts = &starts[0]
    if rows.shape[0]:  # else every tree's range is empty: rows is never read
        entries.rows = &rows[0]
    return entries


cdef WaitingRows _waiting_rows(waiting, idx_t T, idx_t n) except *:
    """The lists of ``waiting`` ((rows, node_start, node_tree) from
    `sort_entries`, or None: none), their nodes checked against T trees (a
    node's rows are checked where they are read: `_check_waiting_node`)."""
    cdef WaitingRows lists
    cdef const int32_t[::1] rows
    cdef const int64_t[::1] node_start
    cdef const int32_t[::1] node_tree
    cdef idx_t d, n_nodes
    lists.rows = NULL
    lists.node_start = NULL
    lists.node_tree = NULL
    lists.n_nodes = 0
    if waiting is None:
        return lists
    rows, node_start, node_tree = waiting
    n_nodes = node_tree.shape[0]
    if (node_start.shape[0] != n_nodes + 1 or node_start[0] != 0
            or node_start[n_nodes] != rows.shape[0]):
        raise ValueError("waiting must list each node's rows: one start per node and one "
                         "more, from 0 to the number of rows listed")
    for d in range(n_nodes):
        if node_start[d + 1] < node_start[d]:
            raise ValueError("waiting's node starts must not decrease")
        if node_start[d + 1] > node_start[d] and not 0 <= node_tree[d] < T:
            raise ValueError("waiting's node trees must be tree indices")
    if rows.shape[0]:
        lists.rows = &rows[0]
    lists.node_start = &node_start[0]
    if n_nodes:
        lists.node_tree = &node_tree[0]
    lists.n_nodes = n_nodes
    return lists


cdef int _check_waiting_node(const WaitingRows* lists, idx_t d, idx_t n) except -1:
    """Node d's waiting rows must be row indices of n rows, ascending."""
    cdef idx_t j
    for j in range(lists.node_start[d], lists.node_start[d + 1]):
        if (lists.rows[j] < 0 or lists.rows[j] >= n
                or (j > lists.node_start[d] and lists.rows[j] <= lists.rows[j - 1])):
            raise ValueError("waiting's rows must be row indices, ascending within a node")
    return 0


cdef class _Listing:
    """The arrays of one pass's `EntryLists` (``lists`` points into them) and
    the lists it makes (`done`)."""

    def __cinit__(self, const uint8_t[::1] keep, waiting, idx_t T, idx_t n, idx_t n_entries,
                  double max_share):
        cdef const uint8_t[::1] keep_view = keep
        cdef int32_t[::1] open_rows, new_rows, new_nodes, node_tree
        cdef int64_t[::1] starts, node_start
        self.before = _waiting_rows(waiting, T, n)
        self.keep, self.waiting = keep, waiting  # what lists and before point into
        self.T, self.n, self.max_share = T, n, max_share
        # at most every entry read is listed (pages never written cost no memory)
        self.open_array = np.empty(max(n_entries, 1), dtype=np.int32)
        self.new_rows_array = np.empty(max(n_entries, 1), dtype=np.int32)
        self.new_nodes_array = np.empty(max(n_entries, 1), dtype=np.int32)
        self.starts_array = np.zeros(T + 1, dtype=np.int64)
        self.node_start_array = np.zeros(keep.shape[0] + 1, dtype=np.int64)
        self.node_tree_array = np.full(keep.shape[0], -1, dtype=np.int32)
        open_rows, new_rows, new_nodes = (self.open_array, self.new_rows_array,
                                          self.new_nodes_array)
        starts, node_start, node_tree = (self.starts_array, self.node_start_array,
                                         self.node_tree_array)
        self.lists.keep = &keep_view[0] if keep.shape[0] else NULL
        self.lists.n_keep = keep.shape[0]
        self.lists.before = &self.before
        self.lists.open_rows = &open_rows[0]
        self.lists.starts = &starts[0]
        self.lists.new_rows = &new_rows[0]
        self.lists.new_nodes = &new_nodes[0]
        self.lists.node_start = &node_start[0]
        self.lists.node_tree = &node_tree[0] if keep.shape[0] else NULL
        self.lists.n_open = 0
        self.lists.n_new = 0

    cdef EntryLists* pointer(self):
        return &self.lists

    def done(self):
        """(live, waiting) as `sort_entries` returns them, once the pass listed
        every entry."""
        cdef EntryLists* lists = &self.lists
        cdef const WaitingRows* before = &self.before
        cdef idx_t n_keep = lists.n_keep, d, j, old_count, n_old = min(before.n_nodes, n_keep)
        cdef int64_t* node_start = lists.node_start
        cdef int32_t* node_tree = lists.node_tree
        for d in range(n_keep):
            if lists.keep[d] == 2 and _waiting_count(before, d):
                node_start[d + 1] = _waiting_count(before, d)
                node_tree[d] = before.node_tree[d]
            elif lists.keep[d] != 2:
                node_start[d + 1] = 0
                node_tree[d] = -1
            node_start[d + 1] += node_start[d]
        waiting_rows_array = np.empty(node_start[n_keep], dtype=np.int32)
        cdef int32_t[::1] waiting_rows = waiting_rows_array
        at_array = np.array(self.node_start_array[:n_keep], copy=True)
        cdef int64_t[::1] at = at_array
        with nogil:
            for d in range(n_old):  # the rows listed before, of the nodes still waiting
                old_count = _waiting_count(before, d)
                if lists.keep[d] == 2 and old_count:
                    memcpy(&waiting_rows[at[d]], &before.rows[before.node_start[d]],
                           old_count * sizeof(int32_t))
                    at[d] += old_count
            for j in range(lists.n_new):  # in the pass's order: ascending per node
                d = lists.new_nodes[j]
                waiting_rows[at[d]] = lists.new_rows[j]
                at[d] += 1
        live_out = (None if lists.n_open > self.max_share * self.T * self.n
                    else (self.open_array[:lists.n_open], self.starts_array))
        return live_out, (waiting_rows_array, self.node_start_array, self.node_tree_array)


cdef _Listing _listing(keep, waiting, const LiveEntries* live, idx_t T, idx_t n,
                      double max_share):
    """The lists a pass over ``live`` (T trees of n rows) makes (`_Listing`),
    None without ``keep``."""
    if keep is None:
        return None
    return _Listing(keep, waiting, T, n, T * n if live.starts == NULL else live.starts[T],
                    max_share)


def sort_entries(const int32_t[:, ::1] ids, const uint8_t[::1] keep, live=None,
                 waiting=None, double max_share=1.0):
    """The (tree, row) entries still in a batch's work after a round, sorted
    by what the next rounds do with them: those of ``live`` (None: every
    entry) whose node d = ids[t, i] >= 0 has keep[d] == 1 (open: the next
    rounds route them and add their histograms; a node beyond ``keep`` is
    kept so) listed per tree, and those whose node has keep[d] == 2
    (finished in memory, waiting to be taken out) listed per node, joined to
    the ``waiting`` lists of the rounds before. A waiting node's rows are
    listed once, when first read (a node already in ``waiting`` is not
    listed again), and a waiting node keeps its rows while keep[d] == 2, so
    that taking a node out (`take_waiting`) reads its rows only, not every
    entry of the batch. Entries of nodes with keep[d] == 0 are dropped.
    One pass over the entries (`route` and `histograms` list them in their
    own pass when given ``keep``).

    Returns
    -------
    live : (rows : int32, starts : int64 (trees + 1,)) or None
        Tree t's open rows are rows[starts[t]:starts[t + 1]], ascending;
        None when they are more than ``max_share`` of the trees x rows
        entries (a pass then reads every entry, about as fast).
    waiting : (rows : int32, node_start : int64 (len(keep) + 1,), node_tree : int32 (len(keep),))
        Node d's rows are rows[node_start[d]:node_start[d + 1]], ascending,
        of tree node_tree[d] (-1: none listed).
    """
    cdef idx_t T = ids.shape[0], n = ids.shape[1], t, j, i
    cdef LiveEntries entries = _live_entries(live, T, n)
    cdef _Listing listing = _listing(keep, waiting, &entries, T, n, max_share)
    cdef EntryLists* lists = listing.pointer()
    with nogil:
        for t in range(T):
            for j in range(_first(&entries, t), _end(&entries, t, n)):
                i = _row(&entries, j)
                _list_entry(lists, t, i, ids[t, i])
            lists.starts[t + 1] = lists.n_open
    return listing.done()
