"""``max_leaf_nodes`` on dask collections (aucforest._leaf_budget, issue 43 item 5).

The rule: a bounded tree is what the in-memory best-first builder keeps of the
tree the Dask fit grows (the L - 1 splits of largest weighted impurity decrease
p(t) i(t) - p(t_L) i(t_L) - p(t_R) i(t_R), each chosen among the children of
the splits already kept, ties to the node made first). The reference here is
that rule run naively (scan the frontier for its best node) on the unbounded
Dask forest of the same data and seed. A real LocalCluster (2 worker
processes, 1 thread each); ``LOCAL_ROWS`` is lowered so that the top levels
grow on the workers (where nodes the bound rules out are dropped during the
growth) and the lower ones in memory (grown best first to the bound).
"""
import numpy as np
import pytest

import aucforest._dask as dask_fit
from aucforest._dask import _finish as dask_driver
from aucforest import AUCForestClassifier
from aucforest.metrics import multiclass_auc
from dask_testing import assert_same_trees, chunked, local_cluster
from data_builders import dask_data

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


def _n_leaves(tree_):
    return int(np.count_nonzero(tree_.children_left < 0))


def _naive_best_first(tree_, max_leaf_nodes, criterion):
    """The nodes the best-first rule splits, found by scanning the frontier:
    Gini impurity (entropy in bits under "entropy") from each node's class
    proportions, weighted by its share of the root's weight."""
    proba = tree_.proba
    weight = tree_.weighted_n_node_samples / tree_.weighted_n_node_samples[0]
    if criterion == "entropy":
        logs = np.log2(np.where(proba > 0, proba, 1.0))
        impurity = -(proba * logs).sum(axis=1)
    else:
        impurity = 1.0 - (proba ** 2).sum(axis=1)
    risk = weight * impurity
    left, right = tree_.children_left, tree_.children_right

    def decrease(node):
        return risk[node] - risk[left[node]] - risk[right[node]]

    frontier = [(0, 0)] if right[0] >= 0 else []  # (node, order made)
    made, split = 1, []
    while frontier and len(split) + 1 < max_leaf_nodes:
        best = max(frontier, key=lambda entry: (decrease(entry[0]), -entry[1]))
        frontier.remove(best)
        node = best[0]
        split.append(node)
        for child in (left[node], right[node]):
            if right[child] >= 0:
                frontier.append((child, made))
            made += 1
    return split


def _assert_is_best_first_of(bounded, grown, max_leaf_nodes, criterion):
    """``bounded`` is ``grown`` cut to the splits the best-first rule keeps:
    the same splits, node sizes and class proportions, in preorder."""
    split = _naive_best_first(grown, max_leaf_nodes, criterion)
    assert _n_leaves(bounded) == len(split) + 1 <= max_leaf_nodes
    # the kept nodes of `grown` in preorder: the root and the children of each split
    kept = np.zeros(grown.node_count, dtype=bool)
    kept[0] = True
    kept[grown.children_left[split]] = True
    kept[grown.children_right[split]] = True
    assert bounded.node_count == np.count_nonzero(kept)
    nodes = np.flatnonzero(kept)
    is_split = np.isin(nodes, split)
    np.testing.assert_array_equal(bounded.feature, np.where(is_split, grown.feature[nodes], -2))
    np.testing.assert_array_equal(bounded.threshold,
                                  np.where(is_split, grown.threshold[nodes], -2.0))
    np.testing.assert_array_equal(bounded.n_node_samples, grown.n_node_samples[nodes])
    np.testing.assert_array_equal(bounded.weighted_n_node_samples,
                                  grown.weighted_n_node_samples[nodes])
    np.testing.assert_array_equal(bounded.proba, grown.proba[nodes])



@pytest.fixture
def small_subtrees(monkeypatch):
    """Subtrees finished in memory first grow to a few leaves (2 at least, half
    their share of the bound): many may hold more of their tree's expansions
    and are grown again (`_Fit._cut_trees`)."""
    monkeypatch.setattr(dask_fit, "SUBTREE_LEAVES_MIN", 2)
    monkeypatch.setattr(dask_fit, "SUBTREE_LEAF_SHARE", 0.5)


@pytest.mark.parametrize("subtrees", ["default", "small"])
@pytest.mark.parametrize("criterion", ["auc", "gini", "entropy"])
def test_bounded_trees_are_the_best_first_cut_of_the_grown_trees(dask_client, small_nodes,
                                                                 request, subtrees, criterion):
    if subtrees == "small":
        request.getfixturevalue("small_subtrees")
    X, y = dask_data()
    params = dict(n_estimators=3, random_state=7, predict_min_samples=1, criterion=criterion)
    chunks = chunked([700, 800], X, y)
    grown = AUCForestClassifier(**params).fit(*chunks)
    assert min(_n_leaves(e.tree_) for e in grown.estimators_) > 60
    for bound in (2, 7, 30):
        bounded = AUCForestClassifier(max_leaf_nodes=bound, **params).fit(*chunks)
        assert bounded._dask_fit_stats["rounds"] >= 2
        stats = bounded._dask_fit_stats
        if subtrees == "small" and bound == 30:  # subtrees grown again, from retaken rows
            assert stats["regrown_subtrees"] > 0
            assert stats["retake_rounds"] > 0
        assert stats["regrowth_passes"] <= stats["batches"]  # once at most: decrease floors
        for b, g in zip(bounded.estimators_, grown.estimators_):
            assert _n_leaves(b.tree_) == bound
            _assert_is_best_first_of(b.tree_, g.tree_, bound, criterion)
        # the nodes the bound rules out are not grown level-wise: at 2 leaves, the roots only
        opened = bounded._dask_fit_stats["open_nodes"]
        assert opened == 3 if bound == 2 else opened <= grown._dask_fit_stats["open_nodes"]


