"""Reading the data and the models of the ``aucforest`` subcommands: model files
with their column encodings, data tables, training labels, case weights,
feature columns, and the encoded matrix a model predicts from."""
import re
import warnings

import numpy as np

from .._encoding import (DEFAULT_NA_VALUES, ColumnEncoding, codes_by_value, is_number,
                         missing_mask, numeric_values, parse_labels)
from .._table import quote, read_table, shown
from ..io import read_model


def model_and_labelled_data(args):
    """The model of ``args.model`` and the table of ``args.data`` with its ``args.target``
    labels, read as the model's encoding reads them and checked against its classes
    (evaluate, importance)."""
    model = _load_model(args.model)
    table = read_table(args.data, sep=args.sep)
    na_values = args.na_values or (model.encoding.na_values if model.encoding
                                   else DEFAULT_NA_VALUES)
    y = parse_labels(table.column(args.target), args.target, table.path,
                     like=model.forest.classes_, na_values=na_values)
    if not getattr(args, "classification", True) and np.setdiff1d(y, model.forest.classes_).size:
        _check_class_labels(y, args.target, table.path)  # labels the model has are its classes
    _check_known_labels(y, model.forest.classes_, args.target)
    return model, table, y


class _Model:
    """A loaded model file: the forest, its column encoding (None for a model
    saved from Python without feature names), its target name and extra data.

    ``categories`` is, for a model saved from Python with pandas ``category``
    columns, its ``categories_`` (levels of any type, in the model's order,
    which a data file's values are mapped to by value); None otherwise (the
    encoding of a model fitted by the command line maps its levels itself).
    """

    def __init__(self, forest, encoding, extra, categories=None):
        self.forest, self.encoding, self.extra = forest, encoding, extra
        self.target = extra.get("target")
        self.categories = categories


def _markers(na_values):
    return DEFAULT_NA_VALUES if na_values is None else na_values


#: A target looks continuous (refused unless --classification) when it holds
#: numbers that are not all integers, or more than MAX_DISTINCT_CLASSES distinct
#: values that are also more than CONTINUOUS_SHARE of its rows, or integers with
#: more than MAX_DISTINCT_CLASSES distinct values and fewer than
#: MIN_ROWS_PER_INTEGER_CLASS rows per value on average (a count, a price).
#: A target with more than MAX_CLASSES distinct labels of any kind is refused
#: too (a forest's work grows with its classes).
CONTINUOUS_SHARE = 0.5
MAX_DISTINCT_CLASSES = 20
MIN_ROWS_PER_INTEGER_CLASS = 10
MAX_CLASSES = 100


def _check_class_labels(y, target, path):
    """Refuse a target that looks continuous or has too many classes (the
    rules above). ``--classification`` skips this check."""
    labels = np.unique(y)
    n_labels, n_rows = labels.size, len(y)
    seen = None
    numbers = y.dtype.kind in "iu" or (y.dtype.kind == "O" and all(
        isinstance(v, str) and is_number(v) for v in labels.tolist()))
    if numbers and y.dtype.kind == "O":
        fractional = [v for v in labels.tolist() if not float(v).is_integer()]
        if fractional:
            seen = f"numbers that are not integers, such as {quote(fractional[0])}"
    if seen is None and n_labels > MAX_DISTINCT_CLASSES and n_labels > CONTINUOUS_SHARE * n_rows:
        seen = f"{n_labels} distinct values in {n_rows} rows"
    if seen is None and numbers and n_labels > MAX_DISTINCT_CLASSES \
            and n_rows < MIN_ROWS_PER_INTEGER_CLASS * n_labels:
        seen = (f"{n_labels} distinct integer values in {n_rows} rows, fewer than "
                f"{MIN_ROWS_PER_INTEGER_CLASS} rows per value on average")
    if seen is not None:
        raise ValueError(f"target column {quote(target)} of {path} looks continuous ({seen}); "
                         "a classifier needs class labels. Give --classification if they are "
                         "class labels")
    if n_labels > MAX_CLASSES:
        raise ValueError(f"target column {quote(target)} of {path} has {n_labels} distinct "
                         f"labels, more than the {MAX_CLASSES} classes fitted without "
                         "--classification (a forest's work grows with its classes). Give "
                         "--classification if they are class labels")


