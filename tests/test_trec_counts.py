"""trec_eval's count measures in ``rankjit trec_eval`` against the real trec_eval.

set_P, set_recall, set_map, set_relative_P, set_F, relative_P, Rprec_mult, iprec_at_recall,
11pt_avg, utility, and the measures of judged documents: bpref, gm_bpref,
num_nonrel_judged_ret, unj, rbp_resid (``rankjit.io._trec_counts``), with default and given parameters, on
random qrels and runs (ties, unjudged documents, negative grades, queries without
relevant documents, empty rankings under ``-c``) and on the TREC 2012 Web runs, with
``-q``, ``-M``, ``-c`` and ``-l``: the same lines, digit for digit.  trec_eval's own
expected outputs are held by ``test_cli_trec_eval.py``.
"""
from __future__ import annotations

import random
import re
import subprocess

import pytest
from test_hostile_trec import trec_eval_bin  # noqa: F401 (the fixture: the real trec_eval, built once)
from test_rbp_reference import WEB, random_files

from rankjit.cli import main

MEASURES = ["set_P", "set_recall", "set_map", "set_relative_P", "set_F", "relative_P", "Rprec_mult",
            "iprec_at_recall", "11pt_avg", "utility", "bpref", "gm_bpref", "num_nonrel_judged_ret", "unj", "rbp_resid",
            "binG"]
WITH_PARAMETERS = ["set_F.0.5", "relative_P.1,3,50", "Rprec_mult.0.5,1,3", "iprec_at_recall.0,.33,.5,1",
                   "11pt_avg.0,.25,.5", "utility.2,-1,0.5,0", "unj.1,7,100", "rbp_resid.p=0.5"]


