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
conformal sets are those of `aucforest.conformal.MondrianConformalClassifier`
(not smoothed) calibrated on those predictions. Both estimators are built
around the file's fitted forest with their ``calibrate`` method: nothing is
fitted again but the maps and the scores.
"""
import numpy as np

from .._calibration_maps import MAPS
from .._calibration_state import calibration_from_plain, calibration_to_plain
from .._oob_source import fitted_on_dask
from ..calibration import OOBCalibratedClassifier
from ..conformal import MondrianConformalClassifier

#: The calibration methods ``--calibrate`` offers: the registered maps (a live view).
CALIBRATION_METHODS = MAPS.keys()
SET_SEPARATOR = "|"


def calibration_choices():
    """The ``--calibrate`` methods as help text: each name with what it is."""
    return ", ".join(f"{name} ({cls.summary})" for name, cls in MAPS.items())


def _training_codes(forest, path, option):
    """The class indices of the training labels stored with a model, which
    also holds their out-of-bag predictions (or ValueError naming ``option``)."""
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
    return np.asarray(codes, dtype=np.intp)


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
    codes = _training_codes(forest, path, "--calibrate")
    return OOBCalibratedClassifier(forest, method=method).calibrate(forest.classes_[codes])


def fitted_calibration(forest, method, y, sample_weight=None):
    """The maps of ``OOBCalibratedClassifier(forest, method=method)`` fitted on the
    out-of-bag predictions of the ``forest`` just fitted on labels ``y`` with
    ``sample_weight``, as its ``fit`` fits them."""
    return OOBCalibratedClassifier(forest, method=method).calibrate(np.asarray(y), sample_weight)


def stored_calibration(model):
    """The fitted maps of ``model`` as the plain data the model file stores."""
    return calibration_to_plain(model)


def conformal_predictor(forest, path):
    """`MondrianConformalClassifier` (not smoothed) around the fitted ``forest``,
    calibrated on its stored out-of-bag predictions: label k is in a row's set
    at level alpha when ``(#{i in k: a_i >= a(x, k)} + 1) / (n_k + 1) > alpha``.
    Every training case with an out-of-bag prediction is a calibration case,
    once (a model file keeps no case weights)."""
    codes = _training_codes(forest, path, "--sets")
    return MondrianConformalClassifier(forest, smoothing=False).calibrate(forest.classes_[codes])


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
