"""AUC evaluation toolkit.

Binary and multiclass AUC, ROC curves, DeLong intervals and tests, the
binormal model, bootstrap (.632/.632+) and closed-form Bayesian AUC
estimators, metrics for imbalanced classes and reliability curves. Each function documents the
formula and the paper it implements; results are small named tuples, as in
``scipy.stats``.
"""
from ._auc import auc, multiclass_auc
from ._bayes import bayesian_auc
from ._binormal import BinormalROC, binormal_auc, binormal_roc
from ._bootstrap import BootstrapAUCResult, bootstrap_auc
from ._delong import AUCInterval, DeLongTest, auc_ci, auc_test
from ._imbalance import ImbalanceReport, gmean_score, imbalance_report, oob_imbalance_report
from ._plot import plot_reliability, plot_roc
from ._reliability import ReliabilityCurve, reliability_curve
from ._roc import ROCCurve, ThresholdResult, roc_curve
from ._threshold import optimal_threshold

__all__ = [
    "auc",
    "multiclass_auc",
    "roc_curve",
    "auc_ci",
    "auc_test",
    "binormal_auc",
    "binormal_roc",
    "optimal_threshold",
    "bootstrap_auc",
    "bayesian_auc",
    "plot_roc",
    "reliability_curve",
    "plot_reliability",
    "gmean_score",
    "imbalance_report",
    "oob_imbalance_report",
    "AUCInterval",
    "BinormalROC",
    "BootstrapAUCResult",
    "DeLongTest",
    "ImbalanceReport",
    "ReliabilityCurve",
    "ROCCurve",
    "ThresholdResult",
]
