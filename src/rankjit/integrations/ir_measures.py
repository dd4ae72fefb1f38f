"""ir_measures provider backed by rankjit: ``register()`` and ir_measures (and PyTerrier) compute with rankjit.

:func:`register` puts a provider named ``"rankjit"`` first in ir_measures' default pipeline
(``ir_measures.DefaultPipeline``), so that ``ir_measures.calc_aggregate``, ``iter_calc``,
``calc`` and ``evaluator`` -- and PyTerrier's ``pt.Experiment``, which calls them -- compute
every measure this provider supports with rankjit, and hand the others to ir_measures' own
providers as before (a call may mix both).  :func:`unregister` restores the pipeline.

The provider supports a measure when ir_measures' default pipeline computes it and rankjit
gives the same number: the provider ir_measures would use fixes the conventions, so the
numbers are those of ir_measures without rankjit (to rounding; gdeval prints 5 decimals).

    ============  =============================  ===================================================
    provider      ties among equal scores        ir_measures measures
    ============  =============================  ===================================================
    pytrec_eval   docno descending (trec_eval)   P, R, Success, RR, AP (and @k), Rprec, nDCG (also
                                                 gains={...}), SetP, SetR, SetF, SetAP, SetRelP,
                                                 IPrec, NumQ, NumRet, NumRel, Bpref, infAP;
                                                 judged_only=True
    gdeval        docno descending               ERR@k, nDCG(dcg='exp-log2')@k
    cwl_eval      the run's order                RBP(rel=r) (p < 1), SDCG, INSQ, INST, BPM,
                                                 NERR8-NERR11 (the first 1000 ranks)
    msmarco       doc_id ascending               RR@k
    judged        doc_id ascending               Judged, Judged@k
    pyndeval      doc_id ascending               alpha_(n)DCG, (n)ERR_IA, P_IA, StRecall (cutoffs
                                                 <= 20), AP_IA, NRBP, nNRBP
    ============  =============================  ===================================================

pytrec_eval keeps scores as C ``float`` (trec_eval 9), so its measures rank the scores rounded
to float32: scores equal in float32 tie (1.00000001 and 1.0), broken by docno as in its ties.

Relevance thresholds ``rel`` must be >= 1 (ir_measures' default; ``rel=0`` and below go to
ir_measures).  Left to ir_measures: ``nDCG(gains={...})`` with a key or a gain that is not
an integer >= 0, the C/W/L measures with ``min_rel`` < 0 or ``min_rel >= max_rel``,
``ERR_IA@1`` and ``alpha_DCG@1`` (ndeval leaves rank 1 out of its normalisation),
``RBP(p=1.0)``, Compat, Accuracy and names no provider of ir_measures computes (``ERR``
without a cutoff, ``RBP`` without ``rel``, ``SDCG`` without a cutoff, ...).

Inputs are those ir_measures accepts: dicts of dicts, iterables of ``Qrel`` / ``ScoredDoc``
named tuples (``ir_measures.read_trec_qrels`` / ``read_trec_run``), pandas DataFrames with
``query_id``, ``doc_id``, ``relevance`` (qrels; ``iteration``: the subtopic of the
diversity measures) and ``query_id``, ``doc_id``, ``score`` (run).  Each is read once into
flat arrays; a query evaluates in one rankjit pass per tie order.

A query reports the measure's default (0) when the run lacks it; the queries reported, the
value of an empty run (pytrec_eval's ``IPrec`` is NaN at some recall levels then) and
``calc_aggregate``'s sums (NumQ, NumRet, NumRel) follow ir_measures.  A document listed
twice for a query keeps its first place and its last score (ir_measures' dict form).
``ERR@k`` refuses judgments above 4, as gdeval.  Ids that are not strings (ir_measures
refuses them) are matched by equality; a run whose query or document ids are of the other
kind than the qrels' (ints against strings, or the reverse) raises a TypeError naming the
first one, where it would match nothing and score 0 everywhere.

A document judged twice for a query (two rows of a qrels DataFrame or of named tuples)
is read as each ir_measures provider reads it: its last judgment for pytrec_eval's,
cwl_eval's and judged's measures (they read ir_measures' dict form, or a dict); its
largest for ``RR@k`` (msmarco counts it relevant when any judgment reaches ``rel``).
gdeval reads every judgment line (the lowest positive one judges the document, each
positive one enters nDCG's ideal ranking): ``ERR@k`` and ``nDCG(dcg='exp-log2')@k``
raise a ValueError naming the query, the document and the rows.  The diversity measures
refuse a document judged twice for one subtopic (ndeval's numbers then follow no
judgment).

Known ir_measures bugs this provider does not reproduce: pyndeval's provider computes a
diversity measure with a non-default parameter set as 0 when a call mixes parameter sets
(its run iterator is exhausted by the first set), and fails on ``judged_only=True``; the
judged provider divides by zero for a query whose run is empty (here: 0); the pytrec_eval
provider may compute ``NumRet`` in a ``judged_only=True`` call and ``nDCG@k`` in a
``nDCG(gains=...)@k`` call (both depend on the order of a set).

Examples
--------
>>> import ir_measures
>>> from ir_measures import AP, P, nDCG
>>> from rankjit.integrations import ir_measures as rj
>>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1}}
>>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d4": 0.1}, "q2": {"d1": 0.2, "d5": 0.5}}
>>> with rj.registered():
...     fast = ir_measures.calc_aggregate([nDCG@10, AP, P@2], qrels, run)
>>> slow = ir_measures.calc_aggregate([nDCG@10, AP, P@2], qrels, run)
>>> all(abs(fast[m] - slow[m]) < 1e-12 for m in slow)
True
>>> rj.is_registered()
False
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import gc
import itertools
import math
import operator
import sys
import threading
from typing import NamedTuple

import numpy as np

# the compiled loops of the columnar path (and _UNJUDGED, the label of a retrieved document the qrels do not hold)
from rankjit._kernels.frontends import _UNJUDGED, _join, _mixed_ties, _split_raw
from rankjit.io._kernels import repeated_strings

__all__ = ["register", "unregister", "registered", "is_registered", "provider", "supports", "NAME"]

#: the provider's name in ir_measures (``ir_measures.providers.registry["rankjit"]`` while registered)
NAME = "rankjit"

#: queries converted together: their dicts stay in cache between the label and the score pass
_BLOCK = 32
#: cwl_eval scores rankings cut (and normalised) at this depth (its RankingMaker's max_n)
_CWL_DEPTH = 1000
#: ndeval computes cutoffs up to 20
_NDEVAL_MAX_CUTOFF = 20

_LOCK = threading.RLock()
_STATE = {"provider": None, "classes": None}

#: the measures of the ir_measures call under way in this thread (``DefaultPipeline._evaluator`` while registered)
_CALL_MEASURES = contextvars.ContextVar("rankjit_ir_measures_call", default=())


@contextlib.contextmanager
def _no_gc():
    """The cyclic garbage collector paused (if it runs) while a block allocates many objects.

    The inputs hold millions of dict entries: every full collection triggered by the lists,
    bound methods and Metric tuples made here would walk them all.  Nothing made here forms
    a cycle; reference counting frees it.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _Spec(NamedTuple):
    """How rankjit computes one ir_measures measure."""

    name: str  # rankjit's measure string
    provider: str  # the provider of ir_measures' default pipeline whose conventions it follows
    scale: float = 1.0  # the value is rankjit's times this (cwl_eval's normalisation of RBP)
    rel: int = 1  # diversity: a judgment >= rel is a nugget
    judged_only: bool = False  # diversity: on the judged documents alone
    cap: int = 1  # cwl_eval's measures: the largest grade they tell apart (max_rel; RBP: rel)
    reads_nonrelevant: bool = False  # tells a judged document of grade <= 0 from an unjudged one
    depth: int | None = None  # reads the labels of the first `depth` ranks alone (a cutoff), else None: every rank

    @property
    def order(self):
        """Ties: "trec" (docno descending), "asc" (doc_id ascending), "input" (the run's order), "div" (pyndeval)."""
        return _TIES[self.provider]

    @property
    def all_qrels_queries(self):
        """Reported for every key of the qrels (pytrec_eval, judged), else for the queries with judgments."""
        return self.provider in _EVERY_KEY


#: how each provider orders documents with equal scores
_TIES = {"pytrec_eval": "trec", "gdeval": "trec", "cwl_eval": "input", "msmarco": "asc", "judged": "asc",
         "pyndeval": "div"}
#: ir_measures' providers whose evaluators report every key of the qrels; the others report the queries
#: with a judgment (a dict's key ``{"2": {}}`` has none)
_EVERY_KEY = ("pytrec_eval", "judged", "compat", "accuracy")


# ------------------------------------------------------------------------------------------------
# which measures: ir_measures' measure -> rankjit's measure string and conventions
# ------------------------------------------------------------------------------------------------


def _is_int(x, lo=1):
    return isinstance(x, int) and not isinstance(x, bool) and x >= lo


