# cython: language_level=3
"""Compiled kernels of the Dask fit (`aucforest._dask`).

* Counter-based draws: a row's multiplicity in a tree is a function of
  (key of the tree, global row index) only (SplitMix64's output function of
  ``key + (row + 1) * golden``, Steele, Lea & Flood 2014), so it does not
  depend on how the rows are partitioned.
* `route` and `histograms`: where the rows are, move each row of each tree to
  the child of the node it was in, then add its bin code's weight to the
  (node, feature) histograms requested, as integers (exact sums, so the sum
  over partitions does not depend on their order or grouping).
* `HistogramSplitter`: on the client, the split of a node from those summed
  histograms with the binned splitter's scan (`Splitter._scan_buckets`, the
  same criteria, tie rule, missing-value scan, nsplit draw and leaf bounds);
  a categorical feature's histogram (one bin per level) with its level-set
  scan (`Splitter._scan_levels`), and `route` sends rows by the level set.
"""
from libc.math cimport INFINITY, exp
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import numpy as np

from aucforest._dask._payloads import Pass, TakenPart

_NOT_LISTED = (None, None)  # a pass's (live, waiting) when it lists no entries

from aucforest._criterion cimport (X_t, criterion_improvement, criterion_init, idx_t,
                          node_impurity as _node_impurity)
from aucforest._split cimport SplitRecord, Splitter, level_goes_left, reset_split
from aucforest._buckets cimport bucket_threshold, draw_buckets
from aucforest._random cimport random_below as _random_below

cdef enum:
    MISSING_CODE = 255
    N_CODES = 256
    MAX_COUNT = 255           # a drawn multiplicity is at most this (uint8)

GOLDEN = 0x9E3779B97F4A7C15
MAX_MULTIPLICITY = MAX_COUNT  # for callers sizing sums of multiplicities (`histograms`)


cdef inline uint64_t _mix(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t _hash(uint64_t key, uint64_t counter) noexcept nogil:
    return _mix(key + (counter + 1) * 0x9E3779B97F4A7C15ULL)


cdef inline double _uniform(uint64_t h) noexcept nogil:
    return (h >> 11) * (1.0 / 9007199254740992.0)   # [0, 1), 53 bits


def hash_key(uint64_t key, uint64_t counter):
    """The counter-based hash of (key, counter): a new 64-bit key."""
    return _hash(key, counter)


def row_uniforms(uint64_t key, int64_t start, idx_t n):
    """Uniforms in [0, 1) of the global rows start..start + n - 1 under key."""
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] u = out
    cdef idx_t i
    with nogil:
        for i in range(n):
            u[i] = _uniform(_hash(key, <uint64_t> (start + i)))
    return out


def draw_counts(const uint64_t[::1] tree_keys, const int64_t[::1] rows, const int32_t[::1] y,
                const double[:, ::1] rates, bint poisson):
    """Multiplicity of the global rows ``rows`` in each tree (uint8, trees x rows).

    Row i of class y[i] is drawn Bernoulli(rates[t, y[i]]) times (subsampling
    without replacement) or Poisson(rates[t, y[i]]) times (with replacement,
    by inversion of the row's uniform, at most MAX_COUNT); y[i] < 0: never.
    """
    cdef idx_t T = tree_keys.shape[0], n = y.shape[0], t, i, k
    if rows.shape[0] != n:
        raise ValueError("rows and y must have the same length")
    out = np.zeros((T, n), dtype=np.uint8)
    cdef uint8_t[:, ::1] counts = out
    cdef double u, lam, p, cdf
    with nogil:
        for t in range(T):
            for i in range(n):
                if y[i] < 0:
                    continue
                lam = rates[t, y[i]]
                u = _uniform(_hash(tree_keys[t], <uint64_t> rows[i]))
                if not poisson:
                    counts[t, i] = u < lam
                    continue
                k = 0
                p = exp(-lam)
                cdf = p
                while u >= cdf and k < MAX_COUNT:
                    k += 1
                    p *= lam / k
                    cdf += p
                counts[t, i] = <uint8_t> k
    return out


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


cdef struct LiveEntries:
    # the (tree, row) entries a pass reads: starts NULL: every row of every tree;
    # else tree t's rows rows[starts[t]] .. rows[starts[t + 1] - 1], ascending
    const int32_t* rows
    const int64_t* starts


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
    """The arrays of one pass's `EntryLists` (``lists`` points into them) and
    the lists it makes (`done`)."""
    cdef EntryLists lists
    cdef WaitingRows before
    cdef object keep, waiting, open_array, starts_array, new_rows_array, new_nodes_array
    cdef object node_start_array, node_tree_array
    cdef idx_t T, n
    cdef double max_share

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


