"""alpha-DCG / alpha-nDCG / ERR-IA / nERR-IA / S-recall against plain-Python references, pyndeval and real data."""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankjit
import rankjit.diversity as D
from reference import diversity as div_ref

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "web2012"

def sets_of(nug_rows):
    return [frozenset(np.flatnonzero(np.asarray(row) > 0).tolist()) for row in nug_rows]


def call(kind, nuggets, scores, k, alpha, **kw):
    if kind == "alpha_ndcg":
        return D.alpha_ndcg(nuggets, scores, k, alpha, **kw)
    if kind == "alpha_dcg":  # the raw sum
        kw.pop("ideal", None)
        kw.pop("empty", None)
        return D.alpha_dcg(nuggets, scores, k, alpha, bound=False, **kw)
    if kind == "alpha_dcg_bound":
        return D.alpha_dcg(nuggets, scores, k, alpha, **kw)
    if kind == "err_ia":  # the mean over subtopics
        return D.err_ia(nuggets, scores, k, alpha, bound=False, **kw)
    if kind == "err_ia_bound":
        return D.err_ia(nuggets, scores, k, alpha, **kw)
    if kind == "nerr_ia":
        return D.err_ia(nuggets, scores, k, alpha, normalize=True, **kw)
    if kind == "p_ia":
        return D.p_ia(nuggets, scores, k, **kw)
    if kind == "ap_ia":
        return D.ap_ia(nuggets, scores, k, **kw)
    if kind in ("nrbp", "nnrbp"):
        return D.nrbp(nuggets, scores, k, alpha, div_ref.BETA, normalize=kind == "nnrbp", **kw)
    return D.s_recall(nuggets, scores, k, **kw)


KINDS = ["alpha_dcg", "alpha_ndcg", "err_ia", "nerr_ia", "s_recall"]
# kinds whose value at k beyond the row differs from k=None (a bound or P-IA's denominator runs to k)
KINDS_ALL = KINDS + ["alpha_dcg_bound", "err_ia_bound", "p_ia", "ap_ia", "nrbp", "nnrbp"]

# ---------------------------------------------------------------------------
# the worked example of Clarke et al. (alpha = 1/2)
# ---------------------------------------------------------------------------

# nuggets A..E; ranking d1..d8 then two documents without nuggets
WORKED = [{"A", "B"}, {"A"}, {"A"}, set(), {"C", "D"}, {"B"}, {"E"}, {"B"}, set(), set()]


def worked_example():
    names = "ABCDE"
    nug = np.zeros((1, len(WORKED), 5), dtype=np.int8)
    for j, s in enumerate(WORKED):
        for x in s:
            nug[0, j, names.index(x)] = 1
    scores = np.arange(len(WORKED), 0, -1, dtype=np.float64)[None, :]
    return nug, scores


def test_worked_example_gains_and_ndcg():
    nug, scores = worked_example()
    sets = sets_of(nug[0])
    # G = <2, 1/2, 1/4, 0, 2, 1/2, 1, 1/4, 0, 0> (exact dyadic values)
    assert div_ref.nugget_gains(sets, 0.5) == [2, 0.5, 0.25, 0, 2, 0.5, 1, 0.25, 0, 0]
    # greedy ideal G' = <2, 2, 1, 1/2, 1/2, 1/4, 1/4, 0, ...>
    assert div_ref.nugget_gains(div_ref.greedy_ideal_order(sets, 0.5, 10), 0.5) == [2, 2, 1, 0.5, 0.5, 0.25, 0.25, 0, 0, 0]
    got = [float(D.alpha_ndcg(nug, scores, k=k)[0]) for k in (1, 2, 3)]
    assert got[0] == 1.0
    assert round(got[1], 3) == 0.710
    assert round(got[2], 3) == 0.649
    # by hand: (2 + 0.5/log2 3) / (2 + 2/log2 3) and (... + 0.25/2) / (... + 1/2)
    l3 = math.log2(3)
    assert got[1] == pytest.approx((2 + 0.5 / l3) / (2 + 2 / l3), rel=1e-15)
    assert got[2] == pytest.approx((2 + 0.5 / l3 + 0.25 / 2) / (2 + 2 / l3 + 0.5), rel=1e-15)
    assert float(D.alpha_dcg(nug, scores, k=3, bound=False)[0]) == pytest.approx(2 + 0.5 / l3 + 0.125, rel=1e-15)
    # ndeval's alpha-DCG@3: divided by 5 nuggets * (1 + 1/2 / log2 3 + 1/4 / 2)
    assert float(D.alpha_dcg(nug, scores, k=3)[0]) == pytest.approx(
        (2 + 0.5 / l3 + 0.125) / (5 * (1 + 0.5 / l3 + 0.125)), rel=1e-15)


