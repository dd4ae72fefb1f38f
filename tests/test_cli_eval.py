"""``rankjit eval`` and ``rankjit score-log``."""
from __future__ import annotations

import json

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import rankjit  # noqa: E402
from rankjit.cli import main  # noqa: E402


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 z 2\n2 0 c 1\n")
    r1 = tmp_path / "one.run"
    r1.write_text("1 Q0 a 1 3 x\n1 Q0 b 2 2 x\n2 Q0 c 1 1 x\n")
    r2 = tmp_path / "two.run"
    r2.write_text("1 Q0 b 1 3 y\n1 Q0 a 2 2 y\n2 Q0 d 1 1 y\n")
    return qrels, r1, r2


def test_eval_json_several_runs(files, capsys):
    qrels, r1, r2 = files
    assert main(["eval", str(qrels), str(r1), str(r2), "RR", "P@2", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # one.run: q1 RR 1, P@2 1/2; q2 RR 1, P@2 1/2.  two.run: q1 RR 1/2, P@2 1/2; q2 RR 0, P@2 0
    assert doc == {"one.run": {"RR": 1.0, "P@2": 0.5}, "two.run": {"RR": 0.25, "P@2": 0.25}}


def test_eval_per_query_csv(files, capsys):
    qrels, r1, _ = files
    assert main(["eval", str(qrels), str(r1), "-m", "RR", "--per-query", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["query,measure,one.run", "1,RR,1.0", "2,RR,1.0", "all,RR,1.0"]


def test_eval_table(files, capsys):
    qrels, r1, r2 = files
    assert main(["eval", str(qrels), str(r1), str(r2), "AP"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["measure", "one.run", "two.run"]
    # one.run: q1 AP = 1/2 (a at 1; z unretrieved), q2 1 -> 0.75; two.run: q1 (1/2)/2, q2 0
    assert out[1].split() == ["AP", "0.7500", "0.1250"]


def test_eval_errors(files, capsys):
    qrels, r1, _ = files
    assert main(["eval", str(qrels), str(r1), "nDCG@x"]) == 1
    assert "neither a run file nor a measure" in capsys.readouterr().err
    assert main(["eval", str(qrels), "missing/run.txt", "AP"]) == 1
    assert "missing/run.txt: no such run file" in capsys.readouterr().err
    assert main(["eval", str(qrels), "AP"]) == 1
    assert "no run file given" in capsys.readouterr().err


def _log(tmp_path, n_queries=40, seed=0):
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_queries), rng.integers(1, 30, n_queries))
    y = rng.integers(0, 3, q.size)
    s = rng.random(q.size)
    p = tmp_path / "log.parquet"
    pq.write_table(pa.table({"qid": q, "grade": y, "pred": s}), p, row_group_size=97)
    return p, q, y, s


def test_score_log_matches_in_memory(tmp_path, capsys):
    p, q, y, s = _log(tmp_path)
    out = tmp_path / "per_query.parquet"
    rc = main(["score-log", str(p), "--query", "qid", "--label", "grade", "--score", "pred",
               "-m", "nDCG@10", "-m", "AP", "-o", str(out), "--batch-size", "50"])
    assert rc == 0
    printed = dict(line.split() for line in capsys.readouterr().out.splitlines())
    offsets = rankjit.offsets_from_qids(q)[0]
    want = rankjit.evaluate(y, s, ["nDCG@10", "AP"], offsets=offsets, per_query=True)
    assert printed == {"nDCG@10": f"{np.mean(want['nDCG@10']):.4f}", "AP": f"{np.mean(want['AP']):.4f}"}
    table = pq.read_table(out)
    assert table.column("qid").to_pylist() == list(range(40))
    assert np.array_equal(table.column("AP").to_numpy(), want["AP"])


def test_score_log_judged_pooled_and_sort(tmp_path, capsys):
    rng = np.random.default_rng(2)
    q = np.repeat(rng.permutation(30), rng.integers(1, 30, 30))  # query ids out of order: --sort
    y = rng.integers(0, 3, q.size)
    s = rng.random(q.size)
    judged = (y > 0) | (rng.random(q.size) < 0.5)
    pooled = judged | (rng.random(q.size) < 0.3)
    p = tmp_path / "log.parquet"
    pq.write_table(pa.table({"qid": q, "grade": y, "pred": s, "j": judged, "pool": pooled}), p, row_group_size=97)
    names = ["P(judged_only=True)@5", "Judged@10", "infAP"]
    rc = main(["score-log", str(p), "--query", "qid", "--label", "grade", "--score", "pred", "--judged", "j",
               "--pooled", "pool", "--sort", "--quiet", *[a for n in names for a in ("-m", n)]])
    assert rc == 0, capsys.readouterr().err
    printed = dict(line.split() for line in capsys.readouterr().out.splitlines())
    order = np.argsort(q, kind="stable")  # the out-of-core sort keeps each query's rows in file order
    offsets = rankjit.offsets_from_qids(q[order])[0]
    want = rankjit.evaluate(y[order], s[order], names, offsets=offsets, judged=judged[order], pooled=pooled[order])
    assert printed == {n: f"{want[n]:.4f}" for n in names}


def test_score_log_errors(tmp_path, capsys):
    p, *_ = _log(tmp_path)
    assert main(["score-log", str(p), "--query", "nope", "--label", "grade", "--score", "pred", "-m", "AP"]) == 1
    assert "query column 'nope' not found" in capsys.readouterr().err
    assert main(["score-log", str(tmp_path / "x.parquet"), "--query", "q", "--label", "g", "--score", "s",
                 "-m", "AP"]) == 1
    assert "x.parquet: no such file" in capsys.readouterr().err
    assert main(["score-log", str(p), "--query", "qid", "--label", "grade", "--score", "pred", "-m", "XYZ"]) == 1
    assert "unknown measure 'XYZ'" in capsys.readouterr().err
