"""Mondrian conformal prediction from out-of-bag scores (aucforest.conformal).

The p-values are checked against loops over the cases; the guarantee (per-class
miss rate at most alpha, exactly alpha when smoothed) by simulation against
binomial bounds, on exchangeable synthetic scores (where it is a theorem) and on
real forests' out-of-bag scores (where it is measured).
"""
import warnings

import numpy as np
import pytest
from scipy import sparse, stats
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state
from sklearn.utils.estimator_checks import parametrize_with_checks

from aucforest import AUCForestClassifier
from aucforest.conformal import MondrianConformalClassifier, mondrian_p_values

ALPHAS = (0.1, 0.2)


def imbalanced_data(seed, n_samples=200):
    """Three classes in proportions 0.7, 0.2, 0.1 (the last the minority)."""
    return make_classification(n_samples, 5, n_informative=3, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, weights=[0.7, 0.2, 0.1],
                               random_state=seed)


def brute_force_p_values(forest, X_train, y_train, X_test, smoothing, uniforms=None,
                         keep=None):
    """The formula of the docstring with loops: calibration scores 1 - p_{y_i}(x_i)
    from the OOB probabilities, rows without them (or not kept) left out."""
    classes = list(forest.classes_)
    oob = forest.oob_decision_function_
    calibration = {label: [] for label in classes}
    for i, label in enumerate(y_train):
        column = classes.index(label)
        if np.isnan(oob[i, column]) or (keep is not None and not keep[i]):
            continue
        calibration[label].append(1.0 - oob[i, column])
    proba = forest.predict_proba(X_test)
    p_values = np.zeros(proba.shape)
    for row in range(proba.shape[0]):
        for column, label in enumerate(classes):
            score = 1.0 - proba[row, column]
            scores = calibration[label]
            greater = sum(1 for a in scores if a > score)
            equal = sum(1 for a in scores if a == score)
            if smoothing:
                count = greater + uniforms[row, column] * (equal + 1)
            else:
                count = greater + equal + 1
            p_values[row, column] = count / (len(scores) + 1)
    return p_values


# ------------------------------------------------------------------ p-values


@pytest.mark.parametrize("smoothing", [True, False])
def test_p_values_match_brute_force_loops_with_tied_scores(smoothing):
    X, y = imbalanced_data(0)
    X_train, y_train, X_test = X[:150], y[:150], X[150:]
    conformal = MondrianConformalClassifier(
        AUCForestClassifier(8, random_state=0), smoothing=smoothing, random_state=3)
    conformal.fit(X_train, y_train)
    uniforms = check_random_state(3).uniform(size=(X_test.shape[0], 3))
    expected = brute_force_p_values(conformal.estimator_, X_train, y_train, X_test,
                                    smoothing, uniforms)
    np.testing.assert_allclose(conformal.p_values(X_test), expected, rtol=0, atol=1e-12)
    # the case of ties: with 8 trees, test scores equal to calibration scores occur
    test_scores = 1 - conformal.predict_proba(X_test)
    assert any(np.isin(test_scores[:, k], conformal.calibration_scores_[k]).any()
               for k in range(3))


def test_p_values_of_scikit_learns_random_forest_match_brute_force():
    X, y = imbalanced_data(1)
    conformal = MondrianConformalClassifier(
        RandomForestClassifier(30, random_state=0), smoothing=False).fit(X[:150], y[:150])
    expected = brute_force_p_values(conformal.estimator_, X[:150], y[:150], X[150:], False)
    np.testing.assert_allclose(conformal.p_values(X[150:]), expected, rtol=0, atol=1e-12)


def test_an_int_random_state_gives_the_same_smoothed_p_values_on_every_call():
    X, y = imbalanced_data(2)
    conformal = MondrianConformalClassifier(AUCForestClassifier(10, random_state=0),
                                            random_state=5).fit(X, y)
    np.testing.assert_array_equal(conformal.p_values(X[:20]), conformal.p_values(X[:20]))


# ------------------------------------------------- the guarantee, by simulation


