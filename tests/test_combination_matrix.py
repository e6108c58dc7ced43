"""Every input kind with every operation: the dense answer or a clear refusal (issue 44).

One small data set (120 rows: 4 numeric columns with a few NaN, an int-level factor
``ci`` and a str-level factor ``cs`` with a few missing values; two and three
classes) is given in each input kind by one helper, `make_input`. Each cell of
(input kind x operation) checks one of two things:

* **equal** (`test_cell_gives_the_dense_answer`): the operation on the input kind
  gives the answer of the dense reference, to the bit (``assert_array_equal``);
* **refused** (`test_refused_combination_names_what_it_refuses`): a ValueError or
  TypeError (an AttributeError where the API documents one) whose message names
  the column, parameter or file.

**The dense reference** is ``AUCForestClassifier(N_TREES, random_state=0)`` fitted
in memory on a float64, C-ordered numpy array (the factors as the positions of
their sorted levels, NaN missing), with ``categorical_features=[4, 5]`` (the
"categorical" kinds) or None (the "numeric" kinds: sparse matrices, which refuse
factors, and the numeric dask collections), and its answers on that array. Two
cases have their own, stated, reference: a fit on dask collections draws its cases
by row index, not as the in-memory fit does (user guide, section 9), so the dask
kinds' fits must equal the dask fit of the array in one chunk (with the factors'
``categorical_features`` for the categorical dask kinds); and the command line
reads the int factor of a CSV or Parquet file as numbers, so its reference is the
in-memory fit on the frame as the command line reads it (``cs`` a category
column, ``ci`` numbers).

A cell that fails on the current package because of a bug being fixed under
issue 44 is marked ``xfail(strict=True)`` with the case it shows: once the fix
lands the cell passes, the strict mark fails the run, and the mark goes.
"""
import functools
import io
import json
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

import aucforest
from aucforest import AUCForestClassifier
from aucforest.inspection import oob_importance, shap_values
from package_env import package_env

N_ROWS = 120
N_TREES = 8
CATEGORICAL = [4, 5]
INT_LEVELS = [10, 20, 30, 40]
STR_LEVELS = ["a", "b", "c"]
COLUMNS = ["x0", "x1", "x2", "x3", "ci", "cs"]
PREDICTIONS = ("predict", "predict_proba", "apply", "decision_path", "shap_values")
FITS = ("fit", "warm_start", "save_load")
ALL = ("fit",) + PREDICTIONS + ("oob_importance", "warm_start", "save_load")


def xfail(case):
    return pytest.mark.xfail(strict=True, reason=f"issue 44: {case}")


# ------------------------------------------------------------------------ the data set

@dataclass(frozen=True)
class DataSet:
    """The data set as codes (``dense``) and as the frame its factors come from."""
    dense: np.ndarray      # float64 C order: 4 numeric columns, then the codes of ci, cs
    frame: pd.DataFrame    # the same values; ci, cs category columns of sorted levels
    y: np.ndarray


@functools.lru_cache(maxsize=None)
def make_data(n_classes):
    """120 rows: 4 numeric columns (float32 values, ~5% NaN), an int-level and a
    str-level factor (~5% missing) that carry the signal with the first two columns."""
    rng = np.random.RandomState(n_classes)
    numeric = rng.normal(size=(N_ROWS, 4)).astype(np.float32).astype(np.float64)
    int_codes = rng.randint(len(INT_LEVELS), size=N_ROWS).astype(np.float64)
    str_codes = rng.randint(len(STR_LEVELS), size=N_ROWS).astype(np.float64)
    score = numeric[:, 0] + 0.8 * numeric[:, 1] + 0.7 * (int_codes - 1.5) * (str_codes - 1)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    numeric[rng.rand(*numeric.shape) < 0.05] = np.nan
    int_codes[rng.rand(N_ROWS) < 0.05] = np.nan
    str_codes[rng.rand(N_ROWS) < 0.05] = np.nan
    dense = np.ascontiguousarray(np.column_stack([numeric, int_codes, str_codes]))
    frame = pd.DataFrame(numeric, columns=COLUMNS[:4])
    frame["ci"] = pd.Categorical.from_codes(_codes(int_codes), INT_LEVELS)
    frame["cs"] = pd.Categorical.from_codes(_codes(str_codes), STR_LEVELS)
    return DataSet(dense, frame, y)


