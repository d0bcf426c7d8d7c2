"""Layered resolution: each precedence rule has a case that fails if the rule were reversed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compiler.errors import ProfileError
from compiler.profile import DEFAULT_AGENT_SYSTEM_PROMPT, resolve_profile
from compiler.profile.tool_catalogue import KNOWN_TOOLS


def preset_with(profile: dict[str, Any], **agent: Any) -> dict[str, Any]:
    return {
        "agent": {"profiles": [{"id": "writer", **profile}], "defaultProfile": "writer", **agent}
    }


def card_with(profile: dict[str, Any]) -> dict[str, Any]:
    items = [{"id": "writer", **profile}]
    return {
        "spec": "chara_card_v2",
        "data": {
            "name": "X",
            "extensions": {"tauritavern": {"agentProfiles": {"version": 1, "items": items}}},
        },
    }


WRITE = "workspace.write_file"


def test_builtin_only_is_default_writer() -> None:
    resolved = resolve_profile()
    assert resolved.id == "default-writer"
    assert resolved.tools.visible == [
        t for t in KNOWN_TOOLS if t in resolved.tools.allow
    ]  # catalogue order
    assert "workspace.commit" not in resolved.tools.visible  # conservative: not allowed
    assert resolved.enabled is True
    assert resolved.effective_system_prompt() == DEFAULT_AGENT_SYSTEM_PROMPT
    assert resolved.context.total_context_budget is None
    assert resolved.provenance["tools.maxRounds"].layer == "builtin"
    assert resolved.warnings == []


def test_user_deny_survives_run_allow() -> None:
    resolved = resolve_profile(
        user={"tools": {"deny": ["chat.search"]}},
        run={"tools": {"allow": ["chat.search", "chat.read_messages", WRITE]}},
    )
    assert "chat.search" not in resolved.tools.visible
    assert resolved.tools.visible == ["chat.read_messages", WRITE]
    assert resolved.tools.deny == ["chat.search"]
    assert resolved.provenance["tools.deny[0]"].layer == "user"


def test_run_deny_cannot_be_lifted_by_an_empty_list() -> None:
    resolved = resolve_profile(
        preset=preset_with({"tools": {"deny": ["skill.*"]}}),
        run={"tools": {"deny": [], "allow": ["skill.read", WRITE]}},
    )
    assert resolved.tools.visible == [WRITE]


def test_later_allow_replaces_earlier_allow() -> None:
    resolved = resolve_profile(
        preset=preset_with({"tools": {"allow": ["chat.search", "dice.roll", WRITE]}}),
        run={"tools": {"allow": ["skill.read", WRITE]}},
    )
    assert resolved.tools.allow == ["skill.read", WRITE]
    assert "dice.roll" not in resolved.tools.visible
    assert "chat.search" not in resolved.tools.visible
    assert resolved.provenance["tools.allow"].layer == "run"


def test_deny_and_require_approval_accumulate_across_layers() -> None:
    resolved = resolve_profile(
        preset=preset_with(
            {
                "tools": {
                    "allow": ["*"],
                    "deny": ["dice.roll"],
                    "requireApproval": ["workspace.commit"],
                }
            }
        ),
        character=card_with({"tools": {"deny": ["agent.*"]}}),
        user={"tools": {"deny": ["chat.search"], "requireApproval": ["workspace.write_file"]}},
        run={"tools": {"deny": ["dice.roll"]}},
    )
    assert resolved.tools.deny == ["dice.roll", "agent.*", "chat.search"]
    for gone in ("dice.roll", "agent.list", "agent.delegate", "chat.search"):
        assert gone not in resolved.tools.visible
    assert resolved.tools.approval_required == [WRITE, "workspace.commit"]
    assert resolved.provenance["tools.deny[0]"].layer == "preset"
    assert resolved.provenance["tools.deny[1]"].layer == "character"
    assert resolved.provenance["tools.deny[2]"].layer == "user"


def test_require_approval_is_not_deny() -> None:
    resolved = resolve_profile(run={"tools": {"requireApproval": ["workspace.*"]}})
    assert WRITE in resolved.tools.visible
    assert WRITE in resolved.tools.approval_required
    assert "chat.search" not in resolved.tools.approval_required


def test_deny_beats_allow_in_one_layer() -> None:
    resolved = resolve_profile(
        run={"tools": {"allow": ["workspace.*"], "deny": ["workspace.finish"]}}
    )
    assert "workspace.finish" not in resolved.tools.visible
    assert "workspace.commit" in resolved.tools.visible


def test_permissive_mode_shows_every_known_tool_not_denied() -> None:
    resolved = resolve_profile(
        run={"tools": {"mode": "permissive", "allow": [], "deny": ["agent.*"]}}
    )
    assert resolved.tools.visible == [t for t in KNOWN_TOOLS if not t.startswith("agent.")]
    conservative = resolve_profile(run={"tools": {"allow": [WRITE]}})
    assert conservative.tools.visible == [WRITE]


@pytest.mark.parametrize(
    ("layers", "expected", "layer"),
    [
        ({"preset": 10}, 10, "preset"),
        ({"preset": 10, "character": 20}, 20, "character"),
        ({"preset": 10, "character": 20, "user": 30}, 30, "user"),
        ({"preset": 10, "character": 20, "user": 30, "run": 40}, 40, "run"),
        ({"run": 40, "preset": 10}, 40, "run"),
        ({"user": 30, "character": 20}, 30, "user"),
    ],
)
def test_later_scalar_wins(layers: dict[str, int], expected: int, layer: str) -> None:
    def tools(name: str) -> dict[str, Any]:
        return {"tools": {"maxRounds": layers[name]}} if name in layers else {}

    resolved = resolve_profile(
        preset=preset_with(tools("preset")),  # always defines "writer"
        character=card_with(tools("character")) if "character" in layers else None,
        user=tools("user") or None,
        run=tools("run") or None,
    )
    assert resolved.tools.max_rounds == expected
    assert resolved.provenance["tools.maxRounds"].layer == layer


def test_include_is_replaced_and_exclude_accumulates() -> None:
    resolved = resolve_profile(
        preset=preset_with(
            {
                "context": {
                    "include": ["chat.history", "world.activated"],
                    "exclude": ["user.secrets"],
                }
            }
        ),
        user={"context": {"exclude": ["workspace.scratch.private"]}},
        run={"context": {"include": ["agent.plan"], "exclude": []}},
    )
    assert resolved.context.include == ["agent.plan"]
    assert resolved.context.exclude == ["user.secrets", "workspace.scratch.private"]


def test_objects_merge_key_by_key() -> None:
    resolved = resolve_profile(
        preset=preset_with(
            {
                "context": {"historyBudgetTokens": 12000},
                "tools": {"maxCallsPerTool": {"chat.search": 5}},
            }
        ),
        run={
            "context": {"toolResultBudgetTokens": 2000},
            "tools": {"maxCallsPerTool": {"skill.read": 2}},
        },
    )
    assert resolved.context.history_budget_tokens == 12000
    assert resolved.context.tool_result_budget_tokens == 2000
    assert resolved.tools.max_calls_per_tool == {"chat.search": 5, "skill.read": 2}
    assert resolved.tools.max_rounds == 80  # untouched default survives
    assert resolved.provenance["context.historyBudgetTokens"].layer == "preset"
    assert resolved.provenance['tools.maxCallsPerTool["skill.read"]'].layer == "run"


def test_system_prompt_null_means_default_and_later_null_wins() -> None:
    custom = resolve_profile(
        preset=preset_with({"instructions": {"agentSystemPrompt": "Be terse."}})
    )
    assert custom.effective_system_prompt() == "Be terse."
    reset = resolve_profile(
        preset=preset_with({"instructions": {"agentSystemPrompt": "Be terse."}}),
        run={"instructions": {"agentSystemPrompt": None}},
    )
    assert reset.effective_system_prompt() == DEFAULT_AGENT_SYSTEM_PROMPT


def test_model_form_switch_replaces_and_same_form_merges() -> None:
    switched = resolve_profile(
        preset=preset_with({"model": {"source": "openai", "model": "gpt-4o"}}),
        run={"model": {"mode": "connectionRef", "connectionRef": "conn", "modelId": "m1"}},
    )
    assert switched.model.source is None and switched.model.model is None
    assert switched.model.connection_ref == "conn"
    merged = resolve_profile(
        user={"model": {"mode": "connectionRef", "connectionRef": "conn", "modelId": "m1"}},
        run={"model": {"modelId": "m2"}},
    )
    assert (merged.model.mode, merged.model.connection_ref, merged.model.model_id) == (
        "connectionRef",
        "conn",
        "m2",
    )
    assert merged.provenance["model.connectionRef"].layer == "user"
    assert merged.provenance["model.modelId"].layer == "run"
    back = resolve_profile(
        user={"model": {"mode": "connectionRef", "connectionRef": "conn", "modelId": "m1"}},
        run={"model": {"mode": "currentPromptSnapshot"}},
    )
    assert back.model.connection_ref is None


def test_cross_field_rules_wait_for_the_merge() -> None:
    resolved = resolve_profile(
        user={"plan": {"nodes": [{"id": "outline", "locked": True}]}},
        run={"plan": {"mode": "hybrid"}},
    )
    assert resolved.plan.mode == "hybrid"
    assert [n.id for n in resolved.plan.nodes] == ["outline"]
    with pytest.raises(ProfileError) as info:
        resolve_profile(run={"plan": {"mode": "strict"}})
    assert info.value.code == "agent.plan_nodes_required"
    assert info.value.file == "<run>"


def test_character_beats_preset_and_provenance_names_files(write_json: Any) -> None:
    preset = write_json(
        "preset.json", preset_with({"tools": {"maxRounds": 10, "maxCallsPerRun": 7}})
    )
    card = write_json("card.json", card_with({"tools": {"maxRounds": 20}}))
    resolved = resolve_profile(preset=preset, character=card)
    assert resolved.id == "writer"
    assert resolved.tools.max_rounds == 20
    assert resolved.tools.max_calls_per_run == 7
    assert resolved.provenance["tools.maxRounds"].file == card
    assert resolved.provenance["tools.maxCallsPerRun"].file == preset
    assert resolved.provenance["id"].file == preset  # the preset's defaultProfile chose it


def test_enabled_flag_comes_from_the_agent_schemas() -> None:
    off = resolve_profile(preset=preset_with({}, enabled=False))
    assert off.enabled is False
    assert off.provenance["enabled"].layer == "preset"
    card = card_with({})
    card["data"]["extensions"]["agent"] = {"enabled": True}
    on = resolve_profile(preset=preset_with({}, enabled=False), character=card)
    assert on.enabled is True
    assert on.provenance["enabled"].layer == "character"


def test_allow_matching_no_known_tool_is_a_warning_deny_is_not(write_json: Any) -> None:
    preset = write_json(
        "p.json",
        preset_with(
            {"tools": {"allow": ["mcp.*", "workspace.red_file", WRITE], "deny": ["shell.*"]}}
        ),
    )
    resolved = resolve_profile(preset=preset)
    assert [(w.code, w.path, w.severity) for w in resolved.warnings] == [
        ("agent.profile_unknown_tool", "agent.profiles[0].tools.allow[0]", "warning"),
        ("agent.profile_unknown_tool", "agent.profiles[0].tools.allow[1]", "warning"),
    ]
    assert resolved.warnings[1].hint == "did you mean 'workspace.read_file'?"
    assert resolved.warnings[1].file == preset


def test_budget_for_a_tool_a_later_layer_denies_is_a_warning() -> None:
    resolved = resolve_profile(
        preset=preset_with({"tools": {"maxCallsPerTool": {"chat.search": 3}}}),
        user={"tools": {"deny": ["chat.search"]}},
    )
    assert [w.code for w in resolved.warnings] == ["agent.profile_tool_budget_invisible"]


def test_sub_budget_larger_than_total_is_a_warning() -> None:
    resolved = resolve_profile(
        run={"context": {"totalContextBudget": 8000, "historyBudgetTokens": 9000}}
    )
    assert [(w.code, w.path) for w in resolved.warnings] == [
        ("agent.profile_budget_exceeds_total", "context.historyBudgetTokens")
    ]


def test_merged_errors_point_at_the_layer_that_set_the_field(write_json: Any) -> None:
    run = write_json("run.json", {"workspace": {"writableRoots": ["scratch"]}})
    with pytest.raises(ProfileError) as info:
        resolve_profile(run=run)
    (diag,) = info.value.diagnostics
    assert diag.code == "agent.profile_artifact_root_not_writable"
    assert diag.path == "output.artifacts[0].path"
    assert diag.file is None  # the offending artifact is the built-in one
    run2 = write_json(
        "run2.json",
        {
            "output": {
                "artifacts": [
                    {"id": "m", "path": "persist/../x", "kind": "k", "target": "messageBody"}
                ]
            }
        },
    )
    with pytest.raises(ProfileError) as info2:
        resolve_profile(run=run2)
    assert (info2.value.code, info2.value.file) == ("workspace.path_invalid", run2)


# ------------------------------------------------------------------ which profile is selected


def test_profile_option_selects_among_preset_profiles() -> None:
    preset = {
        "agent": {
            "profiles": [
                {"id": "writer", "tools": {"maxRounds": 5}},
                {"id": "editor", "tools": {"maxRounds": 9}},
            ],
            "defaultProfile": "writer",
        }
    }
    assert resolve_profile(preset=preset).tools.max_rounds == 5
    editor = resolve_profile(preset=preset, profile_id="editor")
    assert (editor.id, editor.tools.max_rounds) == ("editor", 9)
    assert resolve_profile(preset=preset, profile_id="  ").id == "default-writer"


def test_character_default_profile_beats_preset_default() -> None:
    preset = {"agent": {"profiles": [{"id": "writer"}, {"id": "poet"}], "defaultProfile": "writer"}}
    card = card_with({})
    card["data"]["extensions"]["agent"] = {"defaultProfile": "poet"}
    assert resolve_profile(preset=preset, character=card).id == "poet"


def test_unknown_profile_is_not_found_with_a_hint() -> None:
    with pytest.raises(ProfileError) as info:
        resolve_profile(preset=preset_with({}), profile_id="writr")
    assert info.value.code == "agent.profile_not_found"
    assert info.value.hint == "did you mean 'writer'?"
    with pytest.raises(ProfileError) as info2:
        resolve_profile(preset={"agent": {"profiles": [], "defaultProfile": "ghost"}})
    assert (info2.value.code, info2.value.path) == (
        "agent.profile_not_found",
        "agent.defaultProfile",
    )


def test_invalid_profile_option() -> None:
    with pytest.raises(ProfileError) as info:
        resolve_profile(profile_id="Not Valid")
    assert info.value.code == "agent.profile_id_invalid"


def test_fragment_with_an_id_defines_and_selects_a_profile() -> None:
    resolved = resolve_profile(user={"id": "mine", "displayName": "Mine"})
    assert (resolved.id, resolved.display_name) == ("mine", "Mine")


def test_fragment_id_must_agree_with_profile_option() -> None:
    with pytest.raises(ProfileError) as info:
        resolve_profile(profile_id="default-writer", run={"id": "other"})
    assert info.value.code == "agent.profile_id_mismatch"


def test_resolution_is_deterministic() -> None:
    preset = preset_with({"tools": {"allow": ["*"], "deny": ["agent.*"]}})
    first = resolve_profile(preset=copy.deepcopy(preset)).model_dump_json(by_alias=True)
    second = resolve_profile(preset=copy.deepcopy(preset)).model_dump_json(by_alias=True)
    assert first == second


RESOLVED_CASES = {
    "builtin": {},
    "model switch": {
        "preset": preset_with({"model": {"source": "openai", "model": "gpt-4o"}}),
        "run": {"model": {"mode": "connectionRef", "connectionRef": "conn", "modelId": "m1"}},
    },
    "artifacts and tools": {
        "preset": preset_with(
            {
                "output": {
                    "artifacts": [
                        {"id": "a", "path": "output/a.md", "kind": "body", "target": "messageBody"}
                    ]
                },
                "tools": {"allow": ["workspace.*", "mcp.*"], "deny": ["workspace.finish"]},
            }
        ),
        "user": {"tools": {"allow": ["workspace.*", "chat.search"]}},
        "run": {"context": {"historyBudgetTokens": 100}, "plan": {"mode": "free"}},
    },
    "disabled": {"preset": preset_with({}, enabled=False)},
}


@pytest.mark.parametrize("layers", RESOLVED_CASES.values(), ids=list(RESOLVED_CASES))
def test_a_resolved_profile_is_what_validating_its_dump_gives(layers: dict[str, Any]) -> None:
    """The resolved profile is made from the merged profile's validated values (not
    validated twice): it equals a validation of its own full dump, model for model, with the
    same fields set at every level (what ``model_dump(exclude_unset=True)`` reads)."""
    from pydantic import BaseModel

    from compiler.profile import ResolvedAgentProfile

    resolved = resolve_profile(**layers)
    again = ResolvedAgentProfile.model_validate(resolved.model_dump(mode="json", by_alias=True))
    again.warnings = resolved.warnings

    def same(a: Any, b: Any) -> None:
        assert type(a) is type(b)
        if isinstance(a, BaseModel):
            assert a.model_fields_set == b.model_fields_set
            for name in type(a).model_fields:
                same(getattr(a, name), getattr(b, name))
        elif isinstance(a, list | dict):
            assert len(a) == len(b)
            for x, y in (
                zip(a, b, strict=True)
                if isinstance(a, list)
                else zip(a.items(), b.items(), strict=True)
            ):
                same(x, y)
        elif isinstance(a, tuple):
            assert a == b
        else:
            assert a == b

    same(resolved, again)
    assert resolved.model_dump(exclude_unset=True) == again.model_dump(exclude_unset=True)
