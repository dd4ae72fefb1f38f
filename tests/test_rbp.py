"""RBP (rank-biased precision) in rankjit, against the plain-Python reference and the real trec_eval.

The reference (``reference.rbp_on_ranking``, itself checked against trec_eval, ir_measures,
ranx and trectools in ``test_rbp_reference.py``) is written from the definition; rankjit
computes RBP as a row of the DCG engine (geometric weights, and for ``scale="query"`` the
query's top grade as the ideal DCG@1 of linear gains).  Here: every gain convention,
cutoff, tie rule and label dtype; ``ideal_counts``; the parameter errors; and trec_eval's
``rbp`` on its own test files and on the TREC 2012 Web runs (``-m rbp`` asked alone: see
``test_rbp_reference.py`` on the uninitialised read in m_rbp.c).
"""
from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from test_rbp_reference import TE_DATA, WEB, needs_te_data, run_te, trec_eval_rbp  # noqa: F401 (a fixture)

import rankjit
import rankjit.io as rio

TOL = dict(rtol=1e-12, atol=1e-14)
PARAMS = [{}, {"p": 0.5}, {"p": 0.95}, {"p": 0.0}, {"p": 1.0}, {"rel": 1}, {"p": 0.6, "rel": 2}, {"rel": 0},
          {"scale": "none"}, {"gain": "linear", "p": 0.3}, {"gain": [0.0, 0.25, 0.5, 2.0, 1.0, 3.0]},
          {"gain": [0.0, 0.25, 0.5, 2.0, 1.0, 3.0], "scale": "none"}, {"gain": [0.0, -1.0, 0.0, -2.0, 0.0, 0.0]},
          {"rel": 3, "scale": "none"}]


def _text(params, k):
    inner = ", ".join(f"{name}={value!r}" for name, value in params.items())
    return f"RBP({inner})" + ("" if k is None else f"@{k}")


def _ragged(seed, n_q=30, top=5, pool=None, longest=24):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, longest + 1, n_q)
    counts[:2] = (0, 1)  # an empty row, a single document
    labels = rng.integers(0, top + 1, counts.sum()) * (rng.random(counts.sum()) < 0.5)
    if pool is None:
        scores = rng.random(counts.sum())
    else:  # tie-heavy
        scores = rng.choice(pool, counts.sum())
    return labels.astype(np.int64), scores, np.concatenate(([0], np.cumsum(counts)))


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable", "average"])
@pytest.mark.parametrize("k", [None, 1, 3, 20])
def test_every_convention_against_the_reference(k, ties):
    if ties == "average":  # tie-heavy short rows (the reference enumerates every order of tied documents)
        labels, scores, offsets = _ragged(7, pool=[0.0, 0.5, 1.0, 2.0, 3.0], longest=9)
    else:
        labels, scores, offsets = _ragged(7)
    texts = [_text(p, k) for p in PARAMS]
    got = rankjit.evaluate(labels, scores, texts, offsets=offsets, ties=ties, per_query=True)
    for params, text in zip(PARAMS, texts):
        want = ref.measure_batch("RBP", labels, scores, k, ties, offsets=offsets, **params)
        np.testing.assert_allclose(got[text], want, **TOL, err_msg=text)


def test_the_function_equals_the_measure_string():
    labels, scores, offsets = _ragged(3)
    for params in PARAMS:
        got = rankjit.rbp(labels, scores, 5, offsets=offsets, **params)
        np.testing.assert_array_equal(got, rankjit.evaluate(labels, scores, [_text(params, 5)], offsets=offsets,
                                                            per_query=True)[_text(params, 5)])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.float32, np.float64])
