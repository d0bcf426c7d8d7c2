"""World info positions in a SillyTavern preset: 0/1 markers, 4 @D in chat, 5/6 around the
dialogue examples, 2/3 around the Author's Note (issue 12, items 3 and 9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import compiler

CARD = {"name": "Aqua", "description": "", "mes_example": "<START>\n{{user}}: Hi\n{{char}}: Yo"}
IDS = ["worldInfoBefore", "worldInfoAfter", "dialogueExamples", "chatHistory"]


def compile_world(
    tmp_path: Path, entries: list[dict[str, Any]], chat: list[dict[str, Any]] | None = None
) -> compiler.CompileResult:
    preset = {
        "prompts": [{"identifier": i, "marker": True} for i in IDS]
        + [
            {
                "identifier": "inj",
                "role": "system",
                "content": "PRESET@1",
                "injection_position": 1,
                "injection_depth": 1,
            }
        ],
        "prompt_order": [
            {
                "character_id": 100001,
                "order": [{"identifier": i, "enabled": True} for i in [*IDS, "inj"]],
            }
        ],
    }
    (tmp_path / "preset.json").write_text(json.dumps(preset))
    book = {"entries": {str(i): {"uid": i, "constant": True, **e} for i, e in enumerate(entries)}}
    (tmp_path / "book.json").write_text(json.dumps(book))
    ctx = {
        "character": CARD,
        "persona": {"name": "Kazuma", "description": ""},
        "worldInfo": "book.json",
        "chat": chat
        if chat is not None
        else [
            {"role": "user", "content": "u1"},
            {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "u2"},
        ],
    }
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    return compiler.compile(tmp_path / "preset.json", context=tmp_path / "run.json", mode="legacy")


def pairs(result: compiler.CompileResult) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in result.request["messages"]]


def test_before_and_after_fill_their_markers(tmp_path: Path) -> None:
    got = pairs(
        compile_world(tmp_path, [{"content": "B", "position": 0}, {"content": "A", "position": 1}])
    )
    assert got[:2] == [("system", "B"), ("system", "A")]


def test_at_depth_entries_are_grouped_by_depth_and_role(tmp_path: Path) -> None:
    entries = [
        {"content": "D0-sys-200", "position": 4, "depth": 0, "role": 0, "order": 200},
        {"content": "D0-sys-100", "position": 4, "depth": 0, "role": 0, "order": 100},
        {"content": "D1-sys", "position": 4, "depth": 1, "role": 0},
        {"content": "D2-user", "position": 4, "depth": 2, "role": 1},
        {"content": "D9-asst", "position": 4, "depth": 9, "role": 2},
    ]
    got = pairs(compile_world(tmp_path, entries))
    assert got[-7:] == [
        ("assistant", "D9-asst"),  # past the start: the top of the history
        ("user", "u1"),
        ("user", "D2-user"),
        ("assistant", "a1"),
        ("system", "PRESET@1\nD1-sys"),  # after the preset's own entry at that depth and role
        ("user", "u2"),
        ("system", "D0-sys-100\nD0-sys-200"),  # ascending order: the higher nearer the chat
    ]
    assert not [w for w in compile_world(tmp_path, entries).warnings if "world" in w.code]


def test_at_depth_never_splits_a_tool_call_from_its_result(tmp_path: Path) -> None:
    chat = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "name": "chat.search", "arguments": {}}],
        },
        {"role": "tool", "content": "found", "tool_call_id": "c1"},
    ]
    entries = [{"content": "AT1", "position": 4, "depth": 1, "role": 0}]
    result = compile_world(tmp_path, entries, chat)
    roles = [(m["role"], m.get("content")) for m in result.request["messages"]]
    at = roles.index(("system", "PRESET@1\nAT1"))
    assert roles[at + 1][0] == "assistant" and roles[at + 2][0] == "tool"


def test_example_entries_wrap_the_card_examples(tmp_path: Path) -> None:
    entries = [
        {"content": "{{user}}: top low", "position": 5, "order": 1},
        {"content": "{{user}}: top high", "position": 5, "order": 2},
        {"content": "{{char}}: bottom", "position": 6},
    ]
    got = [c for _, c in pairs(compile_world(tmp_path, entries))]
    start = got.index("[Example Chat]")
    # each entry is its own example block: top ones (highest order first), the card's, bottom
    assert got[start : start + 9] == [
        "[Example Chat]",
        "top high",
        "[Example Chat]",
        "top low",
        "[Example Chat]",
        "Hi",
        "Yo",
        "[Example Chat]",
        "bottom",
    ]


def test_authors_note_positions_wrap_the_authors_note(tmp_path: Path) -> None:
    """With no note text the note is still "inserted" (interval 1), so SillyTavern sends the
    entries at the note's place: ``top\n\nbottom`` in chat at depth 4 (world-info.js)."""
    entries = [
        {"content": "AN top", "position": 2, "comment": "top"},
        {"content": "AN bottom", "position": 3},
        {"content": "kept", "position": 0},
    ]
    result = compile_world(tmp_path, entries)
    texts = [c for _, c in pairs(result)]
    assert "kept" in texts and "AN top\n\nAN bottom" in texts
    assert not [w for w in result.warnings if w.code.startswith("world.")]


def test_inline_entries_take_numeric_positions(tmp_path: Path) -> None:
    (tmp_path / "preset.json").write_text(
        json.dumps(
            {
                "prompts": [{"identifier": i, "marker": True} for i in IDS],
                "prompt_order": [
                    {"character_id": 100001, "order": [{"identifier": i} for i in IDS]}
                ],
            }
        )
    )
    ctx = {
        "worldInfo": [
            {"content": "after", "position": 1},
            {"content": "deep", "position": 4, "depth": 0, "role": 1},
        ],
        "chat": [{"role": "user", "content": "hi"}],
    }
    result = compiler.compile(tmp_path / "preset.json", context=ctx, mode="legacy")
    assert pairs(result) == [
        ("system", "after"),
        ("system", "[Start a new Chat]"),
        ("user", "hi"),
        ("user", "deep"),
    ]
