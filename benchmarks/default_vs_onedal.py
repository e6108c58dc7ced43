"""The default AUCForestClassifier against oneDAL (sklearnex) on the rows of issue 14.

Fit wall time of the default forest over oneDAL's (max_features="sqrt", its
other defaults), median of 3 fits per system alternating in one run, one and
two threads. Needs scikit-learn-intelex (benchmarks/requirements-peers.txt).

    python benchmarks/default_vs_onedal.py
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_peers import FULL_ROWS, make_data  # noqa: E402

from aucforest import AUCForestClassifier  # noqa: E402

ROWS = FULL_ROWS[:4]  # the table of issue 14


def main():
    from sklearnex.ensemble import RandomForestClassifier as OneDAL
    for n, p, k, trees in ROWS:
        X, y, _, _ = make_data(n, p, k)
        for jobs in (1, 2):
            systems = {
                "default": lambda: AUCForestClassifier(trees, n_jobs=jobs, random_state=0),
                "oneDAL": lambda: OneDAL(trees, n_jobs=jobs, random_state=0, max_features="sqrt"),
            }
            times = {name: [] for name in systems}
            for _ in range(3):
                for name, make in systems.items():
                    model = make()
                    start = time.perf_counter()
                    model.fit(X, y)
                    times[name].append(time.perf_counter() - start)
            ratio = np.median(times["default"]) / np.median(times["oneDAL"])
            print(f"{n:,} x {p}, K={k}, {trees} trees, {jobs} thread(s): "
                  f"default / oneDAL {ratio:.2f}", flush=True)


if __name__ == "__main__":
    main()
