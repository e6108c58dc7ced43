"""Cost-sensitive decisions chosen on out-of-bag predictions, scored on held-out folds (issue 41).

On each data set, the same shuffled stratified 5-fold splits (seed 0,
``harness.folds.stratified_splits``: those of ``benchmarks.calibration_oob``
and ``benchmarks.conformal_oob``), one ``AUCForestClassifier(100, n_jobs=1,
oob_score=True)`` per fold (random_state ``fold_seed(f)``), and these rules
on its held-out probabilities:

* ``rfq``: the forest's default rule;
* ``argmax``: the most probable class;
* ``cost``: ``decision=C``, the class of least expected cost under C on the
  forest's probabilities (Elkan 2001);
* ``cost-calibrated``: the same rule on the probabilities of
  `aucforest.calibration.OOBCalibratedClassifier` (isotonic, on the same
  forest's out-of-bag predictions);
* ``tuned-gmean``: `aucforest.decisions.tune_decision` for the G-mean (a
  threshold for two classes, class weights on the RFQ scale for K);
* ``tuned-cost``: `tune_decision` for the expected cost under C.

Two cost matrices, C[j, k] the cost of predicting class k when the truth is j,
with pi_j the class frequencies of the training fold:

* ``balanced``: C[j, k] = 1 / pi_j off the diagonal. Missing a case of class j
  costs 1 / pi_j, whatever is predicted instead; the mean cost over a test set
  with the training frequencies is sum_j (1 - recall_j), K (1 - balanced
  accuracy). Its least-cost rule is RFQ (argmax_k p_k / pi_k), so ``cost``
  equals ``rfq`` here (a check).
* ``missing10``: C[j, k] = 10 when class j is rarer than class k (pi_j < pi_k),
  else 1, off the diagonal: missing a case of a rarer class costs ten false
  alarms. For two classes a false negative costs 10, a false positive 1; the
  least-cost rule predicts the minority when its probability is >= 1/11.

Held-out metric of each rule: ``aucforest.decisions.expected_cost`` under each
matrix, G-mean and balanced accuracy. Paired Wilcoxon signed-rank tests over
the (data set, fold) pairs (``harness.stats.paired_test``). The tuner's
interval: for each fold and each tuned target (G-mean; expected cost under
each matrix) the --level (0.95) bootstrap interval of ``tune_decision``
(--bootstrap (500) replicates, random_state the fold seed) is checked against
the metric of the chosen rule on the held-out fold; the share of (set, fold)
intervals that cover it is compared with the nominal level (Clopper-Pearson
95% interval of the share).

Data: the 11 imbalanced sets of ``harness.data.decisions_registry`` (KEEL
yeast6, yeast4, ecoli3, glass2, vehicle0, pima; KEEL contraceptive, vehicle,
segment made imbalanced; R's MASS::fgl, modeldata::hpc_data), no download.

From the repository root:

    python -m benchmarks.decisions_oob run benchmarks/results/decisions_oob.csv
    python -m benchmarks.decisions_oob report benchmarks/results/decisions_oob.csv

``run`` writes the rules' rows (one per set, fold, matrix and rule) to the
CSV, the intervals to ``<name>_intervals.csv``, the .json metadata and the
markdown report (.md); ``report`` writes the .md again from the CSV files.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.metrics import balanced_accuracy_score

from aucforest import AUCForestClassifier
from aucforest.calibration import OOBCalibratedClassifier
from aucforest.decisions import expected_cost, tune_decision
from aucforest.metrics import gmean_score

from .harness import data, folds
from .harness.report import (markdown_table, read_results, run_metadata, write_report,
                             write_results)
from .harness.stats import paired_test, spread

STUDY = "decisions_oob"
MATRICES = ("balanced", "missing10")
RULES = ("rfq", "argmax", "cost", "cost-calibrated", "tuned-gmean", "tuned-cost")
PAIRS = (("tuned-cost", "cost"), ("tuned-cost", "rfq"), ("tuned-cost", "argmax"),
         ("tuned-cost", "tuned-gmean"), ("cost", "rfq"), ("cost", "argmax"),
         ("cost-calibrated", "cost"))


def cost_matrices(y_train, classes):
    """name -> C of the two stated matrices, from the training fold's frequencies."""
    prior = np.array([np.mean(y_train == c) for c in classes])
    balanced = np.repeat((1.0 / prior)[:, None], classes.size, axis=1)
    missing10 = np.where(prior[:, None] < prior[None, :], 10.0, 1.0)
    for matrix in (balanced, missing10):
        np.fill_diagonal(matrix, 0.0)
    return {"balanced": balanced, "missing10": missing10}


