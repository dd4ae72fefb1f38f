"""Numba kernels of the readers: tokenising raw bytes, grouping rows, trec_eval's ordering and gain measures.

Every kernel works on plain NumPy arrays (bytes as ``uint8``) and is compiled lazily
through :mod:`rankjit._config`; nothing here runs per row in Python.
"""
from __future__ import annotations

import numpy as np

from rankjit._config import jit
from rankjit._kernels.ranking import TIES_STABLE, for_rule
from rankjit._kernels.strings import hash_bytes, same_bytes, table_size

#: the merge sort compiled for the stable rule (score descending, then position)
_merge_sort_stable = for_rule(TIES_STABLE)["_merge_sort"]

_NL = 10
_CR = 13
_HASH = 35  # '#'


def _space_table():
    t = np.zeros(256, dtype=np.bool_)
    for c in (32, 9, 13, 11, 12):  # isspace() of the C locale, without '\n'
        t[c] = True
    return t


_SPACE = _space_table()


@jit
def tokenize(buf, want, min_fields, max_fields, skip_comments):
    """Split ``buf`` into lines and whitespace-separated fields.

    Blank lines are skipped, and so are lines whose first non-blank character is
    ``#`` when ``skip_comments`` (trec_eval's rule).  For every content line the
    start offset and length of the fields listed in ``want`` are recorded
    (``starts[j, line]``, ``lens[j, line]``).

    Returns ``(n, starts, lens, err_pos, err_nfields)``: ``n`` content lines;
    ``err_pos`` >= 0 is the byte offset of the first line whose number of fields is
    below ``min_fields`` or above ``max_fields`` (``max_fields`` < 0: no limit), and
    ``err_nfields`` its number of fields.
    """
    space = _SPACE
    size = buf.shape[0]
    k = want.shape[0]
    n_lines = 1
    for i in range(size):
        if buf[i] == _NL:
            n_lines += 1
    slot = np.full(64, -1, dtype=np.int64)
    for j in range(k):
        slot[want[j]] = j
    starts = np.full((k, n_lines), -1, dtype=np.int64)  # -1: field absent on the line
    lens = np.zeros((k, n_lines), dtype=np.int64)
    n = 0
    pos = 0
    while pos < size:
        line_start = pos
        while pos < size and space[buf[pos]]:
            pos += 1
        if pos >= size:
            break
        c = buf[pos]
        if c == _NL:
            pos += 1
            continue
        if skip_comments and c == _HASH:
            while pos < size and buf[pos] != _NL:
                pos += 1
            pos += 1
            continue
        field = 0
        while pos < size:
            c = buf[pos]
            if c == _NL:
                break
            f_start = pos
            pos += 1
            while pos < size:
                c = buf[pos]
                if c == _NL or space[c]:
                    break
                pos += 1
            if field < 64:
                j = slot[field]
                if j >= 0:
                    starts[j, n] = f_start
                    lens[j, n] = pos - f_start
            field += 1
            while pos < size and space[buf[pos]]:
                pos += 1
        if field < min_fields or (max_fields >= 0 and field > max_fields):
            return n, starts, lens, line_start, field
        n += 1
        pos += 1
    return n, starts, lens, -1, 0


@jit
def _blanks_then_field(buf, j):
    """Whether ``buf[j:]`` holds blanks (at least one; not ``\\r``) and then a field on the same line."""
    size = buf.shape[0]
    if j == size or not _SPACE[buf[j]] or buf[j] == _CR:
        return False
    while j < size and _SPACE[buf[j]] and buf[j] != _CR:
        j += 1
    return j < size and buf[j] != _NL and buf[j] != _CR


@jit
def _fields_ahead(buf, i):
    """``(fields, end)``: the fields of ``buf[i:end]``, up to the next ``\\n`` or sure line-end ``\\r``.

    A sure line end is a ``\\r`` not followed by blanks and then a field; the others
    count as blanks here.
    """
    size = buf.shape[0]
    n = 0
    in_field = False
    while i < size:
        c = buf[i]
        if c == _NL:
            break
        if c == _CR:
            in_field = False
            if not (i + 1 < size and buf[i + 1] == _NL) and not _blanks_then_field(buf, i + 1):
                break
        elif _SPACE[c]:
            in_field = False
        elif not in_field:
            n += 1
            in_field = True
        i += 1
    return n, i


