"""The registry of measure families: one record per family, read by everything else.

:data:`LIST_FAMILIES` are computed from labels and scores by the list engine;
:data:`INPUT_FAMILIES` need more inputs (nugget judgments, a second system's scores) and
are computed by their own modules (:class:`InputFamily`).

A record says what a family is called (rankjit's spelling, the other spellings
``evaluate`` accepts, trec_eval's and ir_measures' names), its parameters with their
defaults, whether it takes a cutoff, and which group of the engine's measure pass
computes it (:mod:`rankjit._kernels.engine`: ``binary`` reads hits of the ranked labels,
``graded`` weighted gains, ``cascade`` a cascade of stopping probabilities).  The
measure grammar (:mod:`rankjit._measures`) and the engine's variant choice derive
their tables from :data:`LIST_FAMILIES`; nothing else lists the families.

Each parameter is a :class:`Param`: its default and its kind, which says what values
it takes; :meth:`Param.check` validates and normalises a value once, when a measure is
resolved (``rankjit._measures.resolve``), with one wording for every family.  Checks
that need the data (a gain array that must cover the largest label) stay with the plan.

Adding a family: a record here, its parameter rows in ``rankjit._measures``, at most
one primitive in the measure pass, its reference function in ``tests/reference/lists.py`` and
its docs: the record's ``summary``, ``formula`` and ``peers`` (where trec_eval, ir_measures and
the other tools disagree), from which ``python -m rankjit._docs_families`` writes its section
of ``docs/metrics.md`` (``tests/test_docs_families.py`` fails while the page is stale;
``tests/test_registry.py`` checks the reference names every family; ``tests/test_families.py``
runs the common checks on every record).
"""
from __future__ import annotations

import math
from collections import namedtuple

from rankjit._kernels import layout as Lay

#: the groups of the engine's measure pass, in the order of the variant flags
GROUPS = ("binary", "graded", "cascade")


_FAMILY_FIELDS = (
    "name",  # rankjit's spelling, e.g. "nDCG"
    "code",  # the engine's measure code (rankjit._kernels.layout)
    "group",  # the measure-pass group that computes it (GROUPS)
    "params",  # (Param, ...)
    "takes_k",  # accepts a cutoff ``@k``
    "aliases",  # other spellings accepted by evaluate(), lower case
    "trec_eval",  # trec_eval's measure names
    "ir_measures",  # ir_measures' name ("" when it has none)
    "summary",  # one line for the docs
    "plan_row",  # its plan-row builder (rankjit._measures.ROW_BUILDERS); "" for the group's
    "function",  # its public function in rankjit.metrics (exported as rankjit.<function>)
    "example",  # a typical measure string (the demo, the warm-up, the docs index)
    "at_param",  # the parameter that "@x" sets instead of a cutoff ("" when none): IPrec@0.2 is recall=0.2
    "ties_average",  # ties="average" is computed exactly (False: refused, no closed form)
    "aggregate",  # how evaluate() reduces the per-query values (AGGREGATES)
    "needs",  # inputs of evaluate() besides labels and scores that it cannot go without: ("judged",)
    "horizon",  # the ranks it reads at most, with a cutoff or without (0: the whole row): cwl_eval's 1000
    # its docs text (docs/metrics.md, "The families": rankjit._docs_families), Markdown, one line each
    "formula",  # the definition, with the notation of docs/metrics.md (y_(r), rel, R, n, k)
    "peers",  # where trec_eval, ir_measures and the other tools disagree with it, or "No known disagreement ..."
    "kind",  # its kind among the families of its code, for the plan row (Lay.SET_*, Lay.CWL_*, Lay.BPREF / INFAP)
    "reads",  # the view of the batch it is computed on (VIEWS): the labels, the judged flags or the judgment codes
    "reads_pool",  # it tells pooled but unjudged documents from the others when pooled= is given (infAP)
)


#: what a family reads in the labels' place (``Family.reads``): the labels; the judged flags (Judged@k: 1 judged,
#: 0 not, from ``judged=``); the judgment codes (Bpref, infAP: Lay.CODE_*, from the labels, ``judged=`` and
#: ``pooled=``).  Each view is a batch of its own (``rankjit._api._list_parts``); the labels and the judged flags
#: share one ranking of the judged grades (0 unjudged, grade + 1 judged) when the grades allow it
VIEWS = ("labels", "judged_flags", "judgment_codes")


#: the reductions of per-query values over the queries (``Family.aggregate``): the mean; the sum (the counts
#: NumQ, NumRet, ..., as trec_eval and ir_measures give them); the mean of the queries with a value, NaN left
#: out (Accuracy, undefined without a pair: ir_measures leaves such queries out)
AGGREGATES = ("mean", "sum", "defined")


#: the defaults of the fields from ``aliases`` on
_FAMILY_DEFAULTS = ((), (), "", "", "", "", "", "", True, "mean", (), 0, "", "", 0, "labels", False)


class Family(namedtuple("Family", _FAMILY_FIELDS, defaults=_FAMILY_DEFAULTS)):
    """One list-measure family (the fields: ``_FAMILY_FIELDS``).

    A named tuple rather than a dataclass: ``import rankjit`` reads the registry, and
    ``dataclasses`` alone would cost it 12 ms.
    """

    __slots__ = ()

    @property
    def row(self) -> str:
        """The name of the builder of its row of the engine's plan: ``plan_row``, else its group."""
        return self.plan_row or self.group

    @property
    def defaults(self) -> dict:
        """``{parameter: default}``."""
        return {p.name: p.default for p in self.params}

    def param(self, name):
        return next(p for p in self.params if p.name == name)

    def cutoff(self, k):
        """The ranks a measure ``@k`` of the family reads: ``k`` (None: the whole row), within its horizon."""
        if not self.horizon:
            return k
        return self.horizon if k is None else min(k, self.horizon)


#: the kinds of parameter values, and what :meth:`Param.check` makes of each
KINDS = (
    "threshold",  # a finite number (int or float, kept as given): rel
    "threshold_or_none",  # None, or a finite number: RBP's rel (binary gains when given)
    "number",  # any real number (int or float): base
    "unit",  # a number in [0, 1], as float: p_break; with a default of None, a value is required (IPrec's recall)
    "non_negative",  # a finite number >= 0, as float: SetF's beta
    "positive_int",  # an int >= 1: max_grade
    "flag",  # True or False: probabilities
    "choice",  # one of ``choices`` (None, when it is the default: the first): empty, utility, denominator
    "choice_or_array",  # one of ``choices``, or a 1-D finite float64 array: gain, discount
    "choice_or_none",  # None, or one of ``choices``: nDCG's dcg
    "gain_map_or_none",  # None, or a mapping {grade (int >= 0): finite number}, as {int: float}: nDCG's gains
    "probabilities_or_none",  # None, or a 1-D array of numbers in [0, 1]: prel
    "grade_bound",  # a finite number >= 0 (kept as given): min_rel; with a default of None, required (max_rel)
    "positive",  # a finite number > 0, as float: T, the gain a C/W/L user wants
    # None, or a finite number > 0 (kept as given): the diversity measures' rel, the nugget judgment that counts as
    # relevant (None: any judgment > 0); its messages speak of judgments and leave the measure to the caller's prefix
    "positive_or_none",
)

#: the kinds :meth:`Param.check` checks as numbers (or a flag), and those that name a choice
_NUMBER_KINDS = frozenset(("threshold", "threshold_or_none", "number", "unit", "non_negative", "positive_int", "flag",
                           "grade_bound", "positive", "positive_or_none"))
_CHOICE_KINDS = frozenset(("choice", "choice_or_array", "choice_or_none"))

