"""Compiled reads of the caller's ``{document id: score}`` dicts and rows, through CPython's C API.

The dict front ends (``rankjit.compat.pytrec_eval``, the ir_measures provider) are handed
dicts of dicts.  Reading them from Python (``np.fromiter`` over ``dict.values``, one
``dict.get`` per looked-up document) costs more than the evaluation itself; here one compiled
pass walks each dict with ``PyDict_Next``, reads each value with ``PyFloat_AsDouble`` or
``PyLong_AsLongLongAndOverflow`` and looks documents up with ``PyDict_GetItemWithError``,
the functions CPython's own ``dict.values`` and ``dict.get`` call.  The ir_measures provider
is also handed lists of named tuples (``Qrel``, ``ScoredDoc``): :func:`read_rows` walks them
with ``PyList_GetItem`` and ``PyTuple_GetItem`` and takes each document id's UTF-8 bytes
with ``PyUnicode_AsUTF8AndSize``.  :func:`read_ints` can take a reference to each judged id
it reads (``Py_IncRef``; :func:`release` gives them back), so that a front end holds the ids
without copying the caller's dicts.  The front ends call these kernels through
:mod:`rankjit.io._dicts`.

Objects reach a kernel as their addresses (``id(obj)``, int64); the caller keeps every object
alive for the call.  The kernels hold the GIL (``nogil=False``) and run no Python code: they
accept only dicts whose keys are exactly ``str`` and whose values are exactly ``float`` (or
NumPy's float64, a ``float`` subclass) or ``int``, and rows of one tuple type whose ids are
exactly ``str``, so every hash and comparison is CPython's C code and every read is a plain
load.  Anything else returns a status asking the caller for its Python
path, which keeps every rule and error message.  :func:`available` says whether this
interpreter's object layout is the one the kernels read (``ob_type`` at byte 8: CPython's
default build) and whether the JIT is on; otherwise the callers use their Python paths.

The functions called are in CPython's stable ABI; the compiled code names them as symbols,
resolved in the running interpreter, so Numba's disk cache keeps working.
"""
from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from rankjit._config import jit

_I64 = ir.IntType(64)
_I32 = ir.IntType(32)
_BYTE_PTR = ir.IntType(8).as_pointer()

#: a kernel's answer when it read everything; otherwise it returns the query it stopped at
READ_ALL = -1
#: the largest position in a dict that read_run records (int32)
_INT32_MAX = np.iinfo(np.int32).max


def _c_function(builder, name, returns, arguments):
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(returns, arguments), name)


@intrinsic
def _dict_next(typingctx, mapping, position, found):
    """``PyDict_Next(mapping, &position, &key, &value)``: nonzero while an item is left.

    Writes ``found[0] = position`` (to pass to the next call), ``found[1] = key`` and
    ``found[2] = value`` (addresses of borrowed references).
    """
    sig = types.boolean(types.int64, types.int64, types.Array(types.int64, 1, "C"))

    def codegen(context, builder, signature, args):
        mapping_addr, start, out = args
        data = context.make_array(signature.args[2])(context, builder, out).data
        # (slots in the function's entry block: an alloca where the call is, in a loop, would grow the stack)
        position_slot = cgutils.alloca_once(builder, _I64)
        builder.store(start, position_slot)
        key_slot = cgutils.alloca_once(builder, _BYTE_PTR)
        value_slot = cgutils.alloca_once(builder, _BYTE_PTR)
        fn = _c_function(builder, "PyDict_Next", _I32,
                         [_BYTE_PTR, _I64.as_pointer(), _BYTE_PTR.as_pointer(), _BYTE_PTR.as_pointer()])
        more = builder.call(fn, [builder.inttoptr(mapping_addr, _BYTE_PTR), position_slot, key_slot, value_slot])
        builder.store(builder.load(position_slot), builder.gep(data, [ir.Constant(_I64, 0)]))
        builder.store(builder.ptrtoint(builder.load(key_slot), _I64), builder.gep(data, [ir.Constant(_I64, 1)]))
        builder.store(builder.ptrtoint(builder.load(value_slot), _I64), builder.gep(data, [ir.Constant(_I64, 2)]))
        return builder.icmp_signed("!=", more, ir.Constant(_I32, 0))

    return sig, codegen


