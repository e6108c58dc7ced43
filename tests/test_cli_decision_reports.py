"""What the command line reports about a model's decisions, through the real
command line on CSV files: ``evaluate``'s expected cost (beside RFQ's and
argmax's), calibration scores and conformal-set coverage, ``fit``'s
out-of-bag expected cost, and ``tune``. Every figure is checked against a
reference computed here, row by row, from ``aucforest predict`` output, from
scikit-learn, or from the Python API."""
import csv
import io
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import brier_score_loss, log_loss

import aucforest
from aucforest.decisions import tune_decision
from cli_files import run_main, write_csv

N_TREES = 30
PACKAGE_PARENT = os.path.dirname(os.path.dirname(aucforest.__file__))
COSTS_3 = np.array([[0.0, 1.0, 2.0], [4.0, 0.0, 1.0], [20.0, 8.0, 0.0]])
COSTS_2 = np.array([[0.0, 1.0], [10.0, 0.0]])
PNG_PANEL_WIDTH = 550  # pixels: 5.5 inches at 100 dpi per panel


def make_split(n_classes, seed=0):
    """Rounded features (as the CSV holds them), text labels, train/test halves."""
    weights = [0.6, 0.3] if n_classes == 3 else [0.85]
    X, y = make_classification(300, n_features=5, n_informative=3, n_redundant=0,
                               n_classes=n_classes, weights=weights, flip_y=0.05,
                               random_state=seed)
    labels = np.array(["common", "middle", "rare"][:n_classes] if n_classes == 3
                      else ["common", "rare"])
    X, y = np.round(X, 4), labels[y]
    return X[:180], y[:180], X[180:], y[180:]


def write_labelled(path, X, y):
    names = [f"x{j}" for j in range(X.shape[1])]
    return write_csv(path, [*names, "label"], [[*row, label] for row, label in
                                                zip(X.tolist(), y)])


def write_costs(path, costs, labels):
    return write_csv(path, ["true", *labels], [[label, *row] for label, row in
                                               zip(labels, costs.tolist())])


