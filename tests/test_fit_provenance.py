"""The fitted state is published in one step and nothing of an earlier fit
survives a refit; the out-of-bag source (`aucforest._oob_source`) says, for
each kind of fit, where the out-of-bag predictions come from or what to do."""
import dask.array as da
import numpy as np
import pytest
from sklearn.datasets import make_classification

import aucforest
from aucforest import AUCForestClassifier
from aucforest._oob_source import KeptInMemory, NotKept, OnWorkers, oob_source
from aucforest.calibration import OOBCalibratedClassifier
from aucforest.decisions import tune_decision
from aucforest.metrics import oob_imbalance_report


def data(n=400, seed=0):
    return make_classification(n, 6, n_informative=4, weights=[0.8], random_state=seed)


def test_a_refit_in_memory_drops_every_private_state_of_a_dask_fit(dask_client):
    X, y = data()
    forest = AUCForestClassifier(6, oob_score=True, random_state=0)
    forest.fit(da.from_array(X, chunks=200), da.from_array(y, chunks=200))
    assert isinstance(oob_source(forest), OnWorkers) and hasattr(forest, "_dask_fit_stats")
    forest.fit(X, y)
    assert not hasattr(forest, "_dask_fit_stats")  # a Dask fit's counters went stale here
    assert isinstance(oob_source(forest), KeptInMemory)
    assert forest.oob_decision_function_.shape == (400, 2)
    expected = AUCForestClassifier(6, oob_score=True, random_state=0).fit(X, y)
    assert forest.oob_gmean_ == expected.oob_gmean_
    # only the parameters and scikit-learn's own settings were carried over
    fresh = set(vars(expected))
    assert set(vars(forest)) == fresh


def test_a_refit_of_a_loaded_forest_keeps_nothing_of_the_file(tmp_path):
    X, y = data()
    aucforest.save(AUCForestClassifier(5, oob_score=True, random_state=0).fit(X, y),
                   tmp_path / "m.npz")
    loaded = aucforest.load(tmp_path / "m.npz")
    loaded.set_params(oob_score=False)
    loaded.fit(X[:300], y[:300])
    assert isinstance(oob_source(loaded), NotKept)
    assert not hasattr(loaded, "oob_decision_function_") and not hasattr(loaded, "oob_score_")
    with pytest.raises(ValueError, match="fitted without them: fit it with oob_score=True"):
        tune_decision(loaded)


def test_no_oob_predictions_of_an_in_memory_fit_say_to_fit_with_oob_score():
    X, y = data()
    forest = AUCForestClassifier(5, random_state=0).fit(X, y)
    for consumer in (lambda: tune_decision(forest),
                     lambda: oob_imbalance_report(forest, y),
                     lambda: OOBCalibratedClassifier(forest).calibrate(y)):
        with pytest.raises(ValueError, match="fit it with oob_score=True"):
            consumer()


def test_a_dask_fit_without_oob_score_is_told_to_pass_the_training_collections(dask_client):
    """A Dask fit's OOB rows come from oob_decision_function(X, y), whether or not it
    was fitted with oob_score=True; it is not told to fit with oob_score=True."""
    X, y = data()
    Xd, yd = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
    forest = AUCForestClassifier(5, random_state=0).fit(Xd, yd)
    with pytest.raises(ValueError, match=r"forest.oob_decision_function\(X, y, sample_weight\)"):
        tune_decision(forest)
    with pytest.raises(AttributeError, match=r"oob_decision_function\(X, y"):
        forest.oob_decision_function_
    proba = oob_source(forest).training_proba(forest, "test", Xd, yd)
    np.testing.assert_array_equal(proba, forest.oob_decision_function(Xd, yd).compute())


def test_a_dask_fit_read_from_a_file_says_it_keeps_no_draws(dask_client, tmp_path):
    X, y = data()
    Xd, yd = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
    forest = AUCForestClassifier(5, oob_score=True, random_state=0).fit(Xd, yd)
    aucforest.save(forest, tmp_path / "m.npz")
    loaded = aucforest.load(tmp_path / "m.npz")
    assert loaded.oob_gmean_ == forest.oob_gmean_ and loaded.oob_score_ == forest.oob_score_
    with pytest.raises(ValueError, match="read from a model file, which keeps no draws"):
        tune_decision(loaded, X=Xd, y=yd)


def test_every_private_attribute_a_fit_keeps_is_declared_as_fit_state(dask_client, tmp_path):
    """So that a refit drops it (`fit_atomically`): the forest's private attributes
    after a fit in memory, on Dask and from a model file are all in FIT_PRIVATE_STATE."""
    from aucforest._base import FIT_PRIVATE_STATE
    X, y = data()
    fits = [AUCForestClassifier(4, oob_score=True, random_state=0).fit(X, y),
            AUCForestClassifier(4, oob_score=True, random_state=0).fit(
                da.from_array(X, chunks=200), da.from_array(y, chunks=200))]
    aucforest.save(fits[0], tmp_path / "m.npz")
    fits.append(aucforest.load(tmp_path / "m.npz"))
    for forest in fits:
        private = {name for name in vars(forest)
                   if name.startswith("_") and not name.endswith("_")}
        assert private <= FIT_PRIVATE_STATE, private - FIT_PRIVATE_STATE


def test_a_pipeline_refits_a_forest(tmp_path):
    """scikit-learn's own attributes (a pipeline's callback context) survive the
    staging copy; the forest's fit state does not."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = data()
    pipeline = make_pipeline(StandardScaler(), AUCForestClassifier(4, random_state=0))
    pipeline.fit(X, y).fit(X[:300], y[:300])
    assert pipeline[-1].n_features_in_ == 6
