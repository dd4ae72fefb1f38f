"""The ir_measures provider (``rankjit.integrations.ir_measures``) gives ir_measures' own numbers.

Every comparison runs the same ``ir_measures`` call twice: with ir_measures' default pipeline
alone (its providers: pytrec_eval, gdeval, cwl_eval, msmarco, judged, pyndeval) and with the
rankjit provider registered first in it.  Per query, to 1e-9; gdeval prints 5 decimals (half
a unit of the last), ndeval's values are compared within half a unit of its 6th decimal, as
in ``test_ir_measures_names.py`` and ``test_diversity_ir_measures.py``; cwl_eval's C/W/L measures
(SDCG, INSQ, INST, BPM, NERR8-NERR11) come from its classes as full doubles: 1e-9.  Inputs: the TREC
2012 Web track runs (adhoc and diversity qrels), trec_eval's test files and random qrels and
runs (ties, unjudged documents, judged documents never retrieved, negative grades, queries
without judgments or results), each given as dicts of dicts, DataFrames and named tuples.

Two ir_measures bugs are not reproduced; the tests go around them: its pyndeval provider
computes every (rel, alpha, beta) set but the first as 0 in a mixed call (each set is checked
in a call of its own), and fails on ``judged_only=True`` (checked against pyndeval itself on
the run cut to the judged documents).  The pytrec_eval provider puts ``NumRet`` in whichever
pytrec_eval call comes first, a ``judged_only=True`` one included (then it counts judged
documents only): ``NumRet`` is never mixed with ``judged_only=True`` measures here.  It may also put
``nDCG@k`` in the call of ``nDCG(gains=...)@k`` (both then read one value): never mixed either.
"""
from __future__ import annotations

import copy
import itertools
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numba
import numpy as np
import pytest

ir_measures = pytest.importorskip("ir_measures")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from ir_measures import Qrel, ScoredDoc  # noqa: E402

from rankjit.integrations import ir_measures as rj  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
WEB = SHARED / "web2012"
SUITE = SHARED / "trec_eval"
needs_web = pytest.mark.skipif(not WEB.is_dir(), reason=f"{WEB} not found (../shared/data absent)")
needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"{SUITE} not found (../shared/data absent)")

#: computed by pytrec_eval in ir_measures
PYTREC = (
    "P@5", "P(rel=2)@10", "R@10", "R(rel=2)@20", "Success@1", "Success(rel=2)@10", "RR", "RR(rel=2)", "AP", "AP@10",
    "AP(rel=2)@100", "Rprec", "Rprec(rel=2)", "nDCG", "nDCG@10", "nDCG@1000", "SetP", "SetP(rel=2)", "SetR",
    "SetF", "SetF(beta=0.5)", "SetAP", "SetRelP", "IPrec@0.1", "IPrec@0.25", "IPrec@1.0", "IPrec(rel=2)@0.3",
    "IPrec@0.125", "NumQ", "NumRet", "NumRet(rel=1)", "NumRel", "NumRelRet(rel=2)", "Bpref", "Bpref(rel=2)", "infAP",
    "infAP(rel=2)",
)
#: pytrec_eval with gain maps (each map its own pytrec_eval call; never next to nDCG@k, see the module docstring)
GAINS = (
    "nDCG(gains={0:0,1:1,2:3})", "nDCG(gains={0:0,1:2,2:5,3:9,4:10})@10", "nDCG(gains={1:3,2:0})@5",
    "nDCG(gains={0:0,1:1,2:3},judged_only=True)@20", "nDCG(gains={2:1})@3",
    # grade 0 gains: a judged grade-0 document only, never an unjudged one (nor one judged below 0)
    "nDCG(gains={0:1,1:2})@10", "nDCG(gains={0:1,1:2})",
)
#: cwl_eval's C/W/L measures (ir_measures reads cwl_eval's classes: full doubles)
CWL = (
    "SDCG(max_rel=4)@10", "SDCG(max_rel=4)@1000", "SDCG(min_rel=1,max_rel=3)@20", "INSQ(max_rel=4)",
    "INSQ(T=3.0,max_rel=2)", "INST(T=2.0,max_rel=4)", "INST(min_rel=1,max_rel=4)", "INST(T=0.5,max_rel=1)",
    "BPM(T=1.0,max_rel=4)@20", "BPM(T=0.5,min_rel=1,max_rel=2)@50", "BPM(T=3.0,max_rel=4)@1000",
    "NERR8(max_rel=4)@10", "NERR8(min_rel=2,max_rel=4)@100", "NERR9(max_rel=4)@10", "NERR9(max_rel=3)@1000",
    "NERR10(p=0.8,max_rel=4)", "NERR10(min_rel=2,max_rel=4)", "NERR11(T=2.0,max_rel=4)", "NERR11(min_rel=1,max_rel=2)",
)
JUDGED_ONLY = (
    "P(judged_only=True)@5", "R(judged_only=True)@10", "Success(judged_only=True)@5", "RR(judged_only=True)",
    "AP(judged_only=True)", "AP(judged_only=True)@10", "Rprec(judged_only=True)", "nDCG(judged_only=True)@10",
    "SetP(judged_only=True)", "SetF(judged_only=True)", "SetAP(judged_only=True)", "IPrec(judged_only=True)@0.2",
)
#: gdeval (ERR, exp-gain nDCG), cwl_eval (RBP, the C/W/L measures), msmarco (RR@k), judged (Judged)
OTHERS = (
    "ERR@10", "ERR@20", "nDCG(dcg='exp-log2')@10", "RBP(rel=1)", "RBP(p=0.5,rel=2)", "RBP(p=0.99,rel=1)",
    "RR@5", "RR(rel=2)@10", "Judged", "Judged@5", "Judged@10",
) + CWL
#: measures ir_measures can compute that the provider leaves to it
UNSUPPORTED = (
    "ERR_IA@1", "alpha_DCG@1", "alpha_nDCG@25", "P(rel=0)@5", "RBP(p=1.0,rel=1)", "Compat(p=0.8)",
    "nDCG(dcg='exp-log2')", "P@0", "nDCG(gains={0:0,1:1.5})@10", "Bpref(rel=0)", "INST(min_rel=4,max_rel=4)",
    "SDCG(max_rel=4)@0",
)
#: names of UNSUPPORTED that only ir_measures' optional providers (ranx, trectools) compute
OPTIONAL_PROVIDER_ONLY = ("nDCG(dcg='exp-log2')",)
GDEVAL_TOL = 5e-6 + 1e-12  # gdeval prints %.5f
NDEVAL_TOL = 5e-7  # ndeval's 6th decimal
M = ir_measures.measures


@pytest.fixture(autouse=True)
def unregistered():
    """Every test starts and ends with ir_measures' own pipeline."""
    rj.unregister()
    yield
    rj.unregister()


def parse(names):
    return [ir_measures.parse_measure(n) for n in names]


def per_query(metrics):
    out = {}
    for m in metrics:
        key = (str(m.measure), m.query_id)
        assert key not in out, f"{key} reported twice"
        out[key] = float(m.value)
    return out


def theirs(measures, qrels, run):
    assert not rj.is_registered()
    return per_query(ir_measures.iter_calc(measures, qrels, run))


def ours(measures, qrels, run):
    with rj.registered():
        return per_query(ir_measures.iter_calc(measures, qrels, run))


def tolerance(name):
    if name.startswith("ERR@") or "exp-log2" in name:
        return GDEVAL_TOL
    if any(name.startswith(p) for p in ("ERR_IA", "nERR_IA", "alpha_", "NRBP", "nNRBP", "AP_IA", "P_IA", "StRecall")):
        return NDEVAL_TOL
    return 1e-9


def assert_same(got, want):
    assert set(got) == set(want), sorted(set(got) ^ set(want))[:10]
    bad = []
    for key, w in want.items():
        g = got[key]
        if math.isnan(w):
            if not math.isnan(g):
                bad.append((key, g, w))
        elif not abs(g - w) <= tolerance(key[0]):
            bad.append((key, g, w))
    assert not bad, f"{len(bad)} values differ, e.g. {bad[:5]}"


# ---- the inputs in ir_measures' three forms ------------------------------------------------------


def as_frames(qrels, run):
    """DataFrames of dicts of dicts (rows in the dicts' order)."""
    q = pd.DataFrame([(qid, d, g) for qid, docs in qrels.items() for d, g in docs.items()],
                     columns=["query_id", "doc_id", "relevance"])
    r = pd.DataFrame([(qid, d, s) for qid, docs in run.items() for d, s in docs.items()],
                     columns=["query_id", "doc_id", "score"])
    return q, r


def as_tuples(qrels, run):
    return ([Qrel(qid, d, g) for qid, docs in qrels.items() for d, g in docs.items()],
            [ScoredDoc(qid, d, s) for qid, docs in run.items() for d, s in docs.items()])


