"""ONNX batch prediction: onnxruntime on the exported forest against ``predict_proba``.

For each number of classes K and of trees T, the default forest (``n_jobs=1``,
``min_samples_leaf`` as asked) fitted on make_classification (20 features, 10
informative, K classes, one cluster per class), and its ONNX graphs: the one
``aucforest.to_onnx`` builds (``to_onnx``), the same with the trees summed in
their order (``exact sums``: ``ForestGraph(exact_sums=True)``,
``predict_proba`` to the last bit), and with ``--baseline REV`` the graph of
``aucforest/export/_graph.py`` at git revision REV (read with ``git show``,
nothing checked out). Each runs in an onnxruntime session on one thread
(``intra_op_num_threads = inter_op_num_threads = 1``; graph optimizations
as ``--optimization`` says, onnxruntime's default "all") on the test rows in one batch; ``predict_proba`` and the
sessions alternate within every round (order reversed every other round), and
the report gives the median over the rounds of wall and CPU seconds
(``time.process_time``: less disturbed by other jobs on a shared machine) and
their ratios to ``predict_proba``. It also checks each graph: the largest
``|probabilities - predict_proba|``, whether the labels are ``predict``'s, and
how many ``TreeEnsemble`` nodes and tree nodes it holds.

From the repository root:

    python -m benchmarks.onnx_speed [--trees 100 500] [--classes 2 3] [--rounds 7]
        [--n-train 5000] [--n-test 10000] [--min-samples-leaf 1] [--baseline REV]
        [--optimization {disable,basic,extended,all}] [--output FILE]
"""
import argparse
import datetime
import importlib.util
import os
import platform
import subprocess
import sys
import time

import numpy as np
from sklearn.datasets import make_classification

import aucforest
from aucforest import AUCForestClassifier, to_onnx
from aucforest.export._exportable import ExportableForest
from aucforest.export._graph import ML_DOMAIN, ML_OPSET, ForestGraph

from .harness.optional import require
from .harness.report import git_revision

onnx = require("onnx", "benchmarks.onnx_speed")
onnxruntime = require("onnxruntime", "benchmarks.onnx_speed")

OPSET = 18
GRAPH_PATH = "aucforest/export/_graph.py"


OPTIMIZATION_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
                       "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


def session(model, optimization="all"):
    """An onnxruntime session on one thread, with graph optimizations at the
    ``optimization`` level (`OPTIMIZATION_LEVELS`)."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.graph_optimization_level = getattr(onnxruntime.GraphOptimizationLevel,
                                               OPTIMIZATION_LEVELS[optimization])
    return onnxruntime.InferenceSession(model.SerializeToString(), options,
                                        providers=["CPUExecutionProvider"])


def graph_model(forest, graph_class, **options):
    """The model of ``graph_class(ExportableForest(forest), OPSET, **options)``:
    input X double [N, p], outputs label and probabilities (as ``to_onnx``,
    without its metadata)."""
    from onnx import TensorProto, helper

    exportable = ExportableForest(forest, "benchmarks.onnx_speed")
    graph = graph_class(exportable, OPSET, **options)
    graph.build("X", "label", "probabilities")
    label_type = TensorProto.INT64 if graph.labels.dtype.kind == "i" else TensorProto.STRING
    onnx_graph = helper.make_graph(
        graph.nodes, "forest",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, exportable.n_features])],
        [helper.make_tensor_value_info("label", label_type, [None]),
         helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE,
                                       [None, graph.n_classes])])
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid(ML_DOMAIN, ML_OPSET)]
    model = helper.make_model(onnx_graph, opset_imports=opsets)
    model.ir_version = helper.find_min_ir_version_for(opsets)
    return model


def baseline_graph_class(revision):
    """``ForestGraph`` of ``aucforest/export/_graph.py`` at git ``revision``,
    imported as a module of the installed ``aucforest.export`` package."""
    source = subprocess.run(["git", "show", f"{revision}:{GRAPH_PATH}"], capture_output=True,
                            text=True, check=True).stdout
    spec = importlib.util.spec_from_loader("aucforest.export._graph_baseline", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "aucforest.export"
    # the repository's own file at a revision the user names
    exec(compile(source, f"{revision}:{GRAPH_PATH}", "exec"), module.__dict__)  # noqa: S102
    return module.ForestGraph


def ensemble_size(model):
    """(TreeEnsemble nodes, tree nodes: splits and leaves) of a model."""
    ensembles = [node for node in model.graph.node if node.op_type == "TreeEnsemble"]
    sizes = 0
    for node in ensembles:
        attributes = {attribute.name: attribute for attribute in node.attribute}
        sizes += len(attributes["nodes_featureids"].ints) + len(attributes["leaf_targetids"].ints)
    return len(ensembles), sizes


def run_case(n_classes, n_trees, args):
    """Times (wall, CPU) per system, and each graph's checks, for one K and T."""
    X, y = make_classification(n_samples=args.n_train + args.n_test, n_features=20,
                               n_informative=10, n_classes=n_classes, n_clusters_per_class=1,
                               random_state=0)
    X_train, y_train, X_test = X[:args.n_train], y[:args.n_train], X[args.n_train:]
    forest = AUCForestClassifier(n_trees, min_samples_leaf=args.min_samples_leaf, random_state=0,
                                 n_jobs=1).fit(X_train, y_train)
    models = {"to_onnx": to_onnx(forest),
              "exact sums": graph_model(forest, ForestGraph, exact_sums=True)}
    if args.baseline:
        revision = subprocess.run(["git", "rev-parse", "--short", args.baseline],
                                  capture_output=True, text=True, check=True).stdout.strip()
        models[f"graph of {revision}"] = graph_model(forest, baseline_graph_class(revision))
    sessions = {name: session(model, args.optimization) for name, model in models.items()}
    proba, labels = forest.predict_proba(X_test), forest.predict(X_test)
    checks = {}
    for name, model in models.items():
        label, probabilities = sessions[name].run(["label", "probabilities"], {"X": X_test})
        checks[name] = {"difference": float(np.abs(probabilities - proba).max()),
                        "labels": bool(np.array_equal(label, labels)),
                        "bit_exact": bool(np.array_equal(probabilities, proba)),
                        "size": ensemble_size(model)}
    predict = {"predict_proba": lambda: forest.predict_proba(X_test),
               **{name: (lambda s=s: s.run(["probabilities"], {"X": X_test}))
                  for name, s in sessions.items()}}
    times = {name: [] for name in predict}
    for round_ in range(args.rounds):
        names = list(predict) if round_ % 2 == 0 else list(predict)[::-1]
        for name in names:
            wall, cpu = time.perf_counter(), time.process_time()
            predict[name]()
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    medians = {name: np.median(values, axis=0) for name, values in times.items()}
    return {"n_classes": n_classes, "n_trees": n_trees, "times": medians, "checks": checks,
            "leaves": float(np.mean([tree.tree_.n_leaves for tree in forest.estimators_])),
            "min_samples": forest.predict_min_samples_}


