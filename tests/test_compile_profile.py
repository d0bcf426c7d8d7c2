"""The compiler consumes the resolved profile: system prompt, visible tools, total budget."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import compiler
from compiler.cli import main
from compiler.profile import resolve_profile

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "writer"
TEMPLATE = EXAMPLES / "template.txt"
RUN = EXAMPLES / "run.json"


def tool_names(request: dict[str, object]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]  # type: ignore[attr-defined,index]


def test_user_deny_removes_tool_even_if_run_allows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"tools": {"deny": ["workspace.write_file"]}}))
    run = tmp_path / "run-profile.json"
    run.write_text(json.dumps({"tools": {"allow": ["workspace.*"]}}))
    args = ["compile", str(TEMPLATE), "--context", str(RUN), "--user", str(user), "--run", str(run)]
    assert main(args) == 0
    request = json.loads(capsys.readouterr().out)
    names = tool_names(request)
    assert "workspace_write_file" not in names
    assert names[:2] == ["workspace_read_file", "workspace_finish"]
    assert "workspace_apply_patch" in names  # the run's allow replaced, the user's deny stayed
    assert "chat_search" not in names


def test_profile_system_prompt_replaces_default() -> None:
    resolved = resolve_profile(run={"instructions": {"agentSystemPrompt": "You are Brevity."}})
    result = compiler.compile(TEMPLATE, context=RUN, profile=resolved)
    system = result.request["messages"][0]["content"]
    assert system.startswith("You are Brevity.")
    assert "writing agent" not in system


def test_conservative_mode_hides_unlisted_run_tools_and_marks_approval() -> None:
    ctx = json.loads(RUN.read_text())
    ctx["workspace"] = str(EXAMPLES / "workspace")
    ctx["tools"].append(
        {
            "name": "mcp.search",
            "description": "Search.",
            "parameters": {"type": "object", "properties": {}},
        }
    )
    hidden = compiler.compile_string("Tools: <<agent.tools.available>>", context=ctx)
    assert "mcp_search" not in tool_names(hidden.request)
    shown = compiler.compile_string(
        "Tools: <<agent.tools.available>>",
        context=ctx,
        profile=resolve_profile(
            run={"tools": {"allow": ["workspace.*", "mcp.*"], "requireApproval": ["mcp.*"]}}
        ),
    )
    assert "mcp_search" in tool_names(shown.request)
    (tools,) = [c for c in shown.frame.components if c.tools]
    assert {t["name"]: t["requireApproval"] for t in tools.tools or []}["mcp.search"] is True


def test_profile_total_budget_applies_without_flag() -> None:
    ctx = {"chat": [{"role": "user", "content": f"message {i} " * 10} for i in range(40)]}
    resolved = resolve_profile(run={"context": {"totalContextBudget": 120}})
    result = compiler.compile_string("<<agent.chat.history>>", context=ctx, profile=resolved)
    assert result.ledger.budget == 120
    assert result.ledger.total_tokens <= 120
    assert len(result.request["messages"]) < 40


def test_schema_context_validates_the_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "context"]) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(schema).validate(json.loads(RUN.read_text()))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate({"chat": 3})
