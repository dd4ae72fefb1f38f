"""A measure name that ir_measures knows gives ir_measures' number in rankjit.

Each name is evaluated by rankjit (``rankjit.io.evaluate_run``: trec_eval's ranking and
judged-document counts) and by ir_measures itself (its providers: pytrec_eval for most,
gdeval for ERR, cwl_eval for RBP and the C/W/L measures), per query, on the TREC 2012 Web
runs, trec_eval's test files and random runs and qrels (ties, unjudged documents, judged
documents never retrieved, negative grades).  pytrec_eval returns full doubles: 1e-9.
gdeval and cwl_eval print their values rounded (5 decimals, 6 significant digits): half a
unit of their last place; ir_measures takes the C/W/L measures (SDCG, INSQ, INST, BPM,
NERR8-NERR11) from cwl_eval's classes as full doubles: 1e-9.

cwl_eval orders documents of equal score as the run file lists them (trec_eval: docno
descending), the accuracy provider too, the compat provider by doc id ascending (and its
ideal ranking by qrels order): the names they compute are compared on the run with its
ties broken in file order (:func:`_untied`, which keeps the signs of the scores: Compat's
ideal ranking reads them), which both tools then rank alike.  The compat and accuracy
providers print full doubles: 1e-9.  Accuracy is undefined (rankjit: NaN) for a query
without a (relevant, non-relevant) pair in the top k: ir_measures leaves out the queries
without a relevant document there (and divides by zero without a non-relevant one, which
the data here never has); rankjit's NaN must fall on exactly those queries.
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
    # grade 0 gains: a judged grade-0 document does, an unjudged one (or one judged below 0) does not
    "nDCG(gains={0:1,1:2})@10", "nDCG(gains={0:1,1:2})",
    # the C/W/L measures (ir_measures writes T and p as floats)
    "SDCG(max_rel=4)@10", "SDCG(max_rel=4)@1000", "SDCG(min_rel=1,max_rel=3)@20", "INSQ(max_rel=4)",
    "INSQ(T=3.0,max_rel=2)", "INST(T=2.0,max_rel=4)", "INST(min_rel=1,max_rel=4)", "INST(T=0.5,max_rel=1)",
    "BPM(T=1.0,max_rel=4)@20", "BPM(T=0.5,min_rel=1,max_rel=2)@50", "BPM(T=3.0,max_rel=4)@1000",
    "NERR8(max_rel=4)@10", "NERR8(min_rel=2,max_rel=4)@100", "NERR9(max_rel=4)@10", "NERR9(max_rel=3)@1000",
    "NERR10(p=0.8,max_rel=4)", "NERR10(min_rel=2,max_rel=4)", "NERR11(T=2.0,max_rel=4)", "NERR11(min_rel=1,max_rel=2)",
    # Compat (ir_measures' compat provider) and Accuracy (its accuracy provider)
    "Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=0.5,normalize=False)", "Accuracy",
    "Accuracy@10", "Accuracy(rel=2)@20", "Accuracy@1000",
)
#: ir_measures' providers that print rounded values: the largest difference that rounding explains
ROUNDED = {"gdeval": 5e-6 + 1e-12, "cwl_eval": 5e-6}
#: the C/W/L families ir_measures computes with cwl_eval's classes, in full precision
CWL = ("SDCG", "INSQ", "INST", "BPM", "NERR8", "NERR9", "NERR10", "NERR11")
#: the providers whose names are compared on the run untied (:func:`_untied`): their order of equal scores
UNTIED = ("cwl_eval", "compat", "accuracy")


def _provider(measure):
    """The provider ir_measures' default pipeline computes ``measure`` with (its first that supports it)."""
    return next(p.NAME for p in ir_measures.DefaultPipeline.providers if p.is_available() and p.supports(measure))


