"""Each tree's out-of-bag cases of the training data, and the ensemble they form.

A forest does not store which cases each tree drew: the draws are
regenerated from the trees' seeds (`AUCForestClassifier.estimators_samples_`),
and the training X, y are passed again by the user.
"""
import numpy as np
from joblib import Parallel, delayed
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from .._base import trees_per_task
from .._forest import AUCForestClassifier
from .._sampling import CaseDraws
from ._permute import add_permuted_oob, random_permutation


class OutOfBagTree:
    """One tree's out-of-bag rows, the leaves they fall in (``Tree.apply``),
    and its node arrays."""

    def __init__(self, tree_, rows, X):
        self.rows = rows
        self.leaves = tree_.apply(X[rows]) if rows.size else np.empty(0, dtype=np.intp)
        self.tree_ = tree_

    def proba(self, leaves):
        """Class proportions of the given leaves (``Tree.predict_proba``'s values)."""
        return self.tree_.proba[leaves]

    def add_permuted(self, X, feature, seed, out):
        """Add to ``out[rows]`` the class proportions of the OOB rows with column
        ``feature`` replaced by ``X[rows[permutation], feature]``, ``permutation =
        random_permutation(rows.size, seed)`` (`aucforest.inspection._permute`): what
        ``Tree.predict_proba`` gives for such a copy of the rows, without the copy
        (compiled; a row is sent down again only from a split on ``feature`` where
        its permuted value turns away from its path)."""
        if self.rows.size:
            add_permuted_oob(X, self.rows, self.leaves, seed, feature, self.tree_, out)

    def add_permuted_jointly(self, X, features, seed, out):
        """Add to ``out[rows]`` the class proportions of the OOB rows with the
        columns ``features`` replaced together by ``X[rows[permutation]][:, features]``
        (the same ``permutation`` as `add_permuted`, so one column gives its
        result): a copy of the OOB rows sent down the tree from the root."""
        if self.rows.size:
            permuted = X[self.rows]
            source = self.rows[random_permutation(self.rows.size, seed)]
            permuted[:, features] = X[np.ix_(source, features)]
            out[self.rows] += self.tree_.proba[self.tree_.apply(permuted)]


class OutOfBag:
    """The training data, each tree's out-of-bag rows and the OOB ensemble.

    Parameters
    ----------
    forest : AUCForestClassifier
        Fitted with ``bootstrap=True``. One snapshot of it is read
        (`snapshot`), kept as ``self.forest``: X, y, the draws and the trees
        all come from that one model, whatever refits it meanwhile.
    X, y : the forest's training data, rows in the order of the fit.
    n_jobs : int or None
        Threads used to send each tree's OOB rows down the tree.
    """

    def __init__(self, forest, X, y, n_jobs=None):
        forest = snapshot(forest)
        if not forest.bootstrap:
            raise ValueError("out-of-bag quantities need a forest fitted with bootstrap=True "
                             "(every tree saw every case)")
        self.forest = forest
        # float32, C order: rows gather contiguously; columns are permuted in place,
        # so a sparse X is refused (scikit-learn's TypeError says to call toarray)
        self.X = forest._validate_X_predict(X, accept_sparse=False)
        self.y = column_or_1d(y, warn=True)
        check_consistent_length(self.X, self.y)
        self.y_encoded = _encode(self.y, forest.classes_)
        draws = case_draws(forest, self.y_encoded)
        batch = trees_per_task(self.X.shape[0], len(forest.estimators_), n_jobs)
        trees = Parallel(n_jobs=n_jobs, prefer="threads", batch_size=batch)(
            delayed(_tree_out_of_bag)(tree, draws, self.X)
            for tree in forest.estimators_)
        self.trees = trees
        self.n_trees = np.zeros(self.y.shape[0])
        for tree in trees:
            self.n_trees[tree.rows] += 1
        self.has_oob = self.n_trees > 0

    @property
    def n_classes(self):
        return self.forest.classes_.shape[0]

    def proba_sum(self):
        """Sum over trees of the OOB class proportions, added in tree order (as the fit does)."""
        total = np.zeros((self.y.shape[0], self.n_classes))
        for tree in self.trees:
            total[tree.rows] += tree.proba(tree.leaves)
        return total

    def ensemble(self, proba_sum):
        """Mean OOB proportions of the rows that have at least one OOB tree."""
        return proba_sum[self.has_oob] / self.n_trees[self.has_oob, None]


def snapshot(forest):
    """The fitted forest as it is now (its `_frozen` copy: no refit or set_params
    in another thread reaches it); TypeError for anything but an
    AUCForestClassifier, NotFittedError for an unfitted one."""
    if not isinstance(forest, AUCForestClassifier):
        raise TypeError(f"forest must be a fitted AUCForestClassifier, got "
                        f"{type(forest).__name__}")
    forest = forest._frozen()
    check_is_fitted(forest)
    return forest


def _tree_out_of_bag(tree, draws, X):
    counts = draws.counts(draws.tree_rng(tree))
    return OutOfBagTree(tree.tree_, np.flatnonzero(counts == 0), X)


def case_draws(forest, y_encoded):
    """How the forest's trees drew their cases, checked against the y passed in.

    The fit keeps its draws (``_case_draws``); a forest read from a model file
    rebuilds them from y and its parameters, assuming every case had a
    positive sample weight.
    """
    n_samples = y_encoded.shape[0]
    draws = getattr(forest, "_case_draws", None)
    if draws is None:
        fitted_rows = getattr(forest, "oob_decision_function_", None)
        if fitted_rows is not None and fitted_rows.shape[0] != n_samples:
            raise ValueError(_not_training_data(n_samples, fitted_rows.shape[0]))
        return CaseDraws(forest, y_encoded, np.ones(n_samples))
    if draws.n_samples != n_samples:
        raise ValueError(_not_training_data(n_samples, draws.n_samples))
    if draws.class_members is not None:
        classes_of_members = [np.unique(y_encoded[members]) for members in draws.class_members]
        if any(found.size != 1 for found in classes_of_members):
            raise ValueError("y is not the forest's training y (its classes sit at other rows); "
                             "out-of-bag quantities need the training data in the fit's order")
    return draws


def _not_training_data(n_given, n_fitted):
    return (f"X, y have {n_given} rows but the forest was fitted on {n_fitted}; out-of-bag "
            "quantities need the training data, in the order of the fit")


def _encode(y, classes):
    """Index of each label in ``classes``; ValueError for labels the forest never saw."""
    unknown = np.setdiff1d(y, classes)
    if unknown.size:
        raise ValueError(f"y holds labels the forest was not fitted on: "
                         f"{', '.join(repr(v) for v in unknown[:5].tolist())}")
    return np.searchsorted(classes, y)
