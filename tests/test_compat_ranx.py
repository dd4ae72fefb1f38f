"""``rankjit.compat.ranx`` against ranx itself (``import ranx``).

Every comparison hands the same dicts, files or DataFrames to both libraries and asks for
the same output: per-query values equal to 1e-9, the same queries in the same order, the
same ``run.scores`` / ``mean_scores``, the same ``to_dict`` / files / Report table, LaTeX,
dict and DataFrame.  Inputs: seeded random dicts (grades -2..4, unjudged and unretrieved
judged documents, queries without relevant documents, rows of 0 to 60 documents), the
trec_eval suite's qrels and runs (``../shared/data/trec_eval``) and the TREC 2012 Web runs
(``../shared/data/web2012``).

ranx's answer is not the reference in three places, each tested against what it should be:

* ties: ranx's order among equal scores is its Numba quicksort's; rankjit keeps the run's
  order.  Random scores are tie-free; on the real runs (which tie) ranx gets the run with
  its ties broken in the run's order (:func:`untied`), which must give rankjit's values;
* bpref of a query without relevant documents: ranx's Numba loop swallows a
  ZeroDivisionError and leaves 0 (compiled) or NaN (interpreted) there and 0 in the
  queries after it in the same thread; bpref is compared on qrels restricted to queries
  with a relevant document, and rankjit's 0 for the others is tested on its own;
* Fisher p-values: ranx draws its permutations from per-thread generators; rankjit's come
  from :func:`rankjit.stats.randomization_test` and are tested to be exactly those.
"""
from __future__ import annotations

import json
import math
import os
import random
import re
from pathlib import Path

import numpy as np
import pytest

ranx = pytest.importorskip("ranx", reason="ranx is not installed (the oracle of these tests)")

import rankjit.compat.ranx as rj  # noqa: E402
from rankjit import stats  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")  # ranx's Numba type-safety and NumPy 0/0 warnings

DATA = Path(__file__).parents[2] / "shared" / "data"  # ../shared/data, as the other tests find it
SUITE = DATA / "trec_eval"
WEB = DATA / "web2012"
needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"trec_eval test data not found at {SUITE} (../shared)")
needs_web = pytest.mark.skipif(not WEB.is_dir(), reason=f"TREC 2012 Web data not found at {WEB} (../shared)")

FAMILIES = ["hits", "hit_rate", "precision", "recall", "f1", "mrr", "map", "dcg", "dcg_burges", "ndcg", "ndcg_burges"]
#: every metric but bpref: each family with cutoffs and relevance levels, r-precision, rbp
METRICS = [f + k + lvl for f in FAMILIES for k in ["", "@1", "@3", "@10", "@100"] for lvl in ["", "-l0", "-l2"]]
METRICS += ["r-precision", "r-precision@5", "r-precision-l2", "rbp.8", "rbp.95", "rbp.5-l2", "rbp@9", "hits@0",
            "ndcg@10-l3", "map@100-l4"]
BPREF = ["bpref", "bpref-l2", "bpref@10"]


# ---- data and helpers ----------------------------------------------------------------------


def random_dicts(seed, n_queries=40, tie_free=True):
    """(qrels, run) dicts: rows of 0..60 documents, grades -2..4, unjudged and unretrieved judged documents."""
    rnd = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        n = rnd.choice([0, 1, 2, 5, 12, 30, 60])
        docs = list(dict.fromkeys(f"d{rnd.randrange(10**6)}" for _ in range(n + 12)))
        scores = rnd.sample(range(10**6), len(docs)) if tie_free else [rnd.randrange(4) for _ in docs]
        run[f"q{q:02d}"] = {d: s / 1000 for d, s in zip(docs[:n], scores)}
        judged = rnd.sample(docs, min(len(docs), rnd.choice([1, 3, 8, 15])))
        qrels[f"q{q:02d}"] = {d: rnd.choice([-2, -1, 0, 0, 1, 1, 2, 3, 4]) for d in judged}
    return qrels, run


def untied(run):
    """The run with its scores replaced by distinct ones that rank each query as rankjit does:
    by score, descending, equal scores in the run's order."""
    out = {}
    for q, docs in run.items():
        order = sorted(range(len(docs)), key=lambda i: -list(docs.values())[i])  # stable: ties keep their order
        keys = list(docs)
        out[q] = {keys[i]: float(len(order) - r) for r, i in enumerate(order)}
    return out


def read_pairs(path, value_field, convert):
    """``{qid: {docno: value}}`` of a TREC file (fields 1 and 3, and ``value_field``)."""
    out = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                out.setdefault(fields[0], {})[fields[2]] = convert(fields[value_field])
    return out


def with_relevant(qrels, level):
    """The queries of ``qrels`` holding a document judged >= ``level`` (where ranx's bpref is defined)."""
    return {q: d for q, d in qrels.items() if any(v >= level for v in d.values())}


def check_bpref(qrels, run, untie=False):
    """bpref at levels 1 and 2 against ranx, on the queries with a relevant document at the level."""
    for level, names in ((1, ["bpref", "bpref@10"]), (2, ["bpref-l2"])):
        sub = with_relevant(qrels, level)
        if not sub:
            continue
        sub_run = {q: run.get(q, {}) for q in sub}
        expected = ranx.evaluate(ranx.Qrels(sub), ranx.Run(untied(sub_run) if untie else sub_run), names,
                                 return_mean=False)
        got = rj.evaluate(rj.Qrels(sub), rj.Run(sub_run), names, return_mean=False)
        if len(names) == 1:  # (one metric: its array)
            expected, got = {names[0]: expected}, {names[0]: got}
        assert_values(expected, got, names)


def assert_values(expected, got, metrics, tol=1e-9):
    for m in metrics:
        a, b = np.asarray(expected[m], dtype=float), np.asarray(got[m], dtype=float)
        assert a.shape == b.shape, m
        bad = np.flatnonzero(~((np.abs(a - b) <= tol) | (np.isnan(a) & np.isnan(b))))
        assert not bad.size, (m, bad[:5].tolist(), a[bad[:5]].tolist(), b[bad[:5]].tolist())


def both(qrels, run, metrics, **kwargs):
    """ranx's and rankjit's per-query values, through Qrels and Run objects."""
    expected = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics, return_mean=False, **kwargs)
    got = rj.evaluate(rj.Qrels(qrels), rj.Run(run), metrics, return_mean=False, **kwargs)
    return expected, got


def raises(exc, message, fn, *args, **kwargs):
    with pytest.raises(exc, match="^" + re.escape(message)):
        fn(*args, **kwargs)


