"""Trees grown by the compiled builder, against brute force and by construction."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aucforest import AUCTreeClassifier
from references import brute_force_best, split_table, split_value


def random_problem(seed, weighted):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 40))
    p = int(rng.integers(1, 4))
    k = int(rng.integers(2, 6))
    X = rng.integers(0, 6, size=(n, p)).astype(float)  # integer values: many ties
    y = rng.integers(0, k, size=n)
    y[:2] = [0, 1]
    w = rng.uniform(0.1, 3.0, size=n) if weighted else np.ones(n)
    return X, y, w


def root_split_value(tree, X, y, w, criterion):
    t = tree.tree_
    table = split_table(X[:, t.feature[0]], y, w, t.threshold[0], y.max() + 1)
    return split_value(table, criterion)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), weighted=st.booleans(),
       criterion=st.sampled_from(["auc", "gini", "entropy", "auc_ecp"]), msl=st.integers(1, 3))
def test_root_split_reaches_brute_force_maximum(seed, weighted, criterion, msl):
    X, y, w = random_problem(seed, weighted)
    best = brute_force_best(X, y, w, criterion, min_samples_leaf=msl)
    tree = AUCTreeClassifier(criterion=criterion, max_depth=1, min_samples_leaf=msl,
                             random_state=seed).fit(X, y, sample_weight=w)
    if not np.isfinite(best):  # no admissible split: the root is a leaf
        assert tree.tree_.node_count == 1
        return
    assert tree.tree_.node_count == 3
    assert root_split_value(tree, X, y, w, criterion) == pytest.approx(best, rel=1e-9, abs=1e-12)
    # the stored statistic is the exact value of the chosen split
    stored = tree.tree_.improvement[0] + (0.5 if criterion.startswith("auc") else 0.0)
    assert stored == pytest.approx(root_split_value(tree, X, y, w, criterion), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), weighted=st.booleans())
def test_auc_ecp_ranks_binary_splits_as_gini_does(seed, weighted):
    # Gini decrease = 2 (n0 n1 / N^2)^2 (r1 - r0)^2 / (q (1 - q)) for two classes
    X, y, w = random_problem(seed, weighted)
    y = (y > 0).astype(np.intp)
    if np.unique(y).size < 2:
        return
    ecp = AUCTreeClassifier(criterion="auc_ecp", max_depth=1, random_state=seed).fit(
        X, y, sample_weight=w)
    if ecp.tree_.node_count == 1:
        return
    assert root_split_value(ecp, X, y, w, "gini") == pytest.approx(
        brute_force_best(X, y, w, "gini"), rel=1e-9, abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_split_respects_min_samples_leaf(seed):
    X, y, _ = random_problem(seed, False)
    tree = AUCTreeClassifier(min_samples_leaf=3, random_state=0).fit(X, y).tree_
    leaves = tree.children_left == -1
    assert np.all(tree.n_node_samples[leaves] >= 3) or tree.node_count == 1


def test_three_classes_two_cuts_give_three_leaves():
    # the case that breaks randomForestSRC's absent-class handling
    x = np.repeat([0.0, 1.0, 2.0], 20) + np.tile(np.linspace(0, 0.5, 20), 3)
    y = np.repeat([0, 1, 2], 20)
    tree = AUCTreeClassifier(criterion="auc", random_state=0).fit(x[:, None], y)
    assert tree.get_n_leaves() == 3
    assert tree.tree_.node_count == 5
    np.testing.assert_array_equal(tree.predict(x[:, None]), y)


def test_pure_nodes_are_leaves_and_values_are_class_proportions():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    t = AUCTreeClassifier(random_state=0).fit(X, y).tree_
    leaves = t.children_left == -1
    np.testing.assert_allclose(t.proba.sum(axis=1), 1.0)
    # grown to purity: every leaf holds one class
    assert np.all(np.isclose(t.proba[leaves].max(axis=1), 1.0))
    internal = ~leaves
    assert np.all(t.children_left[internal] > np.flatnonzero(internal))
    assert np.all(t.children_right[internal] > np.flatnonzero(internal))


def test_values_one_float32_ulp_apart_are_separated():
    a = np.float32(1.0)
    b = np.nextafter(a, np.float32(2.0))
    X = np.array([[a], [b], [a], [b]], dtype=np.float32)
    y = np.array([0, 1, 0, 1])
    tree = AUCTreeClassifier().fit(X, y)
    np.testing.assert_array_equal(tree.predict(X), y)
    assert a <= tree.tree_.threshold[0] < b


def test_zero_weight_cases_are_ignored():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    w = np.ones(60)
    w[::3] = 0.0
    with_zero = AUCTreeClassifier(random_state=0).fit(X, y, sample_weight=w).tree_
    without = AUCTreeClassifier(random_state=0).fit(X[w > 0], y[w > 0]).tree_
    np.testing.assert_array_equal(with_zero.feature, without.feature)
    np.testing.assert_array_equal(with_zero.threshold, without.threshold)


def test_integer_weights_act_as_repeated_cases_in_the_statistic():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 8, size=(30, 2)).astype(float)
    y = rng.integers(0, 3, size=30)
    w = rng.integers(1, 4, size=30).astype(float)
    weighted = AUCTreeClassifier(max_depth=1).fit(X, y, sample_weight=w)
    repeated = AUCTreeClassifier(max_depth=1).fit(np.repeat(X, w.astype(int), axis=0),
                                                  np.repeat(y, w.astype(int)))
    assert weighted.tree_.improvement[0] == pytest.approx(repeated.tree_.improvement[0])


def test_extreme_weights_give_finite_probabilities():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 2))
    y = rng.integers(0, 2, size=50)
    for scale in (1e300, 1e-300):
        proba = AUCTreeClassifier().fit(X, y, sample_weight=np.full(50, scale)).predict_proba(X)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_constant_features_are_skipped():
    rng = np.random.default_rng(5)
    X = np.column_stack([np.ones(80), rng.normal(size=80), np.zeros(80)])
    y = (X[:, 1] > 0).astype(int)
    tree = AUCTreeClassifier(max_features=1, random_state=0).fit(X, y).tree_
    internal = tree.children_left != -1
    assert np.all(tree.feature[internal] == 1)


def test_feature_importances_point_at_the_informative_feature():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 4))
    y = (X[:, 2] > 0.3).astype(int)
    for criterion in ("auc", "gini", "entropy"):
        importances = AUCTreeClassifier(criterion=criterion).fit(X, y).feature_importances_
        assert importances.sum() == pytest.approx(1.0)
        assert np.argmax(importances) == 2


def test_one_pass_out_of_bag_sums_equal_apply_at_each_node_size():
    # accumulate_oob_proba finds every candidate's node in one traversal;
    # reference: the tree collapsed to each m separately
    from aucforest._tree import accumulate_oob_proba
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(size=600) > 0).astype(int) + (X[:, 1] > 1)
    tree = AUCTreeClassifier(random_state=0).fit(X[:400], y[:400]).tree_
    X_f = np.asfortranarray(X)
    rows = np.sort(rng.choice(600, size=300, replace=False))
    sizes = (1, 2, 5, 10, 20, 50, 1000)
    out = np.zeros((len(sizes), 600, tree.max_n_classes))
    n_trees = np.zeros(600)

    def counts_leaving_out(out_of_bag):  # multiplicities: 0 for the rows left out
        counts = rng.integers(1, 4, size=600)
        counts[out_of_bag] = 0
        return counts

    accumulate_oob_proba(tree, X_f, counts_leaving_out(rows), sizes, out, n_trees)
    accumulate_oob_proba(tree, X_f, counts_leaving_out(rows[:10]), sizes, out, n_trees)  # adds
    for c, m in enumerate(sizes):
        expected = np.zeros((600, tree.max_n_classes))
        expected[rows] += tree.collapsed(m).predict_proba(X[rows])
        expected[rows[:10]] += tree.collapsed(m).predict_proba(X[rows[:10]])
        np.testing.assert_array_equal(out[c], expected)
    np.testing.assert_array_equal(n_trees, np.bincount(np.r_[rows, rows[:10]], minlength=600))
    with pytest.raises(ValueError, match="increasing"):
        accumulate_oob_proba(tree, X_f, counts_leaving_out(rows), (5, 2), out[:2], n_trees)
    with pytest.raises(ValueError, match="counts"):
        accumulate_oob_proba(tree, X_f, np.zeros(599, dtype=np.intp), sizes, out, n_trees)


@pytest.mark.parametrize("params", [dict(), dict(nsplit=3), dict(max_bins=16),
                                    dict(criterion="gini", min_samples_leaf=3)])
def test_grown_trees_pass_the_checks_of_loaded_trees(params):
    """A grown tree skips the node-array validation a loaded tree goes through:
    the builder must produce arrays that pass it unchanged."""
    from aucforest._tree import _validated_node_arrays
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 3, 400) + (X[:, 0] > 0)
    tree = AUCTreeClassifier(random_state=0, **params).fit(X, y).tree_
    arrays = tree.node_arrays()
    checked = _validated_node_arrays(tree.n_features, tree.max_n_classes, arrays)
    for name, array in arrays.items():
        assert checked[name].dtype == array.dtype
        np.testing.assert_array_equal(checked[name], array, err_msg=name)


def _five_node_arrays(left, right):
    """Node arrays of a 5-node tree of 2 features and 2 classes with the given
    children (features where a node has children)."""
    left, right = np.asarray(left, dtype=np.intp), np.asarray(right, dtype=np.intp)
    n = left.shape[0]
    return {"children_left": left, "children_right": right,
            "feature": np.where(left >= 0, 0, -2).astype(np.intp),
            "threshold": np.where(left >= 0, 0.5, -2.0),
            "missing_go_to_left": np.zeros(n, dtype=np.uint8),
            "value": np.full((n, 2), 0.5), "n_node_samples": np.full(n, 4, dtype=np.intp),
            "weighted_n_node_samples": np.full(n, 4.0), "impurity": np.full(n, 0.5),
            "improvement": np.zeros(n)}


@pytest.mark.parametrize("left, right, problem", [
    ([1, 2, -1, -1, -1], [4, 3, -1, -1, -1], None),        # a valid preorder tree
    ([1, 2, -1, -1, -1], [3, 3, -1, -1, -1], "two parents"),  # node 3 under 0 and 1
    ([1, -1, -1, -1, -1], [2, -1, -1, -1, -1], "unreachable"),
    ([1, 2, -1, -1, -1], [4, 2, -1, -1, -1], "out of range"),
    ([1, -1, -1, -1, -1], [2, 3, -1, -1, -1], "no left child"),
])
def test_node_arrays_of_a_malformed_tree_are_refused(left, right, problem):
    """The structure checks of a loaded tree, against trees built by hand:
    each malformation is named, and a valid tree passes unchanged."""
    from aucforest._tree import _validated_node_arrays
    arrays = _five_node_arrays(left, right)
    if problem is None:
        checked = _validated_node_arrays(2, 2, arrays)
        np.testing.assert_array_equal(checked["children_right"], right)
        return
    with pytest.raises(ValueError, match=problem):
        _validated_node_arrays(2, 2, arrays)


@pytest.mark.parametrize("n_rows", [1, 31, 32, 33, 257])
@pytest.mark.parametrize("min_samples", [1, 3])
def test_apply_sends_rows_side_by_side_to_the_nodes_of_a_plain_walk(n_rows, min_samples):
    """Tree.apply moves many rows down at once (lanes handed from row to row):
    each row must end where a walk of its own path ends, NaN included; the
    tree collapsed to min_samples predicts what the walk's last node with at
    least min_samples cases holds."""
    rng = np.random.default_rng(n_rows)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.15] = np.nan
    y = rng.integers(0, 2, 300) + (np.nan_to_num(X[:, 0]) > 0)
    tree = AUCTreeClassifier(random_state=0).fit(X, y).tree_
    rows = rng.normal(size=(n_rows, 4)).astype(np.float32)
    rows[rng.random(rows.shape) < 0.15] = np.nan

    def walk(x):
        node = 0
        while tree.feature[node] >= 0:
            v = x[tree.feature[node]]
            left = v <= tree.threshold[node] or (np.isnan(v) and tree.missing_go_to_left[node])
            child = tree.children_left[node] if left else tree.children_right[node]
            if tree.n_node_samples[child] < min_samples:
                break
            node = child
        return node

    collapsed = tree.collapsed(min_samples)
    np.testing.assert_array_equal(collapsed.predict_proba(rows), tree.proba[[walk(x) for x in rows]])
    if min_samples == 1:
        assert collapsed is tree
        np.testing.assert_array_equal(tree.apply(rows), [walk(x) for x in rows])


def _float32_neighbours(thresholds):
    """For each double threshold: its float32 rounding and the float32 values
    one step below and above it, and the infinities."""
    t32 = np.asarray(thresholds, dtype=np.float64).astype(np.float32)
    down = np.nextafter(t32, np.float32(-np.inf))
    up = np.nextafter(t32, np.float32(np.inf))
    return np.concatenate([t32, down, up, np.float32([np.inf, -np.inf])])


def _plain_walk(tree, x):
    """The leaf of row x, one node at a time, comparing in float64."""
    node = 0
    while tree.feature[node] >= 0:
        v = np.float64(x[tree.feature[node]])
        left = v <= tree.threshold[node] or (np.isnan(v) and tree.missing_go_to_left[node])
        node = tree.children_left[node] if left else tree.children_right[node]
    return node


def test_apply_compares_float32_values_with_the_double_thresholds_exactly():
    """Tree.apply walks float32 records when it has many rows (the threshold
    rounded down to float32, `_float32_at_most`): rows at every threshold's
    float32 neighbours, at +-inf and NaN must end where a float64 walk ends;
    so must thresholds beyond float32's range."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 3))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(scale=0.5, size=500) > 0).astype(int)
    tree = AUCTreeClassifier(random_state=0).fit(X, y).tree_
    splits = tree.feature >= 0
    values = _float32_neighbours(tree.threshold[splits])
    # rows that put those values on the split features of every node
    rows = rng.choice(values, size=(4000, 3)).astype(np.float32)
    rows[rng.random(rows.shape) < 0.05] = np.nan
    for node in np.flatnonzero(splits)[:50]:  # each split's own values on its path's feature
        rows[node * 6:(node + 1) * 6, tree.feature[node]] = _float32_neighbours(
            [tree.threshold[node]])[[0, 1, 2, 0, 1, 2]]
    assert np.any(tree.threshold[splits] != tree.threshold[splits].astype(np.float32))
    np.testing.assert_array_equal(tree.apply(rows), [_plain_walk(tree, x) for x in rows])
    assert tree.apply(rows[:0]).shape == (0,)  # no rows: no record is read

    from aucforest._tree import Tree
    for threshold in (1e300, -1e300, 0.1, np.nextafter(0.1, 1.0), 3.4028235677973366e38):
        stump = Tree(1, 2, max_depth=1, children_left=[1, -1, -1], children_right=[2, -1, -1],
                     feature=[0, -2, -2], threshold=[threshold, -2.0, -2.0],
                     missing_go_to_left=[1, 0, 0], value=[[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]],
                     n_node_samples=[2, 1, 1], weighted_n_node_samples=[2.0, 1.0, 1.0],
                     impurity=[0.5, 0.0, 0.0], improvement=[0.0, 0.0, 0.0])
        column = np.concatenate([_float32_neighbours([threshold]),
                                 np.float32([np.nan, 3.4028235e38, -3.4028235e38])])
        expected = [1 if (v <= threshold or np.isnan(v)) else 2 for v in column.astype(float)]
        np.testing.assert_array_equal(stump.apply(column[:, None]), expected, err_msg=threshold)


