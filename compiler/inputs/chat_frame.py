"""A run's chat messages as the frame's messages (the assembler's ``<<agent.chat.history>>``).

Internal: :func:`raw_message` makes one of a message :func:`~compiler.inputs.lazy_chat.
plain_chat` checked (no validation: it cannot fail there and changes nothing), so a lazily
validated chat is copied into the frame only as the fit reads it; :func:`frame_message`
makes one of a validated message, its tool calls checked.
"""

from __future__ import annotations

from typing import Any

from compiler._base.frame import Message
from compiler.inputs.lazy_chat import LazyChat, PlainChat, made_as_read
from compiler.inputs.run import ChatMessageIn
from compiler.inputs.tool_calls import tool_call


def raw_message(raw: dict[str, Any]) -> Message:
    """The frame message of a checked plain message, as :func:`frame_message` makes it of
    the same message validated."""
    msg: Message = {"role": raw["role"], "content": raw.get("content")}
    if raw.get("name"):
        msg["name"] = raw["name"]
    return msg


def frame_chat(shown: LazyChat[Any]) -> LazyChat[Message]:
    """The frame's messages of a lazily validated chat, each made when the fit reads it: from
    a plain snapshot's columns, or by :func:`raw_message` from each checked message."""
    if shown.plain():
        raw = shown.raw()
        assert isinstance(raw, PlainChat)
        return LazyChat(raw.framed(), made_as_read)  # made afresh on each read: handed out
    return shown.remade(raw_message)


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
    if m.is_error and m.role == "tool":
        msg["isError"] = True
    return msg
