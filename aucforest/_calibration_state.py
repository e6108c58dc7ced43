"""A fitted `OOBCalibratedClassifier`'s maps as plain numbers (JSON data) and back.

The command line stores them in the model file (``extra["calibration"]``), so
that ``predict`` and ``evaluate`` apply the map that ``fit --calibrate``
fitted instead of fitting it again from the stored out-of-bag predictions:
``{"method", "class_prior", "draw_class_weights", "maps"}``, each map as its
class writes itself (`aucforest._calibration_maps`: isotonic interpolation
points, Platt's two coefficients, the Venn-Abers pairs of every place). The
data is numbers only, and everything read back is checked, each map by its
class as strictly as fitting makes it (a model file may be damaged or
crafted).

Python floats print in JSON as the shortest text that reads back to the same
float, so the maps come back bit for bit.
"""
import numpy as np

from ._calibration_maps import IsotonicMap, map_class, plain_array, plain_floats
from .calibration import OOBCalibratedClassifier

__all__ = ["IsotonicMap", "calibration_from_plain", "calibration_to_plain"]


def calibration_to_plain(model):
    """The fitted maps and priors of ``model`` as plain JSON data.

    Parameters
    ----------
    model : fitted OOBCalibratedClassifier

    Returns
    -------
    dict
        ``method``, ``class_prior``, ``draw_class_weights`` and ``maps`` (one
        per fitted map, in ``calibrators_`` order, each its ``to_plain()``).
    """
    return {"method": model.method,
            "class_prior": plain_floats(model.class_prior_),
            "draw_class_weights": plain_floats(model.draw_class_weights_),
            "maps": [calibrator.to_plain() for calibrator in model.calibrators_]}


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
        forest's classes (the message says what is wrong; for a map, which
        map, of which method and class).
    """
    if not isinstance(plain, dict):
        raise ValueError(f"the calibration data must be a dict, got {type(plain).__name__}")
    method = plain.get("method")
    cls = map_class(method)
    n_classes = forest.classes_.shape[0]
    prior = plain_array(plain, "class_prior", (n_classes,), "the calibration")
    if np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
        raise ValueError("the calibration's class_prior must be non-negative and sum to 1")
    draw_weights = plain_array(plain, "draw_class_weights", (n_classes,), "the calibration")
    if np.any(draw_weights < 0) or not np.any(draw_weights > 0):
        raise ValueError("the calibration's draw_class_weights must be non-negative, not all 0")
    maps = plain.get("maps")
    n_maps = 1 if n_classes == 2 else n_classes
    if not isinstance(maps, list) or len(maps) != n_maps:
        raise ValueError(f"the calibration must hold {n_maps} maps for {n_classes} classes")
    labels = forest.classes_.tolist()
    classes = labels[1:] if n_classes == 2 else labels  # the class each map is for
    calibrators = [cls.from_plain(item, f"calibration map {k} ({method}, class {label!r})")
                   for k, (item, label) in enumerate(zip(maps, classes))]
    model = OOBCalibratedClassifier(forest, method=method)
    return model._publish(forest, {"class_prior_": prior, "draw_class_weights_": draw_weights,
                                   "calibrators_": calibrators})
