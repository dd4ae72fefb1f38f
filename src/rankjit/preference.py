"""Recall-Paired Preference (Diaz & Ferraro, SIGIR 2022): :func:`rpp` and :func:`rpp_matrix`.

``f_i(pi)`` is the rank of the ``i``-th relevant document found by ranking ``pi``
(``i = 1..m``, ``m`` relevant documents in the query).  The preference of ranking
``a`` over ranking ``b`` is

    RPP(a, b) = sum_{i=1..m} p(i) * sgn(f_i(b) - f_i(a))      in [-1, 1],

positive when ``a`` reaches its recall levels earlier.  ``docs/rpp.md`` gives every
convention; importing this module registers ``RPP`` with :func:`rankjit.evaluate`
(system ``a`` = ``scores``, system ``b`` = the ``scores_b=`` input).

Lexicographic precision and recall (:func:`lexiprecision`, :func:`lexirecall` and their
``_matrix`` forms; Diaz, EVIA 2023; Diaz, Ekstrand & Mitra, TORS 2025) compare the same
sorted sequences ``f_1 <= ... <= f_m`` lexicographically, from the first recall level
(precision) or from the last (recall):

    LP(a, b) = sgn(f_i(b) - f_i(a)),  i = min {i : f_i(a) != f_i(b)}      (0 if none)
    LR(a, b) = sgn(f_i(b) - f_i(a)),  i = max {i : f_i(a) != f_i(b)}      (0 if none)

registered as ``LexiPrecision`` and ``LexiRecall``.
"""
from __future__ import annotations

import math

import numpy as np

from rankjit import _measures
from rankjit._kernels import lexi as LK
from rankjit._kernels import rpp as K
from rankjit._config import use_parallel
from rankjit._registry import INPUT_BY_NAME
from rankjit._kernels.ranking import TIES_AVERAGE
from rankjit._validation import _check_scores_dtype, as_batch, flag, positive_int, scan, ties_code

__all__ = ["rpp", "rpp_matrix", "lexiprecision", "lexirecall", "lexiprecision_matrix", "lexirecall_matrix"]

WEIGHTS = ("uniform", "inverse", "dcg")


def _weights(weights, length, where=""):
    """Per-recall-level weights w[0..length-1] and their prefix sums Z[0..length]; ``where`` (`` in 'RPP(...)'``)
    names the measure in messages."""
    i = np.arange(1, length + 1, dtype=np.float64)
    if isinstance(weights, str):
        if weights == "uniform":
            w = np.ones(length)
        elif weights == "inverse":
            w = 1.0 / i
        elif weights == "dcg":
            w = 1.0 / np.log2(i + 1.0)
        else:
            raise ValueError(f"unknown weights={weights!r}{where}; valid values: 'uniform', 'inverse', 'dcg', or a "
                             "1-D array of per-recall-level weights (level 1, 2, ...)")
    else:
        a = _measures.float_array(weights, f"weights{where} must be 'uniform', 'inverse', 'dcg' or a 1-D array of "
                                           "per-recall-level weights")
        if a.ndim != 1 or a.shape[0] == 0:
            raise ValueError(f"weights{where} must be a 1-D, non-empty array (one weight per recall level), got "
                             f"shape {a.shape}")
        if not np.isfinite(a).all() or (a < 0).any():
            raise ValueError(f"weights{where} must hold finite, non-negative weights")
        if a[0] <= 0:
            raise ValueError(f"weights{where} must give the first recall level a weight > 0 (weights are normalised "
                             "over the query's recall levels)")
        w = np.zeros(length)
        w[: min(length, a.shape[0])] = a[:length]  # 0 beyond the array's end
    Z = np.zeros(length + 1)
    np.cumsum(w, out=Z[1:])  # sequential sums: Z[m] == the kernel's sum when every sign is +1
    return np.ascontiguousarray(w), Z


def _empty(empty, name="RPP"):
    if empty in ("nan", None):
        return math.nan
    if empty == "zero":
        return 0.0
    raise ValueError(f"unknown empty={empty!r} in {name!r}; valid values: 'nan' (drop the query), 'zero' "
                     f"('one' would break {name}(a, b) = -{name}(b, a))")


def _tie_code(ties, name="RPP"):
    code = ties_code(ties)
    if code == TIES_AVERAGE:
        raise ValueError(f"ties='average' is not available for {name}; use ties='pessimistic', 'optimistic' or "
                         "'stable'")
    return code


def _rel(rel):
    """``rel`` as a finite float: the registry's check of the preferences' ``rel`` (one home for it)."""
    return float(INPUT_BY_NAME["RPP"].param("rel").check(rel))