@pytest.mark.parametrize("criterion", ["auc", "gini", "entropy", "auc_ecp"])
@pytest.mark.parametrize("max_bins", [None, 255])
def test_nodes_of_many_classes_hold_their_cases_counts_and_split_values(criterion, max_bins):
    # K = 90 and nodes of a few cases: the builder touches only each node's own
    # classes (`criterion_init_cases`); every node's proportions and every
    # split's value must still be those of the cases that reach it
    rng = np.random.default_rng(5)
    n, k = 900, 90
    X = rng.normal(size=(n, 4))
    y = rng.integers(0, k, size=n)
    w = rng.integers(0, 4, size=n).astype(float)  # zero weights: cases the tree ignores
    tree = AUCTreeClassifier(criterion=criterion, max_bins=max_bins, random_state=0).fit(
        X, y, sample_weight=w)
    t = tree.tree_
    reaches = tree.decision_path(X).toarray().astype(bool)  # (n, nodes)
    counts = np.stack([np.bincount(y[reaches[:, i]], weights=w[reaches[:, i]], minlength=k)
                       for i in range(t.node_count)])
    assert t.node_count > 100 and np.median(t.n_node_samples) < k // 4
    scale = t.weighted_n_node_samples[0] / counts[0].sum()  # the fit rescales weights
    np.testing.assert_allclose(t.weighted_n_node_samples, scale * counts.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(t.proba, counts / counts.sum(axis=1, keepdims=True),
                               rtol=1e-12, atol=0)
    for node in np.flatnonzero(t.children_left >= 0):
        table = np.column_stack([counts[t.children_left[node]], counts[t.children_right[node]]])
        value = split_value(table, criterion)
        if criterion in ("auc", "auc_ecp"):
            assert t.improvement[node] + 0.5 == pytest.approx(value, rel=1e-12)
        else:
            assert t.improvement[node] == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_a_tree_of_many_classes_keeps_each_nodes_classes_present_as_the_dense_rows():
    # above 8 classes the builder keeps each node's classes present and their
    # proportions, not a row of K; proba, collapsed trees, a pickled copy and
    # the out-of-bag sums must be those of the same tree held dense.
    # Reference for proba: the weighted class counts of the training cases
    # through each node (decision_path), divided by their total (integer
    # weights, so the sums are exact in any order)
    import pickle

    from aucforest._tree import Tree, accumulate_oob_proba, oob_used_nodes
    rng = np.random.default_rng(3)
    n, k = 1500, 40
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = np.digitize(X[:, 0] + 0.6 * rng.normal(size=n), np.linspace(-2, 2, k - 1))
    weight = rng.integers(0, 3, n).astype(float)
    grown = AUCTreeClassifier(random_state=0).fit(X, y, sample_weight=weight).tree_
    assert grown.max_n_classes == k
    dense_bytes = grown.node_count * 8 * k
    assert grown.nbytes < grown.node_count * 80 + dense_bytes // 4  # not a row of K per node
    path = AUCTreeClassifier(random_state=0).fit(X, y, sample_weight=weight).decision_path(X)
    counts = np.zeros((grown.node_count, k))
    for node in range(grown.node_count):
        through = path[:, node].toarray().ravel() == 1
        counts[node] = np.bincount(y[through], weights=weight[through], minlength=k)
    expected = counts / counts.sum(axis=1, keepdims=True)
    np.testing.assert_array_equal(grown.proba, expected)
    assert grown.nbytes >= dense_bytes  # made on first read, then kept
    dense = Tree(**{"n_features": 4, "n_classes": k, "max_depth": grown.max_depth,
                    **grown.node_arrays()})
    fresh = AUCTreeClassifier(random_state=0).fit(X, y, sample_weight=weight).tree_
    for m in (2, 5, 20):  # collapsing gathers only the kept rows
        np.testing.assert_array_equal(fresh.collapsed(m).proba, dense.collapsed(m).proba)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(fresh)).proba, dense.proba)
    counts_oob = rng.integers(0, 2, n)
    sizes = np.array([1, 2, 5, 10], dtype=np.int32)
    for tree in (AUCTreeClassifier(random_state=0).fit(X, y, sample_weight=weight).tree_,
                 dense):
        out, n_trees = np.zeros((4, n, k)), np.zeros(n)
        accumulate_oob_proba(tree, X, counts_oob, sizes, out, n_trees)
        found = oob_used_nodes(tree, X, counts_oob, sizes)
        if tree is dense:
            np.testing.assert_array_equal(out, reference_out)
            for a, b in zip(found, reference_found):
                np.testing.assert_array_equal(a, b)
        reference_out, reference_found = out, found


