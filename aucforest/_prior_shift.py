"""Bayes' rule for a shift of class priors: a forest's probabilities under the
priors of its draws, back to the training class frequencies.

A forest whose trees draw a balanced sample (``balanced_bootstrap``) or weight
the classes (``class_weight``) sees class k with weight ``w'_k pi_k`` instead of
``pi_k`` (pi_k the training class frequency, weighted by the sample weights),
so its leaf proportions estimate q_k(x) proportional to w'_k pi_k f_k(x), f_k the
class-conditional density. The probabilities under the training priors are

    p_k(x) = (q_k(x) / w'_k) / sum_j (q_j(x) / w'_j)

(Saerens, Latinne & Decaestecker 2002, "Adjusting the outputs of a classifier
to new a priori probabilities: a simple procedure", Neural Computation 14(1)
21-41, eq. 2.4; Elkan 2001, "The foundations of cost-sensitive learning",
IJCAI, theorem 2). ``w'_k`` is the share of class k in the trees' weighted
draws divided by its training share pi_k. Calibration and the cost-matrix rule
work on these corrected probabilities (docs/user_guide.md, section 13).
"""
import numpy as np
from sklearn.utils.class_weight import compute_sample_weight

__all__ = ["draw_class_weights", "to_training_priors", "training_class_prior"]


def training_class_prior(classes, y, sample_weight=None):
    """Training class frequencies pi_k, weighted by the sample weights.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted class labels (a fitted forest's ``classes_``).
    y : array-like of shape (n_samples,)
        Training labels, each one of ``classes``.
    sample_weight : array-like of shape (n_samples,), default=None
        None: all one.

    Returns
    -------
    ndarray of shape (n_classes,)
    """
    codes = _encode(classes, y)
    totals = np.bincount(codes, weights=sample_weight, minlength=len(classes))
    return totals / totals.sum()


def draw_class_weights(forest, y, sample_weight=None):
    """Effective weight w'_k of each class in a fitted forest's draws relative
    to its training share.

    The trees weight case i by sample_weight_i x class_weight_k x its
    multiplicity in the tree's draw. A plain bootstrap (or subsample) draws
    every case equally often on average, so w'_k is proportional to the class
    weight. The balanced bootstrap draws the same number of cases m from each
    class, among the n_k+ cases of positive sample weight, so a case of class
    k is drawn m / n_k+ times on average and w'_k is proportional to
    class_weight_k / n_k+. Under ``class_weight="balanced_subsample"`` each
    tree weights class k by n_s / (K n_s,k) over its own draw of n_s cases;
    w'_k uses the expected counts n_s,k (proportional to n_k, or equal under
    the balanced bootstrap, where the weights are then all one): a ratio of
    expectations, exact for the other settings.

    Parameters
    ----------
    forest : fitted AUCForestClassifier or scikit-learn forest classifier
        Read: ``classes_``, ``class_weight``, ``balanced_bootstrap`` (False
        when absent) and ``bootstrap``.
    y : array-like of shape (n_samples,)
        The labels the forest was fitted on.
    sample_weight : array-like of shape (n_samples,), default=None
        The sample weights it was fitted with (None: all one).

    Returns
    -------
    ndarray of shape (n_classes,)
        w'_k, scaled so that sum_k pi_k w'_k = 1; all ones for a forest that
        neither balances nor weights its classes. 0 for a class the trees
        never weigh (class weight 0, or no case of positive sample weight).
    """
    classes = forest.classes_
    y = np.asarray(y)
    codes = _encode(classes, y)
    n_classes = len(classes)
    weight = np.ones(codes.shape[0]) if sample_weight is None else np.asarray(
        sample_weight, dtype=np.float64)
    balanced = bool(getattr(forest, "balanced_bootstrap", False)) and getattr(
        forest, "bootstrap", True)
    class_weight = _per_class_weight(forest.class_weight, balanced, y, codes, n_classes)
    positive = np.bincount(codes[weight > 0], minlength=n_classes).astype(np.float64)
    return draw_class_weights_of_sums(class_weight, positive,
                                      training_class_prior(classes, y, weight), balanced)


def draw_class_weights_of_sums(class_weight, positive, prior, balanced):
    """`draw_class_weights` from per-class sums (what a fit on rows spread over
    dask workers has): the class weights as the trees apply them, the cases of
    positive sample weight n_k+ and the training prior pi_k of each class,
    and whether the trees draw a balanced sample (bootstrap and
    ``balanced_bootstrap``)."""
    relative = np.array(class_weight, dtype=np.float64)
    if balanced:  # a case of class k is drawn m / n_k+ times on average
        relative = np.divide(relative, positive, out=np.zeros(len(prior)), where=positive > 0)
    seen = prior > 0
    if np.all(relative[seen] == relative[seen][0]) and relative[seen][0] > 0:
        return np.ones(len(prior))
    return relative / np.dot(prior, relative)


def to_training_priors(proba, draw_weights):
    """Probabilities under the training priors from those under the draws':
    ``p_k = (q_k / w'_k) / sum_j (q_j / w'_j)``.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        q_k(x), e.g. a forest's ``predict_proba`` or ``oob_decision_function_``;
        rows of NaN (no out-of-bag prediction) stay NaN.
    draw_weights : array-like of shape (n_classes,)
        w'_k from `draw_class_weights`. A class of weight 0 was never seen by
        the trees: its probability is 0.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        Rows sum to 1 (a row whose q is 0 on every class of positive weight is
        returned unchanged).
    """
    proba = np.asarray(proba, dtype=np.float64)
    draw_weights = np.asarray(draw_weights, dtype=np.float64)
    if proba.ndim != 2 or proba.shape[1] != draw_weights.shape[0]:
        raise ValueError(f"proba of shape {proba.shape} does not match "
                         f"{draw_weights.shape[0]} class weights")
    if np.any(draw_weights < 0) or not np.all(np.isfinite(draw_weights)):
        raise ValueError(f"draw_weights must be finite and >= 0; got {draw_weights}")
    weighed = draw_weights > 0
    scaled = np.zeros_like(proba)
    scaled[:, weighed] = proba[:, weighed] / draw_weights[weighed]
    total = scaled.sum(axis=1, keepdims=True)
    empty = (total == 0).ravel()
    total[empty] = 1.0
    scaled /= total
    scaled[empty] = proba[empty]
    return scaled


def _per_class_weight(class_weight, balanced, y, codes, n_classes):
    """Class weight of each class as the trees apply it, in ``classes_`` order."""
    if class_weight is None:
        return np.ones(n_classes)
    if class_weight == "balanced_subsample":
        if balanced:  # every tree's draw holds m cases of each class: weights all equal
            return np.ones(n_classes)
        class_weight = "balanced"  # n_s / (K n_s,k) at the expected n_s,k
    case_weight = compute_sample_weight(class_weight, y)
    first = np.unique(codes, return_index=True)[1]  # one case of each class
    return case_weight[first].astype(np.float64)


def _encode(classes, y):
    """Index of each label of y in the sorted ``classes``; ValueError for others."""
    y = np.asarray(y)
    codes = np.searchsorted(classes, y)
    codes = np.clip(codes, 0, len(classes) - 1)
    if not np.all(classes[codes] == y):
        unknown = y[classes[codes] != y][:1].tolist()[0]
        raise ValueError(f"y holds the label {unknown!r}, which is not one of the "
                         f"forest's classes_ {classes.tolist()}")
    return codes
