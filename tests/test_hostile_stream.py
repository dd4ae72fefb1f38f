"""Hostile input to ``rankjit.stream`` and ``rankjit.dask``: refused by name, or the numbers of ``rankjit.evaluate``.

Expectations are derived from the input itself (which row holds the first null, which
row a label error points at) and from :func:`rankjit.evaluate` on the equivalent flat
arrays with CSR offsets built here -- never from the code under test.  Tables are
small (at most 12 queries of 6 rows), so every example is bounded in memory; each
property has a fixed number of examples and a per-example deadline, and the kernels
it needs are compiled once before it starts (a compile must not count against the
deadline).
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import math
import os
import re
import time
import warnings
from datetime import timedelta

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import rankjit  # noqa: E402
from rankjit.stream import evaluate as stream_evaluate  # noqa: E402

JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT") == "1"
MEASURES = ["RR", "P@3", "nDCG@5", "AP"]
LABEL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
                "float64"]
SCORE_DTYPES = ["float16", "float32", "float64"]
#: values far from the ordinary grades 0..3, by dtype (only these dtypes get them: each
#: further engine dtype would be compiled, seconds each, on a cold cache)
EXTREMES = {
    "int8": [-128, 127, -1],
    "uint8": [255],
    "int64": [2**62, -(2**63), -1],
    "uint64": [2**64 - 1, 2**63],
    "float64": [1e300, -1.0, np.inf, -np.inf, 1e30, 2.0**53 + 2, 0.5],
}
ROLES = ("query", "label", "score")
COLS = ("q", "y", "s")


def _settings(n):
    """A bounded property: ``n`` examples (fewer without the JIT, 10x with HYPOTHESIS_PROFILE=thorough).

    Hypothesis's deadline is only a backstop against a runaway example (a compile of a
    kernel, seconds on a loaded machine, must not fail a test); :func:`_bounded` holds
    each example that compiles nothing to a tight limit.
    """
    n = n * 10 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else n
    return settings(max_examples=max(4, n // 5) if JIT_DISABLED else n,
                    deadline=None if JIT_DISABLED else timedelta(seconds=120),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class _Notices(logging.Handler):
    """Counts the compile notices of the ``rankjit`` logger."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record):
        self.count += "compiling" in record.getMessage()


@contextlib.contextmanager
def _bounded(seconds):
    """Fail an example that takes longer than ``seconds`` although it compiled no kernel."""
    if JIT_DISABLED:
        yield
        return
    notices = _Notices()
    logger = logging.getLogger("rankjit")
    logger.addHandler(notices)
    start = time.perf_counter()
    try:
        yield
    finally:
        logger.removeHandler(notices)
    took = time.perf_counter() - start
    assert notices.count or took < seconds, f"the example took {took:.1f} s (limit {seconds} s)"


