"""Two threads against one on small data: the default forest (500 trees) on a few
hundred to a few thousand rows, where each tree takes a few milliseconds.

Fit wall time with ``n_jobs=1`` and ``n_jobs=2``, alternating in one run,
median of ROUNDS fits (environment variable, default 5); the speed-up is
one-thread time over two-thread time.

From the repository root:

    python -m benchmarks.small_data_threads
    ROUNDS=1 SIZES=500 python -m benchmarks.small_data_threads   # a smoke run
"""
import os

import numpy as np
from sklearn.datasets import make_classification

from .harness import timing
from .harness.systems import aucforest

SIZES = (500, 2000, 5000)
TREES = 500


def main():
    rounds = int(os.environ.get("ROUNDS", 5))
    sizes = [int(n) for n in os.environ.get("SIZES", ",".join(map(str, SIZES))).split(",")]
    X, y = make_classification(200, 20, n_classes=3, n_informative=10, random_state=1)
    aucforest(20, n_jobs=2).fit(X, y)  # warm-up: joblib's first thread pool
    print(f"default forest, {TREES} trees, p = 20, K = 3; median of {rounds} fits, seconds")
    print("| rows | one thread | two threads | speed-up |")
    print("|---|---|---|---|")
    for n in sizes:
        X, y = make_classification(n, 20, n_informative=10, n_classes=3, random_state=0)
        times = timing.alternate(  # the thread counts alternate
            [1, 2], rounds, lambda jobs, _: timing.fit_seconds(
                lambda: aucforest(TREES, n_jobs=jobs, random_state=0), X, y)[0],
            reverse=False)
        one, two = float(np.median(times[1])), float(np.median(times[2]))
        print(f"| {n:,} | {one:.3f} | {two:.3f} | {one / two:.2f} |", flush=True)


if __name__ == "__main__":
    main()
