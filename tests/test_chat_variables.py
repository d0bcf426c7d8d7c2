"""SillyTavern's chat variables come from the chat's ``chat_metadata.variables`` (a chat
file's header, the run context's ``chatMetadata``) and the run's ``variables``, name by name;
``{{input}}`` is what the user just sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import ContextError

HEADER = {
    "user_name": "Ann",
    "character_name": "Mira",
    "chat_metadata": {"variables": {"mood": "calm", "hp": 10, "place": "inn", "ok": True}},
}
LINES = [
    {"name": "Ann", "is_user": True, "mes": "Hi"},
    {"name": "Mira", "is_user": False, "mes": "Hello."},
    {"name": "Ann", "is_user": True, "mes": "What now?"},
]
MAIN = "{{getvar::mood}}|{{getvar::hp}}|{{getvar::place}}|{{getvar::ok}}|{{getvar::weather}}"


def write_preset(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "p.json"
    prompts = [
        {"identifier": "main", "role": "system", "content": content},
        {"identifier": "chatHistory", "marker": True},
    ]
    path.write_text(json.dumps({"prompts": prompts}))
    return path


def write_chat(tmp_path: Path, header: dict[str, Any] = HEADER) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [header, *LINES]) + "\n")
    return path


def first(result: compiler.CompileResult) -> str:
    return str(result.request["messages"][0]["content"])


def compile_run(tmp_path: Path, content: str, **run: Any) -> compiler.CompileResult:
    context = {"chat": "chat.jsonl", "character": {"name": "Mira"}, **run}
    (tmp_path / "run.json").write_text(json.dumps(context))
    return compiler.compile(write_preset(tmp_path, content), context=tmp_path / "run.json")


def test_a_chat_files_variables_fill_getvar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_chat(tmp_path)
    result = compile_run(tmp_path, MAIN)
    assert first(result) == "calm|10|inn|true|"
    assert not [w for w in result.warnings if w.code == "template.unknown_st_macro"]
    # the command line reads the same file the same way
    assert main(["compile", str(tmp_path / "p.json"), "--context", str(tmp_path / "run.json")]) == 0
    request = json.loads(capsys.readouterr().out)
    assert request["messages"][0]["content"] == "calm|10|inn|true|"


def test_the_run_wins_over_chat_metadata_over_the_file_name_by_name(tmp_path: Path) -> None:
    write_chat(tmp_path)
    result = compile_run(
        tmp_path,
        MAIN,
        chatMetadata={"variables": {"hp": 7, "weather": "rain"}},
        variables={"place": "road"},
    )
    # mood and ok from the file, hp and weather from chatMetadata, place from variables
    assert first(result) == "calm|7|road|true|rain"


def test_inline_chat_metadata_variables_fill_getvar(tmp_path: Path) -> None:
    context = {
        "chat": [{"role": "user", "content": "Hi"}],
        "chatMetadata": {"variables": {"mood": "tense", "hp": 2.5}},
        "variables": {"hp": 3.0},
    }
    result = compiler.compile(write_preset(tmp_path, MAIN), context=context)
    assert first(result) == "tense|3|||"


def test_setvar_and_addvar_work_on_the_chats_variables(tmp_path: Path) -> None:
    write_chat(tmp_path)
    text = "{{addvar::hp::5}}{{getvar::hp}} {{incvar::hp}} {{setvar::mood::glad}}{{getvar::mood}}"
    assert first(compile_run(tmp_path, text)) == "15 16 glad"


def test_a_variable_of_the_wrong_type_is_refused_where_it_is(tmp_path: Path) -> None:
    write_chat(tmp_path, {"chat_metadata": {"variables": {"hp": {"max": 10}}}})
    with pytest.raises(ContextError) as info:
        compile_run(tmp_path, MAIN)
    assert info.value.code == "context.invalid_chat"
    assert info.value.path == "line 1.chat_metadata.variables.hp"
    context = {"chat": [], "chatMetadata": {"variables": {"a": [1]}}}
    with pytest.raises(ContextError) as inline:
        compiler.compile(write_preset(tmp_path, MAIN), context=context)
    assert inline.value.code == "context.invalid_context"
    assert inline.value.path == "chatMetadata.variables.a"


def test_null_variables_are_none(tmp_path: Path) -> None:
    write_chat(tmp_path, {"chat_metadata": {"variables": None}})
    assert first(compile_run(tmp_path, MAIN)) == "||||"


# -- {{input}}: SillyTavern's input box, what the user just sent --

INPUT_CHATS = [
    ([{"role": "user", "content": "Hi"}], "Hi"),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}], ""),
    ([], ""),  # an empty chat: the card's greeting is the assistant's
    ([{"role": "assistant", "content": "Yo"}, {"role": "system", "content": "Narrator"}], ""),
    (
        [
            {"role": "user", "content": "Read it"},
            {
                "role": "assistant",
                "content": "",
                "toolCalls": [{"id": "c1", "name": "chat.search", "arguments": "{}"}],
            },
            {"role": "tool", "toolCallId": "c1", "content": "found"},
        ],
        "",
    ),
]


@pytest.mark.parametrize(("chat", "expected"), INPUT_CHATS)
def test_input_is_the_newest_message_when_the_user_sent_it(
    tmp_path: Path, chat: list[dict[str, Any]], expected: str
) -> None:
    context = {"chat": chat, "character": {"name": "Mira", "first_mes": "Welcome"}}
    result = compiler.compile(write_preset(tmp_path, "[{{input}}]"), context=context)
    assert first(result) == f"[{expected}]"
    assert not [w for w in result.warnings if w.code == "template.unknown_st_macro"]


def test_input_from_a_chat_file_and_from_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_chat(tmp_path)
    assert first(compile_run(tmp_path, "You said: {{input}}")) == "You said: What now?"
    path = write_preset(tmp_path, "You said: {{input}}")
    assert main(["check", str(path)]) == 0  # filled: no template.unknown_st_macro
    assert capsys.readouterr().out == "ok: 1 file, 0 errors, 0 warnings\n"


def test_a_number_variable_prints_as_javascript_prints_it(tmp_path: Path) -> None:
    numbers = {"a": 1e21, "b": 1e-7, "c": 0.00001, "d": 123456789012345678901234567890, "e": 3.0}
    write_chat(tmp_path, {"chat_metadata": {"variables": numbers}})
    result = compile_run(tmp_path, "|".join(f"{{{{getvar::{k}}}}}" for k in numbers))
    # SillyTavern reads the header with JSON.parse and prints each with String()
    assert first(result) == "1e+21|1e-7|0.00001|1.2345678901234568e+29|3"
    added = compile_run(tmp_path, "{{addvar::b::0}}{{getvar::b}}")  # addvar prints the same
    assert first(added) == "1e-7"
