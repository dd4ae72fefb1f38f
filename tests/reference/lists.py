"""Plain-Python reference implementation of rankjit's list measures.

Written loop by loop from the definitions in issue 2 and
``/work/shared/reference/semantics.md`` -- deliberately *not* from the kernels:

* one query is a pair of Python lists ``labels`` / ``scores`` holding only its real
  documents, in input order;
* documents are ranked by score, descending; equal scores are ordered by the tie
  rule of :mod:`reference.ties`, with the grade as tie label; ``ties="average"`` is
  the exact expectation over every order of tied documents, by brute force.  Keep
  tie groups small.

Every measure is a function of the ranked label sequence plus per-row facts (the
row's labels for R and the ideal DCG, or ``n_relevant`` / ``ideal_counts``).
"""
from __future__ import annotations

import math

import numpy as np

from reference import cwl
from reference import ties as tie_rule
from reference.ties import order as ties_rank
from reference.ties import MAX_ARRANGEMENTS, average_rankings, n_arrangements  # noqa: F401 (ref.* in tests)

FAMILIES = ("P", "R", "Success", "RR", "AP", "Rprec", "DCG", "nDCG", "ERR", "pFound", "RBP", "SetP", "SetR", "SetF",
            "SetAP", "SetRelP", "IPrec", "NumQ", "NumRet", "NumRel", "NumRelRet", "Judged", "RBPResidual", "Bpref",
            "infAP", "SDCG", "INSQ", "INST", "BPM", "NERR8", "NERR9", "NERR10", "NERR11", "Compat", "Accuracy")
#: the C/W/L measures (reference.cwl): without a cutoff, the families that take one read cwl_eval's 1000 ranks
CWL_FAMILIES = ("SDCG", "INSQ", "INST", "BPM", "NERR8", "NERR9", "NERR10", "NERR11")
EMPTY = {"zero": 0.0, "one": 1.0, "nan": math.nan}


def rank(labels, scores, ties="pessimistic"):
    """Indices of the documents in rank order (rank 1 first): the grade is the tie label."""
    return tie_rule.order(scores, labels, ties)

# ---------------------------------------------------------------------------------------
# value mappings


class GainMap(dict):
    """``{grade: gain}`` whose missing grades are their own gain."""

    def __getitem__(self, grade):
        return dict.get(self, grade, grade)


def gain_value(y, gain):
    if _is_unjudged(y):  # an unjudged document gains nothing, whatever grade 0 gains
        return 0.0
    if isinstance(gain, str):
        if gain == "exp2":
            return 2.0 ** float(y) - 1.0
        if gain == "linear":
            return float(y)
        raise ValueError(gain)
    return float(gain[int(y)])


def discount_value(r, discount, base=2.0):
    """Weight of 1-based rank r."""
    if isinstance(discount, str):
        if discount == "log2":
            return 1.0 / math.log2(r + 1)
        if discount == "zipf":
            return 1.0 / r
        if discount == "logb":
            # 1 for r < b, then 1 / log_b(r) = ln(b) / ln(r)
            return 1.0 if r < base else math.log(base) / math.log(r)
        raise ValueError(discount)
    return float(discount[r - 1]) if r - 1 < len(discount) else 0.0


def grade_probability(y, *, max_grade=4, probabilities=False, prel=None):
    """R(y) of ERR / pRel of pFound (an unjudged document: 0)."""
    if _is_unjudged(y):
        return 0.0
    if prel is not None:
        return float(prel[int(y)])
    if probabilities:
        return float(y)
    return (2.0 ** float(y) - 1.0) / 2.0 ** max_grade


# ---------------------------------------------------------------------------------------
# measures on a ranked label sequence


def _cut(n, k):
    return n if k is None else min(k, n)


def _relevant_total(row_labels, rel, n_relevant, ideal_counts):
    if n_relevant is not None:
        return int(n_relevant)
    if ideal_counts is not None:
        return sum(int(c) for g, c in enumerate(ideal_counts) if g >= rel)
    return sum(1 for y in row_labels if y >= rel)


def _dcg(ranked, k, gain, discount, base):
    return math.fsum(gain_value(ranked[r - 1], gain) * discount_value(r, discount, base)
                     for r in range(1, _cut(len(ranked), k) + 1))


