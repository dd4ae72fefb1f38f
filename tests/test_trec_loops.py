"""trec_eval's G, ndcg_rel, Rndcg, infAP and relstring (``rankjit.io._trec_loops``) against the real trec_eval.

Each case runs ``trec_eval -q`` with one parameter set of the five measures and compares
every line of each measure (per query, and the 'all' line of the four numeric ones;
relstring has none), digit for digit, with lines printed here the way trec_eval prints
them (``%-22s\\t%s\\t%6.4f``; relstring ``'...'``).  Inputs: trec_eval's own test files
(``-c``, ``-M100``, ``-l2``, ``-J``), the TREC 2012 Web runs (grades -2..4), the random
qrels and runs of ``test_rbp_reference.random_files`` and odder random files made here
(grades above 9, queries judged only below 0, queries missing from the run under ``-c``).

trec_eval's quirks, reproduced (not excluded) and exercised by the parameter sets:

* gain_init.c sorts the gains with a comparison returning the difference of two gains cast
  to int: gains less than 1 apart compare equal, a difference of 2**31 or more is negative
  (``G.1=0.5`` leaves the ideal at level 0's gain 0 when level 0 sorts last:
  G = 0; ``ndcg_rel.1=1.8,2=0.6,3=1.2``; ``Rndcg.4=3000000000`` gives values in the
  millions on the Web runs);
* the gain of a document absent from the qrels (level -1) or judged below 0 (-2) can be
  set (``G.-1=5,-2=3``);
* ``Rndcg.1=0`` on binary qrels divides 0 by 0: trec_eval prints ``-nan`` (and in the mean);
* a query judged only below 0 takes the levels of the previous query (form_res_rels.c keeps
  them): visible with a gain for level -1 (``ndcg_rel.-1=2``);
* ``-c``: a query missing from the run is evaluated on one stand-in document absent from
  the qrels; relstring prints it ('-') when the measure has parameters and '' when it is
  named plain ``relstring`` (trec_eval.c clears that name only);
* a query whose largest judgment is below -1 makes trec_eval crash (segmentation fault in
  form_res_rels.c): no reference exists, the random files here never hold one.
"""
from __future__ import annotations

import ctypes
import functools
import platform
import random
import subprocess

import numpy as np
import pytest
from test_hostile_trec import trec_eval_bin  # noqa: F401 (the fixture: the real trec_eval, built once)
from test_rbp_reference import WEB, random_files

from rankjit.io import _trec_loops as L
from rankjit.io import align, read_trec_qrels, read_trec_run

SUITE = WEB.parent / "trec_eval"

#: parameter sets, one -m per measure (trec_eval keeps the first parameters of a measure)
SETS = {
    "defaults": ["relstring", "infAP", "G", "ndcg_rel", "Rndcg"],
    "gains": ["relstring.25", "G.1=3.5,2=9,4=7", "ndcg_rel.1=3.5,2=9,4=7", "Rndcg.1=3.5,2=9,4=7"],
    "int_sort": ["relstring.3", "G.1=0.5", "ndcg_rel.1=1.8,2=0.6,3=1.2", "Rndcg.4=3000000000"],
    "unjudged_gains": ["relstring.0", "G.-1=5,-2=3", "ndcg_rel.-1=2", "Rndcg.-2=1,-1=0.5"],
    # a repeated level (the first one holds the count, the lower gain is looked up), a gain for
    # level 0 and a name that is not an integer (ignored), ideal gains all 0 in Rndcg (0/0)
    "odd": ["relstring.2", "G.1=3,1=0.5", "ndcg_rel.0=2,x=4", "Rndcg.1=0"],
}


# ---- rankjit's side: the functions, printed the trec_eval way -----------------------------


def _gain_pairs(text):
    """trec_eval's ``level=gain`` pairs (meas_init.c, gain_init.c): names not integers are skipped."""
    pairs = []
    for part in text.split(","):
        name, _, value = part.partition("=")
        digits = name[1:] if name[:1] in "+-" else name
        if digits.isdigit():
            pairs.append((int(name), float(value)))
    return pairs


def _c_double(v):
    """C's ``%6.4f`` (glibc prints NaN with its sign)."""
    if np.isnan(v):
        return ("-nan" if np.signbit(v) else "nan").rjust(6)
    return f"{v:6.4f}"


