"""trec_eval's other relevance formats: ``-R prefs``, ``-R qrels_prefs`` and ``-R qrels_jg``.

Formats (trec_eval 10.0: ``get_prefs.c``, ``get_qrels_prefs.c``, ``get_qrels_jg.c``)
-----------------------------------------------------------------------------------
* ``prefs``: ``qid jg jsg docno rel_level`` (exactly 5 fields).  Within a judgment
  sub-group (JSG) of a judgment group (JG), a document with a higher ``rel_level`` (a
  number) is preferred to one with a lower level; a JG is one user's consistent set of
  preferences (transitive over its JSGs), different JGs may disagree.  Level 0 means
  non-relevant, above 0 relevant.
* ``qrels_prefs``: a qrels file read as preferences (``qid jg docno rel_level``): the
  second field is the JG, each JG is one JSG, ``rel_level`` a number.
* ``qrels_jg``: a qrels file whose second field names a JG (``qid jg docno rel``, ``rel``
  an integer); a document judged twice in one JG of a query is an error.

Files are read like rankjit's qrels (:func:`rankjit.io.read_trec_qrels`): blank lines and
lines starting with ``#`` skipped, line ends and gzip handled; the two qrels formats ignore
fields after the fourth, a prefs line must have exactly five.  A malformed line is an error
naming the file and the line.

Measures
--------
``prefs`` / ``qrels_prefs``: the 14 ``prefs_*`` measures (``m_prefs_*.c``), from the counts
of fulfilled and possible preferences per JG (:mod:`rankjit.io._trec_prefs_kernels`, where
the definitions are).  The run is ranked by score descending, ties by docno *ascending*
(``form_prefs_counts.c``; the qrels measures break ties by docno descending), cut to ``-M``.

``qrels_jg``: ``map_avgjg``, ``P_avgjg`` and ``Rprec_mult_avgjg`` (``m_*_avgjg.c``): map,
P and Rprec_mult of each JG (the run ranked as for qrels, ``-M``, ``-l`` and ``-J`` as
there), averaged over the query's JGs.

``runid`` and ``num_q`` go with any format; trec_eval cannot compute the other measures
from a format not theirs (it stops: "Can't calculate measure"): rankjit refuses them before
reading the files.  Queries are those of the judgments that the run answers (every one
with ``-c``: a query the run lacks is ranked as trec_eval ranks it, one stand-in document
``ceci_nest_pas_un_docno``), in byte order of their ids.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rankjit.io import _trec_prefs_kernels as PK
from rankjit.io._trec import StringColumn, _parse_numbers, _read_bytes, _source_name, _strings, _tokenize
from rankjit.io._trec_counts import level_name

__all__ = [
    "TrecPrefs",
    "TrecQrelsJG",
    "read_trec_prefs",
    "read_trec_qrels_prefs",
    "read_trec_qrels_jg",
    "prefs_values",
    "jg_values",
]

PREFS_MEASURES = PK.PREFS_COLUMNS
JG_MEASURES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
ANY_FORMAT = ("runid", "num_q")
#: trec_eval's formats of relevance information and the measures computed from each (rankjit's)
FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")
#: trec_eval's stand-in ranking of a query the run lacks under -c (trec_eval.c)
STAND_IN_DOCNO = b"ceci_nest_pas_un_docno"


@dataclass(frozen=True, eq=False)
class TrecPrefs:
    """Preferences (``-R prefs``, or a qrels file read as ``-R qrels_prefs``), in file order.

    ``jsg`` is None for ``qrels_prefs`` (one JSG per JG); ``rel`` holds the levels (float64).
    """

    qid: StringColumn
    jg: StringColumn
    jsg: StringColumn | None
    docno: StringColumn
    rel: np.ndarray
    source: str | None = None

    def __len__(self):
        return self.rel.shape[0]


@dataclass(frozen=True, eq=False)
class TrecQrelsJG:
    """Judgments in several judgment groups (``-R qrels_jg``), in file order; ``rel`` int64."""

    qid: StringColumn
    jg: StringColumn
    docno: StringColumn
    rel: np.ndarray
    source: str | None = None

    def __len__(self):
        return self.rel.shape[0]


def _read_columns(source, name, n_fields, max_fields, expected, kind):
    name = name or _source_name(source)
    buf = _read_bytes(source, name, fields=n_fields)
    n, starts, lens = _tokenize(buf, name, tuple(range(n_fields)), n_fields, max_fields, expected)
    strings = [_strings(buf, starts[j], lens[j]) for j in range(n_fields - 1)]
    what = "rel_level" if kind == "f" else "relevance"
    rel = _parse_numbers(buf, starts[n_fields - 1], lens[n_fields - 1], name, what, kind)
    return name, strings, rel


def read_trec_prefs(source, *, name=None):
    """Read a trec_eval preferences file (``qid jg jsg docno rel_level``, exactly 5 fields).

    Examples
    --------
    >>> p = read_trec_prefs(b"q1 u1 s1 d1 3\\nq1 u1 s1 d2 0.5\\n")
    >>> p.jsg[0], p.rel.tolist()
    ('s1', [3.0, 0.5])
    """
    name, (qid, jg, jsg, docno), rel = _read_columns(
        source, name, 5, 5, "5 fields 'qid jg jsg docno rel_level'", "f")
    return TrecPrefs(qid, jg, jsg, docno, rel, name)


def read_trec_qrels_prefs(source, *, name=None):
    """Read a qrels file as preferences (``qid jg docno rel_level``; ``rel_level`` any number).

    Examples
    --------
    >>> p = read_trec_qrels_prefs(b"q1 0 d1 2\\nq1 0 d2 0 extra\\n")
    >>> p.jg[1], p.jsg, p.rel.tolist()
    ('0', None, [2.0, 0.0])
    """
    name, (qid, jg, docno), rel = _read_columns(source, name, 4, -1, "4 fields 'qid jg docno rel_level'", "f")
    return TrecPrefs(qid, jg, None, docno, rel, name)


def read_trec_qrels_jg(source, *, name=None):
    """Read qrels with judgment groups (``qid jg docno rel``; ``rel`` an integer).

    Examples
    --------
    >>> j = read_trec_qrels_jg(b"q1 a d1 1\\nq1 b d1 0\\n")
    >>> j.jg.tolist(), j.rel.tolist()
    (['a', 'b'], [1, 0])
    """
    name, (qid, jg, docno), rel = _read_columns(source, name, 4, -1, "4 fields 'qid jg docno rel'", "i")
    return TrecQrelsJG(qid, jg, docno, rel.astype(np.int64), name)


# ------------------------------------------------------------------------- codes
def _column_bytes(col):
    return [bytes(col.data[col.offsets[i]:col.offsets[i + 1]]) for i in range(len(col))]


def _byte_codes(columns):
    """Codes of the strings of several columns in one space ordered like ``strcmp``.

    Returns ``(values, codes)``: ``values`` the distinct strings in byte order (a NumPy
    ``S`` array, or a list of ``bytes`` when a string holds a NUL byte or padding would
    take too much memory), ``codes`` one int64 array per column.
    """
    from rankjit.io._align import _padded_heads

    heads = [_padded_heads(col) for col in columns]
    if all(h is not None for h in heads):
        width = max([h.dtype.itemsize for h in heads] + [1])
        joined = np.concatenate([h.astype(f"S{width}") for h in heads])
        values, inverse = np.unique(joined, return_inverse=True)
        inverse = inverse.reshape(-1).astype(np.int64, copy=False)
        codes, at = [], 0
        for col, h in zip(columns, heads):
            codes.append(np.repeat(inverse[at:at + h.shape[0]], np.diff(col.run_starts())))
            at += h.shape[0]
        return values, codes
    lists = [_column_bytes(col) for col in columns]  # rare: NUL bytes, or one very long string
    values = sorted(set().union(*lists))
    index = {v: i for i, v in enumerate(values)}
    return values, [np.array([index[v] for v in lst], dtype=np.int64) for lst in lists]


def _decode(values, i):
    v = values[int(i)]
    return (v if isinstance(v, bytes) else bytes(v)).decode("utf-8", "surrogateescape")  # lossless


class _Queries:
    """What :func:`rankjit.io._cli.format_trec_eval` reads of the evaluated queries."""

    def __init__(self, qids):
        self.qids = qids

    @property
    def n_queries(self):
        return len(self.qids)


def _query_codes(j_qid, run, complete):
    """Kept queries (byte order) and the query index of each judgment and run row (-1: dropped).

    Under ``complete`` every judged query is kept; the returned ``missing`` ones get the
    stand-in document.
    """
    from rankjit.io._align import _query_sets

    uq, j_codes, blk_code, blk_start = _query_sets(j_qid, run.qid)
    r_codes = np.repeat(blk_code, np.diff(blk_start))
    present = np.zeros(len(uq), dtype=bool)
    present[r_codes[r_codes >= 0]] = True
    keep = np.ones(len(uq), dtype=bool) if complete else present
    if not keep.any():
        raise ValueError("no query has both results and relevance judgments")
    new_index = np.full(len(uq) + 1, -1, dtype=np.int64)  # [-1] maps -1 to -1
    new_index[: len(uq)][keep] = np.arange(int(keep.sum()))
    qids = [v.decode("utf-8", "surrogateescape") for v, k in zip(uq, keep.tolist()) if k]  # lossless
    missing = new_index[: len(uq)][keep & ~present]
    return qids, new_index[j_codes], new_index[r_codes], missing


def _ranked_run(run, r_q, r_doc, missing, stand_in, n_q, max_docs, docno_ascending, doc_values, qids):
    """The run ranked per query (score descending, ties by docno), cut to ``max_docs``.

    Returns ``(q, doc, pos, n_ret)`` of the kept rows (``pos``: 0-based rank) and the number
    of ranked documents of each query; a document twice in a query's top ``max_docs`` is an
    error (trec_eval's).
    """
    from rankjit.io._align import duplicate_lines

    rows = np.flatnonzero(r_q >= 0)
    q = np.concatenate([r_q[rows], missing])
    doc = np.concatenate([r_doc[rows], np.full(missing.shape[0], stand_in, dtype=np.int64)])
    score = np.concatenate([run.score[rows], np.ones(missing.shape[0])])
    n_doc_codes = int(doc.max()) + 1 if doc.shape[0] else 1
    order = _order((doc if docno_ascending else n_doc_codes - 1 - doc, _dense_rank(-score), q))
    q, doc = q[order], doc[order]
    n_ret = np.bincount(q, minlength=n_q).astype(np.int64)
    first = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(n_ret, out=first[1:])
    pos = np.arange(q.shape[0], dtype=np.int64) - first[q]
    if max_docs is not None:
        top = pos < max_docs
        q, doc, pos = q[top], doc[top], pos[top]
        n_ret = np.minimum(n_ret, max_docs)
    by_doc = _order((doc, q))
    same = (q[by_doc][1:] == q[by_doc][:-1]) & (doc[by_doc][1:] == doc[by_doc][:-1])
    if same.any():
        k = by_doc[int(np.argmax(same))]
        qid, docno = qids[int(q[k])], _decode(doc_values, doc[k])
        raise ValueError(
            f"{run.source or 'run'}: document {docno!r} is retrieved twice for query {qid!r}"
            f"{duplicate_lines(run.source, qid, docno, fields=6)} (trec_eval refuses duplicate documents)"
        )
    return q, doc, pos, n_ret


def _dense_rank(values):
    """Each value's index among the distinct values, ascending (int64; -0.0 and 0.0 are one value)."""
    return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.int64, copy=False)


