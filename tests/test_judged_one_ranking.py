"""With ``judged=``, one ranking serves the measures of the labels, of grade 0 and of the judged flags.

``rankjit._api._list_parts`` puts the measures of the labels that read a threshold or a table
by grade (``_measures.ON_JUDGED_GRADES_ROWS``), those that give grade 0 a value and Judged@k /
RBPResidual on one ranking of the judged grades (0 unjudged, grade + 1 judged), rewritten by
``_measures.on_judged_grades``.  Each measure must give the value it gives when computed on its
own (its own view, its own ranking): bitwise, for every tie rule, with and without the counts
from outside the row, per query and as means, one system or several.  The rankings are
counted: the merged call must run the engine once.
"""
from __future__ import annotations

import numpy as np
import pytest

import rankjit
from rankjit import _api

#: one measure per row kind of ON_JUDGED_GRADES_ROWS, parameters included, and two that give grade 0 a value
SHARED = ["P@5", "P(rel=2)@3", "R@10", "Success@3", "RR", "AP", "AP(denominator='min_k_r')@10", "Rprec", "nDCG@10",
          "nDCG(gain='exp2')@10", "DCG@5", "nDCG(dcg='exp-log2')", "RBP(p=0.8)", "RBP(rel=2)@10",
          "RBP(p=0.5, scale='none')", "SetP", "SetR", "SetF(beta=0.5)", "NumRel", "NumRelRet(rel=2)", "NumRet", "NumQ"]
NOT_AVERAGE = ["ERR@20", "ERR(max_grade=6)@10", "pFound", "IPrec(recall=0.5)", "Accuracy@10",  # ties="average"
               "Bpref", "Bpref(rel=2)", "infAP", "infAP(rel=3)"]  # refused; infAP: without pooled=
ZERO = ["P(rel=0)@5", "nDCG(gains={0:1,1:2})@10"]
FLAGS = ["Judged@10", "RBPResidual(p=0.7)@8", "RBPResidual(all_judged='zero')"]
TIES = ["pessimistic", "optimistic", "stable", "average"]


def _batch(seed, n_q=40, longest=30, top=4, dtype=np.int64):
    """Ragged rows with tied scores; every valued document judged, about half of the grade-0 ones."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, longest + 1, n_q)
    counts[:2] = (0, 1)  # an empty row and a one-document row
    offsets = np.concatenate(([0], np.cumsum(counts)))
    n = int(offsets[-1])
    labels = np.where(rng.random(n) < 0.4, rng.integers(1, top + 1, n), 0).astype(dtype)
    scores = rng.integers(0, 6, n).astype(np.float64)  # few values: many ties
    judged = (labels > 0) | (rng.random(n) < 0.5)
    return labels, scores, offsets, judged


def _measures_for(ties):
    return SHARED + ([] if ties == "average" else NOT_AVERAGE) + ZERO + FLAGS


def _alone(labels, scores, text, judged, n_relevant=None, ideal_counts=None, offsets=None, ties="pessimistic",
           pooled=None):
    """The value of one measure computed on its own view: Bpref and infAP on their judgment codes
    (``_api.judgment_part``, the batch of codes, with ``pooled`` for infAP), the others through ``evaluate``
    alone."""
    if not text.startswith(("Bpref", "infAP")):
        return rankjit.evaluate(labels, scores, [text], judged=judged, n_relevant=n_relevant,
                                ideal_counts=ideal_counts, offsets=offsets, ties=ties, per_query=True)[text]
    from rankjit import _measures
    from rankjit._validation import as_batch, scan, ties_code

    batch = as_batch(labels, scores, offsets=offsets)
    scan(batch, check_scores=True)
    request = _measures.requests([text], {"rel": None, "empty": "zero", "judged_only": False})[0]
    pool = pooled if text.startswith("infAP") else None
    codes, code_ideal = _api.judgment_part(batch, _api.judged_batch(batch, judged), pool, request.params["rel"],
                                           n_relevant, ideal_counts)
    return _api.run_list_measures(codes, [request], ties_code(ties), n_relevant, code_ideal)[0]


class _EngineRuns:
    """Counts the engine's runs (one ranking of a batch each)."""

    def __init__(self, monkeypatch):
        self.n = 0
        real = _api.run_engine

        def counted(*args, **kwargs):
            self.n += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(_api, "run_engine", counted)


@pytest.mark.parametrize("ties", TIES)
def test_one_ranking_gives_each_measure_its_own_value(ties, monkeypatch):
    labels, scores, offsets, judged = _batch(1)
    measures = _measures_for(ties)
    runs = _EngineRuns(monkeypatch)
    together = rankjit.evaluate(labels, scores, measures, offsets=offsets, judged=judged, ties=ties, per_query=True)
    assert runs.n == 1  # one ranking for every measure
    for text in measures:
        alone = _alone(labels, scores, text, judged, offsets=offsets, ties=ties)
        np.testing.assert_array_equal(together[text], alone, err_msg=f"{text}, ties={ties}")


