"""The engine's fast paths against the plain-Python reference, on the inputs that reach them.

* Pruning: with every cutoff <= 16 and rows of >= 16 documents, documents scoring below a
  bound on the 16th best score are dropped before ranking, and the valued documents are
  ranked among the remaining candidates only.  Only a batch whose first rows hold many
  valued documents compiles it (``many_valued_rows``); forced either way, the values are
  bitwise the same.  Tie-heavy rows (scores from a pool of a few
  values, -0.0 and +0.0, infinities) are where a wrong bound or a wrong count would show.
* The IDCG from grade counts: packed byte counters (grades 0..7, no padding, rows of at
  most 255 documents; a batch of such rows only compiles no other count) and one pass per
  grade otherwise (padding, grades above 7, longer rows); both against the reference's
  sorted ideal.
* The NaN test of the scores, fused into the kernel: the error names the first query and
  position, for every public entry point, and NaN in padding is ignored.

Expected values come from :mod:`reference` (rankings written from the definitions).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

import rankjit

TOL = dict(rtol=1e-12, atol=1e-12)
POOL = np.array([-math.inf, -1.0, -0.0, 0.0, 0.25, 0.5, 1.0, 2.0, math.inf])


def _batch(seed, n_q, width, *, pool, max_grade, score_dtype=np.float64, label_dtype=np.int8, p_zero=0.6):
    rng = np.random.default_rng(seed)
    if pool:
        scores = rng.choice(POOL, size=(n_q, width))
    else:
        scores = rng.normal(size=(n_q, width)).round(1)  # distinct-ish, with natural ties
    p = np.full(max_grade + 1, (1.0 - p_zero) / max_grade)
    p[0] = p_zero
    labels = rng.choice(max_grade + 1, size=(n_q, width), p=p)
    return labels.astype(label_dtype), scores.astype(score_dtype)


def _reference(family, labels, scores, k, ties, **params):
    return ref.measure_batch(family, labels, scores, k, ties, **params)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    width=st.integers(16, 90),
    k=st.integers(1, 16),
    pool=st.booleans(),
    ties=st.sampled_from(["pessimistic", "optimistic", "stable"]),
    score_dtype=st.sampled_from([np.float32, np.float64]),
)
def test_pruned_ranking_matches_reference(seed, width, k, pool, ties, score_dtype):
    labels, scores = _batch(seed, 5, width, pool=pool, max_grade=4, score_dtype=score_dtype)
    names = [f"nDCG@{k}", f"P@{k}", f"RR@{k}", f"AP@{k}", f"ERR@{k}", f"DCG@{k}"]
    got = rankjit.evaluate(labels, scores, names, ties=ties, per_query=True)
    for name, family in zip(names, ["nDCG", "P", "RR", "AP", "ERR", "DCG"]):
        np.testing.assert_allclose(got[name], _reference(family, labels, scores, k, ties), **TOL, err_msg=name)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
@pytest.mark.parametrize("k", [1, 10, 16, 17, 20])
def test_pruning_on_tie_heavy_rows_and_ragged_batches(ties, k):
    # a cutoff of 17 or 20 must not prune; ragged rows shorter than 16 are not pruned either
    rng = np.random.default_rng(k)
    lens = rng.integers(0, 60, size=40)
    lens[:3] = [16, 15, 17]
    offsets = np.concatenate([[0], np.cumsum(lens)])
    labels = rng.choice(5, size=offsets[-1], p=[0.5, 0.2, 0.15, 0.1, 0.05]).astype(np.int16)
    scores = rng.choice(POOL[1:-1], size=offsets[-1]).astype(np.float32)
    got = rankjit.ndcg(labels, scores, k, offsets=offsets, ties=ties)
    expected = ref.measure_batch("nDCG", labels, scores, k, ties, offsets=offsets)
    np.testing.assert_allclose(got, expected, **TOL)


def test_pruning_keeps_a_document_tied_with_the_bound():
    # 16 documents share the top score with one relevant document among them: the bound is that
    # score, so nothing scoring it may be dropped; below it every document is dropped
    scores = np.array([[5.0] * 17 + [1.0] * 10])
    labels = np.zeros_like(scores, dtype=np.int8)
    labels[0, 16] = 3  # the last of the tied top group
    labels[0, 20] = 4  # far below the cutoff
    for ties in ("pessimistic", "optimistic", "stable"):
        for k in (1, 10, 16):
            got = rankjit.evaluate(labels, scores, [f"nDCG@{k}", f"P@{k}"], ties=ties, per_query=True)
            for name, fam in ((f"nDCG@{k}", "nDCG"), (f"P@{k}", "P")):
                np.testing.assert_allclose(got[name], ref.measure_batch(fam, labels, scores, k, ties), **TOL)


@pytest.mark.parametrize("width", [40, 255, 256, 300, 510, 511, 766, 1000])
@pytest.mark.parametrize("max_grade", [1, 4, 7, 8, 12])
def test_ideal_dcg_histograms(width, max_grade):
    # packed counters for grades <= 7 in rows of <= 255 documents, one count per grade for
    # grades above 7, longer rows or with padding
    labels, scores = _batch(width * 100 + max_grade, 6, width, pool=False, max_grade=max_grade, p_zero=0.3)
    labels[0] = max_grade  # a row of one grade only (a count > 255 in one byte's grade)
    labels[1] = 0  # a row with nothing relevant
    labels[2, : width // 2] = 1  # one grade in more than half the row
    for gain in ("exp2", "linear"):
        for k in (5, None, width - 1):
            got = rankjit.ndcg(labels, scores, k, gain=gain)
            expected = ref.measure_batch("nDCG", labels, scores, k, "pessimistic", gain=gain)
            np.testing.assert_allclose(got, expected, **TOL)
            # the same rows in a padded batch (a mask: the grade-by-grade count)
            padded_labels = np.pad(labels, ((0, 0), (0, 3)), constant_values=9)
            padded_scores = np.pad(scores, ((0, 0), (0, 3)), constant_values=np.inf)
            mask = np.ones(padded_labels.shape, dtype=bool)
            mask[:, width:] = False
            got = rankjit.ndcg(padded_labels, padded_scores, k, gain=gain, mask=mask)
            np.testing.assert_allclose(got, expected, **TOL)


def test_ideal_dcg_gain_array_with_zero_and_negative_gains():
    # trailing zero gains are skipped; a zero gain ahead of a negative one still takes its ranks
    labels, scores = _batch(7, 8, 30, pool=True, max_grade=3, p_zero=0.3)
    for gains in ([0.0, 1.0, 0.0, 5.0], [0.0, 2.0, 1.0, 0.0], [0.0, 3.0, -1.0, 0.5]):
        got = rankjit.ndcg(labels, scores, 6, gain=np.array(gains))
        expected = ref.measure_batch("nDCG", labels, scores, 6, "pessimistic", gain=np.array(gains))
        np.testing.assert_allclose(got, expected, **TOL)


# ---- the fused NaN test ---------------------------------------------------------------------------------

NAN_MESSAGE = r"NaN score in query 3 at position 17; replace NaN scores"


def _with_nan():
    labels, scores = _batch(1, 6, 40, pool=False, max_grade=4, score_dtype=np.float32)
    scores[3, 17] = np.nan
    scores[5, 2] = np.nan  # a later one: the first is reported
    return labels, scores


@pytest.mark.parametrize("call", [
    lambda y, s: rankjit.ndcg(y, s, 10),
    lambda y, s: rankjit.precision(y, s, 5),
    lambda y, s: rankjit.ap(y, s),
    lambda y, s: rankjit.evaluate(y, s, ["nDCG@10", "AP", "ERR@20"]),
    lambda y, s: rankjit.evaluate(y, s, ["nDCG@10"], ties="average"),
    lambda y, s: rankjit.evaluate_systems(y, np.stack([np.zeros_like(s), s]), ["P@5"]),
])
def test_nan_score_error_names_the_first_position(call):
    labels, scores = _with_nan()
    with pytest.raises(ValueError, match=NAN_MESSAGE):
        call(labels, scores)


@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_nan_score_error_in_a_large_parallel_batch():
    # many chunks: the first NaN in query order is reported, whichever thread finds it first
    labels, scores = _batch(3, 5000, 20, pool=False, max_grade=4)
    scores[4500, 3] = np.nan
    scores[1200, 19] = np.nan
    with pytest.raises(ValueError, match=r"NaN score in query 1200 at position 19"):
        rankjit.ndcg(labels, scores, 10)
    stack = np.stack([scores * 0.0, scores])
    with pytest.raises(ValueError, match=r"NaN score in query 1200 at position 19"):
        rankjit.evaluate_systems(labels, stack, ["nDCG@10", "RR"])


def test_nan_in_padding_is_ignored():
    labels, scores = _batch(2, 4, 30, pool=False, max_grade=4)
    padded = scores.copy()
    lengths = np.array([30, 20, 25, 30])
    padded[1, 20:] = np.nan
    got = rankjit.ndcg(labels, padded, 10, lengths=lengths)
    np.testing.assert_allclose(got, ref.measure_batch("nDCG", labels, scores, 10, "pessimistic", lengths=lengths),
                               **TOL)
    masked = scores.copy()
    mask = np.ones_like(scores, dtype=bool)
    mask[2, 5] = False
    masked[2, 5] = np.nan
    got = rankjit.ndcg(labels, masked, 10, mask=mask)
    np.testing.assert_allclose(got, ref.measure_batch("nDCG", labels, scores, 10, "pessimistic", mask=mask), **TOL)
    with pytest.raises(ValueError, match=r"NaN score in query 1 at position 20"):
        rankjit.ndcg(labels, padded, 10)


# ---- R, the number of relevant documents ------------------------------------------------------------------


@pytest.mark.parametrize("label_dtype", [np.int8, np.uint8, np.int64, np.float32])
@pytest.mark.parametrize("rel", [0.5, 1, 1.5, 2, 4, 127, 200, 1e30])
def test_relevant_total_with_typed_and_float_thresholds(label_dtype, rel):
    # integer labels compare with ceil(rel) in their own dtype (or fall back to floats when
    # ceil(rel) does not fit); rel = 1 reuses the count of documents with label > 0
    labels, scores = _batch(int(rel * 10) % 97, 7, 40, pool=True, max_grade=4, label_dtype=label_dtype)
    lengths = np.array([40, 0, 12, 40, 39, 1, 25])
    mask = np.arange(40)[None, :] % 3 != 1
    mask = np.repeat(mask, 7, axis=0)
    for layout in ({}, {"lengths": lengths}, {"mask": mask}):
        names = [f"R(rel={rel})", f"AP(rel={rel})", f"Rprec(rel={rel})", f"R(rel={rel})@5", f"AP(rel={rel})@30"]
        got = rankjit.evaluate(labels, scores, names, per_query=True, **layout)
        for name, fam, k in zip(names, ["R", "AP", "Rprec", "R", "AP"], [None, None, None, 5, 30]):
            expected = ref.measure_batch(fam, labels, scores, k, "pessimistic", rel=rel, **layout)
            np.testing.assert_allclose(got[name], expected, **TOL, err_msg=f"{name} {layout.keys()}")


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
@pytest.mark.parametrize("score_dtype", [np.float32, np.float64])
def test_pruned_rows_with_many_valued_candidates_select_among_the_candidates(ties, score_dtype):
    # dense judgments and heavy ties: more valued candidates than the count path takes, so the
    # engine selects the top documents among the candidates (in input order) instead
    for seed in range(4):
        labels, scores = _batch(seed, 30, 100, pool=seed % 2 == 0, max_grade=4, score_dtype=score_dtype,
                                p_zero=0.1)
        for k in (3, 10, 16):
            names = [f"nDCG@{k}", f"P@{k}", f"ERR@{k}"]
            got = rankjit.evaluate(labels, scores, names, ties=ties, per_query=True)
            for name, fam in zip(names, ["nDCG", "P", "ERR"]):
                np.testing.assert_allclose(got[name], _reference(fam, labels, scores, k, ties), **TOL, err_msg=name)


def test_many_valued_rows_decides_on_the_first_rows_real_documents():
    from rankjit._kernels.engine import PRUNE_MIN_VALUED, PRUNE_SAMPLE, many_valued_rows

    def flat(counts, valued, width=None):
        # rows of `counts` documents of which the first `valued` have label 1, laid out in
        # `width` cells each (the rest padding of label 5), or back to back
        width = width or max(counts, default=0)
        labels = np.full(len(counts) * width, 5, dtype=np.int8) if width else np.zeros(0, np.int8)
        starts = np.arange(len(counts)) * width
        for s, c, v in zip(starts, counts, valued):
            labels[s:s + c] = 0
            labels[s:s + v] = 1
        return labels, starts, np.asarray(counts)

    over = PRUNE_MIN_VALUED + 1
    assert not many_valued_rows(*flat([], []))
    assert not many_valued_rows(*flat([100] * 32, [PRUNE_MIN_VALUED] * 32))
    assert many_valued_rows(*flat([100] * 32, [over] * 32))
    # one row in 16 of the sample is enough; fewer is not
    assert many_valued_rows(*flat([100] * 32, [over, over] + [0] * 30))
    assert not many_valued_rows(*flat([100] * 32, [over] + [0] * 31))
    # only the first PRUNE_SAMPLE rows are read
    assert not many_valued_rows(*flat([100] * (PRUNE_SAMPLE + 64), [0] * PRUNE_SAMPLE + [over] * 64))
    # padding cells (label 5 here) beyond a row's count are not counted
    assert not many_valued_rows(*flat([10] * 8, [10] * 8, width=200))


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
def test_results_do_not_depend_on_whether_the_pruning_is_compiled(ties, monkeypatch):
    # the sample only chooses the variant: forced either way, every value is bitwise the same
    from rankjit._kernels import engine

    labels, scores = _batch(3, 64, 100, pool=True, max_grade=4, p_zero=0.5)
    labels[::3] = 0  # sparse rows among dense ones
    names = ["nDCG@10", "P@5", "ERR@16", "AP@3"]
    runs, used = [], []
    compiled = engine.compiled
    monkeypatch.setattr(engine, "compiled", lambda variant: used.append(variant) or compiled(variant))
    for forced in (False, True):
        monkeypatch.setattr(engine, "many_valued_rows", lambda *a, forced=forced: forced)
        runs.append(rankjit.evaluate(labels, scores, names, ties=ties, per_query=True))
    assert [v.prune for v in used] == [False, True]
    for name in names:
        np.testing.assert_array_equal(runs[0][name], runs[1][name], err_msg=name)
        np.testing.assert_allclose(runs[0][name], _reference(name.split("@")[0], labels, scores,
                                                             int(name.split("@")[1]), ties), **TOL)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
@pytest.mark.parametrize("masked", [False, True])
def test_results_do_not_depend_on_whether_the_selection_is_compiled(ties, masked, monkeypatch):
    # rows of at most COUNT_ALL_MAX documents are all ranked by counting, whatever their number
    # of valued documents (Variant.select off); forced to the top-d selection instead
    # (COUNT_ALL_MAX = 0), every value is bitwise the same.  Dense, tie-heavy rows of 100
    # documents hold more valued documents than the count path's limit (64 for float32 scores)
    from rankjit._kernels import engine

    labels, scores = _batch(5, 48, 100, pool=True, max_grade=4, p_zero=0.1, score_dtype=np.float32)
    labels[::4] = 0  # sparse rows among dense ones
    labels[1::4, :90] = 0
    mask = None
    if masked:
        mask = np.ones(labels.shape, dtype=bool)
        mask[::3, 70:] = False
    names = ["nDCG@10", "P@5", "ERR@20", "AP@40", "AP", "nDCG", "Rprec", "RR"]
    runs, used = [], []
    compiled = engine.compiled
    monkeypatch.setattr(engine, "compiled", lambda variant: used.append(variant) or compiled(variant))
    for limit in (0, engine.COUNT_ALL_MAX):
        monkeypatch.setattr(engine, "COUNT_ALL_MAX", limit)
        runs.append(rankjit.evaluate(labels, scores, names, mask=mask, ties=ties, per_query=True))
    assert {v.select for v in used} == {True, False}
    assert not any(v.select for v in used[len(used) // 2:])
    for name in names:
        np.testing.assert_array_equal(runs[0][name], runs[1][name], err_msg=name)
        family, _, k = name.partition("@")
        expected = _reference(family, labels, scores, int(k) if k else None, ties, mask=mask)
        np.testing.assert_allclose(runs[1][name], expected, err_msg=name, **TOL)


@pytest.mark.parametrize("label_dtype", [np.int8, np.uint8])
def test_gain_array_longer_than_the_label_dtype(label_dtype):
    # grades 128 / 256 and up cannot occur in int8 / uint8 labels; their counts must be 0, not
    # the count of a grade they wrap around to
    labels, scores = _batch(11, 5, 30, pool=False, max_grade=3, label_dtype=label_dtype, p_zero=0.5)
    gains = np.arange(300, dtype=np.float64)
    got = rankjit.ndcg(labels, scores, 10, gain=gains)
    expected = ref.measure_batch("nDCG", labels, scores, 10, "pessimistic", gain=gains)
    np.testing.assert_allclose(got, expected, **TOL)


def _rank_order(scores, starts, counts, masked=False, ties="stable"):
    from rankjit._kernels.engine import rows_in_rank_order
    from rankjit._kernels.ranking import TIES_CODES

    return rows_in_rank_order(np.asarray(scores, dtype=np.float64), np.asarray(starts), np.asarray(counts), masked,
                              TIES_CODES[ties])


def test_rows_in_rank_order_decides_from_the_scores():
    starts, counts = [0, 3, 5], [3, 2, 4]
    falling = [3.0, 2.0, 1.0, 5.0, 4.0, 9.0, 9.0, 8.0, 7.0]  # a tie in the last row; rows rise at their borders
    assert _rank_order(falling, starts, counts, ties="stable")  # ties in input order: the rows are their ranking
    for ties in ("pessimistic", "optimistic", "average"):  # a tie these rules may reorder (average: never taken)
        assert not _rank_order(falling, starts, counts, ties=ties)
    strict = [3.0, 2.0, 1.0, 5.0, 4.0, 9.0, 8.5, 8.0, 7.0]
    for ties in ("pessimistic", "optimistic", "stable"):
        assert _rank_order(strict, starts, counts, ties=ties)
    assert not _rank_order(strict, starts, counts, ties="average")
    assert not _rank_order(strict, starts, counts, masked=True)  # padding: never taken as ranked
    assert not _rank_order([1.0, 2.0, 0.0] + strict[3:], starts, counts)  # the first row rises
    assert not _rank_order(strict[:6] + [7.0, 8.0, 6.0], starts, counts)  # a later row rises
    assert not _rank_order(strict[:7] + [math.nan, 6.0], starts, counts)  # NaN fails every comparison
    assert not _rank_order(strict + [0.0], [0, 4, 6], [3, 2, 4])  # rows not back to back
    assert _rank_order([1.0], [0], [1]) and _rank_order([2.0, 1.0, 3.0], [0, 2, 3], [2, 1, 0])  # one-document rows
    assert not _rank_order([], np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert _rank_order([5.0, 1.0, 2.0], [0], [0]) and _rank_order([5.0, 1.0, 2.0], [1], [1])  # nothing to compare
    # the first RANKED_SAMPLE rows are tested first, then every row: a rise past the sample counts too
    from rankjit._kernels.engine import RANKED_SAMPLE

    n_q = 2 * RANKED_SAMPLE
    rows = np.tile(np.array([3.0, 2.0, 1.0]), (n_q, 1))
    starts, counts = np.arange(0, 3 * n_q, 3), np.full(n_q, 3)
    assert _rank_order(rows.ravel(), starts, counts, ties="pessimistic")
    rows[RANKED_SAMPLE + 10] = [1.0, 2.0, 3.0]
    assert not _rank_order(rows.ravel(), starts, counts, ties="pessimistic")


def _ranked_rows(labels, scores):
    """Each row sorted by score descending, ties in input order: a batch that is its own stable ranking."""
    order = np.argsort(-scores, axis=1, kind="stable")
    return np.take_along_axis(labels, order, axis=1), np.take_along_axis(scores, order, axis=1)


@pytest.mark.parametrize("names", [
    ["nDCG@10", "P@5", "ERR@20", "AP@40", "AP", "nDCG", "Rprec", "RR", "R@100"],  # label 0 gets no value: its rows
    ["nDCG@10", "P(rel=0)@30", "AP"],  # every document counts (P(rel=0)): the whole rows, to the deepest cutoff
])
@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("ties", ["stable", "pessimistic"])
def test_results_do_not_depend_on_whether_rows_come_ranked(names, ragged, ties, monkeypatch):
    # rows in rank order (trec_eval's aligned runs) are kept as they are (Variant.ranked): no count, selection or
    # sort.  Forced through the ranking instead, every value is bitwise the same, and both equal the reference.
    from rankjit._kernels import engine

    labels, scores = _batch(7, 40, 150, pool=True, max_grade=4, p_zero=0.7)
    labels, scores = _ranked_rows(labels, scores)
    if ties != "stable":  # strictly falling scores: no tie for the rule to reorder
        scores = -np.tile(np.arange(150, dtype=np.float64), (40, 1))
    kwargs = dict(ties=ties, per_query=True)
    flat_labels, flat_scores = labels, scores
    if ragged:  # rows of 0 to 150 documents, back to back
        lengths = np.random.default_rng(1).integers(0, 151, size=40)
        lengths[3] = 0
        flat_labels = np.concatenate([row[:n] for row, n in zip(labels, lengths)])
        flat_scores = np.concatenate([row[:n] for row, n in zip(scores, lengths)])
        kwargs["offsets"] = np.concatenate([[0], np.cumsum(lengths)])
    runs, used = [], []
    compiled, decide = engine.compiled, engine.rows_in_rank_order
    monkeypatch.setattr(engine, "compiled", lambda variant: used.append(variant) or compiled(variant))
    for ranked in (lambda *a: False, decide):  # forced through the ranking, then as rankjit decides
        monkeypatch.setattr(engine, "rows_in_rank_order", ranked)
        runs.append(rankjit.evaluate(flat_labels, flat_scores, names, **kwargs))
    assert {v.ranked for v in used[:len(used) // 2]} == {False}
    assert {v.ranked for v in used[len(used) // 2:]} == {True}
    assert not any(v.select or v.deep or v.full or v.prune for v in used[len(used) // 2:])
    for name in names:
        np.testing.assert_array_equal(runs[0][name], runs[1][name], err_msg=name)
    if not ragged:
        for name in names:
            family, _, k = name.partition("@")
            params = {"rel": 0} if family == "P(rel=0)" else {}
            expected = _reference(family.split("(")[0], labels, scores, int(k) if k else None, ties, **params)
            np.testing.assert_allclose(runs[1][name], expected, err_msg=name, **TOL)


def test_ranked_rows_still_report_a_nan_score():
    # a row of one document has nothing to compare: rows_in_rank_order takes it as ranked, and the rank
    # pass's own NaN test reports it
    labels = np.array([1, 0, 1, 1])
    scores = np.array([2.0, 1.0, math.nan, 0.5])
    assert _rank_order(scores, [0, 2, 3], [2, 1, 1])
    with pytest.raises(ValueError, match="NaN score"):
        rankjit.evaluate(labels, scores, ["nDCG@10", "AP"], offsets=np.array([0, 2, 3, 4]), ties="stable")


def test_trec_eval_and_pytrec_eval_rows_reach_the_engine_ranked(tmp_path, monkeypatch, capsys):
    # the aligned rows of rankjit trec_eval and of the pytrec_eval front end are built in trec_eval's order:
    # every engine call they make keeps them (Variant.ranked), with ties among the run's scores too
    from rankjit._kernels import engine
    from rankjit.cli import main
    from rankjit.compat import pytrec_eval

    rng = np.random.default_rng(3)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in rng.permutation(60)[:30]} for q in range(5)}
    run = {f"q{q}": {f"d{d}": float(rng.integers(0, 4)) for d in rng.permutation(60)[:40]} for q in range(5)}
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {i} {s} t\n" for q, docs in run.items()
                                          for i, (d, s) in enumerate(docs.items())))
    used = []
    compiled = engine.compiled
    monkeypatch.setattr(engine, "compiled", lambda variant: used.append(variant) or compiled(variant))
    for options in ([], ["-m", "all_trec"], ["-J", "-m", "ndcg_cut.10"], ["-c", "-m", "map"]):
        assert main(["trec_eval", *options, str(tmp_path / "qrels"), str(tmp_path / "run")]) == 0
    pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut", "P", "recall", "bpref"}).evaluate(run)
    capsys.readouterr()
    assert used and all(v.ranked for v in used), [v.name() for v in used]


def _runs_of_tied_scores(seed, n_q, width, n_levels, top_share, dtype):
    """Rows like a boosting model's first rounds: most documents share one score, the others a few levels."""
    rng = np.random.default_rng(seed)
    levels = rng.normal(size=n_levels)
    scores = rng.choice(levels, size=(n_q, width))
    scores[rng.random((n_q, width)) < top_share] = levels.max() if seed % 2 else np.median(levels)
    labels = ((rng.random((n_q, width)) < 0.5) * rng.integers(1, 5, (n_q, width))).astype(np.int8)
    return labels, scores.astype(dtype)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    width=st.integers(2, 128),
    n_levels=st.integers(1, 6),
    top_share=st.sampled_from([0.0, 0.5, 0.9, 1.0]),
    k=st.integers(1, 40),
    masked=st.booleans(),
    score_dtype=st.sampled_from([np.float32, np.float64]),
)
def test_stable_ranks_of_runs_of_tied_scores_match_reference(seed, width, n_levels, top_share, k, masked,
                                                              score_dtype):
    # Under the stable rule the count path counts once per run of equal scores among the valued
    # documents and then adds the tied documents before each (ranking.stable_count_ranks); rows
    # where most documents share one score, with the cutoff above, inside and below the runs,
    # padded or not, against the reference's sort by (score, position)
    labels, scores = _runs_of_tied_scores(seed, 6, width, n_levels, top_share, score_dtype)
    mask = None
    if masked:
        mask = np.random.default_rng(seed + 1).random(labels.shape) < 0.8
    names = [f"nDCG@{k}", f"P@{k}", f"RR@{k}", f"AP@{k}"]
    got = rankjit.evaluate(labels, scores, names, mask=mask, ties="stable", per_query=True)
    for name, family in zip(names, ["nDCG", "P", "RR", "AP"]):
        expected = _reference(family, labels, scores, k, "stable", mask=mask)
        np.testing.assert_allclose(got[name], expected, **TOL, err_msg=name)


