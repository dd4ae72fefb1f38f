"""Per-query cost of the core engine on one thread, measured with the thread's CPU time.

``time.thread_time`` counts only the CPU time of the calling thread, so other load on the
machine disturbs it much less than wall-clock time: the figures used to compare engine
variants (docs/performance.md).  With one Numba thread the serial driver runs in the
calling thread.

Usage::

    python benchmarks/bench_single_thread.py [--queries 300000] [--repeat 9]
"""
from __future__ import annotations

import argparse
import time

SIX = ["nDCG@10", "AP", "ERR@20", "pFound", "P@10", "RR"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()

    import numba
    import numpy as np

    import rankjit
    from rankjit._demo import make_batch

    n = args.queries
    labels, scores = make_batch(n, 100, 0)
    numba.set_num_threads(1)  # benchmark script only; the library never does this
    rankjit.evaluate(labels[:4096], scores[:4096], SIX)
    rankjit.ndcg(labels[:4096], scores[:4096], 10)

    def per_query_us(fn):
        times = []
        for _ in range(args.repeat):
            t0 = time.thread_time()
            fn()
            times.append(time.thread_time() - t0)
        return float(np.median(times)) / n * 1e6

    calls = {
        "nDCG@10": lambda: rankjit.ndcg(labels, scores, 10),
        "six measures": lambda: rankjit.evaluate(labels, scores, SIX),
        "nDCG@20": lambda: rankjit.ndcg(labels, scores, 20),
        "P@5": lambda: rankjit.precision(labels, scores, 5),
    }
    print(f"{n:,} queries x 100 docs, float32 scores, int8 grades; 1 thread; thread CPU time, median of "
          f"{args.repeat}")
    for name, fn in calls.items():
        print(f"  {name:14s} {per_query_us(fn):.3f} us/query")


if __name__ == "__main__":
    main()
