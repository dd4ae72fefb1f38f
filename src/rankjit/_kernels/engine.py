"""The fused kernel: rank each query once, then compute every requested measure.

Per query the engine builds a ranked list ``sel[:L]`` of flat positions with their
1-based ``ranks[:L]`` by one of three strategies, all giving the same ranks because
the order is total (:mod:`rankjit._kernels.ranking`):

* **count** - when no requested measure can see a document of value 0 (gain 0,
  probability 0, not relevant), only the documents with ``label > 0`` are ranked,
  each by counting the documents above it (``O(n V)`` branch-free work, V = number
  of such documents; under the stable rule once per run of tied scores among them,
  :func:`~rankjit._kernels.ranking.stable_count_ranks`).  This is the fast path for
  typical, sparse judgments.
* **top-d** - otherwise, or when V is large on rows of more than
  :data:`COUNT_ALL_MAX` documents, a partial sort of the row to the deepest cutoff ``D``
  the measures need (the whole row when one has no cutoff).  A batch of shorter rows
  counts whatever V is, and compiles no selection (:attr:`Variant.select`).
* **average** - ``ties="average"``: the whole row sorted by score, measures computed
  as exact expectations over the orders of tied documents.

With ``check_nan`` each row's scores are first tested for NaN (the validation tier
then scans the labels only, saving a pass over the largest input); each block of
``CHUNK_SIZE`` queries reports its first NaN position and the caller raises.  Buffers
are allocated once per call, never per query.

The engine is two compiled passes over groups of blocks of queries:

* the **rank pass**, :func:`rank_blocks`, the only code that reads the scores: each
  query's ranked list (its labels in rank order and their ranks) into a buffer;
* the **measure pass**, :func:`measure_blocks`: every requested measure from the ranked
  lists and the labels.

Both come in variants (:class:`Variant`) that leave out the code a call does not need,
so that a first call compiles little; and since the measure pass never sees a score, a
second scores dtype (float64 after float32) or another tie rule recompiles the rank
pass only.  The Python tier (:class:`Passes`) runs them group after group on threads
(:func:`rankjit._config.run_blocks`).  Every query is computed independently of the
others and means are sums of per-block sums, so results are bitwise identical for any
number of threads.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rankjit._kernels import binary as _binary, cascade as _cascade, graded as _graded
from rankjit._kernels import layout as Lay
from rankjit._config import CHUNK_SIZE, jit, specialise
from rankjit._kernels.nrt import borrowed
from rankjit._kernels import ranking as _ranking
from rankjit._kernels.ranking import _merge_sort as merge_sort  # noqa: F401 (replaced in each compiled copy)
from rankjit._kernels.ranking import (
    INSERTION_DEPTH,
    PRUNE_DEPTH,
    TIES_AVERAGE,
    TIES_STABLE,
    count_ranks,
    cutoff_bound,
    fast_ranks,
    gather,
    order_by_rank,
    runs_worth_gathering,
    stable_count_ranks,
    top_d,
    top_insertion,
)
from rankjit._kernels.scans import first_nan


@jit(inline="always")
def _normalise(num, den, empty):
    if den > 0.0:
        return num / den
    return empty


@jit(inline="always")
def _counted_between(q, ideal_offsets, ideal_entries, lo, hi):
    """Judged documents of query ``q`` with ``lo <= grade < hi``, from its (grade, count) entries."""
    c = 0
    for j in range(ideal_offsets[q], ideal_offsets[q + 1]):
        g = ideal_entries[j, 0]
        if lo <= g < hi:
            c += ideal_entries[j, 1]
    return c


@jit(inline="always")
def _relevant_total(q, labels, start, count, mask, use_mask, rel, rel_labels, m, rel_kind, n_valued, n_relevant,
                    ideal_offsets, ideal_entries):
    if n_relevant.shape[0] > 0:
        return float(n_relevant[q])
    if ideal_offsets.shape[0] > 0:
        return float(_counted_between(q, ideal_offsets, ideal_entries, rel, np.inf))
    if rel_kind == Lay.REL_NONE:
        return 0.0
    if rel_kind == Lay.REL_INTEGER and n_valued >= 0 and rel_labels[m] == 1:
        return float(n_valued)  # integer labels: label >= 1  <=>  label > 0, already counted
    # the threshold in the labels' dtype: a narrow vectorised compare (one compiled count)
    return float(_binary.count_relevant(labels, start, count, mask, use_mask, rel_labels[m]))


@jit(inline="always")
def _ideal_from_row(labels, start, count, mask, use_mask, kk, ip, tables, itables, hist, grades):
    """IDCG of a by-grade gain table from the row's own grade histogram (the hot case)."""
    n_ideal = ip[Lay.I_N_IDEAL]
    order_off = ip[Lay.I_ORDER_OFF]
    value_off = ip[Lay.I_VALUE_OFF]
    cum_off = ip[Lay.I_CUM_OFF]
    kk = min(kk, ip[Lay.I_WEIGHT_LEN])
    # PACKED_GRADES: the variant of batches without padding, grades 0..7 and rows of <= 255
    # documents; the grade-by-grade count below is then not compiled
    if PACKED_GRADES or (not use_mask and count <= 255 and hist.shape[0] <= 8):
        # grades 0..7, at most 255 documents: one vectorised pass of packed counters,
        # byte g of ``acc`` counting grade g (acc += 1 << 8y; no byte can overflow).
        # This is grade_histogram's first case fused with ideal_dcg_hist, the counts read
        # from the register instead of a histogram in memory: calling the two (even inlined)
        # measured 1.04-1.07x slower for nDCG@10 (docs/performance.md, fourth session)
        row = labels[start:start + count]
        acc = np.uint64(0)
        for i in range(count):
            acc += np.uint64(1) << (np.uint64(row[i]) << np.uint64(3))
        s = 0.0
        lo = 0
        for t in range(n_ideal):
            g = itables[order_off + t]
            hi = min(kk, lo + np.int64((acc >> np.uint64(8 * g)) & np.uint64(255)))
            s += tables[value_off + g] * (tables[cum_off + hi] - tables[cum_off + lo])
            lo = hi
        return s
    _graded.grade_histogram(
        labels, start, count, mask, use_mask, hist, grades, itables[order_off:order_off + n_ideal], n_ideal
    )
    return _graded.ideal_dcg_hist(hist, itables, order_off, n_ideal, kk, tables, value_off, cum_off)


