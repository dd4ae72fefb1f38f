"""Run/qrels alignment against a plain-Python transcription of trec_eval's rules."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from rankjit.io import TrecQrels, TrecRun, align, evaluate_run, read_trec_qrels, read_trec_run  # noqa: E402


def reference_align(run_rows, qrels_rows, complete=False, max_docs=None, rel_level=1):
    """trec_eval's alignment written directly from its description (dicts, sorts)."""
    judged = {}
    for q, d, r in qrels_rows:
        judged.setdefault(q, {})[d] = r
    by_q = {}
    for q, d, s in run_rows:
        by_q.setdefault(q, []).append((d, s))
    out = []
    for q in sorted(judged, key=lambda s: s.encode()):
        if q not in by_q and not complete:
            continue
        docs = by_q.get(q, [])
        # score descending, then docno descending
        docs = sorted(docs, key=lambda t: (t[1], t[0].encode()), reverse=True)
        if max_docs is not None:
            docs = docs[:max_docs]
        labels = [max(judged[q].get(d, 0), 0) for d, _ in docs]
        n_rel = sum(1 for r in judged[q].values() if r >= rel_level)
        out.append((q, labels, n_rel))
    return out


def random_case(rng):
    qids = [f"q{i}" for i in rng.choice(20, size=6, replace=False)]
    docs = [f"D{j:03d}" for j in range(30)]
    run_rows, qrels_rows = [], []
    for q in qids[:4] + ["only_in_run"]:
        for d in rng.choice(docs, size=rng.integers(1, 15), replace=False):
            run_rows.append((q, str(d), float(rng.integers(0, 4))))  # many ties
    for q in qids[1:]:
        for d in rng.choice(docs, size=rng.integers(1, 12), replace=False):
            qrels_rows.append((q, str(d), int(rng.integers(-2, 4))))
    order = rng.permutation(len(run_rows))
    run_rows = [run_rows[i] for i in order]
    return run_rows, qrels_rows


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("complete,max_docs,rel_level", [(False, None, 1), (True, None, 1), (True, 5, 2),
                                                         (False, 3, 1)])
def test_alignment_matches_reference(seed, complete, max_docs, rel_level):
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = random_case(rng)
    run = TrecRun.from_columns(*zip(*run_rows))
    qrels = TrecQrels.from_columns(*zip(*qrels_rows))
    al = align(run, qrels, complete=complete, max_docs=max_docs, rel_level=rel_level)
    ref = reference_align(run_rows, qrels_rows, complete, max_docs, rel_level)
    assert al.qids == [q for q, _, _ in ref]
    assert "only_in_run" not in al.qids
    for i, (q, labels, n_rel) in enumerate(ref):
        assert al.labels[al.offsets[i]:al.offsets[i + 1]].tolist() == labels, q
        assert al.n_relevant[i] == n_rel
    # ideal counts: every judged document per grade, negatives not counted
    for i, q in enumerate(al.qids):
        grades = [r for qq, _, r in qrels_rows if qq == q and r >= 0]
        assert al.ideal_counts[i].tolist()[: max(grades, default=-1) + 1] == np.bincount(
            grades, minlength=max(grades, default=-1) + 1).tolist()


def test_ties_broken_by_docno_descending():
    run = read_trec_run(b"q Q0 a 1 1.0 t\nq Q0 c 2 1.0 t\nq Q0 b 3 1.0 t\nq Q0 z 4 0.5 t\n")
    qrels = read_trec_qrels(b"q 0 a 1\nq 0 b 2\nq 0 c 3\nq 0 z 4\n")
    al = align(run, qrels)
    assert al.labels.tolist() == [3, 2, 1, 4]  # c, b, a, then the lower score


def test_duplicate_document_in_run_is_an_error():
    run = read_trec_run(b"q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 a 3 1 t\n", name="dup.run")
    qrels = read_trec_qrels(b"q 0 a 1\n")
    with pytest.raises(ValueError, match=r"dup\.run: document 'a' is retrieved twice for query 'q'"):
        align(run, qrels)
    # trec_eval only looks at the top max_docs documents
    assert align(run, qrels, max_docs=2).labels.tolist() == [1, 0]


def test_duplicate_judgment_is_an_error():
    run = read_trec_run(b"q Q0 a 1 3 t\n")
    qrels = read_trec_qrels(b"q 0 a 1\nq 0 a 0\n", name="dup.qrels")
    with pytest.raises(ValueError, match=r"dup\.qrels: document 'a' is judged twice for query 'q'"):
        align(run, qrels)


def test_no_common_query_is_an_error():
    run = read_trec_run(b"x Q0 a 1 3 t\n")
    qrels = read_trec_qrels(b"q 0 a 1\n")
    with pytest.raises(ValueError, match="no query has both results and relevance judgments"):
        align(run, qrels)


