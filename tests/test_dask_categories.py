"""Categorical features on Dask (issue 43 item 7): a dask DataFrame's
``category`` columns, and ``categorical_features`` on a dask array or frame,
train with level-set splits as in memory, levels matched by value.

A real LocalCluster (two worker processes), shared by the module. References:
the same data fitted with one partition (any partitioning, any partition
category order), the in-memory categorical fit (the root's level set, AUC),
the codes fitted as numbers (much worse), the dense predict of the fitted
forest, brute-force out-of-bag sums from the per-tree draws.
"""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import aucforest
from aucforest import AUCForestClassifier
from aucforest.inspection import shap_values

from dask_testing import assert_same_trees, chunked

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")

LETTERS = ["a", "b", "c", "d", "e"]
SIZES = [10, 20, 30, 40]


def membership_data(n=900, seed=0):
    """A frame whose class is decided by level membership ({a, c, e} against
    {b, d}) of a str category column, an int category column of weaker
    signal, a numeric noise column; missing values in both category columns."""
    rng = np.random.RandomState(seed)
    letter = rng.choice(LETTERS, n)
    size = rng.choice(SIZES, n)
    y = (np.isin(letter, ["a", "c", "e"]) ^ (rng.rand(n) < 0.1)).astype(int)
    y = np.where(rng.rand(n) < 0.2, (size == 30).astype(int), y)
    frame = pd.DataFrame({
        "noise": rng.randn(n),
        "letter": pd.Categorical(letter, categories=LETTERS),
        "size": pd.Categorical(size, categories=SIZES),
    })
    frame.loc[rng.rand(n) < 0.05, "letter"] = np.nan
    frame.loc[rng.rand(n) < 0.05, "size"] = np.nan
    return frame, y


def codes_of(frame):
    """The frame as a float array: category columns as their codes, NaN missing."""
    columns = []
    for name in frame.columns:
        column = frame[name]
        if str(column.dtype) == "category":
            codes = column.cat.codes.to_numpy().astype(np.float64)
            codes[codes < 0] = np.nan
            columns.append(codes)
        else:
            columns.append(column.to_numpy(dtype=np.float64))
    return np.column_stack(columns)


def dask_frame(frame, y, npartitions):
    return (dd.from_pandas(frame, npartitions=npartitions, sort=False),
            dd.from_pandas(pd.Series(y), npartitions=npartitions, sort=False))


def _own_categories(part):
    """A partition whose category columns have categories of their own: the
    values present, in reverse order."""
    part = part.copy()
    for name in ("letter", "size"):
        present = [v for v in part[name].cat.categories if (part[name] == v).any()]
        part[name] = part[name].cat.set_categories(present[::-1])
    return part


def reordered_partitions(frame, y, npartitions):
    """A dask frame (and y) of ``npartitions`` whose partitions carry their own
    categories (`_own_categories`); its meta keeps the frame's, known."""
    X, y = dask_frame(frame, y, npartitions)
    return X.map_partitions(_own_categories, meta=frame.iloc[:0]), y


PARAMS = dict(n_estimators=4, random_state=0, min_samples_leaf=3)


# ---------------------------------------------------------------- (a) partitioning

def test_category_frame_fits_the_same_forest_for_any_partitioning(dask_client, small_nodes):
    frame, y = membership_data()
    reference = AUCForestClassifier(**PARAMS).fit(*dask_frame(frame, y, 1))
    assert reference.is_categorical_.tolist() == [False, True, True]
    assert reference.categories_ == [None, LETTERS, SIZES]
    assert any(t.tree_.categorical_split.any() for t in reference.estimators_)
    for npartitions in (3, 7):
        forest = AUCForestClassifier(**PARAMS).fit(*dask_frame(frame, y, npartitions))
        assert_same_trees(forest, reference)
    # partitions whose categories are subsets in other orders: levels matched by value
    forest = AUCForestClassifier(**PARAMS).fit(
        *reordered_partitions(frame, y, 4))
    assert forest.categories_ == [None, LETTERS, SIZES]
    assert_same_trees(forest, reference)


# ---------------------------------------------------------------- (b) level sets

