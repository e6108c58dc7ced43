"""Fit time and test AUC of aucforest against the fastest CPU random forests, side by side.

The table of issue 14: every row is fitted by every system in the same run,
systems alternating within each round (so that load on a shared machine hits
them alike), the median of `--rounds` rounds reported, with the test AUC of
each system beside its time. All systems grow fully grown trees with
max_features="sqrt" and bootstrap on float32 make_classification data.

Systems: aucforest's default forest (nsplit=10 drawn thresholds, subsampling
without replacement, node size chosen out of bag; the binned splitter from
10,000 rows on, so on every row here);
aucforest at the issue's settings (bootstrap, leaf predictions) with the
exact splitter taking every threshold and with the binned one
(max_bins=255), each with criterion "auc" and "gini"; scikit-learn-intelex
(oneDAL) and scikit-learn; XGBoost's random-forest mode, YDF and skranger
when they are installed (benchmarks/requirements-peers.txt).

    python benchmarks/compare_peers.py --quick          # smaller rows, a few minutes
    python benchmarks/compare_peers.py                  # the issue's rows and n = 10^7
    python benchmarks/compare_peers.py --threads 1 2 --output benchmarks/results/speed_peers.md

Times depend on the machine and its load: compare within a row (ratios), not
across runs.
"""
import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import sklearn
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

import aucforest
from aucforest import AUCForestClassifier
from compare_sklearn import SKLEARN_SCHEME

# (n_train, p, K, trees); the table plus n = 10^7
FULL_ROWS = [(20_000, 20, 3, 50), (10_000, 20, 10, 50), (200_000, 20, 2, 20),
             (50_000, 200, 2, 20), (1_000_000, 20, 2, 5), (10_000_000, 20, 2, 3)]
QUICK_ROWS = [(20_000, 20, 3, 10), (10_000, 20, 10, 10), (200_000, 20, 2, 3),
              (50_000, 200, 2, 3)]
N_TEST = 50_000
# systems too slow to be worth a run at these sizes (a note says so in the table)
SKIP_FROM = {"aucforest exact auc": 5_000_000, "aucforest exact gini": 5_000_000,
             "scikit-learn": 2_000_000, "skranger": 5_000_000}


def make_data(n, p, k, seed=0):
    X, y = make_classification(n_samples=n + N_TEST, n_features=p, n_informative=min(p, 12),
                               n_redundant=0, n_classes=k, n_clusters_per_class=1,
                               random_state=seed)
    X = X.astype(np.float32)
    return X[:n], y[:n], X[n:], y[n:]


def systems(n_estimators, n_jobs):
    """name -> factory of an unfitted classifier, for the systems installed here."""
    common = dict(n_estimators=n_estimators, max_features="sqrt", bootstrap=True,
                  n_jobs=n_jobs, random_state=0)
    classic = dict(common, **SKLEARN_SCHEME)  # the settings
    found = {
        "aucforest default": lambda: AUCForestClassifier(n_estimators, n_jobs=n_jobs,
                                                         random_state=0),
        "aucforest binned auc": lambda: AUCForestClassifier(criterion="auc", max_bins=255,
                                                            **classic),
        "aucforest binned gini": lambda: AUCForestClassifier(criterion="gini", max_bins=255,
                                                             **classic),
        "aucforest exact auc": lambda: AUCForestClassifier(criterion="auc", max_bins=None,
                                                           **classic),
        "aucforest exact gini": lambda: AUCForestClassifier(criterion="gini", max_bins=None,
                                                            **classic),
    }
    if _installed("sklearnex"):
        from sklearnex.ensemble import RandomForestClassifier as OneDALForest
        found["sklearnex"] = lambda: OneDALForest(**common)
    found["scikit-learn"] = lambda: RandomForestClassifier(**common)
    if _installed("xgboost"):
        from xgboost import XGBRFClassifier
        found["xgboost rf"] = lambda: XGBRFClassifier(
            n_estimators=n_estimators, subsample=0.632, colsample_bynode=0.3, max_depth=0,
            grow_policy="lossguide", max_leaves=0, tree_method="hist", n_jobs=n_jobs,
            random_state=0)
    if _installed("skranger"):
        from skranger.ensemble import RangerForestClassifier
        found["skranger"] = lambda: RangerForestClassifier(
            n_estimators=n_estimators, mtry=0, n_jobs=n_jobs, seed=0)
    return found


def _installed(module):
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def test_auc(model, X_test, y_test):
    proba = model.predict_proba(X_test)
    if proba.shape[1] == 2:
        return roc_auc_score(y_test, proba[:, 1])
    return roc_auc_score(y_test, proba, multi_class="ovo")


def run_row(n, p, k, n_estimators, n_jobs, rounds, log, only=None):
    """Median fit time, predict_proba time and test AUC of every system on one row
    (of the systems named in ``only``, when given)."""
    X, y, X_test, y_test = make_data(n, p, k)
    factories = {name: make for name, make in systems(n_estimators, n_jobs).items()
                 if n < SKIP_FROM.get(name, np.inf) and (only is None or name in only)}
    fit_times = {name: [] for name in factories}
    predict_times = {name: [] for name in factories}
    aucs = {}
    for round_ in range(rounds):
        order = list(factories) if round_ % 2 == 0 else list(factories)[::-1]
        for name in order:
            model = factories[name]()
            start = time.perf_counter()
            model.fit(X, y)
            fit_times[name].append(time.perf_counter() - start)
            start = time.perf_counter()
            aucs[name] = test_auc(model, X_test, y_test)
            predict_times[name].append(time.perf_counter() - start)
            log(f"  n={n} p={p} K={k} jobs={n_jobs} round {round_ + 1} {name}: "
                f"fit {fit_times[name][-1]:.2f} s, AUC {aucs[name]:.4f}")
            del model
    return {name: (statistics.median(fit_times[name]), statistics.median(predict_times[name]),
                   aucs[name]) for name in factories}


