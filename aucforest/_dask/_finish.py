"""The nodes finished in memory: their finishing tasks (`Finisher.submit`),
under max_leaf_nodes the cut of the grown trees and the subtrees grown
again (`Finisher.cut_trees`), and the trees completed from their tops and
subtrees (`Finisher.complete`, `Finisher.collapse_kept`)."""
import numpy as np

from .._base import SPLIT_STATISTIC_CRITERIA, collapsed
from .._leaf_budget import bottlenecks, expansions, kept_nodes, split_priorities
from ._assemble import assemble, skeleton
from ._blocks import collapse_group, cut_group, grow_local, oob_of, skeleton_of, take_group
from ._payloads import Finishing, NodeSpec
from ._tops import min_weight_leaf, release_top


def _cut_later(nodes):
    """Under max_leaf_nodes, whether subtrees grown in memory from ``nodes``
    (a finishing group, one tree's nodes) are cut once their tree is known
    (`Finisher.cut_trees`): all but a tree's root, whose subtree is the whole
    tree, grown to the bound."""
    return not (len(nodes) == 1 and nodes[0].depth == 0 and nodes[0].kind == "local")


class Finisher:
    """The finishing tasks of one fit and the trees they complete.

    Parameters
    ----------
    session : Session
        The fit's client.
    forest : AUCForestClassifier
        Its tree parameters.
    prepared : Prepared
        The context's future, features, classes and partitions' workers.
    takes : Takes
        The finishing tasks' backlog.
    oob : OobChoice or None
        The node-size choice's rows; ``oob_x_f`` their values' future.
    sizes : sequence of int
        The candidate node sizes.
    tuning : Tuning
        ``SUBTREE_LEAF_SHARE``, ``SUBTREE_LEAVES_MIN``.

    Attributes
    ----------
    trees : list of Tree
        The completed trees, in tree order.
    kept : list
        (top, finishing futures) of the trees collapsed once the size is chosen.
    """

    def __init__(self, session, forest, prepared, takes, oob, oob_x_f, sizes, tuning):
        self.session, self.forest, self.prepared, self.takes = session, forest, prepared, takes
        self.oob, self.oob_x_f, self.tuning = oob, oob_x_f, tuning
        self.stats = session.stats
        self.bounded = forest.max_leaf_nodes is not None
        # the node size: known now (one candidate: the finishing tasks collapse their
        # subtrees), or chosen at the end (the grown subtrees wait on the workers)
        self.collapse_to = sizes[0] if len(sizes) == 1 else None
        # max_leaf_nodes: a tree is cut once assembled, so its subtrees come back grown
        # (`uncut_spec`) and its out-of-bag sums are added on the client, from the cut tree
        self.finishing_spec = Finishing(np.asarray(sizes, dtype=np.int32), self.collapse_to,
                                        forest.criterion in SPLIT_STATISTIC_CRITERIA)
        self.uncut_spec = self.finishing_spec._replace(collapse_to=None)
        self.grown_on = {}  # max_leaf_nodes: key of a finishing task -> its worker
        self.trees, self.kept = [], []

    def leaf_bound(self, batch, node):
        """The leaf bound a node finished in memory grows its subtree to: None
        without max_leaf_nodes; else its share (SUBTREE_LEAF_SHARE) of the
        tree's bound by its rows, or the larger bound of a subtree grown again."""
        bound = self.forest.max_leaf_nodes
        if bound is None:
            return None
        if node.leaves is None:
            share = self.tuning.SUBTREE_LEAF_SHARE * bound * node.n_cases / batch.roots[
                node.tree].n_cases
            node.leaves = int(min(bound, max(self.tuning.SUBTREE_LEAVES_MIN, np.ceil(share))))
        return node.leaves

    def submit(self, batch, results, groups):
        """One finishing task per group (`grow_local`) on the worker chosen
        for it, its rows taken from each worker's partitions by one task per
        (worker, group), where the round ``results`` are: it reads the group's
        taken rows of each (not the node state), and only those move."""
        session, fraction = self.session, self.forest.min_weight_fraction_leaf
        for g, (group, (worker, n_rows)) in enumerate(groups):
            takes = [session.submit(take_group, g, *[results[i] for i in indices], name="take",
                                    priority=1, worker=holder)
                     for holder, indices in self.prepared.worker_sets]
            # max_leaf_nodes: a whole tree grown in memory is grown to the bound, so it
            # is finished at once (as without a bound); subtrees are cut first
            cut_later = self.bounded and _cut_later(group)
            oob_at = batch.oob_at
            spec = [NodeSpec(n.id, n.key, n.depth, min_weight_leaf(fraction, batch, n),
                             oob_at.get(n.id) if self.oob is not None and not cut_later
                             else None, self.leaf_bound(batch, n), n.min_decrease)
                    for n in group]
            self.stats.sent_bytes += 40 * len(spec) + sum(
                0 if node.oob_rows is None else node.oob_rows.nbytes for node in spec)
            grown = session.submit(grow_local, takes, spec, self.prepared.ctx_f,
                                   self.uncut_spec if cut_later else self.finishing_spec,
                                   self.oob_x_f, name="local", worker=worker)
            self.takes.started(grown, worker, n_rows)
            if cut_later:
                self.grown_on[grown.key] = worker
            self.stats.finishing_groups += 1
            oob = None
            if self.oob is not None and self.collapse_to is None and not cut_later:
                oob = session.submit(oob_of, grown, name="oobsums", worker=worker)
            batch.groups[group[0].tree].append((grown, oob))

    def complete(self, batch):
        """The batch's trees in tree order: their out-of-bag sums (from the tops
        and the finishing tasks' proportions), and with the node size known,
        the trees themselves, collapsed where their subtrees were grown; else
        their tops and finishing tasks wait for `collapse_kept`."""
        criterion, prepared = self.forest.criterion, self.prepared
        for t, root in enumerate(batch.roots):
            futures = batch.groups[t]
            subtrees, oob = {}, {}
            if self.collapse_to is not None:
                for result in self.session.gather([f for f, _ in futures], what="trees"):
                    subtrees.update(result.subtrees)
                    oob.update(result.oob)
            elif self.oob is not None:
                for part in self.session.gather([o for _, o in futures], what="oob"):
                    oob.update(part)
            if self.oob is not None:
                self.oob.add_tree(root, batch.oob_at, oob)
            release_top(root)
            if self.collapse_to is not None:
                tree = assemble(root, subtrees, prepared.p, prepared.n_classes, criterion)
                self.trees.append(collapsed(tree, self.collapse_to, criterion))
            else:
                self.kept.append((root, [f for f, _ in futures]))
            batch.groups[t] = None
        batch.oob_at = None

    def collapse_kept(self, min_samples):
        """The trees whose subtrees waited on the workers: collapsed there to the
        node size chosen, gathered one tree at a time, grafted into their tops."""
        criterion, prepared = self.forest.criterion, self.prepared
        split_impurity = criterion in SPLIT_STATISTIC_CRITERIA
        kept, self.kept = self.kept, []
        collapsing = [[self.session.submit(collapse_group, f, prepared.p, prepared.n_classes,
                                           min_samples, split_impurity, name="collapse")
                       for f in futures] for _, futures in kept]
        tops = [root for root, _ in kept]
        del kept
        for root, futures in zip(tops, collapsing):
            subtrees = {}
            for result in self.session.gather(futures, what="trees"):
                subtrees.update(result)
            futures.clear()
            tree = assemble(root, subtrees, prepared.p, prepared.n_classes, criterion)
            self.trees.append(collapsed(tree, min_samples, criterion))

    def cut_trees(self, batch, regrow):
        """Under max_leaf_nodes, the expansions each tree of the batch keeps
        (`aucforest._leaf_budget.expansions` on the tree's skeleton: its top
        and its subtrees' children and risks), the top cut on the client and
        the subtrees cut where they were grown (`cut_group`); the batch's
        finishing futures become the cut subtrees'. ``regrow(batch, nodes)``
        grows the subtrees of ``nodes`` again.

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
        # (`submit`): nothing to cut
        todo = [t for t, root in enumerate(batch.roots) if _cut_later([root])]
        cut_groups = {t: [] for t in todo}
        while todo:
            reading = {t: [f for f, _ in batch.groups[t] if f.key not in read] for t in todo}
            asked = {t: [self.session.submit(skeleton_of, f, self.prepared.ctx_f,
                                             batch.tree_weight[t], name="skeleton",
                                             worker=self.grown_on.get(f.key))
                         for f in futures] for t, futures in reading.items()}
            # every tree's skeletons in one gather (16 bytes a node grown), then tree by tree
            parts = iter(self.session.gather([f for t in todo for f in asked[t]],
                                             what="skeleton"))
            del asked
            again = []
            for t in todo:
                for future in reading[t]:
                    part = next(parts)
                    read.add(future.key)
                    skeletons.update(part)
                    latest.update((node_id, future) for node_id in part)
                again.extend(self._cut_tree(batch, t, skeletons, latest, cut_groups[t]))
            todo = sorted({node.tree for node in again})
            if again:
                self.stats.regrowth_passes += 1
                regrow(batch, again)
        for t, futures in cut_groups.items():
            batch.groups[t] = futures
        batch.states = None
        self.grown_on.clear()

    def _cut_tree(self, batch, t, skeletons, latest, cut_futures):
        """One tree's cut (`cut_trees`), or the nodes whose subtrees must be
        grown again (their leaf bounds raised) and nothing cut."""
        bound = self.forest.max_leaf_nodes
        root = batch.roots[t]
        left, right, risk, top, local = skeleton(root, skeletons, self.forest.criterion)
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
            done = self.session.submit(cut_group, future, cuts, self.prepared.ctx_f,
                                       self.finishing_spec, self.oob_x_f, name="cut",
                                       worker=worker)
            oob = None
            if self.oob is not None and self.collapse_to is None:
                oob = self.session.submit(oob_of, done, name="oobsums", worker=worker)
            cut_futures.append((done, oob))
        return []

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
