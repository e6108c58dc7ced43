"""Cost-matrix decisions and the decision tuner on out-of-bag predictions (issue 41).

References: a brute-force argmin loop over classes, the forest's own RFQ
rule, scikit-learn's and aucforest.metrics' scores, held-out data."""
import json

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import balanced_accuracy_score, f1_score

import aucforest
from aucforest import AUCForestClassifier
from aucforest._decision_rule import decide
from aucforest._prior_shift import to_training_priors
from aucforest.calibration import OOBCalibratedClassifier
from aucforest.decisions import expected_cost, tune_decision
from aucforest.io import forest_to_arrays, write_atomically
from aucforest.metrics import gmean_score
from cli_files import run_main, write_csv

COSTS_3 = np.array([[0.0, 1.0, 2.0], [5.0, 0.0, 1.0], [20.0, 4.0, 0.0]])


def data(n, n_classes=3, seed=0, weights=None):
    weights = weights or ([0.7, 0.2, 0.1] if n_classes == 3 else [0.85])
    return make_classification(n, n_features=8, n_informative=4, n_classes=n_classes,
                               n_clusters_per_class=1, weights=weights, flip_y=0.02,
                               random_state=seed)


def brute_force_least_cost(proba, costs):
    """argmin_k sum_j p_j C[j, k], one row and one class at a time; the first class
    whose cost is the least to within 1e-12 of it (ties within rounding)."""
    chosen = []
    for row in proba:
        row_costs = [sum(row[j] * costs[j, k] for j in range(costs.shape[0]))
                     for k in range(costs.shape[1])]
        least = min(row_costs)
        chosen.append(next(k for k, cost in enumerate(row_costs)
                           if cost <= least + 1e-12 * abs(least)))
    return np.array(chosen)


def rfq_costs(prior):
    costs = np.repeat((1.0 / np.asarray(prior))[:, None], len(prior), axis=1)
    np.fill_diagonal(costs, 0.0)
    return costs


@pytest.fixture(scope="module")
def forest3():
    X, y = data(500)
    return AUCForestClassifier(60, oob_score=True, random_state=0).fit(X, y), X, y


def test_cost_rule_matches_brute_force_argmin():
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(4), size=300)
    costs = rng.uniform(0, 5, size=(4, 4))
    assert np.array_equal(decide(proba, np.full(4, 0.25), costs),
                          brute_force_least_cost(proba, costs))


def test_cost_rule_ties_go_to_the_lowest_class_index():
    proba = np.array([[0.5, 0.5], [0.25, 0.75]])
    costs = np.array([[0.0, 1.0], [1.0, 0.0]])  # row 0: equal expected costs
    assert decide(proba, np.full(2, 0.5), costs).tolist() == [0, 1]


def test_forest_predict_under_a_cost_matrix_of_a_balanced_forest_uses_training_priors():
    X, y = data(400, seed=1)
    forest = AUCForestClassifier(40, balanced_bootstrap=True, decision=COSTS_3,
                                 random_state=0).fit(X, y)
    proba = to_training_priors(forest.predict_proba(X), forest.draw_class_weights_)
    assert not np.allclose(forest.draw_class_weights_, 1.0)
    assert np.array_equal(forest.predict(X),
                          forest.classes_[brute_force_least_cost(proba, COSTS_3)])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_rfq_is_the_cost_matrix_of_inverse_priors(n_classes):
    X, y = data(500, n_classes=n_classes, seed=2)
    forest = AUCForestClassifier(60, random_state=0, predict_min_samples=1).fit(X, y)
    proba = forest.predict_proba(X)
    ratio = proba / forest.class_prior_
    top2 = np.sort(ratio, axis=1)[:, -2:]
    untied = top2[:, 1] - top2[:, 0] > 1e-9  # RFQ ties go to the smaller prior, costs to index 0
    rfq = forest.predict(X)
    forest.set_params(decision=rfq_costs(forest.class_prior_))
    assert untied.sum() > 400
    assert np.array_equal(forest.predict(X)[untied], rfq[untied])


