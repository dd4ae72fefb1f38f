"""The fixed cost of a call: small evaluations, as a training loop or a per-query loop makes them.

Each case is timed per call (the best of 5 loops of ``--calls`` calls), for the working
tree and, with ``--base REV``, for the package at that commit loaded side by side
(``bench_ab.extract_base``); the versions alternate within each of ``--repeats`` rounds and
the table gives the medians.  pytrec_eval and LightGBM's own metric are timed alongside
when installed, for scale.  Not a test: it prints, asserts nothing.

Cases:

* ``evaluate``: ``rankjit.evaluate`` on 1 query x 100 documents (AP, nDCG@10, P@10, R@100)
  and on 100 queries x 30 documents (nDCG@10);
* ``compat``: ``rankjit.compat.pytrec_eval``'s ``evaluate`` on 1, 10 and 100 synthetic
  queries of 100 documents (map, ndcg_cut.10, P.10, recall.100), the evaluator built once;
* ``feval``: ``rankjit.integrations.lightgbm.feval("nDCG@10", compat="lightgbm")`` on a
  Dataset of 100 and 1000 queries x 30 documents;
* ``eval_metric``: the same function called as ``LGBMRanker`` calls it, ``f(labels, preds,
  None, group)`` with the Dataset's own label and group arrays.

Run:  python benchmarks/bench_small_calls.py [--base REV] [--repeats 5] [--calls 200]
"""
from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import timeit

import numpy as np


def _cases(pkg):
    """{name: callable} for one version of the package (``pkg``: "rankjit" or "rankjit_base")."""
    from _compare import synthetic

    rankjit = importlib.import_module(pkg)
    compat = importlib.import_module(f"{pkg}.compat.pytrec_eval")
    rng = np.random.default_rng(0)
    out = {}
    one_l, one_s = rng.integers(0, 3, (1, 100)), rng.random((1, 100))
    out["evaluate 1x100, 4 measures"] = lambda: rankjit.evaluate(one_l, one_s, ["AP", "nDCG@10", "P@10", "R@100"])
    many_l, many_s = rng.integers(0, 5, (100, 30)).astype(np.int8), rng.random((100, 30))
    out["evaluate 100x30, nDCG@10"] = lambda: rankjit.evaluate(many_l, many_s, ["nDCG@10"])
    measures = {"map", "ndcg_cut.10", "P.10", "recall.100"}
    for n in (1, 10, 100):
        q, r = synthetic(n, 100)
        ev = compat.RelevanceEvaluator(q, measures)
        out[f"compat evaluate, {n} q x 100"] = (lambda ev=ev, r=r: ev.evaluate(r))
    try:
        import lightgbm as lgb
    except ImportError:
        return out
    lgb_mod = importlib.import_module(f"{pkg}.integrations.lightgbm")
    for nq in (100, 1000):
        n = nq * 30
        ds = lgb.Dataset(rng.normal(size=(n, 4)), np.minimum(rng.poisson(0.6, n), 4).astype(np.float64),
                         group=np.full(nq, 30), free_raw_data=False)
        ds.construct()
        preds = rng.random(n)
        f = lgb_mod.feval("nDCG@10", compat="lightgbm")
        out[f"feval {nq}x30, nDCG@10"] = (lambda f=f, preds=preds, ds=ds: f(preds, ds))
        # LGBMRanker's call: the Dataset's own label and group arrays, every round
        label, group = ds.get_label(), ds.get_group()
        out[f"eval_metric {nq}x30, nDCG@10"] = (lambda f=f, y=label, p=preds, g=group: f(y, p, None, g))
    return out


def _peers():
    """{case name: callable} of the peers, for scale."""
    out = {}
    try:
        import pytrec_eval
        from _compare import synthetic
    except ImportError:
        return out
    for n in (1, 10, 100):
        q, r = synthetic(n, 100)
        ev = pytrec_eval.RelevanceEvaluator(q, {"map", "ndcg_cut.10", "P.10", "recall.100"})
        out[f"compat evaluate, {n} q x 100"] = (lambda ev=ev, r=r: ev.evaluate(r))
    return out


def per_call(fn, calls):
    fn()
    return min(timeit.repeat(fn, number=calls, repeat=5)) / calls * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", metavar="REV", help="also time the package at this git revision")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args(argv)
    versions = {"rankjit": _cases("rankjit")}
    if args.base:
        from bench_ab import extract_base

        folder = tempfile.mkdtemp(prefix="rankjit_base_")
        extract_base(args.base, folder)
        sys.path.insert(0, folder)
        versions[f"rankjit@{args.base}"] = _cases("rankjit_base")
    peers = _peers()
    times = {}
    for rep in range(args.repeats):
        order = list(versions) if rep % 2 == 0 else list(reversed(versions))
        for name in versions["rankjit"]:
            for v in order:
                if name in versions[v]:
                    times.setdefault((name, v), []).append(per_call(versions[v][name], args.calls))
            if name in peers:
                times.setdefault((name, "peer"), []).append(per_call(peers[name], args.calls))
    cols = list(versions) + (["pytrec_eval"] if peers else [])
    print(f"us per call, medians of {args.repeats} interleaved rounds (each the best of 5 loops of {args.calls} calls)")
    print(f"{'case':32s}" + "".join(f"{c:>22s}" for c in cols))
    for name in versions["rankjit"]:
        row = []
        for v in list(versions) + (["peer"] if peers else []):
            t = times.get((name, v))
            row.append(f"{np.median(t):22.1f}" if t else f"{'':22s}")
        print(f"{name:32s}" + "".join(row))


if __name__ == "__main__":
    main()
