"""PyTorch adapter: padded [batch, slate] slates with -1 padding (allRank) or a mask.

The adapter's logic is tested on NumPy arrays (no torch needed) against
rankjit.evaluate on the same documents laid out as a ragged batch; the torch tests
(skipped without torch) check zero-copy reads and tensor outputs.
"""
from __future__ import annotations

import numpy as np
import pytest

import rankjit
from rankjit.integrations.torch import evaluate

MEASURES = ["nDCG@3", "AP", "RR", "P@2", "ERR@3"]


@pytest.fixture
def padded():
    rng = np.random.default_rng(7)
    lengths = np.array([5, 1, 3, 0, 4])
    width = 5
    labels = np.full((5, width), -1, dtype=np.int64)
    scores = rng.normal(size=(5, width))
    for i, n in enumerate(lengths):
        labels[i, :n] = rng.integers(0, 4, n)
    return scores, labels, lengths


def _ragged(scores, labels, lengths):
    flat_s = np.concatenate([scores[i, :n] for i, n in enumerate(lengths)])
    flat_y = np.concatenate([labels[i, :n] for i, n in enumerate(lengths)])
    return flat_s, flat_y, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def test_padding_label_matches_ragged_batch(padded):
    scores, labels, lengths = padded
    got = evaluate(scores, labels, MEASURES, per_query=True)
    s, y, off = _ragged(scores, labels, lengths)
    want = rankjit.evaluate(y, s, MEASURES, offsets=off, per_query=True)
    for m in MEASURES:
        np.testing.assert_array_equal(got[m], want[m])


def test_explicit_mask_ignores_labels_under_it(padded):
    scores, labels, lengths = padded
    mask = labels != -1
    garbage = np.where(mask, labels, 99)
    got = evaluate(scores, garbage, MEASURES, mask=mask)
    want = evaluate(scores, labels, MEASURES)
    assert got == want


def test_preset_applies(padded):
    scores, labels, lengths = padded
    s, y, off = _ragged(scores, labels, lengths)
    got = evaluate(scores, labels, ["nDCG@3"], compat="lightgbm", per_query=True)["nDCG@3"]
    want = rankjit.evaluate(y, s, ["nDCG(gain='exp2', empty='one')@3"], offsets=off, ties="stable", per_query=True)
    np.testing.assert_array_equal(got, want["nDCG(gain='exp2', empty='one')@3"])


@pytest.mark.parametrize("shape", [(6,), (2, 3, 1)])
def test_wrong_rank(shape):
    with pytest.raises(ValueError, match=r"must be a 2-D \[batch, slate\] tensor"):
        evaluate(np.zeros(shape), np.zeros(shape), "nDCG@5")


def test_shape_and_mask_errors():
    with pytest.raises(ValueError, match="same"):
        evaluate(np.zeros((2, 3)), np.zeros((2, 4)), "nDCG@5")
    with pytest.raises(ValueError, match="mask must be"):
        evaluate(np.zeros((2, 3)), np.zeros((2, 3)), "nDCG@5", mask=np.ones((3, 2), bool))
    with pytest.raises(TypeError, match="mask must be boolean"):
        evaluate(np.zeros((2, 3)), np.zeros((2, 3)), "nDCG@5", mask=np.ones((2, 3)))
    with pytest.raises(ValueError, match="unknown compat preset"):
        evaluate(np.zeros((2, 3)), np.zeros((2, 3)), "nDCG@5", compat="allrank")


def test_torch_tensors_read_without_copy(padded):
    torch = pytest.importorskip("torch")
    from rankjit.integrations.torch import _to_numpy

    scores, labels, lengths = padded
    ts = torch.tensor(scores, dtype=torch.float32, requires_grad=True)
    ty = torch.tensor(labels, dtype=torch.float32)
    view, is_torch = _to_numpy(ty, "labels")
    assert is_torch and np.shares_memory(view, ty.numpy())
    out = evaluate(ts, ty, MEASURES, per_query=True)
    assert all(isinstance(v, torch.Tensor) for v in out.values())
    want = evaluate(scores.astype(np.float32), labels, MEASURES, per_query=True)
    for m in MEASURES:
        np.testing.assert_array_equal(out[m].numpy(), want[m])
    means = evaluate(ts, ty, ["nDCG@3"])
    assert isinstance(means["nDCG@3"], float)


def test_torch_wrong_rank():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match=r"got 3 dimension\(s\)"):
        evaluate(torch.zeros(2, 3, 4), torch.zeros(2, 3, 4), "nDCG@5")
