"""The compiled reads of the caller's dicts (rankjit._kernels.pydicts) and their use in rankjit.compat.pytrec_eval.

Every answer of a kernel is compared with the same read done in plain Python; every input the
kernels do not read (keys that are not exactly str, scores that are not floats, a dict of
another size than announced) must give back a status, never a number.  The front end must
give the same dicts whether or not it reads through the kernels (its Python path is forced by
replacing ``JudgedLookups.read_compiled``).
"""
from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankjit.compat.pytrec_eval as front
from rankjit._kernels import pydicts
from rankjit.io._dicts import int64_values_and_keys
from rankjit.io._judged_lookups import JudgedLookups

needs_jit = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="the kernels call CPython from compiled code: "
                               "with NUMBA_DISABLE_JIT=1 available() is False and the Python paths run")


class StrSub(str):
    pass


def _read(dicts, looked_up_per_query, offsets=None, with_positions=False):
    """``(status, scores, looked-up scores)`` of read_run on ``dicts`` (and the positions it records, when
    ``with_positions``); the ids it looks up are held here."""
    lens = [len(d) for d in dicts]
    if offsets is None:
        offsets = np.zeros(len(dicts) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
    held = [doc for docs in looked_up_per_query for doc in docs]
    j_off = np.zeros(len(dicts) + 1, dtype=np.int64)
    np.cumsum([len(docs) for docs in looked_up_per_query], out=j_off[1:])
    score = np.full(int(offsets[-1]), -7.0)
    j_score = np.full(len(held), -7.0)
    nothing = np.zeros(0, dtype=np.int64)
    positions = np.full(int(offsets[-1]) if with_positions else 0, -7, dtype=np.int32)
    status = pydicts.read_run(np.array([id(d) for d in dicts], dtype=np.int64), offsets, id(str), id(float),
                              id(np.float64), id(int), nothing, 0, nothing,
                              np.array([id(x) for x in held], dtype=np.int64), j_off, score, j_score, positions)
    return (status, score, j_score, positions) if with_positions else (status, score, j_score)


def _item_at(mapping, position):
    """``id()`` of the key ``PyDict_Next`` gives when started at ``position`` (CPython's own call, through
    ctypes: a check independent of the kernels), None when it gives none."""
    import ctypes

    pos, key, value = ctypes.c_ssize_t(position), ctypes.c_void_p(), ctypes.c_void_p()
    more = ctypes.pythonapi.PyDict_Next(ctypes.py_object(mapping), ctypes.byref(pos), ctypes.byref(key),
                                        ctypes.byref(value))
    return key.value if more else None


def test_available_here():
    assert pydicts.available() is (not numba.config.DISABLE_JIT)


ids = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
values = st.one_of(st.floats(allow_nan=False, width=64), st.floats(allow_nan=False).map(np.float64))


@needs_jit
@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(ids, values, max_size=12), max_size=6), st.data())
def test_read_run_scores_equals_python(dicts, data):
    looked_up = [data.draw(st.lists(ids, max_size=8)) for _ in dicts]
    looked_up = [[doc + "" for doc in docs] for docs in looked_up]  # (other objects than the dicts' keys)
    status, score, j_score = _read(dicts, looked_up)
    assert status == pydicts.READ_ALL
    want = [float(v) for d in dicts for v in d.values()]
    assert score.tolist() == want
    want_j = [d.get(doc, math.nan) for d, docs in zip(dicts, looked_up) for doc in docs]
    np.testing.assert_array_equal(j_score, np.array(want_j, dtype=np.float64))


@needs_jit
@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(ids, values, max_size=12), max_size=6), st.data())
def test_read_run_records_where_each_item_is(dicts, data):
    # some dicts with deleted items: their positions skip the holes
    for d in dicts:
        for key in data.draw(st.lists(st.sampled_from(list(d)), unique=True)) if d else ():
            del d[key]
    status, score, _, positions = _read(dicts, [[] for _ in dicts], with_positions=True)
    assert status == pydicts.READ_ALL
    assert [_item_at(d, p) for d, p in zip([d for d in dicts for _ in d], positions.tolist())] == [
        id(k) for d in dicts for k in d]


