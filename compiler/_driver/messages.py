"""The request's messages as a compile laid them out, each with its token count and the
components (and their budget categories) its text came from: what ``apc explain --format
html`` draws beside the ledger.

Internal: the public name is :func:`compiler.request_messages`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from compiler._base.frame import (
    MESSAGE_KINDS,
    MESSAGE_NAME,
    SQUASH_SYSTEM,
    Component,
    ComponentKind,
    Message,
)
from compiler._base.tokens import counter_for
from compiler.providers import get_dialect

if TYPE_CHECKING:
    from compiler._driver.api import CompileResult

#: The most characters of a message's text a row carries (the rest is counted in ``chars``).
MAX_PREVIEW = 1200


def _text(text: str, edges: bool) -> str:
    return text if edges else text.strip()


def request_messages(result: CompileResult) -> dict[str, Any]:
    """The fitted frame's messages in request order, before any provider-specific merging:
    ``{"squashed": bool, "messages": [...]}``. Each message: ``role``, ``name`` (or None),
    ``tokens`` (what it adds to the request's count, framing included, counted as the fit
    counted), ``chars``, ``text`` (at most :data:`MAX_PREVIEW` characters of it) and
    ``parts``: the components its text came from, ``{"id", "category", "tokens"}``, where
    ``category`` is the budget category (a component in none: its kind) and ``tokens`` the
    ledger's ``tokensUsed`` of an inline component (None for one chat message of a history:
    the message's own ``tokens``). The tool definitions, when offered, are a last message of
    role ``tools``. ``squashed``: the request merges runs of system messages into one
    (SillyTavern's ``squash_system_messages``); they are listed apart here, as counted."""
    frame, ledger = result.frame, result.ledger
    dialect = get_dialect(ledger.provider)
    counter = dialect.estimating(counter_for(ledger.encoding))
    entries = {e.id: e for e in ledger.entries}

    def category(comp: Component) -> str:
        entry = entries.get(comp.id)
        return (entry.category if entry is not None else None) or str(comp.kind.value)

    def used(comp: Component) -> int | None:
        entry = entries.get(comp.id)
        return entry.tokens_used if entry is not None else None

    edges = bool(frame.metadata.get("asWritten"))
    rows: list[tuple[Message, list[dict[str, Any]]]] = []
    tools: list[Component] = []
    group: tuple[int, str] | None = None
    texts: list[str] = []
    parts: list[dict[str, Any]] = []
    name: str | None = None

    def flush() -> None:
        nonlocal group, name
        text = _text("".join(texts), edges)
        if group is not None and text.strip():
            msg: Message = {"role": group[1], "content": text}  # type: ignore[typeddict-item]
            if name:
                msg["name"] = name
            rows.append((msg, list(parts)))
        group, name = None, None
        texts.clear()
        parts.clear()

    for comp in frame.components:
        if comp.kind in MESSAGE_KINDS:
            flush()
            for m in comp.messages or ():
                cat = m.get("category") or category(comp)
                rows.append((m, [{"id": comp.id, "category": cat, "tokens": None}]))
        elif comp.kind == ComponentKind.TOOL_DEFINITIONS:
            if comp.tools:
                tools.append(comp)
        elif comp.inline_content:
            if (comp.group, comp.role) != group:
                flush()
                group = (comp.group, comp.role)
                name = comp.metadata.get(MESSAGE_NAME)
            texts.append(comp.inline_content)
            parts.append({"id": comp.id, "category": category(comp), "tokens": used(comp)})
    flush()
    sent = [_sent(m) for m, _ in rows]
    counts = dialect.messages_tokens(sent, counter)
    out = [_row(m, p, n) for (m, p), n in zip(rows, counts, strict=True)]
    for comp in tools:
        n = used(comp) or 0
        part: dict[str, Any] = {"id": comp.id, "category": category(comp), "tokens": n}
        names = ", ".join(t["name"] for t in comp.tools or ())
        out.append(_row({"role": "tools", "content": names}, [part], n))  # type: ignore[typeddict-item]
    return {"squashed": bool(frame.metadata.get(SQUASH_SYSTEM)), "messages": out}


def _sent(message: Message) -> Message:
    """The message as lowered: the keys the frame keeps for itself left out."""
    drop = ("origin", "at", "category", "spans")
    return {k: v for k, v in message.items() if k not in drop}  # type: ignore[return-value]


def _row(message: Message, parts: list[dict[str, Any]], tokens: int) -> dict[str, Any]:
    content = message.get("content") or ""
    calls = message.get("toolCalls")
    if calls:
        content += "".join(
            f"\n→ {c['name']}({json.dumps(c['arguments'], ensure_ascii=False)})" for c in calls
        )
    return {
        "role": message["role"],
        "name": message.get("name"),
        "tokens": tokens,
        "chars": len(content),
        "text": content[:MAX_PREVIEW],
        "parts": parts,
    }
