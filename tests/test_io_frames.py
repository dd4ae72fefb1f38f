"""Arrow / Parquet / pandas / polars tables and LETOR files."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

import rankjit  # noqa: E402
from rankjit.io import (  # noqa: E402
    evaluate_frame,
    from_arrow,
    from_pandas,
    from_polars,
    read_group_sizes,
    read_letor,
    read_parquet,
    read_scores,
)

LGB = Path(__file__).parents[2] / "shared" / "data" / "lightgbm_lambdarank"


def _table():
    # query "b" is split in two runs: grouping must gather it, keeping row order
    return pa.table({"q": ["b", "b", "a", "b", "a"], "y": [1, 0, 2, 1, 0], "s": [0.1, 0.9, 0.5, 0.3, 0.7]})


def test_from_arrow_groups_rows():
    b = from_arrow(_table(), query="q", label="y", score="s")
    assert b.qids.tolist() == ["a", "b"] or b.qids.tolist() == ["b", "a"]
    got = {q: (b.labels[b.offsets[i]:b.offsets[i + 1]].tolist(), b.scores[b.offsets[i]:b.offsets[i + 1]].tolist())
           for i, q in enumerate(b.qids)}
    assert got == {"b": ([1, 0, 1], [0.1, 0.9, 0.3]), "a": ([2, 0], [0.5, 0.7])}


def test_pandas_polars_parquet_agree(tmp_path):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    import pyarrow.parquet as pq

    t = _table()
    p = tmp_path / "t.parquet"
    pq.write_table(t, p)
    ref = from_arrow(t, query="q", label="y", score="s")
    for b in (from_pandas(t.to_pandas(), query="q", label="y", score="s"),
              from_polars(pl.from_arrow(t), query="q", label="y", score="s"),
              read_parquet(p, query="q", label="y", score="s")):
        assert b.qids.tolist() == ref.qids.tolist()
        assert b.offsets.tolist() == ref.offsets.tolist()
        assert b.labels.tolist() == ref.labels.tolist()
    res = evaluate_frame(pd.DataFrame(t.to_pandas()), ["RR"], query="q", label="y", score="s")
    assert res == {"RR": (1 / 2 + 1 / 2) / 2}  # a: 0 at .7, 2 at .5; b: .9 (0), .3 (1)


def test_float_labels_that_are_integers_become_ints():
    t = pa.table({"q": [1, 1], "y": [1.0, 0.0], "s": [0.2, 0.1]})
    assert from_arrow(t, query="q", label="y", score="s").labels.dtype.kind == "i"


def test_frame_errors(tmp_path):
    t = _table()
    with pytest.raises(KeyError, match="label column 'grade' not found; columns: q, y, s"):
        from_arrow(t, query="q", label="grade", score="s")
    with pytest.raises(ValueError, match="score column 'q' must be numeric"):
        from_arrow(t, query="y", label="y", score="q")
    with pytest.raises(ValueError, match="query column 'q' holds 1 null value"):
        from_arrow(pa.table({"q": ["a", None], "y": [1, 0], "s": [0.1, 0.2]}), query="q", label="y", score="s")
    with pytest.raises(FileNotFoundError, match="nothing.parquet: no such file"):
        read_parquet(tmp_path / "nothing.parquet", query="q", label="y", score="s")
    with pytest.raises(TypeError, match="expected a pandas/polars DataFrame or a pyarrow Table"):
        evaluate_frame([1, 2], ["AP"], query="q", label="y", score="s")


def test_letor_with_qid_and_score_file(tmp_path):
    text = b"2 qid:10 1:0.5 2:0.1 # doc a\n0 qid:10 1:0.1\n1 qid:3 1:0.3\n\n0 qid:3 2:1\n"
    scores = tmp_path / "pred.txt"
    scores.write_text("0.2\n0.9\n0.1\n0.4\n")
    b = read_letor(text, scores=scores)
    assert b.qids.tolist() == ["10", "3"]
    assert b.offsets.tolist() == [0, 2, 4]
    assert b.labels.tolist() == [2, 0, 1, 0]
    assert b.scores.tolist() == [0.2, 0.9, 0.1, 0.4]


def test_letor_errors():
    with pytest.raises(ValueError, match=r"line 2: expected 'qid:<id>' as the second field"):
        read_letor(b"1 qid:1 1:2\n0 1:3\n", name="f.svm")
    with pytest.raises(ValueError, match=r"line 3: rows of query '1' are not contiguous; sort the file by qid"):
        read_letor(b"1 qid:1\n0 qid:2\n0 qid:1\n")
    with pytest.raises(ValueError, match="has 2 rows but 3 scores were given"):
        read_letor(b"1 qid:1\n0 qid:1\n", scores=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"group sizes add up to 3 rows, but f.svm has 2"):
        read_letor(b"1 1:0\n0 1:0\n", query_file=b"3\n", name="f.svm")
    with pytest.raises(ValueError, match=r"group size 0 \(entry 2\) must be positive"):
        read_group_sizes(b"2\n0\n")
    with pytest.raises(ValueError, match="line 2: expected one score per line, found 2"):
        read_scores(b"0.5\n0.1 0.2\n")


@pytest.mark.skipif(not LGB.is_dir(), reason=f"LightGBM lambdarank example not found at {LGB} (../shared/data)")
def test_lightgbm_example_with_query_file():
    b = read_letor(LGB / "rank.test", query_file=LGB / "rank.test.query")
    sizes = [int(x) for x in (LGB / "rank.test.query").read_text().split()]
    labels = [int(float(line.split()[0])) for line in (LGB / "rank.test").read_text().splitlines() if line.strip()]
    assert b.n_queries == len(sizes) == 50
    assert np.diff(b.offsets).tolist() == sizes
    assert b.labels.tolist() == labels
    # scoring by the label itself is a perfect ranking: nDCG 1 wherever a query has a relevant document
    res = rankjit.evaluate(b.labels, b.labels.astype(np.float64), ["nDCG@10"], offsets=b.offsets, per_query=True)
    has_rel = np.maximum.reduceat(b.labels, b.offsets[:-1]) > 0
    assert np.allclose(res["nDCG@10"][has_rel], 1.0)
