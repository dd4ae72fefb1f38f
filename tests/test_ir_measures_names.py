"""A measure name that ir_measures knows gives ir_measures' number in rankjit.

Each name is evaluated by rankjit (``rankjit.io.evaluate_run``: trec_eval's ranking and
judged-document counts) and by ir_measures itself (its providers: pytrec_eval for most,
gdeval for ERR, cwl_eval for RBP), per query, on the TREC 2012 Web runs, trec_eval's
test files and random runs and qrels (ties, unjudged documents, judged documents never
retrieved, negative grades).  pytrec_eval returns full doubles: 1e-9.  gdeval and
cwl_eval print their values rounded (5 decimals, 6 significant digits): half a unit
of their last place.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ir_measures = pytest.importorskip("ir_measures")

from rankjit.io._align import align  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
WEB = SHARED / "web2012"
SUITE = SHARED / "trec_eval"

#: names as ir_measures writes them (its aliases included), each rankjit's too
NAMES = (
    "P@5", "P(rel=2)@10", "Precision@20", "R@10", "Recall@100", "Success@1", "Success@10", "RR", "RR@5", "MRR",
    "RR(rel=2)", "AP", "MAP", "AP@10", "AP(rel=2)", "AP(rel=2)@100", "Rprec", "RPrec", "Rprec(rel=2)", "nDCG",
    "NDCG@10", "nDCG@5", "nDCG@1000", "ERR@10", "ERR@20", "RBP(rel=1)", "RBP(p=0.5,rel=2)", "SetP", "SetP(rel=2)",
    "SetR", "SetF", "SetF(beta=0.5)", "SetAP", "SetRelP", "SetP(relative=True)", "IPrec@0.1", "IPrec@0.2",
    "IPrec@0.25", "IPrec@0.5", "IPrec@1.0", "IPrec(rel=2)@0.3", "NumQ", "NumRet", "NumRet(rel=1)", "NumRel",
    "NumRelRet", "NumRelRet(rel=2)", "Judged@5", "Judged@10", "Judged@100", "Bpref", "Bpref(rel=2)", "infAP",
    "infAP(rel=2)", "nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@20", "nDCG(dcg='log2')@10",
    "nDCG(gains={0:0,1:1,2:3})", "nDCG(gains={0:0,1:2,2:5,3:9,4:10})@10", "nDCG(gains={1:3,2:0})@5",
)
#: ir_measures' providers that print rounded values: the largest difference that rounding explains
ROUNDED = {"gdeval": 5e-6 + 1e-12, "cwl_eval": 5e-6}


def _provider(measure):
    """The provider ir_measures' default pipeline computes ``measure`` with (its first that supports it)."""
    return next(p.NAME for p in ir_measures.DefaultPipeline.providers if p.is_available() and p.supports(measure))


def _compare(qrels_path, run_path, names=NAMES):
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    aligned = align(str(run_path), str(qrels_path))
    ours = aligned.evaluate(list(names), per_query=True)
    qids = [str(q) for q in aligned.qids]
    checked = 0
    for name in names:
        measure = ir_measures.parse_measure(name)
        theirs = {r.query_id: r.value for r in ir_measures.iter_calc([measure], qrels, run)}
        # the same queries: those of the run that the qrels judge (gdeval: those with a relevant document)
        assert set(theirs) <= set(qids) and len(theirs) > 0, name
        if _provider(measure) == "pytrec_eval":
            assert set(theirs) == set(qids), name
        got = np.array([ours[name][i] for i, q in enumerate(qids) if q in theirs])
        want = np.array([theirs[q] for q in qids if q in theirs])
        tol = ROUNDED.get(_provider(measure), 1e-9)
        np.testing.assert_allclose(got, want, rtol=0, atol=tol, err_msg=f"{name} ({_provider(measure)})")
        checked += len(want)
    return checked


@pytest.mark.parametrize("run", ["run.ql.cata.txt", "run.rm.cata.txt"])
def test_web2012_runs(run):
    if not WEB.is_dir():
        pytest.skip(f"{WEB} not found (../shared/data absent)")
    assert _compare(WEB / "qrels.adhoc.txt", WEB / run) == 50 * len(NAMES)


def test_trec_eval_suite_files():
    if not SUITE.is_dir():
        pytest.skip(f"{SUITE} not found (../shared/data absent)")
    assert _compare(SUITE / "qrels.test", SUITE / "results.test") > 0
    assert _compare(SUITE / "qrels.rel_level", SUITE / "results.test") > 0


def _random_files(tmp_path, seed, distinct_scores):
    """A random run and qrels: unjudged retrieved documents, judged documents never retrieved, grades -1..3."""
    rng = np.random.default_rng(seed)
    run_lines, qrels_lines = [], []
    for q in range(12):
        n_docs = int(rng.integers(1, 60))
        docs = [f"d{q}_{i}" for i in rng.permutation(80)[:n_docs]]
        if distinct_scores:
            scores = rng.permutation(10 * n_docs)[:n_docs] / 7.0
        else:
            scores = rng.integers(0, 6, n_docs) / 4.0  # many ties: trec_eval's docno order decides
        for d, s in zip(docs, scores):
            run_lines.append(f"{100 + q} Q0 {d} 0 {float(s)!r} sys")  # gdeval reads numeric topics only
        judged = [f"d{q}_{i}" for i in range(80) if rng.random() < 0.5]
        grades = rng.choice([-1, 0, 0, 1, 1, 2, 3], len(judged))
        if q == 3:
            grades[:] = 0  # a query with no relevant document
        qrels_lines += [f"{100 + q} 0 {d} {g}" for d, g in zip(judged, grades)]
    run_path, qrels_path = tmp_path / f"run{seed}", tmp_path / f"qrels{seed}"
    run_path.write_text("\n".join(run_lines) + "\n")
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    return qrels_path, run_path


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_runs_with_ties(tmp_path, seed):
    # gdeval and cwl_eval order tied documents their own way: only trec_eval's measures here
    names = [n for n in NAMES if _provider(ir_measures.parse_measure(n)) == "pytrec_eval"]
    assert len(names) > 30  # all but ERR (gdeval) and RBP (cwl_eval)
    assert _compare(*_random_files(tmp_path, seed, distinct_scores=False), names) > 0


@pytest.mark.parametrize("seed", [3, 4])
def test_random_runs_without_ties(tmp_path, seed):
    assert _compare(*_random_files(tmp_path, seed, distinct_scores=True)) > 0


def test_the_names_checked_here_cover_every_family_with_an_ir_measures_name():
    from rankjit._registry import LIST_FAMILIES

    missing = [f.ir_measures for f in LIST_FAMILIES
               if f.ir_measures and not any(n.split("@")[0].split("(")[0] == f.ir_measures for n in NAMES)]
    assert not missing


def test_aggregates_sum_the_counts_and_average_the_rest():
    # ir_measures' calc_aggregate sums NumQ, NumRet, NumRel, NumRelRet and averages the others: so does rankjit
    if not WEB.is_dir():
        pytest.skip(f"{WEB} not found (../shared/data absent)")
    qrels_path, run_path = WEB / "qrels.adhoc.txt", WEB / "run.ql.cata.txt"
    names = ["NumQ", "NumRet", "NumRel", "NumRelRet(rel=2)", "P@10", "AP", "nDCG@10"]
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, run)
    ours = align(str(run_path), str(qrels_path)).evaluate(names)
    for name in names:
        assert ours[name] == pytest.approx(theirs[ir_measures.parse_measure(name)], rel=1e-12), name
    assert ours["NumQ"] == 50.0