def _sys_counts(lengths, batch, name):
    """Per-query retrieved prefix of one system (int64), or an empty array."""
    if lengths is None:
        return np.zeros(0, np.int64)
    a = np.asarray(lengths)
    if a.ndim != 1 or a.shape[0] != batch.n_queries:
        raise ValueError(f"{name} must be 1-D with one entry per query ({batch.n_queries}), got shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, got dtype {a.dtype}")
    a = a.astype(np.int64)
    if (a < 0).any():
        q = int(np.argmax(a < 0))
        raise ValueError(f"{name}[{q}] = {a[q]} is negative")
    return a


def _sys_mask(mask, shape, name):
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"{name} must be a boolean array (True = retrieved by the system), got dtype {m.dtype}")
    if m.shape != shape:
        raise ValueError(f"{name} shape {m.shape} does not match scores {shape}")
    return np.ascontiguousarray(m).reshape(-1)


class _Inputs:
    """Validated relevance data: tie labels, mode, threshold, nuggets, batch layout."""

    def __init__(self, batch, tl, mode, thr, rel, nug):
        self.batch = batch
        self.tl = tl
        self.mode = mode
        self.thr = thr
        self.rel = rel
        self.nug = nug


def _relevance(labels, first_scores, *, graded, nuggets, rel, lengths, mask, offsets, check=True, scores_name=None):
    """Validated relevance inputs; ``scores_name`` names ``first_scores`` in the NaN message."""
    rel = _rel(rel)
    graded = flag(graded, "graded")
    if nuggets is not None:
        if labels is not None:
            raise ValueError("pass labels or nuggets= (subtopic RPP), not both; use labels=None with nuggets=")
        if graded:
            raise ValueError("graded=True needs graded labels; subtopic RPP (nuggets=) uses binary judgments")
        from rankjit.diversity import prepare

        prep = prepare(nuggets, first_scores, lengths=lengths, mask=mask, offsets=offsets, scores_name=scores_name)
        return _Inputs(prep.batch, prep.batch.labels, K.MODE_SUBTOPIC, 1.0, rel, prep.nug)
    if labels is None:
        raise ValueError("labels is None: pass relevance labels, or nuggets= for subtopic RPP")
    batch = as_batch(labels, first_scores, lengths=lengths, mask=mask, offsets=offsets)
    if check or batch.labels.dtype.kind == "f":
        # the pair kernel's fused checks see NaN scores and negative labels, not NaN / infinite labels
        scan(batch, scores_name=scores_name)
    mode = K.MODE_GRADED if graded else K.MODE_BINARY
    return _Inputs(batch, batch.labels, mode, rel, rel, np.zeros((0, 1), np.uint8))


def _same_layout_scores(inp, scores, name, lengths, mask, offsets, check=True, system=None):
    """Validate another system's scores against the batch layout (NaN check unless ``check=False``).

    ``name`` names them in the messages (with ``system``, its index in a stack, for a NaN).
    """
    sc = scores if isinstance(scores, np.ndarray) else np.asarray(scores)
    shape = inp.batch.scores.shape if inp.batch.offsets is not None else (inp.batch.n_queries, inp.batch.width)
    if sc.shape != shape:
        raise ValueError(f"{name} has shape {sc.shape}, expected {shape} like the first system's scores")
    if not check:
        # the layout was validated with the first system: only dtype and contiguity remain
        return np.ascontiguousarray(_check_scores_dtype(sc)).reshape(-1)
    b = as_batch(inp.tl.reshape(shape), sc, lengths=lengths, mask=mask, offsets=offsets)
    scan(b, allow_negative=True, scores_name=name if system is None else f"{name}, system {system}")
    return b.scores


def _raise_fused(bad, batch, sa, sb):
    """Raise the validation error found by the pair kernel's fused checks (first query first)."""
    q = int(np.flatnonzero(bad)[0])
    flags = int(bad[q])
    start, count = int(batch.starts[q]), int(batch.counts[q])
    real = np.ones(count, bool) if not batch.mask.shape[0] else batch.mask[start:start + count]
    for bit, arr, name in ((1, sa, "scores_a"), (2, sb, "scores_b")):
        if flags & bit:
            pos = int(np.flatnonzero(np.isnan(arr[start:start + count]) & real)[0])
            raise ValueError(
                f"NaN score in query {q} at position {pos} ({name}); replace NaN scores (e.g. with -inf to rank them "
                "last) or mask those documents out"
            )
    pos = int(np.flatnonzero((batch.labels[start:start + count] < 0) & real)[0])
    raise ValueError(
        f"negative label {batch.labels[start + pos]} in query {q} at position {pos}; labels must be >= 0 "
        "(map non-relevant judgments such as trec_eval's negative grades to 0, or mask padding out)"
    )


