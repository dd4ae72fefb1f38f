"""Timings of rankjit.stats against plain numpy implementations (run as a script).

    python benchmarks/bench_stats.py [--repeat 5] [--threads 1 2]

Targets (issue 5): discriminative power of 30 systems (435 pairs) x 50 topics with
B = 1000 in <= 2 s on 2 cores; Fisher randomisation test with 100k permutations x
1000 queries in <= 0.5 s.  Each rankjit timing is the best of ``--repeat`` warm
calls (compilation is reported separately); numpy references are timed in the same
run.  The script sets the Numba thread count itself (a script may; the library never does).
"""
from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np

from rankjit import stats


def best_of(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


# --------------------------------------------------------------------------- numpy references
def numpy_discriminative_power(M, B, alpha, seed):
    """Sakai's bootstrap ASL per pair, vectorised over resamples with numpy."""
    rng = np.random.default_rng(seed)
    n_s, n = M.shape
    I, J = np.triu_indices(n_s, 1)
    asl = np.empty(I.size)
    for k, (i, j) in enumerate(zip(I, J)):
        z = M[i] - M[j]
        t_obs = abs(z.mean() / (z.std(ddof=1) / np.sqrt(n)))
        w = z - z.mean()
        r = w[rng.integers(0, n, size=(B, n))]
        t = np.abs(r.mean(1) / (r.std(1, ddof=1) / np.sqrt(n)))
        asl[k] = np.mean(t >= t_obs)
    return np.mean(asl < alpha), asl


def numpy_fisher(a, b, B, seed, chunk=5000):
    """Randomisation test: random sign flips as a (chunk, n) matrix times the differences."""
    rng = np.random.default_rng(seed)
    d = a - b
    obs = abs(d.sum())
    count = 0
    for start in range(0, B, chunk):
        m = min(chunk, B - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(m, d.size), dtype=np.int8)
        count += int(np.sum(np.abs(signs @ d) >= obs))
    return count / B


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=None)
    args = ap.parse_args(argv)
    threads = args.threads or sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)})

    rng = np.random.default_rng(0)
    M = rng.random((30, 50)) * 0.5 + np.linspace(0, 0.2, 30)[:, None]
    a = rng.random(1000)
    b = a + rng.normal(0.002, 0.05, 1000)

    print(f"numba {numba.__version__}, numpy {np.__version__}, cpus {os.cpu_count()}, "
          f"NUMBA_NUM_THREADS {numba.config.NUMBA_NUM_THREADS}")
    t0 = time.perf_counter()
    stats.discriminative_power(M[:3, :5], B=10, seed=0)
    stats.randomization_test(a[:10], b[:10], B=10, seed=0)
    print(f"first calls (compile or load from cache): {time.perf_counter() - t0:.2f} s")

    old = numba.get_num_threads()
    try:
        for nt in threads:
            numba.set_num_threads(nt)
            # warm both drivers at this thread count
            stats.discriminative_power(M, B=20, seed=0)
            stats.randomization_test(a, b, B=3000, seed=0)
            t_dp, dp = best_of(lambda: stats.discriminative_power(M, B=1000, seed=1), args.repeat)
            t_f, fr = best_of(lambda: stats.randomization_test(a, b, B=100_000, seed=1), args.repeat)
            print(f"[{nt} thread(s)] discriminative power 30 sys x 50 topics, B=1000: "
                  f"{t_dp:.3f} s (target <= 2 s), power = {dp.power:.3f}")
            print(f"[{nt} thread(s)] Fisher randomisation 100k perms x 1000 queries: "
                  f"{t_f:.3f} s (target <= 0.5 s), p = {fr.pvalue:.4f}")
    finally:
        numba.set_num_threads(old)

    t_np_dp, (p_np, _) = best_of(lambda: numpy_discriminative_power(M, 1000, 0.05, 1), max(1, args.repeat // 2))
    t_np_f, pf = best_of(lambda: numpy_fisher(a, b, 100_000, 1), max(1, args.repeat // 2))
    print(f"[numpy]       discriminative power: {t_np_dp:.3f} s, power = {p_np:.3f}")
    print(f"[numpy]       Fisher randomisation: {t_np_f:.3f} s, p = {pf:.4f}")


if __name__ == "__main__":
    main()