def measure_on_ranking(family, ranked, row_labels, k=None, *, rel=None, empty=None, n_relevant=None,
                       ideal_counts=None, denominator="r", gain=None, discount="log2", base=2.0,
                       max_grade=4, utility="reciprocal", probabilities=False, p_break=0.15, prel=None, p=None,
                       scale="query", relative=False, beta=1.0, recall=None, rounding="trec_eval9", dcg=None,
                       gains=None, min_rel=0, max_rel=None, T=1.0, normalize=True, ranked_scores=None,
                       all_judged="tail"):
    """Value of one measure for a ranked label sequence ``ranked`` (rank 1 first).

    ``rel``, ``gain`` and ``p`` default to the family's own defaults (``rel=1`` for the binary
    measures; ``gain="linear"`` for DCG / nDCG and RBP: the conventions of trec_eval and
    ir_measures; ``p=0.8`` for RBP, 0.9 for NERR10).  The C/W/L families are
    :mod:`reference.cwl`'s, a missing cutoff being cwl_eval's horizon of 1000 ranks.  ``empty``
    defaults to "nan" for Accuracy (no pair: undefined), "zero" for the others; ``ranked_scores``
    (the scores in rank order) are read by Compat alone (None: all >= 0).  RBPResidual reads
    ``ranked`` as judged (any value) or unjudged (None).
    """
    n = len(ranked)
    top = _cut(n, k)
    empty_v = EMPTY[empty if empty is not None else "nan" if family == "Accuracy" else "zero"]
    if family == "Compat":  # (an unjudged document is not relevant: as grade 0)
        ranked = [0 if _is_unjudged(y) else y for y in ranked]
        return compat_on_ranking(ranked, ranked_scores, 0.95 if p is None else p, normalize, empty_v, ideal_counts)
    if family == "Accuracy":
        return accuracy_on_ranking(ranked[:top], 1 if rel is None else rel, empty_v)
    if family in CWL_FAMILIES:
        return cwl_measure(family, ranked, k, min_rel=min_rel, max_rel=max_rel, T=T, p=0.9 if p is None else p,
                           dcg="log2" if dcg is None else dcg)
    p = 0.8 if p is None else p
    if family == "RBPResidual":  # ranked: None where unjudged; all_judged="zero" is trec_eval's rbp_resid
        return rbp_residual_on_ranking(ranked, p, k=k, zero_if_all_judged=all_judged == "zero")
    if family == "RBP":
        if rel is not None:  # binary gains
            return rbp_on_ranking(ranked, p, rel=rel, k=k)
        gain = "linear" if gain is None else gain
        if scale == "none":
            return rbp_on_ranking(ranked, p, gain=gain, k=k)
        # scale="query": gains over the top gain of the query's judged documents (0 when not above 0)
        judged = [g for g, c in enumerate(ideal_counts) if c > 0] if ideal_counts is not None else list(row_labels)
        value = (lambda y: float(y)) if isinstance(gain, str) else (lambda y: float(gain[int(y)]))
        top = max((value(y) for y in judged), default=0.0)
        if top <= 0.0:
            return 0.0
        if isinstance(gain, str):
            return rbp_on_ranking([None if _is_unjudged(y) else y / top for y in ranked], p, gain="linear", k=k)
        return rbp_on_ranking(ranked, p, gain=[x / top for x in gain], k=k)
    rel_given = rel
    rel = 1 if rel is None else rel
    gain = "linear" if gain is None else gain
    if dcg is not None:  # ir_measures' spelling: 'log2' = linear gain, 'exp-log2' = 2^y - 1 (log2 discount either way)
        gain = {"log2": "linear", "exp-log2": "exp2"}[dcg]
    if gains is not None:  # {grade: gain}; a grade it does not name keeps its own value (trec_eval's ndcg.g=v)
        gain = GainMap(gains)
    is_rel = [not _is_unjudged(y) and y >= rel for y in ranked]  # an unjudged document is never relevant

    if family == "P":
        hits = sum(is_rel[:top])
        if k is None:
            return hits / n if n else 0.0
        return hits / k
    if family == "R":
        R = _relevant_total(row_labels, rel, n_relevant, ideal_counts)
        if R == 0:
            return empty_v
        return sum(is_rel[:top]) / R
    if family == "Success":
        return 1.0 if any(is_rel[:top]) else 0.0
    if family == "RR":
        for r in range(1, top + 1):
            if is_rel[r - 1]:
                return 1.0 / r
        return 0.0
    if family == "AP":
        R = _relevant_total(row_labels, rel, n_relevant, ideal_counts)
        if k is None or denominator == "r":
            D = R
        elif denominator == "min_k_r":
            D = min(k, R)
        else:
            raise ValueError(denominator)
        if D == 0:
            return empty_v
        total = 0.0
        hits = 0
        for r in range(1, top + 1):
            if is_rel[r - 1]:
                hits += 1
                total += hits / r  # rel_r * P@r
        return total / D
    if family == "Rprec":
        R = _relevant_total(row_labels, rel, n_relevant, ideal_counts)
        if R == 0:
            return empty_v
        return sum(is_rel[: min(R, n)]) / R
    if family == "NumQ":
        return 1.0
    if family == "NumRet":  # every document of the row, or those with label >= rel
        return float(n if rel_given is None else sum(not _is_unjudged(y) and y >= rel_given for y in ranked))
    if family == "NumRelRet":
        return float(sum(is_rel))
    if family == "NumRel":
        return float(_relevant_total(row_labels, rel, n_relevant, ideal_counts))
    if family in ("SetP", "SetR", "SetF", "SetAP", "SetRelP"):  # the row as a set: trec_eval's set_* definitions
        rel_ret = sum(is_rel)
        if family == "SetP" and not relative:
            return rel_ret / n if n else 0.0
        R = _relevant_total(row_labels, rel, n_relevant, ideal_counts)
        if R == 0:
            return empty_v
        if n == 0:
            return 0.0
        if family == "SetR":
            return rel_ret / R
        if family == "SetAP":
            return (rel_ret / n) * (rel_ret / R)
        if family in ("SetRelP", "SetP"):
            return rel_ret / min(n, R)
        if rel_ret == 0:
            return 0.0
        P, Rc = rel_ret / n, rel_ret / R
        return (beta + 1) * P * Rc / (beta * P + Rc)
    if family == "IPrec":  # the highest precision at any rank whose recall reaches the level
        R = _relevant_total(row_labels, rel, n_relevant, ideal_counts)
        if R == 0:
            return empty_v
        # relevant documents at the level: trec_eval 9 adds 0.9 and truncates; trec_eval 10 uses C's lround
        need = math.floor(recall * R + (0.9 if rounding == "trec_eval9" else 0.5))
        best = 0.0
        hits = 0
        for r in range(1, n + 1):
            hits += is_rel[r - 1]
            if hits >= need and hits > 0:
                best = max(best, hits / r)
        return best
    if family == "DCG":
        return _dcg(ranked, k, gain, discount, base)
    if family == "nDCG":
        if ideal_counts is not None:
            judged = []
            for g, c in enumerate(ideal_counts):
                judged += [g] * int(c)
        else:
            judged = list(row_labels)
        ideal = sorted(judged, key=lambda y: gain_value(y, gain), reverse=True)
        idcg = _dcg(ideal, k, gain, discount, base)
        if idcg == 0:
            return empty_v
        return _dcg(ranked, k, gain, discount, base) / idcg
    if family == "ERR":
        total = []
        p_continue = 1.0  # prod_{i<r} (1 - R_i)
        for r in range(1, top + 1):
            R_r = grade_probability(ranked[r - 1], max_grade=max_grade, probabilities=probabilities)
            u = 1.0 / r if utility == "reciprocal" else 1.0 / math.log2(r + 1)
            total.append(u * R_r * p_continue)
            p_continue *= 1.0 - R_r
        return math.fsum(total)
    if family == "pFound":
        total = []
        p_look = 1.0
        prev = None
        for r in range(1, top + 1):
            if r > 1:
                p_look = p_look * (1.0 - prev) * (1.0 - p_break)
            R_r = grade_probability(ranked[r - 1], max_grade=max_grade, probabilities=probabilities, prel=prel)
            total.append(p_look * R_r)
            prev = R_r
        return math.fsum(total)
    raise ValueError(f"unknown family {family!r}")