def exchangeable_runs(rng, n_by_class, n_runs, discrete):
    """Smoothed p-values of n_runs independent problems: per class k, n_k
    calibration scores and the score of one test case of class k for its label,
    all i.i.d. (discrete: five distinct values, so with many ties)."""
    def draw(size):
        return rng.integers(0, 5, size) / 4.0 if discrete else rng.exponential(size=size)
    p_values = np.empty((n_runs, len(n_by_class)))
    for run in range(n_runs):
        calibration = [np.sort(draw(n)) for n in n_by_class]
        test_scores = draw(len(n_by_class))[None, :]  # column k: a case of class k
        uniforms = rng.uniform(size=test_scores.shape)
        p_values[run] = mondrian_p_values(calibration, test_scores, uniforms)[0]
    return p_values


def two_sided_binomial_bounds(n, p, level=0.001):
    return stats.binom.ppf(level / 2, n, p), stats.binom.ppf(1 - level / 2, n, p)


@pytest.mark.parametrize("discrete", [False, True])
def test_smoothed_miss_rate_is_exactly_alpha_in_every_class_on_exchangeable_scores(discrete):
    """Vovk et al. 2005, ch. 4: P(p_k <= alpha | y = k) = alpha for smoothed
    p-values, whatever n_k and with ties; a minority class of 9 cases included."""
    rng = np.random.default_rng(0)
    n_runs = 4000
    p_values = exchangeable_runs(rng, (200, 40, 9), n_runs, discrete)
    for alpha in ALPHAS:
        misses = (p_values <= alpha).sum(axis=0)
        low, high = two_sided_binomial_bounds(n_runs, alpha)
        assert np.all((low <= misses) & (misses <= high)), (alpha, misses, low, high)


def test_unsmoothed_miss_rate_is_floor_alpha_n_plus_one_over_n_plus_one_without_ties():
    """Without ties the rank of the test score is uniform on 1..n_k+1, so the miss
    rate is exactly floor(alpha (n_k + 1)) / (n_k + 1) <= alpha."""
    rng = np.random.default_rng(1)
    n_runs, n_by_class = 4000, (200, 40, 9)
    calibration = [[np.sort(rng.exponential(size=n)) for n in n_by_class]
                   for _ in range(n_runs)]
    test = rng.exponential(size=(n_runs, 3))
    p_values = np.array([mondrian_p_values(c, t[None, :])[0] for c, t in zip(calibration, test)])
    for alpha in ALPHAS:
        misses = (p_values <= alpha).sum(axis=0)
        for k, n in enumerate(n_by_class):
            rate = np.floor(alpha * (n + 1) + 1e-9) / (n + 1)
            low, high = two_sided_binomial_bounds(n_runs, rate)
            assert low <= misses[k] <= high, (alpha, k, misses[k], rate)
            assert rate <= alpha


def test_smoothed_p_values_are_uniform_under_exchangeability():
    rng = np.random.default_rng(2)
    for discrete in (False, True):
        p_values = exchangeable_runs(rng, (60, 7), 2000, discrete)
        for k in range(2):
            assert stats.kstest(p_values[:, k], "uniform").pvalue > 0.001, (discrete, k)
    # the unsmoothed ones with ties are not: the test detects it (it can fail)
    calibration = [np.zeros(20)]
    assert mondrian_p_values(calibration, np.zeros((1, 1)))[0, 0] == 1.0


