"""``rankjit trec_eval``'s options against the real trec_eval's: forms, -n, -M 0, -v, -c's num_rel.

trec_eval (trec_eval.c) takes short options and long ones (``--measure``,
``--query_eval_wanted``, ..., abbreviated as getopt_long allows).  Each case runs both on
the same files and compares the whole output; the options rankjit does not support
(other judgment or run formats, z-scores) give one clear error line.
"""
from __future__ import annotations

import re
import subprocess
import sys

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


@needs_te_data
@pytest.mark.parametrize("measures", [
    ["-m", "Rprec_mult.5000000000000000000"],
    ["-q", "-m", "iprec_at_recall.1234567.5,0.5,0.123"],
    ["-m", "Rprec_mult.0.123456789,123456789", "-m", "set_F.1234567.89"],
], ids=lambda m: " ".join(m))
def test_names_of_real_levels_as_trec_eval(trec_eval_bin, measures, capsys):  # noqa: F811 (the fixture)
    # trec_eval prints a real level %3.2f, cut to 8 characters (Rprec_mult_50000000)
    files = [TE_DATA / "qrels.test", TE_DATA / "results.test"]
    rc, got, err = _rankjit([*measures, *files], capsys)
    assert rc == 0, err
    assert got == _trec_eval(trec_eval_bin, [*measures, *files])[1]


@pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")
@pytest.mark.parametrize("options", [["-c", "-l2", "-m", "num_rel"], ["-c", "-l2", "-q", "-J", "-M5", "-m", "num_rel"],
                                     ["-c", "-m", "num_rel"], ["-l2", "-m", "num_rel"]])
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_num_rel_summary_under_c(trec_eval_bin, options, capsys):  # noqa: F811 (the fixture)
    # with -c trec_eval's summary counts every judgment above 0 in the qrels, whatever -l, -J, -M
    files = [WEB / "qrels.adhoc.txt", WEB / "run.ql.cata.txt"]
    rc, got, err = _rankjit([*options, *files], capsys)
    assert rc == 0, err
    assert got == _trec_eval(trec_eval_bin, [*options, *files])[1]


def _command(args, **kwargs):
    """``rankjit trec_eval`` in a process of its own (standard input, exit status, bytes out)."""
    return subprocess.run([sys.executable, "-m", "rankjit", "trec_eval", *map(str, args)], capture_output=True,
                          timeout=300, **kwargs)


@needs_te_data
def test_run_from_standard_input(trec_eval_bin, tmp_path):  # noqa: F811 (the fixture)
    # '-' as the run: trec_eval reads it from standard input, even when a file is named '-'; rankjit too
    qrels, run = TE_DATA / "qrels.test", TE_DATA / "results.test"
    by_name = _command(["-q", "-m", "all_trec", qrels, run])
    assert by_name.returncode == 0 and len(by_name.stdout.splitlines()) > 300, by_name.stderr
    (tmp_path / "-").write_text("not a run\n")
    piped = _command(["-q", "-m", "all_trec", qrels, "-"], input=run.read_bytes(), cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == by_name.stdout
    theirs = subprocess.run([trec_eval_bin, "-q", "-m", "map", "-m", "P.5", qrels, "-"], input=run.read_bytes(),
                            capture_output=True, timeout=120, cwd=tmp_path)
    assert theirs.returncode == 0
    assert _command(["-q", "-m", "map", "-m", "P.5", qrels, "-"], input=run.read_bytes()).stdout == theirs.stdout
    # an empty standard input: no results, one error line
    empty = _command([qrels, "-"], input=b"")
    assert empty.returncode == 1 and empty.stdout == b""
    # one error line, no traceback (interpreted kernels, NUMBA_DISABLE_JIT=1, may print numpy's overflow warnings
    # of the reader's wrapping hash before it)
    errors = [line for line in empty.stderr.decode().splitlines() if "error" in line]
    assert errors == ["rankjit trec_eval: error: -: the run holds no results (the file is empty or all blank or "
                      "comment lines)"], empty.stderr.decode()
    assert "Traceback" not in empty.stderr.decode()


@needs_te_data
def test_qrels_named_dash_is_a_file_as_in_trec_eval(trec_eval_bin, tmp_path):  # noqa: F811 (the fixture)
    # trec_eval reads only the run from standard input: '-' as the qrels is a file name ('Cannot read qrels file')
    qrels, run = TE_DATA / "qrels.test", TE_DATA / "results.test"
    theirs = subprocess.run([trec_eval_bin, "-m", "map", "-", run], input=qrels.read_bytes(), capture_output=True,
                            timeout=120, cwd=tmp_path)
    assert theirs.returncode != 0 and b"Cannot read qrels file '-'" in theirs.stderr
    ours = _command(["-m", "map", "-", run], input=qrels.read_bytes(), cwd=tmp_path)
    assert ours.returncode == 1 and ours.stdout == b""
    assert ours.stderr.decode() == "rankjit trec_eval: error: -: no such file (standard input, '-', is read for the " \
                                   "run only, as trec_eval does)\n"
    (tmp_path / "-").write_bytes(qrels.read_bytes())  # a file named '-': read as the qrels by both
    theirs = subprocess.run([trec_eval_bin, "-m", "map", "-", run], capture_output=True, timeout=120, cwd=tmp_path)
    ours = _command(["-m", "map", "-", run], cwd=tmp_path)
    assert theirs.returncode == ours.returncode == 0 and ours.stdout == theirs.stdout


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
    assert got == want  # (-nan lines too: 0 / 0 under -J, test_trec_counts.py)