#: the kinds whose parameter is required when its default is None (no value means "not given")
REQUIRED_KINDS = ("unit", "grade_bound")


_PARAM_FIELDS = (
    "name",
    "default",
    "kind",  # one of KINDS
    "choices",  # the strings a "choice" / "choice_or_array" parameter accepts
    "array",  # what an array holds, for the messages ("gains by grade")
    "call_default",  # evaluate()'s keyword of the same name (rel=, empty=) is its default
    "why",  # why a value is not among ``choices`` (added to the message), when that is not plain
    "nonnegative",  # an array's entries must be >= 0 (discount weights)
)


class Param(namedtuple("Param", _PARAM_FIELDS, defaults=((), "", True, "", False))):
    """One parameter of a measure family: name, default, and the kind of values it takes."""

    __slots__ = ()

    @property
    def required(self) -> bool:
        """Whether a value must be given: no default (IPrec's recall, the C/W/L measures' max_rel)."""
        return self.default is None and self.kind in REQUIRED_KINDS

    def check(self, value, text=""):
        """``value`` validated and normalised (see :data:`KINDS`); ``text`` is the measure, for messages.

        Raises TypeError for a value of the wrong type (a boolean where a number is
        expected included), ValueError for one out of range, each naming the parameter.
        """
        where = f" in {text!r}" if text else ""
        if self.kind in _NUMBER_KINDS:
            return self._check_number(value, where)
        if self.kind in _CHOICE_KINDS:
            return self._check_choice(value, where)
        return self._check_collection(value, where)

    def _check_number(self, value, where):
        """A kind of :data:`_NUMBER_KINDS`: a number (or a flag), with its range."""
        from rankjit._validation import finite_float, flag, number

        kind = self.kind
        if kind == "threshold" or (kind == "threshold_or_none" and value is not None):
            finite_float(value, self.name, where=where)
            return number(value, self.name, where=where)
        if kind == "threshold_or_none":
            return None
        if kind == "positive_or_none":  # (rankjit.diversity's functions call it too, without a measure)
            if value is None:
                return None
            x = number(value, self.name, "a number > 0 or None", where=where)
            try:
                finite = math.isfinite(x)
            except OverflowError:  # an int beyond float64
                finite = False
            if not (finite and x > 0):
                raise ValueError(f"{self.name}{where} must be > 0 (judgments >= {self.name} are relevant) or None "
                                 f"(judgments > 0), got {x}")
            return x
        if kind == "number":
            return number(value, self.name, where=where)
        if kind == "unit":
            if value is None and self.default is None:
                raise TypeError(f"{self.name}{where} is required: a number in [0, 1]")
            x = number(value, self.name, "a number in [0, 1]", where=where)
            if not 0.0 <= x <= 1.0:
                raise ValueError(f"{self.name}{where} must be in [0, 1], got {x!r}")
            return float(x)
        if kind == "grade_bound":
            if value is None and self.default is None:
                raise TypeError(f"{self.name}{where} is required: the top grade of the scale, e.g. {self.name}=4")
            finite_float(value, self.name, where=where)
            x = number(value, self.name, "a number >= 0", where=where)
            if x < 0:  # min_rel < 0: a judged grade 0 would gain -min_rel / (max_rel - min_rel), an unjudged one 0
                why = "" if self.required else (": below 0, ir_measures gives a judged document of grade 0 a gain "
                                                "above 0 and an unjudged one 0, which labels (0 for both) cannot "
                                                "tell apart")
                raise ValueError(f"{self.name}{where} must be >= 0, got {x!r}{why}")
            return x
        if kind == "positive":
            finite_float(value, self.name, where=where)
            x = number(value, self.name, "a number > 0", where=where)
            if not x > 0:
                raise ValueError(f"{self.name}{where} must be a number > 0, got {x!r}")
            return float(x)
        if kind == "non_negative":
            finite_float(value, self.name, where=where)
            x = number(value, self.name, "a number >= 0", where=where)
            if not x >= 0:
                raise ValueError(f"{self.name}{where} must be a number >= 0, got {x!r}")
            return float(x)
        if kind == "positive_int":
            x = number(value, self.name, "a positive integer", where=where)
            if not isinstance(x, int) or x < 1:
                raise ValueError(f"{self.name}{where} must be a positive integer, got {x!r}")
            return x
        return flag(value, self.name, where=where)  # "flag"

    def _check_choice(self, value, where):
        """A kind of :data:`_CHOICE_KINDS`: one of ``choices`` (or None, or an array, as the kind allows)."""
        kind = self.kind
        if kind == "choice":
            if value is None and self.default is None:  # empty=None: the first choice ("zero")
                return self.choices[0]
            if isinstance(value, str) and value in self.choices:
                return value
            raise ValueError(f"unknown {self.name}={value!r}{where}; valid values: {self._valid()}{self._why()}")
        if kind == "choice_or_array":
            if isinstance(value, str):
                if value in self.choices:
                    return value
                raise ValueError(f"unknown {self.name}={value!r}{where}; valid values: {self._valid()}{self._why()}")
            a = self._array(value, where)
            if not all(math.isfinite(x) for x in a.tolist()):
                raise ValueError(f"a {self.name} array must be 1-D, non-empty and finite ({self.array}){where}")
            negative = [i for i, x in enumerate(a.tolist()) if x < 0] if self.nonnegative else []
            if negative:
                raise ValueError(f"a {self.name} array must not hold negative values ({self.array}), got "
                                 f"{float(a[negative[0]])} at index {negative[0]}{where}")
            return a
        if value is None or (isinstance(value, str) and value in self.choices):  # "choice_or_none"
            return value
        raise ValueError(f"unknown {self.name}={value!r}{where}; valid values: {self._valid()}{self._why()}")

    def _why(self):
        return f" ({self.why})" if self.why else ""

    def _check_collection(self, value, where):
        """A mapping or array kind (``gain_map_or_none``, ``probabilities_or_none``): None, or its values checked."""
        if self.kind == "gain_map_or_none":
            return None if value is None else self._gain_map(value, where)
        if self.kind == "probabilities_or_none":
            if value is None:
                return None
            a = self._array(value, where)
            if not all(0.0 <= x <= 1.0 for x in a.tolist()):  # NaN fails too
                raise ValueError(f"{self.name} must be a 1-D array of probabilities in [0, 1] ({self.array}){where}")
            return a
        raise AssertionError(f"unknown parameter kind {self.kind!r}")  # pragma: no cover - a registry error

    def _gain_map(self, value, where):
        """``value`` as ``{grade: gain}``: int grades >= 0 (not booleans), finite numbers (not booleans)."""
        import reprlib

        from rankjit._validation import finite_float

        if not hasattr(value, "items"):
            raise TypeError(f"{self.name}{where} must be a mapping {{grade: gain}}, e.g. {{0: 0, 1: 1, 2: 3}}, "
                            f"got {reprlib.repr(value)}")
        out = {}
        for grade, gain in value.items():
            if isinstance(grade, bool) or not isinstance(grade, int) or grade < 0:
                raise ValueError(f"{self.name}{where}: grades must be integers >= 0, got {grade!r}")
            out[grade] = finite_float(gain, f"{self.name}[{grade}]", where=where)
        return out

    def _valid(self):
        names = ", ".join(repr(c) for c in self.choices)
        return f"{names}, or a 1-D array of {self.array}" if self.kind == "choice_or_array" else names

    def _array(self, value, where):
        """``value`` as a non-empty 1-D float64 array (strings, mappings and sets are refused)."""
        import reprlib

        import numpy as np

        expected = f"{self.name}{where} must be {self._valid() if self.choices else 'a 1-D array of ' + self.array}"
        if isinstance(value, (dict, set, frozenset, str, bytes)) or value is None:
            raise TypeError(f"{expected}, got {reprlib.repr(value)}")
        try:
            a = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"{expected}, got {reprlib.repr(value)}") from None
        if a.ndim != 1 or a.shape[0] == 0:
            raise ValueError(f"a {self.name} array must be 1-D, non-empty and finite ({self.array}){where}; "
                             f"got shape {a.shape}")
        return a


