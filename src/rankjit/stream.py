"""Evaluate logs larger than memory, one Arrow record batch at a time.

Rows must come grouped by query with query ids in non-decreasing order (the order
a ``sort by query`` produces).  A query cut by a batch boundary is carried over to
the next batch and scored once, whole.  Unsorted ids are detected and reported with
the fix (sort the file, or pass ``sort=True`` for an out-of-core sort with polars).

Errors say where in the whole log: rows are counted from 0 at the first row of the
input, across batches (with ``sort=True``, the rows of the file as given, before the
sort: a query's rows are then listed one by one), and queries by their id and their
index in the log.  Null (or NaN) query ids, labels and scores are refused by column
and row.

Means are formed exactly as :func:`rankjit.evaluate` forms them on the whole table
(compensated sums of blocks of ``CHUNK_SIZE`` consecutive queries, a block carried
across batches until it is full), so they are equal bit for bit whatever the batching.
(A query's values never depend on the other queries of a call: nDCG's ideal DCG, for
instance, is summed the same way whether a call's grades fit a table by grade or not.)

Counts from outside the rows (``n_relevant``, ``ideal_counts``) are given for the
whole log, one per query in the log's order, and checked against each query's rows as
:func:`rankjit.evaluate` checks them, the errors naming the query id, its index in the
log and its rows.

Memory is bounded by one record batch plus one block of per-query values; the
per-query results (8 bytes per query and measure) are kept only with
``per_query=True``, for registered measures (diversity, preference) or with
``n_relevant`` / ``ideal_counts``, for which :func:`rankjit.evaluate` takes the mean
over the per-query array.
"""
from __future__ import annotations

import contextlib
import os
import re
import tempfile
from dataclasses import dataclass, field

import numpy as np

from rankjit._config import CHUNK_SIZE
from rankjit.io._frames import LOG_ROLES as _ROLES, MISSING_ADVICE as _ADVICE, log_columns

__all__ = ["StreamResult", "evaluate"]


@dataclass
class StreamResult:
    """Outcome of :func:`evaluate`.

    Attributes
    ----------
    means : dict
        Measure -> mean over all queries: bit for bit the value :func:`rankjit.evaluate`
        gives on the whole table (the same rows as flat arrays with CSR offsets).
    n_queries, n_rows : int
    per_query : dict or None
        Measure -> float64 array (with ``per_query=True``), in query order.
    qids : numpy.ndarray or None
        Query ids matching ``per_query``.
    """

    means: dict
    n_queries: int
    n_rows: int
    per_query: dict | None = None
    qids: np.ndarray | None = field(default=None, repr=False)

    def __getitem__(self, name):
        return self.means[name]


def _batch_source(source, columns, batch_size):
    """(iterator of RecordBatches, total rows or None)."""
    import pyarrow as pa

    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        pf = _open_parquet(path)
        names = pf.schema_arrow.names
        _check_columns(names, columns, path)
        return _row_groups(pf, path, batch_size, columns), pf.metadata.num_rows
    if isinstance(source, pa.Table):
        _check_columns(source.column_names, columns, "table")
        return iter(source.select(columns).to_batches(max_chunksize=batch_size)), source.num_rows
    if isinstance(source, pa.RecordBatch):
        _check_columns(source.schema.names, columns, "batch")
        return iter([source.select(columns)]), source.num_rows
    if isinstance(source, pa.RecordBatchReader):
        _check_columns(source.schema.names, columns, "reader")
        return iter(source), None
    if hasattr(source, "__iter__"):
        return iter(source), None
    raise TypeError(f"expected a Parquet path, a pyarrow Table, RecordBatchReader or iterable of "
                    f"RecordBatches, got {type(source).__name__}")


