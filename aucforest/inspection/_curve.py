"""Out-of-bag score against the number of trees."""
import numpy as np

from ._case_draws import OutOfBag, snapshot
from ._scoring import make_scorer, score_or_nan


def oob_curve(forest, X, y, *, scoring="auc"):
    """Out-of-bag score of the first 1, 2, ..., n_estimators trees.

    One pass over the trees with running sums of each case's OOB class
    proportions; after t trees the score is computed on the cases that at
    least one of them left out. A curve still rising at the end says more
    trees would help. With ``scoring="auc"`` the last value is the forest's
    ``oob_score_``.

    Parameters
    ----------
    forest : fitted AUCForestClassifier
        Fitted with ``bootstrap=True``.
    X, y : array-like
        The training data, rows in the order of the fit.
    scoring : {"auc", "gmean", "brier", "balanced_accuracy"} or callable, default="auc"
        As in `oob_importance` ("brier" gives minus the Brier score).

    Returns
    -------
    ndarray of shape (n_estimators,)
        Entry t - 1 is the OOB score of the first t trees (NaN while the
        cases left out hold fewer than two classes).
    """
    forest = snapshot(forest)  # one model throughout, whatever refits it meanwhile
    scorer = make_scorer(scoring, forest)
    oob = OutOfBag(forest, X, y)
    total = np.zeros((oob.y.shape[0], oob.n_classes))
    n_trees = np.zeros(oob.y.shape[0])
    scores = np.empty(len(oob.trees))
    for t, tree in enumerate(oob.trees):
        total[tree.rows] += tree.proba(tree.leaves)
        n_trees[tree.rows] += 1
        has_oob = n_trees > 0
        scores[t] = score_or_nan(scorer, oob.y[has_oob], total[has_oob] / n_trees[has_oob, None])
    return scores