@jit
def _ideal_other(q, labels, start, count, mask, use_mask, kk, ip, tables, itables, ideal_offsets, ideal_entries,
                 hist, gbuf):
    """IDCG from the judged counts (``ideal_offsets``, ``ideal_entries``) or from non-integer gains (kept out of
    line: rarer, larger code)."""
    mode = ip[Lay.I_VALUE_MODE]
    if mode == Lay.VALUE_TABLE:
        n_ideal = ip[Lay.I_N_IDEAL]
        order_off = ip[Lay.I_ORDER_OFF]
        for t in range(n_ideal):
            hist[itables[order_off + t]] = 0
        for j in range(ideal_offsets[q], ideal_offsets[q + 1]):  # the query's grades alone (the others stay 0)
            g = ideal_entries[j, 0]
            if g < hist.shape[0]:
                hist[g] = ideal_entries[j, 1]
        return _graded.ideal_dcg_hist(
            hist, itables, order_off, n_ideal, min(kk, ip[Lay.I_WEIGHT_LEN]), tables, ip[Lay.I_VALUE_OFF],
            ip[Lay.I_CUM_OFF],
        )
    return _graded.ideal_dcg_values(
        labels, start, count, mask, use_mask, kk, mode, tables, ip[Lay.I_VALUE_OFF], ip[Lay.I_CUM_OFF], gbuf
    )



class Variant(NamedTuple):
    """What one call of the engine needs compiled: each False flag leaves code out.

    A variant is a copy of each pass whose flags (the module globals below) are
    constants, and Numba drops the branches they rule out before typing: a call
    compiles only the paths its measures, tie rule and padding need (``ndcg`` alone
    compiles neither the binary measures, nor the cascades, nor the exact expectation
    over tied orders, nor a heap or a merge sort for cutoffs <= 32, nor the code of the
    other tie rules).  Measures of one group get a measure pass of their own; a mix of
    groups gets the one with every group, so that the many mixes users request share one
    compiled function.  The rank pass follows the deepest cutoff alone: an insertion
    buffer up to 32 ranks, a top-d selection (heap, merge sort) deeper, a merge sort of
    the whole row when a measure sees every rank (``full``), and none of these for a batch
    of rows short enough to be counted whatever their valued documents (``select`` off),
    nor for rows in rank order already (``ranked``: the row is its own ranking).
    Each copy has its own name,
    hence its own disk-cache entry: the rank pass named by the tie rule and the
    ``masked`` / ``deep`` / ``full`` / ``signs`` / ``prune`` / ``select`` / ``ranked`` flags,
    the measure pass by the others.
    """

    ties: int  # the tie rule (a rankjit._kernels.ranking.TIES_* code); "average" computes expectations over tied orders
    masked: bool  # a mask declares padding
    deep: bool  # a top-d selection deeper than INSERTION_DEPTH (heap or merge sort), not of whole rows
    full: bool  # whole rows sorted (a measure without cutoff, or ties="average"): a merge sort only
    binary: bool  # P, R, Success, RR, AP, Rprec
    graded: bool  # DCG, nDCG (and RBP, SDCG, INSQ: DCG rows)
    cascade: bool  # ERR, pFound (and the group of the C/W/L walks)
    ideal_other: bool  # an ideal DCG from ideal_counts or from non-integer gains
    packed_grades: bool  # nDCG's ideal from packed counters only (no mask, grades 0..7, rows <= 255 documents)
    sets: bool  # the set measures, counts, IPrec, Bpref and infAP (SET, IPREC, JUDGMENTS), only when asked for
    cwl: bool  # the C/W/L walk (CWL: NERR8-NERR11, INST, BPM), only when asked for
    extras: bool  # Compat, Accuracy and trec_eval's RBPResidual (I_ZERO_WHEN_JUDGED), only when asked for
    signs: bool  # the rank pass counts each row's scores >= 0 (Compat with ideal_counts), only when asked for
    prune: bool  # the rank pass prunes rows with many valued documents by a score bound (cutoffs <= 16, no mask)
    select: bool  # the rank pass selects the top d of rows it does not count (else every row is counted: short rows)
    ranked: bool = False  # the rows are in rank order already (rows_in_rank_order): no counting, selection or sort

    def name(self) -> str:
        """``<tie rule>[-flag...]``, e.g. ``pessimistic-graded``."""
        rule = next(name for name, code in _ranking.TIES_CODES.items() if code == self.ties)
        return "-".join([rule] + [field for field in Variant._fields[1:] if getattr(self, field)])