_BINARY = (Param("rel", 1, "threshold"),)
_NORMALISED = (Param("empty", None, "choice", ("zero", "one", "nan")),)
_DCG = (
    Param("gain", "linear", "choice_or_array", ("linear", "exp2"), "gains by grade (grade 0, 1, ...)"),
    Param("discount", "log2", "choice_or_array", ("log2", "zipf", "logb"), "weights by rank (rank 1, 2, ...)",
          nonnegative=True),
    Param("base", 2.0, "number"),
    # ir_measures' spellings of the gain: dcg='log2' (linear) / 'exp-log2' (exp2), gains={grade: gain}
    Param("dcg", None, "choice_or_none", ("log2", "exp-log2")),
    Param("gains", None, "gain_map_or_none"),
)
_GRADE_SCALE = (
    Param("max_grade", 4, "positive_int"),
    Param("probabilities", False, "flag"),
)

LIST_FAMILIES = (
    Family("P", Lay.P, "binary", _BINARY, True, ("p", "precision"), ("P",), "P",
           "precision: relevant documents in the top k, over k", function="precision", example="P@10",
           formula="`P@k = (1/k) sum_{r <= min(k, n)} [y_(r) >= rel]`; without a cutoff, over `n`",
           peers=("trec_eval, ir_measures, ranx and torchmetrics divide by `k` even when the row is shorter; "
                  "CatBoost and TF-Ranking divide by `min(k, n)`. See [Binary measures](#binary-measures).")),
    Family("R", Lay.RECALL, "binary", _BINARY + _NORMALISED, True, ("r", "recall"), ("recall",), "R",
           "recall: relevant documents in the top k, over the relevant documents",
           function="recall", example="R@100",
           formula="`R@k = #{relevant documents in the top k} / R`; without a cutoff, over the whole row",
           peers=("trec_eval and ir_measures take `R` from the qrels, every judged relevant document, retrieved or "
                  "not: pass `n_relevant=` (an aligned TREC run does), else `R` counts the row's. A query with `R ="
                  " 0` takes `empty=`, where the tools differ: see [Queries with no relevant "
                  "document](#queries-with-no-relevant-document-empty) and [Normalisation from outside the "
                  "row](#normalisation-from-outside-the-row).")),
    Family("Success", Lay.SUCCESS, "binary", _BINARY, True, ("success", "hit_rate", "hitrate", "hits"),
           ("success",), "Success", "1 when a relevant document is in the top k",
           function="hit_rate", example="Success@5",
           formula="`Success@k = 1` when a document with `y_(r) >= rel` stands at a rank `r <= k`, else `0`",
           peers=("No known disagreement: trec_eval's `success` (cutoffs 1, 5 and 10 unless told) and ir_measures' "
                  "`Success@k` give the same values.")),
    Family("RR", Lay.RR, "binary", _BINARY, True, ("rr", "mrr", "recip_rank"), ("recip_rank",), "RR",
           "reciprocal rank of the first relevant document", function="rr", example="RR",
           formula="`RR@k = 1 / r_1`, `r_1` the rank of the first relevant document when `r_1 <= k`, else `0`",
           peers="No known disagreement with trec_eval's `recip_rank` or ir_measures' `RR`."),
    Family("AP", Lay.AP, "binary", _BINARY + (Param("denominator", "r", "choice", ("r", "min_k_r")),)
           + _NORMALISED, True, ("ap", "map"), ("map", "map_cut"), "AP", "average precision",
           function="ap", example="AP",
           formula=("`AP@k = sum_{r <= k} [y_(r) >= rel] P@r / D`, `D = R` (`denominator='r'`) or `min(k, R)` "
                    "(`denominator='min_k_r'`)"),
           peers=("`D = R` is trec_eval's (`map`, `map_cut`), ir_measures' and ranx's; CatBoost's MAP:top and "
                  "rankjit's LTR presets divide by `min(k, R)`: write `AP(denominator='min_k_r')@k`. `R` and `R = "
                  "0` as for [R](#r). See [Binary measures](#binary-measures).")),
    Family("Rprec", Lay.RPREC, "binary", _BINARY + _NORMALISED, False, ("rprec", "r-prec", "r_prec"), ("Rprec",),
           "Rprec", "precision at rank R, the number of relevant documents", function="rprec", example="Rprec",
           formula="`Rprec = P@R`, the precision at rank `R`",
           peers=("No known disagreement with trec_eval's `Rprec` or ir_measures' `Rprec`; `R` and `R = 0` as for "
                  "[R](#r).")),
    Family("DCG", Lay.DCG, "graded", _DCG, True, ("dcg",), ("dcg",), "", "discounted cumulative gain",
           function="dcg", example="DCG@10",
           formula=("`DCG@k = sum_{r <= k} gain(y_(r)) disc(r)`; by default `gain(y) = y` and `disc(r) = 1 / log2(r +"
                    " 1)`"),
           peers=("The linear gain is the one trec_eval (its `dcg`, without a cutoff, gains by level with "
                  "`dcg.L=G`), scikit-learn and ranx use; LightGBM, XGBoost, gdeval and ranx's `*_burges` use `2^y "
                  "- 1`: write `DCG(gain='exp2')`. ir_measures has no DCG. See [Graded measures: DCG and "
                  "nDCG](#graded-measures-dcg-and-ndcg).")),
    Family("nDCG", Lay.NDCG, "graded", _DCG + _NORMALISED, True, ("ndcg",), ("ndcg", "ndcg_cut"), "nDCG",
           "DCG over the DCG of the ideal ranking", function="ndcg", example="nDCG@10",
           formula=("`nDCG@k = DCG@k / IDCG@k`, `IDCG@k` the DCG of the documents sorted by gain: the row's, or those"
                    " `ideal_counts=` counts"),
           peers=("Gain: linear by default, as trec_eval, ir_measures, scikit-learn and ranx's `ndcg`; `2^y - 1` "
                  "for LightGBM, XGBoost, gdeval and ranx's `ndcg_burges` (`nDCG(gain='exp2')`, ir_measures' "
                  "`dcg='exp-log2'`). Ideal: the row's own labels, as scikit-learn, CatBoost and TF-Ranking, unless"
                  " `ideal_counts=` adds the judged documents the ranking missed, as trec_eval, ranx and gdeval do."
                  " A query with `IDCG = 0` takes `empty=`. See [Graded measures: DCG and "
                  "nDCG](#graded-measures-dcg-and-ndcg).")),
    Family("ERR", Lay.ERR, "cascade",
           _GRADE_SCALE + (Param("utility", "reciprocal", "choice", ("reciprocal", "log2")),), True, ("err",), (),
           "ERR", "expected reciprocal rank (cascade model)", function="err", example="ERR@20", ties_average=False,
           formula=("`ERR@k = sum_{r <= k} u(r) R_r prod_{i < r} (1 - R_i)`, `R(y) = (2^y - 1) / 2^max_grade`, `u(r) "
                    "= 1 / r`"),
           peers=("ir_measures' `ERR@k` is gdeval's, which the defaults follow (`max_grade=4`, `(2^y - 1) / 16`); "
                  "CatBoost reads the labels as the probabilities `R` (`probabilities=True`). trec_eval has no ERR."
                  " See [Cascade measures: ERR and pFound](#cascade-measures-err-and-pfound).")),
    Family("pFound", Lay.PFOUND, "cascade",
           (Param("p_break", 0.15, "unit"),) + _GRADE_SCALE
           + (Param("prel", None, "probabilities_or_none", array="probabilities by grade (grade 0, 1, ...)"),),
           True, ("pfound",), (), "", "probability of finding a relevant document (Yandex cascade)",
           function="pfound", example="pFound", ties_average=False,
           formula=("`pFound@k = sum_{r <= k} pLook_r R_r`, `pLook_1 = 1`, `pLook_r = pLook_{r-1} (1 - R_{r-1}) (1 - "
                    "p_break)`, `R` as for [ERR](#err)"),
           peers=("Yandex's measure, and CatBoost's (its decay 0.85 is `p_break=0.15`; labels as probabilities with"
                  " `probabilities=True`); neither trec_eval nor ir_measures computes it. See [Cascade measures: "
                  "ERR and pFound](#cascade-measures-err-and-pfound).")),
    # RBP: a DCG with the geometric discount (1 - p) p^(r-1); with scale="query" divided by the
    # query's top gain, the ideal DCG@1 with weight 1 (an nDCG row: no kernel of its own)
    Family("RBP", Lay.DCG, "graded",
           (Param("p", 0.8, "unit"), Param("rel", None, "threshold_or_none", call_default=False),
            Param("gain", "linear", "choice_or_array", ("linear",), "gains by grade (grade 0, 1, ...)"),
            Param("scale", "query", "choice", ("query", "none"))),
           True, ("rbp",), ("rbp",), "RBP", "rank-biased precision: expected gain per document read (persistence p)",
           plan_row="rbp", function="rbp", example="RBP(p=0.8)",
           formula=("`RBP@k = (1 - p) sum_{r <= k} g(y_(r)) p^(r-1)`; `scale='query'` divides the gains by the "
                    "query's top gain, `rel=` makes them 0 or 1"),
           peers=("`p=0.8` is ir_measures' default; trec_eval's `rbp` takes 0.9 and scales the grades by the "
                  "query's top grade (`scale='query'`), which no ir_measures provider does. ir_measures' "
                  "`RBP(rel=)` (cwl_eval) has binary gains and renormalises over 1000 ranks, `RBP@1000 / (1 - "
                  "p^1000)` (under 5e-5 apart for `p <= 0.99`); ranx's `rbp` is `scale='none'`. trec_eval's "
                  "residual `rbp_resid` is [RBPResidual](#rbpresidual). See [Rank-biased precision: "
                  "RBP](#rank-biased-precision-rbp).")),
)