FORMS = {"dict": lambda q, r: (q, r), "DataFrame": as_frames, "namedtuple": as_tuples}


def compare(names, qrels, run, forms=FORMS):
    """ir_measures alone (dict form) against ir_measures with rankjit, in every form."""
    measures = parse(names)
    assert all(rj.supports(m) for m in measures), [n for n, m in zip(names, measures) if not rj.supports(m)]
    want = theirs(measures, qrels, run)
    for form in forms:
        q, r = FORMS[form](qrels, run)
        assert_same(ours(measures, q, r), want)
    return want


def read_dicts(qrels_path, run_path):
    """Dicts of dicts of TREC files (plain Python: results.trunc has lines that ir_measures' reader refuses)."""
    qrels, run = {}, {}
    for line in Path(qrels_path).read_text().splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    for line in Path(run_path).read_text().splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            run.setdefault(f[0], {})[f[2]] = float(f[4])
    return qrels, run


def random_dicts(seed, n_queries=12, ties=True, n_docs=45):
    """Numeric query ids (gdeval reads no others), grades -1..4, unjudged and unretrieved documents."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = str(100 + q)
        pool = [f"d{q}_{i}" for i in rng.permutation(n_docs + 20).tolist()]
        n_ret = int(rng.integers(1, n_docs))
        scores = rng.integers(0, 6, n_ret) / 4.0 if ties else rng.permutation(10 * n_ret)[:n_ret] / 7.0 - 3.0
        run[qid] = dict(zip(pool[:n_ret], scores.tolist()))
        judged = [d for d in pool if rng.random() < 0.5] or pool[:1]
        grades = rng.choice([-1, 0, 0, 1, 1, 2, 3, 4], len(judged))
        if q == 3:
            grades[:] = 0  # a query without relevant documents
        qrels[qid] = dict(zip(judged, grades.tolist()))
    qrels["500"] = {"x": 1, "y": 0}  # judged, not retrieved
    run["600"] = {"x": 1.0}  # retrieved, not judged
    return qrels, run


# ---- the TREC 2012 Web track, trec_eval's test files, random runs ------------------------------


@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
@needs_web
@pytest.mark.parametrize("run_name", ["run.ql.cata.txt", pytest.param("run.rm.cata.txt", marks=pytest.mark.slow)])
def test_web2012_per_query(run_name):
    qrels, run = read_dicts(WEB / "qrels.adhoc.txt", WEB / run_name)
    want = compare(PYTREC + OTHERS, qrels, run, forms=["dict"])
    assert len(want) == 50 * len(PYTREC + OTHERS)
    compare(JUDGED_ONLY, qrels, run, forms=["dict"])
    compare(GAINS, qrels, run, forms=["dict"])


@needs_web
@pytest.mark.slow
@pytest.mark.parametrize("form", ["DataFrame", "namedtuple"])
def test_web2012_per_query_other_forms(form):
    qrels, run = read_dicts(WEB / "qrels.adhoc.txt", WEB / "run.ql.cata.txt")
    compare(PYTREC + OTHERS, qrels, run, forms=[form])
    compare(JUDGED_ONLY, qrels, run, forms=[form])
    compare(GAINS, qrels, run, forms=[form])


@needs_web
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_web2012_files_read_by_ir_measures():
    """``ir_measures.read_trec_qrels`` / ``read_trec_run`` generators, as users pass them."""
    qrels_path, run_path = str(WEB / "qrels.adhoc.txt"), str(WEB / "run.rm.cata.txt")
    measures = parse(["nDCG@10", "AP", "P@10", "R@100", "RR", "Judged@10", "RBP(rel=1)", "ERR@20"])
    want = theirs(measures, ir_measures.read_trec_qrels(qrels_path), ir_measures.read_trec_run(run_path))
    got = ours(measures, ir_measures.read_trec_qrels(qrels_path), ir_measures.read_trec_run(run_path))
    assert_same(got, want)


@needs_web
@pytest.mark.slow
def test_web2012_aggregates_calc_and_evaluator():
    """calc_aggregate (sums for the counts), calc and an evaluator reused on two runs."""
    qrels, run_ql = read_dicts(WEB / "qrels.adhoc.txt", WEB / "run.ql.cata.txt")
    _, run_rm = read_dicts(WEB / "qrels.adhoc.txt", WEB / "run.rm.cata.txt")
    measures = parse(["NumQ", "NumRet", "NumRel", "NumRelRet(rel=2)", "P@10", "AP", "nDCG@10", "Judged@10",
                      "RBP(rel=1)", "ERR@20", "RR@10"])
    want = ir_measures.calc_aggregate(measures, qrels, run_ql)
    want_ev = ir_measures.evaluator(measures, qrels)
    want_rm = want_ev.calc_aggregate(run_rm)
    want_calc = ir_measures.calc(measures, qrels, run_rm)
    with rj.registered():
        got = ir_measures.calc_aggregate(measures, qrels, run_ql)
        ev = ir_measures.evaluator(measures, qrels)
        assert type(ev).__name__ == "RankjitEvaluator"
        got_ql, got_rm = ev.calc_aggregate(run_ql), ev.calc_aggregate(run_rm)
        got_calc = ir_measures.calc(measures, qrels, run_rm)
    assert got[M.NumQ] == 50.0 and got[M.NumRet] == 50000.0  # summed, as ir_measures sums them
    for m in measures:
        tol = tolerance(str(m))
        assert got[m] == pytest.approx(want[m], abs=tol, rel=0) and got_ql[m] == got[m], m
        assert got_rm[m] == pytest.approx(want_rm[m], abs=tol, rel=0), m
        assert got_calc.aggregated[m] == pytest.approx(want_calc.aggregated[m], abs=tol, rel=0), m
        assert isinstance(got[m], float)
    assert_same(per_query(got_calc.per_query), per_query(want_calc.per_query))


@needs_suite
@pytest.mark.parametrize("qrels_name, run_name", [("qrels.test", "results.test"), ("qrels.rel_level", "results.test"),
                                                  ("qrels.test", "results.trunc")])
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_trec_eval_suite_files(qrels_name, run_name):
    qrels, run = read_dicts(SUITE / qrels_name, SUITE / run_name)
    compare(PYTREC + OTHERS, qrels, run, forms=["dict", "DataFrame"])
    compare(JUDGED_ONLY, qrels, run, forms=["dict"])
    compare(GAINS, qrels, run, forms=["dict", "namedtuple"])


@pytest.mark.parametrize("seed", range(4))
def test_random_runs_with_ties(seed):
    qrels, run = random_dicts(seed, ties=True)
    compare(PYTREC + OTHERS, qrels, run)
    compare(JUDGED_ONLY, qrels, run)
    compare(GAINS, qrels, run)


@pytest.mark.parametrize("seed", [10, 11])
def test_random_runs_without_ties(seed):
    qrels, run = random_dicts(seed, ties=False)
    compare(PYTREC + OTHERS, qrels, run, forms=["dict", "namedtuple"])
    compare(JUDGED_ONLY, qrels, run, forms=["DataFrame"])
    compare(GAINS, qrels, run, forms=["DataFrame"])


def test_ties_at_a_cutoff_follow_each_provider():
    """Two documents tie at rank 2: trec_eval ranks docno descending, msmarco and judged doc_id ascending,
    cwl_eval keeps the run's order; each measure follows the provider ir_measures uses for it."""
    qrels = {"1": {"a": 1, "b": 0, "z": 2}}
    run = {"1": {"z": 3.0, "b": 1.0, "a": 1.0, "c": 1.0, "d": 0.5}}
    want = compare(["P@2", "RR", "RR@2", "Judged@2", "RBP(rel=1)", "nDCG@2", "ERR@2", "Bpref", "infAP",
                    "SDCG(max_rel=2)@2", "BPM(T=1.0,max_rel=2)@3"], qrels, run)
    assert want[("P@2", "1")] == 0.5  # trec_eval: z, then c (docno descending among a, b, c)
    assert want[("RR@2", "1")] == 1.0
    assert want[("Judged@2", "1")] == 1.0  # judged provider: z, then a (doc_id ascending)
    # cwl_eval: z, b, a (the run's order); rank 2 gains nothing, so SDCG@2 is 1 / (1 + 1 / log2(3))
    assert want[("SDCG(max_rel=2)@2", "1")] == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-12)


