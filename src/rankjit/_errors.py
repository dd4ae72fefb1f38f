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


#: the errors a command reports as one line (``rankjit COMMAND: error: ...``) with exit status 1, their
#: message as it is; any other exception is reported by its type and first line (:func:`error_line`)
REPORTED = (CommandError, ValueError, TypeError, FileNotFoundError, KeyError)
#: what the line of an unexpected exception ends with (every command takes ``--debug``: ``rankjit.cli``)
DEBUG_HINT = "(--debug shows the traceback)"


def error_line(exc: BaseException) -> str:
    """The message of ``rankjit COMMAND: error: ...`` for ``exc``: one line.

    An error of :data:`REPORTED` gives its message (a ``KeyError`` its text, unquoted); any
    other exception (a ``ZeroDivisionError``, ``MemoryError``, ``OSError``, ... that a command
    did not foresee) its type, its message's first non-blank line and :data:`DEBUG_HINT`.
    """
    if isinstance(exc, REPORTED):
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        return str(message)
    first = next((ln for ln in str(exc).splitlines() if ln.strip()), "")
    return f"{type(exc).__name__}: {first} {DEBUG_HINT}" if first else f"{type(exc).__name__} {DEBUG_HINT}"


def run_parsed(args) -> int:
    """Run a parsed command (``args.func(args)``, ``args.command`` its name): its exit code.

    Every command's errors end here, the one mechanism of the command line: any exception
    is printed as one line on stderr (:func:`error_line`) with exit status 1, or, when the
    command was given ``--debug`` (``args.debug``), as its Python traceback (exit status 1).
    A closed pipe (``rankjit ... | head``) ends the command quietly (exit status 0).
    """
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `rankjit ... | head`
        return 0
    except Exception as exc:
        if getattr(args, "debug", False):
            import traceback

            traceback.print_exc()
            return 1
        print(f"rankjit {args.command}: error: {error_line(exc)}", file=sys.stderr)
        return 1
