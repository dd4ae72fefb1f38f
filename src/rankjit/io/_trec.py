"""Readers of TREC run files, qrels and diversity (subtopic) qrels.

The file is read as raw bytes (memory-mapped when large) and split into fields by
a compiled tokenizer; in the same pass the fields kept are copied into Arrow-style
string columns (one byte buffer plus int64 offsets), docnos are hashed for the
alignment and numbers are parsed (exactly; the rare spellings the compiled parser
leaves go to pyarrow's C++ casts).  No Python work happens per line.

Before that, :func:`_read_bytes` makes any file plain ``\\n`` text or refuses it by
name: gzip is decompressed, a leading UTF-8 byte-order mark dropped, ``\\r`` and
``\\r\\n`` line ends read as ``\\n`` (in any mix); UTF-16 text, a byte-order mark
inside the file and damaged gzip data are errors.
"""
from __future__ import annotations

import importlib.util

import gzip
import mmap
import os
import zlib
from dataclasses import dataclass

import numpy as np

from rankjit._config import num_threads, run_blocks
from rankjit.io import _kernels as K

__all__ = [
    "StringColumn",
    "TrecRun",
    "TrecQrels",
    "DiversityQrels",
    "read_trec_run",
    "read_trec_qrels",
    "read_diversity_qrels",
]


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.compute  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "reading files needs pyarrow: pip install 'rankjit[io]'"
        ) from exc
    return pyarrow


