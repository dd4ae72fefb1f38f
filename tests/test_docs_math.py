"""docs/_griffe_math.py: the docstrings' Sphinx math (``.. math::``, ``:math:``) as arithmatex's ``$$`` / ``$``."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytest.importorskip("griffe", reason="the docs extra (griffe) is not installed")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
from _griffe_math import sphinx_math_to_arithmatex as convert  # noqa: E402


def test_a_block_on_its_line_and_the_indented_lines_after_it():
    text = "Paired t-test.\n\n    .. math:: t = \\bar z / s,\n              p = 2\\,P(T)\n\n    with s the sd."
    assert convert(text) == "Paired t-test.\n\n    $$\n    t = \\bar z / s,\n    p = 2\\,P(T)\n    $$\n\n    with s the sd."


def test_a_block_whose_formula_starts_on_the_next_line():
    assert convert(".. math::\n\n    x^2\n\nafter") == "$$\nx^2\n$$\n\nafter"


def test_roles_become_inline_math_and_other_text_is_kept():
    assert convert("with :math:`\\sigma^2_s` and :math:`n` topics; ``code`` stays") == (
        "with $\\sigma^2_s$ and $n$ topics; ``code`` stays")
    assert convert("no math here\n  indented") == "no math here\n  indented"


def test_no_docstring_of_the_package_keeps_sphinx_math():
    # every docstring that holds math converts to balanced $$ blocks with no Sphinx markup left
    seen = 0
    for path in (ROOT / "src" / "rankjit").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and ("math::" in doc or ":math:" in doc):
                    seen += 1
                    out = convert(doc)
                    assert "math::" not in out and ":math:" not in out, (path, node)
                    assert sum(line.strip() == "$$" for line in out.splitlines()) % 2 == 0, (path, node)
    assert seen >= 10  # the statistics docstrings
