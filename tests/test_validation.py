"""Bad input gets a clear exception that names the problem."""
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from aucforest import AUCForestClassifier, AUCTreeClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
y = np.arange(40) % 2

ESTIMATORS = [AUCTreeClassifier, lambda **kw: AUCForestClassifier(n_estimators=3, **kw)]


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("X_bad, y_bad, weight, message", [
    (np.where(X > 1, np.inf, X), y, None, "infinity"),
    (np.full((40, 3), 1e39), y, None, "too large"),
    (X, np.zeros(40), None, "one class"),
    (X, y[:-1], None, "inconsistent numbers of samples"),
    (X, y, -np.ones(40), "Negative values"),
    (X, y, np.zeros(40), "non-zero|zero for every sample"),
    (X, y, np.full(40, np.nan), "NaN"),
    (X, np.linspace(0, 1, 40), None, "Unknown label type"),
    (X[:, 0], y, None, "2D array"),
    (np.empty((0, 3)), np.empty(0), None, "0 sample"),
    (np.array([["a", "b", "c"]] * 40), y, None, "could not convert"),
])
def test_bad_fit_input(make, X_bad, y_bad, weight, message):
    with pytest.raises(ValueError, match=message):
        make().fit(X_bad, y_bad, sample_weight=weight)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_nan_in_y_raises(make):
    with pytest.raises(ValueError, match="NaN"):
        make().fit(X, np.where(y == 1, np.nan, 0.0))


@pytest.mark.parametrize("params, message", [
    (dict(criterion="mse"), "criterion"),
    (dict(max_features=0), "max_features"),
    (dict(max_features=1.5), "max_features"),
    (dict(max_features="all"), "max_features"),
    (dict(max_depth=0), "max_depth"),
    (dict(min_samples_leaf=0), "min_samples_leaf"),
    (dict(min_weight_fraction_leaf=0.7), "min_weight_fraction_leaf"),
    (dict(n_estimators=0), "n_estimators"),
    (dict(decision="median"), "decision"),
    (dict(decision=1.0), "decision"),
    (dict(class_weight="even"), "class_weight"),
    (dict(max_samples=0), "max_samples"),
    (dict(bootstrap=False, max_samples=10), "max_samples"),
    (dict(bootstrap=False, oob_score=True), "bootstrap=True"),
    (dict(bootstrap=False, balanced_bootstrap=True), "bootstrap=True"),
])
def test_invalid_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        AUCForestClassifier(n_estimators=params.pop("n_estimators", 3), **params).fit(X, y)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_predict_checks(make):
    with pytest.raises(NotFittedError):
        make().predict(X)
    model = make().fit(X, y)
    with pytest.raises(ValueError, match="3 features"):
        model.predict_proba(X[:, :2])
    with pytest.raises(ValueError, match="infinity"):
        model.predict(np.full((2, 3), np.inf))
    with pytest.raises(ValueError, match="infinity"):
        model.apply(np.full((2, 3), -np.inf))


@pytest.mark.parametrize("params, name", [
    (dict(n_estimators=True), "n_estimators"),
    (dict(max_depth=True), "max_depth"),
    (dict(min_samples_leaf=True), "min_samples_leaf"),
    (dict(max_features=True), "max_features"),
    (dict(max_samples=True), "max_samples"),
])
def test_booleans_are_not_counts(params, name):
    with pytest.raises(ValueError, match=f"{name}.*boolean"):
        AUCForestClassifier(**{"n_estimators": 3, **params}).fit(X, y)


@pytest.mark.parametrize("params", [dict(max_depth=2**63), dict(min_samples_leaf=2**63),
                                    dict(max_depth=2**200)])
def test_huge_integer_bounds_mean_unbounded(params):
    # max_depth beyond any index is unbounded; a leaf bound beyond n forbids every split
    forest = AUCForestClassifier(3, random_state=0, **params).fit(X, y)
    expected = AUCForestClassifier(3, random_state=0,
                                   **{k: (None if k == "max_depth" else 40)
                                      for k in params}).fit(X, y)
    np.testing.assert_array_equal(forest.predict_proba(X), expected.predict_proba(X))


@pytest.mark.parametrize("class_weight, message", [
    ({0: -1.0, 1: 1.0}, r"class_weight\[0\].*>= 0"),
    ({0: np.nan, 1: 1.0}, r"class_weight\[0\].*finite"),
    ({0: 1.0, 1: np.inf}, r"class_weight\[1\].*finite"),
    ({0: "heavy", 1: 1.0}, r"class_weight\[0\].*number"),
    ({0: 0.0, 1: 0.0}, "zero for every class"),
])
def test_bad_class_weights(class_weight, message):
    with pytest.raises(ValueError, match=message):
        AUCForestClassifier(3, class_weight=class_weight).fit(X, y)


def test_threshold_decision_on_three_classes_is_refused_at_predict():
    y3 = np.arange(40) % 3
    forest = AUCForestClassifier(3, random_state=0).fit(X, y3)
    forest.set_params(decision=0.3)
    with pytest.raises(ValueError, match="two classes"):
        forest.predict(X)


def test_error_messages_show_plain_values():
    with pytest.raises(ValueError) as error:
        AUCForestClassifier(3).fit(X, np.zeros(40, dtype=np.int64))
    assert "np." not in str(error.value)
