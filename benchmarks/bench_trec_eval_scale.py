"""trec_eval's default measure set on a 5M-line run: the real trec_eval, rankjit and pytrec_eval, in one run.

    python benchmarks/bench_trec_eval_scale.py [--lines 5000000] [--repeat 3] [--workdir DIR] [--threads N]

Generates (seeded; kept under ``--workdir`` for the next invocation, else in a temporary
directory removed at the end) a TREC run of ``--lines`` lines, ``--docs`` documents per topic
(5,000 topics x 1,000 documents by default; scores rounded to 0.01, so with ties) and qrels
shaped like a TREC ad hoc pool: the top 5-14 % of each topic's ranking judged (3 % of it
left unjudged), 2 % of the documents below the pool judged too, up to twice the pool depth of
judged documents the run does not retrieve, grades 0-2, relevance falling with the rank, 1 % of
the topics without any relevant document.

Then times, interleaved over ``--repeat`` rounds (the order rotates each round), each
contender in its own process:

* ``trec_eval qrels run`` (the default set: ``official``) and ``trec_eval -q qrels run``,
  the real NIST binary (``--trec-eval``, else the build of ``../shared/tools/build-trec_eval``);
* ``python -m rankjit trec_eval qrels run`` and ``... -q``, on a warm kernel cache;
* pytrec_eval as its users call it: ``parse_qrel`` / ``parse_run`` on the open files,
  ``RelevanceEvaluator(qrels, {"official"})`` (the measures of trec_eval's default output),
  ``.evaluate(run)`` and ``compute_aggregated_measure`` for the ``all`` values;
* rankjit's Python API for the same: ``read_trec_run``, ``read_trec_qrels``, ``align``,
  ``trec_eval_values`` and ``format_trec_eval`` (what ``rankjit trec_eval`` runs), called
  twice in the process: the first call loads the kernels from the cache, the second is timed;

and once, the first ``rankjit trec_eval`` run on an empty ``NUMBA_CACHE_DIR`` (compiling).
Reports the median wall-clock seconds and their ratio to trec_eval's, the user and system CPU
seconds and the ratio of their sum to trec_eval's (steadier than the wall clock when other
processes compete for the CPUs), the peak RSS of each process (``os.wait4``), the in-process
phases of pytrec_eval and of the API, and checks that rankjit's output lines (CLI and API)
equal trec_eval's and that pytrec_eval's per-query values agree with trec_eval's to its 4
printed decimals (the two workers write their values in one more run each, untimed).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: the real trec_eval, as ../shared/tools/build-trec_eval builds it
TREC_EVAL_DEFAULT = Path.home() / ".cache" / "rankjit-trec_eval" / "trec_eval-f4253652" / "trec_eval"
BUILD_TREC_EVAL = Path(__file__).resolve().parents[2] / "shared" / "tools" / "build-trec_eval"
#: bump when the generated files change, so that a cached workdir is not reused
FORMAT_VERSION = 1
COMPILE_NOTICE = b"rankjit: compiling"


# ------------------------------------------------------------------------------------------------ data
def _docnos(ids):
    """ClueWeb09-like document names for distinct integers < 10**11."""
    return [f"clueweb09-en{x // 10**7:04d}-{x // 10**5 % 100:02d}-{x % 10**5:05d}" for x in ids.tolist()]


def make_files(workdir, lines=5_000_000, docs=1000, seed=0):
    """Write (once; reused when present) a run of ``lines`` lines and its qrels under ``workdir``.

    ``ceil(lines / docs)`` topics of ``docs`` documents (the last one takes the remainder).
    Per topic: scores ~ N(0, 3) rounded to 0.01 in rank order; a pool depth d drawn in
    [docs/20, docs/7]; each of the top d documents judged with probability 0.97, each below
    with probability 0.02; up to 2d judged documents not retrieved; a judged retrieved
    document at rank r is relevant with probability 0.05 + 0.5 exp(-r / 1.5d), a judged
    non-retrieved one with probability 0.1, grade 2 for 30 % of the relevant ones, else 1;
    1 % of the topics have no relevant document. Returns ``(run_path, qrels_path)``.
    """
    if lines < 1 or docs < 1:
        raise ValueError(f"--lines and --docs must be positive, got {lines} and {docs}")
    folder = Path(workdir) / f"trec-scale-{lines}-{docs}-{seed}-v{FORMAT_VERSION}"
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    if run_path.is_file() and qrels_path.is_file():
        return run_path, qrels_path
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    n_topics = -(-lines // docs)
    with open(folder / "run.tmp", "w") as run_out, open(folder / "qrels.tmp", "w") as qrels_out:
        for t in range(n_topics):
            n = docs if t < n_topics - 1 else lines - docs * (n_topics - 1)
            qid = str(301 + t)
            depth = int(rng.integers(max(1, n // 20), max(1, n // 7) + 1))
            extra = int(rng.integers(0, 2 * depth + 1))
            ids = rng.integers(0, 10**11, size=n + extra)
            while np.unique(ids).size < ids.size:  # distinct documents (a collision is rare)
                ids = rng.integers(0, 10**11, size=n + extra)
            names = _docnos(ids)
            scores = np.round(np.sort(rng.normal(0.0, 3.0, n))[::-1], 2) + 0.0  # (+ 0.0: no "-0.00")
            rank = np.arange(1, n + 1)
            judged = rng.random(n) < np.where(rank <= depth, 0.97, 0.02)
            relevant = np.concatenate((rng.random(n) < 0.05 + 0.5 * np.exp(-rank / (1.5 * depth)),
                                       rng.random(extra) < 0.1))
            grade = np.where(relevant, np.where(rng.random(n + extra) < 0.3, 2, 1), 0)
            if rng.random() < 0.01:
                grade[:] = 0
            run_out.write("".join(f"{qid} Q0 {d} {r} {s:.2f} bench\n"
                                  for d, r, s in zip(names[:n], rank.tolist(), scores.tolist())))
            keep = np.concatenate((judged, np.ones(extra, dtype=bool)))
            pool = sorted((names[i], g) for i, g in zip(np.flatnonzero(keep).tolist(), grade[keep].tolist()))
            qrels_out.write("".join(f"{qid} 0 {d} {g}\n" for d, g in pool))
    os.replace(folder / "run.tmp", run_path)
    os.replace(folder / "qrels.tmp", qrels_path)
    return run_path, qrels_path


# ------------------------------------------------------------------------------------------- trec_eval
def find_trec_eval(path=None):
    """The trec_eval binary: ``path``, the default build, or a build by build-trec_eval; None if absent."""
    if path:
        return str(path) if os.access(path, os.X_OK) else None
    if os.access(TREC_EVAL_DEFAULT, os.X_OK):
        return str(TREC_EVAL_DEFAULT)
    if BUILD_TREC_EVAL.is_file():
        try:
            proc = subprocess.run(["bash", str(BUILD_TREC_EVAL)], capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired):
            return None
        out = proc.stdout.strip().splitlines()
        if proc.returncode == 0 and out and os.access(out[-1], os.X_OK):
            return out[-1]
    return None


def have_pytrec_eval():
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------------------------- workers
def _worker_pytrec(qrels_path, run_path, result_path, dump_path):
    """pytrec_eval as its users call it; phases timed in the process, written as JSON."""
    t0 = time.perf_counter()
    import pytrec_eval

    t1 = time.perf_counter()
    with open(qrels_path) as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    with open(run_path) as fh:
        run = pytrec_eval.parse_run(fh)
    t2 = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"official"})  # trec_eval's default output
    per_query = evaluator.evaluate(run)
    names = sorted(next(iter(per_query.values())))
    means = {m: pytrec_eval.compute_aggregated_measure(m, [v[m] for v in per_query.values()]) for m in names}
    t3 = time.perf_counter()
    Path(result_path).write_text(json.dumps({"import": t1 - t0, "read": t2 - t1, "evaluate": t3 - t2,
                                             "total": t3 - t1, "n_queries": len(per_query)}))
    if dump_path:
        Path(dump_path).write_text(json.dumps({"per_query": per_query, "all": means}))


def _worker_api(qrels_path, run_path, result_path, dump_path):
    """rankjit's Python API doing what ``rankjit trec_eval qrels run`` does; the second call is timed."""
    t0 = time.perf_counter()
    from rankjit.io import align, read_trec_qrels, read_trec_run
    from rankjit.io._cli import format_trec_eval, parse_trec_measures, trec_eval_values

    t1 = time.perf_counter()
    result = {"import": t1 - t0}
    for call in ("first", "second"):
        t0 = time.perf_counter()
        run = read_trec_run(run_path)
        qrels = read_trec_qrels(qrels_path)
        t1 = time.perf_counter()
        aligned = align(run, qrels)
        t2 = time.perf_counter()
        requested, _ = parse_trec_measures(None)  # no -m: trec_eval's default set
        results = trec_eval_values(aligned, requested)
        t3 = time.perf_counter()
        lines = format_trec_eval(aligned, results, runid=run.runid)
        t4 = time.perf_counter()
        result[call] = {"read": t1 - t0, "align": t2 - t1, "measures": t3 - t2, "format": t4 - t3, "total": t4 - t0}
        del run, qrels, aligned, results
    Path(result_path).write_text(json.dumps(result))
    if dump_path:
        Path(dump_path).write_text("\n".join(lines) + "\n")


