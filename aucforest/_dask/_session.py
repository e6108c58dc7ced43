"""The client's plumbing of one fit on dask collections: tasks submitted
under keys naming the fit, partial sums reduced where the partitions are,
results gathered and counted (`FitStats`)."""
import itertools
import uuid

import numpy as np

from .._tree import Tree


class Session:
    """The client of one fit, its task keys and its counters.

    Parameters
    ----------
    client : distributed.Client
        The client the fit's tasks go through.
    stats : FitStats
        The fit's counters (tasks, bytes gathered).
    fan_in : int
        Partial sums one reducing task receives (``REDUCE_FAN_IN``).
    """

    def __init__(self, client, stats, fan_in):
        self.client, self.stats, self.fan_in = client, stats, fan_in
        self.id = uuid.uuid4().hex[:10]
        self._keys = itertools.count()

    def submit(self, fn, *args, name="task", worker=None, **kwargs):
        """client.submit with a key naming the fit and the task's kind; with
        ``worker`` the task runs there (where its data are) while that worker
        lives, elsewhere if it is lost (a loose restriction: the scheduler
        would otherwise move a partition's rows and node state to a less busy
        worker, at every round)."""
        self.stats.tasks += 1
        if worker is not None:
            kwargs.update(workers=[worker], allow_other_workers=True)
        return self.client.submit(fn, *args, key=f"aucforest-{name}-{self.id}-{next(self._keys)}",
                                  **kwargs)

    def reduce(self, first, fn, futures, worker_sets, name):
        """The sum of the partitions' results ``futures`` as a tree of tasks of
        at most ``fan_in`` inputs each: ``first`` sums up to ``fan_in`` results
        of one worker's partitions where they are (``worker_sets``: [(worker,
        partition indices)]; reading from each what it sums, so that nothing
        else of a result moves and no task only picks a part of one), ``fn``
        sums those partial sums."""
        fan_in = self.fan_in
        level, workers = [], []
        for worker, indices in worker_sets:
            for lo in range(0, len(indices), fan_in):
                level.append(self.submit(first, *[futures[i] for i in indices[lo:lo + fan_in]],
                                         name=name, priority=1, worker=worker))
                workers.append(worker)
        while len(level) > 1:
            level, workers = (
                [self.submit(fn, *level[i:i + fan_in], name=name, priority=1,
                             worker=workers[i]) if len(level[i:i + fan_in]) > 1
                 else level[i] for i in range(0, len(level), fan_in)],
                workers[::fan_in])
        return level[0]

    def gather(self, futures, what="data"):
        """client.gather, counting the bytes that reach the client (per `what`)
        and, for data rather than trees, the largest number of rows."""
        result = self.client.gather(futures)
        size, rows = payload_size(result)
        rows = rows if what != "trees" else 0
        self.stats.count_gather(what, size, rows)
        return result


def payload_size(obj):
    """(bytes, largest leading dimension) of the numpy arrays in a gathered result."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes, (obj.shape[0] if obj.ndim else 0)
    if isinstance(obj, Tree):
        arrays = obj.node_arrays()
        return sum(a.nbytes for a in arrays.values()), 0
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(
        obj, (list, tuple)) else ()
    size, rows = 0, 0
    for item in items:
        s, r = payload_size(item)
        size, rows = size + s, max(rows, r)
    return size, rows
