"""Writing model files: :func:`save` checks a fitted forest, turns it into the
arrays of the format (:mod:`aucforest.io._format`) and writes them atomically,
in a form whose loading stays within the work bound that the reader enforces."""
import json
import os
import warnings
import zipfile

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._atomic import atomic_output
from .._categories import storable_categories
from .._forest import AUCForestClassifier
from .._labels import storable_labels
from .._oob_source import oob_source
from .._version import __version__
from ._format import (FORMAT_NAME, FORMAT_VERSION, _MIN_SAMPLES_TABLES,
                      _NOT_STORED_PARAMS, _MAX_EXTRA_DEPTH, _MAX_LOAD_BYTES_PER_FILE_BYTE,
                      _UNSTORABLE, _encode_param, _decode_param, _is_matrix, _nesting_depth,
                      node_array_dtypes, _load_work, _work_limit)


def save(forest, path, *, extra=None):
    """Write a fitted forest to ``path`` as a versioned ``.npz`` model file.

    The file is written to a temporary file in the same folder and then moved
    over ``path`` in one step (:func:`os.replace`), so a failed save, or one
    interrupted by Ctrl-C or SIGTERM, leaves any existing file at ``path``
    intact and no temporary file behind. A file replaced keeps its
    permissions (and owner, where allowed). A symbolic link is written
    through: its target is replaced, the link kept. ``path`` is used as
    given (no ``.npz`` suffix is added). ``n_jobs`` is not stored.

    Parameters
    ----------
    forest : AUCForestClassifier
        A fitted forest.
    path : str or os.PathLike
        Destination file.
    extra : dict, default=None
        Plain data (JSON: dicts, lists, str, numbers, bools, None) stored
        with the model and returned by :func:`read_model`.

    Raises
    ------
    TypeError
        If ``forest`` is not an AUCForestClassifier.
    NotFittedError
        If ``forest`` is not fitted.
    ValueError
        If the class labels or ``extra`` cannot be stored as plain data
        (labels must be ints, floats, strings or bools; strings may not end
        in a NUL character; ``extra`` is nested at most 32 levels deep), or
        if ``path`` is a folder, FIFO or device (nothing is written).
    OSError
        If the file cannot be written; it names ``path``.

    Warns
    -----
    UserWarning
        When a parameter cannot be stored exactly (for instance a
        ``RandomState`` instance as ``random_state``): the loaded forest has
        that parameter's default; its trees and predictions are unchanged.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn.datasets import load_iris
    >>> from aucforest import AUCForestClassifier
    >>> from aucforest import io
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = AUCForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "iris.npz")
    >>> io.save(forest, path)
    >>> bool((io.load(path).predict_proba(X) == forest.predict_proba(X)).all())
    True
    """
    arrays = forest_to_arrays(forest, extra=extra)
    write_atomically(path, arrays)


