"""aucforest.inspection.shap_values and to_shap: exact path-dependent TreeSHAP
(Lundberg, Erion, Chen et al., Nature Machine Intelligence 2020, Algorithm 2)
per class of predict_proba, and the model dict of the shap package's TreeEnsemble.

References: exact Shapley values by enumerating every subset of features with
the path-dependent conditional expectation (Lundberg et al. 2020, Algorithm 1),
written here from the paper and reading the trees through their public
arrays; the forests' own predict_proba; the shap package's TreeExplainer.
"""
import itertools
from math import factorial

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError

from aucforest import AUCForestClassifier, AUCTreeClassifier
from aucforest.inspection import shap_values, to_shap


def imbalanced(n_samples=300, n_features=6, n_classes=3, missing=0.1, seed=0):
    """Imbalanced data (minority classes of 15% and 5%) with NaN in a share of the cells."""
    weights = [0.8, 0.15, 0.05][:n_classes] if n_classes == 3 else [0.85, 0.15]
    X, y = make_classification(n_samples, n_features, n_informative=min(4, n_features),
                               n_redundant=0, n_classes=n_classes, weights=weights,
                               n_clusters_per_class=1, random_state=seed)
    X[np.random.default_rng(seed).random(X.shape) < missing] = np.nan
    return X, y


# ------------------------------------------------------------- the reference

def conditional_expectation(tree_, n_classes, X, known):
    """E[f(x) | x_S] for every row, S = ``known``: Algorithm 1 of Lundberg et al.
    2020, f(x) the class proportions of the leaf x reaches. Shape
    (n_rows, n_classes)."""
    left, right = tree_.children_left, tree_.children_right
    feature, threshold = tree_.feature, tree_.threshold
    missing_left, cover = tree_.missing_go_to_left, tree_.weighted_n_node_samples
    value = np.asarray(tree_.value).reshape(tree_.node_count, n_classes)
    X = X.astype(np.float32).astype(np.float64)  # what the trees compare

    def expect(node):
        if left[node] < 0:
            return np.broadcast_to(value[node], (X.shape[0], n_classes))
        below = [expect(left[node]), expect(right[node])]
        if feature[node] in known:
            x = X[:, feature[node]]
            goes_left = (x <= threshold[node]) | (np.isnan(x) & (missing_left[node] == 1))
            return np.where(goes_left[:, None], below[0], below[1])
        return (cover[left[node]] * below[0] + cover[right[node]] * below[1]) / cover[node]

    return expect(0)


def brute_force_shap(trees, n_classes, X):
    """Shapley values of the mean over trees of E[f(x) | x_S], by enumerating
    every subset S; and the value of the empty set."""
    n_features = X.shape[1]
    worth = {}
    for size in range(n_features + 1):
        for subset in itertools.combinations(range(n_features), size):
            worth[subset] = np.mean([conditional_expectation(tree_, n_classes, X, set(subset))
                                     for tree_ in trees], axis=0)
    phi = np.zeros((X.shape[0], n_features, n_classes))
    for i in range(n_features):
        others = [j for j in range(n_features) if j != i]
        for size in range(n_features):
            weight = factorial(size) * factorial(n_features - size - 1) / factorial(n_features)
            for subset in itertools.combinations(others, size):
                with_i = tuple(sorted(subset + (i,)))
                phi[:, i] += weight * (worth[with_i] - worth[subset])
    return phi, worth[()][0]


def forest_trees(forest):
    return [estimator.tree_ for estimator in forest.estimators_]


# ---------------------------------------------------------- brute force

