"""What a calibrated or set-valued model adds to its forest, as the ONNX export
reads it (`ExportableDecisions`).

`aucforest.to_onnx` and the skl2onnx converters take a fitted forest or tree,
an `aucforest.calibration.OOBCalibratedClassifier` (calibrated probabilities,
its forest's decision rule applied to them) or an
`aucforest.conformal.MondrianConformalClassifier` (the forest's own
predictions and the prediction sets at a level alpha), and optionally the
sets of a conformal predictor around the same forest added to either of the
first two. This module reads such a model once and checks it: the forest
through `aucforest.export._exportable.ExportableForest`, the calibration
(`Calibration`: the maps, the priors and the rule) and the conformal part
(`Conformal`: each class's calibration scores and alpha); it names the
graph's outputs and describes them for the model's metadata.
"""
from numbers import Real
from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._decision_rule import rule_of
from ._exportable import ExportableForest, flat_tree

#: the outputs a model may have, in the order of the graph's outputs
OUTPUTS = ("label", "probabilities", "p_values", "set")
GUARANTEE = ("per-class miss rate at most alpha under exchangeability; out-of-bag "
             "calibration scores")


class Calibration(NamedTuple):
    """The calibration of an `OOBCalibratedClassifier`, read once.

    Attributes
    ----------
    method : str
        The registered name of the maps (``"isotonic"``, ``"sigmoid"``,
        ``"venn_abers"``).
    maps : tuple of CalibrationMap
        The fitted maps, in ``calibrators_`` order.
    columns : tuple of int
        The class each map reads and gives (two classes: ``(1,)``).
    class_prior : ndarray of float64 (n_classes,)
        The priors of the calibrated probabilities, those RFQ compares with.
    draw_class_weights : ndarray of float64 (n_classes,)
        w'_k of the prior correction before the maps.
    rule : DecisionRule
        The forest's rule, applied to the calibrated probabilities.
    """

    method: str
    maps: tuple
    columns: tuple
    class_prior: np.ndarray
    draw_class_weights: np.ndarray
    rule: object


class Conformal(NamedTuple):
    """The unsmoothed Mondrian p-values and sets of a `MondrianConformalClassifier`.

    Attributes
    ----------
    scores : tuple of ndarray
        Each class's sorted out-of-bag nonconformity scores ``a_i``.
    alpha : float
        The level: label k is in the set when its p-value exceeds alpha.
    """

    scores: tuple
    alpha: float