def test_the_labels_measures_alone_keep_their_ranking_of_the_labels(monkeypatch):
    # no measure of the judged flags nor of grade 0: the labels' own ranking (valued documents only)
    labels, scores, offsets, judged = _batch(2)
    runs = _EngineRuns(monkeypatch)
    with_judged = rankjit.evaluate(labels, scores, SHARED, offsets=offsets, judged=judged, per_query=True)
    assert runs.n == 1
    without = rankjit.evaluate(labels, scores, SHARED, offsets=offsets, per_query=True)
    for text in SHARED:
        np.testing.assert_array_equal(with_judged[text], without[text], err_msg=text)


@pytest.mark.parametrize("ties", ["pessimistic", "average"])
def test_one_ranking_with_counts_from_outside_the_row(ties, monkeypatch):
    labels, scores, offsets, judged = _batch(3)
    n_q = len(offsets) - 1
    rng = np.random.default_rng(3)
    # judged documents by grade, each at least what the row holds (grade 0 too), some not retrieved
    present = np.zeros((n_q, 5), dtype=np.int64)
    q_of = np.repeat(np.arange(n_q), np.diff(offsets))
    np.add.at(present, (q_of[judged], labels[judged]), 1)
    ideal_counts = present + rng.integers(0, 3, present.shape)
    n_relevant = ideal_counts[:, 1:].sum(axis=1)
    measures = _measures_for(ties)
    for extra in ({"ideal_counts": ideal_counts}, {"n_relevant": n_relevant},
                  {"ideal_counts": ideal_counts, "n_relevant": n_relevant}):
        runs = _EngineRuns(monkeypatch)
        together = rankjit.evaluate(labels, scores, measures, offsets=offsets, judged=judged, ties=ties,
                                    per_query=True, **extra)
        assert runs.n == 1
        for text in measures:
            alone = _alone(labels, scores, text, judged, offsets=offsets, ties=ties, **extra)
            np.testing.assert_array_equal(together[text], alone, err_msg=f"{text}, {sorted(extra)}")


def test_means_and_label_dtypes():
    for dtype in (np.uint8, np.int16, np.int64):
        # more than two blocks of 1024 queries: the means are sums of per-block sums
        labels, scores, offsets, judged = _batch(4, n_q=2100, longest=8, dtype=dtype)
        measures = _measures_for("pessimistic")
        means = rankjit.evaluate(labels, scores, measures, offsets=offsets, judged=judged)
        for text in measures:
            alone = _alone(labels, scores, text, judged, offsets=offsets)
            # the counts are summed, Accuracy's undefined queries (NaN) left out of its mean
            reduce = np.sum if text.startswith("Num") else np.nanmean if text.startswith("Accuracy") else np.mean
            assert means[text] == pytest.approx(float(reduce(alone)), rel=1e-12, abs=1e-15), (text, dtype)


def test_several_systems_share_the_one_ranking_too():
    labels, scores, offsets, judged = _batch(5)
    rng = np.random.default_rng(5)
    stack = np.stack([scores, rng.permutation(scores), np.round(scores / 2)])
    measures = ["nDCG@10", "AP", "Judged@10", "P(rel=0)@5", "RBPResidual@5"]
    got = rankjit.evaluate_systems(labels, stack, measures, offsets=offsets, judged=judged)
    for s in range(stack.shape[0]):
        for text in measures:
            alone = rankjit.evaluate(labels, stack[s], [text], offsets=offsets, judged=judged, per_query=True)[text]
            np.testing.assert_array_equal(got[text][s], alone, err_msg=f"system {s}, {text}")


