"""Command-line data safety and options (issue 12 items 1-8, issue 13 item 14).

In-process through `aucforest.cli.main` on small CSV files; every result is
checked against an independent computation (the Python API, scikit-learn, or
the formula by hand).
"""
import csv
import io
import json
import math
import os
import warnings

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix

import aucforest
from aucforest import io as model_io
from aucforest.cli import build_parser, main
from cli_files import run_main, write_csv

N_TREES = 15


def read_csv(text):
    rows = list(csv.reader(text.splitlines()))
    return rows[0], rows[1:]


def people(n=120, seed=0, question_marks=(3, 17)):
    """An id column, a numeric income with '?' cells, a colour, a weight, a label."""
    rng = np.random.RandomState(seed)
    income = np.round(rng.normal(50, 10, n), 1)
    outcome = np.where(income + rng.normal(0, 5, n) > 55, "yes", "no")
    colour = rng.choice(["red", "blue"], n)
    rows = [[i + 1, "?" if i in question_marks else income[i], colour[i], 1 + i % 3, outcome[i]]
            for i in range(n)]
    return ["rownames", "income", "colour", "wt", "outcome"], rows


@pytest.fixture
def people_csv(tmp_path):
    return write_csv(tmp_path / "people.csv", *people())


def fit(capsys, data, output, *options):
    code, out, err = run_main(capsys, "fit", data, "--target", "outcome", "--output", output,
                              "--n-estimators", N_TREES, "--seed", 0, "--quiet", *options)
    assert code == 0, err
    return out, err


def saved_columns(path):
    return {c["name"]: c["kind"] for c in model_io.read_model(path).extra["encoding"]["columns"]}


# ------------------------------------------------------------ item 1: missing markers

def test_question_mark_is_missing_not_text(capsys, tmp_path, people_csv):
    # --keep: rownames (1 to 120) would be left out as an identifier (issue 29)
    out, err = fit(capsys, people_csv, tmp_path / "m.npz", "--keep", "rownames")
    assert saved_columns(tmp_path / "m.npz")["income"] == "numeric"
    assert "3 numeric, 1 categorical" in out and err == ""  # rownames, income and wt


@pytest.mark.parametrize("marker", ["", "NA", "NaN", "nan", "?", "null", "N/A"])
def test_every_default_marker_reads_as_missing(marker):
    encoding = aucforest.ColumnEncoding([{"name": "x", "kind": "numeric"}])
    X = encoding.transform({"x": np.array(["1.5", marker, "3"])})
    np.testing.assert_array_equal(np.isnan(X[:, 0]), [False, True, False])


def test_na_values_replaces_the_markers(capsys, tmp_path):
    header, rows = people(question_marks=())
    for row in rows[::10]:
        row[1] = "-"
    data = write_csv(tmp_path / "dash.csv", header, rows)
    # "=": a value that starts with "-" would read as an option
    fit(capsys, data, tmp_path / "m.npz", "--id", "rownames", "--na-values=-,?")
    assert saved_columns(tmp_path / "m.npz")["income"] == "numeric"
    encoding = aucforest.ColumnEncoding.from_model_file(tmp_path / "m.npz")
    assert encoding.na_values == ("-", "?")  # predict and evaluate use the same markers


def test_warning_names_column_and_values_of_a_mostly_numeric_text_column(capsys, tmp_path):
    header, rows = people(question_marks=())
    rows[5][1] = rows[40][1] = "unknown"
    rows[7][1] = "n.a."
    data = write_csv(tmp_path / "odd.csv", header, rows)
    out, err = fit(capsys, data, tmp_path / "m.npz", "--id", "rownames")
    assert ("aucforest: warning: column 'income' of " in err
            and "although 117 of its 120 values are numbers; the others are 'unknown' "
                "(2 times), 'n.a.'" in err and "--na-values" in err)
    assert saved_columns(tmp_path / "m.npz")["income"] == "categorical"


def test_text_column_of_words_gives_no_warning(capsys, tmp_path, people_csv):
    out, err = fit(capsys, people_csv, tmp_path / "m.npz", "--id", "rownames")
    assert "warning" not in err


# ------------------------------------------------------------ item 2: outputs that are inputs

