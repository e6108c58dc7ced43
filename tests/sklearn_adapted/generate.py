"""Write scikit-learn's own forest and tree tests, adapted to aucforest's estimators.

Reads the installed scikit-learn's ``sklearn/ensemble/tests/test_forest.py`` and
``sklearn/tree/tests/test_tree.py`` (shipped in its wheel) and writes one
adapted copy of each, ``test_adapted_<source>.py``, in which the classifiers
are aucforest's and every test runs under two sets of defaults (the autouse
fixture ``adapted_variant`` of ``_adapted.py``, parametrized over its
``VARIANTS``):

* ``sklearn_defaults``: ``RandomForestClassifier`` is `AUCForestClassifier`
  and ``DecisionTreeClassifier`` is `AUCTreeClassifier` with scikit-learn's
  defaults (``_estimators.FOREST_SKLEARN_DEFAULTS``, ``TREE_SKLEARN_DEFAULTS``);
  ``ExtraTreeClassifier`` is `AUCTreeClassifier` with ``splitter="random",
  max_features="sqrt"``.
* ``our_defaults``: the same with aucforest's own defaults, without the tests
  in ``NOT_MEANINGFUL_UNDER_OUR_DEFAULTS`` and ``HEAVY_UNDER_OUR_DEFAULTS``
  and without sparse input (deselected at collection by ``conftest.py``).

The only edits are the ones listed in the tables below (each with its reason):
whole tests removed (``EXCLUDED``), module-level names rebound
(``REBOUND``), and text replaced inside a test (``REPLACEMENTS``). No
assertion is removed or loosened. Items are marked at collection by
``conftest.py``: sparse input xfail (``SPARSE_XFAIL_REASON``), the heavy
parametrizations deselected (``DESELECTED``) and the tests left out under
aucforest's defaults deselected there.

Run ``python tests/sklearn_adapted/generate.py`` after upgrading scikit-learn;
``test_adapted_generated.py`` checks the committed files are current.
"""
import ast
import os
import sys
from pathlib import Path

import sklearn

HERE = Path(__file__).resolve().parent
SKLEARN_DIR = Path(sklearn.__file__).resolve().parent
SOURCES = {
    "forest": SKLEARN_DIR / "ensemble" / "tests" / "test_forest.py",
    "tree": SKLEARN_DIR / "tree" / "tests" / "test_tree.py",
}
# the scikit-learn names rebound in each source
ESTIMATOR_NAMES = {
    "forest": ("RandomForestClassifier",),
    "tree": ("DecisionTreeClassifier", "ExtraTreeClassifier"),
}

REGRESSOR = "regressor-only (aucforest has no regressor)"
MULTI_OUTPUT = "multi-output y (aucforest fits one target)"
EMBEDDING = "RandomTreesEmbedding only (aucforest has no embedding)"
PRIVATE = "reads scikit-learn's private internals, not an estimator's behaviour"
SINGLE_CLASS = ("fits y with a single class, which aucforest refuses (documented difference: "
                "docs/sklearn_parity.md)")

# module-level names bound to another value: name -> (source, new value, reason)
REBOUND = {
    "forest": {
        "FOREST_CLASSIFIERS": ('{"RandomForestClassifier": RandomForestClassifier}',
                               "ExtraTreesClassifier left out: aucforest has no extremely "
                               "randomized forest (scikit-learn's RandomForestClassifier has "
                               "no splitter either)"),
        "FOREST_REGRESSORS": ("{}", REGRESSOR),
        "FOREST_TRANSFORMERS": ("{}", EMBEDDING),
    },
    "tree": {
        "REG_TREES": ("{}", REGRESSOR),
        "SPARSE_TREES": ('["DecisionTreeClassifier", "ExtraTreeClassifier"]', REGRESSOR),
    },
}

