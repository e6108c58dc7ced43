"""The compiled kernels of the Dask fit's rounds (`aucforest._dask._worker_kernels`,
`aucforest._dask._entries`) against naive loops over the same arrays: the
histograms a partition adds, the routing of rows to children and the rows
taken out for in-memory finishing."""
import numpy as np
import pytest

from aucforest._binning import MISSING_CODE
from aucforest._dask._blocks import _node_rows, take_group
from aucforest._dask._payloads import RoundResult
from aucforest._dask._entries import sort_entries
from aucforest._dask._worker_kernels import histograms, route, take_rows, take_waiting


def _state(seed, trees=3, rows=400, features=5, nodes=12):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 6, (rows, features)).astype(np.uint8)
    codes[rng.random(codes.shape) < 0.1] = MISSING_CODE
    counts = rng.poisson(0.8, (trees, rows)).astype(np.uint8)
    per_tree = nodes // trees  # each node id in one tree, as node ids are
    ids = rng.integers(0, per_tree, (trees, rows)) + per_tree * np.arange(trees)[:, None]
    ids = np.where(rng.random((trees, rows)) < 0.1, -1, ids).astype(np.int32)
    y = rng.integers(0, 3, rows).astype(np.int32)
    return rng, codes, counts, ids, y


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_histograms_are_the_naive_sums(seed, weighted, narrow):
    rng, codes, counts, ids, y = _state(seed)
    n_ids, n_codes, K = 14, 8, 3
    weights = rng.integers(0, 1000, codes.shape[0]).astype(np.int64) if weighted else None
    lengths = rng.integers(0, 3, n_ids)  # some nodes ask nothing
    first_slot = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    slot_feature = rng.integers(0, codes.shape[1], first_slot[-1]).astype(np.int32)
    hist = histograms(codes, ids, counts, weights, y, first_slot, slot_feature, n_codes, K,
                      narrow=narrow).hist
    assert hist.dtype == (np.int32 if narrow else np.int64)
    expected = np.zeros((first_slot[-1], n_codes, K + 1), dtype=np.int64)
    for t in range(ids.shape[0]):
        for i in range(ids.shape[1]):
            d = ids[t, i]
            w = int(counts[t, i]) * (1 if weights is None else int(weights[i]))
            if d < 0 or counts[t, i] == 0 or w == 0:
                continue
            for s in range(first_slot[d], first_slot[d + 1]):
                code = codes[i, slot_feature[s]]
                code = n_codes - 1 if code == MISSING_CODE else code
                expected[s, code, y[i]] += w
                expected[s, code, K] += 1
    np.testing.assert_array_equal(hist, expected)


@pytest.mark.parametrize("seed", range(3))
def test_route_moves_rows_as_the_naive_loop(seed):
    rng, codes, counts, ids, y = _state(seed)
    n_ids = 12
    feature = rng.integers(-2, codes.shape[1], n_ids).astype(np.int32)
    threshold = rng.integers(0, 6, n_ids).astype(np.int32)
    missing_left = rng.integers(0, 2, n_ids).astype(np.uint8)
    left = (100 + 2 * np.arange(n_ids)).astype(np.int32)
    right = (left + 1).astype(np.int32)
    routed = route(codes, ids, feature, threshold, missing_left, left, right).ids
    expected = ids.copy()
    for t in range(ids.shape[0]):
        for i in range(ids.shape[1]):
            d = ids[t, i]
            if d < 0 or feature[d] == -1:
                continue
            if feature[d] == -2:
                expected[t, i] = -1
                continue
            code = codes[i, feature[d]]
            goes_left = missing_left[d] if code == MISSING_CODE else code <= threshold[d]
            expected[t, i] = left[d] if goes_left else right[d]
    np.testing.assert_array_equal(routed, expected)
    assert routed is not ids


def _naive_take(ids, group_of, g, trees, codes, counts, weights, y, start):
    """Group g's rows as (node, global row, codes, class, weight), sorted by (node, row)."""
    found = sorted((int(ids[t, i]), start + i, tuple(codes[i]), int(y[i]),
                    int(counts[t, i]) * (1 if weights is None else int(weights[i])))
                   for t in range(ids.shape[0]) for i in range(ids.shape[1])
                   if 0 <= ids[t, i] < group_of.shape[0] and group_of[ids[t, i]] == g
                   and (trees is None or trees[t]))
    return found