@intrinsic
def _type_of(typingctx, obj):
    """The address of ``type(obj)``: the object's ``ob_type`` field, its second word."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        words = builder.inttoptr(args[0], _I64.as_pointer())
        return builder.load(builder.gep(words, [ir.Constant(_I64, 1)]))

    return sig, codegen


@intrinsic
def _float_value(typingctx, obj):
    """``PyFloat_AsDouble(obj)`` of a ``float`` (or subclass): its value, no error possible."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        fn = _c_function(builder, "PyFloat_AsDouble", ir.DoubleType(), [_BYTE_PTR])
        return builder.call(fn, [builder.inttoptr(args[0], _BYTE_PTR)])

    return sig, codegen


def _two_object_call(c_name, c_returns, to_int64):
    """An intrinsic ``(address, address) -> int64`` calling ``c_name(PyObject *, PyObject *)``, whose
    answer (of C type ``c_returns``) ``to_int64(builder, answer)`` widens."""

    def typer(typingctx, first, second):
        def codegen(context, builder, signature, args):
            fn = _c_function(builder, c_name, c_returns, [_BYTE_PTR, _BYTE_PTR])
            return to_int64(builder, builder.call(fn, [builder.inttoptr(a, _BYTE_PTR) for a in args]))

        return types.int64(types.int64, types.int64), codegen

    typer.__name__ = typer.__qualname__ = f"_call_{c_name}"
    return intrinsic(typer)


#: ``PyDict_GetItemWithError(mapping, key)``: the value's address (a borrowed reference), 0 when
#: absent.  An exact ``str`` key in a dict whose keys are all exact ``str`` cannot raise (its hash
#: and comparison are CPython's C code), so 0 means absent; ``PyDict_GetItem`` would save and
#: restore the error state at every call (twice the time)
_dict_get = _two_object_call("PyDict_GetItemWithError", _BYTE_PTR, lambda builder, v: builder.ptrtoint(v, _I64))
#: ``PyUnicode_Compare(left, right)`` of two ``str``: -1, 0 or 1 (code point order)
_str_compare = _two_object_call("PyUnicode_Compare", _I32, lambda builder, v: builder.sext(v, _I64))


def _size_call(c_name):
    """An intrinsic ``address -> int64`` calling ``Py_ssize_t c_name(PyObject *)`` (``PyDict_Size``,
    ``PyTuple_Size``: no error possible on an object of the right type)."""

    def typer(typingctx, obj):
        def codegen(context, builder, signature, args):
            fn = _c_function(builder, c_name, _I64, [_BYTE_PTR])
            return builder.call(fn, [builder.inttoptr(args[0], _BYTE_PTR)])

        return types.int64(types.int64), codegen

    typer.__name__ = typer.__qualname__ = f"_call_{c_name}"
    return intrinsic(typer)


#: ``PyDict_Size(mapping)`` of a dict: its number of items
_dict_size = _size_call("PyDict_Size")


def _reference_call(c_name):
    """An intrinsic ``address -> None`` calling ``void c_name(PyObject *)`` (``Py_IncRef``, ``Py_DecRef``)."""

    def typer(typingctx, obj):
        def codegen(context, builder, signature, args):
            fn = _c_function(builder, c_name, ir.VoidType(), [_BYTE_PTR])
            builder.call(fn, [builder.inttoptr(args[0], _BYTE_PTR)])
            return context.get_dummy_value()

        return types.none(types.int64), codegen

    typer.__name__ = typer.__qualname__ = f"_call_{c_name}"
    return intrinsic(typer)


#: ``Py_IncRef(obj)``: a reference taken (the object lives until :data:`_decref` gives it back)
_incref = _reference_call("Py_IncRef")
#: ``Py_DecRef(obj)``: a reference given back (the object is freed when it was the last)
_decref = _reference_call("Py_DecRef")


