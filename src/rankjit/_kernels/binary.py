"""Binary-relevance measures: P@k, recall@k, success@k, RR@k, AP@k, R-precision, the set measures, IPrec,
Bpref and infAP.

A document is relevant when ``label >= rel``.  Row functions read a ranked list: the
labels ``rlab[:L]`` of its documents with their 1-based ``ranks[:L]`` ascending;
documents absent from the list never count as relevant, which the engine guarantees.  The ``avg_*``
functions give the exact expectation over every order of tied documents
(McSherry & Najork 2008) from the whole row sorted by score: its labels ``rlab[:n]`` and,
at each position, the end (exclusive) ``gend`` of its group of tied scores.
"""
import numpy as np

from rankjit._config import jit
from rankjit._kernels.layout import (
    NUM_Q, NUM_REL, NUM_REL_RET, NUM_RET, SET_AP, SET_P, SET_R, SET_REL_P,
)


@jit(inline="always")
def hits(rlab, ranks, L, kk, rel):
    """Number of relevant documents ranked at or above ``kk``."""
    h = 0
    for i in range(L):
        if ranks[i] > kk:
            break
        if rlab[i] >= rel:
            h += 1
    return h


@jit(inline="always")
def reciprocal_rank(rlab, ranks, L, kk, rel):
    """RR@k = 1 / rank of the first relevant document within the cutoff, else 0."""
    for i in range(L):
        if ranks[i] > kk:
            break
        if rlab[i] >= rel:
            return 1.0 / ranks[i]
    return 0.0


@jit(inline="always")
def ap_sum(rlab, ranks, L, kk, rel, tables, inv_off):
    """sum_{r <= kk} rel_r * P@r (the numerator of AP@k); ``tables[inv_off + r - 1] = 1/r``."""
    h = 0
    s = 0.0
    for i in range(L):
        if ranks[i] > kk:
            break
        if rlab[i] >= rel:
            h += 1
            s += h * tables[inv_off + ranks[i] - 1]  # P@r = h / r at a relevant rank r (no division)
    return s


@jit
def count_relevant(labels, start, count, mask, use_mask, rel):
    """R = number of relevant real documents in the row (``label >= rel``).

    ``rel`` may be a float, or a threshold of the labels' own dtype (a narrower,
    faster vectorised compare; the kernel is compiled for each).
    """
    row = labels[start:start + count]
    c = np.int32(0)
    if use_mask:
        row_mask = mask[start:start + count]
        for t in range(count):
            c = np.int32(c + np.int32((row[t] >= rel) & row_mask[t]))
    else:
        for t in range(count):
            c = np.int32(c + np.int32(row[t] >= rel))
    return c


# ---- expectations over tied orders -------------------------------------------------


@jit(inline="always")
def group_relevant(rlab, a, b, rel):
    """Number of relevant documents among rank positions ``a .. b-1``."""
    r = 0
    for t in range(a, b):
        r += rlab[t] >= rel
    return r


@jit
def avg_hits(rlab, gend, n, kk, rel):
    """E[# relevant in the top kk]: a tie group contributes its relevant share per slot."""
    total = 0.0
    a = 0
    while a < n and a < kk:
        b = gend[a]
        r = group_relevant(rlab, a, b, rel)
        total += (min(b, kk) - a) * r / (b - a)
        a = b
    return total


@jit
def avg_success(rlab, gend, n, kk, rel):
    """P(at least one relevant in the top kk)."""
    a = 0
    while a < n and a < kk:
        b = gend[a]
        g = b - a
        r = group_relevant(rlab, a, b, rel)
        if r > 0:
            if b <= kk:
                return 1.0
            m = kk - a  # slots of the group inside the cutoff
            none = 1.0  # P(no relevant in m draws) = C(g-r, m) / C(g, m)
            for j in range(m):
                none *= (g - r - j) / (g - j)
                if none <= 0.0:
                    return 1.0
            return 1.0 - none
        a = b
    return 0.0


