"""trec_eval's sequential measures: G, ndcg_rel, Rndcg, dcg, ideal_dcg and ndcg with gains by
relevance level, infAP and relstring.

Each function takes an :class:`rankjit.io.AlignedRun` (trec_eval's rank order, after ``-M``;
:meth:`~rankjit.io.AlignedRun.judged_only` for ``-J``) and returns one value per query of
``aligned.qids``, equal to what trec_eval 10.0 computes (``m_G.c``, ``m_ndcg_rel.c``,
``m_Rndcg.c``, ``m_ndcg.c`` (dcg, ideal_dcg, ndcg), ``m_infap.c``, ``m_relstring.c``, with
``form_res_rels.c`` and ``gain_init.c``).  The summary line of the numeric ones is the mean
of the per-query values (added in query order, then divided by the number of queries);
relstring has none.

trec_eval's relevance value of a retrieved document is its grade when the qrels judge it
>= 0, -1 when the qrels do not hold it and -2 when they judge it below 0.  An AlignedRun
tells the three apart (``judged``, ``judged_below_zero``), which matters to relstring ('-' or
'.'), infAP (documents judged below 0 count as pooled, the others are skipped) and gains
given to levels -1 or -2.  ``below_zero=`` overrides ``aligned.judged_below_zero``.

Under ``-c`` trec_eval evaluates a query missing from the run on a stand-in ranking of one
document absent from the qrels (trec_eval.c); the functions do the same (it shows with a
gain given to level -1, and in relstring), unless ``judged_only=True`` says that
``aligned`` is ``aligned.judged_only()`` (``-J``, which drops that document too).

Gains (G, ndcg_rel, Rndcg, dcg, ideal_dcg, ndcg)
------------------------------------------------
trec_eval builds, per query, a list of (level, gain, count): first the ``level=gain``
parameters in the order given, then each level 0 .. L-1 not given (gain = the level),
where L is one more than the query's largest grade >= 0; a level's count (judged documents
of that grade, retrieved or not) goes to the first entry of that level.  The list is
sorted by gain with C's ``qsort`` and a comparison that returns the *difference of the
gains cast to int*: gains less than 1 apart compare equal and differences of 2**31 or more
overflow to a negative number.  A document's gain is that of the first entry of its level
in the sorted list (0 when none).  The ideal ranking takes the entries from the end of the
sorted list back to its start, each repeated ``count`` times, and stops at the first gain
<= 0.  This module builds the same list and sorts it the way glibc's ``qsort`` (a
top-down merge sort) does, so that even the orders of that comparison come out as in
trec_eval.  dcg, ideal_dcg and ndcg sort the same list by gain exactly instead (stable),
unless ``trec_eval_order=True``: the same values whenever that comparison is a true order
(no two gains less than 1 apart, none 2**31 or more apart), DCG's own definition otherwise.

A query whose judgments are all below 0 gets, in trec_eval, the list of levels of the
previous query that had one (``form_res_rels.c`` leaves its counts and L from that query);
so it does here.  (A largest judgment below -1 makes trec_eval crash: no value to match.)
"""
from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["dcg", "g_measure", "ideal_dcg", "infap", "ndcg", "ndcg_rel", "relstring", "rndcg"]

#: trec_eval's INFAP_EPSILON (trec_eval.h)
INFAP_EPSILON = 0.00001
#: Up to this many levels (largest grade + 1) the list of gains is built whole, as
#: trec_eval does; above, only the given levels and the grades the qrels hold are listed
#: (the same values whenever the gain comparison is a true order: no two gains closer
#: than 1 apart, none 2**31 apart).  trec_eval itself spends L**2 steps per query there.
DENSE_LEVELS = 4096

_G, _NDCG_REL, _RNDCG, _DCG = 0, 1, 2, 3
_INT_MIN = -(2**31)


def _rel_values(aligned, below_zero):
    """trec_eval's relevance value of each ranked document (grade, -1 not in the qrels, -2 judged < 0)."""
    unjudged = np.full(aligned.labels.shape[0], -1, dtype=np.int64)
    if below_zero is None:
        below_zero = aligned.judged_below_zero  # from align(); None for an AlignedRun made by hand
    if below_zero is not None:
        below_zero = np.asarray(below_zero, dtype=bool)
        if below_zero.shape != aligned.labels.shape:
            raise ValueError(f"below_zero must hold one flag per ranked document ({aligned.labels.shape[0]}), "
                             f"got shape {below_zero.shape}")
        unjudged[below_zero] = -2
    return np.where(aligned.judged, aligned.labels, unjudged)


