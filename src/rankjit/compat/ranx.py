"""ranx's API on rankjit's engine: ``from rankjit.compat.ranx import Qrels, Run, evaluate, compare``.

The same names and signatures as ranx 0.3 (``Qrels``, ``Run`` with ``from_dict``,
``from_file``, ``from_df``, ``from_parquet``, ``to_dict``, ``to_dataframe``, ``save``,
``add``, ``make_comparable``, ...; ``evaluate(qrels, run, metrics, return_mean=True,
return_std=False, threads=0, save_results_in_run=True, make_comparable=False)``;
``compare(...)`` returning a :class:`Report` with ranx's table, LaTeX, dict, DataFrame and
JSON outputs), ranx's metric names and, per query, ranx's numbers.

Metrics, as ranx names them (``@k`` a cutoff, 0 or none: the whole ranking; ``-l<level>``
the lowest relevant grade, 1 by default; R = the query's judged documents of grade >=
level, retrieved or not):

    ==================  ==========================================================================
    hits@k              the NUMBER of relevant documents in the top k (not a rate: rankjit's
                        Success@k / ranx's hit_rate@k is 1 when there is one)
    hit_rate@k          1 when a relevant document is in the top k
    precision@k         relevant documents in the top k, over k (over the ranking's length without k)
    recall@k            relevant documents in the top k, over R
    f1@k                2 P R / (P + R) of the two above (0 when both are 0)
    r-precision         precision at rank R (a cutoff is ignored, as in ranx)
    mrr@k               reciprocal rank of the first relevant document in the top k
    map@k               average precision of the top k, divided by R
    dcg@k               sum_r g(y_r) / log2(r + 1), g(y) = y for y >= level, else 0
    dcg_burges@k        the same with g(y) = 2^y - 1
    ndcg@k              dcg@k over the dcg@k of the ideal ranking of the judged documents
    ndcg_burges@k       the same with 2^y - 1
    bpref               (1/R) sum_relevant (1 - min(n_d, R) / min(N, R)): n_d judged non-relevant
                        documents above, N the query's judged non-relevant documents (grades below the
                        level, negative ones included); documents the qrels lack are skipped
    rbp.95              (1 - p) sum_r g(y_r) p^(r-1), p = 0.95, g(y) = y for y >= level
                        (grades as they are: no scaling to [0, 1]); rbp@95 says the same
    ==================  ==========================================================================

A query without relevant documents scores 0 on every metric, as in ranx.  Every retrieved
document is looked up in its query's judgments (one dict lookup: exact, no hashing of
ids into floats as ranx does), then rankjit's engine ranks each query once for all the
metrics of a relevance level.  What differs from ranx (``docs/migrating.md``):

* **Ties.** Documents of equal score keep the run's order (the dict's insertion order,
  the file's line order).  So does ranx's ``Run`` in rows of at most 15 documents; in
  longer rows its Numba quicksort leaves equal scores in an order of its own, and on
  plain dicts ``ranx.evaluate`` reverses them.  Where a metric depends on the order of
  tied documents the two can differ; everywhere else they agree to 1e-9 per query.
* **bpref of a query without relevant documents** is 0.  In ranx it raises a
  ZeroDivisionError inside a Numba parallel loop, which swallows it and leaves 0 for that
  query *and for the queries after it in the same thread's share* (NaN without the JIT).
  Elsewhere rankjit's bpref is ranx's, NaN included: a query with a relevant document
  retrieved and no judged non-relevant document is 0/0 in ranx (trec_eval gives
  ``rel_ret / R`` there).
* **Queries are matched by id.** With plain dicts, ranx pairs the i-th query of the qrels
  with the i-th query of the run, whatever their ids; here per-query results follow the
  qrels' order (the dict's order, or sorted ids for :class:`Qrels`) and are matched by id.
* **Errors.** Bad input raises ``ValueError`` / ``TypeError`` with one line naming what is
  wrong (ranx: ``AssertionError``, a Numba error, or numbers): judgments that are not
  integers (ranx truncates 1.5 to 1), NaN scores, a document twice in a file or DataFrame
  (ranx keeps the last), unknown metrics or malformed names (``ndcg@x``, ``ndcg-l2.5``),
  relevance levels below 0.
* **Files and DataFrames.** ``from_file`` reads TREC files with rankjit's compiled reader
  (blank lines and ``#`` comment lines skipped, fields after the 6th ignored, NaN scores
  refused); ``from_df`` takes pandas' ``str`` columns too (pandas 3's default, which
  ranx refuses), and integer ids as their decimal text.
* **compare.** The tests come from :mod:`rankjit.stats`: ``"student"`` (ranx's default)
  is :func:`rankjit.stats.paired_ttest` (scipy's ``ttest_rel`` numbers, but p = 1 where
  every per-query difference is 0: scipy says NaN); ``"fisher"`` is
  :func:`rankjit.stats.randomization_test` (the same test, other random draws: p-values
  differ within Monte-Carlo error, and repeat exactly for a ``random_seed`` on any number
  of threads, which ranx's do not); ``"bootstrap"`` is rankjit's paired bootstrap test;
  ``"tukey"`` calls scipy's ``tukey_hsd`` as ranx does.  A pair with a NaN score or fewer
  than 2 queries gets p = NaN (not significant).
* Fusion and normalisation are ranx's own: :func:`fuse`, :func:`optimize_fusion` and
  :func:`normalize` hand rankjit's runs (and qrels) to ranx's functions and return
  rankjit's :class:`Run`, so a script importing them from here runs unchanged; they need
  ranx installed (an ``ImportError`` says so) and take ranx's time.  So does
  ``to_typed_list``, the Numba typed list ranx's internals accept.
* Not provided: ranx's plotting and ``Run.from_ranxhub`` (it downloads).  ``qrels.qrels``
  and ``run.run`` are plain dicts (copies: change a :class:`Qrels` through its methods).

Examples
--------
>>> from rankjit.compat.ranx import Qrels, Run, evaluate
>>> qrels = Qrels({"q_1": {"d_12": 5, "d_25": 3}, "q_2": {"d_11": 6, "d_22": 1}})
>>> run = Run({"q_1": {"d_12": 0.9, "d_23": 0.8, "d_25": 0.7}, "q_2": {"d_12": 0.9, "d_11": 0.8}}, name="bm25")
>>> scores = evaluate(qrels, run, ["map@100", "mrr", "ndcg@10", "hits@2"])
>>> {m: round(float(v), 4) for m, v in scores.items()}
{'map@100': 0.5417, 'mrr': 0.75, 'ndcg@10': 0.757, 'hits@2': 1.0}
>>> {q: round(float(v), 4) for q, v in run.scores["ndcg@10"].items()}
{'q_1': 0.943, 'q_2': 0.5709}
"""
from __future__ import annotations

import contextlib
import gzip
import json
import math
import numbers
import os
import re
from array import array
from collections import defaultdict
from collections.abc import Mapping, MutableMapping
from itertools import chain, compress, repeat

import numpy as np

from rankjit.io._dicts import check_document_ids, index_not_str

__all__ = ["FrozensetDict", "Qrels", "Report", "Run", "compare", "evaluate", "fuse", "normalize", "optimize_fusion"]

#: ranx's metric names (its metric_switch)
METRICS = ("hits", "hit_rate", "precision", "recall", "f1", "r-precision", "mrr", "map", "dcg", "dcg_burges",
           "ndcg", "ndcg_burges", "bpref", "rbp")

#: the labels of ranx's Report table
_LABELS = {
    "hits": "Hits", "hit_rate": "Hit Rate", "precision": "P", "recall": "Recall", "f1": "F1",
    "r-precision": "R-Prec", "mrr": "MRR", "map": "MAP", "dcg": "DCG", "dcg_burges": "DCG Burges",
    "ndcg": "NDCG", "ndcg_burges": "NDCG Burges", "bpref": "BPref", **{f"rbp.{i}": f"RBP.{i}" for i in range(1, 100)},
}
_TEST_LABELS = {"fisher": "Fisher's randomization test", "student": "paired Student's t-test",
                "tukey": "Tukey's HSD test", "bootstrap": "paired bootstrap test"}
_CHARS = "abcdefghijklmnopqrstuvwxyz"
_SUPER_CHARS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ"

#: file kinds by extension, as ranx infers them
_QRELS_KINDS = ("json", "trec", "gz", "parquet")
_RUN_KINDS = ("json", "trec", "lz4", "gz", "parquet")


# ---------------------------------------------------------------- reading dicts, files and DataFrames
#: the label of a retrieved document the qrels do not hold (judgments are checked to lie above it)
_UNJUDGED = -2**63


def _check_query_ids(keys, what):
    i = index_not_str(keys)
    if i >= 0:
        bad = keys[i]
        raise TypeError(f"{what}: query id {bad!r} is a {type(bad).__name__}, not a str")