def _training_labels(table, target, na_values=DEFAULT_NA_VALUES, classification=False):
    y = parse_labels(table.column(target), target, table.path, na_values=na_values)
    if not classification:
        _check_class_labels(y, target, table.path)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"target column {target!r} of {table.path} has only one class "
                         f"({shown(classes[:1].tolist()[0])}); a classifier needs at least "
                         "two")
    return y


def _class_weight_for(weights, y):
    """--class-weight LABEL=WEIGHT pairs with the labels in the type of ``y``."""
    classes = {str(label): label for label in np.unique(y).tolist()}
    unknown = [label for label in weights if label not in classes]
    if unknown:
        raise ValueError(f"--class-weight names class {unknown[0]!r}, which the target does not "
                         f"have (its classes: {', '.join(map(repr, classes))})")
    return {classes[label]: weight for label, weight in weights.items()}


def _case_weights(table, column):
    weights = numeric_values(table.column(column), column, table.path, allow_missing=False)
    if weights is None:
        raise ValueError(f"--weight column {column!r} of {table.path} must hold numbers")
    if (weights < 0).any():
        raise ValueError(f"--weight column {column!r} of {table.path} has negative weights "
                         f"(first in data row {int(np.flatnonzero(weights < 0)[0]) + 1})")
    return weights


def _feature_columns(table, args):
    """Every column except the target, --id, --weight and --drop columns."""
    weight = getattr(args, "weight", None)
    excluded = {"--target": [args.target], "--id": [args.id] if args.id else [],
                "--weight": [weight] if weight else [], "--drop": args.drop}
    seen = {}
    for option, names in excluded.items():
        for name in names:
            table.column(name)  # ValueError naming the columns if absent
            if name in seen:
                raise ValueError(f"column {name!r} is given to both {seen[name]} and {option}")
            seen[name] = option
    keep = getattr(args, "keep", None) or []
    for name in keep:
        table.column(name)
        if name in seen:
            raise ValueError(f"column {name!r} is given to both {seen[name]} and --keep")
    names = [name for name in table.columns if name not in seen]
    if not names:
        raise ValueError(f"{table.path} has no feature columns besides "
                         + ", ".join(f"{option} {name!r}" for name, option in seen.items()))
    markers = _markers(args.na_values)
    evidence = {name: _identifier_evidence(table, name, markers)
                for name in names if name not in keep}
    left_out = [name for name in names if evidence.get(name)]
    for name in left_out:
        warnings.warn(f"column {quote(name)} of {table.path} looks like an identifier "
                      f"({evidence[name]}) and is left out of the features; give --keep "
                      f"{name} to use it as a feature", UserWarning, stacklevel=2)
    if len(left_out) == len(names):
        raise ValueError(f"every feature column of {table.path} looks like an identifier "
                         f"({', '.join(map(quote, left_out))}); give --keep COLUMN for those "
                         "that are features")
    args.left_out = left_out
    return [name for name in names if name not in left_out]


