"""Diversity names that ir_measures knows give ir_measures' numbers (its pyndeval provider: NIST ndeval), per query.

rankjit is called as a user with a run and ndeval subtopic qrels would call it: ``rankjit.io.align_diversity``
then ``AlignedDiversity.evaluate`` with ir_measures' own measure strings (``str(measure)``), against
``ir_measures.iter_calc`` on the same files.  Precision: ndeval prints its values with 6 decimals (``%.6f``), so
values must agree within half a unit of the 6th decimal (``atol=5e-7``; in practice they agree to ~1e-15).

Known, documented differences (docs/diversity.md), each checked here in the form rankjit documents:

* ``ERR_IA@1`` / ``alpha_DCG@1``: ndeval leaves rank 1 out of its bound normalisation (its loop starts at
  rank 2), so its value is rankjit's times ``S_q``.
* ``nNRBP`` of a query without any relevant judgment: ndeval divides 0 by 0 (NaN); rankjit gives ``empty``
  (``'zero'`` by default, ``nNRBP(empty='nan')`` gives NaN).
* ``judged_only=True``: ir_measures' pyndeval provider fails on it (it indexes the run iterator as a dict), so it
  is checked against pyndeval itself on the run filtered to judged documents, which is what the provider intends.
* ir_measures feeds a run iterator to one pyndeval invocation per (rel, alpha, beta) and the later ones see it
  exhausted (their values come out 0): every parameter set is computed by an ``iter_calc`` call of its own.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from reference import ties as tie_rule  # tests/ is on sys.path (conftest.py)

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pyndeval")
pytest.importorskip("pyarrow")

import rankjit  # noqa: E402
import rankjit.diversity as D  # noqa: E402
from rankjit.io import align_diversity  # noqa: E402

M = ir_measures.measures
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "web2012"
DIV_QRELS = DATA / "qrels.diversity-ndeval.txt"
RUNS = ["run.ql.cata.txt", "run.rm.cata.txt"]
needs_data = pytest.mark.skipif(
    not (DIV_QRELS.exists() and all((DATA / r).exists() for r in RUNS)),
    reason=f"TREC 2012 Web track diversity data not found in {DATA} (shared data folder absent)",
)
ATOL = 5e-7  # half a unit of ndeval's 6th printed decimal
KS = (2, 3, 5, 10, 20)  # ndeval's cutoffs are <= 20; k = 1 is checked on its own (see the module docstring)


def default_measures():
    """ir_measures' diversity measures with their default parameters (one pyndeval invocation)."""
    out = [M.AP_IA, M.NRBP, M.nNRBP]
    for k in KS:
        out += [M.ERR_IA @ k, M.nERR_IA @ k, M.alpha_DCG @ k, M.alpha_nDCG @ k, M.StRecall @ k, M.P_IA @ k]
    out += [M.nERR_IA @ 1, M.alpha_nDCG @ 1, M.StRecall @ 1, M.P_IA @ 1]
    return out


def other_parameter_sets():
    """Lists of measures that each share one (rel, alpha, beta) pyndeval invocation."""
    return [
        [m(alpha=0.3) @ k for m in (M.alpha_DCG, M.alpha_nDCG) for k in (2, 5, 20)],
        [M.NRBP(alpha=0.3, beta=0.8), M.nNRBP(alpha=0.3, beta=0.8)],
        [M.NRBP(beta=0.9), M.nNRBP(beta=0.9)],
    ]


def rel2_measures():
    out = [M.AP_IA(rel=2), M.NRBP(rel=2), M.nNRBP(rel=2)]
    for k in (2, 5, 20):
        out += [m(rel=2) @ k for m in (M.ERR_IA, M.nERR_IA, M.alpha_DCG, M.alpha_nDCG, M.StRecall, M.P_IA)]
    return out


def irm(measures, qrels_path, run_path):
    """{str(measure): {qid: value}} from one ir_measures.iter_calc call."""
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    out = defaultdict(dict)
    for m in ir_measures.iter_calc(measures, qrels, run):
        out[str(m.measure)][m.query_id] = m.value
    return out


def read_lines(path):
    return [line.split() for line in Path(path).read_text().splitlines() if line.strip()]