def read_rows(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def fit(capsys, train, model, *options):
    code, out, err = run_main(capsys, "fit", train, "--target", "label", "--output", model,
                              "--n-estimators", N_TREES, "--quiet", *options)
    assert code == 0, err
    return out


def predicted(capsys, model, data, *options):
    """``aucforest predict`` output: (header, rows)."""
    code, out, err = run_main(capsys, "predict", model, data, *options)
    assert code == 0, err
    return read_rows(out)


def predicted_proba(capsys, model, data):
    header, rows = predicted(capsys, model, data, "--proba")
    return header, np.array(rows, dtype=float)


# ------------------------------------------------------------ references, row by row

def rule_labels(proba, prior, rule):
    """Class index of each row under RFQ (argmax p_k / pi_k; two classes: the
    minority when p_min >= pi_min; ties to the rarer class) or argmax (ties to
    the lower index), scores within a relative 1e-12 tied, written out row by row."""
    n_classes = len(prior)
    order = sorted(range(n_classes), key=lambda k: (prior[k], k)) if rule == "rfq" \
        else list(range(n_classes))
    labels = []
    for row in proba:
        if rule == "rfq" and n_classes == 2:
            minority = order[0]
            labels.append(minority if row[minority] >= prior[minority] * (1 - 1e-12)
                          else 1 - minority)
            continue
        scores = [row[k] / prior[k] if rule == "rfq" else row[k] for k in range(n_classes)]
        best = max(scores)
        labels.append(next(k for k in order if scores[k] >= best - 1e-12 * abs(best)))
    return np.array(labels)


def naive_costs(truth, labels, costs, classes):
    """Mean of C[y_i, yhat_i] over all cases and over each true class's cases."""
    total, per_class = 0.0, {}
    for j, label in enumerate(classes):
        rows = [i for i in range(len(truth)) if truth[i] == j]
        if rows:
            per_class[label] = sum(costs[j, labels[i]] for i in rows) / len(rows)
        total += sum(costs[j, labels[i]] for i in rows)
    return total / len(truth), per_class


def naive_ece(truth, proba, n_bins=10):
    """Mean over the classes scored (the second of two; every present one of
    more) of sum_b n_b / n |share of the class - mean p| over bins of equal
    width ((a, b], the first [0, b])."""
    n_classes = proba.shape[1]
    scored = [1] if n_classes == 2 else sorted(set(truth.tolist()))
    errors = []
    for k in scored:
        error = 0.0
        for b in range(n_bins):
            low, high = b / n_bins, (b + 1) / n_bins
            members = [i for i, p in enumerate(proba[:, k])
                       if (low < p <= high) or (b == 0 and p == 0.0)]
            if members:
                share = np.mean([truth[i] == k for i in members])
                error += len(members) / len(truth) * abs(share - np.mean(proba[members, k]))
        errors.append(error)
    return float(np.mean(errors))


def png_width(path):
    with open(path, "rb") as stream:
        data = stream.read(24)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big")


def codes_of(labels, classes):
    return np.array([list(classes).index(label) for label in labels])


# ------------------------------------------------------------ evaluate: expected cost

@pytest.mark.parametrize("n_classes, balanced", [(3, False), (2, True)],
                         ids=["three_classes", "two_classes_balanced_bootstrap"])
def test_evaluate_gives_the_expected_cost_of_the_model_beside_rfq_and_argmax(
        capsys, tmp_path, n_classes, balanced):
    X_train, y_train, X_test, y_test = make_split(n_classes)
    classes = sorted(set(y_train))
    costs = COSTS_3 if n_classes == 3 else COSTS_2
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    test = write_labelled(tmp_path / "test.csv", X_test, y_test)
    cost_file = write_costs(tmp_path / "costs.csv", costs, classes)
    options = ["--balanced-bootstrap"] if balanced else []
    fit(capsys, train, tmp_path / "m.npz", "--decision", cost_file, *options)

    header, proba = predicted_proba(capsys, tmp_path / "m.npz", test)
    assert header == classes
    model_labels = codes_of([row[0] for row in predicted(capsys, tmp_path / "m.npz", test)[1]],
                            classes)
    prior = (np.full(n_classes, 1 / n_classes) if balanced
             else np.array([np.mean(y_train == c) for c in classes]))
    truth = codes_of(y_test, classes)
    rfq, argmax = rule_labels(proba, prior, "rfq"), rule_labels(proba, prior, "argmax")
    assert (model_labels != rfq).any() and (model_labels != argmax).any()  # a real comparison
    expected = {"model": naive_costs(truth, model_labels, costs, classes),
                "rfq": naive_costs(truth, rfq, costs, classes),
                "argmax": naive_costs(truth, argmax, costs, classes)}

    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label", "--json")
    assert code == 0, err
    result = json.loads(out)["expected_cost"]
    assert result["costs"] == costs.tolist() and result["costs_from"] == "model"
    assert result["cases"] == {c: int(np.sum(y_test == c)) for c in classes}
    for name, (overall, per_class) in expected.items():
        assert result[name]["overall"] == pytest.approx(overall, abs=1e-12)
        assert result[name]["per_class"] == pytest.approx(per_class, abs=1e-12)

    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label")
    assert code == 0, err
    assert "overall (cost matrix): recall" in out and "(given)" not in out
    overall_row = next(line for line in out.splitlines()
                       if line.split()[:2] == ["overall", str(len(y_test))])
    assert [float(cell) for cell in overall_row.split()[2:]] == pytest.approx(
        [expected[name][0] for name in ("model", "rfq", "argmax")], abs=5e-5)


def test_evaluate_costs_option_prices_any_rule(capsys, tmp_path):
    """--costs FILE prices an RFQ model's labels: its column is RFQ's."""
    X_train, y_train, X_test, y_test = make_split(3, seed=1)
    classes = sorted(set(y_train))
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    test = write_labelled(tmp_path / "test.csv", X_test, y_test)
    cost_file = write_costs(tmp_path / "costs.csv", COSTS_3, classes)
    fit(capsys, train, tmp_path / "m.npz")
    _, proba = predicted_proba(capsys, tmp_path / "m.npz", test)
    prior = np.array([np.mean(y_train == c) for c in classes])
    truth = codes_of(y_test, classes)
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label", "--costs", cost_file, "--json")
    assert code == 0, err
    result = json.loads(out)["expected_cost"]
    assert result["costs_from"] == str(cost_file)
    overall, per_class = naive_costs(truth, rule_labels(proba, prior, "rfq"), COSTS_3, classes)
    for name in ("model", "rfq"):
        assert result[name]["overall"] == pytest.approx(overall, abs=1e-12)
        assert result[name]["per_class"] == pytest.approx(per_class, abs=1e-12)
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label")
    assert json.loads(run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                               "label", "--json")[1])["expected_cost"] is None
    assert "expected cost" not in out  # no matrix, no cost