def take_rows(const int32_t[:, ::1] ids, const int32_t[::1] group_of, idx_t n_groups,
              const uint8_t[::1] trees, const uint8_t[:, ::1] codes,
              const uint8_t[:, ::1] counts, const int64_t[::1] weights, const int32_t[::1] y,
              int64_t start, bint byte_classes, live=None):
    """The rows of the nodes finished in memory, grouped per finishing task:
    every (tree t, row i) whose node d = ids[t, i] has group_of[d] >= 0 (ids
    beyond the table have none), in group group_of[d]. The ids do not change:
    a node finished in memory is never split nor asked histograms of, so its
    rows stay out of the rounds' work, and can be taken again (a subtree grown
    again to a larger leaf bound). ``trees``: the trees (rows of ids) whose
    nodes have groups (1), the others not read; None: all. ``live``: the
    entries to read (`sort_entries`; None: every entry), a superset of those taken.

    Parameters
    ----------
    codes : uint8 (rows, features); counts : uint8 (trees, rows), multiplicities
    weights : int64 (rows,) or None; y : int32 (rows,)
    start : global index of the partition's first row
    byte_classes : y as uint8 (fewer than 257 classes), else int32

    Returns
    -------
    list of TakenPart, one per group, its rows sorted by (node, row): codes
        (uint8 (taken, features)), y, weight (counts[t, i] as uint8
        without weights, else times weights[i] as int64); nodes (int32,
        ascending: those with rows taken), whose rows start at node_start
        (int64, one more entry); start and stop, the global rows of the
        partition (start .. stop - 1): a node's rows are in the order of
        their global indices, which need not be sent. Each node lies in one
        tree, whose rows are read ascending.
    """
    cdef idx_t T = ids.shape[0], n = ids.shape[1], n_table = group_of.shape[0], t, i, j
    cdef int32_t d
    cdef bint every_tree = trees is None, weighted = weights is not None
    if not every_tree and trees.shape[0] != T:
        raise ValueError("trees must have one entry per tree")
    _check_take(T, n, group_of, n_groups, codes, counts, weights, y)
    cdef LiveEntries entries = _live_entries(live, T, n)
    # places: rows per node, then each node's first place in its group (nodes ascending)
    at_array = np.zeros(max(n_table, 1), dtype=np.intp)
    cdef idx_t[::1] at = at_array
    with nogil:
        for t in range(T):
            if not every_tree and not trees[t]:
                continue
            for j in range(_first(&entries, t), _end(&entries, t, n)):
                d = ids[t, _row(&entries, j)]
                if 0 <= d < n_table and group_of[d] >= 0:
                    at[d] += 1
    cdef TakenGroups groups
    out = _taken_groups(&groups, at, group_of, n_groups, codes.shape[1], byte_classes,
                        weighted, start, n)
    with nogil:
        for t in range(T):
            if not every_tree and not trees[t]:
                continue
            for j in range(_first(&entries, t), _end(&entries, t, n)):
                i = _row(&entries, j)
                d = ids[t, i]
                if d < 0 or d >= n_table or group_of[d] < 0:
                    continue
                _put_row(&groups, group_of[d], at[d], &codes[i, 0], y[i],
                         counts[t, i] * weights[i] if weighted else counts[t, i])
                at[d] += 1
    _free_groups(&groups)
    return out


def take_waiting(waiting, const int32_t[::1] group_of, idx_t n_groups,
                 const uint8_t[:, ::1] codes, const uint8_t[:, ::1] counts,
                 const int64_t[::1] weights, const int32_t[::1] y, int64_t start,
                 bint byte_classes):
    """`take_rows` from the waiting lists of `sort_entries`: the rows of the
    nodes d with group_of[d] >= 0, in group group_of[d], as `take_rows`
    returns them (sorted by (node, global row)), reading those nodes' rows
    only. A node taken must be waiting (listed); one beyond the lists has none."""
    cdef idx_t T = counts.shape[0], n = counts.shape[1], n_table = group_of.shape[0], d, j, i
    cdef idx_t t
    cdef bint weighted = weights is not None
    _check_take(T, n, group_of, n_groups, codes, counts, weights, y)
    cdef WaitingRows lists = _waiting_rows(waiting, T, n)
    at_array = np.zeros(max(n_table, 1), dtype=np.intp)
    cdef idx_t[::1] at = at_array
    for d in range(min(n_table, lists.n_nodes)):
        if group_of[d] >= 0:
            _check_waiting_node(&lists, d, n)
            at[d] = _waiting_count(&lists, d)
    cdef TakenGroups groups
    out = _taken_groups(&groups, at, group_of, n_groups, codes.shape[1], byte_classes,
                        weighted, start, n)
    with nogil:
        for d in range(min(n_table, lists.n_nodes)):
            if group_of[d] < 0:
                continue
            t = lists.node_tree[d] if _waiting_count(&lists, d) else 0
            for j in range(lists.node_start[d], lists.node_start[d + 1]):
                i = lists.rows[j]
                _put_row(&groups, group_of[d], at[d], &codes[i, 0], y[i],
                         counts[t, i] * weights[i] if weighted else counts[t, i])
                at[d] += 1
    _free_groups(&groups)
    return out


