"""LightGBM adapter: rankjit under compat="lightgbm" reproduces LightGBM's own ndcg@k / map@k.

Expected values are LightGBM's own per-round metrics (``record_evaluation``) on the
lambdarank example data shipped with LightGBM (``../shared/data/lightgbm_lambdarank``).
Early rounds have many tied scores (few trees, few leaves), so the tie rule is exercised.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest
from _ltr_data import load as load_sample

from rankjit import presets
from rankjit.integrations.lightgbm import feval

lgb = pytest.importorskip("lightgbm")

KS = (1, 3, 5, 10)

load = load_sample


def _train(params, rounds=4):
    Xtr, ytr, gtr = load("train")
    Xte, yte, gte = load("test")
    dtr = lgb.Dataset(Xtr, ytr, group=gtr)
    dte = lgb.Dataset(Xte, yte, group=gte, reference=dtr)
    measures = [f"nDCG@{k}" for k in KS] + [f"AP@{k}" for k in KS]
    evals = {}
    base = dict(objective="lambdarank", metric=["ndcg", "map"], eval_at=list(KS), verbose=-1, num_leaves=7,
                min_data_in_leaf=5, learning_rate=0.1, num_threads=1, seed=1)
    base.update(params)
    lgb.train(base, dtr, num_boost_round=rounds, valid_sets=[dtr, dte], valid_names=["train", "test"],
              feval=feval(*measures, compat="lightgbm"), callbacks=[lgb.record_evaluation(evals)])
    return evals


def _check_parity(evals, rounds):
    for split in ("train", "test"):
        got = evals[split]
        for k in KS:
            for theirs, ours in ((f"ndcg@{k}", f"nDCG@{k}[lightgbm]"), (f"map@{k}", f"AP@{k}[lightgbm]")):
                assert len(got[theirs]) == rounds
                np.testing.assert_allclose(got[ours], got[theirs], rtol=0, atol=1e-6, err_msg=f"{split} {theirs}")


def test_feval_reproduces_lightgbm_ndcg_and_map_every_round():
    evals = _train({})
    _check_parity(evals, 4)


def test_default_conventions_differ_from_lightgbm():
    """Without the preset rankjit keeps its own rules (pessimistic ties, empty=0): not LightGBM's numbers."""
    Xtr, ytr, gtr = load("train")
    dtr = lgb.Dataset(Xtr, ytr, group=gtr).construct()
    preds = np.zeros(len(ytr))  # every score tied
    ours = dict((n, v) for n, v, _ in feval("nDCG@5", compat="lightgbm")(preds, dtr))
    plain = dict((n, v) for n, v, _ in feval("nDCG@5")(preds, dtr))
    assert plain["nDCG@5"] < ours["nDCG@5[lightgbm]"]


def test_names_and_higher_better_flags():
    f = feval("nDCG@10", "AP(rel=2)@5", "ERR@20", compat="lightgbm")
    Xtr, ytr, gtr = load("train")
    dtr = lgb.Dataset(Xtr, ytr, group=gtr).construct()
    out = f(np.linspace(0, 1, len(ytr)), dtr)
    assert [n for n, _, _ in out] == ["nDCG@10[lightgbm]", "AP(rel=2)@5[lightgbm]", "ERR@20[lightgbm]"]
    assert all(hib is True for _, _, hib in out)
    assert [n for n, _, _ in feval("nDCG@10")(np.zeros(len(ytr)), dtr)] == ["nDCG@10"]


def test_sklearn_api_ranker_reads_eval_group():
    Xtr, ytr, gtr = load("train")
    Xte, yte, gte = load("test")
    ranker = lgb.LGBMRanker(n_estimators=3, num_leaves=7, min_child_samples=5, eval_at=[5], verbose=-1, n_jobs=1)
    ranker.fit(Xtr, ytr, group=gtr, eval_set=[(Xte, yte)], eval_group=[gte],
               eval_metric=feval("nDCG@5", compat="lightgbm"))
    res = ranker.evals_result_["valid_0"]
    np.testing.assert_allclose(res["nDCG@5[lightgbm]"], res["ndcg@5"], atol=1e-6)


def test_group_sizes_not_matching_data_length():
    f = feval("nDCG@5")
    with pytest.raises(ValueError, match=r"group sizes sum to 7 but the data has 6 documents"):
        f(np.zeros(6), np.zeros(6), None, np.array([3, 4]))  # scikit-learn calling convention


def test_dataset_without_groups():
    ds = lgb.Dataset(np.zeros((4, 1)), np.array([0, 1, 0, 1])).construct()
    with pytest.raises(ValueError, match="no query groups"):
        feval("nDCG@5")(np.zeros(4), ds)


def test_unknown_measure_or_preset_fails_at_construction():
    with pytest.raises(ValueError, match="unknown compat preset 'lgbm'; valid presets: catboost, lightgbm"):
        feval("nDCG@5", compat="lgbm")
    with pytest.raises(ValueError, match="unknown measure"):
        feval("nDCGG@5")
    with pytest.raises(ValueError, match="at least one measure"):
        feval()


