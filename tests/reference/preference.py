"""Plain-Python references for the preference measures: RPP (Diaz & Ferraro 2022) and lexicographic
precision / recall (Diaz, EVIA 2023; Diaz, Ekstrand & Mitra, TORS 2025), loop by loop.

``f_1 <= ... <= f_m`` are the ranks at which a system's ranking reaches each of the ``m``
relevant documents (``inf`` when not retrieved or below the cutoff), from
:func:`reference.ties.ranks`; two systems are compared level by level.
"""
from __future__ import annotations

import math

from reference import ties as tie_rule

# ---------------------------------------------------------------------------
# RPP
# ---------------------------------------------------------------------------


def rpp_weights(weights, m):
    if isinstance(weights, str):
        if weights == "uniform":
            w = [1.0] * m
        elif weights == "inverse":
            w = [1.0 / i for i in range(1, m + 1)]
        else:
            w = [1.0 / math.log2(i + 1) for i in range(1, m + 1)]
    else:
        w = [float(weights[i]) if i < len(weights) else 0.0 for i in range(m)]
    z = sum(w)
    return [x / z for x in w]


def rpp_binary(relevant, rank_a, rank_b, weights):
    """sum_i p(i) sgn(f_i(b) - f_i(a)); f_i = rank of the i-th relevant document found."""
    fa = sorted(rank_a[j] for j in relevant)
    fb = sorted(rank_b[j] for j in relevant)
    m = len(relevant)
    if m == 0:
        return None
    p = rpp_weights(weights, m)
    total = 0.0
    for i in range(m):
        if fa[i] == fb[i]:  # includes two unretrieved documents
            continue
        total += p[i] * (1.0 if fb[i] > fa[i] else -1.0)
    return total


def rpp_query(labels, sa, sb, ret_a, ret_b, k, weights, ties, rel=1, graded=False, nug=None):
    """One query; labels/scores/retrieved flags over the row's real documents."""
    if nug is not None:
        tie = [sum(1 for x in row if x > 0) for row in nug]
    else:
        tie = labels
    ra = tie_rule.ranks(sa, tie, ret_a, ties, k)
    rb = tie_rule.ranks(sb, tie, ret_b, ties, k)
    n = len(sa)
    if nug is not None:
        vals = []
        for i in range(len(nug[0]) if n else 0):
            v = rpp_binary([j for j in range(n) if nug[j][i] > 0], ra, rb, weights)
            if v is not None:
                vals.append(v)
        return sum(vals) / len(vals) if vals else None
    if not graded:
        return rpp_binary([j for j in range(n) if labels[j] >= rel], ra, rb, weights)
    grades = sorted({y for y in labels if y >= rel and y > 0})
    num = den = 0.0
    for g in grades:
        relevant = [j for j in range(n) if labels[j] >= g]
        num += len(relevant) * rpp_binary(relevant, ra, rb, weights)
        den += len(relevant)
    return num / den if den else None


def rpp_rankings(judged, ranking_a, ranking_b, weights="uniform", k=None):
    """RPP of two rankings of document ids against ``judged`` ``{doc id: grade}`` (relevant: grade >= 1), as TREC
    files give them: each ranking is already in rank order (a run's documents).  NaN without a relevant document.

    :func:`rpp_query` over the judged and the retrieved documents, a ranking's order given as scores (no tie);
    ``k`` (None or 0: every rank) keeps the top ``k`` of each ranking.
    """
    docs = list(dict.fromkeys([*judged, *ranking_a, *ranking_b]))

    def as_scores(ranking):
        position = {d: r for r, d in enumerate(ranking)}
        return [-float(position.get(d, 0)) for d in docs], [d in position for d in docs]

    (sa, ret_a), (sb, ret_b) = as_scores(ranking_a), as_scores(ranking_b)
    value = rpp_query([judged.get(d, 0) for d in docs], sa, sb, ret_a, ret_b, k or None, weights, "stable")
    return math.nan if value is None else value


# ---------------------------------------------------------------------------
# lexicographic precision and recall
# ---------------------------------------------------------------------------


def lexi_levels(relevant, rank):
    """f_1 <= ... <= f_m: the ranks at which the ranking reaches each recall level."""
    return tuple(sorted(rank[j] for j in relevant))


def lexi_sgn(fa, fb):
    """+1 when a's sequence of ranks is lexicographically smaller (a reaches the first differing level first)."""
    return 0.0 if fa == fb else (1.0 if fa < fb else -1.0)


def lexi_rr(fa, fb):
    """1/f_i(a) - 1/f_i(b) at the first level i where they differ (1/inf = 0)."""
    for x, y in zip(fa, fb):
        if x != y:
            return (0.0 if x == math.inf else 1.0 / x) - (0.0 if y == math.inf else 1.0 / y)
    return 0.0


def lexi_recall(fa, fb):
    """The same comparison from the last recall level backwards."""
    return lexi_sgn(fa[::-1], fb[::-1])


#: lexicographic precision (sgn, rr) and recall by variant name
LEXI = {"sgn": lexi_sgn, "rr": lexi_rr, "lr": lexi_recall}


def lexi_query(measure, labels, sa, sb, ret_a, ret_b, k, ties, rel=1):
    """One query over its real documents; None when it has no relevant document."""
    relevant = [j for j in range(len(labels)) if labels[j] >= rel]
    if not relevant:
        return None
    fa = lexi_levels(relevant, tie_rule.ranks(sa, labels, ret_a, ties, k))
    fb = lexi_levels(relevant, tie_rule.ranks(sb, labels, ret_b, ties, k))
    return LEXI[measure](fa, fb)
