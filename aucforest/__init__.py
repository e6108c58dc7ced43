"""aucforest: random forests that split on the multiclass AUC statistic.

Public names only; see DESIGN section 5.
"""
__version__ = "0.1.0"
