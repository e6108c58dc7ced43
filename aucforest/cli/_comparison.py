"""AUC splitting against Gini splitting, by repeated stratified cross-validation.

Behind ``aucforest compare``. Each fold fits one forest per split criterion
(under RFQ, which chooses its node size) and scores its test-set
probabilities under both decision rules (RFQ and argmax): applied after the
fit the decision changes the labels, not the probabilities, so the AUC of a
criterion is the same under both rules. The argmax rows are thus the argmax
applied to the RFQ forest, as ``set_params(decision="argmax")`` after a fit;
a forest fitted with ``decision="argmax"`` may choose another node size
(docs/user_guide.md, section 2).

The bundled default data sets, made imbalanced by subsampling one class
without replacement (``numpy.random.RandomState(seed)``, seed 0 by default):

* **breast cancer** (scikit-learn's ``load_breast_cancer``, 30 features):
  all 357 benign cases and 36 of the 212 malignant ones (1 malignant to
  about 10 benign).
* **wine** (``load_wine``, 13 features, 3 classes): all 59 cases of class_0
  and 71 of class_1, and 12 of the 48 of class_2.

Whether two configurations differ is judged on their paired per-fold scores
by the corrected resampled t-test of Nadeau & Bengio (2003), which widens the
ordinary paired t-test for the overlap of the training sets of repeated
k-fold cross-validation (:func:`corrected_resampled_ttest`). No maintained
PyPI package implements it (mlxtend's ``paired_ttest_resampled`` is the
uncorrected test; baycomp's correlated t-test is its Bayesian counterpart),
so it is written out here.
"""
import math
import time
from typing import NamedTuple

import numpy as np
from scipy import stats
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.model_selection import RepeatedStratifiedKFold

from .._atomic import save_figure
from .._table import shown

CRITERIA = ("auc", "gini")
DECISIONS = ("rfq", "argmax")
SCORES = ("auc", "gmean", "balanced_accuracy")
SCORE_TITLES = {"auc": "AUC", "gmean": "G-mean", "balanced_accuracy": "balanced accuracy"}


class Dataset(NamedTuple):
    """A named classification data set, with optional case weights
    (``sample_weight``: passed to every fit and to the AUC of each test fold)."""

    name: str
    X: np.ndarray
    y: np.ndarray
    description: str
    sample_weight: np.ndarray = None


class ComparisonRow(NamedTuple):
    """Scores of one (data set, criterion, decision) over all folds.

    ``scores`` maps "auc", "gmean" and "balanced_accuracy" to one value per
    fold; ``fit_seconds`` holds the forest's fit time per fold; ``n_train``
    and ``n_test`` the fold's training and test set sizes. Folds are in the
    order of :class:`~sklearn.model_selection.RepeatedStratifiedKFold`
    (fold ``i`` is fold ``i % n_splits`` of repeat ``i // n_splits``).
    """

    dataset: str
    criterion: str
    decision: str
    scores: dict
    fit_seconds: np.ndarray
    n_train: np.ndarray
    n_test: np.ndarray


class TTestResult(NamedTuple):
    """Result of :func:`corrected_resampled_ttest`."""

    mean_difference: float
    statistic: float
    df: int
    pvalue: float


class PairedTest(NamedTuple):
    """Paired comparison of two configurations on one data set and score.

    ``first`` and ``second`` are (criterion, decision) pairs; the difference
    is first minus second.
    """

    dataset: str
    first: tuple
    second: tuple
    score: str
    result: TTestResult


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
    labels = classes.tolist()  # Python values (text labels are str in an object array)
    if classes.size < 2:
        raise ValueError(f"the target has only one class ({shown(labels[0])})")
    if counts.min() < n_splits:
        raise ValueError(f"class {shown(labels[np.argmin(counts)])} has only {counts.min()} "
                         f"cases; {n_splits}-fold cross-validation needs at least {n_splits} per "
                         "class (lower --folds)")


