"""Judged counts per query and grade are kept sparse (issue 14, D2): memory O(judgments), whatever the grades.

``rankjit._grade_counts.GradeCounts`` is checked against plain numpy on dense tables
(every constructor path, every query operation); the alignment and the front ends are
checked to build no dense queries x grades table (``tracemalloc`` peak) on qrels where
every query has grades of its own, and to give the same values as the real trec_eval
and pytrec_eval there.
"""
from __future__ import annotations

import shutil
import subprocess
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankjit
from rankjit import _grade_counts
from rankjit._grade_counts import GradeCounts
from rankjit._kernels.frontends import _FEW_CODES
from rankjit.io import align, read_trec_qrels, read_trec_run

SHARED = Path(__file__).resolve().parents[2] / "shared"


def _dense_tables():
    return st.integers(0, 6).flatmap(lambda n_q: st.integers(1, 7).flatmap(
        lambda n_g: st.lists(st.lists(st.integers(0, 3), min_size=n_g, max_size=n_g), min_size=n_q, max_size=n_q)
        .map(lambda rows, n_g=n_g: np.array(rows, dtype=np.int64).reshape(len(rows), n_g))))


@settings(max_examples=200, deadline=None)
@given(_dense_tables(), st.integers(-1, 8), st.integers(-1, 8))
def test_operations_equal_the_dense_table(table, lo, hi):
    counts = GradeCounts.from_dense(table)
    n_q, n_g = table.shape
    assert counts.n_queries == n_q and counts.n_columns == n_g
    assert counts.dense().tolist() == table.tolist()
    assert (counts.counts > 0).all()
    grades = np.arange(n_g)
    assert counts.totals().tolist() == table.sum(axis=1).tolist()
    assert counts.at_least(lo).tolist() == table[:, grades >= lo].sum(axis=1).tolist()
    assert counts.between(lo, hi).tolist() == table[:, (grades >= lo) & (grades < hi)].sum(axis=1).tolist()
    used = np.flatnonzero(table.any(axis=0))
    assert counts.top_grade() == (int(used[-1]) if used.size else -1)
    shifted = counts.shifted(2).dense()
    assert shifted.tolist() == np.hstack((np.zeros((n_q, 2), np.int64), table)).tolist()
    if n_q:
        pick = np.array([n_q - 1, 0, n_q - 1])
        assert counts.take(pick).dense().tolist() == table[pick].tolist()


@pytest.mark.parametrize("small_cells", [0, 2**20])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(-2, 9)), max_size=40))
def test_counting_pairs_equals_a_dense_count(monkeypatch, small_cells, pairs):
    """Both counting paths (a small dense table; a sort of keys) count the (query, grade) pairs, grades < 0 not."""
    monkeypatch.setattr(_grade_counts, "SMALL_TABLE_CELLS", small_cells)  # (the same for every example)
    monkeypatch.setattr(_grade_counts, "SMALL_TABLE_PER_ROW", 0 if small_cells == 0 else 4)
    q = np.array([p[0] for p in pairs], dtype=np.int64)
    g = np.array([p[1] for p in pairs], dtype=np.int64)
    expected = np.zeros((5, 10), dtype=np.int64)
    for qi, gi in pairs:
        if gi >= 0:
            expected[qi, gi] += 1
    assert GradeCounts.from_pairs(q, g, 5, 10).dense().tolist() == expected.tolist()
    order = np.argsort(q, kind="stable")  # grouped by query: from_grouped
    starts = np.searchsorted(q[order], np.arange(6))
    assert GradeCounts.from_grouped(starts, g[order], 10).dense().tolist() == expected.tolist()


#: judgments grouped by query: a few grades, some huge; or more distinct grades than grouped_code_counts reads
#: back one by one (_FEW_CODES: its sorted path)
_JUDGMENTS = st.one_of(
    st.lists(st.lists(st.sampled_from([-3, -1, 0, 1, 2, 5, 70000, 2**40]), max_size=12), max_size=6),
    st.lists(st.lists(st.integers(-2, 3 * _FEW_CODES), min_size=2 * _FEW_CODES, max_size=4 * _FEW_CODES),
             min_size=1, max_size=3))


