"""``presets.prepare`` / ``_api.PreparedEvaluation``: the labels checked and the measures planned once.

A prepared evaluation must give, for every score array, exactly what ``evaluate`` (or
``presets.evaluate``) gives on the same inputs: bit for bit, for every shape of batch, scores
dtype, preset, tie rule and query weights, call after call on one object (the rounds of a
training loop), and from several threads at once.  Each error names what is wrong, as
``evaluate``'s do.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import rankjit
from rankjit import presets
from rankjit._api import PreparedEvaluation

MEASURES = ["nDCG@10", "P@5", "AP", "RR@20", "ERR@10", "Rprec", "R@10", "Success@3", "DCG(gain='exp2')@5",
            "NumRel", "Accuracy"]


def _batches(seed):
    """(labels, scores maker, layout kwargs) for a padded, a padded-with-lengths, a masked and a ragged batch."""
    rng = np.random.default_rng(seed)
    n_q, width = 37, 24
    labels = ((rng.random((n_q, width)) < 0.4) * rng.integers(1, 4, (n_q, width))).astype(np.int8)
    labels[3] = 0  # a query without a relevant document
    lengths = rng.integers(0, width + 1, n_q)
    mask = rng.random((n_q, width)) < 0.85
    sizes = rng.integers(0, 40, n_q)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    flat = ((rng.random(offsets[-1]) < 0.4) * rng.integers(1, 4, offsets[-1])).astype(np.float32)
    return [
        (labels, {}),
        (labels, {"lengths": lengths}),
        (labels, {"mask": mask}),
        (flat, {"offsets": offsets}),
    ]


def _scores(rng, shape, kind):
    if kind == "tied":
        return (np.round(rng.normal(size=shape) * 2) / 2).astype(np.float64)
    if kind == "float32":
        return rng.normal(size=shape).astype(np.float32)
    if kind == "int":
        return rng.integers(-3, 4, size=shape)
    return rng.normal(size=shape)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
def test_per_query_equals_evaluate_call_after_call(ties):
    rng = np.random.default_rng(7)
    for labels, layout in _batches(1):
        prepared = PreparedEvaluation(labels, MEASURES, ties=ties, **layout)
        for kind in ["float64", "tied", "float32", "int", "float64"]:  # dtypes switch between calls
            scores = _scores(rng, labels.shape, kind)
            got = prepared.per_query(scores)
            want = rankjit.evaluate(labels, scores, MEASURES, ties=ties, per_query=True, **layout)
            for i, name in enumerate(MEASURES):
                np.testing.assert_array_equal(got[i], want[name], err_msg=f"{name} {kind} {sorted(layout)}")


@pytest.mark.parametrize("compat", [None, "lightgbm", "xgboost", "catboost", "sklearn", "trec_eval"])
def test_presets_prepare_equals_presets_evaluate(compat):
    rng = np.random.default_rng(11)
    measures = ["nDCG@5", "P@10", "AP@10", "nDCG"]
    for labels, layout in _batches(2):
        prepared = presets.prepare(labels, measures, compat=compat, **layout)
        n_q = prepared.evaluation.batch.n_queries
        weights = rng.random(n_q) + 0.1
        for kind in ["float64", "tied", "float32"]:
            scores = _scores(rng, labels.shape, kind)
            for kwargs in ({}, {"weights": weights}, {"per_query": True}):
                got = prepared.evaluate(scores, **kwargs)
                want = presets.evaluate(labels, scores, measures, compat=compat, **layout, **kwargs)
                assert list(got) == list(want)
                for name in measures:
                    np.testing.assert_array_equal(got[name], want[name], err_msg=f"{name} {kind} {kwargs}")


def test_presets_prepare_takes_the_tie_rule_over_the_preset():
    labels = np.array([[1, 0, 0, 2]])
    scores = np.array([[1.0, 1.0, 1.0, 1.0]])
    for ties in ("pessimistic", "optimistic", "stable"):
        got = presets.prepare(labels, ["nDCG@2"], compat="lightgbm", ties=ties).evaluate(scores)
        assert got == presets.evaluate(labels, scores, ["nDCG@2"], compat="lightgbm", ties=ties)
    # the three rules give three values here: the rule really reaches the engine
    assert len({presets.prepare(labels, ["nDCG@2"], ties=t).evaluate(scores)["nDCG@2"]
                for t in ("pessimistic", "optimistic", "stable")}) == 3


def test_concurrent_calls_on_one_prepared_evaluation():
    rng = np.random.default_rng(3)
    # (1100 queries: two blocks of 1024; small rows, so that the interpreted pass stays short)
    labels = ((rng.random((1100, 8)) < 0.3) * rng.integers(1, 5, (1100, 8))).astype(np.int8)
    prepared = PreparedEvaluation(labels, ["nDCG@5", "AP"], ties="stable")
    runs = [rng.normal(size=labels.shape).astype(np.float32 if i % 2 else np.float64) for i in range(4)]
    want = [rankjit.evaluate(labels, s, ["nDCG@5", "AP"], ties="stable", per_query=True) for s in runs]
    got = [None] * len(runs)

    def work(i):
        for _ in range(2):
            got[i] = prepared.per_query(runs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(runs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g[0], w["nDCG@5"])
        np.testing.assert_array_equal(g[1], w["AP"])


def test_errors_name_what_is_wrong():
    labels = np.array([[1, 0, 2], [0, 1, 0]])
    prepared = PreparedEvaluation(labels, ["nDCG@2"])
    with pytest.raises(ValueError, match=r"scores must have the labels' shape \(2, 3\), got \(2, 2\)"):
        prepared.per_query(np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"scores must have the labels' shape \(2, 3\), got \(6,\)"):
        prepared.per_query(np.zeros(6))
    with pytest.raises(TypeError, match="scores must be numeric, got dtype <U1"):
        prepared.per_query(np.array([["a", "b", "c"], ["d", "e", "f"]]))
    with pytest.raises(ValueError, match=r"NaN score in query 1 at position 2; replace NaN scores"):
        prepared.per_query(np.array([[1.0, 2.0, 3.0], [1.0, 2.0, np.nan]]))
    # the object is still usable after an error
    np.testing.assert_array_equal(prepared.per_query(np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]]))[0],
                                  rankjit.evaluate(labels, np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]]), ["nDCG@2"],
                                                   per_query=True)["nDCG@2"])
    # measures that read more than the labels
    for name in ["Judged@10", "nDCG(judged_only=True)@10", "alpha_nDCG@10"]:
        with pytest.raises(ValueError, match=r"reads more than the labels: evaluate it with rankjit.evaluate"):
            PreparedEvaluation(labels, [name])
    # labels are checked when preparing, with evaluate's messages
    with pytest.raises(ValueError, match=r"negative label"):
        PreparedEvaluation(np.array([[1, -1, 0]]), ["nDCG@2"])
    with pytest.raises(ValueError, match=r"cutoff of 'nDCG@x2' must be a positive integer"):
        presets.prepare(labels, ["nDCG@x2"])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int64, np.float64])
def test_arrays_changed_in_place_afterwards_change_nothing(dtype):
    # the engine reads arrays of its own: labels already in its dtype (uint8; int8 is viewed as uint8) or wider
    # than a byte would otherwise be the caller's, and a grade beyond the plan's tables read through them would
    # read out of bounds (a value of 7e69 before the copies); the row bounds and P@k's row lengths likewise
    rng = np.random.default_rng(13)
    measures = ["nDCG@5", "P@10", "AP", "RR@20"]
    for labels, layout in _batches(3):
        labels = labels.astype(dtype) if dtype != np.int64 else labels.astype(np.int64) * 100  # grades > 255
        layout = {k: v.copy() for k, v in layout.items()}
        kept = labels.copy(), {k: v.copy() for k, v in layout.items()}
        for compat in (None, "catboost"):  # catboost: P@k divided by min(k, n), the row lengths
            prepared = presets.prepare(labels, measures, compat=compat, **layout)
            scores = _scores(rng, labels.shape, "tied")
            before = prepared.evaluate(scores, per_query=True)
            labels[...] = 100 if dtype == np.int8 else 200  # beyond every grade the plan saw
            if dtype in (np.int8, np.int64, np.float64):
                labels.flat[::3] = -1
            for v in layout.values():
                v[...] = 0 if v.dtype == bool else v.max() + 5
            after = prepared.evaluate(scores, per_query=True)
            want = presets.evaluate(kept[0], scores, measures, compat=compat, per_query=True, **kept[1])
            for name in measures:
                np.testing.assert_array_equal(after[name], before[name], err_msg=f"{name} {sorted(layout)}")
                np.testing.assert_array_equal(after[name], want[name], err_msg=f"{name} {sorted(layout)}")
            labels[...] = kept[0]
            for k, v in layout.items():
                v[...] = kept[1][k]
