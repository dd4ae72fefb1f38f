"""The plain-Python references of ``reference.cwl`` against ir_measures itself, query by query.

ir_measures' ``cwl_eval`` provider (cwl-eval 1.0.12) returns each per-query value as an unrounded float64 (cwl_eval's
own command line prints 4 decimals; ir_measures does not go through it), and so do the ``compat`` and ``accuracy``
providers.  Reference and provider evaluate the same formula in float64 and differ only in summation order over at
most 1000 ranks (numpy's cumprod/dot against Python loops): the error is a few hundred ulps at most, hence
``rel=1e-9, abs=1e-12`` (observed differences are below 2e-15).

Ranked labels are built the way ir_measures orders a run: a stable sort by score descending over the run's rows in
file order, so tied documents keep their file order (``test_ties_follow_run_order`` checks that this, and not
trec_eval's docno-descending order, is what ir_measures does).  Compat sorts ties by docno ascending instead and is
given the documents and scores themselves.
"""
import random
from pathlib import Path

import ir_measures
import pytest
from ir_measures import Qrel, ScoredDoc

from reference import cwl as R

WEB = Path(__file__).parents[2] / "shared" / "data" / "web2012"
needs_web = pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")
TOL = dict(rel=1e-9, abs=1e-12)


# --- inputs --------------------------------------------------------------------------------------------------------

def read_qrels(path):
    return [Qrel(q, d, int(g)) for q, _, d, g in (line.split() for line in open(path) if line.strip())]


def read_run(path):
    return [ScoredDoc(q, d, float(s)) for q, _, d, _, s, _ in (line.split() for line in open(path) if line.strip())]


def by_query(rows):
    out = {}
    for r in rows:
        out.setdefault(r.query_id, []).append(r)
    return out


def qrels_dict(qrels):
    out = {}
    for r in qrels:
        out.setdefault(r.query_id, {})[r.doc_id] = r.relevance
    return out


def ranked_labels(rows, judged):
    """Labels in ir_measures' order: stable sort by score descending (ties keep run order); None = unjudged."""
    return [judged.get(r.doc_id) for r in sorted(rows, key=lambda r: r.score, reverse=True)]


def random_case(seed, n_queries=12):
    """Random qrels and run with numeric query ids and distinct scores, covering the edge cases.

    Query 1 has no relevant document; query 2 a run longer than the 1000-rank horizon; query 3 a single document;
    query 4 is judged but absent from the run; query 999 is in the run but not judged.
    """
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(1, n_queries + 1):
        n_docs = 1200 if q == 2 else 1 if q == 3 else rng.randint(2, 60)
        docs = [f"d{q}-{i}" for i in range(n_docs)]
        for d in docs:
            if rng.random() < 0.7:  # the rest stay unjudged
                grade = 0 if q == 1 else rng.choice([-2, -1, 0, 0, 0, 1, 1, 2, 3, 4, 5])
                qrels.append(Qrel(str(q), d, grade))
        qrels.append(Qrel(str(q), f"unretrieved-{q}", 0 if q == 1 else 2))
        if q != 4:
            scores = rng.sample(range(10 * n_docs), n_docs)  # distinct
            run += [ScoredDoc(str(q), d, s / 7.0 - 3.0) for d, s in zip(docs, scores)]
    run += [ScoredDoc("999", "x", 1.0)]
    return qrels, run


# --- measures: (ir_measures string or measure, reference(ranked labels)) --------------------------------------------
# (ir_measures' parser rejects negative values, hence measure objects for min_rel < 0)