def _warm_up():
    """Compile the kernels the properties reach, so that no compile counts against a deadline.

    The scan for every label and score dtype, and the engine for the dtypes it then sees
    (grades 0..255 narrowed to uint8, int64 / uint64 / float64 grades beyond, fractional gains).
    """
    off = np.array([0, 2, 3])
    small = [np.array([0, 1, 1], dt) for dt in LABEL_DTYPES] + [np.array([0, 1, 255], np.uint8)]
    wide = [np.array([0, 1, 2**40], np.int64), np.array([0, 1, 2**63], np.uint64), np.array([0, 1, 0.5]),
            np.array([0, 1, 1e300]), np.array([0, 1, -1], np.int8), np.array([0, 1, -1.0])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for y in small + wide:
            for sdt in SCORE_DTYPES:
                s = np.array([.3, .2, .1], sdt)
                for per_query in (False, True):
                    try:
                        rankjit.evaluate(y, s, MEASURES, offsets=off, per_query=per_query)
                    except ValueError:
                        pass  # refused (a gain that overflows, a negative grade): compiled up to the refusal


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    if not JIT_DISABLED:
        _warm_up()


# --------------------------------------------------------------------------------------------- data


@st.composite
def tables(draw, extremes=True, min_queries=0):
    """A clean log as numpy columns, sorted by query: dict with q, y, s, extreme (bool per row)."""
    n_q = draw(st.integers(min_queries, 12))
    sizes = draw(st.lists(st.integers(1, 6), min_size=n_q, max_size=n_q))
    n = int(sum(sizes))
    kind = draw(st.sampled_from(["int", "str", "float", "dict"]))
    qnum = np.repeat(np.arange(n_q), sizes)
    q = {"int": qnum * 7 - 20, "float": qnum * 0.5 - 1.0}.get(kind, np.array([f"q{i:02d}" for i in qnum], dtype=str))
    ldt = draw(st.sampled_from(LABEL_DTYPES))
    hi = 1 if ldt == "bool" else 3
    y = np.array(draw(st.lists(st.integers(0, hi), min_size=n, max_size=n)), dtype=np.int64)
    y = y.astype(ldt) if ldt != "float64" or not draw(st.booleans()) else y + 0.25  # fractional gains too
    extreme = np.zeros(n, dtype=bool)
    if extremes and n and ldt in EXTREMES and draw(st.booleans()):
        rows = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))
        for r in rows:
            y[r] = draw(st.sampled_from(EXTREMES[ldt]))
            extreme[r] = True
    sdt = draw(st.sampled_from(SCORE_DTYPES))
    score = st.floats(-4, 4) | st.floats(allow_nan=False) if extremes else st.floats(-4, 4)
    with np.errstate(over="ignore"):  # huge values become +-inf in float16 / float32: extremes too
        s = np.array(draw(st.lists(score, min_size=n, max_size=n)), dtype=np.float64).astype(sdt)
    return {"q": q, "y": y, "s": s, "extreme": extreme, "kind": kind}


def _arrow(t, nulls=()):
    """The log as a pyarrow Table; ``nulls``: (row, column) cells made null."""
    cols = {}
    for c in COLS:
        values = t[c]
        mask = np.zeros(len(values), dtype=bool)
        for r, col in nulls:
            mask[r] |= col == c
        arr = pa.array(values, mask=mask if mask.any() else None)
        if c == "q" and t["kind"] == "dict":
            arr = arr.dictionary_encode()
        cols[c] = arr
    return pa.table(cols)


def _offsets(q):
    """CSR offsets of a query column whose rows are grouped (built here, not by rankjit)."""
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    return np.concatenate(([0], change, [len(q)])).astype(np.int64)


def _reference(y, s, off):
    """rankjit.evaluate on the flat arrays: (per-query dict, means dict) or the exception."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return (rankjit.evaluate(y, s, MEASURES, offsets=off, per_query=True),
                    rankjit.evaluate(y, s, MEASURES, offsets=off)), None
    except (ValueError, TypeError) as err:
        return None, err


def _same(a, b):
    """Bitwise equal floats, NaN equal to NaN."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def _batches(table, cuts):
    """The table as record batches cut at ``cuts`` (empty batches included when cuts repeat)."""
    bounds = [0, *sorted(cuts), table.num_rows]
    return [table.slice(lo, hi - lo).combine_chunks().to_batches()[0] if hi > lo
            else pa.RecordBatch.from_pylist([], schema=table.schema) for lo, hi in itertools.pairwise(bounds)]


