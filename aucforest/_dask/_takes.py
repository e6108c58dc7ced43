"""Which nodes finished in memory a round takes out of the node state: their
finishing groups, each placed on a worker within the workers' backlog of
finishing tasks (`Takes`)."""
import operator

import numpy as np

from ._payloads import FinishTable


def finishing_groups(local, task_rows):
    """Nodes finished in memory, in tasks of one tree's nodes and about
    ``task_rows`` rows, in tree order."""
    groups, rows, tree = [], 0, None
    for node in sorted(local, key=operator.attrgetter("tree")):
        if not groups or node.tree != tree or rows + node.n_cases > task_rows:
            groups.append([])
            rows, tree = 0, node.tree
        groups[-1].append(node)
        rows += node.n_cases
    return groups


class Takes:
    """The finishing tasks not known to be done, per worker, and the groups
    each round takes out.

    Parameters
    ----------
    workers : list
        The cluster's workers.
    tuning : Tuning
        ``FINISH_BACKLOG_PER_WORKER``, ``FINISH_BACKLOG_BYTES``, ``FINISH_ROW_BYTES``.
    n_features : int
        Features (a taken row's codes).
    stats : FitStats
        The counters of waits, deferred nodes and bytes sent.
    """

    def __init__(self, workers, tuning, n_features, stats):
        self.workers, self.stats = workers, stats
        self.per_worker = tuning.FINISH_BACKLOG_PER_WORKER
        # rows of the finishing tasks waiting on one worker (FINISH_BACKLOG_BYTES)
        self.backlog_rows = max(1, tuning.FINISH_BACKLOG_BYTES
                                // (n_features + tuning.FINISH_ROW_BYTES))
        self.finishing = []  # (future, worker, rows) of finishing tasks not known to be done

    def started(self, future, worker, rows):
        """Count a finishing task of ``rows`` rows submitted to ``worker``."""
        self.finishing.append((future, worker, rows))

    def take_out(self, batch, groups, waiting):
        """The finishing ``groups`` whose rows this round takes out, each placed
        on a worker (`place`), and the nodes that wait (their rows stay in the
        node ids), so that taken-out rows do not pile up on the workers while
        the rounds go first. Without histograms to ask for (``waiting``
        False) the client waits for finishing tasks to end instead, until the
        workers' backlog is down to half, so that such a round takes out many
        groups.

        Returns (a `FinishTable` or None, [(group, (worker, rows))], nodes
        that wait)."""
        if not groups:
            return None, [], []
        placed = self.place(groups)
        while not placed and not waiting:
            self.stats.finishing_waits += 1
            self.wait_for_room()
            placed = self.place(groups)
        if not placed:
            left = [n for group in groups for n in group]
            self.stats.deferred_nodes += len(left)
            return None, [], left
        taken = groups[:len(placed)]
        group_of = np.full(len(batch.nodes), -1, dtype=np.int32)
        trees = np.zeros(len(batch.roots), dtype=np.uint8)
        for g, group in enumerate(taken):
            trees[group[0].tree] = 1  # a group is one tree's nodes
            for node in group:
                group_of[node.id] = g
                batch.taken.add(node.id)
        self.stats.sent_bytes += group_of.nbytes
        left = [n for group in groups[len(placed):] for n in group]
        self.stats.deferred_nodes += len(left)
        return FinishTable(group_of, len(taken), trees), list(zip(taken, placed)), left

    def backlog(self):
        """Finishing tasks not done and their rows, per worker: {worker: [tasks, rows]}."""
        self.finishing = [entry for entry in self.finishing if not entry[0].done()]
        loads = {worker: [0, 0] for worker in self.workers}
        for _, worker, rows in self.finishing:
            if worker in loads:
                loads[worker][0] += 1
                loads[worker][1] += rows
        return loads

    def place(self, groups):
        """Workers for the first groups, each on the worker with the fewest
        rows waiting, while it keeps within FINISH_BACKLOG_PER_WORKER tasks and
        FINISH_BACKLOG_BYTES of rows (a worker with none waiting takes any
        group). Returns the workers of the groups placed, in order."""
        loads = self.backlog()
        placed = []
        for group in groups:
            rows = sum(node.n_cases for node in group)
            worker = min(loads, key=lambda w: (loads[w][1], loads[w][0], w), default=None)
            tasks, waiting_rows = loads.get(worker, (0, 0))
            if tasks and (tasks >= self.per_worker
                          or waiting_rows + rows > self.backlog_rows):
                break
            if worker is not None:
                loads[worker] = [tasks + 1, waiting_rows + rows]
            placed.append((worker, rows))
        return placed

    def wait_for_room(self):
        """Wait for finishing tasks to end until some worker's backlog is at
        most half its bound."""
        from distributed import wait

        while self.finishing:
            loads = self.backlog()
            if any(tasks * 2 <= self.per_worker and rows * 2 <= self.backlog_rows
                   for tasks, rows in loads.values()):
                return
            wait([entry[0] for entry in self.finishing], return_when="FIRST_COMPLETED")