# ---- per-query values ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_random_dicts_equal_ranx(seed):
    qrels, run = random_dicts(seed)
    expected, got = both(qrels, run, METRICS)
    assert_values(expected, got, METRICS)
    check_bpref(qrels, run)  # where ranx defines it (every query with a relevant document at the level)


def test_plain_dicts_equal_ranx():
    """ranx.evaluate on dicts (no Qrels / Run): the same values, in the dicts' order."""
    qrels, run = random_dicts(7)
    keys = [q for q in qrels if run[q]][::-1]  # not sorted: the output follows the qrels dict
    # (ranx's dict path fails on a query without documents: none here)
    qrels, run = {q: qrels[q] for q in keys}, {q: run[q] for q in keys}
    metrics = ["ndcg@10", "map", "hits@3", "f1@5-l2", "rbp.9"]
    expected = ranx.evaluate(qrels, run, metrics, return_mean=False)
    assert_values(expected, rj.evaluate(qrels, run, metrics, return_mean=False), metrics)
    # and rankjit matches queries by id whatever the run dict's order (ranx pairs them by position)
    shuffled = {q: run[q] for q in sorted(run)}
    assert_values(expected, rj.evaluate(qrels, shuffled, metrics, return_mean=False), metrics)


def test_ties_follow_the_runs_order():
    """Equal scores rank in the run's order: rankjit on a tied run is ranx on the run untied that way."""
    qrels, run = random_dicts(3, tie_free=False)
    assert any(len(set(d.values())) < len(d) for d in run.values())
    expected = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(untied(run)), METRICS, return_mean=False)
    got = rj.evaluate(rj.Qrels(qrels), rj.Run(run), METRICS, return_mean=False)
    assert_values(expected, got, METRICS)


def test_bpref_of_queries_without_relevant_documents_is_0_and_spares_the_others():
    qrels = {"a": {"x": 1, "y": 0}, "b": {"x": 0}, "c": {"x": 1, "y": 0}}  # query b: nothing relevant
    run = {q: {"y": 2.0, "x": 1.0} for q in qrels}
    got = rj.evaluate(qrels, run, ["bpref"], return_mean=False)
    # by the definition: x has 1 judged non-relevant document above it, min(1, R=1) / min(N=1, R=1) = 1
    assert got.tolist() == [0.0, 0.0, 0.0]
    run = {q: {"x": 2.0, "y": 1.0} for q in qrels}
    assert rj.evaluate(qrels, run, ["bpref"], return_mean=False).tolist() == [1.0, 0.0, 1.0]
    # no judged non-relevant document: ranx's 0/0 (NaN) once a relevant one is retrieved, 0 otherwise
    only_rel = {"a": {"x": 1}, "b": {"x": 1}}
    assert np.isnan(rj.evaluate(only_rel, {"a": {"x": 1.0}, "b": {"z": 1.0}}, "bpref", return_mean=False)[0])
    assert ranx.evaluate(only_rel, {"a": {"x": 1.0}, "b": {"z": 1.0}}, "bpref", return_mean=False)[1] == 0.0
    expected = ranx.evaluate(ranx.Qrels(only_rel), ranx.Run({"a": {"x": 1.0}, "b": {"z": 1.0}}), "bpref",
                             return_mean=False)
    got = rj.evaluate(rj.Qrels(only_rel), rj.Run({"a": {"x": 1.0}, "b": {"z": 1.0}}), "bpref", return_mean=False)
    assert_values({"b": expected}, {"b": got}, ["b"])


def test_edge_queries():
    """Empty rows (from make_comparable), queries judged only below the level, one-document rows."""
    qrels = {"a": {"x": 3, "y": -1}, "b": {"x": 0}, "c": {"z": 2}, "d": {"w": 1, "v": 4}}
    run = {"a": {"y": 0.5, "x": 0.4}, "b": {"x": 0.9}, "e": {"x": 1.0}, "d": {"v": 0.1}}
    expected = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), METRICS, return_mean=False, make_comparable=True)
    got = rj.evaluate(rj.Qrels(qrels), rj.Run(run), METRICS, return_mean=False, make_comparable=True)
    assert_values(expected, got, METRICS)


# ---- real data -------------------------------------------------------------------------------


SUITE_CASES = [
    pytest.param("qrels.test", "results.test", id="test"),
    pytest.param("qrels.rel_level", "results.test", id="rel_level"),
    pytest.param("qrels.comment.test", "results.comment.test", id="comment"),
]


@needs_suite
@pytest.mark.parametrize("qrels_name, run_name", SUITE_CASES)
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_trec_eval_suite_files(qrels_name, run_name, tmp_path):
    """from_file on trec_eval's test files (docnos with '#', grades 0..4): ranx's values on the same files."""
    untied_path = tmp_path / "untied.trec"
    run = read_pairs(SUITE / run_name, 4, float)
    with open(untied_path, "w") as f:
        f.writelines(f"{q} Q0 {d} 0 {s!r} untied\n" for q, docs in untied(run).items() for d, s in docs.items())
    a_q, a_r = ranx.Qrels.from_file(str(SUITE / qrels_name), kind="trec"), ranx.Run.from_file(str(untied_path))
    b_q, b_r = rj.Qrels.from_file(SUITE / qrels_name, kind="trec"), rj.Run.from_file(SUITE / run_name, kind="trec")
    assert b_q.to_dict() == a_q.to_dict()
    assert b_r.name == "STANDARD" if run_name == "results.test" else b_r.name == "comment.test"
    expected = ranx.evaluate(a_q, a_r, METRICS, return_mean=False, make_comparable=True)
    got = rj.evaluate(b_q, b_r, METRICS, return_mean=False, make_comparable=True)
    assert_values(expected, got, METRICS)
    assert b_r.get_query_ids() == a_r.get_query_ids()
    check_bpref(b_q.to_dict(), run, untie=True)


@needs_web
@pytest.mark.slow
@pytest.mark.parametrize("run_name", ["run.ql.cata.txt", "run.rm.cata.txt"])
def test_web2012(run_name, tmp_path):
    """The TREC 2012 Web runs (grades -2..4, ties), read from the files by both."""
    run = read_pairs(WEB / run_name, 4, float)
    untied_path = tmp_path / "untied.trec"
    with open(untied_path, "w") as f:
        f.writelines(f"{q} Q0 {d} 0 {s!r} indri\n" for q, docs in untied(run).items() for d, s in docs.items())
    a_q, a_r = ranx.Qrels.from_file(str(WEB / "qrels.adhoc.txt")), ranx.Run.from_file(str(untied_path))
    b_q, b_r = rj.Qrels.from_file(WEB / "qrels.adhoc.txt"), rj.Run.from_file(WEB / run_name)
    expected = ranx.evaluate(a_q, a_r, METRICS, return_mean=False, make_comparable=True)
    got = rj.evaluate(b_q, b_r, METRICS, return_mean=False, make_comparable=True)
    assert_values(expected, got, METRICS)
    assert len(got["map"]) == 50 and b_r.name == a_r.name == "indri"
    check_bpref(b_q.to_dict(), run, untie=True)


