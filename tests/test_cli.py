"""The command line end to end: `python -m aucforest ...` in a subprocess on small files.

Further error paths run in-process through `aucforest.cli.main` (same code, no
interpreter start-up).
"""
import csv
import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

import aucforest
from aucforest import io as model_io
from aucforest.cli import main
from cli_files import run_main, write_csv

PACKAGE_PARENT = os.path.dirname(os.path.dirname(aucforest.__file__))


def run(*args, cwd):
    """Run `python -m aucforest ARGS` with the aucforest under test importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "aucforest", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def read_csv(text_or_path):
    text = open(text_or_path).read() if os.path.exists(str(text_or_path)) else text_or_path
    rows = list(csv.reader(text.splitlines()))
    return rows[0], rows[1:]


def make_data(n_samples, n_classes, weights, seed):
    """Numeric features, a 3-level text column and text labels."""
    X, y = make_classification(n_samples, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=n_classes, weights=weights, random_state=seed)
    rng = np.random.RandomState(seed)
    shade = rng.choice(["dark", "light", "mid"], size=n_samples)
    labels = np.array(["alpha", "beta", "gamma"])[y]
    rows = [[*np.round(x, 4), s, label] for x, s, label in zip(X, shade, labels)]
    return ["x1", "x2", "x3", "x4", "shade", "label"], rows


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def binary_csv(folder):
    return write_csv(folder / "binary.csv", *make_data(160, 2, [0.85], seed=0))


@pytest.fixture(scope="module")
def multiclass_csv(folder):
    return write_csv(folder / "multiclass.csv", *make_data(150, 3, [0.5, 0.4], seed=1))


@pytest.fixture(scope="module")
def binary_model(folder, binary_csv):
    result = run("fit", binary_csv, "--target", "label", "--output", "binary.npz",
                 "--n-estimators", 40, "--seed", 0, "--quiet", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder / "binary.npz", result


def assert_one_error_line(result, fragment, returncode=1):
    assert result.returncode == returncode
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aucforest: error: "), result.stderr
    assert fragment in lines[0]
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------ subprocess

def test_fit_prints_oob_summary_and_saves(binary_model):
    path, result = binary_model
    assert result.stderr == ""  # --quiet: no progress bar
    assert "fitted 40 trees (criterion auc, decision rfq) on 160 cases" in result.stdout
    assert "1 categorical (3 levels)" in result.stdout
    assert "out-of-bag AUC 0." in result.stdout and "G-mean" in result.stdout
    saved = model_io.read_model(path)
    assert saved.extra["target"] == "label"
    assert saved.forest.n_features_in_ == 4 + 1 and saved.forest.oob_score_ > 0.5
    assert saved.forest.is_categorical_.tolist() == [False] * 4 + [True]


def test_predict_matches_the_python_model(folder, binary_csv, binary_model):
    path, _ = binary_model
    result = run("predict", path, binary_csv, cwd=folder)
    assert result.returncode == 0, result.stderr
    header, rows = read_csv(result.stdout)
    forest = model_io.load(path)
    expected = forest.predict(encoded(binary_csv, path))
    assert header == ["label"] and [row[0] for row in rows] == expected.tolist()


def test_predict_proba_to_file(folder, binary_csv, binary_model):
    path, _ = binary_model
    result = run("predict", path, binary_csv, "--proba", "--output", "proba.csv", cwd=folder)
    assert result.returncode == 0 and result.stdout == ""
    header, rows = read_csv(folder / "proba.csv")
    proba = np.array(rows, dtype=float)
    assert header == ["alpha", "beta"] and proba.shape == (160, 2)
    np.testing.assert_array_equal(proba,
                                  model_io.load(path).predict_proba(encoded(binary_csv, path)))


def encoded(csv_path, model_path):
    """The CSV read by pandas, encoded as the command line does by the public ColumnEncoding."""
    pandas = pytest.importorskip("pandas")
    encoding = aucforest.ColumnEncoding.from_model_file(model_path)
    return encoding.transform(pandas.read_csv(csv_path))


def test_evaluate_reports_auc_with_delong_interval(folder, binary_csv, binary_model):
    pytest.importorskip("matplotlib")
    path, _ = binary_model
    result = run("evaluate", path, binary_csv, "--target", "label", "--plot", "roc.png",
                 cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "decision rfq with the training class priors" in result.stdout
    assert "G-mean" in result.stdout and "95% DeLong interval [" in result.stdout
    assert (folder / "roc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_multiclass_fit_progress_and_unseen_levels(folder, multiclass_csv):
    result = run("fit", multiclass_csv, "--target", "label", "--output", "multi.npz",
                 "--n-estimators", 20, "--criterion", "gini", "--balanced-bootstrap",
                 "--seed", 1, cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "trees [" in result.stderr and "20/20" in result.stderr  # progress bar
    header, rows = read_csv(folder / "multiclass.csv")
    for row in rows[:5]:
        row[header.index("shade")] = "violet"
    unseen = write_csv(folder / "unseen.csv", header, rows)
    result = run("evaluate", "multi.npz", unseen, "--target", "label", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "aucforest: warning: column 'shade' has levels not seen in training ('violet')" \
        in result.stderr
    assert "multiclass AUC (Hand & Till)" in result.stdout


def test_compare_on_a_data_file_with_plot(folder, multiclass_csv):
    pytest.importorskip("matplotlib")
    result = run("compare", multiclass_csv, "--target", "label", "--folds", 3, "--repeats", 1,
                 "--n-estimators", 5, "--plot", "compare.png", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "folds [" in result.stderr  # progress over folds
    scores = result.stdout.split("\n\n")[1]  # header and data sets, scores, paired tests
    table = [line for line in scores.splitlines() if line.startswith("multiclass.csv")]
    assert [line.split()[1:3] for line in table] == [
        ["auc", "rfq"], ["auc", "argmax"], ["gini", "rfq"], ["gini", "argmax"]]
    assert all(line.count("±") == 4 for line in table)
    assert (folder / "compare.png").stat().st_size > 0


def test_compare_on_the_bundled_default(folder):
    result = run("compare", "--folds", 2, "--repeats", 1, "--n-estimators", 4, "--quiet",
                 cwd=folder)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "breast cancer: 393 cases (benign 357, malignant 36), 30 features" in result.stdout
    assert "wine: 142 cases (class_0 59, class_1 71, class_2 12), 13 features" in result.stdout
    rows = [line for line in result.stdout.split("\n\n")[1].splitlines()
            if line.startswith(("breast cancer ", "wine "))]
    assert len(rows) == 8


def test_error_missing_data_file(folder):
    result = run("fit", "absent.csv", "--target", "label", "--output", "m.npz", cwd=folder)
    assert_one_error_line(result, "no such data file: absent.csv")


def test_error_unknown_column(folder, binary_csv):
    result = run("fit", binary_csv, "--target", "colour", "--output", "m.npz", cwd=folder)
    assert_one_error_line(result, "column 'colour' not found in")


def test_error_one_class_target(folder):
    path = write_csv(folder / "one.csv", ["x", "label"], [[1, "a"], [2, "a"], [3, "a"]])
    result = run("fit", path, "--target", "label", "--output", "m.npz", cwd=folder)
    assert_one_error_line(result, "target column 'label' of")
    assert "has only one class ('a')" in result.stderr


def test_error_future_format_model(folder, binary_csv, binary_model):
    path, _ = binary_model
    arrays = dict(np.load(path, allow_pickle=False))
    metadata = arrays["metadata"].tobytes().replace(b'"format_version": 1',
                                                    b'"format_version": 7')
    arrays["metadata"] = np.frombuffer(metadata, dtype=np.uint8)
    np.savez_compressed(folder / "future.npz", **arrays)
    result = run("predict", "future.npz", binary_csv, cwd=folder)
    assert_one_error_line(result, "model file format version 7 is newer than this aucforest "
                                  "supports (1); upgrade aucforest")


# ------------------------------------------------------------ in-process


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"aucforest {aucforest.__version__}"


def test_usage_error_is_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["fit", "data.csv"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert err.startswith("aucforest: error: the following arguments are required: --target, "
                          "--output (see 'aucforest fit --help')")
    with pytest.raises(SystemExit) as stop:
        main([])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "COMMAND" in err


@pytest.mark.parametrize("make_args, fragment", [
    (lambda d: ["predict", "absent.npz", d / "binary.csv"], "No such file or directory"),
    (lambda d: ["predict", d / "binary.csv", d / "binary.csv"], "not an aucforest model file"),
    (lambda d: ["predict", d / "truncated.npz", d / "binary.csv"], "not an aucforest model"),
    (lambda d: ["predict", d / "binary.npz", d / "nofeature.csv"],
     "column 'shade', which the model uses, is not in"),
    (lambda d: ["evaluate", d / "binary.npz", d / "binary.csv", "--target", "x1"],
     "labels"),
    (lambda d: ["evaluate", d / "binary.npz", d / "strange.csv", "--target", "label"],
     "holds labels the model never saw: 'omega'"),
    (lambda d: ["fit", d / "binary.csv", "--target", "label", "--output", d / "no" / "m.npz"],
     "No such folder for the output file"),
    (lambda d: ["fit", d / "ragged.csv", "--target", "label", "--output", d / "m.npz"],
     "row 3 has 3 fields, the header has 2"),
    (lambda d: ["fit", d / "infinite.csv", "--target", "label", "--output", d / "m.npz"],
     "column 'x' of"),
    (lambda d: ["compare", "--target", "label"], "give DATA too"),
    (lambda d: ["compare", d / "binary.csv"], "compare DATA needs --target"),
    (lambda d: ["compare", d / "tiny.csv", "--target", "label"],
     "5-fold cross-validation needs at least 5 per class"),
])
def test_errors_are_one_line(capsys, folder, binary_model, make_args, fragment):
    write_error_inputs(folder)
    code, out, err = run_main(capsys, *make_args(folder))
    assert code == 1 and out == ""
    assert err.startswith("aucforest: error: ") and err.count("\n") == 1, err
    assert fragment in err


def write_error_inputs(folder):
    (folder / "truncated.npz").write_bytes((folder / "binary.npz").read_bytes()[:500])
    header, rows = read_csv(folder / "binary.csv")
    write_csv(folder / "nofeature.csv", header[:4] + header[5:], [r[:4] + r[5:] for r in rows])
    write_csv(folder / "strange.csv", header, rows[:10] + [rows[10][:5] + ["omega"]])
    (folder / "ragged.csv").write_text("x,label\n1,a\n2,b,3\n")
    write_csv(folder / "infinite.csv", ["x", "label"], [[1, "a"], ["inf", "b"]])
    write_csv(folder / "tiny.csv", ["x", "label"], [[i, "a" if i < 8 else "b"] for i in range(10)])


def test_parquet_without_pyarrow_fails_in_one_line(capsys, folder, monkeypatch):
    """The test extras install pyarrow, so its absence is simulated: the import fails."""
    (folder / "data.parquet").write_bytes(b"PAR1")
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    code, out, err = run_main(capsys, "fit", folder / "data.parquet", "--target", "label",
                              "--output", folder / "m.npz")
    assert code == 1 and out == ""
    assert err.startswith("aucforest: error: ") and err.count("\n") == 1, err
    assert "needs pyarrow" in err


def test_missing_values(capsys, folder):
    rows = [[i % 7 if i % 5 else "", "a" if i % 3 else "b"] for i in range(60)]
    path = write_csv(folder / "gaps.csv", ["x", "label"], rows)
    code, out, err = run_main(capsys, "fit", path, "--target", "label", "--output",
                              folder / "gaps.npz", "--n-estimators", 5, "--quiet")
    if aucforest.cli.accepts_missing(aucforest.AUCForestClassifier()):
        assert code == 0 and "out-of-bag AUC" in out
    else:
        assert code == 1 and "has 12 missing values (first in data row 1)" in err


def test_plots_without_matplotlib_fail_early(capsys, folder, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    code, out, err = run_main(capsys, "compare", "--plot", folder / "x.png")
    assert code == 1 and out == ""
    assert "plots need matplotlib" in err and "pip install" in err


def test_parquet_when_pyarrow_is_installed(capsys, folder, binary_csv):
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet as parquet

    header, rows = read_csv(binary_csv)
    columns = {name: [row[j] for row in rows] for j, name in enumerate(header)}
    for name in ("x1", "x2", "x3", "x4"):
        columns[name] = [float(v) for v in columns[name]]
    parquet.write_table(pyarrow.table(columns), folder / "binary.parquet")
    code, out, err = run_main(capsys, "fit", folder / "binary.parquet", "--target", "label",
                              "--output", folder / "pq.npz", "--n-estimators", 5, "--quiet")
    assert code == 0, err
    assert "4 numeric, 1 categorical (3 levels)" in out


def test_python_model_without_encoding(capsys, folder):
    X, y = make_classification(80, 3, n_informative=2, n_redundant=0, random_state=0)
    forest = aucforest.AUCForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    model_io.save(forest, folder / "python.npz")
    write_csv(folder / "numbers.csv", ["a", "b", "c", "y"], [[*x, t] for x, t in zip(X, y)])
    code, out, err = run_main(capsys, "evaluate", folder / "python.npz", folder / "numbers.csv",
                              "--target", "y")
    assert code == 0, err
    assert "AUC" in out
    code, out, err = run_main(capsys, "predict", folder / "python.npz", folder / "numbers.csv")
    assert code == 1 and "takes 3 feature columns; " in err and "has 4 (besides the target)" in err
    write_csv(folder / "features.csv", ["a", "b", "c"], X.tolist())
    code, out, err = run_main(capsys, "predict", folder / "python.npz", folder / "features.csv")
    assert code == 0 and read_csv(out) == (["prediction"], [[str(v)] for v in forest.predict(X)])
