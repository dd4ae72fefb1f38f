"""Tables with named query, label and score columns: Arrow, Parquet, pandas, polars.

Each reader returns a :class:`RaggedBatch` (the core's CSR layout).  Query ids are
dictionary-encoded by pyarrow (or taken as integers as they are), so grouping never
creates a Python object per row.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

__all__ = ["RaggedBatch", "from_arrow", "from_pandas", "from_polars", "read_parquet", "evaluate_frame"]


@dataclass(frozen=True, eq=False)
class RaggedBatch:
    """Queries as one flat array per column plus CSR offsets.

    Attributes
    ----------
    qids : numpy.ndarray
        Query ids in batch order (one per query).
    offsets : numpy.ndarray of int64, shape (n_queries + 1,)
    labels : numpy.ndarray
    scores : numpy.ndarray of float32 or float64

    Examples
    --------
    >>> import numpy as np
    >>> b = RaggedBatch(np.array(["q1"]), np.array([0, 2]), np.array([1, 0]), np.array([0.5, 0.2]))
    >>> b.n_queries
    1
    """

    qids: np.ndarray
    offsets: np.ndarray
    labels: np.ndarray
    scores: np.ndarray

    @property
    def n_queries(self):
        return self.offsets.shape[0] - 1

    def evaluate(self, measures, **kwargs):
        """:func:`rankjit.evaluate` on this batch (keywords passed through)."""
        import rankjit

        return rankjit.evaluate(self.labels, self.scores, measures, offsets=self.offsets, **kwargs)


#: the columns of a log of (query, label, score) rows and its optional flags, in this order
#: (:func:`log_columns`; ``rankjit.stream``, ``rankjit.dask``)
LOG_ROLES = ("query", "label", "score", "judged", "pooled")
#: what to do about a null (or NaN) in a column of each role
MISSING_ADVICE = {
    "query": "every row needs a query id: drop those rows or give them an id",
    "label": "give unjudged documents label 0, or drop those rows",
    "score": "replace missing scores (e.g. with -inf to rank them last), or drop those rows",
    "judged": "mark each row judged (True) or not (False)",
    "pooled": "mark each row pooled (True) or not (False)",
}


def log_columns(caller, container, query, label, score, judged=None, pooled=None):
    """The column names of a log in :data:`LOG_ROLES` order, the flags' when given.

    Refuses a ``judged=`` / ``pooled=`` that is not a column name, ``pooled=`` without
    ``judged=`` and a column given two roles (``caller`` and ``container`` name the call and
    what holds the columns, for the messages).
    """
    for role, name in (("judged", judged), ("pooled", pooled)):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{caller}: {role}= names a boolean column of the {container}, got {type(name).__name__}")
    if pooled is not None and judged is None:
        raise ValueError("pooled= needs judged=: a pooled document is unjudged only when judged= says so")
    columns = [query, label, score] + [c for c in (judged, pooled) if c is not None]
    for i, name in enumerate(columns):
        if name in columns[:i]:
            raise ValueError(f"the {LOG_ROLES[i]} column {name!r} is also the {LOG_ROLES[columns.index(name)]} "
                             "column: give each role its own column")
    return columns


def _column(table, name, role):
    if name not in table.column_names:
        raise KeyError(f"{role} column {name!r} not found; columns: {', '.join(table.column_names)}")
    col = table.column(name)
    row = first_missing(col)
    if row >= 0 and (col.null_count or role == "query"):
        what = f"{col.null_count} null value(s)" if col.null_count else "NaN"
        raise ValueError(f"{role} column {name!r} holds {what}; the first at row {row} (0-based)")
    return col


def first_missing(col):
    """Row of the first null (or, in a float column, NaN) of an Arrow column, or -1.

    Parameters
    ----------
    col : pyarrow.Array or pyarrow.ChunkedArray

    Returns
    -------
    int

    Examples
    --------
    >>> import pyarrow as pa
    >>> first_missing(pa.array([1.0, float("nan"), None])), first_missing(pa.array(["a"]))
    (1, -1)
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if pa.types.is_dictionary(t):
        if col.null_count == 0 and not pa.types.is_floating(t.value_type):
            return -1
        col = col.cast(t.value_type)
        t = col.type
    if col.null_count == 0 and not pa.types.is_floating(t):
        return -1
    return int(pc.index(pc.is_null(col, nan_is_null=True), True).as_py())