@jit
def cr_line_ends(buf, every_cr, fields):
    """Positions of the carriage returns (``\\r``) of ``buf`` that end a line.

    ``\\r\\n`` ends a line at its ``\\n`` (the ``\\r`` is then a blank).  With
    ``every_cr`` (a file without ``\\n``: old Mac line ends) every other ``\\r`` ends
    a line.  In a file with ``\\n`` line ends, a lone ``\\r`` followed by blanks and
    then a field is a blank between two fields (trec_eval's reading) unless

    * no field precedes it on its line, or its line is a comment, or
    * ``fields`` > 0, and its line holds a whole record (``fields`` fields) before it
      and at least ``fields`` fields follow it up to the next ``\\n`` or sure line-end
      ``\\r`` (one not followed by blanks and a field);

    then it ends the line; any other ``\\r`` ends a line too.  So no mix of line ends
    joins two whole records into one line, or a record to a comment.
    """
    size = buf.shape[0]
    n_cr = 0  # lone \r: not followed by \n
    for i in range(size):
        if buf[i] == _CR and (i + 1 == size or buf[i + 1] != _NL):
            n_cr += 1
    out = np.empty(n_cr, dtype=np.int64)
    if n_cr == 0:  # \r\n line ends only
        return out
    n = 0
    if every_cr:
        for i in range(size):
            if buf[i] == _CR:
                out[n] = i
                n += 1
        return out
    # mixed line ends: one pass, counting the fields of each line
    space = _SPACE
    n_fields = 0  # fields of the current line so far
    comment = False  # its first field starts with '#'
    in_field = False
    seg_end = -1  # the fields ahead, up to seg_end, once counted (linear time for many \r on a line)
    seg_fields = 0  # fields from the line's start to seg_end
    for i in range(size):
        c = buf[i]
        if c == _NL:
            n_fields = 0
            comment = in_field = False
        elif c == _CR:
            in_field = False
            if i + 1 < size and buf[i + 1] == _NL:
                continue  # \r\n: the \n ends the line
            if n_fields > 0 and _blanks_then_field(buf, i + 1):
                if i >= seg_end:
                    ahead, seg_end = _fields_ahead(buf, i + 1)
                    seg_fields = n_fields + ahead
                ahead = seg_fields - n_fields
                if not comment and (fields <= 0 or n_fields < fields or ahead < fields):
                    continue  # a blank
                seg_fields = ahead  # the next line's fields up to seg_end
            out[n] = i
            n += 1
            n_fields = 0
            comment = False
        elif space[c]:
            in_field = False
        elif not in_field:
            if n_fields == 0 and c == _HASH:
                comment = True
            n_fields += 1
            in_field = True
    return out[:n]


@jit
def hash_column(data, off):
    """:func:`hash_bytes` of every string of an offsets/data string array."""
    n = off.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        out[i] = hash_bytes(data, off[i], off[i + 1])
    return out


@jit
def count_lines(buf, lo, hi):
    """Number of newlines in ``buf[lo:hi]``."""
    n = 0
    for i in range(lo, hi):
        if buf[i] == _NL:  # vectorised count
            n += 1
    return n