@functools.cache
def _aligned(qrels, run, flags):
    q, r = read_trec_qrels(qrels), read_trec_run(run)
    max_docs = next((int(f[2:]) for f in flags if f.startswith("-M")), None)
    level = next((int(f[2:]) for f in flags if f.startswith("-l")), 1)
    al = align(r, q, complete="-c" in flags, max_docs=max_docs, rel_level=level)
    if "-J" in flags:
        al = al.judged_only()
    return al, al.judged_below_zero


def _ours(qrels, run, flags, spec):
    """rankjit's lines for one trec_eval measure spec (``G.1=3,2=9``, ``relstring.20``)."""
    al, below_zero = _aligned(str(qrels), str(run), tuple(flags))
    judged_only = "-J" in flags
    name, _, param = spec.partition(".")
    printed = f"{name}_{param}" if param else name
    if name == "relstring":
        k = float(param.split(",")[0]) if param else None
        strings = L.relstring(al, k, below_zero=below_zero, judged_only=judged_only)
        return [f"{printed:<22}\t{qid}\t'{s}'" for qid, s in zip(al.qids, strings)]
    if name == "infAP":
        values = L.infap(al, below_zero=below_zero)
    else:
        function = {"G": L.g_measure, "ndcg_rel": L.ndcg_rel, "Rndcg": L.rndcg}[name]
        values = function(al, _gain_pairs(param) if param else None, below_zero=below_zero, judged_only=judged_only)
    assert values.dtype == np.float64 and values.shape == (al.n_queries,)
    lines = [f"{printed:<22}\t{qid}\t{_c_double(v)}" for qid, v in zip(al.qids, values)]
    mean = float(np.cumsum(values)[-1]) / al.n_queries  # trec_eval: the sum in query order, then / num_q
    return lines + [f"{printed:<22}\tall\t{_c_double(mean)}"]


# ---- the comparison -----------------------------------------------------------------------


def _trec_eval(binary, qrels, run, flags, specs):
    args = [binary, "-q", *flags, *[a for s in specs for a in ("-m", s)], str(qrels), str(run)]
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=120).stdout.splitlines()


def _compare(binary, qrels, run, flags, specs):
    want = _trec_eval(binary, qrels, run, flags, specs)
    n_lines = 0
    for spec in specs:
        name, _, param = spec.partition(".")
        printed = f"{name}_{param}" if param else name
        theirs = [line for line in want if line.split("\t")[0].rstrip() == printed]
        mine = _ours(qrels, run, flags, spec)
        assert theirs, f"trec_eval printed no {printed} line"
        assert mine == theirs, spec
        n_lines += len(theirs)
    assert n_lines == len(want)  # every line trec_eval printed was compared
    return n_lines


SUITE_CASES = [
    ("qrels.test", "results.test", []),
    ("qrels.rel_level", "results.test", []),
    ("qrels.test", "results.trunc", ["-c"]),
    ("qrels.test", "results.test", ["-M100"]),
    ("qrels.rel_level", "results.test", ["-l2"]),
    ("qrels.rel_level", "results.test", ["-J"]),
    ("qrels.test", "results.trunc", ["-c", "-J"]),
]


@pytest.mark.skipif(not SUITE.is_dir(), reason=f"trec_eval's test files not found at {SUITE} (../shared/data)")
@pytest.mark.parametrize("specs", SETS.values(), ids=SETS.keys())
@pytest.mark.parametrize("qrels, run, flags", SUITE_CASES, ids=[" ".join([q, r, *f]) for q, r, f in SUITE_CASES])
def test_trec_eval_suite(trec_eval_bin, qrels, run, flags, specs):  # noqa: F811 (the fixture)
    assert _compare(trec_eval_bin, SUITE / qrels, SUITE / run, flags, specs) > 2 * len(specs)


@pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")
@pytest.mark.parametrize("specs", SETS.values(), ids=SETS.keys())
@pytest.mark.parametrize("flags", [[], ["-J"], ["-M100"], ["-l3"]], ids=["plain", "-J", "-M100", "-l3"])
@pytest.mark.parametrize("run", ["run.ql.cata.txt", "run.rm.cata.txt"])
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_web2012(trec_eval_bin, run, flags, specs):  # noqa: F811 (the fixture)
    assert _compare(trec_eval_bin, WEB / "qrels.adhoc.txt", WEB / run, flags, specs) >= 50 * len(specs)


