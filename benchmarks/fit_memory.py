"""Peak memory of a fit at the defaults: aucforest against oneDAL (sklearnex) and
scikit-learn at the same number of trees, each fit in a fresh process.

Each process makes float32 imbalanced ``make_classification`` data (K = 2:
90/10%, K = 3: 80/15/5%), resets its peak resident size (``/proc/self/clear_refs``),
reads its resident size, fits, and reports the peak above that (``VmHWM`` -
``VmRSS`` before the fit): the fit's memory above the data. aucforest fits also
report the grown nodes, the nodes and bytes of the kept model (the trees'
``nbytes``) and the node size chosen. A peer runs in the interpreter given by
``--peer-python`` (a separate venv with scikit-learn-intelex, so the project's
stays as it is). From the repository root:

    python -m benchmarks.fit_memory --shapes 300000x20x3 --trees 200 --jobs 1
    python -m benchmarks.fit_memory --checkout /path/to/old/checkout --systems aucforest
    python -m benchmarks.fit_memory --peer-python /work/venv-peers/bin/python \\
        --systems aucforest,oneDAL --shapes 200000x20x2,300000x20x3,1000000x20x2 --jobs 1,2
"""
import argparse
import json
import os
import subprocess
import sys

SYSTEMS = ("aucforest", "oneDAL", "scikit-learn")
CLASS_SHARES = {2: [0.9, 0.1], 3: [0.8, 0.15, 0.05]}

PROBE = """
import json, sys, time
import numpy as np
from sklearn.datasets import make_classification

def status(key):  # kB fields of /proc/self/status, in bytes
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024

n, p, k, trees, jobs, which = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                               int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
shares = json.loads(sys.argv[7])
if which == "oneDAL":
    from sklearnex.ensemble import RandomForestClassifier
    model = RandomForestClassifier(n_estimators=trees, n_jobs=jobs, random_state=0,
                                   max_features="sqrt")
elif which == "scikit-learn":
    from sklearn.ensemble import RandomForestClassifier
    model = RandomForestClassifier(trees, n_jobs=jobs, random_state=0)
else:
    from aucforest import AUCForestClassifier
    model = AUCForestClassifier(trees, n_jobs=jobs, random_state=0)
X, y = make_classification(n, p, n_informative=min(p, 12), n_redundant=0, n_classes=k,
                           n_clusters_per_class=1, weights=shares, random_state=0)
X = X.astype(np.float32)
import gc; gc.collect()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
before = status("VmRSS")
start = time.perf_counter()
model.fit(X, y)
seconds = time.perf_counter() - start
out = {"X": X.nbytes, "growth": status("VmHWM") - before, "seconds": seconds}
if which == "aucforest":
    trees_ = [e.tree_ for e in model.estimators_]
    out.update(kept_nodes=sum(t.node_count for t in trees_),
               kept_bytes=sum(t.nbytes for t in trees_),
               node_size=model.predict_min_samples_)
print(json.dumps(out))
"""


def probe(system, shape, trees, jobs, checkout=None, python=None):
    """The probe's figures (a dict) of one fit in a fresh process."""
    n, p, k = shape
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = checkout
    out = subprocess.run([python or sys.executable, "-c", PROBE, str(n), str(p), str(k),
                          str(trees), str(jobs), system, json.dumps(CLASS_SHARES[k])],
                         check=True, capture_output=True, text=True, env=env,
                         cwd=checkout or "/").stdout
    return json.loads(out.strip().splitlines()[-1])


def line(system, shape, trees, jobs, result):
    n, p, k = shape
    text = (f"{n:,} x {p}, K={k}, {trees} trees, {jobs} thread(s), {system}: peak fit memory "
            f"above the data {result['growth'] / 2**20:,.0f} MiB (X {result['X'] / 2**20:.0f}"
            f" MiB), fit {result['seconds']:.1f} s")
    if "kept_nodes" in result:
        text += (f"; kept model {result['kept_bytes'] / 2**20:,.0f} MiB, "
                 f"{result['kept_bytes'] / result['kept_nodes']:.0f} B/node, node size "
                 f"{result['node_size']}")
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fit_memory",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="200000x20x3,300000x20x3",
                        help="comma-separated n x p x K (K 2 or 3)")
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--jobs", default="1", help="comma-separated thread counts")
    parser.add_argument("--systems", default="aucforest,oneDAL",
                        help=f"comma-separated, of {SYSTEMS}")
    parser.add_argument("--checkout", help="the aucforest checkout to import (built in place)")
    parser.add_argument("--peer-python", help="interpreter of oneDAL and scikit-learn")
    args = parser.parse_args(argv)
    systems = args.systems.split(",")
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        parser.error(f"--systems: unknown {sorted(unknown)}; choose from {SYSTEMS}")
    for text in args.shapes.split(","):
        shape = tuple(int(v) for v in text.split("x"))
        if len(shape) != 3 or shape[2] not in CLASS_SHARES:
            parser.error(f"--shapes: {text!r} is not n x p x K with K 2 or 3")
        for jobs in (int(j) for j in args.jobs.split(",")):
            for system in systems:
                checkout = args.checkout if system == "aucforest" else None
                python = None if system == "aucforest" else args.peer_python
                result = probe(system, shape, args.trees, jobs, checkout, python)
                print(line(system, shape, args.trees, jobs, result), flush=True)


if __name__ == "__main__":
    main()
