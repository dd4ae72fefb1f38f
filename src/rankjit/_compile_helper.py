"""A first call compiles the engine's two passes at once: one of them in a helper process.

The engine's rank pass and measure pass (``rankjit._kernels.engine``) are separate compiled
functions, and on an empty cache each takes seconds to compile, on one core: Numba compiles
in the calling thread.  When both are missing for a call (neither compiled in this process
nor in the disk cache) and the process may use two CPUs, :func:`compile_passes` starts one helper
process that compiles one pass into the disk cache (:func:`helper_pass`: the one likely the
smaller, since the helper starts cold) while this process compiles the other; the first run
of the passes then loads the helper's pass from the cache.  The values cannot change: the
helper compiles the same function for the same argument types, and the cache holds what
Numba would have compiled here.

The helper is an optimisation and nothing relies on it.  It is not started when caching is
off for the pass, when the process may use one CPU only, in a frozen application, under
``NUMBA_DISABLE_JIT=1`` or with ``RANKJIT_COMPILE_HELPER=0``; when it fails or is not done
within :data:`WAIT_SECONDS`, this process compiles that pass itself, as it would
have without it, and says so.  The helper's compile notice is given by this process (one
line through the ``rankjit`` logger, like every compile notice, so that silencing the
logger silences it too); the helper's own output is discarded.  While it runs, this
process compiles its pass and that pass's primitives and nothing else (it holds Numba's
compiler lock): the rank pass calls the ranking primitives (``ranking``), the measure pass
the measure primitives (``binary``, ``graded``, ``cascade``), so the two processes never add
entries to one cache index at once.

A command that knows early which kernels it will need can also start a helper of another
kind, :func:`prefetch`: a process that runs a given function (``rankjit trec_eval``: a
small evaluation shaped like its files) to fill the cache while this process compiles
other kernels (the file readers), and that :func:`wait_prefetch` waits for before those
kernels are first called.  The same conditions apply; the two processes compile different
kernels unless the guess behind the prefetch was wrong, and then at worst one cache entry
is written twice.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading

from rankjit._config import announce_compile

#: how long this process waits for the helper before compiling the helper's pass itself
WAIT_SECONDS = 300.0

#: the helper's program: reads ``sys.path``, then the engine module's file, the variant and the argument types
#: (its compile notice is this process's: :func:`compile_passes`)
_HELPER = (
    "import logging, pickle, sys\n"
    "sys.path[:] = pickle.load(sys.stdin.buffer)\n"
    "logging.getLogger('rankjit').setLevel(logging.ERROR)\n"
    "from rankjit._kernels import engine\n"
    "file, variant, which, types = pickle.load(sys.stdin.buffer)\n"
    "if engine.__file__ != file:\n"
    "    sys.exit(3)\n"
    "getattr(engine.compiled(variant), which).compile(types)\n"
)

#: a prefetch helper's program: reads ``sys.path``, then a module, a function of it and its arguments, and calls it
#: (no helper of its own: ``RANKJIT_COMPILE_HELPER=0`` in its environment)
_PREFETCH = (
    "import importlib, logging, pickle, sys\n"
    "sys.path[:] = pickle.load(sys.stdin.buffer)\n"
    "logging.getLogger('rankjit').setLevel(logging.ERROR)\n"
    "module, function, args = pickle.load(sys.stdin.buffer)\n"
    "getattr(importlib.import_module(module), function)(*args)\n"
)

_lock = threading.Lock()
#: the prefetch helper started by :func:`prefetch` and not yet waited for (:func:`wait_prefetch`), or None
_prefetching = None


def _after_fork_in_child():
    global _lock, _prefetching
    _lock = threading.Lock()  # a thread of the parent may have held it at the fork (compile_passes holds it long)
    _prefetching = None  # the parent's helper is not this process's child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def enabled() -> bool:
    """Whether a helper process may be started here (the conditions of the module note but the cache's)."""
    import numba

    if os.environ.get("RANKJIT_COMPILE_HELPER", "1").strip() == "0" or numba.config.DISABLE_JIT:
        return False
    if getattr(sys, "frozen", False) or not sys.executable:
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return cpus >= 2


def needs_compile(dispatcher, types) -> bool:
    """True when ``dispatcher`` has ``types`` neither compiled in this process nor in its disk cache.

    Reads Numba's cache index (``Cache._index_key`` / ``IndexDataCacheFile._load_index``: private,
    read only); False when that cannot be read (no cache: the helper's work could not be shared).
    """
    if tuple(types) in dispatcher.overloads:
        return False
    index = _disk_index(dispatcher)
    try:
        return index is not None and dispatcher._cache._index_key(tuple(types), dispatcher.targetctx.codegen()) \
            not in index
    except Exception:  # noqa: BLE001 - a Numba that moved it
        return False


def _disk_index(dispatcher):
    """The entries of ``dispatcher``'s disk cache index (Numba's private ``IndexDataCacheFile._load_index``, read
    only), or None when there is none to read (no disk cache: NullCache) or Numba moved it."""
    try:
        return dispatcher._cache._cache_file._load_index()
    except Exception:  # noqa: BLE001
        return None


def helper_pass(variant) -> str:
    """The pass the helper compiles (``"rank"`` or ``"measure"``): the one likely the smaller.

    The helper starts cold (1-1.5 s of imports and set-up before it compiles), so it should
    take the smaller pass.  The measure pass of one group of measures (``ndcg``: the graded
    group) is about the size of a rank pass that ranks (2 s each on the bench machine); the
    groups add up (the ten list measures: 2.7 s), and a rank pass for rows in rank order is
    small (``rankjit trec_eval``: 1 s).  Measured, 5-6 interleaved fresh processes each: the
    first ``ndcg`` 3.7 s with the helper on the measure pass against 4.8 s on the rank pass;
    ``evaluate`` with the ten measures 3.6 s against 4.4 s, and ``rankjit trec_eval`` on the
    Web 2012 run 8.8 s against 9.9 s, with the helper on the rank pass.
    """
    groups = variant.binary + variant.graded + variant.cascade + variant.sets + variant.cwl + variant.extras
    return "measure" if groups <= 1 and not variant.ranked else "rank"


def _start(variant, which, types):
    """The helper process compiling the pass ``which`` of ``variant`` for ``types``, or None."""
    from rankjit._kernels import engine

    return _spawn(_HELPER, (engine.__file__, variant, which, tuple(types)))


def _spawn(program, payload, **env_extra):
    """A ``python -c program`` process reading this process's ``sys.path`` and ``payload`` (pickled), or None."""
    import numba

    env = dict(os.environ, **env_extra)
    if numba.config.CACHE_DIR:  # (set in this process after Numba read the environment, too)
        env["NUMBA_CACHE_DIR"] = numba.config.CACHE_DIR
    try:
        proc = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None
    try:
        pickle.dump(list(sys.path), proc.stdin)
        pickle.dump(payload, proc.stdin)
        proc.stdin.close()
    except (OSError, pickle.PicklingError):
        proc.kill()
        proc.wait()
        return None
    return proc


def never_cached(dispatcher) -> bool:
    """True when ``dispatcher``'s disk cache holds no signature at all (a first use of it with this cache).

    Reads Numba's cache index as :func:`needs_compile` does; False when it cannot be read.
    """
    if dispatcher.overloads:
        return False
    index = _disk_index(dispatcher)
    return index is not None and not index


def prefetch(module, function, args, what) -> bool:
    """Start a helper process that calls ``module.function(*args)`` to fill the disk cache while this one works on.

    A command that knows early which kernels it will need later (``rankjit trec_eval``: the
    engine variant that evaluates its run, while this process compiles the file readers)
    has them compiled meanwhile on the other CPU; :func:`wait_prefetch` waits for the helper
    before those kernels are first called, and they are then loaded from the cache.  The
    helper starts no helper of its own.  Nothing relies on it: when it fails, or compiled
    other signatures than the ones called (a wrong guess), this process compiles what it
    needs, as it would have without it.  Not started under :func:`enabled`'s conditions, or
    while another prefetch runs; ``what`` names the work in the one compile notice, given
    through the ``rankjit`` logger.  Returns whether it started.
    """
    global _prefetching
    with _lock:
        if _prefetching is not None or not enabled():
            return False
        proc = _spawn(_PREFETCH, (module, function, tuple(args)), RANKJIT_COMPILE_HELPER="0")
        if proc is None:
            return False
        _prefetching = proc
    from rankjit._config import logger

    logger.warning("rankjit: compiling %s in a helper process, once: the compiled code is cached (NUMBA_CACHE_DIR "
                   "moves or shares the cache; `rankjit warmup` compiles ahead of time)", what)
    return True


def wait_prefetch(cancel=False):
    """Wait for the helper of :func:`prefetch`, if one runs (killed after :data:`WAIT_SECONDS`, or at once with
    ``cancel``: its work is not needed, e.g. the command failed first)."""
    global _prefetching
    with _lock:
        proc, _prefetching = _prefetching, None
    if proc is None:
        return
    if cancel:
        proc.kill()
    try:
        proc.wait(WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def compile_passes(variant, rank, rank_types, measure, measure_types) -> bool:
    """Compile one pass here and the other in a helper process (:func:`helper_pass`), when both are missing.

    ``rank`` / ``measure``: the variant's compiled passes (dispatchers); ``*_types``: the Numba
    types of the arguments they will be called with.  Returns True when the helper ran (and its
    pass is in the cache if it succeeded); False when nothing was done: the first call
    compiles what it needs, as usual.
    """
    wait_prefetch()  # (a prefetch may be compiling these very passes)
    with _lock:  # (threads: one helper per pair of passes)
        if not (enabled() and needs_compile(measure, measure_types) and needs_compile(rank, rank_types)):
            return False
        which = helper_pass(variant)
        there, here = ((rank, rank_types), (measure, measure_types))[:: 1 if which == "rank" else -1]
        proc = _start(variant, which, there[1])
        if proc is None:
            return False
        announce_compile(*there, " in a helper process")
        # Numba's compiler lock, held until the helper is done: no thread of this process compiles (and adds cache
        # entries) meanwhile but this one, which compiles the other pass
        from numba.core.compiler_lock import global_compiler_lock

        with global_compiler_lock:
            try:
                here[0].compile(tuple(here[1]))
            finally:
                try:
                    proc.wait(WAIT_SECONDS)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        return True