def test_oob_sets_of_real_forests_cover_each_class_by_simulation():
    """200 independent fits on imbalanced sets (minority 10%), one held-out case of
    each class per fit: the misses of class k are Binomial(200, <= alpha) when
    the guarantee holds; OOB scores are not exactly exchangeable with test
    scores, so this measures it (one-sided: conservative sets pass)."""
    n_runs = 200
    misses = {alpha: np.zeros(3, dtype=int) for alpha in ALPHAS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a case in every tree's sample
        for run in range(n_runs):
            X, y = imbalanced_data(1000 + run, n_samples=230)
            test_rows = np.array([np.flatnonzero(y == k)[-1] for k in range(3)])
            train = np.setdiff1d(np.arange(y.size), test_rows)
            conformal = MondrianConformalClassifier(
                AUCForestClassifier(15, random_state=run), random_state=run)
            p_values = conformal.fit(X[train], y[train]).p_values(X[test_rows])
            for alpha in ALPHAS:
                misses[alpha] += p_values[np.arange(3), np.arange(3)] <= alpha
    for alpha in ALPHAS:
        high = stats.binom.ppf(0.999, n_runs, alpha)
        assert np.all(misses[alpha] <= high), (alpha, misses[alpha], high)


# ------------------------------------------------------------------- the sets


def test_sets_shrink_as_alpha_grows():
    X, y = imbalanced_data(3)
    conformal = MondrianConformalClassifier(AUCForestClassifier(20, random_state=0),
                                            random_state=0).fit(X[:150], y[:150])
    with pytest.warns(UserWarning, match="alpha=0.6 is the miss rate"):  # issue 58
        sets = [conformal.predict_set(X[150:], alpha) for alpha in (0.01, 0.05, 0.1, 0.3, 0.6)]
    for larger, smaller in zip(sets, sets[1:]):
        assert np.all(smaller <= larger)
    assert sets[0].sum() > sets[-1].sum()


def test_predict_set_is_a_bool_array_whose_columns_follow_classes_for_string_labels():
    X, y = imbalanced_data(4)
    names = np.array(["rare", "common", "middle"])[np.array([1, 2, 0])[y]]
    conformal = MondrianConformalClassifier(AUCForestClassifier(20, random_state=0),
                                            smoothing=False).fit(X[:150], names[:150])
    assert list(conformal.classes_) == ["common", "middle", "rare"]
    sets = conformal.predict_set(X[150:], 0.1)
    assert sets.dtype == bool and sets.shape == (50, 3)
    expected = brute_force_p_values(conformal.estimator_, X[:150], names[:150], X[150:],
                                    False)  # keyed by the label names
    np.testing.assert_array_equal(sets, expected > 0.1)
    for k, label in enumerate(conformal.classes_):
        assert conformal.n_calibration_[k] == np.sum(names[:150] == label)


def test_predict_and_predict_proba_are_the_forests():
    X, y = imbalanced_data(5)
    conformal = MondrianConformalClassifier(AUCForestClassifier(20, random_state=0)).fit(X, y)
    np.testing.assert_array_equal(conformal.predict(X), conformal.estimator_.predict(X))
    np.testing.assert_array_equal(conformal.predict_proba(X),
                                  conformal.estimator_.predict_proba(X))
    assert conformal.n_features_in_ == 5
    assert conformal.estimator_.oob_score is True
    assert conformal.score(X, y) == np.mean(conformal.predict(X) == y)


def test_the_default_estimator_is_an_aucforest():
    X, y = imbalanced_data(6, n_samples=80)
    conformal = MondrianConformalClassifier().fit(X, y)
    assert type(conformal.estimator_) is AUCForestClassifier
    assert conformal.estimator_.n_estimators == AUCForestClassifier().n_estimators
    assert conformal.estimator is None  # not changed by fit


# ------------------------------------------------------------ input kinds


def test_sparse_X_gives_the_dense_p_values():
    X, y = imbalanced_data(7)
    X[X < 0] = 0  # stored entries: the positive values
    forest = AUCForestClassifier(20, random_state=0)
    dense = MondrianConformalClassifier(forest, random_state=0).fit(X[:150], y[:150])
    csr = MondrianConformalClassifier(forest, random_state=0).fit(
        sparse.csr_matrix(X[:150]), y[:150])
    np.testing.assert_array_equal(csr.p_values(sparse.csr_matrix(X[150:])),
                                  dense.p_values(X[150:]))


def test_a_dataframe_with_category_columns_gives_the_codes_p_values():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(8)
    X, y = imbalanced_data(8)
    levels = rng.integers(0, 4, X.shape[0])
    y = np.where((levels == 3) & (rng.uniform(size=y.size) < 0.5), 2, y)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    frame["level"] = pd.Categorical.from_codes(levels, ["a", "b", "c", "d"])
    codes = np.column_stack([X, levels.astype(float)])
    by_frame = MondrianConformalClassifier(AUCForestClassifier(20, random_state=0),
                                           random_state=0).fit(frame[:150], y[:150])
    by_codes = MondrianConformalClassifier(
        AUCForestClassifier(20, categorical_features=[5], random_state=0),
        random_state=0).fit(codes[:150], y[:150])
    assert list(by_frame.feature_names_in_) == list(frame.columns)
    np.testing.assert_array_equal(by_frame.p_values(frame[150:]),
                                  by_codes.p_values(codes[150:]))


# ----------------------------------------------------- calibration cases


def test_rows_without_an_oob_prediction_are_left_out_with_a_warning_saying_how_many():
    X, y = imbalanced_data(9, n_samples=60)
    conformal = MondrianConformalClassifier(AUCForestClassifier(2, random_state=0),
                                            smoothing=False)
    with pytest.warns(UserWarning, match=r"(\d+) of 60 training cases have no out-of-bag") \
            as record:
        conformal.fit(X, y)
    missing = np.isnan(conformal.estimator_.oob_decision_function_).any(axis=1)
    assert missing.any()
    assert any(f"{missing.sum()} of 60 training cases" in str(w.message) for w in record)
    assert conformal.n_calibration_.sum() == (~missing).sum()
    expected = brute_force_p_values(conformal.estimator_, X, y, X, False)
    np.testing.assert_allclose(conformal.p_values(X), expected, rtol=0, atol=1e-12)


def test_cases_of_sample_weight_zero_are_not_calibration_cases():
    X, y = imbalanced_data(10)
    weight = np.ones(y.size)
    weight[::4] = 0
    conformal = MondrianConformalClassifier(AUCForestClassifier(30, random_state=0),
                                            smoothing=False).fit(X, y, sample_weight=weight)
    has_oob = ~np.isnan(conformal.estimator_.oob_decision_function_).any(axis=1)
    assert conformal.n_calibration_.sum() == np.sum(has_oob & (weight > 0))
    expected = brute_force_p_values(conformal.estimator_, X, y, X[:30], False,
                                    keep=weight > 0)
    np.testing.assert_allclose(conformal.p_values(X[:30]), expected, rtol=0, atol=1e-12)


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("alpha", [0, 1, 0.0, 1.0, -0.1, 1.5, np.nan, True, "0.1", None])
def test_alpha_outside_the_open_unit_interval_is_refused(alpha):
    X, y = imbalanced_data(11, n_samples=60)
    conformal = MondrianConformalClassifier(AUCForestClassifier(10, random_state=0)).fit(X, y)
    with pytest.raises(ValueError, match=r"alpha must be a number in the open interval \(0, 1\)"):
        conformal.predict_set(X, alpha)


def test_an_alpha_above_one_half_warns_that_it_is_a_miss_rate_not_a_confidence():
    """Issue 58: alpha=0.9 keeps only the labels whose p-value exceeds 0.9, the
    sets of p_values > alpha computed by hand, most of them empty; the warning
    names alpha=0.1. An alpha of at most 0.5 does not warn."""
    X, y = imbalanced_data(12, n_samples=300)
    conformal = MondrianConformalClassifier(AUCForestClassifier(20, random_state=0),
                                            random_state=0).fit(X[:200], y[:200])
    with pytest.warns(UserWarning, match=r"alpha=0.9 is the miss rate allowed in each class, "
                                         r"not the confidence.*did you mean alpha=0.1\?"):
        sets = conformal.predict_set(X[200:], 0.9)
    np.testing.assert_array_equal(sets, conformal.p_values(X[200:]) > 0.9)
    assert np.mean(~sets.any(axis=1)) > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        conformal.predict_set(X[200:], 0.5)
        conformal.predict_set(X[200:], 0.1)


@pytest.mark.parametrize("weighted", [False, True])
def test_calibrate_on_a_fitted_forest_is_the_second_half_of_fit(weighted):
    """calibrate(y, sample_weight) on a forest fitted with oob_score=True keeps
    fit's calibration scores, the forest neither cloned nor fitted again."""
    X, y = imbalanced_data(21, n_samples=300)
    weights = None
    if weighted:
        weights = np.random.RandomState(0).uniform(0.5, 2, len(y))
        weights[:40] = 0.0
    fitted = MondrianConformalClassifier(AUCForestClassifier(20, random_state=0),
                                         random_state=0).fit(X[:200], y[:200], weights[:200]
                                                             if weighted else None)
    forest = AUCForestClassifier(20, oob_score=True, random_state=0).fit(
        X[:200], y[:200], sample_weight=weights[:200] if weighted else None)
    conformal = MondrianConformalClassifier(forest, random_state=0).calibrate(
        y[:200], weights[:200] if weighted else None)
    assert conformal.estimator_ is forest
    for ours, theirs in zip(conformal.calibration_scores_, fitted.calibration_scores_):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(conformal.n_calibration_, fitted.n_calibration_)
    np.testing.assert_array_equal(conformal.p_values(X[200:]), fitted.p_values(X[200:]))


@pytest.mark.parametrize("method", ["p_values", "predict", "predict_proba"])
def test_an_unfitted_predictor_refuses_to_predict(method):
    with pytest.raises(NotFittedError):
        getattr(MondrianConformalClassifier(), method)(np.zeros((2, 3)))
    with pytest.raises(NotFittedError):
        MondrianConformalClassifier().predict_set(np.zeros((2, 3)), 0.1)


@pytest.mark.parametrize("forest", [AUCForestClassifier(10, bootstrap=False),
                                    RandomForestClassifier(10, bootstrap=False)])
def test_a_forest_without_bootstrap_is_refused_naming_the_parameter(forest):
    X, y = imbalanced_data(12, n_samples=60)
    with pytest.raises(ValueError, match="bootstrap=False"):
        MondrianConformalClassifier(forest).fit(X, y)


def test_an_estimator_without_out_of_bag_predictions_is_refused():
    X, y = imbalanced_data(12, n_samples=60)
    with pytest.raises(ValueError, match="LogisticRegression has no oob_score"):
        MondrianConformalClassifier(LogisticRegression()).fit(X, y)


def test_bad_parameters_are_refused_by_name():
    X, y = imbalanced_data(14, n_samples=60)
    with pytest.raises(ValueError, match="smoothing"):
        MondrianConformalClassifier(smoothing="yes").fit(X, y)


# ------------------------------------------------------- scikit-learn's checks


@parametrize_with_checks(
    [MondrianConformalClassifier(AUCForestClassifier(10, random_state=0), random_state=0)],
    expected_failed_checks=lambda estimator: {
        name: "the forest's own: its bootstrap draws and leaf sizes count distinct cases, "
              "not weights (tests/test_sklearn_compat.py)"
        for name in ("check_sample_weight_equivalence_on_dense_data",
                     "check_sample_weight_equivalence_on_sparse_data")})
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # tiny data: cases in every sample
        check(estimator)


# --------------------------------------------------------------- docstrings


@pytest.mark.parametrize("name", ["MondrianConformalClassifier", "MondrianConformalClassifier.fit",
                                  "MondrianConformalClassifier.p_values",
                                  "MondrianConformalClassifier.predict_set",
                                  "MondrianConformalClassifier.predict",
                                  "MondrianConformalClassifier.predict_proba",
                                  "mondrian_p_values"])
def test_docstrings_pass_the_numpydoc_checks_of_test_docstrings(name):
    validate = pytest.importorskip("numpydoc.validate")
    from test_docstrings import CHECKS
    errors = [(code, message) for code, message
              in validate.validate(f"aucforest.conformal.{name}")["errors"] if code in CHECKS]
    assert not errors
