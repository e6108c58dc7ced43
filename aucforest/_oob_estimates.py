"""Out-of-bag estimates of a fit: running sums per candidate node size, the OOB
AUC and G-mean, and the cases that choose the node size."""
import threading
import warnings

import numpy as np
from scipy.sparse import csr_array, issparse
from sklearn.utils.random import sample_without_replacement

from ._sparse import SparseRows, is_sparse
from ._tree import (GROWN_SPARSE_ABOVE_CLASSES, accumulate_oob_proba, oob_proba_means_sparse,
                    oob_proba_sums_by_row, oob_used_nodes)
from .metrics import multiclass_auc
from .metrics._auc import hand_till_auc, mann_whitney_auc
from .metrics._imbalance import _geometric_mean

# Node sizes tried by predict_min_samples="oob" (1 is the leaf).
MIN_SAMPLES_CANDIDATES = (1, 2, 5, 10, 20, 50)


# predict_min_samples="oob" chooses only when every class has at least this many
# training cases; below, the out-of-bag figures of a class are too few to choose
# among six sizes and the trees predict from their leaves
# (benchmarks/results/node_size_rules.md, small data sets).
MIN_CLASS_CASES_TO_CHOOSE = 15


# Most cases whose out-of-bag predictions choose the node size (oob_score=False):
# up to an equal share per class, so that a rare class keeps its cases.
OOB_CHOICE_MAX_CASES = 100_000


def node_size_candidates(predict_min_samples, bootstrap, positive_class_counts):
    """Node sizes a fit predicts from: the one given, or for "oob" the
    candidates (the leaf alone without out-of-bag cases, or when some class has
    fewer than MIN_CLASS_CASES_TO_CHOOSE cases of positive weight).

    Parameters
    ----------
    predict_min_samples : int or "oob"
    bootstrap : bool
    positive_class_counts : ndarray of shape (n_classes,)
        Training cases of positive weight in each class.

    Returns
    -------
    tuple of int
    """
    if predict_min_samples != "oob":
        return (predict_min_samples,)
    if not bootstrap or np.min(positive_class_counts) < MIN_CLASS_CASES_TO_CHOOSE:
        return (1,)
    return MIN_SAMPLES_CANDIDATES


# `_fit_tree(counts_of=ALL_CASES)`: the counts of every case
ALL_CASES = slice(None)


def cases_choosing_node_size(y_encoded, n_classes, random_state):
    """Sorted indices of the cases whose OOB predictions choose the node size
    (None: all of them): up to OOB_CHOICE_MAX_CASES // n_classes of each class,
    drawn without replacement. The AUC compares classes pairwise, so keeping
    a rare class whole and thinning common ones leaves it unbiased."""
    per_class = OOB_CHOICE_MAX_CASES // n_classes
    members = [np.flatnonzero(y_encoded == k) for k in range(n_classes)]
    if all(m.size <= per_class for m in members):
        return None
    return np.sort(np.concatenate([
        m if m.size <= per_class
        else m[sample_without_replacement(m.size, per_class, random_state=random_state)]
        for m in members]))


# From this many classes `OutOfBagLeaves` can be chosen: at 20k rows x 20
# features and 20 trees it fitted in 1.02x the running sums' time at K = 64
# and faster at K = 256 (`python -m benchmarks.ab_checkouts`,
# benchmarks/results/speed_ii.md, fourth round).
LEAVES_MIN_CLASSES = 128


# Trees of many classes whose out-of-bag nodes `OutOfBagSums` gathers before
# adding them to the running sums row by row: each row's sums are then read
# once for these trees instead of once per tree. On the trees of 20k x 20
# fits the sums took 0.73-0.80x the time of one tree at a time at K = 32 and
# 64 and 0.87x at K = 16 with 4 (8: 0.67x at K = 32 but 0.82-0.86x at K = 64;
# 16: no faster than one at a time at K = 64) (benchmarks/results/speed_ii.md,
# seventh round).
SUMS_BATCH_TREES = 4


