"""rankjit.stream with counts from outside the rows: ``n_relevant`` and ``ideal_counts``.

They are given for the whole log (one per query, in the log's order), cut to each
piece of the stream, and checked against the rows as :func:`rankjit.evaluate` checks
them; errors name the query id, its index in the log and its rows.  Expected values
and messages come from :func:`rankjit.evaluate` on the whole table, the places from
the query column (numpy).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import rankjit  # noqa: E402
from rankjit.stream import evaluate  # noqa: E402

MEASURES = ["AP", "R@10", "Rprec", "nDCG@10", "nDCG", "P@5"]
BATCH_SIZES = [1, 7, 64, 10**6]


def _log(seed=0, n_queries=60, string_ids=False):
    """A sorted log, the whole-table arrays, and consistent counts from outside the rows."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 25, n_queries)
    q = np.repeat(np.arange(n_queries), sizes)
    y = rng.integers(0, 4, q.size).astype(np.int8)
    s = rng.random(q.size)
    ids = np.char.add("q", np.char.zfill(np.arange(n_queries).astype(str), 3)) if string_ids else np.arange(n_queries)
    table = pa.table({"qid": ids[q], "y": y, "s": s})
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    # judged documents the rows do not hold (unretrieved), per grade
    ideal = np.zeros((n_queries, 4), dtype=np.int64)
    np.add.at(ideal, (q, y.astype(np.int64)), 1)
    ideal += rng.integers(0, 3, ideal.shape)
    n_relevant = ideal[:, 1:].sum(axis=1)
    return table, y, s, offsets, ids, n_relevant, ideal


def _stream(table, batch_size, **kw):
    return evaluate(table, MEASURES, query="qid", label="y", score="s", batch_size=batch_size, per_query=True, **kw)


@pytest.mark.parametrize("string_ids", [False, True])
@pytest.mark.parametrize("batch_size", BATCH_SIZES)
@pytest.mark.parametrize("which", ["n_relevant", "ideal_counts", "both"])
def test_counts_from_outside_equal_evaluate_on_the_whole_table(which, batch_size, string_ids):
    table, y, s, offsets, ids, n_relevant, ideal = _log(string_ids=string_ids)
    kw = {"n_relevant": n_relevant, "ideal_counts": ideal}
    kw = kw if which == "both" else {which: kw[which]}
    want = rankjit.evaluate(y, s, MEASURES, offsets=offsets, per_query=True, **kw)
    res = _stream(table, batch_size, **kw)
    assert res.n_queries == len(ids) and res.qids.tolist() == ids.tolist()
    for m in MEASURES:
        assert np.array_equal(res.per_query[m], want[m]), m
        # rankjit.evaluate takes these means over the per-query array
        assert res.means[m] == rankjit.evaluate(y, s, [m], offsets=offsets, **kw)[m]


def test_counts_for_one_piece_are_not_reused_for_the_next():
    # with a batch per query every piece holds one query: a count array of one was applied to
    # every query (AP with R = 5 throughout), with no error
    table = pa.table({"qid": [1, 1, 2, 3, 3], "y": [1, 0, 1, 0, 1], "s": [.9, .8, .7, .6, .5]})
    for batch_size in (1, 2):
        with pytest.raises(ValueError, match=r"^n_relevant holds 1 count, one per query of the log in its order, "
                                             r"but the log has more queries: query 2 \(index 1 in the log\) starts "
                                             r"at row 2 of the log$"):
            evaluate(table, ["AP"], query="qid", label="y", score="s", batch_size=batch_size, n_relevant=[5])
    with pytest.raises(ValueError, match=r"^ideal_counts holds 1 row, one per query of the log in its order, but the "
                                         r"log has more queries: query 2 \(index 1 in the log\) starts at row 2"):
        evaluate(table, ["nDCG"], query="qid", label="y", score="s", batch_size=1, ideal_counts=[[2, 5]])


def _stream_error_is_the_whole_tables(table, y, s, offsets, ids, batch_size, **kw):
    """The stream's error equals :func:`rankjit.evaluate`'s on the whole table, its query named
    as the stream names it (id, index in the log, rows); returns ``(message, query index)``."""
    with pytest.raises(ValueError) as info:
        rankjit.evaluate(y, s, MEASURES, offsets=offsets, per_query=True, **kw)
    msg = str(info.value)
    q = int(re.search(r"\bquery (\d+)", msg).group(1))
    where = f"query {ids[q].item()!r} (index {q} in the log; rows {offsets[q]} to {offsets[q + 1] - 1} of the log)"
    want = re.sub(r"\bquery \d+", lambda _: where, msg, count=1)
    with pytest.raises(ValueError) as info:
        _stream(table, batch_size, **kw)
    assert str(info.value) == want
    return want, q