def judgments(qrels_path):
    """{qid: {docno: {subtopic: judgment}}} from the subtopic qrels (plain Python)."""
    out = defaultdict(lambda: defaultdict(dict))
    for q, s, d, j in read_lines(qrels_path):
        out[q][d][int(s)] = int(j)
    return out


def n_subtopics_relevant(judg, qid, rel=1):
    """S_q: subtopics of the query with a judgment >= rel."""
    return len({s for subs in judg[qid].values() for s, j in subs.items() if j >= rel})


def graded(al, qrels_path, run_path):
    """The graded judgments behind ``al.nuggets`` and ``al.ideal``, rebuilt from the qrels file."""
    judg = judgments(qrels_path)
    run_rows = read_lines(run_path)
    nug = np.zeros(al.nuggets.shape, np.int16)
    ideal = np.zeros(al.ideal.shape, np.int16)
    for qi, q in enumerate(al.qids):
        cols = {int(s): c for c, s in enumerate(al.subtopic_ids[qi]) if s >= 0}
        for r in range(al.lengths[qi]):
            doc = run_rows[al.rows[qi, r]][2]
            for s, j in judg[q].get(doc, {}).items():
                nug[qi, r, cols[s]] = j
        for r, doc in enumerate(sorted(judg[q], reverse=True)):  # docno descending, as al.ideal
            for s, j in judg[q][doc].items():
                ideal[qi, r, cols[s]] = j
    np.testing.assert_array_equal(nug > 0, al.nuggets > 0)
    np.testing.assert_array_equal(ideal > 0, al.ideal > 0)
    return nug, ideal


def assert_same(got, ref, qids, name):
    want = np.array([ref[name][q] for q in qids])
    np.testing.assert_allclose(got, want, rtol=0, atol=ATOL, err_msg=name)


def compare(al, qrels_path, run_path, measures, **kw):
    """Every measure of ``measures``: rankjit (al.evaluate, ir_measures' own string) == ir_measures per query."""
    ref = irm(measures, qrels_path, run_path)
    names = [str(m) for m in measures]
    got = al.evaluate(names, per_query=True, **kw)
    assert set(al.qids) == set(ref[names[0]])
    for name in names:
        if name.startswith("nNRBP"):  # ndeval: 0 / 0 = NaN without relevant judgments; rankjit: empty ('zero')
            want = np.array([ref[name][q] for q in al.qids])
            nan = np.isnan(want)
            assert (got[name][nan] == 0).all()
            np.testing.assert_allclose(got[name][~nan], want[~nan], rtol=0, atol=ATOL, err_msg=name)
            continue
        assert_same(got[name], ref, al.qids, name)
    return ref


def check_k1(al, qrels_path, run_path, rel=1):
    """ERR_IA@1 and alpha_DCG@1: ndeval's value is rankjit's times S_q (rank 1 is left unnormalised)."""
    ref = irm([M.ERR_IA @ 1, M.alpha_DCG @ 1], qrels_path, run_path)
    judg = judgments(qrels_path)
    s_q = np.array([n_subtopics_relevant(judg, q, rel) for q in al.qids], dtype=np.float64)
    got = al.evaluate(["ERR_IA@1", "alpha_DCG@1"], per_query=True)
    for name in ("ERR_IA@1", "alpha_DCG@1"):
        want = np.array([ref[name][q] for q in al.qids])
        np.testing.assert_allclose(got[name] * s_q, want, rtol=0, atol=ATOL, err_msg=name)
        assert (want[s_q > 1] > got[name][s_q > 1]).any() or not (s_q > 1).any()