# ------------------------------------------------------------ fit: out-of-bag expected cost

def test_fit_prints_the_out_of_bag_expected_cost_of_a_cost_matrix(capsys, tmp_path):
    X_train, y_train, _, _ = make_split(3, seed=2)
    classes = sorted(set(y_train))
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    cost_file = write_costs(tmp_path / "costs.csv", COSTS_3, classes)
    summary = json.loads(fit(capsys, train, tmp_path / "m.npz", "--decision", cost_file,
                             "--json"))
    oob = aucforest.load(tmp_path / "m.npz").oob_decision_function_
    has_oob = ~np.isnan(oob).any(axis=1)
    oob, truth = oob[has_oob], codes_of(y_train[has_oob], classes)
    prior = np.array([np.mean(y_train == c) for c in classes])
    least_cost = np.argmin(oob @ COSTS_3, axis=1)  # brute force (no prior shift: plain draws)
    result = summary["oob_expected_cost"]
    for name, labels in (("model", least_cost), ("rfq", rule_labels(oob, prior, "rfq")),
                         ("argmax", rule_labels(oob, prior, "argmax"))):
        overall, per_class = naive_costs(truth, labels, COSTS_3, classes)
        assert result[name]["overall"] == pytest.approx(overall, abs=1e-12), name
        assert result[name]["per_class"] == pytest.approx(per_class, abs=1e-12), name

    out = fit(capsys, train, tmp_path / "m.npz", "--decision", cost_file)
    assert "expected cost per case out of bag under the cost matrix" in out
    overall_row = next(line for line in out.splitlines() if line.split()[:1] == ["overall"])
    assert float(overall_row.split()[2]) == pytest.approx(result["model"]["overall"], abs=5e-5)
    summary = json.loads(fit(capsys, train, tmp_path / "r.npz", "--json"))
    assert summary["oob_expected_cost"] is None
    assert "expected cost" not in fit(capsys, train, tmp_path / "r.npz")


# ------------------------------------------------------------ evaluate: calibration

@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("n_classes", [2, 3])
def test_evaluate_scores_the_calibration_of_a_calibrated_model(capsys, tmp_path, n_classes):
    pytest.importorskip("matplotlib")
    X_train, y_train, X_test, y_test = make_split(n_classes, seed=3)
    classes = sorted(set(y_train))
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    test = write_labelled(tmp_path / "test.csv", X_test, y_test)
    fit(capsys, train, tmp_path / "m.npz", "--calibrate", "isotonic")
    _, calibrated = predicted_proba(capsys, tmp_path / "m.npz", test)
    raw = aucforest.load(tmp_path / "m.npz").predict_proba(X_test)
    assert not np.allclose(raw, calibrated)
    truth = codes_of(y_test, classes)

    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label", "--json", "--plot", tmp_path / "plot.png")
    assert code == 0, err
    result = json.loads(out)["calibration"]
    assert result["method"] == "isotonic" and result["n_bins"] == 10
    for name, proba in (("calibrated", calibrated), ("uncalibrated", raw)):
        figures = result[name]
        assert figures["brier"] == pytest.approx(
            brier_score_loss(y_test, proba, labels=classes), rel=1e-12, abs=1e-15)
        assert figures["log_loss"] == pytest.approx(log_loss(y_test, proba, labels=classes),
                                                    rel=1e-12)
        assert figures["ece"] == pytest.approx(naive_ece(truth, proba), rel=1e-12, abs=1e-15)
    assert png_width(tmp_path / "plot.png") == 2 * PNG_PANEL_WIDTH  # ROC and reliability

    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label")
    assert code == 0, err
    line = next(line for line in out.splitlines() if "calibrated (isotonic):" in line)
    assert f"log loss {result['calibrated']['log_loss']:.4f}" in line
    assert "forest before calibration:" in out


