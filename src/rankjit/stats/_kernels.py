"""Numba kernels for the resampling tests (paired bootstrap, Fisher randomisation).

Random numbers
--------------
Every random number is a pure function of ``(key, b, j)``: the seed key, the index
``b`` of the resample (or permutation) and the index ``j`` of the draw inside it.
The generator is counter-based SplitMix64 (Steele, Lea & Flood 2014):

    key_b   = mix64(key + (b + 1) * C)           # one stream per resample
    draw_j  = mix64(key_b + (j + 1) * GOLDEN)    # j-th 64-bit output of that stream

so a resample sees the same numbers whichever thread computes it, whatever the
number of threads and however ``prange`` splits the work.  Counts of exceedances
are integers, so adding them up is exact in any order: results are bitwise
identical for any thread count.

The kernels never validate their inputs; the public functions in
:mod:`rankjit.stats` do.  All integer arithmetic is on ``uint64`` (wrapping
multiplication is intended); callers wrap kernel calls in
``numpy.errstate(over="ignore")`` so that the pure-Python mode
(``NUMBA_DISABLE_JIT=1``) does not warn about the intended wrap-around.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from rankjit._config import jit, jit_parallel, parallel_allowed

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
STREAM = np.uint64(0xD1B54A32D192ED03)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
S27 = np.uint64(27)
S30 = np.uint64(30)
S31 = np.uint64(31)
S32 = np.uint64(32)
ONE = np.uint64(1)
U63 = np.uint64(63)

#: resamples per work item of the parallel drivers (results never depend on it)
CHUNK = 128

#: below this many elementary draws the serial driver is used; tests set it to 0
#: to force the parallel driver on small inputs
PARALLEL_MIN_WORK = 2_000_000


@jit
def mix64(z):
    """SplitMix64 finaliser: a bijective 64-bit hash."""
    z = (z ^ (z >> S30)) * M1
    z = (z ^ (z >> S27)) * M2
    return z ^ (z >> S31)


@jit
def stream_key(key, b):
    """Key of the stream of resample ``b``: mix64(key + (b + 1) * STREAM)."""
    return mix64(key + (np.uint64(b) + ONE) * STREAM)


@jit
def draw(key_b, j):
    """``j``-th 64-bit output of the stream ``key_b``: mix64(key_b + (j + 1) * GOLDEN)."""
    return mix64(key_b + (np.uint64(j) + ONE) * GOLDEN)


@jit
def below(x, n):
    """Integer in ``[0, n)`` from a 64-bit draw: floor(hi32(x) * n / 2**32), n < 2**32."""
    return np.int64(((x >> S32) * np.uint64(n)) >> S32)


# ----------------------------------------------------------------------------
# paired bootstrap (Sakai 2006): resample the null-shifted differences w with
# replacement, t* = mean / (sd / sqrt(n)), count |t*| >= threshold
# ----------------------------------------------------------------------------
@jit
def t_from_sums(s, ss, n):
    """t = mean / sqrt(var / n), var = (ss - s * mean) / (n - 1); 0 if mean == 0 and var <= 0."""
    mean = s / n
    var = (ss - s * mean) / (n - 1)
    if var <= 0.0:
        if mean == 0.0:
            return 0.0
        return np.inf if mean > 0.0 else -np.inf
    return mean / np.sqrt(var / n)


@jit
def boot_task(W, thresholds, key, B, pair, b0, b1):
    """Exceedances of pair ``pair`` over resamples ``b0 <= b < b1``."""
    n = W.shape[1]
    thr = thresholds[pair]
    count = 0
    for b in range(b0, b1):
        kb = stream_key(key, b)
        s = 0.0
        ss = 0.0
        for j in range(n):
            x = W[pair, below(draw(kb, j), n)]
            s += x  # sum of resampled w
            ss += x * x  # sum of squares
        t = t_from_sums(s, ss, n)
        if abs(t) >= thr:
            count += 1
    return count


@jit
def boot_counts_serial(W, thresholds, key, B, counts):
    n_chunks = (B + CHUNK - 1) // CHUNK
    for task in range(W.shape[0] * n_chunks):
        pair = task // n_chunks
        c = task % n_chunks
        b0 = c * CHUNK
        b1 = min(B, b0 + CHUNK)
        counts[pair, c] = boot_task(W, thresholds, key, B, pair, b0, b1)


@jit_parallel
def boot_counts_parallel(W, thresholds, key, B, counts):
    n_chunks = (B + CHUNK - 1) // CHUNK
    for task in prange(W.shape[0] * n_chunks):
        pair = task // n_chunks
        c = task % n_chunks
        b0 = c * CHUNK
        b1 = min(B, b0 + CHUNK)
        counts[pair, c] = boot_task(W, thresholds, key, B, pair, b0, b1)


# ----------------------------------------------------------------------------
# Fisher randomisation: flip the sign of each difference with probability 1/2,
# statistic = sum_i s_i d_i, count |sum| >= threshold.  One 64-bit draw gives
# the signs of 64 topics.
# ----------------------------------------------------------------------------
@jit
def signed_sum(D, pair, kb):
    """sum_i s_i * D[pair, i] with s_i = 1 - 2 * bit(i) of the stream ``kb``."""
    n = D.shape[1]
    acc = 0.0
    n_blocks = (n + 63) // 64
    for blk in range(n_blocks):
        r = draw(kb, blk)
        i0 = blk * 64
        i1 = min(n, i0 + 64)
        for i in range(i0, i1):
            bit = (r >> np.uint64(i - i0)) & ONE
            acc += D[pair, i] * (1.0 - 2.0 * np.float64(bit))  # s_i * d_i
    return acc


@jit
def fisher_task(D, thresholds, key, pair, b0, b1):
    thr = thresholds[pair]
    count = 0
    for b in range(b0, b1):
        if abs(signed_sum(D, pair, stream_key(key, b))) >= thr:
            count += 1
    return count


@jit
def fisher_counts_serial(D, thresholds, key, B, counts):
    n_chunks = (B + CHUNK - 1) // CHUNK
    for task in range(D.shape[0] * n_chunks):
        pair = task // n_chunks
        c = task % n_chunks
        b0 = c * CHUNK
        counts[pair, c] = fisher_task(D, thresholds, key, pair, b0, min(B, b0 + CHUNK))


@jit_parallel
def fisher_counts_parallel(D, thresholds, key, B, counts):
    n_chunks = (B + CHUNK - 1) // CHUNK
    for task in prange(D.shape[0] * n_chunks):
        pair = task // n_chunks
        c = task % n_chunks
        b0 = c * CHUNK
        counts[pair, c] = fisher_task(D, thresholds, key, pair, b0, min(B, b0 + CHUNK))


# ----------------------------------------------------------------------------
# Python drivers (called by the public functions after validation)
# ----------------------------------------------------------------------------
def _parallel(work: int) -> bool:
    return work >= PARALLEL_MIN_WORK and parallel_allowed()  # serial in a risky forked child


def bootstrap_counts(W: np.ndarray, thresholds: np.ndarray, key: int, B: int) -> np.ndarray:
    """Per pair (row of ``W``), the number of resamples with |t*| >= threshold."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    thresholds = np.ascontiguousarray(thresholds, dtype=np.float64)
    n_chunks = (B + CHUNK - 1) // CHUNK
    counts = np.zeros((W.shape[0], n_chunks), dtype=np.int64)
    fn = boot_counts_parallel if _parallel(W.size * B) else boot_counts_serial
    with np.errstate(over="ignore"):
        fn(W, thresholds, np.uint64(key), np.int64(B), counts)
    return counts.sum(axis=1)