def variant_for(plan, ties_code, masked, max_count, many_valued=False, ranked=False) -> Variant:
    """The engine variant a plan needs.

    ``max_count`` is the longest row of the batch; ``many_valued`` says that its rows hold
    more than :data:`PRUNE_MIN_VALUED` valued documents (:func:`many_valued_rows`): only
    then does the rank pass compile its pruning, which pays on such rows alone.
    ``ranked`` says that every row is in rank order already (:func:`rows_in_rank_order`):
    the rank pass then keeps each row as it is and compiles no ranking at all.
    """
    codes = set(int(c) for c in plan.iparams[:, Lay.I_CODE])
    groups = list(plan.groups)  # binary, graded, cascade: the registry groups of the plan's measures
    if sum(groups) > 1:
        # measures of several groups: the measure pass with every group, so that the many mixes
        # of measures users request share one compiled function
        groups = [True] * len(groups)
    full = plan.depth >= max_count or ties_code == TIES_AVERAGE  # every row sorted whole
    deep = plan.depth > INSERTION_DEPTH and not full
    # no padding, grades 0..7, rows of <= 255 documents: every row's grades are counted in packed
    # bytes (_ideal_from_row), and the grade-by-grade count is not compiled
    packed_grades = groups[1] and not masked and plan.n_hist <= 8 and max_count <= 255
    # the set measures, counts and IPrec: compiled only for a plan that holds one (not for every mix)
    sets = bool(codes & {Lay.SET, Lay.IPREC, Lay.JUDGMENTS})
    # the C/W/L walk: a flag of its own, so that neither the set measures' plans nor any other compile it
    cwl = Lay.CWL in codes
    # Compat, Accuracy and trec_eval's RBPResidual: a flag of their own too (the signs of the scores for Compat's
    # ideal with ideal_counts)
    extras = bool(codes & {Lay.COMPAT, Lay.ACCURACY}) or bool(plan.iparams[:, Lay.I_ZERO_WHEN_JUDGED].any())
    # pruning by the 16th-best-score bound (rank_blocks): cutoffs <= 16, no padding, labels 0 without value
    prune = (many_valued and plan.depth <= PRUNE_DEPTH and not masked and not full and plan.zero_safe
             and max_count >= PRUNE_DEPTH)
    # rows of at most COUNT_ALL_MAX documents and a plan that ranks the valued documents alone: the
    # count path ranks every row, and no selection of the top d (nor sort) is compiled
    select = not (plan.zero_safe and ties_code != TIES_AVERAGE and max_count <= COUNT_ALL_MAX)
    ranked = bool(ranked) and ties_code != TIES_AVERAGE
    if ranked:  # the rows are their own ranking: nothing to select, sort or prune
        deep = full = prune = select = False
    return Variant(int(ties_code), bool(masked), deep, full, *groups, plan.ideal_other, bool(packed_grades), sets,
                   cwl, extras, bool(plan.signs), bool(prune), bool(select), ranked)


#: The longest rows the count path ranks whatever their number of valued documents
#: (:attr:`Variant.select` off: the rank pass compiles no insertion buffer, heap or merge
#: sort, about 0.6 s less of a first ``ndcg`` call's 4.5 s).  Counting costs O(n V)
#: vectorised comparisons: measured (``bench_ab.py --valued 0.9 --docs N``, nDCG@20) faster
#: than the selection on dense 100-document rows (0.42x the time), and on tie-heavy dense rows
#: (``--tied 2``) 1.08x its time at 128 documents but 1.97x at 180: hence 128.
COUNT_ALL_MAX = 128


#: Pruning by the 16th-best-score bound pays once a row has more valued documents than
#: this (a pass over the row against one count per valued document left out); below it,
#: counting them all is faster (`bench_ab.py --valued`, docs/performance.md, sixth session).
PRUNE_MIN_VALUED = 24

#: Queries :func:`many_valued_rows` looks at: the first ones of the batch.
PRUNE_SAMPLE = 256


def rows_in_rank_order(scores, starts, counts, masked, ties_code) -> bool:
    """True when each row's documents are in rank order already: the ranking of every row is the row itself.

    So it is when the scores fall along each row: strictly (then no tie rule can reorder
    them), or with ties kept in input order (``ties="stable"``; trec_eval's aligned runs,
    whose rows the readers build in trec_eval's order).  Rows with padding (``masked``), and
    ``ties="average"``, are never taken as ranked.  Rows must follow each other in the flat
    arrays (ragged ``offsets``, or a padded batch without a mask).  The first
    :data:`RANKED_SAMPLE` rows are tested first, so that a batch of unsorted rows costs a
    look at a few rows; a ranked batch costs one vectorised pass, against the ranking it
    saves.  A NaN score fails every comparison (not ranked: the rank pass reports it); a
    row of one document holding NaN is caught by the rank pass's own NaN test, which the
    ranked rows keep.
    """
    n_q = starts.shape[0]
    if masked or ties_code == TIES_AVERAGE or n_q == 0:
        return False
    if n_q > 1 and not np.array_equal(starts[1:], starts[:-1] + counts[:-1]):
        return False  # rows not back to back
    strict = ties_code != TIES_STABLE
    head = min(n_q, RANKED_SAMPLE)
    return _rows_fall(scores, starts[:head], counts[:head], strict) and (
        head == n_q or _rows_fall(scores, starts, counts, strict))


#: Rows :func:`rows_in_rank_order` tests before the whole batch: the first ones.
RANKED_SAMPLE = 64


def _rows_fall(scores, starts, counts, strict) -> bool:
    """Whether the scores fall along each of the back-to-back rows (strictly, or ties allowed)."""
    lo = int(starts[0])
    hi = int(starts[-1] + counts[-1])
    if hi - lo < 2:
        return True  # no two documents to compare
    later, earlier = scores[lo + 1:hi], scores[lo:hi - 1]  # position i + 1 against i
    along = later < earlier if strict else later <= earlier
    inner = starts[1:] - 1 - lo  # the last document of a row against the first of the next: not compared
    along[inner[(inner >= 0) & (inner < along.shape[0])]] = True  # (empty rows at either end: no border)
    return bool(along.all())


def many_valued_rows(labels, starts, counts) -> bool:
    """True when one in 16 of the batch's first :data:`PRUNE_SAMPLE` rows holds more than
    :data:`PRUNE_MIN_VALUED` documents with label > 0 (dense judgments, as in LETOR data).

    Decides whether the rank pass compiles its pruning (:attr:`Variant.prune`), which
    saves work on such rows only and costs about 0.4 s of compile time.  A sample, in
    numpy (one cumulative count over the sampled rows' span, tens of microseconds): the
    choice changes the speed of a call, never its results.  Padding is left out of the
    count (padded batches are never pruned).
    """
    k = min(int(starts.shape[0]), PRUNE_SAMPLE)
    if k == 0:
        return False
    lo = int(starts[:k].min())
    hi = int((starts[:k] + counts[:k]).max())
    if hi - lo <= PRUNE_MIN_VALUED:
        return False
    # valued documents before each flat position of the span: valued in row q = c[end] - c[start]
    before = np.zeros(hi - lo + 1, dtype=np.int64)
    np.cumsum(labels[lo:hi] > 0, out=before[1:])
    valued = before[starts[:k] + counts[:k] - lo] - before[starts[:k] - lo]
    return bool(16 * int((valued > PRUNE_MIN_VALUED).sum()) >= k)