cdef int _check_take(idx_t T, idx_t n, const int32_t[::1] group_of, idx_t n_groups,
                     const uint8_t[:, ::1] codes, const uint8_t[:, ::1] counts,
                     const int64_t[::1] weights, const int32_t[::1] y) except -1:
    """The shape checks of `take_rows` and `take_waiting`."""
    cdef idx_t d
    if (codes.shape[0] != n or y.shape[0] != n or counts.shape[0] != T
            or counts.shape[1] != n or (weights is not None and weights.shape[0] != n)):
        raise ValueError("codes, counts, weights and y must have one entry per row")
    for d in range(group_of.shape[0]):
        if group_of[d] >= n_groups:
            raise ValueError("group_of points beyond n_groups")
    return 0


cdef struct TakenGroups:
    # where `_put_row` writes each group's taken rows (`take_rows`' output)
    uint8_t** codes
    void** y
    void** weight
    idx_t p
    bint byte_classes
    bint weighted


cdef list _taken_groups(TakenGroups* groups, idx_t[::1] at, const int32_t[::1] group_of,
                        idx_t n_groups, idx_t p, bint byte_classes, bint weighted,
                        int64_t start, idx_t n):
    """The groups' output arrays, sized from the rows per node ``at`` (node
    d's rows in group group_of[d]), each with its nodes and where their rows
    start, and the pointers `_put_row` writes through; ``at`` becomes each
    node's first place in its group (nodes ascending). The partition's rows
    are the global rows start .. start + n - 1."""
    cdef idx_t d, g, count, n_ptrs = max(n_groups, 1)
    sizes_array = np.zeros(n_ptrs, dtype=np.intp)
    cdef idx_t[::1] sizes = sizes_array
    nodes = [[] for g in range(n_groups)]
    node_start = [[0] for g in range(n_groups)]
    for d in range(group_of.shape[0]):
        g = group_of[d]
        if g >= 0:
            count = at[d]
            at[d] = sizes[g]
            sizes[g] += count
            if count:
                nodes[g].append(d)
                node_start[g].append(sizes[g])
    out = []
    for g in range(n_groups):
        out.append(TakenPart(
            nodes=np.array(nodes[g], dtype=np.int32),
            node_start=np.array(node_start[g], dtype=np.int64), start=start, stop=start + n,
            codes=np.empty((sizes[g], p), dtype=np.uint8),
            y=np.empty(sizes[g], dtype=np.uint8 if byte_classes else np.int32),
            weight=np.empty(sizes[g], dtype=np.int64 if weighted else np.uint8)))
    groups.codes = <uint8_t**> calloc(n_ptrs, sizeof(uint8_t*))
    groups.y = <void**> calloc(n_ptrs, sizeof(void*))
    groups.weight = <void**> calloc(n_ptrs, sizeof(void*))
    groups.p = p
    groups.byte_classes = byte_classes
    groups.weighted = weighted
    if groups.codes == NULL or groups.y == NULL or groups.weight == NULL:
        _free_groups(groups)
        raise MemoryError("cannot allocate the group tables")
    for g in range(n_groups):
        if sizes[g] == 0:
            continue
        groups.codes[g] = <uint8_t*> <size_t> out[g].codes.ctypes.data
        groups.y[g] = <void*> <size_t> out[g].y.ctypes.data
        groups.weight[g] = <void*> <size_t> out[g].weight.ctypes.data
    return out


cdef void _free_groups(TakenGroups* groups) noexcept:
    free(groups.codes)
    free(groups.y)
    free(groups.weight)


cdef inline void _put_row(const TakenGroups* groups, idx_t g, idx_t pos, const uint8_t* codes,
                          int32_t klass, int64_t weight) noexcept nogil:
    """Write a row (its codes, class and weight) at place pos of group g."""
    if groups.p:
        memcpy(groups.codes[g] + pos * groups.p, codes, groups.p)
    if groups.byte_classes:
        (<uint8_t*> groups.y[g])[pos] = <uint8_t> klass
    else:
        (<int32_t*> groups.y[g])[pos] = klass
    if groups.weighted:
        (<int64_t*> groups.weight[g])[pos] = weight
    else:
        (<uint8_t*> groups.weight[g])[pos] = <uint8_t> weight


cdef struct RouteTables:
    # a round's routing tables (`route`), indexed by node id
    idx_t n_table
    const int32_t* feature
    const int32_t* threshold_bin
    const uint8_t* missing_left
    const int32_t* left
    const int32_t* right
    const int32_t* level_set       # NULL: no categorical split
    const uint64_t* left_levels    # 4 words per set


