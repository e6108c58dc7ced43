"""The model file format: its layout, array names and dtypes, and the limits
that bound the work of loading a file (shared by :mod:`aucforest.io._write`
and :mod:`aucforest.io._read`).

Layout (format version 1)
-------------------------
``metadata``
    uint8 array holding UTF-8 JSON (possibly followed by spaces, see
    :mod:`aucforest.io`): ``format`` ("aucforest-model"),
    ``format_version``, ``aucforest_version``, ``params`` (the forest's
    ``get_params()`` values that JSON can hold exactly, except ``n_jobs``,
    which is the loading user's choice; a cost-matrix ``decision`` as
    ``{"matrix_rows": [[float, ...], ...]}``, loaded as a list of lists of
    floats and checked against the classes as a fit checks it),
    ``dropped_params``
    (names of the others, which load as their defaults), ``n_trees``,
    ``n_features_in``, ``classes_dtype`` ("object" when ``classes_`` was an
    object array), ``predict_min_samples`` (the node size the trees were
    collapsed to; 1 when absent; files written before trees were collapsed at
    fit hold the trees as grown, and loading collapses them), ``max_bins``
    (the ``max_bins_`` the trees were
    grown with; the parameter's value when absent, which it cannot be for
    ``max_bins="auto"``), ``oob_score``/``oob_gmean`` (when fitted with
    ``oob_score=True``), ``fitted_on_dask`` (true when the trees drew their
    rows on dask workers: a loaded forest then refuses the in-memory draws
    of the out-of-bag tools), ``categories`` (``categories_``: per feature, the
    list of a categorical column's category values, str, int or float,
    distinct to pandas (not both 1 and 1.0), empty for a ``category`` column
    fitted without categories, or null; absent when no feature has
    categories) and ``extra`` (plain data
    stored by the caller, e.g. the command line's feature encoding).
``classes``, ``class_prior``
    ``classes_`` (int64, float64, bool or unicode, as the label codec
    `aucforest._labels.storable_labels` gives them) and ``class_prior_``.
``draw_class_weights``
    Optional, float64 (n_classes,): ``draw_class_weights_``, the classes'
    effective weights in the trees' draws, by which a cost-matrix decision
    brings the probabilities back to the training priors (absent in files
    written before it: no correction).
``feature_names_in``
    Optional, unicode: ``feature_names_in_`` of a forest fitted on a
    DataFrame.
``oob_decision_function``
    Optional, float64 (n_samples, n_classes).
``oob_labels``
    Optional, int64 (n_samples,): the encoded training classes, so that the
    OOB G-mean follows a decision rule changed after loading.
``oob_sample_decision_function``, ``oob_sample_labels``
    Optional, float64 (m, n_classes) and int64 (m,), present together, for
    a forest fitted on dask collections with ``oob_score=True`` (instead of
    the two above): the OOB probabilities and encoded classes of the
    bounded, hash-selected rows ``oob_score``/``oob_gmean`` are computed on
    (m at most about 100,000, whatever n), so that the OOB G-mean follows a
    later decision rule.
``oob_min_samples_scores``
    Optional, float64 (n_candidates, 2): ``oob_scores_by_min_samples_`` of a
    forest fitted with ``predict_min_samples="oob"``, one (node size, OOB
    score) row per candidate.
``oob_min_samples_gmeans``
    Optional, float64 (n_candidates, 2): ``oob_gmeans_by_min_samples_``
    likewise, one (node size, OOB G-mean) row per candidate.
``tree_offsets``, ``tree_max_depth``, ``tree_random_state``
    int64: tree ``t`` owns nodes ``tree_offsets[t]:tree_offsets[t + 1]``
    of the node arrays below; its depth and its ``random_state``.
``children_left``, ``children_right``, ``feature``, ``threshold``, ...
    The node arrays of all trees (every array of ``aucforest._tree.NODE_ARRAYS``),
    concatenated; integer arrays as int64, the others in their own dtype
    (``value`` has one column per class, the node's class proportions).
    Node indices are local to their tree.
``categorical_split``, ``left_levels``, ``is_categorical``
    Optional, present together when a tree has categorical splits (files
    without them load as forests without categorical features):
    ``categorical_split`` uint8 per node (1 where the node splits a
    categorical feature by a set of levels), ``left_levels`` uint64 (one row
    of 4 words per categorical split, the trees' rows end to end in node
    order; bit c set when level c goes left), ``is_categorical`` uint8 per
    feature (the forest's ``is_categorical_``; also written alone when no
    tree split on a categorical feature).
"""
import numpy as np

from .._tree import NODE_ARRAYS

FORMAT_NAME = "aucforest-model"
FORMAT_VERSION = 1

_FOREST_ARRAYS = {"metadata": "u1", "classes": None, "class_prior": "f8",
                  "tree_offsets": "i8", "tree_max_depth": "i8", "tree_random_state": "i8"}
_OPTIONAL_ARRAYS = {"feature_names_in": "U", "oob_decision_function": "f8", "oob_labels": "i8",
                    "oob_sample_decision_function": "f8", "oob_sample_labels": "i8",
                    "draw_class_weights": "f8",
                    "oob_min_samples_scores": "f8", "oob_min_samples_gmeans": "f8",
                    "categorical_split": "u1", "left_levels": "u8", "is_categorical": "u1"}
