"""Compiled loops of trec_eval's preference and judgment-group measures (``rankjit.io._trec_prefs``).

Both kernels take rows already sorted and coded by :mod:`rankjit.io._trec_prefs` and walk
them query by query, judgment group (JG) by JG, in trec_eval's order, so that every sum of
doubles is added in the order trec_eval adds it.

Preferences (``form_prefs_counts.c`` and ``m_prefs_*.c``)
---------------------------------------------------------
A query's judged documents get *docid ranks*: ``0 .. njr-1`` for the judged documents the
run retrieves (in rank order), ``njr .. nj-1`` for the others (by docno).  A preference
``a > b`` (a preferred) between two docid ranks is, for its JG,

* fulfilled-retrieved when ``a < b < njr``, possible-retrieved when both are retrieved;
* fulfilled-implied when ``a < njr <= b``, possible-implied when exactly one is retrieved;
* "not occurring" when neither is retrieved (counted as possible, never fulfilled).

A JG with one judgment sub-group (JSG) is a list of equivalence classes (ECs): the rows of
one ``rel_level``, levels descending; every document of an EC is preferred to every
document of each lower EC, each row counting (a document listed twice counts twice), and a
document in two ECs is an error.  A JG with several JSGs is a preference array: ``a > b``
when ``a`` has a higher level than ``b`` in some JSG, closed under transitivity; a cycle
between two documents is an error (trec_eval aborts), and so is a document with level 0 in
one JSG and above 0 in another.  Relevant: level > 0; non-relevant: level 0 (an EC JG also
counts the levels below 0 as non-relevant, a preference array counts them as neither).

``prefs_pair*`` average over document pairs the fraction ``c[i][j] / (c[i][j] + c[j][i])``
(``i`` the better docid rank) where ``c`` counts, per ordered pair, the preferences of all
JGs (trec_eval keeps them in ``unsigned short``: counts are taken modulo 65536 here too).
A query with one JG and no repeated document gives every pair a count 0 or 1 one way only:
there ``prefs_pair*`` equal ``prefs_simp*`` bit for bit and no pair is listed.

``prefs_avgjg_Rnonrel`` (and ``_ret``) count, in a JG with R relevant and N > R
non-relevant documents, the preferences again with only the first R non-relevant ones;
trec_eval's EC version takes "the first R" as the R entries that follow the start of the
JG's last EC in its pool of docid ranks (the EC JGs of the query end to end).  With levels
below 0 the last EC can be shorter than R and trec_eval reads on into the next JG's ranks
(reproduced) or past the query's pool (memory it did not write: here the read stops at the
end of the pool).
"""
from __future__ import annotations

import numpy as np

from rankjit._config import jit

#: error codes of :func:`prefs_kernel` (``err[0]``)
ERR_TWO_LEVELS, ERR_ZERO_AND_NONZERO, ERR_CYCLE = 1, 2, 3
#: columns of :func:`prefs_kernel`'s output, in trec_eval's print order
PREFS_COLUMNS = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
    "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
)
_USHORT = 65536
#: a query's pair counts (prefs_pair*, when it has several JGs) are held in a dense ``nj x nj`` uint16
#: matrix (trec_eval's) when that has at most this many entries, or 8 times the query's preferences;
#: else as a sorted list of the preferences (memory by preferences, not by judged documents squared);
#: :func:`prefs_kernel` takes it as ``dense_max`` (< 0: always the list)
DENSE_MAX = 1 << 24


@jit
def _fw_add(tree, i, v):
    """Fenwick tree: add ``v`` at rank ``i``."""
    i += 1
    n = tree.shape[0]
    while i < n:
        tree[i] += v
        i += i & (-i)


@jit
def _fw_le(tree, i):
    """Fenwick tree: how many inserted ranks are <= ``i`` (0 for ``i < 0``)."""
    s = 0
    i += 1
    while i > 0:
        s += tree[i]
        i -= i & (-i)
    return s


@jit
def _ratio(a, b):
    return np.float64(a) / np.float64(b)  # numpy float64: 0/0 gives NaN, interpreted too