def run_fold(X_train, y_train, X_test, y_test, trees, seed, n_bootstrap, level):
    """(rule rows, interval rows) of one fold."""
    forest = AUCForestClassifier(trees, n_jobs=1, oob_score=True, random_state=seed)
    forest.fit(X_train, y_train)
    classes = forest.classes_
    matrices = cost_matrices(y_train, classes)

    def predict(decision):
        return forest.set_params(decision=decision).predict(X_test)

    predictions = {(None, "rfq"): predict("rfq"), (None, "argmax"): predict("argmax")}
    intervals = []

    def tuned(metric, cost=None):
        found = tune_decision(forest, metric, cost_matrix=cost, n_bootstrap=n_bootstrap,
                              confidence_level=level, random_state=seed)
        return found, predict(found.decision)

    found, predictions[(None, "tuned-gmean")] = tuned("gmean")
    held_out = gmean_score(y_test, predictions[(None, "tuned-gmean")], labels=classes)
    intervals.append(("gmean", found, held_out))
    for name, matrix in matrices.items():
        predictions[(name, "cost")] = predict(matrix)
        calibrated = OOBCalibratedClassifier(forest, method="isotonic")
        forest.set_params(decision=matrix)  # the rule the calibrated predict keeps
        calibrated.calibrate(y_train)
        predictions[(name, "cost-calibrated")] = calibrated.predict(X_test)
        found, predictions[(name, "tuned-cost")] = tuned("expected_cost", matrix)
        held_out = expected_cost(y_test, predictions[(name, "tuned-cost")], matrix,
                                 labels=classes)
        intervals.append((f"cost-{name}", found, held_out))

    rows = []
    for name, matrix in matrices.items():
        for rule in RULES:
            predicted = predictions.get((name, rule), predictions.get((None, rule)))
            rows.append(dict(matrix=name, rule=rule,
                             expected_cost=expected_cost(y_test, predicted, matrix,
                                                         labels=classes),
                             gmean=float(gmean_score(y_test, predicted, labels=classes)),
                             bacc=float(balanced_accuracy_score(y_test, predicted))))
    interval_rows = [dict(target=target, oob_score=found.score, low=found.confidence_interval[0],
                          high=found.confidence_interval[1], held_out=float(held_out),
                          covered=bool(found.confidence_interval[0] <= held_out
                                       <= found.confidence_interval[1]))
                     for target, found, held_out in intervals]
    return rows, interval_rows


def intervals_path(path_csv):
    path = Path(path_csv)
    return path.with_name(path.stem + "_intervals.csv")


