"""A measure that gives grade 0 a value gives none to an unjudged document (``judged=False``).

trec_eval, pytrec_eval and ir_measures give a document the qrels do not hold no gain and never
count it as relevant, whatever grade 0 gains: ``nDCG(gains={0:1})`` gives a judged grade-0
document 1, an unjudged one 0, in the ranking and in the ideal (which holds the qrels'
documents only).  The same for the binary measures with ``rel <= 0`` (every judged document
is relevant, no unjudged one), RBP with ``rel <= 0`` or a gain array, pFound with ``prel``.
Labels alone cannot tell the two apart (both have label 0): ``judged=`` does, and
``AlignedRun.evaluate`` (``rankjit eval``, the ir_measures provider) passes it.  Without
``judged=`` every document is judged.  The values here are derived by hand.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import rankjit
from rankjit import _measures
from rankjit._validation import as_batch, scan, ties_code
from rankjit.io import align, read_trec_qrels, read_trec_run


def w(r):
    """The log2 discount of rank r."""
    return 1.0 / math.log2(r + 1)


# ranks 1..5: unjudged, judged grade 1, judged grade 0, judged grade 2, unjudged
LABELS = np.array([[0, 1, 0, 2, 0]])
SCORES = np.array([[5.0, 4.0, 3.0, 2.0, 1.0]])
JUDGED = np.array([[False, True, True, True, False]])


def test_gain_maps_give_unjudged_documents_nothing():
    got = rankjit.evaluate(LABELS, SCORES, ["nDCG(gains={0:1,1:2})", "nDCG(gains={0:1,1:2})@3", "DCG(gains={0:1})@5",
                                            "DCG(gain=[1,1,2])@5", "nDCG(gains={0:1})@2"], judged=JUDGED)
    dcg = 2 * w(2) + 1 * w(3) + 2 * w(4)  # gains 0, 2, 1, 2, 0
    ideal = 2 * w(1) + 2 * w(2) + 1 * w(3)  # the judged documents' gains, 2, 2, 1, in order
    assert got["nDCG(gains={0:1,1:2})"] == pytest.approx(dcg / ideal, abs=1e-15)
    assert got["nDCG(gains={0:1,1:2})@3"] == pytest.approx((2 * w(2) + w(3)) / ideal, abs=1e-15)
    assert got["DCG(gains={0:1})@5"] == pytest.approx(w(2) + w(3) + 2 * w(4), abs=1e-15)
    assert got["DCG(gain=[1,1,2])@5"] == got["DCG(gains={0:1})@5"]
    assert got["nDCG(gains={0:1})@2"] == pytest.approx(w(2) / (2 * w(1) + w(2)), abs=1e-15)


def test_without_judged_every_document_is_judged():
    got = rankjit.evaluate(LABELS, SCORES, ["nDCG(gains={0:1,1:2})", "P(rel=0)@5"])
    dcg = w(1) + 2 * w(2) + w(3) + 2 * w(4) + w(5)
    ideal = 2 * w(1) + 2 * w(2) + w(3) + w(4) + w(5)
    assert got == pytest.approx({"nDCG(gains={0:1,1:2})": dcg / ideal, "P(rel=0)@5": 1.0}, abs=1e-15)


def test_the_ideal_counts_judged_grade_zero_documents_outside_the_row():
    # one more judged grade-0 document, not retrieved: ideal gains 2, 2, 1, 1
    ideal_counts = np.array([[2, 1, 1]])
    got = rankjit.evaluate(LABELS, SCORES, "nDCG(gains={0:1,1:2})", judged=JUDGED, ideal_counts=ideal_counts)
    ideal = 2 * w(1) + 2 * w(2) + w(3) + w(4)
    assert got["nDCG(gains={0:1,1:2})"] == pytest.approx((2 * w(2) + w(3) + 2 * w(4)) / ideal, abs=1e-15)
    with pytest.raises(ValueError, match=r"ideal_counts\[0, 0\] = 0, but query 0 holds 1 judged documents of grade 0"):
        rankjit.evaluate(LABELS, SCORES, "nDCG(gains={0:1})", judged=JUDGED, ideal_counts=[[0, 1, 1]])
    with pytest.raises(ValueError, match=r"n_relevant counts 2 relevant documents for query 0, but the row holds 3"):
        rankjit.evaluate(LABELS, SCORES, "AP(rel=0)", judged=JUDGED, n_relevant=[2])


def _pfound(prel, p_break=0.15):
    """pFound of prel by rank: pLook_1 = 1, pLook_{r+1} = pLook_r (1 - pRel_r) (1 - p_break)."""
    total, look = 0.0, 1.0
    for p in prel:
        total += look * p
        look *= (1.0 - p) * (1.0 - p_break)
    return total


def test_other_measures_that_value_grade_zero():
    names = ["P(rel=0)@5", "AP(rel=0)", "RR(rel=0)", "R(rel=0)@3", "Success(rel=0)@1", "Rprec(rel=0)", "SetP(rel=0)",
             "NumRelRet(rel=0)", "NumRet(rel=0)", "IPrec(rel=0)@0.5", "RBP(p=0.5,rel=0)",
             "RBP(p=0.5,gain=[1,2,4],scale='none')", "pFound(prel=[0.2,0.5,0.9])", "Accuracy(rel=0)@5"]
    got = rankjit.evaluate(LABELS, SCORES, names, judged=JUDGED, per_query=True)
    got = {k: float(v[0]) for k, v in got.items()}
    # relevant (rel=0): the judged documents, ranks 2, 3, 4 (R = 3)
    want = {
        "P(rel=0)@5": 3 / 5, "AP(rel=0)": (1 / 2 + 2 / 3 + 3 / 4) / 3, "RR(rel=0)": 1 / 2, "R(rel=0)@3": 2 / 3,
        "Success(rel=0)@1": 0.0, "Rprec(rel=0)": 2 / 3, "SetP(rel=0)": 3 / 5, "NumRelRet(rel=0)": 3.0,
        "NumRet(rel=0)": 3.0, "IPrec(rel=0)@0.5": 3 / 4,
        "RBP(p=0.5,rel=0)": 0.5 * (0.5 + 0.25 + 0.125),
        "RBP(p=0.5,gain=[1,2,4],scale='none')": 0.5 * (2 * 0.5 + 1 * 0.25 + 4 * 0.125),
        "pFound(prel=[0.2,0.5,0.9])": _pfound([0.0, 0.5, 0.2, 0.9, 0.0]),
        # (judged, unjudged) pairs: the unjudged document of rank 5 is below the three, the one of rank 1 above
        "Accuracy(rel=0)@5": 3 / 6,
    }
    assert got == pytest.approx(want, abs=1e-15)


ZERO_SAFE = ["P@5", "AP", "nDCG@3", "nDCG(gains={1:3,2:0})", "DCG(gain='exp2')", "ERR@5", "pFound", "RBP(rel=1)",
             "RBP", "SDCG(max_rel=2)@5", "INSQ(max_rel=2)", "INST(max_rel=2)", "BPM(T=1.0,max_rel=2)@5",
             "NERR8(max_rel=2)@5", "NERR9(max_rel=2)@5", "NERR10(max_rel=2)", "NERR11(max_rel=2)", "Compat",
             "Compat(normalize=False)", "Accuracy@5", "IPrec@0.5", "SetF", "NumRet", "NumQ", "NumRel"]
GRADE_ZERO = ["P(rel=0)@5", "AP(rel=0)", "nDCG(gains={0:1})", "DCG(gain=[1,1,2])", "RBP(rel=0)",
              "RBP(gain=[0.5,1,2])", "pFound(prel=[0.1,0.5,0.9])", "SetP(rel=0)", "IPrec(rel=0)@0.2",
              "NumRel(rel=0)", "Accuracy(rel=0)@3"]


def test_values_grade_zero_is_the_plan_not_zero_safe():
    """The measures rewritten for judged= are exactly those whose row in the engine's plan reads grade 0."""
    batch = scan(as_batch(np.array([[0, 1, 2, 0]]), np.array([[4.0, 3.0, 2.0, 1.0]])), check_scores=False)
    for name in ZERO_SAFE + GRADE_ZERO:
        (request,) = _measures.requests([name], {})
        safe = _measures.build_plan([request], batch, ties_code("pessimistic"), None).zero_safe
        assert _measures.values_grade_zero(request) == (not safe) == (name in GRADE_ZERO), name


