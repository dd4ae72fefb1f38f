"""XGBoost adapter: compat="xgboost" reproduces XGBoost's own ndcg@k, ndcg@k-, map@k, map@k-, pre@k.

Expected values are XGBoost's per-round metrics (``evals_result``) while training on
LightGBM's lambdarank sample data.  XGBoost's map/pre need binary labels, so those run
on ``label >= 2`` (which leaves several queries without a relevant document: the
``-`` suffix convention is exercised).
"""
from __future__ import annotations


import numpy as np
import pytest
from _ltr_data import load as load_sample

from rankjit.integrations.xgboost import custom_metric

xgb = pytest.importorskip("xgboost")


load = load_sample


def _train(objective, theirs, ours, binary=False, rounds=4, weight=False):
    Xtr, ytr, gtr = load("train")
    Xte, yte, gte = load("test")
    if binary:
        ytr, yte = (ytr >= 2).astype(float), (yte >= 2).astype(float)
    wtr = np.random.default_rng(5).uniform(0.2, 3.0, len(gtr)) if weight else None
    dtr = xgb.DMatrix(Xtr, ytr, group=gtr, weight=wtr)
    dte = xgb.DMatrix(Xte, yte, group=gte)
    evals = {}
    xgb.train(dict(objective=objective, eval_metric=theirs, max_depth=3, eta=0.1, nthread=1, seed=0), dtr,
              num_boost_round=rounds, evals=[(dtr, "train"), (dte, "test")], evals_result=evals,
              custom_metric=custom_metric(*ours, compat="xgboost"), verbose_eval=False)
    for split in ("train", "test"):
        for t, o in zip(theirs, ours):
            assert len(evals[split][t]) == rounds
            np.testing.assert_allclose(evals[split][f"{o}[xgboost]"], evals[split][t], rtol=0, atol=1e-6,
                                       err_msg=f"{split} {t} vs {o}")
    return evals


def test_ndcg_every_round():
    _train("rank:ndcg", ["ndcg@1", "ndcg@5", "ndcg@10", "ndcg@10-", "ndcg"],
           ["nDCG@1", "nDCG@5", "nDCG@10", "nDCG(empty='zero')@10", "nDCG"])


def test_map_and_precision_every_round_binary_labels():
    _train("rank:map", ["map@5", "map@10-", "map", "pre@5", "ndcg@3-"],
           ["AP@5", "AP(empty='zero')@10", "AP", "P@5", "nDCG(empty='zero')@3"], binary=True)


def test_weighted_queries():
    _train("rank:ndcg", ["ndcg@5", "ndcg@10"], ["nDCG@5", "nDCG@10"], rounds=3, weight=True)


def test_linear_gain_matches_ndcg_exp_gain_false():
    Xte, yte, gte = load("test")
    d = xgb.DMatrix(Xte, yte, group=gte)
    evals = {}
    xgb.train(dict(objective="rank:ndcg", eval_metric="ndcg@5", ndcg_exp_gain=False, max_depth=3, nthread=1), d,
              num_boost_round=3, evals=[(d, "test")], evals_result=evals, verbose_eval=False,
              custom_metric=custom_metric("nDCG(gain='linear')@5", compat="xgboost"))
    np.testing.assert_allclose(evals["test"]["nDCG(gain='linear')@5[xgboost]"], evals["test"]["ndcg@5"], atol=1e-6)


def test_group_pointer_errors():
    d = xgb.DMatrix(np.zeros((4, 1)), np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="no query groups"):
        custom_metric("nDCG@5")(np.zeros(4, np.float32), d)
    d = xgb.DMatrix(np.zeros((4, 1)), np.array([0, 1, 0, 1]), group=[2, 2])
    with pytest.raises(ValueError, match="5 predictions for a DMatrix of 4 rows"):
        custom_metric("nDCG@5")(np.zeros(5, np.float32), d)
    with pytest.raises(ValueError, match="must be 1-D"):
        custom_metric("nDCG@5")(np.zeros((4, 2), np.float32), d)
    with pytest.raises(ValueError, match="unknown compat preset 'xgb'"):
        custom_metric("nDCG@5", compat="xgb")
