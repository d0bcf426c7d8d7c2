"""Hover (a macro's documentation; with a run context, the component's ledger entry), go to
definition (the file of ``<<agent.file "...">>``), document symbols (a preset's entries in
prompt order; a template's macros) and code actions (the fixes diagnostics carry).

Internal: the interface is ``apc lsp``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types

import compiler
from compiler.lsp.completion import macro_doc
from compiler.lsp.diagnostics import span_range
from compiler.lsp.document import Document, MacroAt, Region, macro_at, macros
from compiler.lsp.runs import Run

#: the ledger's budget_source, as a hover says it
BUDGET_SOURCES = {
    "--budget": "the configured budget",
    "profile": "the profile's totalContextBudget",
    "window": "the model's window",
    "preset": "the preset's context size",
    "none": "no budget",
}
GLOBAL_ORDER_IDS = (100001, 100000)  # SillyTavern's prompt order: character 100001, else 100000


def _n(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (code points) of ``offset``, as the ledger's sources say."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def ledger_entry(
    run: Run, region: Region, offset: int, macro: MacroAt | None = None
) -> compiler.LedgerEntry | None:
    """The ledger entry of the component at the region's ``offset``: a file macro's is the
    file's (source ``workspace:PATH``); else the last whose source (``NAME:LINE:COL``)
    starts at or before it in this region."""
    if run.result is None:
        return None
    entries = run.result.ledger.entries
    path = file_argument(macro) if macro is not None else None
    if path is not None:
        wanted = "workspace:" + path.lstrip("./")
        return next((e for e in entries if e.source == wanted), None)
    at = _line_col(region.text, macro.start if macro is not None else offset)
    best: tuple[tuple[int, int], compiler.LedgerEntry] | None = None
    for entry in entries:
        name, _, place = entry.source.rpartition(":")
        name, _, line = name.rpartition(":")
        if name != region.name or not (line.isdigit() and place.isdigit()):
            continue
        where = (int(line), int(place))
        if where <= at and (best is None or where >= best[0]):
            best = (where, entry)
    return best[1] if best else None


def ledger_text(run: Run, entry: compiler.LedgerEntry) -> str:
    """A ledger entry in Markdown: tokens offered, granted and used, and what was cut."""
    assert run.result is not None
    ledger = run.result.ledger
    msgs = ""
    if entry.messages_offered is not None:
        msgs = f" ({entry.messages_kept}/{entry.messages_offered} messages kept)"
    action = entry.action + (f" [{entry.strategy}]" if entry.strategy else "")
    lines = [
        f"**Budget** ({ledger.provider} {ledger.model}, budget {_n(ledger.budget)} "
        f"({BUDGET_SOURCES.get(ledger.budget_source, ledger.budget_source)}); the request: "
        f"{_n(ledger.total_tokens)} tokens)",
        "",
        f"`{entry.id}` {entry.kind}: offered {_n(entry.tokens_offered)}{msgs}, granted "
        f"{_n(entry.tokens_granted)}, used {_n(entry.tokens_used)}: **{action}**",
    ]
    if entry.reason:
        lines.append(f"- why: {entry.reason}")
    budget = entry.budget
    applied = [f"own {_n(budget.own)}"]
    if entry.category:
        limit = "unlimited" if budget.category is None else _n(budget.category)
        applied.append(f"category {entry.category} {limit}")
    applied.append(f"total left {_n(budget.total)}")
    lines.append("- budgets that applied: " + ", ".join(applied))
    settings = run.settings
    lines.append(f"- run context: `{settings.context}` (from {settings.origin})")
    return "\n".join(lines)


def hover(doc: Document, offset: int, run: Run | None) -> types.Hover | None:
    """A macro's documentation, and the component's ledger entry under the run context."""
    region = doc.region_at(offset)
    if region is None:
        return None
    at = region.from_doc(offset)
    macro = macro_at(region, at)
    parts: list[str] = []
    if macro is not None:
        parts.append(macro_doc(macro.name) or f"unknown macro `{macro.name}`")
    else:
        st = st_macro_at(region.text, at)
        if st is not None:
            parts.append(st[2])
            macro = MacroAt("", st[0], st[1])
    if run is not None and run.result is not None:
        entry = ledger_entry(run, region, at, macro)
        if entry is not None:
            parts.append(ledger_text(run, entry))
    elif run is not None and run.problems:
        parts.append("**Budget**: the compile failed: " + run.problems[0].message)
    if not parts:
        return None
    start, end = (macro.start, macro.end) if macro is not None else (at, at)
    return types.Hover(
        contents=types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts)),
        range=span_range(doc, region.to_doc(start), region.to_doc(end)),
    )


_ST_MACRO = re.compile(r"\{\{([^{}]*)\}\}")


def st_macro_at(text: str, offset: int) -> tuple[int, int, str] | None:
    """The SillyTavern ``{{macro}}`` at ``offset``: its start, end and what it becomes
    (None: not one the compiler fills)."""
    known = compiler.sillytavern_macros()
    for m in _ST_MACRO.finditer(text, max(0, offset - 200), offset + 200):
        if not m.start() <= offset <= m.end():
            continue
        inner = m.group(1).strip()
        name = inner.split("::")[0].split(":")[0].split(" ")[0]
        for form, doc in known.items():
            if form == inner or form.split("::")[0].split(":")[0].split(" ")[0] == name:
                return m.start(), m.end(), f"`{{{{{form}}}}}` (SillyTavern): {doc}"
    return None


def file_argument(macro: MacroAt) -> str | None:
    """The path of an ``<<agent.file>>`` macro."""
    if macro.name != "agent.file":
        return None
    for key, value, _, _ in macro.args:
        if key in (None, "path") and value.startswith('"'):
            try:
                found = json.loads(value)
            except ValueError:
                return value.strip('"')
            return found if isinstance(found, str) else None
    return None


def definition(doc: Document, offset: int, workspace: Path | None) -> types.Location | None:
    """The workspace file an ``<<agent.file "...">>`` macro names."""
    region = doc.region_at(offset)
    macro = macro_at(region, region.from_doc(offset)) if region is not None else None
    path = file_argument(macro) if macro is not None else None
    if path is None or workspace is None:
        return None
    target = (workspace / path).resolve()
    if not target.is_file() or not target.is_relative_to(workspace.resolve()):
        return None
    zero = types.Range(types.Position(0, 0), types.Position(0, 0))
    return types.Location(uri=target.as_uri(), range=zero)


def _order(data: Any) -> list[tuple[int, bool]]:
    """A preset's entries (index into prompts[], enabled) in prompt order, then the entries
    the order does not name."""
    prompts = data.get("prompts") if isinstance(data, dict) else None
    if not isinstance(prompts, list):
        return []
    index = {p.get("identifier"): i for i, p in enumerate(prompts) if isinstance(p, dict)}
    orders = data.get("prompt_order")
    chosen: list[Any] = []
    for wanted in GLOBAL_ORDER_IDS:
        for order in orders if isinstance(orders, list) else []:
            if isinstance(order, dict) and order.get("character_id") == wanted and not chosen:
                chosen = order.get("order") or []
    out: list[tuple[int, bool]] = []
    for item in chosen if isinstance(chosen, list) else []:
        i = index.get(item.get("identifier")) if isinstance(item, dict) else None
        if i is not None and i not in {o[0] for o in out}:
            out.append((i, bool(item.get("enabled", True))))
    named = {o[0] for o in out}
    return out + [(i, not chosen) for i in range(len(prompts)) if i not in named]


def symbols(doc: Document) -> list[types.DocumentSymbol]:
    """A preset's entries by name and role in prompt order; a template's macros."""
    if doc.json is None:
        region = doc.regions[0]
        return [
            _symbol(doc, m.name, None, types.SymbolKind.Function, region, m.start, m.end)
            for m in macros(region)
        ]
    try:
        data = json.loads(doc.text)
    except (ValueError, RecursionError):  # nested past the parser: its diagnostics say so
        return []
    out: list[types.DocumentSymbol] = []
    for i, enabled in _order(data):
        prompt = data["prompts"][i]
        span = doc.json.values.get(f"prompts[{i}]")
        if span is None or not isinstance(prompt, dict):
            continue
        name = str(prompt.get("name") or prompt.get("identifier") or f"prompts[{i}]")
        role = "marker" if prompt.get("marker") else str(prompt.get("role") or "system")
        detail = role + ("" if enabled else ", disabled")
        name_at = doc.json.values.get(f"prompts[{i}].name") or span
        out.append(
            types.DocumentSymbol(
                name=name,
                detail=detail,
                kind=types.SymbolKind.Object if enabled else types.SymbolKind.Null,
                range=span_range(doc, *span),
                selection_range=span_range(doc, *name_at),
            )
        )
    return out


def _symbol(
    doc: Document,
    name: str,
    detail: str | None,
    kind: types.SymbolKind,
    region: Region,
    start: int,
    end: int,
) -> types.DocumentSymbol:
    r = span_range(doc, region.to_doc(start), region.to_doc(end))
    return types.DocumentSymbol(name=name, detail=detail, kind=kind, range=r, selection_range=r)


def code_actions(uri: str, diagnostics: Sequence[types.Diagnostic]) -> list[types.CodeAction]:
    """A quick fix for each diagnostic whose data carries one."""
    out: list[types.CodeAction] = []
    for d in diagnostics:
        fix = d.data.get("fix") if isinstance(d.data, dict) else None
        if not isinstance(fix, dict):
            continue
        r = fix["range"]
        edit_range = types.Range(
            types.Position(r["start"]["line"], r["start"]["character"]),
            types.Position(r["end"]["line"], r["end"]["character"]),
        )
        out.append(
            types.CodeAction(
                title=str(fix["title"]),
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[d],
                is_preferred=True,
                edit=types.WorkspaceEdit(
                    changes={uri: [types.TextEdit(range=edit_range, new_text=fix["newText"])]}
                ),
            )
        )
    return out
