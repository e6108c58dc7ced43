"""reliability_curve against scikit-learn's calibration_curve (the same bins) and a
naive count per bin; plot_reliability draws those points (matplotlib, Agg)."""
import matplotlib
import numpy as np
import pytest
from sklearn.calibration import calibration_curve

from aucforest.metrics import plot_reliability, reliability_curve

matplotlib.use("Agg")


def imbalanced_probabilities(seed, k=3, n=500):
    rng = np.random.default_rng(seed)
    priors = np.array([0.75, 0.2, 0.05])[:k]
    y = rng.choice(k, size=n, p=priors / priors.sum())
    logits = rng.normal(size=(n, k)) + 2.0 * np.eye(k)[y]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return y, np.round(proba, 3)  # rounded: values on the bin edges too


def naive_counts(proba, edges):
    """Cases per bin by comparisons: (edge_i, edge_i+1], the first bin closed."""
    counts = []
    for i in range(len(edges) - 1):
        low = proba >= edges[0] if i == 0 else proba > edges[i]
        counts.append(int(np.sum(low & (proba <= edges[i + 1]))) if i < len(edges) - 2
                      else int(np.sum(low)))
    return np.array([c for c in counts if c > 0])


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("k", [2, 3])
def test_bins_match_calibration_curve_one_class_against_the_rest(strategy, k):
    y, proba = imbalanced_probabilities(k, k)
    if k == 2:
        proba = proba / proba.sum(axis=1, keepdims=True)
    curve = reliability_curve(y, proba, n_bins=8, strategy=strategy)
    drawn = [1] if k == 2 else list(range(k))
    assert curve.classes.tolist() == drawn
    for index, c in enumerate(drawn):
        observed, predicted = calibration_curve(y == c, proba[:, c], n_bins=8,
                                                strategy=strategy)
        np.testing.assert_allclose(curve.observed[index], observed, rtol=0, atol=1e-12)
        np.testing.assert_allclose(curve.mean_predicted[index], predicted, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(curve.counts[index],
                                      naive_counts(proba[:, c], curve.bin_edges[index]))
        assert curve.counts[index].sum() == len(y)


def test_one_dimensional_probabilities_and_string_labels():
    y, proba = imbalanced_probabilities(5, 2)
    labels = np.array(["common", "rare"])[y]
    p_rare = proba[:, 1] / proba.sum(axis=1)
    curve = reliability_curve(labels, p_rare, n_bins=5)
    assert curve.classes.tolist() == ["rare"]
    observed, predicted = calibration_curve(labels == "rare", p_rare, n_bins=5)
    np.testing.assert_allclose(curve.observed[0], observed, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_bins=0), "n_bins must be an integer >= 1"),
    (dict(n_bins=2.5), "n_bins must be an integer >= 1"),
    (dict(strategy="kmeans"), "strategy must be 'uniform' or 'quantile'"),
    (dict(y_proba=np.full((6, 3), 1.5)), r"values outside \[0, 1\]"),
    (dict(y_proba=np.full(6, 0.5)), "1-d y_proba is the probability of labels"),
    (dict(y_proba=np.full((5, 3), 1 / 3)), "5 rows but y_true has 6"),
])
def test_bad_input_is_refused(kwargs, message):
    arguments = dict(y_true=[0, 1, 2, 0, 1, 2], y_proba=np.full((6, 3), 1 / 3))
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        reliability_curve(**arguments)


def test_plot_draws_the_curve_points_and_the_diagonal():
    import matplotlib.pyplot as plt

    y, proba = imbalanced_probabilities(3, 3)
    ax = plot_reliability(y, proba, n_bins=6, name="forest", counts=True)
    curve = reliability_curve(y, proba, n_bins=6)
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert "perfectly calibrated" in lines
    for index, label in enumerate(curve.classes):
        line = lines[f"forest: {label}"]
        np.testing.assert_array_equal(line.get_xdata(), curve.mean_predicted[index])
        np.testing.assert_array_equal(line.get_ydata(), curve.observed[index])
    assert sorted(int(t.get_text()) for t in ax.texts) == sorted(
        np.concatenate(curve.counts).tolist())
    binary_y, binary_p = y == 2, proba[:, 2]
    ax2 = plot_reliability(binary_y, binary_p, n_bins=4, name="raw")
    plot_reliability(binary_y, np.sqrt(binary_p), n_bins=4, name="other", ax=ax2)
    assert [line.get_label() for line in ax2.get_lines()] == [
        "perfectly calibrated", "raw", "other"]
    plt.close("all")
