"""The one place that holds rankjit's Numba options, and the guard around parallel launches.

Every kernel in the package is compiled through :func:`jit` (serial) or
:func:`jit_parallel` (``prange`` over chunks of queries).  Nothing is compiled at
import: the decorators are lazy and the compiled code is cached on disk
(``cache=True``).  rankjit never changes process-wide Numba state (threading layer,
number of threads); parallel kernels use whatever ``numba.get_num_threads()`` the
caller has set.

Parallel kernels never hang or abort the caller's process (``docs/reliability.md``):

* **threads** - Numba's ``workqueue`` threading layer aborts the process when two
  threads launch parallel kernels at once.  Every parallel launch of rankjit holds
  one lock, so concurrent calls from several Python threads run their parallel
  kernels one after the other (whatever the threading layer).
* **fork** - a child ``fork()``-ed from a process whose Numba threading layer has
  started (GNU OpenMP in particular) dies or hangs at its first parallel launch.
  In such a child :func:`use_parallel` is False and a parallel kernel called anyway
  runs its serial twin (the same function compiled without ``parallel=True``:
  ``prange`` becomes ``range``).  Results are bitwise the same: every driver splits
  the work into the same chunks whatever runs them.
"""
from __future__ import annotations

import itertools
import logging
import os
import threading
import types

import numba

#: Options shared by every kernel.  ``fastmath`` stays off: results must be exact
#: and identical for any thread count.
JIT_OPTIONS = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")

#: Below this many queries the serial driver is used (thread start-up costs more
#: than the work).
SERIAL_THRESHOLD = 2048

#: Queries per block of work (engine blocks, parallel drivers).  The blocks never change results:
#: every query is computed independently from its own row.
CHUNK_SIZE = 1024


#: the logger of the compile notice ("rankjit"); silence it with
#: ``logging.getLogger("rankjit").setLevel(logging.ERROR)``
logger = logging.getLogger("rankjit")


_compile_depth = threading.local()


def _cache_dir(dispatcher) -> str:
    try:
        return str(dispatcher._cache._cache_path)  # Numba's cache locator: where this kernel's cache lives
    except AttributeError:  # pragma: no cover - a Numba that moved it
        return numba.config.CACHE_DIR or "__pycache__ beside rankjit's modules"


def _describe(py_func, args) -> str:
    """`` for uint8 labels / float32 scores``: the dtypes of the arguments so named, else of the first two arrays."""
    code = py_func.__code__
    names = code.co_varnames[:code.co_argcount]
    named = [f"{a.dtype} {name}" for name, a in zip(names, args)
             if name in ("labels", "scores") and isinstance(a, numba.types.Array)]
    if named:
        return f" for {' / '.join(named)}"
    arrays = [f"{a.dtype}" for a in args if isinstance(a, numba.types.Array) and a.ndim == 1][:2]
    return f" for {' / '.join(arrays)} arrays" if arrays else ""


def announce_compile(dispatcher, args, where=""):
    """The compile notice of a rankjit kernel about to compile for the argument types ``args``, ``where``
    (``" in a helper process"``) it compiles: one line on stderr by default (logging's last-resort handler),
    or wherever the application sends its logs."""
    module = getattr(dispatcher.py_func, "__module__", "") or ""
    if module == "rankjit" or module.startswith("rankjit."):
        name = dispatcher.py_func.__qualname__.replace(".<locals>.", ".")
        logger.warning(
            "rankjit: compiling %s.%s%s%s, once: the compiled code is cached in %s (NUMBA_CACHE_DIR moves or "
            "shares the cache; `rankjit warmup` compiles ahead of time)",
            module, name, _describe(dispatcher.py_func, args), where, _cache_dir(dispatcher),
        )


class _CompileNotice(numba.core.event.Listener):
    """Says, once per compile of a rankjit kernel called from Python, what is compiled.

    Numba sends ``numba:compile`` only when a signature is neither compiled in this
    process nor found in the disk cache; kernels a compile reaches (nested events) are
    part of the same line.
    """

    def on_start(self, event):
        depth = getattr(_compile_depth, "value", 0)
        _compile_depth.value = depth + 1
        if depth == 0:
            announce_compile(event.data["dispatcher"], event.data["args"])

    def on_end(self, event):
        _compile_depth.value = getattr(_compile_depth, "value", 1) - 1


numba.core.event.register("numba:compile", _CompileNotice())

