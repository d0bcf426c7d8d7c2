"""The lorebook debugger through the compile: CompileResult.world_info_report (where each
activated entry went and what the fit did), the journal's world_info_scanned event and
`apc explain` (a table, and JSON's worldInfo)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"
PRESET = CORPUS / "presets" / "st-default-2024.json"
ELDORIA = CORPUS / "worlds" / "Eldoria.json"
SERAPHINA = CORPUS / "cards" / "Seraphina-v2v3.png"

BOOK: dict[str, Any] = {
    "name": "Test",
    "entries": {
        "0": {"uid": 0, "key": ["dragon"], "content": "Dragons breathe fire. " * 20, "order": 10},
        "1": {"uid": 1, "key": ["dragon"], "content": "Dragons hoard gold. " * 20, "order": 20},
        "2": {"uid": 2, "key": ["dragon"], "content": "Dragons sleep long. " * 20, "order": 30},
        "3": {"uid": 3, "key": ["dragon"], "content": "deep", "position": 4, "depth": 1},
        "4": {"uid": 4, "key": ["dragon"], "content": "outlet", "position": 7},
        "5": {"uid": 5, "key": ["dragon"], "content": ""},
        "6": {"uid": 6, "key": ["griffin"], "content": "Griffins.", "comment": "griffin"},
        "7": {"uid": 7, "key": ["dragon"], "content": "off", "disable": True},
    },
}
CHAT = [{"role": "user", "content": "a dragon!"}]
TEMPLATE = "S <<agent.world.activated position=before budget=200>>\n<<agent.chat.history>>"


def by_uid(result: compiler.CompileResult) -> dict[Any, compiler.WorldEntryDecision]:
    report = result.world_info_report
    assert report is not None
    return {d.uid: d for d in report.entries}


def test_placement_and_what_the_fit_made_of_each_entry() -> None:
    ctx = {"chat": CHAT, "lorebooks": {"global": BOOK}}
    result = compiler.compile_string(TEMPLATE, context=ctx)
    got = by_uid(result)
    assert result.ledger.entry("001:world.activated").action == "truncated"
    # the block is cut to its leading entries (prompt order: ascending order)
    fits = {uid: d.placement.fit for uid, d in got.items() if d.placement is not None}
    assert fits == {0: "kept", 1: "kept", 2: "dropped", 3: "not_placed", 4: "not_placed",
                    5: "not_placed"}  # fmt: skip
    assert got[0].placement is not None and got[0].placement.component == "001:world.activated"
    assert got[0].placement.position == "before" and got[0].placement.order == 10
    deep = got[3].placement
    assert deep is not None and (deep.position, deep.depth, deep.role) == ("at_depth", 1, "system")
    assert deep.note == "no component places this position"  # a template injects no @D
    assert got[4].placement is not None and "'outlet' is not placed" in str(got[4].placement.note)
    assert got[5].placement is not None and got[5].placement.note == "empty content"
    assert (got[6].reason, got[7].reason) == ("no_match", "disabled")
    assert got[6].placement is None and not got[6].activated


def test_the_journal_gets_one_summary_event() -> None:
    ctx = {"chat": CHAT, "lorebooks": {"global": BOOK}}
    result = compiler.compile_string(TEMPLATE, context=ctx)
    events = [e for e in result.events if e.type == "world_info_scanned"]
    assert len(events) == 1
    assert events[0].payload == {
        "considered": 8,
        "activated": 6,
        "reasons": {"disabled": 1, "key": 6, "no_match": 1},
        "budget": 32000,
        "budgetReached": False,
        "notKept": ["Test.2", "Test.3", "Test.4", "Test.5"],
    }
    types = [e.type for e in result.events]
    assert types.index("world_info_scanned") < types.index("context_assembled")


def test_a_preset_places_at_depth_entries_in_the_history_and_scans_the_persona() -> None:
    preset = {
        "prompts": [
            {"identifier": "main", "content": "Write."},
            {"identifier": "worldInfoBefore", "marker": True},
            {"identifier": "chatHistory", "marker": True},
        ]
    }
    book = {
        "name": "P",
        "entries": {
            "0": {
                "uid": 0,
                "key": ["north"],
                "content": "deep lore",
                "position": 4,
                "depth": 1,
                "role": 1,
            },
            "1": {"uid": 1, "key": ["dragon"], "content": "Dragons.", "comment": "d"},
        },
    }
    ctx = {
        "chat": CHAT,
        "lorebooks": {"global": book},
        "persona": {"name": "Alex", "description": "Alex comes from the north.", "position": 4},
    }
    result = compiler.compile_string(json.dumps(preset), kind="preset", context=ctx, mode="legacy")
    got = by_uid(result)
    assert got[0].detail["source"] == {"kind": "persona"}
    place = got[0].placement
    assert place is not None and (place.position, place.depth, place.role) == (
        "at_depth",
        1,
        "user",
    )
    assert place.fit == "kept" and place.component is not None
    assert result.ledger.entry(place.component).kind == "ChatHistory"
    assert got[1].placement is not None and got[1].placement.fit == "kept"


def test_no_report_without_a_scan() -> None:
    given = {"chat": CHAT, "worldInfo": [{"content": "given", "position": "before"}]}
    assert compiler.compile_string(TEMPLATE, context=given).world_info_report is None
    assert compiler.compile_string("S", context={"chat": CHAT}).world_info_report is None


def test_the_report_is_deterministic() -> None:
    book = {
        "name": "R",
        "entries": {
            str(i): {
                "uid": i,
                "key": ["x"],
                "useProbability": True,
                "probability": 50,
                "group": "g" if i % 3 == 0 else "",
            }
            for i in range(12)
        },
    }
    ctx = {"chat": [{"role": "user", "content": "x"}], "lorebooks": {"global": book}, "seed": 4}
    runs = [compiler.compile_string(TEMPLATE, context=ctx).world_info_report for _ in range(2)]
    assert runs[0] is not None and runs[1] is not None
    assert runs[0].as_json() == runs[1].as_json()
    assert runs[0].table() == runs[1].table()


def test_apc_explain_prints_the_table_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.txt").write_text(TEMPLATE)
    (tmp_path / "run.json").write_text(json.dumps({"chat": CHAT, "lorebooks": {"global": BOOK}}))
    args = ["explain", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "world info: 8 entries considered, 6 activated; budget 32,000 tokens" in out
    assert "uid  entry    book  status" in out
    assert "activated, dropped" in out and "no_match" in out
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    world = data["worldInfo"]
    assert (world["considered"], world["activated"], world["omitted"]) == (8, 6, {})
    first = world["entries"][0]
    assert set(first) == {"uid", "world", "comment", "activated", "reason", "why", "detail",
                          "placement"}  # fmt: skip
    (tmp_path / "plain.json").write_text(json.dumps({"chat": CHAT}))
    plain = ["explain", str(tmp_path / "t.txt"), "--context", str(tmp_path / "plain.json")]
    assert main([*plain, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["worldInfo"] is None
    assert main(plain) == 0
    assert "world info:" not in capsys.readouterr().out


@pytest.mark.skipif(
    not (PRESET.exists() and ELDORIA.exists() and SERAPHINA.exists()), reason="no corpus"
)
def test_the_corpus_eldoria_with_seraphina(capsys: pytest.CaptureFixture[str]) -> None:
    ctx = {
        "character": str(SERAPHINA),
        "persona": {"name": "Alex", "description": "A traveller from the north."},
        "worldInfo": str(ELDORIA),
        "chat": [
            {"role": "assistant", "content": "Hello traveller. You are safe here."},
            {"role": "user", "content": "I remember the forest of Eldoria and a beast."},
        ],
    }
    result = compiler.compile(PRESET, context=ctx, model="gpt-4o")
    report = result.world_info_report
    assert report is not None and report.considered == 4 and report.budget == 949
    got = by_uid(result)
    assert got[0].reason == "key" and got[0].detail["source"] == {"kind": "message", "index": 1}
    assert got[1].reason == "key" and got[1].detail["key"] == "beast"
    assert got[2].reason == "key" and got[2].detail["source"] == {"kind": "recursion", "pass": 1}
    # the budget (25% of the preset's context) stops the scan before the last one
    assert got[3].reason == "budget" and got[3].detail == {"tokens": 963, "budget": 949}
    assert got[3].why == "world info budget reached (963 of 949 tokens): the scan stopped"
    for d in report.entries:
        assert d.activated == (d.placement is not None)
        if d.placement is not None:
            assert d.placement.position == "before" and d.placement.fit == "kept"
    assert report.summary()["reasons"] == report.reasons()
    again = compiler.compile(PRESET, context=ctx, model="gpt-4o")
    assert again.request == result.request
    assert again.world_info_report is not None
    assert again.world_info_report.as_json() == report.as_json()


def test_the_table_writes_no_control_characters_of_a_lorebook() -> None:
    hostile = "\x1b[2J\x1b]0;owned\x07red\rline\x00"
    book = {
        "name": "Evil\x1b[31m",
        "entries": {
            "0": {"uid": 0, "key": ["dragon\x1b[0m", "dragon"], "content": "x", "comment": hostile}
        },
    }
    result = compiler.compile_string(
        TEMPLATE, context={"chat": CHAT, "lorebooks": {"global": book}}
    )
    assert result.world_info_report is not None
    table = result.world_info_report.table()
    assert not [c for c in table if not c.isprintable() and c != "\n"], repr(table)
    assert "[2J ]0;owned red line" in table


def test_the_journal_counts_a_summarized_entry_as_not_kept() -> None:
    text = "Dragons of kind {} breathe fire and sleep in caves by the sea. "
    book = {
        "name": "T",
        "entries": {
            str(i): {"uid": i, "key": ["dragon"], "content": text.format(i) * 12, "order": i}
            for i in range(3)
        },
    }
    template = (
        "S <<agent.world.activated position=before budget=120 strategy=summarize>>\n"
        "<<agent.chat.history>>"
    )
    ctx = {"chat": CHAT, "lorebooks": {"global": book}}
    result = compiler.compile_string(template, context=ctx, budget=3000)
    assert {d.placement.fit for d in by_uid(result).values() if d.placement} == {"summarized"}
    events = [e for e in result.events if e.type == "world_info_scanned"]
    assert events[0].payload["notKept"] == ["T.0", "T.1", "T.2"]
