"""Two threads against one on small data: the default forest (500 trees) on a few
hundred to a few thousand rows, where each tree takes a few milliseconds.

Fit wall time with ``n_jobs=1`` and ``n_jobs=2``, alternating in one run,
median of ROUNDS fits (environment variable, default 5); the speed-up is
one-thread time over two-thread time.

    python benchmarks/small_data_threads.py
"""
import os
import time

import numpy as np
from sklearn.datasets import make_classification

from aucforest import AUCForestClassifier

SIZES = (500, 2000, 5000)
TREES = 500


def fit_time(model, X, y):
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def main():
    rounds = int(os.environ.get("ROUNDS", 5))
    X, y = make_classification(200, 20, n_classes=3, n_informative=10, random_state=1)
    AUCForestClassifier(20, n_jobs=2).fit(X, y)  # warm-up: joblib's first thread pool
    print(f"default forest, {TREES} trees, p = 20, K = 3; median of {rounds} fits, seconds")
    print("| rows | one thread | two threads | speed-up |")
    print("|---|---|---|---|")
    for n in SIZES:
        X, y = make_classification(n, 20, n_informative=10, n_classes=3, random_state=0)
        times = {1: [], 2: []}
        for _ in range(rounds):  # the thread counts alternate
            for jobs in times:
                model = AUCForestClassifier(TREES, n_jobs=jobs, random_state=0)
                times[jobs].append(fit_time(model, X, y))
        one, two = float(np.median(times[1])), float(np.median(times[2]))
        print(f"| {n:,} | {one:.3f} | {two:.3f} | {one / two:.2f} |", flush=True)


if __name__ == "__main__":
    main()
