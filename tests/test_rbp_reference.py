"""Tests of the plain-Python RBP reference (``reference.rbp_on_ranking``, ``rbp_residual_on_ranking``).

Three layers:

* hand-derived cases: every expected value is worked out in a comment from
  ``RBP = (1 - p) * sum_r g_r p^(r-1)`` and ``resid = (1 - p) * sum_{unjudged r} p^(r-1) + p^d``;
* properties (bounds, monotonicity in k, RBP as a DCG with a geometric discount, the
  residual as the room left by the unjudged documents and the tail);
* the real tools, where present: NIST trec_eval's ``rbp`` / ``rbp_resid`` (built by
  ``../shared/tools/build-trec_eval``), ir_measures' ``RBP(rel=...)`` (cwl_eval provider),
  ranx's ``rbp`` and trectools' ``get_rbp``, on trec_eval's own test files and on random data.
  Each tool's reading of the labels is spelled out next to its test.
"""
from __future__ import annotations

import collections
import itertools
import logging
import math
import os
import random
import subprocess
from pathlib import Path

import pytest
import reference as R
from hypothesis import given
from hypothesis import strategies as st

SHARED = Path(__file__).parents[2] / "shared"  # ../shared, as the other trec_eval tests find it
TE_DATA = SHARED / "data" / "trec_eval"
WEB = SHARED / "data" / "web2012"
BUILD_TREC_EVAL = SHARED / "tools" / "build-trec_eval"
needs_te_data = pytest.mark.skipif(not TE_DATA.is_dir(), reason=f"trec_eval test data not found at {TE_DATA} (../shared/data)")

close = lambda a, b: math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


# ---------------------------------------------------------------------------------------
# hand-derived cases


@pytest.mark.parametrize("ranked, p, kw, want", [
    # binary labels (largest grade 1: g = y): 0.5 * (1 + 0.5^2) = 0.625
    ([1, 0, 1], 0.5, {}, 0.625),
    # one relevant document at rank 2: 0.2 * 0.8 = 0.16
    ([0, 1], 0.8, {}, 0.16),
    # graded, max_grade=2: g = 1, 0, 0.5 -> 0.5 * (1 + 0 + 0.5 * 0.25) = 0.5625
    ([2, 0, 1], 0.5, {"max_grade": 2}, 0.5625),
    # default max_grade = largest label of the ranking (3): g = 1, 1/3 -> 0.5 * (1 + 1/6) = 7/12
    ([3, 1], 0.5, {}, 7 / 12),
    # a fixed scale above the ranking's labels: max_grade=4, g = 0.75, 0.25 -> 0.5 * (0.75 + 0.125) = 0.4375
    ([3, 1], 0.5, {"max_grade": 4}, 0.4375),
    # binary at rel=2: g = 1, 0, 1 -> 0.5 * (1 + 0.25) = 0.625
    ([2, 1, 3], 0.5, {"rel": 2}, 0.625),
    # rel=1 on grades: every grade >= 1 counts 1: 0.5 * (1 + 0.5 + 0.25) = 0.875
    ([2, 1, 3], 0.5, {"rel": 1}, 0.875),
    # all relevant: (1 - p) * (1 + p + p^2) = 1 - p^3 = 0.875
    ([1, 1, 1], 0.5, {}, 0.875),
    # cutoff k=2: 0.5 * (1 + 0.5) = 0.75 (rank 3 ignored, no renormalisation)
    ([1, 1, 1], 0.5, {"k": 2}, 0.75),
    # k beyond the ranking is the whole ranking: 0.875
    ([1, 1, 1], 0.5, {"k": 10}, 0.875),
    # p = 0: only rank 1 counts (p^0 = 1): g_1 = 1
    ([1, 0, 1], 0.0, {}, 1.0),
    # p = 1: the factor (1 - p) makes every ranking 0
    ([1, 1, 1], 1.0, {}, 0.0),
    # unjudged (None) has gain 0: 0.5 * (0 + 1 * 0.5) = 0.25
    ([None, 1], 0.5, {}, 0.25),
    # NaN is unjudged too; default max_grade ignores it: g = 0, 1 -> 0.25
    ([float("nan"), 1], 0.5, {}, 0.25),
    # gain table, used as is: g = 1, 0.25 -> 0.5 * (1 + 0.25 * 0.5) = 0.5625
    ([2, 1], 0.5, {"gain": [0.0, 0.25, 1.0]}, 0.5625),
    # gain="linear" (ranx, trectools): g = y, may exceed 1: 0.5 * (3 + 1 * 0.5) = 1.75
    ([3, 1], 0.5, {"gain": "linear"}, 1.75),
    # empty ranking: 0
    ([], 0.9, {}, 0.0),
    # nothing relevant: 0
    ([0, 0, 0], 0.9, {}, 0.0),
])
def test_rbp_hand_cases(ranked, p, kw, want):
    assert close(R.rbp_on_ranking(ranked, p, **kw), want)


