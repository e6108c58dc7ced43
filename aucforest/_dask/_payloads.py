"""The typed values the fit on dask collections passes between the client and
the workers (`aucforest._dask`): what a task receives and what it returns,
with named fields instead of dicts and positional tuples.

The worker payloads are NamedTuples (cheap to build, pickled as tuples, read
by field name); the fit's context is a frozen dataclass, made once per fit.
"""
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple, Optional

import numpy as np


@dataclass(frozen=True, eq=False)
class FitContext:
    """What every task of one fit reads: the bins, classes and weights' scale.

    Made once on the client (`_prepare.prepare`) and sent to the workers as
    one task's result (a worker lost mid-fit recomputes it).

    Attributes
    ----------
    edges : ndarray of float64, shape (n_features, max_bins)
        Upper edges of the value bins (inf beyond a feature's bins).
    n_bins : ndarray of intp, shape (n_features,)
        Bins of each feature (a categorical feature: its levels).
    n_classes : int
        Classes.
    weight_scale : float
        What an integer weight unit weighs (2**-S).
    params : dict
        The tree parameters of the in-memory builder (`tree_params`), with ``max_bins``.
    padded : ndarray of float32, optional
        The edges `encode_features` searches.
    classes : ndarray, optional
        The classes, sorted.
    w_max : float
        The largest sample weight (the weights are rescaled to a maximum of 1).
    weight_unit : float
        2**S: a weight of 1 as an integer.
    weighted : bool
        Whether rows carry integer weights (sample or class weights).
    class_weights : ndarray of float64, optional
        Weight of each class.
    balanced : bool
        ``balanced_bootstrap``: rows of zero weight are not drawn.
    is_categorical : ndarray of bool, optional
        The categorical features (None: none).
    """

    edges: np.ndarray
    n_bins: np.ndarray
    n_classes: int
    weight_scale: float
    params: dict
    padded: Optional[np.ndarray] = None
    classes: Optional[np.ndarray] = None
    w_max: float = 1.0
    weight_unit: float = 1.0
    weighted: bool = False
    class_weights: Optional[np.ndarray] = None
    balanced: bool = False
    is_categorical: Optional[np.ndarray] = None

    @property
    def n_features(self):
        """Features of the rows."""
        return self.edges.shape[0]


class PartitionStats(NamedTuple):
    """What the client needs of one partition before binning (`block_stats`)."""

    infinite: bool  # any infinite value
    labels: np.ndarray  # the partition's classes ...
    counts: np.ndarray  # ... and their rows
    positive: tuple  # (labels, counts) of the rows of positive weight
    sample: np.ndarray  # the hash-selected rows' ordered features
    largest_level: np.ndarray  # per categorical feature its largest level code, -1: none
    w_max: Optional[float] = None  # the largest weight (with weights)


class Block(NamedTuple):
    """One partition as the fit keeps it on its worker (`encode_block`)."""

    codes: np.ndarray  # uint8 (rows, features), C order
    y: np.ndarray  # int32 class codes
    weights: Optional[np.ndarray]  # int64 integer weights; None: all one
    draw_y: np.ndarray  # the class each row is drawn in (-1: never drawn)
    start: int  # global index of its first row
    prior: np.ndarray  # int64 weight per class


class NodeState(NamedTuple):
    """A partition's rows in a batch of trees (`init_state`, `partition_round`)."""

    ids: np.ndarray  # int32 (trees, rows): the node of each row in each tree (-1: none)
    counts: np.ndarray  # uint8 (trees, rows): multiplicities
    unit: bool  # every weight in a tree 0 or 1: no case column in the histograms
    live: Any  # the entries the next round reads (`sort_entries`; None: every entry)
    waiting: Any  # rows of nodes finished in memory not taken out, per node (None: none)


class Drawn(NamedTuple):
    """A partition's draws of a batch (`init_state`): its state and the roots' sums."""

    state: NodeState
    sums: np.ndarray  # int64 (trees, classes + 1): class weights and distinct cases


class TakenPart(NamedTuple):
    """One partition's rows of one finishing group (`take_rows`, `take_waiting`):
    per node, in row order."""

    nodes: np.ndarray  # int32 node ids, ascending
    node_start: np.ndarray  # int64: node nodes[k]'s rows are node_start[k]:node_start[k+1]
    start: int  # the partition's global rows start .. stop - 1
    stop: int
    codes: np.ndarray  # uint8 (rows, features)
    y: np.ndarray  # classes (uint8 up to 256 classes, else int32)
    weight: np.ndarray  # integer weights (int64) or multiplicities (uint8)


class Pass(NamedTuple):
    """What one pass over a partition's entries gives (`histograms`, `route`):
    a field is None when the pass did not make it."""

    hist: Optional[np.ndarray]  # the requested histograms
    ids: Optional[np.ndarray]  # the node ids after routing
    live: Any  # `sort_entries`' lists of the entries, when listed
    waiting: Any