# The flags of a variant, as the two passes read them: module globals that each compiled
# copy replaces (:func:`compiled`).  The values here are never compiled.
AVERAGE = False  # ties="average"
MASKED = True
DEEP = True
FULL = True
BINARY = True
GRADED = True
CASCADE = True
IDEAL_OTHER = True
PACKED_GRADES = True
SETS = True
CWL = True
EXTRAS = True
SIGNS = True
PRUNE = True
SELECT = True
RANKED = False
STABLE_RULE = False  # ties="stable" (set with the ranking kernels of the copy's rule, not a flag of its name)


#: columns of ``info``, the rank pass's account of each query for the measure pass (the
#: ranked lists follow each other in the buffers, in query order: each starts where the
#: one before ends)
INFO_LENGTH = 0  # L, the length of the ranked list; -1 when the row holds a NaN score
INFO_REAL = 1  # n, the real documents of the row
INFO_VALUED = 2  # documents with label > 0 when the count path counted them, else -1
INFO_NONNEG = 3  # with SIGNS: documents of the row with a score >= 0 (ranked before the others), else unset
INFO_COLUMNS = 4


@jit
def rank_blocks(
    b_lo, b_hi, labels, scores, starts, counts, mask, ties, depth, zero_safe, count_limit, check_nan,
    iwork, fwork, nan_at, ranked_labels, ranked_ranks, info,
):
    """The rank pass over the blocks ``b_lo .. b_hi - 1`` of ``CHUNK_SIZE`` queries.

    Query ``q`` gets its ranked list: the labels of its documents in rank order in
    ``ranked_labels`` and their 1-based ranks in ``ranked_ranks`` (with ``ties="average"``:
    the whole row sorted by score, and at each position the end, exclusive, of its group
    of tied scores), right after the list of query ``q - 1`` (``info`` gives its length).  ``nan_at[b]``
    is the flat position of block ``b``'s first NaN score, or -1.  The only pass that
    reads the scores: the measure pass (:func:`measure_blocks`) is compiled once for
    every scores dtype and tie rule.

    Long because each query's ranking strategy (the NaN test, the count path with its
    pruning and fallback, the selections of the top d, the tie groups of ``average``) is
    written out in the one loop: the choice is made per query from counts known only
    inside it, the scratch buffers and the fallback statistics are loop state, and each
    strategy is a call site that a variant's flags compile or leave out (:class:`Variant`).
    The strategies' own work is in :mod:`rankjit._kernels.ranking`.
    """
    # views that hold no reference: slicing them in the loop below costs no atomic operation
    labels = borrowed(labels)
    scores = borrowed(scores)
    starts = borrowed(starts)
    counts = borrowed(counts)
    mask = borrowed(mask)
    ranked_labels = borrowed(ranked_labels)
    ranked_ranks = borrowed(ranked_ranks)
    info = borrowed(info)
    use_mask = MASKED  # compile-time: the other branch is not compiled
    # scratch space from the caller (nothing allocated here: no allocation code to compile)
    sel = borrowed(iwork[0])
    tmp = borrowed(iwork[1])
    slot = borrowed(iwork[2])
    stamp = borrowed(iwork[3])  # -1 on entry
    tmpf = borrowed(fwork[1])

    n_q = starts.shape[0]
    q_base = b_lo * CHUNK_SIZE
    off = 0
    for b in range(b_lo, b_hi):
        lo = b * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        first_nan_at = -1
        # the count path's fallback statistics restart with each block, so that a block's
        # work never depends on which thread ran the blocks before it
        fast_tried = 0
        fast_failed = 0
        for q in range(lo, hi):
            start = starts[q]
            count = counts[q]
            i_q = q - q_base
            # the ranks are written in place in the ranked buffer (room: the rows before hold >= off)
            ranks = ranked_ranks[off:off + count]
            if check_nan:
                # the NaN test of the scores, fused here: the row is read now and stays in cache
                p_nan = first_nan(scores, start, count, mask, use_mask)
                if p_nan >= 0:
                    if first_nan_at < 0:
                        first_nan_at = p_nan
                    info[i_q, INFO_LENGTH] = -1  # never scored: the caller raises
                    continue
            L = np.int64(0)  # np.int64: a literal 0 would compile the helpers it reaches twice
            n = 0
            n_valued = -1  # documents with label > 0, when the count path has counted them
            used_count_path = False
            if RANKED:  # (compile-time) each row in rank order already: its real documents, ranked 1, 2, ...
                n = gather(start, count, mask, use_mask, sel)
                if zero_safe:  # the valued documents alone, their positions as ranks (as the count path gives)
                    n_valued = 0
                    for i in range(n):
                        p = sel[i]
                        if labels[p] > 0:
                            if i < depth:
                                sel[L] = p
                                ranks[L] = i + 1
                                L += 1
                            n_valued += 1
                else:
                    L = min(depth, n)
                    for i in range(L):
                        ranks[i] = i + 1
            elif not AVERAGE and zero_safe:
                row = scores[start:start + count]
                lab = labels[start:start + count]
                if use_mask:
                    row_mask = mask[start:start + count]
                    for t in range(count):
                        sel[L] = start + t
                        L += (lab[t] > 0) & row_mask[t]
                else:
                    for t in range(count):
                        sel[L] = start + t
                        L += lab[t] > 0  # branch-free compaction (local slices: no wrap-around test)
                n_valued = L  # every real document with label > 0
                # (PRUNE, compile-time: only a variant for rows with many valued documents compiles this)
                if PRUNE and L > PRUNE_MIN_VALUED and count >= PRUNE_DEPTH:
                    # many valued documents: keep those that can reach the deepest cutoff (<= 16),
                    # score >= tau, a bound on the 16th best score (fewer to count)
                    tau = cutoff_bound(row, count)
                    kept = np.int64(0)
                    for i in range(L):
                        p = sel[i]
                        sel[kept] = p
                        kept += scores[p] >= tau
                    L = kept
                if not SELECT or L <= count_limit:  # (without SELECT every row is counted: short rows)
                    used_count_path = True
                    # the stable rule's count is exact at once (its ranks are distinct); the one-comparison
                    # count of the other rules fails on ties between valued documents, and when it keeps
                    # failing in this chunk (tie-heavy scores) the exact count runs first.  Either way the
                    # ranks are exact, so this choice never changes a result.
                    exact = 2 * fast_failed > fast_tried + 8
                    ranked = -1
                    tries = 0
                    while ranked < 0:  # at most twice; one call site of order_by_rank (compile time)
                        # (STABLE_RULE is compile-time: a stable copy compiles no fast_ranks, the others
                        # no stable_count_ranks)
                        if STABLE_RULE and tries == 0 and runs_worth_gathering(scores, sel, L, depth, count):
                            stable_count_ranks(scores, labels, start, count, mask, use_mask, sel, L, ranks, tmp,
                                               depth, ties)
                        elif STABLE_RULE or exact:  # two valued documents tie (or, never seen, two stable ranks)
                            count_ranks(scores, labels, start, count, mask, use_mask, sel, L, ranks, ties)
                        else:
                            fast_ranks(scores, start, count, mask, use_mask, sel, L, ranks, ties)
                        ranked = order_by_rank(sel, ranks, L, count, slot, stamp, 2 * q + tries, depth)
                        if not STABLE_RULE and not exact:
                            fast_tried += 1
                            fast_failed += ranked < 0
                        exact = True
                        tries += 1
                    L = ranked
                    if use_mask:
                        for p in range(start, start + count):
                            if mask[p]:
                                n += 1
                    else:
                        n = count
            if SELECT and not used_count_path:
                n = gather(start, count, mask, use_mask, sel)
                if FULL:  # the whole row in rank order (ties="average": by the stable rule)
                    L = n
                    merge_sort(scores, labels, sel, n, ties, tmp)
                elif DEEP:
                    L = min(depth, n)
                    top_d(scores, labels, sel, n, L, ties, tmp, tmpf)
                else:  # depth <= INSERTION_DEPTH: the heap and the merge sort are not compiled
                    L = min(depth, n)
                    if L > 0:
                        top_insertion(scores, labels, sel, n, L, ties, tmpf)
                if not AVERAGE:
                    for i in range(L):
                        ranks[i] = i + 1

            out_labels = ranked_labels[off:off + L]
            for i in range(L):
                out_labels[i] = labels[sel[i]]  # labels in rank order, read by every measure
            if AVERAGE:
                a = 0
                while a < L:  # each group of tied scores: its end at each of its positions
                    s = scores[sel[a]]
                    e = a + 1
                    while e < L and scores[sel[e]] == s:
                        e += 1
                    for i in range(a, e):
                        ranks[i] = e
                    a = e
            info[i_q, INFO_LENGTH] = L
            info[i_q, INFO_REAL] = n
            info[i_q, INFO_VALUED] = n_valued
            if SIGNS:  # Compat's ideal puts the unretrieved documents (score 0.0) before the negative scores
                nonneg = 0
                for p in range(start, start + count):
                    if scores[p] >= 0 and (not use_mask or mask[p]):
                        nonneg += 1
                info[i_q, INFO_NONNEG] = nonneg
            off += L
        nan_at[b] = first_nan_at