def report(cases, args, command):
    lines = ["# ONNX batch prediction: onnxruntime against predict_proba", "",
             f"Command: `{command}`", "",
             (f"Recorded: {datetime.date.today()} at {git_revision()}; aucforest "
              f"{aucforest.__version__}, onnxruntime {onnxruntime.__version__}, onnx "
              f"{onnx.__version__}, Python {platform.python_version()}, {platform.machine()} "
              f"({os.cpu_count()} cores, shared with other jobs: ratios within one run only)."),
             "",
             (f"make_classification: {args.n_train} training rows, {args.n_test} test rows "
              "in one batch, 20 features, K classes; the default forest with n_jobs=1 and "
              f"min_samples_leaf={args.min_samples_leaf}. One "
              f"onnxruntime thread, graph optimizations {args.optimization!r}. Systems alternate within each round; medians of "
              f"{args.rounds} rounds of wall and CPU time, ratios to predict_proba."), ""]
    for case in cases:
        lines += [f"## K = {case['n_classes']}, {case['n_trees']} trees", "",
                  (f"Mean leaves per tree {case['leaves']:.0f} (predict_min_samples_ = "
                   f"{case['min_samples']})."), "",
                  ("| system | wall ms | / predict_proba | CPU ms | / predict_proba | "
                   "TreeEnsemble nodes | tree nodes | max abs diff | bit-exact | labels |"),
                  "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        wall_0, cpu_0 = case["times"]["predict_proba"]
        for name, (wall, cpu) in case["times"].items():
            check = case["checks"].get(name)
            cells = ["", "", "", "", ""] if check is None else [
                str(check["size"][0]), f"{check['size'][1]:,}", f"{check['difference']:.1e}",
                "yes" if check["bit_exact"] else "no",
                "= predict" if check["labels"] else "DIFFER"]
            lines.append(f"| {name} | {wall * 1e3:.1f} | {wall / wall_0:.2f} | {cpu * 1e3:.1f} "
                         f"| {cpu / cpu_0:.2f} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.onnx_speed",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=5_000)
    parser.add_argument("--n-test", type=int, default=10_000)
    parser.add_argument("--trees", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-samples-leaf", type=int, default=1,
                        help="the forest's min_samples_leaf (above 1: leaf proportions such "
                             "as thirds, which exact sums add in the trees' order)")
    parser.add_argument("--baseline", help="also time the graph of _graph.py at this git revision")
    parser.add_argument("--optimization", choices=list(OPTIMIZATION_LEVELS), default="all",
                        help="onnxruntime's graph optimization level (default: all, its own)")
    parser.add_argument("--output", help="also write the report (markdown) here")
    args = parser.parse_args(argv)
    command = " ".join(["python -m benchmarks.onnx_speed", *(sys.argv[1:] if argv is None
                                                             else argv)])
    cases = []
    for n_classes in args.classes:
        for n_trees in args.trees:
            cases.append(run_case(n_classes, n_trees, args))
            print(report(cases[-1:], args, command).split("\n\n", 4)[-1], flush=True)
    text = report(cases, args, command)
    print(text)
    if args.output:
        with open(args.output, "w") as stream:
            stream.write(text)


if __name__ == "__main__":
    main()