def forest_to_arrays(forest, *, extra=None):
    """Lay a fitted forest out as the named arrays of a model file.

    Parameters
    ----------
    forest : AUCForestClassifier
        A fitted forest.
    extra : dict, default=None
        Plain data (JSON) stored beside the forest.

    Returns
    -------
    dict of str to ndarray
        The arrays of format version 1 (`aucforest.io._format`), ready for
        `write_atomically`.
    """
    if not isinstance(forest, AUCForestClassifier):
        raise TypeError(f"can only save an AUCForestClassifier, got {type(forest).__name__}")
    forest = forest._frozen()  # one model throughout, whatever refits it meanwhile
    check_is_fitted(forest)
    classes, classes_dtype = storable_labels(forest.classes_)
    params, dropped = _storable_params(forest.get_params(deep=False))
    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "aucforest_version": __version__,
        "params": params,
        "dropped_params": dropped,
        "n_trees": len(forest.estimators_),
        "n_features_in": int(forest.n_features_in_),
        "classes_dtype": classes_dtype,
        "predict_min_samples": int(forest.predict_min_samples_),
        "max_bins": _fitted_max_bins(forest),
        "extra": _plain_extra(extra),
    }
    arrays = {"classes": classes,
              "class_prior": np.asarray(forest.class_prior_, dtype=np.float64)}
    categories = storable_categories(getattr(forest, "categories_", None),
                                     forest.n_features_in_)
    if categories is not None:
        metadata["categories"] = categories
    if getattr(forest, "draw_class_weights_", None) is not None:
        arrays["draw_class_weights"] = np.asarray(forest.draw_class_weights_, dtype=np.float64)
    if hasattr(forest, "feature_names_in_"):
        _check_no_trailing_nul(forest.feature_names_in_, "feature names")
        arrays["feature_names_in"] = np.asarray(forest.feature_names_in_, dtype=str)
    source = oob_source(forest)
    oob_sample = source.scored_rows(forest) if source.on_workers else None
    if oob_sample is not None:
        # a fit on dask collections: the bounded sample oob_score_ is computed on,
        # never n rows (nothing is gathered or computed)
        arrays["oob_sample_decision_function"] = np.asarray(oob_sample[1], dtype=np.float64)
        arrays["oob_sample_labels"] = np.asarray(oob_sample[0], dtype=np.int64)
    elif hasattr(forest, "oob_decision_function_"):
        arrays["oob_decision_function"] = np.asarray(forest.oob_decision_function_,
                                                     dtype=np.float64)
        if forest.oob_labels_ is not None:  # None: loaded from a file without them
            arrays["oob_labels"] = np.asarray(forest.oob_labels_, dtype=np.int64)
    if oob_sample is not None or hasattr(forest, "oob_decision_function_"):
        metadata["oob_score"] = float(forest.oob_score_)
        metadata["oob_gmean"] = float(forest.oob_gmean_)
    if source.on_workers:  # its draws are not the in-memory ones of its seeds
        metadata["fitted_on_dask"] = True
    for attribute, name in _MIN_SAMPLES_TABLES.items():
        if hasattr(forest, attribute):
            arrays[name] = np.array(list(getattr(forest, attribute).items()),
                                    dtype=np.float64).reshape(-1, 2)
    arrays.update(_tree_arrays(forest.estimators_))
    is_categorical = getattr(forest, "is_categorical_", None)
    if is_categorical is not None and np.any(is_categorical):
        arrays["is_categorical"] = np.asarray(is_categorical, dtype=np.uint8)
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode("utf-8"), dtype=np.uint8)
    return arrays


def write_atomically(path, arrays):
    """Write the arrays of a model file to ``path`` whole or not at all.

    The arrays go to a temporary file beside ``path``, which then replaces
    ``path`` (:func:`os.replace`, through
    :func:`aucforest._atomic.atomic_output`).

    A file that ``path`` replaces keeps its permissions (and, where the
    platform allows, its owner); a new file gets the permissions ``open()``
    gives (``0o666`` less the umask). A symbolic link is written through to
    its target; a folder, FIFO or device is refused (ValueError). If anything
    fails, or SIGINT or SIGTERM arrives, the previous file is left as it was,
    the temporary file is removed, and an ``OSError`` names ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        Destination file.
    arrays : dict of str to ndarray
        The arrays of a model file (`forest_to_arrays`).
    """
    with atomic_output(path, "w+b", what="model file") as stream:
        _write_loadable(stream, arrays)


def _write_loadable(stream, arrays):
    """Compressed arrays, or plain ones when compression would make the file
    smaller than `load`'s work bound allows (a forest of thousands of
    identical one-node trees), padded when even that is too small (a tiny
    forest of a great many features): whatever `save` writes, `load` reads."""
    # Stored plainly, a file holds at least 113 bytes per tree (one node, two
    # classes), so its trees' work is at most 1 + 4096/113 < 64 times its size.
    n_trees = arrays["tree_offsets"].shape[0] - 1
    n_features = json.loads(arrays["metadata"].tobytes())["n_features_in"]

    def excess():  # work beyond the bound of the file written
        stream.seek(0)
        with zipfile.ZipFile(stream) as archive:
            inflated = sum(info.file_size for info in archive.infolist())
        return (_load_work(inflated, n_trees, n_features)
                - _work_limit(stream.seek(0, os.SEEK_END)))

    np.savez_compressed(stream, **arrays)
    while excess() > 0:  # plainly, padded when that is not enough
        stream.seek(0)
        stream.truncate()
        np.savez(stream, **arrays)
        over = excess()
        if over > 0:
            # JSON ignores trailing white space: each byte of it adds one byte of
            # work and 64 of bound (with room for the header's longer shape)
            padding = np.full(over // (_MAX_LOAD_BYTES_PER_FILE_BYTE - 1) + 64, ord(" "),
                              dtype=np.uint8)
            arrays = {**arrays, "metadata": np.concatenate([arrays["metadata"], padding])}