cdef RouteTables _route_tables(const int32_t[::1] feature, const int32_t[::1] threshold_bin,
                               const uint8_t[::1] missing_left, const int32_t[::1] left,
                               const int32_t[::1] right, const int32_t[::1] level_set,
                               const uint64_t[:, ::1] left_levels) except *:
    """The tables checked (one entry per node id; level sets within left_levels)."""
    cdef RouteTables tables
    cdef idx_t n_table = feature.shape[0], d
    if not (threshold_bin.shape[0] == missing_left.shape[0] == left.shape[0]
            == right.shape[0] == n_table):
        raise ValueError("the routing tables must have one entry per node id")
    if level_set is not None:
        if (level_set.shape[0] != n_table or left_levels is None
                or left_levels.shape[1] != 4):
            raise ValueError("level_set must have one entry per node id and left_levels 4 "
                             "words per set")
        for d in range(n_table):
            if level_set[d] >= left_levels.shape[0]:
                raise ValueError("level_set points beyond left_levels")
    tables.n_table = n_table
    tables.level_set = NULL
    tables.left_levels = NULL
    if n_table == 0:
        return tables
    tables.feature = &feature[0]
    tables.threshold_bin = &threshold_bin[0]
    tables.missing_left = &missing_left[0]
    tables.left = &left[0]
    tables.right = &right[0]
    if level_set is not None:
        tables.level_set = &level_set[0]
        if left_levels.shape[0]:
            tables.left_levels = &left_levels[0, 0]
    return tables


cdef inline int32_t _routed(int32_t d, const uint8_t* row, const RouteTables* tables) \
        noexcept nogil:
    """The node id after the round of a row in node d (``row``: its codes)."""
    cdef int32_t f
    cdef uint8_t code
    cdef bint goes_left
    if d < 0 or d >= tables.n_table:
        return d
    f = tables.feature[d]
    if f == -1:
        return d
    if f == -2:
        return -1
    code = row[f]
    if code == MISSING_CODE:
        goes_left = tables.missing_left[d]
    elif tables.level_set != NULL and tables.level_set[d] >= 0:
        goes_left = level_goes_left(&tables.left_levels[4 * tables.level_set[d]], code)
    else:
        goes_left = code <= tables.threshold_bin[d]
    return tables.left[d] if goes_left else tables.right[d]


ctypedef fused hist_t:
    int32_t
    int64_t


cdef inline void _add_to_slots(hist_t* hist, const int64_t* first_slot,
                               const int32_t* slot_feature, int32_t d, const uint8_t* row,
                               int32_t klass, int64_t w, idx_t n_codes, idx_t n_classes,
                               bint with_cases) noexcept nogil:
    """Add a row of node d (codes ``row``, class, weight w) to the node's slots
    (cells of n_classes + 1 entries with its case, of n_classes without)."""
    cdef idx_t s, code, width = n_classes + 1 if with_cases else n_classes
    cdef hist_t* cell
    for s in range(first_slot[d], first_slot[d + 1]):
        code = row[slot_feature[s]]
        if code == MISSING_CODE:
            code = n_codes - 1
        cell = hist + (s * n_codes + code) * width
        cell[klass] += <hist_t> w
        if with_cases:
            cell[n_classes] += 1


def route(const uint8_t[:, ::1] codes, const int32_t[:, ::1] ids, const int32_t[::1] feature,
          const int32_t[::1] threshold_bin, const uint8_t[::1] missing_left,
          const int32_t[::1] left, const int32_t[::1] right,
          const int32_t[::1] level_set=None, const uint64_t[:, ::1] left_levels=None,
          live=None, keep=None, waiting=None, double max_share=1.0):
    """Node ids after a round of splits: a new (trees x rows) int32 array.

    For the node id d of a row (tables indexed by id; ids beyond them, and
    negative ones, stay): feature[d] = -1 keeps it, -2 drops the row from the tree (-1),
    f >= 0 sends it to left[d] when code <= threshold_bin[d] (or missing and
    missing_left[d]), else to right[d]. A categorical split (level_set[d] >=
    0) sends a level code c left when bit c of left_levels[level_set[d]] (4
    words, 256 bits) is set, missing values by missing_left[d]. ``live``: the
    only entries moved (`sort_entries`; None: every entry), the others keep their ids.
    With ``keep`` (and ``waiting``, ``max_share``), the entries are listed in
    the same pass as `sort_entries` lists them after the move.

    Returns
    -------
    Pass
        ``ids`` the new node ids; ``live``, ``waiting`` `sort_entries`' lists
        (with ``keep`` only, else None); no ``hist``.
    """
    cdef RouteTables tables = _route_tables(feature, threshold_bin, missing_left, left, right,
                                            level_set, left_levels)
    cdef idx_t T = ids.shape[0], n = ids.shape[1], t, i, j
    cdef LiveEntries entries = _live_entries(live, T, n)
    cdef _Listing listing = _listing(keep, waiting, &entries, T, n, max_share)
    cdef EntryLists* lists = NULL if listing is None else listing.pointer()
    out = np.array(ids, dtype=np.int32, copy=True)
    cdef int32_t[:, ::1] new = out
    if n > 0:
        with nogil:
            for t in range(T):
                for j in range(_first(&entries, t), _end(&entries, t, n)):
                    i = _row(&entries, j)
                    new[t, i] = _routed(new[t, i], &codes[i, 0], &tables)
                    if lists != NULL:
                        _list_entry(lists, t, i, new[t, i])
                if lists != NULL:
                    lists.starts[t + 1] = lists.n_open
    return Pass(None, out, *(_NOT_LISTED if listing is None else listing.done()))