#: In a table of more than IDENTIFIER_MIN_ROWS rows, a column is an identifier
#: (left out of the features, with a warning) when it holds
#:
#: * text with at least IDENTIFIER_SHARE of its rows distinct (names, codes);
#: * integers with at least IDENTIFIER_SHARE of its rows distinct under a name
#:   whose last word is id, key, uuid or guid (``id``, ``patient_id``,
#:   ``Record ID``, ``PatientId``: `IDENTIFIER_NAME`);
#: * integers, one per row and all distinct, that are consecutive or fill at
#:   least half of the range between their smallest and largest (row numbers,
#:   shuffled or with gaps), or that increase or decrease down the file
#:   (record numbers).
#:
#: Integers that are merely nearly all distinct (an amount, a rate) are
#: measurements: numbers drawn at random are all distinct only when their range
#: is far wider than the rows, and rarely in order.
IDENTIFIER_SHARE = 0.95
IDENTIFIER_MIN_ROWS = 50
IDENTIFIER_NAME = re.compile(r"(?i:(?:^|[^a-z0-9])(?:id|key|uuid|guid)$|^id[^a-z0-9])"
                             r"|[a-z0-9](?:ID|Id)$")


def _identifier_evidence(table, name, na_values):
    """Why column ``name`` looks like an identifier (for the warning: how many
    distinct values, and the evidence), or None (the rules above)."""
    if table.n_rows <= IDENTIFIER_MIN_ROWS:
        return None
    values = table.column(name)
    enough = IDENTIFIER_SHARE * table.n_rows
    if values.dtype.kind in "iu":
        numbers = values
    else:
        try:
            numbers = numeric_values(values, name, table.path, True, na_values)
        except ValueError:  # no values, infinite ones: the encoding says so
            return None
        if numbers is None:  # text
            distinct = _distinct_text(values, na_values, enough)
            return None if distinct is None or distinct < enough else \
                f"{distinct} distinct values in {table.n_rows} rows"
        numbers = numbers[~np.isnan(numbers)]
        if not np.all(numbers == np.round(numbers)):
            return None
    distinct = np.unique(numbers).size
    if distinct < enough:
        return None
    seen = f"{distinct} distinct values in {table.n_rows} rows"
    if IDENTIFIER_NAME.search(name):
        return f"{seen}, named like an identifier"
    if distinct < table.n_rows:
        return None  # repeated or missing values: ids need their name as evidence
    numbers = numbers.astype(np.float64)  # differences without integer overflow
    low, high = int(numbers.min()), int(numbers.max())
    span = numbers.max() - numbers.min() + 1
    if span == distinct:
        return f"{seen}: consecutive integers {low} to {high}"
    if span <= 2 * distinct:
        return f"{seen}: integers filling {distinct / span:.0%} of the range {low} to {high}"
    steps = np.diff(numbers)
    if np.all(steps > 0) or np.all(steps < 0):
        return f"{seen}, in {'increasing' if steps[0] > 0 else 'decreasing'} order"
    return None


def _distinct_text(values, na_values, enough):
    """Distinct texts of a text column (missing cells aside), or None for a
    column of numbers that are not integers with a few stray texts."""
    present = values[~missing_mask(values, na_values)]
    levels = np.unique(present)
    if levels.size < enough:
        return levels.size  # too few to be an identifier: no need to look further
    numeric = [float(v) for v in levels.tolist() if is_number(v)]
    if len(numeric) * 2 > levels.size and not all(v.is_integer() for v in numeric):
        return None  # numbers with a few stray texts (a warning says so), not identifiers
    return levels.size


def _load_model(path):
    """The model file at ``path`` as a :class:`_Model`."""
    forest, extra = read_model(path)
    if "encoding" in extra:
        encoding = ColumnEncoding.from_dict(extra["encoding"])
        if len(encoding.feature_names) != forest.n_features_in_:
            raise ValueError(f"{path}: its feature encoding gives {len(encoding.feature_names)} "
                             f"columns but the forest has {forest.n_features_in_} features")
        return _Model(forest, encoding, extra)
    encoding = _python_model_encoding(forest)
    categories = getattr(forest, "categories_", None)
    if encoding is None or not categories or all(levels is None for levels in categories):
        categories = None  # no names to match, or codes given as numbers at fit
    return _Model(forest, encoding, extra, categories)


