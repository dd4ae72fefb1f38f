"""Cold-start benchmark: first-call (compile) cost of every public entry point, and warm start-up.

What it measures (issue 13, part 5), each figure in a fresh subprocess:

* **Cold** (an empty Numba cache: a new ``NUMBA_CACHE_DIR`` per measurement) -- the first
  call of ``rankjit.ndcg`` (int8 labels / float32 scores, 100 queries x 100 docs, k=10),
  then in the same process ``rankjit.ndcg`` on int64 / float64 (what ``np.array`` of
  Python numbers gives: the second dtype pair); ``rankjit.evaluate`` with the ten list
  measures (alone); ``rankjit.alpha_ndcg``; ``rankjit.rpp``; the LightGBM ``feval`` on a
  small grouped ``lightgbm.Dataset`` (skipped when lightgbm is not installed); and the
  ``rankjit trec_eval`` command (``python -m rankjit trec_eval qrels run``, whole-command
  wall time) on the trec_eval test suite (``qrels.test`` / ``results.test``) and on a
  TREC 2012 Web run (``qrels.adhoc.txt`` / ``run.ql.cata.txt``), read from
  ``../shared/data`` next to the repository (rows whose data is missing are skipped).
* **The yardstick**: ``benchmarks/plain_kernel.py``, a plain parallel Numba nDCG@10 kernel,
  compiled in a fresh process on an empty cache.  Like is compared with like: every
  in-process contender is timed from before its first import of numba / rankjit to the
  end of its first call ("import + first call": rankjit imports Numba lazily, at its first
  call, so ``import numba`` is inside the yardstick's timed region too); numpy and the
  inputs are made before the clock starts.  The first call alone is reported as well
  (rankjit's includes its lazy ``import numba``; the yardstick's does not).
* **Warm** (a cache filled once by the script, then fresh processes): ``import rankjit``;
  import + first ``ndcg`` call; import + first ``evaluate`` call with the ten measures;
  ``rankjit trec_eval`` on both data sets (whole-command wall time); and, as floors,
  ``python -c "import numpy, numba"`` (whole command) and the yardstick's import + call
  (in-process, and as a whole command: the floor of any program that calls one cached
  Numba kernel, with Numba's set-up of its compiler target on the first cached load).

Contenders are interleaved (the order rotates in every repetition); the table gives the
median and the range over ``--repeat`` repetitions, and the ratio to the yardstick as the
median of per-repetition ratios (each contender over the yardstick of the same
repetition): import + first call over the yardstick's import + first call, first call over
its first call, whole commands over its import + first call.

Targets (issue 13): cold ``ndcg`` <= 2x the plain kernel; cold ``evaluate`` with the ten
list measures <= 3x; the second dtype pair no full recompile; ``rankjit trec_eval`` on the
Web 2012 run <= 0.6 s warm and <= 10 s on an empty cache.

Run::

    python benchmarks/bench_coldstart.py                   # everything, median of 3 (about 15-25 min on 2 cores)
    python benchmarks/bench_coldstart.py --quick           # smoke run: fewer rows, one repetition
    python benchmarks/bench_coldstart.py --repeat 5 --json coldstart.json
    python benchmarks/bench_coldstart.py --warm-only --repeat 9   # warm start-up only

Only the public API and the command line are used, so the script keeps working while the
engine's internals change.  Nothing else should load the CPU while it runs.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = Path(__file__).resolve().parents[2] / "shared"

TEN = ["P@10", "R@10", "Success@10", "RR", "AP", "Rprec", "DCG@10", "nDCG@10", "ERR@20", "pFound"]

DATASETS = {
    "suite": ("trec_eval test suite (qrels.test, results.test)",
              SHARED / "data" / "trec_eval" / "qrels.test", SHARED / "data" / "trec_eval" / "results.test"),
    "web2012": ("TREC 2012 Web run (qrels.adhoc.txt, run.ql.cata.txt)",
                SHARED / "data" / "web2012" / "qrels.adhoc.txt", SHARED / "data" / "web2012" / "run.ql.cata.txt"),
}


# ----------------------------------------------------------------------------------------------------------------
# children: each runs in a fresh interpreter and prints one JSON line (seconds)
# ----------------------------------------------------------------------------------------------------------------

def _batch(n_queries=100, n_docs=100, seed=0):
    """int8 grades 0..4 (mostly 0) and float32 scores, made with numpy only."""
    import numpy as np

    rng = np.random.default_rng(seed)
    grades = rng.choice(5, size=(n_queries, n_docs), p=[0.7, 0.12, 0.09, 0.06, 0.03]).astype(np.int8)
    scores = rng.random((n_queries, n_docs), dtype=np.float32)
    return grades, scores


def _numba_loaded():
    return "numba" in sys.modules


def child_plain():
    import numpy as np  # noqa: F401  (numpy is not part of the timed region, as for rankjit)

    t0 = time.perf_counter()
    import plain_kernel  # imports numba

    t1 = time.perf_counter()
    first = plain_kernel.compile_seconds()
    t2 = time.perf_counter()
    return dict(total=t2 - t0, first=first, imports=t1 - t0)


def child_ndcg(second="1"):
    import numpy as np

    labels, scores = _batch()
    t0 = time.perf_counter()
    import rankjit

    t1 = time.perf_counter()
    lazy = not _numba_loaded()
    v = rankjit.ndcg(labels, scores, k=10)
    t2 = time.perf_counter()
    res = dict(total=t2 - t0, first=t2 - t1, imports=t1 - t0, lazy_import=lazy, check=float(np.mean(v)),
               rankjit_file=rankjit.__file__)
    if second == "1":
        l64 = np.array(labels.tolist())  # what np.array of Python numbers gives: int64 / float64
        s64 = np.array(scores.astype(np.float64).tolist())
        assert l64.dtype == np.int64 and s64.dtype == np.float64
        t3 = time.perf_counter()
        w = rankjit.ndcg(l64, s64, k=10)
        res["second"] = time.perf_counter() - t3
        res["second_agrees"] = bool(np.allclose(v, w, rtol=1e-6, atol=1e-7))
    return res


def child_evaluate():
    import numpy as np

    labels, scores = _batch()
    t0 = time.perf_counter()
    import rankjit

    t1 = time.perf_counter()
    res = rankjit.evaluate(labels, scores, TEN)
    t2 = time.perf_counter()
    return dict(total=t2 - t0, first=t2 - t1, imports=t1 - t0,
                check=float(np.nansum(np.asarray([res[m] for m in TEN], dtype=np.float64))))


def child_alpha_ndcg():
    import numpy as np

    # numpy's defaults (int64 judgments, float64 scores), as in the function's docstring example
    rng = np.random.default_rng(1)
    nuggets = (rng.random((100, 20, 4)) < 0.15).astype(np.int64)
    scores = rng.random((100, 20))
    t0 = time.perf_counter()
    import rankjit

    t1 = time.perf_counter()
    v = rankjit.alpha_ndcg(nuggets, scores, k=10)
    t2 = time.perf_counter()
    return dict(total=t2 - t0, first=t2 - t1, imports=t1 - t0, check=float(np.mean(v)))


def child_rpp():
    import numpy as np

    rng = np.random.default_rng(2)
    labels = rng.integers(0, 3, size=(100, 50))  # int64, float64: numpy's defaults
    a = rng.random((100, 50))
    b = rng.random((100, 50))
    t0 = time.perf_counter()
    import rankjit

    t1 = time.perf_counter()
    v = rankjit.rpp(labels, a, b)
    t2 = time.perf_counter()
    return dict(total=t2 - t0, first=t2 - t1, imports=t1 - t0, check=float(np.nanmean(v)))


def child_lightgbm():
    import numpy as np

    try:
        import lightgbm as lgb
    except ImportError:
        return dict(skipped="lightgbm is not installed")
    rng = np.random.default_rng(3)
    sizes = [20] * 10
    n = sum(sizes)
    X, y = rng.normal(size=(n, 3)), rng.integers(0, 4, n)
    ds = lgb.Dataset(X, y, group=sizes, params={"verbose": -1}).construct()
    preds = rng.normal(size=n)
    t0 = time.perf_counter()
    from rankjit.integrations.lightgbm import feval

    f = feval("nDCG@10", "AP@10", compat="lightgbm")
    t1 = time.perf_counter()
    out = f(preds, ds)  # as lgb.train calls it: f(preds, eval_data)
    t2 = time.perf_counter()
    return dict(total=t2 - t0, first=t2 - t1, imports=t1 - t0, check=[[n_, float(v)] for n_, v, _ in out])


def child_import():
    t0 = time.perf_counter()
    import rankjit  # noqa: F401

    return dict(total=time.perf_counter() - t0, lazy_import=not _numba_loaded())


CHILDREN = {
    "plain": child_plain,
    "ndcg": child_ndcg,
    "evaluate": child_evaluate,
    "alpha_ndcg": child_alpha_ndcg,
    "rpp": child_rpp,
    "lightgbm": child_lightgbm,
    "import": child_import,
}


# ----------------------------------------------------------------------------------------------------------------
# parent
# ----------------------------------------------------------------------------------------------------------------

def _env(cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    src = ROOT / "src"
    if (src / "rankjit").is_dir():  # benchmark the tree this script belongs to
        env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


class Failed(Exception):
    pass


def _run(argv, cache, timeout):
    """Run ``argv`` with NUMBA_CACHE_DIR=cache; (wall seconds, completed process)."""
    t0 = time.perf_counter()
    try:
        res = subprocess.run(argv, capture_output=True, text=True, env=_env(cache), timeout=timeout, cwd=HERE)
    except subprocess.TimeoutExpired:
        raise Failed(f"timed out after {timeout:.0f} s") from None
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
        raise Failed(f"exit code {res.returncode}: " + " | ".join(tail))
    return wall, res


def _spawn_child(name, cache, timeout, *extra):
    wall, res = _run([sys.executable, str(Path(__file__).resolve()), "--child", name, *extra], cache, timeout)
    try:
        out = json.loads(res.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise Failed(f"no JSON on stdout: {res.stdout[-200:]!r}") from None
    out["process"] = wall
    out["stderr_lines"] = len(res.stderr.strip().splitlines()) if res.stderr.strip() else 0
    out["stderr_first"] = res.stderr.strip().splitlines()[0][:200] if res.stderr.strip() else ""
    return out


def _trec_eval(key, cache, timeout):
    _, qrels, run = DATASETS[key]
    wall, res = _run([sys.executable, "-m", "rankjit", "trec_eval", str(qrels), str(run)], cache, timeout)
    lines = res.stdout.strip().splitlines()
    if not lines:
        raise Failed("trec_eval printed nothing")
    stderr = res.stderr.strip().splitlines()
    return dict(total=wall, output_lines=len(lines), stderr_lines=len(stderr),
                stderr_first=stderr[0][:200] if stderr else "")


def _floor_imports(cache, timeout):
    wall, _ = _run([sys.executable, "-c", "import numpy, numba"], cache, timeout)
    return dict(total=wall)


class Contender:
    """One measurement: ``run(cache_dir) -> dict`` and the table rows it feeds."""

    def __init__(self, key, run, rows, cold, note=None):
        self.key, self.run, self.rows, self.cold, self.note = key, run, rows, cold, note


def build_contenders(quick, timeout):
    """Contenders and their rows: (row id, label, result field, ratio basis: 'total' / 'first' / None)."""
    c = []

    def child(name, *extra):
        return lambda cache: _spawn_child(name, cache, timeout, *extra)

    c.append(Contender("plain", child("plain"), [
        ("cold/plain/total", "plain nDCG@10 kernel (yardstick): import numba + first call", "total", "total"),
        ("cold/plain/first", "plain nDCG@10 kernel: first call alone", "first", "first"),
    ], cold=True))
    c.append(Contender("ndcg", child("ndcg", "1"), [
        ("cold/ndcg/total", "`ndcg` int8/float32, 100 q: import + first call", "total", "total"),
        ("cold/ndcg/first", "`ndcg` int8/float32: first call alone", "first", "first"),
        ("cold/ndcg/second", "then `ndcg` int64/float64 (same process): first call", "second", "first"),
    ], cold=True))
    c.append(Contender("evaluate", child("evaluate"), [
        ("cold/evaluate/total", "`evaluate` ten list measures: import + first call", "total", "total"),
        ("cold/evaluate/first", "`evaluate` ten list measures: first call alone", "first", "first"),
    ], cold=True))
    if not quick:
        c.append(Contender("alpha_ndcg", child("alpha_ndcg"), [
            ("cold/alpha_ndcg/total", "`alpha_ndcg` int64/float64: import + first call", "total", "total"),
            ("cold/alpha_ndcg/first", "`alpha_ndcg`: first call alone", "first", "first"),
        ], cold=True))
        c.append(Contender("rpp", child("rpp"), [
            ("cold/rpp/total", "`rpp` int64/float64: import + first call", "total", "total"),
            ("cold/rpp/first", "`rpp`: first call alone", "first", "first"),
        ], cold=True))
        c.append(Contender("lightgbm", child("lightgbm"), [
            ("cold/lightgbm/total", "LightGBM `feval('nDCG@10', 'AP@10')`: import + first call", "total", "total"),
            ("cold/lightgbm/first", "LightGBM feval: first call alone", "first", "first"),
        ], cold=True))
    for key, (label, qrels, run) in DATASETS.items():
        if quick and key != "suite":
            continue
        if not (qrels.is_file() and run.is_file()):
            note = f"skipped `rankjit trec_eval` on the {label}: {qrels} or {run} is missing"
            c.append(Contender(f"trec_{key}", None, [], cold=True, note=note))
            continue
        c.append(Contender(f"trec_{key}", (lambda k: lambda cache: _trec_eval(k, cache, timeout))(key), [
            (f"cold/trec_{key}", f"`rankjit trec_eval`, {label}: whole command", "total", "total"),
        ], cold=True))
    # warm
    c.append(Contender("warm_floor", lambda cache: _floor_imports(cache, timeout), [
        ("warm/floor", "`python -c \"import numpy, numba\"`: whole command (floor)", "total", None),
    ], cold=False))
    if not quick:
        c.append(Contender("warm_plain", child("plain"), [
            ("warm/plain", "plain kernel: import numba + first call (cached)", "total", None),
            ("warm/plain/process", "plain kernel: whole command (cached; floor of a Numba program)", "process", None),
        ], cold=False))
    c.append(Contender("warm_import", child("import"), [
        ("warm/import", "`import rankjit`", "total", None),
    ], cold=False))
    c.append(Contender("warm_ndcg", child("ndcg", "0"), [
        ("warm/ndcg", "`import rankjit` + first `ndcg` call", "total", None),
    ], cold=False))
    c.append(Contender("warm_evaluate", child("evaluate"), [
        ("warm/evaluate", "`import rankjit` + first `evaluate` ten measures", "total", None),
    ], cold=False))
    for key, (label, qrels, run) in DATASETS.items():
        if quick and key != "web2012":
            continue
        if not (qrels.is_file() and run.is_file()):
            note = f"skipped warm `rankjit trec_eval` on the {label}: data missing"
            c.append(Contender(f"warm_trec_{key}", None, [], cold=False, note=note))
            continue
        c.append(Contender(f"warm_trec_{key}", (lambda k: lambda cache: _trec_eval(k, cache, timeout))(key), [
            (f"warm/trec_{key}", f"`rankjit trec_eval`, {label}: whole command", "total", None),
        ], cold=False))
    return c


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def _git(*args):
    try:
        r = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30)
        return r.stdout.strip() if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _source_digest():
    """A digest of the library's sources: a change during the run is reported (it would void the warm cache)."""
    h = hashlib.sha256()
    for p in sorted((ROOT / "src" / "rankjit").rglob("*.py")):
        h.update(str(p.relative_to(ROOT)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _loadavg():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="repetitions (median; default 3)")
    ap.add_argument("--quick", action="store_true", help="smoke run: one repetition, fewer rows")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds allowed per measurement (default 1200)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--warm-only", action="store_true", help="only the warm rows (a few minutes)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        name, *rest = a.child
        print(json.dumps(CHILDREN[name](*rest)))
        return 0

    repeat = 1 if a.quick else max(1, a.repeat)
    head, status = _git("rev-parse", "HEAD"), _git("status", "--short")
    digest0 = _source_digest()
    try:
        import numba

        numba_version = numba.__version__
    except ImportError:
        numba_version = "?"
    started = datetime.datetime.now().isoformat(timespec="seconds")
    print(f"rankjit cold-start benchmark: median of {repeat}{' (--quick)' if a.quick else ''}; {os.cpu_count()} CPUs; "
          f"Python {platform.python_version()}, Numba {numba_version}; {started}")
    print(f"tree: {ROOT} at {head or '?'}; `git status --short`: "
          f"{'clean' if status == '' else (status or '?').replace(chr(10), '; ')}; "
          f"load average {_loadavg()}")
    sys.stdout.flush()

    contenders = build_contenders(a.quick, a.timeout)
    if a.warm_only:
        contenders = [c for c in contenders if not c.cold]
    notes = [c.note for c in contenders if c.note]
    active = [c for c in contenders if c.run is not None]
    results = {c.key: [] for c in active}  # per repetition: dict or None (failed)
    failures = {}
    tmp_root = Path(tempfile.mkdtemp(prefix="rankjit-coldstart-"))
    try:
        warm_cache = tmp_root / "warm"
        warm_cache.mkdir()
        # fill the warm cache: every warm contender once (each fills what it will load)
        for c in active:
            if not c.cold:
                try:
                    c.run(warm_cache)
                except Failed as exc:
                    failures.setdefault(c.key, []).append(f"warm-up: {exc}")
        for rep in range(repeat):
            shift = rep % len(active)
            order = active[shift:] + active[:shift]  # interleaved; the order rotates between repetitions
            for c in order:
                if c.cold:
                    cache = Path(tempfile.mkdtemp(prefix=f"{c.key}-", dir=tmp_root))  # empty
                else:
                    cache = warm_cache
                try:
                    r = c.run(cache)
                except Failed as exc:
                    failures.setdefault(c.key, []).append(f"repetition {rep + 1}: {exc}")
                    r = None
                finally:
                    if c.cold:
                        shutil.rmtree(cache, ignore_errors=True)
                results[c.key].append(r)
                msg = "failed" if r is None else ("skipped" if "skipped" in r else f"{r.get('total', float('nan')):.2f} s")
                print(f"  [{rep + 1}/{repeat}] {'cold' if c.cold else 'warm'} {c.key}: {msg}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    digest1 = _source_digest()
    if digest1 != digest0:
        notes.append("the library's sources changed during the run: the figures mix two versions of the code "
                     "(and warm rows may include recompiles)")

    # rows
    plain = results.get("plain", [])
    rows = []
    for c in active:
        reps = results[c.key]
        skipped = next((r["skipped"] for r in reps if r and "skipped" in r), None)
        if skipped:
            notes.append(f"skipped {c.key}: {skipped}")
            continue
        for rid, label, field, basis in c.rows:
            times = [r[field] for r in reps if r is not None and field in r]
            ratios = []
            if basis is not None:
                for r, p in zip(reps, plain):
                    if r is not None and p is not None and field in r and p.get(basis):
                        ratios.append(r[field] / p[basis])
            rows.append(dict(id=rid, what=label, cold=c.cold, times=times,
                             median=_median(times) if times else None, min=min(times) if times else None,
                             max=max(times) if times else None,
                             ratio=_median(ratios) if ratios and c.key != "plain" else (1.0 if ratios else None),
                             ratios=ratios))
    for key, msgs in failures.items():
        notes.append(f"{key}: " + "; ".join(msgs))
    # observations worth a line
    nd = [r for r in results.get("ndcg", []) if r]
    if nd and not all(r.get("lazy_import", True) for r in nd):
        notes.append("`import rankjit` imported numba (not lazy)")
    if nd and not all(r.get("second_agrees", True) for r in nd):
        notes.append("ndcg on int64/float64 disagrees with int8/float32")
    wi = [r for r in results.get("warm_import", []) if r]
    if wi and not all(r.get("lazy_import", True) for r in wi):
        notes.append("warm `import rankjit` imported numba (not lazy)")
    for key in ("ndcg", "evaluate", "trec_suite", "trec_web2012"):
        msgs = {r.get("stderr_first") for r in results.get(key, []) if r and r.get("stderr_first")}
        for m in sorted(msgs):
            notes.append(f"stderr of cold {key} (first line): {m}")
    if nd and nd[0].get("rankjit_file"):
        notes.append(f"rankjit imported from {nd[0]['rankjit_file']}")

    def fmt(x, spec):
        return "-" if x is None else format(x, spec)

    print()
    print("| what | median seconds | min-max | ratio to plain kernel |")
    print("|---|---:|---:|---:|")
    section = None
    for r in rows:
        sec = "cold (empty cache, fresh process)" if r["cold"] else "warm cache, fresh process"
        if sec != section:
            print(f"| **{sec}** | | | |")
            section = sec
        rng = "-" if r["min"] is None else f"{r['min']:.3f}-{r['max']:.3f}" if r["max"] < 10 else \
            f"{r['min']:.1f}-{r['max']:.1f}"
        med = fmt(r["median"], ".3f" if (r["median"] or 0) < 10 else ".1f")
        print(f"| {r['what']} | {med} | {rng} | {fmt(r['ratio'], '.2f') + ('x' if r['ratio'] is not None else '')} |")
    byid = {r["id"]: r for r in rows}
    print()
    for rid, target, what in (("cold/ndcg/total", 2.0, "cold ndcg / plain kernel (import + first call)"),
                              ("cold/evaluate/total", 3.0, "cold evaluate-ten / plain kernel (import + first call)")):
        r = byid.get(rid)
        if r and r["ratio"] is not None:
            print(f"{what}: {r['ratio']:.2f}x (target <= {target:g}x: {'met' if r['ratio'] <= target else 'NOT met'})")
    r1, r2 = byid.get("cold/ndcg/first"), byid.get("cold/ndcg/second")
    if r1 and r2 and r1["median"] and r2["median"] is not None:
        print(f"second dtype pair: {r2['median']:.2f} s after a first call of {r1['median']:.2f} s "
              f"({r2['median'] / r1['median']:.2f} of it; target: no full recompile)")
    for rid, target in (("warm/trec_web2012", 0.6), ("cold/trec_web2012", 10.0)):
        r = byid.get(rid)
        if r and r["median"] is not None:
            print(f"{r['what']} ({'warm' if rid.startswith('warm') else 'cold'}): {r['median']:.2f} s "
                  f"(target <= {target:g} s: {'met' if r['median'] <= target else 'NOT met'})")
    # warm start-up against the floor of any Numba program: one cached kernel called in a fresh process
    # (import numba, Numba's target set-up on the first cached load, the load): per-repetition ratios
    floor = results.get("warm_plain", [])
    for key in ("warm_trec_suite", "warm_trec_web2012"):
        ratios = [r["total"] / f["process"] for r, f in zip(results.get(key, []), floor)
                  if r and f and "total" in r and f.get("process")]
        if ratios:
            print(f"{key[5:]} warm / one cached plain kernel (whole commands): {_median(ratios):.2f}x "
                  f"(range {min(ratios):.2f}-{max(ratios):.2f})")
    if notes:
        print()
        print("Notes:")
        for n in notes:
            print(f"- {n}")
    status1 = _git("status", "--short")
    print(f"\nload average at the end: {_loadavg()}")
    if a.json:
        meta = dict(started=started, head=head, git_status=status, git_status_end=status1, repeat=repeat,
                    quick=a.quick, cpus=os.cpu_count(), python=platform.python_version(), numba=numba_version,
                    source_digest_start=digest0, source_digest_end=digest1, command=sys.argv,
                    load_average_end=_loadavg())
        Path(a.json).write_text(json.dumps(dict(meta=meta, rows=rows, notes=notes, raw=results), indent=1) + "\n")
        print(f"\nwrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
