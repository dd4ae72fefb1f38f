"""Common checks run on every input family of the registry (``rankjit._registry.INPUT_FAMILIES``).

The counterpart of ``tests/test_families.py`` for the families that need an input besides labels
and scores: the diversity measures (:mod:`rankjit.diversity`, ``nuggets=``) and the preferences
RPP / LexiPrecision / LexiRecall (:mod:`rankjit.preference`, ``scores_b=``).  Every test is
parametrized over :data:`rankjit._registry.INPUT_FAMILIES` (ids = family names), never over a
list written by hand, and computes through ``rankjit.evaluate(..., per_query=True)`` with the
input the record's ``needs`` names.  Expected values come from another call path of rankjit (the
same queries in another layout, alone, permuted, in another dtype), never from printed numbers;
the values themselves are checked against references in ``tests/test_diversity.py``,
``tests/test_rpp.py``, ``tests/test_lexicographic.py``.

Each call computes two measures of the family: ``Name@5`` (a cutoff inside most rows) and
``Name`` (the whole row: where the bound / denominator depends on the row's length).

Inputs: for the diversity families ``nuggets=`` holds binary judgments (n_queries, n_docs,
n_subtopics) (2-D flat with ``offsets=``) and ``labels`` the nugget counts per document
(docs/diversity.md: ``evaluate`` validates labels but the measures read the nuggets); for the
preferences ``labels`` are grades 0..3 and ``scores_b=`` the second system's scores, laid out as
``scores``.  Scores are multiples of 1/4 (exact in float32).

Checks:

1. layouts: dense rows, ``lengths=`` covering every cell, ``mask=`` all True and ragged
   ``offsets=`` give bitwise identical values; so do padded rows (real padding holding garbage:
   NaN scores, negative labels and judgments) given by ``lengths=``, by the equivalent ``mask=``
   (real documents scattered) and as the ragged batch of the same real documents;
2. independence: a query evaluated alone gives its value in the batch; permuting the queries
   permutes the values;
3. dtypes: int8 / int32 / int64 / float64 labels holding the same grades (and, for the diversity
   families, which read no labels, nugget judgments as bool / int8 / int64 / float64) give
   identical values; float32 scores (and ``scores_b``) equal float64 ones to 1e-12;
4. means: ``per_query=False`` is ``np.mean`` of the per-query values (``empty='nan'``: NaN when a
   query has no value, as ``evaluate`` documents: plain means, ``np.nanmean`` by hand);
5. ties: every rule of ``evaluate(ties=)`` a family accepts runs, and they agree on tie-free
   scores; ``"average"`` is refused by every input family (docs/diversity.md, docs/rpp.md: "no
   closed form"), with its message;
6. bad input: a NaN score (and a NaN ``scores_b``), a negative label, a negative nugget
   judgment, ``nuggets=`` / ``scores_b=`` of the wrong shape and the needed input missing are
   refused with a message naming the problem.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import rankjit
from rankjit._registry import INPUT_FAMILIES

FAMILIES = INPUT_FAMILIES
IDS = [f.name for f in FAMILIES]
TIES = ("pessimistic", "optimistic", "stable", "average")
N_Q = 14
MAX_LEN = 8  # documents per row (<= 12: the interpreted pass stays fast)
N_SUB = 4  # subtopics of the diversity families
MAX_GRADE = 3  # labels of the preference families: grades 0..MAX_GRADE
TOL = {"rtol": 1e-12, "atol": 1e-12}

#: what "average" is refused with, by module (the modules' _tie_code)
AVERAGE_REFUSED = {
    "rankjit.diversity": "ties='average' is not available for the diversity measures",
    "rankjit.preference": "ties='average' is not available for {function}",
}


# ------------------------------------------------------------------------------------------
# helpers


def is_diversity(family):
    return family.needs == ("nuggets",)


def measures(family):
    """``Name@5`` (when the family takes a cutoff) and ``Name`` (the whole row)."""
    return [f"{family.name}@5", family.name] if family.takes_k else [family.name]


def accepted_ties(family):
    """Every input family refuses "average" (docs: "`ties='average'` is refused")."""
    return [t for t in TIES if t != "average"]


def make_rows(family, seed, n_q=N_Q, max_len=MAX_LEN, full=False, distinct=False):
    """Random queries: a list of dicts ``labels`` (n,), ``scores`` (n,), ``nuggets`` (n, N_SUB), ``scores_b`` (n,).

    ``full``: every row holds ``max_len`` documents; otherwise rows 0..3 are an empty row, a
    one-document row, a full row without any relevant document and a full row of equal scores.
    Scores are multiples of 1/4, from a small pool (ties) unless ``distinct``.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_q):
        if full:
            n = max_len
        else:
            n = [0, 1, max_len, max_len][q] if q < 4 else int(rng.integers(0, max_len + 1))
        nug = (rng.random((n, N_SUB)) < 0.3).astype(np.int8)
        grades = rng.choice(MAX_GRADE + 1, size=n, p=[0.5, 0.25, 0.15, 0.1])
        if q == 2 or rng.random() < 0.1:  # no relevant document: the family's empty value
            nug[:] = 0
            grades[:] = 0
        if distinct:
            sa = (rng.permutation(8 * max_len)[:n] - 4 * max_len) / 4.0
            sb = (rng.permutation(8 * max_len)[:n] - 4 * max_len) / 4.0
        elif q == 3 and not full:
            sa = np.full(n, 1.5)
            sb = rng.integers(-2, 3, size=n) / 4.0
        else:
            sa = rng.integers(-2, 3, size=n) / 4.0
            sb = rng.integers(-2, 3, size=n) / 4.0
        labels = nug.sum(axis=1).astype(np.int64) if is_diversity(family) else grades.astype(np.int64)
        rows.append({"labels": labels, "scores": sa, "nuggets": nug, "scores_b": sb})
    return rows


