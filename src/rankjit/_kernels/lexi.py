"""Kernels of lexicographic precision and lexicographic recall (Diaz 2023; Diaz, Ekstrand & Mitra 2025).

Per query, each system's sorted ranks ``f_1 <= ... <= f_m`` of the ``m`` relevant
documents are read off as for RPP (:func:`rankjit._kernels.rpp._system_ranks`;
``INF`` for a relevant document the system did not retrieve or ranked below ``k``,
and every ``INF`` ties).  Then, with ``i*`` the first index (lexiprecision) or the
last index (lexirecall) where ``f_i(a) != f_i(b)``:

* ``KIND_SGN_LP`` / ``KIND_SGN_LR``: ``sgn(f_i*(b) - f_i*(a))``;
* ``KIND_RR_LP``: ``1/f_i*(a) - 1/f_i*(b)`` (``1/INF = 0``);

and 0 when the two sequences are equal.  Every value is antisymmetric in (a, b)
bitwise.  Buffers are allocated once per chunk of queries, and the many-system
kernel sums over the same fixed chunks of ``CHUNK_SIZE`` queries in the serial and
parallel drivers, so results are identical for any number of threads.

The chunk drivers below have the shape of RPP's (:mod:`rankjit._kernels.rpp`): both
take each query's positives (``_positives``), rank them for each system
(``_system_ranks``) and check the rows (``_row_flags``) with the same shared steps,
and differ in the value read from the ranks (RPP walks the relevance levels, with
scratch space of its own).  Each measure keeps its own drivers: one driver for both
would compile RPP's level walk into every lexicographic call, or need a value
function specialised per measure (duplicates D3 in the tenth session's review).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from rankjit._config import CHUNK_SIZE, jit, jit_parallel
from rankjit._kernels.rpp import INF, _positives, _row_flags, _scount, _system_ranks

KIND_SGN_LP = 0
KIND_RR_LP = 1
KIND_SGN_LR = 2


@jit(inline="always")
def _at(rank, n, i):
    # f_i: the i-th smallest rank (0-based i), INF beyond the n retrieved relevant documents
    return rank[i] if i < n else INF


@jit(inline="always")
def _recip(f):
    return 0.0 if f == INF else 1.0 / f  # 1/f, with 1/INF = 0


@jit
def _lexi(rank_a, na, rank_b, nb, kind):
    """The preference of a over b from their sorted relevant ranks (``rank_x[:nx]``, INF beyond)."""
    if kind == KIND_SGN_LR:
        # from the deepest recall level up: levels >= max(na, nb) are INF in both
        for i in range(max(na, nb) - 1, -1, -1):
            fa = _at(rank_a, na, i)
            fb = _at(rank_b, nb, i)
            if fa != fb:
                return 1.0 if fb > fa else -1.0  # sgn(f_i(b) - f_i(a))
        return 0.0
    for i in range(max(na, nb)):
        fa = _at(rank_a, na, i)
        fb = _at(rank_b, nb, i)
        if fa != fb:
            if kind == KIND_RR_LP:
                return _recip(fa) - _recip(fb)  # 1/f_i(a) - 1/f_i(b)
            return 1.0 if fb > fa else -1.0
    return 0.0


# ---- two systems ---------------------------------------------------------------------


@jit
def _pair_chunk(lo, hi, tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties, thr,
                kind, empty, buf_len, out, bad):
    use_mask = mask.shape[0] > 0
    check = bad.shape[0] > 0
    use_ma = msk_a.shape[0] > 0
    use_mb = msk_b.shape[0] > 0
    pos = np.empty(buf_len, dtype=np.int64)
    order_a = np.empty(buf_len, dtype=np.int64)
    order_b = np.empty(buf_len, dtype=np.int64)
    rank_a = np.empty(buf_len, dtype=np.int64)
    rank_b = np.empty(buf_len, dtype=np.int64)
    hist = np.empty(buf_len + 1, dtype=np.int64)
    tmp = np.empty(buf_len, dtype=np.int64)
    tmpf = np.empty(buf_len, dtype=np.float64)
    for q in range(lo, hi):
        start = starts[q]
        count = counts[q]
        if check:  # NaN scores, negative labels (the row is then in cache for the pass below)
            bad[q] = _row_flags(tl, scores_a, scores_b, start, count, mask, use_mask)
        n_pos = _positives(tl, start, count, mask, use_mask, thr, pos)
        if n_pos == 0:
            out[q] = empty
            continue
        na = _system_ranks(scores_a, tl, start, _scount(cnt_a, q, count), mask, use_mask, msk_a, use_ma,
                           pos, n_pos, thr, k, ties, order_a, rank_a, hist, tmp, tmpf)
        nb = _system_ranks(scores_b, tl, start, _scount(cnt_b, q, count), mask, use_mask, msk_b, use_mb,
                           pos, n_pos, thr, k, ties, order_b, rank_b, hist, tmp, tmpf)
        out[q] = _lexi(rank_a, na, rank_b, nb, kind)


@jit_parallel
def pair_parallel(tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties, thr, kind,
                  empty, buf_len, out, bad):
    n_q = starts.shape[0]
    n_chunks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
    for c in prange(n_chunks):
        lo = c * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        _pair_chunk(lo, hi, tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties, thr,
                    kind, empty, buf_len, out, bad)


@jit
def pair_serial(tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties, thr, kind, empty,
                buf_len, out, bad):
    _pair_chunk(0, starts.shape[0], tl, scores_a, scores_b, starts, counts, mask, cnt_a, msk_a, cnt_b, msk_b, k, ties,
                thr, kind, empty, buf_len, out, bad)


# ---- many systems ----------------------------------------------------------------------


@jit
def _matrix_chunk(lo, hi, tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, thr, kind, empty, buf_len,
                  sums, n_valid, per_query, chunk):
    use_mask = mask.shape[0] > 0
    use_sm = sys_mask.shape[0] > 0
    use_sc = sys_counts.shape[0] > 0
    want_pq = per_query.shape[0] > 0
    n_sys = scores.shape[0]
    pos = np.empty(buf_len, dtype=np.int64)
    order = np.empty((n_sys, buf_len), dtype=np.int64)
    rank = np.empty((n_sys, buf_len), dtype=np.int64)
    n_ret = np.empty(n_sys, dtype=np.int64)
    hist = np.empty(buf_len + 1, dtype=np.int64)
    tmp = np.empty(buf_len, dtype=np.int64)
    tmpf = np.empty(buf_len, dtype=np.float64)
    empty_mask = np.empty(0, dtype=np.bool_)
    for q in range(lo, hi):
        start = starts[q]
        count = counts[q]
        n_pos = _positives(tl, start, count, mask, use_mask, thr, pos)
        if n_pos == 0:
            if empty == empty:  # not NaN: the query counts with value `empty` (0)
                n_valid[chunk] += 1
            if want_pq:
                for a in range(n_sys):
                    for b in range(n_sys):
                        per_query[q, a, b] = empty
            continue
        for s in range(n_sys):
            scount = min(sys_counts[s, q], count) if use_sc else count
            smask = sys_mask[s] if use_sm else empty_mask
            n_ret[s] = _system_ranks(scores[s], tl, start, scount, mask, use_mask, smask, use_sm, pos, n_pos, thr,
                                     k, ties, order[s], rank[s], hist, tmp, tmpf)
        for a in range(n_sys):
            for b in range(a + 1, n_sys):
                v = _lexi(rank[a], n_ret[a], rank[b], n_ret[b], kind)
                sums[chunk, a, b] += v
                sums[chunk, b, a] -= v
                if want_pq:
                    per_query[q, a, b] = v
                    per_query[q, b, a] = -v
            if want_pq:
                per_query[q, a, a] = 0.0
        n_valid[chunk] += 1


@jit_parallel
def matrix_parallel(tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, thr, kind, empty, buf_len, sums,
                    n_valid, per_query):
    n_q = starts.shape[0]
    n_chunks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
    for c in prange(n_chunks):
        lo = c * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        _matrix_chunk(lo, hi, tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, thr, kind, empty,
                      buf_len, sums, n_valid, per_query, c)


@jit
def matrix_serial(tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, thr, kind, empty, buf_len, sums,
                  n_valid, per_query):
    n_q = starts.shape[0]
    n_chunks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
    for c in range(n_chunks):
        lo = c * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        _matrix_chunk(lo, hi, tl, scores, starts, counts, mask, sys_counts, sys_mask, k, ties, thr, kind, empty,
                      buf_len, sums, n_valid, per_query, c)
