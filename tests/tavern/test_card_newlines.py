"""Card and persona text reach the request without ``\\r``, as SillyTavern's
``baseChatReplace`` sends them, and so does chat text (``setOpenAIMessages``; st-oracle
capture synth_chat_text); preset text is kept as written (issue 12, item 20)."""

from __future__ import annotations

import json
from pathlib import Path

import compiler

IDS = ["main", "charDescription", "personaDescription", "dialogueExamples", "chatHistory"]


def test_card_and_persona_text_lose_carriage_returns(tmp_path: Path) -> None:
    preset = {
        "prompts": [{"identifier": i, "marker": True} for i in IDS[1:]]
        + [{"identifier": "main", "role": "system", "content": "Main\r\nline"}],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": i} for i in IDS]}],
        "new_chat_prompt": "",
        "new_example_chat_prompt": "",
    }
    card = {
        "name": "Aqua",
        "description": "d1\r\nd2",
        "mes_example": "<START>\r\n{{user}}: x\ry\r\n{{char}}: z",
    }
    ctx = {
        "character": card,
        "persona": {"name": "Kazuma", "description": "p1\r\np2"},
        "chat": [{"role": "user", "content": "c1\r\nc2"}],
    }
    (tmp_path / "preset.json").write_text(json.dumps(preset))
    result = compiler.compile(tmp_path / "preset.json", context=ctx, mode="legacy")
    got = [m["content"] for m in result.request["messages"]]
    assert got == ["Main\r\nline", "d1\nd2", "p1\np2", "xy", "z", "c1\nc2"]


def test_a_card_system_prompt_override_loses_them_too(tmp_path: Path) -> None:
    preset = {
        "prompts": [{"identifier": "main", "role": "system", "content": "preset main"}],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main"}]}],
    }
    card = {"spec": "chara_card_v2", "data": {"name": "Aqua", "system_prompt": "s1\r\ns2"}}
    (tmp_path / "preset.json").write_text(json.dumps(preset))
    result = compiler.compile(tmp_path / "preset.json", context={"character": card}, mode="legacy")
    assert [m["content"] for m in result.request["messages"]] == ["s1\ns2"]
