"""Fitting on rows that stay on Dask workers (issue 25), side by side in one run.

A LocalCluster of 2 workers (1 thread each, memory_limit set) holds a data set
generated on the workers (nothing n-sized is built on the client for the Dask
fits). For each system: fit time, test AUC (200,000 held-out rows), the
client's and each worker's peak resident memory during the fit (sampled every
0.2 s), and the bytes the workers sent per tree, counted two ways: Dask's
transfer counter (data a worker hands to another worker or to the client
through Dask; also by the kind of key fetched, from the workers' transfer
logs) and the bytes_sent of every TCP socket of the worker processes
(``ss -tinp``, sampled every 0.2 s: this sees the peers' own sockets too, and
misses only sockets that open and close between two samples). Systems:
aucforest on the dask array (rows on the workers), xgboost's
DaskXGBRFClassifier and LightGBM's DaskLGBMClassifier(boosting_type="rf") on
the same cluster and data when installed, and aucforest's in-memory binned fit
of the same rows (computed to the client) on the same two cores (n_jobs=2).

With ``--leaves L [L ...]`` the systems are compared at the same tree size
(issue 43): for each L, aucforest with ``max_leaf_nodes=L``, LightGBM's rf
with ``num_leaves=L`` and DaskXGBRFClassifier with ``max_leaves=L``,
``grow_policy="lossguide"`` (hist); with ``--depth`` also aucforest with
``max_depth=log2(L + 1)`` (when L + 1 is a power of two: the same leaf
bound). Every system's leaf counts are read from its fitted model (mean and
largest per tree). A scheduler plugin counts the tasks that each fit runs, the
same count for every system, and the model's bytes (aucforest: its trees'
node arrays; LightGBM: its model string; xgboost: its raw booster) are given
next to the client's peak. The LocalCluster's scheduler runs in the client's
process: the client's peak includes the scheduler.

    python -m benchmarks.dask_rows --rows 1000000 --trees 20 --peers --repeat 3
    python -m benchmarks.dask_rows --rows 1000000 --trees 20 --peers --leaves 4095 \
        --no-in-memory --repeat 2 --json benchmarks/results/dask_rows_1e6.json
    python -m benchmarks.dask_rows --rows 20000 --trees 3        # a smoke run

With ``--repeat R`` the systems alternate R times (on a shared machine) and
the table gives the median of each column over the repeats.

The data: p = 20 standard normal features, 5 of them carrying the signal
(a logistic model with two interactions), 10% positives, 2% NaN.
"""
import argparse
import os
import re
import subprocess
import threading
import time

import numpy as np

from .harness.optional import require
from .harness.report import command_line

FEATURES = 20
TEST_ROWS = 200_000
CHUNK_ROWS = 250_000


def make_block(block_id, rows, features, seed):
    """Rows of one partition: a deterministic function of (seed, block)."""
    rng = np.random.default_rng([seed, block_id])
    X = rng.standard_normal((rows, features)).astype(np.float32)
    score = (1.2 * X[:, 0] - 0.8 * X[:, 1] + 0.6 * X[:, 2] * X[:, 3]
             + 0.7 * np.abs(X[:, 4]) - 3.0)
    y = (rng.random(rows) < 1 / (1 + np.exp(-score))).astype(np.int8)
    X[rng.random(X.shape) < 0.02] = np.nan
    return X, y


def dask_data(rows, seed):
    import dask
    import dask.array as da
    sizes = [CHUNK_ROWS] * (rows // CHUNK_ROWS) + ([rows % CHUNK_ROWS] if rows % CHUNK_ROWS else [])
    blocks = [dask.delayed(make_block)(i, r, FEATURES, seed) for i, r in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(b[0], (r, FEATURES), np.float32)
                        for b, r in zip(blocks, sizes)])
    y = da.concatenate([da.from_delayed(b[1], (r,), np.int8) for b, r in zip(blocks, sizes)])
    return X, y


