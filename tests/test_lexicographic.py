"""Lexicographic precision / recall against plain-Python references, properties, and ``rankjit compare``.

Two references, both written here from the definitions (pref_eval, the authors' reference
code, carries no licence, so none of it is copied):

* ``ref_*``: the definitions of Diaz (EVIA 2023) and Diaz, Ekstrand & Mitra (TORS 2025):
  ``f_1 <= ... <= f_m`` = ranks of the relevant documents (inf when not retrieved),
  compared as Python tuples (lexicographic order), forwards (precision) or reversed (recall).
* ``pe_*``: pref_eval's conventions (diazf/pref_eval, measures/lexicographic.py and
  util/trec_io.py): relevant = grade > 0 (or >= ``-b``), topics without a relevant document
  dropped, runs sorted by (score, docno) descending and cut at ``--topk``, a position vector
  with None for each relevant document not retrieved, lexirecall short-cut through the number
  of relevant documents retrieved.

``test_against_pref_eval_itself`` runs pref_eval when ``RANKJIT_PREF_EVAL`` names a checkout.
"""
from __future__ import annotations

import collections
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankjit
import rankjit.preference as P
from rankjit.cli import main
from reference import preference as pref_ref

INF = math.inf

# ---------------------------------------------------------------------------
# reference 1: the definitions
# ---------------------------------------------------------------------------


def call(measure, *args, **kw):
    if measure == "lr":
        return P.lexirecall(*args, **kw)
    return P.lexiprecision(*args, variant=measure, **kw)


def call_matrix(measure, *args, **kw):
    if measure == "lr":
        return P.lexirecall_matrix(*args, **kw)
    return P.lexiprecision_matrix(*args, variant=measure, **kw)


def assert_close(got, want):
    if want is None:
        assert math.isnan(got), got
    else:
        assert got == pytest.approx(want, rel=1e-15, abs=1e-15), (got, want)


# ---------------------------------------------------------------------------
# reference 2: pref_eval's conventions, from its description and data flow
# ---------------------------------------------------------------------------


def pe_qrels(path, binary=None):
    """{qid: {docno: grade}} of the relevant documents (grade > 0; with ``binary``: grade >= binary)."""
    out = collections.defaultdict(dict)
    for line in open(path):
        f = line.split()
        if not f:
            continue
        g = float(f[3])
        if binary is not None:
            g = float(g >= binary)
        if g > 0:
            out[f[0]][f[2]] = g
    return out


def pe_vectors(path, qrels, topk=None):
    """{qid: (positions, number retrieved)}: sorted ranks of the relevant documents found, then one None
    per relevant document not found; a topic absent from the run finds nothing."""
    rows = collections.defaultdict(list)
    for line in open(path):
        f = line.split()
        if f and f[0] in qrels:
            rows[f[0]].append((float(f[4]), f[2]))
    out = {}
    for q, judged in qrels.items():
        ranking = [d for _, d in sorted(rows.get(q, []), reverse=True)]
        if topk is not None:
            ranking = ranking[:topk]
        found = [r for r, d in enumerate(ranking, start=1) if d in judged]
        out[q] = (found + [None] * (len(judged) - len(found)), len(found))
    return out


def _first_difference(x, y, order):
    for i in order:
        if x[i] is None and y[i] is None:
            continue
        if x[i] is None:
            return -1.0
        if y[i] is None:
            return 1.0
        if x[i] != y[i]:
            return 1.0 if x[i] < y[i] else -1.0
    return 0.0


def pe_lexiprecision(x, y):
    return _first_difference(x, y, range(len(x)))


def pe_lexirecall(x, y, x_found, y_found):
    if x_found != y_found:  # more relevant documents retrieved wins outright
        return 1.0 if x_found > y_found else -1.0
    return _first_difference(x, y, range(x_found - 1, -1, -1))


def pe_rrlexiprecision(x, y):
    for u, v in zip(x, y):
        if u == v:
            continue
        return (0.0 if u is None else 1.0 / u) - (0.0 if v is None else 1.0 / v)
    return 0.0


def pe_values(qrels_path, run_a, run_b, topk=None, binary=None):
    """{measure: {qid: value}} for the topics pref_eval keeps (those with a relevant document)."""
    qrels = pe_qrels(qrels_path, binary)
    va, vb = pe_vectors(run_a, qrels, topk), pe_vectors(run_b, qrels, topk)
    return {
        "lexiprecision": {q: pe_lexiprecision(va[q][0], vb[q][0]) for q in qrels},
        "rrlexiprecision": {q: pe_rrlexiprecision(va[q][0], vb[q][0]) for q in qrels},
        "lexirecall": {q: pe_lexirecall(va[q][0], vb[q][0], va[q][1], vb[q][1]) for q in qrels},
    }


