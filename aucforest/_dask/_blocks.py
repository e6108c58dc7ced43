"""The tasks of the fit on dask collections that run where the rows are
(`aucforest._dask`): a partition's statistics, codes and node state, a
round (route, take out, histograms), the in-memory finishing of nodes
(`grow_local`) and the collapse of its subtrees, the out-of-bag rows.
"""

import numpy as np

from .._base import check_categorical_codes, grow_tree
from .._binned import encode_features
from .._binning import MISSING_CODE, BinnedData, _level_codes
from .._compat import check_sample_weight
from ._draws import MAX_MULTIPLICITY, draw_counts, row_uniforms
from ._entries import sort_entries, start_trees
from ._payloads import Block, Drawn, Finished, NodeState, PartitionStats, RoundResult
from ._worker_kernels import histograms, route, take_rows, take_waiting
from .._leaf_budget import cut_to_expansions, risks
from .._tree import Tree, accumulate_oob_proba

# Trees whose draws of the out-of-bag rows are made together (`add_oob`).
OOB_TREES_PER_DRAW = 32


def block_stats(X, y, w, start, sample_key, sample_rate, is_categorical=None, names=None):
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
    w_max = None
    if w is not None:  # non-finite or negative weights refused with the in-memory error
        w = check_sample_weight(w, X, dtype=np.float64, ensure_non_negative=True)
        w_max = float(w.max()) if w.size else 0.0
        positive = y[w > 0]
    else:
        positive = y
    selected = row_uniforms(sample_key, start, X.shape[0]) < sample_rate
    levels = X[:, categorical]
    return PartitionStats(
        infinite=bool(np.isinf(X).any()), labels=labels, counts=counts,
        positive=np.unique(positive, return_counts=True), sample=X[selected][:, ~categorical],
        largest_level=np.max(np.where(np.isnan(levels), -1, levels), axis=0,
                             initial=-1).astype(np.int64),
        w_max=w_max)


def encode_block(X, y, w, start, ctx):
    """One partition as the fit keeps it: uint8 codes (C order), class codes,
    integer weights (None when all one), the draw classes and its start."""
    X = np.asarray(X, dtype=np.float32)
    n, p = X.shape
    codes = np.empty((n, p), dtype=np.uint8)
    categorical = ctx.is_categorical
    if categorical is None:
        categorical = np.zeros(p, dtype=bool)
    # a block of rows at a time, each row read once (X is a row-major partition)
    encode_features(X, ctx.padded, np.flatnonzero(~categorical), codes, 0, n)
    for f in np.flatnonzero(categorical):  # the level itself, as bin_features
        codes[:, f] = _level_codes(X[:, f])
    y = np.searchsorted(ctx.classes, np.asarray(y)).astype(np.int32)
    K = ctx.classes.shape[0]
    prior = np.zeros(K, dtype=np.int64)
    weights = None
    draw_y = y
    if w is not None:
        sw = np.asarray(w, dtype=np.float64) / ctx.w_max
        q = np.rint(sw * ctx.weight_unit).astype(np.int64)
        q[(sw > 0) & (q == 0)] = 1
        for k in range(K):
            prior[k] = q[y == k].sum()
        if ctx.balanced:
            draw_y = np.where(sw > 0, y, -1).astype(np.int32)
    else:
        prior[:] = np.bincount(y, minlength=K)
        sw = None
    if ctx.weighted:
        base = np.ones(n) if sw is None else sw
        if ctx.class_weights is not None:
            base = base * ctx.class_weights[y]
        weights = np.rint(base * ctx.weight_unit).astype(np.int64)
        weights[(base > 0) & (weights == 0)] = 1
    return Block(codes=codes, y=y, weights=weights, draw_y=draw_y, start=int(start),
                 prior=prior)


def group_stats(X, y, w, start, sample_key, sample_rate, is_categorical=None, names=None):
    """`block_stats` of consecutive partitions (lists of their X, y and w) together."""
    return block_stats(joined(X), joined(y), joined(w), start, sample_key, sample_rate,
                       is_categorical, names)