def check_rel2(al, qrels_path, run_path):
    """rel=2 (a judgment >= 2 is relevant) on the graded judgments, as evaluate() and as functions."""
    nug, ideal = graded(al, qrels_path, run_path)
    ms = rel2_measures()
    ref = irm(ms, qrels_path, run_path)
    names = [str(m) for m in ms]
    labels = nug.sum(axis=2)
    got = rankjit.evaluate(labels, al.scores, names, lengths=al.lengths, nuggets=nug, ideal=ideal, ties="stable",
                           per_query=True)
    # align_diversity keeps the graded judgments, and AlignedDiversity.evaluate passes them: rel=2 through it
    np.testing.assert_array_equal(al.judgments[:, :, : nug.shape[2]], nug)
    np.testing.assert_array_equal(al.ideal_judgments, ideal)
    through_aligned = al.evaluate(names, per_query=True)
    kw = dict(lengths=al.lengths, ideal=ideal, ties="stable", rel=2)
    for name in names:
        if name.startswith("nNRBP"):
            want = np.array([ref[name][q] for q in al.qids])
            ok = ~np.isnan(want)
            np.testing.assert_allclose(got[name][ok], want[ok], rtol=0, atol=ATOL, err_msg=name)
            np.testing.assert_allclose(through_aligned[name][ok], want[ok], rtol=0, atol=ATOL, err_msg=name)
        else:
            assert_same(got[name], ref, al.qids, name)
            assert_same(through_aligned[name], ref, al.qids, name)
    assert_same(D.err_ia(nug, al.scores, 5, **kw), ref, al.qids, "ERR_IA(rel=2)@5")
    assert_same(D.alpha_dcg(nug, al.scores, 20, **kw), ref, al.qids, "alpha_DCG(rel=2)@20")
    assert_same(D.ap_ia(nug, al.scores, **kw), ref, al.qids, "AP_IA(rel=2)")
    assert_same(D.p_ia(nug, al.scores, 2, **kw), ref, al.qids, "P_IA(rel=2)@2")
    assert_same(D.nrbp(nug, al.scores, **kw), ref, al.qids, "NRBP(rel=2)")


def check_judged_only(al, qrels_path, run_path):
    """judged_only=True: rankjit with mask=al.judged against pyndeval on the run cut to judged documents."""
    import pyndeval

    judg = judgments(qrels_path)
    run = [(f[0], f[2], float(f[4])) for f in read_lines(run_path) if f[2] in judg.get(f[0], {})]
    qrels = [(q, str(s), d, j) for q in judg for d, subs in judg[q].items() for s, j in subs.items()]
    names = ["ERR-IA@5", "nERR-IA@10", "alpha-DCG@20", "alpha-nDCG@5", "P-IA@10", "strec@5", "MAP-IA", "NRBP"]
    ref = pyndeval.RelevanceEvaluator(qrels, names).evaluate(run)
    kw = dict(mask=al.judged, ideal=al.ideal, ties="stable")
    got = {
        "ERR-IA@5": D.err_ia(al.nuggets, al.scores, 5, **kw),
        "nERR-IA@10": D.err_ia(al.nuggets, al.scores, 10, normalize=True, **kw),
        "alpha-DCG@20": D.alpha_dcg(al.nuggets, al.scores, 20, **kw),
        "alpha-nDCG@5": D.alpha_ndcg(al.nuggets, al.scores, 5, **kw),
        "P-IA@10": D.p_ia(al.nuggets, al.scores, 10, **kw),
        "strec@5": D.s_recall(al.nuggets, al.scores, 5, **kw),
        "MAP-IA": D.ap_ia(al.nuggets, al.scores, **kw),
        "NRBP": D.nrbp(al.nuggets, al.scores, **kw),
    }
    for name in names:
        want = np.array([ref[q][name] if q in ref else 0.0 for q in al.qids])  # nothing judged retrieved: 0
        np.testing.assert_allclose(got[name], want, rtol=0, atol=ATOL, err_msg=name)


# ---------------------------------------------------------------------------------------------
# random diversity qrels and runs: numeric ids, graded judgments, distinct scores
# ---------------------------------------------------------------------------------------------


def write_random(tmp_path, seed):
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    n_q = 7
    for t in range(n_q):
        qid = str(200 + 3 * t)
        n_sub = int(rng.integers(1, 7))
        pool = rng.choice(np.arange(10000, 99999), size=60, replace=False)
        n_judged = int(rng.integers(1, 40))
        judged, others = pool[:n_judged], pool[n_judged:]
        for d in judged:
            for s in range(1, n_sub + 1):
                if rng.random() < 0.8:  # some (document, subtopic) pairs are not judged: 0 for ndeval
                    j = 0 if t == n_q - 1 else int(rng.choice([0, 0, 0, 1, 1, 2, 3]))  # last query: none relevant
                    qrels.append(f"{qid} {s} {d} {j}")
        # retrieved: some judged documents and some unjudged ones, distinct scores
        ret = np.concatenate([rng.choice(judged, size=int(rng.integers(0, n_judged + 1)), replace=False),
                              others[: int(rng.integers(0, 20))]])
        if ret.size == 0:
            ret = others[:1]
        rng.shuffle(ret)
        scores = (rng.permutation(ret.size) + rng.random()) * 0.731 - 5.0
        order = tie_rule.order(scores.tolist(), [0] * ret.size, "stable")  # distinct scores: no tie to break
        for rank, i in enumerate(order, start=1):
            run.append(f"{qid} Q0 {ret[i]} {rank} {float(scores[i])!r} rnd")
    qrels_path, run_path = tmp_path / f"qrels.{seed}.txt", tmp_path / f"run.{seed}.txt"
    qrels_path.write_text("\n".join(qrels) + "\n")
    run_path.write_text("\n".join(run) + "\n")
    return qrels_path, run_path


