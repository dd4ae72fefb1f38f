"""``rankjit demo``: score a generated padded batch with every list measure."""
from __future__ import annotations

import time

import numpy as np

from rankjit._registry import EXAMPLES

#: grade distribution of the built-in sample: most documents are not relevant
GRADE_PROBABILITIES = (0.70, 0.15, 0.08, 0.05, 0.02)

#: one typical measure of each list family (the registry's examples)
DEMO_MEASURES = EXAMPLES


def make_batch(n_queries, n_docs, seed=0, *, with_lengths=False):
    """A synthetic padded batch: float32 scores, int8 grades 0..4 (mostly 0).

    Scores are noisy functions of the grade so that the measures are informative.
    Returns ``(labels, scores)`` or ``(labels, scores, lengths)``.
    """
    rng = np.random.default_rng(seed)
    cum = np.cumsum(GRADE_PROBABILITIES)
    labels = np.empty((n_queries, n_docs), dtype=np.int8)
    scores = np.empty((n_queries, n_docs), dtype=np.float32)
    step = 65536
    for lo in range(0, n_queries, step):  # in blocks, to bound the temporaries
        hi = min(n_queries, lo + step)
        u = rng.random((hi - lo, n_docs), dtype=np.float32)
        lab = np.searchsorted(cum, u, side="right").astype(np.int8)
        np.minimum(lab, len(GRADE_PROBABILITIES) - 1, out=lab)
        labels[lo:hi] = lab
        scores[lo:hi] = lab * np.float32(0.35) + rng.standard_normal((hi - lo, n_docs), dtype=np.float32)
    if with_lengths:
        lengths = rng.integers(n_docs // 2, n_docs + 1, size=n_queries)
        return labels, scores, lengths
    return labels, scores


def run(args):
    import rankjit

    t0 = time.perf_counter()
    labels, scores = make_batch(args.queries, args.docs, args.seed)
    t_gen = time.perf_counter() - t0
    print(f"generated {args.queries:,} queries x {args.docs} documents "
          f"(float32 scores, int8 grades 0..4) in {t_gen:.2f} s")
    t0 = time.perf_counter()
    rankjit.evaluate(labels[:64], scores[:64], list(DEMO_MEASURES))
    rankjit.evaluate(labels[:4096], scores[:4096], list(DEMO_MEASURES))
    print(f"compile / cache load: {time.perf_counter() - t0:.2f} s")
    best = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        means = rankjit.evaluate(labels, scores, list(DEMO_MEASURES))
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    width = max(len(m) for m in DEMO_MEASURES)
    for name, value in means.items():
        print(f"  {name:<{width}}  {value:.4f}")
    print(f"{len(DEMO_MEASURES)} measures, one ranking pass: {best:.3f} s "
          f"= {best / args.queries * 1e6:.3f} us per query, {args.queries / best:,.0f} queries/s (best of {args.repeat})")
    return 0


def register(subparsers):
    p = subparsers.add_parser("demo", help="score a generated batch with every list measure and print the throughput")
    p.add_argument("--queries", type=int, default=1_000_000, help="number of queries (default 1,000,000)")
    p.add_argument("--docs", type=int, default=100, help="documents per query (default 100)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions (the best is reported)")
    p.set_defaults(func=run)
