"""The ``rankjit`` command line (also ``python -m rankjit``).

Each sub-command lives in its own module, which exposes ``register(subparsers)``;
``register`` adds an ``argparse`` parser and sets ``func`` (called with the parsed
arguments, returning an exit code).  Modules import their heavy dependencies only
when the command runs.
"""
from __future__ import annotations

import argparse
import importlib
import sys

#: sub-command modules, in the order ``rankjit --help`` lists them
COMMAND_MODULES = (
    "rankjit._demo",
    "rankjit.io._cli",
    "rankjit.stats._cli",
)


class CommandError(Exception):
    """An error to report as one line on stderr with a non-zero exit code."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rankjit",
        description="Compiled ranking-quality metrics: evaluation, trec_eval parity, meta-evaluation.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a module of an optional part not present
            if exc.name != name:
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (CommandError, ValueError, TypeError, FileNotFoundError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"rankjit {args.command}: error: {message}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `rankjit ... | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
