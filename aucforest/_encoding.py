"""Turning the columns of a data file (or a DataFrame) into the numeric matrix a forest needs.

:class:`ColumnEncoding` is public: a model fitted by the command line stores
its encoding, and ``ColumnEncoding.from_model_file(path)`` gives it back
so that Python code can encode a DataFrame exactly as the command line does.

Rules (documented in docs/user_guide.md, "Command line"):

* Missing-value markers: by default the empty cell and ``NA``, ``NaN``,
  ``nan``, ``?``, ``null``, ``N/A``, ``None`` (compared without regard to
  case); ``na_values`` replaces this list (the empty cell always counts as
  missing).
* A column is **numeric** when every cell is a number or a missing-value
  marker and at least one cell is a number. Infinite values are refused.
* Any other column is **categorical**; its levels are its distinct texts,
  sorted, missing cells left out. Up to ``max_one_hot`` levels (10 by
  default) it becomes one 0/1 column per level, named ``column=level``
  (one-hot). With more levels it becomes one column holding the level's
  position in the sorted list (ordinal; trees can split it into groups of
  alphabetically adjacent levels). A column read as text although most of
  its values are numbers gets a warning naming the other values: they are
  usually an unlisted missing-value marker.
* Missing values become NaN when the forest accepts NaN
  (``allow_missing=True``: its scikit-learn tag ``allow_nan``); otherwise
  they are refused with a message naming the column: impute or drop them.
* The forest computes in float32. A numeric value beyond float32's range
  (magnitude above 3.4e38, e.g. ``1e39``), which float32 would make
  infinite, is refused with a message naming the column and the data row.
  Within the range, values are rounded to float32's 24-bit significand:
  integers above 2**24 = 16,777,216 in magnitude may change (16,777,217
  becomes 16,777,216), and magnitudes below about 1.2e-38 lose precision
  or become 0. Identifier and target columns are not features: they keep
  their exact values.
* At prediction, a level not seen in training becomes all zeros (one-hot) or
  -1, below every known level (ordinal), with a warning.
* Class labels: integers (int64, exact) when every label is an integer, text
  otherwise.

Messages quote at most the first 40 characters of a cell.

The encoding is plain data (:meth:`ColumnEncoding.to_dict`), stored in the
model file so that ``predict`` and ``evaluate`` apply the same one.
"""
import warnings

import numpy as np
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

from ._table import clean_cell, quote, text_array

DEFAULT_NA_VALUES = ("", "NA", "NaN", "nan", "?", "null", "N/A", "None")
MAX_ONE_HOT_LEVELS = 10
KINDS = ("numeric", "one-hot", "ordinal")