def test_label_dtypes_agree(dtype):
    labels, scores, offsets = _ragged(11)
    want = rankjit.evaluate(labels, scores, ["RBP", "RBP(rel=2)@5", "RBP(scale='none')"], offsets=offsets,
                            per_query=True)
    got = rankjit.evaluate(labels.astype(dtype), scores.astype(np.float32).astype(np.float64), list(want),
                           offsets=offsets, per_query=True)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_query_scale_takes_the_top_grade_from_ideal_counts():
    # trec_eval scales by the query's largest judged grade, retrieved or not
    labels, scores, offsets = _ragged(5, top=3)
    rng = np.random.default_rng(1)
    n_q = len(offsets) - 1
    ideal = np.zeros((n_q, 7), dtype=np.int64)
    for q in range(n_q):
        row = labels[offsets[q]:offsets[q + 1]]
        ideal[q, :4] = np.bincount(row, minlength=4)
        if q % 3 == 0:
            ideal[q, rng.integers(1, 7)] += 1  # a judged document the ranking did not retrieve
    got = rankjit.rbp(labels, scores, offsets=offsets, ideal_counts=ideal, p=0.7)
    want = ref.measure_batch("RBP", labels, scores, None, "pessimistic", offsets=offsets, ideal_counts=ideal, p=0.7)
    np.testing.assert_allclose(got, want, **TOL)
    # without ideal_counts the row's own top grade: a different value where an unretrieved grade is higher
    alone = rankjit.rbp(labels, scores, offsets=offsets, p=0.7)
    assert (alone >= got).all() and (alone > got).any()


@pytest.mark.parametrize("scale", ["query", "none"])
def test_linear_gains_take_any_label(scale):
    rng = np.random.default_rng(2)
    labels = rng.random((20, 15)) * (rng.random((20, 15)) < 0.4)  # probabilities, as ranx / cwl read them
    scores = rng.random((20, 15))
    got = rankjit.rbp(labels, scores, 10, scale=scale, p=0.9)
    want = ref.measure_batch("RBP", labels, scores, 10, "pessimistic", scale=scale, p=0.9)
    np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("call, error, message", [
    (lambda: rankjit.rbp([[1, 0]], [[2.0, 1.0]], rel=1, gain=[0.0, 1.0]), ValueError,
     r"'RBP': pass either rel= \(binary gains: 1 for label >= rel\) or a gain array, not both"),
    (lambda: rankjit.rbp([[1.5, 0]], [[2.0, 1.0]], gain=[0.0, 1.0, 2.0]), ValueError, r"needs integer grades"),
    (lambda: rankjit.rbp([[1, 0]], [[2.0, 1.0]], scale="max"), ValueError,
     r"unknown scale='max' in 'RBP'; valid values: 'query', 'none'"),
    (lambda: rankjit.rbp([[1.5, 0]], [[2.0, 1.0]], rel=1), ValueError, r"RBP with rel= needs integer grades"),
    (lambda: rankjit.rbp([[1, 0]], [[2.0, 1.0]], p=1.5), ValueError, r"p in 'RBP' must be in \[0, 1\], got 1.5"),
    (lambda: rankjit.rbp([[1, 0]], [[2.0, 1.0]], p=True), TypeError, r"p in 'RBP' must be a number in \[0, 1\]"),
    (lambda: rankjit.rbp([[1, 0]], [[2.0, 1.0]], rel="1"), TypeError, r"rel in 'RBP' must be a finite number"),
    (lambda: rankjit.rbp([[1, 0]], [[2.0, 1.0]], gain="exp2"), ValueError,
     r"unknown gain='exp2' in 'RBP'; valid values: 'linear', or a 1-D array of gains by grade"),
    (lambda: rankjit.rbp([[3, 0]], [[2.0, 1.0]], gain=[0.0, 1.0]), ValueError, r"the gain array covers grades 0..1"),
    (lambda: rankjit.evaluate([[1, 0]], [[2.0, 1.0]], ["RBP(q=0.5)"]), ValueError,
     r"unknown parameter 'q' for RBP in 'RBP\(q=0.5\)'; valid parameters: gain, p, rel, scale"),
])
def test_parameter_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_call_level_rel_does_not_reach_rbp():
    # evaluate(rel=...) is the binary measures' threshold; RBP's gains change only with RBP(rel=...)
    labels, scores, offsets = _ragged(4)
    got = rankjit.evaluate(labels, scores, ["RBP", "RBP(scale='none')"], offsets=offsets, rel=3, per_query=True)
    np.testing.assert_array_equal(got["RBP"], rankjit.rbp(labels, scores, offsets=offsets))
    np.testing.assert_array_equal(got["RBP(scale='none')"], rankjit.rbp(labels, scores, offsets=offsets, scale="none"))


