"""Calibration from out-of-bag predictions against scikit-learn's 5-fold wrapper (issue 41).

On each data set, the same shuffled stratified 5-fold splits (seed 0,
``harness.folds.stratified_splits``) for every method, and two base forests
(``AUCForestClassifier(100, n_jobs=1)``, the default and one on a balanced
bootstrap; fold f grows from random_state ``fold_seed(f)``):

* ``raw``: the forest's own probabilities and its RFQ rule;
* ``oob-isotonic``, ``oob-sigmoid``, ``oob-venn_abers``:
  `aucforest.calibration.OOBCalibratedClassifier` (one forest fit with
  ``oob_score=True``, maps on the prior-corrected OOB probabilities, RFQ kept
  by ``predict``). The three share one forest fit: its time is added to the
  time of each method's maps (``OOBCalibratedClassifier.fit`` is exactly that
  fit followed by ``calibrate``);
* ``cv5-isotonic``, ``cv5-sigmoid``: scikit-learn's
  ``CalibratedClassifierCV(forest, method, cv=5)`` (five forest fits, argmax
  rule).

Metrics on each test fold: Brier score (mean over cases of
sum_k (p_k - y_k)^2, twice scikit-learn's binary ``brier_score_loss``), log
loss (scikit-learn's, which clips probabilities of 0 at machine epsilon),
class-wise expected calibration error (10 equal-width bins per class, averaged
over the classes), G-mean of ``predict`` (each method's own rule),
``gmean_rfq`` (the RFQ rule with the training-fold class frequencies applied to
each method's probabilities, ``harness.systems.rfq_predict``: what the
wrapper's probabilities would give under RFQ), and CPU seconds of the fit
(``fit_cpu``; n_jobs=1 throughout) and wall seconds (``fit_s``). Paired
Wilcoxon signed-rank tests over the (data set, fold) pairs
(``harness.stats.paired_test``).

Data (no network), ``--suite``:

* ``real``: 11 imbalanced sets (``harness.data.decisions_registry``): KEEL
  yeast6, yeast4, ecoli3, glass2, vehicle0, pima (binary); KEEL contraceptive,
  vehicle and segment made imbalanced (geometric, rho 0.05), R's MASS::fgl and
  modeldata::hpc_data (multiclass);
* ``bundled``: the five sets of the first run: scikit-learn's breast cancer,
  wine and digits made imbalanced, make_classification binary (7% positives)
  and three classes (80/15/5%, 10% NaN cells).

``--repeats R`` repeats the 5-fold split R times (repeat r shuffles with seed
``SEED + r``; fold f of repeat r grows from ``fold_seed(f, 5 r)``). ``--methods``
keeps some of the methods (``raw,oob`` leaves out the 5-fold wrapper). The
report then also pairs the three OOB maps with each other (issue 58: which map
is ``OOBCalibratedClassifier``'s default), per data set and over all (suite,
forest, set, repeat, fold) pairs.

From the repository root:

    python -m benchmarks.calibration_oob run benchmarks/results/calibration_oob.csv
    python -m benchmarks.calibration_oob report benchmarks/results/calibration_oob.csv
    python -m benchmarks.calibration_oob run benchmarks/results/calibration_oob_default.csv \
        --methods raw,oob --repeats 2

``run`` writes the CSV (one row per suite, data set, base forest, fold and
method), its .json metadata and the markdown report beside them (.md);
``report`` writes the .md again from the CSV.
"""
import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.metrics import log_loss

from aucforest import AUCForestClassifier
from aucforest.calibration import OOBCalibratedClassifier
from aucforest.metrics import gmean_score

from .harness import data, folds
from .harness.report import (markdown_table, read_results, run_metadata, write_report,
                             write_results)
from .harness.stats import paired_test, spread
from .harness.systems import rfq_predict

STUDY = "calibration_oob"
OOB_METHODS = ("isotonic", "sigmoid", "venn_abers")
CV_METHODS = ("isotonic", "sigmoid")
METHODS = ("raw",) + tuple(f"oob-{m}" for m in OOB_METHODS) + tuple(f"cv5-{m}"
                                                                    for m in CV_METHODS)
METRICS = ("brier", "log_loss", "ece", "gmean", "gmean_rfq", "fit_cpu")
HIGHER_IS_BETTER = {"gmean", "gmean_rfq"}
PAIRS = (("oob-isotonic", "cv5-isotonic"), ("oob-sigmoid", "cv5-sigmoid"),
         ("oob-venn_abers", "cv5-isotonic"), ("oob-isotonic", "raw"), ("oob-sigmoid", "raw"),
         ("oob-venn_abers", "raw"))