def test_fit_refuses_to_overwrite_its_data(capsys, tmp_path, people_csv):
    before = people_csv.read_bytes()
    os.symlink(people_csv, tmp_path / "link.csv")
    os.link(people_csv, tmp_path / "hard.csv")
    for output in (people_csv, tmp_path / "link.csv", tmp_path / "hard.csv",
                   tmp_path / "." / "people.csv"):
        code, out, err = run_main(capsys, "fit", people_csv, "--target", "outcome",
                                  "--output", output, "--n-estimators", 2)
        assert code == 1 and out == "" and "is the input file" in err, err
    assert people_csv.read_bytes() == before


def test_predict_and_evaluate_refuse_to_overwrite_model_or_data(capsys, tmp_path, people_csv):
    fit(capsys, people_csv, tmp_path / "m.npz")
    model_bytes = (tmp_path / "m.npz").read_bytes()
    for args in (["predict", tmp_path / "m.npz", people_csv, "--output", tmp_path / "m.npz"],
                 ["predict", tmp_path / "m.npz", people_csv, "--output", people_csv],
                 ["evaluate", tmp_path / "m.npz", people_csv, "--target", "outcome",
                  "--plot", people_csv]):
        code, out, err = run_main(capsys, *args)
        assert code == 1 and "is the input file" in err, err
    assert (tmp_path / "m.npz").read_bytes() == model_bytes
    assert people_csv.read_bytes().startswith(b"rownames,income")


# ------------------------------------------------------------ item 3: columns by name

def test_python_model_with_feature_names_predicts_by_name_without_warning(capsys, tmp_path):
    pandas = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    frame = pandas.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"])
    y = (frame["a"] + frame["b"] > 0).astype(int)
    forest = aucforest.AUCForestClassifier(n_estimators=10, random_state=0).fit(frame, y)
    model_io.save(forest, tmp_path / "py.npz")
    frame[["c", "a", "b"]].to_csv(tmp_path / "shuffled.csv", index=False)  # other order
    code, out, err = run_main(capsys, "predict", tmp_path / "py.npz", tmp_path / "shuffled.csv",
                              "--proba")
    assert code == 0 and err == ""  # no "X does not have valid feature names"
    _, rows = read_csv(out)
    np.testing.assert_allclose(np.array(rows, dtype=float), forest.predict_proba(frame))


# ------------------------------------------------------------ item 4: options

def test_forest_options_reach_the_forest(capsys, tmp_path, people_csv):
    fit(capsys, people_csv, tmp_path / "m.npz", "--min-samples-leaf", 5, "--max-features", "all",
        "--max-depth", 3, "--class-weight", "yes=4,no=1", "--balanced-bootstrap",
        "--decision", 0.3, "--criterion", "gini")
    forest = model_io.load(tmp_path / "m.npz")
    params = forest.get_params()
    assert (params["min_samples_leaf"], params["max_features"], params["max_depth"],
            params["class_weight"], params["balanced_bootstrap"], params["decision"],
            params["criterion"]) == (5, None, 3, {"yes": 4.0, "no": 1.0}, True, 0.3, "gini")
    assert max(tree.tree_.max_depth for tree in forest.estimators_) <= 3


def test_sampling_and_node_size_options_reach_the_forest(capsys, tmp_path, people_csv):
    fit(capsys, people_csv, tmp_path / "m.npz", "--without-replacement",
        "--predict-min-samples", "oob")
    forest = model_io.load(tmp_path / "m.npz")
    assert forest.get_params()["replacement"] is False
    assert forest.get_params()["predict_min_samples"] == "oob"
    assert forest.predict_min_samples_ in (1, 2, 5, 10, 20, 50)
    fit(capsys, people_csv, tmp_path / "m7.npz", "--predict-min-samples", "7", "--nsplit", "3",
        "--with-replacement")
    assert model_io.load(tmp_path / "m7.npz").replacement is True
    assert model_io.load(tmp_path / "m7.npz").predict_min_samples_ == 7
    assert model_io.load(tmp_path / "m7.npz").nsplit == 3
    fit(capsys, people_csv, tmp_path / "all.npz", "--nsplit", "all")
    assert model_io.load(tmp_path / "all.npz").nsplit is None


@pytest.mark.parametrize("option, value", [("--max-features", "0.5"), ("--max-features", "2"),
                                           ("--class-weight", "balanced")])
def test_option_values_are_parsed(option, value):
    args = build_parser().parse_args(["fit", "d.csv", "--target", "t", "--output", "m.npz",
                                      option, value])
    expected = {"0.5": 0.5, "2": 2, "balanced": "balanced"}[value]
    assert getattr(args, option[2:].replace("-", "_")) == expected


