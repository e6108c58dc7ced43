"""The calibration maps (aucforest._calibration_maps): one class per method in
one registry, each fitting, predicting, writing itself as plain numbers and
reading itself back, checked as strictly as fitting makes it; cases of weight
0 count as absent; a new method is one registered class, which the estimator,
the model file and the command line then offer."""
import json

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import make_classification

from aucforest import AUCForestClassifier
from aucforest._calibration_maps import (MAPS, CalibrationMap, IsotonicMap, SigmoidMap,
                                         VennAbersCalibration, map_class, register_map)
from aucforest._calibration_state import calibration_from_plain, calibration_to_plain
from aucforest.calibration import OOBCalibratedClassifier
from aucforest.cli._from_oob import CALIBRATION_METHODS
from cli_files import run_main, write_csv


def calibration_data(seed, n=200, decimals=2, zero_share=0.0):
    """Scores with ties, 0/1 labels, positive weights (a share of them set to 0)."""
    rng = np.random.RandomState(seed)
    scores = np.round(rng.rand(n), decimals)
    labels = (rng.rand(n) < scores).astype(float)
    weights = rng.uniform(0.2, 3.0, n)
    weights[rng.permutation(n)[:int(zero_share * n)]] = 0.0
    return scores, labels, weights


def test_the_registry_is_the_one_list_of_methods():
    assert list(MAPS) == ["isotonic", "sigmoid", "venn_abers"]
    assert [cls for cls in MAPS.values()] == [IsotonicMap, SigmoidMap, VennAbersCalibration]
    for name, cls in MAPS.items():
        assert cls.name == name and issubclass(cls, CalibrationMap) and cls.summary
        assert map_class(name) is cls
    assert list(CALIBRATION_METHODS) == list(MAPS)  # the command line's --calibrate choices
    constraint = OOBCalibratedClassifier._parameter_constraints["method"][0]
    assert all(constraint.is_satisfied_by(name) for name in MAPS)
    with pytest.raises(ValueError, match="unknown calibration method 'beta' "
                                         r"\(expected one of isotonic, sigmoid, venn_abers\)"):
        map_class("beta")


@pytest.mark.parametrize("method", list(MAPS))
@pytest.mark.parametrize("weighted", [False, True])
def test_every_map_reads_back_from_json_predicting_bit_for_bit(method, weighted):
    scores, labels, weights = calibration_data(1, decimals=2)
    fitted = map_class(method)().fit(scores, labels, weights if weighted else None)
    plain = fitted.to_plain()
    assert json.loads(json.dumps(plain, allow_nan=False)) == plain  # plain numbers only
    loaded = map_class(method).from_plain(json.loads(json.dumps(plain)))
    assert type(loaded) is type(fitted)
    new = np.r_[np.random.RandomState(2).rand(300), scores, -1.0, 2.0]
    assert_array_equal(loaded.predict(new), fitted.predict(new))
    assert loaded.to_plain() == plain


@pytest.mark.parametrize("method", list(MAPS))
@pytest.mark.parametrize("decimals", [1, 2, 6])
def test_zero_weights_leave_every_map_as_if_those_cases_were_absent(method, decimals):
    scores, labels, weights = calibration_data(3, n=300, decimals=decimals, zero_share=0.2)
    kept = weights > 0
    with_zeros = map_class(method)().fit(scores, labels, weights)
    without = map_class(method)().fit(scores[kept], labels[kept], weights[kept])
    assert with_zeros.to_plain() == without.to_plain()


