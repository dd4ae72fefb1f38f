"""Hostile input to the command line and the frame readers, the second round (D4-D6, D9-D11).

Each test failed before its fix; the old behaviour is noted in the test.

- D6 (``rankjit trec_eval``, gains by level): a gain that is not finite, or whose DCG could
  overflow float64, is refused with one line naming the measure spec (before: ``-nan`` or
  ``inf`` lines, exit 0, a numpy RuntimeWarning on stderr).
- D9 (``-m`` cutoffs): spellings trec_eval's ``atol`` reads as another number (``1e2``,
  ``0x10``, ``1_000``) and duplicate cutoffs are refused; ``23.4`` and `` 5,+10`` still read
  as trec_eval reads them; a parameter of a measure that takes none says why it is refused.
- D4 (``rankjit analyze``, G-theory): zero variance components give defined results
  (``undefined``, ``unbounded``; rounding noise is 0), and every command reports any
  unexpected exception as one line naming its type (``--debug``: the traceback).
- D5 (``rankjit score-log``): a directory, a truncated or damaged Parquet file, an output
  path that is a directory or in a missing directory: one line naming the file.
- D11 (``rankjit.io`` frame readers): mixed-type and nested query columns: a clear error.
- D10 (``map``, ``map_cut``, ``gm_map`` of ``rankjit trec_eval``): trec_eval's own sums, so
  that an AP of exactly 0.44375 prints 0.4438 as in trec_eval.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import math
import re
import subprocess
import warnings

import numpy as np
import pytest
from test_hostile_trec import trec_eval_bin  # noqa: F401 (the fixture: the real trec_eval, built once)

from rankjit.cli import build_parser, main

COMPILE_NOTICE = "rankjit: compiling"


def _run(argv):
    """``rankjit ARGV`` in this process: ``(exit code, stdout, stderr lines)`` (compile notices left out)."""
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        rc = main([str(a) for a in argv])
    lines = [ln for ln in err.getvalue().splitlines() if not ln.startswith(COMPILE_NOTICE)]
    # numpy's NaN warnings (before: "invalid value encountered in divide" from ndcg's gains); not the integer
    # overflow warnings of the readers' hashing, which NUMBA_DISABLE_JIT=1 runs as numpy scalars
    lines += [f"warning: {w.message}" for w in caught
              if issubclass(w.category, RuntimeWarning) and "overflow encountered in scalar" not in str(w.message)]
    return rc, out.getvalue(), lines


def _one_error(argv, message):
    """The command fails with exactly one stderr line, ``message`` (a str, or a compiled regex)."""
    rc, out, lines = _run(argv)
    assert rc == 1 and out == "", (rc, out, lines)
    assert len(lines) == 1, lines
    if isinstance(message, str):
        assert lines[0] == message
    else:
        assert message.fullmatch(lines[0]), lines[0]


# three judged documents of q1 (grades 1, 1, 0), a run of two of them
QRELS = "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq2 0 e1 2\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 x 2 1.0 r\nq2 Q0 e1 1 1.0 r\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path / "qrels", tmp_path / "run"


# ---------------------------------------------------------------- D6: gains by level
@pytest.mark.parametrize("spec, level, gain", [
    ("ndcg.1=inf", "1", "inf"), ("ndcg.2=3,1=nan", "1", "nan"), ("Rndcg.1=-inf", "1", "-inf"),
    ("dcg.0=1e309", "0", "1e309"), ("G.1=nan", "1", "nan"), ("ndcg_rel.2=inf", "2", "inf"),
])
def test_a_gain_that_is_not_finite_is_refused(files, spec, level, gain):
    # before: `ndcg_1=inf  all  -nan`, exit 0, and numpy's "invalid value encountered in divide"
    _one_error(["trec_eval", "-q", "-m", spec, *files],
               f"rankjit trec_eval: error: measure {spec}: the gain {gain!r} of level {level} is not a finite "
               "number; give each level a finite gain")


# the longest ranking: 2 documents (+1: -c's stand-in document); the largest ideal ranking: q1's 3 judged ones
_WEIGHTS = 1.0 + 1.0 / math.log2(3.0) + 0.5


@pytest.mark.parametrize("spec", ["ndcg.1=1e308", "dcg.1=1e308", "ideal_dcg.1=9e307", "Rndcg.2=1e308",
                                  "ndcg_rel.1=-1e308"])
def test_a_gain_whose_dcg_could_overflow_is_refused(files, spec):
    # before (on trec_eval's test files): `ndcg_1=1e308  all  -nan` (trec_eval: 0.0000), dcg and ideal_dcg `inf`
    name, params = spec.split(".", 1)
    level, gain = params.split("=")
    _one_error(["trec_eval", "-q", "-m", spec, *files],
               f"rankjit trec_eval: error: measure {spec}: DCG could overflow float64: the largest gain "
               f"({abs(float(gain)):.4g}, level {level}) times the sum of the discount weights 1/log2(i+1) over "
               f"the 3 ranks of the longest ranking or ideal ranking ({_WEIGHTS:.4g}) exceeds 1.8e308; use smaller "
               "gains")


def test_g_is_bounded_by_its_undiscounted_sums_and_large_gains_within_the_bounds_are_read(files):
    _one_error(["trec_eval", "-m", "G.1=1e308", *files],
               "rankjit trec_eval: error: measure G.1=1e308: DCG could overflow float64: the largest gain (1e+308, "
               "level 1) times the 3 ranks of the longest ranking or ideal ranking (G adds the gains undiscounted) "
               "exceeds 1.8e308; use smaller gains")
    rc, out, lines = _run(["trec_eval", "-q", "-m", "ndcg.1=1e300", "-m", "dcg.1=1e300", "-m", "ideal_dcg.1=5e307",
                           *files])
    assert rc == 0 and lines == []
    values = [float(line.split("\t")[2]) for line in out.splitlines()]
    assert values and all(math.isfinite(v) for v in values)
    assert f"{'ndcg_1=1e300':<22}\tq1\t0.6131" in out.splitlines()  # 1 / (1 + 1/log2(3))


# ---------------------------------------------------------------- D9: -m cutoffs
@pytest.mark.parametrize("spec, part, atol, example", [
    ("P.1e2", "1e2", 1, "P.100"),  # before: P_100 (trec_eval: P_1)
    ("success.1e1", "1e1", 1, "success.10"),  # before: success_10 (trec_eval: success_1)
    ("ndcg_cut.5,1.5e1", "1.5e1", 1, "ndcg_cut.15"),
    ("P.1_000", "1_000", 1, "P.1000"),  # before: P_1000 (Python's float reads the underscore)
    ("recall.0x10", "0x10", 0, "recall.10"),
    ("P.inf", "inf", 0, "P.10"),  # before: an OverflowError traceback
    ("P.abc", "abc", 0, "P.10"),
])
def test_cutoffs_atol_reads_otherwise_are_refused(files, spec, part, atol, example):
    name = spec.split(".")[0]
    _one_error(["trec_eval", "-m", spec, *files],
               f"rankjit trec_eval: error: measure {name}: cutoff {part!r} is not a whole number in decimal digits "
               f"(trec_eval reads it with atol as {atol}); write it in digits, e.g. {example}")


@pytest.mark.parametrize("spec, params, twice", [
    ("P.5,5", "5,5", "5"), ("ndcg_cut.5,10,5", "5,10,5", "5"), ("P.5,5.5", "5,5.5", "5"),
    ("map_cut.3,1,3,1", "3,1,3,1", "1, 3"),
])
def test_duplicate_cutoffs_are_refused(files, spec, params, twice):
    # before: deduplicated (P_5 once), where trec_eval stops: "duplicate cutoffs detected"
    name = spec.split(".")[0]
    _one_error(["trec_eval", "-m", spec, *files],
               f"rankjit trec_eval: error: measure {name}: duplicate cutoffs in {params!r} ({twice} given twice; "
               "trec_eval refuses them too: duplicate cutoffs detected)")


def test_cutoffs_beyond_int64_are_refused_and_those_atol_reads_as_written_are_read(files):
    # before: P_100000000000000000000 (trec_eval: P_9223372036854775807)
    _one_error(["trec_eval", "-m", "P.99999999999999999999", *files],
               "rankjit trec_eval: error: measure P: cutoff '99999999999999999999' is beyond int64 (trec_eval reads "
               "it as 9223372036854775807)")
    rc, out, lines = _run(["trec_eval", "-m", "P.23.4", "-m", "success. 5,+10", "-m", "recall.7.", *files])
    assert rc == 0 and lines == []
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == [
        "P_23", "recall_7", "success_5", "success_10"]


@pytest.mark.parametrize("spec", ["map.5", "bpref.3", "num_ret.10"])
def test_parameters_of_a_measure_without_parameters_say_why_they_are_refused(files, spec):
    name = spec.split(".")[0]
    _one_error(["trec_eval", "-m", spec, *files],
               f"rankjit trec_eval: error: measure {name} takes no parameters, got {spec!r} (trec_eval ignores them "
               f"and computes {name}; rankjit refuses them, so that a parameter given to the wrong measure, e.g. "
               "map.5 meant as map_cut.5, is not silently dropped)")


def test_cutoff_spellings_as_trec_eval(trec_eval_bin, files):  # noqa: F811 (the fixture)
    """Accepted spellings print trec_eval's lines; refused ones are those trec_eval reads as another number."""
    for spec in ("P.23.4", "P. 5,+10", "success.3.9,1"):
        want = subprocess.run([trec_eval_bin, "-q", "-m", spec, *map(str, files)], capture_output=True, text=True,
                              check=True).stdout
        rc, out, _ = _run(["trec_eval", "-q", "-m", spec, *files])
        assert rc == 0 and out == want, spec
    for spec, trec_eval_reads in (("P.1e2", "P_1"), ("success.1e1", "success_1"), ("P.1_000", "P_1")):
        want = subprocess.run([trec_eval_bin, "-m", spec, *map(str, files)], capture_output=True, text=True,
                              check=True).stdout
        assert want.split("\t")[0].strip() == trec_eval_reads
        assert _run(["trec_eval", "-m", spec, *files])[0] == 1
    for spec in ("P.5,5", "ndcg_cut.5,10,5"):
        proc = subprocess.run([trec_eval_bin, "-m", spec, *map(str, files)], capture_output=True, text=True)
        assert proc.returncode != 0 and "duplicate cutoffs detected" in proc.stderr