def test_bounded_trees_drawn_with_replacement_are_the_best_first_cut(dask_client, small_nodes):
    """With replacement the rows finished in memory weigh their multiplicities,
    whose sums round: the best-first builder keeps each node's class weights as
    summed when it made the node, as the depth-first builder of the unbounded
    fit does, so the bounded trees are its cut to the last bit (the builder
    once summed them again in another order)."""
    X, y = dask_data()
    params = dict(n_estimators=3, random_state=7, predict_min_samples=1, replacement=True)
    chunks = chunked([700, 800], X, y)
    grown = AUCForestClassifier(**params).fit(*chunks)
    for bound in (7, 30):
        bounded = AUCForestClassifier(max_leaf_nodes=bound, **params).fit(*chunks)
        assert bounded._dask_fit_stats["rounds"] >= 2
        for b, g in zip(bounded.estimators_, grown.estimators_):
            assert _n_leaves(b.tree_) == bound
            _assert_is_best_first_of(b.tree_, g.tree_, bound, "auc")


@pytest.mark.parametrize("criterion", ["auc", "gini"])
def test_whole_trees_grown_in_memory_are_the_best_first_cut_of_the_grown_trees(dask_client,
                                                                               criterion):
    """Trees of at most WHOLE_TREE_ROWS rows (all of these) are grown whole on
    one worker, best first to the bound: no level-wise round opens a node of
    theirs, and each is the naive best-first cut of its unbounded tree."""
    X, y = dask_data()
    params = dict(n_estimators=3, random_state=7, predict_min_samples=1, criterion=criterion)
    chunks = chunked([700, 800], X, y)
    grown = AUCForestClassifier(**params).fit(*chunks)
    for bound in (2, 7, 30):
        bounded = AUCForestClassifier(max_leaf_nodes=bound, **params).fit(*chunks)
        stats = bounded._dask_fit_stats
        assert stats["whole_trees"] == 3 and stats["open_nodes"] == 0
        assert stats["regrown_subtrees"] == 0
        for b, g in zip(bounded.estimators_, grown.estimators_):
            assert _n_leaves(b.tree_) == bound
            _assert_is_best_first_of(b.tree_, g.tree_, bound, criterion)


@pytest.mark.parametrize("whole_tree_rows", [1 << 20, 960])
def test_whole_trees_give_the_forest_of_the_cut(dask_client, small_nodes, monkeypatch,
                                                whole_tree_rows):
    """A tree grown whole in memory is finished where it was grown (out-of-bag
    sums, collapse to the node size) instead of being read, cut and finished
    again: the same forest, out-of-bag estimate and node size as when it is
    cut (the cut keeps all of it), with fewer tasks; also when only some of a
    batch's trees are whole (960 rows: about half of these roots' rows)."""
    monkeypatch.setattr(dask_fit, "WHOLE_TREE_ROWS", whole_tree_rows)
    X, y = dask_data(n=1500, seed=2)
    params = dict(n_estimators=8, random_state=4, max_leaf_nodes=20, oob_score=True)
    chunks = chunked([600, 900], X, y)
    whole = AUCForestClassifier(**params).fit(*chunks)
    n_whole = whole._dask_fit_stats["whole_trees"]
    assert n_whole == 8 if whole_tree_rows > 960 else 0 < n_whole < 8
    monkeypatch.setattr(dask_driver, "_cut_later", lambda nodes: True)
    cut = AUCForestClassifier(**params).fit(*chunks)
    assert_same_trees(whole, cut)
    assert whole.oob_score_ == cut.oob_score_
    assert whole.predict_min_samples_ == cut.predict_min_samples_
    np.testing.assert_array_equal(whole.predict_proba(X), cut.predict_proba(X))
    assert whole._dask_fit_stats["tasks"] < cut._dask_fit_stats["tasks"]


def test_with_max_depth_both_bounds_hold(dask_client, small_nodes):
    X, y = dask_data(seed=1)
    params = dict(n_estimators=3, random_state=2, predict_min_samples=1, max_depth=5)
    chunks = chunked([500, 500, 500], X, y)
    grown = AUCForestClassifier(**params).fit(*chunks)
    for bound in (6, 20):
        bounded = AUCForestClassifier(max_leaf_nodes=bound, **params).fit(*chunks)
        for b, g in zip(bounded.estimators_, grown.estimators_):
            assert b.tree_.max_depth <= 5
            assert _n_leaves(b.tree_) == bound
            _assert_is_best_first_of(b.tree_, g.tree_, bound, "auc")


