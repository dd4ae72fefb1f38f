"""trec_eval's measures of counts: set measures, relative precision, precision at multiples of R,
interpolated precision at recall levels, utility, binary G, and the measures of judged documents
(bpref, unjudged documents in the top k, judged non-relevant documents retrieved, RBP's residual).

Each is a function of the relevance of the retrieved documents in trec_eval's rank order
(:class:`rankjit.io.AlignedRun`, already ranked) and the number of relevant documents R:
no ranking is needed beyond the alignment's, and each is computed for every query at
once with numpy over the ragged (CSR) layout.  The definitions are trec_eval 10.0's
(``m_set_P.c``, ``m_set_recall.c``, ``m_set_F.c``, ``m_set_map.c``, ``m_set_rel_P.c``,
``m_rel_P.c``, ``m_Rprec_mult.c``, ``m_iprec_at_recall.c``, ``m_11pt_avg.c``,
``m_utility.c``, ``m_bpref.c``, ``m_unjudged.c``, ``m_num_nonrel_judged_ret.c``,
``m_rbp_resid.c``, ``m_binG.c``), restated next to each function; ``docs/cli.md`` lists them.

Notation, per query: ``ret`` retrieved documents, ``R`` relevant judged documents
(retrieved or not), ``rel_ret`` relevant retrieved ones, ``rel(i)`` relevant ones in the
top ``i``.  A value with a zero denominator is 0, as trec_eval leaves it.
"""
from __future__ import annotations

import numpy as np


class RankedRelevance:
    """Relevance of the retrieved documents of every query, in rank order.

    ``relevant``: bool per ranked document; ``offsets``: CSR offsets of the queries;
    ``num_rel``: R per query; ``judged`` (bool per ranked document, for the measures of
    judged documents): judged with a grade >= 0; ``num_nonrel``: judged non-relevant
    documents per query, retrieved or not.
    """

    def __init__(self, relevant, offsets, num_rel, judged=None, num_nonrel=None):
        self.judged = judged
        self.num_nonrel = num_nonrel
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.num_ret = np.diff(self.offsets)
        self.num_rel = np.asarray(num_rel, dtype=np.int64)
        # cum[p]: relevant documents before flat position p; rel(i) of query q = cum[off_q + i] - cum[off_q]
        self._cum = np.zeros(len(relevant) + 1, dtype=np.int64)
        np.cumsum(relevant, out=self._cum[1:])
        self.relevant = np.asarray(relevant, dtype=bool)
        self.rel_ret = self.rel_at(self.num_ret)

    def rel_at(self, i):
        """rel(i): relevant documents in the top ``i`` (per query; ``i`` beyond ``ret`` counts them all)."""
        depth = np.minimum(np.asarray(i, dtype=np.int64), self.num_ret)
        return self._cum[self.offsets[:-1] + depth] - self._cum[self.offsets[:-1]]

    def best_precision_from(self):
        """Per relevant retrieved document j (1-based within its query), ``max_{j' >= j} j' / rank(j')``.

        Returns ``(values, first)``: the values of query q's relevant documents are
        ``values[first[q]:first[q + 1]]``, in rank order.  trec_eval's interpolated
        precision at the j-th relevant document: precision only rises at a relevant
        document, so the maximum over every rank from there on is one over relevant ones.
        """
        at = np.flatnonzero(self.relevant)
        query = np.searchsorted(self.offsets, at, side="right") - 1
        j = self._cum[at + 1] - self._cum[self.offsets[query]]  # its number among its query's relevant ones
        precision = j / (at - self.offsets[query] + 1)  # j / rank
        # maximum from each position to the end of its query: the running maximum of the reversed
        # values, each query lifted above the ones after it.  On the values' ranks (integers), so
        # that the lift is exact: the maxima are then read back from the sorted values
        n = precision.shape[0]
        order = np.argsort(precision, kind="stable")
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        lift = n * (query.max(initial=0) - query[::-1])
        values = precision[order][np.maximum.accumulate(rank[::-1] + lift) - lift][::-1]
        first = np.zeros(len(self.num_ret) + 1, dtype=np.int64)
        np.cumsum(self.rel_ret, out=first[1:])
        return values, first