# the set measures: the ranked list as a set (every document of the row retrieved), as
# trec_eval's set_* and ir_measures' Set* measures; one measure code, the kind in the plan row
_SET = "the whole row as a set: "
LIST_FAMILIES += (
    Family("SetP", Lay.SET, "binary", _BINARY + (Param("relative", False, "flag"),), False, ("setp", "set_p"),
           ("set_P",), "SetP", _SET + "relevant documents over the documents (relative=True: over min(n, R))",
           kind=Lay.SET_P, plan_row="set", function="set_precision", example="SetP",
           formula=("`SetP = h / n`, `h` the relevant documents of the row (0 for an empty row); with "
                    "`relative=True`, `h / min(n, R)`"),
           peers=("No known disagreement with trec_eval's `set_P` or ir_measures' `SetP`; `SetP(relative=True)` is "
                  "[SetRelP](#setrelp).")),
    Family("SetR", Lay.SET, "binary", _BINARY + _NORMALISED, False, ("setr", "set_recall"), ("set_recall",), "SetR",
           _SET + "relevant documents over the relevant documents of the query",
           kind=Lay.SET_R, plan_row="set", function="set_recall", example="SetR",
           formula="`SetR = h / R`, `h` the relevant documents of the row",
           peers=("No known disagreement with trec_eval's `set_recall` or ir_measures' `SetR`; `R` and `R = 0` as "
                  "for [R](#r).")),
    Family("SetF", Lay.SET, "binary", _BINARY + (Param("beta", 1.0, "non_negative"),) + _NORMALISED, False,
           ("setf", "set_f"), ("set_F",), "SetF", _SET + "(1 + beta) P R / (beta P + R) of SetP and SetR",
           kind=Lay.SET_F, plan_row="set", function="set_f", example="SetF",
           formula="`SetF = (1 + beta) SetP SetR / (beta SetP + SetR)`, 0 when the row holds no relevant document",
           peers=("`beta` is trec_eval's and ir_measures': it weighs recall as given, not squared, so the textbook "
                  "`F_b` is `SetF(beta=b**2)`. See [Set measures and interpolated "
                  "precision](#set-measures-and-interpolated-precision).")),
    Family("SetAP", Lay.SET, "binary", _BINARY + _NORMALISED, False, ("setap", "set_map"), ("set_map",), "SetAP",
           _SET + "SetP times SetR", kind=Lay.SET_AP, plan_row="set", function="set_ap", example="SetAP",
           formula="`SetAP = SetP SetR = h^2 / (n R)`",
           peers="No known disagreement with trec_eval's `set_map` or ir_measures' `SetAP`."),
    Family("SetRelP", Lay.SET, "binary", _BINARY + _NORMALISED, False, ("setrelp", "set_relative_p"),
           ("set_relative_P",), "SetRelP", _SET + "relevant documents over min(n, R)",
           kind=Lay.SET_REL_P, plan_row="set", function="set_relative_precision", example="SetRelP",
           formula="`SetRelP = h / min(n, R)`",
           peers="No known disagreement with trec_eval's `set_relative_P` or ir_measures' `SetRelP`."),
    Family("IPrec", Lay.IPREC, "binary",
           (Param("recall", None, "unit"),) + _BINARY + (Param("rounding", "trec_eval9", "choice",
                                                               ("trec_eval9", "trec_eval10")),) + _NORMALISED, False,
           ("iprec", "iprec_at_recall"), ("iprec_at_recall",), "IPrec",
           "interpolated precision at a recall level: the best precision at that recall or beyond",
           plan_row="iprec", function="interpolated_precision", example="IPrec@0.2", at_param="recall",
           ties_average=False,
           formula=("`IPrec@x = max_{j >= max(c, 1)} j / rank_j`, `rank_j` the rank of the j-th relevant document, `c"
                    " = floor(x R + 0.9)`; 0 when fewer than `c` relevant documents are ranked"),
           peers=("The default count `c` is trec_eval 9's, which pytrec_eval and so ir_measures use; trec_eval 10 "
                  "(and `rankjit trec_eval`'s `iprec_at_recall`) rounds `x R` half away from zero: "
                  "`rounding='trec_eval10'`. They differ when `x R` has a fraction in [0.1, 0.5): 4 of 50 queries "
                  "of Web 2012's ql run at `IPrec@0.2`. See [Set measures and interpolated "
                  "precision](#set-measures-and-interpolated-precision).")),
)