def test_worked_example_other_measures():
    nug, scores = worked_example()
    # S-recall@k: nuggets covered by the top k over the 5 nuggets
    assert D.s_recall(nug, scores, k=1).tolist() == [2 / 5]
    assert D.s_recall(nug, scores, k=5).tolist() == [4 / 5]
    assert D.s_recall(nug, scores, k=7).tolist() == [1.0]
    # raw ERR-IA@1 = (1/5) * (1/2 + 1/2) (nuggets A and B at rank 1)
    assert D.err_ia(nug, scores, k=1, bound=False).tolist() == [0.2]
    # raw ERR-IA@2: A at rank 2 adds 1/2 * 1/2 / 2
    assert float(D.err_ia(nug, scores, k=2, bound=False)[0]) == pytest.approx((0.5 + 0.5 + 0.125) / 5, rel=1e-15)
    # ndeval's ERR-IA@2 (default): (G1 / 1 + G2 / 2) / (5 * (1 + 1/2 / 2)) = (2 + 1/4) / (5 * 5/4)
    assert float(D.err_ia(nug, scores, k=2)[0]) == pytest.approx(2.25 / 6.25, rel=1e-15)
    # P-IA@2 = (2 + 1) nugget hits / (2 * 5); NRBP = 3/4 / 5 * sum_r G[r] / 2^{r-1}
    assert float(D.p_ia(nug, scores, k=2)[0]) == pytest.approx(3 / 10, rel=1e-15)
    gains = [2, 0.5, 0.25, 0, 2, 0.5, 1, 0.25, 0, 0]
    assert float(D.nrbp(nug, scores)[0]) == pytest.approx(
        0.75 / 5 * sum(g / 2 ** r for r, g in enumerate(gains)), rel=1e-15)


# ---------------------------------------------------------------------------
# property tests against the reference
# ---------------------------------------------------------------------------


@st.composite
def nugget_batches(draw, max_q=3, max_docs=7, max_sub=4):
    n_q = draw(st.integers(1, max_q))
    width = draw(st.integers(1, max_docs))
    n_sub = draw(st.integers(1, max_sub))
    cells = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=n_q * width * n_sub,
                          max_size=n_q * width * n_sub))
    nug = np.array(cells, dtype=np.int8).reshape(n_q, width, n_sub)
    sc = draw(st.lists(st.integers(0, 3), min_size=n_q * width, max_size=n_q * width))  # many ties
    scores = np.array(sc, dtype=np.float64).reshape(n_q, width)
    lengths = np.array(draw(st.lists(st.integers(0, width), min_size=n_q, max_size=n_q)), dtype=np.int64)
    return nug, scores, lengths


@settings(max_examples=150, deadline=None)
@given(nugget_batches(), st.sampled_from(KINDS_ALL), st.one_of(st.none(), st.integers(1, 10)),
       st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]), st.sampled_from(["pessimistic", "optimistic", "stable"]))
