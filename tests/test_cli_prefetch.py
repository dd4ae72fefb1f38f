"""``rankjit trec_eval`` on an empty cache: the kernels that evaluate the run compile in a helper process
(``rankjit.io._cli._prefetch_evaluation``) while this process compiles the file readers.

The scenarios in fresh interpreters (own empty ``NUMBA_CACHE_DIR``, a listener on Numba's
compile events recording what compiles in that process) check what compiles where and that
the output is the same without the helper; the in-process ones check the helper's life
(waited for, or killed when the command fails first) with a stand-in process.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from _compile_events import LISTENER, TIMEOUT, two_cpus

from rankjit import _compile_helper
from rankjit.io import _cli

#: runs ``rankjit trec_eval ARGV`` as the program does, then prints what compiled here and the output
SCRIPT = LISTENER + """
import contextlib, io
from rankjit import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = cli.main(["trec_eval", *ARGV])
print(json.dumps({"code": code, "compiled": compiled, "output": out.getvalue()}))
"""


def _files(tmp_path, lengths):
    """A qrels and a run file: one query per entry of ``lengths`` (its retrieved documents), grades 0-3."""
    qrels, run = [], []
    for q, n in enumerate(lengths):
        for d in range(n):
            run.append(f"q{q} Q0 d{d} {d + 1} {n - d // 2}.5 t")  # ties in pairs
            if d % 3 == 0:
                qrels.append(f"q{q} 0 d{d} {d % 4}")
        qrels.append(f"q{q} 0 unretrieved 2")
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run").write_text("\n".join(run) + "\n")
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


def _run(cache, argv, **env):
    full_env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    full_env.pop("NUMBA_DISABLE_JIT", None)
    full_env.pop("RANKJIT_COMPILE_HELPER", None)
    full_env.update(env)
    proc = subprocess.run([sys.executable, "-c", f"ARGV = {argv!r}\n" + SCRIPT], capture_output=True, text=True,
                          env=full_env, timeout=TIMEOUT)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"] == 0, proc.stderr
    notices = [line for line in proc.stderr.splitlines() if line.startswith("rankjit: compiling ")]
    return out, notices


def _engine(names):
    return [n for n in names if n.startswith(("rank_blocks.", "measure_blocks."))]


PREFETCH_NOTICE = "compiling the kernels that evaluate this run in a helper process"


@pytest.mark.jit
@two_cpus
@pytest.mark.parametrize("measures", [[], ["-m", "ndcg_cut.10", "-m", "map"]])
def test_the_evaluation_compiles_in_a_helper_while_the_readers_compile_here(tmp_path, measures):
    argv = [*measures, *_files(tmp_path, [40, 40, 40])]
    alone, _ = _run(tmp_path / "alone", argv, RANKJIT_COMPILE_HELPER="0")
    assert len(_engine(alone["compiled"])) == 2  # without helpers: both passes compile here
    out, notices = _run(tmp_path / "cache", argv)
    assert out["output"] == alone["output"]
    assert sum(PREFETCH_NOTICE in line for line in notices) == 1
    assert _engine(out["compiled"]) == [], out["compiled"]  # loaded from the cache the helper filled
    assert "read_pairs" in {n.split(".")[0] for n in out["compiled"]}  # the readers compiled here
    # the trec_eval kernels the evaluation calls compiled there too
    assert not set(out["compiled"]) & {"count_relevant", "best_precision_from"}, out["compiled"]


@pytest.mark.jit
@two_cpus
def test_a_wrong_guess_costs_the_other_cpu_only(tmp_path):
    # the first query's 5 documents suggest short rows (nDCG's ideal from packed counters); the second has 300
    argv = ["-m", "ndcg_cut.10", *_files(tmp_path, [5, 300])]
    alone, _ = _run(tmp_path / "alone", argv, RANKJIT_COMPILE_HELPER="0")
    out, notices = _run(tmp_path / "cache", argv)
    assert out["output"] == alone["output"]
    assert sum(PREFETCH_NOTICE in line for line in notices) == 1
    assert any(n.startswith("measure_blocks.") for n in out["compiled"]) or any(
        "measure_blocks" in line and "in a helper process" in line for line in notices)  # compiled after all


@pytest.mark.jit
@two_cpus
def test_no_helper_once_the_readers_are_cached(tmp_path):
    argv = _files(tmp_path, [30, 30])
    first, _ = _run(tmp_path / "cache", argv)
    again, notices = _run(tmp_path / "cache", argv)
    assert again["output"] == first["output"]
    assert again["compiled"] == [] and notices == []


class _StandIn:
    """A helper process that never ran: records how it was treated."""

    def __init__(self):
        self.killed = False
        self.waited = False

    def kill(self):
        self.killed = True

    def wait(self, timeout=None):
        self.waited = True
        return 0


@pytest.fixture
def stand_in(monkeypatch):
    procs = []

    def spawn(program, payload, **env):
        assert env == {"RANKJIT_COMPILE_HELPER": "0"}  # the helper starts no helper of its own
        module, function, args = payload
        assert (module, function) == ("rankjit.io._cli", "prefetch_evaluation")
        procs.append(_StandIn())
        return procs[-1]

    monkeypatch.setattr(_compile_helper, "_spawn", spawn)
    monkeypatch.setattr(_compile_helper, "enabled", lambda: True)
    monkeypatch.setattr(_compile_helper, "never_cached", lambda dispatcher: True)
    return procs


def test_the_command_waits_for_the_helper_before_it_evaluates(tmp_path, stand_in, capsys):
    from rankjit import cli

    assert cli.main(["trec_eval", *_files(tmp_path, [10, 10])]) == 0
    (proc,) = stand_in
    assert proc.waited and not proc.killed
    assert "map" in capsys.readouterr().out
    assert _compile_helper._prefetching is None


def test_a_failing_command_kills_the_helper(tmp_path, stand_in, capsys):
    from rankjit import cli

    qrels, run = _files(tmp_path, [10])
    with open(run, "a") as f:
        f.write("q0 Q0 broken\n")  # a line of 3 fields
    assert cli.main(["trec_eval", qrels, run]) != 0
    (proc,) = stand_in
    assert proc.killed and proc.waited
    assert capsys.readouterr().err.strip()  # (the reader's message: tests of its own)
    assert _compile_helper._prefetching is None


def test_no_helper_for_standard_input_or_other_formats(tmp_path, stand_in, monkeypatch, capsys):
    from rankjit import cli

    qrels, run = _files(tmp_path, [10])
    with open(run, "rb") as f:
        monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": f})())
        assert cli.main(["trec_eval", qrels, "-"]) == 0
    assert stand_in == []


def test_the_guess_reads_the_first_query_and_the_grades(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(_cli, "trec_eval_values", lambda aligned, requested, **kw: calls.append((aligned, kw)))
    run = b"".join(b"7 Q0 d%d 1 %d t\n" % (d, -d) for d in range(300)) + b"8 Q0 x 1 1 t\n"
    qrels = b"7 0 d1 0\n7 0 d2 5\n7 0 d3 -1\n"
    _cli.prefetch_evaluation(run, qrels, {"map": None}, (0, False, False, None, 1))
    _cli.prefetch_evaluation(run, qrels, {"map": None}, (0, False, False, 20, 1))  # -M 20
    (full, kw), (cut, _) = calls
    assert full.offsets.tolist() == [0, 300, 600] and cut.offsets.tolist() == [0, 20, 40]
    assert full.grade_values.tolist() == [0, 5]
    assert kw == {"num_docs": 0, "complete": False, "judged_only": False}


def _compiled_by(cache, code):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), RANKJIT_COMPILE_HELPER="0")
    env.pop("NUMBA_DISABLE_JIT", None)
    program = LISTENER + textwrap.dedent(code) + "\nprint(json.dumps([modules, compiled]))\n"
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    modules, names = json.loads(proc.stdout.strip().splitlines()[-1])
    return {f"{m}.{n}" for m, n in zip(modules, names) if m.startswith("rankjit")}  # (not Numba's own overloads)


@pytest.mark.jit
def test_the_helper_and_the_readers_compile_disjoint_kernels(tmp_path):
    """While the helper runs, this process reads and aligns: no kernel may compile in both at once.

    Two processes adding entries to one function's cache index at once can number them alike (see
    ``rankjit._warmup._serialise_cache_writes``), so the helper must compile only kernels that this
    process compiles after waiting for it: the evaluation's, never the readers' or the alignment's.
    """
    qrels, run = _files(tmp_path, [40, 300, 7])
    reading = _compiled_by(tmp_path / "read", f"""
    from rankjit.io import align, read_trec_qrels, read_trec_run
    for complete in (False, True):
        aligned = align(read_trec_run({run!r}), read_trec_qrels({qrels!r}), complete=complete, max_docs=100)
        aligned.judged_only()
    """)
    evaluating = _compiled_by(tmp_path / "evaluate", f"""
    from rankjit.io import _cli
    heads = _cli._file_head({run!r}), _cli._file_head({qrels!r})
    for text in (None, "all_trec", "ndcg_cut.10"):
        requested, _ = _cli.parse_trec_measures([text] if text else [])
        for options in ((0, False, False, None, 1), (0, True, True, 100, 2)):
            _cli.prefetch_evaluation(*heads, requested, options)
    """)
    assert "rankjit.io._kernels.read_pairs" in reading and any("measure_blocks" in n for n in evaluating)
    assert not reading & evaluating, sorted(reading & evaluating)
