"""``rankjit trec_eval``: dcg, ideal_dcg, yaap, gains for levels -1 / -2, and ``-Z`` against the real trec_eval.

Every comparison runs the real trec_eval 10.0 (``../shared/tools/build-trec_eval``) and
``rankjit trec_eval`` with the same arguments and compares their whole output, line for line
and digit for digit, on trec_eval's test files (``-c``, ``-M``, ``-l``, ``-J``), the TREC 2012
Web runs (grades -2..4), random qrels and runs (ties, unjudged documents, judgments below 0,
queries judged only below 0, queries missing from the run under ``-c``) and z-scores files.

trec_eval's behaviours kept, and where rankjit differs (docs/cli.md):

* dcg, ideal_dcg and ndcg share one parameter table in trec_eval (m_ndcg.c): two of them in one
  call with parameters crash it (double free, segmentation fault).  Here each takes its own
  parameters: its lines are those of trec_eval called with that measure alone.
* ``num_nonjudged_ret`` is declared in trec_eval 10.0's measures.c but not in its table: trec_eval
  refuses the name, so does rankjit.
* dcg, ideal_dcg and ndcg with gains: the ideal ranking takes the gains in their exact order,
  where trec_eval's comparison (the difference of two gains cast to int) calls gains less than
  1 apart equal; the same values whenever that comparison is a true order (compared here), the
  definition of DCG otherwise (compared with a plain-Python DCG; ``trec_eval_order=True`` gives
  trec_eval's values, compared too).
* ``-Z``: trec_eval's binary searches of its z-scores table go one entry past a query's
  measures (into the next query's: reproduced) and past the end of the table, where it crashes
  (here: no mean, ``-1000000``).  A malformed z-scores file is refused with the file and line;
  trec_eval reads a mean ``abc`` as 0 and keeps one of two lines for the same (query, measure),
  rankjit refuses both.
"""
from __future__ import annotations

import math
import random
import re
import subprocess

import numpy as np
import pytest
from test_hostile_trec import trec_eval_bin  # noqa: F401 (the fixture: the real trec_eval, built once)
from test_rbp_reference import TE_DATA, WEB, random_files
from test_trec_loops import STALE_QRELS, STALE_RUN, _odd_files
from test_trec_loops import SUITE_CASES as LOOP_SUITE_CASES

from rankjit.cli import main
from rankjit.io import _trec_counts as C
from rankjit.io import _trec_loops as L
from rankjit.io import align, read_trec_qrels, read_trec_run

needs_te = pytest.mark.skipif(not TE_DATA.is_dir(), reason=f"trec_eval's test files not found at {TE_DATA}")
needs_web = pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")


def _m(*specs):
    return [a for s in specs for a in ("-m", s)]


#: measure sets trec_eval runs without crashing: at most one of dcg, ideal_dcg, ndcg when one has parameters
SETS = {
    "defaults": _m("dcg", "ideal_dcg", "ndcg", "yaap", "map"),
    "dcg_gains": _m("dcg.1=3.5,2=9,4=7,0=1", "yaap"),
    "ideal_gains": _m("ideal_dcg.-1=5,-2=3,1=2", "G.-1=5"),
    "ndcg_unjudged": _m("ndcg.-1=5,-2=3", "ndcg_rel.-1=2", "Rndcg.-2=1,-1=0.5"),
    "ndcg_repeated_level": _m("ndcg.1=3,1=0.5,0=2", "G.1=3,1=0.5"),
    "negative_gains": _m("dcg.1=-1,2=4,-1=-2"),
    "ideal_negative": _m("ideal_dcg.2=-3,3=6,-1=1"),
}


