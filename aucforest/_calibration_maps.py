"""Calibration maps: from one class's scores to calibrated probabilities.

Each method is one class here, registered in `MAPS` under its name, the
``method`` of `aucforest.calibration.OOBCalibratedClassifier`: the only place
the names are listed (the classifier's parameter check, the stored model data
and the command line's ``--calibrate`` choices all read `MAPS`). A map

* fits itself (``fit(scores, labels, sample_weight)``) on calibration scores,
  0/1 labels and case weights; a case of weight 0 counts as absent: the map
  fitted with it is the map fitted without it, bit for bit;
* predicts (``predict(scores)``);
* writes itself as plain numbers (``to_plain()``: a dict of floats and lists
  of floats, JSON data) and reads itself back (``from_plain(plain, where)``),
  refusing, by name, data that no fit makes (a model file may be damaged or
  crafted).

The methods: isotonic regression (Zadrozny & Elkan 2002), Platt's sigmoid
(Platt 1999) and the inductive Venn-Abers predictor (Vovk & Petej 2014;
Vovk, Petej & Fedorova 2015). Adding a method is writing one class with a
``name`` and decorating it with `register_map`.
"""
import numpy as np
from scipy.interpolate import interp1d
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.isotonic import IsotonicRegression

from ._compat import SigmoidCalibration
from ._venn_abers import venn_abers_gap_values

__all__ = ["MAPS", "CalibrationMap", "IsotonicMap", "PlattScaling", "SigmoidMap",
           "VennAbersCalibration", "map_class", "plain_array", "plain_floats", "register_map"]

#: Calibration method name -> its map class, in the order the methods are offered.
MAPS = {}

# Venn-Abers values are ratios of sums of case weights: with weights that are
# not integers, two values equal in exact arithmetic (a flat stretch of the map)
# can come out of the sums in different orders a few units in the last place
# apart. A stored map may step down this much from one place to the next.
_ROUNDING = 1e-9


def register_map(cls):
    """Register a calibration map class in `MAPS` under its ``name``.

    Parameters
    ----------
    cls : type
        A subclass of `CalibrationMap` with a ``name`` not registered yet.

    Returns
    -------
    type
        ``cls`` itself (a class decorator).
    """
    if not (isinstance(cls, type) and issubclass(cls, CalibrationMap)) or not cls.name:
        raise TypeError(f"{cls!r} is not a CalibrationMap class with a name")
    if cls.name in MAPS:
        raise ValueError(f"calibration method {cls.name!r} is registered already")
    MAPS[cls.name] = cls
    return cls


def map_class(method):
    """The map class registered as ``method``.

    Parameters
    ----------
    method : str
        A calibration method name.

    Returns
    -------
    type
        The class in `MAPS`.

    Raises
    ------
    ValueError
        If no map is registered under ``method`` (the message lists those that are).
    """
    cls = MAPS.get(method) if isinstance(method, str) else None
    if cls is None:
        raise ValueError(f"unknown calibration method {method!r} (expected one of "
                         f"{', '.join(MAPS)})")
    return cls


