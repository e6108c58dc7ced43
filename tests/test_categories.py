"""Resolution of ``categorical_features`` and the category mapping
(`aucforest._categories`), against scikit-learn's HistGradientBoostingClassifier
(which reads ``categorical_features`` the same way) and pandas' own codes; and the
categories through the estimators, model files, pickle and a Pipeline."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.pipeline import make_pipeline

import aucforest
from aucforest import AUCForestClassifier, AUCTreeClassifier, ColumnEncoding
from aucforest._categories import (MAX_CATEGORIES, fit_categories, levels_going_left,
                                   predict_codes, resolve_categorical_features, resolve_fitted)

pd = pytest.importorskip("pandas")


def frame(n=60, seed=0):
    rng = np.random.RandomState(seed)
    return pd.DataFrame({
        "age": rng.normal(40, 10, size=n),
        "state": pd.Categorical(rng.choice(["TX", "CA", "NY", "WA"], size=n),
                                categories=["WA", "TX", "NY", "CA"]),
        "visits": rng.randint(0, 5, size=n).astype(float),
        "plan": pd.Categorical(rng.choice(["basic", "gold"], size=n)),
    })


@pytest.mark.parametrize("spec", ["from_dtype", None, [1, 3], ["state", "plan"],
                                  [False, True, False, True], [1, 2], ["visits"], []])
def test_resolution_matches_histgradientboosting(spec):
    X = frame()
    y = (X["age"] > 40).astype(int)
    hgb_X = X if spec is not None and (spec == "from_dtype" or
                                       set(np.flatnonzero(_mask(spec, X))) >= {1, 3}) \
        else X.assign(state=X["state"].cat.codes, plan=X["plan"].cat.codes)
    hgb = HistGradientBoostingClassifier(max_iter=1, categorical_features=spec).fit(hgb_X, y)
    names = list(X.columns)
    is_category = np.array([str(t) == "category" for t in hgb_X.dtypes])
    mask = resolve_categorical_features(spec, 4, names, is_category)
    expected = hgb.is_categorical_ if hgb.is_categorical_ is not None else np.zeros(4, bool)
    np.testing.assert_array_equal(mask, expected)


def _mask(spec, X):
    return resolve_categorical_features(spec, X.shape[1], list(X.columns),
                                        np.array([str(t) == "category" for t in X.dtypes]))


def test_fit_codes_are_pandas_codes_and_categories_keep_their_order():
    X = frame()
    numbers, mask, categories = fit_categories(X, "from_dtype")
    np.testing.assert_array_equal(mask, [False, True, False, True])
    assert categories == [None, ["WA", "TX", "NY", "CA"], None, ["basic", "gold"]]
    np.testing.assert_array_equal(numbers["state"], X["state"].cat.codes)
    np.testing.assert_array_equal(numbers["age"], X["age"])
    assert list(numbers.columns) == list(X.columns) and (numbers.index == X.index).all()


def test_numeric_frame_and_array_are_returned_untouched():
    X = frame().drop(columns=["state", "plan"])
    numbers, mask, categories = fit_categories(X, "from_dtype")
    assert numbers is X and mask.tolist() == [False, False] and categories == [None, None]
    array = X.to_numpy()
    assert fit_categories(array, [1]) == (array, None, None)  # resolved once validated
    assert resolve_fitted([1], 2, None, None)[0].tolist() == [False, True]
    assert resolve_fitted("from_dtype", 2, None, None)[1] == [None, None]


def test_predict_maps_by_value_not_by_code():
    X = frame()
    _, _, categories = fit_categories(X, "from_dtype")

    class Fitted:
        categories_ = categories

    reordered = X.assign(state=X["state"].cat.reorder_categories(["CA", "NY", "TX", "WA"]),
                         plan=X["plan"].cat.set_categories(["gold", "basic", "platinum"]))
    assert (reordered["state"].cat.codes != X["state"].cat.codes).any()
    np.testing.assert_array_equal(predict_codes(Fitted, reordered).to_numpy(),
                                  fit_categories(X, "from_dtype")[0].to_numpy())


def test_unseen_values_become_missing_with_a_warning():
    X = frame()
    _, _, categories = fit_categories(X, "from_dtype")

    class Fitted:
        categories_ = categories

    new = X.head(4).assign(state=pd.Categorical(["TX", "OR", "OR", None]))
    with pytest.warns(UserWarning, match=r"column 'state' has 2 values of categories not seen "
                                         r"at fit \('OR'\); treated as missing"):
        codes = predict_codes(Fitted, new)["state"].to_numpy()
    np.testing.assert_array_equal(np.isnan(codes), [False, True, True, True])
    assert codes[0] == 1  # TX is the second fitted category


@pytest.mark.parametrize("change, message", [
    (lambda X: X.assign(state=X["state"].astype(str)), "column 'state' holds text"),
    (lambda X: X.assign(state=X["state"].cat.codes.astype(float)),
     "column 'state' was fitted as a category column, but X has dtype float64"),
    (lambda X: X.assign(age=pd.Categorical(X["age"].round())),
     "column 'age' has the category dtype, but the estimator was fitted on numbers"),
])
def test_predict_refuses_a_column_unlike_the_fit(change, message):
    X = frame()
    _, _, categories = fit_categories(X, "from_dtype")

    class Fitted:
        categories_ = categories

    with pytest.raises(ValueError, match=message):
        predict_codes(Fitted, change(X))


@pytest.mark.parametrize("X, spec, message", [
    (frame().assign(city=["Oslo"] * 60), "from_dtype", r"column 'city' holds text \(dtype "
                                                       r"(object|str)\); convert it to a"),
    (frame(), None, "column 'state' has the category dtype but is not among categorical"),
    (frame(), ["age", "nope"], "names 'nope', which is not a column of X"),
    (frame(), "state", r"a single column name\? give a list"),
    (frame(), [0, 4], "out of range for 4 features"),
    (frame(), [True, False], "one entry per feature \\(4\\); got 2"),
    (frame(), [0.5], "got values of dtype float64"),
    (pd.DataFrame({"c": pd.Categorical([f"l{i}" for i in range(MAX_CATEGORIES + 1)])}),
     "from_dtype", "has 256 categories, more than the 255"),
])
def test_bad_input_is_refused_with_a_clear_message(X, spec, message):
    with pytest.raises(ValueError, match=message):
        fit_categories(X, spec)


# ----------------------------------------------- through the estimators and their files


@pytest.fixture(scope="module")
def fitted_on_frame():
    X = frame(200, seed=3)
    risk = X["state"].map({"TX": 1.5, "CA": -1.0, "NY": 0.5, "WA": 0.0}).astype(float)
    y = np.where(risk + 0.05 * (X["age"] - 40) + np.random.RandomState(4).normal(size=200) > 0,
                 "ill", "well")
    forest = AUCForestClassifier(15, random_state=0).fit(X, y)
    return forest, X, y


def test_category_frame_fits_as_the_codes_with_the_mask(fitted_on_frame):
    forest, X, y = fitted_on_frame
    codes = fit_categories(X, "from_dtype")[0].to_numpy()
    by_mask = AUCForestClassifier(15, random_state=0, categorical_features=[1, 3]).fit(codes, y)
    np.testing.assert_array_equal(forest.is_categorical_, [False, True, False, True])
    np.testing.assert_array_equal(by_mask.is_categorical_, forest.is_categorical_)
    np.testing.assert_array_equal(forest.predict_proba(X), by_mask.predict_proba(codes))
    assert by_mask.categories_ == [None] * 4
    names = AUCForestClassifier(15, random_state=0, categorical_features=["state", "plan"])
    np.testing.assert_array_equal(names.fit(X, y).predict_proba(X), forest.predict_proba(X))


@pytest.mark.parametrize("estimator", [AUCForestClassifier(10, random_state=1),
                                       AUCTreeClassifier(random_state=1)])
def test_numeric_data_fits_exactly_as_without_categorical_features(estimator):
    X = frame(120, seed=5)[["age", "visits"]]
    y = (X["age"] > 40).to_numpy()
    for data in (X, X.to_numpy()):
        default = clone(estimator).fit(data, y)
        none = clone(estimator).set_params(categorical_features=None).fit(data, y)
        np.testing.assert_array_equal(default.predict_proba(data), none.predict_proba(data))
        assert not default.is_categorical_.any() and default.categories_ == [None, None]


def test_model_file_and_pickle_keep_the_categories(fitted_on_frame, tmp_path):
    forest, X, _ = fitted_on_frame
    aucforest.save(forest, tmp_path / "m.npz")
    loaded = aucforest.load(tmp_path / "m.npz")
    unpickled = pickle.loads(pickle.dumps(forest))
    reordered = X.assign(state=X["state"].cat.reorder_categories(["CA", "NY", "TX", "WA"]))
    for restored in (loaded, unpickled):
        assert restored.categories_ == forest.categories_
        np.testing.assert_array_equal(restored.is_categorical_, forest.is_categorical_)
        np.testing.assert_array_equal(restored.predict_proba(reordered),
                                      forest.predict_proba(X))
        with pytest.raises(ValueError, match="column 'state' was fitted as a category column"):
            restored.predict(X.assign(state=X["state"].cat.codes))


def test_unseen_category_predicts_as_missing(fitted_on_frame):
    forest, X, _ = fitted_on_frame
    new = X.head(3).assign(state=pd.Categorical(["OR", "TX", None]))
    with pytest.warns(UserWarning, match="column 'state' has 1 value of categories not seen"):
        proba = forest.predict_proba(new)
    missing = X.head(3).assign(state=pd.Categorical([None, "TX", None],
                                                    categories=["TX"]))
    np.testing.assert_array_equal(proba, forest.predict_proba(missing))


def test_pipeline_of_column_encoding_and_forest_splits_text_natively(tmp_path):
    X = frame(150, seed=6)
    text = X.assign(state=X["state"].astype(str), plan=X["plan"].astype(str),
                    age=X["age"].round(1).astype(str))
    y = (X["state"].isin(["TX", "NY"])).to_numpy()
    pipeline = make_pipeline(ColumnEncoding(), AUCForestClassifier(10, random_state=2))
    pipeline.fit(text, y)
    forest = pipeline[-1]
    np.testing.assert_array_equal(forest.is_categorical_, [False, True, False, True])
    assert forest.categories_[1] == ["CA", "NY", "TX", "WA"]  # sorted levels
    direct = AUCForestClassifier(10, random_state=2).fit(
        X.assign(age=X["age"].round(1),
                 state=X["state"].cat.reorder_categories(["CA", "NY", "TX", "WA"]),
                 plan=X["plan"].cat.reorder_categories(["basic", "gold"])), y)
    np.testing.assert_array_equal(pipeline.predict_proba(text), direct.predict_proba(
        X.assign(age=X["age"].round(1))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = pickle.loads(pickle.dumps(pipeline))
        np.testing.assert_array_equal(again.predict_proba(text), pipeline.predict_proba(text))
    np.testing.assert_array_equal(clone(pipeline).fit(text, y).predict_proba(text),
                                  pipeline.predict_proba(text))


def test_estimators_refuse_text_and_names_without_a_frame():
    X = frame(40)
    y = np.arange(40) % 2
    with pytest.raises(ValueError, match=r"column 'plan' holds text .*astype\('category'\)"):
        AUCForestClassifier(3).fit(X.assign(plan=X["plan"].astype(str)), y)
    with pytest.raises(ValueError, match="needs X to be a pandas DataFrame"):
        AUCTreeClassifier(categorical_features=["state"]).fit(X[["age"]].to_numpy(), y)
    with pytest.raises(Exception, match="categorical_features"):
        AUCForestClassifier(3, categorical_features="auto").fit(X, y)


@pytest.mark.parametrize("categories, message", [
    ("state", "must be a list of 4 entries"),
    ([None, ["TX", "TX"], None, None], r"entry 1 \(feature 'state'\) holds 'TX' and 'TX'"),
    ([None, "TX", None, None], "entry 1 .*must be None or a list of 0 to 255 distinct"),
    ([None, [True], None, None], "entry 1"),
    ([None] * 3, "must be a list of 4 entries"),
])
def test_model_file_with_malformed_categories_is_refused(fitted_on_frame, tmp_path,
                                                         categories, message):
    import json

    forest, _, _ = fitted_on_frame
    arrays = aucforest.io.forest_to_arrays(forest)
    metadata = json.loads(arrays["metadata"].tobytes())
    assert metadata["categories"] == forest.categories_
    metadata["categories"] = categories
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    np.savez_compressed(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=message):  # naming the file and the field
        aucforest.load(tmp_path / "bad.npz")


def test_categories_that_json_cannot_hold_are_refused_at_save(tmp_path):
    X = pd.DataFrame({"day": pd.Categorical(pd.to_datetime(["2024-01-01", "2024-01-02"] * 10))})
    forest = AUCForestClassifier(3, random_state=0).fit(X, np.arange(20) % 2)
    with pytest.raises(ValueError, match="the categories of feature 0 cannot be stored"):
        aucforest.save(forest, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def test_levels_going_left_reads_bit_c_of_word_c_over_64():
    """The 256-bit level sets of categorical splits, decoded one bit at a time
    with Python integers, against the vectorised reading (rows and one row)."""
    rng = np.random.default_rng(0)
    words = rng.integers(0, 2**63, size=(6, 4), dtype=np.uint64) * np.uint64(2) \
        + rng.integers(0, 2, size=(6, 4), dtype=np.uint64)
    words[0] = 0
    words[1] = np.iinfo(np.uint64).max
    expected = np.array([[(int(row[c // 64]) >> (c % 64)) & 1 == 1 for c in range(256)]
                         for row in words])
    np.testing.assert_array_equal(levels_going_left(words), expected)
    np.testing.assert_array_equal(levels_going_left(words[3]), expected[3])