class ColumnEncoding:
    """How each input column becomes one or more numeric feature columns.

    The object the command line fits on a data file and saves with the
    model; get it back with :meth:`from_model_file`.

    Parameters
    ----------
    columns : list of dict
        One dict per input column: ``name``, ``kind`` ("numeric", "one-hot"
        or "ordinal") and, for the last two, ``levels`` (sorted list of str).
    na_values : sequence of str, default=DEFAULT_NA_VALUES
        Cell texts read as missing values (case-insensitive; the empty cell
        always is).

    Attributes
    ----------
    input_names : list of str
        The columns the encoding reads, in order.
    feature_names : list of str
        The encoded columns, in order (``column=level`` for one-hot levels);
        the ``feature_names_in_`` of a forest fitted by the command line.

    Examples
    --------
    >>> import pandas as pd
    >>> from aucforest import ColumnEncoding
    >>> encoding = ColumnEncoding([
    ...     {"name": "age", "kind": "numeric"},
    ...     {"name": "colour", "kind": "one-hot", "levels": ["blue", "red"]}])
    >>> encoding.feature_names
    ['age', 'colour=blue', 'colour=red']
    >>> encoding.transform(pd.DataFrame({"age": ["31", "?"], "colour": ["red", "blue"]}))
        age  colour=blue  colour=red
    0  31.0          0.0         1.0
    1   NaN          1.0         0.0
    """

    def __init__(self, columns, na_values=DEFAULT_NA_VALUES):
        self.columns = columns
        self.na_values = tuple(na_values)

    @classmethod
    def fit(cls, table, names, max_one_hot=MAX_ONE_HOT_LEVELS, allow_missing=False,
            na_values=DEFAULT_NA_VALUES):
        """Choose the encoding of the columns ``names`` of a table read from a file.

        A column whose cells all parse as numbers (missing values aside) is
        numeric; a text column is one-hot encoded up to ``max_one_hot``
        levels and ordinal (levels in sorted order) beyond.

        Parameters
        ----------
        table : aucforest._table.Table
            The table as the command line reads it (text cells).
        names : list of str
            The feature columns, in order.
        max_one_hot : int, default=10
            Most levels a text column may have to be one-hot encoded.
        allow_missing : bool, default=False
            Accept missing cells (``na_values``); False refuses them with a
            ValueError naming the column and row.
        na_values : tuple of str
            Cells that mark a missing value.

        Returns
        -------
        ColumnEncoding
            The encoding of the columns.
        """
        columns = []
        for name in names:
            values = table.column(name)
            numbers = numeric_values(values, name, table.path, allow_missing, na_values)
            if numbers is not None:
                check_float32_range(numbers, name, table.path)
                columns.append({"name": name, "kind": "numeric"})
                continue
            text, missing = _checked_text(values, name, table.path, allow_missing, na_values)
            levels = np.unique(text[~missing]).tolist()
            if not levels:
                raise ValueError(f"column {quote(name)} of {table.path} has no values")
            kind = "one-hot" if len(levels) <= max_one_hot else "ordinal"
            _warn_mostly_numeric(text[~missing], name, table.path, kind, len(levels))
            columns.append({"name": name, "kind": kind, "levels": levels})
        return cls(columns, na_values)

    @property
    def input_names(self):
        """Names of the input columns, in order."""
        return [column["name"] for column in self.columns]

    @property
    def feature_names(self):
        """Names of the encoded columns, in order."""
        names = []
        for column in self.columns:
            if column["kind"] == "one-hot":
                names.extend(f"{column['name']}={level}" for level in column["levels"])
            else:
                names.append(column["name"])
        return names

    @property
    def feature_groups(self):
        """Each input column's encoded columns: ``{name: [indices into
        feature_names]}`` (one index, or one per level when one-hot); the
        ``groups`` of `aucforest.inspection.oob_importance` per input column."""
        groups, start = {}, 0
        for column in self.columns:
            width = len(column["levels"]) if column["kind"] == "one-hot" else 1
            groups[column["name"]] = list(range(start, start + width))
            start += width
        return groups

    def summary(self):
        """Describe the encoding in one line.

        Returns
        -------
        str
            For example "13 columns: 12 numeric, 1 one-hot (3 levels)".
        """
        counts = {kind: [c for c in self.columns if c["kind"] == kind] for kind in KINDS}
        parts = [f"{len(counts['numeric'])} numeric"]
        for kind in ("one-hot", "ordinal"):
            if counts[kind]:
                levels = sum(len(c["levels"]) for c in counts[kind])
                parts.append(f"{len(counts[kind])} {kind} ({levels} levels)")
        noun = "column" if len(self.columns) == 1 else "columns"
        return f"{len(self.columns)} {noun}: " + ", ".join(parts)

    def transform(self, data, allow_missing=True):
        """Encode ``data`` as the command line does.

        Parameters
        ----------
        data : pandas.DataFrame, dict of str to array-like, or Table
            Must hold every column of :attr:`input_names` (others are
            ignored). Text cells are parsed as in a CSV file; numeric
            columns may also arrive as numbers (NaN or None when missing).
        allow_missing : bool, default=True
            Return NaN for missing values (the forest handles them natively);
            False refuses them with a ValueError.

        Returns
        -------
        encoded : ndarray of shape (n_rows, len(feature_names)) or DataFrame
            Float64 values; a pandas DataFrame with :attr:`feature_names` as columns
            (and the index of ``data``) when ``data`` is a DataFrame, so that
            a forest with ``feature_names_in_`` predicts without a warning.

        Raises
        ------
        ValueError
            If a column is absent, a numeric column holds text or a value
            beyond float32's range (the message names the column and row),
            or a value is missing with ``allow_missing=False``.
        """
        table = as_table(data)
        absent = [name for name in self.input_names if name not in table.columns]
        if absent:
            raise ValueError(f"column {absent[0]!r}, which the model uses, is not in "
                             f"{table.path}")
        blocks = [self._encode_column(column, table, allow_missing) for column in self.columns]
        matrix = np.column_stack(blocks).astype(np.float64)
        if _is_pandas_frame(data):
            return type(data)(matrix, columns=self.feature_names, index=data.index)
        return matrix

    def _encode_column(self, column, table, allow_missing):
        name, kind = column["name"], column["kind"]
        values = table.column(name)
        if kind == "numeric":
            numbers = numeric_values(values, name, table.path, allow_missing, self.na_values)
            if numbers is None:
                raise ValueError(f"column {quote(name)} of {table.path} must be numeric, as in "
                                 "training, but holds text: "
                                 f"{_non_numbers(values, self.na_values)}")
            check_float32_range(numbers, name, table.path)
            return numbers[:, None]
        text, missing = _checked_text(values, name, table.path, allow_missing, self.na_values)
        _warn_unknown_levels(text[~missing], column["levels"], name, kind)
        encoded = _encoder(kind, column["levels"]).transform(np.where(missing, "", text)[:, None])
        encoded[missing] = np.nan
        return encoded

    def to_dict(self):
        """Describe the encoding as plain data (what a model file stores).

        Returns
        -------
        dict
            ``{"columns": [...], "na_values": [...]}``, JSON-ready; `from_dict`
            reads it back.
        """
        return {"columns": self.columns, "na_values": list(self.na_values)}

    @classmethod
    def from_dict(cls, data):
        """Rebuild the encoding stored by :meth:`to_dict`.

        Parameters
        ----------
        data : dict
            What :meth:`to_dict` returned (as read back from a model file).

        Returns
        -------
        ColumnEncoding
            The encoding it describes.

        Raises
        ------
        ValueError
            If ``data`` is malformed.
        """
        columns = data.get("columns") if isinstance(data, dict) else None
        if not isinstance(columns, list) or not columns:
            raise ValueError("the model file's feature encoding is malformed")
        for column in columns:
            _check_column_spec(column)
        na_values = data.get("na_values", DEFAULT_NA_VALUES)
        if not isinstance(na_values, (list, tuple)) or not all(isinstance(v, str)
                                                               for v in na_values):
            raise ValueError("the model file's missing-value markers are malformed")
        return cls(columns, na_values)

    @classmethod
    def from_model_file(cls, path):
        """Read the encoding saved with a model by ``aucforest fit``.

        Parameters
        ----------
        path : str or os.PathLike
            The model file.

        Returns
        -------
        ColumnEncoding
            The encoding the command line fitted the model's columns with.

        Raises
        ------
        ValueError
            If the model file holds no encoding (a model saved from Python).
        """
        from .io import read_model

        saved = read_model(path)
        if "encoding" not in saved.extra:
            raise ValueError(f"{path} holds no column encoding: it was not fitted by the "
                             "aucforest command line")
        return cls.from_dict(saved.extra["encoding"])

    def __repr__(self):
        return f"ColumnEncoding({self.summary()})"


