"""Sub-commands ``rankjit trec_eval`` and ``rankjit eval`` (``score-log``: :mod:`rankjit._score_log`).

``trec_eval`` reproduces trec_eval's measure names, options and output format for
the measures rankjit computes; ``eval`` takes ir_measures-style names and several
runs.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from typing import NamedTuple

import numpy as np

from rankjit._measures import Measure
from rankjit.io import _trec_counts as C
from rankjit.io import _trec_loops as LOOPS

# trec_eval's measure table, in its print order (measures.c); rankjit computes the
# ones in TREC_TABLE (below), the others are reported as missing.
TREC_MEASURES = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
    "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut",
    "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
    "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
    "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap", "rbp",
    "rbp_resid", "unj",
)
NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
                 "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
                 "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
                 "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    # the sets of -R prefs / qrels_prefs and -R qrels_jg (measures.c)
    "all_prefs": ("runid", "num_q", *(m for m in TREC_MEASURES if m.startswith("prefs_"))),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}
_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: trec_eval's default persistence of rbp (m_rbp.c)
RBP_P = 0.9
_MIN_GEO_MEAN = 0.00001  # trec_eval's floor for gm_map


def _parse_numbers(name, text, *, levels):
    """trec_eval's double parameters: ``levels`` sorted, without duplicates (iprec_at_recall, Rprec_mult)."""
    values = []
    for part in text.split(","):
        try:
            values.append(_c_double(part))
        except ValueError:
            raise ValueError(f"measure {name}: parameter {part!r} is not a number in decimal digits "
                             "(e.g. 0.5, 1e-3)") from None
    if levels:
        values.sort()
        if any(a == b for a, b in zip(values, values[1:])):
            raise ValueError(f"measure {name}: duplicate parameters in {text!r}")
    return tuple(values)


# How C reads numbers (trec_eval's atol / atof), as regular expressions built from two pieces: C's isspace
# blanks and a signed run of ASCII digits (Python's int() and float() also take 1_0, non-ASCII digits, ...)
_C_BLANKS = r"[ \t\n\v\f\r]*"
_C_DIGITS = r"([+-]?[0-9]+)"
#: what atol reads: blanks, then a sign and digits, up to the first other character
_ATOL_PREFIX = re.compile(_C_BLANKS + _C_DIGITS, re.ASCII)
#: a cutoff both tools read alike: decimal digits, a sign, blanks around, and a fraction that trec_eval's
#: atol stops at (23.4 -> 23); anything else (1e2, 0x10, 1_000, inf, non-ASCII digits) atol reads otherwise
_CUTOFF = re.compile(_C_BLANKS + _C_DIGITS + r"(?:\.[0-9]*)?" + _C_BLANKS, re.ASCII)
_INT64_MAX = 2**63 - 1


#: a real number C's atof and Python's float() read alike: decimal digits with a sign, a point and an exponent,
#: or inf / infinity / nan; not 1_0 (float: 10, atof: 1), 0x10 (atof: 16), non-ASCII digits, nor blanks (trec_eval
#: drops a gain pair written "1= 2" where float() reads it)
_DOUBLE = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)",
                     re.ASCII | re.IGNORECASE)
_INTEGER = re.compile(_C_DIGITS, re.ASCII)


def _c_double(text):
    """``float(text)`` where trec_eval's atof reads the same number, else ``ValueError`` (1_0, 0x10, '١')."""
    if _DOUBLE.fullmatch(text) is None:
        raise ValueError(text)
    return float(text)


def _c_int(text):
    """``int(text)`` where trec_eval's atol reads the same number (digits and a sign), else ``ValueError``."""
    if _INTEGER.fullmatch(text) is None:
        raise ValueError(text)
    return int(text)


def _atol(text):
    """What C's ``atol`` reads from ``text``: blanks, a sign, the digits up to the first other character (0: none)."""
    m = _ATOL_PREFIX.match(text)
    return max(-_INT64_MAX - 1, min(_INT64_MAX, int(m.group(1)))) if m else 0


def _parse_cutoffs(name, text):
    """``P.5,10`` -> ``(5, 10)``: trec_eval's integer cutoffs (get_long_cutoffs in meas_init.c), sorted.

    trec_eval reads each with ``atol`` (``23.4`` -> 23, ``1e2`` -> 1, ``0x10`` -> 0): the spellings
    atol reads as written (digits, with a fraction it drops) are read so; the others, where
    rankjit would read another number than trec_eval, are refused, as are cutoffs below 1,
    beyond int64 and duplicates (trec_eval: "duplicate cutoffs detected").
    """
    values = []
    for part in text.split(","):
        m = _CUTOFF.fullmatch(part)
        if m is None:
            try:
                meant = float(part)
            except ValueError:
                meant = math.nan
            example = f"{name}.{int(meant)}" if math.isfinite(meant) and 1 <= meant <= _INT64_MAX else f"{name}.10"
            raise ValueError(f"measure {name}: cutoff {part!r} is not a whole number in decimal digits (trec_eval "
                             f"reads it with atol as {_atol(part)}); write it in digits, e.g. {example}")
        value = int(m.group(1))
        if value <= 0:
            raise ValueError(f"measure {name}: cutoffs must be positive, got {part!r}")
        if value > _INT64_MAX:
            raise ValueError(f"measure {name}: cutoff {part!r} is beyond int64 (trec_eval reads it as {_INT64_MAX})")
        values.append(value)
    values.sort()
    twice = sorted({a for a, b in zip(values, values[1:]) if a == b})
    if twice:
        raise ValueError(f"measure {name}: duplicate cutoffs in {text!r} ({', '.join(map(str, twice))} given twice; "
                         "trec_eval refuses them too: duplicate cutoffs detected)")
    return tuple(values)