class ExportableDecisions:
    """A fitted forest, calibrated model or conformal predictor as the ONNX
    export reads it.

    Parameters
    ----------
    model : fitted AUCForestClassifier, AUCTreeClassifier, OOBCalibratedClassifier \
or MondrianConformalClassifier
        Read once.
    writer : str
        The exporting function's name, for the messages.
    sets : fitted MondrianConformalClassifier or None, default=None
        Prediction sets to add to a forest or a calibrated model, from a
        conformal predictor around the same fitted forest.
    alpha : float or None, default=None
        The level of the sets; required with a conformal predictor (as
        ``model`` or ``sets``), refused without one.

    Attributes
    ----------
    forest : ExportableForest
        The forest (or tree) whose probabilities every output starts from.
    calibration : Calibration or None
    conformal : Conformal or None
    outputs : tuple of str
        The graph's outputs, a prefix-preserving selection of `OUTPUTS`.
    """

    def __init__(self, model, writer, sets=None, alpha=None):
        from ..calibration import OOBCalibratedClassifier
        from ..conformal import MondrianConformalClassifier

        if isinstance(model, MondrianConformalClassifier):
            if sets is not None:
                raise ValueError(f"{writer}: sets= adds the sets of a MondrianConformalClassifier "
                                 "to another model; the model is one already (give alpha only)")
            sets = model
        elif not isinstance(model, OOBCalibratedClassifier):
            _check_forest_type(model, writer)
        self.calibration = None
        if isinstance(model, OOBCalibratedClassifier):
            state = _fitted_state(model)
            forest = _wrapped_forest(state, model, writer)
            self.calibration = _calibration(state, model.method, forest, writer)
        elif isinstance(model, MondrianConformalClassifier):
            forest = _wrapped_forest(_fitted_state(model), model, writer)
        else:
            forest = model
        self.forest = ExportableForest(forest, writer)
        self.conformal = None
        if sets is not None:
            self.conformal = _conformal(sets, alpha, forest, writer)
        elif alpha is not None:
            raise ValueError(f"{writer}: alpha is the level of prediction sets; give it with a "
                             "MondrianConformalClassifier, as the model or as sets=")
        self.outputs = OUTPUTS if self.conformal is not None else OUTPUTS[:2]

    @property
    def needs_exact_probabilities(self):
        """Whether the outputs compare the forest's probabilities with
        calibration scores or may multiply their rounding by a steep slope
        (Venn-Abers and isotonic maps, conformal p-values): then the graph
        must give ``predict_proba`` to the last bit, not within a few units
        in the last place (Platt's sigmoid needs no more)."""
        calibration = self.calibration
        return self.conformal is not None or (calibration is not None
                                              and calibration.method != "sigmoid")

    def description(self, encoding=None):
        """The plain JSON-ready description of the model for its metadata: the
        forest's (`ExportableForest.description`), ``outputs`` (each output's
        name and meaning) and, when present, ``calibration`` (the method and
        the map of each class, the priors) and ``conformal`` (alpha, the
        p-value, the guarantee, the calibration cases per class)."""
        description = self.forest.description(encoding)
        classes = description["classes"]
        calibration, conformal = self.calibration, self.conformal
        meanings = {
            "label": ("the forest's decision rule on the calibrated probabilities" if calibration
                      else "the forest's predict (its decision rule)"),
            "probabilities": ("the calibrated probabilities (predict_proba of the calibrated "
                              "model)" if calibration else "the forest's predict_proba"),
            "p_values": ("the unsmoothed Mondrian conformal p-value of each class, "
                         "(#{i in k: a_i >= a} + 1) / (n_k + 1) with a = 1 - p_k, p_k the "
                         "forest's own probability and a_i the out-of-bag scores of class k"),
            "set": "whether each class is in the prediction set (p-value > alpha)"}
        description["outputs"] = {name: meanings[name] for name in self.outputs}
        if calibration is not None:
            description["calibration"] = {
                "method": calibration.method,
                "maps": [{"class": classes[k], "method": calibration.method}
                         for k in calibration.columns],
                "combination": ("two classes: the first class gets 1 minus the calibrated "
                                "probability of the second" if len(classes) == 2 else
                                "one-vs-rest maps clipped to [0, 1], divided by their row sum "
                                "(a row of zeros gets 1/K each)"),
                "class_prior": calibration.class_prior.tolist(),
                "draw_class_weights": calibration.draw_class_weights.tolist()}
        if conformal is not None:
            description["conformal"] = {
                "alpha": conformal.alpha, "smoothing": False, "guarantee": GUARANTEE,
                "n_calibration": [int(scores.shape[0]) for scores in conformal.scores]}
        return description


def _check_forest_type(model, writer):
    from .._forest import AUCForestClassifier
    from ..tree import AUCTreeClassifier

    if not isinstance(model, (AUCForestClassifier, AUCTreeClassifier)):
        raise TypeError(f"{writer} exports an AUCForestClassifier, AUCTreeClassifier, "
                        f"OOBCalibratedClassifier or MondrianConformalClassifier, not "
                        f"{type(model).__name__}")


def _fitted_state(wrapper):
    """The fitted wrapper's attributes, read once (a copy of its dict)."""
    check_is_fitted(wrapper)
    return dict(vars(wrapper))


