"""``rankjit trec_eval``: trec_eval's own expected outputs and pytrec_eval on TREC 2012 Web data."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from rankjit.cli import main  # noqa: E402
from rankjit.io._cli import SUPPORTED_LINE, parse_trec_measures  # noqa: E402

DATA = Path(__file__).parents[2] / "shared" / "data"
TE = DATA / "trec_eval"
WEB = DATA / "web2012"
needs_te = pytest.mark.skipif(not TE.is_dir(), reason=f"trec_eval test data not found at {TE} (../shared/data)")
needs_web = pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")

# out file -> the trec_eval arguments that produced it (../shared/data/README.md)
CASES = {
    "out.test": ["qrels.test", "results.test"],
    "out.test.a": ["-m", "all_trec", "qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    "out.test.aql": ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"],
    "out.test.meas_params": [
        "-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
        "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
        "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20", "qrels.test", "results.test",
    ],
    "out.comment.test": ["qrels.comment.test", "results.comment.test"],
    "out.test.aqZ": ["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test", "results.test"],
    "out.test.prefs": ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"],
    "out.test.qrels_prefs": ["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test", "results.test"],
    "out.test.qrels_jg": ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"],
}

def _run_cli(args, capsys):
    rc = main(["trec_eval", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def _supported_lines(text):
    return [line for line in text.splitlines() if SUPPORTED_LINE.match(line)]


@needs_te
@pytest.mark.parametrize("out_name", sorted(CASES))
def test_reproduces_trec_eval_lines(out_name, capsys):
    args = [str(TE / a) if (TE / a).is_file() else a for a in CASES[out_name]]
    rc, out, err = _run_cli(args, capsys)
    assert rc == 0, err
    expected = _supported_lines((TE / out_name).read_text())
    assert len(expected) >= 17  # the comparison covers real content
    assert out.splitlines() == expected  # every supported line, same order, same digits


@needs_te
def test_missing_measures_are_listed_on_stderr(capsys):
    rc, out, err = _run_cli(["-m", "official", str(TE / "qrels.test"), str(TE / "results.test")], capsys)
    assert rc == 0 and err == ""  # trec_eval's default measures: all computed
    rc, out, err = _run_cli(["-m", "all_trec", str(TE / "qrels.test"), str(TE / "results.test")], capsys)
    assert rc == 0 and err == ""  # all_trec: all computed
    rc, out, err = _run_cli(["-m", "yaap", "-m", "map", str(TE / "qrels.test"), str(TE / "results.test")], capsys)
    assert rc == 0 and err == ""  # measures outside all_trec: computed too
    from rankjit.io._cli import TREC_MEASURES, TREC_TABLE

    assert [m for m in TREC_MEASURES if m not in TREC_TABLE] == []  # every measure of trec_eval 10.0


def _pytrec_dicts(qrels_path, run_path):
    qrels, run = {}, {}
    for line in Path(qrels_path).read_text().splitlines():
        q, _, d, r = line.split()[:4]
        qrels.setdefault(q, {})[d] = int(r)
    for line in Path(run_path).read_text().splitlines():
        q, _, d, _, s = line.split()[:5]
        run.setdefault(q, {})[d] = float(s)
    return qrels, run


@needs_web
@pytest.mark.slow
@pytest.mark.parametrize("run_name", ["run.ql.cata.txt", "run.rm.cata.txt"])
def test_web2012_against_pytrec_eval(run_name, capsys):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from rankjit.io import align, read_trec_qrels, read_trec_run
    from rankjit.io._cli import trec_eval_values

    qrels_path, run_path = WEB / "qrels.adhoc.txt", WEB / run_name
    qrels_d, run_d = _pytrec_dicts(qrels_path, run_path)
    names = {"map", "Rprec", "recip_rank", "ndcg", "P_5", "P_10", "P_20", "recall_100", "recall_1000",
             "ndcg_cut_10", "ndcg_cut_20", "map_cut_100", "success_1", "success_10", "num_rel", "num_rel_ret",
             "num_ret"}
    expected = pytrec_eval.RelevanceEvaluator(qrels_d, {"map", "Rprec", "recip_rank", "ndcg", "P", "recall",
                                                        "ndcg_cut", "map_cut", "success", "num_rel",
                                                        "num_rel_ret", "num_ret"}).evaluate(run_d)
    aligned = align(read_trec_run(run_path), read_trec_qrels(qrels_path))
    requested, _ = parse_trec_measures(["all_trec"])
    got = {name: vals for name, kind, vals in trec_eval_values(aligned, requested) if kind != "summary"}
    assert sorted(expected) == aligned.qids or sorted(expected) == sorted(aligned.qids)
    for name in names:
        want = np.array([expected[q][name] for q in aligned.qids])
        np.testing.assert_allclose(got[name], want, rtol=1e-12, atol=1e-15, err_msg=name)
    # and the CLI summary lines agree with pytrec_eval's per-query values averaged
    rc, out, _ = _run_cli(["-m", "map", "-m", "ndcg_cut.10", str(qrels_path), str(run_path)], capsys)
    assert rc == 0
    lines = dict(line.split("\t")[0::2] for line in out.splitlines())
    assert lines["map                   "] == f"{np.mean([expected[q]['map'] for q in aligned.qids]):.4f}"
    assert lines["ndcg_cut_10           "] == f"{np.mean([expected[q]['ndcg_cut_10'] for q in aligned.qids]):.4f}"


def test_errors_are_one_line_and_nonzero(tmp_path, capsys):
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1\n")
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 a 1 1.0 t\n")
    rc, out, err = _run_cli([str(qrels), str(tmp_path / "missing.run")], capsys)
    assert rc == 1 and out == ""
    assert re.fullmatch(r"rankjit trec_eval: error: .*missing\.run: no such file\n", err)
    rc, _, err = _run_cli(["-m", "nDCG@10", str(qrels), str(run)], capsys)
    assert rc == 1 and "unknown trec_eval measure 'nDCG@10'" in err
    rc, _, err = _run_cli(["-m", "P.0", str(qrels), str(run)], capsys)
    assert rc == 1 and "cutoffs must be positive" in err
    rc, _, err = _run_cli(["-m", "ndcg.1:3", str(qrels), str(run)], capsys)
    assert rc == 1 and "gain parameter '1:3' is not 'level=gain'" in err
    rc, _, err = _run_cli(["-l", "-1", str(qrels), str(run)], capsys)
    assert rc == 1 and "-l -1: negative relevance levels are not supported (trec_eval then counts" in err


def test_small_example_by_hand(tmp_path, capsys):
    # ranking: c (2.0), b (1.0, docno 'b' > 'a'), a (1.0); judged: c=0, a=2, x=1 (not retrieved)
    qrels = tmp_path / "q.txt"
    qrels.write_text("7 0 c 0\n7 0 a 2\n7 0 x 1\n")
    run = tmp_path / "r.txt"
    run.write_text("7 Q0 a 1 1.0 mine\n7 Q0 b 2 1.0 mine\n7 Q0 c 3 2.0 mine\n")
    rc, out, _ = _run_cli(["-q", "-m", "map", "-m", "P.3", "-m", "recip_rank", "-m", "num_rel", "-m", "runid",
                           str(qrels), str(run)], capsys)
    assert rc == 0
    # a is relevant at rank 3: AP = (1/3) / R, R = 2 (a and x)
    assert out.splitlines() == [
        "num_rel               \t7\t2",
        "map                   \t7\t0.1667",
        "recip_rank            \t7\t0.3333",
        "P_3                   \t7\t0.3333",
        "runid                 \tall\tmine",
        "num_rel               \tall\t2",
        "map                   \tall\t0.1667",
        "recip_rank            \tall\t0.3333",
        "P_3                   \tall\t0.3333",
    ]
