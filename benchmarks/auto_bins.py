"""Evidence for max_bins="auto": the default forest with the exact splitter
(max_bins=None) and with the binned one (max_bins=255), against oneDAL.

Fit wall time over oneDAL's (max_features="sqrt", its other defaults), median
of ROUNDS fits per system alternating in one run, and the test AUC of each
system's first fit. Needs scikit-learn-intelex (benchmarks/requirements-peers.txt).
Rows, data, systems and timing come from ``benchmarks.harness`` and
``benchmarks.compare_peers``. From the repository root:

    python -m benchmarks.auto_bins                  # the rows of issue 14
    python -m benchmarks.auto_bins 1000000x20x2x5   # rows as n x p x K x trees
    JOBS=1 ROUNDS=1 python -m benchmarks.auto_bins ...
"""
import os
import sys

from aucforest.metrics import multiclass_auc

from .compare_peers import FULL_ROWS
from .harness import timing
from .harness.data import speed_data
from .harness.systems import aucforest, sklearnex_rf


def main(argv):
    rows = ([tuple(map(int, row.split("x"))) for row in argv[0].split(",")] if argv
            else FULL_ROWS[:4])
    threads = [int(j) for j in os.environ.get("JOBS", "1,2").split(",")]
    rounds = int(os.environ.get("ROUNDS", "3"))
    sklearnex_rf()  # fails first, with the install line, when oneDAL is missing
    for n, p, k, trees in rows:
        X, y, X_test, y_test = speed_data(n, p, k)
        for jobs in threads:
            systems = {
                "exact": lambda: aucforest(trees, max_bins=None, n_jobs=jobs, random_state=0),
                "binned": lambda: aucforest(trees, max_bins=255, n_jobs=jobs, random_state=0),
                "oneDAL": lambda: sklearnex_rf(n_estimators=trees, n_jobs=jobs,
                                               random_state=0, max_features="sqrt"),
            }
            aucs = {}

            def measure(name, round_):
                seconds, model = timing.fit_seconds(systems[name], X, y)
                if round_ == 0:
                    aucs[name] = multiclass_auc(y_test, model.predict_proba(X_test),
                                                labels=model.classes_)
                return seconds

            times = timing.alternate(list(systems), rounds, measure, reverse=False)
            base = timing.median(times["oneDAL"])
            print(f"{n:,} x {p}, K={k}, {trees} trees, {jobs} thread(s): " + ", ".join(
                f"{name} {timing.median(times[name]) / base:.2f} (AUC {aucs[name]:.4f})"
                for name in systems), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
