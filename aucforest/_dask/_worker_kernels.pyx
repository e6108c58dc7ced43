# cython: language_level=3
"""Compiled kernels of the Dask fit's rounds, run where the rows are (`aucforest._dask`).

* `route` and `histograms`: where the rows are, move each row of each tree to
  the child of the node it was in, then add its bin code's weight to the
  (node, feature) histograms requested, as integers (exact sums, so the sum
  over partitions does not depend on their order or grouping); a
  categorical split sends rows by its level set.
* `take_rows` and `take_waiting`: the rows of the nodes finished in memory,
  grouped per finishing task.

The entries a pass reads and the lists it makes are `_entries`'.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy

import numpy as np

from aucforest._dask._payloads import Pass, TakenPart

_NOT_LISTED = (None, None)  # a pass's (live, waiting) when it lists no entries

from aucforest._criterion cimport idx_t
from aucforest._split cimport level_goes_left
from aucforest._dask._entries cimport (EntryLists, LiveEntries, WaitingRows, _Listing,
                                       _check_waiting_node, _end, _first, _list_entry,
                                       _listing, _live_entries, _row, _waiting_count,
                                       _waiting_rows)

cdef enum:
    MISSING_CODE = 255


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