def _parse_gains(text, measure="ndcg"):
    """``ndcg.1=3,2=9`` -> ``[(1, 3.0), (2, 9.0)]``: a gain for each relevance level named, in order.

    A level named twice stays twice, as in trec_eval (gain_init.c: the first entry holds the
    level's documents, a document takes the gain its level has first in the sorted list).
    """
    gains = []
    for part in text.split(","):
        level, sep, gain = part.partition("=")
        try:
            gains.append((_c_int(level), _c_double(gain)))
        except ValueError:
            raise ValueError(f"measure {measure}: gain parameter {part!r} is not 'level=gain'") from None
        if not sep:
            raise ValueError(f"measure {measure}: gain parameter {part!r} is not 'level=gain'")
        if not math.isfinite(gains[-1][1]):  # (trec_eval prints 0.0000 or -nan there: its gain-sorting quirk)
            raise ValueError(f"measure {measure}.{text}: the gain {gain.strip()!r} of level {level.strip()} is not "
                             "a finite number; give each level a finite gain")
    return gains


def _parse_rbp(text, measure="rbp"):
    """``rbp.p=0.5`` -> ``{"p": 0.5}``; trec_eval's gain pairs (``1=0.5``) are refused, as are other names.

    (trec_eval ignores a pair it does not know, ``rbp.q=0.3``, and goes on with p = 0.9:
    here that is an error, so a typo never passes for a result.)
    """
    params = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"measure {measure}: parameter {part!r} is not 'name=value' (e.g. {measure}.p=0.5)")
        if name != "p":
            what = "per-grade gains (level=gain)" if name.lstrip("-").isdigit() else f"the parameter {name!r}"
            raise ValueError(f"measure {measure}: rankjit does not take {what}; only p= (the persistence), "
                             f"e.g. {measure}.p=0.5")
        try:
            p = _c_double(value)
        except ValueError:
            raise ValueError(f"measure {measure}: p={value!r} is not a number in decimal digits") from None
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"measure {measure}: p must be in [0, 1], got {value!r}")
        params["p"] = p
    return params


def parse_trec_measures(specs):
    """trec_eval ``-m`` arguments -> ``(requested, missing)``.

    ``requested`` maps each supported measure to its parameters (cutoffs, a gain
    table as ``(text, dict)``, or None), in trec_eval's print order; ``missing`` lists
    trec_eval measures rankjit does not compute.
    """
    marked, params = set(), {}
    for spec in specs or ["official"]:
        name, dot, param = spec.partition(".")
        if dot and not param:
            raise ValueError(f"improper measure in parameter {spec!r}")
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in TREC_MEASURES:
            marked.add(name)
        else:
            raise ValueError(f"unknown trec_eval measure {name!r} (see trec_eval -h for the names)")
        if dot and name in TREC_TABLE:
            kind = TREC_TABLE[name].params
            if kind is None:  # (trec_eval ignores them: a parameter meant for another measure would go unnoticed)
                raise ValueError(f"measure {name} takes no parameters, got {spec!r} (trec_eval ignores them and "
                                 f"computes {name}; rankjit refuses them, so that a parameter given to the wrong "
                                 "measure, e.g. map.5 meant as map_cut.5, is not silently dropped)")
            if name in params:
                continue  # trec_eval keeps the first parameters given for a measure
            if kind == "pairs":
                pairs = _parse_rbp(param, name) if name in ("rbp", "rbp_resid") else _parse_gains(param, name)
                params[name] = (param, pairs)
            elif kind == "cutoffs":
                params[name] = _parse_cutoffs(name, param)
            elif kind == "levels":
                params[name] = _parse_numbers(name, param, levels=True)
            else:  # "values": the text is printed with the name
                params[name] = (param, _parse_numbers(name, param, levels=False))
    requested = {}
    missing = []
    for name in TREC_MEASURES:
        if name not in marked:
            continue
        if name in TREC_TABLE:
            requested[name] = params.get(name, TREC_TABLE[name].default)  # cutoffs, levels; else None
        else:
            missing.append(name)
    return requested, missing


def trec_eval_values(aligned, requested, *, num_docs=0, complete=False, judged_only=False):
    """Per-query values of the requested trec_eval measures.

    Every measure is computed on the grade codes of ``aligned`` (``grade_codes``,
    ``judged_counts``): relevance is ``code >= the first code of a grade >= -l``, and
    nDCG's gain is looked up per code (the grade, or the ``ndcg.level=gain``
    parameter), so memory grows with the number of distinct grades, whatever they are.

    Returns a list of ``(name, kind, values)``: ``kind`` is ``"int"`` (summed over
    queries), ``"float"`` (averaged), ``"gm"`` (geometric mean) or ``"summary"``
    (``runid``, ``num_q``: no per-query line).
    """
    from rankjit import _measures
    from rankjit.io import _align as F  # the calls the front ends make through rankjit.io._frontend

    offsets, scores = aligned.offsets, aligned.scores
    level = aligned.rel_level
    codes = aligned.grade_codes
    judged = aligned.judged if aligned.judged is not None else np.ones(codes.shape[0], dtype=bool)
    rel_code = F.first_code_at_least(aligned.grade_values, level)
    rel = judged & (codes >= rel_code)  # (with -l 0 a judged grade-0 document is relevant, an unjudged one not)
    num_ret = np.diff(offsets)
    cum = np.zeros(rel.shape[0] + 1, dtype=np.int64)
    np.cumsum(rel, out=cum[1:])
    num_rel_ret = cum[offsets[1:]] - cum[offsets[:-1]]

    # The engine's labels: 0 for an unjudged document, 1 + its grade's code for a judged one, so
    # that judged grade-0 documents stay apart (-l 0; ndcg.0=G gives them G, unjudged ones 0);
    # judged_grades[label] is the grade (-1 standing for "unjudged", below every grade)
    judged_grades = np.concatenate(([-1], aligned.grade_values))
    labels = np.where(judged, codes.astype(np.int64) + 1, 0)
    if judged_grades.shape[0] <= 256:
        labels = labels.astype(np.uint8)

    # the count measures read these (judged non-relevant documents: grades below -l, retrieved or not)
    counts = C.RankedRelevance(rel, offsets, aligned.n_relevant, aligned.judged,
                               aligned.judged_counts.between(0, rel_code))
    ctx = _TrecContext(aligned, counts, judged_grades, num_ret, num_rel_ret, num_docs, complete, judged_only)
    plan = []  # (printed name, kind, core measure or per-query values)
    for name, param in requested.items():
        plan += TREC_TABLE[name].compute(ctx, name, param)

    core_names = sorted({m for _, kind, m in plan if isinstance(m, str)})
    # on the codes: thresholds become codes, the gains of nDCG a gain per code
    measures = F.measures_on_codes(core_names, judged_grades, level) if core_names else []
    measures += [m for _, _, m in plan if isinstance(m, _measures.Measure)]
    for m in measures:
        gain = m.params.get("gain")
        if isinstance(gain, np.ndarray):
            gain[0] = 0.0  # an unjudged document gains nothing (trec_eval's get_gain of an unknown level)
    values = {}
    if measures:
        from rankjit._api import counts_of_the_judgments

        values = F.evaluate_coded(  # (R counts the judgments that labelled the rows: not checked against them)
            labels, scores, offsets, measures, n_relevant=counts_of_the_judgments(aligned.n_relevant),
            ideal_counts=aligned.judged_counts.shifted(1),  # code + 1: the judged grades' labels
        )
    out = []
    for name, kind, m in plan:
        if kind == "summary":
            out.append((name, kind, None))
        elif kind in ("int_total", "string"):
            out.append((name, kind, m))
        elif isinstance(m, str):
            out.append((name, kind, np.asarray(values[m], dtype=np.float64)))
        elif isinstance(m, _measures.Measure):
            out.append((name, kind, np.asarray(values[m.text], dtype=np.float64)))
        else:
            out.append((name, kind, np.asarray(m)))
    return out


