"""Bad input: a clear ValueError / TypeError for every item of issue 2's "Bad input" list.

Never a Numba typing error (or any other low-level error) reaching the user.  The tests
at the end pin core bugs found while writing this file (now fixed).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import rankjit

L = np.array([[0, 1, 3], [2, 0, 1]])
S = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])

ALL_FUNCS = [rankjit.precision, rankjit.recall, rankjit.hit_rate, rankjit.rr, rankjit.ap, rankjit.dcg,
             rankjit.ndcg, rankjit.err, rankjit.pfound]
FUNC_IDS = [f.__name__ for f in ALL_FUNCS]


def _eval(*args, **kw):
    return rankjit.evaluate(*args, **kw)


# ------------------------------------------------------------------------------------------
# shapes and layouts


@pytest.mark.parametrize("fn", ALL_FUNCS + [rankjit.rprec], ids=FUNC_IDS + ["rprec"])
def test_shape_mismatch(fn):
    with pytest.raises(ValueError, match=r"shape mismatch: labels \(2, 3\) vs scores \(2, 2\)"):
        fn(L, S[:, :2])


def test_shape_mismatch_evaluate_and_ragged():
    with pytest.raises(ValueError, match="shape mismatch"):
        _eval(L, S[:1], ["AP"])
    with pytest.raises(ValueError, match="different lengths: 5 and 4"):
        rankjit.ndcg(np.arange(5), np.arange(4.0), offsets=[0, 2, 4])


@pytest.mark.parametrize("shape", [(3,), (1, 2, 3)])
def test_not_2d_without_offsets(shape):
    with pytest.raises(ValueError, match=r"must be 2-D \(n_queries, n_docs\).*pass offsets="):
        rankjit.ndcg(np.zeros(shape, int), np.zeros(shape))
    with pytest.raises(ValueError, match="must be 2-D"):
        _eval(np.zeros(shape, int), np.zeros(shape), "nDCG@10")


def test_2d_with_offsets():
    with pytest.raises(ValueError, match="with offsets=, labels and scores must be 1-D"):
        rankjit.ndcg(L, S, offsets=[0, 3, 6])


@pytest.mark.parametrize("lengths,msg", [
    ([4, 1], r"lengths out of range: lengths\[0\] = 4, must be in \[0, 3\]"),
    ([1, -1], r"lengths out of range: lengths\[1\] = -1, must be in \[0, 3\]"),
])
def test_lengths_out_of_range(lengths, msg):
    with pytest.raises(ValueError, match=msg):
        rankjit.ndcg(L, S, lengths=np.array(lengths))
    with pytest.raises(ValueError, match=msg):
        _eval(L, S, ["AP", "P@2"], lengths=np.array(lengths))


def test_lengths_wrong_shape_or_dtype():
    with pytest.raises(ValueError, match=r"lengths must be 1-D with one entry per query \(2\)"):
        rankjit.ndcg(L, S, lengths=[1])
    with pytest.raises(TypeError, match="lengths must be integers"):
        rankjit.ndcg(L, S, lengths=[1.0, 2.0])


def test_mask_errors():
    with pytest.raises(TypeError, match="mask must be a boolean array"):
        rankjit.ndcg(L, S, mask=np.ones((2, 3), int))
    with pytest.raises(ValueError, match=r"mask shape \(2, 2\) does not match labels \(2, 3\)"):
        rankjit.ndcg(L, S, mask=np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="either lengths= or mask=, not both"):
        rankjit.ndcg(L, S, mask=np.ones((2, 3), bool), lengths=[1, 1])
    with pytest.raises(ValueError, match="do not combine it with lengths= or mask="):
        rankjit.ndcg(np.arange(4), np.arange(4.0), offsets=[0, 2, 4], lengths=[2, 2])


@pytest.mark.parametrize("offsets,msg", [
    ([0, 3, 2, 5], r"offsets must be non-decreasing: offsets\[2\] = 2 < offsets\[1\] = 3"),
    ([1, 3, 5], r"offsets\[0\] must be 0, got 1"),
    ([0, 3, 4], r"offsets\[-1\] must equal the number of documents \(5\), got 4"),
    ([0, 3, 7], r"offsets\[-1\] must equal the number of documents \(5\), got 7"),
])
def test_offsets_invalid(offsets, msg):
    with pytest.raises(ValueError, match=msg):
        rankjit.ndcg(np.arange(5) % 3, np.arange(5.0), offsets=np.array(offsets))
    with pytest.raises(ValueError, match=msg):
        _eval(np.arange(5) % 3, np.arange(5.0), ["AP"], offsets=np.array(offsets))


def test_row_over_int32_documents():
    # the kernels count ranks in 32-bit integers: a longer query is refused before any copy
    # (broadcast views: no memory is allocated for the 2**31 cells)
    big = 2**31
    labels = np.broadcast_to(np.int8(0), (1, big))
    scores = np.broadcast_to(np.float32(0.0), (1, big))
    with pytest.raises(ValueError, match=r"each row holds 2147483648 documents; rankjit ranks at most 2\*\*31 - 1"):
        rankjit.ndcg(labels, scores, 10)
    flat_labels = np.broadcast_to(np.int8(0), (big + 1,))
    flat_scores = np.broadcast_to(np.float32(0.0), (big + 1,))
    with pytest.raises(ValueError, match=r"query 1 holds 2147483648 documents; rankjit ranks at most"):
        _eval(flat_labels, flat_scores, ["AP"], offsets=np.array([0, 1, big + 1]))


def test_offsets_not_integers():
    with pytest.raises(TypeError, match="offsets must be a 1-D integer array"):
        rankjit.ndcg(np.arange(5), np.arange(5.0), offsets=[0.0, 3.0, 5.0])


# ------------------------------------------------------------------------------------------
# empty batch


def test_empty_batch():
    with pytest.raises(ValueError, match="empty batch: no queries"):
        rankjit.ndcg(np.zeros((0, 3), int), np.zeros((0, 3)))
    with pytest.raises(ValueError, match="empty batch: no queries"):
        _eval(np.zeros((0, 3), int), np.zeros((0, 3)), ["AP", "nDCG@10"])
    with pytest.raises(ValueError, match="empty batch"):
        rankjit.ap(np.zeros(0, int), np.zeros(0), offsets=np.array([0]))
    with pytest.raises(ValueError, match="empty batch: qids is empty"):
        rankjit.offsets_from_qids(np.array([], dtype=np.int64))


def test_no_measures():
    with pytest.raises(ValueError, match="no measures requested"):
        _eval(L, S, [])


# ------------------------------------------------------------------------------------------
# NaN scores, negative labels


@pytest.mark.parametrize("fn", ALL_FUNCS, ids=FUNC_IDS)
def test_nan_score_names_query_and_position(fn):
    s = S.copy()
    s[1, 2] = np.nan
    s[1, 0] = np.nan  # the first offending position of the first offending query is named
    with pytest.raises(ValueError, match=r"NaN score in query 1 at position 0"):
        fn(L, s)


def test_nan_score_ragged_names_position_in_row():
    with pytest.raises(ValueError, match=r"NaN score in query 1 at position 1"):
        rankjit.ndcg(np.array([0, 1, 2, 3, 0]), np.array([1.0, 2.0, 3.0, np.nan, 0.0]), offsets=[0, 2, 5])
    with pytest.raises(ValueError, match=r"NaN score in query 2 at position 0"):
        _eval(np.array([0, 1, 2, 3]), np.array([1.0, 2.0, np.nan, 0.0]), ["AP"], offsets=[0, 2, 2, 4])


def test_nan_score_in_large_parallel_batch_names_first_query():
    # > 2048 queries: the scan runs in chunks (in parallel when compiled); the first offender is reported
    labels = np.zeros((5000, 4), np.int8)
    scores = np.ones((5000, 4), np.float32)
    scores[4321, 1] = np.nan
    scores[3100, 3] = np.nan
    with pytest.raises(ValueError, match=r"NaN score in query 3100 at position 3"):
        _eval(labels, scores, ["nDCG@10", "AP"])
    labels[4000, 2] = -1
    labels[2500, 0] = -2
    with pytest.raises(ValueError, match=r"negative label -2 in query 2500 at position 0"):
        rankjit.ap(labels, np.ones((5000, 4)))


def test_nan_scores_and_negative_labels_in_padding_are_ignored():
    labels = np.array([[1, 0, -5], [-1, 2, 0]])
    scores = np.array([[1.0, 2.0, np.nan], [np.nan, 1.0, 0.5]])
    mask = np.array([[True, True, False], [False, True, True]])
    got = rankjit.ap(labels, scores, mask=mask)
    # row 0: ranked [0, 1] -> AP = (1/2)/1; row 1: ranked [2, 0] -> AP = 1
    np.testing.assert_allclose(got, [0.5, 1.0])
    got = rankjit.rr(labels[:, :2], scores[:, :2], lengths=[2, 0])
    np.testing.assert_allclose(got, [0.5, 0.0])  # row 1 is empty: its NaN / -1 cell is padding


@pytest.mark.parametrize("fn", ALL_FUNCS, ids=FUNC_IDS)
def test_negative_label(fn):
    labels = np.array([[0, 1, 2], [1, -1, 0]])
    with pytest.raises(ValueError, match=r"negative label -1 in query 1 at position 1; labels must be >= 0"):
        fn(labels, S)


def test_negative_label_masked_is_no_error():
    labels = np.array([[0, 1, 2], [1, -1, 0]], dtype=np.int8)
    mask = np.array([[True, True, True], [True, False, True]])
    # row 0: ranked [2, 1, 0] -> RR 1; row 1 without the masked cell: labels [1, 0] scores [3, 1] -> RR 1
    np.testing.assert_allclose(rankjit.rr(labels, S, mask=mask), [1.0, 1.0])
    # P@2 of row 1 = 1/2 (the masked -1 is no document at all); row 0: ranked [2, 1] -> 2/2
    np.testing.assert_allclose(rankjit.precision(labels, S, 2, mask=mask), [1.0, 0.5])
    # P without k divides by the real length: row 1 has 2 documents -> 1/2
    np.testing.assert_allclose(rankjit.precision(labels, S, mask=mask), [2 / 3, 0.5])
    res = _eval(labels, S, ["AP", "nDCG@2", "ERR", "pFound"], mask=mask, per_query=True)
    assert all(np.isfinite(v).all() for v in res.values())


# ------------------------------------------------------------------------------------------
# grades: non-integer, above max_grade


def test_non_integer_grades_where_grades_are_required():
    fl = L * 0.5  # label 0.5 at query 0, position 1
    with pytest.raises(ValueError, match=r"gain array needs integer grades, but query 0 has label 0.5 at position 1"):
        rankjit.ndcg(fl, S, gain=[0.0, 1.0, 3.0])
    with pytest.raises(ValueError, match=r"ERR with max_grade= needs integer grades.*query 0.*position 1"):
        rankjit.err(fl, S)
    with pytest.raises(ValueError, match=r"pFound with max_grade= needs integer grades"):
        rankjit.pfound(fl, S)
    with pytest.raises(ValueError, match=r"prel= needs integer grades"):
        rankjit.pfound(fl, S, prel=[0.0, 0.5, 0.9])
    with pytest.raises(ValueError, match=r"ideal_counts= needs integer grades"):
        rankjit.ndcg(fl, S, ideal_counts=np.ones((2, 4), np.int64))
    with pytest.raises(ValueError, match="needs integer grades"):
        _eval(fl, S, ["AP", "ERR@5"])


def test_float_labels_fine_where_grades_are_not_required():
    fl = L * 0.5
    # precision with rel=1: relevant labels are 1.5 (query 0) and 1.0 (query 1)
    np.testing.assert_allclose(rankjit.precision(fl, S, 1), [1.0, 1.0])
    np.testing.assert_allclose(rankjit.err(fl / 1.5, S, probabilities=True)[0], 1.0)  # top doc has R = 1


@pytest.mark.parametrize("fn,name", [(rankjit.err, "ERR"), (rankjit.pfound, "pFound")])
def test_labels_above_max_grade_suggest_the_fix(fn, name):
    labels = L + 3  # grades up to 6
    with pytest.raises(ValueError, match=rf"{name}: labels go up to 6, above max_grade=4; pass max_grade=6"):
        fn(labels, S)
    with pytest.raises(ValueError, match=r"labels go up to 3, above max_grade=2; pass max_grade=3"):
        fn(L, S, max_grade=2)
    with pytest.raises(ValueError, match=r"pass max_grade=6"):
        _eval(labels, S, [f"{name}@10"])
    # and the suggested fix works
    assert np.isfinite(fn(labels, S, max_grade=6)).all()


def test_gain_or_prel_array_too_short():
    with pytest.raises(ValueError, match=r"labels go up to 3, but the gain array covers grades 0..2; give a gain"):
        rankjit.ndcg(L, S, gain=[0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match=r"labels go up to 3, but prel covers grades 0..2; give a pRel"):
        rankjit.pfound(L, S, prel=[0.0, 0.1, 0.2])


def test_probabilities_out_of_range():
    with pytest.raises(ValueError, match=r"probabilities=True needs labels in \[0, 1\], but labels go up to 3"):
        rankjit.err(L, S, probabilities=True)
    with pytest.raises(ValueError, match=r"probabilities=True needs labels in \[0, 1\]"):
        rankjit.pfound(L, S, probabilities=True)


# ------------------------------------------------------------------------------------------
# k, names and parameters


@pytest.mark.parametrize("fn", ALL_FUNCS, ids=FUNC_IDS)
@pytest.mark.parametrize("k", [0, -1, -10])
def test_k_not_positive(fn, k):
    with pytest.raises(ValueError, match=rf"k must be a positive integer or None, got {k}"):
        fn(L, S, k)


@pytest.mark.parametrize("k", [1.5, "3", True, 2.0])
def test_k_not_an_integer(k):
    with pytest.raises(TypeError, match="k must be a positive integer or None"):
        rankjit.ndcg(L, S, k)


@pytest.mark.parametrize("name,msg", [
    ("P@0", r"cutoff of 'P@0' must be a positive integer, got 0"),
    ("nDCG@-3", r"cutoff of 'nDCG@-3' must be a positive integer, got -3"),
    ("AP@x", r"cutoff of 'AP@x' must be a positive integer"),
    ("Rprec@5", r"Rprec takes no cutoff"),
])
def test_bad_cutoff_in_name(name, msg):
    with pytest.raises(ValueError, match=msg):
        _eval(L, S, [name])


def test_numpy_integer_k_is_accepted():
    np.testing.assert_array_equal(rankjit.precision(L, S, np.int64(2)), rankjit.precision(L, S, 2))


def test_unknown_gain_discount_utility_denominator_empty():
    with pytest.raises(ValueError, match=r"unknown gain='foo' in 'nDCG'; valid values: 'linear', 'exp2', or a 1-D array of gains"):
        rankjit.ndcg(L, S, gain="foo")
    with pytest.raises(ValueError, match=r"unknown gain='foo' in \"DCG\(gain='foo'\)@3\""):
        _eval(L, S, ["DCG(gain='foo')@3"])
    with pytest.raises(ValueError, match=r"unknown discount='foo' in 'DCG'; valid values: 'log2', 'zipf', 'logb'"):
        rankjit.dcg(L, S, discount="foo")
    with pytest.raises(ValueError, match=r"unknown utility='foo' in 'ERR'; valid values: 'reciprocal', 'log2'"):
        rankjit.err(L, S, utility="foo")
    with pytest.raises(ValueError, match=r"unknown denominator='foo' in 'AP'; valid values: 'r', 'min_k_r'"):
        rankjit.ap(L, S, denominator="foo")
    with pytest.raises(ValueError, match=r"unknown empty='foo' in 'nDCG'; valid values: 'zero', 'one', 'nan'"):
        rankjit.ndcg(L, S, empty="foo")
    with pytest.raises(ValueError, match=r"unknown empty='foo'"):
        _eval(L, S, ["AP"], empty="foo")


@pytest.mark.parametrize("fn", ALL_FUNCS, ids=FUNC_IDS)
def test_unknown_ties(fn):
    with pytest.raises(ValueError, match=r"unknown ties='random'; valid values: pessimistic, optimistic, stable, "
                                         r"average"):
        fn(L, S, ties="random")


def test_unknown_ties_evaluate():
    with pytest.raises(ValueError, match=r"unknown ties='Pessimistic'"):
        _eval(L, S, ["AP"], ties="Pessimistic")


def test_unknown_measure_lists_valid_names():
    with pytest.raises(ValueError, match=r"unknown measure 'nDGC' in 'nDGC@10'; valid names: .*AP.*nDCG.*pFound"):
        _eval(L, S, ["nDCG@10", "nDGC@10"])


def test_unknown_parameter_lists_valid_ones():
    with pytest.raises(ValueError, match=r"unknown parameter 'gian' for nDCG in \"?'?nDCG\(gian='linear'\)@10'?\"?; "
                                         r"valid parameters: base, dcg, discount, empty, gain, gains"):
        _eval(L, S, ["nDCG(gian='linear')@10"])
    with pytest.raises(ValueError, match=r"unknown parameter 'k' for P .*valid parameters: rel"):
        _eval(L, S, ["P(k=3)"])


def test_unparseable_measure():
    with pytest.raises(ValueError, match=r"cannot parse the parameters of .*name=value with literal values"):
        _eval(L, S, ["nDCG(gain=linear)@10"])
    with pytest.raises(TypeError, match="a measure name must be a string"):
        _eval(L, S, [10])


def test_unexpected_keyword_to_evaluate():
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        _eval(L, S, ["AP"], lenghts=[1, 2])


@pytest.mark.parametrize("call", [
    lambda: rankjit.err(L, S, ties="average"),
    lambda: _eval(L, S, ["AP", "ERR@20"], ties="average"),
])
def test_average_ties_with_err_names_the_metric(call):
    with pytest.raises(ValueError, match=r"ties='average' is not available for ERR"):
        call()


def test_average_ties_with_pfound_names_the_metric():
    with pytest.raises(ValueError, match=r"ties='average' is not available for pFound \('pFound@5'\)"):
        _eval(L, S, ["nDCG@5", "pFound@5"], ties="average")
    with pytest.raises(ValueError, match=r"ties='average' is not available for pFound"):
        rankjit.pfound(L, S, ties="average")


def test_other_parameter_errors():
    with pytest.raises(ValueError, match=r"discount='logb' needs base > 1"):
        rankjit.dcg(L, S, discount="logb", base=1.0)
    with pytest.raises(ValueError, match=r"a discount array must be 1-D, non-empty and finite \(weights by rank"):
        rankjit.dcg(L, S, discount=[1.0, np.nan])
    with pytest.raises(ValueError, match=r"a discount array must be 1-D"):
        rankjit.dcg(L, S, discount=[[1.0, 0.5]])
    with pytest.raises(ValueError, match=r"a gain array must be 1-D, non-empty and finite"):
        rankjit.dcg(L, S, gain=[0.0, 1.0, np.inf, 3.0])
    with pytest.raises(ValueError, match=r"a gain array must be 1-D, non-empty and finite"):
        rankjit.dcg(L, S, gain=[])
    with pytest.raises(ValueError, match=r"p_break in 'pFound' must be in \[0, 1\], got 1.5"):
        rankjit.pfound(L, S, p_break=1.5)
    with pytest.raises(ValueError, match=r"max_grade in 'ERR' must be a positive integer, got 0"):
        rankjit.err(L * 0, S, max_grade=0)
    with pytest.raises(ValueError, match=r"max_grade in 'ERR' must be a positive integer, got 4.0"):
        rankjit.err(L, S, max_grade=4.0)
    with pytest.raises(ValueError, match=r"pass either prel= or probabilities=True, not both"):
        rankjit.pfound(L * 0, S, prel=[0.0, 1.0], probabilities=True)
    with pytest.raises(ValueError, match=r"prel must be a 1-D array of probabilities in \[0, 1\]"):
        rankjit.pfound(L, S, prel=[0.0, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"rel in 'P' must be a finite number, got nan"):
        rankjit.precision(L, S, rel=math.nan)


def test_n_relevant_and_ideal_counts_errors():
    with pytest.raises(ValueError, match=r"n_relevant must hold one count per query \(2\), got shape \(1,\)"):
        rankjit.ap(L, S, n_relevant=[1])
    with pytest.raises(ValueError, match=r"n_relevant must be >= 0"):
        rankjit.recall(L, S, n_relevant=[-1, 2])
    with pytest.raises(TypeError, match=r"n_relevant must be integers"):
        rankjit.ap(L, S, n_relevant=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"ideal_counts must have shape \(n_queries, n_grades\) = \(2, G\)"):
        rankjit.ndcg(L, S, ideal_counts=[1, 2])
    with pytest.raises(ValueError, match=r"ideal_counts must be >= 0"):
        rankjit.ndcg(L, S, ideal_counts=[[1, -1, 0, 1], [0, 1, 1, 1]])
    with pytest.raises(TypeError, match=r"ideal_counts must be integers"):
        rankjit.ndcg(L, S, ideal_counts=np.ones((2, 4)))


@pytest.mark.parametrize("labels,scores,exc,msg", [
    (np.array([["a", "b"]]), np.array([[1.0, 2.0]]), TypeError, "labels must be integers or floats, got dtype <U1"),
    (np.array([[1, None]], dtype=object), np.array([[1.0, 2.0]]), TypeError, "labels must be integers or floats"),
    (np.array([[1, 2]]), np.array([["a", "b"]]), TypeError, "scores must be numeric"),
    (np.array([[1, 2]]), np.array([[1j, 2]]), TypeError, "scores must be numeric, got dtype complex128"),
    (np.array([[1, 2]]), None, TypeError, "scores must be an array-like, got NoneType"),
])
def test_wrong_types_are_clear_errors(labels, scores, exc, msg):
    with pytest.raises(exc, match=msg):
        rankjit.ndcg(labels, scores)


# ------------------------------------------------------------------------------------------
# core bugs found while writing these tests (fixed; kept as regression tests)


def test_logb_discount_emits_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rankjit.dcg(L, S, discount="logb", base=2.0)


@pytest.mark.parametrize("fn", [rankjit.precision, rankjit.ndcg])
def test_infinite_label_is_a_clear_error(fn):
    with pytest.raises(ValueError, match="(?i)label"):
        fn(np.array([[np.inf, 0.0]]), np.array([[1.0, 2.0]]))


def test_nan_label_is_a_clear_error():
    with pytest.raises(ValueError, match=r"(?i)nan label.*query 0.*position 0"):
        rankjit.ndcg(np.array([[np.nan, 2.0]]), np.array([[1.0, 2.0]]))


def test_ideal_counts_narrower_than_the_grades():
    with pytest.raises(ValueError, match="ideal_counts"):
        rankjit.ndcg(L, S, ideal_counts=np.array([[1, 1], [1, 1]]))


def test_huge_k():
    # recall at a cutoff beyond every row is the recall of the whole row
    try:
        got = rankjit.recall(L, S, 10**30)
    except ValueError:
        return  # a clear error is acceptable too
    np.testing.assert_array_equal(got, rankjit.recall(L, S))
    name = "R@100000000000000000000"
    try:
        res = _eval(L, S, [name], per_query=True)
    except ValueError:
        return
    np.testing.assert_array_equal(res[name], rankjit.recall(L, S))


def test_probabilities_must_be_a_bool():
    with pytest.raises((TypeError, ValueError), match="probabilities"):
        rankjit.err(L * 0, S, probabilities="no")


def test_ideal_counts_wider_than_gain_array_names_ideal_counts():
    with pytest.raises(ValueError, match="ideal_counts"):
        rankjit.ndcg(L, S, gain=[0.0, 1.0, 2.0, 3.0], ideal_counts=np.zeros((2, 6), np.int64))


def test_n_relevant_below_the_rows_relevant_count_is_an_error():
    labels = np.array([[1, 1, 0]])
    scores = np.array([[3.0, 2.0, 1.0]])
    # the row holds 2 relevant documents; claiming R = 1 would give recall 2
    with pytest.raises(ValueError, match=r"R@3 of query 0 is 2 > 1: n_relevant counts fewer relevant documents"):
        rankjit.evaluate(labels, scores, ["R@3"], n_relevant=np.array([1]))
    with pytest.raises(ValueError, match=r"AP of query 0 is 2 > 1: ideal_counts counts fewer relevant"):
        # AP = (1/1 + 2/2) / R = 2 with R = 1 from the histogram
        rankjit.evaluate(labels, scores, ["AP"], ideal_counts=np.array([[5, 1]]))


def test_label_scan_of_contiguous_chunks_locates_and_ignores_padding():
    # batches whose rows follow each other (full padded rows, CSR) are scanned as one run (numpy);
    # a finding is then located row by row, and padding (lengths=) is never part of a run
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 6, size=5000)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    labels = rng.integers(0, 3, size=offsets[-1]).astype(np.int16)
    scores = rng.random(offsets[-1])
    q = int(np.flatnonzero(counts >= 3)[2000])
    labels[offsets[q] + 2] = -3
    with pytest.raises(ValueError, match=rf"negative label -3 in query {q} at position 2"):
        rankjit.ndcg(labels, scores, 10, offsets=offsets)
    padded = np.zeros((5000, 4), np.int8)
    padded[:, 3] = -1  # padding only
    got = rankjit.precision(padded, np.ones((5000, 4)), 2, lengths=np.full(5000, 3))
    np.testing.assert_array_equal(got, np.zeros(5000))
    with pytest.raises(ValueError, match=r"negative label -1 in query 0 at position 3"):
        rankjit.precision(padded, np.ones((5000, 4)), 2)
