"""Trees held in few bytes: a grown tree packed while the forest chooses its
node size gives back every array to the bit, and the bytes held per node stay
below the bounds of issue 59 (measured with the objects' own ``nbytes``)."""
import numpy as np
import pytest
from aucforest._tree import Tree
from sklearn.datasets import make_classification
from sklearn.tree._tree import NODE_DTYPE as SKLEARN_NODE_DTYPE

from aucforest import AUCForestClassifier

ARRAYS = ("children_left", "children_right", "feature", "threshold", "missing_go_to_left",
          "n_node_samples", "weighted_n_node_samples", "impurity", "improvement", "proba",
          "left_levels", "categorical_split")


def grown_trees(n_classes, n_trees=3, **params):
    """Trees as grown (predict_min_samples=1 keeps them whole) on generated data."""
    X, y = make_classification(4000, 8, n_informative=6, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, random_state=0)
    if params.pop("categorical", False):
        X[:, 0] = np.floor(np.abs(X[:, 0]) * 5) % 12
        params["categorical_features"] = [0]
    forest = AUCForestClassifier(n_trees, predict_min_samples=1, random_state=0, **params)
    return [estimator.tree_ for estimator in forest.fit(X, y).estimators_]


def assert_same_bits(tree, other):
    for name in ARRAYS:
        a, b = getattr(tree, name), getattr(other, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name
    assert (tree.node_count, tree.max_depth, tree.n_features, tree.max_n_classes) == (
        other.node_count, other.max_depth, other.n_features, other.max_n_classes)


@pytest.mark.parametrize("n_classes, params", [
    (3, {}), (2, {"criterion": "auc_ecp"}), (3, {"criterion": "gini", "class_weight": "balanced"}),
    (3, {"criterion": "entropy", "replacement": True}), (12, {}), (3, {"categorical": True}),
    (3, {"max_bins": None, "nsplit": None}),
])
def test_a_packed_tree_unpacks_to_the_bit(n_classes, params):
    for tree in grown_trees(n_classes, **params):
        reference = Tree(tree.n_features, tree.max_n_classes, max_depth=tree.max_depth,
                         **tree.node_arrays())  # the arrays as a loaded tree holds them
        packed = tree.packed()
        assert packed.node_count == tree.node_count
        assert_same_bits(packed.unpacked(), reference)
        for size in (2, 10):
            assert_same_bits(packed.collapsed(size, True), reference.collapsed(size, True))


def test_statistics_that_differ_from_what_they_derive_from_are_kept():
    tree = grown_trees(3, n_trees=1)[0]
    held = tree.nbytes  # before any statistic is read (and then held)
    arrays = tree.node_arrays()
    arrays["weighted_n_node_samples"] = arrays["weighted_n_node_samples"] * 0.5
    arrays["impurity"] = arrays["impurity"] * 0.25
    changed = Tree(tree.n_features, 3, max_depth=tree.max_depth, **arrays)
    assert changed.nbytes == held + 16 * tree.node_count  # both held
    for name in ("weighted_n_node_samples", "impurity"):
        np.testing.assert_array_equal(getattr(changed, name), arrays[name])
        np.testing.assert_array_equal(getattr(changed.packed().unpacked(), name), arrays[name])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_bytes_held_per_grown_node_during_the_choice(n_classes):
    """At most 80 bytes per grown node while the node size is chosen, and the
    kept trees at most scikit-learn's node record and value row per node."""
    trees = grown_trees(n_classes, n_trees=5)
    nodes = sum(tree.node_count for tree in trees)
    assert sum(tree.packed().nbytes for tree in trees) / nodes < 80
    sklearn_per_node = SKLEARN_NODE_DTYPE.itemsize + 8 * n_classes
    for size in (1, 5):
        kept = [tree.collapsed(size, True) for tree in trees]
        per_node = sum(t.nbytes for t in kept) / sum(t.node_count for t in kept)
        assert per_node <= sklearn_per_node
