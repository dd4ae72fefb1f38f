"""Property tests: every public metric and evaluate() against the plain-Python reference.

Random batches (hypothesis) cover: ties (scores from a small pool, or distinct scores with
a few tie groups), padding by ``lengths=`` and by ``mask=`` with garbage (NaN scores,
negative or huge labels) in the padded cells, ragged ``offsets=`` with empty rows, rows
without relevant documents, long rows (> 48 documents: the sorting paths) and cutoffs
beyond the row, float32 scores, int8 / uint8 / int64 / float labels, non-contiguous and
Fortran-ordered arrays, every ``empty=`` value, ``n_relevant=`` and ``ideal_counts=``.

Expected values always come from :mod:`reference` applied to the rows as generated (the
real documents in input order), never from rankjit itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankjit
import reference as ref

TOL = dict(rtol=1e-12, atol=1e-12, equal_nan=True)

SCORE_POOL = [-math.inf, -1.5, -0.0, 0.0, 0.5, 2.0, 3.25, math.inf]
GRADE_WEIGHTS = np.array([0.55, 0.2, 0.12, 0.08, 0.05])  # grades 0..4, mostly 0
PROB_POOL = np.array([0.0, 0.0, 0.1, 0.25, 0.5, 0.75, 1.0])

LABEL_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.float32, np.float64]


@dataclass
class Batch:
    labels: np.ndarray
    scores: np.ndarray
    layout: dict
    rows: list  # [(labels list, scores list)] real documents in input order, as the API sees them
    max_grade: int
    kind: str
    notes: dict = field(default_factory=dict)

    @property
    def n_q(self):
        return len(self.rows)

    def kwargs(self):
        return dict(self.layout)

    def row_histograms(self, n_grades):
        h = np.zeros((self.n_q, n_grades), dtype=np.int64)
        for q, (ys, _) in enumerate(self.rows):
            for y in ys:
                h[q, int(y)] += 1
        return h

    def relevant_counts(self, rel):
        return np.array([sum(1 for y in ys if y >= rel) for ys, _ in self.rows], dtype=np.int64)


def _row_scores(rng, n, mode):
    if mode == "pool":
        return rng.choice(np.array(SCORE_POOL), size=n)
    # distinct scores, then at most two tie groups of at most 4 documents
    s = rng.normal(size=n) * 10
    for _ in range(rng.integers(0, 3)):
        if n >= 2:
            size = int(rng.integers(2, min(4, n) + 1))
            idx = rng.choice(n, size=size, replace=False)
            s[idx] = s[idx[0]]
    if n and rng.random() < 0.2:
        s[rng.integers(n)] = rng.choice([math.inf, -math.inf])
    return s


@st.composite
def batches(draw, kind="grades", allow_long=True):
    """A random batch.  kind: "grades" (integer labels 0..4) or "probabilities" (floats in [0, 1]).

    Tie groups stay small enough for the brute-force "average" reference: at most 7 documents per
    row with pool scores, otherwise distinct scores with at most two tie groups of at most 4.
    """
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    layout = draw(st.sampled_from(["full", "lengths", "mask", "offsets"]))
    n_q = draw(st.integers(1, 6))
    long_rows = allow_long and draw(st.booleans()) and draw(st.booleans())  # ~1/4 of the batches
    score_mode = "distinct" if long_rows else draw(st.sampled_from(["pool", "distinct"]))
    score_dtype = draw(st.sampled_from([np.float64, np.float32]))
    if kind == "grades":
        label_dtype = draw(st.sampled_from(LABEL_DTYPES))
        max_grade = draw(st.integers(1, 4))
    else:
        label_dtype = draw(st.sampled_from([np.float32, np.float64]))
        max_grade = 1
    contiguity = draw(st.sampled_from(["C", "C", "strided", "F"]))

    max_len = 70 if long_rows else (7 if score_mode == "pool" else 9)
    if layout == "full":
        width = int(rng.integers(0 if not long_rows else 49, max_len + 1))
        lens = [width] * n_q
    else:
        lens = [int(rng.integers(0 if not long_rows else 40, max_len + 1)) if rng.random() > 0.15 else 0
                for _ in range(n_q)]
    rows = []
    for n in lens:
        if kind == "grades":
            w = GRADE_WEIGHTS[: max_grade + 1] / GRADE_WEIGHTS[: max_grade + 1].sum()
            ys = rng.choice(max_grade + 1, size=n, p=w)
            if rng.random() < 0.2:
                ys[:] = 0  # a row without relevant documents
        else:
            ys = rng.choice(PROB_POOL, size=n)
        ss = _row_scores(rng, n, score_mode)
        ys = np.asarray(ys).astype(label_dtype)
        ss = np.asarray(ss).astype(score_dtype)
        rows.append((ys, ss))

    garbage_label = {"i": -3, "u": 250, "f": np.nan}[np.dtype(label_dtype).kind]
    if np.dtype(label_dtype).kind == "f" and rng.random() < 0.5:
        garbage_label = -1.5

    if layout == "offsets":
        total = sum(lens)
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(draw(st.sampled_from([np.int64, np.int32])))
        flat_y = np.concatenate([r[0] for r in rows]) if total else np.zeros(0, label_dtype)
        flat_s = np.concatenate([r[1] for r in rows]) if total else np.zeros(0, score_dtype)
        flat_y = flat_y.astype(label_dtype)
        flat_s = flat_s.astype(score_dtype)
        if contiguity == "strided":
            big_y = np.full(2 * total, garbage_label if kind == "grades" else 7, dtype=label_dtype)
            big_s = np.full(2 * total, np.nan, dtype=score_dtype)
            big_y[::2] = flat_y
            big_s[::2] = flat_s
            flat_y, flat_s = big_y[::2], big_s[::2]
        layout_kw = {"offsets": offsets}
        labels, scores = flat_y, flat_s
    else:
        width = max(lens) + (0 if layout == "full" else int(rng.integers(0, 3)))
        labels = np.full((n_q, width), garbage_label, dtype=label_dtype)
        scores = np.full((n_q, width), np.nan, dtype=score_dtype)
        mask = np.zeros((n_q, width), dtype=bool)
        for q, (ys, ss) in enumerate(rows):
            n = len(ys)
            if layout == "mask":
                pos = np.sort(rng.choice(width, size=n, replace=False)) if n else np.zeros(0, np.int64)
            else:
                pos = np.arange(n)
            labels[q, pos] = ys
            scores[q, pos] = ss
            mask[q, pos] = True
        if layout == "full":
            layout_kw = {}
        elif layout == "lengths":
            layout_kw = {"lengths": np.array(lens, dtype=draw(st.sampled_from([np.int64, np.int32, np.uint16])))}
        else:
            layout_kw = {"mask": mask}
        if contiguity == "strided":
            big_y = np.full((n_q, 2 * width), garbage_label, dtype=label_dtype)
            big_s = np.full((n_q, 2 * width), np.nan, dtype=score_dtype)
            big_y[:, ::2] = labels
            big_s[:, ::2] = scores
            labels, scores = big_y[:, ::2], big_s[:, ::2]
            if layout == "full":
                # in a full layout every cell is real: the garbage must only be in the skipped columns
                assert not np.isnan(scores).any()
        elif contiguity == "F":
            labels, scores = np.asfortranarray(labels), np.asfortranarray(scores)
            if "mask" in layout_kw:
                layout_kw["mask"] = np.asfortranarray(layout_kw["mask"])

    ref_rows = [(ys.tolist(), ss.tolist()) for ys, ss in rows]
    return Batch(labels, scores, layout_kw, ref_rows, max_grade, kind, {"seed": seed})


def _expected(b: Batch, family, k, ties, per_row=None, **params):
    out = []
    for q, (ys, ss) in enumerate(b.rows):
        extra = per_row(q) if per_row else {}
        out.append(ref.measure(family, ys, ss, k, ties, **params, **extra))
    return np.array(out, dtype=np.float64)


ks = st.one_of(st.none(), st.integers(1, 12), st.sampled_from([33, 40, 75]))
ties_all = st.sampled_from(["pessimistic", "optimistic", "stable", "average"])
ties_det = st.sampled_from(["pessimistic", "optimistic", "stable"])
rels = st.sampled_from([1, 1, 1, 2, 3, 0.5, 0])
empties = st.sampled_from(["zero", "one", "nan"])


def _maybe_average_batch(data, ties, kind="grades"):
    return data.draw(batches(kind=kind))


# ------------------------------------------------------------------------------------------
# binary measures


@given(data=st.data(), ties=ties_all, k=ks, rel=rels)
def test_precision_hit_rate_rr(data, ties, k, rel):
    b = _maybe_average_batch(data, ties)
    kw = b.kwargs()
    np.testing.assert_allclose(rankjit.precision(b.labels, b.scores, k, rel=rel, ties=ties, **kw),
                               _expected(b, "P", k, ties, rel=rel), **TOL)
    np.testing.assert_allclose(rankjit.hit_rate(b.labels, b.scores, k, rel=rel, ties=ties, **kw),
                               _expected(b, "Success", k, ties, rel=rel), **TOL)
    np.testing.assert_allclose(rankjit.rr(b.labels, b.scores, k, rel=rel, ties=ties, **kw),
                               _expected(b, "RR", k, ties, rel=rel), **TOL)


@given(data=st.data(), ties=ties_all, k=ks, rel=rels, empty=empties, extra_rel=st.booleans(),
       denominator=st.sampled_from(["min_k_r", "r"]))
def test_recall_ap_rprec(data, ties, k, rel, empty, extra_rel, denominator):
    b = _maybe_average_batch(data, ties)
    kw = b.kwargs()
    nrel = None
    per_row = None
    if extra_rel:
        # judged relevant documents missing from the ranking: R = row's count + 0..3
        rng = np.random.default_rng(b.notes["seed"] + 1)
        nrel = b.relevant_counts(rel) + rng.integers(0, 4, size=b.n_q)
        per_row = lambda q: {"n_relevant": int(nrel[q])}  # noqa: E731
    np.testing.assert_allclose(
        rankjit.recall(b.labels, b.scores, k, rel=rel, empty=empty, n_relevant=nrel, ties=ties, **kw),
        _expected(b, "R", k, ties, per_row, rel=rel, empty=empty), **TOL)
    np.testing.assert_allclose(
        rankjit.ap(b.labels, b.scores, k, rel=rel, empty=empty, denominator=denominator, n_relevant=nrel, ties=ties,
                   **kw),
        _expected(b, "AP", k, ties, per_row, rel=rel, empty=empty, denominator=denominator), **TOL)
    np.testing.assert_allclose(
        rankjit.rprec(b.labels, b.scores, rel=rel, empty=empty, n_relevant=nrel, ties=ties, **kw),
        _expected(b, "Rprec", None, ties, per_row, rel=rel, empty=empty), **TOL)


# ------------------------------------------------------------------------------------------
# graded measures


@st.composite
def gains(draw, max_grade):
    kind = draw(st.sampled_from(["exp2", "linear", "array"]))
    if kind != "array":
        return kind
    n = max_grade + 1 + draw(st.integers(0, 2))
    g = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.0, 10.0]), min_size=n, max_size=n))
    if draw(st.booleans()):
        g[0] = 0.0
    return g


discounts = st.one_of(
    st.sampled_from(["log2", "zipf", "logb"]),
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0]), min_size=1, max_size=12),
)
bases = st.sampled_from([2.0, 3.0, 1.5, 10.0])


@given(data=st.data(), ties=ties_all, k=ks, discount=discounts, base=bases, empty=empties,
       use_ideal=st.booleans())
def test_dcg_ndcg(data, ties, k, discount, base, empty, use_ideal):
    b = _maybe_average_batch(data, ties)
    gain = data.draw(gains(b.max_grade))
    kw = b.kwargs()
    params = dict(gain=gain, discount=discount, base=base)
    np.testing.assert_allclose(rankjit.dcg(b.labels, b.scores, k, ties=ties, **params, **kw),
                               _expected(b, "DCG", k, ties, **params), **TOL)
    ideal = None
    per_row = None
    if use_ideal:
        # judged documents: the row's own histogram plus some judged documents not in the row
        n_grades = len(gain) if isinstance(gain, list) else b.max_grade + 1
        rng = np.random.default_rng(b.notes["seed"] + 2)
        ideal = b.row_histograms(n_grades) + rng.integers(0, 3, size=(b.n_q, n_grades))
        per_row = lambda q: {"ideal_counts": ideal[q].tolist()}  # noqa: E731
    np.testing.assert_allclose(
        rankjit.ndcg(b.labels, b.scores, k, ties=ties, empty=empty, ideal_counts=ideal, **params, **kw),
        _expected(b, "nDCG", k, ties, per_row, empty=empty, **params), **TOL)


@given(data=st.data(), ties=ties_det, k=ks, utility=st.sampled_from(["reciprocal", "log2"]),
       probabilities=st.booleans(), extra_grade=st.integers(0, 2))
def test_err(data, ties, k, utility, probabilities, extra_grade):
    b = data.draw(batches(kind="probabilities" if probabilities else "grades"))
    kw = b.kwargs()
    if probabilities:
        params = dict(probabilities=True, utility=utility)
    else:
        params = dict(max_grade=b.max_grade + extra_grade, utility=utility)
    np.testing.assert_allclose(rankjit.err(b.labels, b.scores, k, ties=ties, **params, **kw),
                               _expected(b, "ERR", k, ties, **params), **TOL)


@given(data=st.data(), ties=ties_det, k=ks, mode=st.sampled_from(["grades", "probabilities", "prel"]),
       p_break=st.sampled_from([0.15, 0.15, 0.0, 0.5, 1.0]), extra_grade=st.integers(0, 2))
def test_pfound(data, ties, k, mode, p_break, extra_grade):
    b = data.draw(batches(kind="probabilities" if mode == "probabilities" else "grades"))
    kw = b.kwargs()
    if mode == "probabilities":
        params = dict(probabilities=True)
    elif mode == "prel":
        prel = data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.4, 0.9, 1.0]), min_size=b.max_grade + 1 + extra_grade,
                                  max_size=b.max_grade + 1 + extra_grade))
        params = dict(prel=prel)
    else:
        params = dict(max_grade=b.max_grade + extra_grade)
    np.testing.assert_allclose(rankjit.pfound(b.labels, b.scores, k, p_break=p_break, ties=ties, **params, **kw),
                               _expected(b, "pFound", k, ties, p_break=p_break, **params), **TOL)


# ------------------------------------------------------------------------------------------
# evaluate(): several measures in one pass


def _fmt(v):
    return repr(v)


@st.composite
def measure_specs(draw, max_grade, allow_cascade):
    """(name, family, k, params) tuples whose names follow the ir_measures grammar."""
    fams = ["P", "R", "Success", "RR", "AP", "Rprec", "DCG", "nDCG"] + (["ERR", "pFound"] if allow_cascade else [])
    out = []
    for _ in range(draw(st.integers(1, 6))):
        fam = draw(st.sampled_from(fams))
        k = None if fam == "Rprec" else draw(ks)
        params = {}
        if fam in ("P", "R", "Success", "RR", "AP", "Rprec") and draw(st.booleans()):
            params["rel"] = draw(st.sampled_from([1, 2, 0.5]))
        if fam in ("R", "AP", "Rprec", "nDCG") and draw(st.booleans()):
            params["empty"] = draw(empties)
        if fam == "AP" and draw(st.booleans()):
            params["denominator"] = draw(st.sampled_from(["min_k_r", "r"]))
        if fam in ("DCG", "nDCG"):
            if draw(st.booleans()):
                params["gain"] = draw(gains(max_grade))
            if draw(st.booleans()):
                params["discount"] = draw(st.sampled_from(["log2", "zipf", "logb"]))
                if params["discount"] == "logb":
                    params["base"] = draw(bases)
        if fam == "ERR":
            if draw(st.booleans()):
                params["max_grade"] = max_grade + draw(st.integers(0, 2))
            if draw(st.booleans()):
                params["utility"] = draw(st.sampled_from(["reciprocal", "log2"]))
        if fam == "pFound":
            if draw(st.booleans()):
                params["max_grade"] = max_grade + draw(st.integers(0, 2))
            if draw(st.booleans()):
                params["p_break"] = draw(st.sampled_from([0.15, 0.3]))
        name_fam = draw(st.sampled_from([fam, fam.lower(), fam.upper()]))
        args = ", ".join(f"{p}={_fmt(v)}" for p, v in params.items())
        name = name_fam + (f"({args})" if args else "") + ("" if k is None else f"@{k}")
        out.append((name, fam, k, params))
    # distinct names (evaluate returns a dict keyed by name)
    seen = {}
    for spec in out:
        seen.setdefault(spec[0], spec)
    return list(seen.values())


@given(data=st.data(), ties=ties_all, rel=st.sampled_from([None, 1, 2]), empty=empties,
       side=st.sampled_from(["none", "n_relevant", "ideal_counts", "both"]))
def test_evaluate_many_measures(data, ties, rel, empty, side):
    b = _maybe_average_batch(data, ties)
    specs = data.draw(measure_specs(b.max_grade, allow_cascade=ties != "average"))
    # gain arrays in the names bound the grades of ideal_counts
    n_grades = b.max_grade + 1
    call = dict(b.kwargs(), ties=ties, empty=empty, per_query=True)
    if rel is not None:
        call["rel"] = rel
    rng = np.random.default_rng(b.notes["seed"] + 3)
    call_rel = 1 if rel is None else rel
    nrel = ideal = None
    if side in ("n_relevant", "both"):
        # one R per query serves every binary measure: count at the loosest threshold in use,
        # so that it covers the row for each of them (rankjit rejects an R below the row's count)
        loosest = min([call_rel] + [s[3]["rel"] for s in specs if "rel" in s[3]])
        nrel = b.relevant_counts(loosest) + rng.integers(0, 3, size=b.n_q)
        call["n_relevant"] = nrel
    if side in ("ideal_counts", "both"):
        ideal = b.row_histograms(n_grades) + rng.integers(0, 3, size=(b.n_q, n_grades))
        call["ideal_counts"] = ideal
    res = rankjit.evaluate(b.labels, b.scores, [s[0] for s in specs], **call)
    assert list(res) == [s[0] for s in specs]
    for name, fam, k, params in specs:
        p = dict(params)
        if fam in ("P", "R", "Success", "RR", "AP", "Rprec"):
            p.setdefault("rel", call_rel)
        if fam in ("R", "AP", "Rprec", "nDCG"):
            p.setdefault("empty", empty)

        def per_row(q, fam=fam):
            extra = {}
            if fam in ("R", "AP", "Rprec"):
                if nrel is not None:
                    extra["n_relevant"] = int(nrel[q])
                elif ideal is not None:
                    extra["ideal_counts"] = ideal[q].tolist()  # R counted from the judged histogram
            if fam == "nDCG" and ideal is not None:
                extra["ideal_counts"] = ideal[q].tolist()
            return extra

        expected = _expected(b, fam, k, ties, per_row, **p)
        got = res[name]
        assert got.dtype == np.float64 and got.shape == (b.n_q,)
        np.testing.assert_allclose(got, expected, err_msg=name, **TOL)
    means = rankjit.evaluate(b.labels, b.scores, [s[0] for s in specs], **{**call, "per_query": False})
    for name in means:
        np.testing.assert_allclose(means[name], np.mean(res[name]), rtol=1e-12, atol=1e-12, equal_nan=True)


# ------------------------------------------------------------------------------------------
# layouts agree with one another


@given(data=st.data(), ties=ties_all, k=ks)
def test_layouts_agree(data, ties, k):
    """The same rows as a ragged batch, padded by lengths and padded by mask give identical values."""
    b = data.draw(batches(allow_long=False))
    lens = [len(ys) for ys, _ in b.rows]
    width = max(lens) + 1
    lab = np.full((b.n_q, width), -1, dtype=np.int64)
    sco = np.full((b.n_q, width), np.nan)
    for q, (ys, ss) in enumerate(b.rows):
        lab[q, : len(ys)] = ys
        sco[q, : len(ss)] = ss
    flat_y = np.array([y for ys, _ in b.rows for y in ys], dtype=np.int64)
    flat_s = np.array([s for _, ss in b.rows for s in ss], dtype=np.float64)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    names = ["nDCG@5", "AP", "P@3", "RR", "R@4", "DCG"] if k is None else [f"nDCG@{k}", f"AP@{k}", f"P@{k}"]
    a = rankjit.evaluate(lab, sco, names, lengths=np.array(lens), ties=ties, per_query=True)
    m = rankjit.evaluate(lab, sco, names, mask=np.arange(width)[None, :] < np.array(lens)[:, None], ties=ties,
                         per_query=True)
    o = rankjit.evaluate(flat_y, flat_s, names, offsets=offsets, ties=ties, per_query=True)
    for name in names:
        np.testing.assert_array_equal(a[name], m[name])
        np.testing.assert_array_equal(a[name], o[name])


# ------------------------------------------------------------------------------------------
# offsets_from_qids


@given(qids=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=15), use_int=st.booleans())
def test_offsets_from_qids(qids, use_int):
    q = np.array([ord(c) for c in qids]) if use_int else np.array(qids)
    offsets, order, unique = rankjit.offsets_from_qids(q)
    grouped = q if order is None else q[order]
    assert offsets[0] == 0 and offsets[-1] == len(q)
    assert len(unique) == len(offsets) - 1 == len(set(qids))
    for i in range(len(unique)):
        seg = grouped[offsets[i]: offsets[i + 1]]
        assert len(seg) > 0 and (seg == unique[i]).all()
    if order is not None:
        assert sorted(order.tolist()) == list(range(len(q)))
        # stable: within a query, documents keep their input order
        for i in range(len(unique)):
            seg = order[offsets[i]: offsets[i + 1]]
            assert (np.diff(seg) > 0).all()
    else:
        # contiguous runs: offsets describe the rows as given
        runs = [qids[0]] + [b for a, b in zip(qids, qids[1:]) if a != b]
        assert len(runs) == len(set(runs))


def test_reference_average_equals_mean_over_all_permutations():
    """Sanity check of the reference's brute force: weights sum to the number of orders."""
    labels = [2, 0, 1, 0, 1]
    scores = [1.0, 1.0, 3.0, 1.0, 3.0]
    total = sum(w for _, w in ref.average_rankings(labels, scores))
    assert total == math.factorial(3) * math.factorial(2)
    # a fully untied row: "average" equals every deterministic rule
    s = [5.0, 4.0, 3.0, 2.0, 1.0]
    for fam in ("AP", "nDCG", "RR"):
        assert ref.measure(fam, labels, s, None, "average") == pytest.approx(ref.measure(fam, labels, s, None, "stable"))


