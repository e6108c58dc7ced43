"""Fitting on dask collections with the rows staying on the workers (aucforest._dask).

A real LocalCluster (2 worker processes, 1 thread each). ``LOCAL_ROWS`` is lowered
so that these small data sets are grown level by level on the workers for a few
levels before their nodes are finished in memory: both phases run.
"""
import os
import signal
import threading
import time

import numpy as np
import pytest

import aucforest._dask as dask_fit
from aucforest import AUCForestClassifier, auc_split_statistic
from aucforest._dask._draws import draw_counts, hash_key
from aucforest.metrics import multiclass_auc
from dask_testing import assert_same_trees, chunked, local_cluster
from data_builders import dask_data

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")


def _assert_same_forest(a, b):
    assert_same_trees(a, b)
    np.testing.assert_array_equal(a.class_prior_, b.class_prior_)


CONFIGS = {
    "defaults": dict(),
    "weighted_poisson": dict(replacement=True, class_weight="balanced",
                             predict_min_samples=2),
    "gini_bounded": dict(criterion="gini", max_depth=6, min_samples_leaf=3, max_features=2,
                         nsplit=None, min_weight_fraction_leaf=0.002, max_bins=64),
    "balanced_ecp": dict(balanced_bootstrap=True, criterion="auc_ecp", nsplit=3),
}


@pytest.mark.parametrize("config", CONFIGS)
def test_forest_is_identical_across_chunkings_and_workers(dask_client, small_nodes, config):
    X, y = dask_data()
    w = None
    if config == "weighted_poisson":
        w = np.random.RandomState(1).uniform(0.0, 3.0, size=y.shape[0])
        w[::50] = 0.0
    params = dict(n_estimators=4, random_state=7, oob_score=True, **CONFIGS[config])
    forests = []
    for sizes in ([1500], [400, 700, 400], [100, 350, 200, 250, 300, 120, 180]):
        forest = AUCForestClassifier(**params).fit(*chunked(sizes, X, y, w))
        assert forest._dask_fit_stats["rounds"] >= 3, "no level was grown on the workers"
        forests.append(forest)
    reference = forests[0]
    proba = reference.oob_decision_function(*chunked([1500], X, y, w)).compute()
    for other in forests[1:]:
        _assert_same_forest(reference, other)
        assert other.oob_score_ == reference.oob_score_
        np.testing.assert_array_equal(
            other.oob_decision_function(*chunked([500, 1000], X, y, w)).compute(), proba)
        np.testing.assert_array_equal(other.predict_proba(X), reference.predict_proba(X))


def _root_reference(forest, X, y, w, class_weight=None):
    """Brute force on the gathered small data: tree 0's multiplicities (the
    documented draw: Bernoulli(0.632) or per-class rates keyed by (seed, row)),
    its weights, and the best root theta over every bin edge and both missing
    directions (all features: max_features=None)."""
    n = y.shape[0]
    classes, codes = np.unique(y, return_inverse=True)
    K = classes.shape[0]
    sw = np.ones(n) if w is None else w / w.max()
    if forest.balanced_bootstrap:
        positive = np.bincount(codes[sw > 0], minlength=K)
        per_class = round(0.632 * positive.min())
        rates = per_class / positive
        draw_y = np.where(sw > 0, codes, -1)
    else:
        rates = np.full(K, round(0.632 * n) / n)
        draw_y = codes
    seed = int(forest.estimators_[0].random_state)
    counts = draw_counts(np.array([hash_key(seed, 1)], dtype=np.uint64),
                         np.arange(n, dtype=np.int64), draw_y.astype(np.int32),
                         rates[None, :].copy(), False)[0]
    cw = np.ones(K) if class_weight is None else np.array(
        [class_weight.get(c, 1.0) for c in classes])
    weight = counts * sw * (cw / cw.max())[codes]
    sums = np.bincount(codes, weights=weight, minlength=K)
    best = 0.5
    for f in range(X.shape[1]):
        column = X[:, f]
        values = np.unique(column[~np.isnan(column)])
        edges = (values[:-1].astype(np.float64) / 2 + values[1:] / 2).astype(np.float32)
        for threshold in edges:
            for missing_left in (False, True):
                left = (column <= threshold) | (np.isnan(column) & missing_left)
                table = np.zeros((K, 2))
                table[:, 0] = np.bincount(codes[left], weights=weight[left], minlength=K)
                table[:, 1] = sums - table[:, 0]
                if (weight[left] > 0).any() and (weight[~left] > 0).any():
                    best = max(best, auc_split_statistic(table))
    return weight, codes, sums, best