def _check_no_trailing_nul(texts, what):
    """numpy's unicode arrays drop trailing NUL characters: refuse what they would change."""
    if any(isinstance(text, str) and text.endswith("\x00") for text in texts):
        raise ValueError(f"{what} ending in a NUL character ('\\x00') cannot be stored in a "
                         "model file")


def _storable_params(params):
    """The parameters JSON holds exactly, and the names of the others."""
    stored, dropped = {}, []
    for name, value in sorted(params.items()):
        if name in _NOT_STORED_PARAMS:
            continue
        encoded = _encode_param(value)
        if encoded is _UNSTORABLE or not _same_param(
                _decode_param(json.loads(json.dumps(encoded))), value):
            dropped.append(name)
            continue
        stored[name] = encoded
    if dropped:
        warnings.warn(
            f"parameters {dropped} cannot be stored exactly in a model file and will load "
            "as their defaults; the trees and predictions are stored unchanged.",
            UserWarning, stacklevel=4)
    return stored, dropped


def _same_param(decoded, value):
    """Whether a parameter read back from JSON is the one stored (an array
    comes back as the list of its items)."""
    if isinstance(value, (list, tuple, np.ndarray)) and _is_matrix(value):
        # a cost matrix is stored as floats, whatever numbers it was given as
        return np.array_equal(np.asarray(decoded, dtype=np.float64),
                              np.asarray(value, dtype=np.float64))
    if isinstance(value, np.ndarray):
        return np.asarray(decoded).dtype.kind == value.dtype.kind and np.array_equal(decoded,
                                                                                      value)
    return decoded == value


def _plain_extra(extra):
    if extra is None:
        return {}
    if not isinstance(extra, dict):
        raise ValueError(f"extra must be a dict of plain data, got {type(extra).__name__}")
    try:
        plain = json.loads(json.dumps(extra, allow_nan=False))
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError(f"extra must hold plain JSON data only: {error}") from None
    if _nesting_depth(plain) > _MAX_EXTRA_DEPTH:
        raise ValueError(f"extra is nested more than {_MAX_EXTRA_DEPTH} levels deep")
    return plain


def _tree_arrays(estimators):
    trees = [estimator.tree_ for estimator in estimators]
    node_counts = [tree.node_count for tree in trees]
    arrays = {
        "tree_offsets": np.concatenate([[0], np.cumsum(node_counts)]).astype(np.int64),
        "tree_max_depth": np.array([tree.max_depth for tree in trees], dtype=np.int64),
        "tree_random_state": np.array([_tree_seed(e) for e in estimators], dtype=np.int64),
    }
    nodes = [tree.node_arrays() for tree in trees]
    for name, dtype in node_array_dtypes().items():
        arrays[name] = np.concatenate([n[name] for n in nodes]).astype(dtype)
    if any("left_levels" in n for n in nodes):  # trees with categorical splits
        arrays["categorical_split"] = np.concatenate(
            [tree.categorical_split for tree in trees]).astype(np.uint8)
        arrays["left_levels"] = np.concatenate(
            [tree.left_levels for tree in trees]).astype(np.uint64).reshape(-1, 4)
    return arrays


def _tree_seed(estimator):
    seed = estimator.random_state
    return int(seed) if isinstance(seed, (int, np.integer)) else -1


def _fitted_max_bins(forest):
    """max_bins_ of a fitted forest; the parameter for one fitted before
    max_bins_ existed (such a forest never had "auto")."""
    return getattr(forest, "max_bins_", forest.max_bins)