@needs_jit
@pytest.mark.parametrize("bad", [
    {"a": 1.0, "b": 2},  # an int
    {"a": 1.0, "b": True},  # a bool
    {"a": 1.0, "b": np.float32(2.0)},  # not a float subclass
    {"a": 1.0, "b": None},
    {"a": 1.0, 7: 2.0},  # a key that is not a str
    {"a": 1.0, StrSub("b"): 2.0},  # a str subclass (its hash or comparison could be Python code)
])
def test_read_run_scores_stops_at_what_it_does_not_read(bad):
    status, _, _ = _read([{"x": 0.5}, bad, {"y": 1.5}], [["x"], ["a"], []])
    assert status == 1


@needs_jit
def test_read_run_scores_stops_at_a_dict_of_another_size():
    dicts = [{"x": 0.5, "y": 1.0}, {"a": 1.0}]
    for offsets in ([0, 1, 2], [0, 3, 4], [0, 2, 2]):
        status, score, _, positions = _read(dicts, [[], []], offsets=np.array(offsets, dtype=np.int64),
                                            with_positions=True)
        assert status == (0 if offsets[1] != 2 else 1)
        assert len(score) == len(positions) == offsets[-1]  # (nothing written beyond the arrays: the call returned)


def _tied_reference(ids_scores, doc, s, descending):
    """Documents of score ``s`` whose id comes before ``doc``'s: greater (trec_eval) or smaller."""
    return sum(1 for x, v in ids_scores if v == s and (doc < x if descending else doc > x))


@needs_jit
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(ids, st.integers(0, 3)), min_size=1, max_size=15, unique_by=lambda t: t[0]), st.data(),
       st.booleans(), st.booleans())
def test_place_tied_counts_the_ids_that_come_first(rows, data, descending, by_row):
    # the needed documents' ids: str objects equal to keys (looked up, as compat's), or the keys at their rows;
    # the members' ids read at the positions read_run recorded (a dict with a deleted item: a hole)
    run = dict([("deleted", 0.0)] + [(x, float(v)) for x, v in rows])
    del run["deleted"]
    positions = _read([run], [[]], with_positions=True)[3]
    keys = [x for x, _ in rows]
    score = np.array([v for _, v in rows], dtype=np.float32)
    t_rows = data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=1, max_size=len(rows), unique=True))
    looked_up = [keys[i] + "" for i in t_rows]
    j_score = score[t_rows]
    above = np.array([int((score > score[i]).sum()) for i in t_rows], dtype=np.int64)
    labels = np.zeros(len(rows), dtype=np.int64)
    nothing = np.zeros(0, dtype=np.int64)
    status = pydicts.place_tied(np.arange(len(t_rows)), np.zeros(len(t_rows), dtype=np.int64),
                                np.array(t_rows, dtype=np.int64) if by_row else nothing, np.array([0, len(rows)]),
                                score, np.ones(len(rows), dtype=bool), np.array([id(run)], dtype=np.int64), id(str),
                                nothing if by_row else np.array([id(x) for x in looked_up], dtype=np.int64), j_score,
                                np.arange(1, len(t_rows) + 1), above, descending, labels, positions)
    assert status == pydicts.READ_ALL
    want = np.zeros(len(rows), dtype=np.int64)
    for u, i in enumerate(t_rows):
        want[above[u] + _tied_reference(rows, keys[i], score[i], descending)] = u + 1
    np.testing.assert_array_equal(labels, want)


@needs_jit
@pytest.mark.parametrize("run", [{"a": 1.0, 5: 1.0, "c": 1.0}, {"a": 1.0, "b": 1.0}, {"a": 1.0, "b": 1.0, "c": 1.0,
                                                                                       "d": 1.0}])
def test_place_tied_stops_at_an_id_that_is_not_a_str_or_a_dict_of_another_length(run):
    # three documents expected: an int id among the members, or a dict of 2 or 4 items (read at positions
    # 0, 1, 2: where a dict without holes holds them)
    nothing = np.zeros(0, dtype=np.int64)
    positions = np.arange(3, dtype=np.int32)
    status = pydicts.place_tied(np.array([0]), np.array([0]), nothing, np.array([0, 3]), np.zeros(3, np.float32),
                                np.ones(3, dtype=bool), np.array([id(run)]), id(str), np.array([id("a")]),
                                np.zeros(1, np.float32), np.array([1]), np.array([0]), True,
                                np.zeros(3, dtype=np.int64), positions)
    assert status == 0