def _python_model_encoding(forest):
    """For a model saved from Python: its named columns, as numbers (its
    ``category`` columns are mapped by value, `_model_features`)."""
    names = getattr(forest, "feature_names_in_", None)
    if names is None:
        return None
    return ColumnEncoding([{"name": str(name), "kind": "numeric"} for name in names])


def accepts_missing(forest):
    """Whether ``forest`` takes NaN in X (its scikit-learn ``allow_nan`` tag)."""
    return bool(forest.__sklearn_tags__().input_tags.allow_nan)


def _model_features(model, table, not_features, na_values=None):
    """The encoded matrix of ``table`` for a model (all columns except
    ``not_features``, the target and id, if the model does not name its columns)."""
    encoding = model.encoding
    if encoding is None:
        names = [name for name in table.columns if name not in not_features]
        if len(names) != model.forest.n_features_in_:
            besides = "the target and the id column" if any(not_features[1:]) else "the target"
            raise ValueError(
                f"the model was saved from Python without column names and takes "
                f"{model.forest.n_features_in_} feature columns; {table.path} has {len(names)} "
                f"(besides {besides}). Give the feature columns only, in training order")
        encoding = ColumnEncoding([{"name": name, "kind": "numeric"} for name in names])
    if na_values is not None:
        encoding = ColumnEncoding(encoding.to_dict()["columns"], na_values)
    allow_missing = accepts_missing(model.forest)
    if model.categories is None:
        return encoding.transform(table, allow_missing=allow_missing)
    columns = []
    for column, levels in zip(encoding.to_dict()["columns"], model.categories):
        if levels is None:
            columns.append(ColumnEncoding([column], encoding.na_values).transform(
                table, allow_missing=allow_missing)[:, 0])
        else:  # as Python's predict maps a category column
            columns.append(codes_by_value(table.column(column["name"]), levels, column["name"],
                                          table.path, allow_missing, encoding.na_values))
    return np.column_stack(columns)


def name_features(forest, encoding):
    """Give a forest fitted on the encoded matrix the encoding's column names
    and its categorical columns' levels (``categories_``), so that Python code
    predicts from ``encoding.transform(frame)`` with values mapped by level."""
    forest.set_params(verbose=0)
    forest.feature_names_in_ = np.asarray(encoding.feature_names, dtype=object)
    forest.categories_ = encoding.categories


def named(forest, X):
    """The encoded matrix X as the forest's input: a pandas DataFrame with its
    ``feature_names_in_`` (categorical columns as ``category`` with the fitted
    levels) when it has names and pandas is installed, else X itself."""
    names = getattr(forest, "feature_names_in_", None)
    if names is None:
        return X
    try:
        import pandas
    except ImportError:  # the columns were matched by name when X was encoded
        return X
    frame = pandas.DataFrame(X, columns=list(names), copy=False)
    for j, levels in enumerate(getattr(forest, "categories_", None) or []):
        if levels is not None:
            codes = np.where(np.isnan(X[:, j]), -1, X[:, j]).astype(np.int64)
            frame[names[j]] = pandas.Categorical.from_codes(codes, categories=levels)
    return frame


def _by_name(method, X, forest=None):
    """Call a forest's ``method`` on X with the columns named as the forest's
    ``feature_names_in_`` (`named`), so scikit-learn checks the names instead
    of warning that X has none. ``forest``: the forest whose names to use when
    ``method`` belongs to an estimator around it (a calibrator)."""
    X = named(method.__self__ if forest is None else forest, X)
    with warnings.catch_warnings():  # without pandas, the columns were matched by name
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        return method(X)


def _check_known_labels(y, classes, target):
    unknown = np.setdiff1d(y, classes)
    if unknown.size:
        raise ValueError(f"target column {target!r} holds labels the model never saw: "
                         f"{', '.join(map(shown, unknown[:5].tolist()))} (model classes: "
                         f"{', '.join(map(shown, np.asarray(classes).tolist()[:10]))})")


