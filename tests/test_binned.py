"""The binned splitter (max_bins): against a brute-force scan over the bin edges,
against the exact splitter, and the binning itself."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aucforest
from aucforest import AUCForestClassifier, AUCTreeClassifier
from aucforest import _binning
from aucforest._binning import MISSING_CODE, bin_features
from references import best_split_with_missing, split_value, table_of


def brute_force_best_over_edges(X, y, w, criterion, min_samples_leaf, binned):
    """Every split x <= e_b over the bin edges of each feature, with the missing
    cases sent left and right, plus "observed left, missing right"."""
    return best_split_with_missing(X, y, w, criterion, min_samples_leaf,
                                   lambda f: binned.edges[f, :binned.n_bins[f] - 1])


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       criterion=st.sampled_from(["auc", "gini", "entropy", "auc_ecp"]),
       msl=st.integers(1, 3), max_bins=st.integers(2, 8))
def test_root_split_reaches_brute_force_over_bin_edges(seed, criterion, msl, max_bins):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(6, 60)), int(rng.integers(1, 4))
    X = rng.standard_normal((n, p)).astype(np.float32)   # more distinct values than bins
    X[rng.random((n, p)) < rng.uniform(0, 0.4)] = np.nan
    y = rng.integers(0, int(rng.integers(2, 5)), size=n)
    y[:2] = [0, 1]
    w = rng.uniform(0.2, 2.0, size=n)
    binned = bin_features(np.asfortranarray(X), max_bins, np.random.RandomState(0))
    best = brute_force_best_over_edges(X, y, w, criterion, msl, binned)
    tree = AUCTreeClassifier(criterion=criterion, max_depth=1, min_samples_leaf=msl,
                             max_bins=max_bins, random_state=seed).fit(X, y, sample_weight=w)
    if not np.isfinite(best):
        assert tree.tree_.node_count == 1
        return
    t = tree.tree_
    f = t.feature[0]
    assert t.threshold[0] in binned.edges[f, :binned.n_bins[f]]
    x = X[:, f]
    left = np.where(np.isnan(x), bool(t.missing_go_to_left[0]), x <= t.threshold[0])
    value = split_value(table_of(left, y, w, y.max() + 1), criterion)
    assert value == pytest.approx(best, rel=1e-9, abs=1e-12)
    # the stored statistic is the exact value of the chosen split
    assert t.improvement[0] + (0.5 if criterion.startswith("auc") else 0.0) == pytest.approx(value, abs=1e-12)
    np.testing.assert_array_equal(tree.apply(X) == t.children_left[0], left)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), criterion=st.sampled_from(["auc", "auc_ecp"]),
       n_classes=st.sampled_from([24, 40, 70]), max_bins=st.integers(2, 6))
def test_many_classes_per_bin_reach_brute_force(seed, criterion, n_classes, max_bins):
    """Bins holding most of 24-70 classes: the scan recomputes the AUC statistic
    after a whole bin (from 20 classes moved at once at 24 present, 28 at 70)
    instead of class by class; above 64 classes without the class bitmask."""
    rng = np.random.default_rng(seed)
    n, p = 12 * n_classes, 2
    X = rng.standard_normal((n, p)).astype(np.float32)
    X[rng.random((n, p)) < 0.1] = np.nan
    y = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    w = rng.uniform(0.2, 2.0, size=n)
    binned = bin_features(np.asfortranarray(X), max_bins, np.random.RandomState(0))
    best = brute_force_best_over_edges(X, y, w, criterion, 1, binned)
    tree = AUCTreeClassifier(criterion=criterion, max_depth=1, max_bins=max_bins,
                             random_state=seed).fit(X, y, sample_weight=w)
    t = tree.tree_
    x = X[:, t.feature[0]]
    left = np.where(np.isnan(x), bool(t.missing_go_to_left[0]), x <= t.threshold[0])
    assert split_value(table_of(left, y, w, n_classes), criterion) == pytest.approx(
        best, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("criterion", ["auc", "gini", "entropy"])
@pytest.mark.parametrize("n_classes", [2, 5, 40, 70])
def test_binned_tree_equals_exact_tree_when_values_fit_in_bins(criterion, n_classes):
    rng = np.random.default_rng(n_classes)
    X = rng.integers(0, 40, size=(1500, 6)).astype(np.float32)  # 40 distinct values < 64 bins
    X[:, 1] *= 0.37
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (X[:, 0] + rng.normal(0, 10, 1500) > 20).astype(int) if n_classes == 2 else \
        rng.integers(0, n_classes, 1500)
    w = rng.uniform(0.5, 2.0, 1500)
    params = dict(criterion=criterion, max_features=3, min_samples_leaf=2, random_state=3)
    exact = AUCTreeClassifier(**params).fit(X, y, sample_weight=w).tree_
    binned = AUCTreeClassifier(max_bins=64, **params).fit(X, y, sample_weight=w).tree_
    assert binned.node_count == exact.node_count > 50
    for name in ("children_left", "children_right", "feature", "missing_go_to_left",
                 "n_node_samples"):
        np.testing.assert_array_equal(getattr(binned, name), getattr(exact, name), err_msg=name)
    for name in ("value", "weighted_n_node_samples", "impurity", "improvement"):
        np.testing.assert_allclose(getattr(binned, name), getattr(exact, name), rtol=0,
                                   atol=1e-12, err_msg=name)
    np.testing.assert_array_equal(binned.apply(X), exact.apply(X))


def test_binned_forest_equals_exact_forest_when_values_fit_in_bins():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 20, size=(800, 5)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 4, 800) > 19).astype(int)
    params = dict(n_estimators=5, random_state=0, n_jobs=1)
    exact = AUCForestClassifier(nsplit=None, **params).fit(X, y)  # every threshold
    binned = AUCForestClassifier(max_bins=32, nsplit=None, **params).fit(X, y)
    # same bootstrap draws, same trees (thresholds aside: a bin edge instead of the
    # midpoint between the node's values, which out-of-bag values can fall between)
    for tree_exact, tree_binned in zip(exact.estimators_, binned.estimators_):
        assert tree_binned.tree_.node_count == tree_exact.tree_.node_count
        for name in ("children_left", "feature", "n_node_samples"):
            np.testing.assert_array_equal(getattr(tree_binned.tree_, name),
                                          getattr(tree_exact.tree_, name))
        np.testing.assert_allclose(tree_binned.tree_.value, tree_exact.tree_.value, atol=1e-12)


def test_thresholds_reproduce_the_bin_codes_at_predict_time():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3000, 4)).astype(np.float32)
    X[:, 2] = np.round(X[:, 2] * 3)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(0, 1, 3000) > 0).astype(int)
    tree = AUCTreeClassifier(max_bins=16, random_state=0).fit(X, y).tree_
    binned = bin_features(np.asfortranarray(X), 16, np.random.RandomState(0))
    # new data: fresh values, the edges themselves and their float32 neighbours
    # (X is finite: the last bin's edge, the largest float32, has no upper neighbour)
    edges = binned.edges[binned.edges < _binning.LAST_EDGE].astype(np.float32)
    probe = np.concatenate([edges, np.nextafter(edges, np.float32(np.inf)),
                            np.nextafter(edges, np.float32(-np.inf))])
    X_new = np.concatenate([rng.standard_normal((2000, 4)).astype(np.float32),
                            np.repeat(probe[:, None], 4, axis=1)])
    codes = binned.transform(X_new)
    for node in np.flatnonzero(tree.children_left >= 0):
        f, threshold = tree.feature[node], tree.threshold[node]
        (b,) = np.flatnonzero(binned.edges[f] == threshold)
        x = X_new[:, f]
        observed = ~np.isnan(x)
        np.testing.assert_array_equal(x[observed] <= threshold, codes[observed, f] <= b)
        assert np.all(codes[~observed, f] == MISSING_CODE)


def test_binning_one_bin_per_value_and_quantiles_otherwise():
    rng = np.random.default_rng(2)
    few = rng.choice(np.float32([-3.5, 0.0, 1e-3, 7.0]), 1000)
    many = rng.standard_normal(1000).astype(np.float32)
    binned = bin_features(np.asfortranarray(np.column_stack([few, many])), 10,
                          np.random.RandomState(0))
    assert binned.n_bins[0] == 4
    np.testing.assert_array_equal(np.unique(binned.codes[:, 0]), [0, 1, 2, 3])
    assert binned.n_bins[1] == 10
    sizes = np.bincount(binned.codes[:, 1])
    assert sizes.min() >= 90 and sizes.max() <= 110   # deciles of the values


def test_quantiles_of_large_data_come_from_a_seeded_subsample(monkeypatch):
    monkeypatch.setattr(_binning, "QUANTILE_SAMPLE", 500)
    X = np.asfortranarray(np.random.default_rng(3).standard_normal((5000, 2)).astype(np.float32))
    first = bin_features(X, 20, np.random.RandomState(7))
    again = bin_features(X, 20, np.random.RandomState(7))
    other = bin_features(X, 20, np.random.RandomState(8))
    np.testing.assert_array_equal(first.edges, again.edges)
    assert not np.array_equal(first.edges, other.edges)
    np.testing.assert_array_equal(first.codes, first.transform(X))
    assert np.bincount(first.codes[:, 0]).max() < 2 * 5000 / 20


@pytest.mark.parametrize("max_bins", [1, 256, 2.5])
def test_max_bins_out_of_range_is_rejected(max_bins):
    X, y = np.random.default_rng(0).standard_normal((20, 2)), np.arange(20) % 2
    with pytest.raises(ValueError, match="max_bins"):
        AUCTreeClassifier(max_bins=max_bins).fit(X, y)
    with pytest.raises(ValueError, match="max_bins"):
        AUCForestClassifier(n_estimators=2, max_bins=max_bins).fit(X, y)


def test_binned_forest_round_trips_through_a_model_file(tmp_path):
    from aucforest import io

    rng = np.random.default_rng(4)
    X = rng.standard_normal((600, 5)).astype(np.float32)
    X[::9, 1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(0, 0.5, 600) > 0).astype(int)
    forest = AUCForestClassifier(n_estimators=4, max_bins=16, oob_score=True,
                                 random_state=0).fit(X, y)
    io.save(forest, tmp_path / "binned.aucf")
    loaded = io.load(tmp_path / "binned.aucf")
    assert loaded.max_bins == 16
    np.testing.assert_array_equal(loaded.predict_proba(X), forest.predict_proba(X))


def test_auto_max_bins_bins_from_the_row_threshold_on(monkeypatch, tmp_path):
    from aucforest import _base, load

    monkeypatch.setattr(_base, "AUTO_BINNED_ROWS", 400)
    rng = np.random.default_rng(7)
    X = rng.standard_normal((600, 4)).astype(np.float32)
    y = (X[:, 0] + rng.normal(0, 1, 600) > 0).astype(int)
    params = dict(n_estimators=5, random_state=0)
    auto = AUCForestClassifier(**params).fit(X, y)  # 600 rows >= 400: binned
    binned = AUCForestClassifier(max_bins=255, **params).fit(X, y)
    assert (auto.max_bins, auto.max_bins_, binned.max_bins_) == ("auto", 255, 255)
    assert all(tree.max_bins == 255 for tree in auto.estimators_)
    np.testing.assert_array_equal(auto.predict_proba(X), binned.predict_proba(X))
    small = AUCForestClassifier(**params).fit(X[:300], y[:300])  # below: exact
    exact = AUCForestClassifier(max_bins=None, **params).fit(X[:300], y[:300])
    assert small.max_bins_ is None
    np.testing.assert_array_equal(small.predict_proba(X), exact.predict_proba(X))
    assert not np.array_equal(auto.predict_proba(X),
                              AUCForestClassifier(max_bins=None, **params).fit(X, y)
                              .predict_proba(X))
    aucforest.save(auto, tmp_path / "auto.npz")
    loaded = load(tmp_path / "auto.npz")
    assert (loaded.max_bins, loaded.max_bins_) == ("auto", 255)
    assert all(tree.max_bins == 255 for tree in loaded.estimators_)
    np.testing.assert_array_equal(loaded.predict_proba(X), auto.predict_proba(X))


@pytest.mark.parametrize("oob_score", [False, True])
def test_memory_order_of_X_does_not_change_the_forest(oob_score):
    """The binned fit reads X as it comes (no Fortran copy): C-ordered, Fortran-
    ordered and strided X give the same forest, out-of-bag figures included
    (with oob_score the walk of all rows, without it the node-size choice's
    gathered rows)."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((3000, 8)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(0, 1, 3000) > 0.5).astype(int) + (X[:, 1] > 1)
    strided = np.empty((3000, 16), dtype=np.float32)[:, ::2]
    strided[...] = X
    params = dict(n_estimators=6, max_bins=32, oob_score=oob_score, random_state=0)
    forests = [AUCForestClassifier(**params).fit(data, y)
               for data in (X, np.asfortranarray(X), strided)]
    for other in forests[1:]:
        assert other.predict_min_samples_ == forests[0].predict_min_samples_
        np.testing.assert_array_equal(other.predict_proba(X), forests[0].predict_proba(X))
        assert other.oob_scores_by_min_samples_ == forests[0].oob_scores_by_min_samples_
        if oob_score:
            np.testing.assert_array_equal(other.oob_decision_function_,
                                          forests[0].oob_decision_function_)