# ---- evaluate's outputs and the Run it fills ---------------------------------------------------


def test_return_shapes_and_saved_scores_are_ranxs():
    qrels, run = random_dicts(11, n_queries=12)
    metrics = ["ndcg@5", "map", "mrr", "ndcg@5"]  # a repeated name
    for kwargs in ({}, {"return_std": True}, {"return_mean": False}, {"return_mean": False, "return_std": True}):
        a_run, b_run = ranx.Run(run, name="r"), rj.Run(run, name="r")
        expected = ranx.evaluate(ranx.Qrels(qrels), a_run, metrics, **kwargs)
        got = rj.evaluate(rj.Qrels(qrels), b_run, metrics, **kwargs)
        assert list(got) == list(expected)
        for m in expected:
            if isinstance(expected[m], dict):
                assert list(got[m]) == ["mean", "std"]
                assert got[m]["mean"] == pytest.approx(expected[m]["mean"], abs=1e-12)
                assert got[m]["std"] == pytest.approx(expected[m]["std"], abs=1e-12)
            else:
                assert type(got[m]) is type(expected[m])
                np.testing.assert_allclose(got[m], expected[m], atol=1e-12)
        assert list(b_run.scores) == list(a_run.scores) and list(b_run.mean_scores) == list(a_run.mean_scores)
        assert list(b_run.std_scores) == list(a_run.std_scores)
        for m in a_run.scores:
            assert list(b_run.scores[m]) == list(a_run.scores[m])
            np.testing.assert_allclose(list(b_run.scores[m].values()), list(a_run.scores[m].values()), atol=1e-12)
            assert b_run.mean_scores[m] == pytest.approx(a_run.mean_scores[m], abs=1e-12)
    # one metric: its value (a str, or a list of one); save_results_in_run=False leaves the run alone
    b_run = rj.Run(run)
    for metrics in ("ndcg@5", ["ndcg@5"]):
        expected = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics)
        got = rj.evaluate(rj.Qrels(qrels), b_run, metrics, save_results_in_run=False, threads=1)
        assert isinstance(got, np.float64) and got == pytest.approx(expected, abs=1e-12)
    assert not b_run.scores and not b_run.mean_scores
    # ranx's own objects are read too
    got = rj.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["map"], return_mean=False)
    np.testing.assert_allclose(got, ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["map"], return_mean=False))


def test_make_comparable_changes_the_run_as_ranx_does():
    qrels = {"a": {"x": 1}, "b": {"x": 1}, "c": {"y": 2}}
    run = {"a": {"x": 1.0, "z": 2.0}, "d": {"x": 3.0}, "c": {"y": 0.5}}
    a_run, b_run = ranx.Run(run), rj.Run(run)
    a_out = ranx.evaluate(ranx.Qrels(qrels), a_run, ["map", "hits@1"], make_comparable=True)
    b_out = rj.evaluate(rj.Qrels(qrels), b_run, ["map", "hits@1"], make_comparable=True)
    assert b_out == pytest.approx(a_out)
    assert b_run.to_dict() == a_run.to_dict() and b_run.get_query_ids() == a_run.get_query_ids()
    assert rj.Run(run).make_comparable(rj.Qrels(qrels)).get_query_ids() == ["a", "b", "c"]


# ---- Qrels and Run ---------------------------------------------------------------------------


def test_qrels_and_run_objects_are_ranxs():
    """The same queries, documents, values and orders (documents by value, descending; ranx's order among equal
    grades is its sort's, so for qrels the grades' order is compared, and rankjit keeps equal grades in input
    order)."""
    qrels, run = random_dicts(5, n_queries=8)
    pairs = [(ranx.Qrels(qrels, name="q"), rj.Qrels(qrels, name="q")), (ranx.Run(run, name="r"), rj.Run(run, name="r")),
             (ranx.Qrels.from_dict(qrels), rj.Qrels.from_dict(qrels)),
             (ranx.Run.from_dict(run, name="r"), rj.Run.from_dict(run, name="r"))]
    for a, b in pairs:
        is_run = isinstance(b, rj.Run)

        def order(d):
            return list(d) if is_run else list(d.values())

        assert b.name == a.name and len(b) == len(a) and b.size == a.size
        assert b.get_query_ids() == a.get_query_ids() and b.keys() == a.keys()
        assert b.to_dict() == a.to_dict() and type(b.to_dict()) is type(a.to_dict())
        assert b.get_doc_ids_and_scores() == [dict(x) for x in a.get_doc_ids_and_scores()]
        for q in a.get_query_ids():
            assert b[q] == a[q] and order(b[q]) == order(a[q]) and order(b.to_dict()[q]) == order(a.to_dict()[q])
        columns = ["q_id", "doc_id", "score"] if is_run else ["q_id", "score", "doc_id"]
        pd_a, pd_b = a.to_dataframe(), b.to_dataframe()
        assert pd_b.sort_values(columns).reset_index(drop=True).equals(pd_a.sort_values(columns).reset_index(drop=True))
        assert pd_b["q_id"].tolist() == pd_a["q_id"].tolist() and pd_b["score"].tolist() == pd_a["score"].tolist()
    assert rj.Qrels(qrels).qrels == {q: dict(d) for q, d in ranx.Qrels(qrels).qrels.items()}
    assert rj.Run(run).run == {q: dict(d) for q, d in ranx.Run(run).run.items()}
    assert rj.Run(run).metadata == {} and rj.Run().to_dict() == {} and len(rj.Qrels()) == 0
    assert list(rj.Qrels({"q": {"a": 1, "b": 2, "c": 1, "d": 1}})["q"]) == ["b", "a", "c", "d"]


