"""``evaluate()``: many measures, one ranking pass per query."""
from __future__ import annotations

import importlib
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from rankjit import _measures
from rankjit._config import CHUNK_SIZE, run_blocks, use_parallel
from rankjit._grade_counts import GradeCounts
from rankjit._validation import (
    _as_array,
    _check_scores_dtype,
    as_batch,
    engine_batch,
    flag,
    judged_batch,
    judged_flags_batch,
    scan,
    ties_code,
)

#: Ranking by counting costs about V * n vectorised comparisons (V = documents with a
#: value); a full sort about n log2 n mispredicted ones (measured ~30x dearer each on
#: the 2-core machine), a top-d selection about n.  Above these V the engine sorts.
_COUNT_PER_LOG2_FULL = 30
#: for float32 scores; the vectorised count covers half as many float64 scores per
#: instruction, so the limit halves with them (measured: 10k queries x 100 documents,
#: 45 valued per query, float64 scores: top-d 7.0 ms vs counting 7.4-8.0 ms)
_COUNT_LIMIT_TOP = 64


def count_limit(depth, max_count, scores_dtype=np.float32):
    """Largest number of valued documents for which counting beats sorting."""
    if depth >= max_count:
        return int(_COUNT_PER_LOG2_FULL * np.log2(max(max_count, 2)))
    return _COUNT_LIMIT_TOP * 4 // np.dtype(scores_dtype).itemsize


