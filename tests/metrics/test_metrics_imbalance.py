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
    np.testing.assert_allclose(table["gmean"], np.sqrt(table["recall"] * specificity))
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
    (dict(proba=np.full((10, 2), 0.5)), "2 columns but there are 3"),
    (dict(proba=np.full((9, 3), 1 / 3)), "9 rows but y_true has 10"),
    (dict(classes=[0, 1, 5]), r"labels \[2\]"),
    (dict(decision="max"), "decision"),
    (dict(priors=[0.5, 0.5]), "priors"),
    (dict(y_pred=np.full(10, 9)), r"y_pred holds labels \[9\]"),
    (dict(y_true=np.zeros(10, dtype=int)), "at least two classes"),
])
def test_report_rejects_bad_input(kwargs, message):
    arguments = dict(y_true=np.arange(10) % 3, proba=np.full((10, 3), 1 / 3),
                     classes=[0, 1, 2])
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        imbalance_report(**arguments)
