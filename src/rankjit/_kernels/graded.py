"""Graded measures: DCG@k and nDCG@k with configurable gain and per-rank discount.

DCG@k = sum_{r <= k} gain(y_(r)) * w[r - 1], the weights ``w`` precomputed per
measure (1/log2(r+1), 1/r, the log_b discount, or the caller's array).  The ideal
DCG comes either from a histogram of grades (integer labels: ``O(n + G)``) or from a
partial sort of the gains (non-integer labels).
"""
import numpy as np

from rankjit._config import jit
from rankjit._kernels.values import label_value


@jit(inline="always")
def dcg(rlab, ranks, L, kk, mode, tables, value_off, weight_off):
    """DCG@kk of a ranked list: labels ``rlab[:L]`` at 1-based ``ranks[:L]`` (ascending)."""
    s = 0.0
    for i in range(L):
        r = ranks[i]
        if r > kk:
            break
        s += label_value(rlab[i], mode, tables, value_off) * tables[weight_off + r - 1]
    return s


@jit
def avg_dcg(rlab, gend, n, kk, mode, tables, value_off, weight_off):
    """E[DCG@k] over tied orders: each slot of a group gets the group's mean gain.

    ``rlab[:n]``: the row's labels sorted by score; ``gend[a]``: the end (exclusive) of the
    group of tied scores holding position ``a``.
    """
    s = 0.0
    a = 0
    while a < n and a < kk:
        b = gend[a]
        mean = 0.0
        for t in range(a, b):
            mean += label_value(rlab[t], mode, tables, value_off)
        mean /= b - a
        for p in range(a, min(b, kk)):
            s += mean * tables[weight_off + p]
        a = b
    return s


@jit
def ideal_dcg_hist(hist, itables, order_off, n_ideal, kk, tables, value_off, cum_off):
    """IDCG from counts per grade: grades in descending gain order fill ranks ``lo .. hi - 1``.

    IDCG@k = sum_g gain(g) * (C[hi_g] - C[lo_g]) with ``C`` the cumulative weights
    (``C[r] = w[0] + ... + w[r - 1]``), ``lo_g`` the ranks taken by better grades and
    ``hi_g = min(k, lo_g + count_g)``: a branch-free loop over the grades.  ``kk`` must
    not exceed the weight table.
    """
    s = 0.0
    lo = 0
    for t in range(n_ideal):
        g = itables[order_off + t]
        hi = min(kk, lo + hist[g])
        s += tables[value_off + g] * (tables[cum_off + hi] - tables[cum_off + lo])
        lo = hi
    return s


@jit
def grade_histogram(labels, start, count, mask, use_mask, hist, grades, order, n_counted):
    """Real documents per grade in the row, for the grades ``order[:n_counted]``.

    Needs every real label in ``0 .. hist.shape[0] - 1``.  ``grades[g]`` (grade ``g`` in
    the labels' own dtype) lets each grade's count compare narrow integers (one
    vectorised pass per grade).  With a mask every grade is counted by one scattered
    pass.  (Short unmasked rows on a scale of at most 8 grades never get here: the
    engine counts them with packed byte counters, fused with the ideal DCG.)
    """
    row = labels[start:start + count]
    if not use_mask:
        for t in range(n_counted):
            g = order[t]
            gv = grades[g]
            if gv != g:  # grade g does not fit the labels' dtype (wrapped): no label has it
                hist[g] = 0
                continue
            c = np.int32(0)
            for i in range(count):
                c = np.int32(c + np.int32(row[i] == gv))
            hist[g] = c
        return
    for g in range(hist.shape[0]):
        hist[g] = 0
    for i in range(count):
        if mask[start + i]:
            hist[int(row[i])] += 1


@jit
def ideal_dcg_values(labels, start, count, mask, use_mask, kk, mode, tables, value_off, cum_off, buf):
    """IDCG from the gains themselves: top-kk of the row's gains, descending.

    Summed as :func:`ideal_dcg_hist` sums it, one term per run of equal gains,
    ``gain * (C[hi] - C[lo])``, so that both give the same bits for the same gains: a
    query's nDCG does not depend on whether the other queries of the call made the plan
    use a by-grade table (grades <= 62) or the gains themselves.
    """
    n = 0
    for p in range(start, start + count):
        if not use_mask or mask[p]:
            buf[n] = label_value(labels[p], mode, tables, value_off)
            n += 1
    d = min(kk, n)
    # selection sort of the d largest gains (d is a cutoff; rows are short)
    for r in range(d):
        best = r
        for t in range(r + 1, n):
            if buf[t] > buf[best]:
                best = t
        tmp = buf[r]
        buf[r] = buf[best]
        buf[best] = tmp
    s = 0.0
    lo = 0
    while lo < d:
        hi = lo + 1
        while hi < d and buf[hi] == buf[lo]:
            hi += 1
        s += buf[lo] * (tables[cum_off + hi] - tables[cum_off + lo])
        lo = hi
    return s