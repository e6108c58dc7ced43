"""Dask collections meeting categories, nullable dtypes, decisions and parquet
files (issue 44): each gives the in-memory answer or a clear refusal.

The session's shared LocalCluster (conftest.py's ``dask_client``).
"""
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.datasets import make_classification

from aucforest import AUCForestClassifier

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")


def _assert_same_trees(a, b):
    assert len(a.estimators_) == len(b.estimators_)
    for i, (ta, tb) in enumerate(zip(a.estimators_, b.estimators_)):
        arrays_b = tb.tree_.node_arrays()
        for name, array in ta.tree_.node_arrays().items():
            np.testing.assert_array_equal(array, arrays_b[name], err_msg=f"tree {i}: {name}")


def _category_data(n=600, seed=0):
    """A frame whose class is decided by a category column (int levels) and a
    str category column, with missing values in both."""
    rng = np.random.RandomState(seed)
    level = rng.choice([10, 20, 30, 40, 50], n)
    colour = rng.choice(["red", "green", "blue"], n)
    y = (np.isin(level, [20, 40]) ^ (rng.rand(n) < 0.05)).astype(int)
    frame = pd.DataFrame({
        "x": rng.randn(n),
        "level": pd.Categorical(level, categories=[10, 20, 30, 40, 50]),
        "colour": pd.Categorical(colour, categories=["red", "green", "blue"]),
    })
    frame.loc[rng.rand(n) < 0.05, "level"] = np.nan
    frame.loc[rng.rand(n) < 0.05, "colour"] = np.nan
    return frame, y


def _with_partition_categories(frame, sizes, directory):
    """`frame`'s rows read back from parquet files (one per size) whose category
    columns have categories of their own (the values present, in reverse
    order): a dask DataFrame with unknown categories (``known=False``)."""
    start = 0
    for i, size in enumerate(sizes):
        part = frame.iloc[start:start + size].copy()
        start += size
        for name in ("level", "colour"):
            present = part[name].cat.remove_unused_categories().cat.categories
            part[name] = part[name].cat.set_categories(list(present)[::-1])
        part.to_parquet(directory / f"part{i}.parquet", engine="pyarrow")
    return dd.read_parquet(str(directory))


def test_lazy_predictions_map_category_columns_by_value_in_each_partition(dask_client, tmp_path):
    """Case 1: predict_proba, predict and apply on a dask DataFrame, for a
    forest fitted in memory with category columns, map each partition by
    value as the in-memory predict does, to the bit."""
    frame, y = _category_data()
    forest = AUCForestClassifier(n_estimators=15, random_state=0).fit(frame, y)
    ddf = _with_partition_categories(frame, [250, 200, 150], tmp_path)
    assert not ddf["level"].cat.known
    first = ddf.partitions[0].compute()["level"].cat.categories.tolist()
    assert first != [10, 20, 30, 40, 50]  # the partitions' codes are not the fitted ones
    np.testing.assert_array_equal(forest.predict_proba(ddf).compute(),
                                  forest.predict_proba(frame))
    np.testing.assert_array_equal(forest.predict(ddf).compute(), forest.predict(frame))
    np.testing.assert_array_equal(forest.apply(ddf).compute(), forest.apply(frame))
    # known categories in another order than at fit (from_pandas)
    reordered = frame.assign(level=frame["level"].cat.reorder_categories([50, 40, 30, 20, 10]))
    np.testing.assert_array_equal(
        forest.predict_proba(dd.from_pandas(reordered, npartitions=3)).compute(),
        forest.predict_proba(frame))


@pytest.mark.filterwarnings("ignore:column 'level' has 10 values")  # on the workers
def test_lazy_predictions_refuse_what_the_in_memory_predict_refuses_on_frames(dask_client):
    """Case 1: a numeric column where a category one was fitted is refused
    (naming it) before anything is computed; a value not seen at fit is missing."""
    frame, y = _category_data(n=300)
    forest = AUCForestClassifier(n_estimators=4, random_state=0).fit(frame, y)
    codes = frame.assign(level=frame["level"].cat.codes.astype(float))
    with pytest.raises(ValueError, match="'level' was fitted as a category column"):
        forest.predict_proba(dd.from_pandas(codes, npartitions=2))
    unseen = frame.assign(level=frame["level"].cat.add_categories([60]))
    unseen.loc[:9, "level"] = 60
    with pytest.warns(UserWarning, match="'level' has 10 values of categories not seen"):
        expected = forest.predict_proba(unseen)
    np.testing.assert_array_equal(
        forest.predict_proba(dd.from_pandas(unseen, npartitions=2)).compute(), expected)