def _as_rows(part, start, stop):
    """A part's rows as (node, codes, class, weight), in its order (the naive
    take's, less the global rows: the part's order and range stand for them)."""
    assert (part.start, part.stop) == (start, stop)
    nodes, node_start = part.nodes, part.node_start
    assert nodes.dtype == np.int32 and node_start.dtype == np.int64
    assert np.all(np.diff(nodes) > 0) and np.all(np.diff(node_start) > 0)
    assert node_start[0] == 0 and node_start[-1] == part.y.shape[0]
    node = np.repeat(nodes, np.diff(node_start))
    return [(int(d), tuple(c), int(k), int(w)) for d, c, k, w in
            zip(node, part.codes, part.y, part.weight)]


def _less_rows(naive):
    return [(d, c, k, w) for d, _, c, k, w in naive]


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_histograms_of_unit_weights_without_cases_are_the_class_columns(seed, narrow):
    """Multiplicities 0 or 1 and no weights: the class weights are the cases,
    and the histograms without the case column are those with it, less it."""
    rng, codes, counts, ids, y = _state(seed)
    counts = np.minimum(counts, 1)
    n_ids, n_codes, K = 14, 8, 3
    first_slot = np.concatenate([[0], np.cumsum(rng.integers(0, 3, n_ids))]).astype(np.int64)
    slot_feature = rng.integers(0, codes.shape[1], first_slot[-1]).astype(np.int32)
    full = histograms(codes, ids, counts, None, y, first_slot, slot_feature, n_codes, K).hist
    bare = histograms(codes, ids, counts, None, y, first_slot, slot_feature, n_codes, K,
                      narrow=narrow, with_cases=False).hist
    assert bare.shape == full.shape[:2] + (K,)
    np.testing.assert_array_equal(bare, full[:, :, :K])
    np.testing.assert_array_equal(bare.sum(axis=2), full[:, :, K])
    assert full[:, :, K].sum() > 0


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_take_rows_gives_each_group_its_rows_sorted_and_leaves_the_ids(seed, weighted):
    rng, codes, counts, ids, y = _state(seed)
    n_groups = 3
    group_of = rng.integers(-1, n_groups, 10).astype(np.int32)  # ids 10, 11: beyond the table
    weights = rng.integers(0, 1000, codes.shape[0]).astype(np.int64) if weighted else None
    before = ids.copy()
    for trees in (None, np.array([1, 0, 1], dtype=np.uint8)):
        taken = take_rows(ids, group_of, n_groups, trees, codes, counts, weights, y, 1000, True)
        np.testing.assert_array_equal(ids, before)  # read only: the rows can be taken again
        assert len(taken) == n_groups
        for g, part in enumerate(taken):
            assert part.y.dtype == np.uint8
            assert part.weight.dtype == (np.int64 if weighted else np.uint8)
            assert _as_rows(part, 1000, 1000 + ids.shape[1]) == _less_rows(
                _naive_take(ids, group_of, g, trees, codes, counts, weights, y, 1000))


def test_take_rows_refuses_a_group_beyond_the_groups():
    rng, codes, counts, ids, y = _state(0)
    group_of = np.array([0, 3], dtype=np.int32)
    with pytest.raises(ValueError, match="beyond n_groups"):
        take_rows(ids, group_of, 2, None, codes, counts, None, y, 0, True)


def _expected_node_rows(naive, d):
    return [(c, k, w) for node, _, c, k, w in naive if node == d]


def _node_rows_as_list(codes, y, w):
    assert codes.flags.f_contiguous and y.dtype == np.intp and w.dtype == np.float64
    return [(tuple(int(v) for v in c), int(k), int(x)) for c, k, x in zip(codes, y, w)]


@pytest.mark.parametrize("seed", range(3))
def test_a_nodes_rows_from_the_workers_takes_are_in_global_row_order(seed):
    """Each worker's `take_group` (its partitions' parts of the group, read
    from their round results, the partitions given in any order) and
    `_node_rows` on all workers' takes: each node's rows of the group in
    global row order, as a naive take lists them."""
    rng, codes, counts, ids, y = _state(seed, rows=600)
    group_of = rng.integers(-1, 2, 12).astype(np.int32)
    bounds = [0, 150, 151, 380, 470, 600]  # one partition of one row
    parts = [take_rows(np.ascontiguousarray(ids[:, a:b]), group_of, 2, None, codes[a:b],
                       np.ascontiguousarray(counts[:, a:b]), None, y[a:b], a, False)
             for a, b in zip(bounds, bounds[1:])]
    workers = np.array_split(rng.permutation(len(parts)), 2)  # each holds some partitions
    for g in range(2):
        takes = [take_group(g, *[RoundResult(None, None, parts[i]) for i in held])
                 for held in workers]
        assert all(part.y.shape[0] for take in takes for part in take)
        naive = _naive_take(ids, group_of, g, None, codes, counts, None, y, 0)
        assert sum(part.y.shape[0] for take in takes for part in take) == len(naive)
        nodes = np.flatnonzero(group_of == g)
        assert sum(len(_expected_node_rows(naive, d)) for d in nodes) > 0
        for d in nodes:
            if not _expected_node_rows(naive, d):
                continue
            found = _node_rows([part for take in takes for part in take], d)
            assert _node_rows_as_list(*found) == _expected_node_rows(naive, d)