@pytest.mark.parametrize("ranked, p, kw, want", [
    # [unjudged, 1]: (1 - p) * p^0 = 0.5 for rank 1, tail p^2 = 0.25 -> 0.75 (RBP 0.25 + 0.75 = 1: anything possible above)
    ([None, 1], 0.5, {}, 0.75),
    # fully judged: only the tail p^n = 0.25
    ([1, 0], 0.5, {}, 0.25),
    # ... which trec_eval reports as 0
    ([1, 0], 0.5, {"zero_if_all_judged": True}, 0.0),
    # trec_eval keeps the tail once some document is unjudged: 0.5 * 0.5 + 0.25 = 0.5
    ([1, None], 0.5, {"zero_if_all_judged": True}, 0.5),
    # [unjudged, 0, 0]: 0.5 * 1 + tail 0.5^3 = 0.625
    ([None, 0, 0], 0.5, {}, 0.625),
    # same at k=2: 0.5 + 0.5^2 = 0.75
    ([None, 0, 0], 0.5, {"k": 2}, 0.75),
    # same at k=1: only an unjudged document was read: 0.5 + 0.5 = 1
    ([None, 0, 0], 0.5, {"k": 1}, 1.0),
    # empty ranking: nothing read, the tail is p^0 = 1; trec_eval says 0
    ([], 0.9, {}, 1.0),
    ([], 0.9, {"zero_if_all_judged": True}, 0.0),
    # max_gain scales the whole residual: 2 * 0.75 = 1.5
    ([None, 1], 0.5, {"max_gain": 2.0}, 1.5),
    # p = 0.9, [0, unjudged, 1]: 0.1 * 0.9 + 0.9^3 = 0.09 + 0.729 = 0.819
    ([0, None, 1], 0.9, {}, 0.819),
])
def test_residual_hand_cases(ranked, p, kw, want):
    assert close(R.rbp_residual_on_ranking(ranked, p, **kw), want)


