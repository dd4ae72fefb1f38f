"""Compiled loops of the front ends that speak other tools' APIs (``rankjit.compat``, ``rankjit.integrations``).

The front ends check and convert their inputs in Python, then call these kernels, which trust
their arguments; every kernel is compiled through :mod:`rankjit._config`, lazily, at its first call.
By front end:

* pytrec_eval (``_place_judged``, ``_count_below``): trec_eval's rank of each retrieved judged document.
* the dict front ends (``grouped_code_counts``): the judgments' counts per query and grade code.
* ranx (``_queries_with_equal_hashes``): the queries where a document id may be given twice.
* ir_measures (``_join``, ``_split_raw``, ``_mixed_ties``, ``_score_slot``; ``_place_judged`` to rank): run
  joined to qrels; its judgments that repeat a document keep the last (``rankjit.io._kernels.repeated_strings``).
"""
from __future__ import annotations

import numpy as np

from rankjit._config import jit
from rankjit._kernels.strings import HASH_MUL, hash_bytes, same_bytes, table_size

#: label of a retrieved document the qrels do not hold (below every grade a qrels file can hold):
#: the raw judgments of rankjit.integrations.ir_measures
_UNJUDGED = np.iinfo(np.int64).min


# ---- pytrec_eval: the judged documents' ranks ------------------------------------------------------


#: up to this many retrieved judged documents in a query, _place_judged compares each with every score (k n
#: comparisons, vectorised); above it, one binary search per score (n log k).  Measured with the captured arguments
#: of compat pytrec_eval's evaluate: 64 was the fastest of 16, 32, 64, 128 on Web 2012 (k up to 102, n = 1000)
_FEW_JUDGED = 64
#: up to this depth, _place_judged first finds the depth-th largest score of a query (a sorted buffer of that many
#: scores, one pass) and places only the judged documents at or above it (Judged@10 on Web 2012: most judged
#: documents lie below the tenth score); deeper, every judged document is compared
_SMALL_DEPTH = 64
#: up to this many grade codes, grouped_code_counts reads every code of its tally back; above, the distinct ones
_FEW_CODES = 64


@jit
def _count_below(srt, k, v):
    """Number of values of ascending ``srt[:k]`` below ``v`` (k >= 1; a branch-free binary search).

    The answer stays in ``[base, base + n]``: halving ``n`` and moving ``base`` by a select.
    """
    base = 0
    n = k
    while n > 1:
        half = n >> 1
        base = base + half if srt[base + half] < v else base
        n -= half
    return base + (1 if srt[base] < v else 0)


@jit
def _first_at_most(seg, n, s, strict):
    """In descending ``seg[:n]``: the first index whose value is ``<= s`` (``< s`` when ``strict``), else ``n``."""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if seg[mid] > s or (strict and seg[mid] == s):
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def _depth_threshold(seg, n, depth, top):
    """The ``depth``-th largest non-NaN value of ``seg[:n]`` (-inf when there are fewer): a value ``s`` below it has
    ``#{v > s} >= depth``, a value at or above it ``#{v > s} < depth``.  ``top`` (scratch, >= depth) keeps the
    largest values seen, ascending: after the first ``depth``, a value enters only above ``top[0]``."""
    m = 0
    for i in range(n):
        v = seg[i]
        if m < depth:
            if v != v:
                continue
            j = m
            while j > 0 and top[j - 1] > v:  # insertion into ascending top[:m]
                top[j] = top[j - 1]
                j -= 1
            top[j] = v
            m += 1
        elif v > top[0]:  # (NaN: never) v replaces the smallest kept value
            j = 0
            while j + 1 < m and top[j + 1] < v:
                top[j] = top[j + 1]
                j += 1
            top[j] = v
    if m < depth:
        return -np.inf
    return top[0] if depth > 0 else np.inf  # (depth 0: every value is left out)


def place_judged_scratch(most, longest, depth):
    """The scratch arrays of one :func:`_place_judged` call, after its ``depth``: ``(srt, hist, same, below, top)``
    for queries of up to ``most - 1`` judged documents and ``longest`` documents."""
    return (np.empty(most, dtype=np.float64), np.empty(most, dtype=np.int64), np.empty(most, dtype=np.int64),
            np.empty(longest, dtype=np.int64), np.empty(max(1, min(depth, _SMALL_DEPTH)), dtype=np.float64))


