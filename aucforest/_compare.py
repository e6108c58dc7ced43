"""AUC splitting against Gini splitting, by repeated stratified cross-validation.

Behind ``aucforest compare``. Each fold fits one forest per split criterion
and scores its test-set probabilities under both decision rules (RFQ and
argmax): the decision changes the labels, not the probabilities, so the AUC
of a criterion is the same under both rules.

The bundled default data sets, made imbalanced by subsampling one class
without replacement (``numpy.random.RandomState(seed)``, seed 0 by default):

* **breast cancer** (scikit-learn's ``load_breast_cancer``, 30 features):
  all 357 benign cases and 36 of the 212 malignant ones (1 malignant to
  about 10 benign).
* **wine** (``load_wine``, 13 features, 3 classes): all 59 cases of class_0
  and 71 of class_1, and 12 of the 48 of class_2.
"""
import time
from typing import NamedTuple

import numpy as np
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.model_selection import RepeatedStratifiedKFold

CRITERIA = ("auc", "gini")
DECISIONS = ("rfq", "argmax")
SCORES = ("auc", "gmean", "balanced_accuracy")
SCORE_TITLES = {"auc": "AUC", "gmean": "G-mean", "balanced_accuracy": "balanced accuracy"}


class Dataset(NamedTuple):
    """A named classification data set."""

    name: str
    X: np.ndarray
    y: np.ndarray
    description: str


class ComparisonRow(NamedTuple):
    """Scores of one (data set, criterion, decision) over all folds.

    ``scores`` maps "auc", "gmean" and "balanced_accuracy" to one value per
    fold; ``fit_seconds`` holds the forest's fit time per fold.
    """

    dataset: str
    criterion: str
    decision: str
    scores: dict
    fit_seconds: np.ndarray


def default_datasets(seed=0):
    """The bundled data sets with induced imbalance (see the module docstring)."""
    return [_subsampled("breast cancer", load_breast_cancer(), "malignant", 36, seed),
            _subsampled("wine", load_wine(), "class_2", 12, seed)]


def _subsampled(name, bunch, minority, n_kept, seed):
    """All cases except those of class ``minority``, of which ``n_kept`` are drawn."""
    labels = bunch.target_names[bunch.target]
    members = np.flatnonzero(labels == minority)
    kept = np.random.RandomState(seed).choice(members, size=n_kept, replace=False)
    rows = np.sort(np.concatenate([np.flatnonzero(labels != minority), kept]))
    counts = ", ".join(f"{c} {n}" for c, n in zip(*np.unique(labels[rows], return_counts=True)))
    description = f"{name}: {rows.size} cases ({counts}), {bunch.data.shape[1]} features"
    return Dataset(name, bunch.data[rows], labels[rows], description)


def check_fold_sizes(y, n_splits):
    """ValueError unless every class has at least ``n_splits`` cases."""
    classes, counts = np.unique(y, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"the target has only one class ({classes[0].item()!r})")
    if counts.min() < n_splits:
        raise ValueError(f"class {classes[np.argmin(counts)].item()!r} has only {counts.min()} cases; "
                         f"{n_splits}-fold cross-validation needs at least {n_splits} per class "
                         "(lower --folds)")


def compare(dataset, *, n_estimators, n_splits, n_repeats, seed, n_jobs=None, bar=None):
    """Cross-validate AUC and Gini forests on one data set.

    Parameters
    ----------
    dataset : Dataset
    n_estimators : int
        Trees per forest.
    n_splits, n_repeats : int
        Folds and repeats of :class:`~sklearn.model_selection.RepeatedStratifiedKFold`.
    seed : int
        Seeds the folds and the forests.
    n_jobs : int or None
        Threads per forest.
    bar : progress bar or None
        Updated once per fold.

    Returns
    -------
    list of ComparisonRow
        One per (criterion, decision), criteria and decisions in the order
        of CRITERIA and DECISIONS.
    """
    check_fold_sizes(dataset.y, n_splits)
    folds = RepeatedStratifiedKFold(n_splits=n_splits, n_repeats=n_repeats, random_state=seed)
    results = {(c, d): {s: [] for s in SCORES} for c in CRITERIA for d in DECISIONS}
    fit_seconds = {c: [] for c in CRITERIA}
    for train, test in folds.split(dataset.X, dataset.y):
        for criterion in CRITERIA:
            forest, seconds = _timed_fit(dataset.X[train], dataset.y[train], criterion,
                                         n_estimators, seed, n_jobs)
            fit_seconds[criterion].append(seconds)
            proba = forest.predict_proba(dataset.X[test])
            for decision in DECISIONS:
                _record(results[criterion, decision], dataset.y[test], proba, forest, decision)
        if bar is not None:
            bar.update()
    return [ComparisonRow(dataset.name, c, d, {s: np.array(v) for s, v in results[c, d].items()},
                          np.array(fit_seconds[c]))
            for c in CRITERIA for d in DECISIONS]


def _timed_fit(X, y, criterion, n_estimators, seed, n_jobs):
    from ._forest import AUCForestClassifier

    forest = AUCForestClassifier(n_estimators=n_estimators, criterion=criterion,
                                 n_jobs=n_jobs, random_state=seed)
    started = time.perf_counter()
    forest.fit(X, y)
    return forest, time.perf_counter() - started


def _record(scores, y_test, proba, forest, decision):
    """Append the fold's AUC, G-mean and balanced accuracy under ``decision``."""
    from .metrics import imbalance_report

    report = imbalance_report(y_test, proba, forest.classes_, decision=decision,
                              priors=forest.class_prior_)
    for name in SCORES:
        scores[name].append(getattr(report, name))


def format_table(rows):
    """A text table: mean ± sd over folds of each score, and of the fit time."""
    header = (f"{'data set':<15}{'criterion':<11}{'decision':<10}"
              + "".join(f"{SCORE_TITLES[s]:<19}" for s in SCORES) + "fit time (s)")
    lines = [header, "-" * len(header)]
    for row in rows:
        cells = "".join(f"{_mean_sd(row.scores[s], 3):<19}" for s in SCORES)
        lines.append(f"{row.dataset:<15}{row.criterion:<11}{row.decision:<10}{cells}"
                     f"{_mean_sd(row.fit_seconds, 2)}")
    return "\n".join(lines)


def _mean_sd(values, digits):
    return f"{np.mean(values):.{digits}f} ± {np.std(values, ddof=1) if values.size > 1 else 0:.{digits}f}"


def plot_comparison(rows, path):
    """Save box plots of each score per configuration, one row of panels per data set."""
    Figure = matplotlib_figure()
    datasets = list(dict.fromkeys(row.dataset for row in rows))
    figure = Figure(figsize=(4 * len(SCORES), 3.2 * len(datasets)), layout="constrained")
    axes = figure.subplots(len(datasets), len(SCORES), squeeze=False)
    for i, name in enumerate(datasets):
        mine = [row for row in rows if row.dataset == name]
        captions = [f"{row.criterion}\n{row.decision}" for row in mine]
        for j, score in enumerate(SCORES):
            axes[i, j].boxplot([row.scores[score] for row in mine])
            axes[i, j].set_xticks(range(1, len(mine) + 1), captions)
            axes[i, j].set_title(f"{name}: {SCORE_TITLES[score]}", fontsize="medium")
    figure.savefig(path)


def matplotlib_figure():
    """matplotlib's Figure class; ImportError with the install command if absent."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plots need matplotlib, an optional dependency: "
                          "pip install 'aucforest[plot]' (or pip install matplotlib)") from None
    return Figure