def _numeric(col, name, role):
    import pyarrow as pa

    t = col.type
    if pa.types.is_dictionary(t):
        col = col.cast(t.value_type)
        t = col.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
        raise ValueError(f"{role} column {name!r} must be numeric, got {t}")
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    return np.asarray(col.to_numpy(zero_copy_only=False))  # no copy but for booleans (bit-packed)


def _scores(arr, name, first_row=0, where="of the table"):
    """A score column as float32 / float64 (other dtypes converted), refusing integers float64 cannot hold."""
    if arr.dtype == np.float32 or arr.dtype == np.float64:
        return arr
    from rankjit._validation import INEXACT_SCORE, first_inexact_score

    bad = first_inexact_score(arr)
    if bad >= 0:
        raise ValueError(
            f"score column {name!r}, row {first_row + bad} {where} (0-based): {arr[bad]} ({arr.dtype}) {INEXACT_SCORE}"
        )
    return arr.astype(np.float64)


#: floats below this magnitude that are whole numbers convert to int64 exactly
_EXACT_INT = 2.0 ** 53


def _labels(arr, name):
    if arr.dtype == np.bool_:
        return arr.astype(np.int8)
    if arr.dtype.kind == "f":
        # whole grades stored as floats become int64; only below 2**53, where each is exact
        # (a larger float would not survive the cast: 1e30 would wrap to a negative grade)
        if arr.size and np.all(np.abs(arr) < _EXACT_INT) and np.all(arr == np.floor(arr)):
            return arr.astype(np.int64)
        return arr  # gains, probabilities or huge/non-finite grades: the core validates them
    return arr


def _query_codes(col):
    """Integer codes per row (first-appearance order) and the id of each code."""
    import pyarrow as pa

    t = col.type
    if pa.types.is_integer(t):
        arr = np.asarray(col.to_numpy() if isinstance(col, pa.Array) else col.combine_chunks().to_numpy())
        return arr, None
    enc = col.dictionary_encode() if not pa.types.is_dictionary(t) else col
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.unify_dictionaries().combine_chunks() if enc.num_chunks != 1 else enc.chunk(0)
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return codes, enc.dictionary


def from_arrow(table, *, query, label, score):
    """Group an Arrow table (or record batch) by its query column.

    Rows of a query need not be contiguous: they are grouped with a stable sort
    (their relative order, which matters for ``ties="stable"``, is kept).

    Parameters
    ----------
    table : pyarrow.Table or pyarrow.RecordBatch
    query, label, score : str
        Column names.

    Returns
    -------
    RaggedBatch

    Raises
    ------
    KeyError
        If a column is missing.
    ValueError
        On null values or non-numeric label/score columns.

    Examples
    --------
    >>> import pyarrow as pa
    >>> t = pa.table({"q": ["a", "b", "a"], "y": [1, 0, 0], "s": [0.3, 0.2, 0.9]})
    >>> b = from_arrow(t, query="q", label="y", score="s")
    >>> b.qids.tolist(), b.offsets.tolist(), b.labels.tolist()
    (['a', 'b'], [0, 2, 3], [1, 0, 0])
    """
    import pyarrow as pa

    import rankjit

    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    q = _column(table, query, "query")
    y = _labels(_numeric(_column(table, label, "label"), label, "label"), label)
    s = _scores(_numeric(_column(table, score, "score"), score, "score"), score)
    if pa.types.is_nested(q.type) or pa.types.is_null(q.type):
        raise _bad_query_type(query, q.type)
    if len(table) == 0:
        return RaggedBatch(np.zeros(0, dtype=object), np.zeros(1, np.int64), y, s)
    try:
        codes, dictionary = _query_codes(q)
    except pa.ArrowNotImplementedError:  # (a type pyarrow cannot dictionary-encode)
        raise _bad_query_type(query, q.type) from None
    offsets, order, firsts = rankjit.offsets_from_qids(codes)
    if order is not None:
        y = y[order]
        s = s[order]
    if dictionary is not None:
        qids = np.asarray(dictionary.take(pa.array(firsts)).to_pylist(), dtype=object)
    else:
        qids = firsts
    return RaggedBatch(qids, offsets, y, s)


def _bad_query_type(name, arrow_type):
    return ValueError(f"query column {name!r} holds {arrow_type} values, which cannot be grouped as query ids; "
                      "give each row an integer or string id (e.g. join a list into one string)")


def _python_types(series):
    """The Python types of the values of an object column that are not missing, by name, sorted."""
    import pandas as pd

    return sorted({type(v).__name__ for v in series if not (v is None or v is pd.NA or v != v)})


