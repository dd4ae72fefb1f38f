"""The plans ``rankjit._measures.plan_for`` keeps: the same plan as a fresh ``build_plan`` for every call.

A kept plan is reused when a later call's key (``_plan_key``) is equal: the key must hold
everything ``build_plan`` reads.  ``test_build_plan_reads_only_what_the_key_holds`` runs
``build_plan`` for every list family (cutoffs, non-default parameter values) on a batch
that records what is read of it, and fails if a new read appears that the key lacks; the
other tests compare kept plans with fresh ones on batches that differ in one fact at a time.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from test_families import FAMILIES, cutoffs, non_default, text

from rankjit import _measures
from rankjit._api import _as_ideal_counts
from rankjit._kernels.ranking import TIES_CODES
from rankjit._validation import as_batch, engine_batch, scan

DEFAULTS = {"rel": None, "empty": "zero", "judged_only": False}
PLAN_FIELDS = ("iparams", "fparams", "tables", "itables", "rel_labels", "depth", "zero_safe", "n_hist",
               "ideal_other", "groups", "signs")


def batch_of(labels, scores=None, lengths=None):
    labels = np.asarray(labels)
    scores = np.linspace(1.0, 0.0, labels.size).reshape(labels.shape) if scores is None else scores
    b = as_batch(labels, scores, lengths=lengths)
    scan(b, check_scores=True)
    return engine_batch(b)


def same_plan(a, b):
    for name in PLAN_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), name
        else:
            assert x == y, name


class _Labels:
    """The labels as build_plan may read them: their dtype alone."""

    def __init__(self, dtype):
        self.dtype = dtype


class _Recorder:
    """A batch that records the attributes read of it."""

    def __init__(self, batch):
        object.__setattr__(self, "_batch", batch)
        object.__setattr__(self, "read", set())

    def __getattr__(self, name):
        self.read.add(name)
        value = getattr(self._batch, name)
        return _Labels(value.dtype) if name == "labels" else value


class _Untouchable:
    """ideal_counts that must not be read: build_plan gets its facts."""

    def __getattr__(self, name):
        raise AssertionError(f"build_plan read ideal_counts.{name}; the plan's key holds only its facts")


def measure_texts():
    """Every list family with each cutoff it takes and each non-default value of each parameter."""
    out = []
    for f in FAMILIES:
        for k in cutoffs(f)[:2]:
            out.append(text(f, k))
        for p in f.params:
            for v in non_default(p)[:2]:
                out.append(text(f, cutoffs(f)[1] if f.takes_k else None, **{p.name: v}))
    return out


BATCHES = {
    "int8 grades": lambda: batch_of(np.array([[0, 1, 2, 0], [3, 0, 1, 1]], dtype=np.int8)),
    "float grades": lambda: batch_of(np.array([[0.0, 0.5, 1.0, 0.25], [0.75, 0.0, 1.0, 0.0]])),
    "int64, padded": lambda: batch_of(np.array([[0, 4, 2, 0, 0], [1, 0, 0, 0, 0]]), lengths=[5, 2]),
}


@pytest.mark.parametrize("batch_name", BATCHES)
def test_build_plan_reads_only_what_the_key_holds(batch_name):
    batch = BATCHES[batch_name]()
    texts = measure_texts()
    built = 0
    for t in texts:
        try:
            requests = _measures.requests(t, DEFAULTS)
        except (ValueError, TypeError):
            continue
        for ties in ("pessimistic", "stable", "average"):
            for ideal in (None, np.array([[2, 1, 1, 1, 1], [1, 2, 0, 1, 0]])):
                ideal_counts = None if ideal is None else _as_ideal_counts(ideal, 2)
                facts = _measures._ideal_facts(ideal_counts)
                recorder = _Recorder(batch)
                try:
                    _measures.build_plan(requests, recorder, TIES_CODES[ties], None if ideal is None
                                         else _Untouchable(), facts)
                except (ValueError, TypeError):
                    continue  # (an error may read anything to name a label: nothing is kept then)
                built += 1
                assert recorder.read <= {"max_count", "max_label", "integer_labels", "labels"}, (t, recorder.read)
    assert built > 300, built  # (most measures build on most batches)


def test_kept_plans_equal_fresh_ones(monkeypatch):
    monkeypatch.setattr(_measures, "_PLANS", {})
    rng = np.random.default_rng(7)
    measure_sets = [["nDCG@10", "AP", "P@5", "R@100"], ["ERR@3", "RBP(p=0.5)"], ["nDCG(gain=[0, 1, 5, 9])@4"],
                    ["P(rel=2)@3", "P(rel=2.0)@3", "RR"], ["P@3", "P@3", "RR"], ["nDCG(empty='one')", "SetF"]]
    batches = []
    for width in (3, 6):
        for top in (1, 3):
            for dtype in (np.int8, np.int64, np.float64):
                labels = rng.integers(0, top + 1, (4, width)).astype(dtype)
                labels[0, 0] = top  # the largest label: top
                batches.append(batch_of(labels))
    for dtype in (np.float64, np.float32):  # fractions: not integer labels (kept in their own dtype)
        batches.append(batch_of(np.array([[0.5, 0.0, 1.0], [1.0, 0.25, 0.0], [0, 0, 0], [0, 0, 0]], dtype=dtype)))
    ideals = [None, np.array([[3, 1, 1, 1], [2, 2, 1, 0], [1, 1, 1, 1], [4, 0, 0, 1]]),
              np.array([[9, 1, 1, 1, 0, 2], [2, 2, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0], [4, 0, 0, 1, 0, 1]])]
    kept = 0
    for _ in range(2):  # the second round finds every plan kept
        for names in measure_sets:
            for batch in batches:
                for ties in ("pessimistic", "stable", "average"):  # (average: ERR refuses it, as a plan kept)
                    for ideal in ideals:
                        try:
                            requests = _measures.requests(names, DEFAULTS)
                            ideal_counts = None if ideal is None else _as_ideal_counts(ideal, 4)
                            fresh = _measures.build_plan(requests, batch, TIES_CODES[ties], ideal_counts)
                        except (ValueError, TypeError):
                            with pytest.raises((ValueError, TypeError)):
                                _measures.plan_for(requests, batch, TIES_CODES[ties], ideal_counts)
                            continue
                        got = _measures.plan_for(requests, batch, TIES_CODES[ties], ideal_counts)
                        same_plan(got, fresh)
                        kept += got is _measures.plan_for(requests, batch, TIES_CODES[ties], ideal_counts)
    assert kept > 200, kept


def test_spellings_tell_values_apart():
    spell = _measures._spelling
    values = [1, 1.0, True, "1", None, 0.0, -0.0, (1, 2), [1, 2], {1: 2}, {1: 2.0},
              np.array([1.0, 2.0]), np.array([1, 2]), np.array([1.0, -0.0]), np.array([1.0, 0.0])]
    spellings = [spell(v) for v in values]
    assert len(set(spellings)) == len(values)
    assert spell(np.array([1.0, 2.0])) == spell(np.array([1.0, 2.0]))  # (equal arrays: one spelling)
    for v in (np.array([object()]), np.zeros(5000), {1, 2}, np.float32(1.0), (1, np.array(["a"], dtype=object))):
        assert spell(v) is _measures._UNSPELLED, v


def test_what_is_not_kept(monkeypatch):
    monkeypatch.setattr(_measures, "_PLANS", {})
    batch = batch_of(np.array([[0, 1, 2], [1, 0, 0]]))
    requests = _measures.requests("nDCG(gain=[0, 1, 2, 3])@2", DEFAULTS)
    requests[0].params["gain"] = np.zeros(5000)  # an array too long to spell: built each time
    assert _measures.plan_for(requests, batch, 0, None) is not _measures.plan_for(requests, batch, 0, None)
    assert not _measures._PLANS
    long_batch = batch_of(np.zeros((1, 20000), dtype=np.int8))  # weights of 20000 ranks: a plan too big to keep
    requests = _measures.requests("nDCG", DEFAULTS)
    assert _measures.plan_for(requests, long_batch, 0, None) is not _measures.plan_for(requests, long_batch, 0, None)
    assert not _measures._PLANS
    monkeypatch.setattr(_measures, "_PLANS_MAX", 3)
    for k in range(1, 8):
        _measures.plan_for(_measures.requests(f"P@{k}", DEFAULTS), batch, 0, None)
        assert 1 <= len(_measures._PLANS) <= 3  # bounded


def test_threads_share_the_kept_plans(monkeypatch):
    # several threads evaluate batches of different shapes and labels at once, sharing the kept plans: each
    # gets the values of plans built anew for its batch
    monkeypatch.setattr(_measures, "_PLANS", {})
    monkeypatch.setattr(_measures, "_PLANS_MAX", 16)  # (emptied now and then while other threads read it)
    import threading

    import rankjit

    rng = np.random.default_rng(3)
    cases = []
    for i in range(24):
        width, top = 2 + i % 5, 1 + i % 4
        labels = rng.integers(0, top + 1, (3, width)).astype(np.int8 if i % 2 else np.int64)
        scores = rng.random((3, width))
        names = [["nDCG@3", "AP"], ["P@2", "RR", "ERR@2"], ["nDCG(gain=[0, 1, 4, 9, 16])@2"]][i % 3]
        cases.append((labels, scores, names))
    with monkeypatch.context() as fresh:  # the values with every plan built anew
        fresh.setattr(_measures, "plan_for", lambda requests, batch, ties, ideal:
                      _measures.build_plan(requests, batch, ties, ideal))
        want = [rankjit.evaluate(labels, scores, names, per_query=True) for labels, scores, names in cases]
    bad = []

    def work(offset):
        for rep in range(30):
            j = (offset + rep) % len(cases)
            labels, scores, names = cases[j]
            got = rankjit.evaluate(labels, scores, names, per_query=True)
            if any(not np.array_equal(got[m], want[j][m]) for m in names):
                bad.append(j)

    threads = [threading.Thread(target=work, args=(k * 5,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def _same_requests(got, fresh):
    assert len(got) == len(fresh)
    for g, f in zip(got, fresh):
        assert (g.measure.text, g.measure.family, g.measure.k, g.measure.judged_only, g.judged_only) == \
            (f.measure.text, f.measure.family, f.measure.k, f.measure.judged_only, f.judged_only)
        assert _measures._spelling(g.measure.params) == _measures._spelling(f.measure.params)
        assert sorted(g.params) == sorted(f.params)
        for name in f.params:
            assert _measures._spelling(g.params[name]) == _measures._spelling(f.params[name]), (f.measure.text, name)


def test_kept_requests_equal_fresh_ones(monkeypatch):
    # _measures.requests keeps what a list of plain strings resolves to under literal call
    # defaults: every measure text of every list family, under defaults that differ in one
    # value (1, 1.0 and True apart), against a fresh resolution; errors are raised each time
    monkeypatch.setattr(_measures, "_RESOLVED", {})
    texts = measure_texts()
    defaults = [DEFAULTS, {**DEFAULTS, "rel": 2}, {**DEFAULTS, "rel": 2.0}, {**DEFAULTS, "rel": 1},
                {**DEFAULTS, "rel": True}, {**DEFAULTS, "rel": 0.5}, {**DEFAULTS, "empty": "one"},
                {**DEFAULTS, "empty": "nan"},
                {**DEFAULTS, "empty": "never"}, {**DEFAULTS, "judged_only": True}]
    kept = 0
    for _ in range(2):  # the second round finds them kept
        for d in defaults:
            for names in [texts[i:i + 3] for i in range(0, len(texts), 3)] + [t for t in texts[::7]]:
                try:
                    fresh = _measures._resolved_requests(names, d)
                except (ValueError, TypeError) as e:
                    with pytest.raises(type(e), match=re.escape(str(e))):
                        _measures.requests(names, d)
                    continue
                _same_requests(_measures.requests(names, d), fresh)
                kept += _measures._requests_key(names, d) in _measures._RESOLVED
    assert kept > 300, kept


def test_kept_requests_are_copies_and_what_is_not_kept(monkeypatch):
    monkeypatch.setattr(_measures, "_RESOLVED", {})
    first = _measures.requests(["nDCG(gain=[0, 1, 5])@3", "RBP(p=0.5)"], DEFAULTS)
    first[0].params["gain"][:] = 99  # the caller changes what it got
    first[0].measure.params["gain"].append(7)
    first[1].params["p"] = 0.9
    again = _measures.requests(["nDCG(gain=[0, 1, 5])@3", "RBP(p=0.5)"], DEFAULTS)
    assert list(again[0].params["gain"]) == [0, 1, 5] and again[0].measure.params["gain"] == [0, 1, 5]
    assert again[1].params["p"] == 0.5
    assert len(_measures._RESOLVED) == 1

    class Text(str):
        pass

    monkeypatch.setattr(_measures, "_RESOLVED", {})
    _measures.requests([Text("P@5")], DEFAULTS)  # a str subclass may compare equal to another text
    _measures.requests([_measures.parse("P@5")], DEFAULTS)  # a Measure object
    _measures.requests(["P@5"], {**DEFAULTS, "rel": np.int64(2)})  # a NumPy scalar: 2, 2.0 and True hash alike
    assert not _measures._RESOLVED
    monkeypatch.setattr(_measures, "_RESOLVED_MAX", 3)
    for k in range(1, 8):
        _measures.requests(f"P@{k}", DEFAULTS)
        assert 1 <= len(_measures._RESOLVED) <= 3  # bounded


def test_resolved_measures_give_copies_under_their_defaults_and_resolve_anew_under_others():
    # _measures.Resolved: measures resolved once by a front end's evaluator (Measure objects with gain tables
    # too), given as copies to each call made with the same defaults; other defaults resolve them again
    from rankjit.io._frontend import measures_on_codes

    coded = measures_on_codes(["P@5", "nDCG(gain='linear')@3", "AP"], np.array([0, 1, 3], dtype=np.int64))
    texts = ["P@2", "R@10", "nDCG(gain=[0, 1, 5])@3", "RBP(p=0.5)"]
    defaults = [DEFAULTS, {**DEFAULTS, "rel": 2}, {**DEFAULTS, "rel": 2.0}, {**DEFAULTS, "rel": True},
                {**DEFAULTS, "empty": "one"}, {**DEFAULTS, "judged_only": True}, {**DEFAULTS, "rel": np.int64(2)}]
    for measures in (coded, texts, "P@5"):
        for made_under in defaults:
            try:
                _measures._resolved_requests(measures, made_under)
            except (ValueError, TypeError) as e:  # (rel=True: raised when made, as by a fresh resolution)
                with pytest.raises(type(e), match=re.escape(str(e))):
                    _measures.Resolved(measures, made_under)
                continue
            resolved = _measures.Resolved(measures, made_under)
            for d in defaults:
                try:
                    fresh = _measures._resolved_requests(measures, d)
                except (ValueError, TypeError) as e:
                    with pytest.raises(type(e), match=re.escape(str(e))):
                        _measures.requests(resolved, d)
                    continue
                got = _measures.requests(resolved, d)
                _same_requests(got, fresh)
                for r in got:  # the caller changes what it got: the next call does not see it
                    r.params.clear()
                    r.measure.params.clear()
                _same_requests(_measures.requests(resolved, d), _measures._resolved_requests(measures, d))


def test_resolved_measures_through_evaluate():
    import rankjit

    rng = np.random.default_rng(3)
    labels, scores = rng.integers(0, 4, (20, 12)), rng.random((20, 12))
    names = ["P@5", "AP", "nDCG@10", "RR"]
    resolved = _measures.Resolved(names, DEFAULTS)  # rankjit.evaluate's own defaults
    for kwargs in ({}, {"rel": 2}, {"empty": "one"}):
        want = rankjit.evaluate(labels, scores, names, per_query=True, **kwargs)
        got = rankjit.evaluate(labels, scores, resolved, per_query=True, **kwargs)
        assert list(got) == names
        for name in names:
            assert np.array_equal(got[name], want[name]), (kwargs, name)
    assert not np.array_equal(rankjit.evaluate(labels, scores, resolved, rel=3, per_query=True)["P@5"],
                              rankjit.evaluate(labels, scores, resolved, per_query=True)["P@5"])
