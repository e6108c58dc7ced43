"""Before the trees of a fit on dask collections grow: the inputs checked,
the bin edges sampled, every partition binned where it is, the classes'
priors and the per-tree draw rates (`prepare`)."""
import itertools
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional

import numpy as np

from .._base import (MAX_SEED, check_counts_are_not_booleans, check_some_weight,
                     check_two_classes, tree_params)
from .._binned import PADDED_EDGES, padded_edges
from .._binning import MAX_BINS, set_feature_edges
from .._categories import resolve_fitted
from .._decision_rule import DecisionRule
from .._prior_shift import draw_class_weights_of_sums
from .._sampling import CaseDraws, class_weights_of_counts
from ._blocks import block_prior, block_stats, encode_block, identity
from ._draws import hash_key
from ._inputs import as_rows, check_supported, frame_categories
from ._payloads import FitContext

# A drawn multiplicity is at most 255 (uint8), and weights are rounded to
# multiples of 2**-S with S = WEIGHT_BITS - 8 - bit_length(n).
WEIGHT_BITS = 62

# the counter-based streams of a fit's keys
STREAM_DRAWS, STREAM_NODES, STREAM_EDGES, STREAM_OOB = 1, 2, 3, 4


class Draws(NamedTuple):
    """How each row is drawn in each tree (`draw_counts`)."""

    keys: np.ndarray  # uint64 per tree: the key of its rows' draws
    rates: np.ndarray  # (trees, classes): Bernoulli or Poisson rate of a row's draw
    poisson: bool  # draws with replacement (Poisson), else Bernoulli


@dataclass(frozen=True, eq=False)
class Prepared:
    """What the growth of the trees reads of the prepared fit.

    Attributes
    ----------
    n, p : int
        Rows and features.
    seeds : ndarray
        Each tree's seed.
    fit_key : int
        The fit's key (edge sample, node-size choice's rows).
    max_bins : int
        Bins of an ordered feature, at most.
    classes, class_counts, positive : ndarray
        The classes, their rows and their rows of positive weight.
    ctx : FitContext
        What every task reads; ``ctx_f`` the future of it on the cluster.
    n_codes : int
        Bin codes (the value bins and the missing one).
    blocks : list of Future
        The binned partitions (`Block`), in row order.
    block_worker : list
        The worker holding each partition (a hint).
    worker_sets : list of (worker, list of int)
        The partitions grouped by the worker holding them.
    draws : Draws
        Each tree's draw key and rates.
    """

    n: int
    p: int
    seeds: np.ndarray
    fit_key: int
    max_bins: int
    classes: np.ndarray
    class_counts: np.ndarray
    positive: np.ndarray
    ctx: FitContext
    ctx_f: Any
    n_codes: int
    blocks: list
    block_worker: list
    worker_sets: list
    draws: Optional[Draws] = None

    @property
    def n_classes(self):
        """Classes."""
        return self.classes.shape[0]