@intrinsic
def _list_set(typingctx, target, index, obj):
    """``PyList_SetItem(target, index, obj)`` of an index within the list: the list takes a reference the
    caller gives it (``_incref`` first), and the item it replaces loses one."""
    sig = types.none(types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        target_addr, index, obj = (builder.inttoptr(args[0], _BYTE_PTR), args[1], builder.inttoptr(args[2], _BYTE_PTR))
        builder.call(_c_function(builder, "PyList_SetItem", _I32, [_BYTE_PTR, _I64, _BYTE_PTR]),
                     [target_addr, index, obj])
        return context.get_dummy_value()

    return sig, codegen


@jit(nogil=False)  # (changes reference counts: the GIL stays held)
def release(addresses):
    """``Py_DecRef`` of the object at each address (references the caller took, e.g. :func:`read_ints`'
    ``hold``; the addresses must not be used after)."""
    for i in range(addresses.shape[0]):
        _decref(addresses[i])


@jit(nogil=False)  # (changes reference counts: the GIL stays held)
def fill_list(target, addresses):
    """Item ``i`` of the list at address ``target`` (``addresses.shape[0]`` items, e.g. ``[None] * n``) set to
    the object at ``addresses[i]`` (objects the caller holds; the list takes a reference of its own)."""
    for i in range(addresses.shape[0]):
        _incref(addresses[i])  # (the list's own reference)
        _list_set(target, i, addresses[i])


def _call_with_out(context, builder, signature, args, c_name, returns, slot_type, widen):
    """``c_name(args[0], &slot)`` (the slot zeroed first); ``args[1][0] = widen(builder, slot)``; the call's answer."""
    slot = cgutils.alloca_once(builder, slot_type)  # (in the entry block: see _dict_next)
    builder.store(ir.Constant(slot_type, 0), slot)
    fn = _c_function(builder, c_name, returns, [_BYTE_PTR, slot_type.as_pointer()])
    answer = builder.call(fn, [builder.inttoptr(args[0], _BYTE_PTR), slot])
    data = context.make_array(signature.args[1])(context, builder, args[1]).data
    builder.store(widen(builder, builder.load(slot)), builder.gep(data, [ir.Constant(_I64, 0)]))
    return answer


@intrinsic
def _int_value(typingctx, obj, overflowed):
    """``PyLong_AsLongLongAndOverflow(obj, &flag)`` of an ``int``: its value; ``overflowed[0]`` is set
    nonzero when it does not fit in 64 bits (no error is raised then)."""
    sig = types.int64(types.int64, types.Array(types.int64, 1, "C"))

    def codegen(context, builder, signature, args):
        return _call_with_out(context, builder, signature, args, "PyLong_AsLongLongAndOverflow", _I64, _I32,
                              lambda b, flag: b.sext(flag, _I64))

    return sig, codegen


@jit(nogil=False)  # (calls CPython: the GIL stays held)
def read_run(dicts, offsets, str_type, float_type, float64_type, int_type, judgments, unjudged, raw, looked_up, j_off,
             score, j_score, positions):
    """One pass over the run ``dicts`` (addresses of dicts): the scores, and what the caller looks up.

    Query ``q``'s dict holds ``offsets[q + 1] - offsets[q]`` items, read in its order: the
    score into ``score[offsets[q]:offsets[q + 1]]`` (float64) and, when ``judgments`` is not
    empty, the value the dict at address ``judgments[q]`` holds for the document into ``raw``
    (``unjudged`` when it holds none; the caller checks that its keys are all exactly
    ``str``).  Then the documents at addresses ``looked_up[j_off[q]:j_off[q + 1]]`` (str
    objects) are looked up in the query's dict: their scores go to ``j_score`` (NaN when the
    dict does not hold them).  Keys must be exactly ``str``, scores exactly ``float`` or
    NumPy's float64, judgments exactly ``int`` within int64.  When ``positions`` (int32) is
    not empty, ``positions[i]`` is where item ``i`` is in its dict (``PyDict_Next`` started
    there gives it: :func:`place_tied` reads the ids of tied documents there).  Returns
    :data:`READ_ALL`, or the first query that breaks a rule or whose dict does not hold the
    expected number of items (the caller then reads the dicts its Python way).
    """
    found = np.zeros(3, dtype=np.int64)
    overflowed = np.zeros(1, dtype=np.int64)
    judge = judgments.shape[0] > 0
    record = positions.shape[0] > 0
    for q in range(dicts.shape[0]):
        mapping = dicts[q]
        i = offsets[q]
        end = offsets[q + 1]
        position = 0
        while _dict_next(mapping, position, found):
            at = position
            position = found[0]
            if i == end or _type_of(found[1]) != str_type:
                return q
            if record:
                if at > _INT32_MAX:
                    return q
                positions[i] = at
            kind = _type_of(found[2])
            if kind != float_type and kind != float64_type:
                return q
            score[i] = _float_value(found[2])
            if judge:
                value = _dict_get(judgments[q], found[1])
                if value == 0:
                    raw[i] = unjudged
                elif _type_of(value) != int_type:
                    return q
                else:
                    raw[i] = _int_value(value, overflowed)
                    if overflowed[0] != 0:
                        return q
            i += 1
        if i != end:
            return q
        for t in range(j_off[q], j_off[q + 1]):  # (the dict's keys are all exactly str: no Python code can run)
            value = _dict_get(mapping, looked_up[t])
            j_score[t] = np.nan if value == 0 else _float_value(value)
    return READ_ALL


@jit(nogil=False)  # (calls CPython: the GIL stays held)
def place_tied(need, need_query, need_row, offsets, score, member, dicts, str_type, looked_up, j_score, j_label,
               above, descending, labels, positions):
    """Labels of the judged documents that share their score, ties by document id (trec_eval: descending).

    Judged document ``t = need[u]`` of query ``g = need_query[u]`` (score ``j_score[t]``)
    comes after the ``above[t]`` documents of higher scores and after the tied documents
    whose id comes first (greater ones when ``descending``, smaller ones otherwise):
    documents ``i`` of the query with ``member[i]`` and ``score[i] == j_score[t]``.  Its id
    is the key of row ``need_row[u]`` of the query when ``need_row`` is not empty, else the
    str at address ``looked_up[t]``.  Query ``g``'s ids are the keys of the dict at address
    ``dicts[g]``, ``offsets[g + 1] - offsets[g]`` of them, those of the members exactly
    ``str``: each read at its position (``positions``, recorded by :func:`read_run`; a query's
    members are listed once when ``need_query`` is ascending).  Returns
    :data:`READ_ALL`, or the query of a member whose id is not exactly a ``str`` or whose dict
    holds another number of items: the caller then compares in Python, which names the
    culprit.
    """
    found = np.zeros(3, dtype=np.int64)
    longest = 0
    for g in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[g + 1] - offsets[g])
    keys = np.zeros(longest, dtype=np.int64)  # keys[i]: the id of document lo + i of the query listed last, a member
    listed = np.zeros(longest, dtype=np.int64)  # that query's members: lo + listed[0 .. m - 1]
    m = 0
    walked = -1
    for u in range(need.shape[0]):
        t = need[u]
        g = need_query[u]
        lo = offsets[g]
        hi = offsets[g + 1]
        if g != walked:
            mine = member[lo:hi]
            m = 0
            for i in range(hi - lo):
                if mine[i]:
                    listed[m] = i
                    m += 1
            if _dict_size(dicts[g]) != hi - lo:
                return g
            for r in range(m):  # each member's id read where read_run found it
                i = listed[r]
                if not _dict_next(dicts[g], positions[lo + i], found) or _type_of(found[1]) != str_type:
                    return g
                keys[i] = found[1]
            walked = g
        s = j_score[t]
        doc = keys[need_row[u] - lo] if need_row.shape[0] > 0 else looked_up[t]
        first = 0
        for r in range(m):
            i = listed[r]
            if score[lo + i] == s:
                order = _str_compare(doc, keys[i])
                first += (order < 0) if descending else (order > 0)  # the other id comes first
        labels[lo + above[t] + first] = j_label[t]
    return READ_ALL