# ------------------------------------------------------------------------------------------
# seeded stress: dense long rows (every ranking path), fractional and very large grades


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
def test_dense_long_rows(seed, ties):
    """Rows of up to 150 documents with many graded ones: full sorts, heaps and top-k buffers."""
    rng = np.random.default_rng(seed)
    n_q, width = 12, 150
    labels = rng.integers(0, 5, size=(n_q, width))
    labels[0] = 0
    scores = rng.integers(0, 40, size=(n_q, width)).astype(np.float64)  # many ties
    lengths = rng.integers(0, width + 1, size=n_q)
    lengths[1] = width
    names, specs = [], []
    for k in (None, 1, 5, 12, 13, 31, 32, 33, 48, 49, 100, 200):
        at = "" if k is None else f"@{k}"
        for fam, params, text in (("P", {}, "P"), ("AP", {}, "AP"), ("nDCG", {}, "nDCG"), ("RR", {}, "RR"),
                                  ("ERR", {}, "ERR"), ("pFound", {}, "pFound"), ("R", {"rel": 3}, "R(rel=3)"),
                                  ("P", {"rel": 0}, "P(rel=0)"),
                                  ("DCG", {"gain": [1.0, 2.0, 3.0, 4.0, 5.0]}, "DCG(gain=[1.0, 2.0, 3.0, 4.0, 5.0])")):
            names.append(text + at)
            specs.append((fam, k, params))
    names.append("Rprec")
    specs.append(("Rprec", None, {}))
    res = rankjit.evaluate(labels, scores, names, lengths=lengths, ties=ties, per_query=True)
    for name, (fam, k, params) in zip(names, specs):
        exp = ref.measure_batch(fam, labels, scores, k, ties, lengths=lengths, **params)
        np.testing.assert_allclose(res[name], exp, err_msg=name, **TOL)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable", "average"])