class StringColumn:
    """A column of byte strings held as one buffer plus ``n + 1`` int64 offsets.

    This is Arrow's ``large_binary`` layout: :meth:`to_arrow` wraps it without a copy.

    Parameters
    ----------
    data : numpy.ndarray of uint8
        The strings end to end.
    offsets : numpy.ndarray of int64
        ``offsets[i]:offsets[i + 1]`` is string ``i`` in ``data``.

    Notes
    -----
    Item access decodes UTF-8 losslessly: bytes that are not UTF-8 become surrogate
    escapes (``b"caf\\xe9"`` is ``'caf\\udce9'``), so distinct ids stay distinct and
    ``s.encode("utf-8", "surrogateescape")`` gives the bytes back.

    Examples
    --------
    >>> col = StringColumn.from_list(["a", "bc"])
    >>> len(col), col[1]
    (2, 'bc')
    >>> StringColumn.from_list([b"caf\\xe9"])[0]
    'caf\\udce9'
    """

    __slots__ = ("data", "offsets", "_hashes", "_runs")

    def __init__(self, data, offsets):
        self.data = np.ascontiguousarray(data, dtype=np.uint8)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        # derived data, computed on first use (the readers fill them in their one pass);
        # they assume the column is not modified in place afterwards
        self._hashes = None
        self._runs = None

    def hashes(self):
        """A 64-bit hash of every string (uint64), computed once and kept.

        Equal strings have equal hashes in every column (the hash depends only on
        the bytes), so columns can be joined through them.
        """
        if self._hashes is None:
            self._hashes = K.hash_column(self.data, self.offsets)
        return self._hashes

    def run_starts(self):
        """Start of every run of equal consecutive strings, then ``len(self)`` (int64).

        Computed once and kept.

        Examples
        --------
        >>> StringColumn.from_list(["a", "a", "b", "a"]).run_starts().tolist()
        [0, 2, 3, 4]
        """
        if self._runs is None:
            self._runs = K.string_runs(self.data, self.offsets)
        return self._runs

    @classmethod
    def from_list(cls, values):
        """Build from a sequence of ``str`` or ``bytes`` (per-item Python work: small inputs)."""
        encoded = [v.encode("utf-8", "surrogateescape") if isinstance(v, str) else bytes(v) for v in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(v) for v in encoded], out=offsets[1:])
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        return cls(data, offsets)

    @classmethod
    def from_arrow(cls, array):
        """Build from an Arrow string/binary array (any of the four layouts, no nulls)."""
        pa = _pyarrow()
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
        if array.null_count:
            raise ValueError("string column holds null values")
        array = array.cast(pa.large_binary())
        bufs = array.buffers()
        offsets = np.frombuffer(bufs[1], dtype=np.int64)[array.offset : array.offset + len(array) + 1]
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        base = offsets[0]
        return cls(data[base : offsets[-1]], offsets - base)

    def __len__(self):
        return self.offsets.shape[0] - 1

    def __getitem__(self, i):
        # lossless: bytes that are not UTF-8 become surrogate escapes (encode back with "surrogateescape")
        return bytes(self.data[self.offsets[i] : self.offsets[i + 1]]).decode("utf-8", "surrogateescape")

    def to_arrow(self, type=None):
        """The column as a ``pyarrow.large_binary`` array (``type=pa.large_string()`` to relabel)."""
        pa = _pyarrow()
        n = len(self)
        return pa.Array.from_buffers(
            type or pa.large_binary(), n, [None, pa.py_buffer(self.offsets), pa.py_buffer(self.data)]
        )

    def tolist(self):
        """The strings as a list of ``str`` (decoded as UTF-8; other bytes as surrogate escapes)."""
        raw = bytes(self.data)
        if raw.isascii():  # one decode, then slices (byte offsets are character offsets): ~10x faster
            text, bounds = raw.decode("ascii"), self.offsets.tolist()
            return [text[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        return [self[i] for i in range(len(self))]

    def take(self, rows):
        """A new column with the strings at ``rows`` (their bytes gathered compiled: no pyarrow)."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = self.offsets[rows]
        return _strings(self.data, starts, self.offsets[rows + 1] - starts)

    def __repr__(self):
        head = ", ".join(repr(self[i]) for i in range(min(3, len(self))))
        more = ", ..." if len(self) > 3 else ""
        return f"StringColumn([{head}{more}], n={len(self)})"


def _source_name(source):
    return os.fspath(source) if isinstance(source, (str, os.PathLike)) else "<bytes>"


def _read_bytes(source, name=None, fields=0):
    """The text of a path or bytes object as a ``uint8`` array, ready to tokenize.

    A gzip file (recognised by its magic number) is decompressed; a UTF-8
    byte-order mark at the start is dropped; carriage returns that end lines
    (``\\r`` line ends, alone or mixed with ``\\n``: :func:`rankjit.io._kernels.cr_line_ends`,
    where ``fields`` is the number of fields of a record, 0 for no fixed number) become
    ``\\n``, so that every later step (and every line number) sees ``\\n`` line ends.
    UTF-16 text, a byte-order mark elsewhere and damaged gzip data raise a ``ValueError``
    naming the file (``name``, default: the path).
    """
    name = name or _source_name(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
    else:
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file")
        if os.path.isdir(path):
            raise ValueError(f"{path}: is a directory, expected a file")
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size >= _MMAP_MIN and os.name == "posix":
                # map the page cache instead of copying it (MAP_POPULATE: no page faults
                # later); the readers copy out what they keep, so the map dies with `raw`
                flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
                raw = mmap.mmap(fh.fileno(), size, flags=flags, prot=mmap.PROT_READ)
            else:
                raw = fh.read()
    if raw[:2] == _GZIP_MAGIC:
        raw = _gunzip(raw, name, fields)
    return _text(raw, name, fields=fields)


#: Files of at least this many bytes are memory-mapped rather than read.
_MMAP_MIN = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"  # UTF-8 byte-order mark
#: at most this many bytes of a line or field are quoted in an error message
_QUOTE_MAX = 120


def _gunzip(raw, name, fields=0):
    """``gzip.decompress``, with damaged data reported by file and line."""
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error) as exc:
        line = _line_number(_text(_gunzip_prefix(raw), name, checks=False, fields=fields), None)
        raise ValueError(
            f"{name}: line {line}: truncated or corrupt gzip data ({exc}); "
            f"the decompressed text breaks off in this line"
        ) from None


def _gunzip_prefix(raw, step=1 << 16):
    """As much text as the gzip members of ``raw`` yield before they break off."""
    out = []
    data = memoryview(raw)
    d = zlib.decompressobj(wbits=31)
    try:
        while data.nbytes:
            out.append(d.decompress(data[:step]))
            data = data[step:]
            if d.eof:  # the next member, if any, starts in the unused bytes
                data = memoryview(d.unused_data + bytes(data))
                d = zlib.decompressobj(wbits=31)
    except zlib.error:
        pass
    return b"".join(out)


def _text(raw, name, checks=True, fields=0):
    """Byte-order mark, encoding and line-end handling of :func:`_read_bytes`."""
    if checks:
        _refuse_wide_text(raw, name)
    skip = len(_BOM) if raw[:3] == _BOM else 0
    buf = np.frombuffer(raw, dtype=np.uint8)[skip:]
    if raw.find(b"\r") >= 0:
        ends = K.cr_line_ends(buf, raw.find(b"\n") < 0, fields)
        if ends.shape[0]:
            buf = buf.copy()
            buf[ends] = 10
    if checks and raw.find(_BOM[:1], skip) >= 0:  # one byte: memchr's speed on ASCII files
        pos = raw.find(_BOM, skip)
        if pos >= 0:
            line = _line_number(buf, pos - skip)
            raise ValueError(
                f"{name}: line {line}: a UTF-8 byte-order mark (EF BB BF) inside the file "
                f"(were files concatenated?): {_line_text(buf, _line_start(buf, pos - skip))!r}"
            )
    return buf


def _refuse_wide_text(raw, name):
    """A ``ValueError`` for UTF-16 (or UTF-32) text: a byte-order mark or NULs between characters."""
    head = bytes(raw[:1024])
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        why = f"it starts with the UTF-16 byte-order mark {head[:2].hex(' ').upper()}"
    elif len(head) >= 4 and 4 * head.count(0) >= len(head):
        why = "a NUL byte between its characters"
    else:
        return
    raise ValueError(
        f"{name}: line 1: UTF-16 text ({why}); TREC files are read as ASCII or UTF-8: "
        f"convert it first, e.g. iconv -f UTF-16 -t UTF-8"
    )


def _line_number(buf, pos):
    """1-based line of byte ``pos`` (``None``: the last line) of a text with ``\\n`` line ends."""
    return int(np.count_nonzero(buf[:pos] == 10)) + 1


def _line_start(buf, pos):
    newlines = np.flatnonzero(buf[:pos] == 10)
    return int(newlines[-1]) + 1 if newlines.shape[0] else 0


def _line_text(buf, pos, limit=_QUOTE_MAX):
    end = pos
    n = buf.shape[0]
    while end < n and buf[end] != 10 and end - pos < limit:
        end += 1
    return bytes(buf[pos:end]).decode("utf-8", "replace").strip()


def _tokenize(buf, name, want, min_fields, max_fields, expected):
    want_arr = np.asarray(want, dtype=np.int64)
    n, starts, lens, err_pos, err_nf = K.tokenize(buf, want_arr, min_fields, max_fields, True)
    if err_pos >= 0:
        line = _line_number(buf, err_pos)
        raise ValueError(
            f"{name}: line {line}: expected {expected}, found {err_nf} field(s): "
            f"{_line_text(buf, err_pos)!r}"
        )
    return n, starts[:, :n], lens[:, :n]


def _strings(buf, starts, lens):
    offsets = np.zeros(starts.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    return StringColumn(K.gather_bytes(buf, np.ascontiguousarray(starts), np.ascontiguousarray(lens), offsets), offsets)


def _parse_numbers(buf, starts, lens, name, what, kind):
    """Parse one field of every line as float64 (``kind='f'``) or int64 (``kind='i'``).

    A compiled parser handles the usual spellings; the rare others go to
    :func:`_slow_numbers`.
    """
    starts = np.ascontiguousarray(starts)
    lens = np.ascontiguousarray(lens)
    if kind == "f":
        values, ok = K.parse_floats(buf, starts, lens)
    else:
        values, ok = K.parse_ints(buf, starts, lens)
    if ok.all():
        return values
    rows = np.flatnonzero(~ok)
    values[rows] = _slow_numbers(buf, starts[rows], lens[rows], name, what, kind)
    return values


def _slow_numbers(buf, starts, lens, name, what, kind):
    """The fields the compiled parser left, or a ``ValueError`` naming the line.

    Floats (more than 15-17 significant digits, large exponents, ``inf``) go to a
    full parser (:func:`_slow_floats`); NaN is refused (it cannot be ranked).  Integers may be long
    (within int64) or spelled as an integral decimal (``1.0``, ``1e0``).
    """
    if kind == "f":
        values, bad = _slow_floats(buf, starts, lens)
        expected = "a number"
    else:
        values, ok = K.parse_ints(buf, np.ascontiguousarray(starts), np.ascontiguousarray(lens), True)
        bad = int(np.argmin(ok)) if not ok.all() else -1
        expected = "an integer (int64)"
    if bad < 0:
        return values
    text = bytes(buf[starts[bad] : starts[bad] + min(lens[bad], _QUOTE_MAX)]).decode("utf-8", "replace")
    if kind == "f" and text.strip().lower().lstrip("+-") == "nan":
        expected += ": NaN cannot be ranked"
    cut = f" (its first {_QUOTE_MAX} of {lens[bad]} bytes)" if lens[bad] > _QUOTE_MAX else ""
    line = _line_number(buf, int(starts[bad]))
    raise ValueError(f"{name}: line {line}: {what} field {text!r}{cut} is not {expected}")



#: Fields left by the compiled parser are parsed by numpy (no import; ~0.2 us a field) up to this many,
#: by pyarrow's parser beyond it when pyarrow is installed (~0.02 us a field, after its import):
#: the two give the same float64 for every string both accept (tests/test_io_trec.py).  Reading TREC
#: text never needs pyarrow; a run whose scores were written by Python's ``repr`` (17 digits) has
#: about half of its fields here.
SLOW_FLOATS_NUMPY_MAX = 200_000
#: fields of up to this many bytes are converted by numpy in one table (rows x the longest field's width)
_TABLE_WIDTH = 64
#: bytes of one such table, whatever the width (and 8 times as many of int64 positions: ~40 MB in all)
_TABLE_CELLS = _TABLE_WIDTH << 16


def _slow_floats(buf, starts, lens):
    """The float64 of the fields: ``(values, index of the first bad field or -1)``.

    Accepts what pyarrow's parser accepts (``1e5``, ``.5``, ``5.``, ``+3``, ``inf``,
    ``Infinity``, 17 or more digits); a field with a byte outside ``!``..``~`` or an
    underscore (which numpy, like Python's ``float``, would skip) is bad.  NaN values
    are reported as bad (the caller says that NaN cannot be ranked).
    """
    bad = K.is_ascii_number_chars(buf, starts, lens)
    if bad >= 0:
        return None, bad
    if starts.shape[0] > SLOW_FLOATS_NUMPY_MAX and importlib.util.find_spec("pyarrow") is not None:
        pa = _pyarrow()
        col = _strings(buf, starts, lens)
        try:
            parsed = col.to_arrow(pa.large_string()).cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None, _first_unparsable(buf, starts, lens)
        values = np.asarray(parsed.to_numpy(zero_copy_only=False))
    else:
        values = np.empty(starts.shape[0], dtype=np.float64)
        # a table is as wide as its longest field: fields go by width class (up to 64 bytes, 128, 256, ...),
        # each in tables of at most _TABLE_CELLS bytes, so memory does not grow with the longest field
        width_class = np.ceil(np.log2(np.maximum(lens, _TABLE_WIDTH) / _TABLE_WIDTH)).astype(np.int64)
        bad = starts.shape[0]
        for c in np.unique(width_class).tolist():
            in_class = np.flatnonzero(width_class == c)
            step = max(1, _TABLE_CELLS // (_TABLE_WIDTH << c))
            for lo in range(0, in_class.shape[0], step):
                rows = in_class[lo : lo + step]
                if rows[0] > bad:
                    break
                fields = _byte_table(buf, starts[rows], lens[rows])
                try:
                    if (fields.view(np.uint8) == ord("_")).any():
                        raise ValueError("an underscore")
                    values[rows] = fields.astype(np.float64)
                except ValueError:  # the first bad field of the class: rows are in file order
                    bad = min(bad, int(rows[_first_unparsable(buf, starts[rows], lens[rows])]))
                    break
        if bad < starts.shape[0]:
            return None, bad
    nan = np.isnan(values)
    return values, (int(np.argmax(nan)) if nan.any() else -1)


def _byte_table(buf, starts, lens):
    """The fields as a numpy bytes array (``S<longest>``, zero-padded)."""
    width = max(int(lens.max(initial=0)), 1)
    cols = np.arange(width)
    at = np.minimum(starts[:, None] + cols, buf.shape[0] - 1)
    table = np.where(cols < lens[:, None], buf[at], 0).astype(np.uint8)
    return table.view(f"S{width}").ravel()


def _float_or_none(field):
    """numpy's float64 of one bytes field, or None when it is not a number (an underscore included)."""
    if b"_" in field:
        return None
    try:
        return float(np.array([field]).astype(np.float64)[0])
    except ValueError:
        return None


#: Inputs of at least this many bytes are read by ``numba.get_num_threads()`` threads,
#: one chunk of whole lines each (the result does not depend on the chunking).
_PARALLEL_MIN_BYTES = 1 << 23


def _read_pairs(buf, name, f_qid, f_doc, f_num, f_tag, min_fields, kind, what, expected, n_chunks=None,
                max_fields=-1):
    """Query ids, docnos (hashed) and one number per line in one compiled pass.

    The buffer is cut into chunks of whole lines read in parallel; each chunk writes
    its strings and rows from its own upper-bound position, and the chunks are then
    moved down end to end (one ``memmove`` per chunk and array).

    Returns ``(qid, docno, numbers, tag)``; ``tag`` is field ``f_tag`` of the last
    line (None without lines or with ``f_tag < 0``).  ``n_chunks`` (default: the
    thread count from ``_PARALLEL_MIN_BYTES`` bytes on, else 1) is for tests.  A line of fewer than
    ``min_fields`` fields, or of more than ``max_fields`` (< 0: no limit), raises a ValueError.
    """
    size = buf.shape[0]
    if n_chunks is None:
        n_chunks = 1
        if size >= _PARALLEL_MIN_BYTES:
            n_threads = num_threads()
            n_chunks = n_threads if n_threads > 1 else 1
    if n_chunks == 1 and size < _PARALLEL_MIN_BYTES:
        # what line_chunks(buf, 1) returns, without loading that kernel for small inputs
        bounds = np.array([0, size], dtype=np.int64)
        row_base = np.array([0, np.count_nonzero(buf == 10) + 1], dtype=np.int64)
    else:
        bounds, row_base = K.line_chunks(buf, n_chunks)
    n_chunks = bounds.shape[0] - 1
    n_max = int(row_base[-1])
    # allocated here, not in the kernel: NumPy's large arrays get transparent huge
    # pages, which makes their first touch several times cheaper
    q_data = np.empty(size, dtype=np.uint8)
    d_data = np.empty(size, dtype=np.uint8)
    q_end = np.empty(n_max + 1, dtype=np.int64)
    d_end = np.empty(n_max + 1, dtype=np.int64)
    q_runs = np.empty(n_max + 1, dtype=np.int64)
    d_hash = np.empty(n_max, dtype=np.uint64)
    fnum = np.empty(n_max if kind == "f" else 0, dtype=np.float64)
    inum = np.empty(0 if kind == "f" else n_max, dtype=np.int64)
    bad = np.empty((n_max, 3), dtype=np.int64)  # only the rare rows the fast parser leaves are written
    info = np.empty((n_chunks, 7), dtype=np.int64)
    args = (buf, bounds, row_base, f_qid, f_doc, f_num, f_tag, min_fields, max_fields, kind == "f",
            q_data, q_end, q_runs, d_data, d_end, d_hash, fnum, inum, bad, info)
    run_blocks(lambda k_lo, k_hi: K.read_pairs(k_lo, k_hi, *args), n_chunks, n_chunks > 1)
    for k in range(n_chunks):
        if info[k, 5] >= 0:  # the first malformed line is in the first chunk reporting one
            err_pos = int(info[k, 5])
            raise ValueError(
                f"{name}: line {_line_number(buf, err_pos)}: expected {expected}, found {int(info[k, 6])} "
                f"field(s): {_line_text(buf, err_pos)!r}"
            )

    nums = fnum if kind == "f" else inum
    q_end[0] = 0
    d_end[0] = 0
    row = q_pos = d_pos = 0
    runs, bads = [], []
    tag = None
    for k in range(n_chunks):
        r0, nk, lo = int(row_base[k]), int(info[k, 0]), int(bounds[k])
        if nk == 0:
            continue
        q_len = int(q_end[r0 + nk]) - lo
        d_len = int(d_end[r0 + nk]) - lo
        if lo != q_pos or r0 != row:  # move the chunk down behind the previous ones
            q_data[q_pos : q_pos + q_len] = q_data[lo : lo + q_len]
            d_data[d_pos : d_pos + d_len] = d_data[lo : lo + d_len]
            q_end[row + 1 : row + nk + 1] = q_end[r0 + 1 : r0 + nk + 1] - (lo - q_pos)
            d_end[row + 1 : row + nk + 1] = d_end[r0 + 1 : r0 + nk + 1] - (lo - d_pos)
            d_hash[row : row + nk] = d_hash[r0 : r0 + nk]
            nums[row : row + nk] = nums[r0 : r0 + nk]
        chunk_runs = q_runs[r0 : r0 + int(info[k, 1])] - (r0 - row)
        if row and _same_string(q_data, q_end, row - 1, row):
            chunk_runs = chunk_runs[1:]  # the previous chunk ended inside this run
        runs.append(chunk_runs)
        chunk_bad = bad[r0 : r0 + int(info[k, 2])].copy()
        chunk_bad[:, 0] -= r0 - row
        bads.append(chunk_bad)
        if f_tag >= 0:
            tag = bytes(buf[info[k, 3] : info[k, 3] + info[k, 4]]).decode("utf-8", "surrogateescape")
        row += nk
        q_pos += q_len
        d_pos += d_len
    n = row
    qid = StringColumn(q_data[:q_pos], q_end[: n + 1])
    qid._runs = np.concatenate(runs + [np.array([n], dtype=np.int64)])
    docno = StringColumn(d_data[:d_pos], d_end[: n + 1])
    docno._hashes = d_hash[:n]
    numbers = nums[:n]
    if bads and sum(b.shape[0] for b in bads):
        b = np.concatenate(bads)
        numbers[b[:, 0]] = _slow_numbers(buf, b[:, 1].copy(), b[:, 2].copy(), name, what, kind)
    return qid, docno, numbers, tag


def _same_string(data, offsets, a, b):
    return bytes(data[offsets[a] : offsets[a + 1]]) == bytes(data[offsets[b] : offsets[b + 1]])


def _first_unparsable(buf, starts, lens):
    """Index of the first field that is not a number (error path only, on the fields the fast parser left)."""
    for i in range(starts.shape[0]):
        if _float_or_none(bytes(buf[starts[i]:starts[i] + lens[i]])) is None:
            return i
    return 0  # pragma: no cover


@dataclass(frozen=True, eq=False)
class TrecRun:
    """A TREC run: one row per retrieved document, in file order.

    Attributes
    ----------
    qid, docno : StringColumn
        Query and document identifiers (bytes, shown decoded as UTF-8, other bytes as surrogate escapes).
    score : numpy.ndarray of float64
        The similarity field; trec_eval ranks by it, descending (the rank field is ignored).
    runid : str or None
        The tag of the last line (what trec_eval prints as ``runid``).
    source : str or None
        The file name, for messages.
    """

    qid: StringColumn
    docno: StringColumn
    score: np.ndarray
    runid: str | None = None
    source: str | None = None

    def __len__(self):
        return self.score.shape[0]

    @classmethod
    def from_columns(cls, qid, docno, score, runid=None):
        """Build a run from columns (lists, NumPy or Arrow arrays; strings or ints as ids).

        Examples
        --------
        >>> run = TrecRun.from_columns(["q1", "q1"], ["d1", "d2"], [2.0, 1.0])
        >>> len(run)
        2
        """
        return cls(_as_strings(qid), _as_strings(docno), np.asarray(score, dtype=np.float64), runid, None)


@dataclass(frozen=True, eq=False)
class TrecQrels:
    """TREC relevance judgments (``qid iter docno rel``), in file order.

    Attributes
    ----------
    qid, docno : StringColumn
    rel : numpy.ndarray of int64
        Judgments; negative values count as non-relevant (trec_eval's rule).
    source : str or None
    """

    qid: StringColumn
    docno: StringColumn
    rel: np.ndarray
    source: str | None = None

    def __len__(self):
        return self.rel.shape[0]

    @classmethod
    def from_columns(cls, qid, docno, rel):
        """Build qrels from columns.

        Examples
        --------
        >>> qrels = TrecQrels.from_columns(["q1", "q1"], ["d1", "d3"], [1, 0])
        >>> int(qrels.rel.sum())
        1
        """
        rel = np.asarray(rel)
        if rel.dtype.kind not in "iu":
            raise ValueError(f"relevance judgments must be integers, got dtype {rel.dtype}")
        return cls(_as_strings(qid), _as_strings(docno), rel.astype(np.int64), None)


@dataclass(frozen=True, eq=False)
class DiversityQrels:
    """Subtopic judgments (``topic subtopic docno judgment``, the ndeval format).

    Attributes
    ----------
    qid, docno : StringColumn
    subtopic : numpy.ndarray of int64
    judgment : numpy.ndarray of int64
        A document holds a nugget when its judgment is > 0.
    source : str or None
    """

    qid: StringColumn
    subtopic: np.ndarray
    docno: StringColumn
    judgment: np.ndarray
    source: str | None = None

    def __len__(self):
        return self.judgment.shape[0]


def _as_strings(values):
    if isinstance(values, StringColumn):
        return values
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover
        pa = None
    if pa is not None and isinstance(values, (pa.Array, pa.ChunkedArray)):
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
                or pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)):
            values = values.cast(pa.string())
        return StringColumn.from_arrow(values)
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return StringColumn.from_list([str(v) for v in arr.tolist()])
    return StringColumn.from_list(list(arr.tolist()))