def _first_line(exc):
    return next((ln for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)


def _open_parquet(path):
    """``pyarrow.parquet.ParquetFile(path)``, or an error naming the file and what is wrong with it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ValueError(f"{path}: is a directory, not a Parquet file; give the path of one Parquet file")
    try:
        return pq.ParquetFile(path)
    except pa.ArrowInvalid as exc:  # (no Parquet footer: another format, or a file cut short)
        raise ValueError(f"{path}: not a Parquet file, or a truncated or damaged one ({_first_line(exc)})") from exc
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: cannot be read as a Parquet file ({_first_line(exc)})") from exc


def _row_groups(pf, path, batch_size, columns):
    """The record batches of an open Parquet file; a row group that cannot be read is an error naming the file."""
    import pyarrow as pa

    try:
        yield from pf.iter_batches(batch_size=batch_size, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: a row group cannot be read: the file is damaged or truncated "
                         f"({_first_line(exc)})") from exc


def _check_output(output):
    """Refuse an ``output=`` path that cannot become a file: a directory, or in a directory that does not exist."""
    if not isinstance(output, (str, os.PathLike)):
        return
    path = os.fspath(output)
    if os.path.isdir(path):
        raise ValueError(f"{path}: is a directory; the per-query output is written to a Parquet file: "
                         "give a file name (e.g. per_query.parquet)")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"{path}: cannot write the per-query output there: no directory {parent}")


def _check_columns(names, columns, where):
    for role, name in zip(_ROLES, columns):
        if name not in names:
            raise KeyError(f"{role} column {name!r} not found in {where}; columns: {', '.join(names)}")


def _as_numpy(col):
    import pyarrow as pa

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    return col


def _changes(q):
    """Row indices i (>= 1) where q[i] != q[i-1], and the first i with q[i] < q[i-1] (or -1)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(q)
    if n < 2:
        return np.zeros(0, dtype=np.int64), -1
    a, b = q.slice(1), q.slice(0, n - 1)
    if pa.types.is_integer(q.type) or pa.types.is_floating(q.type):
        qa = q.to_numpy()
        ne, down = qa[1:] != qa[:-1], qa[1:] < qa[:-1]
    else:
        ne = np.asarray(pc.not_equal(a, b).to_numpy(zero_copy_only=False), dtype=bool)
        down = np.asarray(pc.less(a, b).to_numpy(zero_copy_only=False), dtype=bool)
    bad = np.flatnonzero(down)
    return np.flatnonzero(ne) + 1, int(bad[0]) + 1 if bad.size else -1


def _unsorted_error(row, prev, cur):
    return ValueError(
        f"query ids are not sorted (row {row} of the log: {cur!r} comes after {prev!r}); rows of a query must "
        "be contiguous and ids non-decreasing. Sort the log by the query column first (e.g. "
        "polars: pl.scan_parquet(p).sort(query).sink_parquet(out)), or pass sort=True"
    )


def _check_values(batch, columns, row0, rows=None):
    """Refuse the first null or NaN of the batch's columns (query, label, score, judged, pooled; by global row).

    ``rows``: the input row of each row of the batch (``sort=True``), else the batch starts at row ``row0``.
    """
    from rankjit.io._frames import first_missing

    hits = [(first_missing(batch.column(i)), i) for i in range(len(columns))]
    hits = [(r, i) for r, i in hits if r >= 0]
    if not hits:
        return
    r, i = min(hits)
    col = batch.column(i)
    what = "null" if not col[r].is_valid else "NaN"
    where = f"row {row0 + r if rows is None else int(rows[r])} of the log (0-based)"
    if i > 0 and batch.column(0)[r].is_valid:
        where += f", in query {batch.column(0)[r].as_py()!r}"
    raise ValueError(f"{_ROLES[i]} column {columns[i]!r} holds a {what} at {where}; {_ADVICE[_ROLES[i]]}")


def _flags(column, name, role):
    """A boolean column (judged, pooled) as a numpy bool array."""
    import pyarrow as pa

    column = _as_numpy(column)
    if not pa.types.is_boolean(column.type):
        raise TypeError(f"{role} column {name!r} must be boolean (True = {role} document), got {column.type}")
    return column.to_numpy(zero_copy_only=False)


#: full blocks summed at once: each summation costs CHUNK_SIZE numpy steps, whatever the
#: number of blocks, so they are gathered (64 blocks: 0.5 MB per measure)
_FLUSH_BLOCKS = 64


def _block_sums(values):
    """Neumaier-compensated sums in order along the last axis, as the engine sums a block.

    ``values`` is (n_measures, n_blocks, block) float64; the result (n_measures, n_blocks).
    The same operations in the same order as ``rankjit._kernels.engine.measure_blocks`` (no fast
    math there, plain IEEE operations here), hence the same bits.
    """
    s = np.zeros(values.shape[:2])
    comp = np.zeros(values.shape[:2])
    for i in range(values.shape[2]):
        x = values[:, :, i]
        t = s + x
        comp += np.where(np.abs(s) >= np.abs(x), (s - t) + x, (x - t) + s)
        s = t
    return s + comp


class _Means:
    """Means over queries that arrive in pieces, formed as :func:`rankjit.evaluate` forms them.

    ``blocked``: the engine's mean (per block of ``CHUNK_SIZE`` queries a compensated sum,
    then ``np.sum`` of the block sums over the number of queries); otherwise ``np.mean`` of
    the whole per-query array (what :func:`rankjit.evaluate` does for registered measures).
    """

    def __init__(self, n_measures, blocked, summed=None, measures=None):
        self.n_measures, self.blocked = n_measures, blocked
        self.measures = measures  # their names: each reduced as rankjit.evaluate reduces it (not blocked)
        self.summed = np.zeros(n_measures, bool) if summed is None else np.asarray(summed, bool)  # the counts
        self.pending, self.n_pending = [], 0  # per-query values of the unfinished block
        self.sums, self.values, self.n = [], [], 0

    def add(self, values):
        """Take the (n_measures, k) per-query values of the next k queries."""
        self.n += values.shape[1]
        if not self.blocked:
            self.values.append(values)
            return
        self.pending.append(values)
        self.n_pending += values.shape[1]
        if self.n_pending >= _FLUSH_BLOCKS * CHUNK_SIZE:
            self._flush(last=False)

    def _flush(self, last):
        """Sum the full blocks of the pending values (and, if ``last``, the partial one)."""
        todo = np.concatenate(self.pending, axis=1)
        full = todo.shape[1] // CHUNK_SIZE * CHUNK_SIZE
        if full:
            self.sums.append(_block_sums(todo[:, :full].reshape(self.n_measures, -1, CHUNK_SIZE)))
        self.pending, self.n_pending = [todo[:, full:]], todo.shape[1] - full
        if last and self.n_pending:
            self.sums.append(_block_sums(todo[:, None, full:]))
            self.pending, self.n_pending = [], 0

    def means(self):
        """(n_measures,) float64."""
        if not self.blocked:
            if self.measures is not None:  # the mean, the sum of a count, Accuracy's mean of its defined queries
                from rankjit._measures import reduce_values

                return np.array([reduce_values(self.measures[m], np.concatenate([v[m] for v in self.values]))
                                 for m in range(self.n_measures)])
            reduce = [np.sum if self.summed[m] else np.mean for m in range(self.n_measures)]
            return np.array([reduce[m](np.concatenate([v[m] for v in self.values])) for m in range(self.n_measures)])
        if self.n_pending:
            self._flush(last=True)
        totals = np.concatenate(self.sums, axis=1).sum(axis=1)
        return np.where(self.summed, totals, totals / self.n)  # as rankjit.evaluate: the counts summed


def _blocked_means(measures, normalised):
    """Whether :func:`rankjit.evaluate` would form these means from block sums (parses the names)."""
    from rankjit import _measures

    parsed = [_measures.parse(m) for m in measures]
    return not any(m.external or _measures.aggregate(m) == "defined" for m in parsed) and not normalised


_NORMALISERS = {"n_relevant": "count", "ideal_counts": "row"}


def _held(name, a):
    """``"n_relevant holds 3 counts"``."""
    unit = _NORMALISERS[name] + ("" if a.shape[0] == 1 else "s")
    return f"{name} holds {a.shape[0]} {unit}, one per query of the log in its order, but the log has"


def _normalisers(n_relevant, ideal_counts):
    """The per-query counts given for the whole log, checked for shape, dtype and range.

    Their number of queries is checked as the log is read (:meth:`_Run._score`,
    :meth:`_Run.result`).
    """
    from rankjit._api import _as_ideal_counts, _as_n_relevant

    out = {}
    if n_relevant is not None:
        a = np.asarray(n_relevant)
        if a.ndim != 1:
            raise ValueError(f"n_relevant must hold one count per query of the log, in the log's query order "
                             f"(a 1-D array), got shape {a.shape}")
        out["n_relevant"] = _as_n_relevant(a, a.shape[0])
    if ideal_counts is not None:
        a = np.asarray(ideal_counts)
        if a.ndim != 2 or a.shape[1] == 0:
            raise ValueError(f"ideal_counts must have shape (n_queries, n_grades): one row per query of the log, "
                             f"in the log's query order, of the number of judged documents of each grade; "
                             f"got shape {a.shape}")
        _as_ideal_counts(a, a.shape[0])  # (checked; kept dense: its rows follow the log's pieces)
        out["ideal_counts"] = np.ascontiguousarray(a, dtype=np.int64)
    return out


_QUERY_AT = re.compile(r"\bquery (\d+)")
_POSITION_AT = re.compile(r"\bposition (\d+)")
_NORMALISER_AT = re.compile(r"\b(n_relevant|ideal_counts)\[(\d+)")


def _row_span(rows):
    """``"rows 3 to 5"``, or the rows one by one when they are not consecutive (a query of a sorted log)."""
    first, last = int(rows[0]), int(rows[-1])
    if last - first == len(rows) - 1:  # (a query's rows are increasing)
        return f"rows {first} to {last}"
    shown = ", ".join(str(int(r)) for r in rows[:5])
    return f"rows {shown}" + (f", ... ({len(rows)} rows)" if len(rows) > 5 else "")


def _located(err, ids, starts, q0, row0, n_rows, rows=None):
    """``err`` of :func:`rankjit.evaluate` on a piece of the log, with places in the whole log.

    The engine counts queries and positions (and indexes ``n_relevant`` / ``ideal_counts``)
    from the start of the piece; the piece's first query is query ``q0`` of the log and its
    first row, row ``row0``.  ``rows``: the input row of each row of the piece (``sort=True``:
    the log as given, before sorting).
    """
    msg = _NORMALISER_AT.sub(lambda m: f"{m.group(1)}[{q0 + int(m.group(2))}", str(err))
    hit = _QUERY_AT.search(msg)
    q = int(hit.group(1)) if hit else -1
    if not 0 <= q < len(starts):
        span = "" if rows is not None else f"rows {row0} to {row0 + n_rows - 1} of the log, "
        return ValueError(f"{msg} (in {span}queries {ids[0].as_py()!r} to {ids[len(ids) - 1].as_py()!r})")
    pos = _POSITION_AT.search(msg, hit.end())
    lo, hi = int(starts[q]), int(starts[q + 1]) if q + 1 < len(starts) else n_rows
    rows = range(row0 + lo, row0 + hi) if rows is None else rows[lo:hi]
    span = "" if pos else f"; {_row_span(rows)} of the log"
    msg = f"{msg[:hit.start()]}query {ids[q].as_py()!r} (index {q0 + q} in the log{span}){msg[hit.end():]}"
    pos = _POSITION_AT.search(msg)
    if pos and int(pos.group(1)) < len(rows):
        row = int(rows[int(pos.group(1))])
        msg = f"{msg[:pos.end()]} (row {row} of the log){msg[pos.end():]}"
    return ValueError(msg)


def _kind(t):
    """"number", "text" or the type itself: batches may change widths, not kinds."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return "number"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "text"
    return str(t)


class _Run:
    """State of one streaming evaluation: the carried rows, counters, the outputs."""

    def __init__(self, measures, columns, ties, kwargs, per_query, output, normalisers, input_rows=None):
        self.measures, self.columns, self.ties, self.kwargs = measures, columns, ties, kwargs
        self.per_query, self.output, self.writer = per_query, output, None
        self.normalisers = normalisers  # name -> per-query array for the whole log
        self.input_rows = input_rows  # sort=True: the column of each row's row in the log as given (the messages')
        from rankjit._measures import summed

        self.acc = _Means(len(measures), _blocked_means(measures, bool(normalisers)), [summed(m) for m in measures],
                          list(measures))
        self.chunks, self.qid_chunks = [], []
        self.carry = None  # rows of the last, maybe unfinished, query
        self.last_done = None  # id of the last completed query
        self.n_rows = self.n_queries = 0

    def feed(self, batch):
        """Check one record batch, score the queries it completes, carry the last one."""
        import pyarrow as pa

        if not isinstance(batch, pa.RecordBatch):
            raise TypeError(f"expected pyarrow RecordBatch items, got {type(batch).__name__}")
        if batch.num_rows == 0:
            return
        _check_columns(batch.schema.names, self.columns, "batch")
        batch = batch.select(self.columns + ([] if self.input_rows is None else [self.input_rows]))
        _check_values(batch, self.columns, self.n_rows, self._rows(batch))
        row0 = self.n_rows - (0 if self.carry is None else len(self.carry))  # log row of tab's first row
        tab = self._joined(pa.Table.from_batches([batch]))
        self.n_rows += batch.num_rows
        starts = self._query_starts(tab, row0)
        last_start = int(starts[-1])  # the last query may continue in the next batch: keep it back
        if last_start > 0:
            self._score(tab.slice(0, last_start), starts[:-1], row0)
        self.carry = tab.slice(last_start)

    def finish(self):
        """Score the carried query."""
        if self.carry is not None and len(self.carry):
            self._score(self.carry, np.zeros(1, dtype=np.int64), self.n_rows - len(self.carry))
            self.carry = None

    def close(self):
        """Close the output file (also after an error: the rows written so far stay readable)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def _joined(self, tab):
        """The carried rows followed by ``tab``, both cast (exactly) to the types that hold both.

        float64 rows carried into a float32 batch stay float64 (a cast to the batch's
        float32 would round them, so that distinct scores could tie); a value the common
        type cannot hold exactly (an int64 beyond 2**53 as float64) is an error.
        """
        import pyarrow as pa

        if self.carry is None:
            return tab
        carry = self.carry
        if carry.schema != tab.schema:
            try:
                if [_kind(f.type) for f in carry.schema] != [_kind(f.type) for f in tab.schema]:
                    raise pa.ArrowTypeError("numbers and text do not mix")
                try:
                    common = pa.unify_schemas([carry.schema, tab.schema], promote_options="permissive")
                except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                    common = tab.schema  # (bool and int8: the carry cast to the batch's type, exactly)
                carry, tab = carry.cast(common, safe=True), tab.cast(common, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as err:
                types = ", ".join(f"{f.name}: {f.type}" for f in tab.schema)
                before = ", ".join(f"{f.name}: {f.type}" for f in carry.schema)
                raise ValueError(f"the batch starting at row {self.n_rows} of the log has column types ({types}) "
                                 f"that the rows before it cannot take ({before}): {err}") from None
        return pa.concat_tables([carry, tab]).combine_chunks()

    def _query_starts(self, tab, row0):
        """Row (in ``tab``) where each query starts; refuses ids out of order."""
        q = _as_numpy(tab.column(0))
        first = q[0].as_py()
        if self.last_done is not None and not first > self.last_done:
            raise _unsorted_error(row0, self.last_done, first)
        change, down = _changes(q)
        if down >= 0:
            raise _unsorted_error(row0 + down, q[down - 1].as_py(), q[down].as_py())
        return np.concatenate(([0], change)).astype(np.int64)

    def _rows(self, table):
        """The row in the log as given of each row of ``table`` (``sort=True``), else None (its rows follow on)."""
        if self.input_rows is None:
            return None
        return np.asarray(_as_numpy(table.column(self.input_rows)).to_numpy(zero_copy_only=False), dtype=np.int64)

    def _score(self, tab, starts, row0):
        """Score the whole queries of ``tab`` (its first row is row ``row0`` of the log)."""
        import pyarrow as pa

        import rankjit
        from rankjit._validation import first_inexact_score
        from rankjit.io._frames import _labels, _numeric, _scores

        query, label, score = self.columns[:3]
        rows = self._rows(tab)
        ids = _as_numpy(tab.column(0)).take(pa.array(starts))
        y = _labels(_numeric(tab.column(1), label, "label"), label)
        s = _numeric(tab.column(2), score, "score")
        if rows is not None and s.dtype.kind in "iub":  # the message names the row of the log as given
            bad = first_inexact_score(s)
            if bad >= 0:
                _scores(s[bad:bad + 1], score, int(rows[bad]), "of the log")  # raises
        s = _scores(s, score, row0, "of the log")
        offsets = np.append(starts, len(tab)).astype(np.int64)
        piece = self._normaliser_piece(ids, starts, row0, rows)
        for i in range(3, len(self.columns)):  # judged=, pooled=: one flag per row
            piece[_ROLES[i]] = _flags(tab.column(i), self.columns[i], _ROLES[i])
        try:
            res = rankjit.evaluate(y, s, self.measures, offsets=offsets, ties=self.ties, per_query=True,
                                   **piece, **self.kwargs)
        except ValueError as err:
            raise _located(err, ids, starts, self.n_queries, row0, len(tab), rows) from None
        values = np.array([np.asarray(res[m], dtype=np.float64) for m in self.measures]).reshape(
            len(self.measures), len(starts))
        self.acc.add(values)
        if self.per_query:
            self.chunks.append(values)
            self.qid_chunks.append(ids)
        if self.output is not None:
            self._write(pa.table({query: ids, **{m: values[i] for i, m in enumerate(self.measures)}}))
        self.n_queries += len(starts)
        self.last_done = ids[len(ids) - 1].as_py()

    def _normaliser_piece(self, ids, starts, row0, rows=None):
        """The rows of ``n_relevant`` / ``ideal_counts`` for the queries ``ids`` (starting at ``starts``).

        ``rows``: the row in the log as given of each row of the piece (``sort=True``).
        """
        q0, k = self.n_queries, len(starts)
        piece = {}
        for name, a in self.normalisers.items():
            if q0 + k > a.shape[0]:
                q = a.shape[0] - q0  # the piece's first query without a count
                first = row0 + int(starts[q]) if rows is None else int(rows[int(starts[q])])
                raise ValueError(
                    f"{_held(name, a)} more queries: query {ids[q].as_py()!r} (index {a.shape[0]} in the log) starts "
                    f"at row {first} of the log"
                )
            piece[name] = a[q0:q0 + k]
        return piece

    def _write(self, table):
        if self.writer is None:
            import pyarrow.parquet as pq

            self.writer = pq.ParquetWriter(os.fspath(self.output), table.schema)
        self.writer.write_table(table)

    def result(self):
        """The :class:`StreamResult` (after :meth:`finish`)."""
        import pyarrow as pa

        if self.n_queries == 0:
            raise ValueError("the log holds no rows")
        for name, a in self.normalisers.items():
            if a.shape[0] != self.n_queries:
                raise ValueError(f"{_held(name, a)} {self.n_queries} queries")
        means = {m: float(v) for m, v in zip(self.measures, self.acc.means())}
        if not self.per_query:
            return StreamResult(means, self.n_queries, self.n_rows)
        per = np.concatenate(self.chunks, axis=1)
        qids = np.asarray(pa.concat_arrays(self.qid_chunks).to_pylist(), dtype=object)
        return StreamResult(means, self.n_queries, self.n_rows, {m: per[i] for i, m in enumerate(self.measures)},
                            qids)


#: the column of the sorted file that keeps each row's row in the log as given: the messages name that row
_INPUT_ROW = "__rankjit_input_row__"


def _external_sort(path, columns, tmpdir):
    import polars as pl

    out = os.path.join(tmpdir, "sorted.parquet")
    lf = pl.scan_parquet(os.fspath(path)).select(columns)
    lf = lf.with_row_index(_INPUT_ROW) if hasattr(lf, "with_row_index") else lf.with_row_count(_INPUT_ROW)
    lf.sort(columns[0], maintain_order=True).sink_parquet(out, row_group_size=1 << 20)
    return out


@contextlib.contextmanager
def _sorted(source, columns):
    """``source`` sorted by query out of core into a temporary Parquet file."""
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError("sort=True needs a Parquet path")
    _open_parquet(os.fspath(source))  # (a directory, a missing or damaged file: the error names it)
    with tempfile.TemporaryDirectory(prefix="rankjit-sort-") as tmp:
        yield _external_sort(source, columns, tmp)


def _check_batch_size(batch_size):
    if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")


def evaluate(source, measures, *, query, label, score, ties="pessimistic", per_query=False, output=None,
             progress=False, batch_size=1 << 20, sort=False, n_relevant=None, ideal_counts=None, judged=None,
             pooled=None, **kwargs):
    """Evaluate a log of (query, label, score) rows batch by batch.

    Parameters
    ----------
    source : str, os.PathLike, pyarrow.Table, RecordBatchReader or iterable of RecordBatch
        A Parquet file (read by row groups) or Arrow batches, in order.
    measures : str or sequence of str
        Names accepted by :func:`rankjit.evaluate`.
    query, label, score : str
        Column names.
    ties : str, default "pessimistic"
        As in :func:`rankjit.evaluate` ("stable" keeps the file order).
    per_query : bool, default False
        Also return per-query values (``result.per_query``, ``result.qids``).
    output : path, optional
        Write per-query values to this Parquet file as they are computed.
    progress : bool, default False
        Show a tqdm progress bar (the CLI turns it on only on a terminal).
    batch_size : int, default 1,048,576
        Rows per record batch read from Parquet or cut from a table.
    sort : bool, default False
        Sort a Parquet file by query out of core (polars) before streaming (stable: a
        query's rows keep their order).  Errors still give the file's rows as given.
    n_relevant : array of int, optional
        R of every query of the log, in the log's query order (ascending ids, the order
        ``sort=True`` gives), as in :func:`rankjit.evaluate`: one count per query, each at
        least the query's rows with ``label >= rel`` (checked).
    ideal_counts : (n_queries, n_grades) int array, optional
        Judged documents per grade of every query of the log, in the same order, as in
        :func:`rankjit.evaluate` (checked likewise).
    judged, pooled : str, optional
        Names of boolean columns: True for a judged row (a document the qrels judge), and
        for a row of the judging pool, as :func:`rankjit.evaluate`'s ``judged=`` and
        ``pooled=`` (``judged_only=True``, Judged@k, Bpref, infAP and the measures that
        give grade 0 a value read them).  None: every row is judged.
    **kwargs
        Passed to :func:`rankjit.evaluate` (``rel=``, ``empty=``...): single values only.
        Inputs with a value per row or per query (``nuggets=``, ``ideal=``, ...) are refused:
        they would have to follow the pieces of the log (only ``n_relevant`` and
        ``ideal_counts`` do).

    Returns
    -------
    StreamResult
        Per-query values and means equal, bit for bit, :func:`rankjit.evaluate` on the
        whole table, for any ``batch_size`` and any batching of the source.

    Raises
    ------
    ValueError
        If query ids are not sorted (the message says how to fix it); on a null or NaN
        query id, label or score (the message names the column and the row); on
        ``n_relevant`` / ``ideal_counts`` of the wrong shape or dtype, with another number
        of queries than the log (raised at the first query without a count, or at the
        end), or smaller than a query's rows; on any value :func:`rankjit.evaluate`
        refuses.  Rows are counted from 0 at the start of the log, across batches (with
        ``sort=True``: in the file as given, not in the sorted copy); queries are named by
        id, by their index in the log and, without a position, by their rows.
    KeyError
        If a column is missing.

    Examples
    --------
    >>> import pyarrow as pa
    >>> t = pa.table({"q": [1, 1, 2, 2, 2], "y": [1, 0, 0, 0, 1], "s": [.9, .1, .8, .7, .1]})
    >>> res = evaluate(t, ["RR"], query="q", label="y", score="s", batch_size=3)
    >>> res.means["RR"], res.n_queries
    (0.6666666666666666, 2)
    """
    if isinstance(measures, str):
        measures = [measures]
    measures = list(measures)
    if not measures:
        raise ValueError("no measures requested")
    _check_batch_size(batch_size)
    for name, value in kwargs.items():
        if np.ndim(value) > 0:
            raise ValueError(
                f"stream.evaluate: {name}= holds {np.shape(value)} values, but the log is evaluated piece by "
                "piece and only n_relevant= and ideal_counts= follow the pieces; evaluate the whole table with "
                "rankjit.evaluate for inputs given per row or per query"
            )
    columns = log_columns("stream.evaluate", "log", query, label, score, judged, pooled)
    if output is not None:
        _check_output(output)
    run = _Run(measures, columns, ties, kwargs, per_query, output, _normalisers(n_relevant, ideal_counts),
               _INPUT_ROW if sort else None)
    with contextlib.ExitStack() as stack:
        if sort:
            source = stack.enter_context(_sorted(source, columns))
        batches, total = _batch_source(source, columns + [_INPUT_ROW] if sort else columns, batch_size)
        bar = _progress_bar(stack, progress, total)
        stack.callback(run.close)
        for batch in batches:
            run.feed(batch)
            if bar is not None:
                bar.update(batch.num_rows)
        run.finish()
    return run.result()


def _progress_bar(stack, progress, total):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return stack.enter_context(tqdm(total=total, unit="rows", unit_scale=True, desc="score-log"))
