"""The Dask fit under the conditions it is for (issue 43 item 6): a worker lost
mid-fit, nothing unbounded reaching the client, 1 to 3 workers, many rounds,
batches and finishing groups, several parquet files. Each test compares the
forest, to the bit, with a fit on one partition (or with the defaults).

Real LocalClusters of worker processes (1 thread each): the session's shared
one, and conftest.py's dedicated three-worker cluster for the tests that kill
one of its workers or compare three workers with fewer. ``LOCAL_ROWS`` is
lowered so that these small data sets grow level by level for a few levels
before their nodes are finished in memory: both phases run.
"""
import os
import signal
import threading
import time

import numpy as np
import pytest
from dask.sizeof import sizeof

import aucforest._dask as dask_fit
from aucforest._dask import _fit as dask_driver
from aucforest import AUCForestClassifier
from dask_testing import assert_same_trees, chunked, local_cluster
from data_builders import dask_data

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


def _assert_same_forest(a, b, X):
    assert_same_trees(a, b)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_one_of_three_workers_killed_mid_fit_gives_the_same_forest(dask_three_worker_client,
                                                                   small_nodes):
    """SIGKILL one of three worker processes once the level-wise rounds have
    started: dask recomputes its partitions and lost tasks elsewhere (the
    nanny starts a new worker), and the forest is the uninterrupted one, to
    the bit. Any error fails the test."""
    client = dask_three_worker_client
    X, y = dask_data(n=4000, seed=5)
    params = dict(n_estimators=6, random_state=3, oob_score=True)
    chunks = chunked([700, 600, 700, 500, 800, 700], X, y)
    reference = AUCForestClassifier(**params).fit(*chunks)
    pids = client.run(os.getpid)
    assert len(pids) == 3
    victim = sorted(pids)[1]
    outcome = {}

    def fit():
        try:
            outcome["forest"] = AUCForestClassifier(**params).fit(*chunks)
        except BaseException as error:  # reported below: any error fails the test
            outcome["error"] = error

    fitting = threading.Thread(target=fit)
    fitting.start()
    deadline = time.time() + 60
    while time.time() < deadline and fitting.is_alive():
        keys = client.run_on_scheduler(
            lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks])
        if sum("aucforest-round" in k for k in keys) >= 6:  # a round on every partition
            break
        time.sleep(0.005)
    assert fitting.is_alive(), "the fit ended before a worker could be killed"
    os.kill(pids[victim], signal.SIGKILL)
    fitting.join(timeout=600)
    assert not fitting.is_alive(), "the fit hung after a worker was lost"
    assert "error" not in outcome, repr(outcome.get("error"))
    assert pids[victim] not in client.run(os.getpid).values(), "the worker was not killed"
    _assert_same_forest(outcome["forest"], reference, X)
    assert outcome["forest"].oob_score_ == reference.oob_score_


def _record_gathers(monkeypatch):
    """Wrap ``Client._gather``, which every result reaching this client goes
    through (``Client.gather``, ``Future.result``, ``compute``): the size
    (`dask.sizeof`) of each result, by key."""
    received = []
    original = distributed.Client._gather

    async def recording(self, futures, *args, **kwargs):
        result = await original(self, futures, *args, **kwargs)
        if isinstance(futures, (list, tuple)):
            received.extend((str(f.key), sizeof(r)) for f, r in zip(futures, result))
        else:
            received.append((str(getattr(futures, "key", futures)), sizeof(result)))
        return result

    monkeypatch.setattr(distributed.Client, "_gather", recording)
    return received