def test_counts_from_outside_are_checked_as_for_the_measure_alone():
    # AP's n_relevant below the relevant documents of the row: the same error, merged or alone
    labels, scores, offsets, judged = _batch(6)
    n_q = len(offsets) - 1
    too_few = np.zeros(n_q, dtype=np.int64)
    messages = []
    for measures in (["AP"], ["AP", "Judged@10"], ["AP", "P(rel=0)@5"]):
        with pytest.raises(ValueError, match="n_relevant counts fewer relevant documents than the row holds") as e:
            rankjit.evaluate(labels, scores, measures, offsets=offsets, judged=judged, n_relevant=too_few,
                             per_query=True)
        messages.append(str(e.value))
    assert messages[0] == messages[1], messages  # names the caller's labels and threshold, not the shifted ones
    assert "label >= 1" in messages[0]
    # a grade-0 column of ideal_counts below the judged grade-0 documents is only an error for a measure that
    # gives grade 0 a value (not for nDCG@10 with Judged@10 beside it)
    present = np.zeros((n_q, 5), dtype=np.int64)
    q_of = np.repeat(np.arange(n_q), np.diff(offsets))
    np.add.at(present, (q_of[judged], labels[judged]), 1)
    no_zero = present.copy()
    no_zero[:, 0] = 0
    got = rankjit.evaluate(labels, scores, ["nDCG@10", "Judged@10"], offsets=offsets, judged=judged,
                           ideal_counts=no_zero, per_query=True)
    alone = rankjit.evaluate(labels, scores, ["nDCG@10"], offsets=offsets, judged=judged, ideal_counts=no_zero,
                             per_query=True)
    np.testing.assert_array_equal(got["nDCG@10"], alone["nDCG@10"])
    with pytest.raises(ValueError, match=r"ideal_counts\[\d+, 0\] = 0, but query \d+ holds \d+ judged documents of "
                                         "grade 0"):
        rankjit.evaluate(labels, scores, ["nDCG(gains={0:1})@10", "Judged@10"], offsets=offsets, judged=judged,
                         ideal_counts=no_zero)


@pytest.mark.parametrize("measures, rankings", [
    (["nDCG@10", "P@5", "Judged@10"], 1),  # the labels' measures read no deeper than Judged@10: they join it
    (["nDCG@10", "P@5", "RR@10", "P(rel=0)@10"], 1),
    (["AP", "Judged@10"], 2),  # AP reads the whole row: the labels' own ranking (valued documents) is cheaper
    (["nDCG@10", "Judged@5"], 2),
    (["nDCG@20", "AP", "Judged@10", "nDCG(gains={0:1})@10"], 2),  # grade 0 and the flags share theirs
    (["Judged@10"], 1),
    (["Judged@10", "RBPResidual"], 1),
    (["nDCG@10", "AP", "Bpref", "infAP", "Judged@10"], 1),  # Bpref and infAP without pooled=: the judged grades
    (["nDCG@10", "Bpref", "Bpref(rel=2)"], 1),
    (["Bpref"], 1),
])
def test_the_labels_measures_join_when_they_read_no_deeper(measures, rankings, monkeypatch):
    labels, scores, offsets, judged = _batch(8)
    runs = _EngineRuns(monkeypatch)
    together = rankjit.evaluate(labels, scores, measures, offsets=offsets, judged=judged, per_query=True)
    assert runs.n == rankings
    for text in measures:
        alone = _alone(labels, scores, text, judged, offsets=offsets)
        np.testing.assert_array_equal(together[text], alone, err_msg=text)


@pytest.mark.parametrize("ties", TIES)
def test_with_a_pool_every_measure_shares_the_judged_grades_shifted_by_two(ties, monkeypatch):
    # pooled=: infAP counts the pooled but unjudged documents: labels 0 outside the pool, 1 pooled, grade + 2 judged
    labels, scores, offsets, judged = _batch(9)
    pooled = judged | (np.random.default_rng(9).random(len(labels)) < 0.3)
    measures = _measures_for(ties)
    runs = _EngineRuns(monkeypatch)
    together = rankjit.evaluate(labels, scores, measures, offsets=offsets, judged=judged, pooled=pooled, ties=ties,
                                per_query=True)
    assert runs.n == 1
    for text in measures:
        alone = _alone(labels, scores, text, judged, offsets=offsets, ties=ties, pooled=pooled)
        np.testing.assert_array_equal(together[text], alone, err_msg=f"{text}, ties={ties}")
    if ties != "average":
        without_pool = rankjit.evaluate(labels, scores, ["infAP"], offsets=offsets, judged=judged,
                                        per_query=True)["infAP"]
        assert not np.array_equal(together["infAP"], without_pool)  # the pool matters in this batch


def test_with_a_pool_and_counts_from_outside_the_row(monkeypatch):
    labels, scores, offsets, judged = _batch(11)
    pooled = judged | (np.random.default_rng(11).random(len(labels)) < 0.3)
    n_q = len(offsets) - 1
    present = np.zeros((n_q, 5), dtype=np.int64)
    q_of = np.repeat(np.arange(n_q), np.diff(offsets))
    np.add.at(present, (q_of[judged], labels[judged]), 1)
    ideal_counts = present + np.random.default_rng(11).integers(0, 3, present.shape)
    measures = _measures_for("pessimistic")
    runs = _EngineRuns(monkeypatch)
    together = rankjit.evaluate(labels, scores, measures, offsets=offsets, judged=judged, pooled=pooled,
                                ideal_counts=ideal_counts, per_query=True)
    assert runs.n == 1
    for text in measures:
        alone = _alone(labels, scores, text, judged, offsets=offsets, pooled=pooled, ideal_counts=ideal_counts)
        np.testing.assert_array_equal(together[text], alone, err_msg=text)