def _as_n_relevant(n_relevant, n_q):
    if n_relevant is None:
        return np.zeros(0, np.int64)
    a = np.asarray(n_relevant)
    if a.shape != (n_q,):
        raise ValueError(f"n_relevant must hold one count per query ({n_q}), got shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise TypeError(f"n_relevant must be integers, got dtype {a.dtype}")
    if (a < 0).any():
        raise ValueError("n_relevant must be >= 0")
    _check_not_huge(a, "n_relevant")
    return a.astype(np.int64, copy=False)


def _check_not_huge(a, name):
    """Counts above 2**62 (uint64 ones would wrap in int64) are refused by position."""
    big = np.argwhere(a > 2**62)
    if big.size:
        at = ", ".join(str(int(i)) for i in big[0])
        raise ValueError(f"{name}[{at}] = {a[tuple(big[0])]} is too large (a count of documents, at most 2**62)")


class CountsOfTheJudgments(np.ndarray):
    """Counts (``n_relevant``, ``ideal_counts``) that the caller derived from the very judgments behind the labels.

    Internal callers (the alignment of a run with its qrels, the front ends) mark their
    counts with :func:`counts_of_the_judgments`; the check that counts from outside the
    row cover what the row holds (:func:`_check_counts_from_outside`: a pass over the
    labels per threshold) is skipped for them, since it holds by construction.  Anything
    that reads the array (``np.asarray``) sees a plain ndarray.
    """


def counts_of_the_judgments(counts):
    """``counts`` (an ndarray, or a :class:`~rankjit._grade_counts.GradeCounts`) marked as derived from the
    judgments behind the labels (a view, no copy)."""
    if isinstance(counts, GradeCounts):
        return counts.marked_from_judgments()
    return counts.view(CountsOfTheJudgments)


def _from_the_judgments(counts):
    return isinstance(counts, CountsOfTheJudgments) or (isinstance(counts, GradeCounts) and counts.from_judgments)


def _as_ideal_counts(ideal_counts, n_q):
    """``ideal_counts`` checked and kept sparse: a :class:`~rankjit._grade_counts.GradeCounts` (None: None).

    A dense ``(n_queries, n_grades)`` table of counts is checked here; a ``GradeCounts``
    (built by rankjit's own readers and front ends) only for its number of queries.
    """
    if ideal_counts is None:
        return None
    if isinstance(ideal_counts, GradeCounts):
        if ideal_counts.n_queries != n_q:
            raise ValueError(f"ideal_counts counts the judged documents of {ideal_counts.n_queries} queries, "
                             f"but there are {n_q} queries")
        return ideal_counts
    a = np.asarray(ideal_counts)
    if a.ndim != 2 or a.shape[0] != n_q or a.shape[1] == 0:
        raise ValueError(
            f"ideal_counts must have shape (n_queries, n_grades) = ({n_q}, G): the number of judged documents "
            f"of each grade per query; got shape {a.shape}"
        )
    if a.dtype.kind not in "iu":
        raise TypeError(f"ideal_counts must be integers, got dtype {a.dtype}")
    if (a < 0).any():
        raise ValueError("ideal_counts must be >= 0")
    _check_not_huge(a, "ideal_counts")
    return GradeCounts.from_dense(a.astype(np.int64, copy=False), isinstance(ideal_counts, CountsOfTheJudgments))


_NO_OUTPUT = np.zeros((0, 0), dtype=np.float64)


def engine_passes(batch, plan, ties, scores_dtype, nrel, ideal, check_nan, means=False, ranked=False):
    """The engine's two passes for this batch and plan, ready to run over groups of blocks (``ranked``: every row
    is in rank order already, :func:`rankjit._kernels.engine.rows_in_rank_order`)."""
    from rankjit._kernels import engine as _engine

    masked = batch.mask.shape[0] > 0
    # rows with many valued documents: the rank pass with pruning (only cutoffs <= 16 without padding prune)
    many_valued = (plan.depth <= _engine.PRUNE_DEPTH and not masked
                   and _engine.many_valued_rows(batch.labels, batch.starts, batch.counts))
    variant = _engine.variant_for(plan, ties, masked, batch.max_count, many_valued, ranked)
    limit = count_limit(plan.depth, batch.max_count, scores_dtype)
    return _engine.Passes(variant, batch, plan, ties, nrel, ideal, check_nan, limit, means)


def run_engine(batch, plan, ties, scores, nrel, ideal, check_nan, *, out=None, sums=None):
    """Run the engine over every block of the batch into ``out`` (per query) or ``sums`` (per block).

    Returns ``nan_at``: per block, the flat position of its first NaN score or -1.
    """
    from rankjit._kernels.engine import rows_in_rank_order

    # rows in rank order already (trec_eval's aligned runs): the rank pass keeps them, and compiles no ranking
    ranked = rows_in_rank_order(scores, batch.starts, batch.counts, batch.mask.shape[0] > 0, ties)
    passes = engine_passes(batch, plan, ties, scores.dtype, nrel, ideal, check_nan, means=sums is not None,
                           ranked=ranked)
    return run_passes(passes, scores, batch.n_queries, out, sums)


def run_passes(passes, scores, n_q, out=None, sums=None):
    """Run ``passes`` (:func:`engine_passes`) over every group of blocks of ``n_q`` queries, on threads when
    the batch is large enough.  Returns ``nan_at``: per block, the flat position of its first NaN score or -1."""
    nan_at = np.full((n_q + CHUNK_SIZE - 1) // CHUNK_SIZE, -1, dtype=np.int64)
    out = _NO_OUTPUT if out is None else out
    sums = _NO_OUTPUT if sums is None else sums
    _compile_at_once(passes, scores, nan_at, out, sums)
    run_blocks(lambda g_lo, g_hi: passes(g_lo, g_hi, scores, nan_at, out, sums), passes.n_groups, use_parallel(n_q))
    return nan_at


class PreparedEvaluation:
    """:func:`evaluate` split at the scores: the labels checked and the measures planned once.

    For many score arrays over the same labels, one after another (the rounds of a
    training loop, where LightGBM's and XGBoost's adapters use it): each call of
    :meth:`per_query` checks the scores (dtype and shape; NaN in the kernel) and runs the
    engine, and skips everything that reads only the labels and the measures (parsing,
    the label scan, the plan, the engine's choice of variant).  The engine reads arrays of
    its own (the labels in its dtype, a copy where that is the caller's array; the row
    bounds): arrays changed in place afterwards change nothing.  List measures of the labels only
    (no ``judged=``, ``n_relevant=`` or ``ideal_counts=``, no registered measures):
    a ValueError names a measure that is not.  The values are those of
    ``evaluate(labels, scores, measures, per_query=True, ...)``, bit for bit.
    """

    def __init__(self, labels, measures, *, lengths=None, mask=None, offsets=None, ties="pessimistic", rel=None,
                 empty="zero"):
        self.ties = ties_code(ties)
        _measures.empty_value(empty)
        self.requests = _measures.requests(measures, {"rel": rel, "empty": empty, "judged_only": False})
        for r in self.requests:
            if r.external or r.judged_only or _measures.reads(r.measure) != "labels":
                raise ValueError(f"{r.measure.text!r} reads more than the labels: evaluate it with rankjit.evaluate")
        labels = np.asarray(labels)
        self.shape = labels.shape
        placeholder = np.zeros(labels.shape, dtype=np.float32)  # (the batch's scores: never read)
        batch = engine_batch(scan(as_batch(labels, placeholder, lengths=lengths, mask=mask, offsets=offsets),
                                  check_scores=False))
        # the arrays the engine reads, its own: a caller's array changed in place later (a grade beyond the
        # plan's tables, a longer row) never reaches the kernels, which trust what was checked here
        given = [np.asarray(a) for a in (labels, lengths, mask, offsets) if a is not None]
        self.batch = replace(batch, **{
            name: getattr(batch, name).copy() for name in ("labels", "starts", "counts", "mask", "offsets")
            if getattr(batch, name) is not None and any(np.shares_memory(getattr(batch, name), a) for a in given)})
        self.plan = _measures.plan_for(self.requests, self.batch, self.ties, None)
        self._passes = {}  # scores dtype -> the engine's passes

    def per_query(self, scores):
        """``(n_measures, n_queries)`` float64: each measure's value per query for ``scores``."""
        scores = _check_scores_dtype(_as_array(scores, "scores"))
        if scores.shape != self.shape:
            raise ValueError(f"scores must have the labels' shape {self.shape}, got {scores.shape}")
        scores = np.ascontiguousarray(scores).reshape(-1)
        passes = self._passes.get(scores.dtype)
        if passes is None:
            passes = self._passes[scores.dtype] = engine_passes(
                self.batch, self.plan, self.ties, scores.dtype, np.zeros(0, np.int64), None, True)
        n_q = self.batch.n_queries
        out = np.empty((len(self.requests), n_q), dtype=np.float64)
        _raise_nan(self.batch, run_passes(passes, scores, n_q, out=out))
        return out


def _compile_at_once(passes, scores, nan_at, out, sums):
    """Before the first run of a variant's passes in this process: on an empty cache, one pass compiles in a
    helper process while this one compiles the other (rankjit._compile_helper), for the arguments of
    ``passes(g_lo, g_hi, scores, nan_at, out, sums)``."""
    rank, measure = passes.engine
    if passes.n_groups and hasattr(measure, "overloads") and not measure.overloads and not rank.overloads:
        from rankjit import _compile_helper

        rank_types, measure_types = passes.argument_types(scores, nan_at, out, sums)
        _compile_helper.compile_passes(passes.variant, rank, rank_types, measure, measure_types)


def _raise_nan(batch, nan_at):
    if nan_at.shape[0] and nan_at.max() >= 0:
        from rankjit._validation import nan_score_error

        hits = nan_at[nan_at >= 0]
        raise nan_score_error(batch, int(hits[0]))


def list_measure_means(batch, requests, ties, check_nan=False):
    """Means over queries of the list measures, (n_measures,) float64, without a per-query array.

    The kernel sums each block of queries in query order; the means are the sums of the
    block sums (``np.sum``) divided by the number of queries.  Blocks do not depend on the
    number of threads, so neither do the means.
    """
    batch = engine_batch(batch)
    n_q = batch.n_queries
    plan = _measures.plan_for(requests, batch, ties, None)
    sums = np.empty((len(requests), (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE), dtype=np.float64)
    nan_at = run_engine(batch, plan, ties, batch.scores, np.zeros(0, np.int64), None, check_nan, sums=sums)
    _raise_nan(batch, nan_at)
    return aggregate_sums(sums.sum(axis=1), n_q, requests)


def aggregate_sums(totals, n_q, requests):
    """The totals over the queries of each measure, divided by ``n_q`` but for the summed ones (the counts)."""
    return np.array([t if _measures.summed(r.measure) else t / n_q for t, r in zip(totals, requests)], dtype=np.float64)


def run_list_measures(batch, requests, ties, n_relevant=None, ideal_counts=None, check_nan=False):
    """Run the fused kernel for the list measures; returns (n_measures, n_queries) float64.

    ``check_nan=True`` when the batch was scanned with ``check_scores=False``: the kernel
    then tests each row for NaN scores and this function raises the scan's error.
    """
    return run_part(ListPart(batch, requests, n_relevant, ideal_counts), ties, check_nan)


def run_part(part, ties, check_nan=False):
    """:func:`run_list_measures` for the measures of one :class:`ListPart`, whose counts from outside the row
    are checked as the part says."""
    batch = engine_batch(part.batch)
    n_q = batch.n_queries
    nrel = _as_n_relevant(part.n_relevant, n_q)
    ideal = _as_ideal_counts(part.ideal_counts, n_q)
    plan = _measures.plan_for(part.requests, batch, ties, ideal)
    out = np.empty((len(part.requests), n_q), dtype=np.float64)
    if not part.requests:
        return out
    nan_at = run_engine(batch, plan, ties, batch.scores, nrel, ideal, check_nan, out=out)
    _raise_nan(batch, nan_at)
    _check_counts_from_outside(out, part, nrel if part.n_relevant is not None else None, ideal)
    return out


def judgment_part(batch, jbatch, pooled, rel, n_relevant, ideal_counts):
    """Bpref's and infAP's batch: the judgment code of each document in the labels' place, and the
    query's judged documents by code (``ideal_counts`` of the codes), when ``ideal_counts`` is given.

    Codes (``rankjit._kernels.layout.CODE_*``): 3 judged with ``label >= rel``, 2 judged below
    ``rel``, 1 pooled but unjudged, 0 outside the pool.  ``jbatch``: :func:`judged_batch`'s
    batch (None: every document is judged).  The counts from outside the row are checked by
    :func:`_judged_by_code`.
    """
    from rankjit._validation import code_counts, judgment_codes_batch

    cbatch = judgment_codes_batch(batch, None if jbatch is None else jbatch.mask, pooled, rel)
    if ideal_counts is None and n_relevant is None:
        return cbatch, None
    return cbatch, _judged_by_code(code_counts(cbatch), rel, n_relevant, ideal_counts)


def _judged_by_code(present, rel, n_relevant, ideal_counts):
    """The query's judged documents by judgment code (``ideal_counts`` of the codes; None without
    ``ideal_counts``), after checking that the counts from outside the row cover ``present``, the
    row's documents by code ((n_queries, 4)).

    From ``ideal_counts`` (judged documents by grade, retrieved or not): N, the judged documents
    below ``rel``, and R, those at or above it; ``n_relevant`` gives R too.
    """
    from rankjit._kernels import layout as Lay

    n_q = present.shape[0]
    given = {}
    code_ideal = None
    if ideal_counts is not None:
        ideal = _as_ideal_counts(ideal_counts, n_q)
        code_ideal = np.zeros((n_q, 4), dtype=np.int64)
        code_ideal[:, Lay.CODE_POOLED] = present[:, Lay.CODE_POOLED]  # not read: the row's own
        code_ideal[:, Lay.CODE_NONRELEVANT] = ideal.between(-np.inf, rel)
        code_ideal[:, Lay.CODE_RELEVANT] = ideal.at_least(rel)
        given[Lay.CODE_NONRELEVANT] = ("ideal_counts", code_ideal[:, Lay.CODE_NONRELEVANT], f"grade < {rel}")
        given[Lay.CODE_RELEVANT] = ("ideal_counts", code_ideal[:, Lay.CODE_RELEVANT], f"grade >= {rel}")
    if n_relevant is not None:
        given[Lay.CODE_RELEVANT] = ("n_relevant", _as_n_relevant(n_relevant, n_q), f"grade >= {rel}")
    for code, (source, counts, what) in given.items():
        bad = np.flatnonzero(present[:, code] > counts)
        if bad.size:
            q = int(bad[0])
            raise ValueError(
                f"{source} counts {counts[q]} judged documents of {what} for query {q}, but its row holds "
                f"{present[q, code]}; it must count every judged document of the query, retrieved or not"
            )
    return code_ideal


def _check_outside_normalisers(out, requests, batch, n_relevant, ideal):
    """Counts given from outside the row (``n_relevant``, ``ideal_counts``) must cover what the row holds.

    For each measure normalised by R (recall, AP, Rprec), R of every query must be at least
    the row's documents with ``label >= rel``; each column g >= 1 of ``ideal_counts`` at
    least the row's documents of grade g (grade 0 is not checked: unjudged documents of a
    run carry label 0).  ``out`` (the values) only enriches the message.
    """
    from rankjit._kernels import layout as Lay
    from rankjit._validation import count_at_least

    source = "n_relevant" if n_relevant is not None else "ideal_counts"
    counted = {}  # one pass over the labels per threshold
    for i, (m, p, _) in enumerate(requests):
        if _measures.FAMILIES[m.family][0] not in (Lay.RECALL, Lay.AP, Lay.RPREC, Lay.SET, Lay.IPREC):
            continue
        rel = p.get("rel")
        if rel is None:  # NumQ, NumRet: no threshold
            continue
        if rel not in counted:
            counted[rel] = count_at_least(batch, rel)
        present = counted[rel]
        if n_relevant is not None:
            given = n_relevant
        else:
            given = ideal.at_least(rel)
        bad = np.flatnonzero(present > given)
        if bad.size:
            q = int(bad[0])
            value = f" is {out[i, q]:.6g} > 1" if out[i, q] > 1.0 else ""
            held = f"{source}[{q}] = {given[q]}" if n_relevant is not None else \
                f"ideal_counts[{q}] counts {given[q]} documents of grade >= {rel}"
            raise ValueError(
                f"{m.text} of query {q}{value}: {source} counts fewer relevant documents than the row holds "
                f"({held}, but {present[q]} documents of the row have label >= {rel}); it must count every judged "
                "document of the query, retrieved or not"
            )
    if ideal is not None and batch.integer_labels:
        _check_ideal_grades(batch, ideal)


def _check_ideal_grades(batch, ideal):
    """Each grade g >= 1 of ``ideal_counts`` must count at least the row's documents of grade g."""
    from rankjit._validation import grade_counts

    present = grade_counts(batch, ideal.n_columns)
    ideal = ideal.dense()  # (checked when given from outside: given dense, as wide)
    bad = np.argwhere(present > ideal)
    if bad.size:
        q, g = (int(x) for x in bad[0])
        raise ValueError(
            f"ideal_counts[{q}, {g}] = {ideal[q, g]}, but query {q} holds {present[q, g]} documents of grade {g} "
            "in the row; ideal_counts must count every judged document of the query by grade, retrieved or not"
        )


def evaluate(
    labels,
    scores,
    measures,
    *,
    lengths=None,
    mask=None,
    offsets=None,
    ties="pessimistic",
    rel=None,
    empty="zero",
    n_relevant=None,
    ideal_counts=None,
    per_query=False,
    judged=None,
    judged_only=False,
    pooled=None,
    **inputs,
):
    """Compute several measures from one ranking pass per query.

    Parameters
    ----------
    labels, scores : array-like
        ``(n_queries, n_docs)`` matrices, or flat 1-D arrays with ``offsets=``.
        Labels are non-negative grades (any integer dtype) or floats where a measure
        takes gains or probabilities; scores are float32 or float64 (other dtypes are
        converted, which copies).
    measures : str or sequence of str
        Names in ir_measures' grammar, case-insensitive: ``Name(param=value, ...)@k``,
        e.g. ``"nDCG@10"``, ``"AP"``, ``"ERR@20"``, ``"pFound"``, ``"P(rel=2)@5"``,
        ``"nDCG(gain='linear')@10"``.  Families: P, R (recall), Success (hit rate),
        RR, AP, Rprec, DCG, nDCG, ERR, pFound, plus the registered diversity and
        preference measures.
    lengths, mask, offsets
        Padding: documents per row, a boolean mask (True = real document), or CSR
        offsets of a ragged batch.  Without any, every cell is a real document.
    ties : {"pessimistic", "optimistic", "stable", "average"}, default "pessimistic"
        Order among equal scores: lower label first (never inflates a score), higher
        label first, input order, or the exact expectation over all orders of tied
        documents (not available for ERR and pFound).
    rel : number, optional
        Default relevance threshold (label >= rel) of the binary measures; 1 when
        not given.  A ``rel=`` parameter in a measure name wins.
    empty : {"zero", "one", "nan"}, default "zero"
        Value of a normalised measure (recall, AP, Rprec, nDCG) for a query with no
        relevant document.  A measure's own ``empty=`` parameter wins.
    n_relevant : array of int, optional
        R per query (judged relevant documents, retrieved or not) for recall, AP and
        Rprec.
    ideal_counts : (n_queries, n_grades) int array, optional
        Judged documents per grade for each query; the ideal DCG (and R, when
        ``n_relevant`` is not given) then counts judged documents the ranking did not
        retrieve, as trec_eval does.
    per_query : bool, default False
        Return per-query arrays instead of means.
    judged : bool array like ``labels``, optional
        True for a judged document; an unjudged one is not relevant (its label must
        be 0) and gains nothing, also in the measures that give grade 0 a value
        (``nDCG(gains={0:1})``, a gain array ``gain[0] != 0``, ``P(rel=0)@k``,
        ``RBP(rel=0)``, ``pFound(prel=...)``): there a judged grade-0 document keeps
        grade 0's gain (in the ranking and the ideal), an unjudged one gets none, as in
        trec_eval and ir_measures.  None: every document is judged (a document of label
        0 gets grade 0's gain).
    judged_only : bool, default False
        Compute the measures on the judged documents alone (trec_eval ``-J``,
        ir_measures' ``judged_only=True``): a condensed list, the judged documents
        ranked 1, 2, ... among themselves; R and the ideal are unchanged.  The list,
        diversity and preference measures take it (RPP, LexiPrecision and LexiRecall
        condense both systems' lists with the one ``judged=``).  Needs ``judged=``.  A
        measure's own ``judged_only=`` parameter wins.
    pooled : bool array like ``labels``, optional
        True for a document of the judging pool, judged or not (with ``judged=``): infAP
        counts the pooled documents left unjudged (trec_eval's negative grades) above each
        relevant one.  None: no document is pooled but unjudged.
    **inputs
        Extra inputs of registered measures (e.g. ``nuggets=`` for alpha-nDCG).

    Returns
    -------
    dict
        Measure name (as given) -> mean over queries (float), or per-query float64
        arrays with ``per_query=True``.

    Notes
    -----
    Means are plain arithmetic means over all queries; with ``empty="nan"`` use
    ``per_query=True`` and ``np.nanmean`` to drop queries without relevant documents.
    Without ``per_query`` no per-query array is built: the kernel sums each chunk of 1024
    queries in order and the mean is the sum of those sums over the number of queries
    (it can differ from ``np.mean`` of the per-query values in the last bits; it does not
    depend on the number of threads).

    Examples
    --------
    >>> import numpy as np, rankjit
    >>> labels = np.array([[1, 0, 1, 0, 0], [0, 1, 0, 0, 1]])
    >>> scores = np.array([[5., 4., 3., 2., 1.], [5., 4., 3., 2., 1.]])
    >>> res = rankjit.evaluate(labels, scores, ["P@5", "RR"], per_query=True)
    >>> res["P@5"].tolist(), res["RR"].tolist()
    ([0.4, 0.4], [1.0, 0.5])
    """
    tcode = ties_code(ties)
    _measures.empty_value(empty)
    flag(judged_only, "judged_only")
    # parsed and resolved, once
    requests = _measures.requests(measures, {"rel": rel, "empty": empty, "judged_only": judged_only})
    batch = as_batch(labels, scores, lengths=lengths, mask=mask, offsets=offsets)
    ext = [r for r in requests if r.external]
    # the fused engine tests scores for NaN itself; registered measures need the full scan
    scan(batch, check_scores=bool(ext))
    results = {}
    listed = [r for r in requests if not r.external]
    parts = _list_parts(batch, listed, judged, pooled, n_relevant, ideal_counts, tcode)
    # means only: the engine's block sums, unless a measure leaves undefined queries out of its mean (Accuracy)
    if (listed and not per_query and not ext and n_relevant is None and ideal_counts is None
            and all(_measures.aggregate(r.measure) != "defined" for r in listed)):
        if inputs:
            raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(inputs))}")
        # means only: the kernel keeps per-chunk sums, no (n_measures, n_queries) array is written
        by_text = {}
        for part in parts:
            if part.requests:
                means = list_measure_means(part.batch, part.requests, tcode, check_nan=True)
                by_text.update({r.measure.text: float(v) for r, v in zip(part.requests, means)})
        return {r.measure.text: by_text[r.measure.text] for r in requests}
    for part in parts:
        if part.requests:
            out = run_part(part, tcode, check_nan=not ext)
            for i, r in enumerate(part.requests):
                results[r.measure.text] = out[i]
    if ext:
        context = dict(inputs, labels=labels, scores=scores, lengths=lengths, mask=mask, offsets=offsets,
                       ties=ties, batch=batch, empty=empty, rel=rel, judged=judged)
        for m, params, judged_only in ext:
            # the family's own module computes it (rankjit.diversity, rankjit.preference: they import
            # this module's helpers, never the other way round at import time)
            module = importlib.import_module(_measures.EXTERNAL[m.family].module)
            context["judged_only"] = judged_only  # the diversity and preference measures' condensed lists
            results[m.text] = np.asarray(module.evaluate_measure(m, params, context), dtype=np.float64)
    elif inputs:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(inputs))}")
    ordered = {r.measure.text: results[r.measure.text] for r in requests}
    if per_query:
        return ordered
    return {r.measure.text: _measures.reduce_values(r.measure, ordered[r.measure.text]) for r in requests}


