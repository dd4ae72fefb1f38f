"""judged= and judged_only=: evaluation on the judged documents alone (condensed lists).

A measure with ``judged_only=True`` must equal the same measure on the rows with their
unjudged documents removed (the reference: the condensed rows built by hand), for every
registered list family, tie rule and layout; ``rankjit.io`` fills ``judged`` from the
qrels, and the names agree with ir_measures' ``judged_only=True`` and trec_eval ``-J``.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import rankjit
from rankjit import _measures
from rankjit._registry import LIST_FAMILIES
from rankjit.io._align import align
from test_hostile_trec import trec_eval_bin  # noqa: F401,E402 (the fixture: the real trec_eval, built once)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
WEB = SHARED / "web2012"


def _rows(seed, n_q=40, width=9):
    """Padded labels/scores, the judged mask (unjudged documents have label 0) and row lengths."""
    rng = np.random.default_rng(seed)
    labels = rng.choice([0, 0, 0, 1, 1, 2, 3], size=(n_q, width)).astype(np.int64)
    scores = (rng.integers(0, 5, size=(n_q, width)) / 2.0).astype(np.float64)  # ties
    judged = rng.random((n_q, width)) < 0.6
    judged[labels > 0] = True
    judged[0, :] = False  # a query with no judged document
    labels[0, :] = 0
    judged[1, :] = True
    lengths = rng.integers(0, width + 1, n_q)
    return labels, scores, judged, lengths


def _condensed(labels, scores, judged, lengths):
    """The rows without their unjudged documents, as a ragged batch (labels, scores, offsets)."""
    ls, ss, sizes = [], [], []
    for q in range(labels.shape[0]):
        keep = judged[q, : lengths[q]]
        ls.append(labels[q, : lengths[q]][keep])
        ss.append(scores[q, : lengths[q]][keep])
        sizes.append(int(keep.sum()))
    return np.concatenate(ls), np.concatenate(ss), np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable", "average"])
@pytest.mark.parametrize("layout", ["lengths", "mask", "ragged"])
def test_every_family_equals_the_condensed_rows(ties, layout):
    labels, scores, judged, lengths = _rows(1)
    names = [f.example for f in LIST_FAMILIES if ties != "average" or f.ties_average]
    # R and the ideal come from every document of the row: the same for both evaluations
    n_relevant = np.array([(labels[q, : lengths[q]] >= 1).sum() for q in range(labels.shape[0])])
    cl, cs, coff = _condensed(labels, scores, judged, lengths)
    if layout == "ragged":
        flat_l, flat_s, off = _condensed(labels, scores, np.ones_like(judged), lengths)
        flat_j = np.concatenate([judged[q, : lengths[q]] for q in range(labels.shape[0])])
        kw = {"offsets": off}
        got = rankjit.evaluate(flat_l, flat_s, names, judged=flat_j, judged_only=True, ties=ties, per_query=True,
                               **kw)
    else:
        kw = {"lengths": lengths} if layout == "lengths" else {"mask": np.arange(labels.shape[1]) < lengths[:, None]}
        got = rankjit.evaluate(labels, scores, names, judged=judged, judged_only=True, ties=ties, per_query=True, **kw)
    # the condensed rows hold judged documents only (Judged@k: every document of them judged)
    want = rankjit.evaluate(cl, cs, names, offsets=coff, ties=ties, per_query=True, judged=np.ones(cl.shape, bool))
    for name in names:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    # n_relevant (R of the whole row) is kept: recall and AP of the condensed list divide by it
    got = rankjit.evaluate(labels, scores, ["R@3", "AP"], judged=judged, judged_only=True, ties=ties,
                           n_relevant=n_relevant, lengths=lengths, per_query=True)
    want = rankjit.evaluate(cl, cs, ["R@3", "AP"], offsets=coff, ties=ties, n_relevant=n_relevant, per_query=True)
    for name in ["R@3", "AP"]:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


@pytest.mark.parametrize("ties", ["pessimistic", "stable", "average"])
def test_evaluate_systems_with_judged_equals_each_system_condensed(ties):
    # one judged= (and pooled=) for every system: each system's values are those of its condensed rows,
    # and evaluate() with the same flags gives them bit for bit (every part of the batch in one pass)
    labels, scores, judged, lengths = _rows(4)
    rng = np.random.default_rng(4)
    stack = np.stack([scores, scores[:, ::-1], (rng.integers(0, 5, scores.shape) / 2.0)])
    pooled = judged | (rng.random(judged.shape) < 0.3)
    names = [f.example for f in LIST_FAMILIES if ties != "average" or f.ties_average]
    names += ["P@3", "nDCG(gains={0:1,1:2})@5"]
    got = rankjit.evaluate_systems(labels, stack, names, judged=judged, pooled=pooled, judged_only=True, ties=ties,
                                   lengths=lengths)
    mixed = ["P@3", "P(judged_only=True)@3", "Judged@5", "nDCG(gains={0:1,1:2})@5"]
    got_mixed = rankjit.evaluate_systems(labels, stack, mixed, judged=judged, ties=ties, lengths=lengths)
    for s in range(stack.shape[0]):
        one = rankjit.evaluate(labels, stack[s], names, judged=judged, pooled=pooled, judged_only=True, ties=ties,
                               lengths=lengths, per_query=True)
        cl, cs, coff = _condensed(labels, stack[s], judged, lengths)
        want = rankjit.evaluate(cl, cs, ["P@3"], offsets=coff, ties=ties, per_query=True)
        np.testing.assert_array_equal(got["P@3"][s], want["P@3"])
        for name in names:
            np.testing.assert_array_equal(got[name][s], one[name], err_msg=f"{name} system {s}")
        one = rankjit.evaluate(labels, stack[s], mixed, judged=judged, ties=ties, lengths=lengths, per_query=True)
        for name in mixed:
            np.testing.assert_array_equal(got_mixed[name][s], one[name], err_msg=f"{name} system {s}")


def test_per_measure_flag_means_and_mixing():
    labels, scores, judged, lengths = _rows(2)
    cl, cs, coff = _condensed(labels, scores, judged, lengths)
    names = ["P@3", "P(judged_only=True)@3", "nDCG(judged_only=True)@5", "AP", "AP(judged_only=False)"]
    got = rankjit.evaluate(labels, scores, names, judged=judged, lengths=lengths, per_query=True)
    full = rankjit.evaluate(labels, scores, ["P@3", "AP"], lengths=lengths, per_query=True)
    cond = rankjit.evaluate(cl, cs, ["P@3", "nDCG@5"], offsets=coff, per_query=True)
    np.testing.assert_array_equal(got["P@3"], full["P@3"])
    np.testing.assert_array_equal(got["AP"], full["AP"])
    np.testing.assert_array_equal(got["AP(judged_only=False)"], full["AP"])
    np.testing.assert_array_equal(got["P(judged_only=True)@3"], cond["P@3"])
    np.testing.assert_array_equal(got["nDCG(judged_only=True)@5"], cond["nDCG@5"])
    # the call's judged_only=True is the default a name's judged_only=False overrides
    got = rankjit.evaluate(labels, scores, ["P@3", "P(judged_only=False)@3"], judged=judged, judged_only=True,
                           lengths=lengths, per_query=True)
    np.testing.assert_array_equal(got["P@3"], cond["P@3"])
    np.testing.assert_array_equal(got["P(judged_only=False)@3"], full["P@3"])
    # means: the block sums of each batch, as a call on that batch alone gives them
    means = rankjit.evaluate(labels, scores, names, judged=judged, lengths=lengths)
    full_means = rankjit.evaluate(labels, scores, ["P@3", "AP"], lengths=lengths)
    cond_means = rankjit.evaluate(cl, cs, ["P@3", "nDCG@5"], offsets=coff)
    assert means["P@3"] == full_means["P@3"] and means["AP"] == full_means["AP"]
    assert means["P(judged_only=True)@3"] == cond_means["P@3"]
    assert means["nDCG(judged_only=True)@5"] == cond_means["nDCG@5"]


@pytest.mark.parametrize("call, error, message", [
    (lambda L, S, J: rankjit.evaluate(L, S, ["P@2"], judged_only=True), ValueError,
     "judged_only=True ('P@2') needs judged=, the mask of judged documents"),
    (lambda L, S, J: rankjit.evaluate(L, S, ["P(judged_only=True)@2", "AP"]), ValueError,
     "judged_only=True ('P(judged_only=True)@2') needs judged="),
    (lambda L, S, J: rankjit.evaluate(L, S, ["P@2"], judged=J.astype(int)), TypeError,
     "judged must be a boolean array (True = judged document), got dtype int64"),
    (lambda L, S, J: rankjit.evaluate(L, S, ["P@2"], judged=J[:, :2]), ValueError,
     "judged must have the shape of labels, (2, 3), got (2, 2)"),
    (lambda L, S, J: rankjit.evaluate(L, S, ["P@2"], judged=~J), ValueError,
     "label 1 in query 0 at position 0 is marked unjudged (judged=False); an unjudged document is not relevant: "
     "give it label 0, or mark it judged"),
    (lambda L, S, J: rankjit.evaluate(L, S, ["P@2"], judged=J, judged_only=1), TypeError,
     "judged_only must be True or False, got 1"),
    (lambda L, S, J: rankjit.evaluate(L, S, ["P(judged_only=1)@2"], judged=J), TypeError,
     "judged_only in 'P(judged_only=1)@2' must be True or False, got 1"),
    (lambda L, S, J: rankjit.evaluate(L, S, ["RPP", "LexiRecall"], judged_only=True, scores_b=S), ValueError,
     "'RPP' with judged_only=True needs judged= (True for each document the qrels judge, laid out as labels and "
     "shared by both systems)"),
    (lambda L, S, J: rankjit.evaluate_systems(L, np.stack([S, S]), ["AP(judged_only=True)"]), ValueError,
     "judged_only=True ('AP(judged_only=True)') needs judged=, the mask of judged documents"),
    (lambda L, S, J: rankjit.evaluate_systems(L, np.stack([S, S]), ["Judged@2"]), ValueError,
     "Judged ('Judged@2') needs judged=, the mask of judged documents"),
    (lambda L, S, J: rankjit.evaluate_systems(L, np.stack([S, S]), ["P@2"], judged=J[:, :2]), ValueError,
     "judged must have the shape of labels, (2, 3), got (2, 2)"),
    (lambda L, S, J: rankjit.evaluate_systems(L, np.stack([S, S]), ["P@2"], judged=J, judged_only=1), TypeError,
     "judged_only must be True or False, got 1"),
    # Bpref / infAP: the pool, and R and N from outside the row
    (lambda L, S, J: rankjit.evaluate(L, S, ["infAP"], pooled=J), ValueError,
     "pooled= needs judged=: a pooled document is unjudged only when judged= says so"),
    (lambda L, S, J: rankjit.infap(L, S, judged=J, pooled=J.astype(np.uint8)), TypeError,
     "pooled must be a boolean array (True = pooled document), got dtype uint8"),
    (lambda L, S, J: rankjit.infap(L, S, judged=J, pooled=J.ravel()), ValueError,
     "pooled must have the shape of labels, (2, 3), got (6,)"),
    (lambda L, S, J: rankjit.bpref(L, S, judged=J, ideal_counts=[[0, 1, 0], [1, 0, 1]]), ValueError,
     "ideal_counts counts 0 judged documents of grade < 1 for query 0, but its row holds 1"),
    (lambda L, S, J: rankjit.bpref(L, S, judged=J, ideal_counts=[[2, 0, 0], [2, 0, 0]]), ValueError,
     "ideal_counts counts 0 judged documents of grade >= 1 for query 0, but its row holds 1"),
    (lambda L, S, J: rankjit.infap(L, S, judged=J, n_relevant=[1, 0]), ValueError,
     "n_relevant counts 0 judged documents of grade >= 1 for query 1, but its row holds 1"),
    (lambda L, S, J: rankjit.bpref(L, S, judged=J, ties="average"), ValueError,
     "ties='average' is not available for Bpref"),
])
def test_errors(call, error, message):
    L = np.array([[1, 0, 0], [0, 2, 0]])
    S = np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0]])
    J = np.array([[True, False, True], [False, True, True]])
    with pytest.raises(error, match=re.escape(message)):
        call(L, S, J)


def test_every_registered_family_takes_judged_only_and_one_that_does_not_is_refused(monkeypatch):
    # the list, diversity and preference measures all take judged_only=; a registered family that did not would be
    # refused by name, with the families that take it listed
    assert all(f.judged_only for f in _measures.EXTERNAL.values())
    L = np.array([[1, 0, 0], [0, 2, 0]])
    S = np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0]])
    J = np.array([[True, False, True], [False, True, True]])
    monkeypatch.setitem(_measures.EXTERNAL, "RPP", _measures.EXTERNAL["RPP"]._replace(judged_only=False))
    with pytest.raises(ValueError, match=re.escape("unknown parameter 'judged_only' for RPP in "
                                                   "'RPP(judged_only=True)'")):
        rankjit.evaluate(L, S, ["RPP(judged_only=True)"], judged=J, scores_b=S)
    takers = ("alpha_nDCG, alpha_DCG, ERR_IA, nERR_IA, S_recall, P_IA, AP_IA, NRBP, nNRBP, LexiPrecision, "
              "LexiRecall")
    with pytest.raises(ValueError, match=re.escape(f"judged_only=True applies to the list measures and to {takers}; "
                                                   "'RPP' does not take it (evaluate it in a call of its own)")):
        rankjit.evaluate(L, S, ["P@2", "RPP"], judged=J, judged_only=True, scores_b=S)


def test_unjudged_labels_past_a_rows_length_are_padding():
    L = np.array([[1, 0, 5], [0, 2, 7]])  # 5 and 7 are padding (lengths 2)
    S = np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0]])
    J = np.array([[True, False, False], [False, True, False]])
    got = rankjit.evaluate(L, S, ["P@1"], judged=J, judged_only=True, lengths=[2, 2], per_query=True)
    assert got["P@1"].tolist() == [1.0, 1.0]


# ---- against ir_measures (judged_only=True) and trec_eval -J ----------------------------

IRM_NAMES = ("P(judged_only=True)@5", "P(judged_only=True)@20", "AP(judged_only=True)", "RR(judged_only=True)",
             "nDCG(judged_only=True)", "nDCG(judged_only=True)@10", "Rprec(judged_only=True)",
             "Success(judged_only=True)@3", "R(judged_only=True)@10", "SetP(judged_only=True)",
             "IPrec(judged_only=True)@0.3", "AP(judged_only=True)@10")


def _random_trec(tmp_path, seed):
    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for q in range(15):
        docs = [f"d{i}" for i in rng.permutation(60)[: int(rng.integers(1, 50))]]
        for d in docs:
            run.append(f"{q} Q0 {d} 0 {float(rng.integers(0, 8)) / 4!r} s")  # ties: trec_eval's docno order
        qrels += [f"{q} 0 d{i} {int(rng.choice([-1, 0, 0, 1, 2]))}" for i in range(60) if rng.random() < 0.4]
    (tmp_path / "run").write_text("\n".join(run) + "\n")
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    return tmp_path / "qrels", tmp_path / "run"


def _against_ir_measures(qrels_path, run_path):
    ir_measures = pytest.importorskip("ir_measures")
    aligned = align(str(run_path), str(qrels_path))
    ours = aligned.evaluate(list(IRM_NAMES), per_query=True)
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    for name in IRM_NAMES:
        theirs = {r.query_id: r.value for r in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)}
        assert set(theirs) == {str(q) for q in aligned.qids}, name
        got = np.array(ours[name])
        want = np.array([theirs[str(q)] for q in aligned.qids])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_runs_equal_ir_measures(tmp_path, seed):
    _against_ir_measures(*_random_trec(tmp_path, seed))


@pytest.mark.parametrize("run", ["run.ql.cata.txt", "run.rm.cata.txt"])
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_web2012_equals_ir_measures(run):
    if not WEB.is_dir():
        pytest.skip(f"{WEB} not found (../shared/data absent)")
    _against_ir_measures(WEB / "qrels.adhoc.txt", WEB / run)


def test_aligned_judged_only_equals_the_condensed_run(tmp_path):
    # rankjit trec_eval -J condenses the aligned run itself (AlignedRun.judged_only): the same values
    qrels, run = _random_trec(tmp_path, 5)
    aligned = align(str(run), str(qrels))
    names = ["P@5", "AP", "nDCG@10", "RR", "Rprec", "SetF", "IPrec@0.5"]
    got = aligned.evaluate(names, judged_only=True, per_query=True)
    want = aligned.judged_only().evaluate(names, per_query=True)
    for name in names:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def test_condensing_a_run_whose_last_queries_are_empty():
    # -J -c: queries of the qrels the run lacks are empty rows, here the last ones (np.add.reduceat
    # once failed on them)
    from rankjit.io._trec import read_trec_qrels, read_trec_run

    run = read_trec_run(b"q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\n")
    qrels = read_trec_qrels(b"q1 0 a 0\nq1 0 c 1\nq2 0 x 1\nq3 0 y 1\n")
    aligned = align(run, qrels, complete=True)
    condensed = aligned.judged_only()
    assert condensed.offsets.tolist() == [0, 2, 2, 2] and condensed.labels.tolist() == [0, 1]
    got = aligned.evaluate(["P@2", "AP"], judged_only=True, per_query=True)
    assert got["P@2"].tolist() == [0.5, 0.0, 0.0] and got["AP"].tolist() == [0.5, 0.0, 0.0]


def _trec_eval_per_query(binary, qrels, run, flags, measures):
    """{measure: {qid: value}} of the real trec_eval's per-query lines."""
    import subprocess

    args = [binary, "-q", *flags, *(f"-m{m}" for m in measures), str(qrels), str(run)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    values = {}
    for line in out.splitlines():
        name, qid, value = line.split()
        if qid != "all":
            values.setdefault(name, {})[qid] = float(value)
    return values


@pytest.mark.parametrize("source", ["random-3", "random-4", "web2012"])
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_bpref_and_infap_equal_trec_eval_with_and_without_J(tmp_path, trec_eval_bin, source):  # noqa: F811
    # Bpref / infAP of the array API on an aligned run (judged=, pooled= from the qrels) against the
    # real trec_eval's bpref and infAP, per query to its 4 printed decimals, with and without -J
    if source == "web2012":
        if not WEB.is_dir():
            pytest.skip(f"{WEB} not found (../shared/data absent)")
        qrels, run = WEB / "qrels.adhoc.txt", WEB / "run.ql.cata.txt"
    else:
        qrels, run = _random_trec(tmp_path, int(source.split("-")[1]))
    aligned = align(str(run), str(qrels))
    qids = [str(q) for q in aligned.qids]
    for flags, judged_only in (([], False), (["-J"], True)):
        theirs = _trec_eval_per_query(trec_eval_bin, qrels, run, flags, ["bpref", "infAP"])
        ours = aligned.evaluate(["Bpref", "infAP"], judged_only=judged_only, per_query=True)
        for ours_name, theirs_name in (("Bpref", "bpref"), ("infAP", "infAP")):
            want = np.array([theirs[theirs_name][q] for q in qids])
            np.testing.assert_allclose(ours[ours_name], want, rtol=0, atol=5e-5 + 1e-12,
                                       err_msg=f"{ours_name} {flags}")