def test_import_does_not_import_frameworks():
    import subprocess

    code = ("import sys, rankjit.integrations, rankjit.integrations.lightgbm, rankjit.integrations.xgboost, "
            "rankjit.integrations.catboost, rankjit.integrations.torch, rankjit.presets; "
            "print([m for m in ('lightgbm', 'xgboost', 'catboost', 'torch') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_preset_resolution_for_lightgbm():
    assert presets.resolve("nDCG@10", "lightgbm").text == "nDCG(gain='exp2', empty='one')@10"
    assert presets.resolve("AP@10", "lightgbm").text == "AP(rel=1, denominator='min_k_r', empty='one')@10"


def test_labels_are_narrowed_once_per_dataset_and_refreshed_when_replaced():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 2))
    y = rng.integers(0, 4, 60).astype(np.float64)
    ds = lgb.Dataset(X, y, group=[20, 25, 15]).construct()
    scores = rng.normal(size=60)
    f = feval("nDCG@5", "P@3")
    first = f(scores, ds)
    hit = f._cache[ds]
    assert hit[2].labels.dtype == np.int8 and np.array_equal(hit[2].labels, ds.get_label())
    assert f(scores, ds) == first and f._cache[ds] is hit  # the second round reuses the prepared labels
    offsets = np.array([0, 20, 45, 60])
    expected = presets.evaluate(y, scores, ["nDCG@5", "P@3"], offsets=offsets)
    assert [v for _, v, _ in first] == pytest.approx([expected["nDCG@5"], expected["P@3"]], abs=1e-15)
    y2 = np.zeros(60)
    y2[::7] = 2.0
    ds.set_label(y2)  # a new label array: prepared again
    again = f(scores, ds)
    expected = presets.evaluate(y2, scores, ["nDCG@5", "P@3"], offsets=offsets)
    assert [v for _, v, _ in again] == pytest.approx([expected["nDCG@5"], expected["P@3"]], abs=1e-15)


def test_fractional_labels_are_not_narrowed():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 3, 40) * 0.5  # probabilities-like grades: kept as floats
    ds = lgb.Dataset(rng.normal(size=(40, 2)), y, group=[20, 20]).construct()
    f = feval("P@5", "RR")
    scores = rng.normal(size=40)
    got = f(scores, ds)
    assert f._cache[ds][2].labels.dtype.kind == "f"
    expected = presets.evaluate(y, scores, ["P@5", "RR"], offsets=np.array([0, 20, 40]))
    assert [v for _, v, _ in got] == pytest.approx([expected["P@5"], expected["RR"]], abs=1e-15)


def test_sklearn_api_prepares_once_and_sees_labels_changed_in_place():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 4, 60).astype(np.float64)
    group = np.array([20, 25, 15])
    offsets = np.array([0, 20, 45, 60])
    f = feval("nDCG@5", "P@3", compat="lightgbm")

    def expected(labels, scores):
        res = presets.evaluate(labels, scores, ["nDCG@5", "P@3"], compat="lightgbm", offsets=offsets)
        return [res["nDCG@5"], res["P@3"]]

    for round_ in range(3):  # as LGBMRanker calls it: the Dataset's own arrays every round
        scores = rng.normal(size=60)
        got = f(y, scores, None, group)
        if round_ == 0:
            prepared = f._arrays[2]
        assert f._arrays[2] is prepared  # prepared once, reused
        assert [n for n, _, _ in got] == ["nDCG@5[lightgbm]", "P@3[lightgbm]"]
        assert [v for _, v, _ in got] == expected(y, scores)  # bit for bit
    y[::3] = 3.0  # changed in place: prepared again, never evaluated on the old labels
    got = f(y, scores, None, group)
    assert f._arrays[2] is not prepared
    assert [v for _, v, _ in got] == expected(y, scores)
    group[:] = [30, 15, 15]  # the group sizes too
    got = f(y, scores, None, group)
    offsets[:] = [0, 30, 45, 60]
    assert [v for _, v, _ in got] == expected(y, scores)
    y_int = y.astype(np.int64)  # equal values of another dtype: prepared again, the same values
    assert [v for _, v, _ in f(y_int, scores, None, group)] == expected(y, scores)
    assert f._arrays[0].dtype == np.int64


def test_sklearn_api_labels_not_matching_the_predictions():
    f = feval("nDCG@5")
    with pytest.raises(ValueError, match=r"group sizes sum to 6 but the data has 5 documents"):
        f(np.zeros(5), np.zeros(5), None, np.array([3, 3]))
    with pytest.raises(ValueError, match=r"5 predictions for 6 labels"):
        f(np.zeros(6), np.zeros(5), None, np.array([3, 2]))
    with pytest.raises(ValueError, match=r"labels must be 1-D \(one per row\), got shape \(5, 1\)"):
        f(np.zeros((5, 1)), np.zeros(5), None, np.array([3, 2]))


def test_labels_changed_in_place_after_a_round_do_not_reach_the_prepared_ones():
    # LightGBM copies a Dataset's labels when it constructs it: its own metric never sees them changed in place,
    # and neither does the feval (fractional labels, which are not narrowed to an int8 copy, included)
    rng = np.random.default_rng(9)
    for y in (rng.integers(0, 3, 40).astype(np.float64), rng.integers(0, 3, 40) * 0.5):
        ds = lgb.Dataset(rng.normal(size=(40, 2)), y, group=[20, 20]).construct()
        f = feval("P@5", "nDCG@5")
        scores = rng.normal(size=40)
        first = f(scores, ds)
        original = y.copy()
        ds.get_label()[:] = -1.0  # the array the Dataset hands out, changed in place
        assert f(scores, ds) == first
        expected = presets.evaluate(original, scores, ["P@5", "nDCG@5"], offsets=np.array([0, 20, 40]))
        assert [v for _, v, _ in first] == [expected["P@5"], expected["nDCG@5"]]
