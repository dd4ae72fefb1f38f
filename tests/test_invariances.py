"""Invariances: query permutation, padding, score shifts, the ideal order, thread counts."""
from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankjit
import reference as ref
from test_properties import batches

ALL_MEASURES = ["P@5", "R@10", "Success@3", "RR", "AP", "AP(denominator='r')@10", "Rprec", "DCG@10", "nDCG@10",
                "nDCG(gain='linear', discount='zipf')", "ERR@20", "pFound", "P(rel=2)@3", "RR@2"]
AVERAGE_MEASURES = [m for m in ALL_MEASURES if not m.startswith(("ERR", "pFound"))]
TIES = ["pessimistic", "optimistic", "stable", "average"]


def _measures(ties):
    return AVERAGE_MEASURES if ties == "average" else ALL_MEASURES


@given(data=st.data(), ties=st.sampled_from(TIES))
def test_permuting_queries_permutes_results(data, ties):
    b = data.draw(batches())
    res = rankjit.evaluate(b.labels, b.scores, _measures(ties), ties=ties, per_query=True, **b.kwargs())
    perm = np.array(data.draw(st.permutations(range(b.n_q))))
    kw = {}
    if "offsets" in b.layout:
        off = b.layout["offsets"]
        segs = [np.arange(off[q], off[q + 1]) for q in perm]
        idx = np.concatenate(segs) if segs else np.zeros(0, np.int64)
        lab, sco = b.labels[idx], b.scores[idx]
        kw["offsets"] = np.concatenate([[0], np.cumsum([len(s) for s in segs])]).astype(np.int64)
    else:
        lab, sco = b.labels[perm], b.scores[perm]
        if "lengths" in b.layout:
            kw["lengths"] = b.layout["lengths"][perm]
        if "mask" in b.layout:
            kw["mask"] = b.layout["mask"][perm]
    res_p = rankjit.evaluate(lab, sco, _measures(ties), ties=ties, per_query=True, **kw)
    for name in res:
        np.testing.assert_array_equal(res_p[name], res[name][perm], err_msg=name)


@given(data=st.data(), ties=st.sampled_from(TIES), extra=st.integers(1, 40), use_mask=st.booleans())
def test_adding_padding_changes_nothing(data, ties, extra, use_mask):
    b = data.draw(batches())
    names = _measures(ties)
    base = rankjit.evaluate(b.labels, b.scores, names, ties=ties, per_query=True, **b.kwargs())
    # rebuild as a padded matrix with `extra` more padded columns full of garbage
    lens = np.array([len(ys) for ys, _ in b.rows])
    width = int(lens.max(initial=0)) + extra
    lab = np.full((b.n_q, width), -9, dtype=np.int64)
    sco = np.full((b.n_q, width), np.nan, dtype=b.scores.dtype)
    mask = np.zeros((b.n_q, width), dtype=bool)
    rng = np.random.default_rng(b.notes["seed"])
    for q, (ys, ss) in enumerate(b.rows):
        pos = np.sort(rng.choice(width, size=len(ys), replace=False)) if use_mask else np.arange(len(ys))
        lab[q, pos] = ys
        sco[q, pos] = ss
        mask[q, pos] = True
    kw = {"mask": mask} if use_mask else {"lengths": lens}
    padded = rankjit.evaluate(lab, sco, names, ties=ties, per_query=True, **kw)
    for name in names:
        np.testing.assert_array_equal(padded[name], base[name], err_msg=name)


@given(data=st.data(), ties=st.sampled_from(TIES), shift=st.sampled_from([1.0, -7.0, 1024.0, 2.0**20]),
       scale=st.sampled_from([1.0, 0.5, 4.0]))
