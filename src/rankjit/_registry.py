"""The registry of list-measure families: one record per family, read by everything else.

A record says what a family is called (rankjit's spelling, the other spellings
``evaluate`` accepts, trec_eval's and ir_measures' names), its parameters with their
defaults, whether it takes a cutoff, and which group of the engine's measure pass
computes it (:mod:`rankjit._engine`: ``binary`` reads hits of the ranked labels,
``graded`` weighted gains, ``cascade`` a cascade of stopping probabilities).  The
measure grammar (:mod:`rankjit._measures`) and the engine's variant choice derive
their tables from :data:`LIST_FAMILIES`; nothing else lists the families.

Adding a family: a record here, its parameter rows in ``rankjit._measures``, at most
one primitive in the measure pass, its reference function in ``tests/reference.py`` and
its section in ``docs/metrics.md`` (``tests/test_registry.py`` checks the last two name
every family).
"""
from __future__ import annotations

from dataclasses import dataclass

from rankjit import _layout as Lay

#: the groups of the engine's measure pass, in the order of the variant flags
GROUPS = ("binary", "graded", "cascade")


@dataclass(frozen=True)
class Family:
    """One list-measure family."""

    name: str  # rankjit's spelling, e.g. "nDCG"
    code: int  # the engine's measure code (rankjit._layout)
    group: str  # the measure-pass group that computes it (GROUPS)
    params: tuple  # ((parameter, default), ...)
    takes_k: bool  # accepts a cutoff ``@k``
    aliases: tuple = ()  # other spellings accepted by evaluate(), lower case
    trec_eval: tuple = ()  # trec_eval's measure names
    ir_measures: str = ""  # ir_measures' name ("" when it has none)
    summary: str = ""  # one line for the docs

    @property
    def defaults(self) -> dict:
        return dict(self.params)


_BINARY = (("rel", 1),)
_NORMALISED = (("empty", None),)

LIST_FAMILIES = (
    Family("P", Lay.P, "binary", _BINARY, True, ("p", "precision"), ("P",), "P",
           "precision: relevant documents in the top k, over k"),
    Family("R", Lay.RECALL, "binary", _BINARY + _NORMALISED, True, ("r", "recall"), ("recall",), "R",
           "recall: relevant documents in the top k, over the relevant documents"),
    Family("Success", Lay.SUCCESS, "binary", _BINARY, True, ("success", "hit_rate", "hitrate", "hits"),
           ("success",), "Success", "1 when a relevant document is in the top k"),
    Family("RR", Lay.RR, "binary", _BINARY, True, ("rr", "mrr", "recip_rank"), ("recip_rank",), "RR",
           "reciprocal rank of the first relevant document"),
    Family("AP", Lay.AP, "binary", _BINARY + (("denominator", "min_k_r"),) + _NORMALISED, True, ("ap", "map"),
           ("map", "map_cut"), "AP", "average precision"),
    Family("Rprec", Lay.RPREC, "binary", _BINARY + _NORMALISED, False, ("rprec", "r-prec", "r_prec"), ("Rprec",),
           "Rprec", "precision at rank R, the number of relevant documents"),
    Family("DCG", Lay.DCG, "graded", (("gain", "exp2"), ("discount", "log2"), ("base", 2.0)), True, ("dcg",),
           (), "", "discounted cumulative gain"),
    Family("nDCG", Lay.NDCG, "graded", (("gain", "exp2"), ("discount", "log2"), ("base", 2.0)) + _NORMALISED, True,
           ("ndcg",), ("ndcg", "ndcg_cut"), "nDCG", "DCG over the DCG of the ideal ranking"),
    Family("ERR", Lay.ERR, "cascade", (("max_grade", 4), ("utility", "reciprocal"), ("probabilities", False)), True,
           ("err",), (), "ERR", "expected reciprocal rank (cascade model)"),
    Family("pFound", Lay.PFOUND, "cascade",
           (("p_break", 0.15), ("max_grade", 4), ("probabilities", False), ("prel", None)), True, ("pfound",), (), "",
           "probability of finding a relevant document (Yandex cascade)"),
)

BY_NAME = {f.name: f for f in LIST_FAMILIES}


def group_codes(group: str) -> frozenset:
    """The measure codes of one measure-pass group."""
    return frozenset(f.code for f in LIST_FAMILIES if f.group == group)
