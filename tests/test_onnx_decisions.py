"""ONNX export of calibrated models and conformal prediction sets (`aucforest.to_onnx`
of `OOBCalibratedClassifier` and `MondrianConformalClassifier`, the skl2onnx
converters, ``aucforest export --sets``): run by the real onnxruntime, the model
gives the Python estimators' calibrated probabilities (within 1e-12), labels,
p-values and sets, for every calibration method, decision rule and number of
classes, on rows with NaN, a category column and scores tied with calibration
scores."""
import copy
import csv
import functools
import json

import numpy as np
import onnx
import onnxruntime
import pandas as pd
import pytest
import skl2onnx
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from aucforest import AUCForestClassifier, ColumnEncoding, to_onnx
from aucforest.calibration import OOBCalibratedClassifier
from aucforest.conformal import MondrianConformalClassifier
from aucforest.export import register_skl2onnx

from cli_files import run_main
from export_data import decision_frame, frame_codes, held_out, make_data
from test_onnx_export import training_csv

ATOL = 1e-12
ALPHA = 0.1
METHODS = ["isotonic", "sigmoid", "venn_abers"]


def session_outputs(model, X, threads=1, extra=()):
    """The outputs of ``model`` in onnxruntime (``intra_op_num_threads=threads``)
    by name; ``extra``: intermediate tensors (double) to output as well."""
    if extra:
        model = copy.deepcopy(model)
        model.graph.output.extend(onnx.helper.make_tensor_value_info(
            name, onnx.TensorProto.DOUBLE, None) for name in extra)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    return dict(zip(names, session.run(None, {"X": np.asarray(X, dtype=np.float64)})))


@functools.lru_cache(maxsize=None)
def fitted_forest(n_classes):
    """A forest on a frame with NaN and a category column (balanced bootstrap for
    two and twelve classes: draw weights that are not all one), its labels, and
    held-out rows followed by training rows (scores tied with the calibration
    scores) and repeated training rows."""
    frame, y = decision_frame(240 if n_classes < 12 else 420, n_classes)
    forest = AUCForestClassifier(n_estimators=25, oob_score=True,
                                 balanced_bootstrap=n_classes != 3,
                                 random_state=0).fit(frame, y)
    test, _ = decision_frame(120, n_classes, seed=7)
    rows = pd.concat([test, frame], ignore_index=True)
    rows["colour"] = pd.Categorical(rows["colour"], categories=frame["colour"].cat.categories)
    return forest, y, rows


def cost_matrix(n_classes):
    rng = np.random.default_rng(n_classes)
    costs = rng.integers(1, 5, size=(n_classes, n_classes)).astype(float)
    np.fill_diagonal(costs, 0.0)
    return costs


RULES = [(2, "rfq"), (2, "argmax"), (2, 0.35), (2, "cost"),
         (3, "rfq"), (3, "argmax"), (3, "cost"),
         (12, "rfq"), (12, "argmax"), (12, "cost")]


def models(n_classes, decision, method):
    """A calibrated model and a conformal predictor (not smoothed) around one
    fitted forest with ``decision``, its labels and the rows to predict."""
    forest, y, rows = fitted_forest(n_classes)
    forest = copy.deepcopy(forest)
    forest.set_params(decision=cost_matrix(n_classes) if decision == "cost" else decision)
    calibrated = OOBCalibratedClassifier(forest, method=method).calibrate(y)
    conformal = MondrianConformalClassifier(forest, smoothing=False).calibrate(y)
    return calibrated, conformal, rows


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n_classes, decision", RULES)
def test_calibrated_probabilities_labels_p_values_and_sets(n_classes, decision, method):
    calibrated, conformal, rows = models(n_classes, decision, method)
    model = to_onnx(calibrated, sets=conformal, alpha=ALPHA)
    X = frame_codes(calibrated.estimator_, rows)
    proba, labels = calibrated.predict_proba(rows), calibrated.predict(rows)
    forest_proba = calibrated.estimator_.predict_proba(rows)
    p_values = conformal.p_values(rows)
    # the rows tie with calibration scores: exactly equal scores, not nearby ones
    a = 1.0 - forest_proba
    assert sum(np.isin(a[:, k], s).sum() for k, s in enumerate(conformal.calibration_scores_)) > 10
    if method == "venn_abers":
        scores = calibrated.corrected_proba(rows)
        columns = [1] if n_classes == 2 else range(n_classes)
        assert sum(np.isin(scores[:, k], m.scores_).sum()
                   for k, m in zip(columns, calibrated.calibrators_)) > 10
    for threads in (1, 4):  # on any number of threads: each tree a target of its own
        out = session_outputs(model, X, threads, extra=["forest_proba"])
        np.testing.assert_array_equal(out["forest_proba"], forest_proba)
        if method == "sigmoid":  # onnxruntime's exp is not the C library's in the last bit
            np.testing.assert_allclose(out["probabilities"], proba, rtol=0, atol=ATOL)
        else:
            np.testing.assert_array_equal(out["probabilities"], proba)
        np.testing.assert_array_equal(out["label"], labels)
        np.testing.assert_array_equal(out["p_values"], p_values)
        np.testing.assert_array_equal(out["set"], conformal.predict_set(rows, ALPHA))