class _Pair:
    """Validated inputs of a two-system call (system masks combined with the row mask, as the kernels expect)."""

    def __init__(self, inp, sb, ca, cb, ma, mb, bad):
        self.inp = inp
        self.sb = sb
        self.ca = ca
        self.cb = cb
        self.ma = ma
        self.mb = mb
        self.bad = bad

    def raise_fused(self):
        """Raise the error found by the kernel's fused checks, if any."""
        if self.bad.shape[0] and self.bad.any():
            _raise_fused(self.bad, self.inp.batch, self.inp.batch.scores, self.sb)


def _pair_inputs(labels, scores_a, scores_b, *, graded, nuggets, rel, lengths, mask, offsets, lengths_a, lengths_b,
                 mask_a, mask_b):
    # binary / graded: NaN scores and negative labels are checked inside the kernel (one pass over memory)
    fused = nuggets is None
    inp = _relevance(labels, scores_a, graded=graded, nuggets=nuggets, rel=rel, lengths=lengths, mask=mask,
                     offsets=offsets, check=not fused, scores_name="scores_a")
    batch = inp.batch
    sb = _same_layout_scores(inp, scores_b, "scores_b", lengths, mask, offsets, check=not fused)
    shape = batch.scores.shape if batch.offsets is not None else (batch.n_queries, batch.width)
    ca = _sys_counts(lengths_a, batch, "lengths_a")
    cb = _sys_counts(lengths_b, batch, "lengths_b")
    ma = _sys_mask(mask_a, shape, "mask_a")
    mb = _sys_mask(mask_b, shape, "mask_b")
    if batch.mask.shape[0]:  # the kernel expects system masks combined with the row mask
        ma = None if ma is None else ma & batch.mask
        mb = None if mb is None else mb & batch.mask
    empty_mask = np.zeros(0, np.bool_)
    bad = np.zeros(batch.n_queries if fused else 0, dtype=np.int8)
    return _Pair(inp, sb, ca, cb, empty_mask if ma is None else ma, empty_mask if mb is None else mb, bad)


def _stack_inputs(labels, scores_stack, *, graded, nuggets, rel, lengths, mask, offsets, system_lengths,
                  system_mask):
    """Validated inputs of a many-system call: (relevance inputs, flat scores, system lengths, system mask)."""
    st = scores_stack if isinstance(scores_stack, np.ndarray) else np.asarray(scores_stack)
    want = 2 if offsets is not None else 3
    if st.ndim != want:
        layout = "(n_systems, n_docs_total) with offsets=" if offsets is not None else "(n_systems, n_queries, n_docs)"
        raise ValueError(f"scores_stack must be {want}-D {layout}, got shape {st.shape}")
    if st.shape[0] == 0:
        raise ValueError("scores_stack holds no system (first axis of length 0)")
    ref_shape = tuple(np.shape(labels)) if labels is not None else tuple(np.shape(nuggets))[:-1]
    if nuggets is None or labels is None:
        if tuple(st.shape[1:]) != ref_shape:
            what = "labels" if labels is not None else "nuggets (without the subtopic axis)"
            raise ValueError(f"scores_stack has shape {st.shape}; expected (n_systems, *{ref_shape}) to match {what}")
    if st.dtype.kind not in "iufb":
        raise TypeError(f"scores_stack must be numeric, got dtype {st.dtype}")
    if st.dtype != np.float32 and st.dtype != np.float64:
        st = st.astype(np.float64)
    st = np.ascontiguousarray(st)
    n_sys = st.shape[0]
    inp = _relevance(labels, st[0], graded=graded, nuggets=nuggets, rel=rel, lengths=lengths, mask=mask,
                     offsets=offsets, scores_name="scores_stack[0], system 0")
    batch = inp.batch
    for s in range(1, n_sys):
        _same_layout_scores(inp, st[s], f"scores_stack[{s}]", lengths, mask, offsets, system=s)
    n_q = batch.n_queries
    flat = st.reshape(n_sys, -1)
    if system_lengths is None:
        sc = np.zeros((0, 0), np.int64)
    else:
        sc = np.asarray(system_lengths)
        if sc.shape != (n_sys, n_q):
            raise ValueError(f"system_lengths must have shape (n_systems, n_queries) = ({n_sys}, {n_q}), "
                             f"got {sc.shape}")
        if sc.dtype.kind not in "iu":
            raise TypeError(f"system_lengths must be integers, got dtype {sc.dtype}")
        if (sc < 0).any():
            raise ValueError("system_lengths must be >= 0")
        sc = np.ascontiguousarray(sc, dtype=np.int64)
    if system_mask is None:
        sm = np.zeros((0, 0), np.bool_)
    else:
        sm = np.asarray(system_mask)
        if sm.dtype != np.bool_:
            raise TypeError(f"system_mask must be boolean (True = retrieved), got dtype {sm.dtype}")
        if sm.shape != st.shape:
            raise ValueError(f"system_mask shape {sm.shape} does not match scores_stack {st.shape}")
        sm = np.ascontiguousarray(sm).reshape(n_sys, -1)
        if batch.mask.shape[0]:  # combined with the row mask, as the kernel expects
            sm = sm & batch.mask[None, :]
    return inp, flat, sc, sm