WORKERS = {"pytrec": _worker_pytrec, "api": _worker_api}


# ---------------------------------------------------------------------------------------------- timing
def run_process(cmd, stdout_path, stderr_path, env=None):
    """Run ``cmd``; returns ``(exit status, wall s, user s, system s, peak RSS MiB)`` of the process (``os.wait4``)."""
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


class Contender:
    """One command timed in its own process; ``worker``: a mode of this script that writes phase times."""

    def __init__(self, name, cmd, env, outdir, worker=None, mode="default"):
        self.name, self.cmd, self.env, self.worker, self.mode = name, cmd, env, worker, mode
        slug = "".join(c if c.isalnum() else "_" for c in name)
        self.stdout, self.stderr = outdir / f"{slug}.out", outdir / f"{slug}.err"
        self.result = outdir / f"{slug}.json"
        self.walls, self.user, self.sys, self.rss, self.phases, self.compiled = [], [], [], [], [], False

    def run(self, dump=None):
        """One timed run; ``dump``: a worker writes its values there too (an untimed run: nothing recorded)."""
        cmd = self.cmd + ([str(self.result)] + (["--dump", str(dump)] if dump else []) if self.worker else [])
        rc, wall, user, system, rss = run_process(cmd, self.stdout, self.stderr, self.env)
        if rc != 0:
            raise RuntimeError(f"{self.name} failed (exit {rc}): {' '.join(map(str, cmd))}\n"
                               f"{self.stderr.read_bytes().decode(errors='replace')[-2000:]}")
        if dump:
            return wall
        self.compiled |= COMPILE_NOTICE in self.stderr.read_bytes()
        self.walls.append(wall)
        self.user.append(user)
        self.sys.append(system)
        self.rss.append(rss)
        if self.worker:
            self.phases.append(json.loads(self.result.read_text()))
        return wall