class ListPart(NamedTuple):
    """The list measures computed on one batch (one ranking): see :func:`_list_parts`."""

    batch: object
    requests: list
    n_relevant: object
    ideal_counts: object
    #: None: ``n_relevant`` / ``ideal_counts`` are checked against this part's own batch after the run; else
    #: ``(batch, requests, ideal_counts)``, the caller's: the part's labels and first requests are these requests
    #: rewritten, checked after the run against the caller's labels (its other requests were checked before it,
    #: :func:`_judged_grades_part`)
    checks: object = None


def _check_counts_from_outside(out, part, n_relevant, ideal):
    """Counts given from outside the row must cover what it holds (:func:`_check_outside_normalisers`), for
    the values ``out`` of ``part`` (a :class:`ListPart`)."""
    if n_relevant is None and ideal is None:
        return
    if all(x is None or _from_the_judgments(x) for x in (part.n_relevant, part.ideal_counts)):
        return  # derived from the judgments behind the labels: they cover the row
    if part.checks is None:
        _check_outside_normalisers(out, part.requests, part.batch, n_relevant, ideal)
        return
    batch, requests, caller_ideal = part.checks
    if requests:
        _check_outside_normalisers(out[: len(requests)], requests, batch, n_relevant, caller_ideal)


def _list_parts(batch, listed, judged, pooled, n_relevant, ideal_counts, tcode):
    """The list measures by the batch they read: a list of :class:`ListPart`, one ranking each.

    Every document, or the judged ones alone (``judged_only``: the judged documents join the
    mask); with ``judged=``, the measures that give grade 0 a value read labels that tell
    unjudged documents from judged ones (:func:`_judged_grades_part`), Judged@k and
    RBPResidual read the judged flags, Bpref and infAP judgment codes.  With integer grades,
    one ranking of the judged grades (0 unjudged, grade + 1 judged; when infAP reads a pool,
    0 outside it, 1 pooled but unjudged, grade + 2 judged) serves them all, and the measures
    of the labels when they can join and read no deeper (``_measures.on_judged_grades``).
    The C/W/L measures, Compat and labels that are not small integers keep their own
    ranking, Bpref and infAP on them read judgment codes (one more ranking per relevance
    threshold), and ``judged_only`` measures rank the judged documents alone.
    """
    flags = [r for r in listed if _measures.reads(r.measure) == "judged_flags"]
    coded = [r for r in listed if _measures.reads(r.measure) == "judgment_codes"]
    on_labels = [r for r in listed if _measures.reads(r.measure) == "labels"]
    condensed = [r for r in on_labels + coded if r.judged_only]
    needs = condensed or flags
    if needs and judged is None:
        what = "judged_only=True" if condensed else flags[0].measure.family
        raise ValueError(f"{what} ({needs[0].measure.text!r}) needs judged=, the mask of judged documents")
    if pooled is not None and judged is None:
        raise ValueError("pooled= needs judged=: a pooled document is unjudged only when judged= says so")
    everything = [r for r in on_labels if not r.judged_only]
    parts = []
    jbatch = None
    if judged is None:
        parts.append(ListPart(batch, everything, n_relevant, ideal_counts))
    else:
        jbatch = judged_batch(batch, judged)  # validated even when no measure reads it
        zero = [r for r in everything if _measures.values_grade_zero(r)]
        on_flags = [r for r in flags if not r.judged_only]
        rest = [r for r in everything if not any(r is z for z in zero)]
        shared, grades_flags, grades_coded = [], [], []
        # the pool tells pooled unjudged documents apart (label 1, judged grades from 2) when infAP reads it
        pool = pooled if pooled is not None and any(_measures.BY_NAME[r.measure.family].reads_pool
                                                    for r in coded if not r.judged_only) else None
        judged_lo = 1 if pool is None else 2
        if batch.integer_labels and batch.max_label + judged_lo <= JUDGED_GRADES_MAX:
            # one ranking of the judged grades (a table by grade): for the measures of grade 0 and of the flags,
            # Bpref and infAP (judged non-relevant: judged_lo <= grade + judged_lo < rel + judged_lo), and for the
            # measures of the labels too when every one can join and none reads deeper than the others (the
            # labels' own ranking holds the valued documents alone: deeper, it is the cheaper one)
            grades_coded = [r for r in coded if not r.judged_only]
            coded = [r for r in coded if not any(r is c for c in grades_coded)]
            if zero or on_flags or grades_coded:
                deepest = max(_measures.ranks_read(r.measure) for r in zero + on_flags + grades_coded)
                if rest and all(_measures.BY_NAME[r.measure.family].row in _measures.ON_JUDGED_GRADES_ROWS
                                and _measures.ranks_read(r.measure) <= deepest for r in rest):
                    shared = rest
            if zero or shared or grades_coded:  # (the flags alone: their own ranking, a view of the mask, no copy)
                grades_flags, on_flags = on_flags, []
        rest = [r for r in rest if not any(r is s for s in shared)]
        parts.append(ListPart(batch, rest, n_relevant, ideal_counts))
        if zero or shared or grades_flags or grades_coded:
            # unjudged documents: no gain, never relevant (label 0 alone would give them grade 0's value)
            parts.append(_judged_grades_part(batch, jbatch, pool, shared, zero, grades_flags + grades_coded, tcode,
                                             n_relevant, ideal_counts))
        parts.append(ListPart(jbatch, [r for r in on_labels if r.judged_only], n_relevant, ideal_counts))
        fbatch = judged_flags_batch(batch, jbatch.mask)  # Judged@k reads neither n_relevant nor ideal_counts
        parts.append(ListPart(fbatch, on_flags, None, None))
        parts.append(ListPart(replace(fbatch, mask=jbatch.mask), [r for r in flags if r.judged_only], None, None))
    for rel_value in dict.fromkeys(r.params["rel"] for r in coded):
        cbatch, cideal = judgment_part(batch, jbatch, pooled, rel_value, n_relevant, ideal_counts)
        same = [r for r in coded if r.params["rel"] == rel_value]
        parts.append(ListPart(cbatch, [r for r in same if not r.judged_only], n_relevant, cideal))
        if jbatch is not None:
            parts.append(ListPart(replace(cbatch, mask=jbatch.mask), [r for r in same if r.judged_only], n_relevant,
                                  cideal))
    return parts