class CalibrationMap:
    """A map from one class's scores to calibrated probabilities of that class.

    Subclasses set ``name`` (their key in `MAPS`) and ``summary`` (a few
    words for help texts) and implement ``_fit``, ``predict``, ``to_plain``
    and ``_from_plain``. `fit` checks the cases and leaves out those of
    weight 0 before ``_fit`` sees them.
    """

    name = None
    summary = None

    def fit(self, scores, labels, sample_weight=None):
        """Fit the map on calibration scores and 0/1 labels.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Calibration scores (in `aucforest.calibration` the corrected
            out-of-bag probability of the class).
        labels : array-like of shape (n_samples,)
            1 for the class, 0 otherwise.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative case weights; a case of weight 0 counts as absent.

        Returns
        -------
        self : CalibrationMap
            The fitted map.
        """
        self._fit(*_calibration_cases(scores, labels, sample_weight))
        return self

    def _fit(self, scores, labels, sample_weight):
        raise NotImplementedError

    def predict(self, scores):
        """Calibrated probability of each score.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores of new cases.

        Returns
        -------
        proba : ndarray of shape (n_samples,)
            The calibrated probability of the class.
        """
        raise NotImplementedError

    def to_plain(self):
        """The fitted map as plain numbers.

        Returns
        -------
        dict
            Floats and (nested) lists of floats, which `from_plain` reads back.
        """
        raise NotImplementedError

    @classmethod
    def from_plain(cls, plain, where="calibration map"):
        """A fitted map read back from what `to_plain` wrote, checked.

        Parameters
        ----------
        plain : dict
            The plain data.
        where : str, default="calibration map"
            What the data is, for the error messages (e.g. "calibration map
            0 (venn_abers, class 'rare')").

        Returns
        -------
        CalibrationMap
            The map, predicting as the map that wrote the data.

        Raises
        ------
        ValueError
            If ``plain`` holds what no fit of this map makes (the message
            starts with ``where`` and says what is wrong).
        """
        if not isinstance(plain, dict):
            raise ValueError(f"{where} must be a dict")
        return cls._from_plain(plain, where)

    @classmethod
    def _from_plain(cls, plain, where):
        raise NotImplementedError


@register_map
class IsotonicMap(CalibrationMap):
    """Isotonic regression, pool adjacent violators (Zadrozny & Elkan 2002).

    Fitted by scikit-learn's ``IsotonicRegression(out_of_bounds="clip")``,
    of which it keeps the interpolation points; predicts as it does: scores
    clipped to ``[x[0], x[-1]]``, then linear interpolation between the
    points (a constant for a single point).

    Parameters
    ----------
    x : array-like of shape (n_points,), default=None
        Increasing scores of the points of a map fitted elsewhere (e.g. a
        fitted ``IsotonicRegression``'s ``X_thresholds_``); None: fit it.
    y : array-like of shape (n_points,), default=None
        Non-decreasing values in [0, 1] at ``x``.

    Attributes
    ----------
    X_thresholds_ : ndarray of shape (n_points,)
        The increasing scores of the points.
    y_thresholds_ : ndarray of shape (n_points,)
        The map's non-decreasing values at them.
    """

    name = "isotonic"
    summary = "isotonic regression"

    def __init__(self, x=None, y=None):
        if x is not None or y is not None:
            self.X_thresholds_ = np.asarray(x, dtype=np.float64)
            self.y_thresholds_ = np.asarray(y, dtype=np.float64)

    def _fit(self, scores, labels, sample_weight):
        fitted = IsotonicRegression(out_of_bounds="clip").fit(scores, labels, sample_weight)
        self.X_thresholds_, self.y_thresholds_ = fitted.X_thresholds_, fitted.y_thresholds_

    def predict(self, scores):
        """Calibrated value of each score.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores of new cases.

        Returns
        -------
        proba : ndarray of shape (n_samples,)
            The interpolated values.
        """
        x, y = self.X_thresholds_, self.y_thresholds_
        scores = np.clip(np.asarray(scores, dtype=np.float64).ravel(), x[0], x[-1])
        if x.shape[0] == 1:
            return np.repeat(y, scores.shape[0])
        return interp1d(x, y, kind="linear", bounds_error=False)(scores)

    def to_plain(self):
        """The interpolation points as plain numbers.

        Returns
        -------
        dict
            ``{"x": [...], "y": [...]}``.
        """
        return {"x": plain_floats(self.X_thresholds_), "y": plain_floats(self.y_thresholds_)}

    @classmethod
    def _from_plain(cls, plain, where):
        x, y = plain_array(plain, "x", None, where), plain_array(plain, "y", None, where)
        if x.ndim != 1 or x.shape != y.shape or x.shape[0] < 1:
            raise ValueError(f"{where}: x and y must be equal-length lists")
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0):
            raise ValueError(f"{where}: x must increase and y must not decrease")
        _check_probabilities(y, where)
        return cls(x, y)


