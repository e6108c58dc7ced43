"""What the tree and the forest share: parameters, training-data validation and
the preparation of a fit, in the order data flows through it
(validate -> bin -> grow -> collapse).

`aucforest.tree` and `aucforest._forest` import from here; nothing here imports
them, so data goes down once through a fit and never climbs back.
"""
import copy
import math
from numbers import Integral, Real

import numpy as np
from joblib import cpu_count, effective_n_jobs
from sklearn.utils.multiclass import check_classification_targets

from ._binned import BinnedSplitter
from ._binning import MAX_BINS, BinnedData, bin_features
from ._compat import (Interval, InvalidParameterError, RealNotInt, StrOptions,
                      check_sample_weight, validate_data)
from ._sparse import (SparseBinnedData, SparseColumns, bin_sparse_features, canonical,
                      is_sparse, sparse_distinct_value_tables)
from ._sparse_split import SparseBinnedSplitter, SparseExactSplitter
from ._split import CRITERIA, ExactSplitter
from ._pruning import pruned
from ._tree import MAX_CATEGORIES, build_tree, build_tree_best_first

MAX_SEED = np.iinfo(np.int32).max


# max_depth=None: no bound (build_tree takes an index-sized int)
LARGEST_INDEX = np.iinfo(np.intp).max

# the most leaves a tree of int32 node indices holds (2 L - 1 nodes)
MAX_LEAF_NODES = 2**30


TREE_PARAMETER_CONSTRAINTS = {
    "criterion": [StrOptions(set(CRITERIA))],
    "max_features": [
        Interval(Integral, 1, None, closed="left"),
        Interval(Real, 0.0, 1.0, closed="right"),
        StrOptions({"sqrt", "ceil_sqrt", "log2"}),
        None,
    ],
    # unbounded: grow_tree clips both to what the kernel's index type holds (a larger
    # bound means no bound), so that 2**63 or 2**200 is accepted and means "none"
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    # an int: cases; a float: that fraction of the training cases, rounded up (scikit-learn's)
    "min_samples_split": [Interval(Integral, 2, None, closed="left"),
                          Interval(RealNotInt, 0.0, 1.0, closed="right")],
    "min_samples_leaf": [Interval(Integral, 1, None, closed="left"),
                         Interval(RealNotInt, 0.0, 1.0, closed="neither")],
    # a tree's node indices are int32 (`aucforest._tree.Node`): at most 2**31 - 1 nodes,
    # so 2**30 leaves; a larger bound is a parameter error before any allocation (where
    # scikit-learn, which allocates 2 max_leaf_nodes - 1 nodes up front, runs out of memory)
    "max_leaf_nodes": [Interval(Integral, 2, MAX_LEAF_NODES, closed="both"), None],
    "min_impurity_decrease": [Interval(Real, 0.0, None, closed="left")],
    "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
    "min_weight_fraction_leaf": [Interval(Real, 0.0, 0.5, closed="both")],
    "max_bins": [Interval(Integral, 2, MAX_BINS, closed="both"), None],
    # int32, as the kernel's node sizes: the splitters allocate (nsplit + 2) x
    # n_classes doubles, a size a larger nsplit could overflow (and more draws than
    # a node has distinct values change nothing)
    "nsplit": [Interval(Integral, 1, int(np.iinfo(np.int32).max), closed="both"), None],
    "random_state": ["random_state"],
    "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
}


COUNT_PARAMETERS = ("n_estimators", "max_features", "max_depth", "min_samples_leaf",
                    "min_samples_split", "max_leaf_nodes", "max_samples", "nsplit")


def check_counts_are_not_booleans(estimator):
    """Raise InvalidParameterError for True/False given as a count.

    scikit-learn's constraints take bool as an Integral, so ``n_estimators=True``
    would otherwise reach numpy as a size and fail with an unrelated TypeError
    (and ``predict_min_samples=True`` or ``n_jobs=True`` would silently mean 1).
    """
    for name in (*COUNT_PARAMETERS, "predict_min_samples", "n_jobs"):
        value = getattr(estimator, name, None)
        if isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(estimator).__name__} must be a number, "
                f"got the boolean {bool(value)}.")


TREE_PARAMS = ("criterion", "max_features", "max_depth", "min_samples_split",
               "min_samples_leaf", "min_weight_fraction_leaf", "max_leaf_nodes",
               "min_impurity_decrease", "ccp_alpha", "max_bins", "nsplit")


