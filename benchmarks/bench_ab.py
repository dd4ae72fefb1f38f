"""A/B timing of the working tree against an earlier commit, in one process.

The package at ``REV`` is extracted with ``git archive`` into a temporary directory and
renamed ``rankjit_base`` (its own imports rewritten), so both versions load side by side.
Each repetition calls both, in alternating order, and times each call with the calling
thread's CPU time on one Numba thread: load on the shared machine then hits both versions
alike, and the per-repetition ratio new/base is the figure to read.  Before timing, the
two versions' per-query results are compared (rtol 1e-12).

Usage::

    python benchmarks/bench_ab.py cc4c273                       # six measures, nDCG@10, AP
    python benchmarks/bench_ab.py HEAD~1 --measures "P@10" "nDCG@10,AP" --queries 200000
    python benchmarks/bench_ab.py HEAD --threads 2 --queries 1000000    # wall clock, 2 threads
    python benchmarks/bench_ab.py HEAD --valued 0.05 --measures nDCG@10  # sparse judgments
    python benchmarks/bench_ab.py HEAD --valued 0.2 --tied 2 --measures nDCG@10  # tie-heavy scores
    python benchmarks/bench_ab.py HEAD --valued 0.9 --docs 250 --float64 --measures nDCG@20  # dense, long rows
    python benchmarks/bench_ab.py HEAD --valued 0.45 --tied 2 --ties stable --measures nDCG@10  # the stable rule
    python benchmarks/bench_ab.py HEAD --lightgbm-rounds 3 --ties stable --measures "nDCG(empty='one')@10"
"""
from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SETS = ["nDCG@10,AP,ERR@20,pFound,P@10,RR", "nDCG@10", "AP"]


def extract_base(rev: str, into: str) -> None:
    """Write ``src/rankjit`` of ``rev`` to ``into/rankjit_base`` with its imports renamed."""
    blob = subprocess.run(["git", "-C", ROOT, "archive", rev, "src/rankjit"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        try:
            tar.extractall(into, filter="data")
        except TypeError:  # Python without extraction filters (before 3.10.12 / 3.11.4)
            tar.extractall(into)
    os.rename(os.path.join(into, "src", "rankjit"), os.path.join(into, "rankjit_base"))
    # module paths in imports and in strings ("rankjit" names the package for its lazy attributes)
    pattern = re.compile(r"\brankjit(?=[.\s\"']|$)", re.M)
    for folder, _, files in os.walk(os.path.join(into, "rankjit_base")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path) as fh:
                    text = fh.read()
                with open(path, "w") as fh:
                    fh.write(pattern.sub("rankjit_base", text))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the commit to compare against (git revision)")
    ap.add_argument("--measures", nargs="+", default=DEFAULT_SETS, help="comma-separated measure sets")
    ap.add_argument("--queries", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--threads", type=int, default=1,
                    help="Numba threads; above 1 the calls are timed by the wall clock (thread CPU time sees one thread)")
    ap.add_argument("--valued", type=float, default=None, metavar="FRACTION",
                    help="instead of rankjit._demo.make_batch: each document graded 1..4 with this probability, "
                         "else 0 (sparse or dense judgments), scores 0.35 * grade + N(0, 1)")
    ap.add_argument("--tied", type=int, default=None, metavar="LEVELS",
                    help="round the scores to LEVELS steps per unit (tie-heavy scores: many valued documents tie)")
    ap.add_argument("--docs", type=int, default=100, help="documents per query (with --valued)")
    ap.add_argument("--float64", action="store_true", help="float64 scores (with --valued; default float32)")
    ap.add_argument("--ties", default=None, help="the tie rule of every call (default: evaluate's own)")
    ap.add_argument("--lightgbm-rounds", type=int, default=None, metavar="R",
                    help="instead: 10k x 100 LightGBM labels and the scores of an R-round lambdarank model "
                         "(ab_count_all.py's case; tie-heavy for small R)")
    args = ap.parse_args()

    import numba
    import numpy as np

    tmp = tempfile.mkdtemp(prefix="rankjit_ab_")
    extract_base(args.rev, tmp)
    sys.path.insert(0, tmp)
    import rankjit
    import rankjit_base
    from rankjit._demo import make_batch

    if args.lightgbm_rounds is not None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from ab_count_all import _lightgbm_case

        labels, scores, _ = _lightgbm_case(args.lightgbm_rounds)
        labels, scores = labels.reshape(-1, 100), scores.reshape(-1, 100)
        args.queries = labels.shape[0]
    elif args.valued is None:
        labels, scores = make_batch(args.queries, 100, 0)
    else:
        rng = np.random.default_rng(0)
        shape = (args.queries, args.docs)
        labels = ((rng.random(shape) < args.valued) * rng.integers(1, 5, shape)).astype(np.int8)
        scores = labels * np.float32(0.35) + rng.standard_normal(shape, dtype=np.float32)
        if args.float64:
            scores = scores.astype(np.float64)
    if args.tied is not None:
        scores = (np.round(scores * args.tied) / args.tied).astype(scores.dtype)
    numba.set_num_threads(args.threads)  # benchmark script only; the library never does this
    clock = time.thread_time if args.threads == 1 else time.perf_counter
    sets = [m.split(",") for m in args.measures]
    rule = {} if args.ties is None else {"ties": args.ties}
    for ms in sets:  # compile both, and check that they agree
        a = rankjit_base.evaluate(labels[:4096], scores[:4096], ms, per_query=True, **rule)
        b = rankjit.evaluate(labels[:4096], scores[:4096], ms, per_query=True, **rule)
        for name in a:
            np.testing.assert_allclose(b[name], a[name], rtol=1e-12, atol=1e-15)
    timing = "1 thread, thread CPU time" if args.threads == 1 else f"{args.threads} threads, wall clock"
    print(f"{args.queries:,} queries x {labels.shape[1]} docs, {timing}; base = {args.rev}, "
          f"median of {args.repeat} alternating pairs")
    for ms in sets:
        base_t, new_t = [], []
        for r in range(args.repeat):
            order = (rankjit_base, rankjit) if r % 2 == 0 else (rankjit, rankjit_base)
            for lib in order:
                t0 = clock()
                lib.evaluate(labels, scores, ms, **rule)
                dt = (clock() - t0) / args.queries * 1e6
                (base_t if lib is rankjit_base else new_t).append(dt)
        base_t, new_t = np.array(base_t), np.array(new_t)
        print(f"  {','.join(ms):40s} base {np.median(base_t):.3f}  new {np.median(new_t):.3f} us/query  "
              f"new/base {np.median(new_t / base_t):.3f}")


if __name__ == "__main__":
    main()