def reference_binning(X, max_bins, seed, is_categorical):
    """Edges and codes by the definition: edges from each feature's sorted
    sample (the seeded subsample above QUANTILE_SAMPLE rows), a value's code the
    number of edges below it (np.searchsorted), 255 for NaN; a categorical
    feature's code its level."""
    n, p = X.shape
    rows = np.arange(n)
    if n > _binning.QUANTILE_SAMPLE:
        rows = np.sort(np.random.RandomState(seed).choice(n, _binning.QUANTILE_SAMPLE,
                                                          replace=False))
    codes = np.empty(X.shape, dtype=np.uint8)
    edges = []
    for f in range(p):
        column = X[:, f]
        if is_categorical[f]:
            codes[:, f] = np.where(np.isnan(column), MISSING_CODE, np.nan_to_num(column))
            edges.append(None)
            continue
        values = column[rows]
        feature_edges = _binning.bin_edges(values[~np.isnan(values)], max_bins)
        codes[:, f] = np.where(np.isnan(column), MISSING_CODE,
                               np.searchsorted(feature_edges, column, side="left"))
        edges.append(feature_edges)
    return codes, edges


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), max_bins=st.sampled_from([2, 3, 16, 255]),
       n_threads=st.integers(1, 3), order=st.sampled_from("CF"),
       gather_values=st.sampled_from([1, 7, 1 << 23]))
