"""Model files: round trips, atomic writes, and refusal of damaged or crafted files."""
import io as bytes_io
import json
import os
import pickle
import stat
import subprocess
import sys
import tracemalloc
import zipfile

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification

import aucforest
from aucforest import AUCForestClassifier
from aucforest import io as model_io
from aucforest.io._format import _MAX_EXTRA_DEPTH
from package_env import package_env


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def forest(iris):
    X, y = iris
    return AUCForestClassifier(n_estimators=40, oob_score=True, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def arrays(forest):
    return model_io.forest_to_arrays(forest)


def write_npz(path, arrays):
    np.savez_compressed(path, **arrays)
    return path


def with_metadata(arrays, **changes):
    metadata = json.loads(arrays["metadata"].tobytes())
    metadata.update(changes)
    return {**arrays, "metadata": np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)}


def fitted_attributes(estimator):
    return sorted(name for name in vars(estimator) if name.endswith("_"))


def assert_same_predictions(original, loaded, X):
    np.testing.assert_array_equal(loaded.predict_proba(X), original.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), original.predict(X))
    np.testing.assert_array_equal(loaded.apply(X), original.apply(X))


# ------------------------------------------------------------- round trips

def test_round_trip_predicts_identically(tmp_path, forest, iris):
    X, _ = iris
    path = tmp_path / "model.npz"
    model_io.save(forest, path)
    loaded = model_io.load(path)
    assert_same_predictions(forest, loaded, X)
    assert loaded.get_params() == forest.get_params()
    np.testing.assert_array_equal(loaded.classes_, forest.classes_)
    np.testing.assert_array_equal(loaded.class_prior_, forest.class_prior_)
    np.testing.assert_array_equal(loaded.feature_importances_, forest.feature_importances_)
    assert loaded.n_features_in_ == forest.n_features_in_
    assert loaded.oob_score_ == forest.oob_score_ and loaded.oob_gmean_ == forest.oob_gmean_
    np.testing.assert_array_equal(loaded.oob_decision_function_, forest.oob_decision_function_)
    assert fitted_attributes(loaded) == fitted_attributes(forest)  # nothing is lost
    for saved_tree, loaded_tree in zip(forest.estimators_, loaded.estimators_):
        assert loaded_tree.get_params() == saved_tree.get_params()
        assert fitted_attributes(loaded_tree) == fitted_attributes(saved_tree)
        assert loaded_tree.tree_.max_depth == saved_tree.tree_.max_depth


@pytest.mark.parametrize("labels", [
    np.array([3, 7, 9], dtype=np.int32),
    np.array([0, 1, 2], dtype=np.uint8),
    np.array([-1.0, 0.0, 2.0]),
    np.array(["setosa", "versicolor", "virginica"]),
    np.array(["setosa", "versicolor", "virginica"], dtype=object),
])
def test_label_types_round_trip(tmp_path, iris, labels):
    X, y = iris
    forest = AUCForestClassifier(n_estimators=3, random_state=0).fit(X, labels[y])
    model_io.save(forest, tmp_path / "m.npz")
    loaded = model_io.load(tmp_path / "m.npz")
    assert loaded.classes_.dtype == forest.classes_.dtype
    np.testing.assert_array_equal(loaded.predict(X), forest.predict(X))


def test_bool_labels_round_trip(tmp_path):
    X, y = make_classification(60, 4, random_state=0)
    forest = AUCForestClassifier(n_estimators=3, random_state=0).fit(X, y.astype(bool))
    model_io.save(forest, tmp_path / "m.npz")
    assert model_io.load(tmp_path / "m.npz").predict(X).dtype == bool


def test_dataframe_feature_names_round_trip(tmp_path, iris):
    pandas = pytest.importorskip("pandas")
    X, y = load_iris(return_X_y=True, as_frame=True)
    forest = AUCForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    model_io.save(forest, tmp_path / "m.npz")
    loaded = model_io.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.feature_names_in_, forest.feature_names_in_)
    np.testing.assert_array_equal(loaded.predict(X), forest.predict(X))
    with pytest.raises(ValueError, match="feature names"):
        loaded.predict(pandas.DataFrame(X.to_numpy(), columns=list("abcd")))