def _collapsed_reference(tree, m, split_impurity):
    """`Tree.collapsed` node by node, in preorder from the root: a split
    stays a split unless both children have fewer than m cases; each child of
    a split is kept, predicting its own proportions, or its parent's when it
    has fewer than m cases."""
    n = tree.n_node_samples
    left, right, proba = tree.children_left, tree.children_right, tree.proba
    names = ("children_left", "children_right", "feature", "threshold", "missing_go_to_left",
             "improvement", "n_node_samples", "weighted_n_node_samples", "impurity",
             "value", "categorical_split")
    out = {name: [] for name in names}

    def visit(node, source):
        position = len(out["feature"])
        split = tree.feature[node] >= 0
        leaf = not split or (n[left[node]] < m and n[right[node]] < m)
        values = dict(
            children_left=-1, children_right=-1, feature=-2 if leaf else tree.feature[node],
            threshold=-2.0 if leaf else tree.threshold[node],
            missing_go_to_left=0 if leaf else tree.missing_go_to_left[node],
            improvement=0.0 if leaf else tree.improvement[node],
            n_node_samples=n[node], weighted_n_node_samples=tree.weighted_n_node_samples[node],
            impurity=0.5 if leaf and split_impurity else tree.impurity[node],
            value=proba[source],
            categorical_split=0 if leaf else tree.categorical_split[node])
        for name in names:
            out[name].append(values[name])
        if not leaf:
            out["children_left"][position] = visit(
                left[node], left[node] if n[left[node]] >= m else node)
            out["children_right"][position] = visit(
                right[node], right[node] if n[right[node]] >= m else node)
        return position

    visit(0, 0)
    return {name: np.array(values) for name, values in out.items()}