@pytest.mark.parametrize("call", [
    lambda: R.rbp_on_ranking([1], 1.5),                       # p outside [0, 1]
    lambda: R.rbp_on_ranking([1], -0.1),
    lambda: R.rbp_on_ranking([1], 0.5, k=0),                  # k <= 0
    lambda: R.rbp_on_ranking([3], 0.5, max_grade=2),          # label above the scale
    lambda: R.rbp_on_ranking([-1, 1], 0.5),                   # negative label: the caller decides
    lambda: R.rbp_on_ranking([1], 0.5, rel=1, max_grade=2),   # two gain conventions at once
    lambda: R.rbp_on_ranking([1], 0.5, rel=1, gain=[0, 1]),
    lambda: R.rbp_on_ranking([1], 0.5, gain=[0, 1], max_grade=1),
    lambda: R.rbp_residual_on_ranking([1], 2.0),
    lambda: R.rbp_residual_on_ranking([1], 0.5, k=-1),
])
def test_bad_parameters(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------------------------------
# properties

labels_st = st.lists(st.one_of(st.none(), st.integers(0, 4)), max_size=25)
p_st = st.floats(0.0, 0.99)
k_st = st.one_of(st.none(), st.integers(1, 30))


@given(labels_st, p_st, k_st)
def test_bounds(ranked, p, k):
    d = len(ranked) if k is None else min(k, len(ranked))
    v = R.rbp_on_ranking(ranked, p, max_grade=4, k=k)
    res = R.rbp_residual_on_ranking(ranked, p, k=k)
    assert -1e-15 <= v <= 1.0 - p ** d + 1e-12
    assert p ** d - 1e-15 <= res <= 1.0 + 1e-12
    assert v + res <= 1.0 + 1e-12


@given(labels_st, p_st, k_st)
def test_residual_is_the_room_left(ranked, p, k):
    """Judging every unjudged document at the top grade raises RBP by resid - p^d, exactly."""
    d = len(ranked) if k is None else min(k, len(ranked))
    best = [4 if y is None else y for y in ranked]
    worst = [0 if y is None else y for y in ranked]
    v = R.rbp_on_ranking(ranked, p, max_grade=4, k=k)
    res = R.rbp_residual_on_ranking(ranked, p, k=k)
    assert math.isclose(R.rbp_on_ranking(worst, p, max_grade=4, k=k), v, abs_tol=1e-12)
    assert math.isclose(R.rbp_on_ranking(best, p, max_grade=4, k=k), v + res - p ** d, abs_tol=1e-12)


@given(labels_st, p_st)
def test_monotone_in_k(ranked, p):
    """RBP@k never falls as k grows; resid@k and RBP@k + resid@k never rise."""
    n = len(ranked)
    vals = [R.rbp_on_ranking(ranked, p, max_grade=4, k=k) for k in range(1, n + 2)]
    res = [R.rbp_residual_on_ranking(ranked, p, k=k) for k in range(1, n + 2)]
    for a, b in itertools.pairwise(vals):
        assert b >= a - 1e-15
    for a, b in itertools.pairwise(res):
        assert b <= a + 1e-15
    for (va, ra), (vb, rb) in itertools.pairwise(zip(vals, res)):
        assert vb + rb <= va + ra + 1e-12


@given(st.lists(st.integers(0, 4), max_size=25), p_st, k_st, st.sampled_from([None, 1, 2, 3]))
def test_rbp_is_a_dcg_with_geometric_discount(ranked, p, k, rel):
    """RBP = (1 - p) * DCG with gain table g and discount p^(r-1): the existing DCG reference agrees."""
    if rel is None:
        m = max([1] + ranked)
        table = [y / m for y in range(m + 1)]
    else:
        table = [1.0 if y >= rel else 0.0 for y in range(5)]
    disc = [p ** (r - 1) for r in range(1, len(ranked) + 1)]
    dcg = R.measure_on_ranking("DCG", ranked, ranked, k, gain=table, discount=disc)
    assert math.isclose(R.rbp_on_ranking(ranked, p, rel=rel, k=k), (1 - p) * dcg, rel_tol=1e-12, abs_tol=1e-15)


# ---------------------------------------------------------------------------------------
# files: TREC qrels and runs, trec_eval's ranking


def read_qrels(path):
    q = collections.defaultdict(dict)
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            f = line.split()
            q[f[0]][f[2]] = int(f[3])
    return q


def read_run(path):
    """query -> docnos in trec_eval's order: score descending, then docno descending."""
    r = collections.defaultdict(list)
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            f = line.split()
            r[f[0]].append((float(f[4]), f[2]))
    return {qid: [d for _, d in sorted(docs, reverse=True)] for qid, docs in r.items()}


def random_files(tmp_path, seed, n_queries=12):
    """Random qrels + run: grades -1..4 (some queries binary, some all 0), unjudged documents,
    tied scores, rankings of 0..60 documents plus judged documents the run misses."""
    rng = random.Random(seed)
    qlines, rlines = [], []
    for q in range(n_queries):
        qid = f"q{q}"
        n = rng.choice([1, 3, 10, 40, 60])
        top = rng.choice([0, 1, 2, 4])
        docs = [f"d{q}_{i}" for i in range(n + rng.randint(0, 10))]
        judged = 0
        for i, d in enumerate(docs):
            if i < n and rng.random() < 0.3 and judged:
                continue  # unjudged (not in the qrels); keep at least one judgment per query
            y = -1 if rng.random() < 0.1 else rng.randint(0, top)
            qlines.append(f"{qid} 0 {d} {y}")
            judged += 1
        for i, d in enumerate(docs[:n]):
            rlines.append(f"{qid} Q0 {d} {i + 1} {rng.choice([rng.random(), round(rng.random(), 1)]):.6f} rnd")
    rng.shuffle(rlines)
    qp, rp = tmp_path / f"qrels.{seed}", tmp_path / f"run.{seed}"
    qp.write_text("\n".join(qlines) + "\n")
    rp.write_text("\n".join(rlines) + "\n")
    return qp, rp


# ---------------------------------------------------------------------------------------
# trec_eval: rbp and rbp_resid (m_rbp.c, m_rbp_resid.c)
#
# * gain of a judged grade y >= 0: y / max(1, L), L = largest grade judged for the query
#   (retrieved or not); a document absent from the qrels or judged < 0: gain 0;
# * rbp_resid: documents absent from the qrels or judged < 0 are unjudged; 0 when none is;
# * no cutoff; -M n keeps the top n documents; -J drops the unjudged before ranking;
# * m_rbp.c reads two uninitialised doubles (min, max); with a -O0 build and rbp alone in
#   the invocation they hold stack pointers (positive denormals) and do no harm, so rbp is
#   always asked alone here.  Values are printed with 4 decimals.


@pytest.fixture(scope="module")
def trec_eval_rbp(tmp_path_factory):
    path = os.environ.get("RANKJIT_TREC_EVAL")
    if not path:
        if not BUILD_TREC_EVAL.is_file():
            pytest.skip(f"{BUILD_TREC_EVAL} not found (../shared absent): no trec_eval to compare with")
        try:
            proc = subprocess.run(["bash", str(BUILD_TREC_EVAL)], check=False, capture_output=True, text=True,
                                  timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"could not build trec_eval with {BUILD_TREC_EVAL}: {exc}")
        path = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        if proc.returncode != 0 or not os.access(path, os.X_OK):
            pytest.skip(f"could not build trec_eval with {BUILD_TREC_EVAL} (needs cc and make): {proc.stderr.strip()}")
    d = tmp_path_factory.mktemp("te_probe")
    (d / "q").write_text("1 0 a 1\n")
    (d / "r").write_text("1 Q0 a 1 1.0 x\n")
    probe = subprocess.run([path, "-m", "rbp", str(d / "q"), str(d / "r")], check=False, capture_output=True, text=True)
    if probe.returncode != 0 or not probe.stdout.startswith("rbp"):
        pytest.skip(f"this trec_eval ({path}) has no rbp measure: {probe.stderr.strip()}")
    return path


def run_te(binary, measure, qrels, run, flags=()):
    out = subprocess.run([binary, "-q", *flags, "-m", measure, str(qrels), str(run)],
                         check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    vals = {}
    for line in out.stdout.splitlines():
        _, qid, v = line.split()
        vals[qid] = float(v)
    return vals


def te_expected(qrels, run, p, flags):
    """Per query (rbp, rbp_resid) from the reference, under trec_eval's reading of the files."""
    out = {}
    k = None
    for f in flags:
        if f.startswith("-M"):
            k = int(f[2:])
    for qid, docs in run.items():
        if qid not in qrels:
            continue  # trec_eval ignores run queries without judgments
        judg = qrels[qid]
        labels = [judg[d] if judg.get(d, -1) >= 0 else None for d in docs]
        if "-J" in flags:
            labels = [y for y in labels if y is not None]
        top = max([1] + [y for y in judg.values() if y >= 0])
        out[qid] = (R.rbp_on_ranking(labels, p, max_grade=top, k=k),
                    R.rbp_residual_on_ranking(labels, p, k=k, zero_if_all_judged=True))
    return out


def check_against_te(binary, qrels_path, run_path, p, flags):
    name = "rbp" if p is None else f"rbp.p={p}"
    rname = "rbp_resid" if p is None else f"rbp_resid.p={p}"
    got = run_te(binary, name, qrels_path, run_path, flags)
    got_r = run_te(binary, rname, qrels_path, run_path, flags)
    want = te_expected(read_qrels(qrels_path), read_run(run_path), 0.9 if p is None else p, flags)
    assert set(got) == set(want) | {"all"}
    tol = 5e-5 + 1e-9  # 4 printed decimals
    for qid, (v, res) in want.items():
        assert abs(got[qid] - v) <= tol, (qid, "rbp", got[qid], v)
        assert abs(got_r[qid] - res) <= tol, (qid, "rbp_resid", got_r[qid], res)
    assert abs(got["all"] - math.fsum(v for v, _ in want.values()) / len(want)) <= tol
    assert abs(got_r["all"] - math.fsum(r for _, r in want.values()) / len(want)) <= tol


@needs_te_data
@pytest.mark.parametrize("flags", [(), ("-M10",), ("-J",), ("-l2",)])
@pytest.mark.parametrize("p", [None, 0.5, 0.8, 0.95])
@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.rel_level"])
def test_trec_eval_suite_files(trec_eval_rbp, qrels, p, flags):
    """-l (relevance level) is read by neither measure: same values as without it."""
    check_against_te(trec_eval_rbp, TE_DATA / qrels, TE_DATA / "results.test", p, flags)


@pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")
@pytest.mark.parametrize("p", [None, 0.8])
@pytest.mark.parametrize("run", ["run.ql.cata.txt", "run.rm.cata.txt"])
def test_trec_eval_web2012(trec_eval_rbp, run, p):
    """Grades -2 (spam) .. 4: the -2 documents are unjudged for rbp_resid, and 4 is the top gain."""
    check_against_te(trec_eval_rbp, WEB / "qrels.adhoc.txt", WEB / run, p, ())


@pytest.mark.parametrize("seed", range(6))
def test_trec_eval_random(trec_eval_rbp, tmp_path, seed):
    qp, rp = random_files(tmp_path, seed)
    rng = random.Random(1000 + seed)
    p = rng.choice([0.3, 0.5, 0.8, 0.9, 0.95, 0.99])
    flags = rng.choice([(), ("-M5",), ("-J",)])
    check_against_te(trec_eval_rbp, qp, rp, p, flags)


# ---------------------------------------------------------------------------------------
# ir_measures: RBP(p=, rel=) through its cwl_eval provider
#
# * rel is required there (RBP without rel has no provider in the default pipeline) and
#   no cutoff is accepted; judged grade y: y < 0 -> 0, then gain [y >= rel]; unjudged: 0;
# * cwl's Ranking pads or cuts the ranking to 1000 ranks and its weights sum to 1 over
#   them: value = (1 - p) / (1 - p^1000) * sum_{r <= 1000} g_r p^(r-1).


def _irm():
    irm = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl", reason="ir_measures' RBP needs cwl-eval (pip install ir-measures[cwl_eval])")
    logging.getLogger("ir_measures.cwl_eval").setLevel("ERROR")
    return irm


def irm_check(irm, qrels, run, p, rel):
    # trec_eval's order, handed over as strictly decreasing scores (no tie rule involved)
    scored = {q: {d: float(-i) for i, d in enumerate(docs)} for q, docs in run.items()}
    got = {m.query_id: m.value for m in irm.cwl_eval.iter_calc([irm.RBP(p=p, rel=rel)], qrels, scored)}
    assert got
    for qid, v in got.items():
        labels = [max(qrels[qid][d], 0) if d in qrels[qid] else None for d in run[qid]]
        want = R.rbp_on_ranking(labels, p, rel=rel, k=1000) / (1.0 - p ** 1000)
        assert math.isclose(v, want, rel_tol=1e-11, abs_tol=1e-15), (qid, v, want)


@needs_te_data
@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("p", [0.5, 0.8, 0.9, 0.95, 0.999])
@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.rel_level"])
def test_ir_measures_suite_files(qrels, p, rel):
    irm = _irm()
    irm_check(irm, read_qrels(TE_DATA / qrels), read_run(TE_DATA / "results.test"), p, rel)


@pytest.mark.parametrize("seed", range(4))
def test_ir_measures_random(tmp_path, seed):
    irm = _irm()
    qp, rp = random_files(tmp_path, seed)
    qrels, run = read_qrels(qp), read_run(rp)
    # one long ranking, to cross cwl's 1000-rank window
    run["long"] = [f"L{i}" for i in range(1300)]
    qrels["long"] = {f"L{i}": (1 if i % 7 == 0 else 0) for i in range(0, 1300, 3)}
    rng = random.Random(seed)
    irm_check(irm, qrels, run, rng.choice([0.5, 0.9, 0.99, 0.999]), rng.choice([1, 2]))


# ---------------------------------------------------------------------------------------
# ranx: rbp (metrics/rank_biased_precision.py)
#
# * qrels judgments below rel_lvl are dropped; a retrieved judged document gets its grade
#   itself as gain (not 1, whatever the docstring says); unjudged: 0; no cutoff.


def ranx_check(qrels, run, p, lvl):
    rbp_mod = pytest.importorskip("ranx.metrics.rank_biased_precision")
    import numpy as np
    from numba.typed import List

    qids = sorted(q for q in run if q in qrels)
    ids = {}
    did = lambda d: ids.setdefault(d, float(len(ids)))
    tq = List([np.array([[did(d), float(y)] for d, y in qrels[q].items()] or np.zeros((0, 2))) for q in qids])
    tr = List([np.array([[did(d), float(-i)] for i, d in enumerate(run[q])] or np.zeros((0, 2))) for q in qids])
    got = rbp_mod.rank_biased_precision(tq, tr, p, lvl)
    for q, v in zip(qids, got):
        labels = [qrels[q].get(d) for d in run[q]]
        labels = [None if y is None or y < lvl else y for y in labels]
        want = R.rbp_on_ranking(labels, p, gain="linear")
        assert math.isclose(float(v), want, rel_tol=1e-11, abs_tol=1e-15), (q, v, want)


@needs_te_data
@pytest.mark.parametrize("lvl", [1, 2])
@pytest.mark.parametrize("p", [0.5, 0.9])
@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.rel_level"])
def test_ranx_suite_files(qrels, p, lvl):
    ranx_check(read_qrels(TE_DATA / qrels), read_run(TE_DATA / "results.test"), p, lvl)


@pytest.mark.parametrize("seed", range(3))
def test_ranx_random(tmp_path, seed):
    qp, rp = random_files(tmp_path, seed)
    ranx_check(read_qrels(qp), read_run(rp), [0.5, 0.8, 0.95][seed], 1 + seed % 2)


# ---------------------------------------------------------------------------------------
# trectools: TrecEval.get_rbp (ir_measures' trectools provider, out of its default pipeline)
#
# * graded (binary_topical_relevance=False): gain = grade for grades > 0 (may exceed 1);
#   binary: [grade > 0]; unjudged 0; depth = cutoff; a query with no relevant document in
#   the top depth is missing from the result (read as 0 here).


@needs_te_data
@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("depth", [10, 1000])
@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.rel_level"])
def test_trectools_suite_files(qrels, depth, binary):
    trectools = pytest.importorskip("trectools")
    import pandas as pd

    qr, run = read_qrels(TE_DATA / qrels), read_run(TE_DATA / "results.test")
    tq = trectools.TrecQrel()
    tq.qrels_data = pd.DataFrame([(q, 0, d, y) for q in qr for d, y in qr[q].items()],
                                 columns=["query", "q0", "docid", "rel"])
    tr = trectools.TrecRun()
    tr.run_data = pd.DataFrame([(q, "Q0", d, i + 1, float(-i), "x") for q in sorted(run) for i, d in enumerate(run[q])],
                               columns=["query", "q0", "docid", "rank", "score", "system"])
    for p in (0.8, 0.9):
        vals, _ = trectools.TrecEval(tr, tq).get_rbp(p=p, depth=depth, per_query=True,
                                                      binary_topical_relevance=binary, average_ties=True)
        col = vals.columns[0]
        for q in run:
            labels = [qr[q].get(d) for d in run[q]]
            labels = [None if y is None else max(y, 0) for y in labels]
            want = R.rbp_on_ranking(labels, p, k=depth, **({"rel": 1} if binary else {"gain": "linear"}))
            v = float(vals.loc[q, col]) if q in vals.index else 0.0
            assert math.isclose(v, want, rel_tol=1e-11, abs_tol=1e-15), (q, v, want)