def test_node_rows_refuses_parts_of_overlapping_row_ranges():
    """Two parts of one partition's rows (not what a round takes: one part
    per partition and group): their order by global row is unknown, so
    `_node_rows` refuses them rather than guess."""
    rng, codes, counts, ids, y = _state(0, rows=300)
    group_of = np.zeros(12, dtype=np.int32)
    whole = take_rows(ids, group_of, 1, None, codes, counts, None, y, 0, True)[0]
    d = int(whole.nodes[0])
    with pytest.raises(ValueError, match="overlapping row ranges"):
        _node_rows([whole, whole._replace()], d)
    later = whole._replace(start=300, stop=600)  # the same rows as another partition's
    assert _node_rows([later, whole], d)[0].shape[0] == 2 * whole.node_start[1]


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("sets", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_routing_and_histograms_in_one_pass_equal_the_two_passes(seed, sets, narrow):
    rng, codes, counts, ids, y = _state(seed)
    n_ids = 12
    routes = [rng.integers(-2, codes.shape[1], n_ids).astype(np.int32),
              rng.integers(0, 6, n_ids).astype(np.int32),
              rng.integers(0, 2, n_ids).astype(np.uint8),
              (12 + 2 * np.arange(n_ids)).astype(np.int32),
              (13 + 2 * np.arange(n_ids)).astype(np.int32)]
    if sets:  # categorical splits: a level set per split, drawn at random
        routes += [np.where(rng.random(n_ids) < 0.5, np.arange(n_ids) % 3, -1).astype(np.int32),
                   rng.integers(0, 2**63, (3, 4), dtype=np.uint64)]
    lengths = rng.integers(0, 3, 12 + 2 * n_ids)
    first_slot = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    slot_feature = rng.integers(0, codes.shape[1], first_slot[-1]).astype(np.int32)
    weights = rng.integers(1, 50, codes.shape[0]).astype(np.int64)
    hist, routed, _, _ = histograms(codes, ids, counts, weights, y, first_slot, slot_feature, 8, 3,
                              tuple(routes), narrow)
    expected_ids = route(codes, ids, *routes).ids
    np.testing.assert_array_equal(routed, expected_ids)
    np.testing.assert_array_equal(
        hist, histograms(codes, expected_ids, counts, weights, y, first_slot, slot_feature, 8, 3).hist)


def _random_routes(rng, n_features, n_ids):
    """Routing tables of n_ids nodes: kept, dropped or split at random, node d's
    children 12 + 2d and 13 + 2d."""
    return (rng.integers(-2, n_features, n_ids).astype(np.int32),
            rng.integers(0, 6, n_ids).astype(np.int32),
            rng.integers(0, 2, n_ids).astype(np.uint8),
            (12 + 2 * np.arange(n_ids)).astype(np.int32),
            (13 + 2 * np.arange(n_ids)).astype(np.int32))


def _naive_live(ids, keep, among=None):
    """Per tree, the ascending rows i of ``among`` (None: all) whose ids[t, i]
    = d >= 0 has keep[d] == 1 (ids beyond keep kept)."""
    return [[i for i in range(ids.shape[1])
             if (among is None or i in among[t]) and ids[t, i] >= 0
             and (ids[t, i] >= keep.shape[0] or keep[ids[t, i]] == 1)]
            for t in range(ids.shape[0])]


def _naive_waiting(ids, keep, among=None, before=None):
    """{node: (tree, ascending rows)} of the nodes d with keep[d] == 2: their
    rows listed ``before`` ({node: (tree, rows)}) if any, else those of
    ``among`` (None: all)."""
    before = before or {}
    found = {d: before[d] for d in before if keep[d] == 2}
    for t in range(ids.shape[0]):
        for i in range(ids.shape[1]):
            d = ids[t, i]
            if ((among is None or i in among[t]) and 0 <= d < keep.shape[0]
                    and keep[d] == 2 and d not in before):
                found.setdefault(int(d), (t, []))[1].append(i)
    return found


def _as_waiting(waiting, n_nodes):
    rows, node_start, node_tree = waiting
    assert rows.dtype == np.int32 and node_start.dtype == np.int64
    assert node_start.shape == (n_nodes + 1,) and node_tree.shape == (n_nodes,)
    return {d: (int(node_tree[d]), rows[node_start[d]:node_start[d + 1]].tolist())
            for d in range(n_nodes) if node_start[d + 1] > node_start[d]}


def _as_lists(live):
    rows, starts = live
    assert rows.dtype == np.int32 and starts.dtype == np.int64
    return [rows[starts[t]:starts[t + 1]].tolist() for t in range(starts.shape[0] - 1)]


def _live_subset(rng, ids, share):
    """A live list of a random share of each tree's rows (some trees none)."""
    chosen = [np.flatnonzero(rng.random(ids.shape[1]) < share * (t % 3 != 1))
              for t in range(ids.shape[0])]
    starts = np.concatenate([[0], np.cumsum([c.shape[0] for c in chosen])]).astype(np.int64)
    return np.concatenate(chosen).astype(np.int32), starts


@pytest.mark.parametrize("seed", range(3))
def test_sort_entries_lists_open_rows_per_tree_and_waiting_rows_per_node(seed):
    rng, codes, counts, ids, y = _state(seed)
    keep = rng.integers(0, 3, 10).astype(np.uint8)  # ids 10, 11: beyond the table, open
    live, waiting = sort_entries(ids, keep)
    assert _as_lists(live) == _naive_live(ids, keep)
    first = _naive_waiting(ids, keep)
    assert first and _as_waiting(waiting, 10) == first
    # a later round: waiting nodes keep the rows listed (not listed again), those
    # no longer waiting are dropped, new waiting nodes are listed from the live rows
    again = np.where(rng.random(10) < 0.5, keep, rng.integers(0, 3, 10)).astype(np.uint8)
    among = _live_subset(rng, ids, 0.6)
    live2, waiting2 = sort_entries(ids, again, among, waiting)
    assert _as_lists(live2) == _naive_live(ids, again, _as_lists(among))
    assert _as_waiting(waiting2, 10) == _naive_waiting(ids, again, _as_lists(among), first)
    # more than max_share of the entries open: live None (every entry read)
    listed = sum(map(len, _naive_live(ids, keep)))
    assert sort_entries(ids, keep, max_share=(listed - 0.5) / ids.size)[0] is None
    assert _as_lists(sort_entries(ids, keep, max_share=(listed + 0.5) / ids.size)[0]) == \
        _naive_live(ids, keep)
    empty, none_waiting = sort_entries(ids, np.zeros(12, np.uint8))
    assert _as_lists(empty) == [[]] * ids.shape[0]
    assert _as_waiting(none_waiting, 12) == {}


@pytest.mark.parametrize("request_histograms", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_entries_listed_in_the_routing_pass_equal_the_naive_lists(seed, request_histograms):
    """`route` and `histograms` given ``keep`` list the entries they read, after
    routing, in the same pass: the naive lists of the routed ids, joined to
    the waiting lists of the rounds before, with the same ids and histograms
    as without listing."""
    rng, codes, counts, ids, y = _state(seed)
    n_ids = 12
    routes = _random_routes(rng, codes.shape[1], n_ids)
    keep = rng.integers(0, 3, 12 + 2 * n_ids).astype(np.uint8)
    _, before = sort_entries(ids, rng.integers(0, 3, 12).astype(np.uint8))
    among = _live_subset(rng, ids, 0.7)
    lengths = rng.integers(0, 3, 12 + 2 * n_ids)
    first_slot = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    slot_feature = rng.integers(0, codes.shape[1], first_slot[-1]).astype(np.int32)
    for live in (None, among):
        routed = route(codes, ids, *routes, live=live).ids
        listed = (_naive_live(routed, keep, None if live is None else _as_lists(live)),
                  _naive_waiting(routed, keep, None if live is None else _as_lists(live),
                                 _as_waiting(before, 12)))
        if request_histograms:
            hist, ids_out, live_out, waiting_out = histograms(
                codes, ids, counts, None, y, first_slot, slot_feature, 8, 3, routes,
                live=live, keep=keep, waiting=before)
            np.testing.assert_array_equal(hist, histograms(
                codes, routed, counts, None, y, first_slot, slot_feature, 8, 3, live=live).hist)
            # without routes: listed as the ids are
            _, _, unrouted_live, unrouted_waiting = histograms(
                codes, ids, counts, None, y, first_slot, slot_feature, 8, 3, live=live,
                keep=keep, waiting=before)
            assert _as_lists(unrouted_live) == _naive_live(
                ids, keep, None if live is None else _as_lists(live))
            assert _as_waiting(unrouted_waiting, keep.shape[0]) == _naive_waiting(
                ids, keep, None if live is None else _as_lists(live), _as_waiting(before, 12))
        else:
            _, ids_out, live_out, waiting_out = route(codes, ids, *routes, live=live,
                                                      keep=keep, waiting=before)
        np.testing.assert_array_equal(ids_out, routed)
        assert _as_lists(live_out) == listed[0]
        assert _as_waiting(waiting_out, keep.shape[0]) == listed[1]
    # more than max_share of the entries open: live None
    n_open = sum(map(len, _naive_live(route(codes, ids, *routes).ids, keep)))
    assert route(codes, ids, *routes, keep=keep, max_share=(n_open - 0.5) / ids.size).live is None


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_taking_waiting_rows_out_equals_taking_them_from_the_ids(seed, weighted):
    """take_waiting reads the waiting lists only and returns what take_rows
    finds scanning every entry for the same nodes."""
    rng, codes, counts, ids, y = _state(seed)
    weights = rng.integers(1, 50, codes.shape[0]).astype(np.int64) if weighted else None
    keep = np.array([2, 2, 0, 2, 1, 2, 2, 2, 0, 2], dtype=np.uint8)
    _, waiting = sort_entries(ids, keep)
    group_of = np.where(keep == 2, rng.integers(-1, 3, 10), -1).astype(np.int32)
    taken = take_waiting(waiting, group_of, 3, codes, counts, weights, y, 50, True)
    assert [part.y.shape[0] for part in taken] == \
        [part.y.shape[0] for part in take_rows(ids, group_of, 3, None, codes, counts,
                                                  weights, y, 50, True)]
    for g, part in enumerate(taken):
        assert _as_rows(part, 50, 50 + ids.shape[1]) == _less_rows(
            _naive_take(ids, group_of, g, None, codes, counts, weights, y, 50))
    # a shorter table (nodes made since): the nodes beyond have nothing waiting
    short = take_waiting(waiting, group_of[:6], 3, codes, counts, weights, y, 50, False)
    for g, part in enumerate(short):
        assert part.y.dtype == np.int32
        assert _as_rows(part, 50, 50 + ids.shape[1]) == _less_rows(
            _naive_take(ids, group_of[:6], g, None, codes, counts, weights, y, 50))


@pytest.mark.parametrize("rows, node_start, node_tree, match", [
    ([0, 5], [0, 1], [0], "one start per node"),
    ([0, 5, 6], [0, 3, 2, 3], [0, 0, 0], "must not decrease"),
    ([5, 0], [0, 2, 2], [0, 0], "ascending"),
    ([0, 400], [0, 1, 2], [0, 1], "row indices"),
    ([0, 1], [0, 2, 2], [3, -1], "tree indices"),
])
def test_malformed_waiting_lists_are_refused(rows, node_start, node_tree, match):
    rng, codes, counts, ids, y = _state(0)
    waiting = (np.array(rows, dtype=np.int32), np.array(node_start, dtype=np.int64),
               np.array(node_tree, dtype=np.int32))
    if "ascending" not in match and "row indices" not in match:  # rows: checked when read
        with pytest.raises(ValueError, match=match):
            sort_entries(ids, np.full(12, 2, np.uint8), None, waiting)
    with pytest.raises(ValueError, match=match):
        take_waiting(waiting, np.zeros(len(node_tree), np.int32), 1, codes, counts, None, y,
                     0, True)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_passes_over_live_entries_equal_full_passes_with_only_those_entries(seed, weighted):
    """route, histograms (routing or not) and take_rows over a live list: the
    full passes over the ids with every entry not listed out of the trees
    (-1), the entries not listed keeping their ids."""
    rng, codes, counts, ids, y = _state(seed)
    live = _live_subset(rng, ids, 0.4)
    listed = np.zeros(ids.shape, dtype=bool)
    for t, rows in enumerate(_as_lists(live)):
        listed[t, rows] = True
    only = np.where(listed, ids, -1).astype(np.int32)
    n_ids = 12
    routes = _random_routes(rng, codes.shape[1], n_ids)
    routed = route(codes, ids, *routes, live=live).ids
    np.testing.assert_array_equal(routed, np.where(listed, route(codes, only, *routes).ids, ids))
    weights = rng.integers(1, 50, codes.shape[0]).astype(np.int64) if weighted else None
    first_slot = np.concatenate([[0], np.cumsum(rng.integers(0, 3, 12 + 2 * n_ids))]
                                ).astype(np.int64)
    slot_feature = rng.integers(0, codes.shape[1], first_slot[-1]).astype(np.int32)
    args = (counts, weights, y, first_slot, slot_feature, 8, 3)
    np.testing.assert_array_equal(histograms(codes, ids, *args, live=live).hist,
                                  histograms(codes, only, *args).hist)
    hist, moved, _, _ = histograms(codes, ids, *args, routes=routes, live=live)
    np.testing.assert_array_equal(moved, routed)
    np.testing.assert_array_equal(hist, histograms(codes, route(codes, only, *routes).ids,
                                                   *args).hist)
    group_of = rng.integers(-1, 3, 10).astype(np.int32)
    for trees in (None, np.array([1, 0, 1], dtype=np.uint8)):
        taken = take_rows(ids, group_of, 3, trees, codes, counts, weights, y, 50, True, live)
        for g, part in enumerate(taken):
            assert _as_rows(part, 50, 50 + ids.shape[1]) == _less_rows(
                _naive_take(only, group_of, g, trees, codes, counts, weights, y, 50))


@pytest.mark.parametrize("rows, starts, match", [
    ([0, 5], [0, 1, 2], "T \\+ 1 starts"),
    ([0, 5], [0, 2, 1, 2], "must not decrease"),
    ([5, 0], [0, 2, 2, 2], "ascending"),
    ([0, 400], [0, 1, 2, 2], "row indices"),
    ([-1], [0, 1, 1, 1], "row indices"),
])
def test_a_malformed_live_list_is_refused(rows, starts, match):
    rng, codes, counts, ids, y = _state(0)
    live = (np.array(rows, dtype=np.int32), np.array(starts, dtype=np.int64))
    with pytest.raises(ValueError, match=match):
        route(codes, ids, *[np.zeros(1, np.int32)] * 2, np.zeros(1, np.uint8),
              *[np.zeros(1, np.int32)] * 2, live=live)
    with pytest.raises(ValueError, match=match):
        sort_entries(ids, np.ones(12, np.uint8), live)


@pytest.mark.parametrize("seed", range(3))
def test_encoded_partition_codes_are_the_edge_counts(seed):
    """`encode_block`'s codes (a block of rows at a time, C order) against a
    naive search: the number of a feature's edges below the value, the
    missing code for NaN, the level itself for a categorical feature."""
    from aucforest._binned import padded_edges
    from aucforest._dask._blocks import encode_block
    from aucforest._dask._payloads import FitContext

    rng = np.random.default_rng(seed)
    n, p = 1003, 7  # rows not a multiple of the kernel's lanes
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    categorical = np.zeros(p, dtype=bool)
    categorical[2] = True
    X[:, 2] = np.where(np.isnan(X[:, 2]), np.nan, rng.integers(0, 9, n))
    n_bins = rng.integers(1, 255, p)  # a feature may have no edge
    edges = np.full((p, 256), np.inf)
    for f in range(p):
        edges[f, :n_bins[f] - 1] = np.sort(rng.normal(size=n_bins[f] - 1))
    # the search table the fit makes of the edges once (`padded_edges`)
    padded = np.stack([padded_edges(edges[f, :n_bins[f] - 1]) for f in range(p)])
    ctx = FitContext(edges=edges, n_bins=n_bins, n_classes=2, weight_scale=1.0, params={},
                     padded=padded, is_categorical=categorical, classes=np.array([0, 1]))
    codes = encode_block(X, rng.integers(0, 2, n), None, 0, ctx).codes
    assert codes.shape == (n, p) and codes.flags.c_contiguous
    for f in range(p):
        if categorical[f]:
            expected = np.where(np.isnan(X[:, f]), MISSING_CODE, np.nan_to_num(X[:, f]))
        else:
            expected = np.where(np.isnan(X[:, f]), MISSING_CODE,
                                np.searchsorted(edges[f, :n_bins[f] - 1].astype(np.float32),
                                                X[:, f], side="left"))
        np.testing.assert_array_equal(codes[:, f], expected.astype(np.uint8))
