"""Compiling for a plan node (issue 13): the node's tools, files and budget, the plan marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import compiler
from compiler.cli import main

PLAN = {
    "mode": "hybrid",
    "nodes": [
        {
            "id": "outline",
            "title": "Outline",
            "locked": True,
            "allowedTools": ["workspace.read_file", "workspace.write_file"],
            "visibleFiles": ["plan/"],
            "contextBudget": 700,
        },
        {"id": "write", "title": "Write the chapter"},
        {"id": "polish", "title": "Polish", "locked": True},
    ],
}
TEMPLATE = (
    "Plan:\n<<agent.plan>>\n<<agent.tools.available>>\n"
    "Files:\n<<agent.workspace.tree>>\n<<agent.chat.history>>"
)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "plan").mkdir(parents=True)
    (ws / "output").mkdir()
    (ws / "plan" / "outline.md").write_text("the outline")
    (ws / "output" / "main.md").write_text("SECRET-DRAFT")
    chat = [{"role": "user", "content": f"turn {i} " + "word " * 30} for i in range(80)]
    (tmp_path / "run.json").write_text(json.dumps({"workspace": "ws", "chat": chat}))
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    (tmp_path / "t.txt").write_text(TEMPLATE)
    return tmp_path


def compile_node(run: Path, node: str | None) -> compiler.CompileResult:
    return compiler.compile(
        run / "t.txt", context=run / "run.json", plan=run / "plan.json", plan_node=node
    )


def test_the_node_narrows_tools_files_and_budget(run: Path) -> None:
    whole = compiler.compile(run / "t.txt", context=run / "run.json", budget=5000)
    node = compile_node(run, "outline")
    names = {t["name"] for t in node.tools}
    assert names == {"workspace.read_file", "workspace.write_file"}
    assert len(whole.tools) > len(node.tools)
    body = json.dumps(node.request)
    assert "plan/outline.md" in body and "output/main.md" not in body
    assert node.ledger.total_tokens <= 700 and node.ledger.budget_source == "plan node"
    gate = node.tool_gate()
    with pytest.raises(compiler.PolicyError):
        gate.check_call("chat.search")  # outside the node: the model never saw it


def test_the_plan_is_rendered_with_the_current_node_marked(run: Path) -> None:
    text = compile_node(run, "write").request["messages"][0]["content"]
    assert "1. Outline (locked)\n2. Write the chapter  <- current step\n3. Polish (locked)" in text


def test_a_node_without_narrowing_keeps_the_profile_view(run: Path) -> None:
    node = compile_node(run, "write")
    assert "output/main.md" in json.dumps(node.request)  # no visibleFiles: the profile's view


def test_an_unknown_node_or_a_missing_plan_is_coded(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(compiler.ContextError) as info:
        compile_node(run, "polsih")
    assert info.value.code == "agent.plan_node_unknown" and "polish" in (info.value.hint or "")
    args = ["compile", str(run / "t.txt"), "--context", str(run / "run.json")]
    assert main([*args, "--plan-node", "outline"]) == 2
    assert main([*args, "--plan", str(run / "plan.json"), "--plan-node", "outline"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {t["function"]["name"] for t in out["tools"]} == {
        "workspace_read_file",
        "workspace_write_file",
    }


def test_a_node_without_allowed_tools_keeps_the_profile_tools(run: Path) -> None:
    whole = compiler.compile(run / "t.txt", context=run / "run.json")
    assert {t["name"] for t in compile_node(run, "write").tools} == {t["name"] for t in whole.tools}


def test_the_plan_is_checked_before_compiling_for_a_node(run: Path) -> None:
    wide = {"mode": "strict", "nodes": [{"id": "a", "allowedTools": ["shell.exec"]}]}
    (run / "plan.json").write_text(json.dumps(wide))
    with pytest.raises(compiler.ProfileError) as info:
        compile_node(run, "a")
    assert info.value.code == "agent.plan_node_tool_not_allowed"


def test_a_node_needs_a_plan(run: Path) -> None:
    with pytest.raises(compiler.ContextError) as info:
        compiler.compile(run / "t.txt", context=run / "run.json", plan_node="outline")
    assert info.value.code == "agent.plan_node_unknown"


def test_a_node_budget_never_widens_the_total(run: Path) -> None:
    node = compiler.compile(
        run / "t.txt", context=run / "run.json", plan=run / "plan.json", plan_node="outline",
        budget=500,
    )  # fmt: skip
    assert node.ledger.budget_source == "--budget" and node.ledger.total_tokens <= 500


def test_a_node_budget_caps_a_run_without_one(run: Path) -> None:
    node = compiler.compile(
        run / "t.txt",
        context=run / "run.json",
        plan=run / "plan.json",
        plan_node="outline",
        model="no-such-model",
        encoding="o200k_base",
    )  # an unknown window: no total but the node's
    assert node.ledger.budget_source == "plan node" and node.ledger.total_tokens <= 700