def rpp(labels, scores_a, scores_b, k=None, weights="uniform", *, graded=False, nuggets=None, rel=1, lengths=None,
        mask=None, offsets=None, lengths_a=None, lengths_b=None, mask_a=None, mask_b=None, empty="nan",
        ties="pessimistic"):
    """Recall-Paired Preference of ranking ``a`` over ranking ``b``, per query.

    ``RPP(a, b) = sum_{i=1..m} p(i) sgn(f_i(b) - f_i(a))`` where ``f_i(pi)`` is the
    rank of the ``i``-th relevant document found by ``pi`` and ``m`` the number of
    relevant documents of the query (``label >= rel``).  In [-1, 1]; > 0 when ``a`` is
    preferred; ``RPP(a, b) = -RPP(b, a)`` and ``RPP(a, a) = 0`` exactly.

    Parameters
    ----------
    labels : array-like or None
        ``(n_queries, n_docs)`` relevance grades (or flat with ``offsets=``), shared by
        both systems.  None with ``nuggets=`` (subtopic RPP).
    scores_a, scores_b : array-like
        The two systems' scores over the same documents, shaped like ``labels``.
    k : int, optional
        Cutoff: a relevant document ranked below ``k`` counts as not retrieved.
    weights : {"uniform", "inverse", "dcg"} or array, default "uniform"
        ``p(i)`` proportional to 1 (RPP), ``1/i`` (INVPP), ``1/log2(i+1)`` (DCGPP), or
        ``w[i-1]`` (0 beyond the array's end; ``w[0] > 0``); always normalised to sum
        to 1 over the query's ``m`` recall levels.
    graded : bool, default False
        For each grade ``g >= rel`` (and > 0) present in the query, binary relevance
        ``label >= g``; the per-grade values are combined weighted by the number of
        documents relevant at that grade.
    nuggets : array-like, optional
        Subtopic RPP: ``(n_queries, n_docs, n_subtopics)`` judgments (> 0 = relevant;
        flat 2-D with ``offsets=``); RPP per subtopic with a relevant document,
        averaged over those subtopics.  Ties are broken on the number of nuggets.
    rel : number, default 1
        Relevance threshold (binary) / lowest grade threshold (graded).
    lengths, mask, offsets
        The documents of each query (padding / ragged layout), shared by both systems.
    lengths_a, lengths_b, mask_a, mask_b
        What each system retrieved: the first ``lengths_x[q]`` documents of the row, or
        the documents where ``mask_x`` is True.  A relevant document a system did not
        retrieve (or ranked below ``k``) is worse than every retrieved position; two
        such documents tie.
    empty : {"nan", "zero"}, default "nan"
        Value for a query without relevant documents (NaN: drop it, as the reference
        implementation does; use ``np.nanmean``).
    ties : {"pessimistic", "optimistic", "stable"}, default "pessimistic"
        Order among equal scores within each system (on ``labels``; pessimistic:
        lower label first).

    Returns
    -------
    ndarray of float64, one value per query.

    Examples
    --------
    >>> import numpy as np, rankjit.preference as P
    >>> labels = np.array([[1, 0, 1, 0]])
    >>> a = np.array([[4.0, 3.0, 2.0, 1.0]])   # relevant at ranks 1, 3
    >>> b = np.array([[1.0, 4.0, 3.0, 2.0]])   # relevant at ranks 4, 2
    >>> P.rpp(labels, a, b).tolist()           # (sgn(2 - 1) + sgn(4 - 3)) / 2
    [1.0]
    """
    k = positive_int(k)
    tcode = _tie_code(ties)
    ev = _empty(empty)
    pr = _pair_inputs(labels, scores_a, scores_b, graded=graded, nuggets=nuggets, rel=rel, lengths=lengths,
                      mask=mask, offsets=offsets, lengths_a=lengths_a, lengths_b=lengths_b, mask_a=mask_a,
                      mask_b=mask_b)
    inp, batch = pr.inp, pr.inp.batch
    buf = max(batch.max_count, 1)
    w, Z = _weights(weights, buf)
    out = np.empty(batch.n_queries, dtype=np.float64)
    kernel = K.pair_parallel if use_parallel(batch.n_queries) else K.pair_serial
    kernel(inp.tl, batch.scores, pr.sb, batch.starts, batch.counts, batch.mask, pr.ca, pr.ma, pr.cb, pr.mb,
           np.int64(-1 if k is None else k), np.int64(tcode), np.int64(inp.mode), float(inp.thr), float(inp.rel),
           inp.nug, w, Z, float(ev), np.int64(buf), out, pr.bad)
    pr.raise_fused()
    return out