@jit(nogil=False)  # (calls CPython: the GIL stays held)
def read_ints(dicts, offsets, int_type, str_type, out, keys, other_ids, hold):
    """The values of the dicts at addresses ``dicts``, each exactly an ``int`` within int64, into ``out``.

    Query ``q``'s dict holds ``offsets[q + 1] - offsets[q]`` items, read in its order.  Returns
    :data:`READ_ALL`, or the first query holding another value (a bool, a float, an int beyond
    int64, ...) or another number of items (the caller then reads the dicts its Python way).
    ``other_ids[0]`` counts the keys read that are not exactly a ``str`` (type ``str_type``);
    when ``keys`` is not empty, ``keys[i]`` is the address of item ``i``'s key: a borrowed
    reference (valid while its dict holds it), or, with ``hold``, a reference taken here
    (``Py_IncRef``, while the GIL is held: no other thread can free the key in between), which
    the caller gives back with :func:`release`.  With ``hold``, a read that does not return
    :data:`READ_ALL` gives back every reference it took.
    """
    found = np.zeros(3, dtype=np.int64)
    overflowed = np.zeros(1, dtype=np.int64)
    with_keys = keys.shape[0] > 0
    status = READ_ALL
    i = 0
    for q in range(dicts.shape[0]):
        i = offsets[q]
        end = offsets[q + 1]
        position = 0
        while _dict_next(dicts[q], position, found):
            position = found[0]
            if i == end or _type_of(found[2]) != int_type:
                status = q
                break
            out[i] = _int_value(found[2], overflowed)
            if overflowed[0] != 0:
                status = q
                break
            other_ids[0] += _type_of(found[1]) != str_type
            if with_keys:
                keys[i] = found[1]
                if hold:
                    _incref(found[1])
            i += 1
        if status == READ_ALL and i != end:
            status = q
        if status != READ_ALL:
            break
    if hold and with_keys and status != READ_ALL:  # keys[:i] hold the references taken
        release(keys[:i])
    return status


