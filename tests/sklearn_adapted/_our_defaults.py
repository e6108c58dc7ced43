"""scikit-learn's classifier names bound to aucforest's estimators under
aucforest's own defaults (the variant our_defaults of _adapted.py)."""
from _estimators import EXTRA_TREE_OUR_DEFAULTS, estimators

RandomForestClassifier, DecisionTreeClassifier, ExtraTreeClassifier = estimators(
    __name__, {}, {}, EXTRA_TREE_OUR_DEFAULTS)
