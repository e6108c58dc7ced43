"""Turning the columns of a data file (or a DataFrame) into the numeric matrix a forest needs.

:class:`ColumnEncoding` is public and a scikit-learn transformer: a model
fitted by the command line stores its encoding, and
``ColumnEncoding.from_model_file(path)`` gives it back so that Python code
can encode a DataFrame exactly as the command line does, alone or as the
first step of a :class:`~sklearn.pipeline.Pipeline`.

Rules (documented in docs/user_guide.md, "Command line"):

* Missing-value markers: by default the empty cell and ``NA``, ``NaN``,
  ``nan``, ``?``, ``null``, ``N/A``, ``None`` (compared without regard to
  case); ``na_values`` replaces this list (the empty cell always counts as
  missing).
* A column is **numeric** when every cell is a number or a missing-value
  marker and at least one cell is a number. Infinite values are refused.
* Any other column is **categorical**; its levels are its distinct texts,
  sorted, missing cells left out. By default (``max_one_hot=None``) it
  becomes one column holding each level's position in the sorted list, which
  a forest given ``categorical_features`` splits natively (levels grouped by
  their class composition, never by alphabetical order); a column with more
  than ``MAX_CATEGORIES`` (255) levels cannot be, and is encoded as ordinal
  codes with a warning. With ``max_one_hot`` set (the command line's
  ``--max-one-hot``), the encoding of earlier versions: up to that many
  levels one 0/1 column per level, named ``column=level`` (one-hot), beyond
  it the sorted position as a number (ordinal, split as if ordered); two
  encoded columns of one name (a column ``a=b`` and level ``b`` of one-hot
  column ``a``) are refused, naming both. A column
  read as text although most of its values are numbers gets a warning naming
  the other values: they are usually an unlisted missing-value marker.
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
* At prediction, a level not seen in training becomes a missing value
  (categorical), all zeros (one-hot) or -1, below every known level
  (ordinal), with a warning naming the column and how many cells.
* A model saved from Python has no stored encoding: `ColumnEncoding.from_forest`
  describes its columns as its ``predict`` reads them, a ``category``
  column as "categorical" when its levels are sorted text (the rule above),
  else as "category": the position of the cell's value in the model's
  ``categories_[j]``, in that order (str, int or float levels, matched by
  value: a cell equal to a text level, or a number equal to a numeric one;
  missing when it is none).
* Class labels: integers (int64, exact) when every label is an integer, text
  otherwise.

Messages quote at most the first 40 characters of a cell.

The encoding is plain data (:meth:`ColumnEncoding.to_dict`), stored in the
model file so that ``predict`` and ``evaluate`` apply the same one.
"""
import warnings

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

from ._categories import MAX_CATEGORIES, checked_categories, storable_categories
from ._compat import validate_data
from ._table import clean_cell, quote, text_array

DEFAULT_NA_VALUES = ("", "NA", "NaN", "nan", "?", "null", "N/A", "None")
MAX_ONE_HOT_LEVELS = 10
KINDS = ("numeric", "categorical", "one-hot", "ordinal", "category")
# kinds whose encoded column holds a level's code, split natively by the forest
_CODE_KINDS = ("categorical", "category")


