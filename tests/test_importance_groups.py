"""Out-of-bag permutation importance of groups of columns permuted together
(`oob_importance(..., groups=...)`), against the per-feature result and a
brute-force joint permutation of every tree's out-of-bag rows."""
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score
from sklearn.utils import check_random_state

from aucforest import AUCForestClassifier
from aucforest._base import MAX_SEED
from aucforest.inspection import importance_intervals, oob_importance
from aucforest.inspection._case_draws import OutOfBag
from aucforest.inspection._permute import random_permutation

pytestmark = pytest.mark.filterwarnings("ignore:.*in every tree's sample:UserWarning")


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(200, n_features=5, n_informative=3, n_redundant=0,
                               shuffle=False, class_sep=1.2, random_state=4)
    forest = AUCForestClassifier(10, oob_score=True, random_state=2).fit(X, y)
    return forest, X, y


def brute_force_group_importance(forest, X, y, group, seed):
    """AUC(OOB) - AUC(OOB with the columns of ``group`` permuted jointly among
    each tree's OOB rows), whole copies of the rows through each tree's
    predict_proba, the OOB rows from the public estimators_samples_."""
    n = X.shape[0]
    tree_seeds = np.random.default_rng(seed).integers(2 ** 63, size=forest.n_estimators)
    plain, permuted, n_trees = np.zeros((n, 2)), np.zeros((n, 2)), np.zeros(n)
    for tree, drawn, tree_seed in zip(forest.estimators_, forest.estimators_samples_,
                                      tree_seeds):
        rows = np.flatnonzero(np.bincount(drawn, minlength=n) == 0)
        X_oob = X[rows].astype(np.float32)
        plain[rows] += tree.predict_proba(X_oob)
        shuffled = X_oob[random_permutation(rows.size, tree_seed)]
        for j in group:
            X_oob[:, j] = shuffled[:, j]
        permuted[rows] += tree.predict_proba(X_oob)
        n_trees[rows] += 1
    has = n_trees > 0
    return (roc_auc_score(y[has], plain[has, 1] / n_trees[has])
            - roc_auc_score(y[has], permuted[has, 1] / n_trees[has]))


def test_group_of_one_column_is_that_features_importance(fitted):
    forest, X, y = fitted
    single = oob_importance(forest, X, y, n_repeats=2, random_state=5)
    for j in (0, 3):
        grouped = oob_importance(forest, X, y, n_repeats=2, random_state=5, groups={"x": [j]})
        np.testing.assert_array_equal(grouped.importances, single.importances[[j]])
        np.testing.assert_array_equal(grouped.per_class, single.per_class[[j]])
        assert grouped.groups == ["x"]


def test_joint_permutation_of_one_column_equals_the_compiled_kernel(fitted):
    forest, X, y = fitted
    oob = OutOfBag(forest, X, y)
    for tree in oob.trees:
        for j in range(X.shape[1]):
            kernel, joint = np.zeros((len(y), 2)), np.zeros((len(y), 2))
            tree.add_permuted(oob.X, j, 99 + j, kernel)
            tree.add_permuted_jointly(oob.X, [j], 99 + j, joint)
            np.testing.assert_array_equal(joint, kernel)


def test_group_importance_equals_a_brute_force_joint_permutation(fitted):
    forest, X, y = fitted
    groups = {"first two": [0, 1], "noise": [4, 3], "all": [0, 1, 2, 3, 4]}
    result = oob_importance(forest, X, y, n_repeats=2, random_state=11, groups=groups)
    seeds = check_random_state(11).randint(MAX_SEED, size=(X.shape[1], 2))
    expected = [[brute_force_group_importance(forest, X, y, group, seeds[group[0], r])
                 for r in range(2)] for group in groups.values()]
    np.testing.assert_allclose(result.importances, expected, rtol=0, atol=1e-12)
    assert result.groups == list(groups)
    # permuting every informative column together removes at least what one does
    assert result.importances_mean[0] >= max(oob_importance(
        forest, X, y, random_state=11).importances_mean[:2]) - 0.05


def test_intervals_of_groups_are_centred_on_the_group_importance(fitted):
    forest, X, y = fitted
    groups = {"informative": [0, 1, 2], "noise": [3, 4]}
    intervals = importance_intervals(forest, X, y, n_subsamples=3, random_state=1,
                                     groups=groups)
    direct = oob_importance(forest, X, y, random_state=1, groups=groups)
    np.testing.assert_array_equal(intervals.importance, direct.importances_mean)
    assert intervals.subsample_importances.shape == (3, 2)


@pytest.mark.parametrize("groups, message", [
    ({}, "non-empty dict"),
    ([[0, 1]], "non-empty dict"),
    ({"a": []}, "group 'a'"),
    ({"a": [0, 5]}, r"group 'a' must list distinct column indices in \[0, 5\)"),
    ({"a": [1, 1]}, "distinct"),
    ({"a": [0.0]}, "group 'a'"),
])
def test_bad_groups_are_refused(fitted, groups, message):
    forest, X, y = fitted
    with pytest.raises(ValueError, match=message):
        oob_importance(forest, X, y, groups=groups)
