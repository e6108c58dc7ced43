"""Draw the user guide's figures into docs/images/ (the example of section 13,
"From scores to decisions": a forest grown on balanced bootstraps on generated
imbalanced data, its raw and its out-of-bag isotonic-calibrated probabilities
on the held-out half).

    python docs/make_figures.py [FOLDER]

FOLDER defaults to docs/images. The data are generated (scikit-learn's
``make_classification``), the seeds fixed: the same command draws the same
figure. tests/test_docs_figures.py runs it.
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from aucforest import AUCForestClassifier  # noqa: E402
from aucforest.calibration import OOBCalibratedClassifier  # noqa: E402
from aucforest.metrics import plot_reliability  # noqa: E402

IMAGES = Path(__file__).resolve().parent / "images"
N_BINS = 10


def guide_example():
    """The held-out labels and the raw and calibrated probabilities of the rare
    class, as the guide's section 13 computes them."""
    X, y = make_classification(n_samples=2000, weights=[0.9], flip_y=0.02, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, stratify=y,
                                                        random_state=0)
    forest = AUCForestClassifier(100, balanced_bootstrap=True, oob_score=True,
                                 random_state=0).fit(X_train, y_train)
    calibrated = OOBCalibratedClassifier(forest, method="isotonic").fit(X_train, y_train)
    return y_test, forest.predict_proba(X_test)[:, 1], calibrated.predict_proba(X_test)[:, 1]


def reliability_figure(path):
    """Reliability diagram of the raw and the calibrated forest, saved to ``path``."""
    y_test, raw, calibrated = guide_example()
    figure = Figure(figsize=(5, 5), layout="constrained")
    ax = figure.add_subplot()
    plot_reliability(y_test, raw, n_bins=N_BINS, name="raw forest (balanced bootstrap)",
                     counts=True, ax=ax)
    plot_reliability(y_test, calibrated, n_bins=N_BINS, name="isotonic on out-of-bag",
                     counts=True, ax=ax)
    ax.set_title(f"Held-out half, {N_BINS} bins of equal width; cases per bin beside "
                 "each point", fontsize="small")
    figure.savefig(path, dpi=100)
    return path


def main(folder=IMAGES):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    print(reliability_figure(folder / "reliability.png"))


if __name__ == "__main__":
    main(*sys.argv[1:])