def compare_lines(want_path, got_path, limit=5):
    """``(equal, n_lines, differences)``: the first ``limit`` differing line pairs of two outputs."""
    want = Path(want_path).read_text().splitlines()
    got = Path(got_path).read_text().splitlines()
    diffs = [(i + 1, a, b) for i, (a, b) in enumerate(zip(want, got)) if a != b]
    if len(want) != len(got):
        diffs.append((min(len(want), len(got)) + 1, f"<{len(want)} lines>", f"<{len(got)} lines>"))
    return not diffs, len(want), diffs[:limit]


def compare_pytrec(trec_q_path, dump_path):
    """pytrec_eval's values against trec_eval -q's (4 decimals): ``(n compared, {measure: n differing}, first few)``.

    A value the dump lacks counts as differing.
    """
    dump = json.loads(Path(dump_path).read_text())
    per_query = dict(dump["per_query"], all=dump["all"])
    compared, bad, first = 0, {}, []
    for line in Path(trec_q_path).read_text().splitlines():
        name, qid, value = line.split()
        if name in ("runid", "num_q"):
            continue
        ours = per_query.get(qid, {}).get(name)
        compared += 1
        if ours is None or abs(ours - float(value)) > 0.5e-4 + 1e-9:
            bad[name] = bad.get(name, 0) + 1
            if len(first) < 3:
                first.append(f"{name} {qid}: trec_eval {value}, pytrec_eval {ours}")
    return compared, bad, first