def test_class_weight_dict_and_unstorable_random_state(tmp_path, iris):
    X, y = iris
    forest = AUCForestClassifier(n_estimators=3, class_weight={0: 1.0, 1: 2.0, 2: 5.0},
                                 random_state=np.random.RandomState(0)).fit(X, y)
    with pytest.warns(UserWarning, match="random_state"):
        model_io.save(forest, tmp_path / "m.npz")
    loaded = model_io.load(tmp_path / "m.npz")
    assert loaded.class_weight == {0: 1.0, 1: 2.0, 2: 5.0}
    assert loaded.random_state is None
    np.testing.assert_array_equal(loaded.predict_proba(X), forest.predict_proba(X))


def test_extra_data_round_trip(tmp_path, forest):
    extra = {"encoding": {"columns": [{"name": "a", "kind": "numeric"}]}, "note": "ok"}
    model_io.save(forest, tmp_path / "m.npz", extra=extra)
    assert model_io.read_model(tmp_path / "m.npz").extra == extra
    with pytest.raises(ValueError, match="plain JSON"):
        model_io.save(forest, tmp_path / "bad.npz", extra={"x": object()})


def test_files_written_before_a_parameter_existed_load_what_was_fitted(tmp_path, arrays):
    # nsplit, replacement, max_bins and predict_min_samples came after format
    # version 1: a file without them was fitted with every threshold, bootstrap
    # draws and leaf predictions, whatever today's defaults are
    metadata = json.loads(arrays["metadata"].tobytes())
    older = {name: value for name, value in metadata["params"].items()
             if name not in ("nsplit", "replacement", "max_bins", "predict_min_samples")}
    loaded = model_io.load(write_npz(tmp_path / "old.npz", with_metadata(arrays, params=older)))
    params = loaded.get_params()
    assert (params["nsplit"], params["replacement"], params["max_bins"],
            params["predict_min_samples"]) == (None, True, None, 1)
    assert all(tree.nsplit is None for tree in loaded.estimators_)
    current = model_io.load(write_npz(tmp_path / "new.npz", arrays))
    assert (current.nsplit, current.replacement) == (10, False)  # stored: kept


def test_loaded_forest_can_be_refitted(tmp_path, forest, iris):
    X, y = iris
    model_io.save(forest, tmp_path / "m.npz")
    refitted = model_io.load(tmp_path / "m.npz").fit(X, y)
    np.testing.assert_array_equal(refitted.predict_proba(X), forest.predict_proba(X))


def test_pickle_keeps_working(forest, iris):
    X, _ = iris
    assert_same_predictions(forest, pickle.loads(pickle.dumps(forest)), X)


def test_refuses_what_it_cannot_store(tmp_path, iris):
    X, y = iris
    with pytest.raises(TypeError, match="AUCForestClassifier"):
        model_io.save(object(), tmp_path / "m.npz")
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        model_io.save(AUCForestClassifier(), tmp_path / "m.npz")
    forest = AUCForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    forest.classes_ = np.array([1, "a", 2.5], dtype=object)  # labels of mixed types
    with pytest.raises(ValueError, match="class labels of type float, int, str cannot be stored"):
        model_io.save(forest, tmp_path / "m.npz")


def test_node_arrays_are_those_of_format_version_1():
    # If this fails, Tree's node arrays changed: bump io.FORMAT_VERSION and
    # teach load() to read files of the older versions.
    assert set(model_io.node_array_dtypes()) == {
        "children_left", "children_right", "feature", "threshold", "missing_go_to_left",
        "value", "n_node_samples", "weighted_n_node_samples", "impurity", "improvement"}


# ------------------------------------------------------------ atomic writes

