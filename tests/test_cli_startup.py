"""Start-up of the command line: commands import only what they use (issue 13, part 3).

``rankjit trec_eval`` on TREC text files must not import pandas, pyarrow, polars,
matplotlib or tqdm; ``rankjit --help`` lists every command without importing any command module.  The
commands run in fresh interpreters (subprocesses, each bounded by a timeout); no
test here measures time.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rankjit
from rankjit.cli import COMMANDS, build_parser, main
from rankjit.io._cli import SUPPORTED_LINE

DATA = Path(__file__).parents[2] / "shared" / "data"  # as tests/test_cli_trec_eval.py
TE = DATA / "trec_eval"
needs_te = pytest.mark.skipif(not TE.is_dir(), reason=f"trec_eval test data not found at {TE} (../shared/data)")

JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT") == "1"
#: modules a TREC text-file command must not import
HEAVY = ("pandas", "pyarrow", "polars", "matplotlib", "tqdm")
#: generous: the first run on an empty Numba cache compiles the kernels
TIMEOUT = 900
SRC = str(Path(rankjit.__file__).resolve().parents[1])  # the rankjit under test

# trec_eval's output lines of the measures rankjit computes (rankjit.io._cli.SUPPORTED_LINE)


def _supported_lines(text):
    return [line for line in text.splitlines() if SUPPORTED_LINE.match(line)]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, *filter(None, [env.get("PYTHONPATH")])])
    return env


def _python(*args, check=True):
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=TIMEOUT, env=_env())
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


# Runs the CLI's main() in a fresh interpreter and reports its output and what it imported.
_PROBE = r"""
import contextlib, importlib.util, io, json, sys
from rankjit.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(sys.argv[1:])
arraymath = sys.modules.get("numba.np.arraymath")
print(json.dumps({
    "rc": rc,
    "out": out.getvalue(),
    "heavy": sorted(m for m in sys.modules if m.split(".")[0] in %r),
    "kernels_loaded": arraymath is not None,
    "numba_blas": getattr(arraymath, "_HAVE_BLAS", None),
    "scipy_linalg": "scipy.linalg" in sys.modules,
    "finders": [repr(f) for f in sys.meta_path if getattr(f, "__module__", None) == "rankjit.cli"],
}))
""" % (HEAVY,)


def _probe(*argv):
    proc = _python("-c", _PROBE, *argv)
    return json.loads(proc.stdout.strip().splitlines()[-1])


#: the same, with main() run as the program is (argv not given: read from sys.argv)
_PROGRAM_PROBE = _PROBE.replace("rc = main(sys.argv[1:])", "sys.argv = ['rankjit', *sys.argv[1:]]; rc = main()")


def _scipy_installed():
    import importlib.util

    return importlib.util.find_spec("scipy") is not None


def _in_process(argv, capsys):
    capsys.readouterr()
    rc = main(argv)
    out, _ = capsys.readouterr()
    assert rc == 0
    return out


# ---- trec_eval on text files --------------------------------------------------------


@needs_te
def test_trec_eval_imports_no_heavy_module_and_prints_the_same(capsys):
    args = ["trec_eval", str(TE / "qrels.test"), str(TE / "results.test")]
    got = _probe(*args)
    assert got["rc"] == 0
    assert got["heavy"] == []
    if not JIT_DISABLED:
        assert got["kernels_loaded"]
    expected = _supported_lines((TE / "out.test").read_text())  # trec_eval's own output
    assert len(expected) >= 17
    assert got["out"].splitlines() == expected
    assert got["out"] == _in_process(args, capsys)  # and what main() prints in this process


@needs_te
def test_the_program_hides_scipy_from_numbas_blas_probe_and_prints_the_same(capsys):
    # rankjit.cli._skip_numbas_blas_probe: only main() run as the program (the console command, python -m
    # rankjit) loads numba.np.arraymath with SciPy hidden; a call from other code leaves Numba's probe alone
    args = ["trec_eval", "-m", "all_trec", str(TE / "qrels.test"), str(TE / "results.test")]
    program = json.loads(_python("-c", _PROGRAM_PROBE, *args).stdout.strip().splitlines()[-1])
    called = _probe(*args)
    assert program["rc"] == called["rc"] == 0
    assert program["out"] == called["out"] == _in_process(args, capsys)  # the same output, however run
    assert program["finders"] == called["finders"] == []  # nothing of rankjit's left on sys.meta_path
    if JIT_DISABLED:  # no kernel loaded, so no probe ran during the command
        return
    assert program["kernels_loaded"] and called["kernels_loaded"]
    assert program["numba_blas"] is False and not program["scipy_linalg"]
    if _scipy_installed():
        assert called["numba_blas"] is True and called["scipy_linalg"]  # the caller's process: untouched
    # SciPy stays importable in the program's process once the probe has run
    check = _PROGRAM_PROBE + "import scipy.linalg; print('scipy.linalg', scipy.linalg.__name__)\n"
    if _scipy_installed():
        assert _python("-c", check, *args).stdout.strip().splitlines()[-1] == "scipy.linalg scipy.linalg"


@needs_te
def test_trec_eval_on_gzip_files_imports_no_heavy_module(tmp_path, capsys):
    paths = []
    for name in ("qrels.test", "results.test"):
        path = tmp_path / f"{name}.gz"
        path.write_bytes(gzip.compress((TE / name).read_bytes()))
        paths.append(str(path))
    args = ["trec_eval", "-q", "-m", "all_trec", *paths]
    got = _probe(*args)
    assert got["rc"] == 0
    assert got["heavy"] == []
    plain = _in_process(["trec_eval", "-q", "-m", "all_trec", str(TE / "qrels.test"), str(TE / "results.test")],
                        capsys)
    assert got["out"] == plain
    assert got["out"].splitlines() == _supported_lines((TE / "out.test.aq").read_text())


@needs_te
def test_eval_command_imports_no_heavy_module(capsys):
    args = ["eval", str(TE / "qrels.test"), str(TE / "results.test"), "nDCG@10", "AP", "P@5"]
    got = _probe(*args)
    assert got["rc"] == 0
    assert got["heavy"] == []
    assert got["out"] == _in_process(args, capsys)


@needs_te
def test_python_m_rankjit_trec_eval():
    proc = _python("-m", "rankjit", "trec_eval", str(TE / "qrels.test"), str(TE / "results.test"))
    assert proc.stdout.splitlines() == _supported_lines((TE / "out.test").read_text())
    assert "left out" not in proc.stderr  # trec_eval's default measures: all computed


def test_reading_trec_text_needs_no_pyarrow():
    code = (
        "import sys\n"
        "from rankjit.io import align, read_trec_qrels, read_trec_run\n"
        "run = read_trec_run(b'q1 Q0 a 1 2 t\\nq1 Q0 b 2 1 t\\nq2 Q0 c 1 1 t\\n')\n"
        "qrels = read_trec_qrels(b'q1 0 b 1\\nq1 0 c 1\\nq3 0 a 1\\n')\n"
        "al = align(run, qrels, complete=True)\n"
        "print(al.qids, al.labels.tolist(), al.n_relevant.tolist())\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    lines = _python("-c", code).stdout.strip().splitlines()
    assert lines == ["['q1', 'q3'] [0, 1] [2, 1]", "[]"]


def test_import_rankjit_stays_lazy():
    code = ("import sys, rankjit, rankjit.io, rankjit.stats\n"
            "print(sorted(m for m in ('numpy', 'numba', 'rankjit.io._trec', 'rankjit.stats._tests') "
            "if m in sys.modules))\n")
    assert _python("-c", code).stdout.strip() == "[]"


# ---- the parser ---------------------------------------------------------------------


def test_help_lists_every_command_without_importing_them():
    code = ("import contextlib, io, sys\n"
            "from rankjit.cli import main\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    try:\n"
            "        main(['--help'])\n"
            "    except SystemExit as exc:\n"
            "        assert exc.code == 0, exc.code\n"
            "print(out.getvalue())\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'numba')\n"
            "             or m.startswith('rankjit.') and m not in ('rankjit.cli', 'rankjit._lazy')))\n")
    lines = _python("-c", code).stdout.strip().splitlines()
    # no command module, no numpy / numba: only the registry of measures (plain Python, which
    # `import rankjit` reads for the names of its public functions) and the codes it names
    assert lines[-1] == "['rankjit._kernels', 'rankjit._kernels.layout', 'rankjit._registry']"
    text = "\n".join(lines[:-1])
    for command in COMMANDS:
        assert re.search(rf"^\s+{re.escape(command)}\b", text, re.M), command
    proc = _python("-m", "rankjit", "--help")
    assert all(command in proc.stdout for command in COMMANDS)


def test_listed_help_matches_the_registered_commands():
    """The table rankjit --help reads equals what the command modules register, in order."""
    def listed(parser):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return [(a.dest, a.help) for a in sub._choices_actions]

    registered = listed(build_parser())  # every module imported and registered
    assert registered == [(name, help_line) for name, (_, help_line) in COMMANDS.items()]
    assert listed(build_parser(None)) == registered  # what `rankjit --help` shows
    for command in COMMANDS:  # one module registered in full, the others listed
        assert listed(build_parser(command)) == registered


@pytest.mark.parametrize("command", list(COMMANDS))
def test_command_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert f"usage: rankjit {command}" in capsys.readouterr().out


def test_trec_eval_help_in_a_fresh_process():
    proc = _python("-m", "rankjit", "trec_eval", "--help")
    assert "usage: rankjit trec_eval" in proc.stdout and "-m MEASURE" in proc.stdout


def test_unknown_command_and_no_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and "trec_eval" in err
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_command_errors_are_reported(tmp_path, capsys):
    rc = main(["trec_eval", str(tmp_path / "missing.qrels"), str(tmp_path / "missing.run")])
    assert rc == 1
    assert "rankjit trec_eval: error:" in capsys.readouterr().err


# ---- the NumPy query-id path of rankjit.io.align, against Arrow -----------------------


def _random_ids(rng, n, alphabet):
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 5))
        out.append(bytes(rng.choice(alphabet, size=k).tolist()))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_query_sets_match_arrow(seed, monkeypatch):
    pytest.importorskip("pyarrow")
    from rankjit.io import _align
    from rankjit.io._trec import StringColumn

    rng = np.random.default_rng(seed)
    # short ids over a small alphabet: prefixes ('a' < 'ab'), bytes >= 0x80, repeats, empty ids
    alphabet = np.array([ord("a"), ord("b"), ord("1"), 0x80, 0xC3, 0xFF])
    j = _random_ids(rng, 60, alphabet)
    r = _random_ids(rng, 80, alphabet)
    j_col, r_col = StringColumn.from_list(j), StringColumn.from_list(r)
    fast = _align._query_sets(j_col, r_col)
    assert _align._padded_heads(j_col) is not None  # the NumPy path ran
    monkeypatch.setattr(_align, "_padded_heads", lambda col: None)
    slow = _align._query_sets(StringColumn.from_list(j), StringColumn.from_list(r))
    assert fast[0] == slow[0] == sorted(set(j))
    for a, b in zip(fast[1:], slow[1:]):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == np.int64


def test_ids_numpy_cannot_order_go_to_arrow():
    pytest.importorskip("pyarrow")
    from rankjit.io import _align
    from rankjit.io._trec import StringColumn

    col = StringColumn.from_list([b"a", b"a\x00", b"b"])  # 'a' and 'a\0' are one S2 value
    assert _align._padded_heads(col) is None
    uq, j_codes, blk_code, _ = _align._query_sets(col, StringColumn.from_list([b"a\x00", b"c", b"a"]))
    assert uq == [b"a", b"a\x00", b"b"]
    assert j_codes.tolist() == [0, 1, 2] and blk_code.tolist() == [1, -1, 0]


def test_align_same_with_and_without_the_numpy_path(monkeypatch):
    pytest.importorskip("pyarrow")
    from rankjit.io import _align, read_trec_qrels, read_trec_run

    rng = np.random.default_rng(7)
    qids = ["10", "9", "1", "q\u00e9", "100", "2"]
    run_lines = []
    for q in rng.permutation(qids):  # queries out of order in the run
        for d in range(int(rng.integers(1, 30))):
            run_lines.append(f"{q} Q0 d{int(rng.integers(0, 40))}x{d} {d + 1} {round(float(rng.normal()), 1)} t")
    qrel_lines = [f"{q} 0 d{d}x{k} {int(rng.integers(-1, 4))}"
                  for q in qids[:-1] + ["77"] for d in range(0, 40, 3) for k in range(0, 30, 7)]
    run = read_trec_run("\n".join(run_lines).encode())
    qrels = read_trec_qrels("\n".join(qrel_lines).encode())
    results = []
    for force_arrow in (False, True):
        if force_arrow:  # as for more than _NUMPY_MAX_HEADS runs of query ids
            monkeypatch.setattr(_align, "_NUMPY_MAX_HEADS", -1)
        for complete in (False, True):
            al = _align.align(run, qrels, complete=complete, max_docs=20, rel_level=2)
            results.append((al.qids, al.offsets, al.labels, al.scores, al.rows, al.n_relevant,
                            al.ideal_counts, al.in_run))
    for fast, slow in ((results[0], results[2]), (results[1], results[3])):
        assert fast[0] == slow[0]
        for a, b in zip(fast[1:], slow[1:]):
            np.testing.assert_array_equal(a, b)
    assert results[1][0] == sorted(set(qids[:-1] + ["77"]), key=lambda s: s.encode())


def test_probe_script_reports_heavy_modules():
    """The probe itself sees a heavy import (it would not pass vacuously)."""
    pytest.importorskip("pyarrow")
    code = _PROBE.replace("rc = main(sys.argv[1:])", "import pyarrow; rc = 0")
    got = json.loads(_python("-c", code).stdout.strip().splitlines()[-1])
    assert "pyarrow" in got["heavy"]
