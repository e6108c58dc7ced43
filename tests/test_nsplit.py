"""Randomized split points (nsplit): thresholds drawn from the node's values."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.utils._param_validation import InvalidParameterError

from aucforest import AUCForestClassifier, AUCTreeClassifier, load
from aucforest.io import save
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


def test_the_binned_splitter_ignores_nsplit():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] + rng.normal(size=500) > 0).astype(int)
    drawn = AUCForestClassifier(10, nsplit=10, max_bins=32, random_state=0).fit(X, y)
    every = AUCForestClassifier(10, nsplit=None, max_bins=32, random_state=0).fit(X, y)
    np.testing.assert_array_equal(drawn.predict_proba(X), every.predict_proba(X))