def _rankjit(args, capsys):
    rc = main(["trec_eval", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, out.splitlines(), err


def _trec_eval(binary, args):
    proc = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout.splitlines(), proc.stderr


def _same(binary, args, capsys, at_least):
    want_rc, want, want_err = _trec_eval(binary, args)
    assert want_rc == 0, want_err
    rc, got, err = _rankjit(args, capsys)
    assert rc == 0, err
    assert "left out" not in err  # every measure asked was computed
    assert got == want
    assert len(want) >= at_least  # the comparison covers real content
    return want


# ---- dcg, ideal_dcg, yaap and gains by level against trec_eval --------------------------------------

SUITE_CASES = [
    *LOOP_SUITE_CASES,  # the suite files and options of tests/test_trec_loops.py
    ("qrels.test", "results.trunc", ["-c", "-M0"]),  # (-M 0 cuts -c's stand-in document too)
]


@needs_te
@pytest.mark.parametrize("measures", SETS.values(), ids=SETS.keys())
@pytest.mark.parametrize("qrels, run, flags", SUITE_CASES, ids=[" ".join([q, r, *f]) for q, r, f in SUITE_CASES])
def test_suite_files(trec_eval_bin, qrels, run, flags, measures, capsys):  # noqa: F811 (the fixture)
    _same(trec_eval_bin, ["-q", *flags, *measures, TE_DATA / qrels, TE_DATA / run], capsys, at_least=4)


#: (the kernels run as plain Python with NUMBA_DISABLE_JIT=1: seconds per case, so all but one are "slow")
WEB_CASES = [pytest.param(run, flags, id=f"{run[4:6]} {' '.join(flags) or 'plain'}",
                          marks=[pytest.mark.slow] if (run, flags) != ("run.ql.cata.txt", []) else [])
             for run in ("run.ql.cata.txt", "run.rm.cata.txt") for flags in ([], ["-J"], ["-M100"], ["-l3"])]


@needs_web
@pytest.mark.parametrize("measures", SETS.values(), ids=SETS.keys())
@pytest.mark.parametrize("run, flags", WEB_CASES)
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_web2012(trec_eval_bin, run, flags, measures, capsys):  # noqa: F811 (the fixture)
    _same(trec_eval_bin, ["-q", *flags, *measures, WEB / "qrels.adhoc.txt", WEB / run], capsys, at_least=51)


@needs_web
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_web2012_ndcg_gain_for_unjudged_documents(trec_eval_bin, capsys):  # noqa: F811 (the fixture)
    # issue #14's case: ndcg.-1=G gives G to every retrieved document the qrels do not hold
    want = _same(trec_eval_bin, ["-m", "ndcg.-1=5", WEB / "qrels.adhoc.txt", WEB / "run.ql.cata.txt"], capsys, 1)
    assert float(want[0].split("\t")[2]) > 1.0  # far above any nDCG of judged documents only


@pytest.mark.parametrize("measures", SETS.values(), ids=SETS.keys())
@pytest.mark.parametrize("seed", range(6))
def test_random_runs(trec_eval_bin, tmp_path, seed, measures, capsys):  # noqa: F811 (the fixture)
    qrels, run = random_files(tmp_path, seed)
    flags = random.Random(seed).choice([[], ["-J"], ["-M5"], ["-c"], ["-l2"], ["-J", "-M5"], ["-J", "-l2"]])
    _same(trec_eval_bin, ["-q", *flags, *measures, qrels, run], capsys, at_least=12)


@pytest.mark.parametrize("measures", SETS.values(), ids=SETS.keys())
@pytest.mark.parametrize("seed, flags", [(0, ["-c"]), (1, ["-c", "-J"]), (2, ["-c", "-M4"]), (3, []), (4, ["-J"]),
                                         (5, ["-c", "-l2"])])
def test_odd_random_runs(trec_eval_bin, tmp_path, seed, flags, measures, capsys):  # noqa: F811 (the fixture)
    # grades -2..12, queries judged only below 0 (they take the levels of the query before), judged
    # queries the run lacks under -c (trec_eval's stand-in document: yaap = log(1 / (1 + R)) there)
    qrels, run = _odd_files(tmp_path, seed, "-c" in flags)
    _same(trec_eval_bin, ["-q", *flags, *measures, qrels, run], capsys, at_least=10)


def _not_rbp(lines):
    return [line for line in lines if not line.startswith("rbp ")]


@pytest.mark.parametrize("seed", [6, 7])
def test_random_runs_all_trec(trec_eval_bin, tmp_path, seed, capsys):  # noqa: F811 (the fixture)
    # plain -q -m all_trec (neither -J nor -l 0): every line; rbp's compared alone (m_rbp.c reads uninitialised
    # values next to other measures: tests/test_rbp_reference.py)
    qrels, run = random_files(tmp_path, seed, n_queries=6)
    args = ["-q", *_m("all_trec"), qrels, run]
    want_rc, want, want_err = _trec_eval(trec_eval_bin, args)
    assert want_rc == 0, want_err
    rc, got, err = _rankjit(args, capsys)
    assert rc == 0 and "left out" not in err, err
    assert _not_rbp(got) == _not_rbp(want)
    assert len(want) > 7 * 90  # 6 queries and the means, over 90 lines each
    _same(trec_eval_bin, ["-q", *_m("rbp"), qrels, run], capsys, at_least=7)


def test_qrels_query_missing_from_the_run_without_c(trec_eval_bin, tmp_path, capsys):  # noqa: F811 (the fixture)
    # trec_eval stops at a qrels query the run does not answer unless -c ("result qid ... not found in qrels",
    # exit status 4, after the lines of the queries before it); rankjit leaves the query out of the averages
    # (trec_eval 9, pytrec_eval; docs/cli.md): its lines are trec_eval's on the qrels without that query
    qrels, run = random_files(tmp_path, 8, n_queries=6)
    run.write_text("".join(f"{line}\n" for line in run.read_text().splitlines() if not line.startswith("q2 ")))
    args = ["-q", *_m("all_trec"), qrels, run]
    stopped_rc, stopped, stopped_err = _trec_eval(trec_eval_bin, args)
    assert stopped_rc != 0 and "result qid 'q2' not found in qrels" in stopped_err
    kept = tmp_path / "qrels.kept"
    kept.write_text("".join(f"{line}\n" for line in qrels.read_text().splitlines() if not line.startswith("q2 ")))
    want_rc, want, want_err = _trec_eval(trec_eval_bin, ["-q", *_m("all_trec"), kept, run])
    assert want_rc == 0, want_err
    rc, got, err = _rankjit(args, capsys)
    assert rc == 0, err
    assert _not_rbp(got) == _not_rbp(want)
    assert {line.split()[1] for line in got} == {"q0", "q1", "q3", "q4", "q5", "all"}
    assert _not_rbp(got)[:len(_not_rbp(stopped))] == _not_rbp(stopped) and len(stopped) > 2 * 90  # q0, q1


def test_stale_levels_in_ideal_dcg(trec_eval_bin, tmp_path, capsys):  # noqa: F811 (the fixture)
    # q2 is judged -1 only: trec_eval keeps q1's levels (grades 0, 1, 2, one document each) for it,
    # so its ideal DCG is q1's: 2 + 1 / log2(3)
    (tmp_path / "q").write_text(STALE_QRELS)
    (tmp_path / "r").write_text(STALE_RUN)
    want = _same(trec_eval_bin, ["-q", *_m("ideal_dcg"), tmp_path / "q", tmp_path / "r"], capsys, 4)
    assert want[1] == f"{'ideal_dcg':<22}\tq2\t{2 + 1 / math.log2(3):6.4f}"


# ---- what trec_eval cannot do -----------------------------------------------------------------------


@needs_te
@pytest.mark.parametrize("together, alone", [
    (["dcg", "ndcg.1=3"], [["dcg"], ["ndcg.1=3"]]),
    (["dcg.1=3", "ndcg"], [["dcg.1=3"], ["ndcg"]]),
    (["dcg.1=3", "ideal_dcg.2=5", "ndcg.1=0,2=4"], [["dcg.1=3"], ["ideal_dcg.2=5"], ["ndcg.1=0,2=4"]]),
])
def test_dcg_family_with_parameters_together(trec_eval_bin, together, alone, capsys):  # noqa: F811
    # trec_eval crashes (its three measures share one parameter table); here each takes its own
    files = [TE_DATA / "qrels.test", TE_DATA / "results.test"]
    rc, out, _ = _trec_eval(trec_eval_bin, ["-q", *_m(*together), *files])
    assert rc != 0 and out == []
    want = []
    for specs in alone:
        want_rc, lines, _ = _trec_eval(trec_eval_bin, ["-q", *_m(*specs), *files])
        assert want_rc == 0
        want.append(lines)
    rc, got, err = _rankjit(["-q", *_m(*together), *files], capsys)
    assert rc == 0, err
    # trec_eval prints per query the measures in its table order (dcg, ideal_dcg, ndcg), then the summaries
    n_q = len(want[0]) - 1
    per_query = [lines[q] for q in range(n_q) for lines in want]
    assert got == per_query + [lines[-1] for lines in want]


@pytest.mark.parametrize("flags", [["-c"], ["-c", "-J"], ["-c", "-M0"], ["-c", "-M1", "-N", "500"]], ids=" ".join)
@pytest.mark.parametrize("seed", [0, 2, 5])
def test_stand_in_document_of_named_measures(trec_eval_bin, tmp_path, seed, flags, capsys):  # noqa: F811
    # -c: trec_eval.c resets the values of "utility" and "rbp_resid" for a query the run lacks,
    # by name: with parameters (utility_1,-2,0.5,0.25) they keep the value of the stand-in document
    qrels, run = _odd_files(tmp_path, seed, True)
    measures = _m("utility.1,-2,0.5,0.25", "rbp_resid.p=0.5", "relstring.2", "yaap")
    _same(trec_eval_bin, ["-q", *flags, *measures, qrels, run], capsys, at_least=40)
    _same(trec_eval_bin, ["-q", *flags, *_m("utility", "rbp_resid", "relstring"), qrels, run], capsys, at_least=40)


@needs_te
def test_num_nonjudged_ret_is_not_a_trec_eval_measure(trec_eval_bin, capsys):  # noqa: F811 (the fixture)
    files = [TE_DATA / "qrels.test", TE_DATA / "results.test"]
    rc, out, err = _trec_eval(trec_eval_bin, [*_m("num_nonjudged_ret"), *files])
    assert rc != 0 and out == [] and "illegal measure 'num_nonjudged_ret'" in err
    rc, out, err = _rankjit([*_m("num_nonjudged_ret"), *files], capsys)
    assert rc == 1 and out == []
    assert err == "rankjit trec_eval: error: unknown trec_eval measure 'num_nonjudged_ret' (see trec_eval -h for " \
                  "the names)\n"


def _dcg(gains):
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g != 0)


@needs_te
def test_gains_less_than_1_apart_exact_order(trec_eval_bin, capsys):  # noqa: F811 (the fixture)
    # gains 0, 0.5, 0.9 (levels 0, 1, 2): trec_eval's comparison calls them all equal and its ideal
    # ranking stops at level 0's gain 0 (ideal_dcg 0); rankjit's ideal takes the 0.5 gains of the
    # relevant documents (qrels.test is binary), as DCG's definition does
    qrels, run = TE_DATA / "qrels.test", TE_DATA / "results.test"
    spec = "ideal_dcg.1=0.5,2=0.9"
    rc, want, _ = _trec_eval(trec_eval_bin, ["-q", *_m(spec), qrels, run])
    assert rc == 0 and {line.split("\t")[2] for line in want} == {"0.0000"}
    rc, got, err = _rankjit(["-q", *_m(spec), qrels, run], capsys)
    assert rc == 0, err
    judged = {}
    for line in qrels.read_text().splitlines():
        q, _, _, y = line.split()
        judged.setdefault(q, []).append(int(y))
    reference = {q: _dcg(sorted([0.5] * ys.count(1), reverse=True)) for q, ys in judged.items()}
    got_values = {line.split("\t")[1]: line.split("\t")[2] for line in got}
    assert got_values == {**{q: f"{v:6.4f}" for q, v in reference.items()},
                          "all": f"{math.fsum(reference.values()) / len(reference):6.4f}"}
    assert min(reference.values()) > 0
    # trec_eval_order=True: trec_eval's own order, its values
    al = align(read_trec_run(run), read_trec_qrels(qrels))
    assert L.ideal_dcg(al, [(1, 0.5), (2, 0.9)], trec_eval_order=True).tolist() == [0.0] * al.n_queries
    assert L.ndcg(al, [(1, 0.5), (2, 0.9)], trec_eval_order=True).tolist() == [0.0] * al.n_queries


def test_dcg_functions_by_hand():
    # ranking a (2), u (absent), b (1), n (-1); also judged: c (2), z (0)
    qrels = read_trec_qrels(b"q 0 a 2\nq 0 b 1\nq 0 c 2\nq 0 n -1\nq 0 z 0\n")
    run = read_trec_run(b"q Q0 a 1 4 t\nq Q0 u 2 3 t\nq Q0 b 3 2 t\nq Q0 n 4 1 t\n")
    al = align(run, qrels)
    dcg, ideal = L.dcg_and_ideal(al)
    assert dcg.tolist() == [2.0 + 1.0 / math.log2(4)]
    assert ideal.tolist() == [2.0 + 2.0 / math.log2(3) + 1.0 / math.log2(4)]
    np.testing.assert_allclose(L.ndcg(al), dcg / ideal, rtol=0, atol=0)
    # level -1: absent from the qrels (u), -2: judged below 0 (n); neither enters the ideal
    gains = [(-1, 3.0), (-2, 5.0), (1, 0.0)]
    assert L.dcg(al, gains).tolist() == [2.0 + 3.0 / math.log2(3) + 5.0 / math.log2(5)]
    assert L.ideal_dcg(al, gains).tolist() == [2.0 + 2.0 / math.log2(3)]


def test_yaap_by_hand():
    # relevant at ranks 1 and 3 of 4, R = 3: s = 1/1 + 2/3; yaap = log((1 + s) / (1 + 3 - s))
    qrels = read_trec_qrels(b"q 0 a 1\nq 0 b 0\nq 0 c 2\nq 0 x 1\nr 0 y 1\n")
    run = read_trec_run(b"q Q0 a 1 4 t\nq Q0 b 2 3 t\nq Q0 c 3 2 t\nq Q0 d 4 1 t\nr Q0 y 1 1 t\n")
    al = align(run, qrels)
    counts = C.RankedRelevance(al.judged & (al.labels >= 1), al.offsets, al.n_relevant)
    s = 1.0 + 2.0 / 3.0
    np.testing.assert_allclose(C.yaap(counts), [math.log((1 + s) / (4 - s)), math.log(2.0 / 1.0)], rtol=1e-15)


# ---- -Z ---------------------------------------------------------------------------------------------


@needs_te
def test_z_scores_of_the_suite(capsys):
    # out.test.aqZ: trec_eval -q -m all_trec -Z zscores_file qrels.test results.test, every line
    args = ["-q", *_m("all_trec"), "-Z", TE_DATA / "zscores_file", TE_DATA / "qrels.test", TE_DATA / "results.test"]
    rc, got, err = _rankjit(args, capsys)
    assert rc == 0, err
    want = (TE_DATA / "out.test.aqZ").read_text().splitlines()
    assert len(want) > 380 and got == want


@needs_te
@pytest.mark.parametrize("options", [["-q", "-c"], ["-c"], ["-q", "-c", "-M100"], ["-n", "-q", "-c", "-M5"]],
                         ids=" ".join)
def test_z_scores_of_the_suite_complete(trec_eval_bin, options, capsys):  # noqa: F811 (the fixture)
    # -c: num_rel's summary stays the count of the qrels, gm_map's is exp of the mean z-score
    # (yaap would come after every measure of the file's last query: trec_eval reads past its table)
    args = [*options, *_m("all_trec", "dcg", "ideal_dcg"), "-Z", TE_DATA / "zscores_file",
            TE_DATA / "qrels.test", TE_DATA / "results.trunc"]
    want = _same(trec_eval_bin, args, capsys, at_least=40)
    assert any(line.startswith("Znum_rel ") and "\tall\t" in line for line in want) or "-n" in options


def _zscores_file(path, rng, names, qids):
    """A z-scores file for ``names`` x ``qids`` (byte order): means and standard deviations at
    random (std 0 too), lines in random order, some queries and (query, measure) pairs left out.

    trec_eval crashes when its searches go past the end of its table (a query after the last
    one of the file, a measure after the last one of the last query): the last query of the
    file holds every name and comes after every query evaluated.
    """
    names = sorted(set(names), key=str.encode)
    lines = []
    last = max(qids, key=str.encode) + "~"  # after every query id in byte order
    for q in sorted(qids, key=str.encode) + [last]:
        if q != last and rng.random() < 0.15:
            continue  # query absent: every value -1000000
        for name in names:
            if q != last and rng.random() < 0.25:
                continue
            mean = rng.choice([rng.uniform(-1, 3), float(rng.randint(0, 50)), 0.0, 1.0])
            std = rng.choice([rng.uniform(0.01, 2), rng.uniform(0.01, 2), -rng.uniform(0.01, 2), 0.0])
            lines.append(f"{q}{rng.choice([' ', chr(9), '  '])}{name} {mean!r} {std!r}")
    rng.shuffle(lines)
    path.write_text("\n".join(lines) + rng.choice(["", "\n"]))
    return path


#: the names trec_eval keeps a value of per query (the printed names, and those printed in the summary only)
Z_MEASURES = _m("official", "num_nonrel_judged_ret", "yaap", "dcg", "ideal_dcg", "ndcg", "relstring", "P.3",
                "gm_bpref", "success.1,2", "unj", "utility.1,-2,0.5,0")


def _measure_names(binary, args):
    rc, lines, err = _trec_eval(binary, ["-q", *args])
    assert rc == 0, err
    return {line.split("\t")[0].strip() for line in lines} | {"num_q", "runid", "gm_map", "gm_bpref"}


@pytest.mark.parametrize("seed", range(8))
def test_z_scores_random(trec_eval_bin, tmp_path, seed, capsys):  # noqa: F811 (the fixture)
    rng = random.Random(seed)
    qrels, run = random_files(tmp_path, seed)
    flags = rng.choice([[], ["-q"], ["-q", "-c"], ["-q", "-J"], ["-q", "-l2"], ["-c", "-M5"]])
    names = _measure_names(trec_eval_bin, [*flags, *Z_MEASURES, qrels, run])
    qids = sorted({line.split()[0] for line in qrels.read_text().splitlines()})
    zfile = _zscores_file(tmp_path / "z", rng, names, qids)
    want = _same(trec_eval_bin, [*flags, *Z_MEASURES, "-Z", zfile, qrels, run], capsys, at_least=20)
    assert any(line.endswith("\t-1000000.0000") for line in want) or "-q" not in flags


@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
@needs_web
@pytest.mark.parametrize("flags", [["-q"], pytest.param(["-q", "-J", "-M50"], marks=pytest.mark.slow)], ids=" ".join)
def test_z_scores_web2012(trec_eval_bin, tmp_path, flags, capsys):  # noqa: F811 (the fixture)
    qrels, run = WEB / "qrels.adhoc.txt", WEB / "run.rm.cata.txt"
    measures = _m("all_trec", "yaap", "ndcg.-1=1,3=5")
    # rbp asked with other measures: trec_eval's m_rbp.c reads uninitialised values (test_rbp_reference.py),
    # so the file gives it no mean: -1000000 whatever the value
    names = [n for n in _measure_names(trec_eval_bin, [*flags, *measures, qrels, run]) if n != "rbp"]
    qids = sorted({line.split()[0] for line in qrels.read_text().splitlines()})
    zfile = _zscores_file(tmp_path / "z", random.Random(7), names, qids)
    want = _same(trec_eval_bin, [*flags, *measures, "-Z", zfile, qrels, run], capsys, at_least=50 * 40)
    assert {line.split("\t")[2] for line in want if line.startswith("Zrbp ")} == {"-1000000.0000"}


@needs_te
def test_z_score_search_reads_into_the_next_query(trec_eval_bin, tmp_path, capsys):  # noqa: F811 (the fixture)
    # trec_eval's binary search over a query's measures goes one entry past them: 301 holds P_5 only,
    # so "map" (after P_5 in byte order) is compared with 302's first entry, map, and takes its mean
    # and std; num_ret is not found for 301, P_5 not for 302
    zfile = tmp_path / "z"
    zfile.write_text("301 P_5 0.1 0.2\n302 map 0.2 0.1\n302 num_ret 500 100\n"
                     "303 P_5 0.3 0.1\n303 map 0.3 0.2\n303 num_ret 1000 0\n")
    args = ["-q", *_m("map", "num_ret", "P.5"), "-Z", zfile, TE_DATA / "qrels.test", TE_DATA / "results.test"]
    want = _same(trec_eval_bin, args, capsys, at_least=12)
    lines = {(line.split()[0], line.split()[1]): float(line.split()[2]) for line in want}
    assert lines["Znum_ret", "301"] == lines["ZP_5", "302"] == -1000000.0
    ap = _plain_values(trec_eval_bin, "map")
    assert abs(lines["Zmap", "301"] - (ap["301"] - 0.2) / 0.1) < 1e-3  # 302's mean and std (AP printed to 1e-4)
    assert abs(lines["Zmap", "302"] - (ap["302"] - 0.2) / 0.1) < 1e-3
    assert abs(lines["Zmap", "303"] - (ap["303"] - 0.3) / 0.2) < 1e-3
    assert lines["Znum_ret", "303"] == (0.0 if _plain_values(trec_eval_bin, "num_ret")["303"] == 1000 else -1e6)


def _plain_values(binary, measure):
    """trec_eval's per-query values of ``measure`` on its test files, without -Z."""
    rc, lines, _ = _trec_eval(binary, ["-q", *_m(measure), TE_DATA / "qrels.test", TE_DATA / "results.test"])
    assert rc == 0
    return {line.split()[1]: float(line.split()[2]) for line in lines}


@needs_te
def test_z_score_past_the_end_crashes_trec_eval(trec_eval_bin, tmp_path, capsys):  # noqa: F811 (the fixture)
    # 303 comes after the file's last query: trec_eval reads past its table and crashes; rankjit
    # finds no mean (-1000000), as for any query the file lacks
    zfile = tmp_path / "z"
    zfile.write_text("301 map 0.5 0.25\n302 map 0.5 0.25\n")
    args = ["-q", *_m("map", "num_ret"), "-Z", zfile, TE_DATA / "qrels.test", TE_DATA / "results.test"]
    rc, out, _ = _trec_eval(trec_eval_bin, args)
    assert rc != 0 and out == []
    rc, got, err = _rankjit(args, capsys)
    assert rc == 0, err
    assert [line[:23] for line in got] == ["Znum_ret               ", "Zmap                   "] * 4
    values = {(line.split()[0], line.split()[1]): float(line.split()[2]) for line in got}
    ap = _plain_values(trec_eval_bin, "map")
    z = [(ap[q] - 0.5) / 0.25 for q in ("301", "302")]
    assert abs(values["Zmap", "301"] - z[0]) < 1e-3 and abs(values["Zmap", "302"] - z[1]) < 1e-3
    assert values["Zmap", "303"] == -1e6
    assert [values["Znum_ret", q] for q in ("301", "302", "303", "all")] == [-1e6, -1e6, -1e6, -3e6]
    assert abs(values["Zmap", "all"] - (z[0] + z[1] - 1e6) / 3) < 1e-3


def test_z_scores_by_hand():
    # ZScores.convert: (value - mean) / std; std 0: 0 at the mean, else -1000000; a pair absent: -1000000
    z = C.ZScores([("a", "map", 0.5, 0.25), ("a", "P_5", 0.2, 0.0), ("b", "map", 0.1, -0.5)])
    assert z.convert(["a", "b", "c"], "map", [1.0, 0.6, 0.3]).tolist() == [2.0, -1.0, -1000000.0]
    assert z.convert(["a", "a"], "P_5", [0.2, 0.4]).tolist() == [0.0, -1000000.0]
    results = [("num_ret", "int", np.array([10, 20])), ("gm_map", "gm", np.array([0.0, math.e])),
               ("relstring", "string", ["10", "01"]), ("runid", "summary", None)]
    table = C.ZScores([("a", "num_ret", 5.0, 5.0), ("b", "num_ret", 30.0, 5.0), ("a", "gm_map", 1.0, 2.0),
                       ("b", "gm_map", 1.0, 2.0)])
    out = C.zscore_results(results, ["a", "b"], table, 0.00001)
    assert out[0][2].tolist() == [1.0, -2.0]
    assert out[1][2].tolist() == [(math.log(0.00001) - 1.0) / 2.0, 0.0]  # log(max(value, floor)), then z
    assert out[2:] == results[2:]


MALFORMED = [
    (b"301 map 0.5 0.1\n301 P_5 0.5\n", r"z: line 2: expected 4 fields 'qid measure mean std_dev', found 3 "
                                        r"field\(s\): '301 P_5 0\.5'"),
    (b"301 map 0.5 0.1 7\n", r"z: line 1: expected 4 fields 'qid measure mean std_dev', found 5 field\(s\)"),
    (b"301 map 0.5 0.1\n\n302 map 0.5 0.1\n", r"z: line 2: expected 4 fields .*found 0 field\(s\): ''"),
    (b"301 map abc 0.1\n", r"z: line 1: mean field 'abc' is not a number: '301 map abc 0\.1'"),
    (b"301 map 0.5 0.1x\n", r"z: line 1: std_dev field '0\.1x' is not a number"),
    (b"301 map 0.5 1_0\n", r"z: line 1: std_dev field '1_0' is not a number"),
    (b"301 map 0.5 0.1\n302 map 1 1\n301  map 0.2 0.1\n", r"z: lines 1 and 3: measure 'map' of query '301' given "
                                                          r"twice"),
    (b"301 map 0.5\x000.1\n", r"z: line 1: a NUL byte in the z-scores file"),
    (b"", r"z: the z-scores file is empty"),
]


@needs_te
@pytest.mark.parametrize("content, message", MALFORMED, ids=[m[:24] for _, m in MALFORMED])
def test_malformed_z_scores_file(trec_eval_bin, tmp_path, content, message, capsys):  # noqa: F811 (the fixture)
    zfile = tmp_path / "z"
    zfile.write_bytes(content)
    args = ["-q", *_m("map"), "-Z", zfile, TE_DATA / "qrels.test", TE_DATA / "results.test"]
    rc, out, err = _rankjit(args, capsys)
    assert rc == 1 and out == []
    assert len(err.splitlines()) == 1 and re.fullmatch(r"rankjit trec_eval: error: \S*" + message + r".*\n", err), err
    if b"x" not in content and b"abc" not in content and b"_" not in content and content.count(b"301 ") < 2:
        # trec_eval refuses these too (it reads numbers with atof, keeps one of two lines)
        assert _trec_eval(trec_eval_bin, args)[0] != 0


def test_missing_z_scores_file(tmp_path, capsys):
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1.0 t\n")
    rc, out, err = _rankjit(["-Z", tmp_path / "nothere", tmp_path / "q", tmp_path / "r"], capsys)
    assert rc == 1 and out == []
    assert re.fullmatch(r"rankjit trec_eval: error: \S*nothere: no such z-scores file\n", err), err
