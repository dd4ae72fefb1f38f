"""Kernels of Recall-Paired Preference (RPP) for a pair of systems and for many systems.

Per query and system the kernel finds the ranks of the query's *positive* documents
(``tlabels >= thr``: relevant at some level) once:

1. the positives that the system retrieved (inside its prefix ``sys_counts[q]`` and its
   ``sys_mask``, and real documents of the row) are sorted into rank order;
2. every other retrieved document is placed among them by binary search (one
   comparison suffices for documents below the worst positive), and a histogram of
   those placements gives each positive's rank in ``O(n log m)``:
   ``rank_j = j + 1 + #{non-positives ranked above positive j}``;
3. ranks beyond the cutoff ``k`` become ``INF`` (not retrieved).

Then for every relevance *level* (binary: one; graded: each grade threshold present;
subtopics: each subtopic with a relevant document) the sequence ``f_1 <= f_2 <= ...``
of the ``m`` relevant documents' ranks is read off (``INF`` for the unretrieved,
which all tie) and ``RPP = sum_i w_i sgn(f_i(b) - f_i(a)) / Z_m`` with
``Z_m = sum_{i <= m} w_i``.  Levels are combined with weights (graded: ``m_g``;
subtopics: 1).  Every term is antisymmetric in (a, b), so ``RPP(a, b) = -RPP(b, a)``
holds bitwise.

Buffers are allocated once per chunk of queries; the many-system kernel accumulates
per-chunk sums over fixed chunks of ``CHUNK_SIZE`` queries (same chunks in the serial
and parallel drivers), so results are identical for any number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from rankjit._config import CHUNK_SIZE, jit, jit_parallel
from rankjit._kernels.ranking import TIES_STABLE, before, count_ranks, fast_ranks, sort_by_rank, top_d

MODE_BINARY = 0
MODE_GRADED = 1
MODE_SUBTOPIC = 2

INF = np.int64(1) << np.int64(62)

#: up to this many retrieved positives, ranks are counted (branch-free, ``O(n m)``);
#: above, the row is placed around the sorted positives by binary search (``O(n log m)``)
COUNT_LIMIT = 48


@jit(inline="always")
def _retrieved(p, t, scount, mask, use_mask, smask, use_smask):
    if t >= scount:
        return False
    if use_mask and not mask[p]:
        return False
    if use_smask and not smask[p]:
        return False
    return True


@jit
def _system_ranks(scores, tl, start, scount, mask, use_mask, smask, use_smask, pos, n_pos, thr, k, ties,
                  order, rank, hist, tmp, tmpf):
    """Sorted retrieved positives ``order[:n]`` and their ranks ``rank[:n]`` (INF beyond k); returns n."""
    n_ret = 0
    for j in range(n_pos):
        p = pos[j]
        if _retrieved(p, p - start, scount, mask, use_mask, smask, use_smask):
            order[n_ret] = p
            n_ret += 1
    if n_ret == 0:
        return 0
    if n_ret <= COUNT_LIMIT:
        # smask is already combined with the row mask when both exist
        row_mask = smask if use_smask else mask
        use_row_mask = use_smask or use_mask
        exact = ties == TIES_STABLE
        if not exact:
            # every other document has a lower tie label than a positive: one comparison per
            # document is exact unless two positives tie, which shows as equal ranks
            fast_ranks(scores, start, scount, row_mask, use_row_mask, order, n_ret, rank, ties)
            sort_by_rank(order, rank, n_ret)
            for j in range(1, n_ret):
                if rank[j] == rank[j - 1]:
                    exact = True
                    break
        if exact:
            count_ranks(scores, tl, start, scount, row_mask, use_row_mask, order, n_ret, rank, ties)
            sort_by_rank(order, rank, n_ret)
        if k > 0:
            for j in range(n_ret):
                if rank[j] > k:
                    rank[j] = INF
        return n_ret
    top_d(scores, tl, order, n_ret, n_ret, ties, tmp, tmpf)
    for j in range(n_ret):
        hist[j] = 0
    worst = order[n_ret - 1]
    s_worst = scores[worst]
    for t in range(scount):
        x = start + t
        if use_mask and not mask[x]:
            continue
        if use_smask and not smask[x]:
            continue
        if tl[x] >= thr:
            continue  # a positive: already in order
        if scores[x] < s_worst:
            continue  # below every positive
        if not before(scores, tl, x, worst, ties):
            continue
        # first j with x above order[j]; order[n_ret - 1] qualifies
        lo = 0
        hi = n_ret - 1
        while lo < hi:
            mid = (lo + hi) >> 1
            if before(scores, tl, x, order[mid], ties):
                hi = mid
            else:
                lo = mid + 1
        hist[lo] += 1
    above = 0
    for j in range(n_ret):
        above += hist[j]
        r = j + 1 + above
        rank[j] = r if (k <= 0 or r <= k) else INF
    return n_ret


@jit(inline="always")
def _relevant(mode, p, level, tl, glevels, nug):
    if mode == MODE_BINARY:
        return True
    if mode == MODE_GRADED:
        return tl[p] >= glevels[level]
    return nug[p, level] > 0


@jit
def _fill(order, rank, n_ret, mode, level, tl, glevels, nug, m, f):
    """f[:m]: ranks of the level's relevant documents in rank order, INF for the unretrieved."""
    c = 0
    for j in range(n_ret):
        if _relevant(mode, order[j], level, tl, glevels, nug):
            f[c] = rank[j]
            c += 1
    for i in range(c, m):
        f[i] = INF