def _tree_bytes(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def benchmark(lines=5_000_000, docs=1000, repeat=3, workdir=None, threads=None, trec_eval=None, seed=0,
              cold=True, log=print):
    """Generate the files, time every contender ``repeat`` times interleaved; returns a report dict."""
    te = find_trec_eval(trec_eval)
    if te is None:
        log(f"trec_eval not found at {TREC_EVAL_DEFAULT} nor buildable with {BUILD_TREC_EVAL} (../shared absent?): "
            "left out, with the output checks (--trec-eval PATH names a binary)")
    workdir = Path(workdir)
    t0 = time.perf_counter()
    run_path, qrels_path = make_files(workdir, lines, docs, seed)
    log(f"files: {run_path} ({run_path.stat().st_size / 1e6:.0f} MB), {qrels_path} "
        f"({qrels_path.stat().st_size / 1e6:.1f} MB, {sum(1 for _ in open(qrels_path)):,} judgments); "
        f"ready in {time.perf_counter() - t0:.1f} s")
    outdir = workdir / f"out-{os.getpid()}"
    outdir.mkdir(parents=True, exist_ok=True)
    for path in (run_path, qrels_path):  # into the page cache before anything is timed
        with open(path, "rb") as fh:
            while fh.read(1 << 24):
                pass

    env = dict(os.environ)
    env.setdefault("NUMBA_CACHE_DIR", str(workdir / "numba-cache"))
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    files = [str(qrels_path), str(run_path)]
    me = [sys.executable, str(Path(__file__).resolve()), "_worker"]
    rankjit_cli = [sys.executable, "-m", "rankjit", "trec_eval"]
    trec_default = Contender("trec_eval", [te, *files], None, outdir) if te else None
    trec_q = Contender("trec_eval -q", [te, "-q", *files], None, outdir, mode="-q") if te else None
    cli_default = Contender("rankjit trec_eval", [*rankjit_cli, *files], env, outdir)
    cli_q = Contender("rankjit trec_eval -q", [*rankjit_cli, "-q", *files], env, outdir, mode="-q")
    contenders = [
        trec_default, trec_q, cli_default, cli_q,
        Contender("pytrec_eval", [*me, "pytrec", *files], env, outdir, worker="pytrec") if have_pytrec_eval() else None,
        Contender("rankjit API", [*me, "api", *files], env, outdir, worker="api"),
    ]
    contenders = [c for c in contenders if c is not None]
    if not have_pytrec_eval():
        log("pytrec_eval is not installed: left out (pip install pytrec_eval-terrier)")

    report = {"lines": lines, "docs": docs, "repeat": repeat, "threads": threads or "default",
              "trec_eval": te, "run": str(run_path), "qrels": str(qrels_path), "cpus": os.cpu_count(),
              "load_before": os.getloadavg()}
    if cold:  # an empty kernel cache: the first run of a new installation
        cold_dir = Path(tempfile.mkdtemp(prefix="numba-cold-", dir=workdir))
        cold_c = Contender("rankjit trec_eval, empty cache", [*rankjit_cli, *files],
                           dict(env, NUMBA_CACHE_DIR=str(cold_dir)), outdir)
        cold_c.run()
        report["cold"] = {"wall": cold_c.walls[0], "user": cold_c.user[0], "sys": cold_c.sys[0], "rss": cold_c.rss[0],
                          "compiled": cold_c.compiled, "cache_mb": _tree_bytes(cold_dir) / 1e6}
        report["cold_contender"] = cold_c
        log(f"rankjit trec_eval on an empty cache: {cold_c.walls[0]:.2f} s (compiled: {cold_c.compiled})")
        shutil.rmtree(cold_dir, ignore_errors=True)
    # warm-up, untimed: fills the warm cache if it is empty, loads the interpreter's files
    warm = Contender("warm-up", [*rankjit_cli, *files], env, outdir)
    warm.run()
    if warm.compiled:
        log(f"warm-up compiled kernels into {env['NUMBA_CACHE_DIR']} (first use of that cache)")

    pytrec_dump, api_dump = outdir / "pytrec_dump.json", outdir / "api_lines.txt"
    for r in range(repeat):
        order = contenders[r % len(contenders):] + contenders[:r % len(contenders)]
        for c in order:
            c.run()
        log(f"round {r + 1}/{repeat}: " + ", ".join(f"{c.name} {c.walls[-1]:.2f} s" for c in contenders)
            + f"; load {os.getloadavg()[0]:.2f}")
    report["load_after"] = os.getloadavg()
    report["contenders"] = contenders
    for c in contenders:  # the values of the workers, for the checks: one more run each, untimed
        if c.worker:
            c.run(pytrec_dump if c.worker == "pytrec" else api_dump)

    checks = {}
    if te:
        checks["rankjit trec_eval = trec_eval"] = compare_lines(trec_default.stdout, cli_default.stdout)
        checks["rankjit trec_eval -q = trec_eval -q"] = compare_lines(trec_q.stdout, cli_q.stdout)
        if cold:
            checks["rankjit trec_eval (empty cache) = trec_eval"] = compare_lines(trec_default.stdout,
                                                                                report["cold_contender"].stdout)
        checks["rankjit API lines = trec_eval"] = compare_lines(trec_default.stdout, api_dump)
        if any(c.worker == "pytrec" for c in contenders):
            report["pytrec_check"] = compare_pytrec(trec_q.stdout, pytrec_dump)
    report["checks"] = checks
    report["outdir"] = str(outdir)
    return report


# --------------------------------------------------------------------------------------------- report
def _median(values):
    return statistics.median(values) if values else float("nan")


def format_report(report):
    """The markdown table and the checks, as printed."""
    cs = report["contenders"]
    base = {c.mode: _median(c.walls) for c in cs if c.name.startswith("trec_eval")}
    base_cpu = {c.mode: _median([u + k for u, k in zip(c.user, c.sys)]) for c in cs if c.name.startswith("trec_eval")}

    def ratio(seconds, mode="default", ref=base):
        return f"{seconds / ref[mode]:.2f}" if mode in ref else "n/a"

    out = [f"{report['lines']:,}-line run ({report['docs']} documents per topic), {report['repeat']} interleaved "
           f"rounds, NUMBA_NUM_THREADS {report['threads']}, {report['cpus']} CPUs; load average "
           f"{report['load_before'][0]:.2f} before, {report['load_after'][0]:.2f} after",
           "", "| contender | median s | ratio to trec_eval | user s | sys s | CPU ratio | peak RSS MiB | runs (s) |",
           "|---|---:|---:|---:|---:|---:|---:|---|"]
    for c in cs:
        med, cpu = _median(c.walls), _median([u + k for u, k in zip(c.user, c.sys)])
        out.append(f"| {c.name}{' (process)' if c.worker else ''} | {med:.2f} | {ratio(med, c.mode)} "
                   f"| {_median(c.user):.2f} | {_median(c.sys):.2f} | {ratio(cpu, c.mode, base_cpu)} "
                   f"| {_median(c.rss):.0f} | {', '.join(f'{w:.2f}' for w in c.walls)} |")
    for c in cs:  # the phases inside the worker processes (wall clock)
        if c.worker == "pytrec":
            rows = [("read (parse_qrel + parse_run)", "read"), ("evaluate (RelevanceEvaluator + evaluate + means)",
                                                               "evaluate"), ("read + evaluate", "total")]
            phases = c.phases
        elif c.worker == "api":
            rows = [("read (run + qrels)", "read"), ("align", "align"), ("measures (trec_eval_values)", "measures"),
                    ("format lines", "format"), ("total, second call", "total")]
            phases = [p["second"] for p in c.phases]
            first = [p["first"]["total"] for p in c.phases]
            out.append(f"| rankjit API: total, first call in the process (kernels loaded from the cache) "
                       f"| {_median(first):.2f} | {ratio(_median(first))} | | | | "
                       f"| {', '.join(f'{w:.2f}' for w in first)} |")
        else:
            continue
        for label, key in rows:
            med = _median([p[key] for p in phases])
            out.append(f"| {c.name}: {label} | {med:.2f} | {ratio(med)} | | | | "
                       f"| {', '.join(f'{p[key]:.2f}' for p in phases)} |")
        imp = _median([p["import"] for p in c.phases])
        out.append(f"| {c.name}: import | {imp:.2f} | | | | | | |")
    if "cold" in report:
        cold = report["cold"]
        out.append(f"| rankjit trec_eval, empty NUMBA_CACHE_DIR (once) | {cold['wall']:.2f} "
                   f"| {ratio(cold['wall'])} | {cold['user']:.2f} | {cold['sys']:.2f} "
                   f"| {ratio(cold['user'] + cold['sys'], ref=base_cpu)} | {cold['rss']:.0f} "
                   f"| {cold['wall']:.2f} (cache written: {cold['cache_mb']:.1f} MB) |")
    out.append("")
    for name, (equal, n, diffs) in report["checks"].items():
        out.append(f"check {name}: {'identical' if equal else 'DIFFERENT'} ({n:,} lines)")
        for line_no, want, got in diffs:
            out.append(f"    line {line_no}: trec_eval {want!r}, rankjit {got!r}")
    if "pytrec_check" in report:
        n, bad, first = report["pytrec_check"]
        where = ", ".join(f"{name} {k}" for name, k in sorted(bad.items()))
        out.append(f"check pytrec_eval = trec_eval -q (to 4 decimals): {n:,} values, {sum(bad.values())} differ"
                   + (f" ({where})" if bad else "")
                   + ("; expected: pytrec_eval embeds trec_eval 9, whose iprec_at_recall counts floor(x R + 0.9) "
                      "relevant documents where trec_eval 10 counts lround(x R) (docs/metrics.md, IPrec)"
                      if bad and all(name.startswith("iprec_at_recall_") for name in bad) else "")
                   + "".join(f"\n    {b}" for b in first))
    warm = [c.name for c in cs if c.compiled and not c.name.startswith("trec_eval")]
    if warm:
        out.append(f"WARNING: compiled during timed runs (the source changed under the cache?): {', '.join(warm)}")
    if not all(equal for equal, _, _ in report["checks"].values()):
        out.append(f"reproduce: diff <({report['trec_eval']} -q {report['qrels']} {report['run']}) "
                   f"<({sys.executable} -m rankjit trec_eval -q {report['qrels']} {report['run']})")
    return "\n".join(out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_worker"]:  # _worker pytrec|api QRELS RUN RESULT_JSON [--dump FILE]
        w = argparse.ArgumentParser()
        w.add_argument("kind", choices=list(WORKERS))
        w.add_argument("qrels")
        w.add_argument("run")
        w.add_argument("result")
        w.add_argument("--dump", default=None)
        a = w.parse_args(argv[1:])
        WORKERS[a.kind](a.qrels, a.run, a.result, a.dump)
        return 0
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lines", type=int, default=5_000_000, help="lines of the run (default 5,000,000)")
    p.add_argument("--docs", type=int, default=1000, help="documents per topic (default 1000)")
    p.add_argument("--repeat", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--workdir", default=None, help="keep the generated files (and the warm kernel cache) here")
    p.add_argument("--threads", type=int, default=None, help="NUMBA_NUM_THREADS for rankjit (default: Numba's)")
    p.add_argument("--trec-eval", default=None, help="the trec_eval binary (default: the shared build)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-cold", action="store_true", help="skip the run on an empty kernel cache")
    a = p.parse_args(argv)
    if a.repeat < 1:
        p.error("--repeat must be >= 1")
    with contextlib.ExitStack() as stack:
        workdir = a.workdir or stack.enter_context(tempfile.TemporaryDirectory(prefix="rankjit-bench-trec-"))
        try:
            report = benchmark(a.lines, a.docs, a.repeat, workdir, a.threads, a.trec_eval, a.seed,
                               cold=not a.no_cold, log=lambda s: print(s, flush=True))
        except (FileNotFoundError, ValueError) as exc:
            print(f"bench_trec_eval_scale: {exc}", file=sys.stderr)
            return 1
        print()
        print(format_report(report))
    return 0 if all(equal for equal, _, _ in report["checks"].values()) else 2


if __name__ == "__main__":
    sys.exit(main())