def test_failed_save_keeps_the_existing_file(tmp_path, forest, monkeypatch):
    path = tmp_path / "model.npz"
    model_io.save(forest, path)
    before = path.read_bytes()

    def interrupted(stream, **arrays):
        stream.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model_io.save(forest, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.npz"]  # no temporary file left behind


def test_save_writes_exactly_the_given_path(tmp_path, forest):
    model_io.save(forest, tmp_path / "model.bin")
    assert os.listdir(tmp_path) == ["model.bin"]
    assert isinstance(model_io.load(tmp_path / "model.bin"), AUCForestClassifier)


# --------------------------------------------------------- damaged files

def test_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        model_io.load(tmp_path / "absent.npz")


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 0.9, 0.99])
def test_truncated_file_raises_valueerror(tmp_path, forest, fraction):
    path = tmp_path / "m.npz"
    model_io.save(forest, path)
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * fraction)])
    with pytest.raises(ValueError):
        model_io.load(path)


def test_byte_flips_raise_valueerror_or_change_nothing(tmp_path, forest, iris):
    X, _ = iris
    path = tmp_path / "m.npz"
    model_io.save(forest, path)
    data = path.read_bytes()
    rng = np.random.RandomState(0)
    for position in rng.choice(len(data), size=40, replace=False):
        damaged = bytearray(data)
        damaged[position] ^= 0xFF
        path.write_bytes(bytes(damaged))
        try:
            loaded = model_io.load(path)
        except ValueError:
            continue
        assert_same_predictions(forest, loaded, X)  # a flip in zip fields nobody reads


@pytest.mark.parametrize("content", [b"", b"not a model", pickle.dumps({"a": 1})])
def test_files_that_are_not_models(tmp_path, content):
    path = tmp_path / "m.npz"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not an aucforest model file"):
        model_io.load(path)


def test_pickled_array_is_refused(tmp_path, arrays):
    crafted = {**arrays, "classes": np.array([{"evil": 1}, 2, 3], dtype=object)}
    path = tmp_path / "m.npz"
    np.savez(path, **crafted)  # allow_pickle is on when writing
    with pytest.raises(ValueError, match="'classes' has dtype object"):
        model_io.load(path)


def test_future_format_version_asks_for_an_upgrade(tmp_path, arrays):
    path = write_npz(tmp_path / "m.npz", with_metadata(arrays, format_version=2))
    with pytest.raises(ValueError, match=r"model file format version 2 is newer than this "
                                         r"aucforest supports \(1\); upgrade aucforest"):
        model_io.load(path)


def tree_slice(arrays, tree):
    offsets = arrays["tree_offsets"]
    return slice(offsets[tree], offsets[tree + 1])


def crafted_nodes(arrays, name, change):
    """Copy of ``arrays`` with ``change(nodes)`` applied to tree 1's ``name`` array."""
    values = arrays[name].copy()
    change(values[tree_slice(arrays, 1)])
    return {**arrays, name: values}


def set_first_left_child(value):
    def change(nodes):
        nodes[0] = value
    return change


def set_last_leaf(row):
    def change(values):
        values[-1] = row  # the last node of a preorder tree is a leaf
    return change


def scale_by(factor):
    def change(values):
        values *= factor
    return change


def point_child_at_root(nodes):
    nodes[np.flatnonzero(nodes != -1)[-1]] = 0  # an edge back to the root: a cycle