# tests removed whole: name -> reason
EXCLUDED = {
    "forest": {
        "test_regression_criterion": REGRESSOR,
        "test_poisson_vs_mse": REGRESSOR,
        "test_balance_property_random_forest": REGRESSOR,
        "test_regressor_attributes": REGRESSOR,
        "test_forest_regressor_oob": REGRESSOR,
        "test_forest_multioutput_integral_regression_target": REGRESSOR,
        "test_poisson_y_positive_check": REGRESSOR,
        "test_max_samples_boundary_regressors": REGRESSOR,
        "test_mse_criterion_object_segfault_smoke_test": REGRESSOR,
        "test_friedman_mse_deprecation": REGRESSOR,
        "test_random_trees_embedding_raise_error_oob": EMBEDDING,
        "test_random_trees_dense_type": EMBEDDING,
        "test_random_trees_dense_equal": EMBEDDING,
        "test_random_hasher": EMBEDDING,
        "test_random_hasher_sparse_data": EMBEDDING,
        "test_random_trees_embedding_feature_names_out": EMBEDDING,
        "test_multioutput": MULTI_OUTPUT,
        "test_multioutput_string": MULTI_OUTPUT,
        "test_classifier_error_oob_score_multiclass_multioutput": MULTI_OUTPUT,
        "test_class_weight_balanced_and_bootstrap_multi_output": MULTI_OUTPUT,
        "test_classes_shape": MULTI_OUTPUT + " (its second half)",
        "test_validate_y_class_weight": PRIVATE + " (calls _validate_y_class_weight)",
        "test_class_weights_forest": PRIVATE + " (reads _sample_weight) and " + MULTI_OUTPUT,
        "test_backend_respected": (
            "run time: its fit starts a process pool (joblib's loky backend), 15-27 s on "
            "this shared 2-core machine; tests/test_sklearn_params.py checks its predict "
            "half (predict_proba keeps to threads under a process backend)"),
        "test_oob_not_computed_twice": (
            PRIVATE + " (patches the instance's _set_oob_score_and_attributes; aucforest "
            "fits a staging copy and publishes it in one assignment, so the patched bound "
            "method runs on the other object); tests/test_sklearn_params.py checks the "
            "behaviour instead"),
    },
    "tree": {
        "test_regression_toy": REGRESSOR,
        "test_diabetes_overfit": REGRESSOR,
        "test_diabetes_underfit": REGRESSOR,
        "test_importances_gini_equal_squared_error": REGRESSOR,
        "test_sparse_input_reg_trees": REGRESSOR,
        "test_mae": REGRESSOR,
        "test_prune_tree_regression_are_subtrees": REGRESSOR,
        "test_balance_property": REGRESSOR,
        "test_poisson_zero_nodes": REGRESSOR,
        "test_poisson_vs_mse": REGRESSOR,
        "test_missing_values_poisson": REGRESSOR,
        "test_regression_tree_missing_values_toy": REGRESSOR,
        "test_regression_extra_tree_missing_values_toy": REGRESSOR,
        "test_absolute_errors_precomputation_function": REGRESSOR,
        "test_absolute_error_accurately_predicts_weighted_median": REGRESSOR,
        "test_friedman_mse_deprecation": REGRESSOR,
        "test_multioutput": MULTI_OUTPUT,
        "test_classes_shape": MULTI_OUTPUT + " (its second half)",
        "test_class_weights": MULTI_OUTPUT + " (class_weight as a list, one dict per output)",
        "test_class_weight_errors": MULTI_OUTPUT + " (its only check)",
        "test_pure_set": SINGLE_CLASS,
        "test_prune_single_node_tree": SINGLE_CLASS,
        "test_pickle": PRIVATE + " (Tree.capacity, the Cython tree's buffer size)",
        "test_almost_constant_feature": (
            "tests scikit-learn's private FEATURE_THRESHOLD (a feature spanning less than "
            "1e-7 in a node counts as constant); aucforest splits between any two distinct "
            "float32 values, so a feature in small units is not discarded"),
        "test_check_n_classes": PRIVATE,
        "test_check_value_ndarray": PRIVATE,
        "test_check_node_ndarray": PRIVATE,
        "test_build_pruned_tree_py": PRIVATE,
        "test_build_pruned_tree_infinite_loop": PRIVATE,
    },
}

# text replaced inside one test: (source, test) -> [(old, new, reason)]
REPLACEMENTS = {
    ("tree", "test_importances"): [(
        "clf = Tree(random_state=0)", "clf = Tree(random_state=1)",
        "its first half counts features of importance above 0.1 in one random tree, which "
        "depends on the seed: scikit-learn's own ExtraTreeClassifier finds 2 of the 3 "
        "informative features for 6 of the seeds 0-39 (3 for seed 0), aucforest's for 3 "
        "of the seeds 0-15 (among them 0; 1 finds 3). Its second half, best-first and "
        "depth-first trees with the same importances on iris, is unchanged")],
    ("tree", "test_huge_allocations"): [(
        "pytest.raises(MemoryError)", "pytest.raises(ValueError)",
        "max_leaf_nodes=2**63 - 1: scikit-learn allocates 2 max_leaf_nodes - 1 nodes up "
        "front and runs out of memory; aucforest refuses a bound its int32 node indices "
        "cannot hold (at most 2**30 leaves) with a parameter error (a ValueError) before "
        "allocating")],
}

# tests that are not meaningful under aucforest's defaults, deselected under them at
# collection (conftest.py): (source, test) -> reason
WITHOUT_REPLACEMENT = ("aucforest draws without replacement by default (0.632 n cases, "
                       "randomForestSRC's default), scikit-learn n cases with replacement")