@jit
def _place_judged(g_lo, g_hi, off, score, j_off, j_score, j_label, labels, above, tied, member, srt, hist, same,
                  below, top, depth):
    """The rank of each retrieved judged document of queries ``g_lo .. g_hi - 1``, and its label there.

    Query ``g`` ranks documents ``off[g] .. off[g + 1] - 1`` of ``score`` (descending; ties
    by document id, in the caller's order); its judged documents are ``j_off[g] .. j_off[g + 1] - 1`` of
    ``j_score`` (NaN: not retrieved) and ``j_label``.  A judged document of score ``s`` comes
    after the ``a = #{scores > s}`` documents of higher scores.  When no other document has
    score ``s`` its rank is ``a``: ``labels[off[g] + a] = its label``.  Otherwise its place
    among the tied documents depends on their ids, which the caller compares:
    ``above[t] = a``, ``tied[g] = True`` and ``member[i] = True`` for every document ``i``
    of the query with the score of a tied judged document it places.  Scratch: ``srt`` (float64),
    ``hist`` and ``same`` (int64), one more than the most judged documents of a query;
    ``below`` (int64), the most documents of a query; ``top`` (float64), ``min(depth, _SMALL_DEPTH)``
    (:func:`place_judged_scratch` makes them).  A judged document with ``a >= depth`` is left out
    (the measures read the first ``depth`` ranks alone; ``depth = n``: none is): below the
    ``depth``-th largest score (:func:`_depth_threshold`, up to ``_SMALL_DEPTH``) before any count.
    A query whose scores are in descending order already (TREC runs are written so, and most
    dicts built from them) finds ``a`` and the tied documents by binary search instead.
    """
    for g in range(g_lo, g_hi):
        lo = off[g]
        n = off[g + 1] - lo
        seg = score[lo:lo + n]  # (indexed from 0, so that Numba adds no negative-index fix-up: the loops vectorise)
        unsorted = 0
        for i in range(n - 1):
            unsorted += not seg[i] >= seg[i + 1]  # (a NaN: unsorted)
        if unsorted == 0:  # descending: a = the first index of a value <= s, a + e the first of a value < s
            for t in range(j_off[g], j_off[g + 1]):
                s = j_score[t]
                if s != s:  # (NaN: not retrieved)
                    continue
                a = _first_at_most(seg, n, s, False)
                if a >= depth:
                    continue
                b = _first_at_most(seg, n, s, True)
                if b - a == 1:
                    labels[lo + a] = j_label[t]
                    continue
                above[t] = a
                tied[g] = True
                for i in range(a, b):
                    member[lo + i] = True
            continue
        # thr: s < thr <=> #{v > s} >= depth (left out); -inf: none is
        thr = _depth_threshold(seg, n, depth, top) if depth < n and depth <= _SMALL_DEPTH else -np.inf
        k = 0  # the retrieved judged documents' scores
        for t in range(j_off[g], j_off[g + 1]):
            if j_score[t] >= thr:  # (NaN: not retrieved)
                srt[k] = j_score[t]
                k += 1
        if k == 0:
            continue
        if k <= _FEW_JUDGED:  # a few: count the scores above each (k n comparisons, vectorised)
            for t in range(j_off[g], j_off[g + 1]):
                s = j_score[t]
                if not s >= thr:  # (NaN: not retrieved)
                    continue
                a = 0
                e = 0
                for i in range(n):
                    a += seg[i] > s  # a = #{v > s}
                    e += seg[i] == s  # e = #{v == s}, s's own document included
                if a >= depth:
                    continue
                if e == 1:
                    labels[lo + a] = j_label[t]
                    continue
                above[t] = a
                tied[g] = True
                for i in range(n):
                    if seg[i] == s:
                        member[lo + i] = True
            continue
        # many: with srt ascending and c(v) = #{srt < v} (a binary search), v > s <=> c(v) > c(s), so
        # #{v > s} = #{v: c(v) > c(s)}: a histogram of c(v) over the scores, summed from the top
        srt[:k].sort()
        hist[: k + 1] = 0
        same[: k + 1] = 0
        for i in range(n):
            v = seg[i]
            c = _count_below(srt, k, v)
            below[i] = c
            hist[c] += 1
            if c < k and srt[c] == v:
                same[c] += 1  # documents with the score srt[c]
        for j in range(k - 1, -1, -1):
            hist[j] += hist[j + 1]  # hist[j] = #{v: c(v) >= j}
        for t in range(j_off[g], j_off[g + 1]):
            s = j_score[t]
            if not s >= thr:  # (NaN: not retrieved)
                continue
            j = _count_below(srt, k, s)
            if hist[j + 1] >= depth:
                continue
            if same[j] == 1:
                labels[lo + hist[j + 1]] = j_label[t]  # rank = #{v: c(v) > c(s)}
            else:
                above[t] = hist[j + 1]
                tied[g] = True
                same[j] = -abs(same[j])  # (negative: a placed judged document has this score)
        if tied[g]:
            for i in range(n):
                c = below[i]
                if c < k and srt[c] == seg[i] and same[c] < 0:
                    member[lo + i] = True


