"""Ranking kernels: one ordering per query, under an explicit tie rule.

All functions here are small serial Numba functions called from the drivers in
:mod:`rankjit._kernels.engine` (and from the diversity / preference kernels).  They work on
*flat* arrays: a query's documents are the positions ``start .. start + count - 1``
of the flat ``scores`` / ``labels`` arrays, minus those whose ``mask`` is False when a
mask is in use.  Positions, not row offsets, are stored in index buffers, so the
"stable" tie rule (input order) is simply "smaller position first".

The order is total: score descending, then the tie rule, then position ascending.
Every ranking strategy below therefore produces exactly the same ranks.

Counters are written ``c = np.int32(c + np.int32(x))``, not ``c += np.int32(x)``: Numba
types ``int32 + int32`` as int64, and a 64-bit counter halves the documents one vector
compare covers (the reason queries are limited to 2**31 - 1 documents).
"""
from __future__ import annotations

import numpy as np

from rankjit._config import jit
from rankjit._kernels.nrt import stack_floats

TIES_PESSIMISTIC = 0  # among equal scores the lower label ranks first
TIES_OPTIMISTIC = 1  # among equal scores the higher label ranks first
TIES_STABLE = 2  # among equal scores the earlier document ranks first
TIES_AVERAGE = 3  # expected value over every order of tied documents

TIES_CODES = {
    "pessimistic": TIES_PESSIMISTIC,
    "optimistic": TIES_OPTIMISTIC,
    "stable": TIES_STABLE,
    "average": TIES_AVERAGE,
}

#: The tie rule the kernels below are compiled for.  As written they read it from their
#: ``ties`` argument; :func:`for_rule` compiles copies with one rule fixed, whose other
#: branches Numba drops before compiling (``RULE_X or (RULE_FROM_ARGUMENT and ties == X)``
#: is a constant in a copy).
RULE_FROM_ARGUMENT = True
RULE_PESSIMISTIC = False
RULE_OPTIMISTIC = False
RULE_STABLE = False

#: Top-d selection below this depth uses an insertion buffer, above it a heap.
INSERTION_DEPTH = 32


@jit
def before(scores, labels, a, b, ties):
    """True when the document at flat position ``a`` ranks above the one at ``b``."""
    sa = scores[a]
    sb = scores[b]
    if sa != sb:
        return sa > sb
    if RULE_PESSIMISTIC or (RULE_FROM_ARGUMENT and ties == TIES_PESSIMISTIC):
        la = labels[a]
        lb = labels[b]
        if la != lb:
            return la < lb
    elif RULE_OPTIMISTIC or (RULE_FROM_ARGUMENT and ties == TIES_OPTIMISTIC):
        la = labels[a]
        lb = labels[b]
        if la != lb:
            return la > lb
    return a < b


@jit(inline="always")
def gather(start, count, mask, use_mask, idx):
    """Write the flat positions of the row's real documents into ``idx``; return how many."""
    if not use_mask:
        for t in range(count):
            idx[t] = start + t
        return count
    n = 0
    for p in range(start, start + count):
        if mask[p]:
            idx[n] = p
            n += 1
    return n


@jit
def _sift_down(scores, labels, idx, root, size, ties):
    # max-heap by "worseness": a parent never ranks above its children
    x = idx[root]
    i = root
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        right = child + 1
        if right < size and before(scores, labels, idx[child], idx[right], ties):
            child = right  # the right child is the worse one
        if before(scores, labels, x, idx[child], ties):
            idx[i] = idx[child]
            i = child
        else:
            break
    idx[i] = x


@jit
def _merge_sort(scores, labels, idx, n, ties, tmp):
    """Bottom-up merge sort of ``idx[:n]`` into rank order; ``tmp`` holds >= n entries."""
    width = 1
    src = idx
    dst = tmp
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                if before(scores, labels, src[j], src[i], ties):
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        width *= 2
    if src is not idx:
        for t in range(n):
            idx[t] = src[t]


