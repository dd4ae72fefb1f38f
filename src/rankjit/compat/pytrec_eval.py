"""pytrec_eval's API on rankjit's trec_eval engine: ``import rankjit.compat.pytrec_eval as pytrec_eval``.

The same names and signatures as pytrec_eval (pytrec_eval-terrier 0.5): ``RelevanceEvaluator(
query_relevance, measures, relevance_level=1, judged_docs_only_flag=False)`` and its
``evaluate(scores) -> {query id: {measure: value}}``, ``supported_measures``,
``supported_nicknames``, ``parse_qrel``, ``parse_run`` and ``compute_aggregated_measure``,
with the same numbers.  pytrec_eval embeds trec_eval 9 (a 2016 snapshot); what it does, and
so what this module does:

* Measures: the 34 of trec_eval 9's ``all_trec`` and the nicknames ``official``, ``set``,
  ``all_trec``.  A name takes parameters as ``P.5,10`` or ``P_5``; names of one measure are
  merged (``{'P.5', 'P_10'}`` is ``P.10,5``), a plain name next to a parameterised one adds
  nothing (``{'P', 'P.5'}`` gives P_5 only), and parameters are read as pytrec_eval reads
  them: the digits and dots at the start of the text after the name (``P.5x`` is ``P.5``),
  merged as a set of strings sorted as strings, then trec_eval's parsing (cutoffs
  truncated: ``recall.2.5`` is recall_2).
* Keys: one per cutoff for the measures with cutoffs (``P_5``, ``ndcg_cut_10``,
  ``iprec_at_recall_0.10``, ``Rprec_mult_0.20``: trec_eval's ``%3.2f``), the bare name
  for every other measure, whatever its parameters (``utility``, ``set_F``, ``11pt_avg``).
  Within a query, keys follow trec_eval's measure table; queries follow the run's order.
* Values, per query and all floats: ``gm_map`` and ``gm_bpref`` are ``log(max(v, 1e-5))``
  (their mean's exponential is the geometric mean: :func:`compute_aggregated_measure`);
  ``runid`` and ``relstring`` are 0.0 and ``num_q`` 1.0.  ``iprec_at_recall`` and
  ``11pt_avg`` count ``(long)(x R + 0.9)`` relevant documents (trec_eval 10 rounds
  ``x R`` instead); on a query with no retrieved document the level-0 value is NaN (0/0),
  and so is ``11pt_avg``.
* Ranking: trec_eval's, by score descending then document id descending (byte order),
  with the scores rounded to single precision first (trec_eval 9 keeps them as C
  ``float``): scores equal in float32 tie.
* Queries: those of the run that the qrels hold with at least one judgment (a query with
  an empty dict of judgments is dropped, as pytrec_eval drops it); a query of the run
  with no documents is evaluated (nothing retrieved).  Judgments below 0 are judged
  non-relevant ("in the pool but unjudged" for bpref, infAP); ``relevance_level`` is
  the lowest relevant grade; ``judged_docs_only_flag`` drops unjudged documents first
  (trec_eval ``-J``).

Where pytrec_eval crashes or computes from a measure trec_eval reports as malformed
(parameters of ``G``, ``ndcg``, ``ndcg_rel``, ``Rndcg``; a cutoff 0 or given twice;
``utility`` with other than 4 coefficients), this module raises ``ValueError`` instead; a
NaN score, which pytrec_eval ranks in an undefined order, and a query id holding a NUL
also raise ``ValueError``.  Bad types raise ``TypeError`` as in pytrec_eval, each with a
message naming the culprit; to read the dicts in one pass, only the first document id of
each query and the first score of each query of a run are type-checked (another score is
read as ``float()`` reads it; a document id of another type is checked only where ids
decide a tie).  NumPy integers are taken as
relevance and NumPy floats as scores (pytrec_eval refuses both); document ids are compared
whole (pytrec_eval cuts them at a NUL).  ``docs/migrating.md`` lists the differences.

Examples
--------
>>> import rankjit.compat.pytrec_eval as pytrec_eval
>>> qrel = {"q1": {"d1": 0, "d2": 1, "d3": 2}, "q2": {"d2": 1, "d3": 1}}
>>> run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {"d1": 1.5, "d2": 0.2, "d3": 0.5}}
>>> evaluator = pytrec_eval.RelevanceEvaluator(qrel, {"map", "ndcg_cut.3", "P.2"})
>>> result = evaluator.evaluate(run)
>>> result["q1"]
{'map': 0.8333333333333333, 'P_2': 0.5, 'ndcg_cut_3': 0.9502344167898356}
>>> round(pytrec_eval.compute_aggregated_measure("map", [m["map"] for m in result.values()]), 4)
0.7083
"""
from __future__ import annotations

