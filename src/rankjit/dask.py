"""Scale-out on Dask: evaluate a dask DataFrame of (query, label, score) rows.

Every query must sit whole in one partition.  If the frame is indexed by the query
column with known divisions (``ddf.set_index(query)``) that already holds; otherwise
the rows are shuffled on the query column.  Each partition is scored by the compiled
kernels, and the per-query values are combined into exact means: the sum is
correctly rounded (``math.fsum``), so the result does not depend on how queries
were spread over partitions or workers.  Per-query values are bit for bit those of
:func:`rankjit.evaluate`; its means (compensated sums of blocks of
1024 queries in the order given) can differ from these correctly rounded ones in the
last bit.

Null or NaN query ids, labels and scores are refused before any shuffle, by column,
partition of the input frame, row in that partition and index label (a global row
number is not known inside a partition).  Errors of :func:`rankjit.evaluate` inside a
partition name the query by its id.

Worker settings: kernels use ``numba.get_num_threads()`` threads per call -- set
``NUMBA_NUM_THREADS`` on workers to (cores / worker threads), and point
``NUMBA_CACHE_DIR`` at a node-local directory so compiled kernels are cached once per
node (see ``docs/scale.md``).
"""
from __future__ import annotations

import math
import re

import numpy as np

from rankjit.io._frames import LOG_ROLES as _ROLES, MISSING_ADVICE as _ADVICE, log_columns

__all__ = ["check_partition", "evaluate", "evaluate_partition"]


def check_partition(df, query, label, score, partition_info=None, *, judged=None, pooled=None):
    """Refuse the first null or NaN query id, label, score (or judged / pooled flag) of a pandas partition.

    The error names the column, the partition (when Dask passes ``partition_info``),
    the row in the partition (0-based) and its index label: a global row number is not
    known inside one partition.  Returns ``df`` unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"q": [1, None], "y": [1, 0], "s": [0.5, 0.2]})
    >>> try:
    ...     check_partition(df, "q", "y", "s")
    ... except ValueError as err:
    ...     print(str(err).split(";")[0])
    query column 'q' holds a NaN at row 1 of the partition (index label 1)
    """
    import pandas as pd

    hits = []
    for i, name in enumerate((query, label, score, judged, pooled)):
        if name is None:
            continue
        bad = np.flatnonzero(pd.isna(df[name]).to_numpy())
        if bad.size:
            hits.append((int(bad[0]), i, name))
    if not hits:
        return df
    r, i, name = min(hits)
    value = df[name].iloc[r]
    what = "NaN" if isinstance(value, float) and math.isnan(value) else "null"
    part = "the partition" if partition_info is None else f"partition {partition_info['number']}"
    where = f"row {r} of {part} (index label {_py(df.index[r])!r})"
    if i > 0 and not pd.isna(df[query].iloc[r]):
        where += f", in query {_py(df[query].iloc[r])!r}"
    raise ValueError(f"{_ROLES[i]} column {name!r} holds a {what} at {where}; {_ADVICE[_ROLES[i]]}")


def _numeric(series, name, role):
    """A numeric pandas column (numpy or nullable dtype, no missing value) as a numpy array."""
    if series.dtype.kind not in "iufb":
        raise ValueError(f"{role} column {name!r} must be numeric, got dtype {series.dtype}")
    return series.to_numpy(dtype=getattr(series.dtype, "numpy_dtype", series.dtype))


def _flags(series, name, role):
    """A boolean pandas column (numpy or nullable dtype, no missing value) as a numpy bool array."""
    if series.dtype.kind != "b":
        raise TypeError(f"{role} column {name!r} must be boolean (True = {role} document), got dtype {series.dtype}")
    return series.to_numpy(dtype=bool)


def _grouped(df, query):
    """(codes of the rows' queries, sorted unique ids); refuses ids that do not sort."""
    import pandas as pd

    try:
        return pd.factorize(df[query], sort=True)
    except TypeError as err:
        raise ValueError(f"query column {query!r} holds ids that cannot be sorted together ({err}); "
                         "give every query id the same type") from None


_QUERY_AT = re.compile(r"\bquery (\d+)")
_POSITION_AT = re.compile(r"\bposition (\d+)")


def _located(err, df, uniques, order, offsets):
    """``err`` of :func:`rankjit.evaluate` on a partition, with the query id and the row's index label."""
    msg = str(err)
    hit = _QUERY_AT.search(msg)
    q = int(hit.group(1)) if hit else -1
    if not 0 <= q < len(uniques):
        return ValueError(f"{msg} (in a partition holding queries {_py(uniques[0])!r} to {_py(uniques[-1])!r})")
    msg = f"{msg[:hit.start()]}query {_py(uniques[q])!r}{msg[hit.end():]}"
    pos = _POSITION_AT.search(msg, hit.start())
    if pos:  # a position in the query means nothing after a shuffle: the row's index label does
        row = int(order[offsets[q] + int(pos.group(1))])
        msg = f"{msg[:pos.start()]}the row with index label {_py(df.index[row])!r}{msg[pos.end():]}"
    return ValueError(msg)


