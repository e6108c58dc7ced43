"""Paired statistics over data sets (or cells, or seeds).

* ``paired_test(a, b)``: the Wilcoxon signed-rank test of a - b
  (``scipy.stats.wilcoxon`` of the differences, two-sided, zeros dropped by
  its "wilcox" rule) with the mean and median difference and the
  wins/ties/losses of a.
* ``spread(values)``: mean, sd (ddof 1) and median.
* ``ranks(table)``: the rank of each system (column) within each data set
  (row), 1 = best, ties averaged.
* ``friedman_nemenyi(table)``: Friedman's test over the ranks and Nemenyi's
  critical difference, CD = q_alpha(k, inf) / sqrt(2) * sqrt(k (k + 1) / (6 N))
  (Demsar 2006, J. Mach. Learn. Res. 7:1-30; q from the studentized range).
"""
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class PairedResult:
    """Paired comparison of a against b over n pairs; diff = a - b."""
    n: int
    mean_diff: float
    median_diff: float
    wins: int
    ties: int
    losses: int
    pvalue: float  # nan when no pair differs

    @property
    def wtl(self):
        """"wins/ties/losses" of a."""
        return f"{self.wins}/{self.ties}/{self.losses}"


def paired_test(a, b, tol=0.0):
    """Wilcoxon signed-rank test of the paired differences a - b.

    Series are paired by their index, arrays by position; pairs where either
    side is missing (NaN) are left out. Differences of at
    most ``tol`` in absolute value are dropped before the test (tol=0 keeps the
    differences as they are, and scipy's "wilcox" rule drops exact zeros).
    """
    if not (isinstance(a, pd.Series) and isinstance(b, pd.Series)):
        a, b = pd.Series(np.asarray(a, dtype=float)), pd.Series(np.asarray(b, dtype=float))
    pair = pd.concat([a, b], axis=1, keys=["a", "b"]).dropna()  # aligned on the index
    diff = (pair["a"] - pair["b"]).to_numpy()
    tested = diff if tol == 0 else diff[np.abs(diff) > tol]
    pvalue = float(stats.wilcoxon(tested).pvalue) if np.any(tested != 0) else float("nan")
    return PairedResult(n=int(diff.size), mean_diff=float(diff.mean()) if diff.size else np.nan,
                        median_diff=float(np.median(diff)) if diff.size else np.nan,
                        wins=int((diff > 0).sum()), ties=int((diff == 0).sum()),
                        losses=int((diff < 0).sum()), pvalue=pvalue)


def spread(values):
    """(mean, sd with ddof 1, median) of a sequence."""
    values = pd.Series(values, dtype=float)
    return float(values.mean()), float(values.std()), float(values.median())


def ranks(table, higher_is_better=True):
    """Rank of each column within each row of a data set x system table (1 = best,
    ties share the average rank)."""
    return table.rank(axis=1, ascending=not higher_is_better, method="average")


@dataclass(frozen=True)
class RankTest:
    """Friedman's test and Nemenyi's critical difference over N data sets."""
    mean_ranks: pd.Series  # system -> mean rank (1 = best), best first
    n_datasets: int
    statistic: float
    pvalue: float
    cd: float
    alpha: float


def nemenyi_cd(k, n, alpha=0.05):
    """Nemenyi's critical difference of mean ranks for k systems on n data sets."""
    q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * n)))


def friedman_nemenyi(table, alpha=0.05, higher_is_better=True):
    """Friedman test (scipy.stats.friedmanchisquare) of a data set x system
    table with no missing cells, and the Nemenyi critical difference."""
    table = table.dropna()
    mean_ranks = ranks(table, higher_is_better).mean().sort_values()
    statistic, pvalue = stats.friedmanchisquare(*[table[c].to_numpy() for c in table.columns])
    return RankTest(mean_ranks=mean_ranks, n_datasets=len(table), statistic=float(statistic),
                    pvalue=float(pvalue), cd=nemenyi_cd(table.shape[1], len(table), alpha),
                    alpha=alpha)


def cliques(mean_ranks, cd):
    """Maximal groups of systems whose mean ranks lie within cd of each other
    (the bars of a critical-difference diagram), as (first, last) positions in
    the sorted order; single systems are left out."""
    values = np.asarray(mean_ranks, dtype=float)
    groups = []
    for i in range(values.size):
        j = i
        while j + 1 < values.size and values[j + 1] - values[i] <= cd:
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in groups):
            groups.append((i, j))
    return groups