def _pandas_column_error(df, roles, exc):
    """The error for a DataFrame Arrow cannot convert (``exc``): the column, the types found, what to do."""
    import pyarrow as pa

    for role, name in roles:
        col = df[name]
        try:
            pa.Array.from_pandas(col)
            continue
        except (pa.ArrowException, TypeError, ValueError) as column_exc:
            exc = column_exc
        why = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
        types = _python_types(col) if col.dtype == object else [str(col.dtype)]
        fix = (f"df[{name!r}].astype(str)" if role == "query" else f"pd.to_numeric(df[{name!r}])")
        if len(types) > 1:
            return ValueError(f"{role} column {name!r} mixes value types ({', '.join(types)}); a column needs one "
                              f"type: convert it, e.g. df[{name!r}] = {fix}")
        return ValueError(f"{role} column {name!r} holds {', '.join(types)} values that Arrow cannot convert "
                          f"({why.splitlines()[0] if why else type(exc).__name__}); convert it, e.g. "
                          f"df[{name!r}] = {fix}")
    return ValueError(f"the DataFrame cannot be converted to Arrow: {exc}")


def from_pandas(df, *, query, label, score):
    """Group a pandas DataFrame by its query column (see :func:`from_arrow`).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"q": [7, 7, 3], "y": [1, 0, 2], "s": [0.1, 0.2, 0.3]})
    >>> from_pandas(df, query="q", label="y", score="s").offsets.tolist()
    [0, 2, 3]
    """
    import pyarrow as pa

    for role, name in (("query", query), ("label", label), ("score", score)):
        if name not in df.columns:
            raise KeyError(f"{role} column {name!r} not found; columns: {', '.join(map(str, df.columns))}")
    try:
        table = pa.Table.from_pandas(df[[query, label, score]], preserve_index=False)
    except (pa.ArrowException, TypeError) as exc:  # (e.g. ints and strs in one object column)
        raise _pandas_column_error(df, (("query", query), ("label", label), ("score", score)), exc) from None
    return from_arrow(table, query=query, label=label, score=score)


def from_polars(df, *, query, label, score):
    """Group a polars DataFrame by its query column (see :func:`from_arrow`).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"q": ["a", "a"], "y": [0, 1], "s": [0.5, 0.7]})
    >>> from_polars(df, query="q", label="y", score="s").qids.tolist()
    ['a']
    """
    for role, name in (("query", query), ("label", label), ("score", score)):
        if name not in df.columns:
            raise KeyError(f"{role} column {name!r} not found; columns: {', '.join(df.columns)}")
    return from_arrow(df.select([query, label, score]).to_arrow(), query=query, label=label, score=score)


def read_parquet(path, *, query, label, score):
    """Read the three columns of a Parquet file (in memory) and group by query.

    For files larger than memory use :func:`rankjit.stream.evaluate`.

    Examples
    --------
    >>> import pyarrow as pa, pyarrow.parquet as pq, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "log.parquet")
    >>> pq.write_table(pa.table({"q": [1, 1], "y": [1, 0], "s": [0.2, 0.4]}), p)
    >>> read_parquet(p, query="q", label="y", score="s").labels.tolist()
    [1, 0]
    """
    import pyarrow.parquet as pq

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    names = pq.read_schema(path).names
    for role, name in (("query", query), ("label", label), ("score", score)):
        if name not in names:
            raise KeyError(f"{role} column {name!r} not found in {path}; columns: {', '.join(names)}")
    table = pq.read_table(path, columns=[query, label, score])
    return from_arrow(table, query=query, label=label, score=score)


def evaluate_frame(frame, measures, *, query, label, score, **kwargs):
    """Evaluate a pandas/polars DataFrame or Arrow table in one call.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"q": [1, 1, 2, 2], "y": [1, 0, 0, 1], "s": [0.9, 0.1, 0.8, 0.3]})
    >>> evaluate_frame(df, ["RR"], query="q", label="y", score="s")
    {'RR': 0.75}
    """
    kind = type(frame).__module__.split(".")[0]
    if kind == "pandas":
        batch = from_pandas(frame, query=query, label=label, score=score)
    elif kind == "polars":
        batch = from_polars(frame, query=query, label=label, score=score)
    elif kind == "pyarrow":
        batch = from_arrow(frame, query=query, label=label, score=score)
    else:
        raise TypeError(f"expected a pandas/polars DataFrame or a pyarrow Table, got {type(frame).__name__}")
    return batch.evaluate(measures, **kwargs)
