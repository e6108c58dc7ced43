"""Categorical splits in the engine: the chosen set of levels against brute
force over all partitions, the ordering of more classes against an independent
numpy principal component, and every traversal of the stored level sets
(prediction, forests, TreeSHAP, OOB permutation, model files, pickle, collapse)."""
import itertools
import pickle

import numpy as np
import pytest

from aucforest import AUCForestClassifier, AUCTreeClassifier, auc_split_statistic, load, save
from aucforest._tree import MAX_CATEGORIES, Tree
from aucforest.inspection import shap_values, to_shap
from aucforest.inspection._permute import add_permuted_oob, random_permutation
from references import split_value

SPLITTERS = {"exact": None, "binned": 255}


def statistic(table, criterion):
    """The split's value: theta (`auc_split_statistic`) or the Gini decrease."""
    return auc_split_statistic(table) if criterion == "auc" else split_value(table, criterion)


def table_of(left, y, w, n_classes):
    return np.column_stack([np.bincount(y[left], weights=w[left], minlength=n_classes),
                            np.bincount(y[~left], weights=w[~left], minlength=n_classes)])


def groups_of(codes):
    """Each row's group: its level, or one group more for NaN."""
    groups = np.where(np.isnan(codes), -1, codes).astype(int)
    labels = np.unique(groups)
    return np.searchsorted(labels, groups), labels.size


def brute_force_partitions(codes, y, w, n_classes, criterion):
    """Best value over all 2^(G-1) - 1 splits of the G groups (levels, and
    missing values as one more group) into two non-empty sides."""
    group, n_groups = groups_of(codes)
    best = -np.inf
    for mask in range(1, 2 ** (n_groups - 1)):  # group G-1 always right: each split once
        left = np.array([(mask >> g) & 1 for g in range(n_groups)], dtype=bool)[group]
        best = max(best, statistic(table_of(left, y, w, n_classes), criterion))
    return best


def root_value(model, X, y, w, n_classes, criterion):
    """The value of the split the tree made at its root, from the rows it sends left."""
    leaves = model.tree_.apply(np.ascontiguousarray(X, dtype=np.float32))
    return statistic(table_of(leaves == 1, y, w, n_classes), criterion)


def random_factor(rng, n_levels, n_classes, n, missing=0.0):
    """Levels with class compositions of their own, random weights."""
    codes = rng.integers(0, n_levels, n).astype(np.float64)
    probs = rng.dirichlet(np.full(n_classes, 0.7), size=n_levels)
    y = np.array([rng.choice(n_classes, p=probs[int(c)]) for c in codes])
    codes[rng.random(n) < missing] = np.nan
    w = rng.uniform(0.2, 3.0, n)
    return codes, y, w


def stump(criterion, splitter, **kwargs):
    return AUCTreeClassifier(criterion=criterion, max_depth=1, max_bins=SPLITTERS[splitter],
                             categorical_features=[0], random_state=0, **kwargs)


@pytest.mark.parametrize("splitter", SPLITTERS)
@pytest.mark.parametrize("criterion", ["auc", "gini"])
@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_two_classes_best_split_is_the_best_of_all_partitions(splitter, criterion, missing):
    rng = np.random.default_rng(1)
    for trial in range(6):
        n_levels = int(rng.integers(3, 9))
        codes, y, w = random_factor(rng, n_levels, 2, 150, missing)
        if np.unique(y).size < 2:
            continue
        X = codes[:, None]
        model = stump(criterion, splitter).fit(X, y, sample_weight=w)
        assert model.tree_.categorical_split[0] == 1
        expected = brute_force_partitions(codes, y, w / w.max(), 2, criterion)
        found = root_value(model, X, y, w / w.max(), 2, criterion)
        assert found == pytest.approx(expected, rel=1e-9, abs=1e-12)


def principal_component_order(codes, y, w, n_classes):
    """Levels ordered by their score on the first principal component of the
    class-proportion matrix, each level weighted by its weight (numpy's eigh)."""
    levels = np.unique(codes[~np.isnan(codes)]).astype(int)
    weights = np.array([np.bincount(y[codes == level], weights=w[codes == level],
                                    minlength=n_classes) for level in levels])
    size = weights.sum(axis=1)
    proportions = weights / size[:, None]
    mean = size @ proportions / size.sum()
    centred = proportions - mean
    covariance = (centred * size[:, None]).T @ centred
    vector = np.linalg.eigh(covariance)[1][:, -1]
    return levels[np.argsort(proportions @ vector, kind="stable")]