def test_dask_fit_oob_gmean_follows_the_decision(dask_client):
    """Case 2: a Dask-fitted forest's oob_gmean_ changes with ``decision`` as
    in memory: set afterwards, it equals a fit made with that decision."""
    X, y = make_classification(1500, 5, n_informative=3, weights=[0.85], flip_y=0.05,
                               random_state=3)
    X_d, y_d = da.from_array(X, chunks=500), da.from_array(y, chunks=500)
    params = dict(n_estimators=10, oob_score=True, predict_min_samples=1, random_state=4)
    with pytest.warns(UserWarning, match="OOB"):
        rfq = AUCForestClassifier(decision="rfq", **params).fit(X_d, y_d)
        argmax = AUCForestClassifier(decision="argmax", **params).fit(X_d, y_d)
    _assert_same_trees(rfq, argmax)  # the decision does not change a fixed node size's trees
    assert rfq.oob_gmean_ != argmax.oob_gmean_  # so the test can tell them apart
    rfq_value = rfq.oob_gmean_
    rfq.decision = "argmax"
    assert rfq.oob_gmean_ == argmax.oob_gmean_
    rfq.decision = "rfq"
    assert rfq.oob_gmean_ == rfq_value


@pytest.mark.parametrize("bad", [1.5, 300.0, -1.0])
def test_dask_predict_refuses_category_codes_the_dense_predict_refuses(dask_client, bad):
    """Case 3: level codes that are not 0..254 integers are refused on a dask
    array with the dense predict's error (when the block is computed)."""
    rng = np.random.RandomState(0)
    X = rng.randn(300, 3)
    X[:, 1] = rng.randint(0, 4, 300)
    y = (X[:, 1] % 2 == 0).astype(int)
    forest = AUCForestClassifier(n_estimators=3, random_state=0,
                                 categorical_features=[1]).fit(X, y)
    X[123, 1] = bad
    with pytest.raises(ValueError) as dense:
        forest.predict_proba(X)
    assert "categorical feature 1 must hold level codes" in str(dense.value)
    X_d = da.from_array(X, chunks=100)
    for method in (forest.predict_proba, forest.predict, forest.apply):
        with pytest.raises(ValueError, match=re.escape(str(dense.value))):
            method(X_d).compute()


@pytest.mark.parametrize("levels", [[0, 1, 2], ["a", "b", "c"]])
def test_dask_fit_trains_category_columns_as_categorical_features(dask_client, levels):
    """Case 4: a category column (int or str levels) of a dask DataFrame was
    refused at fit (before issue 43 item 7: an int one had been trained on as
    numbers); now it is a categorical feature, its categories kept, split by
    level sets, as the in-memory fit takes it (tests/test_dask_categories.py)."""
    rng = np.random.RandomState(0)
    kind = rng.choice(levels, 200)
    frame = pd.DataFrame({"x": rng.randn(200),
                          "kind": pd.Categorical(kind, categories=levels)})
    y_values = (kind == levels[1]).astype(int)
    y = dd.from_pandas(pd.Series(y_values), npartitions=2)
    forest = AUCForestClassifier(n_estimators=2, random_state=0).fit(
        dd.from_pandas(frame, npartitions=2), y)
    in_memory = AUCForestClassifier(n_estimators=2, random_state=0).fit(frame, y_values)
    assert forest.is_categorical_.tolist() == in_memory.is_categorical_.tolist() == [False, True]
    assert forest.categories_ == in_memory.categories_ == [None, levels]
    assert all(t.tree_.categorical_split[0] == 1 for t in forest.estimators_)
    np.testing.assert_array_equal(forest.predict(frame), y_values)


def test_dask_fit_refuses_text_columns_naming_them(dask_client):
    rng = np.random.RandomState(0)
    frame = pd.DataFrame({"x": rng.randn(100), "name": rng.choice(["a", "b"], 100)})
    y = dd.from_pandas(pd.Series(rng.randint(0, 2, 100)), npartitions=2)
    with pytest.raises(ValueError, match="'name' holds text"):
        AUCForestClassifier(n_estimators=2).fit(dd.from_pandas(frame, npartitions=2), y)


