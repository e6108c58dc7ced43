"""Text columns as categorical features through the real command line (issue 29).

Real CSV files through `aucforest.cli.main` in process; the command line's
forest is checked against the Python API on a pandas frame with ``category``
columns (the same seed grows the same trees), so fit, the levels saved in the
model file and predict's mapping by value are each compared with an
independent path.
"""
import csv
import os

import numpy as np
import pytest

import aucforest
from aucforest import io as model_io
from aucforest.inspection import oob_importance
from cli_files import run_main, write_csv

pd = pytest.importorskip("pandas")

N_TREES = 12
STATES = [f"S{i:02d}" for i in range(30)]


def clinic(n=240, seed=0):
    """30 states (each with its own risk), a 3-level plan, an age with '?' cells."""
    rng = np.random.RandomState(seed)
    risk = dict(zip(STATES, rng.normal(0, 1.5, len(STATES))))
    state = rng.choice(STATES, n)
    plan = rng.choice(["basic", "gold", "silver"], n)
    age = np.round(rng.normal(50, 12, n), 1)
    logit = -1.0 + np.array([risk[s] for s in state]) + 0.03 * (age - 50)
    outcome = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-logit)), "ill", "well")
    rows = [[state[i], plan[i], "?" if i % 37 == 5 else age[i], outcome[i]] for i in range(n)]
    return ["state", "plan", "age", "outcome"], rows


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("categorical")
    header, rows = clinic()
    data = write_csv(folder / "clinic.csv", header, rows)
    return folder, data


def fit_model(capsys, data, model, *options):
    code, out, err = run_main(capsys, "fit", data, "--target", "outcome", "--output", model,
                              "--n-estimators", N_TREES, "--quiet", *options)
    return code, out, err


def frame_of(path):
    """The CSV as a user would load it in Python: text columns as category."""
    frame = pd.read_csv(path, na_values=["?"])
    for column in ("state", "plan"):
        frame[column] = frame[column].astype("category")
    return frame


def read_output(text):
    rows = list(csv.reader(text.splitlines()))
    return rows[0], rows[1:]


def test_text_columns_are_categorical_features_with_levels_in_the_model_file(capsys, trained):
    folder, data = trained
    code, out, err = fit_model(capsys, data, folder / "m.npz")
    assert code == 0, err
    assert "3 columns: 1 numeric, 2 categorical (33 levels)" in out
    assert "one-hot" not in out and "ordinal" not in out
    saved = model_io.read_model(folder / "m.npz")
    columns = {c["name"]: c for c in saved.extra["encoding"]["columns"]}
    assert columns["state"]["kind"] == "categorical" and columns["state"]["levels"] == STATES
    assert columns["plan"]["levels"] == ["basic", "gold", "silver"]
    forest = saved.forest
    np.testing.assert_array_equal(forest.is_categorical_, [True, True, False])
    assert forest.categories_ == [STATES, ["basic", "gold", "silver"], None]
    # the same forest as the Python API grows on the frame with category columns
    frame = frame_of(data)
    y = frame.pop("outcome")
    reference = aucforest.AUCForestClassifier(N_TREES, random_state=0, oob_score=True).fit(
        frame, y)
    np.testing.assert_array_equal(reference.is_categorical_, forest.is_categorical_)
    np.testing.assert_allclose(forest.predict_proba(frame), reference.predict_proba(frame),
                               rtol=0, atol=1e-12)
    assert f"out-of-bag AUC {reference.oob_score_:.4f}" in out


def test_predict_maps_levels_by_value_and_unseen_levels_to_missing(capsys, trained):
    folder, data = trained
    assert fit_model(capsys, data, folder / "p.npz")[0] == 0
    header, rows = clinic(40, seed=1)
    rows = rows[::-1]  # levels first seen in another order than in training
    rows[0][0] = rows[1][0] = "ZZ"  # a state not seen in training, twice
    new = write_csv(folder / "new.csv", header, rows)
    code, out, err = run_main(capsys, "predict", folder / "p.npz", new, "--proba",
                              "--output", folder / "proba.csv")
    assert code == 0, err
    assert ("warning: column 'state' has levels not seen in training ('ZZ') in 2 rows; "
            "encoded as missing values") in err
    _, written = read_output(open(folder / "proba.csv").read())
    proba = np.array(written, dtype=float)
    forest = aucforest.load(folder / "p.npz")
    frame = frame_of(new).drop(columns="outcome")
    assert list(frame["state"].cat.categories) != STATES  # pandas' own codes differ
    with pytest.warns(UserWarning, match="column 'state' has 2 values of categories not seen"):
        expected = forest.predict_proba(frame)
    np.testing.assert_allclose(proba, expected, rtol=0, atol=5e-7)
    missing = frame.assign(state=pd.Categorical([np.nan] * 2 + list(frame["state"][2:])))
    np.testing.assert_allclose(proba[:2], forest.predict_proba(missing)[:2], atol=5e-7)