# the counts: summed over the queries by evaluate(), as trec_eval's num_* and ir_measures' Num* are
LIST_FAMILIES += (
    Family("NumQ", Lay.SET, "binary", (), False, ("numq", "num_q"), ("num_q",), "NumQ",
           "the number of queries (1 per query, summed)", kind=Lay.NUM_Q, plan_row="set", function="num_q", example="NumQ",
           aggregate="sum",
           formula="`1` per query, summed over the queries",
           peers="No known disagreement with trec_eval's `num_q` or ir_measures' `NumQ`."),
    Family("NumRet", Lay.SET, "binary", (Param("rel", None, "threshold_or_none", call_default=False),), False,
           ("numret", "num_ret"), ("num_ret",), "NumRet",
           "the documents of the row (with rel=: those with label >= rel), summed over the queries",
           kind=Lay.NUM_RET, plan_row="set", function="num_ret", example="NumRet", aggregate="sum",
           formula="`n`, the documents of the row (with `rel=`: those with `y >= rel`), summed over the queries",
           peers="No known disagreement with trec_eval's `num_ret` or ir_measures' `NumRet`."),
    Family("NumRel", Lay.SET, "binary", _BINARY, False, ("numrel", "num_rel"), ("num_rel",), "NumRel",
           "the relevant documents of the query, R, summed over the queries", kind=Lay.NUM_REL, plan_row="set", function="num_rel",
           example="NumRel", aggregate="sum",
           formula="`R`, summed over the queries",
           peers=("trec_eval's `num_rel` and ir_measures' `NumRel` count every judged relevant document, retrieved "
                  "or not: pass `n_relevant=` (an aligned TREC run does), else `R` counts the row's, as for "
                  "[R](#r).")),
    Family("NumRelRet", Lay.SET, "binary", _BINARY, False, ("numrelret", "num_rel_ret"), ("num_rel_ret",),
           "NumRelRet", "the relevant documents of the row, summed over the queries", kind=Lay.NUM_REL_RET, plan_row="set",
           function="num_rel_ret", example="NumRelRet", aggregate="sum",
           formula="`h`, the relevant documents of the row, summed over the queries",
           peers="No known disagreement with trec_eval's `num_rel_ret` or ir_measures' `NumRelRet`."),
)

# read the judged= mask, not the labels: the share of judged documents in the top k (P@k of the flags)
LIST_FAMILIES += (
    Family("Judged", Lay.P, "binary", (), True, ("judged",), (), "Judged",
           "the judged share of the top k documents (needs judged=)", reads="judged_flags", plan_row="judged",
           function="judged_share", example="Judged@10", needs=("judged",),
           formula="`Judged@k = #{judged documents in the top k} / min(k, n)`",
           peers=("As ir_measures' `Judged`: on an aligned run every document the qrels hold counts as judged, "
                  "negative judgments included. The judged flags are ranked as labels are, so `ties=` applies to "
                  "them (pessimistic: unjudged documents first among equal scores). See [Unjudged "
                  "documents](#unjudged-documents-judged-and-judged_only).")),
    # RBP's residual: 1 - RBP of the judged flags, a DCG row with gains 0 (unjudged) and -1 (judged) plus 1
    Family("RBPResidual", Lay.DCG, "graded",
           (Param("p", 0.8, "unit"), Param("all_judged", "tail", "choice", ("tail", "zero"))), True,
           ("rbpresidual", "rbp_resid", "rbp_residual"),
           ("rbp_resid",), "", "RBP's residual: the weight of the unjudged ranks and of those past the cutoff "
           "(needs judged=)", reads="judged_flags", plan_row="rbp_residual", function="rbp_residual",
           example="RBPResidual(p=0.8)@10", needs=("judged",),
           formula=("`RBPResidual@k = (1 - p) sum_{r <= d, unjudged} p^(r-1) + p^d = 1 - (1 - p) sum_{r <= d, "
                    "judged} p^(r-1)`, `d = min(k, n)`: how much [RBP](#rbp) (with gains in [0, 1]) could still "
                    "rise if the unjudged documents and the ranks past `d` were relevant"),
           peers=("trec_eval's `rbp_resid` (default `p=0.9`) reports 0 instead of `p^n` for a ranking without an "
                  "unjudged document; `rankjit trec_eval` reproduces that, and so does `all_judged='zero'` (0 when "
                  "every document of the top `d` is judged); the default `all_judged='tail'` gives the definition "
                  "(Moffat & Zobel 2008). ir_measures and ranx have no residual. The judged flags are ranked as "
                  "labels are, so `ties=` applies to them (pessimistic: unjudged documents first among equal "
                  "scores). See [Rank-biased precision: RBP](#rank-biased-precision-rbp).")),
)

# judged documents against unjudged ones: the judgment codes (judged relevant, judged non-relevant,
# pooled but unjudged, outside the pool) take the labels' place, or, with integer grades, the judged grades'
# ranking serves them (rankjit._api._list_parts; a pool that infAP reads shifts the judged grades by 2)
LIST_FAMILIES += (
    Family("Bpref", Lay.JUDGMENTS, "binary", _BINARY + _NORMALISED, False, ("bpref",), ("bpref",), "Bpref",
           "binary preference: each relevant document, less the share of judged non-relevant ones above it",
           kind=Lay.BPREF, reads="judgment_codes", plan_row="judgments", function="bpref", example="Bpref", ties_average=False,
           formula=("`Bpref = (1/R) sum_{relevant d} (1 - min(n_d, R) / min(N, R))`, `n_d` the judged non-relevant "
                    "documents above `d`, `N` the query's judged non-relevant documents"),
           peers=("Held per query to trec_eval's `bpref` and ir_measures' `Bpref` on aligned runs, where the qrels "
                  "give `judged=`, `N` and `R`; on bare arrays `N` and `R` are the row's unless `ideal_counts=` or "
                  "`n_relevant=` give the query's. See [Bpref and infAP](#bpref-and-infap).")),
    Family("infAP", Lay.JUDGMENTS, "binary", _BINARY + _NORMALISED, False, ("infap",), ("infAP",), "infAP",
           "inferred AP: AP estimated from an incomplete, sampled pool of judgments",
           kind=Lay.INFAP, reads="judgment_codes", reads_pool=True, plan_row="judgments", function="infap",
           example="infAP", ties_average=False,
           formula=("at the r-th relevant document, of 0-based rank `j`, with `n` judged non-relevant and `u` pooled "
                    "but unjudged documents above it: `1` when `j = 0`, else `1/(j+1) + (j/(j+1)) ((r-1+n+u)/j) "
                    "((r-1+eps)/(r-1+n+2 eps))`, `eps = 1e-5`; infAP is their sum over `R`"),
           peers=("Held per query to trec_eval's `infAP` and ir_measures' `infAP` on aligned runs, where the qrels "
                  "give `judged=`, `pooled=`, `N` and `R`; with every document judged it equals [AP](#ap). See "
                  "[Bpref and infAP](#bpref-and-infap).")),
)

# the C/W/L measures of ir_measures' cwl_eval provider: the expected gain per document a user reads who goes on
# from rank i with probability C_i, over cwl_eval's horizon of 1000 ranks (the normaliser counts every rank of it),
# with the gains (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel).  SDCG's and INSQ's C_i depend on the
# rank alone: DCG rows with their weights by rank; the others walk the ranks (Lay.CWL, compiled only when asked for)
CWL_HORIZON = 1000  # cwl_eval's max_n, as ir_measures sets it
# their docs text shares these (Family.formula, Family.peers)
_CWL_EU = ("`EU = sum_i reach_i g_i / sum_i reach_i` (`reach_i = prod_{j < i} C_j`, `g` as for "
           "[SDCG](#sdcg))")
_CWL_PEERS = ("cwl_eval (ir_measures) keeps the run file's order among equal scores, rankjit applies `ties=`; "
              "ir_measures takes only integer `min_rel` / `max_rel` and float `T` / `p`, warns on grades outside "
              "`[min_rel, max_rel]` where rankjit clips them, and accepts `min_rel < 0`, which rankjit refuses.")