class ColumnEncoding(TransformerMixin, BaseEstimator):
    """How each input column becomes one or more numeric feature columns.

    A scikit-learn transformer (``fit``, ``transform``,
    ``get_feature_names_out``) for tables of text cells as a CSV file holds
    them (or of numbers); the object the command line fits on a data file and
    saves with the model (get it back with :meth:`from_model_file`).

    Parameters
    ----------
    columns : list of dict or None, default=None
        A fixed encoding: one dict per input column, ``name``, ``kind``
        ("numeric", "categorical", "one-hot", "ordinal" or "category") and,
        for the last four, ``levels`` (sorted list of str; for "category",
        the levels of a model's ``category`` column in the order of their
        codes, str, int or float, matched by value: see
        :meth:`from_forest`); ``fit`` then only checks the input. None:
        ``fit`` chooses each column's kind from its cells.
    na_values : sequence of str, default=DEFAULT_NA_VALUES
        Cell texts read as missing values (case-insensitive; the empty cell
        always is).
    max_one_hot : int or None, default=None
        None: a text column becomes its levels' codes ("categorical", to be
        split natively: pass `categorical_mask` as the forest's
        ``categorical_features``, or transform a DataFrame, whose categorical
        columns come out with pandas' ``category`` dtype). An int: one-hot
        up to that many levels, ordinal codes beyond (the encoding of
        earlier versions).
    allow_missing : bool, default=True
        Accept missing cells (NaN in the output); False refuses them with a
        ValueError naming the column and row.

    Attributes
    ----------
    columns_ : list of dict
        The encoding fitted (``columns`` when given).
    n_features_in_ : int
        Number of columns seen by ``fit``.
    feature_names_in_ : ndarray of str
        Their names, when X has string column names.
    input_names : list of str
        The columns the encoding reads, in order.
    feature_names : list of str
        The encoded columns, in order (``column=level`` for one-hot levels);
        the ``feature_names_in_`` of a forest fitted by the command line.
    categorical_mask : ndarray of bool
        Which encoded columns hold the codes of a categorical column.

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
    >>> ColumnEncoding().fit(pd.DataFrame({"age": ["31", "?"], "city": ["Oslo", "Bergen"]}))
    ColumnEncoding(2 columns: 1 numeric, 1 categorical (2 levels))
    """

    def __init__(self, columns=None, na_values=DEFAULT_NA_VALUES, *, max_one_hot=None,
                 allow_missing=True):
        self.columns = columns
        self.na_values = na_values
        self.max_one_hot = max_one_hot
        self.allow_missing = allow_missing

    def fit(self, X, y=None):
        """Choose the encoding of each column of X (or check X against ``columns``).

        Parameters
        ----------
        X : DataFrame, dict of columns, or array-like of shape (n_samples, n_features)
            The table; columns of an array are named ``x0, x1, ...``.
        y : None
            Ignored.

        Returns
        -------
        self : ColumnEncoding
            The fitted encoding.
        """
        table, names = self._table(X, reset=True)
        if self.columns is not None:
            columns = _checked_spec(self.columns)
            absent = [c["name"] for c in columns if c["name"] not in table.columns]
            if absent:
                raise ValueError(f"column {absent[0]!r}, which the encoding uses, is not in "
                                 f"{table.path}")
        else:
            columns = learn_columns(table, names, self.max_one_hot, self.allow_missing,
                                    tuple(self.na_values))
        self.columns_ = columns
        return self

    @classmethod
    def from_table(cls, table, names, max_one_hot=None, allow_missing=False,
                   na_values=DEFAULT_NA_VALUES):
        """Fit the encoding of the columns ``names`` of a table read from a file.

        Parameters
        ----------
        table : aucforest._table.Table
            The table as the command line reads it (text cells).
        names : list of str
            The feature columns, in order.
        max_one_hot : int or None, default=None
            As the parameter of the class.
        allow_missing : bool, default=False
            Accept missing cells (``na_values``).
        na_values : tuple of str
            Cells that mark a missing value.

        Returns
        -------
        ColumnEncoding
            The fitted encoding of the columns.
        """
        encoding = cls(na_values=tuple(na_values), max_one_hot=max_one_hot,
                       allow_missing=allow_missing)
        encoding.columns_ = learn_columns(table, names, max_one_hot, allow_missing,
                                          tuple(na_values))
        encoding.n_features_in_ = len(names)
        return encoding

    def __sklearn_is_fitted__(self):
        return self.columns is not None or hasattr(self, "columns_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True  # text cells, as a CSV file holds them
        return tags

    @property
    def _spec(self):
        if hasattr(self, "columns_"):
            return self.columns_
        if self.columns is not None:
            return _checked_spec(self.columns)
        raise NotFittedError("This ColumnEncoding is not fitted yet: call fit first, or give "
                             "columns")

    @property
    def input_names(self):
        """Names of the input columns, in order."""
        return [column["name"] for column in self._spec]

    @property
    def feature_names(self):
        """Names of the encoded columns, in order."""
        names = []
        for column in self._spec:
            if column["kind"] == "one-hot":
                names.extend(f"{column['name']}={level}" for level in column["levels"])
            else:
                names.append(column["name"])
        return names

    @property
    def feature_groups(self):
        """Each input column's encoded columns, ``{name: [indices]}``.

        One index into :attr:`feature_names`, or one per level when one-hot:
        the ``groups`` of `aucforest.inspection.oob_importance` per input
        column."""
        groups, start = {}, 0
        for column in self._spec:
            width = len(column["levels"]) if column["kind"] == "one-hot" else 1
            groups[column["name"]] = list(range(start, start + width))
            start += width
        return groups

    @property
    def categorical_mask(self):
        """Boolean mask of the encoded columns that are categorical codes."""
        return np.array([kind in _CODE_KINDS for column in self._spec
                         for kind in [column["kind"]] * (len(column["levels"])
                                                         if column["kind"] == "one-hot" else 1)],
                        dtype=bool)

    @property
    def categories(self):
        """The levels of each categorical encoded column, None for the others.

        The ``categories_`` of a forest fitted on the encoded columns."""
        return [list(column["levels"]) if column["kind"] in _CODE_KINDS else None
                for column in self._spec
                for _ in range(len(column["levels"]) if column["kind"] == "one-hot" else 1)]

    def get_feature_names_out(self, input_features=None):
        """Get the names of the encoded columns.

        Parameters
        ----------
        input_features : None
            Ignored (the names come from the fitted encoding).

        Returns
        -------
        ndarray of str
            :attr:`feature_names`.
        """
        return np.asarray(self.feature_names, dtype=object)

    def summary(self):
        """Describe the encoding in one line.

        Returns
        -------
        str
            For example "13 columns: 12 numeric, 1 categorical (3 levels)".
        """
        columns = self._spec
        counts = {kind: [c for c in columns if c["kind"] == kind] for kind in KINDS}
        parts = [f"{len(counts['numeric'])} numeric"]
        for kind in KINDS[1:]:
            if counts[kind]:
                levels = sum(len(c["levels"]) for c in counts[kind])
                parts.append(f"{len(counts[kind])} {kind} ({levels} levels)")
        noun = "column" if len(columns) == 1 else "columns"
        return f"{len(columns)} {noun}: " + ", ".join(parts)

    def transform(self, X, allow_missing=None):
        """Encode X as the command line does.

        Parameters
        ----------
        X : pandas.DataFrame, dict of str to array-like, Table or array-like
            Must hold every column of :attr:`input_names` (others are
            ignored); an array's columns are taken in the order of the fit.
            Text cells are parsed as in a CSV file; numeric columns may also
            arrive as numbers (NaN or None when missing).
        allow_missing : bool or None, default=None
            Return NaN for missing values; False refuses them with a
            ValueError; None: the parameter ``allow_missing``.

        Returns
        -------
        encoded : ndarray of shape (n_rows, len(feature_names)) or DataFrame
            Float64 values (a categorical column's codes, NaN where missing or
            unseen); for a DataFrame X, a DataFrame with :attr:`feature_names`
            as columns and the index of X, a categorical column as pandas
            ``category`` with the fitted levels (what a forest with
            ``categorical_features="from_dtype"`` splits natively).

        Raises
        ------
        ValueError
            If a column is absent, a numeric column holds text or a value
            beyond float32's range (the message names the column and row),
            or a value is missing with ``allow_missing=False``.
        """
        spec = self._spec
        allow_missing = self.allow_missing if allow_missing is None else allow_missing
        table, _ = self._table(X, reset=False)
        absent = [column["name"] for column in spec if column["name"] not in table.columns]
        if absent:
            raise ValueError(f"column {absent[0]!r}, which the model uses, is not in "
                             f"{table.path}")
        na_values = tuple(self.na_values)
        blocks = [_encode_column(column, table, allow_missing, na_values) for column in spec]
        matrix = np.column_stack(blocks).astype(np.float64)
        if _is_pandas_frame(X):
            return _as_frame(X, matrix, self.feature_names, self.categories)
        return matrix

    def _table(self, X, reset):
        """A Table view of X and the names of its columns (sklearn's checks
        of an array's shape and of a DataFrame's column names)."""
        from ._table import Table

        if issparse(X):
            raise TypeError("ColumnEncoding takes a table of cells, not sparse data; use "
                            "X.toarray()")
        if isinstance(X, (Table, dict)):
            table = as_table(X)
            return table, list(table.columns)
        if _is_pandas_frame(X):
            if self.columns is None and reset:
                validate_data(self, X, skip_check_array=True, reset=True)
            table = as_table(X)
            return table, list(table.columns)
        array = validate_data(self, X, dtype=None, ensure_all_finite=False, reset=reset)
        if hasattr(self, "feature_names_in_"):
            names = [str(name) for name in self.feature_names_in_]
        elif reset or self.columns is None:
            names = [f"x{j}" for j in range(array.shape[1])]
        else:
            names = [column["name"] for column in self._spec][:array.shape[1]]
        columns = {name: _column_array(array[:, j]) for j, name in enumerate(names)}
        return Table("X", columns, array.shape[0]), names

    def to_dict(self):
        """Describe the encoding as plain data (what a model file stores).

        Returns
        -------
        dict
            ``{"columns": [...], "na_values": [...]}``, JSON-ready; `from_dict`
            reads it back.
        """
        return {"columns": self._spec, "na_values": list(self.na_values)}

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
        columns = _checked_spec(columns)
        na_values = data.get("na_values", DEFAULT_NA_VALUES)
        if not isinstance(na_values, (list, tuple)) or not all(isinstance(v, str)
                                                               for v in na_values):
            raise ValueError("the model file's missing-value markers are malformed")
        return cls(columns, tuple(na_values))

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

    @classmethod
    def from_forest(cls, forest):
        """Describe a fitted forest's input columns as its ``predict`` encodes them.

        The encoding of a model saved from Python (which stores none): a
        numeric feature, also a categorical one fitted from codes in a numeric
        column, is "numeric" (the number as given); a feature fitted from a
        pandas ``category`` column is the position of its value in
        ``forest.categories_[j]``: "categorical" when those levels are sorted
        text (the command line's rule), else "category" (the levels in their
        order, str, int or float, matched by value). The columns are named
        as ``feature_names_in_``, or ``x0, x1, ...`` without names.

        Parameters
        ----------
        forest : fitted AUCForestClassifier or AUCTreeClassifier
            The model.

        Returns
        -------
        ColumnEncoding
            Its ``transform`` of a table of the forest's columns gives the
            forest's input (level codes as numbers, NaN when missing or not a
            level), which an exported model takes.

        Raises
        ------
        ValueError
            If a feature's categories are not str, int or finite float values.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from aucforest import AUCForestClassifier, ColumnEncoding
        >>> X = pd.DataFrame({"x": [0.1, 0.5, 0.9, 0.3],
        ...                   "size": pd.Categorical([3, 7, 3, 7])})
        >>> forest = AUCForestClassifier(n_estimators=2).fit(X, [0, 1, 0, 1])
        >>> ColumnEncoding.from_forest(forest).to_dict()["columns"]
        [{'name': 'x', 'kind': 'numeric'}, {'name': 'size', 'kind': 'category', 'levels': [3, 7]}]
        """
        n_features = int(forest.n_features_in_)
        names = getattr(forest, "feature_names_in_", None)
        names = ([f"x{j}" for j in range(n_features)] if names is None
                 else [str(name) for name in names])
        categories = (storable_categories(getattr(forest, "categories_", None), n_features)
                      or [None] * n_features)
        columns = []
        for name, levels in zip(names, categories):
            if levels is None:
                columns.append({"name": name, "kind": "numeric"})
                continue
            text = (bool(levels) and all(isinstance(level, str) for level in levels)
                    and levels == sorted(set(levels)))
            columns.append({"name": name, "kind": "categorical" if text else "category",
                            "levels": levels})
        return cls(columns)

    def __repr__(self, N_CHAR_MAX=700):
        try:
            return f"ColumnEncoding({self.summary()})"
        except NotFittedError:
            return super().__repr__(N_CHAR_MAX)


def learn_columns(table, names, max_one_hot, allow_missing, na_values):
    """The encoding of the columns ``names`` of ``table`` (list of column dicts)."""
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
        kind = _text_kind(len(levels), max_one_hot, name, table.path)
        _warn_mostly_numeric(text[~missing], name, table.path, kind, len(levels))
        columns.append({"name": name, "kind": kind, "levels": levels})
    _check_distinct_names(columns)
    return columns


def _check_distinct_names(columns):
    """ValueError naming both sources when two encoded columns get one name:
    a one-hot level's ``column=level`` and a column of that name (or another
    one-hot level), which a model could not tell apart by name."""
    sources = {}
    for column in columns:
        if column["kind"] == "one-hot":
            named = [(f"{column['name']}={level}",
                      f"level {quote(level)} of text column {quote(column['name'])}")
                     for level in column["levels"]]
        else:
            named = [(column["name"], f"column {quote(column['name'])}")]
        for name, source in named:
            if name in sources:
                raise ValueError(
                    f"two encoded columns would be named {quote(name)}: {sources[name]} and "
                    f"{source} (one-hot columns are named column=level); rename a column, or "
                    "encode text columns as categorical (without --max-one-hot; "
                    "max_one_hot=None)")
            sources[name] = source


def _text_kind(n_levels, max_one_hot, name, path):
    if max_one_hot is not None:
        return "one-hot" if n_levels <= max_one_hot else "ordinal"
    if n_levels > MAX_CATEGORIES:
        warnings.warn(f"column {quote(name)} of {path} has {n_levels} levels, more than the "
                      f"{MAX_CATEGORIES} a categorical feature may have; it is encoded as the "
                      "levels' positions in sorted order (ordinal), split as if ordered",
                      UserWarning, stacklevel=4)
        return "ordinal"
    return "categorical"


def _as_frame(X, matrix, names, categories):
    """The encoded matrix as a DataFrame like X (categorical codes as ``category``)."""
    import pandas

    frame = pandas.DataFrame(matrix, columns=names, index=X.index)
    for name, levels in zip(names, categories):
        if levels is not None:
            codes = frame[name].to_numpy()
            codes = np.where(np.isnan(codes), -1, codes).astype(np.int64)
            frame[name] = pandas.Categorical.from_codes(codes, categories=levels)
    return frame


def _checked_spec(columns):
    if not isinstance(columns, (list, tuple)) or not columns:
        raise ValueError(f"columns must be a non-empty list of column dicts, got {columns!r:.80}")
    for column in columns:
        _check_column_spec(column)
    _check_distinct_names(columns)
    return [dict(column) for column in columns]


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
    if ok and column["kind"] == "category":  # a model's categories_ entry, in code order
        try:
            checked_categories([column.get("levels")], 1)
        except ValueError:
            ok = False
    elif ok and column["kind"] != "numeric":
        levels = column.get("levels")
        ok = (isinstance(levels, list) and all(isinstance(v, str) for v in levels)
              and levels == sorted(set(levels))
              and (column["kind"] != "categorical" or len(levels) <= MAX_CATEGORIES))
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


def _encode_column(column, table, allow_missing, na_values):
    """The encoded columns of one input column, shape (n_rows, width)."""
    name, kind = column["name"], column["kind"]
    values = table.column(name)
    if kind == "numeric":
        numbers = numeric_values(values, name, table.path, allow_missing, na_values)
        if numbers is None:
            raise ValueError(f"column {quote(name)} of {table.path} must be numeric, as in "
                             f"training, but holds text: {_non_numbers(values, na_values)}")
        check_float32_range(numbers, name, table.path)
        return numbers[:, None]
    if kind == "category":
        return codes_by_value(values, column["levels"], name, table.path, allow_missing,
                              na_values)[:, None]
    text, missing = _checked_text(values, name, table.path, allow_missing, na_values)
    _warn_unknown_levels(text[~missing], column["levels"], name, kind)
    encoded = _encoder(kind, column["levels"]).transform(np.where(missing, "", text)[:, None])
    encoded[missing] = np.nan
    return encoded


def _encoder(kind, levels):
    categories = [np.array(levels, dtype=object)]
    if kind == "one-hot":
        encoder = OneHotEncoder(categories=categories, handle_unknown="ignore",
                                sparse_output=False, dtype=np.float64)
    else:
        unknown = np.nan if kind == "categorical" else -1
        encoder = OrdinalEncoder(categories=categories, handle_unknown="use_encoded_value",
                                 unknown_value=unknown, dtype=np.float64)
    return encoder.fit(categories[0][:, None])


def _warn_unknown_levels(text, levels, name, kind):
    unknown = ~np.isin(text, levels)
    if unknown.any():
        meaning = {"one-hot": "all-zero indicators", "ordinal": "-1",
                   "categorical": "missing values"}[kind]
        distinct = np.unique(text[unknown])
        shown = ", ".join(quote(v) for v in distinct[:5])
        count = int(unknown.sum())
        warnings.warn(f"column {quote(name)} has levels not seen in training ({shown}"
                      f"{', ...' if distinct.size > 5 else ''}) in {count} "
                      f"{'row' if count == 1 else 'rows'}; "
                      f"encoded as {meaning}", UserWarning, stacklevel=4)


def codes_by_value(values, levels, name, path, allow_missing=True, na_values=DEFAULT_NA_VALUES):
    """Codes of a column's cells in ``levels``, matched by value.

    For a model saved from Python with a pandas ``category`` column:
    ``levels`` is its entry of ``categories_`` (str, int or float values, in
    the model's order) and a cell's code is the position of its value there,
    as Python's predict maps a category column (`aucforest._categories`):
    a cell equal to a str level as text, else a number equal to a numeric
    level ("3" and "3.0" are the level 3). NaN where missing, and where the
    value is not a level, with a warning naming the column and the values.
    """
    text, missing = _checked_text(values, name, path, allow_missing, na_values)
    by_text = {level: code for code, level in enumerate(levels) if isinstance(level, str)}
    by_number = {level: code for code, level in enumerate(levels) if not isinstance(level, str)}
    cells, inverse = np.unique(text[~missing], return_inverse=True)
    found = np.array([_level_code(cell, by_text, by_number) for cell in cells.tolist()],
                     dtype=np.float64)
    codes = np.full(text.shape[0], np.nan)
    codes[~missing] = found[inverse]
    unseen = np.isnan(codes) & ~missing
    if unseen.any():
        distinct = cells[np.isnan(found)].tolist()
        shown = ", ".join(quote(v) for v in distinct[:5]) + (", ..." if len(distinct) > 5 else "")
        count = int(unseen.sum())
        warnings.warn(f"column {quote(name)} has {count} {'value' if count == 1 else 'values'} "
                      f"of categories not seen at fit ({shown}); treated as missing",
                      UserWarning, stacklevel=3)
    return codes


def _level_code(cell, by_text, by_number):
    """Code of one cell text in the levels (`codes_by_value`), NaN if none."""
    if cell in by_text:
        return by_text[cell]
    if by_number and is_number(cell):
        try:
            number = int(cell)  # exact, also above 2**53
        except ValueError:
            number = float(cell)
        return by_number.get(number, np.nan)  # 3 == 3.0: the same key
    return np.nan


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
