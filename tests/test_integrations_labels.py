"""``narrow_labels``: the adapters' one-time int8 copy of whole-number float grades."""
from __future__ import annotations

import numpy as np
import pytest

import rankjit
from rankjit.integrations import narrow_labels


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_whole_number_grades_become_int8_with_equal_values(dtype):
    y = np.array([0, 1, 4, 127, 3, 0], dtype=dtype)
    out = narrow_labels(y)
    assert out.dtype == np.int8
    assert np.array_equal(out.astype(dtype), y)
    scores = np.linspace(1, 0, 6)
    offsets = np.array([0, 3, 6])
    for m in ("nDCG@3", "AP", "ERR(max_grade=127)@2", "P@2"):
        a = rankjit.evaluate(y, scores, [m], offsets=offsets, per_query=True)[m]
        b = rankjit.evaluate(out, scores, [m], offsets=offsets, per_query=True)[m]
        assert np.array_equal(a, b), m


@pytest.mark.parametrize("y", [
    np.array([0.0, 0.5, 1.0]),  # a fraction
    np.array([0.0, np.nan, 1.0]),  # NaN: validation must still see it
    np.array([0.0, -1.0, 2.0]),  # negative
    np.array([0.0, 128.0]),  # beyond int8
    np.array([0.0, np.inf]),
])
def test_other_labels_are_returned_unchanged(y):
    out = narrow_labels(y)
    assert out is y or (out.dtype == y.dtype and np.array_equal(out, y, equal_nan=True))


def test_integer_and_empty_labels_pass_through():
    y = np.array([0, 3, 1], dtype=np.int64)
    assert narrow_labels(y) is y
    e = np.zeros(0)
    assert narrow_labels(e) is e