def histograms(const uint8_t[:, ::1] codes, const int32_t[:, ::1] ids,
               const uint8_t[:, ::1] counts, const int64_t[::1] weights,
               const int32_t[::1] y, const int64_t[::1] first_slot,
               const int32_t[::1] slot_feature, idx_t n_codes, idx_t n_classes,
               routes=None, bint narrow=False, bint with_cases=True, live=None,
               keep=None, waiting=None, double max_share=1.0):
    """Integer class-weight and case histograms of the requested (node, feature) slots.

    Node id d has slots first_slot[d] .. first_slot[d + 1] - 1 (first_slot
    has one more entry than there are ids), slot s for feature
    slot_feature[s]. A row of tree t in node d adds weights[i] x counts[t, i]
    (counts[t, i] without weights) to hist[s, code, y[i]] and 1 to hist[s,
    code, n_classes] (its cases), the missing code at n_codes - 1: a row's
    two additions to a slot in one cache line.

    With ``routes`` (`route`'s tables after ids), the rows are first moved as
    `route` moves them, in the same pass, and the histograms are those of
    the nodes they reach.

    ``narrow``: int32 sums (half the cache lines), for the caller to choose
    when no sum can exceed 2**31 - 1 (without weights: fewer than 2**31 / 255
    rows); ``with_cases`` False: no case column, for the caller to choose when
    every weight is 1 (no weights, multiplicities 0 or 1), the class weights
    then summing to the cases. ``live``: the only entries read (`sort_entries`;
    None: every entry), a superset of those in the requested and split nodes.
    ``keep`` (and ``waiting``, ``max_share``): the entries read are listed in
    the same pass as `sort_entries` lists them (after routing).

    Returns
    -------
    Pass
        ``hist``: int64, or int32 when narrow (n_slots, n_codes, n_classes +
        with_cases); ``ids``: int32 (trees, rows), the node ids after routing
        (with ``routes`` only, else None); ``live``, ``waiting``:
        `sort_entries`' lists (with ``keep`` only, else None).
    """
    cdef idx_t n_slots = slot_feature.shape[0]
    cdef bint routing = routes is not None
    cdef RouteTables tables
    cdef LiveEntries entries = _live_entries(live, ids.shape[0], ids.shape[1])
    hist_array = np.zeros((n_slots, n_codes, n_classes + 1 if with_cases else n_classes),
                          dtype=np.int32 if narrow else np.int64)
    out = np.array(ids, dtype=np.int32, copy=True) if routing else None
    if routing:
        routes = tuple(routes) + (None, None) * (len(routes) == 5)
        tables = _route_tables(routes[0], routes[1], routes[2], routes[3], routes[4],
                               routes[5], routes[6])
    cdef _Listing listing = _listing(keep, waiting, &entries, ids.shape[0], ids.shape[1],
                                     max_share)
    cdef EntryLists* lists = NULL if listing is None else listing.pointer()
    cdef int32_t[:, :, ::1] hist32
    cdef int64_t[:, :, ::1] hist64
    cdef int32_t[:, ::1] new = out if routing else None
    if ids.shape[1] > 0 and (n_slots > 0 or routing or lists != NULL):  # else nothing to do
        if narrow:
            hist32 = hist_array
            _histogram_pass(&hist32[0, 0, 0] if n_slots else <int32_t*> NULL, codes, ids,
                            new, counts, weights, y, first_slot, slot_feature, n_codes,
                            n_classes, with_cases, &tables if routing else NULL, &entries,
                            lists)
        else:
            hist64 = hist_array
            _histogram_pass(&hist64[0, 0, 0] if n_slots else <int64_t*> NULL, codes, ids,
                            new, counts, weights, y, first_slot, slot_feature, n_codes,
                            n_classes, with_cases, &tables if routing else NULL, &entries,
                            lists)
    return Pass(hist_array, out, *(_NOT_LISTED if listing is None else listing.done()))


