"""What the measures that read ``judged=`` cost on top of the others, in one ``rankjit.evaluate`` call.

With ``judged=``, some measures read another view of the batch than the labels
(``rankjit._api._list_parts``): the judged documents alone (``judged_only=True``), the
judged flags (``Judged@k``), the judgment codes (Bpref, infAP; with ``pooled=``, infAP
tells pooled documents apart) and the grades shifted by one (the measures that give grade 0
a value, ``nDCG(gains={0:1,...})``).  The labels, the flags, the codes and the shifted
grades share one ranking (of the shifted grades; by two with a pool that infAP reads); the
judged documents alone are ranked on their own.  This script times a base set alone and with each of those
added, interleaved, on one thread (thread CPU time), and prints the medians and the
ratio to the base set with ``judged=``.

Usage::

    python benchmarks/bench_judged.py                     # 50,000 queries x 100 documents, median of 7
    python benchmarks/bench_judged.py --queries 200000 --repeat 11
    python benchmarks/bench_judged.py --base "nDCG@10" "P@10"     # another base set (here: cutoffs only)
    PYTHONPATH=<other tree>/src python benchmarks/bench_judged.py    # another tree, for a before/after
"""
from __future__ import annotations

import argparse
import time

import numpy as np

BASE = ["nDCG@10", "AP", "P@10"]
ADDED = {
    "Judged@10": ["Judged@10"],
    "P(judged_only=True)@10": ["P(judged_only=True)@10"],
    "Bpref": ["Bpref"],
    "nDCG(gains={0:1,...})@10": ["nDCG(gains={0:1,1:2,2:3,3:4})@10"],
    "Judged@10 and nDCG(gains=...)@10": ["Judged@10", "nDCG(gains={0:1,1:2,2:3,3:4})@10"],
    "all four": ["Judged@10", "P(judged_only=True)@10", "Bpref", "nDCG(gains={0:1,1:2,2:3,3:4})@10"],
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=50_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--base", nargs="+", default=BASE, help=f"the base set of measures (default: {' '.join(BASE)})")
    args = ap.parse_args(argv)
    base = list(args.base)
    import numba

    import rankjit

    numba.set_num_threads(1)  # benchmark script only; the library never does this
    rng = np.random.default_rng(0)
    shape = (args.queries, args.docs)
    labels = ((rng.random(shape) < 0.3) * rng.integers(1, 4, shape)).astype(np.int8)
    scores = rng.random(shape).astype(np.float32)
    judged = (labels > 0) | (rng.random(shape) < 0.4)  # relevant documents are judged
    sets = {"base, without judged=": (base, {}), "base, with judged=": (base, {"judged": judged})}
    sets.update({f"base + {name}": (base + extra, {"judged": judged}) for name, extra in ADDED.items()})
    # a pool that infAP reads (pooled but unjudged documents): the judged grades shifted by two
    pooled = judged | (rng.random(shape) < 0.2)
    sets["base + infAP, pooled="] = (base + ["infAP"], {"judged": judged, "pooled": pooled})
    sets["base + Judged@10, infAP, pooled="] = (base + ["Judged@10", "infAP"], {"judged": judged, "pooled": pooled})
    for names, kw in sets.values():  # compile (or load) first
        rankjit.evaluate(labels, scores, names, **kw)
    times = {name: [] for name in sets}
    for _ in range(args.repeat):
        for name, (names, kw) in sets.items():
            t0 = time.thread_time()
            rankjit.evaluate(labels, scores, names, **kw)
            times[name].append(time.thread_time() - t0)
    ref = np.median(times["base, with judged="])
    print(f"{args.queries:,} queries x {args.docs} documents, 1 thread, thread CPU time, median of {args.repeat}; "
          f"base: {' '.join(base)}")
    for name, ts in times.items():
        med = np.median(ts)
        print(f"  {name:40s} {med * 1e3:8.1f} ms   x{med / ref:.2f} of the base with judged=")


if __name__ == "__main__":
    main()
