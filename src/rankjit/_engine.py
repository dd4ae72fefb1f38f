"""The fused kernel: rank each query once, then compute every requested measure.

Per query the engine builds a ranked list ``sel[:L]`` of flat positions with their
1-based ``ranks[:L]`` by one of three strategies, all giving the same ranks because
the order is total (:mod:`rankjit._ranking`):

* **count** - when no requested measure can see a document of value 0 (gain 0,
  probability 0, not relevant), only the documents with ``label > 0`` are ranked,
  each by counting the documents above it (``O(n V)`` branch-free work, V = number
  of such documents).  This is the fast path for typical, sparse judgments.
* **top-d** - otherwise, or when V is large, a partial sort of the row to the deepest
  cutoff ``D`` the measures need (the whole row when one has no cutoff).
* **average** - ``ties="average"``: the whole row sorted by score, measures computed
  as exact expectations over the orders of tied documents.

With ``check_nan`` each row's scores are first tested for NaN (the validation tier
then scans the labels only, saving a pass over the largest input); the drivers
report the first NaN position of each chunk and the caller raises.  Buffers are
allocated once per chunk of queries, never per query.  Every query is
computed independently of the others, so results are bitwise identical for any
number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from rankjit import _binary, _cascade, _graded
from rankjit import _layout as Lay
from rankjit._config import CHUNK_SIZE, jit, jit_parallel
from rankjit._nrt import borrowed
from rankjit._ranking import (
    PRUNE_DEPTH,
    TIES_AVERAGE,
    TIES_STABLE,
    count_ranks,
    cutoff_bound,
    fast_ranks,
    gather,
    order_by_rank,
    top_d,
)
from rankjit._validation import first_nan


@jit(inline="always")
def _normalise(num, den, empty):
    if den > 0.0:
        return num / den
    return empty


@jit(inline="always")
def _relevant_total(q, labels, start, count, mask, use_mask, rel, rel_labels, m, typed, n_valued, n_relevant,
                    ideal_counts):
    if n_relevant.shape[0] > 0:
        return float(n_relevant[q])
    if ideal_counts.shape[0] > 0:
        c = 0
        for g in range(ideal_counts.shape[1]):
            if g >= rel:
                c += ideal_counts[q, g]
        return float(c)
    if typed and n_valued >= 0 and rel_labels[m] == 1:
        return float(n_valued)  # integer labels: label >= 1  <=>  label > 0, already counted
    if typed:  # the threshold in the labels' dtype: a narrow vectorised compare
        return float(_binary.count_relevant(labels, start, count, mask, use_mask, rel_labels[m]))
    return float(_binary.count_relevant(labels, start, count, mask, use_mask, rel))


@jit(inline="always")
def _ideal_from_row(labels, start, count, mask, use_mask, kk, ip, tables, itables, hist, grades):
    """IDCG of a by-grade gain table from the row's own grade histogram (the hot case)."""
    n_ideal = ip[Lay.I_N_IDEAL]
    order_off = ip[Lay.I_ORDER_OFF]
    value_off = ip[Lay.I_VALUE_OFF]
    cum_off = ip[Lay.I_CUM_OFF]
    kk = min(kk, ip[Lay.I_WEIGHT_LEN])
    if not use_mask and count <= 255 and hist.shape[0] <= 8:
        # grades 0..7, at most 255 documents: one vectorised pass of packed counters,
        # byte g of ``acc`` counting grade g (acc += 1 << 8y; no byte can overflow).
        # This is grade_histogram's first case fused with ideal_dcg_hist, the counts read
        # from the register instead of a histogram in memory: calling the two (even inlined)
        # measured 1.04-1.07x slower for nDCG@10 (docs/performance.md, fourth session)
        row = labels[start:start + count]
        acc = np.uint64(0)
        for i in range(count):
            acc += np.uint64(1) << (np.uint64(row[i]) << np.uint64(3))
        s = 0.0
        lo = 0
        for t in range(n_ideal):
            g = itables[order_off + t]
            hi = min(kk, lo + np.int64((acc >> np.uint64(8 * g)) & np.uint64(255)))
            s += tables[value_off + g] * (tables[cum_off + hi] - tables[cum_off + lo])
            lo = hi
        return s
    _graded.grade_histogram(
        labels, start, count, mask, use_mask, hist, grades, itables[order_off:order_off + n_ideal], n_ideal
    )
    return _graded.ideal_dcg_hist(hist, itables, order_off, n_ideal, kk, tables, value_off, cum_off)


