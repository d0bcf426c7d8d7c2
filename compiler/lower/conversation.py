"""The provider-neutral conversation every dialect lowers, and the one tool-call pairing check.

Internal: the API is :mod:`compiler.lower`.

:func:`conversation` lays a fitted frame out as messages (:func:`compiler.lower.base.layout`)
and checks, once for every provider, that each tool call is answered by tool results before
the next other message and that each result answers an earlier call
(``lower.unanswered_tool_call``, ``lower.orphan_tool_result``): a pairing a provider would
refuse is an error here, never a 400 there.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.errors import LoweringError
from compiler.frame import ContextFrame, Message, ToolSpec
from compiler.lower.base import layout


def conversation(frame: ContextFrame) -> tuple[list[Message], list[ToolSpec]]:
    """The frame's messages and tool definitions, the tool-call pairing checked."""
    messages, tools = layout(frame)
    check_pairing(messages)
    return messages, tools


def check_pairing(messages: Sequence[Message]) -> None:
    """Raise when a tool call is left unanswered or a tool result answers no pending call."""
    pending: set[str] = set()
    for i, msg in enumerate(messages):
        if msg["role"] == "tool":
            call_id = msg.get("toolCallId")
            if call_id not in pending:
                raise LoweringError(
                    code="lower.orphan_tool_result",
                    message=f"message {i} answers tool call {call_id!r}, which no earlier "
                    "assistant message made (or it was answered already)",
                )
            pending.discard(str(call_id))
            continue
        if pending:
            raise LoweringError(
                code="lower.unanswered_tool_call",
                message=f"tool calls {sorted(pending)} are not answered before message {i}",
            )
        calls = msg.get("toolCalls") or []
        if calls and msg["role"] != "assistant":
            raise LoweringError(
                code="lower.invalid_tool_call",
                message=f"a {msg['role']} message carries tool calls; only assistant may",
            )
        pending = {c["id"] for c in calls}
    if pending:
        raise LoweringError(
            code="lower.unanswered_tool_call",
            message=f"tool calls {sorted(pending)} are never answered",
        )
