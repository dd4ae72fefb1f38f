"""Measure names and their parameters, and the plan that drives the fused kernel.

Names follow ir_measures' grammar, case-insensitive: ``Name(param=value, ...)@k``,
for example ``nDCG@10``, ``nDCG(gain='linear')@10``, ``P(rel=2)@5``,
``ERR(max_grade=3)@20``, ``AP(denominator='r')@100``.
"""
from __future__ import annotations

import ast
import copy
import math
import re
import reprlib
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from rankjit._kernels import layout as Lay
from rankjit._registry import BY_NAME, GROUPS, INPUT_BY_NAME, INPUT_FAMILIES, LIST_FAMILIES

# family -> (kernel code, parameters with defaults, takes a cutoff), and the other spellings of
# each family: both from the registry (rankjit._registry), the one list of the families
FAMILIES = {f.name: (f.code, f.defaults, f.takes_k) for f in LIST_FAMILIES}
ALIASES = {alias: f.name for f in LIST_FAMILIES for alias in f.aliases}

MAX_K = 2**62  # cutoffs are int64 in the kernels
EMPTY_VALUES = {"zero": 0.0, "one": 1.0, "nan": math.nan}
DENOMINATORS = {"min_k_r": Lay.AP_MIN_K_R, "r": Lay.AP_R}

_IDENT_RE = re.compile(r"[A-Za-z_α][A-Za-z0-9_\-]*")  # (α: ir_measures' α_DCG and α_nDCG)

#: measures computed outside the list kernel (diversity, preference): their registry records
EXTERNAL = INPUT_BY_NAME
ALIASES.update({alias: f.name for f in INPUT_FAMILIES for alias in (f.name.lower(), *f.aliases)})


@dataclass
class Measure:
    """One requested measure: family, cutoff and parameters."""

    text: str
    family: str
    k: int | None
    params: dict = field(default_factory=dict)
    judged_only: bool | None = None  # judged_only=... in the name (None: the call's default)

    @property
    def external(self):
        return self.family in EXTERNAL


def _valid_names():
    return ", ".join(sorted(set(FAMILIES) | set(EXTERNAL)))


def _syntax_error(text, pos, what):
    return ValueError(
        f"cannot parse measure {text!r} at position {pos}: {what}; expected Name(param=value, ...)@k, e.g. 'nDCG@10'"
    )


_CLOSING = {"(": ")", "[": "]", "{": "}"}


def _closing_paren(text, open_at):
    """Position of the ``)`` that closes the ``(`` at ``open_at`` (brackets and quotes respected)."""
    stack = []
    quote = None
    i = open_at
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in _CLOSING:
            stack.append(_CLOSING[c])
        elif c in ")]}":
            if not stack or c != stack[-1]:
                raise _syntax_error(text, i, f"unbalanced {c!r}")
            stack.pop()
            if not stack:
                return i
        i += 1
    if quote:
        raise _syntax_error(text, open_at, "a string opened inside the parentheses is never closed")
    raise _syntax_error(text, open_at, "'(' is never closed")


def _split(text):
    """(name, parameter text, its position, cutoff text, its position) of a measure string."""
    n = len(text)
    i = len(text) - len(text.lstrip())
    m = _IDENT_RE.match(text, i)
    if not m:
        raise _syntax_error(text, i, "expected a measure name" if i < n else "the string is empty")
    name, i = m.group(), m.end()
    while i < n and text[i].isspace():
        i += 1
    args = args_at = None
    if i < n and text[i] == "(":
        close = _closing_paren(text, i)
        args, args_at, i = text[i + 1:close], i + 1, close + 1
        while i < n and text[i].isspace():
            i += 1
    k_text = k_at = None
    if i < n and text[i] == "@":
        k_at = i + 1
        while k_at < n and text[k_at].isspace():
            k_at += 1
        k_text = text[k_at:].rstrip()
        if not k_text:
            raise _syntax_error(text, k_at, "expected a cutoff after '@'")
        i = n
    if i < n:
        raise _syntax_error(text, i, f"unexpected {text[i]!r} (parameters go in parentheses, the cutoff after '@')")
    return name, args, args_at, k_text, k_at


def _param_error(text, pos, what):
    return ValueError(
        f"cannot parse the parameters of {text!r} at position {pos}: {what}; write them as name=value with literal "
        "values, e.g. nDCG(gain='linear')@10"
    )


