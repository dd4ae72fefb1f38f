"""``rankjit trec_eval``'s options against the real trec_eval's: forms, -n, -M 0, -v, -c's num_rel.

trec_eval (trec_eval.c) takes short options and long ones (``--measure``,
``--query_eval_wanted``, ..., abbreviated as getopt_long allows).  Each case runs both on
the same files and compares the whole output; the options rankjit does not support
(other judgment or run formats, z-scores) give one clear error line.
"""
from __future__ import annotations

import re
import subprocess

import pytest
from test_hostile_trec import trec_eval_bin  # noqa: F401 (the fixture: the real trec_eval, built once)
from test_rbp_reference import TE_DATA, WEB, needs_te_data

from rankjit.cli import main


def _rankjit(args, capsys):
    rc = main(["trec_eval", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, out.splitlines(), err


def _trec_eval(binary, args):
    proc = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout.splitlines()


@needs_te_data
@pytest.mark.parametrize("options, run", [
    (["-n", "-q", "-m", "map"], "results.test"),
    (["--query_eval_wanted", "--measure", "map", "--measure", "P.5"], "results.test"),
    (["--meas", "P.5", "--Max", "3", "--comp"], "results.trunc"),  # abbreviated long options
    (["--level_for_rel", "2", "--Judged_docs_only", "-m", "official"], "results.test"),
    (["-M0", "-m", "map", "-m", "num_ret", "-m", "P.5"], "results.test"),
    (["-M", "0", "-q", "-c", "-m", "recip_rank"], "results.trunc"),
    (["-o", "-D", "0", "-m", "recip_rank"], "results.test"),
    (["-qc", "-m", "num_rel"], "results.trunc"),  # short options together
], ids=lambda o: " ".join(o) if isinstance(o, list) else o)
def test_option_forms_as_trec_eval(trec_eval_bin, options, run, capsys):  # noqa: F811 (the fixture)
    # (results.trunc lacks queries of the qrels: trec_eval 10 refuses it without -c)
    files = [TE_DATA / "qrels.test", TE_DATA / run]
    rc, got, err = _rankjit([*options, *files], capsys)
    assert rc == 0, err
    want_rc, want = _trec_eval(trec_eval_bin, [*options, *files])
    assert want_rc == 0
    assert got == want


@pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")
@pytest.mark.parametrize("options", [["-c", "-l2", "-m", "num_rel"], ["-c", "-l2", "-q", "-J", "-M5", "-m", "num_rel"],
                                     ["-c", "-m", "num_rel"], ["-l2", "-m", "num_rel"]])
def test_num_rel_summary_under_c(trec_eval_bin, options, capsys):  # noqa: F811 (the fixture)
    # with -c trec_eval's summary counts every judgment above 0 in the qrels, whatever -l, -J, -M
    files = [WEB / "qrels.adhoc.txt", WEB / "run.ql.cata.txt"]
    rc, got, err = _rankjit([*options, *files], capsys)
    assert rc == 0, err
    assert got == _trec_eval(trec_eval_bin, [*options, *files])[1]


def test_version_needs_no_files(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["trec_eval", "-v"])
    assert exc.value.code == 0
    out, err = capsys.readouterr()
    assert out == "" and re.fullmatch(r"rankjit trec_eval \S+ \(trec_eval 10\.0's measures and options\)\n", err)


@needs_te_data
@pytest.mark.parametrize("options, message", [
    (["-T", "other"], r"-T other: rankjit reads runs in trec_eval's 'trec_results' format only"),
    (["-M", "-1"], r"-M -1: the number of documents must be >= 0"),
])
def test_unsupported_options_give_one_error_line(options, message, capsys):
    rc, out, err = _rankjit([*options, TE_DATA / "qrels.test", TE_DATA / "results.test"], capsys)
    assert rc != 0 and out == []
    assert len(err.strip().splitlines()) == 1 and re.search(message, err), err


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("options", [["-l0", "-m", "all_trec"], ["-m", "ndcg.0=3,1=1,2=5", "-m", "ndcg_cut.5"],
                                     ["-l0", "-J", "-m", "all_trec", "-m", "ndcg.0=2"]], ids=" ".join)
def test_judged_grade_0_documents_as_trec_eval(trec_eval_bin, tmp_path, seed, options, capsys):  # noqa: F811
    # -l 0 (a judged grade-0 document is relevant, an unjudged one not) and ndcg.0=G (G for a judged
    # grade-0 document, 0 for an unjudged one): unjudged documents are told apart from judged grade-0 ones
    from test_rbp_reference import random_files

    from rankjit.io._cli import SUPPORTED_LINE

    qrels, run = random_files(tmp_path, seed)
    args = ["-q", *options, qrels, run]
    rc, got, err = _rankjit(args, capsys)
    assert rc == 0, err
    # rbp asked with other measures: trec_eval's m_rbp.c reads uninitialised values (test_rbp_reference.py)
    got = [line for line in got if not line.startswith("rbp ")]
    want = [line for line in _trec_eval(trec_eval_bin, args)[1]
            if SUPPORTED_LINE.match(line) and not line.startswith("rbp ")]
    nan = {line.split()[0] for line in want if line.endswith("-nan")}  # 0/0 under -J: test_trec_counts.py
    assert [a for a in got if a.split()[0] not in nan] == [b for b in want if b.split()[0] not in nan]
