"""The caller's dicts of dicts, read by the compiled pass where it can (internal).

The dict front ends (``rankjit.compat.pytrec_eval``, the ir_measures provider) read
``{query: {document: value}}`` dicts.  :mod:`rankjit._kernels.pydicts` reads them in one
compiled pass when every value is of an exact type it reads; the functions here call it and
return None otherwise, and the caller then reads the dicts its Python way, which applies
its rules and names a bad value.
"""
from __future__ import annotations

from itertools import chain, islice

import numpy as np


def int64_values_and_keys(dicts, lens, hold=False):
    """``(values, keys)`` of ``dicts`` (a list of dicts), read in one compiled pass.

    ``values``: the dicts' values in order, int64.  ``keys``: the keys in the same order, or
    None when one is not exactly a ``str`` (a lookup of another type could run Python code).
    Without ``hold``, ``keys`` is the keys' addresses (``id()``, int64), borrowed from the
    dicts: valid only while the dicts are held and unchanged, so pass dicts that nothing else
    can change (your own copies).  With ``hold``, ``keys`` is a :class:`HeldObjects` that holds
    a reference to each key, taken in the same pass: the caller's dicts need no copy.
    ``(None, None)`` when the pass cannot read the values: a value that is not exactly an
    ``int`` within int64 (a bool, a float, a NumPy integer, ...), a dict of another length
    than ``lens`` says, or no JIT.
    """
    from rankjit._kernels import pydicts

    if not pydicts.available():
        return None, None
    offsets = np.zeros(lens.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    out = np.empty(int(offsets[-1]), dtype=np.int64)
    keys = np.zeros(int(offsets[-1]), dtype=np.int64)
    other_ids = np.zeros(1, dtype=np.int64)
    status = pydicts.read_ints(_addresses(dicts), offsets, id(int), id(str), out, keys, other_ids, hold)
    if status != pydicts.READ_ALL:
        return None, None  # (with hold, the kernel gave its references back)
    if not hold:
        return out, (keys if other_ids[0] == 0 else None)
    held = HeldObjects(keys)  # (gives the references back when collected)
    return out, (held if other_ids[0] == 0 else None)


class HeldObjects:
    """Python objects held by their addresses: ``addresses`` (int64, ``id()`` of each).

    Made by :func:`int64_values_and_keys` with ``hold``, it owns one reference to each object,
    taken by the compiled read, and gives them back when it is collected.  It pickles as the
    list of its objects (an address means nothing in another process): unpickled, it holds
    that list and lists their new addresses.
    """

    __slots__ = ("addresses", "_objects", "__weakref__")

    def __init__(self, addresses, objects=None):
        self.addresses = addresses
        self._objects = objects
        if objects is None:  # references taken by the compiled read: given back when this is collected
            import weakref

            from rankjit._kernels import pydicts

            pydicts.release(addresses[:0])  # (compiled, or loaded from the cache, now: not in a finalizer)
            # (not at exit: the interpreter frees everything then)
            weakref.finalize(self, pydicts.release, addresses).atexit = False

    @classmethod
    def of(cls, objects):
        """Held by a list of its own (no reference counted by hand)."""
        objects = list(objects)
        return cls(_addresses(objects), objects)

    def objects(self, rows=None):
        """The objects (a list), or those at ``rows`` (int64 indexes) when given."""
        if self._objects is not None:
            return self._objects if rows is None else [self._objects[i] for i in rows.tolist()]
        from rankjit._kernels import pydicts

        addresses = self.addresses if rows is None else self.addresses[rows]
        out = [None] * addresses.shape[0]
        pydicts.fill_list(id(out), addresses)
        return out

    def __reduce__(self):
        return HeldObjects.of, (self.objects(),)


def _addresses(objects):
    """``id()`` of each object, int64 (the caller holds the objects for the kernel's call)."""
    return np.fromiter(map(id, objects), dtype=np.int64, count=len(objects))


def index_not_str(ids):
    """The index of the first of ``ids`` (a list) that is not a ``str``, or -1 (a ``str`` subclass, e.g.
    NumPy's ``str_``, is a ``str``)."""
    if set(map(type, ids)) <= {str}:
        return -1
    return next((i for i, x in enumerate(ids) if not isinstance(x, str)), -1)


def check_document_ids(keys, dicts, name, every=True):
    """A TypeError naming the first document id of ``dicts`` (one per query of ``keys``) that is not a ``str``;
    of each dict's first id alone unless ``every``.  (Before a Python read of dicts the compiled pass could not
    read: there an id of another type would match no ``str`` id, without a word.)"""
    ids = chain.from_iterable(dicts) if every else map(next, map(iter, filter(None, dicts)))
    if set(map(type, ids)) <= {str}:
        return
    for k, d in zip(keys, dicts):
        ids = list(d) if every else list(islice(d, 1))
        i = index_not_str(ids)
        if i >= 0:
            raise TypeError(f"{name}[{k!r}]: document id {ids[i]!r} is a {type(ids[i]).__name__}, not a str")


def str_addresses(ids):
    """``id()`` of each of ``ids`` (int64) when every one is exactly a ``str``, else None (a lookup of
    another type could run Python code)."""
    return _addresses(ids) if set(map(type, ids)) <= {str} else None


def scores_and_lookups(dicts, offsets, looked_up, j_off, positions=True):
    """``(scores, looked-up scores, positions)`` of the run ``dicts`` (query ``q``'s items are
    ``offsets[q]:offsets[q + 1]``), or None: the scores float64, the positions (int32) where
    each item is in its dict (for :func:`place_tied_by_id`; empty unless ``positions``).

    The looked-up documents of query ``q`` are the str objects at addresses
    ``looked_up[j_off[q]:j_off[q + 1]]`` (:func:`str_addresses`; the caller holds them); a
    document its dict does not hold scores NaN.  None when the compiled pass cannot read the
    dicts (ids not exactly str, scores not exactly floats, a dict of another length, no JIT) or
    a score is NaN.
    """
    from rankjit._kernels import pydicts

    if not pydicts.available():
        return None
    n = int(offsets[-1])
    score = np.empty(n, dtype=np.float64)
    j_score = np.empty(looked_up.shape[0], dtype=np.float64)
    positions = np.empty(n if positions else 0, dtype=np.int32)
    nothing = np.zeros(0, dtype=np.int64)  # (no judgments read)
    status = pydicts.read_run(_addresses(dicts), offsets, id(str), id(float), id(np.float64), id(int), nothing, 0,
                              nothing, looked_up, j_off, score, j_score, positions)
    if status != pydicts.READ_ALL or np.isnan(score).any():
        return None
    return score, j_score, positions


def scores_and_judgments(dicts, offsets, judgments, unjudged, raw, score, positions, ids_checked=False):
    """Whether the compiled pass filled ``score`` (float64), ``raw`` (int64) and ``positions`` (int32) from the
    run ``dicts``.

    ``raw[i]`` is the value ``judgments[q]`` (a dict per run query) holds for document ``i``,
    ``unjudged`` when none; ``positions[i]`` where item ``i`` is in its dict (for
    :func:`place_tied_by_id`).  False when the compiled pass cannot read them: ids not exactly
    str (in the run or in ``judgments``, checked here at every call: a lookup in a dict with
    other keys could run Python code), scores not exactly floats, judgments not exactly ints
    within int64, a dict of another length, no JIT.  ``ids_checked``: the caller knows that every id of
    ``judgments`` is exactly a str (its own dicts, checked once) and this call does not check them.
    """
    from rankjit._kernels import pydicts

    if not pydicts.available():
        return False
    if not judgments:
        return True  # (no query: nothing to read)
    if not ids_checked and not set(map(type, chain.from_iterable(judgments))) <= {str}:
        return False
    nothing = np.zeros(0, dtype=np.int64)  # (no documents looked up)
    status = pydicts.read_run(_addresses(dicts), offsets, id(str), id(float), id(np.float64), id(int),
                              _addresses(judgments), unjudged, raw, nothing, np.zeros(len(dicts) + 1, dtype=np.int64),
                              score, np.zeros(0, dtype=np.float64), positions)
    return status == pydicts.READ_ALL


def place_tied_by_id(dicts, need, need_query, offsets, score, member, j_score, j_label, above, labels, positions, *,
                     looked_up=None, need_row=None, descending=True):
    """Whether the compiled pass placed the tied judged documents (:func:`rankjit._kernels.pydicts.place_tied`).

    ``dicts`` are the run's dicts, one per query (held by the caller); the needed documents'
    ids are the str at addresses ``looked_up`` or the keys at rows ``need_row``; the tied
    documents' ids are read at ``positions`` (int32, recorded by :func:`scores_and_lookups`
    or :func:`scores_and_judgments`).  False when an id is not exactly a str or a dict changed
    length since it was read, or without the JIT (the caller then compares in Python, and
    names the culprit).
    """
    from rankjit._kernels import pydicts

    if not pydicts.available():
        return False
    nothing = np.zeros(0, dtype=np.int64)
    status = pydicts.place_tied(need, need_query, nothing if need_row is None else need_row, offsets, score, member,
                                _addresses(dicts), id(str), nothing if looked_up is None else looked_up, j_score,
                                j_label, above, descending, labels, positions)
    return status == pydicts.READ_ALL


def rows_read(rows, query_field, doc_field, value_field, ints=False):
    """``(new_query, doc ids, values)`` of a list of (named) tuples, read in one compiled pass.

    ``rows`` is the caller's own list (not one another thread can change: the ids' bytes are
    read by address in a second pass), held for the call; the fields are indexes into each
    row.  ``new_query`` (bool): whether a row's query id differs from the row before's (True
    for the first row); ``doc ids``: a :class:`rankjit.io._trec.StringColumn` of their UTF-8
    bytes; ``values``: float64 scores, or int64 judgments when ``ints``.  None when the pass
    cannot read them (the caller's Python way then applies every rule): no rows, rows not all
    of the first row's type (a tuple type), a row with too few fields, ids not exactly
    ``str`` or without UTF-8 bytes (a lone surrogate), scores not exactly floats (judgments
    not exactly ints within int64), no JIT.  NaN scores are read as they are.
    """
    from rankjit._kernels import pydicts
    from rankjit.io._trec import StringColumn

    if not rows or not pydicts.available() or not isinstance(rows[0], tuple):
        return None
    n = len(rows)
    score = np.empty(0 if ints else n, dtype=np.float64)
    grade = np.empty(n if ints else 0, dtype=np.int64)
    doc_at = np.empty(n, dtype=np.int64)
    doc_len = np.empty(n, dtype=np.int64)
    new_query = np.empty(n, dtype=np.bool_)
    status = pydicts.read_rows(id(rows), n, id(type(rows[0])), query_field, doc_field, value_field, id(str),
                               id(float), id(np.float64), id(int), score, grade, doc_at, doc_len, new_query)
    if status != pydicts.READ_ALL:
        return None
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(doc_len, out=offsets[1:])
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    pydicts.gather_bytes(doc_at, doc_len, offsets, data)
    return new_query, StringColumn(data, offsets), (grade if ints else score)
