"""The knobs of the fit on dask collections, as one fit reads them.

The knobs are the module attributes of `aucforest._dask` (``LOCAL_ROWS``,
``MAX_ROUND_BYTES``, ...; their comments there say why each has its value):
a fit reads them once, when it starts, into a `Tuning`, which the driver and
the modules it uses read instead of module globals.
"""
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Tuning:
    """The knobs one fit reads (`aucforest._dask`'s attributes of the same names).

    Attributes
    ----------
    LOCAL_ROWS, LOCAL_FRACTION, LOCAL_ROWS_MAX : int
        A node of at most ``local_rows(n)`` distinct rows is finished in memory.
    WHOLE_TREE_ROWS : int
        With ``max_leaf_nodes``, a tree of at most this many rows is grown whole
        on one worker.
    LOCAL_ROWS_PER_TASK : int
        Rows gathered by one in-memory finishing task, at least.
    EDGE_SAMPLE_ROWS : int
        Rows whose values give the bin edges, about.
    MAX_TREES_PER_BATCH, BATCH_STATE_BYTES : int
        Trees grown together, and the bytes of their node state per worker.
    LIVE_SHARE : float
        Share of the entries below which the open entries are listed.
    MAX_ROUND_BYTES : int
        Histogram bytes summed and sent to the client per round.
    FINISH_BACKLOG_PER_WORKER, FINISH_BACKLOG_BYTES, FINISH_ROW_BYTES : int
        Finishing tasks and bytes of their rows allowed to wait per worker, and
        the bytes of a row besides its codes.
    SUBTREE_LEAF_SHARE, SUBTREE_LEAVES_MIN : int
        With ``max_leaf_nodes``, the leaves a node finished in memory grows to.
    REDUCE_FAN_IN : int
        Partial sums one reducing task receives.
    BLOCK_ROWS, BLOCKS_PER_WORKER : int
        Consecutive small partitions are merged into blocks of at most
        ``BLOCK_ROWS`` rows, fewer on small data (``BLOCKS_PER_WORKER`` per worker).
    OOB_CHOICE_MAX_CASES : int
        Rows that choose the node size of ``predict_min_samples="oob"``, about.
    """

    LOCAL_ROWS: int
    LOCAL_FRACTION: int
    LOCAL_ROWS_MAX: int
    WHOLE_TREE_ROWS: int
    LOCAL_ROWS_PER_TASK: int
    EDGE_SAMPLE_ROWS: int
    MAX_TREES_PER_BATCH: int
    BATCH_STATE_BYTES: int
    LIVE_SHARE: float
    MAX_ROUND_BYTES: int
    FINISH_BACKLOG_PER_WORKER: int
    FINISH_BACKLOG_BYTES: int
    FINISH_ROW_BYTES: int
    SUBTREE_LEAF_SHARE: int
    SUBTREE_LEAVES_MIN: int
    REDUCE_FAN_IN: int
    BLOCK_ROWS: int
    BLOCKS_PER_WORKER: int
    OOB_CHOICE_MAX_CASES: int

    @classmethod
    def of(cls, namespace):
        """The knobs read from ``namespace`` (a module's ``vars``)."""
        return cls(**{f.name: namespace[f.name] for f in fields(cls)})

    def local_rows(self, n):
        """Most distinct rows of a node finished in memory on one worker, for n rows."""
        return min(self.LOCAL_ROWS_MAX, max(self.LOCAL_ROWS, n // self.LOCAL_FRACTION))
