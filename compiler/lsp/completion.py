"""Completion inside template text: ``<<agent.*>>`` macro names and their arguments from the
macro catalogue, argument values (strategies, modes, fields, true/false), workspace paths
for ``<<agent.file "...">>``, skill names for ``<<agent.skill "...">>``, SillyTavern
``{{macros}}``, and the profile's tool names in plain text (with a run context).

Internal: the interface is ``apc lsp``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

import compiler

MAX_PATHS = 2000
_OPEN = re.compile(r"<<(agent(?:\.[a-z0-9_]*)*|a[a-z]*)?\Z")
_STRING_BODY = r"(?:[^\"\\\n]|\\.)*"
_IN_MACRO = re.compile(
    rf"<<(agent(?:\.[a-z_][a-z0-9_]*)+)\s((?:[^<>{{}}\"]|\"{_STRING_BODY}\")*(?:\"{_STRING_BODY})?)\Z"
)
_STRING = re.compile(rf"\"({_STRING_BODY})\Z")
_KEY_VALUE = re.compile(r"([a-z_][a-z0-9_]*)=([A-Za-z0-9_\"]*)\Z")
_ST_OPEN = re.compile(r"\{\{([A-Za-z0-9_:/ +-]*)\Z")
_WORD = re.compile(r"[A-Za-z0-9_.]+\Z")


@dataclass
class Sources:
    """What completion draws on besides the catalogues: the run's tools and skills and the
    workspace the document's file macros read."""

    tools: list[str]
    skills: list[str]
    workspace: Path | None
    visible_roots: tuple[str, ...] | None = None  # the profile's (None: every folder)
    priorities: tuple[int, ...] = (0,)  # the priority levels the document uses (and 0)


def _doc(spec: compiler.MacroSpec) -> str:
    lines = [f"`<<{spec.name}>>`: {spec.summary} ({spec.kind.value})", ""]
    for param in spec.params.values():
        what = "|".join(param.choices) if param.choices else param.type
        notes = [
            n
            for n, on in (("positional", param in spec.positional), ("required", param.required))
            if on
        ]
        extra = f" ({', '.join(notes)})" if notes else ""
        lines.append(f"- `{param.name}`{extra}: {what}" + (f": {param.doc}" if param.doc else ""))
    return "\n".join(lines).rstrip()


def macro_doc(name: str) -> str | None:
    """A macro's documentation in Markdown (None: no such macro)."""
    spec = compiler.macro_catalogue().get(name)
    return _doc(spec) if spec is not None else None


def _item(
    label: str, kind: types.CompletionItemKind, doc: str = "", detail: str | None = None
) -> types.CompletionItem:
    return types.CompletionItem(
        label=label,
        kind=kind,
        detail=detail,
        documentation=types.MarkupContent(types.MarkupKind.Markdown, doc) if doc else None,
    )


Items = tuple[list[types.CompletionItem], int]
"""Completions, and how many characters before the cursor each replaces."""


def complete(before: str, sources: Sources) -> Items:
    """The completions for a cursor after ``before`` (the region's text up to it)."""
    catalogue = compiler.macro_catalogue()
    opened = _OPEN.search(before)
    if opened is not None:
        items = [
            _item(name, types.CompletionItemKind.Function, _doc(spec), spec.summary)
            for name, spec in catalogue.items()
        ]
        return items, len(opened.group(1) or "")
    inside = _IN_MACRO.search(before)
    if inside is not None:
        spec = catalogue.get(inside.group(1))
        return _arguments(spec, inside.group(2), sources) if spec is not None else ([], 0)
    st = _ST_OPEN.search(before)
    if st is not None:
        items = [
            _item(name, types.CompletionItemKind.Variable, doc, doc)
            for name, doc in compiler.sillytavern_macros().items()
        ]
        return items, len(st.group(1))
    word = _WORD.search(before)
    if word is not None and sources.tools:
        items = [
            _item(name, types.CompletionItemKind.Reference, detail="a tool of the profile")
            for name in sources.tools
            if name.startswith(word.group())
        ]
        return items, len(word.group())
    return [], 0


def _arguments(spec: compiler.MacroSpec, args: str, sources: Sources) -> Items:
    """Inside a macro's arguments: a string's values, a key's values, else the keys."""
    string = _STRING.search(args)
    if string is not None:
        typed = string.group(1)
        key = re.search(r"([a-z_][a-z0-9_]*)=\Z", args[: string.start()])
        name = key.group(1) if key else None
        param = spec.params.get(name) if name else None
        if param is not None and param.choices:
            kind = types.CompletionItemKind.EnumMember
            return [_item(v, kind, param.doc) for v in param.choices], len(typed)
        if spec.name == "agent.file" and name in (None, "path"):
            return _paths(typed, sources.workspace, sources.visible_roots), len(typed)
        if spec.name == "agent.skill" and name in (None, "name"):
            kind = types.CompletionItemKind.Reference
            return [_item(n, kind) for n in sources.skills], len(typed)
        return [], 0
    pair = _KEY_VALUE.search(args)
    if pair is not None:
        param = spec.params.get(pair.group(1))
        if param is None:
            return [], 0
        values = param.choices or (("true", "false") if param.type == "bool" else ())
        if param.name == "priority":  # the levels this document already uses
            values = tuple(str(n) for n in sources.priorities)
        items = [_item(v, types.CompletionItemKind.EnumMember, param.doc) for v in values]
        return items, len(pair.group(2))
    given = set(re.findall(r"([a-z_][a-z0-9_]*)=", args))
    items = [
        types.CompletionItem(
            label=f"{p.name}=",
            kind=types.CompletionItemKind.Property,
            detail=f"{p.type}: {p.doc}" if p.doc else p.type,
        )
        for p in spec.params.values()
        if p.name not in given and p not in spec.positional
    ]
    partial = re.search(r"[a-z_]*\Z", args)
    return items, len(partial.group()) if partial else 0


def _paths(
    typed: str, root: Path | None, visible: tuple[str, ...] | None
) -> list[types.CompletionItem]:
    """The workspace's files (relative paths, ``/``-separated) under the typed folder, in
    the profile's visible roots; nothing for a folder outside the workspace (``..``, an
    absolute path, a link that leads out)."""
    if root is None or not root.is_dir():
        return []
    folder = typed.rpartition("/")[0]
    base = (root / folder) if folder else root
    if folder and (".." in Path(folder).parts or not base.resolve().is_relative_to(root.resolve())):
        return []
    out: list[types.CompletionItem] = []
    for top, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(top, name).relative_to(root).as_posix()
            if visible is not None and path.partition("/")[0] not in visible:
                continue
            out.append(_item(path, types.CompletionItemKind.File))
            if len(out) >= MAX_PATHS:
                return out
    return out


def priorities(text: str) -> tuple[int, ...]:
    """The ``priority=N`` levels ``text`` uses, and the default 0, from the highest."""
    found = {int(n) for n in re.findall(r"\bpriority=(-?[0-9]{1,9})\b", text)}
    return tuple(sorted(found | {0}, reverse=True))