#: set in a child process forked while another thread of the parent held Numba's compiler lock
_compiler_lock_orphaned = False

FORKED_DURING_COMPILE = (
    "this process was forked while another thread of its parent was compiling Numba code, so Numba's compiler "
    "lock is held by a thread this process does not have, and nothing can be compiled here (it would wait "
    "forever); fork before the first rankjit call or after it returns, use the 'spawn' or 'forkserver' start "
    "method, or fill the kernel cache first (`rankjit warmup`)"
)


class _OrphanedCompilerLock(numba.core.event.Listener):
    """Raises instead of waiting forever for a compiler lock no thread of this process can release.

    Numba announces ``numba:compiler_lock`` before it takes its (re-entrant) compiler lock.
    After a fork made while another thread held that lock, the child process has the lock
    held and not the thread: any compile would wait forever.  Only then does this listener
    act, so a rankjit call that needs a compile in such a child ends with one clear error.
    """

    def on_start(self, event):
        if _compiler_lock_orphaned:
            raise RuntimeError(FORKED_DURING_COMPILE)

    def on_end(self, event):
        pass


numba.core.event.register("numba:compiler_lock", _OrphanedCompilerLock())


def _compiler_lock_held_elsewhere() -> bool:
    """Whether Numba's compiler lock is held by a thread other than this one (tried without waiting)."""
    from numba.core.compiler_lock import global_compiler_lock

    lock = global_compiler_lock._lock
    if lock.acquire(blocking=False):  # (re-entrant: free, or held by this very thread)
        lock.release()
        return False
    return True


def jit(fn=None, **overrides):
    """Serial ``numba.njit`` with the package options."""
    options = {**JIT_OPTIONS, **overrides}
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)


def specialise(kernels, suffix, constants):
    """Copies of module-level ``kernels`` compiled with some of their globals replaced.

    ``constants`` maps global names to values (flags a copy is specialised for, or other
    kernels it should call).  Numba treats globals as compile-time constants and drops
    the branches a constant flag rules out before typing, so a copy compiles only the
    code its flags keep, from the one source text.  The copies share one globals dict:
    a copy that calls another kernel of the list by its global name calls that kernel's
    copy.  Each copy is named ``<qualname>.<suffix>`` and so has a disk-cache entry of
    its own (Numba keys its cache by the qualified name and the bytecode, not by the
    globals).  Returns ``{name: compiled copy}``.
    """
    first = getattr(kernels[0], "py_func", kernels[0])
    namespace = dict(first.__globals__)
    namespace.update(constants)
    copies = {}
    for kernel in kernels:
        fn = getattr(kernel, "py_func", kernel)  # NUMBA_DISABLE_JIT=1: the function itself
        twin = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
        twin.__qualname__ = f"{fn.__qualname__}.{suffix}"
        twin.__module__ = fn.__module__
        twin.__doc__ = fn.__doc__
        declared = getattr(kernel, "targetoptions", {})  # the kernel's own options (inline=...), not cache=
        options = {**JIT_OPTIONS, **{k: v for k, v in declared.items() if k != "nopython" and v is not None}}
        copies[fn.__name__] = numba.njit(**options)(twin)
    namespace.update(copies)
    return copies


def jit_parallel(fn=None, **overrides):
    """Parallel ``numba.njit`` (``prange``) with the package options, behind :class:`ParallelKernel`."""
    if fn is None:
        return lambda f: ParallelKernel(f, overrides)
    return ParallelKernel(fn, overrides)


# ---- the guard around parallel launches ----------------------------------------------

#: held for the whole of every parallel launch (see the module note)
_launch_lock = threading.Lock()
#: True in a process forked after a Numba threading layer had started in its parent
_forked_after_parallel = False


def _threading_layer_started() -> bool:
    """Whether this process has started a Numba threading layer (some parallel kernel ran)."""
    try:
        from numba.np.ufunc import parallel as numba_parallel

        return bool(getattr(numba_parallel, "_is_initialized", True))
    except ImportError:  # pragma: no cover - a Numba that moved it: assume started
        return True


