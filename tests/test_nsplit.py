"""Randomized split points (nsplit): thresholds drawn from the node's values."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.datasets import make_classification
from sklearn.utils._param_validation import InvalidParameterError

from aucforest import AUCForestClassifier, AUCTreeClassifier, load
from aucforest.io import save
from aucforest._split import CRITERIA, ExactSplitter
from aucforest._tree import build_tree
from aucforest._base import distinct_value_tables, grow_tree
from references import best_split_with_missing, midpoints, split_value, table_of


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       criterion=st.sampled_from(["auc", "gini", "entropy", "auc_ecp"]),
       msl=st.integers(1, 3), missing_share=st.sampled_from([0.0, 0.1, 0.25]))
def test_drawing_every_value_finds_the_brute_force_split(seed, criterion, msl, missing_share):
    # five distinct values in 300+ cases and 200 draws: every value is drawn
    # (a value of frequency >= 0.1 is missed with probability 0.9**200 < 1e-9),
    # so the drawn candidates are all the thresholds of the exact scan
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(300, 400)), int(rng.integers(1, 3))
    X = rng.integers(0, 5, size=(n, p)).astype(float)
    X[rng.random((n, p)) < missing_share] = np.nan
    observed = (~np.isnan(X)).sum(axis=0)
    counts = [np.unique(X[~np.isnan(X[:, f]), f], return_counts=True)[1] for f in range(p)]
    assume(observed.min() > 201 and min(c.min() / o for c, o in zip(counts, observed)) >= 0.1)
    y = rng.integers(0, int(rng.integers(2, 5)), size=n)
    w = rng.uniform(0.2, 2.0, size=n)
    best = best_split_with_missing(X, y, w, criterion, msl, lambda f: midpoints(X[:, f]))
    tree = AUCTreeClassifier(criterion=criterion, max_depth=1, min_samples_leaf=msl, nsplit=200,
                             random_state=seed).fit(X, y, sample_weight=w)
    t = tree.tree_
    assert t.node_count == 3
    x = X[:, t.feature[0]]
    left = np.where(np.isnan(x), bool(t.missing_go_to_left[0]), x <= t.threshold[0])
    assert split_value(table_of(left, y, w, y.max() + 1), criterion) == pytest.approx(
        best, rel=1e-9, abs=1e-12)


def test_one_drawn_point_splits_at_a_uniformly_drawn_case():
    # one feature, nsplit=1: the root's only candidate is the value of one case
    # drawn uniformly, so the share of cases sent left is uniform on {1..n-1}/n
    # (the largest value is no candidate: its draw leaves the root a leaf)
    rng = np.random.default_rng(0)
    n = 400
    X = rng.permutation(n).reshape(-1, 1).astype(float)
    y = rng.integers(0, 2, size=n)
    shares = []
    for seed in range(400):
        tree = AUCTreeClassifier(max_depth=1, nsplit=1, random_state=seed).fit(X, y)
        if tree.tree_.node_count == 3:
            shares.append(np.mean(X[:, 0] <= tree.tree_.threshold[0]))
    assert len(shares) > 390
    assert stats.kstest(shares, "uniform").pvalue > 1e-3
    exhaustive = {AUCTreeClassifier(max_depth=1, random_state=seed).fit(X, y).tree_.threshold[0]
                  for seed in range(5)}
    assert len(exhaustive) == 1  # the exhaustive split does not depend on the seed


def test_small_nodes_are_scanned_in_full():
    # at most nsplit + 1 cases with a value: every threshold, as without nsplit
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    y = rng.integers(0, 3, size=30)
    full = AUCTreeClassifier(random_state=0).fit(X, y)
    drawn = AUCTreeClassifier(nsplit=29, random_state=0).fit(X, y)
    for name in ("feature", "threshold", "children_right"):
        np.testing.assert_array_equal(getattr(drawn.tree_, name), getattr(full.tree_, name))


def test_forest_with_nsplit_is_reproducible_across_threads_and_saved(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(size=600) > 0.5).astype(int)
    one = AUCForestClassifier(20, nsplit=10, random_state=0, n_jobs=1).fit(X, y)
    two = AUCForestClassifier(20, nsplit=10, random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))
    save(one, tmp_path / "forest.aucf")
    loaded = load(tmp_path / "forest.aucf")
    assert loaded.nsplit == 10
    np.testing.assert_array_equal(loaded.predict_proba(X), one.predict_proba(X))


@pytest.mark.parametrize("Estimator", [AUCTreeClassifier, AUCForestClassifier])
def test_bad_nsplit_is_refused_with_its_name(Estimator):
    X, y = np.arange(20.0).reshape(-1, 1), np.arange(20) % 2
    for bad in (0, -3, 2.5, "10", True):
        with pytest.raises(InvalidParameterError, match="nsplit"):
            Estimator(nsplit=bad).fit(X, y)


@pytest.mark.parametrize("max_bins", [None, 16])
def test_two_drawn_of_three_thresholds_split_at_the_better_drawn_one(max_bins):
    # four distinct values, three thresholds, nsplit=2: the best threshold is
    # drawn with probability 2/3 and taken; otherwise the second best is. The
    # worst is never taken, which fails if the buckets between the drawn
    # thresholds (merged bins of the binned splitter) are summed wrongly
    rng = np.random.default_rng(6)
    X = np.repeat([0.0, 1.0, 2.0, 3.0], [60, 50, 40, 50]).reshape(-1, 1)
    y = np.concatenate([rng.choice(3, 60, p=[0.7, 0.2, 0.1]), rng.choice(3, 50, p=[0.5, 0.3, 0.2]),
                        rng.choice(3, 40, p=[0.2, 0.3, 0.5]), rng.choice(3, 50, p=[0.1, 0.2, 0.7])])
    w = rng.uniform(0.5, 2.0, size=y.size)
    value = {t: split_value(table_of(X[:, 0] <= t, y, w, 3), "auc") for t in (0.0, 1.0, 2.0)}
    ranked = sorted(value, key=value.get, reverse=True)
    assert value[ranked[0]] > value[ranked[1]] > value[ranked[2]]
    taken = []
    for seed in range(300):
        tree = AUCTreeClassifier(max_depth=1, nsplit=2, max_bins=max_bins,
                                 random_state=seed).fit(X, y, sample_weight=w)
        taken.append(np.floor(tree.tree_.threshold[0]))  # midpoint t + 1/2 -> t
    assert ranked[2] not in taken
    assert stats.binomtest(taken.count(ranked[0]), len(taken), 2 / 3).pvalue > 1e-3


@pytest.mark.parametrize("max_bins", [None, 32])
def test_drawn_points_are_uniform_over_distinct_values_not_cases(max_bins):
    # randomForestSRC's nsplit draws among the node's distinct values: with
    # 391 cases at 0 and one case at each of 1..9, nsplit=1 draws 0 (split
    # after 0) with probability 1/9, not 391/400 as a draw of a case would
    rng = np.random.default_rng(4)
    X = np.concatenate([np.zeros(391), np.arange(1.0, 10.0)]).reshape(-1, 1)
    y = rng.integers(0, 2, size=X.shape[0])
    drawn = []
    for seed in range(450):
        tree = AUCTreeClassifier(max_depth=1, nsplit=1, max_bins=max_bins,
                                 random_state=seed).fit(X, y)
        assert tree.tree_.node_count == 3
        drawn.append(np.floor(tree.tree_.threshold[0]))  # midpoint t + 1/2 -> t
    values, counts = np.unique(drawn, return_counts=True)
    np.testing.assert_array_equal(values, np.arange(9.0))  # never the largest value, 9
    assert stats.chisquare(counts).pvalue > 1e-3
    assert stats.binomtest(counts[0], len(drawn), 1 / 9).pvalue > 1e-3


@pytest.mark.parametrize("max_bins", [None, 32])
def test_nodes_with_few_distinct_values_are_scanned_in_full(max_bins):
    # 300 cases but at most nsplit + 1 = 6 distinct values per feature: every
    # node evaluates every threshold, so the tree is the exhaustive one
    rng = np.random.default_rng(5)
    X = rng.integers(0, 6, size=(300, 3)).astype(float)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = rng.integers(0, 3, size=300)
    full = AUCTreeClassifier(max_features=2, max_bins=max_bins, random_state=0).fit(X, y)
    drawn = AUCTreeClassifier(max_features=2, nsplit=5, max_bins=max_bins,
                              random_state=0).fit(X, y)
    for name in ("feature", "threshold", "children_right", "missing_go_to_left"):
        np.testing.assert_array_equal(getattr(drawn.tree_, name), getattr(full.tree_, name))


def test_distinct_value_tables_cover_features_with_many_shared_values():
    X = np.array([[0.0, 1.0, np.nan, 2.0],
                  [1.0, 1.0, np.nan, np.nan],
                  [2.0, 3.0, 5.0, np.nan],
                  [3.0, 4.0, 6.0, 2.5]], dtype=np.float32)
    values, offsets = distinct_value_tables(np.asfortranarray(X))
    np.testing.assert_array_equal(offsets, [0, 0, 3, 3, 3])  # only column 1 has repeats
    np.testing.assert_array_equal(values, [1.0, 3.0, 4.0])
    # a few repeats among many distinct values (float32 rounding) do not count
    few, many = np.arange(1000.0), np.arange(1000.0)
    few[:5], many[:20] = 999.0, 999.0  # 0.5% and 2% of the values repeat another
    values, offsets = distinct_value_tables(
        np.asfortranarray(np.column_stack([few, many]), dtype=np.float32))
    np.testing.assert_array_equal(offsets, [0, 0, 980])
    np.testing.assert_array_equal(values, np.arange(20.0, 1000.0))


@pytest.mark.parametrize("values_per_feature", [6, 40])
def test_table_lookup_draws_as_the_sort_does(values_per_feature):
    # a tied feature finds the node's distinct values in its table instead of
    # sorting the node: the same candidates, so a tree with one draw per node
    # is split where the sorted draw splits (and with at most nsplit + 1
    # values, where the exhaustive scan splits)
    rng = np.random.default_rng(7)
    n = 2000
    X = np.asfortranarray(rng.integers(0, values_per_feature, size=(n, 3)).astype(np.float32))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = rng.integers(0, 3, size=n).astype(np.intp)
    w = rng.uniform(0.5, 2.0, size=n)
    settings = dict(criterion="auc", max_features=3, max_depth=None, min_samples_leaf=1,
                    min_weight_fraction_leaf=0.0, max_bins=None, nsplit=5, seed=3)
    _, offsets = distinct_value_tables(X)
    assert np.all(np.diff(offsets) == values_per_feature)  # every feature looks up
    looked_up = grow_tree(X, y, w, 3, **settings)  # grow_tree computes the tables
    splitter_sorts = ExactSplitter(X, y, w, 3, CRITERIA["auc"], 3, 1, 0.0, 3, nsplit=5)
    sorted_draws = build_tree(splitter_sorts, np.iinfo(np.intp).max)  # tables=None: sorts
    assert looked_up.node_count > 50
    for name in ("feature", "threshold", "children_right", "missing_go_to_left"):
        np.testing.assert_array_equal(getattr(looked_up, name), getattr(sorted_draws, name))
    if values_per_feature <= 6:  # at most nsplit + 1 values: the exhaustive tree
        exhaustive = grow_tree(X, y, w, 3, **dict(settings, nsplit=None))
        for name in ("feature", "threshold", "children_right", "missing_go_to_left"):
            np.testing.assert_array_equal(getattr(looked_up, name), getattr(exhaustive, name))


def test_a_tied_feature_without_a_table_still_ends():
    # without a table a feature draws cases; many ties must not make the draws loop forever
    rng = np.random.default_rng(6)
    X = np.asfortranarray(rng.integers(0, 12, size=(200, 2)).astype(np.float32))
    y = rng.integers(0, 2, size=200)
    tree_ = grow_tree(X, y.astype(np.intp), np.ones(200), 2, criterion="auc", max_features=2,
                      max_depth=None, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                      max_bins=None, nsplit=10, seed=0,
                      tables=(np.zeros(0, np.float32), np.zeros(3, np.intp)))
    assert tree_.node_count > 1


@pytest.mark.parametrize("max_bins", [None, 16])
def test_nsplit_beyond_the_rows_scans_every_value_without_a_buffer_of_that_size(max_bins):
    # nsplit = 2**31 - 1 once asked the exact splitter for ~48 GiB of sort buffers;
    # a node has at most n distinct values, so it means what nsplit = n means
    X, y = make_classification(300, 5, random_state=0)
    X[::7, 1] = np.nan
    params = dict(n_estimators=4, max_bins=max_bins, random_state=0)
    rows = AUCForestClassifier(nsplit=300, **params).fit(X, y)
    huge = AUCForestClassifier(nsplit=2 ** 31 - 1, **params).fit(X, y)
    for a, b in zip(rows.estimators_, huge.estimators_):
        for name, array in a.tree_.node_arrays().items():
            np.testing.assert_array_equal(array, b.tree_.node_arrays()[name], err_msg=name)


def test_a_bin_first_occupied_by_the_last_cases_of_a_large_node_is_found():
    # the pass that finds a node's occupied bins stops early only once every
    # bin of the feature is occupied: value 9 occurs only in the last rows
    # (a node's cases are in row order), after every other value has occurred
    # hundreds of times, and the only split that isolates class 1 is 8 | 9
    n = 1200
    x = np.where(np.arange(n) < n - 10, np.arange(n) % 9, 9).astype(np.float64)
    y = (x == 9).astype(int)
    tree = AUCTreeClassifier(max_depth=1, nsplit=20, max_bins=16, random_state=0)
    tree.fit(x.reshape(-1, 1), y)
    assert tree.tree_.node_count == 3
    assert 8 < tree.tree_.threshold[0] < 9
    np.testing.assert_array_equal(tree.predict(x.reshape(-1, 1)), y)
