"""The plan guard (compiler.policy.PlanGuard): one test per rule, each fails if reversed."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.errors import PolicyError
from compiler.policy import PlanAction, PlanGuard, load_plan
from compiler.profile import ResolvedAgentProfile, resolve_profile
from compiler.profile.tool_catalogue import tool_matches_any

HYBRID = {
    "mode": "hybrid",
    "nodes": [
        {
            "id": "outline",
            "locked": True,
            "allowedTools": ["workspace.write_file"],
            "expectedArtifacts": ["plan/outline.md"],
        },
        {"id": "write"},
        {"id": "polish", "locked": True, "allowedTools": ["workspace.read_file"]},
    ],
}
STRICT = {**HYBRID, "mode": "strict"}


def _profile(**run: Any) -> ResolvedAgentProfile:
    return resolve_profile(run=run or None)


def _guard(plan: dict[str, Any] | None = None, **run: Any) -> PlanGuard:
    profile = _profile(**run)
    return PlanGuard(
        profile,
        load_plan(plan) if plan is not None else None,
        lookup=lambda pid: resolve_profile(profile_id=pid, run=run or None),
    )


def _do(guard: PlanGuard, **action: Any) -> str:
    return guard.apply(PlanAction.from_json(action))


def _violates(guard: PlanGuard, rule: str, **action: Any) -> None:
    before = len(guard.journal.events)
    with pytest.raises(PolicyError) as err:
        _do(guard, **action)
    assert err.value.code == "agent.policy_violation"
    assert err.value.details["rule"] == rule
    assert guard.journal.events[-1].type == "plan_policy_violation"
    assert len(guard.journal.events) > before


def _types(guard: PlanGuard) -> list[str]:
    return [e.type for e in guard.journal.events]


def test_a_hybrid_run_end_to_end() -> None:
    g = _guard(HYBRID)
    assert _do(g, action="start_node", node="outline") == "allow"
    assert _do(g, action="tool_call", tool="workspace.write_file") == "allow"
    assert _do(g, action="write_artifact", path="plan/outline.md") == "allow"
    assert _do(g, action="complete_node", node="outline") == "allow"
    assert _do(g, action="start_node", node="write") == "allow"
    assert _do(g, action="tool_call", tool="workspace.read_file") == "allow"  # free node
    assert _do(g, action="complete_node") == "allow"
    assert _do(g, action="start_node", node="polish") == "allow"
    assert _do(g, action="write_artifact", path="output/main.md") == "allow"  # output policy
    assert _do(g, action="complete_node") == "allow"
    assert _do(g, action="finish") == "allow"
    assert _types(g) == [
        "plan_created",
        *["plan_node_started", "plan_node_completed"] * 3,
    ]
    _violates(g, "run_finished", action="tool_call", tool="workspace.read_file")


def test_free_needs_a_plan_first() -> None:
    g = _guard({"mode": "free"})
    _violates(g, "plan_required", action="tool_call", tool="workspace.read_file")
    _violates(g, "plan_required", action="start_node", node="a")
    assert _do(g, action="create_plan", plan={"nodes": [{"id": "a"}, {"id": "b"}]}) == "allow"
    assert _do(g, action="tool_call", tool="workspace.read_file") == "allow"
    assert _do(g, action="start_node", node="b") == "allow"  # free: any order
    assert _do(g, action="update_plan", plan={"nodes": [{"id": "b"}]}) == "allow"
    assert "plan_created" in _types(g) and "plan_updated" in _types(g)


def test_free_stage_ends_in_a_checkpoint() -> None:
    g = _guard({"mode": "free"})
    _do(g, action="create_plan", plan={"nodes": [{"id": "a"}, {"id": "b"}]})
    _do(g, action="start_node", node="a")
    _violates(g, "node_in_progress", action="start_node", node="b")
    _violates(g, "node_in_progress", action="finish")
    _violates(g, "node_not_active", action="complete_node", node="b")


def test_free_manifest_checked_before_finishing() -> None:
    g = _guard({"mode": "free"})
    _do(g, action="create_plan")
    _violates(g, "manifest_incomplete", action="finish")
    _do(g, action="write_artifact", path="output/main.md")
    assert _do(g, action="finish") == "allow"


def test_global_tool_policy_still_binds_in_free_nodes() -> None:
    g = _guard(HYBRID)
    _do(g, action="start_node", node="outline")
    _do(g, action="write_artifact", path="plan/outline.md")
    _do(g, action="complete_node")
    _do(g, action="start_node", node="write")
    with pytest.raises(PolicyError) as err:
        _do(g, action="tool_call", tool="shell.exec")
    assert err.value.details == {"rule": "tool_policy", "cause": "tool.policy_denied"}


def test_writes_stay_under_writable_roots() -> None:
    g = _guard({"mode": "free"})
    _do(g, action="create_plan")
    _violates(g, "path_not_writable", action="write_artifact", path="../etc/passwd")


def test_strict_no_reordering_no_skipping() -> None:
    g = _guard(STRICT)
    _violates(g, "locked_skipped", action="start_node", node="write")
    _do(g, action="start_node", node="outline")
    _do(g, action="write_artifact", path="plan/outline.md")
    _do(g, action="complete_node")
    _violates(g, "node_order", action="start_node", node="outline")
    _violates(g, "locked_skipped", action="start_node", node="polish")
    assert _do(g, action="start_node", node="write") == "allow"


def test_hybrid_free_nodes_may_be_skipped_locked_may_not() -> None:
    g = _guard(HYBRID)
    _violates(g, "locked_skipped", action="start_node", node="write")
    _do(g, action="start_node", node="outline")
    _do(g, action="write_artifact", path="plan/outline.md")
    _do(g, action="complete_node")
    assert _do(g, action="start_node", node="polish") == "allow"  # 'write' is free


def test_strict_plan_cannot_change() -> None:
    g = _guard(STRICT)
    reordered = {"nodes": list(reversed(STRICT["nodes"]))}
    _violates(g, "plan_changed", action="update_plan", plan=reordered)
    assert _do(g, action="update_plan") == "allow"  # the same plan


def test_hybrid_only_locked_nodes_are_fixed() -> None:
    g = _guard(HYBRID)
    nodes = HYBRID["nodes"]
    more_free = {"nodes": [nodes[0], {"id": "draft"}, {"id": "revise"}, nodes[2]]}
    assert _do(g, action="update_plan", plan=more_free) == "allow"
    swapped = {"nodes": [nodes[2], nodes[1], nodes[0]]}
    _violates(g, "plan_changed", action="update_plan", plan=swapped)


def test_strict_work_happens_inside_a_node() -> None:
    g = _guard(STRICT)
    _violates(g, "no_active_node", action="tool_call", tool="workspace.write_file")


def test_strict_no_tool_outside_the_node() -> None:
    g = _guard(STRICT)
    _do(g, action="start_node", node="outline")
    _violates(g, "tool_outside_node", action="tool_call", tool="workspace.read_file")
    assert _do(g, action="tool_call", tool="workspace_write_file") == "allow"  # alias


def test_strict_no_artifact_outside_the_node() -> None:
    g = _guard(STRICT)
    _do(g, action="start_node", node="outline")
    _violates(g, "artifact_outside_node", action="write_artifact", path="scratch/x.md")
    assert _do(g, action="write_artifact", path="output/main.md") == "allow"


def test_strict_node_completes_with_its_artifacts() -> None:
    g = _guard(STRICT)
    _do(g, action="start_node", node="outline")
    _violates(g, "artifact_missing", action="complete_node")
    _do(g, action="write_artifact", path="plan/outline.md")
    assert _do(g, action="complete_node") == "allow"


def test_strict_finish_needs_every_node() -> None:
    g = _guard(STRICT)
    _do(g, action="start_node", node="outline")
    _do(g, action="write_artifact", path="plan/outline.md")
    _do(g, action="write_artifact", path="output/main.md")
    _do(g, action="complete_node")
    _violates(g, "locked_skipped", action="finish")


def test_max_rounds_per_node() -> None:
    plan = {"mode": "strict", "nodes": [{"id": "a", "maxRounds": 2}]}
    g = _guard(plan)
    _do(g, action="start_node", node="a")
    _do(g, action="tool_call", tool="workspace.read_file")
    _do(g, action="tool_call", tool="workspace.read_file")
    _violates(g, "max_rounds", action="tool_call", tool="workspace.read_file")


def test_approval_required_turns_a_violation_into_approval() -> None:
    plan = {
        "mode": "strict",
        "nodes": [{"id": "a", "allowedTools": ["workspace.read_file"], "approvalRequired": True}],
    }
    g = _guard(plan)
    _do(g, action="start_node", node="a")
    assert _do(g, action="tool_call", tool="workspace.write_file") == "approval_required"
    assert g.rounds["a"] == 0  # not approved: not taken
    assert g.journal.events[-1].type == "plan_approval_required"
    assert g.journal.events[-1].payload["approved"] is False
    decision = _do(g, action="tool_call", tool="workspace.write_file", approved=True)
    assert decision == "approval_required"
    assert g.rounds["a"] == 1
    # approval never lifts a global rule
    with pytest.raises(PolicyError):
        _do(g, action="tool_call", tool="shell.exec", approved=True)


def test_mode_none_has_no_plan() -> None:
    g = _guard({"mode": "none"})
    _violates(g, "plan_disabled", action="create_plan")
    assert _do(g, action="tool_call", tool="workspace.read_file") == "allow"


def test_a_refused_action_changes_nothing() -> None:
    g = _guard(STRICT)
    with pytest.raises(PolicyError):
        _do(g, action="start_node", node="polish")
    assert g.current is None and g.started == set()


_TOOLS = ["workspace.read_file", "workspace.write_file", "workspace.list_files", "chat.search"]
_NODES = ["outline", "write", "polish", "ghost"]
_ACTIONS = st.one_of(
    st.builds(lambda n: {"action": "start_node", "node": n}, st.sampled_from(_NODES)),
    st.builds(lambda n: {"action": "complete_node", "node": n}, st.sampled_from(_NODES)),
    st.builds(lambda t: {"action": "tool_call", "tool": t}, st.sampled_from(_TOOLS)),
    st.builds(
        lambda p: {"action": "write_artifact", "path": p},
        st.sampled_from(["plan/outline.md", "output/main.md", "scratch/x.md"]),
    ),
    st.builds(
        lambda ns: {"action": "update_plan", "plan": {"nodes": [{"id": n} for n in ns]}},
        st.lists(st.sampled_from(_NODES[:3]), unique=True),
    ),
    st.builds(lambda p: {"action": "switch_profile", "profile": p}, st.just("default-writer")),
    st.just({"action": "update_plan"}),
    st.just({"action": "finish"}),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_ACTIONS, max_size=25))
def test_no_action_sequence_runs_a_tool_outside_its_strict_node(
    actions: list[dict[str, Any]],
) -> None:
    g = _guard(STRICT)
    nodes = {n["id"]: n for n in STRICT["nodes"]}
    for data in actions:
        node = g.current
        try:
            decision = _do(g, **data)
        except PolicyError:
            continue
        if data["action"] == "tool_call" and decision == "allow":
            assert node is not None, "a tool ran outside any node"
            allowed = nodes[node].get("allowedTools")
            assert allowed is None or tool_matches_any(allowed, data["tool"]), (node, data)


def test_a_tool_marked_require_approval_waits_for_approval() -> None:
    g = _guard({"mode": "free"}, tools={"requireApproval": ["workspace.read_file"]})
    _do(g, action="create_plan", plan={"nodes": [{"id": "a"}]})
    _do(g, action="start_node", node="a")
    assert _do(g, action="tool_call", tool="workspace.read_file") == "approval_required"
    assert g.rounds["a"] == 0 and g.gate.total_calls == 0  # not approved: not taken
    assert g.journal.events[-1].payload["rule"] == "tool_requires_approval"
    decision = _do(g, action="tool_call", tool="workspace.read_file", approved=True)
    assert decision == "approval_required"
    assert g.rounds["a"] == 1 and g.gate.total_calls == 1


def test_approval_goes_by_the_node_a_start_names() -> None:
    plan = {"mode": "strict", "nodes": [{"id": "a"}, {"id": "b", "approvalRequired": True}]}
    g = _guard(plan)
    assert _do(g, action="start_node", node="b") == "approval_required"  # skips 'a'
    assert g.current is None
    assert _do(g, action="start_node", node="b", approved=True) == "approval_required"
    assert g.current == "b"


def test_hybrid_work_happens_inside_a_node() -> None:
    g = _guard(HYBRID)
    _violates(g, "no_active_node", action="tool_call", tool="workspace.read_file")
    _violates(g, "no_active_node", action="write_artifact", path="plan/outline.md")
    assert g.written == set()


def test_free_writes_need_a_plan_first() -> None:
    g = _guard({"mode": "free"})
    _violates(g, "plan_required", action="write_artifact", path="output/main.md")
    _violates(g, "plan_required", action="finish")


def test_an_updated_plan_must_pass_the_plan_check() -> None:
    g = _guard({"mode": "free"})
    wide = {"nodes": [{"id": "a", "allowedTools": ["shell.exec"]}]}
    _violates(g, "plan_invalid", action="create_plan", plan=wide)
    assert g.plan is None


def test_strict_plan_free_looking_nodes_are_fixed_too() -> None:
    g = _guard(STRICT)  # 'write' is not marked locked, but every strict node is fixed
    nodes = STRICT["nodes"]
    renamed = {"nodes": [nodes[0], {"id": "draft"}, nodes[2]]}
    _violates(g, "plan_changed", action="update_plan", plan=renamed)


def test_the_running_node_cannot_be_dropped() -> None:
    g = _guard({"mode": "free"})
    _do(g, action="create_plan", plan={"nodes": [{"id": "a"}, {"id": "b"}]})
    _do(g, action="start_node", node="a")
    _violates(g, "plan_changed", action="update_plan", plan={"nodes": [{"id": "b"}]})


def test_mode_none_has_no_nodes() -> None:
    g = _guard({"mode": "none"})
    _violates(g, "plan_disabled", action="start_node", node="a")
    _violates(g, "plan_disabled", action="complete_node", node="a")


def test_an_unknown_node_cannot_start() -> None:
    g = _guard({"mode": "free"})
    _do(g, action="create_plan", plan={"nodes": [{"id": "a"}]})
    _violates(g, "unknown_node", action="start_node", node="ghost")
    assert g.current is None


def test_hybrid_free_nodes_are_not_bound_by_strict_rules() -> None:
    free = {
        "id": "write",
        "allowedTools": ["workspace.read_file"],
        "expectedArtifacts": ["scratch/w.md"],
    }
    g = _guard({**HYBRID, "nodes": [HYBRID["nodes"][0], free, HYBRID["nodes"][2]]})
    _do(g, action="start_node", node="outline")
    _do(g, action="write_artifact", path="plan/outline.md")
    _do(g, action="complete_node")
    _do(g, action="start_node", node="write")
    assert _do(g, action="tool_call", tool="workspace.write_file") == "allow"
    assert _do(g, action="write_artifact", path="scratch/other.md") == "allow"
    assert _do(g, action="complete_node") == "allow"  # scratch/w.md never written


def test_hybrid_finish_needs_only_the_locked_nodes() -> None:
    g = _guard(HYBRID)
    _do(g, action="start_node", node="outline")
    _do(g, action="write_artifact", path="plan/outline.md")
    _do(g, action="complete_node")
    _do(g, action="start_node", node="polish")
    _do(g, action="write_artifact", path="output/main.md")
    _do(g, action="complete_node")
    assert _do(g, action="finish") == "allow"  # 'write' is free: it may be skipped


def test_optional_output_artifacts_do_not_block_finish() -> None:
    main = {"id": "main", "path": "output/main.md", "kind": "markdown", "target": "messageBody"}
    g = _guard({"mode": "free"}, output={"artifacts": [{**main, "required": False}]})
    _do(g, action="create_plan")
    assert _do(g, action="finish") == "allow"