@jit
def _ideal_other(q, labels, start, count, mask, use_mask, kk, ip, tables, itables, ideal_counts, hist, gbuf):
    """IDCG from ``ideal_counts`` or from non-integer gains (kept out of line: rarer, larger code)."""
    mode = ip[Lay.I_VALUE_MODE]
    if mode == Lay.VALUE_TABLE:
        n_ideal = ip[Lay.I_N_IDEAL]
        order_off = ip[Lay.I_ORDER_OFF]
        for t in range(n_ideal):
            g = itables[order_off + t]
            hist[g] = ideal_counts[q, g] if g < ideal_counts.shape[1] else 0
        return _graded.ideal_dcg_hist(
            hist, itables, order_off, n_ideal, min(kk, ip[Lay.I_WEIGHT_LEN]), tables, ip[Lay.I_VALUE_OFF],
            ip[Lay.I_CUM_OFF],
        )
    return _graded.ideal_dcg_values(
        labels, start, count, mask, use_mask, kk, mode, tables, ip[Lay.I_VALUE_OFF], ip[Lay.I_WEIGHT_OFF], gbuf
    )


@jit
def _score_chunk(
    lo, hi, labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
    iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, out, q0,
):
    """Score queries ``lo .. hi - 1`` into ``out[:, q - q0]``; return the first NaN score's position or -1."""
    # views that hold no reference: slicing them in the loop below costs no atomic operation
    labels = borrowed(labels)
    scores = borrowed(scores)
    starts = borrowed(starts)
    counts = borrowed(counts)
    mask = borrowed(mask)
    iparams = borrowed(iparams)
    fparams = borrowed(fparams)
    tables = borrowed(tables)
    itables = borrowed(itables)
    n_relevant = borrowed(n_relevant)
    ideal_counts = borrowed(ideal_counts)
    rel_labels = borrowed(rel_labels)
    out = borrowed(out)
    use_mask = mask.shape[0] > 0
    n_measures = iparams.shape[0]
    sel = np.empty(max_count, dtype=np.int64)
    ranks = np.empty(max_count, dtype=np.int64)
    gbuf = np.empty(max_count, dtype=np.float64)
    tmp = np.empty(max_count, dtype=np.int64)
    slot = np.empty(max_count, dtype=np.int64)
    stamp = np.full(max_count, -1, dtype=np.int64)
    hist = np.zeros(n_hist, dtype=np.int64)
    rlab = np.empty(max_count, dtype=labels.dtype)
    grades = np.arange(n_hist).astype(labels.dtype)  # grade g in the labels' dtype
    fast_tried = 0
    fast_failed = 0
    prune = depth <= PRUNE_DEPTH and not use_mask
    nan_at = -1
    for q in range(lo, hi):
        start = starts[q]
        count = counts[q]
        if check_nan:
            # the NaN test of the scores, fused here: the row is read now and stays in cache
            p_nan = first_nan(scores, start, count, mask, use_mask)
            if p_nan >= 0:
                if nan_at < 0:
                    nan_at = p_nan
                for m in range(n_measures):
                    out[m, q - q0] = np.nan  # never returned: the caller raises
                continue
        average = ties == TIES_AVERAGE
        L = 0
        n = 0
        pruned = False  # valued documents below the bound tau left out (they cannot reach the cutoff)
        n_valued = -1  # documents with label > 0, when the count path selected all of them
        used_count_path = False
        if not average and zero_safe:
            row = scores[start:start + count]
            lab = labels[start:start + count]
            if prune and count >= PRUNE_DEPTH:
                # documents that can carry a value (label > 0) and can reach the deepest cutoff
                # (<= 16): score >= tau, a bound on the 16th best score
                tau = cutoff_bound(row, count)
                for t in range(count):
                    sel[L] = start + t
                    L += (lab[t] > 0) & (row[t] >= tau)  # branch-free compaction
                pruned = True
            elif use_mask:
                row_mask = mask[start:start + count]
                for t in range(count):
                    sel[L] = start + t
                    L += (lab[t] > 0) & row_mask[t]
            else:
                for t in range(count):
                    sel[L] = start + t
                    L += lab[t] > 0  # (local slices: no index wrap-around test in the loop)
            if not pruned:
                n_valued = L  # every real document with label > 0
            if L <= count_limit:
                used_count_path = True
                ranked = -1
                # the one-comparison count fails on ties between valued documents; when it
                # keeps failing in this chunk (tie-heavy scores) go straight to exact counting.
                # Either way the ranks are exact, so this choice never changes a result.
                if ties != TIES_STABLE and 2 * fast_failed <= fast_tried + 8:
                    fast_ranks(scores, start, count, mask, use_mask, sel, L, ranks, ties)
                    ranked = order_by_rank(sel, ranks, L, count, slot, stamp, 2 * q, depth)
                    fast_tried += 1
                    fast_failed += ranked < 0
                if ranked < 0:  # stable rule, or two valued documents tie: count exactly
                    count_ranks(scores, labels, start, count, mask, use_mask, sel, L, ranks, ties)
                    ranked = order_by_rank(sel, ranks, L, count, slot, stamp, 2 * q + 1, depth)
                L = ranked
                if use_mask:
                    for p in range(start, start + count):
                        if mask[p]:
                            n += 1
                else:
                    n = count
        if not used_count_path:
            n = gather(start, count, mask, use_mask, sel)
            if average:
                L = n
                top_d(scores, labels, sel, n, n, TIES_STABLE, tmp)
            else:
                L = min(depth, n)
                top_d(scores, labels, sel, n, L, ties, tmp)
            for i in range(L):
                ranks[i] = i + 1

        if not average:
            for i in range(L):
                rlab[i] = labels[sel[i]]  # labels in rank order, read by every measure
        for m in range(n_measures):
            ip = iparams[m]
            code = ip[Lay.I_CODE]
            k = ip[Lay.I_K]
            kk = k if k > 0 else n  # effective cutoff
            rel = fparams[m, Lay.F_REL]
            empty = fparams[m, Lay.F_EMPTY]
            value = 0.0
            if code == Lay.P:
                h = _binary.avg_hits(scores, labels, sel, n, kk, rel) if average else _binary.hits(rlab, ranks, L, kk, rel)
                value = h / kk if kk > 0 else 0.0
            elif code == Lay.RECALL:
                h = _binary.avg_hits(scores, labels, sel, n, kk, rel) if average else _binary.hits(rlab, ranks, L, kk, rel)
                R = _relevant_total(
                    q, labels, start, count, mask, use_mask, rel, rel_labels, m, ip[Lay.I_REL_TYPED] == 1, n_valued, n_relevant,
                    ideal_counts,
                )
                value = _normalise(h, R, empty)
            elif code == Lay.SUCCESS:
                if average:
                    value = _binary.avg_success(scores, labels, sel, n, kk, rel)
                else:
                    value = 1.0 if _binary.hits(rlab, ranks, L, kk, rel) > 0 else 0.0
            elif code == Lay.RR:
                if average:
                    value = _binary.avg_reciprocal_rank(scores, labels, sel, n, kk, rel)
                else:
                    value = _binary.reciprocal_rank(rlab, ranks, L, kk, rel)
            elif code == Lay.AP:
                R = _relevant_total(
                    q, labels, start, count, mask, use_mask, rel, rel_labels, m, ip[Lay.I_REL_TYPED] == 1, n_valued, n_relevant,
                    ideal_counts,
                )
                s = _binary.avg_ap_sum(scores, labels, sel, n, kk, rel) if average else _binary.ap_sum(rlab, ranks, L, kk, rel, tables, ip[Lay.I_WEIGHT_OFF])
                den = R
                if k > 0 and ip[Lay.I_DENOMINATOR] == Lay.AP_MIN_K_R:
                    den = min(float(k), R)
                value = _normalise(s, den, empty)
            elif code == Lay.RPREC:
                R = _relevant_total(
                    q, labels, start, count, mask, use_mask, rel, rel_labels, m, ip[Lay.I_REL_TYPED] == 1, n_valued, n_relevant,
                    ideal_counts,
                )
                rk = int(R)
                h = _binary.avg_hits(scores, labels, sel, n, rk, rel) if average else _binary.hits(rlab, ranks, L, rk, rel)
                value = _normalise(h, R, empty)
            elif code == Lay.DCG or code == Lay.NDCG:
                mode = ip[Lay.I_VALUE_MODE]
                voff = ip[Lay.I_VALUE_OFF]
                woff = ip[Lay.I_WEIGHT_OFF]
                dk = min(kk, n)
                if average:
                    s = _graded.avg_dcg(scores, labels, sel, n, dk, mode, tables, voff, woff)
                else:
                    s = _graded.dcg(rlab, ranks, L, dk, mode, tables, voff, woff)
                if code == Lay.DCG:
                    value = s
                else:
                    ik = k if k > 0 else ip[Lay.I_WEIGHT_LEN]
                    if ip[Lay.I_VALUE_MODE] == Lay.VALUE_TABLE and ideal_counts.shape[0] == 0:
                        ideal = _ideal_from_row(labels, start, count, mask, use_mask, ik, ip, tables, itables, hist, grades)
                    else:
                        ideal = _ideal_other(
                            q, labels, start, count, mask, use_mask, ik, ip, tables, itables, ideal_counts, hist, gbuf
                        )
                    value = _normalise(s, ideal, empty)
            else:  # ERR, pFound (ties="average" is refused before the kernel)
                value = _cascade.cascade(
                    rlab, ranks, L, min(kk, n), ip[Lay.I_VALUE_MODE], tables, ip[Lay.I_VALUE_OFF], ip[Lay.I_WEIGHT_OFF]
                )
            out[m, q - q0] = value
    return nan_at