def rbo(ranking, ideal, p, depth):
    """Rank-biased overlap of two lists of document ids to ``depth``: ``sum_{i<depth} p^i |A_i| / (i + 1)``
    over ``sum_{i<depth} p^i``, ``A_i`` the documents in the first ``i + 1`` of both (0 when ``depth`` is 0)."""
    num, den = [], []
    for i in range(depth):
        common = set(ranking[: i + 1]) & set(ideal[: i + 1])
        num.append(p**i * len(common) / (i + 1))
        den.append(p**i)
    return math.fsum(num) / math.fsum(den) if depth else 0.0


def compat_on_ranking(ranked, ranked_scores, p, normalize, empty_v, ideal_counts=None):
    """Compat (Clarke, Vtyurina & Smucker 2021) of a ranked label sequence, from its definition.

    Documents are the ranks ``0 .. n-1``, plus, with ``ideal_counts``, the query's relevant
    documents the ranking lacks (``ideal_counts[g]`` minus the ranking's documents of grade g).
    The ideal holds the relevant ones (grade > 0) by grade, descending; within a grade by
    score, descending, an unretrieved document scoring 0.0 (ir_measures) and placed after the
    retrieved ones scoring exactly 0; equal scores in rank order.  Compat is the RBO of the
    ranking and the ideal to depth max(n, R), over the ideal's RBO with itself when
    ``normalize`` (``empty_v`` when R = 0).
    """
    n = len(ranked)
    scores = [1.0] * n if ranked_scores is None else [float(s) for s in ranked_scores]
    docs = [(y, s, 0, r) for r, (y, s) in enumerate(zip(ranked, scores))]  # (grade, score, unretrieved, rank)
    if ideal_counts is not None:
        for g, c in enumerate(ideal_counts):
            if g > 0:
                docs += [(g, 0.0, 1, len(docs) + t) for t in range(int(c) - sum(1 for y in ranked if y == g))]
    ideal = [d[3] for d in sorted((d for d in docs if d[0] > 0), key=lambda d: (-d[0], -d[1], d[2], d[3]))]
    ranking = list(range(n))
    depth = max(n, len(ideal))
    if not normalize:
        return rbo(ranking, ideal, p, depth)
    if not ideal:
        return empty_v
    return rbo(ranking, ideal, p, depth) / rbo(ideal, ideal, p, depth)


