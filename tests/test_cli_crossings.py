"""The command line where features meet (issue 44): models saved from Python
with category columns, importance of a weighted balanced-bootstrap fit,
one-hot names that collide, targets and features that look like something
else.

Real CSV and Parquet files written in ``tmp_path``, through
`aucforest.cli.main` in process; each answer is checked against an
independent path (the Python API on a pandas frame, the fit's own OOB
figures, the encoding's names).
"""
import csv
import io
import json

import numpy as np
import pytest
from sklearn.metrics import recall_score

import aucforest
from aucforest import io as model_io
from cli_files import run_main, write_csv

pd = pytest.importorskip("pandas")

N_TREES = 15


def read_csv_text(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


# ------------------------------------------------ case 1: a Python model with category columns

def shops(n=300, seed=0):
    """A frame with an int-levelled category (store numbers 11..17, listed in
    a non-sorted order), a str-levelled one and a number; y depends on both."""
    rng = np.random.RandomState(seed)
    store = rng.choice([17, 11, 13, 15, 12, 14, 16], n)
    region = rng.choice(["west", "east", "north"], n)
    size = np.round(rng.normal(0, 1, n), 3)
    risk = np.isin(store, [11, 15, 16]).astype(float) + (region == "east") + 0.3 * size
    y = np.where(risk + rng.normal(0, 0.3, n) > 0.9, "yes", "no")
    frame = pd.DataFrame({
        "store": pd.Categorical(store, categories=[17, 11, 13, 15, 12, 14, 16]),
        "region": pd.Categorical(region, categories=["west", "north", "east"]),
        "size": size})
    return frame, y


@pytest.fixture(scope="module")
def python_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("python_model")
    frame, y = shops()
    forest = aucforest.AUCForestClassifier(n_estimators=N_TREES, random_state=0).fit(frame, y)
    assert forest.categories_[0] == [17, 11, 13, 15, 12, 14, 16]
    path = folder / "shops.npz"
    aucforest.save(forest, path)
    return folder, forest, frame, y, path


def with_levels(frame, forest):
    """The frame's category columns with the forest's levels (as a user would
    read the CSV back with pandas and set the dtype)."""
    frame = frame.copy()
    for name, levels in zip(forest.feature_names_in_, forest.categories_):
        if levels is not None:
            frame[name] = frame[name].astype(pd.CategoricalDtype(levels))
    return frame


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_predict_on_a_python_model_maps_category_values_by_value(capsys, python_model, suffix):
    """Case 1 (silent wrong): the CSV's store numbers were read as level codes."""
    folder, forest, frame, y, model = python_model
    table = frame.assign(y=y).astype({"store": int, "region": str})  # values, not codes
    data = folder / f"new.{suffix}"
    if suffix == "csv":
        table.to_csv(data, index=False)
    else:
        frame.assign(y=y).to_parquet(data)  # category columns as Parquet dictionaries
    proba_file = folder / f"proba_{suffix}.csv"
    code, out, err = run_main(capsys, "predict", model, data, "--proba", "--output", proba_file)
    assert code == 0, err
    header, rows = read_csv_text(proba_file.read_text())
    assert header == ["no", "yes"]
    expected = forest.predict_proba(frame)
    np.testing.assert_array_equal(np.array(rows, dtype=float), expected)  # to the bit (repr)
    code, out, err = run_main(capsys, "predict", model, data)
    assert code == 0, err
    assert [row[0] for row in read_csv_text(out)[1]] == forest.predict(frame).tolist()
    code, out, err = run_main(capsys, "evaluate", model, data, "--target", "y", "--json")
    assert code == 0, err
    recall = json.loads(out)["report"]["per_class"]["recall"]
    expected = recall_score(y, forest.predict(frame), average=None, labels=["no", "yes"])
    np.testing.assert_allclose(recall, expected)


def test_predict_on_a_python_model_warns_of_an_unseen_value_as_python_does(capsys,
                                                                           python_model):
    """Case 1: a store number and a region the model never saw are missing
    values, with a warning naming the column, as Python's predict does."""
    folder, forest, frame, y, model = python_model
    rows = [[17, "west", 0.5], [99, "east", -0.2], [12, "south", 1.0], [15, "?", 0.1]]
    data = write_csv(folder / "unseen.csv", ["store", "region", "size"], rows)
    code, out, err = run_main(capsys, "predict", model, data, "--proba")
    assert code == 0, err
    assert "column 'store'" in err and "99" in err
    assert "column 'region'" in err and "south" in err
    new = pd.DataFrame({"store": pd.Categorical([17, 99, 12, 15]),
                        "region": pd.Categorical(["west", "east", "south", None]),
                        "size": [0.5, -0.2, 1.0, 0.1]})
    with pytest.warns(UserWarning, match="not seen at fit"):
        expected = forest.predict_proba(new)
    np.testing.assert_array_equal(np.array(read_csv_text(out)[1], dtype=float), expected)


def test_int_levels_that_look_like_codes_are_mapped_by_value(capsys, tmp_path):
    """Case 1 as filed: levels 0..6 in another order than their values, so
    that reading the values as codes runs without error but predicts wrong."""
    rng = np.random.RandomState(1)
    grade = rng.randint(0, 7, 400)
    y = np.where(np.isin(grade, [0, 1, 2]) ^ (rng.uniform(size=400) < 0.05), "yes", "no")
    frame = pd.DataFrame({"grade": pd.Categorical(grade, categories=[3, 0, 6, 1, 5, 2, 4]),
                          "noise": np.round(rng.normal(size=400), 2)})
    forest = aucforest.AUCForestClassifier(n_estimators=N_TREES, random_state=0).fit(frame, y)
    model = tmp_path / "grades.npz"
    aucforest.save(forest, model)
    data = tmp_path / "grades.csv"
    frame.astype({"grade": int}).assign(y=y).to_csv(data, index=False)
    code, out, err = run_main(capsys, "predict", model, data, "--proba")
    assert code == 0 and err == "", err
    np.testing.assert_array_equal(np.array(read_csv_text(out)[1], dtype=float),
                                  forest.predict_proba(frame))
    assert np.mean(forest.predict(frame) == y) > 0.9


# ------------------------------------- case 2: importance of a weighted balanced-bootstrap fit

def importance_table(stdout):
    """The OOB score and ``{feature: importance}`` printed by ``importance``."""
    lines = stdout.splitlines()
    score = float(lines[0].split("OOB auc ")[1].split(";")[0])
    start = next(i for i, line in enumerate(lines) if line.startswith("feature"))
    return score, {line.split()[0]: float(line.split()[1]) for line in lines[start + 1:]}


def test_importance_rebuilds_the_draws_of_a_weighted_balanced_bootstrap_fit(capsys, tmp_path):
    """Case 2 (silent wrong): with --balanced-bootstrap and zero case weights,
    importance drew its out-of-bag rows as if every weight were positive
    (OOB AUC 0.958 against the fit's 0.943)."""
    rng = np.random.RandomState(3)
    n = 240
    X = np.round(rng.normal(size=(n, 3)), 3)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.7, n) > 0.8, "case", "control")
    weight = np.where(rng.uniform(size=n) < 0.3, 0, rng.choice([1, 2], n))
    rows = [[*X[i], weight[i], y[i]] for i in range(n)]
    data = write_csv(tmp_path / "weighted.csv", ["a", "b", "c", "w", "y"], rows)
    model = tmp_path / "m.npz"
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--weight", "w",
                              "--balanced-bootstrap", "--n-estimators", 30, "--output", model,
                              "--quiet", "--json")
    assert code == 0, err
    fit_auc = json.loads(out)["oob_auc"]
    code, out, err = run_main(capsys, "importance", model, data, "--target", "y",
                              "--repeats", 2, "--seed", 4)
    assert code == 0, err
    score, importances = importance_table(out)
    assert score == pytest.approx(fit_auc, abs=5e-5)
    # the same fit in this session keeps its draws: its importances are the reference
    saved = model_io.read_model(model).forest
    encoding = aucforest.ColumnEncoding.from_model_file(model)
    frame = pd.read_csv(data)
    refit = aucforest.AUCForestClassifier(**saved.get_params()).fit(
        encoding.transform(frame[["a", "b", "c"]]), frame["y"].to_numpy(),
        sample_weight=frame["w"].to_numpy(dtype=float))
    assert refit.oob_score_ == pytest.approx(fit_auc, abs=1e-12)
    expected = aucforest.inspection.oob_importance(
        refit, encoding.transform(frame[["a", "b", "c"]]), frame["y"].to_numpy(), n_repeats=2,
        random_state=4)
    assert expected.score == pytest.approx(fit_auc, abs=1e-12)
    for j, name in enumerate("abc"):
        assert importances[name] == pytest.approx(expected.importances_mean[j], abs=5e-5)


