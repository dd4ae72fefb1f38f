"""Peak memory of ``rankjit trec_eval`` when every query has grades of its own (issue 14's known limit).

Writes qrels of N queries, two judgments each with a grade no other query has (dwell
times as grades, say), and a run retrieving both, then runs ``rankjit trec_eval -m map``
(and the real trec_eval, if ``--trec-eval PATH`` is given) under ``/usr/bin/time`` and
prints seconds and peak resident memory.  The per-query counts by grade are sparse
(``AlignedRun.judged_counts``), so memory grows with the judgments, like trec_eval's; while
they were a dense table (queries x distinct grades, int64) it grew with N^2.  Measured
(2-core machine, session 20): N = 8000, rankjit 1.0 s and 197 MB, trec_eval 0.4 s and 4 MB;
N = 32,000, rankjit 1.1 s and 214 MB, trec_eval 5.0 s and 11 MB.  The code before (7b6a22e, the dense
table) against now on N = 8000, interleaved, warm cache: 1.11 s and 1154 MB against 0.58 s and 155 MB.

    python benchmarks/bench_distinct_grades.py 8000 --trec-eval "$(bash ../shared/tools/build-trec_eval | tail -1)"
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile


def write_files(directory, n_queries):
    qrels, run = os.path.join(directory, "dg.qrels"), os.path.join(directory, "dg.run")
    with open(qrels, "w") as q, open(run, "w") as r:
        for i in range(n_queries):
            q.write(f"q{i} 0 a {2 * i + 1}\nq{i} 0 b {2 * i + 2}\n")
            r.write(f"q{i} Q0 a 1 2 run\nq{i} Q0 b 2 1 run\n")
    return qrels, run


def timed(argv):
    """``(seconds, peak KB, last stdout line)`` of a command run under /usr/bin/time."""
    proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", *argv], capture_output=True, text=True)
    m = re.search(r"([0-9.]+) ([0-9]+)\s*$", proc.stderr)
    out = proc.stdout.strip().splitlines()
    return (float(m.group(1)), int(m.group(2))) if m else (float("nan"), -1), (out[-1] if out else proc.stderr[-200:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queries", type=int, nargs="?", default=8000)
    parser.add_argument("--trec-eval", default=None, help="path of the real trec_eval")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = write_files(tmp, args.queries)
        contenders = [("rankjit", [sys.executable, "-m", "rankjit", "trec_eval", "-m", "map", qrels, run])]
        if args.trec_eval:
            contenders.append(("trec_eval", [args.trec_eval, "-m", "map", qrels, run]))
        for name, argv in contenders:
            (seconds, kb), line = timed(argv)
            print(f"{name:10s} {args.queries} queries, {2 * args.queries} distinct grades: {seconds:.2f} s, "
                  f"peak {kb / 1024:.0f} MB  ({line})")


if __name__ == "__main__":
    main()
