"""Fit time and test AUC of aucforest against the fastest CPU random forests, side by side.

The table of issue 14: every row is fitted by every system in the same run,
systems alternating within each round (so that load on a shared machine hits
them alike), the median of `--rounds` rounds reported, with the test AUC of
each system beside its time. All systems grow fully grown trees with
max_features="sqrt" and bootstrap on float32 make_classification data.

Systems: aucforest's default forest (nsplit=10 drawn thresholds, subsampling
without replacement, node size chosen out of bag; the binned splitter from
10,000 rows on, so on every row here);
aucforest at the issue's settings (bootstrap, leaf predictions) with the
exact splitter taking every threshold and with the binned one
(max_bins=255), each with criterion "auc" and "gini"; scikit-learn-intelex
(oneDAL) and scikit-learn; XGBoost's random-forest mode, YDF and skranger
when they are installed (benchmarks/requirements-peers.txt).

From the repository root:

    python -m benchmarks.compare_peers --quick          # smaller rows, a few minutes
    python -m benchmarks.compare_peers                  # the issue's rows and n = 10^7
    python -m benchmarks.compare_peers --threads 1 2 --output benchmarks/results/speed_peers.md

--output writes the tables (.md) and, beside them, the medians as a CSV (one
row per data row, thread count and system) with its metadata (.json), from
which ``python -m benchmarks.plots`` draws fit time against rows. The data
(``harness.data.speed_data``), the systems (``harness.systems.speed_systems``)
and the alternation (``harness.timing.alternate``) come from the harness.

Times depend on the machine and its load: compare within a row (ratios), not
across runs.
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time

import numpy as np
import pandas as pd

from .harness import report, timing
from .harness.data import N_TEST
from .harness.data import speed_data as make_data
from .harness.optional import installed, version
from .harness.systems import speed_systems as systems
from .harness.systems import test_auc

# (n_train, p, K, trees); the table plus n = 10^7
FULL_ROWS = [(20_000, 20, 3, 50), (10_000, 20, 10, 50), (200_000, 20, 2, 20),
             (50_000, 200, 2, 20), (1_000_000, 20, 2, 5), (10_000_000, 20, 2, 3)]
QUICK_ROWS = [(20_000, 20, 3, 10), (10_000, 20, 10, 10), (200_000, 20, 2, 3),
              (50_000, 200, 2, 3)]
# systems too slow to be worth a run at these sizes (a note says so in the table)
SKIP_FROM = {"aucforest exact auc": 5_000_000, "aucforest exact gini": 5_000_000,
             "scikit-learn": 2_000_000, "skranger": 5_000_000}
STUDY = "compare_peers"
PEER_DISTRIBUTIONS = (("sklearnex", "scikit-learn-intelex"), ("xgboost", "xgboost"),
                      ("ydf", "ydf"), ("skranger", "skranger"))


def run_row(n, p, k, n_estimators, n_jobs, rounds, log, only=None):
    """Median fit time, predict_proba time and test AUC of every system on one row
    (of the systems named in ``only``, when given); the systems alternate, in
    reverse order every other round."""
    X, y, X_test, y_test = make_data(n, p, k)
    factories = {name: make for name, make in systems(n_estimators, n_jobs).items()
                 if n < SKIP_FROM.get(name, np.inf) and (only is None or name in only)}
    aucs = {}

    def measure(name, round_):
        fit, model = timing.fit_seconds(factories[name], X, y)
        start = time.perf_counter()
        aucs[name] = test_auc(model, X_test, y_test)
        predict = time.perf_counter() - start
        log(f"  n={n} p={p} K={k} jobs={n_jobs} round {round_ + 1} {name}: "
            f"fit {fit:.2f} s, AUC {aucs[name]:.4f}")
        return fit, predict

    times = timing.alternate(list(factories), rounds, measure)
    return {name: (timing.median([t[0] for t in times[name]]),
                   timing.median([t[1] for t in times[name]]), aucs[name])
            for name in factories}


MEMORY_PROBE = """
import json, resource, sys, numpy as np
from aucforest import AUCForestClassifier
n, p, trees = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
X = np.empty((n, p), dtype=np.float32, order="F")  # filled by column: no peak above X here
for j in range(p):
    X[:, j] = rng.standard_normal(n, dtype=np.float32)
