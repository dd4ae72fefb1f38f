"""``rankjit._kernels.frontends._join`` (the ir_measures provider's join of run rows with the qrels, for
DataFrames and named tuples) against a plain-Python reading of its definition.

Per query, the run's rows in the order ``rrow`` gives: a document's judgment is the grade of the qrels row of its
id (``_UNJUDGED`` if none); a document listed again is dropped (``keep = False``) and its score goes to the first
listing (a dict's update: the first place, the last score); the count of such repeats is returned.  Ids are
bytes of any length (empty ones, shared prefixes, one byte apart), so table slots collide often.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rankjit._kernels.frontends import _UNJUDGED, _join
from rankjit.io._kernels import hash_column

#: few short ids, so that runs repeat them and qrels judge them; "" and ids one byte apart included
IDS = st.sampled_from(["", "a", "b", "ab", "ba", "abc", "abcdefgh", "abcdefgi", "abcdefghi", "doc-000000000001",
                       "doc-000000000002", "é", "x" * 17])


def column(ids):
    """(data, offsets) of a list of str ids (UTF-8 bytes)."""
    raw = [s.encode() for s in ids]
    off = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in raw], out=off[1:])
    return np.frombuffer(b"".join(raw), dtype=np.uint8).copy(), off


@st.composite
def cases(draw):
    """Qrels queries (one row per document, in a shuffled row order) and run queries (ids drawn with repeats),
    the run's rows scattered (``rrow``), each run query judged by a drawn qrels query."""
    n_qq = draw(st.integers(1, 4))
    q_ids, q_grades, q_off = [], [], [0]
    for _ in range(n_qq):
        docs = draw(st.lists(IDS, unique=True, max_size=8))
        q_ids += docs
        q_grades += draw(st.lists(st.integers(-2, 4), min_size=len(docs), max_size=len(docs)))
        q_off.append(len(q_ids))
    order = draw(st.permutations(range(len(q_ids))))  # the qrels rows of a query need not be stored together
    q_rows = np.empty(len(q_ids), dtype=np.int64)
    stored = [None] * len(q_ids)
    stored_grades = np.zeros(len(q_ids), dtype=np.int64)
    for t, r in enumerate(order):
        q_rows[t] = r
        stored[r] = q_ids[t]
        stored_grades[r] = q_grades[t]
    n_rq = draw(st.integers(1, 4))
    r_ids, offsets = [], [0]
    for _ in range(n_rq):
        r_ids += draw(st.lists(IDS, max_size=12))
        offsets.append(len(r_ids))
    rrow = np.array(draw(st.permutations(range(len(r_ids)))), dtype=np.int64)  # run row of each position
    stored_r = [None] * len(r_ids)
    for j, row in enumerate(rrow.tolist()):
        stored_r[row] = r_ids[j]
    qmap = np.array(draw(st.lists(st.integers(0, n_qq - 1), min_size=n_rq, max_size=n_rq)), dtype=np.int64)
    scores = np.array(draw(st.lists(st.integers(0, 9), min_size=len(r_ids), max_size=len(r_ids))),
                      dtype=np.float64) / 4
    return (np.array(offsets, dtype=np.int64), rrow, stored_r, scores, qmap, np.array(q_off, dtype=np.int64), q_rows,
            stored, stored_grades)


def join_reference(offsets, rrow, r_ids, scores, qmap, q_off, q_rows, q_ids, grades):
    """(raw, keep, scores, repeats) from the definition, with Python dicts."""
    raw = np.full(rrow.shape[0], _UNJUDGED, dtype=np.int64)
    keep = np.ones(rrow.shape[0], dtype=bool)
    scores = scores.copy()
    repeats = 0
    for i in range(offsets.shape[0] - 1):
        g = qmap[i]
        judged = {q_ids[r]: int(grades[r]) for r in q_rows[q_off[g]:q_off[g + 1]].tolist()}
        first = {}
        for j in range(offsets[i], offsets[i + 1]):
            doc = r_ids[rrow[j]]
            if doc in first:
                keep[j] = False
                scores[first[doc]] = scores[j]
                repeats += 1
                continue
            first[doc] = j
            raw[j] = judged.get(doc, _UNJUDGED)
    return raw, keep, scores, repeats


@settings(max_examples=400, deadline=None)
@given(cases())
def test_join_follows_its_definition(case):
    offsets, rrow, r_ids, scores, qmap, q_off, q_rows, q_ids, grades = case
    r_data, r_off = column(r_ids)
    q_data, q_doff = column(q_ids)
    raw = np.full(rrow.shape[0], _UNJUDGED, dtype=np.int64)  # (repeats are left unwritten: dropped by keep)
    keep = np.ones(rrow.shape[0], dtype=bool)
    got_scores = scores.copy()
    repeats = _join(0, offsets.shape[0] - 1, offsets, rrow, r_data, r_off, got_scores, qmap, q_off, q_rows, q_data,
                    q_doff, hash_column(q_data, q_doff), grades, raw, keep, np.empty(rrow.shape[0], dtype=np.uint64))
    want_raw, want_keep, want_scores, want_repeats = join_reference(offsets, rrow, r_ids, scores, qmap, q_off,
                                                                    q_rows, q_ids, grades)
    assert repeats == want_repeats
    np.testing.assert_array_equal(keep, want_keep)
    np.testing.assert_array_equal(raw[keep], want_raw[keep])
    np.testing.assert_array_equal(got_scores[keep], want_scores[keep])
