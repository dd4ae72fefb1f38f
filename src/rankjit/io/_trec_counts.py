"""trec_eval's measures of counts: set measures, relative precision, precision at multiples of R,
interpolated precision at recall levels, utility, binary G, yaap, and the measures of judged documents
(bpref, unjudged documents in the top k, judged non-relevant documents retrieved, RBP's residual);
and trec_eval's ``-Z``: per-query values as z-scores (:func:`read_zscores`, :func:`zscore_results`).

Each is a function of the relevance of the retrieved documents in trec_eval's rank order
(:class:`rankjit.io.AlignedRun`, already ranked) and the number of relevant documents R:
no ranking is needed beyond the alignment's, and each is computed for every query at
once with numpy over the ragged (CSR) layout.  The definitions are trec_eval 10.0's
(``m_set_P.c``, ``m_set_recall.c``, ``m_set_F.c``, ``m_set_map.c``, ``m_set_rel_P.c``,
``m_rel_P.c``, ``m_Rprec_mult.c``, ``m_iprec_at_recall.c``, ``m_11pt_avg.c``,
``m_utility.c``, ``m_bpref.c``, ``m_unjudged.c``, ``m_num_nonrel_judged_ret.c``,
``m_rbp_resid.c``, ``m_binG.c``, ``m_yaap.c``; ``get_zscores.c``, ``convert_zscores.c``), restated
next to each function; ``docs/cli.md`` lists them.

Notation, per query: ``ret`` retrieved documents, ``R`` relevant judged documents
(retrieved or not), ``rel_ret`` relevant retrieved ones, ``rel(i)`` relevant ones in the
top ``i``.  A value with a zero denominator is 0, as trec_eval leaves it, but for
iprec_at_recall and 11pt_avg on an empty ranking: trec_eval divides 0 by 0 there and prints
``-nan`` (:func:`iprec_at_recall`), and so does rankjit.
"""
from __future__ import annotations

import re

import numpy as np


class RankedRelevance:
    """Relevance of the retrieved documents of every query, in rank order.

    ``relevant``: bool per ranked document; ``offsets``: CSR offsets of the queries;
    ``num_rel``: R per query; ``judged`` (bool per ranked document, for the measures of
    judged documents): judged with a grade >= 0; ``num_nonrel``: judged non-relevant
    documents per query, retrieved or not.
    """

    def __init__(self, relevant, offsets, num_rel, judged=None, num_nonrel=None):
        self.judged = judged
        self.num_nonrel = num_nonrel
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.num_ret = np.diff(self.offsets)
        self.num_rel = np.asarray(num_rel, dtype=np.int64)
        # cum[p]: relevant documents before flat position p; rel(i) of query q = cum[off_q + i] - cum[off_q]
        self._cum = np.zeros(len(relevant) + 1, dtype=np.int64)
        np.cumsum(relevant, out=self._cum[1:])
        self.relevant = np.asarray(relevant, dtype=bool)
        self.rel_ret = self.rel_at(self.num_ret)

    def rel_at(self, i):
        """rel(i): relevant documents in the top ``i`` (per query; ``i`` beyond ``ret`` counts them all)."""
        depth = np.minimum(np.asarray(i, dtype=np.int64), self.num_ret)
        return self._cum[self.offsets[:-1] + depth] - self._cum[self.offsets[:-1]]

    def best_precision_from(self):
        """Per relevant retrieved document j (1-based within its query), ``max_{j' >= j} j' / rank(j')``.

        Returns ``(values, first)``: the values of query q's relevant documents are
        ``values[first[q]:first[q + 1]]``, in rank order.  trec_eval's interpolated
        precision at the j-th relevant document: precision only rises at a relevant
        document, so the maximum over every rank from there on is one over relevant ones.
        """
        at = np.flatnonzero(self.relevant)
        query = np.searchsorted(self.offsets, at, side="right") - 1
        j = self._cum[at + 1] - self._cum[self.offsets[query]]  # its number among its query's relevant ones
        precision = j / (at - self.offsets[query] + 1)  # j / rank
        # maximum from each position to the end of its query: the running maximum of the reversed
        # values, each query lifted above the ones after it.  On the values' ranks (integers), so
        # that the lift is exact: the maxima are then read back from the sorted values
        n = precision.shape[0]
        order = np.argsort(precision, kind="stable")
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        lift = n * (query.max(initial=0) - query[::-1])
        values = precision[order][np.maximum.accumulate(rank[::-1] + lift) - lift][::-1]
        first = np.zeros(len(self.num_ret) + 1, dtype=np.int64)
        np.cumsum(self.rel_ret, out=first[1:])
        return values, first


