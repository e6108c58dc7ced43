"""Bootstrap AUC estimators: eq. 16 by refitting, eq. 17-19 by hand, Table 1."""
import numpy as np
import pytest
from joblib import parallel_config
from scipy.stats import norm
from sklearn.datasets import make_classification
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.svm import LinearSVC

from aucforest.metrics import bootstrap_auc


class RecordingLogisticRegression(LogisticRegression):
    """Logistic regression that records every training set it is fitted on."""

    training_sets = []

    def fit(self, X, y):
        RecordingLogisticRegression.training_sets.append(np.array(X, copy=True))
        return super().fit(X, y)


def hand_632(apparent, loo):
    return 0.368 * apparent + 0.632 * loo


def hand_632_plus(apparent, loo, gamma=0.5):
    """Efron & Tibshirani's .632+ written for an AUC (paper eq. 18-19)."""
    loo_prime = max(loo, gamma)
    rate = (loo_prime - apparent) / (gamma - apparent) if apparent > loo_prime else 0.0
    weight = 0.632 / (1 - 0.368 * rate)
    return (1 - weight) * apparent + weight * loo_prime, rate


def test_replicate_aucs_are_out_of_bag_aucs_of_refitted_models():
    X, y = make_classification(n_samples=40, n_features=4, random_state=1)
    RecordingLogisticRegression.training_sets = []
    result = bootstrap_auc(RecordingLogisticRegression(), X, y, n_bootstraps=12,
                           random_state=3)
    row_of = {tuple(row): i for i, row in enumerate(X)}
    full, *replicates = RecordingLogisticRegression.training_sets
    assert len(full) == len(y) and len(replicates) == result.n_used == 12
    apparent = roc_auc_score(y, LogisticRegression().fit(X, y).decision_function(X))
    assert result.apparent == pytest.approx(apparent)
    expected = []
    for train_rows in replicates:
        train = np.array([row_of[tuple(row)] for row in train_rows])
        assert train.size == y.size  # a bootstrap sample: n draws ...
        left_out = np.setdiff1d(np.arange(y.size), train)
        assert left_out.size > 0  # ... with replacement
        model = LogisticRegression().fit(X[train], y[train])
        expected.append(roc_auc_score(y[left_out], model.predict_proba(X[left_out])[:, 1]))
    np.testing.assert_allclose(result.replicate_aucs, expected, atol=1e-12)
    assert result.loo_bootstrap == pytest.approx(np.mean(expected))  # eq. 16


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_632_and_632_plus_from_returned_components(seed):
    X, y = make_classification(n_samples=50, n_features=8, n_informative=2,
                               random_state=seed)
    result = bootstrap_auc(LogisticRegression(C=100.0, solver="liblinear"), X, y,
                           n_bootstraps=15, random_state=seed)
    assert result.b632 == pytest.approx(hand_632(result.apparent, result.loo_bootstrap))
    b632_plus, rate = hand_632_plus(result.apparent, result.loo_bootstrap)
    assert result.b632_plus == pytest.approx(b632_plus)
    assert result.overfitting_rate == pytest.approx(rate)
    assert result.loo_bootstrap == pytest.approx(np.nanmean(result.replicate_aucs))


def test_632_plus_formula_cases():
    from aucforest.metrics._bootstrap import combine_632_plus

    # A > A* > gamma: eq. 18-19 as printed
    apparent, loo = 0.9, 0.7
    rate = (loo - apparent) / (0.5 - apparent)
    correction = (loo - apparent) * 0.368 * 0.632 * rate / (1 - 0.368 * rate)
    printed = hand_632(apparent, loo) + correction
    assert combine_632_plus(apparent, loo) == pytest.approx((printed, rate))
    # no overfitting: .632+ is .632
    assert combine_632_plus(0.7, 0.8) == pytest.approx((hand_632(0.7, 0.8), 0.0))
    # out-of-bag AUC at or below chance: .632+ is the no-information AUC
    assert combine_632_plus(0.95, 0.42) == pytest.approx((0.5, 1.0))
    # continuity as A* crosses gamma
    assert combine_632_plus(0.95, 0.5 + 1e-9)[0] == pytest.approx(0.5, abs=1e-8)


