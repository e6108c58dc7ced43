"""treelite export (`aucforest.to_treelite`): treelite's own runtime (GTIL) gives
predict_proba within 1e-12 for float64 and float32 rows, every kind of split,
missing value and categorical level; ``forest.decide`` of those probabilities
gives predict."""
import numpy as np
import pytest
import treelite
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

import aucforest
from aucforest import AUCForestClassifier, AUCTreeClassifier, to_treelite
from aucforest.export._treelite import float32_cut

from export_data import (categorical_codes_forest, categorical_frame_forest, held_out,
                         make_data, missing_values_forest, nan_directions, sparse_forest,
                         tied_values_forest)

ATOL = 1e-12


def treelite_proba(estimator, X):
    """Class probabilities of the exported model in treelite's runtime."""
    return treelite.gtil.predict(to_treelite(estimator), X)[:, 0, :]


def assert_same_probabilities(estimator, X, X_forest=None):
    """GTIL's probabilities equal predict_proba on float64 and float32 rows, and
    ``decide`` of them equals predict (``X_forest``: what the estimator is given)."""
    X_forest = X if X_forest is None else X_forest
    expected = estimator.predict_proba(X_forest)
    model = to_treelite(estimator)
    for dtype in (np.float64, np.float32):
        proba = treelite.gtil.predict(model, np.asarray(X, dtype=dtype))[:, 0, :]
        np.testing.assert_allclose(proba, expected, rtol=0, atol=ATOL, err_msg=str(dtype))
    if isinstance(estimator, AUCForestClassifier):
        np.testing.assert_array_equal(estimator.decide(proba), estimator.predict(X_forest))


def test_float32_cut_sends_doubles_where_float32_rounding_does():
    """``x op m`` against numpy's own float32 rounding, for doubles at, just
    beside and between the float32 neighbours of many thresholds (ties to even
    both ways, negative, tiny and huge values)."""
    rng = np.random.default_rng(0)
    thresholds = np.concatenate([
        rng.normal(size=300), rng.normal(size=100) * 1e-30, rng.normal(size=100) * 1e30,
        rng.normal(size=100).astype(np.float32),  # thresholds that are float32 values
        [0.0, -0.0, 1.0, 2.45, -1.3, 3.4028234663852886e38, 1e-45, -1e-45]])
    for t in thresholds:
        m, op = float32_cut(float(t))
        t32 = np.float32(t)
        with np.errstate(over="ignore"):
            near = [np.float32(np.nextafter(t32, np.float32(s))) for s in (-np.inf, np.inf)]
        xs = [float(t), m, *(np.nextafter(m, s) for s in (-np.inf, np.inf)),
              float(t32), *map(float, near)]
        xs += [(float(a) + float(t32)) / 2 for a in near]  # midpoints of float32 neighbours
        for x in xs:
            with np.errstate(over="ignore"):
                expected = np.float32(x) <= t
            assert (x <= m if op == "<=" else x < m) == expected, (t, x, m, op)


@pytest.mark.parametrize("n_classes, criterion", [(2, "auc"), (2, "gini"), (3, "auc"),
                                                  (3, "entropy"), (12, "auc")])
def test_probabilities_match_on_held_out_rows(n_classes, criterion):
    X, y = make_data(400, n_classes)
    forest = AUCForestClassifier(n_estimators=20, criterion=criterion, random_state=0).fit(X, y)
    assert_same_probabilities(forest, held_out(300))


def test_missing_values_go_both_ways_and_where_no_nan_was_seen():
    forest, X_test = missing_values_forest(n_estimators=20)
    assert {(1, 0), (1, 1)} <= nan_directions(forest, (1, 3))
    assert_same_probabilities(forest, X_test)


@pytest.mark.parametrize("max_bins, nsplit", [(None, None), (None, 10), (16, None),
                                              ("auto", 10)])
def test_binned_and_exact_splitters(max_bins, nsplit):
    assert_same_probabilities(*tied_values_forest(max_bins, nsplit, n_estimators=15))


