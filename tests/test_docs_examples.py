"""Every ```python block of README.md and docs/ runs, as a reader would run it.

One test per block, named by its file and the line of its opening fence
(``docs/io.md:10``).  The blocks of a page run in order in one namespace, so a block
may use what an earlier block of its page defined; a test that is selected alone
(``-k``) first runs the earlier blocks of its page.  Each page runs in a fresh
directory of its own, next to a link ``../shared`` to the project's shared data (when
that folder exists), so that examples may write files and read ``../shared/...`` as
they would from the repository root.

A block that cannot run here says so in an HTML comment on the lines just above its
fence; several directives may share one comment, separated by ``;``:

``<!-- docs-test: skip REASON -->``
    never run; reported as skipped with REASON.
``<!-- docs-test: needs-data PATH -->``
    skipped (with the path in the reason) when PATH, relative to the repository root,
    does not exist, e.g. ``../shared/data/web2012``.
``<!-- docs-test: needs-module NAME -->``
    skipped when the module NAME cannot be imported (an optional dependency outside
    the test extras, e.g. torch).
``<!-- docs-test: slow -->``
    marked ``slow`` (left out of the NUMBA_DISABLE_JIT pass).

A block with any of these directives runs in a copy of its page's namespace: the
blocks after it must not depend on it, so that they run the same whether it was
skipped or not.

Printed output shown in the page is checked: comment lines right under a ``print(...)``
statement (``# ...`` on lines of their own) are what that call prints, compared like a
doctest with ELLIPSIS and NORMALIZE_WHITESPACE (``0.333...`` matches ``0.3333333``).
Trailing comments on a line (``x  # equal``) are prose and are not checked.

Code fences in the docs must name their language (```python, ```bash, ```text, ...), so
that no Python example hides in an unlabelled fence.
"""
from __future__ import annotations

import ast
import contextlib
import doctest
import importlib
import io
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:(?P<body>.*?)-->\s*$")
_PYTHON = {"python", "py", "python3"}
_DIRECTIVE_NAMES = {"skip", "needs-data", "needs-module", "slow"}


def _rel(path):
    """A page's path as the ids show it: relative to the repository root."""
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return path.name


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    info: str
    source: str
    directives: list = field(default_factory=list)  # [(name, argument)]

    @property
    def id(self):
        return f"{_rel(self.page)}:{self.line}"

    @property
    def isolated(self):
        return bool(self.directives)


def _directives(lines, fence_index, where):
    """Directives from the ``<!-- docs-test: ... -->`` lines just above a fence."""
    found = []
    i = fence_index - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    while i >= 0 and (m := _DIRECTIVE.match(lines[i])):
        for part in m["body"].split(";"):
            name, _, arg = part.strip().partition(" ")
            if name not in _DIRECTIVE_NAMES:
                raise ValueError(f"{where}: unknown docs-test directive {name!r} (known: {sorted(_DIRECTIVE_NAMES)})")
            if name in ("skip", "needs-data", "needs-module") and not arg.strip():
                raise ValueError(f"{where}: docs-test directive {name!r} needs an argument")
            found.append((name, arg.strip()))
        i -= 1
    return found