@jit_parallel
def score_parallel(
    labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
    iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, nan_at, out,
):
    n_q = starts.shape[0]
    n_chunks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
    for c in prange(n_chunks):
        lo = c * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        nan_at[c] = _score_chunk(
            lo, hi, labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
            iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, out, 0,
        )


@jit
def score_serial(
    labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
    iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, nan_at, out,
):
    nan_at[0] = _score_chunk(
        0, starts.shape[0], labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
        iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, out, 0,
    )


@jit_parallel
def score_systems_parallel(
    labels, scores_stack, starts, counts, mask, ties, depth, zero_safe, count_limit,
    iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, nan_at, out,
):
    """Several systems over the same judgments in one parallel pass.

    ``scores_stack`` is ``(n_systems, n_flat)``; ``out`` is ``(n_systems, n_measures,
    n_queries)``; ``nan_at[item]`` the first NaN score of each work item, or -1.  Work
    items are (system, chunk of queries) pairs.
    """
    n_q = starts.shape[0]
    n_chunks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
    n_sys = scores_stack.shape[0]
    for item in prange(n_sys * n_chunks):
        s = item // n_chunks
        lo = (item % n_chunks) * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        nan_at[item] = _score_chunk(
            lo, hi, labels, scores_stack[s], starts, counts, mask, ties, depth, zero_safe, count_limit,
            iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, out[s], 0,
        )