CRAFTED = {
    "child out of range": (lambda a: crafted_nodes(a, "children_left",
                                                   set_first_left_child(10**6)), "out of range"),
    "cycle": (lambda a: crafted_nodes(a, "children_left", point_child_at_root), "tree 1"),
    "feature out of range": (lambda a: crafted_nodes(a, "feature", set_first_left_child(4)),
                             "feature index is out of range"),
    "non-finite threshold": (lambda a: crafted_nodes(a, "threshold",
                                                     set_first_left_child(np.inf)), "finite"),
    "float children": (lambda a: {**a, "children_left": a["children_left"].astype(float)},
                       "'children_left' has dtype float64"),
    "int32 children": (lambda a: {**a, "children_left": a["children_left"].astype(np.int32)},
                       "'children_left' has dtype int32"),
    "2-d children": (lambda a: {**a, "children_left": a["children_left"][:, None]},
                     "children_left"),
    "missing array": (lambda a: {k: v for k, v in a.items() if k != "threshold"},
                      "'threshold' is missing"),
    "unexpected array": (lambda a: {**a, "payload": np.zeros(3)}, "unexpected array 'payload'"),
    "offsets beyond nodes": (lambda a: {**a, "tree_offsets": a["tree_offsets"] + 1},
                             "offsets are inconsistent"),
    "empty tree": (lambda a: {**a, "tree_offsets": np.r_[0, 0, a["tree_offsets"][2:]]},
                   "offsets are inconsistent"),
    "too many trees": (lambda a: with_metadata(a, n_trees=10**9), "tree_max_depth"),
    "unsorted classes": (lambda a: {**a, "classes": a["classes"][::-1].copy()}, "sorted"),
    "one class": (lambda a: {**a, "classes": a["classes"][:1]}, "at least two labels"),
    "prior shape": (lambda a: {**a, "class_prior": a["class_prior"][:2]}, "class_prior"),
    "prior sum": (lambda a: {**a, "class_prior": a["class_prior"] * 2}, "sum to 1"),
    "value columns": (lambda a: {**a, "value": a["value"][:, :2]}, "value"),
    "metadata not json": (lambda a: {**a, "metadata": np.frombuffer(b"{oops", dtype=np.uint8)},
                          "not valid JSON"),
    "foreign format": (lambda a: with_metadata(a, format="other"), "not an aucforest model"),
    "unknown parameter": (lambda a: with_metadata(a, params={"rm_rf": True}),
                          "unknown forest parameter 'rm_rf'"),
    "invalid parameter": (lambda a: with_metadata(a, params={"criterion": "bogus"}),
                          "invalid forest parameter"),
    "label dtype": (lambda a: with_metadata(a, classes_dtype="<U3"), "classes_dtype"),
    "too few features": (lambda a: with_metadata(a, n_features_in=1), "out of range"),
    # issue 30: metadata bounded against the kernel's types and the file's size
    "features beyond int32": (lambda a: with_metadata(a, n_features_in=2**31),
                              r"'n_features_in' must be in \[1, 2\*\*31 - 1\], got 2147483648"),
    "more features than the file backs": (
        lambda a: with_metadata(a, n_features_in=2**31 - 1),
        r"\d+ trees, 2147483647 features, more than \d+ bytes of work to load"),
    "names for fewer features": (
        lambda a: with_metadata({**a, "feature_names_in": np.array(["a", "b", "c", "d"])},
                                n_features_in=5), r"'feature_names_in' has shape \(4,\)"),
    "node size beyond int32": (lambda a: with_metadata(a, predict_min_samples=2**31),
                               "'predict_min_samples' must be at most 2\\*\\*31 - 1"),
    "tree seed beyond RandomState": (
        lambda a: {**a, "tree_random_state": a["tree_random_state"] + 2**40},
        "'tree_random_state' holds seeds above 2\\*\\*32 - 1"),
    "missing flag": (lambda a: crafted_nodes(a, "missing_go_to_left", set_first_left_child(7)),
                     "missing_go_to_left"),
    # class proportions outside [0, 1] or not summing to 1 would give such probabilities
    "negative leaf value": (lambda a: crafted_nodes(a, "value", set_last_leaf([-5.0, 3.0, 3.0])),
                            r"tree 1: .*class proportions of node \d+ \(\[-5.0"),
    "huge leaf value": (lambda a: crafted_nodes(a, "value", set_last_leaf([1e300, 0.0, 0.0])),
                        "class proportions"),
    "leaf values sum to 21": (lambda a: crafted_nodes(a, "value", scale_by(21.0)),
                              "must lie in \\[0, 1\\] and sum to 1"),
    "leaf values sum to 0.9": (lambda a: crafted_nodes(a, "value", scale_by(0.9)),
                               "class proportions"),
    "threshold decision on three classes": (
        lambda a: with_metadata(a, params={"decision": 0.3}), "needs exactly two classes"),
}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted_files_raise_valueerror(tmp_path, arrays, case):
    craft, message = CRAFTED[case]
    path = write_npz(tmp_path / "m.npz", craft(arrays))
    with pytest.raises(ValueError, match=message):
        model_io.load(path)


