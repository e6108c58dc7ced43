"""A fitted `OOBCalibratedClassifier`'s maps as plain numbers (JSON data) and back.

The command line stores them in the model file (``extra["calibration"]``), so
that ``predict`` and ``evaluate`` apply the map that ``fit --calibrate``
fitted instead of fitting it again from the stored out-of-bag predictions.
The data is numbers only, and everything read back is checked (a model file
may be damaged or crafted):

* ``"isotonic"``: the interpolation points of the fitted
  ``IsotonicRegression`` (``X_thresholds_``, ``y_thresholds_``), applied as
  it applies them: scores clipped to the first and last point, then linear
  interpolation (Zadrozny & Elkan 2002);
* ``"sigmoid"``: Platt's slope and intercept, ``1 / (1 + exp(a s + b))``
  (Platt 1999);
* ``"venn_abers"``: the distinct calibration scores and the (p0, p1) pairs
  of every gap and tie (`aucforest.calibration.VennAbersCalibration`,
  Vovk & Petej 2014).

Python floats print in JSON as the shortest text that reads back to the same
float, so the maps come back bit for bit.
"""
import numpy as np
from scipy.interpolate import interp1d

from .calibration import OOBCalibratedClassifier, PlattScaling, VennAbersCalibration

__all__ = ["IsotonicMap", "calibration_from_plain", "calibration_to_plain"]

METHODS = ("isotonic", "sigmoid", "venn_abers")


