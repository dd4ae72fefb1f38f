"""Hostile input to the Python API found by the nineteenth session's red-team (issue 14).

Each case once gave a wrong number with no error or leaked an exception naming nothing;
the expected values are derived from the input itself (which document scores higher),
never from the code under test.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import rankjit

LONG_DOUBLE_IS_WIDER = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant
needs_wide_long_double = pytest.mark.skipif(not LONG_DOUBLE_IS_WIDER,
                                            reason="np.longdouble is float64 on this platform")


@needs_wide_long_double
def test_long_double_scores_float64_cannot_hold_are_refused():
    # the relevant document scores 2**-60 higher: float64 would tie the two (RR 0.5 under pessimistic ties)
    scores = np.array([[1.0, 1.0]], dtype=np.longdouble)
    scores[0, 1] += np.longdouble(2.0) ** -60
    with pytest.raises(ValueError, match=r"^scores\[0, 1\] = 1\.0000000000000000009e\+00 \(float128\) cannot be "
                                         r"ranked exactly: float64 does not hold it, so distinct scores could tie"):
        rankjit.evaluate(np.array([[0, 1]]), scores, ["RR"])


@needs_wide_long_double
def test_long_double_values_float64_holds_are_read_as_float64():
    labels = np.array([[0, 2, 1]], dtype=np.longdouble)
    scores = np.array([[0.5, 2.0, -1.0]], dtype=np.longdouble)
    want = rankjit.evaluate(labels.astype(np.float64), scores.astype(np.float64), ["RR", "nDCG@3", "AP"])
    assert rankjit.evaluate(labels, scores, ["RR", "nDCG@3", "AP"]) == want
    assert rankjit.ndcg(labels, scores, 3)[0] == want["nDCG@3"]


@needs_wide_long_double
def test_long_double_labels_beyond_float64_are_refused():
    labels = np.array([[0, np.longdouble("1e400")]])
    with pytest.raises(ValueError, match=r"^labels\[0, 1\] = 1\.e\+400 \(float128\) is not a float64 number, and "
                                         "rankjit computes in float64"):
        rankjit.evaluate(labels, np.array([[1.0, 2.0]]), ["nDCG@10"])


def test_masked_arrays_with_masked_cells_are_refused():
    # the masked third document (score 9) would be ranked first: RR 1 instead of the intended 0.5
    labels = np.ma.masked_array([[0, 1, 1]], mask=[[False, False, True]])
    scores = np.ma.masked_array([[3.0, 2.0, 9.0]], mask=[[False, False, True]])
    msg = re.escape("labels is a numpy masked array with masked entries, and rankjit does not read numpy masks "
                    "(the masked cells would be evaluated): pass labels.data and mask= (True = a real document)")
    with pytest.raises(TypeError, match="^" + msg):
        rankjit.evaluate(labels, scores, ["RR"])
    with pytest.raises(TypeError, match=r"^scores is a numpy masked array with masked entries"):
        rankjit.evaluate(labels.data, scores, ["RR"])
    honoured = rankjit.evaluate(labels.data, scores.data, ["RR"], mask=~np.ma.getmaskarray(labels))
    assert honoured == {"RR": 0.5}


def test_masked_arrays_without_masked_cells_are_read():
    labels = np.ma.masked_array([[0, 1]])
    scores = np.ma.masked_array([[1.0, 2.0]], mask=[[False, False]])
    assert rankjit.evaluate(labels, scores, ["RR"]) == {"RR": 1.0}


def test_stream_keeps_float64_rows_carried_into_a_float32_batch():
    pa = pytest.importorskip("pyarrow")
    from rankjit.stream import evaluate as stream_evaluate

    # query 1 is cut by the batch boundary; its relevant document scores 1e-12 higher, which float32 rounds away
    b1 = pa.record_batch({"q": pa.array([1, 1]), "y": pa.array([1, 0]),
                          "s": pa.array([0.1 + 1e-12, 0.1], pa.float64())})
    b2 = pa.record_batch({"q": pa.array([1, 2]), "y": pa.array([0, 1]), "s": pa.array([0.0, 1.0], pa.float32())})
    res = stream_evaluate([b1, b2], ["RR", "P@1"], query="q", label="y", score="s", per_query=True)
    assert res.per_query["RR"].tolist() == [1.0, 1.0]
    assert res.per_query["P@1"].tolist() == [1.0, 1.0]
    want = rankjit.evaluate(np.array([1, 0, 0, 1]), np.array([0.1 + 1e-12, 0.1, 0.0, 1.0]), ["RR", "P@1"],
                            offsets=np.array([0, 3, 4]))
    assert res.means == want


def test_stream_refuses_carried_integers_the_common_type_cannot_hold():
    pa = pytest.importorskip("pyarrow")
    from rankjit.stream import evaluate as stream_evaluate

    b1 = pa.record_batch({"q": pa.array([1, 1]), "y": pa.array([1, 0]), "s": pa.array([2**53 + 1, 2**53])})
    b2 = pa.record_batch({"q": pa.array([1, 2]), "y": pa.array([0, 1]), "s": pa.array([0.0, 1.0])})
    with pytest.raises(ValueError, match=r"^the batch starting at row 2 of the log has column types \(q: int64, "
                                         r"y: int64, s: double\) that the rows before it cannot take .*"
                                         r"Integer value 9007199254740993 not in range"):
        stream_evaluate([b1, b2], ["RR"], query="q", label="y", score="s")


def test_lightgbm_feval_follows_set_group_and_set_label():
    lgb = pytest.importorskip("lightgbm")
    from rankjit.integrations.lightgbm import feval

    preds = np.array([0.9, 0.1, 0.8, 0.2])
    ds = lgb.Dataset(np.zeros((4, 2)), label=np.array([0, 1, 0, 1]), group=[2, 2], params={"verbose": -1}).construct()
    f = feval("RR", "P@1")
    # groups [2, 2]: each query ranks its non-relevant document first
    assert f(preds, ds) == [("RR", 0.5, True), ("P@1", 0.0, True)]
    ds.set_group([1, 3])  # query 0 = [y 0]: RR 0; query 1 = y [1, 0, 1], scores [.1, .8, .2]: RR 1/2
    assert f(preds, ds) == [("RR", 0.25, True), ("P@1", 0.0, True)]
    ds.set_label(np.array([1, 0, 1, 0]))  # query 0 relevant at rank 1; query 1: [.8 -> y 1]: RR 1
    assert f(preds, ds) == [("RR", 1.0, True), ("P@1", 1.0, True)]


def test_xgboost_metric_follows_set_label_set_group_and_set_weight():
    xgb = pytest.importorskip("xgboost")
    from rankjit.integrations.xgboost import custom_metric

    preds = np.array([0.9, 0.1, 0.8, 0.2])
    dm = xgb.DMatrix(np.zeros((4, 2)), label=np.array([1, 0, 1, 0]), group=[2, 2])
    m = custom_metric("RR")
    assert m(preds, dm) == [("RR", 1.0)]
    dm.set_label(np.array([0, 1, 0, 1]))  # each query's relevant document now at rank 2
    assert m(preds, dm) == [("RR", 0.5)]
    dm.set_group([1, 3])  # query 0 = [y 0]: RR 0; query 1: scores [.1, .8, .2], y [1, 0, 1]: RR 1/2
    assert m(preds, dm) == [("RR", 0.25)]
    dm.set_weight(np.array([3.0, 1.0]))  # weighted mean (3 * 0 + 1 * 0.5) / 4
    assert m(preds, dm) == [("RR", 0.125)]


def test_negative_discount_weights_are_refused():
    # a negative weight made nDCG -1.0 here (DCG = 2 * 1 + 1 * (-1) ... against a positive ideal)
    labels, scores = np.array([[1, 2, 0]]), np.array([[3.0, 2.0, 1.0]])
    msg = r"^a discount array must not hold negative values \(weights by rank \(rank 1, 2, \.\.\.\)\), got -1\.0 at index 1"
    with pytest.raises(ValueError, match=msg + r" in 'nDCG'"):
        rankjit.ndcg(labels, scores, discount=[1, -1, 1])
    with pytest.raises(ValueError, match=msg + re.escape(" in 'DCG(discount=[1,-1])@2'")):
        rankjit.evaluate(labels, scores, ["DCG(discount=[1,-1])@2"])
    # zero weights are weights: nDCG with w = [1, 0.5, 0] is (1 + 2 * 0.5) / (2 + 1 * 0.5)
    assert rankjit.ndcg(labels, scores, discount=[1, 0.5, 0])[0] == pytest.approx(2.0 / 2.5, rel=1e-15)


def test_negative_gains_are_a_convention_and_leave_zero_one():
    # docs/reliability.md: a negative gain (a harmful document) is allowed; nDCG is then not bounded by [0, 1]
    labels, scores = np.array([[1, 2]]), np.array([[2.0, 1.0]])
    # DCG@1 = gain(1) = -5; the ideal puts grade 2 (gain 1) first: IDCG@1 = 1
    assert rankjit.evaluate(labels, scores, ["nDCG(gains={1:-5,2:1})@1"]) == {"nDCG(gains={1:-5,2:1})@1": -5.0}


def test_ragged_lists_are_named():
    with pytest.raises(ValueError, match=r"^labels holds rows of different lengths \(a ragged list\); pass a 2-D "
                                         "array padded with lengths= or mask=, or flat arrays with offsets="):
        rankjit.evaluate([[2, 0, 1], [0, 1, 0, 3]], [[.9, .8, .7], [.1, .4, .3, .2]], ["AP"])
    with pytest.raises(ValueError, match=r"^scores holds rows of different lengths"):
        rankjit.evaluate([[2, 0, 1], [0, 1, 0]], [[.9, .8, .7], [.1, .4]], ["AP"])


def test_pandas_nullable_columns_are_named():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([[1, 0]]).astype("Int64")
    with pytest.raises(TypeError, match=r"^labels is a DataFrame that numpy reads as objects \(dtypes: Int64\): "
                                        r"pandas nullable columns \(Int64, Float64, boolean\) must be converted"):
        rankjit.evaluate(frame, np.array([[.9, .1]]), ["AP"])
    # a nullable Series with a missing value reads as float64 with NaN: the NaN-label message names it
    with pytest.raises(ValueError, match=r"^NaN label in query 0 at position 1"):
        rankjit.evaluate(pd.Series([1, None], dtype="Int64"), np.array([.9, .1]), ["AP"], offsets=np.array([0, 2]))
    # plain numpy-backed frames are read as they are
    assert rankjit.evaluate(pd.DataFrame([[1, 0]]), np.array([[.9, .1]]), ["AP"]) == {"AP": 1.0}


def test_stats_refuse_values_whose_squared_differences_overflow():
    from rankjit import stats

    # finite scores whose differences overflow: the t statistic was NaN, the bootstrap's p 0.0
    msg = (r"^a holds values up to 1\.7e\+308 in magnitude: the sum of 3 squared differences could overflow "
           r"float64 \(the statistics would be NaN or infinite\); rescale the scores")
    with pytest.raises(ValueError, match=msg):
        stats.paired_ttest([1.7e308, -1.7e308, 1e308], [-1.7e308, 1.7e308, 0.0])
    with pytest.raises(ValueError, match=msg):
        stats.bootstrap_test([1.7e308, 1.7e308, 1.6e308], [0, 0, 0], B=10, seed=1)
    with pytest.raises(ValueError, match=r"^matrix holds values up to 1e\+200"):
        stats._common.as_matrix([[1e200, 0.0], [0.0, 1.0]])
    # large but safe values give finite statistics (the bound is n (2m)^2 < 1.8e308)
    r = stats.paired_ttest([1e150, 0.0, 1.0], [0.0, 0.0, 0.0])
    assert np.isfinite(r.statistic) and np.isfinite(r.pvalue)


def test_stats_resamples_are_bounded():
    from rankjit import stats

    with pytest.raises(ValueError, match=r"^B must be at most 1000000000 \(one resample per draw: more would run "
                                         r"for days\); got 1180591620717411303424"):
        stats.randomization_test([0.5, 0.6, 0.7, 0.4], [0.4, 0.5, 0.5, 0.4], B=2**70)