def _order(keys):
    """``np.lexsort(keys)`` (the last key first) of int64 keys >= 0: one int64 argsort when the ranges fit.

    Rows equal in every key come in any order (the callers never depend on it).
    """
    spans = [int(k.max()) + 1 if k.shape[0] else 1 for k in keys]
    if math.prod(spans) >= 1 << 62:
        return np.lexsort(keys)
    combined = np.zeros(keys[0].shape[0], dtype=np.int64)
    for k, span in zip(reversed(keys), reversed(spans)):
        combined *= span
        combined += k  # combined = (... (k_last * span + k_prev) * span ...) + k_first
    return np.argsort(combined)


def _lookup(keys_sorted, keys):
    """Index of each of ``keys`` in the sorted ``keys_sorted``, -1 if absent."""
    if keys_sorted.shape[0] == 0:
        return np.full(keys.shape[0], -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys_sorted, keys), keys_sorted.shape[0] - 1)
    return np.where(keys_sorted[at] == keys, at, -1)


def _prepare(judgments, run, complete, max_docs, docno_ascending):
    """Query and docno codes of judgments and run, and the ranked run (see :func:`_ranked_run`)."""
    from rankjit._validation import document_limit

    max_docs = document_limit(max_docs)
    qids, j_q, r_q, missing = _query_codes(judgments.qid, run, complete)
    n_q = len(qids)
    cols = [judgments.docno, run.docno]
    if missing.shape[0]:
        cols.append(StringColumn.from_list([STAND_IN_DOCNO]))
    doc_values, doc_codes = _byte_codes(cols)
    stand_in = int(doc_codes[2][0]) if missing.shape[0] else -1
    ranked = _ranked_run(run, r_q, doc_codes[1], missing, stand_in, n_q, max_docs, docno_ascending, doc_values,
                         qids)
    return qids, j_q, doc_codes[0], doc_values, ranked


