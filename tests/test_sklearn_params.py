"""scikit-learn's tree and forest parameters (issue 31), each against an
independent reference: scikit-learn's DecisionTreeClassifier and
RandomForestClassifier where the engines agree (gini / entropy, all features,
data without ties), brute force for pruning, scipy for the random threshold."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.class_weight import compute_sample_weight

from aucforest import AUCForestClassifier, AUCTreeClassifier

# continuous features: no tied values, and gini / entropy rarely tie between splits
X, y = make_classification(400, 6, n_informative=4, n_classes=3, random_state=0)
X = X.astype(np.float32)
SKLEARN_FOREST = dict(criterion="gini", max_features="sqrt", max_bins=None, nsplit=None,
                      replacement=True, decision="argmax", predict_min_samples=1)


def impurity(value, criterion):
    """Gini impurity, or entropy in bits, of class proportions (naive)."""
    if criterion == "gini":
        return 1.0 - np.sum(value ** 2)
    p = value[value > 0]
    return -np.sum(p * np.log2(p))


def split_gain(t, node, criterion):
    """N_t i(t) - N_tL i(t_L) - N_tR i(t_R), from the tree's own arrays."""
    w = t.weighted_n_node_samples
    left, right = t.children_left[node], t.children_right[node]
    return (w[node] * impurity(t.value[node, 0], criterion)
            - w[left] * impurity(t.value[left, 0], criterion)
            - w[right] * impurity(t.value[right, 0], criterion)) / w[0]


def assert_same_tree(ours, theirs, a=0, b=0, criterion="gini", samples=True):
    """The same splits and leaf proportions, node by node from the root (the two
    libraries number best-first nodes differently); returns the number of nodes
    compared. Two different splits of equal impurity decrease (a tie: each
    library breaks ties its own way) end the comparison of that subtree.
    samples=False: n_node_samples is not compared (a tree refitted on its
    sample counts repeated cases as rows)."""
    np.testing.assert_allclose(ours.value[a], theirs.value[b], rtol=1e-12, atol=1e-15)
    if samples:
        assert ours.n_node_samples[a] == theirs.n_node_samples[b]
    if ours.children_left[a] < 0 or theirs.children_left[b] < 0:
        if ours.children_left[a] >= 0 or theirs.children_left[b] >= 0:  # tie or bound?
            split = (ours, a) if ours.children_left[a] >= 0 else (theirs, b)
            assert split_gain(*split, criterion) < 1e-12  # a split of no gain only
        return 1
    if (ours.feature[a] != theirs.feature[b]
            or not np.isclose(ours.threshold[a], theirs.threshold[b], rtol=1e-7)):
        assert split_gain(ours, a, criterion) == pytest.approx(
            split_gain(theirs, b, criterion), rel=1e-9, abs=1e-15)  # a tie
        return 1
    return 1 + sum(assert_same_tree(ours, theirs, getattr(ours, child)[a],
                                    getattr(theirs, child)[b], criterion, samples)
                   for child in ("children_left", "children_right"))


PARAMETERS = [
    dict(max_leaf_nodes=2), dict(max_leaf_nodes=9), dict(max_leaf_nodes=9, max_depth=3),
    dict(min_samples_split=30), dict(min_samples_split=0.2),
    dict(min_impurity_decrease=0.005), dict(min_impurity_decrease=0.02, max_leaf_nodes=12),
    dict(min_samples_leaf=0.04, max_depth=3), dict(min_samples_leaf=0.1),
    dict(ccp_alpha=0.004), dict(ccp_alpha=0.01, max_leaf_nodes=15),
    dict(class_weight={0: 1.0, 1: 3.0, 2: 0.5}, max_depth=4),
    dict(class_weight="balanced", max_depth=6),
]


@pytest.mark.parametrize("criterion", ["gini", "entropy", "log_loss"])
@pytest.mark.parametrize("params", PARAMETERS, ids=str)
def test_tree_parameter_grows_scikit_learns_tree(criterion, params):
    ours = AUCTreeClassifier(criterion=criterion, random_state=0, **params).fit(X, y)
    theirs = DecisionTreeClassifier(criterion=criterion, random_state=0, **params).fit(X, y)
    # node by node up to ties, which each library breaks its own way: most of the tree
    compared = assert_same_tree(ours.tree_, theirs.tree_,
                                criterion="gini" if criterion == "gini" else "entropy")
    assert compared >= 0.6 * theirs.tree_.node_count


