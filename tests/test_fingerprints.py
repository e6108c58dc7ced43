"""Tree fingerprints: a fixed matrix of small forests must keep growing exactly
the trees recorded in ``fingerprints.json``.

Each case fits a forest on small generated data (fixed seeds, n_jobs=1) and
hashes (sha256):

* every tree's structure, read from the public ``estimators_[i].tree_``:
  children_left, children_right, feature, threshold, missing_go_to_left,
  the categorical level sets (``categorical_split``, ``left_levels``) of the
  trees that have categorical splits, and the node values (``value``, the
  per-node class probabilities, rounded to 12 decimals);
* ``predict_proba`` on a fixed test matrix (rounded to 12 decimals) and
  ``predict`` on it.

Any change of a split, a leaf or a prediction changes the hash and fails the
test. When a change of the trees is intended, rewrite the file with

    AUCFOREST_UPDATE_FINGERPRINTS=1 pytest tests/test_fingerprints.py

and review the diff of ``fingerprints.json`` (it records, per case, the node
count of every tree besides the hashes, so the diff shows which trees moved).
"""
import datetime
import hashlib
import json
import os
import subprocess

import numpy as np
import pytest

from aucforest import AUCForestClassifier
from data_builders import classification

FINGERPRINTS = os.path.join(os.path.dirname(__file__), "fingerprints.json")
UPDATE = os.environ.get("AUCFOREST_UPDATE_FINGERPRINTS") == "1"

N_TRAIN, N_TEST, N_FEATURES = 300, 100, 6
WEIGHTS = {2: [0.85, 0.15], 3: [0.7, 0.2, 0.1]}
COSTS = {2: [[0.0, 1.0], [2.0, 0.0]], 3: [[0.0, 1.0, 2.0], [3.0, 0.0, 1.0], [9.0, 4.0, 0.0]]}

TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "missing_go_to_left")
CATEGORICAL_ARRAYS = ("categorical_split", "left_levels")


# ------------------------------------------------------------------ data

def _data(n_classes, seed=0):
    """(X_train, y_train, X_test): float64, imbalanced classes."""
    X, y = classification(N_TRAIN + N_TEST, N_FEATURES, seed, n_informative=4, n_redundant=1,
                          n_classes=n_classes, weights=WEIGHTS[n_classes])
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:]


def _with_nan(X, seed):
    X = X.copy()
    X[np.random.RandomState(seed).rand(*X.shape) < 0.1] = np.nan
    return X


def dense(n_classes):
    X, y, X_test = _data(n_classes)
    return X, y, X_test


def with_nan(n_classes):
    X, y, X_test = _data(n_classes)
    return _with_nan(X, 1), y, _with_nan(X_test, 2)


def with_categories(n_classes):
    """Two pandas category columns (5 and 8 levels cut from the first two
    features) beside four numeric ones."""
    pd = pytest.importorskip("pandas")
    X, y, X_test = _data(n_classes)

    def frame(X):
        columns = {f"x{j}": X[:, j] for j in range(2, N_FEATURES)}
        levels_a, levels_b = list("abcde"), [f"l{i}" for i in range(8)]
        a = np.clip(np.floor(X[:, 0] + 2.5), 0, 4).astype(int)
        b = np.clip(np.floor(2 * X[:, 1] + 4), 0, 7).astype(int)
        columns["ca"] = pd.Categorical([levels_a[i] for i in a], categories=levels_a)
        columns["cb"] = pd.Categorical([levels_b[i] for i in b], categories=levels_b)
        return pd.DataFrame(columns)

    return frame(X), y, frame(X_test)


def sparse_csc(n_classes):
    """About half of the entries zero, as a CSC matrix (test matrix CSC too)."""
    sp = pytest.importorskip("scipy.sparse")
    X, y, X_test = _data(n_classes)
    X, X_test = (np.where(np.abs(A) < 0.7, 0.0, A) for A in (X, X_test))
    return sp.csc_matrix(X), y, sp.csc_matrix(X_test)


# ------------------------------------------------------------------ cases

BASE = dict(n_estimators=6, random_state=3, n_jobs=1)

# name -> (data builder, forest parameters); each is run for K = 2 and K = 3
IN_MEMORY = {
    "dense": (dense, {}),
    "nan": (with_nan, {}),
    "categories": (with_categories, dict(categorical_features="from_dtype")),
    "sparse_csc": (sparse_csc, {}),
    "max_leaf_nodes": (with_nan, dict(max_leaf_nodes=7)),
    "balanced_bootstrap": (dense, dict(balanced_bootstrap=True)),
    "gini": (with_nan, dict(criterion="gini")),
    "cost_matrix": (dense, dict(decision="costs")),  # COSTS[K]
    "warm_start": (dense, dict(warm_start=True)),     # 5 trees, then 10
    "binned": (with_nan, dict(max_bins=16)),
}
DASK = {
    # a dask array fit (rows on the workers), trees grown whole on a worker
    "dask_rows": (with_nan, {}),
    # the same, nodes of more than 60 rows split level by level on the workers
    "dask_rows_levels": (with_nan, dict(max_bins=32)),
    # an in-memory fit whose trees are grown as tasks under joblib's dask backend: the
    # same forest as "nan" (same data and parameters), so the same fingerprint
    "dask_joblib": (with_nan, {}),
}
CASES = [f"{name}_k{k}" for name in list(IN_MEMORY) + list(DASK) for k in (2, 3)]


def _split_case(case):
    name, k = case.rsplit("_k", 1)
    return name, int(k)


