"""rankjit.stream: batches in order, queries carried across batch boundaries."""
from __future__ import annotations

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import rankjit  # noqa: E402
from rankjit.stream import evaluate  # noqa: E402

MEASURES = ["nDCG@10", "AP", "RR", "P@5"]


def _data(seed=0, n_queries=120, string_ids=False):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, n_queries)
    q = np.repeat(np.arange(n_queries), sizes)
    y = rng.integers(0, 4, q.size).astype(np.int8)
    s = rng.random(q.size).astype(np.float32)
    qcol = np.char.add("q", np.char.zfill(q.astype(str), 5)) if string_ids else q
    return pa.table({"query": qcol, "label": y, "score": s}), q, y, s


@pytest.mark.parametrize("batch_size", [1, 5, 64, 1000, 10**6])
@pytest.mark.parametrize("string_ids", [False, True])
def test_equals_in_memory_for_any_batching(batch_size, string_ids):
    table, q, y, s = _data(string_ids=string_ids)
    want = rankjit.evaluate(y, s, MEASURES, offsets=rankjit.offsets_from_qids(q)[0], per_query=True)
    want_means = rankjit.evaluate(y, s, MEASURES, offsets=rankjit.offsets_from_qids(q)[0])
    res = evaluate(table, MEASURES, query="query", label="label", score="score", batch_size=batch_size,
                   per_query=True)
    assert res.n_queries == 120 and res.n_rows == len(q)
    for m in MEASURES:
        assert np.array_equal(res.per_query[m], want[m])  # each query scored once, whole
        # the same bits as rankjit.evaluate's means (block sums; np.mean may differ in the last bit)
        assert res.means[m] == want_means[m]


def test_parquet_row_groups_and_output(tmp_path):
    table, q, y, s = _data(seed=1)
    p = tmp_path / "log.parquet"
    pq.write_table(table, p, row_group_size=33)
    out = tmp_path / "pq.parquet"
    res = evaluate(p, ["AP"], query="query", label="label", score="score", output=out, batch_size=20)
    want = rankjit.evaluate(y, s, ["AP"], offsets=rankjit.offsets_from_qids(q)[0], per_query=True)["AP"]
    got = pq.read_table(out)
    assert got.column("query").to_pylist() == list(range(120))
    assert np.array_equal(got.column("AP").to_numpy(), want)
    assert res.means["AP"] == float(np.mean(want))


def test_record_batch_iterable():
    table, q, y, s = _data(seed=2)
    batches = table.to_batches(max_chunksize=17)
    res = evaluate(iter(batches), ["RR"], query="query", label="label", score="score")
    want = rankjit.evaluate(y, s, ["RR"], offsets=rankjit.offsets_from_qids(q)[0])
    assert res.means == want


def test_unsorted_ids_are_detected_within_and_across_batches():
    t = pa.table({"query": [1, 1, 2, 1], "label": [1, 0, 1, 0], "score": [0.5, 0.4, 0.3, 0.2]})
    with pytest.raises(ValueError, match=r"query ids are not sorted .*2.* Sort the log by the query column first"):
        evaluate(t, ["AP"], query="query", label="label", score="score", batch_size=100)
    with pytest.raises(ValueError, match=r"query ids are not sorted .*or pass sort=True"):
        evaluate(t, ["AP"], query="query", label="label", score="score", batch_size=3)


def test_external_sort(tmp_path):
    pytest.importorskip("polars")
    table, q, y, s = _data(seed=3)
    perm = np.random.default_rng(0).permutation(len(q))
    p = tmp_path / "shuffled.parquet"
    pq.write_table(table.take(pa.array(perm)), p)
    with pytest.raises(ValueError, match="query ids are not sorted"):
        evaluate(p, ["P@5"], query="query", label="label", score="score")
    res = evaluate(p, ["P@5"], query="query", label="label", score="score", sort=True)
    want = rankjit.evaluate(y, s, ["P@5"], offsets=rankjit.offsets_from_qids(q)[0])  # P@5 ignores row order
    assert res.means["P@5"] == pytest.approx(want["P@5"], rel=1e-12)