def _translate(measure):
    """The :class:`_Spec` of an ir_measures measure, or None when the provider leaves it to ir_measures."""
    # Long as a table is: one short branch per ir_measures family (its rankjit text and the provider whose numbers
    # it matches), read top to bottom; the C/W/L and diversity families have functions of their own.
    from ir_measures.providers.base import NOT_PROVIDED

    name = measure.NAME
    params = measure.params
    get = measure.__getitem__
    given = set(params)
    cutoff = get("cutoff") if "cutoff" in measure.SUPPORTED_PARAMS else NOT_PROVIDED
    k = None if cutoff is NOT_PROVIDED else cutoff
    if k is not None and not _is_int(k):
        return None
    rel = get("rel") if "rel" in measure.SUPPORTED_PARAMS else NOT_PROVIDED
    if rel is not NOT_PROVIDED and not _is_int(rel):
        return None  # rel <= 0 counts judged non-relevant documents, not unjudged ones: ir_measures' providers
    jo = bool(get("judged_only")) if "judged_only" in measure.SUPPORTED_PARAMS else False
    at = "" if k is None else f"@{k}"

    reach = None if jo else k  # the ranks a cutoff measure reads (judged_only: its k-th judged document may be below)

    def trec(text, provider="pytrec_eval", depth=None):
        return _Spec(text, provider, reads_nonrelevant=jo, depth=depth)

    def args(*parts):
        parts = [p for p in parts if p]
        return f"({','.join(parts)})" if parts else ""

    r = f"rel={rel}" if rel is not NOT_PROVIDED and rel != 1 else ""
    j = "judged_only=True" if jo else ""
    if name in ("P", "R", "Success"):
        if k is None:
            return None
        return trec(f"{name}{args(r, j)}@{k}", depth=reach)
    if name == "AP":
        return trec(f"AP{args(r, j)}{at}", depth=reach)
    if name in ("Rprec", "SetAP", "SetR"):
        return trec(f"{name}{args(r, j)}{at}")
    if name == "RR":
        if k is None:
            return trec(f"RR{args(r, j)}")
        if jo:
            return None  # neither pytrec_eval (no cutoff) nor msmarco (no judged_only) computes it
        return _Spec(f"RR{args(r)}@{k}", "msmarco", depth=k)  # ties by doc_id ascending
    if name == "nDCG":
        if "gains" in given and get("gains") is not NOT_PROVIDED:
            gains = _gains_text(get("gains"))
            if gains is None or get("dcg") != "log2":
                return None  # gains with dcg='exp-log2': no provider of ir_measures computes it
            # pytrec_eval maps each judgment g to gains.get(g, g), then ranks as trec_eval
            return _Spec(f"nDCG{args(gains, j)}{at}", "pytrec_eval", reads_nonrelevant=True,  # (a gain for grade 0)
                         depth=reach)
        if get("dcg") == "log2":
            return trec(f"nDCG{args(j)}{at}", depth=reach)
        if get("dcg") == "exp-log2" and k is not None and not jo:
            return trec(f"nDCG(gain='exp2'){at}", "gdeval", depth=k)
        return None
    if name == "ERR":
        return trec(f"ERR@{k}", "gdeval", depth=k) if k is not None else None
    if name == "RBP":
        p = get("p")
        if k is not None or rel is NOT_PROVIDED or not isinstance(p, float) or not 0.0 <= p < 1.0:
            return None
        # cwl_eval: the first 1000 ranks, weights (1 - p) p^(r-1) / (1 - p^1000)
        return _Spec(f"RBP(p={p!r},rel={rel})@{_CWL_DEPTH}", "cwl_eval", 1.0 / (1.0 - p ** _CWL_DEPTH), cap=rel)
    if name == "SetP":
        rp = "relative=True" if get("relative") else ""
        return trec(f"SetP{args(r, rp, j)}")
    if name == "SetF":
        beta = get("beta")
        if not isinstance(beta, float) or not math.isfinite(beta) or beta < 0:
            return None
        b = f"beta={beta!r}" if beta != 1.0 else ""
        return trec(f"SetF{args(r, b, j)}")
    if name == "IPrec":
        recall = get("recall")
        if not isinstance(recall, float) or not 0.0 <= recall <= 1.0:
            return None
        recall = float(f"{recall:.2f}")  # pytrec_eval is asked for iprec_at_recall_{recall:.2f}
        return trec(f"IPrec{args(r, j)}@{recall!r}")
    if name == "NumQ":
        return trec("NumQ")
    if name == "NumRet":
        return trec("NumRet" if rel is NOT_PROVIDED else f"NumRet(rel={rel})")
    if name == "NumRel":
        return trec("NumRel") if rel == 1 else None  # pytrec_eval computes rel=1 only
    if name == "Judged":
        return _Spec(f"Judged{at}", "judged", reads_nonrelevant=True, depth=k)
    if name in ("Bpref", "infAP"):
        # pytrec_eval, whatever judged_only says; infAP reads the unjudged documents above each relevant one
        return _Spec(f"{name}{args(r)}", "pytrec_eval", reads_nonrelevant=True)
    if name in _CWL:
        return _translate_cwl(measure, name, k)
    return _translate_diversity(measure, name, k, rel, jo)


#: ir_measures' C/W/L families (its cwl_eval provider) and the parameters each takes besides min_rel / max_rel
_CWL = {"SDCG": (), "BPM": ("T",), "NERR8": (), "NERR9": (), "NERR10": ("p",), "NERR11": ("T",), "INST": ("T",),
        "INSQ": ("T",)}
#: the C/W/L families cwl_eval computes only with a cutoff (ir_measures' BPM takes it as optional, then fails)
_CWL_CUTOFF = ("SDCG", "BPM", "NERR8", "NERR9")


def _gains_text(gains):
    """rankjit's ``gains={g:v,...}`` of an ir_measures gain map of judgments >= 0 to gains >= 0, else None.

    A negative judgment keeps 0 in rankjit's labels, so a map that reads one is left to ir_measures.
    """
    if not isinstance(gains, dict) or not gains:
        return None
    if not all(_is_int(g, 0) and _is_int(v, 0) for g, v in gains.items()):
        return None
    return "gains={" + ",".join(f"{g}:{v}" for g, v in sorted(gains.items())) + "}"


def _translate_cwl(measure, name, k):
    """SDCG, BPM, NERR8-NERR11, INST, INSQ (cwl_eval: the run's order, the first 1000 ranks)."""
    if name in _CWL_CUTOFF and k is None:
        return None
    if name == "SDCG" and measure["dcg"] != "log2":
        return None
    lo, hi = measure["min_rel"], measure["max_rel"]
    if not (_is_int(lo, 0) and _is_int(hi, 0) and lo < hi):
        return None  # min_rel < 0: labels cannot tell a judged 0 from an unjudged document (its gain differs)
    parts = []
    for p in _CWL[name]:
        v = measure[p]
        if not isinstance(v, float) or not math.isfinite(v) or v < 0.0 or (p == "T" and v == 0.0) or (
                p == "p" and v > 1.0):
            return None
        parts.append(f"{p}={v!r}")
    if lo != 0:
        parts.append(f"min_rel={lo}")
    parts.append(f"max_rel={hi}")
    at = "" if k is None else f"@{k}"
    return _Spec(f"{name}({','.join(parts)}){at}", "cwl_eval", cap=hi)


def _translate_diversity(measure, name, k, rel, jo):
    """Diversity measures (ir_measures' pyndeval provider)."""
    div = {"ERR_IA": 2, "alpha_DCG": 2, "nERR_IA": 1, "alpha_nDCG": 1, "P_IA": 1, "StRecall": 1}
    if name in div:
        if k is None or not div[name] <= k <= _NDEVAL_MAX_CUTOFF:
            return None  # ERR_IA@1 / alpha_DCG@1: ndeval leaves rank 1 out of its normalisation
        text = name
        if name in ("alpha_DCG", "alpha_nDCG"):
            alpha = measure["alpha"]
            if not isinstance(alpha, float) or not 0.0 <= alpha <= 1.0:
                return None
            text += f"(alpha={alpha!r})"
        return _Spec(f"{text}@{k}", "pyndeval", 1.0, rel, jo)
    if name in ("NRBP", "nNRBP"):
        alpha, beta = measure["alpha"], measure["beta"]
        if not all(isinstance(x, float) and 0.0 <= x <= 1.0 for x in (alpha, beta)):
            return None
        empty = ",empty='nan'" if name == "nNRBP" else ""  # ndeval: 0 / 0 without relevant judgments
        return _Spec(f"{name}(alpha={alpha!r},beta={beta!r}{empty})", "pyndeval", 1.0, rel)
    if name == "AP_IA":
        return _Spec("AP_IA", "pyndeval", 1.0, rel, jo)
    return None


def _spec(measure):
    """:func:`_translate` kept per measure (measures are hashed by their text)."""
    cache = _STATE.setdefault("specs", {})
    try:
        return cache[measure]
    except KeyError:
        pass
    except TypeError:  # an unhashable measure
        return _translate(measure)
    spec = cache[measure] = _translate(measure)
    return spec


def supports(measure):
    """Whether the provider computes ``measure`` (an ir_measures measure or its text, e.g. ``"nDCG@10"``).

    Examples
    --------
    >>> supports("nDCG@10"), supports("RR@10"), supports("Bpref"), supports("INST(max_rel=4)"), supports("ERR")
    (True, True, True, True, False)
    """
    import ir_measures

    m = ir_measures.parse_measure(measure) if isinstance(measure, str) else measure
    m.validate_params()
    return _spec(m) is not None


# ------------------------------------------------------------------------------------------------
# reading the inputs
# ------------------------------------------------------------------------------------------------


def _kind(obj, what):
    """``(kind, obj)``: how ir_measures reads an input: dict_of_dict, pd_dataframe or namedtuple_iter."""
    from ir_measures.util import QrelsConverter, RunConverter

    conv = QrelsConverter(obj) if what == "qrels" else RunConverter(obj)
    kind, err = conv.predict_type()
    if kind == "UNKNOWN":
        raise ValueError(f"unknown {what} format: {err}")
    if type(obj) is not list:  # (a list is read again from the start: ir_measures peeked at a copy)
        obj = conv.qrels if what == "qrels" else conv.run  # an iterator is replaced by its copy (tee)
    if kind == "dict_of_dict" and not all(map(isinstance, obj.values(), itertools.repeat(dict))):
        obj = {q: d if isinstance(d, dict) else _inner_dict(d, q, what) for q, d in obj.items()}
    return kind, obj


def _inner_dict(d, qid, what):
    try:
        return dict(d)
    except (TypeError, ValueError):
        raise TypeError(f"{what}[{qid!r}] must be a dict of document id -> value, got {type(d).__name__}") from None


#: the fields of ir_measures' judgments (Qrel) that the provider reads
_QREL_FIELDS = ("query_id", "doc_id", "relevance", "iteration")


def _tuple_columns(rows, fields):
    """Columns (lists) ``fields`` of a list of named tuples (None for a field they do not have).

    One ``map(itemgetter(i), rows)`` per field asked for: a third of the time of transposing every
    field with ``zip(*rows)`` (50k rows of TREC 2012 Web's run: 6 ms against 11-13 ms).
    """
    if not rows:
        return [[] for _ in fields]
    have = rows[0]._fields
    return [list(map(operator.itemgetter(have.index(f)), rows)) if f in have else None for f in fields]


def _frame_columns(df, fields):
    """Columns ``fields`` of a DataFrame, as Series (None for a missing one): read without Python objects."""
    return [df[f] if f in df.columns else None for f in fields]


def _item(col, i):
    """Value ``i`` of a column (a list, an array or a Series: by position), for the messages."""
    return col.iloc[i] if hasattr(col, "iloc") else col[i]


def _as_list(col):
    return col.tolist() if hasattr(col, "tolist") else list(col)


def _factorize(values):
    """``(codes, uniques)``: int64 code of each value, the distinct values in order of first appearance."""
    if isinstance(values, (list, tuple)):
        uniques = list(dict.fromkeys(values))
        index = dict(zip(uniques, range(len(uniques))))
        return np.fromiter(map(index.__getitem__, values), np.int64, len(values)), uniques
    import pandas as pd

    codes, uniques = pd.factorize(values, sort=False)
    if (codes < 0).any():
        raise ValueError("query_id holds missing values (None / NaN)")
    return codes.astype(np.int64, copy=False), uniques.tolist()


def _string_column(values):
    """A :class:`rankjit.io._trec.StringColumn` of string ids, or None when they are not all strings.

    None as well without pyarrow: the ids are then looked up in dicts.
    """
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is in rankjit's io and test extras
        return None

    from rankjit.io._trec import StringColumn

    try:
        arr = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, UnicodeError):  # (UnicodeError: a lone surrogate)
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)) or arr.null_count:
        return None
    return StringColumn.from_arrow(arr)


