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