NOT_MEANINGFUL_UNDER_OUR_DEFAULTS = {
    ("forest", "test_max_samples_geq_one"): WITHOUT_REPLACEMENT + ": max_samples=1.5 needs "
                                            "replacement=True",
    ("forest", "test_max_samples_boundary_classifiers"): WITHOUT_REPLACEMENT + ": "
                                                         "max_samples=None is not 1.0",
    ("forest", "test_estimators_samples"): WITHOUT_REPLACEMENT + ": it asserts repeats",
    ("forest", "test_forest_feature_importances_sum"): (
        WITHOUT_REPLACEMENT + ": of 15 cases each tree draws 9, which min_samples_leaf=5 "
        "cannot split, and a forest of stumps has no importances"),
    ("tree", "test_sample_weight"): (
        "the AUC criterion ignores weights equal within a class (documented difference): "
        "it asserts the split moves when class 2's weight does"),
    ("tree", "test_prune_tree_classifier_are_subtrees"): (
        "under the AUC criterion tree_.impurity holds theta of the node's split (1/2 at "
        "a leaf), so a node pruned to a leaf changes it"),
    ("tree", "test_classification_tree_missing_values_toy"): (
        "under the AUC criterion tree_.impurity holds theta of the node's split (1/2 at "
        "a leaf): it asserts 0 at the leaves of one case (the tree of its seed has one)"),
}
# the heaviest tests run under scikit-learn's defaults only (run time; deselected under
# aucforest's at collection): (source, test) -> reason
HEAVY_UNDER_OUR_DEFAULTS = {
    ("forest", "test_importances_asymptotic"): "the slowest forest test (3-5 s here)",
    ("forest", "test_distribution"): "the next slowest",
}
# sparse input is run under scikit-learn's defaults only (deselected under ours)

# parametrizations deselected (collection-time): (source, node id part) -> reason
DESELECTED = {
    ("forest", "X3-y3"): MULTI_OUTPUT + " (make_multilabel_classification)",
    ("tree", "multilabel"): MULTI_OUTPUT + " (make_multilabel_classification)",
}
# parametrizations run with scikit-learn's own estimators: deselected, they test
# scikit-learn (its regressors in the parameter lists)
SKLEARN_ESTIMATOR_REASON = "runs a scikit-learn regressor named in the parameter list"

# parametrizations that check a documented difference: xfail(strict=False)
KNOWN_DIFFERENCES = {
    ("forest", "test_sparse_input["): MULTI_OUTPUT + " (sparse X with a multilabel y)",
    ("forest", "test_forest_y_sparse["): MULTI_OUTPUT + " (a sparse multilabel y)",
    ("tree", "test_min_weight_fraction_leaf_on_sparse_input["): (
        MULTI_OUTPUT + " (sparse X with a multilabel y)"),
    ("tree", "test_min_weight_fraction_leaf_with_min_samples_leaf_on_sparse_input["): (
        MULTI_OUTPUT + " (sparse X with a multilabel y)"),
    ("forest", "test_forest_classifier_oob[True-"): (
        "oob_score_ is the OOB AUC, compared here with the test accuracy "
        "(documented difference; the callable oob_score case checks the accuracy)"),
}

SPARSE_XFAIL_REASON = ""  # sparse input is supported: the sparse cases run
# tests that build sparse matrices themselves (no sparse parameter to recognise)
SPARSE_TESTS = {
    "forest": {"test_forest_y_sparse", "test_read_only_buffer",
               "test_memory_layout"},
    "tree": {"test_sparse_input", "test_sparse_parameters", "test_sparse_criteria",
             "test_explicit_sparse_zeros", "test_public_apply_sparse_trees",
             "test_min_weight_fraction_leaf_on_sparse_input",
             "test_min_weight_fraction_leaf_with_min_samples_leaf_on_sparse_input",
             "test_no_sparse_y_support", "test_memory_layout"},
}


def _top_level_spans(module):
    """(name, first line, last line, node) of every top-level statement, lines
    1-based and including decorators."""
    for node in module.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        name = getattr(node, "name", None)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        yield name, first, node.end_lineno, node


def without_our_defaults(source):
    """The tests of ``source`` deselected under aucforest's defaults: name -> reason."""
    left_out = {test: f"under aucforest's defaults: {reason}"
                for (src, test), reason in NOT_MEANINGFUL_UNDER_OUR_DEFAULTS.items()
                if src == source}
    left_out.update({test: f"run time, under scikit-learn's defaults only: {reason}"
                     for (src, test), reason in HEAVY_UNDER_OUR_DEFAULTS.items()
                     if src == source})
    return left_out