@pytest.mark.parametrize("args, fragment", [
    (["--decision", "1.5"], "argument --decision: must be rfq, argmax or a threshold"),
    (["--max-features", "0"], "argument --max-features"),
    (["--class-weight", "yes=-1"], "argument --class-weight"),
    (["--min-samples-leaf", "0"], "argument --min-samples-leaf"),
    (["--predict-min-samples", "0"], "argument --predict-min-samples"),
    (["--nsplit", "0"], "argument --nsplit"),
    (["--nsplit", "some"], "argument --nsplit"),
    (["--seed", "-1"], "argument --seed: must be an integer from 0 to 4294967295, got -1"),
    (["--seed", "x"], "argument --seed: must be an integer, got 'x'"),
    (["--n-jobs", "0"], "argument --n-jobs"),
])
def test_bad_option_values_name_the_option(capsys, args, fragment):
    with pytest.raises(SystemExit) as stop:
        main(["fit", "d.csv", "--target", "t", "--output", "m.npz", *args])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and fragment in err and "random_state" not in err, err


def test_class_weight_label_must_be_a_class(capsys, tmp_path, people_csv):
    code, out, err = run_main(capsys, "fit", people_csv, "--target", "outcome", "--output",
                              tmp_path / "m.npz", "--class-weight", "maybe=2", "--n-estimators", 2)
    assert code == 1 and "--class-weight names class 'maybe'" in err


def test_threshold_decision_predicts_by_the_threshold(capsys, tmp_path, people_csv):
    fit(capsys, people_csv, tmp_path / "m.npz", "--id", "rownames", "--decision", 0.7)
    _, out, _ = run_main(capsys, "predict", tmp_path / "m.npz", people_csv, "--proba")
    proba = np.array(read_csv(out)[1], dtype=float)[:, 1:]
    _, out, _ = run_main(capsys, "predict", tmp_path / "m.npz", people_csv)
    labels = [row[1] for row in read_csv(out)[1]]
    assert labels == np.where(proba[:, 1] >= 0.7, "yes", "no").tolist()


def test_weight_column_equals_python_sample_weight(capsys, tmp_path, people_csv):
    fit(capsys, people_csv, tmp_path / "m.npz", "--id", "rownames", "--weight", "wt")
    cli_forest = model_io.load(tmp_path / "m.npz")
    header, rows = people()
    X = aucforest.ColumnEncoding.from_model_file(tmp_path / "m.npz").transform(
        {name: np.array([str(r[j]) for r in rows]) for j, name in enumerate(header)})
    weights = np.array([r[3] for r in rows], dtype=float)
    y = np.array([r[4] for r in rows])
    reference = aucforest.AUCForestClassifier(
        n_estimators=N_TREES, random_state=0, categorical_features=[1]).fit(
        X, y, sample_weight=weights)
    assert cli_forest.n_features_in_ == 2  # income and colour (categorical); not wt, rownames
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # X is an array, the model has names
        np.testing.assert_array_equal(cli_forest.predict_proba(X), reference.predict_proba(X))
    assert not np.array_equal(  # the weights changed the fit
        aucforest.AUCForestClassifier(n_estimators=N_TREES, random_state=0,
                                      categorical_features=[1]).fit(X, y)
        .predict_proba(X), reference.predict_proba(X))


def test_bad_weight_column(capsys, tmp_path):
    header, rows = people()
    rows[4][3] = -1
    data = write_csv(tmp_path / "neg.csv", header, rows)
    code, out, err = run_main(capsys, "fit", data, "--target", "outcome", "--output",
                              tmp_path / "m.npz", "--weight", "wt")
    assert code == 1 and "--weight column 'wt'" in err and "negative" in err


def test_id_column_is_passed_through_and_never_a_feature(capsys, tmp_path, people_csv):
    fit(capsys, people_csv, tmp_path / "m.npz", "--id", "rownames", "--drop", "wt")
    forest = model_io.load(tmp_path / "m.npz")
    assert list(forest.feature_names_in_) == ["income", "colour"]
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", people_csv)
    header, rows = read_csv(out)
    assert header == ["rownames", "outcome"]
    assert [row[0] for row in rows] == [str(i + 1) for i in range(120)]
    # without the id column in the data, predict still works (no id column written)
    header, rows = people()
    write_csv(tmp_path / "noid.csv", header[1:], [r[1:] for r in rows])
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", tmp_path / "noid.csv")
    assert code == 0 and read_csv(out)[0] == ["outcome"]