def rpp_matrix(labels, scores_stack, k=None, weights="uniform", *, graded=False, nuggets=None, rel=1, lengths=None,
               mask=None, offsets=None, system_lengths=None, system_mask=None, per_query=False, empty="nan",
               ties="pessimistic"):
    """Mean RPP of every pair of systems, in one pass.

    Parameters
    ----------
    labels : array-like or None
        As in :func:`rpp`.
    scores_stack : array-like
        ``(n_systems, n_queries, n_docs)`` scores, or ``(n_systems, n_docs_total)`` with
        ``offsets=``.
    system_lengths : (n_systems, n_queries) int array, optional
        What each system retrieved (a prefix of the row); see :func:`rpp`.
    system_mask : bool array shaped like ``scores_stack``, optional
        What each system retrieved.
    per_query : bool, default False
        Also return the per-query matrices, shape ``(n_queries, n_systems, n_systems)``.
    k, weights, graded, nuggets, rel, lengths, mask, offsets, empty, ties
        As in :func:`rpp`.

    Returns
    -------
    M : ndarray (n_systems, n_systems)
        ``M[a, b]`` = mean over queries of ``RPP(a, b)``; queries whose value is NaN
        (no relevant document, ``empty="nan"``) are left out of the mean (NaN when no
        query is left).  ``M = -M.T``, zero diagonal.
    per_query : ndarray (n_queries, n_systems, n_systems)
        Only with ``per_query=True``.

    Examples
    --------
    >>> import numpy as np, rankjit.preference as P
    >>> labels = np.array([[1, 0, 1, 0]])
    >>> stack = np.array([[[4.0, 3.0, 2.0, 1.0]], [[1.0, 4.0, 3.0, 2.0]], [[4.0, 3.0, 2.0, 1.0]]])
    >>> P.rpp_matrix(labels, stack).tolist()
    [[0.0, 1.0, 0.0], [-1.0, 0.0, -1.0], [0.0, 1.0, 0.0]]
    """
    k = positive_int(k)
    tcode = _tie_code(ties)
    ev = _empty(empty)
    inp, flat, sc, sm = _stack_inputs(labels, scores_stack, graded=graded, nuggets=nuggets, rel=rel, lengths=lengths,
                                      mask=mask, offsets=offsets, system_lengths=system_lengths,
                                      system_mask=system_mask)
    batch = inp.batch
    n_sys, n_q = flat.shape[0], batch.n_queries
    buf = max(batch.max_count, 1)
    w, Z = _weights(weights, buf)
    n_chunks = (n_q + K.CHUNK_SIZE - 1) // K.CHUNK_SIZE
    sums = np.zeros((n_chunks, n_sys, n_sys), dtype=np.float64)
    n_valid = np.zeros(n_chunks, dtype=np.int64)
    pq = np.empty((n_q, n_sys, n_sys) if per_query else (0, 0, 0), dtype=np.float64)
    kernel = K.matrix_parallel if use_parallel(n_q) else K.matrix_serial
    kernel(inp.tl, flat, batch.starts, batch.counts, batch.mask, sc, sm, np.int64(-1 if k is None else k),
           np.int64(tcode), np.int64(inp.mode), float(inp.thr), float(inp.rel), inp.nug, w, Z, float(ev),
           np.int64(buf), sums, n_valid, pq)
    return _matrix_result(sums, n_valid, pq, per_query)


def _matrix_result(sums, n_valid, pq, per_query):
    """Mean over the counted queries of the per-chunk sums (NaN when none counts), and the per-query values."""
    n_sys = sums.shape[1]
    total = int(n_valid.sum())
    if total:
        M = np.add.reduce(sums, axis=0) / total
    else:
        M = np.full((n_sys, n_sys), math.nan)
    if per_query:
        return M, pq
    return M


# ---- lexicographic precision and recall -----------------------------------------------

VARIANTS = ("sgn", "rr")


def _lp_kind(variant):
    if variant == "sgn":
        return LK.KIND_SGN_LP
    if variant == "rr":
        return LK.KIND_RR_LP
    raise ValueError(f"unknown variant={variant!r} in 'lexiprecision'; valid values: 'sgn' (sgnLP, in {{-1, 0, 1}}), "
                     "'rr' (rrLP, the difference of reciprocal ranks at the first recall level that differs)")


