"""The default AUCForestClassifier against oneDAL (sklearnex) on the rows of issue 14,
and the table of issue 26 (predict, two threads, memory, many classes).

Fit wall time of the default forest over oneDAL's (max_features="sqrt", its
other defaults), median of 3 fits per system alternating in one run, one and
two threads. Needs scikit-learn-intelex (benchmarks/requirements-peers.txt).
From the repository root:

    python -m benchmarks.default_vs_onedal
    python -m benchmarks.default_vs_onedal --rows 5000x20x2x3 --rounds 1   # a smoke run
    python -m benchmarks.default_vs_onedal --issue26            # the table of issue 26
    python -m benchmarks.default_vs_onedal --issue26 --only predict,classes

``--issue26`` measures, each system's test AUC beside its time: predict_proba of
200,000 rows (both systems at their default n_jobs, then both at n_jobs=2);
fit with one and two threads at 300k x 20; the peak resident memory of a fit
above the data at 1e6 and 1e7 rows (a fresh process per system, /proc VmHWM;
scikit-learn at 1e6 only); and K = 64 and 256
fits against scikit-learn, with the share of aucforest's fit spent on the
out-of-bag node-size choice (sums per candidate size, AUC and G-mean).
"""
import argparse
import json
import subprocess
import sys
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from .compare_peers import FULL_ROWS
from .harness import timing
from .harness.data import speed_data
from .harness.systems import aucforest, sklearn_rf, sklearnex_rf

ROWS = FULL_ROWS[:4]  # the table of issue 14

# issue 26: (training rows, features, classes, trees) and the rows predicted
PREDICT_SHAPES = [((30_000, 16, 3, 30), 200_000), ((300_000, 20, 2, 6), 200_000)]
THREADS_SHAPE = (300_000, 20, 2, 8)
MEMORY_ROWS = (1_000_000, 10_000_000)  # x 20 float32 features, 10 trees, two classes
MEMORY_FEATURES, MEMORY_TREES = 20, 10
MEMORY_SKLEARN_MAX_ROWS = 1_000_000  # scikit-learn's 1e7-row fit alone takes most of an hour
MANY_CLASSES = [(20_000, 20, 64, 20), (20_000, 20, 256, 20)]
PARTS = ("predict", "threads", "memory", "classes")


def test_auc(model, X, y):
    """AUC of model on (X, y): binary, or one-vs-one (Hand & Till) for K > 2."""
    proba = model.predict_proba(X)
    if proba.shape[1] == 2:
        return roc_auc_score(y, proba[:, 1])
    return roc_auc_score(y, proba, multi_class="ovo", labels=model.classes_)


def issue14(rows, rounds):
    """Fit time of the default forest over oneDAL's, one and two threads."""
    for n, p, k, trees in rows:
        X, y, _, _ = speed_data(n, p, k)
        for jobs in (1, 2):
            systems = {
                "default": lambda: aucforest(trees, n_jobs=jobs, random_state=0),
                "oneDAL": lambda: sklearnex_rf(n_estimators=trees, n_jobs=jobs, random_state=0,
                                               max_features="sqrt"),
            }
            times = timing.alternate(
                list(systems), rounds,
                lambda name, _: timing.fit_seconds(systems[name], X, y)[0], reverse=False)
            ratio = timing.median(times["default"]) / timing.median(times["oneDAL"])
            print(f"{n:,} x {p}, K={k}, {trees} trees, {jobs} thread(s): "
                  f"default / oneDAL {ratio:.2f}", flush=True)


