"""One model snapshot per call (issue 44): every public method reads the fitted
state once, checks X against that same state and hands only that to compiled
code, so that a refit in another thread (other features, other categories,
other classes) never mixes two models.

Reference: the output of each of the two models, computed before the threads
start. While one thread refits the same estimator on the two training sets in
turn, every result the main thread gets must equal exactly one of them (or be
a ValueError saying X does not fit the model of that moment).
"""
import threading
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from aucforest import AUCForestClassifier, AUCTreeClassifier, load, save
from aucforest.inspection import oob_importance, shap_values

# small forests leave a few cases in every tree's sample: the fit warns, as it should
pytestmark = pytest.mark.filterwarnings("ignore:.*in every tree's sample:UserWarning")

MIN_CALLS = 40  # calls of the method per test, at least
DEADLINE = 30.0  # seconds: stop calling even if one model was never seen


def shape_data():
    """Two training sets of other widths and class counts: 40 features and three
    classes, two features and two classes."""
    rng = np.random.default_rng(0)
    wide = (rng.normal(size=(150, 40)), np.arange(150) % 3)
    narrow = (rng.normal(size=(40, 2)), np.array(["no", "yes"])[np.arange(40) % 2])
    return wide, narrow


def category_data():
    """Two category frames of the same columns whose categories are ordered
    differently (so the codes of one value differ), with other classes."""
    rng = np.random.default_rng(1)
    n = 90
    colour = rng.choice(["red", "green", "blue", "grey"], n)
    size = rng.choice([3, 5, 7], n)
    frame = pd.DataFrame({"colour": pd.Categorical(colour, ["red", "green", "blue", "grey"]),
                          "size": pd.Categorical(size, [3, 5, 7]),
                          "weight": rng.normal(size=n)})
    y_a = ((colour == "red") | (size == 7)).astype(int)
    reordered = frame.assign(colour=frame.colour.cat.reorder_categories(
                                 ["grey", "blue", "green", "red"]),
                             size=frame["size"].cat.reorder_categories([7, 3, 5]))
    y_b = np.array(["p", "q", "r"])[((colour == "blue").astype(int) + (size == 3)) % 3]
    return (frame, y_a), (reordered, y_b)


def forest():
    return AUCForestClassifier(4, max_features=None, random_state=0, n_jobs=1)


def tree():
    return AUCTreeClassifier(random_state=0)


def call_during_refits(estimator, datasets, call, queries):
    """``call(estimator, query)`` for the queries in turn while another thread
    refits ``estimator`` on the datasets in turn.

    Returns
    -------
    expected : list (one per dataset) of the list (one per query) of what the
        model fitted on that dataset gives, or None where it raises ValueError
    results : list of (query index, result), None for a ValueError
    """
    expected = []
    for X, y in datasets:
        estimator.fit(X, y)
        expected.append([_outcome(call, estimator, query) for query in queries])
    done = threading.Event()

    def refit():
        i = 0
        while not done.is_set():
            estimator.fit(*datasets[i % len(datasets)])
            i += 1

    results = []
    refitting = threading.Thread(target=refit)
    refitting.start()
    start = time.monotonic()
    try:
        while time.monotonic() - start < DEADLINE:
            i = len(results) % len(queries)
            results.append((i, _outcome(call, estimator, queries[i])))
            if len(results) >= MIN_CALLS and _models_seen(expected, results) == len(datasets):
                break
    finally:
        done.set()
        refitting.join()
    return expected, results


def _outcome(call, estimator, query):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # feature names of an array, unseen levels
        try:
            return call(estimator, query)
        except ValueError:
            return None


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    if hasattr(a, "toarray"):
        a, b = a.toarray(), b.toarray()
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)


def _models_seen(expected, results):
    """How many of the models gave at least one result (not an error) that only
    they give."""
    seen = set()
    for i, result in results:
        matches = [m for m, outputs in enumerate(expected) if _same(outputs[i], result)]
        if result is not None and len(matches) == 1:
            seen.add(matches[0])
    return len(seen)


