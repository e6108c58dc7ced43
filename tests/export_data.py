"""Rows the export tests share: numeric features whose class depends on the
first ones, NaN where it tells the class and where the fit saw none, and the
forests on them that both exports are checked on."""
import numpy as np
import pandas as pd
from scipy import sparse

from aucforest import AUCForestClassifier


def make_data(n, n_classes=2, seed=0, missing=0.2):
    """Numeric rows whose class depends on the first features; NaN in column 1 (a
    predictive column, so that splits on it learn where NaN goes) and none in column 2."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    score = X[:, 0] + 0.8 * X[:, 1] + 0.5 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    X[rng.random(n) < missing, 1] = np.nan
    X[(y == n_classes - 1) & (rng.random(n) < missing), 3] = np.nan  # NaN tells the class
    return X, y


def held_out(n, seed=1):
    """Rows to predict: NaN in columns 1 and 3, and in column 2, which had none at fit."""
    X, _ = make_data(n, seed=seed, missing=0.25)
    X[np.random.default_rng(seed).random(n) < 0.2, 2] = np.nan
    return X


# Forests and rows the ONNX and treelite tests both check (each against the
# forest's own predict_proba): built once here so the two exports see the same.

def missing_values_forest(n_estimators):
    """A forest grown by the exact splitter on `make_data` rows, and held-out rows
    with NaN everywhere (rows 0..49) and in column 2, which had none at fit."""
    X, y = make_data(400)
    forest = AUCForestClassifier(n_estimators=n_estimators, random_state=0,
                                 max_bins=None).fit(X, y)
    X_test = held_out(300)
    X_test[:50, :] = np.nan  # rows missing everywhere
    X_test[50:100, 2] = np.nan  # column 2 had no NaN at fit: the heavier child
    return forest, X_test


def tied_values_forest(max_bins, nsplit, n_estimators):
    """A forest grown with ``max_bins`` and ``nsplit`` on three-class rows whose
    column 4 is rounded to one decimal (ties, many on the thresholds), and
    held-out rows rounded the same way."""
    X, y = make_data(400, 3)
    X[:, 4] = np.round(X[:, 4], 1)
    forest = AUCForestClassifier(n_estimators=n_estimators, max_bins=max_bins, nsplit=nsplit,
                                 random_state=0).fit(X, y)
    X_test = held_out(300)
    X_test[:, 4] = np.round(X_test[:, 4], 1)
    return forest, X_test


def nan_directions(forest, features):
    """The (feature, goes left) pairs of NaN at the forest's splits on ``features``."""
    return {(int(f), int(m)) for tree in forest.estimators_
            for f, m in zip(tree.tree_.feature, tree.tree_.missing_go_to_left)
            if f in features}


def categorical_codes_forest():
    """A forest with categorical codes 0..39 (sets beyond 30 levels) and 0..5 (with
    NaN), and held-out rows with levels never seen at fit (within 0..254) and NaN."""
    rng = np.random.default_rng(3)
    n = 500
    X, _ = make_data(n)
    X[:, 2] = rng.integers(0, 40, n)
    X[:, 4] = rng.integers(0, 6, n)
    X[rng.random(n) < 0.1, 4] = np.nan
    y = ((X[:, 2] % 3 == 0) ^ (X[:, 4] > 2) ^ (rng.random(n) < 0.1)).astype(int)
    forest = AUCForestClassifier(n_estimators=20, categorical_features=[2, 4],
                                 random_state=0).fit(X, y)
    X_test = held_out(400)
    X_test[:, 2] = rng.integers(0, 60, 400)  # 40..59 unseen
    X_test[:, 4] = rng.integers(0, 9, 400)  # 6..8 unseen
    X_test[:40, 4] = np.nan
    X_test[40:60, 2] = 254
    return forest, X_test


def categorical_frame_forest():
    """A forest fitted on a DataFrame with ``category`` columns of text ("colour")
    and integer ("size") levels; a held-out frame with unseen levels, and its rows
    as each level's position in ``categories_`` (NaN for an unseen level, as
    predict treats it): what an exported model takes."""
    rng = np.random.default_rng(4)
    n = 400
    colours = np.array(["red", "green", "blue", "amber", "violet"])
    frame = pd.DataFrame({"x": rng.normal(size=n),
                          "colour": pd.Categorical(rng.choice(colours, n)),
                          "size": pd.Categorical(rng.choice([3, 7, 11], n))})
    y = np.where(frame["colour"].isin(["red", "amber"]) ^ (frame["x"] > 0.5), "yes", "no")
    forest = AUCForestClassifier(n_estimators=20, random_state=0).fit(frame, y)
    test = pd.DataFrame({"x": rng.normal(size=200),
                         "colour": pd.Categorical(rng.choice([*colours, "teal"], 200)),
                         "size": pd.Categorical(rng.choice([3, 7, 11, 13], 200))})
    positions = [{level: code for code, level in enumerate(levels)}
                 for levels in forest.categories_[1:]]
    codes = np.column_stack([test["x"].to_numpy()] + [
        [position.get(level, np.nan) for level in test[column]]
        for position, column in zip(positions, ["colour", "size"])]).astype(np.float64)
    return forest, test, codes


def sparse_forest():
    """A forest fitted on a scipy CSR matrix, and held-out CSR rows."""
    rng = np.random.default_rng(5)
    X = sparse.random(400, 30, density=0.1, random_state=5, format="csr")
    y = (X[:, :5].sum(axis=1).A.ravel() + 0.2 * rng.normal(size=400) > 0.25).astype(int)
    forest = AUCForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    return forest, sparse.random(200, 30, density=0.1, random_state=6, format="csr")


def decision_frame(n, n_classes, seed=0):
    """A DataFrame of `make_data` rows (NaN in two numeric columns) with a
    ``category`` column "colour" (text levels, some rows missing) that tells the
    class, and its labels; the last tenth of the rows repeats earlier ones."""
    X, y = make_data(n, n_classes, seed=seed)
    rng = np.random.default_rng(seed + 100)
    colours = np.array(["amber", "blue", "green", "red", "violet"])
    colour = np.where(rng.random(n) < 0.6, colours[y % colours.size], rng.choice(colours, n))
    frame = pd.DataFrame({f"x{j}": X[:, j] for j in range(X.shape[1])})
    frame["colour"] = pd.Categorical(colour, categories=colours)
    frame.loc[rng.random(n) < 0.1, "colour"] = np.nan
    repeated = rng.choice(n - n // 10, n // 10, replace=False)
    frame.iloc[n - n // 10:] = frame.iloc[repeated].to_numpy()
    y = y.copy()
    y[n - n // 10:] = y[repeated]
    frame["colour"] = pd.Categorical(frame["colour"], categories=colours)
    return frame, y


def frame_codes(forest, frame):
    """The rows of a DataFrame as an exported model takes them: numbers, and for
    each ``category`` column the position of its level in ``categories_`` (NaN
    when missing)."""
    columns = []
    for j, name in enumerate(frame.columns):
        levels = forest.categories_[j] if forest.categories_ is not None else None
        if levels is None:
            columns.append(frame[name].to_numpy(dtype=np.float64))
        else:
            position = {level: code for code, level in enumerate(levels)}
            columns.append(np.array([position.get(level, np.nan) if isinstance(level, str)
                                     else np.nan for level in frame[name]], dtype=np.float64))
    return np.column_stack(columns)