@pytest.mark.parametrize("names", [[n] for n in (
    "P@5", "R@10", "Success@1", "AP@10", "nDCG@10", "nDCG(gains={0:1,1:2})@5", "nDCG(dcg='exp-log2')@10", "ERR@5",
    "RR@5", "Judged@5", "P(judged_only=True)@5", "R(judged_only=True)@10", "Success(judged_only=True)@5",
    "AP(judged_only=True)@10", "nDCG(judged_only=True)@10", "nDCG(gains={0:0,1:1,2:3},judged_only=True)@5")]
    + [["P@3", "nDCG@20"], ["P@2", "Judged@2", "RR@3"], ["P(judged_only=True)@3", "nDCG@5"]], ids=" ".join)
@pytest.mark.parametrize("ties", [True, False])
def test_cutoff_measures_alone_or_together(names, ties):
    """Measures with cutoffs alone, or only with others of cutoffs: rankjit places the judged documents of the
    first ranks alone, except under judged_only=True (the k-th judged document may lie deeper in the run)."""
    qrels, run = random_dicts(20 + ties, ties=ties, n_docs=90)
    compare(names, qrels, run, forms=["dict", "namedtuple"])


@pytest.mark.parametrize("n_mixed", [2, 10])
def test_few_or_most_queries_whose_ties_mix_judgments(n_mixed):
    """Equal scores that mix judgments in 2 of 12 queries (the others evaluated once, pessimistic; those 2 ranked
    by doc_id and evaluated again) or in 10 (every query ranked by doc_id): ir_measures' values either way."""
    qrels, run = random_dicts(7, ties=False)
    for qid in list(run)[:n_mixed]:
        docs = list(run[qid])
        judged = [d for d in docs if d in qrels[qid]]
        unjudged = [d for d in docs if d not in qrels[qid]]
        for d in (judged[:2] + unjudged[:2]):
            run[qid][d] = 0.5  # ties of judged and unjudged documents (grades differ too, mostly)
    compare(PYTREC + OTHERS, qrels, run, forms=["dict", "DataFrame"])
    compare(JUDGED_ONLY, qrels, run, forms=["dict"])  # (apart: ir_measures mixes up nDCG next to a gain map)
    compare(GAINS, qrels, run, forms=["dict"])


@pytest.mark.parametrize("seed", range(12))
def test_ranked_places_each_judged_document_as_a_full_sort_does(seed):
    """rj._ranked (the judged documents placed by counting higher scores, ties by doc_id, compiled or in Python)
    against sorting every document by (score descending, doc_id descending or ascending): the same judged document
    at each rank, and only unjudged ones (or, unless all are placed, ones of grade <= 0) elsewhere."""
    rng = np.random.default_rng(seed)
    alphabet = ["a", "B", "\u00e9", "\uffff", "\U00010000"]
    qrels, run = {}, {}
    for q in range(6):
        big = q == 5  # (300 documents, most judged: the placement's counting by binary search)
        pool = list(dict.fromkeys(f"{alphabet[rng.integers(5)]}{rng.integers(400 if big else 40)}"
                                  for _ in range(300 if big else 50)))
        n_ret = int(rng.integers(0, len(pool)))
        run[str(q)] = dict(zip(pool[:n_ret], (rng.integers(0, 4, n_ret) / 2).tolist()))  # many ties
        judged = [d for d in pool if rng.random() < 0.6] or pool[:1]
        qrels[str(q)] = dict(zip(judged, rng.integers(-1, 4, len(judged)).tolist()))
    judgments = rj._Qrels(qrels)
    batch = rj._batch(judgments, run)
    al = rj._aligned(judgments, batch)
    # dicts None: the ids compared in Python (doc_at), else in the compiled pass over the run's dicts
    assert batch.dicts is not None and batch.positions is not None or numba.config.DISABLE_JIT
    for all_judged, descending, dicts in itertools.product((False, True), (True, False), (batch.dicts, None)):
        ranked = rj._ranked(al, batch.doc_at, dicts, batch.positions, all_judged, descending)
        assert (np.diff(ranked.scores) < 0).all()  # (the ranking as built: scores 0, -1, -2, ...)
        for g, qid in enumerate(batch.qids):
            docs = list(run[qid])
            key = (lambda d: (run[qid][d], d)) if descending else (lambda d: (run[qid][d], _Desc(d)))
            want = sorted(docs, key=key, reverse=True)
            lo, hi = ranked.offsets[g], ranked.offsets[g + 1]
            for rank, doc in enumerate(want):
                grade = qrels[qid].get(doc)
                placed = grade is not None and (all_judged or grade > 0)
                got = (int(ranked.labels[lo + rank]), bool(ranked.judged[lo + rank]),
                       bool(ranked.judged_below_zero[lo + rank]))
                if placed:
                    assert got == (max(grade, 0), grade >= 0, grade < 0), (qid, rank, doc)
                else:  # an unjudged document's place (or, unless all_judged, one of grade <= 0)
                    assert got[0] == 0 and (all_judged or not got[1] and not got[2]) and hi - lo == len(want)


class _Desc(str):
    """A str that sorts in reverse (sorted(..., reverse=True) then gives ids ascending)."""

    def __lt__(self, other):
        return str.__gt__(self, other)


def test_measures_not_monotone_in_tied_labels_are_ranked_by_doc_id():
    """Orders of tied documents by label (lowest or highest first) do not bound these measures; each alone.

    Three documents tie; gains {1: 3, 2: 0} make grade 1 worth more than grade 2, so the
    lowest-label-first and highest-label-first orders give the same value (grade 1 in the
    middle) while trec_eval's docno descending order puts it first: nDCG 1.  infAP reads the
    pooled-unjudged (d8) and unpooled (d0) documents tied with a relevant one (d2).
    """
    qrels = {"1": {"z": 1, "y": 0, "x": 2}, "2": {"d2": 2, "d3": 3, "d5": -1, "d7": 1, "d8": -1}}
    run = {"1": {"x": 1.0, "y": 1.0, "z": 1.0}, "2": {"d6": 1.0, "d8": 0.0, "d4": 1.0, "d2": 0.0, "d1": 1.0, "d0": 0.0}}
    for name in ("nDCG(gains={1:3,2:0})@3", "Bpref", "infAP", "Bpref(rel=2)", "infAP(rel=2)"):
        want = compare([name], qrels, run)
    assert want[("infAP(rel=2)", "2")] == pytest.approx(0.15, abs=1e-12)  # trec_eval's order: d8, d2, d0
    assert compare(["nDCG(gains={1:3,2:0})@3"], qrels, run)[("nDCG(gains={1:3,2:0})@3", "1")] == 1.0


@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_cwl_measures_with_grades_beyond_an_ideal_count_table():
    """cwl_eval clips grades at max_rel; a grade of 10^9 does not stop rankjit (labels are capped first)."""
    qrels = {"1": {"a": 10 ** 9, "b": 1, "c": 3, "d": 5}, "2": {"a": 3}, "3": {"c": 2}}
    run = {"1": {"a": 1.0, "b": 2.0, "c": 2.0, "e": 2.0, "d": 0.1}, "2": {}, "4": {"a": 1.0}}
    compare(["SDCG(max_rel=4)@10", "INST(max_rel=4)", "RBP(rel=2)", "BPM(T=2.0,max_rel=6)@5", "NERR10(max_rel=2)",
             "Bpref", "infAP(rel=3)", "nDCG(gains={1:2,3:1})@5"], qrels, run)


def test_queries_without_judgments_or_results():
    """A qrels key with no judgment, a judged query with an empty run, queries on one side only."""
    qrels = {"1": {"a": 1, "b": 2}, "2": {"a": 1}, "3": {}, "4": {"z": 1}, "5": {"b": 0}}
    run = {"1": {"a": 1.0, "b": 2.0, "d": 0.5}, "2": {}, "3": {"a": 1.0}, "9": {"a": 1.0}, "5": {"b": 1.0}}
    names = [n for n in PYTREC + OTHERS if not n.startswith("Judged")]
    want = compare(names, qrels, run, forms=["dict"])
    assert want[("NumQ", "2")] == 1.0 and want[("NumQ", "3")] == 0.0  # pytrec_eval: "2" evaluated, "3" not
    assert ("RBP(rel=1)", "3") in want  # a mixed call reports every measure for pytrec_eval's queries
    for names_alone in (["RBP(rel=1)"], ["RBP(rel=1)", "ERR@5", "RR@3"]):
        alone = compare(names_alone, qrels, run, forms=["dict"])
        assert ("RBP(rel=1)", "3") not in alone and ("RBP(rel=1)", "4") in alone  # cwl_eval: queries with judgments
    agg_names = parse(["NumQ", "NumRel", "AP", "RBP(rel=1)", "ERR@5", "RR@3"])
    want_agg = ir_measures.calc_aggregate(agg_names, qrels, run)
    with rj.registered():
        got_agg = ir_measures.calc_aggregate(agg_names, qrels, run)
    assert got_agg == pytest.approx(want_agg, abs=GDEVAL_TOL)
    # Judged without the empty run (ir_measures' judged provider divides by zero on it)
    run_j = {q: d for q, d in run.items() if d}
    compare(["Judged", "Judged@2"], qrels, run_j, forms=["dict"])