def test_rfq_of_a_balanced_forest_is_the_cost_matrix_of_the_training_frequencies():
    X, y = data(500, seed=3)
    forest = AUCForestClassifier(60, balanced_bootstrap=True, random_state=0,
                                 predict_min_samples=1).fit(X, y)
    proba = forest.predict_proba(X)  # RFQ here: argmax (uniform class_prior_)
    top2 = np.sort(proba, axis=1)[:, -2:]
    untied = top2[:, 1] - top2[:, 0] > 1e-9
    rfq = forest.predict(X)
    forest.set_params(decision=rfq_costs(np.bincount(y) / y.size))
    assert np.array_equal(forest.predict(X)[untied], rfq[untied])


@pytest.mark.parametrize("costs, message", [
    (np.ones((2, 2)), r"shape \(2, 2\), and with 3 classes a cost matrix must be 3 x 3"),
    ([[0, 1, 1], [1, 0, -2], [1, 1, 0]], "negative cost"),
    ([[0, 1, 1], [1, 0, np.nan], [1, 1, 0]], "NaN"),
    ([[0, 1, 1], [1, 0, np.inf], [1, 1, 0]], "infinite"),
    ([[0, 1, 1], [1, 0], [1, 1, 0]], "'decision' parameter must be"),
])
def test_bad_cost_matrix_is_refused_at_fit_and_at_predict(forest3, costs, message):
    forest, X, y = forest3
    with pytest.raises(ValueError, match=message):
        AUCForestClassifier(5, decision=costs, predict_min_samples=1).fit(X, y)
    fitted = aucforest.tree.frozen(forest)  # a copy: the fixture stays as it is
    fitted.set_params(decision=costs)
    with pytest.raises(ValueError, match="decision"):
        fitted.predict(X)


def test_oob_gmean_under_a_cost_matrix_is_the_gmean_of_the_brute_force_rule(forest3):
    forest, X, y = forest3
    fitted = aucforest.tree.frozen(forest)
    fitted.set_params(decision=COSTS_3)
    oob = forest.oob_decision_function_
    kept = ~np.isnan(oob).any(axis=1)
    predicted = brute_force_least_cost(oob[kept], COSTS_3)
    assert fitted.oob_gmean_ == pytest.approx(gmean_score(y[kept], predicted), abs=1e-12)


def test_node_size_choice_under_the_rfq_cost_matrix_is_rfq_choice():
    X, y = data(600, seed=4)
    rfq = AUCForestClassifier(40, oob_score=True, random_state=0).fit(X, y)
    costs = AUCForestClassifier(40, oob_score=True, random_state=0,
                                decision=rfq_costs(rfq.class_prior_)).fit(X, y)
    assert costs.oob_gmeans_by_min_samples_ == pytest.approx(rfq.oob_gmeans_by_min_samples_,
                                                             abs=0.02)
    assert costs.predict_min_samples_ in costs.oob_gmeans_by_min_samples_


def test_cost_matrix_round_trips_through_a_model_file(tmp_path):
    X, y = data(300, seed=5)
    forest = AUCForestClassifier(20, oob_score=True, balanced_bootstrap=True, random_state=0,
                                 decision=np.array([[0, 1, 3], [2, 0, 1], [9, 2, 0]])).fit(X, y)
    aucforest.save(forest, tmp_path / "m.npz")
    loaded = aucforest.load(tmp_path / "m.npz")
    assert loaded.decision == [[0.0, 1.0, 3.0], [2.0, 0.0, 1.0], [9.0, 2.0, 0.0]]
    assert np.array_equal(loaded.draw_class_weights_, forest.draw_class_weights_)
    assert np.array_equal(loaded.predict(X), forest.predict(X))
    assert loaded.oob_gmean_ == forest.oob_gmean_