@jit
def _ec_bounds(rel, a, b):
    """Start of each EC (run of equal levels) of rows ``a:b``, then ``b``."""
    n = 1
    for i in range(a + 1, b):
        if rel[i] != rel[i - 1]:
            n += 1
    ec = np.empty(n + 1, dtype=np.int64)
    ec[0] = a
    k = 1
    for i in range(a + 1, b):
        if rel[i] != rel[i - 1]:
            ec[k] = i
            k += 1
    ec[n] = b
    return ec


@jit
def _ec_counts(rank, rel, ec, njr, tree, st):
    """Counts of an EC JG into ``st``; returns the docid rank of a document in two ECs, or -1.

    ``st``: ful_ret, poss_ret, ful_imp, poss_imp, notoccur, num_rel, num_rel_ret, num_nonrel,
    num_nonrel_ret.  ECs are walked from the lowest up, the lower ones held in ``tree``.
    """
    n_ec = ec.shape[0] - 1
    for e in range(n_ec):
        s, t = ec[e], ec[e + 1]
        ret = 0
        for i in range(s, t):
            if rank[i] < njr:
                ret += 1
        if rel[s] > 0.0:
            st[5] += t - s
            st[6] += ret
        else:
            st[7] += t - s
            st[8] += ret
    total = 0  # rows of the lower ECs, in the tree
    bad = -1
    for e in range(n_ec - 1, -1, -1):
        s, t = ec[e], ec[e + 1]
        if total > 0:
            below = _fw_le(tree, njr - 1)  # lower rows retrieved
            for i in range(s, t):
                x = rank[i]
                le = _fw_le(tree, x)
                lt = _fw_le(tree, x - 1)
                if le != lt:
                    bad = x
                    break
                if x < njr:
                    st[0] += below - le  # x < b < njr: fulfilled
                    st[2] += total - below  # b not retrieved: fulfilled, implied
                    st[1] += lt  # b < x: both retrieved, failed
                else:
                    st[4] += total - le + lt - below  # b > x, or njr <= b < x: neither retrieved
                    st[3] += below  # b retrieved, x not: failed, implied
        if bad >= 0:
            break
        for i in range(s, t):
            _fw_add(tree, rank[i], 1)
        total += t - s
    return bad  # (the caller empties the tree)


@jit
def _tree_remove(tree, rank, lo, hi):
    for i in range(lo, hi):
        _fw_add(tree, rank[i], -1)


@jit
def _ec_recount(rank, ec, njr, tree, nn, ret_only):
    """``(ful, poss)`` of trec_eval's Rnonrel recount of an EC JG.

    Pairs (a in EC i, b in EC j), i < j < the last EC, and (a in any EC, b in ``nn``):
    fulfilled when a < b and a is retrieved, possible always (``poss`` includes ``ful``).
    ``ret_only``: each EC cut to its retrieved prefix, fulfilled when a < b.
    """
    n_ec = ec.shape[0] - 1
    ful = 0
    pairs = 0
    total = 0
    for e in range(n_ec - 2, -1, -1):
        s, t = ec[e], ec[e + 1]
        if ret_only:
            while t > s and rank[t - 1] >= njr:
                t -= 1
        n_a = 0
        for i in range(s, t):
            x = rank[i]
            n_a += 1
            if x < njr:
                ful += total - _fw_le(tree, x)  # b > x in the lower ECs
        pairs += n_a * total
        for i in range(s, t):
            _fw_add(tree, rank[i], 1)
        total += t - s
    for e in range(n_ec - 2, -1, -1):
        s, t = ec[e], ec[e + 1]
        if ret_only:
            while t > s and rank[t - 1] >= njr:
                t -= 1
        _tree_remove(tree, rank, s, t)
    m = nn.shape[0]
    sorted_nn = np.sort(nn)
    n_a = 0
    for e in range(n_ec):
        s, t = ec[e], ec[e + 1]
        for i in range(s, t):
            x = rank[i]
            if ret_only and x >= njr:
                break
            n_a += 1
            if x < njr:
                ful += m - np.searchsorted(sorted_nn, x, side="right")  # b > x in nn
    pairs += n_a * m
    return ful, pairs  # (possible: every pair, the fulfilled ones included)


