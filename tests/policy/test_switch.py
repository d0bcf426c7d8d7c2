"""Profile switching through the plan guard (seed 10)."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.errors import PolicyError, ProfileError
from compiler.policy import PlanAction, PlanGuard, load_plan
from compiler.profile import ResolvedAgentProfile, resolve_profile

EDITOR = {
    "id": "editor",
    "tools": {"allow": ["workspace.read_file", "workspace.write_file"]},
    "switch": {"enabled": True, "allowedProfiles": ["default-writer"], "maxSwitchesPerRun": 9},
}
PRESET = {"agent": {"profiles": [EDITOR]}}


def _guard(plan: dict[str, Any] | None = None, **run: Any) -> PlanGuard:
    profile = resolve_profile(preset=PRESET, run=run or None)

    def lookup(pid: str) -> ResolvedAgentProfile:
        if pid == "broken":
            raise ProfileError(code="agent.creator_limit", message="outside platform limits")
        return resolve_profile(profile_id=pid, preset=PRESET)

    return PlanGuard(profile, load_plan(plan) if plan else None, lookup=lookup)


def _switch(g: PlanGuard, target: str, source: str = "model") -> str:
    return g.apply(PlanAction.from_json({"action": "switch_profile", "profile": target,
                                         "source": source}))  # fmt: skip


def _last(g: PlanGuard) -> tuple[str, dict[str, Any]]:
    event = g.journal.events[-1]
    return event.type, event.payload


ENABLED = {"switch": {"enabled": True, "allowedProfiles": ["editor", "ghost", "broken"],
                      "maxSwitchesPerRun": 1}}  # fmt: skip


def test_a_granted_switch() -> None:
    g = _guard(**ENABLED)
    assert _switch(g, "editor", "user") == "allow"
    assert [e.type for e in g.journal.events] == ["profile_switch_requested", "profile_switched"]
    assert g.profile.id == "editor"
    assert _last(g)[1]["source"] == "user"


def test_switching_disabled() -> None:
    g = _guard()
    assert _switch(g, "editor") == "denied"
    assert _last(g)[0] == "profile_switch_denied"
    assert _last(g)[1]["reason"] == "switch_disabled"
    assert g.profile.id == "default-writer"


def test_target_not_listed() -> None:
    g = _guard(switch={"enabled": True, "allowedProfiles": ["ghost"], "maxSwitchesPerRun": 1})
    assert _switch(g, "editor") == "denied"
    assert _last(g)[1]["reason"] == "target_not_allowed"


def test_target_must_exist() -> None:
    g = _guard(**ENABLED)
    assert _switch(g, "ghost") == "denied"
    assert _last(g)[1]["reason"] == "target_not_found"


def test_target_within_platform_limits() -> None:
    g = _guard(**ENABLED)
    assert _switch(g, "broken") == "denied"
    assert _last(g)[1]["reason"] == "target_invalid"
    assert _last(g)[1]["code"] == "agent.creator_limit"


def test_switch_budget() -> None:
    g = _guard(**ENABLED)
    assert _switch(g, "editor") == "allow"
    # the budget is the starting profile's (1), not the editor's (9)
    assert _switch(g, "default-writer") == "denied"
    assert _last(g)[1]["reason"] == "budget_exhausted"


def test_a_strict_node_allows_only_its_profile() -> None:
    plan = {"mode": "strict", "nodes": [{"id": "a", "profileId": "editor"}]}
    g = _guard(plan, **ENABLED)
    g.apply(PlanAction(action="start_node", node="a"))
    with pytest.raises(PolicyError) as err:
        _switch(g, "default-writer")
    assert err.value.details["rule"] == "profile_outside_node"
    types = [e.type for e in g.journal.events][-3:]
    assert types == ["profile_switch_requested", "profile_switch_denied", "plan_policy_violation"]
    # the node's own profile needs no switch policy and no budget
    g2 = _guard(plan)
    g2.apply(PlanAction(action="start_node", node="a"))
    assert _switch(g2, "editor", "plan") == "allow"
    assert g2.switches == 0


def test_a_switched_profile_gates_tools() -> None:
    g = _guard(**ENABLED)
    _switch(g, "editor")
    with pytest.raises(PolicyError):
        g.apply(PlanAction(action="tool_call", tool="chat.search"))


def test_a_switch_in_a_strict_plan_happens_inside_a_node() -> None:
    g = _guard({"mode": "strict", "nodes": [{"id": "a"}]}, **ENABLED)
    with pytest.raises(PolicyError) as err:
        _switch(g, "editor")
    assert err.value.details["rule"] == "no_active_node"
    assert g.profile.id == "default-writer"
    assert [e.type for e in g.journal.events][-2] == "profile_switch_denied"


def test_a_free_node_does_not_bind_switches_to_its_profile() -> None:
    plan = {
        "mode": "hybrid",
        "nodes": [
            {"id": "a", "locked": True},
            {"id": "b", "profileId": "default-writer"},
            {"id": "c", "locked": True},
        ],
    }
    g = _guard(plan, **ENABLED)
    for action in ({"action": "start_node", "node": "a"}, {"action": "complete_node"},
                   {"action": "start_node", "node": "b"}):  # fmt: skip
        g.apply(PlanAction.from_json(action))
    assert _switch(g, "editor") == "allow"
    assert g.profile.id == "editor"


def test_an_approved_switch_outside_a_node_takes_effect() -> None:
    plan = {"mode": "strict", "nodes": [{"id": "a", "approvalRequired": True}]}
    g = _guard(plan, **ENABLED)
    g.apply(PlanAction(action="start_node", node="a"))
    assert _switch(g, "editor") == "approval_required"
    assert g.profile.id == "default-writer"
    action = {"action": "switch_profile", "profile": "editor", "approved": True}
    assert g.apply(PlanAction.from_json(action)) == "approval_required"
    assert g.profile.id == "editor" and g.switches == 1


def test_tool_calls_carry_over_a_switch() -> None:
    editor = {**EDITOR, "tools": {**EDITOR["tools"], "maxCallsPerRun": 1}}
    preset = {"agent": {"profiles": [editor]}}
    profile = resolve_profile(preset=preset, run=ENABLED)
    g = PlanGuard(profile, None, lookup=lambda pid: resolve_profile(profile_id=pid, preset=preset))
    g.apply(PlanAction(action="tool_call", tool="workspace.read_file"))
    assert _switch(g, "editor") == "allow"
    with pytest.raises(PolicyError) as err:  # the run's one call is spent
        g.apply(PlanAction(action="tool_call", tool="workspace.read_file"))
    assert err.value.details["rule"] == "tool_policy"


def test_without_a_lookup_the_target_is_not_found() -> None:
    from compiler.policy.switch import check_switch

    current = resolve_profile(run=ENABLED)
    outcome = check_switch(
        "editor", current=current, node=None, node_strict=False, lookup=None, switches=0, budget=1
    )
    assert outcome.profile is None and outcome.reason == "target_not_found"