def test_matches_reference(batch, kind, k, alpha, ties):
    nug, scores, lengths = batch
    got = call(kind, nug, scores, k, alpha, lengths=lengths, ties=ties, empty="nan")
    for q in range(nug.shape[0]):
        n = lengths[q]
        want = div_ref.query(kind, sets_of(nug[q, :n]), scores[q, :n].tolist(), k, alpha, ties, empty=math.nan)
        if math.isnan(want):
            assert math.isnan(got[q]), (q, got[q])
        else:
            assert got[q] == pytest.approx(want, rel=1e-12, abs=1e-15), (q, got[q], want)


@settings(max_examples=80, deadline=None)
@given(nugget_batches(), st.sampled_from(KINDS_ALL), st.one_of(st.none(), st.integers(1, 10)),
       st.sampled_from([0.3, 0.5]), st.integers(0, 3), st.sampled_from(["pessimistic", "stable"]))
def test_padding_mask_and_ragged_agree(batch, kind, k, alpha, extra, ties):
    """lengths=, mask= (real documents scattered), offsets= and garbage in padded cells all agree."""
    nug, scores, lengths = batch
    base = call(kind, nug, scores, k, alpha, lengths=lengths, ties=ties)
    n_q, width, n_sub = nug.shape
    # padded cells with garbage, including negative nuggets and NaN scores
    nug2 = np.concatenate([nug, np.full((n_q, extra, n_sub), -7, np.int8)], axis=1)
    sc2 = np.concatenate([scores, np.full((n_q, extra), np.nan)], axis=1)
    for q in range(n_q):
        nug2[q, lengths[q]:width] = -3
        sc2[q, lengths[q]:width] = np.nan
    got = call(kind, nug2, sc2, k, alpha, lengths=lengths, ties=ties)
    np.testing.assert_array_equal(got, base)
    # the same real documents described by a mask
    mask = np.zeros((n_q, width + extra), bool)
    for q in range(n_q):
        mask[q, : lengths[q]] = True
    got = call(kind, nug2, sc2, k, alpha, mask=mask, ties=ties)
    np.testing.assert_array_equal(got, base)
    # ragged
    flat_nug = np.concatenate([nug[q, : lengths[q]] for q in range(n_q)])
    flat_sc = np.concatenate([scores[q, : lengths[q]] for q in range(n_q)])
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    got = call(kind, flat_nug, flat_sc, k, alpha, offsets=offsets, ties=ties)
    np.testing.assert_array_equal(got, base)


@settings(max_examples=80, deadline=None)
@given(nugget_batches(), st.integers(0, 5),
       st.sampled_from(["alpha_ndcg", "nerr_ia", "err_ia", "s_recall", "err_ia_bound", "alpha_dcg_bound", "p_ia",
                        "ap_ia", "nrbp", "nnrbp"]),
       st.one_of(st.none(), st.integers(1, 8)), st.data())
def test_explicit_ideal_set(batch, m, kind, k, data):
    nug, scores, lengths = batch
    n_q, _, n_sub = nug.shape
    cells = data.draw(st.lists(st.sampled_from([0, 1]), min_size=n_q * m * n_sub, max_size=n_q * m * n_sub))
    extra = np.array(cells, dtype=np.uint8).reshape(n_q, m, n_sub)
    # the judged set holds every document of the row (rankjit refuses an ideal set that does not) plus m more
    w = nug.shape[1]
    ideal = np.zeros((n_q, w + m, n_sub), np.uint8)
    for q in range(n_q):
        ideal[q, :lengths[q]] = nug[q, :lengths[q]] > 0
        ideal[q, w:] = extra[q]
    got = call(kind, nug, scores, k, 0.5, lengths=lengths, ideal=ideal, empty="nan")
    for q in range(n_q):
        n = lengths[q]
        want = div_ref.query(kind, sets_of(nug[q, :n]), scores[q, :n].tolist(), k, 0.5, "pessimistic",
                         ideal_sets=sets_of(ideal[q]), empty=math.nan)
        if math.isnan(want):
            assert math.isnan(got[q])
        else:
            assert got[q] == pytest.approx(want, rel=1e-12, abs=1e-15)
    # ragged ideal set: all-zero rows dropped, same values
    rows = [ideal[q][ideal[q].any(axis=1)] for q in range(n_q)]
    ioff = np.concatenate([[0], np.cumsum([r.shape[0] for r in rows])])
    flat = np.concatenate(rows) if ioff[-1] else np.zeros((0, n_sub), np.uint8)
    got2 = call(kind, nug, scores, k, 0.5, lengths=lengths, ideal=flat, ideal_offsets=ioff, empty="nan")
    np.testing.assert_array_equal(got2, got)