@jit
def _pa_build(rank, rel, jsg, a, b, loc):
    """Preference array of the rows ``a:b`` of a JG with several JSGs, on local indices.

    ``loc``: the JG's distinct docid ranks, ascending.  Returns ``(arr, last, bad_kind,
    bad_a, bad_b)``: ``arr[i, j] = 1`` when document loc[i] is preferred to loc[j] (after the
    transitive closure), ``last`` each document's level in its last row (trec_eval's
    rel_array, -1 to start with), and an error (``bad_kind`` > 0) with the docid ranks concerned.
    """
    m = loc.shape[0]
    arr = np.zeros((m, m), dtype=np.uint8)
    last = np.full(m, -1.0)
    for i in range(a, b):
        li = np.searchsorted(loc, rank[i])
        prev = last[li]
        r = rel[i]
        if (prev > 0.0 and r == 0.0) or (prev == 0.0 and r > 0.0):
            return arr, last, ERR_ZERO_AND_NONZERO, rank[i], -1
        last[li] = r
    # a > b for a above b in one JSG: edges to the next lower level suffice before the closure
    i = a
    while i < b:
        j = i
        while j < b and jsg[j] == jsg[i] and rel[j] == rel[i]:
            j += 1
        k = j
        while k < b and jsg[k] == jsg[i] and rel[k] == rel[j]:
            k += 1
        if j < b and jsg[j] == jsg[i]:
            for p in range(i, j):
                lp = np.searchsorted(loc, rank[p])
                for q in range(j, k):
                    arr[lp, np.searchsorted(loc, rank[q])] = 1
        i = j
    for k in range(m):  # Warshall: arr[i] |= arr[k] when i reaches k
        for i in range(m):
            if arr[i, k]:
                for j in range(m):
                    if arr[k, j]:
                        arr[i, j] = 1
    for i in range(m):
        arr[i, i] = 0
    for i in range(m):
        for j in range(i + 1, m):
            if arr[i, j] and arr[j, i]:
                return arr, last, ERR_CYCLE, loc[i], loc[j]
    return arr, last, 0, -1, -1


@jit
def _pa_counts(arr, last, loc, njr, st):
    """Counts of a preference-array JG into ``st`` (same layout as :func:`_ec_counts`)."""
    m = loc.shape[0]
    for i in range(m):
        if last[i] > 0.0:
            st[5] += 1
            if loc[i] < njr:
                st[6] += 1
        elif last[i] == 0.0:
            st[7] += 1
            if loc[i] < njr:
                st[8] += 1
    for i in range(m):
        ri = loc[i]
        for j in range(m):
            if arr[i, j]:
                rj = loc[j]
                if ri < njr:
                    if rj < ri:
                        st[1] += 1
                    elif rj < njr:
                        st[0] += 1
                    else:
                        st[2] += 1
                elif rj < njr:
                    st[3] += 1
                else:
                    st[4] += 1
    st[1] += st[0]
    st[3] += st[2]


@jit
def _pa_recount(arr, last, loc, njr, n_rel, nj, ret_only):
    """``(ful, poss)`` of trec_eval's Rnonrel recount of a preference-array JG.

    The non-relevant documents from the ``n_rel + 1``-th (in docid-rank order; among the
    retrieved ones with ``ret_only``) on are left out.
    """
    m = loc.shape[0]
    first_out = njr if ret_only else nj
    seen = 0
    for i in range(m):
        if ret_only and loc[i] >= njr:
            break
        if last[i] == 0.0:
            seen += 1
            if seen == n_rel + 1:
                first_out = loc[i]
                break
    ful = 0
    poss = 0
    for i in range(m):
        ri = loc[i]
        if (ri >= first_out and last[i] == 0.0) or (ret_only and ri >= njr):
            continue
        for j in range(m):
            rj = loc[j]
            if not arr[i, j] or (rj >= first_out and last[j] == 0.0) or (ret_only and rj >= njr):
                continue
            if ri < njr and rj > ri:
                ful += 1
            else:
                poss += 1
    return ful, poss + ful


@jit
def _rnonrel(st, ret_only):
    """One JG's term of prefs_avgjg_Rnonrel(_ret) when R >= N: N is padded to R (trec_eval)."""
    if ret_only:
        r, n = st[6], st[8]
        f = st[0] + st[6] * (r - n)
        p = st[1] + st[5] * (r - n)
    else:
        r, n = st[5], st[7]
        f = st[0] + st[2] + st[6] * (r - n)
        p = st[1] + st[3] + st[4] + st[5] * (r - n)
    return _ratio(f, p)