def tree_params(estimator):
    """The tree-growing parameters of a tree or forest estimator, as a dict."""
    return {name: getattr(estimator, name) for name in TREE_PARAMS}


# The private attributes a fit (in memory, on Dask, from a model file) keeps on a forest;
# every other private attribute is scikit-learn's (tests/test_fit_provenance.py checks it).
FIT_PRIVATE_STATE = frozenset({"_case_draws", "_n_samples_bootstrap", "_oob_source",
                               "_dask_fit_stats"})


def is_fitted_state(name):
    """Whether attribute ``name`` belongs to a fit (dropped by a refit)."""
    return name in FIT_PRIVATE_STATE or (name.endswith("_") and not name.startswith("__"))


def fit_atomically(estimator, fit_into):
    """Fit a staging copy of `estimator` and publish its state in one assignment.

    ``fit_into(staging)`` sets the fitted state on a shallow copy that holds
    nothing of an earlier fit: neither its fitted attributes (names ending in
    "_", scikit-learn's convention) nor the private state a fit keeps
    (`FIT_PRIVATE_STATE`: case draws, the out-of-bag source, a Dask fit's
    counters); the parameters and what scikit-learn itself sets on an
    estimator (``set_output``, metadata requests, a pipeline's callback
    context) stay. Only when it returns is the copy's ``__dict__`` made the
    estimator's, so a fit that raises or is interrupted leaves the previous
    model as it was, and a thread reading the estimator sees either the old
    model or the new one, never a mix.

    Returns
    -------
    estimator
    """
    staging = copy.copy(estimator)
    staging.__dict__ = {name: value for name, value in vars(estimator).items()
                        if not is_fitted_state(name)}
    fit_into(staging)
    estimator.__dict__ = staging.__dict__
    return estimator


def resolve_max_features(max_features, n_features):
    """Number of features drawn per node: "sqrt" (floor, scikit-learn's),
    "ceil_sqrt" (randomForestSRC's mtry), "log2", an int, a fraction of
    n_features, or None (all)."""
    if max_features is None:
        count = n_features
    elif max_features == "sqrt":
        count = math.isqrt(n_features)
    elif max_features == "ceil_sqrt":
        count = math.isqrt(n_features - 1) + 1 if n_features > 0 else 0  # ceil(sqrt(p))
    elif max_features == "log2":
        count = int(np.log2(n_features))
    elif isinstance(max_features, Integral):
        count = int(max_features)
    else:
        count = int(max_features * n_features)
    return max(1, min(count, n_features))


def training_layout(max_bins, X):
    """The memory order `validate_training_data` gives a dense X: "F" (columns
    contiguous) when the fit grows its trees with the exact splitter
    (``max_bins`` None, or "auto" below AUTO_BINNED_ROWS rows), which scans
    the columns of X; None (X's own order, no copy of a float32 X) for the
    binned splitter, which scans bin codes and reads X only to bin it and to
    walk its rows for the out-of-bag sums."""
    try:
        n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
    except TypeError:  # not array-like: validation names the problem
        return "F"
    return "F" if resolve_max_bins(max_bins, n_rows) is None else None


def check_two_classes(classes):
    """ValueError unless the sorted labels ``classes`` hold two classes or more
    (the in-memory fit and the fit on dask collections)."""
    if classes.shape[0] < 2:
        raise ValueError(
            f"y has only one class ({classes.tolist()[0]!r}); a classifier needs at least two classes.")


def check_some_weight(any_positive):
    """ValueError unless some sample weight is positive."""
    if not any_positive:
        raise ValueError("sample_weight is zero for every sample; at least one must be positive.")


