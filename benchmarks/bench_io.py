"""Benchmarks of the real-input path (not tests; data are generated in a temp dir).

    python benchmarks/bench_io.py trec   [--queries 5000 --docs 1000] [--threads 1]  # 5M-line run, end to end
    python benchmarks/bench_io.py stream [--queries 1000000 --docs 100]  # 100M-row Parquet log

``trec``: read a TREC run + qrels, align like trec_eval and evaluate nDCG@10, AP and
P@10 with rankjit, then the same with pytrec_eval (reading the files into its dicts
included).  ``stream``: write a sorted Parquet log, evaluate it with
rankjit.stream.evaluate, report rows/s and the peak RSS of the process.
"""
from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

import numpy as np


def _peak_rss_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # Linux: KiB


def write_trec(dirname, n_queries, n_docs, seed=0):
    """A run in rank order (scores descending, some ties) and qrels with ~200 judged docs per query."""
    import pyarrow as pa
    import pyarrow.compute  # noqa: F401
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(seed)
    n = n_queries * n_docs
    q = np.repeat(np.arange(n_queries) + 100, n_docs)
    doc = (np.arange(n, dtype=np.int64) * 7919 + q * 13) % 1_000_000_000
    score = -np.sort(-np.round(rng.normal(size=(n_queries, n_docs)) * 10, 3), axis=1).ravel()
    docno = pa.compute.binary_join_element_wise("clueweb09-en", pa.array(doc).cast(pa.string()), "")
    run = pa.table({"q": q, "it": pa.array(["Q0"] * n), "d": docno,
                    "r": np.tile(np.arange(1, n_docs + 1), n_queries), "s": score,
                    "t": pa.array(["bench"] * n)})
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_path = os.path.join(dirname, "run.txt")
    pcsv.write_csv(run, run_path, opts)
    judged = (np.arange(n) % n_docs) < min(100, n_docs)  # 100 retrieved docs judged per query
    extra_q = np.repeat(np.arange(n_queries) + 100, 100)  # plus 100 judged docs not retrieved
    extra_d = pa.compute.binary_join_element_wise("other", pa.array(np.arange(extra_q.size)).cast(pa.string()), "")
    qrels = pa.concat_tables([
        pa.table({"q": q[judged], "i": np.zeros(judged.sum(), np.int64), "d": docno.filter(pa.array(judged)),
                  "r": rng.integers(-1, 4, judged.sum())}),
        pa.table({"q": extra_q, "i": np.zeros(extra_q.size, np.int64), "d": extra_d,
                  "r": rng.integers(0, 3, extra_q.size)}),
    ])
    qrels_path = os.path.join(dirname, "qrels.txt")
    pcsv.write_csv(qrels, qrels_path, opts)
    return run_path, qrels_path


def bench_trec(args):
    from rankjit.io import align, read_trec_qrels, read_trec_run

    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        run_path, qrels_path = write_trec(d, args.queries, args.docs)
        print(f"generated {args.queries * args.docs:,}-line run ({os.path.getsize(run_path) / 1e6:.0f} MB) "
              f"in {time.perf_counter() - t0:.1f} s")
        measures = ["nDCG(gain='linear')@10", "AP", "P@10"]
        # compile / load the cache first (reported separately): a tiny input for the
        # serial kernels, a 10 MB one for the chunked reader and the parallel drivers
        small_d = os.path.join(d, "warm")
        os.mkdir(small_d)
        warm_run, warm_qrels = write_trec(small_d, 2100, 100, seed=1)
        t0 = time.perf_counter()
        small = align(read_trec_run(b"1 Q0 a 1 1 t\n"), read_trec_qrels(b"1 0 a 1\n"))
        small.evaluate(measures)
        align(read_trec_run(warm_run), read_trec_qrels(warm_qrels)).evaluate(measures)
        print(f"rankjit first call (compile or cache load): {time.perf_counter() - t0:.2f} s")
        if args.threads:
            import numba

            numba.set_num_threads(args.threads)
        best, totals = None, []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            run = read_trec_run(run_path)
            t1 = time.perf_counter()
            qrels = read_trec_qrels(qrels_path)
            t2 = time.perf_counter()
            aligned = align(run, qrels)
            t3 = time.perf_counter()
            res = aligned.evaluate(measures)
            t4 = time.perf_counter()
            total = t4 - t0
            print(f"rankjit: read run {t1 - t0:.2f} s, qrels {t2 - t1:.2f} s, align {t3 - t2:.2f} s, "
                  f"evaluate {t4 - t3:.2f} s, total {total:.2f} s")
            best = total if best is None else min(best, total)
            totals.append(total)
            del run, qrels, aligned
        print("rankjit means:", {k: round(v, 6) for k, v in res.items()})
        if args.skip_pytrec:
            return
        import pytrec_eval

        t0 = time.perf_counter()
        qrels_d, run_d = {}, {}
        with open(qrels_path) as fh:
            for line in fh:
                qq, _, dd, rr = line.split()[:4]
                qrels_d.setdefault(qq, {})[dd] = int(rr)
        with open(run_path) as fh:
            for line in fh:
                qq, _, dd, _, ss = line.split()[:5]
                run_d.setdefault(qq, {})[dd] = float(ss)
        t1 = time.perf_counter()
        ev = pytrec_eval.RelevanceEvaluator(qrels_d, {"ndcg_cut.10", "map", "P.10"})
        per_q = ev.evaluate(run_d)
        t2 = time.perf_counter()
        pt = {m: float(np.mean([v[m] for v in per_q.values()])) for m in ("ndcg_cut_10", "map", "P_10")}
        print(f"pytrec_eval: read + dicts {t1 - t0:.2f} s, evaluate {t2 - t1:.2f} s, total {t2 - t0:.2f} s")
        print("pytrec_eval means:", {k: round(v, 6) for k, v in pt.items()})
        print(f"speed-up end to end: {(t2 - t0) / best:.1f}x (rankjit best of {args.repeat}: {best:.2f} s, "
              f"median {float(np.median(totals)):.2f} s)")


