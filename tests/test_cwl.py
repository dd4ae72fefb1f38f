"""The C/W/L families (SDCG, INSQ, INST, BPM, NERR8-NERR11): what the common checks of
``tests/test_families.py`` (rows of at most 7 documents) do not reach.

* long rows, deeper than cwl_eval's horizon of 1000 ranks, against the plain-Python
  references of ``tests/reference/cwl.py`` (rank by rank, written from the definitions):
  the walk's closed forms over runs of ranks without gain, the depth the engine ranks to,
  parameters at their edges (T small and large, p = 0 and p = 1, min_rel > 0);
* the closed form of INST's runs, a sum of inverse squares, against ``math.fsum``;
* the plan: the depth and cutoff each family asks for, and the engine variant (the walk is
  compiled only for a plan that holds one);
* every error message of the families.

Their values against ir_measures itself: ``tests/test_ir_measures_names.py``.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from reference import cwl, lists  # tests/ is on sys.path (conftest.py)

import rankjit
from rankjit import _measures
from rankjit._kernels import cascade, engine
from rankjit._registry import BY_NAME
from rankjit._validation import as_batch, engine_batch, scan

TOL = {"rtol": 1e-12, "atol": 1e-15}


def _rows(seed, lengths, density):
    """Random rows: grades 0..4 (a share ``density`` of them above 0), distinct scores."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in lengths:
        ys = ((rng.random(n) < density) * rng.integers(1, 5, n)).tolist()
        ss = (rng.permutation(n) / 4.0).tolist()
        rows.append((ys, ss))
    return rows


def _batch(rows):
    lens = [len(ys) for ys, _ in rows]
    labels = np.array([y for ys, _ in rows for y in ys], dtype=np.int64)
    scores = np.array([s for _, ss in rows for s in ss], dtype=np.float64)
    return labels, scores, np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


def _reference(name, rows):
    m = _measures.parse(name)
    out = []
    for ys, ss in rows:
        order = lists.rank(ys, ss, "pessimistic")
        out.append(lists.cwl_measure(m.family, [ys[i] for i in order], m.k, **m.params))
    return np.array(out)


LONG = [0, 1, 5, 40, 999, 1000, 1001, 1500]  # around the horizon
NAMES = [
    "SDCG(max_rel=4)@10", "SDCG(max_rel=4)@1000", "SDCG(max_rel=4)@3000", "SDCG(min_rel=2,max_rel=3)",
    "INSQ(max_rel=4)", "INSQ(T=0.25,max_rel=2)", "INSQ(T=1e4,max_rel=4)",
    "INST(max_rel=4)", "INST(T=0.25,max_rel=4)", "INST(T=3,min_rel=1,max_rel=4)", "INST(T=1e4,max_rel=4)",
    "BPM(max_rel=4)@20", "BPM(T=5,max_rel=4)", "BPM(T=1e4,max_rel=2)@1500", "BPM(T=0.5,min_rel=3,max_rel=4)@500",
    "NERR8(max_rel=4)@10", "NERR8(max_rel=5)", "NERR8(min_rel=1,max_rel=4)@1200",
    "NERR9(max_rel=4)@10", "NERR9(max_rel=6)", "NERR9(min_rel=3,max_rel=4)@999",
    "NERR10(max_rel=4)", "NERR10(p=0,max_rel=4)", "NERR10(p=1,max_rel=5)", "NERR10(p=0.999,min_rel=1,max_rel=8)",
    "NERR11(max_rel=4)", "NERR11(T=0.25,max_rel=6)", "NERR11(T=1e4,max_rel=4)",
]


@pytest.mark.parametrize("density", [0.002, 0.05, 0.3])
def test_long_rows_against_the_reference(density):
    # sparse rows: long runs of ranks without gain (closed forms), dense: short ones (rank by rank)
    rows = _rows(int(density * 1000), LONG, density)
    labels, scores, offsets = _batch(rows)
    got = rankjit.evaluate(labels, scores, NAMES, offsets=offsets, per_query=True)
    for name in NAMES:
        np.testing.assert_allclose(got[name], _reference(name, rows), err_msg=name, **TOL)


