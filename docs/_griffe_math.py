"""Griffe extension (mkdocs.yml, mkdocstrings' ``extensions``): the docstrings' Sphinx math as MathJax.

The statistics docstrings write formulas as Sphinx does, ``.. math:: <tex>`` blocks and
``:math:`<tex>``` roles, which Markdown would show as text and whose backslashes it would
eat.  Before the docstring is parsed, each block becomes a ``$$ ... $$`` display and each
role ``$...$``, which ``pymdownx.arithmatex`` (generic mode) passes to MathJax untouched.
"""
from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":math:`([^`]+)`")
_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<first>.*)$")


def sphinx_math_to_arithmatex(text: str) -> str:
    """``.. math::`` blocks (the rest of the line and the more indented lines after it) and
    ``:math:`` roles, as arithmatex's ``$$`` displays and ``$`` inline math."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        hit = _BLOCK.match(lines[i])
        if not hit:
            out.append(_ROLE.sub(lambda m: f"${m.group(1)}$", lines[i]))
            i += 1
            continue
        indent = hit.group("indent")
        body = [hit.group("first").strip()] if hit.group("first").strip() else []
        i += 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > len(indent)):
            if not lines[i].strip() and (i + 1 >= len(lines) or not lines[i + 1].startswith(indent + " ")):
                break  # a blank line followed by text at the block's own indent ends it
            if lines[i].strip():
                body.append(lines[i].strip())
            i += 1
        out.extend([f"{indent}$$", *(f"{indent}{b}" for b in body), f"{indent}$$"])
    return "\n".join(out)


class SphinxMath(griffe.Extension):
    """Rewrites the math of every docstring griffe loads (see the module docstring)."""

    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = sphinx_math_to_arithmatex(obj.docstring.value)