# the OOB maps against each other: the choice of the default map (issue 58)
MAP_PAIRS = (("oob-venn_abers", "oob-isotonic"), ("oob-sigmoid", "oob-isotonic"),
             ("oob-venn_abers", "oob-sigmoid"))
MAP_METRICS = ("log_loss", "brier", "gmean")
FORESTS = ("default", "balanced_bootstrap")


def bundled_registry():
    """The five sets of the first run (scikit-learn's bundled sets, generated)."""
    return {
        "breast_cancer-10%": data.Dataset("binary", "sklearn", data.breast_cancer_imb),
        "wine-imb": data.Dataset("multiclass", "sklearn", data.wine_imb),
        "digits-imb": data.Dataset("multiclass", "sklearn", data.digits_imb),
        "gen-binary-7%": data.Dataset("binary", "make_classification", lambda: make_classification(
            2000, n_features=10, n_informative=4, weights=[0.93], flip_y=0.02, class_sep=0.8,
            random_state=0)),
        "gen-3class-NaN": data.Dataset("multiclass", "make_classification",
                                       lambda: data.imbalanced_three_class(1500, 10, seed=0)),
    }


SUITES = {"real": data.decisions_registry, "bundled": bundled_registry}


def base_forest(name, trees, seed):
    return AUCForestClassifier(trees, balanced_bootstrap=name == "balanced_bootstrap",
                               n_jobs=1, random_state=seed)


def expected_calibration_error(onehot, proba, n_bins=10):
    """Class-wise ECE: per class, sum over equal-width bins of
    (share of cases) x |mean p_k - share of class k|; the mean over classes."""
    errors = []
    for k in range(proba.shape[1]):
        bins = np.minimum((proba[:, k] * n_bins).astype(int), n_bins - 1)
        gap = np.abs(np.bincount(bins, proba[:, k], n_bins)
                     - np.bincount(bins, onehot[:, k], n_bins))
        errors.append(gap.sum() / proba.shape[0])
    return float(np.mean(errors))


def scores(proba, predicted, y_train, y_test, classes):
    """The metrics of one method on one test fold (fit times added by the caller)."""
    onehot = (y_test[:, None] == classes[None, :]).astype(float)
    return {"brier": float(np.mean(np.sum((proba - onehot) ** 2, axis=1))),
            "log_loss": float(log_loss(y_test, proba, labels=classes)),
            "ece": expected_calibration_error(onehot, proba),
            "gmean": float(gmean_score(y_test, predicted, labels=classes)),
            "gmean_rfq": float(gmean_score(y_test, rfq_predict(proba, classes, y_train),
                                           labels=classes))}


def timed_fit(model, X, y):
    wall, cpu = time.perf_counter(), time.process_time()
    model.fit(X, y)
    return model, time.perf_counter() - wall, time.process_time() - cpu


def run_fold(forest, X_train, y_train, X_test, y_test, classes, with_cv=True):
    """method -> metrics of every method on one fold (the 5-fold wrapper only
    ``with_cv``)."""
    out = {}
    raw, wall, cpu = timed_fit(clone(forest), X_train, y_train)
    out["raw"] = dict(scores(raw.predict_proba(X_test), raw.predict(X_test), y_train, y_test,
                             classes), fit_s=wall, fit_cpu=cpu)

    oob_forest, forest_wall, forest_cpu = timed_fit(clone(forest).set_params(oob_score=True),
                                                    X_train, y_train)
    for method in OOB_METHODS:
        model = OOBCalibratedClassifier(oob_forest, method=method)
        wall, cpu = time.perf_counter(), time.process_time()
        model.calibrate(y_train)  # the maps on the fitted forest's OOB probabilities
        wall, cpu = time.perf_counter() - wall + forest_wall, time.process_time() - cpu + forest_cpu
        out[f"oob-{method}"] = dict(scores(model.predict_proba(X_test), model.predict(X_test),
                                           y_train, y_test, classes), fit_s=wall, fit_cpu=cpu)

    for method in CV_METHODS if with_cv else ():
        model, wall, cpu = timed_fit(CalibratedClassifierCV(clone(forest), method=method, cv=5),
                                     X_train, y_train)
        out[f"cv5-{method}"] = dict(scores(model.predict_proba(X_test), model.predict(X_test),
                                           y_train, y_test, classes), fit_s=wall, fit_cpu=cpu)
    return out