def read_trec_run(source, *, name=None):
    """Read a TREC run file (``qid Q0 docno rank score runid``).

    Fields may be separated by any mix of tabs and spaces; fields after the sixth are
    ignored; blank lines and lines starting with ``#`` are skipped (trec_eval's rules).
    Lines may end in ``\\n``, ``\\r\\n`` or ``\\r``; a leading UTF-8 byte-order mark
    is skipped.  ``.gz`` input is recognised by its content.  Duplicate documents are reported
    when the run is aligned with qrels (:func:`rankjit.io.align`), as trec_eval does.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A path, or the file content.
    name : str, optional
        Name used in error messages (default: the path).

    Returns
    -------
    TrecRun

    Raises
    ------
    FileNotFoundError
        If the path does not exist.
    ValueError
        On a malformed line (message: file, line number, what was expected).

    Examples
    --------
    >>> run = read_trec_run(b"q1 Q0 d1 1 2.5 tag\\nq1\\tQ0\\td2 2   1.5 tag\\n")
    >>> len(run), run.docno[1], float(run.score[0]), run.runid
    (2, 'd2', 2.5, 'tag')
    """
    return _read_run(source, name, -1)


def _read_run(source, name, max_fields):
    """:func:`read_trec_run`; a line of more than ``max_fields`` fields (< 0: no limit) is malformed too."""
    name = name or _source_name(source)
    buf = _read_bytes(source, name, fields=6)
    qid, docno, score, runid = _read_pairs(
        buf, name, 0, 2, 4, 5, 6, "f", "score", "6 fields 'qid Q0 docno rank score runid'", max_fields=max_fields
    )
    return TrecRun(qid, docno, score, runid, name)