# ---- the real trec_eval: `-m rbp` (p = 0.9) and `-m rbp.p=...`, each asked alone ----------


def _against_trec_eval(binary, qrels, run, p, max_docs=None):
    aligned = rio.align(run, qrels, max_docs=max_docs)
    text = "RBP(p=0.9)" if p is None else f"RBP(p={p})"
    got = rankjit.evaluate(aligned.labels, aligned.scores, [text], offsets=aligned.offsets, ties="stable",
                           ideal_counts=aligned.ideal_counts, per_query=True)[text]
    flags = () if max_docs is None else (f"-M{max_docs}",)
    want = run_te(binary, "rbp" if p is None else f"rbp.p={p}", qrels, run, flags)
    assert sorted(want) == sorted(aligned.qids + ["all"])
    for qid, value in zip(aligned.qids, got):
        assert abs(value - want[qid]) <= 5e-5 + 1e-9, (qid, value, want[qid])  # 4 printed decimals
    assert abs(got.mean() - want["all"]) <= 5e-5 + 1e-9


@needs_te_data
@pytest.mark.parametrize("max_docs", [None, 10])
@pytest.mark.parametrize("p", [None, 0.5, 0.95])
@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.rel_level"])
def test_trec_eval_suite_files(trec_eval_rbp, qrels, p, max_docs):  # noqa: F811 (the fixture)
    _against_trec_eval(trec_eval_rbp, TE_DATA / qrels, TE_DATA / "results.test", p, max_docs)


@pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")
@pytest.mark.parametrize("run", ["run.ql.cata.txt", "run.rm.cata.txt"])
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_trec_eval_web2012(trec_eval_rbp, run):  # noqa: F811 (the fixture)
    # grades -2 (spam: gain 0, not counted in the top grade) .. 4
    _against_trec_eval(trec_eval_rbp, WEB / "qrels.adhoc.txt", WEB / run, None)


# ---- `rankjit trec_eval -m rbp` -----------------------------------------------------------