def predict(rounds):
    """predict_proba of 200k rows: aucforest over oneDAL at default n_jobs and at 2."""
    for (n, p, k, trees), n_rows in PREDICT_SHAPES:
        X, y, X_rows, y_rows = speed_data(n, p, k, n_test=n_rows)
        X_rows = np.ascontiguousarray(X_rows)
        for jobs in (None, 2):
            models = {"aucforest": aucforest(trees, n_jobs=jobs, random_state=0).fit(X, y),
                      "oneDAL": sklearnex_rf(n_estimators=trees, n_jobs=jobs, random_state=0,
                                             max_features="sqrt").fit(X, y)}
            aucs = {name: test_auc(m, X_rows, y_rows) for name, m in models.items()}
            cpu = {name: [] for name in models}

            def measure(name, _):
                _, wall, seconds = timing.timed(models[name].predict_proba, X_rows)
                cpu[name].append(seconds)
                return wall

            times = timing.alternate(list(models), rounds, measure)
            med = {name: timing.median(t) for name, t in times.items()}
            cpu_ratio = timing.median(cpu["aucforest"]) / timing.median(cpu["oneDAL"])
            print(f"predict_proba {n_rows:,} rows, {trees} trees, K={k} ({n:,} x {p} training), "
                  f"n_jobs={jobs}: aucforest / oneDAL {med['aucforest'] / med['oneDAL']:.2f} "
                  f"(CPU seconds, all threads: {cpu_ratio:.2f}) "
                  f"(aucforest {med['aucforest']:.3f} s AUC {aucs['aucforest']:.4f}; "
                  f"oneDAL {med['oneDAL']:.3f} s AUC {aucs['oneDAL']:.4f})", flush=True)


def threads(rounds):
    """Fit at 300k x 20, 8 trees: one and two threads of each system."""
    n, p, k, trees = THREADS_SHAPE
    X, y, X_test, y_test = speed_data(n, p, k)
    makers = {(name, jobs): make for jobs in (1, 2) for name, make in (
        ("aucforest", lambda jobs=jobs: aucforest(trees, n_jobs=jobs, random_state=0)),
        ("oneDAL", lambda jobs=jobs: sklearnex_rf(n_estimators=trees, n_jobs=jobs,
                                                  random_state=0, max_features="sqrt")))}
    aucs = {}

    def measure(key, _):
        seconds, model = timing.fit_seconds(makers[key], X, y)
        aucs[key] = test_auc(model, X_test, y_test)
        return seconds

    times = timing.alternate(list(makers), rounds, measure)
    med = {key: timing.median(t) for key, t in times.items()}
    for jobs in (1, 2):
        print(f"fit {n:,} x {p}, K={k}, {trees} trees, {jobs} thread(s): aucforest / oneDAL "
              f"{med['aucforest', jobs] / med['oneDAL', jobs]:.2f} (aucforest "
              f"{med['aucforest', jobs]:.2f} s AUC {aucs['aucforest', jobs]:.4f}; oneDAL "
              f"{med['oneDAL', jobs]:.2f} s AUC {aucs['oneDAL', jobs]:.4f})", flush=True)
    for name in ("aucforest", "oneDAL"):
        print(f"  {name} two-thread speed-up {med[name, 1] / med[name, 2]:.2f}x", flush=True)


MEMORY_PROBE = """
import json, sys, numpy as np

def peak_rss():  # VmHWM of this process (not carried over from the parent)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

n, p, trees, which = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if which == "oneDAL":
    from sklearnex.ensemble import RandomForestClassifier
    make = lambda: RandomForestClassifier(n_estimators=trees, n_jobs=1, random_state=0,
                                          max_features="sqrt")
elif which == "scikit-learn":
    from sklearn.ensemble import RandomForestClassifier
    make = lambda: RandomForestClassifier(trees, n_jobs=1, random_state=0)
else:
    from aucforest import AUCForestClassifier
    make = lambda: AUCForestClassifier(trees, n_jobs=1, random_state=0)
rng = np.random.default_rng(0)
X = np.empty((n, p), dtype=np.float32)
for j in range(p):  # by column: no float64 temporary of all of X
    X[:, j] = rng.standard_normal(n, dtype=np.float32)
y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.standard_normal(n, dtype=np.float32) > 0).astype(np.intp)
model = make()
before = peak_rss()
model.fit(X, y)
print(json.dumps({"X": X.nbytes, "growth": peak_rss() - before}))
"""