#: the kinds of ids (:func:`_id_kinds`) of ids that are all strings
_STR = frozenset({"str"})


def _id_kinds(ids):
    """The kinds of ``ids`` (an iterable): ``"str"`` (str and its subclasses), ``"other"`` (ints, NumPy
    integers, ...); an id of one kind never equals one of the other."""
    types = set(map(type, ids))
    return _STR if types <= {str} else frozenset("str" if issubclass(t, str) else "other" for t in types)


def _require_kinds(ids, kinds, what, query_of=None):
    """A TypeError naming the first of ``ids`` (a list) whose kind (:func:`_id_kinds`) is not among the qrels'
    ``kinds`` (no check when the qrels hold none); ``query_of(i)``: the query of id ``i``, for document ids.

    ir_measures reads ids as ``str`` (its pytrec_eval provider raises a TypeError on
    others); rankjit also matches ids of other types (ints, ...) by equality, but a run
    whose ids are ints where the qrels' are strings (or the reverse) would match nothing:
    every query or document would be unjudged, and each measure 0, without a word.
    """
    if not kinds or _id_kinds(ids) <= kinds:
        return
    for i, x in enumerate(ids):
        if ("str" if isinstance(x, str) else "other") not in kinds:
            where = "" if query_of is None else f" of query {query_of(i)!r}"
            theirs = "strings" if kinds == _STR else "not strings" if "str" not in kinds else "of both kinds"
            raise TypeError(f"{what} {x!r}{where} has type {type(x).__name__}, but the qrels' ids are {theirs}: it "
                            "would match none of them; give both the same ids (ir_measures reads ids as str: e.g. "
                            "df['query_id'].astype(str), or str(id) in your dicts)")


def _grades(values, where):
    """Relevance values as int64, refusing anything but integers (``where(i)`` names value ``i``)."""
    try:
        g = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        g = None
    bad = None
    if g is None:
        bad = next(i for i, v in enumerate(values) if not _integral(v))
    else:
        ok = np.isfinite(g) & (g == np.floor(g)) & (g > _UNJUDGED) & (g < 2.0 ** 63)
        if not ok.all():
            bad = int(np.argmin(ok))
    if bad is not None:
        q, d, v = where(bad)
        raise ValueError(f"qrels: relevance of document {d!r} for query {q!r} must be an integer, got {v!r}")
    return g.astype(np.int64)


