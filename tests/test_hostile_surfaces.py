"""Hostile input at the edges of rankjit: the ir_measures provider, the CatBoost metric, RPP and the stream.

Each test pins one defect that was found: expectations come from the real library
(ir_measures without the provider, CatBoost's own metrics) or by hand from the
definition on small hand-built data, never from rankjit itself.

* ir_measures: a document judged twice for a query (two qrels rows) is read as each
  ir_measures provider reads it (msmarco: any judgment reaching ``rel``; pytrec_eval and
  judged: the last one), and refused for gdeval's measures.
* CatBoost: a Pool and a group-id array of the same size and labels cannot be told
  apart; ``group_weight`` weights CatBoost's mean; a pandas Series of group ids.
* ``rpp_matrix``: a NaN score names ``scores_stack``, the system and the query.
* ``stream.evaluate(sort=True)``: errors give the row of the file as given.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

# ------------------------------------------------------------------------------------------------
# ir_measures: a document judged twice
# ------------------------------------------------------------------------------------------------

#: q1: document a judged 1, then 0 (rows 0 and 2); q2: document x judged 0, then 2 (rows 3 and 5)
_JUDGED_TWICE = [("q1", "a", 1), ("q1", "b", 0), ("q1", "a", 0), ("q2", "x", 0), ("q2", "y", 2), ("q2", "x", 2)]
#: q1 ranks b, a; q2 ranks x, z, y
_RUN = [("q1", "b", 2.0), ("q1", "a", 1.0), ("q2", "x", 3.0), ("q2", "y", 1.0), ("q2", "z", 2.0)]


def _ir_measures_inputs():
    pd = pytest.importorskip("pandas")
    ir_measures = pytest.importorskip("ir_measures")
    qrels = pd.DataFrame(_JUDGED_TWICE, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(_RUN, columns=["query_id", "doc_id", "score"])
    return ir_measures, qrels, run


def _per_query(ir_measures, measures, qrels, run):
    return {(str(m.measure), m.query_id): m.value for m in ir_measures.iter_calc(measures, qrels, run)}


def test_ir_measures_document_judged_twice_read_as_each_provider():
    ir_measures, qrels, run = _ir_measures_inputs()
    from ir_measures import AP, RR, Judged, P, Qrel, ScoredDoc, nDCG

    from rankjit.integrations import ir_measures as rj

    # RR@10: msmarco; RR, AP, nDCG@10, P@1: pytrec_eval; Judged@10: judged
    measures = [RR @ 10, RR(rel=2) @ 10, RR, AP, nDCG @ 10, P @ 1, Judged @ 10]
    want = _per_query(ir_measures, measures, qrels, run)  # ir_measures' own providers
    # by hand: msmarco counts a relevant when any judgment reaches rel (rank 2 in q1), pytrec_eval keeps
    # the last judgment (q1 has no relevant document then); x is relevant at rank 1 of q2 either way
    assert want[("RR@10", "q1")] == 0.5 and want[("RR", "q1")] == 0.0
    assert want[("RR@10", "q2")] == 1.0 and want[("RR(rel=2)@10", "q2")] == 1.0
    tuples = ([Qrel(*r) for r in _JUDGED_TWICE], [ScoredDoc(*r) for r in _RUN])
    with rj.registered():
        got_frames = _per_query(ir_measures, measures, qrels, run)
        got_tuples = _per_query(ir_measures, measures, *tuples)
        got_generators = _per_query(ir_measures, measures, iter(tuples[0]), iter(tuples[1]))
        agg = ir_measures.calc_aggregate([RR @ 10], qrels, run)
    for got in (got_frames, got_tuples, got_generators):
        assert got.keys() == want.keys()
        for key, value in want.items():
            assert got[key] == pytest.approx(value, abs=1e-12), key
    assert agg[RR @ 10] == pytest.approx(0.75, abs=1e-12)  # (0.5 + 1) / 2, as ir_measures alone


@pytest.mark.parametrize("name", ["ERR@10", "nDCG(dcg='exp-log2')@10"])
def test_ir_measures_gdeval_refuses_a_document_judged_twice(name):
    ir_measures, qrels, run = _ir_measures_inputs()
    from rankjit.integrations import ir_measures as rj

    measure = ir_measures.parse_measure(name)
    with rj.registered(), pytest.raises(
            ValueError, match=r"qrels: document 'a' is judged twice for query 'q1' \(rows 0 and 2 of the qrels, "
                              rf"0-based\); ir_measures computes {re.escape(name)} with gdeval, which reads both "
                              r"judgments .* keep one judgment per query and document, e\.g\. "
                              r"qrels\.drop_duplicates\(\['query_id', 'doc_id'\], keep='last'\)"):
        ir_measures.calc_aggregate([measure], qrels, run)
    # qrels with one judgment per document: computed
    with rj.registered():
        value = ir_measures.calc_aggregate([measure], qrels.drop_duplicates(["query_id", "doc_id"], keep="last"),
                                           run)[measure]
    assert 0.0 < value <= 1.0


# ------------------------------------------------------------------------------------------------
# CatBoost
# ------------------------------------------------------------------------------------------------


def _catboost():
    return pytest.importorskip("catboost")


def test_catboost_pool_and_group_ids_of_the_same_size_and_labels_are_refused():
    cb = _catboost()
    from rankjit.integrations.catboost import metric

    y = np.array([1.0, 0.0, 1.0, 0.0])
    train = cb.Pool(np.zeros((4, 1)), y, group_id=[0, 0, 1, 1])
    m = metric("P@1", groups=[train, np.array([0, 1, 1, 1])])  # an eval set of 4 rows, given by its group ids
    scores = np.array([0.0, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"CatBoost evaluated a dataset of 4 rows, and 2 datasets in groups= have "
                                         r"4 rows but different groups \(groups\[0\] \(a Pool\), groups\[1\] \(group "
                                         r"ids\)\): their labels do not tell them apart .* pass each dataset as its "
                                         r"catboost\.Pool, with labels that differ"):
        m.evaluate((scores,), y, None)
    # other labels than the Pool's: the group-id array's dataset, groups [1] and [0, 0, 1] (top: score 3,
    # label 1): P@1 = 1 in both (the Pool's groups [1, 0] and [0, 1] would give 0.5)
    assert m.evaluate((scores,), np.array([1.0, 0.0, 0.0, 1.0]), None)[0] == 1.0
    # two Pools, neither with these labels: none is this dataset
    other = cb.Pool(np.zeros((4, 1)), [1.0, 1.0, 0.0, 0.0], group_id=[0, 1, 1, 1])
    with pytest.raises(ValueError, match=r"CatBoost evaluated a dataset of 4 rows whose labels are those of none of "
                                         r"the Pools of 4 rows in groups= \(groups\[0\] \(a Pool\), groups\[1\] \(a "
                                         r"Pool\)\); pass the groups of every dataset CatBoost evaluates"):
        metric("P@1", groups=[train, other]).evaluate((scores,), np.array([0.0, 0.0, 0.0, 1.0]), None)


#: (CatBoost metric, rankjit measure, targets divided by): ERR and PFound read targets in [0, 1]
_CATBOOST_METRICS = [("NDCG:top=5", "nDCG@5", 1), ("DCG:top=5", "DCG@5", 1), ("MRR", "RR", 1),
                     ("ERR:top=5", "ERR@5", 3), ("PFound:top=5", "pFound@5", 3), ("MAP:top=5", "AP@5", 1),
                     ("PrecisionAt:top=5", "P@5", 1), ("RecallAt:top=5", "R@5", 1)]


def _weighted_groups(seed=4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 8, size=40)
    gid = np.repeat(np.arange(sizes.shape[0]), sizes)
    labels = rng.integers(0, 4, size=gid.shape[0]).astype(np.float64)
    scores = rng.integers(0, 3, size=gid.shape[0]).astype(np.float64)  # ties
    group_weight = np.repeat(rng.uniform(0.1, 3.0, size=sizes.shape[0]), sizes)
    return gid, labels, scores, group_weight


@pytest.mark.parametrize("theirs, ours, scale", _CATBOOST_METRICS)
def test_catboost_group_weight_weights_the_mean_as_catboost(theirs, ours, scale):
    cb = _catboost()
    from catboost.utils import eval_metric

    from rankjit.integrations.catboost import metric

    gid, labels, scores, gw = _weighted_groups()
    targets = (labels / scale).astype(np.float32).astype(np.float64)  # CatBoost keeps targets as float32
    pool = cb.Pool(np.zeros((gid.shape[0], 1)), targets, group_id=gid, group_weight=gw)
    expected = eval_metric(targets, scores, theirs, group_id=gid, group_weight=gw)[0]
    m = metric(ours, groups=[pool], compat="catboost")
    value, weight = m.evaluate((scores,), targets, gw)  # CatBoost passes group_weight on each row
    tol = 1e-9 if scale == 1 else 1e-7  # ERR, PFound: float32 targets (as in test_integrations_catboost)
    assert m.get_final_error(value, weight) == pytest.approx(expected, abs=tol * max(1.0, abs(expected)))
    if theirs.startswith(("MAP", "PrecisionAt", "RecallAt")):  # CatBoost reads no group_weight there
        assert expected == pytest.approx(eval_metric(targets, scores, theirs, group_id=gid)[0], abs=1e-12)
    else:
        assert abs(expected - eval_metric(targets, scores, theirs, group_id=gid)[0]) > 1e-6


@pytest.mark.parametrize("theirs, key, ours", [("NDCG:top=5", "NDCG:top=5;type=Base", "nDCG@5"),
                                               ("MAP:top=5", "MAP:top=5", "AP@5")])
def test_catboost_group_weight_while_training(theirs, key, ours):
    cb = _catboost()
    from rankjit.integrations.catboost import metric

    gid, labels, _, gw = _weighted_groups(seed=1)
    X = np.random.default_rng(1).normal(size=(gid.shape[0], 4))
    pool = cb.Pool(X, labels, group_id=gid, group_weight=gw)
    model = cb.CatBoost(dict(loss_function="YetiRank", iterations=3, depth=2, custom_metric=[theirs],
                             eval_metric=metric(ours, groups=[pool], compat="catboost"), verbose=False,
                             thread_count=1, random_seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CatBoost cannot numba-compile Python metrics and says so
        model.fit(pool, eval_set=pool)
    ev = model.get_evals_result()["validation"]
    assert len(ev[key]) == 3
    np.testing.assert_allclose(ev[f"{ours}[catboost]"], ev[key], rtol=0, atol=1e-9)


def test_catboost_object_weights_and_weights_group_ids_cannot_attribute():
    cb = _catboost()
    from catboost.utils import eval_metric

    from rankjit.integrations.catboost import metric

    gid, labels, scores, gw = _weighted_groups()
    object_weight = np.random.default_rng(0).uniform(0.5, 2.0, size=gid.shape[0])
    # object weights: CatBoost's NDCG does not read them (the same value as without weights)
    expected = eval_metric(labels, scores, "NDCG:top=5", group_id=gid, weight=object_weight)[0]
    assert expected == pytest.approx(eval_metric(labels, scores, "NDCG:top=5", group_id=gid)[0], abs=1e-12)
    pool = cb.Pool(np.zeros((gid.shape[0], 1)), labels, group_id=gid, weight=object_weight)
    for groups in (pool, gid):  # weights that differ within a group are object weights, whatever groups= is
        got = metric("nDCG@5", groups=groups, compat="catboost").evaluate((scores,), labels, object_weight)[0]
        assert got == pytest.approx(expected, abs=1e-9)
    # group ids and weights equal within each group: group_weight or object weights? Refused, asking for the Pool
    with pytest.raises(ValueError, match=r"nDCG@5\[catboost\]: CatBoost passed row weights, equal within each "
                                         r"group, for the dataset of \d+ rows given as groups\[0\] \(group ids\); "
                                         r"they are either its group_weight .* or object weights .*; pass the "
                                         r"catboost\.Pool itself in groups="):
        metric("nDCG@5", groups=gid, compat="catboost").evaluate((scores,), labels, gw)
    # without a preset, queries count equally (documented)
    plain = metric("nDCG@5", groups=gid).evaluate((scores,), labels, gw)[0]
    assert plain == metric("nDCG@5", groups=gid).evaluate((scores,), labels, None)[0]


def test_catboost_groups_as_a_pandas_series():
    pd = pytest.importorskip("pandas")
    _catboost()
    from catboost.utils import eval_metric

    from rankjit.integrations.catboost import metric

    gid, labels, scores, _ = _weighted_groups()
    expected = eval_metric(labels, scores, "NDCG:top=5", group_id=gid)[0]
    series = pd.Series(gid, index=np.arange(gid.shape[0])[::-1])  # (the index plays no part)
    m = metric("nDCG@5", groups=series, compat="catboost")
    assert m.evaluate((scores,), labels, None)[0] == pytest.approx(expected, abs=1e-9)
    with pytest.raises(ValueError, match=r"groups= got a DataFrame of shape \(2, 2\); pass a catboost\.Pool, a 1-D "
                                         r"group-id column \(one id per row\)"):
        metric("nDCG@5", groups=pd.DataFrame({"a": [0, 1], "b": [0, 1]}))


# ------------------------------------------------------------------------------------------------
# rpp_matrix: a NaN score of one system
# ------------------------------------------------------------------------------------------------


def test_rpp_matrix_nan_names_scores_stack_the_system_and_the_query():
    import rankjit.preference as P

    labels = np.array([[1, 0, 1, 0], [0, 1, 1, 0]])
    stack = np.array([[[4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]],
                      [[1.0, 4.0, 3.0, 2.0], [1.0, 2.0, np.nan, 4.0]],  # system 1, query 1, position 2
                      [[4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]]])
    msg = r"NaN score in query 1 at position 2 \(scores_stack\[1\], system 1\); replace NaN scores"
    for fn in (P.rpp_matrix, P.lexiprecision_matrix, P.lexirecall_matrix):
        with pytest.raises(ValueError, match=msg):
            fn(labels, stack)
    with pytest.raises(ValueError, match=msg):  # flat rows with offsets
        P.rpp_matrix(labels.ravel(), stack.reshape(3, -1), offsets=np.array([0, 4, 8]))
    nuggets = np.zeros((2, 4, 2), np.int8)
    nuggets[0, 0, 0] = nuggets[1, 1, 1] = 1
    with pytest.raises(ValueError, match=msg):  # subtopic RPP
        P.rpp_matrix(None, stack, nuggets=nuggets)
    first = stack.copy()
    first[1, 1, 2] = 3.0
    first[0, 0, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN score in query 0 at position 1 \(scores_stack\[0\], system 0\)"):
        P.rpp_matrix(labels, first)
    with pytest.raises(ValueError, match=r"NaN score in query 0 at position 1 \(scores_stack\[0\], system 0\)"):
        P.rpp_matrix(None, first, nuggets=nuggets)


# ------------------------------------------------------------------------------------------------
# stream.evaluate(sort=True): rows of the file as given
# ------------------------------------------------------------------------------------------------


def _unsorted_log(tmp_path, **columns):
    pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    # rows 0..5 of the file: query 2 at rows 0, 2, 5; query 1 at rows 1, 3; query 3 at row 4
    data = {"q": [2, 1, 2, 1, 3, 2], "y": [1, 1, 1, 1, 0, 1], "s": [0.5, 0.4, 0.3, 0.2, 0.1, 0.05]}
    data.update(columns)
    path = tmp_path / "unsorted.parquet"
    pq.write_table(pa.table(data), path)
    return path


@pytest.mark.parametrize("batch_size", [100, 2])
def test_stream_sort_errors_give_the_row_of_the_file_as_given(tmp_path, batch_size):
    from rankjit.stream import evaluate

    def run(path, **kw):
        return evaluate(path, ["AP"], query="q", label="y", score="s", sort=True, batch_size=batch_size, **kw)

    # a negative label at row 2 of the file (query 2, its second row): row 3 of the sorted copy
    with pytest.raises(ValueError, match=r"negative label -1 in query 2 \(index 1 in the log\) at position 1 \(row 2 "
                                         r"of the log\)"):
        run(_unsorted_log(tmp_path, y=[1, 1, -1, 1, 0, 1]))
    with pytest.raises(ValueError, match=r"score column 's' holds a NaN at row 2 of the log \(0-based\), in query 2"):
        run(_unsorted_log(tmp_path, s=[0.5, 0.4, float("nan"), 0.2, 0.1, 0.05]))
    big = [5, 4, 2 ** 60 + 1, 2, 1, 0]  # int64 scores float64 cannot hold exactly, at row 2
    with pytest.raises(ValueError, match=r"score column 's', row 2 of the log \(0-based\): 1152921504606846977"):
        run(_unsorted_log(tmp_path, s=big))
    path = _unsorted_log(tmp_path)
    # n_relevant of query 2 (index 1; 3 relevant rows) too small: its rows are listed, not a range
    with pytest.raises(ValueError, match=r"AP of query 2 \(index 1 in the log; rows 0, 2, 5 of the log\) .*"
                                         r"\(n_relevant\[1\] = 1, but 3 documents of the row have label >= 1\)"):
        run(path, n_relevant=np.array([2, 1, 0]))
    with pytest.raises(ValueError, match=r"n_relevant holds 2 counts, one per query of the log in its order, but the "
                                         r"log has more queries: query 3 \(index 2 in the log\) starts at row 4 of "
                                         r"the log"):
        run(path, n_relevant=np.array([2, 3]))
    with pytest.raises(ValueError, match=r"n_relevant holds 1 count, .* query 2 \(index 1 in the log\) starts at row 0 "
                                         r"of the log"):
        run(path, n_relevant=np.array([2]))
    # the numbers: AP of query 1 (both relevant) and 2 (all three relevant) is 1, query 3 has none: 0
    assert run(path).means["AP"] == pytest.approx(2 / 3, abs=1e-15)
