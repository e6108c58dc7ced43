"""`ColumnEncoding` as a scikit-learn transformer: scikit-learn's estimator
checks, fit/transform on tables of text cells against OrdinalEncoder and
OneHotEncoder, and a Pipeline that clones, fits and pickles it."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder
from sklearn.utils.estimator_checks import check_estimator

from aucforest import AUCForestClassifier, ColumnEncoding
from aucforest._encoding import MAX_CATEGORIES

pd = pytest.importorskip("pandas")


def test_passes_scikit_learns_estimator_checks():
    results = check_estimator(ColumnEncoding(), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert failed == []
    assert sum(r["status"] == "passed" for r in results) >= 40


def cells(n=90, seed=0):
    """A table as pandas reads a CSV file with dtype=str: numbers, '?' markers, words."""
    rng = np.random.RandomState(seed)
    age = rng.randint(18, 90, size=n).astype(str).astype(object)
    age[::17] = "?"
    city = rng.choice(["Oslo", "Bergen", "Tromso", "Bodo"], size=n).astype(object)
    city[5] = ""
    return pd.DataFrame({"age": age, "city": city})


def test_fit_chooses_kinds_and_codes_levels_as_ordinal_encoder_does():
    frame = cells()
    encoding = ColumnEncoding().fit(frame)
    assert [c["kind"] for c in encoding.columns_] == ["numeric", "categorical"]
    assert list(encoding.get_feature_names_out()) == ["age", "city"]
    assert list(encoding.feature_names_in_) == ["age", "city"]
    np.testing.assert_array_equal(encoding.categorical_mask, [False, True])
    matrix = encoding.transform(frame.to_numpy())  # an array: codes, NaN where missing
    present = frame["city"] != ""
    reference = OrdinalEncoder().fit(frame.loc[present, ["city"]])
    np.testing.assert_array_equal(matrix[present.to_numpy(), 1],
                                  reference.transform(frame.loc[present, ["city"]])[:, 0])
    assert np.isnan(matrix[~present.to_numpy(), 1]).all()
    ages = pd.to_numeric(frame["age"], errors="coerce").to_numpy()
    np.testing.assert_array_equal(matrix[:, 0], ages)
    out = encoding.transform(frame)  # a DataFrame: pandas categories with the fitted levels
    assert out["city"].dtype == "category"
    assert list(out["city"].cat.categories) == sorted(set(frame["city"]) - {""})
    assert (out["city"].astype(object).where(present, "") == frame["city"]).all()


def test_max_one_hot_gives_the_earlier_encoding():
    frame = cells()
    encoding = ColumnEncoding(max_one_hot=10).fit(frame)
    assert encoding.columns_[1]["kind"] == "one-hot"
    assert list(encoding.get_feature_names_out())[1:] == [
        "city=Bergen", "city=Bodo", "city=Oslo", "city=Tromso"]
    present = frame["city"] != ""
    reference = OneHotEncoder(sparse_output=False).fit_transform(frame.loc[present, ["city"]])
    np.testing.assert_array_equal(encoding.transform(frame).to_numpy()[present.to_numpy(), 1:],
                                  reference)
    assert ColumnEncoding(max_one_hot=3).fit(frame).columns_[1]["kind"] == "ordinal"


def test_unseen_levels_become_missing_with_a_warning_naming_column_and_count():
    encoding = ColumnEncoding().fit(cells())
    new = pd.DataFrame({"age": ["40", "50", "60"], "city": ["Rome", "Oslo", "Rome"]})
    with pytest.warns(UserWarning, match=r"column 'city' has levels not seen in training "
                                         r"\('Rome'\) in 2 rows; encoded as missing values"):
        out = encoding.transform(new)
    assert out["city"].isna().tolist() == [True, False, True]


def test_more_levels_than_a_categorical_feature_may_have_become_ordinal():
    frame = pd.DataFrame({"code": [f"c{i:04d}" for i in range(MAX_CATEGORIES + 1)] * 2})
    with pytest.warns(UserWarning, match=r"column 'code' of .* has 256 levels, more than "
                                         r"the 255"):
        encoding = ColumnEncoding().fit(frame)
    assert encoding.columns_[0]["kind"] == "ordinal"


def test_transform_checks_the_columns_of_the_fit():
    encoding = ColumnEncoding().fit(cells())
    with pytest.raises(ValueError, match="column 'city', which the model uses, is not in"):
        encoding.transform(pd.DataFrame({"age": ["1"]}))
    with pytest.raises(ValueError, match="X has 3 features, but ColumnEncoding is expecting 2"):
        encoding.transform(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="column 'age' of .* must be numeric, as in training"):
        encoding.transform(pd.DataFrame({"age": ["old"], "city": ["Oslo"]}))


def test_fixed_columns_need_no_fit_and_round_trip_through_to_dict():
    spec = [{"name": "age", "kind": "numeric"},
            {"name": "city", "kind": "categorical", "levels": ["Bergen", "Oslo"]}]
    encoding = ColumnEncoding(spec)
    assert encoding.transform({"age": ["3"], "city": ["Oslo"]}).tolist() == [[3.0, 1.0]]
    again = ColumnEncoding.from_dict(encoding.to_dict())
    assert again.to_dict() == encoding.to_dict() and repr(again) == repr(encoding)
    with pytest.raises(ValueError, match="malformed"):
        ColumnEncoding.from_dict({"columns": [{"name": "city", "kind": "categorical",
                                               "levels": ["b", "a"]}]})


def test_pipeline_fits_predicts_clones_and_pickles():
    frame = cells(200, seed=1)
    city_effect = frame["city"].map({"Oslo": 1.0, "Bodo": 1.0}).fillna(0.0).to_numpy()
    y = (city_effect + np.random.RandomState(2).uniform(size=200) > 1.2).astype(int)
    pipeline = make_pipeline(ColumnEncoding(max_one_hot=10),
                             AUCForestClassifier(20, random_state=0))
    pipeline.fit(frame, y)
    manual = AUCForestClassifier(20, random_state=0).fit(
        ColumnEncoding(max_one_hot=10).fit_transform(frame), y)
    np.testing.assert_array_equal(pipeline.predict_proba(frame), manual.predict_proba(
        ColumnEncoding(max_one_hot=10).fit(frame).transform(frame)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored = pickle.loads(pickle.dumps(pipeline))
        np.testing.assert_array_equal(restored.predict_proba(frame),
                                      pipeline.predict_proba(frame))
    refit = clone(pipeline).fit(frame, y)
    np.testing.assert_array_equal(refit.predict_proba(frame), pipeline.predict_proba(frame))
    assert list(pipeline[:-1].get_feature_names_out()) == list(
        pipeline[-1].feature_names_in_)
