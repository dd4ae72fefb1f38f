"""Aligning a run with its qrels exactly as trec_eval does.

* Queries are those of the qrels, in byte order of their ids; a query only in the
  run is ignored; with ``complete=True`` (trec_eval ``-c``) a qrels query missing
  from the run is kept with no retrieved document (every measure 0).
* Each query's documents are ranked by score descending, ties by docno descending
  (byte order), then cut to ``max_docs`` (``-M``).
* A retrieved document's label is its judgment (unjudged and negative: 0).  The
  relevance counts ``n_relevant`` (grades >= ``rel_level``, ``-l``) and the
  per-grade counts ``ideal_counts`` cover every judged document of the query,
  retrieved or not, so recall, AP, R-precision and the ideal DCG use them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from rankjit.io import _kernels as K
from rankjit.io._trec import (
    StringColumn,
    TrecQrels,
    TrecRun,
    _pyarrow,
    read_trec_qrels,
    read_trec_run,
)

__all__ = ["AlignedRun", "align", "evaluate_run"]


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
    ideal_counts : numpy.ndarray of int64, shape (n_queries, n_grades)
        Judged documents per grade, retrieved or not (negative grades not counted).
    in_run : numpy.ndarray of bool
        False for queries added by ``complete=True``.
    rel_level : int
    runid : str or None
    """

    qids: list
    offsets: np.ndarray
    labels: np.ndarray
    scores: np.ndarray
    rows: np.ndarray
    n_relevant: np.ndarray
    ideal_counts: np.ndarray
    in_run: np.ndarray
    rel_level: int = 1
    runid: str | None = None

    @property
    def n_queries(self):
        return len(self.qids)

    @property
    def num_ret(self):
        """Retrieved documents per query (after ``max_docs``)."""
        return np.diff(self.offsets)

    def evaluate(self, measures, *, per_query=False, **kwargs):
        """Evaluate with :func:`rankjit.evaluate` using trec_eval's conventions.

        Labels, trec_eval's ranking (``ties="stable"`` on the pre-sorted rows) and the
        judged-document counts (``ideal_counts``) are passed for you.

        Examples
        --------
        >>> run = read_trec_run(b"q1 Q0 a 1 2 t\\nq1 Q0 b 2 1 t\\n")
        >>> qrels = read_trec_qrels(b"q1 0 b 1\\nq1 0 c 1\\n")
        >>> aligned = align(run, qrels)
        >>> aligned.evaluate(["P@2", "AP"])
        {'P@2': 0.5, 'AP': 0.25}
        """
        import rankjit

        kwargs.setdefault("ties", "stable")
        kwargs.setdefault("ideal_counts", self.ideal_counts)
        return rankjit.evaluate(
            self.labels, self.scores, measures, offsets=self.offsets, per_query=per_query, **kwargs
        )


def _load_run(run):
    if isinstance(run, TrecRun):
        return run
    if isinstance(run, (str, os.PathLike, bytes)):
        return read_trec_run(run)
    raise TypeError(f"run must be a TrecRun or a path, got {type(run).__name__}")


def _load_qrels(qrels):
    if isinstance(qrels, TrecQrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike, bytes)):
        return read_trec_qrels(qrels)
    raise TypeError(f"qrels must be TrecQrels or a path, got {type(qrels).__name__}")


def _run_heads(col):
    """The first string of every run of equal consecutive strings (and the run starts)."""
    starts = K.string_runs(col.data, col.offsets)
    first = starts[:-1]
    lens = col.offsets[first + 1] - col.offsets[first]
    offsets = np.zeros(first.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    heads = StringColumn(K.gather_bytes(col.data, col.offsets[first], lens, offsets), offsets)
    return heads, starts


def _row_codes(pc, col, value_set):
    """Index of every row's string in ``value_set`` (-1 if absent), hashing runs only."""
    heads, starts = _run_heads(col)
    idx = pc.index_in(heads.to_arrow(), value_set=value_set)
    codes = np.asarray(idx.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    return np.repeat(codes, np.diff(starts))


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
    pa = _pyarrow()
    import pyarrow.compute as pc

    run = _load_run(run)
    qrels = _load_qrels(qrels)
    if max_docs is None:
        max_docs = np.iinfo(np.int64).max
    elif int(max_docs) < 0:
        raise ValueError(f"max_docs must be >= 0, got {max_docs}")
    max_docs = int(max_docs)
    rel_level = int(rel_level)

    uq = pc.unique(_run_heads(qrels.qid)[0].to_arrow())
    uq = uq.take(pc.sort_indices(uq))  # byte order, like strcmp
    run_code = _row_codes(pc, run.qid, uq)
    present = np.zeros(len(uq), dtype=bool)
    present[run_code[run_code >= 0]] = True
    keep = np.ones(len(uq), dtype=bool) if complete else present
    if not keep.any():
        raise ValueError("no query has both results and relevance judgments")
    new_index = np.full(len(uq) + 1, -1, dtype=np.int64)  # [-1] maps -1 to -1
    new_index[: len(uq)][keep] = np.arange(int(keep.sum()))
    n_q = int(keep.sum())
    qids = [v.decode("utf-8", "replace") for v in uq.filter(pa.array(keep)).to_pylist()]

    # judgments, grouped by query
    q_off, q_rows = K.group_rows(new_index[_row_codes(pc, qrels.qid, uq)], n_q)
    g, dup = K.first_duplicate(q_off, q_rows, qrels.docno.data, qrels.docno.offsets)
    if g >= 0:
        raise ValueError(
            f"{qrels.source or 'qrels'}: document {qrels.docno[dup]!r} is judged twice for query "
            f"{qids[g]!r} (trec_eval refuses duplicate judgments)"
        )
    n_grades = max(int(qrels.rel.max()) + 1 if len(qrels) else 1, 1)
    ideal_counts = K.count_grades(q_off, q_rows, qrels.rel, n_grades)
    lo = max(rel_level, 0)
    n_relevant = ideal_counts[:, lo:].sum(axis=1) if lo < n_grades else np.zeros(n_q, np.int64)

    # the run, grouped by query and ranked the trec_eval way
    r_off, r_rows = K.group_rows(new_index[run_code], n_q)
    offsets, rows = K.trec_order(r_off, r_rows, run.score, run.docno.data, run.docno.offsets, max_docs)
    labels, _judged, g, dup = K.label_run(
        offsets, rows, run.docno.data, run.docno.offsets,
        q_off, q_rows, qrels.docno.data, qrels.docno.offsets, qrels.rel,
    )
    if g >= 0:
        raise ValueError(
            f"{run.source or 'run'}: document {run.docno[dup]!r} is retrieved twice for query "
            f"{qids[g]!r} (trec_eval refuses duplicate documents)"
        )
    np.maximum(labels, 0, out=labels)

    return AlignedRun(
        qids=qids,
        offsets=offsets,
        labels=labels.astype(np.int64, copy=False),
        scores=run.score[rows],
        rows=rows,
        n_relevant=np.asarray(n_relevant, dtype=np.int64),
        ideal_counts=ideal_counts,
        in_run=present[keep],
        rel_level=rel_level,
        runid=run.runid,
    )


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