def cli_names(k=None, rel=None):
    args = [] if rel is None else [f"rel={rel}"]
    suffix = f"@{k}" if k else ""
    par = lambda extra: "(" + ", ".join(extra + args) + ")" if extra + args else ""  # noqa: E731
    return {"lexiprecision": "LexiPrecision" + par([]) + suffix,
            "rrlexiprecision": "LexiPrecision" + par(["variant='rr'"]) + suffix,
            "lexirecall": "LexiRecall" + par([]) + suffix}


# ---------------------------------------------------------------------------
# random batches
# ---------------------------------------------------------------------------


@st.composite
def pairs(draw, max_q=3, max_docs=8):
    n_q = draw(st.integers(1, max_q))
    w = draw(st.integers(1, max_docs))
    size = n_q * w
    labels = np.array(draw(st.lists(st.sampled_from([0, 0, 1, 2, 3]), min_size=size, max_size=size)),
                      np.int64).reshape(n_q, w)
    sa = np.array(draw(st.lists(st.integers(0, 4), min_size=size, max_size=size)), float).reshape(n_q, w)
    sb = np.array(draw(st.lists(st.integers(0, 4), min_size=size, max_size=size)), float).reshape(n_q, w)
    lengths = np.array(draw(st.lists(st.integers(0, w), min_size=n_q, max_size=n_q)), np.int64)
    return labels, sa, sb, lengths


MEASURES = st.sampled_from(["sgn", "rr", "lr"])
TIES = st.sampled_from(["pessimistic", "optimistic", "stable"])
CUTOFFS = st.one_of(st.none(), st.integers(1, 6))


@settings(max_examples=200, deadline=None)
@given(pairs(), MEASURES, CUTOFFS, TIES, st.sampled_from([1, 2, 0.5]), st.data())
def test_matches_reference(batch, measure, k, ties, rel, data):
    labels, sa, sb, lengths = batch
    n_q, w = labels.shape
    # what each system retrieved: a prefix of the row (lengths_a) and a mask (mask_b)
    la = np.array([data.draw(st.integers(0, w)) for _ in range(n_q)], np.int64)
    mb = np.array(data.draw(st.lists(st.booleans(), min_size=n_q * w, max_size=n_q * w))).reshape(n_q, w)
    got = call(measure, labels, sa, sb, k, rel=rel, lengths=lengths, lengths_a=la, mask_b=mb, ties=ties)
    for q in range(n_q):
        n = lengths[q]
        want = pref_ref.lexi_query(measure, labels[q, :n].tolist(), sa[q, :n].tolist(), sb[q, :n].tolist(),
                         [j < la[q] for j in range(n)], mb[q, :n].tolist(), k, ties, rel)
        assert_close(got[q], want)


@settings(max_examples=100, deadline=None)
@given(pairs(), MEASURES, CUTOFFS, TIES, st.integers(0, 3))
def test_properties(batch, measure, k, ties, extra):
    labels, sa, sb, lengths = batch
    ab = call(measure, labels, sa, sb, k, lengths=lengths, ties=ties)
    ba = call(measure, labels, sb, sa, k, lengths=lengths, ties=ties)
    aa = call(measure, labels, sa, sa, k, lengths=lengths, ties=ties)
    has = ~np.isnan(ab)
    np.testing.assert_array_equal(np.isnan(ab), np.isnan(ba))
    np.testing.assert_array_equal(has, [(labels[q, :n] >= 1).any() for q, n in enumerate(lengths)])
    np.testing.assert_array_equal(ab[has], -ba[has])  # exact antisymmetry
    np.testing.assert_array_equal(aa[has], 0.0)
    if measure == "rr":
        assert (np.abs(ab[has]) <= 1.0).all()  # 1/1 - 1/inf at most
    else:
        assert np.isin(ab[has], [-1.0, 0.0, 1.0]).all()
    # padding invariance: garbage beyond lengths, extra padded columns, mask, ragged offsets
    n_q, w = labels.shape
    pad = lambda x, v: np.concatenate([x, np.full((n_q, extra), v, x.dtype)], axis=1)  # noqa: E731
    l2, a2, b2 = pad(labels, -5), pad(sa, np.nan), pad(sb, np.nan)
    for q in range(n_q):
        l2[q, lengths[q]:] = -5
        a2[q, lengths[q]:] = np.nan
        b2[q, lengths[q]:] = np.nan
    np.testing.assert_array_equal(call(measure, l2, a2, b2, k, lengths=lengths, ties=ties), ab)
    mask = np.zeros(l2.shape, bool)
    for q in range(n_q):
        mask[q, : lengths[q]] = True
    np.testing.assert_array_equal(call(measure, l2, a2, b2, k, mask=mask, ties=ties), ab)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    flat = lambda x: np.concatenate([x[q, : lengths[q]] for q in range(n_q)])  # noqa: E731
    np.testing.assert_array_equal(call(measure, flat(labels), flat(sa), flat(sb), k, offsets=offsets, ties=ties), ab)


