"""Any integer grade, memory by distinct grades (issue #14, "hostile input").

``align`` codes the judged grades densely (``grade_values``, ``grade_codes``,
``grade_counts``) and ``rankjit trec_eval`` computes every measure on the codes, so a
qrels file with one grade of 10**6 or 2**40 costs what a file of small grades costs.

* ``rankjit trec_eval`` against the real trec_eval (``../shared/tools/build-trec_eval``)
  on 2000 queries with grades 10**6 and 10**6 - 1.  trec_eval's ``ndcg`` (no cutoff)
  takes minutes per query holding such a grade (its time grows with the square of the
  largest grade), so its reference is taken on the same qrels with the huge grades
  renamed to small unused levels and their gains given as ``ndcg.level=gain``
  parameters, which is the same computation.
* Grades 2**40 and 2**40 - 1: trec_eval cannot run at all (it allocates a table of
  max grade + 1 longs per query: 8 TiB).  Its measures that only compare grades with
  ``-l`` are taken on the renamed qrels; nDCG (``ndcg``, ``ndcg_cut``, gain parameters)
  from a plain-Python transcription of trec_eval's formulas, itself checked against
  trec_eval on the 10**6 files.
* Peak memory of the command in a child process, bounded.
* ``align``'s attributes against a plain-Python computation (hypothesis), and
  ``AlignedRun.evaluate`` with huge grades against ``tests/reference/lists.py``.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("pyarrow")

import reference  # noqa: E402
from rankjit.cli import main  # noqa: E402
from rankjit.io import AlignedRun, TrecQrels, TrecRun, _align, align, read_trec_qrels, read_trec_run  # noqa: E402
from rankjit.io._cli import parse_trec_measures, trec_eval_values  # noqa: E402
from test_cli_trec_eval import TE, _supported_lines  # noqa: E402  (the lines of measures rankjit prints)
from test_hostile_trec import trec_eval_bin  # noqa: E402, F401  (fixture: the real trec_eval, built once)

COMPILE_NOTICE = "rankjit: compiling "
N_Q = 2000
E6, E40 = 10**6, 2**40
#: the huge grades are renamed to these small unused levels for trec_eval (order kept)
RENAMED = {0: 9, 1: 8}  # huge - 0 -> 9, huge - 1 -> 8



def _each(*names):
    return [a for name in names for a in ("-m", name)]


# the measures rankjit computes, one by one: BINARY compare grades with -l only;
# NDCG_FREE adds ndcg_cut (gain = grade) and leaves out trec_eval's quadratic ndcg
RELEVANCE = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank", "P",
             "recall", "map_cut", "success", "iprec_at_recall", "Rprec_mult", "utility", "11pt_avg", "relative_P",
             "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "bpref", "gm_bpref", "num_nonrel_judged_ret",
             "unj", "rbp_resid", "binG", "infAP")
BINARY = _each(*RELEVANCE)
NDCG_FREE = _each(*RELEVANCE, "ndcg_cut")
# trec_eval's bpref counts the judged non-relevant documents grade by grade up to -l
# (m_bpref.c: rel_levels[0 .. relevance_level - 1]): with -l 10**6 it reads past its table
# and crashes, so those cases leave bpref out
NDCG_FREE_NO_BPREF = _each(*(m for m in RELEVANCE if "bpref" not in m), "ndcg_cut")


# ------------------------------------------------------------------ files
def _rows(huge, seed=14):
    """(qrels rows, run rows) of N_Q queries with grades ``huge`` and ``huge - 1`` in a few.

    Small grades 0..3 and -1, unjudged and unretrieved documents, tied scores; the huge
    grades: q7 at rank 1, q8 at the last rank, q9 judged but not retrieved, q10 both
    huge grades on one tied score.  Every query of the qrels is in the run (this
    trec_eval stops on a qrels query without results).
    """
    rng = random.Random(seed)
    qrels, run = [], []
    for i in range(N_Q):
        q = f"q{i}"
        grades = {f"d{j}": rng.choice([0, 0, 1, 2, 3, -1]) for j in range(6) if rng.random() < 0.85}
        retrieved = {d: rng.randint(0, 20) / 2 for d in rng.sample([f"d{j}" for j in range(12)], 8)}
        if i == 7:
            grades["d0"], retrieved["d0"] = huge, 99.0
        elif i == 8:
            grades["d1"], retrieved["d1"] = huge - 1, -5.0
        elif i == 9:
            grades["d2"] = huge
            retrieved.pop("d2", None)
        elif i == 10:
            grades["d3"], grades["d4"] = huge, huge - 1
            retrieved["d3"] = retrieved["d4"] = 50.0
        qrels += [(q, d, g) for d, g in grades.items()]
        run += [(q, d, s) for d, s in retrieved.items()]
    return qrels, run


def _write(path, qrels, run, rename=None):
    rename = rename or {}
    qtext = "".join(f"{q} 0 {d} {rename.get(g, g)}\n" for q, d, g in qrels)
    rtext = "".join(f"{q} Q0 {d} {r + 1} {s} tag\n" for r, (q, d, s) in enumerate(run))
    path.mkdir(parents=True, exist_ok=True)
    (path / "qrels").write_text(qtext)
    (path / "run").write_text(rtext)
    return path / "qrels", path / "run"


@pytest.fixture(scope="module", params=[E6, E40], ids=["1e6", "2^40"])
def huge_files(request, tmp_path_factory):
    """``(huge, rows, (qrels, run), (renamed qrels, run))``."""
    huge = request.param
    qrels, run = _rows(huge)
    tmp = tmp_path_factory.mktemp(f"grades{huge}")
    files = _write(tmp / "huge", qrels, run)
    renamed = _write(tmp / "renamed", qrels, run, {huge - k: v for k, v in RENAMED.items()})
    return huge, (qrels, run), files, renamed


@pytest.fixture(scope="module")
def files_1e6(tmp_path_factory):
    qrels, run = _rows(E6)
    tmp = tmp_path_factory.mktemp("grades1e6")
    return (qrels, run), _write(tmp / "huge", qrels, run), \
        _write(tmp / "renamed", qrels, run, {E6 - k: v for k, v in RENAMED.items()})


# ------------------------------------------------------------------ running both
#: Address space an in-process command may add to this process (see AS_LIMIT below)
IN_PROCESS_EXTRA = 3 * 2**30


@contextlib.contextmanager
def _bounded_address_space(extra=IN_PROCESS_EXTRA):
    """Lower this process's soft RLIMIT_AS to its current size + ``extra`` for a while.

    A regression to a dense table by grade would take 16 GB (grade 10**6) or 8 TiB x
    2000 (2**40) here: it then fails with a MemoryError instead of taking the
    machine's memory.  The soft limit is put back afterwards (raising it again up to
    the hard limit needs no privilege).  Without /proc or ``resource``: no bound.
    """
    try:
        import resource

        with open("/proc/self/status") as f:
            size = next(int(ln.split()[1]) * 1024 for ln in f if ln.startswith("VmSize:"))
    except (ImportError, OSError, StopIteration):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    bound = size + extra
    for limit in (soft, hard):
        if limit != resource.RLIM_INFINITY:
            bound = min(bound, limit)
    resource.setrlimit(resource.RLIMIT_AS, (bound, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _cli(args):
    """``rankjit trec_eval ARGS`` in this process (memory bounded): its stdout; an error or stderr line fails."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _bounded_address_space():
        rc = main(["trec_eval", *[str(a) for a in args]])
    lines = [ln for ln in err.getvalue().splitlines()
             if not ln.startswith(COMPILE_NOTICE) and "not computed by rankjit" not in ln]
    assert rc == 0 and not lines, lines
    return out.getvalue()


