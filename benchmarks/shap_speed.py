"""Time of aucforest.inspection.shap_values against shap's TreeExplainer on the same trees.

One forest at the defaults (200 trees, AUC splitting) on imbalanced data
(make_classification, n = 5,000, p = 20, three classes of 80%, 15% and 5%,
10% of the cells missing), and the same 1,000 rows explained by both: the
native kernel (one and two threads) and ``shap.TreeExplainer(to_shap(forest))
.shap_values`` (shap's compiled path-dependent TreeSHAP, one thread). The
systems alternate within each round; the median wall-clock and CPU times of
the rounds are reported, with the largest difference between the two
systems' values.

From the repository root:

    python -m benchmarks.shap_speed [--n-samples N] [--n-rows R] [--rounds 3]

The same comparison, smaller (100 trees on 2,000 rows, 200 rows explained), as
pytest-benchmark cases, compared within one group:

    pytest benchmarks/shap_speed.py --benchmark-group-by=func

The data is ``harness.data.imbalanced_three_class``.
"""
import argparse

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from aucforest import AUCForestClassifier
from aucforest.inspection import shap_values, to_shap

from .harness import timing
from .harness.data import imbalanced_three_class as imbalanced_data
from .harness.optional import require

shap = require("shap", "benchmarks.shap_speed")


def timed(function, *args, **kwargs):
    """Result and (wall-clock seconds, CPU seconds of this process, all threads)."""
    result, wall, cpu = timing.timed(function, *args, **kwargs)
    return result, (wall, cpu)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.shap_speed",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=5_000)
    parser.add_argument("--n-features", type=int, default=20)
    parser.add_argument("--n-estimators", type=int, default=200)
    parser.add_argument("--n-rows", type=int, default=1_000, help="rows explained")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    X, y = imbalanced_data(args.n_samples, args.n_features)
    forest = AUCForestClassifier(args.n_estimators, random_state=0, n_jobs=2).fit(X, y)
    rows = X[:args.n_rows]
    leaves = np.mean([tree.tree_.n_leaves for tree in forest.estimators_])
    depth = np.mean([tree.tree_.max_depth for tree in forest.estimators_])

    times = {"aucforest, 1 thread": [], "aucforest, 2 threads": [], "shap TreeExplainer": []}
    with threadpool_limits(1):
        for _ in range(args.rounds):
            (ours, base), seconds = timed(shap_values, forest, rows, n_jobs=1)
            times["aucforest, 1 thread"].append(seconds)
            # the explainer's construction (to_shap and shap's parsing) is part of its cost
            theirs, seconds = timed(lambda: shap.TreeExplainer(to_shap(forest)).shap_values(rows))
            times["shap TreeExplainer"].append(seconds)
            _, seconds = timed(shap_values, forest, rows, n_jobs=2)
            times["aucforest, 2 threads"].append(seconds)

    median = {name: np.median(values, axis=0) for name, values in times.items()}
    print(f"n={args.n_samples}, p={args.n_features}, K=3, {args.n_estimators} trees "
          f"(mean {leaves:.0f} leaves, depth {depth:.1f}, predict_min_samples_="
          f"{forest.predict_min_samples_}), {args.n_rows} rows explained, "
          f"median of {args.rounds} rounds; shap {shap.__version__}")
    print(f"{'':24s}  wall s   CPU s")
    for name, (wall, cpu) in median.items():
        print(f"{name:24s} {wall:7.2f} {cpu:7.2f}")
    reference = median["shap TreeExplainer"]
    for name in ("aucforest, 1 thread", "aucforest, 2 threads"):
        wall, cpu = reference / median[name]
        print(f"shap / {name}: wall {wall:.2f}x, CPU {cpu:.2f}x")
    print("(CPU time is the steadier figure on a shared machine; with two threads it "
          "adds up both)")
    print(f"largest |ours - shap's| value: {np.abs(ours - np.asarray(theirs)).max():.1e}")


@pytest.fixture(scope="module")
def small_case():
    """A forest of 100 trees on 2,000 rows and the 200 rows to explain."""
    X, y = imbalanced_data(2_000, 20)
    return AUCForestClassifier(100, random_state=0, n_jobs=2).fit(X, y), X[:200]


@pytest.mark.parametrize("system", ["aucforest-1-thread", "aucforest-2-threads", "shap"])
def test_shap_values(benchmark, small_case, system):
    forest, rows = small_case
    if system == "shap":
        explain = lambda: shap.TreeExplainer(to_shap(forest)).shap_values(rows)  # noqa: E731
    else:
        n_jobs = 1 if system == "aucforest-1-thread" else 2
        explain = lambda: shap_values(forest, rows, n_jobs=n_jobs)[0]  # noqa: E731
    values = benchmark.pedantic(explain, rounds=3, iterations=1)
    assert np.shape(values) == (200, 20, 3)


if __name__ == "__main__":
    main()