@jit(inline="always")
def _pref(fa, fb, m, w, Z):
    # sum_i w_i sgn(f_i(b) - f_i(a)) / Z_m: > 0 when a finds its relevant documents earlier
    s = 0.0
    for i in range(m):
        d = fb[i] - fa[i]
        s += w[i] * ((d > 0) * 1.0 - (d < 0) * 1.0)  # branch-free sgn; w * (+-1 or 0) is exact
    return s / Z[m]


@jit
def _levels(mode, pos, n_pos, tl, rel, nug, glevels, msize):
    """Fill ``msize[:L]`` (relevant documents per level) and, graded, ``glevels``; return L."""
    if mode == MODE_BINARY:
        msize[0] = n_pos
        return 1 if n_pos > 0 else 0
    if mode == MODE_GRADED:
        # distinct grades >= rel and > 0 among the positives, ascending
        L = 0
        for j in range(n_pos):
            g = float(tl[pos[j]])
            if g < rel or g <= 0.0:
                continue
            t = 0
            while t < L and glevels[t] < g:
                t += 1
            if t < L and glevels[t] == g:
                continue
            for u in range(L, t, -1):
                glevels[u] = glevels[u - 1]
            glevels[t] = g
            L += 1
        for lv in range(L):
            c = 0
            for j in range(n_pos):
                if float(tl[pos[j]]) >= glevels[lv]:
                    c += 1
            msize[lv] = c
        return L
    n_sub = nug.shape[1]
    for i in range(n_sub):
        c = 0
        for j in range(n_pos):
            if nug[pos[j], i] > 0:
                c += 1
        msize[i] = c
    return n_sub


@jit(inline="always")
def _positives(tl, start, count, mask, use_mask, thr, pos):
    n_pos = 0
    if use_mask:
        for p in range(start, start + count):
            pos[n_pos] = p
            n_pos += mask[p] & (tl[p] >= thr)  # branch-free: write always, advance when positive
    else:
        for p in range(start, start + count):
            pos[n_pos] = p
            n_pos += tl[p] >= thr
    return n_pos


