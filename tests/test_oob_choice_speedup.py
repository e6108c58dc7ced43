"""The node-size choice's multiclass AUC (one sort of the rows by class and
own score, `_rank_sums.pair_wins`) and its blockwise OOB G-mean, against
scikit-learn's one-vs-one AUC, the rank-sum formula per class pair and the
decision rule on all rows at once."""
import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from aucforest import AUCForestClassifier
from aucforest._decision_rule import DecisionRule, decide
from aucforest._oob_estimates import oob_auc, oob_gmean
from aucforest.metrics import multiclass_auc
from aucforest.metrics._auc import hand_till_auc
from aucforest.metrics._rank_sums import pair_wins


def forest_like_proba(n, k, seed, zero_share=0.8, levels=5):
    """Rows of class proportions with most entries exactly 0 and few distinct
    values (ties within and across classes), as a forest's OOB means are."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k  # every class present
    rng.shuffle(y)
    counts = rng.integers(1, levels, (n, k)) * (rng.random((n, k)) > zero_share)
    counts[np.arange(n), rng.integers(0, k, n)] += 1  # no all-zero row
    return y, counts / counts.sum(axis=1, keepdims=True)


def rank_sum_auc(y, proba):
    """M from A(i|j) = (S_i - n_i (n_i + 1) / 2) / (n_i n_j), S_i the sum of the
    midranks of class i's column-i scores among the rows of classes i and j
    (Hand & Till 2001, eq. 3); one rankdata per ordered pair."""
    k = proba.shape[1]
    pairs = []
    for i in range(k):
        for j in range(k):
            if i != j:
                rows = (y == i) | (y == j)
                ranks = rankdata(proba[rows, i])  # ties: midranks, i.e. one half
                n_i, n_j = np.sum(y == i), np.sum(y == j)
                s_i = ranks[y[rows] == i].sum()
                pairs.append((s_i - n_i * (n_i + 1) / 2) / (n_i * n_j))
    return np.mean(pairs)


@pytest.mark.parametrize("n, k, zero_share", [(300, 3, 0.0), (500, 12, 0.8),
                                              (640, 32, 0.9), (200, 20, 0.3)])
@pytest.mark.parametrize("seed", [0, 1])
def test_hand_till_auc_equals_sklearn_ovo_and_rank_sums(n, k, zero_share, seed):
    y, proba = forest_like_proba(n, k, seed, zero_share)
    got = hand_till_auc(y, proba)
    assert got == pytest.approx(roc_auc_score(y, proba, multi_class="ovo"), abs=1e-12)
    if k <= 12:
        assert got == pytest.approx(rank_sum_auc(y, proba), abs=1e-12)


def test_pair_wins_of_one_pair_counts_each_tie_one_half():
    # class 0 scores (column 0) 0.5, 0.2; class 1 rows score 0.5, 0.0, 0.9 in column 0
    scores = np.array([[0.5, 0.5], [0.2, 0.8], [0.5, 0.5], [0.0, 1.0], [0.9, 0.1]])
    codes = np.array([0, 0, 1, 1, 1], dtype=np.intp)
    wins = pair_wins(scores, codes, np.ones(5), 2)
    # column 0, each class-1 row: class-0 weight above + half tied = 0.5, 2, 0
    # column 1, each class-0 row (0.5, 0.8) against class-1 scores 0.5, 1.0, 0.1:
    #   0.5 -> 1 above + half of 1 tie = 1.5; 0.8 -> 1 above = 1
    np.testing.assert_array_equal(wins, [[0.0, 2.5], [2.5, 0.0]])


def test_pair_wins_rejects_codes_out_of_range():
    with pytest.raises(ValueError, match="codes must lie"):
        pair_wins(np.zeros((2, 2)), np.array([0, 2], dtype=np.intp), np.ones(2), 2)


def test_oob_auc_of_a_forest_equals_multiclass_auc_of_its_oob_decision():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = (np.digitize(X[:, 0] + 0.5 * rng.normal(size=600), [-1, -0.3, 0.3, 1])
         + 5 * (X[:, 1] > 0))  # 10 classes
    forest = AUCForestClassifier(15, oob_score=True, random_state=0).fit(X, y)
    codes = np.searchsorted(forest.classes_, y)
    has = ~np.isnan(forest.oob_decision_function_[:, 0])
    expected = multiclass_auc(y[has], forest.oob_decision_function_[has],
                              labels=forest.classes_)
    assert oob_auc(codes, forest.oob_decision_function_, forest.classes_) == pytest.approx(
        expected, abs=1e-12)
    assert forest.oob_score_ == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("decision", ["rfq", "argmax"])
def test_blockwise_oob_gmean_equals_the_decision_on_all_rows(decision):
    # 3000 x 40 = 120,000 values: more than one block of the decision
    y, proba = forest_like_proba(3000, 40, 3, zero_share=0.7)
    prior = np.bincount(y) / y.size
    predicted = decide(proba, prior, decision)
    recalls = [np.mean(predicted[y == k] == k) for k in range(40)]
    expected = np.prod(recalls) ** (1 / 40) if min(recalls) > 0 else 0.0
    assert oob_gmean(y, proba, prior, DecisionRule.parse(decision, 40)) == pytest.approx(expected, rel=1e-12)


def test_out_of_bag_sums_of_many_classes_equal_each_collapsed_tree():
    # above 8 classes accumulate_oob_proba adds only a node's nonzero proportions;
    # reference: the tree collapsed to each candidate size, predicting the OOB rows
    from aucforest._tree import accumulate_oob_proba
    from aucforest.tree import AUCTreeClassifier
    rng = np.random.default_rng(7)
    X = rng.normal(size=(900, 4)).astype(np.float32)
    y = np.digitize(X[:, 0] + 0.7 * rng.normal(size=900), np.linspace(-1.5, 1.5, 11))
    tree = AUCTreeClassifier(random_state=0).fit(X[:600], y[:600]).tree_
    assert tree.max_n_classes == 12
    sizes = (1, 2, 5, 10, 20, 50)
    out = np.zeros((len(sizes), 900, 12))
    n_trees = np.zeros(900)
    counts = rng.integers(0, 3, size=900)  # 0: out of bag
    accumulate_oob_proba(tree, np.asfortranarray(X), counts, sizes, out, n_trees)
    oob = counts == 0
    for c, m in enumerate(sizes):
        expected = np.zeros((900, 12))
        expected[oob] = tree.collapsed(m).predict_proba(X[oob])
        np.testing.assert_array_equal(out[c], expected)
    np.testing.assert_array_equal(n_trees, oob)


@pytest.mark.parametrize("choosing_rows", [False, True])
@pytest.mark.parametrize("layout", ["C", "F", "sparse"])
def test_out_of_bag_leaves_sum_row_by_row_as_the_running_sums(choosing_rows, layout):
    # OutOfBagLeaves keeps each tree's OOB nodes and sums one candidate at a
    # time, row by row; the reference is OutOfBagSums, one tree at a time over
    # all candidates: the same additions in the same order, equal to the bit
    import scipy.sparse as sp
    from aucforest._oob_estimates import OutOfBagLeaves, OutOfBagSums
    from aucforest.tree import AUCTreeClassifier
    rng = np.random.default_rng(8)
    n, k = 700, 20
    X = rng.normal(size=(n, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.3] = 0.0
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), np.linspace(-1.5, 1.5, k - 1))
    X_fit = {"C": X, "F": np.asfortranarray(X), "sparse": sp.csr_matrix(X)}[layout]
    rows = np.sort(rng.choice(n, 400, replace=False)) if choosing_rows else None
    sizes = (1, 2, 5, 10, 20, 50)
    sums, leaves = (kind(X_fit, k, sizes, rows) for kind in (OutOfBagSums, OutOfBagLeaves))
    for seed in range(7):
        counts = rng.poisson(1.0, size=n)
        tree = AUCTreeClassifier(random_state=seed).fit(X, y, sample_weight=counts).tree_
        for oob in (sums, leaves):
            oob.add(tree, counts[oob.cases])
    counts = np.ones(n, dtype=np.intp)  # a tree with no out-of-bag row adds nothing
    for oob in (sums, leaves):
        oob.add(tree, counts[oob.cases])
    np.testing.assert_array_equal(leaves.n_trees, sums.n_trees)
    assert (sums.n_trees == 0).any() and (sums.n_trees > 2).any()
    for c in range(len(sizes)):
        np.testing.assert_array_equal(leaves.proba(c), sums.proba(c))  # NaN rows alike
    np.testing.assert_array_equal(leaves.decision_function(2), sums.decision_function(2))
    assert leaves.decision_function(2) is not leaves.decision_function(2)


@pytest.mark.parametrize("n_trees", [1, 4, 6, 9])
def test_running_sums_of_many_classes_added_in_batches_equal_one_tree_at_a_time(n_trees):
    # OutOfBagSums adds trees of many classes SUMS_BATCH_TREES at a time, row
    # by row; the reference adds each tree by itself (accumulate_oob_proba),
    # all candidates at once. Reading the sums must take in the trees of a
    # batch not yet full; every sum is equal to the bit, NaN rows alike
    from aucforest._oob_estimates import SUMS_BATCH_TREES, OutOfBagSums
    from aucforest._tree import accumulate_oob_proba
    from aucforest.tree import AUCTreeClassifier
    assert 1 < SUMS_BATCH_TREES < 9
    rng = np.random.default_rng(n_trees)
    n, k = 600, 24
    X = rng.normal(size=(n, 5)).astype(np.float32)
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), np.linspace(-1.5, 1.5, k - 1))
    sizes = (1, 2, 5, 10, 20, 50)
    sums = OutOfBagSums(X, k, sizes)
    expected, expected_trees = np.zeros((len(sizes), n, k)), np.zeros(n)
    for seed in range(n_trees):
        counts = rng.poisson(1.0, size=n)
        tree = AUCTreeClassifier(random_state=seed).fit(X, y, sample_weight=counts).tree_
        sums.add(tree, counts)
        accumulate_oob_proba(tree, X, counts, np.array(sizes, dtype=np.int32), expected,
                             expected_trees)
    np.testing.assert_array_equal(sums.n_trees, expected_trees)
    assert (expected_trees == 0).any() and expected[:, expected_trees > 0].any()
    with np.errstate(invalid="ignore", divide="ignore"):
        expected /= expected_trees[:, None]
    for c in range(len(sizes)):
        np.testing.assert_array_equal(sums.proba(c), expected[c])


def naive_pair_wins(scores, codes, weight, k):
    """wins[i, j] = sum over rows b of class j, a of class i of w_a w_b
    ([s_a > s_b] + [s_a == s_b] / 2), s the column-i scores: all pairs."""
    wins = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:
                a, b = scores[codes == i, i], scores[codes == j, i]
                wa, wb = weight[codes == i], weight[codes == j]
                above = (a[:, None] > b[None, :]) + 0.5 * (a[:, None] == b[None, :])
                wins[i, j] = wa @ above @ wb
    return wins


@pytest.mark.parametrize("case", ["normal", "ties", "huge", "tiny", "one_per_class", "constant"])
def test_pair_wins_finds_every_score_among_the_buckets_as_all_pairs_do(case):
    # pair_wins finds a score among a class's sorted scores through buckets
    # spread over their range: spans that overflow or are subnormal, scores
    # on and outside the ends, ties and one-row classes must give all pairs' wins
    rng = np.random.default_rng(7)
    n, k = 240, 5
    codes = np.arange(n) % k
    scores = rng.normal(size=(n, k))
    if case == "ties":
        scores = np.round(scores, 1)
    elif case == "huge":
        scores = np.where(rng.random((n, k)) < 0.5, -1.0, 1.0) * 1.7e308 * rng.random((n, k))
        scores[0, :] = 1.7e308
        scores[1, :] = -1.7e308
    elif case == "tiny":
        scores = rng.integers(-3, 4, (n, k)) * 5e-324
    elif case == "one_per_class":
        n = k
        codes, scores = codes[:n], scores[:n]
    elif case == "constant":
        scores = np.full((n, k), 0.25)
        scores[::7, 2] = 0.0
    weight = rng.integers(0, 3, n).astype(float)
    weight[:k] = 1.0  # every class weighs something
    codes = codes.astype(np.intp)
    np.testing.assert_array_equal(pair_wins(scores, codes, weight, k),
                                  naive_pair_wins(scores, codes, weight, k))


@pytest.mark.parametrize("case", ["forest_like", "ties", "negative", "explicit_zeros",
                                  "one_per_class", "empty_column"])
def test_pair_wins_sparse_equals_all_pairs_and_the_dense_wins_to_the_bit(case):
    # pair_wins_sparse searches only the stored scores of each column and
    # credits a class's other rows with the credit of 0 all at once;
    # references: all pairs (naive_pair_wins) and pair_wins on the dense matrix
    import scipy.sparse as sp
    from aucforest.metrics._rank_sums import pair_wins_sparse
    rng = np.random.default_rng(11)
    n, k = 300, 7
    codes, scores = forest_like_proba(n, k, 4, zero_share=0.6)
    if case == "ties":
        scores = np.round(scores * 4) / 4
    elif case == "negative":
        scores = np.where(scores > 0, rng.normal(size=scores.shape), 0.0)
    elif case == "one_per_class":
        codes, scores = codes[:k].copy(), scores[:k]
        codes[:] = np.arange(k)
    elif case == "empty_column":
        scores[:, 3] = 0.0
    codes = codes.astype(np.intp)
    columns = sp.csc_array(scores)
    if case == "explicit_zeros":  # stored zeros credit as the implicit ones
        stored = sp.csr_array((np.where(rng.random(scores.size) < 0.3, 0.0, scores.ravel()),
                               np.tile(np.arange(k), scores.shape[0]),
                               np.arange(0, scores.size + 1, k)), shape=scores.shape)
        columns = sp.csc_array(stored)
        assert np.sum(columns.data == 0.0) > 100
        scores = stored.toarray()
    expected = naive_pair_wins(scores, codes, np.ones(codes.size), k)
    got = pair_wins_sparse(columns.indptr.astype(np.intp), columns.indices.astype(np.intp),
                           columns.data, codes, k)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, pair_wins(scores, codes, np.ones(codes.size), k))
    assert hand_till_auc(codes, sp.csr_array(scores)) == hand_till_auc(codes, scores)


def test_pair_wins_sparse_rejects_malformed_columns():
    from aucforest.metrics._rank_sums import pair_wins_sparse
    codes = np.array([0, 1, 1], dtype=np.intp)
    start, rows, values = (np.array([0, 1, 2], dtype=np.intp), np.array([0, 2], dtype=np.intp),
                           np.array([0.5, 0.25]))
    with pytest.raises(ValueError, match="n_classes columns"):
        pair_wins_sparse(start, rows, values, codes, 3)
    with pytest.raises(ValueError, match="col_rows"):
        pair_wins_sparse(start, np.array([0, 3], dtype=np.intp), values, codes, 2)
    with pytest.raises(ValueError, match="finite"):
        pair_wins_sparse(start, rows, np.array([0.5, np.nan]), codes, 2)
    with pytest.raises(ValueError, match="codes"):
        pair_wins_sparse(start, rows, values, np.array([0, 1, 2], dtype=np.intp), 2)
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="unit weights"):
        hand_till_auc(codes, sp.csr_array(np.eye(3)[:, :2]), weight=np.array([1.0, 2.0, 1.0]))


@pytest.mark.parametrize("decision", ["rfq", "argmax"])
def test_sparse_decision_equals_the_dense_decision(decision):
    # rfq_classes_sparse decides from the stored proportions, and over the
    # dense row when none of them beats 0 (every stored class of prior 0,
    # or an empty row); reference: the dense rule (`rfq_classes`, np.argmax)
    import scipy.sparse as sp
    rng = np.random.default_rng(5)
    n, k = 2000, 9
    _, proba = forest_like_proba(n, k, 6, zero_share=0.7, levels=3)  # ties of p / pi
    prior = np.array([0.1, 0.2, 0.1, 0.0, 0.2, 0.1, 0.1, 0.2, 0.0])
    proba[:40] = 0.0
    proba[:20, 3] = 1.0  # only a class of prior 0 stored
    proba[20:30, [3, 8]] = 0.5
    proba[40:60] = proba[40:60] / 2  # scaled copies: ties between classes
    got = decide(sp.csr_array(proba), prior, decision)
    np.testing.assert_array_equal(got, decide(proba, prior, decision))
    assert np.any(got[:40] != 3)  # the rows decided over the dense row


def test_sparse_out_of_bag_means_equal_the_dense_means_to_the_bit():
    # OutOfBagLeaves.proba_with_oob keeps only the nonzero means as CSR; the
    # dense means of the rows with OOB predictions are the reference, and the
    # node-size choice's AUC and G-mean agree to the bit
    import scipy.sparse as sp
    from aucforest._oob_estimates import OutOfBagLeaves, auc_of_rows, gmean_of_rows
    from aucforest.tree import AUCTreeClassifier
    rng = np.random.default_rng(9)
    n, k = 900, 30
    X = rng.normal(size=(n, 5)).astype(np.float32)
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), np.linspace(-1.5, 1.5, k - 1))
    sizes = (1, 2, 5, 10, 20, 50)
    leaves = OutOfBagLeaves(X, k, sizes)
    for seed in range(5):
        counts = rng.poisson(1.0, size=n)
        tree = AUCTreeClassifier(random_state=seed).fit(X, y, sample_weight=counts).tree_
        leaves.add(tree, counts)
    has_oob = leaves.n_trees > 0
    assert not has_oob.all() and has_oob.sum() > n // 2
    classes, prior = np.arange(k), np.bincount(y, minlength=k) / n
    for c in range(len(sizes)):
        proba, codes = leaves.proba_with_oob(c, y)
        assert sp.issparse(proba) and proba.nnz < proba.shape[0] * k
        dense = leaves.proba(c)[has_oob]
        np.testing.assert_array_equal(proba.toarray(), dense)
        np.testing.assert_array_equal(codes, y[has_oob])
        assert auc_of_rows(codes, proba, classes) == auc_of_rows(codes, dense, classes)
        for decision in ("rfq", "argmax"):
            rule = DecisionRule.parse(decision, k)
            assert (gmean_of_rows(codes, proba, prior, rule)
                    == gmean_of_rows(codes, dense, prior, rule))


def test_sparse_scores_of_a_caller_are_decided_and_ranked_without_being_reordered():
    # a CSR matrix whose columns are not sorted within a row (scipy's
    # non-canonical form): the decision and Hand & Till's AUC sort a copy,
    # the caller's arrays stay as given; the dense matrix is the reference
    import scipy.sparse as sp
    y, proba = forest_like_proba(200, 6, 8, zero_share=0.5)
    rows = sp.csr_array(proba)
    for r in range(rows.shape[0]):  # reverse each row's columns
        span = slice(rows.indptr[r], rows.indptr[r + 1])
        rows.indices[span] = rows.indices[span][::-1].copy()
        rows.data[span] = rows.data[span][::-1].copy()
    rows.has_sorted_indices = False
    indices, data = rows.indices.copy(), rows.data.copy()
    prior = np.bincount(y) / y.size
    for decision in ("rfq", "argmax"):
        np.testing.assert_array_equal(decide(rows, prior, decision), decide(proba, prior, decision))
    assert hand_till_auc(y, rows) == hand_till_auc(y, proba)
    np.testing.assert_array_equal(rows.indices, indices)
    np.testing.assert_array_equal(rows.data, data)


def test_pending_trees_are_added_once_when_the_candidates_are_read_in_threads():
    # the last trees of a many-class fit wait in OutOfBagSums until a
    # candidate is read; with two jobs the six candidates are read from two
    # threads at once (n x K x 6 above TAIL_THREADS_MIN_VALUES), and the
    # pending trees must enter the sums once: the OOB figures equal one job's
    from aucforest import AUCForestClassifier
    from aucforest._forest import TAIL_THREADS_MIN_VALUES
    from aucforest._oob_estimates import SUMS_BATCH_TREES
    rng = np.random.default_rng(5)
    n, k, trees = 9000, 20, 2 * SUMS_BATCH_TREES - 1
    assert n * k * 6 >= TAIL_THREADS_MIN_VALUES
    X = rng.normal(size=(n, 6)).astype(np.float32)
    y = np.digitize(X[:, 0] + 0.7 * rng.normal(size=n), np.linspace(-1.5, 1.5, k - 1))
    fits = [AUCForestClassifier(trees, oob_score=True, n_jobs=jobs, random_state=3).fit(X, y)
            for jobs in (1, 2)]
    assert fits[0].oob_scores_by_min_samples_ == fits[1].oob_scores_by_min_samples_
    np.testing.assert_array_equal(fits[0].oob_decision_function_,
                                  fits[1].oob_decision_function_)
    # no tree is added twice: every row with an OOB prediction sums to 1
    proba = fits[1].oob_decision_function_
    has_oob = ~np.isnan(proba[:, 0])
    assert 0 < has_oob.sum() < n
    np.testing.assert_allclose(proba[has_oob].sum(axis=1), 1.0)
