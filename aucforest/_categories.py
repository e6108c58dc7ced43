"""Which features are categorical, and the mapping of category values to codes.

The trees split a categorical feature natively on its level codes 0..L-1
(float, NaN missing, L <= ``MAX_CATEGORIES``). This module turns what a user
passes into those codes, as scikit-learn's HistGradientBoostingClassifier
reads ``categorical_features``:

* ``"from_dtype"`` (the default): the columns of a pandas DataFrame with the
  ``category`` dtype; none for an array, so a numeric frame or an array fits
  exactly as without categorical features.
* int indices, column names (X a DataFrame), a boolean mask, or None (none).

At fit (`fit_categories`), a ``category`` column's categories are stored, in
their order, as ``categories_[j]`` (None for a numeric feature, and for a
categorical feature given as codes in a numeric column or an array), and its
codes are what the trees see. At predict (`predict_codes`), a DataFrame's
``category`` columns are mapped to those codes **by value**, not by the
frame's own codes: a frame whose categories are ordered differently, or are
a subset or superset, predicts the same. A value not seen at fit becomes a
missing value (the node's missing-value direction), with a warning naming
the column and the count. An array holds the codes themselves.

A warm start (`fit_categories` given the first fit's ``categories_``)
maps the new frame's levels by value to those categories, the codes the
kept trees read, and refuses a level the first fit did not know (the kept
trees cannot read it; as missing, the new trees would learn nothing from
those rows) and columns in another order or under other names.

Refused with a ValueError naming the column: text (object or string)
columns (convert them to ``category``), a ``category`` column that is not
among the categorical features, more than ``MAX_CATEGORIES`` categories,
duplicate column names, columns in another order than at fit, and at
predict a column that is not ``category`` where one was fitted.
"""
import warnings
from numbers import Integral

import numpy as np

from ._tree import MAX_CATEGORIES  # most levels of a categorical feature (codes 0..254)

__all__ = ["MAX_CATEGORIES", "fit_categories", "resolve_fitted", "predict_codes",
           "resolve_categorical_features", "storable_categories", "checked_categories"]


def levels_going_left(left_levels):
    """Which level codes 0..255 the 256-bit sets of categorical splits send
    left (bit c of word c // 64 of a row of a tree's ``left_levels``): a bool
    array (..., 256) from rows of 4 uint64 words."""
    words = np.ascontiguousarray(left_levels, dtype="<u8")
    return np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little") == 1


def is_frame(X):
    """Whether X is a pandas DataFrame (without importing pandas)."""
    return type(X).__module__.startswith("pandas") and hasattr(X, "columns") \
        and hasattr(X, "dtypes")


def fit_categories(X, categorical_features, first_fit=None):
    """A training DataFrame's ``category`` columns as codes, before validation.

    Parameters
    ----------
    X : array-like or pandas DataFrame
    categorical_features : "from_dtype", array-like of int, str or bool, or None
    first_fit : dict or None
        A warm start's fitted model (its ``vars``): X's columns must be its
        ``feature_names_in_`` in their order, and each ``category`` column's
        levels are mapped by value to its ``categories_`` (ValueError for a
        level it did not know). None: a new fit, the columns' own categories.

    Returns
    -------
    X : X itself, or a float64 DataFrame with the category columns as codes
    is_categorical : ndarray of bool (n_features,), or None when X is not a
        DataFrame (`resolve_fitted` resolves it once X is validated)
    categories : list (n_features,) or None likewise: each ``category``
        column's categories (a list), None for the other features
    """
    if not is_frame(X):
        return X, None, None
    _refuse_duplicate_columns(X)
    _refuse_text(X)
    if first_fit is not None:
        return _warm_start_codes(X, categorical_features, first_fit)
    names = [str(name) for name in X.columns]
    is_category = np.array([_is_category(X[name]) for name in X.columns], dtype=bool)
    mask = resolve_categorical_features(categorical_features, len(names), names, is_category)
    unselected = np.flatnonzero(is_category & ~mask)
    if unselected.size:
        raise ValueError(f"column {names[unselected[0]]!r} has the category dtype but is not "
                         "among categorical_features; include it (categorical_features="
                         "'from_dtype' takes every category column) or convert it to numbers")
    if not is_category.any():
        return X, mask, [None] * len(names)
    categories, columns = [], {}
    for j, name in enumerate(X.columns):
        if is_category[j]:
            values = X[name].cat.categories
            if len(values) > MAX_CATEGORIES:
                raise ValueError(f"column {str(name)!r} has {len(values)} categories, more "
                                 f"than the {MAX_CATEGORIES} a categorical feature may have")
            categories.append(values.tolist())
            codes = X[name].cat.codes.to_numpy().astype(np.float64)
            codes[codes < 0] = np.nan
            columns[name] = codes
        else:
            categories.append(None)
            columns[name] = X[name]
    return _numeric_frame(X, columns), mask, categories


