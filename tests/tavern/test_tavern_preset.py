"""SillyTavern chat-completion presets: reading, prompt order, markers, and broken inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.errors import ContextError
from compiler.tavern import ordered_prompts, read_preset

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
DEFAULT = CORPUS / "presets" / "st-default-2024.json"
needs_corpus = pytest.mark.skipif(
    not DEFAULT.is_file(), reason="../shared/corpus is absent (st-default-2024.json not available)"
)


def prompt(identifier: str, **kw: Any) -> dict[str, Any]:
    return {"identifier": identifier, "name": identifier, **kw}


def order(character_id: int, *ids: str, off: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "character_id": character_id,
        "order": [{"identifier": i, "enabled": i not in off} for i in ids],
    }


@needs_corpus
def test_default_preset_uses_the_100001_order() -> None:
    preset = read_preset(DEFAULT)
    got = [p.identifier for p in ordered_prompts(preset)]
    assert got == [
        "main",
        "worldInfoBefore",
        "personaDescription",
        "charDescription",
        "charPersonality",
        "scenario",
        "nsfw",
        "worldInfoAfter",
        "dialogueExamples",
        "chatHistory",
        "jailbreak",
    ]
    assert "enhanceDefinitions" not in got  # disabled in the order


@needs_corpus
def test_default_preset_prompt_details() -> None:
    preset = read_preset(DEFAULT)
    by_id = {p.identifier: p for p in ordered_prompts(preset, include_disabled=True)}
    assert not by_id["enhanceDefinitions"].enabled
    assert by_id["enhanceDefinitions"].kind == "default"
    main = by_id["main"]
    assert (main.role, main.system_prompt, main.kind, main.source_index) == (
        "system",
        True,
        "default",
        0,
    )
    assert "{{char}}" in main.content
    assert by_id["chatHistory"].is_marker and by_id["chatHistory"].content == ""
    assert by_id["charDescription"].source_index == 8
    assert preset.where(by_id["charDescription"]) == f"{DEFAULT}#prompts[8].content"
    assert all(p.injection_order == 100 and p.injection_position == 0 for p in by_id.values())
    assert preset.extra["temperature"] == 1 and preset.extra["openai_max_context"] == 4095
    assert "prompts" not in preset.extra and preset.agent is None


def test_falls_back_to_100000_then_to_prompts_order() -> None:
    prompts = [prompt("main", content="m"), prompt("jailbreak", content="j"), prompt("x")]
    legacy = {"prompts": prompts, "prompt_order": [order(100000, "jailbreak", "main")]}
    assert [p.identifier for p in ordered_prompts(read_preset(legacy))] == ["jailbreak", "main"]
    other = {"prompts": prompts, "prompt_order": [order(7, "x")]}
    assert [p.identifier for p in ordered_prompts(read_preset(other))] == ["main", "jailbreak", "x"]


def test_prefers_100001_and_skips_unknown_identifiers() -> None:
    data = {
        "prompts": [prompt("main"), prompt("nsfw")],
        "prompt_order": [
            order(100000, "main", "nsfw"),
            order(100001, "nsfw", "ghost", "main", off=("main",)),
        ],
    }
    preset = read_preset(data)
    # a disabled main stays, empty (SillyTavern's PromptManager keeps it for card overrides)
    assert [(p.identifier, p.content) for p in ordered_prompts(preset)] == [
        ("nsfw", ordered_prompts(preset)[0].content),
        ("main", ""),
    ]
    assert [(p.identifier, p.enabled) for p in ordered_prompts(preset, include_disabled=True)] == [
        ("nsfw", True),
        ("main", False),
    ]


def test_agent_markers_injection_fields_and_raw_extensions() -> None:
    data = {
        "temperature": 0.7,
        "extensions": {"tauritavern": {"agentProfiles": {"version": 1, "items": []}}},
        "agent": {"defaultProfile": "writer"},
        "prompts": [
            prompt("agentSystemPrompt", marker=True, system_prompt=True),
            prompt("agentTask", role="user", marker=True),
            prompt(
                "note",
                role="assistant",
                content="Remember.",
                injection_position=1,
                injection_depth=2,
                injection_order=50,
                injection_trigger=["normal"],
                forbid_overrides=True,
                futureField=3,
            ),
        ],
    }
    preset = read_preset(data)
    sys_p, task, note = ordered_prompts(preset)
    assert sys_p.kind == "agent_marker" and task.kind == "agent_marker" and task.role == "user"
    assert note.kind == "custom" and note.in_chat and not note.is_marker
    assert (note.injection_depth, note.injection_order, note.injection_trigger) == (
        2,
        50,
        ["normal"],
    )
    assert note.forbid_overrides and note.extra == {"futureField": 3}
    assert preset.extensions["tauritavern"]["agentProfiles"]["version"] == 1
    assert preset.agent == {"defaultProfile": "writer"}
    assert preset.extra == {"temperature": 0.7}


def test_nulls_mean_defaults() -> None:
    preset = read_preset({"prompts": [prompt("main", role=None, content=None)]})
    assert (preset.prompts[0].role, preset.prompts[0].content) == ("system", "")


@pytest.mark.parametrize(
    ("data", "path", "needle"),
    [
        ({"temperature": 1}, "prompts", "not a chat-completion preset"),
        ({"prompts": {}}, "prompts", "not a chat-completion preset"),
        ({"prompts": [prompt("a"), {"name": "x"}]}, "prompts[1].identifier", "identifier"),
        ({"prompts": [prompt("a"), prompt("b", role="narrator")]}, "prompts[1].role", "role"),
        ({"prompts": [prompt("a", injection_depth=-1)]}, "prompts[0].injection_depth", ""),
        ({"prompts": [prompt("a"), prompt("a")]}, "prompts[1].identifier", "duplicate"),
        ({"prompts": ["main"]}, "prompts[0]", "object"),
        (
            {"prompts": [prompt("a")], "prompt_order": [order(100001, "a", "a")]},
            "prompt_order[0].order[1].identifier",
            "twice",
        ),
        ({"prompts": [], "prompt_order": [{"order": []}]}, "prompt_order[0].character_id", ""),
    ],
)
def test_invalid_presets(data: dict[str, Any], path: str, needle: str) -> None:
    with pytest.raises(ContextError) as info:
        read_preset(data, origin="p.json")
    err = info.value
    assert (err.code, err.path, err.file) == ("context.invalid_preset", path, "p.json")
    assert needle in err.message


def test_broken_preset_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"prompts": [\n  {"identifier": "main",}\n]}', "utf-8")
    with pytest.raises(ContextError) as info:
        read_preset(path)
    err = info.value
    assert err.code == "context.invalid_json" and err.file == str(path)
    assert err.span is not None and err.span.line == 2


def test_preset_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"prompts": [prompt("main", content="hi")]}), "utf-8")
    preset = read_preset(path)
    assert preset.source == str(path) and preset.prompts[0].content == "hi"


def test_without_prompt_order_sillytaverns_default_order_applies() -> None:
    """Issue 12, item 10: the card no longer lands after the chat; an entry the default
    order does not name stays after the named entry it follows in prompts[]."""
    ids = ["chatHistory", "charDescription", "custom", "enhanceDefinitions", "main", "nsfw"]
    preset = read_preset({"prompts": [prompt(i) for i in ids]})
    assert [p.identifier for p in ordered_prompts(preset)] == [
        "main",
        "charDescription",
        "custom",
        "nsfw",
        "chatHistory",
    ]


def test_a_long_prompt_order_is_checked_in_proportion() -> None:
    """Duplicates in a prompt order of thousands of entries are found by look-up,
    not by scanning the entries before each one."""
    from compiler.tavern.preset import MAX_PROMPTS, parse_preset

    order = [{"identifier": f"p{i}", "enabled": True} for i in range(MAX_PROMPTS - 1)]
    data = {"prompts": [], "prompt_order": [{"character_id": 100001, "order": order}]}
    parse_preset(data, file="big.json")
    data["prompt_order"][0]["order"].append({"identifier": "p7", "enabled": False})
    with pytest.raises(ContextError, match="'p7' appears twice"):
        parse_preset(data, file="big.json")
