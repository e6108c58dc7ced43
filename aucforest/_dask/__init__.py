"""Training and prediction on dask collections, the rows staying on the workers.

`fit` grows an `AUCForestClassifier` on a dask array or DataFrame without any
process holding all rows, on the ``dask.distributed`` client in scope:

1. **Bins.** Edges from the rows selected by a hash of their global index
   (at most about ``EDGE_SAMPLE_ROWS``; all rows below), so that neither the
   sample nor the edges depend on the partitioning; each worker then bins its
   own partitions (uint8 codes, NaN in the missing bin as in
   `aucforest._binning`) and keeps them. Consecutive small partitions are
   read and binned together as one block (``BLOCK_ROWS``), on the worker
   holding most of their rows: every later task runs once per block.
2. **Draws.** A row's multiplicity in a tree is a function of (random_state,
   tree, global row index) (a counter-based generator,
   `_draws.draw_counts`): Bernoulli(0.632) per row for the default
   subsampling without replacement, Poisson(1) for ``replacement=True``
   (Spark MLlib's bootstrap), per-class rates for ``balanced_bootstrap``.
   These are the distributed equivalents of the in-memory draws, not the same
   draws: the number of cases of a tree varies around its in-memory value.
3. **Growth** level by level over a batch of trees (PLANET, Panda et al.,
   VLDB 2009; Spark MLlib's ``RandomForest.findBestSplits``): each worker
   keeps the node of each of its rows in each tree, and per round adds
   integer class-weight and case histograms (classes x bins) of the
   candidate features of every open node; the client sums them (integers:
   the sums do not depend on the order or grouping of the partitions) and
   chooses the splits with the binned splitter's scan
   (`_histogram_splitter.HistogramSplitter`). From the second round on, the
   rounds read only a partition's (tree, row) entries in open nodes, and the
   rows of a node finished in memory are listed per node when it is made,
   so that taking it out reads its rows only (`_entries.sort_entries`,
   `_worker_kernels.take_waiting`): out-of-bag rows and the rows of leaves and of nodes
   waiting or taken out cost the later rounds nothing (the deep, unbalanced
   chains of large nodes). Candidate features and ``nsplit`` bins are drawn
   from keys of (tree seed, path of the node), never from the order in which
   nodes are reached. Round trips grow with
   depth, not with nodes. A node with at most ``local_rows(n)`` distinct rows
   is finished in memory (PLANET's in-memory completion): its rows' codes
   are gathered to one worker, ordered by global row index, and the
   in-memory binned splitter (`grow_tree` on `BinnedData`) grows its
   subtree, which is grafted in. The trees are ordinary `Tree` objects in
   preorder.
   With ``max_leaf_nodes`` a tree keeps the splits the in-memory best-first
   builder would keep of it (`aucforest._leaf_budget`): nodes that cannot
   be among them become leaves during the growth; a node finished in memory
   grows best first to about its share of the bound (``SUBTREE_LEAF_SHARE``
   times the bound times its share of the tree's rows); one that may hold
   more of its tree's expansions is grown once more, from its rows taken
   again from the node state, to the bound with the smallest decrease its
   tree can still keep as a floor (`Finisher.cut_trees`); the client then reads
   each tree's skeleton (children and risks, 16 bytes a node), chooses the
   max_leaf_nodes - 1 splits of largest weighted impurity decrease, cuts
   the top and has each subtree cut where it was grown. The subtrees then
   go on as without the bound (out-of-bag sums, collapse). A tree of at most
   ``WHOLE_TREE_ROWS`` rows is grown whole on one worker, best first to the
   bound, and finished there as without the bound: nothing to cut.
   The tasks of a round do not depend on the number of nodes: the round's
   tables (routes, histogram request, finishing groups) are one key that
   each worker fetches once; per partition a round task, whose result the
   next round, the takes and the histograms' first sums read where it is
   (no task only to pick a part of it); the sums' reducing tasks (per worker
   up to ``REDUCE_FAN_IN`` partitions each, then their partial sums); per
   finishing group (one tree's nodes, about
   ``LOCAL_ROWS_PER_TASK`` rows) one take per worker (its partitions' rows
   of the group, `take_group`) and the finishing task. A partition's tasks
   run on the worker holding it (a loose restriction: elsewhere only when
   that worker is lost), or dask would move its node state to whichever
   worker is less busy. The rounds go before the finishing tasks (task
   priorities), which fill the workers' time while the client chooses
   splits; each finishing group goes to the worker with the fewest rows
   waiting, at most ``FINISH_BACKLOG_PER_WORKER`` tasks and
   ``FINISH_BACKLOG_BYTES`` of rows per worker (an idle worker takes any
   group), the rows of further nodes staying where they are; once no
   histograms are asked for, the client waits until a worker's backlog is
   down to half, so that one round takes out many groups. The next batch of
   trees starts while the last one's subtrees are being finished.
4. **Out of bag and the node size.** The rows that choose the node size of
   ``predict_min_samples="oob"`` (hash-selected and class-balanced, at most
   about ``OOB_CHOICE_MAX_CASES``, as bounded as the edge sample) are
   gathered once and sent to each worker once. The client routes them
   through the top of each tree (the nodes it grew); each finishing task
   gives the proportions of its subtrees' nodes for the rows that reach
   them; the client adds them tree after tree (`accumulate_oob_proba`'s
   additions on the whole tree). The grown subtrees stay on the workers:
   with the node size known (an int ``predict_min_samples``) the finishing
   tasks collapse them at once, else they are collapsed there once the size
   is chosen (`collapse_group`). The client receives collapsed subtrees one
   tree at a time and grafts them into the tree's top: it never holds a
   grown tree.
   The model keeps that sample's OOB probabilities (``oob_score_``,
   ``oob_gmean_``), never n rows: ``oob_decision_function(X, y)`` recomputes
   the OOB probabilities of all rows where they are, a lazy dask array the
   user holds (the draws are functions of the row index), so nothing in the
   fitted forest pins the training rows, and pickles and model files hold
   the model only.

Weights are integers: sample weight x class weight is rescaled to a maximum
of 1 and rounded to a multiple of 2**-S (S about 62 - 8 - log2 n; exact for
unweighted data), times the drawn multiplicity. The forest is therefore the
same for any chunking and any number of workers.

The package's modules: the inputs are read in `_inputs`, the tasks that run
where the rows are live in `_blocks` (their compiled kernels in `_draws`,
`_entries` and `_worker_kernels`), the client's side of a fit in `_fit`
(its splitter compiled in `_histogram_splitter`), and the fitted model's
lazy predictions and out-of-bag predictions in `_model`. The knobs below are read
once per fit (`_tuning.Tuning`).

Dask is imported in this package only, and they only when a fit or a prediction
meets a dask collection; ``dask.dataframe`` (pandas and pyarrow) only when X
or y is a dask DataFrame or Series, which the caller imported.
"""
from .._oob_estimates import OOB_CHOICE_MAX_CASES
from ._inputs import is_dask_collection
from ._model import (OOB_NOT_KEPT, DrawsOnWorkers, apply, oob_decision_function, predict,
                     predict_proba)
