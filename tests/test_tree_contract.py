"""The forest is the mean of its trees: per-tree views agree with predict_proba.

At the defaults, on imbalanced multiclass data with missing values, where the
out-of-bag choice picks a node size above 1: predict_proba, apply,
decision_path, tree_.value, estimators_samples_ and the OOB decision function
describe one model; scikit-learn's tree tools read the trees; warm_start adds
trees as a single fit would have grown them.
"""
import matplotlib
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.tree import export_graphviz, export_text, plot_tree

import aucforest
from aucforest import AUCForestClassifier, AUCTreeClassifier, auc_split_statistic, load

matplotlib.use("Agg")


def imbalanced_with_missing(n=600, seed=3):
    X, y = make_classification(n, 8, n_informative=4, n_redundant=1, n_classes=3, flip_y=0.1,
                               weights=[0.75, 0.18, 0.07], class_sep=0.6, random_state=seed)
    X[np.random.RandomState(seed).rand(*X.shape) < 0.08] = np.nan
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = imbalanced_with_missing()
    forest = AUCForestClassifier(40, oob_score=True, random_state=0).fit(X, y)
    assert forest.predict_min_samples_ > 1  # the case the trees must follow
    return forest, X, y


def walk(tree_, x):
    """Nodes of x's path, root to leaf, by a plain walk of the node arrays."""
    path = [0]
    while tree_.feature[path[-1]] >= 0:
        node = path[-1]
        v = x[tree_.feature[node]]
        left = v <= tree_.threshold[node] or (np.isnan(v) and tree_.missing_go_to_left[node])
        path.append(tree_.children_left[node] if left else tree_.children_right[node])
    return path


