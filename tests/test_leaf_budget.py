"""`aucforest._leaf_budget` on random trees: the bottleneck m(t) of every
split against the minimum over its path, and the claim the Dask fit's
subtree bounds rest on: the best-first expansions of a tree whose nodes
below a cut were never grown are those of the whole tree whenever every
node left out has m below the (L - 1)-th largest m of the nodes known."""
import numpy as np
import pytest

from aucforest._leaf_budget import bottlenecks, expansions


def _random_tree(rng, n_splits):
    """Children arrays of a random binary tree in preorder, with random d."""
    left, right = [], []

    def grow(budget):
        index = len(left)
        left.append(-1)
        right.append(-1)
        if budget > 0:
            share = int(rng.integers(0, budget))
            left[index] = grow(share)
            right[index] = grow(budget - 1 - share)
        return index

    grow(n_splits)
    priority = rng.choice([0.1, 0.2, 0.3, 0.5], len(left)) if rng.random() < 0.5 \
        else rng.random(len(left))  # ties, or none
    return np.array(left), np.array(right), priority


@pytest.mark.parametrize("seed", range(20))
def test_bottleneck_is_the_smallest_d_on_the_path(seed):
    rng = np.random.default_rng(seed)
    left, right, priority = _random_tree(rng, 40)
    m = bottlenecks(priority, left, right)
    parent = {int(c): i for i in range(left.size) for c in (left[i], right[i]) if c >= 0}
    for node in np.flatnonzero(right >= 0):
        path, at = [priority[node]], node
        while at in parent:
            at = parent[at]
            path.append(priority[at])
        assert m[node] == min(path)


@pytest.mark.parametrize("seed", range(30))
def test_expansions_of_a_tree_cut_below_its_threshold_are_the_whole_trees(seed):
    rng = np.random.default_rng(seed)
    left, right, priority = _random_tree(rng, 60)
    bound = int(rng.integers(2, 30))
    whole = expansions(left, right, priority, bound)
    m = bottlenecks(priority, left, right)
    known = np.sort(m[right >= 0])[::-1]
    threshold = known[bound - 2] if known.size >= bound - 1 else -np.inf
    # cut every split whose m is below the threshold: its node becomes a leaf, the
    # nodes below it unknown (as a subtree not grown further)
    unknown = (right >= 0) & (m < threshold)
    cut_left, cut_right = np.where(unknown, -1, left), np.where(unknown, -1, right)
    partial = expansions(cut_left, cut_right, priority, bound)
    np.testing.assert_array_equal(partial, whole)
