"""Where the dict front ends spend a call on the TREC 2012 Web data, warm (not a test).

    python benchmarks/profile_dict_front_ends.py [--repeats 30] [--data ../shared/data] [--queries 20000]

Two parts, medians of ``--repeats`` calls after a warm-up call, wall clock:

* ``rankjit.compat.pytrec_eval``: ``RelevanceEvaluator(qrels, {map, ndcg_cut.10, P.10,
  recall.100}).evaluate(run)`` on the dicts of ``pytrec_eval.parse_qrel`` / ``parse_run``,
  with the time of each internal step (the steps are wrapped, so their times include the
  wrapper's few microseconds): reading the run (``read_compiled``, else ``_read_run``), placing the judged documents
  (``_place_judged``, ``_place_tied``), building the aligned run, the engine.
* the ir_measures provider (``rankjit.integrations.ir_measures``) with ``nDCG@10 AP P@10
  R@100 RR`` on the same data as dicts of dicts: reading the qrels and the run, the aligned
  run, the pessimistic evaluation, finding the queries whose ties mix judgments, ranking
  those as trec_eval ranks (``_ranked``: the judged documents placed) and evaluating them,
  the whole provider, and ``ir_measures.calc_aggregate`` without and with the provider
  registered.
* the reads alone, compiled (``rankjit.io._dicts``) against the fastest Python reads of the
  same values, interleaved, on Web 2012 and on ``--queries`` synthetic queries of 100
  documents (``_compare.synthetic``): the judgments' grades (``int64_values_and_keys`` against
  ``array('q')`` over the dicts' values), and the run's scores with one lookup per relevant
  document (``scores_and_lookups`` against ``numpy.fromiter`` over the values and over
  ``dict.get``, each in one pass), and listing the judged documents' ids (the memory's share).

The steps use private functions of the two modules: when those change, change this script.
"""
from __future__ import annotations

import argparse
import itertools
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
    from rankjit.io._judged_lookups import JudgedLookups

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

    saved = [(JudgedLookups, "read_compiled", timed(JudgedLookups, "read_compiled", None)),
             (front.RelevanceEvaluator, "_read_run", timed(front.RelevanceEvaluator, "_read_run")),
             (kernels, "_place_judged", timed(kernels, "_place_judged", None)),
             (JudgedLookups, "_place_tied", timed(JudgedLookups, "_place_tied", None)),
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
    t_aligned, aligned = median_ms(lambda: provider._float32_scores(provider._aligned(judgments, batch)), repeats)
    t_pess, _ = median_ms(lambda: aligned.evaluate(names, per_query=True, ties="pessimistic"), repeats)

    def mixed():
        return np.flatnonzero(provider._queries_with_mixed_ties(aligned.offsets, aligned.scores, batch.raw))

    t_mixed, which = median_ms(mixed, repeats)
    cut, rows = aligned.queries(which)
    cut_dicts = [batch.dicts[g] for g in which.tolist()]
    t_ranked, ranked = median_ms(lambda: provider._ranked(cut, lambda r: batch.doc_at(rows[r]), cut_dicts,
                                                          batch.positions[rows], False, True), repeats)
    t_eval, _ = median_ms(lambda: ranked.evaluate(names, per_query=True, ties="stable"), repeats)
    t_whole, _ = median_ms(lambda: provider._evaluate(specs, provider._Qrels(qrels), run), repeats)
    provider.unregister()
    t_theirs, _ = median_ms(lambda: ir_measures.calc_aggregate(measures, qrels, run), repeats)
    with provider.registered():
        t_ours, _ = median_ms(lambda: ir_measures.calc_aggregate(measures, qrels, run), repeats)
    print(f"ir_measures provider, {' '.join(map(str, measures))}:")
    for label, t in (("read the qrels", t_qrels), ("read the run", t_batch), ("aligned run, float32 scores", t_aligned),
                     ("pessimistic evaluation", t_pess), ("queries whose ties mix judgments", t_mixed),
                     (f"rank {which.size} of {aligned.n_queries} queries by doc_id", t_ranked),
                     ("evaluate them", t_eval),
                     ("the provider's whole evaluation", t_whole), ("calc_aggregate, ir_measures alone", t_theirs),
                     ("calc_aggregate, rankjit registered", t_ours)):
        print(f"  {label:<36} {t:6.2f} ms")


def reads(name, qrels, run, repeats):
    """Compiled reads of the dicts against the fastest Python reads, interleaved (medians, ms)."""
    from array import array
    from itertools import chain

    from rankjit.io._dicts import int64_values_and_keys, scores_and_lookups, str_addresses

    judgments = list(qrels.values())
    j_lens = np.fromiter(map(len, judgments), np.int64, len(judgments))
    qids = [q for q in run if q in qrels]
    dicts = [run[q] for q in qids]
    offsets = np.zeros(len(dicts) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, dicts), np.int64, len(dicts)), out=offsets[1:])
    relevant = [[d for d, g in qrels[q].items() if g > 0] for q in qids]
    looked_up = list(chain.from_iterable(relevant))
    j_off = np.zeros(len(dicts) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, relevant), np.int64, len(relevant)), out=j_off[1:])
    addresses = str_addresses(looked_up)
    per_doc = list(chain.from_iterable(map(itertools.repeat, dicts, map(len, relevant))))
    contenders = {
        "grades and ids' addresses, compiled": lambda: int64_values_and_keys(judgments, j_lens),
        "grades, array('q')": lambda: np.frombuffer(array("q", chain.from_iterable(map(dict.values, judgments))),
                                                    dtype=np.int64),
        "ids of the judgments, listed": lambda: list(chain.from_iterable(judgments)),
        "scores and lookups, compiled": lambda: scores_and_lookups(dicts, offsets, addresses, j_off),
        "scores and lookups, fromiter": lambda: (
            np.fromiter(chain.from_iterable(map(dict.values, dicts)), np.float64, int(offsets[-1])),
            np.fromiter(map(dict.get, per_doc, looked_up), np.float64, len(looked_up))),
    }
    times = {k: [] for k in contenders}
    for fn in contenders.values():
        fn()
    for r in range(repeats):
        for k in (list(contenders) if r % 2 else list(contenders)[::-1]):
            t = time.perf_counter()
            contenders[k]()
            times[k].append(time.perf_counter() - t)
    print(f"reads, {name} ({int(j_lens.sum())} judgments, {int(offsets[-1])} scores, {len(looked_up)} lookups):")
    for k, v in times.items():
        print(f"  {k:<36} {1e3 * statistics.median(v):7.2f} ms")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--queries", type=int, default=20000, help="synthetic queries for the reads (0: none)")
    args = ap.parse_args(argv)
    import pytrec_eval

    web = Path(args.data) / "web2012"
    with open(web / "qrels.adhoc.txt") as f:
        qrels = dict(pytrec_eval.parse_qrel(f))
    with open(web / "run.ql.cata.txt") as f:
        run = dict(pytrec_eval.parse_run(f))
    pytrec_eval_steps(qrels, run, args.repeats)
    ir_measures_steps(qrels, run, args.repeats)
    reads("Web 2012", qrels, run, args.repeats)
    if args.queries:
        from _compare import synthetic

        reads(f"synthetic {args.queries} x 100", *synthetic(args.queries, 100), max(3, args.repeats // 4))


if __name__ == "__main__":
    main()