def _run_stream(table, batching, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(batching, int):
            return stream_evaluate(table, MEASURES, query="q", label="y", score="s", batch_size=batching, **kw)
        return stream_evaluate(iter(_batches(table, batching)), MEASURES, query="q", label="y", score="s", **kw)


def batchings(n):
    """A batch size, or cut points for an iterable of record batches."""
    return st.one_of(st.integers(1, n + 2), st.lists(st.integers(0, n), max_size=6))


# ------------------------------------------------------------------------------------ stream: nulls


@pytest.mark.parametrize("batch_size", [1, 2, 3, 4, 5, 100])
def test_null_string_id_is_refused_not_merged(batch_size):
    t = pa.table({"q": ["a", "b", None, "c", "d"], "y": [1, 0, 1, 1, 0], "s": [.1, .2, .3, .4, .5]})
    with pytest.raises(ValueError, match=r"^query column 'q' holds a null at row 2 of the log \(0-based\)"):
        stream_evaluate(t, ["RR"], query="q", label="y", score="s", batch_size=batch_size)


CASES = {
    "int id": ("q", pa.array([1, 1, 2, None, 3, 3, 4]), "null", 3, None),
    "float id": ("q", pa.array([1., 1, 2, np.nan, 3, 3, 4]), "NaN", 3, None),
    "dict id": ("q", pa.array(["a", "a", "b", "b", None, "c", "c"]).dictionary_encode(), "null", 4, None),
    "int label": ("y", pa.array([1, 0, 1, 0, None, 1, 0]), "null", 4, 3),
    "float label": ("y", pa.array([1., 0, 1, 0, 1, np.nan, 0]), "NaN", 5, 3),
    "null score": ("s", pa.array([.1, .2, .3, None, .5, .6, .7]), "null", 3, 2),
    "NaN score": ("s", pa.array([.1, .2, .3, .4, .5, .6, np.nan], pa.float32()), "NaN", 6, 4),
}
BASE = {"q": pa.array([1, 1, 2, 2, 3, 3, 4]), "y": pa.array([1, 0, 1, 0, 1, 0, 0]),
        "s": pa.array([.1, .2, .3, .4, .5, .6, .7])}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("batch_size", [1, 2, 3, 100])
def test_null_or_nan_is_refused_by_column_and_global_row(case, batch_size):
    col, arr, what, row, qid = CASES[case]
    cols = dict(BASE, **{col: arr})
    role = ROLES[COLS.index(col)]
    where = f"at row {row} of the log (0-based)" + (f", in query {qid}" if qid is not None else "")
    with pytest.raises(ValueError, match="^" + re.escape(f"{role} column {col!r} holds a {what} {where};")):
        stream_evaluate(pa.table(cols), ["AP"], query="q", label="y", score="s", batch_size=batch_size)


def test_engine_errors_name_the_query_id_and_the_global_row():
    # the negative label sits in the 4th query, rows 7..9; the batches cut it
    t = pa.table({"q": ["a", "a", "b", "b", "b", "c", "c", "d", "d", "d"],
                  "y": [1, 0, 0, 1, 0, 1, 1, 0, 2, -1], "s": np.linspace(1, 0, 10)})
    for bs in (1, 3, 4, 8, 100):
        with pytest.raises(ValueError, match=r"^negative label -1 in query 'd' \(index 3 in the log\) at position 2 "
                                             r"\(row 9 of the log\); labels must be >= 0"):
            stream_evaluate(t, ["AP"], query="q", label="y", score="s", batch_size=bs)
    t = t.set_column(1, "y", pa.array([1, 0, 0, 1, np.inf, 1, 1, 0, 2, 0]))
    with pytest.raises(ValueError, match=r"^infinite label in query 'b' \(index 1 in the log\) at position 2 "
                                         r"\(row 4 of the log\)"):
        stream_evaluate(t, ["AP"], query="q", label="y", score="s", batch_size=3)


def test_unsorted_ids_name_the_global_row():
    t = pa.table({"q": [1, 1, 2, 2, 3, 3, 2], "y": [1, 0, 1, 0, 1, 0, 0], "s": np.linspace(1, 0, 7)})
    for bs in (1, 2, 4, 100):
        with pytest.raises(ValueError, match=r"^query ids are not sorted \(row 6 of the log: 2 comes after 3\)"):
            stream_evaluate(t, ["AP"], query="q", label="y", score="s", batch_size=bs)


def test_batches_whose_types_change():
    good = [pa.record_batch({"q": [1, 1], "y": pa.array([1, 0], pa.int8()), "s": [.3, .2]}),
            pa.record_batch({"q": [1, 2], "y": pa.array([0, 1], pa.int64()), "s": [.1, .4]})]
    res = stream_evaluate(iter(good), ["RR"], query="q", label="y", score="s")
    assert res.means == rankjit.evaluate(np.array([1, 0, 0, 1]), np.array([.3, .2, .1, .4]), ["RR"],
                                         offsets=np.array([0, 3, 4]))
    bad = pa.record_batch({"q": ["x", "y"], "y": [0, 1], "s": [.1, .4]})
    with pytest.raises(ValueError, match=r"^the batch starting at row 2 of the log has column types "
                                         r"\(q: string.*\) that the rows before it cannot take"):
        stream_evaluate(iter([good[0], bad]), ["RR"], query="q", label="y", score="s")


def test_bool_labels_and_huge_float_labels():
    t = pa.table({"q": [1, 1, 2, 2], "y": [True, False, False, True], "s": [.3, .2, .1, .4]})
    want = rankjit.evaluate(np.array([1, 0, 0, 1]), np.array([.3, .2, .1, .4]), ["AP"], offsets=np.array([0, 2, 4]))
    assert stream_evaluate(t, ["AP"], query="q", label="y", score="s").means == want
    # 1e30 was cast to int64 (a negative grade); it is a relevant document for RR
    t = t.set_column(1, "y", pa.array([0, 1e30, 0.0, 0.0]))
    res = stream_evaluate(t, ["RR"], query="q", label="y", score="s", per_query=True)
    assert res.per_query["RR"].tolist() == [0.5, 0.0]


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_batch_size_must_be_positive(bad):
    t = pa.table({"q": [1], "y": [1], "s": [.5]})
    with pytest.raises(ValueError, match=f"^batch_size must be a positive integer, got {re.escape(repr(bad))}"):
        stream_evaluate(t, ["AP"], query="q", label="y", score="s", batch_size=bad)


def test_output_file_is_closed_after_an_error(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    t = pa.table({"q": [1, 1, 2, 2, 3], "y": [1, 0, 1, 0, 1], "s": [.1, .2, .3, np.nan, .5]})
    out = tmp_path / "pq.parquet"
    with pytest.raises(ValueError, match="score column 's' holds a NaN at row 3 of the log"):
        stream_evaluate(t, ["AP"], query="q", label="y", score="s", batch_size=3, output=out)
    assert pq.read_table(out).column("q").to_pylist() == [1]  # what was scored before the bad row


# ----------------------------------------------------------------------------- stream: exact means


def _big(seed, n_queries=2600):
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_queries), rng.integers(1, 10, n_queries))
    y = rng.integers(0, 4, q.size).astype(np.int8)
    s = rng.random(q.size)
    return q, y, s


