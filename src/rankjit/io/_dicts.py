"""The caller's dicts of dicts, read by the compiled pass where it can (internal).

The dict front ends (``rankjit.compat.pytrec_eval``, the ir_measures provider) read
``{query: {document: value}}`` dicts.  :mod:`rankjit._kernels.pydicts` reads them in one
compiled pass when every value is of an exact type it reads; the functions here call it and
return None otherwise, and the caller then reads the dicts its Python way, which applies
its rules and names a bad value.
"""
from __future__ import annotations

import numpy as np


def int64_values(dicts, lens):
    """The values of ``dicts`` (a list the caller holds) in order, int64, or None.

    None when the compiled pass cannot read them: a value that is not exactly an ``int``
    within int64 (a bool, a float, a NumPy integer, ...), a dict of another length than
    ``lens`` says, or no JIT.
    """
    from rankjit._kernels import pydicts

    if not pydicts.available():
        return None
    offsets = np.zeros(lens.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    out = np.empty(int(offsets[-1]), dtype=np.int64)
    addresses = np.fromiter(map(id, dicts), dtype=np.int64, count=len(dicts))
    return out if pydicts.read_ints(addresses, offsets, id(int), out) == pydicts.READ_ALL else None