import bisect
import collections
import functools
import math
import numbers
import re
from array import array
from itertools import chain, compress, repeat

import numpy as np

from rankjit.io._dicts import check_document_ids, index_not_str
from rankjit.io._trec_counts import level_name

__all__ = ["RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run",
           "supported_measures", "supported_nicknames"]

#: trec_eval 9's all_trec in its measure table's order (measures.c): the order of the keys
_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
)
_PREFS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
          "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
          "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp")

#: the measures pytrec_eval computes (trec_eval 9's all_trec)
supported_measures = set(_ORDER)
#: trec_eval 9's nicknames: name -> set of measures (only official, set and all_trec hold measures pytrec_eval
#: computes; the others name preference measures, refused as in pytrec_eval)
supported_nicknames = {
    "official": {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"},
    "set": {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"},
    "all_trec": set(_ORDER),
    "all_prefs": {"runid", "num_q", *_PREFS},
    "prefs": {"runid", "num_q", *_PREFS[:6]},
    "qrels_jg": {"runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"},
}

# How trec_eval 9 reads each measure's parameters (meas_init.c); measures not listed take none
# (parameters given to them are ignored)
_LONG_CUTOFFS = {"P", "recall", "ndcg_cut", "map_cut", "relative_P", "success"}  # atol, sorted, > 0, distinct
_FLOAT_CUTOFFS = {"iprec_at_recall", "Rprec_mult"}  # atof, sorted, distinct
_FLOAT_PARAMS = {"utility", "11pt_avg", "set_F", "relstring"}  # atof, as given
_PAIRS = {"G", "ndcg", "ndcg_rel", "Rndcg"}  # level=gain: pytrec_eval's name pattern cannot pass them
_LONG_MAX = 2**63 - 1  # a C long's largest value
_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_BLOCK_DOCS = 4096  # documents of a run read at a time (RelevanceEvaluator._read_run)
_MIN_GEO_MEAN = 0.00001  # trec_eval's floor of gm_map and gm_bpref

# pytrec_eval's reading of "name.params" / "name_params": a supported name, '.' or '_', then numbers
# with optional decimals separated by commas, from the start of the text (the rest is ignored)
_NAME_PARAMS = re.compile(
    "(" + "|".join(re.escape(m) for m in sorted(_ORDER, key=len, reverse=True)) + r")[._]"
    r"([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)"
)


# ---------------------------------------------------------------- module functions
def parse_run(f_run):
    """Read a TREC run (``query_id Q0 doc_id rank score run_name`` lines) into ``{qid: {docid: score}}``.

    Parameters
    ----------
    f_run : iterable of str
        The lines (an open file, a list).

    Returns
    -------
    collections.defaultdict of dict
        Scores as floats; the rank field is ignored.

    Raises
    ------
    ValueError
        On a line without 6 fields, a score that is not a number, or a document given twice
        for a query (pytrec_eval: ``AssertionError``).
    """
    run = _parse_file(f_run, "run")
    if run is not None:
        return run
    run = collections.defaultdict(dict)
    for number, line in enumerate(f_run, 1):
        fields = line.strip().split()
        if len(fields) != 6:
            raise ValueError(f"run line {number}: expected 6 fields 'query_id Q0 doc_id rank score run_name', "
                             f"got {len(fields)}: {line.rstrip()!r}")
        qid, _, docid, _, score, _ = fields
        if docid in run[qid]:
            raise ValueError(f"run line {number}: document {docid!r} is given twice for query {qid!r}")
        try:
            run[qid][docid] = float(score)
        except ValueError:
            raise ValueError(f"run line {number}: score {score!r} is not a number") from None
    return run


def parse_qrel(f_qrel):
    """Read TREC qrels (``query_id iter doc_id relevance`` lines) into ``{qid: {docid: relevance}}``.

    Parameters
    ----------
    f_qrel : iterable of str
        The lines (an open file, a list).

    Returns
    -------
    collections.defaultdict of dict
        Relevance as ints.

    Raises
    ------
    ValueError
        On a line without 4 fields, a relevance that is not an integer, or a document judged
        twice for a query (pytrec_eval: ``AssertionError``).
    """
    qrel = _parse_file(f_qrel, "qrels")
    if qrel is not None:
        return qrel
    qrel = collections.defaultdict(dict)
    for number, line in enumerate(f_qrel, 1):
        fields = line.strip().split()
        if len(fields) != 4:
            raise ValueError(f"qrels line {number}: expected 4 fields 'query_id iter doc_id relevance', "
                             f"got {len(fields)}: {line.rstrip()!r}")
        qid, _, docid, rel = fields
        if docid in qrel[qid]:
            raise ValueError(f"qrels line {number}: document {docid!r} is judged twice for query {qid!r}")
        try:
            qrel[qid][docid] = int(rel)
        except ValueError:
            raise ValueError(f"qrels line {number}: relevance {rel!r} is not an integer") from None
    return qrel


def _parse_file(f, kind):
    """:func:`parse_run` (``kind="run"``) or :func:`parse_qrel` of an open, seekable text file, read by
    rankjit's compiled TREC reader; None when ``f`` is anything else (a list of lines, a pipe) or the reader
    might read it otherwise than the parser's lines: the parser then reads ``f`` from where it stood.

    The text is read whole (``f.read()``, as its lines would decode) and read by the reader where
    the two agree (:func:`rankjit.io._trec.split_alike`: printable ASCII, no ``#``, six fields on every
    line of a run, four of qrels; no blank line, on which the parser raises); the scores are those
    ``float()`` gives, the judgments must be plain digits with a sign (what ``int()`` reads, within
    int64); a document given twice for a query leaves it to the parser, which names the line
    (docs/migrating.md gives the time saved).
    """
    import io

    if not isinstance(f, io.TextIOBase):
        return None
    try:
        if not f.seekable():
            return None
        start = f.tell()
    except (OSError, ValueError):
        return None
    try:
        text = f.read()
    except (OSError, ValueError):  # (a text the encoding cannot read: the parser reads its lines again, and raises)
        f.seek(start)
        return None
    parsed = None
    if text.isascii():
        # the lines the parser would read (a blank one raises there; rankjit's reader skips it)
        n_lines = text.count("\n") + (not text.endswith("\n"))
        parsed = _parse_plain(text.encode("ascii"), kind, n_lines)
    if parsed is None:
        f.seek(start)
    return parsed


def _parse_plain(raw, kind, n_lines):
    """:func:`_parse_file`'s dicts of the ASCII text ``raw`` of ``n_lines`` lines, or None (see there)."""
    from rankjit.io._trec import query_blocks, read_split_alike

    read = read_split_alike(raw, kind, kind)
    if read is None:
        return None
    rows = read[0]
    if len(rows) != n_lines:  # a blank line, which rankjit's reader skipped: the parser raises there
        return None
    values = (rows.score if kind == "run" else rows.rel).tolist()
    docs = rows.docno.tolist()
    qids, bounds = query_blocks(rows.qid)
    out = collections.defaultdict(dict)
    bounds = bounds.tolist()
    for qid, lo, hi in zip(qids, bounds[:-1], bounds[1:]):
        out[qid].update(zip(docs[lo:hi], values[lo:hi]))
    if sum(map(len, out.values())) != len(docs):  # a document twice for a query: the parser names the line
        return None
    return out


def compute_aggregated_measure(measure, values):
    """Aggregate per-query values over queries, as pytrec_eval does.

    ``num_*`` measures are summed; ``gm_*`` measures (whose per-query values are logs) give
    ``exp(sum / n)``, the geometric mean; every other measure the arithmetic mean.

    Parameters
    ----------
    measure : str
        A key of :meth:`RelevanceEvaluator.evaluate`'s output (``map``, ``P_5``, ...).
    values : sequence of float
        Its per-query values.

    Returns
    -------
    float
    """
    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))


