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
    python -m benchmarks.ab_checkouts OLD NEW --shape 300000x20x2x8 --rounds 7 --side-by-side

``--side-by-side`` starts the two processes of a round at once (with
``--jobs 1`` one per core of a two-core machine), so that both meet the same
load and clock, and reports the median of the rounds' B / A ratios: on a
shared machine whose speed drifts by 10-20% between runs of the same code,
alternating runs cannot resolve a 5% change; side by side, the ratios of
seven rounds stayed within a few percent of each other.
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


def start_fit(checkout, shape, jobs):
    """A fresh process fitting from checkout (`finish_fit` reads its result)."""
    n, p, k, trees = shape
    code = FIT.format(n=n, p=p, k=k, trees=trees, jobs=jobs,
                      benchmarks=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.Popen([sys.executable, "-c", code], cwd=checkout, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=checkout))


def finish_fit(checkout, process):
    """(seconds, nodes of tree 0, node size) of a process from `start_fit`."""
    stdout, stderr = process.communicate()
    if process.returncode:
        raise RuntimeError(f"the fit from {checkout} failed:\n{stderr}")
    seconds, nodes, size = stdout.split()
    return float(seconds), int(nodes), int(size)


def fit_in(checkout, shape, jobs):
    """(seconds, nodes of tree 0, node size) of one fresh process fitting from checkout."""
    return finish_fit(checkout, start_fit(checkout, shape, jobs))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ab_checkouts",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("a", help="checkout A (the reference)")
    parser.add_argument("b", help="checkout B")
    parser.add_argument("--shape", default="20000x20x64x20", help="n x p x K x trees")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--side-by-side", action="store_true",
                        help="run the two checkouts of a round at once, not in turn")
    args = parser.parse_args(argv)
    shape = tuple(int(part) for part in args.shape.split("x"))
    checkouts = [os.path.abspath(args.a), os.path.abspath(args.b)]
    times = {checkout: [] for checkout in checkouts}
    ratios = []
    for round_ in range(args.rounds):
        order = checkouts if round_ % 2 == 0 else checkouts[::-1]
        if args.side_by_side:
            started = {checkout: start_fit(checkout, shape, args.jobs) for checkout in order}
            results = {checkout: finish_fit(checkout, process)
                       for checkout, process in started.items()}
        else:
            results = {checkout: fit_in(checkout, shape, args.jobs) for checkout in order}
        for checkout, (seconds, _, _) in results.items():
            times[checkout].append(seconds)
        ratios.append(times[checkouts[1]][-1] / times[checkouts[0]][-1])
        trees = {checkout: results[checkout][1:] for checkout in checkouts}
        print(f"round {round_}: A {times[checkouts[0]][-1]:.3f} s, B {times[checkouts[1]][-1]:.3f} s;"
              f" tree 0 nodes / node size A {trees[checkouts[0]]}, B {trees[checkouts[1]]}",
              flush=True)
    a, b = (statistics.median(times[checkout]) for checkout in checkouts)
    how = "side by side" if args.side_by_side else "in turn"
    print(f"{args.shape}, n_jobs={args.jobs}, {how}: median A {a:.3f} s, B {b:.3f} s, "
          f"B / A {b / a:.3f}, median of the rounds' B / A {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