def test_adding_and_editing():
    """add_score sets one value, add / add_multi replace a query's documents, set_relevance_level moves every
    judgment down by level - 1: ranx's documented edits (its own add_score crashes Numba 0.68, no oracle here)."""
    q = rj.Qrels({"a": {"x": 1}})
    q.add_score("a", "y", 2)
    q.add_score("b", "x", 3)
    q.add("c", ["u", "v"], [1, 0])
    q.add_multi(["a", "d"], [["z"], ["w"]], [[4], [True]])
    q.set_relevance_level(2)
    assert q.to_dict() == {"a": {"z": 3}, "b": {"x": 2}, "c": {"u": 0, "v": -1}, "d": {"w": 0}}
    r = rj.Run({"a": {"x": 1.0}})
    r.add_score("a", "y", 2.5)
    r.add("b", ["x", "y"], [0.1, 0.2])
    r.add_multi(["c"], [["z"]], [[3]])
    assert r.to_dict() == {"a": {"y": 2.5, "x": 1.0}, "b": {"y": 0.2, "x": 0.1}, "c": {"z": 3.0}}
    assert rj.evaluate(q, rj.Run({k: {"x": 1.0} for k in q.keys()}), "hits") == 0.25  # b's x only


def test_files_written_and_read_as_ranx(tmp_path):
    qrels, run = random_dicts(9, n_queries=6)
    run = {q: d for q, d in run.items() if d}
    kinds = ["trec", "json", "lz4", "parquet"]
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":  # ranx then keeps NumPy strings, which its JSON writer refuses
        kinds.remove("json")
    for kind in kinds:
        ext = kind
        a_path, b_path = tmp_path / f"a.{ext}", tmp_path / f"b.{ext}"
        ranx.Run(run, name="sys").save(str(a_path))
        rj.Run(run, name="sys").save(str(b_path))
        if kind in ("trec", "json"):
            assert b_path.read_bytes() == a_path.read_bytes(), kind
        assert rj.Run.from_file(a_path, name="sys").to_dict() == ranx.Run(run).to_dict()
        if kind != "parquet":  # (ranx's from_df refuses pandas 3's string columns)
            assert ranx.Run.from_file(str(b_path)).to_dict() == rj.Run.from_file(b_path).to_dict()
        if kind != "lz4":
            ranx.Qrels(qrels).save(str(a_path))
            rj.Qrels(qrels).save(str(b_path))
            if kind == "trec":  # (the same lines; the order among equal grades is ranx's sort's)
                assert sorted(b_path.read_text().split("\n")) == sorted(a_path.read_text().split("\n"))
            if kind == "json":
                assert json.loads(b_path.read_text()) == json.loads(a_path.read_text())
            assert rj.Qrels.from_file(a_path).to_dict() == ranx.Qrels(qrels).to_dict()
            if kind != "parquet":
                assert ranx.Qrels.from_file(str(b_path)).to_dict() == rj.Qrels.from_file(b_path).to_dict()
    gz = tmp_path / "run.gz"
    import gzip

    with gzip.open(gz, "wt") as f:
        f.write("q1 Q0 d1 1 2.5 tagged\nq1 Q0 d2 2 1.5 tagged\n")
    assert rj.Run.from_file(gz).to_dict() == ranx.Run.from_file(str(gz)).to_dict()
    assert rj.Run.from_file(gz).name == ranx.Run.from_file(str(gz)).name == "tagged"


def test_dataframes_as_ranx():
    pd = pytest.importorskip("pandas")
    qrels, run = random_dicts(13, n_queries=6)
    rows = [(q, d, v) for q, docs in run.items() for d, v in docs.items()]
    df = pd.DataFrame({"q_id": pd.Series([r[0] for r in rows], dtype=object),
                       "doc_id": pd.Series([r[1] for r in rows], dtype=object), "score": [r[2] for r in rows]})
    assert rj.Run.from_df(df).to_dict() == ranx.Run.from_df(df).to_dict()
    rows = [(q, d, v) for q, docs in qrels.items() for d, v in docs.items()]
    df = pd.DataFrame({"qid": pd.Series([r[0] for r in rows], dtype=object),
                       "doc": pd.Series([r[1] for r in rows], dtype=object), "rel": [r[2] for r in rows]})
    assert (rj.Qrels.from_df(df, "qid", "doc", "rel").to_dict()
            == ranx.Qrels.from_df(df, "qid", "doc", "rel").to_dict())
    # pandas' own string columns (pandas 3's default, which ranx refuses) and integer ids
    df2 = pd.DataFrame({"qid": pd.Series(df["qid"].tolist(), dtype="string"), "doc": df["doc"], "rel": df["rel"]})
    assert rj.Qrels.from_df(df2, "qid", "doc", "rel").to_dict() == rj.Qrels(qrels).to_dict()
    ints = pd.DataFrame({"q_id": [3, 3, 12], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 0.5]})
    assert rj.Run.from_df(ints).to_dict() == {"12": {"a": 0.5}, "3": {"b": 2.0, "a": 1.0}}  # (a in two queries)
    # rows of a query need not stand together; they keep their order within the query
    mixed = pd.DataFrame({"q_id": ["b", "a", "b", "a"], "doc_id": ["x", "y", "z", "x"], "score": [1.0, 1.0, 1.0, 2.0]})
    run = rj.Run.from_df(mixed)
    assert run.get_query_ids() == ["a", "b"] and list(run["b"]) == ["x", "z"] and list(run["a"]) == ["x", "y"]
    assert rj.evaluate({"a": {"y": 1}, "b": {"z": 1}}, run, "mrr", return_mean=False).tolist() == [0.5, 0.5]


# ---- compare and Report ------------------------------------------------------------------------


def systems(seed, n_queries=30):
    """qrels and three runs: a clearly worse one, and two close ones (p-values far from 0.05 either way)."""
    rnd = random.Random(seed)
    qrels = {f"q{i}": {f"d{j}": rnd.choice([0, 0, 1, 2]) for j in range(10)} for i in range(n_queries)}
    runs = {}
    for name, weight in (("bm25", 0.0), ("dense", 0.8), ("dense_2", 0.8)):
        runs[name] = {q: {f"d{j}": rnd.random() + weight * qrels[q].get(f"d{j}", 0) for j in range(12)}
                      for q in qrels}
    return qrels, runs


COMPARE_METRICS = ["ndcg@5", "map", "mrr@3-l2", "rbp.8", "hits@10", "precision@5"]


