"""Reading model files: :func:`load` and :func:`read_model`, with every check of
what a file holds (regular file, zip members, .npy headers and dtypes, the work
bound, metadata, parameters, labels, trees) before a forest is built from it."""
import json
import os
import stat
import zipfile
from typing import NamedTuple

import numpy as np

from .._base import collapsed, tree_params
from .._binning import MAX_BINS
from .._categories import checked_categories
from .._decision_rule import DecisionRule
from .._oob_source import KeptInMemory, NotKept, OnWorkers
from .._forest import AUCForestClassifier
from .._labels import check_stored_dtype, restored_labels
from .._tree import Tree
from ..tree import feature_attributes, fitted_tree
from ._format import (FORMAT_NAME, FORMAT_VERSION, _OPTIONAL_ARRAYS, _MIN_SAMPLES_TABLES,
                      _MAX_HEADER_SIZE, _NOT_STORED_PARAMS, _PARAMS_OF_EARLIER_FILES,
                      _MAX_METADATA_DEPTH, _INT32_MAX, _MAX_TREE_SEED, _READ_CHUNK, _decode_param,
                      _nesting_depth, node_array_dtypes, _expected_arrays, _load_work, _work_limit)


class SavedModel(NamedTuple):
    """What a model file holds.

    Attributes
    ----------
    forest : AUCForestClassifier
        The fitted forest.
    extra : dict
        The plain data passed as ``extra`` to :func:`save` (empty if none);
        for a model fitted by ``aucforest fit``, ``extra["encoding"]`` is its
        column encoding (``aucforest.ColumnEncoding.from_model_file(path)``).
    """

    forest: object
    extra: dict


def load(path):
    """Read a forest written by :func:`save`.

    The file is read without pickle (no code can run), and every part is
    checked before the forest is built; each tree goes through the
    validating ``Tree`` constructor (children after their parent and in
    range, no cycles or unreachable nodes, features in range, finite
    thresholds, class proportions in [0, 1] summing to 1). The loaded
    forest has ``n_jobs=None``; set it with ``set_params``.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.

    Returns
    -------
    AUCForestClassifier
        A fitted forest whose predictions equal those of the saved one.

    Raises
    ------
    ValueError
        If the file is not a regular file (a device, FIFO or folder), asks
        for more work than its size allows, is missing parts, truncated,
        corrupted or crafted, or was
        written by a newer aucforest (``model file format version N is newer
        than this aucforest supports (M); upgrade aucforest``).
    OSError
        If the file cannot be opened (e.g. it does not exist).
    """
    return read_model(path).forest


def read_model(path):
    """Read a model file and the plain ``extra`` data stored with it.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.

    Returns
    -------
    SavedModel
        Named fields ``forest`` and ``extra``.

    Raises
    ------
    ValueError, OSError
        As :func:`load`.
    """
    path = os.fspath(path)
    with _open_regular_file(path) as stream:  # a missing file is an OSError, not a bad file
        try:
            arrays = _read_arrays(stream, os.fstat(stream.fileno()).st_size)
        except ModelFileError as error:
            raise ValueError(f"{path}: {error}") from None
        except Exception as error:  # whatever a damaged zip or .npy header makes numpy raise
            raise _invalid(path, error) from None
    try:
        return _model_from_arrays(arrays)
    except ModelFileError as error:
        raise ValueError(f"{path}: {error}") from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as error:
        raise _invalid(path, error) from None


