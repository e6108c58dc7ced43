"""Safe model files: a fitted forest as one versioned ``.npz`` of plain arrays.

A model file is a zip of ``.npy`` arrays written by
:func:`numpy.savez_compressed`. It holds numbers, strings and one JSON
document, never pickled objects, and :func:`load` opens it with
``allow_pickle=False``: opening a model file never runs code. Loading checks
everything it reads (format version, array names, dtypes and shapes, node
indices, class labels) and raises :class:`ValueError` naming the first
problem, so a truncated, corrupted or crafted file cannot yield a forest
that misbehaves later. Only regular files are read, and the work of
loading (inflated bytes plus a cost per tree and per declared feature) is
bounded by the file's size before the arrays are read; :func:`save` writes
the arrays uncompressed when compression would break that bound (and pads
the metadata when even that would), so every file it writes loads.

The package: :mod:`aucforest.io._format` (the layout of format version 1, array
names, dtypes and limits), :mod:`aucforest.io._write` (:func:`save`) and
:mod:`aucforest.io._read` (:func:`load`, :func:`read_model` and the checks).
It sits above the estimators: they never import it, and ``aucforest.save`` /
``aucforest.load`` are these functions.
"""
from ._format import FORMAT_NAME, FORMAT_VERSION, node_array_dtypes
from ._read import ModelFileError, SavedModel, load, read_model
from ._write import forest_to_arrays, save, write_atomically

__all__ = ["save", "load", "read_model", "SavedModel", "ModelFileError", "forest_to_arrays",
           "write_atomically", "node_array_dtypes"]

# doctest.testmod(aucforest.io) runs the examples of the functions it re-exports
__test__ = {name: globals()[name] for name in __all__}