def _read_ints(dicts, keys=True, hold=False):
    offsets = np.zeros(len(dicts) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in dicts], out=offsets[1:])
    out = np.full(int(offsets[-1]), 99, dtype=np.int64)
    key_out = np.full(int(offsets[-1]) if keys else 0, 7, dtype=np.int64)
    other_ids = np.zeros(1, dtype=np.int64)
    status = pydicts.read_ints(np.array([id(d) for d in dicts], dtype=np.int64), offsets, id(int), id(str), out,
                               key_out, other_ids, hold)
    return status, out, int(other_ids[0]), key_out


class _Id(str):
    """A str subclass: not exactly a str."""


#: document ids of the qrels: mostly str, now and then one that is not exactly a str
mixed_ids = st.one_of(ids, ids, ids, st.integers(), ids.map(_Id), st.tuples(ids))


@needs_jit
@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(mixed_ids, st.integers(-2**63, 2**63 - 1), max_size=12), max_size=6))
def test_read_ints_equals_python(dicts):
    status, out, other_ids, keys = _read_ints(dicts)
    assert status == pydicts.READ_ALL
    assert out.tolist() == [v for d in dicts for v in d.values()]
    assert other_ids == sum(type(k) is not str for d in dicts for k in d)
    assert keys.tolist() == [id(k) for d in dicts for k in d]
    again, values, counted, _ = _read_ints(dicts, keys=False)  # (no keys asked: none written)
    assert (again, values.tolist(), counted) == (status, out.tolist(), other_ids)
    lens = np.array([len(d) for d in dicts], dtype=np.int64)
    values, key_addresses = int64_values_and_keys(dicts, lens)
    assert values.tolist() == out.tolist()
    if other_ids:
        assert key_addresses is None
    else:
        assert key_addresses.tolist() == keys.tolist()


@needs_jit
@pytest.mark.parametrize("value", [1.0, True, 2**63, -2**63 - 1, np.int64(1), None, "1"])
def test_read_ints_stops_at_a_value_it_does_not_read(value):
    status, _, _, _ = _read_ints([{"a": 1}, {"b": 2, "c": value}])
    assert status == 1
    assert int64_values_and_keys([{"a": 1}, {"b": 2, "c": value}], np.array([1, 2])) == (None, None)


def _fresh_ids(n, tag):
    """``n`` str objects of their own (built at run time: not interned, not shared with anything else)."""
    return ["".join([tag, "-", str(i), "-id"]) for i in range(n)]


@needs_jit
def test_read_ints_with_hold_takes_one_reference_per_key_and_release_gives_them_back():
    import sys

    ids = _fresh_ids(30, "held")
    dicts = [dict.fromkeys(ids[:10], 1), dict.fromkeys(ids[10:], 2)]
    before = [sys.getrefcount(x) for x in ids]
    status, _, _, keys = _read_ints(dicts, hold=True)
    assert status == pydicts.READ_ALL and keys.tolist() == [id(x) for x in ids]
    assert [sys.getrefcount(x) for x in ids] == [c + 1 for c in before]
    dicts.clear()  # the dicts gone, the keys live on (each held once, by the read's reference)
    assert [sys.getrefcount(x) for x in ids] == [c for c in before]
    pydicts.release(keys)
    assert [sys.getrefcount(x) for x in ids] == [c - 1 for c in before]
    status, _, _, _ = _read_ints([dict.fromkeys(ids, 3)], hold=False)  # (without hold: no reference taken)
    assert status == pydicts.READ_ALL and [sys.getrefcount(x) for x in ids] == [c - 1 for c in before]