def assert_each_result_is_one_model(expected, results):
    for i, result in results:
        assert any(_same(outputs[i], result) for outputs in expected), (
            f"call {i}: a result that neither model gives (a mix of two models)")
    assert _models_seen(expected, results) == len(expected), "the refits never interleaved"


FOREST_METHODS = {
    "predict": lambda m, X: m.predict(X),
    "predict_proba": lambda m, X: m.predict_proba(X),
    "predict_log_proba": lambda m, X: m.predict_log_proba(X),
    "apply": lambda m, X: m.apply(X),
    "decision_path": lambda m, X: m.decision_path(X),
    "shap_values": lambda m, X: shap_values(m, X),
}
TREE_METHODS = {name: FOREST_METHODS[name] for name in
                ("predict", "predict_proba", "predict_log_proba", "apply", "decision_path")}


@pytest.mark.parametrize("method", list(FOREST_METHODS))
def test_forest_methods_during_refits_on_other_shapes_give_one_model(method):
    """Case 1 (shap_values aborted the process with heap corruption: trees of one
    model, X checked against another) and every other method."""
    wide, narrow = shape_data()
    expected, results = call_during_refits(forest(), [wide, narrow], FOREST_METHODS[method],
                                           [wide[0][:20], narrow[0]])
    assert_each_result_is_one_model(expected, results)


@pytest.mark.parametrize("method", list(FOREST_METHODS))
def test_forest_methods_on_category_frames_during_refits_on_other_categories_give_one_model(
        method):
    """Case 2: predict on a category frame mapped it with one model's categories
    and predicted with another model's trees (wrong classes about 8% of the time)."""
    (frame, y_a), (reordered, y_b) = category_data()
    expected, results = call_during_refits(forest(), [(frame, y_a), (reordered, y_b)],
                                           FOREST_METHODS[method], [frame.iloc[:30]])
    assert_each_result_is_one_model(expected, results)


@pytest.mark.parametrize("method", list(TREE_METHODS))
def test_tree_methods_during_refits_on_other_shapes_and_categories_give_one_model(method):
    wide, narrow = shape_data()
    expected, results = call_during_refits(tree(), [wide, narrow], TREE_METHODS[method],
                                           [wide[0][:20], narrow[0]])
    assert_each_result_is_one_model(expected, results)
    (frame, y_a), (reordered, y_b) = category_data()
    expected, results = call_during_refits(tree(), [(frame, y_a), (reordered, y_b)],
                                           TREE_METHODS[method], [frame.iloc[:30]])
    assert_each_result_is_one_model(expected, results)


def test_oob_importance_during_refits_gives_one_model():
    (frame, y_a), (reordered, y_b) = category_data()
    wide, narrow = shape_data()

    def importance(model, data):
        result = oob_importance(model, *data, random_state=0)
        return result.importances, result.per_class, np.array(result.score)

    for datasets in ([(frame, y_a), (reordered, y_b)], [wide, narrow]):
        expected, results = call_during_refits(forest(), datasets, importance, datasets)
        assert_each_result_is_one_model(expected, results)


def test_save_during_refits_writes_one_model(tmp_path):
    (frame, y_a), (reordered, y_b) = category_data()
    path = tmp_path / "forest.npz"

    def saved(model, X):
        save(model, path)
        loaded = load(path)
        return loaded.predict_proba(X), loaded.classes_

    expected, results = call_during_refits(forest(), [(frame, y_a), (reordered, y_b)], saved,
                                           [frame.iloc[:30]])
    assert_each_result_is_one_model(expected, results)


def test_shap_values_check_every_tree_against_x():
    """The compiled TreeSHAP trusts the trees' feature indices: a tree of
    another width among the estimators is refused before it is called."""
    wide, narrow = shape_data()
    model = forest().fit(*wide)
    model.estimators_ = model.estimators_[:2] + forest().fit(
        np.hstack([wide[0], wide[0]]), wide[1]).estimators_[:1]
    with pytest.raises(ValueError, match="features"):
        shap_values(model, wide[0][:5])
