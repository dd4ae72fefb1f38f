"""RPP over 1M queries x 100 docs and rpp_matrix over 20 systems x 10k queries x 100 docs, next to numpy.

Run:  /work/venv/bin/python benchmarks/bench_rpp.py [n_queries_rpp] [n_queries_matrix]
Scores are float32 (float64 doubles the memory read); about 10% of documents relevant.
"""
from __future__ import annotations

import sys
import time

import numba
import numpy as np

import rankjit.preference as P


def numpy_rpp(labels, sa, sb):
    """Plain numpy RPP (binary, uniform weights, no cutoff, stable ties): vectorised over queries."""
    n_q, n = labels.shape
    rel = labels >= 1
    m = rel.sum(1)

    def recall_ranks(s):
        order = np.argsort(-s, axis=1, kind="stable")
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(1, n + 1)[None, :], axis=1)
        r = np.where(rel, rank, n + 1)
        return np.sort(r, axis=1)  # f_1 <= f_2 <= ...; non-relevant at the end as n + 1 (equal, sgn 0)

    fa, fb = recall_ranks(sa), recall_ranks(sb)
    s = np.sign(fb - fa).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m > 0, s / np.maximum(m, 1), np.nan)


def best_of(fn, reps=3):
    best = np.inf
    cpu = np.inf
    out = None
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    print(f"  (CPU summed over threads: {cpu:.3f} s; wall on idle cores ~ CPU / threads)")
    return best, out


def main():
    n_q = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    n_qm = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    rng = np.random.default_rng(0)
    print(f"{numba.get_num_threads()} threads")
    labels = (rng.random((n_q, 100)) < 0.1).astype(np.int8)
    sa = rng.random((n_q, 100), dtype=np.float32)
    sb = rng.random((n_q, 100), dtype=np.float32)
    t0 = time.perf_counter()
    P.rpp(labels[:10], sa[:10], sb[:10])
    P.rpp(labels[:4096], sa[:4096], sb[:4096])
    print(f"rpp: first calls (compile or cache load) {time.perf_counter() - t0:.2f} s")
    t_default, _ = best_of(lambda: P.rpp(labels, sa, sb))
    print(f"rpp, {n_q} queries x 100 docs, default ties (pessimistic): rankjit {t_default:.3f} s "
          "(best of 3, validation included)")
    # numpy's stable argsort is rankjit's ties="stable": time that too, and compare values with it
    t, ours = best_of(lambda: P.rpp(labels, sa, sb, ties="stable"))
    print(f"rpp, {n_q} queries x 100 docs, ties='stable': rankjit {t:.3f} s (best of 3, validation included)")
    m = min(n_q, 100_000)
    t0 = time.perf_counter()
    ref = numpy_rpp(labels[:m], sa[:m], sb[:m])
    t_np = (time.perf_counter() - t0) * n_q / m
    print(f"  plain numpy {t_np:.3f} s (timed on {m} queries, scaled); "
          f"max |diff| {np.nanmax(np.abs(ours[:m] - ref)):.1e}, NaN agree: {np.array_equal(np.isnan(ours[:m]), np.isnan(ref))}")

    n_sys = 20
    lab = (rng.random((n_qm, 100)) < 0.1).astype(np.int8)
    stack = rng.random((n_sys, n_qm, 100), dtype=np.float32)
    t0 = time.perf_counter()
    P.rpp_matrix(lab[:10], stack[:, :10])
    P.rpp_matrix(lab[:4096], stack[:, :4096])
    print(f"rpp_matrix: first calls (compile or cache load) {time.perf_counter() - t0:.2f} s")
    t, M = best_of(lambda: P.rpp_matrix(lab, stack, ties="stable"))
    print(f"rpp_matrix, {n_sys} systems x {n_qm} queries x 100 docs: rankjit {t:.3f} s (best of 3)")
    t0 = time.perf_counter()
    rec = {}
    Mref = np.zeros((n_sys, n_sys))
    for a in range(n_sys):
        for b in range(a + 1, n_sys):
            v = np.nanmean(numpy_rpp(lab, stack[a], stack[b]))
            Mref[a, b], Mref[b, a] = v, -v
    t_np = time.perf_counter() - t0
    print(f"  plain numpy, pair by pair: {t_np:.3f} s; max |diff| {np.abs(M - Mref).max():.1e}")
    del rec


if __name__ == "__main__":
    main()