@pytest.mark.parametrize("method", list(MAPS))
def test_a_map_needs_a_case_of_positive_weight(method):
    with pytest.raises(ValueError, match="at least one case of positive weight"):
        map_class(method)().fit([0.2, 0.4], [0.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        map_class(method)().fit([0.2, 0.4], [0.0, 1.0], [1.0, -1.0])


def test_every_fitted_venn_abers_map_passes_its_read_checks():
    """The checks on reading hold for every fit (ties, weights, zero weights,
    a single score): p0 <= p1 exactly, monotone up to rounding."""
    for seed in range(40):
        rng = np.random.RandomState(seed)
        n = int(rng.choice([1, 3, 40, 400]))
        scores, labels, weights = calibration_data(seed, n=n, decimals=int(rng.choice([1, 3])),
                                                   zero_share=0.2 if seed % 2 else 0.0)
        weights[0] = 1.0
        fitted = VennAbersCalibration().fit(scores, labels, weights)
        VennAbersCalibration.from_plain(fitted.to_plain())


def venn_abers_plain():
    scores, labels, weights = calibration_data(4, n=60, decimals=2)
    return VennAbersCalibration().fit(scores, labels, weights).to_plain()


@pytest.mark.parametrize("change, message", [
    (lambda p: p["tie_bounds"].__setitem__(2, p["tie_bounds"][2][::-1]),
     r"pair tie_bounds\[2\] = \(.*\) has p0 > p1"),
    (lambda p: p["gap_bounds"].__setitem__(0, [0.01, p["gap_bounds"][0][1]]),
     "p0 below the first score must be 0"),
    (lambda p: p["gap_bounds"].__setitem__(-1, [p["gap_bounds"][-1][0], 0.99]),
     "p1 above the last 1"),
    (lambda p: p["gap_bounds"].__setitem__(20, [0.0, p["gap_bounds"][20][1]]),
     r"p0 decreases from tie_bounds\[19\] to gap_bounds\[20\]"),
    (lambda p: p["gap_bounds"].__setitem__(20, [p["gap_bounds"][20][0], 1.0]),
     r"p1 decreases from gap_bounds\[20\] to tie_bounds\[20\]"),
    (lambda p: p["gap_bounds"].__setitem__(1, [0.0, 1.5]), r"values must lie in \[0, 1\]"),
    (lambda p: p.update(scores=p["scores"][::-1]), "scores must be an increasing list"),
    (lambda p: p.update(scores=[], gap_bounds=[[0.0, 1.0]], tie_bounds=[]),
     "scores must be an increasing list"),
    (lambda p: p["tie_bounds"].pop(), r"'tie_bounds' has shape"),
    (lambda p: p.pop("gap_bounds"), "has no 'gap_bounds'"),
])
def test_venn_abers_data_no_fit_makes_is_refused_by_name(change, message):
    plain = venn_abers_plain()
    VennAbersCalibration.from_plain(plain, "map 7")  # as fitted: accepted
    change(plain)
    with pytest.raises(ValueError, match=f"^map 7.*{message}"):
        VennAbersCalibration.from_plain(plain, "map 7")


@pytest.mark.parametrize("method, plain, message", [
    ("isotonic", {"x": [0.1, 0.5], "y": [0.6, 0.4]}, "y must not decrease"),
    ("isotonic", {"x": [0.5, 0.5], "y": [0.4, 0.6]}, "x must increase"),
    ("isotonic", {"x": [0.1, 0.5], "y": [0.4, 1.2]}, r"values must lie in \[0, 1\]"),
    ("isotonic", {"x": [], "y": []}, "equal-length lists"),
    ("sigmoid", {"a": float("inf"), "b": 0.0}, "'a' must hold finite numbers"),
    ("sigmoid", {"a": -3.0, "b": [0.0]}, r"'b' has shape \(1,\), expected \(\)"),
    ("sigmoid", {"a": -3.0, "b": True}, "'b' must hold numbers only"),
    ("venn_abers", [1, 2], "must be a dict"),
])
def test_other_data_no_fit_makes_is_refused_by_name(method, plain, message):
    with pytest.raises(ValueError, match=message):
        map_class(method).from_plain(plain, "map 0")


def test_register_map_refuses_a_taken_name_or_a_class_that_is_no_map():
    class Again(IsotonicMap):
        pass

    with pytest.raises(ValueError, match="'isotonic' is registered already"):
        register_map(Again)
    with pytest.raises(TypeError, match="not a CalibrationMap class with a name"):
        register_map(dict)
    assert MAPS["isotonic"] is IsotonicMap


class MeanMap(CalibrationMap):
    """A method added by one class: the weighted share of the class, whatever the score."""

    name = "mean"
    summary = "the class share"

    def _fit(self, scores, labels, sample_weight):
        self.mean_ = float(np.average(labels, weights=sample_weight))

    def predict(self, scores):
        return np.full(np.asarray(scores).shape[0], self.mean_)

    def to_plain(self):
        return {"mean": self.mean_}

    @classmethod
    def _from_plain(cls, plain, where):
        value = plain.get("mean")
        if not isinstance(value, float) or not 0 <= value <= 1:
            raise ValueError(f"{where}: 'mean' must be a number in [0, 1]")
        calibrator = cls()
        calibrator.mean_ = value
        return calibrator


@pytest.fixture
def mean_map_registered():
    register_map(MeanMap)
    try:
        yield MeanMap
    finally:
        del MAPS["mean"]


def test_a_method_is_one_registered_class(mean_map_registered, capsys, tmp_path):
    """Registered, the class is a method of the estimator, of the model file's
    data and of the command line's fit --calibrate and predict."""
    X, y = make_classification(240, n_features=4, n_informative=3, n_redundant=0,
                               weights=[0.8], random_state=0)
    forest = AUCForestClassifier(20, random_state=0)
    model = OOBCalibratedClassifier(forest, method="mean").fit(X[:160], y[:160])
    assert isinstance(model.calibrators_[0], MeanMap)
    proba = model.predict_proba(X[160:])
    assert np.unique(proba[:, 1]).size == 1
    loaded = calibration_from_plain(model.estimator_,
                                    json.loads(json.dumps(calibration_to_plain(model))))
    assert_array_equal(loaded.predict_proba(X[160:]), proba)

    names = [f"x{j}" for j in range(4)]
    train = write_csv(tmp_path / "train.csv", [*names, "label"],
                      [[*row, label] for row, label in zip(X[:160].tolist(), y[:160])])
    test = write_csv(tmp_path / "test.csv", names, X[160:].tolist())
    code, _, err = run_main(capsys, "fit", train, "--target", "label", "--output",
                            tmp_path / "m.npz", "--n-estimators", 20, "--calibrate", "mean",
                            "--quiet")
    assert code == 0, err
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", test, "--proba")
    assert code == 0, err
    rows = np.array([line.split(",") for line in out.splitlines()[1:]], dtype=float)
    assert_array_equal(rows, proba)