@pytest.mark.parametrize("seed", range(6))
def test_random_defaults_per_query(tmp_path, seed):
    qrels_path, run_path = write_random(tmp_path, seed)
    al = align_diversity(qrels_path, run_path)
    assert len(al.qids) == 7
    ref = compare(al, qrels_path, run_path, default_measures())
    # the last query has no relevant judgment: ndeval's nNRBP is 0 / 0, rankjit's empty= decides
    last = al.qids.index(str(200 + 3 * 6))
    assert np.isnan(ref["nNRBP"][al.qids[last]])
    assert np.isnan(al.evaluate(["nNRBP(empty='nan')"], per_query=True)["nNRBP(empty='nan')"][last])
    check_k1(al, qrels_path, run_path)


@pytest.mark.parametrize("seed", range(6, 10))
def test_random_other_parameters_per_query(tmp_path, seed):
    qrels_path, run_path = write_random(tmp_path, seed)
    al = align_diversity(qrels_path, run_path)
    for measures in other_parameter_sets():
        compare(al, qrels_path, run_path, measures)
    check_rel2(al, qrels_path, run_path)
    check_judged_only(al, qrels_path, run_path)


def test_raw_variants_stay_reachable(tmp_path):
    """bound=False gives rankjit's earlier ERR-IA (mean of per-subtopic ERR) and alpha-DCG (raw sum)."""
    qrels_path, run_path = write_random(tmp_path, 3)
    al = align_diversity(qrels_path, run_path)
    judg = judgments(qrels_path)
    s_q = np.array([n_subtopics_relevant(judg, q) for q in al.qids], dtype=np.float64)
    got = al.evaluate(["ERR_IA@10", "ERR_IA(bound=False)@10", "alpha_DCG@10", "alpha_DCG(bound=False)@10"],
                      per_query=True)
    # the bounds, summed here from their definitions: every document holds every subtopic
    err_bound = sum(0.5 ** (r - 1) / r for r in range(1, 11))
    dcg_bound = sum(0.5 ** (r - 1) / np.log2(r + 1) for r in range(1, 11))
    has = s_q > 0
    # raw ERR-IA = (alpha / S_q) sum_r G[r] / r; ndeval's = sum_r G[r] / r / (S_q * err_bound)
    np.testing.assert_allclose(got["ERR_IA(bound=False)@10"][has], 0.5 * err_bound * got["ERR_IA@10"][has],
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got["alpha_DCG(bound=False)@10"][has], s_q[has] * dcg_bound * got["alpha_DCG@10"][has],
                               rtol=1e-12, atol=1e-15)
    assert (got["ERR_IA(bound=False)@10"] > 0).any()


# ---------------------------------------------------------------------------------------------
# real data: TREC 2012 Web track diversity qrels and two runs
# ---------------------------------------------------------------------------------------------


def tie_free(run_name, tmp_path):
    """The run with score = -rank: its own order without tied scores.

    The files have tied scores; pyndeval orders ties by docno ascending, rankjit.io (as trec_eval) by docno
    descending, which changes measures that read the whole list (AP_IA, NRBP, nNRBP).
    """
    out = tmp_path / run_name
    out.write_text("".join(f"{f[0]} Q0 {f[2]} {f[3]} {-int(f[3])} {f[5]}\n" for f in read_lines(DATA / run_name)))
    return out


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("run_name", RUNS)
def test_web2012_per_query(run_name, tmp_path):
    # the file's own scores: the cutoff measures (ties are below rank 20)
    al = align_diversity(DIV_QRELS, DATA / run_name)
    assert len(al.qids) == 50
    compare(al, DIV_QRELS, DATA / run_name, [m for m in default_measures() if m.NAME not in ("AP_IA", "NRBP",
                                                                                             "nNRBP")])
    # without tied scores: every name, every parameter set
    run_path = tie_free(run_name, tmp_path)
    al = align_diversity(DIV_QRELS, run_path)
    ref = compare(al, DIV_QRELS, run_path, default_measures())
    assert np.mean([ref["ERR_IA@20"][q] for q in al.qids]) > 0.1  # the runs find relevant subtopics at all
    for measures in other_parameter_sets():
        compare(al, DIV_QRELS, run_path, measures)
    check_k1(al, DIV_QRELS, run_path)
    check_rel2(al, DIV_QRELS, run_path)
    check_judged_only(al, DIV_QRELS, run_path)


