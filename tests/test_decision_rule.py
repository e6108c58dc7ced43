"""The decision rule as one typed value (`aucforest._decision_rule.DecisionRule`):
parsed once with one set of messages, written as plain data, and one tie rule
that makes every rule's label independent of the order the trees are summed in
(the forest's threads, onnxruntime's), checked against rules written out row by
row."""
import numpy as np
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse
from sklearn.datasets import make_classification

from aucforest import AUCForestClassifier, to_onnx
from aucforest._decision_rule import TIE_TOLERANCE, DecisionRule, first_best
from aucforest.decisions import expected_cost
from aucforest.metrics import imbalance_report

RULES_OF_THREE = ["rfq", "argmax", [[0, 1, 4], [2, 0, 1], [1, 1, 0]]]


# ------------------------------------------------------------------ parsing

@pytest.mark.parametrize("decision, n_classes", [
    ("rfq", 3), ("argmax", 5), (0.25, 2), ([[0, 1], [3, 0]], 2), (RULES_OF_THREE[2], 3)])
def test_plain_form_round_trips(decision, n_classes):
    rule = DecisionRule.parse(decision, n_classes)
    again = DecisionRule.from_plain(rule.to_plain(), n_classes)
    assert (again.kind, again.threshold) == (rule.kind, rule.threshold)
    if rule.costs is not None:
        np.testing.assert_array_equal(again.costs, np.asarray(decision, dtype=float))
        assert not again.costs.flags.writeable  # the parsed value cannot be changed
    assert DecisionRule.parse(rule, n_classes) is rule


@pytest.mark.parametrize("decision, n_classes, message", [
    ("max", 2, "'decision' parameter must be 'rfq', 'argmax'"),
    (None, 2, "got None"),
    (True, 2, "got True"),
    (1.5, 2, r"threshold in \(0, 1\) or a K x K cost matrix, got 1.5\."),
    (np.float64(0.0), 2, r"got 0.0\."),
    (0.3, 3, "needs exactly two classes; y has 3"),
    ([[0, 1], [1, 0]], 3, "shape \\(2, 2\\), and with 3 classes a cost matrix must be 3 x 3"),
    ([[0, np.nan], [1, 0]], 2, "holds NaN \\(first at row 0, column 1\\)"),
    ([[0, np.inf], [1, 0]], 2, "infinite cost"),
    ([[0, -1], [1, 0]], 2, "negative cost \\(-1 at row 0, column 1\\)"),
])
def test_every_bad_rule_is_refused_with_one_message(decision, n_classes, message):
    with pytest.raises(ValueError, match=message):
        DecisionRule.parse(decision, n_classes)
    # the same message wherever a rule enters: a fit, a metric
    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, random_state=0)
    with pytest.raises(ValueError, match=message):
        AUCForestClassifier(3, decision=decision).fit(X, y)
    proba = np.full((y.size, n_classes), 1.0 / n_classes)
    with pytest.raises(ValueError, match=message):
        imbalance_report(y, proba, decision=decision)


def test_a_rule_made_for_other_classes_is_refused():
    with pytest.raises(ValueError, match="made for 2 classes, not 3"):
        DecisionRule.parse(DecisionRule.parse("rfq", 2), 3)
    with pytest.raises(ValueError, match="for 3 classes; the probabilities have 2 columns"):
        DecisionRule.parse("rfq", 3).apply(np.full((4, 2), 0.5), np.full(3, 1 / 3))


def test_cost_matrix_arguments_take_only_a_matrix():
    with pytest.raises(ValueError, match="cost_matrix must be a 2 x 2 matrix of costs"):
        DecisionRule.parse_costs("rfq", 2)
    with pytest.raises(ValueError, match="cost_matrix must be a K x K matrix of costs; got an "
                                         "array of shape"):
        DecisionRule.parse_costs([[0, 1]], 2)


# ------------------------------------------------------------------ defect 4: labels

def test_expected_cost_refuses_labels_that_repeat_a_class_as_imbalance_report_does():
    costs = np.ones((3, 3)) - np.eye(3)
    with pytest.raises(ValueError, match="labels must not repeat a class; \\[0\\]"):
        expected_cost([0, 1, 0], [0, 0, 1], costs, labels=[0, 0, 1])
    with pytest.raises(ValueError, match="labels must not repeat a class; \\[0\\]"):
        imbalance_report([0, 1, 0], np.full((3, 3), 1 / 3), labels=[0, 0, 1])