def _lexi_pair(name, kind, labels, scores_a, scores_b, k, rel, lengths, mask, offsets, lengths_a, lengths_b, mask_a,
               mask_b, empty, ties):
    k = positive_int(k)
    tcode = _tie_code(ties, name)
    ev = _empty(empty, name)
    pr = _pair_inputs(labels, scores_a, scores_b, graded=False, nuggets=None, rel=rel, lengths=lengths, mask=mask,
                      offsets=offsets, lengths_a=lengths_a, lengths_b=lengths_b, mask_a=mask_a, mask_b=mask_b)
    inp, batch = pr.inp, pr.inp.batch
    out = np.empty(batch.n_queries, dtype=np.float64)
    kernel = LK.pair_parallel if use_parallel(batch.n_queries) else LK.pair_serial
    kernel(inp.tl, batch.scores, pr.sb, batch.starts, batch.counts, batch.mask, pr.ca, pr.ma, pr.cb, pr.mb,
           np.int64(-1 if k is None else k), np.int64(tcode), float(inp.thr), np.int64(kind), float(ev),
           np.int64(max(batch.max_count, 1)), out, pr.bad)
    pr.raise_fused()
    return out


def _lexi_matrix(name, kind, labels, scores_stack, k, rel, lengths, mask, offsets, system_lengths, system_mask,
                 per_query, empty, ties):
    k = positive_int(k)
    tcode = _tie_code(ties, name)
    ev = _empty(empty, name)
    inp, flat, sc, sm = _stack_inputs(labels, scores_stack, graded=False, nuggets=None, rel=rel, lengths=lengths,
                                      mask=mask, offsets=offsets, system_lengths=system_lengths,
                                      system_mask=system_mask)
    batch = inp.batch
    n_sys, n_q = flat.shape[0], batch.n_queries
    n_chunks = (n_q + K.CHUNK_SIZE - 1) // K.CHUNK_SIZE
    sums = np.zeros((n_chunks, n_sys, n_sys), dtype=np.float64)
    n_valid = np.zeros(n_chunks, dtype=np.int64)
    pq = np.empty((n_q, n_sys, n_sys) if per_query else (0, 0, 0), dtype=np.float64)
    kernel = LK.matrix_parallel if use_parallel(n_q) else LK.matrix_serial
    kernel(inp.tl, flat, batch.starts, batch.counts, batch.mask, sc, sm, np.int64(-1 if k is None else k),
           np.int64(tcode), float(inp.thr), np.int64(kind), float(ev), np.int64(max(batch.max_count, 1)), sums,
           n_valid, pq)
    return _matrix_result(sums, n_valid, pq, per_query)


def lexiprecision(labels, scores_a, scores_b, k=None, *, variant="sgn", rel=1, lengths=None, mask=None, offsets=None,
                  lengths_a=None, lengths_b=None, mask_a=None, mask_b=None, empty="nan", ties="pessimistic"):
    """Lexicographic precision of ranking ``a`` over ranking ``b``, per query (Diaz, EVIA 2023).

    With ``f_1 <= ... <= f_m`` the ranks of the ``m`` relevant documents (``label >= rel``)
    in each ranking (infinite for one not retrieved), the rankings are compared
    lexicographically from the first recall level: with ``i`` the first level where
    ``f_i(a) != f_i(b)``,

        sgnLP(a, b) = sgn(f_i(b) - f_i(a))           in {-1, 0, 1}
        rrLP(a, b)  = 1 / f_i(a) - 1 / f_i(b)         in [-1, 1]   (1 / inf = 0)

    and 0 when no level differs.  > 0 when ``a`` is preferred; exactly antisymmetric.
    It refines reciprocal rank: when RR differs, sgnLP = sgn(RR(a) - RR(b)).

    Parameters
    ----------
    labels : array-like
        ``(n_queries, n_docs)`` relevance grades (or flat with ``offsets=``), shared by
        both systems; relevant means ``label >= rel`` (binary, as in pref_eval).
    scores_a, scores_b : array-like
        The two systems' scores over the same documents, shaped like ``labels``.
    k : int, optional
        Cutoff: a relevant document ranked below ``k`` counts as not retrieved.
    variant : {"sgn", "rr"}, default "sgn"
        sgnLP (pref_eval's ``lexiprecision``) or rrLP (``rrlexiprecision``).
    rel : number, default 1
        Relevance threshold.
    lengths, mask, offsets, lengths_a, lengths_b, mask_a, mask_b, empty, ties
        As in :func:`rpp`: the documents of each query, what each system retrieved (a
        relevant document not retrieved is worse than every retrieved position; two such
        documents tie), the value of a query without relevant documents (NaN: drop it,
        as pref_eval does) and the order among equal scores.

    Returns
    -------
    ndarray of float64, one value per query.

    Examples
    --------
    >>> import numpy as np, rankjit.preference as P
    >>> labels = np.array([[1, 0, 1, 0, 0]])
    >>> a = np.array([[5.0, 4.0, 3.0, 2.0, 1.0]])   # relevant at ranks 1, 3
    >>> b = np.array([[5.0, 1.0, 2.0, 4.0, 3.0]])   # relevant at ranks 1, 4: same RR
    >>> P.lexiprecision(labels, a, b).tolist(), P.lexiprecision(labels, a, b, variant="rr").tolist()
    ([1.0], [0.08333333333333331])
    """
    return _lexi_pair("lexiprecision", _lp_kind(variant), labels, scores_a, scores_b, k, rel, lengths, mask, offsets,
                      lengths_a, lengths_b, mask_a, mask_b, empty, ties)


