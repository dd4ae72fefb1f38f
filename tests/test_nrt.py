"""``rankjit._nrt.borrowed``: a view of the same memory, usable like the array itself."""
import numpy as np
import pytest

from rankjit._config import jit
from rankjit._nrt import borrowed


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