def test_fractional_labels(seed, ties):
    """Non-integer float labels: gains 2^y - 1 and y computed directly; binary measures by threshold."""
    rng = np.random.default_rng(10 + seed)
    n_q, width = 8, 7 if ties == "average" else 60
    labels = rng.choice([0.0, 0.0, 0.3, 0.5, 1.0, 1.5, 2.7], size=(n_q, width))
    scores = rng.integers(0, 5 if ties == "average" else 30, size=(n_q, width)).astype(np.float64)
    lengths = rng.integers(0, width + 1, size=n_q)
    for k in (None, 3, 40):
        for fam, params in (("DCG", {}), ("nDCG", {"gain": "linear"}), ("nDCG", {}), ("AP", {"rel": 0.5}),
                            ("P", {"rel": 1.5}), ("RR", {"rel": 0.3})):
            fn = {"DCG": rankjit.dcg, "nDCG": rankjit.ndcg, "AP": rankjit.ap, "P": rankjit.precision,
                  "RR": rankjit.rr}[fam]
            got = fn(labels, scores, k, lengths=lengths, ties=ties, **params)
            exp = ref.measure_batch(fam, labels, scores, k, ties, lengths=lengths, **params)
            np.testing.assert_allclose(got, exp, err_msg=f"{fam} {params} k={k}", **TOL)


