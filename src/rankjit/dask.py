"""Scale-out on Dask: evaluate a dask DataFrame of (query, label, score) rows.

Every query must sit whole in one partition.  If the frame is indexed by the query
column with known divisions (``ddf.set_index(query)``) that already holds; otherwise
the rows are shuffled on the query column.  Each partition is scored by the compiled
kernels, and the per-query values are combined into exact means: the sum is
correctly rounded (``math.fsum``), so the result does not depend on how queries
were spread over partitions or workers.

Worker settings: kernels use ``numba.get_num_threads()`` threads per call -- set
``NUMBA_NUM_THREADS`` on workers to (cores / worker threads), and point
``NUMBA_CACHE_DIR`` at a node-local directory so compiled kernels are cached once per
node (see ``docs/scale.md``).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["evaluate", "evaluate_partition"]


def evaluate_partition(df, measures, query, label, score, ties="pessimistic", kwargs=None):
    """Per-query values of one pandas partition (every query whole in it).

    Returns a pandas DataFrame with the query column and one float64 column per
    measure.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"q": [2, 1, 2], "y": [1, 1, 0], "s": [0.1, 0.5, 0.9]})
    >>> evaluate_partition(df, ["RR"], "q", "y", "s")["RR"].tolist()
    [1.0, 0.5]
    """
    import pandas as pd

    import rankjit

    if len(df) == 0:
        return pd.DataFrame({query: df[query].iloc[:0], **{m: np.zeros(0) for m in measures}})
    q = df[query].to_numpy()
    codes, uniques = pd.factorize(q, sort=True)
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(uniques))
    offsets = np.zeros(len(uniques) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    y = df[label].to_numpy()[order]
    s = df[score].to_numpy()[order]
    if y.dtype.kind == "f" and np.all(y == np.floor(y)):
        y = y.astype(np.int64)
    if s.dtype not in (np.float32, np.float64):
        s = s.astype(np.float64)
    res = rankjit.evaluate(y, s, list(measures), offsets=offsets, ties=ties, per_query=True, **(kwargs or {}))
    return pd.DataFrame({query: uniques, **{m: np.asarray(res[m], dtype=np.float64) for m in measures}})


def evaluate(ddf, measures, *, query, label, score, ties="pessimistic", per_query=False, shuffle=None, **kwargs):
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
    for role, name in (("label", label), ("score", score)):
        if name not in cols:
            raise KeyError(f"{role} column {name!r} not found; columns: {', '.join(map(str, cols))}")
    if not index_is_query and query not in cols:
        raise KeyError(f"query column {query!r} not found; columns: {', '.join(map(str, cols))}")
    if shuffle is None:
        shuffle = not (index_is_query and frame.known_divisions)
    if index_is_query:
        frame = frame.reset_index()
    if shuffle:
        if ties == "stable":
            raise ValueError("ties='stable' needs the original row order, which a shuffle loses; "
                             "set_index(query) first or choose another tie rule")
        frame = frame[[query, label, score]].shuffle(on=query)
    meta = pd.DataFrame({query: frame[query]._meta, **{m: pd.Series(dtype="float64") for m in measures}})
    parts = frame.map_partitions(evaluate_partition, measures, query, label, score, ties, kwargs, meta=meta)
    result = parts.compute()
    if result[query].duplicated().any():
        dup = result[query][result[query].duplicated()].iloc[0]
        raise ValueError(f"query {dup!r} was split across partitions; use shuffle=True")
    n = len(result)
    if n == 0:
        raise ValueError("the frame holds no rows")
    means = {m: math.fsum(result[m].to_numpy()) / n for m in measures}
    if per_query:
        return means, result.sort_values(query, kind="stable").reset_index(drop=True)
    return means
