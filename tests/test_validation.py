"""Bad input gets a clear exception that names the problem."""
import re
import subprocess
import sys

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from aucforest import AUCForestClassifier, AUCTreeClassifier
from aucforest.cli import main
from package_env import package_env

rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
y = np.arange(40) % 2

ESTIMATORS = [AUCTreeClassifier, lambda **kw: AUCForestClassifier(n_estimators=3, **kw)]


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("X_bad, y_bad, weight, message", [
    (np.where(X > 1, np.inf, X), y, None, "infinity"),
    (np.full((40, 3), 1e39), y, None, "too large"),
    (X, np.zeros(40), None, "one class"),
    (X, y[:-1], None, "inconsistent numbers of samples"),
    (X, y, -np.ones(40), "Negative values"),
    (X, y, np.zeros(40), "non-zero|zero for every sample"),
    (X, y, np.full(40, np.nan), "NaN"),
    (X, np.linspace(0, 1, 40), None, "Unknown label type"),
    (X[:, 0], y, None, "2D array"),
    (np.empty((0, 3)), np.empty(0), None, "0 sample"),
    (np.array([["a", "b", "c"]] * 40), y, None, "could not convert"),
])
def test_bad_fit_input(make, X_bad, y_bad, weight, message):
    with pytest.raises(ValueError, match=message):
        make().fit(X_bad, y_bad, sample_weight=weight)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_nan_in_y_raises(make):
    with pytest.raises(ValueError, match="NaN"):
        make().fit(X, np.where(y == 1, np.nan, 0.0))


@pytest.mark.parametrize("params, message", [
    (dict(criterion="mse"), "criterion"),
    (dict(max_features=0), "max_features"),
    (dict(max_features=1.5), "max_features"),
    (dict(max_features="all"), "max_features"),
    (dict(max_depth=0), "max_depth"),
    (dict(min_samples_leaf=0), "min_samples_leaf"),
    (dict(min_weight_fraction_leaf=0.7), "min_weight_fraction_leaf"),
    (dict(n_estimators=0), "n_estimators"),
    (dict(decision="median"), "decision"),
    (dict(decision=1.0), "decision"),
    (dict(class_weight="even"), "class_weight"),
    (dict(max_samples=0), "max_samples"),
    (dict(bootstrap=False, max_samples=10), "max_samples"),
    (dict(bootstrap=False, oob_score=True), "bootstrap=True"),
    (dict(bootstrap=False, balanced_bootstrap=True), "bootstrap=True"),
])
def test_invalid_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        AUCForestClassifier(n_estimators=params.pop("n_estimators", 3), **params).fit(X, y)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_predict_checks(make):
    with pytest.raises(NotFittedError):
        make().predict(X)
    model = make().fit(X, y)
    with pytest.raises(ValueError, match="3 features"):
        model.predict_proba(X[:, :2])
    with pytest.raises(ValueError, match="infinity"):
        model.predict(np.full((2, 3), np.inf))
    with pytest.raises(ValueError, match="infinity"):
        model.apply(np.full((2, 3), -np.inf))


@pytest.mark.parametrize("params, name", [
    (dict(n_estimators=True), "n_estimators"),
    (dict(max_depth=True), "max_depth"),
    (dict(min_samples_leaf=True), "min_samples_leaf"),
    (dict(max_features=True), "max_features"),
    (dict(max_samples=True), "max_samples"),
])
def test_booleans_are_not_counts(params, name):
    with pytest.raises(ValueError, match=f"{name}.*boolean"):
        AUCForestClassifier(**{"n_estimators": 3, **params}).fit(X, y)


@pytest.mark.parametrize("params", [dict(max_depth=2**63), dict(min_samples_leaf=2**63),
                                    dict(max_depth=2**200)])
def test_huge_integer_bounds_mean_unbounded(params):
    # max_depth beyond any index is unbounded; a leaf bound beyond n forbids every split
    forest = AUCForestClassifier(3, random_state=0, **params).fit(X, y)
    expected = AUCForestClassifier(3, random_state=0,
                                   **{k: (None if k == "max_depth" else 40)
                                      for k in params}).fit(X, y)
    np.testing.assert_array_equal(forest.predict_proba(X), expected.predict_proba(X))