@pytest.mark.parametrize("k", [1, 3, 10, 25])
def test_stable_ranks_when_tied_runs_interleave_and_fall_below_the_cutoff(k):
    # valued documents of two tied scores alternate along the row (each run has one
    # document, so the settled count of one score is never continued by the next); a run
    # of one score after its first documents fell below the cutoff; unvalued tied
    # documents before the valued ones push them down
    row_scores = np.array([1.0, 2.0] * 20 + [2.0] * 30 + [0.5] * 10)
    row_labels = np.zeros(row_scores.shape[0], dtype=np.int8)
    row_labels[5:40] = 1 + np.arange(35) % 3  # both scores, alternating
    row_labels[45:70:2] = 4  # later documents of the top score: below the cutoff once enough came first
    row_labels[-3:] = 2
    scores = np.stack([row_scores, row_scores[::-1], np.roll(row_scores, 7)])
    labels = np.stack([row_labels, row_labels[::-1], np.roll(row_labels, 7)])
    names = [f"nDCG@{k}", f"P@{k}", f"AP@{k}"]
    for s in (scores, scores.astype(np.float32)):
        got = rankjit.evaluate(labels, s, names, ties="stable", per_query=True)
        for name, family in zip(names, ["nDCG", "P", "AP"]):
            np.testing.assert_allclose(got[name], _reference(family, labels, s, k, "stable"), **TOL, err_msg=name)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    width=st.integers(1, 80),
    n_levels=st.integers(1, 5),
    limit=st.integers(1, 90),
    masked=st.booleans(),
)
def test_stable_count_ranks_gives_each_document_its_stable_rank(seed, width, n_levels, limit, masked):
    # the kernel itself, so that the engine's retry with count_ranks (were two stable ranks ever
    # equal) cannot hide a wrong count: every selected document gets its rank by (score
    # descending, position), real documents only; one ranked below ``limit`` may get 0 instead
    from rankjit._kernels import ranking

    rng = np.random.default_rng(seed)
    start = 3  # the row inside a flat array, after another row's documents
    levels = rng.normal(size=n_levels)
    flat_scores = rng.choice(levels, size=start + width + 2)
    flat_scores[rng.random(flat_scores.shape[0]) < 0.6] = levels[0]  # long runs of one score
    flat_labels = rng.integers(0, 3, size=flat_scores.shape[0]).astype(np.int8)
    mask = rng.random(flat_scores.shape[0]) < 0.8 if masked else np.ones(flat_scores.shape[0], dtype=bool)
    row = range(start, start + width)
    real = [p for p in row if mask[p]]
    order = sorted(real, key=lambda p: (-flat_scores[p], p))
    true_rank = {p: r + 1 for r, p in enumerate(order)}
    sel = np.array([p for p in real if flat_labels[p] > 0], dtype=np.int64)
    ranks = np.full(width, -7, dtype=np.int64)
    heads = np.empty(width, dtype=np.int64)
    ranking.stable_count_ranks(flat_scores, flat_labels, start, width, mask, masked, sel, sel.shape[0], ranks, heads,
                               limit, ranking.TIES_STABLE)
    for i, p in enumerate(sel):
        if true_rank[p] <= limit:
            assert ranks[i] == true_rank[p], (i, p)
        else:
            assert ranks[i] in (0, true_rank[p]), (i, p)
    kept = ranks[:sel.shape[0]][ranks[:sel.shape[0]] > 0]
    assert np.unique(kept).shape[0] == kept.shape[0]