@jit(inline="always")
def _sum_chunk(c, n_q, labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
               iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan,
               nan_at, sums):
    # chunk c scored into a scratch block, then summed in query order into sums[m, c]
    lo = c * CHUNK_SIZE
    hi = min(n_q, lo + CHUNK_SIZE)
    n_measures = iparams.shape[0]
    part = np.empty((n_measures, hi - lo), dtype=np.float64)
    nan_at[c] = _score_chunk(
        lo, hi, labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
        iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, part, lo,
    )
    for m in range(n_measures):
        # compensated (Neumaier) sum in query order: as accurate as np.mean's pairwise sum
        s = 0.0
        comp = 0.0
        for i in range(hi - lo):
            x = part[m, i]
            t = s + x
            if abs(s) >= abs(x):
                comp += (s - t) + x
            else:
                comp += (x - t) + s
            s = t
        sums[m, c] = s + comp


@jit_parallel
def sum_parallel(
    labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
    iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, nan_at, sums,
):
    """Per-chunk sums of every measure (``sums[m, c]``), for means without a per-query array.

    No ``(n_measures, n_queries)`` output is written: each chunk scores into a small block
    and keeps its sums.  The chunks are the same for the serial driver, so the sums, and
    the means built from them, are identical for any number of threads.
    """
    n_q = starts.shape[0]
    for c in prange(sums.shape[1]):
        _sum_chunk(c, n_q, labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
                   iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels,
                   check_nan, nan_at, sums)


@jit
def sum_serial(
    labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
    iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels, check_nan, nan_at, sums,
):
    """:func:`sum_parallel` on the calling thread (same chunks, same sums)."""
    n_q = starts.shape[0]
    for c in range(sums.shape[1]):
        _sum_chunk(c, n_q, labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit,
                   iparams, fparams, tables, itables, n_relevant, ideal_counts, max_count, n_hist, rel_labels,
                   check_nan, nan_at, sums)