def level_name(name, level):
    """trec_eval's name of a measure at a real level: ``name_`` and ``level`` printed ``%3.2f``, cut to 8 characters.

    trec_eval (``meas_init.c``, ``append_double``) makes room for 8 characters of the level,
    so ``Rprec_mult.5000000000`` is printed ``Rprec_mult_50000000``; iprec_at_recall,
    Rprec_mult and Rprec_mult_avgjg take real levels.

    >>> level_name("iprec_at_recall", 0.1), level_name("Rprec_mult", 1234567.5)
    ('iprec_at_recall_0.10', 'Rprec_mult_1234567.')
    """
    return f"{name}_{f'{level:.2f}'[:8]}"


def _ratio(num, den):
    """``num / den`` where ``den > 0``, else 0 (trec_eval leaves such a value at 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def set_p(r):
    """``set_P = rel_ret / ret``."""
    return _ratio(r.rel_ret, r.num_ret)


def set_recall(r):
    """``set_recall = rel_ret / R``."""
    return _ratio(r.rel_ret, r.num_rel)


def set_map(r):
    """``set_map = rel_ret^2 / (ret * R)`` (set precision times set recall)."""
    return _ratio(r.rel_ret.astype(np.float64) ** 2, r.num_ret.astype(np.float64) * r.num_rel)


def set_relative_p(r):
    """``set_relative_P = rel_ret / min(ret, R)``."""
    return _ratio(r.rel_ret, np.minimum(r.num_ret, r.num_rel))


def set_f(r, beta):
    """``set_F = (beta + 1) P R / (beta P + R)``, P and R the set precision and recall, when rel_ret > 0.

    trec_eval's parameter (``set_F.0.5``) multiplies P as it is given: it is beta, not
    beta squared, in this formula.
    """
    p, rec = set_p(r), set_recall(r)
    return np.where(r.rel_ret > 0, _ratio((beta + 1.0) * p * rec, beta * p + rec), 0.0)


def relative_p(r, k):
    """``relative_P@k = rel(k) / min(k, R)`` (0 when R = 0)."""
    return _ratio(r.rel_at(k), np.minimum(k, r.num_rel))


def rprec_mult(r, mult):
    """Precision at ``c = (long)(mult * R + 0.9)`` documents: ``rel(c) / c`` (0 when c = 0).

    Past the end of the ranking ``rel(c) = rel_ret`` (the missing documents count as not
    relevant).
    """
    # C's (long) cast: toward 0 (a product beyond any ranking kept below int64's bound: every document then counts)
    c = np.minimum(mult * r.num_rel.astype(np.float64) + 0.9, 2.0**62).astype(np.int64)
    return _ratio(r.rel_at(c), c)


def _lround(x):
    """C's ``lround`` for x >= 0: halves away from zero (numpy's ``round`` goes to even)."""
    low = np.floor(x)
    return (low + (x - low >= 0.5)).astype(np.int64)


#: C's ``0.0 / 0.0`` on x86-64: a NaN with its sign bit set, which ``printf`` writes ``-nan``
C_ZERO_BY_ZERO = -float("nan")


def iprec_at_recall(r, level, best=None, empty=None):
    """Interpolated precision at recall ``level``: ``max_{i >= i_c} rel(i) / i``.

    ``c = lround(level * R)`` relevant documents, ``i_c`` the rank of the c-th relevant
    retrieved one (of the first for c = 0); 0 when fewer than c are retrieved; when none
    is, ``rel_ret / ret`` for c = 0: 0, or ``0 / 0`` (``-nan``, :data:`C_ZERO_BY_ZERO`) for
    the queries ``empty`` (bool per query) says trec_eval ranks nothing for (``ret = 0``
    after ``-M`` and ``-J``).  ``best``: :meth:`RankedRelevance.best_precision_from`.
    """
    values, first = r.best_precision_from() if best is None else best
    c = _lround(level * r.num_rel.astype(np.float64))
    reached = (c <= r.rel_ret) & (r.rel_ret > 0)
    at = first[:-1] + np.maximum(c, 1) - 1
    out = np.zeros(len(r.num_ret))
    out[reached] = values[at[reached]]
    if empty is not None:
        out[empty & (c == 0)] = C_ZERO_BY_ZERO  # m_iprec_at_recall.c: rel_so_far / i = 0 / 0
    return out


def eleven_pt_avg(r, levels, empty=None):
    """The mean of :func:`iprec_at_recall` over ``levels`` (0.0, 0.1, ..., 1.0 by default); ``-nan`` with one."""
    best = r.best_precision_from()
    return np.mean([iprec_at_recall(r, level, best, empty) for level in levels], axis=0)


def utility(r, a, b, c, d, num_docs=0):
    """``a rel_ret + b (ret - rel_ret) + c (R - rel_ret) + d (N + rel_ret - ret - R)``.

    N is the size of the collection (trec_eval's ``-N``, 0 when not given).
    """
    ret, rel, rel_ret = (x.astype(np.float64) for x in (r.num_ret, r.num_rel, r.rel_ret))
    return a * rel_ret + b * (ret - rel_ret) + c * (rel - rel_ret) + d * (num_docs + rel_ret - ret - rel)


def _per_query(values, r):
    """Sum of per-document ``values`` over each query's retrieved documents."""
    query = np.repeat(np.arange(len(r.num_ret)), r.num_ret)
    return np.bincount(query, weights=values, minlength=len(r.num_ret))


def _before(flags, r):
    """Per ranked document: how many documents of its query above it have ``flags``."""
    cum = np.zeros(len(flags) + 1, dtype=np.int64)
    np.cumsum(flags, out=cum[1:])
    start = np.repeat(cum[r.offsets[:-1]], r.num_ret)
    return cum[:-1] - start


def bpref(r):
    """``bpref = (1/R) sum_{relevant retrieved d} (1 - min(n_d, R) / min(N, R))``.

    ``n_d``: judged non-relevant documents ranked above d (1 for d when ``n_d = 0``),
    ``N``: the query's judged non-relevant documents, retrieved or not.  Unjudged
    documents (not in the qrels, or judged below 0) take no part.
    """
    nonrel = r.judged & ~r.relevant
    above = _before(nonrel, r).astype(np.float64)
    cap = np.repeat(np.minimum(r.num_nonrel, r.num_rel), r.num_ret).astype(np.float64)
    rel_q = np.repeat(r.num_rel, r.num_ret).astype(np.float64)
    share = 1.0 - _ratio(np.minimum(above, rel_q), cap)  # cap > 0 wherever above > 0
    return _ratio(_per_query(np.where(r.relevant, np.where(above > 0, share, 1.0), 0.0), r), r.num_rel)


def num_nonrel_judged_ret(r):
    """Retrieved documents judged (grade >= 0) and not relevant."""
    return _per_query((r.judged & ~r.relevant).astype(np.float64), r).astype(np.int64)


def unjudged_at(r, k):
    """``unj@k``: unjudged documents in the top k, over k (past the ranking: over k still)."""
    unjudged = ~r.judged
    cum = np.zeros(len(unjudged) + 1, dtype=np.int64)
    np.cumsum(unjudged, out=cum[1:])
    depth = np.minimum(k, r.num_ret)
    return (cum[r.offsets[:-1] + depth] - cum[r.offsets[:-1]]) / k


def rbp_residual(r, p):
    """``p^n + (1 - p) sum_{unjudged i} p^(i-1)`` over the n retrieved documents; 0 when none is unjudged.

    (trec_eval writes the value only when some document is unjudged: a fully judged
    ranking gets 0, not ``p^n``.)  The powers are trec_eval's, p multiplied in one at a time
    (``np.power`` can differ in the last bit: -Z's z-scores show it).
    """
    rank = np.arange(len(r.judged)) - np.repeat(r.offsets[:-1], r.num_ret)  # 0-based
    unjudged = ~r.judged
    powers = np.multiply.accumulate(np.r_[1.0, np.full(int(r.num_ret.max(initial=0)), float(p))])  # p^k = p^(k-1) * p
    weight = _per_query(np.where(unjudged, powers[rank], 0.0), r)
    value = powers[r.num_ret] + (1.0 - p) * weight
    return np.where(_per_query(unjudged.astype(np.float64), r) > 0, value, 0.0)


def bin_g(r):
    """``binG = (1/R) sum_{relevant retrieved d} 1 / log2(2 + non-relevant documents above d)``.

    (m_binG.c writes ``log2(3 + i - rel(i + 1))`` for the document at 0-based rank i: the
    same count.)  0 when no relevant document is retrieved.
    """
    nonrel_above = _before(~r.relevant, r).astype(np.float64)
    return _ratio(_per_query(np.where(r.relevant, 1.0 / np.log2(2.0 + nonrel_above), 0.0), r), r.num_rel)


def yaap(r):
    """``yaap = log((1 + s) / (1 + R - s))``, ``s = sum_{relevant retrieved d} rel(i_d) / i_d``, i_d d's rank.

    Robertson's "yet another AP" (s / R is AP): 0 when R = 0.  A query the run lacks (``-c``)
    gets ``log(1 / (1 + R))``, as on trec_eval's stand-in ranking.
    """
    rank = np.arange(len(r.relevant)) - np.repeat(r.offsets[:-1], r.num_ret) + 1
    rel_so_far = r._cum[1:] - np.repeat(r._cum[r.offsets[:-1]], r.num_ret)  # rel(i) at each rank i
    s = _per_query(np.where(r.relevant, rel_so_far / rank, 0.0), r)  # summed in rank order
    return np.log((1.0 + s) / (1.0 + r.num_rel - s))


# ---- -Z: z-scores ------------------------------------------------------------------------

#: trec_eval's value of a measure the z-scores file gives no mean for (MISSING_ZSCORE_VALUE)
MISSING_ZSCORE = -1000000.0
#: a number as C's atof reads it whole (decimal, inf, nan); rankjit refuses anything else
_C_NUMBER = re.compile(rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE)


class ZScores:
    """A z-scores file (trec_eval ``-Z``): the reference mean and standard deviation of each
    (query, measure), held as get_zscores.c holds them: sorted by query, then measure (byte
    order), one flat list.

    :meth:`find` looks an entry up with trec_eval's binary searches (convert_zscores.c),
    whose upper bound is one past the end: a query id after every query of the file, or a
    measure name after every measure of its query, is compared with the entry that follows
    (the next query's first measure, which then counts when its name matches).  Past the
    very end trec_eval reads outside its table (and crashes); here that is "not found".
    """

    def __init__(self, entries):
        entries = sorted(entries, key=lambda e: (_bytes(e[0]), _bytes(e[1])))
        self.measures = [e[1] for e in entries]
        self.mean = np.array([e[2] for e in entries], dtype=np.float64)
        self.std = np.array([e[3] for e in entries], dtype=np.float64)
        self.qids, self.first = [], []  # each query's first entry in the flat list
        for i, e in enumerate(entries):
            if not self.qids or self.qids[-1] != e[0]:
                self.qids.append(e[0])
                self.first.append(i)
        self.first.append(len(entries))

    @staticmethod
    def _search(key, names, lo, n):
        """trec_eval's search of ``key`` among ``names[lo:lo + n]``, bounds [0, n]; index or -1."""
        key = _bytes(key)
        start, end = 0, n
        while start <= end:
            current = (start + end) // 2
            if lo + current >= len(names):
                return -1  # (trec_eval reads past its table here)
            other = _bytes(names[lo + current])
            if key < other:
                end = current - 1
            elif key > other:
                start = current + 1
            else:
                return lo + current
        return -1

    def find(self, qid, measure):
        """The flat index of (qid, measure), or -1."""
        q = self._search(qid, self.qids, 0, len(self.qids))
        if q < 0:
            return -1
        return self._search(measure, self.measures, self.first[q], self.first[q + 1] - self.first[q])

    def convert(self, qids, measure, values):
        """``(value - mean) / std`` per query; for std = 0, 0 when value = mean, else
        :data:`MISSING_ZSCORE`, as for a (query, measure) the file lacks."""
        at = np.array([self.find(q, measure) for q in qids], dtype=np.int64)
        values = np.asarray(values, dtype=np.float64)
        out = np.full(values.shape[0], MISSING_ZSCORE)
        found = at >= 0
        mean, std = self.mean[at[found]], self.std[at[found]]
        v = values[found]
        same = np.where(v == mean, 0.0, MISSING_ZSCORE)  # std = 0: 0 for the mean itself, else missing
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(std != 0.0, (v - mean) / np.where(std != 0.0, std, 1.0), same)  # (v - mean) / std
        out[found] = z
        return out


def _bytes(text):
    """The bytes of an id or name read from a file (surrogate escapes back to their bytes)."""
    return text.encode("utf-8", "surrogateescape")


def read_zscores(path):
    """Read trec_eval's z-scores file (``-Z``): lines ``qid measure mean std_dev``, blank-separated.

    The file is read as the qrels and the run are (:func:`rankjit.io._trec._read_bytes`): gzip
    decompressed, a leading UTF-8 byte-order mark dropped, ``\\r\\n`` and ``\\r`` line ends read
    as ``\\n``; query ids that are not UTF-8 are kept byte for byte (surrogate escapes).
    Refused, with the file and the (1-based) line named: a line without exactly 4 fields
    (trec_eval's "Malformed line"; blank lines included, as there), a mean or standard
    deviation that is not a number (trec_eval reads those with ``atof``: ``abc`` as 0), a
    (query, measure) given twice (trec_eval would use one of them), a NUL byte, an empty file,
    and what the TREC readers refuse (UTF-16, damaged gzip, a byte-order mark inside).
    Quotes of a line stop after 120 bytes.
    """
    from rankjit.io._trec import _QUOTE_MAX, _read_bytes

    try:
        data = _read_bytes(path, fields=4).tobytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such z-scores file") from None
    if not data:
        raise ValueError(f"{path}: the z-scores file is empty")
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    entries, seen = [], {}
    for n, line in enumerate(lines, 1):
        shown = line[:_QUOTE_MAX].decode("utf-8", "replace")  # (error messages only)
        if b"\0" in line:
            raise ValueError(f"{path}: line {n}: a NUL byte in the z-scores file: {shown!r}")
        fields = line.split()  # C's isspace: blank, \t, \r, \v, \f
        if len(fields) != 4:
            raise ValueError(f"{path}: line {n}: expected 4 fields 'qid measure mean std_dev', "
                             f"found {len(fields)} field(s): {shown!r}")
        qid, measure = (x.decode("utf-8", "surrogateescape") for x in fields[:2])  # lossless
        numbers = []
        for what, text in (("mean", fields[2]), ("std_dev", fields[3])):
            if not _C_NUMBER.fullmatch(text):
                raise ValueError(f"{path}: line {n}: {what} field {text[:_QUOTE_MAX].decode('utf-8', 'replace')!r} "
                                 f"is not a number: {shown!r}")
            numbers.append(float(text))
        if (qid, measure) in seen:
            raise ValueError(f"{path}: lines {seen[qid, measure]} and {n}: measure {measure!r} of query "
                             f"{qid!r} given twice")
        seen[qid, measure] = n
        entries.append((qid, measure, *numbers))
    return ZScores(entries)


def zscore_results(results, qids, zscores, gm_floor):
    """trec_eval ``-Z``: ``results`` of ``rankjit.io._cli.trec_eval_values`` with every per-query
    value replaced by its z-score (:meth:`ZScores.convert`, by the printed name of the measure).

    As in trec_eval, the value converted is the one trec_eval stores per query: for the
    geometric means (``gm`` kind) ``log(max(value, gm_floor))``, whose summary is then
    ``exp`` of the mean z-score; the count measures are converted too (their summary is the
    sum of the z-scores); ``runid``, ``num_q`` and ``relstring`` are left as they are, as is
    the summary of ``num_rel`` under ``-c`` (a count over the qrels).
    """
    out = []
    for name, kind, values in results:
        if kind in ("summary", "string"):
            out.append((name, kind, values))
            continue
        per_query = values[0] if kind == "int_total" else values
        v = np.asarray(per_query, dtype=np.float64)
        if kind == "gm":
            v = np.log(np.maximum(v, gm_floor))
        z = zscores.convert(qids, name, v)
        out.append((name, kind, (z, values[1]) if kind == "int_total" else z))
    return out