# ------------------------------------------------------------------ the tie rule

def rule_written_out(rule, proba, prior):
    """The class of each row, one row and one class at a time: the scores of
    the rule, the first class in the rule's order of preference whose score
    is within a relative 1e-12 of the best."""
    chosen = []
    for row in proba:
        if rule.kind == "threshold":
            chosen.append(1 if row[1] >= rule.threshold * (1 - 1e-12) else 0)
            continue
        if rule.kind == "rfq" and len(row) == 2:  # a class of prior 0 is never predicted
            minority = int(np.argmin(prior))
            chosen.append(minority if prior[minority] > 0
                          and row[minority] >= prior[minority] * (1 - 1e-12) else 1 - minority)
            continue
        if rule.kind == "rfq":
            order = sorted((k for k in range(len(row)) if prior[k] > 0),
                           key=lambda k: (prior[k], k))
            scores = {k: row[k] / prior[k] for k in order}
        elif rule.kind == "argmax":
            order, scores = list(range(len(row))), dict(enumerate(row))
        else:
            order = list(range(len(row)))
            scores = {k: -sum(row[j] * rule.costs[j, k] for j in order) for k in order}
        best = max(scores.values())
        chosen.append(next(k for k in order if scores[k] >= best - 1e-12 * abs(best)))
    return np.array(chosen)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_classes=st.integers(2, 6),
       kind=st.sampled_from(["rfq", "argmax", "cost", "threshold"]))
def test_every_rule_equals_the_rule_written_out(seed, n_classes, kind):
    """On proportions with exact ties and ties up to the last bits (a third
    summed in two orders), zero priors included."""
    rng = np.random.default_rng(seed)
    proba = rng.integers(0, 4, (60, n_classes)).astype(float)
    proba /= np.maximum(proba.sum(axis=1, keepdims=True), 1)
    bumped = rng.random(proba.shape) < 0.3  # some entries off by a few ulps, as sums are
    proba[bumped] = np.nextafter(proba[bumped], 1.0)
    prior = rng.integers(0, 3, n_classes).astype(float)
    prior[rng.integers(n_classes)] += 1
    prior /= prior.sum()
    if kind == "threshold":
        if n_classes != 2:
            return
        decision = float(rng.choice([0.25, 0.5, 1 / 3]))
    elif kind == "cost":
        decision = rng.integers(0, 3, (n_classes, n_classes)).astype(float)
    else:
        decision = kind
    rule = DecisionRule.parse(decision, n_classes)
    expected = rule_written_out(rule, proba, prior)
    np.testing.assert_array_equal(rule.apply(proba, prior), expected)
    if kind in ("rfq", "argmax") and n_classes > 2:  # the sparse path: the same classes
        np.testing.assert_array_equal(rule.apply(sparse.csr_array(proba), prior), expected)


def test_first_best_gives_ties_to_the_first_in_the_order():
    scores = np.array([[1.0, 1.0 - 1e-15, 0.5], [0.2, 0.3, 0.3], [-2.0, -2.0 * (1 + 1e-13), -3]])
    np.testing.assert_array_equal(first_best(scores, np.array([2, 1, 0])), [1, 2, 1])
    np.testing.assert_array_equal(first_best(scores, np.arange(3)), [0, 1, 0])


def tied_forest():
    """Five classes, a balanced bootstrap and rounded features: rows whose class
    sums are equal in exact arithmetic and differ in the last bits by the order
    the 16 trees are added in."""
    X, y = make_classification(600, 4, n_informative=3, n_redundant=0, n_classes=5,
                               n_clusters_per_class=1, weights=[0.5, 0.2, 0.15, 0.1, 0.05],
                               random_state=0)
    forest = AUCForestClassifier(16, balanced_bootstrap=True, random_state=0).fit(np.round(X), y)
    rows = np.unique(np.round(np.random.default_rng(1).normal(size=(36000, 4)) * 1.5), axis=0)
    return forest, rows


