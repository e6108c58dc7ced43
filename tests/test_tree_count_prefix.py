"""The tree-count study's premise: a forest warm-started through 10, 20, 40 trees is,
at each step, the cold fit of that many trees with the same random_state.

benchmarks/tree_count.py scores the default forest at several tree counts from one
warm-started forest per fold (``forests_in_steps``); it holds only if each step has the
trees of an m-tree fit, chooses the same node size out of bag (``predict_min_samples_``,
from the same OOB figures) and gives the same ``predict_proba``. The reference is a
separate fit with warm_start=False. The repository root is appended to sys.path (after
the installed aucforest) so that ``benchmarks`` imports as a package.
"""
import os
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

from aucforest import AUCForestClassifier

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
if ROOT not in sys.path:
    sys.path.append(ROOT)  # last: the aucforest under test stays the installed one

from benchmarks import tree_count

COUNTS = (10, 20, 40)


def imbalanced(n_classes, seed):
    weights = [0.85] if n_classes == 2 else [0.7, 0.2]
    X, y = make_classification(500, 8, n_informative=4, n_redundant=1, n_classes=n_classes,
                               weights=weights, flip_y=0.05, class_sep=0.7, random_state=seed)
    return X[:400], y[:400], X[400:]


def node_arrays(tree_):
    return tree_.node_arrays()


@pytest.mark.filterwarnings("ignore:.*out-of-bag")  # the first steps' few trees
@pytest.mark.parametrize("n_classes", [2, 3])
def test_each_warm_started_step_is_the_cold_fit_of_that_many_trees(n_classes):
    X, y, X_test = imbalanced(n_classes, seed=n_classes)
    sizes, grown = {}, {}
    for m, forest, _ in tree_count.forests_in_steps(X, y, COUNTS, seed=7):
        cold = AUCForestClassifier(m, random_state=7).fit(X, y)
        assert len(forest.estimators_) == m
        assert forest.predict_min_samples_ == cold.predict_min_samples_
        assert forest.oob_scores_by_min_samples_ == cold.oob_scores_by_min_samples_
        assert forest.oob_gmeans_by_min_samples_ == cold.oob_gmeans_by_min_samples_
        for warm_tree, cold_tree in zip(forest.estimators_, cold.estimators_, strict=True):
            assert warm_tree.random_state == cold_tree.random_state
            expected = node_arrays(cold_tree.tree_)
            for name, array in node_arrays(warm_tree.tree_).items():
                np.testing.assert_array_equal(array, expected[name], err_msg=name)
        np.testing.assert_array_equal(forest.predict_proba(X_test), cold.predict_proba(X_test))
        np.testing.assert_array_equal(forest.predict(X_test), cold.predict(X_test))
        sizes[m] = forest.predict_min_samples_
        grown[m] = [node_arrays(t) for t in tree_count.grown_trees(forest)]
    # the trees as grown of each step are the first m of the last step's
    for m, trees in grown.items():
        for kept, last in zip(trees, grown[COUNTS[-1]][:m], strict=True):
            for name, array in kept.items():
                np.testing.assert_array_equal(array, last[name], err_msg=name)
    assert max(sizes.values()) > 1  # the choice was exercised, not the leaf by default


def test_the_study_check_agrees_and_says_what_it_checked():
    X, y, _ = imbalanced(2, seed=5)
    train, test = np.arange(300), np.arange(300, 400)
    line = tree_count.check_prefix(X, y, train, test, COUNTS[:2], seed=3)
    assert "node sizes chosen 10:" in line