def _py(value):
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def evaluate_partition(df, measures, query, label, score, ties="pessimistic", kwargs=None, *, judged=None,
                       pooled=None):
    """Per-query values of one pandas partition (every query whole in it).

    Returns a pandas DataFrame with the query column and one float64 column per
    measure.  Null or NaN query ids, labels and scores are refused by column and row
    (:func:`check_partition`); errors of :func:`rankjit.evaluate` name the query id.
    ``judged`` and ``pooled`` name boolean columns, passed as :func:`rankjit.evaluate`'s
    ``judged=`` and ``pooled=``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"q": [2, 1, 2], "y": [1, 1, 0], "s": [0.1, 0.5, 0.9]})
    >>> evaluate_partition(df, ["RR"], "q", "y", "s")["RR"].tolist()
    [1.0, 0.5]
    """
    import pandas as pd

    import rankjit
    from rankjit.io._frames import _labels, _scores

    if len(df) == 0:
        return pd.DataFrame({query: df[query].iloc[:0], **{m: np.zeros(0) for m in measures}})
    check_partition(df, query, label, score, judged=judged, pooled=pooled)
    codes, uniques = _grouped(df, query)
    order = np.argsort(codes, kind="stable")
    offsets = np.zeros(len(uniques) + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=len(uniques)), out=offsets[1:])
    y = _labels(_numeric(df[label], label, "label"), label)[order]
    s = _scores(_numeric(df[score], score, "score"), score, 0, "of the partition")[order]
    flags = {role: _flags(df[name], name, role)[order] for role, name in (("judged", judged), ("pooled", pooled))
             if name is not None}
    try:
        res = rankjit.evaluate(y, s, list(measures), offsets=offsets, ties=ties, per_query=True, **flags,
                               **(kwargs or {}))
    except ValueError as err:
        raise _located(err, df, uniques, order, offsets) from None
    return pd.DataFrame({query: uniques, **{m: np.asarray(res[m], dtype=np.float64) for m in measures}})


def _reduce(measure, values, n):
    """``measure`` over the queries from its per-query values, with ``math.fsum`` (n: the queries)."""
    from rankjit import _measures

    how = _measures.aggregate(measure)
    if how == "sum":
        return math.fsum(values)
    if how == "defined":  # Accuracy: the queries with a value (NaN: undefined, left out)
        values = values[~np.isnan(values)]
        return math.fsum(values) / values.shape[0] if values.shape[0] else math.nan
    return math.fsum(values) / n


def evaluate(ddf, measures, *, query, label, score, ties="pessimistic", per_query=False, shuffle=None, judged=None,
             pooled=None, **kwargs):
    """Evaluate a dask DataFrame on the cluster; exact means over all queries.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        Rows (query, label, score); the query may be a column or the index.
    measures : str or sequence of str
        Names accepted by :func:`rankjit.evaluate`.
    query, label, score : str
        Column names (``query`` may name the index).
    ties : str, default "pessimistic"
        "stable" is refused when a shuffle is needed (the shuffle loses row order).
    per_query : bool, default False
        Also return the per-query values as a pandas DataFrame sorted by query.
    shuffle : bool, optional
        Force (True) or skip (False) the shuffle on the query column.  By default it
        is skipped only when ``ddf`` is indexed by ``query`` with known divisions.
    judged, pooled : str, optional
        Names of boolean columns: True for a judged row (a document the qrels judge), and
        for a row of the judging pool, as :func:`rankjit.evaluate`'s ``judged=`` and
        ``pooled=`` (``judged_only=True``, Judged@k, Bpref, infAP and the measures that
        give grade 0 a value read them).  None: every row is judged.
    **kwargs
        Passed to :func:`rankjit.evaluate`.

    Returns
    -------
    dict or (dict, pandas.DataFrame)
        Measure -> mean (correctly rounded sum of per-query values / number of queries).

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> pdf = pd.DataFrame({"q": [1, 1, 2, 2], "y": [1, 0, 0, 1], "s": [0.9, 0.1, 0.8, 0.3]})
    >>> evaluate(dd.from_pandas(pdf, npartitions=2), ["RR"], query="q", label="y", score="s")
    {'RR': 0.75}
    """
    import pandas as pd

    if isinstance(measures, str):
        measures = [measures]
    measures = list(measures)
    if not measures:
        raise ValueError("no measures requested")
    from rankjit import _measures

    for m in measures:
        _measures.parse(m)
    frame = ddf
    index_is_query = frame.index.name == query and query not in frame.columns
    cols = list(frame.columns)
    names = log_columns("dask.evaluate", "frame", query, label, score, judged, pooled)
    roles = list(zip(_ROLES, names))
    for role, name in roles[1:]:
        if name not in cols:
            raise KeyError(f"{role} column {name!r} not found; columns: {', '.join(map(str, cols))}")
    if not index_is_query and query not in cols:
        raise KeyError(f"query column {query!r} not found; columns: {', '.join(map(str, cols))}")
    if shuffle is None:
        shuffle = not (index_is_query and frame.known_divisions)
    if index_is_query:
        frame = frame.reset_index()
    # refused here, before a shuffle moves rows: the error names the partition of ``ddf``
    frame = frame[[query, label, score] + [c for c in (judged, pooled) if c is not None]]
    frame = frame.map_partitions(check_partition, query, label, score, judged=judged, pooled=pooled, meta=frame._meta)
    if shuffle:
        if ties == "stable":
            raise ValueError("ties='stable' needs the original row order, which a shuffle loses; "
                             "set_index(query) first or choose another tie rule")
        frame = frame.shuffle(on=query)
    meta = pd.DataFrame({query: frame[query]._meta, **{m: pd.Series(dtype="float64") for m in measures}})
    parts = frame.map_partitions(evaluate_partition, measures, query, label, score, ties, kwargs, judged=judged,
                                 pooled=pooled, meta=meta)
    result = parts.compute()
    if result[query].duplicated().any():
        dup = result[query][result[query].duplicated()].iloc[0]
        raise ValueError(f"query {dup!r} was split across partitions; use shuffle=True")
    n = len(result)
    if n == 0:
        raise ValueError("the frame holds no rows")
    # means, but the counts (NumQ, NumRet, ...) summed and Accuracy over its defined queries, as rankjit.evaluate
    means = {m: _reduce(m, result[m].to_numpy(), n) for m in measures}
    if per_query:
        return means, result.sort_values(query, kind="stable").reset_index(drop=True)
    return means
