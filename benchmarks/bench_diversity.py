"""alpha-nDCG@20 over 100k queries x 100 docs x 10 subtopics, next to a plain numpy implementation.

Run:  /work/venv/bin/python benchmarks/bench_diversity.py [n_queries]
The first call compiles (or loads the on-disk cache); the timed calls follow it.
"""
from __future__ import annotations

import sys
import time

import numba
import numpy as np

import rankjit.diversity as D


def numpy_alpha_ndcg(nug, scores, k=20, alpha=0.5):
    """Plain numpy: vectorised over queries, loop over ranks / greedy steps (stable ties)."""
    n_q, n_d, n_s = nug.shape
    J = (nug > 0).astype(np.float64)
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    ranked = np.take_along_axis(J, order[:, :, None], axis=1)  # (n_q, k, n_s)
    seen = np.zeros((n_q, n_s))
    dcg = np.zeros(n_q)
    for r in range(k):
        dcg += (ranked[:, r] * (1 - alpha) ** seen).sum(1) * disc[r]
        seen += ranked[:, r]
    seen = np.zeros((n_q, n_s))
    taken = np.zeros((n_q, n_d), bool)
    ideal = np.zeros(n_q)
    rows = np.arange(n_q)
    for r in range(k):
        gains = (J * ((1 - alpha) ** seen)[:, None, :]).sum(2)
        gains[taken] = -1.0
        best = gains.argmax(1)  # first maximum: lowest index
        g = np.maximum(gains[rows, best], 0.0)
        ideal += g * disc[r]
        taken[rows, best] = True
        seen += J[rows, best] * (g > 0)[:, None]
    return np.divide(dcg, ideal, out=np.zeros(n_q), where=ideal > 0)


def main():
    n_q = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rng = np.random.default_rng(0)
    nug = (rng.random((n_q, 100, 10)) < 0.1).astype(np.uint8)
    scores = rng.random((n_q, 100))
    print(f"alpha-nDCG@20: {n_q} queries x 100 docs x 10 subtopics, {numba.get_num_threads()} threads")
    t0 = time.perf_counter()
    D.alpha_ndcg(nug[:10], scores[:10], 20)
    D.alpha_ndcg(nug[:4096], scores[:4096], 20)
    print(f"  first calls (compile or cache load): {time.perf_counter() - t0:.2f} s")
    best = np.inf
    cpu = np.inf
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        ours = D.alpha_ndcg(nug, scores, 20, ties="stable")
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    print(f"  rankjit.diversity.alpha_ndcg : {best:.3f} s wall (best of 3, validation included), "
          f"{cpu:.3f} s CPU summed over threads (wall on idle cores ~ CPU / threads)")
    m = min(n_q, 20_000)
    t0 = time.perf_counter()
    ref = numpy_alpha_ndcg(nug[:m], scores[:m])
    t_np = (time.perf_counter() - t0) * n_q / m
    print(f"  plain numpy                  : {t_np:.3f} s (timed on {m} queries, scaled)")
    print(f"  max |difference| on those {m} queries: {np.abs(ours[:m] - ref).max():.2e}")


if __name__ == "__main__":
    main()
