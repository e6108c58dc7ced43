"""A fitted OOBCalibratedClassifier's maps as plain JSON numbers and back
(aucforest._calibration_state, what the command line stores in a model file):
the maps read back predict exactly as the fitted ones, scikit-learn's
IsotonicRegression included, and damaged data is refused by name."""
import json

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.isotonic import IsotonicRegression

from aucforest import AUCForestClassifier
from aucforest._calibration_state import (IsotonicMap, calibration_from_plain,
                                          calibration_to_plain)
from aucforest.calibration import OOBCalibratedClassifier


@pytest.mark.parametrize("method", ["isotonic", "sigmoid", "venn_abers"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_maps_read_back_from_json_predict_exactly_as_fitted(method, n_classes):
    X, y = make_classification(240, n_features=5, n_informative=3, n_redundant=0,
                               n_classes=n_classes, weights=[0.7, 0.2][:n_classes - 1],
                               random_state=1)
    forest = AUCForestClassifier(25, balanced_bootstrap=True, decision="rfq", random_state=0)
    fitted = OOBCalibratedClassifier(forest, method=method).fit(X[:160], y[:160])
    text = json.dumps(calibration_to_plain(fitted), allow_nan=False)
    loaded = calibration_from_plain(fitted.estimator_, json.loads(text))
    np.testing.assert_array_equal(loaded.predict_proba(X[160:]), fitted.predict_proba(X[160:]))
    np.testing.assert_array_equal(loaded.predict(X[160:]), fitted.predict(X[160:]))
    np.testing.assert_array_equal(loaded.draw_class_weights_, fitted.draw_class_weights_)
    assert not np.allclose(loaded.draw_class_weights_, 1.0)  # the prior correction is kept


def test_isotonic_map_predicts_as_isotonic_regression():
    rng = np.random.default_rng(0)
    scores = rng.random(300)
    labels = (rng.random(300) < scores ** 2).astype(float)
    fitted = IsotonicRegression(out_of_bounds="clip").fit(scores, labels)
    ours = IsotonicMap(fitted.X_thresholds_, fitted.y_thresholds_)
    new = np.r_[rng.normal(0.5, 0.5, 500), scores, -1.0, 2.0]  # outside the range too
    np.testing.assert_array_equal(ours.predict(new), fitted.predict(new))
    single = IsotonicRegression(out_of_bounds="clip").fit([0.2, 0.2], [1.0, 0.0])
    np.testing.assert_array_equal(
        IsotonicMap(single.X_thresholds_, single.y_thresholds_).predict([0.0, 0.2, 0.9]),
        single.predict([0.0, 0.2, 0.9]))


@pytest.mark.parametrize("change, message", [
    (lambda c: c["maps"][0].update(x=True), "'x' must hold numbers only"),
    (lambda c: c["maps"][0].update(y=[[0.1], [0.2]]), "x and y must be equal-length lists"),
    (lambda c: c["maps"][0]["y"].__setitem__(-1, 1.5), r"values must lie in \[0, 1\]"),
    (lambda c: c["maps"][0]["x"].__setitem__(0, float("nan")), "'x' must hold finite numbers"),
    (lambda c: c.update(class_prior=[0.9, 0.9]), "class_prior must be non-negative and sum"),
    (lambda c: c.update(maps=None), "must hold 1 maps"),
])
def test_damaged_data_is_refused(change, message):
    X, y = make_classification(120, weights=[0.8], random_state=0)
    fitted = OOBCalibratedClassifier(AUCForestClassifier(15, random_state=0)).fit(X, y)
    plain = calibration_to_plain(fitted)
    change(plain)
    with pytest.raises(ValueError, match=message):
        calibration_from_plain(fitted.estimator_, plain)
