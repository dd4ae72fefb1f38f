"""``judged_only=True`` for the preference measures of :func:`rankjit.evaluate` (RPP, LexiPrecision, LexiRecall).

The two systems rank the same documents, so ``judged=`` (True for each document the qrels
judge, laid out as ``labels``) is one flag per document, shared by both.  With
``judged_only=True`` each system's list is condensed to the judged documents, in their
order, before the preference is computed (trec_eval ``-J``, ir_measures' condensed lists).
The oracle is the plain-Python reference of ``tests/reference/preference.py`` on each
query's judged documents, cut out of the row by the test itself.
"""
from __future__ import annotations

import numpy as np
import pytest

import rankjit
import rankjit.preference as P
from reference import preference as pref_ref

#: names with judged_only=True -> (reference kind, parameters: k, weights, graded, rel)
NAMES = {
    "RPP(judged_only=True)": ("rpp", None, "uniform", False, 1),
    "RPP(weights='inverse',judged_only=True)@5": ("rpp", 5, "inverse", False, 1),
    "RPP(weights='dcg',graded=True,judged_only=True)": ("rpp", None, "dcg", True, 1),
    "RPP(rel=2,judged_only=True)@8": ("rpp", 8, "uniform", False, 2),
    "LexiPrecision(judged_only=True)": ("sgn", None, None, False, 1),
    "LexiPrecision(variant='rr',judged_only=True)@5": ("rr", 5, None, False, 1),
    "LexiRecall(judged_only=True)@6": ("lr", 6, None, False, 1),
    "LexiRecall(rel=2,judged_only=True)": ("lr", None, None, False, 2),
}


def _batch(seed, n_queries=14, n_docs=16):
    """Padded graded labels, two systems' scores (with ties), the judged mask and row lengths."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, (n_queries, n_docs)) * (rng.random((n_queries, n_docs)) < 0.4)
    judged = (rng.random((n_queries, n_docs)) < 0.55) | (labels > 0)  # an unjudged document is not relevant
    judged[0], labels[0] = False, 0  # a query without judged documents (so without relevant ones)
    judged[1] = True  # a query judged throughout
    sa = rng.integers(0, 6, (n_queries, n_docs)).astype(np.float64)  # ties
    sb = rng.integers(0, 6, (n_queries, n_docs)).astype(np.float64)
    lengths = rng.integers(0, n_docs + 1, n_queries)
    lengths[[1, 2]] = n_docs, 0  # a full row, an empty row
    return labels, sa, sb, judged, lengths


def _reference(name, labels, sa, sb, judged, lengths, ties):
    """Per query: the reference on the row's judged documents alone (NaN without a relevant one)."""
    kind, k, weights, graded, rel = NAMES[name]
    out = []
    for q in range(labels.shape[0]):
        keep = [j for j in range(lengths[q]) if judged[q, j]]  # the condensed list: judged documents, row order
        lab = [int(labels[q, j]) for j in keep]
        a = [float(sa[q, j]) for j in keep]
        b = [float(sb[q, j]) for j in keep]
        every = [True] * len(keep)
        if kind == "rpp":
            v = pref_ref.rpp_query(lab, a, b, every, every, k, weights, ties, rel=rel, graded=graded)
        else:
            v = pref_ref.lexi_query(kind, lab, a, b, every, every, k, ties, rel=rel)
        out.append(np.nan if v is None else v)
    return np.array(out)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
def test_judged_only_ranks_the_judged_documents_alone(seed, ties):
    labels, sa, sb, judged, lengths = _batch(seed)
    got = rankjit.evaluate(labels, sa, list(NAMES), scores_b=sb, judged=judged, lengths=lengths, ties=ties,
                           empty="nan", per_query=True)
    for name in NAMES:
        want = _reference(name, labels, sa, sb, judged, lengths, ties)
        np.testing.assert_allclose(got[name], want, rtol=1e-12, atol=1e-15, err_msg=f"{name} ties={ties}")


