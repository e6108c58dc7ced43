"""aucforest: random forests that split on the multiclass AUC statistic.

Public names: AUCForestClassifier, AUCTreeClassifier,
auc_split_statistic, load (safe model files), ColumnEncoding (the command
line's column encoding, saved with its models), and the evaluation tools in
aucforest.metrics.
"""
from ._encoding import ColumnEncoding
from ._forest import AUCForestClassifier
from ._split import auc_split_statistic
from .io import load
from .tree import AUCTreeClassifier

__version__ = "0.1.0"

__all__ = ["AUCForestClassifier", "AUCTreeClassifier", "ColumnEncoding", "auc_split_statistic",
           "load", "__version__"]
