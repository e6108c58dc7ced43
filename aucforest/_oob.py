"""Out-of-bag estimates of a fit: running sums per candidate node size, the OOB
AUC and G-mean, and the cases that choose the node size."""
import warnings

import numpy as np
from sklearn.utils.random import sample_without_replacement

from ._decision import decide
from ._sparse import SparseRows, is_sparse
from ._tree import accumulate_oob_proba
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


class OutOfBagSums:
    """Running sums of out-of-bag class proportions, one tree at a time, for each
    candidate node size to predict from, over all cases or the given ``rows``."""

    def __init__(self, X, n_classes, min_samples, rows=None):
        self.rows = rows
        # X itself, or a copy of the choosing rows, in either memory order (the
        # walk follows the strides); a sparse X is walked by rows (CSR)
        if is_sparse(X):
            self.X = SparseRows(X if rows is None else X[rows])
        else:
            self.X = X if rows is None else X[rows]
        self.min_samples = min_samples
        self._sizes = np.array(min_samples, dtype=np.int32)  # converted once, not per tree
        self.proba_sum = np.zeros((len(min_samples), self.X.shape[0], n_classes))
        self.n_trees = np.zeros(self.X.shape[0])

    @property
    def cases(self):
        """The cases whose counts `add` takes (`_fit_tree`'s ``counts_of``)."""
        return ALL_CASES if self.rows is None else self.rows

    def labels(self, y):
        """y of the cases the sums are over."""
        return y if self.rows is None else y[self.rows]

    def add(self, tree_, counts):
        """Add the OOB proportions of a grown `Tree`, given its multiplicities of `cases`."""
        # one compiled call: a traversal per row serves every candidate node size
        accumulate_oob_proba(tree_, self.X, counts, self._sizes, self.proba_sum,
                             self.n_trees)

    def decision_functions(self, warn_missing):
        """Mean OOB proportions for each node size (views of the sums, divided in
        place: call once); NaN rows (with one warning when `warn_missing`) where
        no tree left the case out."""
        missing = self.n_trees == 0
        if warn_missing and missing.any():
            warnings.warn(
                f"Some inputs do not have OOB scores: {int(missing.sum())} of {missing.size} "
                "cases were in every tree's sample and have no out-of-bag prediction (NaN); "
                "use more trees.", UserWarning)
        with np.errstate(invalid="ignore", divide="ignore"):  # in place: no second copy
            np.divide(self.proba_sum, self.n_trees[:, None], out=self.proba_sum)
        return list(self.proba_sum)


def oob_auc(y_encoded, proba, classes):
    """OOB AUC (Hand & Till for more than two classes) over the rows with OOB
    predictions; NaN when they hold fewer than two classes.

    The arrays are the forest's own, so the metrics' input checks are skipped
    (they cost more than the AUCs of the node-size choice) unless a class has
    no OOB case: multiclass_auc then leaves it out with a warning.
    """
    proba, codes = rows_with_oob(proba, y_encoded)
    present = np.bincount(codes, minlength=classes.shape[0]) > 0
    if present.sum() < 2:
        return np.nan
    if classes.shape[0] == 2:
        return mann_whitney_auc(codes == 1, proba[:, 1])
    if not present.all():
        return multiclass_auc(classes[codes], proba, labels=classes)
    return hand_till_auc(codes, proba)


def oob_gmean(y_encoded, proba, prior, decision):
    """OOB G-mean (geometric mean of the per-class recalls, over the classes
    with OOB cases) of the classes `decide` predicts from the OOB
    probabilities; NaN when fewer than two classes have OOB cases."""
    proba, codes = rows_with_oob(proba, y_encoded)
    cases = np.bincount(codes, minlength=prior.shape[0])
    if np.count_nonzero(cases) < 2:
        return np.nan
    predicted = decide(proba, prior, decision)  # no n x K temporaries (`_rfq`)
    hits = np.bincount(codes, weights=predicted == codes, minlength=prior.shape[0])
    return _geometric_mean(hits[cases > 0] / cases[cases > 0])


def rows_with_oob(proba, y_encoded):
    """proba and y_encoded without the rows that have no OOB prediction (NaN),
    as given (no copy) when every row has one."""
    has_oob = ~np.isnan(proba[:, 0])
    if has_oob.all():
        return proba, y_encoded
    return proba[has_oob], y_encoded[has_oob]
