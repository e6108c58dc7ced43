"""The fitted state: published whole, checked against X at every compiled entry point.

Regressions of issue 13: a failed refit left a forest whose prediction read
out of bounds, concurrent refits mixed two models, a forest with no trees
predicted, Ctrl-C was ignored during prediction.
"""
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from aucforest import AUCForestClassifier, AUCTreeClassifier
from aucforest._tree import accumulate_proba
from package_env import package_env

rng = np.random.default_rng(0)
X_WIDE = rng.normal(size=(4, 3000))
Y4 = np.array([0, 1, 0, 1])


@pytest.mark.parametrize("make", [
    lambda: AUCForestClassifier(5, max_features=None, random_state=0),
    lambda: AUCTreeClassifier(random_state=0),
])
def test_a_failed_refit_leaves_the_previous_model_intact(make):
    model = make().fit(X_WIDE, Y4)
    before = model.predict_proba(X_WIDE)
    with pytest.raises(ValueError, match="one class"):
        model.fit(np.ones((6, 1)), [0] * 6)
    assert model.n_features_in_ == 3000
    np.testing.assert_array_equal(model.predict_proba(X_WIDE), before)
    with pytest.raises(ValueError, match="3000 features"):
        model.predict_proba(np.ones((1, 1), np.float32))


def test_an_interrupted_first_fit_leaves_an_unfitted_forest(monkeypatch):
    import aucforest._forest as forest_module

    calls = []

    def interrupted(*args, **kwargs):
        if calls:
            raise KeyboardInterrupt
        calls.append(1)
        return grow(*args, **kwargs)

    grow = forest_module.grow_tree
    monkeypatch.setattr(forest_module, "grow_tree", interrupted)
    forest = AUCForestClassifier(3, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        forest.fit(X_WIDE, Y4)
    assert not hasattr(forest, "estimators_")
    with pytest.raises(NotFittedError):
        forest.predict(X_WIDE)


def test_a_forest_without_trees_is_not_fitted():
    forest = AUCForestClassifier(3, random_state=0).fit(X_WIDE, Y4)
    forest.estimators_ = []
    with pytest.raises(NotFittedError):
        forest.predict_proba(X_WIDE)


def test_compiled_prediction_checks_every_tree_against_x_and_out():
    wide = AUCForestClassifier(2, random_state=0).fit(X_WIDE, Y4)
    narrow = AUCForestClassifier(2, random_state=0).fit(X_WIDE[:, :2], Y4)
    three = AUCForestClassifier(2, random_state=0).fit(np.tile(X_WIDE[:, :2], (3, 1)),
                                                       [0, 1, 2] * 4)
    trees = [t.tree_ for t in wide.estimators_]
    X1 = np.ones((1, 1), np.float32)
    with pytest.raises(ValueError, match="shape"):
        accumulate_proba(X1, trees, np.zeros((1, 2)))
    with pytest.raises(ValueError, match="different numbers of features"):
        accumulate_proba(X1, trees + [narrow.estimators_[0].tree_], np.zeros((1, 2)))
    with pytest.raises(ValueError, match="classes"):
        accumulate_proba(np.ones((1, 2), np.float32),
                         [narrow.estimators_[0].tree_, three.estimators_[0].tree_],
                         np.zeros((1, 2)))
    with pytest.raises(ValueError, match="rows"):
        accumulate_proba(np.ones((3, 2), np.float32), [narrow.estimators_[0].tree_],
                         np.zeros((2, 2)))


def _refit_while_predicting(seconds):
    """Predict in a loop while another thread refits with other widths and class counts."""
    data = [(rng.normal(size=(60, p)), np.arange(60) % k) for p, k in [(1, 2), (40, 3), (7, 5)]]
    forest = AUCForestClassifier(8, max_features=None, random_state=0).fit(*data[1])
    errors, results = [], []
    done = threading.Event()

    def refit():
        i = 0
        while not done.is_set():
            forest.fit(*data[i % 3])
            i += 1

    def predict():
        while not done.is_set():
            for X, _ in data:
                try:
                    proba = forest.predict_proba(X)
                except ValueError:  # X's width is not the current model's
                    continue
                except Exception as error:  # anything else is a bug
                    errors.append(error)
                results.append(proba)

    threads = [threading.Thread(target=refit), threading.Thread(target=predict),
               threading.Thread(target=predict)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    done.set()
    for thread in threads:
        thread.join()
    return forest, errors, results


def test_threaded_stress_predict_while_refitting():
    forest, errors, results = _refit_while_predicting(3.0)
    assert not errors, errors[:3]
    assert results
    for proba in results:
        assert proba.shape[1] in (2, 3, 5)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-9)
        assert np.all((proba >= 0) & (proba <= 1))


def test_two_threads_fitting_one_forest_end_with_one_consistent_model():
    data = [(rng.normal(size=(80, p)), np.arange(80) % k) for p, k in [(3, 2), (9, 4)]]
    forest = AUCForestClassifier(30, random_state=0)
    threads = [threading.Thread(target=forest.fit, args=d) for d in data]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(forest.estimators_) == 30
    widths = {tree.tree_.n_features for tree in forest.estimators_}
    assert widths == {forest.n_features_in_}
    assert {tree.tree_.max_n_classes for tree in forest.estimators_} == {forest.n_classes_}
    X = data[0][0] if forest.n_features_in_ == 3 else data[1][0]
    np.testing.assert_allclose(forest.predict_proba(X).sum(axis=1), 1.0)


def test_prediction_returns_when_stop_is_set():
    forest = AUCForestClassifier(10, random_state=0).fit(X_WIDE, Y4)
    out = np.zeros((4, 2))
    accumulate_proba(X_WIDE.astype(np.float32), [t.tree_ for t in forest.estimators_], out,
                     np.ones(1, np.uint8))
    np.testing.assert_array_equal(out, 0.0)  # stopped before the first tree


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("n_jobs", [None, 2])
def test_ctrl_c_stops_predict_proba_within_a_second(tmp_path, n_jobs):
    # the child restores Python's Ctrl-C handler: a shell starts background
    # jobs with SIGINT ignored, and the child would inherit that
    script = textwrap.dedent(f"""
        import signal, sys, time, numpy as np
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from aucforest import AUCForestClassifier
        rng = np.random.default_rng(0)
        X = rng.normal(size=(2000, 5)).astype(np.float32)
        forest = AUCForestClassifier(300, n_jobs={n_jobs}, random_state=0).fit(X, X[:, 0] > 0)
        big = np.repeat(X, 300, axis=0)
        print("ready", flush=True)
        start = time.monotonic()
        try:
            forest.predict_proba(big)
            print("finished", time.monotonic() - start, flush=True)
        except KeyboardInterrupt:
            print("interrupted", time.monotonic() - start, flush=True)
    """)
    env = package_env()
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               text=True, cwd=tmp_path, env=env)
    assert process.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    line = process.stdout.readline().split()
    elapsed = time.monotonic() - sent
    process.wait(timeout=60)
    assert line[0] == "interrupted", line
    assert elapsed < 2.0, elapsed
