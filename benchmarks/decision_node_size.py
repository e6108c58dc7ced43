"""Which G-mean should choose the node size under decision="argmax" or a
threshold (issue 44)?

Before issue 44, predict_min_samples="oob" chose the node size by OOB AUC +
OOB G-mean with the G-mean under the forest's own ``decision``, so
``decision`` at fit changed the trees and ``predict_proba``. This study scores,
on the same folds and forests, three rules for a forest fitted with
decision d:

* "own": OOB AUC + OOB G-mean under d (the code before issue 44);
* "rfq": OOB AUC + OOB G-mean under RFQ whatever d (the code after it:
  ``predict_proba`` the same under every decision);
* "auc": OOB AUC alone (also decision-independent).

For d = "rfq" the first two are the same rule. Each fold (5 x 2-fold,
``harness.folds``) fits one forest of 100 trees per candidate node size
(predict_min_samples=m, oob_score=True, the fold's seed: the same grown
trees, collapsed to m), which gives every candidate's OOB and test
probabilities; each rule then picks m per fold (the leaf where a class has
fewer than MIN_CLASS_CASES_TO_CHOOSE training cases, as the forest does),
and is scored by the test AUC and the test G-mean under d at that m.
Fold 0 of each set also fits the default forest (predict_min_samples="oob")
under each decision and checks that it picked the "own" rule's size (the
library's rule).

From the repository root:

    python -m benchmarks.decision_node_size run OUT.csv
    python -m benchmarks.decision_node_size report OUT.csv

``run`` writes OUT.csv (one row per set, fold and candidate) and OUT.json.
"""
import argparse
import sys
import warnings

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits, load_wine, make_classification
from sklearn.metrics import accuracy_score

from aucforest import AUCForestClassifier
from aucforest._decision_rule import DecisionRule, decide
from aucforest._oob_estimates import MIN_CLASS_CASES_TO_CHOOSE, MIN_SAMPLES_CANDIDATES, gmean_of_rows
from aucforest.metrics import gmean_score, multiclass_auc

from .harness import data, folds, stats
from .harness.report import markdown_table, run_metadata, write_results

STUDY = "decision_node_size"
TREES = 100
THRESHOLD = 0.3
RULES = ("own", "rfq", "auc")


def _generated(n, p, weights, seed):
    return lambda: make_classification(n, p, n_informative=4, n_redundant=2,
                                       n_classes=len(weights) + 1, n_clusters_per_class=1,
                                       weights=weights, flip_y=0.02, class_sep=0.8,
                                       random_state=seed)


def _breast_cancer():
    return data.breast_cancer_imb()  # 36 malignant, 357 benign


def _wine():
    """wine with class_2 kept at 0.7 (34 cases; 17 in a training fold, so the
    forest chooses: ``data.wine_imb`` keeps 7 and never does)."""
    X, y = load_wine(return_X_y=True)
    return data.keep_fractions(X, y, {0: 1.0, 1: 1.0, 2: 0.7}, np.random.default_rng(data.SEED))


def _digits():
    """digits, "3" against the rest (183 of 1797)."""
    X, y = load_digits(return_X_y=True)
    return X, (y == 3).astype(int)


DATASETS = {
    "gen 2 classes, 10%": _generated(800, 10, [0.9], 1),
    "gen 2 classes, 5%": _generated(1000, 20, [0.95], 2),
    "gen 2 classes, 20%": _generated(600, 8, [0.8], 3),
    "gen 3 classes, 70/20/10%": _generated(900, 10, [0.7, 0.2], 4),
    "gen 2 classes, 8%": _generated(1200, 15, [0.92], 5),
    "gen 2 classes, 3%": _generated(2000, 10, [0.97], 6),
    "gen 2 classes, 50%": _generated(600, 10, [0.5], 7),
    "gen 4 classes, 55/25/12/8%": _generated(1200, 12, [0.55, 0.25, 0.12], 8),
    "breast_cancer (10%)": _breast_cancer,
    "wine (class_2 at 0.7)": _wine,
    "digits, 3 vs rest": _digits,
}


def decisions_of(n_classes):
    return ("rfq", "argmax", THRESHOLD) if n_classes == 2 else ("rfq", "argmax")


def fold_rows(name, load):
    """Every candidate's OOB figures and test figures, per fold and decision."""
    X, y = load()
    classes = np.unique(y)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fold, (train, test) in enumerate(folds.cv_splits(y, n_splits=2, n_repeats=5)):
            seed = folds.fold_seed(fold)
            n_min = int(np.bincount(np.searchsorted(classes, y[train])).min())
            codes = np.searchsorted(classes, y[train])
            for m in MIN_SAMPLES_CANDIDATES:
                forest = AUCForestClassifier(TREES, predict_min_samples=m, oob_score=True,
                                             n_jobs=1, random_state=seed).fit(X[train], y[train])
                oob = forest.oob_decision_function_
                has_oob = ~np.isnan(oob[:, 0])
                proba = forest.predict_proba(X[test])
                row = dict(dataset=name, fold=fold, m=m, n_min=n_min,
                           oob_auc=forest.oob_score_,
                           auc=float(multiclass_auc(y[test], proba, labels=classes)))
                for d in decisions_of(classes.size):
                    row[f"oob_g_{d}"] = gmean_of_rows(codes[has_oob], oob[has_oob],
                                                      forest.class_prior_,
                                                      DecisionRule.parse(d, classes.size))
                    predicted = classes[decide(proba, forest.class_prior_, d)]
                    row[f"g_{d}"] = gmean_score(y[test], predicted, labels=classes)
                    row[f"acc_{d}"] = accuracy_score(y[test], predicted)
                row["brier"] = float(np.mean(np.sum(
                    (proba - (y[test][:, None] == classes)) ** 2, axis=1)))
                rows.append(row)
            if fold == 0:  # the library's own choice under each decision
                sizes = {d: AUCForestClassifier(TREES, decision=d, n_jobs=1, random_state=seed)
                         .fit(X[train], y[train]).predict_min_samples_
                         for d in decisions_of(classes.size)}
                rows[-1]["default_m"] = ";".join(f"{d}:{m}" for d, m in sizes.items())
    return rows