def _integral(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return False
    return math.isfinite(f) and f == math.floor(f)


def _scores(values, where):
    """Run scores as float64 (``where(i)`` names score ``i`` for the messages)."""
    try:
        s = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        s = None
    if s is None:
        bad = next(i for i, v in enumerate(values) if not _number(v))
        q, d, v = where(bad)
        raise TypeError(f"run: score of document {d!r} for query {q!r} must be a number, got {v!r}")
    _no_nan(s, where)
    return s


def _no_nan(s, where):
    if np.isnan(s).any():
        q, d, v = where(int(np.argmax(np.isnan(s))))
        if v is None:  # NumPy reads None as NaN
            raise TypeError(f"run: score of document {d!r} for query {q!r} must be a number, got None")
        raise ValueError(f"run: score of document {d!r} for query {q!r} is NaN")


def _number(v):
    """Whether NumPy reads ``v`` as a float64 (numbers, and strings that spell one)."""
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


class _Qrels:
    """Qrels read once: per query with judgments, its judged documents per grade, and two lookups.

    ``dod`` (ir_measures' dict form) serves runs given as dicts; the grouped columns
    (``columns()``: doc ids as a byte column with their hashes) serve runs given as
    DataFrames or named tuples.  Each is built on first use from the form given.  A document
    judged twice for a query keeps its last judgment (ir_measures' dict form, which
    pytrec_eval, cwl_eval and judged read); :meth:`largest` gives msmarco's reading and
    :meth:`refuse_repeats` refuses them for gdeval.
    """

    def __init__(self, qrels, copy=True):
        from rankjit.io._dicts import int64_values_and_keys

        kind, obj = ("file", qrels) if type(qrels) is _QrelsFile else _kind(qrels, "qrels")
        self._dod = None
        self._cols = None
        self._list_rows = self._subtopic_rows = None  # (judgments given as rows: see subtopic_rows)
        self.repeated = None  # the first row whose judgment a later row of its (query, document) replaces
        self._held_ids = None  # (dict qrels read compiled: their ids, held; see dod)
        if kind == "dict_of_dict":
            # later changes to the caller's qrels change no evaluation of this evaluator, as with ir_measures'
            # providers, which copy the qrels when they are given them.  Unless ``copy`` (the measures read dict
            # runs through dicts of judgments: copying is the fastest way to make them), the grades are read into
            # an array and the ids held by reference (one compiled pass: ints exactly, ids exactly str), and the
            # dicts are rebuilt from them only if a path asks for them (dod); else each dict is copied
            self.keys = list(obj)  # pytrec_eval and judged report every key, even without judgments
            self.query_id_kinds = _id_kinds(self.keys)
            given = list(obj.values())
            self.judged_qids = [q for q, d in zip(self.keys, given) if d]
            dicts = [d for d in given if d]
            lens = np.fromiter(map(len, dicts), np.int64, len(dicts))
            grades, keys = (int64_values_and_keys(dicts, lens, hold=True)
                            if not copy and set(map(type, dicts)) <= {dict} else (None, None))
            if keys is not None and (grades > _UNJUDGED).all():
                self._held_ids = keys
                self.dod_ids_are_str = True  # (the cached property, known already)
                dicts = None
            else:
                obj = dict(zip(self.keys, map(dict, given)))  # (copies)
                self._dod = obj
                dicts = [obj[q] for q in self.judged_qids]
                # ints read exactly in one compiled pass, which also tells whether every doc id is exactly a str
                grades, keys = int64_values_and_keys(dicts, lens)
                if grades is not None:
                    self.dod_ids_are_str = keys is not None  # (the cached property, known already)
            # what dict runs are ranked from (judged_lookups): the judgments read compiled and their ids (held,
            # or their addresses, valid as long as the copies held by self._dod are; None unless every id is
            # exactly a str)
            self._lookup_dicts, self._lookup_keys = dicts, keys
            self._lookups = {}
            if grades is None or not (grades > _UNJUDGED).all():
                try:  # one pass over the values; a list only to name a bad one
                    values = np.fromiter(itertools.chain.from_iterable(map(dict.values, dicts)), np.float64,
                                         int(lens.sum()))
                except (TypeError, ValueError):
                    values = list(itertools.chain.from_iterable(map(dict.values, dicts)))

                def where(i):
                    k = int(np.searchsorted(np.cumsum(lens), i, side="right"))
                    doc = list(dicts[k])[i - int(lens[:k].sum())]
                    return self.judged_qids[k], doc, dicts[k][doc]

                grades = _grades(values, where)
            self.doc_id_kinds = _STR if self.dod_ids_are_str else _id_kinds(itertools.chain.from_iterable(dicts))
            self._flat = (lens, grades)
        else:
            self._lookup_keys = None
            doc_col = read = None
            if kind == "pd_dataframe":  # (copies: later changes to the caller's frame change nothing here)
                q, d, r, it = (None if c is None else c.copy() for c in _frame_columns(obj, _QREL_FIELDS))
            elif kind == "file":  # (read by rankjit's reader: the ids are str, the judgments int64)
                read, self._list_rows = obj.read, obj.rows
            else:
                rows = list(obj)  # (a copy: later changes to the caller's list change nothing here)
                self._list_rows = lambda: tuple(_tuple_columns(rows, _QREL_FIELDS))
                read = _read_rows(rows, _QREL_FIELDS[:3], ints=True)
                if read is None or not (read[2] > _UNJUDGED).all():
                    read = None
                    q, d, r, it = _tuple_columns(rows, _QREL_FIELDS)
            if read is None:
                self._subtopic_rows = (q, d, r, it)
                codes, self.keys = _factorize(q)
                doc_col = _string_column(d)
                self.doc_id_kinds = _STR if doc_col is not None else _id_kinds(_as_list(d))
                grades = _grades(r, lambda i: (_item(q, i), _item(d, i), _item(r, i)))
            else:  # (the columns as lists only if asked for: subtopic_rows; the ids read are exactly str)
                (codes, self.keys), doc_col, grades = read
                d = None
                self.doc_id_kinds = _STR
            self.query_id_kinds = _id_kinds(self.keys)
            self.judged_qids = self.keys
            q_off, q_rows = _group_rows(codes, len(self.keys))
            q_rows = self._keep_last(q_off, q_rows, d, doc_col)
            self._raw_cols = (q_off, q_rows, d, grades)
            lens, grades = np.diff(q_off), grades[q_rows]
        self.index = dict(zip(self.judged_qids, range(len(self.judged_qids))))
        self._code_grades(lens, grades)

    @property
    def subtopic_rows(self):
        """The columns ``(query_id, doc_id, relevance, iteration)`` of qrels given as rows (None for dicts; a
        column a DataFrame lacks is None); listed from the rows on first use when they were read compiled."""
        if self._subtopic_rows is None and self._list_rows is not None:
            self._subtopic_rows = self._list_rows()
        return self._subtopic_rows

    def _keep_last(self, q_off, q_rows, docs, col=None):
        """The rows of ``q_rows`` that are the last judgment of their (query, document) (``col``: the doc ids
        as a StringColumn when read already)."""
        col = _string_column(docs) if col is None else col
        self._doc_col = col
        if col is None:  # ids that are not strings: dicts decide (the last judgment wins)
            docs = _as_list(docs)
            keep = np.ones(len(docs), bool)
            for g in range(q_off.shape[0] - 1):
                seen = {}
                for t in q_rows[q_off[g]:q_off[g + 1]].tolist():
                    if docs[t] in seen:
                        keep[seen[docs[t]]] = False
                    seen[docs[t]] = t
        else:
            keep = np.ones(len(col), bool)
            repeated_strings(q_off, q_rows, col.data, col.offsets, col.hashes(), keep, False)
        if keep.all():
            return q_rows
        self.repeated = int(np.argmin(keep))
        kept = keep[q_rows]
        counts = np.add.reduceat(kept.astype(np.int64), q_off[:-1]) if q_rows.size else np.zeros(0, np.int64)
        counts[np.diff(q_off) == 0] = 0
        q_off[1:] = np.cumsum(counts)
        return q_rows[kept]

    def _repeat(self):
        """``(query, document, row, later row)``: the first judgment (by row) that a later one replaces."""
        q, d = _as_list(self.subtopic_rows[0]), _as_list(self.subtopic_rows[1])
        t = self.repeated
        later = next(i for i in range(t + 1, len(d)) if q[i] == q[t] and d[i] == d[t])
        return q[t], d[t], t, later

    def largest(self):
        """These qrels with each document judged by its largest judgment (itself when none is judged twice).

        ir_measures' msmarco provider (``RR@k``) counts a document relevant when any of its
        judgments reaches ``rel``: the largest one decides.
        """
        if self.repeated is None:
            return self
        if getattr(self, "_largest", None) is None:  # built once, for every run an evaluator scores
            dod = {}
            q, d = _as_list(self.subtopic_rows[0]), _as_list(self.subtopic_rows[1])
            for qid, doc, g in zip(q, d, self._raw_cols[3].tolist()):
                docs = dod.setdefault(qid, {})
                docs[doc] = max(docs.get(doc, g), g)
            self._largest = _Qrels(dod)
        return self._largest

    def refuse_repeats(self, specs):
        """A ValueError when a document is judged twice for a query and ``specs`` hold gdeval's measures.

        gdeval reads every judgment line: a document counts with its lowest positive
        judgment, and each positive line enters nDCG's ideal ranking, numbers that no single
        judgment per document gives.
        """
        gdeval = [m for m, s in specs.items() if s.provider == "gdeval"]
        if self.repeated is None or not gdeval:
            return
        q, d, row, later = self._repeat()
        raise ValueError(
            f"qrels: document {d!r} is judged twice for query {q!r} (rows {row} and {later} of the qrels, 0-based); "
            f"ir_measures computes {gdeval[0]} with gdeval, which reads both judgments (the lowest positive one "
            "judges the document, and each positive one enters nDCG's ideal ranking); keep one judgment per query "
            "and document, e.g. qrels.drop_duplicates(['query_id', 'doc_id'], keep='last') (the one pytrec_eval "
            "keeps)"
        )

    def _code_grades(self, lens, grades):
        """The distinct grades >= 0 (and 0) ascending, and per query its judged documents per grade.

        ``lens[i]`` judgments of query ``i``, ``grades`` (int64) grouped by query in that order;
        coded once (:func:`rankjit.io._frontend.code_judgments`), for the engine's labels here and for
        :meth:`judged_lookups`.
        """
        from rankjit.io._frontend import code_judgments

        self._coded = coded = code_judgments(lens, grades, 1)
        self.grade_values = gv = coded.grade_values
        top = int(gv[-1])
        if top < 1 << 16:  # grade -> code by a table: the code of the largest grade present <= it
            present = np.zeros(top + 1, dtype=np.int64)
            present[gv] = 1
            self._lut = np.cumsum(present) - 1
        else:
            self._lut = None
        self.dense = bool(top == gv.shape[0] - 1)  # grades 0, 1, ..., n_g - 1: a grade is its code
        self.judged_counts = coded.judged_counts  # sparse: O(judgments)

    def codes(self, labels):
        """Code of each label >= 0 (its index in :attr:`grade_values`)."""
        if self._lut is not None:
            return self._lut[labels]
        return np.searchsorted(self.grade_values, labels)

    def judged_lookups(self, all_judged):
        """:class:`rankjit.io._judged_lookups.JudgedLookups` of these qrels (built once per ``all_judged``), which
        ranks dict runs as trec_eval 9 (or another provider) does by looking only the judged documents up in
        them; None unless the qrels were given as dicts and their grades and ids read compiled."""
        if self._lookup_keys is None:
            return None
        if all_judged not in self._lookups:
            from rankjit.io._judged_lookups import JudgedLookups

            self._lookups[all_judged] = JudgedLookups(self.index, self._lookup_dicts, self._coded, 1, all_judged,
                                                   self._lookup_keys)
        return self._lookups[all_judged]

    @property
    def dod(self):
        """``{query_id: {doc_id: relevance}}`` (the queries with judgments), built on first use unless given."""
        if self._dod is None and self._held_ids is not None:  # (dicts read compiled: rebuilt from what was read)
            lens, grades = self._flat
            docs, vals, b = self._held_ids.objects(), grades.tolist(), np.concatenate(([0], np.cumsum(lens))).tolist()
            self._dod = {q: dict(zip(docs[b[i]:b[i + 1]], vals[b[i]:b[i + 1]]))
                         for i, q in enumerate(self.judged_qids)}
        elif self._dod is None:
            q_off, q_rows, d, grades = self._raw_cols
            d = _as_list(self.subtopic_rows[1] if d is None else d)
            docs = [d[i] for i in q_rows.tolist()]
            vals = grades[q_rows].tolist()
            b = q_off.tolist()
            self._dod = {q: dict(zip(docs[b[i]:b[i + 1]], vals[b[i]:b[i + 1]]))
                         for i, q in enumerate(self.judged_qids)}
        return self._dod

    @functools.cached_property
    def dod_ids_are_str(self):
        """Whether every doc id of :attr:`dod` is exactly a ``str``, which the compiled read of a run asks of the
        dicts it looks documents up in; checked once, as these dicts are this object's own copies."""
        return set(map(type, itertools.chain.from_iterable(self.dod.values()))) <= {str}

    def columns(self):
        """``(q_off, q_rows, StringColumn, hashes, grades)`` of the judged documents grouped by query, or None.

        None when the doc ids are not strings (runs are then read through :attr:`dod`).
        """
        if self._cols is None:
            if not hasattr(self, "_raw_cols"):  # (given as dicts)
                lens, grades = self._flat
                col = _string_column(self._held_ids.objects() if self._dod is None else
                                     list(itertools.chain.from_iterable(self._dod[q] for q in self.judged_qids)))
                q_off = np.zeros(len(self.judged_qids) + 1, np.int64)
                np.cumsum(lens, out=q_off[1:])
                q_rows = np.arange(int(q_off[-1]), dtype=np.int64)
            else:
                q_off, q_rows, _, grades = self._raw_cols
                col = self._doc_col
            self._cols = False if col is None else (q_off, q_rows, col, col.hashes(), grades)
        return self._cols or None


def _evaluate_judgments(specs, qrels, run):
    """:func:`_evaluate`, msmarco's measures on the largest judgment of a document judged twice (see :class:`_Qrels`).

    The other providers read the last judgment.  Both passes report the same queries (the
    same documents are judged), in the run's order.
    """
    largest = {m: s for m, s in specs.items() if s.provider == "msmarco"}
    if qrels.repeated is None or not largest:
        return _evaluate(specs, qrels, run)
    if not isinstance(run, (dict, _RunFile)) and not hasattr(run, "itertuples"):
        run = list(run)  # named tuples, read twice
    qids, values = _evaluate(largest, qrels.largest(), run)
    last = {m: s for m, s in specs.items() if m not in largest}
    if last:
        values.update(_evaluate(last, qrels, run)[1])
    return qids, values


def _group_rows(codes, n_groups):
    """``(offsets, rows)``: the rows grouped by code (-1: dropped), in their order within a group."""
    from rankjit.io import _kernels as K

    return K.group_rows(np.ascontiguousarray(codes, dtype=np.int64), n_groups)


# ------------------------------------------------------------------------------------------------
# a run, labelled against the qrels: (qids, offsets, raw labels, scores) in run order
# ------------------------------------------------------------------------------------------------


class _Batch(NamedTuple):
    """The run's queries that the qrels judge, in order of first appearance in the run.

    ``raw`` holds each document's judgment, :data:`_UNJUDGED` when the qrels do not hold
    it; documents keep their order in the run.  ``doc_at(rows)`` lists the doc ids of rows
    (positions in this order): only ties and the diversity measures read them.  ``dicts``:
    the run's dict of each query when the run is given as dicts (their items in this
    order) and read by the compiled pass, else None; ``positions`` (int32) then says where
    each document is in its dict.
    """

    qids: list
    offsets: np.ndarray
    raw: np.ndarray
    scores: np.ndarray
    doc_at: object
    dicts: list | None = None
    positions: np.ndarray | None = None


def _trec_file_text(generator, reader):
    """The text (bytes) of the file that ``generator``, a call of ir_measures' ``reader``
    (``read_trec_run`` / ``read_trec_qrels``) not yet started, would read; None when it is another
    generator, started, of no path (a ``str`` without a newline) or of a file that does not open.
    ``.gz`` holds gzip data, as ``gzip.open`` reads it.  ir_measures' parser makes one named tuple
    per line (most of a call: 4 ms of every 5 for TREC 2012 Web's run with rankjit registered);
    :func:`rankjit.io._trec.read_split_alike` reads the text where it reads it alike, and the
    generator is read as it is anywhere else (raising ir_measures' own errors).
    """
    import inspect

    if not inspect.isgenerator(generator) or generator.gi_code is not reader.__code__:
        return None
    if inspect.getgeneratorstate(generator) != inspect.GEN_CREATED:
        return None
    path = generator.gi_frame.f_locals.get("file")
    if type(path) is not str or "\n" in path:
        return None
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    if path.endswith(".gz"):
        import gzip
        import zlib

        if raw[:2] != b"\x1f\x8b":
            return None
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error):
            return None
    return raw


def _query_codes(qid):
    """``(query code of each row, the query ids in order of first appearance)`` of a query id column read by
    rankjit's TREC reader."""
    from rankjit.io._trec import query_blocks

    heads, bounds = query_blocks(qid)
    head_codes, uniques = _factorize(heads)
    return np.repeat(head_codes, np.diff(bounds)), uniques


class _RunFile(NamedTuple):
    """A run file read by rankjit's TREC reader in place of ir_measures' ``read_trec_run`` generator
    (:func:`_run_file`): the rows in file order."""

    factorized: tuple  # (query code of each row, the query ids in order of first appearance)
    docs: object  # StringColumn of the doc ids
    scores: np.ndarray  # float64


def _run_file(run, qrels):
    """The rows of ``ir_measures.read_trec_run(path)`` passed as it is, read by rankjit's TREC reader
    (:class:`_RunFile`), or None (:func:`_trec_file_text`, :func:`rankjit.io._trec.read_split_alike`; also
    where the qrels' doc ids are not strings).  The generator is then closed unread: as after ir_measures
    read it, it yields nothing more.
    """
    from ir_measures.util import read_trec_run

    from rankjit.io._trec import read_split_alike

    raw = _trec_file_text(run, read_trec_run)
    if raw is not None and qrels.columns() is None:  # (asked only of files: for dict qrels it lists their ids)
        raw = None
    read = None if raw is None else read_split_alike(raw, "run", run.gi_frame.f_locals["file"])
    if read is None or not len(read[0]):
        return None
    run.close()
    rows = read[0]
    return _RunFile(_query_codes(rows.qid), rows.docno, rows.score)


