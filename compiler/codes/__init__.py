"""The long form of every error code: what it means, an example, its cause and its fix.

>>> from compiler.codes import explain_code
>>> explain_code("error[template.unknown_macro]").summary
'not in the catalogue (did-you-mean hint)'

The one source is the error index of the documentation (``docs/pages/reference/errors/``,
one page per family, one entry per code): the wheel ships those pages inside the package
(``compiler/_docs/errors/``); a source checkout reads them from ``docs/``. ``apc
explain-code CODE`` prints an entry, ``apc explain-code --list`` every code.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any

from compiler._records import record
from compiler.codes._pages import RawEntry, page_order, parse_page
from compiler.errors import CODES, APCError, InternalError, Severity, did_you_mean

__all__ = [
    "CodeExplanation",
    "CodePage",
    "Section",
    "code_pages",
    "explain_code",
    "normalize_code",
]

#: Where the wheel keeps the error pages, inside the package (pyproject.toml force-include).
SHIPPED = ("_docs", "errors")
#: Where a source checkout keeps them, from the repository's root.
CHECKOUT = ("docs", "pages", "reference", "errors")
#: The pages' place in the documentation site, for links (``reference/errors/template.md``).
DOCS_PATH = "reference/errors"

_WRAPPED = re.compile(r"\b(?:error|warning)\[\s*([^\]]*?)\s*\]", re.I)


@record(frozen=True, slots=True)
class Section:
    """One part of an entry: its label (``Cause``, ``Fix (the diagnostic's hint)``, ...) and
    its text. The text is for a terminal: links are their words, code spans keep their
    backticks, list items are ``- item`` lines, code blocks their lines as written."""

    label: str
    text: str


@record(frozen=True, slots=True)
class CodeExplanation:
    """A code's entry in the error index."""

    code: str
    family: str  # the code's prefix: ``template``, ``tool``, ...
    severity: Severity  # ``warning`` for a warning (even one ``--strict`` makes an error)
    severity_text: str  # as the page says it: ``error (raised as `TemplateError`)``
    summary: str  # one line: the cause (its first paragraph)
    sections: tuple[Section, ...]  # the entry's sections in order, the severity's included
    markdown: str  # the entry as written on its page, below its heading
    page: str  # its place in the documentation: ``reference/errors/template.md#template.x``

    def section(self, label: str) -> Section | None:
        """The first section whose label starts with ``label`` (``Fix`` finds
        ``Fix (the diagnostic's hint)``), or None."""
        return next((s for s in self.sections if s.label.startswith(label)), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "family": self.family,
            "severity": self.severity,
            "severityText": self.severity_text,
            "summary": self.summary,
            "sections": [{"label": s.label, "text": s.text} for s in self.sections],
            "page": self.page,
            "markdown": self.markdown,
        }


@record(frozen=True, slots=True)
class CodePage:
    """One family page of the error index: ``template``, ``policy`` (``policy.*`` and
    ``tool.*``), ...; its title, what the family covers, and its codes in page order."""

    name: str
    title: str
    description: str
    codes: tuple[CodeExplanation, ...]


def normalize_code(text: str) -> str:
    """A code as a user may paste it: ``error[template.unknown_macro]``, a whole diagnostic
    line (``t.txt:1:6: error[template.unknown_macro]: ...``), ``Template.Unknown_Macro``,
    `` `template.unknown_macro`: `` -> ``template.unknown_macro``."""
    match = _WRAPPED.search(text)
    inner = match.group(1) if match else text
    return inner.strip().strip("`:").lower()


def explain_code(code: str) -> CodeExplanation:
    """The entry of ``code`` (as :func:`normalize_code` reads it). An unknown code raises
    :class:`~compiler.errors.APCError` ``diagnostics.unknown_code``, with the closest code as
    its hint."""
    wanted = normalize_code(code)
    found = _by_code().get(wanted)
    if found is None or wanted not in CODES:
        raise APCError(
            code="diagnostics.unknown_code",
            message=f"no error code {code.strip()!r}",
            hint=_closest(wanted) or "`apc explain-code --list` lists every code",
        )
    return found


def code_pages() -> tuple[CodePage, ...]:
    """Every family page, in the error index's order, each with its codes."""
    return _pages()


def _closest(wanted: str) -> str | None:
    """Did you mean: the closest code; a bare name (``unknown_macro``) finds its family."""
    ends = [code for code in CODES if code.endswith("." + wanted)]
    if len(ends) == 1:
        return f"did you mean '{ends[0]}'?"
    return did_you_mean(wanted, CODES)


def _source() -> Traversable:
    """The error pages: the wheel's copy inside the package, else the checkout's docs/."""
    shipped = resources.files("compiler").joinpath(*SHIPPED)
    if shipped.is_dir():
        return shipped
    checkout = Path(__file__).resolve().parents[2].joinpath(*CHECKOUT)
    if checkout.is_dir():
        return checkout
    raise InternalError(
        code="internal.error_pages_missing",
        message="the error pages are not installed (compiler/_docs/errors) nor in a checkout",
        hint="reinstall agent-prompt-compiler; a wheel ships the pages",
    )


def _explanation(entry: RawEntry) -> CodeExplanation:
    found = {label: text for label, text in reversed(entry.sections)}  # the first of a label
    severity_text = found.get("Severity", "")
    cause = next((text for label, text in entry.sections if label.startswith("Cause")), "")
    stem = entry.page.removesuffix(".md")
    return CodeExplanation(
        code=entry.code,
        family=entry.code.split(".")[0],
        severity="warning" if severity_text.startswith("warning") else "error",
        severity_text=severity_text,
        summary=" ".join(cause.split("\n\n")[0].split()),
        sections=tuple(Section(label, text) for label, text in entry.sections),
        markdown=entry.markdown,
        page=f"{DOCS_PATH}/{stem}.md#{entry.code}",
    )


@functools.cache
def _pages() -> tuple[CodePage, ...]:
    source = _source()
    files = {f.name: f for f in source.iterdir() if f.name.endswith(".md")}
    index = files["index.md"].read_text(encoding="utf-8") if "index.md" in files else ""
    listed = [name for name in page_order(index) if name in files]
    rest = sorted(set(files) - set(listed) - {"index.md"})
    pages = []
    for name in [*listed, *rest]:
        raw = parse_page(name, files[name].read_text(encoding="utf-8"))
        if raw.entries:
            codes = tuple(_explanation(entry) for entry in raw.entries)
            pages.append(CodePage(name.removesuffix(".md"), raw.title, raw.description, codes))
    return tuple(pages)


@functools.cache
def _by_code() -> dict[str, CodeExplanation]:
    return {entry.code: entry for page in _pages() for entry in page.codes}
