"""rankjit.dask on a 2-worker LocalCluster: equal to single-process evaluate()."""
from __future__ import annotations

import math

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

import rankjit  # noqa: E402
import rankjit.dask as rjd  # noqa: E402

MEASURES = ["nDCG@10", "AP", "RR", "ERR@20"]


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


def _frame(seed=0, n_queries=150):
    rng = np.random.default_rng(seed)
    q = np.repeat(rng.permutation(n_queries) * 7 + 3, rng.integers(1, 25, n_queries))
    y = rng.integers(0, 4, q.size)
    s = rng.random(q.size)
    return pd.DataFrame({"qid": q, "grade": y, "score": s})


def _single(pdf):
    off, order, ids = rankjit.offsets_from_qids(pdf["qid"].to_numpy())
    y, s = pdf["grade"].to_numpy(), pdf["score"].to_numpy()
    if order is not None:
        y, s = y[order], s[order]
    return ids, rankjit.evaluate(y, s, MEASURES, offsets=off, per_query=True)


def test_partitions_splitting_queries(client):
    pdf = _frame()
    ddf = dd.from_pandas(pdf, npartitions=7, sort=False)  # row chunks: queries cut at partition edges
    bounds = ddf.map_partitions(lambda d: pd.DataFrame({"first": d["qid"].iloc[:1].values,
                                                          "last": d["qid"].iloc[-1:].values})).compute()
    assert (bounds["first"].to_numpy()[1:] == bounds["last"].to_numpy()[:-1]).any()  # the data do split queries
    means, per_q = rjd.evaluate(ddf, MEASURES, query="qid", label="grade", score="score", per_query=True)
    ids, want = _single(pdf)
    order = np.argsort(ids)
    assert per_q["qid"].tolist() == ids[order].tolist()
    for m in MEASURES:
        assert np.array_equal(per_q[m].to_numpy(), want[m][order])  # every query whole, scored once
        assert means[m] == math.fsum(want[m]) / len(ids)  # exact mean
        assert means[m] == pytest.approx(float(np.mean(want[m])), rel=1e-12, abs=0)


def test_indexed_by_query_skips_the_shuffle(client):
    pdf = _frame(seed=1)
    ddf = dd.from_pandas(pdf, npartitions=4).set_index("qid")
    assert ddf.known_divisions
    means = rjd.evaluate(ddf, MEASURES, query="qid", label="grade", score="score")
    ids, want = _single(pdf)
    for m in MEASURES:
        assert means[m] == math.fsum(want[m]) / len(ids)


def test_errors(client):
    ddf = dd.from_pandas(_frame(), npartitions=2)
    with pytest.raises(KeyError, match="label column 'y' not found"):
        rjd.evaluate(ddf, ["AP"], query="qid", label="y", score="score")
    with pytest.raises(KeyError, match="query column 'q' not found"):
        rjd.evaluate(ddf, ["AP"], query="q", label="grade", score="score")
    with pytest.raises(ValueError, match="ties='stable' needs the original row order"):
        rjd.evaluate(ddf, ["AP"], query="qid", label="grade", score="score", ties="stable")
    with pytest.raises(ValueError, match="unknown measure 'nope'"):
        rjd.evaluate(ddf, ["nope"], query="qid", label="grade", score="score")


JUDGED_MEASURES = ["P@5", "P(judged_only=True)@5", "Judged@10", "Bpref", "infAP", "nDCG(gains={0:1,1:2,2:3,3:4})@10"]


def test_judged_and_pooled_columns(client):
    pdf = _frame(seed=4)
    rng = np.random.default_rng(4)
    pdf["judged"] = (pdf["grade"] > 0) | (rng.random(len(pdf)) < 0.5)
    pdf["pooled"] = pdf["judged"] | (rng.random(len(pdf)) < 0.3)
    off, order, ids = rankjit.offsets_from_qids(pdf["qid"].to_numpy())
    cols = {c: pdf[c].to_numpy() if order is None else pdf[c].to_numpy()[order]
            for c in ("grade", "score", "judged", "pooled")}
    want = rankjit.evaluate(cols["grade"], cols["score"], JUDGED_MEASURES, offsets=off, judged=cols["judged"],
                            pooled=cols["pooled"], per_query=True)
    means, per = rjd.evaluate(dd.from_pandas(pdf, npartitions=5), JUDGED_MEASURES, query="qid", label="grade",
                              score="score", judged="judged", pooled="pooled", per_query=True)
    by_id = np.argsort(ids, kind="stable")  # the per-query frame is sorted by query id
    assert per["qid"].tolist() == list(np.asarray(ids)[by_id])
    for m in JUDGED_MEASURES:
        np.testing.assert_array_equal(per[m].to_numpy(), want[m][by_id], err_msg=m)
        summed = m.startswith("Num")
        assert means[m] == math.fsum(want[m]) / (1 if summed else len(ids))
    # the call's judged_only=True passes through to every partition
    got = rjd.evaluate(dd.from_pandas(pdf, npartitions=3), ["AP"], query="qid", label="grade", score="score",
                       judged="judged", judged_only=True)
    want = rankjit.evaluate(cols["grade"], cols["score"], ["AP"], offsets=off, judged=cols["judged"], judged_only=True,
                            per_query=True)
    assert got["AP"] == math.fsum(want["AP"]) / len(ids)


def test_judged_column_errors(client):
    pdf = _frame(seed=5)
    pdf["judged"] = True
    pdf["g"] = pdf["grade"]
    ddf = dd.from_pandas(pdf, npartitions=2)
    kw = dict(query="qid", label="grade", score="score")
    with pytest.raises(TypeError, match="judged column 'g' must be boolean \\(True = judged document\\), got "
                                        "dtype int64"):
        rjd.evaluate(ddf, ["P@5"], judged="g", **kw)
    with pytest.raises(ValueError, match="the judged column 'grade' is also the label column: give each role its own"):
        rjd.evaluate(ddf, ["P@5"], judged="grade", **kw)
    with pytest.raises(KeyError, match="judged column 'nope' not found"):
        rjd.evaluate(ddf, ["P@5"], judged="nope", **kw)
    with pytest.raises(ValueError, match="pooled= needs judged=: a pooled document is unjudged only when"):
        rjd.evaluate(ddf, ["infAP"], pooled="judged", **kw)
    with pytest.raises(TypeError, match="dask.evaluate: judged= names a boolean column of the frame, got ndarray"):
        rjd.evaluate(ddf, ["P@5"], judged=np.ones(len(pdf), bool), **kw)
    nulls = pdf.assign(judged=pd.array([True, None] + [True] * (len(pdf) - 2), dtype="boolean"))
    with pytest.raises(ValueError, match="judged column 'judged' holds a null at row 1 of partition 0 .*mark each "
                                         "row judged \\(True\\) or not \\(False\\)"):
        rjd.evaluate(dd.from_pandas(nulls, npartitions=2), ["P@5"], judged="judged", **kw)