def test_an_uncalibrated_model_gets_no_calibration_scores(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    X_train, y_train, X_test, y_test = make_split(2, seed=3)
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    test = write_labelled(tmp_path / "test.csv", X_test, y_test)
    fit(capsys, train, tmp_path / "m.npz")
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label", "--json", "--plot", tmp_path / "roc.png")
    assert code == 0, err
    assert json.loads(out)["calibration"] is None and json.loads(out)["sets"] is None
    assert png_width(tmp_path / "roc.png") == PNG_PANEL_WIDTH


# ------------------------------------------------------------ evaluate: conformal sets

def set_cells(capsys, model, data, alpha):
    header, rows = predicted(capsys, model, data, "--sets", alpha)
    return [row[header.index("set")].split("|") if row[header.index("set")] else []
            for row in rows]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_evaluate_sets_gives_each_class_coverage_and_set_size(capsys, tmp_path, n_classes):
    pytest.importorskip("matplotlib")
    X_train, y_train, X_test, y_test = make_split(n_classes, seed=4)
    classes = sorted(set(y_train))
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    test = write_labelled(tmp_path / "test.csv", X_test, y_test)
    fit(capsys, train, tmp_path / "m.npz")
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label", "--sets", 0.2, "--json", "--plot", tmp_path / "p.png")
    assert code == 0, err
    result = json.loads(out)["sets"]
    assert png_width(tmp_path / "p.png") == 2 * PNG_PANEL_WIDTH  # ROC and coverage

    cells = set_cells(capsys, tmp_path / "m.npz", test, 0.2)
    covered = [label in cell for cell, label in zip(cells, y_test)]
    sizes = [len(cell) for cell in cells]
    assert result["alpha"] == 0.2
    assert result["coverage"] == pytest.approx(np.mean(covered), abs=1e-12)
    assert result["mean_size"] == pytest.approx(np.mean(sizes), abs=1e-12)
    assert len(set(sizes)) > 1  # sets of different sizes: a real check
    for label in classes:
        rows = [i for i in range(len(y_test)) if y_test[i] == label]
        assert result["per_class"][label] == pytest.approx(
            {"cases": len(rows), "coverage": np.mean([covered[i] for i in rows]),
             "mean_size": np.mean([sizes[i] for i in rows])}, abs=1e-12)

    curve = result["curve"]
    assert curve["alpha"] == pytest.approx(np.arange(1, 51) / 100)
    for alpha in (0.05, 0.2, 0.5):  # the plotted curve at a few levels, against predict --sets
        a = curve["alpha"].index(alpha)
        cells = set_cells(capsys, tmp_path / "m.npz", test, alpha)
        for label in classes:
            rows = [i for i in range(len(y_test)) if y_test[i] == label]
            assert curve["coverage"][label][a] == pytest.approx(
                np.mean([label in cells[i] for i in rows]), abs=1e-12), (alpha, label)

    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label", "--sets", 0.2)
    assert code == 0, err
    assert "prediction sets at alpha 0.2" in out and "coverage of at least 0.8" in out
    row = next(line for line in out.splitlines() if line.split()[:1] == [classes[-1]]
               and len(line.split()) == 4)
    assert float(row.split()[2]) == pytest.approx(result["per_class"][classes[-1]]["coverage"],
                                                  abs=5e-5)


def test_evaluate_draws_every_panel_and_reports_everything(capsys, tmp_path):
    """A calibrated cost-matrix model with --sets: every section, one figure of
    three panels."""
    pytest.importorskip("matplotlib")
    X_train, y_train, X_test, y_test = make_split(3, seed=5)
    classes = sorted(set(y_train))
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    test = write_labelled(tmp_path / "test.csv", X_test, y_test)
    cost_file = write_costs(tmp_path / "costs.csv", COSTS_3, classes)
    fit(capsys, train, tmp_path / "m.npz", "--decision", cost_file, "--calibrate", "sigmoid")
    code, out, err = run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                              "label", "--sets", 0.1, "--plot", tmp_path / "all.png")
    assert code == 0, err
    for fragment in ("overall (cost matrix)", "expected cost per case on these cases",
                     "calibrated (sigmoid):", "prediction sets at alpha 0.1",
                     "ROC curves, reliability diagram and coverage against alpha saved to"):
        assert fragment in out
    assert png_width(tmp_path / "all.png") == 3 * PNG_PANEL_WIDTH
    # the cost of the model's labels: those predict gives, on calibrated probabilities
    labels = codes_of([row[0] for row in predicted(capsys, tmp_path / "m.npz", test)[1]],
                      classes)
    result = json.loads(run_main(capsys, "evaluate", tmp_path / "m.npz", test, "--target",
                                 "label", "--json")[1])
    overall, _ = naive_costs(codes_of(y_test, classes), labels, COSTS_3, classes)
    assert result["expected_cost"]["model"]["overall"] == pytest.approx(overall, abs=1e-12)