def _nullable_data(n=900, seed=5):
    rng = np.random.RandomState(seed)
    X, y = make_classification(n, 4, n_informative=3, n_redundant=0, random_state=seed)
    frame = pd.DataFrame({
        "count": pd.array(np.rint(X[:, 0] * 3).astype(int), dtype="Int64"),
        "score": pd.array(X[:, 1], dtype="Float64"),
        "flag": pd.array(X[:, 2] > 0, dtype="boolean"),
        "plain": X[:, 3],
    })
    for name in ("count", "score", "flag"):
        frame.loc[rng.rand(n) < 0.1, name] = pd.NA
    return frame, y


def test_nullable_columns_fit_on_dask_as_their_numpy_equivalent(dask_client):
    """Case 5: Int64, Float64 and boolean columns (pd.NA missing) fit on Dask
    as the float array with NaN does, and predict as in memory."""
    frame, y = _nullable_data()
    numbers = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    assert np.isnan(numbers[:, :3]).any(axis=0).all()
    params = dict(n_estimators=6, random_state=7)
    ddf = dd.from_pandas(frame, npartitions=3)
    y_d = dd.from_pandas(pd.Series(y), npartitions=3)
    forest = AUCForestClassifier(**params).fit(ddf, y_d)
    reference = AUCForestClassifier(**params).fit(da.from_array(numbers, chunks=300),
                                                  da.from_array(y, chunks=300))
    _assert_same_trees(forest, reference)
    assert list(forest.feature_names_in_) == list(frame.columns)
    np.testing.assert_array_equal(forest.predict_proba(ddf).compute(),
                                  forest.predict_proba(frame))
    np.testing.assert_array_equal(forest.predict_proba(ddf).compute(),
                                  reference.predict_proba(numbers))


def test_readme_recipe_on_parquet_files(dask_client, tmp_path):
    """Case 6: the README's recipe, read_parquet over several files, fit on
    ``train.drop(columns="y")`` and ``train["y"]``, predict_proba of the same."""
    X, y = make_classification(900, 4, n_informative=3, n_redundant=0, random_state=2)
    directory = tmp_path / "train"
    directory.mkdir()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(y=y)
    for i, start in enumerate(range(0, 900, 300)):
        frame.iloc[start:start + 300].to_parquet(directory / f"part{i}.parquet",
                                                 engine="pyarrow")
    train = dd.read_parquet(str(directory))
    forest = AUCForestClassifier(n_estimators=5, random_state=0).fit(
        train.drop(columns="y"), train["y"])
    proba = forest.predict_proba(train.drop(columns="y"))
    assert isinstance(proba, da.Array)
    np.testing.assert_array_equal(proba.compute(),
                                  forest.predict_proba(frame.drop(columns="y")))
    reference = AUCForestClassifier(n_estimators=5, random_state=0).fit(
        da.from_array(X, chunks=300), da.from_array(y, chunks=300))
    _assert_same_trees(forest, reference)


def test_dask_array_route_works_without_dask_dataframe(tmp_path):
    """Case 7: fit and predict on dask arrays never import dask.dataframe
    (which needs pandas and pyarrow)."""
    script = textwrap.dedent("""
        import sys
        sys.modules["dask.dataframe"] = None  # import dask.dataframe raises ImportError
        import numpy as np
        import dask.array as da
        from distributed import Client, LocalCluster
        from aucforest import AUCForestClassifier

        if __name__ == "__main__":
            rng = np.random.RandomState(0)
            X = rng.randn(400, 3)
            y = (X[:, 0] > 0).astype(int)
            with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                              dashboard_address=None) as cluster, Client(cluster):
                X_d, y_d = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
                forest = AUCForestClassifier(n_estimators=3, random_state=0).fit(X_d, y_d)
                proba = forest.predict_proba(X_d).compute()
                labels = forest.predict(X_d).compute()
            assert np.array_equal(proba, forest.predict_proba(X))
            assert np.array_equal(labels, forest.predict(X))
            print("fitted without dask.dataframe", sys.modules["dask.dataframe"])
    """)
    path = tmp_path / "no_dataframe.py"
    path.write_text(script)
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "fitted without dask.dataframe None" in result.stdout