MEMORY_PROBE = """
import json, resource, sys, numpy as np
from aucforest import AUCForestClassifier
n, p, trees = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
X = np.empty((n, p), dtype=np.float32, order="F")  # filled by column: no peak above X here
for j in range(p):
    X[:, j] = rng.standard_normal(n, dtype=np.float32)
y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.standard_normal(n, dtype=np.float32) > 0).astype(np.intp)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
forest = AUCForestClassifier(trees, max_bins=255, n_jobs=1, random_state=0).fit(X, y)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"X": X.nbytes, "codes": n * p, "trees": sum(t.tree_.nbytes for t in forest.estimators_),
                  "growth": peak - before}))
"""


def memory_at(n, p, trees):
    """Peak memory growth of a binned fit, against X, its codes and the trees (bytes)."""
    out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(n), str(p), str(trees)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def header(threads, rounds):
    versions = [f"aucforest {aucforest.__version__}", f"scikit-learn {sklearn.__version__}",
                f"numpy {np.__version__}", f"python {platform.python_version()}"]
    for module, distribution in (("sklearnex", "scikit-learn-intelex"), ("xgboost", "xgboost"),
                                 ("ydf", "ydf"), ("skranger", "skranger")):
        if _installed(module):
            versions.append(f"{distribution} {importlib.metadata.version(distribution)}")
    return [f"# aucforest vs peers | {' | '.join(versions)} | {platform.machine()} | "
            f"{os.cpu_count()} cores",
            f"# fully grown trees, max_features='sqrt', bootstrap, float32 make_classification "
            f"data, {N_TEST} test rows; median of {rounds} alternating rounds; threads: "
            f"{', '.join(map(str, threads))}; cells: fit seconds (test AUC)"]


def table(results, names):
    lines = ["| data (n, p, K), trees | jobs | " + " | ".join(names) + " |",
             "|---|---|" + "---|" * len(names)]
    for (n, p, k, trees, jobs), row in results:
        cells = []
        for name in names:
            if name in row:
                fit, _, auc = row[name]
                cells.append(f"{fit:.2f} s ({auc:.4f})")
            else:
                cells.append("skipped")
        lines.append(f"| {n:,} x {p}, K={k}, {trees} | {jobs} | " + " | ".join(cells) + " |")
    return lines


def ratios(results):
    """Fit time of aucforest's default and binned forests over sklearnex's, and test-AUC
    differences to the exact engine with every threshold (the issue's settings)."""
    lines = ["", "| data | jobs | default / sklearnex | binned auc / sklearnex | "
             "binned gini / sklearnex | AUC default - exact (auc) | AUC binned - exact (auc) | "
             "AUC binned - exact (gini) | predict default / sklearnex |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (n, p, k, trees, jobs), row in results:
        def ratio(a, b, i=0):
            return f"{row[a][i] / row[b][i]:.2f}" if a in row and b in row else "-"

        def diff(a, b):
            return f"{row[a][2] - row[b][2]:+.4f}" if a in row and b in row else "-"
        lines.append(f"| {n:,} x {p}, K={k}, {trees} | {jobs} | "
                     f"{ratio('aucforest default', 'sklearnex')} | "
                     f"{ratio('aucforest binned auc', 'sklearnex')} | "
                     f"{ratio('aucforest binned gini', 'sklearnex')} | "
                     f"{diff('aucforest default', 'aucforest exact auc')} | "
                     f"{diff('aucforest binned auc', 'aucforest exact auc')} | "
                     f"{diff('aucforest binned gini', 'aucforest exact gini')} | "
                     f"{ratio('aucforest default', 'sklearnex', 1)} |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller rows, fewer trees")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rows", type=int, nargs="+", default=None,
                        help="indices of the rows to run (default: all)")
    parser.add_argument("--memory", action="store_true",
                        help="also measure peak memory of a binned fit at n = 10^7")
    parser.add_argument("--output", default=None, help="also write the tables to this file")
    parser.add_argument("--systems", nargs="+", default=None, metavar="NAME",
                        help='run only these systems (default: all installed), e.g. '
                             '"aucforest binned auc" sklearnex')
    args = parser.parse_args(argv)
    rows = QUICK_ROWS if args.quick else FULL_ROWS
    if args.rows is not None:
        rows = [rows[i] for i in args.rows]

    def log(message):
        print(message, file=sys.stderr, flush=True)

    results = []
    names = []
    for n, p, k, trees in rows:
        for jobs in args.threads:
            row = run_row(n, p, k, trees, jobs, args.rounds, log, args.systems)
            results.append(((n, p, k, trees, jobs), row))
            names += [name for name in row if name not in names]
    lines = header(args.threads, args.rounds) + [""] + table(results, names) + ratios(results)
    if args.memory:
        memory = memory_at(10_000_000, 20, 3)
        lines += ["", "Peak memory growth of a 3-tree binned fit at n = 10^7, p = 20 (MiB): "
                  + ", ".join(f"{key} {value / 2**20:.0f}" for key, value in memory.items())]
    lines += ["", "Command: python benchmarks/compare_peers.py " + " ".join(
        f'"{arg}"' if " " in arg else arg for arg in (sys.argv[1:] if argv is None else argv))]
    print("\n".join(lines))
    if args.output:
        with open(args.output, "w") as handle:
            handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
