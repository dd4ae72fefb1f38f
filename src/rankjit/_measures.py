"""Measure names and their parameters, and the plan that drives the fused kernel.

Names follow ir_measures' grammar, case-insensitive: ``Name(param=value, ...)@k``,
for example ``nDCG@10``, ``nDCG(gain='linear')@10``, ``P(rel=2)@5``,
``ERR(max_grade=3)@20``, ``AP(denominator='r')@100``.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field

import numpy as np

from rankjit import _layout as Lay

# family -> (kernel code, parameters with defaults, takes a cutoff)
_BINARY = {"rel": 1}
FAMILIES = {
    "P": (Lay.P, dict(_BINARY), True),
    "R": (Lay.RECALL, {**_BINARY, "empty": None}, True),
    "Success": (Lay.SUCCESS, dict(_BINARY), True),
    "RR": (Lay.RR, dict(_BINARY), True),
    "AP": (Lay.AP, {**_BINARY, "denominator": "min_k_r", "empty": None}, True),
    "Rprec": (Lay.RPREC, {**_BINARY, "empty": None}, False),
    "DCG": (Lay.DCG, {"gain": "exp2", "discount": "log2", "base": 2.0}, True),
    "nDCG": (Lay.NDCG, {"gain": "exp2", "discount": "log2", "base": 2.0, "empty": None}, True),
    "ERR": (Lay.ERR, {"max_grade": 4, "utility": "reciprocal", "probabilities": False}, True),
    "pFound": (Lay.PFOUND, {"p_break": 0.15, "max_grade": 4, "probabilities": False, "prel": None}, True),
}

ALIASES = {
    "p": "P", "precision": "P",
    "r": "R", "recall": "R",
    "success": "Success", "hit_rate": "Success", "hitrate": "Success", "hits": "Success",
    "rr": "RR", "mrr": "RR", "recip_rank": "RR",
    "ap": "AP", "map": "AP",
    "rprec": "Rprec", "r-prec": "Rprec", "r_prec": "Rprec",
    "dcg": "DCG",
    "ndcg": "nDCG",
    "err": "ERR",
    "pfound": "pFound",
}

MAX_K = 2**62  # cutoffs are int64 in the kernels
EMPTY_VALUES = {"zero": 0.0, "one": 1.0, "nan": math.nan}
GAINS = ("exp2", "linear")
DISCOUNTS = ("log2", "zipf", "logb")
UTILITIES = ("reciprocal", "log2")
DENOMINATORS = {"min_k_r": Lay.AP_MIN_K_R, "r": Lay.AP_R}

_NAME_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_\-]*)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$", re.S)

#: measures computed outside the list kernel (diversity, preference): registered by
#: their modules with :func:`register_external`
EXTERNAL: dict[str, "ExternalFamily"] = {}


@dataclass
class ExternalFamily:
    name: str
    defaults: dict
    takes_k: bool
    compute: object  # callable(measure, inputs: dict) -> per-query float64 array


def register_external(name, aliases, defaults, compute, takes_k=True):
    """Make a measure family computed by ``compute(measure, inputs)`` known to ``evaluate``."""
    EXTERNAL[name] = ExternalFamily(name, dict(defaults), takes_k, compute)
    for a in (name, *aliases):
        ALIASES[a.lower()] = name


@dataclass
class Measure:
    """One requested measure: family, cutoff and parameters."""

    text: str
    family: str
    k: int | None
    params: dict = field(default_factory=dict)

    @property
    def external(self):
        return self.family in EXTERNAL


_EXTERNAL_MODULES = ("rankjit.diversity", "rankjit.preference")


def _load_external():
    """Import the modules that register external families (once; ``import rankjit`` is lazy)."""
    if not _EXTERNAL_LOADED:
        import importlib

        for name in _EXTERNAL_MODULES:
            importlib.import_module(name)
        _EXTERNAL_LOADED.append(True)


_EXTERNAL_LOADED: list = []


def _valid_names():
    _load_external()
    return ", ".join(sorted(set(FAMILIES) | set(EXTERNAL)))


def parse(text) -> Measure:
    """Parse ``'Name(param=value, ...)@k'`` into a :class:`Measure`."""
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise TypeError(f"a measure name must be a string, got {type(text).__name__}")
    m = _NAME_RE.match(text)
    if not m:
        raise ValueError(f"cannot parse measure {text!r}; expected Name(param=value, ...)@k, e.g. 'nDCG@10'")
    raw, arg_text, k_text = m.groups()
    family = ALIASES.get(raw.lower())
    if family is None:
        _load_external()
        family = ALIASES.get(raw.lower())
    if family is None:
        raise ValueError(f"unknown measure {raw!r} in {text!r}; valid names: {_valid_names()}")
    if family in EXTERNAL:
        defaults, takes_k = EXTERNAL[family].defaults, EXTERNAL[family].takes_k
    else:
        _, defaults, takes_k = FAMILIES[family]
    k = None
    if k_text is not None:
        if not takes_k:
            raise ValueError(f"{family} takes no cutoff, got {text!r}")
        try:
            k = int(k_text)
        except ValueError:
            raise ValueError(f"cutoff of {text!r} must be a positive integer, got {k_text!r}") from None
        if k <= 0:
            raise ValueError(f"cutoff of {text!r} must be a positive integer, got {k}")
        if k > MAX_K:
            raise ValueError(f"cutoff of {text!r} is too large (at most 2**62); omit the cutoff for the whole row")
    params = {}
    if arg_text is not None and arg_text.strip():
        try:
            call = ast.parse(f"f({arg_text})", mode="eval").body
            if call.args:
                raise ValueError
            for kw in call.keywords:
                params[kw.arg] = ast.literal_eval(kw.value)
        except (SyntaxError, ValueError):
            raise ValueError(
                f"cannot parse the parameters of {text!r}; write them as name=value with literal values, "
                "e.g. nDCG(gain='linear')@10"
            ) from None
    for name in params:
        if name not in defaults:
            valid = ", ".join(sorted(defaults)) or "none"
            raise ValueError(f"unknown parameter {name!r} for {family} in {text!r}; valid parameters: {valid}")
    return Measure(text, family, k, params)


def resolve(measure: Measure, defaults: dict) -> dict:
    """Parameters of ``measure`` with call-level ``defaults`` and family defaults filled in."""
    if measure.family in EXTERNAL:
        family_defaults = EXTERNAL[measure.family].defaults
    else:
        family_defaults = FAMILIES[measure.family][1]
    out = {}
    for name, value in family_defaults.items():
        if name in measure.params:
            out[name] = measure.params[name]
        elif defaults.get(name) is not None:
            out[name] = defaults[name]
        else:
            out[name] = value
    return out


def empty_value(empty) -> float:
    if empty is None:
        empty = "zero"
    if isinstance(empty, str) and empty in EMPTY_VALUES:
        return EMPTY_VALUES[empty]
    raise ValueError(f"unknown empty={empty!r}; valid values: 'zero', 'one', 'nan'")


# ---- per-rank weights ------------------------------------------------------------


def discount_weights(discount, length, base=2.0):
    """w[r-1] for ranks r = 1..length."""
    r = np.arange(1, length + 1, dtype=np.float64)
    if isinstance(discount, str):
        if discount == "log2":
            return 1.0 / np.log2(r + 1.0)  # 1 / log2(r + 1)
        if discount == "zipf":
            return 1.0 / r  # 1 / r
        if discount == "logb":
            if not np.isfinite(base) or base <= 1.0:
                raise ValueError(f"discount='logb' needs base > 1, got base={base}")
            # 1 for r < b, then 1 / log_b(r)
            return np.where(r < base, 1.0, np.log(base) / np.log(np.maximum(r, base)))  # log(max(r, b)) > 0
        raise ValueError(f"unknown discount {discount!r}; valid: 'log2', 'zipf', 'logb', or an array of per-rank weights")
    w = np.asarray(discount, dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"a discount array must be 1-D (one weight per rank), got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("a discount array must hold finite weights")
    out = np.zeros(length, dtype=np.float64)
    out[: min(length, w.shape[0])] = w[:length]
    return out  # 0 beyond the array's end


def utility_weights(utility, length):
    r = np.arange(1, length + 1, dtype=np.float64)
    if utility == "reciprocal":
        return 1.0 / r
    if utility == "log2":
        return 1.0 / np.log2(r + 1.0)
    raise ValueError(f"unknown utility {utility!r}; valid: 'reciprocal', 'log2'")


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
    rel_labels: np.ndarray  # per measure, the threshold in the labels' dtype (where I_REL_TYPED)
    ideal_other: bool = False  # some nDCG takes its ideal from ideal_counts or from non-integer gains


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


def build_plan(measures, resolved, batch, ties, ideal_counts) -> Plan:
    """Turn parsed measures into the kernel's parameter rows and tables (validating them)."""
    from rankjit._ranking import TIES_AVERAGE
    from rankjit._validation import require_integer_grades

    n_m = len(measures)
    ip = np.zeros((n_m, Lay.N_ICOLS), dtype=np.int64)
    fp = np.zeros((n_m, Lay.N_FCOLS), dtype=np.float64)
    tab = _Tables()
    max_count = batch.max_count
    ideal_width = 0 if ideal_counts is None else ideal_counts.shape[1]
    ideal_total = 0 if ideal_counts is None else int(ideal_counts.sum(axis=1).max(initial=0))
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
        code = FAMILIES[m.family][0]
        ip[row, Lay.I_CODE] = code
        ip[row, Lay.I_K] = -1 if m.k is None else m.k
        if code == Lay.RPREC or m.k is None:
            depth = max(depth, max_count)
        else:
            depth = max(depth, min(m.k, max_count))
        if ties == TIES_AVERAGE and code in (Lay.ERR, Lay.PFOUND):
            raise ValueError(
                f"ties='average' is not available for {m.family} ({m.text!r}): its expectation over tied "
                "orders has no closed form here; use ties='pessimistic', 'optimistic' or 'stable'"
            )
        if "empty" in p:
            fp[row, Lay.F_EMPTY] = empty_value(p["empty"])
        if "rel" in p:
            rel = p["rel"]
            if isinstance(rel, bool) or not isinstance(rel, (int, float, np.integer, np.floating)) or not np.isfinite(rel):
                raise ValueError(f"rel must be a finite number, got {rel!r} in {m.text!r}")
            fp[row, Lay.F_REL] = float(rel)
            if rel <= 0:
                zero_safe = False  # every document with label >= rel, including 0, counts
        if code == Lay.AP:
            ip[row, Lay.I_WEIGHT_OFF] = tab.add(1.0 / np.arange(1, max(max_count, 1) + 1))  # 1/r by rank
            den = p["denominator"]
            if den not in DENOMINATORS:
                raise ValueError(f"unknown denominator {den!r} for AP; valid: 'min_k_r', 'r'")
            ip[row, Lay.I_DENOMINATOR] = DENOMINATORS[den]

        wlen = max_count if m.k is None else min(m.k, max_count)
        if code in (Lay.DCG, Lay.NDCG):
            if code == Lay.NDCG and ideal_counts is not None:
                span = max(max_count, ideal_total)
                wlen = span if m.k is None else min(m.k, span)
            gain = p["gain"]
            if isinstance(gain, str):
                if gain not in GAINS:
                    raise ValueError(f"unknown gain {gain!r}; valid: 'exp2', 'linear', or an array of gains by grade")
                if batch.integer_labels and top_grade <= 62:
                    n_grades = max(top_grade + 1, ideal_width, 1)
                    g = np.arange(n_grades, dtype=np.float64)
                    table = 2.0**g - 1.0 if gain == "exp2" else g
                    mode = Lay.VALUE_TABLE
                else:
                    if ideal_counts is not None:
                        require_integer_grades(batch, "ideal_counts=")
                    mode = Lay.VALUE_EXP2 if gain == "exp2" else Lay.VALUE_IDENTITY
                    table = None
            else:
                table = np.asarray(gain, dtype=np.float64)
                if table.ndim != 1 or table.shape[0] == 0 or not np.isfinite(table).all():
                    raise ValueError("a gain array must be 1-D, non-empty and finite (gain of each grade 0, 1, 2, ...)")
                require_integer_grades(batch, "a gain array")
                if top_grade >= table.shape[0]:
                    raise _grade_error(batch, m.text, f"but the gain array covers grades 0..{table.shape[0] - 1}",
                                       "give a gain for every grade")
                if ideal_width > table.shape[0]:
                    raise ValueError(
                        f"{m.text}: ideal_counts has {ideal_width} grade columns, but the gain array covers grades "
                        f"0..{table.shape[0] - 1}; give a gain for every grade counted in ideal_counts"
                    )
                n_grades = table.shape[0]
                mode = Lay.VALUE_TABLE
                if table[0] != 0.0:
                    zero_safe = False
            if not (isinstance(p["base"], (int, float, np.integer, np.floating)) and not isinstance(p["base"], bool)):
                raise ValueError(f"base must be a number, got {p['base']!r}")
            ip[row, Lay.I_VALUE_MODE] = mode
            if mode == Lay.VALUE_TABLE:
                ip[row, Lay.I_VALUE_OFF] = tab.add(table)
                ip[row, Lay.I_N_GRADES] = n_grades
                order = np.argsort(-table, kind="stable")  # grades by gain, descending
                ip[row, Lay.I_ORDER_OFF] = tab.add_int(order)
                n_hist = max(n_hist, n_grades)
            weights = discount_weights(p["discount"], wlen, float(p["base"]))
            if mode == Lay.VALUE_TABLE:
                # the ideal DCG fills ranks grade by grade: sum_{r=lo}^{hi-1} w_r = C[hi] - C[lo]
                ip[row, Lay.I_CUM_OFF] = tab.add(np.concatenate(([0.0], np.cumsum(weights))))
                ordered = table[order]
                nonzero = np.flatnonzero(ordered != 0.0)
                # grades of gain 0 at the end of the order add nothing (and no rank matters after them)
                ip[row, Lay.I_N_IDEAL] = int(nonzero[-1]) + 1 if nonzero.size else 0
        elif code in (Lay.ERR, Lay.PFOUND):
            probabilities = p["probabilities"]
            if not isinstance(probabilities, (bool, np.bool_)):
                raise TypeError(f"probabilities must be True or False, got {probabilities!r}")
            prel = p.get("prel")
            if code == Lay.PFOUND:
                pb = p["p_break"]
                if not isinstance(pb, (int, float, np.integer, np.floating)) or not 0.0 <= pb <= 1.0:
                    raise ValueError(f"p_break must be in [0, 1], got {pb!r}")
                weights = (1.0 - float(pb)) ** np.arange(wlen, dtype=np.float64)  # (1 - p_break)^(r-1)
            else:
                weights = utility_weights(p["utility"], wlen)
            if prel is not None:
                if probabilities:
                    raise ValueError("pass either prel= or probabilities=True, not both")
                table = np.asarray(prel, dtype=np.float64)
                if table.ndim != 1 or table.shape[0] == 0 or ((table < 0) | (table > 1) | ~np.isfinite(table)).any():
                    raise ValueError("prel must be a 1-D array of probabilities in [0, 1], one per grade")
                require_integer_grades(batch, "prel=")
                if top_grade >= table.shape[0]:
                    raise _grade_error(batch, m.text, f"but prel covers grades 0..{table.shape[0] - 1}",
                                       "give a pRel for every grade")
                mode = Lay.VALUE_TABLE
                if table[0] != 0.0:
                    zero_safe = False
            elif probabilities:
                if batch.max_label > 1.0:
                    raise ValueError(
                        f"{m.text}: probabilities=True needs labels in [0, 1], but labels go up to {batch.max_label:g}; "
                        "pass grades with probabilities=False and max_grade= instead"
                    )
                mode = Lay.VALUE_IDENTITY
                table = None
            else:
                mg = p["max_grade"]
                if isinstance(mg, bool) or not isinstance(mg, (int, np.integer)) or mg < 1:
                    raise ValueError(f"max_grade must be a positive integer, got {mg!r}")
                require_integer_grades(batch, f"{m.family} with max_grade=")
                if batch.max_label > mg:
                    raise _grade_error(
                        batch, m.text, f"above max_grade={mg}",
                        f"pass max_grade={int(batch.max_label)} (or probabilities=True for labels in [0, 1])",
                    )
                g = np.arange(mg + 1, dtype=np.float64)
                table = (2.0**g - 1.0) / 2.0**mg  # R(y) = (2^y - 1) / 2^max_grade
                mode = Lay.VALUE_TABLE
            ip[row, Lay.I_VALUE_MODE] = mode
            if table is not None:
                ip[row, Lay.I_VALUE_OFF] = tab.add(table)
                ip[row, Lay.I_N_GRADES] = table.shape[0]
        else:
            weights = None
        if weights is not None:
            ip[row, Lay.I_WEIGHT_OFF] = tab.add(weights)
            ip[row, Lay.I_WEIGHT_LEN] = wlen
    tables, itables = tab.arrays()
    rel_labels = np.zeros(n_m, dtype=batch.labels.dtype)
    if batch.labels.dtype.kind in "iu":
        # integer labels: label >= rel  <=>  label >= ceil(rel), compared in the labels' own width
        info = np.iinfo(batch.labels.dtype)
        for row in range(n_m):
            c = np.ceil(fp[row, Lay.F_REL])
            if info.min < c <= info.max:
                rel_labels[row] = int(c)
                ip[row, Lay.I_REL_TYPED] = 1
    ideal_other = any(
        ip[row, Lay.I_CODE] == Lay.NDCG and (ip[row, Lay.I_VALUE_MODE] != Lay.VALUE_TABLE or ideal_counts is not None)
        for row in range(n_m)
    )
    return Plan(ip, fp, tables, itables, depth, zero_safe, n_hist, rel_labels, ideal_other)
