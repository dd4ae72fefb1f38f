"""rankjit: compiled, exact ranking-quality metrics with explicit conventions.

Nothing is compiled at import; the first call of each kernel compiles it (and caches
it on disk), and :func:`warmup` compiles the common signatures ahead of time.

``import rankjit`` is light: the public functions are loaded (with numpy and Numba)
on first use of any of them (PEP 562 module attributes), so that a script or a CLI
start-up pays for Numba only when it scores something.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: public name -> module that defines it
_PUBLIC = {
    "evaluate": "rankjit._api",
    "evaluate_systems": "rankjit._api",
    "warmup": "rankjit._warmup",
    "precision": "rankjit.metrics",
    "recall": "rankjit.metrics",
    "hit_rate": "rankjit.metrics",
    "rr": "rankjit.metrics",
    "ap": "rankjit.metrics",
    "rprec": "rankjit.metrics",
    "dcg": "rankjit.metrics",
    "ndcg": "rankjit.metrics",
    "err": "rankjit.metrics",
    "pfound": "rankjit.metrics",
    "offsets_from_qids": "rankjit.metrics",
    "alpha_ndcg": "rankjit.diversity",
    "alpha_dcg": "rankjit.diversity",
    "err_ia": "rankjit.diversity",
    "s_recall": "rankjit.diversity",
    "rpp": "rankjit.preference",
    "rpp_matrix": "rankjit.preference",
}

__all__ = [*_PUBLIC, "__version__"]


def __getattr__(name):
    module = _PUBLIC.get(name)
    if module is None:
        try:  # a submodule not imported yet: rankjit.io, rankjit.stats, ...
            return importlib.import_module(f"rankjit.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"rankjit.{name}":
                raise
            raise AttributeError(f"module 'rankjit' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
