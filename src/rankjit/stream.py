"""Evaluate logs larger than memory, one Arrow record batch at a time.

Rows must come grouped by query with query ids in non-decreasing order (the order
a ``sort by query`` produces).  A query cut by a batch boundary is carried over to
the next batch and scored once, whole.  Unsorted ids are detected and reported with
the fix (sort the file, or pass ``sort=True`` for an out-of-core sort with polars).

Memory is bounded by one record batch plus the per-query results (8 bytes per query
and measure).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

__all__ = ["StreamResult", "evaluate"]


@dataclass
class StreamResult:
    """Outcome of :func:`evaluate`.

    Attributes
    ----------
    means : dict
        Measure -> mean over all queries (the same value :func:`rankjit.evaluate`
        gives on the whole table).
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
    """(iterator of RecordBatches, total rows or None, schema names)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file")
        pf = pq.ParquetFile(path)
        names = pf.schema_arrow.names
        _check_columns(names, columns, path)
        return pf.iter_batches(batch_size=batch_size, columns=columns), pf.metadata.num_rows
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


def _check_columns(names, columns, where):
    roles = ("query", "label", "score")
    for role, name in zip(roles, columns):
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
    """Row indices i (>= 1) where q[i] != q[i-1], and whether q is non-decreasing."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(q)
    if n < 2:
        return np.zeros(0, dtype=np.int64), True
    a, b = q.slice(1), q.slice(0, n - 1)
    if pa.types.is_integer(q.type) or pa.types.is_floating(q.type):
        qa = q.to_numpy()
        diff = qa[1:] != qa[:-1]
        return np.flatnonzero(diff) + 1, bool(np.all(qa[1:] >= qa[:-1]))
    ne = np.asarray(pc.not_equal(a, b).to_numpy(zero_copy_only=False), dtype=bool)
    sorted_ = not bool(pc.any(pc.less(a, b)).as_py())
    return np.flatnonzero(ne) + 1, sorted_


def _unsorted_error(where, prev, cur):
    return ValueError(
        f"query ids are not sorted ({where}: {cur!r} comes after {prev!r}); rows of a query must be "
        "contiguous and ids non-decreasing. Sort the log by the query column first (e.g. "
        "polars: pl.scan_parquet(p).sort(query).sink_parquet(out)), or pass sort=True"
    )


def _external_sort(path, query, label, score, tmpdir):
    import polars as pl

    out = os.path.join(tmpdir, "sorted.parquet")
    (pl.scan_parquet(os.fspath(path)).select([query, label, score])
     .sort(query, maintain_order=True).sink_parquet(out, row_group_size=1 << 20))
    return out


