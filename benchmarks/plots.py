"""Evidence plots, redrawn from the result files (no fit is run).

    python -m benchmarks.plots                     # benchmarks/results/*.png
    python -m benchmarks.plots --results DIR --out-dir DIR

Each figure is labelled with the result files it comes from, their runs'
dates and the aucforest version (their metadata, ``<name>.json``):

* ``speed_fit_time.png``: fit seconds per tree against training rows for
  every system of the speed study (one and two threads), from
  ``speed_peers.csv`` and ``speed_peers_1e7.csv`` (``compare_peers``'s last
  run, aucforest's default and binned forests and oneDAL) and, for the
  systems that run left out (aucforest's exact splitter, scikit-learn),
  ``speed_peers_all_systems.csv``;
* ``imbalance_peers.png``: critical-difference diagrams of the AUC and
  G-mean ranks of the imbalanced suite (Friedman test, Nemenyi CD), from
  ``imbalance_peers.csv``, as ``python -m benchmarks.imbalance_peers`` draws it;
* ``auc_vs_gini.png``: per data set, the test AUC of the AUC-split forest
  minus the Gini forest's against the Gini forest's, from ``imbalance.csv``
  (12 real sets, leaf size 1, paired on folds) and ``criterion_grid.csv``
  (synthetic cells, paired on seeds).

A figure whose result files are missing is skipped with a note.
"""
import argparse
import os

import numpy as np
import pandas as pd

from . import imbalance_peers
from .harness import plots
from .harness.report import RESULTS, read_results

SPEED_CURRENT = ("speed_peers.csv", "speed_peers_1e7.csv")
SPEED_ALL = "speed_peers_all_systems.csv"
ORDER = ["aucforest default", "aucforest binned auc", "aucforest binned gini",
         "aucforest exact auc", "aucforest exact gini", "sklearnex", "scikit-learn",
         "xgboost rf", "skranger"]


def _existing(results, names):
    return [name for name in names if os.path.exists(os.path.join(results, name))]


def speed_plot(results, out_dir):
    """speed_fit_time.png: fit seconds per tree against rows, every system."""
    current = _existing(results, SPEED_CURRENT)
    extra = _existing(results, [SPEED_ALL])
    if not current and not extra:
        return None
    frames, sources = [], []
    for name in current:
        frame, meta = read_results(os.path.join(results, name))
        frames.append(frame)
        sources.append((meta, name))
    chosen = pd.concat(frames) if frames else pd.DataFrame(columns=["system"])
    if extra:  # systems the last run left out, from the run with every system
        frame, meta = read_results(os.path.join(results, extra[0]))
        missing = frame[~frame["system"].isin(set(chosen["system"]))]
        if not missing.empty:
            frame = missing.assign(system=missing["system"] + " (earlier run)")
            chosen = pd.concat([chosen, frame])
            sources.append((meta, extra[0]))
    names = [s for s in ORDER if s in set(chosen["system"])]
    names += [s for s in dict.fromkeys(chosen["system"]) if s not in names]
    names = sorted(names, key=lambda s: (s.endswith("(earlier run)"), names.index(s)))
    plt = plots.pyplot()
    jobs = sorted(chosen["jobs"].unique())
    fig, axes = plt.subplots(1, len(jobs), figsize=(6 * len(jobs), 4.8), squeeze=False,
                             sharey=True)
    plots.fit_time_vs_rows(chosen, axes[0], names)
    axes[0, 0].legend(fontsize=7, loc="upper left")
    fig.suptitle("Fit time per tree against training rows (make_classification float32, "
                 "p = 20; hollow: p = 200; K = 10 at 10,000 rows, 3 at 20,000, else 2); "
                 "median of the rounds", fontsize=9)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    plots.stamp(fig, *sources[0], more=sources[1:])
    path = os.path.join(out_dir, "speed_fit_time.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def cd_plot(results, out_dir, reference="aucforest-default"):
    """imbalance_peers.png: critical-difference diagrams of the imbalanced suite."""
    if not _existing(results, ["imbalance_peers.csv"]):
        return None
    frame, meta = read_results(os.path.join(results, "imbalance_peers.csv"))
    reference = meta.get("reference", reference)
    if reference not in set(frame["system"]):
        reference = frame["system"].iloc[0]
    path = os.path.join(out_dir, "imbalance_peers.png")
    return path if imbalance_peers.write_cd_plot(frame, reference, meta, path) else None


def auc_gini_plot(results, out_dir):
    """auc_vs_gini.png: AUC-split minus Gini test AUC per data set (or grid cell)."""
    panels = []
    if _existing(results, ["imbalance.csv"]):
        frame, meta = read_results(os.path.join(results, "imbalance.csv"))
        table = plots.paired_table(frame, ["dataset"], "method", "auc",
                                   "af-auc-rfq-leaf1", "af-gini-rfq-leaf1", "fold")
        panels.append(("imbalance.csv", meta, table, dict(
            title=f"{len(table)} imbalanced data sets (benchmarks.imbalance), leaf size 1; "
                  "mean over CV folds", annotate=True)))
    if _existing(results, ["criterion_grid.csv"]):
        frame, meta = read_results(os.path.join(results, "criterion_grid.csv"))
        reference = meta.get("reference", "gini")
        if {"auc", reference} <= set(frame["system"]):
            table = plots.paired_table(frame, ["p", "share", "k"], "system", "auc", "auc",
                                       reference, "seed")
            table = table.reset_index()
            table.index = [f"p{p} {share:g} K{k}" for p, share, k in
                           table[["p", "share", "k"]].itertuples(index=False)]
            panels.append(("criterion_grid.csv", meta, table, dict(
                title=f"{len(table)} synthetic cells (benchmarks.criterion_grid), balanced "
                      "classes; mean over seeds", annotate=False, hue="k", hue_label="K")))
    if not panels:
        return None
    plt = plots.pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 5), squeeze=False)
    for ax, (_, _, table, options) in zip(axes[0], panels):
        plots.auc_vs_gini(table, ax, **options)
    fig.suptitle('Test AUC of criterion="auc" minus criterion="gini" (bars: +-1 standard '
                 "error of the paired difference)", fontsize=10)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    plots.stamp(fig, panels[0][1], panels[0][0], more=[(m, n) for n, m, _, _ in panels[1:]])
    path = os.path.join(out_dir, "auc_vs_gini.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


FIGURES = {"speed_fit_time.png": speed_plot, "imbalance_peers.png": cd_plot,
           "auc_vs_gini.png": auc_gini_plot}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.plots",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(RESULTS), help="folder of the result files")
    parser.add_argument("--out-dir", default=None, help="folder of the plots (default: "
                        "--results)")
    args = parser.parse_args(argv)
    out_dir = args.out_dir or args.results
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, draw in FIGURES.items():
        path = draw(args.results, out_dir)
        print(f"wrote {path}" if path else f"skipped {name}: its result files are missing")
        if path:
            written.append(path)
    return written


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