def _ranked(aligned, below_zero, judged_only):
    """``(offsets, rel, codes)`` of the ranked documents, with trec_eval's stand-in document.

    trec_eval ``-c`` evaluates a query missing from the run on a ranking of one document
    absent from the qrels ("ceci_nest_pas_un_docno", relevance value -1), then resets
    some of the values (trec_eval.c); under ``-J`` that document is dropped as well, and under
    ``-M 0`` (cut like any ranking).  ``-M 0`` shows as a query of the run left without a
    document, which no other option gives without ``-J``.
    """
    rel = _rel_values(aligned, below_zero)
    offsets = np.asarray(aligned.offsets, dtype=np.int64)
    codes = np.asarray(aligned.grade_codes)
    in_run = np.asarray(aligned.in_run, dtype=bool)
    missing = np.flatnonzero(~in_run)
    if judged_only or missing.shape[0] == 0 or (np.diff(offsets)[in_run] == 0).any():
        return offsets, rel, codes
    at = offsets[missing]  # the query is empty: its stand-in goes at its start
    added = np.zeros(offsets.shape[0] - 1, dtype=np.int64)
    added[missing] = 1
    new_offsets = offsets.copy()
    new_offsets[1:] += np.cumsum(added)
    return new_offsets, np.insert(rel, at, -1), np.insert(codes, at, 0)


# ---- infAP -------------------------------------------------------------------------------


def _query_of_docs(offsets):
    n_q = offsets.shape[0] - 1
    return np.repeat(np.arange(n_q), np.diff(offsets))


def _before_inclusive(flags, offsets):
    """Per ranked document: documents of its query up to and including it that have ``flags``."""
    cum = np.zeros(flags.shape[0] + 1, dtype=np.int64)
    np.cumsum(flags, out=cum[1:])
    return cum[1:] - np.repeat(cum[offsets[:-1]], np.diff(offsets))


def infap(aligned, *, below_zero=None):
    """trec_eval's ``infAP`` (m_infap.c), per query.

    Walking down the ranking, documents absent from the qrels are skipped (they still
    take their rank); documents judged below 0 count as pooled but unjudged; judged ones
    are relevant (grade >= ``-l``) or not.  At the relevant document of 0-based rank j
    (the r-th relevant one, after n judged non-relevant and u pooled unjudged documents)
    the sum gains 1 for j = 0, else
    ``1/(j+1) + (j/(j+1)) * ((r-1+n+u)/j) * ((r-1+eps)/(r-1+n+2 eps))``, eps = 1e-5.
    infAP is the sum over R (the query's relevant judged documents), or the sum when R = 0.
    """
    offsets = aligned.offsets
    rel = _rel_values(aligned, below_zero)
    level = aligned.rel_level
    judged = rel >= 0
    relevant = judged & (rel >= level)
    nonrel = judged & (rel < level)
    pooled = rel == -2
    r = _before_inclusive(relevant, offsets)
    n = _before_inclusive(nonrel, offsets)
    u = _before_inclusive(pooled, offsets)
    j = (np.arange(rel.shape[0]) - np.repeat(offsets[:-1], np.diff(offsets))).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r - 1 + n + u) / j)
                * ((r - 1 + INFAP_EPSILON) / ((r - 1 + n) + 2 * INFAP_EPSILON)))
    term = np.where(j == 0, 1.0, term)
    n_q = offsets.shape[0] - 1
    total = np.bincount(_query_of_docs(offsets)[relevant], weights=term[relevant], minlength=n_q).astype(np.float64)  # in rank order
    num_rel = np.asarray(aligned.n_relevant)
    out = total.copy()
    np.divide(total, num_rel, out=out, where=num_rel != 0)
    return out


# ---- relstring ---------------------------------------------------------------------------


