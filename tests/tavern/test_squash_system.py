"""A preset's ``squash_system_messages`` merges runs of unnamed system messages as
SillyTavern does, never ``new_chat_prompt``, ``new_example_chat_prompt`` (SillyTavern's
``newChat``) or named example messages (issue 12, item 10; st-oracle capture synth_squash)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler

IDS = ["main", "charDescription", "dialogueExamples", "chatHistory", "jailbreak"]


def messages(tmp_path: Path, squash: Any) -> list[tuple[str, str, str | None]]:
    preset = {
        "prompts": [
            {"identifier": "main", "role": "system", "content": "Main"},
            {"identifier": "charDescription", "marker": True},
            {"identifier": "dialogueExamples", "marker": True},
            {"identifier": "chatHistory", "marker": True},
            {"identifier": "jailbreak", "role": "system", "content": "JB"},
        ],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": i} for i in IDS]}],
        "squash_system_messages": squash,
    }
    ctx = {
        "character": {"name": "Aqua", "description": "Desc", "mes_example": "{{char}}: Yo"},
        "chat": [
            {"role": "system", "content": "It rains."},
            {"role": "system", "content": "Thunder."},
            {"role": "user", "content": "hi"},
        ],
    }
    (tmp_path / "preset.json").write_text(json.dumps(preset))
    result = compiler.compile(tmp_path / "preset.json", context=ctx, mode="legacy")
    return [(m["role"], m["content"], m.get("name")) for m in result.request["messages"]]


def test_runs_of_unnamed_system_messages_merge(tmp_path: Path) -> None:
    assert messages(tmp_path, True) == [
        ("system", "Main\nDesc", None),
        ("system", "[Example Chat]", None),
        ("system", "Yo", "example_assistant"),
        ("system", "[Start a new Chat]", None),
        ("system", "It rains.\nThunder.", None),
        ("user", "hi", None),
        ("system", "JB", None),
    ]


def test_off_by_default_and_a_value_but_true_or_false_refused(tmp_path: Path) -> None:
    for value in (False, None):
        got = messages(tmp_path, value)
        assert [c for _, c, _ in got][:3] == ["Main", "Desc", "[Example Chat]"]
        assert len(got) == 9
    with pytest.raises(compiler.ContextError) as err:
        messages(tmp_path, "true")
    assert err.value.code == "context.invalid_preset"