# ---- lists of named tuples (ir_measures' runs as rows) --------------------------------------------


def _object_index_call(c_name):
    """An intrinsic ``(address, index) -> address`` calling ``c_name(PyObject *, Py_ssize_t)`` (a borrowed
    reference: ``PyList_GetItem``, ``PyTuple_GetItem``)."""

    def typer(typingctx, obj, index):
        def codegen(context, builder, signature, args):
            fn = _c_function(builder, c_name, _BYTE_PTR, [_BYTE_PTR, _I64])
            return builder.ptrtoint(builder.call(fn, [builder.inttoptr(args[0], _BYTE_PTR), args[1]]), _I64)

        return types.int64(types.int64, types.int64), codegen

    typer.__name__ = typer.__qualname__ = f"_call_{c_name}"
    return intrinsic(typer)


#: ``PyList_GetItem(list, i)`` of an index within the list: its item's address
_list_item = _object_index_call("PyList_GetItem")
#: ``PyTuple_GetItem(row, i)`` of an index below the tuple's size: its item's address
_tuple_item = _object_index_call("PyTuple_GetItem")

#: ``PyTuple_Size(obj)`` of a tuple (or subclass): its number of items
_tuple_size = _size_call("PyTuple_Size")


@intrinsic
def _utf8(typingctx, obj, size):
    """``PyUnicode_AsUTF8AndSize(obj, &size[0])`` of a ``str``: the address of its UTF-8 bytes (held by the
    str, valid while it lives), or 0 when it has none (a lone surrogate: the error is then cleared)."""
    sig = types.int64(types.int64, types.Array(types.int64, 1, "C"))

    def codegen(context, builder, signature, args):
        data = _call_with_out(context, builder, signature, args, "PyUnicode_AsUTF8AndSize", _BYTE_PTR, _I64,
                              lambda b, n: n)
        with builder.if_then(cgutils.is_null(builder, data), likely=False):
            builder.call(_c_function(builder, "PyErr_Clear", ir.VoidType(), []), [])
        return builder.ptrtoint(data, _I64)

    return sig, codegen