# ------------------------------------------------------------ tune

@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("n_classes, metric", [(2, "gmean"), (3, "expected_cost"),
                                               (2, "f1")])
def test_tune_writes_the_model_with_tune_decisions_rule(capsys, tmp_path, n_classes, metric):
    X_train, y_train, X_test, _ = make_split(n_classes, seed=6)
    classes = sorted(set(y_train))
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    test = write_labelled(tmp_path / "test.csv", X_test, np.array([classes[0]] * len(X_test)))
    fit(capsys, train, tmp_path / "m.npz")
    before = (tmp_path / "m.npz").read_bytes()
    costs = COSTS_3 if metric == "expected_cost" else None
    options = ["--costs", write_costs(tmp_path / "c.csv", costs, classes)] if costs is not None \
        else []
    code, out, err = run_main(capsys, "tune", tmp_path / "m.npz", "--output", tmp_path / "t.npz",
                              "--metric", metric, "--n-bootstrap", 200, "--json", *options)
    assert code == 0, err
    result = json.loads(out)
    assert (tmp_path / "m.npz").read_bytes() == before

    forest = aucforest.load(tmp_path / "m.npz")
    reference = tune_decision(forest, metric, cost_matrix=costs, n_bootstrap=200,
                              random_state=0)
    np.testing.assert_array_equal(np.asarray(result["decision"]), reference.decision)
    assert result["score"] == pytest.approx(reference.score, abs=1e-12)
    assert result["confidence_interval"] == pytest.approx(list(reference.confidence_interval),
                                                          abs=1e-12)
    # the model's own rule (rfq) on the same out-of-bag cases
    oob = forest.oob_decision_function_
    truth = codes_of(y_train, classes)
    prior = np.array([np.mean(y_train == c) for c in classes])
    rfq = rule_labels(oob, prior, "rfq")
    if metric == "gmean":
        recalls = [np.mean(rfq[truth == j] == j) for j in range(n_classes)]
        previous = float(np.prod(recalls) ** (1 / n_classes))
    elif metric == "f1":
        tp = np.sum((rfq == 1) & (truth == 1))
        previous = 2 * tp / (np.sum(rfq == 1) + np.sum(truth == 1))
    else:
        previous = naive_costs(truth, rfq, costs, classes)[0]
    assert result["previous"] == {"decision": "rfq",
                                  "score": pytest.approx(previous, abs=1e-12)}

    tuned = aucforest.io.read_model(tmp_path / "t.npz")
    assert tuned.extra["tuned"]["metric"] == metric
    assert tuned.extra["target"] == "label"  # the rest of the model file kept
    labels = [row[0] for row in predicted(capsys, tmp_path / "t.npz", test)[1]]
    expected = forest.set_params(decision=reference.decision).predict(X_test)
    assert labels == expected.tolist()
    _, proba = predicted_proba(capsys, tmp_path / "t.npz", test)
    if n_classes == 2:  # the threshold, by hand
        assert labels == np.where(proba[:, 1] >= reference.decision, classes[1],
                                  classes[0]).tolist()
    else:  # least expected cost under the tuned matrix, by hand (plain draws)
        assert labels == np.array(classes)[np.argmin(proba @ reference.decision,
                                                     axis=1)].tolist()

    code, out, err = run_main(capsys, "tune", tmp_path / "m.npz", "--output", tmp_path / "t.npz",
                              "--metric", metric, "--n-bootstrap", 200, *options)
    assert code == 0, err
    low, high = reference.confidence_interval
    assert "bootstrap interval of the" in out and f"[{low:.4f}, {high:.4f}]" in out
    assert f"chosen rule: {forest.decision_rule_.describe(forest.classes_)}" in out