_CWL_CUTOFF = "Without `@k` rankjit reads cwl_eval's 1000 ranks, where ir_measures requires a cutoff."
_CWL_SEE = "See [C/W/L measures](#cwl-measures-sdcg-insq-inst-bpm-nerr8-nerr11)."
_CWL_GAIN = (Param("min_rel", 0, "grade_bound"), Param("max_rel", None, "grade_bound"))
_T = (Param("T", 1.0, "positive"),)
LIST_FAMILIES += (
    Family("SDCG", Lay.DCG, "graded", (Param("dcg", "log2", "choice", ("log2",)),) + _CWL_GAIN, True, ("sdcg",), (),
           "SDCG", "scaled DCG: DCG@k over the DCG of k documents of the top grade (C/W/L)", plan_row="cwl_dcg",
           function="sdcg", example="SDCG(max_rel=4)@10", horizon=CWL_HORIZON,
           formula=("`SDCG@k = sum_{i <= N} g_i / log2(i + 1) / sum_{i <= N} 1 / log2(i + 1)`, `N = min(k, 1000)`, `g"
                    " = (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)`"),
           peers=(f"{_CWL_CUTOFF} {_CWL_PEERS} On the Web 2012 runs as they are, 10 to 12 of 50 queries "
                  "differ at `SDCG(max_rel=4)@1000` (by up to 2.3e-6), none at `@10`. " + _CWL_SEE)),
    Family("INSQ", Lay.DCG, "graded", _T + _CWL_GAIN, False, ("insq",), (), "INSQ",
           "C/W/L: the user goes on from rank i with probability ((i + 2T - 1) / (i + 2T))^2", plan_row="cwl_dcg",
           function="insq", example="INSQ(max_rel=4)", horizon=CWL_HORIZON,
           formula=_CWL_EU + " over 1000 ranks, `C_i = ((i + 2T - 1) / (i + 2T))^2`, so "
                             "`reach_i = (2T / (i + 2T - 1))^2`",
           peers=f"{_CWL_PEERS} {_CWL_SEE}"),
    Family("INST", Lay.CWL, "cascade", _T + _CWL_GAIN, False, ("inst",), (), "INST",
           "C/W/L: INSQ whose user wants T - CG_i more gain after rank i", kind=Lay.CWL_INST, plan_row="cwl", function="inst",
           example="INST(max_rel=4)", ties_average=False, horizon=CWL_HORIZON,
           formula=(_CWL_EU
                    + " over 1000 ranks, `C_i = ((x - 1) / x)^2`, `x = i + T + T_i`, `T_i = T - CG_i` the gain still "
                    "wanted"),
           peers=f"{_CWL_PEERS} {_CWL_SEE}"),
    Family("BPM", Lay.CWL, "cascade", _T + _CWL_GAIN, True, ("bpm",), (), "BPM",
           "bejeweled player model: CG_n / n, the user stopping at rank n where the gain reaches T, or at k",
           kind=Lay.CWL_BPM, plan_row="cwl", function="bpm", example="BPM(max_rel=4)@20", ties_average=False, horizon=CWL_HORIZON,
           formula=("`BPM@k = CG_n / n`, `n = min(first i with CG_i >= T, N)`, `N = min(k, 1000)`, `g` as for "
                    "[SDCG](#sdcg)"),
           peers=f"{_CWL_CUTOFF} {_CWL_PEERS} {_CWL_SEE}"),
    Family("NERR8", Lay.CWL, "cascade", _CWL_GAIN, True, ("nerr8",), (), "NERR8",
           "not-quite ERR (C/W/L, Eq. 8): the user goes on from rank i < k with probability 1 - g_i",
           kind=Lay.CWL_NERR8, plan_row="cwl", function="nerr8", example="NERR8(max_rel=4)@10", ties_average=False, horizon=CWL_HORIZON,
           formula=_CWL_EU + " over `N = min(k, 1000)` ranks, `C_i = 1 - g_i` for `i < k`, else 0",
           peers=f"{_CWL_CUTOFF} {_CWL_PEERS} {_CWL_SEE}"),
    Family("NERR9", Lay.CWL, "cascade", _CWL_GAIN, True, ("nerr9",), (), "NERR9",
           "not-quite ERR (C/W/L, Eq. 9): the user goes on from rank i < k with probability i / (i + 1) (1 - g_i)",
           kind=Lay.CWL_NERR9, plan_row="cwl", function="nerr9", example="NERR9(max_rel=4)@10", ties_average=False, horizon=CWL_HORIZON,
           formula=_CWL_EU + " over `N = min(k, 1000)` ranks, `C_i = i / (i + 1) (1 - g_i)` for `i < k`, else 0",
           peers=f"{_CWL_CUTOFF} {_CWL_PEERS} {_CWL_SEE}"),
    Family("NERR10", Lay.CWL, "cascade", (Param("p", 0.9, "unit"),) + _CWL_GAIN, False, ("nerr10",), (), "NERR10",
           "not-quite ERR (C/W/L, Eq. 10): the user goes on from rank i with probability p (1 - g_i)",
           kind=Lay.CWL_NERR10, plan_row="cwl", function="nerr10", example="NERR10(max_rel=4)", ties_average=False, horizon=CWL_HORIZON,
           formula=_CWL_EU + " over 1000 ranks, `C_i = p (1 - g_i)`",
           peers=f"{_CWL_PEERS} {_CWL_SEE}"),
    Family("NERR11", Lay.CWL, "cascade", _T + _CWL_GAIN, False, ("nerr11",), (), "NERR11",
           "not-quite ERR (C/W/L, Eq. 11): INSQ's continuation times 1 - g_i", kind=Lay.CWL_NERR11, plan_row="cwl", function="nerr11",
           example="NERR11(max_rel=4)", ties_average=False, horizon=CWL_HORIZON,
           formula=_CWL_EU + " over 1000 ranks, `C_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i)`",
           peers=f"{_CWL_PEERS} {_CWL_SEE}"),
)

# the last two of ir_measures' catalogue (outside diversity): Compat (Clarke, Vtyurina & Smucker, TOIS 2021), the
# rank-biased overlap of the ranking with an ideal ranking of the relevant documents (a walk over the relevant
# documents of the list, Lay.COMPAT), and Accuracy, a count of the (relevant, non-relevant) pairs of the top k in the
# binary scan (Lay.ACCURACY); both compiled only when asked for (rankjit._kernels.engine.Variant.extras)
LIST_FAMILIES += (
    Family("Compat", Lay.COMPAT, "graded", (Param("p", 0.95, "unit"), Param("normalize", True, "flag")) + _NORMALISED,
           False, ("compat", "compatibility"), (), "Compat",
           "rank-biased overlap (persistence p) of the ranking with the ideal ranking of the relevant documents",
           plan_row="compat", function="compatibility", example="Compat", ties_average=False,
           formula=("`RBO = sum_{i<D} p^i |A_i| / (i + 1) / sum_{i<D} p^i`, `A_i` the relevant documents in the first"
                    " `i + 1` of both the ranking and the ideal ranking, `D = max(n, R)`; `normalize=True` divides by"
                    " the ideal's RBO with itself"),
           peers=("ir_measures orders equal scores by doc id and the ideal's by the qrels file, rankjit by `ties=` "
                  "in both; a retrieved document scoring exactly 0 comes before the unretrieved documents of its "
                  "grade (ir_measures: in qrels order among them). The values agree to 1e-9 per query on runs "
                  "without ties. See [Compat and Accuracy](#compat-and-accuracy).")),
    # empty: the value without a (relevant, non-relevant) pair in the top k; NaN (undefined) by default, which
    # ir_measures leaves out (no relevant document) or divides by zero for (no non-relevant one).  Not evaluate()'s
    # empty= (call_default=False): that one's default, "zero", would hide the undefined queries
    Family("Accuracy", Lay.ACCURACY, "binary",
           _BINARY + (Param("empty", "nan", "choice", ("nan", "zero", "one"), call_default=False),), True,
           ("accuracy",), (), "Accuracy",
           "the share of (relevant, non-relevant) pairs of the top k with the relevant document above",
           function="accuracy", example="Accuracy@10", ties_average=False, aggregate="defined",
           formula=("`Accuracy@k = 1 - S / (N R')` over the top `min(k, n)` documents, `R'` of them relevant and `N` "
                    "not, `S` the (non-relevant above relevant) pairs"),
           peers=("A query without a (relevant, non-relevant) pair in the top k is NaN and left out of the mean, as"
                  " ir_measures leaves out the queries with `R' = 0`; it raises `ZeroDivisionError` for `N = 0`. "
                  "ir_measures ranks equal scores in the run's order, rankjit by `ties=`. See [Compat and "
                  "Accuracy](#compat-and-accuracy).")),
)