@pytest.mark.parametrize("stat_test", ["student", "tukey"])
@pytest.mark.parametrize("digits, percentages", [(3, False), (4, True), (2, False)])
def test_compare_reports_are_ranxs(stat_test, digits, percentages, tmp_path):
    pd = pytest.importorskip("pandas")
    qrels, runs = systems(1)
    a = ranx.compare(ranx.Qrels(qrels), [ranx.Run(r, name=n) for n, r in runs.items()], COMPARE_METRICS,
                     stat_test=stat_test, max_p=0.05, rounding_digits=digits, show_percentages=percentages)
    b = rj.compare(rj.Qrels(qrels), [rj.Run(r, name=n) for n, r in runs.items()], COMPARE_METRICS,
                   stat_test=stat_test, max_p=0.05, rounding_digits=digits, show_percentages=percentages)
    assert str(b) == str(a) and repr(b) == repr(a)
    assert b.to_latex() == a.to_latex()
    pd.testing.assert_frame_equal(b.to_dataframe(), a.to_dataframe(), check_exact=False, rtol=1e-12, atol=1e-12)
    da, db = a.to_dict(), b.to_dict()
    assert list(db) == list(da) and db["model_names"] == da["model_names"] and db["stat_test"] == stat_test
    for model in da["model_names"]:
        assert db[model]["scores"] == pytest.approx(da[model]["scores"], abs=1e-12)
        assert db[model]["win_tie_loss"] == da[model]["win_tie_loss"]
        for other, p in da[model]["comparisons"].items():
            for m, value in p.items():
                if math.isnan(value):  # scipy's ttest_rel on identical scores; rankjit.stats: t = 0, p = 1
                    assert stat_test == "student" and db[model]["comparisons"][other][m] == 1.0
                    assert db[model]["win_tie_loss"][other][m]["T"] == len(qrels)
                else:
                    assert db[model]["comparisons"][other][m] == pytest.approx(value, rel=1e-9, abs=1e-12)
    b.save(str(tmp_path / "report.json"))
    assert json.loads((tmp_path / "report.json").read_text()) == json.loads(json.dumps(db))


def test_fisher_pvalues_are_rankjit_stats_and_reproducible():
    pd = pytest.importorskip("pandas")
    qrels, runs = systems(2)
    kwargs = dict(stat_test="fisher", max_p=0.05, n_permutations=500, random_seed=7)
    a = ranx.compare(ranx.Qrels(qrels), [ranx.Run(r, name=n) for n, r in runs.items()], COMPARE_METRICS, **kwargs)
    b_runs = [rj.Run(r, name=n) for n, r in runs.items()]
    b = rj.compare(rj.Qrels(qrels), b_runs, COMPARE_METRICS, **kwargs)
    assert str(b) == str(a)  # the same table: the significant differences are clear ones here
    pd.testing.assert_frame_equal(b.to_dataframe(), a.to_dataframe(), check_exact=False, rtol=1e-12, atol=1e-12)
    again = rj.compare(rj.Qrels(qrels), [rj.Run(r, name=n) for n, r in runs.items()], COMPARE_METRICS, **kwargs)
    assert again.to_dict() == b.to_dict()
    for i, x in enumerate(b_runs):
        for y in b_runs[i + 1:]:
            for m in COMPARE_METRICS:
                sx, sy = np.array(list(x.scores[m].values())), np.array(list(y.scores[m].values()))
                expected = stats.randomization_test(sx, sy, B=500, seed=7).pvalue
                assert b.comparisons[x.name, y.name][m]["p_value"] == expected
                assert b.comparisons[x.name, y.name][m]["significant"] == (expected <= 0.05)


def test_student_pvalues_where_scipy_has_none():
    """Identical per-query scores: rankjit.stats says p = 1 (scipy's ttest_rel, so ranx: NaN); a NaN score or
    one query: p = NaN.  None of them is significant."""
    qrels = {"a": {"x": 1, "y": 0}, "b": {"x": 1, "y": 0}}
    same = {q: {"x": 2.0, "y": 1.0} for q in qrels}
    report = rj.compare(qrels, [rj.Run(same, name="one"), rj.Run(same, name="two")], ["map"], max_p=1.0)
    assert report.comparisons["one", "two"]["map"] == {"p_value": 1.0, "significant": True}
    assert stats.paired_ttest([1.0, 1.0], [1.0, 1.0]).pvalue == 1.0
    only_rel = {"a": {"x": 1}, "b": {"x": 1}}  # bpref NaN (no judged non-relevant document)
    report = rj.compare(only_rel, [rj.Run(same, name="one"), rj.Run({q: {"y": 1.0} for q in qrels}, name="two")],
                        ["bpref", "map"], stat_test="fisher")
    assert math.isnan(report.comparisons["one", "two"]["bpref"]["p_value"])
    assert not report.comparisons["one", "two"]["bpref"]["significant"]
    one_query = {"a": {"x": 1}}, [{"a": {"x": 1.0}}, {"a": {"x": 1.0, "z": 2.0}}]
    one = rj.compare(one_query[0], [rj.Run(r) for r in one_query[1]], "map")
    assert math.isnan(one.comparisons["run_1", "run_2"]["map"]["p_value"])
    assert str(one) == str(ranx.compare(ranx.Qrels(one_query[0]), [ranx.Run(r) for r in one_query[1]], "map"))


def test_the_table_without_tabulate_is_tabulates():
    from tabulate import tabulate

    qrels, runs = systems(3)
    for kwargs in ({}, {"rounding_digits": 0}, {"show_percentages": True, "rounding_digits": 4},
                   {"max_p": 1e-30}, {"max_p": 0.5}):
        named = [rj.Run(r, name=n) for n, r in runs.items()] + [rj.Run(runs["bm25"], name="True")]
        report = rj.compare(qrels, named, ["ndcg@5", "map", "rbp.8-l2"], **kwargs)
        rows = [[rj._CHARS[i], model] + [report.format_score(s) + report.get_superscript_for_table(model, m)
                                         for m, s in scores.items()] for i, (model, scores) in
                enumerate(report.results.items())]
        headers = ["#", "Model"] + [report.get_metric_label(m) for m in report.metrics]
        assert rj._simple_table(rows, headers) == tabulate(rows, headers=headers) == str(report)


def test_metric_labels_are_ranxs():
    for name in ["ndcg@10", "map@100-l2", "rbp.95", "rbp.95-l3", "r-precision", "hit_rate@5", "ndcg_burges", "bpref"]:
        assert rj.Report.get_metric_label(name) == ranx.data_structures.Report.get_metric_label(None, name)
    assert rj.Report.get_metric_label("rbp@95") == "RBP@95"  # (ranx: KeyError)


# ---- errors ------------------------------------------------------------------------------------


