"""No import cycles in rankjit, hidden ones included (issue 15: "no import cycles, hidden or not").

The graph is built from the source with ``ast``, without importing the modules. An edge
``a -> b`` is any way ``a`` can load ``b``:

* ``import b`` / ``from b import x`` / ``from pkg import b``, at module level or inside a
  function (a function-level import is a cycle that waits for its first call);
* ``importlib.import_module("b")`` with a constant string;
* the command line's dispatch table: ``rankjit.cli`` imports every module of
  ``rankjit.cli.COMMANDS`` (through ``importlib`` with the names in a table);
* a lazy package's public name (PEP 562, ``rankjit._lazy.lazy_names``): ``import rankjit``
  then ``rankjit.evaluate`` (or ``from rankjit import evaluate``) loads ``rankjit._api``,
  the module the package's ``_PUBLIC`` table names; the edge goes from the module that
  looks the name up (``import rankjit`` alone loads nothing).

A failure names every cycle, with the file line of each edge in it.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import rankjit

SRC = Path(rankjit.__file__).resolve().parents[1]


def _modules(root: Path, top: str) -> dict:
    """Module name -> (path, is a package) of every ``.py`` file of package ``top`` under ``root``."""
    out = {}
    for path in sorted((root / top).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def _from_base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module of ``from ... import`` (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(root: Path, top: str, *, lazy: dict, tables: dict) -> dict:
    """``{module: {imported module: line}}`` for the modules of ``top`` (edges within ``top`` only).

    ``lazy``: package -> {public name: module that defines it}; ``tables``: module ->
    modules it imports by name from a table (the CLI's dispatch).
    """
    modules = _modules(root, top)

    def member(package, name):
        """The module that looking up ``package.name`` loads (a submodule, or a lazy public name's)."""
        if f"{package}.{name}" in modules:
            return f"{package}.{name}"
        return lazy.get(package, {}).get(name)

    graph = {}
    for module, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges = graph.setdefault(module, {})
        bound = {}  # local name -> the module or package bound to it (every scope of the file)

        def add(target, line):
            if target in modules and target != module:
                edges.setdefault(target, line)

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node.lineno)
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = _from_base(module, is_package, node)
                for alias in node.names:
                    add(member(base, alias.name) or base, node.lineno)
                    if f"{base}.{alias.name}" in modules:
                        bound[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if (name == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
                        and isinstance(node.args[0].value, str)):
                    add(node.args[0].value, node.lineno)

        def resolve(expr):
            """The module an expression such as ``rankjit.io.align`` loads, if any."""
            if isinstance(expr, ast.Name):
                return bound.get(expr.id)
            if isinstance(expr, ast.Attribute):
                base = resolve(expr.value)
                return member(base, expr.attr) if base else None
            return None

        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                target = resolve(node)
                if target:
                    add(target, node.lineno)
        for target in tables.get(module, ()):
            add(target, "its dispatch table")
    return graph


def cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(graph: dict, component: list) -> list:
    """A shortest cycle through the first module of a component: ``[a, b, ..., a]``."""
    start, members = component[0], set(component)
    came_from, queue = {start: None}, [start]
    for v in queue:  # breadth first, within the component
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if w in members and w not in came_from:
                came_from[w] = v
                queue.append(w)
    return component  # pragma: no cover - a component always holds a cycle


def describe(graph: dict, found: list) -> str:
    """Each cycle by name (its modules, one shortest loop through them), with its edges (``a:line -> b``)."""
    lines = []
    for component in found:
        members = set(component)
        lines.append("cycle: " + ", ".join(component))
        lines.append("    e.g. " + " -> ".join(shortest_cycle(graph, component)))
        for a in component:
            for b, line in sorted(graph[a].items()):
                if b in members:
                    lines.append(f"    {a}:{line} -> {b}")
    return "\n".join(lines)


def _lazy_tables() -> dict:
    """The ``_PUBLIC`` table of every rankjit package that loads its names lazily (``lazy_names``)."""
    out = {}
    for module, (path, is_package) in _modules(SRC, "rankjit").items():
        if is_package and "lazy_names(" in path.read_text(encoding="utf-8"):
            public = importlib.import_module(module)._PUBLIC
            out[module] = {name: where[0] if isinstance(where, tuple) else where for name, where in public.items()}
    return out


def rankjit_graph() -> dict:
    from rankjit.cli import COMMANDS

    return import_graph(SRC, "rankjit", lazy=_lazy_tables(),
                        tables={"rankjit.cli": [module for module, _ in COMMANDS.values()]})


def test_rankjit_has_no_import_cycle():
    graph = rankjit_graph()
    found = cycles(graph)
    assert not found, "import cycles in rankjit:\n" + describe(graph, found)


def test_the_graph_sees_every_kind_of_edge():
    """The edges the cycle test relies on are found in the real source (else it could pass vacuously)."""
    graph = rankjit_graph()
    assert set(graph["rankjit.cli"]) >= {"rankjit._errors", "rankjit.io._cli", "rankjit.stats._cli",
                                         "rankjit._warmup", "rankjit._demo", "rankjit._score_log"}
    assert "rankjit.io._cli" in graph["rankjit._warmup"]  # a function-level import
    assert "rankjit.io._cli" in graph["rankjit.stats._trecdata"]  # a function-level `from ... import`
    assert "rankjit._api" in graph["rankjit.io._align"]  # `import rankjit` then `rankjit.evaluate(...)`
    assert "rankjit._errors" in graph["rankjit.stats._cli"]  # (its main() reports errors through run_parsed)
    assert graph["rankjit._errors"] == {}  # a leaf: the CLI and its commands share it
    assert {a for a, edges in graph.items() if "rankjit.cli" in edges} == {"rankjit.__main__"}


def test_command_error_is_still_rankjit_cli_s():
    """CommandError moved to the leaf rankjit._errors; ``from rankjit.cli import CommandError`` still names it."""
    import rankjit._errors
    from rankjit.cli import CommandError

    assert CommandError is rankjit._errors.CommandError
    assert rankjit._errors.REPORTED[0] is CommandError


def test_the_warm_up_runs_trec_eval_without_the_command_line(tmp_path):
    """The warm-up runs ``rankjit trec_eval`` through the command's own parser: rankjit.cli is never imported,
    and an error is still one line on stderr with exit status 1 (as ``rankjit.cli.main`` reports it)."""
    import os
    import subprocess
    import sys

    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 0\n")
    (tmp_path / "run").write_text("q Q0 a 1 2 t\nq Q0 b 2 1 t\n")
    # (the compile notices of a cold cache silenced: stderr must hold the error line alone)
    code = ("import logging, sys\n"
            "logging.getLogger('rankjit').setLevel(logging.ERROR)\n"
            "from rankjit import _warmup\n"
            "ok = _warmup._trec_eval(['-m', 'P.2', sys.argv[1], sys.argv[2]])\n"
            "bad = _warmup._trec_eval([sys.argv[1], sys.argv[3]])\n"
            "print(ok, bad, 'rankjit.cli' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]))
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "qrels"), str(tmp_path / "run"),
                           str(tmp_path / "missing")], capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].split() == ["P_2", "all", "0.5000"]
    assert lines[-1] == "0 1 False"
    # one error line, no traceback (interpreted kernels, NUMBA_DISABLE_JIT=1, may add numpy's overflow
    # warnings of the reader's wrapping hash before it)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("rankjit trec_eval: error: ")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "missing: no such file" in errors[0], proc.stderr