@settings(max_examples=200, deadline=None)
@given(_JUDGMENTS, st.integers(1, 3))
def test_coded_judgments_count_each_query_and_grade(per_query, rel_level):
    """The front ends' judgments coded once (rankjit.io._frontend.code_judgments, its counts compiled): the entries
    (grade code, count) of each query in code order, grades below 0 not counted, and R, against a plain count."""
    from rankjit.io._frontend import code_judgments

    grades = np.array([g for q in per_query for g in q], dtype=np.int64)
    coded = code_judgments([len(q) for q in per_query], grades, rel_level)
    values = coded.grade_values.tolist()
    assert values == sorted({0, *(g for g in grades.tolist() if g >= 0)})
    assert coded.labels.tolist() == [values.index(g) + 2 if g >= 0 else 1 for g in grades.tolist()]
    counts = coded.judged_counts
    assert counts.from_judgments and counts.n_columns == len(values)
    for q, gs in enumerate(per_query):
        want = sorted((values.index(g), gs.count(g)) for g in set(gs) if g >= 0)
        assert counts.entries[counts.offsets[q]:counts.offsets[q + 1]].tolist() == [list(e) for e in want]
        assert coded.n_relevant[q] == sum(1 for g in gs if g >= rel_level)
    assert counts.offsets.tolist()[-1] == counts.entries.shape[0]


def test_coded_judgments_reach_both_ways_of_reading_the_tally():
    """The strategy above draws judgments of more distinct grades than _FEW_CODES (the sorted path) and fewer."""
    widths = []

    @settings(max_examples=100, deadline=None, database=None)
    @given(_JUDGMENTS)
    def collect(per_query):
        widths.append(len({g for q in per_query for g in q if g >= 0} | {0}))

    collect()
    assert max(widths) > _FEW_CODES >= min(widths)


def test_counting_pairs_beyond_int64_keys():
    """Queries x columns beyond 2**62: sorted by (query, grade) instead of one int64 key each."""
    q = np.array([1, 0, 1, 1], dtype=np.int64)
    g = np.array([2**61, 5, 2**61, 3], dtype=np.int64)
    counts = GradeCounts.from_pairs(q, g, 4, 2**62)
    assert counts.offsets.tolist() == [0, 1, 3, 3, 3]
    assert counts.entries.tolist() == [[5, 1], [3, 1], [2**61, 2]]


def test_dense_beyond_its_limit_says_why():
    counts = GradeCounts.from_pairs(np.array([0]), np.array([9]), 3, 10)
    with pytest.raises(ValueError, match=r"^ideal_counts would have 3 x 10 = 30 cells, more than 29; the counts "
                                         r"are kept sparse \(one entry per query and grade it holds\)$"):
        counts.dense(limit=29)


def _own_grades(n_queries):
    """Qrels where each query has two judgments of grades no other query has, and a run retrieving them."""
    qrels = "".join(f"q{i:05d} 0 a {2 * i + 1}\nq{i:05d} 0 b {2 * i + 2}\nq{i:05d} 0 c 0\n" for i in range(n_queries))
    run = "".join(f"q{i:05d} Q0 c 1 3 r\nq{i:05d} Q0 b 2 2 r\nq{i:05d} Q0 a 3 1 r\n" for i in range(n_queries))
    return qrels.encode(), run.encode()


