"""Issue 44, categorical features meeting warm start, model files and the
errors of a DataFrame: each case filed against the dense answer (the same
forest fitted on the frame as it was at fit) or a clear refusal naming the
column or field."""
import json
import re
import warnings

import numpy as np
import pytest
import sklearn.tree
from sklearn.tree import export_text as sklearn_export_text

import aucforest
from aucforest import AUCForestClassifier, AUCTreeClassifier
from aucforest.tree import export_graphviz, export_text, plot_tree

pd = pytest.importorskip("pandas")

LEVELS = list("abcdef")


def frame(n=200, seed=0):
    """A frame whose class is a set of levels of ``c`` (a, c, e): only a
    forest reading the levels right scores 1.0 on it."""
    rng = np.random.RandomState(seed)
    values = rng.choice(LEVELS, n)
    X = pd.DataFrame({"c": pd.Categorical(values, categories=LEVELS),
                      "x": rng.normal(size=n), "z": rng.uniform(size=n)})
    return X, np.isin(values, ["a", "c", "e"]).astype(int)


def warm_started(first, second, y):
    """5 trees on ``first``, then 5 more on ``second`` (warm start)."""
    forest = AUCForestClassifier(n_estimators=5, warm_start=True, random_state=0).fit(first, y)
    return forest.set_params(n_estimators=10).fit(second, y)


# ---------------------------------------------------------- case 1: warm start

@pytest.mark.parametrize("second", [
    lambda X: X.assign(c=X["c"].cat.reorder_categories(LEVELS[::-1])),
    lambda X: X.assign(c=X["c"].cat.add_categories(["zz"]).cat.reorder_categories(
        ["zz"] + LEVELS[::-1])),  # a declared level no row holds
    lambda X: X.assign(c=pd.Categorical(X["c"].astype(str))),  # sorted, as read from text
], ids=["reversed", "superset", "rebuilt"])
def test_warm_start_reordered_levels_keeps_trees_reading_the_right_levels(second):
    """Case 1 (silent wrong before: the kept trees read the new frame's codes,
    training accuracy 1.00 -> 0.45). The continuation maps the levels by
    value to the first fit's categories_: the forest equals the one warm
    started on the same frame twice."""
    X, y = frame()
    reference = warm_started(X, X, y)
    forest = warm_started(X, second(X), y)
    assert forest.categories_ == reference.categories_ == [LEVELS, None, None]
    np.testing.assert_array_equal(forest.predict_proba(X), reference.predict_proba(X))
    assert forest.score(X, y) == 1.0


def test_warm_start_reordered_columns_is_refused_naming_them():
    """Case 1 (silent wrong before on numeric columns: the kept trees read
    another column, accuracy 0.76). Refused as scikit-learn refuses feature
    names in another order, naming the columns; the model stays as it was."""
    X, y = frame()
    numeric = X[["x", "z"]].assign(w=X["c"].cat.codes.astype(float))
    for data in (X, numeric):
        forest = AUCForestClassifier(n_estimators=5, warm_start=True, random_state=0).fit(data, y)
        before = forest.predict_proba(data)
        reordered = data[list(data.columns[::-1])]
        with pytest.raises(ValueError, match=r"another order than at the first fit.*"
                                             + re.escape(repr(list(data.columns)))):
            forest.set_params(n_estimators=10).fit(reordered, y)
        assert len(forest.estimators_) == 5
        np.testing.assert_array_equal(forest.predict_proba(data), before)


def test_warm_start_with_levels_the_first_fit_did_not_know_is_refused():
    """Case 1: the kept trees cannot read a new level; refused naming the
    column and the levels (not mapped to missing: the new trees would learn
    nothing of rows the user means them to learn from)."""
    X, y = frame()
    forest = AUCForestClassifier(n_estimators=5, warm_start=True, random_state=0).fit(X, y)
    more = X.assign(c=X["c"].cat.add_categories(["new"]))
    more.loc[:4, "c"] = "new"
    with pytest.raises(ValueError, match=r"column 'c' holds levels the first fit did not "
                                         r"know \('new'\)"):
        forest.set_params(n_estimators=10).fit(more, y)