BY_NAME = {f.name: f for f in LIST_FAMILIES}

#: one typical measure string per family that labels and scores alone compute, in the registry's order
#: (rankjit demo, the warm-up)
EXAMPLES = tuple(f.example for f in LIST_FAMILIES if not f.needs)


# ---- families with inputs besides labels and scores ------------------------------------

_INPUT_FIELDS = (
    "name",  # rankjit's spelling
    "aliases",  # other spellings accepted by evaluate() (matched case-insensitively)
    "params",  # (Param, ...): checked by Param.check when a measure is resolved; checks that need the data stay
    # with the module's evaluate_measure (RPP's weights array: non-negative, the first > 0)
    "takes_k",  # accepts a cutoff ``@k``
    "needs",  # evaluate()'s keyword inputs it cannot go without: ("nuggets",) or ("scores_b",)
    "module",  # the module whose ``evaluate_measure(measure, params, context)`` computes it, with its own kernels
    "ir_measures",  # ir_measures' name ("" when it has none)
    "summary",  # one line for the docs
    "function",  # its public function in ``module``
    "judged_only",  # takes ``judged_only=`` (the judged documents alone, from evaluate()'s ``judged=``)
    # its docs text (docs/diversity.md, docs/rpp.md: rankjit._docs_families), Markdown, one line each
    "formula",  # the definition, with the notation of its page (G[r], S_q, J(d, i); f_i, p(i), m)
    "peers",  # where ndeval, ir_measures, pyndeval or the reference code disagree, or "No known disagreement ..."
)


class InputFamily(namedtuple("InputFamily", _INPUT_FIELDS, defaults=(False, "", ""))):
    """A measure family computed outside the list engine: intent-aware measures over nugget
    judgments (:mod:`rankjit.diversity`) and preferences between two systems
    (:mod:`rankjit.preference`).  ``evaluate`` parses and resolves them like the list
    families (their parameters checked by :meth:`Param.check`), then hands each to its
    module's ``evaluate_measure``.
    """

    __slots__ = ()

    @property
    def defaults(self) -> dict:
        """``{parameter: default}``."""
        return {p.name: p.default for p in self.params}

    def param(self, name):
        return next(p for p in self.params if p.name == name)


_DIVERSITY = ("nuggets",), "rankjit.diversity"
_PAIR = ("scores_b",), "rankjit.preference"
_A = (Param("alpha", 0.5, "unit"),)
_BETA = (Param("beta", 0.5, "unit"),)
_BOUND = (Param("bound", True, "flag"),)
# rel: None (a nugget judgment > 0 is relevant) or a number > 0 (judgments >= rel); empty as the list measures'
_REL_EMPTY = (Param("rel", None, "positive_or_none"), Param("empty", None, "choice", ("zero", "one", "nan")))
# the preferences: binary relevance label >= rel; a query without a relevant document is NaN (the reference
# code drops it) or 0, never 1 (that would break RPP(a, b) = -RPP(b, a))
_PAIR_REL_EMPTY = (Param("rel", 1, "threshold"),
                   Param("empty", None, "choice", ("nan", "zero"),
                         why="'nan' marks the query undefined (the reference code drops it), 'zero' gives it 0; 'one' "
                             "would break the antisymmetry of a against b and b against a"))

#: the parameters the diversity families share, by name: ``rankjit.diversity``'s functions check theirs with them
DIVERSITY_PARAMS = {p.name: p for p in _A + _BETA + _BOUND + _REL_EMPTY}

# their docs text shares these (InputFamily.formula, InputFamily.peers)
_DIFF = "See [Differences from ndeval / ir_measures](#differences-from-ndeval--ir_measures)."
_COMMON = ("those common to the diversity measures (ndeval stops at `k = 20`, takes `S_q` over every judged "
           "document, which `ideal=` gives, and orders tied scores by docno)")
_GREEDY_TIES = ("ndeval's greedy ideal breaks ties towards the larger docno, rankjit's towards the lowest index "
                "(`ideal=` ordered by docno descending, as `align_diversity` gives it, reproduces ndeval's)")
_AT_1 = ("at `k = 1` ndeval leaves `G[1]` undivided (its normalising loop starts at rank 2), rankjit divides it "
         "by `S_q` as at every other `k`")
_F = "`f_i` the rank of a ranking's i-th relevant document (infinity when not retrieved or below `k`)"
_PAIR_PEERS = ("neither trec_eval nor ir_measures computes it. In `evaluate` the query without a relevant "
               "document takes evaluate's `empty=` (`'zero'` by default); the functions' default `'nan'` is the "
               "reference code's, which drops such queries.")