@pytest.mark.parametrize("flush_blocks", [1, 2, 64])  # full blocks summed as they come, or gathered first
def test_means_equal_evaluate_bit_for_bit_for_any_batching(monkeypatch, flush_blocks):
    monkeypatch.setattr("rankjit.stream._FLUSH_BLOCKS", flush_blocks)
    q, y, s = _big(5)  # 3 blocks of 1024 queries, the last one partial
    off = _offsets(q)
    measures = MEASURES + ["ERR@20", "nDCG(gain='linear')@3", "R@4"]
    want = rankjit.evaluate(y, s, measures, offsets=off)
    per = rankjit.evaluate(y, s, measures, offsets=off, per_query=True)
    # the data tell the schemes apart: np.mean of the per-query values is not the engine's mean
    assert any(float(np.mean(per[m])) != want[m] for m in measures)
    table = pa.table({"q": q, "y": y, "s": s})
    rng = np.random.default_rng(0)
    cuts = sorted(rng.integers(0, q.size, 40).tolist())
    for batching in (1000, 4099, 5120, 9973, 10**6, cuts):  # cuts inside queries and inside blocks
        for per_query in (False, True):
            kw = {"query": "q", "label": "y", "score": "s", "per_query": per_query}
            res = (stream_evaluate(table, measures, batch_size=batching, **kw) if isinstance(batching, int)
                   else stream_evaluate(iter(_batches(table, batching)), measures, **kw))
            assert res.n_queries == len(off) - 1 and res.n_rows == q.size
            for m in measures:
                assert res.means[m] == want[m], (batching, m)
                if per_query:
                    assert np.array_equal(res.per_query[m], per[m])