@settings(max_examples=100, deadline=None)
@given(pairs(), CUTOFFS, TIES)
def test_refines_reciprocal_rank_and_recall(batch, k, ties):
    """The papers' claims: lexiprecision keeps every difference RR sees, lexirecall every difference of
    recall@k (more relevant documents retrieved wins); rrLP has the sign of sgnLP."""
    labels, sa, sb, lengths = batch
    lp = P.lexiprecision(labels, sa, sb, k, lengths=lengths, ties=ties)
    rr_lp = P.lexiprecision(labels, sa, sb, k, variant="rr", lengths=lengths, ties=ties)
    lr = P.lexirecall(labels, sa, sb, k, lengths=lengths, ties=ties)
    rr_a = rankjit.rr(labels, sa, k, lengths=lengths, ties=ties)
    rr_b = rankjit.rr(labels, sb, k, lengths=lengths, ties=ties)
    rec_a = rankjit.recall(labels, sa, k, lengths=lengths, ties=ties)
    rec_b = rankjit.recall(labels, sb, k, lengths=lengths, ties=ties)
    has = ~np.isnan(lp)
    differ = has & (rr_a != rr_b)
    np.testing.assert_array_equal(lp[differ], np.sign(rr_a - rr_b)[differ])
    np.testing.assert_array_equal(rr_lp[differ], (rr_a - rr_b)[differ])
    np.testing.assert_array_equal(np.sign(rr_lp[has]), lp[has])
    differ = has & (rec_a != rec_b)
    np.testing.assert_array_equal(lr[differ], np.sign(rec_a - rec_b)[differ])


@settings(max_examples=60, deadline=None)
@given(pairs(), st.integers(1, 4), MEASURES, CUTOFFS, st.data())
def test_matrix_equals_pairwise_and_is_transitive(batch, n_sys, measure, k, data):
    labels, _, _, lengths = batch
    n_q, w = labels.shape
    stack = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n_sys * n_q * w, max_size=n_sys * n_q * w)),
                     float).reshape(n_sys, n_q, w)
    sl = np.array(data.draw(st.lists(st.integers(0, w), min_size=n_sys * n_q, max_size=n_sys * n_q)),
                  np.int64).reshape(n_sys, n_q)
    M, pq = call_matrix(measure, labels, stack, k, lengths=lengths, system_lengths=sl, per_query=True)
    assert M.shape == (n_sys, n_sys) and pq.shape == (n_q, n_sys, n_sys)
    for a in range(n_sys):
        for b in range(n_sys):
            v = call(measure, labels, stack[a], stack[b], k, lengths=lengths, lengths_a=sl[a], lengths_b=sl[b])
            np.testing.assert_array_equal(pq[:, a, b], v)
            if np.isnan(v).all():
                assert math.isnan(M[a, b])
            else:
                assert M[a, b] == pytest.approx(np.nanmean(v), rel=1e-12, abs=1e-15)
    np.testing.assert_array_equal(M, -M.T)
    Mz = call_matrix(measure, labels, stack, k, lengths=lengths, system_lengths=sl, empty="zero")
    np.testing.assert_allclose(Mz, np.nan_to_num(pq).mean(axis=0), rtol=1e-12, atol=1e-15)
    # a lexicographic order is a total preorder: a >= b and b >= c imply a >= c, strictly if either is strict
    for q in range(n_q):
        s = np.sign(pq[q])
        if np.isnan(s).any():
            continue
        for a in range(n_sys):
            for b in range(n_sys):
                for c in range(n_sys):
                    if s[a, b] >= 0 and s[b, c] >= 0:
                        assert s[a, c] == (0.0 if s[a, b] == 0 and s[b, c] == 0 else 1.0)


