"""Compat and Accuracy beyond the common checks of test_families.py.

The common checks run them on rows without ``ideal_counts``; here Compat's ideal ranking
with judged documents outside the row (``ideal_counts=``: the unretrieved relevant
documents, which ir_measures scores 0.0, sit between the retrieved documents scoring >= 0
and those scoring < 0), padding around such rows, the engine paths, the errors, and which
engine variants the two compile.  Expected values come from ``tests/reference/lists.py``
(plain Python from the definitions).  ir_measures' own numbers: test_ir_measures_names.py.
"""
from __future__ import annotations

import numpy as np
import pytest
import reference as ref  # tests/ is on sys.path (conftest.py)

import rankjit
from rankjit import _measures
from rankjit._kernels import engine as _engine
from rankjit._validation import as_batch, engine_batch, scan

TOL = {"rtol": 1e-12, "atol": 1e-12, "equal_nan": True}
COMPAT = ("Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=0.5, normalize=False)", "Compat(p=0.0)",
          "Compat(p=1.0)")


def _signed_rows(seed, n_q=30, max_len=9, max_grade=3, distinct=True):
    """Random rows with scores of both signs (none 0 when ``distinct``), and ideal_counts covering each row
    plus judged documents outside it (grades 0..max_grade)."""
    rng = np.random.default_rng(seed)
    rows, counts = [], []
    for q in range(n_q):
        n = int(rng.integers(0, max_len + 1))
        ys = [int(y) for y in rng.choice(max_grade + 1, size=n, p=[0.4, 0.3, 0.2, 0.1][: max_grade + 1])]
        if distinct:
            ss = [float(s) for s in (rng.permutation(8 * max_len)[:n] - 4 * max_len + 0.5) / 4.0]
        else:
            ss = [float(s) for s in rng.integers(-2, 3, size=n) / 2.0]  # ties, and scores of 0
        outside = rng.integers(0, 3, size=max_grade + 1) if q % 5 else np.zeros(max_grade + 1, dtype=np.int64)
        counts.append([ys.count(g) + int(outside[g]) for g in range(max_grade + 1)])
        rows.append((ys, ss))
    return rows, np.array(counts, dtype=np.int64)


def _flat(rows):
    lens = [len(ys) for ys, _ in rows]
    labels = np.array([y for ys, _ in rows for y in ys], dtype=np.int64)
    scores = np.array([s for _, ss in rows for s in ss], dtype=np.float64)
    return labels, scores, np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


def _reference(name, rows, ties, ideal_counts=None):
    m = _measures.parse(name)
    out = []
    for q, (ys, ss) in enumerate(rows):
        extra = {} if ideal_counts is None else {"ideal_counts": [int(c) for c in ideal_counts[q]]}
        out.append(ref.measure(m.family, ys, ss, m.k, ties, **m.params, **extra))
    return np.array(out)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
@pytest.mark.parametrize("distinct", [True, False])
def test_compat_with_ideal_counts_against_the_reference(ties, distinct):
    # unretrieved relevant documents: after the scores >= 0 and before the negative ones of their grade
    for seed in (1, 2, 3):
        rows, counts = _signed_rows(seed, distinct=distinct)
        labels, scores, offsets = _flat(rows)
        got = rankjit.evaluate(labels, scores, list(COMPAT), offsets=offsets, ideal_counts=counts, ties=ties,
                               per_query=True)
        for name in COMPAT:
            np.testing.assert_allclose(got[name], _reference(name, rows, ties, counts), err_msg=name, **TOL)