@pytest.mark.parametrize("n_classes", [2, 3, 12])
def test_conformal_predictor_alone(n_classes):
    """The forest's own label and probabilities, with the sets at alpha."""
    _, conformal, rows = models(n_classes, "rfq", "isotonic")
    X = frame_codes(conformal.estimator_, rows)
    for alpha in (0.05, 0.3):
        model = to_onnx(conformal, alpha=alpha)
        assert [o.name for o in model.graph.output] == ["label", "probabilities", "p_values",
                                                        "set"]
        out = session_outputs(model, X)
        np.testing.assert_array_equal(out["label"], conformal.predict(rows))
        np.testing.assert_allclose(out["probabilities"], conformal.predict_proba(rows),
                                   rtol=0, atol=ATOL)
        np.testing.assert_allclose(out["p_values"], conformal.p_values(rows), rtol=0, atol=ATOL)
        np.testing.assert_array_equal(out["set"], conformal.predict_set(rows, alpha))
        assert out["set"].dtype == bool and out["set"].any()
    assert not out["set"].all()  # at alpha 0.3 some labels are left out


def test_a_forest_with_sets_and_a_calibrated_model_without():
    calibrated, conformal, rows = models(3, "rfq", "venn_abers")
    X = frame_codes(calibrated.estimator_, rows)
    out = session_outputs(to_onnx(calibrated.estimator_, sets=conformal, alpha=ALPHA), X)
    np.testing.assert_array_equal(out["label"], conformal.predict(rows))
    np.testing.assert_array_equal(out["set"], conformal.predict_set(rows, ALPHA))
    model = to_onnx(calibrated)
    assert [o.name for o in model.graph.output] == ["label", "probabilities"]
    out = session_outputs(model, X)
    np.testing.assert_allclose(out["probabilities"], calibrated.predict_proba(rows), rtol=0,
                               atol=ATOL)
    np.testing.assert_array_equal(out["label"], calibrated.predict(rows))


def test_maps_at_their_edges():
    """Isotonic maps of one point (a constant) and scores on, between and beyond
    the map's points; a class without calibration cases (every p-value 1)."""
    X, y = make_data(200)
    forest = AUCForestClassifier(n_estimators=20, oob_score=True, random_state=0).fit(X, y)
    calibrated = OOBCalibratedClassifier(forest, method="isotonic").calibrate(y)
    isotonic = calibrated.calibrators_[0]
    rows = held_out(300)
    out = session_outputs(to_onnx(calibrated), rows)
    np.testing.assert_array_equal(out["probabilities"], calibrated.predict_proba(rows))
    isotonic.X_thresholds_, isotonic.y_thresholds_ = np.array([0.4]), np.array([0.3])
    out = session_outputs(to_onnx(calibrated), rows)
    np.testing.assert_array_equal(out["probabilities"], calibrated.predict_proba(rows))
    assert set(out["probabilities"][:, 1]) == {0.3}
    conformal = MondrianConformalClassifier(forest, smoothing=False).calibrate(y)
    conformal.calibration_scores_ = [conformal.calibration_scores_[0], np.array([])]
    out = session_outputs(to_onnx(conformal, alpha=0.5), rows)
    np.testing.assert_array_equal(out["p_values"][:, 1], 1.0)
    np.testing.assert_array_equal(out["p_values"], conformal.p_values(rows))