# ---------------------------------------------------------------------------
# worked examples (by hand, from the definitions)
# ---------------------------------------------------------------------------


def test_worked_examples():
    # five documents, d0 and d2 relevant; scores give the ranks in the comments
    labels = np.array([[1, 0, 1, 0, 0]])
    a = np.array([[5.0, 4.0, 3.0, 2.0, 1.0]])  # f(a) = (1, 3)
    b = np.array([[5.0, 1.0, 2.0, 4.0, 3.0]])  # f(b) = (1, 4): same RR as a
    c = np.array([[4.0, 1.0, 5.0, 3.0, 2.0]])  # f(c) = (1, 2)
    d = np.array([[2.0, 5.0, 1.0, 4.0, 3.0]])  # f(d) = (4, 5)
    # RR ties a with b (1 = 1); lexiprecision looks at the second recall level: 3 < 4
    assert P.lexiprecision(labels, a, b).tolist() == [1.0]
    assert P.lexiprecision(labels, a, b, variant="rr").tolist() == [1 / 3 - 1 / 4]
    assert P.lexiprecision(labels, d, a).tolist() == [-1.0]  # first level: 4 > 1
    assert P.lexiprecision(labels, d, a, variant="rr").tolist() == [1 / 4 - 1]
    # lexirecall starts from the last relevant document: c's at 2 beats a's at 3
    assert P.lexirecall(labels, a, c).tolist() == [-1.0]
    assert P.lexirecall(labels, d, b).tolist() == [-1.0]  # 5 > 4
    # lexiprecision and lexirecall can disagree: e = (2, 3) against b = (1, 4)
    e = np.array([[3.0, 5.0, 2.0, 1.0, 0.0]])
    assert P.lexiprecision(labels, e, b).tolist() == [-1.0]
    assert P.lexirecall(labels, e, b).tolist() == [1.0]
    # cutoff k = 3: b = (1, inf) against a = (1, 3): recall now differs
    assert P.lexirecall(labels, a, b, k=3).tolist() == [1.0]
    assert P.lexiprecision(labels, a, b, k=3, variant="rr").tolist() == [1 / 3]
    # k = 1: both (1, inf): equal
    assert P.lexirecall(labels, a, b, k=1).tolist() == [0.0]
    # not retrieved (mask) relevant documents rank after every retrieved one and tie with each other
    not_d2 = np.array([[True, True, False, True, True]])
    assert P.lexirecall(labels, a, c, mask_a=not_d2, mask_b=not_d2).tolist() == [0.0]  # (1, inf) both
    assert P.lexiprecision(labels, a, a, mask_b=not_d2).tolist() == [1.0]  # (1, 3) against (1, inf)
    # ties in scores: pessimistic puts the non-relevant d1 first
    tied = np.array([[1.0, 2.0, 2.0, 0.0, 0.0]])  # d1 and d2 tie at the top
    assert P.lexiprecision(labels, tied, tied, ties="pessimistic").tolist() == [0.0]
    assert P.lexiprecision(labels, a, tied).tolist() == [1.0]  # f(tied) = (2, 3) pessimistic, f(a) = (1, 3)
    assert P.lexiprecision(labels, a, tied, ties="optimistic").tolist() == [0.0]  # optimistic: (1, 3) too
    assert P.lexirecall(labels, c, tied, ties="optimistic").tolist() == [1.0]  # 2 < 3
    # no relevant document: NaN by default, 0 on request
    assert math.isnan(P.lexirecall(np.zeros((1, 5), int), a, b)[0])
    assert P.lexiprecision(np.zeros((1, 5), int), a, b, empty="zero").tolist() == [0.0]
    # relevance threshold: grade >= 2 only
    graded = np.array([[1, 0, 2, 0, 0]])  # d2 alone relevant at rel=2: a finds it at 3, c at 1
    assert P.lexiprecision(graded, a, c, rel=2).tolist() == [-1.0]
    assert P.lexirecall(graded, c, a, rel=2).tolist() == [1.0]


