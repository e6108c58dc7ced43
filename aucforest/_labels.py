"""Class labels: the values a fitted forest's ``classes_`` may hold to be saved
and exported, and their plain forms.

One codec for `aucforest.save`, `aucforest.load` and every export (ONNX, the
skl2onnx converter, ``aucforest export``), so that they accept the same
labels and refuse the others with the same message:

* `storable_labels` (save, export): the labels as a plain array, int64,
  float64, bool or unicode, holding the same values, and the dtype they are
  restored to. Labels of an ``object`` array must all be of one type (int,
  float, str or bool). Refused, with a ValueError: labels of other types or
  of mixed types, unsigned integers above 2**63 - 1 (a model file and an
  ONNX model hold integer labels as int64; cast, they would change sign) and
  strings ending in a NUL character (numpy's unicode arrays drop it).
* `restored_labels` (load): the labels of a file in the dtype they were
  fitted with, checked.
* `plain_labels`: the labels as JSON holds them (int, float, str or bool),
  as an exported model's metadata list them.
"""
import numpy as np

#: numpy dtype kinds of labels that a model file holds as they are (after
#: `storable_labels` widens integers to int64 and floats to float64)
STORED_KINDS = "biufU"
_INT64_MAX = np.iinfo(np.int64).max
_WHAT = "cannot be stored in a model file or exported"


def storable_labels(classes):
    """The class labels as a model file and an export hold them.

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
        A fitted forest's ``classes_``.

    Returns
    -------
    values : ndarray of shape (n_classes,)
        The same values as int64 (integers), float64 (other numbers), bool
        or unicode.
    dtype : str
        The dtype to restore them to: ``"object"`` for an object array, else
        numpy's text of ``classes.dtype`` (e.g. ``"<i4"``).

    Raises
    ------
    ValueError
        If a label is not an int, float, str or bool, the labels of an object
        array are of several types, an integer label is above 2**63 - 1, or a
        string label ends in a NUL character. The message is the same for
        saving and exporting.
    """
    classes = np.asarray(classes)
    if classes.dtype.kind in STORED_KINDS:
        return _widened(classes), classes.dtype.str
    values = classes.tolist()
    _check_no_trailing_nul(values)
    plain = np.asarray(values) if values else np.asarray([], dtype=str)
    same = (plain.dtype.kind in STORED_KINDS and
            all(type(a) is type(b) and a == b for a, b in zip(plain.tolist(), values)))
    if classes.dtype.kind != "O" or not same:
        kinds = sorted({type(v).__name__ for v in values})
        raise ValueError(f"class labels of type {', '.join(kinds)} {_WHAT}; use int, float, str "
                         "or bool labels")
    return _widened(plain), "object"


def restored_labels(values, dtype):
    """The labels read from a model file, in the dtype they were fitted with.

    Parameters
    ----------
    values : ndarray
        The file's ``classes`` array (int64, float64, bool or unicode; see
        `check_stored_dtype`).
    dtype : str
        The file's ``classes_dtype``: ``"object"`` or a numpy dtype text.

    Returns
    -------
    ndarray
        The labels; the values are unchanged.

    Raises
    ------
    ValueError
        If there are fewer than two labels, a float label is not finite, the
        labels are not distinct and sorted, or ``dtype`` does not fit them.
    """
    if values.ndim != 1 or values.shape[0] < 2:
        raise ValueError(f"array 'classes' must hold at least two labels, shape {values.shape}")
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        raise ValueError("class labels must be finite")
    if not np.array_equal(np.unique(values), values):
        raise ValueError("class labels must be distinct and sorted")
    if dtype == "object":
        return values.astype(object)
    try:
        restored_dtype = np.dtype(dtype)
    except TypeError:
        restored_dtype = None
    compatible = {"b": "b", "i": "iu", "f": "f", "U": "U"}[values.dtype.kind]
    # the labels were read from the file, so their own width bounds the memory
    if (restored_dtype is None or restored_dtype.kind not in compatible
            or restored_dtype.itemsize > max(values.dtype.itemsize, 16)):
        raise ValueError(f"metadata classes_dtype {dtype!r} does not fit the labels")
    with np.errstate(all="ignore"):
        restored = values.astype(restored_dtype)
    if not np.array_equal(restored, values):
        raise ValueError(f"class labels do not fit their dtype {dtype!r}")
    return restored


def check_stored_dtype(dtype):
    """ValueError unless ``dtype`` is one a model file's ``classes`` array has:
    int64, float64, bool or unicode (what `storable_labels` gives).

    Parameters
    ----------
    dtype : numpy.dtype
        The dtype of the array read from the file.
    """
    if dtype.kind not in "bifU" or (dtype.kind in "if" and dtype.itemsize != 8):
        raise ValueError(f"array 'classes' has dtype {dtype}; expected int64, float64, bool or "
                         "unicode labels")


def plain_labels(classes):
    """The class labels as a JSON list (int, float, str or bool values).

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
        A fitted forest's ``classes_``.

    Returns
    -------
    list

    Raises
    ------
    ValueError
        For labels `storable_labels` refuses.
    """
    return storable_labels(classes)[0].tolist()


def _check_no_trailing_nul(values):
    """numpy's unicode arrays drop trailing NUL characters: refuse what they would change."""
    if any(isinstance(value, str) and value.endswith("\x00") for value in values):
        raise ValueError(f"class labels ending in a NUL character ('\\x00') {_WHAT}")


def _widened(classes):
    """Labels as int64, float64, bool or unicode (the same values)."""
    kind = classes.dtype.kind
    if kind in "iu":
        if kind == "u" and classes.size and classes.max() > _INT64_MAX:
            above = [int(v) for v in classes[classes > _INT64_MAX][:3]]
            raise ValueError(
                f"class labels larger than 2**63 - 1 ({', '.join(map(str, above))}"
                f"{', ...' if np.count_nonzero(classes > _INT64_MAX) > 3 else ''}) {_WHAT}: "
                "both hold integer labels as int64; map the labels to smaller integers or "
                "to str")
        return classes.astype(np.int64)
    if kind == "f":
        return classes.astype(np.float64)
    return classes