def test_id_column_with_a_python_model_without_names(capsys, tmp_path):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    forest = aucforest.AUCForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    model_io.save(forest, tmp_path / "py.npz")
    write_csv(tmp_path / "ids.csv", ["key", "a", "b", "c"],
              [[f"k{i}", *x] for i, x in enumerate(X)])
    code, out, err = run_main(capsys, "predict", tmp_path / "py.npz", tmp_path / "ids.csv",
                              "--id", "key")
    assert code == 0, err
    header, rows = read_csv(out)
    assert header == ["key", "prediction"]
    assert rows == [[f"k{i}", str(label)] for i, label in enumerate(forest.predict(X))]


def test_threshold_decision_needs_two_classes(capsys, tmp_path):
    header, rows = people()
    for row in rows[::3]:
        row[4] = "maybe"
    data = write_csv(tmp_path / "three.csv", header, rows)
    code, out, err = run_main(capsys, "fit", data, "--target", "outcome", "--output",
                              tmp_path / "m.npz", "--decision", 0.4)
    assert code == 1 and "--decision 0.4 is a threshold" in err and "the target has 3" in err


def test_column_options_must_name_distinct_existing_columns(capsys, tmp_path, people_csv):
    for options, fragment in ((["--id", "outcome"], "given to both --target and --id"),
                              (["--drop", "nothing"], "column 'nothing' not found")):
        code, out, err = run_main(capsys, "fit", people_csv, "--target", "outcome", "--output",
                                  tmp_path / "m.npz", *options)
        assert code == 1 and fragment in err, err


def test_sep_and_the_delimiter_hint(capsys, tmp_path):
    header, rows = people()
    data = write_csv(tmp_path / "semi.csv", header, rows, delimiter=";")
    code, out, err = run_main(capsys, "fit", data, "--target", "outcome", "--output",
                              tmp_path / "m.npz")
    assert code == 1 and "the header reads as one column" in err and "--sep ';'" in err
    fit(capsys, data, tmp_path / "m.npz", "--sep", ";", "--id", "rownames")
    tabbed = write_csv(tmp_path / "tabbed.txt", header, rows, delimiter="\t")
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", tabbed)
    assert code == 1 and "--sep '\\t'" in err
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", tabbed, "--sep", "\\t")
    assert code == 0 and len(read_csv(out)[1]) == 120


def test_fit_and_evaluate_json(capsys, tmp_path, people_csv):
    code, out, err = run_main(capsys, "fit", people_csv, "--target", "outcome", "--output",
                              tmp_path / "m.npz", "--n-estimators", N_TREES, "--quiet", "--json",
                              "--id", "rownames")
    summary = json.loads(out)
    forest = model_io.load(tmp_path / "m.npz")
    y = np.array([r[4] for r in people()[1]])
    assert summary["oob_auc"] == forest.oob_score_
    assert summary["classes"] == {"no": int((y == "no").sum()), "yes": int((y == "yes").sum())}
    assert summary["feature_names"] == list(forest.feature_names_in_)
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", people_csv, "--target",
                              "outcome", "--json")
    result = json.loads(out)
    assert result["n_cases"] == 120 and result["auc_intervals"]["positive_class"] == "yes"
    assert result["report"]["classes"] == ["no", "yes"]
    assert 0 <= result["auc_intervals"]["low"] <= result["auc_intervals"]["auc"] <= 1
    assert (y == "yes").sum() == result["report"]["per_class"]["support"][1]


def test_compare_json_and_per_fold_csv_agree(capsys, tmp_path, people_csv):
    code, out, err = run_main(capsys, "compare", people_csv, "--target", "outcome", "--id",
                              "rownames", "--folds", 3, "--repeats", 2, "--n-estimators", 4,
                              "--json", "--quiet", "--folds-csv", tmp_path / "folds.csv")
    assert code == 0, err
    result = json.loads(out)
    with open(tmp_path / "folds.csv") as stream:
        folds = list(csv.DictReader(stream))
    assert len(folds) == 3 * 2 * 4
    assert {(r["repeat"], r["fold"]) for r in folds} == {(str(r), str(f)) for r in (1, 2)
                                                         for f in (1, 2, 3)}
    for entry in result["results"]:
        mine = [r for r in folds if (r["criterion"], r["decision"])
                == (entry["criterion"], entry["decision"])]
        for score in ("auc", "gmean", "balanced_accuracy"):
            assert [float(r[score]) for r in mine] == entry["scores"][score]["folds"]
            assert math.isclose(np.mean([float(r[score]) for r in mine]),
                                entry["scores"][score]["mean"])
    assert {t["score"] for t in result["paired_tests"]} == {"auc", "gmean", "balanced_accuracy"}