@pytest.mark.parametrize("spec, part", [
    ("ndcg.1=1_0", "'1=1_0' is not 'level=gain'"), ("ndcg.1=0x10", "'1=0x10' is not 'level=gain'"),
    ("ndcg.1_0=3", "'1_0=3' is not 'level=gain'"), ("ndcg. 1= 2", "' 1= 2' is not 'level=gain'"),
    ("ndcg.1=\u0661", "'1=\u0661' is not 'level=gain'"),
])
def test_gain_spellings_atof_reads_otherwise_are_refused(files, spec, part):
    # Python's int() and float() read 1_0 as 10, '\u0661' (an Arabic-Indic one) as 1 and ' 2' as 2; trec_eval's
    # atol / atof read 1, 0, and drops the blank-spaced pair (its default gains): a silent difference before
    spec = spec.encode().decode("unicode_escape")
    part = part.encode().decode("unicode_escape")
    _one_error(["trec_eval", "-m", spec, *files], f"rankjit trec_eval: error: measure ndcg: gain parameter {part}")


@pytest.mark.parametrize("spec, message", [
    ("iprec_at_recall.0.5,1_0", "measure iprec_at_recall: parameter '1_0' is not a number in decimal digits "
                                "(e.g. 0.5, 1e-3)"),
    ("rbp.p=0_5", "measure rbp: p='0_5' is not a number in decimal digits"),
])
def test_real_parameters_atof_reads_otherwise_are_refused(files, spec, message):
    _one_error(["trec_eval", "-m", spec, *files], f"rankjit trec_eval: error: {message}")


