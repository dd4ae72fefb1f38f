"""Cross-checks against independent peers: scikit-learn and trec_eval (pytrec_eval).

* scikit-learn ``ndcg_score`` / ``dcg_score``: linear gain, 1/log2(r+1) discount, ties
  averaged over every order (McSherry & Najork) -> rankjit ``gain="linear", ties="average"``.
* trec_eval (pytrec_eval-terrier): ties broken by docno, descending.  Documents get docnos
  whose descending order is their input order, so trec_eval's rule equals
  ``ties="stable"``.  trec_eval's R and ideal DCG count every judged document of the
  query: in the random tests every document of the row is judged (so row-based and
  judged-based agree), and one test leaves judged documents out of the run and passes
  ``n_relevant=`` / ``ideal_counts=``.
"""
from __future__ import annotations

import numpy as np
import pytest

import rankjit

sklearn_metrics = pytest.importorskip("sklearn.metrics")
pytrec_eval = pytest.importorskip("pytrec_eval")

SEEDS = range(12)


def _random_padded(rng, n_q, min_len, max_len, score_pool=None, max_grade=3):
    lens = rng.integers(min_len, max_len + 1, size=n_q)
    width = int(lens.max())
    labels = np.full((n_q, width), -1, dtype=np.int64)  # padding (ignored through lengths=)
    scores = np.full((n_q, width), np.nan)
    for q, n in enumerate(lens):
        labels[q, :n] = rng.choice(max_grade + 1, size=n, p=[0.5, 0.25, 0.15, 0.1][: max_grade + 1] / np.sum(
            [0.5, 0.25, 0.15, 0.1][: max_grade + 1]))
        if rng.random() < 0.15:
            labels[q, :n] = 0  # no relevant document
        if score_pool is None:
            scores[q, :n] = rng.normal(size=n)
        else:
            scores[q, :n] = rng.choice(score_pool, size=n)
    return labels, scores, lens


# ------------------------------------------------------------------------------------------
# scikit-learn


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [None, 1, 3, 5, 12])
def test_sklearn_ndcg_dcg_average_ties(seed, k):
    rng = np.random.default_rng(seed)
    labels, scores, lens = _random_padded(rng, 8, 2, 10, score_pool=[0.0, 0.5, 1.0, 2.0])
    got_ndcg = rankjit.ndcg(labels, scores, k, gain="linear", ties="average", lengths=lens)
    got_dcg = rankjit.dcg(labels, scores, k, gain="linear", ties="average", lengths=lens)
    got_eval = rankjit.evaluate(labels, scores, ["nDCG(gain='linear')" + ("" if k is None else f"@{k}")],
                                lengths=lens, ties="average", per_query=True)
    for q, n in enumerate(lens):
        y, s = labels[q:q + 1, :n], scores[q:q + 1, :n]
        exp_ndcg = sklearn_metrics.ndcg_score(y, s, k=k)
        exp_dcg = sklearn_metrics.dcg_score(y, s, k=k)
        np.testing.assert_allclose(got_ndcg[q], exp_ndcg, rtol=1e-10, atol=1e-12, err_msg=f"query {q}")
        np.testing.assert_allclose(got_dcg[q], exp_dcg, rtol=1e-10, atol=1e-12, err_msg=f"query {q}")
        np.testing.assert_allclose(list(got_eval.values())[0][q], exp_ndcg, rtol=1e-10, atol=1e-12)


def test_sklearn_batch_mean():
    # sklearn's batch call (full rows) returns the mean over queries: compare with evaluate()'s mean
    rng = np.random.default_rng(99)
    labels = rng.integers(0, 4, size=(50, 7))
    scores = rng.choice([0.0, 1.0, 2.0], size=(50, 7))
    for k in (None, 2, 5):
        name = "nDCG(gain='linear')" + ("" if k is None else f"@{k}")
        got = rankjit.evaluate(labels, scores, [name], ties="average")[name]
        assert got == pytest.approx(sklearn_metrics.ndcg_score(labels, scores, k=k), rel=1e-10, abs=1e-12)


# ------------------------------------------------------------------------------------------
# trec_eval


def _docno(i):
    # descending docno order == input order, so trec_eval's tie rule is ties="stable"
    return f"d{9999 - i:05d}"


def _trec(labels, scores, lens, measures, extra_judged=None, relevance_level=1):
    qrels, run = {}, {}
    for q, n in enumerate(lens):
        qid = f"q{q}"
        qrels[qid] = {_docno(i): int(labels[q, i]) for i in range(n)}
        run[qid] = {_docno(i): float(scores[q, i]) for i in range(n)}
        if extra_judged is not None:
            for j, g in enumerate(extra_judged[q]):
                qrels[qid][f"x{j:04d}"] = int(g)  # judged, never retrieved
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=relevance_level)
    res = ev.evaluate(run)
    return lambda name: np.array([res[f"q{q}"][name] for q in range(len(lens))])


CUTS = (1, 3, 5, 10, 20)
TREC_MEASURES = [
    "P." + ",".join(map(str, CUTS)), "map", "map_cut." + ",".join(map(str, CUTS)), "recip_rank", "ndcg",
    "ndcg_cut." + ",".join(map(str, CUTS)), "recall." + ",".join(map(str, CUTS)), "Rprec",
    "success." + ",".join(map(str, CUTS)),
]


