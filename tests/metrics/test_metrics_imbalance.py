"""gmean_score and imbalance_report against scikit-learn and hand computations."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import (
    average_precision_score,
    balanced_accuracy_score,
    precision_score,
    recall_score,
    roc_auc_score,
)

from aucforest.metrics import gmean_score, imbalance_report


def hand_gmean(y_true, y_pred):
    recalls = [np.mean(y_pred[y_true == c] == c) for c in np.unique(y_true)]
    return float(np.prod(recalls) ** (1 / len(recalls)))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 4).flatmap(lambda k: st.tuples(
    st.lists(st.integers(0, k - 1), min_size=k, max_size=40),
    st.lists(st.integers(0, k - 1), min_size=40, max_size=40),
)))
def test_gmean_equals_geometric_mean_of_recalls(data):
    y_true, y_pred = data
    y_true = np.array(y_true)
    y_pred = np.array(y_pred[: y_true.size])
    assert gmean_score(y_true, y_pred) == pytest.approx(hand_gmean(y_true, y_pred), abs=1e-12)


def test_gmean_binary_is_sqrt_sensitivity_specificity():
    y_true = np.array([0] * 90 + [1] * 10)
    y_pred = np.array([0] * 80 + [1] * 10 + [1] * 7 + [0] * 3)
    assert gmean_score(y_true, y_pred) == pytest.approx(np.sqrt(0.7 * 80 / 90))


def test_gmean_is_zero_when_a_class_is_never_found():
    assert gmean_score([0, 0, 1, 2], [0, 0, 1, 1]) == 0.0


def test_gmean_leaves_out_labels_absent_from_y_true():
    with pytest.warns(UserWarning, match=r"Classes \[7\]"):
        value = gmean_score([0, 0, 1, 1], [0, 1, 1, 1], labels=[0, 1, 7])
    assert value == pytest.approx(np.sqrt(0.5))


def imbalanced_data(seed, k=3, n=300):
    rng = np.random.default_rng(seed)
    priors = np.array([0.75, 0.2, 0.05])[:k] / np.array([0.75, 0.2, 0.05])[:k].sum()
    y = rng.choice(k, size=n, p=priors)
    signal = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    logits = np.log(priors) + 1.5 * signal  # the Bayes posterior given the signal
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return y, np.round(proba, 2) / np.round(proba, 2).sum(axis=1, keepdims=True)


def rfq_by_loop(proba, priors):
    labels = []
    for row in proba:
        ratios = row / priors
        best = np.flatnonzero(np.isclose(ratios, ratios.max(), rtol=0, atol=0))
        labels.append(best[np.argmin(priors[best])])
    return np.array(labels)


@pytest.mark.parametrize("k", [2, 3])
def test_report_matches_sklearn_metrics(k):
    y, proba = imbalanced_data(0, k=k)
    classes = np.arange(k)
    priors = np.bincount(y, minlength=k) / y.size
    report = imbalance_report(y, proba, classes)
    y_pred = rfq_by_loop(proba, priors)
    table = report.per_class
    np.testing.assert_allclose(table["recall"], recall_score(y, y_pred, average=None))
    np.testing.assert_allclose(table["precision"],
                               precision_score(y, y_pred, average=None, zero_division=0))
    specificity = [np.mean(y_pred[y != c] != c) for c in classes]
    np.testing.assert_allclose(table["specificity"], specificity)
    np.testing.assert_allclose(table["ovr_gmean"], np.sqrt(table["recall"] * specificity))
    np.testing.assert_allclose(table["auc"],
                               [roc_auc_score(y == c, proba[:, c]) for c in classes])
    np.testing.assert_allclose(table["pr_auc"],
                               [average_precision_score(y == c, proba[:, c]) for c in classes])
    np.testing.assert_allclose(table["brier"],
                               [np.mean((proba[:, c] - (y == c)) ** 2) for c in classes])
    np.testing.assert_array_equal(table["support"], np.bincount(y, minlength=k))
    assert report.gmean == pytest.approx(hand_gmean(y, y_pred))
    assert report.balanced_accuracy == pytest.approx(balanced_accuracy_score(y, y_pred))
    assert report.recall == pytest.approx(report.balanced_accuracy)
    multiclass_brier = np.mean(np.sum((proba - np.eye(k)[y]) ** 2, axis=1))
    if k == 2:
        assert report.auc == pytest.approx(roc_auc_score(y, proba[:, 1]))
        minority = np.argmin(np.bincount(y))
        expected = average_precision_score(y == minority, proba[:, minority])
        assert report.pr_auc == pytest.approx(expected)
        assert report.brier == pytest.approx(multiclass_brier / 2)
    else:
        assert report.auc == pytest.approx(roc_auc_score(y, proba, multi_class="ovo"))
        assert np.isnan(report.pr_auc)
        assert report.brier == pytest.approx(multiclass_brier)


def test_rfq_rule_lifts_minority_recall_over_argmax():
    y, proba = imbalanced_data(1)
    rfq = imbalance_report(y, proba, [0, 1, 2], decision="rfq")
    argmax = imbalance_report(y, proba, [0, 1, 2], decision="argmax")
    assert rfq.per_class["recall"][2] >= argmax.per_class["recall"][2]
    assert rfq.gmean > argmax.gmean
    assert rfq.auc == argmax.auc  # the ranking does not depend on the rule
    np.testing.assert_allclose(argmax.per_class["recall"],
                               recall_score(y, proba.argmax(axis=1), average=None))


def test_rfq_tie_goes_to_the_rarer_class():
    y = np.array([0, 0, 0, 1])
    proba = np.array([[0.75, 0.25]] * 4)  # p1 / pi1 == p0 / pi0 exactly
    report = imbalance_report(y, proba, [0, 1])
    assert report.per_class["recall"].tolist() == [0.0, 1.0]


def test_given_predictions_and_priors():
    y, proba = imbalanced_data(2)
    y_pred = np.zeros_like(y)
    report = imbalance_report(y, proba, [0, 1, 2], y_pred=y_pred)
    assert report.decision == "given" and report.gmean == 0.0
    uniform = imbalance_report(y, proba, [0, 1, 2], priors=[1, 1, 1])
    np.testing.assert_allclose(uniform.per_class["recall"],
                               recall_score(y, proba.argmax(axis=1), average=None))


def test_class_absent_from_y_true_gets_nan_row():
    y, proba = imbalanced_data(3)
    keep = y != 1
    report = imbalance_report(y[keep], proba[keep], [0, 1, 2])
    assert np.isnan(report.per_class["recall"][1]) and report.per_class["support"][1] == 0
    assert np.isfinite(report.gmean) and np.isfinite(report.auc)


def test_report_prints_a_table():
    y, proba = imbalanced_data(4)
    text = str(imbalance_report(y, proba, [0, 1, 2]))
    assert "balanced_accuracy" in text and "overall (rfq)" in text
    assert len(text.splitlines()) == 5


@pytest.mark.parametrize("kwargs, message", [
    (dict(y_proba=np.full((10, 2), 0.5)), "2 columns but there are 3"),
    (dict(y_proba=np.full((9, 3), 1 / 3)), "9 rows but y_true has 10"),
    (dict(labels=[0, 1, 5]), r"labels \[2\]"),
    (dict(decision="max"), "decision"),
    (dict(decision=0.3), "needs exactly two classes"),
    (dict(decision=1.5), r"threshold in \(0, 1\) or a K x K cost matrix, got 1.5\."),
    (dict(decision=np.float64(0.0)), r"threshold in \(0, 1\) or a K x K cost matrix, got 0.0\."),
    (dict(priors=[0.5, 0.5]), "priors"),
    (dict(priors=[0.0, 0.0, 0.0]), "priors"),
    (dict(priors=[1.0, -0.5, 0.5]), "priors"),
    (dict(y_pred=np.full(10, 9)), r"y_pred holds labels \[9\]"),
    (dict(y_true=np.zeros(10, dtype=int)), "at least two classes"),
])
def test_report_rejects_bad_input(kwargs, message):
    arguments = dict(y_true=np.arange(10) % 3, y_proba=np.full((10, 3), 1 / 3),
                     labels=[0, 1, 2])
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        imbalance_report(**arguments)


# ------------------------------------------------- rows without predictions, OOB report

def with_unscored_rows(seed=5):
    y, proba = imbalanced_data(seed)
    proba = proba.copy()
    missing = np.zeros(y.size, dtype=bool)
    missing[::17] = True
    proba[missing] = np.nan
    return y, proba, missing


def assert_same_report(report, expected):
    for name in ("recall", "precision", "gmean", "balanced_accuracy", "auc", "brier"):
        assert getattr(report, name) == pytest.approx(getattr(expected, name), abs=1e-12)
    for name, column in expected.per_class.items():
        np.testing.assert_allclose(report.per_class[name], column, atol=1e-12, err_msg=name)
    assert report.decision == expected.decision


def test_report_leaves_out_rows_without_probabilities_with_one_warning():
    y, proba, missing = with_unscored_rows()
    priors = np.bincount(y) / y.size  # the frequencies of all rows, as without NaN rows
    with pytest.warns(UserWarning, match=f"{missing.sum()} of {y.size} cases have no score") \
            as caught:
        report = imbalance_report(y, proba, [0, 1, 2])
    assert len(caught) == 1
    expected = imbalance_report(y[~missing], proba[~missing], [0, 1, 2], priors=priors)
    assert_same_report(report, expected)
    np.testing.assert_array_equal(report.per_class["support"], np.bincount(y[~missing]))


def test_report_rejects_rows_with_some_probabilities_missing():
    y, proba = imbalanced_data(6)
    proba = proba.copy()
    proba[4, 1] = np.nan
    with pytest.raises(ValueError, match="NaN in some but not all columns of 1 rows"):
        imbalance_report(y, proba, [0, 1, 2])


@pytest.mark.parametrize("decision", ["rfq", "argmax"])
def test_oob_report_of_a_fitted_forest(decision):
    from sklearn.datasets import make_classification

    from aucforest import AUCForestClassifier
    from aucforest.metrics import oob_imbalance_report

    X, y = make_classification(120, n_classes=3, n_informative=4, weights=[0.7, 0.2],
                               random_state=0)
    forest = AUCForestClassifier(8, oob_score=True, decision=decision, random_state=0)
    with pytest.warns(UserWarning):  # a few cases in every tree's sample
        forest.fit(X, y)
    proba = forest.oob_decision_function_
    has_oob = ~np.isnan(proba[:, 0])
    assert not has_oob.all()
    with pytest.warns(UserWarning, match=f"{(~has_oob).sum()} of 120 cases have no score"):
        report = oob_imbalance_report(forest, y)
    assert report.auc == pytest.approx(forest.oob_score_, abs=1e-12)
    assert report.gmean == pytest.approx(forest.oob_gmean_, abs=1e-12)
    y_pred = forest.classes_[np.argmax(proba[has_oob] / forest.class_prior_, axis=1)] \
        if decision == "rfq" else forest.classes_[np.argmax(proba[has_oob], axis=1)]
    np.testing.assert_allclose(report.per_class["recall"],
                               recall_score(y[has_oob], y_pred, average=None))
    assert report.decision == decision


def test_oob_report_explains_what_it_needs():
    from sklearn.datasets import make_classification
    from sklearn.exceptions import NotFittedError

    from aucforest import AUCForestClassifier
    from aucforest.metrics import oob_imbalance_report

    X, y = make_classification(60, random_state=0)
    with pytest.raises(NotFittedError):
        oob_imbalance_report(AUCForestClassifier(5), y)
    without_oob = AUCForestClassifier(5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="fit it with oob_score=True"):
        oob_imbalance_report(without_oob, y)
    with_oob = AUCForestClassifier(20, oob_score=True, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="pass the labels the forest was fitted on"):
        oob_imbalance_report(with_oob, y[:50])
    with_oob.oob_labels_ = None  # a forest that does not keep its training labels
    with pytest.raises(ValueError, match="does not keep its training labels"):
        oob_imbalance_report(with_oob)


def test_oob_report_takes_the_labels_the_forest_keeps():
    from sklearn.datasets import make_classification

    from aucforest import AUCForestClassifier
    from aucforest.metrics import oob_imbalance_report

    X, y = make_classification(80, n_classes=3, n_informative=4, random_state=2)
    labels = np.array(["ant", "bee", "cat"])[y]
    forest = AUCForestClassifier(30, oob_score=True, random_state=0).fit(X, labels)
    if not hasattr(forest, "oob_labels_"):  # forests that keep them set it in fit
        forest.oob_labels_ = np.searchsorted(forest.classes_, labels)
    assert_same_report(oob_imbalance_report(forest), oob_imbalance_report(forest, labels))


# ------------------------------------------------- the estimator's decisions, names

def test_report_takes_a_threshold_decision_as_the_estimator_does():
    from sklearn.datasets import make_classification

    from aucforest import AUCForestClassifier

    X, y = make_classification(200, weights=[0.85], random_state=1)
    forest = AUCForestClassifier(20, decision=0.3, random_state=0).fit(X[:150], y[:150])
    proba = forest.predict_proba(X[150:])
    report = imbalance_report(y[150:], proba, forest.classes_, decision=0.3)
    given = imbalance_report(y[150:], proba, forest.classes_, y_pred=forest.predict(X[150:]))
    hand = imbalance_report(y[150:], proba, forest.classes_, y_pred=(proba[:, 1] >= 0.3) * 1)
    assert report.decision == 0.3 and "overall (0.3)" in str(report)
    for expected in (given, hand):
        np.testing.assert_array_equal(report.per_class["recall"], expected.per_class["recall"])
        assert report.gmean == expected.gmean
    rfq = forest.set_params(decision="rfq")
    rfq_report = imbalance_report(y[150:], proba, forest.classes_, priors=rfq.class_prior_)
    assert rfq_report.gmean == imbalance_report(
        y[150:], proba, forest.classes_, y_pred=rfq.predict(X[150:])).gmean


def test_old_argument_names_still_work_with_a_future_warning():
    y, proba = imbalanced_data(7)
    expected = imbalance_report(y, proba, [0, 1, 2])
    with pytest.warns(FutureWarning, match="'proba' was renamed to 'y_proba'"):
        old = imbalance_report(y, proba=proba, labels=[0, 1, 2])
    assert_same_report(old, expected)
    with pytest.warns(FutureWarning, match="'classes' was renamed to 'labels'"):
        old = imbalance_report(y, proba, classes=[0, 1, 2])
    assert_same_report(old, expected)
    with pytest.raises(TypeError, match="got both 'proba' and its new name 'y_proba'"):
        imbalance_report(y, y_proba=proba, proba=proba)


def test_per_class_gmean_is_named_for_what_it_is():
    y, proba = imbalanced_data(8)
    report = imbalance_report(y, proba, [0, 1, 2])
    table = report.per_class
    assert "gmean" not in table and "ovr_gmean" in str(report).splitlines()[0]
    np.testing.assert_allclose(table["ovr_gmean"], np.sqrt(table["recall"] * table["specificity"]))
    with pytest.warns(FutureWarning, match="'gmean' was renamed to 'ovr_gmean'"):
        np.testing.assert_array_equal(table["gmean"], table["ovr_gmean"])
    with pytest.raises(KeyError):
        table["nonsense"]


def test_labels_default_to_the_sorted_labels_of_y_true():
    y, proba = imbalanced_data(9)
    assert_same_report(imbalance_report(y, proba), imbalance_report(y, proba, [0, 1, 2]))


# ------------------------------------------------- a cost-matrix decision

def brute_force_least_cost(proba, costs):
    """Index of the class of least expected cost per row, by explicit sums (ties: first)."""
    chosen = []
    for row in proba:
        expected = [sum(row[j] * costs[j][k] for j in range(len(row))) for k in range(len(row))]
        chosen.append(min(range(len(row)), key=lambda k: (expected[k], k)))
    return np.array(chosen)


def test_report_takes_a_cost_matrix_decision():
    y, proba = imbalanced_data(11)
    costs = np.array([[0.0, 1.0, 3.0], [5.0, 0.0, 1.0], [20.0, 6.0, 0.0]])
    report = imbalance_report(y, proba, [0, 1, 2], decision=costs)
    y_pred = brute_force_least_cost(proba, costs)
    assert not np.array_equal(y_pred, np.argmax(proba, axis=1))  # the costs matter here
    np.testing.assert_array_equal(report.per_class["recall"],
                                  recall_score(y, y_pred, labels=[0, 1, 2], average=None))
    assert report.gmean == pytest.approx(gmean_score(y, y_pred), abs=1e-15)
    np.testing.assert_array_equal(report.decision, costs)
    assert "overall (cost matrix):" in str(report)
    with pytest.raises(ValueError, match=r"with 3 classes a cost matrix must be 3 x 3"):
        imbalance_report(y, proba, [0, 1, 2], decision=costs[:2, :2])
    with pytest.raises(ValueError, match="decision cost matrix holds a negative cost"):
        imbalance_report(y, proba, [0, 1, 2], decision=-costs)


def test_oob_report_of_a_forest_deciding_by_a_cost_matrix():
    """The forest's own rule: least expected cost on the out-of-bag probabilities
    brought back to the training priors (the forest grew on balanced draws), so
    the report's G-mean is the forest's oob_gmean_."""
    from sklearn.datasets import make_classification

    from aucforest import AUCForestClassifier
    from aucforest.metrics import oob_imbalance_report

    X, y = make_classification(300, n_classes=3, n_informative=4, weights=[0.7, 0.2],
                               random_state=0)
    costs = [[0, 1, 1], [4, 0, 1], [12, 3, 0]]
    forest = AUCForestClassifier(40, oob_score=True, balanced_bootstrap=True, decision=costs,
                                 random_state=0).fit(X, y)
    q = forest.oob_decision_function_
    weights = forest.draw_class_weights_
    assert not np.allclose(weights, 1.0)
    p = (q / weights) / (q / weights).sum(axis=1, keepdims=True)  # Bayes' rule, by hand
    y_pred = forest.classes_[brute_force_least_cost(p, costs)]
    assert not np.array_equal(y_pred, forest.classes_[brute_force_least_cost(q, costs)])

    report = oob_imbalance_report(forest, y)
    np.testing.assert_array_equal(report.per_class["recall"],
                                  recall_score(y, y_pred, average=None))
    assert report.gmean == pytest.approx(forest.oob_gmean_, abs=1e-12)
    np.testing.assert_array_equal(report.decision, costs)
    assert oob_imbalance_report(forest, y, decision="argmax").decision == "argmax"