# ------------------------------------------------------------------- preferences
def prefs_values(prefs, run, *, complete=False, max_docs=None, dense_max=PK.DENSE_MAX):
    """trec_eval's 14 ``prefs_*`` measures of each query: ``(qids, {name: values})``.

    ``prefs``: :class:`TrecPrefs` (``-R prefs`` or ``-R qrels_prefs``); ``run``: a
    :class:`rankjit.io.TrecRun`; ``complete`` / ``max_docs``: trec_eval's ``-c`` / ``-M``.
    The three ``prefs_num_prefs_*`` counts are integers (their summary is the sum), the
    other measures floats (averaged over the queries).  ``dense_max``: how the pair counts
    are held (:data:`rankjit.io._trec_prefs_kernels.DENSE_MAX`; the values do not depend on it).

    Examples
    --------
    >>> from rankjit.io import read_trec_run
    >>> prefs = read_trec_prefs(b"q 1 a d1 2\\nq 1 a d2 1\\nq 1 a d3 0\\n")
    >>> run = read_trec_run(b"q Q0 d2 1 3 t\\nq Q0 d1 2 2 t\\n")
    >>> qids, v = prefs_values(prefs, run)
    >>> qids, int(v["prefs_num_prefs_poss"][0]), int(v["prefs_num_prefs_ful"][0]), float(v["prefs_simp_ret"][0])
    (['q'], 3, 2, 0.0)
    """
    qids, j_q, j_doc, doc_values, (r_q, r_doc, r_pos, _) = _prepare(prefs, run, complete, max_docs, True)
    n_q = len(qids)
    kept = np.flatnonzero(j_q >= 0)
    q, doc, rel = j_q[kept], j_doc[kept], prefs.rel[kept]
    n_docs = max(len(doc_values), 1)
    # the judged documents of each query: docid ranks (retrieved ones by rank, then the others by docno)
    pair_keys, pair_of_row = np.unique(q * n_docs + doc, return_inverse=True)
    pair_of_row = pair_of_row.reshape(-1)
    pair_q = pair_keys // n_docs
    pair_pos = np.full(pair_keys.shape[0], -1, dtype=np.int64)
    hit = _lookup(pair_keys, r_q * n_docs + r_doc)
    pair_pos[hit[hit >= 0]] = r_pos[hit >= 0]
    retrieved = pair_pos >= 0
    order = _order((np.where(retrieved, pair_pos, pair_keys % n_docs), (~retrieved).astype(np.int64), pair_q))
    nj = np.bincount(pair_q, minlength=n_q).astype(np.int64)
    njr = np.bincount(pair_q[retrieved], minlength=n_q).astype(np.int64)
    start = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(nj, out=start[1:])
    docid = np.empty(pair_keys.shape[0], dtype=np.int64)
    docid[order] = np.arange(order.shape[0], dtype=np.int64) - start[pair_q[order]]
    rank = docid[pair_of_row]

    jg_values, jg_codes = _byte_codes([prefs.jg])
    jg = jg_codes[0][kept]
    if prefs.jsg is not None:
        _, jsg_codes = _byte_codes([prefs.jsg])
        jsg = jsg_codes[0][kept]
    else:
        jsg = np.zeros(kept.shape[0], dtype=np.int64)
    rows = _order((rank, _dense_rank(-rel), jsg, jg, q))  # trec_eval's order: JG, JSG, level descending, docid rank
    q_off = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.bincount(q, minlength=n_q), out=q_off[1:])
    out = np.zeros((n_q, len(PREFS_MEASURES)), dtype=np.float64)
    err = np.zeros(5, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        PK.prefs_kernel(q_off, np.ascontiguousarray(jg[rows]), np.ascontiguousarray(jsg[rows]),
                        np.ascontiguousarray(rel[rows]), np.ascontiguousarray(rank[rows]), nj, njr, int(dense_max),
                        out, err)
    if err[0]:
        _raise_prefs_error(prefs.source, err, qids, q, rank, doc, doc_values, jg_values)
    return qids, {name: out[:, c] for c, name in enumerate(PREFS_MEASURES)}


def _raise_prefs_error(source, err, qids, q, rank, doc, doc_values, jg_values):
    code, qi = int(err[0]), int(err[1])

    def docno(docid):
        k = np.flatnonzero((q == qi) & (rank == docid))[0]
        return _decode(doc_values, doc[k])

    where = f"{source or 'prefs'}: query {qids[qi]!r}, judgment group {_decode(jg_values, err[4])!r}"
    if code == PK.ERR_TWO_LEVELS:
        raise ValueError(f"{where}: document {docno(err[2])!r} has two different rel_levels in one judgment "
                         "sub-group (trec_eval refuses it)")
    if code == PK.ERR_ZERO_AND_NONZERO:
        raise ValueError(f"{where}: document {docno(err[2])!r} has rel_level 0 in one judgment sub-group and "
                         "above 0 in another (trec_eval refuses it)")
    raise ValueError(f"{where}: inconsistent preferences: {docno(err[2])!r} and {docno(err[3])!r} are each "
                     "preferred to the other through the sub-groups (trec_eval aborts)")


# -------------------------------------------------------------- judgment groups
def jg_values(qrels_jg, run, *, cutoffs=(5, 10, 15, 20, 30, 100, 200, 500, 1000),
              multiples=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), complete=False, max_docs=None,
              rel_level=1, judged_only=False):
    """map_avgjg, P_avgjg at ``cutoffs`` and Rprec_mult_avgjg at ``multiples`` of R, per query.

    Returns ``(qids, map, P, Rprec_mult)``: ``P[q, i]`` at ``cutoffs[i]``, ``Rprec_mult[q, i]``
    at ``multiples[i]``.  Each measure is trec_eval's map / P / Rprec_mult computed with one
    judgment group's qrels, averaged over the query's groups; ``rel_level`` (``-l``: lowest
    relevant judgment) and ``judged_only`` (``-J``: the run without the documents the group
    does not judge >= 0) apply per group, ``complete`` / ``max_docs`` as ``-c`` / ``-M``.

    Examples
    --------
    >>> from rankjit.io import read_trec_run
    >>> jg = read_trec_qrels_jg(b"q a d1 1\\nq a d2 0\\nq b d2 1\\n")
    >>> run = read_trec_run(b"q Q0 d1 1 2 t\\nq Q0 d2 2 1 t\\n")
    >>> qids, m, p, r = jg_values(jg, run, cutoffs=(1,), multiples=(1.0,))
    >>> float(m[0]), float(p[0, 0]), float(r[0, 0])  # group a: AP 1, P@1 1; group b: AP 0.5, P@1 0
    (0.75, 0.5, 0.5)
    """
    from rankjit._validation import integer
    from rankjit.io._align import duplicate_lines

    rel_level = integer(rel_level, "rel_level")
    qids, j_q, j_doc, doc_values, (r_q, r_doc, r_pos, n_ret) = _prepare(qrels_jg, run, complete, max_docs, False)
    n_q = len(qids)
    jg_values_, jg_codes = _byte_codes([qrels_jg.jg])
    jg = jg_codes[0]
    n_jg = max(len(jg_values_), 1)
    n_docs = max(len(doc_values), 1)
    # a document judged twice in one group of a query (every query of the file, as trec_eval reads it)
    qa = _byte_codes([qrels_jg.qid])[1][0]
    order = _order((j_doc, jg, qa))
    keys = np.stack((qa[order], jg[order], j_doc[order]))
    same = (keys[:, 1:] == keys[:, :-1]).all(axis=0)
    if same.any():
        k = int(order[int(np.argmax(same))])
        qid, group, docno = qrels_jg.qid[k], qrels_jg.jg[k], qrels_jg.docno[k]
        raise ValueError(
            f"{qrels_jg.source or 'qrels'}: document {docno!r} is judged twice for query {qid!r} in judgment group "
            f"{group!r}{duplicate_lines(qrels_jg.source, qid, docno, second_field=group)} (trec_eval refuses "
            "duplicate judgments)"
        )

    kept = np.flatnonzero(j_q >= 0)
    q, doc, rel = j_q[kept], j_doc[kept], qrels_jg.rel[kept]
    group_keys, g = np.unique(q * n_jg + jg[kept], return_inverse=True)
    g = g.reshape(-1)
    g_query = group_keys // n_jg
    n_g = group_keys.shape[0]
    run_keys = r_q * n_docs + r_doc
    by_key = np.argsort(run_keys)
    hit = _lookup(run_keys[by_key], q * n_docs + doc)
    pos = np.where(hit >= 0, r_pos[by_key][np.maximum(hit, 0)], -1)
    num_rel = np.bincount(g, weights=rel >= rel_level, minlength=n_g).astype(np.int64)
    if judged_only:  # ranks among the documents this group judges >= 0 (trec_eval -J)
        judged = np.flatnonzero((pos >= 0) & (rel >= 0))
        jo = judged[_order((pos[judged], g[judged]))]
        num_ret = np.bincount(g[jo], minlength=n_g).astype(np.int64)
        g_start = np.zeros(n_g + 1, dtype=np.int64)
        np.cumsum(num_ret, out=g_start[1:])
        eff = np.full(kept.shape[0], -1, dtype=np.int64)
        eff[jo] = np.arange(jo.shape[0], dtype=np.int64) - g_start[g[jo]] + 1
    else:
        num_ret = n_ret[g_query]
        eff = np.where(pos >= 0, pos + 1, -1)
    relevant = np.flatnonzero((eff > 0) & (rel >= rel_level))
    relevant = relevant[_order((eff[relevant], g[relevant]))]
    r_off = np.zeros(n_g + 1, dtype=np.int64)
    np.cumsum(np.bincount(g[relevant], minlength=n_g), out=r_off[1:])
    cutoffs = np.asarray(cutoffs, dtype=np.int64)
    multiples = np.asarray(multiples, dtype=np.float64)
    out_map = np.zeros(n_q)
    out_p = np.zeros((n_q, cutoffs.shape[0]))
    out_r = np.zeros((n_q, multiples.shape[0]))
    PK.jg_kernel(g_query, num_rel, num_ret, r_off, np.ascontiguousarray(eff[relevant]), cutoffs, multiples,
                 np.bincount(g_query, minlength=n_q).astype(np.int64), out_map, out_p, out_r)
    return qids, out_map, out_p, out_r