y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.standard_normal(n, dtype=np.float32) > 0).astype(np.intp)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
forest = AUCForestClassifier(trees, max_bins=255, n_jobs=1, random_state=0).fit(X, y)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"X": X.nbytes, "codes": n * p, "trees": sum(t.tree_.nbytes for t in forest.estimators_),
                  "growth": peak - before}))
"""


def memory_at(n, p, trees):
    """Peak memory growth of a binned fit, against X, its codes and the trees (bytes)."""
    out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(n), str(p), str(trees)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def header(threads, rounds):
    v = report.versions()
    versions = [f"aucforest {v['aucforest']}", f"scikit-learn {v['scikit-learn']}",
                f"numpy {v['numpy']}", f"python {v['python']}"]
    for module, distribution in PEER_DISTRIBUTIONS:
        if installed(module):
            versions.append(f"{distribution} {version(distribution)}")
    return [f"# aucforest vs peers | {' | '.join(versions)} | {platform.machine()} | "
            f"{os.cpu_count()} cores",
            f"# fully grown trees, max_features='sqrt', bootstrap, float32 make_classification "
            f"data, {N_TEST} test rows; median of {rounds} alternating rounds; threads: "
            f"{', '.join(map(str, threads))}; cells: fit seconds (test AUC)"]


def table(results, names):
    lines = ["| data (n, p, K), trees | jobs | " + " | ".join(names) + " |",
             "|---|---|" + "---|" * len(names)]
    for (n, p, k, trees, jobs), row in results:
        cells = []
        for name in names:
            if name in row:
                fit, _, auc = row[name]
                cells.append(f"{fit:.2f} s ({auc:.4f})")
            else:
                cells.append("skipped")
        lines.append(f"| {n:,} x {p}, K={k}, {trees} | {jobs} | " + " | ".join(cells) + " |")
    return lines


def ratios(results):
    """Fit time of aucforest's default and binned forests over sklearnex's, and test-AUC
    differences to the exact engine with every threshold (the issue's settings)."""
    lines = ["", "| data | jobs | default / sklearnex | binned auc / sklearnex | "
             "binned gini / sklearnex | AUC default - exact (auc) | AUC binned - exact (auc) | "
             "AUC binned - exact (gini) | predict default / sklearnex |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (n, p, k, trees, jobs), row in results:
        def ratio(a, b, i=0):
            return f"{row[a][i] / row[b][i]:.2f}" if a in row and b in row else "-"

        def diff(a, b):
            return f"{row[a][2] - row[b][2]:+.4f}" if a in row and b in row else "-"
        lines.append(f"| {n:,} x {p}, K={k}, {trees} | {jobs} | "
                     f"{ratio('aucforest default', 'sklearnex')} | "
                     f"{ratio('aucforest binned auc', 'sklearnex')} | "
                     f"{ratio('aucforest binned gini', 'sklearnex')} | "
                     f"{diff('aucforest default', 'aucforest exact auc')} | "
                     f"{diff('aucforest binned auc', 'aucforest exact auc')} | "
                     f"{diff('aucforest binned gini', 'aucforest exact gini')} | "
                     f"{ratio('aucforest default', 'sklearnex', 1)} |")
    return lines


def results_frame(results, rounds):
    """One row per (data row, thread count, system): the medians and the test AUC."""
    return pd.DataFrame([dict(n=n, p=p, k=k, trees=trees, jobs=jobs, system=name, fit_s=fit,
                              predict_s=predict, auc=auc, rounds=rounds)
                         for (n, p, k, trees, jobs), row in results
                         for name, (fit, predict, auc) in row.items()])


ROW_PATTERN = re.compile(r"^([\d,]+) x (\d+), K=(\d+), (\d+)$")


def frame_from_markdown(path, rounds=None):
    """The results frame of a table this study wrote (.md), for tables kept
    without their CSV: fit seconds and test AUC per cell, no predict times."""
    lines = [line for line in open(path, encoding="utf-8") if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip().strip("|").split("|")]
    rows = []
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = ROW_PATTERN.match(cells[0])
        if cells[0] == "data" or match is None or not cells[2].endswith(")"):
            if cells[0] == "data":
                break  # the ratio table follows
            continue
        n, p, k, trees = (int(v.replace(",", "")) for v in match.groups())
        for name, cell in zip(header[2:], cells[2:]):
            if cell == "skipped":
                continue
            fit, auc = re.match(r"([\d.]+) s \(([\d.]+)\)", cell).groups()
            rows.append(dict(n=n, p=p, k=k, trees=trees, jobs=int(cells[1]), system=name,
                             fit_s=float(fit), predict_s=np.nan, auc=float(auc), rounds=rounds))
    return pd.DataFrame(rows)


LOG_PATTERN = re.compile(r"n=(\d+) p=(\d+) K=(\d+) jobs=(\d+) round (\d+) (.+): "
                         r"fit ([\d.]+) s, AUC ([\d.]+)")


def frame_from_log(path):
    """The results frame of this study's progress log (stderr): the median fit
    seconds over the rounds logged, trees from FULL_ROWS."""
    trees = {(n, p, k): t for n, p, k, t in FULL_ROWS}
    fits = {}
    for line in open(path, encoding="utf-8"):
        match = LOG_PATTERN.search(line)
        if match:
            n, p, k, jobs, _, name, fit, auc = match.groups()
            key = (int(n), int(p), int(k), int(jobs), name)
            fits.setdefault(key, []).append((float(fit), float(auc)))
    return pd.DataFrame([dict(n=n, p=p, k=k, trees=trees[(n, p, k)], jobs=jobs, system=name,
                              fit_s=timing.median([f for f, _ in values]), predict_s=np.nan,
                              auc=values[-1][1], rounds=len(values))
                         for (n, p, k, jobs, name), values in fits.items()])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare_peers",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller rows, fewer trees")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rows", type=int, nargs="+", default=None,
                        help="indices of the rows to run (default: all)")
    parser.add_argument("--memory", action="store_true",
                        help="also measure peak memory of a binned fit at n = 10^7")
    parser.add_argument("--output", default=None,
                        help="also write the tables to this file (.md) and the medians "
                             "beside it (.csv, .json)")
    parser.add_argument("--systems", nargs="+", default=None, metavar="NAME",
                        help='run only these systems (default: all installed), e.g. '
                             '"aucforest binned auc" sklearnex')
    args = parser.parse_args(argv)
    rows = QUICK_ROWS if args.quick else FULL_ROWS
    if args.rows is not None:
        rows = [rows[i] for i in args.rows]

    def log(message):
        print(message, file=sys.stderr, flush=True)

    results = []
    names = []
    for n, p, k, trees in rows:
        for jobs in args.threads:
            row = run_row(n, p, k, trees, jobs, args.rounds, log, args.systems)
            results.append(((n, p, k, trees, jobs), row))
            names += [name for name in row if name not in names]
    lines = header(args.threads, args.rounds) + [""] + table(results, names) + ratios(results)
    if args.memory:
        memory = memory_at(10_000_000, 20, 3)
        lines += ["", "Peak memory growth of a 3-tree binned fit at n = 10^7, p = 20 (MiB): "
                  + ", ".join(f"{key} {value / 2**20:.0f}" for key, value in memory.items())]
    meta = report.run_metadata(STUDY, argv, distributions=tuple(
        d for m, d in PEER_DISTRIBUTIONS if installed(m)), rounds=args.rounds,
        threads=args.threads, n_test=N_TEST)
    lines += ["", f"Command: {meta['command']}"]
    print("\n".join(lines))
    if args.output:
        with open(args.output, "w") as handle:
            handle.write("\n".join(lines) + "\n")
        report.write_results(results_frame(results, args.rounds),
                             os.path.splitext(args.output)[0] + ".csv", meta)


if __name__ == "__main__":
    main()
