"""The consumers of out-of-bag predictions on a forest fitted on dask collections.

Such a forest keeps no n-row ``oob_decision_function_``; each consumer either
computes it from the training collections (``forest.oob_decision_function(X, y,
sample_weight)``) or refuses with a message that names that way out. Each
result is checked against the consumer's math applied to that array computed
into memory: scikit-learn's ``IsotonicRegression`` for the calibration, the
sorted nonconformity scores for the conformal predictor, and the in-memory
path (a copy of the forest holding the array as ``oob_decision_function_``)
for `tune_decision` and `oob_imbalance_report`. A real LocalCluster of two
worker processes.
"""
import copy

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.isotonic import IsotonicRegression

import aucforest
from aucforest import AUCForestClassifier
from aucforest._oob_source import KeptInMemory, OnWorkers, oob_source
from aucforest._prior_shift import draw_class_weights, to_training_priors
from aucforest.calibration import OOBCalibratedClassifier
from aucforest.conformal import MondrianConformalClassifier
from aucforest.decisions import tune_decision
from aucforest.metrics import oob_imbalance_report
from cli_files import run_main, write_csv
from dask_testing import chunked

distributed = pytest.importorskip("distributed")

N_TREES = 20
CHUNKS = (120, 90, 90)


def _data(n_classes=2, seed=0):
    weights = [0.8] if n_classes == 2 else [0.6, 0.3]
    X, y = make_classification(sum(CHUNKS) + 100, n_features=5, n_informative=3,
                               n_redundant=0, n_classes=n_classes, weights=weights,
                               random_state=seed)
    n = sum(CHUNKS)
    return X[:n], y[:n], X[n:]


@pytest.fixture(scope="module")
def dask_forest(dask_client):
    """A forest fitted on dask collections (balanced bootstrap), its training
    rows in memory and as dask arrays, and their OOB probabilities computed."""
    X, y, X_test = _data()
    X_d, y_d = chunked(CHUNKS, X, y)
    forest = AUCForestClassifier(N_TREES, oob_score=True, balanced_bootstrap=True,
                                 random_state=0).fit(X_d, y_d)
    proba = forest.oob_decision_function(X_d, y_d).compute()
    return forest, X, y, X_d, y_d, proba, X_test


def _in_memory_twin(forest, y, proba):
    """The forest as a fit in memory would keep it, with ``proba`` as its
    out-of-bag predictions (the consumers' in-memory path as the reference)."""
    twin = copy.copy(forest)
    vars(twin).pop("_case_draws", None)
    twin.oob_decision_function_ = proba
    twin.oob_labels_ = np.searchsorted(forest.classes_, y)
    twin._set_fit_provenance(oob_source=KeptInMemory())
    return twin