def test_evaluate_registration():
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 3, (6, 10))
    a, b = rng.random((6, 10)), rng.random((6, 10))
    res = rankjit.evaluate(labels, a, ["LexiPrecision", "lexirecall@5", "sgnLP(variant='rr', rel=2)", "sgnLR"],
                           scores_b=b, per_query=True, empty="nan")
    np.testing.assert_array_equal(res["LexiPrecision"], P.lexiprecision(labels, a, b))
    np.testing.assert_array_equal(res["lexirecall@5"], P.lexirecall(labels, a, b, 5))
    np.testing.assert_array_equal(res["sgnLP(variant='rr', rel=2)"], P.lexiprecision(labels, a, b, variant="rr",
                                                                                      rel=2))
    np.testing.assert_array_equal(res["sgnLR"], P.lexirecall(labels, a, b))
    assert rankjit.lexirecall is P.lexirecall and rankjit.lexiprecision_matrix is P.lexiprecision_matrix
    with pytest.raises(ValueError, match="LexiRecall compares two systems: pass the second system's scores"):
        rankjit.evaluate(labels, a, ["LexiRecall"])
    with pytest.raises(ValueError, match="unknown parameter 'weights' for LexiRecall"):
        rankjit.evaluate(labels, a, ["LexiRecall(weights='dcg')"], scores_b=b)


def test_bad_input():
    labels = np.array([[1, 0, 1]])
    s = np.array([[3.0, 2.0, 1.0]])
    with pytest.raises(ValueError, match=r"unknown variant='sign' in 'lexiprecision'; valid values: 'sgn'"):
        P.lexiprecision(labels, s, s, variant="sign")
    with pytest.raises(ValueError, match=r"unknown variant='rank' in 'lexiprecision'"):
        P.lexiprecision_matrix(labels, np.stack([s, s]), variant="rank")
    with pytest.raises(ValueError, match="ties='average' is not available for lexirecall; use ties="):
        P.lexirecall(labels, s, s, ties="average")
    with pytest.raises(ValueError, match="ties='average' is not available for lexiprecision"):
        P.lexiprecision_matrix(labels, np.stack([s, s]), ties="average")
    with pytest.raises(ValueError, match=r"unknown empty='one' in 'lexirecall'; valid values: 'nan' \(drop the query\), "
                                         r"'zero' \('one' would break lexirecall\(a, b\) = -lexirecall\(b, a\)\)"):
        P.lexirecall(labels, s, s, empty="one")
    with pytest.raises(ValueError, match="unknown empty='one' in 'lexiprecision'"):
        P.lexiprecision_matrix(labels, np.stack([s, s]), empty="one")
    with pytest.raises(ValueError, match=r"NaN score in query 0 at position 1 \(scores_b\)"):
        P.lexirecall(labels, s, np.array([[1.0, np.nan, 0.0]]))
    with pytest.raises(ValueError, match=r"NaN score in query 0 at position 2 \(scores_a\)"):
        P.lexiprecision(labels, np.array([[1.0, 0.0, np.nan]]), s)
    with pytest.raises(ValueError, match="negative label -1 in query 0 at position 0"):
        P.lexiprecision(-labels, s, s)
    with pytest.raises(ValueError, match=r"scores_b has shape \(1, 2\), expected \(1, 3\)"):
        P.lexirecall(labels, s, s[:, :2])
    with pytest.raises(ValueError, match=r"lengths_a must be 1-D with one entry per query"):
        P.lexirecall(labels, s, s, lengths_a=np.array([1, 2]))
    with pytest.raises(ValueError, match=r"scores_stack must be 3-D \(n_systems, n_queries, n_docs\)"):
        P.lexirecall_matrix(labels, s)
    with pytest.raises(ValueError, match=r"system_lengths must have shape \(n_systems, n_queries\)"):
        P.lexirecall_matrix(labels, np.stack([s, s]), system_lengths=np.array([1, 2]))
    with pytest.raises(ValueError, match="negative label"):
        P.lexirecall_matrix(-labels, np.stack([s, s]))
    with pytest.raises(TypeError, match="unexpected keyword argument 'variant'"):
        P.lexirecall(labels, s, s, variant="rr")


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
            out.append((P.lexirecall(labels, stack[0], stack[1], 10),
                        P.lexiprecision(labels, stack[0], stack[1], variant="rr"),
                        P.lexiprecision_matrix(labels, stack, 10), P.lexirecall_matrix(labels, stack)))
    finally:
        numba.set_num_threads(before)
    for x, y in zip(out[0], out[-1]):
        np.testing.assert_array_equal(x, y)


