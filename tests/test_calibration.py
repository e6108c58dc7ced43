"""Calibration from out-of-bag predictions and the prior-shift correction (issue 41).

References: scikit-learn's IsotonicRegression and sigmoid calibration fitted on the
same OOB inputs, a brute-force Venn-Abers (isotonic refits with the case added),
Bayes' rule on a generative model with a known posterior and on the forest's
actual draws, and the RFQ rule applied by hand.
"""
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.sparse import csr_matrix
from sklearn.calibration import _SigmoidCalibration
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.estimator_checks import parametrize_with_checks

import aucforest
from aucforest import AUCForestClassifier
from aucforest._prior_shift import draw_class_weights, to_training_priors, training_class_prior
from aucforest.calibration import OOBCalibratedClassifier, PlattScaling, VennAbersCalibration

from test_sklearn_compat import EXPECTED_FAILED_CHECKS

METHODS = ("isotonic", "sigmoid", "venn_abers")


def small_forest(**params):
    return AUCForestClassifier(**{"n_estimators": 30, "random_state": 0, **params})


@parametrize_with_checks(
    [OOBCalibratedClassifier(small_forest(n_estimators=10), method=m) for m in METHODS],
    expected_failed_checks=lambda estimator: EXPECTED_FAILED_CHECKS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def imbalanced():
    X, y = make_classification(1200, n_features=6, n_informative=4, weights=[0.88],
                               flip_y=0.02, random_state=1)
    return X[:600], y[:600], X[600:], y[600:]


@pytest.fixture(scope="module")
def three_classes():
    X, y = make_classification(900, n_features=6, n_informative=4, n_classes=3,
                               weights=[0.7, 0.2, 0.1], random_state=2)
    return X[:450], y[:450], X[450:], y[450:]


def corrected_oob(forest, y, sample_weight=None):
    """The forest's OOB probabilities under the training priors, rows with an OOB
    prediction only, and the test-time correction weights."""
    weights = draw_class_weights(forest, y, sample_weight)
    scores = to_training_priors(forest.oob_decision_function_, weights)
    has_oob = ~np.isnan(scores).any(axis=1)
    return scores[has_oob], y[has_oob], weights


# ------------------------------------------------------------------ prior shift

def discrete_data(n, seed):
    """One feature of 4 values; class priors (0.75, 0.17, 0.08), class-conditional
    distributions of x known, so the Bayes posterior P(k | x) is known."""
    prior = np.array([0.75, 0.17, 0.08])
    conditional = np.array([[0.4, 0.3, 0.2, 0.1],
                            [0.1, 0.2, 0.3, 0.4],
                            [0.1, 0.1, 0.2, 0.6]])
    rng = np.random.RandomState(seed)
    y = rng.choice(3, size=n, p=prior)
    x = np.array([rng.choice(4, p=conditional[k]) for k in y])
    posterior = prior[:, None] * conditional  # P(k, x) -> P(k | x) by Bayes' rule
    return x[:, None].astype(float), y, (posterior / posterior.sum(axis=0)).T


@pytest.mark.parametrize("params", [
    {"balanced_bootstrap": True},
    {"balanced_bootstrap": True, "replacement": True},
    {"class_weight": "balanced"},
    {"class_weight": {0: 1.0, 1: 3.0, 2: 10.0}},
    {"class_weight": "balanced_subsample", "replacement": True},
])
def test_prior_correction_of_oob_probabilities_recovers_the_bayes_posterior(params):
    """A forest on one feature of 4 values has one leaf per value: its OOB
    proportions estimate w'_k pi_k f_k(x); corrected, the true posterior
    under the training priors (raw, they are far from it)."""
    X, y, posterior = discrete_data(6000, seed=0)
    forest = AUCForestClassifier(60, oob_score=True, random_state=0, **params).fit(X, y)
    raw = forest.oob_decision_function_
    corrected = to_training_priors(raw, draw_class_weights(forest, y))
    truth = posterior[X[:, 0].astype(int)]
    assert np.abs(raw - truth).max() > 0.15
    assert np.abs(corrected - truth).max() < 0.04


def test_plain_forest_draws_need_no_correction(imbalanced):
    X, y, _, _ = imbalanced
    forest = small_forest().fit(X, y, sample_weight=np.linspace(0.5, 2, len(y)))
    assert_array_equal(draw_class_weights(forest, y), np.ones(2))


def case_weights_in_draws(forest, y, sample_weight):
    """Sum over the forest's trees of each case's weight in the tree's leaves:
    its multiplicity in the tree's actual draw (estimators_samples_) x sample
    weight x class weight (scikit-learn's compute_sample_weight, per tree's
    draw for "balanced_subsample")."""
    total = np.zeros(len(y))
    for drawn in forest.estimators_samples_:
        counts = np.bincount(drawn, minlength=len(y))
        if forest.class_weight == "balanced_subsample":
            class_weight = compute_sample_weight("balanced", y, indices=drawn)
        else:
            class_weight = compute_sample_weight(forest.class_weight, y)
        total += counts * sample_weight * class_weight
    return total


@pytest.mark.parametrize("params", [
    {"balanced_bootstrap": True},
    {"balanced_bootstrap": True, "class_weight": {0: 2.0, 1: 1.0, 2: 0.5}},
    {"balanced_bootstrap": True, "class_weight": "balanced_subsample", "replacement": True},
    {"class_weight": "balanced_subsample"},
    {"class_weight": "balanced", "replacement": True},
])
def test_prior_correction_against_bayes_on_the_forests_own_draws(params):
    """Brute force over the draws: the weighted class masses of each value of x
    in all trees' draws (with sample weights) are q; corrected, they are the
    sample-weighted class shares of that value in the training set."""
    X, y, _ = discrete_data(1500, seed=1)
    sample_weight = np.random.RandomState(2).uniform(0.2, 3.0, len(y))
    sample_weight[:40] = 0.0
    forest = AUCForestClassifier(400, max_depth=1, random_state=0, **params).fit(
        X, y, sample_weight=sample_weight)
    in_draws = case_weights_in_draws(forest, y, sample_weight)
    values = X[:, 0].astype(int)
    mass = np.zeros((4, 3))
    np.add.at(mass, (values, y), in_draws)
    training = np.zeros((4, 3))
    np.add.at(training, (values, y), sample_weight)
    q = mass / mass.sum(axis=1, keepdims=True)
    corrected = to_training_priors(q, draw_class_weights(forest, y, sample_weight))
    assert_allclose(corrected, training / training.sum(axis=1, keepdims=True), atol=0.015)
    assert_allclose(training_class_prior(forest.classes_, y, sample_weight),
                    np.bincount(y, weights=sample_weight) / sample_weight.sum())


def test_prior_correction_is_exact_when_every_tree_sees_every_case():
    """Without the bootstrap each case weighs sample_weight x class_weight in
    every tree: q is exact and so is the corrected posterior."""
    X, y, _ = discrete_data(800, seed=3)
    sample_weight = np.random.RandomState(4).uniform(0.1, 2.0, len(y))
    class_weight = {0: 0.5, 1: 4.0, 2: 7.0}
    forest = AUCForestClassifier(2, bootstrap=False, class_weight=class_weight,
                                 random_state=0).fit(X, y, sample_weight=sample_weight)
    values = X[:, 0].astype(int)
    mass, training = np.zeros((4, 3)), np.zeros((4, 3))
    np.add.at(mass, (values, y), sample_weight * np.array([0.5, 4.0, 7.0])[y])
    np.add.at(training, (values, y), sample_weight)
    q = mass / mass.sum(axis=1, keepdims=True)
    corrected = to_training_priors(q, draw_class_weights(forest, y, sample_weight))
    assert_allclose(corrected, training / training.sum(axis=1, keepdims=True),
                    rtol=0, atol=1e-12)
    assert_allclose(forest.predict_proba(np.arange(4.0)[:, None]), q, rtol=0, atol=1e-6)


def test_prior_correction_keeps_nan_rows_and_zero_weight_classes():
    proba = np.array([[0.5, 0.5, 0.0], [np.nan, np.nan, np.nan], [0.2, 0.8, 0.0]])
    out = to_training_priors(proba, [1.0, 4.0, 0.0])
    assert_allclose(out[[0, 2]], [[0.8, 0.2, 0.0], [0.5, 0.5, 0.0]])
    assert np.isnan(out[1]).all()
    with pytest.raises(ValueError, match="does not match 2 class weights"):
        to_training_priors(proba, [1.0, 2.0])
    with pytest.raises(ValueError, match="finite and >= 0"):
        to_training_priors(proba, [1.0, -2.0, 1.0])


def test_draw_class_weights_names_an_unknown_label(imbalanced):
    X, y, _, _ = imbalanced
    forest = small_forest(balanced_bootstrap=True).fit(X, y)
    with pytest.raises(ValueError, match="label 7"):
        draw_class_weights(forest, np.where(y == 1, 7, 0))


# ---------------------------------------------------------- calibration maps

@pytest.mark.parametrize("forest_params", [{"balanced_bootstrap": True},
                                           {"class_weight": "balanced"}, {}])
def test_binary_maps_are_scikit_learns_on_the_same_oob_inputs(imbalanced, forest_params):
    X, y, X_test, _ = imbalanced
    references = {"isotonic": IsotonicRegression(out_of_bounds="clip"),
                  "sigmoid": _SigmoidCalibration()}
    for method, reference in references.items():
        model = OOBCalibratedClassifier(small_forest(**forest_params), method=method).fit(X, y)
        scores, labels, weights = corrected_oob(model.estimator_, y)
        reference.fit(scores[:, 1], labels == 1)
        test_scores = to_training_priors(model.estimator_.predict_proba(X_test), weights)
        expected = np.clip(reference.predict(test_scores[:, 1]), 0, 1)
        assert_allclose(model.predict_proba(X_test), np.column_stack([1 - expected, expected]),
                        rtol=0, atol=1e-12)


def test_multiclass_maps_are_one_vs_rest_then_renormalised(three_classes):
    X, y, X_test, _ = three_classes
    sample_weight = np.random.RandomState(0).uniform(0.5, 2.0, len(y))
    model = OOBCalibratedClassifier(small_forest(balanced_bootstrap=True),
                                    method="isotonic").fit(X, y, sample_weight=sample_weight)
    weights = draw_class_weights(model.estimator_, y, sample_weight)
    scores = to_training_priors(model.estimator_.oob_decision_function_, weights)
    has_oob = ~np.isnan(scores).any(axis=1)
    test_scores = to_training_priors(model.estimator_.predict_proba(X_test), weights)
    columns = []
    for k in range(3):
        iso = IsotonicRegression(out_of_bounds="clip").fit(
            scores[has_oob, k], y[has_oob] == k, sample_weight[has_oob])
        columns.append(iso.predict(test_scores[:, k]))
    expected = np.column_stack(columns)
    expected /= expected.sum(axis=1, keepdims=True)
    assert_allclose(model.predict_proba(X_test), expected, rtol=0, atol=1e-12)
    assert len(model.calibrators_) == 3
    assert_allclose(model.class_prior_,
                    np.bincount(y, weights=sample_weight) / sample_weight.sum())


def brute_force_venn_abers(scores, labels, weights, new_score):
    """(p0, p1): isotonic regressions refitted with the new case added as label
    0 and as label 1, read at the new score."""
    return [IsotonicRegression().fit(np.r_[scores, new_score], np.r_[labels, label],
                                     np.r_[weights, 1.0]).predict([new_score])[0]
            for label in (0, 1)]


def max_min_venn_abers(scores, labels, weights, new_score):
    """(p0, p1) by the max-min formula of isotonic regression (Barlow,
    Bartholomew, Bremner & Brunk 1972, ch. 1): with the new case added, its value is the max over the
    blocks u at or below it of the min over the blocks v at or above it of
    the weighted label mean of blocks u..v, blocks being equal scores. Unlike
    scikit-learn's refits, scores a few units in the last place apart are not
    pooled (its ``_make_unique`` merges scores within 1e-15, which out-of-bag
    scores after the prior correction meet)."""
    pair = []
    for label in (0.0, 1.0):
        block = np.unique(np.r_[scores, new_score], return_inverse=True)[1]
        weight = np.bincount(block, weights=np.r_[weights, 1.0])
        total = np.bincount(block, weights=np.r_[weights * labels, label])
        j = block[-1]
        cum_w, cum_t = np.r_[0, np.cumsum(weight)], np.r_[0, np.cumsum(total)]
        # means[u, v] of blocks u..j+v for u <= j
        means = ((cum_t[j + 1:][None, :] - cum_t[:j + 1][:, None])
                 / (cum_w[j + 1:][None, :] - cum_w[:j + 1][:, None]))
        pair.append(means.min(axis=1).max())
    return pair


@pytest.mark.parametrize("decimals, weighted", [(3, False), (1, False), (2, True)])
def test_venn_abers_interval_is_the_brute_force_refits(decimals, weighted):
    rng = np.random.RandomState(decimals)
    scores = np.round(rng.rand(80), decimals)  # decimals=1: many ties
    labels = (rng.rand(80) < scores).astype(float)
    weights = rng.uniform(0.3, 3, 80) if weighted else np.ones(80)
    calibrator = VennAbersCalibration().fit(scores, labels, weights)
    new = np.r_[rng.rand(25), scores[:10], -0.5, 1.5, scores.min(), scores.max()]
    bounds = calibrator.predict_interval(new)
    expected = [brute_force_venn_abers(scores, labels, weights / weights.mean(), s) for s in new]
    assert_allclose(bounds, expected, rtol=0, atol=1e-12)
    assert np.all(bounds[:, 0] <= bounds[:, 1])
    p0, p1 = np.array(expected).T
    assert_allclose(calibrator.predict(new), p1 / (1 - p0 + p1), rtol=0, atol=1e-12)


@pytest.mark.parametrize("decimals", [2, 1])
def test_venn_abers_with_zero_weights_is_the_brute_force_refits(decimals):
    """Cases of weight 0 count as absent (defect 6): with 20% of the weights 0
    (decimals=2: some scores held by such cases only, which made 0/0 blocks
    that stopped the pooling; decimals=1: ties only) the intervals are
    scikit-learn's isotonic refits with the weights, and the map is the one
    fitted without those cases."""
    rng = np.random.RandomState(10 + decimals)
    n = 100
    scores = np.round(rng.rand(n), decimals)
    labels = (rng.rand(n) < scores).astype(float)
    weights = rng.uniform(0.3, 3, n)
    weights[rng.permutation(n)[:n // 5]] = 0.0
    kept = weights > 0
    only_weight_0 = np.setdiff1d(scores[~kept], scores[kept]).size
    assert only_weight_0 > 0 if decimals == 2 else only_weight_0 == 0
    calibrator = VennAbersCalibration().fit(scores, labels, weights)
    new = np.r_[rng.rand(25), scores, -0.5, 1.5]
    bounds = calibrator.predict_interval(new)
    # the weights rescaled to a mean of 1 over the cases that count (the new case weighs 1)
    expected = [brute_force_venn_abers(scores, labels, weights / weights[kept].mean(), s)
                for s in new]
    assert_allclose(bounds, expected, rtol=0, atol=1e-12)
    without = VennAbersCalibration().fit(scores[kept], labels[kept], weights[kept])
    for name in ("scores_", "gap_bounds_", "tie_bounds_"):
        assert_array_equal(getattr(calibrator, name), getattr(without, name))


def test_platt_with_zero_weights_is_the_fit_without_those_cases():
    rng = np.random.RandomState(5)
    scores = rng.rand(301)
    labels = (rng.rand(301) < scores ** 2).astype(float)
    weights = rng.uniform(0.5, 2, 301)
    weights[rng.permutation(301)[:60]] = 0.0
    kept = weights > 0
    ours = PlattScaling().fit(scores, labels, weights)
    without = PlattScaling().fit(scores[kept], labels[kept], weights[kept])
    assert [ours.a_, ours.b_] == [without.a_, without.b_]


def test_venn_abers_classifier_uses_the_oob_scores(imbalanced):
    X, y, X_test, _ = imbalanced
    model = OOBCalibratedClassifier(small_forest(balanced_bootstrap=True),
                                    method="venn_abers").fit(X, y)
    scores, labels, weights = corrected_oob(model.estimator_, y)
    test_scores = to_training_priors(model.estimator_.predict_proba(X_test[:15]), weights)[:, 1]
    p0, p1 = np.array([brute_force_venn_abers(scores[:, 1], labels, np.ones(len(labels)), s)
                       for s in test_scores]).T
    assert_allclose(model.predict_proba(X_test[:15])[:, 1], p1 / (1 - p0 + p1),
                    rtol=0, atol=1e-12)
    # issue 58: the interval itself, the first class's mirrored
    bounds = model.predict_interval(X_test[:15])
    assert bounds.shape == (15, 2, 2)
    assert_allclose(bounds[:, 1], np.column_stack([p0, p1]), rtol=0, atol=1e-12)
    assert_allclose(bounds[:, 0], np.column_stack([1 - p1, 1 - p0]), rtol=0, atol=1e-12)


def test_multiclass_interval_is_each_class_one_vs_rest_before_renormalising(three_classes):
    """predict_interval for K = 3: class k's interval by the max-min formula on
    the one-vs-rest OOB scores; predict_proba divides the merged values by their sum."""
    X, y, X_test, _ = three_classes
    model = OOBCalibratedClassifier(small_forest(), method="venn_abers").fit(X, y)
    scores, labels, weights = corrected_oob(model.estimator_, y)
    test_scores = to_training_priors(model.estimator_.predict_proba(X_test[:12]), weights)
    expected = np.array([[max_min_venn_abers(scores[:, k], (labels == k).astype(float),
                                             np.ones(len(labels)), row[k])
                          for k in range(3)] for row in test_scores])
    bounds = model.predict_interval(X_test[:12])
    assert bounds.shape == (12, 3, 2)
    assert_allclose(bounds, expected, rtol=0, atol=1e-12)
    merged = expected[..., 1] / (1 - expected[..., 0] + expected[..., 1])
    assert_allclose(model.predict_proba(X_test[:12]), merged / merged.sum(axis=1, keepdims=True),
                    rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["isotonic", "sigmoid"])
def test_predict_interval_needs_venn_abers_maps(imbalanced, method):
    X, y, X_test, _ = imbalanced
    model = OOBCalibratedClassifier(small_forest(n_estimators=10), method=method).fit(X, y)
    with pytest.raises(ValueError, match=f"predict_interval needs Venn-Abers maps "
                                         f"\\(method='venn_abers'\\); this model's maps are "
                                         f"'{method}'"):
        model.predict_interval(X_test)
    with pytest.raises(NotFittedError):
        OOBCalibratedClassifier(method="venn_abers").predict_interval(X_test)


def test_scipy_platt_fallback_matches_scikit_learns_sigmoid():
    rng = np.random.RandomState(0)
    scores = rng.rand(300)
    labels = (rng.rand(300) < scores ** 2).astype(float)
    weights = rng.uniform(0.5, 2, 300)
    ours = PlattScaling().fit(scores, labels, weights)
    theirs = _SigmoidCalibration().fit(scores, labels, weights)
    assert_allclose([ours.a_, ours.b_], [theirs.a_, theirs.b_], rtol=1e-4)
    assert_allclose(ours.predict(scores), theirs.predict(scores), atol=1e-5)


# ---------------------------------------------------------------- decisions

def test_predict_keeps_rfq_on_calibrated_probabilities_with_training_priors(imbalanced):
    X, y, X_test, _ = imbalanced
    for method in METHODS:
        model = OOBCalibratedClassifier(small_forest(balanced_bootstrap=True),
                                        method=method).fit(X, y)
        proba = model.predict_proba(X_test)
        prior = np.bincount(y) / len(y)
        assert_allclose(model.class_prior_, prior)
        rfq = np.where(proba[:, 1] >= prior[1], 1, 0)  # minority class 1: p_min >= pi_min
        assert_array_equal(model.predict(X_test), rfq)
        # RFQ calls the rare class far more often than the argmax would
        assert (rfq == 1).sum() > 1.5 * (proba.argmax(axis=1) == 1).sum()


def test_predict_follows_the_forests_other_rules(imbalanced, three_classes):
    X, y, X_test, _ = imbalanced
    model = OOBCalibratedClassifier(small_forest(decision=0.3)).fit(X, y)
    assert_array_equal(model.predict(X_test), model.predict_proba(X_test)[:, 1] >= 0.3)
    model = OOBCalibratedClassifier(small_forest(decision="argmax")).fit(X, y)
    assert_array_equal(model.predict(X_test), model.predict_proba(X_test).argmax(axis=1))
    X, y, X_test, _ = three_classes
    model = OOBCalibratedClassifier(small_forest(balanced_bootstrap=True)).fit(X, y)
    proba = model.predict_proba(X_test)
    prior = np.bincount(y) / len(y)
    assert_array_equal(model.predict(X_test), (proba / prior).argmax(axis=1))


def test_calibration_improves_the_brier_score_of_a_balanced_forest():
    """Held-out imbalanced data: the balanced forest's raw probabilities
    overstate the rare class; OOB calibration halves the Brier score (0.092 ->
    0.046 when this test was written)."""
    X, y = make_classification(4000, n_features=8, n_informative=4, weights=[0.9],
                               flip_y=0.02, random_state=3)
    X_train, y_train, X_test, y_test = X[:2000], y[:2000], X[2000:], y[2000:]
    forest = AUCForestClassifier(100, balanced_bootstrap=True, random_state=0)
    raw = brier_score_loss(y_test, forest.fit(X_train, y_train).predict_proba(X_test)[:, 1])
    for method in METHODS:
        model = OOBCalibratedClassifier(forest, method=method).fit(X_train, y_train)
        calibrated = brier_score_loss(y_test, model.predict_proba(X_test)[:, 1])
        assert calibrated < 0.7 * raw, (method, calibrated, raw)


# ------------------------------------------------------------- input kinds

def test_sparse_input_gives_the_dense_answer(imbalanced):
    X, y, X_test, _ = imbalanced
    X, X_test = np.where(X > 0.5, X, 0.0), np.where(X_test > 0.5, X_test, 0.0)
    dense = OOBCalibratedClassifier(small_forest(balanced_bootstrap=True)).fit(X, y)
    sparse = OOBCalibratedClassifier(small_forest(balanced_bootstrap=True)).fit(csr_matrix(X), y)
    assert_allclose(sparse.predict_proba(csr_matrix(X_test)), dense.predict_proba(X_test),
                    rtol=0, atol=1e-12)
    assert_array_equal(sparse.predict(csr_matrix(X_test)), dense.predict(X_test))


def test_category_dataframe_gives_the_answer_of_its_codes(imbalanced):
    pd = pytest.importorskip("pandas")
    X, y, X_test, _ = imbalanced
    codes, test_codes = (np.digitize(X[:, 0], [-1, 0, 1]), np.digitize(X_test[:, 0], [-1, 0, 1]))
    levels = np.array(["a", "b", "c", "d"])

    def frame(X, codes):
        data = pd.DataFrame(X[:, 1:], columns=[f"x{i}" for i in range(1, X.shape[1])])
        data.insert(0, "level", pd.Categorical(levels[codes], categories=levels))
        return data

    numeric = np.column_stack([codes, X[:, 1:]]).astype(float)
    numeric_test = np.column_stack([test_codes, X_test[:, 1:]]).astype(float)
    by_codes = OOBCalibratedClassifier(small_forest(categorical_features=[0])).fit(numeric, y)
    by_frame = OOBCalibratedClassifier(small_forest()).fit(frame(X, codes), y)
    assert by_frame.estimator_.is_categorical_[0]
    assert list(by_frame.feature_names_in_) == ["level"] + [f"x{i}" for i in range(1, 6)]
    assert_allclose(by_frame.predict_proba(frame(X_test, test_codes)),
                    by_codes.predict_proba(numeric_test), rtol=0, atol=1e-12)


def test_cases_without_oob_predictions_are_left_out(imbalanced):
    X, y, X_test, _ = imbalanced
    with pytest.warns(UserWarning, match="do not have OOB scores"):
        model = OOBCalibratedClassifier(small_forest(n_estimators=3),
                                        method="isotonic").fit(X, y)
    scores, labels, weights = corrected_oob(model.estimator_, y)
    assert len(labels) < len(y)  # some rows were in all 3 trees' samples
    iso = IsotonicRegression(out_of_bounds="clip").fit(scores[:, 1], labels == 1)
    test_scores = to_training_priors(model.estimator_.predict_proba(X_test), weights)
    assert_allclose(model.predict_proba(X_test)[:, 1], iso.predict(test_scores[:, 1]), atol=1e-12)


def test_no_oob_prediction_at_all_is_a_clear_error(imbalanced):
    X, y, _, _ = imbalanced
    forest = small_forest(n_estimators=2, max_samples=1.0)  # every case in every tree
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="no training case has an "
                                                                    "out-of-bag prediction"):
        OOBCalibratedClassifier(forest).fit(X, y)


def test_an_estimator_without_oob_predictions_is_refused(imbalanced):
    X, y, _, _ = imbalanced
    with pytest.raises(TypeError, match="LogisticRegression"):
        OOBCalibratedClassifier(LogisticRegression()).fit(X, y)


def test_default_estimator_is_an_aucforest_and_is_not_changed(imbalanced):
    X, y, _, _ = imbalanced
    forest = small_forest()
    model = OOBCalibratedClassifier(forest).fit(X, y)
    assert forest.oob_score is False and not hasattr(forest, "estimators_")
    assert model.estimator_.oob_score is True
    assert isinstance(OOBCalibratedClassifier()._forest(), AUCForestClassifier)


@pytest.mark.parametrize("method", METHODS)
def test_calibrate_on_a_fitted_forest_is_the_second_half_of_fit(imbalanced, method):
    """calibrate(y, sample_weight) on a forest fitted with oob_score=True gives
    fit's model, the forest neither cloned nor fitted again."""
    X, y, X_test, _ = imbalanced
    weights = np.random.RandomState(0).uniform(0.5, 2, len(y))
    fitted = OOBCalibratedClassifier(small_forest(balanced_bootstrap=True),
                                     method=method).fit(X, y, weights)
    forest = small_forest(balanced_bootstrap=True, oob_score=True).fit(X, y, sample_weight=weights)
    calibrated = OOBCalibratedClassifier(forest, method=method).calibrate(y, weights)
    assert calibrated.estimator_ is forest
    assert_array_equal(calibrated.predict_proba(X_test), fitted.predict_proba(X_test))
    assert_array_equal(calibrated.predict(X_test), fitted.predict(X_test))
    assert_array_equal(calibrated.class_prior_, fitted.class_prior_)


def test_calibrate_refuses_a_forest_it_cannot_use(imbalanced):
    X, y, _, _ = imbalanced
    with pytest.raises(ValueError, match="calibrate needs a fitted forest as estimator"):
        OOBCalibratedClassifier().calibrate(y)
    with pytest.raises(NotFittedError):
        OOBCalibratedClassifier(small_forest()).calibrate(y)
    with pytest.raises(ValueError, match="OOBCalibratedClassifier needs the out-of-bag "
                                         "predictions.*fit it with oob_score=True"):
        OOBCalibratedClassifier(small_forest().fit(X, y)).calibrate(y)


@pytest.mark.parametrize("method", METHODS)
def test_cases_of_weight_zero_count_in_no_map(imbalanced, method):
    """The maps of a fit with sample weight 0 on 20% of the cases are those
    fitted on the other cases' corrected OOB scores alone."""
    X, y, _, _ = imbalanced
    rng = np.random.RandomState(1)
    weights = rng.uniform(0.5, 2, len(y))
    weights[rng.permutation(len(y))[:len(y) // 5]] = 0.0
    model = OOBCalibratedClassifier(small_forest(balanced_bootstrap=True),
                                    method=method).fit(X, y, weights)
    draw_weights = draw_class_weights(model.estimator_, y, weights)
    scores = to_training_priors(model.estimator_.oob_decision_function_, draw_weights)
    counts = ~np.isnan(scores).any(axis=1) & (weights > 0)
    alone = type(model.calibrators_[0])().fit(scores[counts, 1], y[counts] == 1,
                                              weights[counts])
    assert model.calibrators_[0].to_plain() == alone.to_plain()


# ------------------------------------------------------ pickling, model files

def test_pickle_round_trip_and_model_files_refuse_it(imbalanced, tmp_path):
    X, y, X_test, _ = imbalanced
    model = OOBCalibratedClassifier(small_forest(balanced_bootstrap=True),
                                    method="venn_abers").fit(X, y)
    again = pickle.loads(pickle.dumps(model))
    assert_array_equal(again.predict_proba(X_test), model.predict_proba(X_test))
    with pytest.raises(TypeError, match="OOBCalibratedClassifier"):
        aucforest.save(model, tmp_path / "model.npz")
    assert not (tmp_path / "model.npz").exists()


def test_pipeline_and_grid_search(imbalanced):
    X, y, _, _ = imbalanced
    pipe = make_pipeline(StandardScaler(), OOBCalibratedClassifier(small_forest()))
    grid = GridSearchCV(pipe, {"oobcalibratedclassifier__method": ["isotonic", "sigmoid"]},
                        cv=3, scoring="neg_brier_score").fit(X, y)
    assert grid.best_params_["oobcalibratedclassifier__method"] in ("isotonic", "sigmoid")
    assert grid.predict_proba(X[:5]).shape == (5, 2)