def lexirecall(labels, scores_a, scores_b, k=None, *, rel=1, lengths=None, mask=None, offsets=None, lengths_a=None,
               lengths_b=None, mask_a=None, mask_b=None, empty="nan", ties="pessimistic"):
    """Lexicographic recall of ranking ``a`` over ranking ``b``, per query (Diaz, Ekstrand & Mitra, TORS 2025).

    With ``f_1 <= ... <= f_m`` the ranks of the ``m`` relevant documents (``label >= rel``)
    in each ranking (infinite for one not retrieved), the rankings are compared
    lexicographically from the last recall level: with ``i`` the largest level where
    ``f_i(a) != f_i(b)``,

        LR(a, b) = sgn(f_i(b) - f_i(a))      in {-1, 0, 1}

    and 0 when no level differs.  > 0 when ``a`` is preferred; exactly antisymmetric.
    The ranking that retrieves more relevant documents wins; among those that retrieve
    the same number, the one whose last relevant document comes first, then the one
    whose second-to-last comes first, and so on.

    Parameters
    ----------
    labels, scores_a, scores_b, k, rel, lengths, mask, offsets, lengths_a, lengths_b, mask_a, mask_b, empty, ties
        As in :func:`lexiprecision`.

    Returns
    -------
    ndarray of float64, one value per query.

    Examples
    --------
    >>> import numpy as np, rankjit.preference as P
    >>> labels = np.array([[1, 0, 1, 0, 0]])
    >>> a = np.array([[5.0, 4.0, 3.0, 2.0, 1.0]])   # relevant at ranks 1, 3
    >>> b = np.array([[4.0, 1.0, 5.0, 3.0, 2.0]])   # relevant at ranks 1, 2
    >>> P.lexirecall(labels, a, b).tolist(), P.lexirecall(labels, a, b, k=2).tolist()
    ([-1.0], [-1.0])
    """
    return _lexi_pair("lexirecall", LK.KIND_SGN_LR, labels, scores_a, scores_b, k, rel, lengths, mask, offsets,
                      lengths_a, lengths_b, mask_a, mask_b, empty, ties)


def lexiprecision_matrix(labels, scores_stack, k=None, *, variant="sgn", rel=1, lengths=None, mask=None, offsets=None,
                         system_lengths=None, system_mask=None, per_query=False, empty="nan", ties="pessimistic"):
    """Mean lexicographic precision of every pair of systems, in one pass.

    Arguments as in :func:`lexiprecision`, with the systems' scores stacked as in
    :func:`rpp_matrix` (``system_lengths`` / ``system_mask``: what each system
    retrieved).  Returns ``M`` with ``M[a, b]`` = mean over queries of
    ``lexiprecision(a, b)`` (queries without relevant documents left out with
    ``empty="nan"``; NaN when none is left), ``M = -M.T``; with ``per_query=True``
    also the ``(n_queries, n_systems, n_systems)`` values.

    Examples
    --------
    >>> import numpy as np, rankjit.preference as P
    >>> labels = np.array([[1, 0, 1, 0, 0]])
    >>> stack = np.array([[[5.0, 4.0, 3.0, 2.0, 1.0]], [[5.0, 1.0, 2.0, 4.0, 3.0]]])
    >>> P.lexiprecision_matrix(labels, stack).tolist()
    [[0.0, 1.0], [-1.0, 0.0]]
    """
    return _lexi_matrix("lexiprecision", _lp_kind(variant), labels, scores_stack, k, rel, lengths, mask, offsets,
                        system_lengths, system_mask, per_query, empty, ties)


