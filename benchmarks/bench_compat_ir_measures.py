"""ir_measures end to end, with and without the rankjit provider (not a test).

    python benchmarks/bench_compat_ir_measures.py [--queries 100000 --docs 100] [--repeats 3] [--data ../shared/data]
        [--base REV] [--form dict|DataFrame|namedtuple|file] [--call calc_aggregate|iter_calc] [--measures "NAMES" ...]

``ir_measures.calc_aggregate`` and ``ir_measures.iter_calc`` (its results consumed) as users
call them, on the same inputs -- dicts of dicts, pandas DataFrames and lists of named tuples
(``Qrel`` / ``ScoredDoc`` rows, as ``list(ir_measures.read_trec_run(path))`` or ir_datasets give
them) and TREC files (``--form file``: the same data written out, passed as
``ir_measures.read_trec_qrels(path)`` / ``read_trec_run(path)``, generators made for each call) -- with ir_measures'
default pipeline (pytrec_eval, the judged provider, ...) and with
``rankjit.integrations.ir_measures.register()``, which puts rankjit first in that pipeline.
Every timing includes what ir_measures does per call: reading the qrels and the run in the
given form.  Two measure sets: ``nDCG@10 AP P@10 R@100 RR`` and the same with ``Judged@10`` (``--measures``
gives others, e.g. ``--measures "RR@10" --measures "ERR@20 Judged@10"``).
Two data sets: the TREC 2012 Web track (50 queries x 1000 documents, ``web2012/`` of the
shared data folder) and a synthetic one (``--queries`` x ``--docs``; 30 judgments per query,
20 of them on retrieved documents, grades -1..3; scores with 3 decimals, so some ties).

Repeats are interleaved (ir_measures, rankjit, ir_measures, ...; the order alternates), and
the table gives medians of wall-clock and of process CPU time, per call and per query, and
their ratios.  Numba's cache is warmed first (one call of each case, not timed).  Each case
checks that both give the same aggregates (largest difference printed).

For dicts, a third contender, ``floor`` (``_compare.ReadFloor``), makes only the reads any
evaluator written in Python must make of the dicts (every grade, every score, and the join by
one lookup per relevant or per retrieved document, whichever is faster on the data) and
builds the output (``iter_calc``: one ``Metric`` per query and measure), computing nothing:
ir_measures / floor is the largest ratio a provider that reads the caller's dicts from Python
can reach.

``--base REV`` also times the provider as it was at git revision ``REV`` (extracted by
``bench_ab.py`` as the package ``rankjit_base``, registered in its turn), interleaved with the
others; the table then gives rankjit@REV's time over rankjit's.
"""
from __future__ import annotations

import itertools
import sys
import tempfile
from pathlib import Path

from _compare import datasets as load
from _compare import ReadFloor, fastest_join, interleaved, medians, parser, paused_gc, ratio, timed

SETS = {
    "5 measures": ["nDCG@10", "AP", "P@10", "R@100", "RR"],
    "5 + Judged@10": ["nDCG@10", "AP", "P@10", "R@100", "RR", "Judged@10"],
}


def web2012(data):
    """(qrels, run) dicts of dicts of the TREC 2012 Web track's adhoc qrels and its query-likelihood run."""
    import ir_measures

    web = Path(data) / "web2012"
    qrels = ir_measures.util.QrelsConverter(ir_measures.read_trec_qrels(str(web / "qrels.adhoc.txt"))).as_dict_of_dict()
    run = ir_measures.util.RunConverter(ir_measures.read_trec_run(str(web / "run.ql.cata.txt"))).as_dict_of_dict()
    return qrels, run


def frames(qrels, run):
    """The same qrels and run as DataFrames (query_id, doc_id, relevance / score)."""
    import pandas as pd

    def frame(dod, value):
        qid = [q for q, d in dod.items() for _ in range(len(d))]
        doc = [x for d in dod.values() for x in d]
        val = [x for d in dod.values() for x in d.values()]
        return pd.DataFrame({"query_id": qid, "doc_id": doc, value: val})

    return frame(qrels, "relevance"), frame(run, "score")


