"""pytrec_eval against rankjit.compat.pytrec_eval, end to end as users call them (not a test).

    python benchmarks/bench_compat_pytrec_eval.py [--queries 100000 --docs 100] [--repeats 5] [--data ../shared/data]
        [--files] [--base REV] [--first-call [--cold]]

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

The ``floor`` lines time ``_compare.ReadFloor``, interleaved with the others: only the reads
any evaluator written in Python must make of these dicts, with the fastest C-level iteration
we know, and the output dicts built; no measure is computed.  pytrec_eval / floor is the
largest ratio a front end that reads the caller's dicts from Python can reach.  The
``cfloor`` lines time ``_compare.CompiledReadFloor``: the same reads made by rankjit's
compiled passes (the C API of CPython's dicts, the passes the front end uses), nothing else;
pytrec_eval / cfloor is the largest ratio a front end built on those passes can reach.

``--files`` adds the ``files`` lines: a whole script from TREC files, each library's own
``parse_qrel(open(path))`` and ``parse_run(open(path))``, then ``RelevanceEvaluator(qrels,
measures).evaluate(run)`` (the data written to files first), interleaved as the other steps.

``--base REV`` also times rankjit as it was at git revision ``REV`` (extracted by
``bench_ab.py`` as the package ``rankjit_base``), interleaved with the two others in the same
run (each repeat takes the next order of ``_compare.interleaved``'s design: with the two floors,
five contenders, use a multiple of 10 repeats; before 2026-12-01 the first orders of all 120
permutations were used, which always ran rankjit right after pytrec_eval and the base right
after rankjit, and biased the ``@REV`` lines):
one more line per step gives its times and the ratios pytrec_eval / rankjit@REV, and the
line ``rankjit@REV / rankjit`` the speed-up of the working tree.
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _compare import CompiledReadFloor, ReadFloor, fastest_join, interleaved, medians, parser, ratio, timed
from _compare import datasets as load

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


def largest_difference(a, b):
    """The largest |difference| of two results (inf when their queries or keys differ; NaN = NaN)."""
    if list(a) != list(b) or any(list(a[q]) != list(b[q]) for q in a):
        return math.inf
    x = np.array([v for m in a.values() for v in m.values()])
    y = np.array([v for m in b.values() for v in m.values()])
    both_nan = np.isnan(x) & np.isnan(y)
    return float(np.max(np.where(both_nan, 0.0, np.abs(x - y)), initial=0.0))


def first_call(data, lib, cold=False):
    """Seconds of the import and the first init + evaluate of the Web 2012 case in a fresh process."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        proc = subprocess.run([sys.executable, __file__, "--data", str(data), "--first-call-child", lib], env=env,
                              capture_output=True, text=True, check=True)
    return float(proc.stdout.split()[-1])


class _FloorLibrary:
    """:class:`_compare.ReadFloor` with pytrec_eval's interface (the ``floor`` lines)."""

    keys = ()  # the output's measure keys (pytrec_eval's, set per measure set)

    join = "judged"  # ReadFloor's join (the faster on the data set, set per data set)

    class RelevanceEvaluator:
        def __init__(self, query_relevance, measures, relevance_level=1):
            self.floor = ReadFloor(query_relevance, relevance_level, _FloorLibrary.join)

        def evaluate(self, scores):
            return self.floor.evaluate(scores, _FloorLibrary.keys)


class _CompiledFloorLibrary:
    """:class:`_compare.CompiledReadFloor` with pytrec_eval's interface (the ``cfloor`` lines)."""

    class RelevanceEvaluator:
        def __init__(self, query_relevance, measures, relevance_level=1):
            self.floor = CompiledReadFloor(query_relevance, relevance_level)

        def evaluate(self, scores):
            return self.floor.evaluate(scores, _FloorLibrary.keys)


def files_step(name, qrels, run, n_q, args, libs):
    """The ``files`` lines: a script from TREC files, ``parse_qrel(open(q))``, ``parse_run(open(r))``,
    ``RelevanceEvaluator(qrels, measures)`` and ``evaluate(run)`` with each library's own functions (the data
    written to files first: the TREC 2012 Web data as its dicts hold it), interleaved."""
    folder = Path(tempfile.mkdtemp(prefix="bench_pytrec_eval_"))
    q_path, r_path = folder / "qrels", folder / "run"
    q_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    r_path.write_text("".join(f"{q} Q0 {d} {i + 1} {x!r} tag\n" for q, docs in run.items()
                              for i, (d, x) in enumerate(docs.items())))

    def script(lib, measures):
        with open(q_path) as f:
            q = lib.parse_qrel(f)
        with open(r_path) as f:
            r = lib.parse_run(f)
        return lib.RelevanceEvaluator(q, measures).evaluate(r)

    for set_name, measures in SETS.items():
        outs = {lib: script(mod, measures) for lib, mod in libs.items()}  # (warm-up)
        diff = max(largest_difference(outs["pytrec_eval"], out) for out in outs.values())
        times = {lib: [] for lib in libs}
        for r in range(args.repeats):
            for lib in interleaved(libs, r):
                times[lib].append(timed(lambda mod=libs[lib]: script(mod, measures))[0])
        for lib in list(libs)[1:]:
            (pw, pc), (qw, qc) = medians(times["pytrec_eval"]), medians(times[lib])
            label = "files" if lib == "rankjit" else f"  @{args.base}"
            print(f"{name:<21} {set_name:<31} {label:<8} {pw:>9.4f} s {qw:>7.4f} s {pw / qw:>5.1f}x "
                  f"{pc:>7.4f} s {qc:>7.4f} s {pc / qc:>5.1f}x {1e6 * pw / n_q:>9.1f} {1e6 * qw / n_q:>8.1f}")
        print(f"{'':<21} {'':<31} largest |difference| of the values from files: {diff:.3g}")


