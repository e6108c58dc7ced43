"""plot_roc draws one labelled curve per class, pair or binary problem."""
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from aucforest.metrics import auc_ci, plot_roc, roc_curve  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def three_class_data(seed=0, n=120):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    logits = rng.normal(size=(n, 3)) + 2.0 * np.eye(3)[y]
    return y, np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)


def curve_lines(ax):
    return [line for line in ax.get_lines() if not line.get_label().startswith("_")]


def test_binary_plot_shows_curve_auc_and_delong_interval():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 40)
    scores = rng.normal(size=80) + y
    ax = plot_roc(y, scores, name="model")
    (line,) = curve_lines(ax)
    result = auc_ci(y, scores)
    assert line.get_label() == (
        f"model: AUC {result.auc:.3f} [{result.low:.3f}, {result.high:.3f}]")
    curve = roc_curve(y, scores)
    np.testing.assert_allclose(line.get_xdata(), curve.fpr)
    np.testing.assert_allclose(line.get_ydata(), curve.tpr)
    assert ax.get_legend() is not None


@pytest.mark.parametrize("multiclass, expected", [
    ("ovr", ["0 vs rest", "1 vs rest", "2 vs rest"]),
    ("ovo", ["0 vs 1", "0 vs 2", "1 vs 2"]),
])
def test_multiclass_plot_draws_one_curve_per_class_or_pair(multiclass, expected):
    y, proba = three_class_data()
    fig, ax = plt.subplots()
    returned = plot_roc(y, proba, multiclass=multiclass, ax=ax)
    assert returned is ax
    labels = [line.get_label() for line in curve_lines(ax)]
    assert [label.split(",")[0] for label in labels] == expected
    assert all("AUC" in label and "[" in label for label in labels)


def test_string_labels_and_single_case_class_omit_interval():
    y = np.array(["a", "a", "a", "b"])
    ax = plot_roc(y, [0.1, 0.4, 0.3, 0.9])
    (line,) = curve_lines(ax)
    assert line.get_label() == "AUC 1.000"


def test_missing_matplotlib_gives_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install aucforest\[plot\]"):
        plot_roc([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4])


def test_plot_rejects_bad_arguments():
    y, proba = three_class_data()
    with pytest.raises(ValueError, match="multiclass"):
        plot_roc(y, proba, multiclass="pairs")
    with pytest.raises(ValueError, match="2 columns but there are 3"):
        plot_roc(y, proba[:, :2])
