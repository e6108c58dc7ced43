"""What ``fit --calibrate`` and ``predict --sets`` add, from the out-of-bag
predictions a model file already holds (``oob_decision_function`` and
``oob_labels``): no refit of the forest.

``fit --calibrate METHOD`` fits the map that
`aucforest.calibration.OOBCalibratedClassifier` fits in Python on the same
data and stores it in the file's ``extra`` data, as numbers
(``extra["calibration"]``, `aucforest._calibration_state`) beside the method's
name (``extra["calibrate"]``); ``predict`` and ``evaluate`` apply the stored
map without fitting anything. A file written before the map was stored holds
only the name: its map is fitted again from the out-of-bag predictions. The
conformal calibration scores are read from those predictions directly.
"""
import numpy as np

from .._calibration_state import calibration_from_plain, calibration_to_plain
from .._oob_source import fitted_on_dask
from ..calibration import OOBCalibratedClassifier
from ..conformal import mondrian_p_values

CALIBRATION_METHODS = ("isotonic", "sigmoid", "venn_abers")
SET_SEPARATOR = "|"


def _oob_labels(forest, path, option):
    """The training labels' class indices and OOB probabilities stored with a model."""
    if fitted_on_dask(forest):
        raise ValueError(f"{option} needs the out-of-bag predictions of every training row; "
                         f"{path} holds a forest fitted on dask collections, which keeps no "
                         f"oob_decision_function_ (and a model file keeps no draws to compute "
                         f"it again with forest.oob_decision_function(X, y)): fit the model "
                         f"with 'aucforest fit', or in Python fit OOBCalibratedClassifier or "
                         f"MondrianConformalClassifier on the dask collections")
    oob = getattr(forest, "oob_decision_function_", None)
    codes = getattr(forest, "oob_labels_", None)
    if oob is None or codes is None:
        raise ValueError(f"{option} needs the out-of-bag predictions and training labels of "
                         f"the model; {path} has none (saved from Python without "
                         f"oob_score=True, or by an older version): refit it with "
                         f"'aucforest fit'")
    return np.asarray(oob, dtype=np.float64), np.asarray(codes, dtype=np.intp)


def calibrated_model(forest, method, path, stored=None):
    """An `OOBCalibratedClassifier` around the fitted ``forest``: with the maps
    ``stored`` in the model file (`calibration_to_plain`), or, when None (a file
    written before the maps were stored), with maps fitted again on the
    forest's stored out-of-bag predictions (unweighted: such files were
    written without case weights), as its ``fit`` would after fitting the
    forest."""
    if method not in CALIBRATION_METHODS:
        raise ValueError(f"{path}: unknown calibration method {method!r} (expected one of "
                         f"{', '.join(CALIBRATION_METHODS)})")
    if stored is not None:
        stored_method = stored.get("method") if isinstance(stored, dict) else None
        if stored_method != method:
            raise ValueError(f"{path}: the stored calibration map is {stored_method!r} but the "
                             f"model says it was calibrated with {method!r}")
        try:
            return calibration_from_plain(forest, stored)
        except ValueError as error:
            raise ValueError(f"{path}: invalid stored calibration: {error}") from None
    oob, codes = _oob_labels(forest, path, "--calibrate")
    model = OOBCalibratedClassifier(forest, method=method)
    return model._calibrate(forest, forest.classes_[codes], oob)


def fitted_calibration(forest, method, y, sample_weight=None):
    """The maps of ``OOBCalibratedClassifier(forest, method=method)`` fitted on the
    out-of-bag predictions of the ``forest`` just fitted on labels ``y`` with
    ``sample_weight``, as its ``fit`` fits them."""
    model = OOBCalibratedClassifier(forest, method=method)
    return model._calibrate(forest, np.asarray(y), forest.oob_decision_function_, sample_weight)


def stored_calibration(model):
    """The fitted maps of ``model`` as the plain data the model file stores."""
    return calibration_to_plain(model)


def conformal_sets(forest, proba, alpha, path):
    """Mondrian conformal sets (not smoothed) of the rows whose forest
    probabilities are ``proba``: label k is in a row's set when
    ``(#{i in k: a_i >= 1 - p_k} + 1) / (n_k + 1) > alpha``, with a_i the
    out-of-bag scores ``1 - p_{y_i}(x_i)`` of the training cases of class k."""
    oob, codes = _oob_labels(forest, path, "--sets")
    has_oob = ~np.isnan(oob).any(axis=1)
    scores = 1.0 - oob[np.arange(codes.shape[0]), codes]
    calibration = [np.sort(scores[has_oob & (codes == k)])
                   for k in range(forest.classes_.shape[0])]
    test_scores = 1.0 - np.asarray(proba, dtype=np.float64)
    return mondrian_p_values(calibration, test_scores) > alpha


def set_cells(sets, classes):
    """Each row's set as text: its labels in class order, joined by ``|``
    (an empty cell for an empty set)."""
    names = [str(label) for label in classes]
    clashing = [name for name in names if SET_SEPARATOR in name]
    if clashing:
        raise ValueError(f"--sets writes each set as labels joined by {SET_SEPARATOR!r}, which "
                         f"the class label {clashing[0]!r} holds")
    return [SET_SEPARATOR.join(name for name, inside in zip(names, row) if inside)
            for row in sets]
