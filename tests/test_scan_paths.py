"""The label and score scan has two paths that must agree: numpy over a dense batch, the
compiled kernel over padded ones.  An all-True mask sends the same data down the compiled
path, so every finding (and the error it raises) can be compared."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankjit._validation import as_batch, scan


def _outcome(labels, scores, mask, **kwargs):
    batch = as_batch(labels, scores, mask=mask)
    try:
        scan(batch, **kwargs)
    except ValueError as exc:
        return "error", str(exc)
    return "ok", batch.max_label, batch.integer_labels, batch.first_fraction


@given(
    n_q=st.integers(1, 6),
    n_d=st.integers(1, 9),
    seed=st.integers(0, 2**32 - 1),
    labels_dtype=st.sampled_from([np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64]),
    scores_dtype=st.sampled_from([np.float32, np.float64]),
    faults=st.lists(st.sampled_from(["nan_score", "negative", "fraction", "nan_label", "inf_label"]), max_size=3),
    check_scores=st.booleans(),
    allow_negative=st.booleans(),
)
def test_dense_numpy_scan_equals_compiled_scan(n_q, n_d, seed, labels_dtype, scores_dtype, faults, check_scores,
                                               allow_negative):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 5, (n_q, n_d)).astype(labels_dtype)
    scores = rng.random((n_q, n_d)).astype(scores_dtype)
    for fault in faults:
        q, d = rng.integers(n_q), rng.integers(n_d)
        if fault == "nan_score":
            scores[q, d] = np.nan
        elif fault == "negative" and labels.dtype.kind != "u":
            labels[q, d] = -1
        elif labels.dtype.kind == "f":
            labels[q, d] = {"fraction": 0.5, "nan_label": np.nan, "inf_label": np.inf}.get(fault, labels[q, d])
    kwargs = dict(check_scores=check_scores, allow_negative=allow_negative)
    dense = _outcome(labels, scores, None, **kwargs)
    compiled = _outcome(labels, scores, np.ones(labels.shape, dtype=bool), **kwargs)
    assert dense == compiled


@pytest.mark.parametrize("check_scores", [True, False])
def test_dense_scan_of_empty_rows(check_scores):
    batch = as_batch(np.zeros(0, np.int8), np.zeros(0, np.float32), offsets=[0, 0, 0])
    scan(batch, check_scores=check_scores)
    assert batch.max_label == 0.0 and batch.integer_labels


@pytest.mark.parametrize("dtype", [np.int8, np.float64])
def test_dense_scan_spans_several_tasks(monkeypatch, dtype):
    # findings in a later task of the numpy scan keep their flat positions
    from rankjit import _validation

    monkeypatch.setattr(_validation, "_DENSE_SCAN_STEP", 7)
    labels = np.ones((5, 6), dtype=dtype)
    labels[3, 4] = -2
    with pytest.raises(ValueError, match=r"negative label -2(\.0)? in query 3 at position 4"):
        scan(as_batch(labels, np.zeros((5, 6))))
    scores = np.zeros((5, 6))
    scores[4, 1] = np.nan
    with pytest.raises(ValueError, match="NaN score in query 4 at position 1"):
        scan(as_batch(np.ones((5, 6), dtype=dtype), scores))