def test_gain_spellings_as_trec_eval(trec_eval_bin, files):  # noqa: F811 (the fixture)
    # (gains at least 1 apart: trec_eval's ideal DCG sorts gains by (int)(g1 - g2), docs/cli.md)
    for spec in ("ndcg.1=2.5,2=1e1", "ndcg.1=+2", "ndcg.1=2.E0,2=.35e1", "ndcg.-1=3"):
        want = subprocess.run([trec_eval_bin, "-q", "-m", spec, *map(str, files)], capture_output=True, text=True,
                              check=True).stdout
        rc, out, _ = _run(["trec_eval", "-q", "-m", spec, *files])
        assert rc == 0 and out == want, spec


# ---------------------------------------------------------------- D4: G-theory with zero variance
def test_identical_runs_have_no_system_variance():
    from rankjit.stats import gtheory

    # RR values: before, var_system 3.1e-33 and var_interaction 9.2e-33 (rounding through the grand mean)
    g = gtheory([[0.16666666666666666, 1.0, 0.05263157894736842]] * 2)
    assert (g.var_system, g.var_interaction) == (0.0, 0.0) and g.var_topic > 0
    assert g.phi() == 0.0 and g.phi(50) == 0.0
    assert math.isnan(g.erho2())  # 0/0: undefined (before: ZeroDivisionError)
    assert g.topics_needed(0.95) == math.inf
    g = gtheory([[0.5, 0.5, 0.5]] * 2)  # no variance at all: Phi undefined too (before: ZeroDivisionError)
    assert (g.var_system, g.var_topic, g.var_interaction) == (0.0, 0.0, 0.0)
    assert math.isnan(g.phi()) and math.isnan(g.erho2()) and g.topics_needed() == math.inf
    assert np.isnan(g.phi(np.array([1, 10]))).all()