def test_importance_intervals_of_a_weighted_fit_are_refused(capsys, tmp_path):
    """Case 2: the subsample refits of --intervals take no case weights, so a
    weighted model's intervals are refused instead of silently unweighted."""
    rng = np.random.RandomState(0)
    rows = [[round(v, 3), int(i % 4 == 0), "a" if v > 0 else "b"]
            for i, v in enumerate(rng.normal(size=80))]
    data = write_csv(tmp_path / "w.csv", ["x", "w", "y"], rows)
    model = tmp_path / "m.npz"
    assert run_main(capsys, "fit", data, "--target", "y", "--weight", "w", "--output", model,
                    "--n-estimators", 5, "--quiet")[0] == 0
    code, out, err = run_main(capsys, "importance", model, data, "--target", "y",
                              "--intervals", 2)
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "--intervals" in err and "--weight 'w'" in err
    code, out, err = run_main(capsys, "importance", model, tmp_path / "w.csv", "--target", "y")
    assert code == 0, err


# --------------------------------------------------- case 3: one-hot names that collide

def colliding(n=60):
    rng = np.random.RandomState(0)
    return ["a", "a=b", "y"], [[rng.choice(["b", "c"]), round(rng.normal(), 3),
                                "yes" if i % 3 else "no"] for i in range(n)]