def test_judged_on_an_empty_run_is_zero_where_ir_measures_divides_by_zero():
    qrels, run = {"1": {"a": 1}, "2": {"a": 1}}, {"1": {"a": 1.0}, "2": {}}
    with pytest.raises(ZeroDivisionError):
        list(ir_measures.iter_calc([M.Judged @ 5], qrels, run))
    assert ours([M.Judged @ 5], qrels, run) == {("Judged@5", "1"): 1.0, ("Judged@5", "2"): 0.0}


def test_runs_with_repeated_documents_and_judgments():
    """A document listed twice keeps its first place and its last score; a document judged twice its last
    judgment: ir_measures' dict form (pytrec_eval, judged and msmarco read it)."""
    rng = np.random.default_rng(5)
    rows = [("1", f"d{i}", float(s)) for i, s in enumerate(rng.integers(0, 9, 30))]
    rows += [("1", "d3", 9.5), ("2", "d1", 1.0), ("1", "d7", -1.0), ("2", "d1", 2.0)]
    qrows = [("1", f"d{i}", int(g)) for i, g in enumerate(rng.integers(-1, 3, 25))] + [("1", "d4", 2), ("2", "d1", 1)]
    names = parse([n for n in PYTREC if not n.startswith("SetF")] + ["Judged@10", "RR@5", "AP(judged_only=True)"])
    names = [m for m in names if str(m) not in ("NumRet",)]  # NumRet is not mixed with judged_only (see top)
    frames = (pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"]),
              pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]))
    tuples = ([Qrel(*r) for r in qrows], [ScoredDoc(*r) for r in rows])
    want = theirs(names, *frames)
    assert_same(ours(names, *frames), want)
    assert_same(ours(names, *tuples), want)


def test_integer_ids():
    """Ids that are not strings are looked up as dict keys (pytrec_eval itself refuses them): the numbers
    ir_measures gives for the same ids written as strings (no tied scores here)."""
    qrels = {1: {10: 1, 11: 2, 12: 0}, 2: {10: 1}}
    run = {1: {10: 0.5, 12: 0.9, 13: 0.1}, 2: {11: 1.0, 10: 0.2}}
    names = parse(["P@2", "AP", "nDCG@3", "Judged@2", "RR@2", "NumRet"])

    def as_str(dod):
        return {str(q): {str(d): v for d, v in docs.items()} for q, docs in dod.items()}

    want = {(m, int(q)): v for (m, q), v in theirs(names, as_str(qrels), as_str(run)).items()}
    assert_same(ours(names, qrels, run), want)
    assert_same(ours(names, *as_frames(qrels, run)), want)
    assert_same(ours(names, *as_tuples(qrels, run)), want)


def _ids_as(dod, query=str, doc=str):
    return {query(q): {doc(d): v for d, v in docs.items()} for q, docs in dod.items()}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("names", [["P@2", "AP", "nDCG@3"], ["P@2", "AP", "RBP(p=0.8,rel=1)", "Judged@2"]],
                         ids=["looked up", "every document"])
@pytest.mark.parametrize("which, qrels_ids, run_ids, message", [
    ("query", str, int, r"run: query id 1 has type int, but the qrels' ids are strings: it would match none"),
    ("query", int, str, r"run: query id '1' has type str, but the qrels' ids are not strings"),
    ("doc", str, int, r"run: document id 10 of query '1' has type int, but the qrels' ids are strings"),
    ("doc", int, np.int64, None),  # (equal values, equal hashes: they match)
    ("doc", int, str, r"run: document id '1\d' of query '1' has type str, but the qrels' ids are not strings"),
    ("some queries", str, int, r"run: query id 2 has type int, but the qrels' ids are strings"),
])
def test_ids_of_another_kind_than_the_qrels_are_refused(form, names, which, qrels_ids, run_ids, message):
    """A run whose ids are ints where the qrels' are strings (or the reverse) would match nothing: every measure
    0 without a word (ir_measures itself refuses ids that are not str, through pytrec_eval)."""
    qrels = {1: {10: 1, 11: 2, 12: 0}, 2: {10: 1}}
    run = {1: {10: 0.5, 12: 0.9, 13: 0.1}, 2: {11: 1.0, 10: 0.2}}
    if which == "query":
        q, r = _ids_as(qrels, qrels_ids), _ids_as(run, run_ids)
    elif which == "some queries":  # (query 1 matches: the others must not be dropped as absent from the qrels)
        q, r = _ids_as(qrels, qrels_ids), {qrels_ids(q) if q == 1 else run_ids(q): d
                                           for q, d in _ids_as(run, int).items()}
    else:
        q, r = _ids_as(qrels, doc=qrels_ids), _ids_as(run, doc=run_ids)
    q, r = FORMS[form](q, r)
    if message is None:
        want = ours(parse(names), *FORMS[form](_ids_as(qrels, doc=qrels_ids), _ids_as(run, doc=qrels_ids)))
        assert_same(ours(parse(names), q, r), want)
        return
    with rj.registered(), pytest.raises(TypeError, match=message):
        ir_measures.calc_aggregate(parse(names), q, r)
    with pytest.raises(TypeError):  # ir_measures refuses them too
        ir_measures.calc_aggregate(parse(names), q, r)


@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_large_grades():
    qrels = {"1": {"a": 100000, "b": 1, "c": 0}, "2": {"a": 70000, "d": 3}}
    run = {"1": {"a": 0.1, "b": 0.5, "e": 0.9}, "2": {"d": 1.0, "a": 2.0}}
    compare(["P@2", "AP", "nDCG@3", "nDCG", "R@2", "Rprec", "RR", "NumRel", "SetP", "Judged@2"], qrels, run)


def test_rbp_of_long_runs_follows_cwl_eval():
    """cwl_eval scores the first 1000 documents and divides by 1 - p^1000: visible with p = 0.995."""
    rng = np.random.default_rng(3)
    docs = [f"d{i}" for i in range(1500)]
    run = {"1": dict(zip(docs, rng.permutation(1500).tolist()))}
    qrels = {"1": {d: 1 for d in docs if rng.random() < 0.2}}
    want = compare(["RBP(p=0.995,rel=1)", "RBP(p=0.8,rel=1)"], qrels, run, forms=["dict"])
    ranked = [d for d, _ in sorted(run["1"].items(), key=lambda x: -x[1])]
    plain = sum(0.005 * 0.995 ** r for r, d in enumerate(ranked) if d in qrels["1"])  # (1 - p) p^(r-1), all ranks
    cut = sum(0.005 * 0.995 ** r for r, d in enumerate(ranked[:1000]) if d in qrels["1"]) / (1 - 0.995 ** 1000)
    assert want[("RBP(p=0.995,rel=1)", "1")] == pytest.approx(cut, abs=1e-12)
    assert abs(cut - plain) > 1e-6  # the cut matters here


# ---- diversity (pyndeval) -------------------------------------------------------------------------


def diversity_sets():
    base = [M.AP_IA, M.NRBP, M.nNRBP]
    for k in (1, 2, 5, 10, 20):
        base += [M.nERR_IA @ k, M.alpha_nDCG @ k, M.StRecall @ k, M.P_IA @ k]
        base += [M.ERR_IA @ k, M.alpha_DCG @ k] if k > 1 else []
    return [
        base,
        [m(alpha=0.3) @ k for m in (M.alpha_DCG, M.alpha_nDCG) for k in (2, 5, 20)],
        [M.NRBP(alpha=0.3, beta=0.8), M.nNRBP(alpha=0.3, beta=0.8)],
        [M.AP_IA(rel=2), M.ERR_IA(rel=2) @ 5, M.P_IA(rel=2) @ 10, M.StRecall(rel=2) @ 10, M.nNRBP(rel=2)],
    ]


def compare_diversity(qrels_rows, run_rows):
    """Each (rel, alpha, beta) set in a call of its own (see the module docstring), in two forms."""
    for measures in diversity_sets():
        want = per_query(ir_measures.iter_calc(measures, qrels_rows, run_rows))
        assert_same(ours(measures, qrels_rows, run_rows), want)
        assert_same(ours(measures, pd.DataFrame(qrels_rows), pd.DataFrame(run_rows)), want)


