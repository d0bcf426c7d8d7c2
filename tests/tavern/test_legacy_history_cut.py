"""Legacy mode cuts history as SillyTavern does: oldest first, no note, no summary (issue 12,
item 16); agent mode keeps its note."""

from __future__ import annotations

import json
from pathlib import Path

import compiler

IDS = ["main", "chatHistory"]
CHAT = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "word " * 30}
    for i in range(60)
]


def compile_mode(tmp_path: Path, mode: compiler.PresetMode, budget: int) -> list[str]:
    preset = {
        "prompts": [
            {"identifier": "main", "role": "system", "content": "Main"},
            {"identifier": "chatHistory", "marker": True},
        ],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": i} for i in IDS]}],
        "new_chat_prompt": "",
    }
    (tmp_path / "preset.json").write_text(json.dumps(preset))
    result = compiler.compile(
        tmp_path / "preset.json", context={"chat": CHAT}, mode=mode, budget=budget
    )
    return [str(m["content"]) for m in result.request["messages"]]


def test_legacy_keeps_the_newest_messages_and_nothing_in_place_of_the_rest(
    tmp_path: Path,
) -> None:
    got = compile_mode(tmp_path, "legacy", 600)
    assert got[0] == "Main"
    chat = got[1:]
    assert 0 < len(chat) < len(CHAT)
    assert chat == [m["content"] for m in CHAT[-len(chat) :]]


def test_agent_mode_says_what_was_cut(tmp_path: Path) -> None:
    got = compile_mode(tmp_path, "agent", 1500)
    assert any(t.startswith("[Earlier conversation:") for t in got)