def parse_blocks(page):
    """Every fenced block of a markdown file: (opening line, info string, source, directives)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m["indent"]), m["fence"], m["info"].strip()
        end = i + 1
        while end < len(lines):
            c = _FENCE.match(lines[end])
            if c and c["fence"][0] == fence[0] and len(c["fence"]) >= len(fence) and not c["info"].strip():
                break
            end += 1
        body = [ln[indent:] if ln[:indent].strip() == "" else ln for ln in lines[i + 1:end]]
        where = f"{_rel(page)}:{i + 1}"
        blocks.append(Block(page, i + 1, info, "\n".join(body) + "\n", _directives(lines, i, where)))
        i = end + 1
    return blocks


def _python_blocks():
    return [b for page in PAGES for b in parse_blocks(page) if b.info.split()[:1] and b.info.split()[0] in _PYTHON]


BLOCKS = _python_blocks()


def _param(block):
    marks = [pytest.mark.slow] if ("slow", "") in block.directives else []
    return pytest.param(block, id=block.id, marks=marks)


# ---------------------------------------------------------------------------- running

class _Page:
    """The namespace and working directory of one page, and how far its blocks ran."""

    def __init__(self, workdir):
        self.namespace = {"__name__": "__docs_example__"}
        self.workdir = workdir
        self.done = set()  # ids of the blocks run (or skipped) in this namespace
        self.broken = None  # id of a block that failed: the later ones cannot run


_PAGES: dict = {}


def _page(block, tmp_path_factory):
    state = _PAGES.get(block.page)
    if state is None:
        base = tmp_path_factory.mktemp(re.sub(r"\W", "_", block.page.stem))
        if SHARED.is_dir():
            (base / "shared").symlink_to(SHARED, target_is_directory=True)
        workdir = base / ROOT.name
        workdir.mkdir()
        state = _PAGES[block.page] = _Page(workdir)
    return state


def _skip_reason(block):
    """Why the block does not run here, or None."""
    for name, arg in block.directives:
        if name == "skip":
            return arg
        if name == "needs-data" and not (ROOT / arg).exists():
            return f"needs {arg} (absent here)"
        if name == "needs-module":
            try:
                importlib.import_module(arg)
            except ImportError as exc:
                return f"needs the module {arg} ({exc})"
    return None


def _expected_output(lines, stmt, next_line):
    """The comment lines right under a print() statement, as the text it prints; or None."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "print"):
        return None
    want = []
    for ln in lines[stmt.end_lineno:next_line - 1]:
        s = ln.strip()
        if not s.startswith("#"):
            break
        want.append(s[1:].removeprefix(" "))
    return "\n".join(want) + "\n" if want else None


_CHECKER = doctest.OutputChecker()
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def run_block(block, namespace):
    """Run a block statement by statement in ``namespace``; check the printed output shown."""
    tree = ast.parse(block.source, filename=block.id)
    lines = block.source.split("\n")
    for k, stmt in enumerate(tree.body):
        next_line = tree.body[k + 1].lineno if k + 1 < len(tree.body) else len(lines) + 1
        want = _expected_output(lines, stmt, next_line)
        ast.increment_lineno(stmt, block.line)  # tracebacks then show the markdown file's own lines
        code = compile(ast.Module(body=[stmt], type_ignores=[]), str(block.page), "exec")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, namespace)
        got = out.getvalue()
        print(got, end="")
        if want is not None and not _CHECKER.check_output(want, got, _FLAGS):
            fence_line = stmt.lineno
            raise AssertionError(
                f"{_rel(block.page)}:{fence_line}: the comment under this print() shows\n"
                f"{want}but it prints\n{got}"
                "(fix the comment, or make it a trailing comment if it is not output)"
            )


def _run_in_page(block, state):
    reason = _skip_reason(block)
    if reason is not None:
        state.done.add(block.id)
        pytest.skip(f"{block.id}: {reason}")
    namespace = dict(state.namespace) if block.isolated else state.namespace
    old = os.getcwd()
    logger = logging.getLogger("rankjit")  # docs/compilation.md silences it: not for the tests after this one
    level = logger.level
    os.chdir(state.workdir)
    try:
        run_block(block, namespace)
    except BaseException:
        if not block.isolated:
            state.broken = block.id
        raise
    finally:
        os.chdir(old)
        logger.setLevel(level)
        state.done.add(block.id)


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_example(block, tmp_path_factory):
    state = _page(block, tmp_path_factory)
    if block.id in state.done:  # already run for a later block (tests run out of order)
        if state.broken == block.id:
            pytest.fail(f"{block.id} failed when a later block of its page needed it")
        return
    for earlier in BLOCKS:  # the earlier blocks of the page that this one may build on
        if earlier.page != block.page or earlier.line >= block.line:
            continue
        if earlier.id in state.done or earlier.isolated:
            continue
        if state.broken is not None:
            break
        try:  # selected alone (-k) or out of order: this test runs the block, and fails with it
            _run_in_page(earlier, state)
        except Exception as exc:
            pytest.fail(f"an earlier block of the page failed: {earlier.id}: {exc!r}")
    if state.broken is not None:  # that block's own test failed: one failure per cause
        pytest.skip(f"an earlier block of this page failed ({state.broken}); this one builds on it")
    _run_in_page(block, state)