# ---------------------------------------------------------------- measure names
def _measure_names(measures):
    """The measures as pytrec_eval reads them: ``{name: set of parameter strings}`` (empty set: defaults)."""
    if isinstance(measures, (str, bytes)):
        raise TypeError(f"measures must be a collection of measure names such as {{'map', 'ndcg_cut.10'}}, "
                        f"not the string {measures!r}")
    try:
        items = list(measures)
    except TypeError:
        raise TypeError(f"measures must be a collection of measure names such as {{'map', 'ndcg_cut.10'}}, "
                        f"got {type(measures).__name__}") from None
    expanded = []
    for m in items:
        if not isinstance(m, str):
            raise TypeError(f"measure names must be str, got {m!r} ({type(m).__name__})")
        if m in supported_nicknames:
            other = sorted(supported_nicknames[m] - supported_measures)
            if other:
                raise ValueError(f"unsupported measure nickname {m!r}: it names measures pytrec_eval does not "
                                 f"compute ({', '.join(other)})")
            expanded += supported_nicknames[m]
        else:
            expanded.append(m)
    params = {}
    for m in expanded:
        if m in supported_measures:
            params.setdefault(m, set())
            continue
        match = _NAME_PARAMS.match(m)
        if match is None:
            raise ValueError(f"unsupported measure {m!r} (pytrec_eval's measures: supported_measures, e.g. 'map', "
                             f"'P.5,10', 'ndcg_cut_10'; nicknames 'official', 'set', 'all_trec')")
        params.setdefault(match.group(1), set()).update(match.group(2).split(","))
    return params


