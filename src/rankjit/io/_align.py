"""Aligning a run with its qrels exactly as trec_eval does.

* Queries are those of the qrels, in byte order of their ids; a query only in the
  run is ignored; with ``complete=True`` (trec_eval ``-c``) a qrels query missing
  from the run is kept with no retrieved document (every measure 0).
* Each query's documents are ranked by score descending, ties by docno descending
  (byte order), then cut to ``max_docs`` (``-M``).
* A retrieved document's label is its judgment (unjudged and negative: 0).  The
  relevance counts ``n_relevant`` (grades >= ``rel_level``, ``-l``) and the
  per-grade counts ``judged_counts`` cover every judged document of the query,
  retrieved or not, so recall, AP, R-precision and the ideal DCG use them.
* Grades are any int64.  The judged grades are coded densely (``grade_values``: the
  distinct grades >= 0 and 0, ascending; ``grade_codes``: each ranked document's
  index in it), and the counts per query and grade are kept sparse (``judged_counts``),
  so that memory grows with the judgments, never with the largest grade or with queries x
  distinct grades.  The dense tables (``grade_counts``, and ``ideal_counts`` with one column
  per grade 0..max) are built on demand only while they are small (``IDEAL_COUNTS_LIMIT``).
"""
from __future__ import annotations

import functools
import math
import numbers
import os
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from rankjit._config import run_blocks, use_parallel
from rankjit._grade_counts import DENSE_CELLS_LIMIT, GradeCounts
from rankjit.io import _kernels as K
from rankjit.io._trec import (
    DiversityQrels,
    StringColumn,
    TrecQrels,
    TrecRun,
    _pyarrow,
    read_diversity_qrels,
    read_trec_qrels,
    read_trec_run,
)

__all__ = ["AlignedRun", "AlignedDiversity", "align", "align_diversity", "evaluate_run"]


class NoCommonQuery(ValueError):
    """No query has both results and relevance judgments (what :func:`align` and :func:`align_diversity` raise
    then; a front end that reports such queries as 0, as ir_measures does, catches it)."""