def test_a_one_hot_name_that_collides_with_a_column_is_refused_at_fit(capsys, tmp_path):
    """Case 3 (error): column 'a=b' and level 'b' of text column 'a' gave two
    encoded columns of one name; fit saved a model every predict refused."""
    data = write_csv(tmp_path / "clash.csv", *colliding())
    model = tmp_path / "m.npz"
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output", model,
                              "--max-one-hot", 5, "--n-estimators", 5, "--quiet")
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert err.startswith("aucforest: error: ")
    assert "'a=b'" in err and "column 'a'" in err and "--max-one-hot" in err
    assert not model.exists()
    # without --max-one-hot the levels are codes in one column 'a': no clash
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output", model,
                              "--n-estimators", 5, "--quiet")
    assert code == 0, err
    assert run_main(capsys, "predict", model, data)[0] == 0


def test_column_encoding_refuses_colliding_one_hot_names():
    """Case 3 in Python: the encoding's names must be distinct."""
    header, rows = colliding()
    frame = pd.DataFrame(rows, columns=header).drop(columns="y")
    with pytest.raises(ValueError, match="'a=b'.*column 'a'"):
        aucforest.ColumnEncoding(max_one_hot=5).fit(frame)
    with pytest.raises(ValueError, match="'a=b'"):
        aucforest.ColumnEncoding([{"name": "a", "kind": "one-hot", "levels": ["b", "c"]},
                                  {"name": "a=b", "kind": "numeric"}]).transform(frame)


# ------------------------------------------- case 4: an integer measurement as the target

def prices(n, n_distinct, seed=0):
    """A feature and an integer price target with ``n_distinct`` values."""
    rng = np.random.RandomState(seed)
    values = rng.choice(np.arange(1000, 1000 + 3 * n_distinct), n_distinct, replace=False)
    values = np.concatenate([values, rng.choice(values, n - n_distinct)])
    rng.shuffle(values)
    return ["size", "price"], [[round(v / 100 + rng.normal(), 2), int(v)] for v in values]


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_an_integer_price_target_is_refused_before_fitting(capsys, tmp_path, suffix):
    """Case 4 (front door): 7,500 distinct integers in 20,000 rows were taken
    as 7,500 classes and fitted until the process was killed."""
    header, rows = prices(20000, 7500)
    data = tmp_path / f"prices.{suffix}"
    if suffix == "csv":
        write_csv(data, header, rows)
    else:
        pd.DataFrame(rows, columns=header).to_parquet(data)  # price as int64
    model = tmp_path / "m.npz"
    code, out, err = run_main(capsys, "fit", data, "--target", "price", "--output", model,
                              "--n-estimators", 2, "--quiet")
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert "target column 'price'" in err and "looks continuous" in err
    assert "7500 distinct integer values in 20000 rows" in err
    assert "--classification" in err
    assert not model.exists()