@pytest.mark.parametrize("min_samples", [2, 5, 40, 10**12])
@pytest.mark.parametrize("params", [dict(criterion="auc"), dict(criterion="gini", max_bins=16),
                                    dict(criterion="auc", categorical_features=[3])])
def test_collapsed_keeps_the_nodes_of_a_walk_from_the_root(min_samples, params):
    rng = np.random.default_rng(min_samples)
    X = rng.normal(size=(600, 4))
    X[:, 3] = rng.integers(0, 6, 600)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 3, 600) + (np.nan_to_num(X[:, 0]) > 0) + (X[:, 3] == 2)
    tree = AUCTreeClassifier(random_state=0, **params).fit(X, y).tree_
    assert tree.node_count > 100
    split_impurity = params["criterion"] == "auc"
    collapsed = tree.collapsed(min_samples, split_impurity=split_impurity)
    expected = _collapsed_reference(tree, min_samples, split_impurity)
    assert collapsed.node_count == expected["feature"].size < tree.node_count
    got = dict(collapsed.node_arrays(), value=collapsed.proba,
               categorical_split=collapsed.categorical_split)
    for name, values in expected.items():
        np.testing.assert_array_equal(got[name], values, err_msg=name)
    depth = np.zeros(collapsed.node_count, dtype=int)  # from the expected children
    for node in range(collapsed.node_count):
        if expected["children_left"][node] >= 0:
            depth[expected["children_left"][node]] = depth[expected["children_right"][node]] = \
                depth[node] + 1
    assert collapsed.max_depth == depth.max()