def test_ideal_set_with_unretrieved_judged_documents():
    # the row holds one document with nugget 0; the judged set also holds a document with nuggets 0 and 1
    nug = np.array([[[1, 0], [0, 0]]])
    scores = np.array([[2.0, 1.0]])
    ideal = np.array([[[1, 0], [1, 1]]])
    # greedy ideal: [1, 1] (gain 2), then [1, 0] (gain 1/2): 2 + 0.5 / log2(3)
    assert float(D.alpha_ndcg(nug, scores, k=2, ideal=ideal)[0]) == pytest.approx(1 / (2 + 0.5 / math.log2(3)))
    assert D.alpha_ndcg(nug, scores, k=2).tolist() == [1.0]  # row-only ideal
    assert D.s_recall(nug, scores, k=2, ideal=ideal).tolist() == [0.5]  # 2 subtopics have a relevant document


def test_k_beyond_row_and_empty_rows():
    nug = np.array([[[1, 0], [0, 1]], [[0, 0], [0, 0]]])
    scores = np.array([[1.0, 2.0], [1.0, 2.0]])
    lengths = np.array([2, 0])
    for kind in KINDS:
        a = call(kind, nug, scores, 1000, 0.5, lengths=lengths)
        b = call(kind, nug, scores, None, 0.5, lengths=lengths)
        np.testing.assert_array_equal(a, b)
        if kind != "alpha_dcg":
            assert a[1] == 0.0  # empty row, empty="zero"
            assert math.isnan(call(kind, nug, scores, 5, 0.5, lengths=lengths, empty="nan")[1])
            assert call(kind, nug, scores, 5, 0.5, lengths=lengths, empty="one")[1] == 1.0


def test_ties_use_nugget_counts():
    # equal scores: pessimistic puts the document with fewer nuggets first, optimistic the other
    nug = np.array([[[1, 0], [1, 1]]])
    scores = np.array([[1.0, 1.0]])
    assert D.s_recall(nug, scores, k=1, ties="pessimistic").tolist() == [0.5]
    assert D.s_recall(nug, scores, k=1, ties="optimistic").tolist() == [1.0]
    assert D.s_recall(nug, scores, k=1, ties="stable").tolist() == [0.5]


def test_grades_count_as_one_and_bool_float_dtypes():
    nug = np.array([[[3, 0], [0, 2], [4, 0]]])
    scores = np.array([[3.0, 2.0, 1.0]], dtype=np.float32)
    base = D.alpha_ndcg(nug, scores, k=3)
    for arr in (nug > 0, (nug > 0).astype(np.float64), (nug > 0).astype(np.int64)):
        np.testing.assert_array_equal(D.alpha_ndcg(arr, scores, k=3), base)


# ---------------------------------------------------------------------------
# evaluate() registration
# ---------------------------------------------------------------------------