def test_labels_do_not_depend_on_the_order_the_trees_are_summed():
    """Defect: a label flipped with the summation order at exact ties."""
    forest, rows = tied_forest()
    per_tree = np.stack([tree.predict_proba(rows) for tree in forest.estimators_])
    forward, backward = np.zeros_like(per_tree[0]), np.zeros_like(per_tree[0])
    for proba in per_tree:
        forward += proba
    for proba in per_tree[::-1]:
        backward += proba
    forward, backward = forward / len(per_tree), backward / len(per_tree)
    # the rows hold ties that a strict argmax (and RFQ's ratio) breaks one way or the other
    assert (np.argmax(forward, axis=1) != np.argmax(backward, axis=1)).any()
    prior = forest.class_prior_
    assert (np.argmax(forward / prior, axis=1) != np.argmax(backward / prior, axis=1)).any()
    for decision in ["rfq", "argmax", np.ones((5, 5)) - np.eye(5)]:
        forest.set_params(decision=decision)
        np.testing.assert_array_equal(forest.decide(forward), forest.decide(backward))
        np.testing.assert_array_equal(forest.decide(forward), forest.predict(rows))


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("decision", ["rfq", "argmax", "costs"])
def test_onnx_labels_equal_predict_at_ties_on_any_number_of_threads(decision, threads):
    forest, rows = tied_forest()
    forest.set_params(decision=np.ones((5, 5)) - np.eye(5) if decision == "costs" else decision)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(to_onnx(forest).SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    label, proba = session.run(None, {session.get_inputs()[0].name: rows})
    np.testing.assert_allclose(proba, forest.predict_proba(rows), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(label, forest.predict(rows))


def test_a_threshold_tuned_on_oob_predictions_is_applied_as_tuned():
    """The tie rule holds for a threshold too: p_1 within 1e-12 below t is
    class 1, in predict and in the ONNX graph."""
    X, y = make_classification(300, 5, weights=[0.8], random_state=0)
    forest = AUCForestClassifier(20, decision=0.5, random_state=0).fit(X, y)
    proba = forest.predict_proba(X)
    t = float(proba[np.argmin(np.abs(proba[:, 1] - 0.5)), 1])
    forest.set_params(decision=t)
    just_below = np.array([[1 - t, t * (1 - 0.5 * TIE_TOLERANCE)]])
    assert forest.decide(just_below)[0] == forest.classes_[1]
    assert forest.decide(np.array([[1 - t, t * (1 - 2 * TIE_TOLERANCE)]]))[0] == forest.classes_[0]


def test_describe_and_short_name_the_rule():
    classes = np.array(["a", "b"])
    assert DecisionRule.parse(0.3, 2).short == "threshold 0.3"
    assert DecisionRule.parse(0.3, 2).describe(classes) == (
        "threshold: 'b' when its probability is at least 0.3")
    assert DecisionRule.parse([[0, 1], [1, 0]], 2).short == "cost matrix"
    assert DecisionRule.parse("rfq", 2).short == "rfq"


def test_the_sparse_kernel_refuses_a_row_storing_a_class_twice():
    """`rfq_classes_sparse` keeps a row's stored scores for the tie pass: a row with
    more stored values than classes (a column twice) is refused, not overrun."""
    from aucforest._rfq import rfq_classes_sparse
    indptr, indices = np.array([0, 3], dtype=np.intp), np.array([0, 1, 1], dtype=np.int32)
    with pytest.raises(ValueError, match="more values than there are classes"):
        rfq_classes_sparse(indptr, indices, np.array([0.2, 0.4, 0.4]), np.array([0.5, 0.5]))
    # the canonical form of the same row decides as its dense row
    proba = sparse.csr_array((np.array([0.2, 0.4, 0.4]), indices, indptr), shape=(1, 3))
    rule = DecisionRule.parse("rfq", 3)
    np.testing.assert_array_equal(rule.apply(proba, np.full(3, 1 / 3)),
                                  rule.apply(proba.toarray(), np.full(3, 1 / 3)))


@pytest.mark.parametrize("decision", ["argmax", [[0, 1, 2], [1, 0, 1], [2, 1, 0]]])
def test_rules_other_than_rfq_need_no_priors(decision):
    """Only RFQ reads the priors: the others decide with prior=None, dense or sparse."""
    proba = np.array([[0.2, 0.5, 0.3], [0.0, 0.0, 0.0], [0.4, 0.4, 0.2]])
    rule = DecisionRule.parse(decision, 3)
    expected = rule.apply(proba, np.array([0.5, 0.3, 0.2]))
    np.testing.assert_array_equal(rule.apply(proba, None), expected)
    np.testing.assert_array_equal(rule.apply(sparse.csr_array(proba), None), expected)
