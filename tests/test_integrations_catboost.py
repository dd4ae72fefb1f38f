"""CatBoost adapter and the "catboost" preset against CatBoost's own metric values.

Expected values: CatBoost's per-iteration metrics (``get_evals_result``) while training
YetiRank on LightGBM's lambdarank sample, and ``catboost.utils.eval_metric`` on small
synthetic groups (short groups, many ties, fractional targets).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from _ltr_data import load as load_sample

from rankjit import presets
from rankjit.integrations.catboost import metric

cb = pytest.importorskip("catboost")


def load(split):
    X, y, group = load_sample(split)
    return X.toarray(), y, np.repeat(np.arange(group.shape[0]), group)


def _fit(pairs, scale=1.0, iterations=3):
    """Train with CatBoost's metrics as custom_metric and ours as eval_metric objects; return evals."""
    Xtr, ytr, qtr = load("train")
    Xte, yte, qte = load("test")
    ptr, pte = cb.Pool(Xtr, ytr / scale, group_id=qtr), cb.Pool(Xte, yte / scale, group_id=qte)
    results = []
    for theirs, key, ours in pairs:
        model = cb.CatBoost(dict(loss_function="YetiRank", iterations=iterations, depth=3, custom_metric=[theirs],
                                 eval_metric=metric(ours, groups=[ptr, pte], compat="catboost"),
                                 verbose=False, thread_count=1, random_seed=0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # CatBoost cannot numba-compile Python metrics and says so
            model.fit(ptr, eval_set=[pte, ptr])
        results.append(((theirs, key, ours), model.get_evals_result()))
    return results


def _check(results):
    checked = 0
    for (theirs, key, ours), ev in results:
        for split in ("validation_0", "validation_1"):  # test pool, train pool
            got = ev[split]
            assert len(got[key]) == len(got[f"{ours}[catboost]"]) > 0
            np.testing.assert_allclose(got[f"{ours}[catboost]"], got[key], rtol=0, atol=1e-6,
                                       err_msg=f"{split} {theirs}")
            checked += 1
    return checked


@pytest.mark.slow
def test_ranking_metrics_every_iteration_graded_labels():
    # (CatBoost metric, its key in get_evals_result, rankjit measure)
    pairs = [("NDCG:top=5", "NDCG:top=5;type=Base", "nDCG@5"),
             ("NDCG:top=5;type=Exp", "NDCG:top=5;type=Exp", "nDCG(gain='exp2')@5"),
             ("NDCG:top=3;denominator=Position", "NDCG:top=3;type=Base;denominator=Position", "nDCG(discount='zipf')@3"),
             ("NDCG", "NDCG:type=Base", "nDCG"), ("MAP:top=5", "MAP:top=5", "AP@5"),
             ("PrecisionAt:top=5", "PrecisionAt:top=5", "P@5"), ("RecallAt:top=5", "RecallAt:top=5", "R@5"),
             ("MRR", "MRR", "RR")]
    assert _check(_fit(pairs)) == 2 * len(pairs)


@pytest.mark.slow
def test_probability_metrics_every_iteration():
    # ERR and PFound read targets in [0, 1]; labels / 4, so PrecisionAt's border 0.5 means label >= 3
    pairs = [("ERR:top=5", "ERR:top=5", "ERR@5"), ("PFound", "PFound", "pFound"),
             ("PFound:top=5;decay=0.5", "PFound:top=5;decay=0.5", "pFound(p_break=0.5)@5"),
             ("PrecisionAt:top=3", "PrecisionAt:top=3", "P@3"), ("MAP:top=3", "MAP:top=3", "AP@3")]
    assert _check(_fit(pairs, scale=4.0)) == 2 * len(pairs)


@pytest.fixture(scope="module")
def synthetic():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 8, size=300)  # many groups shorter than the cutoff
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = int(offsets[-1])
    labels = rng.integers(0, 4, size=n).astype(np.float64)
    scores = rng.integers(0, 3, size=n).astype(np.float64)  # heavy ties
    return labels, scores, offsets, np.repeat(np.arange(sizes.shape[0]), sizes)


@pytest.mark.parametrize("theirs, ours", [
    ("NDCG:top=5", "nDCG@5"), ("NDCG:top=5;type=Exp", "nDCG(gain='exp2')@5"), ("DCG:top=5", "DCG@5"),
    ("NDCG:top=5;denominator=Position", "nDCG(discount='zipf')@5"), ("MAP:top=5", "AP@5"),
    ("PrecisionAt:top=5", "P@5"), ("RecallAt:top=5", "R@5"), ("MRR", "RR"), ("MRR:top=2", "RR@2"),
])
def test_preset_matches_eval_metric_on_synthetic_groups(synthetic, theirs, ours):
    from catboost.utils import eval_metric

    labels, scores, offsets, gid = synthetic
    expected = eval_metric(labels, scores, theirs, group_id=gid)[0]
    got = presets.evaluate(labels, scores, [ours], compat="catboost", offsets=offsets)[ours]
    assert got == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("theirs, ours", [
    ("ERR:top=5", "ERR@5"), ("PFound:top=5", "pFound@5"), ("PrecisionAt:top=5", "P@5"),
    ("PrecisionAt:top=5;border=0.2", "P(rel=0.2000001)@5"), ("MAP:top=4", "AP@4"), ("RecallAt:top=3", "R@3"),
])
def test_preset_matches_eval_metric_fractional_targets(synthetic, theirs, ours):
    from catboost.utils import eval_metric

    labels, scores, offsets, gid = synthetic
    targets = (labels / 3).astype(np.float32).astype(np.float64)  # CatBoost stores targets as float32
    expected = eval_metric(targets, scores, theirs, group_id=gid)[0]
    got = presets.evaluate(targets, scores, [ours], compat="catboost", offsets=offsets)[ours]
    assert got == pytest.approx(expected, abs=1e-7)  # CatBoost's ERR differs in the 9th digit (float32 steps)


def test_precision_divides_by_min_k_n():
    from catboost.utils import eval_metric

    expected = eval_metric(np.array([1.0, 0.0]), np.array([2.0, 1.0]), "PrecisionAt:top=5", group_id=[0, 0])[0]
    got = presets.evaluate(np.array([1, 0]), np.array([2.0, 1.0]), ["P@5"], compat="catboost",
                           offsets=np.array([0, 2]))["P@5"]
    assert expected == 0.5 and got == 0.5


def test_groups_are_required_and_matched_by_size():
    with pytest.raises(ValueError, match="groups= is required"):
        metric("nDCG@5", groups=None)
    m = metric("nDCG@5", groups={"group_sizes": [2, 3]})
    with pytest.raises(ValueError, match=r"dataset of 4 rows, but groups= describes datasets of \[5\] rows"):
        m.evaluate((np.zeros(4),), np.zeros(4), None)
    with pytest.raises(ValueError, match="contiguous"):
        metric("nDCG@5", groups=np.array([1, 1, 2, 1]))
    with pytest.raises(ValueError, match="unknown compat preset 'cat'"):
        metric("nDCG@5", groups=[1, 1], compat="cat")


def test_same_size_pools_told_apart_by_labels():
    X = np.zeros((4, 1))
    a = cb.Pool(X, [0, 1, 0, 0], group_id=[0, 0, 1, 1])
    b = cb.Pool(X, [0, 1, 1, 0], group_id=[0, 1, 1, 1])
    m = metric("P@1", groups=[a, b])
    scores = np.array([0.0, 1.0, 2.0, 3.0])
    # pool a: groups [0,1] and [0,0] -> P@1 = (1 + 0) / 2; pool b: [0] and [1,1,0] -> (0 + 0) / 2 (doc 3 first)
    assert m.evaluate((scores,), np.array([0.0, 1.0, 0.0, 0.0]), None)[0] == 0.5
    assert m.evaluate((scores,), np.array([0.0, 1.0, 1.0, 0.0]), None)[0] == 0.0
    assert type(m).__name__ == "P@1"
