"""Every Numba-compiled function of rankjit lives in a kernels module (issue 15: "kernels live in kernel modules").

Public and front-end modules validate and convert in Python, then call compiled kernels; the
kernels themselves live in the modules listed in :data:`KERNEL_HOMES`.  The check reads the
source with ``ast`` (nothing is imported or compiled): a function is compiled when one of its
decorators is a name, attribute or call whose last name is in :data:`COMPILERS` (``@jit``,
``@jit(inline="always")``, ``@numba.njit(...)``, ``@jit_parallel``, ``@intrinsic``,
``@overload(...)``, ...), or when such a compiler is called on a function by name
(``kernel = jit(f)``, ``numba.njit(**options)(f)``).  Names bound by ``from ... import
jit as other`` count too.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

#: the package's source: the checkout this test belongs to (so a scratch copy checks itself)
SRC = Path(__file__).resolve().parents[1] / "src" / "rankjit"

#: the last name of a decorator (or compiling call) that makes a Numba-compiled function.  rankjit uses
#: ``jit`` and ``jit_parallel`` (rankjit._config) and ``intrinsic`` (rankjit._kernels.nrt); the others are
#: Numba's own spellings, so that a kernel written with Numba directly is caught too.
COMPILERS = frozenset({
    "jit", "njit", "jit_parallel", "generated_jit", "vectorize", "guvectorize", "cfunc", "stencil",
    "overload", "overload_method", "overload_attribute", "intrinsic", "register_jitable",
})

#: where compiled functions may be defined (paths relative to src/rankjit), and why
KERNEL_HOMES = {
    "_kernels/": "the engine's kernels (and rankjit._kernels.frontends: those of the compat / integrations "
                 "front ends)",
    "io/_kernels.py": "the readers' kernels",
    "io/_trec_prefs_kernels.py": "the readers' kernels of trec_eval's preference and judgment-group measures: "
                                 "a kernels module of its own (by name and docstring) beside rankjit.io._trec_prefs",
    "stats/_kernels.py": "the statistics' kernels",
    "_config.py": "the compile decorators themselves: jit / jit_parallel / specialise call numba.njit on the "
                  "functions they are given (it defines no kernel of its own)",
}


def _is_home(rel: str) -> bool:
    return any(rel.startswith(home) if home.endswith("/") else rel == home for home in KERNEL_HOMES)


def _last_name(node) -> str | None:
    """``jit`` for ``jit``, ``numba.njit``, ``jit(...)``, ``numba.njit(...)``; None for anything else."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def compiled_functions(source: str, filename: str = "<source>") -> list:
    """``[(line, name, how)]``: the functions of ``source`` that Numba compiles (line: the ``def``'s, or the call's)."""
    tree = ast.parse(source, filename=filename)
    compilers = set(COMPILERS)
    for node in ast.walk(tree):  # `from numba import njit as nj`: `nj` compiles too
        if isinstance(node, ast.ImportFrom):
            compilers.update(a.asname for a in node.names if a.asname and a.name in COMPILERS)
    decorators = {id(d) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for d in node.decorator_list}  # (`@overload(len)` is a decorator, not a call compiling `len`)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                name = _last_name(deco)
                if name in compilers:
                    found.append((node.lineno, node.name, f"@{name}"))
                    break
        elif (isinstance(node, ast.Call) and id(node) not in decorators and node.args
              and isinstance(node.args[0], ast.Name)):
            # jit(f), jit(**options)(f), numba.njit(**options)(f): a function compiled by a call
            name = _last_name(node.func)
            if name in compilers:
                found.append((node.lineno, node.args[0].id, f"{name}(...)"))
    return sorted(found)


def all_compiled(root: Path = SRC) -> dict:
    """``{path relative to root: [(line, name, how)]}`` over every ``.py`` file under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        found = compiled_functions(path.read_text(encoding="utf-8"), str(path))
        if found:
            out[path.relative_to(root).as_posix()] = found
    return out


def misplaced(root: Path = SRC) -> list:
    """``["io/x.py:12 f (@jit)", ...]``: the compiled functions defined outside :data:`KERNEL_HOMES`."""
    return [f"{rel}:{line} {name} ({how})" for rel, found in all_compiled(root).items() if not _is_home(rel)
            for line, name, how in found]


def test_every_compiled_function_lives_in_a_kernels_module():
    bad = misplaced()
    assert not bad, ("compiled functions outside the kernels modules (move them to rankjit._kernels.*, "
                     "rankjit.io._kernels or rankjit.stats._kernels; see KERNEL_HOMES):\n  " + "\n  ".join(bad))


def test_the_scan_sees_the_real_kernels():
    """The scan finds the package's kernels where they are (else the test above could pass vacuously)."""
    found = all_compiled()
    assert sum(map(len, found.values())) >= 100
    names = {rel: {name for _, name, _ in rows} for rel, rows in found.items()}
    assert "tokenize" in names["io/_kernels.py"]  # @jit
    assert "rank_blocks" in names["_kernels/engine.py"]  # @jit(...) or @jit
    assert "borrowed" in names["_kernels/nrt.py"]  # @intrinsic
    assert any(how == "@jit_parallel" for rows in found.values() for _, _, how in rows)
    for home in KERNEL_HOMES:  # every allowed home exists (a stale entry would widen the rule for nothing)
        assert (SRC / home).exists(), home


@pytest.mark.parametrize("source, expected", [
    pytest.param("from rankjit._config import jit\n@jit\ndef f(x):\n    return x\n", [(3, "f", "@jit")],
                 id="jit"),
    pytest.param("@jit(inline='always')\ndef f(x):\n    return x\n", [(2, "f", "@jit")], id="jit-call"),
    pytest.param("import numba\n@numba.njit(cache=True)\ndef f(x):\n    return x\n", [(3, "f", "@njit")],
                 id="numba.njit"),
    pytest.param("@jit_parallel\ndef f(x):\n    return x\n", [(2, "f", "@jit_parallel")], id="jit_parallel"),
    pytest.param("@intrinsic\ndef f(typingctx, x):\n    pass\n", [(2, "f", "@intrinsic")], id="intrinsic"),
    pytest.param("@overload(len)\ndef f(x):\n    pass\n", [(2, "f", "@overload")], id="overload"),
    pytest.param("from numba import njit as compiled\n@compiled\ndef f(x):\n    return x\n",
                 [(3, "f", "@compiled")], id="alias"),
    pytest.param("def g():\n    @jit\n    def inner(x):\n        return x\n    return inner\n",
                 [(3, "inner", "@jit")], id="nested"),
    pytest.param("def f(x):\n    return x\nkernel = jit(f)\n", [(3, "f", "jit(...)")], id="jit(f)"),
    pytest.param("def f(x):\n    return x\nkernel = numba.njit(cache=True)(f)\n", [(3, "f", "njit(...)")],
                 id="njit(...)(f)"),
    pytest.param("import functools\n@property\ndef a(self):\n    pass\n@functools.wraps(len)\ndef b():\n    pass\n"
                 "@dataclass\nclass C:\n    pass\n", [], id="not-compiled"),
])
def test_the_scan_recognises_compiled_functions(source, expected):
    assert compiled_functions(source) == expected