# per-candidate out-of-bag tables of predict_min_samples="oob": attribute -> array
_MIN_SAMPLES_TABLES = {"oob_scores_by_min_samples_": "oob_min_samples_scores",
                       "oob_gmeans_by_min_samples_": "oob_min_samples_gmeans"}
_MAX_HEADER_SIZE = 10_000
_NOT_STORED_PARAMS = ("n_jobs",)  # how to run belongs to the user, not to the file
# Parameters added after format version 1 appeared, with the value the fit used
# before they existed: a file written before them gets these, not today's defaults,
# so that a loaded forest reports (and refits) what was fitted.
_PARAMS_OF_EARLIER_FILES = {"max_bins": None, "replacement": True, "nsplit": None,
                            "predict_min_samples": 1}
_MAX_EXTRA_DEPTH = 32  # nesting of the ``extra`` data (dicts and lists)
_MAX_METADATA_DEPTH = _MAX_EXTRA_DEPTH + 8
# Loading costs about the arrays' inflated bytes plus this much per tree (the
# Python objects of one tree take 1-3 kB and 0.1-0.5 ms to build, measured),
# plus one float64 per feature (what the forest then holds per feature, e.g. in
# feature_importances_): with the allowance below a file may declare 131,072
# features for free, more only with one byte of file per 8 features, which
# every forest that splits on them holds (save pads the others).
_LOAD_BYTES_PER_TREE = 4096
_LOAD_BYTES_PER_FEATURE = 8
_INT32_MAX = 2**31 - 1  # the kernel's feature indices and node sizes are int32
_MAX_TREE_SEED = 2**32 - 1  # a tree's random_state seeds a numpy RandomState
# Work bound: a file may cost at most this many times its own size to load
# (plus a small allowance). Real forests compress 2-5 fold; `save` writes a
# file without compression whenever compression would break the bound.
_MAX_LOAD_BYTES_PER_FILE_BYTE = 64
_LOAD_ALLOWANCE = 1 << 20
_READ_CHUNK = 1 << 20

_UNSTORABLE = object()


def _encode_param(value):
    """A JSON form of a parameter value; dicts (class_weight) as item lists."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        items = [[_encode_param(k), _encode_param(v)] for k, v in value.items()]
        if any(part is _UNSTORABLE for item in items for part in item):
            return _UNSTORABLE
        return {"dict_items": items}
    if _is_matrix(value):  # a cost-matrix decision: rows of floats
        return {"matrix_rows": np.asarray(value, dtype=np.float64).tolist()}
    if isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value) == 1:
        # e.g. categorical_features: indices, a boolean mask or names
        items = [_encode_param(item) for item in value]
        if any(item is _UNSTORABLE or isinstance(item, dict) for item in items):
            return _UNSTORABLE
        return {"list_items": items}
    return _UNSTORABLE


def _decode_param(value):
    if isinstance(value, dict):
        if "list_items" in value:
            return list(value["list_items"])
        if "matrix_rows" in value:
            return _decode_matrix(value["matrix_rows"])
        return {key: item for key, item in value["dict_items"]}
    return value


def _is_matrix(value):
    """A 2-d list, tuple or array of real numbers (a cost-matrix decision)."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        return False
    try:
        array = np.asarray(value)
    except ValueError:  # ragged
        return False
    return array.ndim == 2 and array.dtype.kind in "biuf"


def _decode_matrix(rows):
    """The rows of a stored matrix, a list of equal-length lists of floats."""
    if (not isinstance(rows, list) or not rows
            or not all(isinstance(row, list) and len(row) == len(rows[0]) for row in rows)
            or not all(isinstance(item, (int, float)) and not isinstance(item, bool)
                       for row in rows for item in row)):
        raise ValueError("matrix_rows must be a non-empty list of equal-length lists of "
                         "numbers")
    return [[float(item) for item in row] for row in rows]


def _nesting_depth(value):
    """Levels of dicts and lists in plain JSON data (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1)
                         for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def node_array_dtypes():
    """Name and storage dtype of each node array in a model file.

    Returns
    -------
    dict of str to numpy.dtype
        The Tree's own dtypes, with intp stored as int64.
    """
    return {name: np.dtype(np.int64) if np.dtype(dtype).kind == "i" else np.dtype(dtype)
            for name, dtype in NODE_ARRAYS.items()}


def _expected_arrays():
    """Name -> dtype of every array a model file must hold (None: checked apart)."""
    return {**_FOREST_ARRAYS, **node_array_dtypes()}


def _load_work(inflated, n_trees, n_features=0):
    """Bytes of work to load a file of ``inflated`` array bytes, ``n_trees``
    trees and ``n_features`` features (a loaded forest holds one float64 per
    feature at a time, e.g. in ``feature_importances_``)."""
    return (inflated + max(n_trees, 0) * _LOAD_BYTES_PER_TREE
            + max(n_features, 0) * _LOAD_BYTES_PER_FEATURE)


def _work_limit(file_size):
    """The most work a file of ``file_size`` bytes may ask for."""
    return _MAX_LOAD_BYTES_PER_FILE_BYTE * file_size + _LOAD_ALLOWANCE