def compare(dataset, *, n_estimators, n_splits, n_repeats, seed, n_jobs=None, bar=None,
            forest_params=None):
    """Cross-validate AUC and Gini forests on one data set.

    Parameters
    ----------
    dataset : Dataset
        With ``sample_weight``, the weights of the training cases are passed
        to every fit and those of the test cases weigh the AUC (the weighted
        Mann-Whitney statistic; Hand & Till's with weights for K > 2); the
        G-mean and the balanced accuracy stay unweighted.
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
    forest_params : dict, default=None
        Further AUCForestClassifier parameters (e.g. ``min_samples_leaf``),
        the same for both criteria.

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
    sizes = []
    weight = dataset.sample_weight
    for train, test in folds.split(dataset.X, dataset.y):
        sizes.append((train.size, test.size))
        for criterion in CRITERIA:
            forest, seconds = _timed_fit(dataset.X[train], dataset.y[train], criterion,
                                         n_estimators, seed, n_jobs, forest_params or {},
                                         None if weight is None else weight[train])
            fit_seconds[criterion].append(seconds)
            proba = forest.predict_proba(dataset.X[test])
            for decision in DECISIONS:
                _record(results[criterion, decision], dataset.y[test], proba, forest, decision,
                        None if weight is None else weight[test])
        if bar is not None:
            bar.update()
    n_train, n_test = np.array(sizes).T
    return [ComparisonRow(dataset.name, c, d, {s: np.array(v) for s, v in results[c, d].items()},
                          np.array(fit_seconds[c]), n_train, n_test)
            for c in CRITERIA for d in DECISIONS]


def corrected_resampled_ttest(differences, n_train, n_test):
    """Corrected resampled t-test for the scores of two models on the same folds.

    Nadeau & Bengio (2003, "Inference for the generalization error", Machine
    Learning 52, 239-281), applied to repeated k-fold cross-validation as in
    Bouckaert & Frank (2004): with the J = k r paired differences ``d_j``,

        t = mean(d) / sqrt((1/J + n_test/n_train) * var(d)),   df = J - 1,

    ``var`` the sample variance (ddof=1). The term ``n_test/n_train``
    accounts for the overlap of the training sets; without it (the ordinary
    paired t-test) the test rejects far too often.

    Parameters
    ----------
    differences : array-like of shape (J,)
        Score of model A minus score of model B, one value per fold.
    n_train, n_test : float
        Training and test set sizes of a fold (means if they vary).

    Returns
    -------
    TTestResult
        ``mean_difference``, ``statistic`` t, ``df`` and the two-sided
        ``pvalue`` (NaN when every difference is 0; 0 when they are all
        equal and not 0).
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or d.size < 2:
        raise ValueError(f"need at least two paired differences, got shape {d.shape}")
    mean = float(d.mean())
    scale = math.sqrt((1 / d.size + n_test / n_train) * float(d.var(ddof=1)))
    if np.all(d == d[0]):  # no spread (var would be rounding noise)
        statistic = math.nan if mean == 0 else math.copysign(math.inf, mean)
    else:
        statistic = mean / scale
    df = d.size - 1
    pvalue = math.nan if math.isnan(statistic) else float(2 * stats.t.sf(abs(statistic), df))
    return TTestResult(mean, statistic, df, pvalue)


def paired_tests(rows):
    """Paired tests between configurations that differ in one respect.

    For each data set: AUC splitting against Gini splitting under each
    decision, and RFQ against argmax under each criterion (the AUC is left
    out there: both rules score the same forest's probabilities).

    Returns
    -------
    list of PairedTest
    """
    tests = []
    by_key = {(row.dataset, row.criterion, row.decision): row for row in rows}
    for name in dict.fromkeys(row.dataset for row in rows):
        pairs = [((CRITERIA[0], d), (CRITERIA[1], d)) for d in DECISIONS]
        pairs += [((c, DECISIONS[0]), (c, DECISIONS[1])) for c in CRITERIA]
        for first, second in pairs:
            a, b = by_key[(name, *first)], by_key[(name, *second)]
            for score in SCORES:
                if score == "auc" and first[0] == second[0]:
                    continue
                result = corrected_resampled_ttest(a.scores[score] - b.scores[score],
                                                   a.n_train.mean(), a.n_test.mean())
                tests.append(PairedTest(name, first, second, score, result))
    return tests


def _timed_fit(X, y, criterion, n_estimators, seed, n_jobs, forest_params, sample_weight=None):
    from .._forest import AUCForestClassifier

    forest = AUCForestClassifier(n_estimators=n_estimators, criterion=criterion,
                                 n_jobs=n_jobs, random_state=seed, **forest_params)
    started = time.perf_counter()
    forest.fit(X, y, sample_weight=sample_weight)
    return forest, time.perf_counter() - started


def _record(scores, y_test, proba, forest, decision, sample_weight=None):
    """Append the fold's AUC (weighted by ``sample_weight`` when given), G-mean
    and balanced accuracy under ``decision``."""
    from ..metrics import imbalance_report

    report = imbalance_report(y_test, proba, forest.classes_, decision=decision,
                              priors=forest.class_prior_)
    for name in SCORES:
        scores[name].append(getattr(report, name))
    if sample_weight is not None:
        scores["auc"][-1] = _weighted_auc(y_test, proba, forest.classes_, sample_weight)


