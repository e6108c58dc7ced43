"""scikit-learn's classifier names bound to aucforest's estimators under
aucforest's own defaults (the adapted tests import them from here)."""
from _estimators import EXTRA_TREE_OUR_DEFAULTS, estimators

RandomForestClassifier, DecisionTreeClassifier, ExtraTreeClassifier = estimators(
    __name__, {}, {}, EXTRA_TREE_OUR_DEFAULTS)