@jit
def line_chunks(buf, n_chunks):
    """Split ``buf`` into at most ``n_chunks`` byte ranges of whole lines.

    Returns ``(bounds, row_base)``: chunk ``k`` is ``buf[bounds[k]:bounds[k + 1]]``
    and starts after ``row_base[k]`` newlines (an upper bound of the content lines
    before it); ``row_base[-1]`` bounds the content lines of the whole buffer.
    """
    size = buf.shape[0]
    bounds = np.empty(n_chunks + 1, dtype=np.int64)
    bounds[0] = 0
    m = 1
    for k in range(1, n_chunks):
        p = max(size * k // n_chunks, bounds[m - 1])
        while p < size and buf[p - 1] != _NL:  # move to the start of a line
            p += 1
        if p > bounds[m - 1] and p < size:
            bounds[m] = p
            m += 1
    bounds[m] = size
    bounds = bounds[: m + 1]
    row_base = np.zeros(m + 1, dtype=np.int64)
    for k in range(m):
        row_base[k + 1] = row_base[k] + count_lines(buf, bounds[k], bounds[k + 1])
    row_base[m] += 1  # a last line without a newline
    return bounds, row_base


@jit
def _read_chunk(buf, lo, hi, row0, f_qid, f_doc, f_num, f_tag, min_fields, max_fields, float_num,
                q_data, q_end, q_runs, d_data, d_end, d_hash, fnum, inum, bad, info):
    """Lines of ``buf[lo:hi]`` into rows ``row0, row0 + 1, ...`` of the output arrays.

    A line of fewer than ``min_fields`` fields, or of more than ``max_fields`` (``max_fields`` < 0: no
    limit), stops the chunk: ``info[5:7]`` say where and how many.

    String bytes are written from position ``lo`` of ``q_data`` / ``d_data`` on (a
    chunk's fields never take more bytes than the chunk); ``q_end[r + 1]`` /
    ``d_end[r + 1]`` are the end positions of row ``r``'s strings (its start is the
    previous row's end, or ``lo`` for the chunk's first row).  Run starts of equal
    query ids go to ``q_runs[row0:]``, rows whose number the fast parser left to
    ``bad[row0:, 0]`` with the field's start and length in ``bad[:, 1:]``.
    ``info`` receives ``(rows, runs, n_bad, tag_start, tag_len, err_pos, err_nfields)``.

    Long because it reads each line once, byte by byte: the field cursors, the run test against
    the previous row's query id and the write cursors of the string bytes are loop state that
    helpers would have to take and return on every line; the number parsers and the hash are
    helpers (``parse_float_at``, ``parse_int_at``, ``hash_bytes``).
    """
    space = _SPACE
    q_pos = lo  # write cursors in q_data / d_data
    d_pos = lo
    prev_s = -1  # previous row's query id in q_data
    prev_e = -1
    n_runs = 0
    n_bad = 0
    tag_s = -1
    tag_e = -1
    n = 0
    pos = lo
    while pos < hi:
        line_start = pos
        while pos < hi and space[buf[pos]]:
            pos += 1
        if pos >= hi:
            break
        c = buf[pos]
        if c == _NL:
            pos += 1
            continue
        if c == _HASH:
            while pos < hi and buf[pos] != _NL:
                pos += 1
            pos += 1
            continue
        q_s = q_e = d_s = d_e = v_s = v_e = t_s = t_e = 0
        field = 0
        while pos < hi:
            f_start = pos
            pos += 1
            while pos < hi:
                c = buf[pos]
                if c <= 32 and (c == _NL or space[c]):  # separators are all <= ' '
                    break
                pos += 1
            if field == f_qid:
                q_s, q_e = f_start, pos
            elif field == f_doc:
                d_s, d_e = f_start, pos
            elif field == f_num:
                v_s, v_e = f_start, pos
            elif field == f_tag:
                t_s, t_e = f_start, pos
            field += 1
            while pos < hi and space[buf[pos]]:
                pos += 1
            if pos >= hi or buf[pos] == _NL:
                break
        if field < min_fields or (max_fields >= 0 and field > max_fields):
            info[0] = n
            info[1] = n_runs
            info[2] = n_bad
            info[3] = tag_s
            info[4] = tag_e - tag_s
            info[5] = line_start
            info[6] = field
            return
        row = row0 + n
        # query id: copy, and a new run unless it equals the previous row's
        m = q_e - q_s
        same = m == prev_e - prev_s
        for j in range(m):
            b = buf[q_s + j]
            if same and q_data[prev_s + j] != b:
                same = False
            q_data[q_pos + j] = b
        if not same:
            q_runs[row0 + n_runs] = row
            n_runs += 1
        prev_s = q_pos
        prev_e = q_pos + m
        q_pos += m
        q_end[row + 1] = q_pos
        m = d_e - d_s
        # a loop over local slices (no wrap-around test: LLVM makes it a memcpy); slice assignment
        # would compile a shape check whose error message alone costs ~0.8 s of compiling
        dst = d_data[d_pos:d_pos + m]
        src = buf[d_s:d_e]
        for j in range(m):
            dst[j] = src[j]
        d_pos += m
        d_end[row + 1] = d_pos
        d_hash[row] = hash_bytes(buf, d_s, d_e)
        if float_num:
            fnum[row], ok = parse_float_at(buf, v_s, v_e)
        else:
            inum[row], ok = parse_int_at(buf, v_s, v_e)
        if not ok:
            bad[row0 + n_bad, 0] = row
            bad[row0 + n_bad, 1] = v_s
            bad[row0 + n_bad, 2] = v_e - v_s
            n_bad += 1
        tag_s, tag_e = t_s, t_e
        n += 1
        pos += 1
    info[0] = n
    info[1] = n_runs
    info[2] = n_bad
    info[3] = tag_s
    info[4] = tag_e - tag_s
    info[5] = -1
    info[6] = 0


@jit
def read_pairs(k_lo, k_hi, buf, bounds, row_base, f_qid, f_doc, f_num, f_tag, min_fields, max_fields, float_num,
               q_data, q_end, q_runs, d_data, d_end, d_hash, fnum, inum, bad, info):
    """:func:`_read_chunk` on the chunks ``k_lo .. k_hi - 1`` of ``bounds`` (disjoint output ranges).

    The caller runs ranges of chunks on threads (:func:`rankjit._config.run_blocks`).
    """
    for k in range(k_lo, k_hi):
        _read_chunk(buf, bounds[k], bounds[k + 1], row_base[k], f_qid, f_doc, f_num, f_tag, min_fields, max_fields,
                    float_num, q_data, q_end, q_runs, d_data, d_end, d_hash, fnum, inum, bad, info[k])


_POW10 = np.array([10.0 ** i for i in range(23)], dtype=np.float64)


@jit
def parse_float_at(buf, p, end):
    """Parse ``buf[p:end]`` as a decimal float: ``(value, ok)``.

    A value whose digits fit in 2**53 and whose decimal exponent is within +-22 is
    one correctly rounded IEEE multiplication or division (Clinger's fast path).
    Anything else (more digits, large exponents, inf/nan, malformed text) returns
    ``ok = False``; the caller then uses a full parser.
    """
    pow10 = _POW10
    limit = np.uint64(9007199254740992)  # 2**53
    neg = False
    if p < end and (buf[p] == 43 or buf[p] == 45):
        neg = buf[p] == 45
        p += 1
    mant = np.uint64(0)
    digits = 0
    exp10 = 0
    seen = False
    while p < end and 48 <= buf[p] <= 57:
        if mant != 0 or buf[p] != 48:  # leading zeros are not significant digits
            digits += 1
            if digits > 19:
                return 0.0, False
            mant = mant * np.uint64(10) + np.uint64(buf[p] - 48)
        seen = True
        p += 1
    if p < end and buf[p] == 46:
        p += 1
        while p < end and 48 <= buf[p] <= 57:
            if mant == 0 and buf[p] == 48:
                exp10 -= 1
            else:
                digits += 1
                if digits > 19:
                    return 0.0, False
                mant = mant * np.uint64(10) + np.uint64(buf[p] - 48)
                exp10 -= 1
            seen = True
            p += 1
    if p < end and (buf[p] == 101 or buf[p] == 69):
        p += 1
        eneg = False
        if p < end and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        e = 0
        edig = 0
        while p < end and 48 <= buf[p] <= 57 and edig < 6:
            e = e * 10 + (np.int64(buf[p]) - 48)
            edig += 1
            p += 1
        if edig == 0:
            return 0.0, False
        exp10 += -e if eneg else e
    if not seen or p != end or mant > limit:
        return 0.0, False
    if mant == 0:
        v = 0.0
    elif exp10 == 0:
        v = float(mant)
    elif 0 < exp10 <= 22:
        v = float(mant) * pow10[exp10]
    elif -22 <= exp10 < 0:
        v = float(mant) / pow10[-exp10]
    else:
        return 0.0, False
    return (-v if neg else v), True


@jit
def parse_floats(buf, starts, lens):
    """Decimal strings to float64 (:func:`parse_float_at` on every field).

    Returns ``(values, ok)``; ``ok[i] = False`` marks fields left to a full parser
    (``values[i]`` is then 0).
    """
    n = starts.shape[0]
    out = np.empty(n, dtype=np.float64)
    ok = np.ones(n, dtype=np.bool_)
    for i in range(n):
        out[i], ok[i] = parse_float_at(buf, starts[i], starts[i] + lens[i])
    return out, ok


@jit
def parse_int_at(buf, p, end):
    """Parse ``buf[p:end]`` as a decimal integer (at most 18 digits): ``(value, ok)``."""
    neg = False
    if p < end and (buf[p] == 43 or buf[p] == 45):
        neg = buf[p] == 45
        p += 1
    if p >= end or end - p > 18:
        return np.int64(0), False
    v = np.int64(0)
    while p < end:
        c = np.int64(buf[p])
        if c < 48 or c > 57:
            return np.int64(0), False
        v = v * 10 + (c - 48)
        p += 1
    return (-v if neg else v), True


@jit
def parse_ints(buf, starts, lens, any_spelling=False):
    """Decimal integers to int64: ``(values, ok)``, ``ok[i] = False`` where field ``i`` is not one.

    Plain digits (:func:`parse_int_at`: the fast path), or with ``any_spelling`` every
    integral spelling :func:`parse_integral_at` takes (``1.0``, ``2e1``, 19 digits).
    """
    n = starts.shape[0]
    out = np.zeros(n, dtype=np.int64)
    ok = np.ones(n, dtype=np.bool_)
    if any_spelling:  # a loop per parser: no test per field
        for i in range(n):
            out[i], ok[i] = parse_integral_at(buf, starts[i], starts[i] + lens[i])
    else:
        for i in range(n):
            out[i], ok[i] = parse_int_at(buf, starts[i], starts[i] + lens[i])
    return out, ok


_I64_MAX = np.uint64(9223372036854775807)


@jit
def parse_integral_at(buf, p, end):
    """Parse ``buf[p:end]`` as any decimal spelling of an int64 integer: ``(value, ok)``.

    Besides plain digits (of any length, within int64) this takes decimal and
    exponent spellings whose value is an integer (``1.0``, ``+2.``, ``1e0``,
    ``25E-1`` is not one); exact, in integer arithmetic.  ``ok = False`` otherwise.
    """
    neg = False
    if p < end and (buf[p] == 43 or buf[p] == 45):
        neg = buf[p] == 45
        p += 1
    i0 = p
    while p < end and 48 <= buf[p] <= 57:
        p += 1
    i1 = p
    f0 = f1 = p
    if p < end and buf[p] == 46:
        p += 1
        f0 = p
        while p < end and 48 <= buf[p] <= 57:
            p += 1
        f1 = p
    if i1 == i0 and f1 == f0:
        return np.int64(0), False
    e = 0
    if p < end and (buf[p] == 101 or buf[p] == 69):
        p += 1
        eneg = False
        if p < end and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        e0 = p
        while p < end and 48 <= buf[p] <= 57 and p - e0 < 6:
            e = e * 10 + (np.int64(buf[p]) - 48)
            p += 1
        if p == e0:
            return np.int64(0), False
        if eneg:
            e = -e
    if p != end:
        return np.int64(0), False
    while f1 > f0 and buf[f1 - 1] == 48:  # trailing zeros of the fraction
        f1 -= 1
    # the value is the digits i0:i1 then f0:f1, times 10 ** k
    k = e - (f1 - f0)
    while i0 < i1 and buf[i0] == 48:  # leading zeros
        i0 += 1
    if f1 == f0:
        while i1 > i0 and k < 0 and buf[i1 - 1] == 48:  # trailing zeros of the integer part
            i1 -= 1
            k += 1
    n_digits = (i1 - i0) + (f1 - f0)
    if n_digits == 0:
        return np.int64(0), True
    if k < 0 or n_digits + k > 19:
        return np.int64(0), False
    mant = np.uint64(0)
    for q in range(i0, i1):
        mant = mant * np.uint64(10) + np.uint64(buf[q] - 48)
    for q in range(f0, f1):
        mant = mant * np.uint64(10) + np.uint64(buf[q] - 48)
    for _ in range(k):
        mant = mant * np.uint64(10)
    # 19 digits fit in uint64; int64 takes up to 2**63 - 1 (2**63 when negative)
    if mant > _I64_MAX + np.uint64(1 if neg else 0):
        return np.int64(0), False
    if neg:
        return -np.int64(mant - np.uint64(1)) - np.int64(1), True
    return np.int64(mant), True


@jit
def gather_bytes(buf, starts, lens, out_offsets):
    """Copy the byte slices ``buf[starts[i]:starts[i]+lens[i]]`` end to end."""
    n = starts.shape[0]
    out = np.empty(out_offsets[n], dtype=np.uint8)
    for i in range(n):
        s = starts[i]
        o = out_offsets[i]
        for j in range(lens[i]):
            out[o + j] = buf[s + j]
    return out


@jit
def concat_strings(a_data, a_off, b_data, b_off, sep):
    """Row-wise ``a + sep + b`` of two offsets/data string arrays (a join key)."""
    n = a_off.shape[0] - 1
    out_off = np.empty(n + 1, dtype=np.int64)
    out_off[0] = 0
    for i in range(n):
        out_off[i + 1] = out_off[i] + (a_off[i + 1] - a_off[i]) + 1 + (b_off[i + 1] - b_off[i])
    out = np.empty(out_off[n], dtype=np.uint8)
    for i in range(n):
        o = out_off[i]
        for j in range(a_off[i], a_off[i + 1]):
            out[o] = a_data[j]
            o += 1
        out[o] = sep
        o += 1
        for j in range(b_off[i], b_off[i + 1]):
            out[o] = b_data[j]
            o += 1
    return out_off, out


@jit
def is_ascii_number_chars(buf, starts, lens):
    """Index of the first field holding a byte that cannot be part of a number, else -1."""
    n = starts.shape[0]
    for i in range(n):
        s = starts[i]
        for j in range(lens[i]):
            c = buf[s + j]
            if c >= 128 or c < 33:
                return i
    return -1


@jit
def group_rows(codes, n_groups):
    """Counting sort of rows by group code (``-1``: row dropped).

    Returns ``(offsets, perm)``: ``perm`` lists the kept rows group by group, in their
    original order within a group.
    """
    counts = np.zeros(n_groups + 1, dtype=np.int64)
    for i in range(codes.shape[0]):
        c = codes[i]
        if c >= 0:
            counts[c + 1] += 1
    for g in range(n_groups):
        counts[g + 1] += counts[g]
    offsets = counts.copy()
    fill = counts[:-1].copy()
    perm = np.empty(offsets[n_groups], dtype=np.int64)
    for i in range(codes.shape[0]):
        c = codes[i]
        if c >= 0:
            perm[fill[c]] = i
            fill[c] += 1
    return offsets, perm


@jit
def _cmp_bytes(data, off, a, b):
    """strcmp of strings ``a`` and ``b`` of an offsets/data string array."""
    sa = off[a]
    la = off[a + 1] - sa
    sb = off[b]
    lb = off[b + 1] - sb
    m = la if la < lb else lb
    for j in range(m):
        ca = data[sa + j]
        cb = data[sb + j]
        if ca != cb:
            return -1 if ca < cb else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1


@jit
def repeated_strings(offsets, rows, data, off, hashes, keep, stop_at_first):
    """The strings listed twice inside a group: group ``g`` is ``rows[offsets[g]:offsets[g + 1]]``.

    Returns the first ``(group, row)`` whose string an earlier row of its group holds (``row``:
    the later listing), else ``(-1, -1)``.  With ``stop_at_first`` that is all; otherwise
    ``keep[row] = False`` for every listing that its group repeats later (the last listing
    wins, as a dict's update).  ``hashes[row]`` is the :func:`hash_bytes` of string ``row``.
    One open-addressing table per group (linear probing, load <= 1/2), where a later
    listing takes the slot of the earlier one.
    """
    first_g = -1
    first_row = -1
    table = np.empty(16, dtype=np.int64)
    for g in range(offsets.shape[0] - 1):
        lo = offsets[g]
        hi = offsets[g + 1]
        if hi - lo < 2:
            continue
        size = table_size(hi - lo)
        if table.shape[0] < size:
            table = np.empty(size, dtype=np.int64)
        table[:size] = -1
        mask = np.uint64(size - 1)
        for t in range(lo, hi):
            row = rows[t]
            h = hashes[row]
            slot = np.int64(h & mask)
            while table[slot] >= 0:
                other = rows[table[slot]]
                if hashes[other] == h and same_bytes(data, off, other, data, off, row):
                    if first_g < 0:
                        first_g = g
                        first_row = row
                        if stop_at_first:
                            return first_g, first_row
                    keep[other] = False
                    break
                slot = (slot + 1) & (size - 1)
            table[slot] = t  # (a later listing takes the earlier one's slot)
    return first_g, first_row


@jit
def rank_and_label(g_lo, g_hi, b_start, g_off, g_blocks, out_off, score, r_data, r_off, r_hash,
                   q_off, q_rows, q_data, q_doff, q_hash, grades, rows_out, scores_out, labels_out, dup,
                   seg, tmp, table):
    """trec_eval's ranking of the run rows of queries ``g_lo .. g_hi - 1``, cut and labelled.

    The run is made of blocks of consecutive rows of one query (``b_start``: block
    starts, then the number of rows); query ``g`` owns blocks
    ``g_blocks[g_off[g]:g_off[g + 1]]`` in file order.  Its rows are ranked by score
    descending, then docno descending (``r_data`` / ``r_off``, byte order), cut to
    ``out_off[g + 1] - out_off[g]`` rows and written to ``rows_out`` / ``scores_out``
    from ``out_off[g]`` on; ``labels_out`` gets the judgment (``grades[qrow]``) of each
    kept document judged for the query (``q_rows[q_off[g]:q_off[g + 1]]``), 0 if none.
    ``r_hash`` / ``q_hash`` are the :func:`hash_bytes` of the docnos.  A document kept
    twice sets ``dup[g]`` to the row of its second occurrence (``dup`` starts at -1).
    Scratch: ``seg`` and ``tmp`` hold the rows of the largest query, ``table`` at least
    ``table_size(2 * its kept rows)`` entries.  Queries are independent: the caller runs
    ranges of them on threads (:func:`rankjit._config.run_blocks`), with the same result
    for any thread count.
    """
    for g in range(g_lo, g_hi):  # (one function with its loop body: a helper would be optimised twice)
        m = 0
        for t in range(g_off[g], g_off[g + 1]):
            b = g_blocks[t]
            m += b_start[b + 1] - b_start[b]
        if m == 0:
            continue
        # seg[:m]: the query's rows in file order
        k = 0
        for t in range(g_off[g], g_off[g + 1]):
            b = g_blocks[t]
            for r in range(b_start[b], b_start[b + 1]):
                seg[k] = r
                k += 1
        presorted = True  # runs are usually written in rank order: skip the sort
        for i in range(1, m):
            if score[seg[i]] > score[seg[i - 1]]:
                presorted = False
                break
        ranked = seg
        if not presorted:
            # score descending, equal scores in file order (rows ascending): a stable merge sort
            # (the stable rule reads no labels: the docno bytes stand in, uint8 like the engine's labels, so
            # that this is the very kernel the engine's stable variant compiles; np.int64: one signature)
            _merge_sort_stable(score, r_data, seg, np.int64(m), np.int64(TIES_STABLE), tmp)
        # ties: docno descending (insertion sort inside each run of equal scores)
        i = 0
        while i < m:
            j = i + 1
            while j < m and score[ranked[j]] == score[ranked[i]]:
                j += 1
            if j - i > 1:
                for a in range(i + 1, j):
                    x = ranked[a]
                    b = a - 1
                    while b >= i and _cmp_bytes(r_data, r_off, ranked[b], x) < 0:
                        ranked[b + 1] = ranked[b]
                        b -= 1
                    ranked[b + 1] = x
            i = j
        lo = out_off[g]
        keep = out_off[g + 1] - lo  # min(m, max_docs)
        for i in range(keep):
            rows_out[lo + i] = ranked[i]
            scores_out[lo + i] = score[ranked[i]]
            labels_out[lo + i] = 0
        # the kept documents into an open-addressing table: a repeat is a duplicate;
        # load <= 1/4 (4 * keep int32 slots, 16 KB for 1000 documents: L1) keeps probes short
        size = table_size(2 * keep)
        for i in range(size):
            table[i] = -1
        mask = np.uint64(size - 1)
        for i in range(keep):
            row = ranked[i]
            h = r_hash[row]
            slot = np.int64(h & mask)
            while table[slot] >= 0:
                other = ranked[table[slot]]
                # equal 64-bit hashes are almost always equal strings: compare bytes then
                if r_hash[other] == h and same_bytes(r_data, r_off, other, r_data, r_off, row):
                    dup[g] = row
                    break
                slot = (slot + 1) & (size - 1)
            if dup[g] >= 0:
                break
            table[slot] = i
        if dup[g] >= 0:
            continue  # the caller raises
        # each judged document of the query looked up among the kept ones
        for t in range(q_off[g], q_off[g + 1]):
            qrow = q_rows[t]
            h = q_hash[qrow]
            slot = np.int64(h & mask)
            while table[slot] >= 0:
                i = table[slot]
                if r_hash[ranked[i]] == h and same_bytes(r_data, r_off, ranked[i], q_data, q_doff, qrow):
                    labels_out[lo + i] = grades[qrow]
                    break
                slot = (slot + 1) & (size - 1)


@jit
def string_runs(data, off):
    """Start of every run of equal consecutive strings, plus the number of strings."""
    n = off.shape[0] - 1
    starts = np.empty(n + 1, dtype=np.int64)
    count = 0
    for i in range(n):
        if i == 0 or _cmp_bytes(data, off, i, i - 1) != 0:
            starts[count] = i
            count += 1
    starts[count] = n
    return starts[: count + 1]


@jit
def run_boundaries(codes):
    """Start of every run of equal consecutive codes, plus ``len(codes)``."""
    n = codes.shape[0]
    count = 1 if n > 0 else 0
    for i in range(1, n):
        if codes[i] != codes[i - 1]:
            count += 1
    out = np.empty(count + 1, dtype=np.int64)
    if n == 0:
        out[0] = 0
        return out
    out[0] = 0
    c = 1
    for i in range(1, n):
        if codes[i] != codes[i - 1]:
            out[c] = i
            c += 1
    out[count] = n
    return out


# ---- trec_eval's gain measures (G, ndcg_rel, Rndcg, dcg): the loops of rankjit.io._trec_loops --------


@jit
def _next_ideal(j, used, lo, hi, e_count, e_gain):
    """One position down the ideal ranking: ``(j, used, gain)``, ``used`` documents taken from entry ``j``.

    Before the first step ``j`` is -1 (trec_eval starts on the last entry of the sorted list
    with no document taken: its gain decides whether the loops start); past the entries the
    gain is 0.
    """
    used += 1
    while j < hi - lo and used > (e_count[lo + j] if j >= 0 else 0):
        used = 1
        j += 1
    return j, used, (e_gain[lo + j] if j < hi - lo else 0.0)


@jit
def _gain_walk(which, offsets, doc_gain, e_off, e_gain, e_count, top_gain, num_rel, out, ideal_out):
    """G (which 0), ndcg_rel (1), Rndcg (2) or DCG (3: DCG in ``out``, the ideal DCG in ``ideal_out``)
    of every query: trec_eval's three loops (results and ideal together while the ideal gain is > 0,
    the rest of the results, the rest of the ideal).

    The sums are numpy float64 from the start, so that a division by 0 gives trec_eval's inf or
    NaN interpreted too (NUMBA_DISABLE_JIT=1), as compiled (error_model="numpy").

    Long because each of the four keeps its measure's own state through trec_eval's three loops
    (m_G.c, m_ndcg_rel.c, m_Rndcg.c, m_ndcg.c), written out in trec_eval's order of floating-point
    operations so that every value is trec_eval's to the last bit; one function, so that the
    four compile once (``which`` picks the branch).
    """
    for q in range(offsets.shape[0] - 1):
        start = offsets[q]
        n = offsets[q + 1] - start
        lo = e_off[q]
        hi = e_off[q + 1]
        j = -1
        used = 0
        ideal = top_gain[q]
        i = 0
        if which == 0:
            res_g = np.float64(0.0)
            sum_res = np.float64(0.0)
            sum_ideal = np.float64(0.0)
            sum_cost = np.float64(0.0)
            while i < n and ideal > 0.0:
                g = doc_gain[start + i]
                sum_res += g
                j, used, ideal = _next_ideal(j, used, lo, hi, e_count, e_gain)
                if ideal > 0.0:
                    sum_ideal += ideal
                if ideal >= 1.0:
                    sum_cost += ideal
                else:
                    sum_cost += 1.0
                if g != 0.0:
                    res_g += g / np.log2(2.0 + sum_cost - sum_res)
                i += 1
            while i < n:
                g = doc_gain[start + i]
                sum_res += g
                sum_cost += 1.0
                if g != 0.0:
                    res_g += g / np.log2(2.0 + sum_cost - sum_res)
                i += 1
            while ideal > 0.0:
                j, used, ideal = _next_ideal(j, used, lo, hi, e_count, e_gain)
                if ideal > 0.0:
                    sum_ideal += ideal
            if sum_ideal > 0.0:
                out[q] = res_g / sum_ideal
        elif which == 1:
            res_dcg = np.float64(0.0)
            ideal_dcg = np.float64(0.0)
            total = np.float64(0.0)
            n_rel_ret = 0
            n_rel = 0
            while i < n and ideal > 0.0:
                g = doc_gain[start + i]
                if g != 0.0:
                    res_dcg += g / np.log2(float(i + 2))
                j, used, ideal = _next_ideal(j, used, lo, hi, e_count, e_gain)
                if ideal > 0.0:
                    n_rel += 1
                    ideal_dcg += ideal / np.log2(float(i + 2))
                if g > 0.0:
                    total += res_dcg / ideal_dcg
                    n_rel_ret += 1
                i += 1
            while i < n:
                g = doc_gain[start + i]
                if g != 0.0:
                    res_dcg += g / np.log2(float(i + 2))
                if g > 0.0:
                    total += res_dcg / ideal_dcg
                    n_rel_ret += 1
                i += 1
            while ideal > 0.0:
                j, used, ideal = _next_ideal(j, used, lo, hi, e_count, e_gain)
                if ideal > 0.0:
                    n_rel += 1
                    ideal_dcg += ideal / np.log2(float(i + 2))
                i += 1
            total += float(n_rel - n_rel_ret) * res_dcg / ideal_dcg
            if total > 0.0:
                out[q] = total / n_rel
        elif which == 3:
            # m_ndcg.c: DCG = sum_i g_i / log2(i + 1) over the ranking, the ideal's over its gains > 0
            res_dcg = np.float64(0.0)
            ideal_dcg = np.float64(0.0)
            while i < n and ideal > 0.0:
                g = doc_gain[start + i]
                if g != 0.0:
                    res_dcg += g / np.log2(float(i + 2))
                j, used, ideal = _next_ideal(j, used, lo, hi, e_count, e_gain)
                if ideal > 0.0:
                    ideal_dcg += ideal / np.log2(float(i + 2))
                i += 1
            while i < n:
                g = doc_gain[start + i]
                if g != 0.0:
                    res_dcg += g / np.log2(float(i + 2))
                i += 1
            while ideal > 0.0:
                j, used, ideal = _next_ideal(j, used, lo, hi, e_count, e_gain)
                if ideal > 0.0:
                    ideal_dcg += ideal / np.log2(float(i + 2))
                i += 1
            out[q] = res_dcg
            ideal_out[q] = ideal_dcg
        else:
            if num_rel[q] == 0:
                continue
            res_dcg = np.float64(0.0)
            ideal_dcg = np.float64(0.0)
            total = np.float64(0.0)
            changes = 0
            old = ideal
            while i < n and ideal > 0.0:
                g = doc_gain[start + i]
                j, used, ideal = _next_ideal(j, used, lo, hi, e_count, e_gain)
                if old != ideal:
                    if ideal_dcg > 0.0:
                        total += res_dcg / ideal_dcg
                        changes += 1
                    old = ideal
                if g != 0.0:
                    res_dcg += g / np.log2(float(i + 2))
                if ideal > 0.0:
                    ideal_dcg += ideal / np.log2(float(i + 2))
                i += 1
            if i < n:
                while i < n:
                    g = doc_gain[start + i]
                    if g != 0.0:
                        res_dcg += g / np.log2(float(i + 2))
                    i += 1
                if ideal_dcg > 0.0:
                    total += res_dcg / ideal_dcg
                    changes += 1
            while ideal > 0.0:
                j, used, ideal = _next_ideal(j, used, lo, hi, e_count, e_gain)
                if old != ideal:
                    if ideal_dcg > 0.0:
                        total += res_dcg / ideal_dcg
                        changes += 1
                    old = ideal
                if ideal > 0.0:
                    ideal_dcg += ideal / np.log2(float(i + 2))
                i += 1
            out[q] = total / changes