def test_evaluate_names_match_functions():
    rng = np.random.default_rng(3)
    nug = (rng.random((5, 9, 4)) < 0.3).astype(np.int8)
    scores = rng.random((5, 9))
    labels = nug.sum(axis=2)
    res = rankjit.evaluate(
        labels, scores,
        ["alpha_nDCG(alpha=0.5)@20", "alpha-nDCG(alpha=0.25)@3", "alpha_DCG@5", "ERR_IA@20", "nERR-IA@4",
         "ERR_IA(normalize=True)@4", "S_recall@2", "strec@20"],
        nuggets=nug, per_query=True,
    )
    np.testing.assert_array_equal(res["alpha_nDCG(alpha=0.5)@20"], D.alpha_ndcg(nug, scores, 20))
    np.testing.assert_array_equal(res["alpha-nDCG(alpha=0.25)@3"], D.alpha_ndcg(nug, scores, 3, 0.25))
    np.testing.assert_array_equal(res["alpha_DCG@5"], D.alpha_dcg(nug, scores, 5))
    np.testing.assert_array_equal(res["ERR_IA@20"], D.err_ia(nug, scores, 20))
    np.testing.assert_array_equal(res["nERR-IA@4"], D.err_ia(nug, scores, 4, normalize=True))
    np.testing.assert_array_equal(res["ERR_IA(normalize=True)@4"], res["nERR-IA@4"])
    np.testing.assert_array_equal(res["S_recall@2"], D.s_recall(nug, scores, 2))
    np.testing.assert_array_equal(res["strec@20"], D.s_recall(nug, scores, 20))
    more = rankjit.evaluate(
        labels, scores,
        ["alpha_DCG(bound=False)@5", "ERR_IA(bound=False)@20", "StRecall@3", "P_IA@5", "P-IA(rel=2)@5", "AP_IA",
         "MAP-IA", "NRBP", "nNRBP(alpha=0.3, beta=0.7)"],
        nuggets=nug * 2, per_query=True,
    )
    np.testing.assert_array_equal(more["alpha_DCG(bound=False)@5"], D.alpha_dcg(nug, scores, 5, bound=False))
    np.testing.assert_array_equal(more["ERR_IA(bound=False)@20"], D.err_ia(nug, scores, 20, bound=False))
    np.testing.assert_array_equal(more["StRecall@3"], D.s_recall(nug, scores, 3))
    np.testing.assert_array_equal(more["P_IA@5"], D.p_ia(nug, scores, 5))
    np.testing.assert_array_equal(more["P-IA(rel=2)@5"], D.p_ia(nug, scores, 5))
    np.testing.assert_array_equal(more["AP_IA"], D.ap_ia(nug, scores))
    np.testing.assert_array_equal(more["MAP-IA"], more["AP_IA"])
    np.testing.assert_array_equal(more["NRBP"], D.nrbp(nug, scores))
    np.testing.assert_array_equal(more["nNRBP(alpha=0.3, beta=0.7)"], D.nrbp(nug, scores, None, 0.3, 0.7,
                                                                             normalize=True))
    with pytest.raises(ValueError, match="needs nugget judgments"):
        rankjit.evaluate(labels, scores, ["alpha_nDCG@20"])


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


