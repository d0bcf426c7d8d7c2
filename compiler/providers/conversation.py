"""The provider-neutral conversation every dialect lowers, and the one tool-call pairing check.

Internal: the API is :mod:`compiler.providers`.

:func:`conversation` lays a fitted frame out as messages (:func:`compiler.providers.layout.layout`)
and checks, once for every provider, that each tool call is answered by tool results before
the next other message and that each result answers an earlier call
(``lower.unanswered_tool_call``, ``lower.orphan_tool_result``), and that no message makes
two calls with one id (``lower.duplicate_tool_call_id``): a pairing a provider would refuse
is an error here, never a 400 there. :func:`prepared` then holds each call's name, under the
alias tool definitions take (:meth:`Dialect.tool_name`), to the dialect's naming rule
(:attr:`Dialect.tool_name_rule`, ``lower.invalid_tool_name``).

The turn rules several dialects share live here too: :func:`unique_call_ids` (a call id a
later turn uses again gets a suffix, in the call and its result alike), :data:`START_CHAT`
(the placeholder user turn SillyTavern puts first for Claude and Gemini), :func:`prefill`
(a final assistant message) and :func:`result_text` (a tool result as text, its error flag
written out for a provider that has none).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from operator import itemgetter

from compiler._base.frame import ContextFrame, Message, ToolSpec
from compiler.errors import Diagnostic, LoweringError
from compiler.providers.dialect import Dialect, LoweringOptions
from compiler.providers.layout import layout
from compiler.providers.schema import object_parameters
from compiler.providers.tool_params import (
    ToolArguments,
    report_rewrites,
    rewrites,
    sent_parameters,
)


def conversation(frame: ContextFrame) -> tuple[list[Message], list[ToolSpec]]:
    """The frame's messages and tool definitions, the tool-call pairing checked."""
    messages, tools, _ = _conversation(frame)
    return messages, tools


def _conversation(frame: ContextFrame) -> tuple[list[Message], list[ToolSpec], bool]:
    """:func:`conversation`, and whether any message is a tool call or result."""
    messages, tools = layout(frame)
    messages = without_empty(messages)
    turns = has_tool_turns(messages)
    if turns:  # nothing to pair otherwise (most conversations)
        check_pairing(messages)
    return messages, tools, turns


def check_pairing(messages: Sequence[Message]) -> None:
    """Raise when a tool call is left unanswered, a tool result answers no pending call, or
    one message makes two calls with one id (an answer could not say which it answers). An
    id a later turn uses again pairs with that turn's answers (Anthropic, which wants ids
    unique in a request, gives the later one a suffix)."""
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
        for c in calls:
            if c["id"] in pending:
                raise LoweringError(
                    code="lower.duplicate_tool_call_id",
                    message=f"message {i} makes two tool calls with the id {c['id']!r}: an "
                    "answer cannot say which it answers",
                    hint="give each tool call its own id (and its result the same id)",
                )
            pending.add(c["id"])
    if pending:
        raise LoweringError(
            code="lower.unanswered_tool_call",
            message=f"tool calls {sorted(pending)} are never answered",
        )


def without_empty(messages: Sequence[Message]) -> list[Message]:
    """The messages without empty ones: a message with no text, no tool calls and no tool
    result says nothing, and most providers refuse it."""
    return [
        m
        for m in messages
        if m["role"] == "tool" or m.get("toolCalls") or str(m.get("content") or "").strip()
    ]


#: The user turn SillyTavern puts first for Claude and Gemini when the conversation opens
#: otherwise and the preset has no ``human_sysprompt_message`` (its prompt converters).
START_CHAT = "[Start a new chat]"
#: How a tool result that reports a failure is written where the provider has no error flag
#: (OpenAI) or the result is sent as text.
ERROR_TEXT = "[error] "
#: The tag of a prefill moved into the last user turn (a model that refuses one).
PREFILL_NOTE = "[Begin your reply with this text]\n"


def prefill(messages: Sequence[Message]) -> Message | None:
    """The final assistant message with text (SillyTavern's ``assistant_prefill``, or the
    message a continue extends), or None."""
    if not messages:
        return None
    last = messages[-1]
    if last["role"] != "assistant" or last.get("toolCalls"):
        return None
    return last if str(last.get("content") or "").strip() else None