@jit
def _set_err(err, code, q, a, b, g):
    err[0] = code
    err[1] = q
    err[2] = a
    err[3] = b
    err[4] = g


@jit
def _pair_key(x, y, nj):
    """A preference x > y as ``2 * (i * nj + j) + d``: i < j its docid ranks, d = 1 when j is preferred."""
    if x < y:
        return 2 * (x * nj + y)
    return 2 * (y * nj + x) + 1


@jit
def _add_pref(x, y, counts, pairs, n_pairs, nj):
    """Count the preference x > y: in ``counts`` (uint16, wrapping as trec_eval's) or appended to ``pairs``."""
    if counts.shape[0]:
        counts[x, y] = (int(counts[x, y]) + 1) & 0xFFFF
        return n_pairs
    pairs[n_pairs] = _pair_key(x, y, nj)
    return n_pairs + 1


@jit
def _pair_sums_dense(counts, njr, nj):
    """prefs_pair's sums over pairs (i < j): ``(sum both retrieved, n1, sum + exactly one retrieved, n2, n3)``."""
    s = np.float64(0.0)
    n1 = n2 = n3 = 0
    for i in range(njr):  # trec_eval's loops, in its order
        for j in range(i + 1, njr):
            if counts[i, j] or counts[j, i]:
                n1 += 1
                s += _ratio(counts[i, j], int(counts[i, j]) + int(counts[j, i]))
    s1 = s
    for i in range(njr):
        for j in range(njr, nj):
            if counts[i, j] or counts[j, i]:
                n2 += 1
                s += _ratio(counts[i, j], int(counts[i, j]) + int(counts[j, i]))
    for i in range(njr, nj):
        for j in range(i + 1, nj):
            if counts[i, j] or counts[j, i]:
                n3 += 1
    return s1, n1, s, n2, n3


@jit
def _pair_sums_sparse(pairs, n_pairs, njr, nj):
    """:func:`_pair_sums_dense` from the list of preferences (keys of :func:`_pair_key`)."""
    keys = np.sort(pairs[:n_pairs])
    s = np.float64(0.0)
    s1 = s
    n1 = n2 = n3 = 0
    for area in range(2):  # both retrieved, then exactly one: trec_eval's order of the sum
        i = 0
        while i < n_pairs:
            key = keys[i] >> 1
            c_fwd = 0
            c_bwd = 0
            while i < n_pairs and (keys[i] >> 1) == key:
                if keys[i] & 1:
                    c_bwd += 1
                else:
                    c_fwd += 1
                i += 1
            c_fwd %= _USHORT
            c_bwd %= _USHORT
            if c_fwd == 0 and c_bwd == 0:
                continue
            x = key // nj
            y = key % nj
            if area == 0 and y < njr:
                n1 += 1
                s += _ratio(c_fwd, c_fwd + c_bwd)
            elif area == 1 and x < njr <= y:
                n2 += 1
                s += _ratio(c_fwd, c_fwd + c_bwd)
            elif area == 1 and x >= njr:
                n3 += 1
        if area == 0:
            s1 = s
    return s1, n1, s, n2, n3