@pytest.mark.parametrize("stored, message", [
    ({"matrix_rows": [[0, 1], [1]]}, "malformed: 'decision'"),
    ({"matrix_rows": [[0, 1, 1], [1, 0, 1], [1, 1, 0]]}, r"cost matrix must be 2 x 2"),
    ({"matrix_rows": [[0, -1], [1, 0]]}, "negative cost"),
])
def test_bad_cost_matrix_in_a_model_file_is_refused(tmp_path, stored, message):
    X, y = data(200, n_classes=2, seed=6)
    forest = AUCForestClassifier(5, decision=[[0, 1], [4, 0]], random_state=0).fit(X, y)
    arrays = forest_to_arrays(forest)
    metadata = json.loads(arrays["metadata"].tobytes())
    assert metadata["params"]["decision"] == {"matrix_rows": [[0.0, 1.0], [4.0, 0.0]]}
    metadata["params"]["decision"] = stored
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    write_atomically(tmp_path / "bad.npz", arrays)
    with pytest.raises(ValueError, match=message) as error:  # load names the file
        aucforest.load(tmp_path / "bad.npz")
    assert "bad.npz" in str(error.value)


def brute_force_scores(forest, y, result):
    """The metric of every candidate, from brute-force predictions of the OOB rows."""
    oob = forest.oob_decision_function_
    kept = ~np.isnan(oob).any(axis=1)
    proba, truth = oob[kept], y[kept]
    found = []
    for candidate in result.candidates:
        if np.ndim(candidate) == 0:  # p_1 >= t, ties within a relative 1e-12 to class 1
            predicted = (proba[:, 1] >= candidate - 1e-12 * candidate).astype(int)
        else:
            corrected = to_training_priors(proba, forest.draw_class_weights_)
            predicted = brute_force_least_cost(corrected, candidate)
        labels = forest.classes_[predicted]
        if result.metric == "gmean":
            found.append(gmean_score(truth, labels))
        elif result.metric == "balanced_accuracy":
            found.append(balanced_accuracy_score(truth, labels))
        elif result.metric == "f1":
            found.append(f1_score(truth, labels, average="binary" if len(forest.classes_) == 2
                                  else "macro", zero_division=0))
        else:
            found.append(expected_cost(truth, labels, COSTS_3, labels=forest.classes_))
    return np.array(found)


@pytest.mark.parametrize("n_classes, metric, balanced", [
    (2, "gmean", False), (2, "f1", False), (2, "balanced_accuracy", True),
    (3, "gmean", False), (3, "balanced_accuracy", True), (3, "f1", False),
    (3, "expected_cost", False)])
def test_tune_decision_matches_brute_force_over_the_same_candidates(n_classes, metric,
                                                                    balanced):
    X, y = data(400, n_classes=n_classes, seed=7)
    forest = AUCForestClassifier(40, oob_score=True, balanced_bootstrap=balanced,
                                 random_state=0).fit(X, y)
    result = tune_decision(forest, metric, n_bootstrap=50, random_state=0,
                           cost_matrix=COSTS_3 if metric == "expected_cost" else None)
    expected = brute_force_scores(forest, y, result)
    assert result.scores == pytest.approx(expected, abs=1e-12)
    best = int(np.argmin(expected) if metric == "expected_cost" else np.argmax(expected))
    assert result.score == pytest.approx(expected[best], abs=1e-12)
    assert np.array_equal(result.decision, result.candidates[best])
    low, high = result.confidence_interval
    assert low <= high
    if metric == "gmean":  # the forest set to the decision scores what was tuned
        forest.set_params(decision=result.decision)
        assert forest.oob_gmean_ == pytest.approx(result.score, abs=1e-12)


