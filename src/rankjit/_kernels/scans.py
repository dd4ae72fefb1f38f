"""Compiled scans of the input check (:func:`rankjit._validation.scan`): NaN scores, bad labels, the largest label.

Each works on a range of queries of a flat batch and returns flat positions (-1 when
nothing is found); the Python tier turns them into errors that name the query and
position.  :func:`first_nan` is also inlined into the engine's rank pass, which tests
each row's scores as it ranks them.
"""
from __future__ import annotations

import numpy as np
from rankjit._config import jit


@jit(inline="always")
def first_nan(scores, start, count, mask, use_mask):
    """Flat position of the row's first NaN score among real documents, or -1.

    One branch-free (vectorised) pass; only a row with a NaN is walked again.
    """
    row = scores[start:start + count]
    bad = np.int32(0)
    if use_mask:
        for t in range(count):
            bad = np.int32(bad + np.int32((row[t] != row[t]) & mask[start + t]))
    else:
        for t in range(count):
            bad = np.int32(bad + np.int32(row[t] != row[t]))
    if bad == 0:
        return -1
    for t in range(count):
        if row[t] != row[t] and (not use_mask or mask[start + t]):
            return start + t
    return -1


@jit
def scan_chunk(lo, hi, labels, scores, starts, counts, mask, with_scores):
    # first NaN score, first negative label, first non-integer label, first non-finite label
    # (flat positions, -1 if none) and the largest label.  Each query is first checked by a
    # branch-free (vectorised) pass; only a query with a finding is walked element by element.
    use_mask = mask.shape[0] > 0
    nan_at = -1
    neg_at = -1
    frac_at = -1
    bad_at = -1
    top = 0.0
    for q in range(lo, hi):
        start = starts[q]
        c = counts[q]
        if with_scores and nan_at < 0:
            nan_at = first_nan(scores, start, c, mask, use_mask)
        lrow = labels[start:start + c]
        issues = np.int32(0)
        qtop = 0.0
        if use_mask:
            mrow = mask[start:start + c]
            for t in range(c):
                fy = float(lrow[t])
                m = mrow[t]
                # negative label, or non-integer / NaN label (NaN != floor(NaN))
                issues = np.int32(issues + np.int32(((fy < 0.0) | (fy != np.floor(fy))) & m))
                qtop = max(qtop, fy if m else 0.0)
        else:
            for t in range(c):
                fy = float(lrow[t])
                issues = np.int32(issues + np.int32((fy < 0.0) | (fy != np.floor(fy))))
                qtop = max(qtop, fy)
        if issues == 0 and qtop < np.inf:
            top = max(top, qtop)
            continue
        for p in range(start, start + c):
            if use_mask and not mask[p]:
                continue
            y = labels[p]
            fy = float(y)
            if not np.isfinite(fy):
                if bad_at < 0:
                    bad_at = p
                continue
            if y < 0 and neg_at < 0:
                neg_at = p
            if fy != np.floor(fy) and frac_at < 0:
                frac_at = p
            if fy > top:
                top = fy
    return nan_at, neg_at, frac_at, top, bad_at


@jit
def scan_int_chunk(lo, hi, labels, scores, starts, counts, mask, with_scores, zero):
    # integer labels: only a sign test and the maximum, in the labels' own width
    # (``zero[0]`` is 0 of the labels' dtype: arithmetic would widen it to int64).  Only
    # padded batches come here: a dense one (full rows, CSR) is scanned by numpy (_scan_dense)
    use_mask = mask.shape[0] > 0
    nan_at = -1
    neg_at = -1
    top = 0
    for q in range(lo, hi):
        start = starts[q]
        c = counts[q]
        if with_scores and nan_at < 0:
            nan_at = first_nan(scores, start, c, mask, use_mask)
        lrow = labels[start:start + c]
        qtop = zero[0]
        qlow = zero[0]
        if use_mask:
            mrow = mask[start:start + c]
            for t in range(c):
                y = lrow[t] if mrow[t] else zero[0]
                qtop = max(qtop, y)
                qlow = min(qlow, y)
        else:
            for t in range(c):
                qtop = max(qtop, lrow[t])
                qlow = min(qlow, lrow[t])
        top = max(top, qtop)
        if qlow < 0 and neg_at < 0:
            for p in range(start, start + c):
                if labels[p] < 0 and (not use_mask or mask[p]):
                    neg_at = p
                    break
    return nan_at, neg_at, -1, float(top), -1
