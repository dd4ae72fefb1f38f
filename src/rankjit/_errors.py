"""How a ``rankjit`` command reports an error: one line on stderr and exit status 1.

A leaf module (it imports nothing of rankjit): the command line (:mod:`rankjit.cli`)
imports the command modules, and they, or code that runs a command without the
command line (the warm-up), raise and report errors through this module rather than
through ``rankjit.cli``, so that no module the command line imports imports it back.
``rankjit.cli`` re-exports :class:`CommandError`.
"""
from __future__ import annotations

import sys


class CommandError(Exception):
    """An error to report as one line on stderr with a non-zero exit code."""


#: the errors a command reports as one line (``rankjit COMMAND: error: ...``) with exit status 1
REPORTED = (CommandError, ValueError, TypeError, FileNotFoundError, KeyError)


def run_parsed(args) -> int:
    """Run a parsed command (``args.func(args)``, ``args.command`` its name): its exit code.

    The errors of :data:`REPORTED` are printed as one line on stderr (exit status 1); a
    closed pipe (``rankjit ... | head``) ends the command quietly (exit status 0).
    """
    try:
        return int(args.func(args) or 0)
    except REPORTED as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"rankjit {args.command}: error: {message}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `rankjit ... | head`
        return 0