def _left_letters(tree_, node=0):
    bits = tree_.left_levels[np.cumsum(tree_.categorical_split)[node] - 1]
    return {LETTERS[c] for c in range(len(LETTERS)) if (int(bits[c // 64]) >> (c % 64)) & 1}


def test_splits_are_level_sets_as_in_memory(dask_client, small_nodes):
    frame, y = membership_data(n=1200)
    train, test = slice(0, 900), slice(900, None)
    params = dict(n_estimators=1, bootstrap=False, max_features=None, max_depth=1,
                  random_state=0)
    on_dask = AUCForestClassifier(**params).fit(*dask_frame(frame[train], y[train], 3))
    in_memory = AUCForestClassifier(**params).fit(frame[train], y[train])
    dask_root, memory_root = on_dask.estimators_[0].tree_, in_memory.estimators_[0].tree_
    assert memory_root.feature[0] == dask_root.feature[0] == 1
    assert dask_root.categorical_split[0] == memory_root.categorical_split[0] == 1
    assert _left_letters(dask_root) == _left_letters(memory_root)
    assert _left_letters(dask_root) in ({"a", "c", "e"}, {"b", "d"})
    np.testing.assert_array_equal(dask_root.n_node_samples, memory_root.n_node_samples)
    assert dask_root.missing_go_to_left[0] == memory_root.missing_go_to_left[0]

    params = dict(n_estimators=20, random_state=0, max_depth=2)
    auc = {}
    on_dask = AUCForestClassifier(**params).fit(*dask_frame(frame[train], y[train], 3))
    auc["dask"] = roc_auc_score(y[test], on_dask.predict_proba(frame[test])[:, 1])
    in_memory = AUCForestClassifier(**params).fit(frame[train], y[train])
    auc["memory"] = roc_auc_score(y[test], in_memory.predict_proba(frame[test])[:, 1])
    X = codes_of(frame)
    numbers = AUCForestClassifier(**params).fit(*chunked([300] * 3, X[train], y[train]))
    auc["numbers"] = roc_auc_score(y[test], numbers.predict_proba(X[test])[:, 1])
    assert abs(auc["dask"] - auc["memory"]) < 0.02, auc
    assert auc["dask"] > auc["numbers"] + 0.05, auc


@pytest.mark.parametrize("criterion", ["auc", "gini"])
def test_three_class_root_level_set_is_the_in_memory_one(dask_client, small_nodes, criterion):
    """Three classes: under AUC one level order per class ranking (exact over
    all partitions), under Gini the class-composition order; the Dask root's
    level set and children are the in-memory root's."""
    rng = np.random.RandomState(5)
    n = 900
    letter = rng.choice(LETTERS, n)
    y = np.select([np.isin(letter, ["a", "d"]), np.isin(letter, ["b", "e"])], [0, 1], 2)
    y = np.where(rng.rand(n) < 0.25, rng.randint(0, 3, n), y)
    frame = pd.DataFrame({"noise": rng.randn(n),
                          "letter": pd.Categorical(letter, categories=LETTERS)})
    params = dict(n_estimators=1, bootstrap=False, max_features=None, max_depth=1,
                  criterion=criterion, random_state=0)
    on_dask = AUCForestClassifier(**params).fit(*dask_frame(frame, y, 3))
    in_memory = AUCForestClassifier(**params).fit(frame, y)
    dask_root, memory_root = on_dask.estimators_[0].tree_, in_memory.estimators_[0].tree_
    assert dask_root.feature[0] == memory_root.feature[0] == 1
    assert _left_letters(dask_root) == _left_letters(memory_root)
    np.testing.assert_array_equal(dask_root.n_node_samples, memory_root.n_node_samples)
    np.testing.assert_allclose(dask_root.improvement, memory_root.improvement, rtol=1e-12)


# ---------------------------------------------------------------- (c) codes in an array

@pytest.mark.parametrize("given", [[1, 2], np.array([False, True, True])])
def test_categorical_features_on_an_array_equal_the_category_frame(dask_client, small_nodes,
                                                                   given):
    frame, y = membership_data()
    reference = AUCForestClassifier(**PARAMS).fit(*dask_frame(frame, y, 3))
    X = codes_of(frame)
    forest = AUCForestClassifier(**PARAMS, categorical_features=given).fit(
        *chunked([300, 250, 350], X, y))
    assert forest.is_categorical_.tolist() == [False, True, True]
    assert forest.categories_ == [None, None, None]
    assert_same_trees(forest, reference)
    # the frame with names, and its codes as numbers named categorical
    named = AUCForestClassifier(**PARAMS, categorical_features=["letter", "size"]).fit(
        *dask_frame(frame, y, 2))
    assert_same_trees(named, reference)
    numeric = pd.DataFrame(X, columns=frame.columns)
    coded = AUCForestClassifier(**PARAMS, categorical_features=["letter", "size"]).fit(
        *dask_frame(numeric, y, 2))
    assert coded.categories_ == [None, None, None]
    assert_same_trees(coded, reference)
    # "from_dtype" on an array: no categorical feature (as in memory)
    plain = AUCForestClassifier(**PARAMS).fit(*chunked([450, 450], X, y))
    assert not plain.is_categorical_.any()
    assert not any(t.tree_.categorical_split.any() for t in plain.estimators_)


# ---------------------------------------------------------------- (d) refusals

def test_unknown_categories_are_refused_naming_the_column(dask_client):
    frame, y = membership_data(n=200)
    X, y_d = dask_frame(frame, y, 2)
    X = X.assign(size=X["size"].cat.as_unknown())
    with pytest.raises(ValueError, match=r"'size'.*as_known\(\)"):
        AUCForestClassifier(n_estimators=2).fit(X, y_d)


def test_too_many_categories_are_refused_naming_the_column(dask_client):
    rng = np.random.RandomState(0)
    frame = pd.DataFrame({"x": rng.randn(300),
                          "code": pd.Categorical(np.arange(300) % 260,
                                                 categories=np.arange(260))})
    y = rng.randint(0, 2, 300)
    with pytest.raises(ValueError, match="column 'code' has 260 categories"):
        AUCForestClassifier(n_estimators=2).fit(*dask_frame(frame, y, 2))


@pytest.mark.parametrize("bad", [-1.0, 2.5, 255.0])
def test_invalid_codes_are_refused_with_the_in_memory_error(dask_client, bad):
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.randn(200), rng.randint(0, 4, 200).astype(float)])
    X[150, 1] = bad
    y = rng.randint(0, 2, 200)
    with pytest.raises(ValueError) as in_memory:
        AUCForestClassifier(n_estimators=2, categorical_features=[1]).fit(X, y)
    assert "categorical feature 1 must hold level codes" in str(in_memory.value)
    with pytest.raises(ValueError) as on_dask:
        AUCForestClassifier(n_estimators=2, categorical_features=[1]).fit(
            *chunked([100, 100], X, y))
    assert str(on_dask.value) == str(in_memory.value)


def _with_level_z(part):
    """A partition whose 'letter' column holds a level ('z') its frame's
    categories (the meta's) do not have."""
    letter = part["letter"].cat.add_categories(["z"])
    letter.iloc[:3] = "z"
    return part.assign(letter=letter)


def test_a_partition_level_outside_the_frame_categories_is_refused(dask_client):
    """The frame's categories are its meta's; a partition holding another level
    is refused where it is read, naming the column and the level (not read as
    missing: the fit would learn nothing of those rows)."""
    frame, y = membership_data(n=200)
    X, y_d = dask_frame(frame, y, 2)
    X = X.map_partitions(_with_level_z, meta=X._meta)
    with pytest.raises(ValueError, match=r"column 'letter' holds levels not among the "
                                         r"frame's \(its meta's\) categories \('z'\)"):
        AUCForestClassifier(n_estimators=2).fit(X, y_d)


def test_a_category_column_outside_categorical_features_is_refused(dask_client):
    frame, y = membership_data(n=200)
    with pytest.raises(ValueError, match="'size' has the category dtype but is not among"):
        AUCForestClassifier(n_estimators=2, categorical_features=["letter"]).fit(
            *dask_frame(frame, y, 2))


# ---------------------------------------------------------------- (e) the fitted forest

@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_the_fitted_forest_predicts_saves_and_explains_as_the_dense_path(dask_client, small_nodes,
                                                                         tmp_path):
    frame, y = membership_data()
    X, y_d = dask_frame(frame, y, 3)
    forest = AUCForestClassifier(n_estimators=6, random_state=1, oob_score=True,
                                 min_samples_leaf=2).fit(X, y_d)
    dense = forest.predict_proba(frame)
    np.testing.assert_allclose(forest.predict_proba(X).compute(), dense, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(forest.predict(X).compute(), forest.predict(frame))
    # a partition of its own category order predicts the same (levels by value)
    Xr, _ = reordered_partitions(frame, y, 2)
    np.testing.assert_allclose(forest.predict_proba(Xr).compute(), dense, rtol=0, atol=1e-12)

    aucforest.save(forest, tmp_path / "model.aucf")
    loaded = aucforest.load(tmp_path / "model.aucf")
    assert loaded.categories_ == forest.categories_
    np.testing.assert_allclose(loaded.predict_proba(frame), dense, rtol=0, atol=1e-12)

    values, base = shap_values(forest, frame.iloc[:60])
    np.testing.assert_allclose(base + values.sum(axis=1), dense[:60], rtol=0, atol=1e-10)

    # out of bag: the trees in whose draw a row is not, from the per-tree draw keys
    oob = forest.oob_decision_function(X, y_d).compute()
    from aucforest._dask._draws import draw_counts
    draws = forest._case_draws
    counts = draw_counts(draws.keys, np.arange(len(y), dtype=np.int64),
                         y.astype(np.int32), draws.rates, draws.poisson)
    total = np.zeros_like(dense)
    n_trees = np.zeros(len(y))
    for tree, c in zip(forest.estimators_, counts):
        out = c == 0
        total[out] += tree.predict_proba(frame[out])
        n_trees[out] += 1
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(oob, total / n_trees[:, None], rtol=0, atol=1e-12)


# ---------------------------------------------------------------- (f) max_leaf_nodes

def test_max_leaf_nodes_with_categories(dask_client, small_nodes):
    frame, y = membership_data()
    params = dict(PARAMS, max_leaf_nodes=6)
    reference = AUCForestClassifier(**params).fit(*dask_frame(frame, y, 1))
    for tree in reference.estimators_:
        assert tree.tree_.n_leaves <= 6
    assert any(t.tree_.categorical_split.any() for t in reference.estimators_)
    forest = AUCForestClassifier(**params).fit(
        *reordered_partitions(frame, y, 3))
    assert_same_trees(forest, reference)
