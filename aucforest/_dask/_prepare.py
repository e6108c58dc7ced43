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
from ._blocks import block_prior, encode_group, group_stats, identity
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
        The binned blocks (`Block`: a partition, or consecutive small ones
        together, `partition_groups`), in row order.
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
    # consecutive small partitions are read together: one task per group from here on
    groups = partition_groups(session, X_blocks, X.chunks[0], tuning)

    def each_group(fn, *args):
        """fn on each group's partitions, on the worker holding most of their rows."""
        return computed(session, groups, [dask.delayed(fn)(
            [X_blocks[i] for i in indices], [y_blocks[i] for i in indices],
            None if w is None else [w_blocks[i] for i in indices], int(starts[indices[0]]),
            *args) for indices, _ in groups])
    stats = session.gather(each_group(group_stats, edge_key, sample_rate, categorical, names))
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
    blocks = each_group(encode_group, ctx_f)
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


def partition_groups(session, X_blocks, rows, tuning):
    """The partitions in groups of consecutive ones (`block_groups`), each
    binned as one block: every task of the fit runs once per block, and a
    task costs the scheduler and a worker milliseconds whatever its rows, so
    that many small partitions cost no more tasks than a few large ones.
    Where the partitions are (when in memory) places the groups: the rows
    of a worker's runs of partitions stay there. The forest is the same (it
    does not depend on the partitioning).

    Returns [(partition indices, worker or None)] in row order."""
    n_workers = max(1, len(session.client.scheduler_info().get("workers", ())))
    target = block_rows(sum(rows), n_workers, tuning)
    session.stats.partitions = len(rows)
    if all(a + b > target for a, b in zip(rows, rows[1:])):  # none to put together
        groups = [([i], None) for i in range(len(rows))]
    else:
        keys = [block.key for block in X_blocks]
        try:  # the workers holding the partitions, if they are in memory
            where = session.client.sync(session.client.scheduler.who_has, keys=keys)
        except Exception:  # placement is a hint only
            where = {}
        groups = block_groups(rows, [min(where.get(key) or (), default=None) for key in keys],
                              target)
    session.stats.blocks = len(groups)
    return groups


def computed(session, groups, tasks):
    """The futures of ``tasks`` (one per group), each on its group's worker
    while it lives (loosely: elsewhere if it is lost)."""
    futures = [None] * len(tasks)
    for worker in {worker for _, worker in groups}:
        at = [g for g, (_, w) in enumerate(groups) if w == worker]
        placed = {} if worker is None else {"workers": [worker], "allow_other_workers": True}
        for g, future in zip(at, session.client.compute([tasks[g] for g in at], **placed)):
            futures[g] = future
    return futures


def block_rows(n, n_workers, tuning):
    """Rows a merged block holds at most: ``BLOCK_ROWS``, and fewer on small
    data, which keeps ``BLOCKS_PER_WORKER`` blocks per worker."""
    return max(1, min(tuning.BLOCK_ROWS, -(-n // (n_workers * tuning.BLOCKS_PER_WORKER))))


def block_groups(rows, workers, target):
    """Consecutive partitions grouped into blocks of at most ``target`` rows
    (a larger partition alone), each placed on the worker holding most of
    its rows. A block ends where the worker holding the partitions changes
    once it has ``target / 2`` rows, so that runs of a worker's partitions
    stay where they are and only the small runs between them move.

    Parameters
    ----------
    rows : sequence of int
        Rows of each partition, in row order.
    workers : sequence
        The worker holding each partition (None: unknown).
    target : int
        Rows of a block, at most.

    Returns
    -------
    list of (list of int, worker)
        The partitions of each block and its worker.
    """
    groups, held, total = [], [], 0
    for i, (r, worker) in enumerate(zip(rows, workers)):
        if groups and total + r <= target and (workers[i - 1] == worker
                                              or 2 * total < target):
            groups[-1].append(i)
            held[-1][worker] = held[-1].get(worker, 0) + r
            total += r
        else:
            groups.append([i])
            held.append({worker: r})
            total = r
    return [(indices, max(by_worker, key=lambda w: (by_worker[w], w is not None)))
            for indices, by_worker in zip(groups, held)]


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