def test_padded_mask_and_ragged_layouts_agree():
    labels, sa, sb, judged, lengths = _batch(3)
    lengths[-1] = 0  # an empty last row: the ragged offsets end on it
    cut = np.arange(labels.shape[1]) < lengths[:, None]
    names = list(NAMES)
    by_lengths = rankjit.evaluate(labels, sa, names, scores_b=sb, judged=judged, lengths=lengths, empty="nan",
                                  per_query=True)
    by_mask = rankjit.evaluate(labels, sa, names, scores_b=sb, judged=judged, mask=cut, empty="nan", per_query=True)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    ragged = rankjit.evaluate(labels[cut], sa[cut], names, scores_b=sb[cut], judged=judged[cut], offsets=offsets,
                              empty="nan", per_query=True)
    for name in names:
        want = _reference(name, labels, sa, sb, judged, lengths, "pessimistic")
        for res in (by_lengths, by_mask, ragged):
            np.testing.assert_allclose(res[name], want, rtol=1e-12, atol=1e-15, err_msg=name)
    # the per-function entry points take the judged documents as their mask= (the row's documents) for the same result
    np.testing.assert_array_equal(P.rpp(labels, sa, sb, mask=cut & judged), by_lengths["RPP(judged_only=True)"])
    np.testing.assert_array_equal(P.lexiprecision(labels, sa, sb, 5, variant="rr", mask=cut & judged),
                                  by_lengths["LexiPrecision(variant='rr',judged_only=True)@5"])
    np.testing.assert_array_equal(P.lexirecall(labels, sa, sb, 6, mask=cut & judged),
                                  by_lengths["LexiRecall(judged_only=True)@6"])


def test_hand_derived_unjudged_document_on_top_of_one_system():
    # relevant documents 0 and 3; document 1 is unjudged (label 0). a ranks it first, b last:
    #   full lists:      f(a) = (2, 4), f(b) = (1, 3)  -> RPP = (sgn(1-2) + sgn(3-4)) / 2 = -1, LP = LR = -1,
    #                    rrLP = 1/2 - 1/1 = -0.5; with k = 1: f(a) = (inf, inf), f(b) = (1, inf) -> RPP = -1/2
    #   condensed lists: a = [0, 2, 3, 4], b = [0, 2, 3, 4]: f(a) = f(b) = (1, 3) -> every value 0
    labels = np.array([[1, 0, 0, 1, 0]])
    judged = np.array([[True, False, True, True, True]])
    a = np.array([[4.0, 5.0, 3.0, 2.0, 1.0]])
    b = np.array([[5.0, 1.0, 4.0, 3.0, 2.0]])
    names = ["RPP", "RPP@1", "LexiPrecision", "LexiPrecision(variant='rr')", "LexiRecall"]
    full = rankjit.evaluate(labels, a, names, scores_b=b, judged=judged, per_query=True)
    cond = rankjit.evaluate(labels, a, names, scores_b=b, judged=judged, judged_only=True, per_query=True)
    assert {n: full[n].tolist() for n in names} == {"RPP": [-1.0], "RPP@1": [-0.5], "LexiPrecision": [-1.0],
                                                    "LexiPrecision(variant='rr')": [-0.5], "LexiRecall": [-1.0]}
    assert {n: cond[n].tolist() for n in names} == {n: [0.0] for n in names}
    # the other way round: b loses by its unjudged document (it ranks it above document 3), a ranks it last
    b2 = np.array([[5.0, 3.5, 4.0, 3.0, 2.0]])  # b2: 0, 2, 1, 3, 4 -> f = (1, 4); condensed 0, 2, 3, 4 -> (1, 3)
    a2 = np.array([[5.0, 1.0, 4.0, 3.0, 2.0]])  # a2: 0, 2, 3, 4, 1 -> f = (1, 3) in both lists
    names = ["RPP", "LexiPrecision", "LexiRecall"]
    full = rankjit.evaluate(labels, a2, names, scores_b=b2, judged=judged, per_query=True)
    cond = rankjit.evaluate(labels, a2, [f"{n}(judged_only=True)" for n in names], scores_b=b2, judged=judged,
                            per_query=True)
    assert [full[n].tolist() for n in names] == [[0.5], [1.0], [1.0]]  # (0 + sgn(4 - 3)) / 2; level 2 decides
    assert [v.tolist() for v in cond.values()] == [[0.0], [0.0], [0.0]]