INPUT_FAMILIES = (
    InputFamily("alpha_nDCG", ("alpha-ndcg", "alphandcg", "a-ndcg", "α_ndcg"), _A + _REL_EMPTY, True, *_DIVERSITY,
                "alpha_nDCG", "alpha-DCG over the alpha-DCG of a greedy ideal ranking", "alpha_ndcg", judged_only=True,
                formula=("`alpha-nDCG@k = sum_{r <= k} G[r] / log2(r + 1) / (the same sum over the greedy ideal "
                         "ranking)`, `G[r] = sum_i J(d_r, i) (1 - alpha)^{c_i(r)}`; the greedy ideal appends the "
                         "candidate of the largest gain, ties to the lowest index"),
                peers=(f"ndeval's `alpha-nDCG` and ir_measures' `alpha_nDCG` (pyndeval) agree per query, beyond "
                       f"{_COMMON}; {_GREEDY_TIES}. {_DIFF}")),
    InputFamily("alpha_DCG", ("alpha-dcg", "alphadcg", "a-dcg", "α_dcg"), _A + _BOUND + _REL_EMPTY, True,
                *_DIVERSITY, "alpha_DCG", "novelty-discounted cumulative gain (bound=True: over ndeval's bound)",
                "alpha_dcg", judged_only=True,
                formula=("`alpha-DCG@k = sum_{r <= min(k, n)} G[r] / log2(r + 1) / (S_q sum_{r <= k} (1 - "
                         "alpha)^{r-1} / log2(r + 1))`; `bound=False`: the numerator alone (Clarke et al. 2008)"),
                peers=(f"ndeval's `alpha-DCG` and ir_measures' `alpha_DCG` divide by the same bound, but {_AT_1}: "
                       f"multiply by `S_q` for theirs; other differences are {_COMMON}. {_DIFF}")),
    InputFamily("ERR_IA", ("err-ia", "erria"), _A + (Param("normalize", False, "flag"),) + _BOUND + _REL_EMPTY, True,
                *_DIVERSITY, "ERR_IA", "intent-aware expected reciprocal rank (bound=True: over ndeval's bound)",
                "err_ia", judged_only=True,
                formula=("`ERR-IA@k = sum_{r <= min(k, n)} G[r] / r / (S_q sum_{r <= k} (1 - alpha)^{r-1} / r)`;"
                         " `bound=False`: `(1/S_q) sum_i ERR_i@k`, `ERR_i@k = sum_{r <= k} (1/r) alpha J(d_r, i) "
                         "prod_{j < r} (1 - alpha J(d_j, i))`; `normalize=True`: [nERR_IA](#nerr_ia)"),
                peers=(f"ndeval's `ERR-IA` and ir_measures' `ERR_IA` divide by the same bound, but {_AT_1}: "
                       f"multiply by `S_q` for theirs; other differences are {_COMMON}. `bound=False` is rankjit's "
                       f"ERR-IA before 2026-11. {_DIFF}")),
    InputFamily("nERR_IA", ("nerr-ia", "nerria"), _A + _REL_EMPTY, True, *_DIVERSITY, "nERR_IA",
                "ERR-IA over the ERR-IA of a greedy ideal ranking", "err_ia", judged_only=True,
                formula=("`nERR-IA@k = sum_{r <= k} G[r] / r / (the same sum over the greedy ideal ranking of "
                         "[alpha_nDCG](#alpha_ndcg), same `alpha`)`; `ERR_IA(normalize=True)` is the same measure"),
                peers=(f"ndeval's `nERR-IA` and ir_measures' `nERR_IA` agree per query, beyond {_COMMON}; "
                       f"{_GREEDY_TIES}. {_DIFF}")),
    InputFamily("S_recall", ("s-recall", "strec", "subtopic_recall", "srecall", "strecall"), _REL_EMPTY, True,
                *_DIVERSITY, "StRecall", "subtopic recall: the share of subtopics covered in the top k", "s_recall",
                judged_only=True,
                formula=("`S-recall@k = |{i : J(d_r, i) = 1 for some r <= k}| / S_q`, over `S_q`, not over the "
                         "best coverage `k` documents can reach"),
                peers=(f"No known disagreement with ndeval's `strec` or ir_measures' `StRecall` beyond {_COMMON}. "
                       f"{_DIFF}")),
    InputFamily("P_IA", ("p-ia",), _REL_EMPTY, True, *_DIVERSITY, "P_IA", "intent-aware precision", "p_ia",
                judged_only=True,
                formula=("`P-IA@k = (1/S_q) sum_i |{r <= k : J(d_r, i) = 1}| / k`, over `k` even when the row is "
                         "shorter (without a cutoff, over `n`)"),
                peers=(f"No known disagreement with ndeval's `P-IA` or ir_measures' `P_IA` beyond {_COMMON}. "
                       f"{_DIFF}")),
    InputFamily("AP_IA", ("ap-ia", "map-ia", "map_ia"), _REL_EMPTY, True, *_DIVERSITY, "AP_IA",
                "intent-aware average precision", "ap_ia", judged_only=True,
                formula=("`AP-IA = (1/S_q) sum_i AP_i`, `AP_i = (1/R_i) sum_{r <= k : J(d_r, i) = 1} |{j <= r : "
                         "J(d_j, i) = 1}| / r`, `R_i` the documents relevant to subtopic `i` (in `ideal=`, else in "
                         "the row)"),
                peers=(f"No known disagreement with ndeval's per-query `MAP-IA` or ir_measures' `AP_IA` beyond "
                       f"{_COMMON}; `R_i` too counts every judged document only with `ideal=`. {_DIFF}")),
    InputFamily("NRBP", (), _A + _BETA + _REL_EMPTY, True, *_DIVERSITY, "NRBP",
                "novelty- and rank-biased precision", "nrbp", judged_only=True,
                formula=("`NRBP = (1 - (1 - alpha) beta) / S_q sum_{r <= k} G[r] beta^{r-1}`: a ranking whose every"
                         " document holds every subtopic scores 1"),
                peers=(f"No known disagreement with ndeval's `NRBP` or ir_measures' `NRBP` (Clarke et al., ICTIR "
                       f"2009) beyond {_COMMON}. {_DIFF}")),
    InputFamily("nNRBP", (), _A + _BETA + _REL_EMPTY, True, *_DIVERSITY, "nNRBP",
                "NRBP over the NRBP of a greedy ideal ranking", "nrbp", judged_only=True,
                formula=("`nNRBP = sum_{r <= k} G[r] beta^{r-1} / (the same sum over the greedy ideal ranking of "
                         "[alpha_nDCG](#alpha_ndcg))`; `nrbp(..., normalize=True)`"),
                peers=(f"ndeval and ir_measures give 0 / 0 = NaN to a query without a relevant judgment, rankjit "
                       f"`empty=` (`'zero'` by default): `nNRBP(empty='nan')` gives theirs; {_GREEDY_TIES}; other "
                       f"differences are {_COMMON}. {_DIFF}")),
    InputFamily("RPP", ("rpp", "recall_paired_preference"),
                (Param("weights", "uniform", "choice_or_array", ("uniform", "inverse", "dcg"),
                       "per-recall-level weights (level 1, 2, ...)"),
                 Param("graded", False, "flag")) + _PAIR_REL_EMPTY, True, *_PAIR, "",
                "recall-paired preference of scores over scores_b", "rpp", judged_only=True,
                formula=(f"`RPP(a, b) = sum_{{i <= m}} p(i) sgn(f_i(b) - f_i(a))`, {_F}, `p(i) = w_i / sum_{{j <= "
                         "m} w_j`, `w_i = 1` (`'uniform'`), `1/i` (`'inverse'`), `1/log2(i + 1)` (`'dcg'`) or "
                         "the array's (0 beyond its end); `graded=True`: `sum_g m_g RPP_g / sum_g m_g` over the "
                         "grades `g >= rel`"),
                peers=("No known disagreement with the definition of Diaz & Ferraro (SIGIR 2022) and its reference "
                       f"implementation; {_PAIR_PEERS} See [Conventions](#conventions).")),
    InputFamily("LexiPrecision", ("lexiprecision", "lexicographic_precision", "sgnlp"),
                (Param("variant", "sgn", "choice", ("sgn", "rr")),) + _PAIR_REL_EMPTY, True, *_PAIR, "",
                "lexicographic precision of scores over scores_b", "lexiprecision", judged_only=True,
                formula=(f"`LP(a, b) = sgn(f_i(b) - f_i(a))` at the first recall level `i` with `f_i(a) != "
                         f"f_i(b)` (0 when none), {_F}; `variant='rr'`: `1/f_i(a) - 1/f_i(b)` at that level"),
                peers=("No known disagreement with diazf/pref_eval: its per-topic `lexiprecision` and "
                       f"`rrlexiprecision` agree on the TREC 2012 Web runs; {_PAIR_PEERS} See [Lexicographic "
                       "precision and lexicographic recall](#lexicographic-precision-and-lexicographic-recall).")),
    InputFamily("LexiRecall", ("lexirecall", "lexicographic_recall", "sgnlr"), _PAIR_REL_EMPTY, True,
                *_PAIR, "", "lexicographic recall of scores over scores_b", "lexirecall", judged_only=True,
                formula=(f"`LR(a, b) = sgn(f_i(b) - f_i(a))` at the last recall level `i` with `f_i(a) != f_i(b)`"
                         f" (0 when none), {_F}"),
                peers=("No known disagreement with diazf/pref_eval: its per-topic `lexirecall` agrees on the TREC "
                       f"2012 Web runs; {_PAIR_PEERS} See [Lexicographic precision and lexicographic "
                       "recall](#lexicographic-precision-and-lexicographic-recall).")),
)

INPUT_BY_NAME = {f.name: f for f in INPUT_FAMILIES}
