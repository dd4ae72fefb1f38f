"""MkDocs hook (mkdocs.yml ``hooks:``): render the docstrings' Sphinx roles as code.

The docstrings are numpydoc, written for Sphinx as much as for ``help()``: they name other
objects as ``:func:`evaluate```, ``:class:`TestResult```, ``:mod:`rankjit.io```.
mkdocstrings renders Markdown, where the role stays as text in front of the code span
(``:func:<code>evaluate</code>``); this hook drops the role and keeps the code span.
"""
from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|obj|exc):(?=<code>)")


def on_page_content(html, **kwargs):
    return _ROLE.sub("", html)
