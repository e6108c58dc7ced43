"""Side-by-side timing of aucforest against scikit-learn's RandomForestClassifier.

Every configuration is fitted by both libraries in the same run with the same
settings (n_estimators, max_features="sqrt", min_samples_leaf=1, bootstrap,
float32 data from make_classification); each timing is the best of
`--repeats` runs and the table reports ratios (aucforest / scikit-learn), so
that the shared, noisy machine affects both sides alike.

From the repository root:

    python -m benchmarks.compare_sklearn            # full table (several minutes)
    python -m benchmarks.compare_sklearn --quick    # smaller, for a smoke run
    python -m benchmarks.compare_sklearn --shapes 10000x20x64,10000x20x10 --sweep 10,64 \
        --rounds 5 --fit-only                       # some shapes, alternating, median of 5

``--rounds R`` fits the three forests in turn R times (the order reversed every
other round, `harness.timing.alternate`) and takes each one's median instead of
the best of ``--repeats``; ``--default`` adds the default AUCForestClassifier (its
own draws, binned from 10,000 rows, the out-of-bag node-size choice) against the
same scikit-learn forest.

Data (``harness.data.classification_data``), scikit-learn's scheme in
aucforest's parameters (``harness.systems.SKLEARN_SCHEME``) and the timing
(``harness.timing.best_of``) come from the harness.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

import numpy as np
import sklearn

from .harness.data import classification_data as make_data
from .harness.report import command_line
from .harness.systems import SKLEARN_SCHEME, aucforest, sklearn_rf
from .harness.timing import alternate, median
from .harness.timing import best_of as best_time


def forests(n_estimators, n_jobs, default=False):
    common = dict(n_estimators=n_estimators, max_features="sqrt", min_samples_leaf=1,
                  bootstrap=True, n_jobs=n_jobs, random_state=0)
    same = dict(common, max_bins=None, **SKLEARN_SCHEME)  # the exact splitter at any size
    models = {
        "auc": aucforest(criterion="auc", **same),
        "gini": aucforest(criterion="gini", **same),
        "sklearn": sklearn_rf(criterion="gini", **common),
    }
    if default:
        models["default"] = aucforest(n_estimators, n_jobs=n_jobs, random_state=0)
    return models


def fit_ratios(n, p, k, n_estimators, repeats, n_jobs=1, rounds=0, default=False):
    """Each forest's fit time over scikit-learn's: best of ``repeats``, or with
    ``rounds`` the median of that many alternating rounds."""
    X, y = make_data(n, p, k)
    models = forests(n_estimators, n_jobs, default)
    if rounds:
        def measure(name, _):
            return best_time(lambda: models[name].fit(X, y), 1)
        times = {name: median(seconds)
                 for name, seconds in alternate(list(models), rounds, measure).items()}
    else:
        times = {name: best_time(lambda m=model: m.fit(X, y), repeats)
                 for name, model in models.items()}
    return {name: times[name] / times["sklearn"] for name in models if name != "sklearn"}, times


SHAPES = [(20000, 20, 3), (10000, 20, 10), (10000, 20, 64), (10000, 20, 256)]
SWEEP = (2, 4, 8, 16, 32, 64, 128, 256)


def predict_ratio(n_rows, n_estimators, repeats):
    X, y = make_data(20000, 20, 3)
    X_test, _ = make_data(n_rows, 20, 3, seed=1)
    models = forests(n_estimators, 1)
    for model in models.values():
        model.fit(X, y)
    times = {name: best_time(lambda m=model: m.predict_proba(X_test), repeats)
             for name, model in models.items()}
    return {name: times[name] / times["sklearn"] for name in ("auc", "gini")}


def thread_speedup(n, p, k, n_estimators, repeats):
    X, y = make_data(n, p, k)
    one = aucforest(n_estimators, criterion="auc", n_jobs=1, random_state=0)
    two = aucforest(n_estimators, criterion="auc", n_jobs=2, random_state=0)
    return best_time(lambda: one.fit(X, y), repeats) / best_time(lambda: two.fit(X, y), repeats)


MEMORY_PROBE = """
import json, sys, numpy as np

def peak_rss():  # VmHWM: ru_maxrss would carry over the parent's peak through fork/exec
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

from sklearn.datasets import make_classification
n, p, trees, which = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = np.random.default_rng(0)
X = rng.standard_normal((n, p), dtype=np.float32)  # no float64 temporary inflating the baseline
y = (X[:, 0] + X[:, 1] + rng.standard_normal(n, dtype=np.float32) > 0).astype(int) + (X[:, 2] > 1)
before = peak_rss()
if which == "sklearn":
    from sklearn.ensemble import RandomForestClassifier as F
    model = F(trees, max_features="sqrt", min_samples_leaf=5, n_jobs=1, random_state=0).fit(X, y)
    nodes = sum(e.tree_.node_count for e in model.estimators_)
    tree_bytes = sum(e.tree_.__getstate__()["nodes"].nbytes + e.tree_.value.nbytes for e in model.estimators_)
else:
    from aucforest import AUCForestClassifier as F
    model = F(trees, max_features="sqrt", min_samples_leaf=5, n_jobs=1, random_state=0).fit(X, y)
    nodes = sum(e.tree_.node_count for e in model.estimators_)
    tree_bytes = sum(e.tree_.nbytes for e in model.estimators_)
