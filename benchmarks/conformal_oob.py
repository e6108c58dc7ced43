"""Per-class coverage of Mondrian conformal sets from out-of-bag scores (issue 41).

``aucforest.conformal.MondrianConformalClassifier`` calibrates on the forest's
out-of-bag scores, which are not exactly exchangeable with a test case's
score from all trees, so its per-class guarantee is measured here on held-out
data. Every system sees the same folds (shuffled stratified 5-fold, seed 0,
``harness.folds.stratified_splits``: those of ``benchmarks.calibration_oob``
and ``benchmarks.decisions_oob``) and grows --trees (100) trees, n_jobs=1:

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
  (``aucforest.conformal.mondrian_p_values``, smoothed);
* ``mapie-split``: MAPIE's ``SplitConformalClassifier`` (LAC score 1 - p_y,
  ``prefit=True``) around the af-split forest, conformalized on the same 25%.
  Its guarantee is marginal (over all classes): MAPIE 1.6 has no
  label-conditional (Mondrian) classifier; its
  ``ConditionalSplitConformalClassifier`` conditions on groups defined by a
  feature map of x, which cannot hold the unknown label y. Its jackknife+ /
  cross-conformal classifiers refit and are left out.

The aucforest and crepes sets are ``{k : p_k > alpha}`` (crepes' own
``predict_set`` keeps ``p >= alpha``; the same except on ties of probability 0
when smoothed); MAPIE's are its ``predict_set`` at confidence 1 - alpha.
Per alpha in (0.1, 0.05), per set and system: the coverage of each class on
its held-out cases (pooled over the 5 test folds: each case once), the mean
set size and the share of empty sets. A class is flagged when its pooled
misses exceed ``binom.ppf(0.99, n, alpha)`` over its n test cases (a
one-sided binomial test at 1% of "miss rate <= alpha"; approximate, as the
cases of one fold share a calibration; about 1% of the classes of a method
that meets its guarantee are flagged by chance).

Data (no download), ``--suite``:

* ``real``: the 11 imbalanced sets of ``harness.data.decisions_registry``
  (KEEL yeast6, yeast4, ecoli3, glass2, vehicle0, pima; KEEL contraceptive,
  vehicle, segment made imbalanced; R's MASS::fgl, modeldata::hpc_data);
* ``bundled``: scikit-learn's breast cancer with 36 malignant cases
  (``harness.data.breast_cancer_imb``), wine with class 2 at 70% and digits
  with class k kept at 0.7**k (down to 7 cases; ``harness.data.digits_imb``),
  and three make_classification sets: binary with 5% minority, three classes
  (80/15/5%) with 10% missing cells (``harness.data.imbalanced_three_class``)
  and four classes (70/20/7/3%).

From the repository root:

    python -m benchmarks.conformal_oob run benchmarks/results/conformal_oob.csv
    python -m benchmarks.conformal_oob report benchmarks/results/conformal_oob.csv

``run`` writes the CSV (one row per suite, set, fold, system, alpha and
class), its .json metadata and the markdown report beside them (.md);
``report`` writes the .md again from the CSV.
"""
import argparse
import sys
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
from .harness.report import (markdown_table, read_results, run_metadata, write_report,
                             write_results)

STUDY = "conformal_oob"
ALPHAS = (0.1, 0.05)
SYSTEMS = ("af-oob", "af-oob-unsmoothed", "crepes-af-oob", "crepes-af-oob-marginal",
           "crepes-rf-oob", "af-split", "mapie-split")


def _wine():
    X, y = load_wine(return_X_y=True)
    return data.keep_fractions(X, y, {0: 1.0, 1: 1.0, 2: 0.7}, np.random.default_rng(data.SEED))


def bundled_registry():
    """The six sets of the first run: scikit-learn's bundled sets and generated ones."""
    generated = "make_classification"
    return {
        "breast_cancer_imb": data.Dataset("binary", "sklearn", data.breast_cancer_imb),
        "wine_imb": data.Dataset("multiclass", "sklearn", _wine),
        "digits_imb": data.Dataset("multiclass", "sklearn", data.digits_imb),
        "gen-binary-5%": data.Dataset("binary", generated, lambda: make_classification(
            1500, 10, n_informative=4, n_redundant=2, weights=[0.95], flip_y=0.02,
            class_sep=0.8, random_state=1)),
        "gen-3class-nan": data.Dataset("multiclass", generated,
                                       lambda: data.imbalanced_three_class(1500, 10, seed=2)),
        "gen-4class": data.Dataset("multiclass", generated, lambda: make_classification(
            1500, 10, n_informative=5, n_redundant=2, n_classes=4, weights=[0.7, 0.2, 0.07],
            n_clusters_per_class=1, flip_y=0.02, random_state=3)),
    }


SUITES = {"real": data.decisions_registry, "bundled": bundled_registry}