def _untied(run_path):
    """The run's lines with distinct scores, each query ranked as ir_measures ranks it for cwl_eval.

    ir_measures sorts a query's documents with Python's stable sort by score, descending,
    so equal scores keep the order of the file; the new scores give trec_eval's ranking
    (and rankjit's alignment) that same order, with the signs of the old ones (a score
    >= 0 becomes one of n', ..., 1, a negative one one of -1, -2, ...).
    """
    by_query = {}
    for line in Path(run_path).read_text().splitlines():
        fields = line.split()
        if len(fields) >= 6:
            by_query.setdefault(fields[0], []).append((float(fields[4]), fields[2]))
    lines = []
    for qid, docs in by_query.items():
        ranked = sorted(docs, key=lambda d: d[0], reverse=True)  # stable: file order among equal scores
        nonneg = sum(1 for score, _ in ranked if score >= 0)
        lines += [f"{qid} Q0 {doc} {i} {nonneg - i if score >= 0 else nonneg - i - 1} untied"
                  for i, (score, doc) in enumerate(ranked)]
    return "\n".join(lines) + "\n"


def _compare(qrels_path, run_path, names=NAMES, tmp_path=None):
    """Per query, rankjit against ir_measures; the names of the UNTIED providers on the run untied (:func:`_untied`)."""
    cwl = [n for n in names if _provider(ir_measures.parse_measure(n)) in UNTIED]
    checked = _compare_on(qrels_path, run_path, [n for n in names if n not in cwl])
    if cwl:
        untied = tmp_path / f"{Path(run_path).name}.untied"
        untied.write_text(_untied(run_path))
        checked += _compare_on(qrels_path, untied, cwl)
    return checked


def _compare_on(qrels_path, run_path, names):
    if not names:
        return 0
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
        # (Accuracy(rel=2): no query of a binary qrels file has a pair)
        assert set(theirs) <= set(qids) and (len(theirs) > 0 or measure.NAME == "Accuracy"), name
        if _provider(measure) == "pytrec_eval":
            assert set(theirs) == set(qids), name
        if measure.NAME == "Accuracy":  # rankjit's NaN (no pair) on the queries ir_measures leaves out
            assert set(theirs) == {q for i, q in enumerate(qids) if not np.isnan(ours[name][i])}, name
            checked += len(qids) - len(theirs)  # (those are checked too)
        got = np.array([ours[name][i] for i, q in enumerate(qids) if q in theirs])
        want = np.array([theirs[q] for q in qids if q in theirs])
        tol = 1e-9 if measure.NAME in CWL else ROUNDED.get(_provider(measure), 1e-9)
        np.testing.assert_allclose(got, want, rtol=0, atol=tol, err_msg=f"{name} ({_provider(measure)})")
        checked += len(want)
    return checked


#: DCG has no ir_measures name: these are held to pytrec_eval's definition written out (:func:`_compare_dcg`)
DCG_NAMES = {"DCG(gains={0:1})@5": ({0: 1.0}, 5), "DCG(gains={0:1,1:2,3:1})": ({0: 1.0, 1: 2.0, 3: 1.0}, None),
             "DCG@10": ({}, 10)}


def _compare_dcg(qrels_path, run_path):
    """DCG with gain maps per query against the sum pytrec_eval's nDCG divides: ``sum_r gain(d_r) / log2(r + 1)``.

    Documents ranked as trec_eval ranks them (score descending, docno descending); a
    document the qrels judge with grade ``g >= 0`` gains ``gains.get(g, g)``, any other
    (unjudged, judged below 0) nothing.  Read with ir_measures' readers.
    """
    qrels = {}
    for r in ir_measures.read_trec_qrels(str(qrels_path)):
        qrels.setdefault(r.query_id, {})[r.doc_id] = r.relevance
    run = {}
    for r in ir_measures.read_trec_run(str(run_path)):
        run.setdefault(r.query_id, []).append((r.score, r.doc_id.encode()))
    aligned = align(str(run_path), str(qrels_path))
    ours = aligned.evaluate(list(DCG_NAMES), per_query=True)
    for name, (gains, k) in DCG_NAMES.items():
        want = []
        for qid in aligned.qids:
            ranked = sorted(run[qid], reverse=True)[:k]  # score, then docno, descending
            judged = qrels[qid]
            want.append(sum(gains.get(judged[d.decode()], judged[d.decode()]) / np.log2(r + 2.0)
                            for r, (_, d) in enumerate(ranked) if judged.get(d.decode(), -1) >= 0))
        np.testing.assert_allclose(ours[name], want, rtol=1e-12, atol=1e-12, err_msg=name)
    return len(DCG_NAMES) * len(aligned.qids)