def test_nothing_but_bounded_samples_reaches_the_client(dask_client, monkeypatch):
    """Each result the client receives is at most the largest bounded object
    of the fit, whatever n: the bin-edge sample (EDGE_SAMPLE_ROWS rows x p
    float32), the OOB choice rows (OOB_CHOICE_MAX_CASES rows: codes, global
    index, two classes), one round's histograms (MAX_ROUND_BYTES, or one
    node's max_features slots of (K + 1) x codes int64), one finishing task's
    subtrees (at most 2 LOCAL_ROWS_PER_TASK / min_samples_leaf nodes). A
    partition here is 15,000 rows: its y alone (120 kB) is 4 times that bound."""
    n, p, K, min_leaf = 60_000, 5, 3, 20
    monkeypatch.setattr(dask_fit, "EDGE_SAMPLE_ROWS", 500)
    monkeypatch.setattr(dask_fit, "OOB_CHOICE_MAX_CASES", 300)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 2_000)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 2_000)  # whatever n
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_PER_TASK", 1_000)
    monkeypatch.setattr(dask_fit, "MAX_ROUND_BYTES", 8_192)
    X, y = dask_data(n=n, n_features=p, seed=4)
    chunks = chunked([15_000] * 4, X, y)
    slot = 256 * (K + 1) * 8
    node_bytes = 8 * K + 8 * 8  # value row, 8 other node columns of 8 bytes (or less)
    bound = max(int(1.3 * 500) * p * 4,                 # the edge sample, all partitions
                int(1.3 * 300) * (p + 8 + 8 + 4),       # the OOB rows
                max(8_192, 1 * slot),                    # histograms (max_features = 1)
                2 * 2_000 // min_leaf * node_bytes)      # subtrees of one finishing task
    bound += 4_096  # dict keys, small scalars
    received = _record_gathers(monkeypatch)
    # the wrapper sees what a direct compute brings: one partition's y
    assert y.nbytes // 4 > 4 * bound
    chunks[1].blocks[0].compute()
    assert received and received[-1][1] >= y.nbytes // 4
    received.clear()
    forest = AUCForestClassifier(n_estimators=3, oob_score=True, random_state=0,
                                 min_samples_leaf=min_leaf, max_features=1).fit(*chunks)
    assert forest._dask_fit_stats["rounds"] >= 4
    keys = {key.split("-")[1] for key, _ in received}
    # histograms, subtrees (collapsed on the workers once the node size is chosen), OOB rows
    assert {"collapse", "sum", "oobrows"} <= keys, keys
    largest = max(received, key=lambda entry: entry[1])
    assert largest[1] <= bound, (largest, bound)


def test_chunkings_on_one_two_and_three_workers_give_the_same_forest(dask_three_worker_client,
                                                                     small_nodes):
    X, y = dask_data(n=1800, seed=2)
    params = dict(n_estimators=4, random_state=9, oob_score=True, replacement=True)
    forests = [AUCForestClassifier(**params).fit(*chunked([300] * 6, X, y))]
    for n_workers, sizes in ((1, [1800]), (2, [1000, 800]), (2, [100, 500, 200, 1000])):
        with local_cluster(n_workers) as cluster, distributed.Client(cluster) as other:
            assert len(other.scheduler_info()["workers"]) == n_workers
            forests.append(AUCForestClassifier(**params).fit(*chunked(sizes, X, y)))
    for other in forests[1:]:
        _assert_same_forest(forests[0], other, X)
        assert other.oob_score_ == forests[0].oob_score_


def test_tiny_batches_groups_rounds_and_fan_in_give_the_same_forest(dask_client, small_nodes,
                                                                    monkeypatch):
    """One tree per batch (BATCH_STATE_BYTES), one node's histograms per round
    (MAX_ROUND_BYTES), finishing tasks of one node at a time, sums of two
    partial sums per task: many rounds, batches overlapping their finishing,
    several finishing groups per round, deep reduction trees; the forest of
    the default knobs."""
    X, y = dask_data(n=2000, seed=7)
    params = dict(n_estimators=4, random_state=4, oob_score=True, max_features=2)
    chunks = chunked([300, 400, 300, 500, 500], X, y)
    reference = AUCForestClassifier(**params).fit(*chunks)
    groups = []
    grouping = dask_driver._Fit._groups

    def counting(self, local):
        found = grouping(self, local)
        groups.append(len(found))
        return found

    monkeypatch.setattr(dask_driver._Fit, "_groups", counting)
    for name, value in (("BATCH_STATE_BYTES", 1), ("MAX_TREES_PER_BATCH", 1),
                        ("MAX_ROUND_BYTES", 1), ("REDUCE_FAN_IN", 2),
                        ("LOCAL_ROWS_PER_TASK", 1)):
        monkeypatch.setattr(dask_fit, name, value)
    tiny = AUCForestClassifier(**params).fit(*chunks)
    assert tiny._dask_fit_stats["rounds"] >= 3 * reference._dask_fit_stats["rounds"]
    assert max(groups) >= 2, groups
    _assert_same_forest(tiny, reference, X)
    assert tiny.oob_score_ == reference.oob_score_


def test_several_parquet_files_fit_as_the_concatenated_frame(dask_client, small_nodes,
                                                             tmp_path):
    """dd.read_parquet over files of unequal sizes (a nullable Int64 column with
    missing values among them): the forest of the concatenated frame in one
    partition, and lazy predictions equal to the in-memory ones."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    X, y = dask_data(n=1700, n_features=5, seed=8)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    frame["count"] = pd.array(np.round(np.nan_to_num(X[:, 0], nan=0) * 3).astype(int),
                              dtype="Int64")
    frame.loc[frame.index % 17 == 0, "count"] = pd.NA
    frame["y"] = y
    start = 0
    for i, size in enumerate([200, 650, 150, 400, 300]):
        frame.iloc[start:start + size].to_parquet(tmp_path / f"part{i:02d}.parquet")
        start += size
    train = dd.read_parquet(str(tmp_path))
    assert train.npartitions > 1
    params = dict(n_estimators=4, random_state=6, oob_score=True)
    forest = AUCForestClassifier(**params).fit(train.drop(columns="y"), train["y"])
    numbers = frame.drop(columns="y").astype("float64").to_numpy(na_value=np.nan)
    whole = AUCForestClassifier(**params).fit(
        da.from_array(numbers.astype(np.float32), chunks=(1700, 6)),
        da.from_array(y, chunks=1700))
    _assert_same_forest(forest, whole, numbers)
    assert forest.oob_score_ == whole.oob_score_
    np.testing.assert_array_equal(forest.predict_proba(train.drop(columns="y")).compute(),
                                  whole.predict_proba(numbers))