peak = peak_rss()
print(json.dumps(dict(x_bytes=X.nbytes, extra_peak=peak - before, nodes=nodes, tree_bytes=tree_bytes)))
"""


def memory(n, p, trees):
    result = {}
    for which in ("aucforest", "sklearn"):
        out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(n), str(p), str(trees), which],
                             capture_output=True, text=True, check=True)
        result[which] = json.loads(out.stdout)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare_sklearn",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trees", type=int, default=30)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--shapes", default=",".join("x".join(map(str, s)) for s in SHAPES),
                        help="comma-separated n x p x K of the fit table")
    parser.add_argument("--sweep", default=",".join(map(str, SWEEP)),
                        help="comma-separated K of the K sweep (n=10000, p=20); '' for none")
    parser.add_argument("--rounds", type=int, default=0,
                        help="median of this many alternating rounds instead of best of repeats")
    parser.add_argument("--default", action="store_true",
                        help="also time the default AUCForestClassifier")
    parser.add_argument("--fit-only", action="store_true",
                        help="only the fit table and the K sweep (no predict, threads, memory)")
    args = parser.parse_args(argv)
    trees, repeats = (10, 1) if args.quick else (args.trees, args.repeats)
    scale = 10 if args.quick else 1
    shapes = [tuple(int(part) for part in shape.split("x")) for shape in args.shapes.split(",")
              if shape]
    sweep = [int(k) for k in args.sweep.split(",") if k]
    if any(len(shape) != 3 for shape in shapes):
        parser.error(f"--shapes: each shape is n x p x K; got {args.shapes!r}")
    timing = (f"median of {args.rounds} alternating rounds" if args.rounds
              else f"best of {repeats}")
    extra = " | fit default / sklearn" if args.default else ""

    print(f"# aucforest vs scikit-learn {sklearn.__version__} | numpy {np.__version__} | "
          f"python {platform.python_version()} | {platform.machine()} | {os.cpu_count()} cores")
    print(f"# {trees} trees, max_features='sqrt', min_samples_leaf=1, bootstrap, float32, "
          f"{timing}; ratio = aucforest time / scikit-learn time (< 1: aucforest faster)\n")
    print(f"| n | p | K | fit auc / sklearn | fit gini / sklearn{extra} | sklearn fit (s) |")
    print("|---|---|---|---|---|" + ("---|" if args.default else "") + "---|")
    for n, p, k in shapes:
        ratios, times = fit_ratios(n // scale, p, k, trees, repeats, rounds=args.rounds,
                                   default=args.default)
        cell = f" | {ratios['default']:.2f}" if args.default else ""
        print(f"| {n // scale} | {p} | {k} | {ratios['auc']:.2f} | {ratios['gini']:.2f}{cell} | "
              f"{times['sklearn']:.2f} |", flush=True)

    if sweep:
        print("\nK sweep (n=10000, p=20): fit time of the AUC forest per class count, relative to"
              f" K={sweep[0]}")
        print(f"| K | auc / sklearn{extra} | auc time / auc time at K={sweep[0]} |")
        print("|---|---|" + ("---|" if args.default else "") + "---|")
        base = None
        for k in sweep:
            ratios, times = fit_ratios(10000 // scale, 20, k, trees, 1, rounds=args.rounds,
                                       default=args.default)
            base = base or times["auc"]
            cell = f" | {ratios['default']:.2f}" if args.default else ""
            print(f"| {k} | {ratios['auc']:.2f}{cell} | {times['auc'] / base:.2f} |", flush=True)
    if args.fit_only:
        print(f"\nCommand: {command_line('compare_sklearn', argv)}")
        return

    ratios = predict_ratio(100000 // scale, trees, repeats)
    print(f"\npredict_proba on {100000 // scale} rows: auc forest / sklearn = {ratios['auc']:.2f}, "
          f"gini forest / sklearn = {ratios['gini']:.2f}")
    speedup = thread_speedup(20000 // scale, 20, 3, trees, repeats)
    print(f"n_jobs=2 speed-up over n_jobs=1 (auc, n=20000): {speedup:.2f}x")

    if not args.skip_memory:
        n = 1_000_000 // scale
        mem = memory(n, 20, 3)
        ours = mem["aucforest"]
        print(f"\nPeak memory of a 3-tree fit at n={n}, p=20 (min_samples_leaf=5), above the data"
              " and imports:")
        for name, m in mem.items():
            print(f"  {name}: {m['extra_peak'] / m['x_bytes']:.2f} x size of X "
                  f"({m['extra_peak'] / 2**20:.0f} MiB; trees {m['tree_bytes'] / 2**20:.0f} MiB), "
                  f"{m['tree_bytes'] / m['nodes']:.0f} bytes per node")
        print(f"  peak excluding trees: "
              f"{(ours['extra_peak'] - ours['tree_bytes']) / ours['x_bytes']:.2f}"
              f" x size of X (aucforest)")
    print(f"\nCommand: {command_line('compare_sklearn', argv)}")


if __name__ == "__main__":
    main()
