"""Packages whose public names load on first use (PEP 562 module ``__getattr__``).

``import rankjit``, ``rankjit.io`` and ``rankjit.stats`` import nothing heavy: each name
is imported from its module the first time it is looked up, then kept in the package's
namespace.
"""
from __future__ import annotations

import importlib


def lazy_names(package: str, public: dict, namespace: dict):
    """``(__getattr__, __dir__)`` for ``package``.

    ``public`` maps a public name to the module that defines it, or to a ``(module,
    name there)`` pair; other names are tried as submodules (``rankjit.io._kernels``).
    ``namespace`` is the package's ``globals()``.
    """

    def __getattr__(name):
        where = public.get(name)
        if where is None:
            try:  # a submodule not imported yet
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module, attr = where if isinstance(where, tuple) else (where, name)
        value = getattr(importlib.import_module(module), attr)
        namespace[name] = value  # later look-ups skip this function
        return value

    def __dir__():
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
