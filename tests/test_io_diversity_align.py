"""Subtopic qrels + run -> nuggets tensor (rankjit.io.align_diversity), against plain-Python parsing and pyndeval."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from rankjit.io import (  # noqa: E402
    AlignedDiversity,
    align_diversity,
    read_diversity_qrels,
    read_trec_run,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "web2012"
DIV_QRELS = DATA / "qrels.diversity-ndeval.txt"
RUNS = [DATA / "run.ql.cata.txt", DATA / "run.rm.cata.txt"]
needs_data = pytest.mark.skipif(
    not (DIV_QRELS.exists() and all(p.exists() for p in RUNS)),
    reason=f"TREC 2012 Web track diversity data not found in {DATA} (shared data folder absent)",
)


# ---------------------------------------------------------------------------------------------
# plain-Python reference: dicts and sorts, written from the description of the format
# ---------------------------------------------------------------------------------------------


def parse_lines(text):
    return [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def reference(div_lines, run_lines, complete=False, max_docs=None):
    """{qid: dict(ranked=[(docno, score, nugget_row)], subtopics=[...], ideal=[nugget_row, ...])}."""
    judg, subs = {}, {}
    for q, s, d, j in div_lines:
        judg.setdefault(q, {}).setdefault(d, {})[int(s)] = int(j)
        subs.setdefault(q, set()).add(int(s))
    ran = {}
    for f in run_lines:
        ran.setdefault(f[0], []).append((f[2], float(f[4])))
    out = {}
    for q in sorted(judg, key=str.encode):
        if q not in ran and not complete:
            continue
        cols = sorted(subs[q])

        def row(d, q=q, cols=cols):
            return [int(judg[q].get(d, {}).get(s, 0) > 0) for s in cols]

        docs = sorted(ran.get(q, []), key=lambda t: (t[1], t[0].encode()), reverse=True)[:max_docs]
        out[q] = dict(
            ranked=[(d, s, row(d)) for d, s in docs],
            subtopics=cols,
            ideal=[row(d) for d in sorted(judg[q], key=str.encode, reverse=True)],
        )
    return out


def check_against_reference(al, ref):
    assert al.qids == list(ref)
    n_q, width, n_sub = al.nuggets.shape
    assert al.scores.shape == (n_q, width) and al.rows.shape == (n_q, width) and al.judged.shape == (n_q, width)
    assert al.ideal.shape[0] == n_q and al.ideal.shape[2] == n_sub
    assert al.nuggets.dtype == np.uint8 and al.ideal.dtype == np.uint8
    assert n_sub == max(len(r["subtopics"]) for r in ref.values())
    for i, (q, r) in enumerate(ref.items()):
        L = len(r["ranked"])
        S = len(r["subtopics"])
        assert al.lengths[i] == L
        assert al.n_subtopics[i] == S
        assert al.subtopic_ids[i, :S].tolist() == r["subtopics"] and (al.subtopic_ids[i, S:] == -1).all()
        assert al.scores[i, :L].tolist() == [s for _, s, _ in r["ranked"]]
        assert np.isneginf(al.scores[i, L:]).all()
        assert al.nuggets[i, :L, :S].tolist() == [n for _, _, n in r["ranked"]]
        assert not al.nuggets[i, L:].any() and not al.nuggets[i, :, S:].any()
        assert al.ideal_lengths[i] == len(r["ideal"])
        assert al.ideal[i, : len(r["ideal"]), :S].tolist() == r["ideal"]
        assert not al.ideal[i, len(r["ideal"]):].any()
        assert (al.rows[i, L:] == -1).all()


SMALL_DIV = """\
10 2 b 1
10 10 b 0
10 10 c 2
10 2 z -1
10 3 a 0
9 1 a 1
9 1 x 1
7 1 a 1
"""
SMALL_RUN = """\
10 Q0 a 1 3.0 t
10 Q0 b 2 3.0 t
10 Q0 c 3 1.0 t
10 Q0 u 4 0.5 t
9 Q0 x 1 1 t
9 Q0 y 2 2 t
8 Q0 a 1 1 t
"""


def test_small_case_against_reference():
    al = align_diversity(read_diversity_qrels(SMALL_DIV.encode()), read_trec_run(SMALL_RUN.encode()))
    assert isinstance(al, AlignedDiversity)
    ref = reference(parse_lines(SMALL_DIV), parse_lines(SMALL_RUN))
    check_against_reference(al, ref)
    # spelled out: topics in byte order ('10' < '9'); subtopics 2 < 3 < 10 numerically; b before a (tie)
    assert al.qids == ["10", "9"]
    assert al.subtopic_ids.tolist() == [[2, 3, 10], [1, -1, -1]]
    assert al.nuggets[0, :4].tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0]]
    assert al.judged[0].tolist() == [True, True, True, False] and al.judged[1].tolist() == [False, True, False, False]
    # the negative judgment (z, subtopic 2) is no nugget, but z is a judged document
    assert al.ideal_lengths.tolist() == [4, 2]
    assert al.ideal[0, :4].tolist() == [[0, 0, 0], [0, 0, 1], [1, 0, 0], [0, 0, 0]]  # z, c, b, a
    # rows point back into the run file
    run = read_trec_run(SMALL_RUN.encode())
    assert [run.docno[r] for r in al.rows[0, :4]] == ["b", "a", "c", "u"]
    assert al.in_run.tolist() == [True, True] and al.runid == "t"


def test_complete_and_max_docs():
    div, run = SMALL_DIV.encode(), SMALL_RUN.encode()
    al = align_diversity(div, run, complete=True, max_docs=2)
    check_against_reference(al, reference(parse_lines(SMALL_DIV), parse_lines(SMALL_RUN), True, 2))
    assert al.qids == ["10", "7", "9"] and al.in_run.tolist() == [True, False, True]
    assert al.lengths.tolist() == [2, 0, 2] and al.nuggets.shape[1] == 2
    assert al.ideal_lengths.tolist() == [4, 1, 2]


@pytest.mark.parametrize("seed", range(6))
def test_random_cases_against_reference(seed):
    rng = np.random.default_rng(seed)
    topics = [str(t) for t in rng.choice(300, size=5, replace=False)]
    docs = [f"d{j:02d}" for j in range(25)]
    div, run = [], []
    for t in topics[:4]:
        subs = rng.choice(12, size=rng.integers(1, 6), replace=False) + 1
        for d in rng.choice(docs, size=rng.integers(1, 12), replace=False):
            for s in subs:
                if rng.random() < 0.8:
                    div.append(f"{t} {s} {d} {rng.choice([-1, 0, 0, 1, 1, 2])}")
    for t in topics[1:]:
        for d in rng.choice(docs, size=rng.integers(1, 15), replace=False):
            run.append(f"{t} Q0 {d} 0 {rng.integers(0, 4)} r{seed}")
    rng.shuffle(div)
    rng.shuffle(run)
    div_t, run_t = "\n".join(div) + "\n", "\n".join(run) + "\n"
    for complete in (False, True):
        for max_docs in (None, 3):
            al = align_diversity(div_t.encode(), run_t.encode(), complete=complete, max_docs=max_docs)
            check_against_reference(al, reference(parse_lines(div_t), parse_lines(run_t), complete, max_docs))


def test_evaluate_matches_functions():
    import rankjit.diversity as D

    al = align_diversity(SMALL_DIV.encode(), SMALL_RUN.encode())
    res = al.evaluate(["alpha_nDCG@3", "S_recall@2"], per_query=True)
    kw = dict(lengths=al.lengths, ideal=al.ideal, ties="stable")
    np.testing.assert_array_equal(res["alpha_nDCG@3"], D.alpha_ndcg(al.nuggets, al.scores, 3, **kw))
    # topic 10: subtopics 2 (b) and 10 (c) have relevant documents; top 2 = b, a: 1 of 2
    # topic 9: subtopic 1 reached by x at rank 2
    assert res["S_recall@2"].tolist() == [0.5, 1.0]


def test_duplicate_judgment_in_a_file_names_its_lines(tmp_path):
    text = SMALL_DIV + "10 2 b 0\n"
    (tmp_path / "div.qrels").write_text(text)
    first, second = [i + 1 for i, line in enumerate(text.splitlines()) if line.split()[:3] == ["10", "2", "b"]]
    with pytest.raises(ValueError, match=rf"judged twice for subtopic 2 of topic '10' \(lines {first} and {second}\)"):
        align_diversity(str(tmp_path / "div.qrels"), SMALL_RUN.encode())


def test_errors():
    run = SMALL_RUN.encode()
    with pytest.raises(ValueError, match=r"document 'b' is judged twice for subtopic 2 of topic '10'"):
        align_diversity(SMALL_DIV.encode() + b"10 2 b 0\n", run)
    with pytest.raises(ValueError, match=r"document 'a' is retrieved twice for query '10'"):
        align_diversity(SMALL_DIV.encode(), run + b"10 Q0 a 9 0.1 t\n")
    with pytest.raises(ValueError, match="no query has both results and relevance judgments"):
        align_diversity(b"1 1 a 1\n", run)
    with pytest.raises(ValueError, match="no subtopic judgments"):
        align_diversity(b"# nothing\n", run)
    with pytest.raises(ValueError, match="max_docs must be >= 0, got -1"):
        align_diversity(SMALL_DIV.encode(), run, max_docs=-1)
    with pytest.raises(TypeError, match="div_qrels must be DiversityQrels or a path, got int"):
        align_diversity(3, run)
    with pytest.raises(TypeError, match="run must be a TrecRun or a path, got list"):
        align_diversity(SMALL_DIV.encode(), [])


# ---------------------------------------------------------------------------------------------
# TREC 2012 Web track: plain-Python parse and pyndeval
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("run_path", RUNS, ids=lambda p: p.name)
def test_web2012_against_plain_python(run_path):
    al = align_diversity(DIV_QRELS, run_path)
    ref = reference(parse_lines(DIV_QRELS.read_text()), parse_lines(run_path.read_text()))
    assert len(ref) == 50 and al.nuggets.shape == (50, 1000, max(len(r["subtopics"]) for r in ref.values()))
    assert int(al.n_subtopics.sum()) == 187  # ../shared/data/README.md: 187 subtopics over 50 topics
    check_against_reference(al, ref)


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("run_path", RUNS, ids=lambda p: p.name)
def test_web2012_alpha_ndcg_against_pyndeval(run_path):
    pyndeval = pytest.importorskip("pyndeval")
    D = pytest.importorskip("rankjit.diversity")
    qrels = [tuple(f) for f in parse_lines(DIV_QRELS.read_text())]
    run = [(f[0], f[2], float(f[4])) for f in parse_lines(run_path.read_text())]  # the file's own scores
    ref = pyndeval.RelevanceEvaluator([(q, s, d, int(j)) for q, s, d, j in qrels]).evaluate(run)
    al = align_diversity(DIV_QRELS, run_path)
    assert set(al.qids) <= set(ref)
    kw = dict(lengths=al.lengths, ideal=al.ideal, ties="stable")
    for k in (5, 10, 20):
        got = {
            f"alpha-nDCG@{k}": D.alpha_ndcg(al.nuggets, al.scores, k, **kw),
            f"nERR-IA@{k}": D.err_ia(al.nuggets, al.scores, k, normalize=True, **kw),
            f"strec@{k}": D.s_recall(al.nuggets, al.scores, k, **kw),
        }
        for name, values in got.items():
            expected = np.array([ref[q][name] for q in al.qids])
            np.testing.assert_allclose(values, expected, rtol=1e-9, atol=1e-12, err_msg=name)
    mean = al.evaluate(["alpha_nDCG@20"])["alpha_nDCG@20"]
    assert mean == pytest.approx(np.mean([ref[q]["alpha-nDCG@20"] for q in al.qids]), rel=1e-12)
    assert mean > 0.1