class _TrecContext(NamedTuple):
    """What the measures of the table read: the aligned run and what trec_eval_values derived from it."""

    aligned: object
    counts: object  # rankjit.io._trec_counts.RankedRelevance
    judged_grades: np.ndarray  # the grade of each engine label (-1: unjudged)
    num_ret: np.ndarray
    num_rel_ret: np.ndarray
    num_docs: int  # -N
    complete: bool  # -c
    judged_only: bool  # -J


class TrecMeasure(NamedTuple):
    """A trec_eval measure rankjit computes: how it takes parameters, their default, how it is computed.

    ``params``: None (none), "cutoffs" (integers: P.5,10, printed P_5), "levels" (numbers
    sorted without duplicates, printed %.2f: iprec_at_recall_0.10), "values" (numbers as
    given, printed with their text: utility_2,-1,0,0) or "pairs" (name=value: ndcg.1=3,
    rbp.p=0.5, printed with their text), as trec_eval's meas_init.c takes them.
    ``compute(ctx, name, param)`` gives ``[(printed name, kind, core measure or per-query
    values)]``; ``param`` is None for the defaults.
    """

    params: str | None
    default: object
    compute: object


def _summary_only(ctx, name, param):
    return [(name, "summary", None)]


def _core(template, kind="float"):
    """A measure of rankjit's engine (a measure string; ``{}``: one per cutoff)."""
    def compute(ctx, name, param):
        if "{}" in template:
            return [(f"{name}_{k}", kind, template.format(k)) for k in param]
        return [(name, kind, template)]
    compute.template = template  # the registry's family that computes it (tests/test_registry.py)
    return compute


def _count(function, kind="float"):
    """A measure of the ranked relevance (rankjit.io._trec_counts)."""
    return lambda ctx, name, param: [(name, kind, function(ctx.counts))]


def _count_at(function, levels=False):
    """A count measure at each cutoff (``name_k``) or level (``name_0.10``)."""
    def compute(ctx, name, param):
        return [(C.level_name(name, x) if levels else f"{name}_{x}", "float", function(ctx.counts, x)) for x in param]
    return compute


def _with_values(function, default):
    """A count measure of numbers given as they are (printed with their text)."""
    def compute(ctx, name, param):
        text, values = (name, default) if param is None else (f"{name}_{param[0]}", param[1])
        return [(text, "float", function(ctx, values, param))]
    return compute


def _num_rel(ctx, name, param):
    if ctx.complete:
        # trec_eval -c sums num_rel over the qrels themselves: every judgment above 0, whatever
        # -l, -M or -J (m_num_rel.c, te_calc_avg_num_rel); the per-query lines follow -l
        total = int(ctx.aligned.judged_counts.at_least(1).sum())  # codes >= 1: the grades > 0
        return [(name, "int_total", (ctx.aligned.n_relevant, total))]
    return [(name, "int", ctx.aligned.n_relevant)]


def _ranks_nothing(ctx):
    """The queries trec_eval evaluates on an empty ranking: none retrieved after ``-M`` and ``-J``.

    A query the run lacks is not one under ``-c`` (trec_eval ranks a stand-in document for it),
    unless ``-J`` or ``-M 0`` drops that document too.  iprec_at_recall and 11pt_avg divide 0
    by 0 there (``-nan``).
    """
    empty = ctx.num_ret == 0
    missing = ~ctx.aligned.in_run
    if not ctx.judged_only and not (ctx.num_ret[~missing] == 0).any():  # (-J, -M 0: no stand-in document)
        empty &= ~missing
    return empty


def _iprec_at_recall(ctx, name, param):
    best = ctx.counts.best_precision_from()  # shared by the levels
    empty = _ranks_nothing(ctx)
    return [(C.level_name(name, x), "float", C.iprec_at_recall(ctx.counts, x, best, empty)) for x in param]


def _ap_running_sums(counts):
    """trec_eval's AP sums (m_map.c, m_map_cut.c), term by term: ``(running, first)``.

    At the j-th relevant retrieved document of query q (rank r, 1-based), ``running[first[q] + j]``
    is ``sum_{i <= j} i / r_i`` added in rank order, each term a division, as trec_eval adds
    them (``sum += (double) rel_so_far / (double) (i + 1)``): so the values are trec_eval's to the
    last bit (the engine multiplies by 1/r and can differ by an ulp, which shows in the 4th
    decimal of a value such as 0.44375).  The queries are added a term at a time together,
    and the last few long ones with a sequential ``cumsum`` each.
    """
    rel, offsets = counts.relevant, counts.offsets
    n_q = offsets.shape[0] - 1
    num_ret = np.diff(offsets)
    idx = np.flatnonzero(rel)
    query = np.repeat(np.arange(n_q), num_ret)[idx]
    rank = idx - offsets[:-1][query] + 1
    n = np.bincount(query, minlength=n_q)
    first = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(n, out=first[1:])
    terms = (np.arange(idx.shape[0]) - first[query] + 1).astype(np.float64) / rank.astype(np.float64)
    running = np.empty_like(terms)
    sums = np.zeros(n_q, dtype=np.float64)
    active, j = np.flatnonzero(n > 0), 0
    while active.shape[0] > 8:
        at = first[active] + j
        sums[active] += terms[at]
        running[at] = sums[active]
        j += 1
        active = active[n[active] > j]
    for q in active.tolist():  # (np.cumsum adds in order: x0, x0 + x1, ...)
        part = np.concatenate(([sums[q]], terms[first[q] + j : first[q + 1]]))
        running[first[q] + j : first[q + 1]] = np.cumsum(part)[1:]
    return running, first


