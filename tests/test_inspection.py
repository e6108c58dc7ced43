"""aucforest.inspection against plain-Python references: a brute-force loop over
trees for the OOB permutation importance, the fit's own OOB decision function
for the regenerated draws, and oob_score_ for the OOB curve."""
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import balanced_accuracy_score, roc_auc_score
from sklearn.utils import check_random_state

from aucforest import AUCForestClassifier, io
from aucforest.inspection import (ImportanceIntervals, importance_intervals, oob_curve,
                                  oob_importance)
from aucforest.inspection._intervals import default_subratio, stratified_subsample
from aucforest.inspection._permute import random_permutation
from aucforest.metrics import gmean_score
from aucforest._base import MAX_SEED

# small forests leave a few cases in every tree's sample: the fit warns, as it should
pytestmark = pytest.mark.filterwarnings("ignore:.*in every tree's sample:UserWarning")


def make_data(n_samples=240, n_classes=2, n_noise=2, seed=0, weights=None):
    """make_classification with its informative features first (shuffle=False),
    then pure-noise columns."""
    X, y = make_classification(n_samples, n_features=3, n_informative=3, n_redundant=0,
                               n_classes=n_classes, weights=weights, shuffle=False,
                               class_sep=1.5, random_state=seed)
    noise = np.random.RandomState(seed + 100).normal(size=(n_samples, n_noise))
    return np.hstack([X, noise]), y


def oob_proba_from_samples(forest, X):
    """OOB decision function from estimators_samples_, tree by tree in Python."""
    n = X.shape[0]
    total, n_trees = np.zeros((n, forest.n_classes_)), np.zeros(n)
    for tree, drawn in zip(forest.estimators_, forest.estimators_samples_):
        oob = np.bincount(drawn, minlength=n) == 0
        total[oob] += node_proba(forest, tree, X[oob])
        n_trees[oob] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / n_trees[:, None]


def node_proba(forest, tree, X):
    """What the forest's tree predicts for the rows of X (its leaf's proportions:
    the trees are collapsed to the forest's predict_min_samples_)."""
    return tree.tree_.predict_proba(np.asarray(X, dtype=np.float32))


def brute_force_importance(forest, X, y, score, feature, seed):
    """score(OOB) - score(OOB with `feature` permuted among each tree's OOB rows):
    the full OOB rows of every tree copied and permuted, one tree after another."""
    n = X.shape[0]
    tree_seeds = np.random.default_rng(seed).integers(2 ** 63, size=forest.n_estimators)
    plain, permuted, n_trees = (np.zeros((n, forest.n_classes_)),
                                np.zeros((n, forest.n_classes_)), np.zeros(n))
    for tree, drawn, tree_seed in zip(forest.estimators_, forest.estimators_samples_,
                                      tree_seeds):
        rows = np.flatnonzero(np.bincount(drawn, minlength=n) == 0)
        X_oob = X[rows].copy()
        plain[rows] += node_proba(forest, tree, X_oob)
        X_oob[:, feature] = X_oob[random_permutation(rows.size, tree_seed), feature]
        permuted[rows] += node_proba(forest, tree, X_oob)
        n_trees[rows] += 1
    has = n_trees > 0
    return (score(y[has], plain[has] / n_trees[has, None])
            - score(y[has], permuted[has] / n_trees[has, None]))


def sklearn_auc(forest):
    def score(y, proba):
        if forest.n_classes_ == 2:
            return roc_auc_score(y == forest.classes_[1], proba[:, 1])
        return roc_auc_score(y, proba, multi_class="ovo", labels=forest.classes_)
    return score


def brier(y, proba, classes):
    return np.mean([sum((p[k] - (label == c)) ** 2 for k, c in enumerate(classes))
                    for label, p in zip(y, proba)])


@pytest.fixture(scope="module")
def binary():
    X, y = make_data(seed=0, weights=[0.7])
    forest = AUCForestClassifier(12, oob_score=True, random_state=0).fit(X, y)
    return forest, X, y


@pytest.fixture(scope="module")
def multiclass():
    X, y = make_data(n_samples=210, n_classes=3, seed=1)
    forest = AUCForestClassifier(10, oob_score=True, random_state=1).fit(X, y)
    return forest, X, y


# ---------------------------------------------------------- estimators_samples_