def test_tune_decision_coordinate_search_for_five_classes_matches_brute_force():
    X, y = make_classification(500, n_features=10, n_informative=6, n_classes=5,
                               n_clusters_per_class=1, weights=[0.5, 0.2, 0.15, 0.1, 0.05],
                               random_state=10)
    forest = AUCForestClassifier(30, oob_score=True, random_state=0).fit(X, y)
    result = tune_decision(forest, "gmean", n_bootstrap=20, random_state=0)
    assert 13 < len(result.candidates) < 13 ** 4  # a search, not the whole grid
    # the search starts from t all 1: RFQ's matrix on the training priors
    assert np.allclose(result.candidates[0], rfq_costs(forest.class_prior_))
    expected = brute_force_scores(forest, y, result)
    assert result.scores == pytest.approx(expected, abs=1e-12)
    assert result.score == pytest.approx(expected.max(), abs=1e-12)
    assert result.score >= expected[0]


def test_tune_decision_refuses_bad_input(forest3):
    forest, X, y = forest3
    with pytest.raises(ValueError, match="metric must be one of"):
        tune_decision(forest, "auc")
    with pytest.raises(ValueError, match="needs cost_matrix"):
        tune_decision(forest, "expected_cost")
    with pytest.raises(ValueError, match="cost_matrix must be a K x K matrix of costs; got an array of shape"):
        tune_decision(forest, "expected_cost", cost_matrix=np.ones((2, 2)))
    with pytest.raises(ValueError, match="oob_score=True"):
        tune_decision(AUCForestClassifier(5, random_state=0).fit(X, y))
    with pytest.raises(ValueError, match="out-of-bag rows"):
        tune_decision(forest, y=y[:-1])
    with pytest.raises(ValueError, match="n_bootstrap"):
        tune_decision(forest, n_bootstrap=0)


def test_tuned_interval_covers_the_held_out_metric_in_most_repetitions():
    covered = []
    for seed in range(20):
        X, y = data(1400, n_classes=2, seed=100 + seed, weights=[0.85])
        forest = AUCForestClassifier(40, oob_score=True, random_state=seed).fit(X[:500], y[:500])
        result = tune_decision(forest, "gmean", n_bootstrap=200, random_state=seed)
        forest.set_params(decision=result.decision)
        held_out = gmean_score(y[500:], forest.predict(X[500:]))
        low, high = result.confidence_interval
        covered.append(low <= held_out <= high)
    assert sum(covered) >= 15, covered


@pytest.mark.parametrize("costs", [COSTS_3, np.array([[0.0, 1, 1], [10, 0, 1], [2, 2, 0]])])
def test_cost_rule_costs_less_on_held_out_data_than_rfq_and_argmax(costs):
    """Under the same C, on held-out halves of six generated sets, the mean cost of
    the cost rule is at most RFQ's and argmax's when the probabilities are
    calibrated (the rule is Bayes-optimal for the true probabilities, Elkan 2001;
    on a raw forest's it need not beat RFQ). The second C asks for fewer of the
    rarest class than RFQ predicts."""
    found = {"costs": [], "rfq": [], "argmax": []}
    for seed in range(6):
        X, y = data(1600, seed=200 + seed)
        model = OOBCalibratedClassifier(AUCForestClassifier(60, random_state=seed))
        proba = model.fit(X[:800], y[:800]).predict_proba(X[800:])
        prior = np.bincount(y[:800]) / 800
        predicted = {"costs": decide(proba, prior, costs),
                     "rfq": np.argmax(proba / prior, axis=1), "argmax": np.argmax(proba, axis=1)}
        for rule in found:
            found[rule].append(expected_cost(y[800:], model.classes_[predicted[rule]], costs,
                                             labels=model.classes_))
    mean = {rule: np.mean(values) for rule, values in found.items()}
    assert mean["costs"] <= mean["rfq"] and mean["costs"] <= mean["argmax"], mean


def write_costs(path, header, rows):
    return write_csv(path, ["true", *header], rows)