def _warm_start_codes(X, categorical_features, first_fit):
    """`fit_categories` of a warm start: codes in the first fit's categories."""
    _check_column_order(first_fit.get("feature_names_in_"), X, "the first fit")
    fitted = first_fit.get("categories_") or [None] * X.shape[1]
    if len(fitted) != X.shape[1]:
        raise ValueError("warm_start=True adds trees grown on the data of the first fit: "
                         f"X has {X.shape[1]} features, the first fit {len(fitted)}")
    names = [str(name) for name in X.columns]
    is_category = np.array([_is_category(X[name]) for name in X.columns], dtype=bool)
    mask = resolve_categorical_features(categorical_features, len(names), names, is_category)
    columns = {}
    for j, name in enumerate(X.columns):
        column = X[name]
        if fitted[j] is None and _is_category(column):
            raise ValueError(f"column {str(name)!r} has the category dtype, but the first fit "
                             "read numbers there; warm_start=True keeps its trees, so pass the "
                             "column as it was at the first fit")
        if fitted[j] is not None and not _is_category(column):
            raise ValueError(f"column {str(name)!r} was a category column at the first fit, "
                             f"but X has dtype {column.dtype} there; warm_start=True keeps its "
                             "trees, so pass the column as it was at the first fit")
        columns[name] = column if fitted[j] is None else \
            _codes_by_value(column, fitted[j], name, refuse=(
                "the first fit did not know", "the trees kept by warm_start=True cannot read "
                "them. Refit with warm_start=False, or set those values to missing"))
    return _numeric_frame(X, columns), mask, list(fitted)


def resolve_fitted(categorical_features, n_features, is_categorical, categories):
    """``(is_categorical_, categories_)`` of a fit: what `fit_categories` found
    for a DataFrame, or for an array the resolution of
    ``categorical_features`` on its ``n_features`` validated columns (codes
    as given, no categories)."""
    if is_categorical is None:
        is_categorical = resolve_categorical_features(categorical_features, n_features)
        categories = [None] * n_features
    return is_categorical, categories


def predict_codes(estimator, X):
    """X with the fitted categories mapped to their codes (by value); X itself
    when the estimator has no fitted categories or X is not a DataFrame."""
    categories = getattr(estimator, "categories_", None)
    if not is_frame(X):
        return X
    _refuse_duplicate_columns(X)
    _check_column_order(getattr(estimator, "feature_names_in_", None), X, "fit")
    _refuse_text(X)
    if categories is None or all(c is None for c in categories):
        category = [name for name in X.columns if _is_category(X[name])]
        if category:
            raise ValueError(f"column {str(category[0])!r} has the category dtype, but the "
                             "estimator was fitted on numbers there; pass the column as it was "
                             "at fit")
        return X
    if len(categories) != X.shape[1]:
        return X  # validate_data names the mismatch
    columns = {}
    for j, name in enumerate(X.columns):
        fitted, column = categories[j], X[name]
        if fitted is None:
            if _is_category(column):
                raise ValueError(f"column {str(name)!r} has the category dtype, but the "
                                 "estimator was fitted on numbers there")
            columns[name] = column
            continue
        if not _is_category(column):
            raise ValueError(f"column {str(name)!r} was fitted as a category column, but X has "
                             f"dtype {column.dtype} there; convert it with "
                             f".astype(pandas.CategoricalDtype(estimator.categories_[{j}])) "
                             "(values are matched by value, not by code)")
        columns[name] = _codes_by_value(column, fitted, name)
    return _numeric_frame(X, columns)