cdef void _histogram_pass(hist_t* base, const uint8_t[:, ::1] codes,
                          const int32_t[:, ::1] ids, int32_t[:, ::1] new,
                          const uint8_t[:, ::1] counts, const int64_t[::1] weights,
                          const int32_t[::1] y, const int64_t[::1] first_slot,
                          const int32_t[::1] slot_feature, idx_t n_codes, idx_t n_classes,
                          bint with_cases, const RouteTables* tables,
                          const LiveEntries* live, EntryLists* lists) noexcept:
    """`histograms`' pass over the rows (routing them first when ``tables``,
    listing them after when ``lists``)."""
    cdef idx_t T = ids.shape[0], n = ids.shape[1], n_ids = first_slot.shape[0] - 1, t, i, j
    cdef int32_t d
    cdef int64_t w
    cdef bint weighted = weights is not None
    cdef const int32_t* features = &slot_feature[0] if slot_feature.shape[0] else NULL
    with nogil:
        for t in range(T):
            for j in range(_first(live, t), _end(live, t, n)):
                i = _row(live, j)
                if tables != NULL:
                    d = _routed(new[t, i], &codes[i, 0], tables)
                    new[t, i] = d
                else:
                    d = ids[t, i]
                if lists != NULL:
                    _list_entry(lists, t, i, d)
                if d < 0 or d >= n_ids or counts[t, i] == 0:
                    continue
                if first_slot[d] == first_slot[d + 1]:
                    continue
                w = counts[t, i] * weights[i] if weighted else counts[t, i]
                if w == 0:
                    continue
                _add_to_slots(base, &first_slot[0], features, d, &codes[i, 0], y[i], w,
                              n_codes, n_classes, with_cases)
            if lists != NULL:
                lists.starts[t + 1] = lists.n_open


def node_impurity(const double[::1] counts, int criterion):
    """Gini impurity or entropy (bits) of weighted class counts, as the trees store it."""
    return _node_impurity(&counts[0], counts.shape[0], criterion)


