"""Cascade measures: ERR@k and pFound@k.

Both read the documents of the ranked list in order with a probability R_r that the
user is satisfied at rank r (by-grade table, or the label itself):

ERR@k    = sum_{r <= k} u(r) R_r prod_{i < r} (1 - R_i),   u(r) = 1/r or 1/log2(r+1)
pFound@k = sum_{r <= k} pLook_r R_r,  pLook_r = (1 - p_break)^(r-1) prod_{i < r} (1 - R_i)

A document with R = 0 leaves both products unchanged, so the engine may hand over a
list holding only the documents with a non-zero R; the per-rank weights (u(r), or
(1 - p_break)^(r-1)) are precomputed tables.
"""
from rankjit._config import jit
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