def _parse_params(text, arg_text, args_at, mappings=()):
    """The ``name=value`` pairs of a measure string, each value a Python literal (a dict only for ``mappings``)."""
    params = {}
    if not arg_text.strip():
        return params
    shift = args_at - 2  # the text is parsed as ``f(<arg_text>)``
    try:
        call = ast.parse(f"f({arg_text})", mode="eval").body
    except SyntaxError as e:
        line_start = sum(len(line) + 1 for line in f"f({arg_text})".split("\n")[: (e.lineno or 1) - 1])
        pos = min(max(shift + line_start + (e.offset or 1) - 1, args_at), len(text) - 1)
        raise _param_error(text, pos, e.msg) from None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise _param_error(text, args_at, "not a list of name=value pairs")
    if call.args:
        raise _param_error(text, shift + call.args[0].col_offset, "a value without a name")
    for kw in call.keywords:
        if kw.arg is None:
            raise _param_error(text, shift + kw.col_offset, "'**' is not a parameter")
        at = shift + kw.value.col_offset
        if kw.arg in params:
            raise _param_error(text, shift + kw.col_offset, f"{kw.arg} is given twice")
        try:
            value = ast.literal_eval(kw.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise _param_error(text, at, f"the value of {kw.arg} is not a literal (quote strings: {kw.arg}='...')") \
                from None
        if isinstance(value, (dict, set, frozenset)) and not (isinstance(value, dict) and kw.arg in mappings):
            but = f" but {', '.join(mappings)} (a mapping {{grade: gain}})" if mappings else ""
            raise _param_error(text, at, f"{kw.arg} is a {type(value).__name__}; no parameter takes one{but} (a gain or "
                                         "pRel table is a list by grade: gain=[0, 1, 3])")
        params[kw.arg] = value
    return params


#: measure strings parsed already -> their :class:`Measure` (a template: :func:`parse` returns a copy), so that
#: a call repeated every training round parses nothing; emptied when it holds :data:`_PARSED_MAX` strings
_PARSED = {}
_PARSED_MAX = 4096


def parse(text) -> Measure:
    """Parse ``'Name(param=value, ...)@k'`` into a :class:`Measure` (a new object each call).

    Errors name the measure string and the (0-based) position of the problem in it.
    """
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise TypeError(f"a measure name must be a string, got {type(text).__name__}")
    if type(text) is not str:  # (a subclass may compare equal to another text: parsed each time)
        return _parse_text(text)
    template = _PARSED.get(text)
    if template is None:
        template = _parse_text(text)  # (an error is raised each time: nothing is kept)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[text] = template
    return _copy_of(template)


def _copy_of(template: Measure) -> Measure:
    """A copy of a kept :class:`Measure` that the caller may change (lists and dicts copied too: gain tables)."""
    return Measure(template.text, template.family, template.k, _copy_of_params(template.params),
                   template.judged_only)


def _parse_text(text) -> Measure:
    """:func:`parse` of a ``str``, every time."""
    raw, arg_text, args_at, k_text, k_at = _split(text)
    family = ALIASES.get(raw.lower())
    if family is None:
        raise ValueError(f"unknown measure {raw!r} in {text!r}; valid names: {_valid_names()}")
    if family in EXTERNAL:
        defaults, takes_k = EXTERNAL[family].defaults, EXTERNAL[family].takes_k
    else:
        _, defaults, takes_k = FAMILIES[family]
    k = None
    at_param = "" if family in EXTERNAL else BY_NAME[family].at_param
    if k_text is not None and at_param:  # IPrec@0.2: "@" sets a parameter, not a cutoff
        params = {} if arg_text is None else _parse_params(text, arg_text, args_at)
        if at_param in params:
            raise ValueError(f"{family}'s {at_param} is given twice in {text!r}: once in () and once after '@'")
        try:
            params[at_param] = float(k_text)
        except ValueError:
            raise ValueError(
                f"{at_param} of {text!r} (after '@') must be a number, got {k_text!r} (position {k_at})"
            ) from None
        return _with_judged_only(Measure(text, family, None, _known_params(text, family, params, defaults)))
    if k_text is not None:
        if not takes_k:
            raise ValueError(f"{family} takes no cutoff, got {text!r}")
        try:
            k = int(k_text)
        except ValueError:
            raise ValueError(
                f"cutoff of {text!r} must be a positive integer, got {k_text!r} (position {k_at})"
            ) from None
        if k <= 0:
            raise ValueError(f"cutoff of {text!r} must be a positive integer, got {k} (position {k_at})")
        if k > MAX_K:
            raise ValueError(f"cutoff of {text!r} is too large (at most 2**62); omit the cutoff for the whole row")
    mappings = () if family in EXTERNAL else [p.name for p in BY_NAME[family].params if p.kind == "gain_map_or_none"]
    params = {} if arg_text is None else _parse_params(text, arg_text, args_at, mappings)
    return _with_judged_only(Measure(text, family, k, _known_params(text, family, params, defaults)))


def _with_judged_only(m):
    """``m`` with its ``judged_only=`` parameter (any list measure takes it) moved to :attr:`Measure.judged_only`."""
    if "judged_only" in m.params:
        from rankjit._validation import flag

        value = m.params.pop("judged_only")
        m.judged_only = flag(value, "judged_only", where=f" in {m.text!r}")
    return m


def _known_params(text, family, params, defaults):
    for name in params:
        if name == "judged_only" and (family not in EXTERNAL or EXTERNAL[family].judged_only):
            continue  # every list measure, the diversity and the preference measures: see _with_judged_only
        if name not in defaults:
            valid = ", ".join(sorted(defaults)) or "none"
            raise ValueError(f"unknown parameter {name!r} for {family} in {text!r}; valid parameters: {valid}")
    return params


def parse_list(measures):
    """Parse the ``measures`` argument of ``evaluate``: one name or a sequence of names (at least one)."""
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    elif measures is None or isinstance(measures, (bytes, dict)) or not hasattr(measures, "__iter__"):
        raise TypeError(
            f"measures must be a measure name or a list of names, e.g. ['nDCG@10', 'AP'], got {measures!r}"
        )
    parsed = [parse(m) for m in measures]
    if not parsed:
        raise ValueError("no measures requested: measures is empty; pass at least one name, e.g. ['nDCG@10']")
    return parsed


def resolve(measure: Measure, defaults: dict) -> dict:
    """Parameters of ``measure`` with call-level ``defaults`` (where its record takes them) and family defaults.

    Every value, a list measure's or an input family's (diversity, preference), is validated
    and normalised by its registry record (:meth:`rankjit._registry.Param.check`): once,
    here, before any data is read; each error names the measure.  (An input family's checks
    that need the data stay with its module's ``evaluate_measure``.)
    """
    family = EXTERNAL[measure.family] if measure.family in EXTERNAL else BY_NAME[measure.family]
    out = {}
    for param in family.params:
        name = param.name
        if name in measure.params:
            value = measure.params[name]
        elif param.call_default and defaults.get(name) is not None:  # evaluate(rel=...): binary measures
            value = defaults[name]
        else:
            value = param.default
        try:
            out[name] = param.check(value, measure.text)
        except (ValueError, TypeError) as e:
            if measure.text in str(e):
                raise
            raise type(e)(f"{measure.text!r}: {e}") from None
    return out


class Request(NamedTuple):
    """One measure as asked for: its parsed string and its parameters, validated and normalised.

    ``judged_only``: computed on the judged documents alone (a condensed list), from the
    measure's ``judged_only=`` or the call's.
    """

    measure: Measure
    params: dict
    judged_only: bool = False

    @property
    def external(self) -> bool:
        return self.measure.external


def aggregate(measure) -> str:
    """How rankjit reduces ``measure``'s per-query values (a name or :class:`Measure`): ``_registry.AGGREGATES``."""
    m = parse(measure)
    return "mean" if m.external else BY_NAME[m.family].aggregate


def summed(measure) -> bool:
    """Whether rankjit sums ``measure`` (a name or :class:`Measure`) over the queries instead of averaging it.

    The counts NumQ, NumRet, NumRel and NumRelRet (``Family.aggregate == "sum"``), as
    trec_eval and ir_measures aggregate them.
    """
    return aggregate(measure) == "sum"


def reduce_values(measure, values) -> float:
    """``measure``'s value over the queries from its per-query ``values``, as :func:`rankjit.evaluate` gives it.

    The mean, the sum for the counts, or for Accuracy (``aggregate == "defined"``) the mean of
    the queries with a value (NaN left out, as ir_measures leaves them out; NaN when none has one).
    """
    how = aggregate(measure)
    values = np.asarray(values, dtype=np.float64)
    if how == "sum":
        return float(np.sum(values))
    if how == "defined":
        values = values[~np.isnan(values)]
        return float(np.mean(values)) if values.shape[0] else math.nan
    return float(np.mean(values))


#: resolved ``measures`` arguments of plain strings with literal call defaults (:func:`_requests_key`) -> their
#: :class:`Request` list (templates: :func:`requests` returns copies), so that a call repeated every training
#: round resolves nothing; emptied when it holds :data:`_RESOLVED_MAX` entries
_RESOLVED = {}
_RESOLVED_MAX = 1024


def _requests_key(measures, defaults):
    """The key of :data:`_RESOLVED`: the measure strings and the defaults spelled exactly, or None (not kept).

    Only ``str`` measure names (not subclasses, nor :class:`Measure` objects) and defaults
    that :func:`_spelling` spells by ``repr`` (1, 1.0 and True differ) are kept.
    """
    if type(measures) is str:
        texts = (measures,)
    elif type(measures) in (list, tuple) and all(type(m) is str for m in measures):
        texts = tuple(measures)
    else:
        return None
    spelled = _defaults_spelled(defaults)
    return None if spelled is None else (texts, spelled)


def _copy_of_params(params: dict) -> dict:
    """A copy of resolved parameters that the caller may change (lists, dicts and arrays copied)."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else copy.deepcopy(v) if isinstance(v, (list, dict)) else v)
            for k, v in params.items()}


class Resolved:
    """Measures resolved once, for a caller that evaluates them again and again under the same call defaults
    (a front end's evaluator): pass it as the ``measures`` of ``rankjit.evaluate``.

    It holds the :class:`Request` list of ``measures`` (any list :func:`requests` takes,
    :class:`Measure` objects with gain tables too) under ``defaults``; :func:`requests` gives
    copies of it when called with the same defaults (spelled exactly, as :func:`_requests_key`
    spells them), and resolves ``measures`` anew under any others.
    """

    __slots__ = ("measures", "requests", "defaults")

    def __init__(self, measures, defaults: dict):
        self.measures = measures if isinstance(measures, (str, Measure)) else list(measures)
        self.requests = _resolved_requests(self.measures, defaults)
        self.defaults = _defaults_spelled(defaults)


def _defaults_spelled(defaults: dict):
    """The call defaults spelled exactly (1, 1.0 and True differ), or None when one cannot be."""
    if any(type(value) not in _SPELLED for value in defaults.values()):
        return None
    return tuple((name, _spelling(value)) for name, value in sorted(defaults.items()))


def requests(measures, defaults: dict) -> list:
    """The ``measures`` argument of ``evaluate`` parsed and resolved, once: a list of :class:`Request`.

    ``defaults``: the call-level defaults (``rel=``, ``empty=``).  Every error of a
    measure string or of a parameter is raised here, before any data is read.  What a
    list of plain strings resolves to is kept (:data:`_RESOLVED`); each call gets copies,
    as it gets copies of a :class:`Resolved` made under the same defaults.
    """
    if type(measures) is Resolved:
        spelled = _defaults_spelled(defaults)
        if spelled is None or spelled != measures.defaults:
            return _resolved_requests(measures.measures, defaults)
        kept = measures.requests
    else:
        key = _requests_key(measures, defaults)
        kept = None if key is None else _RESOLVED.get(key)
    if kept is None:
        kept = _resolved_requests(measures, defaults)  # (an error is raised each time: nothing is kept)
        if key is None:
            return kept
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.clear()
        _RESOLVED[key] = kept
    return [Request(_copy_of(r.measure), _copy_of_params(r.params), r.judged_only) for r in kept]


def _resolved_requests(measures, defaults: dict) -> list:
    """:func:`requests`, every time."""
    out = []
    for m in parse_list(measures):
        judged_only = m.judged_only if m.judged_only is not None else bool(defaults.get("judged_only"))
        if judged_only and m.external and not EXTERNAL[m.family].judged_only:
            takers = ", ".join(f.name for f in EXTERNAL.values() if f.judged_only)
            raise ValueError(f"judged_only=True applies to the list measures and to {takers}; {m.text!r} does not "
                             "take it (evaluate it in a call of its own)")
        out.append(Request(m, resolve(m, defaults), judged_only))
    return out


def empty_value(empty) -> float:
    if empty is None:
        empty = "zero"
    if isinstance(empty, str) and empty in EMPTY_VALUES:
        return EMPTY_VALUES[empty]
    raise ValueError(f"unknown empty={empty!r}; valid values: 'zero', 'one', 'nan'")


# ---- per-rank weights ------------------------------------------------------------


def float_array(value, expected):
    """A parameter table (gains, weights, probabilities) as float64; a TypeError says ``expected`` otherwise."""
    if isinstance(value, (dict, set, frozenset, str, bytes)) or value is None:
        raise TypeError(f"{expected}, got {reprlib.repr(value)}")
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{expected}, got {reprlib.repr(value)}") from None


def discount_weights(discount, length, base=2.0):
    """w[r-1] for ranks r = 1..length, of a discount checked by the registry (a name or a finite 1-D array)."""
    r = np.arange(1, length + 1, dtype=np.float64)
    if isinstance(discount, str):
        if discount == "log2":
            return 1.0 / np.log2(r + 1.0)  # 1 / log2(r + 1)
        if discount == "zipf":
            return 1.0 / r  # 1 / r
        # "logb"
        if not np.isfinite(base) or base <= 1.0:
            raise ValueError(f"discount='logb' needs base > 1, got base={base}")
        # 1 for r < b, then 1 / log_b(r)
        return np.where(r < base, 1.0, np.log(base) / np.log(np.maximum(r, base)))  # log(max(r, b)) > 0
    out = np.zeros(length, dtype=np.float64)
    out[: min(length, discount.shape[0])] = discount[:length]
    return out  # 0 beyond the array's end


def utility_weights(utility, length):
    """ERR's utility of rank r = 1..length: 1/r ("reciprocal") or 1/log2(r + 1) ("log2")."""
    r = np.arange(1, length + 1, dtype=np.float64)
    if utility == "reciprocal":
        return 1.0 / r
    return 1.0 / np.log2(r + 1.0)


# ---- the kernel plan ----------------------------------------------------------------


@dataclass
class Plan:
    iparams: np.ndarray
    fparams: np.ndarray
    tables: np.ndarray
    itables: np.ndarray
    depth: int
    zero_safe: bool
    n_hist: int
    rel_labels: np.ndarray  # per measure, the threshold in the labels' dtype (see I_REL_KIND)
    ideal_other: bool = False  # some nDCG takes its ideal from ideal_counts or from non-integer gains
    groups: tuple = (True, True, True)  # which measure-pass groups (registry GROUPS: binary, graded, cascade) it uses
    signs: bool = False  # the rank pass counts the scores >= 0 of each row (Compat with ideal_counts)


class _Tables:
    def __init__(self):
        self.f = []
        self.i = []
        self.f_len = 0
        self.i_len = 0

    def add(self, values):
        values = np.asarray(values, dtype=np.float64)
        off = self.f_len
        self.f.append(values)
        self.f_len += values.shape[0]
        return off

    def add_int(self, values):
        values = np.asarray(values, dtype=np.int64)
        off = self.i_len
        self.i.append(values)
        self.i_len += values.shape[0]
        return off

    def arrays(self):
        f = np.concatenate(self.f) if self.f else np.zeros(0)
        i = np.concatenate(self.i) if self.i else np.zeros(0, np.int64)
        return np.ascontiguousarray(f, np.float64), np.ascontiguousarray(i, np.int64)


def _grade_error(batch, what, limit_text, fix):
    return ValueError(f"{what}: labels go up to {batch.max_label:g}, {limit_text}; {fix}")


#: a DCG bound (largest gain x sum of the discount weights) must stay below this: the kernel's
#: rounded sums of at most 2**31 terms stay finite (relative error < 2**-22)
DCG_LIMIT = float(np.finfo(np.float64).max) / (1.0 + 2.0**-20)
#: largest grade of a by-grade table built from max_grade (ERR, pFound): 2**24 + 1 float64 entries
MAX_TABLE_GRADE = 2**24
#: integers up to this are exact in float64, in which the kernels compare labels with rel
_EXACT_INT = 2**53


def _rel_threshold(rel, m, batch, ideal_top):
    """``(exact rel, float threshold for the kernel)`` of a binary measure, checked against the labels.

    For integer labels, ``label >= rel`` is ``label >= ceil(rel)``; the kernel compares in
    float64, which is exact when ``ceil(rel) <= 2**53`` or above every label (then nothing is
    relevant: the threshold is +inf).
    """
    where = f" in {m.text!r}"
    f = float(rel)  # finite: checked by the registry (Param.check)
    if batch.labels.dtype.kind not in "iu":
        return rel, f
    c = math.ceil(rel)
    if c > max(batch.max_label, ideal_top):
        return rel, math.inf  # above every grade: nothing is relevant
    if c > _EXACT_INT:
        raise ValueError(
            f"rel={rel}{where}: labels go up to {batch.max_label:.17g}, and thresholds beyond 2**53 cannot be "
            "compared exactly in float64; rescale the grades"
        )
    return rel, float(c)


def _typed_threshold(rel, dtype):
    """``(I_REL_KIND, threshold)``: ``label >= rel`` as an exact compare in the labels' own dtype.

    Integer labels compare with ``ceil(rel)`` (the dtype's minimum when below it: every
    label; nothing when above its maximum); float labels with the smallest value of their
    dtype ``>= rel`` (rel itself for float64).  One narrow, vectorised compare, and one
    compiled count for every threshold.
    """
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        c = math.ceil(rel)
        if c > info.max:
            return Lay.REL_NONE, 0
        return Lay.REL_INTEGER, max(c, int(info.min))
    with np.errstate(over="ignore"):  # beyond the dtype's range: inf, above every label
        t = np.dtype(dtype).type(rel)
    if float(t) < rel:  # rounded down (compared exactly, not in the dtype): the next value is the smallest >= rel
        t = np.nextafter(t, np.dtype(dtype).type(np.inf))
    return Lay.REL_FLOAT, t


def _grade_text(g):
    """A grade for a message: exact digits up to 2**53, else float64's 17 significant digits."""
    g = float(g)
    return str(int(g)) if g.is_integer() and abs(g) <= _EXACT_INT else f"{g:.17g}"


def _gain_overflow(m, grade, source):
    return ValueError(
        f"{m.text}: gain='exp2' of grade {_grade_text(grade)} overflows float64 (2**y - 1 exceeds 1.8e308 from "
        f"grade 1024 on; {source}); use gain='linear' or a gain array (a gain for each grade)"
    )


def _exp2(g):
    with np.errstate(over="ignore"):
        return np.exp2(np.asarray(g, dtype=np.float64)) - 1.0


def _grade_gains(gain, n_grades):
    """The table of ``gain='linear'`` (y) or ``'exp2'`` (2^y - 1) for the grades 0 .. n_grades - 1."""
    g = np.arange(n_grades, dtype=np.float64)
    return _exp2(g) if gain == "exp2" else g


def _string_gain(m, gain, batch, top_grade, ideal_counts, ideal_top):
    """(mode, table or None, largest gain, its grade) of gain='exp2' / 'linear'."""
    if batch.integer_labels and (top_grade <= 62 or ideal_counts is not None):
        # by-grade table; with ideal_counts always (the ideal reads the judged counts by grade)
        table = _grade_gains(gain, max(top_grade, ideal_top, 0) + 1)
        if not np.isfinite(table[-1]):
            source = f"labels go up to {top_grade}" if top_grade >= ideal_top else \
                f"ideal_counts counts documents of grade {ideal_top}"
            raise _gain_overflow(m, table.shape[0] - 1, source)
        return Lay.VALUE_TABLE, table, float(table[-1]), table.shape[0] - 1
    if ideal_counts is not None:
        from rankjit._validation import require_integer_grades

        require_integer_grades(batch, "ideal_counts=")
    top = batch.max_label
    largest = float(_exp2(top)) if gain == "exp2" else top
    if not np.isfinite(largest):
        raise _gain_overflow(m, top, f"labels go up to {_grade_text(top)}")
    return (Lay.VALUE_EXP2 if gain == "exp2" else Lay.VALUE_IDENTITY), None, largest, top


def _array_gain(m, gain, batch, top_grade, ideal_width, ideal_top):
    """(table, largest |gain| of a grade in use, that grade) of a gain array (1-D, finite: Param.check)."""
    from rankjit._validation import require_integer_grades

    table = gain
    require_integer_grades(batch, "a gain array")
    if top_grade >= table.shape[0]:
        raise _grade_error(batch, m.text, f"but the gain array covers grades 0..{table.shape[0] - 1}",
                           "give a gain for every grade")
    if ideal_width > table.shape[0]:
        raise ValueError(
            f"{m.text}: ideal_counts has {ideal_width} grade columns, but the gain array covers grades "
            f"0..{table.shape[0] - 1}; give a gain for every grade counted in ideal_counts"
        )
    used = np.abs(table[: max(top_grade, ideal_top, 0) + 1])
    g = int(np.argmax(used))
    return table, float(used[g]), g


def dcg_could_overflow(largest, total):
    """Whether a DCG could exceed float64: |largest gain| x ``total`` (the sum of |discount weights|) > 1.8e308.

    Shared by the array API (:func:`_check_dcg_bound`) and ``rankjit trec_eval``'s gain
    parameters (``rankjit.io._cli``), each with its own message.
    """
    with np.errstate(over="ignore"):
        bound = abs(largest) * total
    return not bound <= DCG_LIMIT


def _check_dcg_bound(m, largest, grade, weights):
    """Refuse a DCG that could overflow: largest gain x sum of |discount weights| within the cutoff."""
    with np.errstate(over="ignore"):
        total = float(np.sum(np.abs(weights)))
    if dcg_could_overflow(largest, total):
        raise ValueError(
            f"{m.text}: DCG could overflow float64: the largest gain ({largest:.4g}, grade {_grade_text(grade)}) "
            f"times the sum of the discount weights over {weights.shape[0]} ranks ({total:.4g}) exceeds 1.8e308; "
            "rescale the gains (gain=) or the discount weights (discount=)"
        )


def _grade_probabilities(mg, top):
    """``R(y) = (2^y - 1) / 2^mg`` for y = 0..top, each the correctly rounded float64 (never overflows).

    Python's integer division is correctly rounded; above 1200 only grades within 1076 of
    ``mg`` are not 0, and for them ``2^(y - mg)`` is the correctly rounded value (y >= 124).
    """
    table = np.zeros(top + 1, dtype=np.float64)
    for y in range(max(1, mg - 1076), top + 1):
        table[y] = (2**y - 1) / 2**mg if mg <= 1200 else math.ldexp(1.0, y - mg)
    return table


def _cascade_table(m, p, batch, top_grade):
    """(mode, table or None) of ERR / pFound: pRel array, probabilities, or R(y) from max_grade."""
    from rankjit._validation import require_integer_grades

    probabilities = p["probabilities"]
    table = p.get("prel")  # a 1-D array of probabilities (Param.check), or None
    if table is not None:
        if probabilities:
            raise ValueError("pass either prel= or probabilities=True, not both")
        require_integer_grades(batch, "prel=")
        if top_grade >= table.shape[0]:
            raise _grade_error(batch, m.text, f"but prel covers grades 0..{table.shape[0] - 1}",
                               "give a pRel for every grade")
        return Lay.VALUE_TABLE, table
    if probabilities:
        if batch.max_label > 1.0:
            raise ValueError(
                f"{m.text}: probabilities=True needs labels in [0, 1], but labels go up to {batch.max_label:g}; "
                "pass grades with probabilities=False and max_grade= instead"
            )
        return Lay.VALUE_IDENTITY, None
    mg = p["max_grade"]  # a positive int (Param.check)
    require_integer_grades(batch, f"{m.family} with max_grade=")
    if batch.max_label > mg:
        raise _grade_error(batch, m.text, f"above max_grade={mg}",
                           f"pass max_grade={int(batch.max_label)} (or probabilities=True for labels in [0, 1])")
    if top_grade > MAX_TABLE_GRADE:
        raise _grade_error(batch, m.text, f"and {m.family} looks R(y) up in a table by grade (at most grade 2**24)",
                           "map the grades to a smaller scale")
    return Lay.VALUE_TABLE, _grade_probabilities(mg, max(top_grade, 0))


def _ideal_facts(ideal_counts):
    """(columns, total judged documents of the largest query, highest grade with a count) of ideal_counts."""
    if ideal_counts is None:
        return 0, 0, -1
    from rankjit._validation import MAX_ROW_DOCUMENTS

    # (a GradeCounts: each count <= 2**62, at most one entry per grade; float sums: int64 ones of huge counts wrap)
    totals = np.bincount(ideal_counts.query_of_entries(), weights=ideal_counts.counts,
                         minlength=ideal_counts.n_queries)
    big = np.flatnonzero(totals > MAX_ROW_DOCUMENTS)
    if big.size:
        q = int(big[0])
        raise ValueError(
            f"ideal_counts[{q}] counts {totals[q]:.17g} judged documents; rankjit ranks at most 2**31 - 1 "
            "documents per query"
        )
    return ideal_counts.n_columns, int(totals.max(initial=0)), ideal_counts.top_grade()


@dataclass
class _RowContext:
    """What a row builder needs besides the measure: the batch and facts about it."""

    batch: object
    top_grade: int  # the largest label of integer labels, else -1
    ideal_counts: object  # judged documents per query and grade (a rankjit._grade_counts.GradeCounts) or None
    facts: tuple  # _ideal_facts(ideal_counts)
    wlen: int  # weights to tabulate: the cutoff, or the longest row


def _gain_of(m, p, batch, top_grade, ideal_width):
    """The gain a DCG row uses: ``gain``, or ir_measures' ``dcg`` / ``gains`` spelling of it.

    ``dcg="log2"`` is the linear gain, ``"exp-log2"`` exp2; ``gains={grade: gain}`` a table
    by grade where a grade the map does not name keeps its own value (trec_eval's ndcg.g=v).
    Either refuses a ``gain`` other than the default.
    """
    gain, dcg, gains = p["gain"], p.get("dcg"), p.get("gains")
    default = isinstance(gain, str) and gain == BY_NAME[m.family].param("gain").default
    if gains is not None:
        if not default or dcg == "exp-log2":
            raise ValueError(f"{m.text!r}: gains= sets the gain of each grade; it takes no gain= or dcg='exp-log2' "
                             "as well")
        from rankjit._validation import require_integer_grades

        require_integer_grades(batch, f"{m.text!r} (gains=)")
        table = np.arange(max(top_grade + 1, ideal_width, max(gains, default=0) + 1), dtype=np.float64)
        for grade, value in gains.items():
            table[grade] = value
        return table
    if dcg is not None:
        if not default:
            raise ValueError(f"{m.text!r}: dcg= and gain= both set the gain; give one of them")
        return "exp2" if dcg == "exp-log2" else "linear"
    return gain


def _dcg_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameter row of a DCG / nDCG measure; returns (zero_safe, n_hist)."""
    batch, top_grade, ideal_counts, wlen = ctx.batch, ctx.top_grade, ctx.ideal_counts, ctx.wlen
    ideal_width, ideal_total, ideal_top = ctx.facts
    zero_safe = True
    if m.family == "nDCG" and ideal_counts is not None:
        span = max(batch.max_count, ideal_total)
        wlen = span if m.k is None else min(m.k, span)
    gain = _gain_of(m, p, batch, top_grade, ideal_width)
    if isinstance(gain, str):
        mode, table, largest, grade = _string_gain(m, gain, batch, top_grade, ideal_counts, ideal_top)
    else:
        table, largest, grade = _array_gain(m, gain, batch, top_grade, ideal_width, ideal_top)
        mode = Lay.VALUE_TABLE
        zero_safe = table[0] == 0.0
    try:
        base = float(p["base"])
    except OverflowError:
        base = math.inf  # refused by discount='logb', ignored by the others
    weights = discount_weights(p["discount"], wlen, base)
    _check_dcg_bound(m, largest, grade, weights)
    ip[row, Lay.I_VALUE_MODE] = mode
    n_hist = 1
    if mode == Lay.VALUE_TABLE:
        ip[row, Lay.I_VALUE_OFF] = tab.add(table)
        ip[row, Lay.I_N_GRADES] = table.shape[0]
        order = np.argsort(-table, kind="stable")  # grades by gain, descending
        ip[row, Lay.I_ORDER_OFF] = tab.add_int(order)
        n_hist = table.shape[0]
        nonzero = np.flatnonzero(table[order] != 0.0)
        # grades of gain 0 at the end of the order add nothing (and no rank matters after them)
        ip[row, Lay.I_N_IDEAL] = int(nonzero[-1]) + 1 if nonzero.size else 0
    # the ideal DCG fills ranks gain by gain: sum_{r=lo}^{hi-1} w_r = C[hi] - C[lo], in every value
    # mode alike, so that a query's nDCG never depends on the other queries of the call
    ip[row, Lay.I_CUM_OFF] = tab.add(np.concatenate(([0.0], np.cumsum(weights))))
    ip[row, Lay.I_WEIGHT_OFF] = tab.add(weights)
    ip[row, Lay.I_WEIGHT_LEN] = wlen
    return zero_safe, n_hist


def _cascade_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameter row of ERR / pFound; returns (zero_safe, n_hist)."""
    wlen = ctx.wlen
    if m.family == "pFound":
        weights = (1.0 - p["p_break"]) ** np.arange(wlen, dtype=np.float64)  # (1 - p_break)^(r-1)
    else:
        weights = utility_weights(p["utility"], wlen)
    mode, table = _cascade_table(m, p, ctx.batch, ctx.top_grade)
    ip[row, Lay.I_VALUE_MODE] = mode
    if table is not None:
        ip[row, Lay.I_VALUE_OFF] = tab.add(table)
        ip[row, Lay.I_N_GRADES] = table.shape[0]
    ip[row, Lay.I_WEIGHT_OFF] = tab.add(weights)
    ip[row, Lay.I_WEIGHT_LEN] = wlen
    return table is None or table[0] == 0.0, 1


def _binary_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameters of a binary measure (rel, AP's denominator); returns (zero_safe, n_hist).

    ``fp[row, F_REL]`` is the threshold the kernel compares ranked labels with; the exact
    ``rel`` (for the count in the labels' own dtype) is read back by :func:`build_plan`.
    """
    rel, fp[row, Lay.F_REL] = _rel_threshold(p["rel"], m, ctx.batch, ctx.facts[2])
    if m.family == "AP":
        ip[row, Lay.I_WEIGHT_OFF] = tab.add(1.0 / np.arange(1, max(ctx.batch.max_count, 1) + 1))  # 1/r by rank
        ip[row, Lay.I_DENOMINATOR] = DENOMINATORS[p["denominator"]]
    return rel > 0, 1  # rel <= 0: every document, label 0 included, counts


def _rbp_weights(persistence, length):
    """RBP's weight of each rank r = 1..length: ``(1 - p) p^(r-1)``."""
    return (1.0 - persistence) * persistence ** np.arange(length, dtype=np.float64)


def _rbp_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameter row of RBP; returns (zero_safe, n_hist).

    ``RBP@k = (1 - p) sum_{r <= k} g_r p^(r-1)``: a DCG row with the weights
    ``(1 - p) p^(r-1)``.  Gains ``gain(y)``: ``rel=`` given, ``[y >= rel]``; ``gain="linear"``,
    ``y``; an array, by grade.  ``scale="query"`` (default) divides them by the query's top
    gain: an nDCG row whose ideal is the DCG@1 with weight 1 (cumulative weights 0, 1, 1,
    ...), from the row or from ``ideal_counts`` (judged documents, retrieved or not); a
    query whose top gain is not above 0 gets 0.  Binary gains are never scaled (their top
    is 1, or every gain is 0).
    """
    from rankjit._validation import require_integer_grades

    batch, top_grade, wlen = ctx.batch, ctx.top_grade, ctx.wlen
    ideal_width, _, ideal_top = ctx.facts
    persistence, rel, gain, scale = p["p"], p["rel"], p["gain"], p["scale"]
    weights = _rbp_weights(persistence, wlen)
    top = max(top_grade, ideal_top, 0)
    code = Lay.DCG
    if rel is not None:
        if not isinstance(gain, str):
            raise ValueError("pass either rel= (binary gains: 1 for label >= rel) or a gain array, not both")
        require_integer_grades(batch, "RBP with rel=")
        mode, table = Lay.VALUE_TABLE, (np.arange(top + 1) >= rel).astype(np.float64)  # [y >= rel]
    elif isinstance(gain, str):  # "linear"
        mode, table, largest, grade = _string_gain(m, "linear", batch, top_grade, ctx.ideal_counts, ideal_top)
        _check_dcg_bound(m, largest, grade, weights)
    else:
        mode = Lay.VALUE_TABLE
        table, largest, grade = _array_gain(m, gain, batch, top_grade, ideal_width, ideal_top)
        _check_dcg_bound(m, largest, grade, weights)
    if rel is None and scale == "query":
        code = Lay.NDCG  # divided by the ideal: the query's top gain
        fp[row, Lay.F_EMPTY] = 0.0  # top gain not above 0: RBP 0
    ip[row, Lay.I_CODE] = code
    ip[row, Lay.I_VALUE_MODE] = mode
    n_hist = 1
    if mode == Lay.VALUE_TABLE:
        ip[row, Lay.I_VALUE_OFF] = tab.add(table)
        ip[row, Lay.I_N_GRADES] = table.shape[0]
        order = np.argsort(-table, kind="stable")  # grades by gain, descending (the ideal's order)
        ip[row, Lay.I_ORDER_OFF] = tab.add_int(order)
        n_hist = table.shape[0]
        nonzero = np.flatnonzero(table[order] != 0.0)
        ip[row, Lay.I_N_IDEAL] = int(nonzero[-1]) + 1 if nonzero.size else 0
    cumulative = np.ones(wlen + 1)  # the ideal's weights: 1 at rank 1, 0 after (read by scale="query" only)
    cumulative[0] = 0.0
    ip[row, Lay.I_CUM_OFF] = tab.add(cumulative)
    ip[row, Lay.I_WEIGHT_OFF] = tab.add(weights)
    ip[row, Lay.I_WEIGHT_LEN] = wlen
    return table is None or table[0] == 0.0, n_hist



def row_rel(p):
    """The threshold of a binary-group row: ``rel``, or 1 for a count that reads none (NumQ, NumRet)."""
    rel = p.get("rel")
    return 1 if rel is None else rel


def _set_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameters of a set measure or count (rel, its kind, SetF's beta); returns (zero_safe, n_hist)."""
    kind = Lay.SET_REL_P if p.get("relative") else BY_NAME[m.family].kind
    if m.family == "NumRet" and p["rel"] is not None:  # NumRet(rel=): the documents with label >= rel
        kind = Lay.NUM_REL_RET
    out = _binary_row(row, m, dict(p, rel=row_rel(p)), ip, fp, tab, ctx)  # n counts every document either way
    ip[row, Lay.I_SET_KIND] = kind
    fp[row, Lay.F_PARAM] = p.get("beta", 0.0)
    return out


def _judged_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameters of Judged@k: P@k with rel=1 over the judged flags (the batch's labels then; the judged
    grades of ``on_judged_grades``: rel=judged_lo), divided by min(k, n) as ir_measures divides it."""
    ip[row, Lay.I_P_MIN_K_N] = 1
    return _binary_row(row, m, dict(p, rel=p.get("judged_lo", 1)), ip, fp, tab, ctx)  # judged: label >= judged_lo


def _rbp_residual_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameters of RBPResidual@k: ``1 - (1 - p) sum_{r <= d, judged} p^(r-1)`` over the judged flags
    (the batch's labels then: 0 unjudged, >= 1 judged, also the shifted grades of ``on_judged_grades``), a DCG
    row with the gains 0 (unjudged) and -1 (judged), the weights
    ``(1 - p) p^(r-1)`` and 1 added to the sum (``F_OFFSET``): ``p^d`` plus the weight of the unjudged ranks.
    ``all_judged="zero"`` (trec_eval's ``rbp_resid``) gives 0 instead of ``p^d`` when every document of the
    top d is judged: ``I_ZERO_WHEN_JUDGED``, with the flags' threshold 1 (``F_REL``) and p (``F_PARAM``)."""
    ip[row, Lay.I_CODE] = Lay.DCG
    ip[row, Lay.I_VALUE_MODE] = Lay.VALUE_TABLE
    lo = p.get("judged_lo", 1)  # judged: label >= lo (the flags: 1; the judged grades of on_judged_grades)
    judged = np.full(max(ctx.top_grade, lo) + 1, -1.0)  # unjudged: 0; judged: -1
    judged[:lo] = 0.0
    ip[row, Lay.I_VALUE_OFF] = tab.add(judged)
    ip[row, Lay.I_N_GRADES] = judged.shape[0]
    ip[row, Lay.I_WEIGHT_OFF] = tab.add(_rbp_weights(p["p"], ctx.wlen))
    ip[row, Lay.I_WEIGHT_LEN] = ctx.wlen
    fp[row, Lay.F_OFFSET] = 1.0
    if p["all_judged"] == "zero":
        ip[row, Lay.I_ZERO_WHEN_JUDGED] = 1
        fp[row, Lay.F_REL] = float(lo)  # judged: label >= lo
        fp[row, Lay.F_PARAM] = p["p"]
    return True, 1  # the judged documents alone are ranked; no ideal


def _judgments_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameters of Bpref / infAP: relevant is ``label >= rel`` (``F_REL``), judged non-relevant
    ``lo <= label < rel`` (``F_PARAM``), pooled but unjudged ``1 <= label < lo``.

    The batch's labels are judgment codes (rankjit._kernels.layout CODE_*, built with the
    measure's ``rel`` by ``rankjit._api.judgment_part``: rel = 3, lo = 2), or, for a request
    of :func:`on_judged_grades` (``p["judged_lo"]``), the judged grades (grade + lo judged,
    below lo unjudged: 1 pooled, 0 not; rel shifted there)."""
    ip[row, Lay.I_SET_KIND] = BY_NAME[m.family].kind  # Lay.BPREF or Lay.INFAP
    lo = p.get("judged_lo")
    fp[row, Lay.F_PARAM] = float(Lay.CODE_NONRELEVANT if lo is None else lo)
    return _binary_row(row, m, dict(p, rel=Lay.CODE_RELEVANT) if lo is None else p, ip, fp, tab, ctx)


def reads(measure) -> str:
    """The view of the batch a measure reads in the labels' place (``rankjit._registry.VIEWS``: ``Family.reads``)."""
    family = BY_NAME.get(measure.family)
    return "labels" if family is None else family.reads


def reads_judgment_codes(measure) -> bool:
    """Whether a measure reads judgment codes in the labels' place (Bpref, infAP)."""
    return reads(measure) == "judgment_codes"


def values_grade_zero(request) -> bool:
    """Whether a list measure (a :class:`Request`) gives a document of label 0 a value: a gain, a
    stopping probability, or relevance.

    Only such a measure tells a judged document of grade 0 from an unjudged one, which
    ``labels`` alone cannot (both have label 0): trec_eval, pytrec_eval and ir_measures give a
    document the qrels do not hold no gain and never count it as relevant, whatever grade 0
    gains.  They are the binary measures with ``rel <= 0``, DCG and nDCG with a gain of grade 0
    that is not 0 (``gains={0: g}``, a gain array), RBP with ``rel <= 0`` or such a gain array,
    and ERR / pFound with ``prel[0] > 0``: exactly the rows :func:`build_plan` finds not
    zero-safe (tests/test_judged_grade_zero.py holds the two to each other).  With
    ``judged=``, :func:`rankjit.evaluate` computes them on the labels of
    :func:`rankjit._validation.judged_grades_batch` (:func:`on_judged_grades`).
    """
    m, p = request.measure, request.params
    family = BY_NAME.get(m.family)
    if family is None or family.reads != "labels":  # Judged, RBPResidual, Bpref, infAP: flags / judgment codes
        return False
    if family.row in ("binary", "set", "iprec"):
        rel = p.get("rel")
        return rel is not None and rel <= 0  # (NumQ, NumRet: no threshold, no label read)
    if family.row == "graded":  # DCG, nDCG
        gains, gain = p.get("gains"), p.get("gain")
        if gains is not None:
            return gains.get(0, 0.0) != 0.0  # a grade the map does not name keeps its own value
        return not isinstance(gain, str) and gain[0] != 0.0
    if family.row == "rbp":
        if p["rel"] is not None:
            return p["rel"] <= 0
        return not isinstance(p["gain"], str) and p["gain"][0] != 0.0
    if family.row == "cascade":  # ERR, pFound: R(0) = 0 from max_grade or probabilities=True
        return p.get("prel") is not None and p["prel"][0] != 0.0
    return False  # the C/W/L measures (min_rel >= 0: grade 0 gains 0), Compat (reads labels > 0 only)


def any_values_grade_zero(measures, defaults) -> bool:
    """Whether some list measure of ``measures`` (names, as ``evaluate`` takes them, with its call-level
    ``defaults``: ``rel=``) gives grade 0 a value (:func:`values_grade_zero`); False when they do not parse
    (``evaluate`` then says why)."""
    try:
        parsed = requests(measures, defaults)
    except (ValueError, TypeError):
        return False
    return any(not r.external and values_grade_zero(r) for r in parsed)


#: the plan rows :func:`on_judged_grades` rewrites for the labels of ``judged_grades_batch``: those that
#: read a label through a threshold or a table by grade (not the C/W/L walks, Compat, Bpref / infAP)
ON_JUDGED_GRADES_ROWS = frozenset(("binary", "set", "iprec", "graded", "rbp", "cascade", "judged", "rbp_residual",
                                   "judgments"))


def on_judged_grades(request, batch, ideal_width, judged_lo=1) -> Request:
    """A measure rewritten for the labels of ``judged_grades_batch(batch)`` (rows of :data:`ON_JUDGED_GRADES_ROWS`).

    Those labels are ``y + judged_lo`` for a document judged with grade ``y`` and below
    ``judged_lo`` for an unjudged one: 0, or with ``judged_lo = 2`` (a pool given) 1 for one
    in the pool and 0 for one outside (``ideal_counts`` with ``judged_lo`` columns of 0 in
    front); ``batch`` is the one with the grades (integer labels), ``ideal_width`` the number
    of columns of its ``ideal_counts`` (0: none).  A threshold ``rel > 0`` becomes
    ``rel + judged_lo``, and ``rel <= 0`` (every judged document is relevant) ``judged_lo``; a
    gain or probability by grade becomes a table with ``judged_lo`` zeros in front (the
    unjudged documents' entries); Judged@k and RBPResidual read ``label >= judged_lo`` as
    judged, Bpref and infAP ``judged_lo <= label < rel`` as judged non-relevant (infAP
    ``1 <= label < judged_lo`` as pooled but unjudged).  So one ranking of these labels serves
    the measures of the labels, those that give grade 0 a value (:func:`values_grade_zero`)
    and those of the judged flags and of the judgment codes.  The measure keeps its text.
    Checks against the batch are :func:`build_plan`'s, on ``batch`` itself.
    """
    m, p = request.measure, dict(request.params)
    row = BY_NAME[m.family].row
    top = int(batch.max_label) if batch.integer_labels else -1
    width = max(top + 1, ideal_width, 1)  # grades 0..top, and every column of ideal_counts
    unjudged = np.zeros(judged_lo)
    if row in ("binary", "set", "iprec", "judgments"):
        rel = p.get("rel")
        if rel is not None:  # (NumQ: no threshold)
            p["rel"] = rel + judged_lo if rel > 0 else judged_lo  # rel <= 0: every judged document, no unjudged one
        if row == "judgments":  # Bpref, infAP: judged non-relevant judged_lo <= label < rel + judged_lo
            p["judged_lo"] = judged_lo
    elif row == "graded":  # a table of gains: from gains= (every grade up to the largest one named) or gain=
        gain = _gain_of(m, p, batch, top, ideal_width)
        if isinstance(gain, str):  # "linear": y; "exp2": 2^y - 1
            gain = _grade_gains(gain, width)
        p.update(gain=np.concatenate((unjudged, gain)), gains=None, dcg=None)
    elif row == "rbp":
        if p["rel"] is not None:  # binary gains [y >= rel], never scaled (rel <= 0: 1 for every grade)
            p.update(rel=None, scale="none", gain=(np.arange(width) >= p["rel"]).astype(np.float64))
        elif isinstance(p["gain"], str):  # "linear": y
            p["gain"] = _grade_gains(p["gain"], width)
        p["gain"] = np.concatenate((unjudged, p["gain"]))
    elif row == "cascade":  # ERR, pFound: the stopping probability of each grade, as a pRel table
        _, prel = _cascade_table(m, p, batch, top)  # pRel, R(y) from max_grade, or None: the label itself
        if prel is None:  # probabilities=True (grades 0 and 1 here)
            prel = np.arange(max(top, 0) + 1, dtype=np.float64)
        p.update(prel=np.concatenate((unjudged, prel)), probabilities=False)
    elif row in ("judged", "rbp_residual"):  # judged: label >= judged_lo
        p["judged_lo"] = judged_lo
    else:
        raise AssertionError(f"{m.text!r} reads labels that on_judged_grades cannot shift")
    return Request(m, p, request.judged_only)


def _iprec_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameters of IPrec (rel, the recall level); returns (zero_safe, n_hist)."""
    out = _binary_row(row, m, p, ip, fp, tab, ctx)
    fp[row, Lay.F_PARAM] = p["recall"]
    fp[row, Lay.F_OFFSET] = IPREC_ROUNDING[p["rounding"]]
    return out


def _cwl_gains(m, p, batch, top_grade):
    """The gain of each grade 0..top of a C/W/L measure: ``(clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``

    ir_measures' cwl_eval provider rescales the grades so, into [0, 1]; ``min_rel >= 0``
    (Param.check), so grade 0 has gain 0.
    """
    from rankjit._validation import require_integer_grades

    lo, hi = p["min_rel"], p["max_rel"]
    if not hi > lo:
        raise ValueError(f"{m.text!r}: max_rel must be above min_rel, got min_rel={lo!r}, max_rel={hi!r} (the gains "
                         "(clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel) rescale the grades to [0, 1])")
    require_integer_grades(batch, f"{m.text!r} (a gain by grade)")
    if top_grade > MAX_TABLE_GRADE:
        raise _grade_error(batch, m.text, f"and {m.family} looks the gains up in a table by grade (at most grade "
                           "2**24)", "map the grades to a smaller scale")
    y = np.arange(max(top_grade, 0) + 1, dtype=np.float64)
    return (np.clip(y, lo, hi) - lo) / (hi - lo)  # (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)


def _two_t(m, p):
    """2T of INSQ, INST and NERR11 (their C_i read i + 2T), refused when it overflows float64."""
    two_t = 2.0 * p["T"]
    if not math.isfinite(two_t):
        raise ValueError(f"{m.text!r}: T={p['T']!r} is too large: {m.family} reads i + 2T, which must stay below "
                         "1.8e308")
    return two_t


def _value_table(row, ip, tab, table):
    ip[row, Lay.I_VALUE_MODE] = Lay.VALUE_TABLE
    ip[row, Lay.I_VALUE_OFF] = tab.add(table)
    ip[row, Lay.I_N_GRADES] = table.shape[0]


def _cwl_dcg_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameter row of SDCG / INSQ: a DCG row; returns (zero_safe, n_hist).

    Their continuation C_i depends on the rank alone, so the C/W/L weight of rank i,
    ``W_i = reach_i / sum_{j <= N} reach_j`` with ``reach_i = prod_{j < i} C_j``, is a
    per-rank discount: ``EU = sum_{i <= N} W_i g_i`` is the DCG with the weights ``W``,
    cut at ``N`` (the row's cutoff: ``min(k, 1000)`` for SDCG, cwl_eval's 1000 for
    INSQ).  The normaliser runs over all ``N`` ranks, past the row's end too.
    """
    n_ranks = BY_NAME[m.family].cutoff(m.k)
    r = np.arange(1, n_ranks + 1, dtype=np.float64)
    if m.family == "SDCG":
        reach = 1.0 / np.log2(r + 1.0)  # prod_{j<i} log(j + 1) / log(j + 2) = 1 / log2(i + 1)
    else:  # INSQ: prod_{j<i} ((j + 2T - 1) / (j + 2T))^2 = (2T / (i + 2T - 1))^2
        two_t = _two_t(m, p)
        reach = (two_t / (r + two_t - 1.0)) ** 2
    weights = reach[: ctx.wlen] / np.sum(reach)  # W_i = reach_i / sum_{j <= N} reach_j
    table = _cwl_gains(m, p, ctx.batch, ctx.top_grade)
    _value_table(row, ip, tab, table)
    ip[row, Lay.I_WEIGHT_OFF] = tab.add(weights)
    ip[row, Lay.I_WEIGHT_LEN] = ctx.wlen
    return table[0] == 0.0, 1



def _cwl_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameter row of a C/W/L walk (NERR8-NERR11, INST, BPM); returns (zero_safe, n_hist).

    The kind of continuation ``C_i`` and its number (NERR10's p, or T) go to
    ``I_CWL_KIND`` / ``F_PARAM``; the kernel (``rankjit._kernels.cascade.cwl_walk``) walks
    the ranks ``1 .. N = I_K``, the cutoff within cwl_eval's 1000.  NERR8-NERR11's
    ``C_i = c_i (1 - g_i)`` get the products of their factors by rank,
    ``P_i = prod_{j<i} c_j`` (i = 1..N), and their running sums ``S_i = P_1 + ... + P_i``.
    """
    table = _cwl_gains(m, p, ctx.batch, ctx.top_grade)
    _value_table(row, ip, tab, table)
    ip[row, Lay.I_CWL_KIND] = BY_NAME[m.family].kind
    if m.family == "INST":
        _two_t(m, p)
    fp[row, Lay.F_PARAM] = p["p"] if "p" in p else p.get("T", 0.0)
    if m.family.startswith("NERR"):
        n_ranks = BY_NAME[m.family].cutoff(m.k)
        r = np.arange(1, n_ranks + 1, dtype=np.float64)
        if m.family == "NERR8":
            reach = np.ones(n_ranks)  # c_i = 1
        elif m.family == "NERR9":
            reach = 1.0 / r  # prod_{j<i} j / (j + 1) = 1 / i
        elif m.family == "NERR10":
            reach = p["p"] ** (r - 1.0)  # p^(i-1)
        else:  # NERR11: prod_{j<i} ((j + 2T - 1) / (j + 2T))^2 = (2T / (i + 2T - 1))^2
            two_t = _two_t(m, p)
            reach = (two_t / (r + two_t - 1.0)) ** 2
        ip[row, Lay.I_WEIGHT_OFF] = tab.add(reach)
        ip[row, Lay.I_CUM_OFF] = tab.add(np.concatenate(([0.0], np.cumsum(reach))))
        ip[row, Lay.I_WEIGHT_LEN] = n_ranks
    return table[0] == 0.0, 1


def _compat_row(row, m, p, ip, fp, tab, ctx):
    """Fill the parameter row of Compat; returns (zero_safe, n_hist).

    The walk (``rankjit._kernels.cascade.compat_walk``) reads the tables, for
    ``i = 0 .. Dmax`` (``Dmax``: the longest row, or the most judged documents of a query
    in ``ideal_counts``): ``H[i] = sum_{t<i} p^t / (t + 1)`` and ``Z[i] = sum_{t<i} p^t``,
    and one slot of the grade scratch per grade.  Only the
    relevant documents (label > 0) count, so the ranked list may leave the others out.
    """
    from rankjit._validation import require_integer_grades

    batch, top_grade = ctx.batch, ctx.top_grade
    ideal_width, ideal_total, _ = ctx.facts
    require_integer_grades(batch, f"{m.text!r} (its ideal ranking orders the documents by grade)")
    if top_grade > MAX_TABLE_GRADE:
        raise _grade_error(batch, m.text, f"and {m.family} counts the documents of each grade (at most grade 2**24)",
                           "map the grades to a smaller scale")
    depth = max(batch.max_count, ideal_total)  # D = max(n, R) of every query
    weights = p["p"] ** np.arange(depth, dtype=np.float64)  # p^t (0^0 = 1)
    h = np.concatenate(([0.0], np.cumsum(weights / np.arange(1, depth + 1))))  # H[i] = sum_{t<i} p^t / (t + 1)
    ip[row, Lay.I_WEIGHT_OFF] = tab.add(h)
    ip[row, Lay.I_VALUE_OFF] = tab.add(np.concatenate(([0.0], np.cumsum(weights))))  # Z[i] = sum_{t<i} p^t
    ip[row, Lay.I_WEIGHT_LEN] = depth
    width = max(top_grade + 1, ctx.facts[0], 1)  # grades 0..top of the row, and every column of ideal_counts
    ip[row, Lay.I_N_GRADES] = width
    fp[row, Lay.F_PARAM] = p["p"]
    fp[row, Lay.F_OFFSET] = 1.0 if p["normalize"] else 0.0
    return True, max(width, ideal_width)


#: IPrec: the offset of ``c = floor(level R + offset)``: trec_eval 9 (pytrec_eval, ir_measures) adds 0.9 and
#: truncates; trec_eval 10 rounds half away from zero (C's lround)
IPREC_ROUNDING = {"trec_eval9": 0.9, "trec_eval10": 0.5}


#: the plan-row builder of each kind (a registry record's ``row``): each fills the measure's
#: parameter row and tables and returns (zero_safe, the grade histogram length it needs)
ROW_BUILDERS = {"binary": _binary_row, "graded": _dcg_row, "cascade": _cascade_row, "rbp": _rbp_row,
                "set": _set_row, "iprec": _iprec_row, "judged": _judged_row, "rbp_residual": _rbp_residual_row,
                "judgments": _judgments_row,
                "cwl_dcg": _cwl_dcg_row, "cwl": _cwl_row, "compat": _compat_row}


def _measure_row(row, m, p, ip, fp, tab, ties, ctx):
    """Fill the parameter row of one measure; returns (zero_safe, histogram length it needs)."""
    from rankjit._kernels.ranking import TIES_AVERAGE

    family = BY_NAME[m.family]
    ip[row, Lay.I_CODE] = family.code
    cut = family.cutoff(m.k)  # the cutoff, within the family's horizon (the C/W/L measures' 1000 ranks)
    ip[row, Lay.I_K] = -1 if cut is None else cut
    if ties == TIES_AVERAGE and not family.ties_average:
        raise ValueError(
            f"ties='average' is not available for {m.family} ({m.text!r}): its expectation over tied "
            "orders has no closed form here; use ties='pessimistic', 'optimistic' or 'stable'"
        )
    if "empty" in p:
        fp[row, Lay.F_EMPTY] = EMPTY_VALUES[p["empty"]]
    return ROW_BUILDERS[family.row](row, m, p, ip, fp, tab, ctx)


def ranks_read(measure) -> float:
    """The ranks a measure reads: its cutoff, or ``math.inf`` for the whole ranking.

    A family without a cutoff (Rprec: its cutoff is R) needs the whole ranking; one with a
    horizon, that many ranks at most (:meth:`Family.cutoff`).
    """
    family = BY_NAME[measure.family]
    cut = family.cutoff(measure.k)
    return math.inf if cut is None or not (family.takes_k or family.horizon) else cut


#: plans built already (:func:`plan_for`), by everything :func:`build_plan` reads: a call repeated on batches
#: alike (a training loop's validation set, one pytrec_eval-style evaluation per query) builds its plan once;
#: emptied when it holds :data:`_PLANS_MAX` plans
_PLANS = {}
_PLANS_MAX = 256
#: plans whose arrays take more bytes are built each time (long rows: building is a small part of such a call)
_PLAN_KEPT_BYTES = 1 << 16
#: parameter values a plan's key spells by ``repr`` (1, 1.0, True and '1' differ, as do 0.0 and -0.0)
_SPELLED = (str, int, float, bool, type(None))
_UNSPELLED = object()


def _spelling(value):
    """An exact, hashable spelling of a parameter value (arrays by dtype, shape and bytes), else ``_UNSPELLED``."""
    t = type(value)
    if t in _SPELLED:
        return repr(value)
    if t is np.ndarray:
        if value.dtype.kind == "O" or value.size > 4096:
            return _UNSPELLED
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if t in (tuple, list):
        parts = tuple(map(_spelling, value))
        return _UNSPELLED if any(x is _UNSPELLED for x in parts) else (t.__name__, parts)
    if t is dict:
        parts = tuple((_spelling(k), _spelling(v)) for k, v in value.items())
        return _UNSPELLED if any(x is _UNSPELLED for pair in parts for x in pair) else ("dict", parts)
    return _UNSPELLED


def _plan_key(requests, batch, ties, ideal_counts, facts):
    """What :func:`build_plan` reads of its arguments, or None when a parameter cannot be spelled exactly.

    Of the batch it reads the longest row, the largest label, whether the labels are whole
    numbers and their dtype (the rest only to name a bad label, when it raises: nothing is
    kept then); of ``ideal_counts`` whether it is given and its :func:`_ideal_facts`; of each
    request its family, cutoff, ``judged_only`` and parameters (the measure's text only in
    messages).
    """
    measures = []
    for r in requests:
        params = tuple((name, _spelling(value)) for name, value in sorted(r.params.items()))
        if any(x is _UNSPELLED for _, x in params):
            return None
        measures.append((r.measure.family, r.measure.k, r.judged_only, params))
    return (tuple(measures), int(ties), int(batch.max_count), type(batch.max_label), repr(batch.max_label),
            bool(batch.integer_labels), batch.labels.dtype.str, ideal_counts is None, facts)


def plan_for(requests, batch, ties, ideal_counts) -> Plan:
    """:func:`build_plan`, kept for the next call that reads the same (:func:`_plan_key`); the plan is only read."""
    facts = _ideal_facts(ideal_counts)
    key = _plan_key(requests, batch, ties, ideal_counts, facts)
    plan = None if key is None else _PLANS.get(key)
    if plan is None:
        plan = build_plan(requests, batch, ties, ideal_counts, facts)
        if key is not None and sum(a.nbytes for a in (plan.iparams, plan.fparams, plan.tables, plan.itables,
                                                      plan.rel_labels)) <= _PLAN_KEPT_BYTES:
            if len(_PLANS) >= _PLANS_MAX:
                _PLANS.clear()
            _PLANS[key] = plan
    return plan


def build_plan(requests, batch, ties, ideal_counts, facts=None) -> Plan:
    """Turn resolved measures (:class:`Request`) into the kernel's parameter rows and tables.

    ``ideal_counts``: None, or the judged counts checked by ``rankjit._api._as_ideal_counts``
    (a :class:`~rankjit._grade_counts.GradeCounts`); ``facts``: its :func:`_ideal_facts`, if
    known.  :func:`plan_for` keeps the plans it builds.

    The parameters were validated on their own by :func:`resolve`; here they are checked
    against the batch (grades a table must cover, thresholds the labels' dtype can hold).
    """
    measures = [r.measure for r in requests]
    resolved = [r.params for r in requests]
    n_m = len(measures)
    ip = np.zeros((n_m, Lay.N_ICOLS), dtype=np.int64)
    fp = np.zeros((n_m, Lay.N_FCOLS), dtype=np.float64)
    tab = _Tables()
    max_count = batch.max_count
    if facts is None:
        facts = _ideal_facts(ideal_counts)
    ideal_width = facts[0]
    depth = 1
    zero_safe = True
    n_hist = 1
    top_grade = int(batch.max_label) if batch.integer_labels else -1
    if ideal_counts is not None and batch.integer_labels and ideal_width <= top_grade:
        raise ValueError(
            f"ideal_counts has {ideal_width} grade columns (grades 0..{ideal_width - 1}), but the labels go up to "
            f"{top_grade}; it must count every grade that occurs (shape (n_queries, max_grade + 1))"
        )

    for row, (m, p) in enumerate(zip(measures, resolved)):
        family = BY_NAME[m.family]
        cut = family.cutoff(m.k)  # m.k, or within the family's horizon
        wlen = batch.max_count if cut is None else min(cut, batch.max_count)
        ctx = _RowContext(batch, top_grade, ideal_counts, facts, wlen)
        try:
            safe, hist = _measure_row(row, m, p, ip, fp, tab, ties, ctx)
        except (ValueError, TypeError) as e:
            if m.text in str(e):
                raise
            raise type(e)(f"{m.text!r}: {e}") from None  # every error names the measure it comes from
        zero_safe = zero_safe and safe
        n_hist = max(n_hist, hist)
        depth = max(depth, min(ranks_read(m), max_count))
    tables, itables = tab.arrays()
    rel_labels = np.zeros(n_m, dtype=batch.labels.dtype)
    for row, p in enumerate(resolved):
        if BY_NAME[measures[row].family].group == "binary":  # label >= rel, compared in the labels' own width
            if reads_judgment_codes(measures[row]) and p.get("judged_lo") is None:
                rel = Lay.CODE_RELEVANT  # judgment codes: 3 is relevant
            elif BY_NAME[measures[row].family].row == "judged":
                rel = p.get("judged_lo", 1)  # Judged@k: the judged ones (as _judged_row)
            else:
                rel = row_rel(p)
            ip[row, Lay.I_REL_KIND], rel_labels[row] = _typed_threshold(rel, batch.labels.dtype)
    ideal_other = any(
        ip[row, Lay.I_CODE] == Lay.NDCG and (ip[row, Lay.I_VALUE_MODE] != Lay.VALUE_TABLE or ideal_counts is not None)
        for row in range(n_m)
    )
    used = {BY_NAME[m.family].group for m in measures}
    groups = tuple(group in used for group in GROUPS)
    # Compat's ideal with judged documents outside the row: the rank pass counts each row's scores >= 0
    signs = ideal_counts is not None and any(ip[row, Lay.I_CODE] == Lay.COMPAT for row in range(n_m))
    return Plan(ip, fp, tables, itables, depth, zero_safe, n_hist, rel_labels, ideal_other, groups, signs)
