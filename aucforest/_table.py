"""Data files for the command line: CSV with the standard library, Parquet with pyarrow.

pandas is not needed. A CSV file has a header row; its cells are read as
text (``.tsv``/``.tab`` files are tab-separated, all others comma-separated
unless a separator is given),
and :mod:`aucforest._encoding` decides which columns are numbers. A Parquet
file (``.parquet``/``.pq``) is read with pyarrow when it is installed; its
numeric columns arrive as numbers, its other columns as text.
"""
import csv
import os
from typing import NamedTuple

import numpy as np

PARQUET_SUFFIXES = (".parquet", ".pq")
TAB_SUFFIXES = (".tsv", ".tab")
LIKELY_SEPARATORS = {";": "semicolon", "\t": "tab", "|": "pipe", ",": "comma"}


class Table(NamedTuple):
    """Columns of a data file.

    Attributes
    ----------
    path : str
        Where the data came from (for messages).
    columns : dict of str to ndarray
        One 1-d array per column, in file order: float64 for numeric
        Parquet columns (NaN where missing), unicode text otherwise ("" where
        missing).
    n_rows : int
    """

    path: str
    columns: dict
    n_rows: int

    def column(self, name):
        """The column called ``name``; ValueError naming the columns if absent."""
        if name not in self.columns:
            raise ValueError(f"column {name!r} not found in {self.path}; its columns are "
                             f"{_preview(list(self.columns))}")
        return self.columns[name]


def read_table(path, sep=None):
    """Read a CSV (or TSV) file, or a Parquet file when pyarrow is installed.

    Parameters
    ----------
    path : str or os.PathLike
    sep : str, default=None
        Field separator of a text file (one character; ``"\\t"`` for tab);
        default tab for ``.tsv``/``.tab`` files, comma otherwise.

    Returns
    -------
    Table

    Raises
    ------
    OSError
        If the file cannot be opened.
    ValueError
        If it is empty, has no data rows, repeats a column name, has rows of
        the wrong length, cannot be decoded, or its header reads as one
        column that contains another likely separator.
    ImportError
        For a Parquet file without pyarrow.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such data file: {path}")
    if path.lower().endswith(PARQUET_SUFFIXES):
        table = _read_parquet(path)
    else:
        table = _read_csv(path, _delimiter(path, sep))
    if table.n_rows == 0:
        raise ValueError(f"{path} has a header but no data rows")
    return table


def _read_csv(path, delimiter):
    try:
        with open(path, newline="", encoding="utf-8-sig") as stream:
            rows = list(csv.reader(stream, delimiter=delimiter))
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text ({error.reason} at byte {error.start})") \
            from None
    except csv.Error as error:
        raise ValueError(f"{path} is not a valid CSV file: {error}") from None
    rows = [row for row in rows if row]  # blank lines
    if not rows:
        raise ValueError(f"{path} is empty")
    header = [name.strip() for name in rows[0]]
    _check_header(header, path)
    _check_separator(header, delimiter, path)
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ValueError(f"{path}: row {line} has {len(row)} fields, the header has "
                             f"{len(header)}")
    cells = np.array(rows[1:], dtype=str).reshape(len(rows) - 1, len(header))
    cells = np.char.strip(cells)
    return Table(path, {name: cells[:, j] for j, name in enumerate(header)}, len(rows) - 1)


def _delimiter(path, sep):
    if sep is None:
        return "\t" if path.lower().endswith(TAB_SUFFIXES) else ","
    sep = {"\\t": "\t", "tab": "\t"}.get(sep, sep)
    if len(sep) != 1 or sep in "\"\r\n":
        raise ValueError(f"the separator must be one character (or '\\t' for tab), got {sep!r}")
    return sep


def _check_separator(header, delimiter, path):
    """ValueError when a one-column header holds another common separator."""
    if len(header) != 1:
        return
    for candidate, name in LIKELY_SEPARATORS.items():
        if candidate != delimiter and candidate in header[0]:
            option = "'\\t'" if candidate == "\t" else repr(candidate)
            raise ValueError(f"{path}: the header reads as one column, {_shorten(header[0])!r}; "
                             f"the file looks {name}-separated: try --sep {option}")


def _shorten(text, limit=60):
    return text if len(text) <= limit else text[:limit] + "..."


def _check_header(header, path):
    if any(name == "" for name in header):
        raise ValueError(f"{path}: the header has an empty column name")
    seen = set()
    for name in header:
        if name in seen:
            raise ValueError(f"{path}: column name {name!r} appears twice in the header")
        seen.add(name)


def _read_parquet(path):
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        raise ImportError(f"reading {path} needs pyarrow, an optional dependency: "
                          "pip install pyarrow (or convert the file to CSV)") from None
    try:
        arrow_table = parquet.read_table(path)
    except Exception as error:  # pyarrow raises its own error classes
        raise ValueError(f"{path} is not a readable Parquet file: {error}") from None
    _check_header(list(arrow_table.column_names), path)
    columns = {name: _parquet_column(arrow_table.column(name))
               for name in arrow_table.column_names}
    return Table(path, columns, arrow_table.num_rows)


def _parquet_column(column):
    import pyarrow as pa

    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        values = column.to_numpy(zero_copy_only=False)
        return np.asarray(values, dtype=np.float64)  # nulls arrive as NaN
    values = column.to_pylist()
    return np.array(["" if value is None else str(value) for value in values], dtype=str)


def _preview(names, limit=12):
    shown = ", ".join(repr(name) for name in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")
