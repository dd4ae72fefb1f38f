"""The ``rankjit`` command line (also ``python -m rankjit``).

Each sub-command lives in a module that exposes ``register(subparsers)``;
``register`` adds the command's ``argparse`` parser(s) and sets ``func`` (called
with the parsed arguments, returning an exit code).

Start-up is kept short: only the module of the command being run is imported.
:data:`COMMANDS` names every command's module and one-line help, so that
``rankjit --help`` lists them all without importing any; ``rankjit COMMAND ...``
imports just that command's module, which imports its heavy dependencies only
when the command runs.

No module this one imports (the command modules included) imports it back: they take
``CommandError`` and the one-line error report from the leaf :mod:`rankjit._errors`
(``rankjit.cli.CommandError`` still names it, loaded on first use).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import importlib.util
import sys

#: sub-command -> (module whose ``register`` adds it, one-line help), in the order
#: ``rankjit --help`` lists them.  The help must be the one ``register`` gives the
#: command (tests/test_cli_startup.py checks); a module's commands stay together.
COMMANDS = {
    "demo": ("rankjit._demo", "score a generated batch with every list measure and print the throughput"),
    "trec_eval": ("rankjit.io._cli",
                  "trec_eval-compatible evaluation of a TREC run (same names, options, output)"),
    "eval": ("rankjit.io._cli", "evaluate TREC runs with ir_measures-style names (nDCG@10, AP, ERR@20, ...)"),
    "score-log": ("rankjit._score_log", "stream a Parquet log of (query, label, score) rows and evaluate it"),
    "compare": ("rankjit.stats._cli", "table of mean scores with significance markers"),
    "analyze": ("rankjit.stats._cli", "stability (G-theory) and discriminative power of measures"),
    "warmup": ("rankjit._warmup", "compile the common kernels ahead of time, in parallel processes, into Numba's cache"),
}

#: sub-command modules, in the order ``rankjit --help`` lists them
COMMAND_MODULES = tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))


def _module_present(name: str) -> bool:
    """Whether module ``name`` can be imported, without importing it (nor its package)."""
    if name in sys.modules:
        return True
    parent = name.rpartition(".")[0]
    try:
        spec = importlib.util.find_spec(parent)  # imports the parent's parents only
    except ModuleNotFoundError:
        return False
    if spec is None or spec.submodule_search_locations is None:
        return False
    return importlib.machinery.PathFinder.find_spec(name, list(spec.submodule_search_locations)) is not None


def _command_of(argv) -> str | None:
    """The sub-command named on the command line (its first non-option word), if any."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def build_parser(command: str | None = "*") -> argparse.ArgumentParser:
    """The ``rankjit`` parser.

    ``command="*"`` (the default) imports every command module and registers every
    command in full.  Otherwise only the module of ``command`` is imported (none for
    ``None`` or an unknown name); the other commands are listed with their help line
    only, enough for ``rankjit --help`` and argparse's "invalid choice" message.
    """
    parser = argparse.ArgumentParser(
        prog="rankjit",
        description="Compiled ranking-quality metrics: evaluation, trec_eval parity, meta-evaluation.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = COMMANDS[command][0] if command in COMMANDS else None
    for name in COMMAND_MODULES:
        if command == "*" or name == wanted:
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as exc:  # a module of an optional part not present
                if exc.name != name:
                    raise
                continue
            module.register(subparsers)
            for cmd, (module_name, _) in COMMANDS.items():
                if module_name == name and cmd in subparsers.choices:
                    add_debug_option(subparsers.choices[cmd])
        elif _module_present(name):
            for cmd, (module_name, help_line) in COMMANDS.items():
                if module_name == name:
                    subparsers.add_parser(cmd, help=help_line)
    return parser


def add_debug_option(parser: argparse.ArgumentParser) -> None:
    """Give a command ``--debug`` (unless it has it): on an error, the Python traceback instead of one line.

    Every command's errors end in ``rankjit._errors.run_parsed``, which reads ``args.debug``.
    """
    try:
        parser.add_argument("--debug", action="store_true", help="on an error, show the Python traceback")
    except argparse.ArgumentError:  # (the command declares it itself)
        pass


def main(argv=None) -> int:
    """Run ``rankjit`` on ``argv`` (default: the program's ``sys.argv[1:]``); the exit code."""
    as_program = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    from rankjit._errors import run_parsed

    probe_finder = _skip_numbas_blas_probe() if as_program else None
    try:
        return run_parsed(args)  # errors as one line on stderr
    finally:
        _remove_finder(probe_finder)  # (when the command loaded no kernel)
        if as_program:
            _before_exit()


class _NoSciPy:
    """A meta-path finder under which SciPy cannot be imported (see :func:`_skip_numbas_blas_probe`)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "scipy" or name.startswith("scipy."):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden from Numba's BLAS probe by the rankjit "
                                      "command)", name=name)
        return None


class _ArrayMathWithoutSciPy:
    """A meta-path finder that loads ``numba.np.arraymath`` with SciPy hidden (:class:`_NoSciPy`), once."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba.np.arraymath":
            return None
        _remove_finder(self)  # once: the module is found below, and never again
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _LoaderWithoutSciPy(spec.loader)
        return spec


class _LoaderWithoutSciPy:
    """``loader``, executing its module with :class:`_NoSciPy` first on ``sys.meta_path``."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        sys.meta_path.insert(0, _NoSciPy)
        try:
            self.loader.exec_module(module)
        finally:
            _remove_finder(_NoSciPy)


def _remove_finder(finder):
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)


def _skip_numbas_blas_probe():
    """The ``rankjit`` program's own process: Numba's BLAS probe finds no SciPy (0.17 s less per command).

    Loading the first compiled kernel sets Numba's CPU target up, which imports
    ``numba.np.arraymath``; that module's import-time BLAS probe (``_HAVE_BLAS``) imports
    ``scipy.linalg`` when SciPy is installed: 0.17 s of a 0.7 s warm ``rankjit trec_eval``,
    for nothing, since no rankjit kernel calls BLAS (``np.dot`` and ``np.linalg`` are only
    used by NumPy code).  While ``numba.np.arraymath`` executes, and then only, SciPy is
    hidden; Numba then takes BLAS as absent (``_HAVE_BLAS = False``: its ``np.dot`` would use
    a plain loop).  SciPy itself stays importable.  Only when :func:`main` runs as the
    program (``argv`` not given): in a process that is rankjit's command alone; a call
    from other code, where the caller's own Numba functions may use BLAS, changes nothing.
    Returns the finder put on ``sys.meta_path`` (None when Numba's target is set up already).
    """
    if "numba.np.arraymath" in sys.modules:
        return None
    finder = _ArrayMathWithoutSciPy()
    sys.meta_path.insert(0, finder)
    return finder


def __getattr__(name):
    """``CommandError``, re-exported from :mod:`rankjit._errors` on first use (``rankjit --help`` imports nothing)."""
    if name == "CommandError":
        from rankjit._errors import CommandError

        return CommandError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _before_exit():
    """The program ends next: spare the interpreter's shutdown its garbage collections.

    Numba, llvmlite and NumPy leave hundreds of thousands of objects; the collections
    run while the interpreter shuts down walk them all (~70 ms after a TREC
    evaluation, a sixth of the command).  ``gc.freeze()`` moves them to the permanent
    generation, which those collections skip; shutdown is otherwise unchanged (atexit
    handlers run, streams are flushed, modules are torn down).  Only when ``main`` runs
    as the program (``argv`` not given), never for a call from other code.
    """
    import gc

    gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
