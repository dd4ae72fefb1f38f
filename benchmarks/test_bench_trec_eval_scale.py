"""Smoke test of ``bench_trec_eval_scale.py`` at 2,000 lines, so that the script cannot rot.

Run: ``python -m pytest benchmarks/test_bench_trec_eval_scale.py`` (``benchmarks/`` is outside the
project's ``testpaths``: CI does not collect it). The runs against trec_eval skip when its binary
(``../shared/tools/build-trec_eval``) or pytrec_eval is absent. Nothing here asserts a timing.
"""
import subprocess
import sys
from pathlib import Path

import pytest

import bench_trec_eval_scale as bench

LINES, DOCS = 2000, 100


def _needs_peers():
    if bench.find_trec_eval() is None:
        pytest.skip(f"trec_eval not found at {bench.TREC_EVAL_DEFAULT} nor buildable with {bench.BUILD_TREC_EVAL}")
    if not bench.have_pytrec_eval():
        pytest.skip("pytrec_eval is not installed")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("bench")  # one set of files (and kernel cache) for the module


@pytest.fixture(scope="module")
def report(workdir):
    _needs_peers()
    logged = []
    return bench.benchmark(LINES, DOCS, repeat=1, workdir=workdir, cold=True, log=logged.append), logged


def _fields(path):
    return [line.split() for line in Path(path).read_text().splitlines()]


