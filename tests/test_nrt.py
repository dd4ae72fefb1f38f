"""``rankjit._kernels.nrt.borrowed``: a view of the same memory, usable like the array itself."""
import numpy as np
import pytest

from rankjit._config import jit
from rankjit._kernels.nrt import borrowed


@jit
def _write_through_view(a, start, stop, value):
    view = borrowed(a)
    part = view[start:stop]  # a slice of the borrowed view
    for i in range(part.shape[0]):
        part[i] = value
    return view.shape[0], view.sum()


@jit
def _two_d(a):
    view = borrowed(a)
    row = view[1]
    return view.shape[0], view.shape[1], row[2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int64])
def test_borrowed_view_shares_memory_and_shape(dtype):
    a = np.arange(10).astype(dtype)
    n, total = _write_through_view(a, 2, 5, 7)
    expected = np.arange(10).astype(dtype)
    expected[2:5] = 7
    assert n == 10
    np.testing.assert_array_equal(a, expected)  # the writes reached the caller's array
    assert total == expected.sum()


def test_borrowed_view_of_a_2d_array_keeps_strides():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    assert _two_d(a) == (3, 4, 6)
    assert _two_d(np.asfortranarray(a)) == (3, 4, 6)


@pytest.mark.jit
def test_stack_floats_is_scratch_of_its_size_in_each_call():
    from rankjit._config import jit
    from rankjit._kernels.nrt import stack_floats

    @jit
    def lane_maxima(rows):
        out = np.empty(rows.shape[0])
        for q in range(rows.shape[0]):  # called in a loop: one stack slot, reused
            lanes = stack_floats(4)
            for j in range(4):
                lanes[j] = rows[q, j]
            for j in range(4, rows.shape[1]):
                lanes[j % 4] = max(lanes[j % 4], rows[q, j])
            out[q] = lanes[0] + lanes[1] + lanes[2] + lanes[3]
        return out, stack_floats(3).shape[0]

    rows = np.random.default_rng(0).random((50, 13))
    got, size = lane_maxima(rows)
    expected = [sum(max(r[j::4]) for j in range(4)) for r in rows]  # the max of each lane, summed
    assert size == 3
    np.testing.assert_allclose(got, expected, rtol=0, atol=0)
