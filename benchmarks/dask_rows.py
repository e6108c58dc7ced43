"""Fitting on rows that stay on Dask workers (issue 25), side by side in one run.

A LocalCluster of 2 workers (1 thread each, memory_limit set) holds a data set
generated on the workers (nothing n-sized is built on the client for the Dask
fits). For each system: fit time, test AUC (200,000 held-out rows), the
client's and each worker's peak resident memory during the fit (sampled every
0.2 s), and the bytes the workers sent (to each other and to the client) per
tree. Systems: aucforest on the dask array (rows on the workers), xgboost's
DaskXGBRFClassifier and LightGBM's DaskLGBMClassifier(boosting_type="rf") on
the same cluster and data when installed, and aucforest's in-memory binned fit
of the same rows (computed to the client) on the same two cores (n_jobs=2).

    python -m benchmarks.dask_rows --rows 1000000 --trees 50 [--peers]
    python -m benchmarks.dask_rows --rows 20000 --trees 3        # a smoke run

The data: p = 20 standard normal features, 5 of them carrying the signal
(a logistic model with two interactions), 10% positives, 2% NaN.
"""
import argparse
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


class Peaks:
    """Peak RSS of the client and of each worker while a block of code runs."""

    def __init__(self, client):
        self.client, self.stop, self.client_peak, self.worker_peak = client, False, 0, {}

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
            time.sleep(0.2)

    def __enter__(self):
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


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
    return {"system": name, "fit_s": seconds, "auc": auc,
            "client_peak_mib": peaks.client_peak / 2**20,
            "worker_peak_mib": max(peaks.worker_peak.values(), default=0) / 2**20,
            "mib_per_tree": moved / trees / 2**20, "model": model}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_rows",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--memory-limit", default="6GiB")
    parser.add_argument("--peers", action="store_true", help="xgboost and LightGBM too")
    parser.add_argument("--no-in-memory", action="store_true")
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
    results = []
    params = dict(n_estimators=args.trees, random_state=0, max_bins=255)

    results.append(run_system(
        "aucforest, dask (rows on workers)", client,
        lambda: AUCForestClassifier(**params).fit(X, y),
        lambda m, Xt: m.predict_proba(Xt), args.trees, X_test, y_test))
    stats = results[-1]["model"]._dask_fit_stats
    print(f"aucforest dask: {stats['rounds']} rounds; per tree to the client: "
          f"{stats['gathered_bytes'] / args.trees / 2**20:.2f} MiB in all, of which "
          f"histograms {stats.get('histograms_bytes', 0) / args.trees / 2**20:.2f} MiB "
          f"and trees {stats.get('trees_bytes', 0) / args.trees / 2**20:.2f} MiB; "
          f"largest gather {stats['largest_gather_bytes'] / 2**20:.1f} MiB, "
          f"largest row count gathered {stats['largest_gathered_rows']:,}", flush=True)

    if args.peers:
        try:
            from xgboost.dask import DaskXGBRFClassifier
            results.append(run_system(
                "xgboost DaskXGBRFClassifier (max_depth 16)", client,
                lambda: DaskXGBRFClassifier(n_estimators=args.trees, subsample=0.632,
                                            colsample_bynode=0.25, max_depth=16,
                                            tree_method="hist", max_bin=256,
                                            random_state=0).fit(X, y),
                lambda m, Xt: m.get_booster().inplace_predict(Xt)[:, None] * [-1, 1]
                + [1, 0], args.trees, X_test, y_test))
        except ImportError as error:
            print("xgboost: not installed", error)
        try:
            from lightgbm import DaskLGBMClassifier
            results.append(run_system(
                "LightGBM DaskLGBMClassifier rf (4095 leaves)", client,
                lambda: DaskLGBMClassifier(boosting_type="rf", n_estimators=args.trees,
                                           bagging_fraction=0.632, bagging_freq=1,
                                           feature_fraction_bynode=0.25, num_leaves=4095,
                                           min_child_samples=1, max_bin=255,
                                           random_state=0, verbose=-1).fit(X, y),
                lambda m, Xt: m.to_local().predict_proba(Xt), args.trees, X_test, y_test))
        except ImportError as error:
            print("lightgbm: not installed", error)

    if not args.no_in_memory:
        X_local, y_local = client.compute([X, y], sync=True)
        results.append(run_system(
            "aucforest, in memory (n_jobs=2)", client,
            lambda: AUCForestClassifier(**params, n_jobs=2).fit(X_local, y_local),
            lambda m, Xt: m.predict_proba(Xt), args.trees, X_test, y_test))
        del X_local, y_local

    print(f"\n{args.rows:,} rows x {FEATURES} features, {args.trees} trees, 2 workers x 1 "
          f"thread, memory_limit {args.memory_limit}\n")
    print("| system | fit (s) | test AUC | client peak (MiB) | worker peak (MiB) "
          "| MiB sent by workers per tree |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['system']} | {r['fit_s']:.1f} | {r['auc']:.4f} | "
              f"{r['client_peak_mib']:.0f} | {r['worker_peak_mib']:.0f} | "
              f"{r['mib_per_tree']:.1f} |")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