def test_files_are_a_pool_and_deterministic(tmp_path):
    run, qrels = bench.make_files(tmp_path / "a", LINES + 1, DOCS, seed=3)
    again, _ = bench.make_files(tmp_path / "b", LINES + 1, DOCS, seed=3)
    other, _ = bench.make_files(tmp_path / "c", LINES + 1, DOCS, seed=4)
    assert run.read_bytes() == again.read_bytes() != other.read_bytes()
    run_rows, qrels_rows = _fields(run), _fields(qrels)
    assert len(run_rows) == LINES + 1 and all(len(r) == 6 for r in run_rows)
    per_topic = {}
    for q, _, _, _, _, _ in run_rows:
        per_topic[q] = per_topic.get(q, 0) + 1
    assert list(per_topic.values()) == [DOCS] * (LINES // DOCS) + [1]  # the last topic takes the remainder
    assert len({(q, d) for q, _, d, *_ in run_rows}) == len(run_rows)  # no duplicate document
    scores = [float(r[4]) for r in run_rows]
    assert len(set(scores)) < len(scores)  # ties
    assert {r[3] for r in qrels_rows} == {"0", "1", "2"}
    retrieved = {(r[0], r[2]) for r in run_rows}
    judged = {(r[0], r[2]) for r in qrels_rows}
    assert judged - retrieved and retrieved - judged  # judged not retrieved, retrieved not judged
    # reused, not rewritten, when present
    stamp = run.stat().st_mtime_ns
    assert bench.make_files(tmp_path / "a", LINES + 1, DOCS, seed=3)[0].stat().st_mtime_ns == stamp


def test_make_files_refuses_no_lines(tmp_path):
    with pytest.raises(ValueError, match="--lines and --docs must be positive, got 0 and 100"):
        bench.make_files(tmp_path, 0, DOCS)


def test_outputs_equal_trec_eval(report):
    rep, logged = report
    assert set(rep["checks"]) == {"rankjit trec_eval = trec_eval", "rankjit trec_eval -q = trec_eval -q",
                                  "rankjit trec_eval (empty cache) = trec_eval", "rankjit API lines = trec_eval"}
    for name, (equal, n_lines, diffs) in rep["checks"].items():
        assert equal and n_lines > 20 and not diffs, name
    n, bad, _ = rep["pytrec_check"]
    assert n > 20 * LINES // DOCS  # every per-query value of trec_eval -q but runid and num_q
    assert all(name.startswith("iprec_at_recall_") for name in bad)  # trec_eval 9 against 10 (docs/metrics.md)
    assert [c.name for c in rep["contenders"]] == ["trec_eval", "trec_eval -q", "rankjit trec_eval",
                                                   "rankjit trec_eval -q", "pytrec_eval", "rankjit API"]
    assert all(len(c.walls) == 1 and c.rss[0] > 0 for c in rep["contenders"])
    assert any(line.startswith("rankjit trec_eval on an empty cache:") for line in logged)


def test_report_table(report):
    rep, _ = report
    text = bench.format_report(rep)
    assert ("| contender | median s | ratio to trec_eval | user s | sys s | CPU ratio | peak RSS MiB | runs (s) |"
            in text)
    for row in ("| trec_eval |", "| rankjit trec_eval -q |", "| pytrec_eval (process) |",
                "| rankjit API: total, second call |", "| rankjit trec_eval, empty NUMBA_CACHE_DIR (once) |"):
        assert row in text
    assert "| trec_eval | " in text and "| 1.00 |" in text  # trec_eval is its own reference
    assert "DIFFERENT" not in text and "reproduce:" not in text


def test_report_shows_differences_and_compiles(report):
    rep, _ = report
    contenders = rep["contenders"]
    checks = dict(rep["checks"], **{"rankjit trec_eval = trec_eval": (False, 30, [(3, "map all 0.1", "map all 0.2")])})
    flagged = contenders[2]
    flagged.compiled, was = True, flagged.compiled
    try:
        text = bench.format_report(dict(rep, checks=checks))
    finally:
        flagged.compiled = was
    assert "check rankjit trec_eval = trec_eval: DIFFERENT (30 lines)" in text
    assert "line 3: trec_eval 'map all 0.1', rankjit 'map all 0.2'" in text
    assert "reproduce: diff <(" in text
    assert "WARNING: compiled during timed runs (the source changed under the cache?): rankjit trec_eval" in text


def test_without_trec_eval_or_pytrec_eval(workdir, monkeypatch):
    monkeypatch.setattr(bench, "have_pytrec_eval", lambda: False)
    logged = []
    rep = bench.benchmark(LINES, DOCS, repeat=1, workdir=workdir, trec_eval=workdir / "missing", cold=False,
                          log=logged.append)
    assert any(line.startswith("trec_eval not found at") and "left out, with the output checks" in line
               for line in logged)
    assert "pytrec_eval is not installed: left out (pip install pytrec_eval-terrier)" in logged
    assert [c.name for c in rep["contenders"]] == ["rankjit trec_eval", "rankjit trec_eval -q", "rankjit API"]
    assert rep["checks"] == {} and "pytrec_check" not in rep
    assert "| rankjit trec_eval | " in bench.format_report(rep) and "| n/a |" in bench.format_report(rep)


def test_failed_process_is_reported(tmp_path):
    c = bench.Contender("failing one", [sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"],
                        None, tmp_path)
    with pytest.raises(RuntimeError, match=r"failing one failed \(exit 3\)(.|\n)*boom"):
        c.run()


def test_main(workdir, capsys):
    _needs_peers()
    assert bench.main(["--lines", str(LINES), "--docs", str(DOCS), "--repeat", "1", "--workdir", str(workdir),
                       "--no-cold"]) == 0
    out = capsys.readouterr().out
    assert "check rankjit trec_eval -q = trec_eval -q: identical" in out and "| rankjit API (process) |" in out
    assert bench.main(["--lines", "0", "--workdir", str(workdir)]) == 1
    assert "bench_trec_eval_scale: --lines and --docs must be positive, got 0 and 1000" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--repeat", "0"])
    assert "--repeat must be >= 1" in capsys.readouterr().err


def test_script_runs_as_a_command(workdir):
    _needs_peers()
    proc = subprocess.run([sys.executable, str(Path(bench.__file__)), "--lines", str(LINES), "--docs", str(DOCS),
                           "--repeat", "1", "--workdir", str(workdir), "--no-cold", "--threads", "1"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "NUMBA_NUM_THREADS 1" in proc.stdout and "check rankjit API lines = trec_eval: identical" in proc.stdout
