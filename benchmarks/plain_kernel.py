"""The yardstick for compile cost: a plain, hand-written parallel Numba nDCG@10 kernel.

``benchmarks/bench_coldstart.py`` times how long Numba takes to compile this kernel in a
fresh process with an empty cache, next to rankjit's own entry points, so that rankjit's
first-call cost is read as a ratio measured in the same run (issue 13: ``rankjit.ndcg``
at most 2x this kernel, ``evaluate()`` with ten list measures at most 3x).

The kernel is what a user would write by hand: exp2 gain, log2 discount, a score
threshold plus an insertion buffer for the top 10, a grade histogram for the ideal
DCG, ``prange`` over queries.  It is deliberately not rankjit's code: no tie rule, no
padding, no validation.

Run it directly to print its compile time (the cache must be empty for a cold figure)::

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/plain_kernel.py
"""
from __future__ import annotations

import time

import numba
import numpy as np


@numba.njit(parallel=True, cache=True)
def plain_ndcg10(labels, scores):
    n_q, n = labels.shape
    k = 10
    out = np.empty(n_q, dtype=np.float64)
    disc = np.empty(k, dtype=np.float64)
    for r in range(k):
        disc[r] = 1.0 / np.log2(r + 2.0)  # 1 / log2(r + 1), r 1-based
    for q in numba.prange(n_q):
        top_s = np.full(k, -np.inf)
        top_y = np.zeros(k, dtype=np.int64)
        filled = 0
        for j in range(n):  # insertion into a sorted buffer, a threshold test first
            s = scores[q, j]
            if filled == k and s <= top_s[k - 1]:
                continue
            i = min(filled, k - 1)
            while i > 0 and top_s[i - 1] < s:
                top_s[i] = top_s[i - 1]
                top_y[i] = top_y[i - 1]
                i -= 1
            top_s[i] = s
            top_y[i] = labels[q, j]
            filled = min(filled + 1, k)
        dcg = 0.0
        for r in range(filled):
            dcg += (2.0 ** top_y[r] - 1.0) * disc[r]
        hist = np.zeros(32, dtype=np.int64)  # grades 0..31
        for j in range(n):
            hist[min(labels[q, j], 31)] += 1
        idcg = 0.0
        r = 0
        for g in range(31, 0, -1):
            c = hist[g]
            while c > 0 and r < k:
                idcg += (2.0**g - 1.0) * disc[r]
                r += 1
                c -= 1
        out[q] = dcg / idcg if idcg > 0 else 0.0
    return out


def compile_seconds(labels_dtype=np.int8, scores_dtype=np.float32) -> float:
    """Seconds of the first call (compile, or load from the cache) on a tiny batch."""
    labels = np.zeros((4, 20), dtype=labels_dtype)
    scores = np.zeros((4, 20), dtype=scores_dtype)
    t0 = time.perf_counter()
    plain_ndcg10(labels, scores)
    return time.perf_counter() - t0


if __name__ == "__main__":
    print(f"plain nDCG@10 kernel: first call {compile_seconds():.2f} s")