CWL_CASES = [
    ("NERR8(max_rel=4)@10", lambda L: R.nerr8(L, 10, 4)),
    ("NERR8(max_rel=4)@1", lambda L: R.nerr8(L, 1, 4)),
    ("NERR8(max_rel=3, min_rel=1)@20", lambda L: R.nerr8(L, 20, 3, min_rel=1)),
    ("NERR8(max_rel=1)@1500", lambda L: R.nerr8(L, 1500, 1)),
    ("NERR9(max_rel=4)@10", lambda L: R.nerr9(L, 10, 4)),
    ("NERR9(max_rel=2)@5", lambda L: R.nerr9(L, 5, 2)),
    (ir_measures.NERR9(max_rel=4, min_rel=-2) @ 20, lambda L: R.nerr9(L, 20, 4, min_rel=-2)),
    ("NERR10(max_rel=4)", lambda L: R.nerr10(L, 4)),
    ("NERR10(max_rel=4, p=0.5)", lambda L: R.nerr10(L, 4, p=0.5)),
    ("NERR10(max_rel=3, min_rel=1, p=0.99)", lambda L: R.nerr10(L, 3, min_rel=1, p=0.99)),
    ("NERR11(max_rel=4)", lambda L: R.nerr11(L, 4)),
    ("NERR11(max_rel=4, T=3)", lambda L: R.nerr11(L, 4, T=3.0)),
    ("NERR11(max_rel=2, T=0.5)", lambda L: R.nerr11(L, 2, T=0.5)),
    ("BPM(max_rel=4)@20", lambda L: R.bpm(L, 20, 4)),
    ("BPM(max_rel=4, T=2)@10", lambda L: R.bpm(L, 10, 4, T=2.0)),
    ("BPM(max_rel=1, T=0.5)@5", lambda L: R.bpm(L, 5, 1, T=0.5)),
    ("BPM(max_rel=4, T=5)@2000", lambda L: R.bpm(L, 2000, 4, T=5.0)),
    (ir_measures.BPM(max_rel=3, min_rel=-1) @ 20, lambda L: R.bpm(L, 20, 3, min_rel=-1)),
    ("INST(max_rel=4)", lambda L: R.inst(L, 4)),
    ("INST(max_rel=4, T=3)", lambda L: R.inst(L, 4, T=3.0)),
    ("INST(max_rel=1, T=0.25)", lambda L: R.inst(L, 1, T=0.25)),
    ("INST(max_rel=3, min_rel=1, T=2)", lambda L: R.inst(L, 3, min_rel=1, T=2.0)),
    ("INSQ(max_rel=4)", lambda L: R.insq(L, 4)),
    ("INSQ(max_rel=4, T=3)", lambda L: R.insq(L, 4, T=3.0)),
    (ir_measures.INSQ(max_rel=2, min_rel=-2, T=0.5), lambda L: R.insq(L, 2, min_rel=-2, T=0.5)),
    ("SDCG(max_rel=4)@10", lambda L: R.sdcg(L, 10, 4)),
    ("SDCG(max_rel=1)@5", lambda L: R.sdcg(L, 5, 1)),
    ("SDCG(max_rel=4, min_rel=2, dcg='log2')@1200", lambda L: R.sdcg(L, 1200, 4, min_rel=2, dcg="log2")),
]
ACCURACY_CASES = [
    ("Accuracy", lambda L: R.accuracy(L)),
    ("Accuracy@50", lambda L: R.accuracy(L, cutoff=50)),
    ("Accuracy(rel=2)@100", lambda L: R.accuracy(L, rel=2, cutoff=100)),
]
COMPAT_CASES = [(0.95, True), (0.8, True), (0.95, False), (0.5, False)]


def as_measure(measure):
    return ir_measures.parse_measure(measure) if isinstance(measure, str) else measure


def check_cwl(measure, ref, qrels, run):
    """Every per-query value of ``measure`` from ir_measures against the reference; returns the values."""
    m = as_measure(measure)
    judged = qrels_dict(qrels)
    rows = by_query(run)
    got = {r.query_id: r.value for r in ir_measures.cwl_eval.iter_calc([m], qrels, run)}
    assert set(got) == set(judged)  # every judged query, none of the run's unjudged ones
    for q, value in got.items():
        expected = ref(ranked_labels(rows[q], judged[q])) if q in rows else 0.0  # absent from the run: 0
        assert value == pytest.approx(expected, **TOL), (measure, q)
    return got


def check_accuracy(measure, ref, qrels, run):
    m = ir_measures.parse_measure(measure)
    judged = qrels_dict(qrels)
    rows = by_query(run)
    got = {r.query_id: r.value for r in ir_measures.accuracy.iter_calc([m], qrels, run)}
    expected = {}
    for q in rows:
        if q in judged:
            v = ref(ranked_labels(rows[q], judged[q]))
            if v is not None:
                expected[q] = v
    assert set(got) == set(expected)
    for q, v in expected.items():
        assert got[q] == pytest.approx(v, **TOL), (measure, q)


def check_compat(p, normalize, qrels, run):
    m = ir_measures.Compat(p=p, normalize=normalize)
    judged = qrels_dict(qrels)
    rows = by_query(run)
    got = {r.query_id: r.value for r in ir_measures.compat.iter_calc([m], qrels, run)}
    assert set(got) == set(judged)
    for q, value in got.items():
        if q in rows:
            expected = R.compat([r.doc_id for r in rows[q]], {r.doc_id: r.score for r in rows[q]}, judged[q], p,
                                normalize)
        else:
            expected = 0.0
        assert value == pytest.approx(expected, **TOL), (p, normalize, q)


# --- real data ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def web():
    return read_qrels(WEB / "qrels.adhoc.txt"), {n: read_run(WEB / f"run.{n}.cata.txt") for n in ("ql", "rm")}