def test_a_pool_needs_room_for_two_more_grades(monkeypatch):
    # the judged grades + 2 must stay uint8: grade 253 shares the ranking with a pool, 254 does not (255 with + 1)
    labels, scores, offsets, judged = _batch(12)
    pooled = judged | (np.random.default_rng(12).random(len(labels)) < 0.3)
    for top, pool, rankings in ((253, pooled, 1), (254, pooled, 3), (254, None, 1)):  # 3: labels, flags, codes
        big = labels.copy()
        big[big == 4] = top
        runs = _EngineRuns(monkeypatch)
        got = rankjit.evaluate(big, scores, ["P@5", "infAP", "Judged@10"], offsets=offsets, judged=judged,
                               pooled=pool, per_query=True)
        assert runs.n == rankings, (top, pool is None)
        for text in ("P@5", "infAP", "Judged@10"):
            np.testing.assert_array_equal(got[text], _alone(big, scores, text, judged, offsets=offsets, pooled=pool),
                                          err_msg=f"{text}, grade {top}")


@pytest.mark.parametrize("source", ["n_relevant", "ideal_counts"])
def test_bprefs_counts_from_outside_are_checked_as_on_its_judgment_codes(source):
    # too few relevant (R) or judged non-relevant (N) documents counted from outside the row: the codes' message,
    # with the caller's grades, whether Bpref shares the judged grades' ranking or reads its codes (pooled=)
    labels, scores, offsets, judged = _batch(10)
    n_q = len(offsets) - 1
    present = np.zeros((n_q, 5), dtype=np.int64)
    q_of = np.repeat(np.arange(n_q), np.diff(offsets))
    np.add.at(present, (q_of[judged], labels[judged]), 1)
    if source == "n_relevant":
        cases = [(present[:, 2:].sum(axis=1) - (present[:, 2:].sum(axis=1) > 0), "Bpref(rel=2)",
                  r"n_relevant counts \d+ judged documents of grade >= 2 for query \d+, but its row holds \d+")]
    else:
        fewer_nonrelevant = present.copy()
        fewer_nonrelevant[:, 0] = 0
        fewer_relevant = present.copy()
        fewer_relevant[:, 3:] = 0
        cases = [(fewer_nonrelevant, "Bpref", r"ideal_counts counts \d+ judged documents of grade < 1 for query \d+"),
                 (fewer_relevant, "Bpref(rel=3)", r"ideal_counts counts 0 judged documents of grade >= 3 for query")]
    for counts, text, message in cases:
        messages = []
        for pooled in (None, judged):  # the judged grades; the judgment codes
            with pytest.raises(ValueError, match=message) as e:
                rankjit.evaluate(labels, scores, [text], offsets=offsets, judged=judged, pooled=pooled,
                                 **{source: counts})
            messages.append(str(e.value))
        assert messages[0] == messages[1]
    # the exact counts pass
    enough = present[:, 2:].sum(axis=1) if source == "n_relevant" else present
    assert rankjit.evaluate(labels, scores, [cases[-1][1]], offsets=offsets, judged=judged, **{source: enough})


def test_what_keeps_a_ranking_of_its_own(monkeypatch):
    labels, scores, offsets, judged = _batch(7)
    # the C/W/L walks and Compat read the labels themselves: their own ranking beside the judged grades'
    runs = _EngineRuns(monkeypatch)
    got = rankjit.evaluate(labels, scores, ["nDCG@10", "Judged", "Compat", "INST(max_rel=4)"], offsets=offsets,
                           judged=judged, per_query=True)
    assert runs.n == 2
    for text in ("Compat", "INST(max_rel=4)"):
        alone = rankjit.evaluate(labels, scores, [text], offsets=offsets, judged=judged, per_query=True)[text]
        np.testing.assert_array_equal(got[text], alone)
    # labels that are not integers (gains), and grades past the uint8 table: one ranking per view, as before
    runs.n = 0
    rankjit.evaluate(labels / 2.0, scores, ["P@5", "P(rel=0)@5"], offsets=offsets, judged=judged)
    assert runs.n == 2
    runs.n = 0  # (float labels holding integers are grades: one ranking)
    rankjit.evaluate(labels.astype(np.float64), scores, ["P@5", "Judged@10"], offsets=offsets, judged=judged)
    assert runs.n == 1
    big = labels.copy()
    big[big == 4] = 300
    runs.n = 0
    values = rankjit.evaluate(big, scores, ["P@5", "Judged@10"], offsets=offsets, judged=judged, per_query=True)
    assert runs.n == 2
    np.testing.assert_array_equal(values["P@5"], rankjit.evaluate(labels, scores, ["P@5"], offsets=offsets,
                                                                  judged=judged, per_query=True)["P@5"])
