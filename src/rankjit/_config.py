"""The one place that holds rankjit's Numba options.

Every kernel in the package is compiled through :func:`jit` (serial) or
:func:`jit_parallel` (``prange`` over chunks of queries).  Nothing is compiled at
import: the decorators are lazy and the compiled code is cached on disk
(``cache=True``).  rankjit never changes process-wide Numba state (threading layer,
number of threads); parallel kernels use whatever ``numba.get_num_threads()`` the
caller has set.
"""
from __future__ import annotations

import numba

#: Options shared by every kernel.  ``fastmath`` stays off: results must be exact
#: and identical for any thread count.
JIT_OPTIONS = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")

#: Below this many queries the serial driver is used (thread start-up costs more
#: than the work).
SERIAL_THRESHOLD = 2048

#: Queries per work chunk in parallel drivers.  The chunking never changes results:
#: every query is computed independently from its own row.
CHUNK_SIZE = 1024


def jit(fn=None, **overrides):
    """Serial ``numba.njit`` with the package options."""
    options = {**JIT_OPTIONS, **overrides}
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)


def jit_parallel(fn=None, **overrides):
    """Parallel ``numba.njit`` (``prange``) with the package options."""
    options = {**JIT_OPTIONS, "parallel": True, **overrides}
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)


def use_parallel(n_queries: int) -> bool:
    """Whether a batch of ``n_queries`` goes to the parallel driver."""
    return n_queries >= SERIAL_THRESHOLD and numba.get_num_threads() > 1