@register_map
class SigmoidMap(CalibrationMap):
    """Platt's sigmoid ``1 / (1 + exp(a s + b))`` (Platt 1999).

    Fitted by scikit-learn's sigmoid calibration (that of its
    ``CalibratedClassifierCV``) on Platt's smoothed targets; where its private
    ``_SigmoidCalibration`` cannot be imported, by `PlattScaling`'s scipy fit
    of the same loss.

    Attributes
    ----------
    a_ : float
        The slope.
    b_ : float
        The intercept.
    """

    name = "sigmoid"
    summary = "Platt's sigmoid"

    def _fit(self, scores, labels, sample_weight):
        if SigmoidCalibration is None:  # pragma: no cover (a scikit-learn that renamed it)
            self.a_, self.b_ = _platt_coefficients(scores, labels, sample_weight)
        else:
            fitted = SigmoidCalibration().fit(scores, labels, sample_weight)
            self.a_, self.b_ = fitted.a_, fitted.b_

    def predict(self, scores):
        """Calibrated probability of each score.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores of new cases.

        Returns
        -------
        proba : ndarray of shape (n_samples,)
            ``1 / (1 + exp(a s + b))``.
        """
        return expit(-(self.a_ * np.asarray(scores, dtype=np.float64) + self.b_))

    def to_plain(self):
        """The slope and the intercept as plain numbers.

        Returns
        -------
        dict
            ``{"a": float, "b": float}``.
        """
        return {"a": float(self.a_), "b": float(self.b_)}

    @classmethod
    def _from_plain(cls, plain, where):
        calibrator = cls()
        calibrator.a_ = float(plain_array(plain, "a", (), where))
        calibrator.b_ = float(plain_array(plain, "b", (), where))
        return calibrator


class PlattScaling(SigmoidMap):
    """Platt's sigmoid fitted with scipy, where scikit-learn's private
    ``_SigmoidCalibration`` cannot be imported: ``1 / (1 + exp(a s + b))``
    minimising the log loss against Platt's targets (n+ + 1) / (n+ + 2) and
    1 / (n- + 2) (Platt 1999, section 2.2).

    Attributes
    ----------
    a_ : float
        The slope.
    b_ : float
        The intercept.
    """

    def _fit(self, scores, labels, sample_weight):
        self.a_, self.b_ = _platt_coefficients(scores, labels, sample_weight)


def _platt_coefficients(scores, labels, sample_weight):
    """Platt's (a, b), minimising the weighted log loss with scipy's L-BFGS-B."""
    positive = np.asarray(labels) > 0
    weight = np.ones_like(scores) if sample_weight is None else sample_weight
    n_positive, n_negative = weight[positive].sum(), weight[~positive].sum()
    target = np.where(positive, (n_positive + 1) / (n_positive + 2), 1 / (n_negative + 2))

    def loss_and_gradient(ab):
        raw = -(ab[0] * scores + ab[1])  # log-odds of the class
        proba = expit(raw)
        loss = np.sum(weight * (np.logaddexp(0, raw) - target * raw))
        gradient = weight * (proba - target)  # d loss / d raw
        return loss, np.array([-gradient @ scores, -gradient.sum()])

    start = np.array([0.0, np.log((n_negative + 1) / (n_positive + 1))])
    result = minimize(loss_and_gradient, start, jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-10, "ftol": 64 * np.finfo(float).eps})
    return result.x[0], result.x[1]


