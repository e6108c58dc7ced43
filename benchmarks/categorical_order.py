"""Ordering a factor's levels per node or once per tree (issue 29).

A categorical split orders the node's levels by class composition and cuts
the order as an ordered feature. Wright & Koenig (PeerJ 2019) order once,
on the tree's sample, before growing (ranger's ``respect.unordered.factors
= "order"``); aucforest orders in every node. Both variants grow forests on
the same folds of generated imbalanced data whose signal sits in a 30-60
level factor (a per-level effect, missing values in 5% of the rows), beside
a weak numeric signal, four noise features and a 20-level noise factor; two
classes (10% minority) and four (shares 0.6/0.25/0.1/0.05). For AUC and Gini
splitting the table gives the test AUC (Hand & Till for four classes) mean
+- sd over data sets x folds, the paired Wilcoxon and t tests of per-node
minus once-per-tree, and the median ratio of fit times (once / per node;
the two variants alternate within each fold, one thread each, on a machine
shared with other jobs).

"Once per tree" is the private switch ``aucforest._base._ORDER_LEVELS_ONCE``
(the root's keys are reused in every node). Under AUC splitting with four
classes a third variant orders per node by the principal component alone
(``aucforest._base._AUC_CLASS_RANKINGS = False``) instead of scanning one
order per ranking of the classes (the default, exact over all partitions).
From the repository root:

    python -m benchmarks.categorical_order run OUT.csv [--trees 150] [--sets 3]
    python -m benchmarks.categorical_order report OUT.csv
"""
import argparse
import time

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from aucforest import AUCForestClassifier, _base
from aucforest.metrics import multiclass_auc

from .harness import folds, stats
from .harness.report import run_metadata, write_results

STUDY = "categorical_order"
VARIANTS = ("per node", "once per tree", "per node, PC order only")
CLASS_SHARES = {2: [0.9, 0.1], 4: [0.6, 0.25, 0.1, 0.05]}


def generated_set(n_classes, seed, n=2000):
    """(X, y, categorical feature indices) of one generated data set."""
    rng = np.random.default_rng(seed)
    n_levels = int(rng.integers(30, 61))
    level = rng.integers(0, n_levels, n)
    effect = rng.normal(scale=1.5, size=(n_levels, n_classes))
    numeric = rng.normal(size=n)
    logits = effect[level] + 0.5 * numeric[:, None] * np.linspace(-1, 1, n_classes)
    logits += np.log(CLASS_SHARES[n_classes])  # imbalance (shares before the effects)
    y = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
    factor = level.astype(float)
    factor[rng.random(n) < 0.05] = np.nan
    noise_factor = rng.integers(0, 20, n).astype(float)
    X = np.column_stack([factor, numeric, rng.normal(size=(n, 4)), noise_factor])
    return X, y, [0, X.shape[1] - 1]


def fit_variant(variant, X, y, categorical, criterion, trees, seed):
    """(fitted forest, fit seconds) of one variant."""
    forest = AUCForestClassifier(trees, criterion=criterion, categorical_features=categorical,
                                 n_jobs=1, random_state=seed)
    _base._ORDER_LEVELS_ONCE = variant == "once per tree"
    _base._AUC_CLASS_RANKINGS = variant == "per node"
    try:
        start = time.perf_counter()
        forest.fit(X, y)
        return forest, time.perf_counter() - start
    finally:
        _base._ORDER_LEVELS_ONCE = False
        _base._AUC_CLASS_RANKINGS = True


def run(trees, n_sets, n_repeats):
    rows = []
    for n_classes in CLASS_SHARES:
        for data_seed in range(n_sets):
            X, y, categorical = generated_set(n_classes, 100 * n_classes + data_seed)
            splits = folds.cv_splits(y, n_splits=3, n_repeats=n_repeats)
            for fold, (train, test) in enumerate(splits):
                for criterion in ("auc", "gini"):
                    variants = VARIANTS if criterion == "auc" and n_classes > 2 else VARIANTS[:2]
                    order = variants if fold % 2 == 0 else variants[::-1]  # alternate
                    for variant in order:
                        forest, seconds = fit_variant(variant, X[train], y[train], categorical,
                                                      criterion, trees, folds.fold_seed(fold))
                        auc = multiclass_auc(y[test], forest.predict_proba(X[test]),
                                             labels=forest.classes_)
                        rows.append(dict(classes=n_classes, dataset=data_seed, fold=fold,
                                         criterion=criterion, variant=variant,
                                         auc=float(auc), fit_seconds=seconds))
    return pd.DataFrame(rows)


def report(path):
    d = pd.read_csv(path)
    print("| classes | criterion | AUC per node | AUC once per tree | per node - once "
          "(Wilcoxon p, t-test p) | wins/ties/losses | fit time once / per node |")
    print("|---|---|---|---|---|---|---|")
    for (n_classes, criterion), cell in d.groupby(["classes", "criterion"]):
        wide = cell.pivot_table(index=["dataset", "fold"], columns="variant",
                                values=["auc", "fit_seconds"])
        per_node, once = wide["auc"]["per node"], wide["auc"]["once per tree"]
        test = stats.paired_test(per_node, once)
        t_p = scipy_stats.ttest_rel(per_node, once).pvalue
        ratio = np.median(wide["fit_seconds"]["once per tree"] / wide["fit_seconds"]["per node"])
        print(f"| {n_classes} | {criterion} | {per_node.mean():.4f} +- {per_node.std():.4f} | "
              f"{once.mean():.4f} +- {once.std():.4f} | {test.mean_diff:+.4f} "
              f"({test.pvalue:.2g}, {t_p:.2g}) | {test.wtl} | {ratio:.2f} |")
    ranked = d[d.variant == VARIANTS[2]]
    if len(ranked):
        print("\nAUC splitting, more classes: one order per class ranking (per node, the "
              "default) against the principal-component order alone (per node)")
        print("| classes | AUC rankings | AUC PC order | rankings - PC (Wilcoxon p, t-test p) "
              "| wins/ties/losses | fit time rankings / PC |")
        print("|---|---|---|---|---|---|")
        for n_classes, cell in d[d.criterion == "auc"].groupby("classes"):
            wide = cell.pivot_table(index=["dataset", "fold"], columns="variant",
                                    values=["auc", "fit_seconds"])
            if VARIANTS[2] not in wide["auc"]:
                continue
            ranks, pc = wide["auc"][VARIANTS[0]], wide["auc"][VARIANTS[2]]
            test = stats.paired_test(ranks, pc)
            t_p = scipy_stats.ttest_rel(ranks, pc).pvalue
            ratio = np.median(wide["fit_seconds"][VARIANTS[0]] / wide["fit_seconds"][VARIANTS[2]])
            print(f"| {n_classes} | {ranks.mean():.4f} +- {ranks.std():.4f} | {pc.mean():.4f} "
                  f"+- {pc.std():.4f} | {test.mean_diff:+.4f} ({test.pvalue:.2g}, {t_p:.2g}) | "
                  f"{test.wtl} | {ratio:.2f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.categorical_order",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["run", "report"])
    ap.add_argument("csv")
    ap.add_argument("--trees", type=int, default=150)
    ap.add_argument("--sets", type=int, default=3, help="generated data sets per class count")
    ap.add_argument("--repeats", type=int, default=2, help="repeats of 3-fold CV")
    args = ap.parse_args(argv)
    if args.command == "run":
        write_results(run(args.trees, args.sets, args.repeats), args.csv,
                      run_metadata(STUDY, argv, trees=args.trees, sets=args.sets,
                                   repeats=args.repeats))
    report(args.csv)


if __name__ == "__main__":
    main()