@pytest.mark.parametrize("ties", ["pessimistic", "stable", "average"])
def test_very_large_grades(ties):
    """Grades above 62 (2^y no longer fits a small table): exp2 gains still exact to rounding."""
    rng = np.random.default_rng(3)
    labels = rng.choice([0, 1, 30, 63, 70, 100], size=(6, 6))
    scores = rng.integers(0, 4, size=(6, 6)).astype(np.float64)
    for k in (None, 2):
        for fam in ("DCG", "nDCG"):
            fn = rankjit.dcg if fam == "DCG" else rankjit.ndcg
            np.testing.assert_allclose(fn(labels, scores, k, ties=ties),
                                       ref.measure_batch(fam, labels, scores, k, ties), rtol=1e-12)


def test_measure_name_aliases_and_case():
    rng = np.random.default_rng(8)
    labels = rng.integers(0, 4, size=(20, 15))
    scores = rng.normal(size=(20, 15))
    pairs = [("MAP@10", "AP@10"), ("map", "AP"), ("mrr", "RR"), ("recip_rank", "RR"), ("precision@5", "P@5"),
             ("recall@5", "R@5"), ("hit_rate@3", "Success@3"), ("HITS@3", "Success@3"), ("ndcg@10", "nDCG@10"),
             ("NDCG(GAIN='linear')@10", None), ("r-prec", "Rprec"), ("Err@5", "ERR@5"), ("PFOUND", "pFound"),
             (" nDCG @ 10 ", "nDCG@10")]
    res = rankjit.evaluate(labels, scores, [a for a, _ in pairs if a != "NDCG(GAIN='linear')@10"] +
                           [b for _, b in pairs if b], per_query=True)
    for a, b in pairs:
        if b is None:
            continue
        np.testing.assert_array_equal(res[a], res[b], err_msg=a)
    fam_of = {"AP@10": ("AP", 10), "RR": ("RR", None), "P@5": ("P", 5), "Success@3": ("Success", 3),
              "nDCG@10": ("nDCG", 10)}
    for name, (fam, k) in fam_of.items():
        np.testing.assert_allclose(res[name], ref.measure_batch(fam, labels, scores, k), **TOL)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable", "average"])
def test_bool_labels_equal_int_labels(ties):
    rng = np.random.default_rng(4)
    labels = rng.random(size=(30, 6)) < 0.3
    scores = rng.integers(0, 3, size=(30, 6)).astype(np.float32)
    names = ["P@3", "AP", "RR", "nDCG@5", "R@2", "Rprec"]
    a = rankjit.evaluate(labels, scores, names, ties=ties, per_query=True)
    b = rankjit.evaluate(labels.astype(np.int64), scores, names, ties=ties, per_query=True)
    for name in names:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    np.testing.assert_allclose(a["AP"], ref.measure_batch("AP", labels.astype(int), scores, None, ties), **TOL)