def _open_regular_file(path):
    """``path`` opened for reading if it is a regular file; a device, FIFO or
    folder is refused before it is read (reading ``/dev/zero`` never ends,
    opening a FIFO waits for a writer)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError(f"{path} is not a regular file, so not an aucforest model file")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)  # O_NONBLOCK: a FIFO swapped in meanwhile does not block
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ValueError(f"{path} is not a regular file, so not an aucforest model file")
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _invalid(path, error):
    return ValueError(f"{path} is not a valid aucforest model file "
                      f"({type(error).__name__}: {error})")


class ModelFileError(ValueError):
    """A model file that does not hold what it must."""


def _read_arrays(stream, file_size):
    """All arrays of the file. Names, dtypes and shapes are checked from the
    .npy headers, and the work of loading is bounded by the file's size,
    before any array is read."""
    if not zipfile.is_zipfile(stream):
        raise ModelFileError("not an aucforest model file (not a zip archive)")
    stream.seek(0)
    with zipfile.ZipFile(stream) as archive:
        members = {info.filename: info for info in archive.infolist()}
        if len(members) != len(archive.infolist()):
            raise ModelFileError("archive holds two files of the same name")
        names = _check_member_names(members)
        headers = {name: _read_header(archive, members[name + ".npy"], name) for name in names}
        _check_load_work(members.values(), headers["tree_offsets"].shape, file_size)
        arrays = {"metadata": _read_data(archive, members["metadata.npy"], "metadata",
                                         headers["metadata"])}
        _check_load_work(members.values(), headers["tree_offsets"].shape, file_size,
                         _declared_features(arrays["metadata"]))
        arrays.update((name, _read_data(archive, members[name + ".npy"], name, headers[name]))
                      for name in names if name != "metadata")
        return arrays


def _check_member_names(members):
    names = {filename[:-4] for filename in members if filename.endswith(".npy")}
    if len(names) != len(members):
        raise ModelFileError("archive holds files other than arrays")
    if "metadata" not in names:
        raise ModelFileError("not an aucforest model file (no 'metadata' array)")
    missing = sorted(set(_expected_arrays()) - names)
    if missing:
        raise ModelFileError(f"array {missing[0]!r} is missing")
    unexpected = sorted(names - set(_expected_arrays()) - set(_OPTIONAL_ARRAYS))
    if unexpected:
        raise ModelFileError(f"unexpected array {unexpected[0]!r}")
    for filename, info in members.items():  # what numpy writes; bzip2/lzma inflate unbounded
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ModelFileError(f"array {filename[:-4]!r} uses zip compression method "
                                 f"{info.compress_type}; model files use deflate or none")
    return sorted(names, key=lambda name: name != "metadata")  # metadata first


class _Header(NamedTuple):
    shape: tuple
    fortran: bool
    dtype: np.dtype
    size: int  # bytes of the .npy header


def _read_header(archive, info, name):
    """The .npy header of one member, refusing one that does not match the member's size."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(
                member, max_header_size=_MAX_HEADER_SIZE)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(
                member, max_header_size=_MAX_HEADER_SIZE)
        else:
            raise ModelFileError(f"array {name!r} has an unknown .npy version {version}")
        header_size = member.tell()
    _check_dtype(name, dtype)
    if any(length < 0 for length in shape):
        raise ModelFileError(f"array {name!r} declares the negative shape {shape}")
    declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if declared != info.file_size - header_size:
        raise ModelFileError(
            f"array {name!r} declares shape {shape} ({declared} bytes) but holds "
            f"{info.file_size - header_size} bytes")
    return _Header(shape, fortran, dtype, header_size)


def _check_load_work(infos, offsets_shape, file_size, n_features=0):
    """Refuse a file whose arrays inflate, or whose trees or features multiply,
    beyond what `save` writes for a file of its size (a "zip bomb", thousands of
    tiny trees compressed to almost nothing, or ``n_features_in=2**31 - 1``
    declared by a small file)."""
    inflated = sum(info.file_size for info in infos)
    n_trees = offsets_shape[0] - 1 if len(offsets_shape) == 1 else 0
    work, limit = _load_work(inflated, n_trees, n_features), _work_limit(file_size)
    if work > limit:
        features = f", {n_features} features" if n_features else ""
        raise ModelFileError(
            f"the file ({file_size} bytes) declares {inflated} bytes of arrays, {n_trees} "
            f"trees{features}, more than {limit} bytes of work to load, which no model file "
            "does (aucforest never writes such a file)")


