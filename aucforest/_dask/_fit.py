"""The driver of the fit on dask collections (`aucforest._dask`, whose
docstring is the account of the fit): the client's side of one fit."""
import itertools
import operator
import uuid
from dataclasses import dataclass, field

import numpy as np

from .._base import (MAX_SEED, SPLIT_STATISTIC_CRITERIA, check_counts_are_not_booleans,
                    check_some_weight, check_two_classes, collapsed, fit_atomically,
                    resolve_max_features, tree_params)
from .._binned import PADDED_EDGES, padded_edges
from .._binning import MAX_BINS, set_feature_edges
from .._categories import levels_going_left, resolve_fitted
from ._blocks import (_block_prior, _block_stats, _collapse_group, _cut_group,
                           _edge_values, _encode_block, _grow_local, _identity, _init_state,
                           _kept_state, _oob_of, _oob_rows, _round, _skeleton_of, _sum_arrays,
                           _sum_histograms, _sum_root_sums, _sum_round_histograms,
                           _take_group)
from ._inputs import _as_rows, _check_supported, _client, _frame_categories
from ._kernels import HistogramSplitter, draw_counts, feature_order, hash_key, node_impurity
from ._model import _DrawsOnWorkers
from ._payloads import (FinishTable, Finishing, FitContext, FitStats, NodeSpec,
                        RoundTables)
from .._decision import DecisionRule
from .._oob_source import OnWorkers
from .._leaf_budget import (LeafBudget, bottlenecks, expansions, kept_nodes, risks,
                           split_priorities, split_priority)
from .._oob import OutOfBagSums, node_size_candidates
from .._prior_shift import draw_class_weights_of_sums
from .._sampling import CaseDraws, class_weights_of_counts
from .._split import CRITERIA
from .._tree import Tree
from ..tree import feature_attributes, fitted_tree


# A drawn multiplicity is at most 255 (uint8), and weights are rounded to
# multiples of 2**-S with S = WEIGHT_BITS - 8 - bit_length(n).
WEIGHT_BITS = 62

_STREAM_DRAWS, _STREAM_NODES, _STREAM_EDGES, _STREAM_OOB = 1, 2, 3, 4



class _Node:
    """A node of a tree being grown (on the client)."""
    __slots__ = ("id", "tree", "key", "depth", "counts", "n_cases", "constant", "order",
                 "hists", "kind", "split", "children", "subtree", "weight", "dcounts",
                 "above", "leaves", "min_decrease")
    # above: m of the parent (`aucforest._leaf_budget`), inf at a root; leaves: the leaf
    # bound its subtree is grown to (max_leaf_nodes); min_decrease: the weighted impurity
    # decrease (p(t) i(t) - ... times the tree's weight) below which it makes no split


@dataclass(eq=False)
class _Batch:
    """Trees grown together (`_Fit._grow_batch`): what the client keeps of
    them from their first round until they are complete (`_Fit._complete`),
    while the next batch grows."""
    indices: range  # the trees' places in the forest
    budgets: dict = None  # max_leaf_nodes: tree -> `LeafBudget` of its expansions
    nodes: list = field(default_factory=list)  # every node made, by id
    roots: list = field(default_factory=list)
    tree_weight: dict = field(default_factory=dict)  # tree -> its root's weight
    groups: list = field(default_factory=list)  # tree -> [(finishing, OOB sums) futures]
    oob_at: dict = field(default_factory=dict)  # node id -> the node-size choice's OOB rows
    states: list = None  # max_leaf_nodes: the node state after the last round, until cut
    taken: set = field(default_factory=set)  # ids of the nodes whose rows were taken out


