"""Fuzzing across the seams (hypothesis; issue 44): random frames and random sparse
structures through fit, save/load, predict and the command line.

The invariant of every example: the answer of the dense path, to the bit, or a
ValueError/TypeError whose message names the column or parameter at fault.

* Frames mix numeric columns (NaN), ``category`` columns of int and of str levels
  (missing values, unused levels, some columns with no value at all) under
  duplicate-looking names ("a", "a ", "A", "1", "a=b", unicode). Their dense path:
  the codes of the category columns (positions of their levels) in a float64 array,
  with ``categorical_features`` their indices.
* Through the command line, the frame is a CSV file: its dense path is the forest
  fitted on the frame as the command line reads it (str columns categorical, the
  int levels numbers).
* Sparse matrices are built from random (data, indices, indptr) arrays with
  explicit zeros, duplicate entries (summed, as scipy reads them), unsorted
  indices and NaN; their dense path is ``X.toarray()``. Index arrays that do not
  describe a matrix must give a ValueError naming them, never a crash: they run in
  a subprocess.

CI runs a few examples of each (the ``ci`` profile of conftest.py replays the same
ones every run); ``AUCFOREST_FUZZ_EXAMPLES=500`` searches longer.
"""
import contextlib
import io
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from scipy import sparse

import aucforest
from aucforest import AUCForestClassifier
from aucforest.cli import main
from package_env import package_env

N_TREES = 3
NAMES = ["a", "a ", " a", "A", "1", "a=b", "a.b", "a,b", "é", "e\u0301", "列", "x" * 30,
         "level", "y_"]


def fuzz_examples(default):
    """How many examples to try: ``default``, or AUCFOREST_FUZZ_EXAMPLES when set."""
    return int(os.environ.get("AUCFOREST_FUZZ_EXAMPLES", default))


FUZZ = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                   HealthCheck.too_slow])


# ------------------------------------------------------------------------ random frames

@st.composite
def columns(draw, n_rows):
    """One column: ("numeric", float values) or ("int"/"str", level list, codes)."""
    kind = draw(st.sampled_from(["numeric", "numeric", "int", "str"]))
    missing = draw(st.sampled_from([0.0, 0.1, 0.1, 0.5, 0.5, 1.0]))
    rng = np.random.RandomState(draw(st.integers(0, 2**31 - 1)))
    absent = rng.rand(n_rows) < missing
    if kind == "numeric":
        values = rng.normal(size=n_rows).astype(np.float32).astype(np.float64)
        values[absent] = np.nan
        return kind, None, values
    if kind == "int":
        levels = sorted(draw(st.sets(st.integers(-50, 1000), min_size=1, max_size=6)))
    else:
        levels = sorted(draw(st.sets(st.text("abcXYZéß列 _-", min_size=1, max_size=5)
                                     .map(lambda s: "L" + s), min_size=1, max_size=6)))
    codes = rng.randint(len(levels), size=n_rows).astype(np.float64)
    codes[absent] = np.nan
    return kind, levels, codes


@st.composite
def frames(draw):
    """(frame, codes, is_categorical, y): a random frame, its dense codes array, which
    columns are category columns, and 2 or 3 classes with at least 3 rows each."""
    n_rows = draw(st.integers(20, 50))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True))
    drawn = [draw(columns(n_rows)) for _ in names]
    frame = pd.DataFrame(index=range(n_rows))
    for name, (kind, levels, values) in zip(names, drawn):
        frame[name] = values if kind == "numeric" else pd.Categorical.from_codes(
            np.where(np.isnan(values), -1, values).astype(int), levels)
    codes = np.ascontiguousarray(np.column_stack([values for _, _, values in drawn]))
    n_classes = draw(st.integers(2, 3))
    y = np.arange(n_rows) % n_classes
    np.random.RandomState(n_rows).shuffle(y)
    is_categorical = np.array([kind != "numeric" for kind, _, _ in drawn])
    return frame, codes, is_categorical, y


def names_a_column_or_parameter(message, frame):
    """Whether an error message names one of the frame's columns (quoted as repr, or
    by position) or a parameter."""
    quoted = any(repr(str(name)) in message for name in frame.columns)
    return quoted or bool(re.search(r"feature \d+|categorical_features|column", message))