#: the bytes of a text that Python's line parsers (``line.split()`` of each decoded line: ir_measures',
#: pytrec_eval's) and rankjit's reader split alike: printable ASCII, space, tab and ``\n`` (``\r\n`` checked apart)
_PLAIN_TEXT = bytes([9, 10, 13, *range(32, 127)])


def split_alike(raw, n_fields, want):
    """``(raw, buf, starts, lens)``: the fields ``want`` of the text ``raw`` (bytes; ``want=None``: none, and
    the number of fields is left to the caller), when a parser that splits each line with ``str.split``
    and wants ``n_fields`` fields reads it as rankjit's reader does; else None.

    They read a text alike when it is ASCII of printable characters, spaces and tabs, with
    ``\n`` or ``\r\n`` line ends (the same characters in any text encoding, and no other
    whitespace that ``str.split`` splits at); holds no ``#`` (rankjit's reader skips trec_eval's
    comment lines, the Python parsers read them as rows); and, with ``want``, holds ``n_fields``
    fields on every line that is not blank.  The numbers are the caller's to check.  Blank lines
    are left to the caller too (ir_measures skips them, pytrec_eval refuses them).
    """
    if not raw or raw.translate(None, _PLAIN_TEXT) or b"#" in raw:
        return None
    if b"\r" in raw and raw.count(b"\r") != raw.count(b"\r\n"):  # a lone \r: rankjit's reader reads it by context
        return None
    buf = np.frombuffer(raw, np.uint8)
    if want is None:
        return raw, buf, None, None
    n, starts, lens, bad_line, _ = K.tokenize(buf, np.asarray(want, np.int64), n_fields, n_fields, False)
    if bad_line >= 0 or n == 0:  # a line of another number of fields, or no line
        return None
    return raw, buf, starts[:, :n], lens[:, :n]


