"""Where the dict front ends spend a call on the TREC 2012 Web data, warm (not a test).

    python benchmarks/profile_dict_front_ends.py [--repeats 30] [--data ../shared/data]

Two parts, medians of ``--repeats`` calls after a warm-up call, wall clock:

* ``rankjit.compat.pytrec_eval``: ``RelevanceEvaluator(qrels, {map, ndcg_cut.10, P.10,
  recall.100}).evaluate(run)`` on the dicts of ``pytrec_eval.parse_qrel`` / ``parse_run``,
  with the time of each internal step (the steps are wrapped, so their times include the
  wrapper's few microseconds): reading the run (``_read_run``), placing the judged documents
  (``_place_judged``, ``_place_tied``), building the aligned run, the engine.
* the ir_measures provider (``rankjit.integrations.ir_measures``) with ``nDCG@10 AP P@10
  R@100 RR`` on the same data as dicts of dicts: reading the qrels and the run, the
  pessimistic and optimistic evaluations, the reordering of the queries where they differ
  and its evaluation, the whole provider, and ``ir_measures.calc_aggregate`` without and
  with the provider registered.

The steps use private functions of the two modules: when those change, change this script.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def median_ms(fn, repeats):
    """``(median milliseconds of fn(), fn()'s last value)`` over ``repeats`` calls."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times), out


def pytrec_eval_steps(qrels, run, repeats):
    import rankjit._kernels.frontends as kernels
    import rankjit.compat.pytrec_eval as front
    import rankjit.io._frontend as frontend

    ev = front.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "P.10", "recall.100"})
    ev.evaluate(run)
    spent = {}

    def timed(owner, name, wrap=staticmethod):
        raw = vars(owner)[name] if isinstance(owner, type) else getattr(owner, name)  # (restored as it was)
        original = getattr(owner, name)

        def step(*args, **kwargs):
            t = time.perf_counter()
            out = original(*args, **kwargs)
            spent.setdefault(name, []).append(time.perf_counter() - t)
            return out

        setattr(owner, name, wrap(step) if wrap else step)
        return raw

    saved = [(front.RelevanceEvaluator, "_read_run", timed(front.RelevanceEvaluator, "_read_run")),
             (kernels, "_place_judged", timed(kernels, "_place_judged", None)),
             (front.RelevanceEvaluator, "_place_tied", timed(front.RelevanceEvaluator, "_place_tied", None)),
             (frontend, "aligned_from_labels", timed(frontend, "aligned_from_labels", None)),
             (front.RelevanceEvaluator, "_values", timed(front.RelevanceEvaluator, "_values", None))]
    try:
        whole, _ = median_ms(lambda: ev.evaluate(run), repeats)
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
    print(f"rankjit.compat.pytrec_eval evaluate: {whole:.2f} ms")
    for name, times in spent.items():
        print(f"  {name:<22} {1e3 * statistics.median(times):6.2f} ms")
    init, _ = median_ms(lambda: front.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "P.10", "recall.100"}),
                        repeats)
    print(f"  (RelevanceEvaluator init: {init:.2f} ms)")


def ir_measures_steps(qrels, run, repeats):
    import ir_measures

    from rankjit.integrations import ir_measures as provider

    measures = [ir_measures.parse_measure(x) for x in ("nDCG@10", "AP", "P@10", "R@100", "RR")]
    specs = {m: provider._spec(m) for m in measures}
    names = list(dict.fromkeys(s.name for s in specs.values()))
    t_qrels, judgments = median_ms(lambda: provider._Qrels(qrels), repeats)
    t_batch, batch = median_ms(lambda: provider._batch(judgments, run), repeats)
    aligned = provider._aligned(judgments, batch)
    t_pess, pess = median_ms(lambda: aligned.evaluate(names, per_query=True, ties="pessimistic"), repeats)
    t_opt, opt = median_ms(lambda: aligned.evaluate(names, per_query=True, ties="optimistic"), repeats)
    differ = np.zeros(aligned.n_queries, bool)
    for name in names:
        differ |= pess[name] != opt[name]
    which = np.flatnonzero(differ)
    t_reorder, reordered = median_ms(lambda: provider._reordered(aligned, batch.doc_at, which, True), repeats)
    t_fixed, _ = median_ms(lambda: reordered.evaluate(names, per_query=True, ties="stable"), repeats)
    t_whole, _ = median_ms(lambda: provider._evaluate(specs, provider._Qrels(qrels), run), repeats)
    provider.unregister()
    t_theirs, _ = median_ms(lambda: ir_measures.calc_aggregate(measures, qrels, run), repeats)
    with provider.registered():
        t_ours, _ = median_ms(lambda: ir_measures.calc_aggregate(measures, qrels, run), repeats)
    print(f"ir_measures provider, {' '.join(map(str, measures))}:")
    for label, t in (("read the qrels", t_qrels), ("read the run", t_batch), ("pessimistic evaluation", t_pess),
                     ("optimistic evaluation", t_opt), (f"reorder {which.size} of {aligned.n_queries} queries",
                                                        t_reorder), ("evaluate them", t_fixed),
                     ("the provider's whole evaluation", t_whole), ("calc_aggregate, ir_measures alone", t_theirs),
                     ("calc_aggregate, rankjit registered", t_ours)):
        print(f"  {label:<36} {t:6.2f} ms")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    args = ap.parse_args(argv)
    import pytrec_eval

    web = Path(args.data) / "web2012"
    with open(web / "qrels.adhoc.txt") as f:
        qrels = dict(pytrec_eval.parse_qrel(f))
    with open(web / "run.ql.cata.txt") as f:
        run = dict(pytrec_eval.parse_run(f))
    pytrec_eval_steps(qrels, run, args.repeats)
    ir_measures_steps(qrels, run, args.repeats)


if __name__ == "__main__":
    main()
