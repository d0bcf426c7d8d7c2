"""``apc check``'s diagnostics of a document as LSP diagnostics: each with its exact range
(a preset entry's mapped back through the JSON string), its code, its hint, a link to the
code's documentation page, and the fix a code action offers (in ``data``).

Internal: the interface is ``apc lsp``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lsprotocol import types

import compiler
from compiler.errors import APCError, Diagnostic
from compiler.lsp.document import Document, Region

SOURCE = "apc"
_QUOTED = re.compile(r"'([^']*)'")
_DID_YOU_MEAN = re.compile(r"did you mean '([^']*)'\?")
_ANCHOR = re.compile(r"\{#([a-z_]+\.[a-z_]+)\}")
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "note": types.DiagnosticSeverity.Information,
}


def docs_links(package: Path) -> dict[str, str]:
    """Error code -> the ``file://`` URI of its entry on the error pages, when the docs
    directory is beside the package (a checkout or an sdist); else empty."""
    pages = package.parent / "docs" / "pages" / "reference" / "errors"
    links: dict[str, str] = {}
    if not pages.is_dir():
        return links
    for page in sorted(pages.glob("*.md")):
        for code in _ANCHOR.findall(page.read_text(encoding="utf-8")):
            links.setdefault(code, f"{page.resolve().as_uri()}#{code}")
    return links


def check(doc: Document) -> list[Diagnostic]:
    """Every error and warning ``apc check`` reports for the document's text."""
    try:
        found = compiler.check_string(doc.text, name=doc.label, kind=doc.kind)  # type: ignore[arg-type]
    except APCError as exc:
        return list(exc.diagnostics)
    return list(found.warnings)


def where(doc: Document, d: Diagnostic) -> tuple[Region | None, int, int]:
    """The region a diagnostic is in (None: the document's JSON), and its document offsets."""
    if d.span is not None:
        if d.span.file == doc.label:
            region = doc.regions[0] if doc.kind == "template" else None
            return region, d.span.start, d.span.end
        if d.span.file.startswith(doc.label + "#"):
            region = doc.region(d.span.file[len(doc.label) + 1 :])
            if region is not None:
                return region, region.to_doc(d.span.start), region.to_doc(d.span.end)
    file = d.file or ""
    path = file[len(doc.label) + 1 :] if file.startswith(doc.label + "#") else d.path
    if doc.json is not None and path:
        found = doc.json.locate(path)
        if found is not None:
            return None, found[0], found[1]
    return None, 0, 0


def to_lsp(doc: Document, d: Diagnostic, links: dict[str, str]) -> types.Diagnostic:
    """One diagnostic in the protocol's form."""
    region, start, end = where(doc, d)
    message = d.message if d.hint is None else f"{d.message}\nhint: {d.hint}"
    href = links.get(d.code)
    data: dict[str, Any] = {"code": d.code, "hint": d.hint}
    fix = _fix(doc, region, d) if region is not None and d.span is not None else None
    if fix is not None:
        data["fix"] = fix
    return types.Diagnostic(
        range=span_range(doc, start, end),
        message=message,
        severity=_SEVERITY.get(d.severity, types.DiagnosticSeverity.Information),
        code=d.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data=data,
    )


def span_range(doc: Document, start: int, end: int) -> types.Range:
    (l1, c1), (l2, c2) = doc.position(start), doc.position(end)
    return types.Range(types.Position(l1, c1), types.Position(l2, c2))


def _replace(
    doc: Document, region: Region, start: int, end: int, new: str, title: str
) -> dict[str, Any]:
    """A fix: replace the region's text from ``start`` to ``end`` with ``new`` (escaped for
    a JSON string in a preset)."""
    text = new if region.string is None else json.dumps(new, ensure_ascii=False)[1:-1]
    r = span_range(doc, region.to_doc(start), region.to_doc(end))
    return {"title": title, "range": _range_json(r), "newText": text}


def _range_json(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def _fix(doc: Document, region: Region, d: Diagnostic) -> dict[str, Any] | None:
    """The edit a diagnostic's hint suggests: a did-you-mean name or value, the rewrite of
    a legacy ``{{agent.*}}`` macro."""
    assert d.span is not None
    start, end, text = d.span.start, d.span.end, region.text
    hint = d.hint or ""
    if d.code == "template.legacy_agent_macro" and hint.startswith("write <<"):
        new = hint[len("write ") :]
        return _replace(doc, region, start, end, new, f"Rewrite as {new}")
    suggestion = _DID_YOU_MEAN.search(hint)
    quoted = _QUOTED.search(d.message)
    if suggestion is None:
        return None
    new = suggestion.group(1)
    title = f"Change to '{new}'"
    if d.code == "template.unknown_macro" and quoted:
        name = quoted.group(1)
        if text.startswith("<<" + name, start):
            return _replace(doc, region, start + 2, start + 2 + len(name), new, title)
    if d.code == "template.unknown_argument" and quoted:
        key = quoted.group(1)
        if text.startswith(key, start):
            return _replace(doc, region, start, start + len(key), new, title)
    if d.code == "template.bad_argument":  # key=value or key="value": the value
        key, equals, value = text[start:end].partition("=")
        if not equals or not value:
            return None
        at = start + len(key) + 1
        if len(value) >= 2 and value[0] == value[-1] == '"':
            at, value = at + 1, value[1:-1]
        return _replace(doc, region, at, at + len(value), new, title)
    return None