def accuracy_on_ranking(top, rel, empty_v):
    """Accuracy of the top of a ranking: of the pairs (a relevant document, a non-relevant one), the
    share with the relevant one ranked above; ``empty_v`` without a pair."""
    right = wrong = 0
    relevant = [not _is_unjudged(y) and y >= rel for y in top]  # (an unjudged document is not relevant)
    for i, a in enumerate(relevant):
        for b in relevant[i + 1:]:
            if a != b:  # one of each
                right += a
                wrong += b
    return right / (right + wrong) if right + wrong else empty_v


def cwl_measure(family, ranked, k=None, *, max_rel, min_rel=0, T=1.0, p=0.9, dcg="log2"):
    """A C/W/L measure of :mod:`reference.cwl` on ``ranked``; ``k=None``: the whole horizon (1000 ranks)."""
    k = cwl.HORIZON if k is None else k
    if family == "SDCG":
        return cwl.sdcg(ranked, k, max_rel, min_rel, dcg=dcg)
    if family == "BPM":
        return cwl.bpm(ranked, k, max_rel, min_rel, T=T)
    if family in ("NERR8", "NERR9"):
        return getattr(cwl, family.lower())(ranked, k, max_rel, min_rel)
    if family == "NERR10":
        return cwl.nerr10(ranked, max_rel, min_rel, p=p)
    return getattr(cwl, family.lower())(ranked, max_rel, min_rel, T=T)  # INSQ, INST, NERR11


def harness_judged(label, score):
    """The judged flag the common tests give each document: relevant ones, and the others scored >= 0."""
    return bool(label > 0 or score >= 0)


