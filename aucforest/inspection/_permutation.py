"""Ensemble out-of-bag permutation importance (Breiman-Cutler VIMP)."""
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils import Bunch, check_random_state

from .._base import MAX_SEED
from ._case_draws import OutOfBag, snapshot
from ._scoring import make_scorer, per_class_auc, score_or_nan


def oob_importance(forest, X, y, *, scoring="auc", n_repeats=1, random_state=None,
                   n_jobs=None, groups=None):
    """Out-of-bag permutation importance of each feature or group, at the ensemble level.

    For each tree, feature j is permuted among the tree's out-of-bag (OOB)
    cases and those cases are sent down the tree; the permuted predictions,
    averaged over the trees that left each case out, form the permuted OOB
    ensemble. Then

        VIMP_j = score(OOB ensemble) - score(permuted OOB ensemble),

    Breiman's permutation importance as randomForestSRC computes it
    (``importance="permute"``, ensemble form; Ishwaran & Lu 2019). Larger
    means more important; near 0, or below, means the forest does not use
    the feature's information. No tree is refitted, and X is not copied per
    feature: only the OOB rows of one tree whose path splits on the feature
    are copied and sent down again (the others keep their leaf).

    Parameters
    ----------
    forest : fitted AUCForestClassifier
        Fitted with ``bootstrap=True``.
    X : array-like of shape (n_samples, n_features)
        The training features, rows in the order of the fit.
    y : array-like of shape (n_samples,)
        The training labels.
    scoring : {"auc", "gmean", "brier", "balanced_accuracy"} or callable, default="auc"
        "auc": binary AUC (two classes) or Hand & Till's multiclass AUC;
        "gmean" and "balanced_accuracy": of the forest's decisions
        (``decision``); "brier": VIMP is the increase of the multiclass Brier
        score; a callable ``(y_true, proba) -> float``, larger meaning
        better, ``proba`` columns following ``classes_``.
    n_repeats : int, default=1
        Permutations per feature.
    random_state : int, RandomState instance or None, default=None
        Draws the permutations (the result does not depend on ``n_jobs``).
    n_jobs : int or None, default=None
        Threads, one feature at a time each.
    groups : dict of str to list of int, default=None
        Importance of groups of columns instead of single features: each
        group's columns (indices into X) are permuted together, the rows'
        values moving jointly (one permutation per tree, as for one feature),
        e.g. the one-hot columns of one user column. None: every feature
        alone.

    Returns
    -------
    Bunch
        ``importances`` (n_features, n_repeats), or (n_groups, n_repeats) in
        the order of ``groups``: VIMP of each repeat;
        ``importances_mean``, ``importances_std`` over the repeats (as
        scikit-learn's ``permutation_importance``); ``per_class``
        (n_features, n_classes): drop of each class's one-vs-rest OOB AUC,
        mean over the repeats (NaN for a class with no OOB case); ``score``:
        the unpermuted OOB score; with ``groups``, ``groups``: their names.

    Notes
    -----
    Permutations: ``random_state`` draws one seed per feature j and repeat
    r (``randint(2**31 - 1, size=(n_features, n_repeats))``);
    ``numpy.random.default_rng(seed).integers(2**63, size=n_trees)`` gives one
    seed per tree, from which a compiled Fisher-Yates shuffle (SplitMix64,
    ``aucforest.inspection._permute.random_permutation``) permutes the tree's
    OOB rows, taken in increasing order. A group uses the seeds of its first
    column, so a group of one column gives exactly that feature's importance.
    """
    if not isinstance(n_repeats, Integral) or n_repeats < 1:
        raise ValueError(f"n_repeats must be a positive integer, got {n_repeats!r}")
    forest = snapshot(forest)  # one model throughout, whatever refits it meanwhile
    scorer = make_scorer(scoring, forest)
    oob = OutOfBag(forest, X, y, n_jobs=n_jobs)
    n_features = oob.X.shape[1]
    seeds = check_random_state(random_state).randint(MAX_SEED, size=(n_features, n_repeats))
    columns = [[j] for j in range(n_features)] if groups is None else \
        _checked_groups(groups, n_features)
    y_oob = oob.y[oob.has_oob]
    proba = oob.ensemble(oob.proba_sum())
    score = score_or_nan(scorer, y_oob, proba)
    class_scores = per_class_auc(y_oob, proba, forest.classes_)
    results = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_feature_importance)(oob, group, seeds[group[0]], scorer, score, class_scores)
        for group in columns)
    importances = np.array([result[0] for result in results])
    result = Bunch(importances_mean=importances.mean(axis=1),
                   importances_std=importances.std(axis=1),
                   importances=importances,
                   per_class=np.array([result[1] for result in results]),
                   score=score)
    if groups is not None:
        result.groups = list(groups)
    return result


def _checked_groups(groups, n_features):
    """The column lists of ``groups``, checked: ValueError naming a bad group."""
    if not isinstance(groups, dict) or not groups:
        raise ValueError(f"groups must be a non-empty dict of name to column indices, got "
                         f"{groups!r:.80}")
    columns = []
    for name, members in groups.items():
        members = list(members) if np.ndim(members) == 1 else None
        if not members or not all(isinstance(j, Integral) and 0 <= j < n_features
                                  for j in members) or len(set(members)) < len(members):
            raise ValueError(f"group {name!r} must list distinct column indices in "
                             f"[0, {n_features}), got {groups[name]!r:.80}")
        columns.append([int(j) for j in members])
    return columns


def _feature_importance(oob, features, seeds, scorer, score, class_scores):
    """VIMP of one feature (or group of features, permuted together) for each
    repeat, and its mean per-class AUC drop."""
    y_oob = oob.y[oob.has_oob]
    drops, class_drops = [], []
    for seed in seeds:
        tree_seeds = np.random.default_rng(seed).integers(2 ** 63, size=len(oob.trees))
        proba = oob.ensemble(permuted_proba_sum(oob, features, tree_seeds))
        drops.append(score - score_or_nan(scorer, y_oob, proba))
        class_drops.append(class_scores - per_class_auc(y_oob, proba, oob.forest.classes_))
    return np.array(drops), np.mean(class_drops, axis=0)


def permuted_proba_sum(oob, features, tree_seeds):
    """Sum over trees of the OOB class proportions with the columns
    ``features`` (an int or a list) permuted together among each tree's OOB
    rows (tree t's permutation drawn from ``tree_seeds[t]``): one column by the
    compiled kernel, several by copies of the rows."""
    total = np.zeros((oob.y.shape[0], oob.n_classes))
    features = [features] if isinstance(features, Integral) else list(features)
    for tree, seed in zip(oob.trees, tree_seeds):
        if len(features) == 1:
            tree.add_permuted(oob.X, features[0], seed, total)
        else:
            tree.add_permuted_jointly(oob.X, features, seed, total)
    return total
