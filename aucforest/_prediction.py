"""Prediction of a fitted forest from its model (the estimator's attribute dict,
read once so that a concurrent refit cannot mix two models): the mean of the
trees' leaf proportions, in threads over blocks of rows, and the decision rule
(a `aucforest._decision_rule.DecisionRule`) applied to them."""
import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from ._tree import accumulate_proba


def mean_tree_proba(X, model, n_jobs):
    """Mean leaf class proportions of the model's trees, one block of rows per thread.

    The compiled loop checks every tree against X and n_classes, and stops
    between trees when ``stop`` is set (Ctrl-C while the threads run) or, in
    the main thread, when a signal arrives.
    """
    n_blocks = max(1, min(effective_n_jobs(n_jobs), X.shape[0]))
    bounds = np.linspace(0, X.shape[0], n_blocks + 1).astype(int)
    trees = [estimator.tree_ for estimator in model["estimators_"]]
    n_classes = model["classes_"].shape[0]
    stop = np.zeros(1, dtype=np.uint8)
    try:
        # threads over the shared model, whatever joblib backend is active
        blocks = Parallel(n_jobs=n_blocks, require="sharedmem")(
            delayed(_predict_block)(X[lo:hi], trees, n_classes, stop)
            for lo, hi in zip(bounds[:-1], bounds[1:]))
    except BaseException:
        stop[0] = 1  # the worker threads return at their next tree
        raise
    return np.concatenate(blocks) / len(trees)


def _predict_block(X, trees, n_classes, stop):
    """Sum over trees of the leaf class proportions for the rows of X."""
    proba = np.zeros((X.shape[0], n_classes))
    accumulate_proba(X, trees, proba, stop)
    return proba


def decide_classes(proba, model, rule):
    """Classes predicted from proba under the `DecisionRule` ``rule``, with the
    model's classes, prior and draw weights (a cost matrix decides under the
    training priors)."""
    return model["classes_"][rule.apply(proba, model["class_prior_"],
                                        model.get("draw_class_weights_"))]