@jit
def prefs_kernel(q_off, jg, jsg, rel, rank, nj, njr, dense_max, out, err):
    """trec_eval's 14 prefs measures of each query (``out[q]``, :data:`PREFS_COLUMNS`).

    Rows ``q_off[q]:q_off[q + 1]`` are query q's preferences sorted by JG, JSG, level
    descending, docid rank (``rank``); ``jg`` / ``jsg`` are codes, ``nj`` / ``njr`` the judged
    and judged-retrieved documents of each query; ``dense_max``: see :data:`DENSE_MAX`.  Stops at
    the first inconsistent query: ``err = (code, query, docid rank, docid rank, JG)`` (code 0: none).

    Long because the 14 measures come from one walk over each query's judgment groups (JGs):
    the pair counts of every JG feed all of them at once (m_prefs_*.c compute them from one
    shared table per query), so the walk, its consistency checks and the per-query sums stay together.
    """
    n_q = q_off.shape[0] - 1
    top = 1
    for q in range(n_q):
        top = max(top, nj[q])
    tree = np.zeros(top + 2, dtype=np.int64)
    st = np.zeros(9, dtype=np.int64)
    for q in range(n_q):
        lo, hi = q_off[q], q_off[q + 1]
        J, NJ = njr[q], nj[q]
        # JGs, their kind (several JSGs: preference array), the pool of EC ranks, the pair bound
        n_jg = 0
        for i in range(lo, hi):
            if i == lo or jg[i] != jg[i - 1]:
                n_jg += 1
        jstart = np.empty(n_jg + 1, dtype=np.int64)
        is_pa = np.zeros(n_jg, dtype=np.bool_)
        pool_at = np.zeros(n_jg, dtype=np.int64)  # where each EC JG starts in the pool
        pool = np.empty(hi - lo, dtype=np.int64)
        k = 0
        for i in range(lo, hi):
            if i == lo or jg[i] != jg[i - 1]:
                jstart[k] = i
                k += 1
            elif jsg[i] != jsg[i - 1]:
                is_pa[k - 1] = True
        jstart[n_jg] = hi
        n_pool = 0
        general = n_jg > 1
        bound = 0
        for g in range(n_jg):
            a, b = jstart[g], jstart[g + 1]
            if is_pa[g]:
                bound += (b - a) * (b - a - 1) // 2
                continue
            pool_at[g] = n_pool
            for i in range(a, b):
                pool[n_pool] = rank[i]
                n_pool += 1
                if i > a and rank[i] == rank[i - 1] and rel[i] == rel[i - 1]:
                    general = True  # a repeated row: pair counts above 1
            ec = _ec_bounds(rel, a, b)
            sq = 0
            for e in range(ec.shape[0] - 1):
                sq += (ec[e + 1] - ec[e]) * (ec[e + 1] - ec[e])
            bound += ((b - a) * (b - a) - sq) // 2
        dense = general and dense_max >= 0 and NJ * NJ <= max(dense_max, 8 * bound)
        counts = np.zeros((NJ, NJ) if dense else (0, 0), dtype=np.uint16)  # c[i][j]: JGs preferring i to j
        pairs = np.empty(bound if general and not dense else 0, dtype=np.int64)
        n_pairs = 0

        fr = pr = fi = pi = no = 0
        s_avg = np.float64(0.0)
        s_ret = np.float64(0.0)
        s_imp = np.float64(0.0)
        s_rn = np.float64(0.0)
        s_rn_ret = np.float64(0.0)
        for g in range(n_jg):
            a, b = jstart[g], jstart[g + 1]
            st[:] = 0
            if not is_pa[g]:
                ec = _ec_bounds(rel, a, b)
                bad = _ec_counts(rank, rel, ec, J, tree, st)
                if bad >= 0:
                    _set_err(err, ERR_TWO_LEVELS, q, bad, -1, jg[a])
                    return
                _tree_remove(tree, rank, a, b)
                st[1] += st[0]
                st[3] += st[2]
                if general:
                    for e in range(ec.shape[0] - 1):
                        for i in range(ec[e], ec[e + 1]):
                            for j in range(ec[e + 1], b):
                                n_pairs = _add_pref(rank[i], rank[j], counts, pairs, n_pairs, NJ)
                loc = np.empty(0, dtype=np.int64)
                arr = np.empty((0, 0), dtype=np.uint8)
                last = np.empty(0, dtype=np.float64)
            else:
                ec = np.empty(0, dtype=np.int64)
                loc = np.unique(rank[a:b])
                arr, last, kind, x, y = _pa_build(rank, rel, jsg, a, b, loc)
                if kind != 0:
                    _set_err(err, kind, q, x, y, jg[a])
                    return
                _pa_counts(arr, last, loc, J, st)
                if general:
                    for i in range(loc.shape[0]):
                        for j in range(loc.shape[0]):
                            if arr[i, j]:
                                n_pairs = _add_pref(loc[i], loc[j], counts, pairs, n_pairs, NJ)
            fr += st[0]
            pr += st[1]
            fi += st[2]
            pi += st[3]
            no += st[4]
            poss = st[1] + st[3] + st[4]
            if poss:
                s_avg += _ratio(st[0] + st[2], poss)
            if st[1]:
                s_ret += _ratio(st[0], st[1])
            if st[1] + st[3]:
                s_imp += _ratio(st[0] + st[2], st[1] + st[3])
            # Rnonrel: R relevant, N non-relevant; when N > R, count again with R non-relevant only
            for ret_only in (False, True):
                r_rel = st[6] if ret_only else st[5]
                n_non = st[8] if ret_only else st[7]
                if r_rel >= n_non:
                    term = _rnonrel(st, ret_only)
                elif not is_pa[g]:
                    start = pool_at[g] + (ec[ec.shape[0] - 2] - a)  # the last EC, in the pool
                    end = min(start + r_rel, n_pool)  # (trec_eval reads on past the pool: not here)
                    if ret_only:
                        stop = start
                        while stop < end and pool[stop] < J:
                            stop += 1
                        end = stop
                    f, p = _ec_recount(rank, ec, J, tree, pool[start:end], ret_only)
                    term = _ratio(f, p)
                else:
                    f, p = _pa_recount(arr, last, loc, J, st[5], NJ, ret_only)
                    term = _ratio(f, p)
                if ret_only:
                    s_rn_ret += term
                else:
                    s_rn += term

        o = out[q]
        o[0] = pr + pi + no
        o[1] = fr + fi
        o[2] = fr
        if pr + pi + no:
            o[3] = _ratio(fr + fi, pr + pi + no)
        if s_avg > 0.0:
            o[5] = s_avg / n_jg
        if s_rn > 0.0:  # (NaN: a JG of 0/0 sets the query to 0, as in trec_eval)
            o[6] = s_rn / n_jg
        if pr:
            o[7] = _ratio(fr, pr)
        if s_ret > 0.0:
            o[9] = s_ret / n_jg
        if s_rn_ret > 0.0:
            o[10] = s_rn_ret / n_jg
        if pr + pi:
            o[11] = _ratio(fr + fi, pr + pi)
        if s_imp > 0.0:
            o[13] = s_imp / n_jg
        if not general:  # every pair counted once, one way: prefs_pair* = prefs_simp*
            o[4] = o[3]
            o[8] = o[7]
            o[12] = o[11]
            continue
        if dense:
            s1, n1, s, n2, n3 = _pair_sums_dense(counts, J, NJ)
        else:
            s1, n1, s, n2, n3 = _pair_sums_sparse(pairs, n_pairs, J, NJ)
        if n1:
            o[8] = s1 / n1
        if n1 + n2:
            o[12] = s / (n1 + n2)
        if n1 + n2 + n3:
            o[4] = s / (n1 + n2 + n3)