def _requested(params):
    """``{name: (params for rankjit.io._frontend.trec_values, output keys)}`` in trec_eval's order.

    trec_eval 9's reading of the parameter text (meas_init.c), which pytrec_eval builds as
    the set of parameter strings sorted as strings and joined with commas.
    """
    from rankjit.io._frontend import trec_default

    out = {}
    for name in _ORDER:
        if name not in params:
            continue
        texts = sorted(params[name])
        spec = f"{name}.{','.join(texts)}" if texts else name
        param = None
        if name in _LONG_CUTOFFS:
            # (atol: a number beyond a C long saturates at LONG_MAX, which pytrec_eval then reads)
            values = sorted(min(int(t.partition(".")[0]), _LONG_MAX) for t in texts) if texts else \
                list(trec_default(name))
            if values[0] <= 0:
                raise ValueError(f"measure {spec!r}: cutoffs must be positive (pytrec_eval aborts on a cutoff 0)")
            if len(set(values)) < len(values):
                raise ValueError(f"measure {spec!r}: a cutoff given twice (pytrec_eval aborts on it)")
            param = tuple(values)
            keys = [f"{name}_{k}" for k in param]
        elif name in _FLOAT_CUTOFFS:
            values = sorted(float(t) for t in texts) if texts else list(trec_default(name))
            if len(set(values)) < len(values):
                raise ValueError(f"measure {spec!r}: a level given twice (pytrec_eval aborts on it)")
            param = tuple(values)
            keys = [level_name(name, x) for x in param]  # trec_eval's "%3.2f", cut to 8 characters
        elif name in _FLOAT_PARAMS:
            values = tuple(float(t) for t in texts)
            if name == "utility" and texts and len(values) != 4:
                raise ValueError(f"measure {spec!r}: utility takes 4 coefficients a,b,c,d, got {len(values)} "
                                 "(pytrec_eval reads the numbers up to the first '-', merges repeated ones and "
                                 "sorts them as strings, then returns 0 for every query)")
            if name == "11pt_avg" and not texts:
                values = _LEVELS
            param = (",".join(texts), values) if texts else None
            keys = [name]
        elif name in _PAIRS and texts:
            raise ValueError(f"measure {spec!r}: pytrec_eval cannot give {name} parameters (its name pattern keeps "
                             f"only numbers, trec_eval then reads a malformed level=gain pair and pytrec_eval "
                             f"aborts); use {name!r}")
        else:
            keys = [name]
        out[name] = (param, keys)
    return out


# ---------------------------------------------------------------- dicts to flat arrays
def _check_dicts(mapping, name, inner_what):
    """Query ids (str) and their dicts of ``mapping``, as lists.

    The document ids are not checked here: the compiled read of the dicts reads only exact
    ``str`` ids, and where it cannot read them the caller calls
    :func:`rankjit.io._dicts.check_document_ids`
    before its Python read (so the same error is raised, without touching every dict here).
    """
    keys = list(mapping)
    values = list(mapping.values())
    i = index_not_str(keys)
    if i >= 0:
        bad = keys[i]
        raise TypeError(f"{name}: query id {bad!r} is a {type(bad).__name__}, not a str")
    if not set(map(type, values)) <= {dict}:
        for k, v in zip(keys, values):
            if not isinstance(v, dict):
                raise TypeError(f"{name}[{k!r}] is a {type(v).__name__}, not a dict {{document id: {inner_what}}}")
    if "\x00" in "".join(keys):
        bad = next(k for k in keys if "\x00" in k)
        raise ValueError(f"{name}: query id {bad!r} contains a NUL character (pytrec_eval would cut it there)")
    return keys, values


