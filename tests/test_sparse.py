"""Sparse X: a fit on a scipy sparse matrix grows the trees a fit on its dense
array grows, and prediction on sparse rows gives the dense predictions.

The reference is always the same estimator on ``X.toarray()``: node arrays
must be equal element for element (same splits, thresholds, node sizes,
values), not merely close. Sample weights are multiples of 1/4 so that every
sum is exact whatever order the two fits add the cases in.
"""
import numpy as np
import pytest
import scipy.sparse as sp

from aucforest import AUCForestClassifier, AUCTreeClassifier
from aucforest import _binning, _sparse
from aucforest._base import distinct_value_tables
from aucforest._binning import bin_features
from aucforest._sort import sort_for_tests
from aucforest._sparse import bin_sparse_features
from aucforest._sparse_split import sort_node_for_tests
from aucforest.inspection import oob_importance, shap_values

CRITERIA = ("auc", "auc_ecp", "gini", "entropy")


def sparse_data(n, p, density, seed, n_classes=2, missing=0.0):
    """A CSC matrix whose stored values include explicit zeros and negative
    values: even columns continuous (few ties), odd ones small counts (many
    ties); ``missing``: share of the stored values that are NaN. y depends
    on the first columns."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, format="csc", random_state=rng, dtype=np.float32)
    columns = np.repeat(np.arange(p), np.diff(X.indptr))
    continuous = rng.normal(size=X.nnz).astype(np.float32)
    counts = rng.choice(np.array([-1, 0, 1, 2, 3], dtype=np.float32), size=X.nnz)
    X.data = np.where(columns % 2 == 0, continuous, counts)
    X.data[rng.random(X.nnz) < missing] = np.nan
    dense = np.nan_to_num(X.toarray())
    score = dense[:, 0] - dense[:, 1] + dense[:, 2] + rng.normal(scale=0.5, size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def assert_same_tree(sparse_tree, dense_tree):
    sparse_arrays, dense_arrays = sparse_tree.node_arrays(), dense_tree.node_arrays()
    for name, array in dense_arrays.items():
        np.testing.assert_array_equal(sparse_arrays[name], array, err_msg=name)
    assert sparse_tree.max_depth == dense_tree.max_depth


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("max_bins, nsplit", [(None, None), (None, 3), (16, None), (255, 2)])
@pytest.mark.parametrize("density", [0.03, 0.4, 0.97])
def test_tree_on_csc_is_the_tree_on_the_dense_array(criterion, max_bins, nsplit, density):
    X, y = sparse_data(300, 12, density, seed=int(density * 100), missing=0.05)
    weights = np.random.default_rng(1).integers(0, 5, size=300) / 4  # some rows weigh 0
    params = dict(criterion=criterion, max_bins=max_bins, nsplit=nsplit, max_features=4,
                  random_state=0)
    on_sparse = AUCTreeClassifier(**params).fit(X, y, sample_weight=weights)
    on_dense = AUCTreeClassifier(**params).fit(X.toarray(), y, sample_weight=weights)
    assert on_dense.tree_.node_count > 15
    assert_same_tree(on_sparse.tree_, on_dense.tree_)
    rows = X.tocsr()
    np.testing.assert_array_equal(on_sparse.predict_proba(rows), on_dense.predict_proba(X.toarray()))
    np.testing.assert_array_equal(on_sparse.tree_.apply(rows), on_dense.tree_.apply(X.toarray()))


@pytest.mark.parametrize("max_bins", [None, 255])
@pytest.mark.parametrize("density", [0.2, 0.996])
def test_large_nodes_and_many_classes(max_bins, density):
    # nodes of more than 1,024 cases (the exact splitter sorts only the stored
    # values there, around the block of zeros, and must keep the dense sort's
    # order of ties: with density 0.996 the continuous columns have too few
    # ties for a table of distinct values, and nsplit draws their cases by
    # position) and 9 classes (the binned splitter's per-bin class masks)
    X, y = sparse_data(3000, 10, density, seed=5, n_classes=9, missing=0.002)
    for nsplit in (None, 10):
        params = dict(max_bins=max_bins, nsplit=nsplit, max_features=3, random_state=1)
        on_sparse = AUCTreeClassifier(**params).fit(X, y)
        on_dense = AUCTreeClassifier(**params).fit(X.toarray(), y)
        assert_same_tree(on_sparse.tree_, on_dense.tree_)


@pytest.mark.parametrize("max_bins", [None, 255])
def test_forest_on_csc_is_the_forest_on_the_dense_array(max_bins):
    X, y = sparse_data(600, 15, 0.15, seed=2, n_classes=3, missing=0.03)
    X_test, _ = sparse_data(200, 15, 0.15, seed=3, n_classes=3, missing=0.03)
    params = dict(n_estimators=25, max_bins=max_bins, oob_score=True, class_weight="balanced",
                  random_state=0, n_jobs=2)
    on_sparse = AUCForestClassifier(**params).fit(X, y)
    on_dense = AUCForestClassifier(**params).fit(X.toarray(), y)
    for sparse_tree, dense_tree in zip(on_sparse.estimators_, on_dense.estimators_):
        assert_same_tree(sparse_tree.tree_, dense_tree.tree_)
    assert on_sparse.predict_min_samples_ == on_dense.predict_min_samples_
    np.testing.assert_array_equal(on_sparse.oob_decision_function_,
                                  on_dense.oob_decision_function_)
    dense_test = X_test.toarray()
    np.testing.assert_array_equal(on_sparse.predict_proba(X_test.tocsr()),
                                  on_dense.predict_proba(dense_test))
    np.testing.assert_array_equal(on_sparse.predict(X_test), on_dense.predict(dense_test))
    np.testing.assert_array_equal(on_sparse.apply(X_test.tocoo()), on_dense.apply(dense_test))
    sparse_paths, sparse_ptr = on_sparse.decision_path(X_test)
    dense_paths, dense_ptr = on_dense.decision_path(dense_test)
    np.testing.assert_array_equal(sparse_ptr, dense_ptr)
    assert (sparse_paths != dense_paths).nnz == 0


def test_the_default_forest_on_sparse_input():
    # the defaults: max_bins="auto" (exact below 10,000 rows), nsplit=10,
    # node size chosen out of bag
    X, y = sparse_data(400, 20, 0.1, seed=4)
    on_sparse = AUCForestClassifier(20, random_state=3).fit(X, y)
    on_dense = AUCForestClassifier(20, random_state=3).fit(X.toarray(), y)
    for sparse_tree, dense_tree in zip(on_sparse.estimators_, on_dense.estimators_):
        assert_same_tree(sparse_tree.tree_, dense_tree.tree_)


@pytest.mark.parametrize("convert", [sp.csr_matrix, sp.coo_matrix, sp.csc_array, sp.lil_matrix],
                         ids=["csr", "coo", "csc_array", "lil"])
def test_every_sparse_format_fits_the_same_tree(convert):
    X, y = sparse_data(250, 8, 0.3, seed=6)
    reference = AUCTreeClassifier(max_bins=32, random_state=0).fit(X, y)
    tree = AUCTreeClassifier(max_bins=32, random_state=0).fit(convert(X), y)
    assert_same_tree(tree.tree_, reference.tree_)
    np.testing.assert_array_equal(tree.predict_proba(convert(X)), reference.predict_proba(X))


def test_duplicate_entries_are_summed_and_the_caller_matrix_is_left_alone():
    # a CSC matrix may store one cell twice, its rows unsorted; toarray sums
    # the duplicates
    rng = np.random.default_rng(7)
    rows, columns = rng.integers(0, 200, 1500), rng.integers(0, 6, 1500)
    values = rng.normal(size=1500).astype(np.float32)
    order = np.argsort(columns, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(columns, minlength=6))])
    X = sp.csc_matrix((values[order], rows[order], indptr), shape=(200, 6))
    assert not X.has_canonical_format
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    y = (X.toarray()[:, 0] > 0).astype(int)
    for max_bins in (None, 64):
        on_sparse = AUCTreeClassifier(max_bins=max_bins, random_state=0).fit(X, y)
        on_dense = AUCTreeClassifier(max_bins=max_bins, random_state=0).fit(X.toarray(), y)
        assert_same_tree(on_sparse.tree_, on_dense.tree_)
        np.testing.assert_array_equal(on_sparse.predict(X.tocsr()), on_dense.predict(X.toarray()))
    for kept, array in zip(before, (X.data, X.indices, X.indptr)):
        np.testing.assert_array_equal(kept, array)


def test_missing_values_stored_in_the_rows_to_predict():
    X, y = sparse_data(300, 6, 0.5, seed=8, missing=0.1)
    tree = AUCTreeClassifier(random_state=0).fit(X, y)
    rows = X.tocsr()
    assert np.isnan(rows.data).any()
    np.testing.assert_array_equal(tree.apply(rows), tree.apply(X.toarray()))
    assert (tree.decision_path(rows) != tree.decision_path(X.toarray())).nnz == 0


def test_sparse_rows_with_the_wrong_number_of_features_are_refused():
    X, y = sparse_data(100, 6, 0.5, seed=9)
    tree = AUCTreeClassifier(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="6 features"):
        tree.predict(sp.random(5, 7, density=0.5, format="csr"))
    with pytest.raises(ValueError, match=r"shape \(n_samples, 6\)"):
        tree.tree_.apply(sp.random(5, 7, density=0.5, format="csr"))


@pytest.mark.parametrize("n", [300, 1024, 5000])
def test_sorting_around_the_zeros_gives_the_dense_sort_order(n):
    # the dense sort keeps the order of ties from 1,024 values on and orders
    # them by sample below; the order of a node's samples decides which cases
    # nsplit draws in the next feature, so it must be the same
    rng = np.random.default_rng(n)
    values = rng.choice(np.array([-2.5, -1, -0.0, 0, 0, 0, 0.5, 3, np.nan], dtype=np.float32), n)
    continuous = rng.random(n) < 0.3
    values[continuous] = rng.normal(size=np.count_nonzero(continuous))
    samples = rng.permutation(n)
    sorted_values, sorted_samples = sort_node_for_tests(values, samples)
    reference_values, reference_samples = sort_for_tests(values, samples)
    np.testing.assert_array_equal(sorted_samples, reference_samples)
    np.testing.assert_array_equal(sorted_values, reference_values)


@pytest.mark.parametrize("quantile_rows", [None, 150])
def test_binning_of_stored_entries_matches_dense_binning(monkeypatch, quantile_rows):
    # columns with more distinct values than bins (quantile edges) and fewer
    # (one bin per value, computed for all such columns at once); with
    # quantile_rows, the edges come from drawn rows
    if quantile_rows is not None:
        monkeypatch.setattr(_binning, "QUANTILE_SAMPLE", quantile_rows)
        monkeypatch.setattr(_sparse, "QUANTILE_SAMPLE", quantile_rows)
    X, _ = sparse_data(400, 8, 0.6, seed=10, missing=0.05)
    dense = bin_features(X.toarray(), 20, np.random.RandomState(0))
    binned = bin_sparse_features(X, 20, np.random.RandomState(0))
    np.testing.assert_array_equal(binned.edges, dense.edges)
    np.testing.assert_array_equal(binned.n_bins, dense.n_bins)
    codes = np.repeat(binned.zero_codes[np.newaxis, :], X.shape[0], axis=0)
    columns = np.repeat(np.arange(X.shape[1]), np.diff(binned.indptr))
    codes[binned.indices, columns] = binned.entry_codes
    np.testing.assert_array_equal(codes, dense.codes)


def test_distinct_value_tables_of_stored_entries_match_the_dense_tables():
    X, _ = sparse_data(300, 10, 0.995, seed=11, missing=0.05)  # dense enough for no table
    sparse_values, sparse_offsets = distinct_value_tables(X)
    dense_values, dense_offsets = distinct_value_tables(X.toarray())
    np.testing.assert_array_equal(sparse_offsets, dense_offsets)
    np.testing.assert_array_equal(sparse_values, dense_values)
    assert np.any(np.diff(dense_offsets) == 0) and np.any(np.diff(dense_offsets) > 0)


def test_inspection_refuses_sparse_x_and_agrees_on_its_dense_array():
    X, y = sparse_data(300, 6, 0.4, seed=12)
    on_sparse = AUCForestClassifier(15, random_state=0).fit(X, y)
    on_dense = AUCForestClassifier(15, random_state=0).fit(X.toarray(), y)
    with pytest.raises(TypeError, match="toarray"):
        oob_importance(on_sparse, X, y)
    with pytest.raises(TypeError, match="toarray"):
        shap_values(on_sparse, X)
    dense = X.toarray()
    from_sparse_fit = oob_importance(on_sparse, dense, y, random_state=0)
    from_dense_fit = oob_importance(on_dense, dense, y, random_state=0)
    np.testing.assert_array_equal(from_sparse_fit.importances_mean,
                                  from_dense_fit.importances_mean)
    for from_sparse, from_dense in zip(shap_values(on_sparse, dense[:20]),
                                       shap_values(on_dense, dense[:20])):
        np.testing.assert_array_equal(from_sparse, from_dense)


def test_categorical_splits_route_sparse_rows_and_sparse_fit_refuses_them():
    rng = np.random.default_rng(13)
    dense = np.column_stack([rng.integers(0, 5, 300), rng.normal(size=300)]).astype(np.float32)
    dense[rng.random(300) < 0.5, 1] = 0.0
    y = np.isin(dense[:, 0], [1, 3]).astype(int)
    tree = AUCTreeClassifier(categorical_features=[0], random_state=0).fit(dense, y)
    np.testing.assert_array_equal(tree.apply(sp.csr_matrix(dense)), tree.apply(dense))
    with pytest.raises(ValueError, match="sparse"):
        AUCTreeClassifier(categorical_features=[0]).fit(sp.csc_matrix(dense), y)


# issue 44 case 1: a sparse matrix whose index arrays do not describe a matrix of
# its shape (mutated after construction) crashed or was read out of bounds
def malformed(convert, problem):
    """A 40 x 5 sparse matrix of ``convert``'s format with one index array broken."""
    dense = np.random.default_rng(14).normal(size=(40, 5)).astype(np.float32)
    dense[np.abs(dense) < 0.6] = 0.0
    X = convert(dense)
    X.sum_duplicates()  # canonical, so that no conversion repairs the problem
    n_minor = X.shape[1] if X.format == "csr" else X.shape[0]
    if problem == "index past the shape":
        X.indices[3] = n_minor + 2
    elif problem == "negative index":
        X.indices[3] = -1
    elif problem == "indptr decreasing":
        X.indptr[2] = X.indptr[3] + 1
    elif problem == "indptr past nnz":
        X.indptr[-1] = X.indices.shape[0] + 5
    elif problem == "indptr short of nnz":
        X.indptr[-1] = X.indices.shape[0] - 2
    elif problem == "indptr not from 0":
        X.indptr[0] = 1
    return X