@pytest.mark.parametrize("specs", SETS.values(), ids=SETS.keys())
@pytest.mark.parametrize("seed", range(8))
def test_random_runs(trec_eval_bin, tmp_path, seed, specs):  # noqa: F811 (the fixture)
    qrels, run = random_files(tmp_path, seed)
    flags = random.Random(seed).choice([[], ["-J"], ["-M5"], ["-c"], ["-l2"], ["-J", "-M5"], ["-J", "-l2"]])
    assert _compare(trec_eval_bin, qrels, run, flags, specs) > 12 * len(specs)


def _odd_files(tmp_path, seed, complete):
    """Random qrels + run with grades -2..12, queries judged only below 0 (one -1 at least:
    a largest judgment below -1 crashes trec_eval), queries judged 0 only, unjudged documents,
    tied scores and, when ``complete``, judged queries missing from the run."""
    rng = random.Random(1000 + seed)
    qlines, rlines = [], []
    for q in range(14):
        qid = f"t{q:02d}"
        kind = rng.choice(["graded", "graded", "negative", "zeros", "missing" if complete else "graded"])
        docs = [f"d{rng.randint(0, 80)}" for _ in range(rng.randint(1, 40))]
        docs = list(dict.fromkeys(docs))
        for i, d in enumerate(docs):
            if i and rng.random() < 0.3:
                continue
            graded = rng.choice([-1, 0, 0, 1, 2, 3, 7, 10, 12] + ([-2] if i else []))  # the first one >= -1
            y = {"graded": graded, "negative": -1 if i == 0 else rng.choice([-2, -1]), "zeros": 0,
                 "missing": rng.randint(0, 3)}[kind]
            qlines.append(f"{qid} 0 {d} {y}")
        if kind != "missing":
            for i, d in enumerate(docs + [f"u{j}" for j in range(rng.randint(0, 5))]):
                rlines.append(f"{qid} Q0 {d} {i} {rng.choice([1.0, 0.5, rng.random()]):.4f} odd")
    if not rlines:
        rlines.append("t99 Q0 d0 1 1.0 odd")
    rng.shuffle(qlines)
    rng.shuffle(rlines)
    qp, rp = tmp_path / f"qrels.odd{seed}", tmp_path / f"run.odd{seed}"
    qp.write_text("\n".join(qlines) + "\n")
    rp.write_text("\n".join(rlines) + "\n")
    return qp, rp


@pytest.mark.parametrize("specs", SETS.values(), ids=SETS.keys())
@pytest.mark.parametrize("seed, flags", [(0, ["-c"]), (1, ["-c", "-J"]), (2, ["-c", "-M4"]), (3, []), (4, ["-J"]),
                                         (5, ["-c", "-l2"])])
def test_odd_random_runs(trec_eval_bin, tmp_path, seed, flags, specs):  # noqa: F811 (the fixture)
    qrels, run = _odd_files(tmp_path, seed, "-c" in flags)
    assert _compare(trec_eval_bin, qrels, run, flags, specs) > 10 * len(specs)


@pytest.mark.parametrize("flags", [[], ["-J"]], ids=["plain", "-J"])
@pytest.mark.parametrize("specs", [SETS["defaults"], SETS["gains"], SETS["int_sort"]], ids=["defaults", "gains", "int_sort"])
def test_many_levels(trec_eval_bin, tmp_path, flags, specs):  # noqa: F811 (the fixture)
    # grades up to 6000: beyond DENSE_LEVELS the list of gains holds the levels judged only
    rng = random.Random(3)
    qlines, rlines = [], []
    for q in range(6):
        for i in range(20):
            qlines.append(f"q{q} 0 d{i} {rng.choice([-1, 0, 1, 2, 3, 12, 4999, 5000, 6000])}")
        rlines += [f"q{q} Q0 d{i} {i} {rng.random():.3f} t" for i in range(30)]
    (tmp_path / "q").write_text("\n".join(qlines) + "\n")
    (tmp_path / "r").write_text("\n".join(rlines) + "\n")
    assert _compare(trec_eval_bin, tmp_path / "q", tmp_path / "r", flags, specs) > 6 * len(specs)


# ---- the quirks, one by one ---------------------------------------------------------------

STALE_QRELS = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq1 0 e -1\nq2 0 a -1\nq2 0 b -1\nq3 0 x 1\n"
STALE_RUN = "q1 Q0 a 1 5 t\nq1 Q0 d 2 4 t\nq1 Q0 e 3 3 t\nq1 Q0 c 4 2 t\nq2 Q0 a 1 5 t\nq2 Q0 z 2 4 t\nq3 Q0 x 1 1 t\n"


