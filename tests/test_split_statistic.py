"""The AUC split statistic against the vignette's pairwise formula."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from aucforest import auc_split_statistic
from aucforest._sort import sort_doubles_for_tests, sort_for_tests, sort_indices_for_tests
from references import naive_auc_statistic

counts = st.one_of(st.just(0.0), st.floats(1e-3, 1e4), st.integers(0, 50).map(float))


@st.composite
def tables(draw):
    k = draw(st.integers(2, 12))
    table = draw(arrays(np.float64, (k, 2), elements=counts))
    present = table.sum(axis=1) > 0
    if present.sum() < 2:  # make two classes present
        table[:2] += 1.0
    return table


@settings(max_examples=300, deadline=None)
@given(tables())
def test_statistic_equals_naive_pairwise_formula(table):
    assert auc_split_statistic(table) == pytest.approx(naive_auc_statistic(table), abs=1e-12)


def test_absent_classes_are_left_out():
    # an all-zero row changes nothing (randomForestSRC would divide 0/0 here)
    table = np.array([[10, 0], [0, 10], [3, 4]], dtype=float)
    padded = np.vstack([table, [[0, 0], [0, 0]]])
    assert auc_split_statistic(padded) == auc_split_statistic(table)
    assert np.isfinite(auc_split_statistic(padded))


def test_binary_case_is_half_of_one_plus_tpr_minus_fpr():
    table = np.array([[30, 10], [5, 15]], dtype=float)  # class 0, class 1
    fpr, tpr = 10 / 40, 15 / 20
    assert auc_split_statistic(table) == pytest.approx((1 + abs(tpr - fpr)) / 2)


def test_perfect_and_useless_splits():
    assert auc_split_statistic([[5, 0], [0, 7]]) == 1.0
    assert auc_split_statistic([[5, 5], [7, 7]]) == 0.5


def test_class_weights_cancel():
    table = np.array([[3, 9], [8, 2], [4, 4]], dtype=float)
    weighted = table * np.array([[10.0], [0.1], [3.0]])
    assert auc_split_statistic(weighted) == pytest.approx(auc_split_statistic(table), abs=1e-12)


@pytest.mark.parametrize("bad, message", [
    (np.ones((3, 3)), "shape"),
    (np.array([[1.0, -1.0], [1.0, 1.0]]), "non-negative"),
    (np.array([[1.0, 1.0], [0.0, 0.0]]), "two classes"),
    (np.array([[np.nan, 1.0], [1.0, 1.0]]), "NaN"),
    (np.array([[np.inf, 1.0], [1.0, 1.0]]), "infinity"),
])
def test_bad_tables_raise(bad, message):
    with pytest.raises(ValueError, match=message):
        auc_split_statistic(bad)


finite_floats = st.floats(allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=150, deadline=None)
@given(st.one_of(
    arrays(np.float32, st.integers(0, 300), elements=st.integers(-5, 5).map(float)),
    arrays(np.float32, st.integers(0, 3000), elements=finite_floats),
    arrays(np.float32, st.integers(1000, 3000), elements=st.integers(-3, 3).map(float))))
def test_kernel_sort_orders_values_and_permutes_indices(values):
    sorted_values, order = sort_for_tests(values)
    np.testing.assert_array_equal(sorted_values, np.sort(values))
    np.testing.assert_array_equal(values[order], sorted_values)
    assert sorted(order) == list(range(values.size))


def test_kernel_sort_on_adversarial_inputs():
    for values in (np.arange(5000, 0, -1), np.zeros(5000), np.tile([2, 1, 3], 2000),
                   np.random.default_rng(0).normal(size=20000)):
        sorted_values, order = sort_for_tests(values)
        np.testing.assert_array_equal(sorted_values, np.sort(values.astype(np.float32)))
        np.testing.assert_array_equal(values.astype(np.float32)[order], sorted_values)


def test_kernel_sort_puts_nan_last_and_negative_zero_with_zero():
    values = np.array([np.nan, 1.0, -0.0, 0.0, -np.inf, np.inf, -1.0] * 300, dtype=np.float32)
    for chunk in (values[:7], values):
        sorted_values, order = sort_for_tests(chunk)
        finite = np.sort(chunk[~np.isnan(chunk)])
        np.testing.assert_array_equal(sorted_values[:finite.size], finite)
        assert np.all(np.isnan(sorted_values[finite.size:]))
        assert sorted(order) == list(range(chunk.size))


@settings(max_examples=150, deadline=None)
@given(st.one_of(
    arrays(np.float64, st.integers(0, 300), elements=st.integers(-3, 3).map(float)),
    arrays(np.float64, st.integers(0, 600),
           elements=st.floats(allow_nan=False, allow_subnormal=True)),
    arrays(np.float64, st.integers(17, 400), elements=st.sampled_from([0.0, -0.0, 1.0, 0.5]))))
def test_double_sort_of_the_statistic_equals_numpy(values):
    """The sort behind the AUC statistic's sum (shares with many exact ties,
    signed zeros, infinities, subnormals) gives numpy's order, bit for bit up
    to the sign of zero."""
    np.testing.assert_array_equal(sort_doubles_for_tests(values), np.sort(values))


def test_double_sort_on_adversarial_inputs():
    for values in (np.arange(5000.0, 0, -1), np.zeros(5000), np.tile([2.0, 1, 3], 2000),
                   np.repeat([1.0, 0.0], 3000)):
        np.testing.assert_array_equal(sort_doubles_for_tests(values), np.sort(values))


@pytest.mark.parametrize("scale", [1e-300, 1e300, 1e308])
def test_statistic_is_scale_free_up_to_the_largest_doubles(scale):
    table = np.array([[1.0, 1.0], [1.0, 0.0]])  # r = (1/2, 0): theta = 3/4
    assert auc_split_statistic(table * scale) == pytest.approx(0.75, rel=1e-12)


def test_sort_indices_orders_class_indices_as_numpy():
    # criterion_init_cases lists a node's classes with it, in class order
    rng = np.random.default_rng(11)
    for n in (0, 1, 2, 15, 16, 17, 300):
        values = rng.integers(0, 2**40, size=n)
        np.testing.assert_array_equal(sort_indices_for_tests(values), np.sort(values))
    values = rng.permutation(np.repeat(np.arange(50), 3))  # ties
    np.testing.assert_array_equal(sort_indices_for_tests(values), np.sort(values))