def _codes(values):
    return np.where(np.isnan(values), -1, values).astype(int)


def make_params(reference, **changes):
    params = dict(n_estimators=N_TREES, random_state=0,
                  categorical_features=CATEGORICAL if reference == "categorical" else None)
    return {**params, **changes}


@functools.lru_cache(maxsize=None)
def dense_reference(reference, n_classes, variant=""):
    """The dense reference forest ("categorical" or "numeric") of the data set, or
    of its ``variant`` (a kind that changes the values, such as an all-missing column)."""
    data = make_data(n_classes)
    dense = make_input(variant, data, None)[1] if variant else data.dense
    return AUCForestClassifier(**make_params(reference)).fit(dense, data.y)


# ------------------------------------------------------------------------ input kinds

@dataclass(frozen=True)
class Kind:
    """An input kind: which reference its answers equal and which operations it has."""
    name: str
    reference: str                  # "categorical" or "numeric"
    operations: tuple = ALL
    is_dask: bool = False
    model_kind: str = ""            # "file" or "pickle": the model is read back
    changes_values: bool = False    # its dense array is not the data set's
    predicts_with: str = ""         # the reference that predicts, when not ``reference``

    @property
    def prediction_reference(self):
        return self.predicts_with or self.reference


SPARSE_OPS = ("fit", "predict", "predict_proba", "apply", "decision_path", "warm_start",
              "save_load")  # shap_values and oob_importance refuse sparse X (below)
DASK_OPS = ("fit",) + PREDICTIONS + ("oob_importance", "save_load")  # warm_start refused

KINDS = {kind.name: kind for kind in [
    Kind("numpy_c", "categorical"),
    Kind("numpy_f", "categorical"),
    Kind("numpy_strided", "categorical"),
    Kind("pandas_numeric", "numeric"),
    Kind("pandas_category", "categorical"),
    Kind("pandas_category_reordered", "categorical"),
    # a level not seen at fit is a prediction-side case: at fit it is a level
    Kind("pandas_category_unseen", "categorical", PREDICTIONS + ("oob_importance",),
         changes_values=True),
    Kind("pandas_category_all_missing", "categorical", changes_values=True),
    # a fit on sparse X refuses factors (below); a model with factors predicts sparse X
    Kind("scipy_csr", "numeric", SPARSE_OPS, predicts_with="categorical"),
    Kind("scipy_csc", "numeric", SPARSE_OPS, predicts_with="categorical"),
    Kind("dask_array", "numeric", DASK_OPS, is_dask=True),
    Kind("dask_frame", "numeric", DASK_OPS, is_dask=True),
    Kind("dask_parquet", "numeric", DASK_OPS, is_dask=True),
    # factors on dask: category columns, and level codes with categorical_features
    Kind("dask_frame_category", "categorical", DASK_OPS, is_dask=True),
    Kind("dask_array_codes", "categorical", DASK_OPS, is_dask=True),
    # a warm start from a model file is refused (below): the file keeps the trees collapsed
    Kind("model_file", "categorical", tuple(op for op in ALL if op != "warm_start"),
         model_kind="file"),
    Kind("model_pickle", "categorical", model_kind="pickle"),
]}