@pytest.mark.parametrize("run", ["run.ql.cata.txt", "run.rm.cata.txt"])
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_web2012_runs(run, tmp_path):
    if not WEB.is_dir():
        pytest.skip(f"{WEB} not found (../shared/data absent)")
    assert _compare(WEB / "qrels.adhoc.txt", WEB / run, tmp_path=tmp_path) == 50 * len(NAMES)
    assert _compare_dcg(WEB / "qrels.adhoc.txt", WEB / run) == 50 * len(DCG_NAMES)


@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_trec_eval_suite_files(tmp_path):
    if not SUITE.is_dir():
        pytest.skip(f"{SUITE} not found (../shared/data absent)")
    assert _compare(SUITE / "qrels.test", SUITE / "results.test", tmp_path=tmp_path) > 0
    assert _compare(SUITE / "qrels.rel_level", SUITE / "results.test", tmp_path=tmp_path) > 0


def _random_files(tmp_path, seed, distinct_scores, signed=False):
    """A random run and qrels: unjudged retrieved documents, judged documents never retrieved, grades -1..3.

    ``signed``: distinct scores of both signs, none 0 (Compat's ideal puts the unretrieved
    documents between the scores > 0 and those < 0).
    """
    rng = np.random.default_rng(seed)
    run_lines, qrels_lines = [], []
    for q in range(12):
        n_docs = int(rng.integers(1, 60))
        docs = [f"d{q}_{i}" for i in rng.permutation(80)[:n_docs]]
        if signed:
            scores = (rng.permutation(10 * n_docs)[:n_docs] - 5 * n_docs + 0.5) / 7.0
        elif distinct_scores:
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
    # gdeval orders tied documents its own way: trec_eval's measures, and cwl_eval's on the run untied
    names = [n for n in NAMES if _provider(ir_measures.parse_measure(n)) in ("pytrec_eval", "cwl_eval")]
    assert len(names) > 50  # all but ERR (gdeval)
    files = _random_files(tmp_path, seed, distinct_scores=False)
    assert _compare(*files, names, tmp_path) > 0
    assert _compare_dcg(*files) > 0


@pytest.mark.parametrize("seed", [3, 4])
def test_random_runs_without_ties(tmp_path, seed):
    files = _random_files(tmp_path, seed, distinct_scores=True)
    assert _compare(*files, tmp_path=tmp_path) > 0
    assert _compare_dcg(*files) > 0


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_random_runs_with_scores_of_both_signs(tmp_path, seed):
    # Compat's ideal ranking: the retrieved documents scoring < 0 after the unretrieved ones of their grade
    names = [n for n in NAMES if n.startswith(("Compat", "Accuracy", "nDCG", "AP", "P@"))]
    assert _compare(*_random_files(tmp_path, seed, distinct_scores=True, signed=True), names, tmp_path) > 0


def test_the_names_checked_here_cover_every_family_with_an_ir_measures_name():
    from rankjit._registry import LIST_FAMILIES

    missing = [f.ir_measures for f in LIST_FAMILIES
               if f.ir_measures and not any(n.split("@")[0].split("(")[0] == f.ir_measures for n in NAMES)]
    assert not missing


@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
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
