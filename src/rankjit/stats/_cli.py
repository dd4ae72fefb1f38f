"""``rankjit compare`` and ``rankjit analyze``: significance tables and meta-evaluation from TREC files."""
from __future__ import annotations

import argparse


def _common(p):
    p.add_argument("qrels", help="TREC qrels file (qid iter docno rel)")
    p.add_argument("runs", nargs="+", help="TREC run files (qid Q0 docno rank score runid)")
    p.add_argument("-m", "--measure", dest="measures", action="append", metavar="MEASURE",
                   help="measure name as in rankjit.evaluate, e.g. nDCG@10, AP, RR (repeatable; default nDCG@10)")
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


def _load(args):
    from ._trecdata import score_matrices

    measures = args.measures or ["nDCG@10"]
    if any(m.upper() == "RPP" for m in measures):
        raise ValueError("RPP is a pairwise measure; the CLI does not compute it yet (use the Python API)")
    topics, names, mats = score_matrices(args.qrels, args.runs, measures)
    if len(names) < 2:
        raise ValueError("need at least 2 runs")
    return topics, names, mats


def run_compare(args) -> int:
    from ._tests import compare

    topics, names, mats = _load(args)
    c = compare(mats, names, test=args.test, correction=args.correction, alpha=args.alpha,
                B=args.B, seed=args.seed, baseline=args.baseline)
    if args.format == "md":
        print(f"{len(topics)} topics\n")
        print(c.to_markdown(), end="")
    elif args.format == "tex":
        print(c.to_latex(), end="")
    else:
        print(c.to_dataframe().to_csv(), end="")
    return 0


def run_analyze(args) -> int:
    from ._gtheory import gtheory
    from ._power import discriminative_power

    topics, names, mats = _load(args)
    both = not (args.stability or args.discriminative_power)
    B = 1000 if args.B is None else args.B
    print(f"{len(names)} runs x {len(topics)} topics\n")
    if args.stability or both:
        print(f"| measure | var_system | var_topic | var_interaction | Phi({len(topics)}) "
              f"| Erho2({len(topics)}) | topics for Phi >= {args.target_phi:g} |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for m, M in mats.items():
            g = gtheory(M)
            print(f"| {m} | {g.var_system:.4g} | {g.var_topic:.4g} | {g.var_interaction:.4g} | "
                  f"{g.phi():.4f} | {g.erho2():.4f} | {g.topics_needed(args.target_phi)} |")
        print()
    fig = None
    if args.discriminative_power or both or args.plot:
        print(f"| measure | discriminative power (alpha = {args.alpha:g}, B = {B}) | pairs |")
        print("|---|---:|---:|")
        ax = None
        for m, M in mats.items():
            dp = discriminative_power(M, B=B, alpha=args.alpha, seed=args.seed)
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
    return args.func(args)