def _copy_dicts(mapping, what, kind):
    """``(copy, scores)``: a checked copy ``{query id: {document id: value}}`` of a mapping (``kind``: "qrels" or
    "run") and, for a run, its scores end to end (float64; None for qrels).

    Query ids and document ids must be ``str`` (ids of other types would match nothing);
    judgments are integers (integral floats, and text that ``int()`` reads, are made ints), scores numbers (anything
    ``float()`` reads, as ranx; kept as floats), not NaN.
    """
    value = "relevance" if kind == "qrels" else "score"
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{what} must be a dict {{query id: {{document id: {value}}}}}, got {type(mapping).__name__}")
    keys = list(mapping)
    _check_query_ids(keys, what)
    dicts = list(mapping.values())
    if not set(map(type, dicts)) <= {dict}:
        for k, d in zip(keys, dicts):
            if not isinstance(d, Mapping):
                raise TypeError(f"{what}[{k!r}] is a {type(d).__name__}, not a dict {{document id: {value}}}")
    dicts = [dict(d) for d in dicts]  # our own copy, as ranx keeps its own
    lens = np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts))
    total = int(lens.sum())
    # one compiled pass reads the values when every id is exactly a str and every value exactly an int (qrels) or a
    # float (run); else every id is checked here (an id of another type would match nothing) and the values read
    # the Python way, which names a bad one
    values = _compiled_values(dicts, lens, kind) if total else np.zeros(0, np.int64 if kind == "qrels" else np.float64)
    read = values is not None
    if not read:
        check_document_ids(keys, dicts, what)
    flat = chain.from_iterable(map(dict.values, dicts))
    if kind == "qrels":
        try:
            grades = values if read else np.frombuffer(array("q", flat), dtype=np.int64)
        except (TypeError, OverflowError):
            for k, d in zip(keys, dicts):  # make integral floats ints, name anything else
                for doc, v in d.items():
                    d[doc] = _judgment(v, lambda: f"{what}[{k!r}][{doc!r}]")
        else:
            if grades.shape[0] and grades.min() == _UNJUDGED:
                q, doc = _locate(keys, dicts, int(np.argmin(grades)))
                _judgment(_UNJUDGED, lambda: f"{what}[{q!r}][{doc!r}]")
        return dict(zip(keys, dicts)), None
    scores = values
    if not read:
        try:
            scores = np.fromiter(flat, dtype=np.float64, count=total)
        except (TypeError, ValueError, OverflowError):
            for k, d in zip(keys, dicts):
                for doc, v in d.items():
                    try:
                        float(v)
                    except (TypeError, ValueError, OverflowError):
                        raise TypeError(f"{what}[{k!r}][{doc!r}] = {v!r} is a {type(v).__name__}; a score must be "
                                        "a number") from None
            raise  # pragma: no cover
    if total and np.isnan(scores.min()):
        q, doc = _locate(keys, dicts, int(np.flatnonzero(np.isnan(scores))[0]))
        if dicts[keys.index(q)][doc] is None:  # (NumPy reads None as NaN)
            raise TypeError(f"{what}[{q!r}][{doc!r}] = None is a NoneType; a score must be a number")
        raise ValueError(f"{what}[{q!r}][{doc!r}] is NaN: a score must be a number (ranx puts NaN anywhere "
                         "in the ranking)")
    if not read and not set(map(type, chain.from_iterable(map(dict.values, dicts)))) <= {float, int}:
        # (scores as ranx keeps them: floats; a str that spells a number, a NumPy float, ... read as float())
        dicts = [dict(zip(d, map(float, d.values()))) for d in dicts]
    return dict(zip(keys, dicts)), scores


def _compiled_values(dicts, lens, kind):
    """The values of ``dicts`` (ints for "qrels", floats for a run) read by one compiled pass, or None where it
    cannot read them: an id not exactly a str, a value not exactly an int (a float), a NaN score, no JIT."""
    from rankjit.io._dicts import int64_values_and_keys, scores_and_lookups

    if kind == "qrels":
        values, addresses = int64_values_and_keys(dicts, lens)
        return None if addresses is None else values
    offsets = np.zeros(len(dicts) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    read = scores_and_lookups(dicts, offsets, offsets[:0], np.zeros_like(offsets), positions=False)
    return None if read is None else read[0]


def _locate(keys, dicts, i):
    """The query id and document id of the i-th value of the dicts, end to end."""
    ends = np.cumsum([len(d) for d in dicts])
    g = int(np.searchsorted(ends, i, side="right"))
    return keys[g], list(dicts[g])[i - (int(ends[g - 1]) if g else 0)]


def _judgment(v, where):
    """An int judgment of ``v`` (ints, floats of integral value, and text as ``int()`` reads it, as ranx reads it:
    ``"2"``, ``" 2"``, ``"+1"``), or a one-line error."""
    if isinstance(v, (str, bytes)):
        try:
            v = int(v)
        except ValueError:
            raise ValueError(f"{where()} = {v!r}: a relevance judgment must be an integer (text is read as int() "
                             "reads it, as ranx does)") from None
    elif isinstance(v, numbers.Integral):
        v = int(v)
    elif isinstance(v, numbers.Real) and math.isfinite(float(v)) and float(v).is_integer():
        v = int(float(v))
    else:
        why = "ranx would truncate it" if isinstance(v, numbers.Real) else "not a number"
        raise TypeError(f"{where()} = {v!r}: a relevance judgment must be an integer ({why})")
    if not _UNJUDGED < v < 2**63:
        raise ValueError(f"{where()} = {v}: a relevance judgment must lie in [-2**63 + 1, 2**63 - 1]")
    return v


def _decode_column(col):
    """The strings of a rankjit.io StringColumn as a list of ``str`` (bytes that are not UTF-8: surrogate escapes)."""
    try:
        import pyarrow as pa

        return col.to_arrow(pa.large_string()).to_pylist()  # (Arrow's C++ decoding: the fastest way)
    except (ImportError, UnicodeDecodeError, ValueError):  # pragma: no cover - pyarrow comes with the io extra
        pass
    raw = col.data.tobytes()
    text = raw.decode("utf-8", "surrogateescape")
    off = col.offsets.tolist()
    if len(text) == len(raw):  # ASCII: byte offsets are character offsets
        return list(map(text.__getitem__, map(slice, off[:-1], off[1:])))
    return [raw[a:b].decode("utf-8", "surrogateescape") for a, b in zip(off[:-1], off[1:])]


def _group_rows(qids, codes, docs, values, source, kind):
    """Rows (query code, document id, value) grouped by query: ``(qids, lens, docs, values)``.

    The rows of each query keep their order: when each query's rows stand together they
    stay as they are (the queries in the order of their blocks), else a stable sort by
    query code groups them.
    A document given twice for a query is an error (ranx would keep the last one): the
    documents' Python hashes (cached in the strings, for the lookups to come) are compared
    within each query by a compiled pass, and equal ones checked as strings.
    """
    from rankjit._kernels.frontends import _queries_with_equal_hashes

    codes = np.asarray(codes, dtype=np.int64)
    lens = np.bincount(codes, minlength=len(qids)) if codes.shape[0] else np.zeros(len(qids), dtype=np.int64)
    starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1  # where a block of rows of one query begins
    if codes.shape[0] and starts.shape[0] + 1 == len(qids):  # one block per query: keep the rows, order the queries
        block_codes = codes[np.concatenate((np.zeros(1, dtype=np.int64), starts))]
        qids = [qids[c] for c in block_codes.tolist()]
        lens = lens[block_codes]
    elif codes.shape[0]:  # a query's rows in several places: group them (stable)
        order = np.argsort(codes, kind="stable")
        docs = list(map(docs.__getitem__, order.tolist()))
        values = values[order]
    bounds = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(lens, out=bounds[1:])
    hashes = np.fromiter(map(hash, docs), dtype=np.int64, count=len(docs))
    size = 2
    while size < 2 * (int(lens.max()) if lens.shape[0] else 0):
        size <<= 1
    tied = _queries_with_equal_hashes(bounds, hashes, np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64))
    for g in np.flatnonzero(tied).tolist():
        mine, seen = docs[bounds[g]:bounds[g + 1]], set()
        dup = next((x for x in mine if x in seen or seen.add(x)), None)
        if dup is not None:
            raise ValueError(f"{source}: document {dup!r} is {'judged' if kind == 'qrels' else 'retrieved'} twice "
                             f"for query {qids[g]!r} (ranx would keep the last line)")
    return list(qids), lens, docs, values


def _rows_to_dicts(qids, lens, docs, values):
    """``{query id: {document id: value}}`` of rows grouped by query."""
    b = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(lens, out=b[1:])
    b = b.tolist()
    values = values.tolist()
    return {q: dict(zip(docs[lo:hi], values[lo:hi])) for q, lo, hi in zip(qids, b[:-1], b[1:])}


def _query_codes(qid_col):
    """The distinct query ids of a StringColumn (sorted) and each row's index among them."""
    from rankjit.io._frontend import query_codes

    uq, codes = query_codes(qid_col)
    return [q.decode("utf-8", "surrogateescape") if isinstance(q, bytes) else q for q in uq], codes


def _file_kind(path, kind, kinds):
    if kind is None:
        kind = os.path.splitext(os.fspath(path))[1][1:]
        kind = {"txt": "trec", "parq": "parquet"}.get(kind, kind)
    if kind not in kinds:
        raise ValueError(f"{os.fspath(path)!r}: unknown file kind {kind!r}; pass kind= one of {', '.join(kinds)} "
                         "(ranx infers it from the extension: .json, .trec, .txt, .gz"
                         + (", .lz4" if "lz4" in kinds else "") + ", .parq, .parquet)")
    return kind


