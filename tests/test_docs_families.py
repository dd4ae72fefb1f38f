"""docs/metrics.md's per-family reference is the registry's (rankjit._docs_families renders it)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from rankjit import _docs_families as D
from rankjit._registry import INPUT_FAMILIES, LIST_FAMILIES

DOCS = Path(__file__).resolve().parent.parent / "docs" / "metrics.md"
HOW = "regenerate it: python -m rankjit._docs_families (then review the diff of the docs/ pages)"


@pytest.mark.parametrize("page", sorted(D.PAGES))
def test_the_page_holds_the_generated_block(page):
    text = (DOCS.parent / page).read_text()
    assert text.count(D.BEGIN) == 1 and text.count(D.END) == 1, f"docs/{page} lacks its markers; {HOW}"
    assert D.current(text) == D.render(page), f"the family reference of docs/{page} is stale: {HOW}"


def test_every_input_family_has_a_page():
    shown = [f for page in D.PAGES for f in D.families(page) if D.PAGES[page] is not None]
    assert sorted(f.name for f in shown) == sorted(f.name for f in INPUT_FAMILIES)


@pytest.mark.parametrize("family", LIST_FAMILIES + INPUT_FAMILIES, ids=lambda f: f.name)
def test_every_family_has_its_docs_text(family):
    for field in ("summary", "formula", "peers"):
        value = getattr(family, field)
        assert isinstance(value, str) and value.strip(), f"{family.name}: the registry record lacks {field}="
        assert "\n" not in value and not value.startswith(" "), f"{family.name}.{field}: one line of Markdown"
    assert "@" + "CWL" not in family.peers  # no placeholder left from the shared C/W/L text


@pytest.mark.parametrize("family", LIST_FAMILIES, ids=lambda f: f.name)
def test_each_section_says_names_parameters_and_cutoff(family):
    section = D.section(family)
    assert section.startswith(f"### {family.name}\n")
    for label in ("Formula", "rankjit", "trec_eval", "ir_measures", "Cutoff", "Parameters", "Peers"):
        assert f"- **{label}:**" in section, (family.name, label)
    for name in family.trec_eval:
        assert f"`{name}`" in section
    for param in family.params:
        assert f"`{param.name}" in section, (family.name, param.name)
    assert f"`rankjit.{family.function}`" in section


@pytest.mark.parametrize("family", INPUT_FAMILIES, ids=lambda f: f.name)
def test_each_input_section_says_names_parameters_and_cutoff(family):
    section = D.input_section(family)
    assert section.startswith(f"### {family.name}\n")
    for label in ("Formula", "rankjit", "ir_measures", "Cutoff", "Parameters", "Also", "Peers"):
        assert f"- **{label}:**" in section, (family.name, label)
    for param in family.params:
        assert f"`{param.name}" in section, (family.name, param.name)
    assert f"`{family.module}.{family.function}`" in section
    assert all(f"`{name}=`" in section for name in family.needs)


@pytest.mark.parametrize("page", sorted(D.PAGES))
def test_anchors_are_the_family_names_and_no_other_heading_takes_them(page):
    # the sections are reached as <page>#<name in lower case>: no hand-written heading may slug to one
    # (mkdocs would then suffix the second, and a link would land on the wrong section)
    text = (DOCS.parent / page).read_text()
    anchors = [D.anchor(f) for f in D.families(page)]
    assert len(set(anchors)) == len(anchors)
    others = [h for h in re.findall(r"^#+ (.+)$", text.replace(D.current(text), ""), flags=re.M)]
    slugs = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in others}
    assert not slugs & set(anchors), slugs & set(anchors)


@pytest.mark.parametrize("page", sorted(D.PAGES))
def test_the_links_of_the_docs_text_reach_a_heading_of_the_page(page):
    # mkdocs --strict checks these too; this says which record holds a broken one
    slugs = pytest.importorskip("pymdownx.slugs")  # the docs extra (mkdocs.yml's slugify)
    slug = slugs.slugify(case="lower")
    text = (DOCS.parent / page).read_text()
    headings = {slug(re.sub(r"`([^`]*)`", r"<code>\1</code>", h), "-") for h in re.findall(r"^#+ (.+)$", text, re.M)}
    for f in D.families(page):
        for target in re.findall(r"\]\(#([^)]+)\)", f.formula + f.peers):
            assert target in headings, f"{f.name}: link to #{target}, which no heading of docs/{page} has"


def test_the_check_mode_and_a_stale_page(tmp_path):
    page = tmp_path / "metrics.md"
    page.write_text(f"# x\n\n{D.BEGIN}\nold\n{D.END}\n\nafter\n")
    run = [sys.executable, "-m", "rankjit._docs_families"]
    stale = subprocess.run(run + ["--check", str(page)], capture_output=True, text=True)
    assert stale.returncode == 1 and "python -m rankjit._docs_families" in stale.stdout
    assert subprocess.run(run + [str(page)], capture_output=True, text=True).returncode == 0
    assert page.read_text() == f"# x\n\n{D.render()}\n\nafter\n"
    assert subprocess.run(run + ["--check", str(page)], capture_output=True, text=True).returncode == 0


def test_a_stale_input_page_is_rewritten_with_its_own_families(tmp_path):
    # the page's file name says which block it holds: docs/rpp.md the preferences, docs/diversity.md the rest
    page = tmp_path / "rpp.md"
    page.write_text(f"# x\n\n{D.BEGIN}\nold\n{D.END}\n")
    run = [sys.executable, "-m", "rankjit._docs_families"]
    assert subprocess.run(run + ["--check", str(page)], capture_output=True, text=True).returncode == 1
    assert subprocess.run(run + [str(page)], capture_output=True, text=True).returncode == 0
    assert page.read_text() == f"# x\n\n{D.render('rpp.md')}\n"
    assert "### RPP" in D.render("rpp.md") and "### RPP" not in D.render("diversity.md")


def test_the_generator_imports_the_registry_alone():
    code = ("import sys\nimport rankjit._docs_families\n"
            "print(sorted(m for m in ('numpy', 'numba', 'rankjit._api', 'rankjit._measures') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
