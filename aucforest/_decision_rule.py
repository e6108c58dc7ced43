"""The decision rule: one typed value that turns class probabilities into a class.

Four kinds, parsed and validated once by `DecisionRule.parse` (one set of
messages), applied by `DecisionRule.apply`, written as plain data by
`DecisionRule.to_plain` (model files, ONNX metadata, JSON output):

* ``"rfq"``: the random forests quantile classifier (O'Brien & Ishwaran 2019,
  eq. (4) with the class frequencies as quantiles): ``argmax_k p_k(x) / pi_k``;
  for two classes the minority class when ``p_min(x) >= pi_min``;
* ``"argmax"``: the Bayes rule, ``argmax_k p_k(x)``;
* a float ``t`` in (0, 1), two classes: the second class when ``p_1(x) >= t``;
* a K x K cost matrix C (``C[j, k]``: the cost of predicting class k when the
  truth is j): ``argmin_k sum_j p_j(x) C[j, k]`` (Elkan 2001, "The
  foundations of cost-sensitive learning", IJCAI, eq. (1)), from the
  probabilities under the training priors (`to_training_priors`).

One tie rule for all of them: scores within a relative ``TIE_TOLERANCE`` of a
row's best are tied, and a tie goes to the first class in the rule's order of
preference, which is the class index except under RFQ, which prefers the rarer
class (smaller prior, then the lower index; for two classes ``p_min >= pi_min``
predicts the minority, as the paper's rule). Probabilities summed over the
trees in another order (threads, onnxruntime) differ in the last bits only, so
every implementation of a rule that follows this tie rule gives the same label.
"""
from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy.sparse import csr_array, issparse

from ._compat import InvalidParameterError
from ._prior_shift import to_training_priors
from ._rfq import rfq_classes, rfq_classes_sparse

__all__ = ["DEFAULT_DECISION", "TIE_TOLERANCE", "DecisionRule", "decide", "first_best", "rule_of"]

NAMED_RULES = ("rfq", "argmax")
DEFAULT_DECISION = "rfq"
# scores within this relative distance of a row's best are a tie (summation order)
TIE_TOLERANCE = 1e-12
_RULES = "'rfq', 'argmax', a float threshold in (0, 1) or a K x K cost matrix"