def _read_json(path):
    try:
        import orjson
    except ImportError:  # pragma: no cover - ranx's dependency, not rankjit's
        with open(path, "rb") as f:
            return json.loads(f.read())
    with open(path, "rb") as f:
        return orjson.loads(f.read())


def _write_json(obj, path):
    try:
        import orjson
    except ImportError:  # pragma: no cover
        with open(path, "w") as f:
            json.dump(obj, f, indent=2)
        return
    with open(path, "wb") as f:
        f.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2))


def _first_run_tag(path):
    """The run name of the first line of a TREC run file (ranx names a run after it)."""
    with open(path, "rb") as f:
        opener = gzip.open if f.read(2) == b"\x1f\x8b" else open
    with opener(path, "rt", errors="replace") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and not fields[0].startswith("#"):
                return fields[5]
    return None  # pragma: no cover - (a file without a result line)


def _frame_rows(df, q_id_col, doc_id_col, score_col, kind):
    """A pandas DataFrame's three columns (strings, strings, numbers) as rows grouped by query (:func:`_group_rows`)."""
    import pandas as pd

    for col in (q_id_col, doc_id_col, score_col):
        if col not in df.columns:
            raise KeyError(f"the DataFrame has no column {col!r} (columns: {', '.join(map(str, df.columns))})")
    def strings(values, col, what, rows):
        """Check that ``values`` (the distinct ids, or every one) are str; ``rows(v)``: the first row holding v."""
        i = index_not_str(values)
        if i >= 0:
            bad = values[i]
            if bad is None or (isinstance(bad, float) and math.isnan(bad)) or bad is pd.NA:
                raise ValueError(f"column {col!r} holds a missing {what} (row {rows(bad)})")
            raise TypeError(f"column {col!r} must hold {what}s as strings, found {bad!r} ({type(bad).__name__})")

    def as_text(series):
        return series.astype(str) if pd.api.types.is_integer_dtype(series.dtype) else series  # integer ids: text

    # query ids: factorised (sorted) by pandas, then only the distinct ones checked
    q_series = as_text(df[q_id_col])
    codes, qids = pd.factorize(q_series, sort=True, use_na_sentinel=True)
    if codes.shape[0] and codes.min() < 0:
        raise ValueError(f"column {q_id_col!r} holds a missing query id (row {int(np.argmin(codes))})")
    qids = list(qids)
    strings(qids, q_id_col, "query id", lambda v: int(np.flatnonzero(q_series.isna())[0]))
    docs = as_text(df[doc_id_col]).tolist()
    strings(docs, doc_id_col, "document id", lambda v: int(np.flatnonzero(df[doc_id_col].isna())[0]))
    values = df[score_col]
    if values.isna().any():
        raise ValueError(f"column {score_col!r} holds a missing value (row {int(np.flatnonzero(values.isna())[0])})")
    if kind == "qrels":
        if not (pd.api.types.is_integer_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype)):
            raise TypeError(f"column {score_col!r} must hold integer relevance judgments, got dtype {values.dtype}")
        if values.dtype.kind == "u" and values.shape[0] and values.max() > np.iinfo(np.int64).max:
            raise ValueError(f"column {score_col!r}: a relevance judgment must lie in [-2**63 + 1, 2**63 - 1], got "
                             f"{values.max()}")
        values = values.to_numpy(dtype=np.int64)
        if values.shape[0] and values.min() == _UNJUDGED:
            raise ValueError(f"column {score_col!r}: a relevance judgment must lie in [-2**63 + 1, 2**63 - 1]")
    else:
        if not pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
            raise TypeError(f"column {score_col!r} must hold numeric scores, got dtype {values.dtype}")
        values = values.to_numpy(dtype=np.float64)  # (NaN: a missing value, refused above)
    return _group_rows(qids, codes, docs, values, "the DataFrame", kind)


# ---------------------------------------------------------------- Qrels and Run
def _ranx_order(d, cast):
    """A query's ``{document id: cast(value)}`` by value, descending (ties in their order): ranx's order."""
    return {k: cast(v) for k, v in sorted(d.items(), key=lambda kv: -kv[1])}


class _Pairs:
    """What Qrels and Run share: ``{query id: {document id: value}}`` (our copy) and derived arrays."""

    _kind = ""
    _cast = float

    def _set(self, dicts, scores=None):
        """Hold ``{query id: {document id: value}}`` (and the values end to end, when known)."""
        self._store = dicts
        self._flat = None
        self._cache = {} if scores is None else {"scores": scores}

    def _set_rows(self, qids, lens, docs, values):
        """Hold rows grouped by query (read from a file or a DataFrame); the dicts are made when first needed."""
        self._store = None
        self._flat = (qids, lens, docs, values)
        self._cache = {"scores": values}

    @property
    def _dicts(self):
        """``{query id: {document id: value}}`` (made from the rows on first use)."""
        if self._store is None:
            self._store = _rows_to_dicts(*self._flat)
            self._flat = None  # (the values end to end stay cached: the same order)
        return self._store

    def _changed(self):
        self._cache = {}

    def _queries(self):
        """The query ids, in the order held."""
        return self._flat[0] if self._store is None else list(self._store)

    def _query_set(self):
        """The query ids as a dict's keys view (compares as a set)."""
        if self._store is not None:
            return self._store.keys()
        if "set" not in self._cache:
            self._cache["set"] = dict.fromkeys(self._flat[0]).keys()
        return self._cache["set"]

    def _sorted_ids(self):
        if "ids" not in self._cache:
            self._cache["ids"] = sorted(self._queries())
        return self._cache["ids"]

    def keys(self):
        """The query ids (sorted), as a dict's keys view (compares as a set)."""
        return dict.fromkeys(self._sorted_ids()).keys()

    def get_query_ids(self):
        """The query ids, sorted."""
        return list(self._sorted_ids())

    def get_doc_ids_and_scores(self):
        """``[{document id: value}, ...]``, one dict per query, in :meth:`get_query_ids`'s order."""
        return [_ranx_order(self._dicts[q], self._cast) for q in self._sorted_ids()]

    def to_dict(self):
        """``{query id: {document id: value}}`` (a ``defaultdict(dict)``, as in ranx): queries sorted,
        documents by value, descending."""
        out = defaultdict(dict)
        for q in self._sorted_ids():
            out[q] = _ranx_order(self._dicts[q], self._cast)
        return out

    def to_dataframe(self):
        """A pandas DataFrame with columns ``q_id``, ``doc_id`` and ``score``, in :meth:`to_dict`'s order."""
        import pandas as pd

        data = {"q_id": [], "doc_id": [], "score": []}
        for q, docs in self.to_dict().items():
            data["q_id"] += [q] * len(docs)
            data["doc_id"] += list(docs)
            data["score"] += list(docs.values())
        return pd.DataFrame.from_dict(data)

    def sort(self):
        """Nothing to do: kept for ranx's API (queries and documents come out sorted)."""
        self.sorted = True

    @property
    def size(self):
        """The number of queries."""
        return len(self._queries())

    def __len__(self):
        return len(self._queries())

    def __getitem__(self, q_id):
        return _ranx_order(self._dicts[q_id], self._cast)

    def __contains__(self, q_id):
        return q_id in self._query_set()

    def __iter__(self):
        return iter(self._sorted_ids())

    def __repr__(self):
        return repr(dict(self.to_dict()))

    def __str__(self):
        return str(dict(self.to_dict()))

    def _add_score(self, q_id, doc_id, value):
        if not isinstance(q_id, str) or not isinstance(doc_id, str):
            raise TypeError(f"query and document ids must be str, got {q_id!r} and {doc_id!r}")
        self._dicts.setdefault(q_id, {})[doc_id] = value
        self._changed()

    def to_typed_list(self):
        """ranx's ``to_typed_list`` (a Numba typed list of (hashed doc id, value) arrays per query), by ranx itself."""
        return _to_ranx(self).to_typed_list()

    def add_multi(self, q_ids, doc_ids, scores):
        """Add (or replace) several queries: ``q_ids[i]`` gets ``dict(zip(doc_ids[i], scores[i]))``."""
        q_ids, doc_ids, scores = list(q_ids), list(doc_ids), list(scores)
        if not len(q_ids) == len(doc_ids) == len(scores):
            raise ValueError(f"add_multi: {len(q_ids)} query ids, {len(doc_ids)} lists of document ids and "
                             f"{len(scores)} lists of scores; give one list of each per query")
        new = {}
        for q, docs, values in zip(q_ids, doc_ids, scores):
            docs, values = list(docs), list(values)
            if len(docs) != len(values):
                raise ValueError(f"add_multi: query {q!r} has {len(docs)} document ids and {len(values)} scores")
            new[q] = dict(zip(docs, values))
        new, _ = _copy_dicts(new, "add_multi", self._kind)  # checked before anything changes
        self._dicts.update(new)
        self._changed()

    def add(self, q_id, doc_ids, scores):
        """Add (or replace) a query with its documents and their values."""
        self.add_multi([q_id], [doc_ids], [scores])