def adapted_source(source):
    """The text of the adapted copy of scikit-learn's test module `source`."""
    text = SOURCES[source].read_text()
    lines = text.splitlines(keepends=True)
    module = ast.parse(text)
    spans = list(_top_level_spans(module))
    names = {name for name, *_ in spans}
    excluded = dict(EXCLUDED[source])
    for table in (excluded, REBOUND[source], without_our_defaults(source)):
        missing = set(table) - names
        if missing:
            raise SystemExit(f"{SOURCES[source]} no longer defines {sorted(missing)}: "
                             "update the tables of generate.py")
    last_import = max(end for _, _, end, node in spans
                      if isinstance(node, (ast.Import, ast.ImportFrom)))
    rebinding = (f"from _adapted import {', '.join(ESTIMATOR_NAMES[source])}, adapted_variant"
                 "  # noqa: F401  adapted: aucforest's estimators, under each set of "
                 "defaults\n")
    out = []
    position = 0  # 0-based index of the next original line to copy
    for name, first, last, node in spans:
        out.extend(lines[position:first - 1])
        body = lines[first - 1:last]
        if name in excluded:
            out.append(f"# {name}: excluded ({excluded[name]})\n")
        elif name in REBOUND[source] and isinstance(node, (ast.Assign, ast.AnnAssign)):
            value, reason = REBOUND[source][name]
            out.append(f"{name} = {value}  # adapted: {reason}\n")
        else:
            chunk = "".join(body)
            for old, new, reason in REPLACEMENTS.get((source, name), ()):
                if old not in chunk:
                    raise SystemExit(f"{name}: {old!r} not found; update REPLACEMENTS")
                chunk = chunk.replace(old, new)
            out.append(chunk)
        position = last
        if last == last_import:
            out.append(rebinding)
    out.extend(lines[position:])
    header = (f'"""scikit-learn {sklearn.__version__}\'s '
              f'{SOURCES[source].relative_to(SKLEARN_DIR.parent)}, adapted to aucforest: '
              'each test runs under\nscikit-learn\'s defaults and under aucforest\'s '
              '(the autouse fixture adapted_variant).\n\nGENERATED by tests/sklearn_adapted/'
              'generate.py: do not edit; see README.md there.\n"""\n'
              f'ADAPTED_FROM_SKLEARN_VERSION = "{sklearn.__version__}"\n\n')
    return header + "".join(out)


def output_path(source):
    return HERE / f"test_adapted_{source}.py"


def readme_tables():
    """Markdown tables of every adaptation and exclusion."""
    rows = ["| source | test or name | adaptation | reason |", "|---|---|---|---|"]
    for source in SOURCES:
        for name, (value, reason) in REBOUND[source].items():
            rows.append(f"| {source} | `{name}` | rebound to `{value}` | {reason} |")
        for name, reason in EXCLUDED[source].items():
            rows.append(f"| {source} | `{name}` | excluded (both defaults) | {reason} |")
        for (src, name), items in REPLACEMENTS.items():
            if src == source:
                for old, new, reason in items:
                    rows.append(f"| {source} | `{name}` | `{old}` -> `{new}` | {reason} |")
        for (src, name), reason in NOT_MEANINGFUL_UNDER_OUR_DEFAULTS.items():
            if src == source:
                rows.append(f"| {source} | `{name}` | deselected under our defaults | {reason} |")
        for (src, name), reason in HEAVY_UNDER_OUR_DEFAULTS.items():
            if src == source:
                rows.append(f"| {source} | `{name}` | deselected under our defaults (run time) "
                            f"| {reason} |")
        for (src, name), reason in DESELECTED.items():
            if src == source:
                rows.append(f"| {source} | `{name}` | deselected | {reason} |")
        for (src, name), reason in KNOWN_DIFFERENCES.items():
            if src == source:
                rows.append(f"| {source} | `{name}...]` | xfail(strict=False) | {reason} |")
        rows.append(f"| {source} | any parametrization with a scikit-learn regressor class | "
                    f"deselected | {SKLEARN_ESTIMATOR_REASON} |")
        for name in sorted(SPARSE_TESTS[source]):
            rows.append(f"| {source} | `{name}` | xfail(strict=False) | {SPARSE_XFAIL_REASON} |")
        rows.append(f"| {source} | any parametrization with a sparse container or "
                    f"`X_type=\"sparse_*\"` | xfail(strict=False) | {SPARSE_XFAIL_REASON} |")
    return "\n".join(rows) + "\n"


def main():
    for source in SOURCES:
        output_path(source).write_text(adapted_source(source))
    readme = HERE / "README.md"
    text = readme.read_text() if readme.exists() else ""
    marker = "<!-- tables generated by generate.py -->\n"
    head = text.split(marker)[0] if marker in text else text
    readme.write_text(head + marker + readme_tables())


if __name__ == "__main__":
    sys.path.insert(0, os.fspath(HERE))
    main()