@intrinsic
def _copy_bytes(typingctx, source, target, at, count):
    """Copy ``count`` bytes from address ``source`` to ``target[at:at + count]`` (uint8)."""
    sig = types.none(types.int64, types.Array(types.uint8, 1, "C"), types.int64, types.int64)

    def codegen(context, builder, signature, args):
        source_addr, out, at, count = args
        data = context.make_array(signature.args[1])(context, builder, out).data
        cgutils.raw_memcpy(builder, builder.gep(data, [at]), builder.inttoptr(source_addr, _BYTE_PTR), count, 1)
        return context.get_dummy_value()

    return sig, codegen


@jit(nogil=False)  # (calls CPython: the GIL stays held)
def read_rows(rows, n, row_type, query_field, doc_field, value_field, str_type, float_type, float64_type, int_type,
              score, grade, doc_at, doc_len, new_query):
    """One pass over the list ``rows`` (its address; ``n`` items) of tuples of type ``row_type``.

    Row ``i``: its value (field ``value_field``) into ``grade[i]`` when ``grade`` is not
    empty (exactly an ``int`` within int64: a judgment), else into ``score[i]`` (exactly a
    ``float`` or NumPy's float64: a score); the address and length of its document id's
    UTF-8 bytes (field ``doc_field``, exactly a ``str``) into ``doc_at[i]`` and
    ``doc_len[i]``; and ``new_query[i]``, whether its query id (field ``query_field``,
    exactly a ``str``) differs from the row before's (True for row 0).  Returns
    :data:`READ_ALL`, or the first row that breaks a rule (a row of another type or too few
    fields, another type of id or value, an int beyond int64, an id without UTF-8 bytes):
    the caller then reads the rows its Python way.
    """
    size = np.zeros(1, dtype=np.int64)
    overflowed = np.zeros(1, dtype=np.int64)
    ints = grade.shape[0] > 0
    need = max(query_field, doc_field, value_field) + 1
    previous = 0
    for i in range(n):
        row = _list_item(rows, i)
        if _type_of(row) != row_type or _tuple_size(row) < need:
            return i
        query = _tuple_item(row, query_field)
        doc = _tuple_item(row, doc_field)
        value = _tuple_item(row, value_field)
        if _type_of(query) != str_type or _type_of(doc) != str_type:
            return i
        kind = _type_of(value)
        if ints:
            if kind != int_type:
                return i
            grade[i] = _int_value(value, overflowed)
            if overflowed[0] != 0:
                return i
        elif kind != float_type and kind != float64_type:
            return i
        else:
            score[i] = _float_value(value)
        at = _utf8(doc, size)
        if at == 0:
            return i
        doc_at[i] = at
        doc_len[i] = size[0]
        # (two str: PyUnicode_Compare runs no Python code)
        new_query[i] = i == 0 or (query != previous and _str_compare(query, previous) != 0)
        previous = query
    return READ_ALL


@jit(nogil=False)  # (reads bytes the caller's str objects hold: the GIL keeps them alive)
def gather_bytes(doc_at, doc_len, offsets, data):
    """``data[offsets[i]:offsets[i + 1]]`` = the ``doc_len[i]`` bytes at address ``doc_at[i]``."""
    for i in range(doc_at.shape[0]):
        _copy_bytes(doc_at[i], data, offsets[i], doc_len[i])


_available = None


def available() -> bool:
    """Whether the kernels can run here: the JIT is on and objects keep their type in their second word."""
    global _available
    if _available is None:
        import numba

        ok = not numba.config.DISABLE_JIT and sys.implementation.name == "cpython"
        # (a debug build or a free-threaded one lays objects out otherwise)
        ok = ok and not hasattr(sys, "gettotalrefcount") and getattr(sys, "_is_gil_enabled", lambda: True)()
        if ok:  # the layout, checked on objects of the types the kernels tell apart
            import ctypes

            word = ctypes.sizeof(ctypes.c_int64)
            ok = ctypes.sizeof(ctypes.c_void_p) == word and all(
                ctypes.c_int64.from_address(id(p) + word).value == id(type(p)) for p in ("", 0.5, np.float64(0.5), {}))
        _available = ok
    return _available