@pytest.mark.parametrize("class_weight, message", [
    ({0: -1.0, 1: 1.0}, r"class_weight\[0\].*>= 0"),
    ({0: np.nan, 1: 1.0}, r"class_weight\[0\].*finite"),
    ({0: 1.0, 1: np.inf}, r"class_weight\[1\].*finite"),
    ({0: "heavy", 1: 1.0}, r"class_weight\[0\].*number"),
    ({0: 0.0, 1: 0.0}, "zero for every class"),
])
def test_bad_class_weights(class_weight, message):
    with pytest.raises(ValueError, match=message):
        AUCForestClassifier(3, class_weight=class_weight).fit(X, y)


def test_threshold_decision_on_three_classes_is_refused_at_predict():
    y3 = np.arange(40) % 3
    forest = AUCForestClassifier(3, random_state=0).fit(X, y3)
    forest.set_params(decision=0.3)
    with pytest.raises(ValueError, match="two classes"):
        forest.predict(X)


# issue 44 case 6: set_params after fit skips the fit's parameter validation, and
# predict applied any decision: "foo" failed in a numpy comparison, 1.5 predicted
BAD_DECISIONS = ["foo", "RFQ", 1.5, 1.0, 0.0, -0.2, np.nan, True, None, [0.5]]


@pytest.mark.parametrize("decision", BAD_DECISIONS, ids=repr)
def test_an_invalid_decision_is_refused_at_fit_and_at_predict(decision):
    with pytest.raises(ValueError, match="'decision' parameter"):
        AUCForestClassifier(3, decision=decision, random_state=0).fit(X, y)
    forest = AUCForestClassifier(10, oob_score=True, random_state=0).fit(X, y)
    forest.set_params(decision=decision)
    proba = forest.predict_proba(X)
    for use, rows in ((forest.predict, X), (forest._decide, proba)):
        with pytest.raises(ValueError, match=r"'decision' parameter .*'rfq', 'argmax', a "
                                             r"float threshold in \(0, 1\)"):
            use(rows)
    with pytest.raises(ValueError, match="'decision' parameter"):
        forest.oob_gmean_


@pytest.mark.parametrize("decision", ["rfq", "argmax", 0.3, np.float32(0.7), np.float64(0.5)],
                         ids=repr)
def test_valid_decisions_after_fit_predict_as_at_fit(decision):
    # predict_min_samples fixed: "oob" chooses the node size under the fit's decision
    forest = AUCForestClassifier(3, predict_min_samples=1, random_state=0).fit(X, y)
    proba = forest.predict_proba(X)
    expected = AUCForestClassifier(3, predict_min_samples=1, decision=decision,
                                   random_state=0).fit(X, y).predict(X)
    np.testing.assert_array_equal(forest.set_params(decision=decision).predict(X), expected)
    if not isinstance(decision, str):
        np.testing.assert_array_equal(expected, forest.classes_[(proba[:, 1] >= decision)
                                                               .astype(int)])


def test_error_messages_show_plain_values():
    with pytest.raises(ValueError) as error:
        AUCForestClassifier(3).fit(X, np.zeros(40, dtype=np.int64))
    assert "np." not in str(error.value)


# ------------------------------------------------ parameters bounded as the kernel uses them
# (issue 30: an impossible value is a parameter error naming it, before any allocation)

INT32_MAX = 2**31 - 1


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("nsplit", [INT32_MAX + 1, 10**20])
def test_nsplit_beyond_int32_is_a_parameter_error(make, nsplit):
    with pytest.raises(ValueError, match=r"'nsplit' parameter .* range \[1, 2147483647\]"):
        make(nsplit=nsplit).fit(X, y)


@pytest.mark.parametrize("params, name", [
    (dict(predict_min_samples=2**31, oob_score=True), "predict_min_samples"),
    (dict(predict_min_samples=10**20), "predict_min_samples"),
    (dict(n_estimators=2**31), "n_estimators"),  # one seed per tree would be 16 GiB
    (dict(n_estimators=10**20), "n_estimators"),
    (dict(max_samples=10**20, replacement=True), "max_samples"),
])
def test_counts_beyond_the_kernels_types_are_parameter_errors(params, name):
    with pytest.raises(ValueError, match=f"'{name}' parameter of AUCForestClassifier must be"):
        AUCForestClassifier(**{"n_estimators": 3, **params}).fit(X, y)


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("max_leaf_nodes", [2**30 + 1, INT32_MAX, 2**63 - 1, 2**65])
def test_max_leaf_nodes_beyond_int32_node_indices_is_a_parameter_error(make, max_leaf_nodes):
    """Issue 44 case 5b: scikit-learn's test_huge_allocations expects an error where
    the fit accepted any bound; a tree holds at most 2**31 - 1 nodes (int32)."""
    with pytest.raises(ValueError, match=r"'max_leaf_nodes' parameter .* range "
                                         r"\[2, 1073741824\]"):
        make(max_leaf_nodes=max_leaf_nodes).fit(X, y)