def _rankjit(args, capsys):
    rc = main(["trec_eval", *map(str, args)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out.splitlines()


def _trec_eval(binary, args):
    return subprocess.run([binary, *map(str, args)], check=True, capture_output=True, text=True,
                          timeout=120).stdout.splitlines()


def _measure_args(measures):
    return [arg for m in measures for arg in ("-m", m)]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("measures", [MEASURES, WITH_PARAMETERS], ids=["defaults", "parameters"])
def test_random_runs(trec_eval_bin, tmp_path, seed, measures, capsys):  # noqa: F811 (the fixture)
    qrels, run = random_files(tmp_path, seed)
    flags = random.Random(seed).choice([[], ["-M5"], ["-c"], ["-l2"], ["-c", "-M3"]])
    args = ["-q", *flags, *_measure_args(measures), qrels, run]
    assert _rankjit(args, capsys) == _trec_eval(trec_eval_bin, args)


@pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")
@pytest.mark.parametrize("measures", [MEASURES, WITH_PARAMETERS], ids=["defaults", "parameters"])
@pytest.mark.parametrize("run", ["run.ql.cata.txt", "run.rm.cata.txt"])
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_web2012(trec_eval_bin, run, measures, capsys):  # noqa: F811 (the fixture)
    args = ["-q", *_measure_args(measures), WEB / "qrels.adhoc.txt", WEB / run]
    got = _rankjit(args, capsys)
    want = _trec_eval(trec_eval_bin, args)
    assert len(want) > 50 * 12
    assert got == want


def test_the_first_parameters_given_win(capsys, tmp_path):
    # trec_eval reads the first -m with parameters for a measure (meas_init.c); so does rankjit
    qrels, run = random_files(tmp_path, 0)
    first = _rankjit(["-m", "P.5", "-m", "P.10", "-m", "set_F.0.5", "-m", "set_F.2", qrels, run], capsys)
    assert [line.split()[0] for line in first] == ["P_5", "set_F_0.5"]


@pytest.mark.parametrize("measure, message", [
    ("iprec_at_recall.0.1,0.1", r"measure iprec_at_recall: duplicate parameters in '0.1,0.1'"),
    ("Rprec_mult.x", r"measure Rprec_mult: parameter 'x' is not a number"),
    ("utility.1,2", r"measure utility: 4 coefficients \(a,b,c,d\) expected, got '1,2'"),
    ("set_P.5", r"measure set_P takes no parameters, got 'set_P.5'"),
])
def test_parameter_errors(measure, message, tmp_path, capsys):
    qrels, run = random_files(tmp_path, 1)
    rc = main(["trec_eval", "-m", measure, str(qrels), str(run)])
    _, err = capsys.readouterr()
    assert rc != 0
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err), err


@pytest.mark.parametrize("seed", range(6))
def test_judged_only_against_trec_eval(trec_eval_bin, tmp_path, seed, capsys):  # noqa: F811 (the fixture)
    # -J: every measure on the condensed lists (the unjudged documents dropped after -M); rbp
    # asked alone (m_rbp.c reads uninitialised values next to other measures: test_rbp_reference.py)
    from rankjit.io._cli import SUPPORTED_LINE

    qrels, run = random_files(tmp_path, seed)
    flags = random.Random(seed).choice([["-J"], ["-J", "-M5"], ["-J", "-c"], ["-J", "-l2"]])
    args = ["-q", *flags, "-m", "all_trec", "-m", "dcg", qrels, run]
    got = [line for line in _rankjit(args, capsys) if not line.startswith("rbp ")]
    want = [line for line in _trec_eval(trec_eval_bin, args)
            if SUPPORTED_LINE.match(line) and not line.startswith("rbp ")]
    assert len(want) > 12 * 60
    # (a query left without a retrieved document, all unjudged, prints -nan in iprec_at_recall and 11pt_avg:
    # test_iprec_of_an_empty_ranking_is_nan)
    assert got == want
    alone = ["-q", *flags, "-m", "rbp", qrels, run]
    assert _rankjit(alone, capsys) == _trec_eval(trec_eval_bin, alone)


#: q1: R = 1, both retrieved documents unjudged; q2: R = 2, ranked; q3: R = 0, its document unjudged; q4: R = 3, its
#: document unjudged; q5: R = 1, not in the run
NAN_QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 1\nq2 0 e 0\nq3 0 f 0\nq4 0 g 1\nq4 0 h 1\nq4 0 i 1\nq5 0 k 1\n"
NAN_RUN = "q1 Q0 x 1 3 t\nq1 Q0 y 2 2 t\nq2 Q0 c 1 2 t\nq2 Q0 z 2 1 t\nq3 Q0 w 1 1 t\nq4 Q0 u 1 1 t\n"


@pytest.mark.parametrize("flags", [["-J"], ["-J", "-c"], ["-M0"], ["-c", "-M0"], ["-c"], ["-J", "-M1"]])
def test_iprec_of_an_empty_ranking_is_nan(trec_eval_bin, tmp_path, flags, capsys):  # noqa: F811 (the fixture)
    # trec_eval's iprec_at_recall is rel_so_far / i = 0 / 0 at the recall levels x with lround(x R) = 0 of a query
    # that ranks nothing (-J: only unjudged documents; -M 0; -J -c: a query the run lacks, without the stand-in
    # document -c alone gives it): -nan, and so 11pt_avg and their means
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(NAN_QRELS)
    run.write_text(NAN_RUN)
    measures = ["-m", "iprec_at_recall.0,.1,.2,.25,.3,.4,.45,.5,1", "-m", "11pt_avg", "-m", "num_ret"]
    args = ["-q", *flags, *measures, qrels, run]
    if "-c" in flags:
        want = _trec_eval(trec_eval_bin, args)
    else:  # (trec_eval refuses a qrels query the run lacks without -c: q5 out)
        (tmp_path / "qrels4").write_text(NAN_QRELS.replace("q5 0 k 1\n", ""))
        want = _trec_eval(trec_eval_bin, ["-q", *flags, *measures, tmp_path / "qrels4", run])
    assert _rankjit(args, capsys) == want
    nan = {tuple(line.split()[:2]) for line in want if line.endswith("-nan")}
    if flags == ["-J"]:  # q1 (R = 1): 0.00-0.40 and 0.25, 0.45 (lround(0.45) = 0), not 0.50; q3 (R = 0): every level
        q1 = {name for name, qid in nan if qid == "q1"}
        assert q1 == {"iprec_at_recall_0.00", "iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.25",
                      "iprec_at_recall_0.30", "iprec_at_recall_0.40", "iprec_at_recall_0.45", "11pt_avg"}
        assert {name for name, qid in nan if qid == "q3"} >= {"iprec_at_recall_1.00", "iprec_at_recall_0.50"}
        assert {name for name, qid in nan if qid == "q4"} == {"iprec_at_recall_0.00", "iprec_at_recall_0.10",
                                                              "11pt_avg"}  # R = 3: lround(0.1 * 3) = 0
        assert ("iprec_at_recall_0.40", "all") in nan and ("11pt_avg", "all") in nan
    if flags == ["-c"]:
        assert not nan  # -c's stand-in document: q5 ranks one document
    else:
        assert nan


def test_collection_size_for_utility(trec_eval_bin, tmp_path, capsys):  # noqa: F811 (the fixture)
    qrels, run = random_files(tmp_path, 3)
    args = ["-q", "-N", "5000", "-m", "utility.1,-1,-0.5,0.01", qrels, run]
    assert _rankjit(args, capsys) == _trec_eval(trec_eval_bin, args)
