"""Model files and prediction with the trees collapsed to the node size chosen,
against an earlier build of aucforest that kept the trees as grown and stopped
each row at the node size while predicting.

Each system runs in its own subprocess (its build first on PYTHONPATH); the
systems alternate, ROUNDS rounds (environment variable, default 3), and the
medians are compared. Per data set: the default forest's node size, its nodes,
its model file's size and the time of predict_proba on the test rows (two
threads, the default n_jobs=None being one: both are shown).

    python -m benchmarks.collapsed_trees NEW_ROOT OLD_ROOT
    ROUNDS=1 python -m benchmarks.collapsed_trees NEW_ROOT OLD_ROOT --trees 20 --test-rows 1000

NEW_ROOT and OLD_ROOT are folders holding a built ``aucforest`` (for example a
``git worktree`` of the earlier commit built with ``python setup.py build_ext
--inplace``). The systems alternate as ``harness.timing.alternate`` orders them.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from .harness import timing
from .harness.report import command_line

# (rows, features, classes, minority share): imbalanced sets where the default
# chooses a node size above 1
DATA_SETS = ((3_000, 20, 3, 0.05), (20_000, 20, 2, 0.05), (20_000, 20, 3, 0.1))
TEST_ROWS = 100_000
TREES = 500

MEASURE = r"""
import json, os, sys, time, tempfile
import numpy as np
from sklearn.datasets import make_classification
from aucforest import AUCForestClassifier
from aucforest.io import save  # in every version, before and after the estimator's save
n, p, k, minority, test_rows, trees = map(float, sys.argv[1:7])
n, p, k, test_rows, trees = int(n), int(p), int(k), int(test_rows), int(trees)
weights = [1 - minority * (k - 1)] + [minority] * (k - 1)
X, y = make_classification(n + test_rows, p, n_informative=p // 2, n_classes=k,
                           weights=weights, flip_y=0.05, random_state=0)
forest = AUCForestClassifier(trees, random_state=0, n_jobs=2).fit(X[:n], y[:n])
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "model.npz")
    save(forest, path)
    size = os.path.getsize(path)
times = {}
for jobs in (1, 2):
    forest.set_params(n_jobs=jobs)
    forest.predict_proba(X[n:n + 1000])  # warm-up
    start = time.perf_counter()
    proba = forest.predict_proba(X[n:])
    times[jobs] = time.perf_counter() - start
print(json.dumps({"node_size": int(forest.predict_min_samples_),
                  "nodes": int(sum(t.tree_.node_count for t in forest.estimators_)),
                  "file_bytes": size, "predict_1": times[1], "predict_2": times[2],
                  "proba_sum": float(proba.sum())}))
"""


def measure(root, data_set, test_rows=TEST_ROWS, trees=TREES):
    env = dict(os.environ, PYTHONPATH=root)
    args = [str(v) for v in (*data_set, test_rows, trees)]
    with tempfile.TemporaryDirectory() as cwd:  # not the source folder
        out = subprocess.run([sys.executable, "-c", MEASURE, *args], env=env, cwd=cwd,
                             check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.collapsed_trees",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("new_root")
    parser.add_argument("old_root")
    parser.add_argument("--trees", type=int, default=TREES)
    parser.add_argument("--test-rows", type=int, default=TEST_ROWS)
    args = parser.parse_args(argv)
    new_root, old_root = args.new_root, args.old_root
    rounds = int(os.environ.get("ROUNDS", 3))
    print(f"default forest, {args.trees} trees, n_jobs=2 to fit; predict_proba on "
          f"{args.test_rows:,} rows, median of {rounds} alternating rounds; "
          "ratio = collapsed / grown")
    print("| rows x p, K, minority | node size | nodes grown -> collapsed | file MB grown -> "
          "collapsed | predict 1 thread (ratio) | predict 2 threads (ratio) |")
    print("|---|---|---|---|---|---|")
    for data_set in DATA_SETS:
        roots = {"new": new_root, "old": old_root}
        runs = timing.alternate(list(roots), rounds, lambda name, _: measure(
            roots[name], data_set, args.test_rows, args.trees), reverse=False)
        new, old = runs["new"][0], runs["old"][0]
        assert new["node_size"] == old["node_size"]
        assert abs(new["proba_sum"] - old["proba_sum"]) < 1e-6 * args.test_rows  # the same model
        t = {f"{name}_{jobs}": timing.median([r[f"predict_{jobs}"] for r in runs[name]])
             for name in runs for jobs in (1, 2)}
        n, p, k, minority = data_set
        print(f"| {n:,} x {p}, {k}, {minority} | {new['node_size']} | {old['nodes']:,} -> "
              f"{new['nodes']:,} | {old['file_bytes'] / 1e6:.1f} -> "
              f"{new['file_bytes'] / 1e6:.1f} | {t['old_1']:.2f} -> {t['new_1']:.2f} s "
              f"({t['new_1'] / t['old_1']:.2f}) | {t['old_2']:.2f} -> {t['new_2']:.2f} s "
              f"({t['new_2'] / t['old_2']:.2f}) |", flush=True)
    print(f"\n    {command_line('collapsed_trees', argv)}")


if __name__ == "__main__":
    main()
