"""Data files read exactly, with bounded memory and errors that name their cause (issue 30).

Real CSV and Parquet files through `aucforest.cli.main` and
`aucforest._table.read_table`: integers above 2**53 as identifiers and class
labels, feature values float32 cannot hold, a long cell (memory and
messages), and errors that name the column and row.
"""
import csv
import os
import tracemalloc

import numpy as np
import pytest

import aucforest
from aucforest._table import read_table
from cli_files import run_main, write_csv

BIG = 2**53


def num(value):
    """A number as a CSV cell (Python's shortest round-trip repr)."""
    return repr(float(value))


def rows_of(text):
    return list(csv.reader(text.splitlines()))


def write_parquet(path, columns):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path)
    return path


def features(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), rng.normal(size=n)


# ------------------------------------------------------------ exact integers

def test_parquet_ids_above_2_53_stay_distinct_as_in_csv(capsys, tmp_path):
    n = 400
    ids = 2**60 + np.arange(n, dtype=np.int64)  # float64 would merge them into 3 values
    a, b = features(n)
    label = (a > 0).astype(np.int64)
    write_parquet(tmp_path / "d.parquet", {"id": ids, "a": a, "b": b, "label": label})
    write_csv(tmp_path / "d.csv", ["id", "a", "b", "label"],
              [[int(i), num(x), num(z), int(y)] for i, x, z, y in zip(ids, a, b, label)])
    outputs = []
    for data in ("d.parquet", "d.csv"):
        model = tmp_path / f"{data}.npz"
        assert run_main(capsys, "fit", tmp_path / data, "--target", "label", "--id", "id",
                        "--output", model, "--n-estimators", 5, "--seed", 0, "--quiet")[0] == 0
        code, out, err = run_main(capsys, "predict", model, tmp_path / data)
        assert code == 0, err
        outputs.append(out)
        written = [int(row[0]) for row in rows_of(out)[1:]]
        assert written == ids.tolist() and len(set(written)) == n
    assert outputs[0] == outputs[1]  # the same data, the same output


def test_parquet_labels_2_53_and_2_53_plus_1_are_two_classes(capsys, tmp_path):
    n = 300
    a, b = features(n)
    label = np.where(a > 0, BIG + 1, BIG).astype(np.int64)
    data = write_parquet(tmp_path / "d.parquet", {"a": a, "b": b, "label": label})
    code, out, err = run_main(capsys, "fit", data,
                              "--target", "label", "--output", tmp_path / "m.npz",
                              "--n-estimators", 10, "--seed", 0, "--quiet")
    assert code == 0, err
    assert f"classes {BIG} ({(label == BIG).sum()}), {BIG + 1} ({(label == BIG + 1).sum()})" in out
    forest = aucforest.load(tmp_path / "m.npz")
    assert forest.classes_.dtype == np.int64 and forest.classes_.tolist() == [BIG, BIG + 1]
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", data)
    assert code == 0, err
    assert {int(row[0]) for row in rows_of(out)[1:]} == {BIG, BIG + 1}
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", data, "--target", "label")
    assert code == 0 and f"AUC ({BIG + 1} positive)" in out, err


def test_parquet_integer_columns_keep_their_values_with_and_without_nulls(tmp_path):
    pa = pytest.importorskip("pyarrow")
    columns = {
        "int64": pa.array([BIG + 1, -BIG - 1, 0], pa.int64()),
        "int8": pa.array([1, -2, 3], pa.int8()),
        "uint64": pa.array([2**64 - 1, 1, 2**63], pa.uint64()),
        "small_with_null": pa.array([1, None, BIG], pa.int64()),
        "big_with_null": pa.array([BIG + 1, None, 5], pa.int64()),
        "text": pa.array(["x", None, "  y "]),
    }
    table = read_table(write_parquet(tmp_path / "ints.parquet", columns))
    got = table.columns
    assert got["int64"].dtype == np.int64 and got["int64"].tolist() == [BIG + 1, -BIG - 1, 0]
    assert got["int8"].dtype == np.int64 and got["int8"].tolist() == [1, -2, 3]
    assert got["uint64"].dtype == np.uint64 and got["uint64"].tolist() == [2**64 - 1, 1, 2**63]
    assert got["small_with_null"].dtype == np.float64  # float64 holds these exactly
    np.testing.assert_array_equal(got["small_with_null"], [1, np.nan, BIG])
    assert got["big_with_null"].tolist() == [str(BIG + 1), "", "5"]  # exact, as text
    assert got["text"].dtype == object and got["text"].tolist() == ["x", "", "y"]