class Qrels(_Pairs):
    """Relevance judgments: ``Qrels({query id: {document id: relevance}}, name=None)``, as ranx's.

    Judgments are integers (a grade; below the relevance level, negative ones included,
    a document is judged non-relevant).  The dict is copied and checked once, here; a
    document the qrels do not hold is unjudged.

    Examples
    --------
    >>> qrels = Qrels({"q_1": {"d_1": 1, "d_2": 2}, "q_2": {"d_3": 2, "d_2": 1, "d_5": 3}}, name="MSMARCO")
    >>> qrels.get_query_ids(), qrels["q_2"], len(qrels)
    (['q_1', 'q_2'], {'d_5': 3, 'd_3': 2, 'd_2': 1}, 2)
    """

    _kind = "qrels"
    _cast = int

    def __init__(self, qrels=None, name=None):
        self.name = name
        self.sorted = True
        self._set({} if qrels is None else _copy_dicts(qrels, "qrels", "qrels")[0])

    @property
    def qrels(self):
        """The judgments as a dict of dicts (a copy), in ranx's order."""
        return dict(self.to_dict())

    def add_score(self, q_id, doc_id, score):
        """Add a judgment (or change it)."""
        self._add_score(q_id, doc_id, _judgment(score, lambda: f"qrels[{q_id!r}][{doc_id!r}]"))

    def set_relevance_level(self, rel_lvl=1):
        """Subtract ``rel_lvl - 1`` from every judgment (ranx's way of moving the relevance level)."""
        if isinstance(rel_lvl, bool) or not isinstance(rel_lvl, numbers.Integral):
            raise TypeError(f"rel_lvl must be an int, got {rel_lvl!r}")
        shift = int(rel_lvl) - 1
        for d in self._dicts.values():
            for doc, v in d.items():
                d[doc] = _judgment(v - shift, lambda: f"qrels: {v} - {shift}")
        self._changed()

    def save(self, path="qrels.json", kind=None):
        """Write the qrels as JSON, TREC qrels (``q_id 0 doc_id rel`` lines) or Parquet (kind from the extension)."""
        kind = _file_kind(path, kind, _QRELS_KINDS)
        if kind == "json":
            _write_json(dict(self.to_dict()), path)
        elif kind == "parquet":
            self.to_dataframe().to_parquet(path, index=False)
        else:
            lines = (f"{q} 0 {d} {v}" for q, docs in self.to_dict().items() for d, v in docs.items())
            with open(path, "w") as f:
                f.write("\n".join(lines))

    @staticmethod
    def from_dict(d):
        """Qrels of a dict ``{query id: {document id: relevance}}``."""
        return Qrels(d)

    @staticmethod
    def from_file(path, kind=None):
        """Qrels of a file: TREC qrels (``.trec``, ``.txt``, ``.gz``), JSON (``.json``) or Parquet; ``kind`` overrides.

        TREC files are read by rankjit's compiled reader (:func:`rankjit.io.read_trec_qrels`:
        blank and ``#`` lines skipped, fields after the 4th ignored).
        """
        kind = _file_kind(path, kind, _QRELS_KINDS)
        if kind == "json":
            return Qrels(_read_json(path))
        if kind == "parquet":
            return Qrels.from_parquet(path)
        from rankjit.io import read_trec_qrels

        trec = read_trec_qrels(os.fspath(path))
        if trec.rel.shape[0] and trec.rel.min() == _UNJUDGED:
            raise ValueError(f"{trec.source}: a relevance judgment must lie in [-2**63 + 1, 2**63 - 1]")
        qids, codes = _query_codes(trec.qid)
        qrels = Qrels()
        qrels._set(_rows_to_dicts(*_group_rows(qids, codes, _decode_column(trec.docno), trec.rel, trec.source,
                                               "qrels")))
        return qrels

    @staticmethod
    def from_df(df, q_id_col="q_id", doc_id_col="doc_id", score_col="score"):
        """Qrels of a pandas DataFrame: query ids, document ids (strings) and integer judgments."""
        qrels = Qrels()
        qrels._set(_rows_to_dicts(*_frame_rows(df, q_id_col, doc_id_col, score_col, "qrels")))
        return qrels

    @staticmethod
    def from_parquet(path, q_id_col="q_id", doc_id_col="doc_id", score_col="score", pd_kwargs=None):
        """Qrels of a Parquet file (read with pandas; ``pd_kwargs`` go to ``pandas.read_parquet``)."""
        import pandas as pd

        return Qrels.from_df(pd.read_parquet(path, **(pd_kwargs or {})), q_id_col, doc_id_col, score_col)

    @staticmethod
    def from_ir_datasets(dataset_id):
        """Qrels of an ``ir_datasets`` data set (downloaded by ir_datasets), named after it."""
        import ir_datasets

        return Qrels(ir_datasets.load(dataset_id).qrels_dict(), name=dataset_id)


class Run(_Pairs):
    """A run: ``Run({query id: {document id: score}}, name=None)``, as ranx's.

    After :func:`evaluate`, ``run.mean_scores[metric]`` holds the mean and
    ``run.scores[metric][query id]`` the per-query values (``run.std_scores`` with
    ``return_std=True``).

    Examples
    --------
    >>> run = Run({"q_1": {"d_1": 1.5, "d_2": 2.6}, "q_2": {"d_3": 2.8, "d_2": 1.2, "d_5": 3.1}}, name="bm25")
    >>> run["q_2"], run.name
    ({'d_5': 3.1, 'd_3': 2.8, 'd_2': 1.2}, 'bm25')
    """

    _kind = "run"

    def __init__(self, run=None, name=None):
        self.name = name
        self.sorted = True
        self.metadata = {}
        self.scores = defaultdict(dict)
        self.mean_scores = {}
        self.std_scores = {}
        self._set({}) if run is None else self._set(*_copy_dicts(run, "run", "run"))

    @property
    def run(self):
        """The scores as a dict of dicts (a copy), in ranx's order."""
        return dict(self.to_dict())

    def add_score(self, q_id, doc_id, score):
        """Add a document's score (or change it)."""
        try:
            value = float(score)
        except (TypeError, ValueError):
            raise TypeError(f"run[{q_id!r}][{doc_id!r}] = {score!r}: a score must be a number") from None
        if math.isnan(value):
            raise ValueError(f"run[{q_id!r}][{doc_id!r}] is NaN: a score must be a number")
        self._add_score(q_id, doc_id, value)

    def make_comparable(self, qrels):
        """Keep the queries of ``qrels``: add those missing (no document), drop the others; returns self."""
        if not isinstance(qrels, Qrels):
            raise TypeError(f"make_comparable takes a Qrels, got {type(qrels).__name__}")
        keep, mine = qrels._query_set(), self._query_set()
        if keep == mine:
            return self
        if self._store is None:  # rows: drop those of other queries, add the missing queries empty
            qids, lens, docs, values = self._flat
            kept = np.fromiter((q in keep for q in qids), dtype=np.bool_, count=len(qids))
            rows = np.repeat(kept, lens)
            missing = [q for q in keep if q not in mine]
            self._set_rows([q for q, k in zip(qids, kept.tolist()) if k] + missing,
                           np.concatenate((lens[kept], np.zeros(len(missing), dtype=np.int64))),
                           list(compress(docs, rows.tolist())), values[rows])
        else:
            dicts = {q: d for q, d in self._store.items() if q in keep}
            dicts.update((q, {}) for q in keep if q not in dicts)
            self._set(dicts)
        return self

    def _scores(self):
        """The scores end to end (float64), in the order of the queries and documents held (cached)."""
        if self._store is None:
            return self._flat[3]
        if "scores" not in self._cache:
            d = self._dicts
            self._cache["scores"] = np.fromiter(chain.from_iterable(map(dict.values, d.values())), dtype=np.float64,
                                                count=sum(map(len, d.values())))
        return self._cache["scores"]

    def save(self, path="run.json", kind=None):
        """Write the run as JSON, TREC run lines, LZ4 (ranx's cbor) or Parquet (kind from the extension)."""
        kind = _file_kind(path, kind, _RUN_KINDS)
        if kind == "json":
            _write_json(dict(self.to_dict()), path)
        elif kind == "lz4":
            import cbor2
            import lz4.frame

            with lz4.frame.open(path, mode="wb") as f:
                f.write(lz4.frame.compress(cbor2.dumps(dict(self.to_dict())), compression_level=16))
        elif kind == "parquet":
            self.to_dataframe().to_parquet(path, index=False)
        else:
            lines = (f"{q} Q0 {d} {r} {v} {self.name}" for q, docs in self.to_dict().items()
                     for r, (d, v) in enumerate(docs.items(), 1))
            with open(path, "w") as f:
                f.write("\n".join(lines))

    @staticmethod
    def from_dict(d, name=None):
        """A run of a dict ``{query id: {document id: score}}``."""
        return Run(d, name=name)

    @staticmethod
    def from_file(path, kind=None, name=None):
        """A run of a file: TREC run (``.trec``, ``.txt``, ``.gz``), JSON, LZ4 (ranx's) or Parquet; ``kind`` overrides.

        TREC files are read by rankjit's compiled reader (:func:`rankjit.io.read_trec_run`:
        blank and ``#`` lines skipped, fields after the 6th ignored); without ``name`` the
        run is named after the tag of the file's first line, as in ranx.
        """
        kind = _file_kind(path, kind, _RUN_KINDS)
        if kind == "json":
            return Run(_read_json(path), name=name)
        if kind == "lz4":
            import cbor2
            import lz4.frame

            with lz4.frame.open(path, mode="r") as f:
                return Run(cbor2.loads(lz4.frame.decompress(f.read())), name=name)
        if kind == "parquet":
            return Run.from_parquet(path, name=name)
        from rankjit.io import read_trec_run

        trec = read_trec_run(os.fspath(path))  # (refuses NaN scores)
        qids, codes = _query_codes(trec.qid)
        run = Run(name=name if name is not None else _first_run_tag(path))
        run._set_rows(*_group_rows(qids, codes, _decode_column(trec.docno), trec.score, trec.source, "run"))
        return run

    @staticmethod
    def from_df(df, q_id_col="q_id", doc_id_col="doc_id", score_col="score", name=None):
        """A run of a pandas DataFrame: query ids, document ids (strings) and numeric scores."""
        run = Run(name=name)
        run._set_rows(*_frame_rows(df, q_id_col, doc_id_col, score_col, "run"))
        return run

    @staticmethod
    def from_parquet(path, q_id_col="q_id", doc_id_col="doc_id", score_col="score", pd_kwargs=None, name=None):
        """A run of a Parquet file (read with pandas; ``pd_kwargs`` go to ``pandas.read_parquet``)."""
        import pandas as pd

        return Run.from_df(pd.read_parquet(path, **(pd_kwargs or {})), q_id_col, doc_id_col, score_col, name)

    @staticmethod
    def from_ranxhub(id):
        """Not provided: it downloads.  Load it with ranx, then ``Run(ranx_run.to_dict(), name=ranx_run.name)``."""
        raise NotImplementedError(f"Run.from_ranxhub({id!r}) downloads from ranxhub: load it with ranx, then "
                                  "rankjit.compat.ranx.Run(ranx_run.to_dict(), name=ranx_run.name)")