def _ratio(num, den):
    """``num / den`` where ``den > 0``, else 0 (trec_eval leaves such a value at 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def set_p(r):
    """``set_P = rel_ret / ret``."""
    return _ratio(r.rel_ret, r.num_ret)


def set_recall(r):
    """``set_recall = rel_ret / R``."""
    return _ratio(r.rel_ret, r.num_rel)


def set_map(r):
    """``set_map = rel_ret^2 / (ret * R)`` (set precision times set recall)."""
    return _ratio(r.rel_ret.astype(np.float64) ** 2, r.num_ret.astype(np.float64) * r.num_rel)


def set_relative_p(r):
    """``set_relative_P = rel_ret / min(ret, R)``."""
    return _ratio(r.rel_ret, np.minimum(r.num_ret, r.num_rel))


def set_f(r, beta):
    """``set_F = (beta + 1) P R / (beta P + R)``, P and R the set precision and recall, when rel_ret > 0.

    trec_eval's parameter (``set_F.0.5``) multiplies P as it is given: it is beta, not
    beta squared, in this formula.
    """
    p, rec = set_p(r), set_recall(r)
    return np.where(r.rel_ret > 0, _ratio((beta + 1.0) * p * rec, beta * p + rec), 0.0)


def relative_p(r, k):
    """``relative_P@k = rel(k) / min(k, R)`` (0 when R = 0)."""
    return _ratio(r.rel_at(k), np.minimum(k, r.num_rel))


def rprec_mult(r, mult):
    """Precision at ``c = (long)(mult * R + 0.9)`` documents: ``rel(c) / c`` (0 when c = 0).

    Past the end of the ranking ``rel(c) = rel_ret`` (the missing documents count as not
    relevant).
    """
    c = (mult * r.num_rel.astype(np.float64) + 0.9).astype(np.int64)  # C's (long) cast: toward 0
    return _ratio(r.rel_at(c), c)


def _lround(x):
    """C's ``lround`` for x >= 0: halves away from zero (numpy's ``round`` goes to even)."""
    low = np.floor(x)
    return (low + (x - low >= 0.5)).astype(np.int64)


def iprec_at_recall(r, level, best=None):
    """Interpolated precision at recall ``level``: ``max_{i >= i_c} rel(i) / i``.

    ``c = lround(level * R)`` relevant documents, ``i_c`` the rank of the c-th relevant
    retrieved one (of the first for c = 0); 0 when fewer than c are retrieved; when none
    is, ``rel_ret / ret`` (0) for c = 0.  ``best``: :meth:`RankedRelevance.best_precision_from`.
    """
    values, first = r.best_precision_from() if best is None else best
    c = _lround(level * r.num_rel.astype(np.float64))
    reached = (c <= r.rel_ret) & (r.rel_ret > 0)
    at = first[:-1] + np.maximum(c, 1) - 1
    out = np.zeros(len(r.num_ret))
    out[reached] = values[at[reached]]
    return out


def eleven_pt_avg(r, levels):
    """The mean of :func:`iprec_at_recall` over ``levels`` (0.0, 0.1, ..., 1.0 by default)."""
    best = r.best_precision_from()
    return np.mean([iprec_at_recall(r, level, best) for level in levels], axis=0)


def utility(r, a, b, c, d, num_docs=0):
    """``a rel_ret + b (ret - rel_ret) + c (R - rel_ret) + d (N + rel_ret - ret - R)``.

    N is the size of the collection (trec_eval's ``-N``, 0 when not given).
    """
    ret, rel, rel_ret = (x.astype(np.float64) for x in (r.num_ret, r.num_rel, r.rel_ret))
    return a * rel_ret + b * (ret - rel_ret) + c * (rel - rel_ret) + d * (num_docs + rel_ret - ret - rel)


def _per_query(values, r):
    """Sum of per-document ``values`` over each query's retrieved documents."""
    query = np.repeat(np.arange(len(r.num_ret)), r.num_ret)
    return np.bincount(query, weights=values, minlength=len(r.num_ret))


def _before(flags, r):
    """Per ranked document: how many documents of its query above it have ``flags``."""
    cum = np.zeros(len(flags) + 1, dtype=np.int64)
    np.cumsum(flags, out=cum[1:])
    start = np.repeat(cum[r.offsets[:-1]], r.num_ret)
    return cum[:-1] - start


def bpref(r):
    """``bpref = (1/R) sum_{relevant retrieved d} (1 - min(n_d, R) / min(N, R))``.

    ``n_d``: judged non-relevant documents ranked above d (1 for d when ``n_d = 0``),
    ``N``: the query's judged non-relevant documents, retrieved or not.  Unjudged
    documents (not in the qrels, or judged below 0) take no part.
    """
    nonrel = r.judged & ~r.relevant
    above = _before(nonrel, r).astype(np.float64)
    cap = np.repeat(np.minimum(r.num_nonrel, r.num_rel), r.num_ret).astype(np.float64)
    rel_q = np.repeat(r.num_rel, r.num_ret).astype(np.float64)
    share = 1.0 - _ratio(np.minimum(above, rel_q), cap)  # cap > 0 wherever above > 0
    return _ratio(_per_query(np.where(r.relevant, np.where(above > 0, share, 1.0), 0.0), r), r.num_rel)


def num_nonrel_judged_ret(r):
    """Retrieved documents judged (grade >= 0) and not relevant."""
    return _per_query((r.judged & ~r.relevant).astype(np.float64), r).astype(np.int64)


def unjudged_at(r, k):
    """``unj@k``: unjudged documents in the top k, over k (past the ranking: over k still)."""
    unjudged = ~r.judged
    cum = np.zeros(len(unjudged) + 1, dtype=np.int64)
    np.cumsum(unjudged, out=cum[1:])
    depth = np.minimum(k, r.num_ret)
    return (cum[r.offsets[:-1] + depth] - cum[r.offsets[:-1]]) / k


def rbp_residual(r, p):
    """``p^n + (1 - p) sum_{unjudged i} p^(i-1)`` over the n retrieved documents; 0 when none is unjudged.

    (trec_eval writes the value only when some document is unjudged: a fully judged
    ranking gets 0, not ``p^n``.)
    """
    rank = np.arange(len(r.judged)) - np.repeat(r.offsets[:-1], r.num_ret)  # 0-based
    unjudged = ~r.judged
    weight = _per_query(np.where(unjudged, np.power(p, rank.astype(np.float64)), 0.0), r)
    value = np.power(p, r.num_ret.astype(np.float64)) + (1.0 - p) * weight
    return np.where(_per_query(unjudged.astype(np.float64), r) > 0, value, 0.0)


def bin_g(r):
    """``binG = (1/R) sum_{relevant retrieved d} 1 / log2(2 + non-relevant documents above d)``.

    (m_binG.c writes ``log2(3 + i - rel(i + 1))`` for the document at 0-based rank i: the
    same count.)  0 when no relevant document is retrieved.
    """
    nonrel_above = _before(~r.relevant, r).astype(np.float64)
    return _ratio(_per_query(np.where(r.relevant, 1.0 / np.log2(2.0 + nonrel_above), 0.0), r), r.num_rel)