def read_split_alike(raw, kind, name):
    """``(rows, iterations)``: the run (``kind="run"``, a :class:`TrecRun`) or the qrels (``"qrels"``, a
    :class:`TrecQrels`) of the text ``raw`` (bytes) as a parser that splits each line with ``str.split``
    reads it (ir_measures', pytrec_eval's), or None where it might read it otherwise.

    Read where :func:`split_alike` says the two split it alike, every score is one rankjit's
    parser reads (then ``float()``'s value, both correctly rounded; NaN and ``1_000`` are not)
    and every judgment is plain digits with a sign within int64 (what ``int()`` reads alike).
    Blank lines are skipped (compare ``len(rows)`` with the lines for a parser that refuses
    them).  ``iterations``: for qrels, ``(buf, starts, lens)`` of each line's second field.
    """
    if kind == "run":
        if split_alike(raw, 6, None) is None:
            return None
        try:  # (six fields exactly on every line)
            return _read_run(raw, name, 6), None
        except ValueError:  # (a score the reader does not read)
            return None
    split = split_alike(raw, 4, (1, 3))
    if split is None:
        return None
    _, buf, starts, lens = split
    _, plain = K.parse_ints(buf, np.ascontiguousarray(starts[1]), np.ascontiguousarray(lens[1]))
    if not plain.all():
        return None
    return read_trec_qrels(raw, name=name), (buf, starts[0], lens[0])