# ---------------------------------------------------------------------------------------------
# the new error messages
# ---------------------------------------------------------------------------------------------

NUG = np.array([[[1, 0], [0, 2]]])
S2 = np.array([[2.0, 1.0]])


@pytest.mark.parametrize("call, exc, message", [
    (lambda: D.err_ia(NUG, S2, rel=0), ValueError,
     r"rel must be > 0 \(judgments >= rel are relevant\) or None \(judgments > 0\), got 0"),
    (lambda: D.p_ia(NUG, S2, rel=float("nan")), ValueError, r"rel must be > 0 .*, got nan"),
    (lambda: D.ap_ia(NUG, S2, rel="2"), TypeError, r"rel must be a number > 0 or None, got '2'"),
    (lambda: rankjit.evaluate(NUG.sum(-1), S2, ["ERR_IA(rel=-1)@5"], nuggets=NUG), ValueError,
     r"rel in 'ERR_IA\(rel=-1\)@5' must be > 0 \(judgments >= rel are relevant\) or None \(judgments > 0\), got -1"),
    (lambda: D.alpha_dcg(NUG, S2, bound=1), TypeError, r"bound must be True or False, got 1"),
    (lambda: D.err_ia(NUG, S2, bound="no"), TypeError, r"bound must be True or False, got 'no'"),
    (lambda: rankjit.evaluate(NUG.sum(-1), S2, ["alpha_DCG(bound=0)@5"], nuggets=NUG), TypeError,
     r"bound in 'alpha_DCG\(bound=0\)@5' must be True or False, got 0"),
    (lambda: D.nrbp(NUG, S2, normalize="yes"), TypeError, r"normalize must be True or False, got 'yes'"),
    (lambda: D.nrbp(NUG, S2, beta=1.5), ValueError, r"beta must be in \[0, 1\], got 1.5"),
    (lambda: rankjit.evaluate(NUG.sum(-1), S2, ["NRBP(beta=-0.1)"], nuggets=NUG), ValueError,
     r"beta in 'NRBP\(beta=-0.1\)' must be in \[0, 1\], got -0.1"),
    (lambda: D.err_ia(NUG, S2, k=1_000_001), ValueError,
     r"the collection-independent bound \(bound=True\) is summed rank by rank; k must be at most 1000000 "
     r"\(ndeval's cutoffs are at most 20\), got 1000001; pass bound=False for the raw sum"),
    (lambda: rankjit.evaluate(NUG.sum(-1), S2, ["alpha_DCG@2000000"], nuggets=NUG), ValueError,
     r"k must be at most 1000000 .*got 2000000"),
    (lambda: rankjit.evaluate(NUG.sum(-1), S2, ["P_IA(alpha=0.5)@5"], nuggets=NUG), ValueError,
     r"unknown parameter 'alpha' for P_IA"),
])
def test_error_messages(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


def test_large_k_without_bound_and_rel_default():
    """bound=False and the other names take any k; rel=None keeps "> 0" (fractional judgments count)."""
    np.testing.assert_array_equal(D.err_ia(NUG, S2, k=10**9, bound=False), D.err_ia(NUG, S2, k=None, bound=False))
    frac = NUG * 0.5  # judgments 0.5 (document 0, subtopic 0) and 1.0 (document 1, subtopic 1)
    assert D.s_recall(frac, S2, 1).tolist() == [0.5]  # > 0: both subtopics, document 0 covers one
    assert D.s_recall(frac, S2, 1, rel=1).tolist() == [0.0]  # >= 1: subtopic 1 alone, not at rank 1