@jit
def top_insertion(scores, labels, idx, n, d, ties, top):
    # sorted buffer idx[:d]; its scores are cached in `top` (scratch of >= d floats) so that
    # most tests read one local float instead of following an index
    for t in range(d):
        x = idx[t]
        sx = scores[x]
        j = t
        while j > 0 and (sx > top[j - 1] or (sx == top[j - 1] and before(scores, labels, x, idx[j - 1], ties))):
            idx[j] = idx[j - 1]
            top[j] = top[j - 1]
            j -= 1
        idx[j] = x
        top[j] = sx
    threshold = top[d - 1]
    # the stable rule never lets a later document with the d-th score in (idx is in input order
    # for that rule): only a strictly higher score can enter
    t = d
    while t < n:
        # blocks of 16 documents: a branch-free test first, so that runs of documents that
        # cannot enter (most of them, and all ties under the stable rule) cost no mispredicted branch
        b = min(t + 16, n)
        can_enter = np.int32(0)
        if RULE_STABLE or (RULE_FROM_ARGUMENT and ties == TIES_STABLE):
            for u in range(t, b):
                can_enter = np.int32(can_enter + np.int32(scores[idx[u]] > threshold))
        else:
            for u in range(t, b):
                can_enter = np.int32(can_enter + np.int32(scores[idx[u]] >= threshold))
        if can_enter == 0:
            t = b
            continue
        for u in range(t, b):
            x = idx[u]
            sx = scores[x]
            if sx < threshold:  # ranks below the current d-th: one comparison
                continue
            if sx == threshold and not before(scores, labels, x, idx[d - 1], ties):
                continue
            j = d - 1
            while j > 0 and (sx > top[j - 1] or (sx == top[j - 1] and before(scores, labels, x, idx[j - 1], ties))):
                idx[j] = idx[j - 1]
                top[j] = top[j - 1]
                j -= 1
            idx[j] = x
            top[j] = sx
            threshold = top[d - 1]
        t = b


