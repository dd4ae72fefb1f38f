"""The trec_eval preset against trec_eval's own expected per-query output (out.test.aq).

Only the ranking and the judged-document counts come from rankjit.io (align, which
orders tied documents by docno descending); every convention of the measures
themselves (linear gain, AP divided by R, P@k divided by k, 0 for no relevant
document) comes from ``compat="trec_eval"``.
"""
from pathlib import Path

import pytest

from rankjit import presets
from rankjit.io import align, read_trec_qrels, read_trec_run

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"

# trec_eval measure -> rankjit name (the preset fills in the conventions)
MEASURES = {
    "map": "AP",
    "P_10": "P@10",
    "P_100": "P@100",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "ndcg": "nDCG",
    "ndcg_cut_10": "nDCG@10",
    "map_cut_100": "AP@100",
    "recall_10": "R@10",
    "success_10": "Success@10",
}


def _expected():
    per_query = {}
    for line in (DATA / "out.test.aq").read_text().splitlines():
        name, qid, value = line.split()
        if name in MEASURES and qid != "all":
            per_query.setdefault(name, {})[qid] = float(value)
    return per_query


@pytest.mark.skipif(not DATA.exists(), reason=f"trec_eval test data not found at {DATA} (shared data folder absent)")
def test_trec_eval_preset_reproduces_trec_eval_per_query():
    aligned = align(read_trec_run(DATA / "results.test"), read_trec_qrels(DATA / "qrels.test"))
    got = presets.evaluate(
        aligned.labels, aligned.scores, list(MEASURES.values()), compat="trec_eval", offsets=aligned.offsets,
        ideal_counts=aligned.ideal_counts, n_relevant=aligned.n_relevant, per_query=True,
    )
    expected = _expected()
    assert set(expected) == set(MEASURES)
    for te_name, rj_name in MEASURES.items():
        want = expected[te_name]
        assert sorted(want) == sorted(aligned.qids)
        values = dict(zip(aligned.qids, got[rj_name]))
        for qid, value in want.items():
            # trec_eval prints 4 decimals
            assert abs(values[qid] - value) <= 5e-5 + 1e-12, (te_name, qid, values[qid], value)