def test_measures_that_give_grade_zero_nothing_ignore_judged():
    """Grade 0 gains nothing in them, so an unjudged document and a judged grade-0 one are alike: judged= changes
    nothing (C/W/L measures, Compat, ERR, RBP(rel=1), gain maps with grade 0 at 0, ...)."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, (30, 12))
    scores = rng.integers(0, 5, (30, 12)).astype(float)
    judged = (labels > 0) | (rng.random((30, 12)) < 0.5)
    with_judged = rankjit.evaluate(labels, scores, ZERO_SAFE, judged=judged, per_query=True)
    without = rankjit.evaluate(labels, scores, ZERO_SAFE, per_query=True)
    for name in ZERO_SAFE:
        np.testing.assert_array_equal(with_judged[name], without[name], err_msg=name)


def test_judged_grades_equal_a_shifted_evaluation_on_random_rows():
    """On random rows, each grade-0 measure with judged= equals the same measure on labels 0 (unjudged) and
    y + 1 (judged grade y) with its table written out for them by hand, ties and ideal_counts included."""
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 4, (40, 15))
    judged = (labels > 0) | (rng.random((40, 15)) < 0.5)
    labels[~judged] = 0
    scores = rng.integers(0, 4, (40, 15)).astype(float)
    ideal = np.stack([np.bincount(labels[q][judged[q]], minlength=4) for q in range(40)]) + rng.integers(0, 2, (40, 4))
    shifted = np.where(judged, labels + 1, 0)
    sideal = np.hstack((np.zeros((40, 1), np.int64), ideal))
    pairs = {"nDCG(gains={0:1,1:2})@5": "nDCG(gain=[0,1,2,2,3])@5", "DCG(gains={0:2})": "DCG(gain=[0,2,1,2,3])",
             "nDCG(gain=[0.5,1,3,7])": "nDCG(gain=[0,0.5,1,3,7])", "AP(rel=0)": "AP(rel=1)",
             "R(rel=0)@5": "R(rel=1)@5", "RBP(p=0.7,rel=0)": "RBP(p=0.7,rel=1)",
             "pFound(prel=[0.1,0.2,0.4,0.8])": "pFound(prel=[0,0.1,0.2,0.4,0.8])"}
    for ties in ("pessimistic", "optimistic"):
        got = rankjit.evaluate(labels, scores, list(pairs), judged=judged, ideal_counts=ideal, ties=ties,
                               per_query=True)
        want = rankjit.evaluate(shifted, scores, list(pairs.values()), ideal_counts=sideal, ties=ties,
                                per_query=True)
        for name, same in pairs.items():
            np.testing.assert_allclose(got[name], want[same], rtol=0, atol=1e-15, err_msg=name)


QRELS = b"q1 0 a 1\nq1 0 b 0\nq1 0 c -1\nq1 0 e 0\nq1 0 f 2\nq2 0 g 0\n"
# q1 ranks a (grade 1), x (unjudged), b (grade 0), c (judged below 0); e (0) and f (2) are never retrieved.
# q2 ranks y (unjudged) and g (grade 0)
RUN = b"q1 Q0 a 1 4 t\nq1 Q0 x 2 3 t\nq1 Q0 b 3 2 t\nq1 Q0 c 4 1 t\nq2 Q0 y 1 2 t\nq2 Q0 g 2 1 t\n"
Q1 = (1 * w(1) + 1 * w(3)) / (2 * w(1) + w(2) + w(3) + w(4))  # nDCG(gains={0:1}): ideal gains 2, 1, 1, 1
Q2 = w(2) / w(1)


def test_aligned_runs_pass_the_judged_documents():
    aligned = align(read_trec_run(RUN), read_trec_qrels(QRELS))
    got = aligned.evaluate(["nDCG(gains={0:1})", "P(rel=0)@4"], per_query=True)
    np.testing.assert_allclose(got["nDCG(gains={0:1})"], [Q1, Q2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(got["P(rel=0)@4"], [2 / 4, 1 / 4], rtol=0, atol=1e-15)  # a and b; g
    # the grade codes (grades too large for an ideal_counts table) give the same
    coded = align(read_trec_run(RUN), read_trec_qrels(QRELS + b"q3 0 h 100000000\n"))
    coded_got = coded.evaluate(["nDCG(gains={0:1})", "P(rel=0)@4"], per_query=True)
    np.testing.assert_allclose(coded_got["nDCG(gains={0:1})"][:2], [Q1, Q2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(coded_got["P(rel=0)@4"][:2], [2 / 4, 1 / 4], rtol=0, atol=1e-15)


def test_rankjit_eval_prints_the_judged_value(tmp_path, capsys):
    from rankjit.cli import main

    (tmp_path / "qrels").write_bytes(QRELS)
    (tmp_path / "run").write_bytes(RUN)
    assert main(["eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "nDCG(gains={0:1})", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["nDCG(gains={0:1})"] == pytest.approx((Q1 + Q2) / 2, abs=1e-15)


def test_the_ir_measures_provider_gives_pytrec_evals_value():
    ir_measures = pytest.importorskip("ir_measures")
    from rankjit.integrations import ir_measures as rj

    qrels = {"q1": {"a": 1, "b": 0, "c": -1, "e": 0, "f": 2}, "q2": {"g": 0}}
    run = {"q1": {"a": 4.0, "x": 3.0, "b": 2.0, "c": 1.0}, "q2": {"y": 2.0, "g": 1.0}}
    measures = [ir_measures.parse_measure("nDCG(gains={0:1})"), ir_measures.parse_measure("nDCG(gains={0:1,1:2})@2")]
    want = {(str(m.measure), m.query_id): m.value for m in ir_measures.iter_calc(measures, qrels, run)}
    with rj.registered():
        assert rj.supports(measures[0]) and rj.supports(measures[1])
        got = {(str(m.measure), m.query_id): m.value for m in ir_measures.iter_calc(measures, qrels, run)}
    assert got == pytest.approx(want, abs=1e-12)
    assert got[("nDCG(gains={0:1})", "q1")] == pytest.approx(Q1, abs=1e-15)