def test_a_text_target_with_too_many_classes_is_refused(capsys, tmp_path):
    """Case 4: more than MAX_CLASSES labels, of any kind, need --classification."""
    rng = np.random.RandomState(0)
    rows = [[round(v, 2), f"product {i % 150}"] for i, v in enumerate(rng.normal(size=1200))]
    data = write_csv(tmp_path / "products.csv", ["x", "y"], rows)
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output",
                              tmp_path / "m.npz", "--n-estimators", 2, "--quiet")
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert "150 distinct labels" in err and "more than the 100" in err
    assert "--classification" in err


def test_classification_fits_many_integer_classes_with_few_rows_each(capsys, tmp_path):
    """Case 4: 25 integer classes of 4 rows each look like a measurement
    (fewer than 10 rows per value); --classification fits them, and the
    model's 25 classes are the labels."""
    header, rows = prices(100, 25)
    data = write_csv(tmp_path / "few.csv", header, rows)
    model = tmp_path / "m.npz"
    code, out, err = run_main(capsys, "fit", data, "--target", "price", "--output", model,
                              "--n-estimators", 3, "--quiet")
    assert code == 1 and "25 distinct integer values in 100 rows" in err
    assert "fewer than 10 rows per value" in err
    code, out, err = run_main(capsys, "fit", data, "--target", "price", "--output", model,
                              "--n-estimators", 3, "--quiet", "--classification")
    assert code == 0, err
    assert model_io.read_model(model).forest.classes_.tolist() == \
        sorted({row[1] for row in rows})


def test_integer_classes_with_many_rows_each_are_accepted(capsys, tmp_path):
    """Case 4: 30 integer classes of 40 rows each are class labels."""
    rng = np.random.RandomState(0)
    rows = [[round(v, 2), i % 30] for i, v in enumerate(rng.normal(size=1200))]
    data = write_csv(tmp_path / "digits.csv", ["x", "y"], rows)
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output",
                              tmp_path / "m.npz", "--n-estimators", 2, "--quiet")
    assert code == 0, err


# -------------------------------------- case 5: identifiers against integer measurements

def accounts(n=1000, seed=0):
    """A monthly rate (integers, nearly all distinct, in no order), a noise
    column and y driven by the rate."""
    rng = np.random.RandomState(seed)
    rate = rng.randint(1000, 60000, n)
    noise = np.round(rng.normal(size=n), 2)
    y = np.where(rate + rng.normal(0, 8000, n) > 30000, "churn", "stay")
    return rng, rate, noise, y