def query_blocks(qid):
    """``(query ids, bounds)`` of a query id column the reader read: the id of each block of
    consecutive rows of one query (rows ``bounds[i]:bounds[i + 1]``)."""
    bounds = qid._runs  # (the first row of each block, then the number of rows)
    heads = bounds[:-1]
    return _strings(qid.data, qid.offsets[heads], np.diff(qid.offsets)[heads]).tolist(), bounds


def read_trec_qrels(source, *, name=None):
    """Read a TREC qrels file (``qid iter docno rel``).

    Any mix of tabs and spaces separates fields; trailing extra fields are ignored;
    blank and ``#`` lines are skipped; line ends and gzip as in :func:`read_trec_run`.
    Judgments must be integers (``2``, or an integral spelling such as ``2.0`` or
    ``2e0``); negative ones are kept as read and count as non-relevant when
    evaluating (trec_eval's rule).

    Parameters
    ----------
    source : str, os.PathLike or bytes
    name : str, optional

    Returns
    -------
    TrecQrels

    Examples
    --------
    >>> qrels = read_trec_qrels(b"q1 0 d1 2\\nq1 0 d2 -1\\n")
    >>> qrels.rel.tolist()
    [2, -1]
    """
    name = name or _source_name(source)
    buf = _read_bytes(source, name, fields=4)
    qid, docno, rel, _ = _read_pairs(buf, name, 0, 2, 3, -1, 4, "i", "relevance", "4 fields 'qid iter docno rel'")
    return TrecQrels(qid, docno, rel, name)


def read_diversity_qrels(source, *, name=None):
    """Read subtopic qrels (``topic subtopic docno judgment``, as used by ndeval).

    Parameters
    ----------
    source : str, os.PathLike or bytes
    name : str, optional

    Returns
    -------
    DiversityQrels

    Examples
    --------
    >>> div = read_diversity_qrels(b"1 1 d1 1\\n1 2 d1 0\\n1 2 d2 1\\n")
    >>> div.subtopic.tolist(), div.judgment.tolist()
    ([1, 2, 2], [1, 0, 1])
    """
    name = name or _source_name(source)
    buf = _read_bytes(source, name, fields=4)
    n, starts, lens = _tokenize(
        buf, name, (0, 1, 2, 3), 4, -1, "4 fields 'topic subtopic docno judgment'"
    )
    qid = _strings(buf, starts[0], lens[0])
    subtopic = _parse_numbers(buf, starts[1], lens[1], name, "subtopic", "i")
    docno = _strings(buf, starts[2], lens[2])
    judgment = _parse_numbers(buf, starts[3], lens[3], name, "judgment", "i")
    return DiversityQrels(qid, subtopic.astype(np.int64), docno, judgment.astype(np.int64), name)