@jit
def measure_blocks(
    b_lo, b_hi, labels, starts, counts, mask, iparams, fparams, tables, itables, n_relevant, ideal_offsets,
    ideal_entries, rel_labels, ranked_labels, ranked_ranks, info, gbuf, hist, grades, part, out, sums,
):
    """The measure pass over the blocks ``b_lo .. b_hi - 1``, from the rank pass's lists.

    Per-query values go to ``out[m, q]``; when ``sums`` has rows, each block's values
    go to ``part`` instead and ``sums[m, b]`` receives their sum in query order (means
    without a per-query array).  A query whose row holds a NaN score gets NaN (never
    returned: the caller raises).  The labels of the row itself are read for what the
    ranked list cannot tell: the relevant documents in all and the ideal ranking.

    Long because it is the one dispatch from a plan row's measure code to its primitive
    (:mod:`rankjit._kernels.binary`, ``graded``, ``cascade``): every branch is a single
    call site guarded by its group's flag, so that a variant compiles only its groups'
    primitives and each primitive is inlined once (a second call site of an inlined
    helper costs its compile time again); the shared per-query quantities (R, the hits
    within the cutoff, the ideal DCG) are computed once above the branches.
    """
    labels = borrowed(labels)
    starts = borrowed(starts)
    counts = borrowed(counts)
    mask = borrowed(mask)
    iparams = borrowed(iparams)
    fparams = borrowed(fparams)
    tables = borrowed(tables)
    itables = borrowed(itables)
    n_relevant = borrowed(n_relevant)
    ideal_offsets = borrowed(ideal_offsets)  # judged documents per grade: query q's (grade, count) rows are
    ideal_entries = borrowed(ideal_entries)  # ideal_entries[ideal_offsets[q]:ideal_offsets[q + 1]] (none: empty)
    rel_labels = borrowed(rel_labels)
    ranked_labels = borrowed(ranked_labels)
    ranked_ranks = borrowed(ranked_ranks)
    info = borrowed(info)
    gbuf = borrowed(gbuf)
    hist = borrowed(hist)
    grades = borrowed(grades)  # grade g in the labels' dtype
    part = borrowed(part)
    out = borrowed(out)
    use_mask = MASKED  # compile-time: the other branch is not compiled
    n_measures = iparams.shape[0]

    means = sums.shape[0] > 0
    n_q = starts.shape[0]
    q_base = b_lo * CHUNK_SIZE
    off = 0  # where the next ranked list starts
    for b in range(b_lo, b_hi):
        lo = b * CHUNK_SIZE
        hi = min(n_q, lo + CHUNK_SIZE)
        dest = part if means else out
        q0 = lo if means else 0
        for q in range(lo, hi):
            i_q = q - q_base
            L = info[i_q, INFO_LENGTH]
            if L < 0:  # a NaN score
                for m in range(n_measures):
                    dest[m, q - q0] = np.nan
                continue
            n = info[i_q, INFO_REAL]
            n_valued = info[i_q, INFO_VALUED]
            rlab = ranked_labels[off:off + L]
            ranks = ranked_ranks[off:off + L]  # with AVERAGE: the end of each position's tie group
            off += L
            start = starts[q]
            count = counts[q]
            for m in range(n_measures):
                ip = iparams[m]
                code = ip[Lay.I_CODE]
                k = ip[Lay.I_K]
                kk = k if k > 0 else n  # effective cutoff
                rel = fparams[m, Lay.F_REL]
                empty = fparams[m, Lay.F_EMPTY]
                value = 0.0
                R = 0.0  # relevant documents of the query, for the measures normalised by it
                if BINARY and (code == Lay.RECALL or code == Lay.AP or code == Lay.RPREC or code == Lay.SET
                               or code == Lay.IPREC or code == Lay.JUDGMENTS):
                    # one call site: each inlined copy of the count costs compile time
                    R = _relevant_total(
                        q, labels, start, count, mask, use_mask, rel, rel_labels, m, ip[Lay.I_REL_KIND], n_valued, n_relevant,
                        ideal_offsets, ideal_entries,
                    )
                h = 0.0  # relevant documents within the cutoff (rank R for Rprec): P, R, Success, Rprec
                if BINARY and (code == Lay.P or code == Lay.RECALL or code == Lay.RPREC or code == Lay.SET
                               or (code == Lay.SUCCESS and not AVERAGE)):
                    cut = int(R) if code == Lay.RPREC else kk  # one call site, as for R
                    h = _binary.avg_hits(rlab, ranks, n, cut, rel) if AVERAGE else _binary.hits(rlab, ranks, L, cut, rel)
                if BINARY and code == Lay.P:
                    den = min(kk, n) if ip[Lay.I_P_MIN_K_N] else kk  # P@k: over k, or min(k, n)
                    value = h / den if den > 0 else 0.0
                elif BINARY and code == Lay.RECALL:
                    value = _normalise(h, R, empty)
                elif BINARY and code == Lay.SUCCESS:
                    if AVERAGE:
                        value = _binary.avg_success(rlab, ranks, n, kk, rel)
                    else:
                        value = 1.0 if h > 0 else 0.0
                elif BINARY and code == Lay.RR:
                    if AVERAGE:
                        value = _binary.avg_reciprocal_rank(rlab, ranks, n, kk, rel)
                    else:
                        value = _binary.reciprocal_rank(rlab, ranks, L, kk, rel)
                elif BINARY and code == Lay.AP:
                    s = _binary.avg_ap_sum(rlab, ranks, n, kk, rel) if AVERAGE else _binary.ap_sum(rlab, ranks, L, kk, rel, tables, ip[Lay.I_WEIGHT_OFF])
                    den = R
                    if k > 0 and ip[Lay.I_DENOMINATOR] == Lay.AP_MIN_K_R:
                        den = min(float(k), R)
                    value = _normalise(s, den, empty)
                elif BINARY and code == Lay.RPREC:
                    value = _normalise(h, R, empty)
                elif SETS and code == Lay.SET:  # h: relevant documents of the whole row (kk = n)
                    value = _binary.set_value(ip[Lay.I_SET_KIND], h, n, R, fparams[m, Lay.F_PARAM], empty)
                elif SETS and code == Lay.IPREC:  # ties="average" is refused before the kernel
                    if R > 0.0:
                        c = np.floor(fparams[m, Lay.F_PARAM] * R + fparams[m, Lay.F_OFFSET])  # documents at the level
                        value = _binary.interpolated_precision(rlab, ranks, L, rel, c)
                    else:
                        value = empty
                elif SETS and code == Lay.JUDGMENTS:  # Bpref, infAP: rlab holds judgment codes or judged grades
                    # relevant: label >= rel (R of them); judged non-relevant: judged_lo <= label < rel; pooled:
                    # 1 <= label < judged_lo (``lo`` is the block's first query)
                    judged_lo = fparams[m, Lay.F_PARAM]
                    if R <= 0.0:
                        value = empty
                    elif ip[Lay.I_SET_KIND] == Lay.BPREF:
                        if ideal_offsets.shape[0] > 0:  # the query's judged non-relevant documents, N
                            N = float(_counted_between(q, ideal_offsets, ideal_entries, judged_lo, rel))
                        else:
                            N = float(_binary.count_between(labels, start, count, mask, use_mask, judged_lo, rel))
                        value = _binary.bpref_sum(rlab, L, R, N, judged_lo, rel) / R
                    else:
                        value = _binary.infap_sum(rlab, ranks, L, judged_lo, rel) / R
                elif GRADED and (code == Lay.DCG or code == Lay.NDCG):
                    mode = ip[Lay.I_VALUE_MODE]
                    voff = ip[Lay.I_VALUE_OFF]
                    woff = ip[Lay.I_WEIGHT_OFF]
                    dk = min(kk, n)
                    if AVERAGE:
                        s = _graded.avg_dcg(rlab, ranks, n, dk, mode, tables, voff, woff)
                    else:
                        s = _graded.dcg(rlab, ranks, L, dk, mode, tables, voff, woff)
                    if code == Lay.DCG:
                        value = s + fparams[m, Lay.F_OFFSET]  # DCG + offset (0, or RBPResidual's 1)
                        if EXTRAS and ip[Lay.I_ZERO_WHEN_JUDGED]:
                            # trec_eval's rbp_resid: 0 when the top d is all judged (label >= F_REL: the flags' 1,
                            # or the judged grades' lo), where the residual is p^d; E = E[residual] - P(all judged)
                            # p^d over the tied orders
                            judged_lo = fparams[m, Lay.F_REL]
                            if AVERAGE:
                                judged_all = _binary.avg_none_below(rlab, ranks, n, dk, judged_lo)
                            else:
                                judged_all = 1.0 if _binary.hits(rlab, ranks, L, dk, judged_lo) == dk else 0.0
                            if judged_all == 1.0:
                                value = 0.0
                            elif judged_all > 0.0:
                                value -= judged_all * fparams[m, Lay.F_PARAM] ** dk
                    else:
                        ik = k if k > 0 else ip[Lay.I_WEIGHT_LEN]
                        if not IDEAL_OTHER:  # by-grade gains, the ideal from the row itself
                            ideal = _ideal_from_row(labels, start, count, mask, use_mask, ik, ip, tables, itables, hist, grades)
                        elif ip[Lay.I_VALUE_MODE] == Lay.VALUE_TABLE and ideal_offsets.shape[0] == 0:
                            ideal = _ideal_from_row(labels, start, count, mask, use_mask, ik, ip, tables, itables, hist, grades)
                        else:
                            ideal = _ideal_other(
                                q, labels, start, count, mask, use_mask, ik, ip, tables, itables, ideal_offsets,
                                ideal_entries, hist, gbuf,
                            )
                        value = _normalise(s, ideal, empty)
                elif CWL and code == Lay.CWL:  # NERR8-NERR11, INST, BPM: ranks 1..k, k <= cwl_eval's 1000 (I_K)
                    value = _cascade.cwl_walk(rlab, ranks, L, ip, fparams[m], tables)  # out of line: its own compile
                elif EXTRAS and code == Lay.ACCURACY:  # ties="average" is refused before the kernel
                    value = _binary.accuracy(rlab, ranks, L, kk, n, rel, empty)
                elif EXTRAS and code == Lay.COMPAT:  # the whole row ranked; ties="average" refused
                    nonneg = info[i_q, INFO_NONNEG] if SIGNS else n  # ranks 1..nonneg: the scores >= 0
                    value = _cascade.compat_walk(rlab, ranks, L, n, nonneg, q, ideal_offsets, ideal_entries, hist, ip,
                                                 fparams[m], tables)  # out of line: its own compile
                elif CASCADE:  # ERR, pFound (ties="average" is refused before the kernel)
                    value = _cascade.cascade(
                        rlab, ranks, L, min(kk, n), ip[Lay.I_VALUE_MODE], tables, ip[Lay.I_VALUE_OFF], ip[Lay.I_WEIGHT_OFF]
                    )
                dest[m, q - q0] = value

        if means:
            for m in range(n_measures):
                # compensated (Neumaier) sum in query order: as accurate as np.mean's pairwise sum
                s = 0.0
                comp = 0.0
                for i in range(hi - lo):
                    x = part[m, i]
                    t = s + x
                    if abs(s) >= abs(x):
                        comp += (s - t) + x
                    else:
                        comp += (x - t) + s
                    s = t
                sums[m, b] = s + comp