# ---------------------------------------------------------------- the evaluator
#: trec_eval's measures that rankjit's engine computes (rankjit.io._cli's TREC_TABLE): name -> measure text
#: ({}: one per cutoff); the others go through rankjit.io._frontend.trec_values
_ENGINE = {
    "map": "AP", "gm_map": "AP", "Rprec": "Rprec", "recip_rank": "RR", "P": "P@{}", "recall": "R@{}",
    "ndcg": "nDCG(gain='linear')", "ndcg_cut": "nDCG(gain='linear')@{}", "map_cut": "AP(denominator='r')@{}",
    "success": "Success@{}",
}
#: computed here: constants and trec_eval 9's interpolated precision
_HERE = {"runid", "num_q", "relstring", "iprec_at_recall", "11pt_avg"}


class RelevanceEvaluator:
    """Evaluate runs against relevance judgments, as ``pytrec_eval.RelevanceEvaluator`` does.

    Parameters
    ----------
    query_relevance : dict
        ``{query id: {document id: relevance}}``, relevance an int (below 0: judged
        non-relevant); queries with no judgment are dropped.  Converted once, here.
    measures : iterable of str
        Measure names and nicknames (``{'map', 'ndcg_cut.10', 'P.5,10', 'official'}``);
        see ``supported_measures``.
    relevance_level : int, default 1
        The lowest relevant grade (>= 1).
    judged_docs_only_flag : bool, default False
        Drop the retrieved documents the qrels do not judge before evaluating (trec_eval ``-J``).

    Raises
    ------
    TypeError
        On a container, id or value of the wrong type, or ``relevance_level`` < 1 (as pytrec_eval).
    ValueError
        On an unsupported measure or parameters pytrec_eval cannot compute, a query id
        holding a NUL, or a relevance beyond int64.
    """

    def __init__(self, query_relevance, measures, relevance_level=1, judged_docs_only_flag=False):
        if not isinstance(query_relevance, dict):
            raise TypeError(f"query_relevance must be a dict {{query id: {{document id: relevance}}}}, "
                            f"got {type(query_relevance).__name__}")
        if not isinstance(relevance_level, numbers.Integral):  # (NumPy integers and bools too, as pytrec_eval)
            raise TypeError(f"relevance_level must be an int, got {relevance_level!r}")
        if relevance_level < 1:
            raise TypeError(f"relevance_level must be >= 1 (pytrec_eval's rule), got {relevance_level}")
        if not isinstance(judged_docs_only_flag, int):  # (bool is an int)
            raise TypeError(f"judged_docs_only_flag must be a bool, got {judged_docs_only_flag!r}")
        self._plan = _requested(_measure_names(measures))
        self._rel_level = int(relevance_level)
        self._judged_only = bool(judged_docs_only_flag)
        # only the trec_eval_values measures and -J read the judged documents of grade <= 0 (bpref, infAP,
        # set measures, ...): the engine's measures and iprec read grades > 0 alone (relevance_level >= 1)
        self._all_judged = self._judged_only or not set(self._plan) <= set(_ENGINE) | _HERE
        self._load_qrels(query_relevance)
        self._engine_measures()

    def _load_qrels(self, query_relevance):
        from rankjit.io._dicts import int64_values_and_keys
        from rankjit.io._frontend import code_judgments
        from rankjit.io._judged_lookups import JudgedLookups

        qids, dicts = _check_dicts(query_relevance, "query_relevance", "relevance")
        if not all(dicts):  # pytrec_eval drops queries without judgments
            keep = list(map(bool, dicts))
            qids, dicts = list(compress(qids, keep)), list(compress(dicts, keep))
        # the evaluator reads the judgments as they are now (as pytrec_eval does): the grades into an array and
        # the ids held by reference (keys), taken in the same compiled pass; None if one is not exactly a str
        lens = np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts))
        rel, keys = int64_values_and_keys(dicts, lens, hold=True)
        if keys is None:  # (an id not exactly a str, or the Python read: on a copy of each dict, ids checked first)
            dicts = list(map(dict, dicts))
            check_document_ids(qids, dicts, "query_relevance")
        try:
            if rel is None:  # (not all exactly ints, or no JIT: the Python way, which names a bad value)
                rel = np.frombuffer(array("q", chain.from_iterable(map(dict.values, dicts))), dtype=np.int64)
        except (TypeError, OverflowError):
            for q, d in zip(qids, dicts):
                for doc, v in d.items():
                    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                        raise TypeError(f"query_relevance[{q!r}][{doc!r}] = {v!r} is a {type(v).__name__}; "
                                        "relevance must be an int") from None
                    if not -2**63 <= int(v) < 2**63:
                        raise ValueError(f"query_relevance[{q!r}][{doc!r}] = {v} does not fit in 64 bits") from None
            raise  # pragma: no cover (an int-like object that array() refuses)
        self._qindex = dict(zip(qids, range(len(qids))))
        self._judgments = JudgedLookups(self._qindex, None if keys is not None else dicts,
                                        code_judgments(lens, rel, self._rel_level), self._rel_level,
                                        self._all_judged, keys)

    def _engine_measures(self):
        """The planned measures rankjit's engine computes, as measures on the grade codes (parsed once)."""
        texts = []
        for name, (param, _) in self._plan.items():
            if name in _ENGINE:
                template = _ENGINE[name]
                cutoffs = param if "{}" in template else (None,)
                texts += [template.format(k) for k in cutoffs]
        texts = sorted(set(texts))
        gv = self._judgments.grade_values
        codes = _measures_on_codes(tuple(texts), gv.tobytes(), self._rel_level) if texts else ()
        self._engine = dict(zip(texts, codes))
        self._engine_resolved = None  # (resolved at the first evaluate: see _values)

    def evaluate(self, scores):
        """Evaluate a run: ``{query id: {document id: score}}`` -> ``{query id: {measure: value}}``.

        Queries the qrels do not hold are left out; an empty run gives ``{}``.

        Raises
        ------
        TypeError
            On a container, id or score of the wrong type (scores: int or float).
        ValueError
            On a NaN score, or a query id holding a NUL.
        """
        if not isinstance(scores, dict):
            raise TypeError(f"scores must be a dict {{query id: {{document id: score}}}}, got {type(scores).__name__}")
        if not scores:
            return {}
        qids, dicts = _check_dicts(scores, "scores", "score")
        found = list(map(self._qindex.get, qids, repeat(-1)))
        if min(found) < 0:  # queries the qrels lack are left out (their scores checked all the same)
            check_document_ids(qids, dicts, "scores", every=False)  # (every query's first: as pytrec_eval)
            drop = [j < 0 for j in found]
            self._scores(list(compress(qids, drop)), list(compress(dicts, drop)))
            keep = [j >= 0 for j in found]
            qids, dicts, found = list(compress(qids, keep)), list(compress(dicts, keep)), [j for j in found if j >= 0]
            if not qids:
                return {}
        aligned = self._judgments.align(qids, dicts, np.asarray(found, dtype=np.int64), self._read_run)
        return self._values(aligned.judged_only() if self._judged_only else aligned)

    @staticmethod
    def _scores(qids, dicts):
        """Scores of a run, one flat float32 array (trec_eval 9 keeps them as C floats), and counts.

        The first score of each query is type-checked (a number: int, float, or a NumPy
        number); the others are read as ``float()`` does and rounded to float32, in one pass.
        """
        lens = np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts))
        if not set(map(type, map(next, map(iter, map(dict.values, filter(None, dicts)))))) <= {float, int}:
            for q, d in zip(qids, dicts):
                doc, v = next(iter(d.items()), ("", 0.0))
                if not isinstance(v, numbers.Real):
                    raise TypeError(f"scores[{q!r}][{doc!r}] = {v!r} is a {type(v).__name__}; a score must be an int "
                                    "or a float")
        n = int(lens.sum())
        try:  # (a double beyond float32's range is inf, as in C: float(x) then the float32 cast)
            with np.errstate(over="ignore"):
                raw = np.fromiter(chain.from_iterable(map(dict.values, dicts)), dtype=np.float32, count=n)
        except (TypeError, ValueError, OverflowError):
            try:  # (NumPy refuses some numbers as float32, e.g. np.float64(1e300): through float64)
                raw = np.fromiter(chain.from_iterable(map(dict.values, dicts)), dtype=np.float64, count=n)
                with np.errstate(over="ignore"):
                    raw = raw.astype(np.float32)
            except (TypeError, ValueError, OverflowError):
                raw = None
        if raw is None or np.isnan(raw).any():  # (None reads as NaN)
            for q, d in zip(qids, dicts):
                for doc, v in d.items():
                    if not isinstance(v, numbers.Real):
                        raise TypeError(f"scores[{q!r}][{doc!r}] = {v!r} is a {type(v).__name__}; a score must be "
                                        "an int or a float")
                    try:
                        v = float(v)
                    except OverflowError:
                        raise ValueError(f"scores[{q!r}][{doc!r}] = {v} does not fit in a double") from None
                    if math.isnan(v):
                        raise ValueError(f"scores[{q!r}][{doc!r}] is NaN: a score must be a number (pytrec_eval "
                                         "ranks NaN in an undefined order)")
            raise TypeError("scores: a score could not be read as a float")  # pragma: no cover
        return raw, lens

    @classmethod
    def _read_run(cls, qids, dicts, offsets, j_off, j_docs):
        """The run's scores (float32, flat) and the score of each looked-up document (float32; NaN: not retrieved).

        ``j_docs()`` iterates over the looked-up documents' ids, ``j_off[i + 1] - j_off[i]``
        for query ``i``.  The dicts are read a block of about ``_BLOCK_DOCS`` documents at a time: the
        block's scores (:meth:`_scores`' rules), then one ``dict.get`` per looked-up
        document in the same dicts while they are still in the processor's cache.  Every
        document id is checked first (one of another type would match nothing).
        """
        check_document_ids(qids, dicts, "scores")
        if not set(map(type, map(next, map(iter, map(dict.values, filter(None, dicts)))))) <= {float, int}:
            cls._scores(qids, dicts)  # (raises on the first score that is not a number)
        n_q, n, off, jo = len(dicts), int(offsets[-1]), offsets.tolist(), j_off.tolist()
        score = np.empty(n, dtype=np.float32)
        j_score = np.empty(jo[-1], dtype=np.float64)
        q_lens = np.diff(j_off).tolist()
        docs = j_docs()
        b = 0
        try:
            with np.errstate(over="ignore"):  # (a double beyond float32's range is inf, as in C)
                while b < n_q:
                    e = min(max(bisect.bisect_right(off, off[b] + _BLOCK_DOCS, b + 1) - 1, b + 1), n_q)
                    block = dicts[b:e]
                    score[off[b]:off[e]] = np.fromiter(chain.from_iterable(map(dict.values, block)),
                                                       dtype=np.float32, count=off[e] - off[b])
                    # dict.get(run dict of the query, document): the block's dicts repeated per looked-up document
                    per_doc = chain.from_iterable(map(repeat, block, q_lens[b:e]))
                    j_score[jo[b]:jo[e]] = np.fromiter(map(dict.get, per_doc, docs), dtype=np.float64,
                                                       count=jo[e] - jo[b])
                    b = e
        except (TypeError, ValueError, OverflowError):
            b = -1
        if b < 0 or np.isnan(score).any():  # (None reads as NaN) the errors of _scores, or its float64 path
            score, _ = cls._scores(qids, dicts)  # (raises; should it return, the values are numbers: read again)
            j_score = np.fromiter(  # pragma: no cover (no number found that float32 refuses and float64 reads)
                map(dict.get, chain.from_iterable(map(repeat, dicts, q_lens)), j_docs()), dtype=np.float64,
                count=jo[-1])
        with np.errstate(over="ignore", invalid="ignore"):
            return score, j_score.astype(np.float32)  # (their values passed the checks of the scores)

    def _values(self, aligned):
        """``{qid: {key: value}}`` of the planned measures on ``aligned``."""
        n_q = aligned.n_queries
        plan = self._plan
        engine = {}
        if self._engine:  # one pass of rankjit's engine over the grade codes (unjudged, below 0: code 0)
            from rankjit._measures import Resolved
            from rankjit.io._frontend import counts_of_the_judgments, evaluate_coded

            if self._engine_resolved is None:  # resolved once, under rankjit.evaluate's defaults (evaluate_coded
                # passes none of its own): the evaluator's later calls reuse it
                self._engine_resolved = Resolved(list(self._engine.values()),
                                                 {"rel": None, "empty": "zero", "judged_only": False})

            engine = evaluate_coded(aligned.grade_codes, aligned.scores, aligned.offsets, self._engine_resolved,
                                    n_relevant=counts_of_the_judgments(aligned.n_relevant),
                                    ideal_counts=aligned.judged_counts)
        rest = {name: param for name, (param, _) in plan.items() if name not in _ENGINE and name not in _HERE}
        if rest:
            from rankjit.io._frontend import trec_values

            results = iter(trec_values(aligned, rest, judged_only=self._judged_only))
        keys, columns = [], []
        iprec = None
        for name, (param, names) in plan.items():
            keys += names
            if name in _ENGINE:
                template = _ENGINE[name]
                for k in param if "{}" in template else (None,):
                    values = np.asarray(engine[template.format(k)], dtype=np.float64)
                    if name == "gm_map":  # trec_eval: log(max(AP, 1e-5)) per query (glibc's log, as trec_eval)
                        values = np.fromiter(map(math.log, np.maximum(values, _MIN_GEO_MEAN).tolist()),
                                             dtype=np.float64, count=n_q)
                    columns.append(values)
            elif name in ("runid", "relstring"):
                columns.append(np.zeros(n_q))
            elif name == "num_q":
                columns.append(np.ones(n_q))
            elif name in ("iprec_at_recall", "11pt_avg"):
                if iprec is None:
                    iprec = _Iprec9(aligned)
                if name == "iprec_at_recall":
                    columns += [iprec(x) for x in param]
                else:
                    levels = _LEVELS if param is None else param[1]
                    total = np.zeros(n_q)
                    for x in levels:
                        total += iprec(x)  # (in the order given, as trec_eval adds them)
                    columns.append(total / len(levels))
            else:
                for _ in names:
                    _, kind, values = next(results)
                    values = np.asarray(values, dtype=np.float64)
                    if kind == "gm":  # gm_bpref: log(max(v, 1e-5)) per query
                        values = np.fromiter(map(math.log, np.maximum(values, _MIN_GEO_MEAN).tolist()),
                                             dtype=np.float64, count=n_q)
                    columns.append(values)
        return _result_dicts(aligned.qids, keys, [c.tolist() for c in columns])