def test_call_level_judged_only_next_to_list_measures():
    labels, sa, sb, judged, lengths = _batch(4)
    sa[:, 0], judged[:, 0], labels[:, 0] = 99.0, False, 0  # an unjudged document on top of system a
    names = ["P@3", "RPP", "LexiPrecision", "LexiRecall(judged_only=False)"]
    got = rankjit.evaluate(labels, sa, names, scores_b=sb, judged=judged, judged_only=True, empty="nan",
                           per_query=True)
    full = rankjit.evaluate(labels, sa, ["RPP", "LexiRecall"], scores_b=sb, judged=judged, empty="nan",
                            per_query=True)
    np.testing.assert_array_equal(got["RPP"], _reference("RPP(judged_only=True)", labels, sa, sb, judged,
                                                         [labels.shape[1]] * labels.shape[0], "pessimistic"))
    np.testing.assert_array_equal(got["RPP"], rankjit.evaluate(labels, sa, ["RPP(judged_only=True)"], scores_b=sb,
                                                               judged=judged, empty="nan",
                                                               per_query=True)["RPP(judged_only=True)"])
    # the measure's own judged_only=False wins over the call's
    np.testing.assert_array_equal(got["LexiRecall(judged_only=False)"], full["LexiRecall"])
    # the unjudged top document of a changes the full lists' values, not the condensed ones
    assert not np.array_equal(np.nan_to_num(got["RPP"]), np.nan_to_num(full["RPP"]))
    cond_p = rankjit.evaluate(labels, sa, ["P(judged_only=True)@3"], judged=judged, per_query=True)
    np.testing.assert_array_equal(got["P@3"], cond_p["P(judged_only=True)@3"])
    # means: the mean of the per-query values (evaluate's empty='zero' for the queries without a relevant document)
    means = rankjit.evaluate(labels, sa, ["RPP"], scores_b=sb, judged=judged, judged_only=True)
    assert means["RPP"] == pytest.approx(float(np.mean(np.nan_to_num(got["RPP"]))), rel=1e-12, abs=1e-15)


def test_judged_only_errors():
    labels, sa, sb, judged, lengths = _batch(5)
    with pytest.raises(ValueError, match=r"^'RPP\(judged_only=True\)' with judged_only=True needs judged= \(True "
                                         r"for each document the qrels judge, laid out as labels and shared by both "
                                         r"systems\)"):
        rankjit.evaluate(labels, sa, ["RPP(judged_only=True)"], scores_b=sb)
    with pytest.raises(ValueError, match=r"^'LexiRecall' with judged_only=True needs judged="):
        rankjit.evaluate(labels, sa, ["LexiRecall"], scores_b=sb, judged_only=True)
    with pytest.raises(ValueError, match=r"^judged must have the shape of labels, \(14, 16\), got \(14, 15\)"):
        rankjit.evaluate(labels, sa, ["LexiPrecision(judged_only=True)"], scores_b=sb, judged=judged[:, 1:])
    bad = judged.copy()
    q, d = (int(x) for x in np.argwhere(labels > 0)[0])
    bad[q, d] = False
    with pytest.raises(ValueError, match=rf"^label {labels[q, d]} in query {q} at position {d} is marked unjudged"):
        rankjit.evaluate(labels, sa, ["RPP(judged_only=True)"], scores_b=sb, judged=bad)
    with pytest.raises(ValueError, match=r"^RPP\(judged_only=True\) compares two systems: pass the second system's "
                                         r"scores as scores_b="):
        rankjit.evaluate(labels, sa, ["RPP(judged_only=True)"], judged=judged)
    offsets = np.array([0, 100, labels.size])
    with pytest.raises(ValueError, match=r"^scores_b has shape \(223,\), expected \(224,\) like the first system's"):
        rankjit.evaluate(labels.ravel(), sa.ravel(), ["RPP(judged_only=True)"], scores_b=sb.ravel()[1:],
                         judged=judged.ravel(), offsets=offsets)
    with pytest.raises(TypeError, match=r"^judged_only in 'RPP\(judged_only=1\)' must be True or False, got 1"):
        rankjit.evaluate(labels, sa, ["RPP(judged_only=1)"], scores_b=sb, judged=judged)


def test_the_reference_differs_from_the_full_list_where_unjudged_documents_rank_high():
    # guard on the oracle itself: the condensed reference is not the full list's value
    labels, sa, sb, judged, lengths = _batch(6)
    sa[:, 0], judged[:, 0], labels[:, 0] = 99.0, False, 0
    full_rows = np.ones_like(judged)
    for name in ("RPP(judged_only=True)", "LexiPrecision(judged_only=True)"):
        cond = _reference(name, labels, sa, sb, judged, lengths, "pessimistic")
        full = _reference(name, labels, sa, sb, full_rows, lengths, "pessimistic")
        assert not np.array_equal(np.nan_to_num(cond), np.nan_to_num(full)) and np.isfinite(cond).any()
