"""Plan policy checks against a resolved profile (seed sections 8 and 9).

Internal: the API is :mod:`compiler.profile`.

:func:`check_plan` runs before any run: a plan node may narrow what its profile allows, never
widen it. Each finding is a :class:`~compiler.errors.Diagnostic` with a code and a JSON path
into the plan (``nodes[1].allowedTools[0]``). The rules that need only the plan itself (a
known mode, unique node ids, nodes for a strict or hybrid plan, none for mode ``none``) are
the :class:`~compiler.profile.models.PlanPolicy` model's own; :func:`load_plan` reports them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from compiler.errors import Diagnostic, ProfileError, did_you_mean
from compiler.profile.checks import normalize_workspace_path
from compiler.profile.embedded import load_json
from compiler.profile.models import AgentProfile, PlanNode, PlanPolicy, validate_model
from compiler.profile.resolve import ResolvedAgentProfile
from compiler.profile.tool_catalogue import tool_matches, tool_matches_any

__all__ = ["ProfileLookup", "check_plan", "load_plan", "node_tools", "strict_node"]

ProfileLookup = Callable[[str], ResolvedAgentProfile]
"""Resolves a profile id through the run's layers; raises :class:`ProfileError`
(``agent.profile_not_found`` when no layer defines it)."""


def load_plan(source: str | Path | dict[str, Any], *, file: str | None = None) -> PlanPolicy:
    """A :class:`PlanPolicy` from a JSON file or parsed JSON (``{"mode", "nodes"}``, camelCase);
    raises :class:`~compiler.profile.models.ProfileValidationError` with JSON paths."""
    if isinstance(source, dict):
        return validate_model(PlanPolicy, source, file=file or "<plan>")
    return validate_model(PlanPolicy, load_json(source), file=file or str(source))


def strict_node(plan: PlanPolicy, node: PlanNode) -> bool:
    """Whether the strict rules bind ``node``: every node of a strict plan, the locked nodes
    of a hybrid plan."""
    return plan.mode == "strict" or (plan.mode == "hybrid" and node.locked)


def node_tools(node: PlanNode, visible: list[str]) -> list[str]:
    """The profile's ``visible`` tools that ``node`` admits (all of them without
    ``allowedTools``)."""
    if node.allowed_tools is None:
        return list(visible)
    return [t for t in visible if tool_matches_any(node.allowed_tools, t)]


def _err(
    code: str, message: str, path: str, file: str | None, hint: str | None = None
) -> Diagnostic:
    return Diagnostic(code=code, message=message, path=path, file=file, hint=hint)


def check_plan(
    plan: PlanPolicy,
    profile: ResolvedAgentProfile,
    *,
    lookup: ProfileLookup | None = None,
    file: str | None = None,
) -> list[Diagnostic]:
    """Every way ``plan`` leaves what ``profile`` (or a node's own profile, resolved by
    ``lookup``) allows; empty when the plan is valid."""
    found: list[Diagnostic] = []
    found += _check_hybrid(plan, file)
    for index, node in enumerate(plan.nodes):
        at = f"nodes[{index}]"
        own = profile
        if node.profile_id is not None and node.profile_id != profile.id:
            resolved, problem = _node_profile(node.profile_id, lookup, f"{at}.profileId", file)
            if problem is not None:
                found.append(problem)
            own = resolved or profile
        found += _check_node(node, own, at, file)
    return found


def _node_profile(
    profile_id: str, lookup: ProfileLookup | None, at: str, file: str | None
) -> tuple[ResolvedAgentProfile | None, Diagnostic | None]:
    if lookup is None:
        return None, _err(
            "agent.plan_node_profile_not_found",
            f"plan node profile '{profile_id}' cannot be looked up here",
            at,
            file,
        )
    try:
        return lookup(profile_id), None
    except ProfileError as exc:
        code = (
            "agent.plan_node_profile_not_found"
            if exc.code == "agent.profile_not_found"
            else "agent.plan_node_profile_invalid"
        )
        return None, _err(
            code, f"plan node profile '{profile_id}': {exc.message}", at, file, exc.hint
        )


def _check_node(
    node: PlanNode, profile: AgentProfile, at: str, file: str | None
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    visible = list(getattr(profile.tools, "visible", []))
    for i, pattern in enumerate(node.allowed_tools or []):
        if not any(tool_matches(pattern, tool) for tool in visible):
            found.append(
                _err(
                    "agent.plan_node_tool_not_allowed",
                    f"plan node '{node.id}' allows '{pattern}', which profile "
                    f"'{profile.id}' does not make visible (a node may narrow, never widen)",
                    f"{at}.allowedTools[{i}]",
                    file,
                    did_you_mean(pattern, visible),
                )
            )
    visible_roots = set(profile.workspace.visible_roots)
    for i, path in enumerate(node.visible_files or []):
        root = path.replace("\\", "/").split("/", 1)[0]
        if root not in visible_roots or ".." in path.replace("\\", "/").split("/"):
            found.append(
                _err(
                    "agent.plan_node_file_not_visible",
                    f"plan node '{node.id}' shows '{path}', which is not under a visible "
                    f"workspace root of profile '{profile.id}'",
                    f"{at}.visibleFiles[{i}]",
                    file,
                    did_you_mean(root, visible_roots),
                )
            )
    writable = set(profile.workspace.writable_roots) & visible_roots
    for i, path in enumerate(node.expected_artifacts):
        norm = normalize_workspace_path(path)
        if norm is None or norm.split("/", 1)[0] not in writable:
            found.append(
                _err(
                    "agent.plan_node_artifact_not_writable",
                    f"plan node '{node.id}' expects '{path}', which is not a relative path "
                    f"under a writable workspace root of profile '{profile.id}'",
                    f"{at}.expectedArtifacts[{i}]",
                    file,
                )
            )
    if node.max_rounds is not None and node.max_rounds > profile.tools.max_rounds:
        found.append(
            _err(
                "agent.plan_node_limit_exceeds_profile",
                f"plan node '{node.id}' allows {node.max_rounds} rounds, more than the "
                f"profile's tools.maxRounds ({profile.tools.max_rounds})",
                f"{at}.maxRounds",
                file,
            )
        )
    total = profile.context.total_context_budget
    if node.context_budget is not None and total is not None and node.context_budget > total:
        found.append(
            _err(
                "agent.plan_node_limit_exceeds_profile",
                f"plan node '{node.id}' has a context budget of {node.context_budget}, more "
                f"than the profile's context.totalContextBudget ({total})",
                f"{at}.contextBudget",
                file,
            )
        )
    return found


def _check_hybrid(plan: PlanPolicy, file: str | None) -> list[Diagnostic]:
    """A hybrid plan mixes locked and free nodes, and its free nodes sit between locked ones
    (it begins and ends with a locked node: outline locked, write free, polish locked)."""
    if plan.mode != "hybrid" or not plan.nodes:
        return []
    locked = [n.locked for n in plan.nodes]
    if all(locked) or not any(locked):
        kind = "locked" if all(locked) else "free"
        return [
            _err(
                "agent.plan_hybrid_order",
                f"a hybrid plan needs locked and free nodes; every node here is {kind}",
                "nodes",
                file,
                "use mode 'strict' (all locked) or 'free' (none locked)",
            )
        ]
    found = []
    for index in (0, len(plan.nodes) - 1):
        if not plan.nodes[index].locked:
            where = "first" if index == 0 else "last"
            found.append(
                _err(
                    "agent.plan_hybrid_order",
                    f"the {where} node of a hybrid plan ('{plan.nodes[index].id}') must be "
                    "locked: free nodes sit between locked ones",
                    f"nodes[{index}].locked",
                    file,
                )
            )
    return found