# ------------------------------------------------------------ item 5: compare

def test_corrected_resampled_ttest_by_hand():
    from aucforest.cli._comparison import corrected_resampled_ttest

    d = [0.02, -0.01, 0.03, 0.00, 0.04, 0.01]  # k = 3 folds x r = 2 repeats
    n_train, n_test = 100, 50
    mean = sum(d) / 6                                           # 0.015
    variance = sum((x - mean) ** 2 for x in d) / 5              # 0.00035
    t = mean / math.sqrt((1 / 6 + 50 / 100) * variance)         # 0.015 / sqrt(0.0002333...)
    assert math.isclose(t, 0.98198050606, rel_tol=1e-9)
    result = corrected_resampled_ttest(d, n_train, n_test)
    assert math.isclose(result.statistic, t, rel_tol=1e-12) and result.df == 5
    # two-sided p from the t distribution with 5 df: 2 * P(T > 0.98198) = 0.37121 (tables)
    assert math.isclose(result.pvalue, 0.37121, abs_tol=2e-5)
    uncorrected = mean / math.sqrt(variance / 6)
    assert abs(result.statistic) < abs(uncorrected)  # the correction widens the test


def test_corrected_resampled_ttest_degenerate_cases():
    from aucforest.cli._comparison import corrected_resampled_ttest

    assert math.isnan(corrected_resampled_ttest([0.0, 0.0, 0.0], 10, 5).pvalue)
    assert corrected_resampled_ttest([0.1, 0.1, 0.1], 10, 5).pvalue == 0.0
    with pytest.raises(ValueError, match="at least two"):
        corrected_resampled_ttest([0.1], 10, 5)


def compare_lines(out):
    blocks = out.split("\n\n")
    return blocks[1].splitlines(), blocks[2].splitlines()


def test_compare_table_aligned_with_long_names_and_paired_tests(capsys, tmp_path):
    long_name = tmp_path / "a_data_set_with_a_rather_long_file_name.csv"
    write_csv(long_name, *people())
    code, out, err = run_main(capsys, "compare", long_name, "--target", "outcome", "--folds", 3,
                              "--repeats", 1, "--n-estimators", 3, "--quiet")
    assert code == 0, err
    table, tests = compare_lines(out)
    header, rule, *rows = table
    assert len(rows) == 4
    for title in ("criterion", "decision", "AUC", "G-mean", "fit time (s)"):
        column = header.index(title)
        assert all(row[column - 2:column] == "  " and row[column] != " " for row in rows), title
    assert "corrected resampled t-test (Nadeau & Bengio 2003, 2 degrees of freedom)" in tests[1]
    assert any("auc - gini (rfq)" in line and "(p 0." in line for line in tests)


def test_minute_line_only_with_the_defaults(capsys):
    code, out, err = run_main(capsys, "compare", "--folds", 2, "--repeats", 1, "--n-estimators", 2,
                              "--quiet")
    assert code == 0 and "about a minute" not in out
    from aucforest.cli._compare import _uses_defaults

    assert _uses_defaults(build_parser().parse_args(["compare"]))
    assert not _uses_defaults(build_parser().parse_args(["compare", "--min-samples-leaf", "3"]))


# ------------------------------------------------------------ item 6: progress bar

class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_without_a_terminal_writes_plain_lines():
    from aucforest._progress import progress

    stream = io.StringIO()
    with progress(total=40, description="trees", stream=stream) as bar:
        for _ in range(40):
            bar.update()
    text = stream.getvalue()
    assert "\r" not in text
    assert [line.split("] ")[1].split()[0] for line in text.splitlines()] == [
        "10/40", "20/40", "30/40", "40/40"]


def test_progress_on_a_terminal_redraws_in_place():
    from aucforest._progress import progress

    stream = FakeTerminal()
    with progress(total=3, description="trees", stream=stream) as bar:
        for _ in range(3):
            bar.update()
    text = stream.getvalue()
    assert text.startswith("\rtrees [") and text.endswith("3/3 " + text.rsplit(" ", 1)[1])
    assert text.count("\n") == 1


# ------------------------------------------------------------ item 7: public encoding

