"""Cascade measures: ERR@k and pFound@k, and the C/W/L walks (NERR8-NERR11, INST, BPM).

ERR and pFound read the documents of the ranked list in order with a probability R_r
that the user is satisfied at rank r (by-grade table, or the label itself):

ERR@k    = sum_{r <= k} u(r) R_r prod_{i < r} (1 - R_i),   u(r) = 1/r or 1/log2(r+1)
pFound@k = sum_{r <= k} pLook_r R_r,  pLook_r = (1 - p_break)^(r-1) prod_{i < r} (1 - R_i)

A document with R = 0 leaves both products unchanged, so the engine may hand over a
list holding only the documents with a non-zero R; the per-rank weights (u(r), or
(1 - p_break)^(r-1)) are precomputed tables.

The C/W/L walk (:func:`cwl_walk`: NERR8-NERR11, INST, BPM; Moffat et al. 2013, Azzopardi,
Thomas & Moffat 2019) is a cascade too, normalised: the user goes on from rank i to i + 1
with probability C_i, reaches rank i with ``reach_i = prod_{j<i} C_j``, and the measure is
the expected gain per document read, ``EU = sum_i reach_i g_i / sum_i reach_i`` over the
ranks 1..N (N: the cutoff within cwl_eval's horizon of 1000), whether documents stand
there or not.  Ranks without gain still weigh in the normaliser, so the walk steps over
the runs of such ranks between two documents of the list in closed form (a query costs
O(L), not O(N)), and agrees with the rank-by-rank products to rounding (1e-13).

Compat (:func:`compat_walk`; Clarke, Vtyurina & Smucker 2021) is a walk of the same kind:
the rank-biased overlap of the ranking with an ideal ranking of the relevant documents,
summed document by document from the ranked list's relevant documents.
"""
import numpy as np

from rankjit._config import jit
from rankjit._kernels.layout import (
    CWL_BPM, CWL_INST, F_EMPTY, F_OFFSET, F_PARAM, I_CUM_OFF, I_CWL_KIND, I_K, I_N_GRADES, I_VALUE_OFF, I_WEIGHT_OFF,
)
from rankjit._kernels.values import label_value


@jit(inline="always")
def cascade(rlab, ranks, L, kk, mode, tables, value_off, weight_off):
    s = 0.0
    stay = 1.0  # prod_{i < r} (1 - R_i)
    for i in range(L):
        r = ranks[i]
        if r > kk:
            break
        rv = label_value(rlab[i], mode, tables, value_off)
        s += tables[weight_off + r - 1] * stay * rv
        stay *= 1.0 - rv
    return s


#: INST: runs of ranks without gain up to this length are walked rank by rank, longer ones summed in closed form
RUN_LOOP = 16


@jit(inline="always")
def _inverse_squares(a, d):
    """``sum_{j=0}^{d-1} 1 / (a + j)^2`` for ``a > 0`` and an integer ``d >= 0``: a difference of trigammas.

    The terms below 16 are added one by one (the recurrence ``psi1(z) = psi1(z + 1) + 1/z^2``);
    then ``psi1(A) - psi1(B)``, ``B = A + d``, from the asymptotic series
    ``psi1(z) = 1/z + 1/(2z^2) + 1/(6z^3) - 1/(30z^5) + 1/(42z^7) - 1/(30z^9) + 5/(66z^11) - ...``
    (error below 1e-16 from z = 16 on), its first three terms differenced exactly
    (``1/A - 1/B = d/(AB)``, ...) so that nothing cancels when A and B are close.
    """
    acc = np.float64(0.0)
    z = np.float64(a)
    while d > 0 and z < 16.0:
        acc += 1.0 / (z * z)
        z += 1.0
        d -= 1
    if d == 0:
        return acc
    b = z + d
    ab = z * b
    # 1/A - 1/B + (1/A^2 - 1/B^2) / 2 + (1/A^3 - 1/B^3) / 6, each difference with the factor d = B - A taken out
    head = d / ab * (1.0 + (z + b) / (2.0 * ab) + (z * z + ab + b * b) / (6.0 * ab * ab))
    ua = 1.0 / (z * z)
    ub = 1.0 / (b * b)
    # the remaining terms, u^5 (-1/30 + u^2/42 - u^4/30 + 5u^6/66) with u = 1/z: below 1e-7 of the sum
    tail_a = ua * ua / z * (-1.0 / 30.0 + ua * (1.0 / 42.0 + ua * (-1.0 / 30.0 + ua * 5.0 / 66.0)))
    tail_b = ub * ub / b * (-1.0 / 30.0 + ub * (1.0 / 42.0 + ub * (-1.0 / 30.0 + ub * 5.0 / 66.0)))
    return acc + head + (tail_a - tail_b)