def test_warm_start_refuses_another_set_of_categorical_features():
    """Case 1: an array (codes, read as numbers by "from_dtype") after a
    frame with a category column: the kept trees split ``c`` as a set."""
    X, y = frame()
    forest = AUCForestClassifier(n_estimators=5, warm_start=True, random_state=0).fit(X, y)
    codes = X.assign(c=X["c"].cat.codes.astype(float)).to_numpy()
    with pytest.raises(ValueError, match=r"categorical features.*\['c'\]"):
        forest.set_params(n_estimators=10).fit(codes, y)


# ------------------------------------------- case 2: a file that cannot be read

def test_category_column_with_no_categories_saves_a_file_that_loads(tmp_path):
    """Case 2 (before: fit and save worked, load raised "entry 2 must be None
    or a list of 1 to 255 ..."): the file loads and predicts the same."""
    X, y = frame()
    X["d"] = pd.Categorical([np.nan] * len(X))
    forest = AUCForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    assert forest.categories_[3] == []
    aucforest.save(forest, tmp_path / "m.npz")
    loaded = aucforest.load(tmp_path / "m.npz")
    assert loaded.categories_ == forest.categories_
    np.testing.assert_array_equal(loaded.predict_proba(X), forest.predict_proba(X))


# ------------------------------------------------- case 3: duplicate columns

@pytest.mark.parametrize("estimator", [AUCForestClassifier(3, random_state=0),
                                       AUCTreeClassifier(random_state=0)])
def test_duplicate_column_names_are_refused_naming_them(estimator):
    """Case 3 (before: AttributeError: 'DataFrame' object has no attribute
    'dtype', at fit and at predict)."""
    X, y = frame()
    duplicated = X.set_axis(["c", "x", "x"], axis=1)
    with pytest.raises(ValueError, match=r"duplicate column names: \['x'\]"):
        estimator.fit(duplicated, y)
    estimator.fit(X, y)
    with pytest.raises(ValueError, match=r"duplicate column names: \['x'\]"):
        estimator.predict(duplicated)


# ----------------------------------- case 4: a category column with no categories

def test_predict_with_a_category_column_of_no_categories_is_all_missing():
    """Case 4 (before: IndexError: index -1 is out of bounds): the column is
    all missing, as the same values under the fitted categories."""
    X, y = frame()
    forest = AUCForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    empty = X.assign(c=pd.Categorical([np.nan] * len(X)))
    missing = X.assign(c=pd.Categorical([np.nan] * len(X), categories=LEVELS))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing unseen: no warning
        np.testing.assert_array_equal(forest.predict_proba(empty), forest.predict_proba(missing))


# --------------------------------------------- case 5: reordered columns at predict

@pytest.mark.parametrize("estimator", [AUCForestClassifier(3, random_state=0),
                                       AUCTreeClassifier(random_state=0)])
def test_predict_with_reordered_columns_names_the_order_not_a_dtype(estimator):
    """Case 5 (before: "column 'x' was fitted as a category column, but X has
    dtype float64 there; convert it ..."): the message says the columns are
    in another order and names both orders."""
    X, y = frame()
    estimator.fit(X, y)
    with pytest.raises(ValueError, match=r"columns of X are in another order than at fit: "
                                         r"\['z', 'c', 'x'\].*\['c', 'x', 'z'\]"):
        estimator.predict(X[["z", "c", "x"]])


# ------------------------------------- case 6: levels that are the same to pandas

@pytest.mark.parametrize("levels", [[1, 1.0, "a"], ["a", 2, 2.0], [0, -0.0],
                                    [2**53 + 1, 2.0**53]])  # distinct to Python, not to pandas
def test_model_file_with_levels_pandas_cannot_tell_apart_is_refused_at_load(tmp_path, levels):
    """Case 6 (before: loaded, then every predict raised pandas'
    InvalidIndexError)."""
    X, y = frame()
    X["k"] = pd.Categorical(np.where(np.arange(len(X)) % 2, 1, 3))
    forest = AUCForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    arrays = aucforest.io.forest_to_arrays(forest)
    metadata = json.loads(arrays["metadata"].tobytes())
    metadata["categories"][3] = levels
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    np.savez_compressed(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=r"'categories' entry 3 \(feature 'k'\).*"
                                         r"the same level"):
        aucforest.load(tmp_path / "bad.npz")