def run(path_csv, suites, forests, trees, n_splits, argv=None, only=(), repeats=1,
        with_cv=True):
    rows = []
    start = time.perf_counter()
    for suite in suites:
        for name, entry in SUITES[suite]().items():
            if only and name not in only:
                continue
            X, y = entry.load()
            classes = np.unique(y)
            for repeat in range(repeats):
                splits = folds.stratified_splits(y, n_splits, seed=data.SEED + repeat)
                for forest_name in forests:
                    for fold, (train, test) in enumerate(splits):
                        forest = base_forest(forest_name, trees,
                                             folds.fold_seed(fold, n_splits * repeat))
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", UserWarning)
                            found = run_fold(forest, X[train], y[train], X[test], y[test],
                                             classes, with_cv)
                        for method, figures in found.items():
                            # fold: one index over the repeats, so (set, fold) pairs the rows
                            rows.append(dict(suite=suite, dataset=name, kind=entry.kind,
                                             forest=forest_name, repeat=repeat,
                                             fold=n_splits * repeat + fold, method=method,
                                             **figures))
            print(f"{suite}/{name}: {len(y)} rows, {classes.size} classes, "
                  f"{(time.perf_counter() - start) / 60:.1f} min", file=sys.stderr, flush=True)
    meta = run_metadata(STUDY, argv, trees=trees, n_splits=n_splits, seed=data.SEED,
                        repeats=repeats, with_cv=with_cv,
                        suites=list(suites), forests=list(forests),
                        minutes=round((time.perf_counter() - start) / 60, 1))
    frame = pd.DataFrame(rows)
    write_results(frame, path_csv, meta)
    return frame, meta


def _fmt(value, metric):
    return f"{value:.2f}" if metric.startswith("fit") else f"{value:.3f}"


def present(part, methods=METHODS):
    """The methods of ``methods`` that the rows hold, in that order."""
    found = set(part.method)
    return [m for m in methods if m in found]


def summary_table(part):
    """Per method: mean ± sd over the data sets' fold means, for each metric."""
    per_set = part.groupby(["dataset", "method"], sort=False)[list(METRICS)].mean()
    lines = []
    for method in present(part):
        cells = []
        for metric in METRICS:
            mean, sd, _ = spread(per_set.xs(method, level="method")[metric])
            cells.append(f"{_fmt(mean, metric)} ± {_fmt(sd, metric)}")
        lines.append([method] + cells)
    return markdown_table(["method"] + list(METRICS), lines)


def per_set_table(part, metric):
    """data set x method: the mean over the folds of one metric."""
    table = part.pivot_table(index="dataset", columns="method", values=metric, sort=False)
    kinds = part.drop_duplicates("dataset").set_index("dataset").kind
    methods = present(part)
    return markdown_table(["data set", "kind"] + methods,
                          [[name, kinds[name]] + [_fmt(table.loc[name, m], metric)
                                                  for m in methods] for name in table.index])


def _pair_line(label, va, vb, metric):
    result = paired_test(va, vb)
    better = result.wins if metric in HIGHER_IS_BETTER else result.losses
    return [label, metric, _fmt(va.mean(), metric), _fmt(vb.mean(), metric),
            f"{better}/{result.n}", f"{result.pvalue:.2g}"]


PAIR_HEADER = ["A vs B", "metric", "mean A", "mean B", "A better in", "Wilcoxon p"]


def paired_table(part, pairs=PAIRS, metrics=METRICS, keys=("dataset", "fold")):
    """A vs B over the ``keys`` pairs: means, A better in, Wilcoxon p."""
    keyed = part.set_index([*keys, "method"])
    methods = set(part.method)
    lines = [_pair_line(f"{a} vs {b}", keyed.xs(a, level="method")[metric],
                        keyed.xs(b, level="method")[metric], metric)
             for a, b in pairs if a in methods and b in methods for metric in metrics]
    return markdown_table(PAIR_HEADER, lines)


def map_choice_per_set(frame):
    """Issue 58, per data set: the OOB maps paired over (suite, forest, fold)."""
    keyed = frame.set_index(["dataset", "suite", "forest", "fold", "method"])
    lines = []
    for name in dict.fromkeys(frame.dataset):
        one = keyed.xs(name, level="dataset")
        for a, b in MAP_PAIRS:
            for metric in MAP_METRICS:
                lines.append([name] + _pair_line(f"{a} vs {b}", one.xs(a, level="method")[metric],
                                                 one.xs(b, level="method")[metric], metric))
    return markdown_table(["data set"] + PAIR_HEADER, lines)


