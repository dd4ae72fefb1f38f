"""Judged documents per query and grade, stored sparsely: memory grows with the judgments, never with the grades.

The ideal DCG, R (judged documents at or above a relevance threshold) and Bpref's N
read how many documents of each grade a query's judgments hold, retrieved or not
(``ideal_counts=`` of :func:`rankjit.evaluate`).  A dense table of queries x grades
grows with the number of distinct grades times the number of queries: 8000 queries
whose judgments each use grades of their own (16,000 distinct grades) made a table of
1 GB where trec_eval needs 4 MB (``benchmarks/bench_distinct_grades.py``).
:class:`GradeCounts` keeps, for each query, only the grades it holds: (grade, count)
pairs in grade order, one run per query, like a CSR matrix.

A dense ``ideal_counts=`` given by a caller is turned into one after its checks
(:meth:`GradeCounts.from_dense`); the alignment of a run with its qrels builds one
directly (:meth:`GradeCounts.from_grouped`).  The engine's kernels read the two arrays
``offsets`` and ``entries``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

__all__ = ["GradeCounts", "DENSE_CELLS_LIMIT"]

#: the most cells :meth:`GradeCounts.dense` builds (2**26 int64 cells: 512 MiB)
DENSE_CELLS_LIMIT = 2**26
#: :meth:`GradeCounts.from_pairs` counts in a dense table up to this many cells (or SMALL_TABLE_PER_ROW per
#: counted row), else sorts
SMALL_TABLE_CELLS = 2**20
SMALL_TABLE_PER_ROW = 4


@dataclass(frozen=True, eq=False)
class GradeCounts:
    """Per query, the number of judged documents of each grade (only the grades with a count).

    Attributes
    ----------
    offsets : numpy.ndarray of int64, shape (n_queries + 1,)
        Query ``q`` holds ``entries[offsets[q]:offsets[q + 1]]``.
    entries : numpy.ndarray of int64, shape (n_entries, 2)
        Rows ``(grade, count)``: grades ascending within a query, counts > 0.
    n_columns : int
        The width of the equivalent dense table (every grade is below it).
    from_judgments : bool
        True when the counts were derived from the very judgments behind the labels
        they are evaluated with (they cover every row by construction, so they are not
        checked against it).

    Examples
    --------
    >>> counts = GradeCounts.from_dense(np.array([[0, 2, 0, 1], [3, 0, 0, 0]]))
    >>> counts.entries.tolist(), counts.offsets.tolist()
    ([[1, 2], [3, 1], [0, 3]], [0, 2, 3])
    >>> counts.at_least(1).tolist(), counts.dense().tolist()
    ([3, 0], [[0, 2, 0, 1], [3, 0, 0, 0]])
    """

    offsets: np.ndarray
    entries: np.ndarray
    n_columns: int
    from_judgments: bool = False

    @property
    def n_queries(self):
        return self.offsets.shape[0] - 1

    @property
    def grades(self):
        return self.entries[:, 0]

    @property
    def counts(self):
        return self.entries[:, 1]

    def query_of_entries(self):
        """The query of each entry."""
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), np.diff(self.offsets))

    @classmethod
    def from_dense(cls, table, from_judgments=False):
        """The nonzero cells of a dense (n_queries, n_grades) table of counts >= 0."""
        table = np.asarray(table)
        q, g = np.nonzero(table)
        entries = np.empty((q.shape[0], 2), dtype=np.int64)
        entries[:, 0] = g
        entries[:, 1] = table[q, g]
        return cls(_offsets(q, table.shape[0]), entries, int(table.shape[1]), from_judgments)

    @classmethod
    def from_grouped(cls, starts, grades, n_columns, from_judgments=True):
        """Count the grades of rows grouped by query: query ``q`` holds ``grades[starts[q]:starts[q + 1]]``.

        Negative grades are not counted; every other grade must be below ``n_columns``.
        """
        starts = np.asarray(starts, dtype=np.int64)
        n_q = starts.shape[0] - 1
        query = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(starts))
        return cls.from_pairs(query, grades, n_q, n_columns, from_judgments)

    @classmethod
    def from_pairs(cls, query, grades, n_queries, n_columns, from_judgments=True):
        """Count the (query, grade) pairs of judgments in any order (negative grades are not counted)."""
        n_q = n_queries
        query = np.asarray(query, dtype=np.int64)
        grades = np.asarray(grades, dtype=np.int64)
        counted = grades >= 0
        query, grades = query[counted], grades[counted]
        width = max(n_columns, 1)
        if n_q * width <= max(SMALL_TABLE_CELLS, SMALL_TABLE_PER_ROW * query.shape[0]):  # small: a count per cell
            table = np.bincount(query * width + grades, minlength=n_q * width)
            keys = np.flatnonzero(table)
            counts = table[keys]
            q, g = np.divmod(keys, width)
        elif n_q * width < 2**62:  # one key per (query, grade): a single sort
            keys, counts = np.unique(query * width + grades, return_counts=True)
            q, g = np.divmod(keys, width)
        else:  # (beyond int64 keys: sort by grade within query)
            order = np.lexsort((grades, query))
            query, grades = query[order], grades[order]
            first = np.ones(query.shape[0], dtype=bool)
            first[1:] = (query[1:] != query[:-1]) | (grades[1:] != grades[:-1])
            at = np.flatnonzero(first)
            q, g = query[at], grades[at]
            counts = np.diff(np.append(at, query.shape[0]))
        entries = np.empty((q.shape[0], 2), dtype=np.int64)
        entries[:, 0] = g
        entries[:, 1] = counts
        return cls(_offsets(q, n_q), entries, int(n_columns), from_judgments)

    def marked_from_judgments(self):
        """The same counts, marked as derived from the judgments behind the labels (not checked against them)."""
        return self if self.from_judgments else dataclasses.replace(self, from_judgments=True)

    def _per_query(self, selected):
        """Per query, the sum of the counts of the entries ``selected`` (a boolean array over the entries)."""
        running = np.zeros(self.entries.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.where(selected, self.counts, 0), out=running[1:])
        return running[self.offsets[1:]] - running[self.offsets[:-1]]

    def totals(self):
        """Judged documents of each query (every grade)."""
        return self._per_query(np.ones(self.entries.shape[0], dtype=bool))

    def at_least(self, threshold):
        """Judged documents of each query with a grade >= ``threshold``."""
        return self._per_query(self.grades >= threshold)

    def between(self, lo, hi):
        """Judged documents of each query with ``lo <= grade < hi``."""
        g = self.grades
        return self._per_query((g >= lo) & (g < hi))

    def top_grade(self):
        """The highest grade with a count (-1 if none)."""
        return int(self.grades.max(initial=-1))

    def shifted(self, by):
        """The counts of grade ``g`` moved to grade ``g + by`` (``by`` empty grades in front)."""
        entries = self.entries.copy()
        entries[:, 0] += by
        return dataclasses.replace(self, entries=entries, n_columns=self.n_columns + by)

    def take(self, queries):
        """The counts of the queries ``queries`` (integer indexes, in that order)."""
        queries = np.asarray(queries, dtype=np.int64)
        lo, hi = self.offsets[queries], self.offsets[queries + 1]
        offsets = np.zeros(queries.shape[0] + 1, dtype=np.int64)
        np.cumsum(hi - lo, out=offsets[1:])
        picked = np.repeat(lo - offsets[:-1], hi - lo) + np.arange(offsets[-1], dtype=np.int64)
        return dataclasses.replace(self, offsets=offsets, entries=self.entries[picked])

    def dense(self, limit=DENSE_CELLS_LIMIT, name="ideal_counts"):
        """The dense (n_queries, n_columns) int64 table; a ``ValueError`` beyond ``limit`` cells."""
        size = self.n_queries * self.n_columns
        if size > limit:
            raise ValueError(
                f"{name} would have {self.n_queries} x {self.n_columns} = {size} cells, more than {limit}; "
                "the counts are kept sparse (one entry per query and grade it holds)"
            )
        out = np.zeros((self.n_queries, self.n_columns), dtype=np.int64)
        out[self.query_of_entries(), self.grades] = self.counts
        return out


def _offsets(query_of_entry, n_queries):
    """CSR offsets of entries sorted by query."""
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(query_of_entry, minlength=n_queries), out=offsets[1:])
    return offsets
