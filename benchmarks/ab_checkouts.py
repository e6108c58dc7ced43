"""Fit time of the default forest from two checkouts of aucforest, A/B.

Each round runs one fresh process per checkout, in alternating order, on the
same data (`harness.data.speed_data`); a process fits a small warm-up forest,
then the forest twice, and reports the faster fit. The median over rounds of
each checkout and their ratio are printed, with the node count of the first
tree and the node size chosen, which must agree when a change is meant to
leave the trees as they were. Both checkouts need their compiled modules
built in place (``python setup.py build_ext --inplace``). From the
repository root:

    python -m benchmarks.ab_checkouts /path/to/old/checkout . --shape 20000x20x256x20
    python -m benchmarks.ab_checkouts OLD NEW --shape 300000x20x2x8 --rounds 7 --jobs 2
"""
import argparse
import os
import statistics
import subprocess
import sys

FIT = """
import sys, time
import numpy as np
sys.path.append({benchmarks!r})  # the checkout (cwd, PYTHONPATH) comes first
from benchmarks.harness.data import speed_data
from aucforest import AUCForestClassifier
X, y, _, _ = speed_data({n}, {p}, {k}, n_test=1)
AUCForestClassifier(2, n_jobs={jobs}, random_state=0).fit(X[:5000], y[:5000])
seconds = []
for _ in range(2):
    start = time.perf_counter()
    model = AUCForestClassifier({trees}, n_jobs={jobs}, random_state=0).fit(X, y)
    seconds.append(time.perf_counter() - start)
print(min(seconds), model.estimators_[0].tree_.node_count, model.predict_min_samples_)
"""


def fit_in(checkout, shape, jobs):
    """(seconds, nodes of tree 0, node size) of one fresh process fitting from checkout."""
    n, p, k, trees = shape
    code = FIT.format(n=n, p=p, k=k, trees=trees, jobs=jobs,
                      benchmarks=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", code], cwd=checkout, capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=checkout))
    if done.returncode:
        raise RuntimeError(f"the fit from {checkout} failed:\n{done.stderr}")
    seconds, nodes, size = done.stdout.split()
    return float(seconds), int(nodes), int(size)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ab_checkouts",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("a", help="checkout A (the reference)")
    parser.add_argument("b", help="checkout B")
    parser.add_argument("--shape", default="20000x20x64x20", help="n x p x K x trees")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    shape = tuple(int(part) for part in args.shape.split("x"))
    checkouts = [os.path.abspath(args.a), os.path.abspath(args.b)]
    times = {checkout: [] for checkout in checkouts}
    for round_ in range(args.rounds):
        order = checkouts if round_ % 2 == 0 else checkouts[::-1]
        trees = {}
        for checkout in order:
            seconds, nodes, size = fit_in(checkout, shape, args.jobs)
            times[checkout].append(seconds)
            trees[checkout] = (nodes, size)
        print(f"round {round_}: A {times[checkouts[0]][-1]:.3f} s, B {times[checkouts[1]][-1]:.3f} s;"
              f" tree 0 nodes / node size A {trees[checkouts[0]]}, B {trees[checkouts[1]]}",
              flush=True)
    a, b = (statistics.median(times[checkout]) for checkout in checkouts)
    print(f"{args.shape}, n_jobs={args.jobs}: median A {a:.3f} s, B {b:.3f} s, B / A {b / a:.3f}")


if __name__ == "__main__":
    main()