def time_ratio_table(part):
    """CPU fit time of each OOB method over the 5-fold wrapper's, per (set, fold)."""
    keyed = part.set_index(["dataset", "fold", "method"]).fit_cpu
    methods = set(part.method)
    lines = []
    for a, b in (("oob-isotonic", "cv5-isotonic"), ("oob-sigmoid", "cv5-sigmoid"),
                 ("oob-venn_abers", "cv5-isotonic"), ("oob-isotonic", "raw"),
                 ("oob-venn_abers", "oob-isotonic")):
        if a not in methods or b not in methods:
            continue
        ratio = keyed.xs(a, level="method") / keyed.xs(b, level="method")
        lines.append([f"{a} / {b}", f"{ratio.median():.3f}",
                      f"{ratio.quantile(0.1):.3f}-{ratio.quantile(0.9):.3f}",
                      f"{keyed.xs(a, level='method').sum() / keyed.xs(b, level='method').sum():.3f}"])
    return markdown_table(["ratio", "median over (set, fold)", "10%-90%", "ratio of totals"],
                          lines)


def report(frame, meta, csv_name="calibration_oob.csv"):
    parts = [f"Run: `{meta.get('command', '')}` (commit {meta.get('git_commit', '?')}, "
             f"{meta.get('date', '?')}, {meta.get('minutes', '?')} min on a shared 2-core "
             f"machine; {meta.get('trees', '?')} trees, n_jobs=1, stratified "
             f"{meta.get('n_splits', '?')}-fold x {meta.get('repeats', 1)} repeat(s), seed "
             f"{meta.get('seed', '?')}, the same folds for every method). Rows per fold and "
             f"method: `{csv_name}` (+ `.json`).", ""]
    if "repeat" not in frame:
        frame = frame.assign(repeat=0)
    if {"oob-isotonic", "oob-sigmoid", "oob-venn_abers"} <= set(frame.method):
        parts += ["## The OOB maps against each other (issue 58)", "",
                  "Over all (suite, base forest, data set, fold) pairs:", "",
                  paired_table(frame, MAP_PAIRS, MAP_METRICS,
                               keys=("suite", "forest", "dataset", "fold")), "",
                  "Per data set, over its (base forest, fold) pairs:", "",
                  map_choice_per_set(frame), ""]
    for suite in dict.fromkeys(frame.suite):
        for forest in dict.fromkeys(frame.forest):
            part = frame[(frame.suite == suite) & (frame.forest == forest)]
            n_sets = part.dataset.nunique()
            parts += [f"## Suite {suite} ({n_sets} sets), base forest {forest}", "",
                      "Mean ± sd over the data sets (each set: the mean of its folds); "
                      "brier, log_loss, ece lower is better; fit_cpu in CPU seconds:", "",
                      summary_table(part), "",
                      "Brier score per data set (mean over folds):", "",
                      per_set_table(part, "brier"), "",
                      "Log loss per data set (mean over folds):", "",
                      per_set_table(part, "log_loss"), "",
                      "Class-wise ECE per data set:", "", per_set_table(part, "ece"), "",
                      "G-mean of `predict` per data set:", "", per_set_table(part, "gmean"), "",
                      "Paired over (data set, fold):", "",
                      paired_table(part, PAIRS + MAP_PAIRS), "",
                      "CPU fit time ratios:", "", time_ratio_table(part), ""]
    return "\n".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("run", "report"))
    parser.add_argument("path_csv")
    parser.add_argument("--suite", default="real,bundled",
                        help="comma-separated suites among real, bundled")
    parser.add_argument("--forests", default=",".join(FORESTS))
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--sets", default="", help="only these data sets (comma-separated)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="repeats of the k-fold split (repeat r: seed SEED + r)")
    parser.add_argument("--methods", default="raw,oob,cv5",
                        help="comma-separated method groups among raw, oob, cv5 (raw and oob "
                             "always run: they share the forest fit)")
    args = parser.parse_args(argv)
    suites = [s for s in args.suite.split(",") if s]
    forests = [f for f in args.forests.split(",") if f]
    bad = sorted(set(suites) - set(SUITES)) + sorted(set(forests) - set(FORESTS))
    if bad:
        parser.error(f"unknown suite or forest {bad}")
    if args.action == "run":
        frame, meta = run(args.path_csv, suites, forests, args.trees, args.splits, argv,
                          only=[s for s in args.sets.split(",") if s], repeats=args.repeats,
                          with_cv="cv5" in args.methods.split(","))
    else:
        frame, meta = read_results(args.path_csv)
    text = report(frame, meta, args.path_csv.replace("\\", "/").rsplit("/", 1)[-1])
    path_md = args.path_csv.rsplit(".", 1)[0] + ".md"
    title = ("Calibration from out-of-bag predictions (issue 41)" if meta.get("with_cv", True)
             else "Which calibration map by default (issue 58)")
    write_report(path_md, title, text)
    print(f"wrote {path_md}", file=sys.stderr)


if __name__ == "__main__":
    main()
