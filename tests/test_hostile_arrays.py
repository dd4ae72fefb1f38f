"""Hostile input to the array API (issue 14): a clear error or the right number, never NaN or a leak.

The first part pins each fix with the error type and message; the second holds
hypothesis properties over random shapes, dtypes and values: every example either
returns finite values within the measure's range, equal to the plain-Python reference
(``tests/reference/lists.py``) where one applies, or raises a ValueError / TypeError whose
message names the offending argument.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankjit
import rankjit.diversity as D
import rankjit.preference as P
import reference as ref  # tests/ is on sys.path, as for the other test modules

S3 = np.array([[3.0, 2.0, 1.0]])
BOOL_WORDING = r"got the boolean True \(booleans are not numbers here\)"


# ------------------------------------------------------------------------------------------
# 1. gains and probabilities that overflow float64


@pytest.mark.parametrize("labels", [np.array([[1024, 0, 1]]), np.array([[1024.0, 0.0, 1.0]]),
                                    np.array([[2**62, 0, 1]], np.int64), np.array([[2**64 - 1, 0, 1]], np.uint64)])
def test_exp2_gain_overflow_is_an_error_naming_measure_parameter_and_grade(labels):
    top = int(labels.max())
    # grades beyond 2**53 are shown as float64 holds them (17 significant digits)
    shown = str(top) if top <= 2**53 else re.escape(f"{float(top):.17g}")
    msg = (rf"nDCG\(gain='exp2'\)@2: gain='exp2' of grade {shown} overflows float64 \(2\*\*y - 1 exceeds 1.8e308 "
           rf"from grade 1024")
    with pytest.raises(ValueError, match=msg):
        rankjit.evaluate(labels, S3, ["nDCG(gain='exp2')@2"])
    with pytest.raises(ValueError, match=r"^DCG: gain='exp2' of grade"):
        rankjit.dcg(labels, S3, gain="exp2")


def test_exp2_gain_that_fits_but_whose_sum_could_overflow():
    # 2**1023 - 1 fits, but two such documents would not: refused before any kernel runs
    with pytest.raises(ValueError, match=r"nDCG: DCG could overflow float64: the largest gain \(8.988e\+307, grade "
                                         r"1023\) times the sum of the discount weights over 3 ranks \(2.131\)"):
        rankjit.ndcg(np.array([[1023, 0, 1]]), S3, gain="exp2")
    with pytest.raises(ValueError, match=r"DCG could overflow float64: the largest gain \(1e\+308, grade 1\) .* "
                                         r"rescale the gains \(gain=\) or the discount weights \(discount=\)"):
        rankjit.ndcg(np.array([[1, 1, 1]]), S3, gain=[0.0, 1e308])
    with pytest.raises(ValueError, match=r"over 3 ranks \(inf\)"):
        rankjit.dcg(np.array([[1, 1, 1]]), S3, gain="linear", discount=[1e308, 1e308, 1e308])


def test_exp2_gain_overflow_counted_in_ideal_counts():
    ideal = np.zeros((1, 2000), np.int64)
    ideal[0, [1, 1500]] = 1
    with pytest.raises(ValueError, match=r"gain='exp2' of grade 1500 overflows .*ideal_counts counts documents of "
                                         r"grade 1500"):
        rankjit.ndcg(np.array([[1, 0, 0]]), S3, ideal_counts=ideal, gain="exp2")
    # wide but empty columns are harmless: nDCG = 1 / IDCG of one grade-1 document
    ideal[0, 1500] = 0
    assert rankjit.ndcg(np.array([[1, 0, 0]]), S3, ideal_counts=ideal, gain="exp2").tolist() == [1.0]


def _exact_err(ranked, max_grade):
    total, stay = Fraction(0), Fraction(1)
    for r, y in enumerate(ranked, start=1):
        R = Fraction(2**y - 1, 2**max_grade)
        total += stay * R / r
        stay *= 1 - R
    return float(total)


@pytest.mark.parametrize("max_grade,labels", [(2000, [1999, 1998, 0]), (2000, [2000, 3, 1]), (1100, [1050, 0, 1]),
                                              (10**6, [10**6 - 1, 10**6 - 60, 10**6 - 2000]), (4, [4, 2, 1])])
def test_err_with_a_large_max_grade_is_exact(max_grade, labels):
    # R(y) = (2^y - 1) / 2^max_grade never overflows: each is the correctly rounded float
    got = rankjit.err(np.array([labels]), S3, max_grade=max_grade)
    assert got.tolist() == [pytest.approx(_exact_err(labels, max_grade), rel=1e-15, abs=0.0)]
    res = rankjit.evaluate(np.array([labels]), S3, [f"ERR(max_grade={max_grade})"])
    assert res[f"ERR(max_grade={max_grade})"] == got[0]
    assert np.isfinite(rankjit.pfound(np.array([labels]), S3, max_grade=max_grade)).all()


def test_err_values_unchanged_for_ordinary_grades():
    labels, scores = np.array([[4, 0, 3, 1, 2]]), np.array([[0.5, 0.9, 0.1, 0.7, 0.3]])
    want = ref.measure_batch("ERR", labels, scores, None, max_grade=4)
    assert rankjit.err(labels, scores).tolist() == want.tolist()


def test_err_grade_table_is_bounded():
    with pytest.raises(ValueError, match=r"ERR\(max_grade=1000000000000\)@3: labels go up to 1e\+12, and ERR looks "
                                         r"R\(y\) up in a table by grade \(at most grade 2\*\*24\)"):
        rankjit.evaluate(np.array([[10**12, 0, 1]]), S3, [f"ERR(max_grade={10**12})@3"])


# ------------------------------------------------------------------------------------------
# 2. RPP refuses NaN labels like every other function


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_rpp_refuses_non_finite_labels_with_the_common_wording(bad):
    labels = np.array([[1.0, 0.0, 1.0], [0.0, bad, 1.0]])
    a, b = np.array([[3.0, 2.0, 1.0]] * 2), np.array([[1.0, 2.0, 3.0]] * 2)
    with pytest.raises(ValueError) as common:
        rankjit.ndcg(labels, a)
    assert re.match(r"(NaN|infinite) label in query 1 at position 1; labels must be finite", str(common.value))
    for call in (lambda: P.rpp(labels, a, b), lambda: P.rpp(labels, a, b, graded=True),
                 lambda: P.rpp_matrix(labels, np.stack([a, b])),
                 lambda: rankjit.evaluate(labels, a, ["RPP"], scores_b=b)):
        with pytest.raises(ValueError) as got:
            call()
        assert str(got.value) == str(common.value)


# ------------------------------------------------------------------------------------------
# 3. n_relevant / ideal_counts below what the row holds


@pytest.mark.parametrize("fn,kw", [(rankjit.ap, {}), (rankjit.ap, {"k": 1}), (rankjit.ap, {"empty": "one"}),
                                   (rankjit.rprec, {}), (rankjit.recall, {"k": 1})])
def test_n_relevant_below_the_row_is_refused_even_when_the_value_looks_fine(fn, kw):
    labels = np.array([[1, 0, 0], [1, 1, 1], [0, 0, 0]])
    scores = np.array([[3.0, 2.0, 1.0]] * 3)
    # query 1 holds 3 relevant documents but claims 1 (AP@1 = 1, Rprec = 1) or 0 (AP = 0 / "one")
    for claimed in (1, 0):
        with pytest.raises(ValueError, match=rf"of query 1( is 3 > 1)?: n_relevant counts fewer relevant documents "
                                             rf"than the row holds \(n_relevant\[1\] = {claimed}, but 3 documents of "
                                             rf"the row have label >= 1\)"):
            fn(labels, scores, n_relevant=np.array([1, claimed, 0]), **kw)
    assert np.isfinite(fn(labels, scores, n_relevant=np.array([1, 3, 0]), **kw)).all()


def test_n_relevant_check_in_evaluate_and_evaluate_systems():
    labels = np.array([[1, 2, 0]])
    stack = np.array([[[3.0, 2.0, 1.0]], [[1.0, 2.0, 3.0]]])
    with pytest.raises(ValueError, match=r"AP\(rel=2\)@1 of query 0: .*n_relevant\[0\] = 0, but 1 documents of the "
                                         r"row have label >= 2"):
        rankjit.evaluate(labels, stack[0], ["P@1", "AP(rel=2)@1"], n_relevant=np.array([0]))
    with pytest.raises(ValueError, match=r"Rprec of query 0: .*n_relevant\[0\] = 1, but 2 documents"):
        rankjit.evaluate_systems(labels, stack, ["Rprec"], n_relevant=np.array([1]))


def test_ideal_counts_below_the_row_by_grade():
    labels = np.array([[2, 1, 1], [0, 0, 2]])
    ok = np.array([[0, 2, 1], [5, 0, 1]])
    assert np.isfinite(rankjit.ndcg(labels, S3.repeat(2, 0), ideal_counts=ok)).all()
    bad = ok.copy()
    bad[1, 2] = 0
    with pytest.raises(ValueError, match=r"ideal_counts\[1, 2\] = 0, but query 1 holds 1 documents of grade 2 in the "
                                         r"row; ideal_counts must count every judged document"):
        rankjit.ndcg(labels, S3.repeat(2, 0), ideal_counts=bad)
    # grade 0 is not compared: unjudged documents of a run carry label 0
    assert np.isfinite(rankjit.ndcg(labels, S3.repeat(2, 0), ideal_counts=np.array([[0, 2, 1], [0, 0, 1]]))).all()


def test_ideal_counts_used_for_grades_above_62():
    # the ideal of integer grades > 62 came from the row, ignoring ideal_counts (silently wrong)
    labels = np.array([[70, 0, 1]])
    scores = np.array([[1.0, 2.0, 3.0]])
    ideal = np.zeros((1, 71), np.int64)
    ideal[0, [1, 70]] = [1, 5]
    want = ref.measure_batch("nDCG", labels, scores, None, ideal_counts=ideal, gain="linear")
    np.testing.assert_allclose(rankjit.ndcg(labels, scores, gain="linear", ideal_counts=ideal), want, rtol=1e-12)


@pytest.mark.parametrize("call,msg", [
    (lambda: rankjit.ap(np.array([[1, 0, 1]]), S3, n_relevant=np.array([2**63], np.uint64)),
     r"n_relevant\[0\] = 9223372036854775808 is too large \(a count of documents, at most 2\*\*62\)"),
    (lambda: rankjit.ndcg(np.array([[1, 0, 1]]), S3, ideal_counts=[[0, 10**12]]),
     r"ideal_counts\[0\] counts 1000000000000 judged documents; rankjit ranks at most 2\*\*31 - 1"),
    (lambda: rankjit.ndcg(np.array([[1, 0, 1]]), S3, ideal_counts=np.array([[0, 2**62, 2**62]])),
     r"ideal_counts\[0\] counts 9.2233720368547758e\+18 judged documents"),
    (lambda: rankjit.ndcg(np.array([[1, 0, 1]]), S3, lengths=np.array([2**64 - 1], np.uint64)),
     r"lengths out of range: lengths\[0\] = 18446744073709551615, must be in \[0, 3\]"),
    (lambda: rankjit.ndcg(np.arange(3), np.arange(3.0), offsets=np.array([0, 2**64 - 1, 3], np.uint64)),
     r"offsets\[1\] = 18446744073709551615 is beyond the number of documents \(3\)"),
])
def test_huge_counts_do_not_wrap_or_allocate(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


# ------------------------------------------------------------------------------------------
# 4. diversity: the ideal set must hold the row's relevant documents


NUG = np.array([[[1, 1, 0], [0, 1, 1], [1, 0, 1]]])


@pytest.mark.parametrize("call", [
    lambda ideal: D.err_ia(NUG, S3, normalize=True, ideal=ideal),
    lambda ideal: D.alpha_ndcg(NUG, S3, ideal=ideal),
    lambda ideal: rankjit.evaluate(np.zeros((1, 3), int), S3, ["nERR-IA@3"], nuggets=NUG, ideal=ideal),
])
def test_too_small_ideal_set_is_refused(call):
    with pytest.raises(ValueError, match=r"ideal of query 0 holds 0 judged documents with exactly the nuggets "
                                         r"\(subtopics\) \[1, 2\], but the row holds 1; ideal must hold"):
        call(np.array([[[0, 1, 0]]]))
    # the row's documents plus one more judged document: a superset, accepted, value in [0, 1]
    full = np.concatenate([NUG, [[[0, 0, 1]]]], axis=1)
    got = np.asarray(list(call(full).values())[0] if isinstance(call(full), dict) else call(full))
    assert np.all((got >= 0) & (got <= 1))


def test_ragged_ideal_set_checked_per_query():
    nug = np.array([[1, 0], [0, 1], [1, 1]])  # query 0: docs 0, 1; query 1: doc 2
    ideal = np.array([[1, 0], [0, 1], [1, 0], [0, 1]])  # query 1 lacks a document with nuggets {0, 1}
    with pytest.raises(ValueError, match=r"ideal of query 1 holds 0 judged documents with exactly the nuggets "
                                         r"\(subtopics\) \[0, 1\], but the row holds 1"):
        D.alpha_ndcg(nug, np.array([2.0, 1.0, 1.0]), offsets=np.array([0, 2, 3]), ideal=ideal,
                     ideal_offsets=np.array([0, 2, 4]))


# ------------------------------------------------------------------------------------------
# 5. leaked exceptions and parse errors


@pytest.mark.parametrize("text,pos,what", [
    ("nDCG(gain={0:0,1:1})@10", 10, r"gain is a dict; no parameter takes one"),
    ("nDCG(gain='linear'@10", 4, r"'\(' is never closed"),
    ("nDCG(gain=)@10", 10, r"invalid syntax"),
    ("nDCG(gain=linear)@10", 10, r"the value of gain is not a literal"),
    ("AP(1)", 3, r"a value without a name"),
    ("P(rel=1, rel=2)", 9, r"rel is given twice"),
    ("nDCG@10 extra", 5, None),
    ("nDCG)(@3", 4, r"unexpected '\)'"),
    ("@10", 0, r"expected a measure name"),
    ("", 0, r"the string is empty"),
    ("nDCG@", 5, r"expected a cutoff after '@'"),
])
def test_parse_errors_name_the_string_and_the_position(text, pos, what):
    with pytest.raises(ValueError) as e:
        rankjit.evaluate(np.array([[1, 0, 1]]), S3, [text])
    msg = str(e.value)
    assert repr(text) in msg
    if "cutoff of" in msg:
        assert f"(position {pos})" in msg
    else:
        assert f"at position {pos}:" in msg
    if what:
        assert re.search(what, msg)


def test_measures_argument():
    L = np.array([[1, 0, 1]])
    with pytest.raises(TypeError, match=r"measures must be a measure name or a list of names, e.g. \['nDCG@10', "
                                        r"'AP'\], got None"):
        rankjit.evaluate(L, S3, None)
    with pytest.raises(ValueError, match=r"no measures requested: measures is empty"):
        rankjit.evaluate(L, S3, [])
    with pytest.raises(TypeError, match=r"measures must be a measure name or a list of names"):
        rankjit.evaluate_systems(L, S3[None], None)
    with pytest.raises(TypeError, match=r"got b'AP'"):
        rankjit.evaluate(L, S3, b"AP")


def test_uint64_rel_threshold():
    small = np.array([[1, 0, 1]], np.uint64)
    assert rankjit.precision(small, S3, rel=2**64 - 1).tolist() == [0.0]  # above every label: nothing relevant
    assert rankjit.evaluate(small, S3, ["P(rel=18446744073709551615)@2"])["P(rel=18446744073709551615)@2"] == 0.0
    big = np.array([[2**64 - 1, 0, 1]], np.uint64)
    with pytest.raises(ValueError, match=r"rel=18446744073709551615 in 'P': labels go up to 1.8446744073709552e\+19, "
                                         r"and thresholds beyond 2\*\*53 cannot be compared exactly in float64"):
        rankjit.precision(big, S3, rel=2**64 - 1)
    # exact below 2**53: 2**53 - 1 and 2**53 are told apart
    labels = np.array([[2**53, 2**53 - 1, 0]], np.int64)
    assert rankjit.precision(labels, S3, rel=2**53).tolist() == [1 / 3]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["int64", "uint64"]), st.data())
def test_integer_scores_beyond_2_53_are_ranked_exactly_or_refused(dtype, data):
    # float64 keeps every integer up to 2**53 and only some beyond: a score that float64 cannot
    # hold exactly could tie with a distinct one, so it is refused, never ranked approximately
    info = np.iinfo(dtype)
    near = st.one_of(st.integers(2**53 - 4, 2**53 + 4), st.integers(-(2**53) - 4, -(2**53) + 4),
                     st.integers(info.min, info.max), st.sampled_from([2**60, 2**63 - 1, 2**62 + 2**10]))
    values = data.draw(st.lists(near.filter(lambda v: info.min <= v <= info.max), min_size=1, max_size=7))
    labels = data.draw(st.lists(st.integers(0, 3), min_size=len(values), max_size=len(values)))
    scores = np.array([values], dtype=dtype)
    exact = all(int(float(v)) == v for v in values)  # Python's own int -> float conversion
    if not exact:
        first = next(i for i, v in enumerate(values) if int(float(v)) != v)
        with pytest.raises(ValueError, match=re.escape(f"scores[0, {first}] = {values[first]} ({dtype}) cannot be ranked "
                                                       "exactly: integers beyond 2**53 lose digits in float64")):
            rankjit.ndcg(np.array([labels]), scores)
        return
    got = rankjit.ndcg(np.array([labels]), scores)[0]
    ranked = [labels[i] for i in ref.rank(labels, values)]  # ranked on the Python integers themselves
    assert got == pytest.approx(ref.measure_on_ranking("nDCG", ranked, labels), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("call,msg", [
    (lambda: rankjit.ndcg(np.array([[1, 0]]), S3[:, :2], gain={0: 0, 1: 1}),
     r"gain in 'nDCG' must be 'linear', 'exp2', or a 1-D array of gains by grade \(grade 0, 1, \.\.\.\), "
     r"got \{0: 0, 1: 1\}"),
    (lambda: rankjit.dcg(np.array([[1, 0]]), S3[:, :2], discount={1: 1.0}),
     r"discount in 'DCG' must be 'log2', 'zipf', 'logb', or a 1-D array of weights by rank \(rank 1, 2, \.\.\.\), "
     r"got \{1: 1.0\}"),
    (lambda: rankjit.pfound(np.array([[1, 0]]), S3[:, :2], prel=["a", "b"]),
     r"prel in 'pFound' must be a 1-D array of probabilities by grade \(grade 0, 1, \.\.\.\), got \['a', 'b'\]"),
    (lambda: rankjit.ap(np.array([[1, 0]]), S3[:, :2], denominator=["r"]),
     r"unknown denominator=\['r'\] in 'AP'"),
    (lambda: P.rpp(np.array([[1, 0]]), S3[:, :2], S3[:, :2], weights={"a": 1}),
     r"weights must be 'uniform', 'inverse', 'dcg' or a 1-D array of per-recall-level weights"),
])
def test_parameter_tables_of_the_wrong_type(call, msg):
    with pytest.raises((TypeError, ValueError), match=msg):
        call()


# ------------------------------------------------------------------------------------------
# 6. booleans are refused for every numeric parameter, with one wording


L2 = np.array([[1, 0, 1]])


@pytest.mark.parametrize("call,name", [
    (lambda: rankjit.err(L2, S3, max_grade=True), "max_grade in 'ERR'"),
    (lambda: rankjit.pfound(L2, S3, p_break=True), "p_break in 'pFound'"),
    (lambda: rankjit.precision(L2, S3, rel=True), "rel in 'P'"),
    (lambda: rankjit.dcg(L2, S3, base=True), "base in 'DCG'"),
    (lambda: rankjit.ndcg(L2, S3, k=True), "k"),
    (lambda: rankjit.evaluate(L2, S3, ["P@2"], rel=np.True_), "rel in 'P@2'"),
    (lambda: rankjit.evaluate(L2, S3, ["pFound(p_break=True)"]), r"p_break in 'pFound\(p_break=True\)'"),
    (lambda: D.alpha_ndcg(NUG, S3, alpha=True), "alpha"),
    (lambda: rankjit.evaluate(L2, S3, ["alpha-nDCG(alpha=True)"], nuggets=NUG), r"alpha in 'alpha-nDCG\(alpha=True\)'"),
    (lambda: P.rpp(L2, S3, S3, rel=True), "rel"),
    (lambda: P.rpp(L2, S3, S3, k=True), "k"),
])
def test_booleans_are_not_numbers(call, name):
    with pytest.raises(TypeError, match=rf"^{name} must be .+, {BOOL_WORDING}$"):
        call()


@pytest.mark.parametrize("call,msg", [
    (lambda: D.err_ia(NUG, S3, normalize="yes"), r"normalize must be True or False, got 'yes'"),
    (lambda: rankjit.evaluate(L2, S3, ["ERR-IA(normalize=1)"], nuggets=NUG),
     r"normalize in 'ERR-IA\(normalize=1\)' must be True or False, got 1"),
    (lambda: P.rpp(L2, S3, S3, graded="no"), r"graded must be True or False, got 'no'"),
    (lambda: rankjit.evaluate(L2, S3, ["RPP(graded='no')"], scores_b=S3),
     r"graded in \"RPP\(graded='no'\)\" must be True or False, got 'no'"),
    (lambda: rankjit.err(L2 * 0, S3, probabilities="no"), r"probabilities in 'ERR' must be True or False, got 'no'"),
])
def test_flags_must_be_booleans(call, msg):
    with pytest.raises(TypeError, match=msg):
        call()


# ------------------------------------------------------------------------------------------
# hypothesis: random shapes, extreme dtypes and values, inconsistent layouts and normalisers
#
# A case is drawn as the *truth* (rows of real documents) plus at most one hostile
# mutation that a correct implementation must refuse, naming the argument in ``expect``.
# Without a mutation the call must succeed, equal the reference, unless the grades are
# huge (exp2 gains, R(y) tables and rel thresholds then have clear limits of their own).

LABEL_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
                "float64", "bool"]
SCORE_DTYPES = ["float16", "float32", "float64", "int8", "int64", "uint64", "bool"]
HUGE_ERRORS = ("labels go up to", "gain='exp2' of grade", "DCG could overflow", "thresholds beyond 2**53")
MUTATIONS = ["none", "none", "none", "nan_label", "inf_label", "neg_label", "nan_score", "lengths", "mask", "offsets",
             "shape", "n_relevant_small", "n_relevant_shape", "n_relevant_dtype", "ideal_small", "ideal_shape"]
EXPECT = {"nan_label": "label", "inf_label": "label", "neg_label": "label", "nan_score": "score",
          "lengths": "lengths", "mask": "mask", "offsets": "offsets", "shape": "scores",
          "n_relevant_small": "n_relevant", "n_relevant_shape": "n_relevant", "n_relevant_dtype": "n_relevant",
          "ideal_small": "ideal_counts", "ideal_shape": "ideal_counts"}
#: examples per property (500 for the metric functions; each bounded by DEADLINE_MS; arrays at most
#: 5 x 7, counts below 2**62, so memory stays small)
N_EXAMPLES = 250
DEADLINE_MS = 60_000  # the first examples compile kernels for new dtypes
HYP = settings(max_examples=N_EXAMPLES, deadline=DEADLINE_MS, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _label_values(draw, dtype, n):
    """Grades fitting the dtype exactly: small, mid, huge (near the dtype's limit) or fractional."""
    if dtype == "bool":
        return [draw(st.integers(0, 1)) for _ in range(n)]
    limit = {"int8": 127, "uint8": 255, "int16": 2**15 - 1, "uint16": 2**16 - 1, "int32": 2**31 - 1,
             "uint32": 2**32 - 1, "int64": 2**63 - 1, "uint64": 2**64 - 1, "float16": 2048, "float32": 2**24,
             "float64": 2**53}[dtype]
    kinds = ["small", "small", "mid", "huge"] + (["fraction"] if dtype.startswith("float") else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "small":
        pool = [0, 1, 2, 3, 4]
    elif kind == "mid":
        pool = [0, 1, 62, 63, 70, 127, min(255, limit), min(300, limit)]
    elif kind == "fraction":
        pool = [0.0, 0.5, 1.0, 1.5, 3.25]
    else:
        pool = [0, 1, min(1023, limit), min(1024, limit), min(2000, limit), limit]
        if dtype == "float64":
            pool.append(1e300)
    return [draw(st.sampled_from(pool)) for _ in range(n)]


@st.composite
def hostile_cases(draw, label_dtypes=LABEL_DTYPES, score_dtypes=SCORE_DTYPES):
    n_q = draw(st.integers(1, 5))
    lens = [draw(st.integers(0, 7)) for _ in range(n_q)]
    ldt = draw(st.sampled_from(label_dtypes))
    sdt = draw(st.sampled_from(score_dtypes))
    n = sum(lens)
    labels = _label_values(draw, ldt, n)
    spool = [0.0, 1.0, 1.0, 2.5, -3.0, 7.0] + ([np.inf, -np.inf, 1e300] if sdt.startswith("float") else [])
    scores = [draw(st.sampled_from(spool)) for _ in range(n)]
    flat_l = np.array(labels).astype(ldt) if ldt.startswith("float") or ldt == "bool" else \
        np.array([int(v) for v in labels], dtype=object).astype(ldt)
    with np.errstate(over="ignore"):  # 1e300 as float16 / float32 is inf: one more extreme score
        flat_s = np.array(scores, dtype=np.float64).astype(sdt) if sdt.startswith("float") else \
            np.array([int(v) if np.isfinite(v) else 0 for v in scores]).astype(sdt)
    layout = draw(st.sampled_from(["dense", "lengths", "mask", "offsets"] if len(set(lens)) == 1 else
                                  ["lengths", "mask", "offsets"]))
    return dict(n_q=n_q, lens=lens, labels=flat_l, scores=flat_s, layout=layout,
                mutation=draw(st.sampled_from(MUTATIONS)), rel=draw(st.sampled_from([1, 1, 2, 0.5])),
                seed=draw(st.integers(0, 2**32 - 1)))


def _render(case):
    """(labels, scores, layout kwargs, truth rows) of a case; padding cells hold garbage."""
    lens, L, S = case["lens"], case["labels"], case["scores"]
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    rows = [(L[offsets[q]:offsets[q + 1]].tolist(), S[offsets[q]:offsets[q + 1]].astype(np.float64).tolist())
            for q in range(case["n_q"])]
    if case["layout"] == "offsets":
        return L.copy(), S.copy(), {"offsets": offsets}, rows
    width = max(lens + [1]) + (1 if case["layout"] != "dense" else 0)
    if case["layout"] == "dense":
        width = lens[0]
    garbage_l = np.array(-1 if L.dtype.kind == "i" else (np.nan if L.dtype.kind == "f" else 0)).astype(L.dtype)
    lab = np.full((case["n_q"], width), garbage_l, dtype=L.dtype)
    sc = np.full((case["n_q"], width), np.nan if S.dtype.kind == "f" else 0, dtype=S.dtype)
    real = np.zeros((case["n_q"], width), bool)
    for q in range(case["n_q"]):
        lab[q, :lens[q]] = L[offsets[q]:offsets[q + 1]]
        sc[q, :lens[q]] = S[offsets[q]:offsets[q + 1]]
        real[q, :lens[q]] = True
    kw = {"lengths": np.array(lens)} if case["layout"] == "lengths" else \
        {"mask": real} if case["layout"] == "mask" else {}
    return lab, sc, kw, rows


def _present(rows, rel):
    return np.array([sum(1 for y in ys if y >= rel) for ys, _ in rows], dtype=np.int64)


def _first_real(case, rng):
    """(query, index in the flat truth) of a random real document, or None."""
    cands = [q for q in range(case["n_q"]) if case["lens"][q]]
    if not cands:
        return None
    q = int(rng.choice(cands))
    return q, int(sum(case["lens"][:q]) + rng.integers(case["lens"][q]))


def _mutate(case, labels, scores, kw, extra):
    """Apply the case's mutation; returns the name of the argument it breaks, or None."""
    mut = case["mutation"]
    rng = np.random.default_rng(case["seed"])
    if mut in ("nan_label", "inf_label", "neg_label", "nan_score"):
        target = labels if "label" in mut else scores
        if (mut in ("nan_label", "inf_label", "nan_score") and target.dtype.kind != "f") or \
                (mut == "neg_label" and target.dtype.kind not in "if"):
            return None
        hit = _first_real(case, rng)
        if hit is None:
            return None
        q, flat = hit
        value = {"nan_label": np.nan, "inf_label": np.inf, "neg_label": -1, "nan_score": np.nan}[mut]
        if case["layout"] == "offsets":
            target[flat] = value
        else:
            target[q, flat - sum(case["lens"][:q])] = value
        return EXPECT[mut]
    if mut == "lengths":
        if case["layout"] == "offsets":
            return None  # lengths= with flat arrays: the 1-D error names the layout instead
        kw.pop("mask", None)
        bad = [np.array([labels.shape[1] + 1] * case["n_q"]), np.array([-1] * case["n_q"]),
               np.zeros(case["n_q"] + 1, int), np.zeros(case["n_q"], float)]
        kw["lengths"] = bad[int(rng.integers(len(bad)))]
        return "lengths"
    if mut == "mask":
        if case["layout"] == "offsets":
            return None
        kw.pop("lengths", None)
        bad = [np.ones((case["n_q"], labels.shape[1] + 1), bool), np.ones(labels.shape, int)]
        kw["mask"] = bad[int(rng.integers(len(bad)))]
        return "mask"
    if mut == "offsets":
        if case["layout"] != "offsets":
            return None
        off = kw["offsets"].copy()
        choice = int(rng.integers(4))
        if choice == 0:
            off[-1] += 1
        elif choice == 1:
            off[0] = 1
        elif choice == 2:
            off = off.astype(np.float64)
        else:
            off = off[:1]
        kw["offsets"] = off
        return "offsets"
    if mut == "shape":
        return "scores" if scores.shape[-1] > 0 else None  # cut one column (or flat document) off the scores
    rows = case["rows"]
    if mut == "n_relevant_small":
        present = _present(rows, case["rel"])
        qs = np.flatnonzero(present > 0)
        if not qs.size:
            return None
        nrel = present + 1
        nrel[qs[0]] = present[qs[0]] - 1
        extra["n_relevant"] = nrel
        return "n_relevant"
    if mut == "n_relevant_shape":
        extra["n_relevant"] = np.zeros(case["n_q"] + 1, int)
        return "n_relevant"
    if mut == "n_relevant_dtype":
        extra["n_relevant"] = _present(rows, case["rel"]).astype(float)
        return "n_relevant"
    if mut in ("ideal_small", "ideal_shape"):
        if labels.dtype.kind == "f" and any(y != int(y) for ys, _ in rows for y in ys):
            return None
        top = max([int(y) for ys, _ in rows for y in ys] + [0])
        if top > 300:
            return None
        hist = np.zeros((case["n_q"], top + 2), np.int64)
        for q, (ys, _) in enumerate(rows):
            for y in ys:
                hist[q, int(y)] += 1
        if mut == "ideal_shape":
            extra["ideal_counts"] = hist[:, :, None]
            return "ideal_counts"
        hit = np.argwhere(hist[:, 1:] > 0)
        if not hit.size:
            return None
        hist[hit[0][0], hit[0][1] + 1] -= 1
        extra["ideal_counts"] = hist
        return "ideal_counts"
    return None


def _huge(rows):
    return max([abs(float(y)) for ys, _ in rows for y in ys] + [0.0]) >= 1000


def _fractional(rows):
    return any(float(y) != int(float(y)) for ys, _ in rows for y in ys)


def _check_refusal(err, expect, rows, allow_fraction):
    """The error of a call: names ``expect`` (mutated argument), or is a documented limit of huge grades."""
    msg = str(err)
    assert "Traceback" not in msg and "numba" not in msg.lower(), msg
    if expect is not None and expect in msg:
        return
    assert isinstance(err, ValueError), (expect, msg)  # else: a documented limit, checked before the mutation
    if allow_fraction and "needs integer grades" in msg:
        return
    inexact = re.search(r"= (-?\d+) \((u?int64)\) cannot be ranked exactly", msg)
    if inexact:  # an integer score float64 cannot hold: justified only when it truly cannot
        value = int(inexact.group(1))
        assert int(float(value)) != value, msg
        return
    assert _huge(rows) and any(h in msg for h in HUGE_ERRORS), msg


def _scores_2d(scores, layout):
    return scores[:, :-1] if layout != "offsets" else scores[:-1]


def _in_range(family, values):
    values = np.asarray(values)
    assert values.dtype == np.float64 and np.isfinite(values).all(), values
    if family != "DCG":
        assert ((values >= 0) & (values <= 1 + 1e-12)).all(), (family, values)
    else:
        assert (values >= 0).all()


FUNCS = {"P": rankjit.precision, "R": rankjit.recall, "Success": rankjit.hit_rate, "RR": rankjit.rr, "AP": rankjit.ap,
         "Rprec": rankjit.rprec, "DCG": rankjit.dcg, "nDCG": rankjit.ndcg, "ERR": rankjit.err, "pFound": rankjit.pfound}
STATS = {}


def _tally(name, outcome):
    STATS.setdefault(name, {}).setdefault(outcome, 0)
    STATS[name][outcome] += 1


def _measure_names(rows, rel):
    top = max([int(float(y)) for ys, _ in rows for y in ys] + [1])
    return [("P@3", "P", 3, {"rel": rel}), ("R", "R", None, {"rel": rel}), ("Success@2", "Success", 2, {"rel": rel}),
            ("RR", "RR", None, {"rel": rel}), ("AP@5", "AP", 5, {"rel": rel}), ("Rprec", "Rprec", None, {"rel": rel}),
            ("DCG@3", "DCG", 3, {}), ("nDCG", "nDCG", None, {}), ("nDCG(gain='linear')@4", "nDCG", 4, {"gain": "linear"}),
            (f"ERR(max_grade={top})@5", "ERR", 5, {"max_grade": top}),
            (f"pFound(max_grade={top})", "pFound", None, {"max_grade": top})]


def _reference(family, k, params, rows, extra, ties):
    out = []
    for q, (ys, ss) in enumerate(rows):
        more = {}
        if "n_relevant" in extra and family in ("R", "AP", "Rprec"):
            more["n_relevant"] = int(extra["n_relevant"][q])
        if "ideal_counts" in extra and family in ("R", "AP", "Rprec", "nDCG"):
            more["ideal_counts"] = extra["ideal_counts"][q].tolist()
        out.append(ref.measure(family, ys, ss, k, ties, **params, **more))
    return np.array(out)


def _comparable(family, params, rows):
    """The reference computes in float64 directly: only where that cannot overflow."""
    top = max([float(y) for ys, _ in rows for y in ys] + [0.0])
    if family in ("ERR", "pFound"):
        return params.get("max_grade", 4) < 1000
    if family in ("DCG", "nDCG") and params.get("gain", "exp2") == "exp2":
        return top < 1000
    return True


@HYP
@given(case=hostile_cases(), ties=st.sampled_from(["pessimistic", "optimistic", "stable"]), means=st.booleans())
def test_evaluate_hostile(case, ties, means):
    labels, scores, kw, rows = _render(case)
    case["rows"] = rows
    extra = {}
    if case["mutation"] == "none" and not _fractional(rows) and not _huge(rows) and case["seed"] % 2:
        # consistent normalisers from outside the row: more judged documents than the row holds
        extra["n_relevant"] = _present(rows, case["rel"]) + case["seed"] % 3
    if case["mutation"] == "none" and not _fractional(rows) and not _huge(rows) and case["seed"] % 3 == 0:
        top = max([int(y) for ys, _ in rows for y in ys] + [0])
        extra["ideal_counts"] = np.zeros((case["n_q"], top + 2), np.int64) + case["seed"] % 2
        for q, (ys, _) in enumerate(rows):
            for y in ys:
                extra["ideal_counts"][q, int(y)] += 1
    expect = _mutate(case, labels, scores, kw, extra)
    if expect == "scores":
        scores = _scores_2d(scores, case["layout"])
    names = _measure_names(rows, case["rel"])
    try:
        res = rankjit.evaluate(labels, scores, [n[0] for n in names], ties=ties, rel=case["rel"],
                               per_query=not means, **kw, **extra)
    except (ValueError, TypeError) as err:
        _tally("evaluate", "refused (mutation)" if expect else "refused (huge or fractional grades)")
        _check_refusal(err, expect, rows, allow_fraction=True)
        return
    _tally("evaluate", "computed")
    assert expect is None or expect in ("n_relevant",), (expect, res)  # an unused n_relevant may be ignored
    for name, family, k, params in names:
        if means:
            assert np.isfinite(res[name]) and (family == "DCG" or 0 <= res[name] <= 1 + 1e-12), (name, res[name])
            continue
        _in_range(family, res[name])
        if expect is None and _comparable(family, params, rows):
            want = _reference(family, k, dict(params), rows, extra, ties)
            np.testing.assert_allclose(res[name], want, rtol=1e-9, atol=1e-12, err_msg=name)


#: the dtypes the metric functions are given here: each kind of dtype once (narrow and wide, signed and
#: unsigned, fractional, bool).  Every pair compiles the engine anew for each function's measures (about 2 s
#: each), and test_evaluate_hostile, whose validation and kernels these functions share, draws every dtype
METRIC_LABEL_DTYPES = ["int8", "uint64", "float16", "float64", "bool"]
METRIC_SCORE_DTYPES = ["float16", "float32", "float64", "uint64", "bool"]


@settings(HYP, max_examples=2 * N_EXAMPLES)  # ten functions share the examples
@given(case=hostile_cases(METRIC_LABEL_DTYPES, METRIC_SCORE_DTYPES), family=st.sampled_from(sorted(FUNCS)),
       k=st.one_of(st.none(), st.integers(1, 8)))
def test_metric_functions_hostile(case, family, k):
    labels, scores, kw, rows = _render(case)
    case["rows"] = rows
    extra = {}
    expect = _mutate(case, labels, scores, kw, extra)
    if expect == "scores":
        scores = _scores_2d(scores, case["layout"])
    params = {}
    if family in ("P", "R", "Success", "RR", "AP", "Rprec"):
        params["rel"] = case["rel"]
    if family in ("ERR", "pFound"):
        params["max_grade"] = max([int(float(y)) for ys, _ in rows for y in ys] + [1])
    if family not in ("R", "AP", "Rprec"):
        extra.pop("n_relevant", None)
        if expect == "n_relevant":
            expect = None
    if family != "nDCG":
        extra.pop("ideal_counts", None)
        if expect == "ideal_counts":
            expect = None
    args = (labels, scores) if family == "Rprec" else (labels, scores, k)
    try:
        got = FUNCS[family](*args, **params, **kw, **extra)
    except (ValueError, TypeError) as err:
        _tally(f"metric:{family}", "refused")
        _check_refusal(err, expect, rows, allow_fraction=family in ("ERR", "pFound"))
        return
    _tally(f"metric:{family}", "computed")
    assert expect is None, (expect, got)
    _in_range(family, got)
    if _comparable(family, params, rows):
        want = _reference(family, None if family == "Rprec" else k, params, rows, extra, "pessimistic")
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


PARAM_VALUES = [True, False, np.True_, None, math.nan, math.inf, -1, 0, 0.5, 2, 2**70, 10**400, "2", "x", [1, 2],
                {0: 1}, {1}, b"1", 1e308]


@HYP
@given(family=st.sampled_from(sorted(FUNCS)), name=st.sampled_from(["k", "rel", "max_grade", "p_break", "base",
                                                                    "gain", "discount", "prel", "empty",
                                                                    "denominator", "utility", "probabilities"]),
       value=st.sampled_from(PARAM_VALUES))
def test_parameter_values_hostile(family, name, value):
    fn = FUNCS[family]
    import inspect

    if name not in inspect.signature(fn).parameters:
        return
    labels, scores = np.array([[2, 0, 1, 0]]), np.array([[0.1, 0.4, 0.3, 0.2]])
    try:
        got = fn(labels, scores, **{name: value})
    except (ValueError, TypeError) as err:
        _tally("parameters", "refused")
        msg = str(err)
        assert name in msg or (name == "rel" and "threshold" in msg), (name, value, msg)
        return
    _tally("parameters", "computed")
    _in_range(family, got)


MEASURE_PIECES = ["nDCG", "AP", "P", "ERR", "alpha-nDCG", "(", ")", "@", "10", "-3", "x", "=", "gain", "'linear'",
                  "{0: 1}", "[1, 2]", ",", " ", "rel", "2", "max_grade", "'", '"', "**", "\\", "\n"]


@HYP
@given(st.lists(st.sampled_from(MEASURE_PIECES), min_size=0, max_size=8).map("".join))
def test_measure_strings_hostile(text):
    try:
        rankjit.evaluate(np.array([[1, 0, 2]]), S3, [text])
    except (ValueError, TypeError) as err:
        msg = str(err)
        _tally("measure strings", "refused")
        assert repr(text) in msg or text in msg, msg  # the string itself
        found = re.search(r"position (\d+)", msg)
        if msg.startswith("cannot parse"):
            assert found and 0 <= int(found.group(1)) <= len(text), msg
        return
    _tally("measure strings", "computed")


def test_zz_report_hypothesis_outcomes(capsys):
    """Print what the properties above tried (run with -s to see it; kept last in the module)."""
    with capsys.disabled():
        for name, outcomes in sorted(STATS.items()):
            print(f"\n{name}: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())), end="")


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["float32", "float64", "uint8", "int16", "int64"]),
       st.sampled_from([0.1, 0.10000000149011612, 0.10000000149011613, 0.1000000015, 0.5, 1, 1.5, 254.5, 255, 256,
                        300, 2**40, 1e300, 0, -5]),
       st.integers(0, 2**32 - 1))
def test_rel_threshold_is_exact_for_every_label_dtype(dtype, rel, seed):
    # label >= rel decided exactly (as fractions), also where rel falls between two float32 values
    # or beyond the labels' dtype: R (recall, AP, Rprec) and the hits agree with the reference
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        pool = np.array([0, 0.1, 0.10000000149011612, 0.5, 1, 2, 255], dtype=np.float64).astype(dtype)
    else:
        pool = np.array([0, 1, 2, 3, min(255, np.iinfo(dtype).max)], dtype=dtype)
    labels = rng.choice(pool, (6, 9))
    scores = rng.random((6, 9))
    names = [f"R(rel={rel!r})@4", f"AP(rel={rel!r})", f"Rprec(rel={rel!r})"]
    got = rankjit.evaluate(labels, scores, names, per_query=True)
    for q in range(6):
        order = ref.rank(list(labels[q]), list(scores[q]))
        relevant = [Fraction(float(y)) >= Fraction(rel) for y in labels[q]]
        R = sum(relevant)
        ranked = [relevant[i] for i in order]
        hits, ap = 0, 0.0
        for r, is_rel in enumerate(ranked, 1):
            hits += is_rel
            ap += hits / r if is_rel else 0.0
        expected = [sum(ranked[:4]) / R if R else 0.0, ap / R if R else 0.0, sum(ranked[:R]) / R if R else 0.0]
        assert [got[n][q] for n in names] == pytest.approx(expected, rel=1e-12, abs=1e-15)