@register_map
class VennAbersCalibration(CalibrationMap):
    """Inductive Venn-Abers predictor for one class (Vovk & Petej 2014).

    Fitted on calibration scores s_i and 0/1 labels. For a new score s, two
    isotonic regressions are fitted on the calibration cases plus (s, 0) and
    plus (s, 1); their values at s are p0 <= p1, the Venn-Abers interval, and
    the single probability reported is p1 / (1 - p0 + p1), the minimiser of
    the worst log loss over the two (Vovk & Petej 2014, section 4; Vovk,
    Petej & Fedorova 2015). Ties are pooled as scikit-learn's
    ``IsotonicRegression`` pools them (a score equal to calibration scores
    joins their block). Case weights are rescaled to a mean of 1 over the
    cases of positive weight (the new case weighs 1); cases of weight 0 are
    left out.

    The two values are computed at fit for every place a new score can take
    (between or on the distinct calibration scores) in one sweep over the
    cumulative sum diagram (Vovk, Petej & Fedorova 2015, Algorithms 1-4,
    with case weights): the new case's isotonic value is the slope of the
    greatest convex minorant over its step, and moving the case one block to
    the right adds one point to that minorant, kept on a stack
    (`aucforest._venn_abers`). O(n log n) with the sort, O(n) after it.

    Read back (`from_plain`), a map must be what a fit makes: increasing
    scores; pairs in [0, 1] with p0 <= p1; p0 = 0 below the first score and
    p1 = 1 above the last; both values non-decreasing from each place to
    the next (gap, tie, gap, ...), up to rounding of 1e-9.

    Attributes
    ----------
    scores_ : ndarray of shape (n_distinct,)
        Distinct calibration scores (of positive weight), ascending.
    gap_bounds_ : ndarray of shape (n_distinct + 1, 2)
        (p0, p1) for a score below the first, between two consecutive or
        above the last distinct score.
    tie_bounds_ : ndarray of shape (n_distinct, 2)
        (p0, p1) for a score equal to a calibration score.

    References
    ----------
    V. Vovk and I. Petej, "Venn-Abers predictors", UAI (2014) 829-838.

    V. Vovk, I. Petej and V. Fedorova, "Large-scale probabilistic predictors
    with and without guarantees of validity", NeurIPS (2015) 892-900.
    """

    name = "venn_abers"
    summary = "inductive Venn-Abers"

    def _fit(self, scores, labels, sample_weight):
        if np.any((labels < 0) | (labels > 1)):
            raise ValueError("Venn-Abers labels must lie in [0, 1] (1 for the class)")
        weight = np.ones_like(scores) if sample_weight is None else sample_weight
        weight = weight / weight.mean()
        self.scores_, block = np.unique(scores, return_inverse=True)
        block_weight = np.bincount(block, weights=weight, minlength=self.scores_.size)
        block_sum = np.bincount(block, weights=weight * labels, minlength=self.scores_.size)
        self.gap_bounds_ = venn_abers_gap_values(block_weight, block_sum)
        # the new case joins a tied block: with label 1 its value is that of the gap
        # just below the block, with label 0 that of the gap just above (section 3 of
        # Vovk, Petej & Fedorova 2015; the CSD has no convex corner between them)
        self.tie_bounds_ = np.column_stack([self.gap_bounds_[1:, 0], self.gap_bounds_[:-1, 1]])

    def predict_interval(self, scores):
        """The Venn-Abers interval [p0, p1] of each score.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores of new cases.

        Returns
        -------
        bounds : ndarray of shape (n_samples, 2)
            The lower bound p0 and the upper bound p1.
        """
        scores = np.asarray(scores, dtype=np.float64).ravel()
        place = np.searchsorted(self.scores_, scores)
        tied = place < self.scores_.size
        tied[tied] = self.scores_[place[tied]] == scores[tied]
        bounds = self.gap_bounds_[place]
        bounds[tied] = self.tie_bounds_[place[tied]]
        return bounds

    def predict(self, scores):
        """Probability of the class: p1 / (1 - p0 + p1).

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores of new cases.

        Returns
        -------
        proba : ndarray of shape (n_samples,)
            The merged Venn-Abers probability.
        """
        p0, p1 = self.predict_interval(scores).T
        return p1 / (1.0 - p0 + p1)

    def to_plain(self):
        """The distinct scores and the pairs of every place as plain numbers.

        Returns
        -------
        dict
            ``{"scores": [...], "gap_bounds": [[p0, p1], ...], "tie_bounds":
            [[p0, p1], ...]}``.
        """
        return {"scores": plain_floats(self.scores_),
                "gap_bounds": plain_floats(self.gap_bounds_),
                "tie_bounds": plain_floats(self.tie_bounds_)}

    @classmethod
    def _from_plain(cls, plain, where):
        scores = plain_array(plain, "scores", None, where)
        if scores.ndim != 1 or scores.shape[0] < 1 or np.any(np.diff(scores) <= 0):
            raise ValueError(f"{where}: scores must be an increasing list")
        n = scores.shape[0]
        bounds = {key: plain_array(plain, key, shape, where)
                  for key, shape in (("gap_bounds", (n + 1, 2)), ("tie_bounds", (n, 2)))}
        for key, pairs in bounds.items():
            _check_probabilities(pairs, where)
            reversed_pairs = np.flatnonzero(pairs[:, 0] > pairs[:, 1])
            if reversed_pairs.size:
                i = int(reversed_pairs[0])
                p0, p1 = pairs[i].tolist()
                raise ValueError(f"{where}: pair {key}[{i}] = ({p0!r}, {p1!r}) has p0 > p1 "
                                 f"(every fitted Venn-Abers pair has p0 <= p1)")
        gaps, ties = bounds["gap_bounds"], bounds["tie_bounds"]
        if gaps[0, 0] != 0 or gaps[-1, 1] != 1:
            raise ValueError(f"{where}: p0 below the first score must be 0 and p1 above the "
                             f"last 1, as every fit makes them")
        places = np.empty((2 * n + 1, 2))
        places[0::2], places[1::2] = gaps, ties  # gap 0, tie 0, gap 1, ..., gap n
        steps = np.diff(places, axis=0)
        if np.any(steps < -_ROUNDING):
            step, column = np.argwhere(steps < -_ROUNDING)[0]
            raise ValueError(f"{where}: p{column} decreases from {_place_name(step)} to "
                             f"{_place_name(step + 1)} (a fitted Venn-Abers map is "
                             f"non-decreasing in the score)")
        calibrator = cls()
        calibrator.scores_ = scores
        calibrator.gap_bounds_, calibrator.tie_bounds_ = gaps, ties
        return calibrator