@settings(max_examples=fuzz_examples(25), **FUZZ)
@given(frames())
def test_random_frames_fit_save_load_and_predict_as_their_codes(tmp_path, case):
    frame, codes, is_categorical, y = case
    params = dict(n_estimators=N_TREES, random_state=0)
    try:
        forest = AUCForestClassifier(**params).fit(frame, y)
    except (ValueError, TypeError) as error:
        event(f"fit refused: {type(error).__name__}")
        assert names_a_column_or_parameter(str(error), frame), error
        return
    event("fitted")
    dense = AUCForestClassifier(**params, categorical_features=np.flatnonzero(is_categorical)
                                ).fit(codes, y)
    expected = dense.predict_proba(codes)
    np.testing.assert_array_equal(forest.predict_proba(frame), expected)
    path = tmp_path / "fuzzed.npz"
    aucforest.save(forest, path)
    for loaded in (aucforest.load(path), pickle.loads(pickle.dumps(forest))):
        np.testing.assert_array_equal(loaded.predict_proba(frame), expected)
        np.testing.assert_array_equal(loaded.predict(frame), dense.predict(codes))
        assert list(loaded.feature_names_in_) == [str(name) for name in frame.columns]


def as_the_command_line_reads(frame):
    """The frame as the command line reads its CSV file: str levels a category column
    of the sorted levels present in the file, int levels numbers."""
    read = pd.DataFrame(index=frame.index)
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype) and \
                isinstance(column.cat.categories[0], str):
            present = sorted(set(column.dropna().astype(str)))
            read[name] = pd.Categorical(column.astype(object), categories=present)
        else:
            read[name] = column.astype(float)
    return read


