"""Resolution of ``categorical_features`` and the category mapping
(`aucforest._categories`), against scikit-learn's HistGradientBoostingClassifier
(which reads ``categorical_features`` the same way) and pandas' own codes."""
import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from aucforest._categories import (MAX_CATEGORIES, fit_categories, predict_codes,
                                   resolve_categorical_features, resolve_fitted)

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