def merit(f, rule, decision):
    """The rule's figure of merit per candidate of one fold's frame f."""
    if rule == "auc":
        return f.oob_auc
    return f.oob_auc + f[f"oob_g_{decision if rule == 'own' else 'rfq'}"]


def chosen(f, rule, decision):
    """The row of the node size the rule picks in one fold (the smallest of
    equal merits; the leaf where a class is below MIN_CLASS_CASES_TO_CHOOSE)."""
    f = f.sort_values("m")
    if f.n_min.iloc[0] < MIN_CLASS_CASES_TO_CHOOSE:
        return f.iloc[0]
    return f.iloc[int(np.nanargmax(merit(f, rule, decision).to_numpy()))]


def per_fold(d, decision):
    """dataset, fold and, per rule, the chosen m and its test AUC and G-mean under decision."""
    out = []
    for (name, fold), f in d.groupby(["dataset", "fold"], sort=False):
        if f"g_{decision}" not in f or f[f"g_{decision}"].isna().all():
            continue
        row = dict(dataset=name, fold=fold)
        for rule in RULES:
            c = chosen(f, rule, decision)
            row.update({f"m_{rule}": c.m, f"auc_{rule}": c.auc, f"g_{rule}": c[f"g_{decision}"],
                        f"acc_{rule}": c[f"acc_{decision}"], f"brier_{rule}": c.brier})
        out.append(row)
    return pd.DataFrame(out)


def check_default(d):
    """Sets whose default fit (fold 0) under a decision did not pick the size of
    the "own" rule (the library's) for that decision."""
    wrong = []
    for name, f in d[d.fold == 0].groupby("dataset", sort=False):
        for pair in f.default_m.dropna().iloc[0].split(";"):
            decision, m = pair.split(":")
            expected = chosen(f, "own", decision).m
            if int(m) != expected:
                wrong.append(f"{name} ({decision}: {m}, rule: {expected})")
    return wrong


SCORES = {"auc": "test AUC", "g": "test G-mean", "acc": "accuracy",
          "brier": "Brier (lower is better)"}


def report(path):
    d = pd.read_csv(path)
    wrong = check_default(d)
    print("Default fits (fold 0) picked the \"own\" rule's size:",
          "yes, every set and decision" if not wrong else "NO: " + ", ".join(wrong))
    for decision in ("argmax", THRESHOLD, "rfq"):
        folds_ = per_fold(d, str(decision))
        means = folds_.groupby("dataset", sort=False).mean(numeric_only=True)
        moved = (folds_.m_own != folds_.m_rfq).sum()
        print(f"\n### decision={decision!r}: {means.shape[0]} sets, {len(folds_)} folds; "
              f"\"own\" and \"rfq\" picked different sizes in {moved} folds\n")
        body = [[rule] + [_mean_sd(means[f"{score}_{rule}"]) for score in SCORES]
                for rule in RULES]
        print(markdown_table(["rule, mean (sd over sets)", *SCORES.values()], body))
        print()
        body = []
        for rule in RULES[1:]:
            for score, title in SCORES.items():
                by_set = stats.paired_test(means[f"{score}_{rule}"], means[f"{score}_own"])
                by_fold = stats.paired_test(folds_[f"{score}_{rule}"], folds_[f"{score}_own"])
                body.append([f"{rule} - own", title, f"{by_set.mean_diff:+.4f}", by_set.wtl,
                             _p(by_set.pvalue), by_fold.wtl, _p(by_fold.pvalue)])
        print(markdown_table(["rules", "score", "mean diff", "W/T/L sets", "Wilcoxon p, sets",
                              "W/T/L folds", "Wilcoxon p, folds"], body))
        print("\nPer set, test G-mean own / rfq / auc (node sizes picked by own; by rfq):",
              "; ".join(f"{n} {r.g_own:.3f} / {r.g_rfq:.3f} / {r.g_auc:.3f} "
                        f"({_sizes(folds_, n, 'own')}; {_sizes(folds_, n, 'rfq')})"
                        for n, r in means.iterrows()))


def _mean_sd(values):
    mean, sd, _ = stats.spread(values)
    return f"{mean:.4f} ({sd:.4f})"


def _sizes(folds_, name, rule):
    """The node sizes a rule picked in the folds of a set, as "m x count"."""
    counts = folds_[folds_.dataset == name][f"m_{rule}"].astype(int).value_counts().sort_index()
    return " ".join(f"{m}x{c}" for m, c in counts.items())


def _p(pvalue):
    return "1 (all equal)" if np.isnan(pvalue) else f"{pvalue:.2g}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_p = sub.add_parser("run")
    run_p.add_argument("out")
    report_p = sub.add_parser("report")
    report_p.add_argument("out")
    args = parser.parse_args(argv)
    if args.command == "run":
        rows = []
        for name, load in DATASETS.items():
            print(name, file=sys.stderr, flush=True)
            rows += fold_rows(name, load)
        write_results(pd.DataFrame(rows), args.out,
                      run_metadata(STUDY, argv, trees=TREES, threshold=THRESHOLD,
                                   folds="5 x 2-fold (harness.folds.cv_splits)"))
    report(args.out)


if __name__ == "__main__":
    main()