# --------------------------------------------- case 7: categorical splits as sets

def _split_nodes(tree_, categorical):
    return [node for node in range(tree_.node_count)
            if tree_.feature[node] >= 0 and tree_.categorical_split[node] == categorical]


def test_export_text_is_scikit_learns_for_numeric_splits():
    """Case 7: on a tree without categorical splits the text is scikit-learn's,
    whatever the options."""
    X, y = frame()
    tree = AUCTreeClassifier(random_state=0, max_depth=4).fit(X[["x", "z"]].to_numpy(), y)
    for options in ({}, {"feature_names": ["u", "v"], "show_weights": True, "decimals": 3},
                    {"max_depth": 1, "spacing": 2, "class_names": ["no", "yes"]}):
        assert export_text(tree, **options) == sklearn_export_text(tree, **options)


def test_export_text_shows_categorical_splits_as_the_sets_the_tree_sends_left():
    """Case 7 (before: scikit-learn prints ``c <= nan``): each categorical
    split reads ``c in {...}``, and the levels printed on each side are
    those the tree sends there (checked level by level with ``apply`` on the
    children's node ids), missing values on the side marked ``or missing``."""
    X, _ = frame(n=400, seed=1)
    c, x = X["c"].astype(str).to_numpy(), X["x"].to_numpy()
    y = ((np.isin(c, ["a", "b"]) & (x > 0)) | (np.isin(c, ["c", "d"]) & (x <= 0))
         | (c == "f")).astype(int)  # c split again below x: nodes where levels are absent
    X.loc[::17, "c"] = np.nan  # a learnt missing-value direction
    tree = AUCTreeClassifier(random_state=0).fit(X, y)
    text = export_text(tree, max_depth=100)
    assert "nan" not in text
    splits = _split_nodes(tree.tree_, 1)
    assert len(splits) > 5 and "feature_0 <= nan" in sklearn_export_text(tree)
    lines = text.splitlines()
    left_line, right_line = _condition_lines(tree.tree_)
    for node in splits:
        printed = {}  # side -> (levels printed there, missing values go there)
        for side, line in (("left", lines[left_line[node]]), ("right", lines[right_line[node]])):
            found = re.fullmatch(r"[| -]*c in \{(.*)\}( or missing)?", line)
            assert found, line
            printed[side] = (set(found.group(1).split(", ")) - {""}, bool(found.group(2)))
        assert printed["left"][0] | printed["right"][0] == set(LEVELS)
        assert not printed["left"][0] & printed["right"][0]
        assert printed["left"][1] != printed["right"][1]  # one side takes missing values
        for level in LEVELS + [np.nan]:  # where rows of the level that reach the node go
            rows = X.assign(c=pd.Categorical([level] * len(X), categories=LEVELS))
            path = tree.decision_path(rows)
            at_node = path[:, node].toarray().ravel() == 1
            if not at_node.any():
                continue
            went_left = path[at_node, tree.tree_.children_left[node]].toarray().ravel() == 1
            assert went_left.all() or not went_left.any()
            side = "left" if went_left[0] else "right"
            if isinstance(level, str):
                assert level in printed[side][0]
            else:
                assert printed[side][1]


def _condition_lines(tree_):
    """The line of each split node's left and right condition in the report
    (preorder: left condition, left subtree, right condition, right subtree)."""
    left_line, right_line, line = {}, {}, 0

    def walk(node):
        nonlocal line
        if tree_.feature[node] < 0:
            line += 1
            return
        left_line[node] = line
        line += 1
        walk(tree_.children_left[node])
        right_line[node] = line
        line += 1
        walk(tree_.children_right[node])

    walk(0)
    return left_line, right_line