def test_estimators_behave_as_in_table_1_of_the_bootstrap_paper():
    """Multinormal classes, LDA: AUC* below the true AUC, .632 above, .632+ between.

    Classes N(0, I) and N(c 1, I) in P = 10 dimensions, n = 20 per class; the
    true AUC of each fitted LDA is Phi(w'(mu2 - mu1) / sqrt(2 w'w)). Reduced
    size (80 trials, 15 replicates) to keep the suite fast.
    """
    rng = np.random.default_rng(12345)
    n, p, c, trials = 20, 10, np.sqrt(1.5 / 10), 80
    y = np.repeat([0, 1], n)
    rows = []
    for _ in range(trials):
        X = np.vstack([rng.normal(0, 1, (n, p)), rng.normal(c, 1, (n, p))])
        w = LinearDiscriminantAnalysis().fit(X, y).coef_[0]
        true_auc = norm.cdf(c * w.sum() / np.sqrt(2 * w @ w))
        r = bootstrap_auc(LinearDiscriminantAnalysis(), X, y, n_bootstraps=15,
                          random_state=rng.integers(2**31))
        rows.append((true_auc, r.loo_bootstrap, r.b632, r.b632_plus, r.apparent))
    true_auc, loo, b632, b632_plus, apparent = np.mean(rows, axis=0)
    assert loo < true_auc < b632 < apparent
    assert loo < b632_plus < b632
    assert abs(b632_plus - true_auc) < min(true_auc - loo, b632 - true_auc)


def test_multiclass_uses_hand_and_till_auc():
    X, y = make_classification(n_samples=90, n_classes=3, n_informative=4,
                               random_state=4)
    result = bootstrap_auc(LogisticRegression(), X, y, n_bootstraps=6, random_state=0)
    proba = LogisticRegression().fit(X, y).predict_proba(X)
    assert result.apparent == pytest.approx(roc_auc_score(y, proba, multi_class="ovo"))
    assert 0.5 < result.loo_bootstrap < result.apparent


@pytest.mark.parametrize("n_classes", [2, 3])
def test_decision_function_only_estimator(n_classes):
    X, y = make_classification(n_samples=60, n_classes=n_classes, n_informative=3,
                               random_state=5)
    result = bootstrap_auc(LinearSVC(), X, y, n_bootstraps=5, random_state=0)
    scores = LinearSVC().fit(X, y).decision_function(X)
    if n_classes == 2:
        expected = roc_auc_score(y, scores)
    else:  # Hand & Till over ordered pairs (scikit-learn's ovo wants probabilities)
        expected = np.mean([
            roc_auc_score(y[np.isin(y, [i, j])] == i, scores[np.isin(y, [i, j]), i])
            for i in range(3) for j in range(3) if i != j
        ])
    assert result.apparent == pytest.approx(expected)


def test_reproducible_and_independent_of_n_jobs():
    X, y = make_classification(n_samples=40, random_state=6)
    model = LogisticRegression(solver="liblinear")
    serial = bootstrap_auc(model, X, y, n_bootstraps=8, random_state=9)
    again = bootstrap_auc(model, X, y, n_bootstraps=8, random_state=9)
    with parallel_config(backend="threading"):
        parallel = bootstrap_auc(model, X, y, n_bootstraps=8, random_state=9, n_jobs=2)
    np.testing.assert_array_equal(serial.replicate_aucs, again.replicate_aucs)
    np.testing.assert_allclose(serial.replicate_aucs, parallel.replicate_aucs)


def test_replicates_missing_a_class_are_discarded():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 2))
    y = np.zeros(30, dtype=int)
    y[:2] = 1  # two positives: many replicates miss one class
    X[:2] += 2.0
    model = LogisticRegression(solver="liblinear")
    plain = bootstrap_auc(model, X, y, n_bootstraps=30, random_state=1)
    assert plain.n_used < 30
    assert np.isnan(plain.replicate_aucs).sum() == 30 - plain.n_used
    assert plain.loo_bootstrap == pytest.approx(np.nanmean(plain.replicate_aucs))
    stratified = bootstrap_auc(model, X, y, n_bootstraps=30, stratify=True,
                               random_state=1)
    assert 0 < stratified.n_used < 30  # only left-out samples without a positive
    assert stratified.n_used > plain.n_used