def test_errors_of_metric_names():
    q, r = {"a": {"x": 1}}, {"a": {"x": 1.0}}
    ev = rj.evaluate
    raises(ValueError, "metric 'foo@10': unknown metric 'foo'; ranx's metrics: hits, hit_rate,", ev, q, r, "foo@10")
    raises(ValueError, "metric 'ndcg@x': the cutoff after '@' must be an integer, e.g. 'ndcg@10'", ev, q, r, "ndcg@x")
    raises(ValueError, "metric 'ndcg@-3': the cutoff must be >= 0 (0: the whole ranking), got -3", ev, q, r,
           "ndcg@-3")
    raises(ValueError, "metric 'map-l2.5': the relevance level after '-l' must be an integer, e.g. 'ndcg@10-l2'",
           ev, q, r, "map-l2.5")
    raises(ValueError, "metric 'map-l-1': the relevance level must be >= 0, got -1", ev, q, r, "map-l-1")
    raises(ValueError, "metric 'rbp': RBP needs its persistence, e.g. 'rbp.95' (p = 0.95) or 'rbp@80'", ev, q, r,
           "rbp")
    raises(ValueError, "metric 'rbp.9x': RBP's persistence is the digits after 'rbp.', e.g. 'rbp.95' (p = 0.95)",
           ev, q, r, "rbp.9x")
    raises(TypeError, "a metric name must be a str, got 5", ev, q, r, [5])
    raises(TypeError, "metrics must be a metric name or a list of names, e.g. ['ndcg@10', 'map'], got int", ev, q,
           r, 5)
    raises(ValueError, "metric 'ndcg_burges': 2**grade - 1 of grade 1100 overflows a float64 (ranx would give NaN)",
           ev, {"a": {"x": 1100}}, r, "ndcg_burges")


def test_errors_of_inputs():
    ev = rj.evaluate
    raises(TypeError, "qrels must be a Qrels or a dict {query id: {document id: relevance}}, got list", ev, [],
           {}, "map")
    raises(TypeError, "run must be a Run or a dict {query id: {document id: score}}, got int", ev, {"a": {}}, 3,
           "map")
    raises(TypeError, "qrels must be a dict {query id: {document id: relevance}}, got str", rj.Qrels, "q")
    raises(TypeError, "qrels: query id 1 is a int, not a str", rj.Qrels, {1: {"x": 1}})
    raises(TypeError, "run['a'] is a list, not a dict {document id: score}", rj.Run, {"a": ["x"]})
    raises(TypeError, "run['a']: document id 3 is a int, not a str", rj.Run, {"a": {3: 1.0}})
    # (an id that is not the first of its query: it would match nothing, a number without a word; ranx raises)
    raises(TypeError, "run['a']: document id 7 is a int, not a str", rj.Run, {"a": {"x": 1.0, 7: 0.5}})
    raises(TypeError, "qrels['a']: document id 7 is a int, not a str", rj.Qrels, {"a": {"x": 1, 7: 1}})
    raises(TypeError, "qrels['a']: document id 7 is a int, not a str", rj.Qrels, {"a": {"x": 1.0, 7: 1}})
    raises(TypeError, "qrels['a']['x'] = 1.5: a relevance judgment must be an integer (ranx would truncate it)",
           rj.Qrels, {"a": {"x": 1.5}})
    raises(ValueError, "qrels['a']['x'] = '1.5': a relevance judgment must be an integer (text is read as int() "
           "reads it, as ranx does)", rj.Qrels, {"a": {"x": "1.5"}})
    raises(ValueError, "qrels['a']['y'] = 'high': a relevance judgment must be an integer", rj.Qrels().add_score,
           "a", "y", "high")
    raises(TypeError, "qrels['a']['x'] = None: a relevance judgment must be an integer (not a number)", rj.Qrels,
           {"a": {"x": None}})
    raises(ValueError, "qrels['a']['y'] = -9223372036854775808: a relevance judgment must lie in [-2**63 + 1, "
           "2**63 - 1]", rj.Qrels, {"a": {"x": 1, "y": -2**63}})
    for big in (2**65, 2.0**65):
        raises(ValueError, "qrels['a']['x'] = 36893488147419103232: a relevance judgment must lie in", rj.Qrels,
               {"a": {"x": big}})
    raises(TypeError, "run['a']['y'] = 'high' is a str; a score must be a number", rj.Run,
           {"a": {"x": 1.0, "y": "high"}})
    raises(ValueError, "run['a']['y'] is NaN: a score must be a number (ranx puts NaN anywhere in the ranking)",
           rj.Run, {"a": {"x": 1.0, "y": math.nan}})
    raises(TypeError, "run['a']['y'] = None is a NoneType; a score must be a number", rj.Run,
           {"a": {"x": "1.0", "y": None}})
    raises(ValueError, "Qrels and Run query ids do not match: 1 run queries are not in the qrels (e.g. 'b'); pass "
           "make_comparable=True", ev, {"a": {"x": 1}}, {"a": {"x": 1.0}, "b": {}}, "map")
    raises(ValueError, "Qrels and Run query ids do not match: 1 qrels queries are not in the run (e.g. 'b')", ev,
           {"a": {"x": 1}, "b": {}}, {"a": {"x": 1.0}}, "map")
    raises(ValueError, "the qrels hold no query: nothing to evaluate", ev, rj.Qrels(), rj.Run(), "map")
    raises(ValueError, "threads must be an int >= 0 (0: all available threads), got -1", ev, {"a": {"x": 1}},
           {"a": {"x": 1.0}}, "map", threads=-1)
    run = rj.Run()
    raises(TypeError, "query and document ids must be str, got 'a' and 5", run.add_score, "a", 5, 1.0)
    raises(TypeError, "run['a']['x'] = 'no': a score must be a number", run.add_score, "a", "x", "no")
    raises(ValueError, "run['a']['x'] is NaN: a score must be a number", run.add_score, "a", "x", math.nan)
    raises(TypeError, "qrels['a']['x'] = 0.5: a relevance judgment must be an integer", rj.Qrels().add_score, "a",
           "x", 0.5)
    raises(ValueError, "add_multi: 2 query ids, 1 lists of document ids and 1 lists of scores; give one list of "
           "each per query", run.add_multi, ["a", "b"], [["x"]], [[1.0]])
    raises(ValueError, "add_multi: query 'a' has 2 document ids and 1 scores", run.add, "a", ["x", "y"], [1.0])
    raises(TypeError, "add_multi['a']['x'] = 'z' is a str; a score must be a number", run.add, "a", ["x"], ["z"])
    assert run.to_dict() == {}  # nothing changed
    raises(TypeError, "make_comparable takes a Qrels, got dict", run.make_comparable, {})
    raises(TypeError, "rel_lvl must be an int, got 1.5", rj.Qrels().set_relevance_level, 1.5)
    raises(ValueError, "qrels: -9223372036854775807 - 2 = -9223372036854775809: a relevance judgment must lie in",
           rj.Qrels({"a": {"x": -2**63 + 1}}).set_relevance_level, 3)
    raises(NotImplementedError, "Run.from_ranxhub('x') downloads from ranxhub: load it with ranx", rj.Run.from_ranxhub,
           "x")


