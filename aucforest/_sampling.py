"""How each tree draws its cases and weights them (the bootstrap as multiplicities;
X is never copied)."""
import threading
from numbers import Integral, Real

import numpy as np
from sklearn.utils.class_weight import compute_sample_weight

from ._base import MAX_SEED

# Share of the cases each tree draws without replacement (randomForestSRC's default
# sampsize for samptype="swor": about the share of distinct cases in a bootstrap).
SUBSAMPLE_FRACTION = 0.632

INT32_MAX = np.iinfo(np.int32).max


class CaseDraws:
    """How each tree draws its cases, without the data.

    Kept on the fitted forest (``_case_draws``) so that `estimators_samples_`
    regenerates every tree's draw from the tree's seed instead of storing it:
    the sampling parameters, n_samples and, for the balanced bootstrap, the
    cases of each class (those with positive sample weight). The size of the
    draws is checked once, when the object is made, before any tree draws.
    """

    # With replacement an int max_samples may draw at most this many times the
    # training cases per tree (per class under the balanced bootstrap): each
    # draw is an 8-byte index while the tree's sample is drawn, and far fewer
    # draws already weigh every case almost equally.
    MAX_DRAWS_PER_CASE = 100

    def __init__(self, forest, y_encoded, sample_weight):
        self.bootstrap, self.max_samples = forest.bootstrap, forest.max_samples
        self.replacement, self.balanced = forest.replacement, forest.balanced_bootstrap
        self.n_samples = y_encoded.shape[0]
        self.class_members = None
        if self.balanced:
            positive = True if sample_weight is None else sample_weight > 0
            members = [np.flatnonzero((y_encoded == k) & positive)
                       for k in range(forest.n_classes_)]
            self.class_members = [m for m in members if m.size]
        if self.bootstrap and self.n_samples:  # a draw too large fails here, not in a tree
            self._n_draws(min(m.size for m in self.class_members) if self.balanced
                          else self.n_samples)

    def indices(self, rng):
        """Indices of the cases one tree draws: in draw order with replacement
        (with repeats), in increasing order without; int32 as scikit-learn's
        (intp from 2**31 cases)."""
        dtype = np.int32 if self.n_samples <= INT32_MAX else np.intp
        if not self.bootstrap:
            return np.arange(self.n_samples, dtype=dtype)
        drawn = self._drawn(rng)
        if not self.replacement:  # a set: in row order, the order the tree's splitter holds
            drawn.sort()          # them in (so that X[s] grows the same tree, nsplit draws too)
        return drawn.astype(dtype, copy=False)

    def _drawn(self, rng):
        """`indices` with the bootstrap, in draw order."""
        if self.balanced:
            per_class = self._n_draws(min(m.size for m in self.class_members))
            return np.concatenate([m[self._draw(rng, m.size, per_class)]
                                   for m in self.class_members])
        return self._draw(rng, self.n_samples, self._n_draws(self.n_samples))

    @property
    def n_draws(self):
        """Cases one tree draws (per class under the balanced bootstrap); None
        without the bootstrap."""
        if not self.bootstrap:
            return None
        return self._n_draws(min(m.size for m in self.class_members) if self.balanced
                             else self.n_samples)

    def counts(self, rng):
        """Multiplicity of each case in one tree's sample (`indices` counted;
        drawn without replacement, a set marked without sorting it)."""
        if self.bootstrap and not self.replacement:
            counts = np.zeros(self.n_samples, dtype=np.intp)
            counts[self._drawn(rng)] = 1
            return counts
        return np.bincount(self.indices(rng), minlength=self.n_samples)

    def tree_rng(self, tree):
        """The RandomState `_fit_tree` drew this tree's sample from."""
        return seeded_rng(tree.random_state)

    def _n_draws(self, n_available):
        """Cases to draw: n (0.632 n without replacement) by default, an int as
        given, a float as a fraction of n."""
        if self.max_samples is None:
            fraction = 1.0 if self.replacement else SUBSAMPLE_FRACTION
            return max(1, int(round(n_available * fraction)))
        if isinstance(self.max_samples, Integral):
            if not self.replacement and self.max_samples > n_available:
                raise ValueError(
                    f"max_samples={self.max_samples} exceeds the {n_available} cases available "
                    "to draw without replacement" + (" in the smallest class" if self.balanced
                                                     else ""))
            n_cases = max(self.n_samples, n_available)  # (n_samples is 0 for aucforest._dask)
            limit = self.MAX_DRAWS_PER_CASE * n_cases
            if self.max_samples > limit:
                size, unit = float(8 * self.max_samples), "bytes"
                for larger in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
                    if size < 1024:
                        break
                    size, unit = size / 1024, larger
                raise ValueError(
                    f"max_samples={self.max_samples} would draw {self.max_samples} cases "
                    f"with replacement for each tree{' and class' if self.balanced else ''} "
                    f"({size:.3g} {unit} of indices per tree); it may be at most "
                    f"{self.MAX_DRAWS_PER_CASE} times the {n_cases} training cases, {limit}")
            return int(self.max_samples)
        if self.max_samples > 1 and not self.replacement:
            raise ValueError(f"max_samples={self.max_samples} draws more than the cases "
                             "available to draw without replacement; a fraction above 1 "
                             "needs replacement=True")
        if self.max_samples > self.MAX_DRAWS_PER_CASE:
            raise ValueError(f"max_samples={self.max_samples} would draw more than "
                             f"{self.MAX_DRAWS_PER_CASE} times the training cases per tree")
        return max(1, int(round(n_available * self.max_samples)))

    def _draw(self, rng, n_available, size):
        """Indices in [0, n_available): `size` draws with or without replacement
        (with replacement, scikit-learn's draw: ``randint(0, n, size, dtype=int32)``)."""
        if self.replacement:
            return rng.randint(0, n_available, size,
                               dtype=np.int32 if n_available <= INT32_MAX else np.intp)
        return rng.permutation(n_available)[:size]


