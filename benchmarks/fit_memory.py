"""Peak memory of a fit at the defaults: aucforest against oneDAL (sklearnex),
scikit-learn and ydf at the same number of trees or each at its own defaults,
each fit in a fresh process.

Each process makes float32 imbalanced ``make_classification`` data (K = 2:
90/10%, K = 3: 80/15/5%), resets its peak resident size (``/proc/self/clear_refs``),
reads its resident size, fits, and reports the peak above that (``VmHWM`` -
``VmRSS`` before the fit): the fit's memory above the data. aucforest fits also
report the grown nodes, the nodes and bytes of the kept model (the trees'
``nbytes``) and the node size chosen. A peer runs in the interpreter given by
``--peer-python`` (a separate venv with scikit-learn-intelex and ydf, so the
project's stays as it is). ``--defaults`` leaves every system's number of trees
and other parameters at its defaults (aucforest 300 trees, oneDAL and
scikit-learn 100, ydf's RandomForestLearner 300) but the thread count and the
seed; ``--predict-rows`` also times ``predict_proba`` of that many held-out rows
(median of 3 calls, the fit's thread count) and reports their one-vs-rest macro
AUC and the G-mean of ``predict`` (geometric mean of the per-class recalls);
``--rounds`` repeats every system, alternating, and reports the medians and the
ratios to aucforest. From the repository root:

    python -m benchmarks.fit_memory --shapes 300000x20x3 --trees 200 --jobs 1
    python -m benchmarks.fit_memory --checkout /path/to/old/checkout --systems aucforest
    python -m benchmarks.fit_memory --peer-python /work/venv-peers/bin/python \\
        --systems aucforest,oneDAL --shapes 200000x20x2,300000x20x3,1000000x20x2 --jobs 1,2
    python -m benchmarks.fit_memory --peer-python /work/venv-peers/bin/python --defaults \
        --systems aucforest,oneDAL,scikit-learn,ydf --shapes 300000x20x3 \
        --predict-rows 100000 --rounds 2 --rounds-ydf 1
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

SYSTEMS = ("aucforest", "oneDAL", "scikit-learn", "ydf")
CLASS_SHARES = {2: [0.9, 0.1], 3: [0.8, 0.15, 0.05]}

PROBE = """
import json, sys, time
import numpy as np
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score

def status(key):  # kB fields of /proc/self/status, in bytes
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024

n, p, k, trees, jobs, which = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                               int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
shares, n_test = json.loads(sys.argv[7]), int(sys.argv[8])
count = {} if trees == 0 else {"n_estimators": trees}  # 0: the system's default
if which == "oneDAL":
    from sklearnex.ensemble import RandomForestClassifier
    extra = {} if trees == 0 else {"max_features": "sqrt"}
    model = RandomForestClassifier(**count, **extra, n_jobs=jobs, random_state=0)
elif which == "scikit-learn":
    from sklearn.ensemble import RandomForestClassifier
    model = RandomForestClassifier(**count, n_jobs=jobs, random_state=0)
elif which == "ydf":
    import ydf
    model = ydf.RandomForestLearner(label="y", num_threads=jobs,
                                    **({} if trees == 0 else {"num_trees": trees}))
else:
    from aucforest import AUCForestClassifier
    model = AUCForestClassifier(**count, n_jobs=jobs, random_state=0)
X, y = make_classification(n + n_test, p, n_informative=min(p, 12), n_redundant=0,
                           n_classes=k, n_clusters_per_class=1, weights=shares, random_state=0)
X = X.astype(np.float32)
X, y, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
columns = lambda A: {f"x{j}": np.ascontiguousarray(A[:, j]) for j in range(p)}
if which == "ydf":  # a dict of columns, its own input format
    data = columns(X)
    data["y"] = y
    X = data
import gc; gc.collect()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
before = status("VmRSS")
start = time.perf_counter()
if which == "ydf":
    model = model.train(X, verbose=0)
else:
    model.fit(X, y)
seconds = time.perf_counter() - start
out = {"X": n * p * 4, "growth": status("VmHWM") - before, "seconds": seconds}
if which == "aucforest":
    trees_ = [e.tree_ for e in model.estimators_]
    out.update(kept_nodes=sum(t.node_count for t in trees_),
               kept_bytes=sum(t.nbytes for t in trees_),
               node_size=model.predict_min_samples_)
if n_test:
    if which == "ydf":
        X_test = columns(X_test)
        order = np.argsort([int(c) for c in model.label_classes()])
        predict_proba = lambda A: model.predict(A, num_threads=jobs)[:, order]
        predict = lambda A: predict_proba(A).argmax(axis=1)
    else:
        X_test = np.ascontiguousarray(X_test)
        predict_proba, predict = model.predict_proba, model.predict
    times = []
    for _ in range(3):
        start = time.perf_counter()
        proba = predict_proba(X_test)
        times.append(time.perf_counter() - start)
    labels = predict(X_test)
    recalls = [np.mean(labels[y_test == c] == c) for c in range(k)]
    auc = (roc_auc_score(y_test, proba[:, 1]) if k == 2 else
           roc_auc_score(y_test, proba, multi_class="ovr", average="macro"))
    out.update(predict_seconds=float(np.median(times)), auc=float(auc),
               gmean=float(np.prod(recalls) ** (1 / k)))
