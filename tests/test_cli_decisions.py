"""``aucforest fit --calibrate METHOD`` and ``aucforest predict --sets ALPHA``
through the real command line, against the Python estimators they stand for
(`OOBCalibratedClassifier`, `MondrianConformalClassifier(smoothing=False)`)
fitted on the same rows with the same forest."""
import csv
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

import aucforest
from aucforest import AUCForestClassifier
from aucforest.calibration import OOBCalibratedClassifier
from aucforest.conformal import MondrianConformalClassifier
from cli_files import run_main, write_csv

N_TREES = 30
PACKAGE_PARENT = os.path.dirname(os.path.dirname(aucforest.__file__))


def make_split(n_classes, weights, seed):
    """Rounded numeric features (as the CSV holds them), text labels, train/test halves."""
    X, y = make_classification(300, n_features=5, n_informative=3, n_redundant=0,
                               n_classes=n_classes, weights=weights, flip_y=0.03,
                               random_state=seed)
    X = np.round(X, 4)
    labels = np.array(["common", "middle", "rare"] if n_classes == 3 else ["common", "rare"])
    y = labels[y]
    return X[:200], y[:200], X[200:], y[200:]


def write_files(folder, X_train, y_train, X_test):
    names = [f"x{j}" for j in range(X_train.shape[1])]
    train = write_csv(folder / "train.csv", [*names, "label"],
                      [[*row, label] for row, label in zip(X_train.tolist(), y_train)])
    test = write_csv(folder / "test.csv", names, X_test.tolist())
    return train, test


def read_rows(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


@pytest.fixture(params=[(2, [0.85]), (3, [0.6, 0.33])], ids=["binary", "three_classes"])
def split(request):
    return make_split(*request.param, seed=0)


@pytest.mark.parametrize("method", ["isotonic", "sigmoid", "venn_abers"])
@pytest.mark.parametrize("balanced", [False, True], ids=["bootstrap", "balanced_bootstrap"])
def test_calibrate_predicts_as_oob_calibrated_classifier(capsys, tmp_path, split, method,
                                                         balanced):
    X_train, y_train, X_test, _ = split
    train, test = write_files(tmp_path, X_train, y_train, X_test)
    options = ["--balanced-bootstrap"] if balanced else []
    code, out, err = run_main(capsys, "fit", train, "--target", "label", "--output",
                              tmp_path / "m.npz", "--n-estimators", N_TREES, "--calibrate",
                              method, "--quiet", *options)
    assert code == 0, err
    assert f"probabilities calibrated ({method}) on the out-of-bag predictions" in out
    reference = OOBCalibratedClassifier(
        AUCForestClassifier(N_TREES, random_state=0, balanced_bootstrap=balanced),
        method=method).fit(X_train, y_train)

    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", test, "--proba")
    assert code == 0, err
    header, rows = read_rows(out)
    assert header == [str(c) for c in reference.classes_]
    expected = reference.predict_proba(X_test)
    np.testing.assert_allclose(np.array(rows, dtype=float), expected, rtol=0, atol=1e-12)
    assert not np.allclose(expected, reference.estimator_.predict_proba(X_test))  # calibrated

    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", test)
    assert code == 0, err
    labels = [row[0] for row in read_rows(out)[1]]
    assert labels == reference.predict(X_test).tolist()  # the RFQ rule, on calibrated p


@pytest.mark.parametrize("alpha", [0.1, 0.3])
def test_sets_are_the_mondrian_sets_of_the_oob_scores(capsys, tmp_path, split, alpha):
    X_train, y_train, X_test, _ = split
    train, test = write_files(tmp_path, X_train, y_train, X_test)
    code, _, err = run_main(capsys, "fit", train, "--target", "label", "--output",
                            tmp_path / "m.npz", "--n-estimators", N_TREES, "--quiet")
    assert code == 0, err
    conformal = MondrianConformalClassifier(AUCForestClassifier(N_TREES, random_state=0),
                                            smoothing=False).fit(X_train, y_train)
    expected = conformal.predict_set(X_test, alpha)
    expected_cells = ["|".join(conformal.classes_[row]) for row in expected]

    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", test, "--sets", alpha)
    assert code == 0, err
    header, rows = read_rows(out)
    assert header == ["label", "set"]
    assert [row[1] for row in rows] == expected_cells
    assert [row[0] for row in rows] == conformal.predict(X_test).tolist()
    assert len(set(expected_cells)) > 1  # sets of different sizes: a real check

    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", test, "--sets", alpha,
                              "--proba")
    header, rows = read_rows(out)
    assert header == [*conformal.classes_, "set"]
    np.testing.assert_allclose(np.array([row[:-1] for row in rows], dtype=float),
                               conformal.predict_proba(X_test), rtol=0, atol=1e-12)
    assert [row[-1] for row in rows] == expected_cells