def bench_stream(args):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rankjit.stream import evaluate

    with tempfile.TemporaryDirectory(dir=args.tmpdir) as d:
        path = os.path.join(d, "log.parquet")
        t0 = time.perf_counter()
        rng = np.random.default_rng(0)
        block = max(1, (1 << 20) // args.docs)  # queries per written row group
        with pq.ParquetWriter(path, pa.schema([("query", pa.int64()), ("label", pa.int8()),
                                               ("score", pa.float32())])) as w:
            for lo in range(0, args.queries, block):
                nq = min(block, args.queries - lo)
                q = np.repeat(np.arange(lo, lo + nq, dtype=np.int64), args.docs)
                y = rng.choice(5, size=q.size, p=[0.7, 0.15, 0.08, 0.05, 0.02]).astype(np.int8)
                s = (y * np.float32(0.35) + rng.standard_normal(q.size, dtype=np.float32)).astype(np.float32)
                w.write_table(pa.table({"query": q, "label": y, "score": s}))
        n_rows = args.queries * args.docs
        print(f"wrote {n_rows:,} rows ({os.path.getsize(path) / 1e9:.2f} GB Parquet) "
              f"in {time.perf_counter() - t0:.1f} s; peak RSS so far {_peak_rss_gb():.2f} GB")
        # compile on a small table first
        evaluate(pa.table({"query": [0], "label": pa.array([1], pa.int8()), "score": pa.array([1.0], pa.float32())}),
                 ["nDCG@10", "AP", "P@10"], query="query", label="label", score="score")
        t0 = time.perf_counter()
        res = evaluate(path, ["nDCG@10", "AP", "P@10"], query="query", label="label", score="score",
                       batch_size=args.batch_size)
        dt = time.perf_counter() - t0
        print(f"stream.evaluate: {res.n_rows:,} rows, {res.n_queries:,} queries in {dt:.1f} s = "
              f"{res.n_rows / dt / 1e6:.1f} M rows/s; peak RSS {_peak_rss_gb():.2f} GB")
        print("means:", {k: round(v, 6) for k, v in res.means.items()})


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    t = sub.add_parser("trec")
    t.add_argument("--queries", type=int, default=5000)
    t.add_argument("--docs", type=int, default=1000)
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument("--skip-pytrec", action="store_true")
    t.add_argument("--threads", type=int, default=0, help="numba threads for rankjit (default: all)")
    s = sub.add_parser("stream")
    s.add_argument("--queries", type=int, default=1_000_000)
    s.add_argument("--docs", type=int, default=100)
    s.add_argument("--batch-size", type=int, default=1 << 20)
    s.add_argument("--tmpdir", default=None, help="where to write the temporary Parquet file")
    args = p.parse_args()
    bench_trec(args) if args.what == "trec" else bench_stream(args)


if __name__ == "__main__":
    main()