def test_padded_long_rows_match_the_ragged_ones():
    rows = _rows(7, LONG[2:], 0.02)
    labels, scores, offsets = _batch(rows)
    width = max(LONG)
    dense_y = np.zeros((len(rows), width), dtype=np.int8)
    dense_s = np.full((len(rows), width), np.nan)
    for q, (ys, ss) in enumerate(rows):
        dense_y[q, :len(ys)] = ys
        dense_s[q, :len(ys)] = ss
    lengths = np.array([len(ys) for ys, _ in rows])
    a = rankjit.evaluate(labels, scores, NAMES, offsets=offsets, per_query=True)
    b = rankjit.evaluate(dense_y, dense_s, NAMES, lengths=lengths, per_query=True)
    for name in NAMES:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_the_public_functions_are_the_names():
    rows = _rows(3, [0, 3, 12, 1100], 0.1)
    labels, scores, offsets = _batch(rows)
    kw = {"offsets": offsets}
    calls = {
        "SDCG(max_rel=3)@5": rankjit.sdcg(labels, scores, 5, max_rel=3, **kw),
        "INSQ(T=2,max_rel=4)": rankjit.insq(labels, scores, T=2, max_rel=4, **kw),
        "INST(min_rel=1,max_rel=4)": rankjit.inst(labels, scores, min_rel=1, max_rel=4, **kw),
        "BPM(T=2,max_rel=4)@30": rankjit.bpm(labels, scores, 30, T=2, max_rel=4, **kw),
        "NERR8(max_rel=4)@7": rankjit.nerr8(labels, scores, 7, max_rel=4, **kw),
        "NERR9(max_rel=4)": rankjit.nerr9(labels, scores, max_rel=4, **kw),
        "NERR10(p=0.5,max_rel=4)": rankjit.nerr10(labels, scores, p=0.5, max_rel=4, **kw),
        "NERR11(T=3,max_rel=4)": rankjit.nerr11(labels, scores, T=3, max_rel=4, **kw),
    }
    names = rankjit.evaluate(labels, scores, list(calls), offsets=offsets, per_query=True)
    for name, values in calls.items():
        np.testing.assert_array_equal(values, names[name], err_msg=name)
        np.testing.assert_allclose(values, _reference(name, rows), err_msg=name, **TOL)


@pytest.mark.parametrize("first", [1e-3, 0.25, 1.0, 3.5, 15.0, 15.5, 16.0, 99.25, 900.0, 2e4])
@pytest.mark.parametrize("count", [0, 1, 2, 15, 16, 17, 40, 999])
def test_inst_runs_sum_inverse_squares(first, count):
    # INST's runs of ranks without gain: sum_{j<d} 1/(a + j)^2 in closed form, to a few units of the last place
    want = math.fsum(1.0 / (first + j) ** 2 for j in range(count))
    got = cascade._inverse_squares(first, count)
    assert got == pytest.approx(want, rel=1e-14, abs=0.0)


def _plan(names, max_count):
    labels = np.zeros((1, max_count), dtype=np.int8)
    labels[0, 0] = 3
    scores = np.arange(max_count, 0, -1, dtype=np.float32)[None, :]
    batch = engine_batch(scan(as_batch(labels, scores)))
    return _measures.build_plan(_measures.requests(names, {}), batch, 0, None), batch


