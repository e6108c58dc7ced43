"""Out-of-bag inspection of a fitted forest, and its SHAP values.

Permutation variable importance (VIMP) on the out-of-bag cases, its
subsampling confidence intervals (Ishwaran & Lu 2019) and the OOB score
against the number of trees, as randomForestSRC users know them, for an
`AUCForestClassifier`. Out-of-bag quantities are defined on the training
data: pass the training X, y again, rows in the order of the fit. Each
tree's drawn cases are regenerated from its seed
(`AUCForestClassifier.estimators_samples_`).

SHAP values of the class probabilities (exact path-dependent TreeSHAP,
Lundberg et al. 2020) need no training data: `shap_values`, and `to_shap`
for the ``shap`` package's plots and explainer.
"""
from ._curve import oob_curve
from ._intervals import ImportanceIntervals, importance_intervals
from ._permutation import oob_importance
from ._plot import plot_importance, plot_oob_curve
from ._shap import shap_values, to_shap

__all__ = ["oob_importance", "importance_intervals", "oob_curve", "ImportanceIntervals",
           "plot_importance", "plot_oob_curve", "shap_values", "to_shap"]