@pytest.mark.parametrize("splitter", SPLITTERS)
@pytest.mark.parametrize("criterion", ["auc", "gini"])
@pytest.mark.parametrize("n_classes", [3, 4, 5])
def test_more_classes_split_at_least_the_best_cut_of_the_principal_component_order(
        splitter, criterion, n_classes):
    rng = np.random.default_rng(n_classes)
    gaps = []
    for trial in range(5):
        codes, y, w = random_factor(rng, int(rng.integers(4, 9)), n_classes, 200, missing=0.08)
        if np.unique(y).size < n_classes:
            continue
        w = w / w.max()
        X = codes[:, None]
        model = stump(criterion, splitter).fit(X, y, sample_weight=w)
        order = principal_component_order(codes, y, w, n_classes)
        best_cut = max(statistic(table_of(np.isin(codes, order[:i]), y, w, n_classes), criterion)
                       for i in range(1, order.size))
        found = root_value(model, X, y, w, n_classes, criterion)
        assert found >= best_cut - 1e-9 * abs(best_cut)
        best = brute_force_partitions(codes, y, w, n_classes, criterion)
        gaps.append(best - found)
        if criterion == "auc":  # one order per class ranking: the best of all partitions
            assert found == pytest.approx(best, rel=1e-9)
    # for Gini the principal-component order is a heuristic: how far from all partitions
    print(f"K={n_classes} {criterion} {splitter}: brute force - found = "
          f"{np.round(gaps, 5).tolist()}")
    assert gaps and min(gaps) >= -1e-9


def test_a_non_monotone_set_of_levels_takes_one_split():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 10, 600).astype(float)
    y = np.isin(codes, [2, 5, 7]).astype(int)
    X = codes[:, None]
    for splitter in SPLITTERS:
        for criterion in ("auc", "gini"):
            model = stump(criterion, splitter).fit(X, y)
            assert model.score(X, y) == 1.0
            left = model.tree_.left_levels[0]
            sent_left = [level for level in range(10) if (int(left[0]) >> level) & 1]
            assert sent_left in ([2, 5, 7], [0, 1, 3, 4, 6, 8, 9])
            ordinal = AUCTreeClassifier(criterion=criterion, max_bins=SPLITTERS[splitter],
                                        random_state=0).fit(X, y)
            assert ordinal.tree_.n_leaves >= 4  # three runs of positive codes


