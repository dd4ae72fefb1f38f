"""Kernels of the nugget-based diversity measures (alpha-DCG, alpha-nDCG, ERR-IA, S-recall, P-IA, AP-IA, NRBP).

Layout: the nugget judgments are a 2-D C-contiguous array ``nug`` of shape
``(n_docs_total, n_subtopics)`` whose rows are the *flat* document positions of the
core engine (a padded ``(n_queries, n_docs, n_subtopics)`` tensor is reshaped, not
copied).  ``J(d, i) = nug[d, i] > 0``.  The tie-breaking "label" of a document is
its number of nuggets ``tlabels[d] = sum_i J(d, i)``.

Per query the chunk kernel

1. ranks the row's real documents to depth ``min(k, n)`` (:func:`rankjit._kernels.ranking.top_d`),
2. walks the ranked list once, keeping per-subtopic counts ``c_i``: the gain of rank
   ``r`` is ``G[r] = sum_i J(d_r, i) * pw[c_i]`` with ``pw[c] = (1 - alpha)^c``,
3. for the normalised measures builds the greedy ideal ranking over the candidate
   set (the row's real documents, or the explicitly given ideal set): each step takes
   the document with the largest remaining gain, ties to the lowest index.

Kinds with a collection-independent bound (ndeval's ERR-IA and alpha-DCG) divide by
``S_q * bound[k]``, ``bound[j] = sum_{r <= j} (1 - alpha)^{r-1} disc[r]`` (cumulative, the
discounted gain of a ranking whose every document holds every subtopic).  NRBP uses
``disc[r] = beta^{r-1}``; nNRBP is the alpha-nDCG kind with that discount.

Buffers are allocated once per chunk of queries; every query is computed from its
own data only, so results are identical for any number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from rankjit._config import CHUNK_SIZE, jit, jit_parallel
from rankjit._kernels.ranking import gather, top_d

KIND_ALPHA_DCG = 0
KIND_ALPHA_NDCG = 1
KIND_ERR_IA = 2
KIND_NERR_IA = 3
KIND_S_RECALL = 4
KIND_ALPHA_DCG_BOUND = 5  # ndeval's alpha-DCG: alpha-DCG / (S_q * bound[k])
KIND_ERR_IA_BOUND = 6  # ndeval's ERR-IA: sum_r G[r] / r / (S_q * bound[k])
KIND_P_IA = 7
KIND_NRBP = 8
KIND_AP_IA = 9


# ---- nugget scan: per-document nugget counts, bad values flagged -------------------


@jit
def _count_rows(lo, hi, nug, out):
    n_sub = nug.shape[1]
    for d in range(lo, hi):
        c = 0
        bad = False
        for i in range(n_sub):
            v = nug[d, i]
            if v > 0:
                c += 1
            elif not (v == 0):  # negative or NaN
                bad = True
        out[d] = -1 if bad else c


@jit_parallel
def nugget_counts_parallel(nug, out):
    n = nug.shape[0]
    block = CHUNK_SIZE * 16
    n_blocks = (n + block - 1) // block
    for b in prange(n_blocks):
        lo = b * block
        _count_rows(lo, min(n, lo + block), nug, out)


@jit
def nugget_counts_serial(nug, out):
    _count_rows(0, nug.shape[0], nug, out)


# ---- the measures ------------------------------------------------------------------


@jit
def _greedy_ideal(cand, n_cand, cnt, gain, nug, pw, disc, depth, sub_start, subs, inv_start, inv):
    """Discounted sum of the greedy ideal ranking of ``cand[:n_cand]`` (in index order) to ``depth``.

    Each step takes the candidate with the largest current gain ``sum_i (1 - alpha)^{c_i}``
    (a linear scan with a strict comparison: ties go to the lowest index).  After a
    step only the candidates sharing a subtopic with the taken one change; they are
    found through per-subtopic candidate lists and their gains recomputed from scratch
    in subtopic order -- the values of a fresh evaluation.  Taken candidates hold -1.
    """
    n_sub = nug.shape[1]
    for i in range(n_sub):
        cnt[i] = 0
        inv_start[i + 1] = 0
    m = 0
    for c in range(n_cand):
        d = cand[c]
        sub_start[c] = m
        g = 0.0
        for i in range(n_sub):
            if nug[d, i] > 0:
                subs[m] = i
                m += 1
                inv_start[i + 1] += 1
                g += pw[0]
        gain[c] = g
    sub_start[n_cand] = m
    inv_start[0] = 0
    for i in range(n_sub):
        inv_start[i + 1] += inv_start[i]
    for i in range(n_sub):
        cnt[i] = inv_start[i]  # fill cursor, reset below
    for c in range(n_cand):
        for t in range(sub_start[c], sub_start[c + 1]):
            i = subs[t]
            inv[cnt[i]] = c
            cnt[i] += 1
    for i in range(n_sub):
        cnt[i] = 0
    total = 0.0
    steps = min(depth, n_cand)
    for r in range(steps):
        best = -1
        best_g = 0.0
        for c in range(n_cand):
            if gain[c] > best_g:  # strict: ties go to the lowest index
                best_g = gain[c]
                best = c
        if best < 0:  # nothing left, or every remaining gain is 0 (alpha = 1)
            break
        total += best_g * disc[r]
        gain[best] = -1.0
        for t in range(sub_start[best], sub_start[best + 1]):
            cnt[subs[t]] += 1
        for t in range(sub_start[best], sub_start[best + 1]):
            i = subs[t]
            for u in range(inv_start[i], inv_start[i + 1]):
                c = inv[u]
                if gain[c] < 0.0:
                    continue
                g = 0.0
                for v in range(sub_start[c], sub_start[c + 1]):
                    g += pw[cnt[subs[v]]]
                gain[c] = g
    return total


@jit
def _div_chunk(lo, hi, nug, scores, tlabels, starts, counts, mask, k, ties, kind, pw, disc, bound,
               inug, istarts, icounts, scale, empty, buf_len, out):
    """Every diversity measure of queries ``lo .. hi-1``, with the chunk's scratch buffers allocated once.

    Long on purpose: one compiled loop per chunk keeps the scratch buffers out of the
    per-query work (no allocation per query) and each measure kind is a branch on
    ``kind``, so a call compiles one function; the steps (rank, gather nuggets, gains, ideal)
    are marked below.
    """
    use_mask = mask.shape[0] > 0
    has_ideal = istarts.shape[0] > 0
    n_sub = nug.shape[1]
    idx = np.empty(buf_len, dtype=np.int64)
    tmp = np.empty(buf_len, dtype=np.int64)
    tmpf = np.empty(buf_len, dtype=np.float64)
    cand = np.empty(buf_len, dtype=np.int64)
    gain = np.empty(buf_len, dtype=np.float64)

    cnt = np.zeros(n_sub, dtype=np.int64)
    inv_start = np.empty(n_sub + 1, dtype=np.int64)
    inv = np.empty(buf_len * n_sub, dtype=np.int64)
    sub_start = np.empty(buf_len + 1, dtype=np.int64)
    subs = np.empty(buf_len * n_sub, dtype=np.int64)
    seen = np.zeros(n_sub, dtype=np.bool_)
    nrel = np.zeros(n_sub, dtype=np.int64)
    apv = np.zeros(n_sub, dtype=np.float64)
    for q in range(lo, hi):
        start = starts[q]
        n = gather(start, counts[q], mask, use_mask, idx)
        d = n if k <= 0 else min(k, n)
        top_d(scores, tlabels, idx, n, d, ties, tmp, tmpf)
        for i in range(n_sub):
            cnt[i] = 0
        for i in range(n_sub):
            apv[i] = 0.0
        s = 0.0
        covered = 0
        hits = 0
        for r in range(d):
            p = idx[r]
            if tlabels[p] == 0:
                continue
            g = 0.0
            for i in range(n_sub):
                if nug[p, i] > 0:
                    g += pw[cnt[i]]
                    if cnt[i] == 0:
                        covered += 1
                    cnt[i] += 1
                    hits += 1
                    apv[i] += cnt[i] / (r + 1.0)  # precision of subtopic i at rank r + 1
            s += g * disc[r]
        if kind == KIND_ALPHA_DCG:
            out[q] = s
            continue
        if kind == KIND_ALPHA_NDCG or kind == KIND_NERR_IA:
            # candidates: nugget-holding documents of the ideal set (or of the row), in index order
            n_cand = 0
            if has_ideal:
                istart = istarts[q]
                for p in range(istart, istart + icounts[q]):
                    for i in range(n_sub):
                        if inug[p, i] > 0:
                            cand[n_cand] = p
                            n_cand += 1
                            break
                depth = n_cand if k <= 0 else min(k, n_cand)
                ideal = _greedy_ideal(cand, n_cand, cnt, gain, inug, pw, disc, depth, sub_start, subs, inv_start, inv)
            else:
                for t in range(counts[q]):
                    p = start + t
                    if (not use_mask or mask[p]) and tlabels[p] > 0:
                        cand[n_cand] = p
                        n_cand += 1
                depth = n_cand if k <= 0 else min(k, n_cand)
                ideal = _greedy_ideal(cand, n_cand, cnt, gain, nug, pw, disc, depth, sub_start, subs, inv_start, inv)
            # nERR-IA with alpha = 0: ERR-IA is identically 0, the ratio is undefined
            if ideal > 0.0 and (kind == KIND_ALPHA_NDCG or scale > 0.0):
                out[q] = s / ideal
            else:
                out[q] = empty
            continue
        # the other kinds: S_q = subtopics with a relevant document in the row or the ideal set;
        # R_i = relevant documents of subtopic i in the ideal set (or, without one, in the row)
        for i in range(n_sub):
            seen[i] = False
            nrel[i] = 0
        for t in range(counts[q]):
            p = start + t
            if (not use_mask or mask[p]) and tlabels[p] > 0:
                for i in range(n_sub):
                    if nug[p, i] > 0:
                        seen[i] = True
                        if not has_ideal:
                            nrel[i] += 1
        if has_ideal:
            istart = istarts[q]
            for p in range(istart, istart + icounts[q]):
                for i in range(n_sub):
                    if inug[p, i] > 0:
                        seen[i] = True
                        nrel[i] += 1
        n_topics = 0
        for i in range(n_sub):
            if seen[i]:
                n_topics += 1
        kb = n if k <= 0 else k  # the cutoff of the bound / of P-IA's denominator
        if n_topics == 0:
            out[q] = empty
        elif kind == KIND_S_RECALL:
            out[q] = covered / n_topics
        elif kind == KIND_ERR_IA:
            out[q] = scale * s / n_topics
        elif kind == KIND_ALPHA_DCG_BOUND or kind == KIND_ERR_IA_BOUND:
            # s / (S_q * bound[k]); nothing retrieved with k = None: 0
            out[q] = s / (n_topics * bound[kb]) if kb > 0 else 0.0
        elif kind == KIND_P_IA:
            out[q] = hits / (kb * n_topics) if kb > 0 else 0.0  # nugget hits / (k S_q)
        elif kind == KIND_NRBP:
            out[q] = scale * s / n_topics  # (1 - (1 - alpha) beta) / S_q * sum_r G[r] beta^{r-1}
        else:  # KIND_AP_IA: (1 / S_q) sum_i AP_i, AP_i = sum of precisions at i's hits / R_i
            a = 0.0
            for i in range(n_sub):
                if nrel[i] > 0:
                    a += apv[i] / nrel[i]
            out[q] = a / n_topics


@jit_parallel
def div_parallel(nug, scores, tlabels, starts, counts, mask, k, ties, kind, pw, disc, bound,
                 inug, istarts, icounts, scale, empty, buf_len, out):
    n_q = starts.shape[0]
    n_chunks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
    for c in prange(n_chunks):
        lo = c * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        _div_chunk(lo, hi, nug, scores, tlabels, starts, counts, mask, k, ties, kind, pw, disc, bound,
                   inug, istarts, icounts, scale, empty, buf_len, out)


@jit
def div_serial(nug, scores, tlabels, starts, counts, mask, k, ties, kind, pw, disc, bound,
               inug, istarts, icounts, scale, empty, buf_len, out):
    _div_chunk(0, starts.shape[0], nug, scores, tlabels, starts, counts, mask, k, ties, kind, pw, disc, bound,
               inug, istarts, icounts, scale, empty, buf_len, out)
