"""A preset's ``names_behavior`` decides how chat speakers reach the request (issue 12,
item 20): SillyTavern's default 0 sends no ``name`` in a one-to-one chat."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.errors import ContextError

CHAT = [
    {"role": "user", "content": "hi", "name": "Kazuma"},
    {"role": "assistant", "content": "yo", "name": "Aqua"},
    {"role": "system", "content": "It rains.", "name": "Narrator"},
]


def chat_messages(tmp_path: Path, **settings: Any) -> list[dict[str, Any]]:
    preset = {
        "prompts": [{"identifier": "chatHistory", "marker": True}],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": "chatHistory"}]}],
        "new_chat_prompt": "",
        **settings,
    }
    (tmp_path / "preset.json").write_text(json.dumps(preset))
    result = compiler.compile(tmp_path / "preset.json", context={"chat": CHAT}, mode="legacy")
    return list(result.request["messages"])


def test_default_sends_no_names(tmp_path: Path) -> None:
    got = chat_messages(tmp_path)
    assert [m["content"] for m in got] == ["hi", "yo", "It rains."]
    assert not any("name" in m for m in got)


def test_none_sends_no_names(tmp_path: Path) -> None:
    assert not any("name" in m for m in chat_messages(tmp_path, names_behavior=-1))


def test_completion_keeps_the_name_field(tmp_path: Path) -> None:
    got = chat_messages(tmp_path, names_behavior=1)
    assert [m.get("name") for m in got] == ["Kazuma", "Aqua", "Narrator"]


def test_content_prefixes_speakers_but_not_the_narrator(tmp_path: Path) -> None:
    got = chat_messages(tmp_path, names_behavior=2)
    assert [m["content"] for m in got] == ["Kazuma: hi", "Aqua: yo", "It rains."]
    assert not any("name" in m for m in got)


@pytest.mark.parametrize("value", [3, "1", True])
def test_a_wrong_value_is_a_coded_error(tmp_path: Path, value: Any) -> None:
    with pytest.raises(ContextError) as err:
        chat_messages(tmp_path, names_behavior=value)
    assert err.value.code == "context.invalid_preset"
    assert "names_behavior" in str(err.value)


def test_unnamed_speakers_are_the_persona_and_the_card(tmp_path: Path) -> None:
    """Every SillyTavern chat message carries its speaker's name: an unnamed user message is
    the persona's, an unnamed assistant message the card's (st-oracle captures
    synth_names_completion, synth_names_content); system messages stay unnamed."""
    preset = {
        "prompts": [{"identifier": "chatHistory", "marker": True}],
        "new_chat_prompt": "",
    }
    ctx = {
        "character": {"name": "Aqua", "description": "A goddess."},
        "persona": {"name": "Kazuma"},
        "chat": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "yo"},
            {"role": "system", "content": "It rains."},
        ],
    }
    path = tmp_path / "preset.json"
    for behavior, want in (
        (1, [("Kazuma", "hi"), ("Aqua", "yo"), (None, "It rains.")]),
        (2, [(None, "Kazuma: hi"), (None, "Aqua: yo"), (None, "It rains.")]),
        (0, [(None, "hi"), (None, "yo"), (None, "It rains.")]),
    ):
        path.write_text(json.dumps({**preset, "names_behavior": behavior}))
        messages = compiler.compile(path, context=ctx, mode="legacy").request["messages"]
        assert [(m.get("name"), m["content"]) for m in messages] == want


def test_default_prefixes_another_personas_message_and_quotes_wrap_user_messages(
    tmp_path: Path,
) -> None:
    """names_behavior 0: a user message another persona wrote starts with its name (only
    when the run names its persona); wrap_in_quotes quotes user messages, prefix included;
    \\r goes (st-oracle captures synth_chat_text, synth_wrap_in_quotes)."""
    chat = [
        {"role": "user", "content": "Bob here.\r\nHi.", "name": "Bob"},
        {"role": "assistant", "content": "yo", "name": "Aqua"},
        {"role": "user", "content": "me", "name": "Kazuma"},
    ]
    path = tmp_path / "preset.json"
    path.write_text(json.dumps({"prompts": [{"identifier": "chatHistory", "marker": True}]}))
    ctx = {"persona": {"name": "Kazuma"}, "chat": chat}

    def contents(**extra: Any) -> list[str]:
        path.write_text(
            json.dumps({"prompts": [{"identifier": "chatHistory", "marker": True}], **extra})
        )
        messages = compiler.compile(path, context=ctx, mode="legacy").request["messages"]
        return [m["content"] for m in messages][1:]

    assert contents() == ["Bob: Bob here.\nHi.", "yo", "me"]
    assert contents(wrap_in_quotes=True) == ['"Bob: Bob here.\nHi."', "yo", '"me"']
    assert contents(names_behavior=-1) == ["Bob here.\nHi.", "yo", "me"]
    without_persona = compiler.compile(path, context={"chat": chat}, mode="legacy")
    assert without_persona.request["messages"][1]["content"] == "Bob here.\nHi."
