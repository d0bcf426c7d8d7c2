"""A run's chat messages as the frame's messages (the assembler's ``<<agent.chat.history>>``).

Internal: :func:`raw_message` makes one of a message :func:`~compiler.context.lazy_chat.
plain_chat` checked (no validation: it cannot fail there and changes nothing), so a lazily
validated chat is copied into the frame only as the fit reads it; :func:`frame_message`
makes one of a validated message, its tool calls checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter, methodcaller
from typing import Any

from compiler.context.lazy_chat import LazyChat, PlainChat, made_as_read
from compiler.context.run import ChatMessageIn
from compiler.context.tool_calls import tool_call
from compiler.frame import Message

_ROLE = itemgetter("role")
_CONTENT = itemgetter("content")
_HAS_CONTENT = methodcaller("__contains__", "content")


def raw_message(raw: dict[str, Any]) -> Message:
    """The frame message of a checked plain message, as :func:`frame_message` makes it of
    the same message validated."""
    msg: Message = {"role": raw["role"], "content": raw.get("content")}
    if raw.get("name"):
        msg["name"] = raw["name"]
    return msg


def raw_messages(raws: Sequence[dict[str, Any]]) -> list[Message]:
    """:func:`raw_message` of each: at C speed when each is exactly a role and its content
    (most chats)."""
    n = len(raws)
    if sum(map(len, raws)) == 2 * n and list(map(_HAS_CONTENT, raws)).count(True) == n:
        pairs = zip(map(_ROLE, raws), map(_CONTENT, raws), strict=True)
        return [{"role": r, "content": c} for r, c in pairs]
    return list(map(raw_message, raws))


def frame_chat(shown: LazyChat[Any]) -> LazyChat[Message]:
    """The frame's messages of a lazily validated chat, each made when the fit reads it: from
    a plain snapshot's columns, or by :func:`raw_message` from each checked message."""
    if shown.plain():
        raw = shown.raw()
        assert isinstance(raw, PlainChat)
        return LazyChat(raw.framed(), made_as_read)  # made afresh on each read: handed out
    return shown.remade(raw_message, raw_messages)


def frame_message(m: ChatMessageIn, file: str, i: int) -> Message:
    """The frame message of the chat's message ``i`` (``file``: the run context, for the
    tool calls' diagnostics)."""
    msg: Message = {"role": m.role, "content": m.content}
    if m.name:
        msg["name"] = m.name
    if m.tool_calls:
        msg["toolCalls"] = [
            tool_call(c, file, f"chat[{i}].toolCalls[{j}]") for j, c in enumerate(m.tool_calls)
        ]
    if m.tool_call_id:
        msg["toolCallId"] = m.tool_call_id
    return msg
