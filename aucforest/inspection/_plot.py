"""Plots of variable importance and of the OOB curve (matplotlib, optional)."""
import numpy as np

from ._intervals import ImportanceIntervals


def plot_importance(result, feature_names=None, *, max_features=None, ax=None):
    """Plot VIMP as horizontal bars, most important on top, with intervals.

    Parameters
    ----------
    result : ImportanceIntervals or the Bunch of `oob_importance`
        Intervals: bars at ``importance`` with ``[lower, upper]`` whiskers;
        a Bunch: bars at ``importances_mean`` with ``+- importances_std``
        whiskers (the spread over repeats).
    feature_names : sequence of str, default=None
        Names of the features on the vertical axis; default ``x0, x1, ...``.
    max_features : int, default=None
        Show only this many of the most important features.
    ax : matplotlib Axes, default=None
        Axes to draw into; default a new figure's axes.

    Returns
    -------
    matplotlib Axes
        The axes drawn into.

    Raises
    ------
    ValueError
        If ``feature_names`` does not name every feature.
    """
    if isinstance(result, ImportanceIntervals):
        value, low, high = result.importance, result.lower, result.upper
        whisker = f"{100 * result.confidence_level:g}% interval"
    else:
        value = result.importances_mean
        low, high = value - result.importances_std, value + result.importances_std
        whisker = "± sd over repeats"
    names = np.asarray(feature_names if feature_names is not None
                       else [f"x{j}" for j in range(value.shape[0])], dtype=str)
    if names.shape != value.shape:
        raise ValueError(f"feature_names has {names.size} names for {value.size} features")
    order = np.argsort(-value, kind="stable")[:max_features][::-1]  # largest at the top
    ax = ax if ax is not None else _new_axes(figsize=(6, 0.3 * order.size + 1.2))
    ax.barh(np.arange(order.size), value[order], color="tab:blue",
            xerr=[value[order] - low[order], high[order] - value[order]],
            error_kw={"ecolor": "black", "capsize": 2, "elinewidth": 1})
    ax.set_yticks(np.arange(order.size), names[order])
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel(f"OOB permutation importance (whiskers: {whisker})")
    return ax


def plot_oob_curve(scores, *, ax=None, label=None, ylabel="OOB AUC"):
    """Plot the OOB score against the number of trees (the output of `oob_curve`).

    Parameters
    ----------
    scores : array-like of shape (n_trees,)
        ``scores[t]`` is the OOB score of the first ``t + 1`` trees, as
        `oob_curve` returns it.
    ax : matplotlib Axes, default=None
        Axes to draw into; default a new figure's axes.
    label : str, default=None
        Legend entry of the curve; None draws no legend.
    ylabel : str, default="OOB AUC"
        Label of the vertical axis.

    Returns
    -------
    matplotlib Axes
        The axes drawn into.
    """
    scores = np.asarray(scores, dtype=float)
    ax = ax if ax is not None else _new_axes(figsize=(5.5, 3.5))
    ax.plot(np.arange(1, scores.size + 1), scores, label=label)
    ax.set_xlabel("number of trees")
    ax.set_ylabel(ylabel)
    if label is not None:
        ax.legend()
    return ax


def _new_axes(figsize):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plots need matplotlib, an optional dependency: "
                          "pip install 'aucforest[plot]' (or pip install matplotlib)") from None
    return Figure(figsize=figsize, layout="constrained").add_subplot()
