"""ONNX export: model size and onnxruntime predict time against the forest's own.

For each case (generated data, make_classification, K classes), one aucforest
forest at its defaults and one scikit-learn RandomForestClassifier with the same
number of trees and about as many leaves (``max_leaf_nodes`` = the aucforest
trees' mean leaf count). Sizes: aucforest's model file (``aucforest.save``,
.npz), its ONNX file (``aucforest.to_onnx``: double, one tree copy per class),
and skl2onnx's ONNX of the scikit-learn forest (float32 input, no ZipMap, as
usually exported). Times (one thread each, alternating within every round,
median of the rounds): aucforest ``predict_proba``, onnxruntime on the
aucforest ONNX, onnxruntime on the scikit-learn ONNX and scikit-learn's
``predict_proba``, on a batch of test rows and row by row. The run also checks
that the ONNX probabilities equal predict_proba (largest difference).

From the repository root:

    python -m benchmarks.onnx_export [--n-train N] [--n-test M] [--trees T] [--rounds R]
        [--output benchmarks/results/onnx_export.md]
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

import aucforest
from aucforest import AUCForestClassifier, to_onnx

from .harness import timing
from .harness.optional import require

onnxruntime = require("onnxruntime", "benchmarks.onnx_export")
skl2onnx = require("skl2onnx", "benchmarks.onnx_export")

SYSTEMS = ("aucforest predict_proba", "onnxruntime, aucforest ONNX",
           "onnxruntime, scikit-learn ONNX", "scikit-learn predict_proba")


def session(model):
    """An onnxruntime session on one thread."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(model.SerializeToString(), options,
                                        providers=["CPUExecutionProvider"])


def file_bytes(write):
    """Size of the file ``write(path)`` writes."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model")
        write(path)
        return os.path.getsize(path)


def run_case(n_classes, args):
    """Sizes, times and the largest probability difference for one K."""
    X, y = make_classification(n_samples=args.n_train + args.n_test, n_features=20,
                               n_informative=10, n_classes=n_classes, n_clusters_per_class=1,
                               random_state=0)
    X_train, y_train, X_test = X[:args.n_train], y[:args.n_train], X[args.n_train:]
    forest = AUCForestClassifier(args.trees, random_state=0, n_jobs=1).fit(X_train, y_train)
    leaves = int(round(np.mean([tree.tree_.n_leaves for tree in forest.estimators_])))
    reference = RandomForestClassifier(args.trees, max_leaf_nodes=leaves, random_state=0,
                                       n_jobs=1).fit(X_train, y_train)
    sklearn_leaves = np.mean([tree.tree_.n_leaves for tree in reference.estimators_])

    start = time.perf_counter()
    ours = to_onnx(forest)
    export_seconds = time.perf_counter() - start
    theirs = skl2onnx.to_onnx(reference, X_train[:1].astype(np.float32),
                              options={id(reference): {"zipmap": False}})
    sizes = {"aucforest .npz (aucforest.save)": file_bytes(lambda p: aucforest.save(forest, p)),
             "aucforest .onnx (to_onnx)": len(ours.SerializeToString()),
             "scikit-learn .onnx (skl2onnx)": len(theirs.SerializeToString())}

    ours_session, theirs_session = session(ours), session(theirs)
    X64, X32 = X_test.astype(np.float64), X_test.astype(np.float32)
    batch = {
        SYSTEMS[0]: lambda rows: forest.predict_proba(X64[rows]),
        SYSTEMS[1]: lambda rows: ours_session.run(["probabilities"], {"X": X64[rows]})[0],
        SYSTEMS[2]: lambda rows: theirs_session.run(None, {"X": X32[rows]})[1],
        SYSTEMS[3]: lambda rows: reference.predict_proba(X32[rows]),
    }
    difference = float(np.abs(batch[SYSTEMS[1]](slice(None))
                              - forest.predict_proba(X64)).max())
    single_rows = [slice(i, i + 1) for i in range(args.single_rows)]

    def measure(name, round_):
        predict = batch[name]
        _, wall, _ = timing.timed(predict, slice(None))
        start = time.perf_counter()
        for rows in single_rows:
            predict(rows)
        return wall, (time.perf_counter() - start) / len(single_rows)

    times = timing.alternate(SYSTEMS, args.rounds, measure)
    medians = {name: tuple(np.median(values, axis=0)) for name, values in times.items()}
    return dict(n_classes=n_classes, leaves=leaves, sklearn_leaves=sklearn_leaves,
                min_samples=forest.predict_min_samples_, sizes=sizes, times=medians,
                difference=difference, export_seconds=export_seconds)


def report(cases, args, command):
    lines = ["# ONNX export: model size and predict time", "",
             f"Command: `{command}`", "",
             f"Recorded: {datetime.date.today()} at {_commit()}; aucforest "
             f"{aucforest.__version__}, onnxruntime {onnxruntime.__version__}, skl2onnx "
             f"{skl2onnx.__version__}, Python {platform.python_version()}, "
             f"{platform.machine()} ({os.cpu_count()} cores, shared with other jobs: ratios "
             "within one run only).", "",
             f"make_classification: {args.n_train} training rows, {args.n_test} test rows, "
             f"20 features, K classes; {args.trees} trees. scikit-learn's forest gets "
             "`max_leaf_nodes` = the aucforest trees' mean leaf count. One thread each, "
             f"systems alternating, median of {args.rounds} rounds; row by row: mean over "
             f"{args.single_rows} single-row calls.", ""]
    for case in cases:
        sizes, times = case["sizes"], case["times"]
        npz = sizes["aucforest .npz (aucforest.save)"]
        lines += [f"## K = {case['n_classes']}", "",
                  f"Mean leaves per tree: aucforest {case['leaves']} (predict_min_samples_ = "
                  f"{case['min_samples']}), scikit-learn {case['sklearn_leaves']:.0f}. "
                  f"to_onnx took {case['export_seconds']:.2f} s; largest |ONNX - "
                  f"predict_proba| = {case['difference']:.1e}.", "",
                  "| model file | bytes | / aucforest .npz |", "|---|---:|---:|"]
        lines += [f"| {name} | {size:,} | {size / npz:.2f} |" for name, size in sizes.items()]
        reference = times[SYSTEMS[0]]
        lines += ["", f"| predict | {args.n_test} rows, ms | / aucforest | one row, µs | "
                  "/ aucforest |", "|---|---:|---:|---:|---:|"]
        lines += [f"| {name} | {wall * 1e3:.1f} | {wall / reference[0]:.2f} | "
                  f"{single * 1e6:.0f} | {single / reference[1]:.2f} |"
                  for name, (wall, single) in times.items()]
        lines.append("")
    return "\n".join(lines)


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "an unknown commit"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.onnx_export",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=5_000)
    parser.add_argument("--n-test", type=int, default=10_000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--single-rows", type=int, default=200)
    parser.add_argument("--output", help="also write the report (markdown) here")
    args = parser.parse_args(argv)
    command = " ".join(["python -m benchmarks.onnx_export", *(argv or sys.argv[1:])])
    text = report([run_case(k, args) for k in args.classes], args, command)
    print(text)
    if args.output:
        with open(args.output, "w") as stream:
            stream.write(text)


if __name__ == "__main__":
    main()
