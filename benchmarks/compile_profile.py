"""Where a first call's compile time goes: self time per compiled function, on an empty cache.

Runs one scenario in this (fresh) process with a new, empty ``NUMBA_CACHE_DIR`` and a
listener on Numba's ``numba:compile`` events (they nest: a kernel's self time is its
own time minus its callees'), then prints the total wall time (from before ``import
numba``) and the functions by self time.  For comparing two trees, run it alternately
in fresh processes (``PYTHONPATH=<other tree>/src`` selects the other tree) and compare
medians: one run swings by 0.2-0.3 s on this machine.

Usage::

    python benchmarks/compile_profile.py ndcg          # rankjit.ndcg, int8 / float32, 100 x 100
    python benchmarks/compile_profile.py ndcg 0.3      # the same with 30% of the documents valued
    python benchmarks/compile_profile.py ten           # evaluate() with the ten list measures
    python benchmarks/compile_profile.py stable 0.45   # evaluate(..., ["nDCG@10"], ties="stable"), float64 scores
    python benchmarks/compile_profile.py trec QRELS RUN    # rankjit trec_eval QRELS RUN
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time

TEN = ["P@10", "R@10", "Success@10", "RR", "AP", "Rprec", "DCG@10", "nDCG@10", "ERR@20", "pFound"]


def main(argv):
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="rankjit-profile-")
    import numpy as np

    rng = np.random.default_rng(0)
    # the fraction of documents with a grade > 0 (10% by default; bench_coldstart.py's data: 0.3)
    valued = float(argv[1]) if len(argv) > 1 and argv[0] in ("ndcg", "ten", "stable") else 0.1
    labels = ((rng.random((100, 100)) < valued) * rng.integers(1, 5, (100, 100))).astype(np.int8)
    scores = rng.random((100, 100)).astype(np.float32)
    t0 = time.perf_counter()
    c0 = time.process_time()  # CPU time: steadier than the wall clock on a shared machine
    from numba.core import event

    stack, rows = [], []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append([time.perf_counter(), 0.0, ev.data["dispatcher"].py_func.__qualname__])

        def on_end(self, ev):
            start, children, name = stack.pop()
            spent = time.perf_counter() - start
            if stack:
                stack[-1][1] += spent
            rows.append((name, spent - children))

    event.register("numba:compile", Listener())
    what = argv[0] if argv else "ndcg"
    if what == "ndcg":
        import rankjit

        rankjit.ndcg(labels, scores, k=10)
    elif what == "ten":
        import rankjit

        rankjit.evaluate(labels, scores, TEN)
    elif what == "stable":  # the LTR adapters' tie rule (a rank pass of its own), float64 scores as they give
        import rankjit

        rankjit.evaluate(labels, scores.astype(np.float64), ["nDCG@10"], ties="stable")
    elif what == "trec" and len(argv) == 3:
        from rankjit.cli import main as cli

        with contextlib.redirect_stdout(io.StringIO()):
            cli(["trec_eval", argv[1], argv[2]])
    else:
        sys.exit(__doc__)
    total = time.perf_counter() - t0
    cpu = time.process_time() - c0
    by_name = {}
    for name, own in rows:
        count, seconds = by_name.get(name, (0, 0.0))
        by_name[name] = (count + 1, seconds + own)
    compiling = sum(s for _, s in by_name.values())
    print(f"total {total:.2f} s, CPU {cpu:.2f} s (from before `import numba`); compiling {compiling:.2f} s")
    for name, (count, seconds) in sorted(by_name.items(), key=lambda kv: -kv[1][1])[:25]:
        print(f"{seconds:7.3f} s  x{count}  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