@pytest.mark.parametrize("params", [
    {},
    {"max_samples": 0.5},
    {"replacement": False},
    {"predict_min_samples": "oob"},
    {"balanced_bootstrap": True},
    {"balanced_bootstrap": True, "max_samples": 7},
    {"class_weight": "balanced_subsample"},
])
def test_estimators_samples_reproduce_the_oob_decision_function(params):
    X, y = make_data(n_samples=150, n_classes=3, seed=2, weights=[0.6, 0.3])
    sample_weight = np.ones(y.size)
    sample_weight[::10] = 0  # zero-weight cases are never drawn by the balanced bootstrap
    forest = AUCForestClassifier(8, oob_score=True, random_state=3, **params)
    forest.fit(X, y, sample_weight=sample_weight)
    np.testing.assert_array_equal(oob_proba_from_samples(forest, X),
                                  forest.oob_decision_function_)
    for i, drawn in enumerate(forest.estimators_samples_):
        np.testing.assert_array_equal(np.bincount(drawn, minlength=y.size),
                                      forest._in_bag_counts(i))
        if params.get("balanced_bootstrap"):
            assert np.all(sample_weight[drawn] > 0)
            assert np.unique(np.bincount(y[drawn])).size == 1  # as many cases of every class


def test_estimators_samples_without_bootstrap_are_all_cases():
    X, y = make_data(n_samples=60)
    forest = AUCForestClassifier(3, bootstrap=False, random_state=0).fit(X, y)
    for drawn in forest.estimators_samples_:
        np.testing.assert_array_equal(drawn, np.arange(60))


def test_estimators_samples_need_a_fitted_forest():
    with pytest.raises(Exception, match="not fitted"):
        AUCForestClassifier().estimators_samples_


# ------------------------------------------------------------- oob_importance

@pytest.mark.parametrize("data", ["binary", "multiclass"])
def test_oob_importance_equals_brute_force_over_trees(data, request):
    forest, X, y = request.getfixturevalue(data)
    result = oob_importance(forest, X, y, n_repeats=2, random_state=7)
    seeds = check_random_state(7).randint(MAX_SEED, size=(X.shape[1], 2))
    expected = [[brute_force_importance(forest, X, y, sklearn_auc(forest), j, seeds[j, r])
                 for r in range(2)] for j in range(X.shape[1])]
    np.testing.assert_allclose(result.importances, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.importances_mean, np.mean(expected, axis=1), atol=1e-12)
    np.testing.assert_allclose(result.importances_std, np.std(expected, axis=1), atol=1e-12)
    assert result.score == pytest.approx(forest.oob_score_, abs=1e-12)


@pytest.mark.parametrize("scoring", ["gmean", "balanced_accuracy", "brier", "callable"])
def test_oob_importance_scorings_equal_brute_force(multiclass, scoring):
    forest, X, y = multiclass
    reference = {
        "gmean": lambda y_, p: gmean_score(y_, forest._decide(p)),
        "balanced_accuracy": lambda y_, p: balanced_accuracy_score(y_, forest._decide(p)),
        "brier": lambda y_, p: -brier(y_, p, forest.classes_),
        "callable": lambda y_, p: np.mean(p[np.arange(y_.size), y_]),  # mean prob. of truth
    }[scoring]
    result = oob_importance(forest, X, y, scoring=reference if scoring == "callable" else scoring,
                            random_state=3, n_jobs=2)
    seeds = check_random_state(3).randint(MAX_SEED, size=(X.shape[1], 1))
    expected = [brute_force_importance(forest, X, y, reference, j, seeds[j, 0])
                for j in range(X.shape[1])]
    np.testing.assert_allclose(result.importances[:, 0], expected, rtol=0, atol=1e-12)


