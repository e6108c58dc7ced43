"""The calibration maps (aucforest._calibration_maps): one class per method in
one registry, each fitting, predicting, writing itself as plain numbers and
reading itself back, checked as strictly as fitting makes it; cases of weight
0 count as absent; a new method is one registered class, which the estimator,
the model file and the command line then offer."""
import json

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
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


class PooledStacks:
    """The earlier Venn-Abers fit, kept as a reference: pool-adjacent-violators
    stacks of every prefix and suffix of the blocks 0..n-1, as linked lists
    sharing their nodes; the new case's block is pooled with the top blocks of
    the prefix stack and the bottom blocks of the suffix stack, one place at a
    time (O(n) per place at worst)."""

    def __init__(self, block_weight, block_sum):
        self.weight, self.sum, self.link = [], [], []
        n = len(block_weight)
        self.prefix_top = [-1] * (n + 1)  # top node of the stack of blocks 0..j-1
        top = -1
        for m in range(n):
            top = self._push(top, block_weight[m], block_sum[m], lambda own, other: other > own)
            self.prefix_top[m + 1] = top
        self.suffix_top = [-1] * (n + 2)  # first node of the stack of blocks j..n-1
        top = -1
        for m in range(n - 1, -1, -1):
            top = self._push(top, block_weight[m], block_sum[m], lambda own, other: other < own)
            self.suffix_top[m] = top

    def _push(self, top, weight, total, violates):
        while top >= 0 and violates(total / weight, self.sum[top] / self.weight[top]):
            weight, total = weight + self.weight[top], total + self.sum[top]
            top = self.link[top]
        self.weight.append(weight)
        self.sum.append(total)
        self.link.append(top)
        return len(self.weight) - 1

    def value_with(self, left_end, right_start, weight, total):
        """Isotonic value of a block of (weight, total) placed between the
        blocks before `left_end` and those from `right_start` on."""
        left, right = self.prefix_top[left_end], self.suffix_top[right_start]
        while True:
            mean = total / weight
            if left >= 0 and self.sum[left] / self.weight[left] > mean:
                weight, total = weight + self.weight[left], total + self.sum[left]
                left = self.link[left]
            elif right >= 0 and self.sum[right] / self.weight[right] < mean:
                weight, total = weight + self.weight[right], total + self.sum[right]
                right = self.link[right]
            else:
                return mean


def pooled_stacks_venn_abers(scores, labels, weights):
    """(scores_, gap_bounds_, tie_bounds_) of the earlier fit (weights > 0)."""
    weights = weights / weights.mean()
    distinct, block = np.unique(scores, return_inverse=True)
    block_weight = np.bincount(block, weights=weights)
    block_sum = np.bincount(block, weights=weights * labels)
    stacks = PooledStacks(block_weight, block_sum)
    n = distinct.size
    gaps = [[stacks.value_with(g, g, 1.0, float(label)) for label in (0, 1)]
            for g in range(n + 1)]
    ties = [[stacks.value_with(m, m + 1, 1.0 + block_weight[m], block_sum[m] + label)
             for label in (0, 1)] for m in range(n)]
    return distinct, np.array(gaps), np.array(ties).reshape(-1, 2)


def sweep_cases():
    """Seeds of (n, decimals, labels, weights) that cover ties, weights far
    below and above the new case's 1, one block, and labels all 0 or all 1
    (every point of the diagram on one line)."""
    for seed in range(300):
        rng = np.random.RandomState(seed)
        n = int(rng.choice([1, 2, 3, 7, 40, 400]))
        scores = np.round(rng.rand(n), int(rng.choice([0, 1, 2, 6])))
        labels = (rng.rand(n) < scores).astype(float)
        if seed % 10 == 3:
            labels[:] = 0.0
        elif seed % 10 == 7:
            labels[:] = 1.0
        weights = (np.ones(n) if seed % 3 == 0
                   else rng.choice([0.01, 0.3, 1.0, 2.5, 40.0], n) * rng.uniform(0.5, 1.5, n))
        yield seed, scores, labels, weights


