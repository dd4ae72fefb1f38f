"""``rankjit.compat.pytrec_eval`` against pytrec_eval-terrier itself (``import pytrec_eval``).

Every comparison hands the same dicts to both libraries and asks for the same output:
the same queries in the same order, the same keys in the same order, and values equal
to 1e-12 (NaN where pytrec_eval gives NaN).  Inputs: trec_eval's own test files
(``../shared/data/trec_eval``), the TREC 2012 Web runs (``../shared/data/web2012``) and
seeded random dicts (ties, scores equal only in float32, unjudged documents, grades -2..4,
empty queries on either side, queries missing from either side, int and bool scores,
relevance levels 1 to 3, ``judged_docs_only_flag``, long queries).  Then the quirks of
pytrec_eval's measure names and trec_eval 9's rounding, one test each, and every error
message.

For a query judged only below 0 pytrec_eval reads memory left by the previous query and,
over a long session, crashes or hangs (trec_eval 9's form_res_rels.c): the random qrels
never hold such a query.
"""
from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest

import rankjit.compat.pytrec_eval as rj

try:
    import pytrec_eval as pte
except ImportError:  # pragma: no cover - a test extra
    pte = None

needs_pte = pytest.mark.skipif(pte is None, reason="pytrec_eval-terrier is not installed (pip install -e '.[test]')")
DATA = Path(__file__).parents[2] / "shared" / "data"  # ../shared/data, as the other trec_eval tests find it
SUITE = DATA / "trec_eval"
WEB = DATA / "web2012"
needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"trec_eval test data not found at {SUITE} (../shared)")
needs_web = pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared)")

#: measure sets: every measure with its defaults, then parameters of every kind pytrec_eval passes on
MEASURE_SETS = {
    "all_trec": {"all_trec"},
    "cutoffs": {"P.1,2,3,50", "recall.1,4", "ndcg_cut.1,3,7", "map_cut.2,5", "success.1,2,4", "relative_P.3",
                "Rprec_mult.0.1,0.3,0.5,0.7,1.5,3"},
    "levels": {"iprec_at_recall.0.05,0.15,0.25,0.33,0.5,0.66,0.75,0.95", "11pt_avg.0.15,0.25,0.5", "set_F.0.5",
               "utility.3,2,1,0", "relstring.3", "P_5", "P.7"},
    "nicknames": {"official", "set"},
    # only measures that read no judgment of grade <= 0: the evaluator then looks up the documents of grade > 0
    # alone (the other sets read them all)
    "grade > 0": {"map", "gm_map", "Rprec", "recip_rank", "P.1,2,3,50", "recall.1,4", "ndcg", "ndcg_cut.1,3,7",
                  "map_cut.2,5", "success.1,2,4", "iprec_at_recall.0.05,0.5,1", "11pt_avg", "runid", "num_q",
                  "relstring"},
}
#: the parameters of trec_eval's out.test.meas_params that pytrec_eval's names can carry
SUITE_PARAMS = {"iprec_at_recall.0.10,0.20,0.25,0.75,0.50", "P.5,7,3", "recall.20,2000", "Rprec_mult.5.0,0.2,0.35",
                "11pt_avg.0.25,0.5,0.75", "ndcg_cut.10,20,23.4", "success.2,5,20"}


def read_pairs(path, value_field, convert):
    """``{qid: {docno: value}}`` of a TREC file: fields 1 and 3, and ``value_field`` (blank and '#' lines skipped)."""
    out = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            out.setdefault(fields[0], {})[fields[2]] = convert(fields[value_field])
    return out