@dataclass(frozen=True, eq=False)
class AlignedRun:
    """A run ranked and labelled against qrels: the core's ragged (CSR) batch.

    Attributes
    ----------
    qids : list of str
        The evaluated queries, in trec_eval's order (byte order of the ids).
    offsets : numpy.ndarray of int64, shape (n_queries + 1,)
        Query ``i`` is ``labels[offsets[i]:offsets[i + 1]]``.
    labels : numpy.ndarray of int64
        Judgment of each retrieved document in rank order (unjudged, negative: 0).
    scores : numpy.ndarray of float64
        Scores in rank order (descending; ties already in docno-descending order,
        so evaluate with ``ties="stable"``).
    rows : numpy.ndarray of int64
        Row of the run file behind each ranked document.
    n_relevant : numpy.ndarray of int64
        Judged documents with grade >= ``rel_level``, retrieved or not (trec_eval's R).
    in_run : numpy.ndarray of bool
        False for queries added by ``complete=True``.
    grade_values : numpy.ndarray of int64, shape (n_grades,)
        The distinct judged grades >= 0 of the qrels (every query, evaluated or not),
        ascending, with 0 always first: ``grade_values[0] == 0``.
    grade_codes : numpy.ndarray of uint8 (up to 256 grades) or int32, like ``labels``
        Index in ``grade_values`` of each ranked document's label:
        ``grade_values[grade_codes] == labels`` (code 0: grade 0, unjudged or negative).
        Codes keep the order of the grades, so ``labels >= t`` is
        ``grade_codes >= np.searchsorted(grade_values, t)``.
    judged_counts : rankjit._grade_counts.GradeCounts
        Judged documents of each query per distinct grade (grade code ``c``: grade
        ``grade_values[c]``), retrieved or not, negative grades not counted; kept
        sparse (only the codes a query holds), so memory grows with the judgments.
    grade_counts : numpy.ndarray of int64, shape (n_queries, n_grades)
        :attr:`judged_counts` as a dense table (column ``c``: grade ``grade_values[c]``):
        the ``ideal_counts=`` of an evaluation on ``grade_codes`` with a gain per code.
        Built on first use; a ``ValueError`` beyond ``IDEAL_COUNTS_LIMIT`` cells.
    ideal_counts : numpy.ndarray of int64, shape (n_queries, largest grade + 1)
        Judged documents per grade 0..largest grade, retrieved or not (negative grades
        not counted): the ``ideal_counts=`` of an evaluation on ``labels``.  Built on
        first use; a ``ValueError`` beyond ``IDEAL_COUNTS_LIMIT`` cells (see Notes).
    rel_level : int
    runid : str or None
    judged : numpy.ndarray of bool, like ``labels``
        True for a retrieved document judged with a grade >= 0; False for one the qrels
        do not hold or judge below 0 (trec_eval's unjudged documents: bpref, unj,
        rbp_resid and ``-J`` tell them from judged non-relevant ones, which ``labels``
        cannot: both have label 0).
    judged_below_zero : numpy.ndarray of bool, like ``labels``
        True for a retrieved document the qrels judge below 0 (trec_eval's "in the pool
        but unjudged", relevance value -2; a document the qrels do not hold is -1): read by
        relstring ('.' against '-') and infAP.
    IDEAL_COUNTS_LIMIT : int
        Class attribute: the most cells of :attr:`ideal_counts` (``n_queries * (largest
        grade + 1)``) and of :attr:`grade_counts`, 2**26 (512 MiB of int64).

    Notes
    -----
    Memory grows with the judgments and the retrieved documents, whatever the number and
    the values of the grades: the counts by grade are kept sparse (:attr:`judged_counts`).
    The dense tables :attr:`grade_counts` and ``ideal_counts`` are built only when asked
    for, and only up to ``IDEAL_COUNTS_LIMIT`` cells; :meth:`evaluate` never builds them.
    """

    IDEAL_COUNTS_LIMIT: ClassVar[int] = DENSE_CELLS_LIMIT

    qids: list
    offsets: np.ndarray
    labels: np.ndarray
    scores: np.ndarray
    rows: np.ndarray
    n_relevant: np.ndarray
    in_run: np.ndarray
    grade_values: np.ndarray
    grade_codes: np.ndarray
    judged_counts: GradeCounts
    rel_level: int = 1
    runid: str | None = None
    judged: np.ndarray | None = None
    judged_below_zero: np.ndarray | None = None

    @property
    def n_queries(self):
        return len(self.qids)

    def judged_only(self):
        """The run without its unjudged documents (trec_eval ``-J``), the others in the same order.

        A condensed list: each query keeps the documents of :attr:`judged` (after ``-M``, as
        trec_eval cuts first), ranked 1, 2, ... among themselves; the judgments, ``n_relevant``
        and the grade counts are unchanged.

        Examples
        --------
        >>> run = read_trec_run(b"q Q0 a 1 3 t\\nq Q0 b 2 2 t\\nq Q0 c 3 1 t\\n")
        >>> aligned = align(run, read_trec_qrels(b"q 0 a 0\\nq 0 c 1\\n"))
        >>> aligned.labels.tolist(), aligned.judged_only().labels.tolist()
        ([0, 0, 1], [0, 1])
        """
        import dataclasses

        keep = self.judged
        kept_before = np.zeros(keep.shape[0] + 1, dtype=np.int64)  # judged documents before each position
        np.cumsum(keep, out=kept_before[1:])
        counts = kept_before[self.offsets[1:]] - kept_before[self.offsets[:-1]]  # empty queries anywhere: 0
        offsets = np.zeros(self.n_queries + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return dataclasses.replace(
            self, offsets=offsets, labels=self.labels[keep], scores=self.scores[keep], rows=self.rows[keep],
            grade_codes=self.grade_codes[keep], judged=self.judged[keep],
            judged_below_zero=self.judged_below_zero[keep],
        )

    def queries(self, which):
        """``(the run cut to the queries which, the rows of this run its documents come from)``.

        ``which`` (int64, ascending) indexes :attr:`qids`; every per-document array is
        gathered at the returned rows, every per-query one at ``which``.
        """
        import dataclasses

        lens = np.diff(self.offsets)[which]
        offsets = np.zeros(which.shape[0] + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        rows = np.repeat(self.offsets[:-1][which] - offsets[:-1], lens) + np.arange(offsets[-1])
        judged, below = self.judged, self.judged_below_zero
        cut = dataclasses.replace(
            self, qids=[self.qids[i] for i in which.tolist()], offsets=offsets, labels=self.labels[rows],
            scores=self.scores[rows], rows=self.rows[rows], n_relevant=self.n_relevant[which],
            in_run=self.in_run[which], grade_codes=self.grade_codes[rows], judged_counts=self.judged_counts.take(which),
            judged=None if judged is None else judged[rows], judged_below_zero=None if below is None else below[rows],
        )
        return cut, rows

    @property
    def num_ret(self):
        """Retrieved documents per query (after ``max_docs``)."""
        return np.diff(self.offsets)

    @property
    def ideal_counts_size(self):
        """Cells of :attr:`ideal_counts`: ``n_queries * (largest grade + 1)`` (a Python int)."""
        return self.n_queries * (int(self.grade_values[-1]) + 1)

    @functools.cached_property
    def grade_counts(self):
        """:attr:`judged_counts` as a dense table: int64, shape (n_queries, n_grades), built on first use.

        Raises
        ------
        ValueError
            When the table would have more than ``IDEAL_COUNTS_LIMIT`` cells (many
            queries with many distinct grades): use :attr:`judged_counts` instead.
        """
        return self.judged_counts.dense(self.IDEAL_COUNTS_LIMIT, "grade_counts")

    def judged_counts_by_grade(self):
        """:attr:`judged_counts` with grades in place of codes (sparse; the ``ideal_counts=`` of ``labels``)."""
        import dataclasses

        entries = self.judged_counts.entries.copy()
        entries[:, 0] = self.grade_values[entries[:, 0]]
        return dataclasses.replace(self.judged_counts, entries=entries, n_columns=int(self.grade_values[-1]) + 1)

    @functools.cached_property
    def ideal_counts(self):
        """Judged documents per grade, retrieved or not: int64, shape (n_queries, largest grade + 1).

        Column ``g`` counts the query's judged documents of grade ``g`` (negative grades
        are not counted).  Built from :attr:`judged_counts` on first use (then kept).

        Raises
        ------
        ValueError
            When the table would have more than ``IDEAL_COUNTS_LIMIT`` cells (a huge
            grade): use :attr:`judged_counts` and :attr:`grade_values` instead.
        """
        size = self.ideal_counts_size
        if size > self.IDEAL_COUNTS_LIMIT:
            raise ValueError(
                f"ideal_counts would have {self.n_queries} x {int(self.grade_values[-1]) + 1} = {size} cells "
                f"(grades go up to {int(self.grade_values[-1])}), more than IDEAL_COUNTS_LIMIT = "
                f"{self.IDEAL_COUNTS_LIMIT}; use judged_counts (counts per grade code, grade_values) instead"
            )
        return self.judged_counts_by_grade().dense(self.IDEAL_COUNTS_LIMIT)

    def evaluate(self, measures, *, per_query=False, **kwargs):
        """Evaluate with :func:`rankjit.evaluate` using trec_eval's conventions.

        Labels, trec_eval's ranking (``ties="stable"`` on the pre-sorted rows) and the
        judged-document counts (``ideal_counts``; counted from the judgments that labelled
        the rows, so not checked against them again) are passed for you, and :attr:`judged`
        when a measure is asked for with ``judged_only=True`` (trec_eval ``-J``) or gives
        grade 0 a value (``nDCG(gains={0:1})``, ``P(rel=0)@5``): a document the qrels do
        not judge (or judge below 0) then gains nothing and is never relevant, as in
        trec_eval and ir_measures, while a judged grade-0 document keeps grade 0's gain.
        ``Judged@k`` counts every document the qrels hold, those judged below 0
        included (ir_measures' Judged); ``judged_only=True`` keeps those judged >= 0.

        When ``ideal_counts`` would exceed ``IDEAL_COUNTS_LIMIT`` cells (a huge grade)
        and is not given, the measures are computed on :attr:`grade_codes` with
        :attr:`judged_counts`, which gives the same values: P, R, Success, RR, AP and
        Rprec with their threshold ``rel`` turned into the first code of a grade
        >= ``rel``; DCG and nDCG with their gain (``'linear'``, ``'exp2'`` or an array
        by grade) turned into a gain per code.  Any other measure (ERR, pFound,
        diversity and preference measures) raises ``ValueError`` then.

        Examples
        --------
        >>> run = read_trec_run(b"q1 Q0 a 1 2 t\\nq1 Q0 b 2 1 t\\n")
        >>> qrels = read_trec_qrels(b"q1 0 b 1\\nq1 0 c 1\\n")
        >>> aligned = align(run, qrels)
        >>> aligned.evaluate(["P@2", "AP"])
        {'P@2': 0.5, 'AP': 0.25}
        """
        import rankjit
        from rankjit import _measures as M

        parsed = M.parse_list(measures)
        if self.judged is not None and "judged" not in kwargs and any(m.family == "Judged" for m in parsed):
            # Judged@k counts every document the qrels hold, judged below 0 too (ir_measures' Judged);
            # judged_only=True keeps those judged >= 0 (trec_eval -J), as do the other measures (RBPResidual:
            # trec_eval's rbp_resid): two masks, two calls
            out = {}
            rest = [m for m in parsed if m.family != "Judged"]
            if rest:
                out.update(self.evaluate(rest, per_query=per_query, **kwargs))
            in_qrels = self.judged | self.judged_below_zero
            out.update(self.evaluate([m for m in parsed if m.family == "Judged"], per_query=per_query,
                                     judged=in_qrels, **kwargs))
            return {m.text: out[m.text] for m in parsed}
        kwargs.setdefault("ties", "stable")
        if self.judged is not None and (kwargs.get("judged_only") is True or any(m.judged_only for m in parsed)
                                        or any(M.reads(m) != "labels" for m in parsed)
                                        or M.any_values_grade_zero(parsed, {"rel": kwargs.get("rel")})):
            # trec_eval's judged documents: for judged_only=True, for the measures that read judged flags or judgment
            # codes (RBPResidual, Bpref, infAP), and for the measures that give grade 0 a value
            # (nDCG(gains={0: 1}), P(rel=0)@k, ...), which give none to a document the qrels do not judge
            kwargs.setdefault("judged", self.judged)
        if self.judged is not None and any(M.reads_judgment_codes(m) for m in parsed):
            # infAP: the documents judged below 0 are in the pool but unjudged (trec_eval's -2)
            kwargs.setdefault("pooled", self.judged | self.judged_below_zero)
        if "ideal_counts" in kwargs or self.ideal_counts_size <= self.IDEAL_COUNTS_LIMIT:
            # (the grades themselves when queries x grades stays small: the ideal DCG walks every grade of the
            # table for each query; the run's own counts cover its rows by construction: not checked against them)
            kwargs.setdefault("ideal_counts", self.judged_counts_by_grade())
            return rankjit.evaluate(
                self.labels, self.scores, measures, offsets=self.offsets, per_query=per_query, **kwargs
            )
        coded = measures_on_codes(measures, self.grade_values, kwargs.pop("rel", None),
                                  why=f"grades go up to {int(self.grade_values[-1])}")
        return evaluate_coded(self.grade_codes, self.scores, self.offsets, coded, ideal_counts=self.judged_counts,
                              per_query=per_query, **kwargs)


def engine_codes(codes):
    """``codes`` as labels for the engine: uint8 as they are, wider codes as int64.

    The engine is compiled per label dtype; uint8 and int64 are the ones every
    evaluation of ``labels`` already uses (no compilation of an int32 variant).
    """
    return codes if codes.dtype == np.uint8 else codes.astype(np.int64)


def evaluate_coded(codes, scores, offsets, measures, *, ideal_counts, per_query=True, **kwargs):
    """:func:`rankjit.evaluate` of measures on grade codes, the documents ranked as given.

    ``codes`` are labels coded densely (:attr:`AlignedRun.grade_codes`, or any labels
    of a small range), ``measures`` already rewritten for them (:func:`measures_on_codes`)
    and ``ideal_counts`` holds one column per code, counted from the judgments that coded
    the labels: it covers the row by construction, so it is not checked against it (nor is
    ``n_relevant`` when the caller marks it so: ``rankjit._api.counts_of_the_judgments``).
    Documents are in trec_eval's rank order, so ``ties`` defaults to ``"stable"``; other
    keywords go to ``rankjit.evaluate``.  Shared by :meth:`AlignedRun.evaluate`, ``rankjit
    trec_eval`` and the front ends.
    """
    import rankjit
    from rankjit._api import counts_of_the_judgments

    kwargs.setdefault("ties", "stable")
    return rankjit.evaluate(engine_codes(codes), scores, measures, offsets=offsets,
                            ideal_counts=counts_of_the_judgments(ideal_counts), per_query=per_query, **kwargs)


def _finite_number(x):
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return False
    return isinstance(x, numbers.Integral) or math.isfinite(float(x))


def first_code_at_least(grade_values, threshold):
    """The first code whose grade is >= ``threshold`` (``len(grade_values)`` if none).

    ``threshold`` is any real number (``grade >= t`` is ``grade >= ceil(t)`` for
    integer grades); Python integers of any size are compared exactly.
    """
    if isinstance(threshold, numbers.Integral):
        c = int(threshold)
    else:
        t = float(threshold)
        if math.isnan(t):
            raise ValueError(f"a relevance threshold must be a number, got {threshold!r}")
        if math.isinf(t):
            return 0 if t < 0 else grade_values.shape[0]
        c = math.ceil(t)
    info = np.iinfo(np.int64)
    c = min(max(c, info.min), info.max)  # beyond int64: below or above every grade alike
    if c > int(grade_values[-1]):
        return grade_values.shape[0]
    return int(np.searchsorted(grade_values, np.int64(c), side="left"))


def _gain_per_code(m, gain, grade_values):
    """The gain of each code of a DCG / nDCG measure's ``gain`` (None: leave it to rankjit's checks)."""
    from rankjit._measures import float_array

    top = int(grade_values[-1])
    if isinstance(gain, str):
        if gain == "linear":
            return grade_values.astype(np.float64)
        if gain == "exp2":
            with np.errstate(over="ignore"):
                table = np.exp2(grade_values.astype(np.float64)) - 1.0
            if not np.isfinite(table[-1]):
                raise ValueError(
                    f"{m.text}: gain='exp2' of grade {top} overflows float64 (2**y - 1 exceeds 1.8e308 from grade "
                    "1024 on); use gain='linear' or a gain array (a gain for each grade)"
                )
            return table
        return None
    try:
        table = float_array(gain, "")
    except TypeError:
        return None
    if table.ndim != 1 or table.shape[0] == 0:
        return None
    if top >= table.shape[0]:
        raise ValueError(
            f"{m.text}: the gain array covers grades 0..{table.shape[0] - 1}, but the qrels hold grade {top}; "
            "give a gain for every grade"
        )
    return table[grade_values]


def measures_on_codes(measures, grade_values, rel=None, why="the grades are coded"):
    """The measures rewritten for labels ``grade_codes`` with ``ideal_counts=judged_counts``.

    Binary measures (P, R, Success, RR, AP, Rprec) get ``rel`` = the first code of a
    grade >= their threshold (the measure's ``rel=``, else ``rel``, else 1); DCG and
    nDCG get a gain per code (their gain of grade ``grade_values[c]``).  Each keeps
    its text, so results are keyed as the measures were given.  Both are exact:
    ``grade >= t`` is ``code >= first code of a grade >= t``, and the ideal DCG of the
    distinct grades is the one of the dense table (its other columns are empty).

    Raises
    ------
    ValueError
        For any other measure (``why`` says why the codes are used).
    """
    from rankjit import _measures as M

    out = []
    for m in M.parse_list(measures):
        from rankjit._registry import BY_NAME

        family = None if m.external else BY_NAME.get(m.family)
        defaults = family.defaults if family is not None else {}
        params = dict(m.params)
        if family is not None and family.group == "binary":
            t = params.get("rel", rel if rel is not None else 1)
            if _finite_number(t):  # anything else: rankjit's own error, as on the labels
                params["rel"] = first_code_at_least(grade_values, t)
        elif m.family in ("DCG", "nDCG"):
            gain = params.get("gain", defaults["gain"])
            if params.get("gains") is not None and isinstance(params["gains"], dict) and gain == defaults["gain"]:
                gains = family.param("gains").check(params.pop("gains"), m.text)  # {grade: gain}, validated
                table = np.array([float(gains.get(int(g), g)) for g in grade_values])
            elif params.get("dcg") in ("log2", "exp-log2") and gain == defaults["gain"]:
                table = _gain_per_code(m, "exp2" if params.pop("dcg") == "exp-log2" else "linear", grade_values)
            else:  # (other combinations: rankjit's own errors, as on the labels)
                table = _gain_per_code(m, gain, grade_values)
            if table is not None:
                params["gain"] = table
        else:
            raise ValueError(
                f"{m.text}: {why}, too large for a dense ideal_counts table; on grade codes rankjit evaluates "
                "P, R, Success, RR, AP, Rprec, DCG and nDCG only"
            )
        out.append(M.Measure(m.text, m.family, m.k, params, m.judged_only))
    return out


def _load(obj, cls, reader, what):
    """``obj`` if already read, else read it with ``reader`` (a path or the file content)."""
    if isinstance(obj, cls):
        return obj
    if isinstance(obj, (str, os.PathLike, bytes)):
        return reader(obj)
    raise TypeError(f"{what} or a path, got {type(obj).__name__}")


def _load_run(run):
    return _load(run, TrecRun, read_trec_run, "run must be a TrecRun")


def _load_qrels(qrels):
    return _load(qrels, TrecQrels, read_trec_qrels, "qrels must be TrecQrels")


def _run_heads(col):
    """The first string of every run of equal consecutive strings (and the run starts)."""
    starts = col.run_starts()
    return col.take(starts[:-1]), starts


def _block_codes(pc, col, value_set):
    """Index in ``value_set`` (-1 if absent) of every run of equal consecutive strings.

    Returns ``(codes, starts)``: run ``b`` is rows ``starts[b]:starts[b + 1]``.
    """
    heads, starts = _run_heads(col)
    idx = pc.index_in(heads.to_arrow(), value_set=value_set)
    return np.asarray(idx.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64), starts


def _row_codes(pc, col, value_set):
    """Index of every row's string in ``value_set`` (-1 if absent), hashing runs only."""
    codes, starts = _block_codes(pc, col, value_set)
    return np.repeat(codes, np.diff(starts))


#: Up to this many runs of equal query ids (in the qrels or in the run) the query sets
#: are built with NumPy; above, with Arrow's hash tables when pyarrow is installed
#: (faster when a run interleaves its queries; not worth its import at usual sizes).
_NUMPY_MAX_HEADS = 1 << 16

#: A padded ``S<width>`` copy of the run heads is made only while it holds at most this
#: many bytes beyond four times the strings' own bytes (one very long id among many
#: short ones goes to the Arrow path instead).
_PADDED_SLACK = 1 << 22


def _padded_heads(col):
    """The first string of every run of equal consecutive strings as a NumPy ``S<w>`` array.

    None when NumPy's fixed-width bytes would not order and compare the strings byte by
    byte like ``strcmp`` (a string holding a NUL byte: ``S`` arrays drop trailing NULs)
    or when the padding would take too much memory.
    """
    first = col.run_starts()[:-1]
    begin = col.offsets[first]
    lens = col.offsets[first + 1] - begin
    n = first.shape[0]
    total = int(lens.sum())
    width = max(int(lens.max()) if n else 0, 1)
    if n * width > 4 * total + _PADDED_SLACK:
        return None
    if total == 0:
        return np.zeros(n, dtype=f"S{width}")
    cols = np.arange(width, dtype=np.int64)
    last = col.data.shape[0] - 1
    out = np.empty((n, width), dtype=np.uint8)
    step = max(1, (1 << 20) // width)  # rows per block: bounded temporaries
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        idx = np.minimum(begin[lo:hi, None] + cols, last)
        np.copyto(out[lo:hi], np.where(cols < lens[lo:hi, None], col.data[idx], np.uint8(0)))
    if np.count_nonzero(out) != total:  # a NUL byte
        return None
    return out.view(f"S{width}").reshape(n)


def _arrow_installed():
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


def _query_sets(j_qid, r_qid):
    """Queries of the judgments in byte order, and where each judgment row and run block is.

    Returns ``(uq, j_codes, blk_code, blk_start)``: ``uq`` the distinct query ids of
    ``j_qid`` (a list of ``bytes``, sorted like ``strcmp``), ``j_codes`` the index in
    ``uq`` of every judgment row, ``blk_code`` the index in ``uq`` (-1 if absent) of
    every run of equal consecutive query ids of ``r_qid`` and ``blk_start`` their starts.
    Both paths (NumPy, Arrow) give the same result.
    """
    j_start, blk_start = j_qid.run_starts(), r_qid.run_starts()
    j_heads = r_heads = None
    if max(j_start.shape[0], blk_start.shape[0]) - 1 <= _NUMPY_MAX_HEADS or not _arrow_installed():
        j_heads = _padded_heads(j_qid)
        r_heads = None if j_heads is None else _padded_heads(r_qid)
    if r_heads is not None:
        uq, j_inv = np.unique(j_heads, return_inverse=True)
        j_codes = np.repeat(j_inv.reshape(-1).astype(np.int64, copy=False), np.diff(j_start))
        blk_code = np.full(r_heads.shape[0], -1, dtype=np.int64)
        if uq.shape[0] and r_heads.shape[0]:
            common = np.dtype(f"S{max(uq.dtype.itemsize, r_heads.dtype.itemsize)}")
            uq_c, r_c = uq.astype(common), r_heads.astype(common)
            pos = np.minimum(np.searchsorted(uq_c, r_c), uq.shape[0] - 1)
            found = uq_c[pos] == r_c
            blk_code[found] = pos[found]
        return uq.tolist(), j_codes, blk_code, blk_start
    _pyarrow()
    import pyarrow.compute as pc

    uq = pc.unique(_run_heads(j_qid)[0].to_arrow())
    uq = uq.take(pc.sort_indices(uq))  # byte order, like strcmp
    blk_code, blk_start = _block_codes(pc, r_qid, uq)
    return uq.to_pylist(), _row_codes(pc, j_qid, uq), blk_code, blk_start


@dataclass(frozen=True, eq=False)
class _Core:
    """What every alignment shares: the query set, the grouped judgments and the ranked run."""

    qids: list
    q_codes: np.ndarray  # per judgment row: index of its query in ``qids`` (-1: query dropped)
    q_off: np.ndarray  # judgments grouped by query: rows q_rows[q_off[i]:q_off[i + 1]]
    q_rows: np.ndarray
    offsets: np.ndarray  # ranked run: rows[offsets[i]:offsets[i + 1]] in trec_eval order
    rows: np.ndarray
    scores: np.ndarray  # the run's score of each ranked row
    labels: np.ndarray  # ``values`` of the judgment of each ranked row (0: unjudged)
    in_run: np.ndarray


def _align_rows(run, j_qid, j_docno, values, source, complete, max_docs):
    """Query set, trec_eval ranking and judgment lookup of a run against judgment rows.

    ``j_qid`` / ``j_docno`` are the judged (query, document) pairs, one per row;
    ``values`` (int64, one per row) is what a retrieved document receives as its label.
    Raises on a pair judged twice, a document retrieved twice, or no common query.
    """
    from rankjit._validation import document_limit

    max_docs = document_limit(max_docs)
    if max_docs is None:
        max_docs = np.iinfo(np.int64).max

    uq, j_codes, blk_code, blk_start = _query_sets(j_qid, run.qid)  # blk_*: per run of equal query ids
    present = np.zeros(len(uq), dtype=bool)
    present[blk_code[blk_code >= 0]] = True
    keep = np.ones(len(uq), dtype=bool) if complete else present
    if not keep.any():
        raise NoCommonQuery("no query has both results and relevance judgments")
    new_index = np.full(len(uq) + 1, -1, dtype=np.int64)  # [-1] maps -1 to -1
    new_index[: len(uq)][keep] = np.arange(int(keep.sum()))
    n_q = int(keep.sum())
    qids = [v.decode("utf-8", "surrogateescape") for v, k in zip(uq, keep.tolist()) if k]

    # judgments, grouped by query
    q_codes = new_index[j_codes]
    q_off, q_rows = K.group_rows(q_codes, n_q)
    g, dup = K.repeated_strings(q_off, q_rows, j_docno.data, j_docno.offsets, j_docno.hashes(),
                                np.empty(0, dtype=bool), True)
    if g >= 0:
        raise ValueError(
            f"{source or 'qrels'}: document {j_docno[dup]!r} is judged twice for query "
            f"{qids[g]!r}{duplicate_lines(source, qids[g], j_docno[dup])} (trec_eval refuses duplicate judgments)"
        )

    # the run: blocks grouped by query (no per-row codes), then ranked the trec_eval
    # way, cut to max_docs and labelled, query by query in parallel
    blk_q = new_index[blk_code]
    g_off, g_blocks = K.group_rows(blk_q, n_q)
    blk_len = np.diff(blk_start)
    kept = blk_q >= 0
    n_ret = np.bincount(blk_q[kept], weights=blk_len[kept], minlength=n_q).astype(np.int64)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.minimum(n_ret, max_docs), out=offsets[1:])
    n_out = int(offsets[-1])
    rows = np.empty(n_out, dtype=np.int64)
    scores = np.empty(n_out, dtype=np.float64)
    labels = np.empty(n_out, dtype=np.int64)
    dups = np.full(n_q, -1, dtype=np.int64)
    args = (blk_start, g_off, g_blocks, offsets, run.score, run.docno.data, run.docno.offsets, run.docno.hashes(),
            q_off, q_rows, j_docno.data, j_docno.offsets, j_docno.hashes(), np.asarray(values, dtype=np.int64),
            rows, scores, labels, dups)
    longest = int(n_ret.max()) if n_q else 0
    table_size = getattr(K.table_size, "py_func", K.table_size)(2 * min(longest, max_docs))

    def rank_queries(g_lo, g_hi):  # scratch of its own per call: ranges run on threads
        seg = np.empty(longest, dtype=np.int64)
        K.rank_and_label(g_lo, g_hi, *args, seg, np.empty_like(seg), np.empty(table_size, dtype=np.int32))

    run_blocks(rank_queries, n_q, use_parallel(n_q))
    bad = np.flatnonzero(dups >= 0)
    if bad.shape[0]:
        g = int(bad[0])
        docno = run.docno[int(dups[g])]
        raise ValueError(
            f"{run.source or 'run'}: document {docno!r} is retrieved twice for query "
            f"{qids[g]!r}{duplicate_lines(run.source, qids[g], docno, fields=6)} (trec_eval refuses duplicate documents)"
        )
    return _Core(qids, q_codes, q_off, q_rows, offsets, rows, scores, labels, present[keep])


def duplicate_lines(source, qid, docno, second_field=None, fields=4):
    """`` (lines 3 and 9)``: the first two lines of ``source`` with ``qid`` in field 1 and ``docno`` in field 3.

    Read again on this error path only, when ``source`` names a file (runs and qrels both
    hold the query id first and the document third; ``second_field``, when given, must be
    field 2: a subtopic).  Line numbers count as the readers count them (after gzip,
    byte-order mark and carriage-return handling, with ``fields`` fields per record: 6 for
    runs, 4 for qrels and diversity qrels).  Empty when the file cannot be read
    again or the two lines are not found.
    """
    import re

    if not source or not os.path.isfile(source):
        return ""
    from rankjit.io._trec import _read_bytes

    try:
        text = _read_bytes(source, fields=fields).tobytes()
    except (OSError, ValueError):
        return ""
    def raw(x):  # the id's bytes in the file (ids not UTF-8 are read with surrogate escapes)
        return re.escape(str(x).encode("utf-8", "surrogateescape"))

    middle = rb"\S+" if second_field is None else raw(second_field)
    line = re.compile(rb"^[ \t]*" + raw(qid) + rb"[ \t]+" + middle + rb"[ \t]+" + raw(docno) + rb"(?=[ \t\n]|$)",
                      re.M)
    hits = [m.start() for _, m in zip(range(2), line.finditer(text))]
    if len(hits) < 2:
        return ""
    first, second = (text.count(b"\n", 0, pos) + 1 for pos in hits)
    return f" (lines {first} and {second})"


def align(run, qrels, *, complete=False, max_docs=None, rel_level=1):
    """Rank a run and label it with qrels, exactly like trec_eval.

    Parameters
    ----------
    run : TrecRun or path
    qrels : TrecQrels or path
    complete : bool, default False
        trec_eval ``-c``: keep qrels queries the run lacks (nothing retrieved).
    max_docs : int, optional
        trec_eval ``-M``: keep the top ``max_docs`` documents of each query.
    rel_level : int, default 1
        trec_eval ``-l``: lowest grade counted as relevant in ``n_relevant``.

    Returns
    -------
    AlignedRun

    Raises
    ------
    ValueError
        On a document retrieved twice for one query, or judged twice for one query
        (trec_eval refuses both), or when no query has both results and judgments.

    Examples
    --------
    >>> run = read_trec_run(b"q1 Q0 a 1 1.0 t\\nq1 Q0 b 2 1.0 t\\nq9 Q0 a 1 3 t\\n")
    >>> qrels = read_trec_qrels(b"q1 0 a 2\\nq1 0 c 1\\nq2 0 a 1\\n")
    >>> al = align(run, qrels)
    >>> al.qids, al.labels.tolist(), al.n_relevant.tolist()  # b before a: docno descending
    (['q1'], [0, 2], [2])
    >>> align(run, qrels, complete=True).qids
    ['q1', 'q2']
    """
    from rankjit._validation import document_limit, integer

    rel_level = integer(rel_level, "rel_level")
    document_limit(max_docs)  # before the files are read
    run = _load_run(run)
    qrels = _load_qrels(qrels)
    grade_values, row_codes = code_grades(qrels.rel)
    # each ranked document gets 2 + the code of its judgment, 1 for a negative grade, 0 when the
    # qrels do not hold it: unjudged documents stay apart from judged grade-0 ones
    core = _align_rows(run, qrels.qid, qrels.docno, np.where(row_codes >= 0, row_codes + 2, 1), qrels.source,
                       complete, max_docs)
    judged_counts = GradeCounts.from_grouped(core.q_off, row_codes[core.q_rows], grade_values.shape[0])
    n_relevant = judged_counts.at_least(first_code_at_least(grade_values, max(rel_level, 0)))
    return aligned_from_labels(core.qids, core.offsets, core.labels, grade_values, judged_counts, n_relevant,
                               rel_level, scores=core.scores, rows=core.rows, in_run=core.in_run, runid=run.runid)


def aligned_from_labels(qids, offsets, labels, grade_values, judged_counts, n_relevant, rel_level, *, scores,
                        rows=None, in_run=None, runid=None):
    """An :class:`AlignedRun` of documents already in trec_eval's rank order, given one label each.

    ``labels`` (integers, one per ranked document) is 0 for a document the qrels do not hold,
    1 for one judged below 0 and ``2 + c`` for one judged with grade ``grade_values[c]``
    (the layout of :func:`align`, which :func:`code_grades` gives per judgment);
    ``judged_counts`` the judged documents of each query per code (a
    :class:`~rankjit._grade_counts.GradeCounts`, or a dense (n_queries, n_grades) table).  The
    front ends (``rankjit.io._frontend``) build their runs with it.  ``rows`` defaults to
    0 for every document (no file rows), ``in_run`` to all True.
    """
    if not isinstance(judged_counts, GradeCounts):
        judged_counts = GradeCounts.from_dense(judged_counts, from_judgments=True)
    n_grades = grade_values.shape[0]
    # per label: its code max(label - 2, 0) (unjudged and negative: code 0, grade 0), computed in the labels'
    # own (possibly narrow) integer type, and that code's grade (the code itself when the grades are 0..n - 1)
    codes = np.maximum(labels, 2)
    codes -= 2
    codes = codes.astype(np.uint8 if n_grades <= 256 else np.int32, copy=False)
    n = labels.shape[0]
    return AlignedRun(
        qids=qids,
        offsets=offsets,
        labels=codes.astype(np.int64) if grade_values[-1] == n_grades - 1 else grade_values[codes],
        scores=scores,
        rows=np.broadcast_to(np.int64(0), (n,)) if rows is None else rows,
        n_relevant=n_relevant,
        in_run=np.ones(len(qids), dtype=bool) if in_run is None else in_run,
        grade_values=grade_values,
        grade_codes=codes,
        judged_counts=judged_counts.marked_from_judgments(),
        rel_level=rel_level,
        runid=runid,
        judged=labels > 1,
        judged_below_zero=labels == 1,
    )


#: Up to this largest grade (or the number of judgments, when larger) the distinct
#: grades are found with a count per grade; above, by sorting (np.unique).
_BINCOUNT_MAX_GRADE = 1 << 16


def code_grades(rel):
    """``(grade_values, row_codes)``: the distinct grades >= 0 and 0, and each judgment's code.

    ``grade_values`` (int64, ascending, ``grade_values[0] == 0``); ``row_codes`` (int64,
    one per judgment) is the index of its grade in ``grade_values``, -1 for a negative
    grade.  Memory and time grow with the judgments, not with the largest grade.  Used
    by :func:`align` and by the front ends (``rankjit.io._frontend``).
    """
    rel = np.asarray(rel, dtype=np.int64)
    top = int(rel.max()) if rel.shape[0] else 0
    if top <= max(_BINCOUNT_MAX_GRADE, rel.shape[0]):
        shifted = np.maximum(rel, -1)
        shifted += 1  # max(grade, -1) + 1: 0 for a negative grade, g + 1 for a grade g >= 0
        present = np.bincount(shifted, minlength=max(top, 0) + 2)[1:] > 0  # grades g >= 0 present
        present[0] = True
        grade_values = np.flatnonzero(present).astype(np.int64)
        if present.all():  # grades 0..top all present (the usual case): each grade is its code
            shifted -= 1
            row_codes = shifted  # max(grade, -1)
        else:  # shifted grade -> code: -1 for a negative grade, then the codes of the grades present
            row_codes = np.concatenate((np.full(1, -1, np.int64), np.cumsum(present) - 1))[shifted]
    else:
        judged = rel >= 0
        grade_values = np.unique(np.concatenate((np.zeros(1, np.int64), rel[judged])))
        row_codes = np.where(judged, np.searchsorted(grade_values, rel), -1)
    return grade_values, row_codes.astype(np.int64, copy=False)


def evaluate_run(qrels, run, measures, *, complete=False, max_docs=None, rel_level=1, per_query=False):
    """Read (if paths), align like trec_eval, and evaluate a run.

    Parameters
    ----------
    qrels : TrecQrels or path
    run : TrecRun or path
    measures : str or sequence of str
        Measure names of :func:`rankjit.evaluate` (``"nDCG@10"``, ``"AP"``, ...).
    complete, max_docs, rel_level
        As in :func:`align`.
    per_query : bool, default False
        Return one value per query (in ``align(...).qids`` order) instead of means.

    Returns
    -------
    dict

    Examples
    --------
    >>> run = read_trec_run(b"q1 Q0 a 1 2 t\\nq1 Q0 b 2 1 t\\n")
    >>> qrels = read_trec_qrels(b"q1 0 b 1\\nq1 0 c 1\\n")
    >>> evaluate_run(qrels, run, ["P@2", "AP"])
    {'P@2': 0.5, 'AP': 0.25}
    """
    aligned = align(run, qrels, complete=complete, max_docs=max_docs, rel_level=rel_level)
    return aligned.evaluate(measures, per_query=per_query)


# ---- diversity (subtopic) qrels ------------------------------------------------------


@dataclass(frozen=True, eq=False)
class AlignedDiversity:
    """A run ranked the trec_eval way and labelled with subtopic (nugget) judgments.

    Every array is padded per query; pass ``lengths`` (and ``ideal``) to the
    functions of :mod:`rankjit.diversity`, or use :meth:`evaluate`.

    Attributes
    ----------
    qids : list of str
        The evaluated queries, in byte order of their ids (as :func:`align`).
    nuggets : numpy.ndarray of uint8, shape (n_queries, n_docs, n_subtopics)
        ``nuggets[q, r, j]`` is 1 when the document at rank ``r`` of query ``q`` has a
        judgment > 0 for the query's ``j``-th subtopic (``subtopic_ids[q, j]``), else 0.
        Unjudged documents and padding are all-zero rows.
    judgments : numpy.ndarray, like ``nuggets`` (uint8, or int64 for judgments above 255)
        The judgments themselves where they are > 0 (else 0): graded nuggets, which
        :meth:`evaluate` passes so that a measure's ``rel=`` (judgment >= rel) works.
    scores : numpy.ndarray of float64, shape (n_queries, n_docs)
        The run's scores in rank order (score descending, ties by docno descending);
        padding is ``-inf``.  Evaluate with ``ties="stable"``.
    lengths : numpy.ndarray of int64, shape (n_queries,)
        Retrieved documents per query (after ``max_docs``).
    rows : numpy.ndarray of int64, shape (n_queries, n_docs)
        Row of the run file behind each ranked document (-1: padding).
    n_subtopics : numpy.ndarray of int64, shape (n_queries,)
        Distinct subtopics judged for the query (with or without a relevant document).
    subtopic_ids : numpy.ndarray of int64, shape (n_queries, n_subtopics)
        Subtopic number behind each column, ascending; -1 in padding columns.
    ideal : numpy.ndarray of uint8, shape (n_queries, n_judged, n_subtopics)
        Nugget rows of *every* judged document of the query, retrieved or not, in docno
        descending order (so that the greedy ideal of :mod:`rankjit.diversity`, which
        breaks ties to the lowest row, picks what ndeval picks); all-zero rows pad.
        This is the ``ideal=`` input of the diversity measures.
    ideal_judgments : numpy.ndarray, like ``judgments``, shape of ``ideal``
        The judgments (> 0, else 0) behind ``ideal``.
    ideal_lengths : numpy.ndarray of int64, shape (n_queries,)
        Judged documents per query.
    judged : numpy.ndarray of bool, shape (n_queries, n_docs)
        Whether a ranked document appears in the subtopic qrels.
    in_run : numpy.ndarray of bool
        False for queries added by ``complete=True``.
    runid : str or None
    """

    qids: list
    nuggets: np.ndarray
    scores: np.ndarray
    lengths: np.ndarray
    rows: np.ndarray
    n_subtopics: np.ndarray
    subtopic_ids: np.ndarray
    ideal: np.ndarray
    ideal_lengths: np.ndarray
    judged: np.ndarray
    in_run: np.ndarray
    runid: str | None = None
    judgments: np.ndarray | None = None
    ideal_judgments: np.ndarray | None = None

    @property
    def n_queries(self):
        return len(self.qids)

    def evaluate(self, measures, *, per_query=False, **kwargs):
        """Evaluate diversity measures with :func:`rankjit.evaluate`.

        ``nuggets``, ``lengths``, the judged-document ``ideal`` set and
        ``ties="stable"`` (the rows are already in trec_eval order) are passed for
        you; the labels are the number of nuggets of each document.  The graded
        :attr:`judgments` are passed as the nuggets, so ``rel=`` works:
        ``alpha_nDCG(rel=2)@20`` counts the judgments >= 2 (the default, judgment > 0,
        gives what :attr:`nuggets` gives).

        Examples
        --------
        >>> run = read_trec_run(b"1 Q0 a 1 2 t\\n1 Q0 b 2 1 t\\n")
        >>> div = read_diversity_qrels(b"1 1 a 1\\n1 2 a 0\\n1 2 c 1\\n")
        >>> al = align_diversity(div, run)
        >>> round(al.evaluate(["alpha_nDCG@2", "S_recall@2"])["S_recall@2"], 3)
        0.5
        """
        import rankjit
        import rankjit.diversity  # noqa: F401  (registers the diversity measures)

        graded = self.judgments is not None
        kwargs.setdefault("ties", "stable")
        kwargs.setdefault("ideal", self.ideal_judgments if graded else self.ideal)
        labels = self.nuggets.sum(axis=2, dtype=np.int64)
        return rankjit.evaluate(labels, self.scores, measures, lengths=self.lengths,
                                nuggets=self.judgments if graded else self.nuggets, per_query=per_query, **kwargs)


def _load_diversity(qrels):
    return _load(qrels, DiversityQrels, read_diversity_qrels, "div_qrels must be DiversityQrels")


def _starts_flags(col):
    """Boolean flags: row ``i`` starts a run of equal consecutive strings."""
    flags = np.zeros(len(col), dtype=bool)
    flags[col.run_starts()[:-1]] = True
    return flags


def align_diversity(div_qrels, run, *, complete=False, max_docs=None):
    """Rank a run the trec_eval way and label it with subtopic qrels: a nuggets tensor.

    Queries, ranking (score descending, ties by docno descending), ``complete`` and
    ``max_docs`` follow :func:`align`, with the queries of the subtopic qrels as the
    judged ones.  A judgment > 0 is a nugget (1); 0 and negative judgments are 0.  The
    judgments themselves are kept too (``judgments``, ``ideal_judgments``), for ``rel=``.

    Parameters
    ----------
    div_qrels : DiversityQrels or path
        ``topic subtopic docno judgment`` lines (:func:`read_diversity_qrels`).
    run : TrecRun or path
    complete : bool, default False
        Keep judged queries the run lacks (nothing retrieved; every measure 0).
    max_docs : int, optional
        Keep the top ``max_docs`` documents of each query.

    Returns
    -------
    AlignedDiversity

    Raises
    ------
    ValueError
        On a document retrieved twice for one query, a (topic, subtopic, document)
        judged twice, empty subtopic qrels, or no query with both results and judgments.

    Examples
    --------
    >>> run = read_trec_run(b"1 Q0 a 1 2 t\\n1 Q0 b 2 2 t\\n1 Q0 c 3 1 t\\n")
    >>> div = read_diversity_qrels(b"1 3 a 1\\n1 5 a 1\\n1 5 c 1\\n1 5 d 1\\n")
    >>> al = align_diversity(div, run)
    >>> al.nuggets[0].tolist()      # b (unjudged) before a: docno descending on the tie
    [[0, 0], [1, 1], [0, 1]]
    >>> al.subtopic_ids.tolist(), al.n_subtopics.tolist(), al.ideal_lengths.tolist()
    ([[3, 5]], [2], [3])
    >>> al.ideal[0].tolist()        # every judged document, docno descending: d, c, a
    [[0, 1], [0, 1], [1, 1]]
    """
    from rankjit._validation import document_limit

    document_limit(max_docs)  # before the files are read
    _pyarrow()
    run = _load_run(run)
    div = _load_diversity(div_qrels)
    source = div.source or "diversity qrels"
    if len(div) == 0:
        raise ValueError(f"{source}: no subtopic judgments")
    pairs = _judged_pairs(div, source)
    core = _align_rows(run, pairs.qid, pairs.docno, np.arange(1, pairs.n + 1, dtype=np.int64), source, complete,
                       max_docs)
    return _padded_diversity(core, pairs, run.runid)


@dataclass(frozen=True, eq=False)
class _JudgedPairs:
    """The judged (topic, document) pairs of subtopic qrels and their judgments, by subtopic column."""

    qid: StringColumn  # per pair: topics in byte order, docnos descending within a topic
    docno: StringColumn
    topic: np.ndarray  # per pair: index of its topic (byte order)
    grades: np.ndarray  # (pairs + 1, widest topic's subtopics): judgment > 0 of each pair (row 0: not judged)
    n_subtopics: np.ndarray  # per topic
    first_column: np.ndarray  # per topic: index of its first subtopic in ``subtopics``
    subtopics: np.ndarray  # every topic's subtopic numbers, ascending within a topic

    @property
    def n(self):
        return len(self.qid)


def _judged_pairs(div, source):
    """The judged pairs of ``div`` (:class:`_JudgedPairs`); raises on a (topic, subtopic, document) judged twice."""
    import pyarrow as pa
    import pyarrow.compute as pc

    # judged documents: unique (topic, docno) pairs, topics in byte order, docnos descending
    table = pa.table({"q": div.qid.to_arrow(), "d": div.docno.to_arrow()})
    order = np.asarray(pc.sort_indices(table, sort_keys=[("q", "ascending"), ("d", "descending")]),
                       dtype=np.int64)
    qs = div.qid.take(order)
    ds = div.docno.take(order)
    q_new = _starts_flags(qs)
    pair_new = q_new | _starts_flags(ds)
    pair_of = np.cumsum(pair_new) - 1  # per sorted row
    topic_of = np.cumsum(q_new) - 1  # per sorted row: topic index, byte order
    first = np.flatnonzero(pair_new)
    n_pairs = first.shape[0]

    # subtopic columns per topic: ascending subtopic numbers
    sub = div.subtopic[order]
    by_sub = np.lexsort((sub, topic_of))
    t_s, s_s = topic_of[by_sub], sub[by_sub]
    new_col = np.ones(by_sub.shape[0], dtype=bool)
    new_col[1:] = (t_s[1:] != t_s[:-1]) | (s_s[1:] != s_s[:-1])
    col_id = np.cumsum(new_col) - 1  # global (topic, subtopic) index
    n_topics = int(topic_of[-1]) + 1
    col_topic = t_s[new_col]
    topic_first_col = np.searchsorted(col_topic, np.arange(n_topics))
    n_sub_topic = np.bincount(col_topic, minlength=n_topics).astype(np.int64)
    col = np.empty(by_sub.shape[0], dtype=np.int64)
    col[by_sub] = col_id - topic_first_col[t_s]  # per sorted row
    width_s = int(n_sub_topic.max())

    # one (topic, subtopic, docno) judged twice?
    key = np.lexsort((col, pair_of))
    same = (pair_of[key][1:] == pair_of[key][:-1]) & (col[key][1:] == col[key][:-1])
    if same.any():
        r = int(order[key[1:][same][0]])
        raise ValueError(
            f"{source}: document {div.docno[r]!r} is judged twice for subtopic {int(div.subtopic[r])} of topic "
            f"{div.qid[r]!r}{duplicate_lines(source, div.qid[r], div.docno[r], int(div.subtopic[r]))}"
        )

    # the judgments themselves where > 0 (graded: a measure's rel= binarises them), row 0: not judged
    grades = div.judgment[order]
    pos = grades > 0
    top = int(grades[pos].max()) if pos.any() else 0
    grade_pairs = np.zeros((n_pairs + 1, width_s), dtype=np.uint8 if top <= 255 else np.int64)
    grade_pairs[pair_of[pos] + 1, col[pos]] = grades[pos]
    return _JudgedPairs(qs.take(first), ds.take(first), topic_of[first], grade_pairs, n_sub_topic, topic_first_col,
                        s_s[new_col])


def _padded_diversity(core, pairs, runid):
    """The :class:`AlignedDiversity` of a run aligned with judged pairs: padded tensors, one row per kept query."""
    n_q = len(core.qids)
    # kept topic of every kept query (pairs are in topic order, queries in the same byte order)
    kept_topics = np.full(n_q, -1, dtype=np.int64)
    kp = core.q_codes >= 0
    kept_topics[core.q_codes[kp]] = pairs.topic[kp]

    n_subtopics = pairs.n_subtopics[kept_topics]
    width_s = int(n_subtopics.max())  # queries dropped may have more subtopics: their columns go
    grade_pairs = pairs.grades[:, :width_s]
    nug_pairs = (grade_pairs > 0).astype(np.uint8)  # nuggets: judgment > 0
    lengths = np.diff(core.offsets)
    width = max(int(lengths.max()) if n_q else 0, 1)
    qi = np.repeat(np.arange(n_q), lengths)
    rank = np.arange(core.rows.shape[0]) - np.repeat(core.offsets[:-1], lengths)
    nuggets = np.zeros((n_q, width, width_s), dtype=np.uint8)
    nuggets[qi, rank] = nug_pairs[core.labels]
    judgments = np.zeros((n_q, width, width_s), dtype=grade_pairs.dtype)
    judgments[qi, rank] = grade_pairs[core.labels]
    scores = np.full((n_q, width), -np.inf)
    scores[qi, rank] = core.scores
    rows = np.full((n_q, width), -1, dtype=np.int64)
    rows[qi, rank] = core.rows
    judged = np.zeros((n_q, width), dtype=bool)
    judged[qi, rank] = core.labels > 0

    ideal_lengths = np.diff(core.q_off)
    m = max(int(ideal_lengths.max()), 1)
    ideal = np.zeros((n_q, m, width_s), dtype=np.uint8)
    iq = np.repeat(np.arange(n_q), ideal_lengths)
    irank = np.arange(core.q_rows.shape[0]) - np.repeat(core.q_off[:-1], ideal_lengths)
    ideal[iq, irank] = nug_pairs[core.q_rows + 1]
    ideal_judgments = np.zeros((n_q, m, width_s), dtype=grade_pairs.dtype)
    ideal_judgments[iq, irank] = grade_pairs[core.q_rows + 1]

    subtopic_ids = np.full((n_q, width_s), -1, dtype=np.int64)
    cq = np.repeat(np.arange(n_q), n_subtopics)
    ccol = np.arange(cq.shape[0]) - np.repeat(np.cumsum(n_subtopics) - n_subtopics, n_subtopics)
    subtopic_ids[cq, ccol] = pairs.subtopics[np.repeat(pairs.first_column[kept_topics], n_subtopics) + ccol]

    return AlignedDiversity(
        qids=core.qids, nuggets=nuggets, scores=scores, lengths=lengths.astype(np.int64), rows=rows,
        n_subtopics=n_subtopics, subtopic_ids=subtopic_ids, ideal=ideal,
        ideal_lengths=ideal_lengths.astype(np.int64), judged=judged, in_run=core.in_run, runid=runid,
        judgments=judgments, ideal_judgments=ideal_judgments,
    )