def naive_subtree_costs(tree_, alpha):
    """(R_alpha, leaves, kept split nodes) of every pruned subtree of tree_, by
    enumeration: R(T) sums weight share x Gini impurity over the leaves
    (Breiman et al. 1984, ch. 3; Gini also under the AUC criteria)."""
    left, right = tree_.children_left, tree_.children_right
    share = tree_.weighted_n_node_samples / tree_.weighted_n_node_samples[0]
    risk = share * (1.0 - (tree_.value[:, 0, :] ** 2).sum(axis=1))

    def subtrees(node):  # (risk, leaves, split nodes) of each pruning of node's subtree
        if left[node] < 0:
            return [(risk[node], 1, frozenset())]
        return [(risk[node], 1, frozenset())] + [
            (r1 + r2, n1 + n2, s1 | s2 | {node})
            for r1, n1, s1 in subtrees(left[node]) for r2, n2, s2 in subtrees(right[node])]

    return [(r + alpha * n, n, s) for r, n, s in subtrees(0)]


def assert_pruned_as_brute_force(grown, pruned, X, alpha):
    """``pruned`` is the smallest subtree of ``grown`` of least R_alpha, each row
    stopping where its path through ``grown`` leaves the kept splits."""
    best_cost = min(c for c, _, _ in naive_subtree_costs(grown.tree_, alpha))
    smallest = min((n, sorted(s)) for c, n, s in naive_subtree_costs(grown.tree_, alpha)
                   if c <= best_cost + 1e-12)
    assert pruned.get_n_leaves() == smallest[0]
    kept_splits = set(smallest[1])
    full_paths, pruned_paths = grown.decision_path(X), pruned.decision_path(X)
    proba = pruned.predict_proba(X)
    for row in range(X.shape[0]):
        path = full_paths.indices[full_paths.indptr[row]:full_paths.indptr[row + 1]]
        stop = next(i for i, node in enumerate(np.sort(path)) if node not in kept_splits)
        assert pruned_paths.indptr[row + 1] - pruned_paths.indptr[row] == stop + 1
        np.testing.assert_array_equal(proba[row], grown.tree_.value[np.sort(path)[stop], 0])