print(json.dumps(out))
"""


def probe(system, shape, trees, jobs, checkout=None, python=None, predict_rows=0):
    """The probe's figures (a dict) of one fit in a fresh process (``trees`` 0: the
    system's default)."""
    n, p, k = shape
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = checkout
    out = subprocess.run([python or sys.executable, "-c", PROBE, str(n), str(p), str(k),
                          str(trees), str(jobs), system, json.dumps(CLASS_SHARES[k]),
                          str(predict_rows)],
                         check=True, capture_output=True, text=True, env=env,
                         cwd=checkout or "/").stdout
    return json.loads(out.strip().splitlines()[-1])


def line(system, shape, trees, jobs, result):
    n, p, k = shape
    count = "default trees" if trees == 0 else f"{trees} trees"
    text = (f"{n:,} x {p}, K={k}, {count}, {jobs} thread(s), {system}: peak fit memory "
            f"above the data {result['growth'] / 2**20:,.0f} MiB (X {result['X'] / 2**20:.0f}"
            f" MiB), fit {result['seconds']:.1f} s")
    if "predict_seconds" in result:
        text += (f", predict {result['predict_seconds']:.2f} s, AUC {result['auc']:.4f}, "
                 f"G-mean {result['gmean']:.4f}")
    if "kept_nodes" in result:
        text += (f"; kept model {result['kept_bytes'] / 2**20:,.0f} MiB, "
                 f"{result['kept_bytes'] / result['kept_nodes']:.0f} B/node, node size "
                 f"{result['node_size']}")
    return text


FIGURES = {"growth": ("peak fit memory above the data, MiB", 2**20),
           "seconds": ("fit, s", 1), "predict_seconds": ("predict_proba, s", 1),
           "auc": ("held-out AUC", None), "gmean": ("held-out G-mean", None)}


def summary(results):
    """A table per figure: each system's median over its runs and, for the costs,
    the ratio to aucforest's median."""
    systems = list(results)
    for key, (title, unit) in FIGURES.items():
        if not all(key in r for runs in results.values() for r in runs):
            continue
        medians = {s: statistics.median(r[key] for r in results[s]) for s in systems}
        print(f"\n{title} (median of the runs)\n\n| system | runs | value | / aucforest |\n"
              "|---|---|---|---|")
        for s in systems:
            value = (f"{medians[s] / unit:,.0f}" if unit == 2**20 else
                     f"{medians[s]:.2f}" if unit else f"{medians[s]:.4f}")
            ratio = (f"{medians[s] / medians['aucforest']:.2f}"
                     if unit and "aucforest" in medians else "")
            print(f"| {s} | {len(results[s])} | {value} | {ratio} |")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fit_memory",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="200000x20x3,300000x20x3",
                        help="comma-separated n x p x K (K 2 or 3)")
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--jobs", default="1", help="comma-separated thread counts")
    parser.add_argument("--systems", default="aucforest,oneDAL",
                        help=f"comma-separated, of {SYSTEMS}")
    parser.add_argument("--defaults", action="store_true",
                        help="every system's own default number of trees (--trees ignored)")
    parser.add_argument("--predict-rows", type=int, default=0,
                        help="also time predict_proba of this many held-out rows, with AUC and "
                        "G-mean")
    parser.add_argument("--rounds", type=int, default=1,
                        help="fits per system, alternating; medians and ratios to aucforest")
    parser.add_argument("--rounds-ydf", type=int,
                        help="fits of ydf (its defaults are slow; default: --rounds)")
    parser.add_argument("--checkout", help="the aucforest checkout to import (built in place)")
    parser.add_argument("--peer-python", help="interpreter of oneDAL, scikit-learn and ydf")
    args = parser.parse_args(argv)
    trees = 0 if args.defaults else args.trees
    rounds = {s: args.rounds for s in SYSTEMS}
    if args.rounds_ydf is not None:
        rounds["ydf"] = args.rounds_ydf
    systems = args.systems.split(",")
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        parser.error(f"--systems: unknown {sorted(unknown)}; choose from {SYSTEMS}")
    for text in args.shapes.split(","):
        shape = tuple(int(v) for v in text.split("x"))
        if len(shape) != 3 or shape[2] not in CLASS_SHARES:
            parser.error(f"--shapes: {text!r} is not n x p x K with K 2 or 3")
        for jobs in (int(j) for j in args.jobs.split(",")):
            results = {system: [] for system in systems}
            for round_ in range(max(rounds[s] for s in systems)):
                for system in systems if round_ % 2 == 0 else systems[::-1]:
                    if round_ >= rounds[system]:
                        continue
                    checkout = args.checkout if system == "aucforest" else None
                    python = None if system == "aucforest" else args.peer_python
                    result = probe(system, shape, trees, jobs, checkout, python,
                                   args.predict_rows)
                    results[system].append(result)
                    print(line(system, shape, trees, jobs, result), flush=True)
            if max(rounds[s] for s in systems) > 1 or args.predict_rows:
                summary(results)


if __name__ == "__main__":
    main()
