"""pytrec_eval against rankjit.compat.pytrec_eval, end to end as users call them (not a test).

    python benchmarks/bench_compat_pytrec_eval.py [--queries 100000 --docs 100] [--repeats 5] [--data ../shared/data]

The same dicts of dicts go to both: ``RelevanceEvaluator(qrels, measures)`` ("init": the
qrels converted), ``.evaluate(run)`` ("evaluate": the run converted and evaluated, the
output dict built) and the two together ("total", what a script that evaluates one run
pays).  Two data sets: the TREC 2012 Web track (50 queries x 1000 documents, ``web2012/`` of
the shared data folder, read with ``pytrec_eval.parse_qrel`` / ``parse_run``) and a
synthetic one (``--queries`` x ``--docs``; 30 judgments per query, 20 of them on retrieved
documents, grades -1..3; scores with 3 decimals, so some ties: the generator of
``bench_compat_ir_measures.py``).  Two measure sets: ``{'map', 'ndcg_cut.10', 'P.10',
'recall.100'}`` and ``{'map', 'ndcg'}``.

Repeats are interleaved (pytrec_eval, rankjit, pytrec_eval, ...; the order alternates), and
the table gives medians of wall-clock and of process CPU time (steadier on a shared machine),
their ratios pytrec_eval / rankjit, and the wall-clock time per query.  Numba's cache is
warmed first (one call of each case, not timed); the first call in a fresh process is timed
apart (``--first-call``: kernels loaded from the disk cache; with ``--cold``, an empty cache:
compiled).  Each case checks that both give the same values (largest difference printed).
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data"
SETS = {
    "map ndcg_cut.10 P.10 recall.100": {"map", "ndcg_cut.10", "P.10", "recall.100"},
    "map ndcg": {"map", "ndcg"},
}


def web2012(data):
    """(qrels, run) dicts of the TREC 2012 Web track's adhoc qrels and its query-likelihood run."""
    import pytrec_eval

    web = Path(data) / "web2012"
    with open(web / "qrels.adhoc.txt") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(web / "run.ql.cata.txt") as f:
        run = pytrec_eval.parse_run(f)
    return dict(qrels), dict(run)


def synthetic(n_queries, n_docs, seed=0):
    """(qrels, run) dicts: ``n_docs`` retrieved per query, 20 of them judged plus 10 judged unretrieved."""
    rng = np.random.default_rng(seed)
    doc_num = rng.permutation(10 * n_queries * n_docs)[: n_queries * (n_docs + 10)].reshape(n_queries, n_docs + 10)
    scores = np.round(rng.normal(size=(n_queries, n_docs)) * 10, 3).tolist()
    grades = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=(n_queries, 30)).tolist()
    run, qrels = {}, {}
    for q in range(n_queries):
        docs = [f"clueweb-{d:09d}" for d in doc_num[q].tolist()]
        qid = str(1000 + q)
        run[qid] = dict(zip(docs[:n_docs], scores[q]))
        judged = [docs[i] for i in rng.choice(n_docs, 20, replace=False).tolist()] + docs[n_docs:]
        qrels[qid] = dict(zip(judged, grades[q]))
    return qrels, run


def largest_difference(a, b):
    """The largest |difference| of two results (inf when their queries or keys differ; NaN = NaN)."""
    if list(a) != list(b) or any(list(a[q]) != list(b[q]) for q in a):
        return math.inf
    x = np.array([v for m in a.values() for v in m.values()])
    y = np.array([v for m in b.values() for v in m.values()])
    both_nan = np.isnan(x) & np.isnan(y)
    return float(np.max(np.where(both_nan, 0.0, np.abs(x - y)), initial=0.0))


def timed(fn):
    """``((wall-clock s, process CPU s), fn())``."""
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return (time.perf_counter() - w, time.process_time() - c), out