def _declared_features(raw_metadata):
    """``n_features_in`` of the metadata: positive, and below 2**31 (the kernel's
    int32 feature indices)."""
    n_features = _parse_metadata(raw_metadata)["n_features_in"]
    if not 1 <= n_features <= _INT32_MAX:
        raise ModelFileError(f"metadata field 'n_features_in' must be in [1, 2**31 - 1], got "
                             f"{n_features}")
    return n_features


def _read_data(archive, info, name, header):
    """One member's array, reading exactly the bytes its header declares, in chunks."""
    declared = info.file_size - header.size
    data = bytearray(declared)
    view = memoryview(data)
    with archive.open(info) as member:
        member.read(header.size)
        filled = 0
        while filled < declared:
            chunk = member.read(min(_READ_CHUNK, declared - filled))
            if not chunk:
                raise ModelFileError(f"array {name!r} is truncated")
            view[filled:filled + len(chunk)] = chunk
            filled += len(chunk)
    if declared == 0:
        return np.empty(header.shape, dtype=header.dtype)
    if header.dtype.kind == "b" and max(data) > 1:
        raise ModelFileError(f"array {name!r} holds booleans other than 0 and 1")
    array = np.frombuffer(data, dtype=header.dtype)
    return array.reshape(header.shape, order="F" if header.fortran else "C")


def _check_dtype(name, dtype):
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise ModelFileError(f"array {name!r} has dtype {dtype}, which a model file never holds")
    expected = {**_expected_arrays(), **_OPTIONAL_ARRAYS}[name]
    if name == "classes":
        try:
            check_stored_dtype(dtype)
        except ValueError as error:
            raise ModelFileError(str(error)) from None
    elif expected == "U":
        if dtype.kind != "U":
            raise ModelFileError(f"array {name!r} has dtype {dtype}, expected unicode")
    elif dtype.newbyteorder("=") != np.dtype(expected).newbyteorder("="):
        raise ModelFileError(f"array {name!r} has dtype {dtype}, expected {np.dtype(expected)}")


def _model_from_arrays(arrays):
    metadata = _parse_metadata(arrays["metadata"])
    forest = _forest_with_params(AUCForestClassifier, metadata["params"])
    classes = _checked_classes(arrays["classes"], metadata["classes_dtype"])
    n_features = _positive_int(metadata, "n_features_in")
    forest.classes_ = classes
    forest.n_classes_ = classes.shape[0]
    forest.n_features_in_ = n_features
    forest.class_prior_ = _checked_prior(arrays["class_prior"], classes.shape[0])
    forest.draw_class_weights_ = _checked_draw_weights(arrays.get("draw_class_weights"),
                                                       classes.shape[0])
    try:
        DecisionRule.parse(forest.decision, forest.n_classes_)
    except ValueError as error:
        raise ModelFileError(f"invalid forest parameter: {error}") from None
    if "feature_names_in" in arrays:
        forest.feature_names_in_ = _checked_feature_names(arrays["feature_names_in"], n_features)
    forest.categories_ = [None] * n_features  # absent: no feature had categories
    if "categories" in metadata:
        try:
            forest.categories_ = checked_categories(metadata["categories"], n_features,
                                                  getattr(forest, "feature_names_in_", None))
        except ValueError as error:
            raise ModelFileError(str(error)) from None
    forest.predict_min_samples_ = (_positive_int(metadata, "predict_min_samples")
                                   if "predict_min_samples" in metadata else 1)
    forest.max_bins_ = _checked_max_bins(metadata.get("max_bins", forest.max_bins))
    forest.is_categorical_ = _checked_is_categorical(arrays, n_features)
    forest.estimators_ = _trees_from_arrays(arrays, forest, metadata["n_trees"])
    for estimator in forest.estimators_:  # earlier files hold the trees as grown
        estimator.tree_ = collapsed(estimator.tree_, forest.predict_min_samples_,
                                    estimator.criterion)
    _set_oob(forest, arrays, metadata)
    for attribute, name in _MIN_SAMPLES_TABLES.items():
        if name in arrays:
            setattr(forest, attribute, _checked_min_samples_scores(arrays[name], name))
    return SavedModel(forest, metadata["extra"])