def test_evaluate_and_importance_report_per_column(capsys, trained):
    folder, data = trained
    assert fit_model(capsys, data, folder / "e.npz")[0] == 0
    code, out, err = run_main(capsys, "importance", folder / "e.npz", data, "--target",
                              "outcome", "--repeats", 2)
    assert code == 0, err
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("feature"))
    assert sorted(line.split()[0] for line in lines[start + 1:]) == ["age", "plan", "state"]
    code, out, err = run_main(capsys, "evaluate", folder / "e.npz", data, "--target", "outcome")
    assert code == 0 and "AUC" in out, err


def test_max_one_hot_keeps_the_earlier_encoding_and_importance_groups_its_levels(
        capsys, trained):
    folder, data = trained
    code, out, err = fit_model(capsys, data, folder / "o.npz", "--max-one-hot", 10)
    assert code == 0, err
    assert "1 one-hot (3 levels), 1 ordinal (30 levels)" in out
    forest = aucforest.load(folder / "o.npz")
    assert not forest.is_categorical_.any()
    names = list(forest.feature_names_in_)
    assert names == ["state", "plan=basic", "plan=gold", "plan=silver", "age"]
    code, out, err = run_main(capsys, "importance", folder / "o.npz", data, "--target",
                              "outcome", "--repeats", 2, "--seed", 4)
    assert code == 0, err
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("feature"))
    printed = {line.split()[0]: float(line.split()[1]) for line in lines[start + 1:]}
    assert sorted(printed) == ["age", "plan", "state"]  # not plan=basic, plan=gold, ...
    frame = pd.read_csv(data, na_values=["?"])
    y = frame.pop("outcome")
    X = aucforest.ColumnEncoding.from_model_file(folder / "o.npz").transform(
        pd.read_csv(data, dtype=str, keep_default_na=False))
    expected = oob_importance(forest, X, y, n_repeats=2, random_state=4,
                              groups={"state": [0], "plan": [1, 2, 3], "age": [4]})
    for name, value in zip(expected.groups, expected.importances_mean):
        assert printed[name] == pytest.approx(value, abs=5e-5)


# -------------------------------------------- the refusals still hold with text columns

def test_continuous_target_is_refused_and_no_model_written(capsys, trained):
    folder, data = trained
    header, rows = clinic()
    for i, row in enumerate(rows):
        row[3] = f"{i * 0.37:.2f}"
    path = write_csv(folder / "continuous.csv", header, rows)
    code, out, err = fit_model(capsys, path, folder / "c.npz")
    assert code == 1 and out == ""
    assert "target column 'outcome'" in err and "looks continuous" in err
    assert "--classification" in err
    assert not os.path.exists(folder / "c.npz")


def test_identifier_text_column_is_left_out_with_a_warning(capsys, trained):
    folder, _ = trained
    header, rows = clinic()
    data = write_csv(folder / "ids.csv", ["patient", *header],
                     [[f"P{i:05d}", *row] for i, row in enumerate(rows)])
    code, out, err = fit_model(capsys, data, folder / "i.npz")
    assert code == 0, err
    assert "column 'patient'" in err and "looks like an identifier" in err
    assert "--keep patient" in err
    assert aucforest.load(folder / "i.npz").n_features_in_ == 3


def test_default_seed_is_printed_and_reproducible(capsys, trained):
    folder, data = trained
    code, first, err = fit_model(capsys, data, folder / "s1.npz")
    assert code == 0, err
    code, second, err = fit_model(capsys, data, folder / "s2.npz")
    assert "seed 0 (--seed)" in first
    a, b = aucforest.load(folder / "s1.npz"), aucforest.load(folder / "s2.npz")
    frame = frame_of(data).drop(columns="outcome")
    np.testing.assert_array_equal(a.predict_proba(frame), b.predict_proba(frame))


def test_predict_refuses_text_in_a_numeric_column_and_writes_nothing(capsys, trained):
    folder, data = trained
    assert fit_model(capsys, data, folder / "r.npz")[0] == 0
    header, rows = clinic(20, seed=2)
    rows[3][2] = "old"
    bad = write_csv(folder / "bad.csv", header, rows)
    code, out, err = run_main(capsys, "predict", folder / "r.npz", bad,
                              "--output", folder / "never.csv")
    assert code == 1 and "column 'age'" in err and "must be numeric" in err
    assert not os.path.exists(folder / "never.csv")


def test_compare_splits_text_columns_natively_and_takes_weights(capsys, trained):
    folder, data = trained
    header, rows = clinic()
    weighted = write_csv(folder / "weighted.csv", [*header, "wt"],
                         [[*row, 1 + i % 2] for i, row in enumerate(rows)])
    code, out, err = run_main(capsys, "compare", weighted, "--target", "outcome", "--weight",
                              "wt", "--folds", 2, "--repeats", 1, "--n-estimators", 5,
                              "--quiet")
    assert code == 0, err
    assert "2 categorical (33 levels)" in out and "case weights from column 'wt'" in out
