"""ROC plots with the AUC and its DeLong interval in the legend, reliability
diagrams, and the coverage of prediction sets against their level."""
import numpy as np

from ._auc import mann_whitney_auc
from ._delong import auc_ci
from ._reliability import reliability_curve
from ._roc import roc_curve
from ._validation import (
    check_known_labels,
    check_labels,
    check_score_matrix,
    check_scores,
)


def plot_roc(y_true, y_score, *, labels=None, multiclass="ovr",
             confidence=0.95, name=None, ax=None):
    """Plot empirical ROC curves, each labelled with its AUC and DeLong interval.

    Binary ``y_true`` with 1-d ``y_score`` (or a two-column probability
    matrix) gives one curve, with ``labels[1]`` as the positive class; the
    legend's title names it. With more classes ``y_score`` is an
    (n_samples, n_classes) matrix and ``multiclass`` chooses the curves:

    * ``"ovr"``: one curve per class ``k``, column ``k`` of class ``k``
      against all other classes;
    * ``"ovo"``: one curve per class pair ``i < j``, column ``i`` on the rows
      of classes ``i`` and ``j`` (the ``A(i, j)`` of Hand & Till's AUC).

    Each legend entry reads ``AUC 0.853 [0.801, 0.905]`` with the DeLong
    interval of :func:`auc_ci` (left out when a class has a single case).
    Requires matplotlib (``pip install aucforest[plot]``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels.
    y_score : array-like of shape (n_samples,) or (n_samples, n_classes)
        Scores; column ``k`` belongs to ``labels[k]``.
    labels : array-like, default=None
        Column labels; default the sorted labels of ``y_true``.
    multiclass : {"ovr", "ovo"}, default="ovr"
        The curves drawn for more than two classes: one per class against
        the others, or one per pair of classes.
    confidence : float, default=0.95
        Coverage of the intervals shown.
    name : str, default=None
        Prefix of every legend entry (e.g. the classifier's name).
    ax : matplotlib Axes, default=None
        Axes to draw into; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn into, with a legend and the chance diagonal.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    ValueError
        On invalid input or a bad ``multiclass``.
    """
    plt = _import_pyplot()
    if multiclass not in ("ovr", "ovo"):
        raise ValueError(f"multiclass must be 'ovr' or 'ovo', got {multiclass!r}.")
    y_true = check_labels(y_true)
    labels = np.unique(y_true) if labels is None else np.asarray(labels)
    check_known_labels(y_true, labels, "y_true")
    if ax is None:
        ax = plt.figure().add_subplot()
    prefix = f"{name}: " if name else ""
    for caption, positive, score in _curves(y_true, y_score, labels, multiclass):
        curve = roc_curve(positive, score)
        ax.step(curve.fpr, curve.tpr, where="post",
                label=prefix + caption + _auc_text(positive, score, confidence))
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey", linewidth=1)
    ax.set(xlabel="False positive rate", ylabel="True positive rate",
           xlim=(0, 1), ylim=(0, 1.01), aspect="equal")
    title = f"positive class: {labels[1]}" if labels.size == 2 else None
    ax.legend(loc="lower right", fontsize="small", title=title, title_fontsize="small")
    return ax


def _curves(y_true, y_score, labels, multiclass):
    """Yield ``(caption, positive mask, scores)`` for each curve to draw."""
    if labels.size == 2 and np.ndim(y_score) == 1:
        yield "", y_true == labels[1], check_scores(y_score, y_true.size)
        return
    y_score = check_score_matrix(y_score, y_true.size, labels.size, name="y_score")
    if labels.size == 2:
        yield "", y_true == labels[1], y_score[:, 1]
        return
    present = [k for k in range(labels.size) if np.any(y_true == labels[k])]
    if multiclass == "ovr":
        for k in present:
            yield f"{labels[k]} vs rest, ", y_true == labels[k], y_score[:, k]
        return
    for a, i in enumerate(present):
        for j in present[a + 1:]:
            rows = (y_true == labels[i]) | (y_true == labels[j])
            yield (f"{labels[i]} vs {labels[j]}, ", y_true[rows] == labels[i],
                   y_score[rows, i])


def _auc_text(positive, score, confidence):
    if min(np.count_nonzero(positive), np.count_nonzero(~positive)) < 2:
        return f"AUC {mann_whitney_auc(positive, score):.3f}"
    result = auc_ci(positive, score, confidence=confidence)
    return f"AUC {result.auc:.3f} [{result.low:.3f}, {result.high:.3f}]"