@pytest.mark.slow  # interpreted (NUMBA_DISABLE_JIT=1) under tracemalloc it takes minutes; the compiled pass runs it
def test_alignment_keeps_one_entry_per_query_and_grade():
    measures = ["AP", "nDCG", "nDCG@2", "R@2", "Rprec"]
    small = align(read_trec_run(_own_grades(300)[1]), read_trec_qrels(_own_grades(300)[0]))
    small.evaluate(measures, per_query=True)  # compiles (if the cache is empty) outside the measured window
    qrels, run = _own_grades(3000)  # a dense table: 3000 x 6001 cells (144 MB of int64)
    tracemalloc.start()
    try:
        al = align(read_trec_run(run), read_trec_qrels(qrels))
        values = al.evaluate(measures, per_query=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert al.grade_values.shape[0] == 6001
    assert al.judged_counts.entries.shape[0] == 9000  # (grade 0, 2i + 1, 2i + 2) per query
    assert peak < 24 * 2**20, f"peak {peak / 2**20:.1f} MiB: a dense queries x grades table was built"
    # query i ranks c (grade 0), b (2i + 2), a (2i + 1): AP = (1/2 + 2/3) / 2; nDCG from the definition
    i = np.arange(3000)
    ga, gb = 2.0 * i + 1, 2.0 * i + 2
    dcg = gb / np.log2(3) + ga / np.log2(4)
    ideal = gb + ga / np.log2(3)
    np.testing.assert_allclose(values["AP"], (1 / 2 + 2 / 3) / 2, rtol=1e-15)
    np.testing.assert_allclose(values["nDCG"], dcg / ideal, rtol=1e-13)
    np.testing.assert_allclose(values["nDCG@2"], (gb / np.log2(3)) / ideal, rtol=1e-13)
    np.testing.assert_allclose(values["R@2"], 0.5)
    np.testing.assert_allclose(values["Rprec"], 0.5)


def test_dense_tables_are_built_only_when_asked_for():
    qrels, run = _own_grades(4)
    al = align(read_trec_run(run), read_trec_qrels(qrels))
    expected = np.zeros((4, 9), dtype=np.int64)
    expected[:, 0] = 1
    for q in range(4):
        expected[q, 2 * q + 1] = expected[q, 2 * q + 2] = 1
    assert al.grade_counts.tolist() == expected.tolist()
    assert al.ideal_counts.sum(axis=1).tolist() == [3, 3, 3, 3]
    assert al.ideal_counts[3, [0, 7, 8]].tolist() == [1, 1, 1]


@pytest.fixture(scope="module")
def trec_eval_binary():
    tool = SHARED / "tools" / "build-trec_eval"
    if not tool.exists():
        pytest.skip(f"the real trec_eval is built by {tool}, which is absent")
    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.skip("building the real trec_eval needs make and cc")
    out = subprocess.run(["bash", str(tool)], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        pytest.skip(f"building trec_eval failed: {out.stderr[-300:]}")
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.slow  # -m all_trec in a subprocess: minutes when it inherits NUMBA_DISABLE_JIT=1
def test_trec_eval_on_grades_of_their_own_equals_trec_eval(tmp_path, trec_eval_binary):
    qrels, run = _own_grades(300)
    (tmp_path / "q").write_bytes(qrels)
    (tmp_path / "r").write_bytes(run)
    args = ["-q", "-m", "all_trec", str(tmp_path / "q"), str(tmp_path / "r")]
    expected = subprocess.run([trec_eval_binary, *args], capture_output=True, timeout=300, check=True).stdout
    got = subprocess.run(["python", "-m", "rankjit", "trec_eval", *args], capture_output=True, timeout=300)
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == expected


def test_pytrec_eval_front_end_on_grades_of_their_own():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from rankjit.compat import pytrec_eval as compat

    qrels = {f"q{i}": {"a": 2 * i + 1, "b": 2 * i + 2, "c": 0, "d": 3 * i + 7} for i in range(400)}
    run = {f"q{i}": {"a": 1.0, "b": 2.0, "c": 3.0, "x": 0.5} for i in range(400)}
    measures = {"map", "ndcg", "ndcg_cut.3", "bpref", "Rprec", "recall.2"}
    want = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    got = compat.RelevanceEvaluator(qrels, measures).evaluate(run)
    for q in want:
        for m, v in want[q].items():
            assert got[q][m] == pytest.approx(v, abs=1e-12), (q, m)


def test_array_api_ideal_counts_as_given_dense():
    """The public ideal_counts= (dense) gives the values of its definition: the ideal from the counts."""
    labels = np.array([[3, 0, 1], [0, 0, 2]])
    scores = np.array([[0.9, 0.5, 0.1], [0.3, 0.2, 0.1]])
    ideal = np.array([[1, 1, 0, 2], [5, 0, 1, 0]])  # query 0: one more 3 unretrieved; query 1: 3 more grade 0
    got = rankjit.evaluate(labels, scores, ["nDCG(gain='linear')", "R@1", "Bpref"], ideal_counts=ideal,
                           per_query=True)
    w = 1 / np.log2(np.arange(2, 6))
    dcg0 = 3 * w[0] + 1 * w[2]
    ideal0 = 3 * w[0] + 3 * w[1] + 1 * w[2]
    dcg1 = 2 * w[2]
    ideal1 = 2 * w[0]
    np.testing.assert_allclose(got["nDCG(gain='linear')"], [dcg0 / ideal0, dcg1 / ideal1], rtol=1e-15)
    assert got["R@1"].tolist() == [1 / 3, 0.0]
    # Bpref = 1/R sum over the relevant retrieved of 1 - min(non-relevant above, R) / min(R, N): query 0 (R = 3,
    # N = 1): the 3 at rank 1 adds 1, the 1 at rank 3 (one non-relevant above) adds 0; query 1 (R = 1, N = 5): 0
    np.testing.assert_allclose(got["Bpref"], [1 / 3, 0.0])
