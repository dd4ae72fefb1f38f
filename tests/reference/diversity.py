"""Plain-Python references for the intent-aware (diversity) measures, loop by loop from their definitions.

A query is the nugget sets of its real documents (``sets[j]``: the subtopics document ``j``
holds) and their scores; the documents are ranked by :mod:`reference.ties`, with the
number of nuggets as tie label.  ndeval's conventions (bounds, cutoffs) are stated next
to each measure.
"""
from __future__ import annotations

import math
from collections import defaultdict

from reference import ties as tie_rule

def nugget_gains(ranked_sets, alpha):
    """G[r] = sum_i J(d_r, i) (1 - alpha)^{c_i}, c_i = documents above r holding nugget i."""
    seen = defaultdict(int)
    out = []
    for s in ranked_sets:
        g = 0.0
        for i in sorted(s):
            g += (1.0 - alpha) ** seen[i]
        for i in s:
            seen[i] += 1
        out.append(g)
    return out


def greedy_ideal_order(cands, alpha, depth):
    """Greedy ideal: repeatedly take the largest remaining gain, ties to the lowest index."""
    remaining = list(range(len(cands)))
    seen = defaultdict(int)
    order = []
    for _ in range(min(depth, len(cands))):
        best, best_g = None, None
        for j in remaining:
            g = sum((1.0 - alpha) ** seen[i] for i in sorted(cands[j]))
            if best is None or g > best_g:
                best, best_g = j, g
        remaining.remove(best)
        for i in cands[best]:
            seen[i] += 1
        order.append(cands[best])
    return order


def dcg(gains):
    return sum(g / math.log2(r + 2) for r, g in enumerate(gains))


def err_ia(ranked_sets, alpha, topics):
    """(1/S) sum_i sum_r (1/r) alpha J(d_r, i) prod_{j<r} (1 - alpha J(d_j, i))."""
    total = 0.0
    for i in topics:
        stay = 1.0
        e = 0.0
        for r, s in enumerate(ranked_sets, start=1):
            j = 1.0 if i in s else 0.0
            e += stay * alpha * j / r
            stay *= 1.0 - alpha * j
        total += e
    return total / len(topics)


BETA = 0.7  # NRBP's patience in the property tests (differs from alpha on purpose)


def nrbp_sum(gains, beta):
    """sum_r G[r] beta^{r-1}."""
    return sum(g * beta ** r for r, g in enumerate(gains))


def query(kind, sets, scores, k, alpha, ties, ideal_sets=None, empty=0.0):
    """One query: sets = nugget sets of the row's real documents (row order)."""
    order = tie_rule.order(scores, [len(s) for s in sets], ties)
    depth = len(order) if k is None else min(k, len(order))
    ranked = [sets[j] for j in order[:depth]]
    cands = ideal_sets if ideal_sets is not None else sets
    topics = set().union(*sets, *(ideal_sets or []))
    if kind == "alpha_dcg":
        return dcg(nugget_gains(ranked, alpha))
    if kind == "alpha_ndcg":
        idepth = len(cands) if k is None else k
        ideal = dcg(nugget_gains(greedy_ideal_order(cands, alpha, idepth), alpha))
        return dcg(nugget_gains(ranked, alpha)) / ideal if ideal > 0 else empty
    if kind == "nnrbp":
        idepth = len(cands) if k is None else k
        ideal = nrbp_sum(nugget_gains(greedy_ideal_order(cands, alpha, idepth), alpha), BETA)
        return nrbp_sum(nugget_gains(ranked, alpha), BETA) / ideal if ideal > 0 else empty
    if not topics:
        return empty
    kb = len(order) if k is None else k  # the cutoff of a bound / of P-IA's denominator
    if kind == "alpha_dcg_bound":
        # ndeval: alpha-DCG / alpha-DCG of a list whose every document holds every subtopic
        bound = sum(len(topics) * (1 - alpha) ** (r - 1) / math.log2(r + 1) for r in range(1, kb + 1))
        return dcg(nugget_gains(ranked, alpha)) / bound if kb else 0.0
    if kind == "err_ia_bound":
        bound = sum(len(topics) * (1 - alpha) ** (r - 1) / r for r in range(1, kb + 1))
        return sum(g / r for r, g in enumerate(nugget_gains(ranked, alpha), start=1)) / bound if kb else 0.0
    if kind == "p_ia":
        return sum(len(s) for s in ranked) / (kb * len(topics)) if kb else 0.0
    if kind == "ap_ia":
        total = 0.0
        for i in topics:
            n_rel = sum(1 for s in cands if i in s)
            hits, ap = 0, 0.0
            for r, s in enumerate(ranked, start=1):
                if i in s:
                    hits += 1
                    ap += hits / r
            total += ap / n_rel
        return total / len(topics)
    if kind == "nrbp":
        return (1 - (1 - alpha) * BETA) / len(topics) * nrbp_sum(nugget_gains(ranked, alpha), BETA)
    if kind == "err_ia":
        return err_ia(ranked, alpha, topics)
    if kind == "nerr_ia":
        idepth = len(cands) if k is None else k
        ideal = err_ia(greedy_ideal_order(cands, alpha, idepth), alpha, topics)
        return err_ia(ranked, alpha, topics) / ideal if ideal > 0 else empty
    if kind == "s_recall":
        return len(set().union(*ranked)) / len(topics)
    raise AssertionError(kind)