cdef class HistogramSplitter(Splitter):
    """The best split of a node from its summed bin histograms (on the client).

    The scan is the binned splitter's (`aucforest._binned`): per examined
    feature the occupied value bins (``nsplit`` of them drawn uniformly
    without replacement, the last excepted, when the node has more than
    nsplit + 1 cases and bins), missing values scanned right and then left,
    min_samples_leaf counted in distinct cases, ties to the first candidate
    in scan order. What differs is where the random numbers come from: the
    feature order is a permutation drawn from the node's key, and each
    feature's bin draw from (node key, feature), so that no draw depends on
    the order in which nodes are reached or on which histograms were asked
    for first (PLANET, Panda et al. VLDB 2009; Spark MLlib's
    RandomForest.findBestSplits choose splits on the driver alike).

    Parameters
    ----------
    edges : float64 (n_features, >= max n_bins), as `BinnedData.edges`
    n_features, n_classes, criterion, max_features, min_samples_leaf, nsplit
        As for `BinnedSplitter` (min_weight_leaf is given per node).
    is_categorical : bool (n_features,) or None
        Categorical features: their histogram has one bin per level code and
        is split by a set of levels (`Splitter._scan_levels`, as
        `BinnedSplitter._examine_levels`; nsplit draws cut positions among the
        node's ordered levels). None: none.
    """
    cdef const double[:, ::1] edges
    cdef idx_t nsplit
    cdef double* hist_weight          # (N_CODES * n_classes,) class weights per code
    cdef idx_t* hist_count            # (N_CODES,) distinct cases per code
    cdef idx_t* occupied_bins         # (N_CODES,) occupied value bins, ascending
    cdef idx_t* drawn_positions       # (N_CODES,)
    cdef idx_t* drawn_bins            # (N_CODES,)
    cdef unsigned char* drawn_flags   # (N_CODES,)
    cdef uint8_t* bin_target          # (N_CODES,) bucket bin of each code during a draw
    cdef double* left_counts          # (n_classes,)
    cdef double* right_counts         # (n_classes,)

    def __init__(self, const double[:, ::1] edges, idx_t n_features, idx_t n_classes,
                 int criterion, idx_t max_features, idx_t min_samples_leaf, idx_t nsplit,
                 is_categorical=None):
        cdef idx_t[::1] no_y = np.zeros(1, dtype=np.intp)
        cdef double[::1] no_w = np.zeros(1)
        self.edges = edges
        self.nsplit = nsplit
        self._init_common(0, n_features, no_y[:0], no_w[:0], n_classes, criterion,
                          max_features, min_samples_leaf, 0.0, 0)
        self._set_categorical(is_categorical, nsplit, False)
        self.hist_weight = <double*> calloc(N_CODES * n_classes, sizeof(double))
        self.hist_count = <idx_t*> calloc(N_CODES, sizeof(idx_t))
        self.occupied_bins = <idx_t*> malloc(N_CODES * sizeof(idx_t))
        self.drawn_positions = <idx_t*> malloc(N_CODES * sizeof(idx_t))
        self.drawn_bins = <idx_t*> malloc(N_CODES * sizeof(idx_t))
        self.drawn_flags = <unsigned char*> calloc(N_CODES, sizeof(unsigned char))
        self.bin_target = <uint8_t*> malloc(N_CODES * sizeof(uint8_t))
        self.left_counts = <double*> malloc(n_classes * sizeof(double))
        self.right_counts = <double*> malloc(n_classes * sizeof(double))
        if (self.hist_weight == NULL or self.hist_count == NULL or self.occupied_bins == NULL
                or self.drawn_positions == NULL or self.drawn_bins == NULL
                or self.drawn_flags == NULL or self.bin_target == NULL
                or self.left_counts == NULL or self.right_counts == NULL):
            raise MemoryError("cannot allocate the histogram splitter's buffers")
        cdef int code
        for code in range(N_CODES):
            self.bin_target[code] = <uint8_t> code

    def __dealloc__(self):
        free(self.hist_weight)
        free(self.hist_count)
        free(self.occupied_bins)
        free(self.drawn_positions)
        free(self.drawn_bins)
        free(self.drawn_flags)
        free(self.bin_target)
        free(self.left_counts)
        free(self.right_counts)

    def find_split(self, const double[:, :, ::1] hist, const int64_t[:, ::1] cases,
                   const int64_t[::1] slot, const double[::1] node_counts, idx_t n_cases,
                   double min_weight_leaf, const int64_t[::1] order,
                   const uint8_t[::1] known_constant, uint64_t node_key):
        """Examine the node's features in ``order`` as the binned splitter does.

        Parameters
        ----------
        hist : (n_available, n_codes, K) class weights; cases : (n_available, n_codes)
            Histograms of the features at hand (missing code last).
        slot : (n_features,) row of each feature in hist, -1 when not at hand
        node_counts : (K,) class weights of the node; n_cases : its distinct cases
        min_weight_leaf : weight bound of each child
        order : (n_features,) the node's feature permutation
        known_constant : (n_features,) 1 for features constant in an ancestor
        node_key : the node's key (seeds each feature's bin draw)

        Returns
        -------
        dict
            ``need``: position in order of the first feature whose histogram is
            needed (-1 when none: the search is complete), ``constant``: the
            features found constant, and when a split was found ``feature``,
            ``bin``, ``threshold``, ``missing_left``, ``improvement``,
            ``left`` (K class weights), ``left_cases``, ``categorical`` and
            for a categorical split ``left_levels`` (uint64 (4,): bit c set
            when level c goes left; levels absent from the node go where
            missing values go, as `Splitter.node_split` sets them).
        """
        cdef SplitRecord best
        cdef idx_t K = self.n_classes, pos, f, n_examined = 0, k, b, n_codes = hist.shape[1]
        cdef idx_t left_cases = 0
        cdef int64_t s
        cdef bint goes_left
        cdef int found
        cdef double weight_left = 0.0, weight_right = 0.0
        constant = []
        if node_counts.shape[0] != K or order.shape[0] != self.n_features:
            raise ValueError("node_counts and order do not match the splitter")
        self.min_weight_leaf = min_weight_leaf
        for k in range(K):
            self.crit.node_counts[k] = node_counts[k]
        criterion_init(&self.crit)
        reset_split(&best, 0)
        need = -1
        for pos in range(self.n_features):
            if n_examined >= self.max_features:
                break
            f = order[pos]
            if known_constant[f]:
                continue
            s = slot[f]
            if s < 0:
                need = pos
                break
            self.rng_state = _hash(node_key, <uint64_t> (2 + f))
            if self.categorical != NULL and self.categorical[f]:
                found = self._examine_level_histogram(f, hist, cases, s, n_cases, &best)
            else:
                found = self._examine_histogram(f, hist, cases, s, n_cases, &best)
                if best.feature == f:  # a numeric split beat an earlier categorical one
                    best.categorical = False
            if found:
                n_examined += 1
            else:
                constant.append(int(f))
        result = {"need": need, "constant": constant, "n_examined": n_examined,
                  "feature": -1}
        if need >= 0 or best.feature < 0:
            return result
        s = slot[best.feature]
        for k in range(K):
            self.left_counts[k] = 0.0
        for b in range(n_codes - 1):
            goes_left = (level_goes_left(best.left_levels, b) if best.categorical
                         else b <= best.bin)
            if goes_left:
                left_cases += cases[s, b]
                for k in range(K):
                    self.left_counts[k] += hist[s, b, k]
        n_missing_cases = cases[s, n_codes - 1]
        if best.missing_left:
            left_cases += cases[s, n_codes - 1]
            for k in range(K):
                self.left_counts[k] += hist[s, n_codes - 1, k]
        for k in range(K):
            self.right_counts[k] = node_counts[k] - self.left_counts[k]
            weight_left += self.left_counts[k]
            weight_right += self.right_counts[k]
        if best.n_missing == 0:
            # missing values never seen here go, at predict time, to the heavier child
            best.missing_left = weight_left >= weight_right
        best.improvement = criterion_improvement(&self.crit, self.left_counts, self.right_counts)
        result.update(feature=int(best.feature), bin=int(best.bin),
                      threshold=float(best.threshold), missing_left=bool(best.missing_left),
                      improvement=float(best.improvement), left_cases=int(left_cases),
                      left=np.array([self.left_counts[k] for k in range(K)]),
                      categorical=bool(best.categorical))
        if best.categorical:
            if best.missing_left:  # levels absent from the node go where missing values go
                for k in range(4):
                    best.left_levels[k] |= ~best.node_levels[k]
            result.update(left_levels=np.array([best.left_levels[k] for k in range(4)],
                                               dtype=np.uint64), threshold=float("nan"))
        return result

    cdef int _examine_level_histogram(self, idx_t feature, const double[:, :, ::1] hist,
                                      const int64_t[:, ::1] cases, int64_t s, idx_t n_cases,
                                      SplitRecord* best):
        """`BinnedSplitter._examine_levels` on a node's histogram of one
        categorical feature (bin b: level b): the occupied levels ascending,
        then `Splitter._scan_levels`; 0 when constant."""
        cdef idx_t K = self.n_classes, n_codes = hist.shape[1], b, k, i
        cdef idx_t n_occupied = 0, n_missing = cases[s, n_codes - 1]
        cdef int found
        for b in range(n_codes - 1):
            if cases[s, b] > 0:
                self.occupied_bins[n_occupied] = b
                n_occupied += 1
                self.hist_count[b] = cases[s, b]
                for k in range(K):
                    self.hist_weight[b * K + k] = hist[s, b, k]
        for k in range(K):
            self.hist_weight[MISSING_CODE * K + k] = hist[s, n_codes - 1, k]
        found = self._scan_levels(feature, self.hist_weight, self.hist_count,
                                  self.occupied_bins, n_occupied,
                                  self.hist_weight + MISSING_CODE * K, n_missing, n_cases, best)
        for i in range(n_occupied):
            b = self.occupied_bins[i]
            self.hist_count[b] = 0
            for k in range(K):
                self.hist_weight[b * K + k] = 0.0
        for k in range(K):
            self.hist_weight[MISSING_CODE * K + k] = 0.0
        return found

    cdef int _examine_histogram(self, idx_t feature, const double[:, :, ::1] hist,
                                const int64_t[:, ::1] cases, int64_t s, idx_t n_cases,
                                SplitRecord* best):
        """`BinnedSplitter._examine_feature` on a node's histogram of one feature."""
        cdef idx_t K = self.n_classes, n_codes = hist.shape[1], b, k, code, i
        cdef idx_t n_occupied = 0, n_buckets, n_missing
        cdef idx_t* buckets = self.occupied_bins
        cdef bint drawn = False
        cdef int missing_left
        for b in range(n_codes - 1):
            if cases[s, b] > 0:
                self.occupied_bins[n_occupied] = b
                n_occupied += 1
        if 0 < self.nsplit < n_cases - 1 and self.nsplit < n_occupied - 1:
            n_buckets = self._draw_bins(n_occupied)
            buckets, drawn = self.drawn_bins, True
        else:
            n_buckets = n_occupied
        for i in range(n_occupied):
            b = self.occupied_bins[i]
            code = self.bin_target[b] if drawn else b
            self.hist_count[code] += cases[s, b]
            for k in range(K):
                self.hist_weight[code * K + k] += hist[s, b, k]
        n_missing = cases[s, n_codes - 1]
        self.hist_count[MISSING_CODE] = n_missing
        for k in range(K):
            self.hist_weight[MISSING_CODE * K + k] = hist[s, n_codes - 1, k]
        if n_occupied > 1 or (n_occupied == 1 and n_missing > 0):
            for missing_left in range(2 if n_missing > 0 else 1):
                self._scan_buckets(feature, self.hist_weight, self.hist_count, NULL, buckets,
                                   n_buckets, self.hist_weight + MISSING_CODE * K, n_missing,
                                   n_cases, missing_left, best)
        for i in range(n_occupied):
            b = self.occupied_bins[i]
            self.hist_count[b] = 0
            for k in range(K):
                self.hist_weight[b * K + k] = 0.0
            self.bin_target[b] = <uint8_t> b
        self.hist_count[MISSING_CODE] = 0
        for k in range(K):
            self.hist_weight[MISSING_CODE * K + k] = 0.0
        return n_occupied > 1 or (n_occupied == 1 and n_missing > 0)

    cdef idx_t _draw_bins(self, idx_t n_occupied) noexcept nogil:
        """`BinnedSplitter._draw_bins`: nsplit of the first n_occupied - 1
        occupied bins drawn uniformly without replacement; bin_target points
        every occupied bin at its bucket; returns nsplit + 1."""
        return draw_buckets(&self.rng_state, self.nsplit, n_occupied, self.occupied_bins,
                            self.drawn_positions, self.drawn_flags, self.bin_target,
                            self.drawn_bins)

    cdef double _bucket_threshold(self, idx_t feature, idx_t bucket) noexcept nogil:
        """The upper edge of bin `bucket` (`bucket_threshold`)."""
        return bucket_threshold(self.categorical, self.edges, feature, bucket)


def feature_order(uint64_t node_key, idx_t n_features):
    """The node's feature permutation (Fisher-Yates from the node's key)."""
    out = np.arange(n_features, dtype=np.int64)
    cdef int64_t[::1] order = out
    cdef uint64_t state = _hash(node_key, 1)
    cdef idx_t i, j
    cdef int64_t swap
    for i in range(n_features - 1):
        j = i + _random_below(&state, n_features - i)
        swap = order[i]
        order[i] = order[j]
        order[j] = swap
    return out