def test_no_usable_replicate_is_a_clear_error():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(12, 2))
    y = np.array([1] + [0] * 11)  # with stratify the single positive is always in-bag
    with pytest.raises(ValueError, match="No bootstrap replicate could be scored"):
        bootstrap_auc(LogisticRegression(), X, y, n_bootstraps=5, stratify=True,
                      random_state=0)


@pytest.mark.parametrize("kwargs, message", [
    (dict(estimator=LinearRegression()), "neither predict_proba nor decision_function"),
    (dict(n_bootstraps=0), "n_bootstraps"),
    (dict(y=np.zeros(20)), "at least two classes"),
    (dict(y=np.arange(19) % 2), "inconsistent numbers of samples"),
])
def test_bootstrap_rejects_bad_input(kwargs, message):
    X, y = make_classification(n_samples=20, random_state=0)
    arguments = dict(estimator=LogisticRegression(), X=X, y=y, n_bootstraps=3)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        bootstrap_auc(**arguments)


class FailsOnRepeatedFirstCase(LogisticRegression):
    """Raises LinAlgError when the training set holds the data's first case twice or more
    (about a quarter of bootstrap replicates; never the fit on all data)."""

    first_case = None

    def fit(self, X, y):
        if np.sum(np.all(np.asarray(X) == self.first_case, axis=1)) > 1:
            raise np.linalg.LinAlgError("Singular matrix")
        return super().fit(X, y)


def test_failed_replicates_are_skipped_counted_and_warned_once():
    from sklearn.exceptions import FitFailedWarning

    X, y = make_classification(n_samples=40, n_features=4, random_state=3)
    FailsOnRepeatedFirstCase.first_case = X[0]
    reference = bootstrap_auc(LogisticRegression(), X, y, n_bootstraps=30, random_state=5)
    with pytest.warns(FitFailedWarning) as caught:
        result = bootstrap_auc(FailsOnRepeatedFirstCase(), X, y, n_bootstraps=30, random_state=5)
    failed = np.isnan(result.replicate_aucs) & np.isfinite(reference.replicate_aucs)
    assert len([w for w in caught if w.category is FitFailedWarning]) == 1
    assert result.n_failed == failed.sum() > 0
    assert f"{result.n_failed} of 30 bootstrap replicates failed" in str(caught[0].message)
    assert "LinAlgError: Singular matrix" in str(caught[0].message)
    kept = ~failed
    np.testing.assert_array_equal(result.replicate_aucs[kept], reference.replicate_aucs[kept])
    assert result.n_used == reference.n_used - result.n_failed
    assert result.loo_bootstrap == pytest.approx(np.nanmean(reference.replicate_aucs[kept]))
    assert result.apparent == reference.apparent


def test_error_score_raise_propagates_and_a_number_is_used():
    from sklearn.exceptions import FitFailedWarning

    X, y = make_classification(n_samples=40, n_features=4, random_state=3)
    FailsOnRepeatedFirstCase.first_case = X[0]
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        bootstrap_auc(FailsOnRepeatedFirstCase(), X, y, n_bootstraps=30, random_state=5,
                      error_score="raise")
    with pytest.warns(FitFailedWarning, match="entered with AUC 0.5 into"):
        scored = bootstrap_auc(FailsOnRepeatedFirstCase(), X, y, n_bootstraps=30,
                               random_state=5, error_score=0.5)
    assert np.count_nonzero(scored.replicate_aucs == 0.5) >= scored.n_failed > 0
    assert scored.n_used == np.isfinite(scored.replicate_aucs).sum()


@pytest.mark.parametrize("bad", ["ignore", None, True])
def test_error_score_must_be_raise_or_a_number(bad):
    X, y = make_classification(n_samples=20, n_features=4, random_state=0)
    with pytest.raises(ValueError, match="error_score must be 'raise' or a number"):
        bootstrap_auc(LogisticRegression(), X, y, n_bootstraps=2, error_score=bad)
