"""ranx against rankjit.compat.ranx, end to end as users call them (not a test).

    python benchmarks/bench_compat_ranx.py [--queries 100000 --docs 100] [--repeats 3] [--data ../shared/data]
                                           [--only web2012|synthetic] [--inputs dicts,files,frames]

The same inputs go to both libraries, in the three ways users build them: dicts of dicts
(``Qrels(dict)`` / ``Run(dict)``), TREC files (``Qrels.from_file`` / ``Run.from_file``) and
pandas DataFrames (``Qrels.from_df`` / ``Run.from_df``, columns of dtype object, which
ranx requires).  For each: "build" (the Qrels and the Run), "evaluate" (``evaluate(qrels,
run, metrics)`` with the defaults: means returned, per-query values saved in the run) and
"total" (the two: what a script that evaluates one run pays).  Metrics: ndcg@10, map@100,
precision@10, recall@100, mrr.

Two data sets: the TREC 2012 Web track (50 queries x 1000 documents; ``web2012/`` of the
shared data folder, its qrels grades -2..4 and the query-likelihood run, which ties: ranx
and rankjit order tied documents differently, so a few queries differ, as printed) and a
synthetic one (``--queries`` x ``--docs``; 30 judgments per query, 20 of them on retrieved
documents, grades -1..3; distinct random scores, so every value must agree).

Repeats are interleaved (ranx, rankjit, rankjit, ranx, ...), and the table gives medians of
wall-clock and of process CPU time (steadier on a shared machine) and their ratios
ranx / rankjit.  Both libraries compile with Numba: each is warmed first (one small
evaluation of every metric, not timed).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import _compare
import numpy as np
from _compare import interleaved, medians, parser, timed

METRICS = ["ndcg@10", "map@100", "precision@10", "recall@100", "mrr"]


def read_pairs(path, value_field, convert):
    """``{qid: {docno: value}}`` of a TREC file (fields 1 and 3, and ``value_field``)."""
    out = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields:
                out.setdefault(fields[0], {})[fields[2]] = convert(fields[value_field])
    return out


def synthetic(n_queries, n_docs, seed=0):
    """(qrels, run) dicts: ``n_docs`` retrieved per query (distinct scores), 20 judged plus 10 judged unretrieved."""
    return _compare.synthetic(n_queries, n_docs, seed, distinct=True)


def write_files(qrels, run, folder):
    """The dicts as TREC files in ``folder``: (qrels path, run path)."""
    q_path, r_path = os.path.join(folder, "qrels.txt"), os.path.join(folder, "run.txt")
    with open(q_path, "w") as f:
        f.writelines(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    with open(r_path, "w") as f:
        for q, docs in run.items():
            ranked = sorted(docs.items(), key=lambda kv: -kv[1])
            f.writelines(f"{q} Q0 {d} {r} {s!r} bench\n" for r, (d, s) in enumerate(ranked, 1))
    return q_path, r_path


def frames(qrels, run):
    """The dicts as DataFrames with columns q_id, doc_id (dtype object, as ranx's from_df requires) and score."""
    import pandas as pd

    def frame(d, dtype):
        lens = [len(x) for x in d.values()]
        q = np.repeat(np.array(list(d), dtype=object), lens)
        docs = np.array([k for x in d.values() for k in x], dtype=object)
        values = np.fromiter((v for x in d.values() for v in x.values()), dtype=dtype)
        return pd.DataFrame({"q_id": pd.Series(q, dtype=object), "doc_id": pd.Series(docs, dtype=object),
                             "score": values})

    return frame(qrels, np.int64), frame(run, np.float64)


def builders(lib, form, inputs):
    """A function building (qrels, run) with ``lib`` from ``inputs`` in the way ``form`` says."""
    if form == "dicts":
        qrels, run = inputs
        return lambda: (lib.Qrels(qrels), lib.Run(run, name="run"))
    if form == "files":
        q_path, r_path = inputs
        return lambda: (lib.Qrels.from_file(q_path, kind="trec"), lib.Run.from_file(r_path, kind="trec"))
    q_df, r_df = inputs
    return lambda: (lib.Qrels.from_df(q_df), lib.Run.from_df(r_df, name="run"))


def warm(ranx, rj):
    """Compile (or load from Numba's cache) both libraries' kernels for every metric, on a small case."""
    qrels, run = synthetic(50, 20, seed=1)
    for lib in (ranx, rj):
        lib.evaluate(lib.Qrels(qrels), lib.Run(run), METRICS)


def subset(form, inputs, n_queries, folder):
    """The first ``n_queries`` queries of the inputs, in the same form (for warming up on data of the same shape)."""
    if form == "dicts":
        keep = list(inputs[0])[:n_queries]
        return {q: inputs[0][q] for q in keep}, {q: inputs[1][q] for q in keep if q in inputs[1]}
    if form == "files":
        out = []
        for path, fields in zip(inputs, (4, 6)):
            seen, lines = set(), []
            with open(path) as f:
                for line in f:
                    q = line.split(maxsplit=1)[0]
                    if q not in seen and len(seen) == n_queries:
                        continue
                    seen.add(q)
                    lines.append(line)
            out.append(os.path.join(folder, f"warm{fields}.txt"))
            with open(out[-1], "w") as f:
                f.writelines(lines)
        return tuple(out)
    keep = set(inputs[0]["q_id"].drop_duplicates().iloc[:n_queries])
    return tuple(df[df["q_id"].isin(keep)] for df in inputs)


def once(lib, form, inputs):
    """Build and evaluate once: ((build times), (evaluate times), run)."""
    t_build, (qrels, run) = timed(builders(lib, form, inputs))
    t_eval, _ = timed(lambda: lib.evaluate(qrels, run, METRICS))
    return t_build, t_eval, run


def run_case(ranx, rj, label, form, inputs, repeats, folder):
    """Times of build, evaluate and total for both libraries, interleaved; returns the table rows."""
    warm_inputs = subset(form, inputs, 200, folder)  # compile / load what this shape of data needs, untimed
    for lib in (ranx, rj):
        once(lib, form, warm_inputs)
    times = {(lib, stage): [] for lib in ("ranx", "rankjit") for stage in ("build", "evaluate", "total")}
    values = {}
    for r in range(repeats):
        for name, lib in interleaved([("ranx", ranx), ("rankjit", rj)], r):
            t_build, t_eval, run = once(lib, form, inputs)
            times[name, "build"].append(t_build)
            times[name, "evaluate"].append(t_eval)
            times[name, "total"].append((t_build[0] + t_eval[0], t_build[1] + t_eval[1]))
            values[name] = {m: dict(run.scores[m]) for m in METRICS}
            del run
    # per-query agreement
    a, b = values["ranx"], values["rankjit"]
    worst, differ = 0.0, 0
    for m in METRICS:
        assert set(a[m]) == set(b[m]), "not the same queries"
        x = np.array([a[m][q] for q in a[m]], dtype=float)
        y = np.array([b[m][q] for q in a[m]], dtype=float)
        d = np.abs(x - y)
        worst = max(worst, float(d.max(initial=0.0)))
        differ = max(differ, int((d > 1e-9).sum()))
    n_q = len(a[METRICS[0]])
    rows = []
    for stage in ("build", "evaluate", "total"):
        ra, rb = times["ranx", stage], times["rankjit", stage]
        (wa, ca), (wb, cb) = medians(ra), medians(rb)
        rows.append((label, form, stage, wa, wb, wa / wb, ca, cb, ca / cb, 1e6 * wb / n_q))
    print(f"  {label} / {form}: {n_q} queries; per-query values: largest difference {worst:.2e}, "
          f"queries differing by more than 1e-9 in some metric: {differ}", flush=True)
    return rows


def main(argv=None):
    ap = parser(__doc__, repeats=3)
    ap.add_argument("--inputs", default="dicts,files,frames", help="comma-separated: dicts, files, frames")
    args = ap.parse_args(argv)
    forms = [f for f in args.inputs.split(",") if f]
    if not set(forms) <= {"dicts", "files", "frames"}:
        ap.error(f"--inputs takes dicts, files and frames, got {args.inputs!r}")

    warnings.simplefilter("ignore")  # ranx's Numba type-safety warnings
    import numba
    import ranx

    import rankjit.compat.ranx as rj

    from importlib.metadata import version

    print(f"Numba threads: {numba.config.NUMBA_NUM_THREADS}; ranx {version('ranx')}; Python {sys.version.split()[0]}; "
          f"{args.repeats} interleaved repeats, medians", flush=True)
    t = time.perf_counter()
    warm(ranx, rj)
    print(f"warmed both libraries in {time.perf_counter() - t:.1f} s", flush=True)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sets = []
        web = Path(args.data) / "web2012"
        if args.only in (None, "web2012"):
            if web.is_dir():
                sets.append(("web2012", (read_pairs(web / "qrels.adhoc.txt", 3, int),
                                         read_pairs(web / "run.ql.cata.txt", 4, float)),
                             (str(web / "qrels.adhoc.txt"), str(web / "run.ql.cata.txt"))))
            else:
                print(f"web2012/ not found in {args.data}: skipped")
        if args.only in (None, "synthetic"):
            t = time.perf_counter()
            qrels, run = synthetic(args.queries, args.docs)
            paths = write_files(qrels, run, tmp) if "files" in forms else None
            sets.append((f"synthetic {args.queries}x{args.docs}", (qrels, run), paths))
            print(f"generated the synthetic data in {time.perf_counter() - t:.1f} s", flush=True)
        for label, dicts, paths in sets:
            for form in forms:
                inputs = dicts if form == "dicts" else paths if form == "files" else frames(*dicts)
                rows += run_case(ranx, rj, label, form, inputs, args.repeats, tmp)
                del inputs

    print()
    print("| data | input | stage | ranx wall s | rankjit wall s | ratio | ranx CPU s | rankjit CPU s | CPU ratio "
          "| rankjit us/query |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, form, stage, wa, wb, rw, ca, cb, rc, us in rows:
        print(f"| {label} | {form} | {stage} | {wa:.3f} | {wb:.3f} | {rw:.1f}x | {ca:.3f} | {cb:.3f} | {rc:.1f}x "
              f"| {us:.1f} |")


if __name__ == "__main__":
    main()