def test_unretrieved_relevant_documents_count():
    run = read_trec_run(b"q Q0 a 1 2 t\nq Q0 b 2 1 t\n")
    qrels = read_trec_qrels(b"q 0 b 1\nq 0 c 1\nq 0 d -1\n")
    res = evaluate_run(qrels, run, ["P@2", "AP", "R@2"])
    assert res == {"P@2": 0.5, "AP": 0.25, "R@2": 0.5}  # R = 2: c counts although not retrieved


def test_bad_arguments():
    with pytest.raises(TypeError, match="run must be a TrecRun or a path"):
        align(42, read_trec_qrels(b"q 0 a 1\n"))
    with pytest.raises(TypeError, match="qrels must be TrecQrels or a path, got dict"):
        align(read_trec_run(b"q Q0 a 1 2 t\n"), {})
    with pytest.raises(ValueError, match="max_docs must be >= 0"):
        align(read_trec_run(b"q Q0 a 1 2 t\n"), read_trec_qrels(b"q 0 a 1\n"), max_docs=-1)


# ---- the per-query ranking kernel: serial and parallel drivers, blocks of rows ----------

from rankjit.io import _align  # noqa: E402


def _big_case(rng, n_q=60):
    """Queries split into several blocks of rows, unsorted ids, many ties, '#' in docnos."""
    run_rows = []
    for q in rng.permutation(n_q):
        for d in rng.choice(80, size=int(rng.integers(1, 40)), replace=False):
            run_rows.append((f"q{q}", f"d#{d}", float(rng.integers(0, 5))))
    cut = np.sort(rng.choice(len(run_rows), size=30, replace=False))
    blocks = np.split(np.array(run_rows, dtype=object), cut)
    run_rows = [tuple(r) for i in rng.permutation(len(blocks)) for r in blocks[i]]  # shuffled blocks
    qrels_rows = [(f"q{q}", f"d#{d}", int(rng.integers(-1, 4)))
                  for q in range(0, n_q + 5, 2) for d in rng.choice(80, size=20, replace=False)]
    return run_rows, qrels_rows


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("parallel", [False, True])
def test_parallel_and_serial_ranking_match_reference(seed, parallel, monkeypatch):
    monkeypatch.setattr(_align, "use_parallel", lambda n: parallel)
    rng = np.random.default_rng(100 + seed)
    run_rows, qrels_rows = _big_case(rng)
    run = TrecRun.from_columns(*zip(*run_rows))
    qrels = TrecQrels.from_columns(*zip(*qrels_rows))
    for complete, max_docs in [(False, None), (True, 7)]:
        al = align(run, qrels, complete=complete, max_docs=max_docs)
        ref = reference_align(run_rows, qrels_rows, complete, max_docs)
        assert al.qids == [q for q, _, _ in ref]
        assert al.labels.tolist() == [x for _, labels, _ in ref for x in labels]
        assert np.array_equal(al.scores, run.score[al.rows])
        same_query = np.diff(np.repeat(np.arange(al.n_queries), al.num_ret)) == 0
        assert np.all(np.diff(al.scores)[same_query] <= 0)  # score descending inside a query


@pytest.mark.parametrize("parallel", [False, True])
def test_first_query_with_a_duplicate_is_reported(parallel, monkeypatch):
    monkeypatch.setattr(_align, "use_parallel", lambda n: parallel)
    run = read_trec_run(b"q2 Q0 a 1 3 t\nq2 Q0 a 2 2 t\nq1 Q0 b 1 3 t\nq1 Q0 c 2 2 t\nq1 Q0 b 3 1 t\n",
                        name="two.run")
    qrels = read_trec_qrels(b"q1 0 a 1\nq2 0 a 1\n")
    with pytest.raises(ValueError, match=r"two\.run: document 'b' is retrieved twice for query 'q1'"):
        align(run, qrels)


def test_read_and_from_columns_inputs_align_the_same():
    text = b"".join(f"q{i % 7} Q0 doc#{i * 31 % 97} {i} {i % 5}.5 t\n".encode() for i in range(300))
    qtext = b"".join(f"q{i % 9} 0 doc#{i * 7 % 97} {i % 4}\n".encode() for i in range(200))
    run, qrels = read_trec_run(text), read_trec_qrels(qtext)
    run2 = TrecRun.from_columns(run.qid.tolist(), run.docno.tolist(), run.score)
    qrels2 = TrecQrels.from_columns(qrels.qid.tolist(), qrels.docno.tolist(), qrels.rel)
    a, b = align(run, qrels2), align(run2, qrels)
    assert a.qids == b.qids and a.labels.tolist() == b.labels.tolist() and a.rows.tolist() == b.rows.tolist()