# ------------------------------------------------------------------------------ stream: properties


@given(data=st.data())
@_settings(40)
def test_property_clean_logs_equal_evaluate(data):
    """A clean log: per-query values and means of rankjit.evaluate, or the same refusal, located."""
    with _bounded(5):
        _property_clean_logs_equal_evaluate(data)


def _property_clean_logs_equal_evaluate(data):
    t = data.draw(tables())
    n = len(t["q"])
    batching = data.draw(batchings(n))
    table = _arrow(t)
    if n == 0:
        event("empty log")
        with pytest.raises(ValueError, match="the log holds no rows"):
            _run_stream(table, batching)
        return
    off = _offsets(t["q"])
    ref, err = _reference(t["y"], t["s"], off)
    if err is not None:
        event(f"refused: {str(err).split(' in query')[0][:40]}")
        with pytest.raises(type(err)) as info:
            _run_stream(table, batching)
        _check_located(str(info.value), t)
        return
    event("equal to evaluate" + (" (NaN values)" if any(np.isnan(ref[0][m]).any() for m in MEASURES) else ""))
    res = _run_stream(table, batching, per_query=True)
    per, means = ref
    assert res.n_queries == len(off) - 1 and res.n_rows == n
    for m in MEASURES:
        assert _same(res.per_query[m], per[m]), m
        assert _same(res.means[m], means[m]), m


def _check_located(msg, t):
    """A refusal of the engine names a row of the log that holds one of the extreme labels."""
    hit = re.search(r"\(row (\d+) of the log\)", msg) or re.search(r"in rows (\d+) to (\d+) of the log", msg)
    assert hit, msg
    rows = range(int(hit.group(1)), int(hit.group(hit.lastindex)) + 1)
    assert t["extreme"][list(rows)].any(), msg


@given(data=st.data())
@_settings(40)
def test_property_first_null_or_nan_is_named(data):
    """Nulls and NaN injected anywhere: the first one (in row order) is named by column and row."""
    with _bounded(5):
        _property_first_null_or_nan_is_named(data)


def _property_first_null_or_nan_is_named(data):
    t = data.draw(tables(extremes=False, min_queries=1))
    n = len(t["q"])
    cells = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(COLS)), min_size=1, max_size=3))
    nulls = []  # a null wins over a NaN in the same cell (the mask hides the value)
    for r, c in cells:
        if t[c].dtype.kind == "f" and data.draw(st.booleans()):
            t[c] = t[c].copy()
            t[c][r] = np.nan
        else:
            nulls.append((r, c))
    table = _arrow(t, nulls)
    row, col = min((r, COLS.index(c)) for r, c in cells)
    what = "null" if (row, COLS[col]) in nulls else "NaN"
    msg = f"{ROLES[col]} column {COLS[col]!r} holds a {what} at row {row} of the log (0-based)"
    event(f"{ROLES[col]} {what}")
    with pytest.raises(ValueError, match="^" + re.escape(msg)):
        _run_stream(table, data.draw(batchings(n)))


# ----------------------------------------------------------------------------------------------- dask


@pytest.fixture(scope="module")
def dask_sync():
    pytest.importorskip("pandas")
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.dataframe")
    with dask.config.set(scheduler="synchronous"):
        yield


def _frame(t, nulls=()):
    import pandas as pd

    cols = {}
    for c in COLS:
        values = t[c]
        rows = [r for r, col in nulls if col == c]
        if rows:
            if values.dtype.kind in "iub":
                values = pd.array(values, dtype={"i": "Int64", "u": "UInt64", "b": "boolean"}[values.dtype.kind])
            elif values.dtype.kind != "f":
                values = values.astype(object)
            else:
                values = values.copy()
            values[rows] = None
        cols[c] = values
    return pd.DataFrame(cols)


