"""Worked examples computed by hand from the definitions; the reference and rankjit must both agree.

Each case: (family, labels, scores, k, ties, params, expected) with the derivation in a comment.
Scores are listed per document in input order; rank 1 is the highest score.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import rankjit
import reference as ref

L3 = math.log2(3)  # log2(3) = 1.5849625...

CASES = [
    # --- precision ------------------------------------------------------------------
    # ranked [1,0,1,0,0]: 2 relevant in top 5 -> 2/5
    ("P", [1, 0, 1, 0, 0], [5, 4, 3, 2, 1], 5, "pessimistic", {}, 0.4),
    # ranked [0,1,0,0,1]: 2 relevant in top 5 -> 2/5
    ("P", [0, 1, 0, 0, 1], [5, 4, 3, 2, 1], 5, "pessimistic", {}, 0.4),
    # k=10 beyond a 5-document row: still divided by k -> 2/10
    ("P", [1, 0, 1, 0, 0], [5, 4, 3, 2, 1], 10, "pessimistic", {}, 0.2),
    # k=None: divided by the row length -> 2/5
    ("P", [1, 0, 1, 0, 0], [5, 4, 3, 2, 1], None, "pessimistic", {}, 0.4),
    # rel=2: only the grade-2 document counts; ranked [2,1,0] -> 1/2 at k=2
    ("P", [1, 2, 0], [2, 3, 1], 2, "pessimistic", {"rel": 2}, 0.5),
    # scores given in reverse: ranked [0,0,1,0,1] -> P@2 = 0
    ("P", [1, 0, 1, 0, 0], [1, 2, 3, 4, 5], 2, "pessimistic", {}, 0.0),
    # --- recall ---------------------------------------------------------------------
    # ranked [1,0,1,0]: R = 2, one in the top 2 -> 1/2
    ("R", [1, 0, 1, 0], [4, 3, 2, 1], 2, "pessimistic", {}, 0.5),
    # n_relevant = 4 judged relevant documents -> 1/4
    ("R", [1, 0, 1, 0], [4, 3, 2, 1], 2, "pessimistic", {"n_relevant": 4}, 0.25),
    # no relevant document: the empty value
    ("R", [0, 0], [2, 1], 1, "pessimistic", {}, 0.0),
    ("R", [0, 0], [2, 1], 1, "pessimistic", {"empty": "one"}, 1.0),
    ("R", [0, 0], [2, 1], 1, "pessimistic", {"empty": "nan"}, math.nan),
    # --- success --------------------------------------------------------------------
    # ranked [0,0,1]: nothing relevant in the top 2 -> 0; whole row -> 1
    ("Success", [0, 0, 1], [3, 2, 1], 2, "pessimistic", {}, 0.0),
    ("Success", [0, 0, 1], [3, 2, 1], None, "pessimistic", {}, 1.0),
    # ranked [1,0,0]
    ("Success", [0, 0, 1], [1, 2, 3], 2, "pessimistic", {}, 1.0),
    # --- reciprocal rank ------------------------------------------------------------
    # first relevant at rank 2 -> 1/2; with k=1 it is cut off -> 0
    ("RR", [0, 1, 0], [3, 2, 1], None, "pessimistic", {}, 0.5),
    ("RR", [0, 1, 0], [3, 2, 1], 1, "pessimistic", {}, 0.0),
    ("RR", [0, 0, 0], [3, 2, 1], None, "pessimistic", {}, 0.0),
    # --- average precision ----------------------------------------------------------
    # ranked [1,0,1,0]: (P@1 + P@3) / R = (1 + 2/3) / 2
    ("AP", [1, 0, 1, 0], [4, 3, 2, 1], None, "pessimistic", {}, (1 + 2 / 3) / 2),
    # AP@2, min_k_r: (P@1) / min(2, 2) = 1/2
    ("AP", [1, 0, 1, 0], [4, 3, 2, 1], 2, "pessimistic", {"denominator": "min_k_r"}, 0.5),
    # ranked [1,1,1,1,0], R = 4: AP@2 min_k_r = (1 + 1) / min(2, 4) = 1; denominator r: 2 / 4
    ("AP", [1, 1, 1, 1, 0], [5, 4, 3, 2, 1], 2, "pessimistic", {"denominator": "min_k_r"}, 1.0),
    ("AP", [1, 1, 1, 1, 0], [5, 4, 3, 2, 1], 2, "pessimistic", {"denominator": "r"}, 0.5),
    ("AP", [1, 1, 1, 1, 0], [5, 4, 3, 2, 1], 2, "pessimistic", {}, 0.5),  # the default: denominator R
    # ranked [0,1,1]: (1/2 + 2/3) / 2 ; with n_relevant=4: (1/2 + 2/3) / 4
    ("AP", [0, 1, 1], [3, 2, 1], None, "pessimistic", {}, (0.5 + 2 / 3) / 2),
    ("AP", [0, 1, 1], [3, 2, 1], None, "pessimistic", {"n_relevant": 4}, (0.5 + 2 / 3) / 4),
    # no relevant: empty value
    ("AP", [0, 0, 0], [3, 2, 1], None, "pessimistic", {"empty": "one"}, 1.0),
    # --- R-precision ----------------------------------------------------------------
    # R = 2, ranked [1,0,1,0]: one relevant in the top 2 -> 1/2
    ("Rprec", [1, 0, 1, 0], [4, 3, 2, 1], None, "pessimistic", {}, 0.5),
    # n_relevant = 5 > row length 3: top 5 = whole row (2 relevant) -> 2/5
    ("Rprec", [1, 0, 1], [3, 2, 1], None, "pessimistic", {"n_relevant": 5}, 0.4),
    # --- DCG / nDCG -----------------------------------------------------------------
    # exp2 gain: (2^3 - 1)/log2(2) + (2^2 - 1)/log2(3) = 7 + 3/log2(3)
    ("DCG", [3, 2], [2, 1], None, "pessimistic", {"gain": "exp2"}, 7 + 3 / L3),
    # linear gain (the default): 3 + 2/log2(3)
    ("DCG", [3, 2], [2, 1], None, "pessimistic", {"gain": "linear"}, 3 + 2 / L3),
    ("DCG", [3, 2], [2, 1], None, "pessimistic", {}, 3 + 2 / L3),
    # zipf: 3/1 + 2/2 = 4
    ("DCG", [3, 2], [2, 1], None, "pessimistic", {"gain": "linear", "discount": "zipf"}, 4.0),
    # logb, base 3: ranks 1, 2 weigh 1 (r < 3), rank 3 weighs 1/log_3(3) = 1, rank 4 1/log_3(4) = ln3/ln4
    ("DCG", [1, 1, 1, 1], [4, 3, 2, 1], None, "pessimistic",
     {"gain": "linear", "discount": "logb", "base": 3.0}, 3 + math.log(3) / math.log(4)),
    # discount array [1, 0.5]: rank 3 weighs 0 -> 1 + 0.5
    ("DCG", [1, 1, 1], [3, 2, 1], None, "pessimistic", {"gain": "linear", "discount": [1.0, 0.5]}, 1.5),
    # gain array g = [0, 3, 10]: ranked [2, 1] -> 10 + 3/log2(3)
    ("DCG", [1, 2], [1, 2], None, "pessimistic", {"gain": [0.0, 3.0, 10.0]}, 10 + 3 / L3),
    # DCG@1 of ranked [0, 3] -> 0
    ("DCG", [0, 3], [2, 1], 1, "pessimistic", {}, 0.0),
    # ranked [0,1], linear: DCG = 1/log2(3), IDCG = 1 -> 1/log2(3)
    ("nDCG", [0, 1], [2, 1], None, "pessimistic", {"gain": "linear"}, 1 / L3),
    # ranked [1,2], exp2: DCG = 1 + 3/log2 3; IDCG = 3 + 1/log2 3
    ("nDCG", [1, 2], [2, 1], None, "pessimistic", {"gain": "exp2"}, (1 + 3 / L3) / (3 + 1 / L3)),
    # nDCG@1: 1/3 (exp2), 1/2 (linear, the default)
    ("nDCG", [1, 2], [2, 1], 1, "pessimistic", {"gain": "exp2"}, 1 / 3),
    ("nDCG", [1, 2], [2, 1], 1, "pessimistic", {}, 1 / 2),
    # ideal from judged counts {grade 0: 5, grade 1: 1, grade 2: 1}: IDCG (linear) = 2 + 1/log2 3
    ("nDCG", [0, 1], [2, 1], None, "pessimistic", {"gain": "linear", "ideal_counts": [5, 1, 1]},
     (1 / L3) / (2 + 1 / L3)),
    # no gain at all: empty value
    ("nDCG", [0, 0], [2, 1], None, "pessimistic", {"empty": "nan"}, math.nan),
    # --- ERR ------------------------------------------------------------------------
    # R(4) = (2^4 - 1)/2^4 = 15/16 at rank 1
    ("ERR", [4, 0], [2, 1], None, "pessimistic", {}, 0.9375),
    # max_grade=3, ranked [2,3]: R = 3/8, 7/8 -> 3/8 + (1/2)(7/8)(1 - 3/8) = 0.375 + 0.2734375
    ("ERR", [2, 3], [2, 1], None, "pessimistic", {"max_grade": 3}, 0.6484375),
    # utility log2: 3/8 + (1/log2 3)(7/8)(5/8)
    ("ERR", [2, 3], [2, 1], None, "pessimistic", {"max_grade": 3, "utility": "log2"},
     0.375 + (7 / 8) * (5 / 8) / L3),
    # probabilities: ranked [0.5, 1.0] -> 0.5 + (1/2)(1.0)(0.5) = 0.75
    ("ERR", [0.5, 1.0], [2, 1], None, "pessimistic", {"probabilities": True}, 0.75),
    # ERR@1 of the above -> 0.5
    ("ERR", [0.5, 1.0], [2, 1], 1, "pessimistic", {"probabilities": True}, 0.5),
    # --- pFound ---------------------------------------------------------------------
    # ranked [0, 1] probabilities: 0 + 1 * (1 - 0) * 0.85 = 0.85
    ("pFound", [0.0, 1.0], [2, 1], None, "pessimistic", {"probabilities": True}, 0.85),
    # ranked [0.5, 0.5]: 0.5 + (0.5)(0.85)(0.5) = 0.7125
    ("pFound", [0.5, 0.5], [2, 1], None, "pessimistic", {"probabilities": True}, 0.7125),
    # grades, max_grade 4: ranked [4, 4]: 15/16 + (1/16)(0.85)(15/16)
    ("pFound", [4, 4], [2, 1], None, "pessimistic", {}, 15 / 16 + (1 / 16) * 0.85 * (15 / 16)),
    # prel per grade [0, 0.4, 0.9], ranked [2, 1, 0], p_break 0.5:
    # 0.9 + (1 - 0.9)(0.5)(0.4) + 0 = 0.92
    ("pFound", [1, 2, 0], [2, 3, 1], None, "pessimistic", {"prel": [0.0, 0.4, 0.9], "p_break": 0.5}, 0.92),
    # --- tie rules ------------------------------------------------------------------
    # labels [0,1] with equal scores: pessimistic ranks the 0 first -> RR 1/2; optimistic -> 1;
    # stable (input order) -> 1/2; average over the 2 orders -> (1 + 1/2)/2 = 3/4
    ("RR", [0, 1], [1, 1], None, "pessimistic", {}, 0.5),
    ("RR", [0, 1], [1, 1], None, "optimistic", {}, 1.0),
    ("RR", [0, 1], [1, 1], None, "stable", {}, 0.5),
    ("RR", [1, 0], [1, 1], None, "stable", {}, 1.0),
    ("RR", [0, 1], [1, 1], None, "average", {}, 0.75),
    # pessimistic with three tied: lower label first, then input order: ranked [0(pos2), 1(pos0), 2(pos1)]
    # linear DCG = 0 + 1/log2 3 + 2/2 = 1/log2 3 + 1
    ("DCG", [1, 2, 0], [7, 7, 7], None, "pessimistic", {"gain": "linear"}, 1 / L3 + 1),
    ("DCG", [1, 2, 0], [7, 7, 7], None, "optimistic", {"gain": "linear"}, 2 + 1 / L3),
    # stable: input order [1, 2, 0] -> 1 + 2/log2 3
    ("DCG", [1, 2, 0], [7, 7, 7], None, "stable", {"gain": "linear"}, 1 + 2 / L3),
    # -0.0 and 0.0 are equal scores: stable keeps input order [0, 1] -> RR 1/2
    ("RR", [0, 1], [-0.0, 0.0], None, "stable", {}, 0.5),
    ("RR", [0, 1], [0.0, -0.0], None, "optimistic", {}, 1.0),
    # P@1 with one relevant among three tied: 1/3
    ("P", [1, 0, 0], [1, 1, 1], 1, "average", {}, 1 / 3),
    # AP over the 3 orders of labels [1,1,0] (all tied):
    #   [0,1,1]: (1/2 + 2/3)/2 = 7/12; [1,0,1]: (1 + 2/3)/2 = 10/12; [1,1,0]: 1 = 12/12 -> mean 29/36
    ("AP", [1, 1, 0], [2, 2, 2], None, "average", {}, 29 / 36),
    # nDCG (linear) of [2,0] tied: orders give 1 and (2/log2 3)/2 -> mean (1 + 1/log2 3)/2
    ("nDCG", [2, 0], [1, 1], None, "average", {"gain": "linear"}, (1 + 1 / L3) / 2),
    # a tie group below an untied leader: scores [9, 1, 1], labels [0, 1, 0]:
    # rank 1 fixed (label 0), ranks 2-3 in either order: RR = (1/2 + 1/3)/2
    ("RR", [0, 1, 0], [9, 1, 1], None, "average", {}, (0.5 + 1 / 3) / 2),
    # +inf / -inf rank normally: ranked [1 (inf), 0 (1.0), 2 (-inf)]; linear DCG = 1 + 0 + 2/2
    ("DCG", [0, 1, 2], [1.0, math.inf, -math.inf], None, "pessimistic", {"gain": "linear"}, 2.0),
]

IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("family,labels,scores,k,ties,params,expected", CASES, ids=IDS)
def test_reference_matches_hand_value(family, labels, scores, k, ties, params, expected):
    got = ref.measure(family, labels, scores, k, ties, **params)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


_FUNCS = {
    "P": rankjit.precision, "R": rankjit.recall, "Success": rankjit.hit_rate, "RR": rankjit.rr, "AP": rankjit.ap,
    "Rprec": rankjit.rprec, "DCG": rankjit.dcg, "nDCG": rankjit.ndcg, "ERR": rankjit.err, "pFound": rankjit.pfound,
}


@pytest.mark.parametrize("family,labels,scores,k,ties,params,expected", CASES, ids=IDS)
def test_rankjit_matches_hand_value(family, labels, scores, k, ties, params, expected):
    params = dict(params)
    if "n_relevant" in params:
        params["n_relevant"] = np.array([params["n_relevant"]])
    if "ideal_counts" in params:
        params["ideal_counts"] = np.array([params["ideal_counts"]])
    if family == "Rprec":
        assert k is None
        args = ()
    else:
        args = (k,)
    float_labels = any(isinstance(y, float) for y in labels)
    y = np.array([labels], dtype=np.float64 if float_labels else np.int64)
    s = np.array([scores], dtype=np.float64)
    got = _FUNCS[family](y, s, *args, ties=ties, **params)
    assert got.dtype == np.float64 and got.shape == (1,)
    np.testing.assert_allclose(got[0], expected, rtol=1e-12, atol=1e-12)


def test_p_at_5_docstring_example_batch():
    # the example: both rows P@5 = 2/5
    labels = np.array([[1, 0, 1, 0, 0], [0, 1, 0, 0, 1]])
    scores = np.array([[5.0, 4, 3, 2, 1]] * 2)
    assert rankjit.precision(labels, scores, 5).tolist() == [0.4, 0.4]
    res = rankjit.evaluate(labels, scores, ["P@5", "RR"], per_query=True)
    assert res["P@5"].tolist() == [0.4, 0.4]
    assert res["RR"].tolist() == [1.0, 0.5]  # first relevant at rank 1 and rank 2
    means = rankjit.evaluate(labels, scores, ["P@5", "RR"])
    assert means == {"P@5": pytest.approx(0.4), "RR": pytest.approx(0.75)}


def test_float32_ties_are_ties():
    # label 1 scored 1.0, label 0 scored 1.0 + 1e-9.  In float64 the label-0 document ranks first
    # (RR = 1/2) under any tie rule.  In float32 both scores round to 1.0 and tie, so the optimistic
    # rule puts the label-1 document first (RR = 1).
    s64 = np.array([[1.0, 1.0 + 1e-9]])
    labels = np.array([[1, 0]])
    assert rankjit.rr(labels, s64, ties="optimistic").tolist() == [0.5]
    assert rankjit.rr(labels, s64.astype(np.float32), ties="optimistic").tolist() == [1.0]
    assert ref.measure("RR", [1, 0], s64.astype(np.float32)[0], None, "optimistic") == 1.0


def test_ideal_order_ndcg_hand():
    # labels sorted by descending score in the ideal order -> nDCG 1 for any gain / discount
    labels = np.array([[3, 2, 2, 1, 0]])
    scores = np.array([[5.0, 4, 3, 2, 1]])
    for gain in ("exp2", "linear", [0.0, 1.0, 5.0, 6.0]):
        for disc in ("log2", "zipf", "logb"):
            np.testing.assert_allclose(rankjit.ndcg(labels, scores, gain=gain, discount=disc, base=3.0), [1.0],
                                       rtol=1e-12)
