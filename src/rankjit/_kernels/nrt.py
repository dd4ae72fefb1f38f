"""Borrowed array views for the hot loops: no reference counting on slices.

Numba counts references to an array's memory with an atomic increment and decrement
(``lock inc`` / ``lock dec``) on every slice it creates (``scores[start:start + count]``)
and on many calls that pass arrays on.  In the per-query loops of the kernels those
atomic operations sit on one shared counter: the caller's array.  Two threads working
on the same batch then fight over one cache line, and even one thread pays an atomic
operation per slice.

:func:`borrowed` returns a view of the same memory (same data pointer, shape and
strides) that owns no reference (its memory-info pointer is NULL).  Numba's increment
and decrement skip a NULL pointer, so slices of a borrowed view cost no atomic
operation.  A borrowed view must not outlive the array it was made from: the drivers
use it only for the duration of one kernel call, while the caller's arrays are alive.
"""
from __future__ import annotations

from numba import config, types
from numba.extending import intrinsic

try:  # Numba's array-model helpers (stable since long before the oldest Numba rankjit supports)
    from numba.np.arrayobj import make_array, populate_array
except ImportError:  # pragma: no cover - a future Numba that moved them: fall back to plain views
    make_array = populate_array = None


@intrinsic
def borrowed(typingctx, array):
    """A view of ``array`` that holds no reference to its memory (see the module note)."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        source = make_array(signature.args[0])(context, builder, value=args[0])
        view = make_array(signature.return_type)(context, builder)
        populate_array(
            view, data=source.data, shape=source.shape, strides=source.strides, itemsize=source.itemsize,
            meminfo=None,
        )
        return view._getvalue()

    return array(array), codegen


@intrinsic
def stack_floats(typingctx, size):
    """A float64 scratch array of ``size`` (a literal int) on the stack of the calling kernel.

    One ``alloca`` in the function's entry block (also when called in a loop): no heap
    allocation, no reference counting, and with constant indices LLVM keeps the entries
    in registers.  Contents are undefined on entry.  It must not outlive the kernel call.
    """
    if not isinstance(size, types.IntegerLiteral):
        return None
    n = size.literal_value
    array_type = types.Array(types.float64, 1, "C")

    def codegen(context, builder, signature, args):
        from numba.core import cgutils

        item = context.get_value_type(types.float64)
        data = cgutils.alloca_once(builder, item, size=n)
        view = make_array(array_type)(context, builder)
        intp = context.get_value_type(types.intp)
        populate_array(
            view, data=data, shape=[intp(n)], strides=[intp(8)], itemsize=intp(8), meminfo=None,
        )
        return view._getvalue()

    return array_type(size), codegen


if populate_array is None and not config.DISABLE_JIT:  # pragma: no cover

    from rankjit._config import jit

    @jit(inline="always")
    def borrowed(array):  # noqa: F811
        """The array itself (this Numba offers no way to build the view: correct, only slower)."""
        return array

elif config.DISABLE_JIT:  # the kernels run as Python: a view is the array itself

    def borrowed(array):  # noqa: F811
        """The array itself (``NUMBA_DISABLE_JIT=1``: no reference counting to avoid)."""
        return array

    def stack_floats(size):  # noqa: F811
        """A float64 scratch array (``NUMBA_DISABLE_JIT=1``: from numpy)."""
        import numpy as np

        return np.empty(size, dtype=np.float64)
