"""aucforest: random forests that split on the multiclass AUC statistic.

Public names: AUCForestClassifier, AUCTreeClassifier,
auc_split_statistic, save and load (safe model files, the only way into them),
ColumnEncoding (the command line's column encoding, saved with its models), and
the evaluation tools in aucforest.metrics; to_onnx and to_treelite export a forest
to ONNX and treelite.
"""
from ._encoding import ColumnEncoding
from ._forest import AUCForestClassifier
from ._split import auc_split_statistic
from ._version import __version__
from .export import to_onnx, to_treelite
from .io import load, save
from .tree import AUCTreeClassifier

__all__ = ["AUCForestClassifier", "AUCTreeClassifier", "ColumnEncoding", "auc_split_statistic",
           "load", "save", "to_onnx", "to_treelite", "__version__"]