def test_errors_of_files_and_frames(tmp_path):
    pd = pytest.importorskip("pandas")
    raises(ValueError, f"{str(tmp_path / 'run.test')!r}: unknown file kind 'test'; pass kind= one of json, trec, "
           "lz4, gz, parquet", rj.Run.from_file, tmp_path / "run.test")
    raises(ValueError, f"{str(tmp_path / 'q.lz4')!r}: unknown file kind 'lz4'; pass kind= one of json, trec, gz, "
           "parquet", rj.Qrels.from_file, tmp_path / "q.lz4")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 2 1.0 t\n")
    raises(ValueError, f"{tmp_path / 'run.trec'}: document 'd1' is retrieved twice for query 'q1' (ranx would keep "
           "the last line)", rj.Run.from_file, tmp_path / "run.trec")
    (tmp_path / "qrels.trec").write_text("q1 0 d1 1\nq1 0 d1 0\n")
    raises(ValueError, f"{tmp_path / 'qrels.trec'}: document 'd1' is judged twice for query 'q1'",
           rj.Qrels.from_file, tmp_path / "qrels.trec")
    (tmp_path / "low.trec").write_text("q1 0 d1 1\nq1 0 d2 -9223372036854775808\n")
    raises(ValueError, f"{tmp_path / 'low.trec'}: a relevance judgment must lie in [-2**63 + 1, 2**63 - 1]",
           rj.Qrels.from_file, tmp_path / "low.trec")
    (tmp_path / "nan.trec").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 nan t\n")
    raises(ValueError, f"{tmp_path / 'nan.trec'}: line 2: score field 'nan' is not a number: NaN cannot be "
           "ranked", rj.Run.from_file, tmp_path / "nan.trec")  # (rankjit.io's reader)
    df = pd.DataFrame({"q_id": ["a", "a"], "doc_id": ["x", "y"], "score": [1, 0]})
    raises(KeyError, "\"the DataFrame has no column 'qid' (columns: q_id, doc_id, score)\"", rj.Qrels.from_df, df,
           "qid")
    raises(ValueError, "column 'doc_id' holds a missing document id (row 1)", rj.Qrels.from_df,
           df.assign(doc_id=["x", None]))
    raises(ValueError, "column 'q_id' holds a missing query id (row 1)", rj.Qrels.from_df, df.assign(q_id=["a", None]))
    raises(TypeError, "column 'q_id' must hold query ids as strings, found 2.5 (float)", rj.Run.from_df,
           df.assign(q_id=pd.Series(["a", 2.5], dtype=object), score=[1.0, 2.0]))
    raises(TypeError, "column 'doc_id' must hold document ids as strings, found 2.5 (float)", rj.Qrels.from_df,
           df.assign(doc_id=pd.Series(["x", 2.5], dtype=object)))
    raises(TypeError, "column 'score' must hold integer relevance judgments, got dtype float64", rj.Qrels.from_df,
           df.assign(score=[1.0, 0.5]))
    raises(ValueError, "column 'score' holds a missing value (row 0)", rj.Run.from_df, df.assign(score=[None, 0.5]))
    raises(ValueError, "column 'score': a relevance judgment must lie in [-2**63 + 1, 2**63 - 1]", rj.Qrels.from_df,
           df.assign(score=np.array([1, -2**63])))
    raises(ValueError, "column 'score': a relevance judgment must lie in [-2**63 + 1, 2**63 - 1], got "
           "18446744073709551615", rj.Qrels.from_df, df.assign(score=np.array([1, 2**64 - 1], dtype=np.uint64)))
    raises(TypeError, "column 'score' must hold numeric scores, got dtype object", rj.Run.from_df,
           df.assign(score=pd.Series(["a", "b"], dtype=object)))
    raises(ValueError, "the DataFrame: document 'x' is retrieved twice for query 'a' (ranx would keep the last "
           "line)", rj.Run.from_df, df.assign(doc_id=["x", "x"], score=[1.0, 2.0]))


def test_scores_given_as_strings_are_kept_as_floats():
    """ranx reads a score that spells a number (\"0.9\") as a float; the run keeps floats, so that every method
    that reads its scores back (to_dict, indexing, save, to_dataframe) works as ranx's."""
    run = rj.Run({"q1": {"a": "0.9", "b": "0.1", "c": np.float32(0.5), "d": True}})
    want = ranx.Run({"q1": {"a": "0.9", "b": "0.1", "c": np.float32(0.5), "d": True}}).to_dict()
    assert run.to_dict() == want and all(type(v) is float for v in run.to_dict()["q1"].values())
    assert run["q1"] == want["q1"]
    qrels = {"q1": {"a": 1, "c": 2}}
    assert rj.evaluate(qrels, run, "ndcg@3") == pytest.approx(ranx.evaluate(ranx.Qrels(qrels), ranx.Run(want),
                                                                             "ndcg@3"), abs=1e-12)


def test_judgments_given_as_text_are_read_as_ranx_reads_them():
    """ranx reads a judgment given as text with int() (\"2\", \" 2\", \"+1\", \"1_0\"); so does the compat
    layer, and keeps ints; text that int() refuses raises in both."""
    qrels = {"q1": {"a": "2", "b": " 0", "c": "+1", "d": b"3"}, "q2": {"x": "1_0", "y": "-1", "z": 1}}
    run = {"q1": {"a": 0.2, "b": 0.9, "c": 0.5, "e": 0.7}, "q2": {"x": 0.1, "y": 0.8}}
    metrics = ["ndcg@3", "map", "ndcg_burges", "hits@2-l2", "bpref"]
    expected, got = both(qrels, run, metrics)
    assert_values(expected, got, metrics)
    theirs, ours = ranx.Qrels(qrels).to_dict(), rj.Qrels(qrels).to_dict()
    assert ours == theirs == {"q1": {"a": 2, "b": 0, "c": 1, "d": 3}, "q2": {"x": 10, "y": -1, "z": 1}}
    assert all(type(v) is int for d in ours.values() for v in d.values())
    added = rj.Qrels()
    added.add_score("q1", "a", "2")
    assert added.to_dict() == {"q1": {"a": 2}}
    with pytest.raises(ValueError):
        ranx.Qrels({"q1": {"a": "1.5"}})
    with pytest.raises(ValueError, match="a relevance judgment must be an integer"):
        rj.Qrels({"q1": {"a": "1.5"}})