def first_call(data, lib, cold=False):
    """Seconds of the import and the first init + evaluate of the Web 2012 case in a fresh process."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        proc = subprocess.run([sys.executable, __file__, "--data", str(data), "--first-call-child", lib], env=env,
                              capture_output=True, text=True, check=True)
    return float(proc.stdout.split()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="the shared data folder (holds web2012/)")
    ap.add_argument("--only", choices=["web2012", "synthetic"], help="one data set")
    ap.add_argument("--first-call", action="store_true", help="also time the first call in a fresh process")
    ap.add_argument("--cold", action="store_true", help="with --first-call: an empty Numba cache (compiling)")
    ap.add_argument("--first-call-child", choices=["pytrec_eval", "rankjit"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.first_call_child:
        qrels, run = web2012(args.data)  # (pytrec_eval's parsers, imported here: not timed)
        t = time.perf_counter()
        if args.first_call_child == "rankjit":
            from rankjit.compat import pytrec_eval as lib
        else:
            del sys.modules["pytrec_eval"], sys.modules["pytrec_eval_ext"]  # (imported again, timed)
            import pytrec_eval as lib
        lib.RelevanceEvaluator(qrels, SETS["map ndcg_cut.10 P.10 recall.100"]).evaluate(run)
        print(f"{time.perf_counter() - t:.3f}")
        return

    import numba
    import pytrec_eval

    from rankjit.compat import pytrec_eval as rj

    datasets = []
    if args.only in (None, "web2012"):
        if (Path(args.data) / "web2012").is_dir():
            datasets.append(("web2012", *web2012(args.data)))
        else:
            print(f"web2012/ not found in {args.data}: skipped")
    if args.only in (None, "synthetic"):
        t = time.perf_counter()
        datasets.append((f"synthetic {args.queries}x{args.docs}", *synthetic(args.queries, args.docs)))
        print(f"generated the synthetic data in {time.perf_counter() - t:.1f} s")

    print(f"rankjit threads: {numba.config.NUMBA_NUM_THREADS}; pytrec_eval {pytrec_eval.__version__}; "
          f"{args.repeats} interleaved repeats, medians")
    head = (f"{'data':<21} {'measures':<31} {'step':<8} {'pytrec_eval':>11} {'rankjit':>9} {'ratio':>6} "
            f"{'pte CPU':>9} {'rj CPU':>9} {'ratio':>6} {'us/q pte':>9} {'us/q rj':>8}")
    print(head)
    print("-" * len(head))
    for name, qrels, run in datasets:
        n_q = len(run)
        for set_name, measures in SETS.items():
            libs = {"pytrec_eval": pytrec_eval, "rankjit": rj}
            for lib in libs.values():  # warm-up: Numba's kernels loaded or compiled, not timed
                lib.RelevanceEvaluator(qrels, measures).evaluate(run)
            times = {(lib, step): [] for lib in libs for step in ("init", "evaluate", "total")}
            results = {}
            for r in range(args.repeats):
                for lib in (list(libs) if r % 2 == 0 else list(libs)[::-1]):
                    mod = libs[lib]
                    t_init, ev = timed(lambda mod=mod: mod.RelevanceEvaluator(qrels, measures))
                    t_eval, out = timed(lambda ev=ev: ev.evaluate(run))
                    times[lib, "init"].append(t_init)
                    times[lib, "evaluate"].append(t_eval)
                    times[lib, "total"].append((t_init[0] + t_eval[0], t_init[1] + t_eval[1]))
                    results[lib] = out
                    del ev, out
            diff = largest_difference(results["pytrec_eval"], results["rankjit"])
            for step in ("init", "evaluate", "total"):
                (pw, pc), (qw, qc) = ([statistics.median(t[i] for t in times[lib, step]) for i in (0, 1)]
                                      for lib in libs)
                print(f"{name:<21} {set_name:<31} {step:<8} {pw:>9.4f} s {qw:>7.4f} s {pw / qw:>5.1f}x "
                      f"{pc:>7.4f} s {qc:>7.4f} s {pc / qc:>5.1f}x {1e6 * pw / n_q:>9.1f} {1e6 * qw / n_q:>8.1f}")
            print(f"{'':<21} {'':<31} largest |difference| of the values: {diff:.3g}")
            results.clear()
    if args.first_call:
        print("first call in a fresh process (web2012: import, init and evaluate):")
        print(f"  pytrec_eval {first_call(args.data, 'pytrec_eval'):.3f} s; "
              f"rankjit {first_call(args.data, 'rankjit'):.3f} s (Numba's cache on disk)")
        if args.cold:
            cold = first_call(args.data, "rankjit", cold=True)
            print(f"  rankjit with an empty Numba cache (compiling): {cold:.3f} s")


if __name__ == "__main__":
    main()
