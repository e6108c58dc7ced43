"""Node-size choice rules, compared on the same forests (issue 10).

For every fold of benchmarks.imbalance_peers (5 x 3-fold, its data sets
and seeds, 250 trees) one default forest is fitted; its OOB AUC and OOB
G-mean and its test AUC and G-mean are recorded for every candidate node
size, with the training fold's smallest class count. Any rule that picks a
node size from these can then be scored without refitting, against the
default rule (Wilcoxon signed-rank over data sets) and against
randomForestSRC's per-data-set means from the committed benchmark CSV
(where it ran).

The forests score every candidate even where the default would not choose
(MIN_CLASS_CASES_TO_CHOOSE is set to 0 while they grow: the trees are the
same). The trees are collapsed to the chosen node size when the forest is
fitted, so the test figures at each other candidate m come from a refit with
predict_min_samples=m and the same seed: the same grown trees, collapsed to m
(six fits per fold; before the trees were collapsed, one fit served them all).
--min-rows/--max-rows select the data sets by row count as imbalance_peers'
rule does (500 and up: its 66 sets; 100-499: smaller KEEL sets it does not use).

Data sets (``harness.data.keel_registry``, ``small_minority_registry``),
folds and the paired test come from ``benchmarks.harness``. From the
repository root:

    python -m benchmarks.node_size_rules run OUT.csv [PARAMS_JSON] [--kinds binary]
    python -m benchmarks.node_size_rules run OUT.csv --min-rows 100 --max-rows 499
    python -m benchmarks.node_size_rules run OUT.csv --generated
    python -m benchmarks.node_size_rules report OUT.csv

``run`` writes OUT.csv and its metadata OUT.json.
"""
import argparse
import json
import sys
import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from aucforest import AUCForestClassifier
try:  # the node-size choice's constants, in aucforest._oob_estimates since the fit was split
    from aucforest._oob_estimates import MIN_CLASS_CASES_TO_CHOOSE, MIN_SAMPLES_CANDIDATES
except ImportError:  # before that split
    from aucforest._forest import MIN_CLASS_CASES_TO_CHOOSE, MIN_SAMPLES_CANDIDATES
from aucforest.metrics import gmean_score, multiclass_auc

from .harness import data, folds, stats
from .harness.report import RESULTS, run_metadata, write_results

PEERS_CSV = str(RESULTS / "imbalance_peers.csv")
STUDY = "node_size_rules"


def _leaf_below(f, cases, merit):
    """merit, or the leaf where the smallest class has fewer than `cases` cases."""
    return (-(f.m - 1).abs()).where(f.n_min < cases, merit)


DEFAULT_RULE = (f"OOB AUC + OOB G-mean, leaf below {MIN_CLASS_CASES_TO_CHOOSE} cases "
                "of a class (default)")
RULES = {
    DEFAULT_RULE: lambda f: _leaf_below(f, MIN_CLASS_CASES_TO_CHOOSE, f.oob_auc + f.oob_g),
    "OOB AUC + OOB G-mean, always": lambda f: f.oob_auc + f.oob_g,
    **{f"OOB AUC + OOB G-mean, leaf below {c} cases": (
        lambda f, c=c: _leaf_below(f, c, f.oob_auc + f.oob_g)) for c in (10, 20, 25)},
    "OOB AUC": lambda f: f.oob_auc,
    "OOB G-mean": lambda f: f.oob_g,
    "OOB AUC + 2 OOB G-mean": lambda f: f.oob_auc + 2 * f.oob_g,
    "OOB AUC x OOB G-mean": lambda f: f.oob_auc * f.oob_g,
    **{f"fixed {m}": (lambda f, m=m: -(f.m - m).abs()) for m in MIN_SAMPLES_CANDIDATES},
}