def as_table(data):
    """A :class:`aucforest._table.Table` view of a DataFrame or a dict of columns."""
    from ._table import Table

    if isinstance(data, Table):
        return data
    if _is_pandas_frame(data):
        columns = {str(name): _column_array(data[name]) for name in data.columns}
        return Table("the DataFrame", columns, len(data))
    if isinstance(data, dict):
        columns = {str(name): _column_array(values) for name, values in data.items()}
        lengths = {len(values) for values in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"the columns have different lengths: {sorted(lengths)}")
        return Table("the data", columns, lengths.pop() if lengths else 0)
    raise TypeError(f"expected a pandas DataFrame or a dict of columns, got {type(data).__name__}")


def _is_pandas_frame(data):
    return type(data).__module__.startswith("pandas") and hasattr(data, "columns")


def _column_array(values):
    """A column as a Table holds it: integers exact (int64 or uint64), other
    numbers float64 (NaN where missing), else an object array of str ("" where
    missing)."""
    array = np.asarray(getattr(values, "to_numpy", lambda: values)())
    if array.dtype.kind in "iu":
        return array.astype(np.uint64 if array.dtype.kind == "u" and array.size
                            and array.max() > np.iinfo(np.int64).max else np.int64)
    if array.dtype.kind in "bf":
        return array.astype(np.float64)
    return text_array("" if _is_missing_object(v) else clean_cell(str(v)) for v in array.ravel())