def _categorical_tree():
    """A tree on ``frame`` with categorical splits at several depths and a learnt
    missing-value direction (as in the export_text test above)."""
    X, _ = frame(n=400, seed=1)
    c, x = X["c"].astype(str).to_numpy(), X["x"].to_numpy()
    y = ((np.isin(c, ["a", "b"]) & (x > 0)) | (np.isin(c, ["c", "d"]) & (x <= 0))
         | (c == "f")).astype(int)
    X.loc[::17, "c"] = np.nan
    return AUCTreeClassifier(random_state=0).fit(X, y)


def _left_conditions(tree):
    """The left ("True") condition of each categorical split, as export_text prints it."""
    lines = export_text(tree, max_depth=100).splitlines()
    left_line, _ = _condition_lines(tree.tree_)
    return {node: lines[left_line[node]].lstrip("|- ")
            for node in _split_nodes(tree.tree_, 1)}


@pytest.mark.parametrize("options", [{}, {"node_ids": True, "filled": True},
                                     {"special_characters": True, "proportion": True},
                                     {"max_depth": 2, "class_names": ["no", "yes"]}])
def test_export_graphviz_shows_categorical_splits_as_export_text_does(options):
    """Before: scikit-learn's DOT reads ``c <= nan``. Each categorical node's split line
    is export_text's left condition; every other line is scikit-learn's, unchanged."""
    tree = _categorical_tree()
    ours = export_graphviz(tree, **options)
    theirs = sklearn.tree.export_graphviz(tree, feature_names=["c", "x", "z"], **options)
    assert "nan" not in ours and ("c &le; nan" in theirs or "c <= nan" in theirs)
    conditions = _left_conditions(tree)
    special = options.get("special_characters", False)
    escape = (lambda t: t) if not special else (lambda t: t.replace("&", "&amp;"))
    differing = 0
    for mine, sklearns in zip(ours.splitlines(), theirs.splitlines(), strict=True):
        node = re.match(r"^(\d+) \[label=", sklearns)
        if node and int(node.group(1)) in conditions:
            differing += 1
            expected = sklearns.replace("c &le; nan" if special else "c <= nan",
                                        escape(conditions[int(node.group(1))]), 1)
            assert mine == expected
        else:
            assert mine == sklearns
    shown = options.get("max_depth")
    assert differing == sum(1 for n in conditions if shown is None
                            or _node_depth(tree.tree_, n) <= shown) > 0


def test_plot_tree_shows_categorical_splits_as_export_text_does():
    """The boxes scikit-learn's plot_tree draws, each categorical node's first line
    replaced by export_text's left condition (found by the box's node id, drawn with
    ``node_ids=True``)."""
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tree = _categorical_tree()
    conditions = _left_conditions(tree)
    for max_depth in (None, 3):
        figure, ax = plt.subplots()
        try:
            texts = [a.get_text() for a in plot_tree(tree, ax=ax, node_ids=True,
                                                     max_depth=max_depth)]
        finally:
            plt.close(figure)
        assert not any("nan" in t for t in texts)
        boxes = {int(re.match(r"node #(\d+)", t).group(1)): t.split("\n")
                 for t in texts if t.startswith("node #")}
        assert set(conditions) & set(boxes)
        for node, lines in boxes.items():
            if node in conditions:
                assert lines[1] == conditions[node]
            elif tree.tree_.feature[node] >= 0:
                assert re.fullmatch(r"[xz] <= -?\d+(\.\d+)?", lines[1])


def _node_depth(tree_, target):
    parents = {int(child): node for node in range(tree_.node_count) if tree_.feature[node] >= 0
               for child in (tree_.children_left[node], tree_.children_right[node])}
    depth = 0
    while target != 0:
        target, depth = parents[target], depth + 1
    return depth


def test_export_text_of_codes_without_categories_prints_the_codes():
    """A categorical feature given as codes (an array) has no categories_:
    the sets are of codes."""
    X, y = frame(seed=1)
    codes = X.assign(c=X["c"].cat.codes.astype(float)).to_numpy()
    tree = AUCTreeClassifier(random_state=0, categorical_features=[0]).fit(codes, y)
    text = export_text(tree, feature_names=["c", "x", "z"])
    assert re.search(r"c in \{[0-5](, [0-5])*\}", text) and "nan" not in text