def test_predict_proba_is_the_mean_of_the_trees(fitted):
    forest, X, _ = fitted
    trees = np.mean([tree.predict_proba(X) for tree in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.predict_proba(X), trees, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(forest.predict_log_proba(X), np.log(forest.predict_proba(X)))


@pytest.mark.parametrize("through", ["fit", "model file", "warm start"])
def test_the_trees_read_a_dataframe_with_category_columns_as_the_forest_does(through,
                                                                             tmp_path):
    """Each tree takes the forest's column names and categories: the mean of
    the trees' predict_proba of a DataFrame (categories reordered, missing
    values) is the forest's, and a frame with other column names is refused
    by a tree as by the forest."""
    pandas = pytest.importorskip("pandas")
    X, y = imbalanced_with_missing()
    rng = np.random.default_rng(0)
    levels = np.array(["north", "south", "east", "west"])
    frame = pandas.DataFrame(X[:, :4], columns=["a", "b", "c", "d"])
    frame["region"] = pandas.Categorical(levels[(y + rng.integers(0, 2, y.size)) % 4])
    forest = AUCForestClassifier(12 if through == "warm start" else 20, warm_start=True,
                                 random_state=0).fit(frame, y)
    if through == "model file":
        aucforest.save(forest, tmp_path / "model.npz")
        forest = load(tmp_path / "model.npz")
    elif through == "warm start":
        forest.set_params(n_estimators=20).fit(frame, y)
    assert forest.is_categorical_.tolist() == [False] * 4 + [True]
    new = frame.copy()
    new["region"] = new["region"].cat.reorder_categories(levels[::-1])
    new.loc[:9, "region"] = np.nan
    for data in (frame, new):
        trees = np.mean([tree.predict_proba(data) for tree in forest], axis=0)
        np.testing.assert_allclose(forest.predict_proba(data), trees, rtol=1e-12, atol=1e-15)
    renamed = frame.rename(columns={"a": "z"})
    for model in (forest, forest[0]):
        with pytest.raises(ValueError, match="feature names"):
            model.predict_proba(renamed)


def test_apply_leads_to_the_values_the_trees_predict(fitted):
    forest, X, _ = fitted
    leaves = forest.apply(X)
    for i, tree in enumerate(forest.estimators_):
        assert tree.tree_.value.shape == (tree.tree_.node_count, 1, forest.n_classes_)
        assert np.all(tree.tree_.feature[leaves[:, i]] < 0)  # leaves, not inner nodes
        np.testing.assert_array_equal(tree.tree_.value[leaves[:, i], 0], tree.predict_proba(X))


def test_decision_path_is_the_walk_from_root_to_leaf(fitted):
    forest, X, _ = fitted
    rows = X[:25]
    indicator, n_nodes_ptr = forest.decision_path(rows)
    sizes = [tree.tree_.node_count for tree in forest.estimators_]
    np.testing.assert_array_equal(n_nodes_ptr, np.concatenate([[0], np.cumsum(sizes)]))
    assert indicator.shape == (25, n_nodes_ptr[-1])
    leaves = forest.apply(rows)
    for i, tree in enumerate(forest.estimators_):
        block = indicator[:, n_nodes_ptr[i]:n_nodes_ptr[i + 1]].toarray()
        own = tree.decision_path(rows).toarray()
        np.testing.assert_array_equal(block, own)
        for r, x in enumerate(rows.astype(np.float32)):
            path = walk(tree.tree_, x)
            np.testing.assert_array_equal(np.flatnonzero(block[r]), sorted(path))
            assert path[-1] == leaves[r, i]


def test_estimators_samples_reproduce_the_oob_decision_function(fitted):
    forest, X, _ = fitted
    n = X.shape[0]
    total, used = np.zeros((n, forest.n_classes_)), np.zeros(n)
    for tree, drawn in zip(forest.estimators_, forest.estimators_samples_):
        out = np.bincount(drawn, minlength=n) == 0
        total[out] += tree.predict_proba(X[out])
        used[out] += 1
    has = used > 0
    np.testing.assert_allclose(forest.oob_decision_function_[has],
                               total[has] / used[has, None], rtol=1e-12)


def test_collapsed_trees_predict_from_the_deepest_node_with_enough_cases(fitted):
    # reference: the same trees as grown, walked to the last node holding at
    # least predict_min_samples_ training cases
    forest, X, y = fitted
    grown = AUCForestClassifier(40, predict_min_samples=1, random_state=0).fit(X, y)
    m = forest.predict_min_samples_
    rows = X[:60].astype(np.float32)
    for tree, as_grown in zip(forest.estimators_, grown.estimators_):
        t = as_grown.tree_
        nodes = [[n for n in walk(t, x) if t.n_node_samples[n] >= m][-1] for x in rows]
        np.testing.assert_array_equal(tree.predict_proba(rows), t.proba[nodes])
        assert tree.tree_.node_count <= t.node_count
        collapsed_again = tree.tree_.collapsed(m)  # a second collapse changes nothing
        for name, array in tree.tree_.node_arrays().items():
            np.testing.assert_array_equal(collapsed_again.node_arrays()[name], array)


def test_scikit_learn_tree_tools_read_the_trees(fitted):
    forest, _, _ = fitted
    tree = forest.estimators_[0]
    t = tree.tree_
    text = export_text(tree, feature_names=[f"x{j}" for j in range(8)], show_weights=True)
    assert text.count("class:") == t.n_leaves
    assert text.count(" <= ") == np.count_nonzero(t.feature >= 0)
    dot = export_graphviz(tree, class_names=["a", "b", "c"], filled=True)
    assert dot.count("->") == t.node_count - 1
    assert "auc = " in dot  # the criterion's name labels theta of each split
    annotations = plot_tree(tree, class_names=["a", "b", "c"])
    texts = [a.get_text() for a in annotations]
    assert len(texts) == t.node_count + 2  # and the root's "True" and "False" edges
    assert sum(text.startswith("auc = 0.5\n") for text in texts) == t.n_leaves


@pytest.mark.parametrize("criterion", ["auc", "auc_ecp"])
def test_impurity_under_the_auc_criteria_is_theta_of_the_split(criterion):
    X, y = imbalanced_with_missing(400, seed=0)
    t = AUCTreeClassifier(criterion=criterion, random_state=0).fit(X, y).tree_
    weight = t.weighted_n_node_samples
    for node in np.flatnonzero(t.feature >= 0):
        left, right = t.children_left[node], t.children_right[node]
        table = np.column_stack([t.proba[left] * weight[left], t.proba[right] * weight[right]])
        assert t.impurity[node] == pytest.approx(auc_split_statistic(table), abs=1e-9)
    assert np.all(t.impurity[t.feature < 0] == 0.5)
    gini = AUCTreeClassifier(criterion="gini", random_state=0).fit(X, y).tree_
    np.testing.assert_allclose(gini.impurity, 1 - (gini.proba ** 2).sum(axis=1), atol=1e-12)


def test_a_model_file_of_grown_trees_loads_collapsed(fitted, tmp_path):
    # files written before fit collapsed the trees hold them as grown, with the
    # node size in their metadata: loading collapses them
    forest, X, y = fitted
    grown = AUCForestClassifier(40, predict_min_samples=1, random_state=0).fit(X, y)
    grown.predict_min_samples_ = forest.predict_min_samples_  # as such a file says
    aucforest.save(grown, tmp_path / "grown.npz")
    aucforest.save(forest, tmp_path / "collapsed.npz")
    for name in ("grown.npz", "collapsed.npz"):
        loaded = load(tmp_path / name)
        np.testing.assert_array_equal(loaded.predict_proba(X), forest.predict_proba(X))
        for a, b in zip(loaded.estimators_, forest.estimators_):
            assert a.tree_.node_count == b.tree_.node_count
    assert (tmp_path / "collapsed.npz").stat().st_size < (tmp_path / "grown.npz").stat().st_size


# ------------------------------------------------------------------ warm start

def assert_same_forest(a, b, X):
    assert len(a.estimators_) == len(b.estimators_)
    for s, t in zip(a.estimators_, b.estimators_):
        assert s.random_state == t.random_state
        for name, array in s.tree_.node_arrays().items():
            np.testing.assert_array_equal(array, t.tree_.node_arrays()[name], err_msg=name)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.predict_min_samples_ == b.predict_min_samples_


@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")  # the first 12 trees
@pytest.mark.parametrize("params", [{"oob_score": True}, {}, {"predict_min_samples": 5},
                                    {"max_bins": 16, "oob_score": True}])
def test_warm_start_adds_the_trees_a_single_fit_grows(params):
    X, y = imbalanced_with_missing(600, seed=2)
    once = AUCForestClassifier(30, random_state=4, **params).fit(X, y)
    grown = AUCForestClassifier(12, random_state=4, warm_start=True, **params).fit(X, y)
    first_trees = list(grown.estimators_)
    grown.set_params(n_estimators=30).fit(X, y)
    assert_same_forest(grown, once, X)
    assert all(a.random_state == b.random_state for a, b in zip(first_trees, grown.estimators_))
    if params.get("oob_score"):
        np.testing.assert_array_equal(grown.oob_decision_function_, once.oob_decision_function_)
        assert grown.oob_score_ == once.oob_score_
    if hasattr(once, "oob_scores_by_min_samples_"):
        assert grown.oob_scores_by_min_samples_ == once.oob_scores_by_min_samples_


def test_warm_start_refuses_what_it_cannot_do():
    X, y = imbalanced_with_missing(600, seed=2)
    forest = AUCForestClassifier(10, random_state=0, warm_start=True).fit(X, y)
    with pytest.warns(UserWarning, match="without increasing n_estimators"):
        forest.fit(X, y)
    assert len(forest.estimators_) == 10
    with pytest.raises(ValueError, match="n_estimators=5 must be at least the 10 trees"):
        forest.set_params(n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match="same features and classes"):
        forest.set_params(n_estimators=12).fit(X[:, :5], y)
    assert len(forest.estimators_) == 10  # a refused fit keeps the model
    # collapsed to 5 without warm_start: choosing the size again ("oob") needs the grown trees
    cold = AUCForestClassifier(10, predict_min_samples=5, random_state=0).fit(X, y)
    assert cold.predict_min_samples_ == 5 and not hasattr(cold, "_grown_trees_")
    with pytest.raises(ValueError, match="needs the trees as grown"):
        cold.set_params(warm_start=True, n_estimators=12, predict_min_samples="oob").fit(X, y)


def test_feature_importances_are_the_normalised_mean_of_the_trees(fitted):
    forest, _, _ = fitted
    mean = np.mean([tree.feature_importances_ for tree in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.feature_importances_, mean / mean.sum(), rtol=1e-12)