def same_value(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= 1e-12 * max(1.0, abs(a))


def assert_same(expected, got):
    """The same queries and keys, in the same order, and the same values (NaN included)."""
    assert list(got) == list(expected)
    for q in expected:
        assert list(got[q]) == list(expected[q]), q
        bad = [(k, expected[q][k], got[q][k]) for k in expected[q] if not same_value(expected[q][k], got[q][k])]
        assert not bad, (q, bad[:5])


def compare(qrels, run, measures, **kwargs):
    expected = pte.RelevanceEvaluator(qrels, measures, **kwargs).evaluate(run)
    got = rj.RelevanceEvaluator(qrels, measures, **kwargs).evaluate(run)
    assert_same(expected, got)
    return got


# ---- the module's surface ------------------------------------------------------------------


@needs_pte
def test_supported_measures_and_nicknames_are_pytrec_evals():
    assert rj.supported_measures == pte.supported_measures
    assert rj.supported_nicknames == pte.supported_nicknames
    assert {"RelevanceEvaluator", "parse_qrel", "parse_run", "compute_aggregated_measure", "supported_measures",
            "supported_nicknames"} <= set(dir(rj))


def test_the_key_order_is_trec_evals_measure_table():
    from rankjit.io._cli import TREC_MEASURES

    assert list(rj._ORDER) == [m for m in TREC_MEASURES if m in rj.supported_measures]


# ---- trec_eval's test files and the TREC 2012 Web runs ---------------------------------------


SUITE_CASES = [
    pytest.param("qrels.test", "results.test", id="test"),
    pytest.param("qrels.rel_level", "results.test", id="rel_level"),
    pytest.param("qrels.test", "results.trunc", id="trunc"),
    pytest.param("qrels.test.with-comments", "results.test", id="with-comments"),
    pytest.param("qrels.comment.test", "results.comment.test", id="comment", marks=pytest.mark.slow),
]


@needs_pte
@needs_suite
@pytest.mark.parametrize("qrels_name, run_name", SUITE_CASES)
@pytest.mark.parametrize("relevance_level, judged_only", [(1, False), (2, False), (1, True), (3, True)])
def test_trec_eval_suite(qrels_name, run_name, relevance_level, judged_only):
    qrels = read_pairs(SUITE / qrels_name, 3, int)
    run = read_pairs(SUITE / run_name, 4, float)
    for measures in ({"all_trec"}, SUITE_PARAMS):
        compare(qrels, run, measures, relevance_level=relevance_level, judged_docs_only_flag=judged_only)


@needs_pte
@needs_web
@pytest.mark.slow
@pytest.mark.parametrize("run_name", ["run.ql.cata.txt", "run.rm.cata.txt"])
@pytest.mark.parametrize("relevance_level, judged_only", [(1, False), (2, False), (3, False), (1, True)])
def test_web2012(run_name, relevance_level, judged_only):
    with open(WEB / "qrels.adhoc.txt") as f:
        qrels = pte.parse_qrel(f)  # grades -2 .. 4
    with open(WEB / run_name) as f:
        run = pte.parse_run(f)
    for measures in MEASURE_SETS.values():
        got = compare(qrels, run, measures, relevance_level=relevance_level, judged_docs_only_flag=judged_only)
        assert len(got) == 50


# ---- random dicts ----------------------------------------------------------------------------


def random_case(seed):
    """Random qrels and run dicts: see the module docstring (every query judged >= 0 at least once)."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    long_queries = rng.random() < 0.3  # hundreds of documents: the histogram path of the placement
    names = ["d", "D", "d1", "d10", "d2", "é", "日本", "a b", "z" * 20, "ü"]
    pool = names + [f"d{i:03d}" for i in range(rng.randint(1, 400 if long_queries else 40))]
    for _ in range(rng.randint(1, 8)):
        qid = f"q{rng.randint(0, 12)}"
        if rng.random() < 0.1:
            qrels[qid] = {}
        else:
            docs = rng.sample(pool, rng.randint(1, len(pool)))
            grades = [rng.choice([-2, -1, 0, 0, 1, 1, 2, 3, 4]) for _ in docs]
            grades[0] = rng.choice([0, 1, 2, 3])
            qrels[qid] = dict(zip(docs, grades))
        if rng.random() < 0.85:
            qid = qid if rng.random() < 0.8 else f"q{rng.randint(0, 12)}"
            docs = rng.sample(pool, rng.randint(0, len(pool)))
            kind = rng.random()
            if kind < 0.3:
                scores = [float(rng.randint(0, 3)) for _ in docs]  # ties
            elif kind < 0.5:
                scores = [1.0 + rng.randint(0, 3) * 1e-9 for _ in docs]  # equal in float32 only
            elif kind < 0.6:
                scores = [rng.randint(-5, 5) for _ in docs]  # ints
            elif kind < 0.65:
                scores = [rng.random() < 0.5 for _ in docs]  # bools (ints for both libraries)
            else:
                scores = [rng.gauss(0, 1) for _ in docs]
            run[qid] = dict(zip(docs, scores))
    return qrels, run, rng.choice([1, 1, 2, 3]), rng.random() < 0.3


@needs_pte
@pytest.mark.parametrize("seed", range(60))
def test_random_dicts(seed):
    qrels, run, relevance_level, judged_only = random_case(seed)
    for measures in MEASURE_SETS.values():
        compare(qrels, run, measures, relevance_level=relevance_level, judged_docs_only_flag=judged_only)


@needs_pte
@pytest.mark.jit
def test_many_queries():
    """Enough queries for the parallel path where there are several cores; ties and unjudged documents."""
    rng = random.Random(7)
    qrels, run = {}, {}
    for q in range(3000):
        docs = [f"doc{rng.randrange(60)}" for _ in range(40)]
        qrels[str(q)] = {d: rng.choice([-1, 0, 1, 2]) for d in docs[:15]} | {docs[0]: 1}
        run[str(q)] = {d: round(rng.random(), 2) for d in docs[5:]}
    compare(qrels, run, {"map", "ndcg_cut.10", "P.10", "recall.100", "bpref", "iprec_at_recall"})
    compare(qrels, run, {"map", "ndcg_cut.10", "P.10", "recall.100", "iprec_at_recall"})  # (grades > 0 looked up)


@needs_pte
def test_the_same_evaluator_twice_and_qrels_changed_after():
    qrels, run, _, _ = random_case(3)
    _, other, _, _ = random_case(4)
    ours = rj.RelevanceEvaluator(qrels, {"all_trec"})
    theirs = pte.RelevanceEvaluator(qrels, {"all_trec"})
    for q in qrels.values():  # both read the judgments when built
        q.clear()
    for r in (run, other, run):
        assert_same(theirs.evaluate(r), ours.evaluate(r))


@needs_pte
def test_evaluators_on_other_grades_and_levels_made_in_turn():
    """The measures on grade codes are remembered per measures, grades and relevance_level: evaluators made in turn
    on qrels whose grades differ ({0, 1}, {0, 1, 2, 3}, {0, 2, 7}) and at other relevance levels each give
    pytrec_eval's values (nDCG's gain and AP's threshold depend on both)."""
    rng = random.Random(11)
    docs = [f"d{i}" for i in range(40)]
    run = {f"q{q}": {d: round(rng.random(), 2) for d in rng.sample(docs, 30)} for q in range(6)}
    cases = []
    for grades in ((0, 1), (0, 1, 2, 3), (0, 2, 7)):
        qrels = {f"q{q}": {d: rng.choice(grades) for d in rng.sample(docs, 20)} for q in range(6)}
        for i, q in enumerate(qrels):
            qrels[q][docs[i]] = grades[-1]  # every query holds the top grade
        cases += [(qrels, level) for level in (1, 2)]
    for qrels, level in cases + cases[::-1]:
        compare(qrels, run, {"map", "ndcg", "ndcg_cut.5", "P.5", "recall.10"}, relevance_level=level)


@pytest.mark.parametrize("measures", [{"map", "ndcg_cut.5"}, {"map", "bpref"}])
def test_qrels_ids_freed_by_the_caller_after_the_evaluator_is_made(measures):
    """The evaluator reads its own copy of the judgments: ids the caller's dicts alone held, then freed (the
    dicts cleared, other strings allocated in their place), still look the run's documents up."""
    import gc

    def new_id(i):  # a str object of its own (not one the run's dicts or the interpreter also hold)
        return "".join(["doc-", str(i), "-x"])

    qrels = {f"q{q}": {new_id(10 * q + i): (q + i) % 4 - 1 for i in range(10)} for q in range(5)}
    run = {f"q{q}": {new_id(10 * q + i): float((7 * i) % 5) for i in range(0, 14, 2)} for q in range(5)}
    want = rj.RelevanceEvaluator(qrels, measures).evaluate(run)
    ours = rj.RelevanceEvaluator(qrels, measures)
    for q in qrels.values():
        q.clear()
    gc.collect()
    churn = [new_id(-i) for i in range(20000)]  # (memory the freed ids held, reused)
    assert ours.evaluate(run) == want and ours.evaluate(dict(reversed(run.items()))) == want
    assert any(v for q in want.values() for v in q.values()) and churn


@pytest.mark.parametrize("measures", [{"map", "ndcg_cut.5"}, {"map", "bpref"}])
def test_the_evaluator_gives_back_the_judged_ids_when_collected(measures):
    """The evaluator holds each judged id (a reference taken by the compiled read, or a copy of the dicts on
    the Python path) and no longer once it is collected: nothing leaks."""
    import gc
    import sys

    ids = ["".join(["judged-", str(i)]) for i in range(40)]
    qrels = {f"q{q}": {ids[10 * q + i]: (q + i) % 4 - 1 for i in range(10)} for q in range(4)}
    before = [sys.getrefcount(x) for x in ids]
    evaluator = rj.RelevanceEvaluator(qrels, measures)
    result = evaluator.evaluate({"q1": {ids[12]: 1.0, ids[13]: 0.5}})
    assert result["q1"]["map"] > 0 and all(sys.getrefcount(x) > c for x, c in zip(ids, before))
    del evaluator
    gc.collect()
    assert [sys.getrefcount(x) for x in ids] == before


@pytest.mark.parametrize("measures", [{"map", "ndcg_cut.5"}, {"map", "bpref"}])
def test_a_pickled_evaluator_evaluates_in_another_process(tmp_path, measures):
    """An evaluator pickles with its judged ids, not their addresses: unpickled in a new process (as
    multiprocessing's spawn does) it gives the same values.  (It crashed there while the addresses were pickled.)"""
    import json
    import os
    import pickle
    import subprocess
    import sys

    rng = random.Random(7)
    qrels = {f"q{q}": {f"d{d}": rng.randint(-1, 3) for d in rng.sample(range(200), 40)} for q in range(30)}
    run = {f"q{q}": {f"d{d}": float(rng.randint(0, 9)) for d in rng.sample(range(200), 60)} for q in range(32)}
    evaluator = rj.RelevanceEvaluator(qrels, measures)
    want = evaluator.evaluate(run)
    (tmp_path / "evaluator.pkl").write_bytes(pickle.dumps(evaluator))
    (tmp_path / "run.json").write_text(json.dumps(run))
    code = ("import json, pickle, sys; e = pickle.loads(open(sys.argv[1], 'rb').read()); "
            "print(json.dumps(e.evaluate(json.load(open(sys.argv[2])))))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "evaluator.pkl"), str(tmp_path / "run.json")],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == want
    assert pickle.loads(pickle.dumps(evaluator)).evaluate(run) == want  # (and in this process)


@needs_pte
@pytest.mark.parametrize("measures", [{"map", "ndcg"}, {"map", "bpref"}])
def test_only_the_judgments_the_measures_read_are_looked_up(measures):
    """map and ndcg read the documents of grade > 0 alone, bpref every judgment: both give pytrec_eval's values."""
    qrels, run, _, _ = random_case(5)
    qrels["q99"], run["q99"] = {"a": 0, "b": -1, "c": 2}, {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}
    ours = rj.RelevanceEvaluator(qrels, measures)
    looked_up = sum(g > 0 or "bpref" in measures for d in qrels.values() for g in d.values())
    assert ours._judgments._row_labels.shape[0] == looked_up  # every judged document for bpref, else grade > 0
    theirs = pte.RelevanceEvaluator(qrels, measures)
    for q in qrels.values():
        q.clear()
    reordered = dict(reversed(run.items()))  # the run's queries in another order than the qrels'
    for r in (run, reordered, {"q99": run["q99"]}):
        assert_same(theirs.evaluate(r), ours.evaluate(r))


# ---- pytrec_eval's conventions, one at a time --------------------------------------------------


@needs_pte
def test_scores_tie_in_float32_and_ties_go_by_document_id_descending():
    qrels = {"q": {"a": 0, "b": 0, "c": 1}}
    run = {"q": {"a": 1.0 + 1e-9, "b": 1.0, "c": 1.0 - 1e-9, "z": 0.5}}  # one score in float32
    got = compare(qrels, run, {"map", "P.1", "recip_rank"})
    float64_order = rj.RelevanceEvaluator(qrels, {"P.1"}).evaluate({"q": {"a": 2.0, "b": 1.0, "c": 0.0}})
    assert got["q"]["P_1"] != float64_order["q"]["P_1"]  # (c ranks first: the largest id among the tied)


@needs_pte
def test_iprec_at_recall_counts_relevant_documents_as_trec_eval_9():
    """c = (long)(x R + 0.9): 0.1 x 13 relevant gives 2 in trec_eval 9, lround(1.3) = 1 in trec_eval 10."""
    qrels = {"q": {f"r{i:02d}": 1 for i in range(13)}}
    run = {"q": {"r00": 3.0, "n1": 2.9, "n2": 2.8, "r01": 2.7, "n3": 1.0}}
    got = compare(qrels, run, {"iprec_at_recall.0.1", "11pt_avg"})
    assert got["q"]["iprec_at_recall_0.10"] == 2 / 4  # max precision from the 2nd relevant on (trec_eval 10: 1st, 1/1)


@needs_pte
def test_a_query_with_no_document_gives_nan_at_recall_0_and_11pt_avg():
    got = compare({"q": {"a": 1}, "p": {"a": 1}}, {"q": {}, "p": {"a": 1.0}}, {"iprec_at_recall", "11pt_avg", "map"})
    assert math.isnan(got["q"]["iprec_at_recall_0.00"]) and math.isnan(got["q"]["11pt_avg"])
    assert got["q"]["iprec_at_recall_0.10"] == 0.0


@needs_pte
def test_names_are_read_as_pytrec_eval_reads_them():
    qrels = {"q": {f"d{i}": i % 3 for i in range(30)}}
    run = {"q": {f"d{i}": float(i % 7) for i in range(0, 40, 2)}}
    cases = {
        frozenset({"P", "P.5"}): ["P_5"],  # a plain name next to a parameterised one adds nothing
        frozenset({"P.5", "P_10"}): ["P_5", "P_10"],  # merged
        frozenset({"P.5x"}): ["P_5"],  # the numbers at the start of the parameter text
        frozenset({"recall.2.5"}): ["recall_2"],  # trec_eval's atol
        frozenset({"ndcg_cut_3", "map.5"}): ["map", "ndcg_cut_3"],  # parameters of map: ignored
        frozenset({"iprec_at_recall.0.123"}): ["iprec_at_recall_0.12"],  # %3.2f
        frozenset({"utility.3,2,1,0", "set_F.2,0.5"}): ["utility", "set_F"],  # sorted as strings: 0,1,2,3 / 0.5,2
        frozenset({"official"}): list(pte.RelevanceEvaluator(qrels, {"official"}).evaluate(run)["q"]),
    }
    for names, keys in cases.items():
        got = compare(qrels, run, set(names))
        assert list(got["q"]) == keys


@needs_pte
def test_per_query_values_of_gm_and_constant_measures():
    qrels = {"q": {"a": 1, "b": 0}, "p": {"a": 1}}
    got = compare(qrels, {"q": {"a": 1.0, "b": 2.0}, "p": {"b": 1.0}},
                  {"gm_map", "gm_bpref", "runid", "num_q", "relstring", "map"})
    assert got["q"]["gm_map"] == math.log(got["q"]["map"])  # logs: compute_aggregated_measure takes exp
    assert got["p"]["gm_map"] == math.log(1e-5)
    assert [got["q"][k] for k in ("runid", "num_q", "relstring")] == [0.0, 1.0, 0.0]


@needs_pte
def test_queries_relevance_levels_and_judged_only():
    qrels = {"b": {"x": 2, "y": 1, "z": -1}, "a": {"x": 1}, "e": {}}
    run = {"b": {"x": 0.1, "y": 0.9, "u": 0.5, "z": 0.7}, "zz": {"x": 1.0}, "e": {"x": 1.0}, "a": {}}
    for kwargs in ({}, {"relevance_level": 2}, {"judged_docs_only_flag": True}, {"judged_docs_only_flag": 1}):
        got = compare(qrels, run, {"all_trec"}, **kwargs)
        assert list(got) == ["b", "a"]  # the run's order; queries without judgments left out
    assert compare(qrels, {}, {"map"}) == {}
    assert compare(qrels, {"zz": {"x": 1.0}}, {"map"}) == {}


@needs_pte
def test_int_bool_and_float_values():
    compare({"q": {"a": True, "b": 2, "c": False}}, {"q": {"a": 3, "b": True, "c": 2.5}}, {"all_trec"})
    with pytest.raises(TypeError):
        pte.RelevanceEvaluator({"q": {"a": 1.0}}, {"map"})
    with pytest.raises(TypeError, match=re.escape("query_relevance['q']['a'] = 1.0 is a float; relevance must be an "
                                                  "int")):
        rj.RelevanceEvaluator({"q": {"a": 1.0}}, {"map"})


@needs_pte
def test_compute_aggregated_measure():
    qrels, run, _, _ = random_case(11)
    out = rj.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)
    for key in next(iter(out.values())):
        values = [m[key] for m in out.values()]
        expected = pte.compute_aggregated_measure(key, values)
        assert same_value(expected, rj.compute_aggregated_measure(key, values)), key


@needs_pte
@needs_suite
def test_parse_qrel_and_parse_run():
    with open(SUITE / "qrels.test") as f:
        lines = f.readlines()
    assert rj.parse_qrel(lines) == pte.parse_qrel(lines)
    with open(SUITE / "results.test") as f:
        lines = f.readlines()
    assert rj.parse_run(lines) == pte.parse_run(lines)
    assert isinstance(rj.parse_run(lines), type(pte.parse_run(lines)))


# ---- errors --------------------------------------------------------------------------------


def raises(exc, message, fn, *args, **kwargs):
    with pytest.raises(exc, match="^" + re.escape(message)):
        fn(*args, **kwargs)


def test_errors_of_the_evaluator():
    ev = rj.RelevanceEvaluator
    q = {"q": {"a": 1}}
    raises(TypeError, "query_relevance must be a dict {query id: {document id: relevance}}, got list", ev, [], {"map"})
    raises(TypeError, "query_relevance: query id 1 is a int, not a str", ev, {1: {"a": 1}}, {"map"})
    raises(TypeError, "query_relevance['q'] is a list, not a dict {document id: relevance}", ev, {"q": ["a"]}, {"map"})
    raises(TypeError, "query_relevance['q']: document id 5 is a int, not a str", ev, {"q": {5: 1}}, {"map"})
    # the first document ids are checked before any value is read in Python: with a bad grade elsewhere too, and
    # when only a later query's first id is wrong (the compiled read of the grades stops at neither)
    raises(TypeError, "query_relevance['r']: document id 5 is a int, not a str", ev,
           {"q": {"a": 1.5}, "r": {5: 1}}, {"map"})
    raises(TypeError, "query_relevance['r']: document id 5 is a int, not a str", ev,
           {"q": {"a": 1}, "r": {5: 1, "b": 2}}, {"map"})
    raises(TypeError, "query_relevance['r']: document id 5 is a int, not a str", ev,
           {"q": {"a": 1}, "r": {"b": 2, 5: 1}}, {"map"})  # (not the first: it would be judged for no document)
    raises(ValueError, "query_relevance['q']['a'] = 36893488147419103232 does not fit in 64 bits", ev,
           {"q": {"b": 1, "a": 2**65}}, {"map"})
    raises(ValueError, "query_relevance: query id 'q\\x00' contains a NUL character (pytrec_eval would cut it there)",
           ev, {"q\x00": {"a": 1}}, {"map"})
    raises(TypeError, "relevance_level must be an int, got 1.0", ev, q, {"map"}, relevance_level=1.0)
    raises(TypeError, "relevance_level must be an int, got '2'", ev, q, {"map"}, relevance_level="2")
    raises(TypeError, "relevance_level must be >= 1 (pytrec_eval's rule), got 0", ev, q, {"map"}, relevance_level=0)
    raises(TypeError, "judged_docs_only_flag must be a bool, got 'yes'", ev, q, {"map"}, judged_docs_only_flag="yes")


def test_errors_of_measure_names():
    ev = rj.RelevanceEvaluator
    q = {"q": {"a": 1}}
    raises(TypeError, "measures must be a collection of measure names such as {'map', 'ndcg_cut.10'}, not the "
           "string 'map'", ev, q, "map")
    raises(TypeError, "measures must be a collection of measure names such as {'map', 'ndcg_cut.10'}, got int",
           ev, q, 5)
    raises(TypeError, "measure names must be str, got 5 (int)", ev, q, {5})
    raises(ValueError, "unsupported measure 'foo' (pytrec_eval's measures: supported_measures", ev, q, {"foo"})
    raises(ValueError, "unsupported measure 'rbp'", ev, q, {"rbp"})  # trec_eval 10's, not pytrec_eval's
    raises(ValueError, "unsupported measure nickname 'prefs': it names measures pytrec_eval does not compute "
           "(prefs_avgjg, ", ev, q, {"prefs"})
    raises(ValueError, "measure 'P.0': cutoffs must be positive (pytrec_eval aborts on a cutoff 0)", ev, q, {"P.0"})
    raises(ValueError, "measure 'P.05,5': a cutoff given twice (pytrec_eval aborts on it)", ev, q, {"P.5", "P.05"})
    raises(ValueError, "measure 'iprec_at_recall.0.1,0.10': a level given twice (pytrec_eval aborts on it)", ev, q,
           {"iprec_at_recall.0.1,0.10"})
    raises(ValueError, "measure 'ndcg.2': pytrec_eval cannot give ndcg parameters (its name pattern keeps only "
           "numbers, trec_eval then reads a malformed level=gain pair and pytrec_eval aborts); use 'ndcg'",
           ev, q, {"ndcg.2=3"})
    raises(ValueError, "measure 'utility.1': utility takes 4 coefficients a,b,c,d, got 1 (pytrec_eval reads the "
           "numbers up to the first '-'", ev, q, {"utility.1,-1,0,0"})


@needs_pte
def test_unsupported_measures_are_pytrec_evals():
    for name in ("foo", "rbp", "P_avgjg", "unj"):
        with pytest.raises(ValueError):
            pte.RelevanceEvaluator({"q": {"a": 1}}, {name})


@needs_pte
def test_inputs_pytrec_eval_takes():
    """Ids of a str subclass (NumPy's str_, as pandas gives them), a run dict whose class iterates in its own order
    (its scores are read in storage order, and so are the ids of its tied documents), NumPy integers and bools as
    relevance_level: what pytrec_eval computes."""
    import numpy as np
    from collections import OrderedDict

    def both(qrels, run, measures=("map", "P.2"), **kwargs):
        ours = rj.RelevanceEvaluator(qrels, set(measures), **kwargs).evaluate(run)
        theirs = pte.RelevanceEvaluator(qrels, set(measures), **kwargs).evaluate(run)
        flat = {(str(q), m): x for q, v in ours.items() for m, x in v.items()}
        assert flat == pytest.approx({(str(q), m): x for q, v in theirs.items() for m, x in v.items()}, abs=1e-12)

    s = np.str_
    both({s("q"): {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 2.0}})
    both({"q": {"a": 1, "b": 0}}, {s("q"): {"a": 1.0, "b": 2.0}})
    both({"q": {"a": 1, "b": 1, "c": 0}}, {"q": {s("a"): 1.0, "b": 1.0, s("c"): 1.0}})  # (ties, read in Python)
    both({"q": {s("a"): 1, "c": 0}}, {"q": {"a": 1.0, "c": 2.0}})
    run = OrderedDict(a=2, b=2, c=1, z=1)  # int scores: the Python read; 'a' and 'b' tie
    run.move_to_end("a")
    both({"q": {"a": 1, "c": 1}}, {"q": run})
    both({"q": {"a": 1, "c": 2}}, {"q": run}, relevance_level=np.int64(2))
    both({"q": {"a": 1, "c": 2}}, {"q": run}, relevance_level=True)


def test_a_query_judged_only_below_zero_alone():
    """trec_eval's gain measures on a query whose every judgment is below 0, with no query judged >= 0 in the call:
    no relevant document, no gain (pytrec_eval gives 0 in a fresh process; in a long one it may read the memory of
    another query)."""
    ev = rj.RelevanceEvaluator({"q": {"a": -1, "b": -2}, "p": {"a": 1}}, {"G", "ndcg_rel", "Rndcg", "map"})
    assert ev.evaluate({"q": {"a": 1.0, "c": 0.5}}) == {"q": {"G": 0.0, "ndcg_rel": 0.0, "Rndcg": 0.0, "map": 0.0}}


def test_parameters_beyond_a_c_long():
    """pytrec_eval reads cutoffs with C's atol, which saturates at LONG_MAX (relative_P of k >= R: rel_ret / R), and
    Rprec_mult's level times R beyond every ranking counts every document (rel_ret / c, c huge: 0 to 1e-12); the
    engine's cutoffs stop at 2**62, with a message (an IndexError and an OverflowError before)."""
    q, r = {"q": {"a": 1, "b": 1}}, {"q": {"a": 1.0, "c": 0.5}}
    got = rj.RelevanceEvaluator(q, {"relative_P.99999999999999999999"}).evaluate(r)
    assert got == {"q": {"relative_P_9223372036854775807": 0.5}}
    got = rj.RelevanceEvaluator(q, {"Rprec_mult.5000000000000000000"}).evaluate(r)["q"]
    assert list(got) == ["Rprec_mult_50000000"] and 0.0 <= got["Rprec_mult_50000000"] < 1e-12
    raises(ValueError, "cutoff of 'P@9223372036854775807' is too large (at most 2**62); omit the cutoff for the "
           "whole row", rj.RelevanceEvaluator, q, {"P.99999999999999999999"})


@needs_pte
@pytest.mark.parametrize("level", ["123456789", "0.123456789", "12345.678", "1234567.5", "99.999", "0.005", "2.5"])
def test_keys_of_real_parameters_as_pytrec_eval_writes_them(level):
    """trec_eval writes a real parameter as "%3.2f", and pytrec_eval's key keeps its first 8 characters."""
    q, r = {"q": {"a": 1, "b": 1}}, {"q": {"a": 1.0, "c": 0.5}}
    measures = {"Rprec_mult." + level, "iprec_at_recall." + level}
    assert rj.RelevanceEvaluator(q, measures).evaluate(r) == pte.RelevanceEvaluator(q, measures).evaluate(r)


def test_errors_of_evaluate():
    ev = rj.RelevanceEvaluator({"q": {"a": 1, "b": 0}}, {"map"})
    raises(TypeError, "scores must be a dict {query id: {document id: score}}, got list", ev.evaluate, [])
    raises(TypeError, "scores: query id 1 is a int, not a str", ev.evaluate, {1: {"a": 1.0}})
    raises(TypeError, "scores['q'] is a tuple, not a dict {document id: score}", ev.evaluate, {"q": ("a",)})
    raises(TypeError, "scores['q']: document id 3 is a int, not a str", ev.evaluate, {"q": {3: 1.0}})
    # the first ids before the scores: a later query's first id (and a NaN before it; a query the qrels lack)
    raises(TypeError, "scores['r']: document id 3 is a int, not a str", ev.evaluate,
           {"q": {"a": math.nan}, "r": {3: 1.0}})
    raises(TypeError, "scores['q']: document id 3 is a int, not a str", ev.evaluate,
           {"x": {"a": "1.5"}, "q": {3: 1.0}})
    raises(TypeError, "scores['q']['a'] = '1.5' is a str; a score must be an int or a float", ev.evaluate,
           {"q": {"a": "1.5"}})
    raises(TypeError, "scores['q']['b'] = None is a NoneType; a score must be an int or a float", ev.evaluate,
           {"q": {"a": 1.0, "b": None}})
    raises(ValueError, "scores['q']['b'] is NaN: a score must be a number (pytrec_eval ranks NaN in an undefined "
           "order)", ev.evaluate, {"q": {"a": 1.0, "b": math.nan}})
    raises(ValueError, "scores['x']['b'] = 1" + "0" * 400 + " does not fit in a double", ev.evaluate,
           {"q": {"a": 1.0}, "x": {"a": 1.0, "b": 10**400}})  # (a query the qrels lack: checked too)
    raises(ValueError, "scores: query id 'q\\x00' contains a NUL character", ev.evaluate, {"q\x00": {"a": 1.0}})
    # (an id after the first is checked where ids decide a tie: 7 ties with the judged 'a')
    raises(TypeError, "scores['q']: document id 7 is a int, not a str", ev.evaluate, {"q": {"a": 1.0, 7: 1.0}})
    # (any id after the first, where no tie decides: it would match nothing, the query scored without it)
    raises(TypeError, "scores['q']: document id 7 is a int, not a str", ev.evaluate, {"q": {"a": 1.0, 7: 0.5}})
    raises(TypeError, "scores['q']: document id 7 is a int, not a str", ev.evaluate, {"q": {"a": 1, 7: 0.5}})


@needs_pte
@pytest.mark.parametrize("measures", [{"map", "P.5"}, {"map", "bpref"}])
def test_a_run_read_in_blocks(measures):
    """A run of several blocks of documents (rj._BLOCK_DOCS): a score beyond float32 (inf, as a C float), a NumPy
    float and the errors in a late block."""
    rng = random.Random(11)
    qrels = {f"q{i}": {f"d{j}": rng.choice([-1, 0, 1, 2]) for j in range(0, 300, 7)} for i in range(60)}
    run = {f"q{i}": {f"d{j}": float(rng.randint(0, 50)) for j in range(300)} for i in range(60)}
    assert sum(map(len, run.values())) > 3 * rj._BLOCK_DOCS
    run["q55"]["d14"] = 1e300
    expected = pte.RelevanceEvaluator(qrels, measures).evaluate(run)
    ev = rj.RelevanceEvaluator(qrels, measures)
    assert_same(expected, ev.evaluate(run))
    import numpy as np

    assert_same(expected, ev.evaluate({**run, "q55": {**run["q55"], "d14": np.float64(1e300)}}))
    raises(ValueError, "scores['q55']['d3'] is NaN", ev.evaluate, {**run, "q55": {**run["q55"], "d3": math.nan}})
    raises(TypeError, "scores['q55']['d3'] = 'x' is a str", ev.evaluate, {**run, "q55": {**run["q55"], "d3": "x"}})


def test_errors_of_the_parsers():
    raises(ValueError, "run line 2: expected 6 fields 'query_id Q0 doc_id rank score run_name', got 5: "
           "'q Q0 b 2 1.0'", rj.parse_run, ["q Q0 a 1 2.0 t\n", "q Q0 b 2 1.0\n"])
    raises(ValueError, "run line 2: document 'a' is given twice for query 'q'", rj.parse_run,
           ["q Q0 a 1 2.0 t", "q Q0 a 2 1.0 t"])
    raises(ValueError, "run line 1: score 'x' is not a number", rj.parse_run, ["q Q0 a 1 x t"])
    raises(ValueError, "qrels line 1: expected 4 fields 'query_id iter doc_id relevance', got 3: 'q 0 a'",
           rj.parse_qrel, ["q 0 a"])
    raises(ValueError, "qrels line 2: document 'a' is judged twice for query 'q'", rj.parse_qrel,
           ["q 0 a 1", "q 0 a 0"])
    raises(ValueError, "qrels line 1: relevance '1.5' is not an integer", rj.parse_qrel, ["q 0 a 1.5"])