def written_prefill(frame: ContextFrame, messages: Sequence[Message]) -> Message | None:
    """:func:`prefill` when the template or preset wrote it (an assistant-role text after
    the chat, SillyTavern's ``assistant_prefill``), not when the chat itself ends with the
    assistant: the model's next message then follows it, which is what it means."""
    from compiler._base.frame import MESSAGE_KINDS

    found = prefill(messages)
    if found is None:
        return None
    for comp in reversed(frame.components):
        if comp.kind in MESSAGE_KINDS and comp.messages:
            return None
        if comp.inline_content and comp.inline_content.strip():
            return found
    return None


#: The hint of ``lower.prefill_unsupported`` for OpenAI.
OPENAI_PREFILL_HINT = (
    "OpenAI has no prefill: the reply is a new message after this one, not its "
    "continuation; to steer how the reply begins, say so in a system or user message "
    "(or use Structured Outputs), and leave SillyTavern's assistant_prefill empty"
)


def result_text(m: Message) -> str:
    """A tool result's text, with :data:`ERROR_TEXT` before it when it reports a failure:
    for a provider with no error flag, so the model still reads that the call failed."""
    text = str(m.get("content") or "")
    return ERROR_TEXT + text if m.get("isError") else text


def unique_call_ids(messages: Sequence[Message]) -> list[Message]:
    """The messages with every tool-call id unique in the request: an id a later turn uses
    again (after the earlier call was answered) gets a suffix, ``_2``, ``_3``, ..., in the
    call and in its results alike (OpenAI Responses answers "Duplicate
    function_call_output" otherwise). The first use keeps its id."""
    seen = {c["id"] for m in messages for c in m.get("toolCalls") or ()}
    used: set[str] = set()
    pending: dict[str, str] = {}  # a call's id -> the id it is sent with
    out: list[Message] = []
    changed = False
    for m in messages:
        calls = m.get("toolCalls")
        if calls:
            renamed = []
            for c in calls:
                wire, n = c["id"], 1
                while wire in used or (n > 1 and wire in seen):
                    n += 1
                    wire = f"{c['id']}_{n}"
                used.add(wire)
                pending[c["id"]] = wire
                renamed.append(c if wire == c["id"] else {**c, "id": wire})
                changed |= wire != c["id"]
            m = {**m, "toolCalls": renamed}
        elif m["role"] == "tool":
            neutral = str(m.get("toolCallId", ""))
            wire = pending.pop(neutral, neutral)
            if wire != neutral:
                m = {**m, "toolCallId": wire}
        out.append(m)
    return out if changed else list(messages)


def tool_turns_as_text(messages: Sequence[Message]) -> list[Message]:
    """Tool calls and results written as text, for a request that offers no tools (Anthropic
    and Gemini refuse tool blocks then): the model still reads what was called and what
    came back."""
    out: list[Message] = []
    for m in messages:
        if m["role"] == "tool":
            head = "[Tool error]" if m.get("isError") else "[Tool result]"
            out.append({"role": "user", "content": f"{head}\n{m.get('content') or ''}"})
            continue
        calls = m.get("toolCalls") or []
        if not calls:
            out.append(m)
            continue
        lines = [str(m.get("content") or "").strip()]
        lines += [
            f"[Tool call: {c['name']} {json.dumps(c['arguments'], ensure_ascii=False)}]"
            for c in calls
        ]
        text = "\n".join(line for line in lines if line)
        out.append({"role": "assistant", "content": text})
    return out


def short_call_ids(messages: Sequence[Message], limit: int) -> list[Message]:
    """The messages with every tool-call id over ``limit`` characters (or with characters
    outside ``[A-Za-z0-9_-]``) replaced by ``call_`` and a hash of it, the same in the call
    and in its result (OpenAI refuses ids over 40 characters in Chat, 64 in Responses)."""

    def short(call_id: str) -> str:
        if len(call_id) <= limit and _ID_RE.fullmatch(call_id):
            return call_id
        digest = hashlib.sha256(call_id.encode("utf-8")).hexdigest()
        return "call_" + digest[: max(8, limit - 5)]

    if not has_tool_turns(messages):
        return list(messages)
    out: list[Message] = []
    for m in messages:
        calls = m.get("toolCalls")
        if calls:
            m = {**m, "toolCalls": [{**c, "id": short(c["id"])} for c in calls]}
        if m["role"] == "tool" and m.get("toolCallId"):
            m = {**m, "toolCallId": short(str(m.get("toolCallId")))}
        out.append(m)
    return out