def test_loaded_cli_model_predicts_on_a_dataframe(capsys, tmp_path, people_csv):
    pandas = pytest.importorskip("pandas")
    fit(capsys, people_csv, tmp_path / "m.npz", "--id", "rownames", "--weight", "wt")
    forest = aucforest.load(tmp_path / "m.npz")
    encoding = aucforest.ColumnEncoding.from_model_file(tmp_path / "m.npz")
    saved = model_io.read_model(tmp_path / "m.npz")
    assert aucforest.ColumnEncoding.from_dict(saved.extra["encoding"]).feature_names == \
        encoding.feature_names == list(forest.feature_names_in_)
    frame = pandas.read_csv(people_csv, dtype=str, keep_default_na=False)
    X = encoding.transform(frame)
    assert list(X.columns) == list(forest.feature_names_in_) and X["income"].isna().sum() == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warning
        labels = forest.predict(X)
    _, out, _ = run_main(capsys, "predict", tmp_path / "m.npz", people_csv)
    assert [row[1] for row in read_csv(out)[1]] == labels.tolist()
    # numbers parsed by pandas encode the same as the text of the file
    pandas.testing.assert_frame_equal(encoding.transform(pandas.read_csv(people_csv)), X)
    assert X["colour"].dtype == "category"  # the levels mapped by value at predict


def test_encoding_transform_names_a_missing_column():
    encoding = aucforest.ColumnEncoding([{"name": "age", "kind": "numeric"}])
    with pytest.raises(ValueError, match="column 'age', which the model uses, is not in"):
        encoding.transform({"height": np.array(["1"])})


# ------------------------------------------------------------ item 8: ROC plots

def test_roc_legend_names_the_positive_class():
    pytest.importorskip("matplotlib")
    from aucforest.metrics import plot_roc

    ax = plot_roc(np.array(["no", "yes", "no", "yes"]), [0.1, 0.8, 0.3, 0.6])
    assert ax.get_legend().get_title().get_text() == "positive class: yes"


def test_evaluate_plot_marks_the_operating_point(capsys, tmp_path, people_csv, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    figures = []
    monkeypatch.setattr(Figure, "savefig",
                        lambda self, path, **options: figures.append(self))
    fit(capsys, people_csv, tmp_path / "m.npz", "--id", "rownames", "--decision", 0.6)
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", people_csv, "--target",
                              "outcome", "--plot", tmp_path / "roc.png")
    assert code == 0, err
    _, predict_out, _ = run_main(capsys, "predict", tmp_path / "m.npz", people_csv)
    y_pred = [row[1] for row in read_csv(predict_out)[1]]
    y = [row[4] for row in people()[1]]
    tn, fp, fn, tp = confusion_matrix(y, y_pred, labels=["no", "yes"]).ravel()
    (ax,) = figures[0].axes
    (point,) = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert point.get_xdata()[0] == pytest.approx(fp / (fp + tn))
    assert point.get_ydata()[0] == pytest.approx(tp / (tp + fn))
    assert point.get_label().startswith("decision threshold 0.6: TPR")
    assert ax.get_legend().get_title().get_text() == "positive class: yes"


# ------------------------------------------------------------ issue 13 item 14

def test_output_folder_fails_before_the_fit(capsys, tmp_path, people_csv, monkeypatch):
    def no_fit(*args, **kwargs):
        raise AssertionError("the forest was fitted")

    monkeypatch.setattr(aucforest.AUCForestClassifier, "fit", no_fit)
    monkeypatch.chdir(tmp_path)
    for output in (".", tmp_path):
        code, out, err = run_main(capsys, "fit", people_csv, "--target", "outcome", "--output",
                                  output)
        assert code == 1 and "is a folder; give a file name" in err, err


# ------------------------------------------------------------ issue 29: a continuous target

def continuous(n=80, seed=0):
    """x and a float target y that is a noisy function of x."""
    rng = np.random.RandomState(seed)
    x = rng.normal(size=n)
    return ["x", "y"], [[round(v, 4), round(2 * v + rng.normal(), 3)] for v in x]


@pytest.mark.parametrize("command", ["fit", "compare"])
def test_a_continuous_target_is_refused_without_output(capsys, tmp_path, command):
    data = write_csv(tmp_path / "reg.csv", *continuous())
    output = tmp_path / ("m.npz" if command == "fit" else "folds.csv")
    option = "--output" if command == "fit" else "--folds-csv"
    code, out, err = run_main(capsys, command, data, "--target", "y", option, output,
                              "--n-estimators", 5, "--quiet")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.startswith("aucforest: error: target column 'y' of ")
    assert "looks continuous (numbers that are not integers, such as '" in err
    assert "Give --classification if they are class labels" in err
    assert not output.exists()