def test_sets_cover_each_class_on_held_out_cases(capsys, tmp_path):
    """The guarantee, measured: at alpha=0.2 each class's held-out coverage is
    at least 0.8 less three binomial standard errors (the rare class included)."""
    X, y = make_classification(1200, n_features=5, n_informative=3, n_redundant=0,
                               weights=[0.85], flip_y=0.03, random_state=3)
    X, y = np.round(X, 4), np.array(["common", "rare"])[y]
    train, test = write_files(tmp_path, X[:600], y[:600], X[600:])
    assert run_main(capsys, "fit", train, "--target", "label", "--output", tmp_path / "m.npz",
                    "--n-estimators", 60, "--quiet")[0] == 0
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", test, "--sets", 0.2)
    assert code == 0, err
    cells = [row[1].split("|") for row in read_rows(out)[1]]
    for label in ("common", "rare"):
        covered = [label in cell for cell, truth in zip(cells, y[600:]) if truth == label]
        n = len(covered)
        assert np.mean(covered) >= 0.8 - 3 * np.sqrt(0.16 / n), (label, np.mean(covered), n)


def test_subprocess_fit_calibrate_then_predict_sets(tmp_path):
    X_train, y_train, X_test, _ = make_split(2, [0.85], seed=1)
    train, test = write_files(tmp_path, X_train, y_train, X_test)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "aucforest", *map(str, args)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    fitted = run("fit", train, "--target", "label", "--output", "m.npz", "--n-estimators",
                 N_TREES, "--calibrate", "sigmoid", "--json", "--quiet")
    assert fitted.returncode == 0, fitted.stderr
    assert json.loads(fitted.stdout)["calibrate"] == "sigmoid"
    assert aucforest.io.read_model(tmp_path / "m.npz").extra["calibrate"] == "sigmoid"
    predicted = run("predict", "m.npz", test, "--proba", "--sets", 0.1)
    assert predicted.returncode == 0, predicted.stderr
    header, rows = read_rows(predicted.stdout)
    reference = OOBCalibratedClassifier(AUCForestClassifier(N_TREES, random_state=0),
                                        method="sigmoid").fit(X_train, y_train)
    conformal = MondrianConformalClassifier(AUCForestClassifier(N_TREES, random_state=0),
                                            smoothing=False).fit(X_train, y_train)
    assert header == ["common", "rare", "set"]
    np.testing.assert_allclose(np.array([row[:2] for row in rows], dtype=float),
                               reference.predict_proba(X_test), rtol=0, atol=1e-12)
    assert [row[2] for row in rows] == ["|".join(conformal.classes_[s])
                                        for s in conformal.predict_set(X_test, 0.1)]


def test_calibrate_with_case_weights_fits_the_map_with_them(capsys, tmp_path):
    """The map is fitted once, at fit, with the weights, and stored: predict
    gives OOBCalibratedClassifier.fit(..., sample_weight=w)'s probabilities."""
    X_train, y_train, X_test, _ = make_split(2, [0.85], seed=4)
    weights = np.random.default_rng(0).choice([0.5, 1.0, 3.0], size=y_train.shape[0])
    names = [f"x{j}" for j in range(X_train.shape[1])]
    train = write_csv(tmp_path / "train.csv", [*names, "w", "label"],
                      [[*row, w, label] for row, w, label in zip(X_train.tolist(), weights,
                                                                 y_train)])
    test = write_csv(tmp_path / "test.csv", names, X_test.tolist())
    code, _, err = run_main(capsys, "fit", train, "--target", "label", "--output",
                            tmp_path / "m.npz", "--n-estimators", N_TREES, "--weight", "w",
                            "--calibrate", "isotonic", "--quiet")
    assert code == 0, err
    reference = OOBCalibratedClassifier(AUCForestClassifier(N_TREES, random_state=0),
                                        method="isotonic").fit(X_train, y_train, weights)
    unweighted = OOBCalibratedClassifier(AUCForestClassifier(N_TREES, random_state=0),
                                         method="isotonic").fit(X_train, y_train)
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", test, "--proba")
    assert code == 0, err
    proba = np.array(read_rows(out)[1], dtype=float)
    np.testing.assert_array_equal(proba, reference.predict_proba(X_test))
    assert not np.allclose(proba, unweighted.predict_proba(X_test))  # the weights mattered