def prepare(session, forest, X, y, sample_weight, tuning):
    """Validate, sample the edges, bin every partition where it is, set the
    forest's class and feature attributes.

    Parameters
    ----------
    session : Session
        The fit's client.
    forest : AUCForestClassifier
        The estimator being fitted (its staging copy).
    X, y, sample_weight : dask collections
        The rows, classes and weights.
    tuning : Tuning
        The fit's knobs.

    Returns
    -------
    Prepared
    """
    import dask
    from sklearn.utils import check_random_state
    from sklearn.utils.multiclass import check_classification_targets

    check_counts_are_not_booleans(forest)
    forest._check_sampling_params()
    check_supported(forest)
    is_categorical, categories = frame_categories(X, forest.categorical_features)
    X, y, w, names = as_rows(X, y, sample_weight, categories)
    n, p = X.shape
    if n == 0 or p == 0:
        raise ValueError(f"X has shape {X.shape}; at least one row and one feature "
                         "are needed")
    is_categorical, categories = resolve_fitted(forest.categorical_features, p,
                                                is_categorical, categories)
    random_state = check_random_state(forest.random_state)
    seeds = random_state.randint(MAX_SEED, size=forest.n_estimators)
    fit_key = int(random_state.randint(MAX_SEED))
    max_bins = MAX_BINS if forest.max_bins == "auto" else int(forest.max_bins)

    starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(np.int64)
    X_blocks = X.to_delayed().ravel()
    y_blocks = y.to_delayed().ravel()
    w_blocks = [None] * len(X_blocks) if w is None else list(w.to_delayed().ravel())
    sample_rate = min(1.0, tuning.EDGE_SAMPLE_ROWS / n)
    edge_key = hash_key(fit_key, STREAM_EDGES)
    categorical = is_categorical if is_categorical.any() else None
    stats = session.gather(session.client.compute([
        dask.delayed(block_stats)(xb, yb, wb, int(s), edge_key, sample_rate, categorical, names)
        for xb, yb, wb, s in zip(X_blocks, y_blocks, w_blocks, starts)]))
    if any(s.infinite for s in stats):
        raise ValueError("Input X contains infinity or a value too large for "
                         "dtype('float32').")
    labels = np.concatenate([s.labels for s in stats])
    check_classification_targets(labels)
    classes = np.unique(labels)
    check_two_classes(classes)
    K = classes.shape[0]
    counts = np.zeros(K, dtype=np.int64)
    positive = np.zeros(K, dtype=np.int64)
    for s in stats:
        counts[np.searchsorted(classes, s.labels)] += s.counts
        labels_pos, counts_pos = s.positive
        positive[np.searchsorted(classes, labels_pos)] += counts_pos
    w_max = 1.0
    if w is not None:  # each partition's checked as in memory (`block_stats`)
        w_max = max(s.w_max for s in stats)
        check_some_weight(w_max > 0)
    class_weights = class_weights_of_counts(forest.class_weight, classes, counts)
    weighted = w is not None or class_weights is not None
    # integer weights: multiples of 2**-S, S leaving room for n rows x 255 draws
    weight_bits = WEIGHT_BITS - 8 - int(n).bit_length() if weighted else 0
    if weighted and weight_bits < 20:
        raise ValueError(f"{n} rows leave too few bits for exact weight sums")
    sample = np.concatenate([s.sample for s in stats])
    edges = np.full((p, max_bins), np.inf)
    n_bins = np.empty(p, dtype=np.intp)
    # the table `encode_features` searches (categorical: unused), as bin_features does
    padded = np.full((p, PADDED_EDGES), np.inf, dtype=np.float32)
    for j, f in enumerate(np.flatnonzero(~is_categorical)):
        padded[f] = padded_edges(set_feature_edges(f, np.array(sample[:, j]), max_bins, edges,
                                                   n_bins))
    # a categorical feature: one bin per level (its codes are the levels), edges unused
    largest = np.max([s.largest_level for s in stats], axis=0, initial=-1)
    for j, f in enumerate(np.flatnonzero(is_categorical)):
        n_bins[f] = max(1, int(largest[j]) + 1, len(categories[f] or ()))
    ctx = FitContext(edges=edges, n_bins=n_bins, padded=padded, classes=classes, w_max=w_max,
                     weight_unit=2.0 ** weight_bits, weighted=weighted,
                     class_weights=class_weights, balanced=forest.balanced_bootstrap,
                     n_classes=K, weight_scale=2.0 ** -weight_bits,
                     params=dict(tree_params(forest), max_bins=max_bins),
                     is_categorical=categorical)
    # a task, not scattered data: a worker lost mid-fit recomputes it
    ctx_f = session.submit(identity, ctx, name="context")
    blocks = session.client.compute([
        dask.delayed(encode_block)(xb, yb, wb, int(s), ctx_f)
        for xb, yb, wb, s in zip(X_blocks, y_blocks, w_blocks, starts)])
    priors = session.gather([session.submit(block_prior, b, name="prior") for b in blocks])
    # partitions grouped by the worker holding them, for the sums' first level (a
    # hint: a partition recomputed elsewhere changes where sums run, not their value)
    where = session.client.who_has(blocks)
    block_worker = [min(where.get(b.key, ()), default=None) for b in blocks]
    # (and for the finishing tasks' takes: one per (worker, group))
    order = sorted(range(len(blocks)), key=lambda i: (block_worker[i] or "", i))
    worker_sets = [(worker, list(indices)) for worker, indices in itertools.groupby(
        order, key=lambda i: block_worker[i])]
    totals = np.sum(priors, axis=0)
    forest.classes_, forest.n_classes_ = classes, K
    DecisionRule.parse(forest.decision, K)  # a bad rule fails before the trees grow
    forest.class_prior_ = (np.full(K, 1.0 / K) if forest.balanced_bootstrap
                           else totals / totals.sum())
    forest.draw_class_weights_ = draw_class_weights_of_sums(
        np.ones(K) if class_weights is None else class_weights, positive,
        totals / totals.sum(), forest.bootstrap and forest.balanced_bootstrap)
    forest.n_features_in_ = p
    if names is not None:
        forest.feature_names_in_ = names
    elif "feature_names_in_" in vars(forest):
        del forest.feature_names_in_
    forest.is_categorical_, forest.categories_ = is_categorical, categories
    forest.max_bins_ = max_bins
    return Prepared(n=n, p=p, seeds=seeds, fit_key=fit_key, max_bins=max_bins,
                    classes=classes, class_counts=counts, positive=positive, ctx=ctx,
                    ctx_f=ctx_f, n_codes=int(n_bins.max()) + 1, blocks=blocks,
                    block_worker=block_worker, worker_sets=worker_sets,
                    draws=draw_rates(forest, positive, n, seeds))


def draw_rates(forest, positive, n, seeds):
    """Per tree and class: Bernoulli or Poisson rate of each row's draw.

    Parameters
    ----------
    forest : AUCForestClassifier
        Its bootstrap parameters.
    positive : ndarray of int64
        Rows of positive weight per class.
    n : int
        Rows.
    seeds : ndarray
        The trees' seeds.

    Returns
    -------
    Draws
    """
    K = positive.shape[0]
    draws = CaseDraws(forest, np.zeros(0, dtype=np.intp), None)
    poisson = bool(forest.bootstrap and forest.replacement)
    if not forest.bootstrap:
        rate = np.ones(K)
    elif forest.balanced_bootstrap:
        present = positive > 0
        per_class = draws._n_draws(int(positive[present].min()))
        rate = np.where(present, per_class / np.maximum(positive, 1), 0.0)
    else:
        rate = np.full(K, draws._n_draws(n) / n)
    keys = np.array([hash_key(int(s), STREAM_DRAWS) for s in seeds], dtype=np.uint64)
    return Draws(keys, np.tile(rate, (len(seeds), 1)), poisson)
