"""The provider-neutral message layout every dialect lowers.

Internal: the API is :mod:`compiler.providers`.
"""

from __future__ import annotations

from compiler._base.frame import ContextFrame, Message, ToolSpec

__all__ = ["layout", "squash_system"]


def layout(frame: ContextFrame) -> tuple[list[Message], list[ToolSpec]]:
    """The frame as provider-neutral messages in order, plus its tool definitions.

    Inline components of the same group and role join into one message (their text kept as
    written, the message's outer whitespace trimmed but in a legacy SillyTavern preset's
    frame, :data:`~compiler._base.frame.AS_WRITTEN`; whitespace-only messages vanish).
    ChatHistory and ToolResults are message boundaries: their messages stand at their
    position, so text before and after them never merges. A frame marked
    :data:`~compiler._base.frame.SQUASH_SYSTEM` then has its runs of unnamed system messages
    merged (:func:`squash_system`).
    """
    from compiler._base.frame import (
        AS_WRITTEN,
        MESSAGE_KINDS,
        MESSAGE_NAME,
        NO_SQUASH,
        SQUASH_SYSTEM,
        ComponentKind,
    )

    # a legacy SillyTavern preset's entries are sent as written, edges and all (OA Message)
    edges = bool(frame.metadata.get(AS_WRITTEN))

    messages: list[Message] = []
    fixed: list[bool] = []  # per message: never squashed
    tools: list[ToolSpec] = []
    parts: list[str] = []
    current: tuple[int, str] | None = None
    name: str | None = None  # a message name the group's first component carries
    keep = False  # the group's first component says: never squash

    def flush() -> None:
        nonlocal current, name
        if current is not None:
            text = "".join(parts)
            text = text if edges else text.strip()
            if text.strip():
                msg: Message = {"role": current[1], "content": text}  # type: ignore[typeddict-item]
                if name:
                    msg["name"] = name
                messages.append(msg)
                fixed.append(keep)
        parts.clear()
        current = None
        name = None

    for comp in frame.components:
        if comp.kind in MESSAGE_KINDS:
            flush()
            messages.extend(comp.messages or ())
            fixed.extend([False] * len(comp.messages or ()))
        elif comp.kind == ComponentKind.TOOL_DEFINITIONS:
            tools.extend(comp.tools or ())
        elif comp.inline_content:
            key = (comp.group, comp.role)
            if key != current:
                flush()
                current = key
                name = comp.metadata.get(MESSAGE_NAME)
                keep = bool(comp.metadata.get(NO_SQUASH))
            parts.append(comp.inline_content)
    flush()
    if frame.metadata.get(SQUASH_SYSTEM):
        messages = squash_system(messages, fixed)
    return messages, tools


def squash_system(messages: list[Message], fixed: list[bool]) -> list[Message]:
    """SillyTavern's ``squashSystemMessages``: empty system messages dropped, each run of
    unnamed system messages (without tool calls) joined with ``\n`` into its first; a
    ``fixed`` message (``new_chat_prompt``) is never merged."""
    out: list[Message] = []
    last_squashable = False
    for msg, keep in zip(messages, fixed, strict=True):
        if msg["role"] == "system" and not (msg.get("content") or "").strip():
            continue
        squashable = (
            not keep
            and msg["role"] == "system"
            and not msg.get("name")
            and not msg.get("toolCalls")
        )
        if squashable and last_squashable:
            prev = out[-1]
            out[-1] = {**prev, "content": f"{prev['content']}\n{msg['content']}"}
        else:
            out.append(msg)
        last_squashable = squashable
    return out
