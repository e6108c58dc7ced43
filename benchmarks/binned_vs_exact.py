"""Fit time of the default forest with the binned splitter over the exact one
(evidence for max_bins="auto" choosing by rows), alternating in one process.

For each n: ROUNDS fits of AUCForestClassifier(trees, max_bins=None) and of
AUCForestClassifier(trees, max_bins=255), alternating, random_state = round;
prints the median times and the median, min and max of the per-round ratios.

    python benchmarks/binned_vs_exact.py 2000,5000,10000,20000 20 10   # n list, p, K
    python benchmarks/binned_vs_exact.py 5000,10000,30000 200 2 --trees 30 --rounds 3
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_peers import make_data  # noqa: E402

from aucforest import AUCForestClassifier  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="comma-separated training rows, e.g. 2000,10000")
    parser.add_argument("p", type=int)
    parser.add_argument("k", type=int)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    for n in map(int, args.rows.split(",")):
        X, y, _, _ = make_data(n, args.p, args.k)
        times = {None: [], 255: []}
        for round_ in range(args.rounds):
            for max_bins in times:
                forest = AUCForestClassifier(args.trees, n_jobs=args.jobs,
                                             random_state=round_, max_bins=max_bins)
                start = time.perf_counter()
                forest.fit(X, y)
                times[max_bins].append(time.perf_counter() - start)
        ratio = np.array(times[255]) / np.array(times[None])
        print(f"n={n:,} p={args.p} K={args.k} trees={args.trees} jobs={args.jobs}: "
              f"exact {np.median(times[None]):.3f} s, binned {np.median(times[255]):.3f} s, "
              f"binned / exact {np.median(ratio):.2f} [{ratio.min():.2f}-{ratio.max():.2f}]",
              flush=True)


if __name__ == "__main__":
    main()
