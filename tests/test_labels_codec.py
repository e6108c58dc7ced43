"""Class labels, one codec (`aucforest._labels`): save, load and every export
accept the same labels and refuse the others with the same message."""
import json

import numpy as np
import pytest

import aucforest
from aucforest import AUCForestClassifier, to_onnx
from aucforest._labels import plain_labels, restored_labels, storable_labels

from export_data import held_out, make_data


def forest_with_labels(labels, n_estimators=5):
    X, y = make_data(200)
    return AUCForestClassifier(n_estimators=n_estimators, random_state=0).fit(
        X, np.asarray(labels)[y])


def refusal(action):
    """The message of the ValueError ``action()`` raises."""
    with pytest.raises(ValueError) as caught:
        action()
    return str(caught.value)


def test_uint64_labels_above_int64_are_refused_by_save_and_onnx_alike(tmp_path):
    """Regression: to_onnx cast them to int64, so every label came out negative,
    silently, while save refused them."""
    forest = forest_with_labels(np.array([2**63 + 1, 2**63 + 5], dtype=np.uint64))
    assert forest.classes_.dtype == np.uint64
    saved = refusal(lambda: aucforest.save(forest, tmp_path / "m.npz"))
    exported = refusal(lambda: to_onnx(forest))
    assert exported == saved
    assert "larger than 2**63 - 1 (9223372036854775809, 9223372036854775813)" in saved
    assert not (tmp_path / "m.npz").exists()


def test_uint64_labels_above_int64_are_refused_by_the_skl2onnx_converter():
    skl2onnx = pytest.importorskip("skl2onnx")
    from aucforest.export import register_skl2onnx

    register_skl2onnx()
    forest = forest_with_labels(np.array([2**63 + 1, 2**63 + 5], dtype=np.uint64))
    X = held_out(5)
    message = refusal(lambda: skl2onnx.to_onnx(forest, X[:1]))
    assert message == refusal(lambda: storable_labels(forest.classes_))


def test_treelite_carries_no_labels_and_exports_them_anyway():
    treelite = pytest.importorskip("treelite")
    forest = forest_with_labels(np.array([2**63 + 1, 2**63 + 5], dtype=np.uint64))
    X = held_out(50)
    proba = treelite.gtil.predict(aucforest.to_treelite(forest), X)[:, 0, :]
    np.testing.assert_allclose(proba, forest.predict_proba(X), rtol=0, atol=1e-12)


def test_uint64_labels_within_int64_export_exactly(tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    forest = forest_with_labels(np.array([2**63 - 1, 3], dtype=np.uint64))
    model = to_onnx(forest)
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    X = held_out(100)
    label, _ = session.run(None, {"X": X})
    assert label.tolist() == forest.predict(X).tolist()
    metadata = {p.key: p.value for p in model.metadata_props}
    assert json.loads(metadata["classes"]) == [3, 2**63 - 1]
    aucforest.save(forest, tmp_path / "m.npz")
    loaded = aucforest.load(tmp_path / "m.npz")
    assert loaded.classes_.dtype == np.uint64 and loaded.classes_.tolist() == [3, 2**63 - 1]


def test_a_text_label_ending_in_nul_is_refused_by_save_and_onnx_alike(tmp_path):
    """numpy's unicode arrays drop the NUL: the ONNX label "a" would stand for "a\\0"."""
    forest = forest_with_labels(np.array(["a\x00", "b"], dtype=object))
    assert "NUL" in refusal(lambda: aucforest.save(forest, tmp_path / "m.npz"))
    assert refusal(lambda: to_onnx(forest)) == refusal(
        lambda: aucforest.save(forest, tmp_path / "m.npz"))


def test_labels_of_mixed_types_are_refused_with_one_message(tmp_path):
    forest = forest_with_labels(["a", "b"])
    forest.classes_ = np.array([1, "a"], dtype=object)
    saved = refusal(lambda: aucforest.save(forest, tmp_path / "m.npz"))
    assert saved.startswith("class labels of type int, str cannot be stored")
    assert refusal(lambda: to_onnx(forest)) == saved


@pytest.mark.parametrize("classes, stored, dtype, plain", [
    (np.array([1, 2], dtype=np.int32), np.int64, "<i4", [1, 2]),
    (np.array([1, 2], dtype=np.uint64), np.int64, "<u8", [1, 2]),
    (np.array([0.5, 2.0], dtype=np.float32), np.float64, "<f4", [0.5, 2.0]),
    (np.array([False, True]), np.bool_, "|b1", [False, True]),
    (np.array(["a", "bc"]), np.dtype("<U2"), "<U2", ["a", "bc"]),
    (np.array(["a", "bc"], dtype=object), np.dtype("<U2"), "object", ["a", "bc"]),
    (np.array([3, 7], dtype=object), np.int64, "object", [3, 7]),
])
def test_the_codec_round_trips_every_kind(classes, stored, dtype, plain):
    values, restore = storable_labels(classes)
    assert values.dtype == stored and restore == dtype
    assert plain_labels(classes) == plain
    assert all(type(a) is type(b) for a, b in zip(plain_labels(classes), plain))
    back = restored_labels(values, restore)
    assert back.dtype == classes.dtype
    assert [(type(a), a) for a in back.tolist()] == [(type(a), a) for a in classes.tolist()]


def test_the_codec_refuses_what_a_file_cannot_hold():
    with pytest.raises(ValueError, match="does not fit the labels"):
        restored_labels(np.array([1, 2], dtype=np.int64), "<U3")
    with pytest.raises(ValueError, match="do not fit their dtype"):
        restored_labels(np.array([-1, 2], dtype=np.int64), "<u8")
    with pytest.raises(ValueError, match="distinct and sorted"):
        restored_labels(np.array([2, 1], dtype=np.int64), "<i8")


def test_the_command_line_exports_no_labels_a_model_file_cannot_hold(tmp_path, capsys):
    """``aucforest export`` reads a model file, whose labels passed the codec at
    save and pass it again at load: a file claiming uint64 labels that its int64
    values cannot be (-5 would be 2**64 - 5) is refused, nothing written."""
    from cli_files import run_main

    forest = forest_with_labels(np.array([-5, 3]))
    aucforest.save(forest, tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as stored:
        arrays = dict(stored)
    metadata = json.loads(arrays["metadata"].tobytes())
    metadata["classes_dtype"] = "<u8"
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    np.savez(tmp_path / "crafted.npz", **arrays)
    code, _, err = run_main(capsys, "export", tmp_path / "crafted.npz", tmp_path / "m.onnx")
    assert code == 1 and "class labels do not fit their dtype '<u8'" in err
    assert not (tmp_path / "m.onnx").exists()