def encode_group(X, y, w, start, ctx):
    """`encode_block` of consecutive partitions (lists of their X, y and w) together:
    one block, as if they were one partition."""
    return encode_block(joined(X), joined(y), joined(w), start, ctx)


def joined(parts):
    """Consecutive partitions' arrays (a list) as one array; None stays None."""
    if parts is None or len(parts) == 1:
        return None if parts is None else parts[0]
    return np.concatenate([np.asarray(part) for part in parts])


def block_prior(block):
    return block.prior


def init_state(block, tree_keys, rates, poisson, n_classes):
    """The state of the partition's rows in a batch of trees before its first
    round, as a round gives it (`partition_round`'s "state"), and the roots' sums
    ("sums": class weights and distinct cases per tree). The state: node ids
    (the root, id t, for each drawn row of positive weight) and
    multiplicities; "unit": every row's weight in a tree is 0 or 1 (no
    weights, drawn without replacement), so that histograms need no case
    column (`histograms`); "live": the entries the next round reads
    (`partition_round`; None: every entry), "waiting": the rows of nodes finished in
    memory not yet taken out, per node (None: none)."""
    n = block.y.shape[0]
    rows = block.start + np.arange(n, dtype=np.int64)
    counts = draw_counts(tree_keys, rows, block.draw_y, rates, poisson)
    ids, sums = start_trees(counts, block.weights, block.y, n_classes)
    return Drawn(NodeState(ids, counts, unit=block.weights is None and not poisson,
                           live=None, waiting=None), sums)


def sum_root_sums(*drawn):
    """The sum of the roots' sums of some partitions' draws (`init_state`)."""
    return sum_arrays(*[d.sums for d in drawn])


def partition_round(block, previous, tables, n_codes, n_classes):
    """One round where the rows are: move the rows of split nodes to their
    children (`route`) and add the histograms asked for (one pass over the
    rows when both), take out the rows of nodes finished in memory (grouped
    per task). ``tables``
    (routes, request, finish, live) is one key of the round, sent to each
    worker once whatever the number of its partitions; finish is (group of
    each node id, number of groups, the groups' trees) (`take_rows`).

    live is (keep, max_share): keep[node] is 1 for the open nodes, 2 for the
    nodes finished in memory not taken out before this round (`sort_entries`).
    The passes read only the (tree, row) entries of open nodes the previous
    round listed (the state's "live", None: all; listed when at most
    max_share of all), and a node finished in memory has its rows listed
    once, per node, until taken out (the state's "waiting", `take_waiting`);
    so out-of-bag rows, the rows of leaves and of nodes waiting or taken out
    cost the later rounds nothing. The lists are sorted again only when rows
    moved (routes) or were never sorted: the nodes taken out keep their
    listed rows until then (within the lists' bound, the drawn entries).
    live None (taking rows out again): every entry is read, the node ids
    being those the rows were last in.

    ``previous``: the result of the partition's previous round, or of its
    draw (`init_state`), whose "state" this round starts from; the tasks
    reading a round's result run where it is (the next round, the takes,
    the histograms' first sums), so that each reads its part of it."""
    routes, request, finish, live = tables.routes, tables.request, tables.finish, tables.live
    state = previous.state
    codes = block.codes
    ids = state.ids
    entries = state.live if live is not None else None
    waiting = state.waiting
    hist = None
    # the entries listed again when rows moved (or first read), in the pass that
    # moves them; a round that only takes rows out leaves the lists as they are
    # (its nodes' rows are dropped at the next listing)
    listing = ({} if live is None or (routes is None and waiting is not None)
               else {"keep": live[0], "waiting": waiting, "max_share": live[1]})
    if request is not None:  # routed in the same pass
        first_slot, slot_feature = request
        # int32 sums when no cell can reach 2**31 (widened when summed)
        narrow = block.weights is None and codes.shape[0] * MAX_MULTIPLICITY < 2 ** 31
        done = histograms(codes, ids, state.counts, block.weights, block.y,
                          first_slot, slot_feature, n_codes, n_classes, routes, narrow,
                          not state.unit, entries, **listing)
        hist = done.hist
    elif routes is not None:
        done = route(codes, ids, *routes, live=entries, **listing)
    else:
        done = None
    if done is not None:
        ids = ids if done.ids is None else done.ids
        if listing:
            entries, waiting = done.live, done.waiting
    elif listing:
        entries, waiting = sort_entries(ids, live[0], entries, waiting, live[1])
    parts = {}
    if finish is not None:
        data = (codes, state.counts, block.weights, block.y, block.start, n_classes <= 256)
        taken = (take_waiting(waiting, finish.group_of, finish.n_groups, *data)
                 if live is not None
                 else take_rows(ids, finish.group_of, finish.n_groups, finish.trees, *data))
        parts = dict(enumerate(taken))
    return RoundResult(state._replace(ids=ids, live=entries, waiting=waiting), hist, parts)