@functools.lru_cache(maxsize=64)
def _measures_on_codes(texts, grade_values, rel_level):
    """:func:`rankjit.io._frontend.measures_on_codes` of the measure ``texts`` for the distinct grades
    ``grade_values`` (the bytes of an int64 array), remembered: evaluators made again and again for the same
    measures and grades (a script making one per run or per fold) parse their measures once.  The measures are
    only read."""
    from rankjit.io._frontend import measures_on_codes

    return tuple(measures_on_codes(list(texts), np.frombuffer(grade_values, dtype=np.int64), rel_level))


def _result_dicts(qids, keys, columns):
    """``{qid: {key: value}}`` from one list of values per key.

    Up to four keys, each query's dict is a dict display (a third faster to build than
    ``dict(zip(keys, row))`` at 100k queries).
    """
    if len(keys) == 1:
        (k0,), (c0,) = keys, columns
        return {q: {k0: a} for q, a in zip(qids, c0)}
    if len(keys) == 2:
        k0, k1 = keys
        return {q: {k0: a, k1: b} for q, a, b in zip(qids, *columns)}
    if len(keys) == 3:
        k0, k1, k2 = keys
        return {q: {k0: a, k1: b, k2: c} for q, a, b, c in zip(qids, *columns)}
    if len(keys) == 4:
        k0, k1, k2, k3 = keys
        return {q: {k0: a, k1: b, k2: c, k3: d} for q, a, b, c, d in zip(qids, *columns)}
    rows = zip(*columns) if columns else repeat((), len(qids))
    return dict(zip(qids, map(dict, map(zip, repeat(keys), rows))))