def validate_training_data(estimator, X, y, sample_weight, order="F"):
    """Validate fit inputs with scikit-learn's utilities.

    Returns X as float32 in the given order ("F": columns contiguous, what
    the exact splitter scans; None: as it came, see `training_layout`; a
    sparse X as a canonical CSC matrix, its columns' stored entries), y, the
    encoded classes, and the sample weights rescaled
    to a maximum of 1 (None when none were given: all one, and no n-sized
    vector of ones). NaN in X marks a missing value; raises ValueError for
    infinite X, fewer than two classes, and negative, non-finite or all-zero
    weights.
    """
    X, y = validate_data(estimator, X, y, dtype=np.float32, order=order,
                         accept_sparse="csc", ensure_all_finite="allow-nan",
                         multi_output=False)
    if is_sparse(X):
        X = canonical(X, "csc")
    check_classification_targets(y)
    classes, y_encoded = np.unique(y, return_inverse=True)
    check_two_classes(classes)
    y_encoded = y_encoded.astype(np.intp, copy=False)
    if sample_weight is None:
        return X, y, classes, y_encoded, None
    weights = check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    check_some_weight(np.any(weights > 0))
    # Fits depend on weights only up to scale: rescale to a maximum of 1 before
    # any sum, so that weights such as 1e307 cannot overflow.
    top = weights.max()  # not in place: weights may be the caller's array
    return X, y, classes, y_encoded, (weights if top == 1.0 else weights / top)


# max_bins="auto": the binned splitter (MAX_BINS bins) from this many training rows
# on, the exact splitter below (README, "Speed": same test AUC, faster fits;
# benchmarks/results/auto_bins_grid). Below it stay the small imbalanced sets of
# issue 10's evidence.
AUTO_BINNED_ROWS = 10_000


def resolve_max_bins(max_bins, n_samples):
    """The max_bins a fit on n_samples rows uses: "auto" is MAX_BINS from
    AUTO_BINNED_ROWS rows on and None (the exact splitter) below."""
    if max_bins != "auto":
        return max_bins
    return MAX_BINS if n_samples >= AUTO_BINNED_ROWS else None


def training_matrix(X, max_bins, random_state, is_categorical=None, n_jobs=None):
    """What the trees of one fit grow on: X itself (exact splitter, max_bins=None)
    or its bin codes (binned splitter), computed once per fit; for a sparse X
    its stored entries (`SparseColumns`) or their codes (`SparseBinnedData`).

    random_state (a numpy RandomState) draws the rows used for the quantiles
    when X has many rows; it is not used when max_bins is None. The
    categorical features (``is_categorical``, a boolean mask or None) get one
    bin per level. A dense X is binned by the fit's threads (``n_jobs``, at
    most the machine's cores); the codes do not depend on their number.
    """
    if is_sparse(X):
        return SparseColumns(X) if max_bins is None else bin_sparse_features(X, max_bins,
                                                                            random_state)
    if max_bins is None:
        return X
    return bin_features(X, max_bins, random_state, is_categorical,
                        n_threads=max(1, min(effective_n_jobs(n_jobs), cpu_count())))


def check_categorical_codes(X, is_categorical, feature_names=None, sparse="refuse"):
    """Check that the categorical columns of X hold level codes: integers in
    0..MAX_CATEGORIES - 1 (NaN: missing); ValueError naming the first feature
    that does not.

    A sparse X is refused when there are categorical features (fit: the
    sparse splitters split ordered features only), or, with
    ``sparse="read"`` (predict), checked as ``X.toarray()`` would be: same
    check, same message.
    """
    if is_categorical is None:
        return
    if is_sparse(X) and np.any(is_categorical) and sparse == "refuse":
        raise ValueError("categorical_features are not supported with a sparse X; pass "
                         "X.toarray() or a dense array")
    categorical = np.flatnonzero(is_categorical)
    if is_sparse(X) and categorical.size:  # those columns once, each then read whole
        X, categorical = canonical(X[:, categorical], "csc"), np.arange(categorical.size)
    for f, feature in zip(categorical, np.flatnonzero(is_categorical)):
        column = X[:, [f]].toarray().ravel() if is_sparse(X) else np.asarray(X[:, f])
        observed = column[~np.isnan(column)]
        if observed.size == 0:
            continue
        name = f"feature {feature}" + (f" ({feature_names[feature]!r})"
                                       if feature_names is not None else "")
        bad = (observed < 0) | (observed >= MAX_CATEGORIES) | (observed != np.floor(observed))
        if bad.any():
            raise ValueError(
                f"categorical {name} must hold level codes, integers from 0 to "
                f"{MAX_CATEGORIES - 1} (at most {MAX_CATEGORIES} levels; NaN for missing); "
                f"found {observed[bad][0]!r}")


# a feature looks up its node's distinct values in a table when more than this
# share of its observed values repeat another (see distinct_value_tables)
TIED_SHARE = 0.01