def test_row_sums_add_as_numpy_adds():
    """The graph's row sums (prior correction, normalisation) are numpy's
    ``sum(axis=1)`` to the bit, pairwise blocks and all, for any number of columns."""
    from aucforest.export._decision_graph import DecisionGraph
    from aucforest.export._exportable_decisions import ExportableDecisions

    forest, _, _ = fitted_forest(2)
    rng = np.random.default_rng(0)
    for n_columns in [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 64, 127, 128, 129, 200, 300, 1000]:
        graph = DecisionGraph(ExportableDecisions(forest, "test"), 18)
        total = graph.row_sum("V", n_columns)
        model = onnx.helper.make_model(
            onnx.helper.make_graph(graph.graph.nodes, "sum", [onnx.helper.make_tensor_value_info(
                "V", onnx.TensorProto.DOUBLE, [None, n_columns])],
                [onnx.helper.make_tensor_value_info(total, onnx.TensorProto.DOUBLE, None)]),
            opset_imports=[onnx.helper.make_opsetid("", 18)])
        values = rng.random((50, n_columns)) * 10.0 ** rng.integers(-9, 3, (50, n_columns))
        session = onnxruntime.InferenceSession(model.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        (summed,) = session.run(None, {"V": values})
        np.testing.assert_array_equal(summed, values.sum(axis=1, keepdims=True))
        assert n_columns < 9 or not np.array_equal(summed[:, 0], np.cumsum(values, axis=1)[:, -1])


def test_metadata_name_the_maps_the_level_and_the_guarantee():
    calibrated, conformal, _ = models(3, "argmax", "sigmoid")
    model = to_onnx(calibrated, sets=conformal, alpha=0.2)
    metadata = {p.key: json.loads(p.value) for p in model.metadata_props
                if p.key != "aucforest_version"}
    classes = calibrated.classes_.tolist()
    assert metadata["calibration"]["method"] == "sigmoid"
    assert metadata["calibration"]["maps"] == [{"class": k, "method": "sigmoid"}
                                               for k in classes]
    assert metadata["calibration"]["class_prior"] == calibrated.class_prior_.tolist()
    assert metadata["conformal"]["alpha"] == 0.2
    assert "miss rate at most alpha" in metadata["conformal"]["guarantee"]
    assert "out-of-bag" in metadata["conformal"]["guarantee"]
    assert metadata["conformal"]["n_calibration"] == conformal.n_calibration_.tolist()
    assert list(metadata["outputs"]) == ["label", "probabilities", "p_values", "set"]
    assert metadata["decision"] == "argmax" and metadata["classes"] == classes
    assert metadata["categories"][-1] == ["amber", "blue", "green", "red", "violet"]
    binary, _, _ = models(2, "rfq", "isotonic")
    maps = json.loads({p.key: p.value for p in to_onnx(binary).metadata_props}["calibration"])
    assert maps["maps"] == [{"class": binary.classes_.tolist()[1], "method": "isotonic"}]


def test_what_cannot_be_exported_is_refused():
    calibrated, conformal, _ = models(2, "rfq", "isotonic")
    with pytest.raises(ValueError, match=r"needs alpha|need their level alpha"):
        to_onnx(conformal)
    with pytest.raises(ValueError, match="need their level alpha"):
        to_onnx(calibrated, sets=conformal)
    with pytest.raises(ValueError, match="alpha is the level of prediction sets"):
        to_onnx(calibrated, alpha=0.1)
    for alpha in (0, 1, 1.5, True, "0.1"):
        with pytest.raises(ValueError, match=r"open interval \(0, 1\)"):
            to_onnx(conformal, alpha=alpha)
    with pytest.raises(ValueError, match="is one already"):
        to_onnx(conformal, sets=conformal, alpha=0.1)
    with pytest.raises(TypeError, match="sets must be a fitted MondrianConformalClassifier"):
        to_onnx(calibrated, sets=calibrated, alpha=0.1)
    smoothed = copy.deepcopy(conformal).set_params(smoothing=True)
    with pytest.raises(ValueError, match=r"smoothing=True.*set_params\(smoothing=False\)"):
        to_onnx(smoothed, alpha=0.1)
    _, other, _ = models(3, "rfq", "isotonic")
    with pytest.raises(ValueError, match="another forest"):
        to_onnx(calibrated, sets=other, alpha=0.1)
    # a copy of the same forest is the same forest
    same = MondrianConformalClassifier(copy.deepcopy(calibrated.estimator_),
                                       smoothing=False).calibrate(fitted_forest(2)[1])
    assert [o.name for o in to_onnx(calibrated, sets=same, alpha=0.1).graph.output][-1] == "set"
    X, y = make_data(150)
    sklearn_forest = RandomForestClassifier(30, oob_score=True, random_state=0).fit(
        np.nan_to_num(X), y)
    with pytest.raises(TypeError, match="around an AUCForestClassifier, not around "
                                        "RandomForestClassifier"):
        to_onnx(OOBCalibratedClassifier(sklearn_forest).calibrate(y))
    with pytest.raises(TypeError, match="not StandardScaler"):
        to_onnx(StandardScaler().fit(X))


# ------------------------------------------------------------------ skl2onnx

def test_skl2onnx_converts_the_calibrated_model_and_the_conformal_predictor():
    register_skl2onnx()
    X, y = make_data(300, 3)
    labels = np.array(["low", "mid", "high"])[y]
    X_test = held_out(200)
    calibrated = make_pipeline(StandardScaler(), OOBCalibratedClassifier(
        AUCForestClassifier(20, random_state=0), method="venn_abers")).fit(X, labels)
    out = session_outputs(skl2onnx.to_onnx(calibrated, X[:1]), X_test)
    np.testing.assert_allclose(out["probabilities"], calibrated.predict_proba(X_test), rtol=0,
                               atol=ATOL)
    np.testing.assert_array_equal(out["label"], calibrated.predict(X_test))
    conformal = MondrianConformalClassifier(AUCForestClassifier(20, random_state=0),
                                            smoothing=False).fit(X, labels)
    with pytest.raises(ValueError, match=r"options=\{id\(model\): \{'alpha': 0.1\}\}"):
        skl2onnx.to_onnx(conformal, X[:1])
    for options in ({id(conformal): {"alpha": 0.2}},
                    {MondrianConformalClassifier: {"alpha": 0.2}}):
        model = skl2onnx.to_onnx(conformal, X[:1], options=options)
        out = session_outputs(model, X_test)
        assert list(out) == ["label", "probabilities", "p_values", "set"]
        np.testing.assert_array_equal(out["label"], conformal.predict(X_test))
        np.testing.assert_allclose(out["p_values"], conformal.p_values(X_test), rtol=0,
                                   atol=ATOL)
        np.testing.assert_array_equal(out["set"], conformal.predict_set(X_test, 0.2))


# ------------------------------------------------------------------ command line

def test_command_exports_calibration_and_sets_as_predict_writes_them(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    training_csv(tmp_path / "train.csv")
    code, _, err = run_main(capsys, "fit", "train.csv", "--target", "y", "--output", "m.npz",
                            "--n-estimators", 25, "--calibrate", "venn_abers", "--quiet")
    assert code == 0, err
    code, out, err = run_main(capsys, "export", "m.npz", "m.onnx", "--sets", 0.1)
    assert code == 0, err
    assert "probabilities (calibrated, venn_abers; neg, pos)" in out
    assert "p_values" in out and "set (bool, p_values > 0.1" in out
    model = onnx.load(tmp_path / "m.onnx")
    metadata = {p.key: p.value for p in model.metadata_props}
    assert json.loads(metadata["conformal"])["alpha"] == 0.1
    test_csv = training_csv(tmp_path / "test.csv", n=150, seed=9)
    with open(test_csv) as stream:  # training rows too: scores tied with calibration scores
        test_rows = list(csv.reader(stream))
    with open(tmp_path / "train.csv") as stream:
        test_rows += list(csv.reader(stream))[1:]
    with open(tmp_path / "rows.csv", "w", newline="") as stream:
        csv.writer(stream).writerows(test_rows)
    header, rows = test_rows[0], test_rows[1:]
    columns = {name: [row[j] for row in rows] for j, name in enumerate(header) if name != "y"}
    X = ColumnEncoding.from_model_file(tmp_path / "m.npz").transform(columns)
    result = session_outputs(model, X)
    written = {}
    for option in ("--proba", None):
        code, _, err = run_main(capsys, "predict", "m.npz", "rows.csv", "--output", "p.csv",
                                "--sets", 0.1, *filter(None, [option]))
        assert code == 0, err
        with open(tmp_path / "p.csv") as stream:
            written[option] = list(csv.reader(stream))
    assert written["--proba"][0] == ["neg", "pos", "set"]
    np.testing.assert_allclose(result["probabilities"], np.array(
        [row[:2] for row in written["--proba"][1:]], dtype=float), rtol=0, atol=ATOL)
    assert result["label"].tolist() == [row[0] for row in written[None][1:]]
    cells = ["|".join(c for c, inside in zip(["neg", "pos"], row) if inside)
             for row in result["set"]]
    assert cells == [row[-1] for row in written[None][1:]]
    assert len(set(cells)) > 1


def test_command_sets_need_out_of_bag_predictions(tmp_path, capsys, monkeypatch):
    import aucforest

    monkeypatch.chdir(tmp_path)
    X, y = make_data(100)
    aucforest.save(AUCForestClassifier(n_estimators=5, random_state=0).fit(X, y), "m.npz")
    code, _, err = run_main(capsys, "export", "m.npz", "m.onnx", "--sets", 0.1)
    assert code == 1 and "--sets needs the out-of-bag predictions" in err
    assert not (tmp_path / "m.onnx").exists()
    code, out, err = run_main(capsys, "export", "m.npz", "m.onnx")
    assert code == 0 and "outputs label (rfq" in out and "p_values" not in out