def test_errors():
    table, *_ = _data()
    with pytest.raises(KeyError, match="score column 'pred' not found"):
        evaluate(table, ["AP"], query="query", label="label", score="pred")
    with pytest.raises(ValueError, match="no measures requested"):
        evaluate(table, [], query="query", label="label", score="score")
    with pytest.raises(TypeError, match="sort=True needs a Parquet path"):
        evaluate(table, ["AP"], query="query", label="label", score="score", sort=True)
    with pytest.raises(TypeError, match="expected a Parquet path, a pyarrow Table"):
        evaluate(42, ["AP"], query="query", label="label", score="score")


JUDGED_MEASURES = ["P@5", "P(judged_only=True)@5", "nDCG(judged_only=True)@10", "Judged@10", "Bpref", "infAP",
                   "nDCG(gains={0:1,1:2,2:3,3:4})@10"]


def _judged_data(seed=3):
    table, q, y, s = _data(seed)
    rng = np.random.default_rng(seed)
    judged = (y > 0) | (rng.random(q.size) < 0.5)  # relevant documents are judged
    pooled = judged | (rng.random(q.size) < 0.3)
    return table.append_column("j", pa.array(judged)).append_column("pool", pa.array(pooled)), q, y, s, judged, pooled


@pytest.mark.parametrize("batch_size", [1, 7, 1000, 10**6])
def test_judged_and_pooled_columns_equal_in_memory(batch_size, tmp_path):
    table, q, y, s, judged, pooled = _judged_data()
    off = rankjit.offsets_from_qids(q)[0]
    want = rankjit.evaluate(y, s, JUDGED_MEASURES, offsets=off, judged=judged, pooled=pooled, per_query=True)
    want_means = rankjit.evaluate(y, s, JUDGED_MEASURES, offsets=off, judged=judged, pooled=pooled)
    res = evaluate(table, JUDGED_MEASURES, query="query", label="label", score="score", judged="j", pooled="pool",
                   batch_size=batch_size, per_query=True)
    for m in JUDGED_MEASURES:
        assert np.array_equal(res.per_query[m], want[m]), m
        assert res.means[m] == want_means[m], m
    # the call's judged_only=True passes through, and a Parquet file with --sort reads the columns too
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=97)
    res = evaluate(path, ["P@5", "AP"], query="query", label="label", score="score", judged="j", judged_only=True,
                   sort=batch_size == 7, batch_size=batch_size)
    want = rankjit.evaluate(y, s, ["P@5", "AP"], offsets=off, judged=judged, judged_only=True)
    assert res.means == want


def test_judged_column_errors():
    table, *_ = _judged_data()
    kw = dict(query="query", label="label", score="score")
    grades = table.append_column("g", table.column("label"))
    with pytest.raises(TypeError, match="judged column 'g' must be boolean \\(True = judged document\\), got int8"):
        evaluate(grades, ["P@5"], judged="g", **kw)
    with pytest.raises(ValueError, match="the judged column 'label' is also the label column: give each role its own"):
        evaluate(table, ["P@5"], judged="label", **kw)
    with pytest.raises(KeyError, match="judged column 'nope' not found in table"):
        evaluate(table, ["P@5"], judged="nope", **kw)
    with pytest.raises(ValueError, match="pooled= needs judged=: a pooled document is unjudged only when"):
        evaluate(table, ["infAP"], pooled="pool", **kw)
    with pytest.raises(TypeError, match="stream.evaluate: judged= names a boolean column of the log, got ndarray"):
        evaluate(table, ["P@5"], judged=np.ones(len(table), bool), **kw)
    with pytest.raises(ValueError, match="Judged \\('Judged@5'\\) needs judged=, the mask of judged documents"):
        evaluate(table, ["Judged@5"], **kw)
    nulls = table.set_column(3, "j", pa.array([True, None] + [True] * (len(table) - 2)))
    with pytest.raises(ValueError, match="judged column 'j' holds a null at row 1 of the log \\(0-based\\), in query "
                                         "0; mark each row judged \\(True\\) or not \\(False\\)"):
        evaluate(nulls, ["P@5"], judged="j", **kw)
    # a relevant row marked unjudged: rankjit.evaluate's error, placed in the log
    y = np.asarray(table.column("label"))
    first = int(np.flatnonzero(y[100:] > 0)[0]) + 100  # past the first batches: rows count from the log's start
    flags = np.ones(len(table), bool)
    flags[first] = False
    bad = table.set_column(3, "j", pa.array(flags))
    with pytest.raises(ValueError, match=f"at position \\d+ \\(row {first} of the log\\) is marked unjudged"):
        evaluate(bad, ["P@5"], judged="j", batch_size=50, **kw)
