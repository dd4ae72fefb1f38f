"""Numba kernels of the readers: tokenising raw bytes, grouping rows, trec_eval's ordering.

Every kernel works on plain NumPy arrays (bytes as ``uint8``) and is compiled lazily
through :mod:`rankjit._config`; nothing here runs per row in Python.
"""
from __future__ import annotations

import numpy as np

from rankjit._config import jit

_NL = 10
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


_POW10 = np.array([10.0 ** i for i in range(23)], dtype=np.float64)


@jit
def parse_floats(buf, starts, lens):
    """Decimal strings to float64, exactly rounded on the fast path.

    A value whose digits fit in 2**53 and whose decimal exponent is within +-22 is
    one correctly rounded IEEE multiplication or division (Clinger's fast path).
    Anything else (more digits, large exponents, inf/nan, malformed text) gets
    ``ok[i] = False`` and is parsed by the caller with a full parser.
    """
    n = starts.shape[0]
    out = np.empty(n, dtype=np.float64)
    ok = np.ones(n, dtype=np.bool_)
    pow10 = _POW10
    limit = np.uint64(9007199254740992)  # 2**53
    for i in range(n):
        p = starts[i]
        end = p + lens[i]
        neg = False
        if p < end and (buf[p] == 43 or buf[p] == 45):
            neg = buf[p] == 45
            p += 1
        mant = np.uint64(0)
        digits = 0
        exp10 = 0
        good = True
        seen = False
        while p < end and 48 <= buf[p] <= 57:
            if mant == 0 and buf[p] == 48:
                pass
            else:
                digits += 1
                if digits > 19:
                    good = False
                    break
                mant = mant * np.uint64(10) + np.uint64(buf[p] - 48)
            seen = True
            p += 1
        if good and p < end and buf[p] == 46:
            p += 1
            while p < end and 48 <= buf[p] <= 57:
                if mant == 0 and buf[p] == 48:
                    exp10 -= 1
                else:
                    digits += 1
                    if digits > 19:
                        good = False
                        break
                    mant = mant * np.uint64(10) + np.uint64(buf[p] - 48)
                    exp10 -= 1
                seen = True
                p += 1
        if good and p < end and (buf[p] == 101 or buf[p] == 69):
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
                good = False
            exp10 += -e if eneg else e
        if not good or not seen or p != end or mant > limit:
            ok[i] = False
            out[i] = 0.0
            continue
        if mant == 0:
            v = 0.0
        elif exp10 == 0:
            v = float(mant)
        elif 0 < exp10 <= 22:
            v = float(mant) * pow10[exp10]
        elif -22 <= exp10 < 0:
            v = float(mant) / pow10[-exp10]
        else:
            ok[i] = False
            out[i] = 0.0
            continue
        out[i] = -v if neg else v
    return out, ok


@jit
def parse_ints(buf, starts, lens):
    """Decimal integers to int64; ``ok[i] = False`` where the text is not an integer."""
    n = starts.shape[0]
    out = np.zeros(n, dtype=np.int64)
    ok = np.ones(n, dtype=np.bool_)
    for i in range(n):
        p = starts[i]
        end = p + lens[i]
        neg = False
        if p < end and (buf[p] == 43 or buf[p] == 45):
            neg = buf[p] == 45
            p += 1
        if p >= end or end - p > 18:
            ok[i] = False
            continue
        v = np.int64(0)
        while p < end:
            c = np.int64(buf[p])
            if c < 48 or c > 57:
                ok[i] = False
                break
            v = v * 10 + (c - 48)
            p += 1
        out[i] = -v if neg else v
    return out, ok


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
def trec_order(offsets, rows, scores, doc_data, doc_off, max_docs):
    """trec_eval's ranking of every group: score descending, then docno descending.

    ``rows`` lists the rows group by group (``offsets``); ``scores`` and the docno
    strings are indexed by row.  Keeps at most ``max_docs`` rows per group.
    Returns ``(new_offsets, ordered_rows)``.
    """
    n_groups = offsets.shape[0] - 1
    new_offsets = np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups):
        m = offsets[g + 1] - offsets[g]
        if m > max_docs:
            m = max_docs
        new_offsets[g + 1] = new_offsets[g] + m
    out = np.empty(new_offsets[n_groups], dtype=np.int64)
    for g in range(n_groups):
        lo = offsets[g]
        hi = offsets[g + 1]
        m = hi - lo
        seg = rows[lo:hi]
        presorted = True
        for i in range(1, m):
            if scores[seg[i]] > scores[seg[i - 1]]:
                presorted = False
                break
        if presorted:
            ranked = seg.copy()
        else:
            key = np.empty(m, dtype=np.float64)
            for i in range(m):
                key[i] = -scores[seg[i]]
            order = np.argsort(key, kind="mergesort")
            ranked = seg[order]
        # ties: docno descending (insertion sort inside each run of equal scores)
        i = 0
        while i < m:
            j = i + 1
            while j < m and scores[ranked[j]] == scores[ranked[i]]:
                j += 1
            if j - i > 1:
                for a in range(i + 1, j):
                    x = ranked[a]
                    b = a - 1
                    while b >= i and _cmp_bytes(doc_data, doc_off, ranked[b], x) < 0:
                        ranked[b + 1] = ranked[b]
                        b -= 1
                    ranked[b + 1] = x
            i = j
        keep = new_offsets[g + 1] - new_offsets[g]
        for i in range(keep):
            out[new_offsets[g] + i] = ranked[i]
    return new_offsets, out