@pytest.mark.parametrize("setting", ["sample_weight", "class_weight", "balanced", "nan"])
def test_root_split_matches_brute_force(dask_client, small_nodes, setting):
    X, y = dask_data(n=600, n_features=5, missing=0.05 if setting == "nan" else 0.0, seed=3)
    X = np.round(X, 1)  # few distinct values: every threshold is a bin edge
    w, class_weight, params = None, None, {}
    if setting == "sample_weight":
        w = np.random.RandomState(2).choice([0.0, 0.5, 1.0, 4.0], size=y.shape[0])
    elif setting == "class_weight":
        class_weight = params["class_weight"] = {0: 1.0, 1: 2.0, 2: 8.0}
    elif setting == "balanced":
        params["balanced_bootstrap"] = True
    forest = AUCForestClassifier(n_estimators=1, max_features=None, nsplit=None,
                                 predict_min_samples=1, random_state=5, **params).fit(
        *chunked([250, 350], X, y, w))
    tree = forest.estimators_[0].tree_
    weight, codes, sums, best = _root_reference(forest, X, y, w, class_weight)
    # the root's class sums, distinct cases and best theta
    np.testing.assert_allclose(tree.value[0, 0] * tree.weighted_n_node_samples[0], sums,
                               rtol=1e-9)
    assert tree.n_node_samples[0] == np.count_nonzero(weight > 0)
    assert tree.impurity[0] == pytest.approx(best, abs=1e-12)
    # the rows it sends left are those x <= threshold (NaN as missing_go_to_left says)
    f, threshold = tree.feature[0], tree.threshold[0]
    left = (X[:, f] <= threshold) | (np.isnan(X[:, f]) & bool(tree.missing_go_to_left[0]))
    np.testing.assert_allclose(tree.value[1, 0] * tree.weighted_n_node_samples[1],
                               np.bincount(codes[left], weights=weight[left], minlength=3),
                               rtol=1e-9)
    # class weights move the leaf proportions, not the AUC split: they cancel in
    # r_k = n_kR / n_k (docs/user_guide.md, section 1)
    if setting == "class_weight":
        plain = AUCForestClassifier(n_estimators=1, max_features=None, nsplit=None,
                                    predict_min_samples=1, random_state=5).fit(
            *chunked([600], X, y, None))
        assert plain.estimators_[0].tree_.threshold[0] == threshold
        assert not np.allclose(plain.estimators_[0].tree_.value[0], tree.value[0])


def test_test_auc_is_close_to_the_in_memory_binned_fit(dask_client, monkeypatch):
    """Same rows, parameters and bins, different draws and random streams: the two
    forests differ by their Monte Carlo noise. Over 6 seeds the in-memory fit's test
    AUC here has a standard deviation of 0.0020 (one forest of 60 trees), so 0.008
    is four of them."""
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 600)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 600)  # whatever n
    X, y = dask_data(n=6000, n_features=8, seed=11)
    train, test = slice(0, 4000), slice(4000, None)
    params = dict(n_estimators=60, random_state=0, max_bins=255)
    remote = AUCForestClassifier(**params).fit(*chunked([1000, 1500, 1500], X[train], y[train], None))
    local = AUCForestClassifier(**params).fit(X[train], y[train])
    auc_remote = multiclass_auc(y[test], remote.predict_proba(X[test]))
    auc_local = multiclass_auc(y[test], local.predict_proba(X[test]))
    assert abs(auc_remote - auc_local) < 0.008, (auc_remote, auc_local)
    assert remote.max_bins_ == local.max_bins_ == 255


def test_lazy_prediction_equals_in_memory_prediction(dask_client, small_nodes):
    X, y = dask_data()
    forest = AUCForestClassifier(n_estimators=5, random_state=1).fit(
        *chunked([700, 800], X, y, None))
    X_dask = da.from_array(X, chunks=(300, 6))
    proba, labels, leaves = (forest.predict_proba(X_dask), forest.predict(X_dask),
                             forest.apply(X_dask))
    for result in (proba, labels, leaves):  # the model is scattered once: test_dask_model
        assert isinstance(result, da.Array)
    np.testing.assert_array_equal(proba.compute(), forest.predict_proba(X))
    np.testing.assert_array_equal(labels.compute(), forest.predict(X))
    np.testing.assert_array_equal(leaves.compute(), forest.apply(X))
    assert isinstance(forest.predict_proba(X), np.ndarray)  # in-memory input: as before