def test_query_judged_only_below_zero_takes_the_previous_levels(trec_eval_bin, tmp_path):  # noqa: F811
    # q2 is judged -1 only: trec_eval evaluates it with q1's levels (one document each of grades
    # 0, 1, 2); its second document, absent from the qrels, has gain 2 (level -1), so
    # ndcg_rel = (2/log2 3) / (2 + 1/log2 3) = 0.4796, where q2's own (empty) levels would give 0
    (tmp_path / "q").write_text(STALE_QRELS)
    (tmp_path / "r").write_text(STALE_RUN)
    al, below_zero = _aligned(str(tmp_path / "q"), str(tmp_path / "r"), ())
    assert below_zero.tolist() == [False, False, True, False, True, False, False]  # e (q1) and a (q2)
    values = L.ndcg_rel(al, {-1: 2.0}, below_zero=below_zero)
    assert round(values[1], 4) == 0.4796
    assert L.relstring(al, below_zero=below_zero) == ["2-.0", ".-", "1"]
    for specs in SETS.values():
        _compare(trec_eval_bin, tmp_path / "q", tmp_path / "r", [], specs)


def test_largest_judgment_below_minus_one_crashes_trec_eval(trec_eval_bin, tmp_path):  # noqa: F811
    # form_res_rels.c clears (largest judgment + 1) counters with memset: a negative size when
    # a query's judgments are all below -1.  No reference then; rankjit gives its values.
    (tmp_path / "q").write_text("q1 0 a 2\nq2 0 a -2\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 5 t\nq2 Q0 a 1 5 t\n")
    proc = subprocess.run([trec_eval_bin, "-m", "G", str(tmp_path / "q"), str(tmp_path / "r")], check=False,
                          capture_output=True)
    assert proc.returncode != 0
    al, below_zero = _aligned(str(tmp_path / "q"), str(tmp_path / "r"), ())
    assert L.g_measure(al, below_zero=below_zero).tolist() == [1.0, 0.0]
    assert L.relstring(al, below_zero=below_zero) == ["2", "."]


def test_gain_sort_is_glibc_qsort():
    # the merge sort here against the C library's own qsort, with the comparison of gain_init.c
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc's qsort only")

    class RelGain(ctypes.Structure):  # trec_eval.h's REL_GAIN
        _fields_ = [("rel_level", ctypes.c_long), ("num_at_level", ctypes.c_long), ("gain", ctypes.c_double)]

    compare = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(RelGain), ctypes.POINTER(RelGain))(
        lambda a, b: L._c_gain_compare(a[0].gain, b[0].gain))
    libc = ctypes.CDLL(None)
    libc.qsort.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
    rng = random.Random(7)
    pool = [0.0, 0.5, 0.6, 1.2, 1.8, 2.0, 3.0, 3.5, -1.0, -0.4, 3e9, -3e9, float("nan"), float("inf"), 7.0, 9.0]
    for _ in range(300):
        gains = [rng.choice(pool) if rng.random() < 0.7 else float(rng.randint(0, 6)) for _ in range(rng.randint(0, 40))]
        arr = (RelGain * len(gains))(*[RelGain(i, 0, g) for i, g in enumerate(gains)])
        libc.qsort(arr, len(gains), ctypes.sizeof(RelGain), compare)
        assert L._sort_gains(gains) == [e.rel_level for e in arr], gains
    # the int comparison is not an order: 1.8 ~ 1.2 ~ 0.6 (less than 1 apart) but 0.6 < 1.8
    assert L._sort_gains([1.8, 0.6, 1.2, 0.0]) == [1, 3, 0, 2]


def test_judged_below_zero_and_judged_only(tmp_path):
    (tmp_path / "q").write_text(STALE_QRELS)
    (tmp_path / "r").write_text(STALE_RUN)
    al, below_zero = _aligned(str(tmp_path / "q"), str(tmp_path / "r"), ("-J",))
    assert not below_zero.any() and below_zero.shape == al.labels.shape
    assert L.relstring(al, below_zero=below_zero, judged_only=True) == ["20", "", "1"]
    with pytest.raises(ValueError, match="one flag per ranked document"):
        L.infap(al, below_zero=np.zeros(1, bool))