# ---------------------------------------------------------------------- the CLI
def check_measures(requested, rel_format, defaulted=False):
    """A ``ValueError`` for the first requested measure trec_eval cannot compute from ``rel_format``."""
    for name in requested:
        if name in ANY_FORMAT:
            continue
        if name in PREFS_MEASURES:
            need = ("prefs", "qrels_prefs")
        elif name in JG_MEASURES:
            need = ("qrels_jg",)
        else:
            need = ("qrels",)
        if rel_format in need:
            continue
        hint = {"prefs": " (-m all_prefs: every prefs measure)", "qrels_prefs": " (-m all_prefs: every prefs measure)",
                "qrels_jg": " (-m qrels_jg: its three measures)"}.get(rel_format, "")
        asked = " (no -m given: trec_eval's default set 'official')" if defaulted else ""
        raise ValueError(f"-R {rel_format}: measure {name}{asked} needs -R {' or -R '.join(need)}; trec_eval stops "
                         f"there (Can't calculate measure); -R {rel_format} gives runid, num_q and its own "
                         f"measures{hint}")


_READERS = {"prefs": read_trec_prefs, "qrels_prefs": read_trec_qrels_prefs, "qrels_jg": read_trec_qrels_jg}


def read_judgments(rel_format, source):
    """The relevance file of ``-R rel_format`` (prefs, qrels_prefs or qrels_jg); empty ones are refused."""
    judgments = _READERS[rel_format](source)
    if len(judgments) == 0:
        what = "preferences" if rel_format != "qrels_jg" else "relevance judgments"
        raise ValueError(f"{source}: no {what} (the file is empty or all blank or comment lines)")
    return judgments