def ragged(family, rows, label_dtype=np.int64, score_dtype=np.float64, nugget_dtype=np.int8):
    """(labels, scores, kwargs) of the ragged batch of ``rows`` (``offsets=`` and the family's input)."""
    lens = [len(r["labels"]) for r in rows]
    labels = np.concatenate([r["labels"] for r in rows]).astype(label_dtype)
    scores = np.concatenate([r["scores"] for r in rows]).astype(score_dtype)
    kw = {"offsets": np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)}
    if is_diversity(family):
        kw["nuggets"] = np.concatenate([r["nuggets"].reshape(-1, N_SUB) for r in rows]).astype(nugget_dtype)
    else:
        kw["scores_b"] = np.concatenate([r["scores_b"] for r in rows]).astype(score_dtype)
    return labels, scores, kw


def padded(family, rows, how, label_dtype=np.int64, score_dtype=np.float64, nugget_dtype=np.int8, extra=0,
           seed=0, garbage=True):
    """(labels, scores, kwargs) of a padded batch of ``rows``.

    ``how``: "dense" (no layout argument: every row must fill the width), "lengths" (real
    documents first), "mask" (real documents at sorted random positions).  The padding holds
    garbage unless ``garbage=False``: NaN scores, negative labels and nugget judgments.
    """
    rng = np.random.default_rng(seed)
    lens = np.array([len(r["labels"]) for r in rows], dtype=np.int64)
    width = int(lens.max(initial=0)) + extra
    bad = -7 if garbage else 0
    labels = np.full((len(rows), width), bad if np.dtype(label_dtype).kind != "u" else 0, dtype=label_dtype)
    scores = np.full((len(rows), width), np.nan if garbage else 0.0, dtype=score_dtype)
    scores_b = scores.copy()
    nuggets = np.full((len(rows), width, N_SUB), -1 if garbage else 0, dtype=nugget_dtype)
    mask = np.zeros((len(rows), width), dtype=bool)
    for q, r in enumerate(rows):
        n = len(r["labels"])
        pos = np.sort(rng.choice(width, size=n, replace=False)) if how == "mask" else np.arange(n)
        labels[q, pos] = r["labels"]
        scores[q, pos] = r["scores"]
        scores_b[q, pos] = r["scores_b"]
        nuggets[q, pos] = r["nuggets"]
        mask[q, pos] = True
    if how == "dense":
        assert mask.all(), "a dense batch has no padding"
        kw = {}
    elif how == "lengths":
        kw = {"lengths": lens}
    else:
        kw = {"mask": mask}
    kw.update({"nuggets": nuggets} if is_diversity(family) else {"scores_b": scores_b})
    return labels, scores, kw


