"""Chat history: inline messages, or a SillyTavern ``.jsonl`` chat file.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.

Inline form (the run context's wire format, camelCase): a list of
``{role, content, name?, toolCalls?, toolCallId?}``, oldest first. A ``.json`` file holding
such a list is read the same way.

SillyTavern ``.jsonl``: an optional header line (``user_name``, ``character_name``,
``chat_metadata``; recognised as a first line without ``mes``), then one message per line
``{name, is_user, is_system, mes, extra, ...}``. Mapping, as SillyTavern's chat-completion
builder does it:

- ``is_user`` -> ``user``; otherwise ``assistant``; a narrator message
  (``extra.type == "narrator"``, sent with ``/sys``) -> ``system``;
- ``is_system`` messages are hidden from the prompt (``/hide``, ``/comment`` and other
  UI-only rows) and are left out, except one carrying ``extra.tool_invocations``, which
  becomes an ``assistant`` message with ``toolCalls`` followed by one ``tool`` message per
  invocation (its ``result``), as SillyTavern sends tool calls;
- a message with ``extra.ignore`` set is left out;
- ``name`` is kept; ``mes`` is the content (the selected swipe); ``send_date`` is kept (for
  ``{{idle_duration}}``); blank lines are skipped;
- the header's ``chat_metadata`` is kept (:class:`ChatMetadata`: the Author's Note, the
  chat's variables).

A broken line names the file and its line number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from compiler.errors import ContextError, Span
from compiler.inputs.read import (
    INLINE,
    PathLike,
    decode_text,
    join_path,
    parse_json,
    read_bytes,
    resolve,
    type_name,
    validate,
)

ChatRole = Literal["system", "user", "assistant", "tool"]
"""The roles a message of a chat file (or inline chat) may have."""
_CODE = "context.invalid_chat"


class ChatToolCall(BaseModel):
    """A tool call an assistant message made; ``arguments`` is JSON text, as providers send."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    id: str
    name: str
    arguments: str = "{}"

    @field_validator("arguments", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> Any:
        if isinstance(value, dict | list):
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return value


SendDate = str | StrictInt | StrictFloat
"""A message's send time as SillyTavern stores it (``send_date``): ``June 19, 2023 2:20pm``,
``2024-7-12@01h31m37s``, Unix milliseconds, or ISO 8601."""

Number = StrictInt | StrictFloat

ChatVariable = str | int | float | bool
"""A SillyTavern variable's value as a run gives it (text, a number or a boolean)."""


class ChatMetadata(BaseModel):
    """SillyTavern's ``chat_metadata`` (its own names): the Author's Note fields and the chat
    variables are checked, every other key is kept as it is. A missing field takes
    SillyTavern's default (public/scripts/authors-note.js loadSettings): no note, interval 1,
    depth 4, position 1 (in chat), role 0 (system), no variables."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    note_prompt: str = ""
    #: insert the note when the number of user messages is a multiple of it (1: always)
    note_interval: Number = 1
    note_depth: Number = 4
    #: 0 after the main prompt, 1 in chat at depth, 2 before the main prompt
    note_position: Number = 1
    #: 0 system, 1 user, 2 assistant
    note_role: Number = 0
    #: the chat's variables (``{{getvar::name}}``), where SillyTavern keeps them
    variables: dict[str, ChatVariable] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _null_is_the_default(cls, data: Any) -> Any:
        """A ``null`` note field takes its default, as loadSettings reads it (``??``)."""
        if not isinstance(data, dict):
            return data
        return {k: v for k, v in data.items() if v is not None or k not in cls.model_fields}


class ChatMessage(BaseModel):
    """One chat message, oldest-first order is the caller's."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

    role: ChatRole
    content: str = ""
    name: str | None = None
    tool_calls: list[ChatToolCall] | None = None
    tool_call_id: str | None = None
    send_date: SendDate | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _null_content(cls, value: Any) -> Any:
        return "" if value is None else value


class TavernChat(BaseModel):
    """A SillyTavern chat file: its header's names and the messages a prompt would see."""

    model_config = ConfigDict(defer_build=True)

    user_name: str | None = None
    character_name: str | None = None
    metadata: ChatMetadata | None = None
    messages: list[ChatMessage] = []
    #: every ``is_user`` line of a ``.jsonl`` file, hidden ones too: the Author's Note's
    #: interval counts them (None, a ``.json`` array: its user messages are counted)
    user_lines: int | None = None
    #: per message, the ``is_user`` lines up to its own (what a prefix of the chat counts)
    user_lines_at: list[int] = []


def parse_messages(items: Any, *, file: str, path: str = "") -> list[ChatMessage]:
    """Inline messages (parsed JSON) as ChatMessages; errors name ``file`` and the path."""
    if not isinstance(items, list):
        raise ContextError(
            code=_CODE,
            message=f"a chat must be an array of messages, found {type_name(items)}",
            file=file,
            path=path or None,
        )
    out: list[ChatMessage] = []
    for i, item in enumerate(items):
        where = join_path(path, i)
        if not isinstance(item, dict):
            raise ContextError(
                code=_CODE,
                message=f"a chat message must be an object, found {type_name(item)}",
                file=file,
                path=where,
            )
        out.append(validate(ChatMessage, item, code=_CODE, file=file, prefix=where, what="message"))
    return out


def _line_span(file: str, text: str, start: int, line: int) -> Span:
    stop = text.find("\n", start)
    end = len(text) if stop < 0 else stop
    return Span(start, end, line, 1, line, end - start + 1, file)


def _tavern_message(obj: dict[str, Any], file: str, span: Span, line: int) -> list[ChatMessage]:
    def bad(message: str) -> ContextError:
        return ContextError(
            code=_CODE, message=f"line {line}: {message}", file=file, span=span, path=f"line {line}"
        )

    extra = obj.get("extra") or {}
    if not isinstance(extra, dict):
        raise bad(f"'extra' must be an object, found {type_name(extra)}")
    if extra.get("ignore"):
        return []
    content = obj.get("mes", "")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise bad(f"'mes' must be a string, found {type_name(content)}")
    name = obj.get("name")
    name = name if isinstance(name, str) else None
    if obj.get("is_system"):
        invocations = extra.get("tool_invocations")
        if not isinstance(invocations, list) or not invocations:
            return []
        return _tool_messages(invocations, name, bad)
    role: ChatRole = "user" if obj.get("is_user") else "assistant"
    if extra.get("type") == "narrator":
        role = "system"
    sent = obj.get("send_date")
    sent = sent if isinstance(sent, str | int | float) and not isinstance(sent, bool) else None
    return [ChatMessage(role=role, content=content, name=name, send_date=sent)]


def _tool_messages(invocations: list[Any], name: str | None, bad: Any) -> list[ChatMessage]:
    calls: list[ChatToolCall] = []
    results: list[ChatMessage] = []
    for j, inv in enumerate(invocations):
        if not isinstance(inv, dict) or not isinstance(inv.get("name"), str):
            raise bad(f"extra.tool_invocations[{j}] needs a string 'name'")
        call_id = str(inv.get("id") or f"call_{j}")
        params = inv.get("parameters", "{}")
        if not isinstance(params, str | dict | list):
            raise bad(f"extra.tool_invocations[{j}].parameters must be JSON text or an object")
        calls.append(ChatToolCall(id=call_id, name=inv["name"], arguments=params))
        result = inv.get("result")
        results.append(
            ChatMessage(role="tool", content=str(result or "[No content]"), tool_call_id=call_id)
        )
    return [ChatMessage(role="assistant", content="", name=name, tool_calls=calls), *results]


def _metadata(value: Any, file: str, span: Span, line: int) -> ChatMetadata | None:
    """The header's ``chat_metadata`` (None when absent); a wrong type names the line."""
    if value is None:
        return None
    where = f"line {line}.chat_metadata"
    if not isinstance(value, dict):
        raise ContextError(
            code=_CODE,
            message=f"{where}: must be an object, found {type_name(value)}",
            file=file,
            span=span,
            path=where,
        )
    return validate(ChatMetadata, value, code=_CODE, file=file, prefix=where, what="chat metadata")


def parse_jsonl(text: str, file: str) -> TavernChat:
    """A SillyTavern chat from the text of a ``.jsonl`` file."""
    chat = TavernChat()
    start = users = 0
    seen_first = False
    for line_no, line in enumerate(text.split("\n"), start=1):
        offset, start = start, start + len(line) + 1
        if not line.strip():
            continue
        obj = parse_json(line, file, line_offset=line_no - 1, what="JSON line")
        span = _line_span(file, text, offset, line_no)
        if not isinstance(obj, dict):
            raise ContextError(
                code=_CODE,
                message=f"line {line_no}: a chat line must be an object, found {type_name(obj)}",
                file=file,
                span=span,
                path=f"line {line_no}",
            )
        first, seen_first = not seen_first, True
        if first and "mes" not in obj:
            user, char = obj.get("user_name"), obj.get("character_name")
            chat.user_name = user if isinstance(user, str) else None
            chat.character_name = char if isinstance(char, str) else None
            chat.metadata = _metadata(obj.get("chat_metadata"), file, span, line_no)
            continue
        if "mes" not in obj:
            raise ContextError(
                code=_CODE,
                message=f"line {line_no}: a chat message needs 'mes'",
                file=file,
                span=span,
                path=f"line {line_no}",
            )
        made = _tavern_message(obj, file, span, line_no)
        users += bool(obj.get("is_user"))
        chat.messages.extend(made)
        chat.user_lines_at.extend([users] * len(made))
    chat.user_lines = users
    return chat


def read_chat_file(path: PathLike) -> TavernChat:
    """Read a SillyTavern ``.jsonl`` chat, or a ``.json`` array of inline messages."""
    path = Path(path)
    file = str(path)
    text = decode_text(read_bytes(path, what="chat"), file)
    if path.suffix.lower() == ".json" or text.lstrip().startswith("["):
        data = parse_json(text, file)
        return TavernChat(messages=parse_messages(data, file=file))
    return parse_jsonl(text, file)


def read_chat(
    value: PathLike | Sequence[Mapping[str, Any]],
    base_dir: PathLike | None = None,
    *,
    origin: str | None = None,
    json_path: str = "",
) -> list[ChatMessage]:
    """Messages oldest first, from an inline list or a chat file (relative to ``base_dir``).

    ``origin``/``json_path`` name where an inline list came from (``RUN.json``, ``chat``).
    """
    if isinstance(value, str | Path) or hasattr(value, "__fspath__"):
        return read_chat_file(resolve(value, base_dir)).messages
    items = list(value) if isinstance(value, list | tuple) else value
    return parse_messages(items, file=origin or INLINE, path=json_path)
