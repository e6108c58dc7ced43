"""Node-size choice rules, compared on the same forests (issue 10).

For every fold of benchmarks/imbalance_peers.py (5 x 3-fold, its data sets
and seeds, 250 trees) one default forest is fitted; its OOB AUC and OOB
G-mean and its test AUC and G-mean are recorded for every candidate node
size, with the training fold's smallest class count. Any rule that picks a
node size from these can then be scored without refitting, against the
default rule (Wilcoxon signed-rank over data sets) and against
randomForestSRC's per-data-set means from the committed benchmark CSV
(where it ran).

The forests score every candidate even where the default would not choose
(MIN_CLASS_CASES_TO_CHOOSE is set to 0 while they grow: the trees are the
same). --min-rows/--max-rows select the data sets by row count as
imbalance_peers.py's rule does (500 and up: its 66 sets; 100-499: smaller
KEEL sets it does not use).

    python benchmarks/node_size_rules.py run OUT.csv [PARAMS_JSON] [--kinds binary]
    python benchmarks/node_size_rules.py run OUT.csv --min-rows 100 --max-rows 499
    python benchmarks/node_size_rules.py run OUT.csv --generated
    python benchmarks/node_size_rules.py report OUT.csv
"""
import argparse
import itertools
import json
import os
import sys
import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import wilcoxon
from sklearn.datasets import make_classification
from sklearn.model_selection import RepeatedStratifiedKFold

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import imbalance_peers as peers  # noqa: E402

from aucforest import AUCForestClassifier  # noqa: E402
from aucforest import _forest  # noqa: E402
from aucforest._forest import MIN_CLASS_CASES_TO_CHOOSE, MIN_SAMPLES_CANDIDATES  # noqa: E402
from aucforest.metrics import gmean_score, multiclass_auc  # noqa: E402

PEERS_CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                         "imbalance_peers.csv")


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
    X, y, _ = peers.cap_rows(X, y, 3000)
    cv = RepeatedStratifiedKFold(n_splits=3, n_repeats=5, random_state=peers.SEED)
    rows = []
    default_cases = _forest.MIN_CLASS_CASES_TO_CHOOSE
    _forest.MIN_CLASS_CASES_TO_CHOOSE = 0  # score every candidate: the same trees
    try:
        for fold, (train, test) in enumerate(cv.split(X, y)):
            forest = AUCForestClassifier(trees, n_jobs=1, random_state=peers.SEED + fold,
                                         **params)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                forest.fit(X[train], y[train])
            n_min = int(np.unique(y[train], return_counts=True)[1].min())
            for m in MIN_SAMPLES_CANDIDATES:
                forest.predict_min_samples_ = m
                rows.append(dict(
                    dataset=name, kind=kind, fold=fold, m=m, n_min=n_min,
                    oob_auc=forest.oob_scores_by_min_samples_[m],
                    oob_g=forest.oob_gmeans_by_min_samples_[m],
                    auc=float(multiclass_auc(y[test], forest.predict_proba(X[test]),
                                             labels=forest.classes_)),
                    gmean=float(gmean_score(y[test], forest.predict(X[test]),
                                            labels=forest.classes_))))
    finally:
        _forest.MIN_CLASS_CASES_TO_CHOOSE = default_cases
    return rows


def rule_means(d, merit):
    """Per data set: mean test AUC and G-mean of the node size the rule picks per fold."""
    chosen = [f.iloc[int(np.nanargmax(merit(f).values))]
              for _, f in d.groupby(["dataset", "fold"])]
    return pd.DataFrame(chosen).groupby("dataset")[["auc", "gmean"]].mean()


def paired(a, b):
    """Mean difference a - b and its Wilcoxon p over data sets (1 when all equal)."""
    diff = a - b
    changed = diff[diff.abs() > 1e-12]
    p = wilcoxon(changed).pvalue if len(changed) > 1 else 1.0
    return f"{diff.mean():+.4f} ({p:.2g})"


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
    """36 binary sets from make_classification asking for 12, 18 or 21 minority
    cases (12-31 once flip_y has moved labels; 8-21 in a training fold) and
    150-1,000 majority cases, 10 or 30 features: data no rule here was chosen
    on. name -> (kind, source, loader)."""
    def load(minority, majority, p, seed):
        return make_classification(minority + majority, n_features=p, n_informative=4,
                                   n_redundant=2, weights=[majority / (minority + majority)],
                                   flip_y=0.02, class_sep=0.8, random_state=seed)
    grid = itertools.product([12, 18, 21], [150, 400, 1000], [10, 30], [1, 2])
    return {f"gen-{a}-{b}-{p}-{seed}": ("binary", "make_classification",
                                        lambda a=a, b=b, p=p, seed=seed: load(a, b, p, seed))
            for a, b, p, seed in grid}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
            registry = peers.dataset_registry(args.min_rows)
            larger = peers.dataset_registry(args.max_rows + 1) if args.max_rows else {}
            names = [n for n, v in registry.items()
                     if v[0] in args.kinds.split(",") and n not in larger]
        out = Parallel(n_jobs=args.jobs)(
            delayed(fold_rows)(n, registry[n][0], registry[n][2], json.loads(args.params),
                               args.trees) for n in names)
        pd.DataFrame([r for rows in out for r in rows]).to_csv(args.csv, index=False)
    report(args.csv)


if __name__ == "__main__":
    main()