def _parse_metadata(raw):
    if raw.ndim != 1:
        raise ModelFileError("array 'metadata' must be 1-d")
    try:
        metadata = json.loads(raw.tobytes().decode("utf-8"))
    except RecursionError:
        metadata = None
    except ValueError as error:  # bad UTF-8 or JSON, or an integer of too many digits
        raise ModelFileError(f"metadata is not valid JSON ({error})") from None
    if metadata is None or _nesting_depth(metadata) > _MAX_METADATA_DEPTH:
        raise ModelFileError(f"metadata is nested more than {_MAX_METADATA_DEPTH} levels deep")
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
        raise ModelFileError("not an aucforest model file (metadata has no aucforest format tag)")
    version = metadata.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFileError(f"invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"model file format version {version} is newer than this aucforest supports "
            f"({FORMAT_VERSION}); upgrade aucforest")
    for key, kind in (("params", dict), ("dropped_params", list), ("extra", dict),
                      ("n_trees", int), ("n_features_in", int), ("classes_dtype", str)):
        if not isinstance(metadata.get(key), kind) or isinstance(metadata.get(key), bool):
            raise ModelFileError(f"metadata field {key!r} is missing or not a {kind.__name__}")
    value = metadata.get("predict_min_samples", 1)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ModelFileError("metadata field 'predict_min_samples' is not an int")
    if value > _INT32_MAX:  # the kernel's node sizes are int32 (below 1: refused later)
        raise ModelFileError(f"metadata field 'predict_min_samples' must be at most 2**31 - 1, "
                             f"got {value}")
    return metadata


def _forest_with_params(forest_class, params):
    known = forest_class().get_params(deep=False)
    params = {**_PARAMS_OF_EARLIER_FILES, **params}
    params = {name: value for name, value in params.items() if name not in _NOT_STORED_PARAMS}
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ModelFileError(f"unknown forest parameter {unknown[0]!r}")
    decoded = {}
    for name, value in params.items():
        try:
            decoded[name] = _decode_param(value)
        except (KeyError, TypeError, ValueError) as error:
            detail = f" ({error})" if name == "decision" else ""
            raise ModelFileError(f"a forest parameter is malformed: {name!r}{detail}") from None
    forest = forest_class(**decoded)
    try:
        forest._validate_params()
    except (TypeError, ValueError) as error:
        raise ModelFileError(f"invalid forest parameter: {error}") from None
    return forest


def _checked_classes(classes, classes_dtype):
    """The labels of the file in the dtype they were fitted with (the label
    codec, `aucforest._labels.restored_labels`)."""
    try:
        return restored_labels(classes, classes_dtype)
    except ValueError as error:
        raise ModelFileError(str(error)) from None


def _checked_prior(prior, n_classes):
    if prior.shape != (n_classes,):
        raise ModelFileError(f"array 'class_prior' has shape {prior.shape}, expected ({n_classes},)")
    if not np.all(np.isfinite(prior)) or np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
        raise ModelFileError("class_prior must be non-negative and sum to 1")
    return prior


def _checked_draw_weights(weights, n_classes):
    """``draw_class_weights_`` as stored; None in a file written before it."""
    if weights is None:
        return None
    if weights.shape != (n_classes,):
        raise ModelFileError(f"array 'draw_class_weights' has shape {weights.shape}, expected "
                             f"({n_classes},)")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0) or not np.any(weights > 0):
        raise ModelFileError("draw_class_weights must be finite, non-negative and not all 0")
    return weights


def _checked_feature_names(names, n_features):
    if names.shape != (n_features,):
        raise ModelFileError(
            f"array 'feature_names_in' has shape {names.shape}, expected ({n_features},)")
    return names.astype(object)


