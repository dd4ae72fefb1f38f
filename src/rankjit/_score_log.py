"""``rankjit score-log``: stream a Parquet log of (query, label, score) rows through :mod:`rankjit.stream`."""
from __future__ import annotations

import os
import sys


def _main(args):
    from rankjit import _measures
    from rankjit.stream import evaluate as stream_evaluate

    if not args.measure:
        raise ValueError("no measure given: use -m, e.g. -m nDCG@10 -m AP")
    for m in args.measure:
        _measures.parse(m)
    if not os.path.exists(args.log):
        raise FileNotFoundError(f"{args.log}: no such file")
    progress = sys.stderr.isatty() and not args.quiet
    result = stream_evaluate(
        args.log, args.measure, query=args.query, label=args.label, score=args.score,
        ties=args.ties, per_query=args.output is not None, output=args.output, progress=progress,
        batch_size=args.batch_size, sort=args.sort, judged=args.judged, pooled=args.pooled,
    )
    means = result.means if hasattr(result, "means") else result
    width = max(len(m) for m in args.measure)
    for m in args.measure:
        print(f"{m:<{width}}  {means[m]:.4f}")
    return 0


def register(subparsers):
    """Add ``score-log`` to ``rankjit``'s sub-commands."""
    p = subparsers.add_parser(
        "score-log", help="stream a Parquet log of (query, label, score) rows and evaluate it",
        description="Evaluate a Parquet log larger than memory, row group by row group. Rows of a query "
                    "must be contiguous and query ids sorted (use --sort to sort out of core first).",
    )
    p.add_argument("log")
    p.add_argument("--query", required=True, help="query id column")
    p.add_argument("--label", required=True, help="label (grade) column")
    p.add_argument("--score", required=True, help="score column")
    p.add_argument("--judged", default=None,
                   help="boolean column: True for a judged row (judged_only=True, Judged@k, Bpref, infAP read it)")
    p.add_argument("--pooled", default=None, help="boolean column: True for a row of the judging pool (infAP)")
    p.add_argument("--sort", action="store_true", help="sort the log by query out of core first (needs polars)")
    p.add_argument("-m", "--measure", action="append", help="a measure (may be repeated)")
    p.add_argument("-o", "--output", default=None, help="write per-query values to this Parquet file")
    p.add_argument("--ties", default="pessimistic", choices=("pessimistic", "optimistic", "stable", "average"))
    p.add_argument("--batch-size", type=int, default=1 << 20, help="rows per record batch (default 1M)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_main)