def _is_missing_object(value):
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pandas.NA raises in bool()
    except TypeError:
        return True


def missing_mask(values, na_values):
    """Where the cells of a text column are missing-value markers (any case)."""
    markers = {marker.lower() for marker in na_values} | {""}
    longest = max(map(len, markers))
    return np.fromiter((len(text) <= longest and text.lower() in markers for text in values),
                       dtype=bool, count=len(values))


def _check_column_spec(column):
    ok = (isinstance(column, dict) and isinstance(column.get("name"), str)
          and column.get("kind") in KINDS)
    if ok and column["kind"] != "numeric":
        levels = column.get("levels")
        ok = (isinstance(levels, list) and all(isinstance(v, str) for v in levels)
              and levels == sorted(set(levels)))
    if not ok:
        raise ValueError(f"the model file's feature encoding is malformed near {column!r:.80}")


def numeric_values(values, name, path, allow_missing=False, na_values=DEFAULT_NA_VALUES):
    """float64 values of a numeric column (NaN where missing), or None when
    the column is text.

    Raises ValueError when a numeric column has infinite values, or missing
    ones unless ``allow_missing`` (naming the column and the first row).
    """
    if values.dtype.kind == "f":
        numbers = values
    elif values.dtype.kind in "iu":
        numbers = values.astype(np.float64)
    else:
        missing = missing_mask(values, na_values)
        if missing.all():
            raise ValueError(f"column {quote(name)} of {path} has no values")
        try:
            numbers = np.where(missing, "nan", values).astype(np.float64)
        except ValueError:
            return None
    if not allow_missing:
        _refuse_missing(np.isnan(numbers), name, path)
    infinite = np.isinf(numbers)
    if infinite.any():
        raise ValueError(f"column {quote(name)} of {path} has {int(infinite.sum())} infinite "
                         f"values (first in data row {int(np.flatnonzero(infinite)[0]) + 1})")
    return numbers


FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_float32_range(numbers, name, path):
    """ValueError naming the column and the first row of a value that float32,
    in which the forest computes, cannot hold (it would become infinite)."""
    with np.errstate(over="ignore"):
        beyond = np.isinf(numbers.astype(np.float32)) & np.isfinite(numbers)
    if beyond.any():
        row = int(np.flatnonzero(beyond)[0])
        raise ValueError(
            f"column {quote(name)} of {path} holds {numbers[row]:.6g} in data row {row + 1}"
            + (f" (and {int(beyond.sum()) - 1} more)" if beyond.sum() > 1 else "")
            + f", beyond the range of float32 (magnitudes up to {FLOAT32_MAX:.6g}) in which "
            "the forest computes: rescale the column (e.g. to other units or its logarithm)")