def categorical_problem(seed, n=240):
    """Two categorical features of 7 and 5 levels (NaN missing) that decide y
    with noise, and a numeric one."""
    rng = np.random.default_rng(seed)
    first, second = rng.integers(0, 7, n).astype(np.float32), rng.integers(0, 5, n)
    first[rng.random(n) < 0.05] = np.nan
    X = np.column_stack([first, second, rng.normal(size=n)]).astype(np.float32)
    y = (np.isin(first, [1, 3, 4]) ^ np.isin(second, [0, 2]) ^ (rng.random(n) < 0.2)
         ^ (X[:, 2] > 1.2)).astype(int)
    return X, y


@pytest.mark.parametrize("criterion", ["auc", "gini"])
def test_ccp_alpha_prunes_a_tree_with_categorical_splits_as_brute_force(criterion):
    """Issue 44 case 4: ccp_alpha > 0 with a categorical feature raised IndexError
    (the level sets are stored one row per categorical split, not per node)."""
    X, y = categorical_problem(18)
    params = dict(criterion=criterion, categorical_features=[0, 1], max_leaf_nodes=10,
                  random_state=0)
    grown = AUCTreeClassifier(**params).fit(X, y)
    assert grown.tree_.categorical_split.sum() >= 2
    path = AUCTreeClassifier(**params).cost_complexity_pruning_path(X, y)
    for alpha in [0.002, 0.01, *path.ccp_alphas[1:-1]]:
        pruned = AUCTreeClassifier(ccp_alpha=alpha, **params).fit(X, y)
        assert_pruned_as_brute_force(grown, pruned, X, alpha)


