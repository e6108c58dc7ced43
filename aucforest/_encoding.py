"""Turning the columns of a data file into the numeric matrix a forest needs.

Rules (documented in docs/user_guide.md, "Command line"):

* A column is **numeric** when every cell is a number or a missing-value
  token (empty, ``NA``, ``NaN``, ``N/A``, ``null``, ``None``; any case) and
  at least one cell is a number. Infinite values are refused.
* Any other column is **categorical**; its levels are its distinct texts,
  sorted, empty cells being missing. Up to ``max_one_hot`` levels (10 by
  default) it becomes one 0/1 column per level, named ``column=level``
  (one-hot). With more levels it becomes one column holding the level's
  position in the sorted list (ordinal; trees can split it into groups of
  alphabetically adjacent levels).
* Missing values become NaN when the forest accepts NaN
  (``allow_missing=True``: its scikit-learn tag ``allow_nan``); otherwise
  they are refused with a message naming the column: impute or drop them.
* At prediction, a level not seen in training becomes all zeros (one-hot) or
  -1, below every known level (ordinal), with a warning.
* Class labels: integers when every label is an integer, text otherwise.

The encoding is plain data (:meth:`FeatureEncoding.to_dict`), stored in the
model file so that ``predict`` and ``evaluate`` apply the same one.
"""
import warnings

import numpy as np
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

MISSING_TOKENS = ("", "na", "nan", "n/a", "null", "none")
MAX_ONE_HOT_LEVELS = 10
KINDS = ("numeric", "one-hot", "ordinal")


class FeatureEncoding:
    """How each input column becomes one or more numeric feature columns.

    Parameters
    ----------
    columns : list of dict
        One dict per input column: ``name``, ``kind`` ("numeric", "one-hot"
        or "ordinal") and, for the last two, ``levels`` (sorted list of str).
    """

    def __init__(self, columns):
        self.columns = columns

    @classmethod
    def fit(cls, table, names, max_one_hot=MAX_ONE_HOT_LEVELS, allow_missing=False):
        """Choose the encoding of the columns ``names`` of ``table``."""
        columns = []
        for name in names:
            values = table.column(name)
            if numeric_values(values, name, table.path, allow_missing) is not None:
                columns.append({"name": name, "kind": "numeric"})
                continue
            text, missing = _checked_text(values, name, table.path, allow_missing)
            levels = np.unique(text[~missing]).tolist()
            if not levels:
                raise ValueError(f"column {name!r} of {table.path} has no values")
            kind = "one-hot" if len(levels) <= max_one_hot else "ordinal"
            columns.append({"name": name, "kind": kind, "levels": levels})
        return cls(columns)

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

    def summary(self):
        """E.g. "13 columns: 12 numeric, 1 one-hot (3 levels)"."""
        counts = {kind: [c for c in self.columns if c["kind"] == kind] for kind in KINDS}
        parts = [f"{len(counts['numeric'])} numeric"]
        for kind in ("one-hot", "ordinal"):
            if counts[kind]:
                levels = sum(len(c["levels"]) for c in counts[kind])
                parts.append(f"{len(counts[kind])} {kind} ({levels} levels)")
        noun = "column" if len(self.columns) == 1 else "columns"
        return f"{len(self.columns)} {noun}: " + ", ".join(parts)

    def transform(self, table, allow_missing=False):
        """The encoded float64 matrix (n_rows, len(feature_names)); NaN where a
        value is missing (with ``allow_missing``, else ValueError)."""
        blocks = [self._encode_column(column, table, allow_missing) for column in self.columns]
        return np.column_stack(blocks).astype(np.float64)

    def _encode_column(self, column, table, allow_missing):
        name, kind = column["name"], column["kind"]
        values = table.column(name)
        if kind == "numeric":
            numbers = numeric_values(values, name, table.path, allow_missing)
            if numbers is None:
                raise ValueError(f"column {name!r} of {table.path} must be numeric, as in "
                                 "training, but holds text")
            return numbers[:, None]
        text, missing = _checked_text(values, name, table.path, allow_missing)
        _warn_unknown_levels(text[~missing], column["levels"], name, kind)
        encoded = _encoder(kind, column["levels"]).transform(np.where(missing, "", text)[:, None])
        encoded[missing] = np.nan
        return encoded

    def to_dict(self):
        """Plain data for the model file."""
        return {"columns": self.columns}

    @classmethod
    def from_dict(cls, data):
        """The encoding stored by :meth:`to_dict`; ValueError if malformed."""
        columns = data.get("columns") if isinstance(data, dict) else None
        if not isinstance(columns, list) or not columns:
            raise ValueError("the model file's feature encoding is malformed")
        for column in columns:
            _check_column_spec(column)
        return cls(columns)