def npy_bytes(array, declared_shape):
    """A .npy file whose header declares ``declared_shape`` but holds ``array``'s data."""
    header = bytes_io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": np.lib.format.dtype_to_descr(array.dtype),
                 "fortran_order": False, "shape": declared_shape})
    return header.getvalue() + array.tobytes()


def write_zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name + ".npy", data)
    return path


def plain_npy(array):
    buffer = bytes_io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def test_huge_declared_size_is_refused_before_allocation(tmp_path, arrays):
    members = {name: plain_npy(array) for name, array in arrays.items()}
    members["threshold"] = npy_bytes(arrays["threshold"], (10**15,))
    path = write_zip(tmp_path / "m.npz", members)
    with pytest.raises(ValueError, match="declares shape"):
        model_io.load(path)


def test_zip_bomb_is_refused(tmp_path, arrays):
    members = {name: plain_npy(array) for name, array in arrays.items()}
    members["impurity"] = plain_npy(np.zeros(2_000_000))  # 16 MB of zeros, ~16 kB zipped
    path = write_zip(tmp_path / "m.npz", members)
    with pytest.raises(ValueError, match="which no model file does"):
        model_io.load(path)


def test_duplicate_members_are_refused(tmp_path, arrays):
    path = tmp_path / "m.npz"
    with zipfile.ZipFile(path, "w") as archive:
        for name, array in arrays.items():
            archive.writestr(name + ".npy", plain_npy(array))
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("classes.npy", plain_npy(arrays["classes"]))
    with pytest.raises(ValueError, match="two files of the same name"):
        model_io.load(path)


def test_package_save_and_load(tmp_path, forest, iris):
    """aucforest.save and aucforest.load are the way into model files (io sits above the
    estimators, which have no save method)."""
    assert not hasattr(AUCForestClassifier, "save")
    X, _ = iris
    aucforest.save(forest, tmp_path / "m.npz")
    assert_same_predictions(forest, aucforest.load(tmp_path / "m.npz"), X)


def test_node_size_and_oob_labels_round_trip(tmp_path):
    X, y = make_classification(300, 6, weights=[0.85], random_state=0)
    forest = AUCForestClassifier(20, predict_min_samples="oob", oob_score=True,
                                 random_state=0).fit(X, y)
    aucforest.save(forest, tmp_path / "m.npz")
    loaded = model_io.load(tmp_path / "m.npz")
    assert loaded.predict_min_samples_ == forest.predict_min_samples_
    assert loaded.oob_scores_by_min_samples_ == forest.oob_scores_by_min_samples_
    assert loaded.oob_gmeans_by_min_samples_ == forest.oob_gmeans_by_min_samples_
    np.testing.assert_array_equal(loaded.predict_proba(X), forest.predict_proba(X))
    for decision in ("rfq", "argmax"):
        forest.set_params(decision=decision)
        loaded.set_params(decision=decision)
        assert loaded.oob_gmean_ == forest.oob_gmean_


def test_a_tiny_forest_of_many_features_is_saved_so_that_it_loads(tmp_path, iris):
    """3,000,000 features cost 24 MB of work once loaded (one float64 each), more
    than a 3-tree file's size allows: save pads the metadata (spaces after the
    JSON) until the file backs them, so load accepts it."""
    X, y = iris
    forest = AUCForestClassifier(3, random_state=0).fit(X, y)
    expected = forest.predict_proba(X[:5])
    forest.n_features_in_ = 3_000_000  # the trees split on the first 4 only
    model_io.save(forest, tmp_path / "wide.npz")
    size = os.path.getsize(tmp_path / "wide.npz")
    needed = (8 * 3_000_000 - (1 << 20)) / 63  # bytes of file that back the features
    assert needed < size < 1.05 * needed  # padded just enough
    loaded = model_io.load(tmp_path / "wide.npz")
    assert loaded.n_features_in_ == 3_000_000
    wide = np.zeros((5, 3_000_000), dtype=np.float32)
    wide[:, :4] = X[:5]
    np.testing.assert_array_equal(loaded.predict_proba(wide), expected)


