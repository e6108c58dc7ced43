"""Tasks, scheduler load and client memory of the Dask fit (issue 43, items 1-4),
before (the code at --before, e.g. the main branch) and after (this tree).

Each measurement runs in a subprocess whose PYTHONPATH puts one version of
aucforest first (the workers inherit it), so both versions run the same script:

* **tasks**: 20,000 rows x 10 features, 8 trees, ``LOCAL_ROWS`` lowered to 2,000
  (so that a few levels grow on the workers before nodes are finished in
  memory), on an in-process LocalCluster of 2 workers x 1 thread, at 20, 200
  and 2,000 partitions. A scheduler plugin counts every task the fit submits,
  by name, the largest number of tasks the scheduler held at once, and the
  pickled size of the round tasks' specs (the tables they carry); rounds come
  from the fit's own count.
* **memory**: the client's peak (tracemalloc, the cluster in another process,
  the rows generated on the workers) during ``fit`` at n = 200,000 and
  1,000,000 rows x 20 features, 8 trees at the defaults, against the final
  model's bytes (the trees' arrays).
* **same forest**: fingerprints (a hash of every tree's node arrays, the node
  size chosen, the OOB score) of small fits under several settings and
  chunkings; the two versions must print the same ones.

    python benchmarks/dask_tasks.py --before /work/main

writes benchmarks/results/dask_tasks.md (and .json beside it).
"""
import argparse
import hashlib
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
RESULTS = HERE.parent / "results"
PARTITIONS = (20, 200, 2000)
MEMORY_ROWS = (200_000, 1_000_000)


# ---------------------------------------------------------------------------- children

def _tasks(partitions):
    import dask.array as da
    import distributed
    from distributed.diagnostics.plugin import SchedulerPlugin
    from sklearn.datasets import make_classification

    import aucforest._dask as dask_fit
    from aucforest import AUCForestClassifier

    class Counter(SchedulerPlugin):
        def __init__(self, scheduler):
            self.scheduler, self.kinds, self.peak, self.spec_bytes = scheduler, {}, 0, {}
            self.seen = set()

        def update_graph(self, scheduler, *, tasks, **kwargs):
            for key in tasks:
                key = str(key)
                if not key.startswith("aucforest-") or key in self.seen:
                    continue
                self.seen.add(key)
                kind = key.split("-")[1]
                self.kinds[kind] = self.kinds.get(kind, 0) + 1
                if kind in ("round", "tables", "part", "take", "local"):
                    ts = scheduler.tasks.get(key)
                    if ts is not None and ts.run_spec is not None:
                        self.spec_bytes[kind] = self.spec_bytes.get(kind, 0) + len(
                            pickle.dumps(ts.run_spec, protocol=5))
            self.peak = max(self.peak, len(scheduler.tasks))

        def transition(self, key, start, finish, *args, **kwargs):
            self.peak = max(self.peak, len(self.scheduler.tasks))

    dask_fit.LOCAL_ROWS = 2000
    X, y = make_classification(20_000, 10, n_informative=5, random_state=0)
    X = X.astype(np.float32)
    size = -(-X.shape[0] // partitions)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        counter = Counter(cluster.scheduler)
        cluster.scheduler.add_plugin(counter, name="aucforest-task-counter")
        X_d, y_d = da.from_array(X, chunks=(size, -1)), da.from_array(y, chunks=size)
        start = time.perf_counter()
        forest = AUCForestClassifier(8, random_state=0).fit(X_d, y_d)
        seconds = time.perf_counter() - start
        stats = forest._dask_fit_stats
    rounds = stats["rounds"]
    per_batch = ("draw", "rootsum", "rootsums", "prior", "context", "oobrows")
    in_rounds = sum(n for kind, n in counter.kinds.items() if kind not in per_batch)
    return {"partitions": X_d.numblocks[0], "rounds": rounds, "seconds": seconds,
            "tasks": sum(counter.kinds.values()), "by_kind": counter.kinds,
            "tasks_per_round": in_rounds / rounds, "tasks_per_tree":
            sum(counter.kinds.values()) / 8, "peak_tasks_alive": counter.peak,
            "round_spec_bytes_per_round": sum(counter.spec_bytes.values()) / rounds,
            "spec_bytes": counter.spec_bytes, "sent_bytes": stats["sent_bytes"],
            "fit_stats": {k: v for k, v in stats.items() if k != "tasks_per_round"}}


def _cluster_process():
    """A LocalCluster in its own process (so that the client's memory is its own)."""
    code = ("import time, distributed\n"
            "c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,"
            " dashboard_address=None, silence_logs=50, memory_limit='3GiB')\n"
            "print(c.scheduler_address, flush=True)\n"
            "time.sleep(10**6)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def _memory(rows):
    import tracemalloc

    import dask.array as da
    import distributed

    from aucforest import AUCForestClassifier

    proc, address = _cluster_process()
    try:
        with distributed.Client(address) as client:
            state = da.random.RandomState(0)
            chunks = 50_000
            X = state.standard_normal((rows, 20), chunks=(chunks, 20)).astype(np.float32)
            score = 1.2 * X[:, 0] - 0.8 * X[:, 1] + 0.6 * X[:, 2] * X[:, 3] - 2.0
            y = (state.random_sample(rows, chunks=chunks) < 1 / (1 + da.exp(-score))).astype(
                np.int8)
            X, y = client.persist([X, y])
            distributed.wait([X, y])
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            start = time.perf_counter()
            forest = AUCForestClassifier(8, random_state=0).fit(X, y)
            seconds = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1] - base
            tracemalloc.stop()
            model = sum(e.tree_.nbytes for e in forest.estimators_)
            stats = forest._dask_fit_stats
    finally:
        proc.kill()
    return {"rows": rows, "seconds": seconds, "client_peak_bytes": peak,
            "model_bytes": model, "predict_min_samples": int(forest.predict_min_samples_),
            "tree_nodes": stats["tree_nodes"], "trees_bytes": stats.get("trees_bytes", 0)}


FINGERPRINT_CONFIGS = {
    "defaults_oob": dict(oob_score=True),
    "weighted_poisson": dict(replacement=True, class_weight="balanced", predict_min_samples=2,
                             oob_score=True),
    "gini_bounded": dict(criterion="gini", max_depth=6, min_samples_leaf=3, max_features=2,
                         nsplit=None, min_weight_fraction_leaf=0.002, max_bins=64),
    "balanced_ecp": dict(balanced_bootstrap=True, criterion="auc_ecp", nsplit=3,
                         oob_score=True),
    "size_20": dict(predict_min_samples=20),
}


def _fingerprint(forest):
    digest = hashlib.sha256()
    for estimator in forest.estimators_:
        for name, array in sorted(estimator.tree_.node_arrays().items()):
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(array).tobytes())
    digest.update(repr(int(forest.predict_min_samples_)).encode())
    if hasattr(forest, "oob_score_"):
        digest.update(np.float64(forest.oob_score_).tobytes())
    return digest.hexdigest()[:16]


