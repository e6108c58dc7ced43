"""AUCForestClassifier: determinism, aggregation, sampling, decisions, accuracy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.utils.class_weight import compute_sample_weight

from aucforest import AUCForestClassifier
from aucforest._base import ROWS_PER_TASK, trees_per_task


@pytest.fixture(scope="module")
def imbalanced():
    X, y = make_classification(600, 8, n_informative=5, n_classes=3, weights=[0.8, 0.15, 0.05],
                               random_state=0)
    return X, y


@pytest.mark.parametrize("n_estimators", [12, 48])  # 48: tasks of several trees
def test_same_random_state_gives_identical_forests_whatever_n_jobs(imbalanced, n_estimators):
    X, y = imbalanced
    one = AUCForestClassifier(n_estimators, n_jobs=1, random_state=7, oob_score=True).fit(X, y)
    two = AUCForestClassifier(n_estimators, n_jobs=2, random_state=7, oob_score=True).fit(X, y)
    for a, b in zip(one.estimators_, two.estimators_, strict=True):
        for name, array in a.tree_.node_arrays().items():
            np.testing.assert_array_equal(array, b.tree_.node_arrays()[name], err_msg=name)
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))
    np.testing.assert_array_equal(one.oob_decision_function_, two.oob_decision_function_)
    assert one.predict_min_samples_ == two.predict_min_samples_


def test_parallel_tasks_group_small_trees_but_keep_the_workers_balanced():
    # tasks of about ROWS_PER_TASK training rows: one tree each from that many rows on
    assert trees_per_task(ROWS_PER_TASK, 500, 2) == 1
    assert trees_per_task(10 * ROWS_PER_TASK, 500, 2) == 1
    assert trees_per_task(ROWS_PER_TASK // 10, 500, 2) == 10
    assert trees_per_task(ROWS_PER_TASK // 10 + 1, 500, 2) == 10  # rounded up
    # at most an eighth of a worker's share, at least one tree
    assert trees_per_task(10, 500, 2) == 500 // 16
    assert trees_per_task(10, 5, 2) == 1
    # one worker: nothing to balance, joblib runs the calls in turn
    assert trees_per_task(10, 500, 1) == 1


def test_predict_proba_is_the_mean_of_tree_leaf_proportions(imbalanced):
    X, y = imbalanced
    forest = AUCForestClassifier(9, predict_min_samples=1, random_state=0, n_jobs=2).fit(X, y)
    expected = np.mean([tree.predict_proba(X) for tree in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.predict_proba(X), expected, rtol=1e-12)
    assert forest.apply(X).shape == (X.shape[0], 9)
    # by default too: the trees are collapsed to the size chosen
    chosen = AUCForestClassifier(9, random_state=0).fit(X, y)
    assert chosen.predict_min_samples_ > 1
    expected = np.mean([tree.predict_proba(X) for tree in chosen.estimators_], axis=0)
    np.testing.assert_array_equal(chosen.predict_proba(X), expected)
    # ... the trees grown with predict_min_samples=1, collapsed to that size
    grown = np.mean([tree.tree_.collapsed(chosen.predict_min_samples_).predict_proba(
        X.astype(np.float32)) for tree in forest.estimators_], axis=0)
    np.testing.assert_allclose(chosen.predict_proba(X), grown, rtol=1e-12)


def test_columns_follow_classes_when_a_bootstrap_misses_a_class():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.array(["a"] * 150 + ["b"] * 49 + ["rare"])
    X[-1] += 10  # the rare case is easy to recognise
    forest = AUCForestClassifier(40, random_state=0).fit(X, y)
    missing = [t for t in forest.estimators_ if t.tree_.proba[0, 2] == 0]
    assert missing, "some bootstrap sample should miss the single rare case"
    proba = forest.predict_proba(X)
    assert proba.shape == (200, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert proba[-1, 2] > proba[0, 2]


def test_documented_bootstrap_scheme_and_out_of_bag_predictions(imbalanced):
    X, y = imbalanced
    forest = AUCForestClassifier(5, oob_score=True, replacement=True, random_state=3)
    with pytest.warns(UserWarning, match="no out-of-bag prediction"):
        forest.fit(X, y)
    n = X.shape[0]
    total, used = np.zeros((n, 3)), np.zeros(n)
    for tree in forest.estimators_:
        # each tree's sample: RandomState(tree.random_state).randint(0, n, n)
        in_bag = np.bincount(np.random.RandomState(tree.random_state).randint(0, n, n), minlength=n)
        root_counts = tree.tree_.n_node_samples[0]
        assert root_counts == np.count_nonzero(in_bag)
        out = in_bag == 0
        total[out] += tree.predict_proba(X[out])
        used[out] += 1
    has_oob = used > 0
    np.testing.assert_allclose(forest.oob_decision_function_[has_oob],
                               total[has_oob] / used[has_oob, None], rtol=1e-12)
    assert np.all(np.isnan(forest.oob_decision_function_[~has_oob]))
    reference = roc_auc_score(y[has_oob], forest.oob_decision_function_[has_oob], multi_class="ovo")
    assert forest.oob_score_ == pytest.approx(reference, abs=1e-12)
    # the fitted forest keeps its own array, not a view of the sums of every node size
    assert forest.oob_decision_function_.base is None


def test_binary_oob_score_is_the_binary_auc():
    X, y = load_breast_cancer(return_X_y=True)
    forest = AUCForestClassifier(60, oob_score=True, random_state=0).fit(X, y)
    has_oob = ~np.isnan(forest.oob_decision_function_[:, 0])
    assert forest.oob_score_ == pytest.approx(
        roc_auc_score(y[has_oob], forest.oob_decision_function_[has_oob, 1]), abs=1e-12)
    assert 0.9 < forest.oob_score_ <= 1.0
    minority = int(np.argmin(forest.class_prior_))
    p_min = forest.oob_decision_function_[has_oob, minority]
    pred = np.where(p_min >= forest.class_prior_[minority], minority, 1 - minority)
    recalls = [np.mean(pred[y[has_oob] == k] == k) for k in (0, 1)]
    assert forest.oob_gmean_ == pytest.approx(np.sqrt(recalls[0] * recalls[1]))


# ---------------------------------------------------------------- decisions

def test_rfq_rule_matches_its_definition(imbalanced):
    X, y = imbalanced
    forest = AUCForestClassifier(30, random_state=0).fit(X, y)
    proba = forest.predict_proba(X)
    prior = np.bincount(y) / y.size
    np.testing.assert_allclose(forest.class_prior_, prior)
    np.testing.assert_array_equal(forest.predict(X), np.argmax(proba / prior, axis=1))
    forest.set_params(decision="argmax")
    np.testing.assert_array_equal(forest.predict(X), np.argmax(proba, axis=1))


def test_binary_rfq_is_p_minority_at_least_pi_minority():
    X, y = make_classification(500, 6, weights=[0.9, 0.1], random_state=1)
    labels = np.where(y == 1, "minority", "zmajority")  # minority sorts first: index 0
    forest = AUCForestClassifier(30, random_state=0).fit(X, labels)
    p_min = forest.predict_proba(X)[:, 0]
    pi_min = np.mean(labels == "minority")
    expected = np.where(p_min >= pi_min, "minority", "zmajority")
    np.testing.assert_array_equal(forest.predict(X), expected)
    assert np.mean(forest.predict(X) == "minority") > np.mean(labels == "minority")


def test_weighted_prior_and_threshold_decision():
    X, y = make_classification(300, 5, random_state=2)
    w = np.where(y == 1, 3.0, 1.0)
    forest = AUCForestClassifier(20, decision=0.7, random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(forest.class_prior_, np.bincount(y, weights=w) / w.sum())
    np.testing.assert_array_equal(forest.predict(X), (forest.predict_proba(X)[:, 1] >= 0.7))
    with pytest.raises(ValueError, match="two classes"):
        AUCForestClassifier(5, decision=0.5).fit(*make_classification(100, 5, n_informative=3,
                                                                      n_classes=3, random_state=0))


def test_rfq_ties_go_to_the_smaller_prior():
    from aucforest._decision_rule import decide
    proba = np.array([[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]])
    prior = np.array([0.5, 0.3, 0.2])  # every ratio equals 1 in row 0
    np.testing.assert_array_equal(decide(proba, prior, "rfq"), [2, 2])


def rfq_written_out(proba, prior):
    """RFQ's class for each row, one row at a time: the largest p_k / pi_k
    over the classes of positive prior, the smaller prior (then the smaller
    index) among those within a relative 1e-12 of the largest (equal up to
    rounding); a NaN quotient is taken as numpy's argmax takes it (the first,
    in that order)."""
    order = sorted(range(prior.size), key=lambda k: (prior[k], k))
    classes = []
    for row in proba:
        scores = [row[k] / prior[k] if prior[k] > 0 else -np.inf for k in order]
        nan = [j for j, score in enumerate(scores) if np.isnan(score)]
        best = max(scores)
        tied = [j for j, score in enumerate(scores) if score >= best - 1e-12 * abs(best)]
        classes.append(order[nan[0]] if nan else order[tied[0]])
    return np.array(classes)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_classes=st.integers(3, 9))
def test_rfq_decision_equals_the_rule_written_out(seed, n_classes):
    """The compiled RFQ decision, on proportions with exact ties, zeros, zero
    priors and NaN rows, against a per-row reference."""
    from aucforest._decision_rule import decide
    rng = np.random.default_rng(seed)
    proba = rng.integers(0, 4, (50, n_classes)).astype(float)
    proba /= np.maximum(proba.sum(axis=1, keepdims=True), 1)
    proba[rng.random(50) < 0.1] = np.nan
    prior = rng.integers(0, 4, n_classes).astype(float)
    prior[rng.integers(n_classes)] += 1
    prior /= prior.sum()
    np.testing.assert_array_equal(decide(proba, prior, "rfq"), rfq_written_out(proba, prior))
    np.testing.assert_array_equal(decide(np.asfortranarray(proba[:, ::-1])[:, ::-1], prior,
                                         "rfq"), rfq_written_out(proba, prior))


# ----------------------------------------------------------------- sampling

def test_balanced_bootstrap_draws_equal_class_counts(imbalanced):
    X, y = imbalanced
    forest = AUCForestClassifier(10, balanced_bootstrap=True, random_state=0).fit(X, y)
    minority = np.bincount(y).min()
    for tree in forest.estimators_:
        np.testing.assert_allclose(tree.tree_.proba[0], 1 / 3)  # equal weighted counts
        assert tree.tree_.weighted_n_node_samples[0] > 0
    np.testing.assert_allclose(forest.class_prior_, 1 / 3)
    half = AUCForestClassifier(3, balanced_bootstrap=True, max_samples=0.5, random_state=0).fit(X, y)
    assert all(t.tree_.n_node_samples[0] <= 3 * round(minority / 2) for t in half.estimators_)


def test_class_weight_balanced_reproduces_sklearn_weights(imbalanced):
    X, y = imbalanced
    forest = AUCForestClassifier(3, bootstrap=False, class_weight="balanced", criterion="gini",
                                 random_state=0).fit(X, y)
    expected = np.bincount(y, weights=compute_sample_weight("balanced", y))
    for tree in forest.estimators_:
        np.testing.assert_allclose(tree.tree_.proba[0], expected / expected.sum())
    weights = {0: 1.0, 1: 2.0, 2: 5.0}
    forest.set_params(class_weight=weights).fit(X, y)
    expected = np.bincount(y, weights=compute_sample_weight(weights, y))
    np.testing.assert_allclose(forest.estimators_[0].tree_.proba[0], expected / expected.sum())
    # pi_k is the frequency before class weights: class weights act on top of RFQ as costs
    np.testing.assert_allclose(forest.class_prior_, np.bincount(y) / y.size)


@pytest.mark.parametrize("criterion", ["auc", "gini"])
def test_up_weighting_a_class_never_makes_rfq_predict_it_less(criterion):
    # the AUC statistic ignores class weights, so the trees stay and only the
    # leaf proportions move: monotone forest by forest. Gini's trees change
    # with the weights (one forest of 30 went 601 -> 579 from weight 10 to
    # 100, another 692 -> 1886), so there it holds for the sum over forests
    X, y = make_classification(2000, weights=[0.9], flip_y=0.05, random_state=0)
    seeds = (0,) if criterion == "auc" else (0, 1, 2)
    counts = [sum(np.sum(AUCForestClassifier(30, criterion=criterion, class_weight={0: 1, 1: w},
                                             min_samples_leaf=5, random_state=seed)
                         .fit(X, y).predict(X) == 1) for seed in seeds)
              for w in (0.1, 1, 10, 100)]
    assert counts == sorted(counts), counts
    assert counts[-1] > counts[0]


@pytest.mark.parametrize("by", ["class_weight", "sample_weight"])
def test_a_class_with_zero_training_weight_is_never_predicted(by):
    X, y = make_classification(300, 5, random_state=3)
    forest = AUCForestClassifier(10, random_state=0)
    if by == "class_weight":
        forest.set_params(class_weight={0: 1, 1: 0}).fit(X, y)
    else:
        forest.fit(X, y, sample_weight=(y == 0).astype(float))
    np.testing.assert_array_equal(forest.predict(X), 0)


def test_weights_near_the_largest_double_fit_as_uniform_weights():
    X, y = make_classification(300, 5, random_state=4)
    reference = AUCForestClassifier(10, random_state=0).fit(X, y)
    for scale in (1e307, 1e308):
        forest = AUCForestClassifier(10, random_state=0).fit(X, y, sample_weight=np.full(300, scale))
        np.testing.assert_allclose(forest.class_prior_, reference.class_prior_)
        np.testing.assert_array_equal(forest.predict_proba(X), reference.predict_proba(X))


def test_auc_splits_ignore_class_weights(imbalanced):
    X, y = imbalanced
    plain = AUCForestClassifier(4, bootstrap=False, max_features=None, random_state=0).fit(X, y)
    weighted = AUCForestClassifier(4, bootstrap=False, max_features=None, random_state=0,
                                   class_weight="balanced").fit(X, y)
    for a, b in zip(plain.estimators_, weighted.estimators_):
        np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)


# ----------------------------------------------------------------- accuracy

@pytest.mark.parametrize("load", [load_iris, load_wine, load_breast_cancer, load_digits])
def test_cross_validated_auc_matches_sklearn_forest(load):
    X, y = load(return_X_y=True)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)

    def cv_auc(estimator):
        proba = cross_val_predict(estimator, X, y, cv=cv, method="predict_proba")
        if proba.shape[1] == 2:
            return roc_auc_score(y, proba[:, 1])
        return roc_auc_score(y, proba, multi_class="ovo")

    ours = cv_auc(AUCForestClassifier(100, random_state=0, n_jobs=2))
    theirs = cv_auc(RandomForestClassifier(100, random_state=0, n_jobs=2))
    assert ours >= theirs - 0.01


# ------------------------------------------- subsampling and node size at prediction

def _in_bag(tree, n, replacement=True, size=None):
    """Multiplicities of the documented draw: RandomState(tree.random_state)."""
    rng = np.random.RandomState(tree.random_state)
    if replacement:
        return np.bincount(rng.randint(0, n, n if size is None else size), minlength=n)
    return np.bincount(rng.permutation(n)[:size], minlength=n)


def test_subsampling_draws_0632_n_distinct_cases_once_each(imbalanced):
    X, y = imbalanced
    n = X.shape[0]
    forest = AUCForestClassifier(6, replacement=False, random_state=0).fit(X, y)
    for tree in forest.estimators_:
        in_bag = _in_bag(tree, n, replacement=False, size=round(0.632 * n))
        assert in_bag.max() == 1
        assert tree.tree_.n_node_samples[0] == round(0.632 * n)
        assert tree.tree_.weighted_n_node_samples[0] == pytest.approx(round(0.632 * n))
        np.testing.assert_allclose(tree.tree_.proba[0], np.bincount(y, weights=in_bag) / in_bag.sum())
    balanced = AUCForestClassifier(4, replacement=False, balanced_bootstrap=True,
                                   random_state=0).fit(X, y)
    per_class = round(0.632 * np.bincount(y).min())
    for tree in balanced.estimators_:
        assert tree.tree_.n_node_samples[0] == 3 * per_class
        np.testing.assert_allclose(tree.tree_.proba[0], 1 / 3)
    with pytest.raises(ValueError, match="without replacement"):
        AUCForestClassifier(2, replacement=False, max_samples=n + 1).fit(X, y)


def _deepest_node_with(tree, x, min_samples):
    node = 0
    while tree.feature[node] >= 0:
        go_left = x[tree.feature[node]] <= tree.threshold[node]
        child = tree.children_left[node] if go_left else tree.children_right[node]
        if tree.n_node_samples[child] < min_samples:
            break
        node = child
    return node


@pytest.mark.parametrize("min_samples", [1, 4, 30])
def test_trees_predict_from_the_deepest_node_with_enough_cases(imbalanced, min_samples):
    X, y = imbalanced
    X = X.astype(np.float32)
    forest = AUCForestClassifier(5, predict_min_samples=min_samples, random_state=0).fit(X, y)
    # the same trees as grown (the node size does not change how they grow)
    grown = AUCForestClassifier(5, predict_min_samples=1, random_state=0).fit(X, y)
    expected = np.mean([t.tree_.proba[[_deepest_node_with(t.tree_, x, min_samples) for x in X]]
                        for t in grown.estimators_], axis=0)
    np.testing.assert_allclose(forest.predict_proba(X), expected, rtol=1e-12)
    np.testing.assert_allclose(
        np.mean([t.predict_proba(X) for t in forest.estimators_], axis=0), expected, rtol=1e-12)
    assert forest.predict_min_samples_ == min_samples


def test_oob_choice_of_node_size_takes_the_best_auc_plus_gmean(imbalanced):
    X, y = imbalanced
    params = dict(n_estimators=40, oob_score=True, random_state=0)
    chosen = AUCForestClassifier(predict_min_samples="oob", **params).fit(X, y)
    scores, gmeans = chosen.oob_scores_by_min_samples_, chosen.oob_gmeans_by_min_samples_
    assert set(scores) == set(gmeans) == {1, 2, 5, 10, 20, 50}
    merit = {m: scores[m] + gmeans[m] for m in scores}  # OOB AUC + OOB G-mean
    best = max(merit.values())
    assert chosen.predict_min_samples_ == min(m for m, v in merit.items() if v == best)
    assert chosen.oob_score_ == scores[chosen.predict_min_samples_]
    assert chosen.oob_gmean_ == pytest.approx(gmeans[chosen.predict_min_samples_], abs=1e-12)
    for m in (1, 10, chosen.predict_min_samples_):  # each candidate, computed on its own
        fixed = AUCForestClassifier(predict_min_samples=m, **params).fit(X, y)
        assert fixed.oob_score_ == pytest.approx(scores[m], abs=1e-12)
        assert fixed.oob_gmean_ == pytest.approx(gmeans[m], abs=1e-12)
    assert len(set(gmeans.values())) > 1  # the candidates differ: the choice is a choice
    np.testing.assert_array_equal(
        chosen.predict_proba(X),
        AUCForestClassifier(predict_min_samples=chosen.predict_min_samples_, **params)
        .fit(X, y).predict_proba(X))
    without_oob_score = AUCForestClassifier(predict_min_samples="oob", n_estimators=40,
                                            random_state=0).fit(X, y)
    assert without_oob_score.oob_scores_by_min_samples_ == scores
    assert without_oob_score.oob_gmeans_by_min_samples_ == gmeans
    no_oob = AUCForestClassifier(5, bootstrap=False, predict_min_samples="oob").fit(X, y)
    assert no_oob.predict_min_samples_ == 1


@pytest.mark.parametrize("rare", [14, 15])
def test_oob_choice_needs_fifteen_cases_of_every_class(rare):
    """Below MIN_CLASS_CASES_TO_CHOOSE cases in some class the forest predicts
    from its leaves, exactly as predict_min_samples=1 would; from 15 on it chooses."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200 + rare, 4))
    y = np.r_[np.zeros(200, int), np.ones(rare, int)]
    X[y == 1, 0] += 1.5
    params = dict(n_estimators=30, oob_score=True, random_state=0)
    forest = AUCForestClassifier(**params).fit(X, y)
    chose = hasattr(forest, "oob_scores_by_min_samples_")
    assert chose == (rare >= 15)
    if not chose:
        leaves = AUCForestClassifier(predict_min_samples=1, **params).fit(X, y)
        assert forest.predict_min_samples_ == 1
        np.testing.assert_array_equal(forest.predict_proba(X), leaves.predict_proba(X))
        assert forest.oob_score_ == leaves.oob_score_
    if rare == 15:  # a case of zero weight is not a case to choose with
        weight = np.ones(y.size)
        weight[-1] = 0
        weighted = AUCForestClassifier(**params).fit(X, y, sample_weight=weight)
        assert weighted.predict_min_samples_ == 1
        assert not hasattr(weighted, "oob_scores_by_min_samples_")


