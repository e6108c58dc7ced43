"""pytest-benchmark cases: fit and predict_proba, aucforest beside scikit-learn.

    pytest benchmarks/test_speed.py --benchmark-group-by=param:case

Each case is run for aucforest (criterion "auc" and "gini", exact splitter and
binned splitter with max_bins=255), scikit-learn's RandomForestClassifier and,
when installed, scikit-learn-intelex's, with identical settings; compare within
a group. The side-by-side tables are printed by ``python -m
benchmarks.compare_sklearn`` and ``python -m benchmarks.compare_peers``. Data
and systems come from ``benchmarks.harness``.
"""
import numpy as np
import pytest

from .harness.data import classification_data
from .harness.systems import SKLEARN_SCHEME, aucforest, sklearn_rf, sklearnex_rf

CASES = {"n20000_p20_K3": (20000, 20, 3), "n10000_p20_K10": (10000, 20, 10),
         "n10000_p20_K64": (10000, 20, 64), "n200000_p20_K2": (200000, 20, 2)}
N_TREES = 20


def data(case):
    n, p, k = CASES[case]
    return classification_data(n, p, k)  # 12 informative features at p = 20


def model(library):
    common = dict(n_estimators=N_TREES, max_features="sqrt", min_samples_leaf=1, n_jobs=1,
                  random_state=0)
    if library == "sklearn":
        return sklearn_rf(**common)
    if library == "sklearnex":
        pytest.importorskip("sklearnex.ensemble")
        return sklearnex_rf(**common)
    _, criterion, *binned = library.split("-")
    return aucforest(criterion=criterion, max_bins=255 if binned else None,
                     **SKLEARN_SCHEME, **common)


LIBRARIES = ["aucforest-auc", "aucforest-gini", "aucforest-auc-binned", "aucforest-gini-binned",
             "sklearn", "sklearnex"]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("case", list(CASES))
def test_fit(benchmark, case, library):
    X, y = data(case)
    benchmark.pedantic(model(library).fit, args=(X, y), rounds=3, iterations=1)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("case", ["n20000_p20_K3"])
def test_predict_proba_100k_rows(benchmark, case, library):
    X, y = data(case)
    fitted = model(library).fit(X, y)
    rows = np.random.default_rng(1).standard_normal((100_000, X.shape[1]), dtype=np.float32)
    proba = benchmark.pedantic(fitted.predict_proba, args=(rows,), rounds=3, iterations=1)
    assert proba.shape == (100_000, len(np.unique(y)))