@pytest.fixture(scope="module")
def labelled_csv(tmp_path_factory):
    folder = tmp_path_factory.mktemp("costs")
    X, y = data(300, seed=8)
    names = np.array(["ok", "warn", "fail"])[y]
    return write_csv(folder / "train.csv", [f"x{i}" for i in range(X.shape[1])] + ["status"],
                     [[*map(float, row), label] for row, label in zip(X, names)]), X, names


def test_cli_fit_with_a_cost_matrix_file_maps_rows_and_columns_by_label(tmp_path, capsys,
                                                                        labelled_csv):
    path, X, names = labelled_csv
    # rows and columns in another order than the classes' (fail, ok, warn)
    costs = write_costs(tmp_path / "costs.csv", ["warn", "ok", "fail"],
                        [["ok", 1, 0, 2], ["fail", 4, 20, 0], ["warn", 0, 5, 1]])
    code, out, err = run_main(capsys, "fit", path, "--target", "status", "--output",
                              tmp_path / "m.npz", "--decision", costs, "--n-estimators", 20,
                              "--quiet")
    assert code == 0, err
    assert "decision cost matrix" in out
    forest = aucforest.load(tmp_path / "m.npz")
    assert forest.classes_.tolist() == ["fail", "ok", "warn"]
    assert forest.decision == [[0.0, 20.0, 4.0], [2.0, 0.0, 1.0], [1.0, 5.0, 0.0]]


@pytest.mark.parametrize("rows, header, message", [
    ([["ok", 0, 1, 1], ["warn", 1, 0, 1]], ["ok", "warn", "fail"], "no class 'fail'"),
    ([["ok", 0, 1, 1], ["warn", 1, 0, 1], ["fail", 1, 1, 0]], ["ok", "warn", "bad"],
     "names class 'bad'"),
    ([["ok", 0, 1, 1], ["warn", 1, 0, -1], ["fail", 1, 1, 0]], ["ok", "warn", "fail"],
     "line 3: cost '-1'"),
    ([["ok", 0, 1, 1], ["warn", 1, 0, "x"], ["fail", 1, 1, 0]], ["ok", "warn", "fail"],
     "is not a finite number"),
    ([["ok", 0, 1, 1], ["ok", 1, 0, 1], ["fail", 1, 1, 0]], ["ok", "warn", "fail"],
     "names class 'ok' twice"),
])
def test_cli_bad_cost_matrix_file_names_the_file(tmp_path, capsys, labelled_csv, rows, header,
                                                  message):
    path, _, _ = labelled_csv
    costs = write_costs(tmp_path / "costs.csv", header, rows)
    code, out, err = run_main(capsys, "fit", path, "--target", "status", "--output",
                              tmp_path / "m.npz", "--decision", costs, "--n-estimators", 5,
                              "--quiet")
    assert code != 0
    assert str(costs) in err and message in err, err
    assert not (tmp_path / "m.npz").exists()


def test_cli_decision_that_is_neither_rule_nor_file(tmp_path, capsys, labelled_csv):
    path, _, _ = labelled_csv
    with pytest.raises(SystemExit) as exit_:  # a usage error, before any data is read
        run_main(capsys, "fit", path, "--target", "status", "--output", tmp_path / "m.npz",
                 "--decision", tmp_path / "missing.csv")
    assert exit_.value.code == 2 and "(no such file)" in capsys.readouterr().err


def test_dask_fit_keeps_draw_weights_and_dask_predict_follows_a_cost_matrix(dask_client):
    da = pytest.importorskip("dask.array")
    X, y = data(300, seed=9)
    forest = AUCForestClassifier(20, balanced_bootstrap=True, decision=COSTS_3,
                                 random_state=0).fit(X, y)
    lazy = forest.predict(da.from_array(X, chunks=100)).compute()
    on_dask = AUCForestClassifier(20, balanced_bootstrap=True, random_state=0).fit(
        da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    assert np.array_equal(lazy, forest.predict(X))
    assert on_dask.draw_class_weights_ == pytest.approx(forest.draw_class_weights_, rel=1e-12)