def run(family, labels, scores, kw, ties="pessimistic", per_query=True, names=None):
    """``evaluate`` of ``names`` (default :func:`measures`) as a dict name -> per-query values (or means)."""
    return rankjit.evaluate(labels, scores, names or measures(family), ties=ties, per_query=per_query, **kw)


def assert_same(a, b, **tol):
    assert a.keys() == b.keys()
    for name in a:
        if tol:
            np.testing.assert_allclose(a[name], b[name], equal_nan=True, err_msg=name, **tol)
        else:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def families():
    return pytest.mark.parametrize("family", FAMILIES, ids=IDS)


# ------------------------------------------------------------------------------------------
# 1. layouts


@families()
def test_layouts_full_rows_agree(family):
    """Dense rows == lengths= covering every cell == mask= all True == ragged offsets=, bit for bit."""
    rows = make_rows(family, 11, full=True)
    labels, scores, kw = padded(family, rows, "dense", garbage=False)
    base = run(family, labels, scores, kw)
    width = labels.shape[1]
    assert_same(run(family, labels, scores, {**kw, "lengths": np.full(N_Q, width, dtype=np.int64)}), base)
    assert_same(run(family, labels, scores, {**kw, "mask": np.ones(labels.shape, dtype=bool)}), base)
    assert_same(run(family, *ragged(family, rows)), base)


@families()
@pytest.mark.parametrize("seed", [1, 2])
def test_layouts_padded_rows_agree(family, seed):
    """Padded rows (garbage in the padding): lengths= == the equivalent mask= == the ragged batch."""
    rows = make_rows(family, seed)
    base = run(family, *ragged(family, rows))
    assert_same(run(family, *padded(family, rows, "lengths", extra=2, seed=seed)), base)
    assert_same(run(family, *padded(family, rows, "mask", extra=2, seed=seed)), base)
    # the same mask= without garbage: the padding is never read
    assert_same(run(family, *padded(family, rows, "mask", extra=2, seed=seed, garbage=False)), base)


# ------------------------------------------------------------------------------------------
# 2. independence of the queries


@families()
def test_query_alone_equals_its_value_in_the_batch(family):
    rows = make_rows(family, 21)
    batch = run(family, *ragged(family, rows))
    for q, row in enumerate(rows):
        alone = run(family, *ragged(family, [row]))
        for name in batch:
            np.testing.assert_array_equal(alone[name], batch[name][q:q + 1], err_msg=f"{name}, query {q}")
    # the dense rows of a full batch, one at a time
    full = make_rows(family, 22, n_q=6, full=True)
    dense = run(family, *padded(family, full, "dense", garbage=False))
    for q, row in enumerate(full):
        alone = run(family, *padded(family, [row], "dense", garbage=False))
        for name in dense:
            np.testing.assert_array_equal(alone[name], dense[name][q:q + 1], err_msg=f"{name}, query {q}")


@families()
def test_permuting_queries_permutes_values(family):
    rows = make_rows(family, 31)
    base = run(family, *ragged(family, rows))
    perm = np.random.default_rng(32).permutation(len(rows))
    moved = run(family, *ragged(family, [rows[i] for i in perm]))
    assert_same(moved, {name: v[perm] for name, v in base.items()})
    # and in a padded batch
    moved = run(family, *padded(family, [rows[i] for i in perm], "mask", extra=1, seed=33))
    assert_same(moved, {name: v[perm] for name, v in base.items()})


# ------------------------------------------------------------------------------------------
# 3. dtypes


@families()
def test_label_dtypes(family):
    """int8 / int32 / int64 / float64 labels holding the same grades give identical values.

    The diversity families read no labels (``evaluate`` validates them; the measures read the
    nuggets), so this holds trivially there; their judgments' dtypes are checked below.
    """
    rows = make_rows(family, 41)
    base = run(family, *ragged(family, rows))
    for dtype in (np.int8, np.int32, np.int64, np.float64):
        assert_same(run(family, *ragged(family, rows, label_dtype=dtype)), base)
        assert_same(run(family, *padded(family, rows, "mask", label_dtype=dtype, extra=1)), base)


