"""Reliability: fuzzed inputs through the estimators, edge cases, threads, memory."""
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aucforest import AUCForestClassifier, AUCTreeClassifier
from package_env import package_env

LABEL_KINDS = {
    "int": lambda codes: codes,
    "str": lambda codes: np.array([f"class-{c}" for c in codes], dtype=object),
    "float": lambda codes: codes.astype(float) * 2.0 - 1.0,  # integral: sklearn calls others continuous
    "bool": lambda codes: codes.astype(bool),
}


@st.composite
def problems(draw):
    n = draw(st.integers(2, 60))
    p = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(sorted(LABEL_KINDS)))
    n_classes = 2 if kind == "bool" else draw(st.integers(2, 6))
    codes = rng.integers(0, n_classes, size=n)
    codes[:2] = [0, 1]
    X = rng.integers(-3, 3, size=(n, p)).astype(float) * draw(st.sampled_from([1.0, 1e-30, 1e30]))
    if draw(st.booleans()):
        X[rng.random((n, p)) < 0.2] = np.nan
    weights = None
    if draw(st.booleans()):
        weights = rng.uniform(0, 2, size=n) * draw(st.sampled_from([1.0, 1e-300, 1e300]))
        weights[:2] = weights[:2] + (1e-300 if weights.max() < 1 else 1.0)
    return X, LABEL_KINDS[kind](codes), weights, seed


def assert_sane(model, X):
    proba = model.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-9)
    assert set(model.predict(X)) <= set(model.classes_)
    assert proba.shape == (X.shape[0], model.classes_.shape[0])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.sampled_from(["auc", "gini", "entropy"]))
def test_fuzzed_problems_never_crash(problem, criterion):
    X, y, weights, seed = problem
    tree = AUCTreeClassifier(criterion=criterion, random_state=seed).fit(X, y, sample_weight=weights)
    assert_sane(tree, X)
    forest = AUCForestClassifier(4, criterion=criterion, random_state=seed, n_jobs=2,
                                 min_samples_leaf=1 + seed % 3).fit(X, y, sample_weight=weights)
    assert_sane(forest, X)


def test_hundreds_of_classes_with_two_cases_each():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(300), 2)
    X = y[:, None] + rng.normal(scale=0.1, size=(600, 3))
    forest = AUCForestClassifier(10, random_state=0).fit(X, y)
    assert_sane(forest, X)
    assert np.mean(forest.predict(X) == y) > 0.8


def test_duplicate_rows_single_feature_and_more_jobs_than_trees():
    X = np.array([[1.0], [1.0], [2.0], [2.0], [3.0]] * 4)
    y = np.array([0, 1, 1, 1, 0] * 4)  # identical rows with different labels
    forest = AUCForestClassifier(3, n_jobs=8, random_state=0).fit(X, y)
    assert_sane(forest, X)
    assert len(forest.estimators_) == 3


def test_constant_features_only_give_a_single_leaf():
    X = np.ones((20, 3))
    y = np.arange(20) % 2
    tree = AUCTreeClassifier().fit(X, y)
    assert tree.tree_.node_count == 1
    np.testing.assert_allclose(tree.predict_proba(X), 0.5)


def test_concurrent_predictions_match_serial_ones():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 5))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 1)
    forest = AUCForestClassifier(20, random_state=0, n_jobs=2).fit(X, y)
    chunks = [X[i::8] for i in range(8)]
    serial = [forest.predict_proba(chunk) for chunk in chunks]
    with ThreadPoolExecutor(max_workers=8) as pool:
        concurrent = list(pool.map(forest.predict_proba, chunks * 3))
    for i, result in enumerate(concurrent):
        np.testing.assert_array_equal(result, serial[i % 8])


def test_a_fit_that_cannot_allocate_raises_memory_error(tmp_path):
    script = textwrap.dedent("""
        import resource, numpy as np
        from aucforest import AUCForestClassifier
        X = np.random.default_rng(0).standard_normal((1_000_000, 20), dtype=np.float32)
        y = (X[:, 0] > 0).astype(int)
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + 60 * 2**20, resource.RLIM_INFINITY))
        try:
            AUCForestClassifier(2, n_jobs=1).fit(X, y)
        except MemoryError as error:
            print("MemoryError:", error)
    """)
    # import the aucforest under test (installed, or built in place), from outside the source
    # tree, whose aucforest/ folder holds no compiled modules after a plain install
    env = package_env()
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "MemoryError" in result.stdout