@jit
def jg_kernel(g_query, num_rel, num_ret, r_off, rel_ranks, cutoffs, pcts, n_jgs, out_map, out_p, out_r):
    """map_avgjg, P_avgjg and Rprec_mult_avgjg (``m_*_avgjg.c``), added JG by JG into each query.

    Group g (a query's JG, in order) has ``num_rel[g]`` relevant judgments, ``num_ret[g]``
    retrieved documents and its relevant retrieved ones at the 1-based ranks
    ``rel_ranks[r_off[g]:r_off[g + 1]]`` (ascending).  A query with several JGs gets the
    sum divided by their number.
    """
    n_g = g_query.shape[0]
    for g in range(n_g):
        q = g_query[g]
        rr = rel_ranks[r_off[g]:r_off[g + 1]]
        n = rr.shape[0]
        s = np.float64(0.0)
        for k in range(n):
            s += np.float64(k + 1) / np.float64(rr[k])  # precision at each relevant document
        if n:
            out_map[q] += s / np.float64(num_rel[g])
        for c in range(cutoffs.shape[0]):
            cut = cutoffs[c]
            out_p[q, c] += np.float64(np.searchsorted(rr, cut, side="right")) / np.float64(cut)
        for c in range(pcts.shape[0]):
            cut = int(pcts[c] * num_rel[g] + 0.9)  # C's (long) cast: toward 0
            if cut > num_ret[g]:
                out_r[q, c] += np.float64(n) / np.float64(cut)
            elif cut >= 1:
                out_r[q, c] += np.float64(np.searchsorted(rr, cut, side="right")) / np.float64(cut)
    for q in range(n_jgs.shape[0]):
        if n_jgs[q] > 1:
            out_map[q] /= n_jgs[q]
            for c in range(cutoffs.shape[0]):
                out_p[q, c] /= n_jgs[q]
            for c in range(pcts.shape[0]):
                out_r[q, c] /= n_jgs[q]
