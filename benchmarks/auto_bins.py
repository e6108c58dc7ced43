"""Evidence for max_bins="auto": the default forest with the exact splitter
(max_bins=None) and with the binned one (max_bins=255), against oneDAL.

Fit wall time over oneDAL's (max_features="sqrt", its other defaults), median
of ROUNDS fits per system alternating in one run, and the test AUC of each
system's first fit. Needs scikit-learn-intelex (benchmarks/requirements-peers.txt).

    python benchmarks/auto_bins.py                  # the rows of issue 14
    python benchmarks/auto_bins.py 1000000x20x2x5   # rows as n x p x K x trees
    JOBS=1 ROUNDS=1 python benchmarks/auto_bins.py ...
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_peers import FULL_ROWS, make_data  # noqa: E402

from aucforest import AUCForestClassifier  # noqa: E402
from aucforest.metrics import multiclass_auc  # noqa: E402


def main(argv):
    from sklearnex.ensemble import RandomForestClassifier as OneDAL
    rows = ([tuple(map(int, row.split("x"))) for row in argv[0].split(",")] if argv
            else FULL_ROWS[:4])
    threads = [int(j) for j in os.environ.get("JOBS", "1,2").split(",")]
    rounds = int(os.environ.get("ROUNDS", "3"))
    for n, p, k, trees in rows:
        X, y, X_test, y_test = make_data(n, p, k)
        for jobs in threads:
            systems = {
                "exact": lambda: AUCForestClassifier(trees, max_bins=None, n_jobs=jobs,
                                                     random_state=0),
                "binned": lambda: AUCForestClassifier(trees, max_bins=255, n_jobs=jobs,
                                                      random_state=0),
                "oneDAL": lambda: OneDAL(trees, n_jobs=jobs, random_state=0,
                                         max_features="sqrt"),
            }
            times, aucs = {name: [] for name in systems}, {}
            for r in range(rounds):
                for name, make in systems.items():
                    model = make()
                    start = time.perf_counter()
                    model.fit(X, y)
                    times[name].append(time.perf_counter() - start)
                    if r == 0:
                        aucs[name] = multiclass_auc(y_test, model.predict_proba(X_test),
                                                    labels=model.classes_)
            base = np.median(times["oneDAL"])
            print(f"{n:,} x {p}, K={k}, {trees} trees, {jobs} thread(s): " + ", ".join(
                f"{name} {np.median(times[name]) / base:.2f} (AUC {aucs[name]:.4f})"
                for name in systems), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
