"""Nugget-based diversity measures: alpha-DCG, alpha-nDCG, ERR-IA (and nERR-IA), S-recall, P-IA, AP-IA, NRBP.

Every function takes ``nuggets`` -- the judgments ``J(d, i)`` of document ``d`` for
subtopic (nugget) ``i`` -- and ``scores``:

* padded: ``nuggets`` of shape ``(n_queries, n_docs, n_subtopics)`` and ``scores`` of
  shape ``(n_queries, n_docs)``, padding declared with ``lengths=`` or ``mask=``;
* ragged: ``nuggets`` of shape ``(n_docs_total, n_subtopics)`` and flat ``scores`` with
  CSR ``offsets=``.

Judgments greater than 0 count as 1 (binary, as ndeval does); negative or NaN
judgments of a real document are an error.  Subtopics with no relevant document
(e.g. zero columns used to pad queries with fewer subtopics) are inert.

Importing this module registers ``alpha_nDCG``, ``alpha_DCG``, ``ERR_IA``,
``nERR_IA``, ``S_recall`` (alias ``StRecall``), ``P_IA``, ``AP_IA``, ``NRBP`` and
``nNRBP`` with :func:`rankjit.evaluate` (pass ``nuggets=`` and, optionally, ``ideal=`` /
``ideal_offsets=`` to it).  A name ir_measures knows gives ir_measures' (ndeval's)
number, up to the differences listed in ``docs/diversity.md``, which gives the
formulas and conventions.
"""
from __future__ import annotations

import math

import numpy as np

from rankjit._kernels import diversity as K
from rankjit import _measures
from rankjit._config import use_parallel
from rankjit._registry import DIVERSITY_PARAMS
from rankjit._kernels.ranking import TIES_AVERAGE
from rankjit._validation import as_batch, flag, positive_int, query_of, scan, ties_code

__all__ = ["alpha_ndcg", "alpha_dcg", "err_ia", "s_recall", "p_ia", "ap_ia", "nrbp"]

#: flat documents per block of the parallel nugget scan below which it runs serially
_SERIAL_DOCS = 1 << 16


class _Prepared:
    """Validated nugget data of one batch, shared by every measure of an evaluate() call."""

    def __init__(self, nug, batch, inug, istarts, icounts, max_ideal):
        self.nug = nug
        self.batch = batch
        self.inug = inug
        self.istarts = istarts
        self.icounts = icounts
        self.max_ideal = max_ideal


def _nugget_array(x, name):
    if isinstance(x, (list, tuple)) or (hasattr(x, "__array__") and not isinstance(x, np.ndarray)):
        x = np.asarray(x)
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be an array-like of nugget judgments, got {type(x).__name__}")
    if x.dtype == np.bool_:
        x = x.view(np.uint8)
    elif x.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold numbers (0 / 1 or grades > 0), got dtype {x.dtype}")
    elif x.dtype == np.float16:
        x = x.astype(np.float32)
    return x