@jit
def hash_strings(data, off, rows):
    """FNV-1a hash of the strings at ``rows``."""
    n = rows.shape[0]
    out = np.empty(n, dtype=np.uint64)
    prime = np.uint64(1099511628211)
    for i in range(n):
        r = rows[i]
        h = np.uint64(14695981039346656037)
        for j in range(off[r], off[r + 1]):
            h = (h ^ np.uint64(data[j])) * prime
        out[i] = h
    return out


@jit
def _table_size(m):
    size = 8
    while size < 2 * m:
        size *= 2
    return size


@jit
def first_duplicate(offsets, rows, data, off):
    """First ``(group, row)`` whose string repeats inside its group, else ``(-1, -1)``."""
    n_groups = offsets.shape[0] - 1
    hashes = hash_strings(data, off, rows)
    table = np.empty(16, dtype=np.int64)
    for g in range(n_groups):
        lo = offsets[g]
        hi = offsets[g + 1]
        m = hi - lo
        if m < 2:
            continue
        size = _table_size(m)
        if table.shape[0] < size:
            table = np.empty(size, dtype=np.int64)
        table[:size] = -1
        mask = np.uint64(size - 1)
        for i in range(lo, hi):
            slot = np.int64(hashes[i] & mask)
            while table[slot] >= 0:
                other = table[slot]
                if hashes[other] == hashes[i] and _cmp_bytes(data, off, rows[other], rows[i]) == 0:
                    return g, rows[i]
                slot = (slot + 1) & (size - 1)
            table[slot] = i
    return -1, -1


@jit
def _same(a_data, a_off, a, b_data, b_off, b):
    la = a_off[a + 1] - a_off[a]
    if la != b_off[b + 1] - b_off[b]:
        return False
    sa = a_off[a]
    sb = b_off[b]
    for t in range(la):
        if a_data[sa + t] != b_data[sb + t]:
            return False
    return True


@jit
def _hash_one(data, off, r):
    h = np.uint64(14695981039346656037)
    prime = np.uint64(1099511628211)
    for j in range(off[r], off[r + 1]):
        h = (h ^ np.uint64(data[j])) * prime
    return h


@jit
def label_run(r_offsets, r_rows, r_data, r_off, q_offsets, q_rows, q_data, q_off, grades):
    """Label every ranked run row from its query's judgments, checking duplicates.

    Both sides are grouped by the same query index.  Per query, the retrieved
    documents go into a hash table (a repeat is a duplicate), then each judged
    document is looked up in it.  Returns ``(labels, judged, dup_group, dup_row)``;
    ``labels`` is 0 where not judged; ``dup_group`` is -1 when no document repeats.
    """
    n_groups = r_offsets.shape[0] - 1
    n = r_rows.shape[0]
    labels = np.zeros(n, dtype=np.int64)
    judged = np.zeros(n, dtype=np.bool_)
    table = np.empty(16, dtype=np.int64)
    hashes = np.empty(16, dtype=np.uint64)
    for g in range(n_groups):
        lo = r_offsets[g]
        m = r_offsets[g + 1] - lo
        if m == 0:
            continue
        size = _table_size(m)
        if table.shape[0] < size:
            table = np.empty(size, dtype=np.int64)
        if hashes.shape[0] < m:
            hashes = np.empty(m, dtype=np.uint64)
        table[:size] = -1
        mask = np.uint64(size - 1)
        for i in range(m):
            row = r_rows[lo + i]
            h = _hash_one(r_data, r_off, row)
            hashes[i] = h
            slot = np.int64(h & mask)
            while table[slot] >= 0:
                other = table[slot]
                if hashes[other] == h and _same(r_data, r_off, r_rows[lo + other], r_data, r_off, row):
                    return labels, judged, g, row
                slot = (slot + 1) & (size - 1)
            table[slot] = i
        for j in range(q_offsets[g], q_offsets[g + 1]):
            qrow = q_rows[j]
            h = _hash_one(q_data, q_off, qrow)
            slot = np.int64(h & mask)
            while table[slot] >= 0:
                i = table[slot]
                if hashes[i] == h and _same(r_data, r_off, r_rows[lo + i], q_data, q_off, qrow):
                    labels[lo + i] = grades[qrow]
                    judged[lo + i] = True
                    break
                slot = (slot + 1) & (size - 1)
    return labels, judged, -1, -1


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
def count_grades(offsets, rows, grades, n_grades):
    """Per group: number of rows at each grade >= 0 (negative grades are not counted)."""
    n_groups = offsets.shape[0] - 1
    out = np.zeros((n_groups, n_grades), dtype=np.int64)
    for g in range(n_groups):
        for i in range(offsets[g], offsets[g + 1]):
            y = grades[rows[i]]
            if y >= 0:
                out[g, y] += 1
    return out


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