def test_mean_squares_equal_in_exact_arithmetic_give_no_system_variance():
    from rankjit.stats import gtheory

    # MS_s = MS_e = 0.015 exactly; before: var_system 9.25e-18 and 51341035752023573 topics for Phi >= 0.95
    g = gtheory([[0.3, 0.5, 0.4], [0.1, 0.3, 0.5]])
    assert g.var_system == 0.0 and g.topics_needed(0.95) == math.inf
    assert math.isclose(g.var_interaction, 0.015) and math.isclose(g.var_topic, 0.01)
    g = gtheory([[0.2, 0.4, 0.6], [0.3, 0.5, 0.9]])  # a real difference is kept (the docstring's example)
    assert round(g.var_system, 5) == 0.01167 and g.topics_needed(0.95) == 109


def test_analyze_prints_undefined_and_unbounded(files, tmp_path):
    qrels, run = files
    copy = tmp_path / "copy"
    copy.write_text(RUN)
    # before: half the table, then a ZeroDivisionError traceback
    rc, out, lines = _run(["analyze", "--stability", "-m", "AP", qrels, run, copy])
    assert rc == 0 and lines == []
    assert "| AP | 0 | 0.125 | 0 | 0.0000 | undefined | unbounded |" in out.splitlines()
    assert ("undefined: 0/0 (Erho2: var_system and var_interaction are 0; Phi: all three are 0), e.g. runs that "
            "score every topic alike.") in out.splitlines()
    assert ("unbounded: var_system is 0 (the runs do not differ beyond the noise), so no number of topics reaches "
            "Phi >= 0.95.") in out.splitlines()


def _boom(*args, **kwargs):
    raise ZeroDivisionError("float division by zero\nsecond line")