def class_rows(name, fold, system, y_test, classes, sets_by_alpha, fit_seconds):
    """One row per alpha and class: test cases, covered, set sizes, empty sets.
    ``sets_by_alpha``: alpha -> boolean (n_test, n_classes) prediction sets."""
    rows = []
    codes = np.searchsorted(classes, y_test)
    for alpha in ALPHAS:
        sets = sets_by_alpha[alpha]
        covered = sets[np.arange(codes.size), codes]
        sizes = sets.sum(axis=1)
        for k, label in enumerate(classes):
            of_k = codes == k
            rows.append(dict(dataset=name, fold=fold, system=system, alpha=alpha,
                             label=label, n=int(of_k.sum()), covered=int(covered[of_k].sum()),
                             size_sum=int(sizes[of_k].sum()),
                             n_empty=int((sizes[of_k] == 0).sum()), fit_seconds=fit_seconds))
    return rows


def from_p_values(p_values):
    """alpha -> the sets {k : p_k > alpha}."""
    return {alpha: p_values > alpha for alpha in ALPHAS}


def run_fold(name, fold, X_train, y_train, X_test, y_test, trees, crepes, mapie):
    """Rows of every system on one fold, and max |p difference| of ours and crepes'
    (NaN without crepes, whose systems are then skipped, as MAPIE's without it)."""
    seed = folds.fold_seed(fold)
    rows = []
    start = time.process_time()
    ours = MondrianConformalClassifier(
        AUCForestClassifier(trees, n_jobs=1, random_state=seed), random_state=seed)
    ours.fit(X_train, y_train)
    seconds = time.process_time() - start
    classes = ours.classes_
    rows += class_rows(name, fold, "af-oob", y_test, classes,
                       from_p_values(ours.p_values(X_test)), seconds)
    unsmoothed = ours.set_params(smoothing=False).p_values(X_test)
    rows += class_rows(name, fold, "af-oob-unsmoothed", y_test, classes,
                       from_p_values(unsmoothed), seconds)

    difference = np.nan
    if crepes is not None:
        # crepes around the very forest we fitted (its fit is ours: no refit)
        for system, class_cond in (("crepes-af-oob", True), ("crepes-af-oob-marginal", False)):
            wrapped = crepes.WrapClassifier(ours.estimator_)
            wrapped.calibrate(X_train, y_train, oob=True, class_cond=class_cond, seed=seed)
            rows += class_rows(name, fold, system, y_test, classes,
                               from_p_values(wrapped.predict_p(X_test, seed=seed)), seconds)
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
                           from_p_values(wrapped.predict_p(X_test, seed=seed)), seconds)

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
                       from_p_values(mondrian_p_values(calibration, test_scores, uniforms)),
                       seconds)

    if mapie is not None:
        start = time.process_time()
        conformal = mapie.SplitConformalClassifier(
            split_forest, confidence_level=[1 - a for a in ALPHAS], conformity_score="lac",
            prefit=True, random_state=seed)
        conformal.conformalize(X_train[calibration_rows], y_train[calibration_rows])
        _, sets = conformal.predict_set(X_test)
        rows += class_rows(name, fold, "mapie-split", y_test, classes,
                           {a: sets[:, :, i] for i, a in enumerate(ALPHAS)},
                           seconds + time.process_time() - start)
    return rows, difference


def run(path_csv, suites, trees, n_splits, argv=None, only=()):
    crepes = require("crepes", "crepes-* systems") if installed("crepes") else None
    mapie = require("mapie.classification", "mapie-split") if installed("mapie") else None
    for peer, module in (("crepes", crepes), ("mapie", mapie)):
        if module is None:
            print(f"{peer} is not installed: its systems are skipped "
                  "(pip install -r benchmarks/requirements-peers.txt)", flush=True)
    rows, differences = [], []
    start = time.perf_counter()
    for suite in suites:
        for name, entry in SUITES[suite]().items():
            if only and name not in only:
                continue
            X, y = entry.load()
            counts = np.unique(y, return_counts=True)[1]
            for fold, (train, test) in enumerate(folds.stratified_splits(y, n_splits)):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # e.g. a case in every sample
                    fold_rows, difference = run_fold(name, fold, X[train], y[train], X[test],
                                                     y[test], trees, crepes, mapie)
                rows += [dict(suite=suite, kind=entry.kind, **row) for row in fold_rows]
                differences.append(difference)
            print(f"{suite}/{name}: {X.shape[0]} rows, class counts {counts.tolist()}, "
                  f"{(time.perf_counter() - start) / 60:.1f} min", file=sys.stderr, flush=True)
    meta = run_metadata(STUDY, argv, distributions=("crepes", "mapie"), trees=trees,
                        n_splits=n_splits, seed=data.SEED, suites=list(suites),
                        minutes=round((time.perf_counter() - start) / 60, 1),
                        max_p_difference_crepes=None if crepes is None else max(differences))
    frame = pd.DataFrame(rows)
    write_results(frame, path_csv, meta)
    return frame, meta


def flagged(misses, n, alpha):
    """Misses above the binomial 99% quantile of n cases at miss rate alpha."""
    return misses > stats.binom.ppf(0.99, n, alpha)