def test_bin_codes_count_the_edges_below_each_value(seed, max_bins, n_threads, order,
                                                    gather_values):
    """Codes in any memory order, by any number of threads and any size of
    sample gathers equal the definition; the subsample (QUANTILE_SAMPLE made
    small) gives the edges; ties, infinities, NaN, a constant feature and a
    categorical one included."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(1, 400)), int(rng.integers(1, 7))
    X = rng.standard_normal((n, p)).astype(np.float32)
    X[:, 0] = np.round(X[:, 0] * rng.integers(1, 200)) / 7          # ties
    X[rng.random((n, p)) < 0.05] = np.inf
    X[rng.random((n, p)) < 0.05] = -np.inf
    X[rng.random((n, p)) < 0.1] = np.nan
    if p > 2:
        X[:, 2] = 1.5                                                  # constant
    is_categorical = np.zeros(p, dtype=bool)
    if p > 3:
        X[:, 3] = np.where(np.isnan(X[:, 3]), np.nan, rng.integers(0, 9, n))
        is_categorical[3] = True
    X = np.asarray(X, order=order)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_binning, "QUANTILE_SAMPLE", 150)
        patch.setattr(_binning, "_SAMPLE_GATHER_VALUES", gather_values)
        binned = bin_features(X, max_bins, np.random.RandomState(seed % 1000),
                              is_categorical, n_threads=n_threads)
        codes, edges = reference_binning(X, max_bins, seed % 1000, is_categorical)
    np.testing.assert_array_equal(binned.codes, codes)
    assert binned.codes.flags.f_contiguous
    for f, feature_edges in enumerate(edges):
        if feature_edges is not None:
            assert binned.n_bins[f] == feature_edges.size + 1
            np.testing.assert_array_equal(binned.edges[f, :feature_edges.size], feature_edges)


def _trees_of_both_passes(n_classes, nsplit, criterion, seed, draw_weights, best_first=False):
    """The tree of the splitter's passes as they run and of the passes that read
    each case's class and weight as given (`read_weights_as_given`), on 3,000
    rows with weights ``draw_weights(rng, n)``; also X and the weights."""
    from aucforest._binned import BinnedSplitter
    from aucforest._criterion import CRITERIA
    from aucforest._tree import build_tree, build_tree_best_first

    rng = np.random.default_rng(seed)
    n = 3000
    X = rng.normal(size=(n, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.03] = np.nan
    y = np.minimum((np.abs(np.nan_to_num(X[:, 0]) + rng.normal(size=n)) * n_classes / 3).astype(np.intp),
                   n_classes - 1)
    y[:n_classes] = np.arange(n_classes)  # every class occurs
    w = draw_weights(rng, n)
    binned = bin_features(X, 64, np.random.RandomState(0))

    def tree(as_given):
        splitter = BinnedSplitter(binned.codes, binned.edges, binned.n_bins, y, w, n_classes,
                                  CRITERIA[criterion], 2, 1, 0.0, 5, nsplit=nsplit)
        if as_given:
            splitter.read_weights_as_given()
        if best_first:
            return build_tree_best_first(splitter, np.iinfo(np.intp).max, 150)
        return build_tree(splitter, np.iinfo(np.intp).max)

    as_run, given = tree(False), tree(True)
    assert as_run.node_count > 100
    for name in ("feature", "threshold", "children_left", "children_right",
                 "missing_go_to_left", "n_node_samples", "weighted_n_node_samples",
                 "impurity", "value"):
        np.testing.assert_array_equal(getattr(as_run, name), getattr(given, name), err_msg=name)
    return as_run, X, w


@pytest.mark.parametrize("n_classes", [2, 3, 9, 64])
@pytest.mark.parametrize("nsplit", [0, 10])
@pytest.mark.parametrize("criterion", ["auc", "gini"])
@pytest.mark.parametrize("best_first", [False, True])
def test_node_order_passes_grow_the_tree_of_the_gathering_passes(n_classes, nsplit, criterion,
                                                                 best_first):
    # under weights other than 1 (bootstrap multiplicities) each node's classes and
    # weights are copied once in its sample order and every feature's pass reads the
    # copies: the same values added in the same order, so the tree of the passes
    # that gather y and w per case (multiplicities / 7: sums that round)
    copied, X, w = _trees_of_both_passes(n_classes, nsplit, criterion, 7 * n_classes + nsplit,
                                         lambda rng, n: rng.poisson(1.0, n) / 7.0, best_first)
    # and each leaf's weight is its cases' (a naive sum)
    leaf_of = copied.apply(X)
    leaves = np.flatnonzero(copied.children_left < 0)
    np.testing.assert_allclose(copied.weighted_n_node_samples[leaves],
                               np.bincount(leaf_of, weights=w, minlength=copied.node_count)[leaves],
                               rtol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3, 9, 64])
@pytest.mark.parametrize("nsplit", [0, 10])
@pytest.mark.parametrize("criterion", ["auc", "gini"])
def test_unit_weight_passes_grow_the_tree_of_the_weighted_passes(n_classes, nsplit, criterion):
    # when every drawn case weighs 1 (the default forest's trees), the passes
    # over a node's cases add 1 at the class byte instead of reading y and w:
    # the same sums, so the tree of the passes that read y and w as given
    # (drawn once or not at all)
    _trees_of_both_passes(n_classes, nsplit, criterion, n_classes + nsplit,
                          lambda rng, n: (rng.random(n) < 0.632).astype(float))