MALFORMED = {"index past the shape": "index", "negative index": "index",
             "indptr decreasing": "indptr", "indptr past nnz": "indptr",
             "indptr short of nnz": "indptr", "indptr not from 0": "indptr"}
SPARSE_KINDS = [sp.csr_matrix, sp.csr_array, sp.csc_matrix, sp.csc_array]


@pytest.mark.parametrize("convert", SPARSE_KINDS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("problem", list(MALFORMED))
def test_malformed_sparse_index_arrays_are_refused_by_fit_and_every_prediction(convert,
                                                                                problem):
    rng = np.random.default_rng(15)
    dense = rng.normal(size=(40, 5)).astype(np.float32)
    y = np.arange(40) % 2
    message = f"malformed.*{MALFORMED[problem]}"
    for make in (lambda: AUCTreeClassifier(random_state=0),
                 lambda: AUCForestClassifier(5, random_state=0)):
        with pytest.raises(ValueError, match=message):
            make().fit(malformed(convert, problem), y)
        model = make().fit(dense, y)
        for method in ("predict", "predict_proba", "apply", "decision_path"):
            with pytest.raises(ValueError, match=message):
                getattr(model, method)(malformed(convert, problem))
        # shap_values reads dense rows only: a malformed X is named as such first
        with pytest.raises(ValueError, match=message):
            shap_values(model, malformed(convert, problem))


@pytest.mark.parametrize("convert", [sp.coo_matrix, sp.coo_array])
def test_coo_coordinates_outside_the_shape_are_refused(convert):
    dense = np.random.default_rng(16).normal(size=(40, 5)).astype(np.float32)
    y = np.arange(40) % 2
    tree = AUCTreeClassifier(random_state=0).fit(dense, y)
    for axis, bad in ((0, 40), (1, 7), (1, -1)):
        X = convert(dense)
        X.coords[axis][2] = bad
        with pytest.raises(ValueError, match="malformed"):
            tree.predict(X)
        with pytest.raises(ValueError, match="malformed"):
            AUCTreeClassifier().fit(X, y)


# issue 44 case 2: sparse predict read categorical features without checking
# their level codes, where dense predict refuses 1.5, 300 and -1
@pytest.mark.parametrize("bad", [1.5, 300.0, -1.0])
@pytest.mark.parametrize("make", [lambda: AUCTreeClassifier(categorical_features=[2],
                                                            random_state=0),
                                  lambda: AUCForestClassifier(5, categorical_features=[2],
                                                              random_state=0)])
def test_sparse_predict_refuses_the_level_codes_dense_predict_refuses(make, bad):
    rng = np.random.default_rng(17)
    dense = np.column_stack([rng.normal(size=200), rng.integers(0, 3, 200),
                             rng.integers(0, 5, 200)]).astype(np.float32)
    y = np.isin(dense[:, 2], [1, 3]).astype(int)  # feature 1: codes read as numbers
    model = make().fit(dense, y)
    rows = dense[:10].copy()
    rows[4, 2] = bad
    with pytest.raises(ValueError) as from_dense:
        model.predict(rows)
    assert "categorical feature 2 must hold level codes" in str(from_dense.value)
    for convert in SPARSE_KINDS:
        for method in ("predict", "predict_proba", "apply"):
            with pytest.raises(ValueError) as from_sparse:
                getattr(model, method)(convert(rows))
            assert str(from_sparse.value) == str(from_dense.value)
    # valid codes (0 unstored, NaN stored) give the dense answer
    rows[4, 2] = np.nan
    rows[5, 2] = 0.0
    for convert in SPARSE_KINDS:
        np.testing.assert_array_equal(model.predict_proba(convert(rows)),
                                      model.predict_proba(rows))


# issue 44 case 3: float32 duplicates that sum past float32's range were
# accepted as +-inf, where dense X refuses infinity
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("convert", [sp.csr_matrix, sp.csc_array])
def test_duplicates_summing_to_infinity_are_refused_like_an_infinite_value(convert, sign):
    big = np.float32(3e38) * np.float32(sign)
    # row 0 stores column 1 twice (a CSC matrix: column 1 stores row 0 twice)
    values = np.array([big, big, 1.0, 2.0], dtype=np.float32)
    minor, indptr = np.array([1, 1, 0, 2]), np.array([0, 2, 3, 4] + [4] * 37)
    if convert is sp.csc_array:
        indptr = indptr[:4]
    X = convert((values, minor, indptr), shape=(40, 3))
    assert not X.has_canonical_format and np.isinf(X.toarray()).any()
    y = np.arange(40) % 2
    for make in (AUCTreeClassifier, lambda: AUCForestClassifier(5, random_state=0)):
        with pytest.raises(ValueError, match="infinity"):
            make().fit(X.toarray(), y)  # the dense reference
        with pytest.raises(ValueError, match="infinity"):
            make().fit(X, y)
        model = make().fit(np.ones((40, 3)) * np.arange(40)[:, None], y)
        with pytest.raises(ValueError, match="infinity"):
            model.predict(X.toarray())
        with pytest.raises(ValueError, match="infinity"):
            model.predict(X)