def _nugget_counts(nug2d):
    out = np.empty(nug2d.shape[0], dtype=np.int32)
    if nug2d.shape[0] >= _SERIAL_DOCS and use_parallel(nug2d.shape[0] // 16):
        K.nugget_counts_parallel(nug2d, out)
    else:
        K.nugget_counts_serial(nug2d, out)
    return out


def _bad_value_error(arr2d, flat, where):
    row = arr2d[flat]
    bad = [v for v in row.tolist() if not v >= 0]
    return ValueError(
        f"invalid nugget judgment {bad[0]!r} {where}; judgments must be >= 0 (0 = not relevant, > 0 = relevant) "
        "and not NaN"
    )


def _param(name):
    """The registry's record of a parameter the diversity families share (alpha, beta, rel): one home for its check."""
    return DIVERSITY_PARAMS[name]


def _check_rel(rel):
    """None (judgments > 0 are relevant) or a finite number > 0 (judgments >= rel are relevant)."""
    return _param("rel").check(rel)


def _binarize(nug2d, counts, rel):
    """``J = nug >= rel`` as uint8 and its per-row counts; rows flagged bad (-1) stay flagged."""
    b = np.ascontiguousarray(nug2d >= rel).view(np.uint8)
    c = _nugget_counts(b)
    c[counts < 0] = -1
    return b, c


def prepare(nuggets, scores, *, lengths=None, mask=None, offsets=None, ideal=None, ideal_offsets=None, rel=None,
            scores_name=None):
    """Validate nuggets / scores / ideal set and build the flat layout (internal, shared with preference).

    ``rel``: None, a judgment > 0 is relevant; a number, a judgment >= rel is (the
    nuggets are then binarised once, here).  ``scores_name`` names the scores in the NaN
    message (a system of a preference call).
    """
    rel = _check_rel(rel)
    nug = _nugget_array(nuggets, "nuggets")
    sc = scores if isinstance(scores, np.ndarray) else np.asarray(scores)
    _check_shapes(nug, sc, offsets)
    n_sub = nug.shape[-1]
    if n_sub == 0:
        raise ValueError("nuggets has no subtopics (last axis of length 0)")
    raw2d = np.ascontiguousarray(nug).reshape(-1, n_sub)
    counts = _nugget_counts(raw2d)
    nug2d = raw2d
    if rel is not None:
        nug2d, counts = _binarize(raw2d, counts, rel)
    batch = as_batch(counts.reshape(sc.shape), sc, lengths=lengths, mask=mask, offsets=offsets,
                     labels_name="nuggets")
    scan(batch, allow_negative=True, scores_name=scores_name)
    _refuse_bad_judgments(batch, raw2d, counts)

    if ideal is None:
        if ideal_offsets is not None:
            raise ValueError("ideal_offsets= given without ideal=")
        return _Prepared(nug2d, batch, nug2d[:0], np.zeros(0, np.int64), np.zeros(0, np.int64), 0)
    inug = _nugget_array(ideal, "ideal")
    istarts, icounts = _ideal_layout(inug, ideal_offsets, batch.n_queries, n_sub)
    inug2d = np.ascontiguousarray(inug).reshape(-1, n_sub)
    icnt = _nugget_counts(inug2d)
    ibad = np.flatnonzero(icnt < 0)
    if ibad.size:
        first = int(ibad[0])
        q = int(np.searchsorted(istarts + icounts, first, side="right"))
        raise _bad_value_error(inug2d, first, f"in the ideal set of query {q}, row {first - istarts[q]}")
    if rel is not None:
        inug2d, icnt = _binarize(inug2d, icnt, rel)
    _check_ideal_covers_row(batch, nug2d, counts, inug2d, icnt, istarts + icounts)
    max_ideal = int(icounts.max()) if batch.n_queries else 0
    return _Prepared(nug2d, batch, inug2d, istarts, icounts, max_ideal)


def _check_shapes(nug, sc, offsets):
    """Raise unless ``nug`` / ``sc`` are 2-D / 1-D (with ``offsets``) or 3-D / 2-D, one score per document row."""
    if offsets is not None:
        if nug.ndim != 2:
            raise ValueError(
                "with offsets=, nuggets must be 2-D (n_docs_total, n_subtopics), one row per flat document; "
                f"got shape {nug.shape}"
            )
        if sc.ndim != 1 or sc.shape[0] != nug.shape[0]:
            raise ValueError(
                f"nuggets has {nug.shape[0]} document rows but scores has shape {sc.shape}; with offsets= both "
                "describe the same flat documents"
            )
    else:
        if nug.ndim != 3:
            raise ValueError(
                f"nuggets must be 3-D (n_queries, n_docs, n_subtopics), got shape {nug.shape}; "
                "for a ragged batch pass 2-D (n_docs_total, n_subtopics) nuggets with offsets="
            )
        if sc.ndim != 2 or sc.shape != nug.shape[:2]:
            raise ValueError(
                f"nuggets of shape {nug.shape} need scores of shape {nug.shape[:2]} (n_queries, n_docs), "
                f"got {sc.shape}"
            )


def _refuse_bad_judgments(batch, raw2d, counts):
    """Raise on the first real document with a negative or NaN judgment (``counts`` -1); zero padding cells' counts."""
    bad = np.flatnonzero(counts < 0)
    if not bad.size:
        return
    if batch.offsets is None:
        q = bad // batch.width
        pos = bad % batch.width
        real = pos < batch.counts[q]
        if batch.mask.shape[0]:
            real &= batch.mask[bad]
    else:
        real = np.ones(bad.shape[0], dtype=bool)
    if real.any():
        first = int(bad[np.argmax(real)])
        q, pos = batch.locate(first)
        raise _bad_value_error(raw2d, first, f"in query {q}, document {pos}")
    counts[bad] = 0  # padding cells: never ranked, made harmless


def _ideal_layout(inug, ideal_offsets, n_q, n_sub):
    """``(istarts, icounts)``: the rows of each query's ideal set in ``inug`` (padded 3-D, or 2-D with offsets)."""
    if ideal_offsets is None:
        if inug.ndim != 3 or inug.shape[0] != n_q or inug.shape[2] != n_sub:
            raise ValueError(
                f"ideal must have shape (n_queries, n_judged, n_subtopics) = ({n_q}, m, {n_sub}): the nugget "
                f"judgments of every judged document of each query (all-zero rows are padding); got shape "
                f"{inug.shape}; for a ragged ideal set pass 2-D ideal with ideal_offsets="
            )
        m = inug.shape[1]
        return np.arange(n_q, dtype=np.int64) * m, np.full(n_q, m, dtype=np.int64)
    if inug.ndim != 2 or inug.shape[1] != n_sub:
        raise ValueError(
            f"with ideal_offsets=, ideal must be 2-D (n_judged_total, {n_sub}), got shape {inug.shape}"
        )
    io = np.asarray(ideal_offsets)
    if io.ndim != 1 or io.dtype.kind not in "iu" or io.shape[0] != n_q + 1:
        raise ValueError(f"ideal_offsets must be 1-D integers with n_queries + 1 = {n_q + 1} entries")
    io = io.astype(np.int64)
    if io[0] != 0 or io[-1] != inug.shape[0] or (np.diff(io) < 0).any():
        raise ValueError(
            f"ideal_offsets must be non-decreasing from 0 to the number of ideal rows ({inug.shape[0]})"
        )
    return io[:-1].copy(), np.diff(io)


def _pattern_keys(queries, rows):
    """One sortable key per document: its query (big-endian, so keys sort by query) and its nugget set."""
    head = queries.astype(">i8").view(np.uint8).reshape(-1, 8)
    keys = np.ascontiguousarray(np.concatenate([head, np.packbits(rows > 0, axis=1)], axis=1))
    return keys.view(np.dtype((np.void, keys.shape[1]))).ravel()


def _check_ideal_covers_row(batch, nug2d, counts, inug2d, icnt, iends):
    """Every relevant document of the row must be in the query's ideal set (same nugget set, as often).

    The ideal set holds every judged document of the query, so the documents of the row
    with at least one nugget are a sub-multiset of it; otherwise the ideal gain is too
    small and alpha-nDCG / nERR-IA exceed 1.
    """
    pos = np.flatnonzero(counts > 0)
    if batch.offsets is None and pos.size and (batch.counts < batch.width).any():
        pos = pos[pos % batch.width < batch.counts[pos // batch.width]]
    if batch.mask.shape[0]:
        pos = pos[batch.mask[pos]]
    ipos = np.flatnonzero(icnt > 0)
    iq = np.searchsorted(iends, ipos, side="right")
    row_keys, row_n = np.unique(_pattern_keys(query_of(batch, pos), nug2d[pos]), return_counts=True)
    ideal_keys, ideal_n = np.unique(_pattern_keys(iq, inug2d[ipos]), return_counts=True)
    at = np.minimum(np.searchsorted(ideal_keys, row_keys), max(ideal_keys.shape[0] - 1, 0))
    held = np.where(ideal_keys[at] == row_keys, ideal_n[at], 0) if ideal_keys.size else np.zeros_like(row_n)
    bad = np.flatnonzero(row_n > held)
    if bad.size:
        b = int(bad[0])
        raw = np.frombuffer(row_keys[b].tobytes(), np.uint8)
        q = int(raw[:8].view(">i8")[0])
        subtopics = np.flatnonzero(np.unpackbits(raw[8:])[: nug2d.shape[1]]).tolist()
        raise ValueError(
            f"ideal of query {q} holds {held[b]} judged documents with exactly the nuggets (subtopics) {subtopics}, "
            f"but the row holds {row_n[b]}; ideal must hold the nugget judgments of every judged document of the "
            "query, retrieved or not"
        )


def _check_alpha(alpha, name="alpha"):
    """``alpha`` (or ``beta``) as a float in [0, 1]."""
    return _param(name).check(alpha)


def _tie_code(ties):
    code = ties_code(ties)
    if code == TIES_AVERAGE:
        raise ValueError(
            "ties='average' is not available for the diversity measures (the expectation over tied orders has "
            "no closed form for nugget gains); use ties='pessimistic', 'optimistic' or 'stable'"
        )
    return code


#: pseudo-kind of nNRBP: the alpha-nDCG kernel with NRBP's discount beta^{r-1}
_KIND_NNRBP = 100
#: deepest cutoff of the collection-independent bound (summed rank by rank)
_MAX_BOUND_DEPTH = 1_000_000
_BOUND_KINDS = (K.KIND_ALPHA_DCG_BOUND, K.KIND_ERR_IA_BOUND)


def run(prep, kind, k, alpha, ties_code_, empty, beta=0.5):
    """Run the diversity kernel of ``kind`` on prepared data; one float64 per query."""
    batch = prep.batch
    maxlen = max(batch.max_count, prep.max_ideal, 1)
    pw = (1.0 - alpha) ** np.arange(maxlen + 1, dtype=np.float64)
    L = maxlen if k is None else min(k, maxlen)
    r = np.arange(1, L + 1, dtype=np.float64)
    scale = alpha
    bound = np.zeros(1, dtype=np.float64)
    reciprocal = kind in (K.KIND_ERR_IA, K.KIND_NERR_IA, K.KIND_ERR_IA_BOUND)
    if kind in (K.KIND_NRBP, _KIND_NNRBP):
        disc = beta ** (r - 1.0)  # beta^{r-1}
        scale = 1.0 - (1.0 - alpha) * beta
    elif reciprocal:
        disc = 1.0 / r
    else:
        disc = 1.0 / np.log2(r + 1.0)
    if kind in _BOUND_KINDS:
        depth = maxlen if k is None else k
        if depth > _MAX_BOUND_DEPTH:
            raise ValueError(
                f"the collection-independent bound (bound=True) is summed rank by rank; k must be at most "
                f"{_MAX_BOUND_DEPTH} (ndeval's cutoffs are at most 20), got {k}; pass bound=False for the raw sum"
            )
        rb = np.arange(1, depth + 1, dtype=np.float64)
        w = 1.0 / rb if reciprocal else 1.0 / np.log2(rb + 1.0)
        # bound[j] = sum_{r <= j} (1 - alpha)^{r-1} w(r): every document holds every subtopic
        bound = np.concatenate([[0.0], np.cumsum((1.0 - alpha) ** (rb - 1.0) * w)])
    if kind == _KIND_NNRBP:
        kind = K.KIND_ALPHA_NDCG
    out = np.empty(batch.n_queries, dtype=np.float64)
    kernel = K.div_parallel if use_parallel(batch.n_queries) else K.div_serial
    kernel(prep.nug, batch.scores, batch.labels, batch.starts, batch.counts, batch.mask,
           np.int64(-1 if k is None else k), np.int64(ties_code_), np.int64(kind), pw, disc, bound,
           prep.inug, prep.istarts, prep.icounts, float(scale), float(empty), np.int64(maxlen), out)
    return out


def _measure(kind, nuggets, scores, k, *, alpha=0.5, beta=0.5, rel=None, lengths=None, mask=None, offsets=None,
             ties="pessimistic", ideal=None, ideal_offsets=None, empty="zero"):
    k = positive_int(k)
    alpha = _check_alpha(alpha)
    beta = _check_alpha(beta, "beta")
    tcode = _tie_code(ties)
    ev = _measures.empty_value(empty)
    prep = prepare(nuggets, scores, lengths=lengths, mask=mask, offsets=offsets, ideal=ideal,
                   ideal_offsets=ideal_offsets, rel=rel)
    return run(prep, kind, k, alpha, tcode, ev, beta)


def alpha_ndcg(nuggets, scores, k=20, alpha=0.5, *, rel=None, lengths=None, mask=None, offsets=None,
               ties="pessimistic", ideal=None, ideal_offsets=None, empty="zero"):
    """alpha-nDCG@k (Clarke et al., SIGIR 2008).

    Gain of rank ``r``: ``G[r] = sum_i J(d_r, i) (1 - alpha)^{c_i(r)}``, where
    ``c_i(r)`` counts the documents above rank ``r`` that hold nugget ``i``;
    ``alpha-DCG@k = sum_{r <= k} G[r] / log2(r + 1)``.  alpha-nDCG@k divides it by the
    alpha-DCG@k of the *greedy* ideal ranking: each step takes the document with the
    largest remaining gain, ties to the lowest index (the exact ideal is NP-hard).

    Parameters
    ----------
    nuggets : array-like
        ``(n_queries, n_docs, n_subtopics)``, or ``(n_docs_total, n_subtopics)`` with
        ``offsets=``.  Values > 0 count as 1; negative / NaN values are an error.
    scores : array-like
        ``(n_queries, n_docs)``, or flat with ``offsets=``.
    k : int or None, default 20
        Cutoff (any value; no limit of 20).  None: the whole row.
    alpha : float in [0, 1], default 0.5
        Redundancy penalty; ``alpha = 0`` gives nDCG with "number of nuggets" gains.
    rel : number > 0, optional
        ``J(d, i) = 1`` when the judgment is ``>= rel`` (ir_measures' and ndeval's
        relevance level).  None (default): when it is ``> 0``.
    lengths, mask, offsets
        Padding / ragged layout, as in :func:`rankjit.evaluate`.  ``mask=`` the judged
        documents evaluates on them alone (ir_measures' ``judged_only=True``).
    ties : {"pessimistic", "optimistic", "stable"}, default "pessimistic"
        Order among equal scores; the tie "label" of a document is the number of
        nuggets it holds (pessimistic: fewer nuggets first).  "average" is refused.
    ideal : array-like, optional
        Nugget judgments of every judged document of each query, for queries whose
        judged documents are not all in the row: ``(n_queries, n_judged, n_subtopics)``
        (all-zero rows are padding), or 2-D with ``ideal_offsets=``.  The greedy ideal
        then runs over this set instead of the row's documents.
    ideal_offsets : array of int, optional
        CSR offsets (n_queries + 1) of a 2-D ``ideal``.
    empty : {"zero", "one", "nan"}, default "zero"
        Value for a query whose ideal alpha-DCG is 0 (no relevant nugget).

    Returns
    -------
    ndarray of float64, one value per query.

    Examples
    --------
    >>> import numpy as np, rankjit.diversity as D
    >>> nug = np.array([[[1, 1, 0], [0, 1, 0], [0, 0, 1]]])   # 1 query, 3 docs, 3 subtopics
    >>> scores = np.array([[3.0, 2.0, 1.0]])
    >>> # G = <2, 1/2, 1>, greedy ideal G' = <2, 1, 1/2>
    >>> round(float(D.alpha_ndcg(nug, scores, k=3)[0]), 6)
    0.977276
    """
    return _measure(K.KIND_ALPHA_NDCG, nuggets, scores, k, alpha=alpha, rel=rel, lengths=lengths, mask=mask,
                    offsets=offsets, ties=ties, ideal=ideal, ideal_offsets=ideal_offsets, empty=empty)


def alpha_dcg(nuggets, scores, k=20, alpha=0.5, *, bound=True, rel=None, lengths=None, mask=None, offsets=None,
              ties="pessimistic", ideal=None, ideal_offsets=None, empty="zero"):
    """alpha-DCG@k, divided by ndeval's collection-independent bound (``bound=False``: the raw sum).

    Raw (Clarke et al.): ``alpha-DCG@k = sum_{r <= k} G[r] / log2(r + 1)`` with the gains
    of :func:`alpha_ndcg`.  With ``bound=True`` (default; ndeval's and ir_measures'
    ``alpha_DCG``) it is divided by ``S_q * sum_{r <= k} (1 - alpha)^{r-1} / log2(r + 1)``,
    the alpha-DCG of a ranking whose every document holds all ``S_q`` subtopics of the
    query (subtopics with a relevant document in the row or in ``ideal``); queries
    with ``S_q = 0`` then get ``empty``.  With ``k=None`` the bound runs to the row's
    length.  ``ideal`` / ``ideal_offsets`` only supply ``S_q``; other parameters as in
    :func:`alpha_ndcg`.

    Examples
    --------
    >>> import numpy as np, rankjit.diversity as D
    >>> nug = np.array([[[1, 1], [0, 1]]])
    >>> bool(float(D.alpha_dcg(nug, np.array([[2.0, 1.0]]), k=2, bound=False)[0]) == 2 + 0.5 / np.log2(3))
    True
    >>> bool(float(D.alpha_dcg(nug, np.array([[2.0, 1.0]]), k=2)[0]) == (2 + 0.5 / np.log2(3)) / (2 + 1 / np.log2(3)))
    True
    """
    kind = K.KIND_ALPHA_DCG_BOUND if flag(bound, "bound") else K.KIND_ALPHA_DCG
    return _measure(kind, nuggets, scores, k, alpha=alpha, rel=rel, lengths=lengths, mask=mask, offsets=offsets,
                    ties=ties, ideal=ideal, ideal_offsets=ideal_offsets, empty=empty)


def err_ia(nuggets, scores, k=20, alpha=0.5, *, normalize=False, bound=True, rel=None, lengths=None, mask=None,
           offsets=None, ties="pessimistic", ideal=None, ideal_offsets=None, empty="zero"):
    """Intent-aware ERR@k with binary judgments (Chapelle et al. 2011), normalised as ndeval does.

    Per subtopic ``i``: ``ERR_i@k = sum_{r <= k} (1/r) alpha J(d_r, i) prod_{j < r} (1 - alpha J(d_j, i))``
    -- ERR with binary grades, whose stop probability ``R(1) = (2^1 - 1) / 2^1 = 1/2``
    is ``alpha`` (default 0.5).  Equivalently ``sum_i ERR_i@k = alpha sum_r G[r] / r``
    with the alpha-nDCG gains ``G``.  ``S_q``: the subtopics of the query with at least
    one relevant document (in the row or in ``ideal``).

    * default (``bound=True``; ndeval's and ir_measures' ``ERR_IA``): divided by the value of
      a ranking whose every document holds every subtopic,
      ``ERR-IA@k = sum_r G[r] / r / (S_q sum_{r <= k} (1 - alpha)^{r-1} / r)``; in [0, 1].
      With ``k=None`` the bound runs to the row's length.
    * ``bound=False``: the mean over subtopics, ``(1 / S_q) sum_i ERR_i@k`` (rankjit's ERR-IA
      before 2026-11; in [0, 1)).
    * ``normalize=True`` (nERR-IA, ndeval's column of that name; ``bound`` is then moot):
      divided by the ERR-IA of the greedy alpha-nDCG ideal ranking (same ``alpha``); in
      [0, 1] unless the greedy ideal is beaten; with ``alpha = 0`` it is ``empty``.

    Queries with ``S_q = 0`` get ``empty``.  Other parameters as in :func:`alpha_ndcg`.

    Examples
    --------
    >>> import numpy as np, rankjit.diversity as D
    >>> nug = np.array([[[1, 0], [1, 0], [0, 0]]])   # subtopic 1 has no relevant document
    >>> float(D.err_ia(nug, np.array([[3.0, 2.0, 1.0]]), k=3, bound=False)[0])  # (1/2 + 1/2 * 1/2 * 1/2) / 1
    0.625
    >>> float(D.err_ia(nug, np.array([[3.0, 2.0, 1.0]]), k=3)[0])  # (1 + 1/2 / 2) / (1 + 1/2 / 2 + 1/4 / 3)
    0.9375
    """
    if flag(normalize, "normalize"):
        kind = K.KIND_NERR_IA
    else:
        kind = K.KIND_ERR_IA_BOUND if flag(bound, "bound") else K.KIND_ERR_IA
    return _measure(kind, nuggets, scores, k, alpha=alpha, rel=rel, lengths=lengths, mask=mask, offsets=offsets,
                    ties=ties, ideal=ideal, ideal_offsets=ideal_offsets, empty=empty)


def s_recall(nuggets, scores, k=20, *, rel=None, lengths=None, mask=None, offsets=None, ties="pessimistic",
             ideal=None, ideal_offsets=None, empty="zero"):
    """Subtopic recall S-recall@k (Zhai et al. 2003; ndeval's "strec", ir_measures' ``StRecall``).

    ``S-recall@k = |{i : J(d_r, i) = 1 for some r <= k}| / S_q``, where ``S_q`` counts
    the subtopics of the query with at least one relevant document in the row or in
    ``ideal``.  Not divided by the best achievable coverage at ``k``.  Queries with
    ``S_q = 0`` get ``empty``.

    Examples
    --------
    >>> import numpy as np, rankjit.diversity as D
    >>> nug = np.array([[[1, 0, 0], [1, 0, 0], [0, 1, 0]]])
    >>> D.s_recall(nug, np.array([[3.0, 2.0, 1.0]]), k=2).tolist()
    [0.5]
    """
    return _measure(K.KIND_S_RECALL, nuggets, scores, k, rel=rel, lengths=lengths, mask=mask, offsets=offsets,
                    ties=ties, ideal=ideal, ideal_offsets=ideal_offsets, empty=empty)


def p_ia(nuggets, scores, k=20, *, rel=None, lengths=None, mask=None, offsets=None, ties="pessimistic",
         ideal=None, ideal_offsets=None, empty="zero"):
    """Intent-aware precision P-IA@k (Agrawal et al. 2009; ndeval's "P-IA", ir_measures' ``P_IA``).

    ``P-IA@k = (1 / S_q) sum_i |{r <= k : J(d_r, i) = 1}| / k``: precision per subtopic,
    averaged over the ``S_q`` subtopics with a relevant document (row or ``ideal``).
    Divided by ``k`` even when the row is shorter (``k=None``: by the row's length).
    Queries with ``S_q = 0`` get ``empty``.

    Examples
    --------
    >>> import numpy as np, rankjit.diversity as D
    >>> nug = np.array([[[1, 1], [0, 0], [0, 1]]])
    >>> float(D.p_ia(nug, np.array([[3.0, 2.0, 1.0]]), k=2)[0])   # (1/2 + 1/2) / 2
    0.5
    """
    return _measure(K.KIND_P_IA, nuggets, scores, k, rel=rel, lengths=lengths, mask=mask, offsets=offsets,
                    ties=ties, ideal=ideal, ideal_offsets=ideal_offsets, empty=empty)


def ap_ia(nuggets, scores, k=None, *, rel=None, lengths=None, mask=None, offsets=None, ties="pessimistic",
          ideal=None, ideal_offsets=None, empty="zero"):
    """Intent-aware average precision AP-IA (ndeval's "MAP-IA" per query, ir_measures' ``AP_IA``).

    ``AP-IA = (1 / S_q) sum_i AP_i``, ``AP_i = (1 / R_i) sum_{r <= k : J(d_r, i) = 1} P_i@r``,
    where ``P_i@r`` is the fraction of the top ``r`` documents relevant to subtopic ``i``
    and ``R_i`` the number of documents relevant to ``i`` in ``ideal`` (or, without it,
    in the row).  ``k=None`` (default, as ndeval): the whole row.  Queries with
    ``S_q = 0`` get ``empty``.

    Examples
    --------
    >>> import numpy as np, rankjit.diversity as D
    >>> nug = np.array([[[0, 1], [1, 1], [1, 0]]])
    >>> float(D.ap_ia(nug, np.array([[3.0, 2.0, 1.0]]))[0])   # (AP_0 = (1/2 + 2/3) / 2, AP_1 = (1 + 1) / 2) / 2
    0.7916666666666666
    """
    return _measure(K.KIND_AP_IA, nuggets, scores, k, rel=rel, lengths=lengths, mask=mask, offsets=offsets,
                    ties=ties, ideal=ideal, ideal_offsets=ideal_offsets, empty=empty)


def nrbp(nuggets, scores, k=None, alpha=0.5, beta=0.5, *, normalize=False, rel=None, lengths=None, mask=None,
         offsets=None, ties="pessimistic", ideal=None, ideal_offsets=None, empty="zero"):
    """Novelty- and rank-biased precision NRBP (Clarke et al., ICTIR 2009; ndeval's "NRBP" / "nNRBP").

    ``NRBP = (1 - (1 - alpha) beta) / S_q * sum_{r <= k} G[r] beta^{r-1}`` with the gains
    ``G`` of :func:`alpha_ndcg` (collection-independent normalisation: at most 1).
    ``normalize=True`` gives nNRBP: ``sum_r G[r] beta^{r-1}`` divided by the same sum
    over the greedy ideal ranking of :func:`alpha_ndcg`.  ``k=None`` (default, as
    ndeval): the whole row.  ``beta`` in [0, 1] is the patience.  Queries with
    ``S_q = 0`` (NRBP) or an ideal sum of 0 (nNRBP) get ``empty``.

    Examples
    --------
    >>> import numpy as np, rankjit.diversity as D
    >>> nug = np.array([[[1, 0], [1, 1]]])
    >>> float(D.nrbp(nug, np.array([[2.0, 1.0]]))[0])   # (1 - 1/4) / 2 * (1 + (1/2 + 1) / 2)
    0.65625
    """
    kind = _KIND_NNRBP if flag(normalize, "normalize") else K.KIND_NRBP
    return _measure(kind, nuggets, scores, k, alpha=alpha, beta=beta, rel=rel, lengths=lengths, mask=mask,
                    offsets=offsets, ties=ties, ideal=ideal, ideal_offsets=ideal_offsets, empty=empty)


# ---- evaluate() registration --------------------------------------------------------

_CACHE_KEY = "_rankjit_diversity_prepared"


#: the kernel's measure kind of each diversity family of the registry (rankjit._registry.INPUT_FAMILIES)
_KIND_OF_FAMILY = {
    "alpha_nDCG": K.KIND_ALPHA_NDCG, "alpha_DCG": K.KIND_ALPHA_DCG, "ERR_IA": K.KIND_ERR_IA,
    "nERR_IA": K.KIND_NERR_IA, "S_recall": K.KIND_S_RECALL, "P_IA": K.KIND_P_IA, "AP_IA": K.KIND_AP_IA,
    "NRBP": K.KIND_NRBP, "nNRBP": _KIND_NNRBP,
}


def _judged_rows(measure, nuggets, context):
    """``prepare()``'s row inputs with evaluate()'s unjudged documents left out (``judged=``).

    Padded rows get a mask (no copy of the inputs); ragged rows (``offsets=``, which take no
    mask) are cut down to their judged documents.  A document marked unjudged must hold no
    nugget (it cannot be relevant to a subtopic).
    """
    from rankjit._validation import document_flags

    judged = context.get("judged")
    if judged is None:
        raise ValueError(f"{measure.text!r} with judged_only=True needs judged= (True for each document the "
                         "qrels judge), as in evaluate(..., judged=...)")
    batch = context["batch"]  # evaluate()'s labels / scores layout
    flags = document_flags(batch, judged, "judged")  # flat, checked against the labels' layout
    real = np.ones(flags.shape[0], dtype=bool) if not batch.mask.shape[0] else batch.mask
    if batch.offsets is None and (batch.counts < batch.width).any():  # lengths=: cells past each row's end
        real = real & (np.arange(batch.width) < batch.counts[:, None]).reshape(-1)
    nug = _nugget_array(nuggets, "nuggets")
    if nug.ndim >= 2 and math.prod(nug.shape[:-1]) == flags.shape[0]:  # else prepare() says what is wrong
        held = (nug.reshape(flags.shape[0], -1) > 0).any(axis=1)
    else:
        held = np.zeros(flags.shape[0], dtype=bool)
    bad = held & ~flags & real
    if bad.any():
        q, pos = batch.locate(int(np.argmax(bad)))
        raise ValueError(f"the document in query {q} at position {pos} holds nuggets but is marked unjudged "
                         "(judged=False); an unjudged document is not relevant: mark it judged, or give it no nugget")
    keep = flags & real
    if batch.offsets is None:
        return {"nuggets": nuggets, "scores": context["scores"], "lengths": None, "offsets": None,
                "mask": keep.reshape(batch.n_queries, batch.width)}
    counts = np.add.reduceat(keep, batch.offsets[:-1]) if batch.n_queries else np.zeros(0, np.int64)
    counts[batch.counts == 0] = 0  # reduceat reads one cell of an empty row
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return {"nuggets": nug.reshape(flags.shape[0], -1)[keep] if nug.ndim == 2 else nuggets,
            "scores": np.asarray(context["scores"])[keep], "lengths": None, "mask": None, "offsets": offsets}


def evaluate_measure(measure, params, context):
    """One diversity measure of :func:`rankjit.evaluate`, per query (``context``: evaluate's inputs).

    The nugget judgments are binarised once per relevance level and evaluate() call.
    """
    kind = _KIND_OF_FAMILY[measure.family]
    nuggets = context.get("nuggets")
    if nuggets is None:
        raise ValueError(
            f"{measure.text} needs nugget judgments: pass nuggets= (n_queries, n_docs, n_subtopics) to evaluate()"
        )
    rel = params["rel"]  # (params: checked by the registry's records when evaluate() resolved the measure)
    judged_only = bool(context.get("judged_only"))
    # one binarisation per relevance level, row set and evaluate() call
    key = (_CACHE_KEY, rel, judged_only)
    prep = context.get(key)
    if prep is None:
        rows = {"nuggets": nuggets, "scores": context["scores"], "lengths": context.get("lengths"),
                "mask": context.get("mask"), "offsets": context.get("offsets")}
        if judged_only:  # the judged documents alone: a condensed list (ir_measures' judged_only=True)
            rows = _judged_rows(measure, nuggets, context)
        prep = prepare(rows["nuggets"], rows["scores"], lengths=rows["lengths"], mask=rows["mask"],
                       offsets=rows["offsets"], ideal=context.get("ideal"), ideal_offsets=context.get("ideal_offsets"),
                       rel=rel)
        context[key] = prep
    alpha = params.get("alpha", 0.5)  # (the kernel's arguments, unread by the families without them)
    beta = params.get("beta", 0.5)
    if kind == K.KIND_ERR_IA and params["normalize"]:
        kind = K.KIND_NERR_IA
    elif kind in (K.KIND_ERR_IA, K.KIND_ALPHA_DCG) and params["bound"]:
        kind = K.KIND_ERR_IA_BOUND if kind == K.KIND_ERR_IA else K.KIND_ALPHA_DCG_BOUND
    ev = _measures.empty_value(params["empty"])
    return run(prep, kind, measure.k, alpha, _tie_code(context.get("ties", "pessimistic")), ev, beta)