@jit
def top_d(scores, labels, idx, n, d, ties, tmp, tmpf):
    """Reorder ``idx[:n]`` so that ``idx[:d]`` holds the best ``d`` documents, in rank order.

    ``d <= n``.  Small depths keep a sorted insertion buffer whose last score is a
    threshold most documents fail with one comparison; deep selections (``d`` over
    half the row) merge-sort the row; others keep a heap of the ``d`` best
    (``O(n log d)``) and finish with a heap sort.  ``idx[d:n]`` is left in an
    unspecified state; ``tmp`` and ``tmpf`` are scratch space of at least ``n`` int64
    and float64 entries.  Under the
    stable rule ``idx[:n]`` must be in input order (as :func:`gather` writes it).
    """
    if d <= 0:
        return
    if d <= INSERTION_DEPTH:
        top_insertion(scores, labels, idx, n, d, ties, tmpf)
        return
    if 2 * d >= n:
        _merge_sort(scores, labels, idx, n, ties, tmp)
        return
    # heap of the d best seen so far, worst at the root
    for root in range(d // 2 - 1, -1, -1):
        _sift_down(scores, labels, idx, root, d, ties)
    threshold = scores[idx[0]]
    for t in range(d, n):
        x = idx[t]
        if scores[x] < threshold:
            continue
        if before(scores, labels, x, idx[0], ties):
            idx[0] = x
            _sift_down(scores, labels, idx, np.int64(0), d, ties)  # np.int64: a literal 0 would compile a second signature
            threshold = scores[idx[0]]
    # heap sort: move the current worst to the end of the shrinking heap
    for end in range(d - 1, 0, -1):
        w = idx[0]
        idx[0] = idx[end]
        idx[end] = w
        _sift_down(scores, labels, idx, np.int64(0), end, ties)


#: :func:`cutoff_bound` bounds the PRUNE_DEPTH-th largest score of a row.
PRUNE_DEPTH = 16


@jit(inline="always")
def cutoff_bound(row, count):
    """A score ``tau`` with at least 16 documents of ``row[:count]`` scoring ``>= tau``.

    ``count >= 16``.  The row is dealt into 8 lanes (position mod 8); each lane keeps its
    two largest scores (``lanes[j]``, ``lanes[8 + j]``) and ``tau`` is the smallest lane
    runner-up, so the 8 lane maxima and 8 runners-up (16 distinct documents) all score
    ``>= tau``.  A document scoring below ``tau`` therefore ranks below 16 others under
    every tie rule and cannot reach a cutoff ``<= 16``.  A few cycles per document,
    against one full count per valued document pruned.  The lanes are a 16-float array on
    the stack: LLVM unrolls the loops over ``j`` and keeps them in registers, as fast as
    16 hand-unrolled local variables (measured 0.94x the time of lanes in heap scratch)
    and 0.3 s cheaper to compile than those.
    """
    lanes = stack_floats(16)  # on the stack: with the loops over j unrolled, in registers
    # float64 throughout (exact for float32 scores): one signature of min and max to compile
    for j in range(8):
        x = np.float64(row[j])
        y = np.float64(row[j + 8])
        lanes[j] = max(x, y)
        lanes[8 + j] = min(x, y)
    for base in range(16, count - 7, 8):  # a tail of < 8 documents is left out: tau stays a bound
        for j in range(8):
            x = np.float64(row[base + j])
            lanes[8 + j] = max(lanes[8 + j], min(lanes[j], x))  # runner-up = max(runner-up, min(max, x))
            lanes[j] = max(lanes[j], x)
    tau = lanes[8]
    for j in range(9, 16):
        tau = min(tau, lanes[j])
    return tau


@jit(inline="always")
def fast_ranks(scores, start, count, mask, use_mask, sel, n_sel, ranks, ties):
    """Ranks of the selected documents by one vectorised count each.

    The selected documents are those with ``label > 0``; every other document of the
    row has label 0, so under the pessimistic rule a tied unselected document ranks
    above: ``rank(v) = #{d : s_d >= s_v}`` (v included); under the optimistic rule it
    ranks below: ``rank(v) = 1 + #{d : s_d > s_v}``.  Both are exact unless two
    *selected* documents tie; they then get the same rank, which
    :func:`order_by_rank` detects (the caller falls back to :func:`count_ranks`).
    The two rules count with different comparisons (``>=``, ``>``): a build for one rule
    (:func:`for_rule`) compiles one loop.  (Folding them into one strict comparison
    against the next float below ``s_v`` made the count 2x slower: ``np.nextafter`` costs
    more than the loop it saves.)
    (Stopping a count early once it passes the cutoff was measured slower: the
    blocked loop costs more than the work it saves on 100-document rows.)
    Long because the six-lane unrolled count and its masked twin are written out: the
    hottest loop of the engine, where each form was measured (docs/performance.md).
    """
    row = scores[start:start + count]
    row_mask = mask[start:start + count] if use_mask else mask
    i = 0
    if not use_mask:
        # six documents per pass over the row: each score loaded once for six tests.  The
        # counters are int32 (16 lanes per vector); six groups measured faster than four or
        # eight on 100-document rows (the vectoriser's remainder handling differs)
        while i + 5 < n_sel:
            v0 = scores[sel[i + 0]]
            v1 = scores[sel[i + 1]]
            v2 = scores[sel[i + 2]]
            v3 = scores[sel[i + 3]]
            v4 = scores[sel[i + 4]]
            v5 = scores[sel[i + 5]]
            c0 = np.int32(0)
            c1 = np.int32(0)
            c2 = np.int32(0)
            c3 = np.int32(0)
            c4 = np.int32(0)
            c5 = np.int32(0)
            if RULE_PESSIMISTIC or (RULE_FROM_ARGUMENT and ties == TIES_PESSIMISTIC):
                for t in range(count):
                    s = row[t]
                    c0 = np.int32(c0 + np.int32(s >= v0))
                    c1 = np.int32(c1 + np.int32(s >= v1))
                    c2 = np.int32(c2 + np.int32(s >= v2))
                    c3 = np.int32(c3 + np.int32(s >= v3))
                    c4 = np.int32(c4 + np.int32(s >= v4))
                    c5 = np.int32(c5 + np.int32(s >= v5))
                ranks[i + 0] = c0
                ranks[i + 1] = c1
                ranks[i + 2] = c2
                ranks[i + 3] = c3
                ranks[i + 4] = c4
                ranks[i + 5] = c5
            else:
                for t in range(count):
                    s = row[t]
                    c0 = np.int32(c0 + np.int32(s > v0))
                    c1 = np.int32(c1 + np.int32(s > v1))
                    c2 = np.int32(c2 + np.int32(s > v2))
                    c3 = np.int32(c3 + np.int32(s > v3))
                    c4 = np.int32(c4 + np.int32(s > v4))
                    c5 = np.int32(c5 + np.int32(s > v5))
                ranks[i + 0] = c0 + 1
                ranks[i + 1] = c1 + 1
                ranks[i + 2] = c2 + 1
                ranks[i + 3] = c3 + 1
                ranks[i + 4] = c4 + 1
                ranks[i + 5] = c5 + 1
            i += 6
    first = i  # the documents left after the groups of six, one pass each
    for i in range(first, n_sel):
        sv = scores[sel[i]]
        c = np.int32(0)  # int32 counters over a local slice let LLVM vectorise
        if use_mask:
            if RULE_PESSIMISTIC or (RULE_FROM_ARGUMENT and ties == TIES_PESSIMISTIC):
                for t in range(count):
                    c = np.int32(c + np.int32((row[t] >= sv) & row_mask[t]))
            else:
                for t in range(count):
                    c = np.int32(c + np.int32((row[t] > sv) & row_mask[t]))
        elif RULE_PESSIMISTIC or (RULE_FROM_ARGUMENT and ties == TIES_PESSIMISTIC):
            for t in range(count):
                c = np.int32(c + np.int32(row[t] >= sv))
        else:
            for t in range(count):
                c = np.int32(c + np.int32(row[t] > sv))
        if RULE_PESSIMISTIC or (RULE_FROM_ARGUMENT and ties == TIES_PESSIMISTIC):
            ranks[i] = c
        else:
            ranks[i] = c + 1


#: :func:`stable_count_ranks` looks for runs of tied scores among the first pairs of selected
#: documents, and gathers the runs' heads when at least a quarter of them tie.
RUNS_SAMPLE = 8


@jit(inline="always")
def runs_worth_gathering(scores, sel, n_sel, limit, count):
    """Whether :func:`stable_count_ranks` pays on this row: a cutoff that drops documents, more
    selected documents than it, and runs of tied scores among the first pairs along ``sel``
    (at least a quarter of :data:`RUNS_SAMPLE` pairs tie).  A guess from a few compares: it
    changes the speed of a row, never its ranks."""
    if limit >= count or n_sel <= limit:
        return False
    tied_pairs = 0
    for i in range(1, min(n_sel, RUNS_SAMPLE + 1)):
        tied_pairs += scores[sel[i - 1]] == scores[sel[i]]
    return 4 * tied_pairs >= RUNS_SAMPLE


@jit(inline="always")
def stable_count_ranks(scores, labels, start, count, mask, use_mask, sel, n_sel, ranks, heads, limit, ties):
    """Exact ranks under the stable rule of ``sel[:n_sel]`` (in input order) into ``ranks[:n_sel]``.

    Ranks beyond ``limit`` may come out as 0 (dropped), as :func:`order_by_rank` reads them.
    Along ``sel`` the documents fall into runs of equal scores.  :func:`count_ranks` counts
    the first document of each run (gathered in ``heads``, scratch of >= ``n_sel`` entries);
    every other document ``v`` of a run follows the one before it, ``u``, with
    ``rank(v) = rank(u) + #{d : u <= d < v, s_d = s_v}`` (the same documents score above
    both; the tied ones from ``u`` up to ``v`` rank above ``v`` alone), a vectorised pass over
    the gap between the two, skipped once ``u`` fell below ``limit``.  A row whose valued
    documents mostly share one score (the first rounds of a boosting model: a median of 40 of
    45 valued documents of a 100-document row at one score) so costs a few counts and one
    pass over the tied span, instead of one count per document (docs/performance.md, 31st
    session).  The engine calls it on the rows :func:`runs_worth_gathering` picks, and counts
    the others' documents one by one.
    ``ties`` is ``TIES_STABLE``, passed as a variable: given as the constant, it compiled a
    copy of :func:`count_ranks` that measured 1.25x slower.
    """
    n_heads = np.int64(0)  # (np.int64: a literal 0 compiled a second copy of count_ranks)
    last = np.nan  # NaN equals nothing: the first document opens a run
    for i in range(n_sel):
        p = sel[i]
        heads[n_heads] = p
        n_heads += scores[p] != last  # branch-free: a new score opens a run
        last = scores[p]
    count_ranks(scores, labels, start, count, mask, use_mask, heads, n_heads, ranks, ties)  # ranks[:n_heads]
    if n_heads == n_sel:
        return  # no runs: every document was counted
    # each head's rank to its place, from the last down (head h <= document i: read before overwritten)
    h = n_heads - 1
    for i in range(n_sel - 1, 0, -1):
        if scores[sel[i - 1]] != scores[sel[i]]:  # document i is head h
            ranks[i] = ranks[h]
            h -= 1
    # then each other document of a run from the one before it
    for i in range(1, n_sel):
        v = sel[i]
        sv = scores[v]
        u = sel[i - 1]
        if scores[u] != sv:
            continue  # a head: counted
        before = ranks[i - 1]
        if before == 0 or before > limit:
            ranks[i] = 0  # the document before it fell below the cutoff: v, after it, does too
            continue
        gap = scores[u:v]
        c = np.int32(0)  # #{d : u <= d < v, s_d = s_v}, int32 over a local slice: vectorised
        if use_mask:
            gap_mask = mask[u:v]
            for t in range(v - u):
                c = np.int32(c + np.int32((gap[t] == sv) & gap_mask[t]))
        else:
            for t in range(v - u):
                c = np.int32(c + np.int32(gap[t] == sv))
        ranks[i] = before + c


@jit
def count_ranks(scores, labels, start, count, mask, use_mask, sel, n_sel, ranks, ties):
    """Exact rank of each selected document by counting the documents of the row above it.

    ``rank(v) = 1 + #{d : d ranks above v}`` with "above" the full order (score, then
    the tie rule, then position), written as one branch-free condition per document
    so that LLVM vectorises the loop over the row.  ``O(count * n_sel)`` work, cheaper
    than sorting when few documents carry a value.  Writes ``ranks[:n_sel]``.
    """
    row = scores[start:start + count]
    row_labels = labels[start:start + count]
    row_mask = mask[start:start + count] if use_mask else mask
    for i in range(n_sel):
        v = sel[i]
        sv = scores[v]
        lv = labels[v]
        tv = v - start
        c = np.int32(0)  # int32 counter over local slices: vectorised
        if RULE_PESSIMISTIC or (RULE_FROM_ARGUMENT and ties == TIES_PESSIMISTIC):
            # above: higher score; or same score and lower label; or same both and earlier
            for t in range(count):
                s = row[t]
                y = row_labels[t]
                c = np.int32(c + np.int32((s > sv) | ((s == sv) & ((y < lv) | ((y == lv) & (t < tv))))))
        elif RULE_OPTIMISTIC or (RULE_FROM_ARGUMENT and ties == TIES_OPTIMISTIC):
            for t in range(count):
                s = row[t]
                y = row_labels[t]
                c = np.int32(c + np.int32((s > sv) | ((s == sv) & ((y > lv) | ((y == lv) & (t < tv))))))
        else:
            # (one loop with a compound test vectorises better than two loops split at v)
            for t in range(count):
                s = row[t]
                c = np.int32(c + np.int32((s > sv) | ((s == sv) & (t < tv))))
        if use_mask:
            # remove padded cells counted above (rare path: only masked batches)
            for t in range(count):
                if not row_mask[t] and before(scores, labels, start + t, v, ties):
                    c = np.int32(c - 1)
        ranks[i] = c + 1


@jit
def sort_by_rank(sel, ranks, n):
    """Insertion-sort the parallel arrays ``ranks[:n]`` / ``sel[:n]`` by rank."""
    for t in range(1, n):
        r = ranks[t]
        x = sel[t]
        j = t
        while j > 0 and ranks[j - 1] > r:
            ranks[j] = ranks[j - 1]
            sel[j] = sel[j - 1]
            j -= 1
        ranks[j] = r
        sel[j] = x


@jit(inline="always")
def order_by_rank(sel, ranks, n_sel, n_row, slot, stamp, tag, limit):
    """Put the documents of ``sel[:n_sel]`` with a rank > 0 in rank order; return how many.

    Ranks are values in ``1..n_row`` (0 = dropped): scatter each document to its
    rank's slot, then read the slots in order with a branch-free compaction.
    ``stamp`` marks the slots written for this ``tag`` (the query), so nothing is
    cleared between queries.  Only ranks up to ``limit`` are kept.  Two documents with the same rank (a tie that
    :func:`fast_ranks` cannot order) make it return -1 before anything is moved.
    """
    top = 0
    for i in range(n_sel):
        r = ranks[i] - 1
        if r < 0:
            continue
        if stamp[r] == tag:
            return -1
        slot[r] = sel[i]
        stamp[r] = tag
        top = max(top, r + 1)
    m = 0
    for r in range(min(top, limit)):  # ranks beyond the deepest cutoff are not needed
        sel[m] = slot[r]
        ranks[m] = r + 1
        m += stamp[r] == tag
    return m


_RULE_NAMES = {code: name for name, code in TIES_CODES.items()}
_BUILDS: dict = {}


def for_rule(ties: int) -> dict:
    """The ranking kernels compiled for one tie rule: ``{name: kernel}``.

    The engine calls these (its variant fixes the rule); the other kernels call the
    module-level ones, which take the rule as an argument.  ``ties="average"`` ranks by
    the stable rule (ties are then averaged over by the measures).  Each call of a copy
    still passes ``ties``; it is ignored.
    """
    ties = TIES_STABLE if ties == TIES_AVERAGE else int(ties)
    build = _BUILDS.get(ties)
    if build is None:
        from rankjit._config import specialise

        flags = {
            "RULE_FROM_ARGUMENT": False,
            "RULE_PESSIMISTIC": ties == TIES_PESSIMISTIC,
            "RULE_OPTIMISTIC": ties == TIES_OPTIMISTIC,
            "RULE_STABLE": ties == TIES_STABLE,
        }
        kernels = [before, _sift_down, _merge_sort, top_insertion, top_d, fast_ranks, count_ranks, stable_count_ranks]
        build = _BUILDS[ties] = specialise(kernels, _RULE_NAMES[ties], flags)
    return build
