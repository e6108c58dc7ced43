"""Fitting on rows that stay on Dask workers (issue 25), side by side in one run.

A LocalCluster of 2 workers (1 thread each, memory_limit set) holds a data set
generated on the workers (nothing n-sized is built on the client for the Dask
fits). For each system: fit time, test AUC (200,000 held-out rows), the
client's and each worker's peak resident memory during the fit (sampled every
0.2 s), and the bytes the workers sent per tree, counted two ways: Dask's
transfer counter (data a worker hands to another worker or to the client
through Dask) and the bytes_sent of every TCP socket of the worker processes
(``ss -tinp``, sampled every 0.2 s: this sees the peers' own sockets too, and
misses only sockets that open and close between two samples). Systems:
aucforest on the dask array (rows on the workers), xgboost's
DaskXGBRFClassifier and LightGBM's DaskLGBMClassifier(boosting_type="rf") on
the same cluster and data when installed, and aucforest's in-memory binned fit
of the same rows (computed to the client) on the same two cores (n_jobs=2).

    python -m benchmarks.dask_rows --rows 1000000 --trees 20 --peers --repeat 3
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


def run_system(name, client, fit, predict, trees, X_test, y_test):
    from aucforest.metrics import multiclass_auc
    before = sent_bytes(client)
    with Peaks(client) as peaks:
        start = time.perf_counter()
        model = fit()
        seconds = time.perf_counter() - start
    moved = sent_bytes(client) - before
    auc = multiclass_auc(y_test, predict(model, X_test))
    workers = sorted(peaks.worker_peak.values())
    result = {"system": name, "fit_s": seconds, "auc": auc,
              "client_peak_mib": peaks.client_peak / 2**20,
              "worker_peaks_mib": [w / 2**20 for w in workers],
              "dask_mib_per_tree": moved / trees / 2**20,
              "tcp_mib_per_tree": peaks.tcp_sent() / trees / 2**20}
    print(f"  {result}", flush=True)
    return dict(result, model=model)


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
    parser.add_argument("--repeat", type=int, default=1,
                        help="alternate the systems this many times; medians reported")
    args = parser.parse_args(argv)
    print(f"command: {command_line('dask_rows', argv)}", flush=True)
    distributed = require("distributed", "benchmarks.dask_rows")
    Client, LocalCluster, wait = distributed.Client, distributed.LocalCluster, distributed.wait

    from aucforest import AUCForestClassifier

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=args.memory_limit,
                           dashboard_address=":0", silence_logs=50)
    client = Client(cluster)
    X, y = dask_data(args.rows, seed=0)
    X, y = client.persist([X, y])
    wait([X, y])  # the data generated on the workers before any clock starts
    X_test, y_test = make_block(10**6, TEST_ROWS, FEATURES, seed=1)
    params = dict(n_estimators=args.trees, random_state=0, max_bins=255)
    systems = [("aucforest, dask (rows on workers)",
                lambda: AUCForestClassifier(**params).fit(X, y),
                lambda m, Xt: m.predict_proba(Xt))]
    if args.peers and not args.no_xgboost:
        try:
            from xgboost.dask import DaskXGBRFClassifier
            systems.append((
                "xgboost DaskXGBRFClassifier (max_depth 16)",
                lambda: DaskXGBRFClassifier(n_estimators=args.trees, subsample=0.632,
                                            colsample_bynode=0.25, max_depth=16,
                                            tree_method="hist", max_bin=256,
                                            random_state=0).fit(X, y),
                lambda m, Xt: m.get_booster().inplace_predict(Xt)[:, None] * [-1, 1]
                + [1, 0]))
        except ImportError as error:
            print("xgboost: not installed", error)
    if args.peers:
        try:
            from lightgbm import DaskLGBMClassifier
            systems.append((
                "LightGBM DaskLGBMClassifier rf (4095 leaves)",
                lambda: DaskLGBMClassifier(boosting_type="rf", n_estimators=args.trees,
                                           bagging_fraction=0.632, bagging_freq=1,
                                           feature_fraction_bynode=0.25, num_leaves=4095,
                                           min_child_samples=1, max_bin=255,
                                           random_state=0, verbose=-1).fit(X, y),
                lambda m, Xt: m.to_local().predict_proba(Xt)))
        except ImportError as error:
            print("lightgbm: not installed", error)
    local = {}

    def fit_in_memory():
        return AUCForestClassifier(**params, n_jobs=2).fit(local["X"], local["y"])
    if not args.no_in_memory:
        systems.append(("aucforest, in memory (n_jobs=2)", fit_in_memory,
                        lambda m, Xt: m.predict_proba(Xt)))

    runs = {name: [] for name, _, _ in systems}
    for repeat in range(args.repeat):
        print(f"repeat {repeat + 1} of {args.repeat}", flush=True)
        for name, fit, predict in systems:
            if fit is fit_in_memory:  # the rows on the client for this run only
                local["X"], local["y"] = client.compute([X, y], sync=True)
            result = run_system(name, client, fit, predict, args.trees, X_test, y_test)
            local.clear()
            if name.startswith("aucforest, dask"):
                stats = result["model"]._dask_fit_stats
                print(f"  aucforest dask: {stats['rounds']} rounds; per tree to the client: "
                      f"{stats['gathered_bytes'] / args.trees / 2**20:.2f} MiB in all, "
                      f"of which histograms "
                      f"{stats.get('histograms_bytes', 0) / args.trees / 2**20:.2f} MiB and "
                      f"trees {stats.get('trees_bytes', 0) / args.trees / 2**20:.2f} MiB; "
                      f"sent by the client {stats['sent_bytes'] / args.trees / 2**20:.3f} "
                      f"MiB; largest gather {stats['largest_gather_bytes'] / 2**20:.1f} MiB, "
                      f"largest row count gathered {stats['largest_gathered_rows']:,}",
                      flush=True)
                print(f"  fit stats: {stats}", flush=True)
            del result["model"]
            runs[name].append(result)

    print(f"\n{args.rows:,} rows x {FEATURES} features, {args.trees} trees, 2 workers x 1 "
          f"thread, memory_limit {args.memory_limit}; median of {args.repeat} alternating "
          "runs\n")
    print("| system | fit (s) | test AUC | client peak (MiB) | worker peaks (MiB) "
          "| MiB sent by workers per tree: Dask counter | TCP (ss) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, results in runs.items():
        def median(key):
            return float(np.median([r[key] for r in results]))
        workers = np.median([r["worker_peaks_mib"] for r in results], axis=0)
        print(f"| {name} | {median('fit_s'):.1f} | {median('auc'):.4f} | "
              f"{median('client_peak_mib'):.0f} | {' / '.join(f'{w:.0f}' for w in workers)} | "
              f"{median('dask_mib_per_tree'):.1f} | {median('tcp_mib_per_tree'):.1f} |")
    print("\nfit times (s) of each repeat:")
    for name, results in runs.items():
        print(f"  {name}: " + ", ".join(f"{r['fit_s']:.1f}" for r in results))
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
