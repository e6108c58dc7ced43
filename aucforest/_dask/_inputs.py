"""Dask collections as the rows the fit on dask collections takes (`aucforest._dask`).

A dask DataFrame is fitted on its numbers: nullable (Int64, Float64,
boolean) and bool columns become float64 in each partition, pd.NA as NaN, as
in memory; a text column is refused, naming it. Its sizes are counted on the
array's own graph, so a frame whose optimizations fuse partitions
differently (several parquet files) fits.

Categorical features are those of the in-memory fit (`fit_categories` on
the frame's meta, `categorical_features` as in memory): a ``category``
column's categories must be known (the meta's, ``.cat.as_known()``; else a
ValueError naming the column), and each partition's values become the codes
of those categories by value (`_coded_frame`), whatever the partition's own
categories, so the forest does not depend on the partitioning; codes in an
array are checked where they are (`check_categorical_codes`). A categorical
feature has one bin per level (its code, `_level_codes`; no edges sampled):
the client scans its summed histogram by level sets
(`HistogramSplitter`, `Splitter._scan_levels`), `route` and the client's
out-of-bag routing send rows by the set's 256-bit table, the in-memory
finishing grows on `BinnedData` with the same mask, and the trees hold the
sets as the in-memory trees do (``categorical_split``, ``left_levels``).
"""
import sys

import numpy as np

from .._categories import _codes_by_value, fit_categories


def is_dask_collection(X):
    """Whether X is a dask collection (False without importing dask when it
    was never imported)."""
    if "dask" not in sys.modules:
        return False
    from dask.base import is_dask_collection as _is_collection
    return _is_collection(X)


def client():
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError) as error:
        raise ValueError("fitting on a dask collection needs a dask.distributed Client "
                         "(e.g. Client(LocalCluster())); none was found") from error


def is_dask_frame(X):
    """Whether X is a dask DataFrame or Series, without importing dask.dataframe
    (which needs pandas and pyarrow) when nothing did: X cannot be one then."""
    dd = sys.modules.get("dask.dataframe")
    return dd is not None and isinstance(X, (dd.DataFrame, dd.Series))


def as_rows(X, y, sample_weight, categories=None):
    """X as a dask array with one column chunk, y and sample_weight chunked as its
    rows; the feature names of a DataFrame (None otherwise). A DataFrame's
    ``category`` columns become the codes of ``categories`` (one list or None
    per column: `_numeric_frame`)."""
    import dask.array as da

    names = None
    if is_dask_frame(X) and X.ndim == 2:
        columns = list(X.columns)
        if all(isinstance(c, str) for c in columns):
            names = np.asarray(columns, dtype=object)
        # sizes from the array's own graph (lengths=True can count the partitions of
        # another optimization of the frame, e.g. parquet files read together)
        X = _numeric_frame(X, categories).to_dask_array()
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask array or DataFrame; got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional; got {X.ndim} dimensions")
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold numbers; got dtype {X.dtype}")
    X = X.rechunk({1: -1})
    row_chunks = X.chunks[0]

    def aligned(v, name):
        if v is None:
            return None
        if is_dask_frame(v):
            v = v.to_dask_array()
        elif not isinstance(v, da.Array):
            v = da.from_array(np.asarray(v), chunks=(row_chunks,))
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1-dimensional")
        if any(np.isnan(c) for c in v.chunks[0]):
            v = v.compute_chunk_sizes()
        if v.shape[0] != X.shape[0]:
            raise ValueError(f"{name} has {v.shape[0]} rows, X has {X.shape[0]}")
        return v.rechunk((row_chunks,))

    return X, aligned(y, "y"), aligned(sample_weight, "sample_weight"), names


def frame_categories(X, categorical_features):
    """(is_categorical, categories) of a dask DataFrame, as `fit_categories`
    finds them on a pandas one (from its meta: the columns' categories, in
    their order); (None, None) for an array (`resolve_fitted` resolves its
    ``categorical_features`` once its width is known). ValueError naming a
    ``category`` column whose categories are unknown (``known=False``: each
    partition has its own, unknown until computed)."""
    if not (is_dask_frame(X) and X.ndim == 2):
        return None, None
    for name, dtype in X.dtypes.items():
        if str(dtype) == "category" and not X[name].cat.known:
            raise ValueError(f"column {str(name)!r} is a category column of unknown "
                             "categories (each partition has its own); the Dask fit needs "
                             f"them known: X[{str(name)!r}] = X[{str(name)!r}].cat.as_known() "
                             "(or read the data with them known)")
    _, is_categorical, categories = fit_categories(X._meta, categorical_features)
    return is_categorical, categories


def _numeric_frame(X, categories=None):
    """A dask DataFrame's columns as numbers, as the in-memory fit takes them:
    nullable (Int64, Float64, boolean; pd.NA missing) and bool columns become
    float64 (NaN missing) in each partition, and a ``category`` column the
    codes of its levels in ``categories[j]`` (matched by value in each
    partition, whatever its own categories' order: `_coded_frame`).
    ValueError naming a text column, or a category column without
    ``categories`` (a forest fitted on numbers there)."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    categories = [None] * len(X.columns) if categories is None else categories
    for (name, dtype), levels in zip(X.dtypes.items(), categories):
        if str(dtype) == "category":
            if levels is None:
                raise ValueError(f"column {str(name)!r} has the category dtype, but the forest "
                                 "was fitted on numbers there; pass the column as it was at "
                                 "fit")
            continue
        if getattr(dtype, "kind", "O") in "OSU" or str(dtype).startswith(("str", "string")):
            raise ValueError(f"column {str(name)!r} holds text (dtype {dtype}); the Dask fit "
                             "takes numbers only")
        if not (is_numeric_dtype(dtype) or is_bool_dtype(dtype)):
            raise ValueError(f"column {str(name)!r} has dtype {dtype}; the Dask fit takes "
                             "numbers only")
    if all(isinstance(dtype, np.dtype) and dtype.kind in "iuf" for dtype in X.dtypes):
        return X
    return X.map_partitions(_coded_frame, categories, meta=_coded_frame(X._meta, categories))


def _coded_frame(frame, categories):
    """A pandas partition as float64 columns, pd.NA as NaN, each ``category``
    column as the positions of its values in ``categories[j]`` (by value, NaN
    missing: `_codes_by_value`); ValueError naming a column whose partition
    holds a level not among them."""
    import pandas

    columns = {name: column.to_numpy(dtype=np.float64, na_value=np.nan) if levels is None
               else _codes_by_value(column, levels, name, refuse=_PARTITION_LEVELS)
               for (name, column), levels in zip(frame.items(), categories)}
    return pandas.DataFrame(columns, index=frame.index, columns=frame.columns)


# why a partition's level outside the frame's categories is refused (`_codes_by_value`)
_PARTITION_LEVELS = ("not among the frame's (its meta's) categories",
                     "the partitions' levels must be the frame's categories")


def check_supported(forest):
    """Raise for the settings a fit on rows spread over workers cannot honour."""
    if forest.max_bins is None:
        raise ValueError("max_bins=None (the exact splitter) needs all rows in one process; "
                         "fit on a dask collection with max_bins='auto' (255 bins) or an int")
    if forest.class_weight == "balanced_subsample":
        raise ValueError("class_weight='balanced_subsample' is not supported on dask "
                         "collections (its weights depend on each tree's draw); use "
                         "'balanced'")
    if forest.warm_start:
        raise ValueError("warm_start=True is not supported on dask collections")