def test_the_sweep_equals_the_pooled_stacks_reference():
    """Issue 58: the one-sweep fit (Vovk, Petej & Fedorova 2015) gives every
    place's pair as the earlier per-place pooling did, to 1e-12."""
    for seed, scores, labels, weights in sweep_cases():
        fitted = VennAbersCalibration().fit(scores, labels, weights)
        distinct, gaps, ties = pooled_stacks_venn_abers(scores, labels, weights)
        assert_array_equal(fitted.scores_, distinct)
        assert fitted.gap_bounds_.shape == (distinct.size + 1, 2)
        assert fitted.tie_bounds_.shape == (distinct.size, 2)
        assert_allclose(fitted.gap_bounds_, gaps, rtol=0, atol=1e-12, err_msg=f"seed {seed}")
        assert_allclose(fitted.tie_bounds_, ties, rtol=0, atol=1e-12, err_msg=f"seed {seed}")
        assert fitted.gap_bounds_[0, 0] == 0.0 and fitted.gap_bounds_[-1, 1] == 1.0


def test_the_sweep_is_linear_where_the_pooling_was_quadratic():
    """Labels all 0 on distinct scores: every block its own stack node, so the
    earlier pooling walked all the blocks above each place (n^2 / 2 steps);
    the sweep pushes and pops each point once. 200k scores fit at once, to the
    values of the closed form: p1 at gap g pools the new case with all the
    blocks above it, 1 / (n - g + 1); p0 is 0."""
    n = 200_000
    fitted = VennAbersCalibration().fit(np.arange(n) / n, np.zeros(n))
    gaps = np.arange(n + 1)
    assert_allclose(fitted.gap_bounds_[:, 1], 1.0 / (n - gaps + 1), rtol=1e-12, atol=0)
    assert np.all(fitted.gap_bounds_[:, 0] == 0.0)
    assert_allclose(fitted.tie_bounds_[:, 1], 1.0 / (n - gaps[:-1] + 1), rtol=1e-12)


def test_venn_abers_probabilities_stay_inside_0_1_by_a_margin():
    """Issue 58: p = p1 / (1 - p0 + p1) is never 0 or 1, unlike an isotonic map.
    The new case weighs 1 of a total W + 1 (W: the calibration weights, rescaled
    to a mean of 1, so W = the number of cases), so its pooled block gives
    p1 >= 1 / (W + 1) and 1 - p0 >= 1 / (W + 1); the denominator is at most 2,
    so min(p, 1 - p) >= 1 / (2 (W + 1)) and a case's log loss <= log(2 (W + 1))."""
    for seed, scores, labels, weights in sweep_cases():
        fitted = VennAbersCalibration().fit(scores, labels, weights)
        new = np.r_[-1.0, scores, np.linspace(0, 1, 101), 2.0]
        p = fitted.predict(new)
        margin = 1.0 / (2 * (scores.size + 1))
        assert np.all(p >= margin * (1 - 1e-12)) and np.all(1 - p >= margin * (1 - 1e-12)), seed
    # near the bound: every label 0, a new score below them all: isotonic says 0,
    # Venn-Abers p0 = 0 and p1 = 1 / (n + 1) (the case pooled with all), p = 1 / (n + 2)
    isotonic = IsotonicMap().fit(np.arange(5.0), np.zeros(5))
    venn_abers = VennAbersCalibration().fit(np.arange(5.0), np.zeros(5))
    assert isotonic.predict([-1.0])[0] == 0.0
    assert_allclose(venn_abers.predict([-1.0]), [1 / 7], rtol=1e-15)


def test_venn_abers_refuses_labels_outside_0_1():
    with pytest.raises(ValueError, match=r"Venn-Abers labels must lie in \[0, 1\]"):
        VennAbersCalibration().fit([0.1, 0.2], [0.0, 2.0])


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
