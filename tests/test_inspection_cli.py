"""`aucforest importance` end to end, in a subprocess on small files (the style of test_cli)."""
import numpy as np
import pytest

from aucforest import io as model_io
from aucforest.cli import main
from aucforest.inspection import importance_intervals, oob_importance
from test_cli import make_data, run, write_csv


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("importance")


@pytest.fixture(scope="module")
def fitted(folder):
    data = write_csv(folder / "train.csv", *make_data(150, 3, [0.5, 0.4], seed=1))
    result = run("fit", data, "--target", "label", "--output", "model.npz",
                 "--n-estimators", 25, "--seed", 0, "--quiet", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder / "model.npz", data


def table_rows(stdout):
    """{feature: [numbers...]} of the printed table."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("feature"))
    rows = {}
    for line in lines[start + 1:]:
        if line.startswith("plot saved"):
            break
        name, *numbers = line.split()
        rows[name] = [float(v) for v in numbers]
    return lines[start].split(), rows


def test_importance_prints_the_table_of_oob_importance(fitted, folder):
    model, data = fitted
    result = run("importance", model, data, "--target", "label", "--repeats", 2, "--seed", 3,
                 "--intervals", 3, "--plot", "vimp.png", cwd=folder)
    assert result.returncode == 0, result.stderr
    header, rows = table_rows(result.stdout)
    assert header[:3] == ["feature", "importance", "sd"]
    forest, extra = model_io.read_model(model)
    from aucforest._encoding import ColumnEncoding
    from aucforest._table import read_table
    encoding = ColumnEncoding.from_dict(extra["encoding"])
    table = read_table(str(data))
    from aucforest.cli._data import named
    X, y = named(forest, encoding.transform(table)), table.column("label")
    # one row per column of the file (shade: a categorical feature, its levels split natively;
    # test_cli_categorical checks one-hot levels permuted together)
    groups = {"x1": [0], "x2": [1], "x3": [2], "x4": [3], "shade": [4]}
    assert encoding.feature_names == list(groups)
    expected = oob_importance(forest, X, y, n_repeats=2, random_state=3, groups=groups)
    intervals = importance_intervals(forest, X, y, n_subsamples=3, n_repeats=2, random_state=3,
                                     groups=groups)
    names = list(groups)
    assert list(rows) == [names[j] for j in np.argsort(-expected.importances_mean,
                                                         kind="stable")]
    for j, name in enumerate(names):
        importance, sd, se, lower, upper, pvalue, *per_class = rows[name]
        assert importance == pytest.approx(expected.importances_mean[j], abs=5e-5)
        assert sd == pytest.approx(expected.importances_std[j], abs=5e-5)
        assert (se, lower, upper) == pytest.approx(
            (intervals.se[j], intervals.lower[j], intervals.upper[j]), abs=5e-5)
        assert per_class == pytest.approx(expected.per_class[j], abs=5e-5)
    assert (folder / "vimp.png").stat().st_size > 1000
    assert "plot saved to vimp.png" in result.stdout


def test_importance_refuses_data_other_than_the_training_data(fitted, folder, capsys):
    model, _ = fitted
    other = write_csv(folder / "other.csv", *make_data(100, 3, [0.5, 0.4], seed=2))
    assert main(["importance", str(model), str(other), "--target", "label"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("aucforest: error:") and "fitted on 150" in error
    assert error.count("\n") == 1


@pytest.mark.parametrize("option, value, message", [
    ("--repeats", "0", "must be a positive integer, got 0"),
    ("--repeats", "x", "must be an integer, got 'x'"),
    ("--intervals", "1.5", "must be an integer, got '1.5'")])
def test_importance_counts_are_checked_as_every_command_checks_them(capsys, option, value,
                                                                      message):
    """One _positive_int for all commands (aucforest.cli._options), with its messages."""
    with pytest.raises(SystemExit) as exit:
        main(["importance", "model.npz", "data.csv", "--target", "label", option, value])
    assert exit.value.code == 2
    assert f"argument {option}: {message}" in capsys.readouterr().err