def test_per_class_importance_is_the_drop_of_one_vs_rest_auc(multiclass):
    forest, X, y = multiclass
    result = oob_importance(forest, X, y, random_state=5)
    seeds = check_random_state(5).randint(MAX_SEED, size=(X.shape[1], 1))
    for k, label in enumerate(forest.classes_):
        def one_vs_rest(y_, p, k=k, label=label):
            return roc_auc_score(y_ == label, p[:, k])
        expected = [brute_force_importance(forest, X, y, one_vs_rest, j, seeds[j, 0])
                    for j in range(X.shape[1])]
        np.testing.assert_allclose(result.per_class[:, k], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("params", [{}, {"predict_min_samples": 6}, {"replacement": False}])
def test_oob_importance_with_missing_values_equals_brute_force(params):
    X, y = make_data(n_samples=200, seed=4)
    X[np.random.RandomState(0).rand(*X.shape) < 0.15] = np.nan
    forest = AUCForestClassifier(10, random_state=0, **params).fit(X, y)
    result = oob_importance(forest, X, y, random_state=1)
    seeds = check_random_state(1).randint(MAX_SEED, size=(X.shape[1], 1))
    expected = [brute_force_importance(forest, X, y, sklearn_auc(forest), j, seeds[j, 0])
                for j in range(X.shape[1])]
    np.testing.assert_allclose(result.importances[:, 0], expected, rtol=0, atol=1e-12)


def test_oob_importance_does_not_depend_on_n_jobs(binary):
    forest, X, y = binary
    one = oob_importance(forest, X, y, n_repeats=2, random_state=0, n_jobs=1)
    two = oob_importance(forest, X, y, n_repeats=2, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(one.importances, two.importances)


def test_oob_importance_of_a_forest_read_from_a_model_file(binary, tmp_path):
    forest, X, y = binary
    io.save(forest, tmp_path / "forest.npz")
    loaded = io.load(tmp_path / "forest.npz")
    np.testing.assert_array_equal(oob_importance(loaded, X, y, random_state=0).importances,
                                  oob_importance(forest, X, y, random_state=0).importances)


def test_balanced_forest_read_from_a_model_file_rebuilds_its_draws(tmp_path):
    X, y = make_data(n_samples=150, n_classes=3, seed=8, weights=[0.6, 0.3])
    forest = AUCForestClassifier(6, balanced_bootstrap=True, max_samples=0.8,
                                 random_state=0).fit(X, y)
    io.save(forest, tmp_path / "forest.npz")
    loaded = io.load(tmp_path / "forest.npz")
    assert not hasattr(loaded, "_case_draws")
    np.testing.assert_array_equal(oob_curve(loaded, X, y), oob_curve(forest, X, y))
    np.testing.assert_array_equal(oob_importance(loaded, X, y, random_state=0).importances,
                                  oob_importance(forest, X, y, random_state=0).importances)


def test_informative_features_rank_above_noise():
    X, y = make_data(n_samples=400, seed=5)
    forest = AUCForestClassifier(40, random_state=0).fit(X, y)
    importances = oob_importance(forest, X, y, n_repeats=3, random_state=0).importances_mean
    assert importances[:3].min() > 0.01
    assert np.abs(importances[3:]).max() < 0.01


@pytest.mark.parametrize("change, message", [
    (lambda X, y: (X[:-1], y[:-1]), "fitted on"),
    (lambda X, y: (X, np.where(y == 1, 5, y)), "labels the forest was not fitted on"),
    (lambda X, y: (X[:, :-1], y), "features"),
])
def test_oob_importance_refuses_data_that_is_not_the_training_data(binary, change, message):
    forest, X, y = binary
    with pytest.raises(ValueError, match=message):
        oob_importance(forest, *change(X, y))


def test_oob_importance_refuses_bad_arguments(binary):
    forest, X, y = binary
    with pytest.raises(ValueError, match="scoring must be one of"):
        oob_importance(forest, X, y, scoring="accuracy")
    with pytest.raises(ValueError, match="n_repeats"):
        oob_importance(forest, X, y, n_repeats=0)
    with pytest.raises(TypeError, match="AUCForestClassifier"):
        oob_curve(forest.estimators_[0], X, y)
    no_bootstrap = AUCForestClassifier(3, bootstrap=False, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="bootstrap=True"):
        oob_importance(no_bootstrap, X, y)


def test_balanced_bootstrap_refuses_a_shuffled_y():
    X, y = make_data(n_samples=120, seed=6, weights=[0.7])
    forest = AUCForestClassifier(5, balanced_bootstrap=True, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="training y"):
        oob_importance(forest, X, y[::-1])


def test_random_permutation_is_a_uniform_permutation():
    draws = np.array([random_permutation(4, seed) for seed in range(24_000)])
    assert all(np.array_equal(np.sort(p), np.arange(4)) for p in draws[:100])
    _, counts = np.unique(draws, axis=0, return_counts=True)
    assert counts.size == 24  # every ordering of 4 occurs, about 1,000 times each
    from scipy.stats import chisquare
    assert chisquare(counts).pvalue > 1e-3
    np.testing.assert_array_equal(random_permutation(50, 7), random_permutation(50, 7))
    assert random_permutation(0, 1).size == 0


# ------------------------------------------------------------------- oob_curve

@pytest.mark.parametrize("data", ["binary", "multiclass"])
def test_oob_curve_ends_at_oob_score(data, request):
    forest, X, y = request.getfixturevalue(data)
    curve = oob_curve(forest, X, y)
    assert curve.shape == (forest.n_estimators,)
    assert curve[-1] == forest.oob_score_


def test_oob_curve_point_is_the_oob_score_of_the_first_trees(binary):
    forest, X, y = binary
    curve = oob_curve(forest, X, y, scoring="brier")
    first = AUCForestClassifier(5, random_state=0)
    first.estimators_ = forest.estimators_[:5]
    first.classes_, first.n_classes_ = forest.classes_, forest.n_classes_
    first.n_features_in_, first._case_draws = forest.n_features_in_, forest._case_draws
    first.predict_min_samples_ = forest.predict_min_samples_
    proba = oob_proba_from_samples(first, X)
    has = ~np.isnan(proba[:, 0])
    assert curve[4] == pytest.approx(-brier(y[has], proba[has], forest.classes_), abs=1e-12)


# -------------------------------------------------------- importance_intervals

def test_subratio_follows_randomforestsrc():
    assert default_subratio(999) == np.exp(-1)
    assert default_subratio(4000) == pytest.approx(np.exp(-1) * np.sqrt(1000 / 4000))


def test_stratified_subsample_keeps_class_shares():
    y = np.repeat([0, 1, 2], [100, 30, 2])
    rows = stratified_subsample(y, 0.25, np.random.RandomState(0))
    assert np.unique(rows).size == rows.size
    np.testing.assert_array_equal(np.bincount(y[rows]), [25, 7, 1])


def test_intervals_follow_the_delete_d_jackknife(binary):
    forest, X, y = binary
    result = importance_intervals(forest, X, y, n_subsamples=4, subratio=0.5, alpha=0.1,
                                  random_state=0)
    assert isinstance(result, ImportanceIntervals)
    m = sum(int(0.5 * c) for c in np.bincount(y))
    theta_star, theta_hat = result.subsample_importances, result.importance
    se = np.sqrt(m / y.size * np.mean((theta_star - theta_hat) ** 2, axis=0))
    np.testing.assert_allclose(result.se, se, rtol=1e-12)
    np.testing.assert_allclose(result.upper - theta_hat, 1.6448536269514722 * se, rtol=1e-9)
    np.testing.assert_allclose(result.lower, 2 * theta_hat - result.upper, rtol=1e-12)
    from scipy.stats import norm
    np.testing.assert_allclose(result.pvalue, 1 - norm.cdf(theta_hat / se), atol=1e-12)


def test_noise_intervals_cover_zero_and_informative_ones_lie_above():
    """Four classes on the four corners of a square (make_classification with two
    informative features, one cluster per class): both features are needed; two
    pure-noise features follow."""
    covered, above, n_repeats = 0, 0, 3
    for seed in range(n_repeats):
        X, y = make_classification(300, n_features=4, n_informative=2, n_redundant=0,
                                   n_classes=4, n_clusters_per_class=1, shuffle=False,
                                   random_state=seed)
        forest = AUCForestClassifier(20, random_state=seed).fit(X, y)
        result = importance_intervals(forest, X, y, n_subsamples=10, random_state=seed)
        covered += np.sum((result.lower[2:] <= 0) & (0 <= result.upper[2:]))
        above += np.sum(result.lower[:2] > 0)
        assert np.abs(result.importance[2:]).max() < 0.02
        assert result.importance[:2].min() > 0.1
    assert covered >= 2 * n_repeats - 1  # most noise intervals cover 0
    assert above == 2 * n_repeats


def test_intervals_refuse_bad_arguments(binary):
    forest, X, y = binary
    for kwargs, message in [({"n_subsamples": 0}, "n_subsamples"), ({"alpha": 1.0}, "alpha"),
                            ({"subratio": 1.5}, "subratio")]:
        with pytest.raises(ValueError, match=message):
            importance_intervals(forest, X, y, **kwargs)


def test_interval_centre_is_the_oob_importance_of_the_same_seed(binary):
    forest, X, y = binary
    result = importance_intervals(forest, X, y, n_subsamples=2, n_repeats=2, random_state=4)
    expected = oob_importance(forest, X, y, n_repeats=2, random_state=4).importances_mean
    np.testing.assert_array_equal(result.importance, expected)


def test_plots_draw_sorted_bars_and_the_curve(binary):
    pytest.importorskip("matplotlib")
    from aucforest.inspection import plot_importance, plot_oob_curve
    forest, X, y = binary
    result = oob_importance(forest, X, y, n_repeats=2, random_state=0)
    names = [f"f{j}" for j in range(X.shape[1])]
    ax = plot_importance(result, names)
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    order = np.argsort(-result.importances_mean, kind="stable")[::-1]
    assert labels == [names[j] for j in order]  # most important at the top
    heights = [bar.get_width() for bar in ax.patches]
    np.testing.assert_allclose(heights, result.importances_mean[order])
    curve = oob_curve(forest, X, y)
    line = plot_oob_curve(curve).lines[0]
    np.testing.assert_array_equal(line.get_ydata(), curve)
    with pytest.raises(ValueError, match="names"):
        plot_importance(result, names[:-1])