@pytest.mark.slow
def test_many_relevant_documents_take_the_binary_search_path():
    # more than 48 relevant documents in a row: ranks are placed by binary search
    rng = np.random.default_rng(3)
    labels = (rng.random((40, 300)) < 0.4).astype(np.int64)
    sa = rng.integers(0, 50, (40, 300)).astype(float)
    sb = rng.integers(0, 50, (40, 300)).astype(float)
    for measure in ("sgn", "rr", "lr"):
        for k in (None, 100):
            got = call(measure, labels, sa, sb, k)
            for q in range(40):
                want = pref_ref.lexi_query(measure, labels[q].tolist(), sa[q].tolist(), sb[q].tolist(), [True] * 300,
                                 [True] * 300, k, "pessimistic")
                assert_close(got[q], want)


# ---------------------------------------------------------------------------
# rankjit compare
# ---------------------------------------------------------------------------


DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "web2012"
QRELS = DATA / "qrels.adhoc.txt"
RUNS = [DATA / "run.ql.cata.txt", DATA / "run.rm.cata.txt"]
needs_data = pytest.mark.skipif(
    not all(p.exists() for p in [QRELS, *RUNS]),
    reason=f"TREC 2012 Web track data not found in {DATA} (shared data folder absent)",
)


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


@pytest.fixture()
def small(tmp_path):
    """6 topics; topic 4 has no relevant document; d9 of topic 1 is relevant and retrieved by no run;
    run C lacks topics 3, 5 and 6; a score tie in run A (topic 2, broken by docno descending); on topic 6
    lexiprecision and lexirecall disagree."""
    pytest.importorskip("pyarrow")
    qrels = write(tmp_path / "qrels", [
        "1 0 d1 1", "1 0 d2 2", "1 0 d3 0", "1 0 d9 1",
        "2 0 d1 1", "2 0 d5 2", "2 0 d6 -2",
        "3 0 d2 1", "3 0 d4 3", "3 0 d7 1",
        "4 0 d1 0",
        "5 0 d1 2", "5 0 d2 1", "5 0 d3 1",
        "6 0 d1 1", "6 0 d2 1",
    ])
    runs = {
        "A": ["1 Q0 d1 1 3 A", "1 Q0 d3 2 2 A", "1 Q0 d2 3 1 A",
              "2 Q0 d5 1 5 A", "2 Q0 d1 2 5 A",
              "3 Q0 d8 1 1 A", "3 Q0 d4 2 0.5 A",
              "4 Q0 d1 1 1 A",
              "5 Q0 d3 1 4 A", "5 Q0 d0 2 3 A", "5 Q0 d1 3 2 A", "5 Q0 d2 4 1 A",
              "6 Q0 d1 1 4 A", "6 Q0 d0 2 3 A", "6 Q0 d3 3 2 A", "6 Q0 d2 4 1 A"],
        "B": ["1 Q0 d2 1 9 B", "1 Q0 d1 2 8 B",
              "2 Q0 d6 1 1 B", "2 Q0 d1 2 0 B",
              "3 Q0 d7 1 2 B", "3 Q0 d2 2 1 B", "3 Q0 d4 3 0 B",
              "4 Q0 d2 1 1 B",
              "5 Q0 d1 1 4 B", "5 Q0 d2 2 3 B", "5 Q0 d0 3 2 B", "5 Q0 d3 4 1 B",
              "6 Q0 d0 1 3 B", "6 Q0 d1 2 2 B", "6 Q0 d2 3 1 B"],
        "C": ["1 Q0 d9 1 1 C", "2 Q0 d5 1 1 C", "2 Q0 d1 2 0 C", "9 Q0 d1 1 1 C"],
    }
    paths = [write(tmp_path / f"run{name}", lines) for name, lines in runs.items()]
    return qrels, paths


def pe_matrix(qrels, runs, pairs, measure, topics, topk=None, binary=None):
    rows = []
    for i, j in pairs:
        v = pe_values(qrels, runs[i], runs[j], topk, binary)[measure]
        rows.append([v.get(t, math.nan) for t in topics])
    return np.array(rows)


@pytest.mark.parametrize("k,rel", [(None, None), (2, None), (1, None), (None, 2), (3, 2)])
def test_pairwise_values_match_pref_eval_conventions(small, k, rel):
    from rankjit.stats._cli import _pairwise_values
    from rankjit.stats._trecdata import load

    qrels, runs = small
    data = load(qrels, runs)
    assert data.topics == ["1", "2", "3", "4", "5", "6"]
    pairs = [(0, 1), (1, 0), (0, 2), (2, 1), (1, 1)]
    names = cli_names(k, rel)
    got = _pairwise_values(data, ["RPP", *names.values()], pairs)
    assert list(got) == ["RPP", *names.values()]
    for measure, name in names.items():
        want = pe_matrix(qrels, runs, pairs, measure, data.topics, k, rel)
        np.testing.assert_allclose(got[name], want, rtol=1e-15, atol=1e-15)
        assert np.isnan(got[name][:, 3]).all()  # topic 4: no relevant document