def memory(rows=MEMORY_ROWS):
    """Peak resident memory of a fit above the data, a fresh process per system."""
    p, trees = MEMORY_FEATURES, MEMORY_TREES
    for n in rows:
        systems = ("aucforest", "oneDAL") + (
            ("scikit-learn",) if n <= MEMORY_SKLEARN_MAX_ROWS else ())
        for name in systems:
            out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(n), str(p),
                                  str(trees), name],
                                 check=True, capture_output=True, text=True).stdout
            result = json.loads(out)
            print(f"peak fit memory above the data, {n:,} x {p} float32 "
                  f"({result['X'] / 2**20:.0f} MiB), {trees} trees, {name}: "
                  f"{result['growth'] / 2**20:.0f} MiB", flush=True)


class ChoiceClock:
    """Seconds spent in the out-of-bag node-size choice of aucforest fits
    (the out-of-bag sums' ``add`` and the forest's _set_oob_estimates), by
    wrapping them."""

    def __init__(self):
        from aucforest import _forest
        from aucforest import _oob_estimates as _oob
        self.seconds = 0.0
        self._wrapped = [(_oob.OutOfBagSums, "add"), (_oob.OutOfBagLeaves, "add"),
                         (_forest.AUCForestClassifier, "_set_oob_estimates")]
        self._originals = [getattr(owner, name) for owner, name in self._wrapped]

    def __enter__(self):
        for (owner, name), original in zip(self._wrapped, self._originals):
            setattr(owner, name, self._timed(original))
        return self

    def __exit__(self, *exc):
        for (owner, name), original in zip(self._wrapped, self._originals):
            setattr(owner, name, original)

    def _timed(self, function):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return wrapper


def classes(rounds):
    """K = 64 and 256 fits, one thread: aucforest over scikit-learn, and the
    node-size choice's share of aucforest's fit."""
    for n, p, k, trees in MANY_CLASSES:
        X, y, X_test, y_test = speed_data(n, p, k)
        makers = {"aucforest": lambda: aucforest(trees, n_jobs=1, random_state=0),
                  "scikit-learn": lambda: sklearn_rf(trees, n_jobs=1, random_state=0)}
        aucs, shares = {}, []

        def measure(name, _):
            with ChoiceClock() as clock:
                seconds, model = timing.fit_seconds(makers[name], X, y)
            if name == "aucforest":
                shares.append(clock.seconds / seconds)
            aucs[name] = test_auc(model, X_test, y_test)
            return seconds

        times = timing.alternate(list(makers), rounds, measure)
        med = {name: timing.median(t) for name, t in times.items()}
        print(f"fit {n:,} x {p}, K={k}, {trees} trees: aucforest / scikit-learn "
              f"{med['aucforest'] / med['scikit-learn']:.2f} (aucforest {med['aucforest']:.2f} s"
              f" AUC {aucs['aucforest']:.4f}, node-size choice {timing.median(shares):.0%} of "
              f"it; scikit-learn {med['scikit-learn']:.2f} s AUC {aucs['scikit-learn']:.4f})",
              flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.default_vs_onedal",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rows", help="comma-separated rows as n x p x K x trees, e.g. "
                        "20000x20x3x50 (default: the four rows of issue 14)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--issue26", action="store_true",
                        help="the table of issue 26 instead of the rows of issue 14")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"with --issue26, comma-separated parts of {PARTS}")
    parser.add_argument("--memory-rows", default=",".join(map(str, MEMORY_ROWS)),
                        help="with --issue26, comma-separated training rows of the memory part")
    args = parser.parse_args(argv)
    sklearnex_rf()  # fails first, with the install line, when oneDAL is missing
    if not args.issue26:
        rows = ([tuple(map(int, row.split("x"))) for row in args.rows.split(",")] if args.rows
                else ROWS)
        issue14(rows, args.rounds)
        return
    parts = args.only.split(",")
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"--only: unknown parts {sorted(unknown)}; choose from {PARTS}")
    for part in PARTS:
        if part in parts:
            {"predict": lambda: predict(args.rounds), "threads": lambda: threads(args.rounds),
             "memory": lambda: memory([int(n) for n in args.memory_rows.split(",")]),
             "classes": lambda: classes(args.rounds)}[part]()


if __name__ == "__main__":
    main()
