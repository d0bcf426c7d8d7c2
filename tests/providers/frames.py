"""The shared frames every provider dialect is held to (tests/providers/test_conformance.py
and each provider's own SDK tests): a plain chat, tools and their results, a long history
cut by the budget, mid-conversation system text, a SillyTavern preset from the corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
PRESET = CORPUS / "presets" / "st-default-2024.json"

TOOLS = [
    {
        "name": "dice.roll",
        "description": "Roll dice.",
        "parameters": {
            "type": "object",
            "properties": {"sides": {"type": "integer", "description": "Sides."}},
            "required": ["sides"],
        },
    }
]

CHAT = [
    {"role": "user", "content": "Hello there.", "name": "Ann"},
    {"role": "assistant", "content": "Hi! Shall I roll?"},
    {"role": "user", "content": "Roll a d20."},
    {
        "role": "assistant",
        "content": None,
        "toolCalls": [{"id": "call_1", "name": "dice.roll", "arguments": {"sides": 20}}],
    },
    {"role": "tool", "toolCallId": "call_1", "content": "17"},
    {"role": "assistant", "content": "You rolled 17."},
    {"role": "user", "content": "Nice, continue the story."},
]

#: name -> (template text, run context, compile keywords)
CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "plain chat": (
        "You are a storyteller.\n<<agent.chat.history>>",
        {"chat": [{"role": "user", "content": "Tell me a story."}]},
        {},
    ),
    "tools and results": (
        "System.\n<<agent.tools.available>>\n<<agent.chat.history>>\n<<agent.tool_results>>",
        {
            "chat": CHAT,
            "tools": TOOLS,
            "toolResults": [
                {"callId": "call_2", "tool": "dice.roll", "arguments": {"sides": 6}, "content": "4"}
            ],
        },
        {"profile": None},
    ),
    "long history cut": (
        "You are a storyteller.\n<<agent.chat.history>>",
        {
            "chat": [
                {"role": "user" if i % 2 else "assistant", "content": f"Turn {i}. " + "word " * 30}
                for i in range(300)
            ]
        },
        {"budget": 1500},
    ),
    "system text mid-conversation": (
        "Top rules.\n<<agent.chat.history>>\nAfter the chat: stay in character.",
        {"chat": CHAT[:3]},
        {},
    ),
    "cache stable": (
        "Stable rules.\n<<agent.tools.available>>\n<<agent.chat.history>>",
        {
            "chat": [
                {"role": "user" if i % 2 else "assistant", "content": f"Turn {i}. " + "word " * 20}
                for i in range(120)
            ],
            "tools": TOOLS,
        },
        {"budget": 2500, "cache_stable": True},
    ),
}


def preset_case() -> tuple[Path, dict[str, Any]] | None:
    """The corpus preset and a run context for it (None: the corpus is absent)."""
    if not PRESET.is_file():
        return None
    return PRESET, {"chat": CHAT[:3], "persona": {"name": "Ann", "description": "A traveller."}}


def dumps(request: dict[str, Any]) -> str:
    return json.dumps(request, ensure_ascii=False, sort_keys=True)
