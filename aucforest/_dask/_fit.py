"""The driver of the fit on dask collections (`aucforest._dask`, whose
docstring is the account of the fit): the client's side of one fit, its
steps in order. The steps are modules of their own: `_prepare` (binning,
priors, draw rates), `_oob_choice` (the rows choosing the node size),
`_rounds` (a batch's tasks over the partitions and their sums), `_tops`
(the nodes and splits of the trees' tops), `_takes` (the nodes whose rows
a round takes out), `_finish` (finishing tasks, the cut of bounded trees,
the trees completed) and `_assemble` (a tree from its top and subtrees)."""
import numpy as np

from .._base import fit_atomically, resolve_max_features, tree_params
from .._leaf_budget import LeafBudget
from .._oob_estimates import node_size_candidates
from .._oob_source import OnWorkers
from .._split import CRITERIA
from ..tree import feature_attributes, fitted_tree
from ._blocks import identity
from ._draws import hash_key
from ._finish import Finisher
from ._inputs import client
from ._histogram_splitter import HistogramSplitter
from ._model import DrawsOnWorkers
from ._oob_choice import OobChoice
from ._payloads import FitStats
from ._prepare import STREAM_NODES, prepare
from ._rounds import draw, histograms, keep_states, live, submit_round
from ._session import Session
from ._takes import Takes, finishing_groups
from ._tops import Batch, TopGrower


