"""The default against randomForestSRC's imbalanced() over several forest seeds (issue 10).

benchmarks.imbalance_peers grows one forest per fold and system, so its
means carry the randomness of that one forest: on the binary sets with 10-50
minority cases a fold's G-mean moves by several hundredths from one forest
seed to the next. This script grows more forests on the same folds (the 52
binary sets, 5 x 3-fold, 250 trees) for the two systems whose binary means
are closest, aucforest's default and randomForestSRC's ``imbalanced()``: seed
s (1..--seeds) offsets every fold's seed by 1000 s (aucforest
``random_state = f + 1000 s``, R ``seed = -(f + 1 + 1000 s)``); seed 0 is the
forest of benchmarks.imbalance_peers, read from its CSV (--peers-csv).

Reported (results/forest_seeds.md): per seed, the means over data sets; the
means of the seed-averaged per-set scores, with a Wilcoxon signed-rank test
(scipy) of the default against randomForestSRC over data sets. With another
--trees than the benchmark's 250 the benchmark's forests are not comparable:
seed 0 is left out and the files are named forest_seeds_<trees>.md/.csv/.json.

Folds, systems and the paired test come from ``benchmarks.harness``; the
default's folds run through ``imbalance_peers.run_python_fold``. From the
repository root:

    python -m benchmarks.forest_seeds --seeds 2 --jobs 2
    python -m benchmarks.forest_seeds --trees 1000 --seeds 1 --jobs 2
"""
import argparse
import os

import pandas as pd
from joblib import Parallel, delayed

from . import imbalance_peers as peers
from .harness import data, folds, stats, systems
from .harness.report import RESULTS as RESULTS_DIR
from .harness.report import run_metadata, write_results

RESULTS = str(RESULTS_DIR)
SYSTEMS = ["aucforest-default", "rfsrc-imb"]
SEED_STEP = 1000
PEERS_TREES = 250  # the trees of imbalance_peers' committed run (its --trees default)
STUDY = "forest_seeds"


def seed_rows(name, loader, seeds, n_trees, lib):
    """Per-fold scores of both systems on one binary set, for each extra seed."""
    X, y = loader()
    X, y, _ = data.cap_rows(X, y, 3000)
    splits = folds.cv_splits(y)
    rows = []
    for seed in seeds:
        offset = SEED_STEP * seed
        for row in systems.run_rfsrc(X, y, splits, n_trees, lib, seed_offset=offset):
            rows.append(dict(row, seed=seed))
        for f, (train, test) in enumerate(splits):
            for row in peers.run_python_fold(X, y, train, test, {SYSTEMS[0]: {}}, n_trees, 1,
                                             folds.fold_seed(f, offset), skip=peers.PEER_ORDER):
                rows.append(dict(row, fold=f, seed=seed))
    for row in rows:
        row["dataset"] = name
    return rows


def seed_spread(table):
    """The sd of the per-seed mean differences, when there are two seeds or more."""
    if len(table) < 2:
        return ""
    spread = table[SYSTEMS[0]].sub(table[SYSTEMS[1]]).std(ddof=1)
    return f" Spread of the seed-to-seed difference: sd {spread:.4f}."


def report(frame, command):
    """Markdown: per-seed means, seed-averaged means and the paired test."""
    per_set = frame.groupby(["seed", "system", "dataset"])[["auc", "gmean", "bacc"]].mean()
    seed_zero = ("Seed 0 is the forest of `benchmarks.imbalance_peers` (its CSV)."
                 if 0 in frame["seed"].values else
                 "Every forest was grown by this run (no seed 0: the benchmark's forests have "
                 f"{PEERS_TREES} trees).")
    out = ["# The default against randomForestSRC over forest seeds (issue 10)", "",
           f"`{command}`; the protocol is in the script's docstring. {seed_zero}", ""]
    for metric, label in peers.METRICS.items():
        table = per_set[metric].groupby(["seed", "system"]).mean().unstack("system")[SYSTEMS]
        averaged = per_set[metric].groupby(["system", "dataset"]).mean().unstack("system")
        diff = averaged[SYSTEMS[0]] - averaged[SYSTEMS[1]]
        out += [f"## {label}", "", "| seed | " + " | ".join(SYSTEMS) + " | difference |",
                "|---|---|---|---|"]
        out += [f"| {seed} | {row[SYSTEMS[0]]:.4f} | {row[SYSTEMS[1]]:.4f} | "
                f"{row[SYSTEMS[0]] - row[SYSTEMS[1]]:+.4f} |" for seed, row in table.iterrows()]
        out += [f"| mean over seeds | {averaged[SYSTEMS[0]].mean():.4f} | "
                f"{averaged[SYSTEMS[1]].mean():.4f} | {diff.mean():+.4f} |", "",
                f"Seed-averaged per-set scores, {len(diff)} data sets: the default ahead on "
                f"{(diff > 0).sum()}, tied on {(diff == 0).sum()}, behind on {(diff < 0).sum()}; "
                f"median difference {diff.median():+.4f}; Wilcoxon signed-rank p = "
                f"{stats.paired_test(averaged[SYSTEMS[0]], averaged[SYSTEMS[1]]).pvalue:.2g}."
                + seed_spread(table), ""]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.forest_seeds",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=2, help="extra forest seeds (1..N)")
    ap.add_argument("--trees", type=int, default=250)
    ap.add_argument("--jobs", type=int, default=1, help="data sets run in parallel")
    ap.add_argument("--rfsrc-lib", default=systems.RFSRC_LIB, help=systems.RFSRC_LIB_HELP)
    ap.add_argument("--peers-csv", default=os.path.join(RESULTS, "imbalance_peers.csv"))
    ap.add_argument("--out-dir", default=RESULTS)
    args = ap.parse_args(argv)
    missing = systems.rfsrc_available(args.rfsrc_lib)
    if missing:
        raise SystemExit(f"needs randomForestSRC: {missing}")
    registry = data.keel_registry(500)
    names = [n for n, v in registry.items() if v.kind == "binary"]
    seeds = list(range(1, args.seeds + 1))
    jobs = Parallel(n_jobs=args.jobs)(
        delayed(seed_rows)(n, registry[n].load, seeds, args.trees, args.rfsrc_lib)
        for n in names)
    extra = pd.DataFrame([row for rows in jobs for row in rows])
    frame = extra
    stem = "forest_seeds" if args.trees == PEERS_TREES else f"forest_seeds_{args.trees}"
    if args.trees == PEERS_TREES:
        first = pd.read_csv(args.peers_csv)
        first = first[first["system"].isin(SYSTEMS) & first["dataset"].isin(names)].assign(seed=0)
        frame = pd.concat([first[extra.columns], extra], ignore_index=True)
    meta = run_metadata(STUDY, argv)
    write_results(extra, os.path.join(args.out_dir, stem + ".csv"), meta)
    command = meta["command"]
    with open(os.path.join(args.out_dir, stem + ".md"), "w", encoding="utf-8") as f:
        f.write(report(frame, command) + "\n")
    print(f"wrote {args.out_dir}/{stem}.md, .csv, .json")


if __name__ == "__main__":
    main()