def _check_column_spec(column):
    ok = (isinstance(column, dict) and isinstance(column.get("name"), str)
          and column.get("kind") in KINDS)
    if ok and column["kind"] != "numeric":
        levels = column.get("levels")
        ok = (isinstance(levels, list) and all(isinstance(v, str) for v in levels)
              and levels == sorted(set(levels)))
    if not ok:
        raise ValueError(f"the model file's feature encoding is malformed near {column!r:.80}")


def numeric_values(values, name, path, allow_missing=False):
    """float64 values of a numeric column (NaN where missing), or None when
    the column is text.

    Raises ValueError when a numeric column has infinite values, or missing
    ones unless ``allow_missing``.
    """
    if values.dtype.kind == "f":
        numbers = values
    else:
        missing = np.isin(np.char.lower(values), MISSING_TOKENS)
        if missing.all():
            raise ValueError(f"column {name!r} of {path} has no values")
        try:
            numbers = np.where(missing, "nan", values).astype(np.float64)
        except ValueError:
            return None
    if not allow_missing:
        _refuse_missing(np.isnan(numbers), name, path)
    if np.isinf(numbers).any():
        raise ValueError(f"column {name!r} of {path} has infinite values")
    return numbers


def _checked_text(values, name, path, allow_missing):
    """The column as text, and where it is missing."""
    if values.dtype.kind == "f":  # a numeric Parquet column used where text is expected
        missing = np.isnan(values)
        text = np.array([_number_text(v) if not m else "" for v, m in zip(values, missing)],
                        dtype=str)
    else:
        missing, text = values == "", values
    if not allow_missing:
        _refuse_missing(missing, name, path)
    return text, missing


def _refuse_missing(missing, name, path):
    if missing.any():
        first = int(np.flatnonzero(missing)[0]) + 1
        raise ValueError(
            f"column {name!r} of {path} has {int(missing.sum())} missing values (first in data "
            f"row {first}) and this forest does not accept missing values: impute or drop "
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
        shown = ", ".join(repr(str(v)) for v in unknown[:5])
        warnings.warn(f"column {name!r} has levels not seen in training ({shown}); "
                      f"encoded as {meaning}", UserWarning, stacklevel=4)


def parse_labels(values, name, path, like=None):
    """Class labels of the target column.

    Integers when every label is an integer, text otherwise; with ``like``
    (the classes of a fitted model), the kind of ``like``.

    Raises ValueError on missing labels, or labels that cannot take the
    kind of ``like``.
    """
    if values.dtype.kind == "f":
        missing = np.isnan(values)
        text = np.array([_number_text(v) for v in values[~missing]], dtype=str)
    else:
        missing = np.isin(np.char.lower(values), MISSING_TOKENS)
        text = values
    if missing.any():
        raise ValueError(f"target column {name!r} of {path} has {int(missing.sum())} missing "
                         f"labels (first in data row {int(np.flatnonzero(missing)[0]) + 1}); "
                         "drop those rows first")
    want_integers = like is None or np.asarray(like).dtype.kind in "iu"
    if want_integers:
        try:
            return text.astype(np.int64)
        except (ValueError, OverflowError):
            if like is not None:
                raise ValueError(f"target column {name!r} of {path} must hold integer labels "
                                 f"like the model's classes") from None
    if like is not None and np.asarray(like).dtype.kind not in "OU":
        raise ValueError(f"the model's class labels have dtype {np.asarray(like).dtype}, which "
                         "the command line cannot read from a data file")
    return text


def _number_text(value):
    return str(int(value)) if float(value).is_integer() else repr(float(value))
