"""Runs given as dicts, ranked and labelled as trec_eval 9 (or another tool) ranks them (internal).

The dict front ends that follow pytrec_eval (``rankjit.compat.pytrec_eval`` and the
pytrec_eval measures of the ir_measures provider) rank a run ``{query: {document: score}}``
the same way: scores rounded to float32 (trec_eval 9 keeps C ``float``), descending, equal
scores by document id descending.  :class:`JudgedLookups` holds the judgments coded once and
builds that ranking for a run: only the judged documents are looked up in the run's dicts
and placed by counting the scores above theirs; the order of the other documents among
themselves changes no measure.  The ir_measures provider builds the other providers'
rankings the same way: scores as float64 (gdeval, msmarco, judged), equal scores by
document id ascending (msmarco, judged).  (Named ``_trec_dicts`` / ``TrecJudgments`` up
to the twenty-sixth session, when trec_eval's was the only ranking built here.)
"""
from __future__ import annotations

import functools
from itertools import chain, compress

import numpy as np

from rankjit.io._dicts import HeldObjects, index_not_str


def ranges(starts, lengths):
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lengths)])`` (int64)."""
    off = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    return np.arange(off[-1], dtype=np.int64) + np.repeat(starts - off[:-1], lengths)


def ids_first(needed, members, descending=True):
    """For each needed document, the members of its tie group whose id comes first (a list of ints).

    ``needed`` and ``members`` are iterables of ``(group, document id)``: a group is a query
    and a score, and each needed document is one of its group's members.  Ids are compared as
    Python compares them (str: code point order, which is the byte order of their UTF-8, as
    trec_eval's ``strcmp``); a greater id comes first when ``descending`` (trec_eval), a
    smaller one otherwise (msmarco, judged).
    """
    from functools import partial
    from operator import gt, lt

    groups = {}
    for group, doc in members:
        groups.setdefault(group, []).append(doc)
    first = lt if descending else gt  # first(doc, other): other comes before doc
    return [sum(map(partial(first, doc), groups[group])) for group, doc in needed]


class JudgedLookups:
    """Judgments ``{query: {document: grade}}`` coded once, to rank runs given as dicts by looking the judged
    documents up in them (trec_eval's ranking by default; gdeval's, msmarco's and judged's with :meth:`align`'s
    options).

    Parameters
    ----------
    qindex : dict
        The judged queries (each with at least one judgment): ``{query id: row}``, rows
        ``0, 1, ...`` in the order of ``dicts``.
    dicts : list of dict or None
        Their judgments, ``{document id: grade}``: the caller's own copies, which nothing
        else changes (held, and read again by the Python path of :meth:`align`); None when
        ``key_addresses`` holds the ids (a :class:`rankjit.io._dicts.HeldObjects`).
    coded : rankjit.io._frontend.CodedJudgments
        The grades of ``dicts`` in order, coded by :func:`rankjit.io._frontend.code_judgments`
        with ``rel_level`` (the front end codes them once, for its other uses too).
    rel_level : int
        The lowest relevant grade (>= 1).
    all_judged : bool
        Whether the measures read the judged documents of grade <= 0 (bpref, infAP, judged
        only, ...); when False only the documents of grade > 0 are looked up in a run, and
        the others rank as unjudged documents.
    key_addresses : ndarray of int64, rankjit.io._dicts.HeldObjects or None, optional
        Every document id of ``dicts`` in order, each exactly a ``str``, as
        :func:`rankjit.io._dicts.int64_values_and_keys` reads them with the grades: their
        ``id()`` (borrowed from ``dicts``), or the ids held by reference (then ``dicts`` is
        None); None when not read (then listed and checked in Python at the first alignment:
        when one is not exactly a ``str``, the compiled read of a run does not run).

    An instance pickles with its ids, not their addresses, which are listed again when it is
    next used (an address means nothing in another process).
    """

    def __init__(self, qindex, dicts, coded, rel_level, all_judged, key_addresses=None):
        self.qindex = qindex
        # grades coded densely (rankjit.io._align's layout): label 2 + the code of a grade >= 0, 1 below 0
        self.rel_level = rel_level
        self.grade_values, self.judged_counts, self.n_relevant = (coded.grade_values, coded.judged_counts,
                                                                  coded.n_relevant)
        for shared in (self.n_relevant, self.judged_counts.offsets, self.judged_counts.entries):
            shared.flags.writeable = False  # (the aligned runs of queries in order share them: never written)
        # the documents looked up in a run and their labels: every judged document, or only those of a grade
        # > 0 (label >= 3: the rows _looked).  Query i's are _qstart[i]:_qstart[i + 1] of _row_labels (and of
        # the ids the Python path lists, _qdocs or _docs)
        self._dicts = dicts
        self._held = key_addresses if isinstance(key_addresses, HeldObjects) else None
        self._key_addresses = None if self._held is not None else key_addresses  # (borrowed from dicts)
        self._addresses = None  # the looked-up ids' (looked_up_addresses; False: an id is not exactly a str)
        if all_judged:
            self._looked = None
            self._row_labels, self._qstart = coded.labels, coded.starts
        else:
            self._looked = looked = np.flatnonzero(coded.labels >= 3)  # (indexes: one pass, then takes)
            # query i's looked-up rows start at the number of them before its first row
            self._row_labels, self._qstart = coded.labels.take(looked), np.searchsorted(looked, coded.starts)
        self._qlen = np.diff(self._qstart)
        if self.grade_values.shape[0] + 2 <= 256:  # the run's labels (2 + code) fit in a byte
            self._row_labels = self._row_labels.astype(np.uint8)

    def __getstate__(self):
        # (addresses are not pickled: listed again from the held ids or the dicts when next used)
        return {**self.__dict__, "_key_addresses": None, "_addresses": None}

    @functools.cached_property
    def _qdocs(self):
        """Every judged document id, a tuple per query (None when only those of grade > 0 are looked up)."""
        if self._looked is not None:
            return None
        if self._dicts is not None:
            return list(map(tuple, self._dicts))
        ids, bounds = self._held.objects(), self._qstart.tolist()
        return [tuple(ids[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]

    @functools.cached_property
    def _docs(self):
        """The looked-up document ids (grade > 0), one flat list (None when every judged one is looked up)."""
        if self._looked is None:
            return None
        if self._dicts is not None:
            look = np.zeros(sum(map(len, self._dicts)), dtype=bool)
            look[self._looked] = True
            return list(compress(chain.from_iterable(self._dicts), look.tobytes()))
        return self._held.objects(self._looked)

    def looked_up_addresses(self):
        """``id()`` of each looked-up document id (int64, the rows of ``_row_labels``), or None if one is not
        exactly a str (then the compiled read does not run).  Read with the grades, or listed at the first
        alignment; the ids are held by the dicts or by reference."""
        if self._addresses is None:
            every = self._key_addresses if self._held is None else self._held.addresses
            if every is not None:
                addresses = every if self._looked is None else every.take(self._looked)
            else:
                from rankjit.io._dicts import str_addresses

                docs = self._docs if self._qdocs is None else list(chain.from_iterable(self._qdocs))
                addresses = str_addresses(docs)
            self._addresses = False if addresses is None else addresses
        return self._addresses if self._addresses is not False else None

    def read_compiled(self, dicts, offsets, found, q_lens, j_off, in_order):
        """``(scores, looked-up scores, looked-up addresses, positions)``, the scores float64 (NaN: not retrieved;
        positions: where each score is in its dict, int32), read by
        one compiled pass over the run's dicts (:func:`rankjit.io._dicts.scores_and_lookups`), or None where
        that pass cannot read them (keys not exactly str, scores not floats, a NaN, no JIT)."""
        from rankjit.io._dicts import scores_and_lookups

        looked_up = self.looked_up_addresses()
        if looked_up is None:
            return None
        if not in_order:
            looked_up = looked_up[ranges(self._qstart[found], q_lens)]
        read = scores_and_lookups(dicts, offsets, looked_up, j_off)
        return None if read is None else (read[0], read[1], looked_up, read[2])

    def align(self, qids, dicts, found, read_python=None, name="scores", float32=True, descending=True, depth=None):
        """The run ranked and labelled like trec_eval: an AlignedRun of the queries ``qids``, in that order.

        ``dicts`` are their dicts ``{document id: score}``, ``found`` (int64) their rows in
        :attr:`qindex`.  The run is read in one compiled pass where it can be; otherwise by
        ``read_python(qids, dicts, offsets, j_off, j_docs)``, which returns the scores (float32,
        flat) and the looked-up documents' scores (float32, NaN: not retrieved; ``j_docs()``
        iterates over their ids), raising on a bad value.  Without ``read_python``, None when
        the compiled pass cannot read the run.  The ranking is given by the scores
        ``0, -1, -2, ...`` (evaluate it with ``ties="stable"``).  ``name`` names the run in the
        error raised on a tied document id that is not a str.

        trec_eval's ranking by default.  ``float32=False`` ranks the scores as float64 (the
        compiled read alone), ``descending=False`` puts the smaller of two tied ids first
        (gdeval ranks float64 scores, ties descending; msmarco and judged float64, ties
        ascending).  With a ``depth``, only the documents ranked above it are placed, the
        others hold no label: for measures that read the first ``depth`` ranks alone
        (cutoffs: ``Judged@k``, ``P@k``, ...; up to ``_SMALL_DEPTH`` the documents below are
        left out before any count).
        """
        from rankjit._config import run_blocks, use_parallel
        from rankjit._kernels.frontends import _place_judged, place_judged_scratch
        from rankjit.io._frontend import aligned_from_labels

        n_q = len(qids)
        lens = np.fromiter(map(len, dicts), dtype=np.int64, count=n_q)
        offsets = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        q_lens = self._qlen[found]
        j_off = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum(q_lens, out=j_off[1:])
        in_order = n_q == self._qlen.shape[0] and bool((found == np.arange(n_q)).all())
        read = self.read_compiled(dicts, offsets, found, q_lens, j_off, in_order)
        if read is not None:
            score, j_score, looked_up, positions = read
            if float32:
                with np.errstate(over="ignore", invalid="ignore"):  # (beyond float32's range: inf, as in C)
                    score, j_score = score.astype(np.float32), j_score.astype(np.float32)
        elif read_python is None or not float32:
            return None
        else:
            score, j_score = read_python(qids, dicts, offsets, j_off, self._docs_reader(found, q_lens, in_order))
            looked_up = positions = None
        j_label = self._row_labels if in_order else self._row_labels[ranges(self._qstart[found], q_lens)]
        n = int(offsets[-1])
        labels = np.zeros(n, dtype=j_label.dtype)
        above = np.full(j_score.shape[0], -1, dtype=np.int64)
        tied = np.zeros(n_q, dtype=bool)
        member = np.zeros(n, dtype=bool)
        most = int(q_lens.max()) + 1
        longest = int(lens.max())
        reach = longest if depth is None else depth

        def place(g_lo, g_hi):  # scratch of its own per call: ranges run on threads
            _place_judged(g_lo, g_hi, offsets, score, j_off, j_score, j_label, labels, above, tied, member,
                          *place_judged_scratch(most, longest, reach), reach)

        run_blocks(place, n_q, use_parallel(n_q))
        if tied.any():
            self._place_tied(qids, dicts, found, score, offsets, j_off, j_score, j_label, labels, above, member,
                             looked_up, name, descending, positions)
        return aligned_from_labels(qids, offsets, labels, self.grade_values,
                                   self.judged_counts if in_order else self.judged_counts.take(found),
                                   self.n_relevant if in_order else self.n_relevant[found], self.rel_level,
                                   scores=np.arange(0, -n, -1, dtype=np.float64))  # the ranking as built

    def _docs_reader(self, found, q_lens, in_order):
        """``j_docs()``: an iterator over the looked-up documents' ids, in the run's query order."""
        if self._qdocs is not None:
            def j_docs():
                return chain.from_iterable(self._qdocs if in_order else map(self._qdocs.__getitem__, found.tolist()))
        elif in_order:
            def j_docs():
                return iter(self._docs)
        else:
            def j_docs():
                starts = self._qstart[found]
                return chain.from_iterable(map(self._docs.__getitem__, map(slice, starts.tolist(),
                                                                           (starts + q_lens).tolist())))
        return j_docs

    def _place_tied(self, qids, dicts, found, score, offsets, j_off, j_score, j_label, labels, above, member,
                    looked_up, name, descending=True, positions=None):
        """Labels of the judged documents whose score other documents share (``above[t] >= 0``).

        Such a document comes after the ``above[t]`` documents of higher scores and after the
        documents of its score with a greater id (trec_eval: ties by document id descending,
        compared as C strings: byte order of their UTF-8, which is the code point order of
        Python's ``str`` comparison; a smaller id unless ``descending``).  With ``looked_up``
        (the compiled read ran), the ids are compared in a compiled pass
        (:func:`rankjit.io._dicts.place_tied_by_id`), which reads them at ``positions``.
        """
        need = np.flatnonzero(above >= 0)
        need_q = np.searchsorted(j_off, need, side="right") - 1
        if looked_up is not None:
            from rankjit.io._dicts import place_tied_by_id

            if place_tied_by_id(dicts, need, need_q, offsets, score, member, j_score, j_label, above, labels,
                                positions, looked_up=looked_up, descending=descending):
                return
        members = np.flatnonzero(member)
        members_q = np.searchsorted(offsets, members, side="right") - 1
        tied_q = np.unique(members_q)
        bounds = np.searchsorted(members_q, tied_q, side="right")  # tied_q[k]'s members end at bounds[k]
        member_ids = []
        for g, lo, hi in zip(tied_q.tolist(), [0, *bounds[:-1].tolist()], bounds.tolist()):
            keys = list(dict.keys(dicts[g]))  # (in the order of the query's scores: dict.values' order, whatever
            # order a dict subclass iterates in)
            ids = [keys[i] for i in (members[lo:hi] - offsets[g]).tolist()]
            i = index_not_str(ids)
            if i >= 0:
                raise TypeError(f"{name}[{qids[g]!r}]: document id {ids[i]!r} is a {type(ids[i]).__name__}, not a str")
            member_ids += ids
        # (a looked-up document is equal to a tied id of the run, a str)
        starts = self._qstart[found[need_q]] + (need - j_off[need_q])
        need_ids = (map(self._docs.__getitem__, starts.tolist()) if self._qdocs is None else
                    map(lambda g, i: self._qdocs[g][i], found[need_q].tolist(), (need - j_off[need_q]).tolist()))
        first = ids_first(zip(zip(need_q.tolist(), j_score[need].tolist()), need_ids),
                          zip(zip(members_q.tolist(), score[members].tolist()), member_ids), descending)
        labels[offsets[need_q] + above[need] + np.asarray(first, dtype=np.int64)] = j_label[need]