def _te(binary, args):
    proc = subprocess.run([binary, *[str(a) for a in args]], check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _values(text, rename=None):
    """``{(measure, query): value text}`` of trec_eval output lines (``rename``: measure names)."""
    out = {}
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        key = ((rename or {}).get(name.strip(), name.strip()), qid)
        assert key not in out, line
        out[key] = value
    return out


def _gain_param(huge, extra=""):
    """``ndcg.`` parameters of the renamed qrels that give the renamed levels their huge gains."""
    return "ndcg." + ",".join([extra] * bool(extra) + [f"{v}={huge - k}" for k, v in RENAMED.items()])


# ------------------------------------------------- (a) trec_eval, grades 10**6 as they are
CASES_1E6 = {
    "default": [],
    "measures": ["-q", *NDCG_FREE],
    "l2": ["-q", "-l", "2", *NDCG_FREE],
    "l_huge": ["-q", "-l", str(E6), *NDCG_FREE_NO_BPREF],
    "l_above_every_grade": ["-q", "-l", str(2 * E6), *NDCG_FREE_NO_BPREF],
    "c_M5": ["-q", "-c", "-M", "5", *NDCG_FREE],
    "cutoffs": ["-q", "-m", "P.3,7", "-m", "ndcg_cut.1,4,1000", "-m", "success.2", "-m", "recall.6"],
}


@pytest.mark.parametrize("case", sorted(CASES_1E6))
def test_grade_1e6_same_lines_as_trec_eval(case, files_1e6, trec_eval_bin):  # noqa: F811
    _, (qrels, run), _ = files_1e6
    args = CASES_1E6[case]
    got = _cli([*args, qrels, run])
    want = _supported_lines(_te(trec_eval_bin, [*args, qrels, run]))
    assert len(want) >= 10
    assert got.splitlines() == want


@pytest.mark.parametrize("gains", ["", "1=5,3=100", "2=0,1=7.5"])
def test_grade_1e6_ndcg_as_trec_eval(gains, files_1e6, trec_eval_bin):  # noqa: F811
    _, (qrels, run), (renamed, _) = files_1e6
    measure = f"ndcg.{gains}" if gains else "ndcg"
    got = _values(_cli(["-q", "-m", measure, qrels, run]))
    want = _values(_te(trec_eval_bin, ["-q", "-m", _gain_param(E6, gains), renamed, run]))
    assert len(got) == N_Q + 1
    assert sorted(got.values()) == sorted(want.values())
    assert {q: v for (_, q), v in got.items()} == {q: v for (_, q), v in want.items()}


def test_grade_1e6_all_trec_as_trec_eval(files_1e6, trec_eval_bin):  # noqa: F811
    _, (qrels, run), (renamed, _) = files_1e6
    got = _values(_cli(["-q", "-m", "all_trec", qrels, run]))
    want = _values(_te(trec_eval_bin, ["-q", *NDCG_FREE, qrels, run]))
    want.update(_values(_te(trec_eval_bin, ["-q", "-m", _gain_param(E6), renamed, run]),
                        {_gain_param(E6).replace(".", "_", 1): "ndcg"}))
    assert any(name == "ndcg" for name, _ in want) and len(want) > 40 * N_Q
    # relstring prints the grades (renamed qrels would change them): on the qrels as they are
    want.update(_values(_te(trec_eval_bin, ["-q", "-m", "relstring", qrels, run])))
    # rbp: trec_eval takes minutes on a grade of 10**6 (a gain per level 0..10**6 per query), so its
    # lines are held against the plain-Python reference of trec_eval's rbp (y / top judged grade,
    # p = 0.9), itself checked against trec_eval in test_rbp_reference.py
    rows, _, _ = files_1e6
    rbp = {q: reference.rbp_on_ranking([y if y is not None and y >= 0 else None for y in ranked], 0.9,
                                       max_grade=max([1] + [y for y in judged if y >= 0]))
           for q, (ranked, judged) in _te_ranking(rows[1], rows[0]).items()}
    got_rbp = {q: float(v) for (name, q), v in got.items() if name == "rbp"}
    assert set(got_rbp) == set(rbp) | {"all"}
    for q, value in rbp.items():
        assert abs(got_rbp[q] - value) <= 5e-5 + 1e-12, (q, got_rbp[q], value)
    # G, ndcg_rel and Rndcg walk trec_eval's gain levels 0 .. 10**6 (minutes per query there): left
    # out here; test_trec_loops.py holds them against trec_eval up to grade 6000
    slow = ("rbp", "G", "ndcg_rel", "Rndcg")
    assert {key: v for key, v in got.items() if key[0] not in slow} == want


# --------------------------------- (a) grades 2**40: trec_eval on renamed qrels, nDCG by formula
def _te_ranking(run_rows, qrels_rows):
    """Per query of the qrels (byte order): grades of the ranked documents (None: unjudged) and the judged grades."""
    judged, by_q = {}, {}
    for q, d, g in qrels_rows:
        judged.setdefault(q, {})[d] = g
    for q, d, s in run_rows:
        by_q.setdefault(q, []).append((d, s))
    out = {}
    for q in sorted(judged, key=str.encode):
        docs = sorted(by_q.get(q, []), key=lambda t: (t[1], t[0].encode()), reverse=True)
        out[q] = ([judged[q].get(d) for d, _ in docs], list(judged[q].values()))
    return out


def _te_ndcg(ranked, judged, gain, k=None):
    """trec_eval's nDCG (m_ndcg.c, m_ndcg_cut.c): gains summed rank by rank; the ideal from the judged grades.

    ``gain(grade)``; unjudged and negative grades have gain 0; the ideal takes the
    positive gains of the judged documents, largest first.
    """
    k = len(ranked) if k is None else k
    dcg = 0.0
    for i, y in enumerate(ranked[:k]):
        g = gain(y) if y is not None and y >= 0 else 0.0
        if g != 0:
            dcg += g / math.log2(i + 2)
    ideal = 0.0
    for i, g in enumerate(sorted((gain(y) for y in judged if y >= 0 and gain(y) > 0), reverse=True)[:k]):
        ideal += g / math.log2(i + 2)
    return dcg / ideal if ideal > 0 else 0.0


def _te_ndcg_values(rows, gains=None, k=None):
    gains = gains or {}
    gain = lambda y: float(gains.get(y, y))  # noqa: E731  (trec_eval: an unlisted level's gain is the level)
    return {q: _te_ndcg(ranked, judged, gain, k) for q, (ranked, judged) in _te_ranking(rows[1], rows[0]).items()}


def _close_to(printed, want):
    """A value printed with 4 decimals is the reference rounded (within half a unit of the last digit)."""
    return abs(float(printed) - want) <= 0.5e-4 + 1e-12


def test_reference_ndcg_is_trec_evals(files_1e6, trec_eval_bin):  # noqa: F811
    """The transcription of trec_eval's nDCG prints trec_eval's digits (grades 10**6, where it runs)."""
    rows, (qrels, run), (renamed, _) = files_1e6
    cut = _values(_te(trec_eval_bin, ["-q", "-m", "ndcg_cut.3,10", qrels, run]))
    plain = _values(_te(trec_eval_bin, ["-q", "-m", _gain_param(E6, "1=5,3=100"), renamed, run]))
    for k in (3, 10):
        ref = _te_ndcg_values(rows, k=k)
        assert {q: f"{v:.4f}" for q, v in ref.items()} == {q: v for (m, q), v in cut.items()
                                                           if m == f"ndcg_cut_{k}" and q != "all"}
    ref = _te_ndcg_values(rows, {1: 5, 3: 100})
    assert {q: f"{v:.4f}" for q, v in ref.items()} == {q: v for (_, q), v in plain.items() if q != "all"}


@pytest.mark.parametrize("case", ["default", "measures", "l2", "l_top", "c_M5"])
def test_huge_grades_measures_of_relevance_on_renamed_qrels(case, huge_files, trec_eval_bin):  # noqa: F811
    """Measures that compare grades with -l: the huge grades renamed to levels >= 1 are the same file."""
    huge, _, (qrels, run), (renamed, _) = huge_files
    binary = BINARY
    args, te_args = {
        "default": ([], []),
        "measures": (["-q", *binary], ["-q", *binary]),
        "l2": (["-q", "-l", "2", *binary], ["-q", "-l", "2", *binary]),
        "l_top": (["-q", "-l", str(huge), *binary], ["-q", "-l", str(RENAMED[0]), *binary]),
        "c_M5": (["-q", "-c", "-M", "5", *binary], ["-q", "-c", "-M", "5", *binary]),
    }[case]
    got = _cli([*args, qrels, run])
    want = _supported_lines(_te(trec_eval_bin, [*te_args, renamed, run]))
    assert len(want) >= 10
    assert got.splitlines() == want


@pytest.mark.parametrize("spec", ["ndcg", "ndcg_cut.1,3,10,1000", "ndcg.1=5,3=100"])
def test_huge_grades_ndcg_as_trec_evals_formula(spec, huge_files):
    _, rows, (qrels, run), _ = huge_files
    got = _values(_cli(["-q", "-m", spec, qrels, run]))
    if spec.startswith("ndcg_cut"):
        refs = {f"ndcg_cut_{k}": _te_ndcg_values(rows, k=k) for k in (1, 3, 10, 1000)}
    else:
        gains = {1: 5, 3: 100} if "=" in spec else None
        refs = {spec.replace(".", "_"): _te_ndcg_values(rows, gains)}
    assert {name for name, _ in got} == set(refs)
    for name, ref in refs.items():
        assert {q for (m, q) in got if m == name} == set(ref) | {"all"}
        bad = [(q, got[name, q], v) for q, v in ref.items() if not _close_to(got[name, q], v)]
        assert not bad, bad[:5]
        assert _close_to(got[name, "all"], math.fsum(ref.values()) / len(ref))
    # and every value in full precision (no printing), for the huge-grade queries above all
    requested, _ = parse_trec_measures([spec])
    with _bounded_address_space():
        aligned = align(str(run), str(qrels))
        results = trec_eval_values(aligned, requested)
    for name, _, values in results:
        np.testing.assert_allclose(values, [refs[name][q] for q in aligned.qids], rtol=1e-12, atol=0, err_msg=name)
    huge_queries = [aligned.qids.index(q) for q in ("q7", "q8", "q10")]
    assert all(values[i] > 0 for i in huge_queries)


def test_many_distinct_grades_int32_codes(tmp_path, trec_eval_bin):  # noqa: F811
    """More than 256 distinct grades: int32 codes, and the same lines as trec_eval."""
    rng = random.Random(3)
    grades = rng.sample(range(1, 5000), 400)
    qrels = [(f"q{i % 40}", f"d{i}", g) for i, g in enumerate(grades)] + [("q0", "z", 0), ("q1", "y", -3)]
    run = [(q, d, rng.randint(0, 9)) for q, d, _ in qrels if rng.random() < 0.7] + [("q2", "u", 1.0)]
    qf, rf = _write(tmp_path, qrels, run)
    aligned = align(str(rf), str(qf))
    assert aligned.grade_codes.dtype == np.int32 and aligned.grade_values.shape == (401,)  # 400 grades and 0 (-3 is not coded)
    args = ["-q", *NDCG_FREE, "-m", "ndcg_cut.5,50"]
    assert _cli([*args, qf, rf]).splitlines() == _supported_lines(_te(trec_eval_bin, [*args, qf, rf]))


# -------------------------------------------------------------------- (a) peak memory
#: Address space the child may reserve.  Measured on the 2000-query files (2 cores,
#: NUMBA_NUM_THREADS=2, MALLOC_ARENA_MAX=2): VmPeak 0.47 GB with a warm kernel cache,
#: 0.56 GB when it compiles; Numba and LLVM reserve most of it.  The code before grade
#: codes needed 16 GB for grade 10**6 (2000 x (10**6 + 1) int64 cells) and 2**40 x 16 KB
#: for 2**40: under this limit it stops with a MemoryError.
AS_LIMIT = 3 * 2**30
#: Resident memory of the child: measured 0.17 GB (warm cache), 0.26 GB (compiling);
#: the code before used 3.7 GB for 200 queries with grade 10**6, 17 GB for 2000.
RSS_LIMIT_KB = 1 * 2**20

#: The child reports its own peak resident memory, VmHWM of /proc/self/status: the high-water
#: mark of its own address space.  (``ru_maxrss`` from ``wait4`` is no measure of the child:
#: Linux carries the parent's peak over fork and exec, and a pytest process that has run the
#: whole suite is over 1 GB.)
_CHILD = (
    "import resource, runpy, sys\n"
    "limit = int(sys.argv.pop(1))\n"
    "report = sys.argv.pop(1)\n"
    "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
    "sys.argv[0] = 'rankjit'\n"
    "try:\n"
    "    runpy.run_module('rankjit', run_name='__main__', alter_sys=True)\n"
    "finally:\n"
    "    with open('/proc/self/status') as st, open(report, 'w') as out:\n"
    "        out.write(next(line for line in st if line.startswith('VmHWM:')).split()[1])\n"
)


def test_peak_memory_is_bounded(huge_files, tmp_path):
    if not os.path.exists("/proc/self/status"):
        pytest.skip("the child's peak resident memory is read from /proc/self/status (Linux only)")
    _, _, (qrels, run), _ = huge_files
    env = {**os.environ, "NUMBA_NUM_THREADS": "2", "MALLOC_ARENA_MAX": "2", "PYTHONWARNINGS": "ignore"}
    report = tmp_path / "vmhwm"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(AS_LIMIT), str(report), "trec_eval", "-m", "all_trec",
                           str(qrels), str(run)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    peak_kb = int(report.read_text())  # the child's own high-water mark
    assert 0 < peak_kb < RSS_LIMIT_KB, f"peak resident memory {peak_kb} KB"
    lines = proc.stdout.splitlines()
    assert lines[1] == f"num_q                 \tall\t{N_Q}" and any(ln.startswith("ndcg_cut_10 ") for ln in lines)


# ---------------------------------------------------------- (b) align's attributes
def _reference(run_rows, qrels_rows, complete, max_docs, rel_level):
    """The coded alignment in plain Python: ``(qids, labels, grade_values, codes, counts, n_relevant)``."""
    judged, by_q = {}, {}
    for q, d, g in qrels_rows:
        judged.setdefault(q, {})[d] = g
    for q, d, s in run_rows:
        by_q.setdefault(q, []).append((d, s))
    grade_values = sorted({0} | {g for _, _, g in qrels_rows if g >= 0})
    qids, labels, codes, counts, n_rel = [], [], [], [], []
    for q in sorted(judged, key=str.encode):
        if q not in by_q and not complete:
            continue
        docs = sorted(by_q.get(q, []), key=lambda t: (t[1], t[0].encode()), reverse=True)[:max_docs]
        qids.append(q)
        ys = [max(judged[q].get(d, 0), 0) for d, _ in docs]
        labels.append(ys)
        codes.append([grade_values.index(y) for y in ys])
        mine = [g for g in judged[q].values() if g >= 0]
        counts.append([mine.count(v) for v in grade_values])
        n_rel.append(sum(1 for g in mine if g >= rel_level))
    return qids, labels, grade_values, codes, counts, n_rel


GRADES = st.one_of(st.integers(-3, 4), st.sampled_from([0, 7, 300, 10**6, 2**40, 2**62, 2**63 - 1, -2**40]))


@st.composite
def alignments(draw):
    queries = [f"q{i}" for i in range(draw(st.integers(1, 5)))]
    docs = [f"d{j}" for j in range(8)]
    pairs = draw(st.lists(st.tuples(st.sampled_from(queries), st.sampled_from(docs)), min_size=1, max_size=25,
                          unique=True))
    qrels = [(q, d, draw(GRADES)) for q, d in pairs]
    ran = draw(st.lists(st.tuples(st.sampled_from(queries + ["only_in_run"]), st.sampled_from(docs)), max_size=25,
                        unique=True))
    run = [(q, d, float(draw(st.integers(0, 3)))) for q, d in ran]  # many ties
    if not any(q == qrels[0][0] for q, _, _ in run):
        run.append((qrels[0][0], "d0", 1.0))  # one common query at least
    complete = draw(st.booleans())
    max_docs = draw(st.one_of(st.none(), st.integers(1, 5)))
    rel_level = draw(st.one_of(st.integers(-2, 5), st.sampled_from([10**6, 2**40, 2**62])))
    return qrels, run, complete, max_docs, rel_level, draw(st.booleans())


@given(alignments())
def test_align_grade_codes_match_plain_python(case):
    qrels_rows, run_rows, complete, max_docs, rel_level, by_sorting = case
    saved = _align._BINCOUNT_MAX_GRADE
    try:
        if by_sorting:  # the np.unique path of large grades, whatever the grades
            _align._BINCOUNT_MAX_GRADE = -1
        al = align(TrecRun.from_columns(*zip(*run_rows)), TrecQrels.from_columns(*zip(*qrels_rows)),
                   complete=complete, max_docs=max_docs, rel_level=rel_level)
    finally:
        _align._BINCOUNT_MAX_GRADE = saved
    qids, labels, gv, codes, counts, n_rel = _reference(run_rows, qrels_rows, complete, max_docs, rel_level)
    assert al.qids == qids
    assert al.grade_values.dtype == np.int64 and al.grade_values.tolist() == gv
    assert al.grade_codes.dtype == np.uint8 and al.grade_codes.shape == al.labels.shape
    assert al.labels.dtype == np.int64
    for i in range(len(qids)):
        lo, hi = al.offsets[i], al.offsets[i + 1]
        assert al.labels[lo:hi].tolist() == labels[i]
        assert al.grade_codes[lo:hi].tolist() == codes[i]
    np.testing.assert_array_equal(al.grade_values[al.grade_codes], al.labels)
    assert al.grade_counts.dtype == np.int64 and al.grade_counts.tolist() == counts
    assert al.n_relevant.dtype == np.int64 and al.n_relevant.tolist() == n_rel
    # ideal_counts: the dense table of before (judged documents per grade 0..max), or a clear error
    width = max(gv) + 1
    if len(qids) * width <= AlignedRun.IDEAL_COUNTS_LIMIT:
        ideal = al.ideal_counts
        assert ideal.dtype == np.int64 and ideal.shape == (len(qids), width)
        dense = {(i, g): c for i in range(len(qids)) for g, c in zip(gv, counts[i]) if c}
        assert {(int(i), int(g)): int(ideal[i, g]) for i, g in zip(*np.nonzero(ideal))} == dense
    else:
        with pytest.raises(ValueError, match=rf"ideal_counts would have {len(qids)} x {width} = "
                                             rf"{len(qids) * width} cells \(grades go up to {width - 1}\)"):
            _ = al.ideal_counts


@given(st.lists(st.one_of(st.integers(-3, 5), GRADES), max_size=40), st.booleans())
def test_code_grades_is_the_index_of_each_grade_among_the_distinct_ones(grades, by_sorting):
    """code_grades against its definition: the distinct grades >= 0 and 0, ascending; each judgment's index
    among them, -1 below 0.  Drawn with every grade 0..top present (each grade its own code) and with gaps."""
    saved = _align._BINCOUNT_MAX_GRADE
    try:
        if by_sorting:
            _align._BINCOUNT_MAX_GRADE = -1
        grade_values, row_codes = _align.code_grades(np.array(grades, dtype=np.int64))
    finally:
        _align._BINCOUNT_MAX_GRADE = saved
    want = sorted({0, *(g for g in grades if g >= 0)})
    assert grade_values.dtype == np.int64 and grade_values.tolist() == want
    assert row_codes.dtype == np.int64 and row_codes.tolist() == [want.index(g) if g >= 0 else -1 for g in grades]


def test_code_grades_draws_grades_with_and_without_gaps():
    """(The test above reaches both ways of coding: every grade 0..top present, and gaps.)"""
    for grades, gaps in (([2, 0, 1, -1, 2], False), ([3, 0, -2], True)):
        grade_values, row_codes = _align.code_grades(np.array(grades, dtype=np.int64))
        assert (grade_values.tolist() != list(range(len(grade_values)))) is gaps
        assert row_codes.tolist() == [grade_values.tolist().index(g) if g >= 0 else -1 for g in grades]


def test_ideal_counts_small_is_the_dense_table():
    al = align(read_trec_run(b"q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq2 Q0 c 1 1 t\n"),
               read_trec_qrels(b"q1 0 a 3\nq1 0 c 3\nq1 0 d -2\nq2 0 c 0\nq2 0 e 1\nq3 0 f 5\n"))
    assert al.grade_values.tolist() == [0, 1, 3, 5]  # q3 is not evaluated; its grade is coded all the same
    assert al.ideal_counts.tolist() == [[0, 0, 0, 2, 0, 0], [1, 1, 0, 0, 0, 0]]
    assert al.ideal_counts is al.ideal_counts  # built once


def test_ideal_counts_too_large_says_why():
    al = align(read_trec_run(b"q1 Q0 a 1 2 t\n"), read_trec_qrels(b"q1 0 a 1099511627776\nq1 0 b 1\n"))
    assert al.grade_values.tolist() == [0, 1, 2**40] and al.grade_counts.tolist() == [[0, 1, 1]]
    with pytest.raises(ValueError, match=r"^ideal_counts would have 1 x 1099511627777 = 1099511627777 cells "
                                         r"\(grades go up to 1099511627776\), more than IDEAL_COUNTS_LIMIT = "
                                         r"67108864; use judged_counts \(counts per grade code, "
                                         r"grade_values\) instead$"):
        _ = al.ideal_counts


# -------------------------------------------------- (c) AlignedRun.evaluate, huge grades
MEASURES = ["P@5", "P(rel=2)@5", "R@10", "Success@3", "RR", "AP", "AP(rel=3)", "Rprec", "AP(denominator='r')@5",
            "nDCG(gain='linear')@10", "nDCG(gain='linear')", "DCG(gain='linear')@5",
            "nDCG(gain='linear', discount='zipf')@3"]


def _reference_measures(rows, measures, rel_default=1):
    """Per query of the qrels: the measures by ``tests/reference/lists.py`` on trec_eval's ranking of the rows."""
    from rankjit import _measures

    out = {m: [] for m in measures}
    for ranked, judged in _te_ranking(rows[1], rows[0]).values():
        labels = [max(y, 0) if y is not None else 0 for y in ranked]
        grades = [g for g in judged if g >= 0]  # every judged document: the ideal and R
        for text in measures:
            m = _measures.parse(text)
            p = dict(m.params)
            rel = p.pop("rel", rel_default)
            extra = {"n_relevant": sum(1 for g in grades if g >= rel)} if m.family not in ("DCG", "nDCG") else {}
            out[text].append(reference.measure_on_ranking(m.family, labels, grades, m.k, rel=rel, **p, **extra))
    return out


def test_evaluate_huge_grades_matches_reference(huge_files):
    huge, rows, (qrels, run), _ = huge_files
    with _bounded_address_space():
        aligned = align(str(run), str(qrels))
        assert aligned.ideal_counts_size > AlignedRun.IDEAL_COUNTS_LIMIT  # evaluated on the codes
        got = aligned.evaluate(MEASURES + [f"AP(rel={huge})", f"P(rel={huge - 1})@3"], per_query=True)
    ref = _reference_measures(rows, MEASURES + [f"AP(rel={huge})", f"P(rel={huge - 1})@3"])
    for m, values in ref.items():
        np.testing.assert_allclose(got[m], values, rtol=1e-12, atol=1e-300, err_msg=m)
    assert got[f"AP(rel={huge})"].max() > 0
    # the call's rel, and means
    means = aligned.evaluate(["P@5", "AP"], rel=3)
    ref = _reference_measures(rows, ["P@5", "AP"], rel_default=3)
    assert means == pytest.approx({m: np.mean(v) for m, v in ref.items()}, rel=1e-12)


def test_evaluate_huge_grades_refuses_what_it_cannot_code(files_1e6):
    _, (qrels, run), _ = files_1e6
    with _bounded_address_space():
        aligned = align(str(run), str(qrels))
    with pytest.raises(ValueError, match=r"^nDCG\(gain='exp2'\)@10: gain='exp2' of grade 1000000 overflows float64"):
        aligned.evaluate(["P@5", "nDCG(gain='exp2')@10"])
    with pytest.raises(ValueError, match=r"^ERR@10: grades go up to 1000000, too large for a dense ideal_counts "
                                         r"table; on grade codes rankjit evaluates P, R, Success, RR, AP, Rprec, "
                                         r"DCG and nDCG only$"):
        aligned.evaluate(["ERR@10"])
    with pytest.raises(ValueError, match=r"^nDCG\(gain=\[0, 1\]\)@5: the gain array covers grades 0\.\.1, but the "
                                         r"qrels hold grade 1000000; give a gain for every grade$"):
        aligned.evaluate(["nDCG(gain=[0, 1])@5"])


@pytest.mark.parametrize("name", ["qrels.test", "qrels.rel_level"])
def test_evaluate_on_codes_is_the_dense_evaluation(name, monkeypatch):
    """With small grades, the evaluation on codes gives every value of the dense one, bit for bit."""
    if not (TE / name).is_file():
        pytest.skip(f"{TE} not found (../shared/data absent)")
    aligned = align(str(TE / "results.test"), str(TE / name))
    measures = MEASURES + ["nDCG@10", "DCG@20", "nDCG(gain=[0, 1, 5, 7, 9])@10", "P@10", "R(rel=2)@100",
                           "Success(rel=4)@5"]
    dense = aligned.evaluate(measures, per_query=True)
    monkeypatch.setattr(AlignedRun, "IDEAL_COUNTS_LIMIT", 0)
    coded = aligned.evaluate(measures, per_query=True)
    for m in measures:
        np.testing.assert_array_equal(coded[m], dense[m], err_msg=m)