@jit
def _inst_run(a, b, s, reach):
    """``(sum_{i=a}^{b} reach_i, reach_{b+1})`` over INST's ranks a..b without gain, ``reach_a = reach``.

    There ``C_i = ((x_i - 1) / x_i)^2`` with ``x_i = i + s`` (``s = 2T - CG``, constant over
    the run), so the product telescopes: ``reach_i = reach_a ((a + s - 1) / (i + s - 1))^2``.
    """
    den = np.float64(0.0)
    if b - a < RUN_LOOP:
        for i in range(a, b + 1):
            den += reach
            x = i + s
            c = (x - 1.0) / x
            reach *= c * c  # C_i = ((x_i - 1) / x_i)^2
        return den, reach
    first = a + s - 1.0  # x_a - 1 >= 2T > 0: CG <= a - 1
    den = reach * first * first * _inverse_squares(first, b - a + 1)  # reach_a (a+s-1)^2 sum_i 1/(i+s-1)^2
    last = b + s
    c = first / last
    return den, reach * (c * c)  # reach_{b+1} = reach_a ((a + s - 1) / (b + s))^2


@jit
def cwl_walk(rlab, ranks, L, ip, fp, tables):
    """A C/W/L measure's expected gain per document read over ranks ``1 .. I_K``: the measure's plan row ``ip``, ``fp``.

    Unpacked from the row here, not at the call, to keep the engine's measure pass short
    (its bytecode is compiled for every variant, this only for the variants that ask).
    """
    return _walk(rlab, ranks, L, ip[I_K], ip[I_CWL_KIND], fp[F_PARAM], tables, ip[I_VALUE_OFF], ip[I_WEIGHT_OFF],
                 ip[I_CUM_OFF])


@jit(inline="always")
def _walk(rlab, ranks, L, n_ranks, kind, param, tables, value_off, weight_off, cum_off):
    """A C/W/L measure's expected gain per document read over ranks ``1 .. n_ranks``.

    ``EU = sum_i reach_i g_i / sum_i reach_i``, ``reach_i = prod_{j<i} C_j``, with
    ``g_i = tables[value_off + label]`` the gain of the document at rank i: the labels
    ``rlab[:L]`` at 1-based ``ranks[:L]`` (ascending); every other rank, past the row's end
    too, has gain 0.  ``C_{n_ranks}`` is never used.  ``C_i`` by ``kind`` (``CG_i = g_1 +
    ... + g_i``; ``param`` is p or T):

    * NERR8-NERR11: ``C_i = c_i (1 - g_i)``, ``c_i`` by rank alone (1, ``i / (i + 1)``, ``p``,
      ``((i + 2T - 1) / (i + 2T))^2``), so ``reach_i = P_i stay_i`` with ``P_i = prod_{j<i} c_j``
      (``tables[weight_off + i - 1]``) and ``stay_i = prod_{j<i} (1 - g_j)``, which changes
      at the documents of the list only; the ranks ``lo+1 .. r`` up to the next document add
      ``stay (S_r - S_lo)`` to the normaliser, ``S_i = P_1 + ... + P_i``
      (``tables[cum_off + i]``);
    * INST: ``C_i = ((x - 1) / x)^2``, ``x = i + T + (T - CG_i)``;
    * BPM: ``C_i = 1`` while ``CG_i < T``, else 0: ``EU = CG_n / n`` at the stop n (n_ranks
      when the gain never reaches T).
    """
    if kind == CWL_BPM:
        cg = np.float64(0.0)
        for t in range(L):
            r = ranks[t]
            if r > n_ranks:
                break
            cg += tables[value_off + int(rlab[t])]
            if cg >= param:  # C_r = 0: the user stops at rank r
                return cg / r
        return cg / n_ranks
    num = np.float64(0.0)  # sum_i reach_i g_i
    den = np.float64(0.0)  # sum_i reach_i (>= reach_1 = 1)
    lo = 0  # the ranks 1..lo are counted
    if kind == CWL_INST:
        reach = np.float64(1.0)
        cg = np.float64(0.0)
        for t in range(L):
            r = ranks[t]
            if r > n_ranks:
                break
            g = tables[value_off + int(rlab[t])]
            if g == 0.0:  # a rank of the run (so the value never depends on which such ranks the list holds)
                continue
            run, reach = _inst_run(lo + 1, r - 1, param + (param - cg), reach)  # the ranks without gain before r
            den += run
            num += reach * g
            den += reach
            cg += g
            x = r + param + (param - cg)  # x = i + T + T_i, T_i = T - CG_i: the gain still wanted
            c = (x - 1.0) / x
            reach *= c * c  # C_r = ((x - 1) / x)^2
            lo = r
        run, reach = _inst_run(lo + 1, n_ranks, param + (param - cg), reach)
        return num / (den + run)
    stay = np.float64(1.0)  # prod_{j<i} (1 - g_j)
    for t in range(L):
        r = ranks[t]
        if r > n_ranks:
            break
        g = tables[value_off + int(rlab[t])]
        if g == 0.0:  # counted with the ranks up to the next document
            continue
        den += stay * (tables[cum_off + r] - tables[cum_off + lo])  # ranks lo+1..r: sum P_i stay
        num += stay * tables[weight_off + r - 1] * g  # reach_r g_r = P_r stay_r g_r
        stay *= 1.0 - g
        lo = r
        if stay == 0.0:  # g_r = 1: no rank after r is reached
            break
    den += stay * (tables[cum_off + n_ranks] - tables[cum_off + lo])
    return num / den