def test_every_command_reports_an_unexpected_exception_in_one_line(files, tmp_path, monkeypatch):
    qrels, run = files
    (tmp_path / "log.parquet").write_bytes(b"")
    for command, target, argv in [
        ("analyze", "rankjit.stats._gtheory.gtheory", ["--stability", qrels, run, run]),
        ("compare", "rankjit.stats._tests.compare", [qrels, run, run]),
        ("score-log", "rankjit.stream.evaluate", ["--quiet", "--query", "q", "--label", "y", "--score", "s", "-m",
                                                   "AP", tmp_path / "log.parquet"]),
        ("trec_eval", "rankjit.io._trec.read_trec_run", [qrels, run]),  # (these two did it already)
        ("eval", "rankjit.io._trec.read_trec_run", [qrels, run, "AP"]),
    ]:
        module, _, name = target.rpartition(".")
        with monkeypatch.context() as patch:
            patch.setattr(__import__(module, fromlist=[name]), name, _boom)
            # before (analyze, compare, score-log): the traceback of the ZeroDivisionError
            _one_error([command, *argv], f"rankjit {command}: error: ZeroDivisionError: float division by zero "
                                         "(--debug shows the traceback)")
            rc, out, lines = _run([command, "--debug", *argv])
            assert rc == 1 and "Traceback (most recent call last):" in lines, command
            assert "ZeroDivisionError: float division by zero" in lines, command


def test_every_command_takes_debug():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(commands) >= {"demo", "trec_eval", "eval", "score-log", "compare", "analyze", "warmup"}
    for name, sub in commands.items():
        assert "--debug" in sub._option_string_actions, name  # before: compare, analyze, score-log, ... had none


def test_error_line():
    from rankjit._errors import error_line

    assert error_line(ZeroDivisionError()) == "ZeroDivisionError (--debug shows the traceback)"
    assert error_line(OSError("\n  \ndisk full\nmore")) == "OSError: disk full (--debug shows the traceback)"
    assert error_line(KeyError("column 'q' not found")) == "column 'q' not found"
    assert error_line(ValueError("bad value")) == "bad value"


def test_a_closed_pipe_ends_a_command_quietly(files, monkeypatch):
    from rankjit.io import _trec

    def closed(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(_trec, "read_trec_run", closed)
    assert _run(["trec_eval", *files]) == (0, "", [])
    assert _run(["trec_eval", "--debug", *files]) == (0, "", [])  # before: a traceback, exit 1


# ---------------------------------------------------------------- D5: score-log and its files
def _log(path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"q": ["a", "a", "b"], "y": [1, 0, 1], "s": [0.5, 0.4, 0.3]}), path)
    return path


def _score_log(*args):
    return ["score-log", "--quiet", "--query", "q", "--label", "y", "--score", "s", "-m", "AP", *args]


@pytest.mark.parametrize("sort", [[], ["--sort"]])
def test_score_log_of_a_directory(tmp_path, sort):
    pytest.importorskip("pyarrow")
    if sort:
        pytest.importorskip("polars")
    # before: a 28-line pyarrow traceback ending in "OSError: Cannot open for reading: path ... is a directory"
    _one_error(_score_log(*sort, tmp_path),
               f"rankjit score-log: error: {tmp_path}: is a directory, not a Parquet file; give the path of one "
               "Parquet file")


def test_score_log_output_to_a_directory(tmp_path):
    log = _log(tmp_path / "log.parquet")
    (tmp_path / "out").mkdir()
    # before: a 31-line IsADirectoryError traceback, after the evaluation
    _one_error(_score_log("-o", tmp_path / "out", log),
               f"rankjit score-log: error: {tmp_path / 'out'}: is a directory; the per-query output is written to a "
               "Parquet file: give a file name (e.g. per_query.parquet)")
    missing = tmp_path / "no" / "out.parquet"
    _one_error(_score_log("-o", missing, log),
               f"rankjit score-log: error: {missing}: cannot write the per-query output there: no directory "
               f"{tmp_path / 'no'}")


@pytest.mark.parametrize("sort", [[], ["--sort"]])
def test_score_log_of_a_truncated_or_foreign_file(tmp_path, sort):
    log = _log(tmp_path / "log.parquet")
    if sort:
        pytest.importorskip("polars")
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(log.read_bytes()[:300])
    text = tmp_path / "run.txt"
    text.write_text(RUN)
    # before: "rankjit score-log: error: Parquet magic bytes not found in footer. ..." (no file named)
    for path in (cut, text):
        _one_error(_score_log(*sort, path), re.compile(
            re.escape(f"rankjit score-log: error: {path}: not a Parquet file, or a truncated or damaged one (") +
            r".*magic bytes.*\)"))