def _codes_by_value(column, fitted, name, refuse=None):
    """Codes of a category column in the fitted categories; NaN where missing
    or unseen (with a warning naming the column and the count). ``refuse``,
    (what the unseen levels are, why they cannot be read), makes them a
    ValueError naming the column and the levels instead."""
    import pandas

    # code -1 (missing) takes the last entry, -1: also when X has no categories
    positions = np.append(pandas.Index(fitted).get_indexer(column.cat.categories), -1)
    codes = column.cat.codes.to_numpy()
    mapped = positions[codes].astype(np.float64)
    is_unseen = (codes >= 0) & (mapped < 0)
    if is_unseen.any():
        levels = pandas.unique(column[is_unseen].astype(object))
        shown = ", ".join(repr(v) for v in levels[:5]) + (", ..." if len(levels) > 5 else "")
        if refuse is not None:
            what, why = refuse
            raise ValueError(f"column {str(name)!r} holds levels {what} ({shown}); {why}")
        count = int(is_unseen.sum())
        warnings.warn(f"column {str(name)!r} has {count} "
                      f"{'value' if count == 1 else 'values'} of categories not seen at "
                      f"fit ({shown}); treated as missing", UserWarning, stacklevel=4)
    mapped[mapped < 0] = np.nan
    return mapped


def resolve_categorical_features(categorical_features, n_features, names=None,
                                 is_category=None):
    """Boolean mask (n_features,) of the categorical features.

    Parameters
    ----------
    categorical_features : "from_dtype", array-like of int, str or bool, or None
    n_features : int
    names : list of str or None
        The DataFrame's column names (None for an array).
    is_category : ndarray of bool or None
        Which columns have the ``category`` dtype.

    Returns
    -------
    ndarray of bool
    """
    mask = np.zeros(n_features, dtype=bool)
    if categorical_features is None:
        return mask
    if isinstance(categorical_features, str):
        if categorical_features != "from_dtype":
            raise ValueError(f"categorical_features must be 'from_dtype', None, indices, names "
                             f"or a boolean mask; got {categorical_features!r} (a single "
                             f"column name? give a list: [{categorical_features!r}])")
        return mask if is_category is None else is_category.copy()
    given = np.asarray(categorical_features)
    if given.ndim != 1:
        raise ValueError(f"categorical_features must be one-dimensional; got shape "
                         f"{given.shape}")
    if given.size == 0:
        return mask
    if given.dtype.kind == "b":
        if given.shape[0] != n_features:
            raise ValueError(f"categorical_features as a boolean mask must have one entry per "
                             f"feature ({n_features}); got {given.shape[0]}")
        return given.copy()
    if given.dtype.kind in "UO":
        if names is None:
            raise ValueError("categorical_features names columns, which needs X to be a "
                             "pandas DataFrame; give indices or a boolean mask for an array")
        values = given.tolist()
        unknown = [v for v in values if not isinstance(v, str) or v not in names]
        if unknown:
            raise ValueError(f"categorical_features names {unknown[0]!r}, which is not a column "
                             f"of X")
        mask[[names.index(v) for v in values]] = True
        return mask
    if given.dtype.kind not in "iu" or not all(isinstance(v, Integral) for v in given.tolist()):
        raise ValueError(f"categorical_features must be 'from_dtype', None, indices, names or "
                         f"a boolean mask; got values of dtype {given.dtype}")
    if given.min() < 0 or given.max() >= n_features:
        raise ValueError(f"categorical_features holds feature indices out of range for "
                         f"{n_features} features: {given.tolist()}")
    mask[given] = True
    return mask


def _refuse_duplicate_columns(X):
    """ValueError naming the column names X holds more than once."""
    duplicated = X.columns[X.columns.duplicated()].unique().tolist()
    if duplicated:
        raise ValueError(f"X has duplicate column names: {duplicated}; give each column its "
                         "own name")


# scikit-learn's words for columns in another order (its estimator checks look for them)
_SKLEARN_ORDER_MESSAGE = ("The feature names should match those that were passed during fit.\n"
                          "Feature names must be in the same order as they were in fit.")


def _check_column_order(fitted_names, X, when):
    """ValueError when X's columns are ``fitted_names`` in another order:
    scikit-learn's message, then both orders. At a warm start (``when`` "the
    first fit") other names are refused as well; at predict scikit-learn's
    `validate_data` names them."""
    names = list(X.columns)
    if fitted_names is None or not all(isinstance(name, str) for name in names):
        return
    fitted = [str(name) for name in fitted_names]
    if names == fitted:
        return
    if sorted(names) == sorted(fitted):
        raise ValueError(f"{_SKLEARN_ORDER_MESSAGE}\nthe columns of X are in another order "
                         f"than at {when}: {names} where {when} had {fitted}; select them as "
                         f"at {when}, X[estimator.feature_names_in_]")
    if when != "fit":
        raise ValueError(f"X has the columns {names} where {when} had {fitted}; "
                         "warm_start=True adds trees grown on the data of the first fit")


