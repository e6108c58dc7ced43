"""Training and prediction on dask collections, the rows staying on the workers.

`fit` grows an `AUCForestClassifier` on a dask array or DataFrame without any
process holding all rows, on the ``dask.distributed`` client in scope:

1. **Bins.** Edges from the rows selected by a hash of their global index
   (at most about ``EDGE_SAMPLE_ROWS``; all rows below), so that neither the
   sample nor the edges depend on the partitioning; each worker then bins its
   own partitions (uint8 codes, NaN in the missing bin as in
   `aucforest._binning`) and keeps them.
2. **Draws.** A row's multiplicity in a tree is a function of (random_state,
   tree, global row index) (a counter-based generator,
   `_dask_kernels.draw_counts`): Bernoulli(0.632) per row for the default
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
   (`_dask_kernels.HistogramSplitter`). Candidate features and ``nsplit``
   bins are drawn from keys of (tree seed, path of the node), never from the
   order in which nodes are reached. Round trips grow with depth, not with
   nodes. A node with at most ``local_rows(n)`` distinct rows is finished in
   memory (PLANET's in-memory completion): its rows' codes are gathered to
   one worker, ordered by global row index, and the in-memory binned
   splitter (`grow_tree` on `BinnedData`) grows its subtree, which is grafted
   in. The trees are ordinary `Tree` objects in preorder.
   With ``max_leaf_nodes`` a tree keeps the splits the in-memory best-first
   builder would keep of it (`aucforest._leaf_budget`): nodes that cannot
   be among them become leaves during the growth, nodes finished in memory
   grow best first to the bound, and the assembled tree is cut to the
   max_leaf_nodes - 1 splits of largest weighted impurity decrease.
   With ``max_leaf_nodes`` the client gathers each tree's grown subtrees
   (at most that many leaves each), cuts the assembled tree, adds its
   out-of-bag sums and keeps it, uncollapsed, until the node size is chosen.
   The tasks of a round do not depend on the number of nodes: the round's
   tables (routes, histogram request, finishing groups) are one key that
   each worker fetches once; per partition a round task, its state and its
   histograms (and in a round that finishes nodes, its taken rows); the
   sums' reducing tasks; per finishing group (one tree's nodes, about
   ``LOCAL_ROWS_PER_TASK`` rows) one take per worker (its partitions' rows
   of the group, `_take_group`) and the finishing task. A partition's tasks
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
   is chosen (`_collapse_group`). The client receives collapsed subtrees one
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

A dask DataFrame is fitted on its numbers: nullable (Int64, Float64,
boolean) and bool columns become float64 in each partition, pd.NA as NaN, as
in memory; a text column is refused, naming it. Its sizes are counted on the
array's own graph, so a frame whose optimizations fuse partitions
differently (several parquet files) fits.

Categorical features are those of the in-memory fit (`fit_categories` on
the frame's meta, `categorical_features` as in memory): a ``category``
column's categories must be known (the meta's, ``.cat.as_known()``; else a
ValueError naming the column), and each partition's values become the codes
of those categories by value (`_coded_frame`), whatever the partition's own
categories, so the forest does not depend on the partitioning; codes in an
array are checked where they are (`check_categorical_codes`). A categorical
feature has one bin per level (its code, `_level_codes`; no edges sampled):
the client scans its summed histogram by level sets
(`HistogramSplitter`, `Splitter._scan_levels`), `route` and the client's
out-of-bag routing send rows by the set's 256-bit table, the in-memory
finishing grows on `BinnedData` with the same mask, and the trees hold the
sets as the in-memory trees do (``categorical_split``, ``left_levels``).

Prediction on dask collections (`predict_proba`, `predict`, `apply`) is lazy:
each block becomes the rows the dense predict reads (`_dense_rows`: a
partition's ``category`` columns mapped to the fitted codes by value, as
`predict_codes` does in memory, whatever the partition's own categories;
float32; infinite values and invalid level codes of categorical features
refused with the dense error when the block is computed), then
``map_blocks`` with the fitted model, read once and scattered to every worker
once per model and client (`_model`): the graphs reference its key, so
repeated predictions do not send the trees again.

Dask is imported here only, and this module only when a fit or a prediction
meets a dask collection; ``dask.dataframe`` (pandas and pyarrow) only when X
or y is a dask DataFrame or Series, which the caller imported.
"""
import itertools
import operator
import sys
import threading
import uuid
import weakref
from types import SimpleNamespace

import numpy as np

from ._base import (MAX_SEED, SPLIT_STATISTIC_CRITERIA, check_categorical_codes,
                    check_counts_are_not_booleans, check_some_weight, check_two_classes,
                    collapsed, fit_atomically, grow_tree, resolve_max_features, tree_params)
from ._binning import MAX_BINS, MISSING_CODE, BinnedData, _codes, _level_codes, set_feature_edges
from ._categories import fit_categories, predict_codes, resolve_fitted
from ._compat import check_sample_weight
from ._dask_kernels import (HistogramSplitter, draw_counts, feature_order, hash_key,
                            histograms, node_impurity, route, row_uniforms, start_trees,
                            take_rows)
from ._decision import validate_decision
from ._leaf_budget import LeafBudget, best_first, split_priority
from ._oob import OOB_CHOICE_MAX_CASES, OutOfBagSums, node_size_candidates
from ._prediction import decide_classes, mean_tree_proba
from ._prior_shift import draw_class_weights_of_sums
from ._sampling import CaseDraws, class_weights_of_counts
from ._split import CRITERIA
from ._tree import Tree, accumulate_oob_proba
from .tree import feature_attributes, fitted_tree

# A node with at most this many distinct rows (of positive weight) in its tree is
# finished in memory on one worker: the bound of the working set gathered there.
LOCAL_ROWS = 65_536
# ... and up to n / LOCAL_FRACTION rows (at most LOCAL_ROWS_MAX) on larger data: fewer
# open nodes, so fewer histograms (docs/evidence/dask.md, the cost model), while a
# finishing task still holds a small share of the rows.
LOCAL_FRACTION = 256
LOCAL_ROWS_MAX = 1 << 20
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
# Histogram bytes summed and sent to the client per round (node groups, as Spark's
# maxMemoryInMB); open nodes beyond wait for the next round.
MAX_ROUND_BYTES = 1 << 26
# In-memory finishing tasks allowed to wait per worker, and the bytes of their rows
# (p + FINISH_ROW_BYTES per row: codes, node, row index, class, weight): beyond either,
# the rounds leave the rows of nodes to finish in memory where they are (in the node
# ids) until some end, so that rows taken out do not pile up on the workers while the
# rounds go first. An idle worker always takes one group.
FINISH_BACKLOG_PER_WORKER = 16
FINISH_BACKLOG_BYTES = 1 << 27
FINISH_ROW_BYTES = 21
# Partial sums one reducing task receives (histograms and root sums summed as a tree).
REDUCE_FAN_IN = 8
# A drawn multiplicity is at most 255 (uint8), and weights are rounded to
# multiples of 2**-S with S = WEIGHT_BITS - 8 - bit_length(n).
WEIGHT_BITS = 62

_STREAM_DRAWS, _STREAM_NODES, _STREAM_EDGES, _STREAM_OOB = 1, 2, 3, 4


