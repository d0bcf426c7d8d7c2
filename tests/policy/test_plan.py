"""Plan validation against the resolved profile (compiler.policy.check_plan)."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.errors import ProfileError
from compiler.policy import check_plan, load_plan
from compiler.profile import ResolvedAgentProfile, resolve_profile
from compiler.profile.models import ProfileValidationError


def _profile(**run: Any) -> ResolvedAgentProfile:
    return resolve_profile(run=run or None)


def _codes(plan: dict[str, Any], profile: ResolvedAgentProfile | None = None) -> list[str]:
    prof = profile or _profile()

    def lookup(pid: str) -> ResolvedAgentProfile:
        return resolve_profile(profile_id=pid)

    return [d.code for d in check_plan(load_plan(plan), prof, lookup=lookup)]


def test_a_valid_hybrid_plan_passes() -> None:
    plan = {
        "mode": "hybrid",
        "nodes": [
            {"id": "outline", "locked": True, "allowedTools": ["workspace.write_file"]},
            {"id": "write"},
            {"id": "polish", "locked": True, "expectedArtifacts": ["output/main.md"]},
        ],
    }
    assert _codes(plan) == []


def test_duplicate_node_ids() -> None:
    with pytest.raises(ProfileValidationError) as err:
        load_plan({"mode": "free", "nodes": [{"id": "a"}, {"id": "a"}]})
    assert err.value.code == "agent.plan_node_duplicate_id"
    assert load_plan({"mode": "free", "nodes": [{"id": "a"}, {"id": "b"}]})


def test_strict_plans_need_nodes() -> None:
    with pytest.raises(ProfileValidationError) as err:
        load_plan({"mode": "strict", "nodes": []})
    assert err.value.code == "agent.plan_nodes_required"


def test_a_node_may_narrow_tools_never_widen() -> None:
    narrow = {"mode": "strict", "nodes": [{"id": "a", "allowedTools": ["workspace.read_file"]}]}
    assert _codes(narrow) == []
    wide = {"mode": "strict", "nodes": [{"id": "a", "allowedTools": ["shell.exec"]}]}
    plan = load_plan(wide)
    (diag,) = check_plan(plan, _profile())
    assert diag.code == "agent.plan_node_tool_not_allowed"
    assert diag.path == "nodes[0].allowedTools[0]"


def test_a_node_tool_denied_by_the_profile_is_a_widening() -> None:
    profile = _profile(tools={"deny": ["workspace.read_file"]})
    plan = {"mode": "strict", "nodes": [{"id": "a", "allowedTools": ["workspace.read_file"]}]}
    assert _codes(plan, profile) == ["agent.plan_node_tool_not_allowed"]


def test_node_profiles_must_exist() -> None:
    plan = {"mode": "strict", "nodes": [{"id": "a", "profileId": "ghost"}]}
    assert _codes(plan) == ["agent.plan_node_profile_not_found"]
    ok = {"mode": "strict", "nodes": [{"id": "a", "profileId": "default-writer"}]}
    assert _codes(ok) == []


def test_node_profile_resolution_errors_are_reported() -> None:
    def lookup(pid: str) -> ResolvedAgentProfile:
        raise ProfileError(code="agent.creator_limit", message="no")

    plan = load_plan({"mode": "strict", "nodes": [{"id": "a", "profileId": "other"}]})
    (diag,) = check_plan(plan, _profile(), lookup=lookup)
    assert diag.code == "agent.plan_node_profile_invalid"


def test_expected_artifacts_under_writable_roots() -> None:
    profile = _profile(workspace={"writableRoots": ["output"]})
    good = {"mode": "strict", "nodes": [{"id": "a", "expectedArtifacts": ["output/x.md"]}]}
    assert _codes(good, profile) == []
    for path in ("scratch/x.md", "../x.md", "/etc/passwd"):
        bad = {"mode": "strict", "nodes": [{"id": "a", "expectedArtifacts": [path]}]}
        assert _codes(bad, profile) == ["agent.plan_node_artifact_not_writable"], path


def test_visible_files_under_visible_roots() -> None:
    profile = _profile(workspace={"visibleRoots": ["output"], "writableRoots": ["output"]})
    good = {"mode": "free", "nodes": [{"id": "a", "visibleFiles": ["output/x.md"]}]}
    assert _codes(good, profile) == []
    bad = {"mode": "free", "nodes": [{"id": "a", "visibleFiles": ["scratch/x.md"]}]}
    assert _codes(bad, profile) == ["agent.plan_node_file_not_visible"]


def test_node_limits_within_the_profile() -> None:
    profile = _profile(tools={"maxRounds": 5}, context={"totalContextBudget": 1000})
    good = {"mode": "free", "nodes": [{"id": "a", "maxRounds": 5, "contextBudget": 1000}]}
    assert _codes(good, profile) == []
    bad = {"mode": "free", "nodes": [{"id": "a", "maxRounds": 6, "contextBudget": 1001}]}
    assert _codes(bad, profile) == ["agent.plan_node_limit_exceeds_profile"] * 2


@pytest.mark.parametrize(
    "locks",
    [(True, True, True), (False, False, False), (False, True, True), (True, True, False)],
)
def test_hybrid_order(locks: tuple[bool, ...]) -> None:
    plan = {
        "mode": "hybrid",
        "nodes": [{"id": f"n{i}", "locked": lock} for i, lock in enumerate(locks)],
    }
    assert "agent.plan_hybrid_order" in _codes(plan)


def test_without_a_lookup_a_node_profile_cannot_be_found() -> None:
    plan = load_plan({"mode": "strict", "nodes": [{"id": "a", "profileId": "editor"}]})
    (diag,) = check_plan(plan, _profile())
    assert diag.code == "agent.plan_node_profile_not_found"
    assert diag.path == "nodes[0].profileId"


def test_a_node_is_checked_against_its_own_profile() -> None:
    editor = {"id": "editor", "tools": {"allow": ["workspace.write_file"]}}

    def lookup(pid: str) -> ResolvedAgentProfile:
        return resolve_profile(profile_id=pid, preset={"agent": {"profiles": [editor]}})

    # chat.search is visible to the run's profile, not to the node's own 'editor'
    node = {"id": "a", "profileId": "editor", "allowedTools": ["chat.search"]}
    plan = load_plan({"mode": "strict", "nodes": [node]})
    codes = [d.code for d in check_plan(plan, _profile(), lookup=lookup)]
    assert codes == ["agent.plan_node_tool_not_allowed"]


def test_visible_files_may_not_climb_out_of_a_root() -> None:
    bad = {"mode": "free", "nodes": [{"id": "a", "visibleFiles": ["output/../../etc/passwd"]}]}
    assert _codes(bad) == ["agent.plan_node_file_not_visible"]


@pytest.mark.parametrize("lock", [True, False])
def test_hybrid_needs_both_kinds_of_node(lock: bool) -> None:
    plan = load_plan(
        {"mode": "hybrid", "nodes": [{"id": f"n{i}", "locked": lock} for i in range(3)]}
    )
    (diag,) = check_plan(plan, _profile())
    assert (diag.code, diag.path) == ("agent.plan_hybrid_order", "nodes")
