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