@families()
def test_nugget_dtypes(family):
    """bool / int8 / int64 / float64 nugget judgments holding the same 0 / 1 give identical values."""
    if not is_diversity(family):
        pytest.skip("a preference family reads no nuggets= (scores_b=)")
    rows = make_rows(family, 42)
    base = run(family, *ragged(family, rows))
    for dtype in (np.bool_, np.int8, np.int64, np.float64):
        assert_same(run(family, *ragged(family, rows, nugget_dtype=dtype)), base)
        # (bool padding cannot hold garbage)
        assert_same(run(family, *padded(family, rows, "lengths", nugget_dtype=dtype, extra=1,
                                        garbage=dtype is not np.bool_)), base)


@families()
def test_float32_scores(family):
    """float32 scores (and scores_b) holding the same values as float64 ones: the same values."""
    rows = make_rows(family, 43)
    base = run(family, *ragged(family, rows))
    assert_same(run(family, *ragged(family, rows, score_dtype=np.float32)), base, **TOL)
    assert_same(run(family, *padded(family, rows, "lengths", score_dtype=np.float32, extra=1)), base, **TOL)


# ------------------------------------------------------------------------------------------
# 4. means


@families()
def test_mean_is_mean_of_per_query_values(family):
    rows = make_rows(family, 51)
    labels, scores, kw = ragged(family, rows)
    names = measures(family)
    per_query = run(family, labels, scores, kw, names=names)
    means = run(family, labels, scores, kw, names=names, per_query=False)
    for name in names:
        assert not np.isnan(per_query[name]).any(), name  # empty='zero' by default: every query has a value
        assert isinstance(means[name], float)
        np.testing.assert_allclose(means[name], np.mean(per_query[name]), **TOL, err_msg=name)


@families()
def test_mean_with_empty_nan(family):
    """``empty='nan'`` (every input family takes it): the query without a relevant document is NaN, and so is the
    mean (``evaluate``: plain means over all queries; ``np.nanmean`` of the per-query values drops them)."""
    rows = make_rows(family, 52)  # row 2 has no relevant document
    labels, scores, kw = ragged(family, rows)
    names = [f"{family.name}(empty='nan')@5", f"{family.name}(empty='nan')"]
    per_query = run(family, labels, scores, kw, names=names)
    means = run(family, labels, scores, kw, names=names, per_query=False)
    zero = run(family, labels, scores, kw)
    for name, plain in zip(names, measures(family)):
        values = per_query[name]
        assert np.isnan(values[2]), name
        defined = ~np.isnan(values)
        np.testing.assert_array_equal(values[defined], zero[plain][defined], err_msg=name)
        np.testing.assert_array_equal(zero[plain][~defined], 0.0, err_msg=name)
        assert np.isnan(means[name]), name
        np.testing.assert_allclose(np.nanmean(values), np.mean(values[defined]), **TOL)


# ------------------------------------------------------------------------------------------
# 5. ties


@families()
@pytest.mark.parametrize("ties", TIES)
def test_every_tie_rule(family, ties):
    rows = make_rows(family, 61)  # tied scores (row 3: all equal)
    labels, scores, kw = ragged(family, rows)
    if ties not in accepted_ties(family):
        # (RPP's message spells the family "RPP", the lexicographic ones their function's name: case aside, the same)
        msg = AVERAGE_REFUSED[family.module].format(function=family.function)
        with pytest.raises(ValueError, match="(?i)" + re.escape(msg)) as info:
            run(family, labels, scores, kw, ties=ties)
        assert "'pessimistic', 'optimistic' or 'stable'" in str(info.value)
        return
    out = run(family, labels, scores, kw, ties=ties)
    for name, values in out.items():
        assert values.shape == (N_Q,) and values.dtype == np.float64, name
        assert not np.isnan(values).any(), name
    # the same rule in a padded batch
    assert_same(run(family, *padded(family, rows, "mask", extra=1), ties=ties), out)


@families()
def test_tie_rules_agree_without_ties(family):
    rows = make_rows(family, 62, distinct=True)
    labels, scores, kw = ragged(family, rows)
    assert all(len(np.unique(r["scores"])) == len(r["scores"]) for r in rows)
    assert all(len(np.unique(r["scores_b"])) == len(r["scores_b"]) for r in rows)
    rules = accepted_ties(family)
    base = run(family, labels, scores, kw, ties=rules[0])
    for ties in rules[1:]:
        assert_same(run(family, labels, scores, kw, ties=ties), base)
    # not vacuous: on tied scores the same rules do give different values
    tied_labels, tied_scores, tied_kw = ragged(family, make_rows(family, 61))
    outs = [run(family, tied_labels, tied_scores, tied_kw, ties=t) for t in rules]
    assert any((o[name] != outs[0][name]).any() for o in outs[1:] for name in o)