class IsotonicMap:
    """A fitted isotonic map read back from its interpolation points.

    Predicts as scikit-learn's ``IsotonicRegression(out_of_bounds="clip")``
    does: scores clipped to ``[x[0], x[-1]]``, then linear interpolation
    between the points (a constant for a single point).

    Parameters
    ----------
    x : ndarray of shape (n_points,)
        Increasing scores.
    y : ndarray of shape (n_points,)
        Non-decreasing values in [0, 1].
    """

    def __init__(self, x, y):
        self.X_thresholds_, self.y_thresholds_ = x, y

    def predict(self, scores):
        """Calibrated value of each score.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores of new cases.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        x, y = self.X_thresholds_, self.y_thresholds_
        scores = np.clip(np.asarray(scores, dtype=np.float64).ravel(), x[0], x[-1])
        if x.shape[0] == 1:
            return np.repeat(y, scores.shape[0])
        return interp1d(x, y, kind="linear", bounds_error=False)(scores)


def calibration_to_plain(model):
    """The fitted maps and priors of ``model`` as plain JSON data.

    Parameters
    ----------
    model : fitted OOBCalibratedClassifier

    Returns
    -------
    dict
        ``method``, ``class_prior``, ``draw_class_weights`` and ``maps`` (one
        per fitted map, in ``calibrators_`` order).
    """
    return {"method": model.method,
            "class_prior": _floats(model.class_prior_),
            "draw_class_weights": _floats(model.draw_class_weights_),
            "maps": [_map_to_plain(model.method, calibrator)
                     for calibrator in model.calibrators_]}


def calibration_from_plain(forest, plain):
    """An `OOBCalibratedClassifier` around the fitted ``forest`` with the maps of
    ``plain`` (`calibration_to_plain`), nothing fitted.

    Parameters
    ----------
    forest : fitted AUCForestClassifier
        The forest the maps were fitted on.
    plain : dict
        The stored data.

    Returns
    -------
    OOBCalibratedClassifier

    Raises
    ------
    ValueError
        If ``plain`` is not what `calibration_to_plain` writes for this
        forest's classes (the message says what is wrong).
    """
    if not isinstance(plain, dict):
        raise ValueError(f"the calibration data must be a dict, got {type(plain).__name__}")
    method = plain.get("method")
    if method not in METHODS:
        raise ValueError(f"unknown calibration method {method!r} (expected one of "
                         f"{', '.join(METHODS)})")
    n_classes = forest.classes_.shape[0]
    prior = _array(plain, "class_prior", (n_classes,))
    if np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
        raise ValueError("the calibration's class_prior must be non-negative and sum to 1")
    draw_weights = _array(plain, "draw_class_weights", (n_classes,))
    if np.any(draw_weights < 0) or not np.any(draw_weights > 0):
        raise ValueError("the calibration's draw_class_weights must be non-negative, not all 0")
    maps = plain.get("maps")
    n_maps = 1 if n_classes == 2 else n_classes
    if not isinstance(maps, list) or len(maps) != n_maps:
        raise ValueError(f"the calibration must hold {n_maps} maps for {n_classes} classes")
    model = OOBCalibratedClassifier(forest, method=method)
    model.estimator_ = forest
    model.classes_ = forest.classes_
    model.n_features_in_ = forest.n_features_in_
    if hasattr(forest, "feature_names_in_"):
        model.feature_names_in_ = forest.feature_names_in_
    model.class_prior_, model.draw_class_weights_ = prior, draw_weights
    model.calibrators_ = [_map_from_plain(method, item, k) for k, item in enumerate(maps)]
    return model


def _map_to_plain(method, calibrator):
    if method == "isotonic":
        return {"x": _floats(calibrator.X_thresholds_), "y": _floats(calibrator.y_thresholds_)}
    if method == "sigmoid":
        return {"a": float(calibrator.a_), "b": float(calibrator.b_)}
    return {"scores": _floats(calibrator.scores_), "gap_bounds": _floats(calibrator.gap_bounds_),
            "tie_bounds": _floats(calibrator.tie_bounds_)}


def _map_from_plain(method, item, index):
    if not isinstance(item, dict):
        raise ValueError(f"calibration map {index} must be a dict")
    if method == "isotonic":
        x, y = _array(item, "x", None, index), _array(item, "y", None, index)
        if x.ndim != 1 or x.shape != y.shape or x.shape[0] < 1:
            raise ValueError(f"calibration map {index}: x and y must be equal-length lists")
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0):
            raise ValueError(f"calibration map {index}: x must increase and y must not decrease")
        _check_probabilities(y, index)
        return IsotonicMap(x, y)
    if method == "sigmoid":
        calibrator = PlattScaling()
        calibrator.a_ = float(_array(item, "a", (), index))
        calibrator.b_ = float(_array(item, "b", (), index))
        return calibrator
    scores = _array(item, "scores", None, index)
    if scores.ndim != 1 or np.any(np.diff(scores) <= 0):
        raise ValueError(f"calibration map {index}: scores must be an increasing list")
    calibrator = VennAbersCalibration()
    calibrator.scores_ = scores
    calibrator.gap_bounds_ = _array(item, "gap_bounds", (scores.shape[0] + 1, 2), index)
    calibrator.tie_bounds_ = _array(item, "tie_bounds", (scores.shape[0], 2), index)
    _check_probabilities(calibrator.gap_bounds_, index)
    _check_probabilities(calibrator.tie_bounds_, index)
    return calibrator


def _floats(array):
    """A float64 array as (nested) lists of Python floats."""
    return np.asarray(array, dtype=np.float64).tolist()


def _array(data, key, shape, index=None):
    """``data[key]`` as a float64 array of finite numbers (of ``shape`` unless None)."""
    where = "the calibration" if index is None else f"calibration map {index}"
    value = data.get(key)
    if value is None:
        raise ValueError(f"{where} has no {key!r}")
    if not _numbers_only(value):
        raise ValueError(f"{where}: {key!r} must hold numbers only")
    try:
        array = np.array(value, dtype=np.float64)
    except ValueError:  # ragged lists
        raise ValueError(f"{where}: {key!r} must be a regular array of numbers") from None
    if shape is not None and array.shape != shape:
        raise ValueError(f"{where}: {key!r} has shape {array.shape}, expected {shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{where}: {key!r} must hold finite numbers")
    return array


def _numbers_only(value):
    """Whether ``value`` is a number or (nested) lists of numbers, no bools or texts."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, bool) or not isinstance(item, (int, float)):
            return False
    return True


def _check_probabilities(values, index):
    if np.any((values < 0) | (values > 1)):
        raise ValueError(f"calibration map {index}: its values must lie in [0, 1]")