class Engine(NamedTuple):
    """The two compiled passes of one variant."""

    rank: object  # rank_blocks for the variant's tie rule, padding and depth (compiled per scores dtype)
    measure: object  # measure_blocks for its measure groups and padding (one build for every scores dtype)


_VARIANTS: dict = {}
_RANK_PASSES: dict = {}
_MEASURE_PASSES: dict = {}


def compiled(variant: Variant) -> Engine:
    """The engine's passes for ``variant`` (compiled on first use, then loaded from the disk cache).

    The rank pass is specialised for the tie rule, the padding and the selection depth;
    the measure pass for the measure groups and the padding only, so that every tie rule
    (but ``average``) and every scores dtype share it.
    """
    engine = _VARIANTS.get(variant)
    if engine is None:
        average = variant.ties == TIES_AVERAGE
        # the rank pass's flags (module globals its copy replaces): one table gives its cache key and its name
        flags = {"AVERAGE": average, "MASKED": variant.masked, "DEEP": variant.deep, "FULL": variant.full,
                 "SIGNS": variant.signs, "PRUNE": variant.prune, "SELECT": variant.select, "RANKED": variant.ranked}
        rank_key = (variant.ties, *flags.values())
        rank = _RANK_PASSES.get(rank_key)
        if rank is None:
            ranking = _ranking.for_rule(variant.ties)
            # the ranking kernels compiled for the variant's tie rule
            kernels = {name: ranking[name] for name in ("count_ranks", "fast_ranks", "stable_count_ranks", "top_d",
                                                        "top_insertion")}
            kernels["merge_sort"] = ranking["_merge_sort"]
            kernels["STABLE_RULE"] = variant.ties == TIES_STABLE
            rule = next(name for name, code in _ranking.TIES_CODES.items() if code == variant.ties)
            # "<rule>[-flag...]" ("average" is the rule's own name)
            name = "-".join([rule] + [flag.lower() for flag, on in flags.items() if on and flag != "AVERAGE"])
            rank = _RANK_PASSES[rank_key] = specialise([rank_blocks], name, {**flags, **kernels})["rank_blocks"]
        measure_key = (
            average, variant.masked, variant.binary, variant.graded, variant.cascade, variant.ideal_other,
            variant.packed_grades, variant.sets, variant.cwl, variant.extras, variant.signs,
        )
        measure = _MEASURE_PASSES.get(measure_key)
        if measure is None:
            flags = dict(zip(("AVERAGE", "MASKED", "BINARY", "GRADED", "CASCADE", "IDEAL_OTHER", "PACKED_GRADES",
                              "SETS", "CWL", "EXTRAS", "SIGNS"), measure_key))
            name = "-".join(flag.lower() for flag, on in flags.items() if on)
            # _ideal_from_row (inlined) reads PACKED_GRADES: copied with the pass, it reads the copy's flag
            copies = specialise([measure_blocks, _ideal_from_row], name, flags)
            measure = _MEASURE_PASSES[measure_key] = copies["measure_blocks"]
        engine = _VARIANTS[variant] = Engine(rank, measure)
    return engine