def test_the_largest_max_leaf_nodes_grows_the_depth_first_tree():
    unbounded = AUCTreeClassifier(random_state=0).fit(X, y)
    largest = AUCTreeClassifier(max_leaf_nodes=2**30, random_state=0).fit(X, y)
    np.testing.assert_array_equal(largest.tree_.threshold, unbounded.tree_.threshold)
    np.testing.assert_array_equal(largest.predict_proba(X), unbounded.predict_proba(X))


def test_the_largest_int32_node_size_is_accepted_and_means_the_root():
    forest = AUCForestClassifier(3, predict_min_samples=INT32_MAX, oob_score=True,
                                 random_state=0).fit(X, y)
    proba = forest.predict_proba(X)
    np.testing.assert_allclose(proba, proba[:1].repeat(len(X), axis=0))  # every row: the root


@pytest.mark.parametrize("params", [dict(max_samples=10**12, replacement=True),
                                    dict(max_samples=10**12, replacement=True,
                                         balanced_bootstrap=True)])
def test_a_draw_no_sample_can_hold_names_max_samples_and_its_memory(params):
    with pytest.raises(ValueError, match=r"max_samples=1000000000000 would draw 1000000000000 "
                                         r"cases .*\(7\.28 TiB of indices per tree\); it may be "
                                         r"at most 100 times the 40 training cases, 4000"):
        AUCForestClassifier(3, **params).fit(X, y)


def test_max_samples_up_to_100_times_n_is_drawn_with_replacement():
    forest = AUCForestClassifier(3, max_samples=4000, replacement=True, random_state=0).fit(X, y)
    assert [draw.size for draw in forest.estimators_samples_] == [4000] * 3
    with pytest.raises(ValueError, match="at most 100 times the 40 training cases, 4000"):
        AUCForestClassifier(3, max_samples=4001, replacement=True).fit(X, y)


@pytest.mark.parametrize("name", ["predict_min_samples", "n_jobs"])
def test_booleans_are_not_node_sizes_or_thread_counts(name):
    with pytest.raises(ValueError, match=f"{name}.*boolean"):
        AUCForestClassifier(3, **{name: True}).fit(X, y)


THREADS_UNDER_A_MEMORY_LIMIT = """
import resource, sys
import numpy as np
from aucforest import AUCForestClassifier

with open("/proc/self/status") as status:  # the address space in use after the imports
    used = next(int(line.split()[1]) for line in status if line.startswith("VmSize")) * 1024
limit = used + (300 << 20)  # room for 20 more threads of 8 MiB stacks, not for 1,000
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
X, y = np.random.default_rng(0).normal(size=(60, 3)), np.arange(60) % 2
try:
    AUCForestClassifier(4, n_jobs=1000).fit(X, y)
except ValueError as error:
    print(error)
print(AUCForestClassifier(4, n_jobs=2, random_state=0).fit(X, y).n_estimators)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_threads_that_cannot_start_are_a_clear_n_jobs_error(tmp_path):
    result = subprocess.run([sys.executable, "-c", THREADS_UNDER_A_MEMORY_LIMIT], cwd=tmp_path,
                            env=package_env(), capture_output=True, text=True, timeout=300)
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and len(lines) == 2, result.stderr
    assert re.fullmatch(r"n_jobs=1000 needs 1000 threads, but this process could start only "
                        r"\d+ \(can't start new thread\): it runs under a memory or thread "
                        r"limit; use a smaller n_jobs", lines[0]), lines[0]
    assert lines[1] == "4"  # two threads start: the fit runs


@pytest.mark.parametrize("option, value, name", [
    ("--nsplit", 10**20, "nsplit"),
    ("--predict-min-samples", 2**31, "predict_min_samples"),
    ("--n-estimators", 2**31, "n_estimators"),
])
@pytest.mark.parametrize("command", ["fit", "compare"])
def test_cli_reports_an_impossible_option_before_reading_the_data(capsys, tmp_path, option,
                                                                  value, name, command):
    args = [command, tmp_path / "absent.csv", "--target", "y", option, value]
    if command == "fit":
        args += ["--output", tmp_path / "m.npz"]
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert f"The '{name}' parameter of AUCForestClassifier must be an int in the range" in err
    assert "report it as a bug" not in err and "absent.csv" not in err
