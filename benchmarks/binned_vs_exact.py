"""Fit time of the default forest with the binned splitter over the exact one
(evidence for max_bins="auto" choosing by rows), alternating in one process.

For each n: ROUNDS fits of AUCForestClassifier(trees, max_bins=None) and of
AUCForestClassifier(trees, max_bins=255), alternating, random_state = round;
prints the median times and the median, min and max of the per-round ratios.

From the repository root:

    python -m benchmarks.binned_vs_exact 2000,5000,10000,20000 20 10   # n list, p, K
    python -m benchmarks.binned_vs_exact 5000,10000,30000 200 2 --trees 30 --rounds 3
"""
import argparse

import numpy as np

from .harness import timing
from .harness.data import speed_data as make_data
from .harness.systems import aucforest


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.binned_vs_exact",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="comma-separated training rows, e.g. 2000,10000")
    parser.add_argument("p", type=int)
    parser.add_argument("k", type=int)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    for n in map(int, args.rows.split(",")):
        X, y, _, _ = make_data(n, args.p, args.k)

        def measure(max_bins, round_):
            return timing.fit_seconds(lambda: aucforest(args.trees, n_jobs=args.jobs,
                                                        random_state=round_,
                                                        max_bins=max_bins), X, y)[0]

        times = timing.alternate([None, 255], args.rounds, measure, reverse=False)
        ratio = np.array(times[255]) / np.array(times[None])
        print(f"n={n:,} p={args.p} K={args.k} trees={args.trees} jobs={args.jobs}: "
              f"exact {np.median(times[None]):.3f} s, binned {np.median(times[255]):.3f} s, "
              f"binned / exact {np.median(ratio):.2f} [{ratio.min():.2f}-{ratio.max():.2f}]",
              flush=True)


if __name__ == "__main__":
    main()