def random_diversity(seed):
    """Subtopics named by strings, graded judgments, tied scores, a query without relevant judgment."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(6):
        qid = str(300 + t)
        subs = [f"s{j}" for j in range(int(rng.integers(1, 5)))]
        pool = [f"doc{t}-{i}" for i in rng.permutation(40).tolist()]
        for d in pool[:25]:
            for s in subs:
                if rng.random() < 0.6:
                    qrels.append(Qrel(qid, d, 0 if t == 5 else int(rng.choice([0, 0, 1, 2, 3])), s))
        n = int(rng.integers(1, 35))
        scores = rng.integers(0, 8, n) / 2.0
        run += [ScoredDoc(qid, d, float(s)) for d, s in zip(pool[5:5 + n], scores)]
    return qrels, run


@pytest.mark.parametrize("seed", range(3))
def test_random_diversity(seed):
    compare_diversity(*random_diversity(seed))


@needs_web
@pytest.mark.slow
@pytest.mark.parametrize("run_name", ["run.ql.cata.txt", "run.rm.cata.txt"])
def test_web2012_diversity(run_name):
    qrels = list(ir_measures.read_trec_qrels(str(WEB / "qrels.diversity-ndeval.txt")))
    compare_diversity(qrels, list(ir_measures.read_trec_run(str(WEB / run_name))))


def test_diversity_parameter_sets_mixed_in_one_call():
    """ir_measures' pyndeval provider exhausts its run iterator after the first set; rankjit computes every
    set: equal to ir_measures called once per set."""
    qrels, run = random_diversity(7)
    sets = diversity_sets()
    want = {}
    for measures in sets:
        want.update(per_query(ir_measures.iter_calc(measures, qrels, run)))
    got = ours([m for s in sets for m in s], qrels, run)
    assert_same(got, want)


def test_diversity_judged_only_against_pyndeval():
    """ir_measures' pyndeval provider fails on judged_only=True; pyndeval on the run cut to judged documents."""
    pyndeval = pytest.importorskip("pyndeval")
    qrels, run = random_diversity(4)
    names = {"ERR-IA@5": M.ERR_IA(judged_only=True) @ 5, "alpha-nDCG@10": M.alpha_nDCG(judged_only=True) @ 10,
             "P-IA@10": M.P_IA(judged_only=True) @ 10, "MAP-IA": M.AP_IA(judged_only=True),
             "nERR-IA@20": M.nERR_IA(judged_only=True) @ 20}
    judged = {(q.query_id, q.doc_id) for q in qrels}
    cut = [(r.query_id, r.doc_id, r.score) for r in run if (r.query_id, r.doc_id) in judged]
    ref = pyndeval.RelevanceEvaluator([(q.query_id, q.iteration, q.doc_id, q.relevance) for q in qrels],
                                      list(names)).evaluate(cut)
    got = ours(list(names.values()), qrels, run)
    qids = {q.query_id for q in qrels}
    for nd_name, m in names.items():
        for q in qids:
            want = ref[q][nd_name] if q in ref else 0.0  # nothing judged retrieved: 0
            assert got[(str(m), q)] == pytest.approx(want, abs=NDEVAL_TOL), (str(m), q)
    assert any(v > 0 for v in got.values())


def test_single_subtopic_warning(capsys):
    qrels, run = {"1": {"a": 1, "b": 0}}, {"1": {"a": 1.0, "b": 2.0}}
    want = theirs([M.alpha_nDCG @ 5], qrels, run)
    assert "All queries have only 1 subtopic" in capsys.readouterr().err
    assert_same(ours([M.alpha_nDCG @ 5], qrels, run), want)
    assert "All queries have only 1 subtopic" in capsys.readouterr().err


@pytest.mark.parametrize("run", [{"1": {}}, {"1": {}, "2": {}}], ids=["one query", "two queries"])
def test_diversity_of_runs_that_retrieve_nothing(run):
    """Every query's run empty: each diversity measure 0, as ir_measures reports it (a ValueError escaped before)."""
    qrels = [Qrel("1", "a", 1, "s0"), Qrel("1", "b", 1, "s1"), Qrel("2", "a", 1, "s0")]
    names = [M.alpha_nDCG @ 10, M.ERR_IA @ 5, M.P_IA @ 5]
    want = theirs(names, qrels, run)
    assert_same(ours(names, qrels, run), want)


# ---- the pipeline: fallback, register / unregister ------------------------------------------------


def test_unsupported_measures_fall_back_in_the_same_call():
    qrels, run = random_dicts(2)
    names = parse(["nDCG@10", "Compat(p=0.8)", "AP", "RBP(p=1.0,rel=1)", "SDCG(max_rel=4)@10", "ERR_IA@1", "Judged@5"])
    assert [rj.supports(m) for m in names] == [True, False, True, False, True, False, True]
    want = theirs(names, qrels, run)
    assert_same(ours(names, qrels, run), want)
    with rj.registered():
        ev = ir_measures.evaluator(names, qrels)
        assert type(ev).__name__ == "FallbackEvaluator"
        kinds = [type(e).__name__ for e in ev.evaluators]
        assert kinds[0] == "RankjitEvaluator" and len(kinds) > 1
        assert sorted(str(m) for m in ev.evaluators[0].measures) == ["AP", "Judged@5", "SDCG(max_rel=4)@10",
                                                                      "nDCG@10"]
        agg = ir_measures.calc_aggregate(names, qrels, run)
    assert agg == pytest.approx(ir_measures.calc_aggregate(names, qrels, run), abs=GDEVAL_TOL)


#: calls that mix rankjit's measures with ones ir_measures keeps; ir_measures reports every measure of a call for
#: the queries of the first provider of its pipeline that the call uses (every qrels key, or the judged queries)
MIXED_CALLS = {
    "msmarco after compat": ["RR@10", "Compat(p=0.8)"],
    "gdeval after compat": ["ERR@5", "Compat(p=0.8)"],
    "cwl_eval before judged": ["Judged@5", "RBP(p=1.0,rel=1)"],
    "runtime before pytrec_eval": ["nDCG@10", "define"],
    "runtime before msmarco": ["RR@10", "define"],
    "runtime before cwl_eval": ["RBP(rel=1)", "define"],
    "msmarco before accuracy": ["RR@10", "Accuracy()"],
    "pytrec_eval before compat": ["AP", "RR@10", "Compat(p=0.8)"],
    "cwl_eval alone": ["RBP(rel=1)", "RBP(p=1.0,rel=1)"],
    "pyndeval after cwl_eval": ["RBP(rel=1)", "ERR_IA@1", "alpha_nDCG@5"],
}


@pytest.mark.parametrize("names", MIXED_CALLS.values(), ids=MIXED_CALLS.keys())
def test_queries_reported_in_calls_that_mix_providers(names):
    """A qrels key without judgments ("2") is reported, or not, as ir_measures alone reports it: by the call's first
    provider in ir_measures' pipeline, also when rankjit's evaluator comes first."""
    measures = [ir_measures.define_byquery(lambda qrels, run: 0.25, name="Quarter") if n == "define"
                else ir_measures.parse_measure(n) for n in names]
    qrels = {"1": {"a": 1, "b": 0}, "2": {}, "3": {"x": 2}}
    run = {"1": {"a": 1.0, "b": 2.0}, "3": {"y": 1.0, "x": 0.5}, "4": {"a": 1.0}}
    want = theirs(measures, qrels, run)
    assert_same(ours(measures, qrels, run), want)
    want_agg = ir_measures.calc_aggregate(measures, qrels, run)
    with rj.registered():
        assert ir_measures.calc_aggregate(measures, qrels, run) == pytest.approx(want_agg, abs=GDEVAL_TOL)
        evaluator = ir_measures.evaluator(measures, qrels)
    assert evaluator.calc_aggregate(run) == pytest.approx(want_agg, abs=GDEVAL_TOL)  # (built while registered)


def test_ndcg_with_gains_next_to_plain_ndcg():
    """ir_measures' pytrec_eval provider may put nDCG@10 in the call of nDCG(gains=...)@10, where both answer to
    'ndcg_cut_10' (one takes the other's value, depending on set order); with rankjit each gets the value
    ir_measures gives it alone."""
    qrels, run = random_dicts(3)
    plain, gains = parse(["nDCG@10", "nDCG(gains={0:0,1:1,2:3})@10"])
    want = {**theirs([plain], qrels, run), **theirs([gains], qrels, run)}
    assert_same(ours([plain, gains], qrels, run), want)


def test_supports():
    for name in PYTREC + JUDGED_ONLY + OTHERS:
        assert rj.supports(name), name
    for name in UNSUPPORTED:
        assert not rj.supports(name), name
        m = ir_measures.parse_measure(name)
        # ir_measures computes it, but nDCG(dcg='exp-log2') without a cutoff only with its optional ranx or
        # trectools providers (gdeval needs a cutoff), which the test extra does not install
        assert ir_measures.DefaultPipeline.supports(m) or name in OPTIONAL_PROVIDER_ONLY, name
    for name in ("ERR", "RBP", "NumRel(rel=2)", "RR(judged_only=True)@5", "RBP(rel=1)@10"):
        assert not rj.supports(name)  # nothing in ir_measures computes these: they stay unsupported