from ._tuning import Tuning

__all__ = ["OOB_CHOICE_MAX_CASES", "OOB_NOT_KEPT", "DrawsOnWorkers", "apply", "fit",
           "is_dask_collection", "local_rows", "oob_decision_function", "predict",
           "predict_proba", "tuning"]

# A node with at most this many distinct rows (of positive weight) in its tree is
# finished in memory on one worker: the bound of the working set gathered there
# (262,144 rows, about 16 MiB at p = 20: at 3e6 and 1e7 rows the level-wise rounds
# over all rows cost more than growing larger nodes in memory; 65,536 before,
# benchmarks/results/dask_rows.md).
LOCAL_ROWS = 262_144
# ... and up to n / LOCAL_FRACTION rows (at most LOCAL_ROWS_MAX) on larger data: fewer
# open nodes, so fewer histograms (docs/evidence/dask.md, the cost model), while a
# finishing task still holds a small share of the rows. 16 (was 256, which left 262,144
# up to 6.7e7 rows): at 1e7 rows (10 trees, 4,095 leaves) nodes of up to 625,000 rows
# (or 524,288) finished in memory gave fits 4-13% faster than 262,144 in three
# alternated comparisons; 2**20 was slower than 524,288 (60 against 56 s).
LOCAL_FRACTION = 16
LOCAL_ROWS_MAX = 1 << 20
# max_leaf_nodes: a tree of at most this many distinct rows is grown whole in memory
# on one worker, best first to the bound, instead of subtrees grown past their share
# of it, cut and some grown again (at 1e6 rows, 20 trees: 0.6-0.7x the time with 255
# or 4,095 leaves; without the bound whole trees are slower than the level-wise top
# and subtrees, whose rows are packed together: benchmarks/results/dask_rows.md).
WHOLE_TREE_ROWS = 1 << 20
# Rows gathered by one in-memory finishing task (several small nodes share a task):
# at least this many, and at least the largest node finished in memory.
LOCAL_ROWS_PER_TASK = 131_072
# Rows whose values give the bin edges (selected by a hash of the global row index);
# the in-memory fit's QUANTILE_SAMPLE.
EDGE_SAMPLE_ROWS = 200_000
# Trees grown together: node ids (int32) and multiplicities (uint8) of every row in
# each tree of a batch live on the workers, 5 bytes per row and tree, at most
# BATCH_STATE_BYTES per worker (rows spread evenly).
MAX_TREES_PER_BATCH = 32
BATCH_STATE_BYTES = 1 << 28
# After each round the rounds read only the (tree, row) entries in open nodes, and the
# rows of nodes finished in memory not yet taken out wait listed per node: lists of 4
# bytes per entry kept with the node state, at most the drawn entries together (about
# 2.5 bytes per row and tree, shrinking as nodes finish). Below 1, the open entries are
# listed only once at most that share of the entries (less memory; the rounds before
# read every entry). At 1e7 rows (20 trees, 4,095 leaves) listing the entries in play
# cut the rounds' work from 158-170 to 100-109 worker seconds.
LIVE_SHARE = 1.0
# Histogram bytes summed and sent to the client per round (node groups, as Spark's
# maxMemoryInMB); open nodes beyond wait for the next round.
MAX_ROUND_BYTES = 1 << 26
# In-memory finishing tasks allowed to wait per worker, and the bytes of their rows
# (p + FINISH_ROW_BYTES per row: codes, class, weight; at most 9 with weights and up to
# 256 classes: a part's rows are those of one partition, in order, so no row index
# is sent, and its nodes are listed once each): beyond either,
# the rounds leave the rows of nodes to finish in memory where they are (in the node
# ids) until some end, so that rows taken out do not pile up on the workers while the
# rounds go first. An idle worker always takes one group. 512 MiB (was 128): at 1e7 rows
# (10 trees, 4,095 leaves) a 128 MiB backlog, refilled when half done, left the workers
# waiting for rows between take-out rounds (fits 80.7-91.3 s against 69.6-71.5 s).
FINISH_BACKLOG_PER_WORKER = 64
FINISH_BACKLOG_BYTES = 1 << 29
FINISH_ROW_BYTES = 9
# max_leaf_nodes: a node finished in memory grows to at most
# SUBTREE_LEAF_SHARE x max_leaf_nodes x (its rows / its tree's rows) leaves (at least
# SUBTREE_LEAVES_MIN), not to max_leaf_nodes: its tree keeps about its share. A subtree
# that may hold more of its tree's expansions than it grew is grown again from the same
# rows (taken again from the node state) to max_leaf_nodes, splits of decrease below
# the tree's (max_leaf_nodes - 1)-th largest known m left unmade (`Finisher.cut_trees`):
# the trees are those of subtrees grown to max_leaf_nodes, after one regrowth at most.
SUBTREE_LEAF_SHARE = 4
SUBTREE_LEAVES_MIN = 16
# Partial sums one reducing task receives (histograms and root sums summed as a tree).
REDUCE_FAN_IN = 8
# Consecutive binned partitions are merged into blocks of at most BLOCK_ROWS rows
# (fewer on small data: at least BLOCKS_PER_WORKER blocks per worker, n / (workers x
# BLOCKS_PER_WORKER) rows each), on the worker holding most of their rows: each later
# task (draws, rounds, takes, sums) runs once per block, and a task costs the
# scheduler and a worker milliseconds whatever its rows (at 400,000 rows the fit on
# 400 partitions took 2.2x the fit on 8 before: docs/evidence/dask.md).
BLOCK_ROWS = 1 << 17
BLOCKS_PER_WORKER = 8
# OOB_CHOICE_MAX_CASES (imported above): the rows that choose the node size of
# predict_min_samples="oob", about, as in memory.


def tuning():
    """The knobs as a fit reads them now (the module attributes above).

    Returns
    -------
    Tuning
        A frozen copy of this module's knobs.
    """
    return Tuning.of(globals())


def local_rows(n):
    """Most distinct rows of a node finished in memory on one worker, for n rows.

    Parameters
    ----------
    n : int
        Rows of the training data.

    Returns
    -------
    int
        ``min(LOCAL_ROWS_MAX, max(LOCAL_ROWS, n // LOCAL_FRACTION))``.
    """
    return tuning().local_rows(n)


def fit(forest, X, y, sample_weight=None):
    """`AUCForestClassifier.fit` on a dask array or DataFrame (see the module docstring).

    The model is published in one assignment (`fit_atomically`), as the
    in-memory fit does.

    Parameters
    ----------
    forest : AUCForestClassifier
        The estimator to fit.
    X : dask array or DataFrame
        The rows, on the workers.
    y : dask array or Series
        The classes.
    sample_weight : dask array or Series, optional
        Weights of the rows.

    Returns
    -------
    AUCForestClassifier
        ``forest``, fitted.
    """
    from ._fit import fit as fit_on_workers  # the driver: imported when a fit starts
    return fit_on_workers(forest, X, y, sample_weight, tuning())