def test_labels_above_int64_are_refused_naming_the_row(capsys, tmp_path):
    pa = pytest.importorskip("pyarrow")
    a, b = features(20)
    labels = pa.array([1] * 10 + [2**63] + [2] * 9, pa.uint64())
    data = write_parquet(tmp_path / "d.parquet", {"a": a, "b": b, "label": labels})
    code, out, err = run_main(capsys, "fit", data,
                              "--target", "label", "--output", tmp_path / "m.npz")
    assert code == 1
    assert f"holds the label {2**63} in data row 11, above 2**63 - 1" in err


# ------------------------------------------------------------ beyond float32

@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_a_feature_beyond_float32_names_column_and_row(capsys, tmp_path, kind):
    n = 50
    a, b = features(n)
    b[7] = 1e39
    b[30] = -2e39
    label = np.arange(n) % 2
    if kind == "csv":
        data = write_csv(tmp_path / "d.csv", ["a", "b", "label"],
                         [[num(x), num(z), y] for x, z, y in zip(a, b, label)])
    else:
        data = write_parquet(tmp_path / "d.parquet", {"a": a, "b": b, "label": label})
    code, out, err = run_main(capsys, "fit", data,
                              "--target", "label", "--output", tmp_path / "m.npz")
    assert code == 1 and out == ""
    assert err == (f"aucforest: error: column 'b' of {data} holds 1e+39 in data row 8 (and 1 "
                   "more), beyond the range of float32 (magnitudes up to 3.40282e+38) in "
                   "which the forest computes: rescale the column (e.g. to other units or its "
                   "logarithm)\n")
    good = b.copy()
    good[[7, 30]] = 3.4e38  # within float32's range: fitted
    write_csv(tmp_path / "good.csv", ["a", "b", "label"],
              [[num(x), num(z), y] for x, z, y in zip(a, good, label)])
    assert run_main(capsys, "fit", tmp_path / "good.csv", "--target", "label", "--output",
                    tmp_path / "m.npz", "--n-estimators", 3, "--quiet")[0] == 0
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", data)  # and at prediction
    assert code == 1 and "column 'b' of" in err and "in data row 8 (and 1 more)" in err


def test_feature_integers_beyond_2_24_merge_in_float32_as_documented(capsys, tmp_path):
    """The encoding's docstring: the forest computes in float32, so the features
    16,777,216 and 16,777,217 are one value (identifiers and labels stay exact)."""
    rows = [[2**24 + i % 2, i, i % 2] for i in range(40)]  # x separates the classes exactly
    data = write_csv(tmp_path / "d.csv", ["x", "id", "label"], rows)
    assert run_main(capsys, "fit", data, "--target", "label", "--id", "id", "--output",
                    tmp_path / "m.npz", "--n-estimators", 5, "--seed", 0, "--quiet")[0] == 0
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", data, "--proba")
    proba = np.array([row[1:] for row in rows_of(out)[1:]], dtype=float)
    assert code == 0 and np.allclose(proba, proba[0])  # no split between the two values
    assert [int(row[0]) for row in rows_of(out)[1:]] == list(range(40))


# ------------------------------------------------------------ long cells