def naive_leaf(tree_, row):
    """Walk one row down the tree from its public arrays, in Python."""
    rows_of_sets = np.cumsum(tree_.categorical_split) - 1
    node = 0
    while tree_.children_left[node] >= 0:
        value = row[tree_.feature[node]]
        if tree_.categorical_split[node]:
            if np.isnan(value) or not 0 <= value < 256:
                left = bool(tree_.missing_go_to_left[node])
            else:
                level = int(value)
                word = int(tree_.left_levels[rows_of_sets[node], level // 64])
                left = bool((word >> (level % 64)) & 1)
        elif np.isnan(value):
            left = bool(tree_.missing_go_to_left[node])
        else:
            left = value <= tree_.threshold[node]
        node = tree_.children_left[node] if left else tree_.children_right[node]
    return node


def mixed_data(rng, n, n_classes=2, n_levels=40, missing=0.1):
    """A high-cardinality factor carrying the signal, a numeric feature and noise."""
    codes = rng.integers(0, n_levels, n).astype(float)
    effect = rng.normal(size=(n_levels, n_classes))
    numeric = rng.normal(size=n)
    score = effect[codes.astype(int)] + 0.5 * numeric[:, None] * np.arange(n_classes)
    y = np.argmax(score + rng.gumbel(size=score.shape), axis=1)
    small = rng.integers(0, 5, n).astype(float)
    codes[rng.random(n) < missing] = np.nan
    small[rng.random(n) < missing] = np.nan
    X = np.column_stack([codes, numeric, small, rng.normal(size=n)])
    return X, y


@pytest.mark.parametrize("splitter", SPLITTERS)
@pytest.mark.parametrize("criterion", ["auc", "gini"])
def test_prediction_follows_the_stored_sets(splitter, criterion):
    rng = np.random.default_rng(2)
    X, y = mixed_data(rng, 400)
    model = AUCTreeClassifier(criterion=criterion, max_bins=SPLITTERS[splitter],
                              categorical_features=[0, 2], min_samples_leaf=3,
                              random_state=0).fit(X, y)
    tree_ = model.tree_
    assert tree_.categorical_split.sum() > 1
    assert np.all(np.isnan(tree_.threshold[tree_.categorical_split == 1]))
    test = mixed_data(rng, 300)[0]
    test[:20, 0] = 60.0  # levels never seen at fit
    test[20:40, 2] = 254.0
    leaves = model.apply(test)
    assert leaves.tolist() == [naive_leaf(tree_, row) for row in test]
    indicator = model.decision_path(test).toarray()
    assert np.array_equal(np.flatnonzero(indicator[0]).max(), leaves[0])


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_missing_and_unseen_levels_go_the_missing_direction(splitter):
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 6, 500).astype(float)
    y = np.isin(codes, [1, 4]).astype(int)
    for training_missing in (False, True):
        if training_missing:  # the missing cases are positive: the learnt side is theirs
            codes[:40] = np.nan
            y[:40] = 1
        model = stump("auc", splitter).fit(codes[:, None], y)
        tree_ = model.tree_
        missing_side = 1 if tree_.missing_go_to_left[0] else tree_.children_right[0]
        rows = np.array([[np.nan], [9.0], [200.0], [6.0]])
        assert model.apply(rows).tolist() == [missing_side] * 4
        if training_missing:
            assert model.predict([[np.nan]])[0] == 1


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_forest_is_the_mean_of_its_trees_and_shap_adds_up(splitter):
    rng = np.random.default_rng(4)
    X, y = mixed_data(rng, 300, n_classes=3)
    forest = AUCForestClassifier(20, max_bins=SPLITTERS[splitter], categorical_features=[0, 2],
                                 predict_min_samples=5, random_state=0).fit(X, y)
    assert any(tree.tree_.categorical_split.any() for tree in forest.estimators_)
    test = mixed_data(rng, 50, n_classes=3)[0]
    test[:5, 0] = 100.0
    mean = np.mean([tree.tree_.predict_proba(test.astype(np.float32))
                    for tree in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.predict_proba(test), mean, rtol=1e-12, atol=1e-15)
    values, base = shap_values(forest, test)
    np.testing.assert_allclose(base + values.sum(axis=1), forest.predict_proba(test),
                               atol=1e-10)
    with pytest.raises(ValueError, match="categorical splits"):
        to_shap(forest)


def test_oob_permutation_follows_the_sets():
    rng = np.random.default_rng(5)
    X, y = mixed_data(rng, 300)
    forest = AUCForestClassifier(5, max_bins=None, categorical_features=[0, 2],
                                 predict_min_samples=1, random_state=0).fit(X, y)
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    for estimator, rows in zip(forest.estimators_, forest.estimators_samples_):
        tree_ = estimator.tree_
        oob = np.setdiff1d(np.arange(X.shape[0]), rows)
        for feature in (0, 2):
            out = np.zeros((X.shape[0], 2))
            add_permuted_oob(X32, oob, tree_.apply(X32[oob]), 7, feature, tree_, out)
            permuted = X32[oob].copy()
            permuted[:, feature] = X32[oob[random_permutation(oob.size, 7)], feature]
            np.testing.assert_array_equal(out[oob], tree_.predict_proba(permuted))
    from aucforest.inspection import oob_importance
    importance = oob_importance(forest, X, y, random_state=0)
    values = np.asarray(getattr(importance, "importances_mean", importance))
    assert np.all(np.isfinite(values))


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_model_file_pickle_and_collapse_keep_the_sets(splitter, tmp_path):
    rng = np.random.default_rng(6)
    X, y = mixed_data(rng, 300)
    forest = AUCForestClassifier(10, max_bins=SPLITTERS[splitter], categorical_features=[0, 2],
                                 predict_min_samples=1, random_state=0).fit(X, y)
    test = mixed_data(rng, 80)[0]
    test[:5, 0] = 77.0
    expected = forest.predict_proba(test)
    save(forest, tmp_path / "model.aucf")
    loaded = load(tmp_path / "model.aucf")
    np.testing.assert_array_equal(loaded.predict_proba(test), expected)
    np.testing.assert_array_equal(loaded.is_categorical_, [True, False, True, False])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(forest)).predict_proba(test),
                                  expected)
    test32 = test.astype(np.float32)
    for estimator in forest.estimators_:
        tree_ = estimator.tree_
        collapsed = tree_.collapsed(20)
        assert collapsed.node_count < tree_.node_count
        assert collapsed.left_levels.shape[0] == collapsed.categorical_split.sum()
        # the deepest node with >= 20 cases on each row's path, found in the full tree
        expected_nodes = []
        for row in test32:
            node = 0
            while tree_.children_left[node] >= 0:
                child = naive_leaf_step(tree_, node, row)
                if tree_.n_node_samples[child] < 20:
                    break
                node = child
            expected_nodes.append(tree_.proba[node])
        np.testing.assert_array_equal(collapsed.predict_proba(test32), expected_nodes)