def test_the_signs_of_the_scores_matter_only_with_ideal_counts():
    # the same rows with every score shifted above 0: without ideal_counts nothing changes (nothing is
    # unretrieved); with it the unretrieved documents move behind the formerly negative ones
    rows, counts = _signed_rows(4)
    labels, scores, offsets = _flat(rows)
    shifted = scores + 100.0  # the same order
    alone = rankjit.evaluate(labels, scores, ["Compat"], offsets=offsets, per_query=True)["Compat"]
    np.testing.assert_array_equal(
        rankjit.evaluate(labels, shifted, ["Compat"], offsets=offsets, per_query=True)["Compat"], alone)
    a = rankjit.evaluate(labels, scores, ["Compat"], offsets=offsets, ideal_counts=counts, per_query=True)["Compat"]
    b = rankjit.evaluate(labels, shifted, ["Compat"], offsets=offsets, ideal_counts=counts, per_query=True)["Compat"]
    assert np.any(a != b)
    np.testing.assert_allclose(b, _reference("Compat", [(ys, [s + 100.0 for s in ss]) for ys, ss in rows],
                                             "pessimistic", counts), **TOL)


def test_compat_padded_with_garbage_scores_and_the_public_function():
    # padding holds scores >= 0: the rank pass counts the real documents' signs only
    rows, counts = _signed_rows(5)
    width = max(len(ys) for ys, _ in rows) + 3
    labels = np.full((len(rows), width), 7, dtype=np.int8)
    scores = np.full((len(rows), width), 5.0)
    mask = np.zeros((len(rows), width), dtype=bool)
    rng = np.random.default_rng(6)
    for q, (ys, ss) in enumerate(rows):
        pos = np.sort(rng.choice(width, size=len(ys), replace=False))
        labels[q, pos], scores[q, pos], mask[q, pos] = ys, ss, True
    want = _reference("Compat(p=0.8)", rows, "pessimistic", counts)
    got = rankjit.evaluate(labels, scores, ["Compat(p=0.8)"], mask=mask, ideal_counts=counts, per_query=True)
    np.testing.assert_allclose(got["Compat(p=0.8)"], want, **TOL)
    lengths = np.array([len(ys) for ys, _ in rows])
    dense_l = np.zeros((len(rows), width), dtype=np.int64)
    dense_s = np.full((len(rows), width), 3.0)
    for q, (ys, ss) in enumerate(rows):
        dense_l[q, :len(ys)], dense_s[q, :len(ys)] = ys, ss
    np.testing.assert_allclose(rankjit.compatibility(dense_l, dense_s, p=0.8, ideal_counts=counts, lengths=lengths),
                               want, **TOL)


def test_compat_on_every_engine_path_agrees():
    # alone (the count path: relevant documents only), with a measure that sees label-0 documents (the top-d /
    # whole-row paths), with the set measures, and several systems in one pass
    rows, counts = _signed_rows(7, n_q=60, max_len=40)
    labels, scores, offsets = _flat(rows)
    names = ["Compat", "Accuracy@5", "Accuracy(rel=2)"]
    alone = {n: rankjit.evaluate(labels, scores, [n], offsets=offsets, ideal_counts=counts, per_query=True)[n]
             for n in names}
    for extra in (["P(rel=0)@3"], ["SetP", "nDCG@10"], ["ERR@20", "AP", "NERR10(max_rel=3)"]):
        mixed = rankjit.evaluate(labels, scores, names + extra, offsets=offsets, ideal_counts=counts, per_query=True)
        for n in names:
            np.testing.assert_array_equal(mixed[n], alone[n], err_msg=f"{n} with {extra}")
    for n in names:
        np.testing.assert_allclose(alone[n], _reference(n, rows, "pessimistic", counts), err_msg=n, **TOL)
    stack = np.stack([scores, -scores, scores[::-1]])
    labels2d = np.zeros((len(rows), 40), dtype=np.int64)
    lengths = np.array([len(ys) for ys, _ in rows])
    stacked = np.zeros((3, len(rows), 40))
    for q in range(len(rows)):
        labels2d[q, :lengths[q]] = labels[offsets[q]:offsets[q + 1]]
        stacked[:, q, :lengths[q]] = stack[:, offsets[q]:offsets[q + 1]]
    systems = rankjit.evaluate_systems(labels2d, stacked, names, lengths=lengths, ideal_counts=counts)
    for s in range(3):
        one = rankjit.evaluate(labels2d, stacked[s], names, lengths=lengths, ideal_counts=counts, per_query=True)
        for n in names:
            np.testing.assert_array_equal(systems[n][s], one[n], err_msg=f"{n} system {s}")


