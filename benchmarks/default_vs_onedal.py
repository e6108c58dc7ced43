"""The default AUCForestClassifier against oneDAL (sklearnex) on the rows of issue 14.

Fit wall time of the default forest over oneDAL's (max_features="sqrt", its
other defaults), median of 3 fits per system alternating in one run, one and
two threads. Needs scikit-learn-intelex (benchmarks/requirements-peers.txt).
From the repository root:

    python -m benchmarks.default_vs_onedal
    python -m benchmarks.default_vs_onedal --rows 5000x20x2x3 --rounds 1   # a smoke run
"""
import argparse

from .compare_peers import FULL_ROWS
from .harness import timing
from .harness.data import speed_data
from .harness.systems import aucforest, sklearnex_rf

ROWS = FULL_ROWS[:4]  # the table of issue 14


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.default_vs_onedal",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rows", help="comma-separated rows as n x p x K x trees, e.g. "
                        "20000x20x3x50 (default: the four rows of issue 14)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rows = ([tuple(map(int, row.split("x"))) for row in args.rows.split(",")] if args.rows
            else ROWS)
    sklearnex_rf()  # fails first, with the install line, when oneDAL is missing
    for n, p, k, trees in rows:
        X, y, _, _ = speed_data(n, p, k)
        for jobs in (1, 2):
            systems = {
                "default": lambda: aucforest(trees, n_jobs=jobs, random_state=0),
                "oneDAL": lambda: sklearnex_rf(n_estimators=trees, n_jobs=jobs, random_state=0,
                                               max_features="sqrt"),
            }
            times = timing.alternate(
                list(systems), args.rounds, lambda name, _: timing.fit_seconds(systems[name], X, y)[0],
                reverse=False)
            ratio = timing.median(times["default"]) / timing.median(times["oneDAL"])
            print(f"{n:,} x {p}, K={k}, {trees} trees, {jobs} thread(s): "
                  f"default / oneDAL {ratio:.2f}", flush=True)


if __name__ == "__main__":
    main()