def rows(qrels, run):
    """The same qrels and run as lists of ir_measures' named tuples (``Qrel``, ``ScoredDoc``), query by query."""
    import ir_measures

    return ([ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
            [ir_measures.ScoredDoc(q, d, x) for q, docs in run.items() for d, x in docs.items()])


def files(qrels, run):
    """The same qrels and run written as TREC files (``qid 0 docno rel``, ``qid Q0 docno rank score tag``) in a
    temporary folder: their paths.  ir_measures reads them as users pass them, ``read_trec_qrels(path)`` and
    ``read_trec_run(path)`` (generators made anew for each call)."""
    folder = Path(tempfile.mkdtemp(prefix="bench_ir_measures_"))
    q_path, r_path = folder / "qrels", folder / "run"
    q_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    r_path.write_text("".join(f"{q} Q0 {d} {i + 1} {x!r} tag\n" for q, docs in run.items()
                              for i, (d, x) in enumerate(docs.items())))
    return str(q_path), str(r_path)


def main(argv=None):
    ap = parser(__doc__, repeats=3)
    ap.add_argument("--base", metavar="REV", help="also time the provider at this git revision (before/after)")
    ap.add_argument("--form", choices=["dict", "DataFrame", "namedtuple", "file"],
                    help="one input form (ir_measures' DataFrame calls take minutes each at 100k queries)")
    ap.add_argument("--call", choices=["calc_aggregate", "iter_calc"], help="one of the two calls")
    ap.add_argument("--measures", action="append", metavar="NAMES",
                    help="a measure set (names separated by spaces) in place of the two fixed ones; repeatable")
    args = ap.parse_args(argv)
    sets = {" ".join(m.split()): m.split() for m in args.measures} if args.measures else SETS

    import ir_measures

    from rankjit.integrations import ir_measures as rj

    base = None
    if args.base:
        from bench_ab import extract_base

        folder = tempfile.mkdtemp(prefix="rankjit_base_")
        extract_base(args.base, folder)
        sys.path.insert(0, folder)
        from rankjit_base.integrations import ir_measures as base
    base_mode = f"rankjit@{args.base}"

    datasets = load(args, web2012)

    cases = []
    joins = {}
    for name, qrels, run in datasets:
        joins[name] = fastest_join(qrels, run)
        print(f"{name}: the floor joins by one lookup per {joins[name]} document (the faster way here)")
        n_q = len(qrels)
        forms = {"dict": lambda: (qrels, run), "DataFrame": lambda: frames(qrels, run),
                 "namedtuple": lambda: rows(qrels, run), "file": lambda: files(qrels, run)}
        for form, make in forms.items():
            if args.form not in (None, form):
                continue
            q, r = make()
            for set_name, names in sets.items():
                measures = [ir_measures.parse_measure(x) for x in names]
                for call in ("calc_aggregate", "iter_calc"):
                    if args.call not in (None, call):
                        continue
                    if form == "file":  # (the paths: ir_measures' generators, made for each call)
                        inputs = (lambda q=q, r=r: (ir_measures.read_trec_qrels(q), ir_measures.read_trec_run(r)))
                    else:
                        inputs = (lambda q=q, r=r: (q, r))
                    if call == "calc_aggregate":
                        fn = (lambda m=measures, i=inputs: ir_measures.calc_aggregate(m, *i()))
                    else:
                        fn = (lambda m=measures, i=inputs: list(ir_measures.iter_calc(m, *i())))
                    modes = ["ir_measures", "rankjit"] + ([base_mode] if base is not None else [])
                    if form == "dict":
                        modes.append("floor")
                    cases.append(dict(data=name, form=form, set=set_name, call=call, fn=fn, n_q=n_q,
                                      floor=lambda m=measures, q=q, r=r, c=call, j=joins[name]: floor(m, q, r, c, j),
                                      times={mode: [] for mode in modes}))

    def floor(measures, qrels, run, call, join):
        """The reads of one call (``ReadFloor``) and its output: the means, or one Metric per query and measure."""
        per_query = ReadFloor(qrels, join=join).evaluate(run, measures)
        if call == "calc_aggregate":
            return dict.fromkeys(measures, 0.0)
        qids = itertools.chain.from_iterable(map(itertools.repeat, per_query, itertools.repeat(len(measures))))
        rows = zip(qids, itertools.cycle(measures), itertools.repeat(0.0))
        with paused_gc():  # (as rankjit's provider builds them)
            return list(map(ir_measures.Metric._make, rows))

    def run_case(case, mode):
        if mode == "floor":
            return timed(case["floor"])
        provider = rj if mode == "rankjit" else base if mode == base_mode else None
        if provider is not None:
            provider.register()
        try:
            return timed(case["fn"])
        finally:
            if provider is not None:
                provider.unregister()

    print("warm-up (Numba cache, one call per case and mode) ...", flush=True)
    for case in cases:
        _, want = run_case(case, "ir_measures")
        _, got = run_case(case, "rankjit")
        if base is not None:
            run_case(case, base_mode)
        if case["call"] == "calc_aggregate":
            case["diff"] = max(abs(got[m] - want[m]) for m in want)
        else:
            case["diff"] = float(len(got) != len(want))
    for rep in range(args.repeats):
        for case in cases:
            for mode in interleaved(tuple(case["times"]), rep):
                case["times"][mode].append(run_case(case, mode)[0])
        print(f"repeat {rep + 1}/{args.repeats} done", flush=True)

    head = (f"{'data':<22} {'input':<9} {'measures':<13} {'call':<14} {'ir_measures s':>13} {'rankjit s':>10} "
            f"{'us/query':>17} {'ratio wall':>10} {'ratio cpu':>9} {'max diff':>9}")
    print()
    print(head)
    print("-" * len(head))
    for c in cases:
        (base_w, _), (ours_w, _) = medians(c["times"]["ir_measures"]), medians(c["times"]["rankjit"])
        ratio_w, ratio_c = ratio(c["times"]["ir_measures"], c["times"]["rankjit"])
        per_q = f"{base_w / c['n_q'] * 1e6:.1f} / {ours_w / c['n_q'] * 1e6:.1f}"
        print(f"{c['data']:<22} {c['form']:<9} {c['set']:<13} {c['call']:<14} {base_w:>13.3f} {ours_w:>10.3f} "
              f"{per_q:>17} {ratio_w:>9.1f}x {ratio_c:>8.1f}x {c['diff']:>9.1e}")
        if "floor" in c["times"]:
            (floor_w, _) = medians(c["times"]["floor"])
            floor_w_ratio, floor_c_ratio = ratio(c["times"]["ir_measures"], c["times"]["floor"])
            per_q = f"{base_w / c['n_q'] * 1e6:.1f} / {floor_w / c['n_q'] * 1e6:.1f}"
            print(f"{'':<22} {'':<9} {'':<13} {'  floor':<14} {base_w:>13.3f} {floor_w:>10.3f} "
                  f"{per_q:>17} {floor_w_ratio:>9.1f}x {floor_c_ratio:>8.1f}x")
        if base_mode in c["times"]:
            (old_w, _) = medians(c["times"][base_mode])
            old_w_ratio, old_c_ratio = ratio(c["times"][base_mode], c["times"]["rankjit"])
            print(f"{'':<22} {'':<9} {'':<13} {'  @' + args.base:<14} {old_w:>13.3f} {ours_w:>10.3f} "
                  f"{'rankjit@REV / rankjit':>17} {old_w_ratio:>9.2f}x {old_c_ratio:>8.2f}x")
    print("\nus/query: ir_measures / rankjit (wall clock); ratios: ir_measures' median time over rankjit's; "
          "max diff: largest |difference| of the aggregates (iter_calc: 1 if the metric counts differ); "
          "floor: the reads alone (ReadFloor), in place of rankjit")


if __name__ == "__main__":
    main()