def test_accuracy_counts_pairs():
    # ranked labels 1 0 1 0 0 1: pairs (relevant above non-relevant) / (R' N)
    labels = [[1, 0, 1, 0, 0, 1]]
    scores = [[6.0, 5.0, 4.0, 3.0, 2.0, 1.0]]
    got = rankjit.evaluate(labels, scores, ["Accuracy", "Accuracy@3", "Accuracy@1", "Accuracy(empty='one')@1",
                                            "Accuracy(rel=2)"], per_query=True)
    assert got["Accuracy"].tolist() == [1 - (0 + 1 + 3) / (3 * 3)]
    assert got["Accuracy@3"].tolist() == [1 - (0 + 1) / (1 * 2)]
    assert np.isnan(got["Accuracy@1"][0]) and got["Accuracy(empty='one')@1"].tolist() == [1.0]
    assert np.isnan(got["Accuracy(rel=2)"][0])  # nothing relevant: no pair
    # evaluate's call-level empty= does not reach Accuracy (its default would hide the undefined queries)
    assert np.isnan(rankjit.evaluate(labels, scores, ["Accuracy@1"], empty="one", per_query=True)["Accuracy@1"][0])
    # the mean is a plain mean: NaN with an undefined query; np.nanmean of the values leaves them out
    two = rankjit.evaluate(labels * 2, [[6.0, 5.0, 4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]],
                           ["Accuracy", "Accuracy@1"])
    assert np.isnan(two["Accuracy@1"])
    # the second row ranked 1 0 0 1 0 1: 3 + 1 + 0 of the 9 pairs in order
    assert two["Accuracy"] == pytest.approx((5 / 9 + 4 / 9) / 2, abs=1e-15)


def test_variants_compile_compat_and_accuracy_only_when_asked_for():
    from rankjit._grade_counts import GradeCounts

    labels = np.array([[2, 0, 1, 0, 3]], dtype=np.int8)
    scores = np.array([[0.5, -0.4, 0.3, 0.2, -0.1]], dtype=np.float32)
    batch = engine_batch(scan(as_batch(labels, scores)))

    def variant(names, ideal_counts=None):
        plan = _measures.build_plan(_measures.requests(names, {"rel": 1, "empty": "zero"}), batch, 0, ideal_counts)
        return _engine.variant_for(plan, 0, False, batch.max_count)

    counts = GradeCounts.from_dense(np.array([[3, 2, 1, 1]]))  # (build_plan takes the checked, sparse counts)
    for names in (["nDCG@10", "AP", "P@5", "ERR@20"], ["SetP", "NumQ"], ["NERR10(max_rel=3)"], ["RBP(rel=1)"]):
        assert not variant(names).extras and not variant(names, counts).signs, names
    assert variant(["Accuracy@10"]).extras and not variant(["Accuracy@10"], counts).signs
    assert variant(["Compat"]).extras and not variant(["Compat"]).signs  # nothing unretrieved: no signs
    assert variant(["Compat"], counts).signs
    assert not variant(["Accuracy@10"]).sets  # not with the set measures either


def test_compat_errors_name_the_measure():
    with pytest.raises(ValueError, match=r"'Compat\(p=0.8\)' \(its ideal ranking orders the documents by grade\) "
                                         r"needs integer grades, but query 0 has label 0.5 at position 1"):
        rankjit.evaluate([[1.0, 0.5]], [[2.0, 1.0]], ["Compat(p=0.8)"])
    with pytest.raises(ValueError, match=r"Compat: labels go up to 1.67772e\+07, and Compat counts the documents of "
                                         r"each grade \(at most grade 2\*\*24\); map the grades to a smaller scale"):
        rankjit.compatibility([[2**24 + 1, 0]], [[2.0, 1.0]])
    # ideal_counts must cover the row's documents of each grade
    with pytest.raises(ValueError, match=r"ideal_counts\[0, 2\] = 0, but query 0 holds 1 documents of grade 2"):
        rankjit.evaluate([[2, 1]], [[2.0, 1.0]], ["Compat"], ideal_counts=[[0, 1, 0]])
    with pytest.raises(ValueError, match=r"ties='average' is not available for Compat"):
        rankjit.compatibility([[1, 0]], [[1.0, 1.0]], ties="average")
    with pytest.raises(ValueError, match=r"ties='average' is not available for Accuracy"):
        rankjit.accuracy([[1, 0]], [[1.0, 1.0]], ties="average")
    with pytest.raises(ValueError, match=r"unknown empty='half' in 'Accuracy'; valid values: 'nan', 'zero', 'one'"):
        rankjit.accuracy([[1, 0]], [[2.0, 1.0]], empty="half")
    with pytest.raises(TypeError, match=r"normalize"):
        rankjit.compatibility([[1, 0]], [[2.0, 1.0]], normalize=1)