# ---------------------------------------------------------------------------- the markdown itself

def test_blocks_found():
    """The collector sees the examples (a change of fence syntax must not empty this file's tests)."""
    assert len(BLOCKS) >= 25
    assert {b.page.name for b in BLOCKS} >= {"README.md", "io.md", "metrics.md", "meta-evaluation.md"}


@pytest.mark.parametrize("page", PAGES, ids=[_rel(p) for p in PAGES])
def test_fences_name_their_language(page):
    """An unlabelled fence could hide a Python example from the tests: say ```text for output."""
    bare = [b.id for b in parse_blocks(page) if not b.info]
    assert not bare, f"fences without a language (use ```text for output, ```bash for commands): {bare}"


@pytest.mark.parametrize("page", PAGES, ids=[_rel(p) for p in PAGES])
def test_directives_precede_python_blocks(page):
    """A docs-test directive above a non-Python fence (or nowhere near one) does nothing: refuse it."""
    lines = page.read_text(encoding="utf-8").split("\n")
    used = set()
    for b in parse_blocks(page):
        i = b.line - 2
        while i >= 0 and not lines[i].strip():
            i -= 1
        while i >= 0 and _DIRECTIVE.match(lines[i]):
            if b.info.split()[:1] and b.info.split()[0] in _PYTHON:
                used.add(i)
            i -= 1
    stray = [f"{page.name}:{i + 1}" for i, ln in enumerate(lines) if _DIRECTIVE.match(ln) and i not in used]
    assert not stray, f"docs-test directives not right above a ```python fence: {stray}"


def test_parser_on_a_sample(tmp_path):
    """The collector's rules on a small page: directives, languages, indented fences, output comments."""
    page = tmp_path / "sample.md"
    page.write_text(
        "Text\n\n"
        "<!-- docs-test: needs-data ../nowhere; slow -->\n"
        "```python\nx = 1\n```\n\n"
        "* item\n\n  ```python\n  y = 2\n  ```\n\n"
        "```text\nout\n```\n",
        encoding="utf-8",
    )
    blocks = parse_blocks(page)
    assert [(b.line, b.info, b.source) for b in blocks] == [
        (4, "python", "x = 1\n"), (10, "python", "y = 2\n"), (14, "text", "out\n")]
    assert blocks[0].directives == [("needs-data", "../nowhere"), ("slow", "")]
    assert blocks[1].directives == [] and not blocks[1].isolated

    ok = Block(page, 1, "python", "print(1 / 3)\n# 0.333...\nprint('a  b')\n# a b\n")
    run_block(ok, {})
    bad = Block(page, 1, "python", "print(2)\n# 3\n")
    with pytest.raises(AssertionError, match="prints"):
        run_block(bad, {})


def _api_identifiers():
    """``{identifier: whole}`` of the ``::: identifier`` lines of docs/api/*.md (whole: all members shown)."""
    found = {}
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        lines = page.read_text(encoding="utf-8").split("\n")
        for i, ln in enumerate(lines):
            if ln.startswith("::: "):
                options = []
                for opt in lines[i + 1:]:
                    if not opt.startswith("    "):
                        break
                    options.append(opt.strip())
                found[ln[4:].strip()] = "members: false" not in options
    return found


@pytest.mark.parametrize("package", ["rankjit", "rankjit.io", "rankjit.stats"])
def test_api_reference_lists_every_public_name(package):
    """The lazy packages' names are listed by hand in docs/api/ (griffe cannot follow the loader): none is missing."""
    public = importlib.import_module(package)._PUBLIC  # name -> module, or (module, name there)
    shown = _api_identifiers()
    missing = []
    for name, where in public.items():
        module, attr = where if isinstance(where, tuple) else (where, name)
        if not (shown.get(module) or f"{module}.{attr}" in shown):
            missing.append(f"{package}.{name} ({module}.{attr})")
    assert not missing, f"public names without an entry in docs/api/: {missing}"
