"""The Dask fit's cost of many small partitions (issue 59, item 5): the same rows
fitted in few and in many partitions, alternately, on one LocalCluster.

A LocalCluster of 2 workers x 1 thread holds `dask_rows`' data (p = 20,
generated on the workers, persisted) once per partition count; the fits
alternate between the partition counts, ``--repeat`` times. Per fit: the
time, the tasks the scheduler ran, the bytes the workers fetched from each
other by the kind of key (their transfer logs), and the tasks that ran on
another worker than the one they were restricted to (a scheduler plugin). The
forests must not depend on the partitioning: every fit's fingerprint (a hash
of its trees' node arrays) is printed and checked equal.

    python -m benchmarks.dask_partitions --rows 400000 --partitions 8 400 --trees 10 \
        --repeat 3
"""
import argparse
import hashlib
import time

import numpy as np

from .dask_rows import (FEATURES, clear_transfer_logs, make_block, sent_bytes,
                        transfers_by_kind)


def data(rows, partitions, seed=0):
    """`dask_rows`' rows in ``partitions`` partitions of (nearly) equal size."""
    import dask
    import dask.array as da
    bounds = np.linspace(0, rows, partitions + 1).astype(int)
    # the rows do not depend on the partitioning: blocks of 10,000 generated, then cut
    unit = 10_000
    full = [dask.delayed(make_block)(i, min(unit, rows - i * unit), FEATURES, seed)
            for i in range(-(-rows // unit))]
    X = da.concatenate([da.from_delayed(b[0], (min(unit, rows - i * unit), FEATURES),
                                        np.float32) for i, b in enumerate(full)])
    y = da.concatenate([da.from_delayed(b[1], (min(unit, rows - i * unit),), np.int8)
                        for i, b in enumerate(full)])
    chunks = tuple(np.diff(bounds))
    return X.rechunk((chunks, FEATURES)), y.rechunk((chunks,))


def placement_counter():
    """A scheduler plugin counting, by kind of aucforest key, the tasks run and
    those that ran on a worker outside their restriction."""
    from distributed.diagnostics.plugin import SchedulerPlugin

    class Placement(SchedulerPlugin):
        name = "aucforest-placement"

        def __init__(self):
            self.scheduler, self.ran, self.away = None, {}, {}

        async def start(self, scheduler):
            self.scheduler = scheduler

        def transition(self, key, start, finish, *args, **kwargs):
            if finish != "memory" or start != "processing" or not str(key).startswith(
                    "aucforest-"):
                return
            ts = self.scheduler.tasks.get(key)
            kind = str(key).split("-")[1]
            self.ran[kind] = self.ran.get(kind, 0) + 1
            worker = kwargs.get("worker")
            if worker is None and ts is not None and ts.who_has:
                worker = next(iter(ts.who_has)).address
            if ts is not None and ts.worker_restrictions and worker not in \
                    ts.worker_restrictions:
                self.away[kind] = self.away.get(kind, 0) + 1

        def reset(self):
            self.ran, self.away = {}, {}
    return Placement()


def fingerprint(model):
    digest = hashlib.sha256()
    for estimator in model.estimators_:
        for name, array in sorted(estimator.tree_.node_arrays().items()):
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:16]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_partitions",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--partitions", type=int, nargs="+", default=[8, 400])
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-limit", default="4GiB")
    parser.add_argument("--local-rows", type=int,
                        help="LOCAL_ROWS and LOCAL_ROWS_MAX lowered to this (more level-wise "
                        "rounds over the partitions)")
    args = parser.parse_args(argv)

    import distributed

    import aucforest._dask as dask_fit
    from aucforest import AUCForestClassifier
    if args.local_rows:
        dask_fit.LOCAL_ROWS = dask_fit.LOCAL_ROWS_MAX = args.local_rows
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                       memory_limit=args.memory_limit, dashboard_address=":0",
                                       silence_logs=50)
    client = distributed.Client(cluster)
    plugin = placement_counter()
    cluster.scheduler.add_plugin(plugin, name=plugin.name)
    plugin.scheduler = cluster.scheduler
    inputs = {}
    for parts in args.partitions:
        X, y = client.persist(data(args.rows, parts))
        distributed.wait([X, y])
        inputs[parts] = (X, y)
    print(f"{args.rows:,} rows x {FEATURES} features, {args.trees} trees, partitions "
          f"{args.partitions}, 2 workers x 1 thread, local_rows "
          f"{dask_fit.local_rows(args.rows):,}", flush=True)
    times = {parts: [] for parts in args.partitions}
    prints = set()
    for repeat in range(args.repeat):
        for parts in args.partitions:
            X, y = inputs[parts]
            client.run(clear_transfer_logs)
            plugin.reset()
            before = sent_bytes(client)
            start = time.perf_counter()
            model = AUCForestClassifier(n_estimators=args.trees, random_state=0).fit(X, y)
            seconds = time.perf_counter() - start
            moved = (sent_bytes(client) - before) / 2**20
            stats = model._dask_fit_stats
            prints.add(fingerprint(model))
            times[parts].append(seconds)
            kinds = transfers_by_kind(client)
            print(f"repeat {repeat + 1}, {parts} partitions: fit {seconds:.2f} s, "
                  f"{stats['rounds']} rounds, {stats['tasks']} tasks; workers sent "
                  f"{moved:.1f} MiB; fetched by kind (MiB) "
                  f"{ {k: round(v, 1) for k, v in kinds.items()} }; tasks ran "
                  f"{plugin.ran}; away from their worker {plugin.away}; "
                  f"fingerprint {fingerprint(model)}", flush=True)
    medians = {parts: float(np.median(t)) for parts, t in times.items()}
    first = args.partitions[0]
    for parts in args.partitions:
        ratios = [a / b for a, b in zip(times[parts], times[first])]
        print(f"{parts} partitions: median {medians[parts]:.2f} s, "
              f"x{medians[parts] / medians[first]:.2f}"
              f" of {first} (per repeat {[round(r, 2) for r in ratios]})")
    print("same forest for every partitioning:", len(prints) == 1, sorted(prints))
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