def calibrated_file(capsys, tmp_path, split, method):
    X_train, y_train, X_test, _ = split
    train, test = write_files(tmp_path, X_train, y_train, X_test)
    code, _, err = run_main(capsys, "fit", train, "--target", "label", "--output",
                            tmp_path / "m.npz", "--n-estimators", N_TREES, "--calibrate",
                            method, "--quiet")
    assert code == 0, err
    reference = OOBCalibratedClassifier(AUCForestClassifier(N_TREES, random_state=0),
                                        method=method).fit(X_train, y_train)
    return tmp_path / "m.npz", test, reference


def stored_map_arrays(method, calibrator):
    """The numbers a fitted map consists of."""
    names = {"isotonic": ("X_thresholds_", "y_thresholds_"), "sigmoid": ("a_", "b_"),
             "venn_abers": ("scores_", "gap_bounds_", "tie_bounds_")}[method]
    return [np.asarray(getattr(calibrator, name), dtype=float) for name in names]


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("method", ["isotonic", "sigmoid", "venn_abers"])
def test_model_file_stores_the_fitted_map_and_predict_applies_it(capsys, tmp_path, split,
                                                                 method):
    """The file holds the maps OOBCalibratedClassifier fits, number for number;
    after the file's out-of-bag predictions are altered, predict still gives
    the stored map's probabilities (it fits nothing), while a file without the
    stored map (as written before they were stored) is calibrated again on the
    altered predictions and predicts otherwise."""
    from aucforest._calibration_state import calibration_from_plain
    from aucforest.cli._from_oob import calibrated_model

    model, test, reference = calibrated_file(capsys, tmp_path, split, method)
    X_test = split[2]
    forest, extra = aucforest.io.read_model(model)
    loaded = calibrated_model(forest, method, model, extra["calibration"])
    assert len(loaded.calibrators_) == len(reference.calibrators_)
    for theirs, ours in zip(reference.calibrators_, loaded.calibrators_):
        for expected, stored in zip(stored_map_arrays(method, theirs),
                                    stored_map_arrays(method, ours)):
            np.testing.assert_array_equal(stored, expected)
    np.testing.assert_array_equal(loaded.class_prior_, reference.class_prior_)
    expected = reference.predict_proba(X_test)
    np.testing.assert_array_equal(loaded.predict_proba(X_test), expected)

    rng = np.random.default_rng(0)
    forest.oob_decision_function_ = rng.dirichlet(np.ones(len(forest.classes_)),
                                                  size=forest.oob_decision_function_.shape[0])
    aucforest.save(forest, tmp_path / "altered.npz", extra=extra)
    code, out, err = run_main(capsys, "predict", tmp_path / "altered.npz", test, "--proba")
    assert code == 0, err
    np.testing.assert_array_equal(np.array(read_rows(out)[1], dtype=float), expected)
    assert calibration_from_plain(forest, extra["calibration"]).method == method

    old = {key: value for key, value in extra.items() if key != "calibration"}
    aucforest.save(forest, tmp_path / "old.npz", extra=old)
    code, out, err = run_main(capsys, "predict", tmp_path / "old.npz", test, "--proba")
    assert code == 0, err
    refitted = np.array(read_rows(out)[1], dtype=float)
    assert not np.allclose(refitted, expected)
    np.testing.assert_allclose(refitted, calibrated_model(forest, method, "old.npz")
                               .predict_proba(X_test), rtol=0, atol=1e-12)