class _QrelsFile:
    """The judgments of ``ir_measures.read_trec_qrels(path)``, read by rankjit's TREC reader (:func:`_qrels_file`).

    ir_measures' converters take it for a DataFrame (``columns``, ``itertuples``) and hand it
    on as it is; :class:`_Qrels` reads ``read``: ``((query code of each row, the query ids),
    doc ids (StringColumn), judgments (int64))``.  ``rows()`` lists the four fields of the
    ``Qrel`` tuples (the diversity measures read ``iteration``, their subtopic).
    """

    columns = _QREL_FIELDS

    def __init__(self, read, rows):
        self.read = read
        self.rows = rows

    def itertuples(self, index=True, name="Pandas"):
        from ir_measures import Qrel

        return map(Qrel, *self.rows())


def _qrels_file(qrels, measures, pipeline):
    """The judgments of ``ir_measures.read_trec_qrels(path)`` passed as it is to an ir_measures call whose every
    measure the rankjit provider, first in ``pipeline``, computes (no other provider reads them), read by
    rankjit's TREC reader (:class:`_QrelsFile`); None otherwise (:func:`_trec_file_text`,
    :func:`rankjit.io._trec.read_split_alike`).  The generator is then closed unread."""
    from ir_measures.util import read_trec_qrels

    from rankjit.io._trec import _strings, read_split_alike

    if getattr(qrels, "gi_code", None) is not read_trec_qrels.__code__:  # (first the cheap test: any other qrels)
        return None
    first = pipeline.providers[0] if pipeline.providers else None
    if getattr(first, "NAME", None) != NAME or not measures or not all(map(first.supports, measures)):
        return None
    raw = _trec_file_text(qrels, read_trec_qrels)
    read = None if raw is None else read_split_alike(raw, "qrels", qrels.gi_frame.f_locals["file"])
    if read is None or not len(read[0]):
        return None
    qrels.close()
    judged, (buf, it_starts, it_lens) = read

    def rows():
        return (judged.qid.tolist(), judged.docno.tolist(), judged.rel.tolist(),
                _strings(buf, it_starts, it_lens).tolist())

    return _QrelsFile((_query_codes(judged.qid), judged.docno, judged.rel), rows)


def _batch(qrels, run):
    if type(run) is _RunFile:  # (its qrels hold string doc ids: _run_file)
        return _columnar_batch(qrels, run.factorized, run.docs, run.scores, qrels.columns())
    kind, obj = _kind(run, "run")
    if kind == "dict_of_dict":
        return _dict_batch(qrels, obj)
    fields = ("query_id", "doc_id", "score")
    cols = qrels.columns()
    if kind == "pd_dataframe":
        q, d, s = _frame_columns(obj, fields)
    else:
        # a list of its own (a copy of the caller's list: a memcpy), whose rows keep their ids alive between the
        # compiled read and the gathering of the ids' bytes, whatever another thread does to the caller's list
        rows = list(obj)
        read = _read_rows(rows, fields) if cols is not None else None
        if read is not None:
            _no_nan(read[2], lambda i: tuple(getattr(rows[i], f) for f in fields))
            return _columnar_batch(qrels, *read, cols)
        q, d, s = _tuple_columns(rows, fields)
    scores = _scores(s, lambda i: (_item(q, i), _item(d, i), _item(s, i)))
    dcol = _string_column(d) if cols is not None else None
    if dcol is None:  # ids that are not strings: ir_measures' dict form
        docs = _as_list(d)
        codes, uniques = _factorize(q)
        off, rows = _group_rows(codes, len(uniques))
        b = off.tolist()
        r, v = rows.tolist(), scores[rows].tolist()
        dod = {u: dict(zip([docs[i] for i in r[b[k]:b[k + 1]]], v[b[k]:b[k + 1]])) for k, u in enumerate(uniques)}
        return _dict_batch(qrels, dod)
    return _columnar_batch(qrels, _factorize(q), dcol, scores, cols)


def _read_rows(rows, fields, ints=False):
    """``(query codes and ids, doc ids, values)`` of named tuples (a run's scores, or the qrels' judgments when
    ``ints``), read by one compiled pass (:func:`rankjit.io._dicts.rows_read`): the query codes and ids as
    :func:`_factorize` gives them, the doc ids as a StringColumn; None where that pass cannot read the rows (the
    Python way then applies every rule).  A query's rows need not be consecutive.  ``fields``: the names of the
    query id, doc id and value fields."""
    from rankjit.io._dicts import rows_read

    if not rows or not all(f in getattr(rows[0], "_fields", ()) for f in fields):
        return None
    qf, df, vf = map(rows[0]._fields.index, fields)
    read = rows_read(rows, qf, df, vf, ints=ints)
    if read is None:
        return None
    new_query, dcol, values = read
    heads = np.flatnonzero(new_query)  # the first row of each block of rows of one query
    head_codes, uniques = _factorize([rows[i][qf] for i in heads.tolist()])
    codes = np.repeat(head_codes, np.diff(np.append(heads, len(rows))))
    return (codes, uniques), dcol, values