def _params(name, n_classes, table):
    params = dict(BASE, **table[name][1])
    if params.get("decision") == "costs":
        params["decision"] = np.array(COSTS[n_classes])
    return params


def fit_in_memory(case):
    name, k = _split_case(case)
    X, y, X_test = IN_MEMORY[name][0](k)
    params = _params(name, k, IN_MEMORY)
    if name == "warm_start":
        forest = AUCForestClassifier(**dict(params, n_estimators=5)).fit(X, y)
        forest.set_params(n_estimators=10)
        forest.fit(X, y)
        assert len(forest.estimators_) == 10
    else:
        forest = AUCForestClassifier(**params).fit(X, y)
    return forest, X_test


def fit_dask(case, monkeypatch):
    """The case's forest fitted on the client in scope."""
    from dask_testing import chunked
    name, k = _split_case(case)
    X, y, X_test = DASK[name][0](k)
    params = _params(name, k, DASK)
    if name == "dask_joblib":
        from joblib import parallel_backend
        params["n_jobs"] = None
        with parallel_backend("dask"):
            forest = AUCForestClassifier(**params).fit(X, y)
        return forest, X_test
    if name == "dask_rows_levels":
        import aucforest._dask as dask_fit
        monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 60)
        monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 60)
        monkeypatch.setattr(dask_fit, "WHOLE_TREE_ROWS", 0)
    X = X.astype(np.float32)
    forest = AUCForestClassifier(**params).fit(*chunked([120, 100, 80], X, y, None))
    return forest, X_test.astype(np.float32)


# ------------------------------------------------------------------ hashing

def _update(digest, label, array):
    array = np.ascontiguousarray(array)
    digest.update(f"{label}:{array.dtype.str}:{array.shape};".encode())
    digest.update(array.tobytes())


def _rounded(values):
    return np.round(np.asarray(values, dtype=np.float64), 12) + 0.0  # -0.0 -> 0.0


def tree_digest(tree):
    digest = hashlib.sha256()
    for name in TREE_ARRAYS:
        array = np.asarray(getattr(tree, name))
        dtype = np.float64 if name == "threshold" else np.int64
        _update(digest, name, array.astype(dtype))
    arrays = tree.node_arrays()
    for name in CATEGORICAL_ARRAYS:  # only trees with categorical splits hold them
        if name in arrays:
            _update(digest, name, np.asarray(arrays[name]).astype(
                np.uint64 if name == "left_levels" else np.int64))
    _update(digest, "value", _rounded(tree.value))
    return digest.hexdigest()


def fingerprint(forest, X_test):
    trees = [tree_digest(est.tree_) for est in forest.estimators_]
    proba = _rounded(forest.predict_proba(X_test))
    labels = np.asarray(forest.predict(X_test))
    pred = hashlib.sha256()
    _update(pred, "proba", proba)
    _update(pred, "labels", labels.astype(np.int64))
    whole = hashlib.sha256()
    for digest in trees + [pred.hexdigest()]:
        whole.update(digest.encode())
    return {"sha256": whole.hexdigest(),
            "predictions_sha256": pred.hexdigest(),
            "tree_sha256": trees,
            "node_counts": [int(est.tree_.node_count) for est in forest.estimators_]}


# ------------------------------------------------------------------ comparison

def _recorded():
    with open(FINGERPRINTS) as f:
        return json.load(f)


def _git_state():
    """(HEAD commit, whether aucforest/ differs from it), read-only; (None, None)
    outside a git checkout."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--", "aucforest"], cwd=root,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return head, bool(status.strip())


def _record(case, found):
    """Rewrite the case's entry (AUCFOREST_UPDATE_FINGERPRINTS=1)."""
    data = _recorded() if os.path.exists(FINGERPRINTS) else {"forests": {}}
    data["forests"][case] = found
    data["forests"] = dict(sorted(data["forests"].items()))
    data["recorded_at"] = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    data["recorded_from_commit"], data["package_had_uncommitted_changes"] = _git_state()
    with open(FINGERPRINTS, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


def _check(case, found):
    if UPDATE:
        _record(case, found)
        return
    expected = _recorded()["forests"].get(case)
    assert expected is not None, (
        f"no fingerprint recorded for {case}: run with AUCFOREST_UPDATE_FINGERPRINTS=1")
    if found["sha256"] == expected["sha256"]:
        return
    moved = [i for i, (a, b) in enumerate(zip(found["tree_sha256"], expected["tree_sha256"]))
             if a != b]
    same_predictions = found["predictions_sha256"] == expected["predictions_sha256"]
    pytest.fail(
        f"{case}: the forest changed (sha256 {found['sha256'][:12]} != recorded "
        f"{expected['sha256'][:12]}): trees changed: {moved}; n_trees "
        f"{len(found['tree_sha256'])} vs {len(expected['tree_sha256'])}; node counts "
        f"{found['node_counts']} vs {expected['node_counts']}; predictions "
        f"{'same' if same_predictions else 'changed'}")


def test_every_case_is_recorded():
    if UPDATE:
        pytest.skip("rewriting fingerprints.json")
    assert sorted(_recorded()["forests"]) == sorted(CASES)


@pytest.mark.parametrize("case", [c for c in CASES if _split_case(c)[0] in IN_MEMORY])
def test_in_memory_forest_fingerprint(case):
    _check(case, fingerprint(*fit_in_memory(case)))


@pytest.mark.parametrize("case", [c for c in CASES if _split_case(c)[0] in DASK])
def test_dask_forest_fingerprint(case, dask_client, monkeypatch):
    """On the session's shared cluster (2 worker processes, one thread each)."""
    _check(case, fingerprint(*fit_dask(case, monkeypatch)))