# ------------------------------------------ leaf values and decision (issue 13, items 5-6)

def test_command_line_refuses_impossible_leaf_values(tmp_path, arrays, iris):
    X, _ = iris
    path = write_npz(tmp_path / "m.npz", crafted_nodes(arrays, "value", scale_by(21.0)))
    data = tmp_path / "data.csv"
    np.savetxt(data, X, delimiter=",", header="a,b,c,d", comments="")
    result = subprocess.run([sys.executable, "-m", "aucforest", "predict", "--proba",
                             str(path), str(data)], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path, env=package_env())
    assert result.returncode != 0
    assert "class proportions" in result.stderr and str(path) in result.stderr
    assert result.stdout == ""


def test_threshold_decision_round_trips_on_two_classes(tmp_path):
    X, y = make_classification(80, 4, random_state=0)
    forest = AUCForestClassifier(n_estimators=3, decision=0.3, random_state=0).fit(X, y)
    aucforest.save(forest, tmp_path / "m.npz")
    loaded = model_io.load(tmp_path / "m.npz")
    assert loaded.decision == 0.3
    np.testing.assert_array_equal(loaded.predict(X), forest.predict(X))


# ---------------------------------------------------- labels (issue 13, item 11)

def test_labels_longer_than_256_characters_round_trip(tmp_path, iris):
    X, y = iris
    labels = np.array(["a" * 300, "b" * 257, "é" * 1000])
    forest = AUCForestClassifier(n_estimators=3, random_state=0).fit(X, labels[y])
    aucforest.save(forest, tmp_path / "m.npz")
    loaded = model_io.load(tmp_path / "m.npz")
    assert loaded.classes_.dtype == forest.classes_.dtype == np.dtype("<U1000")
    np.testing.assert_array_equal(loaded.predict(X), forest.predict(X))


def test_label_dtype_wider_than_the_stored_labels_is_refused(tmp_path, arrays):
    # the restored dtype may not ask for more memory than the labels read from the file
    labelled = {**arrays, "classes": np.array(["a", "b", "c"])}
    path = write_npz(tmp_path / "m.npz", with_metadata(labelled, classes_dtype="<U100000000"))
    with pytest.raises(ValueError, match="classes_dtype"):
        model_io.load(path)


# ---------------------------------------------------- work bounds (issue 13, item 12)

def test_inflation_below_the_zip_bomb_ratio_is_refused_before_reading(tmp_path, arrays):
    # about 285:1, under a per-member 1000:1 guard: 24 MB from a file of ~90 kB
    rng = np.random.RandomState(0)
    oob = np.zeros((1_000_000, 3))
    oob.flat[::512] = rng.uniform(size=oob.flat[::512].shape)
    members = {name: plain_npy(array) for name, array in arrays.items()}
    members["oob_decision_function"] = plain_npy(oob)
    path = write_zip(tmp_path / "m.npz", members)
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("oob_decision_function.npy")
    assert 64 < info.file_size / info.compress_size < 1000
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="which no model file does"):
            model_io.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000  # the 24 MB member was never inflated