def kept_state(result):
    """A round's result without its histograms and taken rows: the node state
    a later round (a retake) starts from."""
    return RoundResult(result.state, None, {})


def sum_round_histograms(*results):
    """The sum of some partitions' round histograms (`partition_round`'s "hist"), as
    `sum_histograms`."""
    return sum_histograms(*[r.hist for r in results])


def sum_histograms(*parts):
    """Sum of the partitions' integer histograms as int64 (exact: any order
    gives the same)."""
    hist = parts[0].astype(np.int64)
    for h in parts[1:]:
        hist += h
    return hist


def take_group(group, *results):
    """One worker's rows of an in-memory finishing group: the group's part of
    each of its partitions' taken rows (the "parts" of their round
    ``results``; `_worker_kernels.take_rows`), those holding rows, as they
    are: no copy. One task per (worker, group), where the rows are: what
    moves to the finishing worker is the group's rows only."""
    return [r.parts[group] for r in results if r.parts[group].y.shape[0]]


def _node_rows(parts, node_id):
    """The rows of node ``node_id`` in ``parts`` (taken rows,
    `_worker_kernels.take_rows`: per node in row order, each part the rows of
    one partition, a range of global rows of its own), in the order of
    their global row indices: the parts' slices one after the other, by the
    partitions' first rows. Codes (rows, p; Fortran order, as the splitter
    reads a feature), classes (intp) and weights (float64)."""
    pieces = []
    for part in parts:
        at = np.searchsorted(part.nodes, node_id)
        if at < part.nodes.shape[0] and part.nodes[at] == node_id:
            pieces.append((part, part.node_start[at], part.node_start[at + 1]))
    pieces.sort(key=lambda piece: piece[0].start)
    for (a, _, _), (b, _, _) in zip(pieces, pieces[1:]):
        if a.stop > b.start:
            raise ValueError(f"node {node_id}'s rows come from parts of overlapping row "
                             f"ranges ({a.start}..{a.stop} and {b.start}..{b.stop})")
    n_rows = sum(int(hi - lo) for _, lo, hi in pieces)
    codes = np.empty((n_rows, parts[0].codes.shape[1]), dtype=np.uint8, order="F")
    y = np.empty(n_rows, dtype=np.intp)
    w = np.empty(n_rows, dtype=np.float64)
    at = 0
    for part, lo, hi in pieces:  # written in place: no copy of the node
        rows = slice(at, at + hi - lo)
        codes[rows] = part.codes[lo:hi]
        y[rows] = part.y[lo:hi]
        w[rows] = part.weight[lo:hi]
        at += hi - lo
    return codes, y, w