def _positive_int(metadata, key):
    value = metadata[key]
    if value < 1:
        raise ModelFileError(f"metadata field {key!r} must be positive, got {value}")
    return value


def _checked_max_bins(value):
    if value is None or (isinstance(value, int) and not isinstance(value, bool)
                         and 2 <= value <= MAX_BINS):
        return value
    raise ModelFileError(f"metadata field 'max_bins' must be None or an int in [2, {MAX_BINS}], "
                         f"got {value!r}")


def _trees_from_arrays(arrays, forest, n_trees):
    offsets = _checked_offsets(arrays, n_trees)
    params = dict(tree_params(forest), max_bins=forest.max_bins_)
    features = feature_attributes(forest)
    names = list(node_array_dtypes())
    set_offsets = _checked_categorical_splits(arrays, offsets)
    trees = []
    for index in range(n_trees):
        nodes = slice(offsets[index], offsets[index + 1])
        node_arrays = {name: arrays[name][nodes] for name in names}
        if set_offsets is not None:
            node_arrays["categorical_split"] = arrays["categorical_split"][nodes]
            node_arrays["left_levels"] = arrays["left_levels"][
                set_offsets[index]:set_offsets[index + 1]]
        depth = int(arrays["tree_max_depth"][index])
        if not 0 <= depth < node_arrays["children_left"].shape[0]:
            raise ModelFileError(f"tree {index}: depth {depth} is impossible")
        try:
            tree_ = Tree(forest.n_features_in_, forest.n_classes_, max_depth=depth,
                         **node_arrays)
        except ValueError as error:
            raise ModelFileError(f"tree {index}: {error}") from None
        seed = int(arrays["tree_random_state"][index])
        trees.append(fitted_tree(tree_, forest.classes_, forest.n_features_in_,
                                 seed if seed >= 0 else None, params, features))
    return trees


def _checked_categorical_splits(arrays, offsets):
    """The first row of ``left_levels`` of each tree (and the total), or None
    for a file without categorical splits; the per-node flags and the rows
    must agree (each tree's `Tree` checks its own share again)."""
    present = [name for name in ("categorical_split", "left_levels") if name in arrays]
    if not present:
        return None
    if len(present) == 1:
        raise ModelFileError(f"array {present[0]!r} needs its companion "
                             "('categorical_split' and 'left_levels' come together)")
    flags, sets = arrays["categorical_split"], arrays["left_levels"]
    if flags.shape != (offsets[-1],):
        raise ModelFileError(f"array 'categorical_split' has shape {flags.shape}, "
                             f"expected {offsets[-1]} nodes")
    if np.any(flags > 1):
        raise ModelFileError("array 'categorical_split' holds values other than 0 and 1")
    counts = np.concatenate([[0], np.cumsum(flags, dtype=np.int64)])[offsets]
    if sets.ndim != 2 or sets.shape != (counts[-1], 4):
        raise ModelFileError(f"array 'left_levels' has shape {sets.shape}, expected "
                             f"({int(counts[-1])}, 4): one row per categorical split")
    return counts


def _checked_is_categorical(arrays, n_features):
    """The forest's ``is_categorical_`` (all False for a file without it)."""
    if "is_categorical" not in arrays:
        return np.zeros(n_features, dtype=bool)
    flags = arrays["is_categorical"]
    if flags.shape != (n_features,) or np.any(flags > 1):
        raise ModelFileError(f"array 'is_categorical' must hold 0 or 1 for each of the "
                             f"{n_features} features; got shape {flags.shape}")
    return flags.astype(bool)