def tcp_bytes_sent(pids):
    """{socket: bytes_sent} of the TCP sockets of the processes `pids` (ss -tinp)."""
    try:
        out = subprocess.run(["ss", "-tinpH"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    sent, socket = {}, None
    for line in out.splitlines():
        if not line[:1].isspace():
            owner = re.search(r"pid=(\d+)", line)
            fields = line.split()
            socket = ((fields[3], fields[4]) if owner and int(owner.group(1)) in pids
                      and len(fields) > 4 else None)
        elif socket is not None:
            count = re.search(r"bytes_sent:(\d+)", line)
            if count:
                sent[socket] = int(count.group(1))
    return sent


class Peaks:
    """Peak RSS of the client and of each worker, and the TCP bytes the
    workers sent, while a block of code runs."""

    def __init__(self, client):
        self.client, self.stop, self.client_peak, self.worker_peak = client, False, 0, {}
        self.pids = set(client.run(os.getpid).values())
        import psutil
        self.client_start = psutil.Process().memory_info().rss
        self.worker_start = sorted(client.run(
            lambda: __import__("psutil").Process().memory_info().rss).values())
        self.tcp_start = tcp_bytes_sent(self.pids)
        self.tcp_last = dict(self.tcp_start)

    def _poll(self):
        import psutil
        me = psutil.Process()
        while not self.stop:
            self.client_peak = max(self.client_peak, me.memory_info().rss)
            try:
                for worker, rss in self.client.run(
                        lambda: __import__("psutil").Process().memory_info().rss).items():
                    self.worker_peak[worker] = max(self.worker_peak.get(worker, 0), rss)
            except Exception:
                pass
            self.tcp_last.update(tcp_bytes_sent(self.pids))
            time.sleep(0.2)

    def tcp_sent(self):
        return sum(v - self.tcp_start.get(k, 0) for k, v in self.tcp_last.items())

    def __enter__(self):
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()
        self.tcp_last.update(tcp_bytes_sent(self.pids))


def sent_bytes(client):
    return sum(client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total)
               .values())


def task_counter():
    """A scheduler plugin (a SchedulerPlugin, imported here with distributed)
    counting the tasks run; see `TaskCounter`."""
    from distributed.diagnostics.plugin import SchedulerPlugin

    class Plugin(TaskCounter, SchedulerPlugin):
        pass
    return Plugin()


class TaskCounter:
    """A scheduler plugin counting the tasks run (transitions to "processing")
    and the distinct keys submitted: the same count for every system."""

    name = "dask-rows-task-counter"

    def __init__(self):
        self.runs, self.keys = 0, set()

    def update_graph(self, scheduler, *, tasks=(), **kwargs):
        self.keys.update(str(key) for key in tasks)

    def transition(self, key, start, finish, *args, **kwargs):
        if finish == "processing":
            self.runs += 1


def task_counts(cluster):
    plugin = cluster.scheduler.plugins[TaskCounter.name]
    return plugin.runs, len(plugin.keys)


def leaves_aucforest(model):
    return [e.tree_.n_leaves for e in model.estimators_]


def leaves_lightgbm(model):
    return [t["num_leaves"] for t in model.to_local().booster_.dump_model()["tree_info"]]


def leaves_xgboost(model):
    return [dump.count("leaf=") for dump in model.get_booster().get_dump()]


def bytes_aucforest(model):
    return sum(e.tree_.nbytes for e in model.estimators_)


def bytes_lightgbm(model):
    return len(model.to_local().booster_.model_to_string().encode())


def bytes_xgboost(model):
    return len(model.get_booster().save_raw("ubj"))


def clear_transfer_logs(dask_worker):
    dask_worker.transfer_incoming_log.clear()


def transfer_log(dask_worker):
    return [(str(key), size) for entry in dask_worker.transfer_incoming_log
            for key, size in entry.get("keys", {}).items()]


def transfers_by_kind(client):
    """MiB fetched from other workers during the fit, by the kind of key
    (aucforest's task names; the first word of other keys)."""
    kinds = {}
    for entries in client.run(transfer_log).values():
        for key, size in entries:
            words = key.strip("('\"").split("-")
            kind = words[1] if words[0] == "aucforest" and len(words) > 1 else words[0]
            kinds[kind] = kinds.get(kind, 0) + size / 2**20
    return dict(sorted(kinds.items(), key=lambda item: -item[1]))


def run_system(system, client, cluster, trees, X_test, y_test):
    from aucforest.metrics import multiclass_auc
    before = sent_bytes(client)
    runs_before, keys_before = task_counts(cluster)
    client.run(clear_transfer_logs)
    with Peaks(client) as peaks:
        start = time.perf_counter()
        model = system["fit"]()
        seconds = time.perf_counter() - start
    moved = sent_bytes(client) - before
    runs_after, keys_after = task_counts(cluster)
    transfers = transfers_by_kind(client)
    auc = multiclass_auc(y_test, system["predict"](model, X_test))
    workers = sorted(peaks.worker_peak.values())
    leaves = system["leaves"](model)
    result = {"system": system["name"], "fit_s": seconds, "auc": auc,
              "client_peak_mib": peaks.client_peak / 2**20,
              "client_start_mib": peaks.client_start / 2**20,
              "worker_start_mib": [w / 2**20 for w in peaks.worker_start],
              "worker_peaks_mib": [w / 2**20 for w in workers],
              "dask_mib_per_tree": moved / trees / 2**20,
              "tcp_mib_per_tree": peaks.tcp_sent() / trees / 2**20,
              "scheduler_tasks_per_tree": (runs_after - runs_before) / trees,
              "scheduler_keys_per_tree": (keys_after - keys_before) / trees,
              "leaves_mean": float(np.mean(leaves)), "leaves_max": int(np.max(leaves)),
              "model_mib": system["bytes"](model) / 2**20,
              "transfers_mib_by_kind": {k: round(v, 1) for k, v in transfers.items()}}
    print(f"  {result}", flush=True)
    return dict(result, model=model)


def xgboost_system(trees, leaves):
    from xgboost.dask import DaskXGBRFClassifier
    if leaves is None:
        name, bound = "xgboost DaskXGBRFClassifier (max_depth 16)", dict(max_depth=16)
    else:
        name = f"xgboost DaskXGBRFClassifier (max_leaves {leaves}, lossguide)"
        bound = dict(max_leaves=leaves, grow_policy="lossguide", max_depth=0,
                     min_child_weight=1e-3)
    return {"name": name, "leaves": leaves_xgboost, "bytes": bytes_xgboost,
            "fit": lambda X, y: DaskXGBRFClassifier(
                n_estimators=trees, subsample=0.632, colsample_bynode=0.25,
                tree_method="hist", max_bin=256, random_state=0, **bound).fit(X, y),
            "predict": lambda m, Xt: m.get_booster().inplace_predict(Xt)[:, None] * [-1, 1]
            + [1, 0]}


def lightgbm_system(trees, leaves):
    from lightgbm import DaskLGBMClassifier
    return {"name": f"LightGBM DaskLGBMClassifier rf (num_leaves {leaves})",
            "leaves": leaves_lightgbm, "bytes": bytes_lightgbm,
            "fit": lambda X, y: DaskLGBMClassifier(
                boosting_type="rf", n_estimators=trees, bagging_fraction=0.632,
                bagging_freq=1, feature_fraction_bynode=0.25, num_leaves=leaves,
                min_child_samples=1, max_bin=255, random_state=0, verbose=-1).fit(X, y),
            "predict": lambda m, Xt: m.to_local().predict_proba(Xt)}


def aucforest_system(name, **params):
    from aucforest import AUCForestClassifier
    return {"name": name, "leaves": leaves_aucforest, "bytes": bytes_aucforest,
            "fit": lambda X, y: AUCForestClassifier(**params).fit(X, y),
            "predict": lambda m, Xt: m.predict_proba(Xt), "aucforest_dask": True}


def cost_model(n, partitions, workers, trees, p=FEATURES, m=5, K=2):
    """docs/user_guide.md section 9's predictions (default parameters,
    ``predict_min_samples="oob"``: C = 6 node-size candidates)."""
    r, B, C = 0.632, 256, 6
    from aucforest._dask import FINISH_BACKLOG_BYTES, FINISH_BACKLOG_PER_WORKER, local_rows
    local = local_rows(n)
    R = max(131_072, local)
    T = int(np.clip((1 << 28) * workers // (5 * n), 1, 32))
    T = min(T, trees)
    rounds_per_batch = 1.5 * np.log2(r * n / local) + 4
    per_round = 1 + partitions + 8 * (partitions / 8 + workers) / 7
    groups_per_tree = r * n / R
    O = 2 * r * n / local
    H = O * m * B * K * 8  # no case column: no weights, drawn without replacement
    grown_nodes_per_tree = 0.16 * n
    return {
        "L (in-memory node size)": local, "R (rows per finishing task)": R,
        "T (trees per batch)": T,
        "rounds per batch": rounds_per_batch,
        "take-out rounds per batch (at most)":
            r * n * T * (p + 9) / (workers * FINISH_BACKLOG_BYTES / 2),
        "tasks per round (without finishing)": per_round,
        "finishing groups per tree": groups_per_tree,
        "tasks per tree": per_round * rounds_per_batch / T
        + (workers + 3) * groups_per_tree
        + (2 * partitions + workers) / T,
        "histograms per tree to the client (MiB)": H / 2**20,
        "finishing rows between workers per tree (MiB)":
            r * n * (p + 2) * (workers - 1) / workers / 2**20,
        "per worker: rows + round state (MiB)": n / workers * (p + 8 + 10 * T) / 2**20,
        "per worker: finishing (backlog + one task) (MiB)":
            (max(min(FINISH_BACKLOG_PER_WORKER * R * (p + 9), FINISH_BACKLOG_BYTES),
                 R * (p + 9)) + R * (p + 2)
             + local * (p + 40)) / 2**20,
        "per worker: grown subtrees waiting under oob (MiB)":
            grown_nodes_per_tree * (65 + 8 * K) * trees / workers / 2**20,
        "client budget (MiB, without the model)":
            (min(H * T, 1 << 26) + 200_000 * 4 * p + 100_000 * (5 * p + 12 + 8 * C * K)) / 2**20,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_rows",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--memory-limit", default="6GiB")
    parser.add_argument("--peers", action="store_true", help="xgboost and LightGBM too")
    parser.add_argument("--no-in-memory", action="store_true")
    parser.add_argument("--no-xgboost", action="store_true",
                        help="with --peers: LightGBM only (xgboost is the slowest)")
    parser.add_argument("--leaves", type=int, nargs="*", default=[],
                        help="compare at these leaf bounds (aucforest max_leaf_nodes, "
                             "LightGBM num_leaves, xgboost max_leaves)")
    parser.add_argument("--depth", action="store_true",
                        help="with --leaves: also aucforest with max_depth = log2(L + 1)")
    parser.add_argument("--no-defaults", action="store_true",
                        help="leave out aucforest at its defaults")
    parser.add_argument("--repeat", type=int, default=1,
                        help="alternate the systems this many times; medians reported")
    parser.add_argument("--json", help="also write the runs and the cost model here")
    args = parser.parse_args(argv)
    print(f"command: {command_line('dask_rows', argv)}", flush=True)
    distributed = require("distributed", "benchmarks.dask_rows")
    Client, LocalCluster, wait = distributed.Client, distributed.LocalCluster, distributed.wait

    from aucforest import AUCForestClassifier

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=args.memory_limit,
                           dashboard_address=":0", silence_logs=50)
    client = Client(cluster)
    cluster.scheduler.add_plugin(task_counter(), name=TaskCounter.name)
    X, y = dask_data(args.rows, seed=0)
    X, y = client.persist([X, y])
    wait([X, y])  # the data generated on the workers before any clock starts
    X_test, y_test = make_block(10**6, TEST_ROWS, FEATURES, seed=1)
    params = dict(n_estimators=args.trees, random_state=0, max_bins=255)
    systems = []
    if not args.no_defaults:
        systems.append(aucforest_system("aucforest, dask (rows on workers)", **params))
    peers = []
    if args.peers:
        for name, make in (("xgboost", xgboost_system), ("lightgbm", lightgbm_system)):
            if name == "xgboost" and args.no_xgboost:
                continue
            try:
                __import__(name)
                peers.append(make)
            except ImportError as error:
                print(f"{name}: not installed", error)
    if not args.leaves:
        systems += [make(args.trees, None if make is xgboost_system else 4095)
                    for make in peers]
    for leaves in args.leaves:
        systems.append(aucforest_system(f"aucforest, dask, max_leaf_nodes {leaves}",
                                        max_leaf_nodes=leaves, **params))
        depth = int(np.log2(leaves + 1))
        if args.depth and 2 ** depth == leaves + 1:
            systems.append(aucforest_system(f"aucforest, dask, max_depth {depth}",
                                            max_depth=depth, **params))
        systems += [make(args.trees, leaves) for make in peers]
    local = {}

    def fit_in_memory(X_, y_):
        return AUCForestClassifier(**params, n_jobs=2).fit(local["X"], local["y"])
    if not args.no_in_memory:
        systems.append({"name": "aucforest, in memory (n_jobs=2)", "fit": fit_in_memory,
                        "predict": lambda m, Xt: m.predict_proba(Xt),
                        "leaves": leaves_aucforest, "bytes": bytes_aucforest})
    for system in systems:
        system["fit"] = (lambda fit: lambda: fit(X, y))(system["fit"])

    runs = {system["name"]: [] for system in systems}
    stats_of = {}
    for repeat in range(args.repeat):
        print(f"repeat {repeat + 1} of {args.repeat}", flush=True)
        for system in systems:
            name = system["name"]
            if name.startswith("aucforest, in memory"):  # the rows on the client for this run only
                local["X"], local["y"] = client.compute([X, y], sync=True)
            result = run_system(system, client, cluster, args.trees, X_test, y_test)
            local.clear()
            if system.get("aucforest_dask"):
                stats = result["model"]._dask_fit_stats
                result["tasks_per_tree"] = stats["tasks_per_tree"]
                print(f"  aucforest dask: {stats['rounds']} rounds, {stats['tasks']} tasks "
                      f"({stats['tasks_per_tree']:.1f} per tree; per round "
                      f"{stats['tasks_per_round']}); per tree to the client: "
                      f"{stats['gathered_bytes'] / args.trees / 2**20:.2f} MiB in all, "
                      f"of which histograms "
                      f"{stats.get('histograms_bytes', 0) / args.trees / 2**20:.2f} MiB and "
                      f"trees {stats.get('trees_bytes', 0) / args.trees / 2**20:.2f} MiB; "
                      f"sent by the client {stats['sent_bytes'] / args.trees / 2**20:.3f} "
                      f"MiB; largest gather {stats['largest_gather_bytes'] / 2**20:.1f} MiB, "
                      f"largest row count gathered {stats['largest_gathered_rows']:,}",
                      flush=True)
                print(f"  fit stats: {stats}", flush=True)
                stats_of[name] = {k: v for k, v in stats.items() if k not in
                                  ("sample", "positive")}
            del result["model"]
            runs[name].append(result)

    partitions = X.numblocks[0]
    print(f"\n{args.rows:,} rows x {FEATURES} features in {partitions} partitions, "
          f"{args.trees} trees, 2 workers x 1 thread, memory_limit {args.memory_limit}; "
          f"median of {args.repeat} alternating runs\n")
    print("| system | fit (s) | test AUC | leaves per tree: mean / max | client: before fit -> "
          "peak (MiB) | model (MiB) | workers: before fit -> peak (MiB) "
          "| tasks per tree: scheduler (aucforest's count) | MiB sent by workers per tree: Dask counter | TCP (ss) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, results in runs.items():
        def median(key):
            return float(np.median([r[key] for r in results]))
        workers = np.median([r["worker_peaks_mib"] for r in results], axis=0)
        workers_start = np.median([r["worker_start_mib"] for r in results], axis=0)
        own = (f" ({median('tasks_per_tree'):.1f})" if "tasks_per_tree" in results[0]
               else "")
        print(f"| {name} | {median('fit_s'):.1f} | {median('auc'):.4f} | "
              f"{median('leaves_mean'):.0f} / {median('leaves_max'):.0f} | "
              f"{median('client_start_mib'):.0f} -> {median('client_peak_mib'):.0f} | "
              f"{median('model_mib'):.1f} | "
              f"{' / '.join(f'{w:.0f}' for w in workers_start)} -> "
              f"{' / '.join(f'{w:.0f}' for w in workers)} | "
              f"{median('scheduler_tasks_per_tree'):.1f}{own} | "
              f"{median('dask_mib_per_tree'):.1f} | {median('tcp_mib_per_tree'):.1f} |")
    print("\nfit times (s) of each repeat:")
    for name, results in runs.items():
        print(f"  {name}: " + ", ".join(f"{r['fit_s']:.1f}" for r in results))
    model = cost_model(args.rows, partitions, 2, args.trees)
    print("\ncost model (docs/user_guide.md section 9) at these settings:")
    for key, value in model.items():
        print(f"  {key}: {value:,.2f}")
    if args.json:
        import json
        with open(args.json, "w") as handle:
            json.dump({"command": command_line("dask_rows", argv), "rows": args.rows,
                       "trees": args.trees, "partitions": partitions, "runs": runs,
                       "aucforest_fit_stats": stats_of, "cost_model": model},
                      handle, indent=1, default=lambda v: v.tolist()
                      if hasattr(v, "tolist") else str(v))
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
