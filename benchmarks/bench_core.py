"""Core engine benchmark: speed, memory, thread scaling and cold start.

Usage::

    python benchmarks/bench_core.py                 # 10k, 100k, 1M queries x 100 docs
    python benchmarks/bench_core.py --sizes 10000 100000 --repeat 5

For each size (float32 scores, int8 grades 0..4, 70% zeros; `rankjit._demo.make_batch`)
it prints the median time of nDCG@10 alone and of evaluate() with six measures (timed back to
back in each repetition; six/nDCG is the median of the per-repetition ratios), per-query
microseconds, queries per second, and the same computed by a plain numpy implementation
(argsort per row) in the same run.  Each size runs in a fresh subprocess so that its peak
RSS can be read; the script then measures 1 vs 2 threads at the largest size and the cold
start (import, first call with a warm cache, first-ever compile in an empty cache).
Targets (docs/performance.md): nDCG@10 <= 0.2 us/query and six measures <= 0.5 us/query at
1M x 100 on 2 cores; peak RSS <= 1.2x the inputs; 2 threads >= 1.8x one thread.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SIX = ["nDCG@10", "AP", "ERR@20", "pFound", "P@10", "RR"]


def numpy_six(labels, scores):
    """Plain numpy reference: argsort each row, then vectorised formulas."""
    import numpy as np

    order = np.argsort(-scores, axis=1, kind="stable")
    y = np.take_along_axis(labels, order, axis=1).astype(np.float64)
    n_q, n = y.shape
    r = np.arange(1, n + 1)
    rel = y >= 1
    out = {}
    disc = 1.0 / np.log2(r[:10] + 1.0)
    dcg = ((2.0 ** y[:, :10] - 1.0) * disc).sum(1)
    ideal = -np.sort(-labels, axis=1)[:, :10].astype(np.float64)
    idcg = ((2.0 ** ideal - 1.0) * disc).sum(1)
    out["nDCG@10"] = np.divide(dcg, idcg, out=np.zeros(n_q), where=idcg > 0)
    hits = np.cumsum(rel, axis=1)
    R = hits[:, -1]
    out["AP"] = np.divide((rel * hits / r).sum(1), R, out=np.zeros(n_q), where=R > 0)
    p = (2.0 ** y - 1.0) / 16.0
    stay = np.cumprod(np.concatenate([np.ones((n_q, 1)), 1.0 - p[:, :-1]], axis=1), axis=1)
    out["ERR@20"] = (p[:, :20] * stay[:, :20] / r[:20]).sum(1)
    out["pFound"] = (p * stay * 0.85 ** (r - 1)).sum(1)
    out["P@10"] = rel[:, :10].sum(1) / 10.0
    first = np.argmax(rel, axis=1)
    out["RR"] = np.where(rel.any(1), 1.0 / (first + 1), 0.0)
    return out


def numpy_ndcg10(labels, scores):
    import numpy as np

    order = np.argsort(-scores, axis=1, kind="stable")[:, :10]
    y = np.take_along_axis(labels, order, axis=1).astype(np.float64)
    disc = 1.0 / np.log2(np.arange(2, 12))
    dcg = ((2.0**y - 1.0) * disc).sum(1)
    ideal = -np.sort(-labels, axis=1)[:, :10].astype(np.float64)
    idcg = ((2.0**ideal - 1.0) * disc).sum(1)
    return np.divide(dcg, idcg, out=np.zeros(len(dcg)), where=idcg > 0)


def _proc_status(field):
    """A memory field of /proc/self/status, in bytes."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak_rss():
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # resets VmHWM to the current RSS


def _median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def _paired_times(fn_a, fn_b, repeat):
    """Medians of ``fn_a`` and ``fn_b`` timed back to back in each repetition (order alternating),
    and the median of the per-repetition ratios b / a: load that comes and goes hits both alike."""
    import numpy as np

    ta, tb, ratios = [], [], []
    for r in range(repeat):
        pair = {}
        for name, fn in ((("a", fn_a), ("b", fn_b)) if r % 2 == 0 else (("b", fn_b), ("a", fn_a))):
            t0 = time.perf_counter()
            fn()
            pair[name] = time.perf_counter() - t0
        ta.append(pair["a"])
        tb.append(pair["b"])
        ratios.append(pair["b"] / pair["a"])
    return float(np.median(ta)), float(np.median(tb)), float(np.median(ratios))