@jit(inline="always")
def _row_flags(tl, scores_a, scores_b, start, count, mask, use_mask):
    # validation fused into the kernel: 1 = NaN in scores_a, 2 = NaN in scores_b, 4 = negative label
    sa = scores_a[start:start + count]
    sb = scores_b[start:start + count]
    lab = tl[start:start + count]
    na = np.int32(0)  # int32 counts over local slices: vectorised
    nb = np.int32(0)
    ng = np.int32(0)
    if use_mask:
        real = mask[start:start + count]
        for t in range(count):
            na = np.int32(na + np.int32((sa[t] != sa[t]) & real[t]))
            nb = np.int32(nb + np.int32((sb[t] != sb[t]) & real[t]))
            ng = np.int32(ng + np.int32((lab[t] < 0) & real[t]))
    else:
        for t in range(count):
            na = np.int32(na + np.int32(sa[t] != sa[t]))
            nb = np.int32(nb + np.int32(sb[t] != sb[t]))
            ng = np.int32(ng + np.int32(lab[t] < 0))
    return (1 if na > 0 else 0) | (2 if nb > 0 else 0) | (4 if ng > 0 else 0)


@jit(inline="always")
def _scount(sys_counts, q, count):
    if sys_counts.shape[0] > 0:
        return min(sys_counts[q], count)
    return count


# ---- two systems ---------------------------------------------------------------------


@jit
def _pair_chunk(lo, hi, tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties, mode,
                thr, rel, nug, w, Z, empty, buf_len, out, bad):
    use_mask = mask.shape[0] > 0
    check = bad.shape[0] > 0
    use_ma = msk_a.shape[0] > 0
    use_mb = msk_b.shape[0] > 0
    n_lv = max(buf_len, nug.shape[1])
    pos = np.empty(buf_len, dtype=np.int64)
    order_a = np.empty(buf_len, dtype=np.int64)
    order_b = np.empty(buf_len, dtype=np.int64)
    rank_a = np.empty(buf_len, dtype=np.int64)
    rank_b = np.empty(buf_len, dtype=np.int64)
    fa = np.empty(buf_len, dtype=np.int64)
    fb = np.empty(buf_len, dtype=np.int64)
    hist = np.empty(buf_len + 1, dtype=np.int64)
    tmp = np.empty(buf_len, dtype=np.int64)
    tmpf = np.empty(buf_len, dtype=np.float64)
    glevels = np.empty(n_lv, dtype=np.float64)
    msize = np.empty(n_lv, dtype=np.int64)
    for q in range(lo, hi):
        start = starts[q]
        count = counts[q]
        if check:  # NaN scores, negative labels (the row is then in cache for the pass below)
            bad[q] = _row_flags(tl, scores_a, scores_b, start, count, mask, use_mask)
        n_pos = _positives(tl, start, count, mask, use_mask, thr, pos)
        L = _levels(mode, pos, n_pos, tl, rel, nug, glevels, msize)
        num = 0.0
        den = 0.0
        if L > 0:
            na = _system_ranks(scores_a, tl, start, _scount(cnt_a, q, count), mask, use_mask, msk_a, use_ma,
                               pos, n_pos, thr, k, ties, order_a, rank_a, hist, tmp, tmpf)
            nb = _system_ranks(scores_b, tl, start, _scount(cnt_b, q, count), mask, use_mask, msk_b, use_mb,
                               pos, n_pos, thr, k, ties, order_b, rank_b, hist, tmp, tmpf)
            for lv in range(L):
                m = msize[lv]
                if m == 0:
                    continue
                _fill(order_a, rank_a, na, mode, lv, tl, glevels, nug, m, fa)
                _fill(order_b, rank_b, nb, mode, lv, tl, glevels, nug, m, fb)
                v = _pref(fa, fb, m, w, Z)
                wt = float(m) if mode == MODE_GRADED else 1.0
                num += wt * v
                den += wt
        out[q] = num / den if den > 0.0 else empty


@jit_parallel
def pair_parallel(tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties, mode, thr, rel,
                  nug, w, Z, empty, buf_len, out, bad):
    n_q = starts.shape[0]
    n_chunks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
    for c in prange(n_chunks):
        lo = c * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        _pair_chunk(lo, hi, tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties, mode,
                    thr, rel, nug, w, Z, empty, buf_len, out, bad)


@jit
def pair_serial(tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties, mode, thr, rel,
                nug, w, Z, empty, buf_len, out, bad):
    _pair_chunk(0, starts.shape[0], tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties,
                mode, thr, rel, nug, w, Z, empty, buf_len, out, bad)