def _checked_offsets(arrays, n_trees):
    offsets = arrays["tree_offsets"]
    n_nodes = arrays["children_left"].shape[0]
    if n_trees < 1:
        raise ModelFileError("a forest needs at least one tree")
    for name in ("tree_max_depth", "tree_random_state"):
        if arrays[name].shape != (n_trees,):
            raise ModelFileError(f"array {name!r} has shape {arrays[name].shape}, "
                                 f"expected ({n_trees},)")
    if offsets.shape != (n_trees + 1,):
        raise ModelFileError(f"array 'tree_offsets' has shape {offsets.shape}, "
                             f"expected ({n_trees + 1},)")
    if np.any(arrays["tree_random_state"] > _MAX_TREE_SEED):  # -1: no int seed
        raise ModelFileError("array 'tree_random_state' holds seeds above 2**32 - 1, "
                             "numpy's RandomState range")
    if offsets[0] != 0 or offsets[-1] != n_nodes or np.any(np.diff(offsets) < 1):
        raise ModelFileError("tree offsets are inconsistent with the node arrays")
    for name in node_array_dtypes():
        if arrays[name].ndim < 1 or arrays[name].shape[0] != n_nodes:
            raise ModelFileError(f"array {name!r} has shape {arrays[name].shape}, "
                                 f"expected {n_nodes} nodes")
    return offsets


def _checked_min_samples_scores(table, name):
    sizes = table[:, 0] if table.ndim == 2 and table.shape[1] == 2 else None
    if sizes is None or np.any(~np.isfinite(sizes) | (sizes < 1) | (sizes != np.round(sizes))):
        raise ModelFileError(f"array {name!r} must hold (node size >= 1, score) rows")
    return {int(size): float(score) for size, score in table}


def _set_oob(forest, arrays, metadata):
    on_dask = metadata.get("fitted_on_dask", False)
    if on_dask is not False and on_dask is not True:
        raise ModelFileError("metadata field 'fitted_on_dask' must be true or absent")
    if on_dask:
        from .._dask import DrawsOnWorkers  # imports no dask
        # not the in-memory draws of its seeds; no draws to compute the OOB rows again
        forest._set_fit_provenance(case_draws=DrawsOnWorkers(),
                                   oob_source=OnWorkers(loaded=True))
    else:
        forest._set_fit_provenance(oob_source=NotKept())
    sampled = "oob_sample_decision_function" in arrays
    if sampled != ("oob_sample_labels" in arrays):
        raise ModelFileError("arrays 'oob_sample_decision_function' and 'oob_sample_labels' "
                             "come together")
    name = "oob_sample_decision_function" if sampled else "oob_decision_function"
    labels_name = "oob_sample_labels" if sampled else "oob_labels"
    if name not in arrays:
        return
    if sampled and "oob_decision_function" in arrays:
        raise ModelFileError("a model file holds 'oob_decision_function' or "
                             "'oob_sample_decision_function', not both")
    oob = arrays[name]
    if oob.ndim != 2 or oob.shape[1] != forest.n_classes_:
        raise ModelFileError(f"array {name!r} has shape {oob.shape}, "
                             f"expected (n_samples, {forest.n_classes_})")
    scores = [metadata.get("oob_score"), metadata.get("oob_gmean")]
    if not all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores):
        raise ModelFileError("metadata fields 'oob_score' and 'oob_gmean' must be numbers")
    forest.oob_score_ = float(scores[0])
    if labels_name not in arrays:  # written before oob_labels: the G-mean as saved
        forest.oob_decision_function_ = oob
        forest.oob_labels_ = None
        forest._set_fit_provenance(oob_source=KeptInMemory(saved_gmean=float(scores[1])))
        return
    labels = arrays[labels_name]
    if labels.shape != (oob.shape[0],) or np.any((labels < 0) | (labels >= forest.n_classes_)):
        raise ModelFileError(f"array {labels_name!r} must hold {oob.shape[0]} class indices "
                             f"in [0, {forest.n_classes_})")
    if sampled:  # a fit on dask collections: the bounded sample, as after the fit
        forest._set_fit_provenance(oob_source=OnWorkers((labels.astype(np.intp), oob),
                                                        loaded=True))
        return
    forest.oob_decision_function_ = oob
    forest.oob_labels_ = labels.astype(np.intp)
    forest._set_fit_provenance(oob_source=KeptInMemory())
