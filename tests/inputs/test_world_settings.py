"""worldInfoSettings: SillyTavern's global world info settings, its shipped defaults
(issue 12, item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.errors import ContextError
from compiler.inputs.run import RunContext, WorldInfoSettings, load_context
from compiler.st.world.run import activated_world


def activated(
    tmp_path: Path,
    entries: dict[str, dict[str, Any]],
    chat: list[str | tuple[str | None, str]],
    **settings: Any,
) -> list[str]:
    book = {"entries": {str(i): {"uid": i, **e} for i, e in enumerate(entries.values())}}
    for i, name in enumerate(entries):
        book["entries"][str(i)]["comment"] = name
    (tmp_path / "book.json").write_text(json.dumps(book))
    ctx = load_context({"worldInfo": "book.json", "worldInfoSettings": settings}, tmp_path)
    got = activated_world(ctx, chat, [])  # type: ignore[arg-type]
    return sorted(str(e["comment"]) for e in got)


def test_the_defaults_are_sillytaverns_shipped_settings() -> None:
    wi = RunContext().world_info_settings
    assert wi == WorldInfoSettings(
        world_info_depth=2,
        world_info_case_sensitive=False,
        world_info_match_whole_words=True,
        world_info_recursive=True,
        world_info_include_names=True,
        world_info_budget=25,
        world_info_budget_cap=0,
        world_info_min_activations=0,
        world_info_max_recursion_steps=0,
        world_info_character_strategy=1,
    )


def test_unknown_or_bad_settings_are_errors(tmp_path: Path) -> None:
    for bad in ({"world_info_dept": 2}, {"world_info_depth": -1}, {"worldInfoDepth": 2}):
        with pytest.raises(ContextError):
            load_context({"worldInfoSettings": bad}, tmp_path)


def test_scan_depth_defaults_to_two(tmp_path: Path) -> None:
    entries = {"old": {"key": ["dragon"]}, "new": {"key": ["elf"]}}
    chat = ["a dragon", "x", "an elf"]
    assert activated(tmp_path, entries, chat) == ["new"]
    assert activated(tmp_path, entries, chat, world_info_depth=3) == ["new", "old"]


def test_whole_words_by_default(tmp_path: Path) -> None:
    entries = {"aim": {"key": ["AIM"]}, "city": {"key": ["City"]}, "two": {"key": ["old wood"]}}
    chat = ["I claimed the velocity of old woods"]
    assert activated(tmp_path, entries, chat) == ["two"]  # a key with a space: substring
    got = activated(tmp_path, entries, chat, world_info_match_whole_words=False)
    assert got == ["aim", "city", "two"]


def test_case_insensitive_by_default(tmp_path: Path) -> None:
    entries = {"e": {"key": ["Dragon"]}}
    assert activated(tmp_path, entries, ["a dragon"]) == ["e"]
    assert activated(tmp_path, entries, ["a dragon"], world_info_case_sensitive=True) == []


def test_recursion_by_default_and_max_steps(tmp_path: Path) -> None:
    entries = {
        "a": {"key": ["alpha"], "content": "see beta"},
        "b": {"key": ["beta"], "content": "see gamma"},
        "c": {"key": ["gamma"], "content": "end"},
    }
    assert activated(tmp_path, entries, ["alpha"]) == ["a", "b", "c"]
    assert activated(tmp_path, entries, ["alpha"], world_info_recursive=False) == ["a"]
    assert activated(tmp_path, entries, ["alpha"], world_info_max_recursion_steps=1) == ["a"]
    assert activated(tmp_path, entries, ["alpha"], world_info_max_recursion_steps=2) == ["a", "b"]


def test_names_are_scanned_as_name_colon_text(tmp_path: Path) -> None:
    entries = {"e": {"key": ["Aqua:"]}, "w": {"key": ["Aqua"]}}
    chat: list[str | tuple[str | None, str]] = [("Aqua", "hello")]
    assert activated(tmp_path, entries, chat) == ["e", "w"]
    assert activated(tmp_path, entries, chat, world_info_include_names=False) == []


def test_a_compile_scans_the_speakers_names(tmp_path: Path) -> None:
    book = {"entries": {"0": {"uid": 0, "key": ["Kazuma"], "content": "NAMED"}}}
    (tmp_path / "book.json").write_text(json.dumps(book))
    ctx = {
        "worldInfo": "book.json",
        "persona": {"name": "Kazuma"},
        "chat": [{"role": "user", "content": "hi"}],
    }
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    template = "<<agent.world.activated>>\n<<agent.chat.history>>"
    result = compiler.compile_string(template, context=tmp_path / "run.json")
    assert "NAMED" in json.dumps(result.request)
    ctx["worldInfoSettings"] = {"world_info_include_names": False}
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    result = compiler.compile_string(template, context=tmp_path / "run.json")
    assert "NAMED" not in json.dumps(result.request)