def per_class(frame):
    """Coverage of each (alpha, suite, data set, system, class) pooled over the folds."""
    pooled = frame.groupby(["alpha", "suite", "dataset", "system", "label"], sort=False)[
        ["n", "covered", "size_sum", "n_empty"]].sum().reset_index()
    pooled["coverage"] = pooled.covered / pooled.n
    pooled["flag"] = flagged(pooled.n - pooled.covered, pooled.n, pooled.alpha)
    return pooled


def report(frame, meta):
    versions = meta.get("versions", {})
    lines = [f"Run: `{meta.get('command', '')}` (commit {meta.get('git_commit', '?')}, "
             f"{meta.get('date', '?')}, {meta.get('minutes', '?')} min on a shared 2-core "
             f"machine; {meta.get('trees', '?')} trees, n_jobs=1, stratified "
             f"{meta.get('n_splits', '?')}-fold, seed {meta.get('seed', '?')}; crepes "
             f"{versions.get('crepes')}, MAPIE {versions.get('mapie')}). Rows per set, fold, "
             "system, alpha and class: `conformal_oob.csv` (+ `.json`).",
             "",
             "Max |p difference| between aucforest's and crepes' unsmoothed p-values on the "
             f"same forest, over all folds: {meta.get('max_p_difference_crepes')}",
             ""]
    pooled = per_class(frame)
    for suite in dict.fromkeys(frame.suite):
        n_sets = frame[frame.suite == suite].dataset.nunique()
        lines += [f"## Suite {suite} ({n_sets} sets)", ""]
        for alpha in ALPHAS:
            subset = pooled[(pooled.alpha == alpha) & (pooled.suite == suite)]
            summary = []
            for system, group in subset.groupby("system", sort=False):
                smallest = group.loc[group.groupby("dataset", sort=False).n.idxmin()]
                n = group.n.sum()
                summary.append([system, len(group), int((group.coverage < 1 - alpha).sum()),
                                int(group.flag.sum()), f"{smallest.coverage.mean():.3f}",
                                f"{smallest.coverage.min():.3f}", int(smallest.flag.sum()),
                                f"{group.size_sum.sum() / n:.2f}"])
            lines += [f"### alpha = {alpha}: guarantee {1 - alpha:.2f} in each class", "",
                      f"Over the {n_sets} sets: classes, classes below 1 - alpha (sampling "
                      "noise included), classes flagged (binomial test at 1%); the smallest "
                      "class of each set (its mean and lowest coverage over the sets, flagged "
                      "sets); mean set size over all test cases:", "",
                      markdown_table(["system", "classes", "below 1 - alpha", "flagged",
                                      "smallest class: mean cov.", "lowest", "flagged",
                                      "set size"], summary), ""]
            table = []
            for (name, system), group in subset.groupby(["dataset", "system"], sort=False):
                smallest = group.loc[group.n.idxmin()]
                lowest = group.loc[group.coverage.idxmin()]
                n = group.n.sum()
                table.append([name, system, f"{group.covered.sum() / n:.3f}",
                              f"{smallest.coverage:.3f} (n={smallest.n})"
                              f"{' x' if smallest.flag else ''}",
                              f"{lowest.coverage:.3f}{' x' if group.flag.any() else ''}",
                              f"{group.size_sum.sum() / n:.2f}",
                              f"{group.n_empty.sum() / n:.3f}"])
            lines += ["Per set: coverage overall / of the smallest class / of the lowest class "
                      "(x: flagged); size: mean set size; empty: share of empty sets", "",
                      markdown_table(["data set", "system", "overall", "smallest class",
                                      "lowest class", "size", "empty"], table), ""]
    times = frame.drop_duplicates(["dataset", "fold", "system"]).groupby(
        ["system"], sort=False).fit_seconds.mean()
    lines += ["Mean CPU seconds per fold (fit and calibration; the crepes-af rows reuse the "
              "af-oob forest, mapie-split the af-split forest and adds its conformalization)",
              "",
              markdown_table(["system", "seconds"], [[s, f"{t:.2f}"] for s, t in times.items()])]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("run", "report"))
    parser.add_argument("path_csv")
    parser.add_argument("--suite", default="real,bundled",
                        help="comma-separated suites among real, bundled")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--sets", default="", help="only these data sets (comma-separated)")
    args = parser.parse_args(argv)
    suites = [s for s in args.suite.split(",") if s]
    if set(suites) - set(SUITES):
        parser.error(f"unknown suite {sorted(set(suites) - set(SUITES))}")
    if args.action == "run":
        frame, meta = run(args.path_csv, suites, args.trees, args.splits, argv,
                          only=[s for s in args.sets.split(",") if s])
    else:
        frame, meta = read_results(args.path_csv)
    path_md = args.path_csv.rsplit(".", 1)[0] + ".md"
    write_report(path_md, "Per-class coverage of Mondrian conformal sets from out-of-bag "
                 "scores (issue 41)", report(frame, meta))
    print(f"wrote {path_md}", file=sys.stderr)


if __name__ == "__main__":
    main()