def run_main(*args):
    """``aucforest ARGS`` in process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=fuzz_examples(8), **FUZZ)
@given(frames())
def test_random_frames_through_the_command_line_on_csv(tmp_path, case):
    frame, _, _, y = case
    data, model = tmp_path / "train.csv", tmp_path / "model.npz"
    frame.assign(target=y).to_csv(data, index=False)
    model.unlink(missing_ok=True)
    code, out, err = run_main("fit", data, "--target", "target", "--output", model,
                              "--n-estimators", N_TREES, "--n-jobs", 1, "--quiet")
    event(f"fit exit status {code}")
    if code != 0:
        assert code == 1 and err.count("\n") <= 2, err
        assert names_a_column_or_parameter(err, frame) or str(data) in err, err
        return
    code, out, err = run_main("predict", model, data, "--proba")
    assert code == 0, err
    proba = pd.read_csv(io.StringIO(out), float_precision="round_trip").to_numpy()  # exact
    read = as_the_command_line_reads(frame)
    expected = AUCForestClassifier(N_TREES, random_state=0).fit(read, y).predict_proba(read)
    np.testing.assert_array_equal(proba, expected)


# ------------------------------------------------------------------------ random sparse

@st.composite
def sparse_structures(draw):
    """(format, data, indices, indptr, shape): a valid compressed structure with
    explicit zeros, duplicate entries, unsorted indices and NaN."""
    fmt = draw(st.sampled_from(["csr", "csc"]))
    n_rows, n_cols = draw(st.integers(12, 40)), draw(st.integers(1, 5))
    n_major, n_minor = (n_rows, n_cols) if fmt == "csr" else (n_cols, n_rows)
    rng = np.random.RandomState(draw(st.integers(0, 2**31 - 1)))
    counts = rng.poisson(draw(st.sampled_from([0.3, 1.0, 3.0])), size=n_major)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    indices = rng.randint(n_minor, size=indptr[-1]).astype(np.int32)  # unsorted, repeated
    data = rng.choice([0.0, np.nan, 1.0, -2.5, 3.25], size=indptr[-1])  # explicit zeros
    drawn = rng.rand(data.size) < 0.5
    # multiples of 1/16: duplicates sum exactly in float32 (inexact sums: test below)
    data[drawn] = rng.randint(-64, 64, size=drawn.sum()) / 16
    return fmt, data, indices, indptr, (n_rows, n_cols)


def built(fmt, data, indices, indptr, shape):
    kind = sparse.csr_matrix if fmt == "csr" else sparse.csc_matrix
    return kind((data.copy(), indices.copy(), indptr.copy()), shape=shape)


@settings(max_examples=fuzz_examples(25), **FUZZ)
@given(sparse_structures())
def test_random_sparse_structures_fit_and_predict_as_their_dense_array(case):
    X = built(*case)
    dense = X.toarray()  # duplicate entries summed, as scipy reads them
    y = np.arange(X.shape[0]) % 2
    params = dict(n_estimators=N_TREES, random_state=0)
    expected = AUCForestClassifier(**params).fit(dense, y)
    forest = AUCForestClassifier(**params).fit(X, y)
    np.testing.assert_array_equal(forest.predict_proba(dense), expected.predict_proba(dense))
    for other in (X, X.tocsr(), X.tocsc()):
        np.testing.assert_array_equal(expected.predict_proba(other),
                                      expected.predict_proba(dense))
        np.testing.assert_array_equal(expected.apply(other), expected.apply(dense))


def test_duplicate_entries_sum_as_in_the_dense_array():
    """Found by the fuzzer: a row's duplicate entries summed in float32 can differ in the
    last bit from ``X.toarray()`` (float64 sums), and the forest then differs."""
    values = [3.25, -0.53147691, np.nan, -1.2549473, np.nan, 0.93016887, -2.5, 0.0, -2.5,
              1.0, -0.2346151, 3.25, 1.0, -2.5, -0.36445671, -1.34039176, 0.17291185, 1.0,
              2.19737172, 0.0, 3.25, 0.0, 1.13013649, np.nan, 0.0, -0.67436224, 3.25,
              -0.27748415, 3.25, 1.0, np.nan, -0.32813659, 1.34057009, 3.25]
    indptr = [0, 2, 3, 5, 7, 10, 14, 15, 16, 20, 25, 30, 34]  # every entry in column 0
    X = built("csr", np.array(values), np.zeros(len(values), dtype=np.int32),
              np.array(indptr, dtype=np.int32), (12, 1))
    dense = X.toarray()
    y = np.arange(12) % 2
    expected = AUCForestClassifier(N_TREES, random_state=0).fit(dense, y).predict_proba(dense)
    np.testing.assert_array_equal(
        AUCForestClassifier(N_TREES, random_state=0).fit(X, y).predict_proba(dense), expected)


@st.composite
def invalid_structures(draw):
    """A structure whose index arrays do not describe a matrix of its shape."""
    fmt, data, indices, indptr, shape = draw(sparse_structures())
    n_minor = shape[1] if fmt == "csr" else shape[0]
    damage = draw(st.sampled_from(["index too large", "negative index", "indptr decreasing"]))
    if damage == "indptr decreasing" or indices.size == 0:
        indptr = indptr.copy()
        indptr[1] = indptr[-1] + 5 if indptr.size > 2 else 3
        damage = "indptr decreasing"
    else:
        at = draw(st.integers(0, indices.size - 1))
        indices = indices.copy()
        indices[at] = n_minor + draw(st.integers(0, 10**6)) if damage == "index too large" \
            else -draw(st.integers(1, 10**6))
    return damage, fmt, data.tolist(), indices.tolist(), indptr.tolist(), shape


INVALID_SCRIPT = """
import json, sys
import numpy as np
from scipy import sparse
import aucforest
results = []
for damage, fmt, data, indices, indptr, shape, where in json.load(sys.stdin):
    kind = sparse.csr_matrix if fmt == "csr" else sparse.csc_matrix
    try:
        X = kind((np.array(data), np.array(indices, np.int32), np.array(indptr, np.int32)),
                 shape=tuple(shape))
    except ValueError:  # scipy refused to build it: nothing reaches aucforest
        results.append(None)
        continue
    y = np.arange(shape[0]) % 2
    try:
        if where == "fit":
            aucforest.AUCForestClassifier(2, random_state=0).fit(X, y)
        else:
            forest = aucforest.AUCForestClassifier(2, random_state=0).fit(
                np.zeros(shape) + np.arange(shape[0])[:, None], y)
            forest.predict_proba(X)
        results.append(["no error", ""])
    except (ValueError, TypeError) as error:
        results.append([type(error).__name__, str(error)])
print(json.dumps(results))
"""


@settings(max_examples=fuzz_examples(1), phases=[Phase.explicit, Phase.generate], **FUZZ)
@given(st.lists(st.tuples(invalid_structures(), st.sampled_from(["fit", "predict"])),
                min_size=8, max_size=8))
def test_sparse_index_arrays_that_describe_no_matrix_are_refused_by_name(cases):
    """A batch of damaged structures in one subprocess (a crash or a hang must not take
    the test run with it); no shrinking, which would rerun it for each step."""
    batch = [list(structure) + [where] for structure, where in cases]
    try:
        done = subprocess.run([sys.executable, "-c", INVALID_SCRIPT], input=json.dumps(batch),
                              capture_output=True, text=True, timeout=60, env=package_env(),
                              cwd=tempfile.gettempdir())  # outside the source tree
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung on {[(c[0][0], c[1]) for c in cases]}")
    assert done.returncode == 0, f"crashed (exit status {done.returncode}): {done.stderr[-500:]}"
    for (structure, where), result in zip(cases, json.loads(done.stdout)):
        if result is None:
            continue
        kind, message = result
        assert kind == "ValueError" and re.search(r"indices|indptr|index", message), \
            (structure[0], where, kind, message)