# ---------------------------------------------------------------- metric names
class _Metric:
    """One parsed metric name: ranx's family, cutoff ``k`` (0: none) or persistence ``p``, relevance level."""

    __slots__ = ("name", "family", "k", "p", "level")

    def __init__(self, name, family, k, p, level):
        self.name, self.family, self.k, self.p, self.level = name, family, k, p, level


_DIGITS = re.compile(r"[0-9]+")


def _parse_metric(name):
    """ranx's reading of a metric name (``ndcg@10``, ``map@100-l2``, ``rbp.95``), checked."""
    if not isinstance(name, str):
        raise TypeError(f"a metric name must be a str, got {name!r}")
    head, level = name, 1
    if "-l" in name:
        head, sep, text = name.partition("-l")
        if "-l" in text or not re.fullmatch(r"[+-]?[0-9]+", text.strip()):
            raise ValueError(f"metric {name!r}: the relevance level after '-l' must be an integer, e.g. 'ndcg@10-l2'")
        level = int(text)
        if level < 0:
            raise ValueError(f"metric {name!r}: the relevance level must be >= 0, got {level}")
    if "rbp" in head:
        sep = "." if "." in head else "@" if "@" in head else None
        family, _, text = head.partition(sep) if sep else (head, "", "")
        if family != "rbp" or not sep:
            raise ValueError(f"metric {name!r}: RBP needs its persistence, e.g. 'rbp.95' (p = 0.95) or 'rbp@80'")
        if not _DIGITS.fullmatch(text):
            raise ValueError(f"metric {name!r}: RBP's persistence is the digits after 'rbp.', e.g. 'rbp.95' "
                             "(p = 0.95)")
        return _Metric(name, "rbp", 0, float(f"0.{text}"), level)
    family, sep, text = head.partition("@")
    if family not in METRICS or family == "rbp":
        raise ValueError(f"metric {name!r}: unknown metric {family!r}; ranx's metrics: {', '.join(METRICS)} "
                         "(e.g. 'ndcg@10', 'map@100-l2', 'rbp.95')")
    k = 0
    if sep:
        if not re.fullmatch(r"[+-]?[0-9]+", text.strip()):
            raise ValueError(f"metric {name!r}: the cutoff after '@' must be an integer, e.g. '{family}@10'")
        k = int(text)
        if k < 0:
            raise ValueError(f"metric {name!r}: the cutoff must be >= 0 (0: the whole ranking), got {k}")
    return _Metric(name, family, k, None, level)


def _metric_names(metrics, empty_ok=False):
    """The metric names of ``metrics`` (a name or a list of names) as a list; an empty list raises unless
    ``empty_ok`` (``evaluate``, where ranx returns ``{}``)."""
    if isinstance(metrics, str):
        metrics = [metrics]
    try:
        metrics = list(metrics)
    except TypeError:
        raise TypeError(f"metrics must be a metric name or a list of names, e.g. ['ndcg@10', 'map'], "
                        f"got {type(metrics).__name__}") from None
    if not metrics and not empty_ok:
        raise ValueError("metrics is empty: name at least one metric, e.g. ['ndcg@10', 'map']")
    return metrics


# ---------------------------------------------------------------- evaluation
def _engine_requests(metric):
    """The measures of rankjit's engine a metric reads: ``(family, k, gain, p)`` tuples (k None: no cutoff)."""
    k = metric.k or None
    hits = ("P", k, None, None) if k else ("NumRelRet", None, None, None)
    return {
        "hits": [hits], "f1": [hits], "hit_rate": [("Success", k, None, None)], "precision": [("P", k, None, None)],
        "recall": [("R", k, None, None)], "r-precision": [("Rprec", None, None, None)],
        "mrr": [("RR", k, None, None)], "map": [("AP", k, None, None)],
        "dcg": [("DCG", k, "linear", None)], "dcg_burges": [("DCG", k, "exp2", None)],
        "ndcg": [("nDCG", k, "linear", None)], "ndcg_burges": [("nDCG", k, "exp2", None)],
        "bpref": [("Bpref", None, None, None), ("NumRelRet", None, None, None)],
        "rbp": [("RBP", None, "linear", metric.p)],
    }[metric.family]


def _gain_table(grades, gain, metric_name):
    """Gain per label: label 0 (not relevant) gains 0, label c the gain of relevant grade ``grades[c - 1]``."""
    g = grades.astype(np.float64)
    if gain == "exp2":
        with np.errstate(over="ignore"):
            g = np.exp2(g) - 1.0  # Burges: 2^y - 1
        if g.shape[0] and not np.isfinite(g[-1]):
            raise ValueError(f"metric {metric_name!r}: 2**grade - 1 of grade {int(grades[-1])} overflows a float64 "
                             "(ranx would give NaN); use the linear gain ('ndcg', 'dcg')")
    return np.concatenate((np.zeros(1), g))


def _level_values(batch, metrics, level):
    """Per-query values of the metrics of one relevance level, over the batch's queries.

    Each document gets a label: 0 when it is not relevant (unjudged, or judged below
    ``level``), else 1 + the rank of its grade among the distinct relevant grades;
    ``counts`` holds each query's judged documents per label (label 0: the judged
    non-relevant ones, negative grades included), so that rankjit's R, ideal DCG and
    bpref's N are ranx's.
    """
    import rankjit
    from rankjit._grade_counts import GradeCounts
    from rankjit.io._frontend import make_measure

    raw, scores, offsets, j_grades, j_query, n_q = batch
    j_rel = np.flatnonzero(j_grades >= level)
    grades = np.unique(j_grades[j_rel])  # the relevant grades, ascending
    width = grades.shape[0] + 1
    j_label = np.zeros(j_grades.shape[0], dtype=np.int64)
    j_label[j_rel] = np.searchsorted(grades, j_grades[j_rel]) + 1
    # judged documents per query and label, sparse (memory O(judgments) whatever the number of grades); counted
    # from the judgments that labelled the rows, so not checked against them
    counts = GradeCounts.from_pairs(j_query, j_label, n_q, width)
    labels = np.zeros(raw.shape[0], dtype=np.uint8 if width <= 256 else np.int64)
    rel = np.flatnonzero(raw >= level)  # (unjudged: -2**63)
    labels[rel] = np.searchsorted(grades, raw[rel]) + 1
    tables = {}
    requests = {}
    for metric in metrics:
        for fam, k, gain, p in _engine_requests(metric):
            key = (fam, k, gain, p)
            if key in requests:
                continue
            if gain is None:
                params = {"rel": 1}
            else:
                if gain not in tables:
                    tables[gain] = _gain_table(grades, gain, metric.name)
                params = {"gain": tables[gain]}
            if fam == "RBP":
                params.update(p=p, scale="none")
            requests[key] = make_measure(f"{fam}|{k}|{gain}|{p}", fam, k, params)
    bpref = any(m.family == "bpref" for m in metrics)
    out = rankjit.evaluate(labels, scores, list(requests.values()), offsets=offsets, ties="stable",
                           ideal_counts=counts, per_query=True, judged=(raw != _UNJUDGED) if bpref else None)
    values = {key: np.asarray(out[m.text], dtype=np.float64) for key, m in requests.items()}
    n_rel = counts.at_least(1)
    n_ret = np.diff(offsets)
    result = {}
    for metric in metrics:
        k = metric.k
        first = values[_engine_requests(metric)[0]]
        if metric.family in ("hits", "f1"):
            hits = np.rint(first * k) if k else first  # P@k * k: the count in the top k
            if metric.family == "hits":
                result[metric.name] = hits
                continue
            kk = np.full(n_ret.shape[0], k, dtype=np.float64) if k else n_ret.astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                precision = hits / kk
                recall = hits / n_rel
                f1 = 2 * ((precision * recall) / (precision + recall))  # ranx: 2 P R / (P + R)
            result[metric.name] = np.where((n_rel == 0) | (kk == 0) | (precision + recall == 0), 0.0, f1)
        elif metric.family == "bpref":
            rel_ret = values[("NumRelRet", None, None, None)]
            # ranx divides by min(R, N) even when N = 0: 0/0 = NaN once a relevant document is retrieved
            result[metric.name] = np.where((counts.between(0, 1) == 0) & (rel_ret > 0), np.nan, first)  # N = 0
        else:
            result[metric.name] = first
    return result