def _trec_ap(ctx, name, param):
    """map, gm_map and map_cut_k as trec_eval computes them: its sums (:func:`_ap_running_sums`) over R."""
    counts = ctx.counts
    running, first = _ap_running_sums(counts)
    num_rel = counts.num_rel.astype(np.float64)

    def ap_of(h):  # AP of the first h relevant retrieved documents of each query
        out = np.zeros(num_rel.shape[0], dtype=np.float64)
        has = h > 0
        out[has] = running[first[:-1][has] + h[has] - 1] / num_rel[has]
        return out

    if name == "map_cut":
        return [(f"{name}_{k}", "float", ap_of(counts.rel_at(k))) for k in param]
    return [(name, "gm" if name == "gm_map" else "float", ap_of(counts.rel_ret))]


def _utility(ctx, values, param):
    if len(values) != 4:
        raise ValueError(f"measure utility: 4 coefficients (a,b,c,d) expected, got {param[0]!r}")
    out = C.utility(ctx.counts, *values, num_docs=ctx.num_docs)
    missing = ~ctx.aligned.in_run
    if param is None:
        out[missing] = 0.0  # trec_eval -c: a query the run lacks gets 0 (trec_eval.c resets "utility" only)
    elif not ctx.judged_only and not (ctx.num_ret[~missing] == 0).any():  # (-J, -M 0: no stand-in document)
        out[missing] += values[1] - values[3]  # utility_a,b,c,d: -c's stand-in document, retrieved, not relevant
    return out


def _ndcg(ctx, name, param):
    if param is None:
        return [(name, "float", "nDCG(gain='linear')")]
    # gains by level (levels -1 and -2 too: documents absent from the qrels, judged below 0)
    return _gain_loop(LOOPS.ndcg)(ctx, name, param)


def _rbp(ctx, name, param):
    # trec_eval's rbp: (1 - p) sum_r g_r p^(r-1), g = grade / top judged grade of the query
    # (unjudged and negative: 0), over the whole ranking: RBP with scale="query", a gain per code
    text = name if param is None else f"{name}_{param[0]}"
    p = RBP_P if param is None else param[1]["p"]
    gains = ctx.judged_grades.astype(np.float64)
    return [(text, "float", Measure(text, "RBP", None, {"p": p, "gain": gains}))]


def _gain_loop(function):
    """G, ndcg_rel, Rndcg: trec_eval's walks over gains by level (rankjit.io._trec_loops)."""
    def compute(ctx, name, param):
        text = name if param is None else f"{name}_{param[0]}"
        gains = None if param is None else param[1]
        if gains is not None:
            _check_gain_bound(ctx, name, param[0], gains)
        return [(text, "float", function(ctx.aligned, gains, judged_only=ctx.judged_only))]
    return compute


def _check_gain_bound(ctx, name, text, gains):
    """Refuse ``name.text`` gains whose DCG (or G's sums) could overflow float64 on this run.

    The bound is the array API's (``rankjit._measures``: "DCG could overflow"): the largest
    |gain| of a level (given, or an unlisted level's own grade) times the sum of the discount
    weights ``1 / log2(i + 1)`` over the longest ranking or ideal ranking of a query (G adds
    the gains undiscounted: times that number of ranks).  (trec_eval prints -nan, inf, or
    0.0000 through its gain-sorting quirk there.)
    """
    from rankjit._measures import dcg_could_overflow

    aligned = ctx.aligned
    largest, level = 0.0, None
    for lv, g in gains:
        if abs(g) > largest:
            largest, level = abs(g), lv
    grades = np.abs(aligned.grade_values.astype(np.float64))
    if grades.size and float(grades.max()) > largest:
        largest, level = float(grades.max()), int(aligned.grade_values[int(np.argmax(grades))])
    # the longest ranking (+1: -c's stand-in document) and the largest ideal ranking (judged documents)
    longest = int(np.diff(aligned.offsets).max(initial=0)) + 1
    ideal = int(aligned.judged_counts.totals().max(initial=0))
    n = max(longest, ideal)
    if name == "G":
        total = float(n)
        what = f"the {n} ranks of the longest ranking or ideal ranking (G adds the gains undiscounted)"
    else:
        total = float(np.sum(1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))))
        what = (f"the sum of the discount weights 1/log2(i+1) over the {n} ranks of the longest ranking or ideal "
                f"ranking ({total:.4g})")
    if dcg_could_overflow(largest, total):
        raise ValueError(f"measure {name}.{text}: DCG could overflow float64: the largest gain ({largest:.4g}, level "
                         f"{level}) times {what} exceeds 1.8e308; use smaller gains")


def _relstring(ctx, name, param):
    text, k = (name, None) if param is None else (f"{name}_{param[0]}", int(param[1][0]))
    return [(text, "string", LOOPS.relstring(ctx.aligned, k, judged_only=ctx.judged_only))]


def _rbp_resid(ctx, name, param):
    text = name if param is None else f"{name}_{param[0]}"
    p = RBP_P if param is None else param[1]["p"]
    out = C.rbp_residual(ctx.counts, p)
    missing = ~ctx.aligned.in_run
    if param is not None and not ctx.judged_only and not (ctx.num_ret[~missing] == 0).any():
        # -c: trec_eval.c resets "rbp_resid" only; rbp_resid_p=... keeps its stand-in document's, unjudged
        out[missing] = p + (1.0 - p) * 1.0
    return [(text, "float", out)]