#: the judged grades (grade + 1, or + 2 with a pool) share one ranking with the labels' measures when they stay at
#: most this (uint8 labels; larger grades keep a ranking of their own, with no table of 2**24 gains to build)
JUDGED_GRADES_MAX = 255


def _judged_grades_part(batch, jbatch, pooled, shared, zero, on_flags, tcode, n_relevant, ideal_counts):
    """The part ranked on the judged grades: ``judged_grades_batch``'s labels, 0 for an unjudged document,
    ``y + 1`` for one judged with grade ``y``, and ``ideal_counts`` with a column of 0 in front; with ``pooled``
    (infAP reads the pool), 0 outside the pool, 1 pooled but unjudged, ``y + 2`` judged, and two columns of 0.

    Its measures (``_measures.on_judged_grades`` rewrites each for those labels):

    * ``zero``: those that give grade 0 a value (``_measures.values_grade_zero``).  Their
      table of gains gets 0 in front, ``rel <= 0`` becomes 1: an unjudged document gains
      nothing and is never relevant, as in trec_eval and ir_measures, while a judged grade-0
      one keeps its gain, in the ranking and in the ideal.
    * ``on_flags``: Judged@k and RBPResidual, which read ``label >= 1`` (2) as judged; Bpref
      and infAP, which read ``1 <= label <= rel`` (``2 <= label <= rel + 1``) as judged
      non-relevant, and infAP ``label = 1`` as pooled but unjudged.
    * ``shared``: measures of the labels, thresholds + 1 and tables with 0 in front; the
      same values as on the labels, since they give an unjudged document and a judged
      grade-0 one the same nothing, with no ranking of their own.

    Every check against the batch is made on the grades themselves first (``build_plan``,
    and the counts from outside the row against the judged documents of the row for
    ``zero`` and, as on their judgment codes, for Bpref and infAP), so that errors name
    grades, not the shifted labels; the ``shared`` measures' counts are checked after the run
    against the caller's labels (:class:`ListPart`).
    """
    from rankjit._validation import count_at_least, grade_counts, judged_grades_batch
    from rankjit._kernels import layout as Lay

    requests = shared + zero + on_flags
    n_q = batch.n_queries
    ideal = _as_ideal_counts(ideal_counts, n_q)
    _measures.build_plan(requests, batch, tcode, ideal)  # the measures' own checks, on the grades
    gbatch = judged_grades_batch(batch, jbatch.mask, pooled)
    lo = 1 if pooled is None else 2  # the judged grades: grade + lo
    width = 0 if ideal is None else ideal.n_columns
    rewritten = [_measures.on_judged_grades(r, batch, width, lo) for r in requests]
    if zero and ideal is not None and batch.integer_labels and not ideal.from_judgments:
        present = grade_counts(gbatch, width + lo)[:, lo:]  # judged documents of the row by grade, grade 0 too
        dense = ideal.dense()  # (given from outside: given dense, as wide)
        bad = np.argwhere(present > dense)
        if bad.size:
            q, g = (int(x) for x in bad[0])
            raise ValueError(
                f"ideal_counts[{q}, {g}] = {dense[q, g]}, but query {q} holds {present[q, g]} judged documents of "
                f"grade {g} in the row; ideal_counts must count every judged document of the query by grade, "
                "retrieved or not"
            )
    by_r = (Lay.RECALL, Lay.AP, Lay.RPREC, Lay.SET, Lay.IPREC)  # (as _check_outside_normalisers)
    normalised = [r for r in zero if _measures.FAMILIES[r.measure.family][0] in by_r and "rel" in r.params]
    if normalised and (n_relevant is not None or ideal is not None):
        given = _as_n_relevant(n_relevant, n_q) if n_relevant is not None else ideal.totals()
        present = count_at_least(gbatch, lo)  # rel <= 0: every judged document is relevant
        bad = np.flatnonzero(present > given)
        if bad.size:
            q = int(bad[0])
            source = "n_relevant" if n_relevant is not None else "ideal_counts"
            raise ValueError(
                f"{normalised[0].measure.text}: {source} counts {given[q]} relevant documents for query {q}, but "
                f"the row holds {present[q]} judged documents (with rel <= 0 each is relevant); it must count "
                "every judged document of the query, retrieved or not"
            )
    if n_relevant is not None or ideal is not None:  # Bpref, infAP: as on their judgment codes (judgment_part)
        judged = count_at_least(gbatch, lo)
        for rel_value, shifted in dict.fromkeys((r.params["rel"], w.params["rel"]) for r, w in zip(requests, rewritten)
                                                if _measures.reads(r.measure) == "judgment_codes"):
            present = np.zeros((n_q, 4), dtype=np.int64)
            present[:, Lay.CODE_RELEVANT] = count_at_least(gbatch, shifted)  # judged grade >= rel: label >= rel + lo
            present[:, Lay.CODE_NONRELEVANT] = judged - present[:, Lay.CODE_RELEVANT]
            _judged_by_code(present, rel_value, n_relevant, ideal)
    cideal = None if ideal is None else ideal.shifted(lo)
    # the shared measures (the first rows) as they read the caller's labels; the others were checked above
    return ListPart(gbatch, rewritten, n_relevant, cideal, (batch, shared, ideal))