def relstring(aligned, k=None, *, below_zero=None, judged_only=False):
    """trec_eval's ``relstring`` (m_relstring.c): per query, one character per top-k document.

    The grade 0-9 itself, '>' above 9, '-' for a document absent from the qrels, '.' for
    one judged below 0.  ``k``: the parameter (``relstring.20``: 20), truncated to an
    integer as C's ``(long)``; None when none is given (trec_eval's default, 10).  The
    string is empty for k <= 0 or no document.  trec_eval prints it per query only, quoted
    (``relstring<tab>qid<tab>'210-'``), with no summary line; the name is ``relstring``,
    or ``relstring_<parameters as given>``.

    A query missing from the run under ``-c`` is '-' (trec_eval's stand-in document) when
    a parameter is given, '' otherwise (trec_eval clears the string of a measure named
    exactly ``relstring``); '' under ``-J`` (``judged_only``: ``aligned`` is
    ``judged_only()``).
    """
    named = k is not None
    k = 10 if k is None else k
    k = max(int(k), 0) if math.isfinite(k) else (0 if k < 0 else np.iinfo(np.int64).max)  # (long), MIN, >= 0
    offsets, rel, _ = _ranked(aligned, below_zero, judged_only or not named)
    chars = np.where(rel > 9, ord(">"), np.where(rel >= 0, ord("0") + np.clip(rel, 0, 9), 0))
    chars = np.where(rel == -1, ord("-"), np.where(rel == -2, ord("."), chars)).astype(np.uint8)
    data = chars.tobytes()
    offsets = offsets.tolist()
    return [data[lo : min(hi, lo + k)].decode("ascii") for lo, hi in itertools.pairwise(offsets)]


# ---- the gain measures -------------------------------------------------------------------


def _gain_pairs(gains):
    """``level=gain`` parameters as a list of (int level, float gain), in the order given."""
    if gains is None:
        return []
    items = gains.items() if hasattr(gains, "items") else gains
    info = np.iinfo(np.int64)
    return [(min(max(int(level), info.min), info.max), float(gain)) for level, gain in items]  # atol saturates


def _c_gain_compare(a, b):
    """gain_init.c's comparison: the difference of two gains converted to a 32-bit int (x86 cvttsd2si)."""
    d = a - b
    if not -2147483649.0 < d < 2147483648.0:  # out of range, or NaN: the "integer indefinite" value
        return _INT_MIN
    return int(d)