def test_tune_may_replace_the_model_it_reads(capsys, tmp_path):
    X_train, y_train, _, _ = make_split(2, seed=7)
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    fit(capsys, train, tmp_path / "m.npz")
    reference = tune_decision(aucforest.load(tmp_path / "m.npz"), "balanced_accuracy",
                              n_bootstrap=100, random_state=3)
    code, out, err = run_main(capsys, "tune", tmp_path / "m.npz", "--output", tmp_path / "m.npz",
                              "--metric", "balanced_accuracy", "--n-bootstrap", 100, "--seed", 3)
    assert code == 0, err
    assert f"tuned model saved to {tmp_path / 'm.npz'}" in out
    assert aucforest.load(tmp_path / "m.npz").decision == reference.decision
    assert sorted(path.name for path in tmp_path.iterdir()) == ["m.npz", "train.csv"]


def python_runs_main(tmp_path):
    """A Python process running the command line's ``main``: it prints "ready"
    once imported, so a signal lands in the command, not in the imports."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    script = ("import sys\nfrom aucforest.cli import main\nprint('ready', flush=True)\n"
              "sys.exit(main(sys.argv[1:]))\n")
    return lambda *args: subprocess.Popen([sys.executable, "-c", script, *map(str, args)],
                                          cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)


def test_an_interrupted_tune_leaves_model_and_output_intact(capsys, tmp_path):
    """Ctrl-C while tuning a model into itself: the model is as it was, and so
    is an earlier tuned file; no temporary file is left."""
    X_train, y_train, _, _ = make_split(3, seed=8)  # bootstrap chunks of about a second
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    fit(capsys, train, tmp_path / "m.npz")
    fit(capsys, train, tmp_path / "t.npz", "--decision", "argmax")  # an earlier TUNED
    files = {name: (tmp_path / name).read_bytes() for name in ("m.npz", "t.npz")}
    process = python_runs_main(tmp_path)("tune", "m.npz", "--output", "m.npz",
                                         "--n-bootstrap", 10**7)
    try:
        assert process.stdout.readline() == "ready\n"
        time.sleep(1.0)  # reading the model takes milliseconds, the bootstrap minutes
        assert process.poll() is None
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130 and "aucforest: interrupted" in err, err
    assert {name: (tmp_path / name).read_bytes() for name in files} == files
    assert sorted(path.name for path in tmp_path.iterdir()) == ["m.npz", "t.npz", "train.csv"]


def test_a_failing_tune_leaves_model_and_output_intact(capsys, tmp_path):
    X_train, y_train, _, _ = make_split(2, seed=9)
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    fit(capsys, train, tmp_path / "m.npz")
    forest = aucforest.AUCForestClassifier(N_TREES, random_state=0).fit(X_train, y_train)
    aucforest.save(forest, tmp_path / "no_oob.npz")  # no out-of-bag predictions
    (tmp_path / "t.npz").write_bytes(b"an earlier file")
    files = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    bad_costs = write_csv(tmp_path / "bad.csv", ["true", "common", "other"],
                          [["common", 0, 1], ["other", 5, 0]])
    files["bad.csv"] = bad_costs.read_bytes()
    for args, fragment in [
        (["no_oob.npz", "--output", "t.npz"],
         "no_oob.npz has none (saved from Python without oob_score=True"),
        (["m.npz", "--output", "m.npz", "--metric", "expected_cost"],
         "--metric expected_cost needs a cost matrix: give --costs FILE"),
        (["m.npz", "--output", "t.npz", "--metric", "expected_cost", "--costs", "bad.csv"],
         "bad.csv: the header names class 'other', which the target does not have"),
        (["m.npz", "--output", "t.npz", "--costs", "bad.csv"],
         "--costs is the cost matrix of --metric expected_cost"),
    ]:
        code, out, err = run_main(capsys, "tune", *[tmp_path / a if a.endswith((".npz", ".csv"))
                                                    else a for a in args])
        assert code == 1 and out == "", (args, out)
        assert err.startswith("aucforest: error: ") and err.count("\n") == 1, err
        assert fragment in err, err
        assert args[-1] != "bad.csv" or err.startswith("aucforest: error: --costs ")
        assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == files


def test_tune_refuses_a_calibrated_model(capsys, tmp_path):
    X_train, y_train, _, _ = make_split(2, seed=10)
    train = write_labelled(tmp_path / "train.csv", X_train, y_train)
    fit(capsys, train, tmp_path / "m.npz", "--calibrate", "sigmoid")
    code, _, err = run_main(capsys, "tune", tmp_path / "m.npz", "--output", tmp_path / "t.npz")
    assert code == 1 and "was fitted with --calibrate sigmoid" in err
    assert not (tmp_path / "t.npz").exists()


@pytest.mark.parametrize("args, fragment", [
    (["tune", "m.npz", "--output", "t.npz", "--metric", "auc"],
     "argument --metric: invalid choice: 'auc'"),
    (["tune", "m.npz", "--output", "t.npz", "--confidence-level", "1"],
     "argument --confidence-level: must be a number strictly between 0 and 1"),
    (["tune", "m.npz", "--output", "t.npz", "--n-bootstrap", "0"],
     "argument --n-bootstrap: must be a positive integer"),
    (["tune", "m.npz", "--output", "t.npz", "--costs", "missing.csv"],
     "argument --costs: must be a CSV file of costs; no such file"),
    (["tune", "m.npz"], "the following arguments are required: --output"),
    (["evaluate", "m.npz", "d.csv", "--target", "y", "--sets", "1.5"],
     "argument --sets: must be a number strictly between 0 and 1"),
    (["evaluate", "m.npz", "d.csv", "--target", "y", "--sets", "0"],
     "argument --sets: must be a number strictly between 0 and 1"),
])
def test_bad_command_lines_are_one_line_usage_errors(capsys, tmp_path, args, fragment):
    with pytest.raises(SystemExit) as stop:
        run_main(capsys, *args)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("aucforest: error: ") and err.count("\n") == 1
    assert fragment in err


def test_evaluate_sets_need_the_models_out_of_bag_predictions(capsys, tmp_path):
    X_train, y_train, X_test, y_test = make_split(2, seed=11)
    test = write_labelled(tmp_path / "test.csv", X_test, y_test)
    forest = aucforest.AUCForestClassifier(N_TREES, random_state=0).fit(X_train, y_train)
    aucforest.save(forest, tmp_path / "python.npz")
    code, out, err = run_main(capsys, "evaluate", tmp_path / "python.npz", test, "--target",
                              "label", "--sets", 0.1)
    assert code == 1 and out == ""
    assert err.startswith("aucforest: error: --sets needs the out-of-bag predictions")
    assert err.count("\n") == 1
