"""Counts derived from the judgments behind the labels skip the check against the row; no one else's do.

``rankjit.evaluate`` checks that ``n_relevant`` / ``ideal_counts`` given from outside the
row cover what the row holds (a pass over the labels per threshold).  The alignment of a run
with its qrels (``AlignedRun.evaluate``, ``rankjit trec_eval``) and the pytrec_eval front end
derive those counts from the same judgments that labelled the rows, mark them
(``rankjit._api.counts_of_the_judgments``) and skip that pass.  These tests pin both sides:
the internal paths never run the check and give the checked values, and a user's counts
(also the ones an ``AlignedRun`` hands out) are still checked.
"""
from __future__ import annotations

import numpy as np
import pytest

import rankjit
from rankjit import _api
from rankjit.io import align, read_trec_qrels, read_trec_run

RUN = (b"q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq1 Q0 c 3 2.0 t\nq1 Q0 d 4 1.0 t\n"
       b"q2 Q0 a 1 1.0 t\nq2 Q0 e 2 5.0 t\n")
QRELS = b"q1 0 a 2\nq1 0 c 1\nq1 0 z 1\nq2 0 e 3\nq2 0 a 0\nq2 0 y 2\n"
MEASURES = ["AP", "R@3", "nDCG@3", "P@2", "Rprec"]


@pytest.fixture
def no_check(monkeypatch):
    """Any call of the check against the row fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("the counts were checked against the row")

    monkeypatch.setattr(_api, "_check_outside_normalisers", refuse)


def _aligned():
    return align(read_trec_run(RUN), read_trec_qrels(QRELS))


def test_the_mark_is_a_view_that_reads_as_a_plain_array():
    counts = np.array([[1, 2], [0, 3]], dtype=np.int64)
    marked = _api.counts_of_the_judgments(counts)
    assert isinstance(marked, _api.CountsOfTheJudgments)
    assert np.shares_memory(marked, counts)
    assert type(np.asarray(marked)) is np.ndarray


def test_aligned_run_evaluate_skips_the_check_and_gives_the_checked_values(monkeypatch):
    al = _aligned()
    want = rankjit.evaluate(al.labels, al.scores, MEASURES, offsets=al.offsets, ties="stable",
                            ideal_counts=np.array(al.ideal_counts), per_query=True)  # a plain array: checked
    calls = []
    real = _api._check_outside_normalisers
    monkeypatch.setattr(_api, "_check_outside_normalisers", lambda *a, **k: calls.append(1) or real(*a, **k))
    got = al.evaluate(MEASURES, per_query=True)
    assert calls == []
    for m in MEASURES:
        np.testing.assert_array_equal(got[m], want[m])
    rankjit.evaluate(al.labels, al.scores, MEASURES, offsets=al.offsets, ideal_counts=al.ideal_counts)
    assert calls == [1]  # the AlignedRun's own ideal_counts, passed by a user: checked


def test_a_users_counts_are_still_checked_through_aligned_run():
    al = _aligned()
    with pytest.raises(ValueError, match="n_relevant counts fewer relevant documents than the row holds"):
        al.evaluate(["R@3"], n_relevant=np.zeros(al.n_queries, dtype=np.int64))


def test_an_aligned_runs_counts_do_not_carry_the_mark_to_other_labels():
    al = _aligned()
    more = np.full(al.labels.shape, 2, dtype=al.labels.dtype)  # every document of grade 2: more than judged
    with pytest.raises(ValueError, match="ideal_counts"):
        rankjit.evaluate(more, al.scores, ["AP"], offsets=al.offsets, ideal_counts=al.ideal_counts)


def test_trec_eval_values_skip_the_check(no_check):
    from rankjit.io._cli import trec_eval_values

    out = trec_eval_values(_aligned(), {"map": None, "P": (2,), "recall": (3,), "ndcg_cut": (3,), "Rprec": None})
    assert [name for name, _, _ in out] == ["map", "P_2", "recall_3", "ndcg_cut_3", "Rprec"]


def test_the_pytrec_eval_front_end_skips_the_check(monkeypatch):
    from rankjit.compat import pytrec_eval as pe

    qrels = {"q1": {"a": 2, "c": 1, "z": 1}, "q2": {"e": 3, "a": 0, "y": 2}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}, "q2": {"a": 1.0, "e": 5.0}}
    measures = {"map", "ndcg_cut.3", "P.2", "recall.3", "Rprec"}
    want = pe.RelevanceEvaluator(qrels, measures).evaluate(run)
    monkeypatch.setattr(_api, "_check_outside_normalisers",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("checked")))
    assert pe.RelevanceEvaluator(qrels, measures).evaluate(run) == want
    # trec_eval's values: q1 ranks a, then c before b (tied scores: docno descending), so its relevant a and c
    # are ranks 1 and 2 of R = 3 (z is not retrieved); q2 retrieves e (grade 3) of R = 2 (e, y)
    assert want["q1"]["map"] == pytest.approx((1 / 1 + 2 / 2) / 3)
    assert want["q2"]["recall_3"] == pytest.approx(1 / 2)