#: trec_eval's measures that rankjit computes, and how (the others are listed on stderr): the
#: one table the parser, the defaults, the printed names and the computation read
TREC_TABLE = {
    "runid": TrecMeasure(None, None, _summary_only),
    "num_q": TrecMeasure(None, None, _summary_only),
    "num_ret": TrecMeasure(None, None, lambda ctx, name, param: [(name, "int", ctx.num_ret)]),
    "num_rel": TrecMeasure(None, None, _num_rel),
    "num_rel_ret": TrecMeasure(None, None, lambda ctx, name, param: [(name, "int", ctx.num_rel_ret)]),
    "map": TrecMeasure(None, None, _trec_ap),  # (trec_eval's own sums: the engine's AP can differ by an ulp)
    "gm_map": TrecMeasure(None, None, _trec_ap),
    "Rprec": TrecMeasure(None, None, _core("Rprec")),
    "bpref": TrecMeasure(None, None, _count(C.bpref)),
    "recip_rank": TrecMeasure(None, None, _core("RR")),
    "iprec_at_recall": TrecMeasure("levels", _LEVELS, _iprec_at_recall),
    "P": TrecMeasure("cutoffs", _CUTOFFS, _core("P@{}")),
    "recall": TrecMeasure("cutoffs", _CUTOFFS, _core("R@{}")),
    "gm_bpref": TrecMeasure(None, None, _count(C.bpref, "gm")),
    "Rprec_mult": TrecMeasure("levels", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                              _count_at(C.rprec_mult, levels=True)),
    "utility": TrecMeasure("values", None, _with_values(_utility, (1.0, -1.0, 0.0, 0.0))),
    "11pt_avg": TrecMeasure("values", None, _with_values(
        lambda ctx, v, p: C.eleven_pt_avg(ctx.counts, v, _ranks_nothing(ctx)), _LEVELS)),
    "binG": TrecMeasure(None, None, _count(C.bin_g)),
    "ndcg": TrecMeasure("pairs", None, _ndcg),
    "ndcg_cut": TrecMeasure("cutoffs", _CUTOFFS, _core("nDCG(gain='linear')@{}")),
    "map_cut": TrecMeasure("cutoffs", _CUTOFFS, _trec_ap),
    "relative_P": TrecMeasure("cutoffs", _CUTOFFS, _count_at(C.relative_p)),
    "success": TrecMeasure("cutoffs", (1, 5, 10), _core("Success@{}")),
    "set_P": TrecMeasure(None, None, _count(C.set_p)),
    "set_relative_P": TrecMeasure(None, None, _count(C.set_relative_p)),
    "set_recall": TrecMeasure(None, None, _count(C.set_recall)),
    "set_map": TrecMeasure(None, None, _count(C.set_map)),
    "set_F": TrecMeasure("values", None, _with_values(lambda ctx, v, p: C.set_f(ctx.counts, v[0]), (1.0,))),
    "num_nonrel_judged_ret": TrecMeasure(None, None, _count(C.num_nonrel_judged_ret, "int")),
    "rbp": TrecMeasure("pairs", None, _rbp),
    "rbp_resid": TrecMeasure("pairs", None, _rbp_resid),
    "unj": TrecMeasure("cutoffs", (5, 10, 20), _count_at(C.unjudged_at)),
    "relstring": TrecMeasure("values", None, _relstring),
    "infAP": TrecMeasure(None, None, lambda ctx, name, param: [(name, "float", LOOPS.infap(ctx.aligned))]),
    "G": TrecMeasure("pairs", None, _gain_loop(LOOPS.g_measure)),
    "ndcg_rel": TrecMeasure("pairs", None, _gain_loop(LOOPS.ndcg_rel)),
    "Rndcg": TrecMeasure("pairs", None, _gain_loop(LOOPS.rndcg)),
    # (trec_eval's dcg, ideal_dcg and ndcg share one parameter table: asked together with
    # parameters they crash it; here each takes its own)
    "dcg": TrecMeasure("pairs", None, _gain_loop(LOOPS.dcg)),
    "ideal_dcg": TrecMeasure("pairs", None, _gain_loop(LOOPS.ideal_dcg)),
    "yaap": TrecMeasure(None, None, _count(C.yaap)),
}


def _other_format(ctx, name, param):
    raise ValueError(f"measure {name} needs -R prefs, qrels_prefs or qrels_jg (rankjit.io._trec_prefs)")


# the measures of -R prefs / qrels_prefs and -R qrels_jg: computed by rankjit.io._trec_prefs
# (the table gives their parameters; rankjit.io._trec_prefs.check_measures, which format each needs)
TREC_TABLE.update({m: TrecMeasure(None, None, _other_format) for m in TREC_MEASURES if m.startswith("prefs_")})
TREC_TABLE.update(map_avgjg=TrecMeasure(None, None, _other_format),
                  P_avgjg=TrecMeasure("cutoffs", _CUTOFFS, _other_format),
                  Rprec_mult_avgjg=TrecMeasure("levels", TREC_TABLE["Rprec_mult"].default, _other_format))
#: the default parameters of each measure in the table (None: none, or set by the measure itself)
SUPPORTED = {name: m.default for name, m in TREC_TABLE.items()}
_PRINTED_SUFFIX = {"cutoffs": r"_\d+", "levels": r"_\d+\.\d\d", "values": r"(?:_[-+0-9.,eE]+)?",
                   "pairs": r"(?:_[^\s=]+=\S*)?"}
#: an output line of a measure rankjit computes (the tests compare these with trec_eval's)
SUPPORTED_LINE = re.compile(  # (Z: the z-scores of -Z)
    r"^Z?(?:" + "|".join(re.escape(m) + _PRINTED_SUFFIX.get(t.params, "") for m, t in TREC_TABLE.items()) + r")\s*\t"
)


def _c_float(value):
    """``value`` as C's ``printf("%6.4f")`` writes it: ``-nan``, ``inf``, right-aligned to 6 characters."""
    if math.isnan(value):
        return ("-nan" if math.copysign(1.0, value) < 0 else "nan").rjust(6)
    return f"{value:6.4f}"