def evaluate_systems(labels, scores_stack, measures, *, lengths=None, mask=None, offsets=None, ties="pessimistic",
                     rel=None, empty="zero", n_relevant=None, ideal_counts=None, judged=None, judged_only=False,
                     pooled=None, **inputs):
    """Per-query scores of several systems on the same judgments.

    Parameters
    ----------
    labels : array-like
        ``(n_queries, n_docs)`` (or flat with ``offsets=``), shared by all systems.
    scores_stack : array-like
        ``(n_systems, n_queries, n_docs)`` (or ``(n_systems, n_docs_total)`` with
        ``offsets=``): one score matrix per system over the same documents.
    measures, lengths, mask, offsets, ties, rel, empty, n_relevant, ideal_counts
        As in :func:`evaluate`.
    judged, judged_only, pooled
        As in :func:`evaluate`, shared by all systems: ``judged`` and ``pooled`` are
        shaped like ``labels`` (the systems score the same documents).

    Returns
    -------
    dict
        Measure name -> ``(n_systems, n_queries)`` float64 matrix.

    Notes
    -----
    Labels (and ``judged=``) are checked once and each system's scores for NaN; then one
    parallel pass of the fused kernel over (system, chunk of queries) pairs scores every
    system, per batch the measures read (the labels; with ``judged=`` also the judged
    documents alone, the judged flags of Judged@k, the judgment codes of Bpref and infAP).
    A C-contiguous ``scores_stack`` is not copied.  Registered measures that need extra
    inputs (diversity, RPP) are computed system by system.

    Examples
    --------
    >>> import numpy as np, rankjit
    >>> labels = np.array([[1, 0, 0], [0, 0, 1]])
    >>> stack = np.array([[[3., 2., 1.], [3., 2., 1.]], [[1., 2., 3.], [1., 2., 3.]]])
    >>> rankjit.evaluate_systems(labels, stack, ["RR"])["RR"].tolist()
    [[1.0, 0.3333333333333333], [0.3333333333333333, 1.0]]
    >>> judged = np.array([[True, False, True], [True, True, True]])
    >>> rankjit.evaluate_systems(labels, stack, ["RR(judged_only=True)"], judged=judged)["RR(judged_only=True)"].tolist()
    [[1.0, 0.3333333333333333], [0.5, 1.0]]
    """
    stack = np.asarray(scores_stack)
    labels = np.asarray(labels)
    want = labels.ndim + 1
    if stack.ndim != want or stack.shape[1:] != labels.shape:
        raise ValueError(
            f"scores_stack must have shape (n_systems, *labels.shape) = (S, {', '.join(map(str, labels.shape))}), "
            f"got {stack.shape}"
        )
    if stack.shape[0] == 0:
        raise ValueError("scores_stack holds no system")
    _measures.empty_value(empty)  # the call-level value first, with its own message
    flag(judged_only, "judged_only")
    requests = _measures.requests(measures, {"rel": rel, "empty": empty, "judged_only": judged_only})
    if not inputs and not any(r.external for r in requests):
        return _systems_one_pass(labels, stack, requests, lengths, mask, offsets, ties, n_relevant, ideal_counts,
                                 judged, pooled)
    rows = []
    for s in range(stack.shape[0]):
        res = evaluate(labels, stack[s], measures, lengths=lengths, mask=mask, offsets=offsets, ties=ties, rel=rel,
                       empty=empty, n_relevant=n_relevant, ideal_counts=ideal_counts, per_query=True, judged=judged,
                       judged_only=judged_only, pooled=pooled, **inputs)
        rows.append(res)
    return {name: np.stack([r[name] for r in rows]) for name in rows[0]}