def trec_eval_values(rel_format, judgments, run, requested, *, complete=False, max_docs=None, rel_level=1,
                     judged_only=False):
    """``(queries, results)`` for :func:`rankjit.io._cli.format_trec_eval` (same result layout).

    ``requested`` maps measure names (checked by :func:`check_measures`) to their
    parameters (``P_avgjg``: cutoffs; ``Rprec_mult_avgjg``: multiples of R).
    """
    if rel_format == "qrels_jg":
        cutoffs = requested.get("P_avgjg") or ()
        multiples = requested.get("Rprec_mult_avgjg") or ()
        qids, m, p, r = jg_values(judgments, run, cutoffs=cutoffs, multiples=multiples, complete=complete,
                                  max_docs=max_docs, rel_level=rel_level, judged_only=judged_only)
        values = {"map_avgjg": [("map_avgjg", m)],
                  "P_avgjg": [(f"P_avgjg_{k}", p[:, i]) for i, k in enumerate(cutoffs)],
                  "Rprec_mult_avgjg": [(level_name("Rprec_mult_avgjg", x), r[:, i])
                                       for i, x in enumerate(multiples)]}
    else:
        qids, v = prefs_values(judgments, run, complete=complete, max_docs=max_docs)
        values = {name: [(name, v[name])] for name in PREFS_MEASURES}
    results = []
    for name in requested:
        if name in ANY_FORMAT:
            results.append((name, "summary", None))
            continue
        kind = "int" if name.startswith("prefs_num_prefs") else "float"
        results += [(text, kind, vals) for text, vals in values[name]]
    return _Queries(qids), results