def distinct_value_tables(X):
    """The sorted distinct values of each column of float32 X with many ties
    (more than TIED_SHARE of its observed values repeat another; missing
    values aside), for the exact splitter's ``nsplit`` draws.

    Returns ``(values, offsets)``: column j's table is
    ``values[offsets[j]:offsets[j + 1]]``, empty for the other columns (in
    which nearly every case has a value of its own, so that a case drawn
    uniformly gives a distinct value drawn uniformly, exactly so without
    ties). Computed once per fit.
    """
    if is_sparse(X):
        X = SparseColumns(X)
    if isinstance(X, SparseColumns):
        return sparse_distinct_value_tables(X, TIED_SHARE)
    tables = []
    for j in range(X.shape[1]):
        column = np.sort(X[:, j])  # NaN last
        observed = column[:np.count_nonzero(~np.isnan(column))]
        first = np.concatenate([[True], observed[1:] != observed[:-1]])  # of each value
        repeats = observed.size - np.count_nonzero(first)
        tables.append(observed[first] if repeats > TIED_SHARE * observed.size
                      else observed[:0])
    offsets = np.concatenate([[0], np.cumsum([t.size for t in tables])]).astype(np.intp)
    return np.concatenate(tables).astype(np.float32), offsets


def resolve_min_samples(min_samples_split, min_samples_leaf, n_samples):
    """(min_samples_split, min_samples_leaf) as case counts, as scikit-learn's
    trees resolve them: a float is that fraction of the n_samples training
    cases rounded up; min_samples_split is at least 2."""
    if isinstance(min_samples_leaf, Real) and not isinstance(min_samples_leaf, Integral):
        min_samples_leaf = int(math.ceil(min_samples_leaf * n_samples))
    if isinstance(min_samples_split, Real) and not isinstance(min_samples_split, Integral):
        min_samples_split = max(2, int(math.ceil(min_samples_split * n_samples)))
    return int(min_samples_split), int(min_samples_leaf)


# Order a categorical feature's levels once per tree (on its sample, at the root)
# instead of in every node: the variant benchmarks/categorical_order.py compares.
_ORDER_LEVELS_ONCE = False
# Under AUC with 3 to 5 classes in a node, scan one order of the levels per ranking
# of the classes (exact over all partitions); False: the principal-component order
# only (the benchmark's third variant).
_AUC_CLASS_RANKINGS = True