def test_csv_memory_grows_with_the_file_not_with_the_longest_cell(tmp_path):
    """2,000 rows x 3 columns and one 5,000-character cell: a text array as wide
    as the longest cell would take 2000 x 3 x 5000 x 4 bytes = 120 MB."""
    rows = [[i * 0.5, "x", i % 2] for i in range(2000)]
    rows[3][1] = "z" * 5000
    path = write_csv(tmp_path / "long.csv", ["a", "b", "y"], rows)
    tracemalloc.start()
    try:
        table = read_table(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert table.n_rows == 2000 and table.columns["b"][3] == "z" * 5000
    assert peak < 20 * os.path.getsize(path), peak  # Python strings: about 60 bytes a cell


def test_messages_quote_at_most_40_characters_of_a_cell(capsys, tmp_path):
    long = "q" * 5000
    shown = f"'{'q' * 40}'... (5000 characters)"
    n = 60
    a, b = features(n)
    rows = [[num(x), num(z), "yes" if x > 0 else "no"] for x, z in zip(a, b)]
    write_csv(tmp_path / "train.csv", ["a", "b", "label"], rows)
    assert run_main(capsys, "fit", tmp_path / "train.csv", "--target", "label", "--output",
                    tmp_path / "m.npz", "--n-estimators", 3, "--quiet")[0] == 0
    bad = [list(row) for row in rows]
    bad[5][1] = long  # a numeric column with text
    bad[6][2] = long  # an unknown label
    write_csv(tmp_path / "bad.csv", ["a", "b", "label"], bad)
    one_class = [[1, 2, long], [3, 4, long]]
    write_csv(tmp_path / "one.csv", ["a", "b", "label"], one_class)
    mostly = [list(row) for row in rows]
    mostly[9][1] = long
    write_csv(tmp_path / "mostly.csv", ["a", "b", "label"], mostly)
    for args in (["predict", tmp_path / "m.npz", tmp_path / "bad.csv"],
                 ["evaluate", tmp_path / "m.npz", tmp_path / "bad.csv", "--target", "label"],
                 ["fit", tmp_path / "one.csv", "--target", "label", "--output", tmp_path / "o"],
                 ["fit", tmp_path / "mostly.csv", "--target", "label", "--output",
                  tmp_path / "w.npz", "--n-estimators", 3, "--quiet"]):
        code, out, err = run_main(capsys, *args)
        assert shown in err, (args, err[:300])
        assert long not in err and len(err) < 1000, (args, len(err))


# ------------------------------------------------------------ errors that name the row

def test_csv_errors_name_the_row(capsys, tmp_path):
    cases = {
        "utf8.csv": (b"a,b\n1,2\n3,\xff4\n", "is not UTF-8 text (invalid start byte at line 3 "
                                             "(byte 10))"),
        "ragged.csv": (b"a,b\n1,2\n\n3,4,5\n", "row 3 has 3 fields, the header has 2"),
        "infinite.csv": (b"a,b\n1,x\n-inf,y\n2,x\n", "column 'a' of {} has 1 infinite values "
                                                     "(first in data row 2)"),
        "huge.csv": (b"a,b\n1,x\n2," + b"y" * 200_000 + b"\n",
                     "is not a valid CSV file: field larger than field limit (131072) (line 3)"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_bytes(content)
        code, out, err = run_main(capsys, "fit", tmp_path / name, "--target", "b", "--output",
                                  tmp_path / "m.npz")
        assert code == 1 and message.format(tmp_path / name) in err, (name, err)


def test_target_of_the_wrong_kind_names_the_row(capsys, tmp_path):
    a, b = features(40)
    write_csv(tmp_path / "t.csv", ["a", "b", "label"],
              [[num(x), num(z), int(x > 0)] for x, z in zip(a, b)])
    assert run_main(capsys, "fit", tmp_path / "t.csv", "--target", "label", "--output",
                    tmp_path / "m.npz", "--n-estimators", 3, "--quiet")[0] == 0
    write_csv(tmp_path / "e.csv", ["a", "b", "label"],
              [[num(x), num(z), "maybe" if i == 12 else int(x > 0)]
               for i, (x, z) in enumerate(zip(a, b))])
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz",
                              tmp_path / "e.csv", "--target",
                              "label")
    assert code == 1
    assert "must hold integer labels like the model's classes; data row 13 holds 'maybe'" in err


def test_data_that_is_not_a_regular_file_is_refused_without_reading(capsys, tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(tmp_path / "data.csv")  # opening it for reading would wait for a writer
    (tmp_path / "folder.csv").mkdir()
    for name in ("data.csv", "folder.csv"):
        code, out, err = run_main(capsys, "fit", tmp_path / name, "--target", "y", "--output",
                                  tmp_path / "m.npz")
        assert code == 1
        assert err == f"aucforest: error: {tmp_path / name} is not a regular file, so not a " \
                      "data file\n"
