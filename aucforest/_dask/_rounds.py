"""A batch's tasks over the partitions, one per partition on the worker
holding it: the draws, the rounds (routes, histograms, rows taken out) and
the sums of their results reduced where they are."""
import numpy as np

from ._blocks import (identity, init_state, kept_state, partition_round, sum_arrays,
                      sum_histograms, sum_root_sums, sum_round_histograms)
from ._payloads import RoundTables
from ._session import payload_size


def draw(session, prepared, tree_indices):
    """Each partition's rows in the batch of trees ``tree_indices`` (its draws,
    `init_state`) and the roots' sums: (state futures, (trees, classes + 1) sums)."""
    draws = prepared.draws
    keys, rates = draws.keys[tree_indices], draws.rates[tree_indices]
    states = [session.submit(init_state, b, keys, rates, draws.poisson, prepared.n_classes,
                             name="draw", priority=1, worker=w)
              for b, w in zip(prepared.blocks, prepared.block_worker)]
    sums = session.gather(session.reduce(sum_root_sums, sum_arrays, states,
                                         prepared.worker_sets, "rootsums"))
    return states, sums


def live(batch, share):
    """The round's (keep, share) (`partition_round`): keep[id] 1 for the open
    nodes, whose rows the next rounds read, 2 for the nodes finished in
    memory not taken out before this round, whose rows wait on the workers
    listed per node (`sort_entries`); ``share``: LIVE_SHARE."""
    keep = np.fromiter((1 if node.kind == "open" else
                        2 if node.kind == "local" and node.id not in batch.taken else 0
                        for node in batch.nodes), dtype=np.uint8, count=len(batch.nodes))
    return keep, share


def submit_round(session, prepared, n_workers, states, routes, request, finish, live=None,
                 name="round"):
    """A round's tasks, one per partition on the worker holding it; its
    tables (routes, histogram request, finishing groups, live) one key
    that each of the ``n_workers`` workers fetches once. live None: every
    row read (a retake)."""
    tables = session.submit(identity, RoundTables(routes, request, finish, live),
                            name="tables", priority=1)
    session.stats.table_bytes_to_workers += n_workers * (
        payload_size((routes, request))[0] + (0 if finish is None else finish.group_of.nbytes)
        + (0 if live is None else live[0].nbytes))
    return [session.submit(partition_round, b, s, tables, prepared.n_codes, prepared.n_classes,
                           name=name, priority=1, worker=w)
            for b, s, w in zip(prepared.blocks, states, prepared.block_worker)]


def histograms(session, prepared, results):
    """The round's histograms summed over the partitions, on the client."""
    return session.gather(session.reduce(sum_round_histograms, sum_histograms, results,
                                         prepared.worker_sets, "sum"), what="histograms")


def keep_states(session, prepared, results):
    """The node state of the last round's results, alone (not its histograms
    and taken rows): what the subtrees grown again take their rows from."""
    return [session.submit(kept_state, r, name="state", priority=1, worker=w)
            for r, w in zip(results, prepared.block_worker)]