def test_doubles_on_the_thresholds_and_between_float32_neighbours():
    X, y = make_data(300)
    forest = AUCForestClassifier(n_estimators=15, max_bins=None, random_state=0).fit(X, y)
    splits = [(f, t) for tree in forest.estimators_
              for f, t in zip(tree.tree_.feature, tree.tree_.threshold) if f >= 0][:100]
    rows = np.repeat(held_out(len(splits))[:len(splits)], 5, axis=0)
    for i, (f, t) in enumerate(splits):
        t32 = np.float32(t)
        below = np.nextafter(t32, np.float32(-np.inf))
        above = np.nextafter(t32, np.float32(np.inf))
        rows[5 * i:5 * i + 5, f] = [t, np.nextafter(t, np.inf), t32,
                                    (float(t32) + float(above)) / 2,
                                    (float(t32) + float(below)) / 2]
    assert_same_probabilities(forest, rows)


def test_categorical_codes_with_unseen_levels_and_large_sets():
    forest, X_test = categorical_codes_forest()
    assert any(tree.tree_.categorical_split.any() for tree in forest.estimators_)
    assert_same_probabilities(forest, X_test)


def test_categorical_text_levels_from_a_dataframe():
    """A ``category`` column of text levels: treelite takes each level's
    position in ``categories_``; an unseen level is NaN, as predict treats it."""
    forest, test, codes = categorical_frame_forest()
    assert np.isnan(codes[:, 1]).any() and np.isnan(codes[:, 2]).any()
    with pytest.warns(UserWarning, match="not seen"):
        assert_same_probabilities(forest, codes, test)


def test_sparse_fitted_forest_on_dense_rows():
    forest, X_test = sparse_forest()
    np.testing.assert_allclose(treelite_proba(forest, X_test.toarray()),
                               forest.predict_proba(X_test), rtol=0, atol=ATOL)


@pytest.mark.parametrize("decision", ["rfq", "argmax", 0.3,
                                      [[0, 1, 4], [2, 0, 1], [6, 3, 0]]])
def test_decide_applies_every_rule_to_the_exported_probabilities(decision):
    n_classes = 2 if isinstance(decision, float) else 3
    X, y = make_data(400, n_classes)
    forest = AUCForestClassifier(n_estimators=20, decision=decision, balanced_bootstrap=True,
                                 random_state=0).fit(X, y)
    assert_same_probabilities(forest, held_out(300))


def test_a_single_tree_collapsed_trees_and_a_model_file(tmp_path):
    X, y = make_data(300, 3)
    tree = AUCTreeClassifier(max_depth=6, random_state=0).fit(X, y)
    assert_same_probabilities(tree, held_out(200))
    forest = AUCForestClassifier(n_estimators=15, predict_min_samples=20,
                                 random_state=0).fit(X, y)
    assert forest.predict_min_samples_ == 20
    assert_same_probabilities(forest, held_out(200))
    aucforest.save(forest, tmp_path / "m.npz")
    assert_same_probabilities(aucforest.load(tmp_path / "m.npz"), held_out(200))


def test_a_stump_forest_whose_trees_are_single_leaves():
    X, y = make_data(50)
    forest = AUCForestClassifier(n_estimators=5, predict_min_samples=10_000,
                                 random_state=0).fit(X, y)  # every tree collapsed to its root
    assert all(tree.tree_.node_count == 1 for tree in forest.estimators_)
    assert_same_probabilities(forest, held_out(20))


def test_a_serialized_model_predicts_the_same(tmp_path):
    X, y = make_data(300, 3)
    forest = AUCForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    path = tmp_path / "forest.tl"
    to_treelite(forest).serialize(str(path))
    restored = treelite.Model.deserialize(str(path))
    X_test = held_out(200)
    np.testing.assert_allclose(treelite.gtil.predict(restored, X_test)[:, 0, :],
                               forest.predict_proba(X_test), rtol=0, atol=ATOL)


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="AUCForestClassifier or AUCTreeClassifier"):
        to_treelite(LogisticRegression())
    with pytest.raises(NotFittedError):
        to_treelite(AUCForestClassifier())
    X, y = make_data(100)
    forest = AUCForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="proba has 3 columns; the forest has 2 classes"):
        forest.decide(np.zeros((4, 3)))
    with pytest.raises(NotFittedError):
        AUCForestClassifier().decide(np.zeros((4, 2)))
