"""The Dask fit at scale (issue 43): tasks per round, what the client receives,
the finishing backlog, `grow_local`'s memory.

The session's shared LocalCluster (conftest.py's ``dask_cluster``: 2 worker
processes, 1 thread each; its scheduler runs in this process, so a scheduler
plugin sees every task the fit submits).
``LOCAL_ROWS`` is lowered so that small data grow a few levels on the workers
before their nodes are finished in memory.
"""
import tracemalloc
from functools import partial

import numpy as np
import pytest

import aucforest._dask as dask_fit
from aucforest._dask import _blocks as dask_blocks
from aucforest._dask._payloads import FitContext, Finishing, NodeSpec, TakenPart
from aucforest import AUCForestClassifier
from aucforest._base import tree_params
from dask_testing import assert_same_trees, chunked
from data_builders import dask_data

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

# the tasks of the level-wise loop (the rest run once per batch or per fit)
ROUND_KINDS = {"tables", "round", "state", "hist", "sum", "parts", "take", "local", "oobsums"}


class TaskLog(distributed.diagnostics.plugin.SchedulerPlugin):
    """Every aucforest task the scheduler receives, in order, with the size of
    its pickled spec; and the largest number of finishing tasks (``local``)
    waiting at once (submitted, not yet done)."""

    def __init__(self):
        self.keys, self.spec_bytes, self.waiting, self.most_waiting = [], {}, set(), 0

    def update_graph(self, scheduler, *, tasks, **kwargs):
        import pickle
        for key in map(str, tasks):
            if key.startswith("aucforest-") and key not in self.spec_bytes:
                self.keys.append(key)
                ts = scheduler.tasks.get(key)
                spec = None if ts is None else ts.run_spec
                self.spec_bytes[key] = len(pickle.dumps(spec, protocol=5))

    def transition(self, key, start, finish, *args, **kwargs):
        key = str(key)
        if not key.startswith("aucforest-local-"):
            return
        if finish in ("waiting", "queued", "processing", "no-worker"):
            self.waiting.add(key)
        else:
            self.waiting.discard(key)
        self.most_waiting = max(self.most_waiting, len(self.waiting))

    def rounds(self, first=0):
        """The keys of each round (from the ``first`` key on): from one round's
        tables to the next's."""
        found = []
        for key in self.keys[first:]:
            kind = key.split("-")[1]
            if kind == "tables":
                found.append([])
            if found and kind in ROUND_KINDS:
                found[-1].append(key)
        return found


@pytest.fixture
def log(dask_cluster, dask_client):
    plugin = TaskLog()
    dask_cluster.scheduler.add_plugin(plugin, name="test-task-log")
    yield plugin
    dask_cluster.scheduler.remove_plugin(name="test-task-log")


# two balanced classes, 3% of the cells NaN
two_class_data = partial(dask_data, n_classes=2, missing=0.03)


def _round_bound(partitions, workers, backlog):
    """Most tasks one round may submit (the cost model's count): the tables,
    per partition a round (no task picking a part of its result), the sums'
    reducing tasks (a first level per worker of at most REDUCE_FAN_IN
    partitions, then their partial sums), and per finishing group one take
    per worker, the finishing task and its OOB proportions, at most
    ``backlog`` x workers groups."""
    level = -(-partitions // dask_fit.REDUCE_FAN_IN) + workers  # the first level, at most
    reducers = level
    while level > 1:
        level = -(-level // dask_fit.REDUCE_FAN_IN)
        reducers += level
    return 1 + partitions + reducers + backlog * workers * (workers + 2)


@pytest.mark.parametrize("partitions", [3, 12])
def test_tasks_per_round_are_bounded_whatever_the_nodes(dask_client, log, monkeypatch, partitions):
    """Deeper trees (more nodes, more finishing groups: a group of at most 60
    rows) and the same per-round bound, read from the scheduler; each round's
    tables reach the scheduler once, in their own key, and no round task
    carries them (the specs of round and take tasks stay small whatever the
    node count)."""
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 150)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 150)  # whatever n
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_PER_TASK", 60)
    X, y = two_class_data(3000)
    sizes = [len(c) for c in np.array_split(np.arange(len(y)), partitions)]
    counts = {}
    for depth in (4, None):
        first = len(log.keys)
        forest = AUCForestClassifier(6, max_depth=depth, random_state=1).fit(
            *chunked(sizes, X, y))
        rounds = log.rounds(first)
        assert len(rounds) == forest._dask_fit_stats["rounds"]
        counts[depth] = (forest._dask_fit_stats["tree_nodes"], max(map(len, rounds)))
        bound = _round_bound(partitions, 2, dask_fit.FINISH_BACKLOG_PER_WORKER)
        assert max(map(len, rounds)) <= bound, (rounds, bound)
        for round_keys in rounds:
            kinds = [k.split("-")[1] for k in round_keys]
            assert kinds.count("tables") == 1 and kinds.count("round") == partitions
            # no task only picks a round result's histograms or taken rows
            assert "hist" not in kinds and "parts" not in kinds, kinds
            for key in round_keys:
                if key.split("-")[1] in ("round", "state", "hist", "parts", "take"):
                    assert log.spec_bytes[key] < 1024, (key, log.spec_bytes[key])
        assert forest._dask_fit_stats["tasks_per_round"] == list(map(len, rounds))
    assert counts[None][0] > 3 * counts[4][0], counts  # many more nodes, the same bound