def _dask_eval(pdf, nparts, **kw):
    import dask.dataframe as dd

    import rankjit.dask as rjd

    ddf = dd.from_pandas(pdf, npartitions=nparts, sort=False)
    lengths = ddf.map_partitions(len).compute().to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lambda: rjd.evaluate(ddf, MEASURES, query="q", label="y", score="s", **kw), lengths


def test_dask_null_ids_labels_scores(dask_sync):
    import pandas as pd

    pdf = pd.DataFrame({"q": [1., 1, 2, 2, np.nan, 3], "y": [1, 0, 1, 0, 1, 0], "s": [.1, .2, .3, .4, .5, .6]})
    run, lengths = _dask_eval(pdf, 2)
    assert lengths.tolist() == [3, 3]
    with pytest.raises(ValueError, match=r"^query column 'q' holds a NaN at row 1 of partition 1 \(index label 4\); "
                                         "every row needs a query id"):
        run()
    pdf["q"] = pd.array(["a", "a", "b", "b", None, "c"], dtype="string")
    with pytest.raises(ValueError, match=r"^query column 'q' holds a null at row 1 of partition 1 \(index label 4\)"):
        _dask_eval(pdf, 2)[0]()
    pdf["q"] = [1, 1, 2, 2, 3, 3]
    pdf["y"] = pd.array([1, 0, None, 0, 1, 0], dtype="Int64")
    with pytest.raises(ValueError, match=r"^label column 'y' holds a null at row 2 of partition 0 \(index label 2\), "
                                         r"in query 2; give unjudged documents label 0"):
        _dask_eval(pdf, 2)[0]()
    pdf["y"] = [1, 0, 1, 0, 1, 0]
    pdf["s"] = [.1, .2, .3, .4, .5, np.nan]
    with pytest.raises(ValueError, match=r"^score column 's' holds a NaN at row 2 of partition 1 \(index label 5\), "
                                         r"in query 3; replace missing scores"):
        _dask_eval(pdf, 2)[0]()


def test_dask_engine_errors_name_the_query_id(dask_sync):
    import pandas as pd

    pdf = pd.DataFrame({"q": ["a", "a", "b", "b", "b", "c"], "y": [1, 0, 1, 0, -2, 0], "s": np.linspace(1, 0, 6)})
    with pytest.raises(ValueError, match=r"^negative label -2 in query 'b' at the row with index label 4; "):
        _dask_eval(pdf, 3)[0]()
    pdf["y"] = pdf["y"].astype(str)
    with pytest.raises(ValueError, match=r"^label column 'y' must be numeric, got dtype "):
        _dask_eval(pdf, 3)[0]()


@given(data=st.data())
@_settings(20)
def test_property_dask_clean_frames_equal_evaluate(dask_sync, data):
    """Per-query values of rankjit.evaluate (queries split across partitions); means fsum / n."""
    with _bounded(15):
        _property_dask_clean_frames_equal_evaluate(data)


def _property_dask_clean_frames_equal_evaluate(data):
    t = data.draw(tables())
    n = len(t["q"])
    pdf = _frame(t)
    run, _ = _dask_eval(pdf, data.draw(st.integers(1, 4)), per_query=True)
    if n == 0:
        event("empty frame")
        with pytest.raises(ValueError, match="the frame holds no rows"):
            run()
        return
    order = np.argsort(t["q"], kind="stable")  # the reference groups by sorted id, as the per-query frame is
    q = t["q"][order]
    ref, err = _reference(t["y"][order], t["s"][order], _offsets(q))
    if err is not None:
        event(f"refused: {str(err).split(' in query')[0][:40]}")
        with pytest.raises(type(err)) as info:
            run()
        _check_dask_located(str(info.value), t)
        return
    event("equal to evaluate")
    means, per_q = run()
    per, whole = ref
    assert per_q["q"].tolist() == q[_offsets(q)[:-1]].tolist()
    for m in MEASURES:
        assert _same(per_q[m].to_numpy(), per[m]), m
        assert _same(means[m], math.fsum(per[m]) / len(per[m])), m  # correctly rounded sum
        assert _same(means[m], whole[m]) or math.isclose(means[m], whole[m], rel_tol=1e-12), m