class _Fit:
    """One fit on rows that stay on the workers (see `aucforest._dask`).

    Parameters
    ----------
    forest : AUCForestClassifier
        The estimator being fitted (its staging copy).
    X, y, sample_weight : dask collections
        The rows, classes and weights.
    tuning : Tuning
        The fit's knobs.
    """

    def __init__(self, forest, X, y, sample_weight, tuning):
        self.forest, self.tuning, self.inputs = forest, tuning, (X, y, sample_weight)
        self.stats = FitStats()
        self.session = Session(client(), self.stats, tuning.REDUCE_FAN_IN)

    def run(self):
        """Prepare, grow the trees batch by batch, choose the node size, finish."""
        forest, tuning, session = self.forest, self.tuning, self.session
        prepared = prepare(session, forest, *self.inputs, tuning)
        self.inputs = None
        sizes = node_size_candidates(forest.predict_min_samples, forest.bootstrap,
                                     prepared.positive)
        oob = None
        if forest.oob_score or len(sizes) > 1:
            oob = OobChoice.gather(session, prepared, sizes, tuning.OOB_CHOICE_MAX_CASES)
        finisher = self._grow(prepared, sizes, oob)
        trees = self._finish(prepared, sizes, oob, finisher)
        forest._set_fit_provenance(fit_stats=self.stats.as_dict(
            n_trees=len(trees), tree_nodes=sum(t.node_count for t in trees),
            tasks_per_tree=self.stats.tasks / len(trees)))
        return forest

    def _grow(self, prepared, sizes, oob):
        """Grow every tree, batch after batch; returns the `Finisher` holding them."""
        forest, tuning, session, stats = self.forest, self.tuning, self.session, self.stats
        n, p = prepared.n, prepared.p
        self.prepared, self.oob = prepared, oob
        max_features = resolve_max_features(forest.max_features, p)
        self.local_rows = tuning.local_rows(n)
        min_samples_leaf = min(forest.min_samples_leaf, n)
        splitter = HistogramSplitter(prepared.ctx.edges, p, prepared.n_classes,
                                     CRITERIA[forest.criterion], max_features,
                                     min_samples_leaf, forest.nsplit or 0,
                                     prepared.ctx.is_categorical)
        self.tops = TopGrower(forest, prepared, splitter, max_features, min_samples_leaf,
                              self.local_rows, tuning, stats)
        # trees per batch: their state (5 bytes per row and tree) within BATCH_STATE_BYTES
        # per worker; the trees do not depend on it (each grows from its own keys)
        workers = sorted(session.client.scheduler_info().get("workers", ()))
        self.n_workers = max(1, len(workers))
        self.takes = Takes(workers, tuning, p, stats)
        n_trees = len(prepared.seeds)
        per_batch = int(np.clip(tuning.BATCH_STATE_BYTES * self.n_workers // (5 * n), 1,
                                tuning.MAX_TREES_PER_BATCH))
        batches = [range(lo, min(lo + per_batch, n_trees)) for lo in range(0, n_trees, per_batch)]
        oob_x_f = None
        if oob is not None:  # the node-size choice's rows, sent to each worker once
            oob_x_f = session.submit(identity, oob.X, name="oobrows")
            stats.sent_bytes += oob.X.nbytes
        self.finisher = finisher = Finisher(session, forest, prepared, self.takes, oob, oob_x_f,
                                            sizes, tuning)
        # the last batch's subtrees are finished while the next grows; under max_leaf_nodes
        # a batch is cut first, its node state kept until then (subtrees grown again)
        overlap = 0 if forest.max_leaf_nodes is not None else 1
        unfinished = []  # grown batches whose subtrees are still being finished
        for indices in batches:
            unfinished.append(self._grow_batch(indices))
            while len(unfinished) > overlap:
                self._complete(unfinished.pop(0))
        for batch in unfinished:
            self._complete(batch)
        finisher.oob_x_f = None
        return finisher

    def _grow_batch(self, indices):
        """Grow the trees ``indices`` level by level on the workers; returns the
        batch (its roots, the futures of its subtrees finished in memory)."""
        forest, session, stats, tops = self.forest, self.session, self.stats, self.tops
        prepared, K = self.prepared, self.prepared.n_classes
        stats.batches += 1
        tree_indices = list(indices)
        # each partition's rows in the batch before its first round, then its latest
        # round's result: the next round reads its state where it is
        states, sums = draw(session, prepared, tree_indices)
        # max_leaf_nodes: the nodes of each tree that can still be expanded best first
        batch = Batch(indices, budgets=None if forest.max_leaf_nodes is None
                      else {t: LeafBudget(forest.max_leaf_nodes) for t in range(len(indices))})
        for t, index in enumerate(indices):
            node = tops.new_node(batch, t, hash_key(int(prepared.seeds[index]), STREAM_NODES),
                                 0, sums[t, :K], int(sums[t, K]), np.zeros(prepared.p, np.uint8))
            batch.tree_weight[t] = node.weight
            batch.roots.append(node)
            batch.groups.append([])
            if node.n_cases == 0:
                raise ValueError("no sample has a positive weight in a tree's draw")
        roots = batch.roots
        if self.oob is not None:
            batch.oob_at = self.oob.at_roots(roots, prepared.draws, tree_indices)
        pending = [n for n in roots if n.kind == "open"]   # histograms to ask for
        local = [n for n in roots if n.kind == "local"]    # rows to take out
        routes = None
        # the rounds (on the path of the client's next step) before the in-memory finishing
        # tasks, which fill the workers' time while the client chooses splits
        while pending or local or routes is not None:
            first_task = stats.tasks
            request, asked = tops.request(batch, pending)
            keep = live(batch, self.tuning.LIVE_SHARE)  # before this round's groups are taken
            finish, groups, local = self.takes.take_out(
                batch, self._groups(local) if local else [], waiting=bool(pending))
            results = submit_round(session, prepared, self.n_workers, states, routes, request,
                                   finish, live=keep)
            stats.rounds += 1
            states = results
            self.finisher.submit(batch, results, groups)
            routes = None
            if request is not None:
                tops.receive(histograms(session, prepared, results), asked)
                pending, local, routes = self._split_round(batch, pending, local, asked)
            del results
            stats.tasks_per_round.append(stats.tasks - first_task)
        if forest.max_leaf_nodes is not None:  # the rows of subtrees grown again are taken
            # from it (its state only: not the last round's histograms and taken rows)
            batch.states = keep_states(session, prepared, states)
        return batch

    def _split_round(self, batch, pending, local, asked):
        """Search the splits of the nodes whose histograms came (``asked``):
        the nodes still pending, those to finish in memory, the routes."""
        tops = self.tops
        split_now, still = [], []
        for node in pending:
            if node not in asked or tops.split(batch, node) == "need":
                still.append(node)
            else:
                split_now.append(node)
        pending = still
        children = [c for node in split_now for c in node.children]
        pending.extend(c for c in children if c.kind == "open")
        local.extend(c for c in children if c.kind == "local")
        if batch.budgets is not None:  # nodes max_leaf_nodes rules out: leaves, rows out
            out = [n for n in pending + local if not tops.may_expand(batch, n)]
            for node in out:
                tops.drop(node)
            pending = [n for n in pending if n.kind == "open"]
            local = [n for n in local if n.kind == "local"]
            split_now.extend(out)
        if self.oob is not None:
            self.oob.route(batch.oob_at, split_now)
        return pending, local, tops.routes(batch, split_now) if split_now else None

    def _groups(self, local):
        """Nodes finished in memory in finishing groups (`finishing_groups`)."""
        return finishing_groups(local, max(self.tuning.LOCAL_ROWS_PER_TASK, self.local_rows))

    def _complete(self, batch):
        """The batch's trees, cut first under max_leaf_nodes (`Finisher`)."""
        if self.forest.max_leaf_nodes is not None:
            self.finisher.cut_trees(batch, self._regrow)
        self.finisher.complete(batch)

    def _regrow(self, batch, nodes):
        """Grow the subtrees of ``nodes`` again (to max_leaf_nodes, above their
        decrease floors) from their rows, taken once more from the batch's node
        state."""
        stats, local = self.stats, nodes
        while local:
            first_task = stats.tasks
            finish, groups, local = self.takes.take_out(batch, self._groups(local),
                                                        waiting=False)
            results = submit_round(self.session, self.prepared, self.n_workers, batch.states,
                                   None, None, finish, name="retake")
            stats.retake_rounds += 1
            self.finisher.submit(batch, results, groups)
            del results
            stats.tasks_per_round.append(stats.tasks - first_task)

    def _finish(self, prepared, sizes, oob, finisher):
        """Node-size choice from the OOB sums, then the trees collapsed to it;
        the forest's estimators and provenance. Returns the trees."""
        forest = self.forest
        forest.predict_min_samples_ = sizes[0]
        if oob is not None:
            labels = oob.set_estimates(forest)
        finisher.collapse_kept(forest.predict_min_samples_)
        params = dict(tree_params(forest), max_bins=prepared.max_bins)
        features = feature_attributes(forest)
        forest.estimators_ = [
            fitted_tree(tree_, prepared.classes, prepared.p, int(seed), params, features)
            for seed, tree_ in zip(prepared.seeds, finisher.trees)]
        sample = None
        if oob is not None and forest.oob_score:
            # the model keeps the bounded sample oob_score_ is computed on (oob_gmean_
            # under any later decision), not n rows: `oob_decision_function` computes
            # those where the rows are, from the user's X (nothing pins it here)
            sample = (labels, forest.oob_decision_function_)
            del forest.oob_decision_function_, forest.oob_labels_
        draws = prepared.draws
        forest._set_fit_provenance(
            case_draws=DrawsOnWorkers(draws.keys, draws.rates, draws.poisson, prepared.n,
                                      forest.balanced_bootstrap),
            oob_source=OnWorkers(sample))
        for block in prepared.blocks:
            block.release()
        return finisher.trees


def fit(forest, X, y, sample_weight, tuning):
    """`AUCForestClassifier.fit` on a dask array or DataFrame (see `aucforest._dask`).

    The model is published in one assignment (`fit_atomically`), as the
    in-memory fit does.

    Parameters
    ----------
    forest : AUCForestClassifier
        The estimator to fit.
    X, y, sample_weight : dask collections
        The rows, classes and weights (None: all one).
    tuning : Tuning
        The fit's knobs.

    Returns
    -------
    AUCForestClassifier
        ``forest``, fitted.
    """
    return fit_atomically(forest, lambda staging: _Fit(staging, X, y, sample_weight,
                                                       tuning).run())
