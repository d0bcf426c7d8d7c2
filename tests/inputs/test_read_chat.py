"""Chat history: inline messages and SillyTavern .jsonl chats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.errors import ContextError
from compiler.inputs.chat import ChatMessage, read_chat, read_chat_file


def jsonl(*rows: dict[str, Any]) -> str:
    return "\n".join(json.dumps(r) for r in rows) + "\n"


HEADER = {"user_name": "Alice", "character_name": "Seraphina", "chat_metadata": {}}


def msg(
    name: str, text: str, *, user: bool = False, system: bool = False, **extra: Any
) -> dict[str, Any]:
    return {"name": name, "is_user": user, "is_system": system, "mes": text, "extra": extra}


def test_tavern_jsonl_roles(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(
        jsonl(
            HEADER,
            msg("Seraphina", "Welcome, traveller."),
            msg("Alice", "Where am I?", user=True),
            msg("System", "[hidden note]", system=True),
            msg("Narrator", "Night falls.", type="narrator"),
            msg("Seraphina", "Rest now.", ignore=True),
        ),
        encoding="utf-8",
    )
    chat = read_chat_file(path)
    assert (chat.user_name, chat.character_name) == ("Alice", "Seraphina")
    assert [(m.role, m.content, m.name) for m in chat.messages] == [
        ("assistant", "Welcome, traveller.", "Seraphina"),
        ("user", "Where am I?", "Alice"),
        ("system", "Night falls.", "Narrator"),
    ]


def test_tavern_tool_invocations_become_tool_calls(tmp_path: Path) -> None:
    inv = {"id": "c1", "name": "dice.roll", "parameters": '{"sides":20}', "result": "17"}
    path = tmp_path / "chat.jsonl"
    path.write_text(
        jsonl(HEADER, msg("Seraphina", "Tool calls: dice", system=True, tool_invocations=[inv])),
        encoding="utf-8",
    )
    call, result = read_chat(path)
    assert call.role == "assistant" and call.tool_calls is not None
    assert (call.tool_calls[0].id, call.tool_calls[0].name) == ("c1", "dice.roll")
    assert call.tool_calls[0].arguments == '{"sides":20}'
    assert (result.role, result.content, result.tool_call_id) == ("tool", "17", "c1")


def test_relative_path_resolves_against_base_dir(tmp_path: Path) -> None:
    (tmp_path / "chats").mkdir()
    (tmp_path / "chats" / "c.jsonl").write_text(jsonl(msg("A", "hi", user=True)), "utf-8")
    assert read_chat("chats/c.jsonl", tmp_path) == [
        ChatMessage(role="user", content="hi", name="A")
    ]


def test_broken_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(
        json.dumps(HEADER) + "\n" + json.dumps(msg("A", "ok")) + '\n{"name": "B", "mes": \n',
        encoding="utf-8",
    )
    with pytest.raises(ContextError) as info:
        read_chat(path)
    err = info.value
    assert err.code == "context.invalid_json" and err.file == str(path)
    assert err.span is not None and err.span.line == 3
    assert "line 3" in err.message


def test_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(jsonl(HEADER) + "[1, 2]\n", encoding="utf-8")
    with pytest.raises(ContextError) as info:
        read_chat(path)
    assert info.value.code == "context.invalid_chat"
    assert info.value.span is not None and info.value.span.line == 2


def test_message_without_mes(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(jsonl(HEADER, msg("A", "ok"), {"name": "B", "is_user": True}), "utf-8")
    with pytest.raises(ContextError, match="line 3: a chat message needs 'mes'"):
        read_chat(path)


def test_inline_messages_camel_case() -> None:
    messages = read_chat(
        [
            {"role": "user", "content": "roll"},
            {
                "role": "assistant",
                "content": None,
                "toolCalls": [{"id": "t1", "name": "dice.roll", "arguments": {"sides": 6}}],
            },
            {"role": "tool", "content": "4", "toolCallId": "t1"},
        ]
    )
    assert messages[1].content == "" and messages[1].tool_calls is not None
    assert messages[1].tool_calls[0].arguments == '{"sides":6}'
    assert messages[2].tool_call_id == "t1"
    assert messages[2].model_dump(by_alias=True, exclude_none=True) == {
        "role": "tool",
        "content": "4",
        "toolCallId": "t1",
    }


def test_inline_unknown_field_has_a_hint() -> None:
    with pytest.raises(ContextError) as info:
        read_chat(
            [{"role": "user", "content": "a"}, {"role": "user", "contnet": "b"}],
            origin="RUN.json",
            json_path="chat",
        )
    err = info.value
    assert err.code == "context.unknown_field"
    assert (err.file, err.path) == ("RUN.json", "chat[1].contnet")
    assert err.hint == "did you mean 'content'?"


def test_inline_bad_role() -> None:
    with pytest.raises(ContextError) as info:
        read_chat([{"role": "narrator", "content": "a"}], json_path="chat")
    assert (info.value.code, info.value.path) == ("context.invalid_chat", "chat[0].role")


def test_inline_not_a_list() -> None:
    with pytest.raises(ContextError) as info:
        read_chat({"role": "user"}, json_path="chat")  # type: ignore[arg-type]
    assert info.value.code == "context.invalid_chat"


def test_json_array_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "system", "content": "s"}]), "utf-8")
    assert read_chat(path) == [ChatMessage(role="system", content="s")]


def test_missing_chat_file(tmp_path: Path) -> None:
    with pytest.raises(ContextError) as info:
        read_chat("nope.jsonl", tmp_path)
    assert info.value.code == "context.file_not_found"
    assert info.value.file == str(tmp_path / "nope.jsonl")