def _wrapped_forest(state, wrapper, writer):
    """The fitted forest of a wrapper, which the export must be able to read."""
    from .._forest import AUCForestClassifier
    from ..tree import AUCTreeClassifier

    forest = state["estimator_"]
    if not isinstance(forest, (AUCForestClassifier, AUCTreeClassifier)):
        raise TypeError(f"{writer} exports a {type(wrapper).__name__} around an "
                        f"AUCForestClassifier, not around {type(forest).__name__}")
    return forest


def _calibration(state, method, forest, writer):
    """The `Calibration` of a fitted OOBCalibratedClassifier's attributes."""
    from .._calibration_maps import IsotonicMap, SigmoidMap, VennAbersCalibration

    maps = tuple(state["calibrators_"])
    n_classes = len(state["classes_"])
    columns = (1,) if n_classes == 2 else tuple(range(n_classes))
    if len(maps) != len(columns):
        raise ValueError(f"{writer}: the calibrated model holds {len(maps)} maps for "
                         f"{n_classes} classes")
    for calibration_map in maps:
        if not isinstance(calibration_map, (IsotonicMap, SigmoidMap, VennAbersCalibration)):
            raise TypeError(f"{writer}: no ONNX graph for the calibration map "
                            f"{type(calibration_map).__name__} (method {method!r}); the "
                            "export knows isotonic, sigmoid and venn_abers")
    return Calibration(method=method, maps=maps, columns=columns,
                       class_prior=np.asarray(state["class_prior_"], dtype=np.float64),
                       draw_class_weights=np.asarray(state["draw_class_weights_"],
                                                     dtype=np.float64),
                       rule=rule_of(forest))


def _conformal(sets, alpha, forest, writer):
    """The `Conformal` part of a fitted MondrianConformalClassifier around ``forest``."""
    from ..conformal import MondrianConformalClassifier

    if not isinstance(sets, MondrianConformalClassifier):
        raise TypeError(f"{writer}: sets must be a fitted MondrianConformalClassifier, not "
                        f"{type(sets).__name__}")
    if alpha is None:
        raise ValueError(f"{writer}: the prediction sets need their level alpha, e.g. "
                         f"{writer}(model, alpha=0.1) (the miss rate allowed in each class)")
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, Real) or not 0 < alpha < 1:
        raise ValueError(f"{writer}: alpha must be a number in the open interval (0, 1), the "
                         f"miss rate allowed in each class; got {alpha!r}")
    state = _fitted_state(sets)
    if sets.smoothing:
        raise ValueError(
            f"{writer}: the MondrianConformalClassifier has smoothing=True, whose sets depend on "
            "random draws and cannot be exported; model.set_params(smoothing=False) gives the "
            "deterministic sets, whose miss rate in each class is at most alpha")
    if not _same_forest(state["estimator_"], forest):
        raise ValueError(f"{writer}: the MondrianConformalClassifier given as sets is around "
                         "another forest than the model; build both around one fitted forest "
                         "(their calibrate method takes a fitted forest)")
    scores = tuple(np.asarray(s, dtype=np.float64) for s in state["calibration_scores_"])
    return Conformal(scores=scores, alpha=float(alpha))


def _same_forest(first, second):
    """Whether two fitted forests (or trees) predict alike: the same object, or
    the same classes and the same trees node for node."""
    if first is second:
        return True
    if type(first) is not type(second) or not np.array_equal(first.classes_, second.classes_):
        return False
    trees = [getattr(model, "estimators_", [model]) for model in (first, second)]
    if len(trees[0]) != len(trees[1]):
        return False
    for one, other in zip(*trees):
        one, other = flat_tree(one.tree_), flat_tree(other.tree_)
        for field in ("feature", "threshold", "left", "right", "missing_left", "proba"):
            if not np.array_equal(getattr(one, field), getattr(other, field), equal_nan=True):
                return False
        if {k: v.tolist() for k, v in one.away_levels.items()} != \
                {k: v.tolist() for k, v in other.away_levels.items()}:
            return False
    return getattr(first, "predict_min_samples_", None) == getattr(
        second, "predict_min_samples_", None)