def _weighted_auc(y_test, proba, classes, sample_weight):
    """The AUC of a test fold with case weights (as imbalance_report's, weighted)."""
    import warnings

    from ..metrics import auc, multiclass_auc

    if len(classes) == 2:
        return float(auc(y_test == classes[1], proba[:, 1], sample_weight, pos_label=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return float(multiclass_auc(y_test, proba, labels=classes, sample_weight=sample_weight))


def format_table(rows):
    """A text table: mean ± sd over folds of each score, and of the fit time.

    Columns are as wide as their longest entry, so long data set names keep
    the table aligned.
    """
    header = ["data set", "criterion", "decision", *(SCORE_TITLES[s] for s in SCORES),
              "fit time (s)"]
    body = [[row.dataset, row.criterion, row.decision,
             *(_mean_sd(row.scores[s], 3) for s in SCORES), _mean_sd(row.fit_seconds, 2)]
            for row in rows]
    return _aligned(header, body)


def format_paired_tests(tests):
    """A text table of :func:`paired_tests`: mean difference and p-value per score."""
    if not tests:
        return ""
    df = tests[0].result.df
    header = ["data set", "comparison", *(SCORE_TITLES[s] for s in SCORES)]
    cells = {}
    for test in tests:
        comparison = _comparison_name(test.first, test.second)
        found = cells.setdefault((test.dataset, comparison), {})
        found[test.score] = _difference_text(test.result)
    body = [[name, comparison, *(found.get(s, "same") for s in SCORES)]
            for (name, comparison), found in cells.items()]
    title = ("paired differences (first minus second) over the same folds, with the p-values\n"
             f"of the corrected resampled t-test (Nadeau & Bengio 2003, {df} degrees of freedom):")
    return title + "\n" + _aligned(header, body)


def _comparison_name(first, second):
    if first[1] == second[1]:
        return f"{first[0]} - {second[0]} ({first[1]})"
    return f"{first[1]} - {second[1]} ({first[0]})"


def _difference_text(result):
    if math.isnan(result.pvalue):
        return f"{result.mean_difference:+.3f}"
    return f"{result.mean_difference:+.3f} (p {result.pvalue:.3f})"


def _aligned(header, body, gap=2):
    """Left-aligned columns, each as wide as its longest cell, and a rule under the header."""
    widths = [max(len(str(line[j])) for line in [header, *body]) for j in range(len(header))]
    lines = ["".join(f"{str(cell):<{w + gap}}" for cell, w in zip(line, widths)).rstrip()
             for line in [header, *body]]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def _mean_sd(values, digits):
    return f"{np.mean(values):.{digits}f} ± {np.std(values, ddof=1) if values.size > 1 else 0:.{digits}f}"


def comparison_json(rows, tests):
    """Plain data (for ``--json``): per-configuration scores, per fold and
    summarised, and the paired tests."""
    def summary(values):
        values = np.asarray(values, dtype=np.float64)
        return {"mean": float(values.mean()),
                "sd": float(values.std(ddof=1)) if values.size > 1 else 0.0,
                "folds": values.tolist()}

    return {
        "results": [{"dataset": row.dataset, "criterion": row.criterion,
                     "decision": row.decision,
                     "scores": {s: summary(row.scores[s]) for s in SCORES},
                     "fit_seconds": summary(row.fit_seconds)} for row in rows],
        "paired_tests": [{"dataset": t.dataset, "first": dict(zip(("criterion", "decision"),
                                                                  t.first)),
                          "second": dict(zip(("criterion", "decision"), t.second)),
                          "score": t.score, "mean_difference": t.result.mean_difference,
                          "t": _json_number(t.result.statistic), "df": t.result.df,
                          "pvalue": _json_number(t.result.pvalue)} for t in tests],
    }


def _json_number(value):
    return None if not math.isfinite(value) else value


def fold_records(rows, n_splits):
    """One record per (data set, fold, criterion, decision), for a per-fold CSV.

    Returns
    -------
    header : list of str
    records : list of list
    """
    header = ["dataset", "repeat", "fold", "n_train", "n_test", "criterion", "decision",
              *SCORES, "fit_seconds"]
    records = []
    for row in rows:
        for i in range(row.fit_seconds.size):
            records.append([row.dataset, i // n_splits + 1, i % n_splits + 1,
                            int(row.n_train[i]), int(row.n_test[i]), row.criterion,
                            row.decision, *(repr(float(row.scores[s][i])) for s in SCORES),
                            f"{row.fit_seconds[i]:.4f}"])
    return header, records


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
    save_figure(figure, path)  # whole or not at all; the format follows the extension


def matplotlib_figure():
    """matplotlib's Figure class; ImportError with the install command if absent."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plots need matplotlib, an optional dependency: "
                          "pip install 'aucforest[plot]' (or pip install matplotlib)") from None
    return Figure
