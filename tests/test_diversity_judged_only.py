"""``judged_only=True`` for the diversity measures of :func:`rankjit.evaluate` (ir_measures' condensed lists).

With ``judged=`` (True for each document the qrels judge), ``alpha_nDCG(judged_only=True)@k``
and the other diversity names rank the judged documents alone.  The oracle is the plain-Python
reference of ``tests/reference/diversity.py`` on each query's judged documents, cut out of the
row by the test itself (ir_measures' pyndeval provider fails on ``judged_only=True``).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import rankjit
from reference import diversity as div_ref

#: rankjit's names with judged_only=True, and the reference's kind and cutoff (ndeval's bounds for alpha_DCG and
#: ERR_IA, rankjit's defaults; NRBP with the reference's beta)
NAMES = {
    "alpha_nDCG(judged_only=True)@5": ("alpha_ndcg", 5), "alpha_DCG(judged_only=True)@5": ("alpha_dcg_bound", 5),
    "ERR_IA(judged_only=True)@5": ("err_ia_bound", 5), "nERR_IA(judged_only=True)@5": ("nerr_ia", 5),
    "S_recall(judged_only=True)@5": ("s_recall", 5), "P_IA(judged_only=True)@5": ("p_ia", 5),
    "AP_IA(judged_only=True)": ("ap_ia", None), "alpha_nDCG(judged_only=True)@20": ("alpha_ndcg", 20),
    f"NRBP(beta={div_ref.BETA},judged_only=True)": ("nrbp", None),
    f"nNRBP(beta={div_ref.BETA},judged_only=True)": ("nnrbp", None),
}


def _batch(seed, n_queries=12, n_docs=15, n_sub=4):
    rng = np.random.default_rng(seed)
    judged = rng.random((n_queries, n_docs)) < 0.6
    nuggets = (rng.random((n_queries, n_docs, n_sub)) < 0.3).astype(np.int8) * judged[:, :, None]
    scores = rng.integers(0, 6, (n_queries, n_docs)).astype(np.float64)  # ties
    labels = nuggets.max(axis=2)
    return labels, scores, nuggets, judged


def _sets(rows):
    return [frozenset(np.flatnonzero(r > 0).tolist()) for r in rows]


def _reference(kind, k, nuggets, scores, judged, ties):
    out = []
    for q in range(scores.shape[0]):
        keep = np.flatnonzero(judged[q])  # the condensed list: the judged documents in row order
        out.append(div_ref.query(kind, _sets(nuggets[q, keep]), scores[q, keep].tolist(), k, 0.5, ties))
    return np.array(out)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
def test_judged_only_ranks_the_judged_documents_alone(seed, ties):
    labels, scores, nuggets, judged = _batch(seed)
    got = rankjit.evaluate(labels, scores, list(NAMES), nuggets=nuggets, judged=judged, ties=ties, per_query=True)
    for name, (kind, k) in NAMES.items():
        want = _reference(kind, k, nuggets, scores, judged, ties)
        np.testing.assert_allclose(got[name], want, rtol=1e-12, atol=1e-15, err_msg=f"{name} ties={ties}")


def test_call_level_judged_only_and_the_unjudged_rows_that_change_the_value():
    labels, scores, nuggets, judged = _batch(3)
    scores[:, 0] = 10.0  # an unjudged document on top changes the full list's values
    judged[:, 0] = False
    nuggets[:, 0] = 0
    labels = nuggets.max(axis=2)
    condensed = rankjit.evaluate(labels, scores, ["alpha_nDCG@5", "nERR_IA@5"], nuggets=nuggets, judged=judged,
                                 judged_only=True, per_query=True)
    full = rankjit.evaluate(labels, scores, ["alpha_nDCG@5", "nERR_IA@5"], nuggets=nuggets, judged=judged,
                            per_query=True)
    want = _reference("alpha_ndcg", 5, nuggets, scores, judged, "pessimistic")
    np.testing.assert_allclose(condensed["alpha_nDCG@5"], want, rtol=1e-12)
    assert (condensed["alpha_nDCG@5"] > full["alpha_nDCG@5"]).any()  # the unjudged top document is gone
    # the measure's own judged_only=False wins over the call's
    mixed = rankjit.evaluate(labels, scores, ["alpha_nDCG(judged_only=False)@5"], nuggets=nuggets, judged=judged,
                             judged_only=True, per_query=True)
    np.testing.assert_array_equal(mixed["alpha_nDCG(judged_only=False)@5"], full["alpha_nDCG@5"])


def test_judged_only_with_padding_and_ragged_rows():
    labels, scores, nuggets, judged = _batch(4)
    lengths = np.array([15, 3, 0, 9, 15, 1, 7, 15, 2, 11, 15, 5])
    cut = np.arange(15) < lengths[:, None]
    names = ["alpha_nDCG(judged_only=True)@5", "ERR_IA(judged_only=True)@5"]
    got = rankjit.evaluate(labels, scores, names, nuggets=nuggets, judged=judged, lengths=lengths, per_query=True)
    masked = rankjit.evaluate(labels, scores, names, nuggets=nuggets, judged=judged, mask=cut, per_query=True)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    flat = rankjit.evaluate(labels[cut], scores[cut], names, nuggets=nuggets[cut], judged=judged[cut],
                            offsets=offsets, per_query=True)
    want = _reference("alpha_ndcg", 5, nuggets, scores, judged & cut, "pessimistic")
    for res in (got, masked, flat):
        np.testing.assert_allclose(res[names[0]], want, rtol=1e-12)
        np.testing.assert_array_equal(res[names[1]], got[names[1]])


def test_judged_only_errors():
    labels, scores, nuggets, judged = _batch(5)
    with pytest.raises(ValueError, match=r"^'alpha_nDCG\(judged_only=True\)@5' with judged_only=True needs judged= "
                                         r"\(True for each document the qrels judge\)"):
        rankjit.evaluate(labels, scores, ["alpha_nDCG(judged_only=True)@5"], nuggets=nuggets)
    bad = judged.copy()
    q, d = np.argwhere(nuggets.max(axis=2) > 0)[0]
    bad[q, d] = False
    with pytest.raises(ValueError, match=rf"^the document in query {q} at position {d} holds nuggets but is marked "
                                         r"unjudged \(judged=False\)"):
        rankjit.evaluate(np.zeros_like(labels), scores, ["P_IA(judged_only=True)@5"], nuggets=nuggets, judged=bad)
    with pytest.raises(ValueError, match=rf"^label 1 in query {q} at position {d} is marked unjudged"):
        rankjit.evaluate(labels, scores, ["P_IA(judged_only=True)@5"], nuggets=nuggets, judged=bad)
    with pytest.raises(ValueError, match=r"^judged must have the shape of labels, \(12, 15\), got \(12, 14\)"):
        rankjit.evaluate(labels, scores, ["P_IA(judged_only=True)@5"], nuggets=nuggets, judged=judged[:, 1:])
    # RPP and the lexicographic preferences take judged_only= too (tests/test_preference_judged_only.py); the
    # refusal of a family without it: tests/test_judged_only.py


def test_the_reference_differs_from_the_full_list_where_unjudged_documents_rank_high():
    # guard on the oracle itself: the condensed reference is not the full list's value
    labels, scores, nuggets, judged = _batch(6)
    scores[:, 0], judged[:, 0], nuggets[:, 0] = 99.0, False, 0
    cond = _reference("alpha_ndcg", 5, nuggets, scores, judged, "pessimistic")
    full = _reference("alpha_ndcg", 5, nuggets, scores, np.ones_like(judged), "pessimistic")
    assert not np.allclose(np.nan_to_num(cond), np.nan_to_num(full)) and not math.isnan(cond.sum())
