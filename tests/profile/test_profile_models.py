"""The profile and preset models: the seed examples load unchanged; every error has code+path."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from profile_helpers import SEED_DOC, seed_section2, seed_section12

from compiler.errors import ProfileError
from compiler.profile import DEFAULT_WRITER, AgentProfile, AgentSchema, resolve_profile
from compiler.profile.models import (
    MessageExtraTarget,
    ModelPolicy,
    ProfileFragment,
    check_profile_id,
    format_path,
    validate_model,
)


def test_fixtures_are_the_seed_verbatim() -> None:
    if not SEED_DOC.is_file():
        pytest.skip(f"seed document not found at {SEED_DOC}")
    blocks = [
        json.loads(b) for b in re.findall(r"\n(\{\n.*?\n\})\n", SEED_DOC.read_text("utf-8"), re.S)
    ]
    assert seed_section2() in blocks
    assert seed_section12() in blocks


def test_default_writer_is_seed_section_12(section12: dict[str, Any]) -> None:
    assert section12 == DEFAULT_WRITER
    profile = AgentProfile.model_validate(section12)
    assert profile.id == "default-writer"
    assert profile.tools.max_rounds == 80
    assert profile.output.artifacts[0].is_message_body
    # Round trip: what was set dumps back unchanged.
    assert profile.model_dump(mode="json", by_alias=True, exclude_unset=True) == section12


def test_section_2_example_loads_unchanged(section2: dict[str, Any]) -> None:
    original = copy.deepcopy(section2)
    schema = AgentSchema.model_validate(section2["agent"])
    assert section2 == original
    assert schema.enabled is True
    assert schema.default_profile == "writer"
    writer = schema.profiles[0]
    assert writer.display_name == "Writer"
    assert writer.model.source == "openai" and writer.model.model == "..."
    assert writer.context.history_budget_tokens == 12000
    assert writer.tools.require_approval == ["mcp.*", "workspace.commit"]
    main, status = writer.output.artifacts
    assert main.target == "messageBody"
    assert status.target == MessageExtraTarget(message_extra="status_bar")


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("messageBody", "messageBody"),
        ("message_body", "messageBody"),
        ({"message_extra": "bar"}, MessageExtraTarget(message_extra="bar")),
        ({"messageExtra": "bar"}, MessageExtraTarget(message_extra="bar")),
    ],
)
def test_target_forms(target: Any, expected: Any) -> None:
    artifact = {"id": "a", "path": "output/a.md", "kind": "k", "target": target}
    model = validate_model(AgentProfile, {"id": "x", "output": {"artifacts": [artifact]}})
    assert model.output.artifacts[0].target == expected


def test_model_accepts_both_forms() -> None:
    direct = ModelPolicy.model_validate({"source": "openai", "model": "gpt-4o"})
    assert direct.form == "direct"
    bound = ModelPolicy.model_validate(
        {"mode": "connectionRef", "connectionRef": "conn", "modelId": "m"}
    )
    assert bound.form == "binding"
    assert bound.connection_ref == "conn"


def test_snake_case_names_are_accepted() -> None:
    fragment = ProfileFragment.model_validate({"tools": {"require_approval": ["mcp.*"]}})
    assert fragment.tools.require_approval == ["mcp.*"]


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("", "agent.profile_id_empty"),
        ("   ", "agent.profile_id_empty"),
        ("x" * 129, "agent.profile_id_too_long"),
        ("Writer", "agent.profile_id_invalid"),
        ("my writer", "agent.profile_id_invalid"),
        ("a/b", "agent.profile_id_invalid"),
        ("x" * 128, None),
        ("my_writer-2", None),
    ],
)
def test_profile_id_rules(value: str, code: str | None) -> None:
    assert check_profile_id(value) == code


def test_format_path_quotes_dotted_keys() -> None:
    assert format_path(("profiles", 0, "tools", "alow")) == "profiles[0].tools.alow"
    assert format_path(("maxCallsPerTool", "chat.search"), "tools") == (
        'tools.maxCallsPerTool["chat.search"]'
    )


def _preset_error(section2: dict[str, Any], mutate: Any) -> ProfileError:
    preset = copy.deepcopy(section2)
    mutate(preset["agent"]["profiles"][0])
    with pytest.raises(ProfileError) as info:
        resolve_profile(preset=preset)
    return info.value


def _set(path: str, value: Any) -> Any:
    def mutate(profile: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = profile
        for key in parents:
            target = target.setdefault(key, {})
        target[last] = value

    return mutate


# Every validation error: (mutation of the section 2 "writer" profile, code, path in the file).
CASES = [
    (_set("tools.alow", []), "profile.unknown_field", "agent.profiles[0].tools.alow"),
    (_set("id", ""), "agent.profile_id_empty", "agent.profiles[0].id"),
    (_set("id", "w" * 129), "agent.profile_id_too_long", "agent.profiles[0].id"),
    (_set("id", "Writer!"), "agent.profile_id_invalid", "agent.profiles[0].id"),
    (
        _set("instructions.agentSystemPrompt", " "),
        "agent.profile_system_prompt_empty",
        "agent.profiles[0].instructions.agentSystemPrompt",
    ),
    (_set("plan.mode", "loose"), "agent.plan_mode_unsupported", "agent.profiles[0].plan.mode"),
    (_set("plan.mode", "strict"), "agent.plan_nodes_required", "agent.profiles[0].plan"),
    (
        _set("context.historyBudgetTokens", -5),
        "profile.invalid_value",
        "agent.profiles[0].context.historyBudgetTokens",
    ),
    (_set("tools.mode", "open"), "profile.invalid_value", "agent.profiles[0].tools.mode"),
    (_set("tools.maxRounds", 0), "profile.invalid_value", "agent.profiles[0].tools.maxRounds"),
    (
        _set("tools.allow", ["Chat.Search"]),
        "profile.invalid_value",
        "agent.profiles[0].tools.allow[0]",
    ),
    (
        _set("tools.maxCallsPerTool", {"chat.serch": 3}),
        "agent.profile_unknown_tool",
        'agent.profiles[0].tools.maxCallsPerTool["chat.serch"]',
    ),
    (
        _set("tools.toolDescriptions", {"dice.rol": "Roll"}),
        "agent.profile_unknown_tool",
        'agent.profiles[0].tools.toolDescriptions["dice.rol"]',
    ),
    (
        _set("tools.allow", ["task.return", "workspace.write_file"]),
        "agent.profile_task_return_runtime_only",
        "agent.profiles[0].tools.allow[0]",
    ),
    (_set("tools.allow", ["chat.search"]), "agent.profile_output_writer_required", None),
    (_set("tools.deny", ["*"]), "agent.profile_tools_empty", None),
    (
        _set("model", {"mode": "connectionRef", "modelId": "m"}),
        "agent.profile_model_connection_ref_required",
        "agent.profiles[0].model",
    ),
    (
        _set("model", {"mode": "connectionRef", "connectionRef": "c"}),
        "agent.profile_model_id_required",
        "agent.profiles[0].model",
    ),
    (
        _set("model", {"source": "openai", "mode": "currentPromptSnapshot"}),
        "profile.invalid_value",
        "agent.profiles[0].model",
    ),
    (_set("preset", {"mode": "ref"}), "agent.profile_preset_ref_required", None),
    (
        _set("run.modelRetry", {"maxRetries": 2, "intervalMs": 0}),
        "agent.profile_model_retry_invalid",
        None,
    ),
    (
        _set("workspace.visibleRoots", ["output", "secrets"]),
        "agent.profile_workspace_root_unknown",
        "agent.profiles[0].workspace.visibleRoots[1]",
    ),
    (
        _set("workspace", {"visibleRoots": ["output"], "writableRoots": ["output", "scratch"]}),
        "agent.profile_writable_root_not_visible",
        "agent.profiles[0].workspace.writableRoots[1]",
    ),
    (
        _set("output.artifacts", [{"id": "m", "path": "output/m.md", "kind": "k"}]),
        "profile.missing_field",
        "agent.profiles[0].output.artifacts[0].target",
    ),
    (
        _set(
            "output.artifacts",
            [{"id": "s", "path": "output/s.md", "kind": "k", "target": {"message_extra": "x"}}],
        ),
        "agent.profile_message_body_required",
        "agent.profiles[0].output.artifacts",
    ),
    (
        _set(
            "output.artifacts",
            [
                {"id": "a", "path": "output/a.md", "kind": "k", "target": "messageBody"},
                {"id": "b", "path": "output/b.md", "kind": "k", "target": "message_body"},
            ],
        ),
        "agent.profile_message_body_duplicate",
        "agent.profiles[0].output.artifacts[1].target",
    ),
    (
        _set(
            "output.artifacts",
            [
                {"id": "a", "path": "output/a.md", "kind": "k", "target": "messageBody"},
                {"id": "a", "path": "output/b.md", "kind": "k", "target": {"message_extra": "x"}},
            ],
        ),
        "agent.profile_artifact_duplicate_id",
        "agent.profiles[0].output.artifacts[1].id",
    ),
    (
        _set(
            "output.artifacts",
            [
                {"id": "a", "path": "output/a.md", "kind": "k", "target": "messageBody"},
                {"id": "b", "path": "output\\a.md", "kind": "k", "target": {"message_extra": "x"}},
            ],
        ),
        "agent.profile_artifact_duplicate_path",
        "agent.profiles[0].output.artifacts[1].path",
    ),
    (
        _set(
            "output.artifacts",
            [{"id": "a", "path": "../etc/a.md", "kind": "k", "target": "messageBody"}],
        ),
        "workspace.path_invalid",
        "agent.profiles[0].output.artifacts[0].path",
    ),
    (
        _set(
            "output.artifacts",
            [{"id": "a", "path": "C:/a/b.md", "kind": "k", "target": "messageBody"}],
        ),
        "workspace.path_invalid",
        "agent.profiles[0].output.artifacts[0].path",
    ),
    (
        _set(
            "workspace",
            {"visibleRoots": ["output", "scratch"], "writableRoots": ["scratch"]},
        ),
        "agent.profile_artifact_root_not_writable",
        "agent.profiles[0].output.artifacts[0].path",
    ),
    (
        _set("output.artifacts", [{"id": "a", "path": "output/a.md", "kind": "k", "target": 3}]),
        "profile.invalid_value",
        "agent.profiles[0].output.artifacts[0].target",
    ),
    (
        _set("plan", {"mode": "free", "nodes": [{"id": "n"}, {"id": "n"}]}),
        "agent.plan_node_duplicate_id",
        "agent.profiles[0].plan",
    ),
]


@pytest.mark.parametrize(("mutate", "code", "path"), CASES)
def test_validation_errors(
    section2: dict[str, Any], mutate: Any, code: str, path: str | None
) -> None:
    error = _preset_error(section2, mutate)
    codes = [(d.code, d.path) for d in error.diagnostics]
    assert code in [c for c, _ in codes], codes
    if path is not None:
        assert (code, path) in codes
    assert all(d.file == "<preset>" for d in error.diagnostics if d.code == code)


def test_unknown_field_has_did_you_mean(section2: dict[str, Any]) -> None:
    error = _preset_error(section2, _set("tools.alow", []))
    (diag,) = error.diagnostics
    assert diag.hint == "did you mean 'allow'?"
    nested = _preset_error(section2, _set("run.modelRetry.maxRetrys", 1))
    assert nested.diagnostics[0].path == "agent.profiles[0].run.modelRetry.maxRetrys"
    assert nested.diagnostics[0].hint == "did you mean 'maxRetries'?"
    artifact = _preset_error(
        section2,
        _set(
            "output.artifacts",
            [
                {
                    "id": "a",
                    "path": "output/a.md",
                    "kind": "k",
                    "target": "messageBody",
                    "requred": 1,
                }
            ],
        ),
    )
    assert artifact.diagnostics[0].hint == "did you mean 'required'?"


def test_unknown_target_key_has_did_you_mean(section2: dict[str, Any]) -> None:
    error = _preset_error(
        section2,
        _set(
            "output.artifacts",
            [{"id": "a", "path": "output/a.md", "kind": "k", "target": {"mesage_extra": "x"}}],
        ),
    )
    assert error.code == "profile.unknown_field"
    assert error.hint == "did you mean 'message_extra'?"


def test_every_error_in_a_layer_is_reported(section2: dict[str, Any]) -> None:
    def two(profile: dict[str, Any]) -> None:
        profile["tools"]["alow"] = []
        profile["context"]["histryBudgetTokens"] = 1

    error = _preset_error(section2, two)
    assert sorted(d.path or "" for d in error.diagnostics) == [
        "agent.profiles[0].context.histryBudgetTokens",
        "agent.profiles[0].tools.alow",
    ]


def test_duplicate_profile_ids_in_a_schema(section2: dict[str, Any]) -> None:
    section2["agent"]["profiles"].append(copy.deepcopy(section2["agent"]["profiles"][0]))
    with pytest.raises(ProfileError) as info:
        resolve_profile(preset=section2)
    assert info.value.code == "agent.profile_duplicate_id"
    assert info.value.path == "agent"


def test_missing_profile_id_fails_fast(section2: dict[str, Any]) -> None:
    del section2["agent"]["profiles"][0]["id"]
    with pytest.raises(ProfileError) as info:
        resolve_profile(preset=section2)
    assert (info.value.code, info.value.path) == ("profile.missing_field", "agent.profiles[0].id")
