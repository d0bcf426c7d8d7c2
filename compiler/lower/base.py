"""Finding a provider's dialect, and the provider-neutral message layout every dialect lowers.

Internal: the API is :mod:`compiler.lower`.

The :class:`~compiler.dialect.Dialect` interface itself (lowering, an exact cost model, a
shape check) is :mod:`compiler.dialect`.
"""

from __future__ import annotations

import importlib

from compiler.dialect import Dialect, ModelRequest
from compiler.errors import LoweringError, did_you_mean
from compiler.frame import ContextFrame, Message, ToolSpec

__all__ = ["PROVIDERS", "Dialect", "ModelRequest", "get_dialect", "layout"]

#: provider name -> module under compiler.lower that defines ``DIALECT``.
PROVIDERS: dict[str, str] = {
    "openai": "openai_chat",
    "openai-chat": "openai_chat",
    "openai-responses": "openai_responses",
    "gemini": "gemini",
    "anthropic": "anthropic",
}


def get_dialect(provider: str) -> Dialect:
    """The dialect of a provider name, or ``lower.unknown_provider`` with a did-you-mean."""
    module = PROVIDERS.get(provider)
    if module is None:
        raise LoweringError(
            code="lower.unknown_provider",
            message=f"unknown provider '{provider}'",
            hint=did_you_mean(provider, PROVIDERS.keys()) or f"known: {', '.join(PROVIDERS)}",
        )
    dialect: Dialect = importlib.import_module(f"compiler.lower.{module}").DIALECT
    return dialect


def layout(frame: ContextFrame) -> tuple[list[Message], list[ToolSpec]]:
    """The frame as provider-neutral messages in order, plus its tool definitions.

    Inline components of the same group and role join into one message (their text kept as
    written, the message's outer whitespace trimmed; whitespace-only messages vanish).
    ChatHistory and ToolResults are message boundaries: their messages stand at their
    position, so text before and after them never merges.
    """
    from compiler.frame import MESSAGE_KINDS, MESSAGE_NAME, ComponentKind

    messages: list[Message] = []
    tools: list[ToolSpec] = []
    parts: list[str] = []
    current: tuple[int, str] | None = None
    name: str | None = None  # a message name the group's first component carries

    def flush() -> None:
        nonlocal current, name
        if current is not None:
            text = "".join(parts).strip()
            if text:
                msg: Message = {"role": current[1], "content": text}  # type: ignore[typeddict-item]
                if name:
                    msg["name"] = name
                messages.append(msg)
        parts.clear()
        current = None
        name = None

    for comp in frame.components:
        if comp.kind in MESSAGE_KINDS:
            flush()
            messages.extend(comp.messages or ())
        elif comp.kind == ComponentKind.TOOL_DEFINITIONS:
            tools.extend(comp.tools or ())
        elif comp.inline_content:
            key = (comp.group, comp.role)
            if key != current:
                flush()
                current = key
                name = comp.metadata.get(MESSAGE_NAME)
            parts.append(comp.inline_content)
    flush()
    return messages, tools