def _check_dask_located(msg, t):
    """An engine refusal names the query id and the index label of a row with an extreme label,
    or (for a refusal of the whole call, such as a gain that overflows) the queries of its partition."""
    hit = re.search(r"in query (.+?) at the row with index label (\d+)", msg)
    if hit:
        row = int(hit.group(2))
        assert repr(t["q"][row].item()) == hit.group(1) and t["extreme"][row], msg
        return
    hit = re.search(r"\(in a partition holding queries (.+?) to (.+?)\)$", msg)
    assert hit, msg
    ids = [repr(v.item()) for v in t["q"]]
    lo, hi = ids.index(hit.group(1)), len(ids) - ids[::-1].index(hit.group(2))
    assert t["extreme"][lo:hi].any(), msg


@given(data=st.data())
@_settings(20)
def test_property_dask_nulls_are_named(dask_sync, data):
    """Nulls and NaN injected: the error names a defective cell, the first of its partition."""
    with _bounded(15):
        _property_dask_nulls_are_named(data)


def _property_dask_nulls_are_named(data):
    t = data.draw(tables(extremes=False, min_queries=1))
    n = len(t["q"])
    cells = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(COLS)), min_size=1, max_size=3))
    pdf = _frame(t, cells)
    run, lengths = _dask_eval(pdf, data.draw(st.integers(1, 4)))
    with pytest.raises(ValueError) as info:
        run()
    hit = re.match(r"(\w+) column '(\w)' holds a (null|NaN) at row (\d+) of partition (\d+) \(index label (\d+)\)",
                   str(info.value))
    assert hit, str(info.value)
    role, col, what, r, p, label = hit.groups()
    event(f"{role} {what}")
    starts = np.concatenate(([0], np.cumsum(lengths)))
    row = int(starts[int(p)]) + int(r)
    assert row == int(label)  # the frame's RangeIndex is the global row
    in_part = [(rr, COLS.index(c)) for rr, c in cells if starts[int(p)] <= rr < starts[int(p) + 1]]
    assert (row, COLS.index(col)) == min(in_part) and ROLES[COLS.index(col)] == role


# ----------------------------------------------------------------------------- integer scores


def _int_score_table(big):
    return pa.table({"q": [1, 1, 2, 2, 2], "y": [1, 0, 0, 1, 0], "s": pa.array([5, 3, 7, big, 2], pa.int64())})


@pytest.mark.parametrize("front", ["stream", "dask", "from_arrow"])
def test_integer_scores_float64_cannot_hold_are_refused_by_column_and_row(front):
    import rankjit.dask
    from rankjit.io import from_arrow

    tab = _int_score_table(2**60 + 1)  # float64 holds 2**60 but not 2**60 + 1
    call, where = {
        "stream": (lambda: stream_evaluate(tab, ["AP"], query="q", label="y", score="s", batch_size=2), "of the log"),
        "dask": (lambda: rankjit.dask.evaluate_partition(tab.to_pandas(), ["AP"], "q", "y", "s"), "of the partition"),
        "from_arrow": (lambda: from_arrow(tab, query="q", label="y", score="s"), "of the table"),
    }[front]
    with pytest.raises(ValueError, match=re.escape(
            f"score column 's', row 3 {where} (0-based): 1152921504606846977 (int64) cannot be ranked exactly")):
        call()
    # exact large integers are ranked as they are: the same values as the same scores in float64
    exact = _int_score_table(2**60)
    as_float = exact.set_column(2, "s", pa.array([5.0, 3.0, 7.0, 2.0**60, 2.0], pa.float64()))
    got = stream_evaluate(exact, ["AP", "RR"], query="q", label="y", score="s", batch_size=2)
    assert got == stream_evaluate(as_float, ["AP", "RR"], query="q", label="y", score="s", batch_size=2)
    assert got["RR"] == pytest.approx((1.0 + 1.0) / 2)  # query 2's relevant document scores 2**60: first