def one_node_trees(arrays, n_trees):
    """The arrays of a forest of ``n_trees`` identical one-node trees (3 classes)."""
    leaf = {"children_left": -1, "children_right": -1, "feature": -2, "threshold": -2.0,
            "missing_go_to_left": 0, "n_node_samples": 10, "weighted_n_node_samples": 10.0,
            "impurity": 0.5, "improvement": 0.0}
    crafted = {name: np.full(n_trees, value, dtype=arrays[name].dtype)
               for name, value in leaf.items()}
    crafted["value"] = np.full((n_trees, 3), 1 / 3)
    crafted["tree_offsets"] = np.arange(n_trees + 1, dtype=np.int64)
    crafted["tree_max_depth"] = np.zeros(n_trees, dtype=np.int64)
    crafted["tree_random_state"] = np.zeros(n_trees, dtype=np.int64)
    small = {k: v for k, v in arrays.items() if not k.startswith("oob_")}
    return with_metadata({**small, **crafted}, n_trees=n_trees)


def test_compression_other_than_deflate_is_refused(tmp_path, arrays):
    path = tmp_path / "m.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            archive.writestr(name + ".npy", plain_npy(array),
                             zipfile.ZIP_LZMA if name == "impurity" else None)
    with pytest.raises(ValueError, match="'impurity' uses zip compression method 14"):
        model_io.load(path)


def test_many_tiny_trees_in_a_small_file_are_refused(tmp_path, arrays):
    path = write_npz(tmp_path / "m.npz", one_node_trees(arrays, 5000))
    assert path.stat().st_size < 20_000  # 5000 trees in a few bytes each
    with pytest.raises(ValueError, match="5000 trees, more than .* bytes of work to load"):
        model_io.load(path)
    path = write_npz(tmp_path / "few.npz", one_node_trees(arrays, 50))
    assert len(model_io.load(path).estimators_) == 50  # a few tiny trees are fine


def test_forest_of_identical_trees_saves_in_a_form_it_loads(tmp_path):
    # constant X: every tree is one identical leaf and compresses to almost nothing,
    # so save stores the arrays uncompressed to stay within load's work bound
    X, y = np.zeros((40, 2)), np.repeat([0, 1], 20)
    forest = AUCForestClassifier(n_estimators=3000, bootstrap=False, random_state=0).fit(X, y)
    aucforest.save(forest, tmp_path / "m.npz")
    with zipfile.ZipFile(tmp_path / "m.npz") as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}
    loaded = model_io.load(tmp_path / "m.npz")
    assert len(loaded.estimators_) == 3000
    np.testing.assert_array_equal(loaded.predict_proba(X), forest.predict_proba(X))


def test_n_jobs_is_not_taken_from_the_file(tmp_path, iris, arrays):
    X, y = iris
    forest = AUCForestClassifier(n_estimators=3, n_jobs=2, random_state=0).fit(X, y)
    aucforest.save(forest, tmp_path / "m.npz")
    assert model_io.load(tmp_path / "m.npz").n_jobs is None
    metadata = json.loads(arrays["metadata"].tobytes())
    crafted = with_metadata(arrays, params={**metadata["params"], "n_jobs": 10**6})
    loaded = model_io.load(write_npz(tmp_path / "crafted.npz", crafted))
    assert loaded.n_jobs is None
    np.testing.assert_array_equal(loaded.predict_proba(X), model_io.load(
        write_npz(tmp_path / "plain.npz", arrays)).predict_proba(X))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "fifo"])
def test_devices_and_fifos_are_refused_without_reading(tmp_path, device):
    if device == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this platform")
        device = str(tmp_path / "fifo")
        os.mkfifo(device)
    elif not os.path.exists(device):
        pytest.skip(f"no {device} on this platform")
    script = ("import aucforest, sys\n"
              "try:\n    aucforest.load(sys.argv[1])\n"
              "except ValueError as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", script, device], capture_output=True,
                            text=True, timeout=120, cwd=tmp_path, env=package_env())
    assert result.stdout.strip() == f"{device} is not a regular file, so not an aucforest model file"


def test_folder_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a regular file"):
        model_io.load(tmp_path)


