"""Model files under random damage (hypothesis): ValueError or an unchanged model, never a crash."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris

import aucforest

X, y = load_iris(return_X_y=True)
FOREST = aucforest.AUCForestClassifier(4, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def model_bytes(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "forest.npz"
    FOREST.save(path)
    return path.read_bytes()


def load_or_value_error(path):
    try:
        return aucforest.load(path)
    except ValueError:
        return None


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 0.9999))
def test_random_truncations_raise_value_error(tmp_path, model_bytes, cut):
    path = tmp_path / "cut.npz"
    path.write_bytes(model_bytes[:int(len(model_bytes) * cut)])
    with pytest.raises(ValueError):
        aucforest.load(path)


@settings(max_examples=80, deadline=None,
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