def _after_fork_in_child():
    global _launch_lock, _forked_after_parallel, _compiler_lock_orphaned
    _launch_lock = threading.Lock()  # a thread of the parent may have held it at the fork
    if _threading_layer_started():
        _forked_after_parallel = True
    # the child has one thread, this one: a compiler lock it cannot take is held by a thread it does not have
    _compiler_lock_orphaned = _compiler_lock_held_elsewhere()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def num_threads() -> int:
    """``numba.get_num_threads()``, without starting a threading layer just to ask.

    Asking Numba starts its threading layer (OpenMP's threads, ~14 ms), which the list
    measures never use.  Before the layer has started nobody can have called
    ``numba.set_num_threads``, so the answer is then ``NUMBA_NUM_THREADS``.
    """
    if numba.config.DISABLE_JIT:
        return 1
    if _threading_layer_started():
        return numba.get_num_threads()
    return int(numba.config.NUMBA_NUM_THREADS)


def parallel_allowed() -> bool:
    """Whether a parallel kernel may run here (more than one thread, not a risky forked child)."""
    return not _forked_after_parallel and num_threads() > 1


def use_parallel(n_queries: int) -> bool:
    """Whether a batch of ``n_queries`` goes to the parallel driver."""
    return n_queries >= SERIAL_THRESHOLD and parallel_allowed()


# ---- blocks of work on Python threads -----------------------------------------------

_pool = None
_pool_pid = -1
_pool_lock = threading.Lock()


def _thread_pool():
    """The process's worker threads (made anew in a forked child: threads do not survive a fork)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            from concurrent.futures import ThreadPoolExecutor

            workers = max(1, int(numba.config.NUMBA_NUM_THREADS) - 1)  # the caller's thread works too
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rankjit")
            _pool_pid = os.getpid()
        return _pool


def run_blocks(task, n_blocks: int, parallel: bool) -> None:
    """Call ``task(b_lo, b_hi)`` so that the blocks ``0 .. n_blocks - 1`` are each covered once.

    With ``parallel``, :func:`num_threads` threads (the caller's and the pool's)
    take ranges of blocks from a shared counter; the task must be a ``nogil`` kernel
    call whose blocks write disjoint outputs.  Python threads instead of a Numba
    threading layer: nothing to compile for parallelism, nothing that a fork or
    concurrent callers can break, and each block computes the same values whichever
    thread runs it.
    """
    n_threads = num_threads() if parallel else 1
    if n_threads <= 1 or n_blocks <= 1:
        task(0, n_blocks)
        return
    grain = max(1, n_blocks // (8 * n_threads))  # about 8 ranges per thread: balance without much overhead
    n_ranges = (n_blocks + grain - 1) // grain
    ranges = itertools.count()  # next() is atomic under the GIL

    def work():
        for i in ranges:
            if i >= n_ranges:
                return
            task(i * grain, min(n_blocks, (i + 1) * grain))

    helpers = [_thread_pool().submit(work) for _ in range(min(n_threads, n_ranges) - 1)]
    try:
        work()
    finally:
        for helper in helpers:
            helper.result()  # waits, and raises a helper's exception


class ParallelKernel:
    """A ``parallel=True`` kernel whose launches are guarded (module note).

    Calling it holds the launch lock for the duration of the kernel; in a child forked
    after its parent started a threading layer it runs :attr:`serial` instead.  Other
    attributes (``py_func``, ``signatures``, ...) are those of the Numba dispatcher.
    Parallel kernels are entry points: they are called from Python, never from
    another kernel.
    """

    def __init__(self, fn, overrides):
        self._fn = fn
        self._overrides = overrides
        self.dispatcher = numba.njit(**{**JIT_OPTIONS, "parallel": True, **overrides})(fn)
        self._serial = None
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__module__ = fn.__module__
        self.__wrapped__ = fn

    @property
    def serial(self):
        """The same function compiled without ``parallel=True`` (compiled on first use)."""
        if self._serial is None:
            # a copy of the function under another name: Numba's on-disk cache is keyed by the
            # function's qualified name and signature, not by ``parallel``, so the twin must not
            # share the parallel kernel's cache entry
            fn = self._fn
            twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
            twin.__qualname__ = f"{fn.__qualname__}.serial_twin"
            twin.__module__ = fn.__module__
            self._serial = numba.njit(**{**JIT_OPTIONS, **self._overrides})(twin)
        return self._serial

    def __call__(self, *args):
        if _forked_after_parallel:
            return self.serial(*args)
        with _launch_lock:
            return self.dispatcher(*args)

    def __getattr__(self, name):
        return getattr(self.dispatcher, name)

    def __repr__(self):
        return f"<rankjit parallel kernel {self.__module__}.{self.__qualname__}>"