def test_register_and_unregister_restore_the_pipeline():
    pipeline = ir_measures.DefaultPipeline.providers
    before, registry = list(pipeline), dict(ir_measures.providers.registry)
    p = rj.register()
    assert pipeline[0] is p and pipeline[1:] == before and rj.is_registered()
    assert ir_measures.providers.registry["rankjit"] is p and p.NAME == "rankjit"
    assert rj.register() is p and pipeline.count(p) == 1  # twice: once
    assert ir_measures.DefaultPipeline._evaluator.rankjit_records_the_call  # the call's measures, for the provider
    rj.unregister()
    assert pipeline == before and all(a is b for a, b in zip(pipeline, before))
    assert ir_measures.providers.registry == registry and not rj.is_registered()
    assert "_evaluator" not in vars(ir_measures.DefaultPipeline)  # the class's own again
    rj.unregister()  # again: nothing happens
    assert pipeline == before
    with pytest.raises(RuntimeError, match="inside"):
        with rj.registered():
            assert rj.is_registered()
            raise RuntimeError("inside")
    assert pipeline == before and ir_measures.providers.registry == registry
    rj.register()
    with rj.registered():  # registered already: left registered
        pass
    assert rj.is_registered()


def test_provider_used_directly():
    qrels, run = random_dicts(1)
    names = parse(["nDCG@10", "AP", "NumQ", "RBP(rel=1)"])
    want = ir_measures.calc_aggregate(names, qrels, run)
    got = rj.provider().calc_aggregate(names, qrels, run)
    assert got == pytest.approx(want, abs=1e-9) and not rj.is_registered()
    with pytest.raises(ValueError, match=r"rankjit does not compute \[ERR_IA@1\]; use ir_measures' default pipeline"):
        rj.provider().evaluator(parse(["AP", "ERR_IA@1"]), qrels)


def test_import_rankjit_does_not_import_ir_measures():
    code = ("import sys, rankjit, rankjit.integrations, rankjit.integrations.ir_measures as r; "
            "print('ir_measures' in sys.modules, r.is_registered())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_no_common_query_and_empty_run():
    qrels = {"1": {"a": 1}}
    names = parse(["AP", "NumQ", "Judged@5", "RBP(rel=1)"])
    for run in ({"2": {"a": 1.0}}, {}, []):
        want = ir_measures.calc_aggregate(names, qrels, run)
        with rj.registered():
            got = ir_measures.calc_aggregate(names, qrels, run)
        assert got == want
        assert ours(names, qrels, run) == theirs(names, qrels, run)


# ---- bad inputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("qrels, run, exc, message", [
    ({"1": {"a": 1}}, {"1": {"a": "high"}}, TypeError,
     r"run: score of document 'a' for query '1' must be a number, got 'high'"),
    ({"1": {"a": 1}}, pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": ["high"]}), TypeError,
     r"run: score of document 'a' for query '1' must be a number, got 'high'"),
    ({"1": {"a": 1}}, {"1": {"a": 0.5, "b": float("nan")}}, ValueError,
     r"run: score of document 'b' for query '1' is NaN"),
    ({"1": {"a": 1}}, {"1": {"a": "0.5", "b": None}}, TypeError,
     r"run: score of document 'b' for query '1' must be a number, got None"),
    ({"1": {"a": 1}}, {"1": {"a": "0.5", "b": "x"}}, TypeError,
     r"run: score of document 'b' for query '1' must be a number, got 'x'"),
    ({"1": {"a": 1}}, [ScoredDoc("1", "a", float("nan"))], ValueError,
     r"run: score of document 'a' for query '1' is NaN"),
    ({"1": {"a": 1.5}}, {"1": {"a": 1.0}}, ValueError,
     r"qrels: relevance of document 'a' for query '1' must be an integer, got 1.5"),
    ([Qrel("1", "a", 1), Qrel("1", "b", "x")], {"1": {"a": 1.0}}, ValueError,
     r"qrels: relevance of document 'b' for query '1' must be an integer, got 'x'"),
    ({"1": 5}, {"1": {"a": 1.0}}, TypeError, r"qrels\['1'\] must be a dict of document id -> value, got int"),
    ({"1": {"a": 1}}, {"1": [1, 2]}, TypeError, r"run\['1'\] must be a dict of document id -> value, got list"),
    ([("1", "0", "a", 1)], {"1": {"a": 1.0}}, ValueError,
     r"unknown qrels format: iterable not a namedtuple iterator"),
    ({"1": {"a": 1}}, 42, ValueError, r"unknown run format: unexpected format"),
    (pd.DataFrame({"query_id": ["1", None], "doc_id": ["a", "b"], "relevance": [1, 0]}), {"1": {"a": 1.0}},
     ValueError, r"query_id holds missing values \(None / NaN\)"),
])
def test_bad_inputs(qrels, run, exc, message):
    with rj.registered():
        with pytest.raises(exc, match=message):
            ir_measures.calc_aggregate(parse(["AP", "P@5"]), qrels, run)


def test_as_pyterrier_calls_it():
    """pt.Experiment (PyTerrier is not installed here) passes ir_measures DataFrames renamed from its own
    (qid, docno, label / score, rank, query...), measures parsed from trec_eval names, and in batch mode an
    empty result frame for the qrels queries it never ran."""
    qrels, run = random_dicts(6)
    qf, rf = as_frames(qrels, run)
    res = rf.rename(columns={"query_id": "qid", "doc_id": "docno"})
    res["rank"] = res.groupby("qid")["score"].rank(ascending=False, method="first").astype(int) - 1
    res["query"] = "some words"
    topics_qrels = qf.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    to_irm = {"qid": "query_id", "docno": "doc_id", "label": "relevance"}
    metrics = [m for name in ("map", "ndcg_cut_10", "P_10", "recip_rank", "recall_100", "num_q")
               for m in ir_measures.parse_trec_measure(name)] + [M.Judged @ 10]
    q_irm, r_irm = topics_qrels.rename(columns=to_irm), res.rename(columns=to_irm)
    want = theirs(metrics, q_irm, r_irm)
    assert_same(ours(metrics, q_irm, r_irm), want)
    empty = pd.DataFrame([], columns=["query_id", "doc_id", "score"])
    assert_same(ours(metrics, q_irm, empty), theirs(metrics, q_irm, empty))


def test_err_above_gdeval_scale():
    """gdeval (ir_measures' ERR) fails on judgments above 4: a ValueError that says so, retrieved or not."""
    qrels = {"1": {"a": 7, "b": 1}}
    for run in ({"1": {"a": 1.0, "b": 0.5}}, {"1": {"b": 0.5}}):
        with pytest.raises(subprocess.CalledProcessError):
            ir_measures.calc_aggregate([M.ERR @ 5], qrels, run)
        with rj.registered(), pytest.raises(ValueError, match=r"ERR@5: ir_measures computes ERR with gdeval, whose "
                                            r"judgments go up to 4 \(its gain \(2\^g - 1\) / 16\); the qrels hold 7"):
            ir_measures.calc_aggregate([M.ERR @ 5, M.AP], qrels, run)


def test_many_queries_every_form_same_aggregates():
    """Enough queries for the blocked dict reader and the compiled join to run over several blocks."""
    rng = np.random.default_rng(9)
    qrels, run = {}, {}
    for q in range(300):
        docs = [f"doc-{q}-{i}" for i in range(int(rng.integers(1, 40)))]
        run[f"q{q}"] = dict(zip(docs, np.round(rng.normal(size=len(docs)), 1).tolist()))
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs if rng.random() < 0.4} or {"other": 1}
    names = parse(["nDCG@10", "AP", "P@10", "R@100", "RR", "Judged@10", "NumQ", "NumRet"])
    want = ir_measures.calc_aggregate(names, qrels, run)
    by_form = defaultdict(dict)
    with rj.registered():
        for form, make in FORMS.items():
            by_form[form] = ir_measures.calc_aggregate(names, *make(qrels, run))
    for form, got in by_form.items():
        assert got == pytest.approx(want, abs=1e-12, rel=1e-12), form