def fold_rows(name, kind, loader, params, trees):
    X, y = loader()
    X, y, _ = data.cap_rows(X, y, 3000)
    rows = []
    # score every candidate (the same trees): the class-size condition off in
    # whichever aucforest module holds it
    holders = [module for module_name, module in list(sys.modules.items())
               if module_name.startswith("aucforest")
               and hasattr(module, "MIN_CLASS_CASES_TO_CHOOSE")]
    for module in holders:
        module.MIN_CLASS_CASES_TO_CHOOSE = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for fold, (train, test) in enumerate(folds.cv_splits(y)):
                forest = AUCForestClassifier(trees, n_jobs=1, random_state=folds.fold_seed(fold),
                                             **params)
                forest.fit(X[train], y[train])
                n_min = int(np.unique(y[train], return_counts=True)[1].min())
                for m in MIN_SAMPLES_CANDIDATES:
                    at_m = forest if m == forest.predict_min_samples_ else AUCForestClassifier(
                        trees, n_jobs=1, random_state=folds.fold_seed(fold),
                        **dict(params, predict_min_samples=m)).fit(X[train], y[train])
                    rows.append(dict(
                        dataset=name, kind=kind, fold=fold, m=m, n_min=n_min,
                        oob_auc=forest.oob_scores_by_min_samples_[m],
                        oob_g=forest.oob_gmeans_by_min_samples_[m],
                        auc=float(multiclass_auc(y[test], at_m.predict_proba(X[test]),
                                                 labels=at_m.classes_)),
                        gmean=float(gmean_score(y[test], at_m.predict(X[test]),
                                                labels=at_m.classes_))))
    finally:
        for module in holders:
            module.MIN_CLASS_CASES_TO_CHOOSE = MIN_CLASS_CASES_TO_CHOOSE
    return rows


def rule_means(d, merit):
    """Per data set: mean test AUC and G-mean of the node size the rule picks per fold."""
    chosen = [f.iloc[int(np.nanargmax(merit(f).values))]
              for _, f in d.groupby(["dataset", "fold"])]
    return pd.DataFrame(chosen).groupby("dataset")[["auc", "gmean"]].mean()


def paired(a, b):
    """Mean difference a - b and its Wilcoxon p over data sets (1 when all equal)."""
    result = stats.paired_test(a, b, tol=1e-12)
    p = 1.0 if np.isnan(result.pvalue) else result.pvalue
    return f"{result.mean_diff:+.4f} ({p:.2g})"


def report(path):
    d = pd.read_csv(path)
    ref = pd.read_csv(PEERS_CSV)
    rfsrc = ref[ref.system == "rfsrc-imb"].groupby("dataset")[["auc", "gmean"]].mean()
    binary = sorted(set(d.dataset[d.kind == "binary"]) & set(rfsrc.index))
    default = rule_means(d, RULES[DEFAULT_RULE])
    head = (f"| rule | AUC, {d.dataset.nunique()} sets | G-mean | AUC - default (p) | "
            "G-mean - default (p) |")
    if binary:
        head += (f" AUC, {len(binary)} binary | G-mean, binary | "
                 "G-mean - randomForestSRC (p) |")
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for name, merit in RULES.items():
        means = rule_means(d, merit)
        line = (f"| {name} | {means.auc.mean():.4f} | {means.gmean.mean():.4f} | "
                f"{paired(means.auc, default.auc)} | {paired(means.gmean, default.gmean)} |")
        if binary:
            b = means.loc[binary]
            line += (f" {b.auc.mean():.4f} | {b.gmean.mean():.4f} | "
                     f"{paired(b.gmean, rfsrc.loc[binary].gmean)} |")
        print(line)


def generated_registry():
    """The generated pool: harness.data.small_minority_registry (36 binary sets
    with 8-21 minority cases per training fold)."""
    return data.small_minority_registry()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.node_size_rules",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["run", "report"])
    ap.add_argument("csv")
    ap.add_argument("params", nargs="?", default="{}", help="AUCForestClassifier parameters")
    ap.add_argument("--kinds", default="binary,multiclass")
    ap.add_argument("--min-rows", type=int, default=500)
    ap.add_argument("--max-rows", type=int, help="largest data set (rows before the cap)")
    ap.add_argument("--generated", action="store_true",
                    help="the generated sets of generated_registry instead of KEEL's")
    ap.add_argument("--trees", type=int, default=250)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if args.command == "run":
        if args.generated:
            registry = generated_registry()
            names = list(registry)
        else:
            registry = data.keel_registry(args.min_rows)
            larger = data.keel_registry(args.max_rows + 1) if args.max_rows else {}
            names = [n for n, v in registry.items()
                     if v.kind in args.kinds.split(",") and n not in larger]
        out = Parallel(n_jobs=args.jobs)(
            delayed(fold_rows)(n, registry[n].kind, registry[n].load, json.loads(args.params),
                               args.trees) for n in names)
        write_results(pd.DataFrame([r for rows in out for r in rows]), args.csv,
                      run_metadata(STUDY, argv, params=args.params, trees=args.trees))
    report(args.csv)


if __name__ == "__main__":
    main()