def main(argv=None):
    ap = parser(__doc__, repeats=5)
    ap.add_argument("--first-call", action="store_true", help="also time the first call in a fresh process")
    ap.add_argument("--cold", action="store_true", help="with --first-call: an empty Numba cache (compiling)")
    ap.add_argument("--first-call-child", choices=["pytrec_eval", "rankjit"], help=argparse.SUPPRESS)
    ap.add_argument("--base", metavar="REV", help="also time rankjit at this git revision (before/after)")
    ap.add_argument("--files", action="store_true",
                    help="also time the whole script from TREC files: parse_qrel, parse_run, init and evaluate")
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

    base = None
    if args.base:
        from bench_ab import extract_base

        folder = tempfile.mkdtemp(prefix="rankjit_base_")
        extract_base(args.base, folder)
        sys.path.insert(0, folder)
        import rankjit_base.compat.pytrec_eval as base

    datasets = load(args, web2012)

    print(f"rankjit threads: {numba.config.NUMBA_NUM_THREADS}; pytrec_eval {pytrec_eval.__version__}; "
          f"{args.repeats} interleaved repeats, medians")
    head = (f"{'data':<21} {'measures':<31} {'step':<8} {'pytrec_eval':>11} {'rankjit':>9} {'ratio':>6} "
            f"{'pte CPU':>9} {'rj CPU':>9} {'ratio':>6} {'us/q pte':>9} {'us/q rj':>8}")
    print(head)
    print("-" * len(head))
    for name, qrels, run in datasets:
        n_q = len(run)
        _FloorLibrary.join = fastest_join(qrels, run)
        print(f"{name}: the floor joins by one lookup per {_FloorLibrary.join} document (the faster way here)")
        for set_name, measures in SETS.items():
            libs = {"pytrec_eval": pytrec_eval, "rankjit": rj}
            if base is not None:
                libs[f"rankjit@{args.base}"] = base
            libs["floor"] = _FloorLibrary
            libs["cfloor"] = _CompiledFloorLibrary
            for lib in libs.values():  # warm-up: Numba's kernels loaded or compiled, not timed
                out = lib.RelevanceEvaluator(qrels, measures).evaluate(run)
                if lib is pytrec_eval:
                    _FloorLibrary.keys = list(next(iter(out.values())))
            times = {(lib, step): [] for lib in libs for step in ("init", "evaluate", "total")}
            results = {}
            for r in range(args.repeats):
                for lib in interleaved(libs, r):
                    mod = libs[lib]
                    t_init, ev = timed(lambda mod=mod: mod.RelevanceEvaluator(qrels, measures))
                    t_eval, out = timed(lambda ev=ev: ev.evaluate(run))
                    times[lib, "init"].append(t_init)
                    times[lib, "evaluate"].append(t_eval)
                    times[lib, "total"].append((t_init[0] + t_eval[0], t_init[1] + t_eval[1]))
                    results[lib] = out
                    del ev, out
            diff = max(largest_difference(results["pytrec_eval"], results[lib]) for lib in list(libs)[1:-2])
            for step in ("init", "evaluate", "total"):
                for lib in list(libs)[1:]:
                    (pw, pc), (qw, qc) = medians(times["pytrec_eval", step]), medians(times[lib, step])
                    label = step if lib == "rankjit" else f"  {lib}" if "floor" in lib else f"  @{args.base}"
                    print(f"{name:<21} {set_name:<31} {label:<8} {pw:>9.4f} s {qw:>7.4f} s {pw / qw:>5.1f}x "
                          f"{pc:>7.4f} s {qc:>7.4f} s {pc / qc:>5.1f}x {1e6 * pw / n_q:>9.1f} {1e6 * qw / n_q:>8.1f}")
                if base is not None:
                    old, new = times[f"rankjit@{args.base}", step], times["rankjit", step]
                    ratio_w, ratio_c = ratio(old, new)
                    print(f"{'':<21} {'':<31} {'':<8} rankjit@{args.base} / rankjit: wall {ratio_w:.2f}x, "
                          f"CPU {ratio_c:.2f}x")
            print(f"{'':<21} {'':<31} largest |difference| of the values: {diff:.3g}")
            results.clear()
        if args.files:
            files_step(name, qrels, run, n_q, args, {"pytrec_eval": pytrec_eval, "rankjit": rj,
                                                     **({f"rankjit@{args.base}": base} if base else {})})
    if args.first_call:
        print("first call in a fresh process (web2012: import, init and evaluate):")
        print(f"  pytrec_eval {first_call(args.data, 'pytrec_eval'):.3f} s; "
              f"rankjit {first_call(args.data, 'rankjit'):.3f} s (Numba's cache on disk)")
        if args.cold:
            cold = first_call(args.data, "rankjit", cold=True)
            print(f"  rankjit with an empty Numba cache (compiling): {cold:.3f} s")


if __name__ == "__main__":
    main()