def child_size(n_queries, n_docs, repeat, numpy_too):
    """Runs in a subprocess: one size, prints a JSON line."""
    import numpy as np

    import rankjit
    from rankjit._demo import make_batch

    labels, scores = make_batch(n_queries, n_docs, 0)
    inputs = labels.nbytes + scores.nbytes
    rankjit.evaluate(labels[:4096], scores[:4096], SIX)  # compile / load cache
    rankjit.ndcg(labels[:4096], scores[:4096], 10)
    # peak RSS of the evaluations alone: reset the high-water mark (Linux), then read it
    rss_base = _proc_status("VmRSS")
    _reset_peak_rss()
    t_ndcg, t_six, ratio = _paired_times(lambda: rankjit.ndcg(labels, scores, 10),
                                         lambda: rankjit.evaluate(labels, scores, SIX), repeat)
    rss_peak = _proc_status("VmHWM")
    res = dict(n=n_queries, t_ndcg=t_ndcg, t_six=t_six, ratio=ratio, inputs=inputs, rss_base=rss_base,
               rss_peak=rss_peak)
    if numpy_too:
        res["np_ndcg"] = _median_time(lambda: numpy_ndcg10(labels, scores), max(1, repeat // 2))
        res["np_six"] = _median_time(lambda: numpy_six(labels, scores), max(1, repeat // 2))
        # numpy's stable argsort of -scores is rankjit's ties="stable"
        got = rankjit.evaluate(labels[:2000], scores[:2000], SIX, per_query=True, ties="stable")
        ref = numpy_six(labels[:2000], scores[:2000])
        res["agree"] = all(np.allclose(got[m], ref[m], rtol=1e-9, atol=1e-12) for m in SIX)
    print(json.dumps(res))


def child_threads(n_queries, n_docs, repeat):
    import numba
    import numpy as np

    import rankjit
    from rankjit._demo import make_batch

    labels, scores = make_batch(n_queries, n_docs, 0)
    rankjit.evaluate(labels[:4096], scores[:4096], SIX)
    out = {}
    results = {}
    calls = {"ndcg": lambda: rankjit.ndcg(labels, scores, 10), "six": lambda: rankjit.evaluate(labels, scores, SIX)}

    def with_threads(threads, fn):
        def run():
            numba.set_num_threads(threads)  # benchmark script only; the library never does this
            fn()
        return run

    for name, fn in calls.items():
        # 1 and 2 threads timed back to back in each repetition; the speed-up is the median ratio
        two, one, speedup = _paired_times(with_threads(2, fn), with_threads(1, fn), repeat)
        out[f"{name}_1"], out[f"{name}_2"], out[f"{name}_speedup"] = one, two, speedup
    for threads in (1, 2):
        numba.set_num_threads(threads)
        results[threads] = rankjit.evaluate(labels, scores, SIX, per_query=True)
    out["bitwise_equal"] = all(np.array_equal(results[1][m], results[2][m]) for m in SIX)
    print(json.dumps(out))


def _spawn(args, env=None):
    full = dict(os.environ, **(env or {}))
    res = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=full)
    if res.returncode != 0:
        raise RuntimeError(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def cold_start():
    code_import = "import time; t=time.perf_counter(); import rankjit; print(time.perf_counter()-t)"
    code_first = (
        "import time; t0=time.perf_counter(); import numpy as np, rankjit\n"
        "l=np.array([[1,0,2]],np.int8); s=np.array([[.3,.2,.1]],np.float32)\n"
        "t=time.perf_counter(); rankjit.evaluate(l, s, ['nDCG@10','AP','ERR@20','pFound','P@10','RR'])\n"
        "print(time.perf_counter()-t, time.perf_counter()-t0)"
    )
    imports = []
    for _ in range(5):
        r = subprocess.run([sys.executable, "-c", code_import], capture_output=True, text=True)
        imports.append(float(r.stdout))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        r = subprocess.run([sys.executable, "-c", code_first], capture_output=True, text=True, env=env)
        compile_first = [float(x) for x in r.stdout.split()]
        r = subprocess.run([sys.executable, "-c", code_first], capture_output=True, text=True, env=env)
        warm_first = [float(x) for x in r.stdout.split()]
    imports.sort()
    return dict(import_median=imports[2], first_compile=compile_first[0], warm_first_call=warm_first[0],
                warm_total=warm_first[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-numpy", action="store_true", help="skip the numpy baseline")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        kind, *rest = a.child
        if kind == "size":
            child_size(int(rest[0]), a.docs, a.repeat, rest[1] == "1")
        else:
            child_threads(int(rest[0]), a.docs, a.repeat)
        return

    print(f"rankjit core benchmark: float32 scores, int8 grades 0..4, {a.docs} docs per query, "
          f"median of {a.repeat}; {os.cpu_count()} CPUs")
    header = (f"{'queries':>10} {'nDCG@10 us/q':>13} {'q/s':>12} {'numpy us/q':>11} {'x':>6} | "
              f"{'six us/q':>9} {'q/s':>12} {'numpy us/q':>11} {'x':>6} | {'six/nDCG':>8} {'peak RSS / inputs':>18}")
    print(header)
    for n in a.sizes:
        r = _spawn(["--child", "size", str(n), "0" if a.no_numpy else "1", "--docs", str(a.docs),
                    "--repeat", str(a.repeat)])
        u1 = r["t_ndcg"] / n * 1e6
        u6 = r["t_six"] / n * 1e6
        np1 = r.get("np_ndcg", float("nan")) / n * 1e6
        np6 = r.get("np_six", float("nan")) / n * 1e6
        # everything the process held before the timed calls (interpreter, Numba, inputs)
        # stays; the ratio is (that baseline's inputs + whatever the calls added) / inputs
        growth = (r["rss_peak"] - r["rss_base"] + r["inputs"]) / r["inputs"]
        print(f"{n:>10,} {u1:>13.3f} {n / r['t_ndcg']:>12,.0f} {np1:>11.3f} {np1 / u1:>6.1f} | "
              f"{u6:>9.3f} {n / r['t_six']:>12,.0f} {np6:>11.3f} {np6 / u6:>6.1f} | "
              f"{r['ratio']:>8.2f} {growth:>18.3f}")
        if "agree" in r:
            print(f"{'':>10} numpy and rankjit agree on the first 2000 queries: {r['agree']}")
    n = max(a.sizes)
    t = _spawn(["--child", "threads", str(n), "--docs", str(a.docs), "--repeat", str(a.repeat)])
    print(f"threads at {n:,} queries: nDCG@10 1->2 threads speed-up {t['ndcg_speedup']:.2f}x, "
          f"six measures {t['six_speedup']:.2f}x (medians of paired ratios); results bitwise equal: "
          f"{t['bitwise_equal']}")
    c = cold_start()
    print(f"cold start: import rankjit {c['import_median']:.3f} s (median of 5); first call with a warm cache "
          f"{c['warm_first_call']:.3f} s ({c['warm_total']:.3f} s with the import); "
          f"first-ever compile of the six-measure kernel {c['first_compile']:.1f} s")


if __name__ == "__main__":
    main()