def test_oob_choice_on_large_data_scores_a_class_balanced_share_of_the_cases(imbalanced,
                                                                             monkeypatch):
    from aucforest import _forest
    from aucforest import _oob_estimates as _oob
    X, y = imbalanced  # classes of about 480, 90 and 30 cases
    monkeypatch.setattr(_oob, "OOB_CHOICE_MAX_CASES", 150)
    drawn = []
    choose = _oob.cases_choosing_node_size
    monkeypatch.setattr(_forest, "cases_choosing_node_size",
                        lambda *args: drawn.append(choose(*args)) or drawn[-1])
    forest = AUCForestClassifier(30, random_state=0).fit(X, y)
    rows = drawn[0]
    assert np.array_equal(rows, np.unique(rows))
    counts = np.bincount(y[rows], minlength=3)
    assert counts[0] == counts[1] == 50 and counts[2] == np.sum(y == 2)  # rare class whole
    # reference: each candidate's OOB AUC over those rows, tree by tree
    total = {m: np.zeros((rows.size, 3)) for m in forest.oob_scores_by_min_samples_}
    used = np.zeros(rows.size)
    grown = AUCForestClassifier(30, predict_min_samples=1, random_state=0).fit(X, y)
    for tree, sample in zip(grown.estimators_, forest.estimators_samples_):
        out = ~np.isin(rows, sample)
        used[out] += 1
        for m in total:
            total[m][out] += tree.tree_.collapsed(m).predict_proba(X[rows[out]].astype(np.float32))
    has = used > 0
    for m, score in forest.oob_scores_by_min_samples_.items():
        reference = roc_auc_score(y[rows][has], total[m][has] / used[has, None],
                                  multi_class="ovo")
        assert score == pytest.approx(reference, abs=1e-12)
    # with oob_score=True every case is scored and the choice may differ
    full = AUCForestClassifier(30, oob_score=True, random_state=0).fit(X, y)
    assert len(drawn) == 1 and full.oob_decision_function_.shape == (X.shape[0], 3)
    # below the cap nothing is drawn and the forest is the one grown before the cap existed
    monkeypatch.setattr(_oob, "OOB_CHOICE_MAX_CASES", 3 * 480)
    small = AUCForestClassifier(30, random_state=0).fit(X, y)
    assert drawn[-1] is None
    assert small.oob_scores_by_min_samples_ == full.oob_scores_by_min_samples_


def test_oob_gmean_follows_the_decision_set_after_fit(imbalanced):
    from aucforest.metrics import gmean_score
    X, y = imbalanced
    forest = AUCForestClassifier(30, oob_score=True, random_state=0).fit(X, y)
    has_oob = ~np.isnan(forest.oob_decision_function_[:, 0])
    proba = forest.oob_decision_function_[has_oob]
    rfq = gmean_score(y[has_oob], np.argmax(proba / forest.class_prior_, axis=1))
    assert forest.oob_gmean_ == pytest.approx(rfq)
    forest.set_params(decision="argmax")
    assert forest.oob_gmean_ == pytest.approx(gmean_score(y[has_oob], np.argmax(proba, axis=1)))
    assert forest.oob_gmean_ != pytest.approx(rfq)