def test_a_file_written_before_the_map_was_stored_is_calibrated_again(capsys, tmp_path):
    split = make_split(2, [0.85], seed=0)
    model, test, reference = calibrated_file(capsys, tmp_path, split, "venn_abers")
    forest, extra = aucforest.io.read_model(model)
    del extra["calibration"]
    aucforest.save(forest, model, extra=extra)
    code, out, err = run_main(capsys, "predict", model, test, "--proba")
    assert code == 0, err
    np.testing.assert_allclose(np.array(read_rows(out)[1], dtype=float),
                               reference.predict_proba(split[2]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("change, fragment", [
    (lambda c: c.update(method="beta"), "the stored calibration map is 'beta'"),
    (lambda c: c.update(method="sigmoid"), "the stored calibration map is 'sigmoid'"),
    (lambda c: c["maps"].append(c["maps"][0]), "must hold 1 maps for 2 classes"),
    (lambda c: c["maps"][0]["y"].reverse(), "y must not decrease"),
    (lambda c: c["maps"][0]["x"].__setitem__(0, "0.1"), "'x' must hold numbers only"),
    (lambda c: c["class_prior"].append(0.0), "'class_prior' has shape (3,), expected (2,)"),
    (lambda c: c.pop("draw_class_weights"), "has no 'draw_class_weights'"),
])
def test_a_damaged_stored_map_is_refused_naming_the_file(capsys, tmp_path, change, fragment):
    split = make_split(2, [0.85], seed=0)
    model, test, _ = calibrated_file(capsys, tmp_path, split, "isotonic")
    forest, extra = aucforest.io.read_model(model)
    change(extra["calibration"])
    aucforest.save(forest, tmp_path / "bad.npz", extra=extra)
    code, out, err = run_main(capsys, "predict", tmp_path / "bad.npz", test)
    assert code == 1 and out == ""
    assert "bad.npz: " in err and fragment in err


@pytest.mark.parametrize("args, fragment", [
    (["--sets", "1.5"], "argument --sets: must be a number strictly between 0 and 1"),
    (["--sets", "0"], "argument --sets: must be a number strictly between 0 and 1"),
    (["--sets", "a"], "argument --sets: must be a number strictly between 0 and 1"),
])
def test_bad_alpha_is_refused(capsys, tmp_path, args, fragment):
    X_train, y_train, X_test, _ = make_split(2, [0.85], seed=0)
    _, test = write_files(tmp_path, X_train, y_train, X_test)
    with pytest.raises(SystemExit) as stop:
        run_main(capsys, "predict", tmp_path / "m.npz", test, *args)
    assert stop.value.code == 2
    assert fragment in capsys.readouterr().err


def test_bad_calibration_method_is_refused(capsys, tmp_path):
    with pytest.raises(SystemExit):
        run_main(capsys, "fit", tmp_path / "a.csv", "--target", "y", "--output",
                 tmp_path / "m.npz", "--calibrate", "beta")
    assert "argument --calibrate: invalid choice: 'beta'" in capsys.readouterr().err


def test_sets_need_the_models_out_of_bag_predictions(capsys, tmp_path):
    X_train, y_train, X_test, _ = make_split(2, [0.85], seed=0)
    _, test = write_files(tmp_path, X_train, y_train, X_test)
    forest = AUCForestClassifier(N_TREES, random_state=0).fit(X_train, y_train)  # no OOB
    aucforest.save(forest, tmp_path / "python.npz")
    code, out, err = run_main(capsys, "predict", tmp_path / "python.npz", test, "--sets", 0.1)
    assert code == 1 and out == ""
    assert "--sets needs the out-of-bag predictions" in err and "python.npz" in err


def test_unknown_calibration_method_in_a_model_file_is_refused(capsys, tmp_path):
    X_train, y_train, X_test, _ = make_split(2, [0.85], seed=0)
    _, test = write_files(tmp_path, X_train, y_train, X_test)
    forest = AUCForestClassifier(N_TREES, oob_score=True, random_state=0).fit(X_train, y_train)
    aucforest.save(forest, tmp_path / "odd.npz", extra={"calibrate": "beta"})
    code, out, err = run_main(capsys, "predict", tmp_path / "odd.npz", test)
    assert code == 1 and out == ""
    assert "odd.npz: unknown calibration method 'beta'" in err


def test_a_label_holding_the_set_separator_is_refused(capsys, tmp_path):
    X_train, y_train, X_test, _ = make_split(2, [0.85], seed=0)
    y_train = np.where(y_train == "rare", "rare|odd", y_train)
    train, test = write_files(tmp_path, X_train, y_train, X_test)
    assert run_main(capsys, "fit", train, "--target", "label", "--output", tmp_path / "m.npz",
                    "--n-estimators", N_TREES, "--quiet")[0] == 0
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", test, "--sets", 0.1)
    assert code == 1 and out == ""
    assert "the class label 'rare|odd'" in err


@pytest.mark.parametrize("balanced", [False, True], ids=["bootstrap", "balanced_bootstrap"])
def test_evaluate_reports_the_calibrated_model_as_predict_gives_it(capsys, tmp_path, split,
                                                                   balanced):
    """Brier score, G-mean and recalls of the calibrated probabilities under RFQ
    with the training priors, as imbalance_report computes them in Python."""
    from aucforest.metrics import imbalance_report
    X_train, y_train, X_test, y_test = split
    train, _ = write_files(tmp_path, X_train, y_train, X_test)
    names = [f"x{j}" for j in range(X_test.shape[1])]
    test = write_csv(tmp_path / "labelled.csv", [*names, "label"],
                     [[*row, label] for row, label in zip(X_test.tolist(), y_test)])
    options = ["--balanced-bootstrap"] if balanced else []
    assert run_main(capsys, "fit", train, "--target", "label", "--output", tmp_path / "m.npz",
                    "--n-estimators", N_TREES, "--calibrate", "isotonic", "--quiet",
                    *options)[0] == 0
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label", "--json")
    assert code == 0, err
    result = json.loads(out)
    reference = OOBCalibratedClassifier(
        AUCForestClassifier(N_TREES, random_state=0, balanced_bootstrap=balanced),
        method="isotonic").fit(X_train, y_train)
    proba = reference.predict_proba(X_test)
    expected = imbalance_report(y_test, proba, reference.classes_, decision="rfq",
                                priors=reference.class_prior_)
    assert result["calibrate"] == "isotonic"
    for name in ("brier", "gmean", "balanced_accuracy"):
        assert result["report"][name] == pytest.approx(float(getattr(expected, name)), abs=1e-12)
    assert result["report"]["recall"] == pytest.approx(np.asarray(expected.recall).tolist(),
                                                       abs=1e-12)


def test_calibrate_keeps_a_cost_matrix_or_threshold_decision(capsys, tmp_path):
    """--decision FILE (three classes) and a threshold (two) are applied to the
    calibrated probabilities, as OOBCalibratedClassifier.predict applies them."""
    X_train, y_train, X_test, _ = make_split(3, [0.6, 0.33], seed=2)
    train, test = write_files(tmp_path, X_train, y_train, X_test)
    costs = np.array([[0, 1, 2], [4, 0, 1], [20, 8, 0]])
    cost_file = write_csv(tmp_path / "costs.csv", ["true", "common", "middle", "rare"],
                          [[label, *row] for label, row in zip(["common", "middle", "rare"],
                                                               costs.tolist())])
    assert run_main(capsys, "fit", train, "--target", "label", "--output", tmp_path / "m.npz",
                    "--n-estimators", N_TREES, "--calibrate", "isotonic", "--decision",
                    cost_file, "--quiet")[0] == 0
    code, out, err = run_main(capsys, "predict", tmp_path / "m.npz", test)
    assert code == 0, err
    reference = OOBCalibratedClassifier(
        AUCForestClassifier(N_TREES, random_state=0, decision=costs),
        method="isotonic").fit(X_train, y_train)
    expected = reference.predict(X_test)
    assert [row[0] for row in read_rows(out)[1]] == expected.tolist()
    proba = reference.predict_proba(X_test)
    least_cost = reference.classes_[np.argmin(proba @ costs, axis=1)]  # brute force
    assert np.array_equal(expected, least_cost)

    X_train, y_train, X_test, _ = make_split(2, [0.85], seed=2)
    train, test = write_files(tmp_path, X_train, y_train, X_test)
    assert run_main(capsys, "fit", train, "--target", "label", "--output", tmp_path / "t.npz",
                    "--n-estimators", N_TREES, "--calibrate", "sigmoid", "--decision", 0.3,
                    "--quiet")[0] == 0
    code, out, err = run_main(capsys, "predict", tmp_path / "t.npz", test)
    assert code == 0, err
    reference = OOBCalibratedClassifier(
        AUCForestClassifier(N_TREES, random_state=0, decision=0.3),
        method="sigmoid").fit(X_train, y_train)
    p_rare = reference.predict_proba(X_test)[:, 1]
    assert [row[0] for row in read_rows(out)[1]] == np.where(p_rare >= 0.3, "rare",
                                                             "common").tolist()
