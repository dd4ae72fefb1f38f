"""Parity presets: resolution rules, errors, and the sklearn preset against sklearn.metrics.

(The lightgbm / xgboost / catboost presets are checked against those frameworks'
own numbers in tests/test_integrations_*.py.)
"""
from __future__ import annotations

import numpy as np
import pytest

import rankjit
from rankjit import presets


def test_unknown_preset_lists_valid_ones():
    with pytest.raises(ValueError, match=r"unknown compat preset 'ranx'; valid presets: catboost, lightgbm, "
                                         r"sklearn, trec_eval, xgboost"):
        presets.get_preset("ranx")
    with pytest.raises(ValueError, match="unknown compat preset"):
        presets.evaluate([[1, 0]], [[1.0, 0.0]], "nDCG@2", compat="LightGBMX")


def test_defaults_unchanged_without_preset():
    r = presets.resolve("nDCG@10")
    assert r.text == "nDCG@10" and not r.precision_min_k_n
    labels, scores = np.array([[0, 1, 0]]), np.array([[1.0, 1.0, 0.0]])
    assert presets.evaluate(labels, scores, ["nDCG@2", "AP"]) == rankjit.evaluate(labels, scores, ["nDCG@2", "AP"])


def test_explicit_parameters_win_over_the_preset():
    assert presets.resolve("nDCG(gain='linear')@5", "lightgbm").text == "nDCG(gain='linear', empty='one')@5"
    assert presets.resolve("AP(denominator='r', rel=2)@5", "catboost").text == \
        "AP(denominator='r', rel=2, empty='zero')@5"


def test_every_preset_resolves_every_family():
    for name in presets.PRESETS:
        for m in ["P@5", "R@5", "Success@5", "RR", "AP@5", "Rprec", "DCG@5", "nDCG@5", "ERR@5", "pFound@5"]:
            presets.resolve(m, name)  # canonical text parses back


def test_ties_override_and_weights():
    labels, scores = np.array([[0, 1], [1, 0]]), np.array([[1.0, 1.0], [2.0, 1.0]])
    stable = presets.evaluate(labels, scores, ["RR"], compat="lightgbm", per_query=True)["RR"]
    assert stable.tolist() == [0.5, 1.0]
    assert presets.evaluate(labels, scores, ["RR"], compat="lightgbm", ties="optimistic")["RR"] == 1.0
    assert presets.evaluate(labels, scores, ["RR"], compat="lightgbm", weights=[1.0, 3.0])["RR"] == 0.875
    with pytest.raises(ValueError, match="one weight per query"):
        presets.evaluate(labels, scores, ["RR"], weights=[1.0])


@pytest.fixture(scope="module")
def sk_data():
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 4, size=(40, 9))
    labels[:4] = 0  # rows without a relevant document
    scores = rng.integers(0, 4, size=(40, 9)).astype(np.float64)  # many ties
    scores[5] = 1.0  # one row entirely tied
    return labels, scores


@pytest.mark.parametrize("k", [None, 1, 3, 5, 9, 20])
def test_sklearn_preset_reproduces_ndcg_score(sk_data, k):
    sk = pytest.importorskip("sklearn.metrics")
    labels, scores = sk_data
    want = sk.ndcg_score(labels, scores, k=k)
    name = "nDCG" if k is None else f"nDCG@{k}"
    got = presets.evaluate(labels, scores, [name], compat="sklearn")[name]
    assert got == pytest.approx(want, abs=1e-12)
    # per query too
    per_q = presets.evaluate(labels, scores, [name], compat="sklearn", per_query=True)[name]
    for i in (0, 5, 17):
        assert per_q[i] == pytest.approx(sk.ndcg_score(labels[i:i + 1], scores[i:i + 1], k=k), abs=1e-12)


@pytest.mark.parametrize("k", [None, 2, 5])
def test_sklearn_preset_reproduces_dcg_score(sk_data, k):
    sk = pytest.importorskip("sklearn.metrics")
    labels, scores = sk_data
    want = sk.dcg_score(labels, scores, k=k)
    name = "DCG" if k is None else f"DCG@{k}"
    assert presets.evaluate(labels, scores, [name], compat="sklearn")[name] == pytest.approx(want, abs=1e-12)


def test_sklearn_preset_differs_from_rankjit_defaults(sk_data):
    sk = pytest.importorskip("sklearn.metrics")
    labels, scores = sk_data
    assert rankjit.evaluate(labels, scores, ["nDCG@5"])["nDCG@5"] != pytest.approx(sk.ndcg_score(labels, scores, k=5))


def test_catboost_precision_min_k_n_with_lengths_and_mask():
    labels = np.array([[1, 0, 0], [1, 1, 0]])
    scores = np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0]])
    by_len = presets.evaluate(labels, scores, ["P@5"], compat="catboost", lengths=np.array([2, 3]),
                              per_query=True)["P@5"]
    assert by_len.tolist() == [0.5, 2 / 3]
    by_mask = presets.evaluate(labels, scores, ["P@5"], compat="catboost",
                               mask=np.array([[True, True, False], [True, True, True]]), per_query=True)["P@5"]
    assert by_mask.tolist() == [0.5, 2 / 3]
