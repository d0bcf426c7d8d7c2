"""SillyTavern's marker formats: personality_format, scenario_format, wi_format, examples."""

from __future__ import annotations

import json
from pathlib import Path

import compiler

CARD = {
    "name": "Aqua",
    "description": "A goddess.",
    "personality": "cheerful",
    "scenario": "in the square",
    "mes_example": "<START>\n{{user}}: Hi\n{{char}}: Hello!\n<START>\n{{user}}: Bye",
}


def compile_with(tmp_path: Path, extra: dict[str, str]) -> list[str]:
    ids = ["charPersonality", "scenario", "worldInfoBefore", "dialogueExamples", "chatHistory"]
    preset = {
        "prompts": [{"identifier": i, "marker": True} for i in ids],
        "prompt_order": [
            {"character_id": 100001, "order": [{"identifier": i, "enabled": True} for i in ids]}
        ],
        **extra,
    }
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(preset))
    ctx = {
        "character": CARD,
        "persona": {"name": "Kazuma", "description": ""},
        "worldInfo": [{"content": "Axel is a town.", "position": "before"}],
        "chat": [{"role": "user", "content": "hey"}],
    }
    result = compiler.compile(path, context=ctx, mode="legacy")
    return [m["content"] for m in result.request["messages"]]


def test_preset_formats_apply(tmp_path: Path) -> None:
    got = compile_with(
        tmp_path,
        {
            "personality_format": "[{{char}}'s personality: {{personality}}]",
            "scenario_format": "[Circumstances: {{scenario}}]",
            "wi_format": "World: {0}",
            "new_example_chat_prompt": "[Example Chat]",
        },
    )
    assert got == [
        "[Aqua's personality: cheerful]",
        "[Circumstances: in the square]",
        "World: Axel is a town.",
        "[Example Chat]\nKazuma: Hi\nAqua: Hello!\n[Example Chat]\nKazuma: Bye",
        "hey",
    ]


def test_defaults_without_formats(tmp_path: Path) -> None:
    got = compile_with(tmp_path, {})
    assert got[:3] == ["cheerful", "in the square", "Axel is a town."]
    assert got[3].startswith("[Example Chat]\nKazuma: Hi")
