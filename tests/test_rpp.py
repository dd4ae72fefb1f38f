"""RPP / rpp_matrix against a plain-Python reference written from the definition, and properties."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankjit
import rankjit.preference as P
from reference import preference as pref_ref

# ---------------------------------------------------------------------------


@st.composite
def pairs(draw, max_q=3, max_docs=8):
    n_q = draw(st.integers(1, max_q))
    w = draw(st.integers(1, max_docs))
    labels = np.array(draw(st.lists(st.sampled_from([0, 0, 1, 2, 3]), min_size=n_q * w, max_size=n_q * w)),
                      np.int64).reshape(n_q, w)
    sa = np.array(draw(st.lists(st.integers(0, 4), min_size=n_q * w, max_size=n_q * w)), float).reshape(n_q, w)
    sb = np.array(draw(st.lists(st.integers(0, 4), min_size=n_q * w, max_size=n_q * w)), float).reshape(n_q, w)
    lengths = np.array(draw(st.lists(st.integers(0, w), min_size=n_q, max_size=n_q)), np.int64)
    return labels, sa, sb, lengths


WEIGHTS = st.sampled_from(["uniform", "inverse", "dcg", (1.0, 0.5), (3.0, 0.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 5.0)])
TIES = st.sampled_from(["pessimistic", "optimistic", "stable"])


def assert_close(got, want):
    if want is None:
        assert math.isnan(got), got
    else:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-14), (got, want)


@settings(max_examples=200, deadline=None)
@given(pairs(), st.one_of(st.none(), st.integers(1, 6)), WEIGHTS, TIES, st.booleans(), st.data())
def test_matches_reference(batch, k, weights, ties, graded, data):
    labels, sa, sb, lengths = batch
    n_q, w = labels.shape
    # what each system retrieved: a prefix (lengths_a) and a mask (mask_b)
    la = np.array([data.draw(st.integers(0, w)) for _ in range(n_q)], np.int64)
    mb = np.array(data.draw(st.lists(st.booleans(), min_size=n_q * w, max_size=n_q * w))).reshape(n_q, w)
    got = P.rpp(labels, sa, sb, k, weights, graded=graded, lengths=lengths, lengths_a=la, mask_b=mb, ties=ties)
    for q in range(n_q):
        n = lengths[q]
        want = pref_ref.rpp_query(labels[q, :n].tolist(), sa[q, :n].tolist(), sb[q, :n].tolist(),
                             [j < la[q] for j in range(n)], mb[q, :n].tolist(), k, weights, ties, graded=graded)
        assert_close(got[q], want)


@settings(max_examples=100, deadline=None)
@given(pairs(), st.integers(1, 3), st.one_of(st.none(), st.integers(1, 6)), WEIGHTS, TIES, st.data())
def test_subtopic_rpp_matches_reference(batch, n_sub, k, weights, ties, data):
    _, sa, sb, lengths = batch
    n_q, w = sa.shape
    nug = np.array(data.draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=n_q * w * n_sub,
                                      max_size=n_q * w * n_sub)), np.int8).reshape(n_q, w, n_sub)
    got = P.rpp(None, sa, sb, k, weights, nuggets=nug, lengths=lengths, ties=ties)
    for q in range(n_q):
        n = lengths[q]
        want = pref_ref.rpp_query(None, sa[q, :n].tolist(), sb[q, :n].tolist(), [True] * n, [True] * n, k, weights,
                             ties, nug=nug[q, :n].tolist())
        assert_close(got[q], want)


@settings(max_examples=100, deadline=None)
@given(pairs(), st.one_of(st.none(), st.integers(1, 6)), WEIGHTS, st.booleans(), st.integers(0, 3))
def test_properties(batch, k, weights, graded, extra):
    labels, sa, sb, lengths = batch
    ab = P.rpp(labels, sa, sb, k, weights, graded=graded, lengths=lengths)
    ba = P.rpp(labels, sb, sa, k, weights, graded=graded, lengths=lengths)
    aa = P.rpp(labels, sa, sa, k, weights, graded=graded, lengths=lengths)
    has = ~np.isnan(ab)
    np.testing.assert_array_equal(np.isnan(ab), np.isnan(ba))
    np.testing.assert_array_equal(ab[has], -ba[has])  # exact antisymmetry
    np.testing.assert_array_equal(aa[has], 0.0)
    assert ((ab[has] >= -1.0) & (ab[has] <= 1.0)).all()
    # padding invariance: garbage beyond lengths, and extra padded columns
    n_q, w = labels.shape
    pad = lambda x, v: np.concatenate([x, np.full((n_q, extra), v, x.dtype)], axis=1)  # noqa: E731
    l2, a2, b2 = pad(labels, -5), pad(sa, np.nan), pad(sb, np.nan)
    for q in range(n_q):
        l2[q, lengths[q]:] = -5
        a2[q, lengths[q]:] = np.nan
        b2[q, lengths[q]:] = np.nan
    np.testing.assert_array_equal(P.rpp(l2, a2, b2, k, weights, graded=graded, lengths=lengths), ab)
    mask = np.zeros(l2.shape, bool)
    for q in range(n_q):
        mask[q, : lengths[q]] = True
    np.testing.assert_array_equal(P.rpp(l2, a2, b2, k, weights, graded=graded, mask=mask), ab)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    flat = lambda x: np.concatenate([x[q, : lengths[q]] for q in range(n_q)])  # noqa: E731
    np.testing.assert_array_equal(
        P.rpp(flat(labels), flat(sa), flat(sb), k, weights, graded=graded, offsets=offsets), ab)


@settings(max_examples=60, deadline=None)
@given(pairs(), st.integers(1, 4), st.one_of(st.none(), st.integers(1, 6)), WEIGHTS, st.booleans(), st.data())
def test_matrix_equals_pairwise(batch, n_sys, k, weights, graded, data):
    labels, sa, _, lengths = batch
    n_q, w = labels.shape
    stack = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n_sys * n_q * w, max_size=n_sys * n_q * w)),
                     float).reshape(n_sys, n_q, w)
    sl = np.array(data.draw(st.lists(st.integers(0, w), min_size=n_sys * n_q, max_size=n_sys * n_q)),
                  np.int64).reshape(n_sys, n_q)
    M, pq = P.rpp_matrix(labels, stack, k, weights, graded=graded, lengths=lengths, system_lengths=sl,
                         per_query=True)
    assert M.shape == (n_sys, n_sys) and pq.shape == (n_q, n_sys, n_sys)
    for a in range(n_sys):
        for b in range(n_sys):
            v = P.rpp(labels, stack[a], stack[b], k, weights, graded=graded, lengths=lengths, lengths_a=sl[a],
                      lengths_b=sl[b])
            np.testing.assert_array_equal(pq[:, a, b], v)
            if np.isnan(v).all():
                assert math.isnan(M[a, b])
            else:
                assert M[a, b] == pytest.approx(np.nanmean(v), rel=1e-12, abs=1e-15)
    np.testing.assert_array_equal(M, -M.T)
    # empty="zero": queries without relevant documents count as 0
    Mz = P.rpp_matrix(labels, stack, k, weights, graded=graded, lengths=lengths, system_lengths=sl, empty="zero")
    np.testing.assert_allclose(Mz, np.nan_to_num(pq).mean(axis=0), rtol=1e-12, atol=1e-15)


def test_hand_examples():
    labels = np.array([[1, 0, 1, 0]])
    a = np.array([[4.0, 3.0, 2.0, 1.0]])  # relevant at ranks 1 and 3
    b = np.array([[1.0, 4.0, 3.0, 2.0]])  # relevant at ranks 2 and 4
    assert P.rpp(labels, a, b).tolist() == [1.0]
    assert P.rpp(labels, b, a).tolist() == [-1.0]
    # k = 2: a finds (1, inf), b finds (2, inf): only the first recall level differs
    assert P.rpp(labels, a, b, k=2).tolist() == [0.5]
    # inverse weights with a tie at level 1: a = (1, 3), b = (1, 4) -> p(2) = (1/2) / (1 + 1/2) = 1/3
    b2 = np.array([[4.0, 2.0, 1.0, 3.0]])
    assert P.rpp(labels, a, b2, weights="inverse").tolist() == [pytest.approx(1 / 3)]
    # graded: grades 1 and 2; level 1 (3 docs) and level 2 (1 doc) weighted 3 : 1
    gl = np.array([[2, 0, 1, 1]])
    # a: ranks of relevant (>= 1): 1, 3, 4; b (order d1 d2 d3 d0): 2, 3, 4 -> level 1 = +1/3
    # level 2 (doc 0): a rank 1, b rank 4 -> +1
    assert P.rpp(gl, a, b, graded=True).tolist() == [pytest.approx((3 * (1 / 3) + 1 * 1) / 4)]
    # unretrieved (mask) relevant documents are worse than any retrieved position; two unretrieved tie
    ma = np.array([[True, True, False, True]])
    assert P.rpp(labels, a, a, mask_a=ma).tolist() == [-0.5]
    assert P.rpp(labels, a, b, mask_a=ma, mask_b=np.array([[True, True, False, True]])).tolist() == [0.5]
    # no relevant document: NaN by default, 0 on request
    assert math.isnan(P.rpp(np.zeros((1, 4), int), a, b)[0])
    assert P.rpp(np.zeros((1, 4), int), a, b, empty="zero").tolist() == [0.0]


def test_evaluate_registration():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, (6, 10))
    a, b = rng.random((6, 10)), rng.random((6, 10))
    res = rankjit.evaluate(labels, a, ["RPP", "RPP(weights='inverse')@5", "rpp(graded=True)"], scores_b=b,
                           per_query=True, empty="nan")
    np.testing.assert_array_equal(res["RPP"], P.rpp(labels, a, b))
    np.testing.assert_array_equal(res["RPP(weights='inverse')@5"], P.rpp(labels, a, b, 5, "inverse"))
    np.testing.assert_array_equal(res["rpp(graded=True)"], P.rpp(labels, a, b, graded=True))
    with pytest.raises(ValueError, match="pass the second system's scores as scores_b="):
        rankjit.evaluate(labels, a, ["RPP"])


UNKNOWN_WEIGHTS = "unknown weights='harmonic'; valid values: 'uniform', 'inverse', 'dcg', or a 1-D array"


def test_bad_input():
    labels = np.array([[1, 0, 1]])
    s = np.array([[3.0, 2.0, 1.0]])
    with pytest.raises(ValueError, match=UNKNOWN_WEIGHTS):
        P.rpp(labels, s, s, weights="harmonic")
    with pytest.raises(ValueError, match=UNKNOWN_WEIGHTS):
        P.rpp_matrix(labels, np.stack([s, s]), weights="harmonic")
    with pytest.raises(ValueError, match="^weights must hold finite, non-negative weights$"):
        P.rpp(labels, s, s, weights=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"^weights must give the first recall level a weight > 0 \(weights are"):
        P.rpp(labels, s, s, weights=[0.0, 1.0])
    with pytest.raises(ValueError, match=r"scores_stack must be 3-D \(n_systems, n_queries, n_docs\), got shape \(1, 3\)"):
        P.rpp_matrix(labels, s)
    with pytest.raises(ValueError, match=r"scores_stack has shape \(2, 1, 4\); expected \(n_systems, \*\(1, 3\)\) to match labels"):
        P.rpp_matrix(labels, np.zeros((2, 1, 4)))
    with pytest.raises(ValueError, match=r"with offsets=|scores_stack must be 2-D"):
        P.rpp_matrix(labels.ravel(), np.zeros((2, 1, 3)), offsets=np.array([0, 3]))
    with pytest.raises(ValueError, match=r"scores_b has shape \(1, 2\), expected \(1, 3\)"):
        P.rpp(labels, s, s[:, :2])
    with pytest.raises(ValueError, match=r"system_lengths must have shape \(n_systems, n_queries\)"):
        P.rpp_matrix(labels, np.stack([s, s]), system_lengths=np.array([1, 2]))
    with pytest.raises(ValueError, match="NaN score in query 0 at position 1"):
        P.rpp(labels, s, np.array([[1.0, np.nan, 0.0]]))
    with pytest.raises(ValueError, match="pass labels or nuggets="):
        P.rpp(labels, s, s, nuggets=np.zeros((1, 3, 2)))
    with pytest.raises(ValueError, match="labels is None"):
        P.rpp(None, s, s)
    with pytest.raises(ValueError, match="unknown empty='one' in 'RPP'; valid values: 'nan' \\(drop the query\\), 'zero'"):
        P.rpp(labels, s, s, empty="one")
    with pytest.raises(ValueError, match="ties='average' is not available for RPP"):
        P.rpp(labels, s, s, ties="average")
    with pytest.raises(ValueError, match=r"nuggets must be 3-D"):
        P.rpp(None, s, s, nuggets=np.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"lengths_a must be 1-D with one entry per query"):
        P.rpp(labels, s, s, lengths_a=np.array([1, 2]))
    with pytest.raises(ValueError, match="negative label"):
        P.rpp(-labels, s, s)


@pytest.mark.jit
@pytest.mark.slow
def test_identical_for_any_thread_count():
    import numba

    rng = np.random.default_rng(7)
    labels = rng.integers(0, 3, (6000, 40))
    stack = rng.integers(0, 20, (4, 6000, 40)).astype(np.float64)
    before = numba.get_num_threads()
    out = []
    try:
        for t in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(t)
            out.append((P.rpp(labels, stack[0], stack[1], 10, graded=True),
                        P.rpp_matrix(labels, stack, 10, "dcg")))
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(out[0][0], out[-1][0])
    np.testing.assert_array_equal(out[0][1], out[-1][1])