@needs_jit
@pytest.mark.parametrize("where", ["value", "length"])
def test_read_ints_with_hold_gives_back_its_references_when_it_stops(where):
    """A read that stops (a value it does not read, a dict of another length than announced) keeps no reference."""
    import sys

    ids = _fresh_ids(25, where)
    dicts = [dict.fromkeys(ids[:10], 1), dict.fromkeys(ids[10:20], 2), dict.fromkeys(ids[20:], 3)]
    if where == "value":
        dicts[1][ids[15]] = 1.5
    before = [sys.getrefcount(x) for x in ids]
    offsets = np.array([0, 10, 20 if where == "value" else 19, 25], dtype=np.int64)
    out, keys = np.zeros(25, dtype=np.int64), np.zeros(25, dtype=np.int64)
    status = pydicts.read_ints(np.array([id(d) for d in dicts], dtype=np.int64), offsets, id(int), id(str), out,
                               keys, np.zeros(1, dtype=np.int64), True)
    assert status == 1
    assert [sys.getrefcount(x) for x in ids] == before
    lens = np.array([10, 10, 5] if where == "value" else [10, 9, 6])
    assert int64_values_and_keys(dicts, lens, hold=True) == (None, None)
    assert [sys.getrefcount(x) for x in ids] == before


@needs_jit
def test_held_objects_list_their_objects_pickle_as_them_and_give_their_references_back():
    import gc
    import pickle
    import sys

    from rankjit.io._dicts import HeldObjects

    ids = _fresh_ids(12, "list")
    dicts = [dict.fromkeys(ids[:5], 0), dict.fromkeys(ids[5:], 4)]
    before = [sys.getrefcount(x) for x in ids]
    values, held = int64_values_and_keys(dicts, np.array([5, 7]), hold=True)
    assert values.tolist() == [0] * 5 + [4] * 7 and isinstance(held, HeldObjects)
    assert held.addresses.tolist() == [id(x) for x in ids]
    listed = held.objects()
    assert len(listed) == 12 and all(a is b for a, b in zip(listed, ids))
    assert all(a is b for a, b in zip(held.objects(np.array([11, 0, 3])), [ids[11], ids[0], ids[3]]))
    copy = pickle.loads(pickle.dumps(held))
    assert copy.objects() == ids and copy.addresses.tolist() == [id(x) for x in copy.objects()]
    del listed, copy
    gc.collect()
    assert [sys.getrefcount(x) for x in ids] == [c + 1 for c in before]  # (held's own references)
    del held
    gc.collect()
    assert [sys.getrefcount(x) for x in ids] == before
    _, odd = int64_values_and_keys([{"a": 1, 2: 3}], np.array([2]), hold=True)  # an id not a str: none held
    assert odd is None


# ---- the front end, through the kernels and through its Python path ------------------------------------


def _both(qrels, run, measures, **kwargs):
    compiled = front.RelevanceEvaluator(qrels, measures, **kwargs).evaluate(run)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(JudgedLookups, "read_compiled", lambda *args: None)
        python = front.RelevanceEvaluator(qrels, measures, **kwargs).evaluate(run)
    return compiled, python


def _random_case(seed, n_q=8, ties=True, unicode=False):
    rng = np.random.default_rng(seed)
    alphabet = ["d", "D", "é", "\uffff", "\U00010000", "z"] if unicode else ["d"]
    qrels, run = {}, {}
    for q in range(n_q):
        docs = [f"{alphabet[rng.integers(len(alphabet))]}{i}" for i in rng.permutation(60)[:40]]
        qrels[f"q{q}"] = {d: int(g) for d, g in zip(docs[:25], rng.integers(-1, 4, 25))}
        scores = rng.integers(0, 6, 30) / 4 if ties else rng.normal(size=30)
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs[10:], scores)}
    run["unjudged query"] = {"d1": 1.0}
    return qrels, run


@needs_jit
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("unicode", [False, True])
def test_front_end_equal_through_the_kernels(seed, unicode):
    qrels, run = _random_case(seed, unicode=unicode)
    for measures, kwargs in (({"all_trec"}, {}), ({"map", "ndcg_cut.5", "P.3"}, {}),
                             ({"map", "bpref"}, {"relevance_level": 2}),
                             ({"map", "P.5"}, {"judged_docs_only_flag": True})):
        compiled, python = _both(qrels, run, measures, **kwargs)
        assert compiled == python


