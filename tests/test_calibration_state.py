"""A fitted OOBCalibratedClassifier's maps as plain JSON numbers and back
(aucforest._calibration_state, what the command line stores in a model file):
the maps read back predict exactly as the fitted ones, scikit-learn's
IsotonicRegression included, and damaged data is refused by name."""
import json
import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.isotonic import IsotonicRegression

import aucforest
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
    fitted = OOBCalibratedClassifier(AUCForestClassifier(15, random_state=0),
                                     method="isotonic").fit(X, y)
    plain = calibration_to_plain(fitted)
    change(plain)
    with pytest.raises(ValueError, match=message):
        calibration_from_plain(fitted.estimator_, plain)


def test_a_model_file_with_a_venn_abers_pair_p0_above_p1_is_refused(capsys, tmp_path):
    """Defect 5: a stored Venn-Abers pair (p0, p1) with p0 > p1, each in [0, 1]
    (no fitted map holds one) is refused on reading, naming the map, its class
    and the pair; ``predict`` fails with exit status 1 instead of writing a NaN
    probability (p1 / (1 - p0 + p1) = 0 / 0 for the pair (1, 0)) and a label."""
    from aucforest.io import read_model
    from cli_files import run_main, write_csv

    X, y = make_classification(200, n_features=4, n_informative=3, n_redundant=0,
                               weights=[0.8], random_state=2)
    X, y = np.round(X, 4), np.array(["common", "rare"])[y]
    names = [f"x{j}" for j in range(X.shape[1])]
    train = write_csv(tmp_path / "train.csv", [*names, "label"],
                      [[*row, label] for row, label in zip(X[:150].tolist(), y[:150])])
    test = write_csv(tmp_path / "test.csv", names, X[150:].tolist())
    code, _, err = run_main(capsys, "fit", train, "--target", "label", "--output",
                            tmp_path / "m.npz", "--n-estimators", 20, "--calibrate",
                            "venn_abers", "--quiet")
    assert code == 0, err
    forest, extra = read_model(tmp_path / "m.npz")
    # the place (gap or tie) of the first test row's score in the stored map
    calibrated = calibration_from_plain(forest, extra["calibration"])
    venn_abers = calibrated.calibrators_[0]
    with warnings.catch_warnings():  # X without the forest's column names
        warnings.simplefilter("ignore", UserWarning)
        score = calibrated.corrected_proba(X[150:151])[0, 1]
    place = int(np.searchsorted(venn_abers.scores_, score))
    tied = place < venn_abers.scores_.size and venn_abers.scores_[place] == score
    key = "tie_bounds" if tied else "gap_bounds"
    extra["calibration"]["maps"][0][key][place] = [1.0, 0.0]  # in [0, 1], p0 > p1
    aucforest.save(forest, tmp_path / "bad.npz", extra=extra)

    _, stored = read_model(tmp_path / "bad.npz")
    assert stored["calibration"]["maps"][0][key][place] == [1.0, 0.0]
    pair = rf"pair {key}\[{place}\] = \(1\.0, 0\.0\) has p0 > p1"
    with pytest.raises(ValueError, match=r"calibration map 0 \(venn_abers, class 'rare'\): "
                                         + pair):
        calibration_from_plain(forest, stored["calibration"])
    for command in (["predict", tmp_path / "bad.npz", test, "--proba"],
                    ["predict", tmp_path / "bad.npz", test],
                    ["evaluate", tmp_path / "bad.npz", train, "--target", "label"]):
        code, out, err = run_main(capsys, *command)
        assert code == 1 and out == "", (out, err)
        assert re.search(r"bad\.npz: invalid stored calibration: calibration map 0 "
                         r"\(venn_abers, class 'rare'\): " + pair, err), err