def _per_query(qrels, run, metrics):
    """``{metric name: values}``, one value per query of the run (its order), the run's queries all in ``qrels``.

    Every retrieved document gets its judgment through one lookup in its query's qrels
    dict (``_UNJUDGED`` when absent: walking the run's dicts in order and looking up in
    the small qrels dicts is the cache-friendly direction); rankjit's engine then ranks
    each query by score, equal scores in the run's order.
    """
    if run._store is None:  # rows read from a file or a DataFrame
        qids, lens, docs, _ = run._flat
    else:
        qids = list(run._store)
        lens = np.fromiter(map(len, run._store.values()), dtype=np.int64, count=len(qids))
        docs = chain.from_iterable(run._store.values())
    q_dicts = list(map(qrels._dicts.__getitem__, qids))
    offsets = np.zeros(lens.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    # the judgment of every retrieved document: dict.get(qrels of its query, document id, unjudged)
    raw = np.fromiter(map(dict.get, chain.from_iterable(map(repeat, q_dicts, lens.tolist())), docs,
                          repeat(_UNJUDGED)), dtype=np.int64, count=int(offsets[-1]))
    j_lens = np.fromiter(map(len, q_dicts), dtype=np.int64, count=len(q_dicts))
    j_grades = np.fromiter(chain.from_iterable(map(dict.values, q_dicts)), dtype=np.int64, count=int(j_lens.sum()))
    j_query = np.repeat(np.arange(len(q_dicts), dtype=np.int64), j_lens)
    batch = (raw, run._scores(), offsets, j_grades, j_query, len(q_dicts))
    by_level = {}
    for m in metrics:
        by_level.setdefault(m.level, []).append(m)
    out = {}
    for level, group in by_level.items():
        out.update(_level_values(batch, group, level))
    return out


def _as_qrels(qrels):
    if isinstance(qrels, Qrels):
        return qrels, None
    if isinstance(qrels, Mapping):
        return Qrels(qrels), list(qrels)
    if type(qrels).__module__.startswith("ranx") and hasattr(qrels, "to_dict"):
        return Qrels(qrels.to_dict(), name=getattr(qrels, "name", None)), None
    raise TypeError(f"qrels must be a Qrels or a dict {{query id: {{document id: relevance}}}}, "
                    f"got {type(qrels).__name__}")


def _as_run(run):
    if isinstance(run, Run):
        return run
    if isinstance(run, Mapping):
        return Run(run)
    if type(run).__module__.startswith("ranx") and hasattr(run, "to_dict"):
        return Run(run.to_dict(), name=getattr(run, "name", None))
    raise TypeError(f"run must be a Run or a dict {{query id: {{document id: score}}}}, got {type(run).__name__}")


def _check_keys(qrels, run):
    q, r = qrels._query_set(), run._query_set()
    if q == r:
        return
    only_run = [x for x in r if x not in q]
    only_qrels = [x for x in q if x not in r]
    what = (f"{len(only_run)} run queries are not in the qrels (e.g. {only_run[0]!r})" if only_run else
            f"{len(only_qrels)} qrels queries are not in the run (e.g. {only_qrels[0]!r})")
    raise ValueError(f"Qrels and Run query ids do not match: {what}; pass make_comparable=True to add empty results "
                     "for queries missing from the run and remove those not appearing in qrels")


@contextlib.contextmanager
def _threads(threads):
    """Numba's thread count set to ``threads`` for the call (0: unchanged)."""
    from rankjit._validation import integer

    threads = integer(threads, "threads", "an int >= 0 (0: all available threads)")
    if threads < 0:
        raise ValueError(f"threads must be an int >= 0 (0: all available threads), got {threads!r}")
    import numba

    if threads == 0 or numba.config.DISABLE_JIT:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(min(int(threads), numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(before)


def evaluate(qrels, run, metrics, return_mean=True, return_std=False, threads=0, save_results_in_run=True,
             make_comparable=False):
    """Evaluate a run for ranx's metrics, as ``ranx.evaluate``.

    Parameters
    ----------
    qrels : Qrels or dict
        ``{query id: {document id: relevance}}``.
    run : Run or dict
        ``{query id: {document id: score}}``, with the qrels' queries (see ``make_comparable``).
    metrics : str or list of str
        ranx's names: ``hits``, ``hit_rate``, ``precision``, ``recall``, ``f1``,
        ``r-precision``, ``mrr``, ``map``, ``dcg``, ``dcg_burges``, ``ndcg``, ``ndcg_burges``,
        ``bpref``, ``rbp.<digits>``, with ``@k`` and ``-l<level>`` (module docstring).
        An empty list gives ``{}`` once the inputs are checked, as in ranx.
    return_mean : bool, default True
        Means over the queries (``np.mean``); else per-query arrays, in the qrels' order
        (sorted ids for a :class:`Qrels`, the dict's order for a dict).
    return_std : bool, default False
        With ``return_mean``, ``{"mean": ..., "std": ...}`` per metric (``np.std``).
    threads : int, default 0
        Numba threads for this call (0: all); results do not depend on it.
    save_results_in_run : bool, default True
        Store the means in ``run.mean_scores`` and the per-query values in
        ``run.scores[metric][query id]`` (when ``run`` is a :class:`Run`).
    make_comparable : bool, default False
        Give the run the qrels' queries first (``Run.make_comparable``: missing ones added
        empty, others dropped; a :class:`Run` is changed in place).

    Returns
    -------
    numpy.float64, dict or numpy.ndarray
        One metric: its mean (or array, or mean/std dict); several: a dict by metric name.

    Raises
    ------
    ValueError
        On a malformed or unknown metric name, queries that differ between qrels and run
        (without ``make_comparable``), qrels without queries, a document retrieved or
        judged twice, or an overflowing ``2**grade``.
    TypeError
        On inputs of the wrong type.
    """
    names = _metric_names(metrics, empty_ok=True)
    parsed = {}
    for name in names:
        if name not in parsed:
            parsed[name] = _parse_metric(name)
    qrels_obj, order = _as_qrels(qrels)
    run_obj = _as_run(run)
    if not len(qrels_obj):
        raise ValueError("the qrels hold no query: nothing to evaluate")
    if make_comparable:
        run_obj.make_comparable(qrels_obj)
    else:
        _check_keys(qrels_obj, run_obj)
    if not names:  # (ranx: the inputs checked, nothing computed)
        return {}
    with _threads(threads):
        values = _per_query(qrels_obj, run_obj, list(parsed.values()))
    queries = qrels_obj.get_query_ids() if order is None else order  # the output's order
    if queries != run_obj._queries():
        at = dict(zip(run_obj._queries(), range(len(queries))))
        perm = np.fromiter(map(at.__getitem__, queries), dtype=np.int64, count=len(queries))
        values = {m: v[perm] for m, v in values.items()}
    if isinstance(run, Run) and save_results_in_run:
        for m in names:
            v = values[m]
            run.mean_scores[m] = np.mean(v)
            if return_mean and return_std:
                run.std_scores[m] = np.std(v)
            run.scores[m].update(zip(queries, v))
    if return_mean:
        if return_std:
            out = {m: {"mean": np.mean(values[m]), "std": np.std(values[m])} for m in names}
        else:
            out = {m: np.mean(values[m]) for m in names}
    else:
        out = {m: values[m] for m in names}
    return out[names[-1]] if len(names) == 1 else out


# ---------------------------------------------------------------- compare and Report
class FrozensetDict(MutableMapping):
    """A dict keyed by unordered pairs: ``d["a", "b"]`` is ``d["b", "a"]`` (keys are frozensets), as ranx's."""

    def __init__(self, arg=None):
        self._map = {}
        if arg is not None:
            self.update(arg)

    def __getitem__(self, key):
        return self._map[frozenset(key)]

    def __setitem__(self, key, value):
        self._map[frozenset(key)] = value

    def __delitem__(self, key):
        del self._map[frozenset(key)]

    def __iter__(self):
        return iter(self._map)

    def __len__(self):
        return len(self._map)


def _pair_pvalue(a, b, stat_test, n_permutations, random_seed):
    """The p-value of the paired test ``stat_test`` on two per-query arrays (NaN when it cannot be computed)."""
    from rankjit import stats

    if a.shape[0] < 2 or not (np.isfinite(a).all() and np.isfinite(b).all()):
        return math.nan
    if stat_test == "student":
        return stats.paired_ttest(a, b).pvalue
    if stat_test == "fisher":
        return stats.randomization_test(a, b, B=n_permutations, seed=random_seed).pvalue
    return stats.bootstrap_test(a, b, B=n_permutations, seed=random_seed).pvalue


def _significance(model_names, metric_scores, metrics, stat_test, n_permutations, max_p, random_seed):
    """ranx's comparisons: ``FrozensetDict {pair: {metric: {"p_value", "significant"}}}``."""
    comparisons = FrozensetDict()
    if stat_test == "tukey":
        from scipy.stats import tukey_hsd

        for i, a in enumerate(model_names):
            for b in model_names[i:]:
                comparisons[a, b] = {m: None for m in metrics}
        for m in metrics:
            p = tukey_hsd(*[metric_scores[name][m] for name in model_names]).pvalue
            for i, a in enumerate(model_names):
                for j, b in enumerate(model_names):
                    comparisons[a, b][m] = {"p_value": float(p[i, j]), "significant": bool(p[i, j] <= max_p)}
        return comparisons
    for i, a in enumerate(model_names):
        for b in model_names[i + 1:]:
            entry = {}
            for m in metrics:
                p = _pair_pvalue(metric_scores[a][m], metric_scores[b][m], stat_test, n_permutations, random_seed)
                entry[m] = {"p_value": float(p), "significant": bool(p <= max_p)}
            comparisons[a, b] = entry
    return comparisons


def _compare_options(stat_test, n_permutations, max_p, rounding_digits):
    """:func:`compare`'s options checked (rankjit._validation: booleans refused, counts not truncated)."""
    from rankjit._validation import integer, number

    if stat_test not in _TEST_LABELS:
        raise ValueError(f"unknown stat_test {stat_test!r}; expected one of {', '.join(_TEST_LABELS)}")
    n_permutations = integer(n_permutations, "n_permutations", "a positive int")
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive int, got {n_permutations!r}")
    max_p = number(max_p, "max_p", "a number in [0, 1]")
    if not 0 <= max_p <= 1:
        raise ValueError(f"max_p must be a number in [0, 1], got {max_p!r}")
    return n_permutations, max_p, integer(rounding_digits, "rounding_digits", "an int >= 0", minimum=0)


def compare(qrels, runs, metrics, stat_test="student", n_permutations=1000, max_p=0.01, random_seed=42, threads=0,
            rounding_digits=3, show_percentages=False, make_comparable=False):
    """Evaluate several runs and test every pair of them, as ``ranx.compare``: a :class:`Report`.

    Parameters
    ----------
    qrels : Qrels or dict
    runs : list of Run
        Named by ``run.name`` (``run_1``, ``run_2``, ... when None); their per-query
        scores are saved in them, as :func:`evaluate` does.
    metrics : str or list of str
        At least one name (an empty list raises; ranx's report fails on it with a ``KeyError``).
    stat_test : {"student", "fisher", "tukey", "bootstrap"}, default "student"
        ranx's names (module docstring): paired t-test, Fisher's randomization test, Tukey's
        HSD (scipy), and rankjit's paired bootstrap test.
    n_permutations : int, default 1000
        Random permutations (fisher) or resamples (bootstrap).
    max_p : float, default 0.01
        A difference is significant when p <= max_p.
    random_seed : int, default 42
        Seed of the resampling tests (the same p-values on every call and thread count).
    threads, make_comparable
        As in :func:`evaluate`.
    rounding_digits, show_percentages
        How the Report prints the means.

    Returns
    -------
    Report

    Examples
    --------
    >>> from rankjit.compat.ranx import Qrels, Run, compare
    >>> qrels = Qrels({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}})
    >>> good = Run({"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 2.0, "y": 1.0}, "q3": {"c": 2.0, "z": 1.0},
    ...             "q4": {"d": 3.0, "w": 2.0, "v": 1.0}}, name="good")
    >>> bad = Run({"q1": {"a": 1.0, "x": 2.0}, "q2": {"b": 1.0, "y": 2.0}, "q3": {"c": 1.0, "z": 2.0},
    ...            "q4": {"d": 1.0, "w": 2.0, "v": 3.0}}, name="bad")
    >>> report = compare(qrels, [good, bad], ["mrr", "hits@1"], max_p=0.05)
    >>> print(report)
    #    Model    MRR     Hits@1
    ---  -------  ------  --------
    a    good     1.000ᵇ  1.000ᵇ
    b    bad      0.458   0.000
    >>> report.to_dict()["good"]["win_tie_loss"]["bad"]["mrr"]
    {'W': 4, 'T': 0, 'L': 0}
    """
    names = _metric_names(metrics)
    n_permutations, max_p, rounding_digits = _compare_options(stat_test, n_permutations, max_p, rounding_digits)
    if isinstance(runs, (Run, Mapping)) or not hasattr(runs, "__iter__"):
        raise TypeError(f"runs must be a list of Run, got {type(runs).__name__}")
    runs = list(runs)
    model_names = []
    for i, run in enumerate(runs):
        if not isinstance(run, Run):
            raise TypeError(f"runs[{i}] is a {type(run).__name__}, not a Run (compare names each run after run.name: "
                            "Run.from_dict(d, name=...))")
        name = run.name if run.name is not None else f"run_{i + 1}"
        if name in model_names:
            raise ValueError(f"two runs are named {name!r}: give each run its own name (Run(..., name=...))")
        model_names.append(name)
    qrels, _ = _as_qrels(qrels)  # (converted once)
    metric_scores, results = {}, {}
    for run, name in zip(runs, model_names):
        scores = evaluate(qrels, run, names, return_mean=False, threads=threads, make_comparable=make_comparable)
        if len(names) == 1:
            scores = {names[0]: scores}
        metric_scores[name] = scores
        results[name] = {m: float(np.mean(scores[m])) for m in names}
    metrics_once = list(dict.fromkeys(names))
    comparisons = _significance(model_names, metric_scores, metrics_once, stat_test, n_permutations, max_p,
                                random_seed)
    win_tie_loss = {}
    for a in model_names:
        for b in model_names:
            if a != b:
                win_tie_loss[a, b] = {m: {"W": int(np.sum(metric_scores[a][m] > metric_scores[b][m])),
                                          "T": int(np.sum(metric_scores[a][m] == metric_scores[b][m])),
                                          "L": int(np.sum(metric_scores[a][m] < metric_scores[b][m]))}
                                      for m in names}
    return Report(model_names=model_names, results=results, comparisons=comparisons, metrics=names, max_p=max_p,
                  win_tie_loss=win_tie_loss, rounding_digits=rounding_digits, show_percentages=show_percentages,
                  stat_test=stat_test)


class Report:
    """The result of :func:`compare`, with ranx's outputs: ``str(report)`` (the table), :meth:`to_latex`,
    :meth:`to_dict`, :meth:`to_dataframe`, :meth:`save` (JSON).

    Attributes
    ----------
    model_names, metrics : list of str
    results : dict
        ``{model: {metric: mean}}``.
    comparisons : FrozensetDict
        ``{(model, other): {metric: {"p_value": p, "significant": p <= max_p}}}``.
    win_tie_loss : dict
        ``{(model, other): {metric: {"W": queries where model is better, "T": ties, "L": worse}}}``.
    max_p, rounding_digits, show_percentages, stat_test
        The settings.
    """

    def __init__(self, model_names, results, comparisons, metrics, max_p, win_tie_loss, rounding_digits=3,
                 show_percentages=False, stat_test="student"):
        self.model_names = model_names
        self.results = results
        self.comparisons = comparisons
        self.metrics = metrics
        self.max_p = max_p
        self.win_tie_loss = win_tie_loss
        self.rounding_digits = rounding_digits
        self.show_percentages = show_percentages
        self.stat_test = stat_test

    def format_score(self, score):
        """A mean as the table prints it (``rounding_digits`` decimals, or a percentage with 2 fewer)."""
        if self.show_percentages:
            digits = self.rounding_digits - 2
            return f"%.{digits}f" % round(score * 100, max(0, digits))
        return f"%.{self.rounding_digits}f" % round(score, self.rounding_digits)

    def _better(self, model, metric):
        """Indices of the models ``model`` is significantly better than on ``metric``."""
        if len(self.model_names) > len(_CHARS):
            raise ValueError(f"a Report labels at most {len(_CHARS)} models (a to z), this one has "
                             f"{len(self.model_names)}")
        mean = self.results[model][metric]
        return [j for j, other in enumerate(self.model_names)
                if other != model and self.comparisons[model, other][metric]["significant"]
                and mean > self.results[other][metric]]

    def get_superscript_for_table(self, model, metric):
        """The superscript letters of the models ``model`` beats significantly on ``metric``."""
        return "".join(_SUPER_CHARS[j] for j in self._better(model, metric))

    def get_superscript_for_latex(self, model, metric):
        """The letters of the models ``model`` beats significantly on ``metric``."""
        return "".join(_CHARS[j] for j in self._better(model, metric))

    def get_phantoms_for_latex(self, model, metric):
        """The letters of the other models ``model`` does not beat significantly (LaTeX alignment)."""
        better = set(self._better(model, metric))
        return "".join(_CHARS[j] for j, other in enumerate(self.model_names) if other != model and j not in better)

    @staticmethod
    def get_metric_label(m):
        """The table's header of a metric name (``map@100-l2`` -> ``MAP@100-l2``)."""
        head, sep, level = m.partition("-l")
        family, at, cutoff = head.partition("@")
        label = _LABELS.get(family) or ("RBP" + family[3:] if family.startswith("rbp") else family)
        return label + (f"@{cutoff}" if at else "") + (f"-l{level}" if sep else "")

    def get_stat_test_label(self, stat_test):
        """The test's name in the LaTeX caption."""
        return _TEST_LABELS[stat_test]

    def to_table(self):
        """The table printed by ``print(report)`` (tabulate's ``simple`` format, as ranx)."""
        rows = []
        for i, (model, scores) in enumerate(self.results.items()):
            rows.append([_CHARS[i], model] + [self.format_score(score) + self.get_superscript_for_table(model, m)
                                              for m, score in scores.items()])
        headers = ["#", "Model"] + [self.get_metric_label(m) for m in self.metrics]
        try:
            from tabulate import tabulate
        except ImportError:
            return _simple_table(rows, headers)
        return tabulate(tabular_data=rows, headers=headers)

    def to_latex(self):
        """The table as LaTeX (booktabs), with ranx's caption, best scores in bold, significance as superscripts."""
        best = {}
        for m in self.metrics:
            best_model, best_score = None, 0.0
            for model in self.model_names:
                score = round(self.results[model][m], self.rounding_digits)
                if best_score < score:
                    best_model, best_score = model, score
            best[m] = best_model
        preamble = ("========================\n% Add in preamble\n\\usepackage{graphicx}\n\\usepackage{booktabs}\n"
                    "========================\n\n")
        prefix = ("% To change the table size, act on the resizebox argument `0.8`.\n"
                  "\\begin{table*}[ht]\n\\centering\n\\caption{\nOverall effectiveness of the models.\n"
                  "The best results are highlighted in boldface.\nSuperscripts denote significant differences in "
                  + self.get_stat_test_label(self.stat_test) + " with $p \\le " + str(self.max_p) + "$.\n}\n"
                  "\\resizebox{0.8\\textwidth}{!}{\n\\begin{tabular}{c|l" + "|c" * len(self.metrics) + "}"
                  "\n\\toprule\n\\textbf{\\#}\n& \\textbf{Model}"
                  + "".join(f"\n& \\textbf{{{self.get_metric_label(m)}}}" for m in self.metrics)
                  + " \\\\ \n\\midrule")
        body = []
        for i, model in enumerate(self.model_names):
            cells = []
            for m in self.metrics:
                score = self.format_score(self.results[model][m])
                if best[m] == model:
                    score = f"\\textbf{{{score}}}"
                sup = self.get_superscript_for_latex(model, m)
                phantoms = self.get_phantoms_for_latex(model, m)
                cells.append(f"{score}$^{{{sup}}}$\\hphantom{{$^{{{phantoms}}}$}} &")
            cells[-1] = cells[-1][:-1]
            body.append(f"{_CHARS[i]} &\n{model} &\n" + "\n".join(cells) + "\\\\")
        content = "\n".join(body).replace("_", "\\_").replace("$^{}$", "")
        suffix = "\\bottomrule\n\\end{tabular}\n}\n\\label{tab:results}\n\\end{table*}"
        return preamble + "\n" + prefix + "\n" + content + "\n" + suffix

    def to_dict(self):
        """``{"stat_test", "metrics", "model_names", model: {"scores", "comparisons" (p-values), "win_tie_loss"}}``."""
        d = {"stat_test": self.stat_test, "metrics": self.metrics, "model_names": self.model_names}
        for a in self.model_names:
            d[a] = {"scores": self.results[a], "comparisons": {}, "win_tie_loss": {}}
            for b in self.model_names:
                if a != b:
                    d[a]["comparisons"][b] = {m: self.comparisons[{a, b}][m]["p_value"] for m in self.metrics}
                    d[a]["win_tie_loss"][b] = {m: self.win_tie_loss[(a, b)][m] for m in self.metrics}
        return d

    def to_dataframe(self):
        """The means as a pandas DataFrame: a ``model_names`` column, then one column per metric."""
        import pandas as pd

        d = self.to_dict()
        df = pd.DataFrame.from_dict({name: d[name]["scores"] for name in d["model_names"]}, orient="index")
        return df.reset_index().rename(columns={"index": "model_names"})

    def save(self, path):
        """Write :meth:`to_dict` as JSON (indent 4)."""
        with open(path, "w") as f:
            f.write(json.dumps(self.to_dict(), indent=4))

    def print_results(self):
        """Print the means as JSON."""
        print(json.dumps(self.results, indent=4))

    def __repr__(self):
        return self.to_table()

    def __str__(self):
        return self.to_table()


# ---------------------------------------------------------------- the table without tabulate
def _number_kind(s):
    """tabulate's reading of a cell: ``int``, ``float`` or ``str``."""
    if s in ("True", "False"):
        return bool
    try:
        int(s)
        return int
    except ValueError:
        pass
    try:
        x = float(s)
    except ValueError:
        return str
    if math.isinf(x) or math.isnan(x):
        return float if s.lower() in ("inf", "-inf", "nan") else str
    return float


def _after_point(s):
    if _number_kind(s) is not float:
        return -1
    pos = s.rfind(".")
    pos = s.lower().rfind("e") if pos < 0 else pos
    return len(s) - pos - 1 if pos >= 0 else -1


def _simple_table(rows, headers):
    """tabulate's default ``simple`` table of string cells, for when tabulate is not installed.

    Columns whose cells all read as numbers are printed as tabulate prints them (floats
    with ``format(x, "g")``), aligned on the decimal point and to the right; other columns
    to the left; every column at least 2 wider than its header; lines right-stripped.
    """
    columns = [list(c) for c in zip(*rows)] if rows else [[] for _ in headers]
    order = {bool: 1, int: 2, float: 3, str: 5}
    out_cols, numeric = [], []
    for col in columns:
        kind = max((_number_kind(s) for s in col), key=order.__getitem__, default=bool)
        if kind is float:
            col = [format(float(s), "g") for s in col]
        is_num = kind in (int, float)
        if is_num:
            decimals = [_after_point(s) for s in col]
            most = max(decimals, default=-1)
            col = [s + " " * (most - d) for s, d in zip(col, decimals)]
        out_cols.append(col)
        numeric.append(is_num)
    widths = [max([len(h) + 2] + [len(s) for s in col]) for h, col in zip(headers, out_cols)]

    def line(cells):
        return "  ".join(cells).rstrip()

    head = line([h.rjust(w) if num else h.ljust(w) for h, w, num in zip(headers, widths, numeric)])
    lines = [head, line(["-" * w for w in widths])]
    for r in range(len(rows)):
        lines.append(line([col[r].rjust(w) if num else col[r].ljust(w)
                           for col, w, num in zip(out_cols, widths, numeric)]))
    return "\n".join(lines)


# ---------------------------------------------------------------- fusion and normalisation: ranx's own
def _ranx():
    try:
        import ranx
    except ImportError:
        raise ImportError("fusion and normalisation are ranx's: rankjit.compat.ranx hands them to ranx, which is not "
                          "installed (pip install ranx); rankjit evaluates, fuses nothing itself") from None
    return ranx


def _to_ranx(obj):
    """rankjit's :class:`Run` / :class:`Qrels` as ranx's (a ranx object is passed as it is)."""
    ranx = _ranx()
    if isinstance(obj, Run):
        return ranx.Run(obj.to_dict(), name=obj.name)
    if isinstance(obj, Qrels):
        return ranx.Qrels(obj.to_dict(), name=obj.name)
    return obj


def _from_ranx(run):
    return Run(run.to_dict(), name=run.name)


def fuse(runs, norm="min-max", method="wsum", params=None):
    """Fuse runs with ranx's ``fuse`` (its normalisations and methods): a rankjit :class:`Run`.

    Parameters and results are ranx's (``norm``: ``"min-max"``, ``"zmuv"``, ``"rank"``, ...;
    ``method``: ``"wsum"``, ``"rrf"``, ``"mnz"``, ...; ``params``: the method's, e.g.
    ``{"weights": [0.3, 0.7]}``); the runs may be rankjit's or ranx's.  Needs ranx.
    """
    return _from_ranx(_ranx().fuse([_to_ranx(r) for r in runs], norm=norm, method=method, params=params))


def optimize_fusion(qrels, runs, norm="min-max", method="wsum", metric="ndcg", return_optimization_report=False,
                    rounding_digits=3, show_percentages=False, **kwargs):
    """ranx's ``optimize_fusion`` on rankjit's (or ranx's) qrels and runs: the best parameters, as ranx returns them.

    The search evaluates with ranx's metrics (ranx's time).  Needs ranx.
    """
    return _ranx().optimize_fusion(
        _to_ranx(qrels), [_to_ranx(r) for r in runs], norm=norm, method=method, metric=metric,
        return_optimization_report=return_optimization_report, rounding_digits=rounding_digits,
        show_percentages=show_percentages, **kwargs)


def normalize(run, norm="min-max"):
    """Normalise a run's scores with ranx's ``normalize``: a rankjit :class:`Run`.  Needs ranx."""
    return _from_ranx(_ranx().normalize(_to_ranx(run), norm=norm))