def test_bad_input():
    nug = np.zeros((2, 3, 2))
    scores = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"nuggets must be 3-D \(n_queries, n_docs, n_subtopics\)"):
        D.alpha_ndcg(np.zeros((2, 3)), scores)
    with pytest.raises(ValueError, match=r"need scores of shape \(2, 4\)"):
        D.alpha_ndcg(np.zeros((2, 4, 2)), scores)
    with pytest.raises(ValueError, match="no subtopics"):
        D.alpha_ndcg(np.zeros((2, 3, 0)), scores)
    with pytest.raises(ValueError, match="with offsets=, nuggets must be 2-D"):
        D.alpha_ndcg(nug, scores.reshape(-1), offsets=np.array([0, 3, 6]))
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\], got 1.5"):
        D.alpha_ndcg(nug, scores, alpha=1.5)
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\], got -0.1"):
        D.err_ia(nug, scores, alpha=-0.1)
    with pytest.raises(TypeError, match="alpha must be a number"):
        D.alpha_dcg(nug, scores, alpha="0.5")
    bad = nug.copy()
    bad[1, 2, 0] = -1
    with pytest.raises(ValueError, match=r"invalid nugget judgment -1.0 in query 1, document 2"):
        D.alpha_ndcg(bad, scores)
    bad[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"invalid nugget judgment nan in query 1, document 2"):
        D.s_recall(bad, scores)
    s2 = scores.copy()
    s2[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN score in query 0 at position 1"):
        D.alpha_ndcg(nug, s2)
    with pytest.raises(ValueError, match="ties='average' is not available"):
        D.alpha_ndcg(nug, scores, ties="average")
    with pytest.raises(ValueError, match=r"ideal must have shape \(n_queries, n_judged, n_subtopics\)"):
        D.alpha_ndcg(nug, scores, ideal=np.zeros((2, 3, 5)))
    with pytest.raises(ValueError, match="in the ideal set of query 1, row 0"):
        D.alpha_ndcg(nug, scores, ideal=np.concatenate([np.zeros((1, 2, 2)), -np.ones((1, 2, 2))]))
    with pytest.raises(ValueError, match="k must be a positive integer"):
        D.alpha_ndcg(nug, scores, k=0)
    with pytest.raises(TypeError, match="nuggets must hold numbers"):
        D.alpha_ndcg(nug.astype(str), scores)
    with pytest.raises(ValueError, match="unknown empty"):
        D.alpha_ndcg(nug, scores, empty="none")


# ---------------------------------------------------------------------------
# pyndeval (ndeval) cross-check
# ---------------------------------------------------------------------------


def _pyndeval_run(pyndeval, nug, scores, alpha=0.5):
    """Evaluate with ndeval: every row document judged; docnos descend with the row index so that
    ndeval's greedy ties (to the larger docno) match ours (to the lowest index); scores distinct."""
    qrels, run = [], []
    n_q, width, n_sub = nug.shape
    for q in range(n_q):
        for j in range(width):
            doc = f"d{999 - j:03d}"
            for i in range(n_sub):
                qrels.append((f"q{q}", str(i + 1), doc, int(nug[q, j, i])))
            run.append((f"q{q}", doc, float(scores[q, j])))
    return pyndeval.RelevanceEvaluator(qrels, alpha=alpha).evaluate(run)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.5, 0.3, 0.8]))
