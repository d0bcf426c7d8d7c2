"""Tool-policy attacks (issue 8, items 7-10): each bypass reproduced and refused.

7. Tool visibility is computed once (``visible_tools``) over known and run-defined tools; the
   request, ``CompileResult.profile.tools.visible`` and the run-time gate agree.
8. A provider alias (``workspace_write_file``) in any tool list or key is the dotted tool.
9. A creator cannot choose the permissive mode, and nothing widens past the user's allow list.
10. Platform-disabled providers compare case- and whitespace-insensitively.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import PolicyError, ProfileError
from compiler.profile.tool_catalogue import KNOWN_TOOLS, to_provider_name

TEMPLATE = "Tools: <<agent.tools.available>>"


def run_tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"{name} tool", "parameters": {"type": "object"}}


def offered(result: compiler.CompileResult) -> list[str]:
    """The provider names the request offered the model."""
    return [t["function"]["name"] for t in result.request.get("tools", [])]  # type: ignore[attr-defined]


def admitted(gate: compiler.ToolGate, name: str) -> bool:
    try:
        gate.check_call(name)
    except PolicyError as exc:
        assert exc.code == "tool.policy_denied"
        return False
    return True


def assert_gate_is_the_request(result: compiler.CompileResult, extra: list[str]) -> None:
    """The gate admits every tool the model saw (dotted and alias) and nothing else."""
    seen = offered(result)
    gate = result.tool_gate()
    for alias in seen:
        assert admitted(gate, alias), alias
    for spec in result.tools:
        assert admitted(gate, spec["name"]), spec["name"]
    for name in (*KNOWN_TOOLS, *extra):
        if to_provider_name(name) not in seen:
            assert not admitted(gate, name), name
            assert not admitted(gate, to_provider_name(name)), name


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def preset_with(profile: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompts": [
            {"identifier": "agentSystemPrompt", "name": "Agent", "role": "system", "marker": True},
            {"identifier": "main", "name": "Main", "role": "system", "content": TEMPLATE},
        ],
        "prompt_order": [
            {
                "character_id": 100001,
                "order": [
                    {"identifier": "agentSystemPrompt", "enabled": True},
                    {"identifier": "main", "enabled": True},
                ],
            }
        ],
        "agent": {"enabled": True, "defaultProfile": "p", "profiles": [{"id": "p", **profile}]},
    }


def card_with(profile: dict[str, Any]) -> dict[str, Any]:
    tauri = {"agentProfiles": {"version": 1, "items": [{"id": "p", **profile}]}}
    return {"spec": "chara_card_v2", "data": {"name": "C", "extensions": {"tauritavern": tauri}}}


# --------------------------------------------------------------------- 7. one source of truth


def test_run_tool_the_request_offers_is_admitted_by_the_gate() -> None:
    # before: the request offered mcp_search while ToolGate(profile) denied it
    profile = compiler.resolve_profile(
        run={"tools": {"allow": ["workspace.*", "mcp.*"], "requireApproval": ["mcp.*"]}}
    )
    assert "mcp.search" not in profile.tools.visible  # the profile alone has no run tools
    ctx = {"tools": [run_tool("mcp.search"), run_tool("shell.exec")]}
    result = compiler.compile_string(TEMPLATE, context=ctx, profile=profile)
    assert "mcp_search" in offered(result) and "shell_exec" not in offered(result)
    assert result.profile is not None
    assert "mcp.search" in result.profile.tools.visible  # the run's tools are included
    assert "mcp.search" in result.profile.tools.approval_required
    # the profile the compile bound to the run shows exactly what the request offered
    assert sorted(map(to_provider_name, result.profile.tools.visible)) == sorted(offered(result))
    gate = result.tool_gate()
    assert gate.check_call("mcp_search") == "approval_required"
    assert gate.check_call("mcp.search") == "approval_required"
    assert gate.check_call("workspace_read_file") == "allowed"
    assert_gate_is_the_request(result, ["mcp.search", "shell.exec"])


def test_gate_admits_nothing_the_model_was_not_offered() -> None:
    ctx = {"tools": [run_tool("mcp.search")]}
    profile = compiler.resolve_profile(run={"tools": {"allow": ["workspace.*", "mcp.*"]}})
    result = compiler.compile_string("No tool definitions here.", context=ctx, profile=profile)
    assert offered(result) == [] and result.tools == []
    gate = result.tool_gate()
    for name in (*profile.tools.visible, "mcp.search", "mcp_search"):
        assert not admitted(gate, name)


def test_gate_never_widens_past_the_policy() -> None:
    # a hand-edited tool list (or a stale profile) cannot admit what the policy hides
    profile = compiler.resolve_profile(user={"tools": {"deny": ["chat.search", "mcp.*"]}})
    forged = compiler.ToolGate(
        profile,
        tools=[
            {
                "name": name,
                "alias": to_provider_name(name),
                "description": "",
                "parameters": {},
                "requireApproval": False,
            }
            for name in ("chat.search", "mcp.search", "workspace.read_file")
        ],
    )
    assert forged.visible == ("workspace.read_file",)
    for name in ("chat.search", "chat_search", "mcp.search", "mcp_search"):
        assert not admitted(forged, name)
    tampered = profile.model_copy(deep=True)
    tampered.tools.visible.append("chat.search")
    assert not admitted(compiler.ToolGate(tampered), "chat_search")
    # and a compile recomputes visibility from the policy, not from the lists it was given
    result = compiler.compile_string(TEMPLATE, context={}, profile=tampered)
    assert "chat_search" not in offered(result)


def test_run_tool_named_like_a_denied_tool_is_denied() -> None:
    # a run (MCP) tool 'workspace_write_file' is the denied workspace.write_file to the model
    profile = compiler.resolve_profile(
        user={"tools": {"deny": ["workspace.write_file"]}},
        run={"tools": {"allow": ["workspace*"]}},
    )
    result = compiler.compile_string(
        TEMPLATE, context={"tools": [run_tool("workspace_write_file")]}, profile=profile
    )
    assert "workspace_write_file" not in offered(result)
    assert "workspace_apply_patch" in offered(result)
    assert_gate_is_the_request(result, ["workspace_write_file"])


def test_cli_compile_offers_run_tools_and_resolve_shows_the_profile_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "t.txt"
    template.write_text(TEMPLATE)
    ctx = write(tmp_path / "run.json", {"tools": [run_tool("mcp.search")]})
    fragment = write(tmp_path / "p.json", {"tools": {"allow": ["workspace.*", "mcp.*"]}})
    assert main(["compile", str(template), "--context", str(ctx), "--run", str(fragment)]) == 0
    captured = capsys.readouterr()
    assert "mcp_search" in offered_json(captured.out)
    assert "agent.profile_unknown_tool" not in captured.err  # 'mcp.*' matches the run's tool
    assert main(["profile", "resolve", "--run", str(fragment)]) == 0
    captured = capsys.readouterr()
    assert "warning[agent.profile_unknown_tool]" in captured.err  # no run tools here
    resolved = json.loads(captured.out)
    assert "mcp.search" not in resolved["tools"]["visible"]
    assert resolved["tools"]["visible"] == [t for t in KNOWN_TOOLS if t.startswith("workspace.")]


def test_cli_compile_run_dir_records_the_profile_bound_to_the_run(tmp_path: Path) -> None:
    template = tmp_path / "t.txt"
    template.write_text(TEMPLATE)
    ctx = write(tmp_path / "run.json", {"tools": [run_tool("mcp.search")]})
    fragment = write(tmp_path / "p.json", {"tools": {"allow": ["workspace.*", "mcp.*"]}})
    run_dir = tmp_path / "runs" / "r1"
    args = ["compile", str(template), "--context", str(ctx), "--run", str(fragment)]
    assert main([*args, "--run-dir", str(run_dir)]) == 0
    written = json.loads((run_dir / "input" / "resolved_profile.json").read_text("utf-8"))
    assert "mcp.search" in written["tools"]["visible"]  # a gate built from it admits it
    gate = compiler.ToolGate(compiler.resolve_profile(run=fragment).with_run_tools(["mcp.search"]))
    assert admitted(gate, "mcp_search")


def offered_json(out: str) -> list[str]:
    return [t["function"]["name"] for t in json.loads(out).get("tools", [])]


# --------------------------------------------------------------------- 8. provider aliases


@pytest.mark.parametrize(
    "deny", ["workspace_write_file", "workspace_write_*", "workspace_w*", "*_write_file"]
)
def test_deny_written_with_the_provider_alias_denies(deny: str) -> None:
    # before: 'workspace_write_file' matched nothing and the tool stayed visible
    profile = compiler.resolve_profile(
        user={"tools": {"deny": [deny]}},
        run={"tools": {"allow": ["workspace.*", "chat.search"]}},
    )
    assert "workspace.write_file" not in profile.tools.visible
    assert "workspace.apply_patch" in profile.tools.visible
    assert not admitted(compiler.ToolGate(profile), "workspace_write_file")
    result = compiler.compile_string(TEMPLATE, context={}, profile=profile)
    assert "workspace_write_file" not in offered(result)
    assert "workspace_apply_patch" in offered(result)
    assert_gate_is_the_request(result, [])


def test_alias_wildcards_cover_the_dotted_names() -> None:
    # '_' in a tool pattern also matches '.', so 'workspace_*' means 'workspace.*'
    profile = compiler.resolve_profile(
        run={"tools": {"requireApproval": ["workspace_*"], "deny": ["workspace_c*"]}}
    )
    assert "workspace.commit" not in profile.tools.visible
    assert profile.tools.approval_required == [
        t for t in profile.tools.visible if t.startswith("workspace.")
    ]
    with pytest.raises(ProfileError) as info:  # denying every writer is refused, not ignored
        compiler.resolve_profile(user={"tools": {"deny": ["workspace_*"]}})
    assert info.value.code == "agent.profile_output_writer_required"


def test_alias_deny_covers_run_tools_and_is_normalised_with_a_warning() -> None:
    profile = compiler.resolve_profile(
        user={"tools": {"deny": ["workspace_write_file", "mcp_*"]}},
        run={"tools": {"allow": ["workspace.*", "mcp.*"]}},
    )
    assert profile.tools.deny == ["workspace.write_file", "mcp_*"]
    (warning,) = [w for w in profile.warnings if w.code == "agent.profile_tool_alias"]
    assert (warning.severity, warning.path, warning.file) == ("warning", "tools.deny[0]", "<user>")
    assert warning.hint == "write the dotted name 'workspace.write_file'"
    result = compiler.compile_string(
        TEMPLATE, context={"tools": [run_tool("mcp.search")]}, profile=profile
    )
    assert "mcp_search" not in offered(result)
    assert_gate_is_the_request(result, ["mcp.search"])


def test_aliases_resolve_in_every_list_and_key() -> None:
    profile = compiler.resolve_profile(
        run={
            "tools": {
                "allow": ["workspace_write_file", "chat_search"],
                "requireApproval": ["workspace_write_file"],
                "maxCallsPerTool": {"chat_search": 1},
                "toolDescriptions": {"chat_search": "Search the chat, briefly."},
            }
        }
    )
    tools = profile.tools
    assert tools.allow == ["workspace.write_file", "chat.search"]
    assert tools.visible == ["chat.search", "workspace.write_file"]
    assert tools.approval_required == ["workspace.write_file"]
    assert tools.max_calls_per_tool == {"chat.search": 1}
    assert tools.tool_descriptions == {"chat.search": "Search the chat, briefly."}
    codes = [(w.code, w.path) for w in profile.warnings]
    assert ("agent.profile_tool_alias", "tools.maxCallsPerTool.chat_search") in codes
    assert ("agent.profile_tool_alias", "tools.requireApproval[0]") in codes
    result = compiler.compile_string(TEMPLATE, context={}, profile=profile)
    described = {
        t["function"]["name"]: t["function"]["description"] for t in result.request["tools"]
    }  # type: ignore[index]
    assert described["chat_search"] == "Search the chat, briefly."
    gate = result.tool_gate()
    assert gate.check_call("workspace_write_file") == "approval_required"
    assert gate.check_call("chat_search") == "allowed"
    with pytest.raises(PolicyError) as info:
        gate.check_call("chat.search")  # the per-tool budget counts both names as one tool
    assert info.value.code == "agent.tool_budget_exhausted"


def test_alias_keys_across_layers_merge_as_one_tool() -> None:
    profile = compiler.resolve_profile(
        preset=preset_with({"tools": {"maxCallsPerTool": {"chat.search": 9}}}),
        user={"tools": {"maxCallsPerTool": {"chat_search": 2, "chat.search": 5}}},
    )
    assert profile.tools.max_calls_per_tool == {"chat.search": 2}  # the smaller budget


def test_alias_of_a_runtime_only_tool_is_refused() -> None:
    with pytest.raises(ProfileError) as info:
        compiler.resolve_profile(run={"tools": {"deny": ["task_return"]}})
    assert info.value.code == "agent.profile_task_return_runtime_only"


def test_unknown_alias_key_is_refused_with_a_did_you_mean() -> None:
    with pytest.raises(ProfileError) as info:
        compiler.resolve_profile(run={"tools": {"maxCallsPerTool": {"chat_serch": 1}}})
    assert info.value.code == "agent.profile_unknown_tool"
    assert info.value.hint is not None and "chat.search" in info.value.hint


def test_creator_alias_reallow_of_a_user_denied_tool_warns() -> None:
    profile = compiler.resolve_profile(
        preset=preset_with({"tools": {"allow": ["workspace_read_file", "workspace.write_file"]}}),
        user={"tools": {"deny": ["workspace.read_file"]}},
    )
    assert "workspace.read_file" not in profile.tools.visible
    (warning,) = [
        w for w in profile.warnings if w.code == "agent.creator_limit" and w.severity == "warning"
    ]
    assert warning.path == "agent.profiles[0].tools.allow[0]"


def test_cli_alias_deny(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "t.txt"
    template.write_text(TEMPLATE)
    ctx = write(tmp_path / "run.json", {})
    user = write(tmp_path / "user.json", {"tools": {"deny": ["workspace_write_file"]}})
    assert main(["compile", str(template), "--context", str(ctx), "--user", str(user)]) == 0
    captured = capsys.readouterr()
    names = offered_json(captured.out)
    assert "workspace_write_file" not in names and "workspace_apply_patch" in names
    assert "warning[agent.profile_tool_alias]" in captured.err
    assert main(["profile", "resolve", "--user", str(user)]) == 0
    resolved = json.loads(capsys.readouterr().out)
    assert "workspace.write_file" not in resolved["tools"]["visible"]
    assert resolved["tools"]["deny"] == ["workspace.write_file"]


# --------------------------------------------------------------------- 9. permissive mode


@pytest.mark.parametrize("where", ["preset", "character"])
def test_creator_cannot_choose_permissive_mode(where: str) -> None:
    profile = {"tools": {"mode": "permissive", "allow": ["workspace.write_file"]}}
    with pytest.raises(ProfileError) as info:
        if where == "preset":
            compiler.resolve_profile(preset=preset_with(profile))
        else:
            compiler.resolve_profile(character=card_with(profile))
    prefix = (
        "agent.profiles[0]"
        if where == "preset"
        else "data.extensions.tauritavern.agentProfiles.items[0]"
    )
    assert (info.value.code, info.value.path) == ("agent.creator_limit", f"{prefix}.tools.mode")
    assert info.value.file == f"<{where}>"


def test_cli_creator_permissive_mode_fails_naming_file_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: 18 tools offered where the user allowed 2
    preset = write(tmp_path / "preset.json", preset_with({"tools": {"mode": "permissive"}}))
    user = write(
        tmp_path / "user.json", {"tools": {"allow": ["workspace.write_file", "chat.search"]}}
    )
    ctx = write(tmp_path / "run.json", {})
    out = tmp_path / "out.json"
    args = ["compile", str(preset), "--context", str(ctx), "--user", str(user), "-o", str(out)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "error[agent.creator_limit]" in err
    assert str(preset) in err and "agent.profiles[0].tools.mode" in err
    assert not out.exists()
    assert main(["profile", "resolve", "--preset", str(preset), "--user", str(user)]) == 1
    assert "error[agent.creator_limit]" in capsys.readouterr().err


@pytest.mark.parametrize(
    "run",
    [
        {"tools": {"mode": "permissive"}},
        {"tools": {"mode": "permissive", "allow": []}},
        {"tools": {"allow": ["*"]}},
        {"tools": {"mode": "permissive", "allow": ["*", "mcp.*"]}},
    ],
)
def test_nothing_widens_past_the_user_allow_list(run: dict[str, Any]) -> None:
    allow = ["workspace.write_file", "chat.search"]
    profile = compiler.resolve_profile(
        preset=preset_with({"tools": {"allow": ["*"]}}),
        user={"tools": {"allow": allow}},
        run=run,
    )
    assert profile.tools.user_allow == allow
    assert profile.tools.visible == ["chat.search", "workspace.write_file"]
    result = compiler.compile_string(
        TEMPLATE, context={"tools": [run_tool("mcp.search")]}, profile=profile
    )
    assert sorted(offered(result)) == ["chat_search", "workspace_write_file"]
    assert_gate_is_the_request(result, ["mcp.search"])


def test_user_may_still_choose_permissive_mode() -> None:
    profile = compiler.resolve_profile(user={"tools": {"mode": "permissive", "deny": ["agent.*"]}})
    assert profile.tools.user_allow is None
    assert profile.tools.visible == [t for t in KNOWN_TOOLS if not t.startswith("agent.")]


def test_cli_user_allow_bounds_a_permissive_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "t.txt"
    template.write_text(TEMPLATE)
    ctx = write(tmp_path / "run.json", {"tools": [run_tool("mcp.search")]})
    user = write(
        tmp_path / "user.json", {"tools": {"allow": ["workspace.write_file", "chat.search"]}}
    )
    run = write(tmp_path / "p.json", {"tools": {"mode": "permissive"}})
    args = ["compile", str(template), "--context", str(ctx), "--user", str(user), "--run"]
    assert main([*args, str(run)]) == 0
    assert sorted(offered_json(capsys.readouterr().out)) == ["chat_search", "workspace_write_file"]
    assert main(["profile", "resolve", "--user", str(user), "--run", str(run)]) == 0
    tools = json.loads(capsys.readouterr().out)["tools"]
    assert tools["visible"] == ["chat.search", "workspace.write_file"]
    assert tools["userAllow"] == ["workspace.write_file", "chat.search"]


# --------------------------------------------------------------------- 10. disabled providers


@pytest.mark.parametrize("source", ["openrouter", "OpenRouter", " openrouter ", "OPENROUTER\t"])
@pytest.mark.parametrize("disabled", ["openrouter", "OpenRouter", " openRouter "])
def test_disabled_provider_matches_whatever_the_case_and_spaces(source: str, disabled: str) -> None:
    platform = compiler.PlatformPolicy.from_json({"disabledProviders": [disabled]})
    assert platform.disables(source)
    for attempt in (
        lambda: compiler.resolve_profile(
            preset=preset_with({"model": {"source": source, "model": "x"}}), platform=platform
        ),
        lambda: compiler.resolve_profile(
            character=card_with({"model": {"source": source, "model": "x"}}), platform=platform
        ),
    ):
        with pytest.raises(ProfileError) as info:
            attempt()
        assert info.value.code == "agent.creator_limit"
        assert info.value.path is not None and info.value.path.endswith(".model.source")


def test_platform_policy_normalises_when_built_directly() -> None:
    platform = compiler.PlatformPolicy(disabled_providers=frozenset({" OpenRouter "}))
    assert platform.disabled_providers == frozenset({"openrouter"})
    assert platform.disables("openrouter") and not platform.disables("openai")


def test_cli_disabled_provider(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preset = write(
        tmp_path / "preset.json", preset_with({"model": {"source": "OpenRouter", "model": "x"}})
    )
    platform = write(tmp_path / "platform.json", {"disabledProviders": [" openrouter"]})
    args = ["profile", "resolve", "--preset", str(preset), "--platform", str(platform)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "error[agent.creator_limit]" in err and "agent.profiles[0].model.source" in err
    ctx = write(tmp_path / "run.json", {})
    compile_args = ["compile", str(preset), "--context", str(ctx), "--platform", str(platform)]
    assert main(compile_args) == 1
    assert "error[agent.creator_limit]" in capsys.readouterr().err
