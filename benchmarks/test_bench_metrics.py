"""pytest-benchmark cases, one per list measure and one for evaluate() with six measures.

Run: ``python -m pytest benchmarks/test_bench_metrics.py --benchmark-enable``
(the project's pytest options disable benchmarks in the normal test run).
Batch: 100k queries x 100 documents, float32 scores, int8 grades 0..4 (mostly 0).
"""
import numpy as np
import pytest

import rankjit
from rankjit._demo import make_batch

N_QUERIES = 100_000


@pytest.fixture(scope="module")
def batch():
    labels, scores = make_batch(N_QUERIES, 100, 0)
    rankjit.evaluate(labels[:4096], scores[:4096], ["nDCG@10", "AP", "ERR@20", "pFound", "P@10", "RR"])
    return labels, scores


CASES = {
    "precision@10": lambda l, s: rankjit.precision(l, s, 10),
    "recall@100": lambda l, s: rankjit.recall(l, s, 100),
    "hit_rate@5": lambda l, s: rankjit.hit_rate(l, s, 5),
    "rr": lambda l, s: rankjit.rr(l, s),
    "ap": lambda l, s: rankjit.ap(l, s),
    "ap@10": lambda l, s: rankjit.ap(l, s, 10),
    "rprec": lambda l, s: rankjit.rprec(l, s),
    "dcg@10": lambda l, s: rankjit.dcg(l, s, 10),
    "ndcg@10": lambda l, s: rankjit.ndcg(l, s, 10),
    "ndcg@10 linear average-ties": lambda l, s: rankjit.ndcg(l, s, 10, gain="linear", ties="average"),
    "err@20": lambda l, s: rankjit.err(l, s, 20),
    "pfound": lambda l, s: rankjit.pfound(l, s),
    "evaluate six": lambda l, s: rankjit.evaluate(l, s, ["nDCG@10", "AP", "ERR@20", "pFound", "P@10", "RR"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_metric(benchmark, batch, name):
    labels, scores = batch
    fn = CASES[name]
    fn(labels[:4096], scores[:4096])  # compile outside the timing
    result = benchmark(fn, labels, scores)
    assert np.all(np.isfinite(np.asarray(list(result.values()) if isinstance(result, dict) else result)))