@jit(inline="always")
def _judged_by_grade(q, ideal_offsets, ideal_entries, hist, width):
    """``hist[g]``: query ``q``'s judged documents of grade ``g``, for ``g < width``."""
    for g in range(width):
        hist[g] = 0
    for j in range(ideal_offsets[q], ideal_offsets[q + 1]):
        g = ideal_entries[j, 0]
        if g < width:
            hist[g] = ideal_entries[j, 1]


@jit
def compat_walk(rlab, ranks, L, n, n_nonneg, q, ideal_offsets, ideal_entries, hist, ip, fp, tables):
    """Compat: the rank-biased overlap of the ranking with the ideal ranking, over the ideal's own (normalize).

    ``RBO = sum_{i<D} p^i |A_i| / (i + 1) / sum_{i<D} p^i`` with ``A_i`` the documents
    at 0-based positions ``<= i`` of both the ranking and the ideal (the relevant
    documents, label > 0, by grade descending) and ``D = max(n, R)``.  A relevant
    document is in ``A_i`` from ``i = m_d = max(r_d - 1, j_d)`` on (``r_d``: its rank,
    ``j_d``: its ideal position), so ``RBO = sum_d T(m_d) / Z`` with
    ``T(m) = H[D] - H[m]``, ``H[i] = sum_{t<i} p^t / (t + 1)`` (``tables`` at
    ``I_WEIGHT_OFF``) and ``Z = sum_{i<D} p^i`` (at ``I_VALUE_OFF``); normalised (``fp[F_OFFSET]``
    is 1), ``Z = sum_{j<R} T(j)``, the ideal's own sum (added as the documents' terms are, so that
    the ideal ranking itself gets 1 exactly).

    ``j_d``: the ideal holds grade g's documents after the ``R_{>g}`` of higher grades;
    within a grade, the retrieved ones with a score >= 0 in rank order, then the
    unretrieved ones (ir_measures scores them 0.0), then those with a negative score in
    rank order.  ``n_nonneg``: the documents of the row with a score >= 0 (they rank
    first); the judged counts (``ideal_offsets``, ``ideal_entries``: query ``q``'s (grade, count)
    rows; none: the row's own grades, nothing unretrieved) give the query's documents by grade.
    ``hist`` (scratch, a slot per grade 0 .. ``I_N_GRADES`` - 1) holds the next ideal position of
    each grade.  The walk reads the relevant documents of the list alone.
    """
    h_off = ip[I_WEIGHT_OFF]
    given = ideal_offsets.shape[0] > 0
    width = ip[I_N_GRADES]
    if given:
        _judged_by_grade(q, ideal_offsets, ideal_entries, hist, width)
    else:
        n_nonneg = n  # nothing unretrieved: the signs do not matter
        for g in range(width):
            hist[g] = 0
        for i in range(L):
            y = rlab[i]
            if y > 0:
                hist[int(y)] += 1
    R = 0  # relevant documents of the query; hist[g] becomes R_{>g}, grade g's first ideal position
    for g in range(width - 1, 0, -1):
        c = hist[g]
        hist[g] = R
        R += c
    if R == 0:
        return fp[F_EMPTY] if fp[F_OFFSET] > 0.0 else 0.0
    D = max(n, R)
    top = tables[h_off + D]  # H[D]: T(m) = H[D] - H[m]
    s = np.float64(0.0)
    stop = L
    for i in range(L):
        r = ranks[i]
        if r > n_nonneg:  # a negative score: after the unretrieved documents of its grade
            stop = i
            break
        y = rlab[i]
        if y > 0:
            g = int(y)
            j = hist[g]
            hist[g] = j + 1
            s += top - tables[h_off + min(max(r - 1, j), D - 1)]  # T(max(r_d - 1, j_d)); m < D unless
            # ideal_counts holds fewer documents of a grade than the row (refused after the pass)
    if stop < L:  # the negative scores, from the last: grade g's last ideal positions, backwards
        _judged_by_grade(q, ideal_offsets, ideal_entries, hist, width)
        last = 0
        for g in range(width - 1, 0, -1):
            last += hist[g]
            hist[g] = last - 1  # R_{>=g} - 1
        for i in range(L - 1, stop - 1, -1):
            y = rlab[i]
            if y > 0:
                g = int(y)
                j = hist[g]
                hist[g] = j - 1
                s += top - tables[h_off + min(max(ranks[i] - 1, j), D - 1)]
    if fp[F_OFFSET] > 0.0:
        z = np.float64(0.0)
        for j in range(R):
            z += top - tables[h_off + j]  # sum_{j<R} T(j) >= T(0) = H[D] >= 1
        return s / z
    return s / tables[ip[I_VALUE_OFF] + D]  # Z = sum_{i<D} p^i >= 1
