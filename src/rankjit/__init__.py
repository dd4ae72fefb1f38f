"""rankjit: compiled, exact ranking-quality metrics with explicit conventions.

Nothing is compiled at import; the first call of each kernel compiles it (and caches
it on disk), and :func:`warmup` compiles the common signatures ahead of time.

``import rankjit`` is light: the public functions are loaded (with numpy and Numba)
on first use of any of them (PEP 562 module attributes), so that a script or a CLI
start-up pays for Numba only when it scores something.
"""
from __future__ import annotations

from rankjit._lazy import lazy_names
from rankjit._registry import LIST_FAMILIES

__version__ = "0.1.0"

#: public name -> module that defines it (one function per list-measure family, from the registry)
_PUBLIC = {
    "evaluate": "rankjit._api",
    "evaluate_systems": "rankjit._api",
    "warmup": "rankjit._warmup",
    **{family.function: "rankjit.metrics" for family in LIST_FAMILIES},
    "offsets_from_qids": "rankjit.metrics",
    "alpha_ndcg": "rankjit.diversity",
    "alpha_dcg": "rankjit.diversity",
    "err_ia": "rankjit.diversity",
    "s_recall": "rankjit.diversity",
    "p_ia": "rankjit.diversity",
    "ap_ia": "rankjit.diversity",
    "nrbp": "rankjit.diversity",
    "rpp": "rankjit.preference",
    "rpp_matrix": "rankjit.preference",
    "lexiprecision": "rankjit.preference",
    "lexirecall": "rankjit.preference",
    "lexiprecision_matrix": "rankjit.preference",
    "lexirecall_matrix": "rankjit.preference",
}

__all__ = [*_PUBLIC, "__version__"]


__getattr__, __dir__ = lazy_names("rankjit", _PUBLIC, globals())
