"""The rows choosing the node size of a fit on dask collections: a bounded,
class-balanced, hash-selected sample gathered on the client, routed through
the tops of the trees there and through the subtrees by the finishing tasks,
and their out-of-bag sums per candidate size."""
import numpy as np

from .._categories import levels_going_left
from .._oob_estimates import OutOfBagSums
from ._blocks import edge_values, oob_rows
from ._draws import draw_counts, hash_key
from ._prepare import STREAM_OOB


class OobChoice:
    """The node-size choice's rows and their out-of-bag sums.

    Parameters
    ----------
    rows : dict
        ``"row"`` (global indices), ``"y"``, ``"draw_y"``, ``"codes"`` and
        ``"X"`` (values at the bins' upper edges) of the rows.
    sizes : sequence of int
        The candidate node sizes.
    n_classes : int
        Classes.
    """

    def __init__(self, rows, sizes, n_classes):
        self.row, self.y, self.draw_y, self.X = rows["row"], rows["y"], rows["draw_y"], rows["X"]
        self.sizes, self.n_classes = sizes, n_classes
        m = self.row.shape[0]
        self.proba = np.zeros((len(sizes), m, n_classes))
        self.n_trees = np.zeros(m)

    @classmethod
    def gather(cls, session, prepared, sizes, max_cases):
        """Gather the bounded, class-balanced, hash-selected rows (at most about
        ``max_cases``) of the partitions ``prepared.blocks``."""
        K, ctx = prepared.n_classes, prepared.ctx
        rates = np.minimum(1.0, (max_cases // K) / np.maximum(prepared.class_counts, 1))
        key = hash_key(prepared.fit_key, STREAM_OOB)
        parts = session.gather([session.submit(oob_rows, b, rates, key, name="oobrows")
                                for b in prepared.blocks])
        rows = {name: np.concatenate([part[name] for part in parts])
                for name in ("row", "y", "draw_y", "codes")}
        rows["X"] = edge_values(rows["codes"], ctx.edges, ctx.n_bins, ctx.is_categorical)
        return cls(rows, sizes, K)

    def at_roots(self, roots, draws, tree_indices):
        """Out-of-bag rows of each tree of a batch, at its root: {root id: rows}."""
        counts = draw_counts(draws.keys[tree_indices], self.row, self.draw_y,
                             draws.rates[tree_indices], draws.poisson)
        return {root.id: np.flatnonzero(counts[t] == 0).astype(np.int32)
                for t, root in enumerate(roots)}

    def route(self, oob_at, split_nodes):
        """Move the rows (of each tree) from split nodes to their children, as
        the tree sends them (x <= threshold, missing values by the split's side)."""
        X = self.X
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

    def add_tree(self, root, oob_at, found):
        """Add one tree's out-of-bag proportions over the rows for each
        candidate size, as `accumulate_oob_proba` on the whole tree would (the
        same additions, tree after tree): the node each candidate predicts
        from is the deepest on the row's path with at least that many cases
        (the root at least); below a finished subtree's root, ``found`` (the
        finishing task's), else a node of the top."""
        sizes, proba, n_trees = self.sizes, self.proba, self.n_trees
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
                size, values = 0, np.empty((len(sizes), rows.shape[0], self.n_classes))
                path = path + ((node.n_cases, node.dcounts / node.weight),)
            for c, m in enumerate(sizes):
                if size < m and path:
                    values[c] = next((v for n, v in reversed(path) if n >= m), path[0][1])
            for c in range(len(sizes)):
                proba[c, rows] += values[c]
            n_trees[rows] += 1

    def set_estimates(self, forest):
        """The forest's out-of-bag estimates (and node size) from the sums;
        returns the rows' class codes."""
        labels = self.y.astype(np.intp)
        forest._set_oob_estimates(labels, OutOfBagSums.from_sums(self.proba, self.n_trees,
                                                                 self.sizes))
        return labels