@needs_jit
def test_front_end_reads_mixed_values_its_python_way():
    qrels, run = _random_case(1)
    run["q0"] = {d: int(4 * v) for d, v in run["q0"].items()}  # ints: the kernel hands over
    run["q1"] = {d: np.float32(v) for d, v in run["q1"].items()}
    run["q2"] = {d: np.float64(v) for d, v in run["q2"].items()}  # read by the kernel (a float subclass)
    compiled, python = _both(qrels, run, {"map", "ndcg", "P.5"})
    assert compiled == python


@needs_jit
def test_front_end_reads_judgments_its_python_way_when_not_ints():
    qrels, run = _random_case(3)
    compiled, python = _both(qrels, run, {"map", "bpref"})
    assert compiled == python
    qrels["q1"] = {d: np.int64(g) for d, g in qrels["q1"].items()}  # (NumPy ints: the Python way reads them)
    assert int64_values_and_keys(list(qrels.values()), np.array([len(d) for d in qrels.values()])) == (None, None)
    assert _both(qrels, run, {"map", "bpref"}) == (compiled, compiled)


def test_front_end_errors_unchanged():
    qrels, run = _random_case(2)
    run["q3"] = dict(run["q3"])
    run["q3"][next(iter(run["q3"]))] = math.nan
    with pytest.raises(ValueError, match=r"scores\['q3'\]\[.*\] is NaN"):
        front.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, 5: 1.0, "b": 2.0}}  # a tied id that is not a str
    with pytest.raises(TypeError, match=r"scores\['q'\]: document id 5 is a int, not a str"):
        front.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    for grade, error, message in ((1.0, TypeError, r"query_relevance\['q'\]\['b'\] = 1.0 is a float"),
                                  (2**63, ValueError, r"\['b'\] = 9223372036854775808 does not fit in 64 bits")):
        with pytest.raises(error, match=message):
            front.RelevanceEvaluator({"q": {"a": 1, "b": grade}}, {"map"})


def test_front_end_with_a_qrels_id_that_is_a_str_subclass():
    qrels = {"q": {StrSub("a"): 1, "b": 0, "c": 2}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    evaluator = front.RelevanceEvaluator(qrels, {"map", "P.1"})
    assert evaluator._judgments.looked_up_addresses() is None  # (the compiled read does not run: a lookup could run Python)
    compiled, python = _both(qrels, run, {"map", "P.1"})
    assert compiled == python
    # ties by id descending: b (0), a (1), c (2); AP = (1/2 + 2/3) / 2
    assert compiled["q"] == {"map": pytest.approx(7 / 12, abs=1e-15), "P_1": 0.0}


# ---- the judged scores of the ir_measures provider -------------------------------------------------------

UNJUDGED = np.iinfo(np.int64).min


def _read_judged(dicts, judgments):
    offsets = np.zeros(len(dicts) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in dicts], out=offsets[1:])
    raw = np.full(int(offsets[-1]), 99, dtype=np.int64)
    score = np.full(int(offsets[-1]), -7.0)
    status = pydicts.read_run(np.array([id(d) for d in dicts], dtype=np.int64), offsets, id(str), id(float),
                              id(np.float64), id(int), np.array([id(j) for j in judgments], dtype=np.int64), UNJUDGED,
                              raw, np.zeros(0, dtype=np.int64), np.zeros(len(dicts) + 1, dtype=np.int64), score,
                              np.zeros(0), np.zeros(0, dtype=np.int32))
    return status, raw, score


@needs_jit
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.dictionaries(ids, values, max_size=12),
                          st.dictionaries(ids, st.integers(-2**63 + 1, 2**63 - 1), max_size=12)), max_size=6))
def test_read_run_judgments_equals_python(pairs):
    dicts = [d for d, _ in pairs]
    judgments = [{**j, **{k: 1 for k in list(d)[::3]}} for d, j in pairs]  # (some of the run's documents judged)
    status, raw, score = _read_judged(dicts, judgments)
    assert status == pydicts.READ_ALL
    assert score.tolist() == [float(v) for d in dicts for v in d.values()]
    assert raw.tolist() == [j.get(doc, UNJUDGED) for d, j in zip(dicts, judgments) for doc in d]