def _systems_one_pass(labels, stack, requests, lengths, mask, offsets, ties, n_relevant, ideal_counts, judged,
                      pooled):
    """Every system's list measures: per part of :func:`_list_parts`, one pass over (system, group) pairs."""
    tcode = ties_code(ties)
    batch = scan(as_batch(labels, stack[0], lengths=lengths, mask=mask, offsets=offsets), check_scores=False)
    stack = np.ascontiguousarray(_check_scores_dtype(stack))  # documented copy only for other dtypes/layouts
    flat = stack.reshape(stack.shape[0], -1)  # labels once; each system's scores: NaN-tested in the kernel
    results = {}
    for part in _list_parts(batch, requests, judged, pooled, n_relevant, ideal_counts, tcode):
        if part.requests:
            out = _systems_part(part, flat, tcode)
            results.update({r.measure.text: np.ascontiguousarray(out[:, i, :]) for i, r in enumerate(part.requests)})
    return {r.measure.text: results[r.measure.text] for r in requests}


def _systems_part(part, flat, tcode):
    """``(n_systems, n_measures, n_queries)``: the measures of one :class:`ListPart` for each system's flat scores."""
    batch, requests, n_relevant, ideal_counts = engine_batch(part.batch), part.requests, part.n_relevant, \
        part.ideal_counts
    nrel = _as_n_relevant(n_relevant, batch.n_queries)
    ideal = _as_ideal_counts(ideal_counts, batch.n_queries)
    plan = _measures.plan_for(requests, batch, tcode, ideal)
    n_sys = flat.shape[0]
    out = np.empty((n_sys, len(requests), batch.n_queries), dtype=np.float64)
    n_blocks = (batch.n_queries + CHUNK_SIZE - 1) // CHUNK_SIZE
    nan_at = np.full(n_sys * n_blocks, -1, dtype=np.int64)
    passes = engine_passes(batch, plan, tcode, flat.dtype, nrel, ideal, True)
    n_groups = passes.n_groups

    def score_items(i_lo, i_hi):
        # work items are (system, group of blocks) pairs, system-major
        for s in range(i_lo // n_groups, (i_hi - 1) // n_groups + 1):
            g_lo = max(i_lo - s * n_groups, 0)
            g_hi = min(i_hi - s * n_groups, n_groups)
            passes(g_lo, g_hi, flat[s], nan_at[s * n_blocks:(s + 1) * n_blocks], out[s], _NO_OUTPUT)

    if n_groups:
        _compile_at_once(passes, flat[0], nan_at[:n_blocks], out[0], _NO_OUTPUT)
        run_blocks(score_items, n_sys * n_groups, use_parallel(n_sys * batch.n_queries))
    _raise_nan(batch, nan_at)
    _check_counts_from_outside(out[0], part, nrel if n_relevant is not None else None, ideal)
    return out