def test_no_metric_gives_an_empty_dict_after_the_checks():
    """ranx.evaluate with an empty list of metrics checks its inputs and returns {}: so does the compat layer."""
    qrels, run = random_dicts(3, n_queries=5)
    for metrics in ([], ()):
        for return_mean in (True, False):
            assert ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics, return_mean=return_mean) == {}
            saved = rj.Run(run)
            assert rj.evaluate(rj.Qrels(qrels), saved, metrics, return_mean=return_mean) == {}
            assert saved.mean_scores == {}
    with pytest.raises(AssertionError):
        ranx.evaluate({"q1": {"a": 1}}, {"q9": {"a": 1.0}}, [])
    raises(ValueError, "Qrels and Run query ids do not match", rj.evaluate, {"q1": {"a": 1}}, {"q9": {"a": 1.0}}, [])
    raises(ValueError, "the qrels hold no query: nothing to evaluate", rj.evaluate, rj.Qrels(), rj.Run(), [])


def test_ids_of_a_str_subclass_are_ids():
    """NumPy's str_ (as pandas and NumPy give ids) is a str: read as one, in dicts and DataFrames."""
    pd = pytest.importorskip("pandas")
    s = np.str_
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 2.0}}
    want = rj.evaluate(qrels, run, ["map", "ndcg@2"])
    assert rj.evaluate({s("q"): {s("a"): 1, "b": 0}}, {s("q"): {"a": 1.0, s("b"): 2.0}}, ["map", "ndcg@2"]) == want
    df = pd.DataFrame({"q_id": np.array(["q", "q"], dtype=object), "doc_id": [s("a"), s("b")], "score": [1.0, 2.0]})
    df["q_id"] = [s("q"), s("q")]
    assert rj.evaluate(qrels, rj.Run.from_df(df), ["map", "ndcg@2"]) == want


def test_errors_of_compare():
    qrels, runs = systems(4, n_queries=5)
    named = [rj.Run(r, name=n) for n, r in runs.items()]
    raises(ValueError, "unknown stat_test 'wilcoxon'; expected one of fisher, student, tukey, bootstrap", rj.compare,
           qrels, named, "map", stat_test="wilcoxon")
    raises(ValueError, "n_permutations must be a positive int, got 0", rj.compare, qrels, named, "map",
           n_permutations=0)
    raises(TypeError, "runs must be a list of Run, got Run", rj.compare, qrels, named[0], "map")
    raises(TypeError, "runs[1] is a dict, not a Run (compare names each run after run.name: Run.from_dict(d, "
           "name=...))", rj.compare, qrels, [named[0], runs["dense"]], "map")
    raises(ValueError, "two runs are named 'bm25': give each run its own name (Run(..., name=...))", rj.compare,
           qrels, [named[0], named[0]], "map")
    # (ranx's report fails on no metric with a KeyError)
    raises(ValueError, "metrics is empty: name at least one metric, e.g. ['ndcg@10', 'map']", rj.compare, qrels,
           named, [])
    many = [rj.Run(runs["bm25"], name=f"s{i}") for i in range(27)]
    report = rj.compare(qrels, many, "map", stat_test="student")
    raises(ValueError, "a Report labels at most 26 models (a to z), this one has 27", str, report)


# ---------------------------------------------------------------- fusion and normalisation (ranx's own)
_FUSE_RUNS = (
    {"q1": {"d1": 0.9, "d2": 0.5, "d3": 0.1}, "q2": {"d1": 0.2, "d4": 0.8}},
    {"q1": {"d2": 3.0, "d3": 2.0, "d5": 1.0}, "q2": {"d4": 0.5, "d6": 0.7}},
)
_FUSE_QRELS = {"q1": {"d2": 1, "d5": 2}, "q2": {"d4": 1}}


@pytest.mark.parametrize("norm, method, params", [
    ("min-max", "wsum", {"weights": [0.3, 0.7]}), ("rank", "rrf", None), ("min-max", "mnz", None),
    ("zmuv", "sum", None), ("rank", "isr", None),
])
def test_fuse_is_ranx_fuse(norm, method, params):
    ours = rj.fuse([rj.Run(r, name=f"r{i}") for i, r in enumerate(_FUSE_RUNS)], norm=norm, method=method,
                   params=params)
    theirs = ranx.fuse([ranx.Run(r, name=f"r{i}") for i, r in enumerate(_FUSE_RUNS)], norm=norm, method=method,
                       params=params)
    assert isinstance(ours, rj.Run)
    assert ours.to_dict() == theirs.to_dict() and ours.name == theirs.name
    # the fused run evaluates like any run
    assert rj.evaluate(rj.Qrels(_FUSE_QRELS), ours, "ndcg") == pytest.approx(
        ranx.evaluate(ranx.Qrels(_FUSE_QRELS), theirs, "ndcg"), abs=1e-12)


def test_normalize_and_optimize_fusion_are_ranx_s():
    run = rj.Run(_FUSE_RUNS[1], name="b")
    assert rj.normalize(run, "max").to_dict() == ranx.normalize(ranx.Run(_FUSE_RUNS[1]), "max").to_dict()
    kw = dict(norm="min-max", method="wsum", metric="ndcg@3", step=0.5)
    ours = rj.optimize_fusion(rj.Qrels(_FUSE_QRELS), [rj.Run(r) for r in _FUSE_RUNS], **kw)
    theirs = ranx.optimize_fusion(ranx.Qrels(_FUSE_QRELS), [ranx.Run(r) for r in _FUSE_RUNS], **kw)
    assert ours == theirs


def test_to_typed_list_is_ranx_s():
    ours = rj.Run(_FUSE_RUNS[0]).to_typed_list()
    theirs = ranx.Run(_FUSE_RUNS[0]).to_typed_list()
    assert len(ours) == len(theirs) and all(np.array_equal(a, b) for a, b in zip(ours, theirs))
    assert len(rj.Qrels(_FUSE_QRELS).to_typed_list()) == 2


def test_fusion_without_ranx_says_what_is_missing(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ranx", None)  # import ranx raises ImportError
    with pytest.raises(ImportError, match=r"^fusion and normalisation are ranx's: rankjit\.compat\.ranx hands them to "
                                          r"ranx, which is not installed \(pip install ranx\)"):
        rj.fuse([rj.Run(r) for r in _FUSE_RUNS])