def naive_leaf_step(tree_, node, row):
    """The child of ``node`` a row goes to (one step of `naive_leaf`)."""
    rows_of_sets = np.cumsum(tree_.categorical_split) - 1
    value = row[tree_.feature[node]]
    if np.isnan(value) or (tree_.categorical_split[node] and not 0 <= value < 256):
        left = bool(tree_.missing_go_to_left[node])
    elif tree_.categorical_split[node]:
        level = int(value)
        left = bool((int(tree_.left_levels[rows_of_sets[node], level // 64]) >> (level % 64)) & 1)
    else:
        left = value <= tree_.threshold[node]
    return tree_.children_left[node] if left else tree_.children_right[node]


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_nsplit_draws_cuts_among_the_ordered_levels(splitter):
    rng = np.random.default_rng(7)
    codes, y, w = random_factor(rng, 30, 2, 600)
    X = codes[:, None]
    full = stump("auc", splitter).fit(X, y)
    drawn = stump("auc", splitter, nsplit=3).fit(X, y)
    best = root_value(full, X, y, np.ones_like(w), 2, "auc")
    assert root_value(drawn, X, y, np.ones_like(w), 2, "auc") <= best + 1e-12
    assert drawn.tree_.categorical_split[0] == 1
    values = {root_value(stump("auc", splitter, nsplit=1).set_params(random_state=seed)
                         .fit(X, y), X, y, np.ones_like(w), 2, "auc") for seed in range(6)}
    assert len(values) > 1  # a single drawn cut varies with the seed


def test_leaf_bounds_hold_at_categorical_splits():
    rng = np.random.default_rng(8)
    codes, y, w = random_factor(rng, 12, 2, 300)
    for splitter in SPLITTERS:
        model = AUCTreeClassifier(max_bins=SPLITTERS[splitter], categorical_features=[0],
                                  min_samples_leaf=25, random_state=0).fit(codes[:, None], y)
        leaves = model.tree_.n_node_samples[model.tree_.children_left < 0]
        assert leaves.min() >= 25


@pytest.mark.parametrize("value", [1.5, -1.0, float(MAX_CATEGORIES)])
def test_codes_that_are_not_levels_are_refused(value):
    X = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 0.5], [value, 0.2]])
    y = [0, 1, 0, 1]
    with pytest.raises(ValueError, match="categorical feature 0 must hold level codes"):
        AUCTreeClassifier(categorical_features=[0]).fit(X, y)
    model = AUCForestClassifier(3, categorical_features=np.array([True, False]),
                                random_state=0).fit(X[:3], y[:3])
    with pytest.raises(ValueError, match="categorical feature 0 must hold level codes"):
        model.predict(X)


def test_categorical_features_resolution():
    X = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 0.0], [1.0, 3.0]])
    y = [0, 1, 0, 1]
    assert AUCTreeClassifier().fit(X, y).is_categorical_.tolist() == [False, False]
    assert AUCTreeClassifier(categorical_features=[1]).fit(X, y).is_categorical_.tolist() \
        == [False, True]
    with pytest.raises(ValueError, match="out of range"):
        AUCTreeClassifier(categorical_features=[2]).fit(X, y)
    with pytest.raises(ValueError, match="one entry per feature"):
        AUCTreeClassifier(categorical_features=[True]).fit(X, y)