@pytest.mark.parametrize("name,k_long,k_short", [
    ("SDCG(max_rel=4)@10", 10, 10), ("SDCG(max_rel=4)@5000", 1000, 5000), ("SDCG(max_rel=4)", 1000, 1000),
    ("INSQ(max_rel=4)", 1000, 1000), ("INST(max_rel=4)", 1000, 1000), ("NERR10(max_rel=4)", 1000, 1000),
    ("NERR11(max_rel=4)", 1000, 1000), ("BPM(max_rel=4)@20", 20, 20), ("BPM(max_rel=4)@1200", 1000, 1200),
    ("NERR8(max_rel=4)@999", 999, 999), ("NERR9(max_rel=4)", 1000, 1000),
])
def test_the_engine_ranks_to_the_cutoff_within_the_horizon(name, k_long, k_short):
    # rows of 1500 documents: ranked to min(k, 1000); rows of 50: to the row's end. The cutoff the
    # kernel reads (I_K) is min(k, 1000), 1000 without k, whatever the rows
    for max_count, depth in ((1500, k_long), (50, min(50, k_long))):
        plan, _ = _plan([name], max_count)
        assert plan.depth == depth, (name, max_count)
        assert plan.iparams[0, 1] == min(k_long, 1000)
    assert _measures.parse(name).k in (None, k_short)


def test_the_walk_is_compiled_only_for_a_plan_that_holds_one():
    def variant(names):
        plan, batch = _plan(names, 40)
        return engine.variant_for(plan, 0, False, batch.max_count)

    walks = [f"{f}(max_rel=4)" for f in ("INST", "NERR10", "NERR11")] + ["BPM(max_rel=4)@5", "NERR8(max_rel=4)@5"]
    for name in walks:
        assert variant([name]).cwl and variant(["P@10", "SetP", name]).cwl, name
    # SDCG and INSQ are DCG rows; nothing else asks for the walk
    for names in (["SDCG(max_rel=4)@10", "INSQ(max_rel=4)"], ["nDCG@10"], ["P@10", "SetP", "ERR@20", "AP"]):
        assert not variant(names).cwl, names


# ---- error messages --------------------------------------------------------------------------------------------

LABELS = np.array([[2, 0, 1]])
SCORES = np.array([[0.3, 0.2, 0.1]])


@pytest.mark.parametrize("family", ["SDCG", "INSQ", "INST", "BPM", "NERR8", "NERR9", "NERR10", "NERR11"])
def test_max_rel_is_required(family):
    name = f"{family}@10" if BY_NAME[family].takes_k else family
    with pytest.raises(TypeError, match=re.escape(f"max_rel in {name!r} is required: the top grade of the scale, "
                                                  "e.g. max_rel=4")):
        rankjit.evaluate(LABELS, SCORES, [name])
    function = getattr(rankjit, BY_NAME[family].function)
    with pytest.raises(TypeError, match="max_rel"):
        function(LABELS, SCORES)


@pytest.mark.parametrize("name", ["INST(min_rel=3, max_rel=3)", "SDCG(min_rel=2, max_rel=1.5)@5"])
def test_max_rel_must_be_above_min_rel(name):
    lo, hi = re.search(r"min_rel=([\d.]+), max_rel=([\d.]+)", name).groups()
    with pytest.raises(ValueError, match=re.escape(f"{name!r}: max_rel must be above min_rel, got min_rel={lo}, "
                                                   f"max_rel={hi} (the gains")):
        rankjit.evaluate(LABELS, SCORES, [name])


def test_min_rel_below_zero_is_refused_saying_why():
    name = "NERR10(min_rel=-1, max_rel=4)"
    with pytest.raises(ValueError, match=re.escape(f"min_rel in {name!r} must be >= 0, got -1: below 0, ir_measures "
                                                   "gives a judged document of grade 0 a gain above 0 and an unjudged "
                                                   "one 0")):
        rankjit.evaluate(LABELS, SCORES, [name])
    with pytest.raises(ValueError, match="min_rel in 'NERR10' must be >= 0, got -2: below 0"):
        rankjit.nerr10(LABELS, SCORES, min_rel=-2, max_rel=4)