@pytest.mark.parametrize("subtrees", ["default", "small"])
def test_identical_forest_across_chunkings_and_workers(dask_client, small_nodes, request,
                                                        subtrees):
    if subtrees == "small":
        request.getfixturevalue("small_subtrees")
    X, y = dask_data(n=1800, seed=3)
    params = dict(n_estimators=4, random_state=5, max_leaf_nodes=12, oob_score=True)
    forests = [AUCForestClassifier(**params).fit(*chunked(sizes, X, y))
               for sizes in ([1800], [500, 800, 500], [100, 400, 200, 300, 350, 200, 250])]
    with local_cluster(1) as cluster, distributed.Client(cluster):
        forests.append(AUCForestClassifier(**params).fit(*chunked([900, 900], X, y)))
    reference = forests[0]
    assert all(_n_leaves(e.tree_) <= 12 for e in reference.estimators_)
    for other in forests[1:]:
        assert_same_trees(reference, other)
        assert other.oob_score_ == reference.oob_score_
        np.testing.assert_array_equal(other.predict_proba(X), reference.predict_proba(X))


@pytest.mark.parametrize("predict_min_samples", ["oob", 4])
def test_subtrees_grown_to_their_share_give_the_forest_of_subtrees_grown_to_the_bound(
        dask_client, small_nodes, monkeypatch, predict_min_samples):
    """Subtrees finished in memory grow to their share of the bound, and again
    to the bound above a decrease floor when their tree may keep more of them:
    the forest (trees, out-of-bag estimate, node size) is the one of subtrees
    grown to the bound, after one regrowth at most."""
    X, y = dask_data(n=2000, seed=6)
    params = dict(n_estimators=4, random_state=3, max_leaf_nodes=40, oob_score=True,
                  predict_min_samples=predict_min_samples)
    chunks = chunked([900, 1100], X, y)
    monkeypatch.setattr(dask_fit, "SUBTREE_LEAVES_MIN", 40)
    reference = AUCForestClassifier(**params).fit(*chunks)
    assert reference._dask_fit_stats["regrown_subtrees"] == 0
    for least, share in ((2, 0.5), (3, 1), (16, 4)):
        monkeypatch.setattr(dask_fit, "SUBTREE_LEAVES_MIN", least)
        monkeypatch.setattr(dask_fit, "SUBTREE_LEAF_SHARE", share)
        forest = AUCForestClassifier(**params).fit(*chunks)
        stats = forest._dask_fit_stats
        if least == 2:
            assert stats["regrown_subtrees"] > 0
        assert stats["regrowth_passes"] <= stats["batches"]
        assert_same_trees(forest, reference)
        assert forest.oob_score_ == reference.oob_score_
        assert forest.predict_min_samples_ == reference.predict_min_samples_
        np.testing.assert_array_equal(forest.predict_proba(X), reference.predict_proba(X))


def test_a_bound_above_the_grown_leaves_gives_the_unbounded_forest(dask_client, small_nodes):
    X, y = dask_data(seed=4)
    params = dict(n_estimators=3, random_state=1, predict_min_samples=1, oob_score=True)
    chunks = chunked([600, 900], X, y)
    grown = AUCForestClassifier(**params).fit(*chunks)
    bound = max(_n_leaves(e.tree_) for e in grown.estimators_) + 1
    bounded = AUCForestClassifier(max_leaf_nodes=bound, **params).fit(*chunks)
    assert_same_trees(bounded, grown)
    assert bounded.oob_score_ == grown.oob_score_


def test_test_auc_and_leaf_count_as_the_in_memory_fit(dask_client, monkeypatch):
    """The in-memory fit with the same bound (same bins, other draws): the same
    leaf count per tree, and a held-out AUC within 0.02 (the Monte Carlo noise of
    40 bounded trees plus the different growth order: measured 0.0023, 0.0088
    and 0.0026 apart on data seeds 11, 12 and 13, the Dask fit lower each time)."""
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 400)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 400)  # whatever n
    monkeypatch.setattr(dask_fit, "WHOLE_TREE_ROWS", 0)
    X, y = dask_data(n=5000, seed=11)
    train, test = slice(0, 3500), slice(3500, None)
    params = dict(n_estimators=40, random_state=0, max_leaf_nodes=16, predict_min_samples=1)
    remote = AUCForestClassifier(**params).fit(*chunked([1500, 2000], X[train], y[train]))
    local = AUCForestClassifier(**params).fit(X[train], y[train])
    assert [_n_leaves(e.tree_) for e in remote.estimators_] == [16] * 40
    assert [_n_leaves(e.tree_) for e in local.estimators_] == [16] * 40
    auc_remote = multiclass_auc(y[test], remote.predict_proba(X[test]))
    auc_local = multiclass_auc(y[test], local.predict_proba(X[test]))
    assert abs(auc_remote - auc_local) < 0.02, (auc_remote, auc_local)