@needs_jit
@pytest.mark.parametrize("judgment", [1.0, True, 2**63, -2**64, np.int64(1), None])
def test_read_run_judgments_stops_at_a_judgment_it_does_not_read(judgment):
    status, _, _ = _read_judged([{"x": 0.5}, {"a": 1.0, "b": 2.0}], [{"x": 1}, {"b": judgment}])
    assert status == 1


@needs_jit
@pytest.mark.parametrize("bad", [{"a": 1.0, "b": 2}, {"a": 1.0, 7: 2.0}, {"a": 1.0, StrSub("b"): 2.0}])
def test_read_run_judgments_stops_at_a_run_it_does_not_read(bad):
    status, _, _ = _read_judged([{"x": 0.5}, bad], [{}, {"a": 1}])
    assert status == 1


@needs_jit
@pytest.mark.parametrize("seed", range(4))
def test_provider_equal_through_the_kernels(seed):
    ir_measures = pytest.importorskip("ir_measures")
    from rankjit.integrations import ir_measures as provider_module

    qrels, run = _random_case(seed, unicode=seed % 2 == 1)
    qrels = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}
    measures = [ir_measures.parse_measure(m) for m in ("AP", "nDCG@5", "P@3", "RR", "R@10", "Bpref", "Judged@5")]
    evaluator = provider_module.provider().evaluator(measures, qrels)
    compiled = sorted((m.query_id, str(m.measure), m.value) for m in evaluator.iter_calc(run))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(provider_module, "_read_compiled", lambda *args: False)
        python = sorted((m.query_id, str(m.measure), m.value)
                        for m in provider_module.provider().evaluator(measures, qrels).iter_calc(run))
    assert compiled == python
    assert len(compiled) == len(measures) * (len(run) - 1)


@needs_jit
@pytest.mark.parametrize("odd_id", [None, StrSub("d3")])  # (ir_measures refuses ids that are not str)
def test_provider_reads_judgments_with_ids_not_exactly_str_its_python_way(odd_id):
    """The compiled read looks run documents up in the qrels' dicts only when every doc id there is exactly a str
    (read with the grades, once per evaluator); otherwise the Python way, with ir_measures' numbers."""
    ir_measures = pytest.importorskip("ir_measures")
    import pandas as pd

    from rankjit.integrations import ir_measures as provider_module

    qrels, run = _random_case(2)
    qrels = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}
    if odd_id is not None:
        qrels["q1"][odd_id] = 2
    judgments = provider_module._Qrels(qrels)
    assert judgments.dod_ids_are_str is (odd_id is None)
    rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    frame = pd.DataFrame({"query_id": [r[0] for r in rows], "relevance": [r[2] for r in rows],
                          "doc_id": pd.Series([r[1] for r in rows], dtype=object)})  # (object: the ids as given)
    assert provider_module._Qrels(frame).dod_ids_are_str is (odd_id is None)  # (checked in Python)
    measures = [ir_measures.parse_measure(m) for m in ("AP", "nDCG@5", "P@3", "R@10", "Bpref")]
    reads = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pydicts, "read_run", lambda *args, _kernel=pydicts.read_run: reads.append(1) or _kernel(*args))
        got = sorted((m.query_id, str(m.measure), m.value)
                     for m in provider_module.provider().evaluator(measures, qrels).iter_calc(run))
    assert bool(reads) is (odd_id is None)
    want = sorted((m.query_id, str(m.measure), m.value) for m in ir_measures.iter_calc(measures, qrels, run))
    assert [g[:2] for g in got] == [w[:2] for w in want]
    np.testing.assert_allclose([g[2] for g in got], [w[2] for w in want], rtol=0, atol=1e-12)


# ---- another thread changing the dicts while they are read: exceptions at worst, never a crash -------------