@pytest.mark.parametrize("min_samples, max_depth", [(1, 5), (4, 5), (1, None), (1, 1)])
def test_forest_matches_brute_force_with_missing_values(min_samples, max_depth):
    X, y = imbalanced(120, n_features=5, missing=0.15, seed=1)
    forest = AUCForestClassifier(8, max_depth=max_depth, predict_min_samples=min_samples,
                                 random_state=0).fit(X, y)
    trees = forest_trees(forest)
    # the rows explained take both missing directions at splits on their NaN features
    directions = set()
    for tree_ in trees:
        split = tree_.feature >= 0
        directions |= set(tree_.missing_go_to_left[split].tolist())
    assert directions == {0, 1}
    rows = X[:25]
    assert np.isnan(rows).any(axis=0).all()
    values, base = shap_values(forest, rows)
    expected, expected_base = brute_force_shap(trees, 3, rows)
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(base, expected_base, rtol=0, atol=1e-9)


def test_single_tree_matches_brute_force_and_its_predictions():
    X, y = imbalanced(150, n_features=6, missing=0.1, seed=2)
    tree = AUCTreeClassifier(max_depth=6, random_state=0).fit(X, y)
    rows = X[:20]
    values, base = shap_values(tree, rows)
    expected, expected_base = brute_force_shap([tree.tree_], 3, rows)
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(base, expected_base, rtol=0, atol=1e-9)
    np.testing.assert_allclose(base + values.sum(axis=1), tree.predict_proba(rows), atol=1e-9)


def test_binary_values_of_the_two_classes_are_opposite():
    X, y = imbalanced(150, n_features=4, n_classes=2, missing=0.1, seed=3)
    forest = AUCForestClassifier(10, max_depth=6, predict_min_samples=1, random_state=0).fit(X, y)
    values, base = shap_values(forest, X[:30])
    expected, expected_base = brute_force_shap(forest_trees(forest), 2, X[:30])
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(values[:, :, 0], -values[:, :, 1], atol=1e-12)
    np.testing.assert_allclose(base.sum(), 1.0, atol=1e-12)


# ---------------------------------------------------------- additivity