def lexirecall_matrix(labels, scores_stack, k=None, *, rel=1, lengths=None, mask=None, offsets=None,
                      system_lengths=None, system_mask=None, per_query=False, empty="nan", ties="pessimistic"):
    """Mean lexicographic recall of every pair of systems, in one pass (see :func:`lexiprecision_matrix`).

    Examples
    --------
    >>> import numpy as np, rankjit.preference as P
    >>> labels = np.array([[1, 0, 1, 0, 0]])
    >>> stack = np.array([[[5.0, 4.0, 3.0, 2.0, 1.0]], [[4.0, 1.0, 5.0, 3.0, 2.0]]])
    >>> P.lexirecall_matrix(labels, stack).tolist()
    [[0.0, -1.0], [1.0, 0.0]]
    """
    return _lexi_matrix("lexirecall", LK.KIND_SGN_LR, labels, scores_stack, k, rel, lengths, mask, offsets,
                        system_lengths, system_mask, per_query, empty, ties)


# ---- evaluate() registration ----------------------------------------------------------


def _pair_scores_b(measure, context):
    scores_b = context.get("scores_b")
    if scores_b is None:
        raise ValueError(f"{measure.text} compares two systems: pass the second system's scores as scores_b= "
                         "to evaluate() (the first is scores)")
    return scores_b


def _judged_rows(measure, scores_b, context):
    """The two systems' rows with evaluate()'s unjudged documents left out (``judged=``, ``judged_only``).

    ``judged=`` is laid out as ``labels``: one flag per document of the row, shared by both
    systems (they rank the same documents).  Each system's condensed list keeps the judged
    documents in their order, ranked 1, 2, ... among themselves.  Padded rows get a mask (no
    copy of the inputs); ragged rows (``offsets=``, which take no mask) are cut down to their
    judged documents.  evaluate() has checked ``judged=`` against the labels already (an
    unjudged document holds label 0).
    """
    from rankjit._validation import document_flags

    judged = context.get("judged")
    if judged is None:
        raise ValueError(f"{measure.text!r} with judged_only=True needs judged= (True for each document the "
                         "qrels judge, laid out as labels and shared by both systems), as in evaluate(..., "
                         "judged=...)")
    batch = context["batch"]  # evaluate()'s labels / scores layout
    keep = document_flags(batch, judged, "judged")  # flat, checked against the labels' layout
    if batch.mask.shape[0]:
        keep = keep & batch.mask
    elif batch.offsets is None and (batch.counts < batch.width).any():  # lengths=: cells past each row's end
        keep = keep & (np.arange(batch.width) < batch.counts[:, None]).reshape(-1)
    labels, scores = context["labels"], context["scores"]
    if batch.offsets is None:
        return labels, scores, scores_b, {"lengths": None, "mask": keep.reshape(batch.n_queries, batch.width),
                                          "offsets": None}
    sb = scores_b if isinstance(scores_b, np.ndarray) else np.asarray(scores_b)
    if sb.shape != keep.shape:
        raise ValueError(f"scores_b has shape {sb.shape}, expected {keep.shape} like the first system's scores")
    kept = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])  # judged documents before each cell
    offsets = np.ascontiguousarray(kept[batch.offsets], dtype=np.int64)
    return (np.asarray(labels)[keep], np.asarray(scores)[keep], sb[keep],
            {"lengths": None, "mask": None, "offsets": offsets})


def evaluate_measure(measure, params, context):
    """One preference measure of :func:`rankjit.evaluate` (RPP, LexiPrecision, LexiRecall), per query:
    ``scores`` against ``scores_b`` (``context``: evaluate's inputs).  With ``judged_only``, both
    systems' lists are condensed to the judged documents (``judged=``, one flag per document)."""
    # params: checked by the registry's records when evaluate() resolved the measure; what needs more than the
    # kind (a weights array: non-negative, the first > 0) is checked by the functions below
    scores_b = _pair_scores_b(measure, context)
    labels, scores = context["labels"], context["scores"]
    rows = {"lengths": context.get("lengths"), "mask": context.get("mask"), "offsets": context.get("offsets")}
    if context.get("judged_only"):  # the judged documents alone: condensed lists (trec_eval -J)
        labels, scores, scores_b, rows = _judged_rows(measure, scores_b, context)
    common = dict(k=measure.k, rel=params["rel"], **rows, empty=params["empty"],
                  ties=context.get("ties", "pessimistic"))
    if measure.family == "RPP":
        _weights(params["weights"], 1, where=f" in {measure.text!r}")  # an array's own rules: >= 0, the first > 0
        return rpp(labels, scores, scores_b, weights=params["weights"], graded=params["graded"], **common)
    if measure.family == "LexiPrecision":
        return lexiprecision(labels, scores, scores_b, variant=params["variant"], **common)
    return lexirecall(labels, scores, scores_b, **common)
