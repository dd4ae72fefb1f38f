"""Counting every short row against selecting its top d (``engine.COUNT_ALL_MAX``), in one process.

Rows of at most ``COUNT_ALL_MAX`` (128) documents are ranked by counting whatever their
number of valued documents (``Variant.select`` off: no selection code compiled).  This
script times the same calls with the rule as it is and with ``COUNT_ALL_MAX = 0`` (the
selection back on, chosen per row by ``count_limit``), alternating the two, on synthetic
10k x 100 batches (45 % or 90 % of the documents valued, distinct or tie-heavy scores) and,
with LightGBM installed, on the scores of a ``--rounds``-round lambdarank model
(``bench_ltr.py``'s data: tie-heavy after 3 rounds).  Medians of ``--repeats`` rounds of 5
calls each.  Not a test: it prints.

Run:  python benchmarks/ab_count_all.py [--repeats 3] [--rounds 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def _lightgbm_case(rounds):
    """(labels, scores, offsets) of bench_ltr.py's validation set scored by a ``rounds``-round model, or None."""
    try:
        import lightgbm as lgb
        import numba
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    nq, nd = 10_000, 100
    n = nq * nd
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = np.minimum(rng.poisson(0.6, n), 4).astype(np.float64)
    train = lgb.Dataset(X, y, group=np.full(nq, nd), free_raw_data=False)
    params = dict(objective="lambdarank", metric="ndcg", eval_at=[10], verbose=-1, num_leaves=15,
                  min_data_in_leaf=50, num_threads=numba.get_num_threads())
    booster = lgb.train(params, train, num_boost_round=rounds)
    return y.astype(np.float32), booster.predict(X), np.arange(nq + 1, dtype=np.int64) * nd


def _describe_ties(labels, preds, rounds):
    """Print how the LightGBM case's scores tie, per query (medians over the 10k queries)."""
    scores, valued = preds.reshape(-1, 100), labels.reshape(-1, 100) > 0
    ordered = np.sort(scores, axis=1)
    distinct = 1 + (ordered[:, 1:] != ordered[:, :-1]).sum(axis=1)
    # the largest group of tied scores of each query: its score is the most frequent one
    largest = np.empty(scores.shape[0], dtype=np.int64)
    valued_in_largest = np.empty(scores.shape[0], dtype=np.int64)
    for q in range(scores.shape[0]):
        values, counts = np.unique(scores[q], return_counts=True)
        at = values[np.argmax(counts)]
        largest[q] = counts.max()
        valued_in_largest[q] = (valued[q] & (scores[q] == at)).sum()
    above = (scores[:, None, :] > scores[:, :, None]).sum(axis=2)  # documents scoring above each
    print(f"LightGBM {rounds} rounds, per query (median; max): {np.median(distinct):.0f} distinct scores; "
          f"{np.median(largest):.0f} documents ({largest.max()}) share the most frequent score, "
          f"{np.median(valued_in_largest):.0f} of them valued; {np.median(valued.sum(axis=1)):.0f} valued; "
          f"{np.median((valued & (above < 10)).sum(axis=1)):.0f} valued with fewer than 10 documents above")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3, help="boosting rounds of the LightGBM case's model")
    args = ap.parse_args(argv)

    import rankjit
    from rankjit._kernels import engine

    rng = np.random.default_rng(1)
    cases = {}
    lgb_case = _lightgbm_case(args.rounds)
    if lgb_case is not None:
        labels, preds, offsets = lgb_case
        _describe_ties(labels, preds, args.rounds)
        cases[f"LightGBM {args.rounds} rounds, stable, nDCG@10"] = (
            lambda: rankjit.evaluate(labels, preds, ["nDCG(empty='one')@10"], offsets=offsets, ties="stable"))
    for valued in (0.45, 0.9):
        lab = ((rng.random((10_000, 100)) < valued) * rng.integers(1, 5, (10_000, 100))).astype(np.int8)
        for tied in (False, True):
            scores = rng.random((10_000, 100))
            if tied:
                scores = np.round(scores * 10) / 10
            for ties in ("stable", "pessimistic"):
                for m in ("nDCG@10", "nDCG@20"):
                    name = f"{int(valued * 100)}% valued, {'tied' if tied else 'distinct'}, {ties}, {m}"
                    cases[name] = (lambda lab=lab, s=scores, ties=ties, m=m: rankjit.evaluate(lab, s, [m], ties=ties))
    rules = {"count all (as is)": engine.COUNT_ALL_MAX, "select (COUNT_ALL_MAX = 0)": 0}
    for cap in rules.values():  # compile both variants first
        engine.COUNT_ALL_MAX = cap
        for f in cases.values():
            f()
    times = {}
    try:
        for rep in range(args.repeats):
            for rule, cap in (rules.items() if rep % 2 == 0 else reversed(rules.items())):
                engine.COUNT_ALL_MAX = cap
                for name, f in cases.items():
                    ts = []
                    for _ in range(5):
                        t0 = time.perf_counter()
                        f()
                        ts.append(time.perf_counter() - t0)
                    times.setdefault((name, rule), []).append(float(np.median(ts)) * 1e3)
    finally:
        engine.COUNT_ALL_MAX = rules["count all (as is)"]
    a, b = rules
    print(f"float64 scores, 10k queries x 100 documents; ms per call, medians of {args.repeats} rounds")
    print(f"{'case':44s} {a:>20s} {b:>28s}   ratio")
    for name in cases:
        x, y = np.median(times[(name, a)]), np.median(times[(name, b)])
        print(f"{name:44s} {x:20.2f} {y:28.2f}   {x / y:5.2f}")


if __name__ == "__main__":
    main()
