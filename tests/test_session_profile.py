"""A session keeps the profile it resolved: bound to the run's tools, handed out as a copy."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

import compiler
from compiler.profile import ProfileLayers, ResolvedAgentProfile
from compiler.profile.resolve import copy_profile
from tests.test_session_turns import agent_card

TEMPLATE = "You narrate. <<agent.character>>\n<<agent.chat.history>>"
CHAT = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"line {i}"} for i in range(9)]


def card(allow: list[str]) -> dict[str, Any]:
    """A V2 card whose embedded agent profile sets tool patterns and descriptions."""
    return agent_card(
        {"tools": {"allow": allow, "toolDescriptions": {"chat.search": "Search the chat."}}}
    )


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": "d", "parameters": {"type": "object", "properties": {}}}


def vandalize(profile: ResolvedAgentProfile) -> None:
    """Change every kind of mutable part a caller can reach."""
    profile.tools.visible.append("mcp.evil")
    profile.tools.allow.clear()
    profile.tools.tool_descriptions["chat.search"] = "changed"
    profile.tools = profile.tools.model_copy(update={"deny": ["*"]})
    profile.context.history_budget_tokens = 1
    profile.provenance.clear()
    profile.warnings.clear()
    profile.output.artifacts.clear()


def test_mutating_one_turn_s_profile_does_not_change_the_next_turn() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=900)
    ctx = {"chat": CHAT, "character": card(["chat.*", "workspace.*", "mcp.*", "nosuch.*"])}
    first = session.compile(ctx)
    assert first.profile is not None
    kept = first.profile.model_copy(deep=True)
    vandalize(first.profile)
    for _ in range(2):
        result = session.compile(ctx)
        assert result.profile == kept
        assert result.request == compiler.compile_string(TEMPLATE, context=ctx, budget=900).request
        assert result.profile is not None
        vandalize(result.profile)


def test_the_kept_profile_is_bound_again_when_the_run_s_tools_change() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=900)
    allow = ["chat.*", "workspace.*", "mcp.*", "nosuch.*"]
    runs: list[list[dict[str, Any]]] = [[], [tool("mcp.search")], [tool("nosuch.x")], [], []]
    for tools in runs:
        ctx = {"chat": CHAT, "character": card(allow), "tools": tools}
        warm = session.compile(ctx)
        cold = compiler.compile_string(TEMPLATE, context=ctx, budget=900)
        assert warm.profile == cold.profile
        assert warm.warnings == cold.warnings
        assert warm.request == cold.request
        assert warm.profile is not None
        names = [t["name"] for t in tools]
        assert [v for v in warm.profile.tools.visible if "." in v and v in names] == names
        unmatched = [w for w in warm.warnings if "nosuch.*" in w.message]
        assert bool(unmatched) is (names != ["nosuch.x"])  # a run tool it matches: no warning


def test_a_profile_copy_is_equal_and_shares_nothing_mutable() -> None:
    profile = ProfileLayers(character=card(["chat.*", "workspace.*"])).resolve()
    copied = copy_profile(profile)
    assert copied == profile
    assert copied.model_fields_set == profile.model_fields_set
    assert copied.model_dump(exclude_unset=True) == profile.model_dump(exclude_unset=True)
    assert copied.to_json() == profile.to_json()

    def mutable(value: Any, path: str = "") -> dict[str, int]:
        found: dict[str, int] = {}
        if isinstance(value, BaseModel):
            if not value.model_config.get("frozen"):
                found[path] = id(value)
            for name, item in value.__dict__.items():
                found |= mutable(item, f"{path}.{name}")
        elif isinstance(value, list | dict):
            found[path] = id(value)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                found |= mutable(item, f"{path}[{key}]")
        return found

    original, other = mutable(profile), mutable(copied)
    assert original.keys() == other.keys() and len(original) > 20
    assert not set(original.values()) & set(other.values())


def test_the_built_in_profile_resolved_again_is_untouched_by_a_caller_s_changes() -> None:
    first = ProfileLayers().resolve()
    expected = first.model_copy(deep=True)
    vandalize(first)
    second = ProfileLayers().resolve()
    assert second == expected
    assert second.provenance["id"].layer == "builtin"
    assert second.tools.visible and "workspace.write_file" in second.tools.visible