def _assert_same(a, b):
    """Equal values, recursively through tuples and dicts of arrays (NaN == NaN)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _assert_same(a[key], b[key])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, z in zip(a, b):
            _assert_same(x, z)
    elif a is None or isinstance(a, str):
        assert a == b
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_dask_forest_has_no_n_row_oob_decision_function(dask_forest):
    forest, *_ = dask_forest
    assert isinstance(oob_source(forest), OnWorkers) and oob_source(forest).sample is not None
    with pytest.raises(AttributeError, match=r"oob_decision_function\(X, y"):
        forest.oob_decision_function_


def test_oob_calibrated_classifier_fits_its_maps_on_the_computed_oob(dask_client):
    X, y, X_test = _data(seed=1)
    weight = np.random.default_rng(1).uniform(0.5, 2.0, y.shape[0])
    X_d, y_d, w_d = chunked(CHUNKS, X, y, weight)
    model = OOBCalibratedClassifier(
        AUCForestClassifier(N_TREES, balanced_bootstrap=True, random_state=0),
        method="isotonic").fit(X_d, y_d, sample_weight=w_d)
    forest = model.estimator_
    assert oob_source(forest).on_workers  # fitted on the dask client, with oob_score
    # reference: the isotonic map of the corrected OOB probabilities, by scikit-learn
    oob = forest.oob_decision_function(X_d, y_d, w_d).compute()
    draw_weights = draw_class_weights(forest, y, weight)
    np.testing.assert_array_equal(model.draw_class_weights_, draw_weights)
    scores = to_training_priors(oob, draw_weights)
    has_oob = ~np.isnan(scores).any(axis=1)
    isotonic = IsotonicRegression(out_of_bounds="clip").fit(
        scores[has_oob, 1], (y[has_oob] == 1).astype(float), weight[has_oob])
    test_scores = to_training_priors(forest.predict_proba(X_test), draw_weights)
    positive = np.clip(isotonic.predict(test_scores[:, 1]), 0, 1)
    np.testing.assert_allclose(model.predict_proba(X_test),
                               np.column_stack([1 - positive, positive]), rtol=0, atol=1e-12)


def test_mondrian_conformal_keeps_the_scores_of_the_computed_oob(dask_client):
    X, y, X_test = _data(n_classes=3, seed=2)
    weight = np.where(np.arange(y.shape[0]) % 7 == 0, 0.0, 1.0)  # weight 0: not calibrating
    X_d, y_d, w_d = chunked(CHUNKS, X, y, weight)
    conformal = MondrianConformalClassifier(AUCForestClassifier(N_TREES, random_state=0),
                                            smoothing=False).fit(X_d, y_d, sample_weight=w_d)
    forest = conformal.estimator_
    assert oob_source(forest).on_workers
    oob = forest.oob_decision_function(X_d, y_d, w_d).compute()
    keep = ~np.isnan(oob).any(axis=1) & (weight != 0)
    for k in range(3):
        expected = np.sort(1.0 - oob[keep & (y == k), k])
        np.testing.assert_array_equal(conformal.calibration_scores_[k], expected)
    # deterministic p-values, (#{a_i >= a} + 1) / (n_k + 1), by brute force
    test_scores = 1.0 - forest.predict_proba(X_test)
    brute = np.array([[(np.sum(conformal.calibration_scores_[k] >= s[k]) + 1)
                       / (conformal.n_calibration_[k] + 1) for k in range(3)]
                      for s in test_scores])
    np.testing.assert_allclose(conformal.p_values(X_test), brute, rtol=0, atol=1e-12)


@pytest.mark.parametrize("metric", ["gmean", "f1"])
def test_tune_decision_takes_the_training_collections(dask_forest, metric):
    forest, X, y, X_d, y_d, proba, _ = dask_forest
    tuned = tune_decision(forest, metric, y=y_d, X=X_d, n_bootstrap=40, random_state=0)
    reference = tune_decision(_in_memory_twin(forest, y, proba), metric, y=y, n_bootstrap=40,
                              random_state=0)
    _assert_same(tuned._asdict(), reference._asdict())


def test_oob_imbalance_report_takes_the_training_collections(dask_forest):
    forest, X, y, X_d, y_d, proba, _ = dask_forest
    report = oob_imbalance_report(forest, y_d, X=X_d)
    reference = oob_imbalance_report(_in_memory_twin(forest, y, proba), y)
    _assert_same(report._asdict(), reference._asdict())
    assert report.auc == pytest.approx(
        oob_imbalance_report(forest, y, X=X_d).auc)  # y in memory works as well


@pytest.mark.parametrize("consumer", [
    lambda forest, y: tune_decision(forest, y=y, n_bootstrap=10),
    lambda forest, y: oob_imbalance_report(forest, y),
], ids=["tune_decision", "oob_imbalance_report"])
def test_without_the_training_collections_the_refusal_names_the_way_out(dask_forest,
                                                                       consumer):
    forest, X, y, *_ = dask_forest
    with pytest.raises(ValueError, match=r"fitted on dask collections.*pass the training "
                                         r"collections as X= and y=.*"
                                         r"oob_decision_function\(X, y"):
        consumer(forest, y)


def test_x_for_a_forest_fitted_in_memory_is_refused():
    X, y, _ = _data()
    forest = AUCForestClassifier(N_TREES, oob_score=True, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="tune_decision: X is for a forest fitted on dask"):
        tune_decision(forest, y=y, X=X, n_bootstrap=10)
    with pytest.raises(ValueError, match="oob_imbalance_report: X is for a forest fitted on"):
        oob_imbalance_report(forest, y, X=X)


def test_cli_sets_of_a_dask_model_file_say_why_there_are_none(dask_forest, capsys, tmp_path):
    forest, *_, X_test = dask_forest
    aucforest.save(forest, tmp_path / "dask.npz")
    test = write_csv(tmp_path / "test.csv", [f"x{j}" for j in range(X_test.shape[1])],
                     X_test.tolist())
    code, out, err = run_main(capsys, "predict", tmp_path / "dask.npz", test, "--sets", 0.1)
    assert code == 1 and out == ""
    assert "--sets needs the out-of-bag predictions" in err and "dask.npz" in err
    assert "fitted on dask collections" in err and "oob_decision_function(X, y)" in err