class _Iprec9:
    """trec_eval 9's interpolated precision at recall ``x`` of every query (m_iprec_at_recall.c, m_11pt_avg.c).

    ``c = (long)(x R + 0.9)`` relevant documents; the value is ``max_{i >= i_c} rel(i) / i``
    (``i_c`` the rank of the c-th relevant retrieved document, of the first for c = 0), 0
    when fewer than c are retrieved, ``rel_ret / ret`` when c = 0 and none is: 0, or 0/0 =
    NaN when nothing is retrieved.
    """

    def __init__(self, aligned):
        from rankjit.io._frontend import ranked_relevance

        self.counts = ranked_relevance(aligned)
        self.best, self.first = self.counts.best_precision_from()
        self.num_rel = aligned.n_relevant.astype(np.float64)

    def __call__(self, x):
        r = self.counts
        c = (x * self.num_rel + 0.9).astype(np.int64)  # C's (long) cast: toward 0
        reached = (c <= r.rel_ret) & (r.rel_ret > 0)
        at = self.first[:-1] + np.maximum(c, 1) - 1
        out = np.zeros(r.num_ret.shape[0])
        out[reached] = self.best[at[reached]]
        out[(r.num_ret == 0) & (c == 0)] = np.nan  # rel_ret / ret = 0 / 0
        return out