class TreeSampler:
    """Draws each tree's sample (as multiplicities) and its weights.

    Holds what every draw needs, computed once per fit: the case draws
    (`CaseDraws`) and the weights.
    """

    def __init__(self, forest, y, y_encoded, sample_weight, weights):
        """sample_weight and weights (sample x class weights): None when all one."""
        self.class_weight = forest.class_weight
        self.y, self.sample_weight, self.weights = y, sample_weight, weights
        self.n_samples = y.shape[0]
        self.draws = CaseDraws(forest, y_encoded, sample_weight)

    def draw(self, rng):
        """Multiplicity of each case in one tree's sample."""
        return self.draws.counts(rng)

    def tree_weights(self, counts):
        """sample_weight x class_weight x multiplicity (per-sample class weights
        under "balanced_subsample"), rescaled to a maximum of 1."""
        weights = self.weights
        if self.class_weight == "balanced_subsample":
            indices = np.repeat(np.arange(self.n_samples), counts)
            weights = weight_product(self.sample_weight,
                               compute_sample_weight("balanced", self.y, indices=indices))
        tree_weights = counts.astype(np.float64) if weights is None else weights * counts
        top = tree_weights.max()
        if not top > 0:
            # every drawn case has zero weight: fall back to the full weights
            tree_weights = np.ones(self.n_samples) if weights is None else weights.copy()
            top = tree_weights.max()
        if top != 1.0:  # in place: grow_tree then needs no copy
            tree_weights /= top
        return tree_weights


_THREAD_STATE = threading.local()


def seeded_rng(seed):
    """``np.random.RandomState(seed)`` (the same stream), by re-seeding one
    generator per thread: a new RandomState costs about 0.2 ms (it seeds
    itself from the OS first), a re-seed 3 us, and a forest of small trees
    makes one per tree. Valid until the thread's next call."""
    rng = getattr(_THREAD_STATE, "rng", None)
    if rng is None:
        rng = _THREAD_STATE.rng = np.random.RandomState()
    rng.seed(seed)
    return rng


def tree_growth_seed(random_state):
    """The seed a tree grows from (feature and threshold draws): the first draw
    of its RandomState.

    A forest's tree i draws its sample from ``RandomState(seed_i)`` and grows
    from ``tree_growth_seed(RandomState(seed_i))``, the stream started again,
    which is what ``AUCTreeClassifier(random_state=seed_i).fit`` grows from:
    so ``clone(estimators_[i]).fit(X[s], y[s])``, s its
    ``estimators_samples_[i]``, grows tree i again (as scikit-learn promises).
    """
    return random_state.randint(MAX_SEED)


def weight_product(weights, other):
    """Case weights times other case weights, where None stands for all one."""
    if weights is None or other is None:
        return other if weights is None else weights
    return weights * other


def class_weights_of_counts(class_weight, classes, counts):
    """Weight of each class (sorted ``classes``, each with ``counts`` cases),
    rescaled to a maximum of 1, as scikit-learn's `compute_class_weight`
    gives it ("balanced": n / (K n_k)); None without class weights. Raises
    ValueError for an invalid dict and when every class weighs zero. The fit
    on dask collections has the counts only; the in-memory fit indexes it by
    each case's class."""
    if class_weight is None:
        return None
    if class_weight == "balanced":
        weights = counts.sum() / (classes.shape[0] * counts.astype(np.float64))
    else:
        from sklearn.utils.class_weight import compute_class_weight
        check_class_weight_dict(class_weight)
        weights = compute_class_weight(class_weight, classes=classes, y=classes)
    if not np.any(weights > 0):
        raise ValueError("class_weight is zero for every class in y; at least one class "
                         "needs a positive weight.")
    return weights / weights.max()


def check_class_weight_dict(class_weight):
    """Raise ValueError unless every class weight is a finite number >= 0."""
    for label, weight in class_weight.items():
        if (isinstance(weight, (bool, np.bool_)) or not isinstance(weight, Real)
                or not np.isfinite(weight) or weight < 0):
            raise ValueError(f"class_weight[{label!r}] must be a finite number >= 0; "
                             f"got {weight}.")