def _is_category(column):
    return str(column.dtype) == "category"


def _refuse_text(X):
    """ValueError naming the first column of text (object or string dtype)."""
    from pandas.api.types import infer_dtype

    for name in X.columns:
        column = X[name]
        if _is_category(column):
            continue
        if column.dtype.kind in "OSU" or str(column.dtype).startswith("string"):
            kind = infer_dtype(column, skipna=True)
            if kind not in ("integer", "floating", "mixed-integer-float", "decimal", "boolean",
                            "empty"):
                raise ValueError(
                    f"column {str(name)!r} holds text (dtype {column.dtype}); convert it to a "
                    f"category column, X[{str(name)!r}] = X[{str(name)!r}].astype('category'), "
                    "to split it as a categorical feature")


def _numeric_frame(X, columns):
    import pandas

    return pandas.DataFrame({name: np.asarray(values, dtype=np.float64)
                             for name, values in columns.items()},
                            index=X.index, columns=X.columns)


def storable_categories(categories, n_features):
    """``categories_`` as plain JSON data for a model file: a list of one
    list of str/int/float (or None) per feature; None when no feature has
    categories. ValueError naming the feature whose categories JSON cannot
    hold exactly."""
    if categories is None or all(levels is None for levels in categories):
        return None
    if len(categories) != n_features:
        raise ValueError(f"categories_ has {len(categories)} entries for {n_features} features")
    plain = []
    for j, levels in enumerate(categories):
        if levels is None:
            plain.append(None)
            continue
        values = [v.item() if isinstance(v, np.generic) else v for v in levels]
        if not all(_plain_category(v) for v in values):
            bad = next(v for v in values if not _plain_category(v))
            raise ValueError(f"the categories of feature {j} cannot be stored in a model file: "
                             f"{bad!r} ({type(bad).__name__}) is not a str, int or finite "
                             "float; convert the column's categories to str first")
        plain.append(values)
    return plain


def checked_categories(value, n_features, feature_names=None):
    """The ``categories_`` read from a model file, checked: ValueError naming
    the entry (and its feature's name, when ``feature_names`` are given).

    An entry is None (a feature without categories) or a list of at most
    ``MAX_CATEGORIES`` str, int or finite float values that pandas can tell
    apart: 1 and 1.0 are the same level to pandas (levels are matched by
    value at predict), so a list holding both is refused. An empty list is
    a ``category`` column fitted without categories (all its values
    missing)."""
    if not isinstance(value, list) or len(value) != n_features:
        raise ValueError(f"metadata field 'categories' must be a list of {n_features} entries")
    for j, levels in enumerate(value):
        if levels is None:
            continue
        entry = f"metadata field 'categories' entry {j}" + (
            "" if feature_names is None else f" (feature {str(feature_names[j])!r})")
        if not isinstance(levels, list) or not len(levels) <= MAX_CATEGORIES \
                or not all(_plain_category(v) for v in levels):
            raise ValueError(f"{entry} must be None or a list of 0 to {MAX_CATEGORIES} distinct "
                             "str, int or float values")
        same = _same_level(levels)
        if same is not None:
            raise ValueError(f"{entry} holds {same[0]!r} and {same[1]!r}, the same level to "
                             "pandas; the levels must be distinct values")
    return value


def _same_level(levels):
    """The first two of ``levels`` that pandas matches as one value (as
    `predict_codes` indexes them: 1 and 1.0, 2**53 + 1 and 2.0**53), or None."""
    first_of = {}  # Python's equality first (1 == 1.0, 0 == -0.0), then pandas'
    for level in levels:
        if level in first_of:
            return first_of[level], level
        first_of[level] = level
    try:
        import pandas
    except ImportError:
        return None
    codes, _ = pandas.factorize(pandas.Index(levels))
    repeated = np.flatnonzero(pandas.Index(codes).duplicated())
    if repeated.size == 0:
        return None
    second = repeated[0]
    return levels[np.flatnonzero(codes == codes[second])[0]], levels[second]


def _plain_category(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return bool(np.isfinite(value))
    return isinstance(value, (str, int))
