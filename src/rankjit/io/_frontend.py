"""The front ends' one interface to rankjit's trec_eval machinery (internal).

The drop-in front ends (``rankjit.compat.pytrec_eval``, ``rankjit.compat.ranx``) turn
their inputs into the aligned layout of :mod:`rankjit.io._align` and evaluate measures on
it through this module: none of them imports a private (``_``-prefixed) name of another
module.  The ``rankjit trec_eval`` command (``rankjit.io._cli``, whose measure table this
module reads) makes the same calls of :mod:`rankjit.io._align` directly, so that the two
modules do not import each other.  What the front ends use:

* **Judgments.** :func:`code_judgments` codes judgments grouped by query once: the
  distinct grades, a label per judgment, the judged documents per grade and per query,
  and R (:class:`CodedJudgments`).  :func:`code_grades` is the coding alone;
  :func:`query_codes` gives the distinct query ids of a string column and each row's index.
* **A ranked run.** :func:`aligned_from_labels` builds an :class:`AlignedRun` from
  documents already in trec_eval's rank order and one label each (0: not in the qrels,
  1: judged below 0, ``2 + c``: judged with grade ``grade_values[c]``).
* **Measures.** :func:`measures_on_codes` rewrites measure texts for the grade codes
  (parse once, evaluate many runs); :func:`evaluate_coded` evaluates them on the codes,
  in the given order (``n_relevant`` marked by :func:`counts_of_the_judgments` when it counts
  the judgments that coded the labels: then not checked against them); :func:`trec_values` gives the per-query values of trec_eval
  measure names (``{'bpref': None, 'P': (5, 10)}``), :func:`trec_default` a trec_eval
  measure's default parameters; :func:`ranked_relevance` the relevant documents of an
  aligned run in rank order (trec_eval's counts); :func:`make_measure` a measure record
  built directly (family, cutoff, parameters), without parsing a text.

Everything keeps trec_eval's ranking: documents are ranked before they reach the engine,
which then runs with ``ties="stable"``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rankjit._api import counts_of_the_judgments
from rankjit.io._align import (
    AlignedRun,
    aligned_from_labels,
    code_grades,
    evaluate_coded,
    first_code_at_least,
    measures_on_codes,
)

__all__ = ["AlignedRun", "CodedJudgments", "aligned_from_labels", "code_grades", "code_judgments",
           "counts_of_the_judgments", "evaluate_coded",
           "first_code_at_least", "make_measure", "measures_on_codes", "query_codes", "ranked_relevance",
           "trec_default", "trec_values"]


class CodedJudgments(NamedTuple):
    """Judgments grouped by query, coded once (the qrels side of an alignment).

    Attributes
    ----------
    starts : numpy.ndarray of int64, shape (n_queries + 1,)
        Query ``i`` holds judgments ``starts[i]:starts[i + 1]``.
    grade_values : numpy.ndarray of int64
        The distinct grades >= 0 and 0, ascending (:attr:`AlignedRun.grade_values`).
    labels : numpy.ndarray of int64, one per judgment
        1 for a grade below 0, ``2 + c`` for grade ``grade_values[c]`` (the labels of
        :func:`aligned_from_labels`).
    judged_counts : rankjit._grade_counts.GradeCounts
        Judgments per query and grade code (grades below 0 not counted), sparse.
    n_relevant : numpy.ndarray of int64, shape (n_queries,)
        Judgments with a grade >= the relevance level (trec_eval's R).
    """

    starts: np.ndarray
    grade_values: np.ndarray
    labels: np.ndarray
    judged_counts: object
    n_relevant: np.ndarray


def code_judgments(lengths, grades, rel_level):
    """Code judgments grouped by query: ``lengths[i]`` judgments of query ``i``, ``grades`` (int64) in order.

    ``rel_level`` is the lowest relevant grade (R counts the grades >= it).
    """
    from rankjit._grade_counts import GradeCounts
    from rankjit._kernels.frontends import grouped_code_counts

    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    grade_values, row_codes = code_grades(grades)
    labels = row_codes + 2  # 2 + code; 1 for a negative grade (code -1)
    width = grade_values.shape[0]
    offsets, entries, n_relevant = grouped_code_counts(starts, row_codes, width,
                                                       first_code_at_least(grade_values, rel_level))
    return CodedJudgments(starts, grade_values, labels, GradeCounts(offsets, entries, width, True), n_relevant)


def trec_values(aligned, requested, *, num_docs=0, complete=False, judged_only=False):
    """Per-query values of trec_eval measures on ``aligned``: a list of ``(printed name, kind, values)``.

    ``requested`` maps trec_eval names to parameters (``{'map': None, 'P': (5, 10)}``);
    see ``rankjit trec_eval`` for ``num_docs`` (``-N``), ``complete`` (``-c``) and
    ``judged_only`` (``-J``: ``aligned`` already condensed).  ``kind`` is ``"int"``,
    ``"float"``, ``"gm"`` or ``"summary"``.
    """
    from rankjit.io._cli import trec_eval_values

    return trec_eval_values(aligned, requested, num_docs=num_docs, complete=complete, judged_only=judged_only)


def trec_default(name):
    """The default parameters of trec_eval measure ``name`` (cutoffs or levels; None when it takes none)."""
    from rankjit.io._cli import TREC_TABLE

    return TREC_TABLE[name].default


def ranked_relevance(aligned):
    """trec_eval's counts of ``aligned``'s relevant documents (judged, grade >= ``rel_level``) in rank order."""
    from rankjit.io._trec_counts import RankedRelevance

    rel_code = first_code_at_least(aligned.grade_values, aligned.rel_level)
    relevant = aligned.judged & (aligned.grade_codes >= rel_code)
    return RankedRelevance(relevant, aligned.offsets, aligned.n_relevant)


def query_codes(qid_col):
    """The distinct ids of a string column (``bytes``, sorted like ``strcmp``) and each row's index among them."""
    from rankjit.io._align import _query_sets

    if qid_col.offsets.shape[0] == 1:
        return [], np.zeros(0, dtype=np.int64)
    uq, codes, _, _ = _query_sets(qid_col, qid_col)
    return uq, codes


def make_measure(text, family, k=None, params=None):
    """A measure record for :func:`rankjit.evaluate`, built without parsing ``text`` (its key in the results).

    ``params`` may hold what a text cannot, e.g. a gain array; they are checked by
    ``rankjit.evaluate`` as the parsed ones are.
    """
    from rankjit._measures import Measure

    return Measure(text, family, k, dict(params or {}))