# ------------------------------------------------------------------------------------------
# 6. bad input


def _case(family, seed=71):
    rows = make_rows(family, seed, n_q=4, full=True)
    return padded(family, rows, "dense", garbage=False)


@families()
def test_nan_score_refused(family):
    labels, scores, kw = _case(family)
    scores[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN score in query 1 at position 2"):
        run(family, labels, scores, kw)


@families()
def test_nan_score_b_refused(family):
    if is_diversity(family):
        pytest.skip("a diversity family takes no scores_b=")
    labels, scores, kw = _case(family)
    kw["scores_b"][2, 3] = np.nan
    with pytest.raises(ValueError, match=r"NaN score in query 2 at position 3 \(scores_b\)"):
        run(family, labels, scores, kw)


@families()
def test_negative_label_refused(family):
    """Refused for every family: ``evaluate`` validates labels before any measure (the diversity families then read
    the nuggets, not the labels)."""
    labels, scores, kw = _case(family)
    labels[3, 1] = -2
    with pytest.raises(ValueError, match=r"negative label -2 in query 3 at position 1; labels must be >= 0"):
        run(family, labels, scores, kw)


@families()
def test_negative_nugget_refused(family):
    if not is_diversity(family):
        pytest.skip("a preference family reads no nuggets=")
    labels, scores, kw = _case(family)
    kw["nuggets"][1, 4, 2] = -1
    with pytest.raises(ValueError, match=r"invalid nugget judgment -1 in query 1, document 4; judgments must be >= 0"):
        run(family, labels, scores, kw)


@families()
def test_wrong_input_shape_refused(family):
    labels, scores, kw = _case(family)
    if is_diversity(family):
        nug = kw["nuggets"]
        with pytest.raises(ValueError, match=r"nuggets must be 3-D \(n_queries, n_docs, n_subtopics\), got shape"):
            run(family, labels, scores, {"nuggets": nug[:, :, 0]})
        with pytest.raises(ValueError, match=r"nuggets of shape \(4, 7, 4\) need scores of shape \(4, 7\)"):
            run(family, labels, scores, {"nuggets": nug[:, :-1]})
        flat_labels, flat_scores, flat = ragged(family, make_rows(family, 72, n_q=3))
        with pytest.raises(ValueError, match=r"with offsets=, nuggets must be 2-D \(n_docs_total, n_subtopics\)"):
            run(family, flat_labels, flat_scores, {**flat, "nuggets": flat["nuggets"][None]})
        with pytest.raises(ValueError, match=r"nuggets has \d+ document rows but scores has shape"):
            run(family, flat_labels, flat_scores, {**flat, "nuggets": flat["nuggets"][:-1]})
    else:
        sb = kw["scores_b"]
        with pytest.raises(ValueError, match=r"scores_b has shape \(4, 7\), expected \(4, 8\)"):
            run(family, labels, scores, {"scores_b": sb[:, :-1]})
        with pytest.raises(ValueError, match=r"scores_b has shape \(32,\), expected \(4, 8\)"):
            run(family, labels, scores, {"scores_b": sb.ravel()})
        flat_labels, flat_scores, flat = ragged(family, make_rows(family, 72, n_q=3))
        n = flat_scores.shape[0]
        with pytest.raises(ValueError, match=rf"scores_b has shape \({n - 1},\), expected \({n},\)"):
            run(family, flat_labels, flat_scores, {**flat, "scores_b": flat["scores_b"][:-1]})


@families()
def test_missing_input_refused(family):
    labels, scores, _ = _case(family)
    name = measures(family)[0]
    if is_diversity(family):
        msg = rf"{name} needs nugget judgments: pass nuggets="
    else:
        msg = rf"{name} compares two systems: pass the second system's scores as scores_b="
    with pytest.raises(ValueError, match=msg):
        run(family, labels, scores, {}, names=[name])