def test_the_join_on_threads_gives_the_serial_values(monkeypatch):
    """The hash join of run rows with the qrels (DataFrames, named tuples) runs ranges of queries on threads for
    large runs: forced on threads for a small one (rankjit._config.SERIAL_THRESHOLD = 1), with documents listed
    twice in some queries, every value equals the serial join's and ir_measures'."""
    from rankjit import _config

    if _config.num_threads() < 2:
        pytest.skip("one thread here (NUMBA_NUM_THREADS=1 or no JIT): the join has nothing to split")
    qrels, run = random_dicts(5, n_queries=40, ties=True)
    tuples_q, tuples_r = as_tuples(qrels, run)
    tuples_r = [*tuples_r, *tuples_r[::7]]  # documents listed twice: the first place, the last score
    names = parse(PYTREC)
    serial = ours(names, tuples_q, tuples_r)
    assert_same(serial, theirs(names, tuples_q, tuples_r))
    monkeypatch.setattr(_config, "SERIAL_THRESHOLD", 1)
    calls = []
    real = _config.run_blocks
    monkeypatch.setattr(_config, "run_blocks",
                        lambda task, n, parallel: calls.append(parallel) or real(task, n, parallel))
    assert ours(names, tuples_q, tuples_r) == serial
    assert_same(ours(names, *as_frames(qrels, run)), theirs(names, qrels, run))
    assert calls and all(calls)


def test_pytrec_eval_measures_rank_float32_scores():
    # 1.00000001 and 1.0 are equal in float32, as trec_eval 9 keeps scores: a tie, broken by docno descending
    # ('b' before 'a'), so the relevant 'b' is first for pytrec_eval; in float64 'a' would be first
    from ir_measures import AP, RR, P, Bpref, nDCG

    qrels = {"1": {"a": 0, "b": 1}, "2": {"c": 1, "d": 0}}
    # q2: 2**25 + 1 rounds to 2**25 in float32 (spacing 4 there): a tie too, 'd' before 'c', so AP 1/2, P@1 0
    run = {"1": {"a": 1.00000001, "b": 1.0}, "2": {"c": 2.0 ** 25 + 1, "d": 2.0 ** 25}}
    measures = [AP, nDCG @ 10, P @ 1, RR, Bpref]
    want = ir_measures.calc_aggregate(measures, qrels, run)
    assert want[AP] == 0.75 and want[P @ 1] == 0.5
    with rj.registered():
        got = ir_measures.calc_aggregate(measures, qrels, run)
    assert got == pytest.approx(want, abs=1e-12)
    # the rounding is pytrec_eval's only: msmarco's RR@10 ranks float64 scores ('a' first: 1/2)
    with rj.registered():
        assert ir_measures.calc_aggregate([RR @ 10], {"1": qrels["1"]}, {"1": run["1"]})[RR @ 10] == 0.5
    assert ir_measures.calc_aggregate([RR @ 10], {"1": qrels["1"]}, {"1": run["1"]})[RR @ 10] == 0.5


@pytest.mark.parametrize("form", ["dict", "DataFrame"])
def test_qrels_changed_after_the_evaluator_is_made_change_nothing(form):
    """An evaluator evaluates with the qrels as they were when it was made, as ir_measures' evaluators do (except
    its judged provider's, which reads the qrels at each run: documented).  rankjit's once read the caller's dicts
    again at each run, and gave R@10 = 2.0 (the counts of the judgments as made, the labels as changed)."""
    qrels, run = random_dicts(3, n_queries=4)
    copied = ("P@5", "R@10", "AP", "nDCG@10", "Bpref", "RBP(rel=1)", "ERR@10", "RR@5")  # (ir_measures copies them)

    def evaluate(evaluator_of, names):
        q = copy.deepcopy(qrels) if form == "dict" else as_frames(qrels, run)[0]
        evaluator = evaluator_of(parse(names), q)
        for qid in list(qrels)[:3]:  # every document of the run judged 1: grades changed, judgments added
            if form == "dict":
                q[qid].update(dict.fromkeys(run[qid], 1))
                del q[qid][next(iter(q[qid]))]  # and one removed
            else:
                rows = q.index[q["query_id"] == qid]
                q.loc[rows, "relevance"] = 1
                q.loc[rows[:len(run[qid])], "doc_id"] = list(run[qid])[:len(rows)]
        return per_query(evaluator.iter_calc(run))

    names = copied + ("Judged@10",)
    want = per_query(ir_measures.iter_calc(parse(names), qrels, run))
    assert evaluate(ir_measures.evaluator, copied) == {k: v for k, v in want.items() if k[0] != "Judged@10"}
    assert_same(evaluate(lambda measures, q: rj.provider().evaluator(measures, q), names), want)


@pytest.mark.parametrize("names", [("AP", "nDCG@10", "P@5"), ("AP", "nDCG@10", "Judged@10"), ("AP", "ERR@10")])
@pytest.mark.parametrize("run_form", ["dict", "DataFrame", "dict of int scores"])
def test_qrels_ids_freed_by_the_caller_after_the_evaluator_is_made(names, run_form):
    """The evaluator keeps the judgments as it read them: dict qrels copied (measures that read every document of
    a dict run), or, for measures of one ranking, their ids held by reference and their grades read (the dicts
    rebuilt from them only for a path that reads dicts: int scores here).  The caller's dicts cleared and their
    memory reused, it still gives ir_measures' values on each path (the judged documents looked up; every
    document read; a DataFrame run joined to the qrels' columns)."""
    import gc

    def fresh(text):  # a str object of its own (not one the run or the interpreter also holds)
        return "".join(["fresh-", text])

    qrels, run = random_dicts(5, n_queries=6)
    qrels = {q: {fresh(d): g for d, g in docs.items()} for q, docs in qrels.items()}
    run = {q: {fresh(d): (int(4 * s) if "int" in run_form else s) for d, s in docs.items()} for q, docs in run.items()}
    want = per_query(ir_measures.iter_calc(parse(names), qrels, run))
    evaluator = rj.provider().evaluator(parse(names), qrels)
    for docs in qrels.values():
        docs.clear()
    gc.collect()
    churn = [fresh(str(-i)) for i in range(20000)]  # (memory the freed ids held, reused)
    assert_same(per_query(evaluator.iter_calc(as_frames({}, run)[1] if run_form == "DataFrame" else run)), want)
    assert churn and any(v for v in want.values())


def test_the_provider_yields_ir_measures_metrics():
    """iter_calc yields ir_measures' own Metric named tuples (made without _make's length check), one per query
    and measure, with the fields in their places."""
    qrels, run = random_dicts(2, n_queries=5)
    names = ("AP", "nDCG@10", "P@5")
    metrics = list(rj.provider().evaluator(parse(names), qrels).iter_calc(run))
    assert metrics and all(type(m) is ir_measures.Metric and len(m) == 3 for m in metrics)
    assert {(str(m.measure), m.query_id) for m in metrics} == {(n, q) for n in names for q in qrels}
    assert all(isinstance(m.query_id, str) and isinstance(m.value, float) for m in metrics)
    assert per_query(metrics) == pytest.approx(per_query(ir_measures.iter_calc(parse(names), qrels, run)), abs=1e-12)


def test_the_provider_gives_back_the_judged_ids_when_collected():
    import gc

    ids = ["".join(["judged-", str(i)]) for i in range(30)]
    qrels = {f"q{q}": {ids[10 * q + i]: i % 3 for i in range(10)} for q in range(3)}
    before = [sys.getrefcount(x) for x in ids]
    evaluator = rj.provider().evaluator(parse(("AP", "P@5", "Judged@5")), qrels)
    assert per_query(evaluator.iter_calc({"q1": {ids[12]: 1.0, ids[11]: 0.5}}))
    del evaluator
    gc.collect()
    assert [sys.getrefcount(x) for x in ids] == before