def test_pairwise_values_by_hand(small):
    from rankjit.stats._cli import _pairwise_values
    from rankjit.stats._trecdata import load

    qrels, runs = small
    got = _pairwise_values(load(qrels, runs), ["LexiPrecision", "LexiRecall"], [(0, 1)])
    # topic 1, relevant d1 d2 d9: A finds (1, 3, -), B (1, 2, -)            -> LP -1, LR -1
    # topic 2, relevant d1 d5: A (1, 2) (tie: d5 first), B (2, -)            -> LP +1, LR +1
    # topic 3, relevant d2 d4 d7: A (2, -, -), B (1, 2, 3)                  -> LP -1, LR -1
    # topic 5, relevant d1 d2 d3: A (1, 3, 4), B (1, 2, 4)                  -> LP -1, LR  -1 (4 = 4, then 3 > 2)
    # topic 6, relevant d1 d2: A (1, 4), B (2, 3)                            -> LP +1, LR  -1
    np.testing.assert_array_equal(got["LexiPrecision"][0, [0, 1, 2, 4, 5]], [-1, 1, -1, -1, 1])
    np.testing.assert_array_equal(got["LexiRecall"][0, [0, 1, 2, 4, 5]], [-1, 1, -1, -1, -1])


def parse_csv(out):
    lines = out.strip().splitlines()
    assert lines[0] == "measure,run_a,run_b,mean,topics,pvalue,adjusted,significant"
    return [line.rsplit(",", 7) for line in lines[1:]]


def test_compare_csv_against_scipy(small, capsys):
    scipy_stats = pytest.importorskip("scipy.stats")
    qrels, runs = small
    measures = [("LexiRecall", "lexirecall", None), ("LexiPrecision(variant='rr')@2", "rrlexiprecision", 2),
                ("lexiprecision", "lexiprecision", None)]
    args = ["compare", qrels, *runs, "--format", "csv", "--correction", "holm"]
    for m, _, _ in measures:
        args += ["-m", m]
    assert main(args) == 0
    rows = parse_csv(capsys.readouterr().out)
    pairs = [(0, 1), (0, 2), (1, 2)]
    assert [(r[1], r[2]) for r in rows] == [("A", "B"), ("A", "C"), ("B", "C")] * 3
    for block, (name, measure, k) in enumerate(measures):
        ref = pe_matrix(qrels, runs, pairs, measure, ["1", "2", "3", "5", "6"], k)  # topic 4 dropped
        p_ref = []
        for p, row in enumerate(rows[3 * block: 3 * block + 3]):
            assert row[0].strip('"') == name
            assert float(row[3]) == pytest.approx(ref[p].mean(), rel=1e-12, abs=1e-15)
            assert int(row[4]) == 5
            p_ref.append(scipy_stats.ttest_1samp(ref[p], 0.0).pvalue if np.ptp(ref[p]) > 0 else None)
            if p_ref[-1] is not None:
                assert float(row[5]) == pytest.approx(p_ref[-1], rel=1e-9)