def test_dataframe_input_gives_feature_names(dask_client, small_nodes):
    pd = pytest.importorskip("pandas")
    X, y = dask_data(n=800)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    ddf = dd.from_pandas(frame, npartitions=3)
    forest = AUCForestClassifier(n_estimators=4, random_state=2).fit(
        ddf, dd.from_pandas(pd.Series(y), npartitions=3))
    assert list(forest.feature_names_in_) == list(frame.columns)
    proba = forest.predict_proba(ddf)
    np.testing.assert_array_equal(proba.compute(), forest.predict_proba(frame))
    with pytest.raises(ValueError, match="feature names"):
        forest.predict_proba(ddf.rename(columns={"f0": "g0"}))


@pytest.mark.parametrize("params, message", [
    (dict(max_bins=None), "max_bins=None"),
    (dict(class_weight="balanced_subsample"), "balanced_subsample"),
    (dict(warm_start=True), "warm_start"),
])
def test_unsupported_settings_raise_clearly(dask_client, params, message):
    X, y = dask_data(n=200)
    with pytest.raises(ValueError, match=message):
        AUCForestClassifier(n_estimators=2, **params).fit(*chunked([200], X, y, None))


def test_draws_of_a_dask_fit_are_refused_clearly(dask_client):
    X, y = dask_data(n=300)
    forest = AUCForestClassifier(n_estimators=2, random_state=0).fit(
        *chunked([150, 150], X, y, None))
    with pytest.raises(AttributeError, match="not available after a fit on dask"):
        forest.estimators_samples_
    from aucforest.inspection._case_draws import case_draws
    with pytest.raises(AttributeError, match="not available after a fit on dask"):
        case_draws(forest, np.searchsorted(forest.classes_, y))
    import pickle
    restored = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(restored.predict_proba(X), forest.predict_proba(X))


def test_no_n_sized_array_reaches_the_client(dask_client, monkeypatch):
    n = 20_000
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 2_000)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 2_000)  # whatever n
    monkeypatch.setattr(dask_fit, "EDGE_SAMPLE_ROWS", 1_000)
    monkeypatch.setattr(dask_fit, "OOB_CHOICE_MAX_CASES", 900)
    X, y = dask_data(n=n, n_features=5, seed=4)
    forest = AUCForestClassifier(n_estimators=3, oob_score=True, random_state=0).fit(
        *chunked([5000, 7000, 8000], X, y, None))
    stats = forest._dask_fit_stats
    # the bounded sample for the edges (about 1,000 rows), the OOB rows (900),
    # histograms (nodes x features x bins x classes, whatever n): nothing near n rows
    assert 0 < stats["largest_gathered_rows"] <= 1_300, stats
    oob = forest.oob_decision_function(*chunked([5000, 7000, 8000], X, y, None))
    assert isinstance(oob, da.Array) and oob.shape == (n, 3)


def test_one_worker_and_a_worker_killed_mid_fit_give_the_same_forest(dask_client, small_nodes):
    """On a cluster of one worker the forest is the one two workers grow; killing
    that worker (SIGKILL) once the level-wise growth has started loses every
    partition, which dask recomputes from the graph (its nanny starts a new
    worker): the same forest again, or a clear error, never a hang."""
    X, y = dask_data(n=2000, seed=5)
    params = dict(n_estimators=4, random_state=3)
    reference = AUCForestClassifier(**params).fit(*chunked([700, 600, 700], X, y, None))
    outcome = {}

    def fit():
        try:
            outcome["forest"] = AUCForestClassifier(**params).fit(
                *chunked([1000, 1000], X, y, None))
        except Exception as error:  # a clear error is acceptable, a hang is not
            outcome["error"] = error

    with local_cluster(1) as cluster, distributed.Client(cluster) as other:
        fit()
        _assert_same_forest(outcome.pop("forest"), reference)
        (pid,) = other.run(os.getpid).values()
        fitting = threading.Thread(target=fit)
        fitting.start()
        deadline = time.time() + 30
        while time.time() < deadline and fitting.is_alive():
            keys = other.run_on_scheduler(
                lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks])
            if any("aucforest-round" in k for k in keys):
                break
            time.sleep(0.005)
        assert fitting.is_alive(), "the fit ended before the worker could be killed"
        os.kill(pid, signal.SIGKILL)
        fitting.join(timeout=300)  # a loaded machine restarts the worker slowly
        assert not fitting.is_alive(), "the fit hung after its worker was lost"
        assert (other.run(os.getpid).values() != {pid}), "the worker was not replaced"
    if "error" in outcome:
        assert str(outcome["error"]), "the error must say what happened"
    else:
        _assert_same_forest(outcome["forest"], reference)
