"""PyTerrier's ``pt.Experiment`` through the rankjit provider of ir_measures.

``pt.Experiment`` evaluates with ``ir_measures``; with ``rankjit.integrations.ir_measures``
registered, ir_measures hands the measures the provider supports to rankjit.  Each test runs
the same experiment without and with the provider, checks that the provider computed the
measures it supports (a spy on its evaluator), and that every value is the same: per query to
1e-9, means to 1e-9 (gdeval's ``ERR@k`` prints 5 decimals: half a unit of the last).  Runs
given as DataFrames need no Java (PyTerrier starts none here).  The order of the measure
columns may differ: PyTerrier lists them in the order ir_measures' providers return them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pt = pytest.importorskip("pyterrier", reason="python-terrier is not installed (the test extra has it)")
ir_measures = pytest.importorskip("ir_measures")
pd = pytest.importorskip("pandas")

from rankjit.integrations import ir_measures as rj  # noqa: E402

WEB = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "web2012"
needs_web = pytest.mark.skipif(not WEB.is_dir(), reason=f"{WEB} not found (../shared/data absent)")

#: trec_eval-style names PyTerrier users write, and ir_measures objects
METRICS = ["map", "ndcg", "ndcg_cut_10", "P_10", "recall_100", "recip_rank", "Rprec", "bpref"]
MEASURES = [ir_measures.parse_measure(m) for m in ("nDCG@20", "AP@100", "Judged@10", "ERR@20", "RR(rel=2)",
                                                   "P(rel=2)@5", "SetF", "NumRet")]


@pytest.fixture
def spy(monkeypatch):
    """The measures the rankjit provider is asked to compute (its evaluators' measures)."""
    seen = []
    provider = rj.provider()
    make = provider._evaluator

    def recording(measures, qrels):
        seen.extend(measures)
        return make(measures, qrels)

    monkeypatch.setattr(provider, "_evaluator", recording)
    return seen


def _experiment(runs, topics, qrels, metrics, **kwargs):
    return pt.Experiment(runs, topics, qrels, eval_metrics=metrics, names=[f"run{i}" for i in range(len(runs))],
                         **kwargs)


def _same(slow, fast, what):
    # the same columns; their order follows the order in which ir_measures' providers answer
    assert sorted(slow.columns) == sorted(fast.columns), what
    for col in slow.columns:
        if slow[col].dtype.kind == "f":
            if "measure" in slow.columns:  # per query: one row per (run, query, measure)
                tol = np.where(slow["measure"].str.startswith("ERR@"), 5e-6 + 1e-12, 1e-9)  # gdeval rounds to 5 decimals
            else:
                tol = 5e-6 + 1e-12 if col.startswith("ERR@") else 1e-9
            a, b = fast[col].to_numpy(), slow[col].to_numpy()
            assert (np.isnan(a) == np.isnan(b)).all(), (what, col)  # the baseline's own test columns are NaN
            diff = np.abs(np.where(np.isnan(b), 0.0, a - b))
            assert (diff <= tol).all(), (what, col, slow[diff > tol].head())
        else:
            assert fast[col].tolist() == slow[col].tolist(), f"{what}: {col}"


def _random(seed, n_queries=40):
    rng = np.random.default_rng(seed)
    qrels, runs = [], [[], []]
    for q in range(n_queries):
        docs = [f"d{d}" for d in rng.permutation(300)[:120]]
        for d in docs[:60]:
            qrels.append((str(q + 1), d, int(rng.integers(0, 4))))  # gdeval (ERR@k) refuses negative grades
        for run in runs:
            for d in rng.permutation(docs[20:])[:int(rng.integers(1, 100))]:
                run.append((str(q + 1), d, float(rng.integers(0, 1000)) / 7))  # ties among equal scores
    qrels = pd.DataFrame(qrels, columns=["qid", "docno", "label"])
    runs = [pd.DataFrame(r, columns=["qid", "docno", "score"]) for r in runs]
    topics = pd.DataFrame({"qid": [str(q + 1) for q in range(n_queries)], "query": "x"})  # numeric: gdeval reads numbers
    return topics, qrels, runs


@pytest.mark.parametrize("seed", [0, 1])
def test_experiment_means_and_per_query_equal_without_the_provider(seed, spy):
    topics, qrels, runs = _random(seed)
    metrics = METRICS + MEASURES
    rj.unregister()
    slow = _experiment(runs, topics, qrels, metrics)
    slow_pq = _experiment(runs, topics, qrels, metrics, perquery=True)
    assert not spy
    with rj.registered():
        fast = _experiment(runs, topics, qrels, metrics)
        fast_pq = _experiment(runs, topics, qrels, metrics, perquery=True)
    assert not rj.is_registered()
    computed = {str(m) for m in spy}
    for name in ("AP", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "Rprec", "nDCG@20", "AP@100", "Judged@10",
                 "ERR@20", "RR(rel=2)", "P(rel=2)@5", "SetF", "NumRet"):
        assert name in computed, (name, sorted(computed))
    _same(slow, fast, "means")
    key = ["name", "qid", "measure"]
    _same(slow_pq.sort_values(key).reset_index(drop=True), fast_pq.sort_values(key).reset_index(drop=True),
          "per query")


def test_experiment_significance_tests_read_the_provider_values(spy):
    topics, qrels, runs = _random(2)
    rj.unregister()
    slow = _experiment(runs, topics, qrels, ["map", "ndcg_cut_10"], baseline=0)
    with rj.registered():
        fast = _experiment(runs, topics, qrels, ["map", "ndcg_cut_10"], baseline=0)
    assert spy
    _same(slow, fast, "with a baseline")


@needs_web
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_experiment_on_the_web_track_runs(spy):
    qrels = pt.io.read_qrels(str(WEB / "qrels.adhoc.txt"))
    runs = [pt.io.read_results(str(WEB / name)) for name in ("run.ql.cata.txt", "run.rm.cata.txt")]
    topics = pd.DataFrame({"qid": sorted(set(qrels["qid"])), "query": "x"})
    metrics = METRICS + MEASURES
    rj.unregister()
    slow = _experiment(runs, topics, qrels, metrics, perquery=True)
    with rj.registered():
        fast = _experiment(runs, topics, qrels, metrics, perquery=True)
    assert len(spy) >= len(metrics) - 1
    key = ["name", "qid", "measure"]
    _same(slow.sort_values(key).reset_index(drop=True), fast.sort_values(key).reset_index(drop=True), "Web 2012")