def test_duplicates_read_from_a_file_name_their_lines(tmp_path):
    import gzip

    # a comment, a blank line and \r\n line ends: line numbers are not row numbers
    run_text = b"# a run\r\nq Q0 a 1 3 t\r\n\r\nq Q0 b 2 2 t\r\nq Q0 a 3 1 t\r\n"
    (tmp_path / "dup.run.gz").write_bytes(gzip.compress(run_text))
    (tmp_path / "ok.qrels").write_bytes(b"q 0 a 1\n")
    with pytest.raises(ValueError, match=r"dup\.run\.gz: document 'a' is retrieved twice for query 'q' \(lines 2 "
                                         r"and 5\) \(trec_eval refuses duplicate documents\)"):
        align(str(tmp_path / "dup.run.gz"), str(tmp_path / "ok.qrels"))
    # a docno that is a prefix of another is not a match; the qrels' own lines
    (tmp_path / "dup.qrels").write_bytes(b"q 0 ab 1\nq 0 a 1\n\nq 0 a 0\n")
    (tmp_path / "ok.run").write_bytes(b"q Q0 a 1 3 t\n")
    with pytest.raises(ValueError, match=r"document 'a' is judged twice for query 'q' \(lines 2 and 4\) "):
        align(str(tmp_path / "ok.run"), str(tmp_path / "dup.qrels"))
    # read from bytes: no file to point into, the message without lines
    with pytest.raises(ValueError, match=r"<bytes>: document 'a' is judged twice for query 'q' \(trec_eval"):
        align(read_trec_run(b"q Q0 a 1 3 t\n"), read_trec_qrels(b"q 0 a 1\nq 0 a 0\n"))


def test_judged_tells_unjudged_from_judged_grade_0():
    # unjudged (not in the qrels), judged 0, judged below 0, judged 2: labels 0, 0, 0, 2
    from rankjit.io import align, read_trec_qrels, read_trec_run

    run = read_trec_run(b"q Q0 a 1 4 t\nq Q0 b 2 3 t\nq Q0 c 3 2 t\nq Q0 d 4 1 t\n")
    qrels = read_trec_qrels(b"q 0 b 0\nq 0 c -2\nq 0 d 2\n")
    aligned = align(run, qrels)
    assert aligned.labels.tolist() == [0, 0, 0, 2]
    assert aligned.judged.tolist() == [False, True, False, True]


def test_judged_below_zero_tells_the_two_kinds_of_unjudged_documents_apart():
    from rankjit.io import align, read_trec_qrels, read_trec_run

    run = read_trec_run(b"q Q0 a 1 4 t\nq Q0 b 2 3 t\nq Q0 c 3 2 t\nq Q0 d 4 1 t\n")
    qrels = read_trec_qrels(b"q 0 b 0\nq 0 c -2\nq 0 d 2\n")
    aligned = align(run, qrels)
    assert aligned.judged_below_zero.tolist() == [False, False, True, False]
    condensed = aligned.judged_only()
    assert condensed.labels.tolist() == [0, 2] and condensed.judged_below_zero.tolist() == [False, False]


@pytest.mark.parametrize("seed", range(6))
def test_queries_cuts_the_run_as_aligning_only_those_queries_does(seed):
    # AlignedRun.queries(which) against aligning the qrels of the chosen queries alone: every
    # per-document and per-query field equal, and each kept document's row in the whole run
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = random_case(rng)
    run = TrecRun.from_columns(*zip(*run_rows))
    al = align(run, TrecQrels.from_columns(*zip(*qrels_rows)), complete=True)
    which = np.flatnonzero(rng.random(al.n_queries) < 0.5)
    cut, rows = al.queries(which)
    chosen = {al.qids[i] for i in which.tolist()}
    alone = align(run, TrecQrels.from_columns(*zip(*[r for r in qrels_rows if r[0] in chosen] or [("none", "d", 1)])),
                  complete=True)
    if not chosen:
        assert cut.qids == [] and cut.offsets.tolist() == [0] and rows.shape == (0,)
        return
    assert cut.qids == alone.qids
    for field in ("offsets", "labels", "scores", "rows", "n_relevant", "in_run", "judged", "judged_below_zero"):
        np.testing.assert_array_equal(getattr(cut, field), getattr(alone, field), err_msg=field)
    # grade codes index the whole qrels' grades; compare the grades they stand for
    np.testing.assert_array_equal(cut.grade_values[cut.grade_codes], alone.grade_values[alone.grade_codes])
    np.testing.assert_array_equal(cut.ideal_counts[:, :alone.ideal_counts.shape[1]], alone.ideal_counts)
    np.testing.assert_array_equal(al.labels[rows], cut.labels)
    np.testing.assert_array_equal(al.rows[rows], cut.rows)
    np.testing.assert_allclose(cut.evaluate(["AP", "nDCG@5"], per_query=True)["AP"],
                               al.evaluate(["AP", "nDCG@5"], per_query=True)["AP"][which])