def _place_name(index):
    """Place ``index`` of the sequence gap 0, tie 0, gap 1, ... as its pair's name."""
    return f"gap_bounds[{index // 2}]" if index % 2 == 0 else f"tie_bounds[{index // 2}]"


def _calibration_cases(scores, labels, sample_weight):
    """Scores and labels as float64 vectors, and the weights (None when not
    given), without the cases of weight 0: a map fitted with them is the map
    fitted without them."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.float64)
    if scores.ndim != 1 or labels.shape != scores.shape:
        raise ValueError(f"scores and labels must be vectors of one length; got shapes "
                         f"{scores.shape} and {labels.shape}")
    if sample_weight is None:
        if scores.shape[0] == 0:
            raise ValueError("a calibration map needs at least one case")
        return scores, labels, None
    weight = np.asarray(sample_weight, dtype=np.float64)
    if weight.shape != scores.shape:
        raise ValueError(f"sample_weight has shape {weight.shape}, the scores {scores.shape}")
    if not np.all(np.isfinite(weight)) or np.any(weight < 0):
        raise ValueError("sample_weight must hold finite numbers >= 0")
    counts = weight > 0
    if not counts.any():
        raise ValueError("a calibration map needs at least one case of positive weight")
    if counts.all():
        return scores, labels, weight
    return scores[counts], labels[counts], weight[counts]


def plain_floats(array):
    """A float64 array as (nested) lists of Python floats (or one float)."""
    return np.asarray(array, dtype=np.float64).tolist()


def plain_array(data, key, shape, where):
    """``data[key]`` as a float64 array of finite numbers (of ``shape`` unless None)."""
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


def _check_probabilities(values, where):
    if np.any((values < 0) | (values > 1)):
        raise ValueError(f"{where}: its values must lie in [0, 1]")