def measure(family, labels, scores, k=None, ties="pessimistic", judged=None, unjudged_none=False, **params):
    """Reference value of one measure for one query (lists of its real documents).

    ``judged``: the judged flags (Judged@k, Bpref, infAP); by default :func:`harness_judged`'s.
    ``unjudged_none=True`` (``rankjit.evaluate`` with ``judged=``): in every other measure too,
    a document not judged is unjudged (``None``): it gains nothing and is never relevant,
    whatever grade 0 is worth, it is left out of the row's R and ideal, and among equal
    scores it ranks below grade 0 (tie label -1).
    """
    labels = [lab.item() if hasattr(lab, "item") else lab for lab in labels]
    scores = [float(s) for s in scores]
    if family == "Judged":  # P@k of the judged flags, ranked as labels under the tie rule
        flags = [int(harness_judged(y, s)) for y, s in zip(labels, scores)] if judged is None else list(judged)
        p_at_k = measure("P", flags, scores, k, ties, rel=1)  # judged in the top k, over k
        n = len(flags)
        return p_at_k * k / min(k, n) if k is not None and n else p_at_k  # over min(k, n), as ir_measures
    if family == "RBPResidual":  # the unjudged documents read (ranked as labels: the flags) and the tail
        flags = [int(harness_judged(y, s)) for y, s in zip(labels, scores)] if judged is None else list(judged)
        def residual(ranked_flags):
            ranked = [None if f == 0 else 1 for f in ranked_flags]  # None: unjudged
            return measure_on_ranking("RBPResidual", ranked, ranked, k, **params)

        if ties == "average":  # the mean over the orders of tied documents
            parts = [(w * residual(ranked), w) for ranked, w in average_rankings(flags, scores)]
            return math.fsum(v for v, _ in parts) / sum(w for _, w in parts)
        return residual([flags[i] for i in rank(flags, scores, ties)])
    if family in ("Bpref", "infAP"):
        flags = [harness_judged(y, s) for y, s in zip(labels, scores)] if judged is None else list(judged)
        return judgments_measure(family, labels, scores, flags, ties=ties, **params)
    row = labels
    tie_labels = labels
    if unjudged_none:
        flags = [harness_judged(y, s) for y, s in zip(labels, scores)] if judged is None else list(judged)
        row = [y for y, f in zip(labels, flags) if f]
        tie_labels = [y if f else -1 for y, f in zip(labels, flags)]  # -1: unjudged (labels are >= 0)
    if ties == "average":
        if family in ("ERR", "pFound", "IPrec", "INST", "BPM", "NERR8", "NERR9", "NERR10", "NERR11", "Compat",
                      "Accuracy"):
            raise ValueError("the reference has no 'average' for the cascades and IPrec either")
        num = []
        den = 0
        for ranked, w in average_rankings(tie_labels, scores):
            ranked = [None if y == -1 else y for y in ranked]
            v = measure_on_ranking(family, ranked, row, k, **params)
            num.append(w * v)
            den += w
        return math.fsum(num) / den
    order = rank(tie_labels, scores, ties)
    ranked = [None if tie_labels[i] == -1 else labels[i] for i in order]
    if family == "Compat":  # its ideal reads the signs of the scores
        params = dict(params, ranked_scores=[scores[i] for i in order])
    return measure_on_ranking(family, ranked, row, k, **params)


# ---------------------------------------------------------------------------------------
# Bpref (Buckley & Voorhees, SIGIR 2004) and infAP (Yilmaz & Aslam, CIKM 2006), as trec_eval defines them

INFAP_EPSILON = 1e-5


