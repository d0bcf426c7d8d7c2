"""apc plan check / apc plan simulate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main

PLAN = {
    "mode": "hybrid",
    "nodes": [
        {"id": "outline", "locked": True, "allowedTools": ["workspace.write_file"]},
        {"id": "write"},
        {"id": "polish", "locked": True},
    ],
}


def _write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    if isinstance(data, list):
        path.write_text("".join(json.dumps(a) + "\n" for a in data), encoding="utf-8")
    else:
        path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_check_ok(tmp_path: Path) -> None:
    assert main(["plan", "check", _write(tmp_path, "p.json", PLAN)]) == 0


def test_check_reports_codes_and_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = {"mode": "strict", "nodes": [{"id": "a", "allowedTools": ["shell.exec"]}]}
    assert main(["plan", "check", _write(tmp_path, "p.json", bad), "--format", "json"]) == 1
    (diag,) = json.loads(capsys.readouterr().err)
    assert diag["code"] == "agent.plan_node_tool_not_allowed"
    assert diag["path"] == "nodes[0].allowedTools[0]"


def test_check_uses_the_profile_layers(tmp_path: Path) -> None:
    plan = _write(tmp_path, "p.json", {"mode": "strict", "nodes": [{"id": "a", "allowedTools":
                                        ["workspace.read_file"]}]})  # fmt: skip
    run = _write(tmp_path, "run.json", {"tools": {"deny": ["workspace.read_file"]}})
    assert main(["plan", "check", plan]) == 0
    assert main(["plan", "check", plan, "--run", run]) == 1


def test_check_usage() -> None:
    assert main(["plan", "check"]) == 2


def test_simulate_prints_events(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    actions = [
        {"action": "start_node", "node": "outline"},
        {"action": "tool_call", "tool": "workspace.write_file"},
        {"action": "complete_node", "node": "outline"},
    ]
    code = main(["plan", "simulate", _write(tmp_path, "p.json", PLAN), "--actions",
                 _write(tmp_path, "a.jsonl", actions)])  # fmt: skip
    assert code == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["type"] for e in events] == ["plan_created", "plan_node_started",
                                           "plan_node_completed"]  # fmt: skip
    assert {"seq", "id", "runId", "timestamp", "level", "type", "payload"} <= set(events[0])


def test_simulate_stops_at_the_first_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    actions = [
        {"action": "start_node", "node": "outline"},
        {"action": "tool_call", "tool": "workspace.read_file"},
        {"action": "tool_call", "tool": "workspace.write_file"},
    ]
    path = _write(tmp_path, "a.jsonl", actions)
    code = main(["plan", "simulate", _write(tmp_path, "p.json", PLAN), "--actions", path])
    assert code == 1
    out, err = capsys.readouterr()
    assert json.loads(out.splitlines()[-1])["type"] == "plan_policy_violation"
    assert f"{path}:2" in err and "agent.policy_violation" in err


def test_simulate_approval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = {"mode": "strict", "nodes": [{"id": "a", "allowedTools": ["workspace.read_file"],
                                         "approvalRequired": True}]}  # fmt: skip
    actions = [
        {"action": "start_node", "node": "a"},
        {"action": "tool_call", "tool": "workspace.write_file"},
        {"action": "tool_call", "tool": "workspace.write_file", "approved": True},
    ]
    code = main(["plan", "simulate", _write(tmp_path, "p.json", plan), "--actions",
                 _write(tmp_path, "a.jsonl", actions)])  # fmt: skip
    assert code == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    asks = [e["payload"]["approved"] for e in events if e["type"] == "plan_approval_required"]
    assert asks == [False, True]


def test_simulate_bad_action(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "a.jsonl", [{"action": "tool_call"}])
    assert main(["plan", "simulate", _write(tmp_path, "p.json", PLAN), "--actions", path]) == 1
    assert "agent.plan_action_invalid" in capsys.readouterr().err


@pytest.mark.parametrize(
    "line",
    [
        '{"action": "start_node", "node": "outline", "approved": ' + "9" * 5_000 + "}",
        '{"action": "start_node", "node": "outline", "plan": {"x": NaN}}',
        "[" * 100_000,
        '{"action": "start_node", "node": "outline"',
    ],
)
def test_simulate_reads_actions_as_strict_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str
) -> None:
    """A 5,000-digit integer, NaN or deep nesting in ACTIONS.jsonl is a coded error at its
    line, never a traceback (plain json.loads raised Python's integer-digit ValueError)."""
    path = tmp_path / "a.jsonl"
    path.write_text('{"action": "start_node", "node": "outline"}\n' + line + "\n")
    assert main(["plan", "simulate", _write(tmp_path, "p.json", PLAN), "--actions", str(path)]) == 1
    err = capsys.readouterr().err
    assert "agent.plan_action_invalid" in err and f"{path}:2" in err and "Traceback" not in err