def evaluate(source, measures, *, query, label, score, ties="pessimistic", per_query=False, output=None,
             progress=False, batch_size=1 << 20, sort=False, **kwargs):
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
        Rows per record batch read from Parquet.
    sort : bool, default False
        Sort a Parquet file by query out of core (polars) before streaming.
    **kwargs
        Passed to :func:`rankjit.evaluate` (``rel=``, ``empty=``...).

    Returns
    -------
    StreamResult

    Raises
    ------
    ValueError
        If query ids are not sorted (the message says how to fix it).
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
    import pyarrow as pa

    import rankjit

    if isinstance(measures, str):
        measures = [measures]
    measures = list(measures)
    if not measures:
        raise ValueError("no measures requested")
    columns = [query, label, score]
    tmp = None
    try:
        if sort:
            if not isinstance(source, (str, os.PathLike)):
                raise TypeError("sort=True needs a Parquet path")
            if not os.path.exists(os.fspath(source)):
                raise FileNotFoundError(f"{os.fspath(source)}: no such file")
            tmp = tempfile.TemporaryDirectory(prefix="rankjit-sort-")
            source = _external_sort(source, query, label, score, tmp.name)
        batches, total = _batch_source(source, columns, batch_size)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=total, unit="rows", unit_scale=True, desc="score-log")
        writer = None
        chunks = {m: [] for m in measures}
        qid_chunks = []
        carry = None  # rows of the last, maybe unfinished, query
        last_done = None  # id of the last completed query
        n_rows = 0
        n_queries = 0

        def score_part(tab):
            nonlocal writer, n_queries, last_done
            q = _as_numpy(tab.column(query))
            starts = tab._starts
            offsets = np.append(starts, len(tab)).astype(np.int64)
            from rankjit.io._frames import _labels, _numeric

            y = _labels(_numeric(tab.column(label), label, "label"), label)
            s = _numeric(tab.column(score), score, "score")
            if s.dtype not in (np.float32, np.float64):
                s = s.astype(np.float64)
            res = rankjit.evaluate(y, s, measures, offsets=offsets, ties=ties, per_query=True, **kwargs)
            ids = q.take(pa.array(starts))
            for m in measures:
                chunks[m].append(np.asarray(res[m], dtype=np.float64))
            if per_query:
                qid_chunks.append(ids)
            if output is not None:
                table = pa.table({query: ids, **{m: res[m] for m in measures}})
                if writer is None:
                    import pyarrow.parquet as pq

                    writer = pq.ParquetWriter(os.fspath(output), table.schema)
                writer.write_table(table)
            n_queries += len(starts)
            last_done = ids[len(ids) - 1].as_py()

        for batch in batches:
            if not isinstance(batch, pa.RecordBatch):
                raise TypeError(f"expected pyarrow RecordBatch items, got {type(batch).__name__}")
            if batch.num_rows == 0:
                continue
            _check_columns(batch.schema.names, columns, "batch")
            tab = pa.Table.from_batches([batch.select(columns)])
            n_rows += batch.num_rows
            if bar is not None:
                bar.update(batch.num_rows)
            if carry is not None:
                tab = pa.concat_tables([carry, tab]).combine_chunks()
            q = _as_numpy(tab.column(query))
            first = q[0].as_py()
            if last_done is not None and not (first > last_done):
                raise _unsorted_error(f"row {n_rows - batch.num_rows + 1 - (0 if carry is None else len(carry))}",
                                      last_done, first)
            change, ok = _changes(q)
            if not ok:
                i = int(np.flatnonzero(np.asarray(
                    (q.slice(1).to_numpy(zero_copy_only=False) < q.slice(0, len(q) - 1).to_numpy(zero_copy_only=False))
                ))[0]) + 1
                raise _unsorted_error(f"batch ending at row {n_rows}", q[i - 1].as_py(), q[i].as_py())
            starts = np.concatenate(([0], change)).astype(np.int64)
            # the last query may continue in the next batch: keep it back
            last_start = int(starts[-1])
            if last_start > 0:
                done = tab.slice(0, last_start)
                done = _with_starts(done, starts[:-1])
                score_part(done)
            carry = tab.slice(last_start)
        if carry is not None and len(carry):
            score_part(_with_starts(carry, np.zeros(1, dtype=np.int64)))
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
        if n_queries == 0:
            raise ValueError("the log holds no rows")
        per = {m: np.concatenate(chunks[m]) for m in measures}
        means = {m: float(np.mean(per[m])) for m in measures}
        qids = None
        if per_query:
            qids = np.asarray(pa.concat_arrays([c for c in qid_chunks]).to_pylist()
                              if qid_chunks else [], dtype=object)
        return StreamResult(means, n_queries, n_rows, per if per_query else None, qids)
    finally:
        if tmp is not None:
            tmp.cleanup()


class _Part:
    """A table slice with the start row of each of its queries."""

    __slots__ = ("_t", "_starts")

    def __init__(self, table, starts):
        self._t = table
        self._starts = starts

    def column(self, name):
        return self._t.column(name)

    def __len__(self):
        return len(self._t)


def _with_starts(table, starts):
    return _Part(table, starts)