def test_the_parameters_change_the_tree():
    """The references above compare against trees these parameters really change."""
    full = AUCTreeClassifier(criterion="gini").fit(X, y).get_n_leaves()
    for params in PARAMETERS[:-2]:
        assert AUCTreeClassifier(criterion="gini", **params).fit(X, y).get_n_leaves() < full


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_pruning_path_is_scikit_learns(criterion):
    ours = AUCTreeClassifier(criterion=criterion).cost_complexity_pruning_path(X, y)
    theirs = DecisionTreeClassifier(criterion=criterion, random_state=0) \
        .cost_complexity_pruning_path(X, y)
    assert len(ours.ccp_alphas) > 10
    np.testing.assert_allclose(ours.ccp_alphas, theirs.ccp_alphas, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(ours.impurities, theirs.impurities, rtol=1e-9, atol=1e-15)


def leaf_risk(tree_):
    """R(T): sum over leaves of weight share x Gini impurity (naive)."""
    leaves = tree_.children_left < 0
    share = tree_.weighted_n_node_samples / tree_.weighted_n_node_samples[0]
    gini = 1.0 - (tree_.value[:, 0, :] ** 2).sum(axis=1)
    return float((share * gini)[leaves].sum())


def pruned_subtrees(tree_, node=0):
    """Every pruned subtree of the subtree at node, as the set of nodes kept split."""
    if tree_.children_left[node] < 0:
        return [frozenset()]
    left = pruned_subtrees(tree_, tree_.children_left[node])
    right = pruned_subtrees(tree_, tree_.children_right[node])
    return [frozenset()] + [a | b | {node} for a, b in itertools.product(left, right)]


def cost(tree_, split_nodes, alpha):
    """R_alpha of the subtree that keeps exactly split_nodes split (naive)."""
    share = tree_.weighted_n_node_samples / tree_.weighted_n_node_samples[0]
    gini = 1.0 - (tree_.value[:, 0, :] ** 2).sum(axis=1)
    leaves = [n for n in range(tree_.node_count)
              if n not in split_nodes and (n == 0 or _parent(tree_, n) in split_nodes)]
    return sum(share[n] * gini[n] for n in leaves) + alpha * len(leaves), len(leaves)


def _parent(tree_, node):
    return int(np.flatnonzero((tree_.children_left == node) | (tree_.children_right == node))[0])


@pytest.mark.parametrize("criterion", ["auc", "gini"])
def test_pruned_tree_minimises_the_cost_complexity_by_brute_force(criterion):
    """Breiman et al. (1984), ch. 3: the pruned tree is the smallest subtree of
    least R(T) + alpha |leaves(T)|; the risk is Gini's under the AUC criterion."""
    Xs, ys = make_classification(120, 4, random_state=1)
    grown = AUCTreeClassifier(criterion=criterion, max_leaf_nodes=9, random_state=0).fit(Xs, ys)
    subtrees = pruned_subtrees(grown.tree_)
    assert len(subtrees) > 10
    path = AUCTreeClassifier(criterion=criterion, max_leaf_nodes=9, random_state=0) \
        .cost_complexity_pruning_path(Xs, ys)
    for alpha in [0.0, 0.003, 0.01, 0.03, *path.ccp_alphas[1:]]:
        best = min(cost(grown.tree_, s, alpha) for s in subtrees)
        pruned = AUCTreeClassifier(criterion=criterion, max_leaf_nodes=9, ccp_alpha=alpha,
                                   random_state=0).fit(Xs, ys)
        risk = leaf_risk(pruned.tree_)
        assert risk + alpha * pruned.get_n_leaves() == pytest.approx(best[0], abs=1e-12)
        assert pruned.get_n_leaves() == best[1]  # the smallest of the minimisers
    # each path entry is the leaf risk of the tree pruned at its alpha
    for alpha, impurity in zip(path.ccp_alphas, path.impurities):
        pruned = AUCTreeClassifier(criterion=criterion, max_leaf_nodes=9, ccp_alpha=alpha,
                                   random_state=0).fit(Xs, ys)
        assert leaf_risk(pruned.tree_) == pytest.approx(impurity, abs=1e-12)


def test_min_impurity_decrease_under_auc_is_the_weighted_gini_decrease():
    def weighted_gini_decreases(tree_):
        t = tree_
        share = t.weighted_n_node_samples / t.weighted_n_node_samples[0]
        gini = 1.0 - (t.value[:, 0, :] ** 2).sum(axis=1)
        split = np.flatnonzero(t.children_left >= 0)
        left, right = t.children_left[split], t.children_right[split]
        return share[split] * gini[split] - share[left] * gini[left] - share[right] * gini[right]

    full = weighted_gini_decreases(AUCTreeClassifier().fit(X, y).tree_)
    threshold = 0.01
    assert np.any(full < threshold) and np.any(full >= threshold)
    bounded = AUCTreeClassifier(min_impurity_decrease=threshold).fit(X, y)
    assert np.all(weighted_gini_decreases(bounded.tree_) >= threshold - 1e-12)
    assert bounded.get_n_leaves() < AUCTreeClassifier().fit(X, y).get_n_leaves()


@pytest.mark.parametrize("criterion", ["auc", "gini"])
def test_max_leaf_nodes_grows_best_first(criterion):
    trees = [AUCTreeClassifier(criterion=criterion, max_leaf_nodes=k, random_state=0).fit(X, y)
             for k in (2, 5, 11)]
    assert [t.get_n_leaves() for t in trees] == [2, 5, 11]
    full = AUCTreeClassifier(criterion=criterion, random_state=0).fit(X, y)
    # as many leaves as a depth-first tree has: the same tree (gini: no ties to break)
    unbounded = AUCTreeClassifier(criterion=criterion, max_leaf_nodes=full.get_n_leaves() + 5,
                                  random_state=0).fit(X, y)
    assert unbounded.get_n_leaves() == full.get_n_leaves()
    if criterion == "gini":
        assert assert_same_tree(unbounded.tree_, full.tree_) > full.tree_.node_count / 2


def test_random_splitter_draws_one_uniform_threshold_between_min_and_max():
    """scikit-learn's random splitter: for one feature, the root's threshold is
    uniform on [min, max) of the node's values (Kolmogorov-Smirnov)."""
    rng = np.random.RandomState(0)
    x = rng.uniform(2.0, 7.0, size=(50, 1)).astype(np.float32)
    labels = (rng.rand(50) < 0.5).astype(int)
    lo, hi = float(x.min()), float(x.max())
    thresholds = [AUCTreeClassifier(splitter="random", criterion="gini", max_depth=1,
                                    random_state=seed).fit(x, labels).tree_.threshold[0]
                  for seed in range(300)]
    assert lo <= min(thresholds) and max(thresholds) < hi
    assert stats.kstest(thresholds, stats.uniform(lo, hi - lo).cdf).pvalue > 1e-3
    # the best-first splitter would give midpoints between the 50 values only
    assert len(set(thresholds)) > 250


def test_random_splitter_refuses_binned_and_nsplit():
    for params in (dict(max_bins=16), dict(nsplit=5)):
        with pytest.raises(ValueError, match="splitter='random'"):
            AUCTreeClassifier(splitter="random", **params).fit(X, y)


@pytest.mark.parametrize("class_weight", [{0: 1.0, 1: 5.0, 2: 0.2}, "balanced"])
def test_tree_class_weight_multiplies_sample_weight(class_weight):
    weights = compute_sample_weight(class_weight, y)
    a = AUCTreeClassifier(criterion="gini", class_weight=class_weight, max_depth=5).fit(X, y)
    b = AUCTreeClassifier(criterion="gini", max_depth=5).fit(X, y, sample_weight=weights)
    assert_same_tree(a.tree_, b.tree_)
    np.testing.assert_allclose(a.tree_.weighted_n_node_samples[0] / weights.sum(),
                               b.tree_.weighted_n_node_samples[0] / weights.sum())


@pytest.mark.parametrize("max_features", ["sqrt", "log2", 2, 0.5, 0.01, None])
def test_max_features_resolves_as_scikit_learns(max_features):
    ours = AUCTreeClassifier(max_features=max_features).fit(X, y)
    theirs = DecisionTreeClassifier(max_features=max_features).fit(X, y)
    assert ours.max_features_ == theirs.max_features_


def test_forest_is_a_sequence_of_its_trees():
    forest = AUCForestClassifier(7, random_state=0).fit(X, y)
    assert len(forest) == 7
    assert list(forest) == forest.estimators_
    assert forest[3] is forest.estimators_[3] and forest[-1] is forest.estimators_[-1]
    assert forest[1:3] == forest.estimators_[1:3]
    assert all(tree.max_features_ == math.isqrt(5) + 1 for tree in forest)  # ceil_sqrt of 6


def test_samples_are_scikit_learns_with_replacement():
    ours = AUCForestClassifier(6, replacement=True, random_state=3).fit(X, y)
    theirs = RandomForestClassifier(6, random_state=3).fit(X, y)
    for a, b in zip(ours.estimators_samples_, theirs.estimators_samples_):
        assert a.dtype == b.dtype == np.int32
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("params", [
    SKLEARN_FOREST,
    # (min_samples_split and min_samples_leaf count distinct cases, which a refit on
    # a sample with repeats counts as rows: as in scikit-learn, they are left out)
    dict(SKLEARN_FOREST, max_samples=0.5, max_leaf_nodes=20, min_impurity_decrease=0.002),
    dict(predict_min_samples=1),  # aucforest's draw without replacement, nsplit=10
    dict(predict_min_samples=1, balanced_bootstrap=True, criterion="auc"),
    dict(SKLEARN_FOREST, ccp_alpha=0.005),
], ids=["sklearn", "sklearn+params", "ours", "balanced", "pruned"])
def test_clone_refit_on_a_trees_sample_grows_that_tree(params):
    forest = AUCForestClassifier(5, random_state=1, **params).fit(X, y)
    for tree, sample in zip(forest, forest.estimators_samples_):
        refit = clone(tree).fit(X[sample], y[sample])
        assert refit.tree_.node_count == tree.tree_.node_count
        assert assert_same_tree(refit.tree_, tree.tree_, samples=False) == tree.tree_.node_count


def test_warm_start_still_equals_a_single_fit():
    once = AUCForestClassifier(12, oob_score=True, random_state=2, **SKLEARN_FOREST).fit(X, y)
    warm = AUCForestClassifier(5, warm_start=True, random_state=2, **SKLEARN_FOREST).fit(X, y)
    warm.set_params(n_estimators=12, oob_score=True).fit(X, y)
    for a, b in zip(once, warm):
        assert_same_tree(a.tree_, b.tree_)
    assert warm.oob_score_ == once.oob_score_


def test_oob_asked_for_without_new_trees_is_computed_once():
    once = AUCForestClassifier(15, oob_score=True, random_state=2).fit(X, y)
    forest = AUCForestClassifier(15, warm_start=True, random_state=2).fit(X, y)
    assert not hasattr(forest, "oob_score_")
    with pytest.warns(UserWarning, match="without increasing n_estimators"):
        forest.set_params(oob_score=True).fit(X, y)
    assert forest.oob_score_ == once.oob_score_
    decision = forest.oob_decision_function_
    with pytest.warns(UserWarning, match="without increasing n_estimators"):
        forest.fit(X, y)
    assert forest.oob_decision_function_ is decision  # not computed again


def test_callable_oob_score_scores_the_oob_predictions():
    params = dict(SKLEARN_FOREST, n_estimators=30, random_state=0)
    forest = AUCForestClassifier(oob_score=accuracy_score, **params).fit(X, y)
    reference = AUCForestClassifier(oob_score=True, **params).fit(X, y)
    proba = reference.oob_decision_function_
    has_oob = ~np.isnan(proba).any(axis=1)
    expected = accuracy_score(y[has_oob], reference.classes_[proba[has_oob].argmax(axis=1)])
    assert forest.oob_score_ == expected
    assert forest.oob_score_ != reference.oob_score_  # the OOB AUC otherwise


@pytest.mark.parametrize("fraction", [0.3, 1.0, 1.5])
def test_float_max_samples_draws_round_of_the_fraction(fraction):
    forest = AUCForestClassifier(3, replacement=True, max_samples=fraction,
                                 random_state=0).fit(X, y)
    assert all(s.size == max(round(fraction * len(X)), 1) for s in forest.estimators_samples_)


def test_float_max_samples_above_one_needs_replacement():
    with pytest.raises(ValueError, match="needs replacement=True"):
        AUCForestClassifier(3, max_samples=1.5).fit(X, y)


def test_forest_passes_tree_parameters_to_its_trees():
    params = dict(min_samples_split=0.1, max_leaf_nodes=6, min_impurity_decrease=0.001,
                  ccp_alpha=0.002, min_samples_leaf=0.02)
    forest = AUCForestClassifier(4, random_state=0, predict_min_samples=1, **params).fit(X, y)
    for tree in forest:
        assert tree.get_params()["max_leaf_nodes"] == 6
        assert tree.get_n_leaves() <= 6
        assert tree.tree_.n_node_samples[tree.tree_.children_left < 0].min() >= math.ceil(
            0.02 * len(X))


def test_predict_keeps_threads_under_a_process_backend():
    """scikit-learn's test_backend_respected, its predict half: predict_proba
    needs shared memory, so a process backend (loky) is not used for it."""
    import joblib
    from joblib.parallel import LokyBackend

    class CountingBackend(LokyBackend):
        calls = 0

        def start_call(self):
            CountingBackend.calls += 1
            return super().start_call()

    joblib.register_parallel_backend("counting_loky", CountingBackend)
    forest = AUCForestClassifier(5, n_jobs=2, random_state=0).fit(X, y)
    with joblib.parallel_backend("counting_loky"):
        proba = forest.predict_proba(X)
    assert CountingBackend.calls == 0
    np.testing.assert_allclose(proba, np.mean([t.predict_proba(X) for t in forest], axis=0))


def test_log_loss_is_entropy():
    a = AUCTreeClassifier(criterion="log_loss", random_state=0).fit(X, y)
    b = AUCTreeClassifier(criterion="entropy", random_state=0).fit(X, y)
    assert_same_tree(a.tree_, b.tree_)
