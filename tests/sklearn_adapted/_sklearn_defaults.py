"""scikit-learn's classifier names bound to aucforest's estimators under
scikit-learn's defaults (the variant sklearn_defaults of _adapted.py)."""
from _estimators import (EXTRA_TREE_SKLEARN_DEFAULTS, FOREST_SKLEARN_DEFAULTS,
                         TREE_SKLEARN_DEFAULTS, estimators)

RandomForestClassifier, DecisionTreeClassifier, ExtraTreeClassifier = estimators(
    __name__, FOREST_SKLEARN_DEFAULTS, TREE_SKLEARN_DEFAULTS, EXTRA_TREE_SKLEARN_DEFAULTS)