@dataclass(frozen=True, eq=False)
class DecisionRule:
    """A validated decision rule for ``n_classes`` classes (see the module).

    Build it with `parse` (from what a user gives) or `from_plain` (from a
    file); never directly.

    Attributes
    ----------
    kind : {"rfq", "argmax", "threshold", "cost"}
    n_classes : int
    threshold : float or None
        The threshold on ``p_1`` (kind "threshold").
    costs : ndarray of shape (n_classes, n_classes) or None
        Read-only float64 cost matrix (kind "cost").
    """

    kind: str
    n_classes: int
    threshold: float = None
    costs: np.ndarray = None

    # ------------------------------------------------------------ building
    @classmethod
    def parse(cls, decision, n_classes, name="decision"):
        """The rule ``decision`` names, validated for ``n_classes`` classes.

        Parameters
        ----------
        decision : {"rfq", "argmax"}, float in (0, 1), array-like of shape \
(n_classes, n_classes) or DecisionRule
        n_classes : int
        name : str, default="decision"
            How the messages call the value.

        Returns
        -------
        DecisionRule

        Raises
        ------
        InvalidParameterError
            A ValueError naming what is wrong: an unknown name, a threshold outside (0, 1)
            or with other than two classes, a matrix of the wrong shape, or a
            cost that is NaN, infinite or negative.
        """
        n_classes = int(n_classes)
        if isinstance(decision, DecisionRule):
            if decision.n_classes != n_classes:
                raise InvalidParameterError(f"the {name} rule was made for "
                                            f"{decision.n_classes} classes, not {n_classes}")
            return decision
        if isinstance(decision, str):
            if decision not in NAMED_RULES:
                raise InvalidParameterError(
                    f"The {name!r} parameter must be {_RULES}, got {decision!r}.")
            return cls(decision, n_classes)
        if isinstance(decision, (bool, np.bool_)) or decision is None:
            raise InvalidParameterError(
                f"The {name!r} parameter must be {_RULES}, got {decision!r}.")
        if isinstance(decision, Real):
            if not 0.0 < decision < 1.0:  # a plain number in the message, not np.float64(...)
                raise InvalidParameterError(
                    f"The {name!r} parameter must be {_RULES}, got {float(decision)!r}.")
            if n_classes != 2:
                raise InvalidParameterError(
                    f"{name}={decision!r} is a threshold on the positive class and needs "
                    f"exactly two classes; y has {n_classes}. Use {name}='rfq' or 'argmax'.")
            return cls("threshold", n_classes, threshold=float(decision))
        return cls("cost", n_classes, costs=_checked_costs(decision, n_classes, name))

    @classmethod
    def parse_costs(cls, costs, n_classes, name="cost_matrix"):
        """A cost-matrix rule from ``costs`` (K x K, finite, >= 0), messages
        naming ``name``; anything else is refused."""
        if isinstance(costs, (str, Real, DecisionRule)) or costs is None:
            raise InvalidParameterError(
                f"{name} must be a {n_classes} x {n_classes} matrix of costs (C[j, k]: the cost "
                f"of predicting class k when the truth is class j); got {costs!r}.")
        return cls("cost", int(n_classes), costs=_checked_costs(
            costs, int(n_classes), name, f"{name} must be a K x K matrix of costs"))

    @classmethod
    def from_plain(cls, plain, n_classes):
        """The rule of `to_plain`'s output (a str, a float or a list of rows)."""
        return cls.parse(plain, n_classes)

    # ------------------------------------------------------------ reading
    def to_plain(self):
        """The rule as plain data: "rfq", "argmax", a float or a list of rows."""
        if self.kind == "threshold":
            return self.threshold
        if self.kind == "cost":
            return self.costs.tolist()
        return self.kind

    @property
    def parameter(self):
        """The value for ``AUCForestClassifier(decision=...)``."""
        if self.kind == "cost":
            return self.costs.copy()
        return self.to_plain()

    @property
    def short(self):
        """A few words: "rfq", "argmax", "threshold 0.3" or "cost matrix"."""
        if self.kind == "threshold":
            return f"threshold {self.threshold:g}"
        return "cost matrix" if self.kind == "cost" else self.kind

    def describe(self, classes):
        """One line of text: what the rule predicts, with the class labels."""
        classes = np.asarray(classes).tolist()  # Python values: 'b', not np.str_('b')
        if self.kind == "cost":
            return ("least expected cost under the cost matrix (rows: true class, columns: "
                    f"predicted class, in the order {', '.join(map(repr, classes))})")
        if self.kind == "rfq":
            return "rfq with the training class priors"
        if self.kind == "argmax":
            return "argmax"
        return (f"threshold: {classes[1]!r} when its probability is at least "
                f"{self.threshold:g}")

    def preference(self, prior):
        """Class indices in the order ties are given (first wins), the classes
        the rule never predicts left out (under RFQ a class of prior 0)."""
        if self.kind == "rfq":
            prior = np.asarray(prior, dtype=np.float64)
            order = np.argsort(prior, kind="stable")
            return order[prior[order] > 0]
        if self.kind == "threshold":
            return np.array([1, 0])
        return np.arange(self.n_classes)

    def cut(self, prior):
        """(class, c) of a rule that predicts ``class`` when its probability is
        at least ``c`` and the other class otherwise (a threshold, or RFQ with
        two classes), the tolerance applied; None for the other rules.

        A class the rule never predicts has ``c = inf``.
        """
        if self.kind == "threshold":
            return 1, self.threshold - TIE_TOLERANCE * self.threshold
        if self.kind == "rfq" and self.n_classes == 2:
            prior = np.asarray(prior, dtype=np.float64)
            minority = int(np.argmin(prior))  # equal priors: class 0, as argmax would
            if prior[minority] <= 0:  # a class the trees never saw is never predicted
                return minority, np.inf
            return minority, float(prior[minority] - TIE_TOLERANCE * prior[minority])
        return None

    # ------------------------------------------------------------ applying
    def apply(self, proba, prior, draw_weights=None):
        """Index of the predicted class for each row of ``proba``.

        Parameters
        ----------
        proba : ndarray or scipy sparse matrix of shape (n_samples, n_classes)
            A sparse one holds non-negative proportions (a forest's, at many
            classes) and is decided from its stored values under RFQ and argmax.
        prior : ndarray of shape (n_classes,) or None
            Class frequencies pi_k the probabilities were trained under
            (read by RFQ only; None for the other rules).
        draw_weights : ndarray of shape (n_classes,), default=None
            The forest's ``draw_class_weights_``: a cost matrix decides from
            ``to_training_priors(proba, draw_weights)``; None: proba as given.

        Returns
        -------
        ndarray of shape (n_samples,), intp
        """
        if proba.shape[1] != self.n_classes:
            raise ValueError(f"the decision rule is for {self.n_classes} classes; the "
                             f"probabilities have {proba.shape[1]} columns")
        # only RFQ reads the priors; the others' kernels take equal weights
        prior = (np.ones(self.n_classes) if prior is None or self.kind != "rfq"
                 else np.asarray(prior, dtype=np.float64))
        if self.kind in NAMED_RULES and self.n_classes > 2 and issparse(proba):
            return _sparse_rfq(proba, prior, divide=self.kind == "rfq")
        if issparse(proba):
            proba = proba.toarray()
        proba = np.asarray(proba, dtype=np.float64)
        cut = self.cut(prior)
        if cut is not None:
            chosen, at_least = cut
            return np.where(proba[:, chosen] >= at_least, chosen, 1 - chosen).astype(np.intp)
        if self.kind == "rfq":  # one compiled pass, no n x K temporaries
            return rfq_classes(np.ascontiguousarray(proba), prior, TIE_TOLERANCE)
        if self.kind == "argmax":
            return rfq_classes(np.ascontiguousarray(proba), prior, TIE_TOLERANCE, False)
        if draw_weights is not None:
            proba = to_training_priors(proba, draw_weights)
        return first_best(-(proba @ self.costs), self.preference(prior))