def test_against_pyndeval_random(seed, alpha):
    pyndeval = pytest.importorskip("pyndeval")
    rng = np.random.default_rng(seed)
    n_q, width, n_sub = 4, int(rng.integers(3, 30)), int(rng.integers(1, 6))
    nug = (rng.random((n_q, width, n_sub)) < 0.25).astype(np.int8)
    nug[:, 0, 0] = 1  # every query has a relevant document
    rng.shuffle(nug, axis=1)
    scores = rng.permutation(n_q * width).reshape(n_q, width).astype(np.float64)  # distinct
    ref = _pyndeval_run(pyndeval, nug, scores, alpha)
    for k in (5, 10, 20):
        a = D.alpha_ndcg(nug, scores, k, alpha)
        e = D.err_ia(nug, scores, k, alpha, normalize=True)
        s = D.s_recall(nug, scores, k)
        for q in range(n_q):
            r = ref[f"q{q}"]
            assert a[q] == pytest.approx(r[f"alpha-nDCG@{k}"], rel=1e-9, abs=1e-12)
            assert e[q] == pytest.approx(r[f"nERR-IA@{k}"], rel=1e-9, abs=1e-12)
            assert s[q] == pytest.approx(r[f"strec@{k}"], rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------------------
# real data: TREC 2012 Web track diversity qrels and two runs, against pyndeval
# ---------------------------------------------------------------------------


def _read_qrels(path):
    qrels = defaultdict(lambda: defaultdict(dict))  # qid -> docno -> subtopic -> judgment
    subtopics = defaultdict(set)
    for line in open(path):
        qid, sub, doc, j = line.split()
        qrels[qid][doc][int(sub)] = int(j)
        subtopics[qid].add(int(sub))
    return qrels, subtopics


def _read_run(path):
    run = defaultdict(list)
    for line in open(path):
        qid, _, doc, rank, score, _ = line.split()
        run[qid].append((int(rank), doc))
    return run


@pytest.mark.skipif(not DATA.is_dir(), reason=f"real data not found at {DATA}")
@pytest.mark.parametrize("run_name", ["run.ql.cata.txt", "run.rm.cata.txt"])
def test_real_data_against_pyndeval(run_name):
    pyndeval = pytest.importorskip("pyndeval")
    qrels, subtopics = _read_qrels(DATA / "qrels.diversity-ndeval.txt")
    run = _read_run(DATA / run_name)
    qids = sorted(q for q in run if q in qrels)
    assert len(qids) >= 40
    n_sub = max(max(s) for s in subtopics.values())
    width = max(len(run[q]) for q in qids)
    max_judged = max(len(qrels[q]) for q in qids)
    nug = np.zeros((len(qids), width, n_sub), np.int8)
    scores = np.full((len(qids), width), -np.inf)
    lengths = np.zeros(len(qids), np.int64)
    ideal = np.zeros((len(qids), max_judged, n_sub), np.int8)
    for qi, q in enumerate(qids):
        docs = sorted(run[q])
        lengths[qi] = len(docs)
        for j, (rank, doc) in enumerate(docs):
            scores[qi, j] = -rank  # ndeval orders a run by rank
            for sub, jud in qrels[q].get(doc, {}).items():
                nug[qi, j, sub - 1] = jud
        # judged documents by descending docno: our greedy ties (lowest index) = ndeval's (larger docno)
        for j, doc in enumerate(sorted(qrels[q], reverse=True)):
            for sub, jud in qrels[q][doc].items():
                ideal[qi, j, sub - 1] = jud
    ev = pyndeval.RelevanceEvaluator(
        [(q, str(s), d, j) for q in qids for d, subs in qrels[q].items() for s, j in subs.items()]
    )
    ref = ev.evaluate([(q, doc, float(-rank)) for q in qids for rank, doc in run[q]])
    compared = 0
    for k in (5, 10, 20):
        a = D.alpha_ndcg(nug, scores, k, lengths=lengths, ideal=ideal)
        e = D.err_ia(nug, scores, k, normalize=True, lengths=lengths, ideal=ideal)
        s = D.s_recall(nug, scores, k, lengths=lengths, ideal=ideal)
        for qi, q in enumerate(qids):
            if q not in ref:
                continue
            assert a[qi] == pytest.approx(ref[q][f"alpha-nDCG@{k}"], rel=1e-9, abs=1e-12), (q, k)
            assert e[qi] == pytest.approx(ref[q][f"nERR-IA@{k}"], rel=1e-9, abs=1e-12), (q, k)
            assert s[qi] == pytest.approx(ref[q][f"strec@{k}"], rel=1e-9, abs=1e-12), (q, k)
            compared += 1
    assert compared >= 3 * 40
    assert np.mean(a) > 0.05  # the runs find relevant subtopics at all


# ---------------------------------------------------------------------------
# thread count
# ---------------------------------------------------------------------------


@pytest.mark.jit
@pytest.mark.slow
def test_identical_for_any_thread_count():
    import numba

    rng = np.random.default_rng(11)
    nug = (rng.random((5000, 30, 6)) < 0.15).astype(np.int8)
    scores = rng.integers(0, 10, (5000, 30)).astype(np.float64)
    lengths = rng.integers(0, 31, 5000)
    before = numba.get_num_threads()
    try:
        results = []
        for t in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(t)
            results.append([call(kind, nug, scores, 10, 0.5, lengths=lengths) for kind in KINDS])
    finally:
        numba.set_num_threads(before)
    for a, b in zip(results[0], results[-1]):
        np.testing.assert_array_equal(a, b)