def saved_columns(model):
    return {c["name"]: c["kind"]
            for c in model_io.read_model(model).extra["encoding"]["columns"]}


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_an_integer_measurement_with_distinct_values_is_a_feature(capsys, tmp_path, suffix):
    """Case 5 (front door): a monthly rate with 98% distinct integer values
    was dropped as an identifier."""
    rng, rate, noise, y = accounts()
    assert np.unique(rate).size > 0.95 * rate.size
    frame = pd.DataFrame({"monthly_rate": rate, "noise": noise, "y": y})
    data = tmp_path / f"accounts.{suffix}"
    frame.to_csv(data, index=False) if suffix == "csv" else frame.to_parquet(data)
    model = tmp_path / "m.npz"
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output", model,
                              "--n-estimators", 25, "--quiet", "--json")
    assert code == 0 and "identifier" not in err, err
    assert json.loads(out)["left_out"] == []
    assert saved_columns(model) == {"monthly_rate": "numeric", "noise": "numeric"}
    assert json.loads(out)["oob_auc"] > 0.8  # the rate drives y


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_real_identifiers_are_still_left_out_with_the_evidence(capsys, tmp_path, suffix):
    """Case 5: consecutive row numbers (shuffled), increasing record numbers
    with gaps, and random numbers in a column named like an id are left out,
    each with a warning saying why."""
    rng, rate, noise, y = accounts()
    n = rate.size
    frame = pd.DataFrame({
        "row": rng.permutation(n) + 1,
        "record": np.cumsum(rng.randint(1, 50, n)) + 10 ** 6,
        "customerID": rng.randint(0, 10 ** 9, n),
        "monthly_rate": rate, "y": y})
    data = tmp_path / f"ids.{suffix}"
    frame.to_csv(data, index=False) if suffix == "csv" else frame.to_parquet(data)
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output",
                              tmp_path / "m.npz", "--n-estimators", 5, "--quiet", "--json")
    assert code == 0, err
    assert json.loads(out)["left_out"] == ["row", "record", "customerID"]
    assert saved_columns(tmp_path / "m.npz") == {"monthly_rate": "numeric"}
    warnings = [line for line in err.splitlines() if "identifier" in line]
    assert len(warnings) == 3
    assert "column 'row'" in warnings[0] and f"consecutive integers 1 to {n}" in warnings[0]
    assert "column 'record'" in warnings[1] and "in increasing order" in warnings[1]
    assert "column 'customerID'" in warnings[2] and "named like an identifier" in warnings[2]
    assert all("--keep" in line for line in warnings)


@pytest.mark.parametrize("name, dropped", [
    ("id", True), ("patient_id", True), ("Record ID", True), ("PatientId", True),
    ("account_key", True), ("paid", False), ("fluid", False), ("COVID", False),
    ("rate", False)])
def test_an_identifier_name_is_recognised_by_its_last_word(capsys, tmp_path, name, dropped):
    """Case 5: random integers, 99% distinct, are an identifier only under a
    name such as ``id``, ``patient_id``, ``PatientId`` (not ``paid``)."""
    rng, rate, noise, y = accounts()
    rows = [[v, r, label] for v, r, label in zip(rng.randint(0, 10 ** 7, rate.size), rate, y)]
    data = write_csv(tmp_path / "named.csv", [name, "monthly_rate", "y"], rows)
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output",
                              tmp_path / "m.npz", "--n-estimators", 3, "--quiet", "--json")
    assert code == 0, err
    assert json.loads(out)["left_out"] == ([name] if dropped else [])


def test_a_file_whose_every_feature_looks_like_an_identifier_is_refused(capsys, tmp_path):
    """Case 5: when every feature is left out, fit said "need at least one
    array to concatenate"; now it names the columns and --keep."""
    rng = np.random.RandomState(0)
    rows = [[i + 1, "yes" if rng.uniform() < 0.5 else "no"] for i in range(80)]
    data = write_csv(tmp_path / "only_ids.csv", ["row", "y"], rows)
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output",
                              tmp_path / "m.npz", "--n-estimators", 3, "--quiet")
    assert code == 1 and out == ""
    assert err.splitlines()[-1].startswith("aucforest: error: every feature column of ")
    assert "('row')" in err and "--keep" in err
    assert not (tmp_path / "m.npz").exists()


def test_codes_by_value_match_pandas_categorical_codes():
    """Case 1: the CLI's mapping of cell texts to a model's levels is pandas'
    mapping of the values (ints, floats, strs) to those categories."""
    from aucforest._encoding import codes_by_value
    from aucforest._table import text_array

    for levels, cells, values in [
            ([17, 11, 13], ["11", "13.0", "17", "?", "12"], [11, 13, 17, None, 12]),
            ([2.5, 0.5], ["0.5", "2.50", "", "1"], [0.5, 2.5, None, 1.0]),
            (["west", "3", "east"], ["3", "east", "north", "NA"], ["3", "east", "north", None])]:
        with pytest.warns(UserWarning, match="not seen at fit"):
            codes = codes_by_value(text_array(cells), levels, "c", "file.csv")
        expected = pd.Index(levels).get_indexer(pd.Index(values)).astype(float)
        expected[expected < 0] = np.nan
        np.testing.assert_array_equal(codes, expected)