class _Fit:
    """One fit on rows that stay on the workers (see the module docstring)."""

    def __init__(self, forest, X, y, sample_weight, tuning):
        self.forest = forest
        self.tuning = tuning
        self.client = _client()
        self.id = uuid.uuid4().hex[:10]
        self._keys = itertools.count()
        self.stats = FitStats()
        self.inputs = (X, y, sample_weight)

    # -- plumbing

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

    def _reduce(self, first, fn, futures, name):
        """The sum of the partitions' results ``futures`` as a tree of tasks of
        at most REDUCE_FAN_IN inputs each: ``first`` sums up to REDUCE_FAN_IN
        results of one worker's partitions where they are (reading from each
        what it sums, so that nothing else of a result moves and no task only
        picks a part of one), ``fn`` sums those partial sums."""
        fan_in = self.tuning.REDUCE_FAN_IN
        level, workers = [], []
        for worker, indices in self.worker_sets:
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
        size, rows = _payload(result)
        rows = rows if what != "trees" else 0
        self.stats.count_gather(what, size, rows)
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
        forest._set_fit_provenance(fit_stats=self.stats.as_dict(
            n_trees=len(self.trees), tree_nodes=sum(t.node_count for t in self.trees),
            tasks_per_tree=self.stats.tasks / len(self.trees)))
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
        sample_rate = min(1.0, self.tuning.EDGE_SAMPLE_ROWS / n)
        edge_key = hash_key(self.fit_key, _STREAM_EDGES)
        categorical = self.is_categorical if self.is_categorical.any() else None
        stats = self.gather(self.client.compute([
            dask.delayed(_block_stats)(xb, yb, wb, int(s), edge_key, sample_rate, categorical,
                                       self.names)
            for xb, yb, wb, s in zip(X_blocks, y_blocks, w_blocks, starts)]))
        if any(s.infinite for s in stats):
            raise ValueError("Input X contains infinity or a value too large for "
                             "dtype('float32').")
        from sklearn.utils.multiclass import check_classification_targets
        labels = np.concatenate([s.labels for s in stats])
        check_classification_targets(labels)
        classes = np.unique(labels)
        check_two_classes(classes)
        K = self.K = classes.shape[0]
        counts = np.zeros(K, dtype=np.int64)
        positive = np.zeros(K, dtype=np.int64)
        for s in stats:
            counts[np.searchsorted(classes, s.labels)] += s.counts
            labels_pos, counts_pos = s.positive
            positive[np.searchsorted(classes, labels_pos)] += counts_pos
        w_max = 1.0
        if self.w is not None:  # each partition's checked as in memory (`_block_stats`)
            w_max = max(s.w_max for s in stats)
            check_some_weight(w_max > 0)
        class_weights = class_weights_of_counts(forest.class_weight, classes, counts)
        weighted = self.w is not None or class_weights is not None
        # integer weights: multiples of 2**-S, S leaving room for n rows x 255 draws
        self.weight_bits = WEIGHT_BITS - 8 - int(n).bit_length() if weighted else 0
        if weighted and self.weight_bits < 20:
            raise ValueError(f"{n} rows leave too few bits for exact weight sums")
        sample = np.concatenate([s.sample for s in stats])
        edges = np.full((p, self.max_bins), np.inf)
        n_bins = np.empty(p, dtype=np.intp)
        # the table `encode_features` searches (categorical: unused), as bin_features does
        padded = np.full((p, PADDED_EDGES), np.inf, dtype=np.float32)
        for j, f in enumerate(np.flatnonzero(~self.is_categorical)):
            padded[f] = padded_edges(set_feature_edges(f, np.array(sample[:, j]),
                                                       self.max_bins, edges, n_bins))
        # a categorical feature: one bin per level (its codes are the levels), edges unused
        largest = np.max([s.largest_level for s in stats], axis=0, initial=-1)
        for j, f in enumerate(np.flatnonzero(self.is_categorical)):
            n_bins[f] = max(1, int(largest[j]) + 1, len(self.categories[f] or ()))
        self.classes, self.class_counts, self.positive = classes, counts, positive
        self.edges, self.n_bins = edges, n_bins
        self.n_codes = int(n_bins.max()) + 1  # value bins and the missing one
        self.weight_scale = 2.0 ** -self.weight_bits
        forest_params = tree_params(forest)
        params = dict(forest_params, max_bins=self.max_bins)
        self.ctx = FitContext(edges=edges, n_bins=n_bins, padded=padded, classes=classes,
                              w_max=w_max, weight_unit=2.0 ** self.weight_bits,
                              weighted=weighted, class_weights=class_weights,
                              balanced=forest.balanced_bootstrap, n_classes=K,
                              weight_scale=self.weight_scale, params=params,
                              is_categorical=categorical)
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
        # (and for the finishing tasks' takes: one per (worker, group))
        order = sorted(range(len(self.blocks)), key=lambda i: (self.block_worker[i] or "", i))
        self.worker_sets = [(worker, list(indices)) for worker, indices in itertools.groupby(
            order, key=lambda i: self.block_worker[i])]
        totals = np.sum(priors, axis=0)
        forest.classes_, forest.n_classes_ = classes, K
        DecisionRule.parse(forest.decision, K)  # a bad rule fails before the trees grow
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
        self.local_rows = self.tuning.local_rows(self.n)
        self.min_samples_leaf = min(forest.min_samples_leaf, self.n)
        self.splitter = HistogramSplitter(self.edges, self.p, self.K, criterion,
                                          self.max_features, self.min_samples_leaf,
                                          forest.nsplit or 0, self.ctx.is_categorical)
        # trees per batch: their state (5 bytes per row and tree) within BATCH_STATE_BYTES
        # per worker; the trees do not depend on it (each grows from its own keys)
        self.workers = sorted(self.client.scheduler_info().get("workers", ()))
        self.n_workers = n_workers = max(1, len(self.workers))
        # rows of the finishing tasks waiting on one worker (FINISH_BACKLOG_BYTES)
        self.backlog_rows = max(1, self.tuning.FINISH_BACKLOG_BYTES
                                // (self.p + self.tuning.FINISH_ROW_BYTES))
        per_batch = int(np.clip(self.tuning.BATCH_STATE_BYTES * n_workers // (5 * self.n), 1,
                                self.tuning.MAX_TREES_PER_BATCH))
        batches = [range(lo, min(lo + per_batch, len(self.seeds)))
                   for lo in range(0, len(self.seeds), per_batch)]
        # the node size: known now (one candidate: the finishing tasks collapse their
        # subtrees), or chosen at the end (the grown subtrees wait on the workers)
        self.collapse_to = self.candidates[0] if len(self.candidates) == 1 else None
        # max_leaf_nodes: a tree is cut once assembled, so its subtrees come back grown
        # (`uncut_spec`) and its out-of-bag sums are added on the client, from the cut tree
        self.bounded = forest.max_leaf_nodes is not None
        self.finishing_spec = Finishing(np.asarray(self.candidates, dtype=np.int32),
                                        self.collapse_to,
                                        forest.criterion in SPLIT_STATISTIC_CRITERIA)
        self.uncut_spec = self.finishing_spec._replace(collapse_to=None)
        self.oob_x_f = None
        if self.oob is not None:  # the node-size choice's rows, sent to each worker once
            self.oob_x_f = self.submit(_identity, self.oob["X"], name="oobrows")
            self.stats.sent_bytes += self.oob["X"].nbytes
        self.finishing = []  # (future, worker, rows) of finishing tasks not known to be done
        self.kept = []  # (top, finishing futures) of trees collapsed once the size is chosen
        self.grown_on = {}  # max_leaf_nodes: key of a finishing task -> its worker
        self.unfinished = []  # grown batches whose subtrees are still being finished
        # the last batch's subtrees are finished while the next grows; under max_leaf_nodes
        # a batch is cut first, its node state kept until then (subtrees grown again)
        overlap = 0 if self.bounded else 1
        for indices in batches:
            self._grow_batch(indices)
            while len(self.unfinished) > overlap:
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
            self._cut_trees(batch)
        for t, root in enumerate(batch.roots):
            futures = batch.groups[t]
            subtrees, oob = {}, {}
            if self.collapse_to is not None:
                for result in self.gather([f for f, _ in futures], what="trees"):
                    subtrees.update(result.subtrees)
                    oob.update(result.oob)
            elif self.oob is not None:
                for part in self.gather([o for _, o in futures], what="oob"):
                    oob.update(part)
            if self.oob is not None:
                self._add_tree_oob(root, batch.oob_at, oob)
            _release_top(root)
            if self.collapse_to is not None:
                self.trees.append(collapsed(self._assemble(root, subtrees), self.collapse_to,
                                            criterion))
            else:
                self.kept.append((root, [f for f, _ in futures]))
            batch.groups[t] = None
        batch.oob_at = None

    def _leaf_bound(self, node):
        """The leaf bound a node finished in memory grows its subtree to: None
        without max_leaf_nodes; else its share (SUBTREE_LEAF_SHARE) of the
        tree's bound by its rows, or the larger bound of a subtree grown again."""
        bound = self.forest.max_leaf_nodes
        if bound is None:
            return None
        if node.leaves is None:
            share = self.tuning.SUBTREE_LEAF_SHARE * bound * node.n_cases / self.batch.roots[
                node.tree].n_cases
            node.leaves = int(min(bound, max(self.tuning.SUBTREE_LEAVES_MIN, np.ceil(share))))
        return node.leaves

    def _cut_trees(self, batch):
        """Under max_leaf_nodes, the expansions each tree of the batch keeps
        (`aucforest._leaf_budget.expansions` on the tree's skeleton: its top
        and its subtrees' children and risks), the top cut on the client and
        the subtrees cut where they were grown (`_cut_group`); the batch's
        finishing futures become the cut subtrees'.

        A subtree grown to less than max_leaf_nodes that stopped at its bound
        is grown again when the m of its last expansion (all its nodes not
        grown have at most that m, `aucforest._leaf_budget`) is not below the
        tree's (max_leaf_nodes - 1)-th largest known m, tau (up to rounding:
        the in-memory builder orders by the same decrease, computed
        otherwise): to max_leaf_nodes, no split of decrease below tau made.
        tau is at most the m of the tree's last expansion (the nodes known
        are some of the tree's), so such a split is never kept: the subtree
        holds what one grown to max_leaf_nodes would give its tree, and a
        later, larger tau asks nothing more of it. So one regrowth at most,
        and the expansions are those of subtrees grown to max_leaf_nodes."""
        skeletons, latest, read = {}, {}, set()
        # a tree grown whole in memory was grown to the bound and finished so
        # (`_submit_finishing`): nothing to cut
        todo = [t for t, root in enumerate(batch.roots) if _cut_later([root])]
        cut_groups = {t: [] for t in todo}
        while todo:
            reading = {t: [f for f, _ in batch.groups[t] if f.key not in read] for t in todo}
            asked = {t: [self.submit(_skeleton_of, f, self.ctx_f, batch.tree_weight[t],
                                     name="skeleton", worker=self.grown_on.get(f.key))
                         for f in futures] for t, futures in reading.items()}
            # every tree's skeletons in one gather (16 bytes a node grown), then tree by tree
            parts = iter(self.gather([f for t in todo for f in asked[t]], what="skeleton"))
            del asked
            regrow = []
            for t in todo:
                for future in reading[t]:
                    part = next(parts)
                    read.add(future.key)
                    skeletons.update(part)
                    latest.update((node_id, future) for node_id in part)
                regrow.extend(self._cut_tree(batch, t, skeletons, latest, cut_groups[t]))
            todo = sorted({node.tree for node in regrow})
            if regrow:
                self.stats.regrowth_passes += 1
                self._regrow(batch, regrow)
        for t, futures in cut_groups.items():
            batch.groups[t] = futures
        batch.states = None
        self.grown_on.clear()

    def _cut_tree(self, batch, t, skeletons, latest, cut_futures):
        """One tree's cut (`_cut_trees`), or the nodes whose subtrees must be
        grown again (their leaf bounds raised) and nothing cut."""
        bound = self.forest.max_leaf_nodes
        root = batch.roots[t]
        left, right, risk, top, local = self._skeleton(root, skeletons)
        priority = split_priorities(risk, left, right)
        internal = right >= 0
        truncated = [(s, node) for s, node in local
                     if node.leaves < bound and skeletons[node.id][3] >= node.leaves]
        if truncated:
            m = bottlenecks(priority, left, right)
            known = m[internal]
            threshold = (np.partition(known, known.size - (bound - 1))[known.size - (bound - 1)]
                         if known.size >= bound - 1 else -np.inf)
            threshold -= 1e-9 * abs(threshold) if np.isfinite(threshold) else 0.0
            again = []
            for s, node in truncated:
                size = skeletons[node.id][0].shape[0]
                if m[s:s + size][internal[s:s + size]].min() >= threshold:
                    node.leaves = bound
                    # tau -inf (fewer than L - 1 splits known): no floor
                    node.min_decrease = max(0.0, threshold) * batch.tree_weight[t]
                    again.append(node)
            if again:
                self.stats.regrown_subtrees += len(again)
                return again
        expanded = expansions(left, right, priority, bound)
        in_tree = kept_nodes(left, right, expanded)
        index = {node.id: s for s, node in top}
        stack = [root] if root.kind != "local" else []
        while stack:  # the top: splits not kept become leaves, their OOB rows with them
            node = stack.pop()
            if node.kind != "split":
                continue
            if expanded[index[node.id]]:
                stack.extend(node.children)
            else:
                self._make_leaf(node, batch.oob_at)
        by_future = {}
        for s, node in local:
            if not in_tree[s]:
                continue
            size = skeletons[node.id][0].shape[0]
            rows = batch.oob_at.get(node.id) if self.oob is not None else None
            by_future.setdefault(latest[node.id].key, (latest[node.id], []))[1].append(
                (node.id, np.flatnonzero(expanded[s:s + size]).astype(np.int32), rows))
        for future, cuts in by_future.values():
            worker = self.grown_on.get(future.key)
            done = self.submit(_cut_group, future, cuts, self.ctx_f, self.finishing_spec,
                               self.oob_x_f, name="cut", worker=worker)
            oob = None
            if self.oob is not None and self.collapse_to is None:
                oob = self.submit(_oob_of, done, name="oobsums", worker=worker)
            cut_futures.append((done, oob))
        return []

    def _skeleton(self, root, skeletons):
        """A tree's skeleton in depth-first preorder (the `Tree` `_assemble`
        makes of it): children arrays and risks (`risks`) of its top's nodes
        and of its subtrees' (``skeletons``), [(index, node)] of the top's
        nodes and of the nodes finished in memory."""
        lefts, rights, risk, top, local = [], [], [], [], []
        stack, count, right_of = [(root, -1)], 0, []
        while stack:
            node, parent = stack.pop()  # parent: the node it is the right child of
            if parent >= 0:
                right_of.append((parent, count))
            if node.kind == "local":
                left, right, r, _ = skeletons[node.id]
                lefts.append(np.where(left >= 0, left + count, -1))
                rights.append(np.where(right >= 0, right + count, -1))
                risk.append(r)
                local.append((count, node))
                count += left.shape[0]
                continue
            split = node.kind == "split"
            lefts.append([count + 1 if split else -1])
            rights.append([-1])
            risk.append([0.0])
            top.append((count, node))
            count += 1
            if split:
                stack.append((node.children[1], count - 1))
                stack.append((node.children[0], -1))
        left, right, risk = (np.concatenate(parts) for parts in (lefts, rights, risk))
        left, right = left.astype(np.intp), right.astype(np.intp)
        for parent, index in right_of:
            right[parent] = index
        if top:  # the proportions and weights `_assemble` writes, against the root's weight
            at = np.array([s for s, _ in top])
            proba = np.array([node.dcounts / node.weight for _, node in top])
            weight = np.array([node.weight for _, node in top])
            risk[at] = risks(proba, weight, root.weight, self.forest.criterion)
        return left, right, risk, top, local

    def _make_leaf(self, node, oob_at):
        """A split of the top that max_leaf_nodes does not keep made a leaf: the
        node-size choice's OOB rows below it come back to it."""
        rows, stack = [], list(node.children)
        while stack:
            below = stack.pop()
            found = oob_at.pop(below.id, None)
            if found is not None:
                rows.append(found)
            stack.extend(below.children)
        if self.oob is not None:
            oob_at[node.id] = (np.concatenate(rows) if rows
                               else np.zeros(0, dtype=np.int32))
        node.kind, node.children = "leaf", ()

    def _regrow(self, batch, nodes):
        """Grow the subtrees of ``nodes`` again (to max_leaf_nodes, above their
        decrease floors) from their rows, taken once more from the batch's node
        state."""
        local = nodes
        while local:
            first_task = self.stats.tasks
            finish, groups, local = self._take_out(batch, local, waiting=False)
            results = self._submit_round(batch.states, None, None, finish, name="retake")
            self.stats.retake_rounds += 1
            self._submit_finishing(batch, results, groups)
            del results
            self._round_done(first_task)

    def _collapse_kept(self, min_samples):
        """The trees whose subtrees waited on the workers: collapsed there to the
        node size chosen, gathered one tree at a time, grafted into their tops."""
        split_impurity = self.forest.criterion in SPLIT_STATISTIC_CRITERIA
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
                left[observed] = levels_going_left(r["left_levels"])[
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
        self.stats.batches += 1
        keys = self.draw_keys[list(tree_indices)]
        rates = self.rates[list(tree_indices)]
        where = self.block_worker
        # each partition's rows in the batch before its first round, then its latest
        # round's result: the next round reads its state where it is
        states = [self.submit(_init_state, b, keys, rates, self.poisson, K, name="draw",
                              priority=1, worker=w) for b, w in zip(self.blocks, where)]
        sums = self.gather(self._reduce(_sum_root_sums, _sum_arrays, states, "rootsums"))
        # max_leaf_nodes: the nodes of each tree that can still be expanded best first
        self.batch = batch = _Batch(tree_indices, budgets=None if self.forest.max_leaf_nodes
                                    is None else {t: LeafBudget(self.forest.max_leaf_nodes)
                                                  for t in range(len(tree_indices))})
        for t, index in enumerate(tree_indices):
            node = self._new_node(t, hash_key(int(self.seeds[index]), _STREAM_NODES), 0,
                                  sums[t, :K], int(sums[t, K]), np.zeros(self.p, np.uint8))
            batch.tree_weight[t] = node.weight
            batch.roots.append(node)
            batch.groups.append([])
            if node.n_cases == 0:
                raise ValueError("no sample has a positive weight in a tree's draw")
        roots = batch.roots
        batch.oob_at = self._oob_roots(roots, keys, rates)
        self.unfinished.append(batch)
        pending = [n for n in roots if n.kind == "open"]   # histograms to ask for
        local = [n for n in roots if n.kind == "local"]    # rows to take out
        routes = None
        # the rounds (on the path of the client's next step) before the in-memory finishing
        # tasks, which fill the workers' time while the client chooses splits
        while pending or local or routes is not None:
            first_task = self.stats.tasks
            request, asked = self._request(pending)
            live = self._live(batch)  # before this round's groups count as taken out
            finish, groups, local = self._take_out(batch, local, waiting=bool(pending))
            results = self._submit_round(states, routes, request, finish, live=live)
            self.stats.rounds += 1
            states = results
            self._submit_finishing(batch, results, groups)
            routes = None
            if request is not None:
                hist = self.gather(self._reduce(_sum_round_histograms, _sum_histograms,
                                                results, "sum"), what="histograms")
                self.stats.histogram_slots += hist.shape[0]
                split_now, still = [], []
                for node, slots in asked.items():
                    for f, s in slots:
                        # without a case column every weight is 1: the cases are their sum
                        node.hists[f] = (hist[s, :, :K], hist[s, :, K] if hist.shape[2] > K
                                         else hist[s].sum(axis=1))
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
                if batch.budgets is not None:  # nodes max_leaf_nodes rules out: leaves, rows out
                    out = [n for n in pending + local if not self._may_expand(n)]
                    for node in out:
                        self._drop(node)
                    pending = [n for n in pending if n.kind == "open"]
                    local = [n for n in local if n.kind == "local"]
                    split_now.extend(out)
                self._route_oob(batch.oob_at, split_now)
                routes = self._routes(split_now) if split_now else None
            del results
            self._round_done(first_task)
        if self.bounded:  # the rows of subtrees grown again are taken from it (its state
            # only: not the last round's histograms and taken rows)
            batch.states = [self.submit(_kept_state, r, name="state", priority=1, worker=w)
                            for r, w in zip(states, where)]

    def _live(self, batch):
        """The round's (keep, LIVE_SHARE) (`_blocks._round`): keep[id] 1 for
        the open nodes, whose rows the next rounds read, 2 for the nodes
        finished in memory not taken out before this round, whose rows wait
        on the workers listed per node (`_kernels.sort_entries`)."""
        keep = np.fromiter((1 if node.kind == "open" else
                            2 if node.kind == "local" and node.id not in batch.taken else 0
                            for node in batch.nodes), dtype=np.uint8, count=len(batch.nodes))
        return keep, self.tuning.LIVE_SHARE

    def _submit_round(self, states, routes, request, finish, live=None, name="round"):
        """A round's tasks, one per partition on the worker holding it; its
        tables (routes, histogram request, finishing groups, live) one key
        that each worker fetches once. live None: every row read (a retake)."""
        tables = self.submit(_identity, RoundTables(routes, request, finish, live),
                             name="tables", priority=1)
        self.stats.table_bytes_to_workers += self.n_workers * (
            _payload((routes, request))[0] + (0 if finish is None else finish.group_of.nbytes)
            + (0 if live is None else live[0].nbytes))
        return [self.submit(_round, b, s, tables, self.n_codes, self.K, name=name, priority=1,
                            worker=w) for b, s, w in zip(self.blocks, states, self.block_worker)]

    def _round_done(self, first_task):
        """Count the round's tasks."""
        self.stats.tasks_per_round.append(self.stats.tasks - first_task)

    def _take_out(self, batch, local, waiting):
        """The nodes finished in memory whose rows this round takes out, in
        finishing groups, each placed on a worker (`_place`), and the nodes
        that wait (their rows stay in the node ids), so that taken-out rows do
        not pile up on the workers while the rounds go first. Without
        histograms to ask for (``waiting`` False) the client waits for
        finishing tasks to end instead, until the workers' backlog is down to
        half, so that such a round takes out many groups.

        Returns (a `FinishTable` or None, [(group, (worker, rows))], nodes
        that wait)."""
        if not local:
            return None, [], []
        groups = self._groups(local)
        placed = self._place(groups)
        while not placed and not waiting:
            self.stats.finishing_waits += 1
            self._wait_for_room()
            placed = self._place(groups)
        if not placed:
            self.stats.deferred_nodes += len(local)
            return None, [], local
        taken = groups[:len(placed)]
        group_of = np.full(len(batch.nodes), -1, dtype=np.int32)
        trees = np.zeros(len(batch.roots), dtype=np.uint8)
        for g, group in enumerate(taken):
            trees[group[0].tree] = 1  # a group is one tree's nodes
            for node in group:
                group_of[node.id] = g
                batch.taken.add(node.id)
        self.stats.sent_bytes += group_of.nbytes
        waiting = [n for group in groups[len(placed):] for n in group]
        self.stats.deferred_nodes += len(waiting)
        return FinishTable(group_of, len(taken), trees), list(zip(taken, placed)), waiting

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
            if tasks and (tasks >= self.tuning.FINISH_BACKLOG_PER_WORKER
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

        per_worker = self.tuning.FINISH_BACKLOG_PER_WORKER
        while self.finishing:
            loads = self._backlog()
            if any(tasks * 2 <= per_worker and rows * 2 <= self.backlog_rows
                   for tasks, rows in loads.values()):
                return
            wait([entry[0] for entry in self.finishing], return_when="FIRST_COMPLETED")

    def _submit_finishing(self, batch, results, groups):
        """One finishing task per group (`_grow_local`) on the worker chosen
        for it, its rows taken from each worker's partitions by one task per
        (worker, group), where the round results are: it reads the group's
        taken rows of each (not the node state), and only those move."""
        if not groups:
            return
        for g, (group, (worker, n_rows)) in enumerate(groups):
            takes = [self.submit(_take_group, g, *[results[i] for i in indices], name="take",
                                 priority=1, worker=holder)
                     for holder, indices in self.worker_sets]
            # max_leaf_nodes: a whole tree grown in memory is grown to the bound, so it
            # is finished at once (as without a bound); subtrees are cut first
            cut_later = self.bounded and _cut_later(group)
            oob_at = batch.oob_at
            spec = [NodeSpec(n.id, n.key, n.depth, self._min_weight_leaf(n),
                             oob_at.get(n.id) if self.oob is not None and not cut_later
                             else None, self._leaf_bound(n), n.min_decrease) for n in group]
            self.stats.sent_bytes += 40 * len(spec) + sum(
                0 if node.oob_rows is None else node.oob_rows.nbytes for node in spec)
            grown = self.submit(_grow_local, takes, spec, self.ctx_f,
                                self.uncut_spec if cut_later else self.finishing_spec,
                                self.oob_x_f, name="local", worker=worker)
            self.finishing.append((grown, worker, n_rows))
            if cut_later:
                self.grown_on[grown.key] = worker
            self.stats.finishing_groups += 1
            oob = None
            if self.oob is not None and self.collapse_to is None and not cut_later:
                oob = self.submit(_oob_of, grown, name="oobsums", worker=worker)
            batch.groups[group[0].tree].append((grown, oob))

    def _new_node(self, tree, key, depth, counts, n_cases, constant, above=np.inf):
        node = _Node()
        node.id = len(self.batch.nodes)
        self.batch.nodes.append(node)
        node.tree, node.key, node.depth, node.above = tree, int(key), depth, above
        node.counts = np.asarray(counts, dtype=np.int64)
        node.dcounts, node.weight = self._weighted(node.counts)
        node.n_cases, node.constant = n_cases, constant
        node.order, node.hists, node.split, node.children, node.subtree = None, {}, None, (), None
        node.leaves, node.min_decrease = None, 0.0
        forest = self.forest
        n_present = np.count_nonzero(node.dcounts > 0)
        min_weight_leaf = self._min_weight_leaf(node) if depth > 0 else 0.0
        if (n_present < 2 or (forest.max_depth is not None and depth >= forest.max_depth)
                or n_cases < 2 * self.min_samples_leaf or node.weight < 2.0 * min_weight_leaf):
            node.kind = "leaf"
        elif n_cases <= self.local_rows or (depth == 0 and self.bounded
                                            and n_cases <= self.tuning.WHOLE_TREE_ROWS):
            node.kind = "local"
            self.stats.whole_trees += depth == 0
            self.stats.finished_nodes += 1
            self.stats.finished_rows += n_cases
        else:
            node.kind = "open"
            node.order = feature_order(node.key, self.p)
            self.stats.open_nodes += 1
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
        if self.batch.budgets is None:
            return np.inf
        rows = [self._weighted(c) for c in (node.counts, left, right)]
        proba = np.array([dcounts / weight for dcounts, weight in rows])
        weight = np.array([weight for _, weight in rows])
        decrease = split_priority(proba, weight, self.batch.tree_weight[node.tree],
                                  self.forest.criterion)
        return min(node.above, decrease)

    def _may_expand(self, node):
        """Whether a node not yet split can be among its tree's max_leaf_nodes - 1
        expansions, given the nodes split so far (a root always can)."""
        return node.depth == 0 or self.batch.budgets[node.tree].may_expand_below(node.above)

    def _drop(self, node):
        """Make an open or local node a leaf (max_leaf_nodes rules it out)."""
        if node.kind == "open":
            self.stats.open_nodes -= 1
        elif node.kind == "local":
            self.stats.finished_nodes -= 1
            self.stats.finished_rows -= node.n_cases
        node.kind, node.hists, node.order = "leaf", {}, None

    def _min_weight_leaf(self, node):
        fraction = self.forest.min_weight_fraction_leaf
        return fraction * self.batch.tree_weight[node.tree] if fraction else 0.0

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
        budget = max(1, self.tuning.MAX_ROUND_BYTES // (self.n_codes * (self.K + 1) * 8))
        chosen, total = [], 0
        for node in pending:
            wanted = self._wanted(node)
            if chosen and total + len(wanted) > budget:
                break
            chosen.append((node, wanted))
            total += len(wanted)
        lengths = np.zeros(len(self.batch.nodes), dtype=np.int64)
        for node, wanted in chosen:
            lengths[node.id] = len(wanted)
        first_slot = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        slot_feature = np.zeros(total, dtype=np.int32)
        asked = {}
        for node, wanted in chosen:
            s0 = int(first_slot[node.id])
            slot_feature[s0:s0 + len(wanted)] = wanted
            asked[node] = [(f, s0 + j) for j, f in enumerate(wanted)]
        self.stats.sent_bytes += first_slot.nbytes + slot_feature.nbytes
        return (first_slot, slot_feature), asked

    def _groups(self, local):
        """Nodes finished in memory, in tasks of one tree's nodes and about
        LOCAL_ROWS_PER_TASK rows, in tree order."""
        groups, rows, tree = [], 0, None
        task_rows = max(self.tuning.LOCAL_ROWS_PER_TASK, self.local_rows)
        for node in sorted(local, key=operator.attrgetter("tree")):
            if not groups or node.tree != tree or rows + node.n_cases > task_rows:
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
            goes_left = levels_going_left(result["left_levels"])[:self.n_codes - 1]
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
        if self.batch.budgets is not None and not self.batch.budgets[node.tree].may_expand(m):
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
        size = len(self.batch.nodes)
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
            self.stats.sent_bytes += 17 * size
            return feature, threshold_bin, missing_left, left, right
        left_levels = np.array(level_sets, dtype=np.uint64).reshape(-1, 4)
        self.stats.sent_bytes += 21 * size + left_levels.nbytes
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
        return Tree(self.p, self.K, max_depth=max_depth, **arrays)

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
        sample = None
        if self.oob is not None and forest.oob_score:
            # the model keeps the bounded sample oob_score_ is computed on (oob_gmean_
            # under any later decision), not n rows: `oob_decision_function` computes
            # those where the rows are, from the user's X (nothing pins it here)
            sample = (labels, forest.oob_decision_function_)
            del forest.oob_decision_function_, forest.oob_labels_
        forest._set_fit_provenance(
            case_draws=_DrawsOnWorkers(self.draw_keys, self.rates, self.poisson, self.n,
                                       forest.balanced_bootstrap),
            oob_source=OnWorkers(sample))
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
        rates = np.minimum(1.0, (self.tuning.OOB_CHOICE_MAX_CASES // K) / np.maximum(self.class_counts, 1))
        key = hash_key(self.fit_key, _STREAM_OOB)
        parts = self.gather([self.submit(_oob_rows, b, rates, key, name="oobrows")
                             for b in self.blocks])
        oob = {name: np.concatenate([part[name] for part in parts])
               for name in ("row", "y", "draw_y", "codes")}
        oob["X"] = _edge_values(oob["codes"], self.edges, self.n_bins,
                                self.ctx.is_categorical)
        m = oob["row"].shape[0]
        oob["proba"] = np.zeros((len(self.candidates), m, K))
        oob["n_trees"] = np.zeros(m)
        self.oob = oob


def _cut_later(nodes):
    """Under max_leaf_nodes, whether subtrees grown in memory from ``nodes``
    (a finishing group, one tree's nodes) are cut once their tree is known
    (`_Fit._cut_trees`): all but a tree's root, whose subtree is the whole
    tree, grown to the bound."""
    return not (len(nodes) == 1 and nodes[0].depth == 0 and nodes[0].kind == "local")


def _release_top(root):
    """Drop what a grown tree's top (on the client) no longer needs: the
    search state of its nodes (feature orders, histograms, constant flags)."""
    stack = [root]
    while stack:
        node = stack.pop()
        node.order, node.hists, node.constant = None, {}, None
        stack.extend(node.children)


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


def fit(forest, X, y, sample_weight, tuning):
    """`AUCForestClassifier.fit` on a dask array or DataFrame (see the module docstring).

    The model is published in one assignment (`fit_atomically`), as the
    in-memory fit does.
    """
    return fit_atomically(forest, lambda staging: _Fit(staging, X, y, sample_weight, tuning).run())