CHANGED_DURING_READS = r"""
import random, sys, threading
import numpy as np
import rankjit.compat.pytrec_eval as front
from rankjit.integrations import ir_measures as provider_module
import ir_measures

sys.setswitchinterval(1e-6)  # switch threads as often as CPython allows
rng = np.random.default_rng(3)
qrels, run = {}, {}
for q in range(8):
    docs = ["d%d" % i for i in rng.permutation(300)[:200]]
    qrels["q%d" % q] = {d: int(g) for d, g in zip(docs[:80], rng.integers(0, 3, 80))}
    run["q%d" % q] = {d: float(s) for d, s in zip(docs[30:], rng.integers(0, 5, 170))}  # (many ties)
stop = False

def change():
    r = random.Random(1)
    while not stop:
        d = run["q%d" % r.randrange(8)]
        key = "d%d" % r.randrange(300)
        if key in d:
            del d[key]
        else:
            d[key] = float(r.randrange(5))
        if r.random() < 0.1:  # now and then an int id, for a moment
            d[7] = 1.0
            del d[7]
        if r.random() < 0.01:
            run["q%d" % r.randrange(8)] = {"d%d" % i: 1.0 for i in range(r.randrange(50))}

thread = threading.Thread(target=change)
thread.start()
evaluator = front.RelevanceEvaluator(qrels, {"map", "P.5", "bpref"})
other = provider_module.provider().evaluator([ir_measures.parse_measure(m) for m in ("AP", "nDCG@5")], qrels)
answers = errors = 0
for i in range(400):
    try:
        evaluator.evaluate(run) if i % 2 else list(other.iter_calc(run))
        answers += 1
    except Exception:
        errors += 1
stop = True
thread.join()
print("survived", answers, errors)
"""


@needs_jit
def test_dicts_changed_by_another_thread_never_crash(tmp_path):
    import os
    import subprocess
    import sys

    pytest.importorskip("ir_measures")
    proc = subprocess.run([sys.executable, "-c", CHANGED_DURING_READS], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    answers, errors = map(int, proc.stdout.split()[1:])
    assert answers + errors == 400 and answers > 0, proc.stdout


MANY_DOCUMENTS = r"""
import numpy as np
import ir_measures
import rankjit.compat.pytrec_eval as front
from rankjit._kernels import pydicts
from rankjit.integrations import ir_measures as provider_module

rng = np.random.default_rng(5)
qrels, run = {}, {}
for q in range(800):  # 800k documents read in one call of each kernel
    docs = ["d%d" % i for i in range(1000)]
    qrels["q%d" % q] = {d: int(g) for d, g in zip(docs[::25], rng.integers(0, 3, 40))}
    run["q%d" % q] = dict(zip(docs, rng.integers(0, 50, 1000).astype(float).tolist()))
reads = []
for name in ("read_run", "place_tied"):
    kernel = getattr(pydicts, name)
    setattr(pydicts, name, lambda *args, _kernel=kernel, _name=name: reads.append(_name) or _kernel(*args))
front.RelevanceEvaluator(qrels, {"map", "P.10"}).evaluate(run)
list(provider_module.provider().evaluator([ir_measures.parse_measure("AP")], qrels).iter_calc(run))
print(" ".join(sorted(set(reads))))
"""


@needs_jit
def test_one_call_reads_many_documents(tmp_path):
    """800k documents in one kernel call: the kernels' C-call slots live in the entry block, not the loop
    (an alloca per document grew the stack until it overflowed, at about 300k documents)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("ir_measures")
    proc = subprocess.run([sys.executable, "-c", MANY_DOCUMENTS], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["place_tied", "read_run"]


@needs_jit
def test_scores_and_judgments_refuses_judgments_with_ids_of_another_type():
    from rankjit.io._dicts import scores_and_judgments

    run = [{"a": 1.0, "b": 2.0}]
    for judgments, read in (([{"a": 1, "c": 0}], True), ([{"a": 1, 7: 0}], False), ([{"a": 1, StrSub("c"): 0}], False)):
        raw, score, positions = np.zeros(2, dtype=np.int64), np.zeros(2), np.full(2, -1, dtype=np.int32)
        assert scores_and_judgments(run, np.array([0, 2]), judgments, UNJUDGED, raw, score, positions) is read
        if read:
            assert raw.tolist() == [1, UNJUDGED] and score.tolist() == [1.0, 2.0]
            assert [_item_at(run[0], p) for p in positions.tolist()] == [id("a"), id("b")]