def test_ccp_alpha_prunes_each_tree_of_a_forest_with_categorical_splits():
    from aucforest import AUCForestClassifier
    X, y = categorical_problem(19)
    params = dict(n_estimators=3, categorical_features=[0, 1], max_leaf_nodes=10,
                  predict_min_samples=1, random_state=0)
    grown = AUCForestClassifier(**params).fit(X, y)
    pruned = AUCForestClassifier(ccp_alpha=0.004, **params).fit(X, y)
    assert any(t.tree_.categorical_split.any() for t in pruned.estimators_)
    for full_tree, pruned_tree in zip(grown.estimators_, pruned.estimators_):
        assert_pruned_as_brute_force(full_tree, pruned_tree, X, 0.004)


BUILDER_CASES = [
    dict(),  # the AUC criterion ties often: ties go to the first feature in random order
    dict(criterion="gini"),
    dict(max_features=2),
    dict(nsplit=2, max_features=3),
    dict(max_bins=8, nsplit=2),
    dict(splitter="random", max_features=3),
    dict(categorical_features=[0], max_features=2),
    dict(max_depth=4, min_samples_leaf=3, min_impurity_decrease=0.002),
]


@pytest.mark.parametrize("params", BUILDER_CASES, ids=repr)
@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_best_first_tree_that_never_reaches_max_leaf_nodes_is_the_depth_first_tree(params,
                                                                                     sparse_input,
                                                                                     weighted):
    """Issue 44 case 5a: with max_leaf_nodes never reached, the best-first builder
    grew another tree than the depth-first one: each node drew its feature order
    (and thresholds) from one random stream consumed in the order the builder
    visits the nodes. scikit-learn's test_importances compares the two on iris.
    Weighted: each node's class weights are summed when the node is made, in
    the same order by both builders (the best-first builder once summed them
    again in the final order, which rounds otherwise)."""
    import scipy.sparse as sp
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(20)
    X = np.column_stack([rng.integers(0, 4, X.shape[0]), X]).astype(np.float32)  # codes 0..3
    weight = rng.uniform(0.1, 1.0, X.shape[0]) if weighted else None
    if sparse_input and "categorical_features" not in params:
        X = sp.csc_matrix(np.where(rng.random(X.shape) < 0.3, 0.0, X))
    elif sparse_input:
        return
    for seed in range(3):
        depth_first = AUCTreeClassifier(random_state=seed, **params).fit(
            X, y, sample_weight=weight)
        assert depth_first.get_n_leaves() > 4
        best_first = AUCTreeClassifier(random_state=seed, max_leaf_nodes=X.shape[0],
                                       **params).fit(X, y, sample_weight=weight)
        for name, array in depth_first.tree_.node_arrays().items():
            np.testing.assert_array_equal(best_first.tree_.node_arrays()[name], array,
                                          err_msg=name)
        np.testing.assert_array_equal(best_first.feature_importances_,
                                      depth_first.feature_importances_)
        # bounded: the leaves the best-first order reaches first, a pruning of the same tree
        bounded = AUCTreeClassifier(random_state=seed, max_leaf_nodes=4, **params).fit(
            X, y, sample_weight=weight)
        assert bounded.get_n_leaves() == 4
        kept = bounded.tree_.feature >= 0
        assert set(bounded.tree_.threshold[kept]) <= set(depth_first.tree_.threshold)
