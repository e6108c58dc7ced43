"""Model files under random damage (hypothesis): ValueError or a sound model, never a crash.

Random truncations and byte flips of a real model file, and crafted metadata
(every field set to values that have broken loaders: huge and negative
integers, 2**31 - 1 features, wrong types, deep nesting) must raise
ValueError or load a forest that predicts as the saved one (or, when only
a parameter changed, sound probabilities), without asking for memory out of
proportion to the file.

CI runs a few dozen examples per test (a few seconds; the ``ci`` profile of
conftest.py replays the same ones every run). To search longer, set
``AUCFOREST_FUZZ_EXAMPLES``, e.g.::

    AUCFOREST_FUZZ_EXAMPLES=5000 pytest tests/test_model_file_fuzz.py tests/test_csv_fuzz.py
"""
import copy
import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris

import aucforest
from aucforest import io as model_io

X, y = load_iris(return_X_y=True)
FOREST = aucforest.AUCForestClassifier(4, random_state=0).fit(X, y)


def fuzz_examples(default):
    """How many examples to try: ``default``, or AUCFOREST_FUZZ_EXAMPLES when set."""
    return int(os.environ.get("AUCFOREST_FUZZ_EXAMPLES", default))


@pytest.fixture(scope="module")
def model_bytes(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "forest.npz"
    aucforest.save(FOREST, path)
    return path.read_bytes()


def load_or_value_error(path):
    try:
        return aucforest.load(path)
    except ValueError:
        return None


@settings(max_examples=fuzz_examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 0.9999))
def test_random_truncations_raise_value_error(tmp_path, model_bytes, cut):
    path = tmp_path / "cut.npz"
    path.write_bytes(model_bytes[:int(len(model_bytes) * cut)])
    with pytest.raises(ValueError):
        aucforest.load(path)


@settings(max_examples=fuzz_examples(80), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.floats(0.0, 0.9999), st.integers(1, 255)),
                      min_size=1, max_size=8))
def test_random_byte_flips_raise_or_leave_the_model_unchanged(tmp_path, model_bytes, flips):
    damaged = bytearray(model_bytes)
    for where, mask in flips:
        damaged[int(where * len(damaged))] ^= mask
    path = tmp_path / "flipped.npz"
    path.write_bytes(bytes(damaged))
    loaded = load_or_value_error(path)
    if loaded is not None:  # the flips hit bytes nobody reads (zip comments, padding)
        np.testing.assert_array_equal(loaded.predict_proba(X), FOREST.predict_proba(X))


METADATA = json.loads(model_io.forest_to_arrays(FOREST)["metadata"].tobytes())
ODD_VALUES = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1, 2, 3, 4, 5, 2**31 - 1, 2**31, 2**63, 10**20,
                     -2**63, 1.5, float("nan"), "", "auto", "oob", "rfq", [], {}, [1, 2],
                     {"dict_items": [[0, 1.0]]}, "x" * 5000]),
    st.integers(), st.floats(), st.text(max_size=10),
    st.recursive(st.none() | st.integers(), lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=20))


@st.composite
def crafted_metadata(draw):
    """The saved forest's metadata with one to three fields (or parameters) changed.

    Each value is a copy: sampled_from hands out the same list and dict objects
    in every example, and a "params" replaced by one of them is then written
    into (which once made a dict that holds itself)."""
    metadata = json.loads(json.dumps(METADATA))
    for _ in range(draw(st.integers(1, 3))):
        value = copy.deepcopy(draw(ODD_VALUES))
        if draw(st.booleans()) and isinstance(metadata["params"], dict):
            metadata["params"][draw(st.sampled_from(sorted(METADATA["params"])))] = value
        else:
            metadata[draw(st.sampled_from(sorted(metadata)))] = value
    return metadata


@settings(max_examples=fuzz_examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(metadata=crafted_metadata())
def test_crafted_metadata_raises_or_loads_a_sound_forest(tmp_path, model_bytes, metadata):
    arrays = model_io.forest_to_arrays(FOREST)
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    path = tmp_path / "crafted.npz"
    np.savez_compressed(path, **arrays)
    loaded = load_or_value_error(path)
    if loaded is None:
        return
    # what the file declares is what it backs: no feature count beyond its size
    assert 8 * loaded.n_features_in_ <= 64 * os.path.getsize(path) + (1 << 20)
    assert loaded.n_features_in_ >= X.shape[1]  # the trees split on the first 4
    wide = np.zeros((len(X), loaded.n_features_in_))
    wide[:, :X.shape[1]] = X
    proba = loaded.predict_proba(wide)
    assert proba.shape == (len(X), 3) and np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(loaded.predict(wide)) <= set(loaded.classes_)
    importances = loaded.feature_importances_
    assert importances.shape == (loaded.n_features_in_,)