def judgments_measure(family, labels, scores, judged, pooled=None, *, ties="pessimistic", rel=1, empty="zero",
                      n_relevant=None, ideal_counts=None):
    """Bpref or infAP of one query: ``judged`` / ``pooled`` flags per document (pooled: in the pool, judged or not).

    Each document is relevant (judged, label >= rel), judged non-relevant, pooled but
    unjudged, or outside the pool; ties are broken by that class under the tie rule (the
    unjudged first when pessimistic).  R = n_relevant, or the judged grades >= rel of
    ``ideal_counts``, or the row's relevant documents; N (Bpref) = the judged grades < rel
    of ``ideal_counts``, or the row's judged non-relevant documents.
    """
    pooled = [False] * len(labels) if pooled is None else list(pooled)
    klass = [3 if j and y >= rel else 2 if j else 1 if p else 0 for y, j, p in zip(labels, judged, pooled)]
    order = ties_rank(scores, klass, ties)
    if n_relevant is not None:
        R = n_relevant
    elif ideal_counts is not None:
        R = sum(c for g, c in enumerate(ideal_counts) if g >= rel)
    else:
        R = klass.count(3)
    if R == 0:
        return EMPTY[empty]
    if family == "Bpref":
        N = sum(c for g, c in enumerate(ideal_counts) if g < rel) if ideal_counts is not None else klass.count(2)
        total, nonrel_above = 0.0, 0
        for i in order:
            if klass[i] == 3:  # 1 - (judged non-relevant above, at most R) / min(N, R); 1 with none above
                total += 1.0 if nonrel_above == 0 else 1.0 - min(nonrel_above, R) / min(N, R)
            elif klass[i] == 2:
                nonrel_above += 1
        return total / R
    total, r, n, u = 0.0, 0, 0, 0
    for j, i in enumerate(order):  # j: 0-based rank, every document counted
        if klass[i] == 3:
            r += 1
            if j == 0:
                total += 1.0
            else:  # E[precision at this rank]: the rank itself, plus the relevant share of the judged above
                above = r - 1 + n + u  # pooled documents above
                total += 1.0 / (j + 1) + (j / (j + 1)) * (above / j) * (
                    (r - 1 + INFAP_EPSILON) / (r - 1 + n + 2 * INFAP_EPSILON))
        elif klass[i] == 2:
            n += 1
        elif klass[i] == 1:
            u += 1
    return total / R


# ---------------------------------------------------------------------------------------
# batches


def rows_of(labels, scores, *, lengths=None, mask=None, offsets=None):
    """Split a padded (2-D) or ragged (flat + offsets) batch into per-query lists of real docs."""
    labels = np.asarray(labels)
    scores = np.asarray(scores)
    rows = []
    if offsets is not None:
        for q in range(len(offsets) - 1):
            a, b = int(offsets[q]), int(offsets[q + 1])
            rows.append((labels[a:b].tolist(), scores[a:b].tolist()))
        return rows
    for q in range(labels.shape[0]):
        if lengths is not None:
            n = int(lengths[q])
            rows.append((labels[q, :n].tolist(), scores[q, :n].tolist()))
        elif mask is not None:
            m = np.asarray(mask[q], dtype=bool)
            rows.append((labels[q][m].tolist(), scores[q][m].tolist()))
        else:
            rows.append((labels[q].tolist(), scores[q].tolist()))
    return rows


def measure_batch(family, labels, scores, k=None, ties="pessimistic", *, lengths=None, mask=None, offsets=None,
                  n_relevant=None, ideal_counts=None, **params):
    """Reference per-query values (float64 array) of a padded or ragged batch."""
    out = []
    for q, (ys, ss) in enumerate(rows_of(labels, scores, lengths=lengths, mask=mask, offsets=offsets)):
        extra = {}
        if n_relevant is not None:
            extra["n_relevant"] = int(n_relevant[q])
        if ideal_counts is not None:
            extra["ideal_counts"] = [int(c) for c in ideal_counts[q]]
        out.append(measure(family, ys, ss, k, ties, **params, **extra))
    return np.array(out, dtype=np.float64)


# ---------------------------------------------------------------------------------------
# RBP (rank-biased precision, Moffat & Zobel 2008) and its residual
#
# Written from the definition in the paper and from what trec_eval (m_rbp.c, m_rbp_resid.c),
# ir_measures (cwl_eval), trectools and ranx were found to compute; not from any tool's code.
#
# * ``ranked`` is the label sequence in rank order (rank 1 first).  ``None`` (or a
#   float NaN) marks an *unjudged* document: gain 0 in RBP, counted in the residual.
# * negative labels are refused: each tool reads them differently (trec_eval: unjudged
#   for rbp_resid; ir_measures/cwl_eval: clipped to 0; trectools, ranx: non-relevant),
#   so a caller maps them to ``None`` or 0 before calling.
# * ``k`` truncates the ranking at depth d = min(k, n), without renormalising.


def _is_unjudged(y):
    return y is None or (isinstance(y, float) and math.isnan(y))


def _check_p(p):
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"RBP's persistence p must lie in [0, 1], got {p!r}")
    return p


def _depth(n, k):
    if k is not None and k <= 0:
        raise ValueError(f"k must be positive, got {k!r}")
    return _cut(n, k)