def is_number(text):
    """Whether ``text`` parses as a float."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _non_numbers(values, na_values, limit=5):
    """E.g. "'?x' (2 times), 'abc'": the distinct cells that are neither
    numbers nor missing-value markers."""
    present = values[~missing_mask(values, na_values)]
    texts, counts = np.unique(present, return_counts=True)
    bad = [(t, c) for t, c in zip(texts.tolist(), counts.tolist()) if not is_number(t)]
    bad.sort(key=lambda item: -item[1])
    shown = ", ".join(quote(t) + (f" ({c} times)" if c > 1 else "") for t, c in bad[:limit])
    return shown + (f", ... ({len(bad)} distinct)" if len(bad) > limit else "")


def _warn_mostly_numeric(text, name, path, kind, n_levels):
    """Warn when most values of a column read as text are numbers."""
    texts, counts = np.unique(text, return_counts=True)
    numbers = sum(c for t, c in zip(texts.tolist(), counts.tolist()) if is_number(t))
    if numbers * 2 > text.size:
        warnings.warn(
            f"column {quote(name)} of {path} is read as text ({kind}, {n_levels} levels) although "
            f"{numbers} of its {text.size} values are numbers; the others are "
            f"{_non_numbers(text, ())}. If they mark missing values, list them with "
            "--na-values (or fix the file)", UserWarning, stacklevel=3)


def _checked_text(values, name, path, allow_missing, na_values=DEFAULT_NA_VALUES):
    """The column as text, and where it is missing."""
    if values.dtype.kind == "f":  # a numeric Parquet column used where text is expected
        missing = np.isnan(values)
        text = text_array(_number_text(v) if not m else "" for v, m in zip(values, missing))
    elif values.dtype.kind in "iu":
        missing = np.zeros(values.shape, dtype=bool)
        text = text_array(str(v) for v in values.tolist())
    else:
        missing, text = missing_mask(values, na_values), values
    if not allow_missing:
        _refuse_missing(missing, name, path)
    return text, missing


def _refuse_missing(missing, name, path):
    if missing.any():
        first = int(np.flatnonzero(missing)[0]) + 1
        raise ValueError(
            f"column {quote(name)} of {path} has {int(missing.sum())} missing values (first in "
            f"data row {first}) and this forest does not accept missing values: impute or drop "
            "them first")


def _encoder(kind, levels):
    categories = [np.array(levels, dtype=object)]
    if kind == "one-hot":
        encoder = OneHotEncoder(categories=categories, handle_unknown="ignore",
                                sparse_output=False, dtype=np.float64)
    else:
        encoder = OrdinalEncoder(categories=categories, handle_unknown="use_encoded_value",
                                 unknown_value=-1, dtype=np.float64)
    return encoder.fit(categories[0][:, None])


def _warn_unknown_levels(text, levels, name, kind):
    unknown = np.setdiff1d(np.unique(text), levels)
    if unknown.size:
        meaning = "all-zero indicators" if kind == "one-hot" else "-1"
        shown = ", ".join(quote(v) for v in unknown[:5])
        warnings.warn(f"column {quote(name)} has levels not seen in training ({shown}); "
                      f"encoded as {meaning}", UserWarning, stacklevel=4)


def parse_labels(values, name, path, like=None, na_values=DEFAULT_NA_VALUES):
    """Class labels of the target column.

    Integers (int64, exact) when every label is an integer, text otherwise;
    with ``like`` (the classes of a fitted model), the kind of ``like``.

    Raises ValueError on missing labels, or labels that cannot take the
    kind of ``like`` (naming the first row).
    """
    if values.dtype.kind in "iu":  # exact integers (Parquet)
        if like is None or np.asarray(like).dtype.kind in "iu":
            return _int64_labels(values, name, path)
        values = text_array(str(v) for v in values.tolist())
    if values.dtype.kind == "f":
        missing = np.isnan(values)
        text = text_array(_number_text(v) for v in values[~missing])
    else:
        missing = missing_mask(values, na_values)
        text = values
    if missing.any():
        raise ValueError(f"target column {quote(name)} of {path} has {int(missing.sum())} missing "
                         f"labels (first in data row {int(np.flatnonzero(missing)[0]) + 1}); "
                         "drop those rows first")
    want_integers = like is None or np.asarray(like).dtype.kind in "iu"
    if want_integers:
        try:
            return text.astype(np.int64)
        except (ValueError, OverflowError):
            if like is not None:
                row = next(i for i, t in enumerate(text.tolist()) if not _is_int64(t))
                raise ValueError(f"target column {quote(name)} of {path} must hold integer labels "
                                 f"like the model's classes; data row {row + 1} holds "
                                 f"{quote(text[row])}") from None
    if like is not None and np.asarray(like).dtype.kind not in "OU":
        raise ValueError(f"the model's class labels have dtype {np.asarray(like).dtype}, which "
                         "the command line cannot read from a data file")
    return text


def _int64_labels(values, name, path):
    """Integer labels as int64, refusing those above 2**63 - 1 (a model file stores int64)."""
    if values.dtype.kind == "u" and values.size and values.max() > np.iinfo(np.int64).max:
        row = int(np.flatnonzero(values > np.iinfo(np.int64).max)[0])
        raise ValueError(f"target column {quote(name)} of {path} holds the label "
                         f"{int(values[row])} in data row {row + 1}, above 2**63 - 1, the "
                         "largest integer label a model file stores")
    return values.astype(np.int64)


def _is_int64(text):
    try:
        return np.iinfo(np.int64).min <= int(text) <= np.iinfo(np.int64).max
    except ValueError:
        return False


def _number_text(value):
    return str(int(value)) if float(value).is_integer() else repr(float(value))