@pytest.mark.parametrize("string_ids", [False, True])
@pytest.mark.parametrize("batch_size", BATCH_SIZES)
def test_too_small_n_relevant_names_query_id_index_and_rows(batch_size, string_ids):
    table, y, s, offsets, ids, n_relevant, _ = _log(seed=1, string_ids=string_ids)
    held = np.add.reduceat((y >= 1).astype(np.int64), offsets[:-1])
    bad = n_relevant.copy()
    target = 37  # far from the first piece for every batch size but the largest
    bad[target] = held[target] - 1
    bad[target + 5] = 0 if held[target + 5] else bad[target + 5]  # a later one: the first is named
    want, q = _stream_error_is_the_whole_tables(table, y, s, offsets, ids, batch_size, n_relevant=bad)
    assert q == target and f"n_relevant[{target}] = {held[target] - 1}" in want


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
def test_too_small_ideal_counts_names_query_id_index_and_rows(batch_size):
    table, y, s, offsets, ids, _, ideal = _log(seed=2, string_ids=True)
    present = np.zeros_like(ideal)
    np.add.at(present, (np.repeat(np.arange(len(ids)), np.diff(offsets)), y.astype(np.int64)), 1)
    bad = ideal.copy()
    target = 41
    grade = int(np.flatnonzero(present[target, 1:])[0]) + 1
    bad[target, grade] = present[target, grade] - 1
    want, q = _stream_error_is_the_whole_tables(table, y, s, offsets, ids, batch_size, ideal_counts=bad)
    assert q == target and f"ideal_counts[{target}, {grade}] = {present[target, grade] - 1}" in want


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
def test_another_number_of_queries_is_refused(batch_size):
    table, _, _, offsets, ids, n_relevant, ideal = _log(seed=3, string_ids=True)
    k = 23  # counts for the first 23 queries only: refused at query 23, by its id and first row
    with pytest.raises(ValueError, match=(
            rf"^n_relevant holds {k} counts, one per query of the log in its order, but the log has more queries: "
            rf"query '{ids[k]}' \(index {k} in the log\) starts at row {offsets[k]} of the log$")):
        _stream(table, batch_size, n_relevant=n_relevant[:k])
    with pytest.raises(ValueError, match=(
            rf"^ideal_counts holds {k} rows, one per query of the log in its order, but the log has more queries: "
            rf"query '{ids[k]}' \(index {k} in the log\) starts at row {offsets[k]} of the log$")):
        _stream(table, batch_size, ideal_counts=ideal[:k])
    n = len(ids)
    with pytest.raises(ValueError, match=rf"^n_relevant holds {n + 1} counts, one per query of the log in its "
                                         rf"order, but the log has {n} queries$"):
        _stream(table, batch_size, n_relevant=np.append(n_relevant, 3))
    with pytest.raises(ValueError, match=rf"^ideal_counts holds {n + 2} rows, one per query of the log in its "
                                         rf"order, but the log has {n} queries$"):
        _stream(table, batch_size, ideal_counts=np.vstack([ideal, ideal[:2]]))


def test_shape_dtype_and_range_are_checked_before_reading():
    def rows():  # a log that fails if read: the checks come first
        raise AssertionError("the log was read")
        yield  # pragma: no cover

    def run(**kw):
        return evaluate(rows(), ["AP"], query="qid", label="y", score="s", **kw)

    with pytest.raises(ValueError, match=r"^n_relevant must hold one count per query of the log, in the log's "
                                         r"query order \(a 1-D array\), got shape \(2, 2\)$"):
        run(n_relevant=[[1, 2], [3, 4]])
    with pytest.raises(ValueError, match=r"^ideal_counts must have shape \(n_queries, n_grades\): one row per query "
                                         r"of the log, in the log's query order, of the number of judged documents "
                                         r"of each grade; got shape \(3,\)$"):
        run(ideal_counts=[1, 2, 3])
    with pytest.raises(ValueError, match=r"^ideal_counts must have shape .*got shape \(3, 0\)$"):
        run(ideal_counts=np.zeros((3, 0), dtype=np.int64))
    with pytest.raises(TypeError, match=r"^n_relevant must be integers, got dtype float64$"):
        run(n_relevant=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"^n_relevant must be >= 0$"):
        run(n_relevant=[1, -1])
    with pytest.raises(ValueError, match=r"^ideal_counts\[1, 0\] = 4611686018427387905 is too large"):
        run(ideal_counts=np.array([[0, 1], [2**62 + 1, 0]], dtype=np.int64))


def test_sorted_log_order(tmp_path):
    # with sort=True the counts follow the sorted order of the query ids
    pytest.importorskip("polars")
    table, y, _, offsets, ids, n_relevant, _ = _log(seed=4, string_ids=True)
    p = tmp_path / "shuffled.parquet"
    pq.write_table(table.take(pa.array(np.random.default_rng(0).permutation(len(table)))), p)
    res = evaluate(p, ["R@1000", "Rprec"], query="qid", label="y", score="s", sort=True, per_query=True,
                   n_relevant=n_relevant)
    # R@1000 and the number of relevant rows do not depend on the row order within a query
    held = np.add.reduceat((y >= 1).astype(np.int64), offsets[:-1])
    assert res.qids.tolist() == ids.tolist()
    assert np.array_equal(res.per_query["R@1000"], np.divide(held, n_relevant, out=np.zeros(len(ids)), where=n_relevant > 0))


@pytest.mark.parametrize("name, value", [("nuggets", np.zeros((2, 3, 2), dtype=np.int8)), ("ideal", [[1, 0], [0, 1]])])
def test_per_row_inputs_are_refused_by_name(name, value):
    # only n_relevant= and ideal_counts= follow the pieces of the log; any other input with a value
    # per row or per query would be handed whole to every piece
    pa = pytest.importorskip("pyarrow")
    from rankjit import stream

    table = pa.table({"q": [1, 1, 2], "y": [1, 0, 1], "s": [0.9, 0.1, 0.5]})
    with pytest.raises(ValueError, match=rf"stream.evaluate: {name}= holds \(\d+(, \d+)*\) values, but the log is "
                                         "evaluated piece by piece"):
        stream.evaluate(table, ["RR"], query="q", label="y", score="s", **{name: value})
    # single values still pass
    assert stream.evaluate(table, ["P@1"], query="q", label="y", score="s", rel=1).n_queries == 2