def test_many_distinct_integer_labels_are_refused(capsys, tmp_path):
    header, rows = continuous()
    rows = [[x, i % 60] for i, (x, _) in enumerate(rows)]  # 60 levels in 80 rows
    data = write_csv(tmp_path / "many.csv", header, rows)
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output", tmp_path / "m.npz",
                              "--n-estimators", 5, "--quiet")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "looks continuous (60 distinct values in 80 rows)" in err
    assert not (tmp_path / "m.npz").exists()


def test_classification_accepts_a_target_that_looks_continuous(capsys, tmp_path):
    header, rows = continuous(n=60)
    rows = [[x, i % 40 + 0.5] for i, (x, _) in enumerate(rows)]
    data = write_csv(tmp_path / "labels.csv", header, rows)
    model = tmp_path / "m.npz"
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output", model,
                              "--n-estimators", 5, "--quiet", "--classification")
    assert code == 0, err
    assert len(model_io.read_model(model).forest.classes_) == 40
    # labels the model has are its classes: evaluate needs no --classification
    code, out, err = run_main(capsys, "evaluate", model, data, "--target", "y")
    assert code == 0, err


def test_evaluate_refuses_a_continuous_target_the_model_never_saw(capsys, tmp_path, people_csv):
    fit(capsys, people_csv, tmp_path / "m.npz")
    data = write_csv(tmp_path / "reg.csv", *continuous())
    for command in ("evaluate", "importance"):
        code, out, err = run_main(capsys, command, tmp_path / "m.npz", data, "--target", "y")
        assert code == 1 and out == "" and err.count("\n") == 1
        assert "target column 'y'" in err and "looks continuous" in err


def test_integer_coded_classes_are_accepted(capsys, tmp_path):
    rng = np.random.RandomState(0)
    rows = [[round(v, 3), int(v > 0) + int(v > 1)] for v in rng.normal(size=40)]
    data = write_csv(tmp_path / "coded.csv", ["x", "y"], rows)
    code, out, err = run_main(capsys, "fit", data, "--target", "y", "--output", tmp_path / "m.npz",
                              "--n-estimators", 5, "--quiet")
    assert code == 0, err


# ------------------------------------------------------------ issue 29: a fixed default seed

def test_fit_without_seed_uses_seed_0_and_is_reproducible(capsys, tmp_path, people_csv):
    predictions = []
    for name in ("a", "b"):
        model = tmp_path / f"{name}.npz"
        code, out, err = run_main(capsys, "fit", people_csv,
                                  "--target", "outcome", "--output", model,
                                  "--n-estimators", 5, "--quiet")
        assert code == 0, err
        assert "seed 0 (--seed)" in out
        assert model_io.read_model(model).forest.random_state == 0
        output = tmp_path / f"{name}.csv"
        assert run_main(capsys, "predict", model, people_csv, "--proba", "--output", output)[0] == 0
        predictions.append(output.read_bytes())
    assert predictions[0] == predictions[1]
    code, out, err = run_main(capsys, "fit", people_csv, "--target", "outcome", "--output",
                              tmp_path / "c.npz", "--n-estimators", 5, "--quiet", "--json")
    assert json.loads(out)["seed"] == 0