def test_compare_markdown_and_cli_errors(small, tmp_path, capsys):
    qrels, runs = small
    assert main(["compare", qrels, *runs, "-m", "P@2", "-m", "LexiRecall", "--baseline", "B"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("6 topics\n") and "| LexiRecall | (a) A | (b) B |" in out
    assert "| LexiRecall | (c) C | (b) B |" in out and "| LexiRecall | (a) A | (c) C |" not in out
    assert "Mean preference of the first run over the second over the topics with relevant documents" in out
    assert main(["analyze", qrels, *runs, "-m", "LexiPrecision@10"]) == 1
    assert "LexiPrecision@10 is a pairwise measure (a preference between two runs): use it with `rankjit compare`" \
        in capsys.readouterr().err
    assert main(["compare", qrels, *runs, "-m", "LexiRecall(empty='zero')"]) == 1
    assert "LexiRecall(empty='zero'): the compare command drops topics without relevant documents; do not set " \
           "empty=" in capsys.readouterr().err
    one = write(tmp_path / "one", ["1 0 d1 1", "2 0 d1 0"])
    assert main(["compare", one, *runs, "-m", "LexiPrecision"]) == 1
    assert "LexiPrecision: need at least 2 topics with relevant documents; got 1" in capsys.readouterr().err


def test_compare_significance_marker(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    # "good" ranks the two relevant documents 1st and 2nd on 12 topics, "bad" 2nd and 3rd
    qrels = write(tmp_path / "q", [f"{t} 0 {d} {g}" for t in range(1, 13) for d, g in (("r", 1), ("s", 1), ("n", 0))])
    good = write(tmp_path / "g", [f"{t} Q0 {d} {i + 1} {3 - i} good" for t in range(1, 13)
                                  for i, d in enumerate(["r", "s", "n"])])
    bad = write(tmp_path / "b", [f"{t} Q0 {d} {i + 1} {3 - i} bad" for t in range(1, 13)
                                 for i, d in enumerate(["n", "r", "s"])])
    assert main(["compare", qrels, good, bad, "-m", "LexiRecall", "--test", "fisher", "-B", "2000"]) == 0
    out = capsys.readouterr().out
    assert "| LexiRecall | (a) good | (b) bad | 1.0000 | 12 |" in out and "| a > b |" in out
    assert main(["compare", qrels, bad, good, "-m", "LexiPrecision(variant='rr')", "--format", "tex"]) == 0
    out = capsys.readouterr().out
    assert f"(a) bad vs (b) good & {0.5 - 1:.4f}" in out and "b > a" in out


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("k,rel", [(None, None), (20, 2)])
def test_web2012_against_pref_eval_conventions(k, rel):
    pytest.importorskip("pyarrow")
    from rankjit.stats._cli import _pairwise_values
    from rankjit.stats._trecdata import load

    data = load(QRELS, RUNS)
    names = cli_names(k, rel)
    got = _pairwise_values(data, list(names.values()), [(0, 1), (1, 0)])
    for measure, name in names.items():
        want = pe_matrix(str(QRELS), [str(p) for p in RUNS], [(0, 1), (1, 0)], measure, data.topics, k, rel)
        np.testing.assert_allclose(got[name], want, rtol=1e-15, atol=1e-15)
        kept = (~np.isnan(got[name])).sum(axis=1).tolist()
        assert kept == ([50, 50] if rel is None else [48, 48])  # topics with a document of grade >= rel


PREF_EVAL = os.environ.get("RANKJIT_PREF_EVAL")


@pytest.mark.slow
@pytest.mark.skipif(not PREF_EVAL, reason="set RANKJIT_PREF_EVAL to a checkout of github.com/diazf/pref_eval "
                                          "to compare with its own output")
@pytest.mark.parametrize("topk,binary", [(None, None), (20, 2)])
def test_against_pref_eval_itself(small, topk, binary):
    """Per-topic values of pref_eval.py (the authors' code, run as a program) on the small runs, web2012 and
    trec_eval's results.test against results.trunc."""
    from rankjit.stats._cli import _pairwise_values
    from rankjit.stats._trecdata import load

    cases = [(small[0], small[1][:2])]
    if QRELS.exists():
        cases.append((str(QRELS), [str(p) for p in RUNS]))
    te = DATA.parent / "trec_eval"
    if (te / "results.trunc").exists():
        cases.append((str(te / "qrels.test"), [str(te / "results.test"), str(te / "results.trunc")]))
    for qrels, runs in cases:
        cmd = [sys.executable, os.path.join(PREF_EVAL, "pref_eval.py"), "-R", qrels, "-q", "-n",
               "-m", "lexiprecision", "-m", "rrlexiprecision", "-m", "lexirecall"]
        if topk:
            cmd += ["--topk", str(topk)]
        if binary:
            cmd += ["-b", str(binary)]
        cmd += runs  # pref_eval reads every argument after the first run file as a run file
        lines = [json.loads(x) for x in subprocess.run(cmd, check=True, capture_output=True, text=True,
                                                       cwd=PREF_EVAL).stdout.splitlines()]
        data = load(qrels, runs)
        names = cli_names(topk, binary)
        got = _pairwise_values(data, list(names.values()), [(0, 1)])
        for measure, name in names.items():
            pe = {d["qid"]: d[measure] for d in lines}
            mine = {t: v for t, v in zip(data.topics, got[name][0]) if not math.isnan(v)}
            assert set(mine) == set(pe)
            for t in pe:
                assert mine[t] == pytest.approx(pe[t], rel=1e-15, abs=1e-15), (measure, t)
