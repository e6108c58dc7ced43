"""Evidence plots, drawn from result files only (matplotlib, Agg backend).

* ``cd_diagram``: a critical-difference diagram (Demsar 2006) of mean ranks
  with Nemenyi's CD and bars joining systems closer than it;
* ``fit_time_vs_rows``: fit seconds per tree against training rows, one line
  per system and one panel per thread count;
* ``auc_vs_gini``: per data set (or grid cell), the test AUC of the
  AUC-split forest minus the Gini forest's, against the Gini forest's AUC.

Every figure carries a footer naming the result file, its run's date and
the aucforest version (``stamp``).
"""
import numpy as np

from .report import label
from .stats import cliques


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def stamp(fig, meta, source, more=()):
    """Footer: which result file(s) the figure comes from, each run's date and
    aucforest version. ``more``: further (meta, source) pairs."""
    text = "; ".join(f"{name}: run {label(m)}" for m, name in [(meta, source), *more])
    fig.text(0.995, 0.005, f"from {text}", ha="right", va="bottom", fontsize=7, color="0.35")


def cd_diagram(test, ax, title=None):
    """Draw a critical-difference diagram of a stats.RankTest on ``ax``.

    The rank axis runs from 1 (best, left) to k; the better half of the
    systems is labelled on the left, the other half on the right; thick bars
    join systems whose mean ranks differ by less than the critical difference.
    """
    from matplotlib.transforms import blended_transform_factory
    names = list(test.mean_ranks.index)
    values = test.mean_ranks.to_numpy(dtype=float)
    k = len(names)
    left, right = 0.3, 0.7
    low, high = 1, max(k, 2)

    def x(rank):
        return left + (right - left) * (rank - low) / (high - low)

    tr = blended_transform_factory(ax.transAxes, ax.transData)
    line = dict(color="black", linewidth=0.9, transform=tr, clip_on=False)
    groups = cliques(values, test.cd)
    ax.plot([x(low), x(high)], [0, 0], **line)
    for tick in range(low, high + 1):
        ax.plot([x(tick)] * 2, [0, 0.25], **line)
        ax.text(x(tick), 0.35, str(tick), ha="center", va="bottom", fontsize=8, transform=tr)
    ax.plot([x(low), x(low + test.cd)], [1.3, 1.3], color="black", linewidth=1.6,
            transform=tr, clip_on=False)
    ax.text(x(low + test.cd / 2), 1.45, f"CD = {test.cd:.2f}", ha="center", va="bottom",
            fontsize=8, transform=tr)
    for c, (i, j) in enumerate(groups):
        yb = -0.45 - 0.35 * c
        ax.plot([x(values[i]) - 0.005, x(values[j]) + 0.005], [yb, yb], color="black",
                linewidth=2.6, transform=tr, clip_on=False, solid_capstyle="butt")
    top = -0.8 - 0.35 * len(groups)
    half = (k + 1) // 2
    for i, (name, rank) in enumerate(zip(names, values)):
        if i < half:
            row, end, ha = top - 0.8 * i, 0.28, "right"
        else:
            row, end, ha = top - 0.8 * (k - 1 - i), 0.72, "left"
        ax.plot([x(rank), x(rank), end], [0, row, row], **line)
        ax.text(end + (-0.01 if ha == "right" else 0.01), row, f"{name} ({rank:.2f})",
                ha=ha, va="center", fontsize=8, transform=tr)
    ax.set_ylim(top - 0.8 * half - 0.2, 2.1)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)


def fit_time_vs_rows(frame, axes, systems=None):
    """Fit seconds per tree against training rows, one panel per thread count.

    ``frame`` has one row per (n, p, k, trees, jobs, system) with the median
    fit seconds ``fit_s``; rows of p = 20 are joined by lines, other p drawn
    as hollow markers. ``axes``: one per thread count, in sorted order.
    """
    systems = systems or list(dict.fromkeys(frame["system"]))
    colors = {s: f"C{i % 10}" for i, s in enumerate(systems)}
    markers = "osD^v<>Xph"
    for ax, (jobs, part) in zip(axes, sorted(frame.groupby("jobs"), key=lambda t: t[0])):
        for i, system in enumerate(systems):
            rows = part[part["system"] == system].sort_values("n")
            if rows.empty:
                continue
            per_tree = rows["fit_s"] / rows["trees"]
            main = (rows["p"] == 20).to_numpy()
            ax.plot(rows["n"][main], per_tree[main], marker=markers[i % len(markers)],
                    color=colors[system], label=system, linewidth=1.2, markersize=5)
            if (~main).any():
                ax.plot(rows["n"][~main], per_tree[~main], linestyle="none",
                        marker=markers[i % len(markers)], markerfacecolor="white",
                        color=colors[system], markersize=6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("training rows")
        ax.set_ylabel("fit seconds per tree")
        ax.set_title(f"{jobs} thread{'s' if jobs != 1 else ''}", fontsize=10)
        ax.grid(alpha=0.3, which="both")


def auc_vs_gini(table, ax, title, annotate=True, hue=None, hue_label=None):
    """Per data set: AUC-split minus Gini test AUC (mean over folds or seeds,
    with +-1 standard error of the paired difference) against the Gini AUC.

    ``table`` has one row per data set (index = its name) and the columns
    gini, diff, se (and the ``hue`` column, if given, to colour by).
    """
    groups = [(None, table)] if hue is None else list(table.groupby(hue))
    for i, (value, part) in enumerate(groups):
        ax.errorbar(part["gini"], part["diff"], yerr=part["se"], fmt="o", markersize=4,
                    color=f"C{i}", elinewidth=0.8, capsize=1.5,
                    label=None if hue is None else f"{hue_label or hue} = {value}")
    ax.axhline(0, color="0.3", linewidth=0.8, linestyle="--")
    if annotate:
        for name, row in table.iterrows():
            ax.annotate(str(name), (row["gini"], row["diff"]), fontsize=6,
                        xytext=(3, 2), textcoords="offset points")
    ax.set_xlabel('test AUC, criterion="gini"')
    ax.set_ylabel('test AUC: "auc" - "gini"')
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if hue is not None:
        ax.legend(fontsize=7)


def paired_table(frame, key, system_column, metric, a, b, pair_on):
    """Data set (key) x {gini, diff, se} from long results: the mean of b (the
    Gini AUC), the mean of a - b over the pairs matched on ``pair_on`` (folds
    or seeds), and its standard error."""
    import pandas as pd
    wide = frame[frame[system_column].isin([a, b])].pivot_table(
        index=key + [pair_on], columns=system_column, values=metric)
    diff = wide[a] - wide[b]
    grouped = diff.groupby(level=key)
    out = pd.DataFrame({"gini": wide[b].groupby(level=key).mean(), "diff": grouped.mean(),
                        "se": grouped.std(ddof=1) / np.sqrt(grouped.count())})
    return out.fillna({"se": 0.0})