def plot_reliability(y_true, y_proba, *, labels=None, n_bins=10, strategy="uniform",
                     name=None, counts=False, ax=None):
    """Draw a reliability diagram: observed frequency against mean prediction.

    One curve per class against the rest (for two classes, of ``labels[1]``),
    through the non-empty bins of :func:`reliability_curve`, with the
    diagonal a calibrated model follows. Call it again with the same ``ax``
    and another ``name`` to compare models (e.g. a raw and a calibrated
    forest). Requires matplotlib (``pip install aucforest[plot]``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Probabilities, as :func:`reliability_curve` takes them.
    labels : array-like, default=None
        Column labels; default the sorted labels of ``y_true``.
    n_bins : int, default=10
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Bins of equal width or of equal counts.
    name : str, default=None
        Legend entry (prefix of each class's entry for more than two
        classes).
    counts : bool, default=False
        Write each bin's number of cases beside its point.
    ax : matplotlib Axes, default=None
        Axes to draw into; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn into, with a legend and the diagonal.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    ValueError
        On invalid input (see :func:`reliability_curve`).
    """
    plt = _import_pyplot("plot_reliability")
    curve = reliability_curve(y_true, y_proba, labels=labels, n_bins=n_bins,
                              strategy=strategy)
    if ax is None:
        ax = plt.figure().add_subplot()
    if not any(line.get_label() == "perfectly calibrated" for line in ax.get_lines()):
        ax.plot([0, 1], [0, 1], linestyle=":", color="grey", linewidth=1,
                label="perfectly calibrated")
    binary = np.ndim(y_proba) == 1 or np.shape(y_proba)[1] == 2
    for k, label in enumerate(curve.classes):
        caption = (name or "model") if binary else f"{name + ': ' if name else ''}{label}"
        (line,) = ax.plot(curve.mean_predicted[k], curve.observed[k], marker="o",
                          label=caption)
        if counts:
            for x, y, n in zip(curve.mean_predicted[k], curve.observed[k], curve.counts[k]):
                right_edge = x > 0.85  # the text to the left of the point, inside the axes
                ax.annotate(str(n), (x, y), textcoords="offset points",
                            xytext=(-4 if right_edge else 4, -10),
                            ha="right" if right_edge else "left", fontsize="x-small",
                            color=line.get_color())
    ax.set(xlabel="Mean predicted probability", ylabel="Observed frequency",
           xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), aspect="equal")
    title = f"class: {curve.classes[0]}" if binary else None
    ax.legend(loc="upper left", fontsize="small", title=title, title_fontsize="small")
    return ax


def plot_coverage(alphas, coverage, *, labels, ax=None):
    """Draw the coverage of prediction sets against their level alpha, per class.

    One line per class: the share of its cases whose set at level alpha
    holds their label, against alpha; and the line ``1 - alpha``, the
    coverage a conformal predictor promises in each class (a Mondrian one,
    Vovk, Gammerman & Shafer 2005, ch. 4): a class whose line falls below it
    is covered less often than promised. Requires matplotlib (``pip install
    aucforest[plot]``).

    Parameters
    ----------
    alphas : array-like of shape (n_alphas,)
        The levels, in (0, 1).
    coverage : array-like of shape (n_alphas, n_classes)
        ``coverage[a, k]``: the share of the cases of ``labels[k]`` covered
        at ``alphas[a]`` (NaN: no case of the class, not drawn).
    labels : array-like of shape (n_classes,)
        The classes of the columns.
    ax : matplotlib Axes, default=None
        Axes to draw into; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn into, with a legend and the line ``1 - alpha``.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    ValueError
        On mismatched shapes or a level outside (0, 1).
    """
    plt = _import_pyplot("plot_coverage")
    alphas = np.asarray(alphas, dtype=np.float64)
    coverage = np.asarray(coverage, dtype=np.float64)
    labels = np.asarray(labels)
    if alphas.ndim != 1 or coverage.shape != (alphas.size, labels.size):
        raise ValueError(f"coverage must have shape (n_alphas, n_classes) = ({alphas.size}, "
                         f"{labels.size}); got {coverage.shape}.")
    if np.any((alphas <= 0) | (alphas >= 1)):
        raise ValueError("alphas must lie strictly between 0 and 1.")
    if ax is None:
        ax = plt.figure().add_subplot()
    ax.plot(alphas, 1 - alphas, linestyle=":", color="grey", linewidth=1,
            label="1 - alpha (promised)")
    for k, label in enumerate(labels):
        if not np.all(np.isnan(coverage[:, k])):
            ax.plot(alphas, coverage[:, k], label=str(label))
    lowest = min(1 - alphas.max(), np.nanmin(coverage, initial=1.0))
    ax.set(xlabel="alpha (miss rate allowed in each class)",
           ylabel="Coverage (share of the class's cases in their set)",
           xlim=(0, alphas.max()), ylim=(max(0.0, lowest - 0.05), 1.01))
    ax.legend(loc="lower left", fontsize="small", title="class", title_fontsize="small")
    return ax


def _import_pyplot(function="plot_roc"):
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            f"{function} needs matplotlib, an optional dependency of aucforest: "
            "install it with `pip install aucforest[plot]` (or `pip install "
            "matplotlib`)."
        ) from error
    return plt