def _summary(kind, values, n_q, zscores=False):
    if zscores:  # (-Z: every value a float; counts summed, gm values already logs)
        if kind == "int_total":
            return _c_float(float(values[1]))
        total = float(np.cumsum(values)[-1])
        return _c_float(total if kind == "int" else math.exp(total / n_q) if kind == "gm" else total / n_q)
    if kind == "int_total":  # (per-query values, the summary trec_eval prints instead of their sum)
        return str(values[1])
    if kind == "int":
        return str(int(np.sum(values)))
    if kind == "gm":
        logs = np.log(np.maximum(values, _MIN_GEO_MEAN))
        return _c_float(math.exp(float(np.cumsum(logs)[-1]) / n_q))
    # trec_eval adds the per-query values in order, then divides
    return _c_float(float(np.cumsum(values)[-1]) / n_q)


def format_trec_eval(aligned, results, *, per_query=False, runid=None, summary=True, zscores=False):
    """Lines of trec_eval's output (``%-22s\\t%s\\t%.4f``) for :func:`trec_eval_values`.

    ``summary=False`` (trec_eval ``-n``) leaves out the ``all`` lines.  ``zscores=True``
    (trec_eval ``-Z``, results of ``_trec_counts.zscore_results``): ``Z`` before each name
    but runid's and relstring's, every value printed as a float.
    """
    lines = []
    n_q = aligned.n_queries
    z = "Z" if zscores else ""
    if per_query:
        for qi, qid in enumerate(aligned.qids):
            for name, kind, values in results:
                if kind == "summary" or kind == "gm":
                    continue
                if kind == "string":  # relstring
                    lines.append(f"{name:<22}\t{qid}\t'{values[qi]}'")
                    continue
                if kind == "int_total":
                    value = _c_float(values[0][qi]) if zscores else str(int(values[0][qi]))
                else:
                    value = str(int(values[qi])) if kind == "int" and not zscores else _c_float(values[qi])
                lines.append(f"{z}{name:<22}\t{qid}\t{value}")
    for name, kind, values in results if summary else ():
        if kind == "string":  # relstring: per-query lines only
            continue
        if name == "runid":
            lines.append(f"{name:<22}\tall\t{runid if runid is not None else 'rankjit'}")
            continue
        if name == "num_q":
            value = _c_float(float(n_q)) if zscores else str(n_q)
        else:
            value = _summary(kind, values, n_q, zscores)
        lines.append(f"{z}{name:<22}\tall\t{value}")
    return lines