def grow_tree(X, y_encoded, weights, n_classes, *, criterion, max_features, max_depth,
              min_samples_leaf, min_weight_fraction_leaf, max_bins, nsplit, seed,
              tables=None, is_categorical=None, min_samples_split=2, max_leaf_nodes=None,
              min_impurity_decrease=0.0, ccp_alpha=0.0, splitter="best"):
    """Grow one compiled tree on float32 Fortran-ordered X (exact splitter) or
    on `BinnedData` from `training_matrix` (binned splitter), or on their
    sparse counterparts `SparseColumns` and `SparseBinnedData`. ``tables``: the
    `distinct_value_tables` of X when nsplit is set (computed here if None).
    ``is_categorical``: boolean mask of the categorical features (their
    values level codes, checked by `check_categorical_codes`; binned with
    the same mask), or None: none. Their levels are ordered by class
    composition in each node and split as ordered (`aucforest._split`).

    max_leaf_nodes set: best-first growth (`build_tree_best_first`), else depth
    first (`build_tree`); ccp_alpha > 0: the grown tree is then pruned
    (`aucforest._pruning.pruned`). splitter="random": one threshold drawn
    uniformly per examined feature (exact splitter only, without nsplit).

    Weights are rescaled to a maximum of 1 (splits and leaf proportions do not
    change under rescaling), so that weights such as 1e300 or 1e-300 neither
    overflow nor underflow in the sums of squares.
    """
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    top = weights.max()
    if top != 1.0:  # a forest's tree weights come rescaled: no second copy
        weights = weights / top
    min_weight_leaf = min_weight_fraction_leaf * weights.sum() if min_weight_fraction_leaf else 0.0
    min_samples_split, min_samples_leaf = resolve_min_samples(
        min_samples_split, min_samples_leaf, weights.shape[0])
    # a leaf bound of n cases already forbids every split: larger bounds (such as
    # 2**63) mean the same and must not overflow 2 * bound in C; likewise max_depth
    settings = (n_classes, CRITERIA[criterion], resolve_max_features(max_features, X.shape[1]),
                min(min_samples_leaf, weights.shape[0]), min_weight_leaf, seed)
    # a node has at most n distinct values: more draws than n scan them all too, and
    # the splitters' buffers grow with nsplit
    nsplit = min(nsplit, weights.shape[0]) if nsplit else 0
    if splitter == "random" and (nsplit or isinstance(X, (BinnedData, SparseBinnedData))):
        raise ValueError("splitter='random' draws one threshold per feature between the "
                         "node's smallest and largest value; it needs max_bins=None and "
                         "nsplit=None")
    if is_categorical is not None and not np.any(is_categorical):
        is_categorical = None
    categorical = dict(is_categorical=is_categorical, order_once=_ORDER_LEVELS_ONCE,
                       rank_classes=_AUC_CLASS_RANKINGS)
    if isinstance(X, BinnedData):
        binned_as = np.zeros(X.shape[1], dtype=bool) if X.is_categorical is None \
            else X.is_categorical
        asked = np.zeros(X.shape[1], dtype=bool) if is_categorical is None \
            else np.asarray(is_categorical, dtype=bool)
        if not np.array_equal(binned_as, asked):
            raise ValueError("the binned data were not binned with these categorical features")
        node_splitter = BinnedSplitter(X.codes, X.edges, X.n_bins, y_encoded, weights,
                                       *settings, nsplit=nsplit, **categorical)
    elif isinstance(X, (SparseBinnedData, SparseColumns)) and is_categorical is not None:
        raise ValueError("categorical_features are not supported with a sparse X; pass "
                         "X.toarray() or a dense array")
    elif isinstance(X, SparseBinnedData):
        node_splitter = SparseBinnedSplitter(X.entry_codes, X.indices, X.indptr,
                                             *X.row_structure, X.zero_codes, X.edges,
                                             X.n_bins, X.shape[0], y_encoded, weights,
                                             *settings, nsplit=nsplit)
    elif isinstance(X, SparseColumns):
        if nsplit and tables is None:
            tables = distinct_value_tables(X)
        node_splitter = SparseExactSplitter(X.data, X.indices, X.indptr, *X.row_structure,
                                            X.shape[0], y_encoded, weights, *settings,
                                            nsplit=nsplit, tables=tables,
                                            random_threshold=splitter == "random")
    else:
        if nsplit and tables is None:
            tables = distinct_value_tables(X)
        node_splitter = ExactSplitter(X, y_encoded, weights, *settings, nsplit=nsplit,
                                      tables=tables, random_threshold=splitter == "random",
                                      **categorical)
    depth = LARGEST_INDEX if max_depth is None else min(max_depth, LARGEST_INDEX)
    min_samples_split = min(min_samples_split, LARGEST_INDEX)
    if max_leaf_nodes is None:
        tree_ = build_tree(node_splitter, depth, min_samples_split, min_impurity_decrease)
    else:
        tree_ = build_tree_best_first(node_splitter, depth, min(max_leaf_nodes, LARGEST_INDEX),
                                      min_samples_split, min_impurity_decrease)
    return pruned(tree_, ccp_alpha, criterion) if ccp_alpha > 0 else tree_


# Criteria under which a tree's impurity is theta of each node's split (build_tree)
SPLIT_STATISTIC_CRITERIA = ("auc", "auc_ecp")


def collapsed(tree_, min_samples, criterion):
    """`Tree.collapsed` to min_samples, for a tree grown under `criterion`."""
    return tree_.collapsed(min_samples, split_impurity=criterion in SPLIT_STATISTIC_CRITERIA)


# Training rows the trees of one parallel task should add up to (`trees_per_task`).
ROWS_PER_TASK = 20_000


def trees_per_task(n_samples, n_estimators, n_jobs):
    """Trees one parallel task grows: enough for ROWS_PER_TASK training rows
    (one tree from that many rows on), and at most an eighth of each
    worker's share, so that the last tasks still balance.

    joblib's threads take one task at a time, each at a cost of about 0.1 ms
    of the GIL: tasks of one small tree (2,000 rows: 2-3 ms) spent much of
    their time waiting for it, and two threads grew 500 of them no faster
    than one.
    """
    n_workers = effective_n_jobs(n_jobs)
    if n_workers <= 1:
        return 1
    by_rows = -(-ROWS_PER_TASK // max(n_samples, 1))
    return max(1, min(by_rows, n_estimators // (8 * n_workers)))