@pytest.mark.parametrize("max_bins", [None, 32])
def test_values_add_up_to_the_mean_of_the_trees(max_bins):
    X, y = imbalanced(400, n_features=8, missing=0.1, seed=4)
    forest = AUCForestClassifier(30, max_bins=max_bins, predict_min_samples=1,
                                 random_state=0).fit(X, y)
    values, base = shap_values(forest, X)
    assert values.shape == (400, 8, 3) and base.shape == (3,)
    mean = np.mean([estimator.predict_proba(X) for estimator in forest.estimators_], axis=0)
    np.testing.assert_allclose(base + values.sum(axis=1), mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(base + values.sum(axis=1), forest.predict_proba(X), atol=1e-9)
    # the rows hold NaN where the forest has splits
    assert np.isnan(X).sum() > 100


@pytest.mark.parametrize("predict_min_samples", [10, "oob"])
def test_values_add_up_to_predict_proba_of_collapsed_trees(predict_min_samples):
    X, y = imbalanced(400, n_features=6, missing=0.05, seed=5)
    forest = AUCForestClassifier(30, predict_min_samples=predict_min_samples,
                                 random_state=0).fit(X, y)
    values, base = shap_values(forest, X)
    np.testing.assert_allclose(base + values.sum(axis=1), forest.predict_proba(X), rtol=0,
                               atol=1e-9)


def test_threads_give_the_same_values():
    X, y = imbalanced(200, seed=6)
    forest = AUCForestClassifier(20, random_state=0).fit(X, y)
    one, base_one = shap_values(forest, X, n_jobs=1)
    two, base_two = shap_values(forest, X, n_jobs=2)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(base_one, base_two)


# ---------------------------------------------------------- the shap package

@pytest.mark.parametrize("n_classes, n_features, max_bins",
                         [(3, 6, None), (3, 6, 32), (2, 6, None), (3, 20, None)])
def test_agrees_with_shap_tree_explainer(n_classes, n_features, max_bins):
    shap = pytest.importorskip("shap")
    X, y = imbalanced(300, n_features=n_features, n_classes=n_classes, missing=0.1, seed=7)
    forest = AUCForestClassifier(25, max_bins=max_bins, random_state=0).fit(X, y)
    values, base = shap_values(forest, X)
    explainer = shap.TreeExplainer(to_shap(forest))
    theirs = np.asarray(explainer.shap_values(X))
    assert theirs.shape == (300, n_features, n_classes)  # shap stacks the outputs last
    np.testing.assert_allclose(values, theirs, rtol=0, atol=1e-6)
    np.testing.assert_allclose(base, np.asarray(explainer.expected_value), rtol=0, atol=1e-6)
    np.testing.assert_allclose(explainer.model.predict(X), forest.predict_proba(X), atol=1e-9)


def test_shap_rounds_rows_on_the_thresholds_as_the_forest_does():
    shap = pytest.importorskip("shap")
    X, y = imbalanced(200, n_features=5, missing=0.0, seed=8)
    forest = AUCForestClassifier(20, max_depth=4, predict_min_samples=1,
                                 random_state=0).fit(X, y)
    # float64 rows whose values sit on the trees' thresholds (midpoints between
    # float32 values, which shap would otherwise compare unrounded)
    tree_ = forest.estimators_[0].tree_
    thresholds = tree_.threshold[tree_.feature >= 0]
    rows = np.tile(np.nanmedian(X, axis=0), (thresholds.size, 1))
    rows[np.arange(thresholds.size), tree_.feature[tree_.feature >= 0]] = thresholds
    explainer = shap.TreeExplainer(to_shap(forest))
    np.testing.assert_allclose(explainer.model.predict(rows), forest.predict_proba(rows),
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(explainer.shap_values(rows)), shap_values(forest, rows)[0],
                               atol=1e-6)


def test_to_shap_format():
    X, y = imbalanced(200, seed=9)
    forest = AUCForestClassifier(5, random_state=0).fit(X, y)
    model = to_shap(forest)
    assert len(model["trees"]) == 5
    for tree in model["trees"]:
        n_nodes = tree["children_left"].shape[0]
        for name in ("children_left", "children_right", "children_default", "features"):
            assert tree[name].dtype == np.int32 and tree[name].shape == (n_nodes,)
        assert tree["values"].shape == (n_nodes, 3)
        leaf = tree["children_left"] < 0
        assert np.all(tree["features"][leaf] == -1)
        # leaf values divided by the number of trees: each sums to 1/5
        np.testing.assert_allclose(tree["values"][leaf].sum(axis=1), 0.2)


def test_explanation_beeswarm_plot():
    shap = pytest.importorskip("shap")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = imbalanced(150, seed=10)
    forest = AUCForestClassifier(10, random_state=0).fit(X, y)
    values, base = shap_values(forest, X)
    names = [f"x{j}" for j in range(X.shape[1])]
    explanation = shap.Explanation(values[:, :, 2], base_values=np.full(X.shape[0], base[2]),
                                   data=X, feature_names=names)
    try:
        axis = shap.plots.beeswarm(explanation, show=False)
        labels = [label.get_text() for label in axis.get_yticklabels()]
        assert set(labels) <= set(names) and len(labels) > 0
    finally:
        plt.close("all")


# ---------------------------------------------------------- errors

def test_unfitted_model_raises():
    X, _ = imbalanced(50)
    with pytest.raises(NotFittedError):
        shap_values(AUCForestClassifier(5), X)
    with pytest.raises(NotFittedError):
        to_shap(AUCTreeClassifier())


def test_wrong_number_of_columns_raises():
    X, y = imbalanced(100)
    forest = AUCForestClassifier(5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        shap_values(forest, X[:, :4])


def test_other_models_raise_type_error():
    from sklearn.ensemble import RandomForestClassifier

    X, y = imbalanced(100)
    with pytest.raises(TypeError, match="AUCForestClassifier"):
        shap_values(RandomForestClassifier(3).fit(X[:, :3], y), X[:, :3])


def test_infinite_values_raise():
    X, y = imbalanced(100)
    forest = AUCForestClassifier(5, random_state=0).fit(X, y)
    rows = X[:3].copy()
    rows[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        shap_values(forest, rows)


# ------------------------------------------------- category frames (issue 44)

def category_frame(n=240, seed=0):
    """A frame with an int and a str category column, a numeric column with NaN,
    and labels that depend on the categories."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    size = rng.choice([10, 20, 30, 40], n)
    colour = rng.choice(["red", "green", "blue"], n)
    weight = rng.normal(size=n)
    weight[rng.random(n) < 0.1] = np.nan
    y = ((size >= 30) ^ (colour == "green")).astype(int) + 2 * ((colour == "blue") & (size == 10))
    frame = pd.DataFrame({"size": pd.Categorical(size, [10, 20, 30, 40]),
                          "colour": pd.Categorical(colour, ["red", "green", "blue"]),
                          "weight": weight})
    return frame, y


@pytest.mark.parametrize("columns", [["size", "weight"], ["colour", "weight"],
                                     ["size", "colour", "weight"]])
def test_values_on_the_category_frame_of_the_fit_add_up_to_predict_proba(columns):
    """Case 3: shap_values read the category values as codes (int categories:
    values missed predict_proba by up to 1.0; str categories: "could not convert
    string to float"). Now X is mapped as predict maps it."""
    frame, y = category_frame()
    frame = frame[columns]
    forest = AUCForestClassifier(10, random_state=0).fit(frame, y)
    values, base_values = shap_values(forest, frame)
    assert values.shape == (frame.shape[0], len(columns), 3)
    np.testing.assert_allclose(base_values + values.sum(axis=1), forest.predict_proba(frame),
                               atol=1e-12)
    tree = AUCTreeClassifier(max_depth=4, random_state=0).fit(frame, y)
    values, base_values = shap_values(tree, frame)
    np.testing.assert_allclose(base_values + values.sum(axis=1), tree.predict_proba(frame),
                               atol=1e-12)


def test_values_of_reordered_categories_are_those_of_the_fitted_order():
    frame, y = category_frame()
    forest = AUCForestClassifier(10, random_state=0).fit(frame, y)
    reordered = frame.assign(size=frame["size"].cat.reorder_categories([40, 10, 30, 20]),
                             colour=frame.colour.cat.set_categories(
                                 ["blue", "purple", "red", "green"]))
    np.testing.assert_array_equal(shap_values(forest, reordered)[0],
                                  shap_values(forest, frame)[0])


def test_unseen_levels_are_explained_as_missing_values():
    import pandas as pd

    frame, y = category_frame()
    forest = AUCForestClassifier(10, random_state=0).fit(frame, y)
    rows = frame.iloc[:20].copy()
    rows["colour"] = rows.colour.cat.add_categories(["purple"])
    rows.loc[rows.index[:5], "colour"] = "purple"
    missing = rows.copy()
    missing.loc[missing.index[:5], "colour"] = np.nan
    with pytest.warns(UserWarning, match="'colour' has 5 values of categories not seen"):
        values, base_values = shap_values(forest, rows)
    np.testing.assert_array_equal(values, shap_values(forest, missing)[0])
    with pytest.warns(UserWarning, match="not seen"):
        proba = forest.predict_proba(rows)
    np.testing.assert_allclose(base_values + values.sum(axis=1), proba, atol=1e-12)
    assert pd.isna(missing.colour.iloc[0])


def test_frames_refused_by_predict_are_refused_alike():
    frame, y = category_frame()
    forest = AUCForestClassifier(5, random_state=0).fit(frame, y)
    renamed = frame.rename(columns={"weight": "mass"})
    with pytest.raises(ValueError, match="feature names"):
        forest.predict_proba(renamed)
    with pytest.raises(ValueError, match="feature names"):
        shap_values(forest, renamed)
    as_numbers = frame.assign(size=frame["size"].astype(int))
    for explain in (forest.predict_proba, lambda X: shap_values(forest, X)):
        with pytest.raises(ValueError, match="'size' was fitted as a category column"):
            explain(as_numbers)
    numeric = AUCForestClassifier(5, random_state=0).fit(frame[["weight"]], y)
    with pytest.raises(ValueError, match="'weight' has the category dtype"):
        shap_values(numeric, frame[["weight"]].astype("category"))