def test_tree_arrays_are_validated():
    model = AUCTreeClassifier(categorical_features=[0], max_depth=1).fit(
        [[0.0], [1.0], [2.0], [1.0]], [0, 1, 0, 1])
    arrays = model.tree_.node_arrays()
    Tree(1, 2, max_depth=1, **arrays)  # as they are: fine
    with pytest.raises(ValueError, match="left_levels"):
        Tree(1, 2, max_depth=1, **dict(arrays, left_levels=np.zeros((2, 4), np.uint64)))
    with pytest.raises(ValueError, match="leaf is marked"):
        Tree(1, 2, max_depth=1, **dict(arrays, categorical_split=np.array([1, 1, 0])))
    plain = {name: value for name, value in arrays.items()
             if name not in ("categorical_split", "left_levels")}
    with pytest.raises(ValueError, match="finite"):
        Tree(1, 2, max_depth=1, **plain)  # a NaN threshold without its set


def test_model_files_without_categorical_splits_are_unchanged_and_crafted_sets_are_refused(
        tmp_path):
    import zipfile
    rng = np.random.default_rng(9)
    X, y = mixed_data(rng, 200)
    X = np.nan_to_num(X)
    plain = AUCForestClassifier(5, random_state=0).fit(X, y)
    save(plain, tmp_path / "plain.aucf")
    with zipfile.ZipFile(tmp_path / "plain.aucf") as archive:
        names = set(archive.namelist())
    assert not names & {"categorical_split.npy", "left_levels.npy", "is_categorical.npy"}
    np.testing.assert_array_equal(load(tmp_path / "plain.aucf").predict_proba(X),
                                  plain.predict_proba(X))
    forest = AUCForestClassifier(5, categorical_features=[0], random_state=0).fit(X, y)
    save(forest, tmp_path / "model.aucf")
    with zipfile.ZipFile(tmp_path / "model.aucf") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(tmp_path / "crafted.aucf", "w") as archive:
        for name, content in members.items():
            if name != "categorical_split.npy":
                archive.writestr(name, content)
    with pytest.raises(ValueError, match="companion"):
        load(tmp_path / "crafted.aucf")


def test_dask_input_with_categorical_features_splits_level_sets(dask_client):
    """categorical_features on a dask array was refused (issue 43 item 7:
    tests/test_dask_categories.py); now its codes are split by level sets."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 5, 400).astype(float)
    X = np.column_stack([codes, rng.normal(size=400)])
    y = np.isin(codes, [0, 2, 4]).astype(int)  # not a threshold of the codes
    forest = AUCForestClassifier(3, categorical_features=[0], max_depth=1,
                                 random_state=0).fit(da.from_array(X, chunks=100),
                                                     da.from_array(y, chunks=100))
    assert forest.is_categorical_.tolist() == [True, False]
    for tree in forest.estimators_:
        assert tree.tree_.categorical_split[0] == 1
    np.testing.assert_array_equal(forest.predict(X), y)


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_the_kernel_takes_unchecked_codes_out_of_range_as_missing(splitter):
    from aucforest._base import grow_tree, training_matrix
    rng = np.random.default_rng(10)
    codes, y, w = random_factor(rng, 8, 2, 300, missing=0.1)
    odd = codes.copy()
    odd[np.isnan(codes)] = rng.choice([-3.0, 255.0, 300.0], np.isnan(codes).sum())
    mask = np.array([True])
    trees = []
    for column in (codes, odd):
        X = np.asfortranarray(column[:, None], dtype=np.float32)
        X = training_matrix(X, SPLITTERS[splitter], np.random.RandomState(0), mask)
        trees.append(grow_tree(X, y, w, 2, criterion="auc", max_features=None, max_depth=None,
                               min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                               max_bins=SPLITTERS[splitter], nsplit=None, seed=3,
                               is_categorical=mask))
    for name, array in trees[0].node_arrays().items():
        np.testing.assert_array_equal(trees[1].node_arrays()[name], array, err_msg=name)
    probe = np.array([[np.nan], [-3.0], [255.0], [300.0]], dtype=np.float32)
    assert len(set(trees[0].apply(probe).tolist())) == 1
