"""A script that makes one ir_measures call in a fresh process, with and without rankjit (not a test).

    python benchmarks/bench_oneshot_ir_measures.py [--repeats 7] [--queries 100 300 1000] [--data ../shared/data]
        [--measures "nDCG@10 AP P@10 R@100 RR"] [--base REV]

Each run is a new Python process that imports ir_measures (and, for rankjit, registers
``rankjit.integrations.ir_measures``), then calls ``ir_measures.calc_aggregate(measures,
ir_measures.read_trec_qrels(qrels), ir_measures.read_trec_run(run))`` once on TREC files:
the whole of a one-off evaluation script, start-up included (Python, the imports, Numba's
first use, the cached kernels' loading). Files: the TREC 2012 Web track (50 queries x 1000,
``web2012/`` of the shared data folder) and synthetic ones of ``--queries`` queries x 1000
documents (``_compare.synthetic``, written by ``bench_compat_ir_measures.files``). Numba's cache is
warmed first (one run per case, not timed); Python writes its bytecode files
(``PYTHONDONTWRITEBYTECODE`` is dropped for the children), as an installed package has them.
Runs are interleaved (the order alternates); the table gives medians of wall-clock time.

``--base REV`` also runs rankjit as it was at git revision ``REV`` (``git archive`` of its
``src/``, put first on ``PYTHONPATH``).  For pytrec_eval's first call in a fresh process, see
``bench_compat_pytrec_eval.py --first-call``.
"""
from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(mode, measures, qrels, run):
    """The measured script: one calc_aggregate call (mode "rankjit": the provider registered first)."""
    import ir_measures

    if mode == "rankjit":
        from rankjit.integrations import ir_measures as rj

        rj.register()
    parsed = [ir_measures.parse_measure(m) for m in measures.split()]
    ir_measures.calc_aggregate(parsed, ir_measures.read_trec_qrels(qrels), ir_measures.read_trec_run(run))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--queries", type=int, nargs="*", default=[100, 300, 1000], help="synthetic sizes (x 1000)")
    ap.add_argument("--data", help="the shared data folder (default: ../shared/data)")
    ap.add_argument("--measures", default="nDCG@10 AP P@10 R@100 RR")
    ap.add_argument("--base", help="also run rankjit at this git revision")
    ap.add_argument("--child", nargs=4, metavar=("MODE", "MEASURES", "QRELS", "RUN"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    from _compare import DEFAULT_DATA, synthetic  # (after the children's return: they time the script alone)
    from bench_compat_ir_measures import files

    data = Path(args.data or DEFAULT_DATA)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cases = []
        web = data / "web2012"
        if web.is_dir():
            cases.append(("web2012", web / "qrels.adhoc.txt", web / "run.ql.cata.txt"))
        else:
            print(f"{web} not found: TREC 2012 Web left out", file=sys.stderr)
        cases += [(f"synthetic {n} x 1000", *files(*synthetic(n, 1000))) for n in args.queries]
        contenders = {"ir_measures": ("ir_measures", None), "rankjit": ("rankjit", None)}
        if args.base:
            blob = subprocess.run(["git", "-C", str(ROOT), "archive", args.base, "src"], check=True,
                                  capture_output=True).stdout
            with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
                try:
                    tar.extractall(tmp / "base", filter="data")
                except TypeError:  # Python without extraction filters (before 3.10.12 / 3.11.4)
                    tar.extractall(tmp / "base")
            contenders[f"rankjit@{args.base}"] = ("rankjit", str(tmp / "base" / "src"))

        def run_once(name, qrels, run):
            mode, path = contenders[name]
            env = dict(os.environ)
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # (bytecode files, as an installed package has them)
            if path:
                env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
            start = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--child", mode, args.measures, str(qrels), str(run)], env=env,
                           check=True)
            return time.perf_counter() - start

        names = list(contenders)
        print(f"{'data':<22} " + " ".join(f"{n:>18}" for n in names) + "   ir_measures / rankjit")
        for label, qrels, run in cases:
            for name in names:  # warm-up: Numba's cache, bytecode files
                run_once(name, qrels, run)
            times = {n: [] for n in names}
            for i in range(args.repeats):
                order = names[i % len(names):] + names[:i % len(names)]
                for name in (order if i % 2 else order[::-1]):
                    times[name].append(run_once(name, qrels, run))
            med = {n: statistics.median(t) for n, t in times.items()}
            print(f"{label:<22} " + " ".join(f"{med[n]:>16.3f} s" for n in names)
                  + f"   {med['ir_measures'] / med['rankjit']:.2f}x")
    print(f"medians of {args.repeats} fresh processes each; measures: {args.measures}")


if __name__ == "__main__":
    main()
