"""ONNX export (`aucforest.to_onnx`, the skl2onnx converter, ``aucforest export``):
the exported model, run by the real onnxruntime, gives predict_proba within 1e-12
and the labels of predict, row by row, for every kind of split, missing value,
categorical level and decision rule (ties included)."""
import csv
import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import onnx
import onnxruntime
import pandas as pd
import pytest
import skl2onnx
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import aucforest
from aucforest import AUCForestClassifier, AUCTreeClassifier, ColumnEncoding, to_onnx
from aucforest.export import _graph, register_skl2onnx
from aucforest.export._exportable import ExportableForest

from cli_files import run_main, write_csv
from export_data import (categorical_codes_forest, categorical_frame_forest, held_out,
                         make_data, missing_values_forest, nan_directions, sparse_forest,
                         tied_values_forest)
from package_env import package_env

ATOL = 1e-12


def run_onnx(model, X, input_name=None, threads=0):
    """(label, probabilities) of an ONNX model in onnxruntime (``threads``: its
    intra_op_num_threads, 0 for its default)."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    name = input_name or session.get_inputs()[0].name
    label, proba = session.run(None, {name: X})
    return label, proba


def assert_same_predictions(estimator, X_onnx, X_forest=None):
    """The exported model gives estimator's predict_proba (within 1e-12) and predict
    (exactly) on X (``X_forest``: what the estimator is given, e.g. a DataFrame)."""
    X_forest = X_onnx if X_forest is None else X_forest
    label, proba = run_onnx(to_onnx(estimator), np.asarray(X_onnx, dtype=np.float64))
    np.testing.assert_allclose(proba, estimator.predict_proba(X_forest), rtol=0, atol=ATOL)
    np.testing.assert_array_equal(label, estimator.predict(X_forest))
    return label, proba


@pytest.mark.parametrize("n_classes, criterion", [
    (2, "auc"), (2, "gini"), (3, "auc"), (3, "gini"),
    (12, "auc")])  # above 8 classes grown trees keep each node's classes present only
def test_probabilities_and_labels_match_on_held_out_rows(n_classes, criterion):
    X, y = make_data(400, n_classes)
    forest = AUCForestClassifier(n_estimators=25, criterion=criterion, random_state=0).fit(X, y)
    label, _ = assert_same_predictions(forest, held_out(300))
    assert len(np.unique(label)) == n_classes


def test_missing_values_go_both_ways_and_where_no_nan_was_seen():
    forest, X_test = missing_values_forest(n_estimators=25)
    # NaN learnt to go left at some nodes, right at others
    assert {(1, 0), (1, 1)} <= nan_directions(forest, (1, 3))
    assert_same_predictions(forest, X_test)


@pytest.mark.parametrize("max_bins, nsplit", [(None, None), (None, 10), (16, None), ("auto", 10)])
def test_binned_and_exact_splitters(max_bins, nsplit):
    assert_same_predictions(*tied_values_forest(max_bins, nsplit, n_estimators=20))


def test_values_on_the_thresholds_and_between_float32_neighbours():
    """The forest rounds X to float32 before comparing with its double thresholds;
    the exported graph does too, so a double on either side of a threshold that
    rounds onto it goes where the forest sends it."""
    X, y = make_data(300)
    forest = AUCForestClassifier(n_estimators=15, max_bins=None, nsplit=None,
                                 random_state=0).fit(X, y)
    splits = [(f, t) for tree in forest.estimators_
              for f, t in zip(tree.tree_.feature, tree.tree_.threshold) if f >= 0][:100]
    rows = np.repeat(held_out(len(splits) * 4)[:len(splits)], 4, axis=0)
    for i, (f, t) in enumerate(splits):
        below = np.nextafter(np.float32(t), np.float32(-np.inf))
        rows[4 * i:4 * i + 4, f] = [t, np.nextafter(t, np.inf), np.float32(t), below]
    assert_same_predictions(forest, rows)


def test_categorical_codes_with_unseen_levels_and_large_sets():
    """Codes 0..39 (sets beyond 30 levels, which onnxruntime stores otherwise) and
    0..5 as categorical features; at predict, levels never seen at fit (within
    0..254) and NaN go where missing values go."""
    forest, X_test = categorical_codes_forest()
    assert any(tree.tree_.categorical_split.any() for tree in forest.estimators_)
    assert_same_predictions(forest, X_test)


def test_categorical_text_levels_from_a_dataframe():
    """A ``category`` column of text levels: the ONNX input holds each level's
    position in ``categories_``; a level the forest never saw is NaN, as predict
    treats it (with a warning)."""
    forest, test, codes = categorical_frame_forest()
    assert np.isnan(codes[:, 1]).any() and np.isnan(codes[:, 2]).any()
    with pytest.warns(UserWarning, match="not seen"):
        label, _ = assert_same_predictions(forest, codes, test)
    assert set(label) == {"yes", "no"}
    metadata = {p.key: p.value for p in to_onnx(forest).metadata_props}
    assert json.loads(metadata["categories"]) == [
        None, ["amber", "blue", "green", "red", "violet"], [3, 7, 11]]
    assert json.loads(metadata["feature_names"]) == ["x", "colour", "size"]


def test_sparse_fitted_forest_predicts_dense_rows():
    forest, X_test = sparse_forest()
    label, proba = run_onnx(to_onnx(forest), X_test.toarray())
    np.testing.assert_allclose(proba, forest.predict_proba(X_test), rtol=0, atol=ATOL)
    np.testing.assert_array_equal(label, forest.predict(X_test))


COSTS_2 = [[0, 1], [5, 0]]
COSTS_3 = [[0, 1, 4], [2, 0, 1], [6, 3, 0]]


@pytest.mark.parametrize("n_classes, decision", [
    (2, "rfq"), (2, "argmax"), (2, 0.3), (2, COSTS_2),
    (3, "rfq"), (3, "argmax"), (3, COSTS_3)])
@pytest.mark.parametrize("balanced", [False, True])
def test_every_decision_rule(n_classes, decision, balanced):
    X, y = make_data(400, n_classes)
    keep = (y != n_classes - 1) | (np.arange(400) % 4 == 0)  # an imbalanced last class
    forest = AUCForestClassifier(n_estimators=20, decision=decision, balanced_bootstrap=balanced,
                                 random_state=0).fit(X[keep], y[keep])
    if balanced:  # the cost matrix decides under the training priors (prior-shift correction)
        assert not np.allclose(forest.draw_class_weights_, 1.0)
    assert_same_predictions(forest, held_out(400))


def test_the_rule_changed_after_fit_is_the_one_exported():
    X, y = make_data(300, 3)
    forest = AUCForestClassifier(n_estimators=15, random_state=0).fit(X, y)
    forest.set_params(decision=COSTS_3)
    assert_same_predictions(forest, held_out(200))


@pytest.mark.parametrize("decision", ["rfq", "argmax", [[0, 1, 1], [1, 0, 1], [1, 1, 0]]])
def test_ties_break_as_predict_breaks_them(decision):
    """Trees that cannot split (X constant) predict the training priors exactly:
    every p_k / pi_k is 1 (RFQ: to the smallest prior), two classes of equal
    size tie under argmax and under equal costs (to the lowest index)."""
    y = np.repeat([0, 1, 2], [10, 10, 5])
    X = np.zeros((y.size, 2))
    forest = AUCForestClassifier(n_estimators=2, bootstrap=False, decision=decision,
                                 random_state=0).fit(X, y)
    proba = forest.predict_proba(X[:4])
    np.testing.assert_array_equal(proba, np.tile(forest.class_prior_, (4, 1)))  # ties
    assert proba[0, 0] == proba[0, 1] and len(set(proba[0] / forest.class_prior_)) == 1
    label, _ = assert_same_predictions(forest, np.zeros((4, 2)))
    assert label.tolist() == [2] * 4 if decision == "rfq" else [0] * 4


def test_binary_rfq_tie_at_the_prior():
    """p_min == pi_min exactly: RFQ predicts the minority class (p_min >= pi_min)."""
    y = np.repeat([0, 1], [15, 5])
    X = np.zeros((20, 1))  # no split: every tree predicts the priors
    forest = AUCForestClassifier(n_estimators=2, bootstrap=False, random_state=0).fit(X, y)
    assert forest.predict_proba(X[:1])[0, 1] == forest.class_prior_[1]
    label, _ = assert_same_predictions(forest, X)
    assert set(label) == {1}


def test_a_tiny_forest_with_a_tie_between_two_classes():
    """Two trees split x: the leaf x = 0 holds classes (4, 2, 2) of priors
    (1/4, 1/8, 5/8), so p_0 / pi_0 = p_1 / pi_1 = 2 exactly: RFQ takes class 1,
    the smaller prior."""
    X = np.repeat([0.0, 1.0], [8, 8])[:, np.newaxis]
    y = np.array([0] * 4 + [1] * 2 + [2] * 2 + [2] * 8)
    forest = AUCForestClassifier(n_estimators=2, bootstrap=False, random_state=0).fit(X, y)
    scores = forest.predict_proba([[0.0]])[0] / forest.class_prior_
    assert scores[0] == scores[1] == scores.max()
    label, _ = assert_same_predictions(forest, np.array([[0.0], [1.0], [np.nan]]))
    assert label[:2].tolist() == [1, 2]


def test_a_single_tree_and_collapsed_trees():
    X, y = make_data(300, 3)
    tree = AUCTreeClassifier(max_depth=6, random_state=0).fit(X, y)
    assert_same_predictions(tree, held_out(200))
    forest = AUCForestClassifier(n_estimators=15, predict_min_samples=20,
                                 random_state=0).fit(X, y)
    assert forest.predict_min_samples_ == 20  # leaves below 20 cases give their parent's
    assert_same_predictions(forest, held_out(200))


def graph_model(forest, **options):
    """The model of ``ForestGraph(forest, 18, **options)`` (to_onnx's graph)."""
    exportable = ExportableForest(forest, "test")
    graph = _graph.ForestGraph(exportable, 18, **options)
    graph.build("X", "label", "probabilities")
    onnx_graph = onnx.helper.make_graph(
        graph.nodes, "forest",
        [onnx.helper.make_tensor_value_info("X", onnx.TensorProto.DOUBLE, [None, 5])],
        [onnx.helper.make_tensor_value_info("label", onnx.TensorProto.INT64, [None]),
         onnx.helper.make_tensor_value_info("probabilities", onnx.TensorProto.DOUBLE, None)])
    opsets = [onnx.helper.make_opsetid("", 18), onnx.helper.make_opsetid("ai.onnx.ml", 5)]
    model = onnx.helper.make_model(onnx_graph, opset_imports=opsets)
    model.ir_version = onnx.helper.find_min_ir_version_for(opsets)
    return model


def ensembles(model):
    """The attributes (name -> value) of the model's TreeEnsemble nodes."""
    return [{a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            for node in model.graph.node if node.op_type == "TreeEnsemble"]


def one_value_copy(tree, values, node=0):
    """(splits, leaves, value) of ``tree`` with every subtree whose leaves all hold
    the same ``values[leaf]`` made one leaf (value None unless the copy is one leaf):
    written out recursively."""
    if tree.feature[node] < 0:
        return 0, 1, values[node]
    left = one_value_copy(tree, values, tree.children_left[node])
    right = one_value_copy(tree, values, tree.children_right[node])
    if left[2] is not None and left[2] == right[2]:
        return 0, 1, left[2]
    return left[0] + right[0] + 1, left[1] + right[1], None


def test_two_classes_walk_each_tree_once_for_the_second():
    """The graph's size as designed: the first class is the number of trees minus
    the others' sums, so two classes take one target and each tree once; a copy
    for class k keeps the splits whose subtrees give class k different
    proportions (a copy of one value 0 is left out, one of another value is one
    split and its leaf), and no node tracks missing values."""
    n_classes = 2
    X, y = make_data(400, n_classes)
    forest = AUCForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    parts = ensembles(to_onnx(forest))
    expected_splits = expected_leaves = 0
    for estimator in forest.estimators_:
        for k in range(1, n_classes):
            splits, leaves, value = one_value_copy(estimator.tree_,
                                                   estimator.tree_.proba[:, k])
            if value is not None:  # one leaf
                splits = 0 if value == 0 else 1
                leaves = 0 if value == 0 else 1
            expected_splits, expected_leaves = expected_splits + splits, expected_leaves + leaves
    assert {part["n_targets"] for part in parts} == {n_classes - 1}
    assert sum(len(part["nodes_featureids"]) for part in parts) == expected_splits
    assert sum(len(part["leaf_targetids"]) for part in parts) == expected_leaves
    assert expected_splits == sum(e.tree_.node_count - e.tree_.n_leaves
                                  for e in forest.estimators_)
    assert not any("nodes_missing_value_tracks_true" in part for part in parts)
    assert_same_predictions(forest, held_out(300))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("exact_sums", [False, True])
def test_trees_over_several_ensembles_and_exact_sums(monkeypatch, n_classes, exact_sums):
    """Leaf proportions in thirds and fifths (leaves of at least 3 cases), trees
    over several TreeEnsemble nodes: within 1e-12 and predict's labels; with
    exact_sums, predict_proba to the last bit on one thread and on several (each
    tree's proportions, a target of its own for two classes, gathered leaf rows
    for three, added in the trees' order by a CumSum)."""
    monkeypatch.setattr(_graph, "MAX_ENSEMBLE_NODES", 300)
    X, y = make_data(400, n_classes)
    forest = AUCForestClassifier(n_estimators=30, min_samples_leaf=3,
                                 random_state=0).fit(X, y)
    leaves = np.concatenate([e.tree_.proba[e.tree_.feature < 0] for e in forest.estimators_])
    assert any(Fraction(value).denominator > 2 ** 40 for value in leaves.ravel())
    model = graph_model(forest, exact_sums=exact_sums)
    X_test = held_out(400)
    expected = forest.predict_proba(X_test)
    for threads in (1, 4):
        label, proba = run_onnx(model, X_test, threads=threads)
        np.testing.assert_allclose(proba, expected, rtol=0, atol=ATOL)
        np.testing.assert_array_equal(label, forest.predict(X_test))
        if exact_sums:
            np.testing.assert_array_equal(proba, expected)
    parts = ensembles(model)
    cumsums = [node for node in model.graph.node if node.op_type == "CumSum"]
    assert len(cumsums) == exact_sums
    if n_classes == 3:  # a node per tree (its leaf's row), whatever MAX_ENSEMBLE_NODES says
        assert len(parts) == 30 and {part["n_targets"] for part in parts} == {1}
    elif exact_sums:
        assert len(parts) == 1 and parts[0]["n_targets"] == 2 * 30
    else:
        assert len(parts) > 1 and {part["n_targets"] for part in parts} == {1}


def test_pure_leaves_keep_the_fast_graph_and_the_last_bit(monkeypatch):
    """Leaf proportions of 0 and 1 sum exactly in any order: the graph with
    exact_sums is the fast one (each tree's leaf rows gathered and added in
    any order, no CumSum) and gives predict_proba to the last bit."""
    monkeypatch.setattr(_graph, "MAX_ENSEMBLE_NODES", 300)
    X, y = make_data(400, 3, missing=0.0)
    forest = AUCForestClassifier(n_estimators=20, predict_min_samples=1, bootstrap=False,
                                 random_state=0).fit(X, y)
    leaves = np.concatenate([e.tree_.proba[e.tree_.feature < 0] for e in forest.estimators_])
    assert set(leaves.ravel()) == {0.0, 1.0}
    model = graph_model(forest, exact_sums=True)
    assert len(ensembles(model)) == 20
    assert not any(node.op_type == "CumSum" for node in model.graph.node)
    _, proba = run_onnx(model, held_out(300), threads=1)
    np.testing.assert_array_equal(proba, forest.predict_proba(held_out(300)))


@pytest.mark.parametrize("n_classes", [3, 5])
def test_three_classes_or_more_walk_each_tree_once(n_classes):
    """Three classes or more: each tree is one TreeEnsemble of one target, walked
    once to its leaf's row in a table of the distinct leaf proportions (a
    subtree whose leaves all hold the same proportions is one leaf), the rows
    gathered and added a chunk of trees at a time: predict_proba within 1e-12
    and predict's labels on 1 and 4 threads, with leaves in thirds and fifths,
    NaN and a categorical column."""
    rng = np.random.default_rng(5)
    X, y = make_data(500, n_classes)
    X[:, 4] = rng.integers(0, 6, 500)
    X[rng.random(500) < 0.1, 4] = np.nan
    y = np.where(X[:, 4] == 2, (y + 1) % n_classes, y)  # the category tells the class
    forest = AUCForestClassifier(n_estimators=30, min_samples_leaf=3, categorical_features=[4],
                                 random_state=0).fit(X, y)
    assert any(e.tree_.categorical_split.any() for e in forest.estimators_)
    leaves = np.concatenate([e.tree_.proba[e.tree_.feature < 0] for e in forest.estimators_])
    assert any(Fraction(value).denominator > 2 ** 40 for value in leaves.ravel())
    model = to_onnx(forest)
    parts = ensembles(model)
    assert len(parts) == 30
    for part, estimator in zip(parts, forest.estimators_):
        tree = estimator.tree_
        splits, n_leaves, _ = one_value_copy(tree, [tuple(row) for row in tree.proba])
        assert part["n_targets"] == 1 and len(part["tree_roots"]) == 1
        assert len(part["nodes_featureids"]) == max(splits, 1)
        assert len(part["leaf_targetids"]) == n_leaves
        weights = onnx.numpy_helper.to_array(part["leaf_weights"])
        assert np.array_equal(weights, np.round(weights)) and weights.min() >= 0
    table = next(onnx.numpy_helper.to_array(node.attribute[0].t) for node in model.graph.node
                 if node.output[0] == "leaf_proportions")
    assert len({tuple(row) for row in leaves}) == table.shape[0] == len(np.unique(leaves, axis=0))
    assert sum(node.op_type == "Gather" for node in model.graph.node) > 1  # chunks of trees
    X_test = held_out(400)
    X_test[:, 4] = rng.integers(0, 9, 400)  # 6..8 unseen
    X_test[:40, 4] = np.nan
    for threads in (1, 4):
        label, proba = run_onnx(model, X_test, threads=threads)
        np.testing.assert_allclose(proba, forest.predict_proba(X_test), rtol=0, atol=ATOL)
        np.testing.assert_array_equal(label, forest.predict(X_test))


def test_exactly_summable_values_add_up_exactly_in_any_order():
    """Against exact rational sums: multiples of 2**-m (m = 53 - ceil(log2 n)) of at
    most 1 sum exactly in any order, n at a time; beyond that the check refuses."""
    rng = np.random.default_rng(0)
    n = 1024
    fine = 1.0 - 2.0 ** -43  # the finest step 1024 terms allow
    values = rng.choice([0.0, 1.0, 0.5, 0.375, fine], size=n)
    assert _graph.exactly_summable(values, n)
    exact = sum(Fraction(value) for value in values)
    for _ in range(5):
        total = 0.0
        for value in rng.permutation(values):
            total += value
        assert Fraction(total) == exact
        assert Fraction(n - total) == n - exact
    assert not _graph.exactly_summable([1.0 - 2.0 ** -44], n)
    assert _graph.exactly_summable([1.0 - 2.0 ** -44], n // 2)
    assert not _graph.exactly_summable([1 / 3, 2 / 3], 2)
    assert not _graph.exactly_summable([2.0], 1)
    assert not _graph.exactly_summable([np.nan], 1)


def test_a_split_sending_nan_left_reads_the_negated_column_exactly():
    """``x > t`` for float32 x is ``-x <= -u``, u the least float32 above t, for
    thresholds between float32 values, on them, beyond float32's range."""
    largest = float(np.finfo(np.float32).max)
    rng = np.random.default_rng(1)
    thresholds = np.concatenate([
        rng.normal(size=200) * 10.0 ** rng.integers(-30, 30, size=200),
        np.float32(rng.normal(size=50)).astype(np.float64),
        [0.0, -0.0, 1e-45, largest, -largest, 2 * largest, -2 * largest, 1e300, -1e300]])
    above = _graph._float32_above(thresholds)
    for t, u in zip(thresholds, above):
        nearby = np.float32(t) if abs(t) <= largest else np.float32(np.sign(t) * largest)
        with np.errstate(over="ignore"):
            xs = [np.nextafter(nearby, np.float32(-np.inf)), nearby,
                  np.nextafter(nearby, np.float32(np.inf)), np.float32(np.inf),
                  np.float32(-np.inf)]
        for x in np.array(xs, dtype=np.float32).astype(np.float64):
            assert (x > t) == (-x <= -u), (t, x)


def test_a_forest_read_from_a_model_file(tmp_path):
    X, y = make_data(300)
    forest = AUCForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    aucforest.save(forest, tmp_path / "m.npz")
    assert_same_predictions(aucforest.load(tmp_path / "m.npz"), held_out(200))


def test_the_model_is_valid_and_says_what_it_takes():
    X, y = make_data(200)
    forest = AUCForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    model = to_onnx(forest)
    onnx.checker.check_model(model, full_check=True)
    assert {(o.domain, o.version) for o in model.opset_import} == {("", 18), ("ai.onnx.ml", 5)}
    assert [i.name for i in model.graph.input] == ["X"]
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
    assert [o.name for o in model.graph.output] == ["label", "probabilities"]
    assert json.loads({p.key: p.value for p in model.metadata_props}["decision"]) == "rfq"
    opset_21 = to_onnx(forest, target_opset={"": 21, "ai.onnx.ml": 5})
    label, proba = run_onnx(opset_21, X)
    np.testing.assert_allclose(proba, forest.predict_proba(X), rtol=0, atol=ATOL)


def test_bad_arguments_are_refused():
    X, y = make_data(100)
    forest = AUCForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="ai.onnx.ml opset 3; the export needs 5"):
        to_onnx(forest, target_opset={"": 18, "ai.onnx.ml": 3})
    with pytest.raises(ValueError, match="opset 12; the export needs 13"):
        to_onnx(forest, target_opset=12)
    with pytest.raises(TypeError, match="not LogisticRegression"):
        to_onnx(LogisticRegression().fit(np.nan_to_num(X), y))
    with pytest.raises(NotFittedError):
        to_onnx(AUCForestClassifier())


def test_missing_onnx_gives_an_install_hint(tmp_path):
    code = ("import sys; sys.modules['onnx'] = None\n"  # the import fails as if absent
            "import numpy as np, aucforest\n"
            "f = aucforest.AUCForestClassifier(n_estimators=2).fit(np.eye(4), [0, 1, 0, 1])\n"
            "try:\n    aucforest.to_onnx(f)\n"
            "except ImportError as e:\n    print(e)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, env=package_env(), check=True)
    assert 'pip install "aucforest[onnx]"' in result.stdout


# ------------------------------------------------------------------ skl2onnx

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_skl2onnx_converts_the_forest(dtype):
    register_skl2onnx()
    X, y = make_data(300, 3)
    labels = np.array(["low", "mid", "high"])[y]
    forest = AUCForestClassifier(n_estimators=15, random_state=0).fit(X, labels)
    model = skl2onnx.to_onnx(forest, X[:1].astype(dtype))
    X_test = held_out(200).astype(dtype)  # float32 rows are what the forest compares
    label, proba = run_onnx(model, X_test)
    np.testing.assert_allclose(proba, forest.predict_proba(X_test), rtol=0, atol=ATOL)
    np.testing.assert_array_equal(label, forest.predict(X_test))


def test_skl2onnx_converts_a_pipeline_and_a_tree():
    register_skl2onnx()
    register_skl2onnx()  # twice: no harm
    X, y = make_data(300)
    X = 50 * X + 7
    for last in (AUCForestClassifier(n_estimators=15, random_state=0),
                 AUCTreeClassifier(max_depth=5, random_state=0)):
        pipeline = make_pipeline(StandardScaler(), last).fit(X, y)
        model = skl2onnx.to_onnx(pipeline, X[:1].astype(np.float64))
        X_test = 50 * held_out(200) + 7
        label, proba = run_onnx(model, X_test)
        np.testing.assert_allclose(proba, pipeline.predict_proba(X_test), rtol=0, atol=ATOL)
        np.testing.assert_array_equal(label, pipeline.predict(X_test))


def test_skl2onnx_with_an_ml_opset_below_5_is_refused():
    register_skl2onnx()
    X, y = make_data(100)
    forest = AUCForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="ai.onnx.ml opset 5 or more"):
        skl2onnx.to_onnx(forest, X[:1], target_opset={"": 18, "ai.onnx.ml": 3})


# ------------------------------------------------------------------ command line

def aucforest_command(*args, cwd):
    return subprocess.run([sys.executable, "-m", "aucforest", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=package_env())


def training_csv(path, n=300, seed=8):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        a, colour = rng.normal(), rng.choice(["red", "green", "blue", ""])
        b = "NA" if rng.random() < 0.2 else f"{rng.normal():.4f}"
        label = "pos" if a + (colour == "red") + 0.5 * rng.normal() > 1 else "neg"
        rows.append([f"{a:.4f}", b, colour, label])
    return write_csv(path, ["a", "b", "colour", "y"], rows)


def test_command_exports_a_fitted_model(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    training_csv(tmp_path / "train.csv")
    code, _, err = run_main(capsys, "fit", "train.csv", "--target", "y", "--output", "m.npz",
                            "--n-estimators", 20, "--quiet")
    assert code == 0, err
    (tmp_path / "m.onnx").write_bytes(b"previous")  # replaced, as every output is
    result = aucforest_command("export", "m.npz", "m.onnx", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "wrote m.onnx: 20 trees" in result.stdout
    model = onnx.load(tmp_path / "m.onnx")
    metadata = {p.key: p.value for p in model.metadata_props}
    assert json.loads(metadata["categories"])[2] == ["blue", "green", "red"]
    encoding = ColumnEncoding.from_model_file(tmp_path / "m.npz")
    assert json.loads(metadata["encoding"]) == json.loads(json.dumps(encoding.to_dict()))
    test_csv = training_csv(tmp_path / "test.csv", n=100, seed=9)
    table = pd.read_csv(test_csv, dtype=str, keep_default_na=False).drop(columns="y")
    X = encoding.transform(table.to_dict("list"))  # the codes, as predict encodes them
    label, proba = run_onnx(model, X)
    for option in ("--proba", None):  # what 'aucforest predict' writes
        code, _, err = run_main(capsys, "predict", "m.npz", "test.csv", "--output", "p.csv",
                                *filter(None, [option]))
        assert code == 0, err
        with open(tmp_path / "p.csv") as stream:
            written = list(csv.reader(stream))
        if option:
            assert written[0] == ["neg", "pos"]
            np.testing.assert_allclose(proba, np.array(written[1:], dtype=float), rtol=0,
                                       atol=ATOL)
        else:
            assert label.tolist() == [row[0] for row in written[1:]]


def test_command_refuses_what_it_cannot_export(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    training_csv(tmp_path / "train.csv")
    code, _, err = run_main(capsys, "export", "train.csv", "out.onnx")
    assert code == 1 and "train.csv: not an aucforest model file" in err
    code, _, err = run_main(capsys, "fit", "train.csv", "--target", "y", "--output", "c.npz",
                            "--n-estimators", 10, "--calibrate", "isotonic", "--quiet")
    assert code == 0, err
    code, _, err = run_main(capsys, "export", "c.npz", "c.npz")
    assert code == 1 and "is the input file" in err
    assert not (tmp_path / "out.onnx").exists()


def encode_as_the_metadata_says(metadata, rows):
    """The ONNX input of text ``rows`` (dicts of cells, as a CSV file holds them),
    encoded by the rules of the metadata's ``encoding`` alone, as a program in
    another language would: a numeric column's number (NaN for a missing-value
    marker), a categorical column's position of its cell in ``levels``, matched
    as text ("categorical") or by value ("category": a number equal to a
    numeric level), NaN when missing or not a level."""
    encoding = json.loads(metadata["encoding"])
    markers = {marker.lower() for marker in encoding["na_values"]} | {""}
    X = np.full((len(rows), len(encoding["columns"])), np.nan)
    for j, column in enumerate(encoding["columns"]):
        for i, row in enumerate(rows):
            cell = row[column["name"]]
            if cell.lower() in markers:
                continue
            if column["kind"] == "numeric":
                X[i, j] = float(cell)
                continue
            assert column["kind"] in ("categorical", "category"), column
            for code, level in enumerate(column["levels"]):
                if cell == level or (column["kind"] == "category" and not isinstance(level, str)
                                     and is_float(cell) and float(cell) == level):
                    X[i, j] = code
                    break
    return X


def is_float(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_command_exports_a_python_model_with_text_category_columns(tmp_path):
    """Regression: ``aucforest export`` of a model saved from Python with a
    ``category`` column of text levels wrote an ``encoding`` calling that column
    numeric, against its own ``categories`` entry, so rows encoded as the
    metadata say could not be encoded. Each column is now described as predict
    encodes it: rows encoded by the metadata alone, run in onnxruntime, give
    predict's labels."""
    rng = np.random.default_rng(11)
    colours = ["amber", "blue", "green", "red"]
    grades = ["low", "mid", "high"]  # categories in their own order, not sorted

    def frame(n, extra_colour=()):
        x = rng.normal(size=n)
        x[rng.random(n) < 0.1] = np.nan
        return pd.DataFrame({
            "x": x,
            "colour": pd.Categorical(rng.choice([*colours, *extra_colour], n)),
            "size": pd.Categorical(rng.choice([3, 7, 11], n)),
            "grade": pd.Categorical(rng.choice(grades, n), categories=grades)})

    train = frame(400)
    train.loc[rng.random(400) < 0.1, "colour"] = np.nan
    y = np.where(train["colour"].isin(["red", "amber"]) ^ (train["grade"] == "high")
                 ^ (train["x"] > 0.8), "yes", "no")
    forest = AUCForestClassifier(n_estimators=20, categorical_features="from_dtype",
                                 random_state=0).fit(train, y)
    assert forest.categories_[1] == colours and forest.categories_[3] == grades
    aucforest.save(forest, tmp_path / "m.npz")
    result = aucforest_command("export", "m.npz", "m.onnx", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    model = onnx.load(tmp_path / "m.onnx")
    metadata = {p.key: p.value for p in model.metadata_props}
    test = frame(200, extra_colour=["teal"])  # a level never seen: missing, as predict
    test.loc[:9, "colour"] = np.nan
    cells = [{"x": "" if np.isnan(row.x) else repr(row.x),
              "colour": "" if pd.isna(row.colour) else row.colour,
              "size": str(row.size), "grade": row.grade} for row in test.itertuples()]
    label, proba = run_onnx(model, encode_as_the_metadata_says(metadata, cells))
    with pytest.warns(UserWarning, match="not seen"):
        expected = forest.predict(test)
    np.testing.assert_array_equal(label, expected)
    with pytest.warns(UserWarning, match="not seen"):
        np.testing.assert_allclose(proba, forest.predict_proba(test), rtol=0, atol=ATOL)
    columns = json.loads(metadata["encoding"])["columns"]
    assert [column.get("levels") for column in columns] == json.loads(metadata["categories"])
    assert [column["kind"] for column in columns] == ["numeric", "categorical", "category",
                                                      "category"]
    # the package's own codec reads the description the same way
    encoding = ColumnEncoding.from_dict(json.loads(metadata["encoding"]))
    with pytest.warns(UserWarning, match="not seen"):
        encoded = encoding.transform({name: [row[name] for row in cells]
                                      for name in ["x", "colour", "size", "grade"]})
    np.testing.assert_array_equal(encoded, encode_as_the_metadata_says(metadata, cells))


def test_the_metadata_describe_every_column_as_predict_encodes_it():
    """One description of the columns (`ColumnEncoding.from_forest`) for to_onnx
    and the command line: text levels in sorted order are "categorical", integer
    levels "category" (by value), codes in a numeric column numbers."""
    forest, test, codes = categorical_frame_forest()
    metadata = {p.key: p.value for p in to_onnx(forest).metadata_props}
    encoding = json.loads(metadata["encoding"])
    assert encoding == ColumnEncoding.from_forest(forest).to_dict()
    assert [(c["name"], c["kind"], c.get("levels")) for c in encoding["columns"]] == [
        ("x", "numeric", None), ("colour", "categorical", forest.categories_[1]),
        ("size", "category", [3, 7, 11])]
    with pytest.warns(UserWarning, match="not seen"):
        np.testing.assert_array_equal(ColumnEncoding.from_dict(encoding).transform(
            {"x": test["x"], "colour": test["colour"].astype(str), "size": test["size"]}), codes)
    forest, _ = categorical_codes_forest()  # codes given as numbers: numbers to predict
    encoding = json.loads({p.key: p.value for p in to_onnx(forest).metadata_props}["encoding"])
    assert encoding["columns"] == [{"name": f"x{j}", "kind": "numeric"} for j in range(5)]
    with pytest.raises(ValueError, match="the encoding gives 2 columns but the forest has 5"):
        to_onnx(forest, encoding=ColumnEncoding([{"name": "a", "kind": "numeric"},
                                                 {"name": "b", "kind": "numeric"}]))
    with pytest.raises(ValueError, match="malformed"):  # 1 and 1.0: one level to pandas
        ColumnEncoding.from_dict({"columns": [{"name": "a", "kind": "category",
                                               "levels": [1, 1.0]}]})