def rbp_gains(ranked, *, rel=None, max_grade=None, gain=None):
    """Per-rank gains g_r of RBP (unjudged documents get 0).

    Exactly one convention applies:

    * ``rel`` given: binary, ``g = 1 if y >= rel else 0`` (ir_measures' ``RBP(rel=r)``
      through cwl_eval; the original binary RBP);
    * ``gain`` given: ``g = gain[y]`` (a sequence or mapping indexed by the integer grade),
      used as it is, without normalising; ``gain="linear"`` means ``g = y``
      (ranx's and trectools' graded reading, which can exceed 1);
    * otherwise graded, ``g = y / m`` with ``m = max_grade``; by default ``m`` is the
      largest judged label of ``ranked``, at least 1.  trec_eval's ``rbp`` is this
      rule with ``m = max(1, largest judged grade of the query's qrels, retrieved or
      not)``: pass that as ``max_grade``.  A label above ``max_grade`` is refused.
    """
    if rel is not None and (gain is not None or max_grade is not None):
        raise ValueError("rbp: rel= (binary gain) excludes gain= and max_grade=")
    if gain is not None and max_grade is not None:
        raise ValueError("rbp: gain= excludes max_grade=")
    judged = [y for y in ranked if not _is_unjudged(y)]
    for y in judged:
        if y < 0:
            raise ValueError(f"rbp: negative label {y!r}; map it to None (unjudged) or 0 first")
    if rel is None and gain is None:
        m = max([1] + judged) if max_grade is None else max_grade
        if m <= 0:
            raise ValueError(f"rbp: max_grade must be positive, got {m!r}")
        for y in judged:
            if y > m:
                raise ValueError(f"rbp: label {y!r} above max_grade={m!r}")
    out = []
    for y in ranked:
        if _is_unjudged(y):
            out.append(0.0)
        elif rel is not None:
            out.append(1.0 if y >= rel else 0.0)
        elif gain is not None:
            out.append(float(y) if isinstance(gain, str) and gain == "linear" else float(gain[int(y)]))
        else:
            out.append(float(y) / float(m))
    return out


def rbp_on_ranking(ranked, p, *, rel=None, max_grade=None, gain=None, k=None):
    """RBP of one ranked label sequence.

    ``RBP@k = (1 - p) * sum_{r = 1}^{d} g_r * p^(r - 1)``, ``d = min(k, n)`` (``d = n``
    without ``k``), with the gains ``g_r`` of :func:`rbp_gains` (unjudged: 0).  The
    user reads rank 1 and goes on from rank r to r + 1 with probability ``p``; RBP is the
    expected gain per document read.  With gains in [0, 1] it lies in
    ``[0, 1 - p^d]``; documents beyond the ranking add nothing.
    """
    p = _check_p(p)
    d = _depth(len(ranked), k)
    g = rbp_gains(ranked, rel=rel, max_grade=max_grade, gain=gain)
    return (1.0 - p) * math.fsum(g[r - 1] * p ** (r - 1) for r in range(1, d + 1))


def rbp_residual_on_ranking(ranked, p, *, k=None, max_gain=1.0, zero_if_all_judged=False):
    """Residual of RBP (Moffat & Zobel 2008, section 4): how much RBP could still rise.

    ``resid@k = max_gain * ((1 - p) * sum_{r <= d, y_(r) unjudged} p^(r - 1) + p^d)``,
    ``d = min(k, n)``: the weight of the unjudged documents read, plus the weight
    ``p^d = (1 - p) * sum_{r > d} p^(r - 1)`` of every rank past the evaluated depth,
    all taken at the largest gain ``max_gain`` (1 for gains in [0, 1]).  ``RBP`` and
    ``RBP + resid`` bracket the value that complete judgments to any depth would give.

    ``zero_if_all_judged=True`` reproduces trec_eval's ``rbp_resid``, which reports 0
    (not ``p^d``) when no document of the ranking is unjudged, an empty ranking included.
    """
    p = _check_p(p)
    d = _depth(len(ranked), k)
    unjudged = [r for r in range(1, d + 1) if _is_unjudged(ranked[r - 1])]
    if zero_if_all_judged and not unjudged:
        return 0.0
    return float(max_gain) * math.fsum([(1.0 - p) * p ** (r - 1) for r in unjudged] + [p ** d])
