"""The ir_measures provider's three ways to break ties by doc_id, interleaved in one process (not a test).

    python benchmarks/ab_provider_ties.py [--queries 0] [--repeats 31]

``--queries 0``: the TREC 2012 Web run (``../shared/data/web2012``); else that many synthetic
queries of 100 documents (``_compare.synthetic``).  ``ir_measures``'s provider evaluator
``calc_aggregate`` is timed with ``_evaluate_by_doc_id`` as it is ("rule": the mixed queries
ranked apart, or every query when they are most), always ranking the mixed queries apart
("apart"), and always ranking every query ("all"); medians of interleaved calls, in ms, for
``nDCG@10 AP P@10 R@100 RR`` without and with ``Judged@10``.  Each variant gives the same values.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=31)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    args = ap.parse_args(argv)
    import ir_measures

    from rankjit.integrations import ir_measures as P

    if args.queries:
        from _compare import synthetic

        qrels, run = synthetic(args.queries, 100)
    else:
        import pytrec_eval

        web = Path(args.data) / "web2012"
        with open(web / "qrels.adhoc.txt") as q, open(web / "run.ql.cata.txt") as r:
            qrels, run = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
    rule = P._evaluate_by_doc_id

    def apart(al, batch, names, all_judged, descending):
        vals = al.evaluate(names, per_query=True, ties="pessimistic")
        which = np.flatnonzero(P._queries_with_mixed_ties(al.offsets, al.scores, batch.raw))
        if which.size:
            cut, rows = al.queries(which)
            dicts = None if batch.dicts is None else [batch.dicts[g] for g in which.tolist()]
            fixed = P._ranked(cut, lambda r: batch.doc_at(rows[r]), dicts, all_judged, descending).evaluate(
                names, per_query=True, ties="stable")
            for name in names:
                vals[name][which] = fixed[name]
        return vals

    def every(al, batch, names, all_judged, descending):
        return P._ranked(al, batch.doc_at, batch.dicts, all_judged, descending).evaluate(names, per_query=True,
                                                                                        ties="stable")

    variants = {"rule": rule, "apart": apart, "all": every}
    for label, names in (("5 measures", ("nDCG@10", "AP", "P@10", "R@100", "RR")),
                         ("5 + Judged@10", ("nDCG@10", "AP", "P@10", "R@100", "RR", "Judged@10"))):
        measures = [ir_measures.parse_measure(x) for x in names]
        times, results = {v: [] for v in variants}, {}
        for r in range(args.repeats):
            for v in (list(variants) if r % 2 else list(variants)[::-1]):
                P._evaluate_by_doc_id = variants[v]
                t = time.perf_counter()
                results[v] = P.provider().evaluator(measures, qrels).calc_aggregate(run)
                times[v].append(time.perf_counter() - t)
        P._evaluate_by_doc_id = rule
        assert all(abs(results[v][m] - results["rule"][m]) <= 1e-12 for v in variants for m in measures)
        print(f"{args.queries or 'web2012'} {label}: " + ", ".join(
            f"{v} {1e3 * statistics.median(t):.2f} ms" for v, t in times.items()))


if __name__ == "__main__":
    main()