# Bytes `OutOfBagLeaves` keeps per tree and out-of-bag row, about: the node
# of each of the six candidates (int32), its tree's first node, the row and
# its place in the row order (intp). `OutOfBagSums` keeps 8 bytes per
# candidate, row and class.
LEAVES_BYTES_PER_ENTRY = 48


def out_of_bag_sums(X, n_classes, min_samples, n_estimators, rows=None):
    """The out-of-bag estimate of a fit, whichever takes less memory (the same
    sums to the bit): `OutOfBagLeaves` when every candidate's n x K sums
    would outweigh what it keeps per tree and out-of-bag row (many classes,
    few trees), `OutOfBagSums` otherwise. A row is out of bag in about
    e^-1 of the trees (Breiman's bootstrap). Below LEAVES_MIN_CLASSES the
    running sums are faster (they stay in cache while a tree is added)."""
    entries_per_row = np.exp(-1.0) * n_estimators
    if (n_classes >= LEAVES_MIN_CLASSES and
            8 * len(min_samples) * n_classes >= LEAVES_BYTES_PER_ENTRY * entries_per_row):
        return OutOfBagLeaves(X, n_classes, min_samples, rows)
    return OutOfBagSums(X, n_classes, min_samples, rows)


class _OutOfBag:
    """What both kinds of out-of-bag sums share: the rows they are over (all
    cases, or the given ``rows``), the candidate node sizes, trees per row."""

    def __init__(self, X, n_classes, min_samples, rows=None):
        self.rows = rows
        # X itself, or a copy of the choosing rows, in either memory order (the
        # walk follows the strides); a sparse X is walked by rows (CSR)
        if is_sparse(X):
            self.X = SparseRows(X if rows is None else X[rows])
        else:
            self.X = X if rows is None else X[rows]
        self.n_classes = n_classes
        self.min_samples = min_samples
        self._sizes = np.array(min_samples, dtype=np.int32)  # converted once, not per tree
        self.n_trees = np.zeros(self.X.shape[0])

    @property
    def cases(self):
        """The cases whose counts `add` takes (`_fit_tree`'s ``counts_of``)."""
        return ALL_CASES if self.rows is None else self.rows

    def labels(self, y):
        """y of the cases the sums are over."""
        return y if self.rows is None else y[self.rows]

    def warn_missing(self):
        """One warning when some case has no out-of-bag prediction (NaN)."""
        missing = self.n_trees == 0
        if missing.any():
            warnings.warn(
                f"Some inputs do not have OOB scores: {int(missing.sum())} of {missing.size} "
                "cases were in every tree's sample and have no out-of-bag prediction (NaN); "
                "use more trees.", UserWarning)

    def proba_with_oob(self, candidate, y_encoded):
        """`proba` of a candidate and y_encoded on the rows with an OOB
        prediction: what the OOB AUC and G-mean are over."""
        return rows_with_oob(self.proba(candidate), y_encoded)

    def _mean(self, sums):
        """sums divided in place by the trees per row (NaN rows without any)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.divide(sums, self.n_trees[:, None], out=sums)


class OutOfBagSums(_OutOfBag):
    """Running sums of out-of-bag class proportions, for each candidate node
    size to predict from, over all cases or the given ``rows``.

    Trees of few classes are added one at a time. Trees of many classes
    (grown with each node's classes present) are added SUMS_BATCH_TREES at a
    time, row by row, each row's trees in tree order: the same additions in
    the same order, so the sums are equal to the bit.
    """

    def __init__(self, X, n_classes, min_samples, rows=None):
        super().__init__(X, n_classes, min_samples, rows)
        self.proba_sum = np.zeros((len(min_samples), self.X.shape[0], n_classes))
        self._divided = [False] * len(min_samples)
        self._pending = []  # `oob_used_nodes` of trees not yet in the sums
        self._pending_lock = threading.Lock()  # the candidates' figures read in threads

    @classmethod
    def from_sums(cls, proba_sum, n_trees, min_samples):
        """Sums made elsewhere (the Dask fit's), shape (n_candidates, n, K)."""
        sums = cls.__new__(cls)
        sums.rows, sums.X, sums.min_samples = None, None, min_samples
        sums.n_classes = proba_sum.shape[2]
        sums.proba_sum, sums.n_trees = proba_sum, n_trees
        sums._divided = [False] * len(min_samples)
        sums._pending, sums._pending_lock = [], threading.Lock()
        return sums

    def add(self, tree_, counts):
        """Add the OOB proportions of a grown `Tree`, given its multiplicities of `cases`."""
        if self.n_classes <= GROWN_SPARSE_ABOVE_CLASSES:
            # one compiled call: a traversal per row serves every candidate node size
            accumulate_oob_proba(tree_, self.X, counts, self._sizes, self.proba_sum,
                                 self.n_trees)
            return
        found = oob_used_nodes(tree_, self.X, counts, self._sizes)
        self.n_trees[found[0]] += 1
        self._pending.append(found)
        if len(self._pending) == SUMS_BATCH_TREES:
            self._add_pending()

    def _add_pending(self):
        """Add the pending trees' proportions to every candidate's sums, once
        (the forest reads the candidates from several threads)."""
        with self._pending_lock:
            if self._pending:
                by_row = entries_by_row(self._pending, self.X.shape[0])
                for candidate in range(len(self.min_samples)):
                    oob_proba_sums_by_row(*by_row[:3], candidate, *by_row[3:],
                                          self.proba_sum[candidate], accumulate=True)
                self._pending = []

    def proba(self, candidate):
        """Mean OOB proportions of a candidate node size (NaN rows where no
        tree left the case out): a view of the sums, divided in place once."""
        self._add_pending()
        if not self._divided[candidate]:
            self._mean(self.proba_sum[candidate])
            self._divided[candidate] = True
        return self.proba_sum[candidate]

    def decision_function(self, candidate):
        """`proba` of a candidate as a new array."""
        return self.proba(candidate).copy()


class OutOfBagLeaves(_OutOfBag):
    """Out-of-bag class proportions of many classes, summed at the end.

    While a tree is in cache, the node each of its out-of-bag rows reaches at
    each candidate size and those nodes' nonzero proportions are kept
    (`oob_used_nodes`); `proba` then sums one candidate row by row
    (`oob_proba_sums_by_row`), in tree order, so that the sums are
    `OutOfBagSums`' to the bit while only the buffers in use are n x K.
    """

    def __init__(self, X, n_classes, min_samples, rows=None):
        super().__init__(X, n_classes, min_samples, rows)
        self._trees = []  # (rows, used, start, klass, share) of each tree
        self._by_row = None

    def add(self, tree_, counts):
        """Keep a grown `Tree`'s out-of-bag rows, their nodes and those nodes'
        proportions, given its multiplicities of `cases`."""
        found = oob_used_nodes(tree_, self.X, counts, self._sizes)
        self.n_trees[found[0]] += 1
        self._trees.append(found)
        self._by_row = None

    def _entries_by_row(self):
        """`entries_by_row` of every tree added, kept until the next tree."""
        if self._by_row is None:  # (a fit adds at least one tree)
            self._by_row = entries_by_row(self._trees, self.X.shape[0])
        return self._by_row

    def proba(self, candidate):
        """Mean OOB proportions of a candidate node size (NaN rows where no
        tree left the case out), a new n x K array."""
        out = np.empty((self.X.shape[0], self.n_classes))
        row_start, entry_first, used, start, klass, share = self._entries_by_row()
        oob_proba_sums_by_row(row_start, entry_first, used, candidate, start, klass, share, out)
        return self._mean(out)

    def decision_function(self, candidate):
        """`proba` of a candidate as a new array."""
        return self.proba(candidate)

    def proba_with_oob(self, candidate, y_encoded):
        """Mean OOB proportions of a candidate on the rows with an OOB
        prediction, as a CSR matrix of the nonzero ones
        (`oob_proba_means_sparse`: each is `proba`'s to the bit; at many
        classes most are 0), and y_encoded on those rows."""
        row_start, entry_first, used, start, klass, share = self._entries_by_row()
        indptr, indices, data = oob_proba_means_sparse(
            row_start, entry_first, used, candidate, start, klass, share, self.n_trees,
            self.n_classes)
        proba = csr_array((data, indices, indptr), shape=(self.X.shape[0], self.n_classes))
        has_oob = self.n_trees > 0
        if has_oob.all():
            return proba, y_encoded
        return proba[has_oob], y_encoded[has_oob]


def entries_by_row(trees, n_rows):
    """The arguments of `oob_proba_sums_by_row` but the candidate, from the
    `oob_used_nodes` of some trees (in tree order) over n_rows rows: every
    tree's entries ordered by row and within a row by tree, the nodes in use
    numbered one tree after the other."""
    rows, used, start, klass, share = ([found[i] for found in trees] for i in range(5))
    n_used = [s.shape[0] - 1 for s in start]
    n_shares = [k.shape[0] for k in klass]
    # tree t's nodes in use and proportions come after those of trees < t
    node_offset = np.cumsum([0] + n_used[:-1], dtype=np.intp)
    share_offset = np.cumsum([0] + n_shares, dtype=np.intp)
    node_start = np.concatenate(
        [s[:-1] + offset for s, offset in zip(start, share_offset)]
        + [share_offset[-1:]]).astype(np.intp)
    entry_first = np.repeat(node_offset, [r.shape[0] for r in rows])
    rows = np.concatenate(rows)
    order = np.argsort(rows, kind="stable")  # stable: tree order within a row
    row_start = np.zeros(n_rows + 1, dtype=np.intp)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=row_start[1:])
    return (row_start, np.ascontiguousarray(entry_first[order]),
            np.ascontiguousarray(np.concatenate(used)[order]), node_start,
            np.concatenate(klass), np.concatenate(share))


def oob_auc(y_encoded, proba, classes):
    """OOB AUC (Hand & Till for more than two classes) over the rows with OOB
    predictions; NaN when they hold fewer than two classes."""
    proba, codes = rows_with_oob(proba, y_encoded)
    return auc_of_rows(codes, proba, classes)


def auc_of_rows(codes, proba, classes):
    """`oob_auc` of rows that all have OOB predictions (proba dense or a
    scipy sparse matrix).

    The arrays are the forest's own, so the metrics' input checks are skipped
    (they cost more than the AUCs of the node-size choice) unless a class has
    no OOB case: multiclass_auc then leaves it out with a warning.
    """
    present = np.bincount(codes, minlength=classes.shape[0]) > 0
    if present.sum() < 2:
        return np.nan
    if issparse(proba) and (classes.shape[0] == 2 or not present.all()):
        proba = proba.toarray()
    if classes.shape[0] == 2:
        return mann_whitney_auc(codes == 1, proba[:, 1])
    if not present.all():
        return multiclass_auc(classes[codes], proba, labels=classes)
    return hand_till_auc(codes, proba)


def oob_gmean(y_encoded, proba, prior, rule, draw_weights=None):
    """OOB G-mean (geometric mean of the per-class recalls, over the classes
    with OOB cases) of the classes the `DecisionRule` ``rule`` predicts from the OOB
    probabilities (a cost-matrix decision from them under the training
    priors, given the forest's ``draw_weights``); NaN when fewer than two
    classes have OOB cases."""
    proba, codes = rows_with_oob(proba, y_encoded)
    return gmean_of_rows(codes, proba, prior, rule, draw_weights)


def gmean_of_rows(codes, proba, prior, rule, draw_weights=None):
    """`oob_gmean` of rows that all have OOB predictions (proba dense or a
    scipy sparse matrix)."""
    cases = np.bincount(codes, minlength=prior.shape[0])
    if np.count_nonzero(cases) < 2:
        return np.nan
    # no n x K temporaries under RFQ (`_rfq`)
    predicted = rule.apply(proba, prior, draw_weights)
    hits = np.bincount(codes, weights=predicted == codes, minlength=prior.shape[0])
    return _geometric_mean(hits[cases > 0] / cases[cases > 0])


def rows_with_oob(proba, y_encoded):
    """proba and y_encoded without the rows that have no OOB prediction (NaN),
    as given (no copy) when every row has one."""
    has_oob = ~np.isnan(proba[:, 0])
    if has_oob.all():
        return proba, y_encoded
    return proba[has_oob], y_encoded[has_oob]

