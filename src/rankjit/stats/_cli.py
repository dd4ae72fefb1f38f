"""``rankjit compare`` and ``rankjit analyze``: significance tables and meta-evaluation from TREC files."""
from __future__ import annotations

import argparse
import math

import numpy as np


def _common(p):
    p.add_argument("qrels", help="TREC qrels file (qid iter docno rel)")
    p.add_argument("runs", nargs="+", help="TREC run files (qid Q0 docno rank score runid)")
    p.add_argument("-m", "--measure", dest="measures", action="append", metavar="MEASURE",
                   help="measure name as in rankjit.evaluate, e.g. nDCG@10, AP, RR (repeatable; default nDCG@10); "
                        "compare also takes the pairwise preferences RPP, LexiPrecision and LexiRecall, e.g. RPP, "
                        "RPP@100, \"RPP(weights='inverse')\", LexiRecall@1000, \"LexiPrecision(variant='rr')\"")
    p.add_argument("-B", type=int, default=None, help="resamples of the resampling tests")
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling tests (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")


def register(subparsers) -> None:
    """Add the ``compare`` and ``analyze`` sub-commands to an argparse subparsers object."""
    p = subparsers.add_parser(
        "compare", help="table of mean scores with significance markers",
        description="Compare runs on per-topic scores with a paired test and a multiple-comparison "
                    "correction; prints a Markdown (or LaTeX / CSV) table.")
    _common(p)
    p.add_argument("--test", choices=("t", "fisher", "bootstrap"), default="t",
                   help="paired t-test, Fisher randomisation or paired bootstrap (default t)")
    p.add_argument("--correction", choices=("none", "bonferroni", "holm", "bh"), default="holm",
                   help="multiple-comparison correction (default holm)")
    p.add_argument("--baseline", default=None, help="compare every run only against this run name")
    p.add_argument("--format", choices=("md", "tex", "csv"), default="md", help="output format (default md)")
    p.set_defaults(func=run_compare)

    p = subparsers.add_parser(
        "analyze", help="stability (G-theory) and discriminative power of measures",
        description="Variance components, Phi, topics needed and discriminative power of each measure "
                    "over the given runs.")
    _common(p)
    p.add_argument("--stability", action="store_true", help="generalizability theory (variance components, Phi)")
    p.add_argument("--discriminative-power", action="store_true", help="Sakai's bootstrap discriminative power")
    p.add_argument("--target-phi", type=float, default=0.95, help="Phi target for 'topics needed' (default 0.95)")
    p.add_argument("--plot", metavar="PNG", default=None, help="save the ASL curves of all measures there")
    p.set_defaults(func=run_analyze)


def _load(args, *, allow_pairwise=False):
    """(TrecData, listwise measures -> (n_runs, n_topics), pairwise measure names)."""
    from . import _trecdata as T

    measures = args.measures or ["nDCG@10"]
    pairwise = [m for m in measures if _is_pairwise(m)]
    if pairwise and not allow_pairwise:
        raise ValueError(f"{pairwise[0]} is a pairwise measure (a preference between two runs): "
                         "use it with `rankjit compare`")
    if len(args.runs) < 2:
        raise ValueError("need at least 2 runs")
    data = T.load(args.qrels, args.runs)
    mats = T.listwise_matrices(data, [m for m in measures if m not in pairwise])
    return data, mats, pairwise


#: measure families that are a preference between two runs (``rankjit.preference``)
PAIRWISE = ("RPP", "LexiPrecision", "LexiRecall")


def _is_pairwise(measure):
    """Whether ``measure`` (a name such as ``"LexiRecall@100"``) is a preference between two runs."""
    import rankjit.preference  # noqa: F401  (registers the preference measures)
    from rankjit._measures import parse

    return parse(measure).family in PAIRWISE


def _lexi_matrices(data, measures, pairs):
    """{measure: (n_pairs, n_topics)} per-topic lexiprecision / lexirecall(run i, run j).

    As RPP in :func:`rankjit.stats._trecdata.pairwise_matrices`: each pair of runs is
    compared on the union of their documents plus the judged relevant documents neither
    retrieved; a document a run did not retrieve is unretrieved for it, and each run
    keeps trec_eval's order.  Topics without a relevant document are NaN.
    """
    import rankjit.preference as P
    from rankjit._measures import parse, resolve

    from . import _trecdata as T

    ranked, rel_keys, rel_labels, n_docs = T._doc_codes(data)
    n_q = len(data.topics)
    parsed = [(m, parse(m)) for m in measures]
    out = {m: np.empty((len(pairs), n_q)) for m in measures}
    for p, (i, j) in enumerate(pairs):
        labels, sa, sb, ma, mb, offsets = T._pair_batch(ranked[i], ranked[j], rel_keys, rel_labels, n_docs, n_q)
        for name, meas in parsed:
            prm = resolve(meas, {})
            if prm.get("empty") not in (None, "nan"):
                raise ValueError(f"{name}: the compare command drops topics without relevant documents; "
                                 "do not set empty=")
            common = dict(k=meas.k, rel=prm["rel"], offsets=offsets, mask_a=ma, mask_b=mb, empty="nan",
                          ties="stable")
            if meas.family == "LexiPrecision":
                v = P.lexiprecision(labels, sa, sb, variant=prm["variant"], **common)
            else:
                v = P.lexirecall(labels, sa, sb, **common)
            out[name][p] = v[data.perm]
    return out


def _pairwise_values(data, measures, pairs):
    """{measure: (n_pairs, n_topics)} per-topic preferences of each ``(i, j)`` in ``pairs``, in ``measures`` order."""
    from rankjit._measures import parse

    from . import _trecdata as T

    rpp = [m for m in measures if parse(m).family == "RPP"]
    lexi = [m for m in measures if m not in rpp]
    values = T.pairwise_matrices(data, rpp, pairs) if rpp else {}
    if lexi:
        values.update(_lexi_matrices(data, lexi, pairs))
    return {m: values[m] for m in measures}


def _pairwise_compare(data, measures, args):
    """Per pair of runs: mean preference over topics with relevant documents, test against 0, correction."""
    from ._common import check_alpha, check_B, seed_key
    from ._tests import _check_correction, _check_test, _label, _pvalues, correct_pvalues

    test = _check_test(args.test)
    correction = _check_correction(args.correction)
    alpha = check_alpha(args.alpha)
    B = None if test == "t" else check_B(10000 if args.B is None else args.B)
    names = data.names
    if args.baseline is not None:
        if args.baseline not in names:
            raise ValueError(f"baseline {args.baseline!r} is not one of the run names: {', '.join(names)}")
        b = names.index(args.baseline)
        pairs = [(i, b) for i in range(len(names)) if i != b]
    else:
        pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    values = _pairwise_values(data, measures, pairs)
    rows = []
    for m in measures:
        V = values[m]
        keep = ~np.isnan(V).any(axis=0)
        if keep.sum() < 2:
            raise ValueError(f"{m}: need at least 2 topics with relevant documents; got {int(keep.sum())}")
        D = V[:, keep]
        _, p = _pvalues(D, test, B, seed_key(args.seed))
        padj = correct_pvalues(p, correction)
        for (i, j), mean, pv, pa in zip(pairs, D.mean(axis=1), p, padj):
            sig = f"{_label(i)} > {_label(j)}" if (pa < alpha and mean > 0) else \
                f"{_label(j)} > {_label(i)}" if (pa < alpha and mean < 0) else ""
            rows.append((m, i, j, float(mean), int(keep.sum()), float(pv), float(pa), sig))
    return rows, test, correction, alpha, B


def _print_pairwise(rows, names, test, correction, alpha, B, fmt):
    from ._tests import _label

    corr = {"none": "no correction", "bonferroni": "Bonferroni", "holm": "Holm", "bh": "Benjamini-Hochberg"}
    tname = {"t": "t-test", "fisher": f"Fisher randomisation test (B={B})",
             "bootstrap": f"bootstrap test (B={B})"}[test]
    legend = (f"mean preference of the first run over the second over the topics with relevant documents; "
              f"{tname} of the per-topic values against 0, {corr[correction]} over the pairs, alpha = {alpha:g}")
    if fmt == "csv":
        print("measure,run_a,run_b,mean,topics,pvalue,adjusted,significant")
        for m, i, j, mean, n, p, pa, sig in rows:
            q = '"' + m.replace('"', '""') + '"' if ("," in m or '"' in m) else m
            print(f"{q},{names[i]},{names[j]},{mean!r},{n},{p!r},{pa!r},{sig}")
        return
    if fmt == "tex":
        print(r"\begin{tabular}{llrrrl}" + "\n" + r"\toprule")
        print(r"Measure & Pair & Mean & $p$ & adj. $p$ & \\" + "\n" + r"\midrule")
        for m, i, j, mean, n, p, pa, sig in rows:
            pair = f"({_label(i)}) {names[i]} vs ({_label(j)}) {names[j]}".replace("_", r"\_")
            print(f"{m.replace('_', chr(92) + '_')} & {pair} & {mean:.4f} & {p:.4f} & {pa:.4f} & {sig} \\\\")
        print(r"\bottomrule" + "\n" + r"\end{tabular}" + "\n% " + legend)
        return
    print("| Measure | Run A | Run B | Mean | Topics | p | adjusted p | Significant |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for m, i, j, mean, n, p, pa, sig in rows:
        print(f"| {m} | ({_label(i)}) {names[i]} | ({_label(j)}) {names[j]} | {mean:.4f} | {n} | {p:.4f} | "
              f"{pa:.4f} | {sig} |")
    print("\n" + legend[0].upper() + legend[1:] + ".")


def run_compare(args) -> int:
    from ._tests import compare

    data, mats, pairwise = _load(args, allow_pairwise=True)
    topics, names = data.topics, data.names
    if mats:
        c = compare(mats, names, test=args.test, correction=args.correction, alpha=args.alpha,
                    B=args.B, seed=args.seed, baseline=args.baseline)
        if args.format == "md":
            print(f"{len(topics)} topics\n")
            print(c.to_markdown(), end="")
        elif args.format == "tex":
            print(c.to_latex(), end="")
        else:
            print(c.to_dataframe().to_csv(), end="")
    if pairwise:
        if mats and args.format != "csv":
            print()
        elif not mats and args.format == "md":
            print(f"{len(topics)} topics\n")
        rows, test, correction, alpha, B = _pairwise_compare(data, pairwise, args)
        _print_pairwise(rows, names, test, correction, alpha, B, args.format)
    return 0


def _coefficient(value):
    """Phi or Erho2 for the table: 4 decimals, or ``undefined`` for 0/0 (NaN: no variance at all)."""
    return "undefined" if math.isnan(value) else f"{value:.4f}"


def run_analyze(args) -> int:
    from ._gtheory import gtheory
    from ._power import discriminative_power

    data, mats, _ = _load(args)
    topics, names = data.topics, data.names
    both = not (args.stability or args.discriminative_power)
    B = 1000 if args.B is None else args.B
    # every value is computed before anything is printed: an error leaves no half table on stdout
    stability = args.stability or both
    rows = [(m, gtheory(M)) for m, M in mats.items()] if stability else []
    rows = [(m, g, g.phi(), g.erho2(), g.topics_needed(args.target_phi)) for m, g in rows]
    powers = [(m, discriminative_power(M, B=B, alpha=args.alpha, seed=args.seed)) for m, M in mats.items()] \
        if args.discriminative_power or both or args.plot else []
    print(f"{len(names)} runs x {len(topics)} topics\n")
    if stability:
        print(f"| measure | var_system | var_topic | var_interaction | Phi({len(topics)}) "
              f"| Erho2({len(topics)}) | topics for Phi >= {args.target_phi:g} |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for m, g, phi, erho2, needed in rows:
            print(f"| {m} | {g.var_system:.4g} | {g.var_topic:.4g} | {g.var_interaction:.4g} | "
                  f"{_coefficient(phi)} | {_coefficient(erho2)} | {'unbounded' if math.isinf(needed) else needed} |")
        if any(math.isnan(phi) or math.isnan(erho2) for _, _, phi, erho2, _ in rows):
            print("\nundefined: 0/0 (Erho2: var_system and var_interaction are 0; Phi: all three are 0), "
                  "e.g. runs that score every topic alike.")
        if any(math.isinf(needed) for *_, needed in rows):
            print(f"\nunbounded: var_system is 0 (the runs do not differ beyond the noise), so no number of topics "
                  f"reaches Phi >= {args.target_phi:g}.")
        print()
    fig = None
    if powers:
        print(f"| measure | discriminative power (alpha = {args.alpha:g}, B = {B}) | pairs |")
        print("|---|---:|---:|")
        ax = None
        for m, dp in powers:
            print(f"| {m} | {dp.power:.4f} | {dp.n_pairs} |")
            if args.plot:
                fig = dp.plot(ax=ax, label=f"{m} ({dp.power:.2f})")
                ax = fig.axes[0]
        if fig is not None:
            fig.savefig(args.plot, dpi=120, bbox_inches="tight")
            print(f"\nASL curves saved to {args.plot}")
    return 0


def main(argv=None) -> int:  # pragma: no cover - convenience for `python -m rankjit.stats._cli`
    parser = argparse.ArgumentParser(prog="rankjit-stats")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    from rankjit._errors import run_parsed

    return run_parsed(args)
