"""Byte strings in compiled code: their hash, their comparison, and the size of hash tables of them.

Ids read from files and Python strings are kept as one byte buffer and offsets (string
``i`` is ``data[off[i]:off[i + 1]]``); the readers (:mod:`rankjit.io._kernels`) and the front
ends' joins (:mod:`rankjit._kernels.frontends`) hash and compare them with these.
"""
from __future__ import annotations

import numpy as np

from rankjit._config import jit

HASH_MUL = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio, odd
MIX_MUL = np.uint64(0xFF51AFD7ED558CCD)  # murmur3's finaliser constant


@jit
def hash_bytes(data, start, end):
    """64-bit hash of ``data[start:end]``, eight bytes per multiply.

    Each little-endian 8-byte word is folded in with ``h = (h ^ w) * M`` followed
    by an xor-shift (so high bits reach the low ones), the length seeds ``h``, and
    murmur3's finaliser mixes the result; the low bits index hash tables.
    """
    h = np.uint64(end - start) * MIX_MUL
    # (unsigned positions: Numba adds no negative-index fix-up to the loads, 1.5-2x faster on 28-byte ids)
    p = np.uint64(start)
    stop = np.uint64(end)
    one = np.uint64(1)
    while p + np.uint64(8) <= stop:
        # the eight loads are independent: one word per step of the multiply chain
        w = (np.uint64(data[p]) | (np.uint64(data[p + one]) << np.uint64(8))
             | (np.uint64(data[p + np.uint64(2)]) << np.uint64(16))
             | (np.uint64(data[p + np.uint64(3)]) << np.uint64(24))
             | (np.uint64(data[p + np.uint64(4)]) << np.uint64(32))
             | (np.uint64(data[p + np.uint64(5)]) << np.uint64(40))
             | (np.uint64(data[p + np.uint64(6)]) << np.uint64(48))
             | (np.uint64(data[p + np.uint64(7)]) << np.uint64(56)))
        h = (h ^ w) * HASH_MUL
        h ^= h >> np.uint64(29)
        p += np.uint64(8)
    if p < stop:
        w = np.uint64(0)
        sh = np.uint64(0)
        while p < stop:
            w |= np.uint64(data[p]) << sh
            sh += np.uint64(8)
            p += one
        h = (h ^ w) * HASH_MUL
        h ^= h >> np.uint64(29)
    h ^= h >> np.uint64(33)  # murmur3 fmix64
    h *= MIX_MUL
    h ^= h >> np.uint64(33)
    return h


@jit
def table_size(m):
    """Slots of an open-addressing table for ``m`` keys: a power of 2, at least 8 and 2m (load <= 1/2)."""
    size = 8
    while size < 2 * m:
        size *= 2
    return size


@jit
def same_bytes(a_data, a_off, a, b_data, b_off, b):
    """Whether string ``a`` of ``a_data`` / ``a_off`` and string ``b`` of ``b_data`` / ``b_off`` hold the same bytes."""
    la = a_off[a + 1] - a_off[a]
    if la != b_off[b + 1] - b_off[b]:
        return False
    sa = np.uint64(a_off[a])  # (unsigned positions: no negative-index fix-up, see hash_bytes)
    sb = np.uint64(b_off[b])
    for t in range(np.uint64(la)):
        if a_data[sa + t] != b_data[sb + t]:
            return False
    return True
