"""Consecutive small partitions binned together as one block (`_prepare.partition_groups`):
fewer tasks per round, the same forest as on a few large partitions.

A real LocalCluster (the session's, 2 worker processes); ``LOCAL_ROWS`` lowered
(`small_nodes`) so that levels grow on the workers over the blocks.
"""
import numpy as np
import pytest

from aucforest import AUCForestClassifier
from aucforest._dask._prepare import block_groups
from dask_testing import assert_same_trees, chunked
from data_builders import dask_data

distributed = pytest.importorskip("distributed")


def test_block_groups_cover_the_partitions_in_order_within_the_bound():
    """Every partition in exactly one group, in row order; a group of several
    partitions within the bound; a run of one worker's partitions of at least
    half the bound never shares a group with another worker's; each group on
    the worker holding most of its rows."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        rows = rng.integers(1, 40, n)
        workers = list(np.repeat(rng.choice(["a", "b", "c"], n), rng.integers(1, 6, n))[:n])
        target = int(rng.integers(1, 120))
        groups = block_groups(rows, workers, target)
        assert [i for indices, _ in groups for i in indices] == list(range(n))
        for indices, worker in groups:
            assert indices == list(range(indices[0], indices[-1] + 1))
            assert len(indices) == 1 or rows[indices].sum() <= target
            held = {w: rows[[i for i in indices if workers[i] == w]].sum() for w in workers}
            assert held[worker] == max(held.values())
            for i, j in zip(indices, indices[1:]):  # a worker change inside a group ...
                if workers[i] != workers[j]:  # ... only while the group is below half
                    assert 2 * rows[indices[0]:j].sum() < target


def test_partitions_unknown_to_the_client_are_grouped_by_position():
    groups = block_groups([10, 10, 10, 10, 30], [None] * 5, 25)
    assert groups == [([0, 1], None), ([2, 3], None), ([4], None)]


@pytest.mark.parametrize("params", [
    dict(),
    dict(replacement=True, class_weight="balanced", predict_min_samples=2),
    dict(balanced_bootstrap=True, criterion="auc_ecp", nsplit=3),
])
def test_many_small_partitions_give_the_forest_of_one(dask_client, small_nodes, params):
    """60 partitions of 25 rows, persisted on the two workers, are binned in
    blocks of several partitions; the forest is the one grown on a single
    partition (weights of 0 included: the draw classes of the merged rows)."""
    X, y = dask_data()
    w = np.random.RandomState(1).uniform(0.0, 3.0, size=y.shape[0])
    w[::50] = 0.0
    params = dict(n_estimators=3, random_state=5, oob_score=True, **params)
    reference = AUCForestClassifier(**params).fit(*chunked([y.shape[0]], X, y, w))
    small = dask_client.persist(chunked([25] * (y.shape[0] // 25), X, y, w))
    distributed.wait(small)
    forest = AUCForestClassifier(**params).fit(*small)
    stats = forest._dask_fit_stats
    assert stats["partitions"] == 60 and 2 <= stats["blocks"] < 60, stats
    assert stats["rounds"] >= 3
    assert_same_trees(reference, forest)
    assert forest.oob_score_ == reference.oob_score_
    np.testing.assert_array_equal(forest.class_prior_, reference.class_prior_)