def make_input(kind, data, folder):
    """The data set in input kind ``kind``, as a user passes X.

    Returns (X, dense): X in that kind, and the dense array whose reference answers X
    must give (the data set's codes with what the kind changes: a level not seen at
    fit, or a column with no value, read as NaN).
    """
    dense, frame = data.dense, data.frame
    if kind in ("numpy_c", "model_file", "model_pickle"):
        return dense.copy(), dense
    if kind == "numpy_f":
        return np.asfortranarray(dense), dense
    if kind == "numpy_strided":
        wide = np.zeros((dense.shape[0] * 2, dense.shape[1] * 3))
        wide[::2, ::3] = dense
        return wide[::2, ::3], dense
    if kind == "pandas_numeric":
        return pd.DataFrame(dense, columns=COLUMNS), dense
    if kind == "pandas_category":
        return frame.copy(), dense
    if kind == "pandas_category_reordered":  # other category orders: other pandas codes
        return frame.assign(ci=frame["ci"].cat.reorder_categories(INT_LEVELS[::-1]),
                            cs=frame["cs"].cat.set_categories(["c", "zz", "a", "b"])), dense
    if kind == "pandas_category_unseen":  # level 'd' never seen at fit: a missing value
        unseen = np.arange(N_ROWS) % 10 == 3
        values = frame["cs"].astype(object).where(~unseen, "d")
        changed = dense.copy()
        changed[unseen, 5] = np.nan
        return frame.assign(cs=pd.Categorical(values, categories=STR_LEVELS + ["d"])), changed
    if kind == "pandas_category_all_missing":
        changed = dense.copy()
        changed[:, 5] = np.nan
        return (frame.assign(cs=pd.Categorical([np.nan] * N_ROWS, categories=STR_LEVELS)),
                changed)
    if kind == "scipy_csr":
        return sparse.csr_matrix(dense), dense
    if kind == "scipy_csc":
        return sparse.csc_matrix(dense), dense
    import dask.array as da
    import dask.dataframe as dd
    if kind in ("dask_array", "dask_array_codes"):
        return da.from_array(dense, chunks=(50, 6)), dense
    if kind == "dask_frame":
        return dd.from_pandas(pd.DataFrame(dense, columns=COLUMNS), npartitions=3), dense
    if kind == "dask_parquet":  # several files, read back with unknown partition lengths
        path = folder / "parquet"
        if not path.exists():
            dd.from_pandas(pd.DataFrame(dense, columns=COLUMNS), npartitions=3).to_parquet(path)
        return dd.read_parquet(path), dense
    if kind == "dask_frame_category":
        return dd.from_pandas(frame, npartitions=3), dense
    raise AssertionError(kind)


def computed(value):
    """A dask collection's value; anything else as it is."""
    return value.compute() if hasattr(value, "compute") else value


# ------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("matrix")


_dask_fits = {}


def dask_fitted(kind, n_classes, folder):
    """The forest fitted on ``kind`` (a dask kind), once per module; "one_chunk" and
    "one_chunk_categorical" are the dask fits' references: the array in one chunk,
    fitted with the numeric or the categorical reference's parameters."""
    import dask.array as da
    key = (kind, n_classes)
    if key not in _dask_fits:
        data = make_data(n_classes)
        if kind.startswith("one_chunk"):
            X = da.from_array(data.dense, chunks=-1)
            reference = "categorical" if kind == "one_chunk_categorical" else "numeric"
        else:
            X, reference = make_input(kind, data, folder)[0], KINDS[kind].reference
        _dask_fits[key] = AUCForestClassifier(**make_params(reference)).fit(X, data.y)
    return _dask_fits[key]


# ------------------------------------------------------------------------ operations

def answers(model, X, operation):
    """What ``operation`` gives on X, as arrays."""
    if operation == "predict":
        return computed(model.predict(X))
    if operation == "predict_proba":
        return computed(model.predict_proba(X))
    if operation == "apply":
        return computed(model.apply(X))
    if operation == "decision_path":
        indicator, pointers = model.decision_path(X)
        return indicator.toarray(), pointers
    if operation == "shap_values":
        return shap_values(model, X, n_jobs=1)
    raise AssertionError(operation)


def assert_same(actual, expected):
    if isinstance(expected, tuple):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            np.testing.assert_array_equal(a, e)
    else:
        np.testing.assert_array_equal(actual, expected)


def read_back(model, kind, folder):
    """``model`` as the kind holds it: saved to a model file and loaded, or pickled."""
    if kind.model_kind == "file":
        path = folder / f"read_back_{id(model)}.npz"
        aucforest.save(model, path)
        return aucforest.load(path)
    if kind.model_kind == "pickle":
        return pickle.loads(pickle.dumps(model))
    return model


def predicting_model(kind, n_classes, folder):
    """The model whose answers on the kind's X are compared with the reference's
    answers on the dense array: the reference itself (read back for the model
    kinds), or, for a frame, the same forest fitted on the frame (it then checks the
    frame's feature names and maps its categories by value)."""
    data = make_data(n_classes)
    if kind.name.startswith("pandas_category") or kind.name == "dask_frame_category":
        return AUCForestClassifier(**make_params("categorical")).fit(data.frame, data.y)
    if kind.name in ("pandas_numeric", "dask_frame", "dask_parquet"):
        return AUCForestClassifier(**make_params("numeric")).fit(
            pd.DataFrame(data.dense, columns=COLUMNS), data.y)
    return read_back(dense_reference(kind.prediction_reference, n_classes), kind, folder)