def grow_local(takes, nodes, ctx, finishing, oob_x):
    """Grow the subtrees of nodes finished in memory (one tree's nodes): each
    node's rows from every worker's take (``takes``: per worker its
    partitions' parts of the group, `take_group`), ordered by global row
    index, the in-memory binned splitter (`grow_tree`) seeded
    from the node's key, best first to the node's leaf bound when it has one
    (``max_leaf_nodes``: a prefix of the expansions of a larger bound, the
    splitter's draws being keyed by node), making no split whose weighted
    impurity decrease is below the node's floor (``min_decrease``, in weight:
    scikit-learn's ``min_impurity_decrease`` times the subtree's weight).

    ``nodes``: a `NodeSpec` per node; ``finishing``: a `Finishing` (see
    `_finish_subtree`), given each node's out-of-bag rows.

    Returns a `Finished`: subtrees {node id: (node arrays, depth)} and oob
    {node id: (root size, proportions (candidates, rows, K))}.
    """
    params = ctx.params
    parts = [part for take in takes for part in take]
    out, oob = {}, {}
    for node in nodes:
        node_id, depth, min_weight_leaf = node.node_id, node.depth, node.min_weight_leaf
        codes, y, w = _node_rows(parts, node_id)
        w *= ctx.weight_scale
        binned = BinnedData(codes, ctx.edges, ctx.n_bins, ctx.is_categorical)
        max_depth = None if params["max_depth"] is None else params["max_depth"] - depth
        total = w.sum()
        tree_ = grow_tree(binned, y, w, ctx.n_classes,
                          is_categorical=ctx.is_categorical, seed=int(node.key), **dict(
                              params, max_depth=max_depth,
                              max_leaf_nodes=params["max_leaf_nodes"] if node.leaves is None
                              else node.leaves,
                              min_weight_fraction_leaf=min_weight_leaf / total
                              if min_weight_leaf > 0 else 0.0,
                              min_impurity_decrease=node.min_decrease / total))
        del binned, codes, y
        arrays = tree_.node_arrays()
        top = w.max()
        if top != 1.0:  # grow_tree rescaled the weights to a maximum of 1
            arrays["weighted_n_node_samples"] = arrays["weighted_n_node_samples"] * top
        out[node_id], found = _finish_subtree((arrays, tree_.max_depth), ctx, finishing, oob_x,
                                              node.oob_rows)
        if found is not None:
            oob[node_id] = found
    return Finished(out, oob)


def _finish_subtree(subtree, ctx, finishing, oob_x, oob_rows):
    """A subtree as its finishing task gives it: with out-of-bag rows (indices
    into ``oob_x``, the node-size choice's rows that reach it), the
    proportions of the subtree's node each candidate node size predicts from
    (`accumulate_oob_proba`; the client replaces those of candidates above
    the subtree's root size); with a size to collapse to, collapsed to it
    (`_collapse_subtree`). ``finishing``: (candidate sizes, size to collapse
    to or None, split_impurity: a `Finishing`).

    Returns (subtree, (root size, proportions (candidates, rows, K)) or None)."""
    sizes, collapse_to, split_impurity = finishing
    p, K = ctx.n_features, ctx.n_classes
    arrays, depth = subtree
    found = None
    if oob_rows is not None and oob_rows.shape[0]:
        grafted = Tree(p, K, max_depth=depth, **arrays)
        proba = np.zeros((len(sizes), oob_rows.shape[0], K))
        accumulate_oob_proba(grafted, oob_x[oob_rows], np.zeros(oob_rows.shape[0], np.intp),
                             np.asarray(sizes, dtype=np.int32), proba,
                             np.zeros(oob_rows.shape[0]))
        found = (int(arrays["n_node_samples"][0]), proba)
    if collapse_to is not None:
        subtree = _collapse_subtree(subtree, p, K, collapse_to, split_impurity)
    return subtree, found


