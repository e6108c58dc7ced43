"""Native missing values: the scan with NaN cases sent left and right, against brute force."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aucforest import AUCForestClassifier, AUCTreeClassifier
from references import best_split_with_missing, midpoints, split_value, table_of


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       criterion=st.sampled_from(["auc", "gini", "entropy", "auc_ecp"]),
       msl=st.integers(1, 3))
def test_root_split_with_missing_values_reaches_brute_force(seed, criterion, msl):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(6, 40)), int(rng.integers(1, 4))
    X = rng.integers(0, 5, size=(n, p)).astype(float)
    X[rng.random((n, p)) < rng.uniform(0, 0.5)] = np.nan
    y = rng.integers(0, int(rng.integers(2, 5)), size=n)
    y[:2] = [0, 1]
    w = rng.uniform(0.2, 2.0, size=n)
    best = best_split_with_missing(X, y, w, criterion, msl, lambda f: midpoints(X[:, f]))
    tree = AUCTreeClassifier(criterion=criterion, max_depth=1, min_samples_leaf=msl,
                             random_state=seed).fit(X, y, sample_weight=w)
    if not np.isfinite(best):
        assert tree.tree_.node_count == 1
        return
    t = tree.tree_
    x = X[:, t.feature[0]]
    left = np.where(np.isnan(x), bool(t.missing_go_to_left[0]), x <= t.threshold[0])
    assert split_value(table_of(left, y, w, y.max() + 1), criterion) == pytest.approx(
        best, rel=1e-9, abs=1e-12)
    np.testing.assert_array_equal(tree.apply(X) == t.children_left[0], left)


def test_missingness_itself_can_be_the_signal():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = rng.integers(0, 2, size=200)
    X[y == 1, 0] = np.nan  # class 1 is exactly the rows with a missing value
    tree = AUCTreeClassifier(random_state=0).fit(X, y)
    np.testing.assert_array_equal(tree.predict(X), y)
    assert tree.tree_.node_count == 3


def test_unseen_missing_values_go_to_the_heavier_child():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    y = np.array([0, 1, 1, 1, 1])
    tree = AUCTreeClassifier().fit(X, y)
    t = tree.tree_
    heavier_is_left = t.weighted_n_node_samples[t.children_left[0]] >= \
        t.weighted_n_node_samples[t.children_right[0]]
    assert bool(t.missing_go_to_left[0]) == heavier_is_left
    assert tree.predict([[np.nan]])[0] == 1


def test_forest_with_missing_values_predicts_finite_probabilities():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.2] = np.nan
    forest = AUCForestClassifier(30, oob_score=True, random_state=0).fit(X, y)
    proba = forest.predict_proba(X)
    assert np.all(np.isfinite(proba))
    assert forest.oob_score_ > 0.75