def _accuracy_batch():
    rng = np.random.default_rng(11)
    labels = (rng.random((60, 12)) < 0.3).astype(np.int8)
    labels[:7] = 0  # no relevant document: no pair, Accuracy undefined
    labels[7:10] = 1  # no non-relevant one: undefined too
    scores = rng.random((60, 12))
    return labels, scores


def test_accuracy_means_leave_the_undefined_queries_out_everywhere():
    # ir_measures averages Accuracy over the queries it reports: those with a (relevant, non-relevant) pair
    labels, scores = _accuracy_batch()
    per_query = ref.measure_batch("Accuracy", labels, scores, 5, "stable")  # NaN: no (relevant, non-relevant) pair
    assert np.isnan(per_query).sum() >= 10 and not np.isnan(per_query).all()
    want = float(np.mean(per_query[~np.isnan(per_query)]))
    got = rankjit.evaluate(labels, scores, ["Accuracy@5", "P@5"])
    assert got["Accuracy@5"] == pytest.approx(want, rel=1e-12)
    np.testing.assert_allclose(rankjit.evaluate(labels, scores, ["Accuracy@5"], per_query=True)["Accuracy@5"],
                               per_query, rtol=1e-12)
    # every query undefined: NaN, and the empty= value (a number) is averaged like any other
    assert np.isnan(rankjit.evaluate(labels[:10], scores[:10], ["Accuracy@5"])["Accuracy@5"])
    zero = rankjit.evaluate(labels, scores, ["Accuracy(empty='zero')@5"])["Accuracy(empty='zero')@5"]
    assert zero == pytest.approx(float(np.mean(np.nan_to_num(per_query))), rel=1e-12)
    # the preset front end, weighted and not
    from rankjit.presets import weighted_mean

    w = np.linspace(1.0, 2.0, labels.shape[0])
    keep = ~np.isnan(per_query)
    assert weighted_mean(per_query, w, where=keep) == pytest.approx(float(np.average(per_query[keep], weights=w[keep])))
    assert np.isnan(weighted_mean(per_query[:10], w[:10], where=keep[:10]))


def test_accuracy_means_of_the_stream_and_dask_front_ends():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    labels, scores = _accuracy_batch()
    frame = pd.DataFrame({"q": np.repeat(np.arange(labels.shape[0]), labels.shape[1]), "label": labels.ravel(),
                          "score": scores.ravel()})
    want = rankjit.evaluate(labels, scores, ["Accuracy@5", "nDCG@5"])
    from rankjit import stream

    import pyarrow as pa

    streamed = stream.evaluate(pa.Table.from_pandas(frame, preserve_index=False), ["Accuracy@5", "nDCG@5"], query="q", label="label", score="score",
                                       batch_size=97)
    means = streamed.means if hasattr(streamed, "means") else streamed
    assert means["Accuracy@5"] == pytest.approx(want["Accuracy@5"], rel=1e-12)
    dd = pytest.importorskip("dask.dataframe")
    from rankjit import dask as rankjit_dask

    got = rankjit_dask.evaluate(dd.from_pandas(frame, npartitions=3, sort=False), ["Accuracy@5"], query="q",
                                label="label", score="score", shuffle=True)
    assert got["Accuracy@5"] == pytest.approx(want["Accuracy@5"], rel=1e-12)