def local_rows(n):
    """Most distinct rows of a node finished in memory on one worker, for n rows."""
    return min(LOCAL_ROWS_MAX, max(LOCAL_ROWS, n // LOCAL_FRACTION))


def is_dask_collection(X):
    """Whether X is a dask collection (False without importing dask when it
    was never imported)."""
    if "dask" not in sys.modules:
        return False
    from dask.base import is_dask_collection as _is_collection
    return _is_collection(X)


# ---------------------------------------------------------------------------- inputs

def _client():
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError) as error:
        raise ValueError("fitting on a dask collection needs a dask.distributed Client "
                         "(e.g. Client(LocalCluster())); none was found") from error


def _is_dask_frame(X):
    """Whether X is a dask DataFrame or Series, without importing dask.dataframe
    (which needs pandas and pyarrow) when nothing did: X cannot be one then."""
    dd = sys.modules.get("dask.dataframe")
    return dd is not None and isinstance(X, (dd.DataFrame, dd.Series))


def _as_rows(X, y, sample_weight, categories=None):
    """X as a dask array with one column chunk, y and sample_weight chunked as its
    rows; the feature names of a DataFrame (None otherwise). A DataFrame's
    ``category`` columns become the codes of ``categories`` (one list or None
    per column: `_numeric_frame`)."""
    import dask.array as da

    names = None
    if _is_dask_frame(X) and X.ndim == 2:
        columns = list(X.columns)
        if all(isinstance(c, str) for c in columns):
            names = np.asarray(columns, dtype=object)
        # sizes from the array's own graph (lengths=True can count the partitions of
        # another optimization of the frame, e.g. parquet files read together)
        X = _numeric_frame(X, categories).to_dask_array()
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask array or DataFrame; got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional; got {X.ndim} dimensions")
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold numbers; got dtype {X.dtype}")
    X = X.rechunk({1: -1})
    row_chunks = X.chunks[0]

    def aligned(v, name):
        if v is None:
            return None
        if _is_dask_frame(v):
            v = v.to_dask_array()
        elif not isinstance(v, da.Array):
            v = da.from_array(np.asarray(v), chunks=(row_chunks,))
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1-dimensional")
        if any(np.isnan(c) for c in v.chunks[0]):
            v = v.compute_chunk_sizes()
        if v.shape[0] != X.shape[0]:
            raise ValueError(f"{name} has {v.shape[0]} rows, X has {X.shape[0]}")
        return v.rechunk((row_chunks,))

    return X, aligned(y, "y"), aligned(sample_weight, "sample_weight"), names


def _frame_categories(X, categorical_features):
    """(is_categorical, categories) of a dask DataFrame, as `fit_categories`
    finds them on a pandas one (from its meta: the columns' categories, in
    their order); (None, None) for an array (`resolve_fitted` resolves its
    ``categorical_features`` once its width is known). ValueError naming a
    ``category`` column whose categories are unknown (``known=False``: each
    partition has its own, unknown until computed)."""
    if not (_is_dask_frame(X) and X.ndim == 2):
        return None, None
    for name, dtype in X.dtypes.items():
        if str(dtype) == "category" and not X[name].cat.known:
            raise ValueError(f"column {str(name)!r} is a category column of unknown "
                             "categories (each partition has its own); the Dask fit needs "
                             f"them known: X[{str(name)!r}] = X[{str(name)!r}].cat.as_known() "
                             "(or read the data with them known)")
    _, is_categorical, categories = fit_categories(X._meta, categorical_features)
    return is_categorical, categories


def _numeric_frame(X, categories=None):
    """A dask DataFrame's columns as numbers, as the in-memory fit takes them:
    nullable (Int64, Float64, boolean; pd.NA missing) and bool columns become
    float64 (NaN missing) in each partition, and a ``category`` column the
    codes of its levels in ``categories[j]`` (matched by value in each
    partition, whatever its own categories' order: `_coded_frame`).
    ValueError naming a text column, or a category column without
    ``categories`` (a forest fitted on numbers there)."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    categories = [None] * len(X.columns) if categories is None else categories
    for (name, dtype), levels in zip(X.dtypes.items(), categories):
        if str(dtype) == "category":
            if levels is None:
                raise ValueError(f"column {str(name)!r} has the category dtype, but the forest "
                                 "was fitted on numbers there; pass the column as it was at "
                                 "fit")
            continue
        if getattr(dtype, "kind", "O") in "OSU" or str(dtype).startswith(("str", "string")):
            raise ValueError(f"column {str(name)!r} holds text (dtype {dtype}); the Dask fit "
                             "takes numbers only")
        if not (is_numeric_dtype(dtype) or is_bool_dtype(dtype)):
            raise ValueError(f"column {str(name)!r} has dtype {dtype}; the Dask fit takes "
                             "numbers only")
    if all(isinstance(dtype, np.dtype) and dtype.kind in "iuf" for dtype in X.dtypes):
        return X
    return X.map_partitions(_coded_frame, categories, meta=_coded_frame(X._meta, categories))


def _coded_frame(frame, categories):
    """A pandas partition as float64 columns, pd.NA as NaN, each ``category``
    column as the positions of its values in ``categories[j]`` (by value, NaN
    missing); ValueError naming a column whose partition holds a level not
    among them."""
    import pandas

    columns = {}
    for name, levels in zip(frame.columns, categories):
        column = frame[name]
        if levels is None:
            columns[name] = column.to_numpy(dtype=np.float64, na_value=np.nan)
            continue
        # code -1 (missing) takes the last entry, -1
        positions = np.append(pandas.Index(levels).get_indexer(column.cat.categories), -1)
        codes = column.cat.codes.to_numpy()
        mapped = positions[codes]
        unknown = (codes >= 0) & (mapped < 0)
        if unknown.any():
            raise ValueError(f"column {str(name)!r} holds the level "
                             f"{column[unknown].iloc[0]!r}, which is not among its categories "
                             f"{list(levels)[:10]}; the partitions' levels must be the "
                             "frame's (its meta's) categories")
        values = mapped.astype(np.float64)
        values[mapped < 0] = np.nan
        columns[name] = values
    return pandas.DataFrame(columns, index=frame.index, columns=frame.columns)


def _check_supported(forest):
    """Raise for the settings a fit on rows spread over workers cannot honour."""
    if forest.max_bins is None:
        raise ValueError("max_bins=None (the exact splitter) needs all rows in one process; "
                         "fit on a dask collection with max_bins='auto' (255 bins) or an int")
    if forest.class_weight == "balanced_subsample":
        raise ValueError("class_weight='balanced_subsample' is not supported on dask "
                         "collections (its weights depend on each tree's draw); use "
                         "'balanced'")
    if forest.warm_start:
        raise ValueError("warm_start=True is not supported on dask collections")


# ---------------------------------------------------------------------------- block tasks

def _block_stats(X, y, w, start, sample_key, sample_rate, is_categorical=None, names=None):
    """What the client needs from one partition before binning: infinite
    values, labels, weights' range, the hash-selected sample of rows (of
    the ordered features: a categorical feature's bins are its levels) and
    each categorical feature's largest level code (-1: none), its codes
    checked with the in-memory error (`check_categorical_codes`)."""
    X = np.asarray(X, dtype=np.float32)
    check_categorical_codes(X, is_categorical, names)
    categorical = np.zeros(X.shape[1], dtype=bool) if is_categorical is None else is_categorical
    y = np.asarray(y)
    labels, counts = np.unique(y, return_counts=True)
    stats = {"infinite": bool(np.isinf(X).any()), "labels": labels, "counts": counts}
    if w is not None:  # non-finite or negative weights refused with the in-memory error
        w = check_sample_weight(w, X, dtype=np.float64, ensure_non_negative=True)
        stats["w_max"] = float(w.max()) if w.size else 0.0
        positive = y[w > 0]
    else:
        positive = y
    stats["positive"] = np.unique(positive, return_counts=True)
    selected = row_uniforms(sample_key, start, X.shape[0]) < sample_rate
    stats["sample"] = X[selected][:, ~categorical]
    levels = X[:, categorical]
    stats["largest_level"] = np.max(np.where(np.isnan(levels), -1, levels), axis=0,
                                    initial=-1).astype(np.int64)
    return stats


def _encode_block(X, y, w, start, ctx):
    """One partition as the fit keeps it: uint8 codes (C order), class codes,
    integer weights (None when all one), the draw classes and its start."""
    X = np.asarray(X, dtype=np.float32)
    n, p = X.shape
    codes = np.empty((n, p), dtype=np.uint8)
    categorical = ctx.get("is_categorical")
    for f in range(p):
        if categorical is not None and categorical[f]:  # the level itself, as bin_features
            codes[:, f] = _level_codes(X[:, f])
        else:
            codes[:, f] = _codes(X[:, f], ctx["edges"][f, :ctx["n_bins"][f] - 1])
    y = np.searchsorted(ctx["classes"], np.asarray(y)).astype(np.int32)
    K = ctx["classes"].shape[0]
    prior = np.zeros(K, dtype=np.int64)
    weights = None
    draw_y = y
    if w is not None:
        sw = np.asarray(w, dtype=np.float64) / ctx["w_max"]
        q = np.rint(sw * ctx["weight_unit"]).astype(np.int64)
        q[(sw > 0) & (q == 0)] = 1
        for k in range(K):
            prior[k] = q[y == k].sum()
        if ctx["balanced"]:
            draw_y = np.where(sw > 0, y, -1).astype(np.int32)
    else:
        prior[:] = np.bincount(y, minlength=K)
        sw = None
    if ctx["weighted"]:
        base = np.ones(n) if sw is None else sw
        if ctx["class_weights"] is not None:
            base = base * ctx["class_weights"][y]
        weights = np.rint(base * ctx["weight_unit"]).astype(np.int64)
        weights[(base > 0) & (weights == 0)] = 1
    return {"codes": codes, "y": y, "weights": weights, "draw_y": draw_y,
            "start": int(start), "prior": prior}


def _block_prior(block):
    return block["prior"]


def _init_state(block, tree_keys, rates, poisson, n_classes):
    """Node ids (the root, id t, for each drawn row of positive weight) and
    multiplicities of the partition's rows in a batch of trees, and the roots'
    sums (class weights and distinct cases per tree)."""
    n = block["y"].shape[0]
    rows = block["start"] + np.arange(n, dtype=np.int64)
    counts = draw_counts(tree_keys, rows, block["draw_y"], rates, poisson)
    ids, sums = start_trees(counts, block["weights"], block["y"], n_classes)
    return {"ids": ids, "counts": counts, "sums": sums}


def _root_sums(state):
    return state["sums"]


def _round(block, state, tables, n_codes, n_classes):
    """One round where the rows are: move the rows of split nodes to their
    children (`route`), take out the rows of nodes finished in memory
    (grouped per task), then add the histograms asked for. ``tables``
    (routes, request, finish) is one key of the round, sent to each worker
    once whatever the number of its partitions."""
    routes, request, finish = tables
    codes = block["codes"]
    ids = state["ids"]
    if routes is not None:
        ids = route(codes, ids, *routes)
    parts = {}
    if finish is not None:
        group_of, n_groups = finish
        if routes is None:
            ids = ids.copy()  # the input state stays as it was (a task may be rerun)
        y = block["y"]
        y = y.astype(np.uint8) if n_classes <= 256 else y
        for group, (node, tree_, row) in enumerate(take_rows(ids, group_of, n_groups)):
            weight = state["counts"][tree_, row]
            if block["weights"] is not None:
                weight = weight * block["weights"][row]
            parts[group] = {"node": node, "row": block["start"] + row, "codes": codes[row],
                            "y": y[row], "weight": weight}
    hist = None
    if request is not None:
        first_slot, slot_feature = request
        hist = histograms(codes, ids, state["counts"], block["weights"], block["y"],
                          first_slot, slot_feature, n_codes, n_classes)
    return {"state": {"ids": ids, "counts": state["counts"]}, "hist": hist, "parts": parts}


def _sum_histograms(*parts):
    """Sum of the partitions' integer histograms (exact: any order gives the same)."""
    hist = parts[0][0].copy()
    cases = parts[0][1].copy()
    for h, c in parts[1:]:
        hist += h
        cases += c
    return hist, cases


def _take_group(group, *taken):
    """One worker's rows of an in-memory finishing group: the rows its
    partitions took out (``taken``, the "parts" of their round results),
    sorted by (node, global row index). One task per (worker, group), where
    the rows are."""
    parts = [t[group] for t in taken]
    node = np.concatenate([p["node"] for p in parts])
    row = np.concatenate([p["row"] for p in parts])
    order = np.lexsort((row, node))
    return {"node": node[order], "row": row[order],
            **{name: np.concatenate([p[name] for p in parts])[order]
               for name in ("codes", "y", "weight")}}


def _grow_local(takes, nodes, ctx, finishing, oob_x):
    """Grow the subtrees of nodes finished in memory (one tree's nodes): each
    node's rows from every worker's take (``takes``, sorted by node), ordered
    by global row index, the in-memory binned splitter (`grow_tree`) seeded
    from the node's key.

    ``finishing`` is (candidate node sizes, size to collapse to or None,
    split_impurity). For the out-of-bag rows of each node (indices into
    ``oob_x``, the node-size choice's rows that reach it) the proportions of
    the subtree's node each candidate predicts from (`accumulate_oob_proba`;
    the client replaces those of candidates above the subtree's root size).
    With a size known, the subtree is collapsed to it here
    (`_collapse_subtree`).

    Returns {"subtrees": {node id: (node arrays, depth)},
             "oob": {node id: (root size, proportions (candidates, rows, K))}}.
    """
    sizes, collapse_to, split_impurity = finishing
    params = ctx["params"]
    p, K = ctx["edges"].shape[0], ctx["n_classes"]
    out, oob = {}, {}
    for node_id, key, depth, min_weight_leaf, oob_rows in nodes:
        pieces = [(t, np.searchsorted(t["node"], node_id),
                   np.searchsorted(t["node"], node_id, side="right")) for t in takes]
        pieces = [(t, lo, hi) for t, lo, hi in pieces if hi > lo]
        # each piece's rows ascending: their places in the node's rows, by global index
        place = np.argsort(np.argsort(np.concatenate([t["row"][lo:hi] for t, lo, hi in pieces]),
                                      kind="stable"))
        n_rows = place.shape[0]
        codes = np.empty((n_rows, pieces[0][0]["codes"].shape[1]), dtype=np.uint8, order="F")
        y = np.empty(n_rows, dtype=np.intp)
        w = np.empty(n_rows, dtype=np.float64)
        start = 0
        for t, lo, hi in pieces:  # each piece written in place: no copy of the node's rows
            at = place[start:start + hi - lo]
            codes[at] = t["codes"][lo:hi]
            y[at] = t["y"][lo:hi]
            w[at] = t["weight"][lo:hi]
            start += hi - lo
        del place
        w *= ctx["weight_scale"]
        binned = BinnedData(codes, ctx["edges"], ctx["n_bins"], ctx.get("is_categorical"))
        max_depth = None if params["max_depth"] is None else params["max_depth"] - depth
        total = w.sum()
        tree_ = grow_tree(binned, y, w, K, is_categorical=ctx.get("is_categorical"),
                          seed=int(key), **dict(
                              params, max_depth=max_depth,
                              min_weight_fraction_leaf=min_weight_leaf / total
                              if min_weight_leaf > 0 else 0.0))
        del binned, codes, y
        arrays = tree_.node_arrays()
        top = w.max()
        if top != 1.0:  # grow_tree rescaled the weights to a maximum of 1
            arrays["weighted_n_node_samples"] = arrays["weighted_n_node_samples"] * top
        subtree = (arrays, tree_.max_depth)
        if oob_rows is not None and oob_rows.shape[0]:
            grafted = Tree(p, K, max_depth=tree_.max_depth, **arrays)
            proba = np.zeros((len(sizes), oob_rows.shape[0], K))
            accumulate_oob_proba(grafted, oob_x[oob_rows], np.zeros(oob_rows.shape[0], np.intp),
                                 np.asarray(sizes, dtype=np.int32), proba,
                                 np.zeros(oob_rows.shape[0]))
            oob[node_id] = (int(arrays["n_node_samples"][0]), proba)
        if collapse_to is not None:
            subtree = _collapse_subtree(subtree, p, K, collapse_to, split_impurity)
        out[node_id] = subtree
    return {"subtrees": out, "oob": oob}


def _collapse_subtree(subtree, n_features, n_classes, min_samples, split_impurity):
    """A subtree grown in memory collapsed to ``min_samples`` where it is, so
    that grafted into its tree's top and collapsed there it gives the tree
    `Tree.collapsed` gives (node sizes shrink along a path: below its root
    nothing depends on the top). A root below ``min_samples`` becomes one
    leaf with its own record: its parent decides whether it stays, predicting
    the parent's proportions."""
    arrays, depth = subtree
    if arrays["n_node_samples"][0] < min_samples:
        leaf = {name: np.asarray(a)[:1].copy() for name, a in arrays.items()
                if name not in ("categorical_split", "left_levels")}
        leaf["children_left"][:] = -1
        leaf["children_right"][:] = -1
        leaf["feature"][:] = -2
        leaf["threshold"][:] = -2.0
        leaf["missing_go_to_left"][:] = 0
        leaf["improvement"][:] = 0.0
        return leaf, 0
    tree_ = Tree(n_features, n_classes, max_depth=depth, **arrays).collapsed(
        min_samples, split_impurity=split_impurity)
    return tree_.node_arrays(), tree_.max_depth


def _collapse_group(result, n_features, n_classes, min_samples, split_impurity):
    """The subtrees of a finishing task, collapsed to the chosen node size."""
    return {node_id: _collapse_subtree(subtree, n_features, n_classes, min_samples,
                                       split_impurity)
            for node_id, subtree in result["subtrees"].items()}


def _oob_of(result):
    return result["oob"]


def _edge_values(block, edges, n_bins, is_categorical=None):
    """float32 values standing for the codes: a bin's upper edge (NaN when
    missing), which every tree sends where it sends the bin's real values;
    a categorical feature's level code itself."""
    codes = block["codes"]
    X = np.empty(codes.shape, dtype=np.float32, order="F")
    for f in range(codes.shape[1]):
        table = np.full(256, np.nan, dtype=np.float32)
        if is_categorical is not None and is_categorical[f]:
            table[:MISSING_CODE] = np.arange(MISSING_CODE)
        else:
            table[:n_bins[f]] = edges[f, :n_bins[f]]
        X[:, f] = table[codes[:, f]]
    return X


def _oob_rows(block, rates, key):
    """The partition's rows selected (by a hash of their global index, at a rate
    per class) for the node-size choice: global index, class, draw class, codes."""
    y = block["y"]
    selected = np.flatnonzero(row_uniforms(key, block["start"], y.shape[0]) < rates[y])
    return {"row": block["start"] + selected, "y": y[selected],
            "draw_y": block["draw_y"][selected], "codes": block["codes"][selected]}


def _add_oob(trees, draw, X, rows, draw_y, sizes, proba, n_trees):
    """Add the OOB proportions of `trees` for the rows (global indices) of X."""
    keys, rates, poisson = draw
    sizes = np.asarray(sizes, dtype=np.int32)
    for lo in range(0, len(trees), MAX_TREES_PER_BATCH):
        counts = draw_counts(keys[lo:lo + MAX_TREES_PER_BATCH], rows, draw_y,
                             rates[lo:lo + MAX_TREES_PER_BATCH], poisson)
        for tree_, c in zip(trees[lo:lo + MAX_TREES_PER_BATCH], counts):
            accumulate_oob_proba(tree_, X, c.astype(np.intp), sizes, proba, n_trees)


def _oob_decision_block(X, y, w, model, weighted, block_info=None):
    """The OOB decision function of one block of the training X, y and
    weights (columns; `oob_decision_function`), at the node size chosen; NaN
    for rows in every tree's draw."""
    start = block_info[0]["array-location"][0][0]
    X = np.asfortranarray(np.asarray(X, dtype=np.float32))
    y = np.asarray(y)[:, 0]
    w = np.asarray(w)[:, 0] if weighted else None
    classes = model["classes"]
    codes = np.minimum(np.searchsorted(classes, y), classes.shape[0] - 1)
    if not np.all(classes[codes] == y):
        unknown = y[classes[codes] != y][:1].tolist()[0]
        raise ValueError(f"y holds the label {unknown!r}, which is not one of the forest's "
                         f"classes_ {classes.tolist()}")
    y = codes.astype(np.int32)
    if model["balanced"] and w is not None:
        y = np.where(np.asarray(w) > 0, y, -1).astype(np.int32)
    rows = start + np.arange(X.shape[0], dtype=np.int64)
    proba = np.zeros((1, X.shape[0], model["classes"].shape[0]))
    n_trees = np.zeros(X.shape[0])
    _add_oob(model["trees"], model["draw"], X, rows, y, [model["size"]], proba, n_trees)
    with np.errstate(invalid="ignore", divide="ignore"):
        return proba[0] / n_trees[:, None]


# ---------------------------------------------------------------------------- the fit

class _Node:
    """A node of a tree being grown (on the client)."""
    __slots__ = ("id", "tree", "key", "depth", "counts", "n_cases", "constant", "order",
                 "hists", "kind", "split", "children", "subtree", "weight", "dcounts",
                 "above")  # above: m of the parent (`aucforest._leaf_budget`), inf at a root


class _Fit:
    """One fit on rows that stay on the workers (see the module docstring)."""

    def __init__(self, forest, X, y, sample_weight):
        self.forest = forest
        self.client = _client()
        self.id = uuid.uuid4().hex[:10]
        self._keys = itertools.count()
        self.stats = {"rounds": 0, "gathered_bytes": 0, "largest_gather_bytes": 0,
                      "largest_gathered_rows": 0, "sent_bytes": 0, "histogram_slots": 0,
                      "open_nodes": 0, "finished_rows": 0, "finished_nodes": 0,
                      "tasks": 0, "tasks_per_round": [], "finishing_groups": 0,
                      "table_bytes_to_workers": 0, "finishing_waits": 0,
                      "deferred_nodes": 0}
        self.inputs = (X, y, sample_weight)

    # -- plumbing

    def submit(self, fn, *args, name="task", worker=None, **kwargs):
        """client.submit with a key naming the fit and the task's kind; with
        ``worker`` the task runs there (where its data are) while that worker
        lives, elsewhere if it is lost (a loose restriction: the scheduler
        would otherwise move a partition's rows and node state to a less busy
        worker, at every round)."""
        self.stats["tasks"] += 1
        if worker is not None:
            kwargs.update(workers=[worker], allow_other_workers=True)
        return self.client.submit(fn, *args, key=f"aucforest-{name}-{self.id}-{next(self._keys)}",
                                  **kwargs)

    def _reduce(self, fn, futures, name):
        """fn(*futures) as a tree of tasks of at most REDUCE_FAN_IN inputs each,
        over the partitions in the order of their workers (``self.order``): the
        first level sums each worker's partitions where they are, and no task
        receives more than REDUCE_FAN_IN partial sums."""
        level = [futures[i] for i in self.order]
        workers = [self.block_worker[i] for i in self.order]
        while len(level) > 1:
            level, workers = (
                [self.submit(fn, *level[i:i + REDUCE_FAN_IN], name=name, priority=1,
                             worker=workers[i]) if len(level[i:i + REDUCE_FAN_IN]) > 1
                 else level[i] for i in range(0, len(level), REDUCE_FAN_IN)],
                workers[::REDUCE_FAN_IN])
        return level[0]

    def gather(self, futures, what="data"):
        """client.gather, counting the bytes that reach the client (per `what`)
        and, for data rather than trees, the largest number of rows."""
        result = self.client.gather(futures)
        size, rows = _payload(result)
        rows = rows if what != "trees" else 0
        self.stats[f"{what}_bytes"] = self.stats.get(f"{what}_bytes", 0) + size
        self.stats["gathered_bytes"] += size
        self.stats["largest_gather_bytes"] = max(self.stats["largest_gather_bytes"], size)
        self.stats["largest_gathered_rows"] = max(self.stats["largest_gathered_rows"], rows)
        return result

    # -- steps

    def run(self):
        forest = self.forest
        check_counts_are_not_booleans(forest)
        forest._check_sampling_params()
        _check_supported(forest)
        from sklearn.utils import check_random_state

        X, y, sample_weight = self.inputs
        is_categorical, categories = _frame_categories(X, forest.categorical_features)
        self.X, self.y, self.w, self.names = _as_rows(X, y, sample_weight, categories)
        self.n, self.p = n, p = self.X.shape
        if n == 0 or p == 0:
            raise ValueError(f"X has shape {self.X.shape}; at least one row and one feature "
                             "are needed")
        self.is_categorical, self.categories = resolve_fitted(
            forest.categorical_features, p, is_categorical, categories)
        random_state = check_random_state(forest.random_state)
        self.seeds = random_state.randint(MAX_SEED, size=forest.n_estimators)
        self.fit_key = int(random_state.randint(MAX_SEED))
        self.max_bins = MAX_BINS if forest.max_bins == "auto" else int(forest.max_bins)
        self._prepare()
        self._grow()
        self._finish()
        forest._dask_fit_stats = dict(self.stats, n_trees=len(self.trees),
                                      tree_nodes=sum(t.node_count for t in self.trees),
                                      tasks_per_tree=self.stats["tasks"] / len(self.trees))
        return forest

    def _prepare(self):
        """Validate, sample the edges, bin every partition where it is."""
        import dask

        forest, n, p = self.forest, self.n, self.p
        starts = np.concatenate([[0], np.cumsum(self.X.chunks[0])[:-1]]).astype(np.int64)
        self.starts = starts
        X_blocks = self.X.to_delayed().ravel()
        y_blocks = self.y.to_delayed().ravel()
        w_blocks = [None] * len(X_blocks) if self.w is None else list(self.w.to_delayed().ravel())
        sample_rate = min(1.0, EDGE_SAMPLE_ROWS / n)
        edge_key = hash_key(self.fit_key, _STREAM_EDGES)
        categorical = self.is_categorical if self.is_categorical.any() else None
        stats = self.gather(self.client.compute([
            dask.delayed(_block_stats)(xb, yb, wb, int(s), edge_key, sample_rate, categorical,
                                       self.names)
            for xb, yb, wb, s in zip(X_blocks, y_blocks, w_blocks, starts)]))
        if any(s["infinite"] for s in stats):
            raise ValueError("Input X contains infinity or a value too large for "
                             "dtype('float32').")
        from sklearn.utils.multiclass import check_classification_targets
        labels = np.concatenate([s["labels"] for s in stats])
        check_classification_targets(labels)
        classes = np.unique(labels)
        check_two_classes(classes)
        K = self.K = classes.shape[0]
        counts = np.zeros(K, dtype=np.int64)
        positive = np.zeros(K, dtype=np.int64)
        for s in stats:
            counts[np.searchsorted(classes, s["labels"])] += s["counts"]
            labels_pos, counts_pos = s["positive"]
            positive[np.searchsorted(classes, labels_pos)] += counts_pos
        w_max = 1.0
        if self.w is not None:  # each partition's checked as in memory (`_block_stats`)
            w_max = max(s["w_max"] for s in stats)
            check_some_weight(w_max > 0)
        class_weights = class_weights_of_counts(forest.class_weight, classes, counts)
        weighted = self.w is not None or class_weights is not None
        # integer weights: multiples of 2**-S, S leaving room for n rows x 255 draws
        self.weight_bits = WEIGHT_BITS - 8 - int(n).bit_length() if weighted else 0
        if weighted and self.weight_bits < 20:
            raise ValueError(f"{n} rows leave too few bits for exact weight sums")
        sample = np.concatenate([s["sample"] for s in stats])
        edges = np.full((p, self.max_bins), np.inf)
        n_bins = np.empty(p, dtype=np.intp)
        for j, f in enumerate(np.flatnonzero(~self.is_categorical)):  # as bin_features does
            set_feature_edges(f, np.array(sample[:, j]), self.max_bins, edges, n_bins)
        # a categorical feature: one bin per level (its codes are the levels), edges unused
        largest = np.max([s["largest_level"] for s in stats], axis=0, initial=-1)
        for j, f in enumerate(np.flatnonzero(self.is_categorical)):
            n_bins[f] = max(1, int(largest[j]) + 1, len(self.categories[f] or ()))
        self.classes, self.class_counts, self.positive = classes, counts, positive
        self.edges, self.n_bins = edges, n_bins
        self.n_codes = int(n_bins.max()) + 1  # value bins and the missing one
        self.weight_scale = 2.0 ** -self.weight_bits
        forest_params = tree_params(forest)
        params = dict(forest_params, max_bins=self.max_bins)
        self.ctx = {"edges": edges, "n_bins": n_bins, "classes": classes, "w_max": w_max,
                    "weight_unit": 2.0 ** self.weight_bits, "weighted": weighted,
                    "class_weights": class_weights, "balanced": forest.balanced_bootstrap,
                    "n_classes": K, "weight_scale": self.weight_scale, "params": params,
                    "is_categorical": categorical}
        # a task, not scattered data: a worker lost mid-fit recomputes it
        ctx_f = self.submit(_identity, self.ctx, name="context")
        self.ctx_f = ctx_f
        self.blocks = self.client.compute([
            dask.delayed(_encode_block)(xb, yb, wb, int(s), ctx_f)
            for xb, yb, wb, s in zip(X_blocks, y_blocks, w_blocks, starts)])
        priors = self.gather([self.submit(_block_prior, b, name="prior") for b in self.blocks])
        # partitions grouped by the worker holding them, for the sums' first level (a
        # hint: a partition recomputed elsewhere changes where sums run, not their value)
        where = self.client.who_has(self.blocks)
        self.block_worker = [min(where.get(b.key, ()), default=None) for b in self.blocks]
        self.order = sorted(range(len(self.blocks)),
                            key=lambda i: (self.block_worker[i] or "", i))
        # ... and for the finishing tasks' takes: one per (worker, group)
        self.worker_sets = [(worker, list(indices)) for worker, indices in itertools.groupby(
            self.order, key=lambda i: self.block_worker[i])]
        totals = np.sum(priors, axis=0)
        forest.classes_, forest.n_classes_ = classes, K
        validate_decision(forest.decision, K)
        forest.class_prior_ = (np.full(K, 1.0 / K) if forest.balanced_bootstrap
                               else totals / totals.sum())
        forest.draw_class_weights_ = draw_class_weights_of_sums(
            np.ones(K) if class_weights is None else class_weights, positive,
            totals / totals.sum(), forest.bootstrap and forest.balanced_bootstrap)
        forest.n_features_in_ = p
        if self.names is not None:
            forest.feature_names_in_ = self.names
        elif "feature_names_in_" in vars(forest):
            del forest.feature_names_in_
        forest.is_categorical_, forest.categories_ = self.is_categorical, self.categories
        forest.max_bins_ = self.max_bins
        self._draw_rates()
        self._oob_choice_rows()

    def _draw_rates(self):
        """Per tree and class: Bernoulli or Poisson rate of each row's draw."""
        forest, K = self.forest, self.K
        draws = CaseDraws(forest, np.zeros(0, dtype=np.intp), None)
        self.poisson = bool(forest.bootstrap and forest.replacement)
        if not forest.bootstrap:
            rate = np.ones(K)
        elif forest.balanced_bootstrap:
            present = self.positive > 0
            per_class = draws._n_draws(int(self.positive[present].min()))
            rate = np.where(present, per_class / np.maximum(self.positive, 1), 0.0)
        else:
            rate = np.full(K, draws._n_draws(self.n) / self.n)
        self.rates = np.tile(rate, (len(self.seeds), 1))
        self.draw_keys = np.array([hash_key(int(s), _STREAM_DRAWS) for s in self.seeds],
                                  dtype=np.uint64)

    def _grow(self):
        forest = self.forest
        self.trees = []
        criterion = CRITERIA[forest.criterion]
        self.max_features = resolve_max_features(forest.max_features, self.p)
        self.local_rows = local_rows(self.n)
        self.min_samples_leaf = min(forest.min_samples_leaf, self.n)
        self.splitter = HistogramSplitter(self.edges, self.p, self.K, criterion,
                                          self.max_features, self.min_samples_leaf,
                                          forest.nsplit or 0, self.ctx.get("is_categorical"))
        # trees per batch: their state (5 bytes per row and tree) within BATCH_STATE_BYTES
        # per worker; the trees do not depend on it (each grows from its own keys)
        self.workers = sorted(self.client.scheduler_info().get("workers", ()))
        self.n_workers = n_workers = max(1, len(self.workers))
        # rows of the finishing tasks waiting on one worker (FINISH_BACKLOG_BYTES)
        self.backlog_rows = max(1, FINISH_BACKLOG_BYTES // (self.p + FINISH_ROW_BYTES))
        per_batch = int(np.clip(BATCH_STATE_BYTES * n_workers // (5 * self.n), 1,
                                MAX_TREES_PER_BATCH))
        batches = [range(lo, min(lo + per_batch, len(self.seeds)))
                   for lo in range(0, len(self.seeds), per_batch)]
        # the node size: known now (one candidate: the finishing tasks collapse their
        # subtrees), or chosen at the end (the grown subtrees wait on the workers)
        self.collapse_to = self.candidates[0] if len(self.candidates) == 1 else None
        # max_leaf_nodes: a tree is cut once assembled, so its subtrees come back grown and
        # its out-of-bag sums are added on the client, from the cut tree
        self.bounded = forest.max_leaf_nodes is not None
        self.finishing_spec = (np.asarray(self.candidates, dtype=np.int32),
                               None if self.bounded else self.collapse_to,
                               forest.criterion in SPLIT_STATISTIC_CRITERIA)
        self.oob_x_f = None
        if self.oob is not None:  # the node-size choice's rows, sent to each worker once
            self.oob_x_f = self.submit(_identity, self.oob["X"], name="oobrows")
            self.stats["sent_bytes"] += self.oob["X"].nbytes
        self.finishing = []  # (future, worker, rows) of finishing tasks not known to be done
        self.kept = []  # (top, finishing futures) of trees collapsed once the size is chosen
        self.kept_bounded = []  # cut trees (max_leaf_nodes) collapsed once the size is chosen
        self.unfinished = []  # grown batches whose subtrees are still being finished
        for indices in batches:
            self._grow_batch(indices)
            while len(self.unfinished) > 1:  # the last batch's subtrees overlap the next
                self._complete(self.unfinished.pop(0))
        for batch in self.unfinished:
            self._complete(batch)
        self.unfinished = []
        self.oob_x_f = None

    def _complete(self, batch):
        """The batch's trees in tree order: their out-of-bag sums (from the tops
        and the finishing tasks' proportions), and with the node size known,
        the trees themselves, collapsed where their subtrees were grown; else
        their tops and finishing tasks wait for `_collapse_kept`."""
        criterion = self.forest.criterion
        if self.bounded:
            self._complete_bounded(batch)
            return
        for t, root in enumerate(batch["roots"]):
            futures = batch["groups"][t]
            subtrees, oob = {}, {}
            if self.collapse_to is not None:
                for result in self.gather([f for f, _ in futures], what="trees"):
                    subtrees.update(result["subtrees"])
                    oob.update(result["oob"])
            elif self.oob is not None:
                for part in self.gather([o for _, o in futures], what="oob"):
                    oob.update(part)
            if self.oob is not None:
                self._add_tree_oob(root, batch["oob_at"], oob)
            _release_top(root)
            if self.collapse_to is not None:
                self.trees.append(collapsed(self._assemble(root, subtrees), self.collapse_to,
                                            criterion))
            else:
                self.kept.append((root, [f for f, _ in futures]))
            batch["groups"][t] = None
        batch["oob_at"] = None

    def _complete_bounded(self, batch):
        """The batch's trees under ``max_leaf_nodes``: grown subtrees gathered
        (at most max_leaf_nodes leaves each), each tree assembled and cut, its
        out-of-bag sums added, then collapsed (node size known) or kept."""
        indices = list(batch["indices"])
        for t, root in enumerate(batch["roots"]):
            subtrees = {}
            for result in self.gather([f for f, _ in batch["groups"][t]], what="trees"):
                subtrees.update(result["subtrees"])
            batch["groups"][t] = None
            tree_ = self._assemble(root, subtrees)
            del subtrees
            if self.oob is not None:
                i = indices[t:t + 1]
                _add_oob([tree_], (self.draw_keys[i], self.rates[i], self.poisson),
                         self.oob["X"], self.oob["row"], self.oob["draw_y"], self.candidates,
                         self.oob["proba"], self.oob["n_trees"])
            if self.collapse_to is not None:
                self.trees.append(collapsed(tree_, self.collapse_to, self.forest.criterion))
            else:
                self.kept_bounded.append(tree_)
        batch["oob_at"] = None

    def _collapse_kept(self, min_samples):
        """The trees whose subtrees waited on the workers: collapsed there to the
        node size chosen, gathered one tree at a time, grafted into their tops."""
        split_impurity = self.forest.criterion in SPLIT_STATISTIC_CRITERIA
        if self.bounded:
            self.trees.extend(collapsed(tree_, min_samples, self.forest.criterion)
                              for tree_ in self.kept_bounded)
            self.kept_bounded = []
            return
        kept, self.kept = self.kept, []
        collapsing = [[self.submit(_collapse_group, f, self.p, self.K, min_samples,
                                   split_impurity, name="collapse") for f in futures]
                      for _, futures in kept]
        tops = [root for root, _ in kept]
        del kept
        for root, futures in zip(tops, collapsing):
            subtrees = {}
            for result in self.gather(futures, what="trees"):
                subtrees.update(result)
            futures.clear()
            self.trees.append(collapsed(self._assemble(root, subtrees), min_samples,
                                        self.forest.criterion))

    def _add_tree_oob(self, root, oob_at, found):
        """Add one tree's out-of-bag proportions over the node-size choice's rows
        for each candidate size, as `accumulate_oob_proba` on the whole tree
        would (the same additions, tree after tree): the node each candidate
        predicts from is the deepest on the row's path with at least that many
        cases (the root at least); below a finished subtree's root, ``found``
        (the finishing task's), else a node of the top."""
        sizes = self.candidates
        proba, n_trees = self.oob["proba"], self.oob["n_trees"]
        stack = [(root, ())]
        while stack:
            node, path = stack.pop()
            if node.kind == "split":
                here = path + ((node.n_cases, node.dcounts / node.weight),)
                stack.extend((child, here) for child in node.children)
                continue
            rows = oob_at.get(node.id)
            if rows is None or rows.shape[0] == 0:
                continue
            if node.kind == "local":
                size, values = found[node.id]
                if path and any(size < m for m in sizes):
                    values = values.copy()  # the gathered array may be the worker's own
            else:  # a leaf of the top: the deepest node is on the top's path
                size, values = 0, np.empty((len(sizes), rows.shape[0], self.K))
                path = path + ((node.n_cases, node.dcounts / node.weight),)
            for c, m in enumerate(sizes):
                if size < m and path:
                    values[c] = next((v for n, v in reversed(path) if n >= m), path[0][1])
            for c in range(len(sizes)):
                proba[c, rows] += values[c]
            n_trees[rows] += 1

    def _route_oob(self, oob_at, split_nodes):
        """Move the out-of-bag rows of the node-size choice (of each tree) from
        split nodes to their children, as the tree sends them (x <= threshold,
        missing values by the split's side)."""
        if self.oob is None:
            return
        X = self.oob["X"]
        for node in split_nodes:
            rows = oob_at.pop(node.id, None) if node.kind == "split" else None
            if rows is None:
                continue
            r = node.split
            x = X[rows, r["feature"]].astype(np.float64)
            if r["categorical"]:  # the level codes in the set (NaN: missing)
                observed = ~np.isnan(x)
                left = np.isnan(x) & bool(r["missing_left"])
                left[observed] = _levels_left(r["left_levels"], MISSING_CODE)[
                    x[observed].astype(np.intp)]
            else:
                left = ((x <= np.float64(r["threshold"]))
                        | (np.isnan(x) & bool(r["missing_left"])))
            oob_at[node.children[0].id] = rows[left]
            oob_at[node.children[1].id] = rows[~left]

    def _oob_roots(self, roots, keys, rates):
        """Out-of-bag rows (of the node-size choice's) of each tree, at its root."""
        if self.oob is None:
            return {}
        counts = draw_counts(keys, self.oob["row"], self.oob["draw_y"], rates, self.poisson)
        return {root.id: np.flatnonzero(counts[t] == 0).astype(np.int32)
                for t, root in enumerate(roots)}

    def _grow_batch(self, tree_indices):
        """Grow the trees `tree_indices` level by level on the workers; the batch
        (its roots, the futures of its subtrees finished in memory) joins
        ``self.unfinished``."""
        K = self.K
        keys = self.draw_keys[list(tree_indices)]
        rates = self.rates[list(tree_indices)]
        where = self.block_worker
        states = [self.submit(_init_state, b, keys, rates, self.poisson, K, name="draw",
                              priority=1, worker=w) for b, w in zip(self.blocks, where)]
        sums = self.gather(self._reduce(
            _sum_arrays, [self.submit(_root_sums, s, name="rootsum", priority=1, worker=w)
                          for s, w in zip(states, where)], "rootsums"))
        self.nodes = []
        roots = []
        self.tree_weight = {}
        # max_leaf_nodes: the nodes of each tree that can still be expanded best first
        self.budgets = None if self.forest.max_leaf_nodes is None else {
            t: LeafBudget(self.forest.max_leaf_nodes) for t in range(len(tree_indices))}
        for t, index in enumerate(tree_indices):
            node = self._new_node(t, hash_key(int(self.seeds[index]), _STREAM_NODES), 0,
                                  sums[t, :K], int(sums[t, K]), np.zeros(self.p, np.uint8))
            self.tree_weight[t] = node.weight
            roots.append(node)
            if node.n_cases == 0:
                raise ValueError("no sample has a positive weight in a tree's draw")
        batch = {"indices": tree_indices, "roots": roots, "groups": [[] for _ in roots],
                 "oob_at": self._oob_roots(roots, keys, rates)}
        self.unfinished.append(batch)
        pending = [n for n in roots if n.kind == "open"]   # histograms to ask for
        local = [n for n in roots if n.kind == "local"]    # rows to take out
        routes = None
        # the rounds (on the path of the client's next step) before the in-memory finishing
        # tasks, which fill the workers' time while the client chooses splits
        while pending or local or routes is not None:
            first_task = self.stats["tasks"]
            request, asked = self._request(pending)
            finish, groups, local = self._take_out(local, waiting=bool(pending))
            # the round's tables: one key, fetched once by each worker
            tables = self.submit(_identity, (routes, request, finish), name="tables",
                                 priority=1)
            self.stats["table_bytes_to_workers"] += self.n_workers * (
                _payload((routes, request))[0] + (0 if finish is None else finish[0].nbytes))
            results = [self.submit(_round, b, s, tables, self.n_codes, K,
                                   name="round", priority=1, worker=w)
                       for b, s, w in zip(self.blocks, states, where)]
            del tables
            self.stats["rounds"] += 1
            states = [self.submit(operator.getitem, r, "state", name="state", priority=1,
                                  worker=w) for r, w in zip(results, where)]
            self._submit_finishing(batch, results, groups)
            routes = None
            if request is not None:
                hist, cases = self.gather(self._reduce(
                    _sum_histograms, [self.submit(_hist_of, r, name="hist", priority=1,
                                                  worker=w)
                                      for r, w in zip(results, where)], "sum"),
                    what="histograms")
                self.stats["histogram_slots"] += hist.shape[0]
                split_now, still = [], []
                for node, slots in asked.items():
                    for f, s in slots:
                        node.hists[f] = (hist[s], cases[s])
                for node in pending:
                    if node not in asked:
                        still.append(node)
                        continue
                    outcome = self._split(node)
                    if outcome == "need":
                        still.append(node)
                    else:
                        split_now.append(node)
                pending = still
                children = [c for node in split_now for c in node.children]
                pending.extend(c for c in children if c.kind == "open")
                local.extend(c for c in children if c.kind == "local")
                if self.budgets is not None:  # nodes max_leaf_nodes rules out: leaves, rows out
                    out = [n for n in pending + local if not self._may_expand(n)]
                    for node in out:
                        self._drop(node)
                    pending = [n for n in pending if n.kind == "open"]
                    local = [n for n in local if n.kind == "local"]
                    split_now.extend(out)
                self._route_oob(batch["oob_at"], split_now)
                routes = self._routes(split_now) if split_now else None
            del results
            self._round_done(first_task)

    def _round_done(self, first_task):
        """Count the round's tasks."""
        self.stats["tasks_per_round"].append(self.stats["tasks"] - first_task)

    def _take_out(self, local, waiting):
        """The nodes finished in memory whose rows this round takes out, in
        finishing groups, each placed on a worker (`_place`), and the nodes
        that wait (their rows stay in the node ids), so that taken-out rows do
        not pile up on the workers while the rounds go first. Without
        histograms to ask for (``waiting`` False) the client waits for
        finishing tasks to end instead, until the workers' backlog is down to
        half, so that such a round takes out many groups.

        Returns ((group_of, n_groups) or None, [(group, worker)], nodes that wait)."""
        if not local:
            return None, [], []
        groups = self._groups(local)
        placed = self._place(groups)
        while not placed and not waiting:
            self.stats["finishing_waits"] += 1
            self._wait_for_room()
            placed = self._place(groups)
        if not placed:
            self.stats["deferred_nodes"] += len(local)
            return None, [], local
        taken = groups[:len(placed)]
        group_of = np.full(len(self.nodes), -1, dtype=np.int32)
        for g, group in enumerate(taken):
            for node in group:
                group_of[node.id] = g
        self.stats["sent_bytes"] += group_of.nbytes
        waiting = [n for group in groups[len(placed):] for n in group]
        self.stats["deferred_nodes"] += len(waiting)
        return (group_of, len(taken)), list(zip(taken, placed)), waiting

    def _backlog(self):
        """Finishing tasks not done and their rows, per worker: {worker: [tasks, rows]}."""
        self.finishing = [entry for entry in self.finishing if not entry[0].done()]
        loads = {worker: [0, 0] for worker in self.workers}
        for _, worker, rows in self.finishing:
            if worker in loads:
                loads[worker][0] += 1
                loads[worker][1] += rows
        return loads

    def _place(self, groups):
        """Workers for the first groups, each on the worker with the fewest
        rows waiting, while it keeps within FINISH_BACKLOG_PER_WORKER tasks and
        FINISH_BACKLOG_BYTES of rows (a worker with none waiting takes any
        group). Returns the workers of the groups placed, in order."""
        loads = self._backlog()
        placed = []
        for group in groups:
            rows = sum(node.n_cases for node in group)
            worker = min(loads, key=lambda w: (loads[w][1], loads[w][0], w), default=None)
            tasks, waiting_rows = loads.get(worker, (0, 0))
            if tasks and (tasks >= FINISH_BACKLOG_PER_WORKER
                          or waiting_rows + rows > self.backlog_rows):
                break
            if worker is not None:
                loads[worker] = [tasks + 1, waiting_rows + rows]
            placed.append((worker, rows))
        return placed

    def _wait_for_room(self):
        """Wait for finishing tasks to end until some worker's backlog is at
        most half its bound."""
        from distributed import wait

        while self.finishing:
            loads = self._backlog()
            if any(tasks * 2 <= FINISH_BACKLOG_PER_WORKER and rows * 2 <= self.backlog_rows
                   for tasks, rows in loads.values()):
                return
            wait([entry[0] for entry in self.finishing], return_when="FIRST_COMPLETED")

    def _submit_finishing(self, batch, results, groups):
        """One finishing task per group (`_grow_local`) on the worker chosen
        for it, its rows taken from each worker's partitions by one task per
        (worker, group) from the partitions' taken rows (not their whole
        round results, which hold the node state)."""
        if not groups:
            return
        parts = [self.submit(operator.getitem, r, "parts", name="parts", priority=1, worker=w)
                 for r, w in zip(results, self.block_worker)]
        for g, (group, (worker, n_rows)) in enumerate(groups):
            takes = [self.submit(_take_group, g, *[parts[i] for i in indices], name="take",
                                 priority=1, worker=holder)
                     for holder, indices in self.worker_sets]
            oob_at = batch["oob_at"]
            spec = [(n.id, n.key, n.depth, self._min_weight_leaf(n),
                     oob_at.get(n.id) if self.oob is not None and not self.bounded else None)
                    for n in group]
            self.stats["sent_bytes"] += 32 * len(spec) + sum(
                0 if rows is None else rows.nbytes for *_, rows in spec)
            grown = self.submit(_grow_local, takes, spec, self.ctx_f, self.finishing_spec,
                                self.oob_x_f, name="local", worker=worker)
            self.finishing.append((grown, worker, n_rows))
            self.stats["finishing_groups"] += 1
            oob = None
            if self.oob is not None and self.collapse_to is None and not self.bounded:
                oob = self.submit(_oob_of, grown, name="oobsums", worker=worker)
            batch["groups"][group[0].tree].append((grown, oob))

    def _new_node(self, tree, key, depth, counts, n_cases, constant, above=np.inf):
        node = _Node()
        node.id = len(self.nodes)
        self.nodes.append(node)
        node.tree, node.key, node.depth, node.above = tree, int(key), depth, above
        node.counts = np.asarray(counts, dtype=np.int64)
        node.dcounts, node.weight = self._weighted(node.counts)
        node.n_cases, node.constant = n_cases, constant
        node.order, node.hists, node.split, node.children, node.subtree = None, {}, None, (), None
        forest = self.forest
        n_present = np.count_nonzero(node.dcounts > 0)
        min_weight_leaf = self._min_weight_leaf(node) if depth > 0 else 0.0
        if (n_present < 2 or (forest.max_depth is not None and depth >= forest.max_depth)
                or n_cases < 2 * self.min_samples_leaf or node.weight < 2.0 * min_weight_leaf):
            node.kind = "leaf"
        elif n_cases <= self.local_rows:
            node.kind = "local"
            self.stats["finished_nodes"] += 1
            self.stats["finished_rows"] += n_cases
        else:
            node.kind = "open"
            node.order = feature_order(node.key, self.p)
            self.stats["open_nodes"] += 1
        return node

    def _weighted(self, counts):
        """Class weights of integer counts, and their sum in class order (as
        criterion_init sums)."""
        dcounts = np.asarray(counts, dtype=np.int64) * self.weight_scale
        weight = 0.0
        for c in dcounts:
            weight += c
        return dcounts, weight

    def _bottleneck(self, node, left, right):
        """m of a node split into children of class counts left and right: the
        smallest weighted impurity decrease of the splits on its path, this one
        included (`aucforest._leaf_budget`), computed from the class proportions
        and weights the tree will hold; inf without max_leaf_nodes."""
        if self.budgets is None:
            return np.inf
        rows = [self._weighted(c) for c in (node.counts, left, right)]
        proba = np.array([dcounts / weight for dcounts, weight in rows])
        weight = np.array([weight for _, weight in rows])
        decrease = split_priority(proba, weight, self.tree_weight[node.tree],
                                  self.forest.criterion)
        return min(node.above, decrease)

    def _may_expand(self, node):
        """Whether a node not yet split can be among its tree's max_leaf_nodes - 1
        expansions, given the nodes split so far (a root always can)."""
        return node.depth == 0 or self.budgets[node.tree].may_expand_below(node.above)

    def _drop(self, node):
        """Make an open or local node a leaf (max_leaf_nodes rules it out)."""
        if node.kind == "open":
            self.stats["open_nodes"] -= 1
        elif node.kind == "local":
            self.stats["finished_nodes"] -= 1
            self.stats["finished_rows"] -= node.n_cases
        node.kind, node.hists, node.order = "leaf", {}, None

    def _min_weight_leaf(self, node):
        fraction = self.forest.min_weight_fraction_leaf
        return fraction * self.tree_weight[node.tree] if fraction else 0.0

    def _wanted(self, node):
        """Features whose histograms the node's search needs next."""
        result = node.split  # the last search's outcome (None: not searched yet)
        start = 0 if result is None else result["need"]
        n = self.max_features - (0 if result is None else result["n_examined"])
        wanted = []
        for f in node.order[start:]:
            if len(wanted) >= n:
                break
            if not node.constant[f] and f not in node.hists:
                wanted.append(int(f))
        return wanted

    def _request(self, pending):
        """The histogram slots of this round: the next features of the pending
        nodes, in order, up to MAX_ROUND_BYTES (the rest wait a round).
        Returns ((first_slot, slot_feature), {node: [(feature, slot)]})."""
        if not pending:
            return None, {}
        budget = max(1, MAX_ROUND_BYTES // (self.n_codes * (self.K + 1) * 8))
        chosen, total = [], 0
        for node in pending:
            wanted = self._wanted(node)
            if chosen and total + len(wanted) > budget:
                break
            chosen.append((node, wanted))
            total += len(wanted)
        lengths = np.zeros(len(self.nodes), dtype=np.int64)
        for node, wanted in chosen:
            lengths[node.id] = len(wanted)
        first_slot = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        slot_feature = np.zeros(total, dtype=np.int32)
        asked = {}
        for node, wanted in chosen:
            s0 = int(first_slot[node.id])
            slot_feature[s0:s0 + len(wanted)] = wanted
            asked[node] = [(f, s0 + j) for j, f in enumerate(wanted)]
        self.stats["sent_bytes"] += first_slot.nbytes + slot_feature.nbytes
        return (first_slot, slot_feature), asked

    def _groups(self, local):
        """Nodes finished in memory, in tasks of one tree's nodes and about
        LOCAL_ROWS_PER_TASK rows, in tree order."""
        groups, rows, tree = [], 0, None
        for node in sorted(local, key=operator.attrgetter("tree")):
            if (not groups or node.tree != tree
                    or rows + node.n_cases > max(LOCAL_ROWS_PER_TASK, self.local_rows)):
                groups.append([])
                rows, tree = 0, node.tree
            groups[-1].append(node)
            rows += node.n_cases
        return groups

    def _split(self, node):
        """Search the node's split with the histograms at hand: "need" (more
        features), "split" (children made) or "leaf"."""
        available = sorted(node.hists)
        slot = np.full(self.p, -1, dtype=np.int64)
        slot[available] = np.arange(len(available))
        hist = np.zeros((len(available), self.n_codes, self.K))
        cases = np.zeros((len(available), self.n_codes), dtype=np.int64)
        for s, f in enumerate(available):
            hist[s] = node.hists[f][0] * self.weight_scale
            cases[s] = node.hists[f][1]
        result = self.splitter.find_split(hist, cases, slot, node.dcounts, node.n_cases,
                                          self._min_weight_leaf(node), node.order,
                                          node.constant, np.uint64(node.key))
        for f in result["constant"]:
            node.constant[f] = 1
        node.split = result
        if result["need"] >= 0:
            if not self._wanted(node):  # cannot happen: the search stops at a missing one
                raise RuntimeError("histogram search made no progress")
            return "need"
        if result["feature"] < 0:
            node.kind, node.hists = "leaf", {}
            return "leaf"
        f, b = result["feature"], result["bin"]
        h, c = node.hists[f]
        node.hists = {}
        if result["categorical"]:  # the levels of the set, as the splitter summed them
            goes_left = _levels_left(result["left_levels"], self.n_codes - 1)
            left = h[:-1][goes_left].sum(axis=0)
            left_cases = int(c[:-1][goes_left].sum())
        else:
            left = h[:b + 1].sum(axis=0)
            left_cases = int(c[:b + 1].sum())
        if result["missing_left"]:
            left = left + h[-1]
            left_cases += int(c[-1])
        right = node.counts - left
        m = self._bottleneck(node, left, right)
        if self.budgets is not None and not self.budgets[node.tree].may_expand(m):
            node.kind = "leaf"  # cannot be among its tree's max_leaf_nodes - 1 expansions
            return "leaf"
        constant = node.constant.copy()
        node.kind = "split"
        node.children = (
            self._new_node(node.tree, hash_key(node.key, 1), node.depth + 1, left, left_cases,
                           constant, m),
            self._new_node(node.tree, hash_key(node.key, 2), node.depth + 1, right,
                           node.n_cases - left_cases, constant.copy(), m))
        return "split"

    def _routes(self, split_nodes):
        """Tables (indexed by node id) moving the rows of the split nodes to their
        children: a leaf child drops them (-1); a categorical split's row of
        left levels (`route`'s level_set and left_levels)."""
        size = len(self.nodes)
        feature = np.full(size, -1, dtype=np.int32)
        threshold_bin = np.zeros(size, dtype=np.int32)
        missing_left = np.zeros(size, dtype=np.uint8)
        left = np.full(size, -1, dtype=np.int32)
        right = np.full(size, -1, dtype=np.int32)
        level_set = np.full(size, -1, dtype=np.int32)
        level_sets = []
        for node in split_nodes:
            if node.kind == "leaf":  # no valid split: its rows leave the batch's work
                feature[node.id] = -2
                continue
            r = node.split
            feature[node.id] = r["feature"]
            threshold_bin[node.id] = r["bin"]
            missing_left[node.id] = r["missing_left"]
            if r["categorical"]:
                level_set[node.id] = len(level_sets)
                level_sets.append(r["left_levels"])
            lc, rc = node.children
            left[node.id] = lc.id if lc.kind != "leaf" else -1
            right[node.id] = rc.id if rc.kind != "leaf" else -1
        if not level_sets:
            self.stats["sent_bytes"] += 17 * size
            return feature, threshold_bin, missing_left, left, right
        left_levels = np.array(level_sets, dtype=np.uint64).reshape(-1, 4)
        self.stats["sent_bytes"] += 21 * size + left_levels.nbytes
        return feature, threshold_bin, missing_left, left, right, level_set, left_levels

    def _assemble(self, root, subtrees):
        """The grown tree as a `Tree` in depth-first preorder, subtrees grafted."""
        criterion = self.forest.criterion
        columns = {name: [] for name in ("children_left", "children_right", "feature",
                                         "threshold", "missing_go_to_left", "value",
                                         "n_node_samples", "weighted_n_node_samples",
                                         "impurity", "improvement", "categorical_split")}
        level_sets = []  # the left levels of the categorical splits, in node order
        max_depth = 0
        stack = [(root, -1, True)]
        count = 0
        right_of = {}
        while stack:
            node, parent, is_left = stack.pop()
            index = count
            if parent >= 0 and not is_left:
                right_of[parent] = index
            if node.kind == "local":
                arrays, depth = subtrees[node.id]
                n_sub = arrays["children_left"].shape[0]
                if "left_levels" in arrays:
                    level_sets.append(np.asarray(arrays["left_levels"], dtype=np.uint64))
                else:
                    arrays = dict(arrays, categorical_split=np.zeros(n_sub, dtype=np.uint8))
                for name in columns:
                    a = np.asarray(arrays[name])
                    if name in ("children_left", "children_right"):
                        a = np.where(a >= 0, a + index, a)
                    columns[name].append(a)
                max_depth = max(max_depth, node.depth + depth)
                count += n_sub
                continue
            max_depth = max(max_depth, node.depth)
            split = node.kind == "split"
            value = node.dcounts / node.weight
            if split:
                r = node.split
                gain = r["improvement"]
                if criterion == "auc":
                    impurity = 0.5 + gain
                elif criterion == "auc_ecp":
                    q = node.children[1].weight / node.weight
                    impurity = 0.5 + gain * 2.0 * np.sqrt(q * (1.0 - q))
                else:
                    impurity = node_impurity(node.dcounts, CRITERIA[criterion])
            else:
                gain = 0.0
                impurity = 0.5 if criterion in SPLIT_STATISTIC_CRITERIA else node_impurity(
                    node.dcounts, CRITERIA[criterion])
            columns["children_left"].append([index + 1 if split else -1])
            columns["children_right"].append([-1])  # set below for split nodes
            columns["feature"].append([node.split["feature"] if split else -2])
            columns["threshold"].append([node.split["threshold"] if split else -2.0])
            columns["missing_go_to_left"].append([int(node.split["missing_left"]) if split
                                                  else 0])
            columns["value"].append(value[None, :])
            columns["n_node_samples"].append([node.n_cases])
            columns["weighted_n_node_samples"].append([node.weight])
            columns["impurity"].append([impurity])
            columns["improvement"].append([gain])
            categorical = split and node.split["categorical"]
            columns["categorical_split"].append(np.array([categorical], dtype=np.uint8))
            if categorical:
                level_sets.append(node.split["left_levels"].reshape(1, 4))
            count += 1
            if split:
                stack.append((node.children[1], index, False))
                stack.append((node.children[0], index, True))
        arrays = {name: np.concatenate(parts) for name, parts in columns.items()}
        for parent, index in right_of.items():
            arrays["children_right"][parent] = index
        if level_sets:
            arrays["left_levels"] = np.concatenate(level_sets).astype(np.uint64)
        else:  # no categorical split: the arrays of a tree of ordered splits
            del arrays["categorical_split"]
        tree_ = Tree(self.p, self.K, max_depth=max_depth, **arrays)
        if self.forest.max_leaf_nodes is None:
            return tree_
        return best_first(tree_, self.forest.max_leaf_nodes, criterion)

    def _finish(self):
        """Node-size choice from the OOB sums, then the trees collapsed to it."""
        forest = self.forest
        forest.predict_min_samples_ = self.candidates[0]
        if self.oob is not None:
            labels = self.oob["y"].astype(np.intp)
            sums = OutOfBagSums.from_sums(self.oob["proba"], self.oob["n_trees"],
                                          self.candidates)
            forest._set_oob_estimates(labels, sums)
        self._collapse_kept(forest.predict_min_samples_)
        params = dict(tree_params(forest), max_bins=self.max_bins)
        features = feature_attributes(forest)
        forest.estimators_ = [
            fitted_tree(tree_, self.classes, self.p, int(seed), params, features)
            for seed, tree_ in zip(self.seeds, self.trees)]
        if self.oob is not None and forest.oob_score:
            # the model keeps the bounded sample oob_score_ is computed on (oob_gmean_
            # under any later decision), not n rows: `oob_decision_function` computes
            # those where the rows are, from the user's X (nothing pins it here)
            forest._oob_sample_ = (labels, forest.oob_decision_function_)
            del forest.oob_decision_function_, forest.oob_labels_
        forest._case_draws = _DrawsOnWorkers(self.draw_keys, self.rates, self.poisson, self.n,
                                             forest.balanced_bootstrap)
        for block in self.blocks:
            block.release()

    def _oob_choice_rows(self):
        """Gather the bounded, class-balanced, hash-selected rows whose OOB
        predictions choose the node size (at most about OOB_CHOICE_MAX_CASES):
        the client routes them through the tops of the trees and the finishing
        tasks through the subtrees they grow (`_add_tree_oob`)."""
        forest, K = self.forest, self.K
        self.candidates = node_size_candidates(forest.predict_min_samples, forest.bootstrap,
                                               self.positive)
        self.oob = None
        if not (forest.oob_score or len(self.candidates) > 1):
            return
        rates = np.minimum(1.0, (OOB_CHOICE_MAX_CASES // K) / np.maximum(self.class_counts, 1))
        key = hash_key(self.fit_key, _STREAM_OOB)
        parts = self.gather([self.submit(_oob_rows, b, rates, key, name="oobrows")
                             for b in self.blocks])
        oob = {name: np.concatenate([part[name] for part in parts])
               for name in ("row", "y", "draw_y", "codes")}
        oob["X"] = _edge_values(oob, self.edges, self.n_bins, self.ctx.get("is_categorical"))
        m = oob["row"].shape[0]
        oob["proba"] = np.zeros((len(self.candidates), m, K))
        oob["n_trees"] = np.zeros(m)
        self.oob = oob


class _DrawsOnWorkers:
    """`AUCForestClassifier._case_draws` after a fit on dask collections: what
    makes each row's multiplicity in each tree where the row lives (per-tree
    keys and class rates, `draw_counts`), from which `oob_decision_function`
    recomputes the out-of-bag rows; the per-tree case draws of the in-memory
    fit (`estimators_samples_`, the out-of-bag inspection tools) are not
    kept, and asking for them says why. A forest read from a model file has
    no keys (``keys`` None)."""

    def __init__(self, keys=None, rates=None, poisson=False, n_rows=None, balanced=False):
        self.keys, self.rates, self.poisson = keys, rates, poisson
        self.n_rows, self.balanced = n_rows, balanced

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            "the trees' draws (estimators_samples_, out-of-bag inspection) are not available "
            "after a fit on dask collections: the rows stay on the workers, and a row's "
            "multiplicity in a tree is drawn from (the tree's seed, its global row index) "
            "where the row lives")


# the message of `AUCForestClassifier.oob_decision_function_` after a fit on dask collections
OOB_NOT_KEPT = (
    "a forest fitted on dask collections keeps no out-of-bag predictions of its n training "
    "rows (they would keep the rows on the workers and travel with every pickle and model "
    "file); oob_score_ and oob_gmean_ come from a bounded sample of rows. Compute them "
    "where the rows are with forest.oob_decision_function(X, y, sample_weight), a lazy dask "
    "array, on the training collections")


def oob_decision_function(forest, X, y, sample_weight=None):
    """`AUCForestClassifier.oob_decision_function`: the out-of-bag class
    probabilities of the training rows of a fit on dask collections, a lazy
    dask array computed where the rows are (the model one key of its graph).

    Each row's multiplicities are drawn again from (tree key, global row
    index), so X, y and sample_weight must hold the training rows in the
    fit's order (any chunking); y decides the draw class of a row (per-class
    rates), sample_weight whether it had positive weight (balanced bootstrap).
    """
    import dask
    import dask.array as da
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(forest)
    state = vars(forest)
    draws = state.get("_case_draws")
    if not isinstance(draws, _DrawsOnWorkers):
        raise ValueError("oob_decision_function(X, y) recomputes the out-of-bag predictions "
                         "of a fit on dask collections; this forest was fitted in memory: "
                         "read its oob_decision_function_")
    if draws.keys is None:
        raise ValueError("a forest read from a model file keeps no draws of its fit on dask "
                         "collections; out-of-bag predictions need the fitted forest (or its "
                         "pickle)")
    if not is_dask_collection(X):
        raise TypeError(f"X must be the training dask array or DataFrame; got "
                        f"{type(X).__name__}")
    X, y, w, names = _as_rows(X, y, sample_weight, state.get("categories_"))
    if X.shape[0] != draws.n_rows:
        raise ValueError(f"X, y have {X.shape[0]} rows but the forest was fitted on "
                         f"{draws.n_rows}; out-of-bag predictions need the training rows in "
                         "the order of the fit")
    _check_n_features(X.shape[1], state["n_features_in_"], forest)
    model = dask.delayed({"trees": [e.tree_ for e in state["estimators_"]],
                          "draw": (draws.keys, draws.rates, draws.poisson), "size": 1,
                          "classes": state["classes_"], "balanced": draws.balanced},
                         name=f"aucforest-oob-model-{uuid.uuid4().hex}", pure=False)
    # blockwise on the collections themselves (to_delayed would drop the futures of a
    # persisted X from the graph: it must hold them while the array is kept)
    y = y[:, None]
    w = da.zeros_like(y, dtype=np.float64) if w is None else w[:, None]
    return da.map_blocks(_oob_decision_block, X, y, w, model, sample_weight is not None,
                         dtype=np.float64, chunks=(X.chunks[0], (state["n_classes_"],)),
                         meta=np.empty((0, 0)))


def _identity(value):
    return value


def _levels_left(left_levels, n_levels):
    """bool (n_levels,): which level codes 0..n_levels - 1 the 256-bit set
    ``left_levels`` (4 uint64 words, bit c of word c // 64) sends left."""
    codes = np.arange(n_levels)
    words = np.asarray(left_levels, dtype=np.uint64)[codes >> 6]
    return ((words >> (codes & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)


def _release_top(root):
    """Drop what a grown tree's top (on the client) no longer needs: the
    search state of its nodes (feature orders, histograms, constant flags)."""
    stack = [root]
    while stack:
        node = stack.pop()
        node.order, node.hists, node.constant = None, {}, None
        stack.extend(node.children)


def _hist_of(result):
    return result["hist"]


def _sum_arrays(*arrays):
    total = arrays[0].copy()
    for a in arrays[1:]:
        total += a
    return total


def _payload(obj):
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
        s, r = _payload(item)
        size, rows = size + s, max(rows, r)
    return size, rows


def fit(forest, X, y, sample_weight=None):
    """`AUCForestClassifier.fit` on a dask array or DataFrame (see the module docstring).

    The model is published in one assignment (`fit_atomically`), as the
    in-memory fit does.
    """
    return fit_atomically(forest, lambda staging: _Fit(staging, X, y, sample_weight).run())


# ---------------------------------------------------------------------------- prediction

def _prediction_rows(forest, X):
    """The fitted model read once (a refit replaces the estimator's dict whole),
    as one key of the graph, and X as a lazy dask array of the rows the dense
    predict reads: float32 in one column chunk, each block mapped and checked
    as ``_validate_X_predict`` maps and checks its X (`_dense_rows`)."""
    import dask
    import dask.array as da
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(forest)
    state = vars(forest)
    model = _model(state)
    n_features = state["n_features_in_"]
    if _is_dask_frame(X) and X.ndim == 2:
        names = state.get("feature_names_in_")
        if names is not None and list(X.columns) != list(names):
            raise ValueError("The feature names should match those that were passed during "
                             "fit.")
        _check_n_features(len(X.columns), n_features, forest)
        # the dtypes (text, category or not where fitted) refused before anything runs
        predict_codes(SimpleNamespace(categories_=state.get("categories_")), X._meta)
        blocks = [da.from_delayed(dask.delayed(_dense_rows)(part, model),
                                  shape=(np.nan, n_features), dtype=np.float32,
                                  meta=np.empty((0, 0), dtype=np.float32))
                  for part in X.to_delayed()]
        return da.concatenate(blocks, axis=0), model, state
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError("X must be a 2-dimensional dask array or a dask DataFrame")
    _check_n_features(X.shape[1], n_features, forest)
    X = X.rechunk({1: -1}).map_blocks(_dense_rows, model, dtype=np.float32,
                                      meta=np.empty((0, 0), dtype=np.float32))
    return X, model, state


def _check_n_features(found, expected, forest):
    if found != expected:
        raise ValueError(f"X has {found} features, but {type(forest).__name__} is "
                         f"expecting {expected} features as input.")


# scattered models, per client: {first tree of a model: {client id: (token, future)}},
# dropped with the model (weak keys: a refit's new trees start new entries)
_SCATTERED = weakref.WeakKeyDictionary()
_SCATTERED_LOCK = threading.Lock()


def _model(state):
    """The fitted model (of the estimator's dict ``state``) as one key of the
    graph: scattered to every worker of the client in scope once per model
    (`client.scatter` with ``broadcast=True``) and referenced by its future,
    so repeated predictions send no trees; a delayed key without a
    ``dask.distributed`` client (the local schedulers read it in process)."""
    import dask
    model = {name: state.get(name) for name in (
        "estimators_", "classes_", "class_prior_", "draw_class_weights_", "categories_",
        "is_categorical_", "feature_names_in_")}
    try:
        from distributed import get_client
        client = get_client()
    except (ImportError, ValueError):
        return dask.delayed(model, name=f"aucforest-model-{uuid.uuid4().hex}", pure=False)
    # the model's objects (a refit or an assignment replaces them), kept alive by the
    # cached entry's model, so no id is reused while it is cached
    token = tuple(map(id, model.values())) + tuple(map(id, model["estimators_"]))
    with _SCATTERED_LOCK:
        per_client = _SCATTERED.setdefault(model["estimators_"][0], {})
        cached = per_client.get(client.id)
        if cached is not None and cached[0] == token and cached[2].status == "finished":
            return cached[2]
        for stale in [c for c, entry in per_client.items() if entry[2].status != "finished"]:
            del per_client[stale]  # clients closed meanwhile, or the copies lost
        # a fresh key (tokenizing the trees would cost a pass over them)
        (future,) = client.scatter({f"aucforest-model-{uuid.uuid4().hex}": model},
                                   broadcast=True).values()
        per_client[client.id] = (token, model, future)
    return future


def _dense_rows(X, model):
    """One block of rows as the dense predict reads it: a pandas partition's
    category columns mapped to the fitted codes by value (`predict_codes`),
    nullable columns with NaN for pd.NA, float32 in C order, infinite values
    and invalid categorical level codes refused with the dense predict's error."""
    from sklearn.utils import check_array

    X = predict_codes(SimpleNamespace(categories_=model["categories_"]), X)
    X = check_array(X, dtype=np.float32, order="C", ensure_all_finite="allow-nan",
                    ensure_min_samples=0)
    check_categorical_codes(X, model["is_categorical_"], model["feature_names_in_"])
    return X


def _proba_block(X, model):
    return mean_tree_proba(X, model, 1)


def _predict_block(X, model, decision):
    return decide_classes(_proba_block(X, model), model, decision)


def _apply_block(X, model):
    return np.column_stack([tree.tree_.apply(X) for tree in model["estimators_"]])


def predict_proba(forest, X):
    """Lazy `predict_proba`: a dask array (n_samples, n_classes)."""
    X, model, state = _prediction_rows(forest, X)
    return X.map_blocks(_proba_block, model, dtype=np.float64,
                        chunks=(X.chunks[0], (state["classes_"].shape[0],)),
                        meta=np.empty((0, 0)))


def predict(forest, X):
    """Lazy `predict`: a dask array (n_samples,) of classes."""
    X, model, state = _prediction_rows(forest, X)
    classes, decision = state["classes_"], state["decision"]
    validate_decision(decision, classes.shape[0])
    return X.map_blocks(_predict_block, model, decision, dtype=classes.dtype, drop_axis=1,
                        meta=np.empty((0,), dtype=classes.dtype))


def apply(forest, X):
    """Lazy `apply`: a dask array (n_samples, n_estimators) of leaf indices."""
    X, model, state = _prediction_rows(forest, X)
    return X.map_blocks(_apply_block, model, dtype=np.intp,
                        chunks=(X.chunks[0], (len(state["estimators_"]),)),
                        meta=np.empty((0, 0), dtype=np.intp))