def _same_forest():
    import dask.array as da
    import distributed
    from sklearn.datasets import make_classification

    import aucforest._dask as dask_fit
    from aucforest import AUCForestClassifier

    found = {}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as cluster, \
            distributed.Client(cluster):
        for n, local, classes in ((1500, 150, 3), (20_000, 2000, 2)):
            X, y = make_classification(n, 6, n_informative=4, n_redundant=1, n_classes=classes,
                                       random_state=0)
            X = X.astype(np.float32)
            X[np.random.RandomState(0).rand(*X.shape) < 0.05] = np.nan
            w = np.random.RandomState(1).uniform(0.0, 3.0, size=n)
            dask_fit.LOCAL_ROWS = local
            for name, params in FINGERPRINT_CONFIGS.items():
                for parts in (1, 3, 7):
                    size = -(-n // parts)
                    sw = da.from_array(w, chunks=size) if name == "weighted_poisson" else None
                    forest = AUCForestClassifier(4, random_state=7, **params).fit(
                        da.from_array(X, chunks=(size, -1)), da.from_array(y, chunks=size),
                        sample_weight=sw)
                    found[f"{n} rows {name} {parts} partitions"] = _fingerprint(forest)
    return found


# ---------------------------------------------------------------------------- driver

def _run(code, what, arg):
    """One measurement in a subprocess importing aucforest from `code`."""
    env = dict(os.environ, PYTHONPATH=str(code))
    out = subprocess.run([sys.executable, str(HERE), "--child", what, str(arg)], env=env,
                         cwd="/tmp", check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _mib(b):
    return f"{b / 2**20:.1f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="/work/main", help="the code to compare with")
    parser.add_argument("--after", default=str(HERE.parents[1]))
    parser.add_argument("--skip-before-partitions", type=int, nargs="*", default=[],
                        help="partition counts not run on the old code (too slow)")
    parser.add_argument("--report-only", action="store_true",
                        help="rewrite the markdown from the JSON of the last run")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.report_only:
        results = json.loads((RESULTS / "dask_tasks.json").read_text())
        _write_markdown(results, results.get("argv", []))
        return
    if args.child:
        what, arg = args.child
        result = {"tasks": _tasks, "memory": _memory,
                  "same": lambda _: _same_forest()}[what](int(arg))
        print(json.dumps(result, default=int))
        return
    versions = {"before": args.before, "after": args.after}
    results = {"tasks": {}, "memory": {}, "same": {}}
    for label, code in versions.items():
        results["same"][label] = _run(code, "same", 0)
        for partitions in PARTITIONS:
            if label == "before" and partitions in args.skip_before_partitions:
                continue
            results["tasks"][f"{label} {partitions}"] = _run(code, "tasks", partitions)
        for rows in MEMORY_ROWS:
            results["memory"][f"{label} {rows}"] = _run(code, "memory", rows)
    results["argv"] = argv if argv is not None else sys.argv[1:]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dask_tasks.json").write_text(json.dumps(results, indent=1, default=int))
    _write_markdown(results, results["argv"])


def _write_markdown(results, argv):
    lines = ["# Tasks, scheduler load and client memory of the Dask fit", "",
             "Made by `python benchmarks/dask_tasks.py " + " ".join(argv) + "` "
             "(see the script's docstring for the setup). Before: the main branch's "
             "`_dask.py`; after: this branch.", "",
             "## Tasks per round and per tree (20,000 rows x 10 features, 8 trees, "
             "LOCAL_ROWS = 2,000, 2 workers x 1 thread)", "",
             "| code | partitions | rounds | tasks per round | tasks per tree | peak tasks "
             "alive | round specs per round (KiB) | fit (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for key, r in results["tasks"].items():
        label = key.split()[0]
        lines.append(f"| {label} | {r['partitions']} | {r['rounds']} | "
                     f"{r['tasks_per_round']:.0f} | {r['tasks_per_tree']:.0f} | "
                     f"{r['peak_tasks_alive']} | {r['round_spec_bytes_per_round'] / 1024:.1f} | "
                     f"{r['seconds']:.1f} |")
    lines += ["", "On these small data a round finishes few groups (5 before, 19 after: "
              "a group now holds one tree's nodes), so the count per round is the "
              "partitions' 3 P (round, state, histograms) in both; what the change removes "
              "is P tasks per finishing group (`part`, 10,000 at 2,000 partitions, now "
              "`take`: one per worker and group, 38) and the tables inside every round task "
              "(round specs 6.5 MB per round at 2,000 partitions before, 0.9 MB after, "
              "whatever the nodes). At 1e9 rows a tree has about 600 finishing groups: "
              "P x 600 tasks per tree before, W x 600 after (the user guide's cost model). "
              "Peak tasks alive: the scheduler keeps the lineage of the finishing tasks' "
              "results (every round's small task records of the batch). Fit times are "
              "from a shared 2-core machine.", "", "Tasks by name:", ""]
    for key, r in results["tasks"].items():
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(r["by_kind"].items()))
        lines.append(f"* {key} partitions: {kinds}")
    lines += ["", "## The client's peak memory during fit (20 features, 8 trees, defaults; "
              "tracemalloc in the client process, the cluster in another)", "",
              "| code | rows | client peak (MiB) | final model (MiB) | node size chosen | "
              "fit (s) |", "|---|---|---|---|---|---|"]
    for key, r in results["memory"].items():
        lines.append(f"| {key.split()[0]} | {r['rows']:,} | {_mib(r['client_peak_bytes'])} | "
                     f"{_mib(r['model_bytes'])} | {r['predict_min_samples']} | "
                     f"{r['seconds']:.1f} |")
    lines += ["", "The client's peak grows with n before (all grown subtrees gathered before "
              "the node size is chosen) and is the final model plus about 42 MiB after "
              "(the bounded samples, the OOB sums, one round's histograms)."]
    before, after = results["same"].get("before", {}), results["same"].get("after", {})
    same = [k for k in after if before.get(k) == after[k]]
    lines += ["", "## The same forest", "",
              f"{len(same)} of {len(after)} fits (settings x chunkings) give the same "
              "fingerprint (node arrays of every tree, node size chosen, OOB score) before "
              "and after."]
    differ = [k for k in after if before.get(k) != after[k]]
    if differ:
        lines += ["", "Different: " + ", ".join(differ)]
    (RESULTS / "dask_tasks.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