def fisher_counts(D: np.ndarray, thresholds: np.ndarray, key: int, B: int) -> np.ndarray:
    """Per pair (row of ``D``), the number of sign flips with |sum s_i d_i| >= threshold."""
    D = np.ascontiguousarray(D, dtype=np.float64)
    thresholds = np.ascontiguousarray(thresholds, dtype=np.float64)
    n_chunks = (B + CHUNK - 1) // CHUNK
    counts = np.zeros((D.shape[0], n_chunks), dtype=np.int64)
    fn = fisher_counts_parallel if _parallel(D.size * B) else fisher_counts_serial
    with np.errstate(over="ignore"):
        fn(D, thresholds, np.uint64(key), np.int64(B), counts)
    return counts.sum(axis=1)


def resample_indices(key: int, b: int, n: int) -> np.ndarray:
    """The indices drawn by bootstrap resample ``b`` (for tests and documentation)."""
    with np.errstate(over="ignore"):
        kb = np.uint64(stream_key(np.uint64(key), b))
        return np.array([below(np.uint64(draw(kb, j)), n) for j in range(n)], dtype=np.int64)


def flip_signs(key: int, b: int, n: int) -> np.ndarray:
    """The signs (+1/-1) used by randomisation ``b`` (for tests and documentation)."""
    with np.errstate(over="ignore"):
        kb = np.uint64(stream_key(np.uint64(key), b))
        out = np.empty(n)
        for i in range(n):
            r = np.uint64(draw(kb, i // 64))
            out[i] = 1.0 - 2.0 * float((int(r) >> (i % 64)) & 1)
        return out