def skeleton_of(result, ctx, root_weight):
    """What the client needs of a finishing task's subtrees to choose a
    bounded tree's expansions (`aucforest._leaf_budget`): per subtree its
    children arrays (int32) and each node's risk p(t) i(t) (`risks`, of the
    proportions and weights the assembled tree holds, against its root's
    weight ``root_weight``), and its number of leaves."""
    p, K = ctx.n_features, ctx.n_classes
    out = {}
    for node_id, (arrays, depth) in result.subtrees.items():
        tree_ = Tree(p, K, max_depth=depth, **arrays)
        weight = tree_.weighted_n_node_samples
        risk = risks(tree_.proba, weight, root_weight, ctx.params["criterion"])
        right = tree_.children_right
        out[node_id] = (tree_.children_left.astype(np.int32), right.astype(np.int32), risk,
                        int(np.count_nonzero(right < 0)))
    return out


def cut_group(result, cuts, ctx, finishing, oob_x):
    """The subtrees of a finishing task cut to the expansions the client chose
    (``cuts``: (node id, indices of its expanded nodes, out-of-bag rows or
    None; `aucforest._leaf_budget.cut_to_expansions`), then finished as
    `grow_local` finishes its subtrees (`_finish_subtree`).

    Returns a `Finished`, as `grow_local`."""
    p, K = ctx.n_features, ctx.n_classes
    out, oob = {}, {}
    for node_id, expanded_nodes, oob_rows in cuts:
        arrays, depth = result.subtrees[node_id]
        tree_ = Tree(p, K, max_depth=depth, **arrays)
        expanded = np.zeros(tree_.node_count, dtype=bool)
        expanded[expanded_nodes] = True
        tree_ = cut_to_expansions(tree_, expanded, ctx.params["criterion"])
        out[node_id], found = _finish_subtree((tree_.node_arrays(), tree_.max_depth), ctx,
                                              finishing, oob_x, oob_rows)
        if found is not None:
            oob[node_id] = found
    return Finished(out, oob)


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


def collapse_group(result, n_features, n_classes, min_samples, split_impurity):
    """The subtrees of a finishing task, collapsed to the chosen node size."""
    return {node_id: _collapse_subtree(subtree, n_features, n_classes, min_samples,
                                       split_impurity)
            for node_id, subtree in result.subtrees.items()}


def oob_of(result):
    return result.oob


def edge_values(codes, edges, n_bins, is_categorical=None):
    """float32 values standing for the codes: a bin's upper edge (NaN when
    missing), which every tree sends where it sends the bin's real values;
    a categorical feature's level code itself."""
    X = np.empty(codes.shape, dtype=np.float32, order="F")
    for f in range(codes.shape[1]):
        table = np.full(256, np.nan, dtype=np.float32)
        if is_categorical is not None and is_categorical[f]:
            table[:MISSING_CODE] = np.arange(MISSING_CODE)
        else:
            table[:n_bins[f]] = edges[f, :n_bins[f]]
        X[:, f] = table[codes[:, f]]
    return X


def oob_rows(block, rates, key):
    """The partition's rows selected (by a hash of their global index, at a rate
    per class) for the node-size choice: global index, class, draw class, codes."""
    y = block.y
    selected = np.flatnonzero(row_uniforms(key, block.start, y.shape[0]) < rates[y])
    return {"row": block.start + selected, "y": y[selected],
            "draw_y": block.draw_y[selected], "codes": block.codes[selected]}


def add_oob(trees, draw, X, rows, draw_y, sizes, proba, n_trees):
    """Add the OOB proportions of `trees` for the rows (global indices) of X."""
    keys, rates, poisson = draw
    sizes = np.asarray(sizes, dtype=np.int32)
    for lo in range(0, len(trees), OOB_TREES_PER_DRAW):
        counts = draw_counts(keys[lo:lo + OOB_TREES_PER_DRAW], rows, draw_y,
                             rates[lo:lo + OOB_TREES_PER_DRAW], poisson)
        for tree_, c in zip(trees[lo:lo + OOB_TREES_PER_DRAW], counts):
            accumulate_oob_proba(tree_, X, c.astype(np.intp), sizes, proba, n_trees)


def identity(value):
    return value


def sum_arrays(*arrays):
    total = arrays[0].copy()
    for a in arrays[1:]:
        total += a
    return total