def _dict_batch(qrels, run_dod):
    """Labels looked up in the qrels' dicts one block of queries at a time, then the scores (still in cache)."""
    index = qrels.index
    _require_kinds(list(run_dod), qrels.query_id_kinds, "run: query id")
    qids = [q for q in run_dod if q in index]
    dicts = [run_dod[q] for q in qids]
    lens = np.fromiter(map(len, dicts), np.int64, len(dicts))
    offsets = np.zeros(len(qids) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    n = int(offsets[-1])
    dod = qrels.dod
    getters = [dod[q].get for q in qids]
    raw = np.empty(n, np.int64)
    scores = np.empty(n, np.float64)
    off = offsets.tolist()
    unjudged = itertools.repeat(itertools.repeat(_UNJUDGED))  # dict.get(doc, _UNJUDGED) for every document
    chain = itertools.chain.from_iterable
    positions = np.empty(n, np.int32)  # (where each document is in its dict: read by the compiled ties)
    compiled = _read_compiled(qrels, qids, dicts, offsets, raw, scores, positions)
    kinds = qrels.doc_id_kinds
    if not compiled and kinds and not _id_kinds(itertools.chain.from_iterable(dicts)) <= kinds:
        for q, d in zip(qids, dicts):  # (the compiled pass reads exactly str ids alone)
            _require_kinds(list(d), kinds, "run: document id", lambda i, q=q: q)
    for b in range(0, 0 if compiled else len(qids), _BLOCK):
        e = min(b + _BLOCK, len(qids))
        lo, hi = off[b], off[e]
        block = dicts[b:e]
        raw[lo:hi] = np.fromiter(chain(map(map, getters[b:e], block, unjudged)), np.int64, hi - lo)
        try:
            scores[lo:hi] = np.fromiter(chain(map(dict.values, block)), np.float64, hi - lo)
        except (TypeError, ValueError):
            q, d, s = next((q, d, s) for q, x in zip(qids[b:e], block) for d, s in x.items() if not _number(s))
            raise TypeError(f"run: score of document {d!r} for query {q!r} must be a number, got {s!r}") from None

    def where(i):
        k = int(np.searchsorted(offsets, i, side="right")) - 1
        doc = next(itertools.islice(iter(dicts[k]), i - off[k], None))
        return qids[k], doc, dicts[k][doc]

    _no_nan(scores, where)

    def doc_at(rows):
        keys = {}
        ks = (np.searchsorted(offsets, rows, side="right") - 1).tolist()
        for k in set(ks):
            keys[k] = list(dicts[k])
        return [keys[k][r - off[k]] for k, r in zip(ks, np.asarray(rows).tolist())]

    return _Batch(qids, offsets, raw, scores, doc_at, dicts, positions) if compiled else _Batch(
        qids, offsets, raw, scores, doc_at)


def _read_compiled(qrels, qids, dicts, offsets, raw, scores, positions):
    """Whether one compiled pass (:func:`rankjit.io._dicts.scores_and_judgments`) filled ``raw`` and
    ``scores`` (what :func:`_dict_batch`'s Python loop fills) and ``positions``; False where it cannot read
    the dicts (ids not exactly str, scores not floats, judgments not ints, no JIT), and the Python loop then
    applies every rule."""
    from rankjit.io._dicts import scores_and_judgments

    if not qrels.dod_ids_are_str:
        return False
    dod = qrels.dod
    judgments = [dod[q] for q in qids]  # (held for the call, as dicts is)
    return scores_and_judgments(dicts, offsets, judgments, _UNJUDGED, raw, scores, positions, ids_checked=True)


def _columnar_batch(qrels, factorized, dcol, scores, cols):
    """Labels by a hash join of the doc ids (bytes) with the qrels' ones, query by query, in a compiled loop
    (ranges of queries on threads for large runs).

    ``factorized``: ``(codes, ids)`` of the rows' query ids (:func:`_factorize`).
    """
    from rankjit._config import run_blocks, use_parallel

    codes, uniques = factorized
    _require_kinds(uniques, qrels.query_id_kinds, "run: query id")
    get = qrels.index.get
    qmap_u = np.fromiter(map(get, uniques, itertools.repeat(-1)), np.int64, len(uniques))
    evaluated = qmap_u >= 0
    pos_u = np.full(len(uniques), -1, np.int64)
    pos_u[evaluated] = np.arange(int(evaluated.sum()))
    qids = [u for u, e in zip(uniques, evaluated.tolist()) if e]
    offsets, rrow = _group_rows(pos_u[codes], len(qids))
    sc = scores[rrow]
    raw = np.empty(rrow.shape[0], np.int64)
    keep = np.ones(rrow.shape[0], bool)
    q_off, q_rows, qcol, q_hash, grades = cols
    qmap = qmap_u[evaluated]
    hashes = np.empty(rrow.shape[0], np.uint64)
    repeats = []

    def join(i_lo, i_hi):  # (each range of queries writes only its own rows)
        repeats.append(_join(i_lo, i_hi, offsets, rrow, dcol.data, dcol.offsets, sc, qmap, q_off, q_rows, qcol.data,
                             qcol.offsets, q_hash, grades, raw, keep, hashes))

    run_blocks(join, len(qids), use_parallel(len(qids)))
    n_dup = sum(repeats)
    if n_dup:  # a document listed twice keeps its first place and its last score (ir_measures' dict form)
        counts = np.add.reduceat(keep.astype(np.int64), offsets[:-1]) if keep.size else keep.astype(np.int64)
        counts[np.diff(offsets) == 0] = 0
        offsets = np.zeros(len(qids) + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        rrow, sc, raw = rrow[keep], sc[keep], raw[keep]

    def doc_at(rows):  # (no pyarrow: importing it, and pandas with it, would cost a first call ~0.15 s)
        return dcol.take(rrow[np.asarray(rows, np.int64)]).tolist()

    return _Batch(qids, offsets, raw, sc, doc_at)


def _aligned(qrels, batch):
    """:class:`rankjit.io.AlignedRun` of a batch (documents in run order: ties are resolved when evaluating)."""
    from rankjit.io._align import AlignedRun

    raw = batch.raw
    gv = qrels.grade_values
    n = raw.shape[0]
    judged = np.empty(n, bool)
    below = np.empty(n, bool)
    if qrels.dense and gv.shape[0] <= 256:  # grades 0..k, k < 256: a grade is its code, and uint8
        labels = np.empty(n, np.uint8)
        _split_raw(raw, labels, judged, below)
        codes = labels
    else:
        labels = np.empty(n, np.int64)
        _split_raw(raw, labels, judged, below)
        codes = qrels.codes(labels).astype(np.uint8 if gv.shape[0] <= 256 else np.int32)
    rows = np.fromiter(map(qrels.index.__getitem__, batch.qids), np.int64, len(batch.qids))
    judged_counts = qrels.judged_counts.take(rows)
    return AlignedRun(
        qids=batch.qids, offsets=batch.offsets, labels=labels, scores=batch.scores,
        rows=np.broadcast_to(np.int64(-1), (n,)),  # no run file behind these rows (nothing here reads them)
        n_relevant=judged_counts.at_least(np.searchsorted(gv, 1)), in_run=np.ones(len(batch.qids), bool),
        grade_values=gv, grade_codes=codes, judged_counts=judged_counts, judged=judged, judged_below_zero=below,
    )


def _evaluate(specs, qrels, run):
    """``(qids, {measure: per-query values})`` for the run's queries that the qrels judge (run order)."""
    top = int(qrels.grade_values[-1])
    err = next((m for m, s in specs.items() if m.NAME == "ERR"), None)
    if err is not None and top > 4:
        raise ValueError(f"{err}: ir_measures computes ERR with gdeval, whose judgments go up to 4 (its gain "
                         f"(2^g - 1) / 16); the qrels hold {top} (gdeval fails on them too)")
    looked_up = _evaluate_dict_lookups(specs, qrels, run)
    if looked_up is not None:
        return looked_up
    batch = _batch(qrels, run)
    if not batch.qids:
        return [], {m: np.zeros(0) for m in specs}
    al64 = _aligned(qrels, batch)
    groups = {}
    for m, s in specs.items():
        groups.setdefault((s.order, s.provider == "pytrec_eval"), []).append(m)
    out = {}
    for (order, single), ms in groups.items():
        names = list(dict.fromkeys(specs[m].name for m in ms))
        # pytrec_eval (trec_eval 9) keeps scores as C floats: scores equal in float32 tie there
        al = _float32_scores(al64) if single else al64
        if order == "div":
            out.update(_evaluate_diversity({m: specs[m] for m in ms}, qrels, al, batch))
            continue
        if order == "input":
            vals = _evaluate_input_order(al, names, [specs[m].cap for m in ms])
        else:  # ties by doc_id (descending: trec_eval's order)
            vals = _evaluate_by_doc_id(al, batch, names, any(specs[m].reads_nonrelevant for m in ms),
                                       order == "trec", _depth(specs[m] for m in ms))
        _store(out, specs, ms, vals, al)
    return al.qids, out


#: the providers whose rankings of dict runs _evaluate_dict_lookups builds
_LOOKED_UP = ("pytrec_eval", "gdeval", "msmarco", "judged")


def _one_looked_up_ranking(specs):
    """``(float32, descending)``: the one ranking of dict runs the measures ``specs`` read, which
    :func:`_evaluate_dict_lookups` builds from the judged documents alone; None when they read several, or one of
    another provider."""
    if any(s.provider not in _LOOKED_UP for s in specs.values()):
        return None
    rankings = {(s.provider == "pytrec_eval", s.order == "trec") for s in specs.values()}
    return next(iter(rankings)) if len(rankings) == 1 else None


def _evaluate_dict_lookups(specs, qrels, run):
    """:func:`_evaluate` of a dict run ranked from the judged documents alone, when the measures read one
    ranking; else None.

    Only the judged documents (of grade > 0, unless a measure tells a judged document of
    grade <= 0 from an unjudged one) are looked up in the run's dicts and placed among its
    scores (:meth:`_Qrels.judged_lookups`), as the provider of the measures ranks them:
    pytrec_eval (float32 scores, ties by doc_id descending: the ranking of
    ``rankjit.compat.pytrec_eval``), gdeval (float64, descending), msmarco or judged (float64,
    ascending; for ``Judged@k`` alone, the documents of the top k alone are placed).  None
    when the measures follow several rankings (placing the documents twice then costs more
    than reading every document once: 0.71x at 20k synthetic queries, at 02a1040), or cwl_eval's
    (the run's order) or pyndeval's, and where the compiled pass cannot read the run or qrels
    (runs or qrels not given as dicts, ids not exactly str, scores not floats, a NaN, no JIT):
    :func:`_evaluate` then reads every document, and applies every rule and message.
    """
    ranking = _one_looked_up_ranking(specs)
    if not isinstance(run, dict) or ranking is None:
        return None
    float32, descending = ranking
    judgments = qrels.judged_lookups(any(s.reads_nonrelevant for s in specs.values()))
    if judgments is None:
        return None
    _require_kinds(list(run), qrels.query_id_kinds, "run: query id")
    index = judgments.qindex
    qids = [q for q in run if q in index]
    if not qids:
        return None
    dicts = [run[q] for q in qids]
    if not set(map(type, dicts)) <= {dict}:
        return None  # (the run's other readers name what is wrong)
    al = judgments.align(qids, dicts, np.fromiter(map(index.__getitem__, qids), np.int64, len(qids)),
                         float32=float32, descending=descending, depth=_depth(specs.values()))
    if al is None:
        return None
    names = list(dict.fromkeys(s.name for s in specs.values()))
    out = {}
    _store(out, specs, list(specs), al.evaluate(names, per_query=True, ties="stable"), al)
    return al.qids, out


def _depth(specs):
    """The ranks the measures of ``specs`` read: the largest ``depth``, or None (every rank) if one reads every rank."""
    depths = [s.depth for s in specs]
    return None if None in depths else max(depths)


def _store(out, specs, ms, vals, al):
    """``out[m]``: the values of the measures ``ms`` (scaled), from ``vals`` (by rankjit's measure string) on ``al``."""
    for m in ms:
        s = specs[m]
        v = vals[s.name]
        out[m] = v * s.scale if s.scale != 1.0 else v
        if m.NAME == "IPrec":
            _iprec_of_nothing(m, out[m], al)


def _evaluate_by_doc_id(al, batch, names, all_judged, descending, depth=None):
    """Per-query values of ``names`` with equal scores ordered by doc_id (descending or ascending); the
    measures read the first ``depth`` ranks alone (None: every rank).

    Where no two documents of equal score differ in judgment (:func:`_mixed_ties`), every
    order of the ties gives the same values: one evaluation (``ties="pessimistic"``) serves
    those queries.  The others are ranked by doc_id (:func:`_ranked`) and evaluated again;
    when they are most queries, all queries are ranked by doc_id and evaluated once instead
    (the same values, one evaluation fewer).
    """
    which = np.flatnonzero(_queries_with_mixed_ties(al.offsets, al.scores, batch.raw))
    if 2 * which.size > al.n_queries:
        return _ranked(al, batch.doc_at, batch.dicts, batch.positions, all_judged, descending, depth).evaluate(
            names, per_query=True, ties="stable")
    vals = al.evaluate(names, per_query=True, ties="pessimistic")
    if which.size:
        cut, rows = al.queries(which)
        dicts, positions = (None, None) if batch.dicts is None else ([batch.dicts[g] for g in which.tolist()],
                                                                     batch.positions[rows])
        fixed = _ranked(cut, lambda r: batch.doc_at(rows[r]), dicts, positions, all_judged, descending,
                        depth).evaluate(names, per_query=True, ties="stable")
        for name in names:
            vals[name][which] = fixed[name]
    return vals


def _queries_with_mixed_ties(offsets, scores, tags):
    """Whether each query holds two documents of equal score and different tag (bool, compiled:
    :func:`rankjit._kernels.frontends._mixed_ties`, blocks of queries on threads)."""
    from rankjit._config import run_blocks, use_parallel
    from rankjit._kernels.strings import table_size

    n_q = offsets.shape[0] - 1
    mixed = np.zeros(n_q, dtype=np.bool_)
    # the table of the longest query (table_size's rule, run as Python: nothing to compile)
    size = getattr(table_size, "py_func", table_size)(int(np.diff(offsets).max(initial=0)))

    def find(q_lo, q_hi):  # scratch of its own per call: ranges run on threads
        _mixed_ties(q_lo, q_hi, offsets, scores, tags, np.full(size, -1, dtype=np.int64),
                    np.empty(size, dtype=np.int64), mixed)

    run_blocks(find, n_q, use_parallel(n_q))
    return mixed


def _ranked(al, doc_at, dicts, positions, all_judged, descending, depth=None):
    """``al`` (documents in run order) ranked: score descending, equal scores by doc_id (descending or ascending).

    trec_eval (pytrec_eval, gdeval) breaks ties by doc_id descending, msmarco and judged
    ascending.  Only the judged documents are placed (those of grade > 0 unless
    ``all_judged``: the measures tell a judged document of grade <= 0 from an unjudged one),
    each after the documents of higher score (:func:`rankjit._kernels.frontends._place_judged`)
    and, among equal scores, after those whose doc_id comes first (:func:`_place_tied`); the
    other places hold unjudged documents, whose order among themselves changes no measure.
    The ranking is given by the scores ``0, -1, -2, ...`` (evaluate it with ``ties="stable"``); with a
    ``depth``, only its first ``depth`` ranks (those the measures read) hold the judged documents there.
    ``dicts``: the run's dict of each query (its items in the order of ``al``'s rows), which
    :func:`_place_tied` then reads in a compiled pass at ``positions`` (where each row is in
    its dict), or None.
    """
    import dataclasses

    from rankjit._config import run_blocks, use_parallel
    from rankjit._kernels.frontends import _place_judged, place_judged_scratch

    offsets = al.offsets
    n_q, n = al.n_queries, al.scores.shape[0]
    rows = np.flatnonzero(al.judged | al.judged_below_zero if all_judged else al.grade_codes > 0)
    j_off = np.searchsorted(rows, offsets)  # query g's placed documents: rows[j_off[g]:j_off[g + 1]]
    j_score = al.scores[rows]
    j_label = rows + 1  # what _place_judged writes at a document's rank: 1 + its row
    at = np.zeros(n, dtype=np.int64)  # at[p] = 1 + the row placed at rank p (0: an unjudged document)
    above = np.full(rows.shape[0], -1, dtype=np.int64)
    tied = np.zeros(n_q, dtype=bool)
    member = np.zeros(n, dtype=bool)
    most = int(np.diff(j_off).max(initial=0)) + 1
    longest = int(np.diff(offsets).max(initial=0))

    reach = longest if depth is None else depth

    def place(g_lo, g_hi):  # scratch of its own per call: ranges run on threads
        _place_judged(g_lo, g_hi, offsets, al.scores, j_off, j_score, j_label, at, above, tied, member,
                      *place_judged_scratch(most, longest, reach), reach)

    run_blocks(place, n_q, use_parallel(n_q))
    if tied.any():
        _place_tied(offsets, al.scores, rows, j_off, above, member, at, doc_at, dicts, positions, descending)
    placed = np.flatnonzero(at)
    src = at[placed] - 1

    def moved(values):
        out = np.zeros(n, dtype=values.dtype)
        out[placed] = values[src]
        return out

    return dataclasses.replace(al, labels=moved(al.labels), scores=np.arange(0, -n, -1, dtype=np.float64),
                               grade_codes=moved(al.grade_codes), judged=moved(al.judged),
                               judged_below_zero=moved(al.judged_below_zero))


def _place_tied(offsets, scores, rows, j_off, above, member, at, doc_at, dicts, positions, descending):
    """Rank of each placed document whose score others share (``above[t] >= 0``): after the ``above[t]``
    documents of higher score and after the documents of its score whose doc_id comes first (greater ones
    when ``descending``).  ``member`` marks every document of such a score; the ids are compared in a
    compiled pass over ``dicts`` at ``positions`` (:func:`rankjit.io._dicts.place_tied_by_id`) where it can read
    them, else
    in Python (:func:`rankjit.io._judged_lookups.ids_first`) through ``doc_at(rows)``."""
    from rankjit.io._judged_lookups import ids_first

    need = np.flatnonzero(above >= 0)
    need_rows = rows[need]
    need_q = np.searchsorted(j_off, need, side="right") - 1
    if dicts is not None:
        from rankjit.io._dicts import place_tied_by_id

        if place_tied_by_id(dicts, need, need_q, offsets, scores, member, scores[rows], rows + 1, above, at,
                            positions, need_row=need_rows, descending=descending):
            return
    members = np.flatnonzero(member)
    member_ids = doc_at(members)  # (the tied placed documents are members)
    need_ids = map(member_ids.__getitem__, np.searchsorted(members, need_rows).tolist())
    members_q = np.searchsorted(offsets, members, side="right") - 1
    first = ids_first(zip(zip(need_q.tolist(), scores[need_rows].tolist()), need_ids),
                      zip(zip(members_q.tolist(), scores[members].tolist()), member_ids), descending)
    at[offsets[need_q] + above[need] + np.asarray(first, dtype=np.int64)] = need_rows + 1


def _float32_scores(al):
    """``al`` with its scores rounded to float32 and back, as trec_eval 9 (pytrec_eval) keeps them (C ``float``).

    Beyond float32's range a score is infinite, as C's cast makes it; the rank order of
    the rows (run order) is unchanged: ties are resolved when evaluating.
    """
    import dataclasses

    with np.errstate(over="ignore"):
        rounded = al.scores.astype(np.float32).astype(np.float64)
    return dataclasses.replace(al, scores=rounded)


def _evaluate_input_order(al, names, caps):
    """Per-query values, equal scores in the run's order (cwl_eval's).

    With grades too large for an ideal-count table, the labels are capped at the largest
    grade the measures tell apart (``caps``: ``max_rel``, RBP's ``rel``); none of them reads
    an ideal ranking.
    """
    if al.ideal_counts_size <= al.IDEAL_COUNTS_LIMIT:
        return al.evaluate(names, per_query=True, ties="stable")
    import rankjit

    labels = np.minimum(al.labels, max(caps))  # clip(min(y, c), lo, hi) = clip(y, lo, hi) for c >= hi
    return rankjit.evaluate(labels, al.scores, names, offsets=al.offsets, per_query=True, ties="stable")


def _iprec_of_nothing(measure, values, al):
    """trec_eval 9 (pytrec_eval) on a query that retrieves nothing (with ``judged_only``: nothing judged).

    Its interpolated precision starts from 0 / 0: NaN at the recall levels whose
    ``(long) (level * R + 0.9)`` is 0, where R counts the relevant documents; 0 at the others.
    """
    n = np.diff(al.offsets)
    if measure["judged_only"]:
        kept = np.concatenate(([0], np.cumsum(al.judged)))
        n = kept[al.offsets[1:]] - kept[al.offsets[:-1]]
    empty = n == 0
    if empty.any():
        r = al.judged_counts.at_least(np.searchsorted(al.grade_values, measure["rel"]))
        level = float(f"{measure['recall']:.2f}")
        values[empty & (np.floor(level * r + 0.9) == 0)] = np.nan


# ------------------------------------------------------------------------------------------------
# diversity measures: subtopic qrels (the qrels' iteration field), ranked as pyndeval ranks
# ------------------------------------------------------------------------------------------------


def _subtopic_rows(qrels):
    """``(query_id, subtopic, doc_id, relevance)`` lists of the qrels (subtopic ``'0'`` without an iteration field)."""
    rows = qrels.subtopic_rows
    if rows is None:
        q, d, r = [], [], []
        for qid, docs in qrels.dod.items():
            q.extend(itertools.repeat(qid, len(docs)))
            d.extend(docs)
            r.extend(docs.values())
        return q, ["0"] * len(q), d, r

    q, d, r, it = rows
    return _as_list(q), (["0"] * len(q) if it is None else _as_list(it)), _as_list(d), _as_list(r)


def _evaluate_diversity(specs, qrels, al, batch):
    """Diversity measures through :func:`rankjit.io.align_diversity`, per query of ``al``."""
    import rankjit
    import rankjit.diversity  # noqa: F401  (registers the diversity measures)
    from rankjit.io._align import NoCommonQuery, align_diversity
    from rankjit.io._trec import DiversityQrels, StringColumn, TrecRun

    q, sub, d, r = _subtopic_rows(qrels)
    topics = {}  # pyndeval numbers subtopics in order of first appearance, over all queries
    sub_codes = np.fromiter(map(topics.setdefault, sub, itertools.count()), np.int64, len(sub))
    per_query = {}
    for qq, s in zip(q, sub):
        per_query.setdefault(qq, set()).add(s)
    if all(len(x) <= 1 for x in per_query.values()):
        sys.stderr.write("WARNING: All queries have only 1 subtopic! The results from this metric are probably not "
                         "valid. Make sure that you are using diversity qrels, and that they are provided as a "
                         "dataframe (with iteration column) or an iterable of GenericQrel (with iteration).\n")
    rel = np.asarray(r, dtype=np.int64)
    qcol, dcol = StringColumn.from_list([str(x) for x in q]), StringColumn.from_list([str(x) for x in d])
    # the run as pyndeval ranks it: score descending, ties by doc_id ascending; score := -rank
    rq, rd, rs = [], [], []
    off = batch.offsets.tolist()
    all_docs = batch.doc_at(np.arange(off[-1]))
    for i in range(len(batch.qids)):
        docs = all_docs[off[i]:off[i + 1]]
        ranked = sorted(zip(docs, batch.scores[off[i]:off[i + 1]].tolist()), key=lambda x: (-x[1], x[0]))
        rq.extend(itertools.repeat(str(batch.qids[i]), len(ranked)))
        rd.extend(str(x[0]) for x in ranked)
        rs.extend(range(0, -len(ranked), -1))
    run = TrecRun.from_columns(rq, rd, np.asarray(rs, dtype=np.float64))
    pos = {str(x): i for i, x in enumerate(al.qids)}
    out = {}
    by_rel = {}
    for m, s in specs.items():
        by_rel.setdefault(s.rel, []).append(m)
    for threshold, ms in by_rel.items():
        div = DiversityQrels(qcol, sub_codes, dcol, (rel >= threshold).astype(np.int64))
        try:
            ad = align_diversity(div, run)
        except NoCommonQuery:  # (every query's run empty: each value 0, as ir_measures reports them)
            ad = None
        for jo in (False, True):
            group = [m for m in ms if specs[m].judged_only == jo]
            if not group:
                continue
            vals = {m: np.zeros(al.n_queries) for m in group}
            if ad is not None:
                names = list(dict.fromkeys(specs[m].name for m in group))
                labels = ad.nuggets.sum(axis=2, dtype=np.int64)
                kw = dict(mask=ad.judged) if jo else dict(lengths=ad.lengths)
                got = rankjit.evaluate(labels, ad.scores, names, nuggets=ad.nuggets, ideal=ad.ideal,
                                       ties="stable", per_query=True, **kw)
                at = np.fromiter((pos[x] for x in ad.qids), np.int64, len(ad.qids))
                for m in group:
                    vals[m][at] = got[specs[m].name]
            out.update(vals)
    return out


# ------------------------------------------------------------------------------------------------
# the provider and its evaluator (ir_measures' base classes, defined on first use)
# ------------------------------------------------------------------------------------------------


def _first_provider(specs):
    """The name of the first provider, in ir_measures' default pipeline, of the call that asks for ``specs``.

    ir_measures reports every measure of a call that several providers share for the queries of
    the first one's evaluator.  The call's other measures (``_CALL_MEASURES``, recorded while
    registered) go to the providers ir_measures gives them: the first available one of its
    pipeline that supports each, as its ``FallbackProvider`` assigns them.  Used directly, the
    provider knows its own measures alone.
    """
    import ir_measures  # (imported already: the evaluator's class comes from it)

    used = {s.provider for s in specs.values()}
    others = [m for m in _CALL_MEASURES.get() if m not in specs]
    chain = [p for p in ir_measures.DefaultPipeline.providers if getattr(p, "NAME", None) != NAME]
    order = [p.NAME for p in chain]
    for p in chain:
        if not others:
            break
        taken = [m for m in others if p.supports(m)]
        if taken and p.is_available():
            used.add(p.NAME)
            others = [m for m in others if m not in taken]
    return min(used, key=lambda name: order.index(name) if name in order else len(order))


def _recording_evaluator(pipeline):
    """``pipeline._evaluator`` (ir_measures' ``FallbackProvider``) that records the call's measures in
    ``_CALL_MEASURES`` while it builds the evaluators (see :func:`_first_provider`)."""
    build = type(pipeline)._evaluator.__get__(pipeline)

    def _evaluator(measures, qrels):
        measures = list(measures)
        qrels = _qrels_file(qrels, measures, pipeline) or qrels  # ir_measures.read_trec_qrels(path): read here
        token = _CALL_MEASURES.set(tuple(measures))
        try:
            return build(measures, qrels)
        finally:
            _CALL_MEASURES.reset(token)

    _evaluator.rankjit_records_the_call = True
    return _evaluator


def _classes():
    """``(RankjitProvider, RankjitEvaluator)``: defined once, importing ir_measures."""
    with _LOCK:
        if _STATE["classes"] is not None:
            return _STATE["classes"]
        evaluator = _evaluator_class()
        _STATE["classes"] = (_provider_class(evaluator), evaluator)
        return _STATE["classes"]


def _evaluator_class():
    """``RankjitEvaluator``, on ir_measures' ``Evaluator`` (imported here, on first use).

    Long as one class is: its methods are short, and the class is defined in a function
    because its base class comes from ir_measures, which ``rankjit.integrations.ir_measures``
    imports only when the provider is first used.
    """
    import ir_measures
    from ir_measures.measures.base import MeanAgg, SumAgg

    class RankjitEvaluator(ir_measures.providers.Evaluator):
        """Scores runs against qrels read once (see the module docstring)."""

        def __init__(self, measures, qrels):
            self._measures = list(dict.fromkeys(measures))
            self._specs = {m: _spec(m) for m in self._measures}
            unsupported = [m for m, s in self._specs.items() if s is None]
            if unsupported:
                raise ValueError(f"rankjit does not compute {unsupported}; use ir_measures' default pipeline "
                                 "(rankjit.integrations.ir_measures.register() puts rankjit in front of it)")
            with _no_gc():  # (dict qrels: copied when the measures read dict runs through the dicts)
                self._qrels = _Qrels(qrels, copy=_one_looked_up_ranking(self._specs) is None)
            self._qrels.refuse_repeats(self._specs)  # a document judged twice: gdeval's measures refuse it
            # the queries reported: those of the provider ir_measures would use, and those of the call's first
            # provider (ir_measures' FallbackEvaluator reports every measure for its queries)
            everyone = _first_provider(self._specs) in _EVERY_KEY
            self._everyone = {m: s.all_qrels_queries or everyone for m, s in self._specs.items()}
            super().__init__(self._measures, set(self._qrels.keys if everyone else self._qrels.judged_qids))

        def _results(self, run):
            """``(qids, values, missing)``: values per query of ``qids``; missing[m]: the others reported."""
            run = _run_file(run, self._qrels) or run  # ir_measures.read_trec_run(path): read here
            with _no_gc():
                qids, values = _evaluate_judgments(self._specs, self._qrels, run)
            done = set(qids)
            everyone = [q for q in self._qrels.keys if q not in done]
            judged = [q for q in self._qrels.judged_qids if q not in done]
            missing = {m: everyone if self._everyone[m] else judged for m in self._measures}
            return qids, values, missing

        def iter_calc(self, run):
            yield from self._metrics(run)

        def _metrics(self, run):
            """Every Metric: the evaluated queries (run order), then the others with the default value."""
            qids, values, missing = self._results(run)
            Metric = ir_measures.Metric
            with _no_gc():
                out = []
                if qids:
                    cols = [values[m].tolist() for m in self._measures]
                    n_m = len(self._measures)
                    q_rep = itertools.chain.from_iterable(map(itertools.repeat, qids, itertools.repeat(n_m)))
                    m_rep = itertools.chain.from_iterable(itertools.repeat(self._measures, len(qids)))
                    # Metric(query_id, measure, value) made as tuple.__new__(Metric, triple): _make's length check
                    # would test each triple (3 items by construction), a fifth of the time of 100k Metrics
                    make = functools.partial(tuple.__new__, Metric)
                    out = list(map(make, zip(q_rep, m_rep, itertools.chain.from_iterable(zip(*cols)))))
                for m in sorted(self._measures, key=str):
                    out.extend(Metric(query_id=q, measure=m, value=m.DEFAULT) for q in sorted(missing[m]))
            return out

        def _iter_calc(self, run):
            return self.iter_calc(run)

        def calc_aggregate(self, run):
            _, values, missing = self._results(run)
            return {m: self._aggregate(m, values[m], len(missing[m])) for m in self._measures}

        def _aggregate(self, m, vals, n_missing):
            agg = m.aggregator()
            if type(agg) is MeanAgg:
                n = vals.shape[0] + n_missing
                if n == 0:
                    return agg.result()
                return float((vals.sum() + m.DEFAULT * n_missing) / n)
            if type(agg) is SumAgg:
                if vals.shape[0] + n_missing == 0:
                    return agg.result()
                return float(vals.sum() + m.DEFAULT * n_missing)
            for v in vals.tolist():
                agg.add(v)
            for _ in range(n_missing):
                agg.add(m.DEFAULT)
            return agg.result()

        def calc(self, run):
            metrics = self._metrics(run)
            aggs = {m: m.aggregator() for m in self._measures}
            for x in metrics:
                aggs[x.measure].add(x.value)
            return ir_measures.CalcResults({m: a.result() for m, a in aggs.items()}, metrics)

    return RankjitEvaluator


def _provider_class(evaluator):
    """``RankjitProvider``, on ir_measures' ``Provider``: the families it takes; ``evaluator`` scores them."""
    import ir_measures
    from ir_measures import measures as M
    from ir_measures.providers.base import Any, Choices, NOT_PROVIDED

    class RankjitProvider(ir_measures.providers.Provider):
        """rankjit: compiled kernels, ir_measures' numbers (``rankjit.integrations.ir_measures``)."""

        NAME = NAME
        SUPPORTED_MEASURES = [
            M._P(cutoff=Any(required=True), rel=Any(), judged_only=Any()),
            M._R(cutoff=Any(required=True), rel=Any(), judged_only=Any()),
            M._Success(cutoff=Any(required=True), rel=Any(), judged_only=Any()),
            M._RR(cutoff=Any(), rel=Any(), judged_only=Any()),
            M._AP(cutoff=Any(), rel=Any(), judged_only=Any()),
            M._Rprec(rel=Any(), judged_only=Any()),
            M._nDCG(cutoff=Any(), dcg=Any(), gains=Any(), judged_only=Any()),
            M._ERR(cutoff=Any(required=True)),
            M._RBP(cutoff=Choices(NOT_PROVIDED), rel=Any(required=True), p=Any()),
            M._SetP(rel=Any(), relative=Any(), judged_only=Any()),
            M._SetR(rel=Any()),
            M._SetF(rel=Any(), beta=Any(), judged_only=Any()),
            M._SetAP(rel=Any(), judged_only=Any()),
            M._IPrec(recall=Any(required=True), rel=Any(), judged_only=Any()),
            M._NumQ(),
            M._NumRet(rel=Any()),
            M._NumRel(rel=Choices(1)),
            M._Judged(cutoff=Any()),
            M._Bpref(rel=Any()),
            M._infAP(rel=Any()),
            M._SDCG(cutoff=Any(required=True), dcg=Any(), min_rel=Any(), max_rel=Any(required=True)),
            M._BPM(cutoff=Any(), T=Any(), min_rel=Any(), max_rel=Any(required=True)),
            M._NERR8(cutoff=Any(required=True), min_rel=Any(), max_rel=Any(required=True)),
            M._NERR9(cutoff=Any(required=True), min_rel=Any(), max_rel=Any(required=True)),
            M._NERR10(p=Any(), min_rel=Any(), max_rel=Any(required=True)),
            M._NERR11(T=Any(), min_rel=Any(), max_rel=Any(required=True)),
            M._INST(T=Any(), min_rel=Any(), max_rel=Any(required=True)),
            M._INSQ(T=Any(), min_rel=Any(), max_rel=Any(required=True)),
            M._ERR_IA(cutoff=Any(required=True), rel=Any(), judged_only=Any()),
            M._nERR_IA(cutoff=Any(required=True), rel=Any(), judged_only=Any()),
            M._alpha_DCG(cutoff=Any(required=True), alpha=Any(), rel=Any(), judged_only=Any()),
            M._alpha_nDCG(cutoff=Any(required=True), alpha=Any(), rel=Any(), judged_only=Any()),
            M._NRBP(alpha=Any(), beta=Any(), rel=Any()),
            M._nNRBP(alpha=Any(), beta=Any(), rel=Any()),
            M._AP_IA(rel=Any(), judged_only=Any()),
            M._P_IA(cutoff=Any(required=True), rel=Any(), judged_only=Any()),
            M._StRecall(cutoff=Any(required=True), rel=Any()),
        ]  # the families; supports() decides on the parameters

        def supports(self, measure):
            measure.validate_params()
            return _spec(measure) is not None

        def _evaluator(self, measures, qrels):
            return evaluator(measures, qrels)

    return RankjitProvider


def __getattr__(name):
    if name in ("RankjitProvider", "RankjitEvaluator"):
        cls = _classes()[0 if name == "RankjitProvider" else 1]
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def provider():
    """The provider (one instance, created on first call): ``ir_measures.providers.Provider`` named ``"rankjit"``.

    Use it as any ir_measures provider without registering it, e.g.
    ``provider().calc_aggregate(measures, qrels, run)`` (unsupported measures raise ValueError).
    """
    with _LOCK:
        if _STATE["provider"] is None:
            _STATE["provider"] = _classes()[0]()
        return _STATE["provider"]


def register():
    """Put the rankjit provider first in ir_measures' default pipeline (and its registry as ``"rankjit"``).

    ``ir_measures.calc_aggregate`` / ``iter_calc`` / ``calc`` / ``evaluator`` (and PyTerrier's
    ``pt.Experiment``) then compute the measures it supports with rankjit and the others with
    ir_measures' providers.  Calling it again changes nothing.

    ir_measures reports every measure of a call that several providers share for the queries
    of the first of them in its pipeline; so that rankjit reports the same queries, the
    pipeline's ``_evaluator`` also records the call's measures while registered (an attribute
    of ``ir_measures.DefaultPipeline`` that :func:`unregister` deletes).

    Returns
    -------
    ir_measures.providers.Provider
        The provider.
    """
    import ir_measures

    with _LOCK:
        p = provider()
        pipeline = ir_measures.DefaultPipeline
        if not any(x is p for x in pipeline.providers):
            pipeline.providers.insert(0, p)
        if "_evaluator" not in vars(pipeline):  # (an attribute of the instance: unregister() deletes it)
            pipeline._evaluator = _recording_evaluator(pipeline)
        ir_measures.providers.registry.setdefault(NAME, p)
        return p


def unregister():
    """Take the rankjit provider out of ir_measures' default pipeline and registry (no-op when absent)."""
    if _STATE["provider"] is None or "ir_measures" not in sys.modules:
        return
    import ir_measures

    with _LOCK:
        p = _STATE["provider"]
        pipeline = ir_measures.DefaultPipeline
        pipeline.providers[:] = [x for x in pipeline.providers if x is not p]
        if getattr(vars(pipeline).get("_evaluator"), "rankjit_records_the_call", False):
            del pipeline._evaluator
        if ir_measures.providers.registry.get(NAME) is p:
            del ir_measures.providers.registry[NAME]


def is_registered():
    """Whether the rankjit provider is in ir_measures' default pipeline."""
    if _STATE["provider"] is None or "ir_measures" not in sys.modules:
        return False
    import ir_measures

    return any(x is _STATE["provider"] for x in ir_measures.DefaultPipeline.providers)


@contextlib.contextmanager
def registered():
    """``with registered(): ...`` -- the provider is registered inside the block (left as found after it)."""
    was = is_registered()
    register()
    try:
        yield provider()
    finally:
        if not was:
            unregister()