@pytest.mark.parametrize("seed", SEEDS)
def test_trec_eval_all_judged(seed):
    rng = np.random.default_rng(seed)
    pool = None if seed % 2 else [0.0, 0.25, 0.5, 1.0]  # even seeds: many ties (stable == docno rule)
    labels, scores, lens = _random_padded(rng, 10, 1, 15, score_pool=pool)
    trec = _trec(labels, scores, lens, TREC_MEASURES)
    kw = dict(lengths=lens, ties="stable")
    tol = dict(rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rankjit.ap(labels, scores, **kw), trec("map"), **tol)
    np.testing.assert_allclose(rankjit.rr(labels, scores, **kw), trec("recip_rank"), **tol)
    np.testing.assert_allclose(rankjit.ndcg(labels, scores, gain="linear", **kw), trec("ndcg"), **tol)
    np.testing.assert_allclose(rankjit.rprec(labels, scores, **kw), trec("Rprec"), **tol)
    for k in CUTS:
        np.testing.assert_allclose(rankjit.precision(labels, scores, k, **kw), trec(f"P_{k}"), **tol)
        np.testing.assert_allclose(rankjit.ap(labels, scores, k, denominator="r", **kw), trec(f"map_cut_{k}"), **tol)
        np.testing.assert_allclose(rankjit.ndcg(labels, scores, k, gain="linear", **kw), trec(f"ndcg_cut_{k}"), **tol)
        np.testing.assert_allclose(rankjit.recall(labels, scores, k, **kw), trec(f"recall_{k}"), **tol)
        np.testing.assert_allclose(rankjit.hit_rate(labels, scores, k, **kw), trec(f"success_{k}"), **tol)
    names = ["AP", "RR", "nDCG(gain='linear')", "Rprec"] + [f"P@{k}" for k in CUTS] + \
        [f"AP(denominator='r')@{k}" for k in CUTS] + [f"nDCG(gain='linear')@{k}" for k in CUTS] + \
        [f"R@{k}" for k in CUTS] + [f"Success@{k}" for k in CUTS]
    trec_names = ["map", "recip_rank", "ndcg", "Rprec"] + [f"P_{k}" for k in CUTS] + \
        [f"map_cut_{k}" for k in CUTS] + [f"ndcg_cut_{k}" for k in CUTS] + [f"recall_{k}" for k in CUTS] + \
        [f"success_{k}" for k in CUTS]
    res = rankjit.evaluate(labels, scores, names, per_query=True, **kw)
    for name, tname in zip(names, trec_names):
        np.testing.assert_allclose(res[name], trec(tname), err_msg=name, **tol)


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_trec_eval_relevance_level(seed):
    # trec_eval's relevance_level=2 <-> rel=2 for the binary measures
    rng = np.random.default_rng(100 + seed)
    labels, scores, lens = _random_padded(rng, 10, 1, 12)
    trec = _trec(labels, scores, lens, ["P.5", "map", "recip_rank"], relevance_level=2)
    kw = dict(lengths=lens, ties="stable", rel=2)
    np.testing.assert_allclose(rankjit.precision(labels, scores, 5, **kw), trec("P_5"), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rankjit.ap(labels, scores, **kw), trec("map"), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rankjit.rr(labels, scores, **kw), trec("recip_rank"), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_trec_eval_judged_documents_missing_from_run(seed):
    """Judged documents the run did not retrieve: R from n_relevant=, ideal DCG from ideal_counts=."""
    rng = np.random.default_rng(200 + seed)
    labels, scores, lens = _random_padded(rng, 10, 1, 12)
    n_q = len(lens)
    extra = [rng.choice(4, size=int(rng.integers(0, 6)), p=[0.4, 0.3, 0.2, 0.1]) for _ in range(n_q)]
    trec = _trec(labels, scores, lens, TREC_MEASURES, extra_judged=extra)
    # all judged documents of each query: the row's plus the extra ones
    ideal = np.zeros((n_q, 4), dtype=np.int64)
    for q in range(n_q):
        for g in list(labels[q, : lens[q]]) + list(extra[q]):
            ideal[q, g] += 1
    nrel = ideal[:, 1:].sum(axis=1)
    kw = dict(lengths=lens, ties="stable")
    tol = dict(rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rankjit.ap(labels, scores, n_relevant=nrel, **kw), trec("map"), **tol)
    np.testing.assert_allclose(rankjit.rprec(labels, scores, n_relevant=nrel, **kw), trec("Rprec"), **tol)
    np.testing.assert_allclose(rankjit.ndcg(labels, scores, gain="linear", ideal_counts=ideal, **kw), trec("ndcg"),
                               **tol)
    for k in CUTS:
        np.testing.assert_allclose(rankjit.ap(labels, scores, k, denominator="r", n_relevant=nrel, **kw),
                                   trec(f"map_cut_{k}"), **tol)
        np.testing.assert_allclose(rankjit.recall(labels, scores, k, n_relevant=nrel, **kw), trec(f"recall_{k}"),
                                   **tol)
        np.testing.assert_allclose(rankjit.ndcg(labels, scores, k, gain="linear", ideal_counts=ideal, **kw),
                                   trec(f"ndcg_cut_{k}"), **tol)
    # evaluate(): ideal_counts alone also gives R (documented), n_relevant together with it too
    names = ["AP", "Rprec", "nDCG(gain='linear')", "AP(denominator='r')@5", "R@5", "nDCG(gain='linear')@5"]
    tnames = ["map", "Rprec", "ndcg", "map_cut_5", "recall_5", "ndcg_cut_5"]
    for extra_kw in ({"ideal_counts": ideal}, {"ideal_counts": ideal, "n_relevant": nrel}):
        res = rankjit.evaluate(labels, scores, names, per_query=True, **kw, **extra_kw)
        for name, tname in zip(names, tnames):
            np.testing.assert_allclose(res[name], trec(tname), err_msg=f"{name} {list(extra_kw)}", **tol)