def test_score_log_of_a_damaged_row_group(tmp_path):
    log = _log(tmp_path / "log.parquet")
    data = bytearray(log.read_bytes())
    data[4:60] = b"\xff" * 56  # the first page's header: the footer still reads
    log.write_bytes(bytes(data))
    _one_error(_score_log(log), re.compile(
        re.escape(f"rankjit score-log: error: {log}: a row group cannot be read: the file is damaged or truncated (")
        + r".+\)"))


# ---------------------------------------------------------------- D11: frame readers
def _frame_error(frame, message):
    from rankjit.io import evaluate_frame

    with pytest.raises(ValueError) as info:
        evaluate_frame(frame, ["AP"], query="q", label="y", score="s")
    assert str(info.value) == message


def test_pandas_columns_of_mixed_types():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    # before: ArrowInvalid: ("Could not convert '1' with type str: tried to convert to int64", 'Conversion failed ...')
    _frame_error(pd.DataFrame({"q": [1, "1", 1], "y": [1, 0, 1], "s": [0.3, 0.2, 0.1]}),
                 "query column 'q' mixes value types (int, str); a column needs one type: convert it, e.g. "
                 "df['q'] = df['q'].astype(str)")
    _frame_error(pd.DataFrame({"q": [1, 1, 2], "y": [1, "0", 1], "s": [0.3, 0.2, 0.1]}),
                 "label column 'y' mixes value types (int, str); a column needs one type: convert it, e.g. "
                 "df['y'] = pd.to_numeric(df['y'])")
    _frame_error(pd.DataFrame({"q": [1, 1, 2], "y": [1, 0, 1], "s": [0.3, "x", None]}),
                 "score column 's' mixes value types (float, str); a column needs one type: convert it, e.g. "
                 "df['s'] = pd.to_numeric(df['s'])")


def test_pandas_column_of_objects_arrow_cannot_convert():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    with pytest.raises(ValueError, match=r"^query column 'q' holds object values that Arrow cannot convert \("
                                         r"Could not convert .*\); convert it, e.g. df\['q'\] = df\['q'\]\.astype"
                                         r"\(str\)$"):
        from rankjit.io import from_pandas

        from_pandas(pd.DataFrame({"q": [object(), object()], "y": [1, 0], "s": [0.1, 0.2]}),
                    query="q", label="y", score="s")


def test_nested_query_columns():
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    advice = "which cannot be grouped as query ids; give each row an integer or string id (e.g. join a list into " \
             "one string)"
    # before: ArrowNotImplementedError: Function 'dictionary_encode' has no kernel matching input types (list<...>)
    _frame_error(pa.table({"q": [[1], [1]], "y": [1, 0], "s": [0.1, 0.2]}),
                 f"query column 'q' holds list<item: int64> values, {advice}")
    _frame_error(pa.table({"q": [{"a": 1}, {"a": 1}], "y": [1, 0], "s": [0.1, 0.2]}),
                 f"query column 'q' holds struct<a: int64> values, {advice}")
    _frame_error(pd.DataFrame({"q": [[1], [1], [2]], "y": [1, 0, 1], "s": [0.3, 0.2, 0.1]}),
                 f"query column 'q' holds list<item: int64> values, {advice}")


# ---------------------------------------------------------------- D10: trec_eval's AP sums
AP_QRELS = "".join(f"q 0 {d} {int(d != 'a')}\n" for d in "abcdefxyz")
AP_RUN = "".join(f"q Q0 {d} {i + 1} {6 - i} r\n" for i, d in enumerate("abcdef"))