def test_deeply_nested_metadata_is_a_valueerror(tmp_path, arrays):
    deep = np.frombuffer(b"[" * 100_000 + b"]" * 100_000, dtype=np.uint8)
    with pytest.raises(ValueError, match="nested more than"):
        model_io.load(write_npz(tmp_path / "m.npz", {**arrays, "metadata": deep}))
    nested = {}
    for _ in range(60):  # within the recursion limit, deeper than save allows
        nested = {"a": nested}
    with pytest.raises(ValueError, match="nested more than"):
        model_io.load(write_npz(tmp_path / "m.npz", with_metadata(arrays, extra=nested)))


def test_extra_nesting_is_bounded_at_save_as_at_load(tmp_path, forest):
    nested = []
    for _ in range(_MAX_EXTRA_DEPTH - 2):  # with {"x": ...}: the deepest allowed
        nested = [nested]
    model_io.save(forest, tmp_path / "m.npz", extra={"x": nested})
    assert model_io.read_model(tmp_path / "m.npz").extra == {"x": nested}
    with pytest.raises(ValueError, match="nested more than"):
        model_io.save(forest, tmp_path / "deeper.npz", extra={"x": [nested]})
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(ValueError, match="plain JSON"):
        model_io.save(forest, tmp_path / "deepest.npz", extra={"x": nested})


# ------------------------------------------------- saving over files (issue 13, item 13)

def test_saving_over_a_file_keeps_its_permissions(tmp_path, forest):
    path = tmp_path / "model.npz"
    model_io.save(forest, path)
    os.chmod(path, 0o600)
    model_io.save(forest, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.chmod(path, 0o640)
    model_io.save(forest, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_new_file_gets_the_permissions_open_gives(tmp_path, forest):
    model_io.save(forest, tmp_path / "model.npz")
    (tmp_path / "plain").write_bytes(b"")
    assert os.stat(tmp_path / "model.npz").st_mode == os.stat(tmp_path / "plain").st_mode


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="only root can give a file to another owner")
def test_saving_over_a_file_keeps_its_owner(tmp_path, forest):
    path = tmp_path / "model.npz"
    model_io.save(forest, path)
    os.chown(path, 12345, 23456)
    model_io.save(forest, path)
    assert (os.stat(path).st_uid, os.stat(path).st_gid) == (12345, 23456)


def test_longest_file_names_can_be_saved(tmp_path, forest):
    name = "m" * 251 + ".npz"  # 255 bytes, the usual limit of a file name
    model_io.save(forest, tmp_path / name)
    assert os.listdir(tmp_path) == [name]
    assert len(model_io.load(tmp_path / name).estimators_) == len(forest.estimators_)


def test_save_errors_name_the_users_path(tmp_path, forest):
    path = tmp_path / "absent" / "model.npz"
    with pytest.raises(FileNotFoundError) as error:
        model_io.save(forest, path)
    assert error.value.filename == str(path)
    assert str(path) in str(error.value) and ".tmp" not in str(error.value)


def test_failed_replace_keeps_the_existing_file(tmp_path, forest, monkeypatch):
    path = tmp_path / "model.npz"
    model_io.save(forest, path)
    before = path.read_bytes()

    def no_space(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_space)
    with pytest.raises(OSError, match="No space left on device") as error:
        model_io.save(forest, path)
    assert error.value.filename == str(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.npz"]


def test_a_file_must_say_which_splitter_auto_chose(tmp_path, arrays):
    metadata = json.loads(arrays["metadata"].tobytes())
    assert metadata["params"]["max_bins"] == "auto" and metadata["max_bins"] is None
    unsaid = {name: value for name, value in metadata.items() if name != "max_bins"}
    path = tmp_path / "unsaid.npz"
    np.savez_compressed(path, **{**arrays, "metadata": np.frombuffer(
        json.dumps(unsaid).encode(), dtype=np.uint8)})
    with pytest.raises(ValueError, match="max_bins"):
        model_io.load(path)
    for bad in (1, 256, "255", True):
        with pytest.raises(ValueError, match="max_bins"):
            model_io.load(write_npz(tmp_path / "bad.npz", with_metadata(arrays, max_bins=bad)))