# ---- many systems ----------------------------------------------------------------------


@jit
def _matrix_chunk(lo, hi, tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, mode, thr, rel, nug, w, Z,
                  empty, buf_len, sums, n_valid, per_query, chunk):
    use_mask = mask.shape[0] > 0
    use_sm = sys_mask.shape[0] > 0
    use_sc = sys_counts.shape[0] > 0
    want_pq = per_query.shape[0] > 0
    n_sys = scores.shape[0]
    n_lv = max(buf_len, nug.shape[1])
    pos = np.empty(buf_len, dtype=np.int64)
    order = np.empty((n_sys, buf_len), dtype=np.int64)
    rank = np.empty((n_sys, buf_len), dtype=np.int64)
    n_ret = np.empty(n_sys, dtype=np.int64)
    F = np.empty((n_sys, buf_len), dtype=np.int64)
    hist = np.empty(buf_len + 1, dtype=np.int64)
    tmp = np.empty(buf_len, dtype=np.int64)
    tmpf = np.empty(buf_len, dtype=np.float64)
    glevels = np.empty(n_lv, dtype=np.float64)
    msize = np.empty(n_lv, dtype=np.int64)
    acc = np.zeros((n_sys, n_sys), dtype=np.float64)
    empty_mask = np.empty(0, dtype=np.bool_)
    for q in range(lo, hi):
        start = starts[q]
        count = counts[q]
        n_pos = _positives(tl, start, count, mask, use_mask, thr, pos)
        L = _levels(mode, pos, n_pos, tl, rel, nug, glevels, msize)
        for a in range(n_sys):
            for b in range(n_sys):
                acc[a, b] = 0.0
        den = 0.0
        if L > 0:
            for s in range(n_sys):
                scount = min(sys_counts[s, q], count) if use_sc else count
                smask = sys_mask[s] if use_sm else empty_mask
                n_ret[s] = _system_ranks(scores[s], tl, start, scount, mask, use_mask, smask, use_sm, pos, n_pos,
                                         thr, k, ties, order[s], rank[s], hist, tmp, tmpf)
            for lv in range(L):
                m = msize[lv]
                if m == 0:
                    continue
                for s in range(n_sys):
                    _fill(order[s], rank[s], n_ret[s], mode, lv, tl, glevels, nug, m, F[s])
                wt = float(m) if mode == MODE_GRADED else 1.0
                for a in range(n_sys):
                    for b in range(a + 1, n_sys):
                        acc[a, b] += wt * _pref(F[a], F[b], m, w, Z)
                den += wt
        if den > 0.0:
            for a in range(n_sys):
                for b in range(a + 1, n_sys):
                    v = acc[a, b] / den
                    sums[chunk, a, b] += v
                    sums[chunk, b, a] -= v
                    if want_pq:
                        per_query[q, a, b] = v
                        per_query[q, b, a] = -v
                if want_pq:
                    per_query[q, a, a] = 0.0
            n_valid[chunk] += 1
        else:
            if empty == empty:  # not NaN: the query counts with value `empty` (0)
                n_valid[chunk] += 1
            if want_pq:
                for a in range(n_sys):
                    for b in range(n_sys):
                        per_query[q, a, b] = empty


@jit_parallel
def matrix_parallel(tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, mode, thr, rel, nug, w, Z, empty,
                    buf_len, sums, n_valid, per_query):
    n_q = starts.shape[0]
    n_chunks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
    for c in prange(n_chunks):
        lo = c * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        _matrix_chunk(lo, hi, tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, mode, thr, rel, nug, w,
                      Z, empty, buf_len, sums, n_valid, per_query, c)


@jit
def matrix_serial(tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, mode, thr, rel, nug, w, Z, empty,
                  buf_len, sums, n_valid, per_query):
    n_q = starts.shape[0]
    n_chunks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
    for c in range(n_chunks):
        lo = c * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        _matrix_chunk(lo, hi, tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, mode, thr, rel, nug, w,
                      Z, empty, buf_len, sums, n_valid, per_query, c)
