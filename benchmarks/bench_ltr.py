"""Cost of rankjit inside a LightGBM training loop: nDCG@10, 10k queries x 100 documents.

Measures, on the same validation set and the same scores:

* ``builtin``  -- LightGBM's own ndcg@10 (``Booster.eval_valid()`` with metric=ndcg),
* ``feval``    -- rankjit's ``feval("nDCG@10", compat="lightgbm")`` called as LightGBM calls it,
* ``core``     -- ``rankjit.evaluate`` alone on the same arrays (the engine),
* ``overhead`` -- feval minus core: what the adapter adds (groups, labels, preset).

The scores are those of a model trained ``--rounds`` rounds (3: heavily tied scores, as in
the first rounds of a training; 50: nearly distinct ones).

Run:  python benchmarks/bench_ltr.py [--queries 10000] [--docs 100] [--repeat 30] [--rounds 3]
No assertions: it prints minimum and median times in milliseconds.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def timeit(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * min(times), 1e3 * float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3, help="boosting rounds of the model that gives the scores")
    args = ap.parse_args()

    import lightgbm as lgb
    import numba

    import rankjit
    from rankjit.integrations.lightgbm import feval

    rng = np.random.default_rng(0)
    nq, nd = args.queries, args.docs
    n = nq * nd
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = np.minimum(rng.poisson(0.6, n), 4).astype(np.float64)
    group = np.full(nq, nd)
    train = lgb.Dataset(X, y, group=group, free_raw_data=False)
    params = dict(objective="lambdarank", metric="ndcg", eval_at=[10], verbose=-1, num_leaves=15,
                  min_data_in_leaf=50, num_threads=numba.get_num_threads())
    valid = lgb.Dataset(X, y, group=group, reference=train)
    booster = lgb.train(params, train, num_boost_round=args.rounds, valid_sets=[valid], valid_names=["v"],
                        keep_training_booster=True)
    preds = booster.predict(X)  # same scores the metric sees after args.rounds rounds
    f = feval("nDCG@10", compat="lightgbm")
    ds = valid

    builtin_value = booster.eval_valid()[0][2]
    feval_value = f(preds, ds)[0][1]
    offsets = np.arange(nq + 1, dtype=np.int64) * nd
    labels = ds.get_label()

    results = {
        "builtin (LightGBM ndcg@10, Booster.eval_valid)": timeit(lambda: booster.eval_valid(), args.repeat),
        "feval (rankjit adapter, compat=lightgbm)": timeit(lambda: f(preds, ds), args.repeat),
        "core (rankjit.evaluate, same arrays)": timeit(
            lambda: rankjit.evaluate(labels, preds, ["nDCG(empty='one')@10"], offsets=offsets, ties="stable"),
            args.repeat),
    }
    print(f"{nq} queries x {nd} docs = {n} rows; numba threads = {numba.get_num_threads()}; "
          f"LightGBM threads = {params['num_threads']}")
    print(f"values: LightGBM {builtin_value:.12f}   rankjit {feval_value:.12f}   "
          f"|diff| = {abs(builtin_value - feval_value):.2e}")
    for name, (lo, med) in results.items():
        print(f"  {name:50s} min {lo:8.2f} ms   median {med:8.2f} ms")
    (f_lo, f_med), (c_lo, c_med) = results["feval (rankjit adapter, compat=lightgbm)"], \
        results["core (rankjit.evaluate, same arrays)"]
    print(f"  {'adapter overhead (feval - core)':50s} min {f_lo - c_lo:8.2f} ms   median {f_med - c_med:8.2f} ms")


if __name__ == "__main__":
    main()