@pytest.mark.parametrize("command", ["fit", "compare", "importance"])
def test_seed_help_documents_the_fixed_default(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(default: 0, fixed so that the same command" in help_text


# ------------------------------------------------------------ issue 29: identifier columns

def test_an_identifier_column_is_left_out_with_a_warning(capsys, tmp_path, people_csv):
    out, err = fit(capsys, people_csv, tmp_path / "m.npz")
    assert err.count("\n") == 1 and err.startswith("aucforest: warning: column 'rownames' of ")
    assert ("looks like an identifier (120 distinct values in 120 rows: consecutive integers "
            "1 to 120) and is left out of the features; give --keep rownames to use it as a "
            "feature") in err
    assert "rownames" not in saved_columns(tmp_path / "m.npz")
    assert "2 numeric, 1 categorical" in out


def test_a_text_identifier_is_left_out_and_keep_keeps_it(capsys, tmp_path):
    header, rows = people()
    rows = [[f"P{row[0]:04d}", *row[1:]] for row in rows]
    data = write_csv(tmp_path / "text_ids.csv", header, rows)
    out, err = fit(capsys, data, tmp_path / "m.npz", "--json")
    assert "column 'rownames'" in err and "--keep rownames" in err
    assert json.loads(out)["left_out"] == ["rownames"]
    out, err = fit(capsys, data, tmp_path / "k.npz", "--keep", "rownames")
    # 120 levels: a categorical feature (up to 255 levels)
    assert err == "" and saved_columns(tmp_path / "k.npz")["rownames"] == "categorical"


def test_an_id_column_gives_no_warning_and_keep_checks_its_column(capsys, tmp_path, people_csv):
    out, err = fit(capsys, people_csv, tmp_path / "m.npz", "--id", "rownames")
    assert err == ""
    code, out, err = run_main(capsys, "fit", people_csv, "--target", "outcome", "--output",
                              tmp_path / "k.npz", "--keep", "absent", "--quiet")
    assert code == 1 and err.startswith("aucforest: error: column 'absent' not found")
    assert not (tmp_path / "k.npz").exists()


def test_few_rows_or_repeated_values_are_not_identifiers(capsys, tmp_path):
    header, rows = people(n=50)
    data = write_csv(tmp_path / "small.csv", header, rows)
    out, err = fit(capsys, data, tmp_path / "m.npz")  # 50 rows: too few to tell
    assert err == "" and "rownames" in saved_columns(tmp_path / "m.npz")


def test_compare_leaves_an_identifier_out_too(capsys, tmp_path, people_csv):
    code, out, err = run_main(capsys, "compare", people_csv, "--target", "outcome", "--folds", 2,
                              "--repeats", 1, "--n-estimators", 3, "--quiet")
    assert code == 0, err
    assert "column 'rownames'" in err and "--keep rownames" in err
    assert "2 numeric, 1 categorical" in out


# ------------------------------------------------------------ issue 29: compare --weight

def test_compare_weight_reaches_the_fits_and_the_auc(capsys, tmp_path, people_csv):
    from sklearn.model_selection import RepeatedStratifiedKFold

    folds_csv = tmp_path / "folds.csv"
    code, out, err = run_main(capsys, "compare", people_csv,
                              "--target", "outcome", "--weight", "wt",
                              "--id", "rownames", "--folds", 2, "--repeats", 1, "--n-estimators", 5,
                              "--quiet", "--folds-csv", folds_csv)
    assert code == 0, err
    assert "1 numeric, 1 categorical" in out  # wt is not a feature
    assert "case weights from column 'wt' (fits and AUC" in out
    header, rows = read_csv(folds_csv.read_text())
    first = dict(zip(header, rows[0]))
    assert (first["criterion"], first["decision"], first["fold"]) == ("auc", "rfq", "1")
    # the first fold by hand: weighted fit, weighted Mann-Whitney AUC
    _, data = people()
    income = np.array([np.nan if r[1] == "?" else float(r[1]) for r in data])
    X = np.column_stack([income, [r[2] == "red" for r in data]])  # colour codes: blue 0, red 1
    y = np.array([r[4] for r in data])
    w = np.array([float(r[3]) for r in data])
    train, test = next(RepeatedStratifiedKFold(n_splits=2, n_repeats=1, random_state=0).split(X, y))
    forest = aucforest.AUCForestClassifier(n_estimators=5, random_state=0,
                                           categorical_features=[1]).fit(
        X[train], y[train], sample_weight=w[train])
    proba = forest.predict_proba(X[test])[:, 1]
    expected = aucforest.metrics.auc(y[test] == "yes", proba, w[test], pos_label=True)
    assert float(first["auc"]) == pytest.approx(expected, rel=1e-9)
    unweighted = aucforest.metrics.auc(y[test] == "yes", proba, pos_label=True)
    assert expected != pytest.approx(unweighted, rel=1e-9)  # the weights do matter here


def test_compare_weight_needs_data_and_a_numeric_column(capsys, tmp_path, people_csv):
    code, out, err = run_main(capsys, "compare", "--weight", "wt")
    assert code == 1 and err == "aucforest: error: --weight names a column of DATA; give DATA " \
                                "too\n"
    folds_csv = tmp_path / "folds.csv"
    code, out, err = run_main(capsys, "compare", people_csv, "--target", "outcome", "--weight",
                              "colour", "--id", "rownames", "--folds-csv", folds_csv, "--quiet")
    assert code == 1 and out == "" and "--weight column 'colour'" in err
    assert err.count("\n") == 1 and not folds_csv.exists()
