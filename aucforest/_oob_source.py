"""Where the out-of-bag predictions of a fitted forest's training rows come
from: kept by a fit in memory (``oob_decision_function_``), computed from the
training collections for a fit on dask collections (which keeps none of size
n: `AUCForestClassifier.oob_decision_function`). Used by the consumers of
those predictions (calibration, conformal sets, decision tuning, reports)."""
import numpy as np


def fitted_on_dask(forest):
    """Whether ``forest`` was fitted on dask collections: its trees drew their
    rows on the workers and it keeps no n-row ``oob_decision_function_``."""
    from ._dask_model import _DrawsOnWorkers  # imports no dask
    return isinstance(getattr(forest, "_case_draws", None), _DrawsOnWorkers)


def training_oob_proba(forest, consumer, X=None, y=None, sample_weight=None):
    """The out-of-bag class probabilities of a fitted forest's training rows,
    in memory, for ``consumer`` (the name its errors give).

    A fit in memory keeps them (``oob_decision_function_``; None when it
    has none). A fit on dask collections keeps none of size n: they are
    computed from the training collections ``X``, ``y`` and
    ``sample_weight`` with ``forest.oob_decision_function`` (n x K floats
    reach the client).

    Returns
    -------
    ndarray of shape (n_samples, n_classes) or None
        NaN rows for cases that every tree drew.

    Raises
    ------
    ValueError
        For a fit on dask collections without ``X`` and ``y`` (the message
        names ``oob_decision_function(X, y)``), or ``X`` given for a fit in
        memory.
    """
    if fitted_on_dask(forest):
        if X is None or y is None:
            raise ValueError(
                f"{consumer} needs the out-of-bag predictions of every training row; this "
                "forest was fitted on dask collections, which keep no oob_decision_function_: "
                "pass the training collections as X= and y= (and sample_weight=), from which "
                "forest.oob_decision_function(X, y, sample_weight) computes them")
        return np.asarray(forest.oob_decision_function(X, y, sample_weight).compute(),
                          dtype=np.float64)
    if X is not None:
        raise ValueError(f"{consumer}: X is for a forest fitted on dask collections (its "
                         "out-of-bag predictions are computed from it); this forest was "
                         "fitted in memory and keeps them in oob_decision_function_")
    return getattr(forest, "oob_decision_function_", None)