# ---- the judgments coded once (rankjit.io._frontend.code_judgments) --------------------------------


@jit
def grouped_code_counts(starts, codes, width, relevant_from):
    """Per query, the count of each grade code of its judgments: a GradeCounts' ``(offsets, entries)``, and R.

    Query ``q`` holds ``codes[starts[q]:starts[q + 1]]`` (int64 codes ``0 .. width - 1``; -1,
    a grade below 0, is not counted).  ``entries`` rows are ``(code, count)``, codes ascending
    within a query; ``relevant[q]`` counts the codes >= ``relevant_from``.  One pass over the
    codes into a tally, read back in code order: every code when there are few
    (``_FEW_CODES``), else the query's distinct codes, sorted.
    """
    n_q = starts.shape[0] - 1
    tally = np.zeros(max(width, 1), dtype=np.int64)
    distinct = np.empty(max(width, 1), dtype=np.int64)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    relevant = np.zeros(n_q, dtype=np.int64)
    entries = np.empty((min(codes.shape[0], n_q * width), 2), dtype=np.int64)  # (at most this many)
    few = width <= _FEW_CODES
    e = 0
    for q in range(n_q):
        k = 0
        for i in range(starts[q], starts[q + 1]):
            c = codes[i]
            if c >= 0:
                if not few and tally[c] == 0:
                    distinct[k] = c
                    k += 1
                tally[c] += 1
        if few:
            k = width
            for c in range(width):
                distinct[c] = c
        else:
            distinct[:k].sort()
        r = 0
        for j in range(k):
            c = distinct[j]
            t = tally[c]
            if t > 0:
                entries[e, 0] = c
                entries[e, 1] = t
                e += 1
                if c >= relevant_from:
                    r += t  # R: judgments of a relevant grade
                tally[c] = 0
        offsets[q + 1] = e
        relevant[q] = r
    return offsets, entries[:e].copy(), relevant


# ---- ranx: queries whose document ids may repeat ------------------------------------------------


@jit
def _queries_with_equal_hashes(bounds, hashes, keys, stamp):
    """Per query (rows ``bounds[g]:bounds[g + 1]`` of ``hashes``), whether two of its rows have equal hashes.

    One open-addressing table per query (linear probing, load <= 1/2) in ``keys`` /
    ``stamp`` (int64, a power of two at least twice the longest query); a slot belongs to
    query ``g`` while ``stamp[slot] == g + 1``, so the table is never cleared.
    """
    out = np.zeros(bounds.shape[0] - 1, dtype=np.bool_)
    for g in range(out.shape[0]):
        lo = bounds[g]
        hi = bounds[g + 1]
        if hi - lo < 2:
            continue
        size = 2
        while size < 2 * (hi - lo):
            size <<= 1
        mask = size - 1
        for i in range(lo, hi):
            h = hashes[i]
            slot = h & mask  # (Python's string hashes: well mixed low bits)
            while stamp[slot] == g + 1:
                if keys[slot] == h:
                    out[g] = True
                    break
                slot = (slot + 1) & mask
            if out[g]:
                break
            stamp[slot] = g + 1
            keys[slot] = h
    return out


# ---- ir_measures: the columnar path (run joined to the qrels, ties of mixed judgment) ---------------


@jit
def _split_raw(raw, labels, judged, below):
    """One pass over the judgments: label (judged >= 0: the grade, else 0), judged >= 0, judged below 0."""
    for i in range(raw.shape[0]):
        g = raw[i]
        judged[i] = g >= 0
        below[i] = g < 0 and g != _UNJUDGED
        labels[i] = g if g >= 0 else 0


@jit
def _score_slot(bits, size):
    """Slot of a score (its float64 bits) in a table of ``size`` (a power of 2) slots: Fibonacci hashing."""
    return np.int64(((bits * HASH_MUL) >> np.uint64(32)) & np.uint64(size - 1))