@jit
def avg_none_below(rlab, gend, n, kk, rel):
    """P(no document of the top kk has a label below rel), over the orders of tied documents.

    A tie group inside the cutoff must hold none; the group across it, with g documents,
    u of them below rel and m slots inside: ``C(g - u, m) / C(g, m)``.
    """
    a = 0
    while a < n and a < kk:
        b = gend[a]
        g = b - a
        u = g - group_relevant(rlab, a, b, rel)  # documents of the group below rel
        if u > 0:
            if b <= kk:
                return 0.0
            none = 1.0  # C(g - u, m) / C(g, m): no draw of the m slots below rel
            for j in range(kk - a):
                none *= (g - u - j) / (g - j)
            return none
        a = b
    return 1.0


@jit
def avg_reciprocal_rank(rlab, gend, n, kk, rel):
    """E[RR@k]: only the first group holding a relevant document matters."""
    a = 0
    while a < n and a < kk:
        b = gend[a]
        g = b - a
        r = group_relevant(rlab, a, b, rel)
        if r > 0:
            e = 0.0
            none_before = 1.0  # P(first j-1 slots of the group hold no relevant)
            for j in range(1, g - r + 2):
                if a + j > kk:
                    break
                first_here = none_before * r / (g - j + 1)
                e += first_here / (a + j)
                none_before *= (g - r - (j - 1)) / (g - (j - 1))
            return e
        a = b
    return 0.0


@jit
def avg_ap_sum(rlab, gend, n, kk, rel):
    """E[sum_{r <= kk} rel_r * P@r].

    For slot j (1-based) of a group of g documents with r relevant, starting after c
    relevant documents: E[rel_p * (c + sum_{q <= p in group} rel_q)] / p
    = (c r/g + r/g + (j-1) r (r-1) / (g (g-1))) / p.
    """
    s = 0.0
    c = 0
    a = 0
    while a < n and a < kk:
        b = gend[a]
        g = b - a
        r = group_relevant(rlab, a, b, rel)
        if r > 0:
            pr = r / g
            pair = r * (r - 1) / (g * (g - 1)) if g > 1 else 0.0
            for p in range(a, min(b, kk)):
                j = p - a + 1
                s += (c * pr + pr + (j - 1) * pair) / (p + 1)
        c += r
        a = b
    return s


# ---- set measures and interpolated precision ----------------------------------------


@jit(inline="always")
def set_value(kind, h, n, R, beta, empty):
    """A set measure of the whole row: ``h`` relevant of its ``n`` documents, ``R`` relevant in all.

    The counts NUM_RET ``n``, NUM_REL_RET ``h``, NUM_REL ``R``, NUM_Q 1;
    SET_P ``h / n`` (0 for an empty row); the others ``empty`` when ``R = 0``:
    SET_R ``h / R``, SET_AP ``h^2 / (n R)``, SET_REL_P ``h / min(n, R)``, and SET_F
    ``(1 + beta) P R / (beta P + R)`` with ``P = h / n``, ``R_set = h / R`` (0 when ``h = 0``).
    """
    if kind == SET_P:
        return h / n if n > 0 else 0.0
    if kind == NUM_RET:
        return float(n)
    if kind == NUM_REL_RET:
        return h
    if kind == NUM_REL:
        return R
    if kind == NUM_Q:
        return 1.0
    if R <= 0.0:
        return empty
    if n <= 0:
        return 0.0
    if kind == SET_R:
        return h / R
    if kind == SET_AP:
        return (h * h) / (n * R)
    if kind == SET_REL_P:
        return h / min(float(n), R)
    if h <= 0.0:  # SET_F
        return 0.0
    p = h / n
    r = h / R
    return (beta + 1.0) * p * r / (beta * p + r)


@jit(inline="always")
def interpolated_precision(rlab, ranks, L, rel, c):
    """``max_{j >= max(c, 1)} j / rank_j`` over the relevant documents ``j = 1, 2, ...`` of the list.

    Interpolated precision at the recall level that ``c`` relevant documents reach (the
    precision after the j-th relevant document only falls until the next one, so the
    maximum over ranks is one over relevant ranks); 0 when fewer than ``c`` are ranked.
    """
    j = 0
    best = 0.0
    for i in range(L):
        if rlab[i] >= rel:
            j += 1
            if j >= c:
                x = j / ranks[i]
                if x > best:
                    best = x
    return best