def test_forest_is_the_same_whatever_the_task_machinery(dask_client, monkeypatch):
    """Batches of one tree, histograms of one node per round, sums of two
    inputs, finishing groups of one node and a backlog of one finishing task
    (so that nodes wait in the node ids, and the client for finishing tasks)
    give the forest of the defaults, for three chunkings."""
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 150)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 150)  # whatever n
    X, y = two_class_data(2000, seed=3)
    params = dict(n_estimators=3, random_state=5, oob_score=True)
    reference = AUCForestClassifier(**params).fit(*chunked([2000], X, y))
    assert reference._dask_fit_stats["finishing_groups"] >= 6
    monkeypatch.setattr(dask_fit, "MAX_TREES_PER_BATCH", 1)
    monkeypatch.setattr(dask_fit, "MAX_ROUND_BYTES", 1)
    monkeypatch.setattr(dask_fit, "REDUCE_FAN_IN", 2)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_PER_TASK", 1)
    monkeypatch.setattr(dask_fit, "FINISH_BACKLOG_PER_WORKER", 0)  # one task per worker
    deferred = 0
    for sizes in ([2000], [700, 600, 700], [100, 300, 250, 350, 500, 120, 380]):
        forest = AUCForestClassifier(**params).fit(*chunked(sizes, X, y))
        stats = forest._dask_fit_stats
        assert stats["rounds"] > reference._dask_fit_stats["rounds"], stats
        deferred += stats["deferred_nodes"]
        assert_same_trees(forest, reference)
        assert forest.oob_score_ == reference.oob_score_
    assert deferred > 0  # (how many wait depends on when the finishing tasks end)


@pytest.mark.parametrize("max_leaf_nodes", [None, 40])
def test_rounds_reading_only_the_rows_still_in_play_give_the_same_forest(
        dask_client, monkeypatch, max_leaf_nodes):
    """Rounds that read only the (tree, row) entries still in the batch's work
    (listed from the first round on: LIVE_SHARE 1) give the forest of rounds
    that read every entry (LIVE_SHARE 0: listed only when none is left), with
    nodes waiting in the node ids (a backlog of one finishing task per
    worker) and, under max_leaf_nodes, subtrees grown again from rows taken
    out once more (a retake reads every entry)."""
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 150)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 150)  # whatever n
    monkeypatch.setattr(dask_fit, "WHOLE_TREE_ROWS", 0)
    monkeypatch.setattr(dask_fit, "FINISH_BACKLOG_PER_WORKER", 0)
    monkeypatch.setattr(dask_fit, "SUBTREE_LEAVES_MIN", 2)
    monkeypatch.setattr(dask_fit, "SUBTREE_LEAF_SHARE", 0.5)
    X, y = two_class_data(2500, seed=4)
    params = dict(n_estimators=4, random_state=2, oob_score=True,
                  max_leaf_nodes=max_leaf_nodes)
    forests = {}
    for share in (0.0, 1.0):
        monkeypatch.setattr(dask_fit, "LIVE_SHARE", share)
        forests[share] = AUCForestClassifier(**params).fit(*chunked([900, 700, 900], X, y))
    listed, every = forests[1.0], forests[0.0]
    assert_same_trees(listed, every)
    assert listed.oob_score_ == every.oob_score_
    np.testing.assert_array_equal(listed.predict_proba(X), every.predict_proba(X))
    stats = listed._dask_fit_stats
    assert stats["deferred_nodes"] > 0 and stats["rounds"] > 4, stats
    if max_leaf_nodes is not None:
        assert stats["regrown_subtrees"] > 0 and stats["retake_rounds"] > 0, stats


