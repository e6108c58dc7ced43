"""What the estimators fitted on a forest's out-of-bag predictions share.

`aucforest.calibration.OOBCalibratedClassifier` and
`aucforest.conformal.MondrianConformalClassifier` fit a forest once with
``oob_score=True`` and then fit something on its out-of-bag (OOB) class
probabilities of the training cases, without a refit. `OOBForestWrapper` holds
that once: the forest (``estimator``, default ``AUCForestClassifier()``), its
fit, where its OOB probabilities come from (kept by a fit in memory, computed
from the training collections for a fit on dask collections:
`aucforest._oob_source`), `calibrate` on a forest fitted already, the
attributes taken over from the forest, published in one step with the
subclass's own, and the input tags. A subclass says which forests it accepts
(``_check_forest``) and what it fits on the OOB probabilities (``_oob_state``).
"""
import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ._compat import check_sample_weight, fit_context, in_memory
from ._forest import AUCForestClassifier
from ._oob_source import fitted_on_dask, training_oob_proba

__all__ = ["OOBForestWrapper"]


class OOBForestWrapper(MetaEstimatorMixin, BaseEstimator):
    """Base of the estimators fitted on the out-of-bag predictions of a forest.

    Subclasses take the forest as their ``estimator`` parameter and implement
    ``_check_forest(forest)`` (raise for a forest they cannot use) and
    ``_oob_state(forest, y, oob, sample_weight)`` (their fitted attributes, as
    a dict, from the training labels and the OOB probabilities); their
    ``fit`` calls ``_fit_forest_and_oob``.
    """

    def _forest(self):
        """The forest to fit: ``estimator``, or ``AUCForestClassifier()`` when None."""
        return AUCForestClassifier() if self.estimator is None else self.estimator

    def _check_forest(self, forest):
        """Raise if ``forest`` (an unfitted clone) cannot give OOB predictions."""

    def _oob_state(self, forest, y, oob, sample_weight):
        """The subclass's fitted attributes (name -> value) from the fitted
        ``forest``, the labels ``y``, its OOB probabilities ``oob`` (n x K,
        NaN rows for cases without one) and the checked ``sample_weight``."""
        raise NotImplementedError

    def _fit_forest_and_oob(self, X, y, sample_weight=None):
        """Fit a clone of the forest with ``oob_score=True``, then the subclass
        on its OOB probabilities (`fit`)."""
        forest = clone(self._forest())
        self._check_forest(forest)
        forest.set_params(oob_score=True)
        if sample_weight is None:
            forest.fit(X, y)
        else:
            forest.fit(X, y, sample_weight=sample_weight)
        # a fit on dask collections keeps no n-row oob_decision_function_: computed
        # from the training collections (n x K floats reach the client)
        training_X = X if fitted_on_dask(forest) else None
        # the forest checked (and warned about) the shape of y
        return self._fit_on_oob(forest, training_X, y, sample_weight, warn=False)

    @fit_context(prefer_skip_nested_validation=False)
    def calibrate(self, y, sample_weight=None, *, X=None):
        """Fit on the out-of-bag predictions of ``estimator``, fitted already.

        The second half of ``fit``, for a forest fitted with
        ``oob_score=True`` elsewhere (or read from a model file): it is not
        fitted again nor cloned, and becomes ``estimator_``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            The labels the forest was fitted on.
        sample_weight : array-like of shape (n_samples,), default=None
            The case weights it was fitted with.
        X : dask array or DataFrame, default=None
            The training rows of a forest fitted on dask collections (``y``
            and ``sample_weight`` then the dask collections it was fitted
            on): its out-of-bag predictions are computed from them
            (``oob_decision_function(X, y, sample_weight)``). None for a
            forest fitted in memory, which keeps them.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        forest = self.estimator
        if forest is None:
            raise ValueError(f"{type(self).__name__}.calibrate needs a fitted forest as "
                             f"estimator; fit fits one")
        check_is_fitted(forest)
        return self._fit_on_oob(forest, X, y, sample_weight, warn=True)

    def _fit_on_oob(self, forest, X, y, sample_weight, warn):
        """Fit the subclass on the OOB probabilities of the fitted ``forest``
        (from its `aucforest._oob_source.OutOfBagSource`) and publish it."""
        name = type(self).__name__
        oob = training_oob_proba(forest, name, X, y, sample_weight)
        y = column_or_1d(in_memory(y), warn=warn)
        if sample_weight is not None:
            sample_weight = check_sample_weight(in_memory(sample_weight), y)
        oob = np.asarray(oob, dtype=np.float64)
        if oob.shape != (y.shape[0], forest.classes_.shape[0]):
            raise ValueError(f"{name}: the forest's out-of-bag predictions have shape "
                             f"{oob.shape}, not one row per label of y ({y.shape[0]}) and "
                             f"one column per class ({forest.classes_.shape[0]})")
        return self._publish(forest, self._oob_state(forest, y, oob, sample_weight))

    def _publish(self, forest, state):
        """Set the fitted attributes in one step: ``estimator_`` (the fitted
        ``forest``) and those taken over from it, and the subclass's ``state``."""
        fitted = {"estimator_": forest, "classes_": forest.classes_,
                  "n_features_in_": forest.n_features_in_, **state}
        names = getattr(forest, "feature_names_in_", None)
        if names is not None:
            fitted["feature_names_in_"] = names
        elif hasattr(self, "feature_names_in_"):  # from an earlier fit on a DataFrame
            del self.feature_names_in_
        for attribute, value in fitted.items():
            setattr(self, attribute, value)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        forest_tags = get_tags(self._forest())
        tags.input_tags.allow_nan = forest_tags.input_tags.allow_nan
        tags.input_tags.sparse = forest_tags.input_tags.sparse
        tags.input_tags.categorical = forest_tags.input_tags.categorical
        return tags