def test_shifting_scores_changes_nothing(data, ties, shift, scale):
    # small integer scores: x * scale + shift is exact, so the order (and every tie) is preserved
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_q, width = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 9 if ties == "average" else 60))
    labels = rng.choice(5, size=(n_q, width), p=[0.5, 0.2, 0.15, 0.1, 0.05])
    scores = rng.integers(-3, 4 if ties == "average" and width > 7 else 20, size=(n_q, width)).astype(np.float64)
    if ties == "average" and width > 7:
        scores = np.array([rng.permutation(width) // 2 for _ in range(n_q)], dtype=np.float64)  # tie pairs only
    names = _measures(ties)
    a = rankjit.evaluate(labels, scores, names, ties=ties, per_query=True)
    b = rankjit.evaluate(labels, scores * scale + shift, names, ties=ties, per_query=True)
    c = rankjit.evaluate(labels, (scores * scale + shift).astype(np.float32), names, ties=ties, per_query=True)
    for name in names:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
        np.testing.assert_array_equal(a[name], c[name], err_msg=name)


@given(seed=st.integers(0, 2**32 - 1), ties=st.sampled_from(TIES),
       gain=st.sampled_from(["exp2", "linear", "array"]), discount=st.sampled_from(["log2", "zipf", "logb"]),
       k=st.one_of(st.none(), st.integers(1, 15)))
def test_ideal_order_has_ndcg_one(seed, ties, gain, discount, k):
    rng = np.random.default_rng(seed)
    n_q, width = 5, int(rng.integers(1, 8 if ties == "average" else 40))
    labels = rng.choice(5, size=(n_q, width), p=[0.5, 0.2, 0.15, 0.1, 0.05])
    labels[0] = 0  # no gain at all: the empty value, not 1
    labels[1:, 0] = 3  # every other row has a graded document
    if gain == "array":
        g = np.array([0.0, 1.0, 1.0, 5.0, 4.0])  # not monotone in the grade: the ideal order follows the gain
        gain_arg = g
    else:
        g = 2.0 ** np.arange(5) - 1 if gain == "exp2" else np.arange(5.0)
        gain_arg = gain
    scores = g[labels] + 0.0  # score = gain: ranking by score is an ideal order (ties only between equal gains)
    got = rankjit.ndcg(labels, scores, k, gain=gain_arg, discount=discount, base=3.0, ties=ties, empty="nan")
    assert np.isnan(got[0])
    np.testing.assert_allclose(got[1:], 1.0, rtol=1e-12)
    # the reverse order is never better than the ideal one
    worst = rankjit.ndcg(labels, -scores, k, gain=gain_arg, discount=discount, base=3.0, ties=ties)
    assert (worst[1:] <= 1.0 + 1e-12).all()


def test_ndcg_and_ap_in_unit_interval():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 5, size=(300, 30))
    scores = rng.integers(0, 6, size=(300, 30)).astype(np.float64)
    for ties in ("pessimistic", "optimistic", "stable"):
        res = rankjit.evaluate(labels, scores, ["nDCG@10", "AP", "ERR", "pFound", "R@10", "P@10"], ties=ties,
                               per_query=True)
        for name, v in res.items():
            assert ((v >= 0) & (v <= 1 + 1e-12)).all(), name
    # pessimistic <= stable <= optimistic for every measure (ties never inflate / always inflate)
    res = {t: rankjit.evaluate(labels, scores, ["nDCG@10", "AP", "P@10", "RR"] + (["ERR@5"] if t != "average" else []),
                               ties=t, per_query=True)
           for t in ("pessimistic", "stable", "optimistic", "average")}
    for name in res["stable"]:
        assert (res["pessimistic"][name] <= res["stable"][name] + 1e-12).all(), name
        assert (res["stable"][name] <= res["optimistic"][name] + 1e-12).all(), name
    for name in ("nDCG@10", "AP", "P@10", "RR"):
        assert (res["pessimistic"][name] <= res["average"][name] + 1e-12).all(), name
        assert (res["average"][name] <= res["optimistic"][name] + 1e-12).all(), name


# ------------------------------------------------------------------------------------------
# threads


def _big_batch(seed=0, n_q=5000, width=40):
    rng = np.random.default_rng(seed)
    labels = rng.choice(5, size=(n_q, width), p=[0.6, 0.2, 0.1, 0.06, 0.04]).astype(np.int8)
    scores = rng.integers(0, 25, size=(n_q, width)).astype(np.float32)  # plenty of ties
    lengths = rng.integers(0, width + 1, size=n_q)
    return labels, scores, lengths


def _layout(labels, scores, lengths, layout):
    """The same rows as (labels, scores, layout kwargs) in the requested layout."""
    if layout == "lengths":
        return labels, scores, {"lengths": lengths}
    if layout == "mask":
        return labels, scores, {"mask": np.arange(labels.shape[1])[None, :] < lengths[:, None]}
    flat_y = np.concatenate([labels[q, :n] for q, n in enumerate(lengths)])
    flat_s = np.concatenate([scores[q, :n] for q, n in enumerate(lengths)])
    return flat_y, flat_s, {"offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)}


@pytest.mark.jit
@pytest.mark.parametrize("layout", ["lengths", "mask", "offsets"])
@pytest.mark.parametrize("ties", TIES)
def test_one_and_two_threads_bitwise_identical(ties, layout):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has fewer than 2 threads")
    labels, scores, lengths = _big_batch()
    lab, sco, kw = _layout(labels, scores, lengths, layout)
    names = _measures(ties)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = rankjit.evaluate(lab, sco, names, ties=ties, per_query=True, **kw)
        numba.set_num_threads(2)
        two = rankjit.evaluate(lab, sco, names, ties=ties, per_query=True, **kw)
        two_fn = rankjit.ndcg(lab, sco, 10, ties=ties, **kw)
    finally:
        numba.set_num_threads(before)
    for name in names:
        assert np.array_equal(one[name], two[name], equal_nan=True), name
    assert np.array_equal(two_fn, one["nDCG@10"])
    # and the parallel results are right: a sample of queries against the reference
    for q in (0, 1, 2047, 2048, 4999):
        n = int(lengths[q])
        for name, fam, k in (("nDCG@10", "nDCG", 10), ("AP", "AP", None), ("P@5", "P", 5)):
            if ties == "average" and n_arrangements_too_large(scores[q, :n]):
                continue
            exp = ref.measure(fam, labels[q, :n].tolist(), scores[q, :n].tolist(), k, ties)
            np.testing.assert_allclose(two[name][q], exp, rtol=1e-12, atol=1e-12)


@pytest.mark.jit
@pytest.mark.parametrize("layout", ["lengths", "mask", "offsets"])
@pytest.mark.parametrize("ties", TIES)
def test_means_without_per_query_arrays(ties, layout):
    # evaluate() without per_query sums chunks in the kernel: the means agree with the exact
    # mean of the per-query values (math.fsum) to a few ulps, and do not depend on threads
    import math

    labels, scores, lengths = _big_batch()
    lab, sco, kw = _layout(labels, scores, lengths, layout)
    names = _measures(ties)
    per_query = rankjit.evaluate(lab, sco, names, ties=ties, per_query=True, **kw)
    before = numba.get_num_threads()
    try:
        means = {}
        for n_threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(n_threads)
            means[n_threads] = rankjit.evaluate(lab, sco, names, ties=ties, **kw)
    finally:
        numba.set_num_threads(before)
    first = means[1]
    assert list(first) == names
    for name in names:
        values = per_query[name]
        exact = math.fsum(values) / values.size
        assert isinstance(first[name], float)
        assert abs(first[name] - exact) <= 4 * np.spacing(max(abs(exact), 1e-300)), name
        for other in means.values():
            assert other[name] == first[name], name  # bitwise, any thread count


def n_arrangements_too_large(scores):
    return ref.n_arrangements([float(s) for s in scores]) > ref.MAX_ARRANGEMENTS


@pytest.mark.jit
def test_caller_thread_settings_untouched():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has fewer than 2 threads")
    labels, scores, lengths = _big_batch(1, n_q=3000, width=20)
    before = numba.get_num_threads()
    layer = numba.config.THREADING_LAYER
    try:
        for n_threads in (1, 2):
            numba.set_num_threads(n_threads)
            rankjit.evaluate(labels, scores, ALL_MEASURES, lengths=lengths)
            assert numba.get_num_threads() == n_threads
            rankjit.ndcg(labels[:5], scores[:5], 10)  # a small (serial) batch too
            assert numba.get_num_threads() == n_threads
            assert numba.config.THREADING_LAYER == layer
    finally:
        numba.set_num_threads(before)
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("ties", ["pessimistic", "average"])
@pytest.mark.parametrize("padding", ["none", "lengths", "mask"])
def test_labels_dtype_changes_nothing(ties, padding):
    # the engine narrows integer grades 0..255 to uint8 (a view for int8, else a copy): every
    # dtype holding the same grades gives bitwise the same values, padding cells included
    rng = np.random.default_rng(11)
    n_q, width = 40, 23
    grades = rng.choice(4, size=(n_q, width), p=[0.6, 0.2, 0.15, 0.05])
    scores = rng.integers(0, 9, size=(n_q, width)).astype(np.float32)  # ties
    kw = {}
    if padding == "lengths":
        kw["lengths"] = rng.integers(0, width + 1, n_q)
    elif padding == "mask":
        kw["mask"] = rng.random((n_q, width)) < 0.8
    names = ["nDCG@5", "AP", "P@3", "RR", "Rprec", "DCG(gain='linear')"]
    if ties != "average":
        names += ["ERR@10", "pFound"]
    ref = rankjit.evaluate(grades.astype(np.int8), scores, names, ties=ties, per_query=True, **kw)
    for dtype in (np.uint8, np.int16, np.uint16, np.int32, np.int64, np.uint64, np.float32, np.float64):
        labels = grades.astype(dtype)
        if padding != "none":  # padding cells hold values no real label may have
            fill = np.nan if labels.dtype.kind == "f" else np.iinfo(dtype).max
            pad = ~kw["mask"] if padding == "mask" else np.arange(width) >= kw["lengths"][:, None]
            labels[pad] = fill
        got = rankjit.evaluate(labels, scores, names, ties=ties, per_query=True, **kw)
        for name in names:
            assert np.array_equal(got[name], ref[name], equal_nan=True), (dtype, name)
    big = grades * 100  # grades beyond uint8: kept in their own dtype
    a = rankjit.evaluate(big, scores, ["nDCG(gain='linear')@5", "AP(rel=100)"], ties=ties, per_query=True, **kw)
    b = rankjit.evaluate(big.astype(np.float64), scores, ["nDCG(gain='linear')@5", "AP(rel=100)"], ties=ties,
                         per_query=True, **kw)
    for name in a:
        assert np.array_equal(a[name], b[name], equal_nan=True)


@pytest.mark.parametrize("ties", ["pessimistic", "average"])
@pytest.mark.parametrize("gain", ["exp2", "linear"])
def test_a_query_does_not_depend_on_the_other_queries(ties, gain):
    # a grade above 62 (exp2) or a fractional label elsewhere in the call makes the plan use the
    # gains themselves instead of a by-grade table; each query's nDCG must keep its bits
    rng = np.random.default_rng(5)
    n_q, width = 30, 12
    grades = rng.choice(5, size=(n_q, width), p=[0.5, 0.2, 0.15, 0.1, 0.05]).astype(np.float64)
    grades[0, :3] = 3  # the row of the issue: [3, 3, 3] (a run of equal gains)
    scores = rng.integers(0, 6, size=(n_q, width)).astype(np.float64)  # ties
    names = ["nDCG@5", "nDCG", f"nDCG(gain='{gain}', discount='zipf')@8"]
    alone = rankjit.evaluate(grades, scores, names, ties=ties, per_query=True)
    for other in (np.full((1, width), 100.0), np.full((1, width), 0.5)):
        mixed = rankjit.evaluate(np.vstack([grades, other]), np.vstack([scores, scores[:1]]), names, ties=ties,
                                 per_query=True)
        for name in names:
            assert np.array_equal(mixed[name][:n_q], alone[name]), (other[0, 0], name)