# ---- Bpref and infAP: the ranked labels are judgment codes or judged grades -----------

#: infAP's smoothing of the judged precision (trec_eval's m_infAP.c)
INFAP_EPSILON = 0.00001


# The labels Bpref and infAP read: judgment codes (CODE_*: relevant 3, judged non-relevant 2, pooled but
# unjudged 1), or the judged grades (0 unjudged, grade + 1 judged: relevant >= rel + 1, judged non-relevant
# 1 .. rel).  Either way: relevant ``label >= hi``, judged non-relevant ``lo <= label < hi``, pooled but
# unjudged ``1 <= label < lo`` (none with the judged grades, lo = 1).


@jit
def count_between(labels, start, count, mask, use_mask, lo, hi):
    """Real documents of the row with ``lo <= label < hi`` (the judged non-relevant ones)."""
    c = 0
    for t in range(start, start + count):
        if lo <= labels[t] < hi and (not use_mask or mask[t]):
            c += 1
    return c


@jit(inline="always")
def bpref_sum(rlab, L, R, N, lo, hi):
    """``sum_{relevant d} (1 - min(n_d, R) / min(N, R))``, a term 1 when ``n_d = 0``.

    ``n_d``: judged non-relevant documents ranked above ``d``; ``N``: the query's judged
    non-relevant documents (``N >= n_d``, so the divisor is never 0 where it is read);
    unjudged documents take no part.  Bpref is the sum over ``R``.
    """
    cap = min(N, R)
    above = 0
    s = 0.0
    for i in range(L):
        c = rlab[i]
        if c >= hi:
            s += 1.0 if above == 0 else 1.0 - min(float(above), R) / cap
        elif c >= lo:
            above += 1
    return s


@jit(inline="always")
def infap_sum(rlab, ranks, L, lo, hi):
    """infAP's sum over the relevant ranked documents (Yilmaz & Aslam 2006, as trec_eval computes it).

    At the r-th relevant document, of 0-based rank ``j``, with ``n`` judged non-relevant
    and ``u`` pooled but unjudged documents above it: 1 when ``j = 0``, else
    ``1/(j+1) + (j/(j+1)) ((r-1+n+u)/j) ((r-1+eps)/(r-1+n+2 eps))``; infAP is the sum over R.
    """
    r = 0
    n = 0
    u = 0
    s = 0.0
    for i in range(L):
        c = rlab[i]
        if c >= hi:
            r += 1
            j = float(ranks[i] - 1)
            if j == 0.0:
                s += 1.0
            else:
                s += 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r - 1 + n + u) / j) * (
                    (r - 1 + INFAP_EPSILON) / ((r - 1 + n) + 2.0 * INFAP_EPSILON))
        elif c >= lo:
            n += 1
        elif c >= 1:
            u += 1
    return s


# ---- Accuracy (ir_measures' accuracy provider) -----------------------------------------


@jit(inline="always")
def accuracy(rlab, ranks, L, kk, n, rel, empty):
    """``1 - S / (N R')`` over the top ``d = min(kk, n)``: the share of (relevant, non-relevant) pairs in order.

    ``R'``: relevant documents (``label >= rel``) within the top d, ``N = d - R'`` the
    others, ``S = sum_{relevant d} (non-relevant documents above d)``; the document at
    rank r after h relevant ones has ``r - 1 - h`` non-relevant ones above it, so the
    list needs the relevant documents alone (at their true ranks).  ``empty`` when
    ``N R' = 0`` (no pair).
    """
    depth = min(kk, n)
    s = 0  # S: non-relevant documents above each relevant one
    h = 0  # R'
    for i in range(L):
        r = ranks[i]
        if r > depth:
            break
        if rlab[i] >= rel:
            s += r - 1 - h  # (r - 1) documents above, h of them relevant
            h += 1
    pairs = (depth - h) * h  # N R'
    if pairs <= 0:
        return empty
    return 1.0 - s / float(pairs)  # 1 - S / (N R')