class _TrecEvalVersion(argparse.Action):
    """``-v``: the version on stderr, exit 0, before any file is read (as trec_eval does)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from rankjit import __version__

        print(f"rankjit trec_eval {__version__} (trec_eval 10.0's measures and options)", file=sys.stderr)
        parser.exit(0)


def _cmd_trec_eval(args):
    requested, missing = parse_trec_measures(args.measure)
    if args.rel_level < 0:
        raise ValueError(f"-l {args.rel_level}: negative relevance levels are not supported (trec_eval then counts "
                         "documents the qrels do not judge as relevant)")
    if args.max_docs is not None and args.max_docs < 0:
        raise ValueError(f"-M {args.max_docs}: the number of documents must be >= 0")
    from rankjit.io import _trec_prefs as PREFS  # -R prefs, qrels_prefs, qrels_jg

    if args.rel_format not in PREFS.FORMATS:
        raise ValueError(f"-R {args.rel_format}: unknown relevance format (trec_eval's: {', '.join(PREFS.FORMATS)})")
    PREFS.check_measures(requested, args.rel_format, defaulted=not args.measure)
    if args.results_format != "trec_results":
        raise ValueError(f"-T {args.results_format}: rankjit reads runs in trec_eval's 'trec_results' format only")
    zscores = C.read_zscores(args.zscores) if args.zscores is not None else None  # -Z
    if args.qrels == "-" and not os.path.exists("-"):  # (trec_eval, too, reads a file named '-' as the qrels)
        raise FileNotFoundError("-: no such file (standard input, '-', is read for the run only, as trec_eval does)")
    from rankjit import _compile_helper

    if args.rel_format == "qrels" and args.run != "-" and requested:
        _prefetch_evaluation(args, requested)
    try:
        return _trec_eval_files(args, requested, missing, zscores)
    finally:
        _compile_helper.wait_prefetch(cancel=True)  # (an error before the evaluation: the helper is not needed)


def _trec_eval_files(args, requested, missing, zscores):
    """``rankjit trec_eval`` once its options are checked: read, align, evaluate, print."""
    from rankjit import _compile_helper
    from rankjit.io import _trec_prefs as PREFS
    from rankjit.io._align import align
    from rankjit.io._trec import read_trec_qrels, read_trec_run

    if args.rel_format == "qrels":
        qrels = read_trec_qrels(args.qrels)
        if len(qrels) == 0:
            raise ValueError(f"{args.qrels}: no relevance judgments (the file is empty or all blank or comment lines)")
    else:
        judgments = PREFS.read_judgments(args.rel_format, args.qrels)
    # '-': the run from standard input, as trec_eval reads it (even when a file is named '-')
    run = read_trec_run(sys.stdin.buffer.read(), name="-") if args.run == "-" else read_trec_run(args.run)
    if len(run) == 0:
        raise ValueError(f"{args.run}: the run holds no results (the file is empty or all blank or comment lines)")
    if args.rel_format == "qrels":
        aligned = align(run, qrels, complete=args.complete, max_docs=args.max_docs, rel_level=args.rel_level)
        if args.judged_only:
            aligned = aligned.judged_only()
        _compile_helper.wait_prefetch()  # (its kernels, once in the cache, load instead of compiling here)
        results = trec_eval_values(aligned, requested, num_docs=args.num_docs, complete=args.complete,
                                   judged_only=args.judged_only) if requested else []
    else:
        aligned, results = PREFS.trec_eval_values(args.rel_format, judgments, run, requested, complete=args.complete,
                                                  max_docs=args.max_docs, rel_level=args.rel_level,
                                                  judged_only=args.judged_only)
    if zscores is not None:
        results = C.zscore_results(results, aligned.qids, zscores, _MIN_GEO_MEAN)
    if missing:
        print(f"rankjit trec_eval: not computed by rankjit, left out: {', '.join(missing)}", file=sys.stderr)
    if not results:
        return 0
    lines = format_trec_eval(aligned, results, per_query=args.query, runid=run.runid, summary=not args.nosummary,
                             zscores=zscores is not None)
    if lines:
        write_stdout("\n".join(lines) + "\n")
    return 0


def write_stdout(text):
    """Write ``text`` to standard output with ids that are not UTF-8 as the bytes the files hold.

    Ids are read losslessly (surrogate escapes for bytes that are not UTF-8); they are written
    back as UTF-8 with those escapes turned into their bytes, as trec_eval copies its ids,
    whatever the terminal's encoding.  A standard output without a byte buffer (a test's
    ``io.StringIO``) gets the text as it is.
    """
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()  # what was written as text first
    buffer.write(text.encode("utf-8", "surrogateescape"))
    buffer.flush()


# ---------------------------------------------------------------- rankjit trec_eval's first run: the helper
#: bytes read from the head of each file to guess the kernels a first run will compile (:func:`_prefetch_evaluation`)
_HEAD_BYTES = 1 << 18


def _file_head(path):
    """The first :data:`_HEAD_BYTES` bytes of a file (decompressed when gzip), cut after its last full line; b"" when
    it cannot be read (the command itself reports that)."""
    import gzip

    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as f:
                head = f.read(_HEAD_BYTES)
    except (OSError, EOFError, ValueError):
        return b""
    return head[: head.rfind(b"\n") + 1]


def _prefetch_evaluation(args, requested):
    """On a first run with this cache: a helper process compiles the kernels that will evaluate the run.

    This process then compiles the file readers and the alignment (several seconds on an
    empty cache) while the helper evaluates a small run shaped like the files'
    (:func:`prefetch_evaluation`: the engine's variant depends on the measures, the length
    of the rows and the grades, guessed from the files' first lines), which puts the engine
    variant and the trec_eval kernels this run needs in the disk cache.  Started only when
    the readers were never compiled into this cache (``rankjit._compile_helper``: not with
    one CPU, ``RANKJIT_COMPILE_HELPER=0``, ...).  A wrong guess costs the other CPU only:
    whatever is missing then compiles here, as without the helper.
    """
    from rankjit import _compile_helper
    from rankjit.io import _kernels as K

    if not (_compile_helper.enabled() and _compile_helper.never_cached(K.read_pairs)):
        return
    run_head, qrels_head = _file_head(args.run), _file_head(args.qrels)
    if not run_head or not qrels_head:
        return
    options = (args.num_docs, args.complete, args.judged_only, args.max_docs, args.rel_level)
    _compile_helper.prefetch(__name__, "prefetch_evaluation", (run_head, qrels_head, requested, options),
                             "the kernels that evaluate this run")


def prefetch_evaluation(run_head, qrels_head, requested, options):
    """:func:`trec_eval_values` on a small aligned run shaped like the files whose first lines are given.

    Two queries, each as long as the run's first query (capped at 1000 and at ``-M``),
    with the grades of the qrels' first lines, built with NumPy alone (no reader kernel
    compiles): so the engine variant and the kernels of :func:`trec_eval_values` that the
    real run needs compile (into the disk cache) in the process that calls this: the helper
    of :func:`_prefetch_evaluation`.
    """
    from rankjit.io._align import aligned_from_labels, code_grades, first_code_at_least

    num_docs, complete, judged_only, max_docs, rel_level = options
    first, n = None, 0
    for line in run_head.split(b"\n"):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if first is None:
            first = fields[0]
        elif fields[0] != first:
            break
        n += 1
    n = max(1, min(n, 1000, n if max_docs is None else max(max_docs, 1)))
    rows = map(bytes.split, qrels_head.split(b"\n"))
    grades = [int(f[3]) for f in rows if len(f) >= 4 and f[3].lstrip(b"-").isdigit()]
    grade_values, _ = code_grades(np.asarray(grades or [0, 1], dtype=np.int64))
    # labels: unjudged (0) mostly, then each judged grade (2 + code) and a negative one (1), in rank order
    pattern = np.concatenate((np.arange(2, grade_values.shape[0] + 2), [1], np.zeros(8, np.int64)))
    labels = np.resize(pattern, 2 * n).astype(np.int64)
    offsets = np.array([0, n, 2 * n], dtype=np.int64)
    grade_counts = np.zeros((2, grade_values.shape[0]), dtype=np.int64)
    for q in range(2):
        judged = labels[offsets[q]:offsets[q + 1]]
        grade_counts[q] += np.bincount(judged[judged >= 2] - 2, minlength=grade_values.shape[0]) + 1
    n_relevant = grade_counts[:, first_code_at_least(grade_values, rel_level):].sum(axis=1)
    aligned = aligned_from_labels(["q1", "q2"], offsets, labels, grade_values, grade_counts, n_relevant, rel_level,
                                  scores=-np.arange(2 * n, dtype=np.float64), rows=np.arange(2 * n, dtype=np.int64),
                                  in_run=np.ones(2, dtype=bool), runid="prefetch")
    if judged_only:
        aligned = aligned.judged_only()
    trec_eval_values(aligned, requested, num_docs=num_docs, complete=complete, judged_only=judged_only)


# ---------------------------------------------------------------- rankjit eval
def _split_runs_and_measures(items, measures):
    from rankjit import _measures

    runs, names = [], list(measures or [])
    for item in items:
        if os.path.exists(item):
            runs.append(item)
            continue
        try:
            _measures.parse(item)
        except (ValueError, TypeError) as exc:
            if any(c in item for c in "/\\") or "." in os.path.basename(item) and "@" not in item:
                raise FileNotFoundError(f"{item}: no such run file") from None
            raise ValueError(f"{item!r} is neither a run file nor a measure: {exc}") from None
        names.append(item)
    if not runs:
        raise ValueError("no run file given")
    if not names:
        raise ValueError("no measure given (e.g. 'nDCG@10' 'AP')")
    return runs, names


def _run_names(paths):
    base = [os.path.basename(p) for p in paths]
    return base if len(set(base)) == len(base) else list(paths)


def _cmd_eval(args):
    from rankjit.io._align import align
    from rankjit.io._trec import read_trec_qrels, read_trec_run

    runs, measures = _split_runs_and_measures(args.items, args.measure)
    from rankjit import _measures

    for m in measures:
        _measures.parse(m)  # unknown measures fail before any file is read
    qrels = read_trec_qrels(args.qrels)
    names = _run_names(runs)
    per_run = {}
    for name, path in zip(names, runs):
        aligned = align(read_trec_run(path), qrels, complete=args.complete, max_docs=args.max_docs)
        values = aligned.evaluate(measures, per_query=True)
        per_run[name] = (aligned.qids, values)
    text = _render(per_run, measures, args.per_query, args.format)
    write_stdout(text)
    return 0


def _mean(values):
    return float(np.mean(values)) if len(values) else float("nan")


def _render(per_run, measures, per_query, fmt):
    names = list(per_run)
    if fmt == "json":
        if per_query:
            doc = {run: {m: dict(zip(qids, map(float, vals[m]))) for m in measures}
                   for run, (qids, vals) in per_run.items()}
        else:
            doc = {run: {m: _mean(vals[m]) for m in measures} for run, (qids, vals) in per_run.items()}
        return json.dumps(doc, indent=2) + "\n"
    rows = []
    if per_query:
        lookup = {run: {m: dict(zip(qids, vals[m])) for m in measures} for run, (qids, vals) in per_run.items()}
        all_q = sorted({q for qids, _ in per_run.values() for q in qids},
                       key=lambda s: s.encode("utf-8", "surrogateescape"))  # byte order
        header = ["query", "measure", *names]
        for q in all_q:
            for m in measures:
                rows.append([q, m, *[lookup[r][m].get(q, float("nan")) for r in names]])
        for m in measures:
            rows.append(["all", m, *[_mean(per_run[r][1][m]) for r in names]])
    else:
        header = ["measure", *names]
        for m in measures:
            rows.append([m, *[_mean(per_run[r][1][m]) for r in names]])

    def cell(v):
        return f"{v:.4f}" if isinstance(v, (float, np.floating)) else str(v)

    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else v for v in row])
        return buf.getvalue()
    table = [header] + [[cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = []
    for row in table:
        lines.append("  ".join(c.ljust(w) if i < len(header) - len(names) else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    return "\n".join(lines) + "\n"


def register(subparsers):
    """Add ``trec_eval`` and ``eval`` to ``rankjit``'s sub-commands."""
    p = subparsers.add_parser(
        "trec_eval", help="trec_eval-compatible evaluation of a TREC run (same names, options, output)",
        description="Evaluate a TREC run like trec_eval: same measure names, options and output format, "
                    "for the measures rankjit computes (others are listed on stderr).",
    )
    # trec_eval's options, short and long (trec_eval.c), the long ones abbreviated as getopt_long allows
    p.add_argument("-q", "--query_eval_wanted", dest="query", action="store_true",
                   help="also print each query's values")
    p.add_argument("-n", "--nosummary", dest="nosummary", action="store_true", help="no summary ('all') lines")
    p.add_argument("-c", "--complete_rel_info_wanted", dest="complete", action="store_true",
                   help="average over every qrels query (missing ones count 0)")
    p.add_argument("-M", "--Max_retrieved_per_topic", dest="max_docs", type=int, default=None, metavar="N",
                   help="use at most N documents per query")
    p.add_argument("-l", "--level_for_rel", dest="rel_level", type=int, default=1, metavar="N",
                   help="lowest judgment counted as relevant (default 1)")
    p.add_argument("-J", "--Judged_docs_only", dest="judged_only", action="store_true",
                   help="judged documents only: drop the retrieved documents the qrels do not judge (grade >= 0)")
    p.add_argument("-N", "--Number_docs_in_coll", dest="num_docs", type=int, default=0, metavar="N",
                   help="documents in the collection (utility's non-relevant non-retrieved documents)")
    p.add_argument("-m", "--measure", dest="measure", action="append", metavar="MEASURE",
                   help="measure, set (official, all_trec) or measure.params, e.g. P.5,10 ndcg_cut.10 ndcg.1=3,2=9")
    p.add_argument("-R", "--Rel_info_format", dest="rel_format", default="qrels", metavar="FORMAT",
                   help="format of the judgments: qrels (default), prefs, qrels_prefs or qrels_jg")
    p.add_argument("-T", "--Results_format", dest="results_format", default="trec_results", metavar="FORMAT",
                   help="format of the run: trec_results (the only one rankjit reads)")
    p.add_argument("-Z", "--Zscore", dest="zscores", default=None, metavar="FILE",
                   help="print z-scores: (value - mean) / std_dev, from FILE's lines 'qid measure mean std_dev'")
    p.add_argument("-D", "--Debug_level", dest="debug_level", type=int, default=0, metavar="N",
                   help="accepted; rankjit prints no debugging output")
    p.add_argument("-o", "--Output_old_results_format", dest="old_format", action="store_true",
                   help="accepted and ignored (obsolete in trec_eval too)")
    p.add_argument("-v", "--version", action=_TrecEvalVersion, nargs=0, help="print the version and exit")
    p.add_argument("--debug", action="store_true", help="on an error, show the Python traceback")
    p.add_argument("qrels")
    p.add_argument("run", help="the run file, or '-' to read it from standard input")
    p.set_defaults(func=_cmd_trec_eval)

    p = subparsers.add_parser(
        "eval", help="evaluate TREC runs with ir_measures-style names (nDCG@10, AP, ERR@20, ...)",
        description="Evaluate one or more TREC runs against qrels. Arguments after the qrels that are "
                    "existing files are runs; the others are measures.",
    )
    p.add_argument("qrels")
    p.add_argument("items", nargs="+", metavar="RUN_OR_MEASURE", help="run files, then measures")
    p.add_argument("-m", "--measure", action="append", help="a measure (may be repeated)")
    p.add_argument("--per-query", action="store_true", help="one value per query (and the means)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.add_argument("-c", "--complete", action="store_true", help="count qrels queries missing from a run as 0")
    p.add_argument("-M", "--max-docs", type=int, default=None, help="use at most N documents per query")
    p.add_argument("--debug", action="store_true", help="on an error, show the Python traceback")
    p.set_defaults(func=_cmd_eval)