@jit
def _mixed_ties(q_lo, q_hi, offsets, scores, tag, owner, first, mixed):
    """``mixed[i] = True`` when query ``i`` (of ``q_lo:q_hi``) holds two rows of equal score and different ``tag``.

    Rows ``offsets[i]:offsets[i + 1]``.  Elsewhere the order of equal scores changes nothing
    the tags tell (the tags here: the judgments, from which labels, judged flags and pools
    follow).  Scratch of the caller's block: ``owner`` and ``first`` (int64, at least the
    table size of the longest query, ``owner`` filled with -1): slot ``k`` holds the first row
    ``first[k]`` of a score while ``owner[k]`` is the query, so no table is cleared between
    queries.
    """
    word = np.empty(1, np.float64)
    bits = word.view(np.uint64)  # a score's bits: equal scores (-0.0 made 0.0), equal bits
    for i in range(q_lo, q_hi):
        lo = offsets[i]
        hi = offsets[i + 1]
        size = table_size(hi - lo)
        for j in range(lo, hi):
            s = scores[j]
            word[0] = s + 0.0
            slot = _score_slot(bits[0], size)
            while owner[slot] == i and scores[first[slot]] != s:
                slot = (slot + 1) & (size - 1)
            if owner[slot] != i:
                owner[slot] = i
                first[slot] = j
            elif tag[first[slot]] != tag[j]:
                mixed[i] = True
                break


@jit
def _join(i_lo, i_hi, offsets, rrow, r_data, r_off, scores, qmap, q_off, q_rows, q_data, q_doff, q_hash, grades, raw,
          keep, hr):
    """Judgment of each run document (``raw``; :data:`_UNJUDGED` if none) of queries ``i_lo .. i_hi - 1``.

    Query ``i`` is rows ``rrow[offsets[i]:offsets[i + 1]]`` of the run's doc ids
    (``r_data`` / ``r_off``), judged by qrels query ``qmap[i]``: rows
    ``q_rows[q_off[g]:q_off[g + 1]]`` of theirs (one per document), hashed (``q_hash``).  A document listed
    again gets ``keep = False`` and gives its score to the first listing (a dict's update).
    Returns the number of such repeats.  ``hr`` (uint64, one per run row): the rows' hashes,
    scratch; each query writes only its own rows, so ranges of queries run on threads.

    One probe per run row: a query's table holds its judged documents (entry ``-2 - qrels row``;
    ``claim``: the first run position that named it, else -1) and the run's unjudged documents
    (entry: their first position).
    """
    n_dup = 0
    table = np.empty(16, np.int64)
    claim = np.empty(16, np.int64)
    for i in range(i_lo, i_hi):
        g = qmap[i]
        q_lo = q_off[g]
        q_hi = q_off[g + 1]
        lo = offsets[i]
        hi = offsets[i + 1]
        size = table_size(q_hi - q_lo + hi - lo)
        if table.shape[0] < size:
            table = np.empty(size, np.int64)
            claim = np.empty(size, np.int64)
        table[:size] = -1
        mask = size - 1
        for t in range(q_lo, q_hi):
            slot = np.int64(q_hash[q_rows[t]] & np.uint64(mask))
            while table[slot] != -1:
                slot = (slot + 1) & mask
            table[slot] = -2 - q_rows[t]
            claim[slot] = -1
        for j in range(lo, hi):
            row = rrow[j]
            h = hash_bytes(r_data, r_off[row], r_off[row + 1])
            hr[j] = h
            slot = np.int64(h & np.uint64(mask))
            first = -1
            label = _UNJUDGED
            while True:
                e = table[slot]
                if e == -1:  # no judgment, first listed: j
                    table[slot] = j
                    break
                if e >= 0:  # an unjudged document listed before (at e)?
                    if hr[e] == h and same_bytes(r_data, r_off, rrow[e], r_data, r_off, row):
                        first = e
                        break
                elif q_hash[-2 - e] == h and same_bytes(q_data, q_doff, -2 - e, r_data, r_off, row):  # judged
                    if claim[slot] >= 0:
                        first = claim[slot]
                    else:
                        claim[slot] = j
                        label = grades[-2 - e]
                    break
                slot = (slot + 1) & mask
            if first >= 0:
                keep[j] = False
                scores[first] = scores[j]
                n_dup += 1
                continue
            raw[j] = label
    return n_dup