@pytest.mark.parametrize("per_worker, backlog_bytes", [(2, 1 << 27), (16, 1)])
def test_finishing_tasks_waiting_are_capped(dask_client, log, monkeypatch, per_worker,
                                            backlog_bytes):
    """Rounds go before finishing; at most FINISH_BACKLOG_PER_WORKER finishing
    tasks per worker wait at once, and no more rows than FINISH_BACKLOG_BYTES
    allow (one group per worker when that is below one group), read from the
    scheduler's transitions and placements, though the fit has many more
    groups."""
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 150)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 150)  # whatever n
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_PER_TASK", 1)
    monkeypatch.setattr(dask_fit, "FINISH_BACKLOG_PER_WORKER", per_worker)
    monkeypatch.setattr(dask_fit, "FINISH_BACKLOG_BYTES", backlog_bytes)
    X, y = two_class_data(3000, seed=2)
    forest = AUCForestClassifier(6, random_state=2).fit(*chunked([1000] * 3, X, y))
    groups = forest._dask_fit_stats["finishing_groups"]
    cap = min(per_worker, max(1, backlog_bytes // (6 + dask_fit.FINISH_ROW_BYTES))) * 2
    assert groups > 3 * cap
    assert 0 < log.most_waiting <= cap, (log.most_waiting, cap)
    assert forest._dask_fit_stats["finishing_waits"] > 0


def _node_arrays(obj, found):
    """The node-array dicts (subtrees) inside a gathered value."""
    if isinstance(obj, dict):
        if "children_left" in obj and "n_node_samples" in obj:
            found.append(obj)
            return found
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        for item in obj:
            _node_arrays(item, found)
    return found


@pytest.mark.parametrize("max_leaf_nodes, whole_tree_rows", [(None, 0), (30, 0), (30, 1 << 20)])
@pytest.mark.parametrize("predict_min_samples", [50, "oob"])
def test_the_client_receives_collapsed_subtrees_only(dask_client, monkeypatch, predict_min_samples,
                                                     max_leaf_nodes, whole_tree_rows):
    """Every gather of the fit, intercepted at `Client._gather`: the subtrees
    the client receives are collapsed to the node size the forest predicts
    from (no node below it is split), and all of them together are no larger
    than the final model, which is much smaller than the grown trees. Under
    ``max_leaf_nodes`` the subtrees are cut where they were grown: the client
    reads their skeletons, never the grown subtrees; trees grown whole in
    memory (``whole_tree_rows``) are finished where they were grown."""
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 500)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 500)  # whatever n
    monkeypatch.setattr(dask_fit, "WHOLE_TREE_ROWS", whole_tree_rows)
    X, y = two_class_data(6000, seed=4)
    data = chunked([2000] * 3, X, y)
    params = dict(n_estimators=4, random_state=0, min_samples_leaf=1)
    grown = AUCForestClassifier(predict_min_samples=1, **params).fit(*data)
    gathered = []
    original = distributed.Client._gather

    async def spying(self, futures, *args, **kwargs):
        result = await original(self, futures, *args, **kwargs)
        gathered.append(result)
        return result

    monkeypatch.setattr(distributed.Client, "_gather", spying)
    forest = AUCForestClassifier(predict_min_samples=predict_min_samples,
                                 max_leaf_nodes=max_leaf_nodes, **params).fit(*data)
    assert forest._dask_fit_stats["whole_trees"] == (4 if whole_tree_rows else 0)
    monkeypatch.undo()
    size = forest.predict_min_samples_
    subtrees = _node_arrays(gathered, [])
    assert subtrees, "no subtree was gathered"
    received = 0
    for arrays in subtrees:
        n = arrays["n_node_samples"]
        split = arrays["feature"] >= 0
        assert not np.any(split & (n < size)), "a grown (uncollapsed) subtree reached the client"
        received += sum(np.asarray(a).nbytes for a in arrays.values())
    model = sum(sum(a.nbytes for a in e.tree_.node_arrays().values())
                for e in forest.estimators_)
    grown_bytes = sum(sum(a.nbytes for a in e.tree_.node_arrays().values())
                      for e in grown.estimators_)
    assert received <= 1.1 * model, (received, model)
    if size >= 20:
        assert model < 0.5 * grown_bytes, (model, grown_bytes)


def test_grow_local_memory_matches_the_cost_model():
    """`grow_local`'s own allocations (tracemalloc) beyond its inputs: the
    working copy of its largest node, at most p + 40 bytes per row, plus the
    grown subtrees, at most 80 + 8 K bytes per node (the cost model's figures)."""
    p, rows, K = 30, 40_000, 2
    rng = np.random.default_rng(0)
    node = rng.integers(0, 3, rows).astype(np.int32)
    takes = []
    for start, stop in ((0, rows // 2), (rows // 2, rows)):  # two partitions' parts
        order = np.argsort(node[start:stop], kind="stable")
        nodes, counts = np.unique(node[start:stop], return_counts=True)
        takes.append(TakenPart(
            nodes=nodes.astype(np.int32),
            node_start=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            start=start, stop=stop,
            codes=rng.integers(0, 200, size=(order.size, p), dtype=np.uint8),
            y=rng.integers(0, K, order.size).astype(np.uint8),
            weight=np.ones(order.size, np.uint8)))
    edges = np.full((p, 256), np.inf)
    edges[:, :200] = np.arange(200)
    ctx = FitContext(edges=edges, n_bins=np.full(p, 201, np.intp), n_classes=K,
                     weight_scale=1.0,
                     params=dict(tree_params(AUCForestClassifier()), max_bins=255))
    spec = [NodeSpec(d, 11 + d, 2, 0.0, None, None, 0.0) for d in range(3)]
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    out = dask_blocks.grow_local([[take] for take in takes], spec, ctx,
                                  Finishing(np.array([1], np.int32), None, True), None)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    nodes = sum(a["children_left"].shape[0] for a, _ in out.subtrees.values())
    largest = np.bincount(node).max()
    assert nodes > rows / 10  # grown to small leaves: the subtrees weigh
    assert peak <= largest * (p + 40) + nodes * (80 + 8 * K), (peak, largest, nodes)
