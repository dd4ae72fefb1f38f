"""``rankjit._kernels.frontends._place_judged`` against a plain-Python reading of its definition.

The kernel takes one of two ways per query: with up to ``_FEW_JUDGED`` retrieved judged
documents it compares each with every score, above that it counts through a histogram of
binary searches; with a ``depth`` under the query's length (up to ``_SMALL_DEPTH``) it first
leaves out the judged documents below the depth-th largest score; a query whose scores are in
descending order already is searched by bisection instead.  Every way must give, for every
retrieved judged document of score ``s``,
``a = #{scores > s}``: its label at rank ``a`` when no other document has score ``s``;
otherwise ``above = a``, the query marked tied and every document of score ``s`` a member;
nothing when ``a >= depth``.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rankjit._kernels.frontends import _FEW_JUDGED, _SMALL_DEPTH, _depth_threshold, _place_judged, place_judged_scratch


def place_reference(off, score, j_off, j_score, j_label, depth):
    """(labels, above, tied, member) from the definition, one document at a time."""
    n, n_q = score.shape[0], off.shape[0] - 1
    labels = np.zeros(n, dtype=j_label.dtype)
    above = np.full(j_score.shape[0], -1, dtype=np.int64)
    tied = np.zeros(n_q, dtype=bool)
    member = np.zeros(n, dtype=bool)
    for g in range(n_q):
        docs = range(off[g], off[g + 1])
        for t in range(j_off[g], j_off[g + 1]):
            s = j_score[t]
            if np.isnan(s):
                continue
            a = sum(1 for i in docs if score[i] > s)
            equal = [i for i in docs if score[i] == s]
            if a >= depth:
                continue
            if len(equal) == 1:
                labels[off[g] + a] = j_label[t]
            else:
                above[t] = a
                tied[g] = True
                member[equal] = True
    return labels, above, tied, member


@st.composite
def queries(draw):
    """Queries of scores drawn from few values (ties), each with judged documents that are some of its documents
    (their scores) or not retrieved (NaN); some queries hold more judged documents than ``_FEW_JUDGED``."""
    n_q = draw(st.integers(1, 4))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    scores, j_scores, lens, j_lens = [], [], [], []
    for _ in range(n_q):
        many = draw(st.booleans())
        n = draw(st.integers(0, 3 * _FEW_JUDGED if many else 30))
        values = draw(st.integers(1, 2 * n + 1))  # few values: many ties; many: mostly distinct
        s = draw(st.lists(st.integers(0, values), min_size=n, max_size=n))
        picked = draw(st.permutations(range(n)))[: draw(st.integers(0, n))]
        if n > _FEW_JUDGED + 1 and draw(st.booleans()):  # a plateau: more judged documents at the top score
            top = draw(st.integers(_FEW_JUDGED + 1, n - 1))  # than _FEW_JUDGED, and judged ones below it
            s = [values + 1] * top + s[top:]
            picked = list(range(n))
        if draw(st.booleans()):  # scores in descending order already, as TREC runs are written
            s = sorted(s, reverse=True)
        missing = draw(st.integers(0, 3))
        scores += s
        j_scores += [s[i] for i in picked] + [None] * missing
        lens.append(n)
        j_lens.append(len(picked) + missing)
    score = np.array(scores, dtype=dtype) / 7  # (not all exact: equal values still equal)
    j_score = np.array([np.nan if v is None else v for v in j_scores], dtype=dtype) / 7
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    j_off = np.concatenate([[0], np.cumsum(j_lens)]).astype(np.int64)
    j_label = np.arange(3, 3 + j_score.shape[0]).astype(np.int64)  # labels that tell the documents apart
    depth = draw(st.one_of(st.just(int(max(lens))), st.integers(1, max(int(max(lens)), 1))))
    return off, score, j_off, j_score, j_label, depth


@settings(max_examples=300, deadline=None)
@given(queries())
def test_place_judged_follows_its_definition_on_both_paths(case):
    off, score, j_off, j_score, j_label, depth = case
    n, n_q = score.shape[0], off.shape[0] - 1
    labels = np.zeros(n, dtype=j_label.dtype)
    above = np.full(j_score.shape[0], -1, dtype=np.int64)
    tied = np.zeros(n_q, dtype=bool)
    member = np.zeros(n, dtype=bool)
    most = int(np.diff(j_off).max()) + 1
    longest = max(int(np.diff(off).max()), 1)
    _place_judged(0, n_q, off, score, j_off, j_score, j_label, labels, above, tied, member,
                  *place_judged_scratch(most, longest, depth), depth)
    want = place_reference(off, score, j_off, j_score, j_label, depth)
    for got, expected in zip((labels, above, tied, member), want):
        np.testing.assert_array_equal(got, expected)


def test_every_path_is_drawn():
    """The strategy reaches, in queries whose scores are not in descending order, the histogram path (more
    retrieved judged documents than _FEW_JUDGED) and the other, each with and without leaving out the documents
    below the depth-th score; and, in queries in descending order (binary searches), judged documents alone at
    their score, tied with others, and deeper than ``depth``."""
    paths = set()
    in_order = set()

    @settings(max_examples=300, deadline=None, database=None)
    @given(queries())
    def collect(case):
        off, score, j_off, j_score, j_label, depth = case
        for g in range(off.shape[0] - 1):
            seg, js = score[off[g]:off[g + 1]], j_score[j_off[g]:j_off[g + 1]]
            if (seg[:-1] >= seg[1:]).all():
                for s in js[~np.isnan(js)]:
                    a = int(np.count_nonzero(seg > s))
                    in_order.add("deeper" if a >= depth else "alone" if (seg == s).sum() == 1 else "tied")
                continue
            cut = depth < seg.shape[0] and depth <= _SMALL_DEPTH
            thr = np.sort(seg)[::-1][depth - 1] if cut else -np.inf
            paths.add((int(np.count_nonzero(js >= thr)) > _FEW_JUDGED, bool(cut and (js < thr).any())))

    collect()
    assert paths == {(False, False), (False, True), (True, False), (True, True)}
    assert in_order == {"alone", "tied", "deeper"}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 3).map(lambda v: v / 4), st.floats(allow_nan=True, allow_infinity=True)),
                max_size=40), st.integers(0, 45))
def test_depth_threshold_is_the_depth_th_largest_value(values, depth):
    """Repeated values counted each time, NaN never; -inf when fewer values; depth 0 leaves every value out."""
    seg = np.array(values, dtype=np.float64)
    kept = np.sort(seg[~np.isnan(seg)])[::-1]
    want = np.inf if depth == 0 else (kept[depth - 1] if depth <= kept.shape[0] else -np.inf)
    assert _depth_threshold(seg, seg.shape[0], depth, np.empty(max(depth, 1))) == want