def _cli_lines(args, capsys):
    from rankjit.cli import main

    rc = main(["trec_eval", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, out.splitlines(), err


@needs_te_data
@pytest.mark.parametrize("measure", ["rbp", "rbp.p=0.5", "rbp.p=0.95"])
@pytest.mark.parametrize("flags", [(), ("-M10",), ("-c",)])
def test_the_cli_prints_trec_eval_lines(trec_eval_rbp, measure, flags, capsys):  # noqa: F811 (the fixture)
    import subprocess

    files = [TE_DATA / "qrels.test", TE_DATA / "results.trunc" if "-c" in flags else TE_DATA / "results.test"]
    rc, lines, err = _cli_lines(["-q", *flags, "-m", measure, *files], capsys)
    assert rc == 0, err
    want = subprocess.run([trec_eval_rbp, "-q", *flags, "-m", measure, *map(str, files)], check=True,
                          capture_output=True, text=True).stdout.splitlines()
    assert lines == want  # the same lines, names (rbp_p=0.5) and digits


@pytest.mark.parametrize("measure, message", [
    ("rbp.q=0.3", r"measure rbp: rankjit does not take the parameter 'q'; only p= \(the persistence\)"),
    ("rbp.1=0.5", r"measure rbp: rankjit does not take per-grade gains \(level=gain\); only p="),
    ("rbp.p=2", r"measure rbp: p must be in \[0, 1\], got '2'"),
    ("rbp.p=x", r"measure rbp: p='x' is not a number"),
    ("rbp.0.5", r"measure rbp: parameter '0.5' is not 'name=value' \(e.g. rbp.p=0.5\)"),
])
def test_the_cli_refuses_bad_rbp_parameters(measure, message):
    from rankjit.io._cli import parse_trec_measures

    with pytest.raises(ValueError, match=message):
        parse_trec_measures([measure])


# ---- RBP's residual (RBPResidual, trec_eval's rbp_resid) -----------------------------------

RESIDUAL_PARAMS = [{}, {"p": 0.5}, {"p": 0.95}, {"p": 0.0}, {"p": 1.0},
                   {"all_judged": "zero"}, {"p": 0.5, "all_judged": "zero"}, {"p": 1.0, "all_judged": "zero"}]


def _residual_text(params, k):
    inner = ", ".join(f"{name}={value!r}" for name, value in params.items())
    return f"RBPResidual({inner})" + ("" if k is None else f"@{k}")


def _judged_flags(labels, seed):
    # every valued document judged (an unjudged one must have label 0), about half of the others
    rng = np.random.default_rng(seed)
    return (labels > 0) | (rng.random(labels.shape) < 0.5)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable", "average"])
@pytest.mark.parametrize("k", [None, 1, 3, 20])
def test_residual_against_the_reference(k, ties):
    if ties == "average":
        labels, scores, offsets = _ragged(11, pool=[0.0, 0.5, 1.0, 2.0, 3.0], longest=9)
    else:
        labels, scores, offsets = _ragged(11, pool=[0.0, 0.5, 1.0, 2.0, 3.0] if ties == "optimistic" else None)
    judged = _judged_flags(labels, 11)
    texts = [_residual_text(p, k) for p in RESIDUAL_PARAMS]
    got = rankjit.evaluate(labels, scores, texts, offsets=offsets, ties=ties, judged=judged, per_query=True)
    for params, text in zip(RESIDUAL_PARAMS, texts):
        want = [ref.measure("RBPResidual", labels[a:b], scores[a:b], k, ties, judged=judged[a:b].tolist(), **params)
                for a, b in zip(offsets[:-1], offsets[1:])]
        np.testing.assert_allclose(got[text], want, **TOL, err_msg=text)
    assert got[texts[0]][0] == 1.0  # the empty row: every rank is past the ranking
    zero = got[_residual_text({"all_judged": "zero"}, k)]
    assert zero[0] == 0.0  # ... and nothing in it is unjudged (trec_eval's convention)
    # the cases the convention changes are there: rows whose top d is all judged (some, not all, of the rows)
    changed = zero != got[texts[0]]
    assert changed[1:].any() and not changed.all(), (k, ties)


def test_residual_is_one_less_the_rbp_of_the_judged_flags():
    # the identity the kernel computes, checked against RBP itself: resid = 1 - RBP(gains = judged flags)
    labels, scores, offsets = _ragged(5)
    judged = _judged_flags(labels, 5)
    for k in (None, 4):
        at = "" if k is None else f"@{k}"
        resid = rankjit.evaluate(labels, scores, [f"RBPResidual(p=0.7){at}"], offsets=offsets, judged=judged,
                                 per_query=True)[f"RBPResidual(p=0.7){at}"]
        flags_rbp = rankjit.evaluate(judged.astype(np.int8), scores, [f"RBP(p=0.7, rel=1){at}"], offsets=offsets,
                                     per_query=True)[f"RBP(p=0.7, rel=1){at}"]
        np.testing.assert_allclose(resid, 1.0 - flags_rbp, rtol=0, atol=1e-15)


def test_residual_function_names_and_judged_only():
    labels, scores, offsets = _ragged(3)
    judged = _judged_flags(labels, 3)
    by_string = rankjit.evaluate(labels, scores, ["RBPResidual(p=0.6)@5", "rbp_resid(p=0.6)@5", "RBP_residual(p=0.6)@5"],
                                 offsets=offsets, judged=judged, per_query=True)
    function = rankjit.rbp_residual(labels, scores, 5, judged=judged, p=0.6, offsets=offsets)
    for values in by_string.values():
        np.testing.assert_array_equal(values, function)
    # judged_only: every document left is judged, so only the tail past d = min(5, judged documents) is left
    only = rankjit.evaluate(labels, scores, ["RBPResidual(p=0.6)@5"], offsets=offsets, judged=judged,
                            judged_only=True, per_query=True)["RBPResidual(p=0.6)@5"]
    n_judged = np.add.reduceat(judged.astype(np.int64), offsets[:-1])[: len(offsets) - 1]
    n_judged[np.diff(offsets) == 0] = 0  # reduceat reads the next row's first cell for an empty row
    np.testing.assert_allclose(only, 0.6 ** np.minimum(5, n_judged), **TOL)


@pytest.mark.parametrize("call, error, message", [
    (lambda: rankjit.evaluate([[1, 0]], [[2, 1]], ["RBPResidual"]), ValueError,
     r"RBPResidual \('RBPResidual'\) needs judged=, the mask of judged documents"),
    (lambda: rankjit.evaluate([[1, 0]], [[2, 1]], ["RBPResidual(p=1.5)"], judged=[[True, True]]), ValueError,
     r"p in 'RBPResidual\(p=1.5\)' must be in \[0, 1\], got 1.5"),
    (lambda: rankjit.rbp_residual([[1, 0]], [[2, 1]], judged=[[True, True]], p=True), TypeError,
     r"p in 'RBPResidual' must be a number in \[0, 1\], got the boolean True"),
    (lambda: rankjit.rbp_residual([[1, 0]], [[2, 1]], judged=[[True, True]], all_judged="none"), ValueError,
     r"unknown all_judged='none' in 'RBPResidual'; valid values: 'tail', 'zero'"),
    (lambda: rankjit.rbp_residual([[1, 0]], [[2, 1]], judged=[[False, True]]), ValueError,
     r"label 1 in query 0 at position 0 is marked unjudged \(judged=False\)"),
])
def test_residual_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def _residual_against_trec_eval(binary, qrels, run, p):
    aligned = rio.align(rio.read_trec_run(run), rio.read_trec_qrels(qrels))
    text = f"RBPResidual(p={p})"
    got = aligned.evaluate([text], per_query=True)[text]
    direct = rankjit.evaluate(aligned.labels, aligned.scores, [text], offsets=aligned.offsets, ties="stable",
                              judged=aligned.judged, per_query=True)[text]
    np.testing.assert_array_equal(got, direct)  # AlignedRun passes trec_eval's judged documents (grade >= 0)
    want = run_te(binary, f"rbp_resid.p={p}", qrels, run)
    # all_judged="zero": trec_eval's convention, so every query agrees (4 printed decimals)
    zero_text = f"RBPResidual(p={p}, all_judged='zero')"
    zero = aligned.evaluate([zero_text], per_query=True)[zero_text]
    assert set(want) - {"all"} == set(aligned.qids)
    for q, qid in enumerate(aligned.qids):
        assert abs(zero[q] - want[qid]) <= 5e-5 + 1e-9, (qid, zero[q], want[qid])
    unjudged = np.add.reduceat((~aligned.judged).astype(np.int64), aligned.offsets[:-1])
    n = np.diff(aligned.offsets)
    checked = 0
    for q, qid in enumerate(aligned.qids):
        if unjudged[q] == 0:  # trec_eval's 0 for a fully judged ranking; the definition's tail p^n
            assert want[qid] == 0.0 and got[q] == pytest.approx(p ** n[q], rel=1e-12, abs=1e-300)
        else:
            assert abs(got[q] - want[qid]) <= 5e-5 + 1e-9, (qid, got[q], want[qid])  # 4 printed decimals
            checked += 1
    assert checked > 0


@needs_te_data
@pytest.mark.parametrize("p", [0.5, 0.9])
def test_residual_trec_eval_suite_files(trec_eval_rbp, p):  # noqa: F811 (the fixture)
    _residual_against_trec_eval(trec_eval_rbp, TE_DATA / "qrels.test", TE_DATA / "results.test", p)


@pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared/data)")
@pytest.mark.slow  # real data: the JIT pass checks it
def test_residual_trec_eval_web2012(trec_eval_rbp):  # noqa: F811 (the fixture)
    # grades -2 (spam) count as unjudged for trec_eval's rbp_resid, and for AlignedRun.evaluate
    _residual_against_trec_eval(trec_eval_rbp, WEB / "qrels.adhoc.txt", WEB / "run.ql.cata.txt", 0.8)
