"""Every relative link in README.md and the documentation pages (docs/pages) resolves: its
file exists and its anchor is a heading there. The anchors are computed as the site's
Markdown (Python-Markdown's toc, with attr_list ids) computes them, without mkdocs."""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "pages"
SOURCES = [ROOT / "README.md", *sorted(PAGES.rglob("*.md"))]

LINK_RE = re.compile(r"(?<!!)\[(?:[^\]`]|`[^`]*`)+\]\(([^)\s]+)\)")
HEADING_RE = re.compile(r"^#{1,6} (.*?)\s*$")
ATTR_ID_RE = re.compile(r"\s*\{:?\s*#([^\s}]+)[^}]*\}\s*$")


def _prose(text: str) -> list[str]:
    """The lines outside fenced code blocks, inline code spans blanked out."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slugify(heading: str) -> str:
    """Python-Markdown's toc slug of a heading's text (markup stripped)."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*_]{1,2}([^*_]+)[*_]{1,2}", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@cache
def anchors(path: Path) -> frozenset[str]:
    """The ids of a page's headings: an attr_list `{#id}`, else the toc slug (a repeated
    slug gets `_1`, `_2`, ... as the toc extension numbers it)."""
    found: set[str] = set()
    for line in _prose(path.read_text(encoding="utf-8")):
        match = HEADING_RE.match(line)
        if not match:
            continue
        text = match.group(1)
        explicit = ATTR_ID_RE.search(text)
        if explicit:
            found.add(explicit.group(1))
            continue
        slug, n = slugify(text), 1
        while slug in found:
            slug = f"{slugify(text)}_{n}"
            n += 1
        found.add(slug)
    return frozenset(found)


def links(path: Path) -> list[str]:
    out: list[str] = []
    for line in _prose(path.read_text(encoding="utf-8")):
        line = re.sub(r"``[^`]*``|`[^`]*`", lambda m: "x" * len(m.group(0)), line)
        out.extend(LINK_RE.findall(line))
    return out


def test_the_link_checker_sees_links_and_anchors() -> None:
    assert slugify("The run context (RUN.json)") == "the-run-context-runjson"
    assert slugify("Benchmarking budgets (apc bench)") == "benchmarking-budgets-apc-bench"
    assert "template.unknown_macro" in anchors(PAGES / "reference" / "errors" / "template.md")
    assert len(links(ROOT / "README.md")) >= 10
    assert sum(len(links(page)) for page in SOURCES) > 100


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(source: Path) -> None:
    broken = []
    for link in links(source):
        if re.match(r"^[a-z][a-z0-9+.-]*:", link):  # https:, mailto:: not relative
            continue
        target, _, anchor = link.partition("#")
        path = (source.parent / target).resolve() if target else source
        if not path.is_file():
            broken.append(f"{link}: no file {path}")
            continue
        if source.is_relative_to(PAGES) and not path.is_relative_to(PAGES):
            broken.append(f"{link}: outside docs/pages (the site has no such page)")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{link}: no heading #{anchor} in {path.name}")
    assert broken == []


def test_the_docs_describe_the_product_as_it_is() -> None:
    """No issue numbers or session history in the README or the pages."""
    history = re.compile(r"\bissue #?\d+|\b\d+(?:st|nd|rd|th) session\b", re.I)
    found = [
        f"{source.relative_to(ROOT)}: {match.group(0)}"
        for source in SOURCES
        for match in history.finditer(source.read_text(encoding="utf-8"))
    ]
    assert found == []