def has_tool_turns(messages: Sequence[Message]) -> bool:
    """Whether any message is a tool call or a tool result. Two passes at C speed when no
    message has a ``toolCalls`` key (most conversations), else one in Python."""
    if "toolCalls" in set().union(*messages):
        return any(m["role"] == "tool" or m.get("toolCalls") for m in messages)
    return "tool" in set(map(itemgetter("role"), messages))


_ID_RE = re.compile(r"[A-Za-z0-9_-]+")


def prepared(
    frame: ContextFrame,
    dialect: Dialect,
    options: LoweringOptions,
    report: list[Diagnostic] | None,
    *,
    id_limit: int | None = None,
    calls_need_tools: bool = False,
    unique_ids: bool = False,
) -> tuple[list[Message], list[ToolSpec]]:
    """:func:`conversation`, made ready for ``dialect``: tool parameters with an object at
    the top (:func:`compiler.providers.schema.object_parameters`), those the provider refuses
    rewritten (:func:`compiler.providers.tool_params.sent_parameters`), tool-call ids of at most
    ``id_limit`` characters (``unique_ids``: each unique in the request, :func:`unique_call_ids`),
    and, where the provider refuses tool blocks in a request that
    defines no tools (``calls_need_tools``), the calls and results written as text. Each
    rewrite is reported (:meth:`Dialect.unsupported`)."""
    messages, tools, turns = _conversation(frame)
    ready: list[ToolSpec] = []
    merged: list[str] = []
    changed: list[str] = []
    tables: dict[str, ToolArguments] = {}
    for tool in tools:
        params, found = object_parameters(tool["parameters"])
        if found:
            merged.append(f"{tool['name']} ({found})")
        params, table = sent_parameters(params, dialect.property_key_rule)
        if table:
            changed.append(rewrites(tool["name"], table))
            tables[tool["name"]] = tables[dialect.tool_name(tool["name"])] = table
        ready.append({**tool, "parameters": params})
    if merged:
        what = f"a combinator at the top of tool parameters: {', '.join(merged)}"
        dialect.unsupported(report, options, what, "its branches merged into one object")
    report_rewrites(dialect.name, changed, options, report)
    if tables and turns:
        messages = [_calls_sent(m, tables) for m in messages]
    if unique_ids and turns:
        messages = unique_call_ids(messages)
    if id_limit is not None and turns:
        messages = short_call_ids(messages, id_limit)
    if calls_need_tools and not tools and turns:
        messages = tool_turns_as_text(messages)
        dialect.unsupported(
            report, options, "tool calls and results without tool definitions", "written as text"
        )
    elif turns:
        check_call_names(messages, dialect)
    return messages, ready


def _calls_sent(message: Message, tables: dict[str, ToolArguments]) -> Message:
    """``message`` with its tool calls' arguments under the property names sent (a history
    call written with the tool's own keys; a wrapped tool's arguments are left as they are:
    an object, they are already the ``{"value": ...}`` the model sent)."""
    calls = message.get("toolCalls")
    if not calls or not any(c["name"] in tables for c in calls):
        return message
    out = []
    for call in calls:
        table = tables.get(call["name"])
        if table is not None and not table.wrapped:
            call = {**call, "arguments": table.sent(call["arguments"])}
        out.append(call)
    return {**message, "toolCalls": out}


def check_call_names(messages: Sequence[Message], dialect: Dialect) -> None:
    """Raise ``lower.invalid_tool_name`` when a tool call's name, under the alias a tool
    definition takes (:meth:`Dialect.tool_name`: ``.`` becomes ``_``), breaks the
    provider's naming rule (:attr:`Dialect.tool_name_rule`): the provider would refuse it,
    and no other rewrite keeps the name the model was offered."""
    for i, msg in enumerate(messages):
        for call in msg.get("toolCalls") or ():
            alias = dialect.tool_name(call["name"])
            if not dialect.tool_name_rule.fullmatch(alias):
                raise LoweringError(
                    code="lower.invalid_tool_name",
                    message=f"message {i} calls {call['name']!r}: {dialect.name} takes "
                    f"tool names matching {dialect.tool_name_rule.pattern}",
                    hint="name the call as its tool is defined ('.' may stand for '_')",
                )