def _package(tmp_path, files: dict) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize("files, tables, lazy, expected", [
    pytest.param({"p/__init__.py": "", "p/a.py": "import p.b\n", "p/b.py": "from p import a\n"},
                 {}, {}, [["p.a", "p.b"]], id="module-level"),
    pytest.param({"p/__init__.py": "", "p/a.py": "def f():\n    from p.b import g\n",
                  "p/b.py": "def g():\n    from . import a\n"}, {}, {}, [["p.a", "p.b"]], id="function-level"),
    pytest.param({"p/__init__.py": "", "p/a.py": "import importlib\nimportlib.import_module('p.b')\n",
                  "p/b.py": "from .a import x\n"}, {}, {}, [["p.a", "p.b"]], id="import_module"),
    pytest.param({"p/__init__.py": "", "p/cli.py": "TABLE = {'x': 'p.cmd'}\n",
                  "p/cmd.py": "def run():\n    from p.cli import main\n"},
                 {"p.cli": ["p.cmd"]}, {}, [["p.cli", "p.cmd"]], id="dispatch-table"),
    pytest.param({"p/__init__.py": "", "p/api.py": "def f():\n    import p\n    return p.g()\n",
                  "p/impl.py": "from p.api import f\n"}, {}, {"p": {"g": "p.impl"}}, [["p.api", "p.impl"]],
                 id="lazy-name"),
    pytest.param({"p/__init__.py": "", "p/api.py": "import p\n", "p/impl.py": "from p.api import f\n"},
                 {}, {"p": {"g": "p.impl"}}, [], id="lazy-package-alone-loads-nothing"),
])
def test_cycles_are_found_and_named(tmp_path, files, tables, lazy, expected):
    root = _package(tmp_path, files)
    graph = import_graph(root, "p", lazy=lazy, tables=tables)
    found = cycles(graph)
    assert found == expected
    text = describe(graph, found)
    for component in expected:
        assert "cycle: " + ", ".join(component) in text
        assert f"e.g. {component[0]} -> {component[1]} -> {component[0]}" in text