@needs_web
@pytest.mark.parametrize("measure, ref", CWL_CASES, ids=[str(c[0]) for c in CWL_CASES])
def test_cwl_web2012(web, measure, ref):
    qrels, runs = web
    for run in runs.values():
        values = check_cwl(measure, ref, qrels, run)
        assert sum(v > 0 for v in values.values()) >= 5  # not a comparison of zeros


@needs_web
@pytest.mark.parametrize("measure, ref", ACCURACY_CASES, ids=[c[0] for c in ACCURACY_CASES])
def test_accuracy_web2012(web, measure, ref):
    qrels, runs = web
    for run in runs.values():
        check_accuracy(measure, ref, qrels, run)


@needs_web
@pytest.mark.parametrize("p, normalize", COMPAT_CASES)
def test_compat_web2012(web, p, normalize):
    qrels, runs = web
    for run in runs.values():
        check_compat(p, normalize, qrels, run)


# --- random data ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cwl_random(seed):
    qrels, run = random_case(seed)
    for measure, ref in CWL_CASES:
        values = check_cwl(measure, ref, qrels, run)
        assert values["4"] == 0.0  # judged but not retrieved
        # no relevant document: 0, unless min_rel < 0 gives judged grade-0 documents a positive gain
        assert (values["1"] == 0.0) == (as_measure(measure)["min_rel"] >= 0), measure


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_accuracy_compat_random(seed):
    qrels, run = random_case(seed)
    # Accuracy divides by the number of non-relevant documents retrieved: drop query 3 (one document), which may
    # have none (see test_accuracy_all_relevant_raises).
    run = [r for r in run if r.query_id != "3"]
    for measure, ref in ACCURACY_CASES:
        check_accuracy(measure, ref, qrels, run)
    for p, normalize in COMPAT_CASES:
        check_compat(p, normalize, qrels, run)


# --- conventions -------------------------------------------------------------------------------------------------

def test_ties_follow_run_order():
    """Tied scores keep the run's row order in ir_measures' cwl provider (trec_eval would put docno "b" first)."""
    qrels = [Qrel("1", "a", 0), Qrel("1", "b", 4), Qrel("1", "c", 2)]
    run = [ScoredDoc("1", "a", 1.0), ScoredDoc("1", "b", 1.0), ScoredDoc("1", "c", 0.5)]
    file_order = [0, 4, 2]
    trec_eval_order = [4, 0, 2]  # score descending, docno descending
    for measure, ref in CWL_CASES:
        (got,) = ir_measures.cwl_eval.iter_calc([as_measure(measure)], qrels, run)
        assert got.value == pytest.approx(ref(file_order), **TOL), measure
    assert R.nerr10(file_order, 4) != pytest.approx(R.nerr10(trec_eval_order, 4))  # the order matters


def test_noncontiguous_rows_give_two_values():
    """ir_measures groups the run by consecutive query id: a query split in two blocks gets two values."""
    qrels = [Qrel("1", "a", 1), Qrel("1", "b", 0), Qrel("2", "c", 1)]
    run = [ScoredDoc("1", "a", 1.0), ScoredDoc("2", "c", 1.0), ScoredDoc("1", "b", 2.0)]
    got = [(r.query_id, r.value) for r in ir_measures.cwl_eval.iter_calc([ir_measures.parse_measure("INSQ(max_rel=1)")],
                                                                          qrels, run)]
    assert [q for q, _ in got] == ["1", "2", "1"]
    assert got[0][1] == pytest.approx(R.insq([1], 1), **TOL) and got[2][1] == pytest.approx(R.insq([0], 1), **TOL)


def test_gain_scaling():
    """Negative grades count as 0, then grades are clipped to [min_rel, max_rel]; unjudged documents get gain 0."""
    assert R.gain(-2, 0, 4) == 0.0 and R.gain(None, 0, 4) == 0.0 and R.gain(5, 0, 4) == 1.0 and R.gain(2, 0, 4) == 0.5
    assert R.gain(0, -2, 2) == 0.5 and R.gain(-1, -2, 2) == 0.5 and R.gain(None, -2, 2) == 0.0
    assert R.gain(1, 1, 3) == 0.0 and R.gain(0, 1, 3) == 0.0


def test_accuracy_all_relevant_raises():
    """When every retrieved document is relevant, ir_measures divides by zero, and so does the reference."""
    qrels = [Qrel("1", "a", 1), Qrel("1", "b", 2)]
    run = [ScoredDoc("1", "a", 1.0), ScoredDoc("1", "b", 2.0)]
    with pytest.raises(ZeroDivisionError):
        list(ir_measures.accuracy.iter_calc([ir_measures.Accuracy], qrels, run))
    with pytest.raises(ZeroDivisionError):
        R.accuracy([2, 1])


def test_sdcg_rejects_other_dcg():
    with pytest.raises(ValueError, match="only dcg='log2' is defined"):
        R.sdcg([1, 0], 10, 1, dcg="exp-log2")