def test_ap_of_exactly_0_44375_prints_as_trec_eval(tmp_path):
    # AP = (1/2 + 2/3 + 3/4 + 4/5 + 5/6) / 8 = 0.44375: trec_eval's sum of divisions lands 1 ulp high and prints
    # 0.4438; before, rankjit printed 0.4437 (the engine adds h * (1/r))
    (tmp_path / "qrels").write_text(AP_QRELS)
    (tmp_path / "run").write_text(AP_RUN)
    rc, out, lines = _run(["trec_eval", "-q", "-m", "map", "-m", "gm_map", "-m", "map_cut.5,10", tmp_path / "qrels",
                           tmp_path / "run"])
    assert rc == 0 and lines == []
    assert out.splitlines() == [
        "map                   \tq\t0.4438", "map_cut_5             \tq\t0.3396", "map_cut_10            \tq\t0.4438",
        "map                   \tall\t0.4438", "gm_map                \tall\t0.4438",
        "map_cut_5             \tall\t0.3396", "map_cut_10            \tall\t0.4438",
    ]


def _sequential_ap(rel, num_rel, k=None):
    """m_map.c / m_map_cut.c in Python: ``sum += rel_so_far / (i + 1)`` in rank order, then / num_rel."""
    h, s = 0, 0.0
    for i, r in enumerate(rel[:k]):
        if r:
            h += 1
            s += h / (i + 1)
    return s / num_rel if h else 0.0


def test_ap_sums_are_trec_eval_s_bit_for_bit():
    from rankjit.io import _trec_counts as C
    from rankjit.io._cli import _trec_ap

    rng = np.random.default_rng(7)
    lengths = np.concatenate((rng.integers(0, 40, 60), [0, 1, 300, 500, 2000]))  # a few long queries
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    rel = rng.random(int(offsets[-1])) < rng.random(int(offsets[-1]))
    num_rel = np.array([int(rel[a:b].sum()) + int(x) for a, b, x in zip(offsets, offsets[1:],
                                                                          rng.integers(0, 5, len(lengths)))])
    counts = C.RankedRelevance(rel, offsets, num_rel)
    ctx = type("Ctx", (), {"counts": counts})
    [(_, kind, got)] = _trec_ap(ctx, "map", None)
    want = [_sequential_ap(rel[a:b], n) for a, b, n in zip(offsets, offsets[1:], num_rel)]
    assert kind == "float" and got.tolist() == want
    for name, kind, values in _trec_ap(ctx, "map_cut", (1, 7, 100, 1000)):
        k = int(name.rpartition("_")[2])
        assert values.tolist() == [_sequential_ap(rel[a:b], n, k) for a, b, n in zip(offsets, offsets[1:], num_rel)]


@pytest.mark.parametrize("seed", range(3))
def test_ap_as_the_real_trec_eval(trec_eval_bin, tmp_path, seed):  # noqa: F811 (the fixture)
    """map, gm_map and map_cut of random qrels and runs (ties, unjudged documents) equal trec_eval's lines."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(40):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 60)))]
        for i, d in enumerate(docs):
            if i == 0 or rng.random() < 0.7:  # (every query judged: trec_eval refuses a run query the qrels lack)
                qrels.append(f"q{q} 0 {d} {int(rng.integers(-1, 4))}\n")
        for i, d in enumerate(rng.permutation(docs)):
            run.append(f"q{q} Q0 {d} {i + 1} {int(rng.integers(0, 20))} r\n")
    # and the query whose AP is exactly 0.44375 (before: 0.4437 where trec_eval prints 0.4438)
    (tmp_path / "qrels").write_text("".join(qrels) + AP_QRELS)
    (tmp_path / "run").write_text("".join(run) + AP_RUN)
    for options in ([], ["-c"], ["-J"], ["-M", "7"], ["-l", "2"]):
        argv = ["-q", *options, "-m", "map", "-m", "gm_map", "-m", "map_cut.1,3,10,100", tmp_path / "qrels",
                tmp_path / "run"]
        want = subprocess.run([trec_eval_bin, *map(str, argv)], capture_output=True, text=True, check=True).stdout
        rc, out, lines = _run(["trec_eval", *argv])
        assert rc == 0 and out == want, options