def run(path_csv, trees, n_splits, n_bootstrap, level, argv=None, only=()):
    rows, interval_rows = [], []
    start = time.perf_counter()
    for name, entry in data.decisions_registry().items():
        if only and name not in only:
            continue
        X, y = entry.load()
        for fold, (train, test) in enumerate(folds.stratified_splits(y, n_splits)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                found, intervals = run_fold(X[train], y[train], X[test], y[test], trees,
                                            folds.fold_seed(fold), n_bootstrap, level)
            key = dict(dataset=name, kind=entry.kind, fold=fold)
            rows += [dict(key, **row) for row in found]
            interval_rows += [dict(key, **row) for row in intervals]
        print(f"{name}: {len(y)} rows, {np.unique(y).size} classes, "
              f"{(time.perf_counter() - start) / 60:.1f} min", file=sys.stderr, flush=True)
    meta = run_metadata(STUDY, argv, trees=trees, n_splits=n_splits, seed=data.SEED,
                        n_bootstrap=n_bootstrap, confidence_level=level,
                        minutes=round((time.perf_counter() - start) / 60, 1))
    frame, interval_frame = pd.DataFrame(rows), pd.DataFrame(interval_rows)
    write_results(frame, path_csv, meta)
    interval_frame.to_csv(intervals_path(path_csv), index=False)
    return frame, interval_frame, meta


def summary_table(part):
    """Per rule: expected cost, G-mean, balanced accuracy, mean ± sd over the sets'
    fold means, and the mean rank of the expected cost within a set (1 = least)."""
    per_set = part.groupby(["dataset", "rule"], sort=False)[["expected_cost", "gmean",
                                                            "bacc"]].mean()
    rank = per_set.expected_cost.unstack("rule")[list(RULES)].rank(axis=1).mean()
    lines = []
    for rule in RULES:
        values = per_set.xs(rule, level="rule")
        cells = ["{:.3f} ± {:.3f}".format(*spread(values[m])[:2])
                 for m in ("expected_cost", "gmean", "bacc")]
        lines.append([rule] + cells + [f"{rank[rule]:.2f}"])
    return markdown_table(["rule", "expected cost", "G-mean", "balanced accuracy",
                           "mean rank (cost)"], lines)


def per_set_table(part):
    table = part.pivot_table(index="dataset", columns="rule", values="expected_cost", sort=False)
    kinds = part.drop_duplicates("dataset").set_index("dataset").kind
    return markdown_table(["data set", "kind"] + list(RULES),
                          [[name, kinds[name]] + [f"{table.loc[name, r]:.3f}" for r in RULES]
                           for name in table.index])


def paired_table(part, metric="expected_cost", pairs=PAIRS):
    keyed = part.set_index(["dataset", "fold", "rule"])[metric]
    lines = []
    for a, b in pairs:
        va, vb = keyed.xs(a, level="rule"), keyed.xs(b, level="rule")
        result = paired_test(va, vb)
        better = result.wins if metric == "gmean" else result.losses
        lines.append([f"{a} vs {b}", f"{va.mean():.3f}", f"{vb.mean():.3f}",
                      f"{result.mean_diff:+.3f}", f"{better}/{result.ties}/{result.n}",
                      f"{result.pvalue:.2g}"])
    return markdown_table(["A vs B", "mean A", "mean B", "mean A - B",
                           "A better / tied / pairs", "Wilcoxon p"], lines)


def interval_table(intervals, level):
    lines = []
    for target, group in intervals.groupby("target", sort=False):
        for kind, part in [("all", group)] + list(group.groupby("kind", sort=False)):
            k, n = int(part.covered.sum()), len(part)
            ci = stats.binomtest(k, n).proportion_ci(0.95)
            below = int((part.held_out < part.low).sum())
            above = int((part.held_out > part.high).sum())
            lines.append([target, kind, f"{k}/{n}", f"{k / n:.3f}",
                          f"{ci.low:.3f}-{ci.high:.3f}", f"{below} / {above}",
                          f"{(part.high - part.low).mean():.3f}",
                          f"{(part.oob_score - part.held_out).mean():+.3f}"])
    return markdown_table(["target", "sets", "covered", "rate", "95% CI of the rate",
                           "held-out below / above", "mean width",
                           "mean OOB score - held-out"], lines) + (
        f"\n\nNominal level: {level}.")


def report(frame, intervals, meta):
    lines = [f"Run: `{meta.get('command', '')}` (commit {meta.get('git_commit', '?')}, "
             f"{meta.get('date', '?')}, {meta.get('minutes', '?')} min on a shared 2-core "
             f"machine; {meta.get('trees', '?')} trees, n_jobs=1, stratified "
             f"{meta.get('n_splits', '?')}-fold, seed {meta.get('seed', '?')}, "
             f"{meta.get('n_bootstrap', '?')} bootstrap replicates). Rows per set, fold, matrix "
             "and rule: `decisions_oob.csv` (+ `.json`); intervals per set, fold and target: "
             "`decisions_oob_intervals.csv`.", ""]
    n_sets = frame.dataset.nunique()
    for matrix in MATRICES:
        part = frame[frame.matrix == matrix]
        lines += [f"## Cost matrix {matrix}", "",
                  f"Mean ± sd over the {n_sets} sets (each set: the mean of its folds); "
                  "expected cost lower is better:", "", summary_table(part), "",
                  "Expected cost per data set (mean over folds):", "", per_set_table(part), "",
                  "Paired over (data set, fold), expected cost:", "", paired_table(part), ""]
    part = frame[frame.matrix == MATRICES[0]]
    lines += ["## G-mean", "", "Paired over (data set, fold), G-mean (higher is better):", "",
              paired_table(part, "gmean", (("tuned-gmean", "rfq"), ("tuned-gmean", "argmax"),
                                           ("rfq", "argmax"))), "",
              "## The tuner's interval against the held-out metric", "",
              "Per (set, fold): does `tune_decision`'s bootstrap interval hold the metric of "
              "the chosen rule on the held-out fold?", "",
              interval_table(intervals, meta.get("confidence_level", "?"))]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("run", "report"))
    parser.add_argument("path_csv")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=500)
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--sets", default="", help="only these data sets (comma-separated)")
    args = parser.parse_args(argv)
    if args.action == "run":
        frame, intervals, meta = run(args.path_csv, args.trees, args.splits, args.bootstrap,
                                     args.level, argv,
                                     only=[s for s in args.sets.split(",") if s])
    else:
        frame, meta = read_results(args.path_csv)
        intervals = pd.read_csv(intervals_path(args.path_csv))
    path_md = args.path_csv.rsplit(".", 1)[0] + ".md"
    write_report(path_md, "Cost-sensitive decisions from out-of-bag predictions (issue 41)",
                 report(frame, intervals, meta))
    print(f"wrote {path_md}", file=sys.stderr)


if __name__ == "__main__":
    main()