@pytest.mark.parametrize("seed", range(3))
def test_dict_runs_look_up_only_the_judged_documents(seed, monkeypatch):
    """Measures of one ranking on dicts (pytrec_eval's; gdeval's; msmarco's and judged's): the run is ranked as that
    provider ranks it (the judged documents looked up in the run's dicts and placed: _evaluate_dict_lookups;
    pytrec_eval's ranking is rankjit.compat.pytrec_eval's), not read document by document; measures of several
    rankings read every document.  The same values as ir_measures and as reading every document.  Runs it cannot
    read that way (int scores, a query's value of another type) go the other way, with its messages."""
    qrels, run = random_dicts(seed, ties=True)
    # scores equal in float32 only: pytrec_eval ranks them tied (ids descending), gdeval and msmarco apart
    run["101"].update({"near_a": 5.0 + 2.0 ** -25, "near_b": 5.0, "near_c": 5.0 - 2.0 ** -25})
    qrels["101"].update({"near_a": 0, "near_b": 2, "near_c": 1})
    one_ranking = (PYTREC, JUDGED_ONLY, ("P@5", "nDCG@10", "AP", "IPrec@0.25"),  # (Bpref etc.: every judged one)
                   ("ERR@10", "ERR@20", "nDCG(dcg='exp-log2')@10"), ("RR@5", "RR(rel=2)@10"),
                   ("Judged@1", "Judged@5", "Judged@10"), ("Judged@1",),  # (the top 10, the top 1 alone placed)
                   ("Judged", "Judged@5", "RR@5"))
    several = (("P@5", "nDCG@10", "AP", "ERR@20", "RR@5"), ("nDCG@10", "Judged@10"))
    wants = {names: theirs(parse(names), qrels, run) for names in one_ranking + several}
    read_every_document = []
    real_batch = rj._dict_batch
    monkeypatch.setattr(rj, "_dict_batch", lambda *a: read_every_document.append(1) or real_batch(*a))
    # (without the JIT, NUMBA_DISABLE_JIT=1, the qrels are not read compiled: every run goes the other way)
    compiled = rj._Qrels(qrels).judged_lookups(False) is not None
    for names in one_ranking + several:
        read_every_document.clear()
        assert_same(ours(parse(names), qrels, run), wants[names])
        assert bool(read_every_document) is (not compiled or names in several), names
    # the other way gives the same values
    monkeypatch.setattr(rj, "_evaluate_dict_lookups", lambda *a: None)
    for names in one_ranking:
        read_every_document.clear()
        assert_same(ours(parse(names), qrels, run), wants[names])
        assert read_every_document
    monkeypatch.undo()
    # a run the compiled pass does not read: int scores, then a query's value that is not a dict
    read_every_document.clear()
    monkeypatch.setattr(rj, "_dict_batch", lambda *a: read_every_document.append(1) or real_batch(*a))
    as_ints = {q: {d: int(4 * s) for d, s in docs.items()} for q, docs in run.items()}
    assert_same(ours(parse(one_ranking[2]), qrels, as_ints), theirs(parse(one_ranking[2]), qrels, as_ints))
    assert read_every_document
    with rj.registered(), pytest.raises(TypeError, match=r"run\['101'\] must be a dict of document id -> value"):
        ir_measures.calc_aggregate(parse(["AP"]), qrels, {**run, "101": [1, 2]})


@pytest.mark.parametrize("seed", range(3))
def test_named_tuples_are_read_in_one_compiled_pass(seed, monkeypatch):
    """Runs and qrels of named tuples (ir_measures' ScoredDoc and Qrel rows) are read in one compiled pass each
    (rankjit.io._dicts.rows_read: the scores or judgments, the doc ids' UTF-8 bytes, where the query id changes)
    when every id is exactly a str, every score exactly a float and every judgment exactly an int: the same values
    as ir_measures alone and as the Python way, with each query's rows scattered, ids beyond ASCII, tied scores
    and a document judged twice.  Rows it cannot read (an int score, a float judgment, a lone surrogate in an id)
    go the Python way, with the same values."""
    from rankjit._kernels import pydicts
    from rankjit.io import _dicts

    rng = np.random.default_rng(seed)
    qrels, run = random_dicts(seed, ties=True)
    wide = {d: d + ("é" if i % 3 == 0 else "文字" if i % 3 == 1 else "") for i, d in
            enumerate(sorted({d for docs in [*qrels.values(), *run.values()] for d in docs}))}
    q_rows = [Qrel(qid, wide[d], g) for qid, docs in qrels.items() for d, g in docs.items()]
    q_rows = [q_rows[i] for i in rng.permutation(len(q_rows)).tolist()]  # (judgments: any order)
    r_rows = [ScoredDoc(qid, wide[d], s) for qid, docs in run.items() for d, s in docs.items()]
    scattered = [r_rows[i] for i in rng.permutation(len(r_rows)).tolist()]  # the queries' rows interleaved
    real_rows_read = _dicts.rows_read

    given = []  # the lists read compiled

    def spy(reads):
        monkeypatch.setattr(_dicts, "rows_read",
                            lambda *a, **k: given.append(a[0]) or reads.append(real_rows_read(*a, **k)) or reads[-1])

    # (cwl_eval reads a query's rows as one block: with them scattered, ir_measures reports its measures twice)
    for names, rows in ((PYTREC + OTHERS, r_rows), (PYTREC, scattered)):
        want = theirs(parse(names), q_rows, rows)
        reads = []
        spy(reads)
        assert_same(ours(parse(names), q_rows, rows), want)
        # the qrels and the run (without the JIT, NUMBA_DISABLE_JIT=1, nothing is read compiled), each from a list
        # of the provider's own, whose rows keep the ids alive whatever another thread does to the caller's lists
        assert len(reads) == 2 and all((r is not None) is pydicts.available() for r in reads)
        assert given[-2] == q_rows and given[-1] == rows and given[-2] is not q_rows and given[-1] is not rows
        monkeypatch.setattr(rj, "_read_rows", lambda *a, **k: None)  # the Python way: the same values
        assert_same(ours(parse(names), q_rows, rows), want)
        monkeypatch.undo()
    # a document judged twice (the last judgment counts, as in ir_measures' dicts); a diversity measure, which
    # lists the judgments' columns from the rows read compiled
    twice = [*q_rows, q_rows[0]._replace(relevance=3)]
    assert_same(ours(parse(PYTREC), twice, r_rows), theirs(parse(PYTREC), twice, r_rows))
    assert_same(ours(parse(["alpha_nDCG@10"]), q_rows, r_rows), theirs(parse(["alpha_nDCG@10"]), q_rows, r_rows))
    # rows read the Python way: an int score, a float judgment (pytrec_eval refuses it: ir_measures is given an
    # int); an unjudged id with a lone surrogate (pytrec_eval crashes on it: ir_measures is given the run with an id
    # of its own in its place, at a score no other document has)
    qid = r_rows[-1].query_id
    for extra_judgment, odd, stand_in in ((None, ScoredDoc(qid, "extra", 2), None),
                                          (Qrel(qid, "extra", 1.0), ScoredDoc(qid, "extra", 0.5), None),
                                          (None, ScoredDoc(qid, "x\udcff", 0.123), "x-stand-in")):
        judgments = q_rows if extra_judgment is None else [*q_rows, extra_judgment]
        their_judgments = q_rows if extra_judgment is None else [*q_rows, Qrel(qid, "extra", 1)]
        other = [*r_rows, odd]
        reference = other if stand_in is None else [*r_rows, odd._replace(doc_id=stand_in)]
        reads = []
        spy(reads)
        assert_same(ours(parse(PYTREC), judgments, other), theirs(parse(PYTREC), their_judgments, reference))
        off = not pydicts.available()
        assert [r is None for r in reads] == [extra_judgment is not None or off, odd.score != 0.5 or off]
        monkeypatch.undo()


def test_rows_read_reads_what_python_reads():
    """rankjit.io._dicts.rows_read against plain Python on rows it reads, and None on each kind of row it does not."""
    from rankjit._kernels import pydicts
    from rankjit.io._dicts import rows_read

    if not pydicts.available():
        pytest.skip("the compiled reads need the JIT (NUMBA_DISABLE_JIT is set)")
    rows = [ScoredDoc("q1", "a", 0.5), ScoredDoc("q1", "bé", np.float64(-1.0)), ScoredDoc("q2", "", 0.0),
            ScoredDoc("q1", "文字", 2.5), ScoredDoc("".join(["q", "1"]), "a", float("nan"))]
    new_query, docs, scores = rows_read(rows, 0, 1, 2)
    assert new_query.tolist() == [True, False, True, True, False]  # (an equal id of another object: no change)
    assert [docs[i] for i in range(len(docs))] == [r.doc_id for r in rows]
    assert np.array_equal(scores, [r.score for r in rows], equal_nan=True)
    Other = type("Other", (tuple,), {})
    for bad in (ScoredDoc("q1", "a", 1), ScoredDoc("q1", b"a", 1.0), ScoredDoc(1, "a", 1.0), Qrel("q1", "a", 1),
                ScoredDoc("q1", "\udcff", 1.0), Other(("q1", "a", 1.0)), ScoredDoc("q1", "a", True)):
        assert rows_read([*rows, bad], 0, 1, 2) is None, bad
    assert rows_read([ScoredDoc("q1", "a", 1.0)], 0, 1, 3) is None  # (too few fields)
    assert rows_read([], 0, 1, 2) is None
    judgments = [Qrel("q1", "a", 2), Qrel("q1", "b", -2**63), Qrel("q2", "é", 2**63 - 1), Qrel("q1", "c", 0)]
    new_query, docs, grades = rows_read(judgments, 0, 1, 2, ints=True)
    assert new_query.tolist() == [True, False, True, True]
    assert [docs[i] for i in range(len(docs))] == [r.doc_id for r in judgments]
    assert grades.dtype == np.int64 and grades.tolist() == [r.relevance for r in judgments]
    for bad in (Qrel("q1", "a", 2**63), Qrel("q1", "a", 1.0), Qrel("q1", "a", True), Qrel("q1", "a", np.int64(1)),
                ScoredDoc("q1", "a", 1.0)):
        assert rows_read([*judgments, bad], 0, 1, 2, ints=True) is None, bad
