"""Tool policy: globs, visibility, provider aliases and the run-time gate."""

from __future__ import annotations

import pytest

from compiler.errors import PolicyError
from compiler.policy.tools import ToolGate
from compiler.profile import resolve_profile
from compiler.profile.tool_catalogue import (
    KNOWN_TOOLS,
    evaluate_tool_policy,
    from_provider_name,
    matches,
    to_provider_name,
)


@pytest.mark.parametrize(
    ("pattern", "tool", "expected"),
    [
        ("workspace.*", "workspace.read_file", True),
        ("workspace.*", "workspace", False),
        ("workspace.*", "workspaces.read_file", False),
        ("mcp.*", "mcp.github.search", True),  # '*' crosses dots
        ("*", "chat.search", True),
        ("chat.search", "chat.search", True),
        ("chat.search", "chat.searches", False),  # whole-name match
        ("chat.searc?", "chat.search", True),
        ("chat?search", "chat.search", True),
        ("workspace.read_file", "workspaceXread_file", False),  # '.' is literal
        ("[a]*", "a.b", False),  # '[' is literal, not a set
        ("Chat.*", "chat.search", False),  # case-sensitive
    ],
)
def test_glob(pattern: str, tool: str, expected: bool) -> None:
    assert matches(pattern, tool) is expected


def test_provider_alias_round_trip() -> None:
    for tool in KNOWN_TOOLS:
        alias = to_provider_name(tool)
        assert "." not in alias
        assert from_provider_name(alias) == tool
        assert from_provider_name(tool) == tool
    assert to_provider_name("workspace.read_file") == "workspace_read_file"
    assert from_provider_name("workspace_read_file") == "workspace.read_file"
    assert from_provider_name("shell_exec") is None


def test_conservative_and_permissive() -> None:
    conservative = evaluate_tool_policy(allow=["chat.*", "dice.roll"], deny=["chat.read_messages"])
    assert conservative.visible == ("chat.search", "dice.roll")
    permissive = evaluate_tool_policy(allow=[], deny=["workspace.*", "agent.*"], mode="permissive")
    assert permissive.visible == tuple(
        t for t in KNOWN_TOOLS if not t.startswith(("workspace.", "agent."))
    )


def test_deny_beats_allow_and_approval_is_not_deny() -> None:
    result = evaluate_tool_policy(
        allow=["workspace.*"],
        deny=["workspace.commit"],
        require_approval=["workspace.write_file", "workspace.commit"],
    )
    assert "workspace.commit" not in result.visible
    assert "workspace.write_file" in result.visible
    assert result.approval_required == ("workspace.write_file",)


def test_unknown_allow_warns_unknown_deny_does_not() -> None:
    result = evaluate_tool_policy(allow=["mcp.*", "chat.serch"], deny=["shell.*"], file="p.json")
    assert [(w.code, w.severity, w.path) for w in result.warnings] == [
        ("agent.profile_unknown_tool", "warning", "tools.allow[0]"),
        ("agent.profile_unknown_tool", "warning", "tools.allow[1]"),
    ]
    assert result.warnings[1].hint == "did you mean 'chat.search'?"
    assert result.visible == ()


def test_extra_known_tools() -> None:
    result = evaluate_tool_policy(
        allow=["mcp.*"], deny=[], known=(*KNOWN_TOOLS, "mcp.github.search")
    )
    assert result.visible == ("mcp.github.search",)
    assert result.warnings == ()


def gate(**run: object) -> ToolGate:
    return ToolGate(resolve_profile(run=run))


def test_gate_denies_invisible_tools_and_accepts_aliases() -> None:
    g = gate(tools={"deny": ["chat.search"], "requireApproval": ["workspace.write_file"]})
    assert g.check_call("workspace_read_file") == "allowed"
    assert g.check_call("workspace.write_file") == "approval_required"
    for hidden in ("chat.search", "chat_search", "workspace.commit", "shell.exec"):
        with pytest.raises(PolicyError) as info:
            g.check_call(hidden)
        assert info.value.code == "tool.policy_denied"
    assert g.total_calls == 2  # refused calls are not counted


def test_gate_run_budget() -> None:
    g = gate(tools={"maxCallsPerRun": 3})
    for _ in range(3):
        g.check_call("chat.search")
    with pytest.raises(PolicyError) as info:
        g.check_call("skill.read")
    assert info.value.code == "agent.tool_budget_exhausted"
    assert info.value.path == "tools.maxCallsPerRun"


def test_gate_per_tool_budget() -> None:
    g = gate(tools={"maxCallsPerTool": {"chat.search": 2}})
    g.check_call("chat.search")
    g.check_call("chat_search")
    with pytest.raises(PolicyError) as info:
        g.check_call("chat.search")
    assert info.value.code == "agent.tool_budget_exhausted"
    assert g.check_call("skill.read") == "allowed"  # other tools are unaffected
    assert g.calls["chat.search"] == 2