def test_t_must_be_positive():
    with pytest.raises(ValueError, match=re.escape("T in 'INST(T=0, max_rel=4)' must be a number > 0, got 0")):
        rankjit.evaluate(LABELS, SCORES, ["INST(T=0, max_rel=4)"])


@pytest.mark.parametrize("family", ["INSQ", "INST", "NERR11"])
def test_t_whose_double_overflows_is_refused(family):
    name = f"{family}(T=1e308, max_rel=4)"
    with pytest.raises(ValueError, match=re.escape(f"{name!r}: T=1e+308 is too large: {family} reads i + 2T, which "
                                                   "must stay below 1.8e308")):
        rankjit.evaluate(LABELS, SCORES, [name])
    # BPM compares CG with T alone: the user never reaches T and reads 5 ranks
    got = rankjit.evaluate(LABELS, SCORES, ["BPM(T=1e308, max_rel=4)@5"])["BPM(T=1e308, max_rel=4)@5"]
    assert got == pytest.approx(cwl.bpm(LABELS[0].tolist(), 5, 4, T=1e308), rel=1e-15)


def test_non_integer_labels_are_refused():
    with pytest.raises(ValueError, match=re.escape("'BPM(max_rel=4)@10' (a gain by grade) needs integer grades, but "
                                                   "query 0 has label 0.5 at position 1")):
        rankjit.evaluate(np.array([[1.0, 0.5]]), np.array([[2.0, 1.0]]), ["BPM(max_rel=4)@10"])


def test_grades_beyond_the_table_are_refused():
    labels = np.array([[2**25, 0]], dtype=np.int64)
    with pytest.raises(ValueError, match=re.escape("INST(max_rel=4): labels go up to 3.35544e+07, and INST looks the "
                                                   "gains up in a table by grade (at most grade 2**24); map the grades "
                                                   "to a smaller scale")):
        rankjit.evaluate(labels, np.array([[2.0, 1.0]]), ["INST(max_rel=4)"])


@pytest.mark.parametrize("name", ["INST(max_rel=4)", "BPM(max_rel=4)@5", "NERR8(max_rel=4)@5", "NERR9(max_rel=4)@5",
                                  "NERR10(max_rel=4)", "NERR11(max_rel=4)"])
def test_ties_average_is_refused_for_the_walks(name):
    family = _measures.parse(name).family
    with pytest.raises(ValueError, match=re.escape(f"ties='average' is not available for {family} ({name!r}): its "
                                                   "expectation over tied orders has no closed form here")):
        rankjit.evaluate(LABELS, SCORES, [name], ties="average")


def test_ties_average_is_exact_for_sdcg_and_insq():
    # linear in the gains by rank (DCG rows): each tied slot gets its group's mean gain
    labels = np.array([[4, 0, 2, 1]])
    scores = np.array([[1.0, 1.0, 0.5, 0.5]])
    got = rankjit.evaluate(labels, scores, ["SDCG(max_rel=4)@3", "INSQ(max_rel=4)"], ties="average", per_query=True)
    orders = [[a, b, c, d] for a, b in ((0, 1), (1, 0)) for c, d in ((2, 3), (3, 2))]
    sdcg = np.mean([cwl.sdcg([labels[0, i] for i in o], 3, 4) for o in orders])
    insq = np.mean([cwl.insq([labels[0, i] for i in o], 4) for o in orders])
    np.testing.assert_allclose(got["SDCG(max_rel=4)@3"], [sdcg], **TOL)
    np.testing.assert_allclose(got["INSQ(max_rel=4)"], [insq], **TOL)


def test_sdcg_takes_only_the_log2_dcg():
    with pytest.raises(ValueError, match=re.escape("unknown dcg='exp-log2' in \"SDCG(dcg='exp-log2', max_rel=4)@5\"; "
                                                   "valid values: 'log2'")):
        rankjit.evaluate(LABELS, SCORES, ["SDCG(dcg='exp-log2', max_rel=4)@5"])