def _c_merge_sort(idx, gain):
    """glibc's qsort (msort_with_tmp): top-down merge sort, halves n // 2 and n - n // 2, left on <= 0."""
    n = len(idx)
    if n <= 1:
        return idx
    a = _c_merge_sort(idx[: n // 2], gain)
    b = _c_merge_sort(idx[n // 2 :], gain)
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        if _c_gain_compare(gain[a[i]], gain[b[j]]) <= 0:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    out.extend(a[i:])
    out.extend(b[j:])
    return out


def _sort_gains(gain):
    """The order of ``qsort`` with the comparison of gain_init.c (a list of indices)."""
    g = np.asarray(gain, dtype=np.float64)
    if g.shape[0] > 1 and np.isfinite(g).all():
        u = np.unique(g)
        # a true order (every two distinct gains 1 or more apart, less than 2**31): the merge
        # sort is then the stable sort by gain
        if u.shape[0] == 1 or (np.diff(u).min() >= 1.0 and u[-1] - u[0] < 2147483648.0):
            return np.argsort(g, kind="stable").tolist()
    return _c_merge_sort(list(range(g.shape[0])), g.tolist())


class _Levels:
    """The sorted gain list of every query whose largest level is L - 1 (trec_eval's setup_gains).

    ``exact``: sorted by gain exactly (a stable sort), not in the order of trec_eval's comparison.
    """

    def __init__(self, pairs, top_code, grade_values, exact=False):
        n_levels = int(grade_values[top_code]) + 1 if top_code >= 0 else 0
        levels = [lv for lv, _ in pairs]
        gains = [g for _, g in pairs]
        first = {}
        for i, lv in enumerate(levels):
            first.setdefault(lv, i)
        if n_levels <= DENSE_LEVELS:
            listed = range(n_levels)
        else:
            listed = grade_values[: top_code + 1].tolist()
        for lv in listed:
            if lv not in first:
                first[lv] = len(levels)
                levels.append(lv)
                gains.append(float(lv))
        if exact:
            order = np.argsort(np.asarray(gains, dtype=np.float64), kind="stable").tolist()
        else:
            order = _sort_gains(gains)
        position = np.empty(len(order), dtype=np.int64)
        position[order] = np.arange(len(order))
        self.gains_sorted = np.asarray(gains, dtype=np.float64)[order] if order else np.zeros(0)
        self.top_gain = float(self.gains_sorted[-1]) if order else 0.0
        gain_of_level = {}
        for p in reversed(order):  # get_gain: the first entry of the level in the sorted list
            gain_of_level[levels[p]] = gains[p]
        codes = np.arange(top_code + 1)
        # the sorted position of the entry that holds each grade's count (grades 0..L-1)
        self.holder = np.array([position[first[int(grade_values[c])]] for c in codes], dtype=np.int64)
        self.code_gain = np.zeros(grade_values.shape[0], dtype=np.float64)
        for c in codes.tolist():
            self.code_gain[c] = gain_of_level.get(int(grade_values[c]), 0.0)
        self.absent_gain = gain_of_level.get(-1, 0.0)  # not in the qrels (RELVALUE_NONPOOL)
        self.below_zero_gain = gain_of_level.get(-2, 0.0)  # judged below 0 (RELVALUE_UNJUDGED)


def _gain_inputs(aligned, gains, below_zero, judged_only, exact=False):
    """Per-document gains and per-query ideal entries for the kernel."""
    pairs = _gain_pairs(gains)
    gv = aligned.grade_values
    judged = aligned.judged_counts  # per query, (code, count) entries in code order
    n_q = aligned.n_queries
    held = np.diff(judged.offsets)
    has = held > 0
    # (no query holding a judgment >= 0: no grade to take)
    top_own = np.where(has, judged.grades[np.maximum(judged.offsets[1:] - 1, 0)], -1) if judged.grades.shape[0] else \
        np.full(n_q, -1, np.int64)
    # a query without a judgment >= 0 keeps the levels (and the counts) of the last query before it that has one
    src = np.maximum.accumulate(np.where(has, np.arange(n_q), -1)) if n_q else np.zeros(0, np.int64)
    top = np.where(src >= 0, top_own[np.maximum(src, 0)], -1)

    offsets, rel, codes = _ranked(aligned, below_zero, judged_only)
    doc_gain = np.zeros(rel.shape[0], dtype=np.float64)
    doc_query = _query_of_docs(offsets)
    groups, group_of_query = np.unique(top, return_inverse=True)
    group_of_query = group_of_query.reshape(-1)
    doc_group = group_of_query[doc_query]
    doc_order = np.argsort(doc_group, kind="stable")
    doc_bounds = np.searchsorted(doc_group[doc_order], np.arange(groups.shape[0] + 1))
    lengths = np.zeros(n_q, dtype=np.int64)
    top_gain = np.zeros(n_q, dtype=np.float64)
    parts = []
    for g, t in enumerate(groups.tolist()):
        lv = _Levels(pairs, t, gv, exact)
        qs = np.flatnonzero(group_of_query == g)
        top_gain[qs] = lv.top_gain
        docs = doc_order[doc_bounds[g] : doc_bounds[g + 1]]
        r = rel[docs]
        doc_gain[docs] = np.where(r >= 0, lv.code_gain[codes[docs]],
                                  np.where(r == -1, lv.absent_gain, lv.below_zero_gain))
        if t < 0:
            parts.append((qs, np.zeros(0), np.zeros(0, np.int64)))
            continue
        # the ideal: the entries holding counts, from the end of the sorted list, those with documents: each
        # query's (code, count) entries (its source query's) ordered by their holder's sorted position, descending
        by_position = np.argsort(-lv.holder, kind="stable")
        rank_of_code = np.empty(by_position.shape[0], dtype=np.int64)
        rank_of_code[by_position] = np.arange(by_position.shape[0])
        first, n = judged.offsets[src[qs]], held[src[qs]]
        entry_query = np.repeat(np.arange(qs.shape[0]), n)
        entry = np.repeat(first - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
        code = judged.grades[entry]
        order = np.lexsort((rank_of_code[code], entry_query))
        lengths[qs] = n
        parts.append((qs, lv.gains_sorted[lv.holder[code[order]]], judged.counts[entry[order]]))
    e_off = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(lengths, out=e_off[1:])
    e_gain = np.zeros(int(e_off[-1]), dtype=np.float64)
    e_count = np.zeros(int(e_off[-1]), dtype=np.int64)
    for qs, gain_flat, count_flat in parts:
        n = lengths[qs]
        at = np.repeat(e_off[qs], n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
        e_gain[at] = gain_flat
        e_count[at] = count_flat
    return offsets, doc_gain, e_off, e_gain, e_count, top_gain


def _gain_measure(which, aligned, gains, below_zero, judged_only, exact=False):
    from rankjit.io._kernels import _gain_walk  # (trec_eval's three loops, compiled)

    offsets, doc_gain, e_off, e_gain, e_count, top_gain = _gain_inputs(aligned, gains, below_zero, judged_only,
                                                                       exact)
    out = np.zeros(aligned.n_queries, dtype=np.float64)
    ideal_out = np.zeros(aligned.n_queries if which == _DCG else 0, dtype=np.float64)
    _gain_walk(which, offsets, doc_gain, e_off, e_gain, e_count, top_gain,
               np.ascontiguousarray(aligned.n_relevant, dtype=np.int64), out, ideal_out)
    return (out, ideal_out) if which == _DCG else out


def g_measure(aligned, gains=None, *, below_zero=None, judged_only=False):
    """trec_eval's ``G`` (m_G.c), per query.

    Down the ranking, with s_i the sum of the gains of the top i documents and c_i the
    sum over the top i positions of max(ideal gain, 1) (1 once the ideal ranking has
    reached a gain <= 0), a document of gain g != 0 at rank i adds ``g / log2(2 + c_i - s_i)``.
    G is that sum over the sum of the positive ideal gains (0 when that is 0).

    ``gains``: the ``G.level=gain`` parameters (a dict level -> gain, or (level, gain)
    pairs in the order given, for repeated levels); None: each level's gain is the level.
    ``below_zero``: :func:`judged_below_zero` (needed for a gain given to level -2);
    ``judged_only``: True when ``aligned`` is ``aligned.judged_only()`` (``-J``).
    """
    return _gain_measure(_G, aligned, gains, below_zero, judged_only)


def ndcg_rel(aligned, gains=None, *, below_zero=None, judged_only=False):
    """trec_eval's ``ndcg_rel`` (m_ndcg_rel.c), per query.

    DCG (gain / log2(rank + 1)) over the ideal DCG at the rank of each retrieved document
    of gain > 0, summed, plus ``(N - that number of documents) * DCG / IDCG`` over the
    whole ranking and the whole ideal (N: the ideal documents of gain > 0, ideal gains as
    for G); divided by N, and 0 unless the sum is > 0.
    ``gains``, ``below_zero``, ``judged_only`` as for :func:`g_measure`.
    """
    return _gain_measure(_NDCG_REL, aligned, gains, below_zero, judged_only)


def rndcg(aligned, gains=None, *, below_zero=None, judged_only=False):
    """trec_eval's ``Rndcg`` (m_Rndcg.c), per query.

    The mean of nDCG@i over the ranks i after which the ideal gain changes (the "R
    levels": ends of the runs of equal ideal gains), counted while IDCG@i > 0, and, when
    the ranking goes on past the positive ideal gains, of nDCG over the whole ranking.
    0 for a query without relevant documents (R = 0); 0/0 (NaN) when no rank counts.
    ``gains``, ``below_zero``, ``judged_only`` as for :func:`g_measure`.
    """
    return _gain_measure(_RNDCG, aligned, gains, below_zero, judged_only)


def dcg_and_ideal(aligned, gains=None, *, below_zero=None, judged_only=False, trec_eval_order=False):
    """trec_eval's ``dcg`` and ``ideal_dcg`` (m_ndcg.c), per query: a pair of arrays.

    DCG is ``sum_i g_i / log2(i + 1)`` over the ranking (rank i from 1), g_i the gain of the
    document's level (0 for a level without one); the ideal DCG the same sum over the ideal
    ranking (each level's judged documents, retrieved or not, largest gain first, gains > 0
    only).  ``gains``, ``below_zero``, ``judged_only`` as for :func:`g_measure`; the levels
    are sorted by gain exactly unless ``trec_eval_order`` (module docstring).
    """
    return _gain_measure(_DCG, aligned, gains, below_zero, judged_only, exact=not trec_eval_order)


def dcg(aligned, gains=None, *, below_zero=None, judged_only=False, trec_eval_order=False):
    """trec_eval's ``dcg`` (m_ndcg.c), per query: :func:`dcg_and_ideal`'s DCG."""
    return dcg_and_ideal(aligned, gains, below_zero=below_zero, judged_only=judged_only,
                         trec_eval_order=trec_eval_order)[0]


def ideal_dcg(aligned, gains=None, *, below_zero=None, judged_only=False, trec_eval_order=False):
    """trec_eval's ``ideal_dcg`` (m_ndcg.c), per query: :func:`dcg_and_ideal`'s ideal DCG."""
    return dcg_and_ideal(aligned, gains, below_zero=below_zero, judged_only=judged_only,
                         trec_eval_order=trec_eval_order)[1]


def ndcg(aligned, gains=None, *, below_zero=None, judged_only=False, trec_eval_order=False):
    """trec_eval's ``ndcg`` (m_ndcg.c), per query: ``dcg / ideal_dcg``, 0 where ``ideal_dcg`` is not > 0."""
    value, ideal = dcg_and_ideal(aligned, gains, below_zero=below_zero, judged_only=judged_only,
                                 trec_eval_order=trec_eval_order)
    out = np.zeros_like(value)
    np.divide(value, ideal, out=out, where=ideal > 0.0)
    return out