def fitted_on(kind, n_classes, folder, **changes):
    """A forest with the reference's parameters fitted on the kind's X."""
    if kind.is_dask and not changes:
        return dask_fitted(kind.name, n_classes, folder)
    data = make_data(n_classes)
    X = make_input(kind.name, data, folder)[0]
    return AUCForestClassifier(**make_params(kind.reference, **changes)).fit(X, data.y)


def check_cell(kind, operation, n_classes, folder):
    data = make_data(n_classes)
    X, dense = make_input(kind.name, data, folder)
    # a model fitted on the data set predicts; a fit on the kind's X is its own data
    if operation in FITS:
        variant = kind.name if kind.changes_values else ""
        reference = dense_reference(kind.reference, n_classes, variant)
    else:
        reference = dense_reference(kind.prediction_reference, n_classes)
    if operation in PREDICTIONS:
        model = predicting_model(kind, n_classes, folder)
        assert_same(answers(model, X, operation), answers(reference, dense, operation))
    elif operation == "oob_importance":
        model = predicting_model(kind, n_classes, folder)
        got = oob_importance(model, X, data.y, n_repeats=2, random_state=0)
        expected = oob_importance(reference, dense, data.y, n_repeats=2, random_state=0)
        np.testing.assert_array_equal(got.importances, expected.importances)
    elif operation == "fit":
        model = fitted_on(kind, n_classes, folder)
        if kind.is_dask:  # the dask fits' own reference (module docstring)
            reference = dask_fitted("one_chunk_categorical" if kind.reference == "categorical"
                                    else "one_chunk", n_classes, folder)
        assert_same(computed(model.predict_proba(X)), reference.predict_proba(dense))
        assert_same(computed(model.apply(X)), reference.apply(dense))
    elif operation == "warm_start":  # half the trees, (read back,) then the rest
        half = fitted_on(kind, n_classes, folder, n_estimators=N_TREES // 2, warm_start=True)
        model = read_back(half, kind, folder).set_params(n_estimators=N_TREES)
        model.fit(X, data.y)
        assert_same(model.predict_proba(X), reference.predict_proba(dense))
    elif operation == "save_load":
        model = fitted_on(kind, n_classes, folder)
        path = folder / f"{kind.name}_{n_classes}.npz"
        aucforest.save(model, path)
        for loaded in (aucforest.load(path), pickle.loads(pickle.dumps(model))):
            for method in ("predict_proba", "predict", "apply"):
                assert_same(computed(getattr(loaded, method)(X)),
                            computed(getattr(model, method)(X)))
    else:
        raise AssertionError(operation)


# ------------------------------------------------------------------------ the cells

# Cells that fail by a known, open bug: (kind, operation) -> case (none open now)
KNOWN_FAILURES = {}


def cells():
    for kind in KINDS.values():
        # the dask kinds run on the three-class data set only: they are the slow ones
        for n_classes in (3,) if kind.is_dask else (2, 3):
            for operation in kind.operations:
                case = KNOWN_FAILURES.get((kind.name, operation))
                yield pytest.param(kind.name, operation, n_classes,
                                   marks=[xfail(case)] if case else [],
                                   id=f"{kind.name}-{operation}-{n_classes}class")


@pytest.mark.parametrize("kind,operation,n_classes", list(cells()))
def test_cell_gives_the_dense_answer(kind, operation, n_classes, folder, request):
    if KINDS[kind].is_dask:
        request.getfixturevalue("dask_client")
    check_cell(KINDS[kind], operation, n_classes, folder)


# ------------------------------------------------------------------------ refusals

def _fit(reference, **changes):
    """Fit with the reference's parameters (and ``changes``) on the kind's X."""
    return lambda X, y, folder: AUCForestClassifier(**make_params(reference, **changes)).fit(
        X, y)


def _with_model(reference, call):
    """``call(model, X, y)`` with the dense reference model."""
    return lambda X, y, folder: call(dense_reference(reference, 3), X, y)


def _load_truncated(X, y, folder):
    path = folder / "truncated.npz"
    aucforest.save(dense_reference("categorical", 3), path)
    path.write_bytes(path.read_bytes()[:200])
    return aucforest.load(path)


def _continue_from_file(X, y, folder):
    # trees collapsed to 5 cases a leaf: the file holds them collapsed, so choosing the node
    # size again over all trees (predict_min_samples="oob") cannot be done from it
    half = AUCForestClassifier(**make_params("categorical", n_estimators=N_TREES // 2,
                                             warm_start=True, predict_min_samples=5)).fit(X, y)
    aucforest.save(half, folder / "half.npz")
    aucforest.load(folder / "half.npz").set_params(n_estimators=N_TREES,
                                                   predict_min_samples="oob").fit(X, y)


def _text_column(X, y, folder):
    return AUCForestClassifier(N_TREES).fit(X.assign(cs=X["cs"].astype(str)), y)


def _numbers_where_a_factor_was_fitted(X, y, folder):
    model = AUCForestClassifier(**make_params("categorical")).fit(X, y)
    return model.predict(X.assign(cs=X["cs"].cat.codes.astype(float)))


def _level_codes_out_of_range(X, y, folder):
    bad = X.copy()
    bad[7, 5] = 2.5
    return dense_reference("categorical", 3).predict(bad)


# (kind, what is done, the call, exception, what its message names[, known failure])
REFUSALS = [
    ("scipy_csc", "fit with categorical_features", _fit("categorical"), ValueError,
     "categorical_features"),
    ("scipy_csr", "shap_values", _with_model("numeric", lambda m, X, y: shap_values(m, X)),
     TypeError, "Sparse data was passed for X"),
    ("scipy_csc", "oob_importance",
     _with_model("numeric", lambda m, X, y: oob_importance(m, X, y)), TypeError,
     "Sparse data was passed for X"),
    ("dask_frame", "warm_start", _fit("numeric", warm_start=True), ValueError, "warm_start"),
    ("dask_array", "ccp_alpha", _fit("numeric", ccp_alpha=0.01), ValueError, "ccp_alpha"),
    ("dask_parquet", "max_bins=None", _fit("numeric", max_bins=None), ValueError, "max_bins"),
    ("dask_array", "oob_importance of a dask fit",
     lambda X, y, folder: oob_importance(_fit("numeric")(X, y, folder), X, y),
     AttributeError, "dask"),
    ("dask_frame_category", "fit with categories unknown",
     lambda X, y, folder: _fit("categorical")(X.assign(cs=X["cs"].cat.as_unknown()), y, folder),
     ValueError, "'cs'.*as_known"),
    ("pandas_category", "fit with a text column", _text_column, ValueError, "'cs'"),
    ("pandas_category", "fit with categorical_features=None",
     _fit("categorical", categorical_features=None), ValueError, "'ci'"),
    ("pandas_category", "predict numbers where a factor was fitted",
     _numbers_where_a_factor_was_fitted, ValueError, "'cs'"),
    ("numpy_c", "predict level codes that are not integers", _level_codes_out_of_range,
     ValueError, "feature 5"),
    ("model_file", "load a truncated file", _load_truncated, ValueError, "truncated.npz"),
    ("model_file", "warm_start from a loaded model", _continue_from_file, ValueError,
     "predict_min_samples"),
]


def refusals():
    for kind, what, call, error, names, *known in REFUSALS:
        yield pytest.param(kind, call, error, names, marks=[xfail(known[0])] if known else [],
                           id=f"{kind}-{what}")


@pytest.mark.parametrize("kind,call,error,names", list(refusals()))
def test_refused_combination_names_what_it_refuses(kind, call, error, names, folder, request):
    if KINDS[kind].is_dask:
        request.getfixturevalue("dask_client")
    data = make_data(3)
    X = make_input(kind, data, folder)[0]
    with pytest.raises(error, match=names):
        computed(call(X, data.y, folder))


# ------------------------------------------------------------------------ the command line

def cli_frame(data):
    """The data set as the command line reads its file: ``cs`` a category column of
    the sorted levels, ``ci`` numbers (the int levels)."""
    frame = data.frame.copy()
    frame["ci"] = frame["ci"].astype(float)
    return frame


CLI_DRIVER = """
import contextlib, io, json, sys
from aucforest.cli import main
results = {}
for name, args in json.load(sys.stdin).items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    results[name] = [code, out.getvalue(), err.getvalue()]
print(json.dumps(results))
"""


def run_cli(commands):
    """The command line's ``main`` (what the ``aucforest`` script runs) on each
    command of ``commands`` ({name: argument list}), in order, in one subprocess
    (one start-up for them all): {name: (exit code, stdout, stderr)}."""
    commands = {name: [str(a) for a in args] for name, args in commands.items()}
    done = subprocess.run([sys.executable, "-c", CLI_DRIVER], input=json.dumps(commands),
                          capture_output=True, text=True, timeout=300, env=package_env(),
                          cwd=tempfile.gettempdir())  # outside the source tree
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module", params=["csv", "parquet"])
def cli_runs(request, tmp_path_factory):
    """The data set written as a CSV or Parquet file, and the command line's fit,
    predict, predict --proba and importance on it, and predict on a file without a
    column the model uses."""
    folder = tmp_path_factory.mktemp(f"cli_{request.param}")
    data = make_data(3)
    table = cli_frame(data).assign(cs=lambda t: t["cs"].astype(object), y=data.y)
    path, new = folder / f"train.{request.param}", folder / f"new.{request.param}"
    write = {"csv": pd.DataFrame.to_csv, "parquet": pd.DataFrame.to_parquet}[request.param]
    write(table, path, index=False)
    write(table.drop(columns="y"), new, index=False)
    write(table.drop(columns=["y", "x3"]), folder / f"without_x3.{request.param}", index=False)
    model = folder / "model.npz"
    return model, run_cli({
        "fit": ["fit", path, "--target", "y", "--output", model, "--n-estimators", N_TREES,
                "--quiet"],
        "predict": ["predict", model, new],
        "predict_proba": ["predict", model, new, "--proba"],
        "oob_importance": ["importance", model, path, "--target", "y", "--repeats", 2,
                           "--n-jobs", 1],
        "missing_column": ["predict", model, folder / f"without_x3.{request.param}"]})


@functools.lru_cache(maxsize=None)
def cli_reference():
    data = make_data(3)
    return AUCForestClassifier(N_TREES, random_state=0).fit(cli_frame(data), data.y)


def _csv_output(text):
    return pd.read_csv(io.StringIO(text))


@pytest.mark.parametrize("operation", ["fit", "predict", "predict_proba", "oob_importance",
                                       "save_load"])
def test_command_line_gives_the_dense_answer(cli_runs, operation):
    model_path, runs = cli_runs
    data = make_data(3)
    frame, reference = cli_frame(data), cli_reference()
    if operation in ("fit", "save_load"):
        code, out, err = runs["fit"]
        assert code == 0, err
        model = aucforest.load(model_path)
        method = "predict_proba" if operation == "fit" else "apply"
        assert_same(getattr(model, method)(frame), getattr(reference, method)(frame))
        return
    code, out, err = runs[operation]
    assert code == 0, err
    if operation == "predict":
        np.testing.assert_array_equal(_csv_output(out).iloc[:, 0], reference.predict(frame))
    elif operation == "predict_proba":  # written as repr(float): read back to the bit
        np.testing.assert_array_equal(_csv_output(out).to_numpy(),
                                      reference.predict_proba(frame))
    else:  # the table prints 4 decimals: equal within 5e-5
        groups = {name: [j] for j, name in enumerate(COLUMNS)}
        expected = oob_importance(reference, frame, data.y, n_repeats=2, random_state=0,
                                  groups=groups)
        rows = [line.split() for line in out.splitlines()
                if line.split() and line.split()[0] in COLUMNS]
        printed = {row[0]: float(row[1]) for row in rows}
        np.testing.assert_allclose([printed[name] for name in COLUMNS],
                                   expected.importances_mean, rtol=0, atol=5e-5)


def test_command_line_predict_refuses_a_file_without_a_model_column(cli_runs):
    code, out, err = cli_runs[1]["missing_column"]
    assert code != 0 and "column 'x3'" in err and "without_x3" in err
