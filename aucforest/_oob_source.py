"""Where the out-of-bag predictions of a fitted forest's training rows come from.

One interface, `OutOfBagSource`, with a variant per kind of fit, kept by the
forest (``_oob_source``, set by the fit or the model file that made it):

* `KeptInMemory`: a fit in memory with ``oob_score=True`` (or a model file of
  one) keeps them, ``oob_decision_function_``;
* `NotKept`: a fit in memory without ``oob_score`` keeps none;
* `OnWorkers`: a fit on dask collections keeps none of size n (they would keep
  the rows on the workers): they are computed from the training collections
  where the rows are (`AUCForestClassifier.oob_decision_function`), and
  ``oob_score_`` / ``oob_gmean_`` come from a bounded sample of rows. Read
  from a model file it keeps no draws to compute them again.

The consumers of those predictions (calibration, conformal sets, decision
tuning, the reports, the command line) ask `oob_source(forest)` and get the
predictions, or a message that says what to do for that kind of fit.
"""
import numpy as np

__all__ = ["KeptInMemory", "NotKept", "OnWorkers", "OutOfBagSource", "fitted_on_dask",
           "oob_source", "training_oob_proba"]


class OutOfBagSource:
    """Where a fitted forest's out-of-bag (OOB) predictions come from.

    Attributes
    ----------
    on_workers : bool
        The forest was fitted on dask collections.
    """

    on_workers = False

    def training_proba(self, forest, consumer, X=None, y=None, sample_weight=None):
        """The OOB class probabilities of the training rows, in memory.

        Parameters
        ----------
        forest : fitted AUCForestClassifier
        consumer : str
            What asks (the messages name it).
        X, y, sample_weight : dask collections, default=None
            The training collections of a fit on dask collections.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            NaN rows for cases that every tree drew.

        Raises
        ------
        ValueError
            Saying what to do for this kind of fit.
        """
        raise NotImplementedError

    def scored_rows(self, forest):
        """(class indices, OOB probabilities) of the rows ``oob_score_`` and
        ``oob_gmean_`` are computed on, or None (no OOB estimates). Class
        indices are None for a model file written without them."""
        return None

    def _refuse_training_X(self, consumer, X):
        if X is not None:
            raise ValueError(f"{consumer}: X is for a forest fitted on dask collections (its "
                             "out-of-bag predictions are computed from it); this forest was "
                             "fitted in memory and keeps them in oob_decision_function_")


class KeptInMemory(OutOfBagSource):
    """A fit in memory with ``oob_score=True``: ``oob_decision_function_``
    and ``oob_labels_`` (None from a file written without them, whose OOB
    G-mean is then the one saved, ``saved_gmean``)."""

    def __init__(self, saved_gmean=None):
        self.saved_gmean = saved_gmean

    def training_proba(self, forest, consumer, X=None, y=None, sample_weight=None):
        self._refuse_training_X(consumer, X)
        return forest.oob_decision_function_

    def scored_rows(self, forest):
        return forest.oob_labels_, forest.oob_decision_function_


class NotKept(OutOfBagSource):
    """A fit in memory without ``oob_score``: no OOB predictions."""

    def training_proba(self, forest, consumer, X=None, y=None, sample_weight=None):
        self._refuse_training_X(consumer, X)
        raise ValueError(f"{consumer} needs the out-of-bag predictions of the forest's "
                         f"training rows; this {type(forest).__name__} was fitted without "
                         "them: fit it with oob_score=True")


class OnWorkers(OutOfBagSource):
    """A fit on dask collections.

    Parameters
    ----------
    sample : tuple (class indices, probabilities) or None
        The bounded sample of rows ``oob_score_`` is computed on (None
        without ``oob_score``).
    loaded : bool
        Read from a model file, which keeps no draws: the n-row predictions
        cannot be computed again.
    """

    on_workers = True

    def __init__(self, sample=None, loaded=False):
        self.sample, self.loaded = sample, loaded

    def training_proba(self, forest, consumer, X=None, y=None, sample_weight=None):
        if self.loaded:
            raise ValueError(
                f"{consumer} needs the out-of-bag predictions of every training row; this "
                "forest was fitted on dask collections and read from a model file, which keeps "
                "no draws to compute them again: use the forest as fitted (its "
                "oob_decision_function(X, y, sample_weight)), or fit the consumer on the dask "
                "collections")
        if X is None or y is None:
            raise ValueError(
                f"{consumer} needs the out-of-bag predictions of every training row; this "
                "forest was fitted on dask collections, which keep no oob_decision_function_: "
                "pass the training collections as X= and y= (and sample_weight=), from which "
                "forest.oob_decision_function(X, y, sample_weight) computes them")
        return np.asarray(forest.oob_decision_function(X, y, sample_weight).compute(),
                          dtype=np.float64)

    def scored_rows(self, forest):
        return self.sample


def oob_source(forest):
    """The `OutOfBagSource` of a fitted forest; for another library's forest,
    `KeptInMemory` when it has ``oob_decision_function_``, `NotKept` otherwise."""
    source = vars(forest).get("_oob_source")
    if source is not None:
        return source
    if getattr(forest, "oob_decision_function_", None) is not None:
        return KeptInMemory()
    return NotKept()


def fitted_on_dask(forest):
    """Whether ``forest`` was fitted on dask collections: its trees drew their
    rows on the workers and it keeps no n-row ``oob_decision_function_``."""
    return oob_source(forest).on_workers


def training_oob_proba(forest, consumer, X=None, y=None, sample_weight=None):
    """`OutOfBagSource.training_proba` of the forest's source: the OOB class
    probabilities of its training rows, or ValueError saying what to do."""
    return oob_source(forest).training_proba(forest, consumer, X, y, sample_weight)