#: Blocks per group: the Python tier calls the rank pass, then the measure pass, once per
#: group of blocks (about 2 us of dispatch per call against ~0.1 ms of work per block); the
#: ranked lists of a group are held in buffers of at most its rows (GROUP_ROWS, or one block).
GROUP_BLOCKS = 8
GROUP_ROWS = 1 << 21


#: the measure pass's judged counts when none are given: no offsets, no (grade, count) entries
_NO_IDEAL_COUNTS = (np.zeros(0, dtype=np.int64), np.zeros((0, 2), dtype=np.int64))


class Passes:
    """The engine over one batch and plan: ``passes(g_lo, g_hi, scores, nan_at, out, sums)``.

    Runs the rank pass and then the measure pass over each group of blocks
    ``g_lo .. g_hi - 1`` (:attr:`n_groups` in all), with scratch arrays and ranked buffers
    of its own: concurrent calls on disjoint groups are safe.  ``scores`` may differ
    between calls (one system after another) when its dtype does not.  Everything the
    kernels need is computed here once; the scratch arrays are made by numpy, so that
    the compiled passes hold no allocation code (less to compile).
    """

    def __init__(self, variant: Variant, batch, plan, ties, n_relevant, ideal_counts, check_nan, count_limit, means):
        n_q = batch.n_queries
        n_blocks = (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE
        block_rows = np.add.reduceat(batch.counts, np.arange(0, n_q, CHUNK_SIZE)) if n_q else np.zeros(0, np.int64)
        per_group = int(min(GROUP_BLOCKS, max(1, GROUP_ROWS // max(int(block_rows.max(initial=0)), 1))))
        self.bounds = np.minimum(np.arange(0, n_blocks + per_group, per_group), n_blocks)
        self.n_groups = len(self.bounds) - 1
        self.group_rows = int(np.add.reduceat(block_rows, self.bounds[:-1]).max()) if n_blocks else 0
        self.group_queries = min(n_q, per_group * CHUNK_SIZE)
        self.variant = variant
        self.engine = compiled(variant)
        self.labels = batch.labels
        self.max_count = max(batch.max_count, 1)
        self.n_hist = plan.n_hist
        self.n_measures = plan.iparams.shape[0]
        self.means = means
        self.rank_args = (
            batch.starts, batch.counts, batch.mask, np.int64(ties), np.int64(plan.depth), plan.zero_safe,
            np.int64(count_limit), bool(check_nan),
        )
        self.measure_args = (
            batch.labels, batch.starts, batch.counts, batch.mask, plan.iparams, plan.fparams, plan.tables,
            plan.itables, n_relevant,
            *((ideal_counts.offsets, ideal_counts.entries) if ideal_counts is not None else _NO_IDEAL_COUNTS),
            plan.rel_labels,
        )

    def argument_types(self, scores, nan_at, out, sums):
        """The Numba types of the arguments the rank pass and the measure pass are called with
        (:meth:`__call__`): ``(rank_types, measure_types)``."""
        import numba

        iwork, fwork, ranked_labels, ranked_ranks, info, hist, grades, part = self.workspace()
        block = np.int64(0)
        rank_args = (block, block, self.labels, scores, *self.rank_args, iwork, fwork, nan_at, ranked_labels,
                     ranked_ranks, info)
        measure_args = (block, block, *self.measure_args, ranked_labels, ranked_ranks, info, fwork[0], hist, grades,
                        part, out, sums)
        return tuple(numba.typeof(a) for a in rank_args), tuple(numba.typeof(a) for a in measure_args)

    def workspace(self):
        """Scratch arrays for one thread.

        ``iwork`` rows: selected positions, merge-sort scratch, the rank slots and their stamps
        (-1: free; the ranks themselves go straight to the ranked buffer); ``fwork`` rows: gains of the ideal ranking, the scores of the
        insertion buffer; the ranked buffers and ``info`` of a group; ``hist``: a grade
        histogram and ``grades``: grade ``g`` in the labels' dtype; ``part``: one block of
        per-query values when only means are wanted.
        """
        iwork = np.empty((4, self.max_count), dtype=np.int64)
        iwork[3] = -1
        fwork = np.empty((2, self.max_count), dtype=np.float64)
        dtype = self.labels.dtype
        return (
            iwork, fwork, np.empty(self.group_rows, dtype=dtype), np.empty(self.group_rows, dtype=np.int32),
            np.empty((self.group_queries, INFO_COLUMNS), dtype=np.int64), np.zeros(self.n_hist, dtype=np.int64),
            np.arange(self.n_hist).astype(dtype), np.empty((self.n_measures, CHUNK_SIZE if self.means else 0)),
        )

    def __call__(self, g_lo, g_hi, scores, nan_at, out, sums):
        iwork, fwork, ranked_labels, ranked_ranks, info, hist, grades, part = self.workspace()
        rank, measure = self.engine
        for g in range(g_lo, g_hi):
            b_lo = np.int64(self.bounds[g])
            b_hi = np.int64(self.bounds[g + 1])
            rank(b_lo, b_hi, self.labels, scores, *self.rank_args, iwork, fwork, nan_at, ranked_labels, ranked_ranks,
                 info)
            measure(b_lo, b_hi, *self.measure_args, ranked_labels, ranked_ranks, info, fwork[0], hist, grades, part,
                    out, sums)