def rule_of(model):
    """The rule a fitted model's ``predict`` follows: its ``decision_rule_``, or
    argmax for a model without one (a tree, another library's classifier)."""
    rule = getattr(model, "decision_rule_", None)
    if rule is None:
        rule = DecisionRule.parse("argmax", len(model.classes_))
    return rule


def first_best(scores, order):
    """For each row, the first class of ``order`` whose score is within a
    relative ``TIE_TOLERANCE`` of the row's best (a row of NaN: ``order[0]``).

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes)
    order : ndarray of int
        Class indices in order of preference.

    Returns
    -------
    ndarray of shape (n_samples,), intp
    """
    ordered = scores[:, order]
    best = ordered.max(axis=1, keepdims=True)
    tied = ordered >= best - TIE_TOLERANCE * np.abs(best)
    return np.asarray(order, dtype=np.intp)[np.argmax(tied, axis=1)]


def _checked_costs(decision, n_classes, name, expected=None):
    """``decision`` as a read-only float64 K x K matrix of finite costs >= 0;
    InvalidParameterError naming ``name`` (``expected``: what the value must be)."""
    expected = expected or f"The {name!r} parameter must be {_RULES}"
    try:
        costs = np.array(decision, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"{expected}; got {decision!r}, which is none of them.") from None
    if costs.shape != (n_classes, n_classes):
        raise InvalidParameterError(
            f"{expected}; got an array of shape "
            f"{costs.shape}, and with {n_classes} classes a cost matrix must be {n_classes} x "
            f"{n_classes} (C[j, k]: the cost of predicting class k when "
            "the truth is class j, rows and columns in classes_ order).")
    if np.isnan(costs).any():
        j, k = np.argwhere(np.isnan(costs))[0]
        raise InvalidParameterError(f"{name} cost matrix holds NaN (first at row {j}, column "
                                    f"{k}); every cost must be a finite number >= 0.")
    if not np.isfinite(costs).all():
        j, k = np.argwhere(~np.isfinite(costs))[0]
        raise InvalidParameterError(f"{name} cost matrix holds an infinite cost (first at row "
                                    f"{j}, column {k}); every cost must be a finite number "
                                    ">= 0.")
    if (costs < 0).any():
        j, k = np.argwhere(costs < 0)[0]
        raise InvalidParameterError(f"{name} cost matrix holds a negative cost ({costs[j, k]:g} "
                                    f"at row {j}, column {k}); every cost must be a finite "
                                    "number >= 0.")
    costs.setflags(write=False)
    return costs


def _sparse_rfq(proba, prior, divide):
    """RFQ (``divide``) or argmax of a sparse matrix of non-negative proportions,
    from its stored values (`rfq_classes_sparse`)."""
    rows = csr_array(proba)
    if not rows.has_canonical_format:  # sorted in a copy, not in the caller's
        rows = rows.copy()
        rows.sum_duplicates()  # columns ascending, none stored twice
    return rfq_classes_sparse(rows.indptr.astype(np.intp, copy=False),
                              rows.indices.astype(np.int32, copy=False),
                              rows.data.astype(np.float64, copy=False),
                              prior, TIE_TOLERANCE, divide)


def decide(proba, prior, decision, draw_weights=None):
    """`DecisionRule.parse` then `DecisionRule.apply`, for a value used once
    (a metric's argument, a benchmark's rule): index of each row's class."""
    return DecisionRule.parse(decision, proba.shape[1]).apply(proba, prior, draw_weights)
