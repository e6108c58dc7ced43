"""Node-size choice rules, compared on the same forests (issue 10).

For every fold of benchmarks/imbalance_peers.py (5 x 3-fold, its data sets
and seeds, 250 trees) one default forest is fitted; its OOB AUC and OOB
G-mean and its test AUC and G-mean are recorded for every candidate node
size. Any rule that picks a node size from the OOB figures can then be
scored without refitting, and set against randomForestSRC's per-data-set
means from the committed benchmark CSV.

    python benchmarks/node_size_rules.py run OUT.csv [PARAMS_JSON] [--kinds binary]
    python benchmarks/node_size_rules.py report OUT.csv
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import wilcoxon
from sklearn.model_selection import RepeatedStratifiedKFold

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import imbalance_peers as peers  # noqa: E402

from aucforest import AUCForestClassifier  # noqa: E402
from aucforest._forest import MIN_SAMPLES_CANDIDATES  # noqa: E402
from aucforest.metrics import gmean_score, multiclass_auc  # noqa: E402

PEERS_CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                         "imbalance_peers.csv")
RULES = {
    "OOB AUC + OOB G-mean (default)": lambda f: f.oob_auc + f.oob_g,
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
    for fold, (train, test) in enumerate(cv.split(X, y)):
        forest = AUCForestClassifier(trees, n_jobs=1, random_state=peers.SEED + fold, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            forest.fit(X[train], y[train])
        for m in MIN_SAMPLES_CANDIDATES:
            forest.predict_min_samples_ = m
            rows.append(dict(
                dataset=name, kind=kind, fold=fold, m=m,
                oob_auc=forest.oob_scores_by_min_samples_[m],
                oob_g=forest.oob_gmeans_by_min_samples_[m],
                auc=float(multiclass_auc(y[test], forest.predict_proba(X[test]),
                                         labels=forest.classes_)),
                gmean=float(gmean_score(y[test], forest.predict(X[test]),
                                        labels=forest.classes_))))
    return rows


def report(path):
    d = pd.read_csv(path)
    ref = pd.read_csv(PEERS_CSV)
    rfsrc = ref[ref.system == "rfsrc-imb"].groupby("dataset")[["auc", "gmean"]].mean()
    binary = sorted(set(d.dataset[d.kind == "binary"]) & set(rfsrc.index))
    print(f"| rule | AUC, {d.dataset.nunique()} sets | G-mean | AUC, {len(binary)} binary | "
          "G-mean, binary | G-mean - randomForestSRC (p) |")
    print("|---|---|---|---|---|---|")
    for name, merit in RULES.items():
        chosen = [f.iloc[int(np.nanargmax(merit(f).values))]
                  for _, f in d.groupby(["dataset", "fold"])]
        means = pd.DataFrame(chosen).groupby("dataset")[["auc", "gmean"]].mean()
        b = means.loc[binary]
        gap = b.gmean.mean() - rfsrc.loc[binary].gmean.mean()
        p = wilcoxon(b.gmean, rfsrc.loc[binary].gmean).pvalue
        print(f"| {name} | {means.auc.mean():.4f} | {means.gmean.mean():.4f} | "
              f"{b.auc.mean():.4f} | {b.gmean.mean():.4f} | {gap:+.4f} ({p:.2f}) |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["run", "report"])
    ap.add_argument("csv")
    ap.add_argument("params", nargs="?", default="{}", help="AUCForestClassifier parameters")
    ap.add_argument("--kinds", default="binary,multiclass")
    ap.add_argument("--trees", type=int, default=250)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if args.command == "run":
        registry = peers.dataset_registry(500)
        names = [n for n, v in registry.items() if v[0] in args.kinds.split(",")]
        out = Parallel(n_jobs=args.jobs)(
            delayed(fold_rows)(n, registry[n][0], registry[n][2], json.loads(args.params),
                               args.trees) for n in names)
        pd.DataFrame([r for rows in out for r in rows]).to_csv(args.csv, index=False)
    report(args.csv)


if __name__ == "__main__":
    main()