class FinishTable(NamedTuple):
    """The round's finishing groups (`take_rows`)."""

    group_of: np.ndarray  # int32: the group of each node id (-1: none)
    n_groups: int
    trees: Optional[np.ndarray]  # the groups' trees (None: read every tree)


class RoundTables(NamedTuple):
    """One round's tables, one key each worker fetches once (`partition_round`)."""

    routes: Optional[tuple]  # `route`'s tables (None: no rows move)
    request: Optional[tuple]  # (first_slot, slot_feature) of the histograms asked for
    finish: Optional[FinishTable]  # the nodes whose rows are taken out
    live: Optional[tuple]  # (keep, max_share); None: every entry read (a retake)


class RoundResult(NamedTuple):
    """A partition's round (`partition_round`): its state, histograms and taken rows."""

    state: NodeState
    hist: Optional[np.ndarray]
    parts: dict  # group -> TakenPart


class Finishing(NamedTuple):
    """How finishing tasks finish their subtrees (`_finish_subtree`)."""

    sizes: np.ndarray  # int32 candidate node sizes
    collapse_to: Optional[int]  # the size to collapse to, when known
    split_impurity: bool  # the criterion is a split statistic


class NodeSpec(NamedTuple):
    """A node finished in memory, as its finishing task reads it (`grow_local`)."""

    node_id: int
    key: int  # the node's key: the seed of its subtree's draws
    depth: int
    min_weight_leaf: float  # in integer weight units
    oob_rows: Optional[np.ndarray]  # the node-size choice's rows reaching it
    leaves: Optional[int]  # max_leaf_nodes: the leaves it grows to
    min_decrease: float  # the weighted impurity decrease below which no split is made


class Finished(NamedTuple):
    """A finishing task's subtrees (`grow_local`, `cut_group`)."""

    subtrees: dict  # node id -> (node arrays, depth)
    oob: dict  # node id -> (root size, proportions (candidates, rows, K))


@dataclass(eq=False)
class FitStats:
    """What one fit counted on the client (``forest._dask_fit_stats``, as a dict).

    Attributes
    ----------
    rounds, tasks, batches : int
        Rounds over the partitions, tasks submitted, batches of trees.
    partitions, blocks : int
        The input's partitions, and the binned blocks the tasks run on
        (consecutive small partitions merged).
    tasks_per_round : list of int
        Tasks submitted by each round.
    gathered_bytes, largest_gather_bytes, largest_gathered_rows : int
        Bytes that reached the client, the most in one gather, and the most
        rows of data in one gather.
    gathered : dict
        Bytes gathered per kind (``"data"``, ``"trees"``, ``"histograms"``,
        ...), each reported as ``<kind>_bytes``.
    sent_bytes, table_bytes_to_workers, skeleton_bytes : int
        Bytes sent to the workers, of them the rounds' tables (times the
        workers), and the bounded trees' skeletons.
    histogram_slots : int
        (node, feature) histograms summed.
    open_nodes, finished_rows, finished_nodes, whole_trees : int
        Nodes grown by rounds, rows and nodes finished in memory, and whole
        trees grown in memory.
    finishing_groups, finishing_waits, deferred_nodes : int
        Finishing tasks, waits for a worker's backlog to shrink, and nodes
        whose rows were left where they are for a later round.
    regrown_subtrees, retake_rounds, regrowth_passes : int
        ``max_leaf_nodes``: subtrees grown again, rounds taking their rows
        out again, and passes of regrowth.
    """

    rounds: int = 0
    gathered_bytes: int = 0
    largest_gather_bytes: int = 0
    largest_gathered_rows: int = 0
    sent_bytes: int = 0
    histogram_slots: int = 0
    open_nodes: int = 0
    finished_rows: int = 0
    finished_nodes: int = 0
    tasks: int = 0
    tasks_per_round: list = field(default_factory=list)
    finishing_groups: int = 0
    table_bytes_to_workers: int = 0
    finishing_waits: int = 0
    deferred_nodes: int = 0
    regrown_subtrees: int = 0
    retake_rounds: int = 0
    regrowth_passes: int = 0
    batches: int = 0
    skeleton_bytes: int = 0
    partitions: int = 0
    blocks: int = 0
    whole_trees: int = 0
    gathered: dict = field(default_factory=dict)

    def count_gather(self, what, size, rows):
        """Count a gather of ``size`` bytes (of kind ``what``), ``rows`` rows at most."""
        self.gathered[what] = self.gathered.get(what, 0) + size
        self.gathered_bytes += size
        self.largest_gather_bytes = max(self.largest_gather_bytes, size)
        self.largest_gathered_rows = max(self.largest_gathered_rows, rows)

    def as_dict(self, **more):
        """The counters as a dict (``<kind>_bytes`` per gathered kind), with ``more``."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "gathered"}
        out.update({f"{what}_bytes": size for what, size in self.gathered.items()})
        out.update(more)
        return out
