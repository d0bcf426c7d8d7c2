"""Timed world info effects through a compile: the state comes in as the run context's
``timedWorldInfo`` and goes out on ``CompileResult.world_info_state`` / ``--world-state``
(issue 12, item 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import ContextError

TEMPLATE = "<<agent.world.activated>>\n<<agent.chat.history>>"


def setup(tmp_path: Path, chat: list[str], state: dict[str, Any] | None = None) -> Path:
    book = {
        "entries": {
            "0": {"uid": 0, "key": ["dragon"], "content": "DRAGON-LORE", "sticky": 3},
            "1": {"uid": 1, "key": ["dragon"], "content": "COOL-LORE", "cooldown": 5},
        }
    }
    (tmp_path / "Dragons.json").write_text(json.dumps(book), "utf-8")
    run: dict[str, Any] = {
        "worldInfo": "Dragons.json",
        "chat": [{"role": "user", "content": c} for c in chat],
        "worldInfoSettings": {"world_info_depth": 1},
    }
    if state is not None:
        run["timedWorldInfo"] = state
    (tmp_path / "run.json").write_text(json.dumps(run), "utf-8")
    return tmp_path / "run.json"


def test_state_round_trips_through_compiles(tmp_path: Path) -> None:
    first = compiler.compile_string(TEMPLATE, context=setup(tmp_path, ["a dragon!"]))
    assert "DRAGON-LORE" in json.dumps(first.request)
    state = first.world_info_state
    assert state is not None
    assert set(state["sticky"]) == {"Dragons.0"} and set(state["cooldown"]) == {"Dragons.1"}
    assert (state["sticky"]["Dragons.0"]["start"], state["sticky"]["Dragons.0"]["end"]) == (1, 4)
    # next turn: no dragon in the scanned message, the sticky entry stays, the cooldown holds
    second = compiler.compile_string(
        TEMPLATE, context=setup(tmp_path, ["a dragon!", "ok", "and now?"], state)
    )
    text = json.dumps(second.request)
    assert "DRAGON-LORE" in text and "COOL-LORE" not in text
    assert second.world_info_state == state  # nothing started or ended


def test_no_timed_entries_no_state(tmp_path: Path) -> None:
    chat = [{"role": "user", "content": "hi"}]
    (tmp_path / "run.json").write_text(json.dumps({"chat": chat}), "utf-8")
    result = compiler.compile_string(TEMPLATE, context=tmp_path / "run.json")
    assert result.world_info_state is None


def test_a_compile_without_world_info_passes_the_state_through(tmp_path: Path) -> None:
    state = {"sticky": {"Dragons.0": {"hash": 1, "start": 1, "end": 4, "protected": False}}}
    run = setup(tmp_path, ["x"], state)
    result = compiler.compile_string("<<agent.chat.history>>", context=run)
    assert result.world_info_state == state


def test_the_state_must_be_an_object(tmp_path: Path) -> None:
    with pytest.raises(ContextError) as info:
        compiler.compile_string(TEMPLATE, context=setup(tmp_path, ["x"], [1]))  # type: ignore[arg-type]
    assert info.value.code == "context.invalid_context"


def test_cli_writes_the_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = setup(tmp_path, ["a dragon!"])
    (tmp_path / "t.apc").write_text(TEMPLATE, "utf-8")
    out = tmp_path / "state.json"
    args = ["compile", str(tmp_path / "t.apc"), "--context", str(run), "--world-state", str(out)]
    assert main(args) == 0
    state = json.loads(out.read_text("utf-8"))
    assert set(state["sticky"]) == {"Dragons.0"}
    assert "DRAGON-LORE" in capsys.readouterr().out
    assert main([*args[:-1], "-"]) == 2
    assert "--world-state" in capsys.readouterr().err


def test_state_is_read_from_the_chat_file_header_as_sillytavern_keeps_it(
    tmp_path: Path,
) -> None:
    first = compiler.compile_string(TEMPLATE, context=setup(tmp_path, ["a dragon!"]))
    state = first.world_info_state
    header = {"user_name": "U", "character_name": "C", "chat_metadata": {"timedWorldInfo": state}}
    lines = [header] + [
        {"name": "U", "is_user": True, "mes": text} for text in ("a dragon!", "ok", "and now?")
    ]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(x) for x in lines), "utf-8")
    run = json.loads((tmp_path / "run.json").read_text("utf-8"))
    run["chat"] = "chat.jsonl"
    (tmp_path / "run.json").write_text(json.dumps(run), "utf-8")
    second = compiler.compile_string(TEMPLATE, context=tmp_path / "run.json")
    text = json.dumps(second.request)
    assert "DRAGON-LORE" in text and "COOL-LORE" not in text  # the header's state applied
    assert second.world_info_state == state
    run["timedWorldInfo"] = {}  # the run's own state wins over the file's
    (tmp_path / "run.json").write_text(json.dumps(run), "utf-8")
    third = compiler.compile_string(TEMPLATE, context=tmp_path / "run.json")
    assert "DRAGON-LORE" not in json.dumps(third.request)  # no sticky: "and now?" has no key
