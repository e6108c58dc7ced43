"""Data files for the command line: CSV with the standard library, Parquet with pyarrow.

pandas is not needed. A CSV file has a header row; its cells are read as
text (``.tsv``/``.tab`` files are tab-separated, all others comma-separated
unless a separator is given),
and :mod:`aucforest._encoding` decides which columns are numbers. A Parquet
file (``.parquet``/``.pq``) is read with pyarrow when it is installed; its
numeric columns arrive as numbers, its other columns as text.

Integers keep their exact values: a Parquet integer column arrives as int64
(uint64 above 2**63 - 1), so identifiers and class labels above 2**53 stay
distinct (float64 would merge them); one with missing values arrives as
float64 when float64 holds every value exactly, as text otherwise. CSV cells
are text, exact by nature. Only feature columns become numbers the forest
computes with (float32; see :mod:`aucforest._encoding`).

Text is held as object arrays of Python strings, one per cell, so memory
grows with the file, not with rows times its longest cell; error messages
quote at most the first 40 characters of a cell (:func:`quote`).
"""
import codecs
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
        One 1-d array per column, in file order: int64 (or uint64) for
        Parquet integer columns without missing values, float64 for other
        numeric Parquet columns (NaN where missing), otherwise an object
        array of str, stripped of surrounding white space ("" where missing).
    n_rows : int
    """

    path: str
    columns: dict
    n_rows: int

    def column(self, name):
        """The column called ``name``; ValueError naming the columns if absent."""
        if name not in self.columns:
            raise ValueError(f"column {quote(name)} not found in {self.path}; its columns are "
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
        If it is not a regular file (a folder, FIFO or device), is empty,
        has no data rows, repeats a column name, has rows of the wrong
        length, cannot be decoded (the message names the line), or its
        header reads as one column that contains another likely separator.
    ImportError
        For a Parquet file without pyarrow.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        if os.path.exists(path):  # a folder, FIFO or device: reading it could block or not end
            raise ValueError(f"{path} is not a regular file, so not a data file")
        raise FileNotFoundError(f"no such data file: {path}")
    if path.lower().endswith(PARQUET_SUFFIXES):
        table = _read_parquet(path)
    else:
        table = _read_csv(path, _delimiter(path, sep))
    if table.n_rows == 0:
        raise ValueError(f"{path} has a header but no data rows")
    return table


def _read_csv(path, delimiter):
    """The file's columns, built one row at a time: one list of cells per column
    (no copy of the whole file as rows, no array as wide as the longest cell)."""
    header, columns, n_rows = None, None, 0
    try:
        with open(path, newline="", encoding="utf-8-sig") as stream:
            reader = csv.reader(stream, delimiter=delimiter)
            for row in reader:
                if not row:
                    continue  # blank line
                if header is None:
                    header = [clean_cell(name) for name in row]
                    _check_header(header, path)
                    _check_separator(header, delimiter, path)
                    columns = [[] for _ in header]
                    continue
                n_rows += 1
                if len(row) != len(header):
                    raise ValueError(f"{path}: row {n_rows + 1} has {len(row)} fields, the "
                                     f"header has {len(header)}")
                for cells, cell in zip(columns, row):
                    cells.append(clean_cell(cell))
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text ({_first_invalid_utf8(path)})") from None
    except csv.Error as error:
        raise ValueError(f"{path} is not a valid CSV file: {error} (line {reader.line_num})") \
            from None
    if header is None:
        raise ValueError(f"{path} is empty")
    return Table(path, {name: text_array(cells) for name, cells in zip(header, columns)},
                 n_rows)


# what clean_cell strips: str.strip()'s white space, and NUL
_PADDING = "".join(c for c in map(chr, range(0x3001)) if c.isspace()) + "\x00"


def clean_cell(text):
    """A cell as the encoders read it: without surrounding white space or NUL
    characters (padding; a name ending in NUL cannot be stored in a model file)."""
    return text.strip(_PADDING)


def text_array(texts):
    """A 1-d object array of the strings ``texts`` (each cell its own size)."""
    texts = list(texts)
    array = np.empty(len(texts), dtype=object)
    array[:] = texts
    return array


def quote(text, limit=40):
    """``repr(text)``, of its first ``limit`` characters only when longer
    (then followed by "..." and its length): cells in messages stay short."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def shown(label):
    """A label for a message: text quoted (at most 40 characters, `quote`),
    numbers as they are."""
    return quote(label) if isinstance(label, str) else repr(label)


def _first_invalid_utf8(path):
    """Where the first bytes that are not UTF-8 are: "invalid start byte at line
    3 (byte 17)"; read in chunks, only when decoding has failed."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, line = 0, 1
    with open(path, "rb") as stream:
        while True:
            chunk = stream.read(1 << 20)
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as error:
                # error.start counts from the bytes the decoder still held
                start = offset - len(decoder.getstate()[0]) + error.start
                stream.seek(0)
                line += _count_newlines(stream, start)
                return f"{error.reason} at line {line} (byte {start})"
            if not chunk:
                return "invalid UTF-8"
            offset += len(chunk)


def _count_newlines(stream, end):
    count, read = 0, 0
    while read < end:
        chunk = stream.read(min(1 << 20, end - read))
        if not chunk:
            break
        count += chunk.count(b"\n")
        read += len(chunk)
    return count


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
            raise ValueError(f"{path}: the header reads as one column, {quote(header[0], 60)}; "
                             f"the file looks {name}-separated: try --sep {option}")


def _check_header(header, path):
    if any(name == "" for name in header):
        raise ValueError(f"{path}: the header has an empty column name")
    seen = set()
    for name in header:
        if name in seen:
            raise ValueError(f"{path}: column name {quote(name)} appears twice in the header")
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


# float64 holds every integer up to this magnitude exactly
LARGEST_EXACT_FLOAT_INTEGER = 2**53


def _parquet_column(column):
    """A Parquet column as numbers or text; integers exact (see the module docstring)."""
    import pyarrow as pa

    if pa.types.is_integer(column.type):
        return _parquet_integers(column)
    if pa.types.is_floating(column.type):
        values = column.to_numpy(zero_copy_only=False)
        return np.asarray(values, dtype=np.float64)  # nulls arrive as NaN
    return text_array("" if value is None else clean_cell(str(value))
                      for value in column.to_pylist())


def _parquet_integers(column):
    """int64 (uint64 above 2**63 - 1) without missing values; with them, float64
    (NaN where missing) when every value is at most 2**53 in magnitude, else
    text ("" where missing): never a value changed."""
    if column.null_count == 0:
        values = np.asarray(column.to_numpy(zero_copy_only=False))
        if values.dtype.kind == "u" and values.size and values.max() > np.iinfo(np.int64).max:
            return values.astype(np.uint64)
        return values.astype(np.int64)
    values = column.to_pylist()
    if all(value is None or abs(value) <= LARGEST_EXACT_FLOAT_INTEGER for value in values):
        return np.array([np.nan if value is None else value for value in values],
                        dtype=np.float64)
    return text_array("" if value is None else str(value) for value in values)


def _preview(names, limit=12):
    shown = ", ".join(quote(name) for name in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")
